/* parse.c - the body stage of LLM routes: validate JSON, find model/stream.
 *
 * One zero-allocation pass (jscan.c) validates the body and records where the
 * top-level `model`, `stream` and `stream_options` are; nothing else of the
 * body is looked at on the pass-through path.
 */
#include "gateway/gateway.h"

#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "http/server.h"

int sy_stage_parse(struct sy_call *c)
{
    struct sy_req *r = c->req;
    const char *b = r->body.p;
    size_t n = r->body.len;
    char msg[512];
    if (sy_jscan(b, n, &c->scan) != 0) {
        if (n == 0)
            snprintf(msg, sizeof msg, "Invalid JSON payload: the request body is empty");
        else
            snprintf(msg, sizeof msg, "Invalid JSON payload: %s at byte %zu", c->scan.err, c->scan.err_off);
        sy_call_error(c, 400, "invalid_request_error", NULL, msg, NULL, 0);
        return SY_DONE;
    }
    if (!c->scan.top_is_object) {
        sy_call_error(c, 400, "invalid_request_error", NULL, "Invalid JSON payload: expected a JSON object", NULL, 0);
        return SY_DONE;
    }
    if (c->path_model.n) { /* Azure-style route: the path names the model */
        c->model = sy_arena_strndup(&r->arena, c->path_model.p, c->path_model.n);
    } else if (c->scan.model.type == 's') {
        size_t cap = c->scan.model.len + 1;
        char *m = sy_arena_alloc(&r->arena, cap + 8);
        if (sy_jstr_decode(b + c->scan.model.off, c->scan.model.len, m, cap + 8) < 0) {
            sy_call_error(c, 400, "invalid_request_error", "model", "Invalid model name", NULL, 0);
            return SY_DONE;
        }
        c->model = m;
    } else {
        return sy_call_invalid_model(c, "None");
    }
    c->stream = c->scan.stream.type == 't';
    if (c->stream && c->scan.stream_options.type == 'o') {
        struct sy_jspan iu = sy_jscan_member(b, c->scan.stream_options, "include_usage");
        c->include_usage = iu.type == 't';
    }
    return SY_OK;
}
