/* shard.h - internal: per-worker metric shards and their series (not a public API).
 *
 * A shard holds one "entry" per distinct request key: the tuple of every label
 * value any metric family uses (route, model group, deployment, key, status,
 * exception class ...). A record is one hash lookup plus plain counter stores;
 * the render step projects entries onto each family's label set and sums those
 * whose projections are equal (across entries and across shards).
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

/* One histogram: non-cumulative bucket counts, the +Inf overflow bucket, and
 * the sum as the bit pattern of a double. Count = sum of all buckets. */
struct sy__hist {
    uint64_t b[SY__NBUCKETS + 1];
    uint64_t sum_bits;
};

enum sy__hist_id { SY__H_TOTAL, SY__H_LLM, SY__H_TTFT, SY__H_OVERHEAD, SY__H_COUNT };

struct sy__entry {
    uint64_t hash;
    int status;     /* HTTP status sent to the client */
    int llm_failed; /* the upstream call failed */
    const char *s[SY__K_COUNT]; /* point into the entry's own allocation */
    uint32_t len[SY__K_COUNT];
    /* counters */
    uint64_t requests;   /* every request with this key */
    uint64_t llm_calls;  /* requests that called an upstream */
    uint64_t in_tokens, out_tokens;
    uint64_t spend_bits; /* double, USD */
    struct sy__hist h[SY__H_COUNT];
};

struct sy_metrics_shard {
    /* owner-only lookup table: indices+1 into entries, 0 = empty slot */
    uint32_t *table;
    uint32_t table_mask;
    struct sy__entry *last; /* owner-only: entry of the previous record */
    /* published list */
    struct sy__entry **entries;
    uint32_t cap;      /* capacity of entries[] (max_series + overflow slack) */
    uint32_t max_series; /* entries allowed before new keys go to __overflow__ */
    uint32_t n;        /* published count (atomic, release/acquire) */
    int64_t inflight;  /* atomic */
    uint64_t overflowed; /* records folded into __overflow__ (atomic) */
    char pad[64];
};

/* All shards (set by sy_metrics_init). */
extern struct sy_metrics_shard *sy__shards;
extern int sy__nshards;

static inline uint64_t sy__ld(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
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
