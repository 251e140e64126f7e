/* tokcount.c - POST /utils/token_counter: the route's last stage.
 *
 * Resolves the requested model to a deployment (for model_used and the
 * tokenizer override) and renders LiteLLM's response (tokenizer/endpoint.c).
 *
 * Nothing here runs long on the worker's loop: the parse, the model lookup
 * (from the count's own parse: the body is read once) and the count run as one unit of work, on libuv's thread pool
 * when the body has SY_OFFLOAD_MIN_BYTES or more (gateway/offload.h), inline below that. The work reads only the
 * request body and the call's config snapshot (immutable, referenced by the call) and writes only its own job; the
 * reply is sent from the loop. A client that leaves mid-count is ended by the offload layer; the job's buffer is freed
 * with the request's arena.
 */
#include "gateway/gateway.h"
#include "gateway/stage.h"

#include <string.h>

#include "core/errors.h"
#include "gateway/offload.h"
#include "http/reply.h"
#include "http/server.h"
#include "keys/keys.h"
#include "tokenizer/tokenizer.h"

struct tc_job {
    struct sy_buf out; /* response JSON, filled by tc_work */
    int status;
    const struct sy_call *c;
    int denied; /* the key may not use the model: e is the refusal */
    struct sy_check_err e;
};

/* The model -> deployment lookup, called from the count's own parse. The
 * key's model access is checked here too (LiteLLM's user_api_key_auth checks
 * the body's model on this route as on chat): a read of the key and config
 * snapshot, safe on the pool. */
static void tc_resolve(void *ud, const char *model, size_t len, const char **model_used, const char **enc)
{
    struct tc_job *j = ud;
    const struct sy_call *c = j->c;
    *model_used = *enc = NULL;
    if (c->auth.key && strlen(model) == len && sy_call_model_denied(c, model, &j->e) != 0) {
        j->denied = 1;
        return;
    }
    if (c->auth.key && strlen(model) == len) {
        model = sy_call_aliased(c, model);
        len = strlen(model);
    }
    const struct sy_group *gr = sy_router_resolve(&c->g->table, model, len);
    if (gr) {
        const struct sy_deployment *d = gr->d[0]->d;
        *model_used = d->upstream_model ? d->upstream_model : d->model_name;
        *enc = d->tokenizer;
    }
}

/* Pool thread (or inline): parse, resolve the model, count, in one pass over
 * the body. Touches only the body, c->g (read-only) and the job. */
static void tc_work(struct sy_call *c, void *arg)
{
    struct tc_job *j = arg;
    j->status = sy_tok_counter_response_r(c->req->body.p, c->req->body.len, tc_resolve, j, &j->out);
}

/* Loop thread: send the reply (ends the request; c is gone afterwards). */
static void tc_done(struct sy_call *c, void *arg)
{
    struct tc_job *j = arg;
    if (j->denied) {
        sy_call_refuse(c, &j->e);
        return;
    }
    sy_reply_buf(c->req, j->status, &j->out);
}

static void tc_free(void *arg)
{
    sy_buf_free(&((struct tc_job *)arg)->out);
}

static int token_counter_run(struct sy_call *c)
{
    struct sy_req *r = c->req;
    struct tc_job *j = sy_arena_alloc(&r->arena, sizeof *j);
    if (!j) {
        sy_reply_error(r, 500, "internal_server_error", NULL, "out of memory");
        return SY_DONE;
    }
    memset(j, 0, sizeof *j);
    sy_buf_init(&j->out, 256u << 20);
    j->status = 500;
    j->c = c;
    sy_arena_defer(&r->arena, tc_free, j);
    /* Either replies now (inline) or later from the loop: do not touch c after. */
    sy_call_run_work(c, r->body.len, tc_work, tc_done, j);
    return SY_DONE;
}

const struct sy_stage sy_stage_token_counter = {
    .name = "token_counter",
    .routes = SY_RKB(SY_RK_TOKEN_COUNTER),
    .run = token_counter_run,
};
