/* shard.c - per-worker metric shards: init, the record path, the in-flight gauge.
 *
 * Invariants (see shard.h): one writer per shard; an entry is immutable except
 * for its counters once published; entries[0..n) are valid for readers after
 * an acquire load of n; a shard never holds more than `cap` entries, and only
 * keys whose label strings are all "__overflow__" may use the slots past
 * `max_series`, so memory per shard is bounded whatever clients send.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "metrics/metrics.h"
#include "metrics/shard.h"

const double sy__latency_buckets[SY__NBUCKETS] = {
    0.005, 0.00625, 0.0125, 0.025, 0.05, 0.1, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0,
    3.5,   4.0,     4.5,    5.0,   5.5,  6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0,
    9.5,   10.0,    15.0,   20.0,  25.0, 30.0, 60.0, 120.0, 180.0, 240.0, 300.0,
};

/* Slots past max_series for "__overflow__" keys: one per (status, failed) pair
 * at most, and statuses are clamped to 0 or 100..599. */
#define OVERFLOW_SLACK 1024
static const char OVERFLOW[] = "__overflow__";

struct sy_metrics_shard *sy__shards;
int sy__nshards;
static unsigned max_series = SY_METRICS_MAX_SERIES;
static unsigned max_label_values = SY_METRICS_MAX_LABEL_VALUES;

void sy_metrics_set_max_series(unsigned n) { max_series = n ? n : 1; }
void sy_metrics_set_max_label_values(unsigned n) { max_label_values = n ? n : 1; }

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
static const int capped[] = {SY__K_ROUTE,    SY__K_REQ_MODEL, SY__K_KEY_HASH, SY__K_KEY_ALIAS, SY__K_TEAM,
                             SY__K_TEAM_ALIAS, SY__K_USER,    SY__K_END_USER, SY__K_USER_EMAIL};
#define NCAPPED (sizeof capped / sizeof capped[0])
struct valset {
    uint64_t *slot; /* 0 = empty */
    uint32_t mask;
    uint32_t count; /* atomic */
    uint32_t limit;
};
static struct valset valsets[SY__K_COUNT];

static uint64_t value_hash(const char *p, uint32_t n)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, then never 0 */
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
    return h ? h : 1;
}

/* 1 when the value may label a new series (known, empty, or room left). */
static int value_admit(int label, const char *p, uint32_t n)
{
    struct valset *vs = &valsets[label];
    if (!vs->slot || n == 0)
        return 1;
    uint64_t h = value_hash(p, n);
    for (uint32_t i = (uint32_t)h & vs->mask, probes = 0; probes <= vs->mask; i = (i + 1) & vs->mask, probes++) {
        uint64_t cur = __atomic_load_n(&vs->slot[i], __ATOMIC_ACQUIRE);
        if (cur == h)
            return 1;
        if (cur != 0)
            continue;
        if (__atomic_load_n(&vs->count, __ATOMIC_RELAXED) >= vs->limit)
            return 0;
        uint64_t expect = 0;
        if (__atomic_compare_exchange_n(&vs->slot[i], &expect, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            __atomic_fetch_add(&vs->count, 1, __ATOMIC_RELAXED);
            return 1;
        }
        if (expect == h)
            return 1;
    }
    return 0;
}

static void valsets_free(void)
{
    for (int i = 0; i < SY__K_COUNT; i++) {
        free(valsets[i].slot);
        memset(&valsets[i], 0, sizeof valsets[i]);
    }
}

static int valsets_init(void)
{
    for (size_t k = 0; k < NCAPPED; k++) {
        struct valset *vs = &valsets[capped[k]];
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
unsigned sy_metrics_max_series(void) { return max_series; }

int sy__bucket_of(double v)
{
    /* first bound >= v (Prometheus buckets are "le"); NaN lands in +Inf */
    int lo = 0, hi = SY__NBUCKETS;
    if (!(v <= sy__latency_buckets[SY__NBUCKETS - 1]))
        return SY__NBUCKETS;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v <= sy__latency_buckets[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static void shard_free(struct sy_metrics_shard *sh)
{
    if (sh->entries)
        for (uint32_t i = 0; i < sh->n; i++)
            free(sh->entries[i]);
    free(sh->entries);
    free(sh->table);
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
    uint32_t cap = max_series + OVERFLOW_SLACK;
    uint32_t tsize = 16;
    while (tsize < cap * 2u)
        tsize *= 2;
    for (int i = 0; i < nshards; i++) {
        struct sy_metrics_shard *sh = &all[i];
        sh->table = calloc(tsize, sizeof *sh->table);
        sh->entries = calloc(cap, sizeof *sh->entries);
        if (!sh->table || !sh->entries) {
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
    uint64_t t = 0;
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
    int admit_checked; /* 0: check capped labels on insert; 1: skip; -1: a value was refused */
};

static uint32_t cut_len(const char *s)
{
    size_t n = strnlen(s, SY_METRICS_LABEL_MAX + 1);
    if (n <= SY_METRICS_LABEL_MAX)
        return (uint32_t)n;
    n = SY_METRICS_LABEL_MAX;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--; /* do not split a UTF-8 sequence */
    return (uint32_t)n;
}

/* Mix 8 bytes at a time (multiply-xorshift); the record path hashes ~200 bytes. */
static inline uint64_t mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 32);
}

static void key_hash(struct key *k)
{
    uint64_t h = 0x243F6A8885A308D3ull;
    for (int i = 0; i < SY__K_COUNT; i++) {
        const char *p = k->s[i];
        uint32_t n = k->len[i];
        for (; n >= 8; n -= 8, p += 8) {
            uint64_t v;
            memcpy(&v, p, 8);
            h = mix(h, v);
        }
        uint64_t tail = 0;
        memcpy(&tail, p, n);
        h = mix(h, tail ^ ((uint64_t)k->len[i] << 56)); /* length separates fields */
    }
    h = mix(h, (uint64_t)(k->status * 2 + k->failed));
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
        v[SY__K_EXC_CLASS] = (r->exception_class && *r->exception_class) ? r->exception_class
                                                                         : sy_status_exception_class(k->status);
    for (int i = 0; i < SY__K_COUNT; i++) {
        k->s[i] = v[i] ? v[i] : "";
        k->len[i] = cut_len(k->s[i]);
    }
}

/* Same labels? (Hashes are compared by the caller when it has one.) */
static int key_eq(const struct key *k, const struct sy__entry *e)
{
    if (e->status != k->status || e->llm_failed != k->failed)
        return 0;
    for (int i = 0; i < SY__K_COUNT; i++)
        if (e->len[i] != k->len[i] || memcmp(e->s[i], k->s[i], k->len[i]) != 0)
            return 0;
    return 1;
}

/* Find the entry for k, adding it if there is room (limit: entries allowed).
 * NULL when absent and no room, or out of memory. */
static struct sy__entry *lookup(struct sy_metrics_shard *sh, const struct key *k, uint32_t limit)
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
    if (n >= limit || n >= sh->cap)
        return NULL;
    if (k->admit_checked == 0) {
        /* a new series: every capped label value must be admitted */
        for (size_t j = 0; j < NCAPPED; j++)
            if (!value_admit(capped[j], k->s[capped[j]], k->len[capped[j]])) {
                ((struct key *)k)->admit_checked = -1; /* caller re-keys with overflow values */
                return NULL;
            }
    }
    size_t strbytes = 0;
    for (int j = 0; j < SY__K_COUNT; j++)
        strbytes += k->len[j] + 1u;
    struct sy__entry *e = calloc(1, sizeof *e + strbytes);
    if (!e)
        return NULL;
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
        key_hash(&k);
        e = lookup(sh, &k, sh->max_series);
        if (!e && k.admit_checked < 0) {
            /* over a label's cap: only the refused values become __overflow__ */
            for (size_t j = 0; j < NCAPPED; j++) {
                int li = capped[j];
                if (!value_admit(li, k.s[li], k.len[li])) {
                    k.s[li] = OVERFLOW;
                    k.len[li] = sizeof OVERFLOW - 1;
                }
            }
            k.admit_checked = 1;
            key_hash(&k);
            e = lookup(sh, &k, sh->max_series);
            if (e)
                __atomic_store_n(&sh->overflowed, sh->overflowed + 1, __ATOMIC_RELAXED);
        }
    }
    if (!e) {
        for (int i = 0; i < SY__K_COUNT; i++) {
            if (i == SY__K_EXC_CLASS && k.len[i] == 0)
                continue; /* keep "no exception" distinct from an overflowed one */
            k.s[i] = OVERFLOW;
            k.len[i] = sizeof OVERFLOW - 1;
        }
        k.admit_checked = 1;
        key_hash(&k);
        e = lookup(sh, &k, sh->cap);
        __atomic_store_n(&sh->overflowed, sh->overflowed + 1, __ATOMIC_RELAXED);
        if (!e)
            return; /* out of memory: the record is lost, but counted above */
    }
    sh->last = e;
    sy__add(&e->requests, 1);
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
