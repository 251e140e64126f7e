/* shard.c - per-worker metric shards: init, the record path, the in-flight gauge.
 *
 * Invariants (see shard.h): one writer per shard; an entry is immutable except
 * for its counters once published; entries[0..n) are valid for readers after
 * an acquire load of n. Entries whose labels are not all "__overflow__" are
 * at most `max_series` across all shards (a global atomic reservation made
 * only when a series is created); a shard holds at most `cap` entries, the
 * slots past that share being for keys whose label strings are all
 * "__overflow__" (one per status and failure flag), so memory and /metrics
 * size are bounded whatever clients send. The series count, the per-label
 * value sets, the hash seed and the overflow value are shared with
 * deployment.c (router / deployment series).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "core/errors.h"
#include "metrics/metrics.h"
#include "metrics/shard.h"

const double sy__latency_buckets[SY__NBUCKETS] = {
    0.005, 0.00625, 0.0125, 0.025, 0.05, 0.1, 0.5, 1.0,  1.5,  2.0,  2.5,  3.0,  3.5,  4.0,   4.5,   5.0,   5.5,   6.0,
    6.5,   7.0,     7.5,    8.0,   8.5,  9.0, 9.5, 10.0, 15.0, 20.0, 25.0, 30.0, 60.0, 120.0, 180.0, 240.0, 300.0,
};

/* Slots past max_series for "__overflow__" keys: one per (status, failed) pair
 * at most, and statuses are clamped to 0 or 100..599. */
#define OVERFLOW_SLACK 1024
const char sy__overflow[] = "__overflow__";
_Static_assert(sizeof sy__overflow - 1 == SY__OVERFLOW_LEN, "overflow length");

struct sy_metrics_shard *sy__shards;
int sy__nshards;
static unsigned max_series = SY_METRICS_MAX_SERIES;
/* Series (entries and dentries not all "__overflow__") created so far, all
 * shards: reserved with an atomic add when a shard is about to create one,
 * never on the record path of an existing series. */
uint32_t sy__series_total;
/* Per-process seed (sy_metrics_init), so clients cannot aim values at one
 * probe chain of a shard's table. */
uint64_t sy__hash_seed = 0x243F6A8885A308D3ull;
static unsigned max_label_values = SY_METRICS_MAX_LABEL_VALUES;

void sy_metrics_set_max_series(unsigned n)
{
    max_series = n ? n : 1;
}
void sy_metrics_set_max_label_values(unsigned n)
{
    max_label_values = n ? n : 1;
}

/* ---- per-label value caps ------------------------------------------------
 *
 * Labels a client can influence are capped by distinct value, across all
 * shards, as exporters cap cardinality (OpenTelemetry's overflow attribute,
 * here the value "__overflow__"). Each capped label has a fixed open-address
 * set of 64-bit value hashes, filled with compare-and-swap: lock-free, and
 * consulted only when a shard is about to create a new series (values of
 * existing series were admitted when those were made). Races between
 * workers can admit at most nshards-1 values past the cap.
 */
static const int capped[] = {SY__K_ROUTE,      SY__K_REQ_MODEL, SY__K_KEY_HASH, SY__K_KEY_ALIAS, SY__K_TEAM,
                             SY__K_TEAM_ALIAS, SY__K_USER,      SY__K_END_USER, SY__K_USER_EMAIL};
#define NCAPPED (sizeof capped / sizeof capped[0])
struct valset {
    uint64_t *slot; /* 0 = empty */
    uint32_t mask;
    uint32_t count; /* atomic */
    uint32_t limit;
};
/* Indexed by enum sy__mkey, plus SY__V_FALLBACK (fallback_model), SY__V_GUARDRAIL
 * (guardrail_name) and SY__V_GERR (a guardrail's error_type), deployment.c's. */
static struct valset valsets[SY__V_COUNT];

/* Every byte of a value (value sets keep only hashes, so no byte may be
 * skipped), 8 at a time, the tail as one overlapping load; never 0. */
static inline __attribute__((always_inline)) uint64_t value_hash(const char *p, uint32_t n)
{
    uint64_t h = sy__hash_seed ^ 0x9E3779B97F4A7C15ull, tail;
    if (n >= 8) {
        const char *end = p + n;
        for (; end - p > 8; p += 8)
            h = sy__mix(h, sy__load64(p));
        tail = sy__load64(end - 8);
    } else if (n >= 4) {
        tail = sy__load32(p) | sy__load32(p + n - 4) << 32;
    } else {
        tail = n ? (uint64_t)(unsigned char)p[0] | (uint64_t)(unsigned char)p[n / 2] << 8 |
                       (uint64_t)(unsigned char)p[n - 1] << 16
                 : 0;
    }
    h = sy__mix(h, tail ^ ((uint64_t)n << 56));
    return h ? h : 1;
}

/* 1 when the value may label a new series (known, empty, or room left).
 * The count is reserved before the slot is claimed, so no more than `limit`
 * values are ever admitted, however many workers race; a racing new value may
 * be refused while another worker's reservation for a duplicate is undone. */
static inline __attribute__((always_inline)) int value_admit(int label, const char *p, uint32_t n)
{
    struct valset *vs = &valsets[label];
    if (!vs->slot || n == 0)
        return 1;
    uint64_t h = value_hash(p, n);
    int reserved = 0;
    for (uint32_t i = (uint32_t)h & vs->mask, probes = 0; probes <= vs->mask; i = (i + 1) & vs->mask, probes++) {
        uint64_t cur = __atomic_load_n(&vs->slot[i], __ATOMIC_ACQUIRE);
        if (cur == h)
            goto known;
        if (cur != 0)
            continue;
        if (!reserved) {
            /* the plain load first: a full set costs no shared write */
            if (__atomic_load_n(&vs->count, __ATOMIC_RELAXED) >= vs->limit)
                return 0;
            if (__atomic_fetch_add(&vs->count, 1, __ATOMIC_RELAXED) >= vs->limit) {
                __atomic_fetch_sub(&vs->count, 1, __ATOMIC_RELAXED);
                return 0;
            }
            reserved = 1;
        }
        uint64_t expect = 0;
        if (__atomic_compare_exchange_n(&vs->slot[i], &expect, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return 1;
        if (expect == h)
            goto known;
    }
    /* unreachable: the set has twice `limit` slots */
    if (reserved)
        __atomic_fetch_sub(&vs->count, 1, __ATOMIC_RELAXED);
    return 0;
known:
    if (reserved)
        __atomic_fetch_sub(&vs->count, 1, __ATOMIC_RELAXED);
    return 1;
}

/* For deployment.c. shard.c's record path has value_admit inlined, as a
 * global function in -fPIC code cannot be. */
int sy__value_admit(int set, const char *p, uint32_t n)
{
    return value_admit(set, p, n);
}

static void valsets_free(void)
{
    for (int i = 0; i < SY__V_COUNT; i++) {
        free(valsets[i].slot);
        memset(&valsets[i], 0, sizeof valsets[i]);
    }
}

static int valsets_init(void)
{
    static const int extra[] = {SY__V_FALLBACK, SY__V_GUARDRAIL, SY__V_GERR, SY__V_MCP_TOOL};
    for (size_t k = 0; k < NCAPPED + sizeof extra / sizeof extra[0]; k++) {
        struct valset *vs = &valsets[k < NCAPPED ? capped[k] : extra[k - NCAPPED]];
        uint32_t size = 16;
        while (size < max_label_values * 2u + 2u)
            size *= 2;
        vs->slot = calloc(size, sizeof *vs->slot);
        if (!vs->slot)
            return SY_ENOMEM;
        vs->mask = size - 1;
        vs->limit = max_label_values;
        vs->count = 0;
    }
    return 0;
}

/* Positive integer from the environment, or def. */
static unsigned env_uint(const char *name, unsigned def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *e;
    unsigned long n = strtoul(v, &e, 10);
    return (*e == 0 && n >= 1 && n <= 1000000) ? (unsigned)n : def;
}
unsigned sy_metrics_max_series(void)
{
    return max_series;
}
unsigned sy_metrics_max_label_values(void)
{
    return max_label_values;
}

size_t sy_metrics_series(void)
{
    struct sy_metrics_shard *all = __atomic_load_n(&sy__shards, __ATOMIC_ACQUIRE);
    size_t t = 0;
    for (int i = 0; all && i < sy__nshards; i++)
        t += __atomic_load_n(&all[i].n, __ATOMIC_ACQUIRE) + __atomic_load_n(&all[i].dn, __ATOMIC_ACQUIRE);
    return t;
}

int sy__bucket_of(double v)
{
    /* first bound >= v (Prometheus buckets are "le"); NaN lands in +Inf.
     * Most observations are small, so the first bounds are tried in order;
     * 1.0 .. 10.0 are steps of 0.5 (index 7 + 2 * (v - 1)), found by
     * arithmetic and corrected against the table; the rest in order. */
    const double *b = sy__latency_buckets;
    if (v <= b[6]) { /* <= 0.5 */
        int i = 0;
        while (!(v <= b[i]))
            i++;
        return i;
    }
    if (v <= b[25]) { /* <= 10.0 */
        int i = 7 + (int)((v - 1.0) * 2.0);
        if (i < 7)
            i = 7;
        if (i > 25)
            i = 25;
        while (i > 7 && v <= b[i - 1])
            i--;
        while (!(v <= b[i]))
            i++;
        return i;
    }
    for (int i = 26; i < SY__NBUCKETS; i++)
        if (v <= b[i])
            return i;
    return SY__NBUCKETS;
}

static void shard_free(struct sy_metrics_shard *sh)
{
    if (sh->entries)
        for (uint32_t i = 0; i < sh->n; i++)
            free(sh->entries[i]);
    free(sh->entries);
    free(sh->table);
    sy__dep_shard_free(sh);
    memset(sh, 0, sizeof *sh);
}

int sy_metrics_init(int nshards)
{
    if (sy__shards || nshards < 1)
        return SY_EINVAL;
    max_series = env_uint("SWITCHYARD_METRICS_MAX_SERIES", max_series);
    max_label_values = env_uint("SWITCHYARD_METRICS_MAX_LABEL_VALUES", max_label_values);
    struct sy_metrics_shard *all = calloc((size_t)nshards, sizeof *all);
    if (!all)
        return SY_ENOMEM;
    if (valsets_init() != 0) {
        valsets_free();
        free(all);
        return SY_ENOMEM;
    }
    /* one shard may hold every series, plus its own overflow entries */
    uint32_t cap = max_series + OVERFLOW_SLACK;
    sy__series_total = 0;
    uint64_t seed;
    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) == (ssize_t)sizeof seed)
        sy__hash_seed = seed | 1;
    uint32_t tsize = 16;
    while (tsize < cap * 2u)
        tsize *= 2;
    for (int i = 0; i < nshards; i++) {
        struct sy_metrics_shard *sh = &all[i];
        sh->table = calloc(tsize, sizeof *sh->table);
        sh->entries = calloc(cap, sizeof *sh->entries);
        if (!sh->table || !sh->entries || sy__dep_shard_init(sh, max_series + SY__DEP_OVERFLOW_SLACK) != 0) {
            for (int j = 0; j <= i; j++)
                shard_free(&all[j]);
            free(all);
            return SY_ENOMEM;
        }
        sh->table_mask = tsize - 1;
        sh->cap = cap;
        sh->max_series = max_series;
    }
    sy__nshards = nshards;
    __atomic_store_n(&sy__shards, all, __ATOMIC_RELEASE);
    return 0;
}

void sy_metrics_shutdown(void)
{
    if (!sy__shards)
        return;
    for (int i = 0; i < sy__nshards; i++)
        shard_free(&sy__shards[i]);
    free(sy__shards);
    sy__shards = NULL;
    sy__nshards = 0;
    valsets_free();
    sy__state_free();
}

struct sy_metrics_shard *sy_metrics_shard(int i)
{
    struct sy_metrics_shard *all = __atomic_load_n(&sy__shards, __ATOMIC_ACQUIRE);
    if (!all || i < 0 || i >= sy__nshards)
        return NULL;
    return &all[i];
}

uint64_t sy_metrics_overflowed(void)
{
    uint64_t t = __atomic_load_n(&sy__state_dropped, __ATOMIC_RELAXED);
    for (int i = 0; i < sy__nshards; i++)
        t += sy__ld(&sy__shards[i].overflowed);
    return t;
}

void sy_metrics_inflight(struct sy_metrics_shard *s, int delta)
{
    if (s)
        __atomic_fetch_add(&s->inflight, (int64_t)delta, __ATOMIC_RELAXED);
}

/* The key of one record, with every string cut to its kept length. */
struct key {
    const char *s[SY__K_COUNT];
    uint32_t len[SY__K_COUNT];
    int status, failed;
    uint64_t hash;
    int admit_checked; /* 0: check capped labels on insert; 1: skip */
    uint32_t refused;  /* bit per label (1u << enum sy__mkey) whose value was refused */
};

/* Hash every label (sy__hash_labels) and the status; key_eq decides equality. */
static void key_hash(struct key *k)
{
    uint64_t h = sy__hash_labels(sy__hash_seed, k->s, k->len, SY__K_COUNT);
    h = sy__mix(h, (uint64_t)(k->status * 2 + k->failed));
    k->hash = h;
}

static void key_fill(struct key *k, const struct sy_metric_req *r)
{
    const char *v[SY__K_COUNT] = {
        [SY__K_ROUTE] = r->route,
        [SY__K_REQ_MODEL] = r->requested_model,
        [SY__K_MODEL] = r->model,
        [SY__K_MODEL_ID] = r->model_id,
        [SY__K_PROVIDER] = r->api_provider,
        [SY__K_API_BASE] = r->api_base,
        [SY__K_KEY_HASH] = r->hashed_api_key,
        [SY__K_KEY_ALIAS] = r->api_key_alias,
        [SY__K_TEAM] = r->team,
        [SY__K_TEAM_ALIAS] = r->team_alias,
        [SY__K_USER] = r->user,
        [SY__K_END_USER] = r->end_user,
        [SY__K_USER_EMAIL] = r->user_email,
        [SY__K_EXC_CLASS] = NULL,
    };
    k->status = (r->status >= 100 && r->status <= 599) ? r->status : 0;
    k->failed = r->llm_called && r->llm_failed ? 1 : 0;
    if (k->status >= 400 || k->failed)
        v[SY__K_EXC_CLASS] =
            (r->exception_class && *r->exception_class) ? r->exception_class : sy_status_exception_class(k->status);
    for (int i = 0; i < SY__K_COUNT; i++) {
        k->s[i] = v[i] ? v[i] : "";
        k->len[i] = sy__cut_len(k->s[i]);
    }
}

/* Same labels? (Hashes are compared by the caller when it has one.) Lengths
 * first: most different keys differ in one, and empty values need no compare. */
static inline int key_eq(const struct key *k, const struct sy__entry *e)
{
    if (e->status != k->status || e->llm_failed != k->failed)
        return 0;
    if (memcmp(e->len, k->len, sizeof k->len) != 0)
        return 0;
    for (int i = 0; i < SY__K_COUNT; i++)
        if (k->len[i] && memcmp(e->s[i], k->s[i], k->len[i]) != 0)
            return 0;
    return 1;
}

/* Find the entry for k, adding it if there is room. A series (counted=1)
 * needs one of the max_series slots shared by all shards and every capped
 * label value admitted; an all-"__overflow__" key (counted=0) only needs room
 * in the shard. NULL when absent and no room (k->refused says which labels'
 * label value was refused), or out of memory. */
static struct sy__entry *lookup(struct sy_metrics_shard *sh, struct key *k, int counted)
{
    uint32_t i = (uint32_t)k->hash & sh->table_mask;
    for (;; i = (i + 1) & sh->table_mask) {
        uint32_t slot = sh->table[i];
        if (slot == 0)
            break;
        struct sy__entry *e = sh->entries[slot - 1];
        if (e->hash == k->hash && key_eq(k, e))
            return e;
    }
    uint32_t n = sh->n; /* owner: plain read of its own count */
    if (n >= sh->cap)
        return NULL;
    if (counted && k->admit_checked == 0) {
        /* a new series: every capped label value must be admitted; all are
         * tried, so the caller knows every refused one */
        uint32_t refused = 0;
        for (size_t j = 0; j < NCAPPED; j++)
            if (!value_admit(capped[j], k->s[capped[j]], k->len[capped[j]]))
                refused |= 1u << capped[j];
        if (refused) {
            k->refused = refused; /* caller re-keys with overflow values */
            return NULL;
        }
    }
    if (counted && !sy__series_reserve(sh->max_series))
        return NULL; /* the plain load first: when full, no shared write */
    size_t strbytes = 0;
    for (int j = 0; j < SY__K_COUNT; j++)
        strbytes += k->len[j] + 1u;
    struct sy__entry *e = calloc(1, sizeof *e + strbytes);
    if (!e) {
        if (counted)
            sy__series_unreserve();
        return NULL;
    }
    char *p = (char *)(e + 1);
    for (int j = 0; j < SY__K_COUNT; j++) {
        memcpy(p, k->s[j], k->len[j]);
        p[k->len[j]] = 0;
        e->s[j] = p;
        e->len[j] = k->len[j];
        p += k->len[j] + 1;
    }
    e->hash = k->hash;
    e->status = k->status;
    e->llm_failed = k->failed;
    sh->entries[n] = e;
    __atomic_store_n(&sh->n, n + 1, __ATOMIC_RELEASE);
    sh->table[i] = n + 1;
    return e;
}

static void observe(struct sy__hist *h, double v)
{
    if (v < 0)
        v = 0;
    sy__add(&h->b[sy__bucket_of(v)], 1);
    sy__addd(&h->sum_bits, v);
}

void sy_metrics_record(struct sy_metrics_shard *sh, const struct sy_metric_req *r)
{
    if (!sh || !r)
        return;
    struct key k;
    key_fill(&k, r);
    /* A worker often sees the same tuple back to back: try the last entry
     * before hashing. */
    struct sy__entry *e = sh->last;
    if (!e || !key_eq(&k, e)) {
        k.admit_checked = 0;
        k.refused = 0;
        key_hash(&k);
        e = lookup(sh, &k, 1);
        if (!e && k.refused) {
            /* over a label's cap: only the refused values become __overflow__ */
            for (int li = 0; li < SY__K_COUNT; li++)
                if (k.refused & (1u << li)) {
                    k.s[li] = sy__overflow;
                    k.len[li] = SY__OVERFLOW_LEN;
                }
            k.admit_checked = 1;
            key_hash(&k);
            e = lookup(sh, &k, 1);
            if (e)
                __atomic_store_n(&sh->overflowed, sh->overflowed + 1, __ATOMIC_RELAXED);
        }
    }
    if (!e) {
        for (int i = 0; i < SY__K_COUNT; i++) {
            if (i == SY__K_EXC_CLASS && k.len[i] == 0)
                continue; /* keep "no exception" distinct from an overflowed one */
            k.s[i] = sy__overflow;
            k.len[i] = SY__OVERFLOW_LEN;
        }
        k.admit_checked = 1;
        key_hash(&k);
        e = lookup(sh, &k, 0);
        __atomic_store_n(&sh->overflowed, sh->overflowed + 1, __ATOMIC_RELAXED);
        if (!e)
            return; /* out of memory: the record is lost, but counted above */
    }
    sh->last = e;
    sy__add(&e->requests, 1);
    if (r->cache == 1)
        sy__add(&e->cache_hits, 1);
    else if (r->cache == 2)
        sy__add(&e->cache_misses, 1);
    if (!r->llm_called)
        return;
    sy__add(&e->llm_calls, 1);
    sy__add(&e->in_tokens, r->prompt_tokens);
    sy__add(&e->out_tokens, r->completion_tokens);
    if (r->spend > 0)
        sy__addd(&e->spend_bits, r->spend);
    if (r->llm_failed)
        return;
    /* LiteLLM observes latencies from its success callback only. */
    observe(&e->h[SY__H_TOTAL], r->total_s);
    observe(&e->h[SY__H_LLM], r->llm_s);
    observe(&e->h[SY__H_OVERHEAD], r->overhead_s);
    if (r->ttft_s >= 0)
        observe(&e->h[SY__H_TTFT], r->ttft_s);
}
