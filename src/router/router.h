/* router.h - model groups that survive provider failures (LiteLLM reference §3).
 *
 * Two kinds of state:
 *  - compiled, immutable, per config snapshot (struct sy_rconf inside the
 *    gateway's sy_gwconf): strategy, retry and cooldown policy, fallbacks
 *    resolved to groups, aliases, wildcard groups;
 *  - live, per deployment (struct sy_dstate): in-flight count, per-minute
 *    rpm/tpm/success/failure windows, latency samples, cooldown deadline,
 *    health. Process-wide and keyed by the deployment id, so a SIGHUP reload
 *    keeps it; every field is an atomic: workers read and update it without a
 *    lock, and selection is O(deployments in the group).
 *
 * Minute windows are one 64-bit atomic each: the high 24 bits hold the
 * minute number (mod 2^24), the low 40 bits the count, so "count in the
 * current minute" and "add in the current minute, resetting a stale window"
 * are a load and a CAS loop, exact under concurrency:
 *
 *   63            40 39                                   0
 *   +---------------+--------------------------------------+
 *   | minute % 2^24 |  count (requests, tokens, fails...)  |
 *   +---------------+--------------------------------------+
 *
 * With Redis (router_settings.redis_*), cooldowns, usage windows and
 * in-flight counts are shared by every instance (router/sync.c); the local
 * atomics stay the source of truth when Redis is down.
 */
#ifndef SY_ROUTER_H
#define SY_ROUTER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SY_LAT_MAX 16 /* latency samples kept per deployment (max_latency_list_size is capped here) */

struct sy_dstate {
    const char *id; /* deployment id (owned, never freed: states live for the process) */
    _Atomic int64_t cooldown_until_ms; /* wall clock (ms since epoch), shared through Redis; 0 = none */
    _Atomic int cooldown_status;       /* status that caused the last cooldown */
    _Atomic int inflight;              /* requests in flight on this instance */
    _Atomic int remote_inflight;       /* other instances' in-flight (Redis sync), least-busy adds it */
    _Atomic int unhealthy;             /* 1 after a failed health check, 0 after a good one */
    _Atomic uint64_t w_rpm, w_tpm;     /* minute windows: requests started, tokens (local instance) */
    _Atomic uint64_t w_ok, w_fail;     /* minute windows: successes, failures (cooldown rule) */
    _Atomic uint64_t w_afail;          /* allowed_fails counter (legacy mode), minute window */
    _Atomic uint64_t r_rpm, r_tpm;     /* minute windows as last read from Redis (all instances) */
    _Atomic uint64_t lat_bits[SY_LAT_MAX]; /* latency samples (double bits, seconds per output token) */
    _Atomic uint32_t lat_seq;          /* samples written so far (ring index = seq % list size) */
    _Atomic int64_t lat_last_ms;       /* wall clock of the last sample (ttl) */
    _Atomic int state;                 /* litellm_deployment_state: 0 healthy, 1 partial, 2 complete outage */
};

/* The state of deployment `id` (created on first use; never freed). */
struct sy_dstate *sy_dstate_get(const char *id);

/* Minute-window helpers (now_ms: wall clock). */
uint64_t sy_win_get(_Atomic uint64_t *w, int64_t now_ms);
uint64_t sy_win_add(_Atomic uint64_t *w, int64_t now_ms, uint64_t n); /* returns the new count */
/* Add 1 only if the count stays below limit; 1 when added (exact under races). */
int sy_win_add_below(_Atomic uint64_t *w, int64_t now_ms, uint64_t limit);

int64_t sy_wall_ms(void);

/* Health checks (router/health.c) mark deployments; the router skips unhealthy
 * ones like cooled-down ones. */
static inline void sy_dstate_set_healthy(struct sy_dstate *s, int healthy)
{
    atomic_store_explicit(&s->unhealthy, !healthy, memory_order_relaxed);
}

#endif
