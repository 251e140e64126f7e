/* limits.h - rpm, tpm and parallel-request limits (LiteLLM's
 * parallel_request_limiter_v3, reference §4.3), exact on one instance and
 * across instances.
 *
 * A request's limits are a list of descriptors, built from its key's auth
 * object, its end user and the requested model group:
 *
 *   | kind (descriptor_key)  | value                    | limits from                              |
 *   |------------------------|--------------------------|------------------------------------------|
 *   | api_key                | the key's token (sha256) | key row / its budget row: rpm tpm par    |
 *   | user                   | user_id                  | user row                                 |
 *   | team                   | team_id                  | team row                                 |
 *   | team_member            | "team_id:user_id"        | membership's budget row                  |
 *   | end_user               | end-user id              | end user's budget row                    |
 *   | organization           | organization_id          | org's budget row                         |
 *   | model_per_key          | "token:model"            | key metadata model_rpm_limit/_tpm_limit  |
 *   | model_per_team         | "team_id:model"          | team metadata model_rpm_limit/_tpm_limit |
 *   | model_per_organization | "org_id:model"           | org metadata model_rpm_limit/_tpm_limit  |
 *   | global                 | "global"                 | general_settings.global_max_parallel_requests (par only) |
 *
 * A descriptor exists only when it has at least one limit. Every entity may
 * carry max_parallel_requests (LiteLLM reads it on keys only: a superset).
 *
 * Windows: fixed 60 s windows aligned to the Unix minute (floor(now / 60));
 * the same on every instance with no window state to share. LiteLLM starts a
 * window at a descriptor's first request; the length and the counting are
 * the same, and retry-after is the exact time to the window's end.
 *
 * Taking a request (all or nothing across its descriptors): requests + 1 <=
 * rpm, tokens + T <= tpm (T = the prompt's exact token count reserved up
 * front, 0 when token_rate_limit_type is "output"; with T = 0 the test is
 * tokens < tpm), parallel + 1 <= max_parallel. If any fails nothing is
 * counted and the first failing descriptor is reported. Settling (once,
 * when the call ends, success or failure): parallel - 1, tokens += used - T
 * in the window the take counted in (when that window is still current;
 * else used is added to the current one).
 *
 * Local counters (counters.c): process-wide, shared by the workers, found by
 * (kind, value) in a sharded table (a shard's lock is held only to find or
 * insert a counter); a counter's window and count are packed in one 64-bit
 * atomic updated by compare-and-swap, so concurrent takes are exact without
 * a lock. Counters idle for two windows with nothing in flight are freed by
 * sy_lim_sweep.
 *
 * Redis (redis.c), when configured: the counters live in Redis and one script
 * call per request does the all-or-nothing take for every descriptor:
 *
 *   | key                                | type   | value                                  | expiry      |
 *   |------------------------------------|--------|----------------------------------------|-------------|
 *   | {<kind>:<value>}:window            | string | current window start (unix s)          | 120 s       |
 *   | {<kind>:<value>}:requests          | string | requests in that window                | 120 s       |
 *   | {<kind>:<value>}:tokens            | string | tokens in that window                  | 120 s       |
 *   | {<kind>:<value>}:parallel          | zset   | in-flight request ids, score = expiry  | refreshed   |
 *
 * (LiteLLM's key names; in-flight requests are a sorted set with a deadline
 * per member instead of a counter, so a crashed instance's requests leave the
 * count by themselves.) The reply carries each descriptor's counts, which are
 * mirrored into the local counters as a shadow: a request the shadow already
 * proves over a limit (same window) is refused with no Redis call. Settling
 * is one fire-and-forget script call. Redis down: the caller falls back to
 * the local counters (fail open, the default) or refuses (fail closed).
 */
#ifndef SY_LIMITS_H
#define SY_LIMITS_H

#include <stddef.h>
#include <stdint.h>

struct sy_keyinfo;
struct sy_enduser;
struct sy_redis;
struct sy_buf;

enum sy_lim_kind {
    SY_LIM_API_KEY,
    SY_LIM_USER,
    SY_LIM_TEAM,
    SY_LIM_TEAM_MEMBER,
    SY_LIM_END_USER,
    SY_LIM_ORG,
    SY_LIM_MODEL_PER_KEY,
    SY_LIM_MODEL_PER_TEAM,
    SY_LIM_MODEL_PER_ORG,
    SY_LIM_GLOBAL,
    SY_LIM__COUNT
};
/* "api_key", "user", "team", "team_member", "end_user", "organization",
 * "model_per_key", "model_per_team", "model_per_organization", "global". */
extern const char *const sy_lim_kind_names[SY_LIM__COUNT];

#define SY_LIM_WINDOW_S  60
#define SY_LIM_MAX       12 /* descriptors per request */
#define SY_LIM_VALUE_MAX 320

struct sy_lim_ctr; /* a local counter (counters.c) */

struct sy_lim_desc {
    enum sy_lim_kind kind;
    char value[SY_LIM_VALUE_MAX]; /* NUL-terminated; a longer value is cut (ids are short) */
    int64_t rpm, tpm, par;        /* < 0: none */
    struct sy_lim_ctr *ctr;       /* resolved by sy_lim_take / shadow (referenced until settle) */
};

/* One request's limits; lives in the call (arena), zeroed before build. */
struct sy_lim_req {
    unsigned n;
    struct sy_lim_desc d[SY_LIM_MAX];
    /* the take */
    int64_t tokens;   /* tokens reserved (T) */
    int64_t window;   /* window start (unix s) the take counted in */
    int taken;        /* counters hold this request: sy_lim_settle must run */
    int in_redis;     /* taken in Redis (settle there) */
    char member[48];  /* this request's member of the parallel sets ("<instance>:<call id>") */
    double par_ttl_s; /* deadline of the parallel-set member (the call's timeout + margin) */
    /* outcome (sy_lim_take, sy_lim_shadow_over, the Redis callback) */
    int over;              /* index of the descriptor over its limit, -1 none */
    const char *over_type; /* "requests" | "tokens" | "max_parallel_requests" */
    int64_t over_limit, over_remaining;
    /* after a successful take: remaining requests/tokens per descriptor (-1 when no such limit) */
    int64_t rem_req[SY_LIM_MAX], rem_tok[SY_LIM_MAX];
};

/* Start / stop the local counter table (idempotent). */
void sy_lim_init(void);
void sy_lim_shutdown(void);
/* Free counters idle for two windows with nothing in flight (call every few seconds; any thread). */
void sy_lim_sweep(double now_unix);

/* Build lr's descriptors (see the table above). ki and eu may be NULL;
 * model is the requested model group (may be NULL: no model_per_*
 * descriptors); global_par < 0: none. lr must be zeroed; sets lr->over = -1.
 * Model limits are read from the metadata JSON of the key/team/org
 * ("model_rpm_limit": {"<model>": N}, "model_tpm_limit": {...}). Returns n. */
unsigned sy_lim_build(struct sy_lim_req *lr, const struct sy_keyinfo *ki, const struct sy_enduser *eu,
                      const char *model, int64_t global_par);

/* 1 when some descriptor has a tpm limit (the prompt must be counted). */
int sy_lim_needs_tokens(const struct sy_lim_req *lr);

/* Take on the local counters: 0 (taken; lr->taken = 1, rem_* filled) or 1
 * (over: lr->over... filled, nothing counted). tokens = T. Thread-safe. */
int sy_lim_take(struct sy_lim_req *lr, int64_t tokens, double now_unix);

/* 1 when the Redis shadow of some descriptor (same window) already shows it
 * over (lr->over... filled); 0 otherwise. No Redis call. */
int sy_lim_shadow_over(struct sy_lim_req *lr, int64_t tokens, double now_unix);

/* Take in Redis (one EVALSHA on r, a worker's client). Returns -1 when the
 * command could not be sent (client down: cb is not called), else 0 and cb
 * runs once on the loop with rc 0 (taken: lr->taken = lr->in_redis = 1,
 * rem_* filled, shadow updated), 1 (over: lr->over... filled, shadow
 * updated) or -1 (Redis failed: no reply, error reply, unexpected shape).
 * lr->member and lr->par_ttl_s must be set when a descriptor has par. */
typedef void (*sy_lim_cb)(void *ud, int rc);
int sy_lim_take_redis(struct sy_lim_req *lr, struct sy_redis *r, int64_t tokens, double now_unix, sy_lim_cb cb,
                      void *ud);

/* Release the take (once; no-op unless lr->taken): parallel - 1 and the
 * tokens adjusted to used. r: the worker's client for a Redis take (may be
 * NULL or down: the parallel members then expire at their deadline and the
 * token adjustment is lost, which only under-counts). */
void sy_lim_settle(struct sy_lim_req *lr, struct sy_redis *r, int64_t used_tokens, double now_unix);

/* Response headers for a taken request, appended to b as "Name: v\r\n":
 * x-ratelimit-remaining-requests / -limit-requests / -remaining-tokens /
 * -limit-tokens (the tightest descriptor's), and LiteLLM's per descriptor
 * x-ratelimit-<kind>-remaining-<requests|tokens> / -limit-<...>, and for
 * the key x-litellm-key-tpm-limit / -rpm-limit. */
void sy_lim_headers(const struct sy_lim_req *lr, struct sy_buf *b);

/* The 429 for an over lr: LiteLLM's message ("Rate limit exceeded for
 * api_key: <value>. Limit type: requests. Current limit: 50, Remaining: 0.
 * Limit resets at: 2026-12-03 23:59:00 UTC") into msg, and its headers
 * (retry-after: seconds to the window's end (>= 1), rate_limit_type,
 * reset_at, x-ratelimit-remaining-<type>: 0, x-ratelimit-limit-<type>) as
 * "Name: v\r\n" lines into hdrs. Retry-after for max_parallel_requests is 1. */
void sy_lim_error(const struct sy_lim_req *lr, double now_unix, char *msg, size_t msgcap, char *hdrs, size_t hcap);

/* Current local usage of one descriptor (the shadow's when Redis holds the
 * counters): requests and tokens in the current window, requests in flight.
 * 0, or -1 when there is no counter (all zero then). Thread-safe. */
int sy_lim_usage(enum sy_lim_kind kind, const char *value, double now_unix, int64_t *requests, int64_t *tokens,
                 int64_t *parallel);

#endif
