/* router.h - model groups that survive provider failures (LiteLLM reference §3).
 *
 * Two kinds of state:
 *  - compiled, immutable, per config snapshot (struct sy_rconf inside the
 *    model table, router/table.h): strategy, retry and cooldown policy, fallbacks
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

#include "config/config.h"

#define SY_LAT_MAX 16 /* latency samples kept per deployment (max_latency_list_size is capped here) */

struct sy_dstate {
    const char *id;                        /* deployment id (owned, never freed: states live for the process) */
    _Atomic int64_t cooldown_until_ms;     /* wall clock (ms since epoch), shared through Redis; 0 = none */
    _Atomic int cooldown_status;           /* status that caused the last cooldown */
    _Atomic int inflight;                  /* requests in flight on this instance */
    _Atomic int remote_inflight;           /* other instances' in-flight (Redis sync), least-busy adds it */
    _Atomic int unhealthy;                 /* 1 after a failed health check, 0 after a good one */
    _Atomic uint64_t w_rpm, w_tpm;         /* minute windows: requests started, tokens (local instance) */
    _Atomic uint64_t w_ok, w_fail;         /* minute windows: successes, failures (cooldown rule) */
    _Atomic uint64_t w_afail;              /* allowed_fails counter (legacy mode), minute window */
    _Atomic uint64_t r_rpm, r_tpm;         /* minute windows as last read from Redis (all instances) */
    _Atomic uint64_t w_lease;              /* minute window: rpm slots leased from Redis, not used yet */
    _Atomic uint64_t tpm_pending;          /* tokens not yet added to Redis (flushed by the sync tick) */
    _Atomic uint64_t lat_bits[SY_LAT_MAX]; /* latency samples (double bits, seconds per output token) */
    _Atomic uint32_t lat_seq;              /* samples written so far (ring index = seq % list size) */
    _Atomic int64_t lat_last_ms;           /* wall clock of the last sample (ttl) */
    _Atomic int state;                     /* litellm_deployment_state: 0 healthy, 1 partial, 2 complete outage */
};

/* The state of deployment `id` (created on first use; never freed). */
struct sy_dstate *sy_dstate_get(const char *id);

/* rpm/tpm used this minute: the larger of this instance's count and the
 * fleet's as last read from Redis. */
uint64_t sy_router_rpm_used(struct sy_dstate *s, int64_t now_ms);
uint64_t sy_router_tpm_used(struct sy_dstate *s, int64_t now_ms);

/* Minute-window helpers (now_ms: wall clock). */
uint64_t sy_win_get(_Atomic uint64_t *w, int64_t now_ms);
uint64_t sy_win_add(_Atomic uint64_t *w, int64_t now_ms, uint64_t n); /* returns the new count */
/* Add 1 only if the count stays below limit; 1 when added (exact under races). */
int sy_win_add_below(_Atomic uint64_t *w, int64_t now_ms, uint64_t limit);
/* Take one if the current minute's count is above 0; 1 when taken. */
int sy_win_take(_Atomic uint64_t *w, int64_t now_ms);
/* Take n back (a reservation given up), only within the same minute. */
void sy_win_sub(_Atomic uint64_t *w, int64_t now_ms, uint64_t n);

int64_t sy_wall_ms(void);

/* ---- compiled policy (one per config snapshot) --------------------------- */

enum sy_strategy {
    SY_RS_SHUFFLE,    /* simple-shuffle (shuffle.c) */
    SY_RS_LEAST_BUSY, /* least-busy (least_busy.c) */
    SY_RS_USAGE,      /* usage-based-routing and -v2 (usage.c) */
    SY_RS_LATENCY,    /* latency-based-routing (latency.c) */
    SY_RS_COST,       /* cost-based-routing (cost.c) */
};

struct sy_rconf {
    enum sy_strategy strategy;
    int num_retries;                 /* router_settings, else litellm_settings, else 2 */
    int retry_policy[SY_EXC__COUNT]; /* < 0: not set for that class */
    double retry_after_s;            /* minimum back-off */
    int legacy_cooldown;             /* allowed_fails or allowed_fails_policy set */
    int allowed_fails;               /* legacy mode: default 3 */
    int allowed_fails_policy[SY_EXC__COUNT];
    double cooldown_time_s; /* default 5 */
    int disable_cooldowns;
    int max_fallbacks;        /* default 5 */
    int pre_call_checks;      /* enable_pre_call_checks */
    int default_max_parallel; /* < 0: none */
    double lowest_latency_buffer;
    double latency_ttl_s;
    unsigned max_latency_list_size; /* 1..SY_LAT_MAX */
    int tag_filtering;              /* router_settings.enable_tag_filtering */
    int tag_match_any;              /* tag_filtering_match_any (default 1) */
    int provider_budgets;           /* provider_budget_config has entries */
};

/* Per-request filters of sy_router_pick (router/select.c). */
struct sy_rfilter {
    const char **tags; /* request tags (body tags, metadata.tags, x-litellm-tags); used with tag filtering */
    size_t ntags;
    char region; /* end user's allowed_model_region: 'e' eu, 'u' us, 0 none */
};

/* Provider budget window (router/budget.c): process-wide per provider and
 * period, so a reload keeps the spend. LiteLLM's budget_limiter: the window
 * opens with the first spend and lasts the period; a later spend after it
 * opens a new one. With Redis the fleet's total is kept under LiteLLM's key
 * provider_spend:{provider}:{period} and read back by every instance. */
struct sy_pbudget {
    const char *provider, *period; /* owned, never freed */
    char *key;                     /* "provider_spend:{provider}:{period}" */
    double period_s;
    _Atomic uint64_t spend_bits;   /* this instance's view of the window's spend (double bits) */
    _Atomic int64_t start_ms;      /* window start (wall clock), 0: none open */
    _Atomic uint64_t pending_bits; /* spend not yet added to Redis (double bits) */
};
struct sy_pbudget *sy_pbudget_get(const char *provider, const char *period, double period_s);
/* Spend in the current window (0 once the period passed since it opened). */
double sy_pbudget_spend(struct sy_pbudget *b, int64_t now_ms);
/* Add one call's cost (loop thread of any worker; lock-free). */
void sy_pbudget_add(struct sy_pbudget *b, double cost, int64_t now_ms);
/* Redis (the sync tick, router/sync.c): push pending spend, read the fleet's totals. */
struct sy_redis;
void sy_pbudget_sync(struct sy_redis *redis);
/* Region class of a deployment for allowed_model_region ('e', 'u' or 0). */
char sy_router_region_of(const struct sy_deployment *d);

struct sy_drt;
struct sy_group;
struct sy_rng;
struct sy_rsync;

/* Why sy_router_pick found nothing. */
enum sy_pick_why {
    SY_PICK_NONE_AVAILABLE = 1, /* every deployment cooled down, unhealthy, at its parallel cap or rpm/tpm */
    SY_PICK_NONE_CONTEXT,       /* pre-call checks: the prompt fits no deployment's max_input_tokens */
    SY_PICK_NONE_SUPPORTED,     /* no deployment of the group has a supported provider */
    SY_PICK_NONE_TAGS,          /* tag filtering: no deployment has the request's tags, none has "default" */
    SY_PICK_NONE_REGION,        /* the end user's allowed_model_region: no deployment of the group is in it */
    SY_PICK_NONE_BUDGET,        /* every available deployment's provider is over its provider budget */
};

/* Pick a deployment of g for one attempt (router/select.c): keeps only the
 * deployments f allows (tags, region: see select.c), drops deployments whose
 * provider is over its budget, in cooldown, unhealthy, at max_parallel_requests, over rpm/tpm (strategies
 * that enforce them, or pre-call checks) or too small for input_tokens
 * (pre-call checks; input_tokens < 0 = unknown), keeps the best `order`,
 * avoids `avoid` when another remains, then applies the strategy. For
 * usage-based routing the chosen deployment's rpm slot is reserved here
 * (exact: a race that fills it picks again). NULL with *why when none. */
struct sy_drt *sy_router_pick(struct sy_rng *rng, const struct sy_rconf *rc, const struct sy_group *g,
                              const struct sy_drt *avoid, int64_t input_tokens, const struct sy_rfilter *f, int *why);
/* Over-budget providers of g's deployments as LiteLLM's message text
 * ("Exceeded budget for provider openai: 0.5 >= 0.1\n"...) into buf. */
void sy_router_budget_info(const struct sy_group *g, char *buf, size_t cap);

/* Deployments of g usable now (not cooled down, healthy, supported), other
 * than `except` (may be NULL). */
size_t sy_router_available(const struct sy_group *g, const struct sy_drt *except);

/* Seconds until the first deployment of g leaves cooldown (>= 1), for the
 * retry-after of "No deployments available", and the ids in cooldown as a
 * Python list literal (LiteLLM's cooldown_list=[...]) into buf. */
double sy_router_cooldown_left(const struct sy_group *g, char *buf, size_t cap);

/* Outcome of one attempt (router/cooldown.c). Called once per attempt, on the
 * loop thread. fail: status is the HTTP status (a transport error counts as
 * 500, a timeout as 408), exc the class of retry_policy/allowed_fails_policy,
 * retry_after_s the upstream's Retry-After (0 when none); s is the worker's
 * sharing (router/sync.h: metrics shard, Redis). Returns 1 when this failure
 * put the deployment in cooldown. */
int sy_router_fail(struct sy_rsync *s, const struct sy_rconf *rc, const struct sy_group *g, struct sy_drt *d,
                   int status, enum sy_exc_class exc, double retry_after_s);
/* The same decision without a worker (router/cooldown.c): counts the
 * failure, sets the deployment's cooldown deadline when the rule says so and
 * returns it (wall-clock ms), else 0. now: sy_wall_ms(). */
int64_t sy_router_cooldown(const struct sy_rconf *rc, const struct sy_group *g, struct sy_drt *d, int status,
                           enum sy_exc_class exc, double retry_after_s, int64_t now);
/* ok: tokens = prompt + completion; lat_s = latency per output token (or time
 * to first token for streams; < 0 when unknown). */
void sy_router_ok(const struct sy_rconf *rc, struct sy_drt *d, uint64_t tokens, double lat_s);
/* A timeout adds LiteLLM's 1000 s penalty sample for latency routing. */
void sy_router_latency_penalty(const struct sy_rconf *rc, struct sy_drt *d);

/* Strategy entry points (one file each): choose among cand[0..n), n >= 1;
 * return an index. */
size_t sy_rs_shuffle(struct sy_rng *rng, const struct sy_group *g, struct sy_drt **cand, size_t n);
size_t sy_rs_least_busy(struct sy_rng *rng, struct sy_drt **cand, size_t n);
size_t sy_rs_usage(struct sy_rng *rng, struct sy_drt **cand, size_t n, int64_t now_ms);
size_t sy_rs_latency(struct sy_rng *rng, const struct sy_rconf *rc, struct sy_drt **cand, size_t n, int64_t now_ms);
size_t sy_rs_cost(struct sy_rng *rng, struct sy_drt **cand, size_t n);
/* Mean of the latency samples of d within the ttl (0 when none). */
double sy_router_latency(const struct sy_rconf *rc, struct sy_dstate *s, int64_t now_ms);

/* ---- retry / fallback policy (router/policy.c) ---- */

/* retry_policy class of a failure (SY_EXC__COUNT: none applies). */
enum sy_exc_class sy_router_exc_class(int status, int content_policy);
/* Retries allowed in one group for a failure of class exc; dep_retries is
 * the failed deployment's litellm_params.num_retries (< 0 none). */
int sy_router_retries(const struct sy_rconf *rc, int req_retries, int dep_retries, enum sy_exc_class exc);

struct sy_failure {
    int status; /* HTTP status (transport error 500, timeout 408) */
    enum sy_exc_class exc;
    int context_window, content_policy;
    int has_cw_fallbacks, has_cp_fallbacks;
    int retries_done;            /* in this group */
    int req_retries;             /* request num_retries, < 0 none */
    int dep_retries;             /* the failed deployment's litellm_params.num_retries, < 0 none */
    double retry_after_s;        /* upstream Retry-After, 0 none */
    const struct sy_drt *failed; /* deployment that failed (NULL: none picked) */
};
/* 1 when the failure is retried in group g, with the delay before it. */
int sy_router_should_retry(const struct sy_rconf *rc, const struct sy_group *g, const struct sy_failure *f,
                           double *delay_s, uint64_t rnd);

/* Load-time wiring (router/compile.c). warn() prints and counts a config warning. */
struct sy_table;
void sy_router_compile_policy(struct sy_rconf *rc, const struct sy_config *cfg, void (*warn)(const char *));
void sy_router_compile_groups(struct sy_table *t, void (*warn)(const char *));
/* Group for a requested model: exact name, model_group_alias, then the most
 * specific wildcard group (openai/<star>, <star>). NULL when none. */
const struct sy_group *sy_router_resolve(const struct sy_table *t, const char *name, size_t len);
/* What a wildcard pattern's '*' matched in name. */
void sy_router_wild_part(const char *pattern, const char *name, const char **part, size_t *plen);

/* Redis sharing: router/sync.h. */

/* Health checks (router/health.c) mark deployments; the router skips unhealthy
 * ones like cooled-down ones. */
static inline void sy_dstate_set_healthy(struct sy_dstate *s, int healthy)
{
    atomic_store_explicit(&s->unhealthy, !healthy, memory_order_relaxed);
}

#endif
