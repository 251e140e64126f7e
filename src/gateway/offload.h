/* offload.h - run a call's CPU-heavy work on libuv's thread pool.
 *
 * A worker's loop never runs anything that takes long: counting the tokens of
 * a large prompt, rendering a large /metrics page and the like go to libuv's
 * work queue (uv_queue_work) and the request resumes on its loop when the work
 * is done. Work below SY_OFFLOAD_MIN_BYTES of input runs inline: handing it to
 * a thread costs more than doing it (a 32 KB count is ~0.2 ms on prose, ~0.6 ms
 * on CJK text).
 *
 * Contract:
 *   - work(c, arg) runs on a pool thread. It may read the request (body,
 *     headers, arena contents allocated before the call), write memory only it
 *     owns until done, and allocate from the request's arena (nothing on the
 *     loop touches this request's arena while the work runs: a client that
 *     leaves only marks the job); it must not touch the loop, the server,
 *     timers or metrics shards.
 *   - done(c, arg) runs afterwards on the worker's loop, unless the client went
 *     away meanwhile: then done is not called, and the request's on_abort of
 *     before the call runs (proxy.c's releases its attempt's slot), or, when
 *     there was none, the call is accounted as 499 and the request ended by
 *     the offload layer (cleanup belongs on the arena, see sy_arena_defer).
 *   - While work runs, the request's on_abort is the offload layer's; the
 *     caller's is restored before done runs.
 *   - Returns 0, or a negative SY_E* when the work could not be queued (then
 *     nothing was called and the caller should run work + done inline).
 */
#ifndef SY_GATEWAY_OFFLOAD_H
#define SY_GATEWAY_OFFLOAD_H

#include <stddef.h>

#define SY_OFFLOAD_MIN_BYTES (32u * 1024u)

struct sy_call;
typedef void (*sy_offload_fn)(struct sy_call *c, void *arg);

int sy_call_offload(struct sy_call *c, sy_offload_fn work, sy_offload_fn done, void *arg);

/* Run work then done: on the pool when input_len >= SY_OFFLOAD_MIN_BYTES (or
 * when queueing fails, inline), else inline at once. */
void sy_call_run_work(struct sy_call *c, size_t input_len, sy_offload_fn work, sy_offload_fn done, void *arg);

/* Run run(st, c, arg) on a DB thread (store/dbpool.h) with the worker's DB
 * connection pool, then done(c, arg) on the loop: the same contract as
 * sy_call_offload (a client that leaves meanwhile is handled the same way).
 * Returns 0, or a negative SY_E* when there is no database (nothing called). */
struct sy_store;
typedef void (*sy_call_db_fn)(struct sy_store *st, struct sy_call *c, void *arg);
int sy_call_db(struct sy_call *c, sy_call_db_fn run, sy_offload_fn done, void *arg);

/* An on_abort for a stage waiting on something that will call back once (a
 * Redis reply): it only marks the call aborted; the callback sees
 * c->aborted, accounts 499 and ends the request. */
struct sy_req;
void sy_call_wait_abort(struct sy_req *r);
/* The callback's side of sy_call_wait_abort: *waiting cleared and the abort
 * hook removed; 1 when the client went away meanwhile (499 accounted, the
 * request ended: the caller returns), else 0. 0 too when not waiting. */
int sy_call_wait_done(struct sy_call *c, int *waiting);

#endif
