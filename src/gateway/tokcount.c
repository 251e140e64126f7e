/* tokcount.c - POST /utils/token_counter: the route's last stage.
 *
 * Resolves the requested model to a deployment (for model_used and the
 * tokenizer override) and renders LiteLLM's response (tokenizer/endpoint.c).
 */
#include "gateway/gateway.h"

#include <string.h>

#include "core/errors.h"
#include "http/reply.h"
#include "http/server.h"
#include "tokenizer/tokenizer.h"

int sy_stage_token_counter(struct sy_call *c)
{
    struct sy_req *r = c->req;
    struct sy_jscan s;
    const char *model_used = NULL, *enc = NULL;
    char *model = NULL;
    if (sy_jscan(r->body.p, r->body.len, &s) == 0 && s.model.type == 's') {
        model = sy_arena_alloc(&r->arena, s.model.len + 8);
        if (sy_jstr_decode(r->body.p + s.model.off, s.model.len, model, s.model.len + 8) >= 0) {
            const struct sy_group *gr = sy_gwconf_group(c->g, model, strlen(model));
            if (gr) {
                const struct sy_deployment *d = gr->d[0]->d;
                model_used = d->upstream_model ? d->upstream_model : d->model_name;
                enc = d->tokenizer;
            }
        }
    }
    struct sy_buf out;
    sy_buf_init(&out, 256u << 20);
    int st = sy_tok_counter_response(r->body.p, r->body.len, model_used, enc, &out);
    sy_reply_json(r, st, out.p, out.len);
    sy_buf_free(&out);
    return SY_DONE;
}
