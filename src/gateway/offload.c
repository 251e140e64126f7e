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
#include "store/dbpool.h"

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

/* After the work, on the loop: the client's leaving, else done. */
static void job_finish(struct job *j, int status)
{
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
        c->out.llm_failed = c->up.t_up_start != 0;
        sy_call_account(c, 499);
        sy_resp_end(c->req);
        return;
    }
    c->req->on_abort = j->saved_abort;
    j->done(c, j->arg);
}

static void job_after(uv_work_t *w, int status)
{
    job_finish(w->data, status);
}

void sy_call_wait_abort(struct sy_req *r)
{
    struct sy_call *c = r->handler_data;
    c->aborted = 1;
}

int sy_call_wait_done(struct sy_call *c, int *waiting)
{
    if (!*waiting)
        return 0;
    *waiting = 0;
    c->req->on_abort = NULL;
    if (!c->aborted)
        return 0;
    sy_call_account(c, 499);
    sy_resp_end(c->req);
    return 1;
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

/* ---- database work (store/dbpool.h): the same contract, on a DB thread ---- */
struct dbjob {
    struct sy_db_job dj; /* first */
    struct job j;
    sy_call_db_fn run;
};

static void dbjob_run(struct sy_store *st, struct sy_db_job *dj)
{
    struct dbjob *d = (struct dbjob *)dj;
    d->run(st, d->j.c, d->j.arg);
}

static void dbjob_done(struct sy_db_job *dj)
{
    job_finish(&((struct dbjob *)dj)->j, 0);
}

int sy_call_db(struct sy_call *c, sy_call_db_fn run, sy_offload_fn done, void *arg)
{
    if (!c->w->dbport)
        return SY_EINVAL;
    struct dbjob *d = sy_arena_alloc(&c->req->arena, sizeof *d);
    if (!d)
        return SY_ENOMEM;
    d->dj.run = dbjob_run;
    d->dj.done = dbjob_done;
    d->run = run;
    d->j.c = c;
    d->j.work = NULL;
    d->j.done = done;
    d->j.arg = arg;
    d->j.gone = 0;
    d->j.saved_abort = c->req->on_abort;
    if (sy_db_submit(c->w->dbport, &d->dj) != 0)
        return SY_EINVAL;
    c->offload_job = &d->j;
    c->req->on_abort = job_abort;
    return 0;
}
