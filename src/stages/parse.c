/* parse.c - the body stage of LLM routes: validate JSON, find model/stream.
 *
 * One zero-allocation pass (jscan.c) validates the body and records where the
 * top-level `model`, `stream` and `stream_options` are; nothing else of the
 * body is looked at on the pass-through path.
 *
 * One meaning for every body key (docs/pipeline.md "Request-body keys"): the
 * upstream must read `model` and `stream` as the gateway did, so a body with a
 * key of interest twice, a non-boolean `stream` or `include_usage`, is refused
 * with 400 instead of forwarded.
 */
#include "gateway/gateway.h"
#include "gateway/stage.h"

#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "http/server.h"

/* Refuse (400, param = name) a value that is present but neither a boolean
 * nor null: "true" or 1 would make a lenient upstream stream while the gateway
 * does not. 1 when refused. */
static int bad_bool(struct sy_call *c, struct sy_jspan v, const char *name)
{
    if (!v.type || v.type == 't' || v.type == 'f' || v.type == 'z')
        return 0;
    const char *got = v.type == 's'   ? "a string"
                      : v.type == 'n' ? "a number"
                      : v.type == 'o' ? "an object"
                                      : "an array";
    char msg[256];
    snprintf(msg, sizeof msg, "Invalid type for '%s': expected a boolean, but got %s instead.", name, got);
    sy_call_error(c, 400, "invalid_request_error", name, msg, NULL, 0);
    return 1;
}

static int parse_run(struct sy_call *c)
{
    struct sy_req *r = c->req;
    const char *b = r->body.p;
    size_t n = r->body.len;
    char msg[512];
    if (sy_jscan(b, n, &c->in.scan) != 0) {
        if (n == 0)
            snprintf(msg, sizeof msg, "Invalid JSON payload: the request body is empty");
        else
            snprintf(msg, sizeof msg, "Invalid JSON payload: %s at byte %zu", c->in.scan.err, c->in.scan.err_off);
        sy_call_error(c, 400, "invalid_request_error", NULL, msg, NULL, 0);
        return SY_DONE;
    }
    if (!c->in.scan.top_is_object) {
        sy_call_error(c, 400, "invalid_request_error", NULL, "Invalid JSON payload: expected a JSON object", NULL, 0);
        return SY_DONE;
    }
    if (c->in.scan.dup) {
        snprintf(msg, sizeof msg,
                 "Invalid request body: duplicate key '%s' (keys the gateway reads may appear only once)",
                 c->in.scan.dup);
        sy_call_error(c, 400, "invalid_request_error", c->in.scan.dup, msg, NULL, 0);
        return SY_DONE;
    }
    if (bad_bool(c, c->in.scan.stream, "stream") ||
        bad_bool(c, c->in.scan.include_usage, "stream_options.include_usage"))
        return SY_DONE;
    if (c->in.path_model.n) { /* Azure-style route: the path names the model */
        c->in.model = sy_arena_strndup(&r->arena, c->in.path_model.p, c->in.path_model.n);
    } else if (c->in.scan.model.type == 's') {
        size_t cap = c->in.scan.model.len + 1;
        char *m = sy_arena_alloc(&r->arena, cap + 8);
        if (sy_jstr_decode(b + c->in.scan.model.off, c->in.scan.model.len, m, cap + 8) < 0) {
            sy_call_error(c, 400, "invalid_request_error", "model", "Invalid model name", NULL, 0);
            return SY_DONE;
        }
        c->in.model = m;
    } else {
        return sy_call_invalid_model(c, "None");
    }
    c->in.stream = c->in.scan.stream.type == 't';
    c->in.include_usage = c->in.stream && c->in.scan.include_usage.type == 't';
    return SY_OK;
}

const struct sy_stage sy_stage_parse = {
    .name = "parse",
    .routes = (SY_RKB_LLM & ~SY_RKB(SY_RK_PASSTHRU)) | SY_RKB(SY_RK_MESSAGES_COUNT),
    .run = parse_run,
};
