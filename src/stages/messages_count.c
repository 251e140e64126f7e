/* messages_count.c - the POST /v1/messages/count_tokens stage.
 *
 * Translates the request to OpenAI form and counts it with the exact
 * tokenizer of the model group's first deployment (LiteLLM asks Anthropic's
 * count API for Anthropic models; we never make an upstream call to count):
 *   {"input_tokens": N}
 * A key that may not use the model gets LiteLLM's 401 (the model access check
 * of every route, keycheck.c) before anything is counted.
 */
#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "gateway/stage.h"
#include "gateway/xlate.h"
#include "http/reply.h"
#include "http/server.h"
#include "dialects/messages.h"
#include "tokenizer/tokenizer.h"

static int messages_count_run(struct sy_call *c)
{
    struct sy_req *r = c->req;
    if (c->auth.key && c->in.model && sy_call_check_model(c, c->in.model) != SY_OK)
        return SY_DONE; /* the key may not use the model: LiteLLM's 401, as on /v1/messages */
    struct sy_jdoc d;
    struct sy_xerr e = {0};
    struct sy_buf ob;
    if (sy_jdom_parse(&d, r->body.p, r->body.len, &r->arena, 0) != 0 || sy_jdom_type(&d, 0) != 'o') {
        sy_call_error(c, 400, "invalid_request_error", NULL, "Invalid JSON payload: expected a JSON object", NULL, 0);
        return SY_DONE;
    }
    sy_buf_init(&ob, 64u << 20);
    if (sy_msg_to_openai(&d, &r->arena, &ob, &e) != 0) {
        sy_call_error(c, e.status ? e.status : 400, "invalid_request_error", NULL, e.message, NULL, 0);
        sy_buf_free(&ob);
        return SY_DONE;
    }
    int enc = SY_TOK_CL100K;
    uint32_t m = sy_jdom_get(&d, 0, "model");
    size_t ml = 0;
    const char *model = sy_jdom_str(&d, m, &r->arena, &ml);
    if (model && strlen(model) == ml) { /* the group the model routes to: aliases first */
        model = sy_call_aliased(c, model);
        ml = strlen(model);
    }
    const struct sy_group *g = model ? sy_router_resolve(&c->g->table, model, ml) : NULL;
    if (g && g->n)
        enc = g->d[0]->enc;
    else if (model)
        enc = (int)sy_tok_encoding_for_model(model, ml);
    long n = sy_tok_count_request(sy_tok_get((enum sy_tok_encoding)enc), ob.p ? ob.p : "{}", ob.len);
    sy_buf_free(&ob);
    char body[64];
    int bl = snprintf(body, sizeof body, "{\"input_tokens\":%ld}", n > 0 ? n : 0);
    struct sy_buf h;
    sy_buf_init(&h, 4096);
    sy_call_headers(c, &h, 0);
    sy_call_account(c, 200);
    sy_resp_simple(r, 200, h.p, h.len, "application/json", body, (size_t)bl);
    sy_buf_free(&h);
    return SY_DONE;
}

const struct sy_stage sy_stage_messages_count = {
    .name = "messages_count",
    .routes = SY_RKB(SY_RK_MESSAGES_COUNT),
    .run = messages_count_run,
};
