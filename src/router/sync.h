/* sync.h - what the router's Redis sharing (router/sync.c) needs from its host.
 *
 * One struct sy_rsync per worker, filled by the worker (gateway/worker.c):
 * its Redis client and metrics shard, and for worker 0, which runs the
 * periodic sync, a callback returning the worker's current model table. The
 * router never sees a worker: the calls below take this struct, the table's
 * policy and deployments, and nothing else.
 */
#ifndef SY_ROUTER_SYNC_H
#define SY_ROUTER_SYNC_H

#include <stdint.h>
#include <uv.h>

#include "router/router.h"

struct sy_redis;
struct sy_metrics_shard;
struct sy_table;

struct sy_rsync {
    struct sy_redis *redis;           /* NULL: no Redis, everything stays local */
    struct sy_metrics_shard *metrics; /* the worker's shard (the cooldown counter) */
    /* the periodic sync (sy_rsync_start): the worker's current table, read on
     * its loop at each tick (the call copies what it needs, holds no reference) */
    const struct sy_table *(*table)(void *ud);
    void *ud;
    uv_timer_t timer;
    int on;
};

#define SY_RSYNC_INTERVAL_MS 200

/* A cooldown set here: SET deployment:{id}:cooldown for the other instances. */
void sy_rsync_cooldown(struct sy_rsync *s, struct sy_drt *d, int64_t until_ms, int status);
/* A success's tokens, added to the fleet's tpm by the next sync. */
void sy_rsync_tokens(struct sy_rsync *s, struct sy_drt *d, uint64_t tokens);
/* Reserve an rpm slot of d across instances (rc: the call's router policy;
 * only usage-, latency- and cost-based routing enforce rpm). 0: nothing to
 * wait for (no Redis, Redis down, no rpm, or a slot of this instance's lease
 * was free): go on at once. 1: cb(ud, ok) runs later on the loop; ok 0 means
 * the fleet already used d's rpm this minute (pick another). */
typedef void (*sy_rsync_reserved_fn)(void *ud, int ok);
int sy_rsync_reserve(struct sy_rsync *s, const struct sy_rconf *rc, struct sy_drt *d, sy_rsync_reserved_fn cb,
                     void *ud);
/* Start the periodic sync on loop (one worker only, with Redis; s->table set);
 * rnd makes this instance's id unique. Stop closes the timer. */
void sy_rsync_start(struct sy_rsync *s, uv_loop_t *loop, uint64_t rnd);
void sy_rsync_stop(struct sy_rsync *s);

#endif
