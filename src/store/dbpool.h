/* dbpool.h - DB threads: where every database call runs, so no loop ever blocks.
 *
 *   worker loop                     DB thread (own connection)
 *   sy_db_submit(port, job) ──queue──▶ job->run(st, job)
 *   job->done(job) ◀── uv_async ──────┘   (on the submitting port's loop)
 *
 * The pool is process-wide: `threads` threads, each with its own
 * sy_store connection (opened at start; a PostgreSQL that is down is
 * reconnected on use). Jobs are taken first come first served. A port is one
 * loop's mailbox for completions (one uv_async_t): every worker makes one at
 * start and frees it when it stops.
 *
 * Contract:
 *   - run(st, job) runs on a DB thread; it may block; it must not touch any
 *     loop. st is the thread's connection (its state: sy_store_up()).
 *   - done(job) runs afterwards on the port's loop thread, exactly once,
 *     unless the port was freed first (then never: free the port only when
 *     the loop is done with its requests).
 *   - The job memory is the caller's (embed struct sy_db_job first in your
 *     own struct) and must live until done runs.
 *   - sy_db_submit_nowait(job) runs run(st, job) with no completion (done is
 *     ignored; the caller frees in run). For writers that report nothing.
 *   - Order: jobs from one port may run concurrently on different threads.
 */
#ifndef SY_STORE_DBPOOL_H
#define SY_STORE_DBPOOL_H

#include <uv.h>

#include "store/store.h"

struct sy_db_job;
typedef void (*sy_db_run_fn)(struct sy_store *st, struct sy_db_job *job);
typedef void (*sy_db_done_fn)(struct sy_db_job *job);

struct sy_db_job {
    sy_db_run_fn run;
    sy_db_done_fn done;
    /* private */
    struct sy_db_port *port;
    struct sy_db_job *next;
};

struct sy_db_port;

/* Start the pool (main thread, before workers). 0, or -1 with err filled when
 * the database cannot be opened at all (a bad SQLite path; PostgreSQL down is
 * not an error). With migrate, the first connection runs sy_store_migrate. */
int sy_db_start(const struct sy_store_conf *conf, int threads, int migrate, char *err, size_t errlen);
/* 1 when the pool is running. */
int sy_db_enabled(void);
enum sy_store_kind sy_db_kind(void);
/* Stop: finish queued jobs, join threads, close connections. */
void sy_db_stop(void);
/* 1 when the last call on any connection reached the database. */
int sy_db_up(void);

struct sy_db_port *sy_db_port_new(uv_loop_t *loop); /* on loop's thread */
void sy_db_port_free(struct sy_db_port *p);         /* on loop's thread; closes the handle */

/* Queue job (run/done set by the caller). 0, or -1 when the pool is not
 * running (nothing will be called). */
int sy_db_submit(struct sy_db_port *p, struct sy_db_job *job);
int sy_db_submit_nowait(struct sy_db_job *job);

/* Run fn(st, arg) on a fresh connection of the pool's database, on the
 * calling thread, blocking (start-up, tests, the spend writer's own thread).
 * Returns fn's result, or -1 when the pool is not configured. */
int sy_db_run_sync(int (*fn)(struct sy_store *st, void *arg), void *arg);

/* The pool's configuration (for threads that keep their own connection, e.g.
 * the spend writer). NULL when not running. */
const struct sy_store_conf *sy_db_conf(void);

#endif
