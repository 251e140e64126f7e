/* offload.c - a call's CPU-heavy work on libuv's thread pool (see offload.h).
 *
 *   loop thread                       pool thread
 *   sy_call_offload ── uv_queue_work ──▶ job_work: work(c, arg)
 *        (on_abort := job_abort)
 *   job_after ◀─────────────────────────┘
 *     client gone? account 499, end request
 *     else restore on_abort, done(c, arg)
 */
#include "gateway/offload.h"

#include <uv.h>

#include "core/errors.h"
#include "gateway/gateway.h"
#include "http/server.h"

struct job {
    uv_work_t w;
    struct sy_call *c;
    sy_offload_fn work, done;
    void *arg;
    sy_req_abort_cb saved_abort;
    int gone;
};

static void job_work(uv_work_t *w)
{
    struct job *j = w->data;
    j->work(j->c, j->arg);
}

/* The client went away while the work runs: remember it; the request must
 * stay alive until the pool thread is done with it. */
static void job_abort(struct sy_req *r)
{
    struct sy_call *c = r->handler_data;
    c->aborted = 1;
    if (c->offload_job)
        ((struct job *)c->offload_job)->gone = 1;
}

static void job_after(uv_work_t *w, int status)
{
    struct job *j = w->data;
    struct sy_call *c = j->c;
    c->offload_job = NULL;
    if ((j->gone || status == UV_ECANCELED) && j->saved_abort) {
        /* the client left while the work ran: what the stage would have done had it
         * left then (proxy.c releases its attempt's slot, accounts 499, ends) */
        c->req->on_abort = NULL;
        j->saved_abort(c->req);
        return;
    }
    if (j->gone || status == UV_ECANCELED) {
        c->llm_failed = c->t_up_start != 0;
        sy_call_account(c, 499);
        sy_resp_end(c->req);
        return;
    }
    c->req->on_abort = j->saved_abort;
    j->done(c, j->arg);
}

int sy_call_offload(struct sy_call *c, sy_offload_fn work, sy_offload_fn done, void *arg)
{
    struct job *j = sy_arena_alloc(&c->req->arena, sizeof *j);
    if (!j)
        return SY_ENOMEM;
    j->w.data = j;
    j->c = c;
    j->work = work;
    j->done = done;
    j->arg = arg;
    j->gone = 0;
    j->saved_abort = c->req->on_abort;
    if (uv_queue_work(&c->w->loop, &j->w, job_work, job_after) != 0)
        return SY_EINVAL;
    c->offload_job = j;
    c->req->on_abort = job_abort;
    return 0;
}

void sy_call_run_work(struct sy_call *c, size_t input_len, sy_offload_fn work, sy_offload_fn done, void *arg)
{
    if (input_len >= SY_OFFLOAD_MIN_BYTES && sy_call_offload(c, work, done, arg) == 0)
        return;
    work(c, arg);
    done(c, arg);
}
