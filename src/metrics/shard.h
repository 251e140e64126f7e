/* shard.h - internal: per-worker metric shards and their series (not a public API).
 *
 * A shard holds one "entry" per distinct request key: the tuple of every label
 * value any metric family uses (route, model group, deployment, key, status,
 * exception class ...). A record is one hash lookup plus plain counter stores;
 * the render step projects entries onto each family's label set and sums those
 * whose projections are equal (across entries and across shards). Router and
 * deployment events (attempts, cooldowns, fallbacks: deployment.c) are kept
 * the same way in a second table of "dentries" with their own, smaller key.
 *
 * Concurrency: the shard's worker is its only writer. Counters are uint64_t
 * written with relaxed atomic stores (load + add + store, no read-modify-write
 * instruction needed with one writer) and read with relaxed atomic loads by
 * renderers. A new entry is fully built, then its pointer is stored in
 * `entries[n]` and `n` is published with a release store; a renderer loads `n`
 * with acquire and may then read entries[0..n) and their (immutable) labels.
 */
#ifndef SY_METRICS_SHARD_H
#define SY_METRICS_SHARD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "metrics/metrics.h"

/* Label values kept per entry (strings; status and flags are separate). */
enum sy__mkey {
    SY__K_ROUTE,
    SY__K_REQ_MODEL,
    SY__K_MODEL,
    SY__K_MODEL_ID,
    SY__K_PROVIDER,
    SY__K_API_BASE,
    SY__K_KEY_HASH,
    SY__K_KEY_ALIAS,
    SY__K_TEAM,
    SY__K_TEAM_ALIAS,
    SY__K_USER,
    SY__K_END_USER,
    SY__K_USER_EMAIL,
    SY__K_EXC_CLASS,
    SY__K_COUNT
};

/* LiteLLM's LATENCY_BUCKETS (seconds), without the final +Inf. */
#define SY__NBUCKETS 35
extern const double sy__latency_buckets[SY__NBUCKETS];

/* prometheus_client's DEFAULT_BUCKETS, without +Inf: LiteLLM creates
 * litellm_deployment_latency_per_output_token without `buckets=`. Such a
 * histogram uses b[0..SY__NDEFBUCKETS] of struct sy__hist (the last is +Inf). */
#define SY__NDEFBUCKETS 14
extern const double sy__default_buckets[SY__NDEFBUCKETS];
/* Index of the default bucket v falls in (SY__NDEFBUCKETS = +Inf; NaN too). */
int sy__default_bucket_of(double v);

/* One histogram: non-cumulative bucket counts, the +Inf overflow bucket, and
 * the sum as the bit pattern of a double. Count = sum of all buckets. */
struct sy__hist {
    uint64_t b[SY__NBUCKETS + 1];
    uint64_t sum_bits;
};

enum sy__hist_id { SY__H_TOTAL, SY__H_LLM, SY__H_TTFT, SY__H_OVERHEAD, SY__H_COUNT };

struct sy__entry {
    uint64_t hash;
    int status;                 /* HTTP status sent to the client */
    int llm_failed;             /* the upstream call failed */
    const char *s[SY__K_COUNT]; /* point into the entry's own allocation */
    uint32_t len[SY__K_COUNT];
    /* counters */
    uint64_t requests;  /* every request with this key */
    uint64_t llm_calls; /* requests that called an upstream */
    uint64_t in_tokens, out_tokens;
    uint64_t spend_bits;               /* double, USD */
    uint64_t cache_hits, cache_misses; /* response cache lookups */
    struct sy__hist h[SY__H_COUNT];
};

/* ---- router / deployment series (deployment.c) ----
 *
 * One dentry per distinct (kind, ok, status, labels). Labels a kind does not
 * have are empty. Same publication rules as entries. */
enum sy__dkey {
    SY__D_REQ_MODEL,
    SY__D_MODEL, /* litellm_model_name */
    SY__D_MODEL_ID,
    SY__D_API_BASE,
    SY__D_PROVIDER,
    SY__D_KEY_HASH,
    SY__D_KEY_ALIAS,
    SY__D_TEAM,
    SY__D_TEAM_ALIAS,
    SY__D_FALLBACK, /* fallback_model */
    SY__D_EXC_CLASS,
    SY__D_GUARDRAIL,  /* guardrail_name */
    SY__D_GSTATUS,    /* a guardrail check's status: "success", "blocked", "masked", "error" */
    SY__D_HOOK,       /* hook_type: "pre_call", "during_call", "post_call" */
    SY__D_ERR_TYPE,   /* a guardrail's error_type ("" unless its status is "error") */
    SY__D_MCP_SERVER, /* an MCP tool call's server_name */
    SY__D_MCP_TOOL,   /* an MCP tool call's tool_name (bare) */
    SY__D_COUNT
};

enum sy__dkind {
    SY__DK_ATTEMPT,   /* litellm_deployment_{total_requests,success,failure}, latency per output token */
    SY__DK_COOLDOWN,  /* litellm_deployment_cooled_down */
    SY__DK_FALLBACK,  /* litellm_deployment_{successful,failed}_fallbacks */
    SY__DK_GUARDRAIL, /* litellm_guardrail_{requests,errors}_total, litellm_guardrail_latency_seconds */
    SY__DK_MCP, /* litellm_mcp_tool_calls_total, litellm_mcp_tool_call_latency_seconds (status in SY__D_GSTATUS) */
};

struct sy__dentry {
    uint64_t hash;
    int kind;                   /* enum sy__dkind */
    int ok;                     /* attempt / fallback succeeded; a guardrail check that is not an error */
    int status;                 /* exception_status: 0 or 100..599 (0 for successful attempts) */
    const char *s[SY__D_COUNT]; /* point into the dentry's own allocation */
    uint32_t len[SY__D_COUNT];
    uint64_t count;    /* events with this key */
    struct sy__hist h; /* attempts: latency per output token (default buckets); guardrail checks: latency
                        * (LATENCY_BUCKETS) */
};

/* litellm_deployment_state: one row per deployment label tuple (only the
 * SY__D_MODEL, SY__D_MODEL_ID, SY__D_API_BASE and SY__D_PROVIDER strings are
 * set). Rows are immutable but for `state` (atomic) and live until
 * sy_metrics_shutdown(). */
struct sy__state_row {
    int state;
    const char *s[SY__D_COUNT];
    uint32_t len[SY__D_COUNT];
};

struct sy_metrics_shard {
    /* owner-only lookup table: indices+1 into entries, 0 = empty slot */
    uint32_t *table;
    uint32_t table_mask;
    struct sy__entry *last; /* owner-only: entry of the previous record */
    /* published list */
    struct sy__entry **entries;
    uint32_t cap;        /* capacity of entries[] (max_series + overflow slack) */
    uint32_t max_series; /* entries allowed before new keys go to __overflow__ */
    uint32_t n;          /* published count (atomic, release/acquire) */
    int64_t inflight;    /* atomic */
    uint64_t overflowed; /* records folded into __overflow__ (atomic) */
    /* router / deployment series (deployment.c), same scheme as above */
    uint32_t *dtable;
    uint32_t dtable_mask;
    struct sy__dentry *dlast;
    struct sy__dentry **dentries;
    uint32_t dcap;
    uint32_t dn; /* published count (atomic, release/acquire) */
    char pad[64];
};

/* All shards (set by sy_metrics_init). */
extern struct sy_metrics_shard *sy__shards;
extern int sy__nshards;

/* ---- shared by shard.c and deployment.c ---- */

/* The label value of a key past a cap. */
extern const char sy__overflow[];
#define SY__OVERFLOW_LEN 12
/* Per-process hash seed (set by sy_metrics_init). */
extern uint64_t sy__hash_seed;
/* Series (entries and dentries not all "__overflow__") created so far, all
 * shards (atomic). */
extern uint32_t sy__series_total;

/* Value sets of the capped labels: the request key's labels use their enum
 * sy__mkey index; fallback_model, guardrail_name and a guardrail's error_type
 * have their own sets. */
#define SY__V_FALLBACK  SY__K_COUNT
#define SY__V_GUARDRAIL (SY__K_COUNT + 1)
#define SY__V_GERR      (SY__K_COUNT + 2)
#define SY__V_MCP_TOOL  (SY__K_COUNT + 3)
#define SY__V_COUNT     (SY__K_COUNT + 4)
/* 1 when the value may label a new series (known, empty, or room left under
 * the label's cap; then it is remembered). Any thread; lock-free. */
int sy__value_admit(int set, const char *p, uint32_t n);

/* Reserve one of the `max` series shared by all shards: 1 when reserved,
 * 0 when full (no shared write then). */
static inline int sy__series_reserve(uint32_t max)
{
    if (__atomic_load_n(&sy__series_total, __ATOMIC_RELAXED) >= max)
        return 0;
    if (__atomic_fetch_add(&sy__series_total, 1, __ATOMIC_RELAXED) >= max) {
        __atomic_fetch_sub(&sy__series_total, 1, __ATOMIC_RELAXED);
        return 0;
    }
    return 1;
}
static inline void sy__series_unreserve(void)
{
    __atomic_fetch_sub(&sy__series_total, 1, __ATOMIC_RELAXED);
}

/* Mix 8 bytes at a time (multiply-xorshift). */
static inline uint64_t sy__mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 32);
}
static inline uint64_t sy__load64(const char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline uint64_t sy__load32(const char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Fold n label values into h. A value of more than 32 bytes contributes its
 * first 24 and last 8 bytes and its length (key hashes, api bases and routes
 * differ there; equality is decided by a full compare, a collision only costs
 * one). Tails are read with overlapping fixed-size loads. Equal values hash
 * equal, which is all a lookup needs. */
static inline uint64_t sy__hash_labels(uint64_t h, const char *const *s, const uint32_t *len, int n)
{
    for (int i = 0; i < n; i++) {
        const char *p = s[i];
        uint32_t l = len[i];
        uint64_t tail;
        if (l > 32) {
            h = sy__mix(h, sy__load64(p));
            h = sy__mix(h, sy__load64(p + 8));
            h = sy__mix(h, sy__load64(p + 16));
            tail = sy__load64(p + l - 8);
        } else if (l >= 8) {
            const char *end = p + l;
            for (; end - p > 8; p += 8)
                h = sy__mix(h, sy__load64(p));
            tail = sy__load64(end - 8);
        } else if (l >= 4) {
            tail = sy__load32(p) | sy__load32(p + l - 4) << 32;
        } else if (l > 0) {
            tail = (uint64_t)(unsigned char)p[0] | (uint64_t)(unsigned char)p[l / 2] << 8 |
                   (uint64_t)(unsigned char)p[l - 1] << 16;
        } else {
            tail = 0;
        }
        h = sy__mix(h, tail ^ ((uint64_t)l << 56));
    }
    return h;
}

/* Kept length of a label value: at most SY_METRICS_LABEL_MAX bytes, cut at a
 * UTF-8 boundary. */
static inline uint32_t sy__cut_len(const char *s)
{
    const size_t max = SY_METRICS_LABEL_MAX;
    if (!s[0])
        return 0; /* most optional labels are empty: no call */
    size_t n = strnlen(s, max + 1);
    if (n <= max)
        return (uint32_t)n;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--; /* do not split a UTF-8 sequence */
    return (uint32_t)n;
}

/* deployment.c: per-shard tables (called by sy_metrics_init / shutdown) and
 * the litellm_deployment_state table. */
int sy__dep_shard_init(struct sy_metrics_shard *sh, uint32_t cap);
void sy__dep_shard_free(struct sy_metrics_shard *sh);
/* Slots past max_series in a shard's dentries for all-"__overflow__" keys:
 * at most one per (kind, ok, status), statuses being 0 or 100..599. */
#define SY__DEP_OVERFLOW_SLACK 2048
/* Snapshot of the state rows: a malloc'd array (caller frees) of *n row
 * pointers; the rows stay valid until sy_metrics_shutdown(). NULL with *n = 0
 * when there are none; SY_ENOMEM is reported as NULL with *n = SIZE_MAX. */
struct sy__state_row **sy__state_snapshot(size_t *n);
void sy__state_free(void);
/* State values dropped because the table was full (atomic); counted in
 * sy_metrics_overflowed(). */
extern uint64_t sy__state_dropped;

static inline uint64_t sy__ld(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}
static inline void sy__add(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}
static inline double sy__ldd(const uint64_t *p)
{
    uint64_t u = sy__ld(p);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}
static inline void sy__addd(uint64_t *p, double v)
{
    double d = sy__ldd(p) + v;
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    __atomic_store_n(p, u, __ATOMIC_RELAXED);
}

/* Index of the bucket an observation of v seconds falls in (SY__NBUCKETS = +Inf). */
int sy__bucket_of(double v);

#endif
