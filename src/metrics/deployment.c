/* deployment.c - router / deployment metrics: upstream attempts, cooldowns,
 * fallbacks, guardrail checks (per-shard series) and litellm_deployment_state
 * (a small table).
 *
 * Attempts, cooldowns, fallbacks and guardrail checks are counted like
 * requests (shard.c): the
 * shard's worker is the only writer of its dentries; a record builds a key
 * (kind, ok, status and the kind's label values, each cut to
 * SY_METRICS_LABEL_MAX bytes), tries the shard's previous dentry, else one
 * hash lookup in the shard's own table, then does relaxed counter stores. A
 * new key becomes a dentry only if
 *   - every client-influenced value (requested_model, fallback_model,
 *     hashed_api_key, api_key_alias, team, team_alias) is admitted by its
 *     per-label value set (shared with the request path, so requested_model
 *     has one cap of distinct values across all families); a refused value
 *     is replaced by "__overflow__" and the key tried again;
 *   - one of the max_series series shared with the request path is free;
 *     else the event is counted under a key whose labels are all
 *     "__overflow__" (kind, ok and status kept), at most one per
 *     (kind, ok, status) per shard (SY__DEP_OVERFLOW_SLACK slots).
 * A dentry is published like an entry: pointer stored in dentries[dn], then
 * dn stored with release; renderers load dn with acquire. The latency per
 * output token histogram uses prometheus_client's default buckets, as LiteLLM
 * creates it without `buckets=`; a guardrail check's latency LiteLLM's
 * LATENCY_BUCKETS, as its litellm_guardrail_latency_seconds.
 *
 * A guardrail check (sy_metrics_guardrail) is one dentry of kind
 * SY__DK_GUARDRAIL keyed by guardrail_name, status, hook_type and error_type;
 * its `ok` is 0 when LiteLLM would count it in litellm_guardrail_errors_total
 * (status "error" with an error_type), so render.c filters on it.
 * guardrail_name and error_type have value caps of their own (names come from
 * the config, but a cap costs nothing on the record path of a known series).
 *
 * litellm_deployment_state is set rarely from any thread (the router, on a
 * state change), so it is a mutex-protected list of rows keyed by the four
 * deployment labels; a row's value is an atomic int, its strings immutable,
 * and rows live until sy_metrics_shutdown(). A renderer copies the row
 * pointers under the mutex and formats them without it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "metrics/metrics.h"
#include "metrics/shard.h"

const double sy__default_buckets[SY__NDEFBUCKETS] = {
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
};

int sy__default_bucket_of(double v)
{
    /* first bound >= v ("le"); per-token latencies are mostly under 0.1 s,
     * so an ordered scan ends within a few compares */
    int i = 0;
    while (i < SY__NDEFBUCKETS && !(v <= sy__default_buckets[i]))
        i++;
    return i;
}

/* Labels each kind has (bit per enum sy__dkey): past the series cap these
 * become "__overflow__"; the others stay empty. */
#define B(k) (1u << (k))
static const uint32_t kind_labels[] = {
    [SY__DK_ATTEMPT] = B(SY__D_REQ_MODEL) | B(SY__D_MODEL) | B(SY__D_MODEL_ID) | B(SY__D_API_BASE) | B(SY__D_PROVIDER) |
                       B(SY__D_KEY_HASH) | B(SY__D_KEY_ALIAS) | B(SY__D_TEAM) | B(SY__D_TEAM_ALIAS) |
                       B(SY__D_EXC_CLASS),
    [SY__DK_COOLDOWN] = B(SY__D_MODEL) | B(SY__D_MODEL_ID) | B(SY__D_API_BASE) | B(SY__D_PROVIDER),
    [SY__DK_FALLBACK] = B(SY__D_REQ_MODEL) | B(SY__D_FALLBACK) | B(SY__D_KEY_HASH) | B(SY__D_KEY_ALIAS) |
                        B(SY__D_TEAM) | B(SY__D_TEAM_ALIAS) | B(SY__D_EXC_CLASS),
    [SY__DK_GUARDRAIL] = B(SY__D_GUARDRAIL) | B(SY__D_GSTATUS) | B(SY__D_HOOK) | B(SY__D_ERR_TYPE),
    [SY__DK_MCP] = B(SY__D_MCP_SERVER) | B(SY__D_MCP_TOOL) | B(SY__D_GSTATUS),
};
/* Labels that stay empty past the series cap when they are empty (no
 * exception, no error): "no error" stays distinct from an overflowed one. */
static const uint32_t keep_empty = B(SY__D_EXC_CLASS) | B(SY__D_ERR_TYPE);

/* Client-influenced labels and the value set that caps each. */
static const struct {
    int label; /* enum sy__dkey */
    int set;   /* value set: enum sy__mkey index or SY__V_FALLBACK */
} capped[] = {
    {SY__D_REQ_MODEL, SY__K_REQ_MODEL}, {SY__D_FALLBACK, SY__V_FALLBACK}, {SY__D_KEY_HASH, SY__K_KEY_HASH},
    {SY__D_KEY_ALIAS, SY__K_KEY_ALIAS}, {SY__D_TEAM, SY__K_TEAM},         {SY__D_TEAM_ALIAS, SY__K_TEAM_ALIAS},
    {SY__D_GUARDRAIL, SY__V_GUARDRAIL}, {SY__D_ERR_TYPE, SY__V_GERR},     {SY__D_MCP_TOOL, SY__V_MCP_TOOL},
};
#define NCAPPED (sizeof capped / sizeof capped[0])

/* The key of one event. */
struct dkey {
    const char *s[SY__D_COUNT];
    uint32_t len[SY__D_COUNT];
    int kind, ok, status;
    uint64_t hash;
    int admit_checked; /* 1: capped values were already admitted (or replaced) */
    uint32_t refused;  /* bit per enum sy__dkey whose value was refused */
};

int sy__dep_shard_init(struct sy_metrics_shard *sh, uint32_t cap)
{
    uint32_t tsize = 16;
    while (tsize < cap * 2u)
        tsize *= 2;
    sh->dtable = calloc(tsize, sizeof *sh->dtable);
    sh->dentries = calloc(cap, sizeof *sh->dentries);
    if (!sh->dtable || !sh->dentries)
        return SY_ENOMEM; /* the caller frees the shard (sy__dep_shard_free) */
    sh->dtable_mask = tsize - 1;
    sh->dcap = cap;
    sh->dn = 0;
    sh->dlast = NULL;
    return 0;
}

void sy__dep_shard_free(struct sy_metrics_shard *sh)
{
    if (sh->dentries)
        for (uint32_t i = 0; i < sh->dn; i++)
            free(sh->dentries[i]);
    free(sh->dentries);
    free(sh->dtable);
    sh->dentries = NULL;
    sh->dtable = NULL;
    sh->dn = sh->dcap = 0;
    sh->dlast = NULL;
}

/* Status as a label value: 0 or 100..599 (bounds the overflow keys). */
static inline int clamp_status(int status)
{
    return status >= 100 && status <= 599 ? status : 0;
}

/* Set label i of k from a caller's string (NULL -> ""). */
static inline void set_label(struct dkey *k, int i, const char *v)
{
    k->s[i] = v ? v : "";
    k->len[i] = sy__cut_len(k->s[i]);
}

static inline void key_clear(struct dkey *k, int kind)
{
    for (int i = 0; i < SY__D_COUNT; i++) {
        k->s[i] = "";
        k->len[i] = 0;
    }
    k->kind = kind;
    k->ok = 0;
    k->status = 0;
}

static void key_hash(struct dkey *k)
{
    uint64_t h = sy__hash_labels(sy__hash_seed, k->s, k->len, SY__D_COUNT);
    k->hash = sy__mix(h, (uint64_t)k->status << 4 | (uint64_t)k->kind << 1 | (uint64_t)k->ok);
}

static inline int key_eq(const struct dkey *k, const struct sy__dentry *e)
{
    if (e->kind != k->kind || e->ok != k->ok || e->status != k->status)
        return 0;
    if (memcmp(e->len, k->len, sizeof k->len) != 0)
        return 0;
    for (int i = 0; i < SY__D_COUNT; i++)
        if (k->len[i] && memcmp(e->s[i], k->s[i], k->len[i]) != 0)
            return 0;
    return 1;
}

/* Find the dentry for k, adding it if there is room. A series (counted=1)
 * needs a free series slot shared by all shards and, unless admit_checked,
 * every capped value admitted (refused ones are reported in k->refused); an
 * all-"__overflow__" key (counted=0) only needs room in the shard. NULL when
 * absent and not added (or out of memory). */
static struct sy__dentry *lookup(struct sy_metrics_shard *sh, struct dkey *k, int counted)
{
    uint32_t i = (uint32_t)k->hash & sh->dtable_mask;
    for (;; i = (i + 1) & sh->dtable_mask) {
        uint32_t slot = sh->dtable[i];
        if (slot == 0)
            break;
        struct sy__dentry *e = sh->dentries[slot - 1];
        if (e->hash == k->hash && key_eq(k, e))
            return e;
    }
    uint32_t n = sh->dn; /* owner: plain read of its own count */
    if (n >= sh->dcap)
        return NULL;
    if (counted && !k->admit_checked) {
        uint32_t refused = 0;
        for (size_t j = 0; j < NCAPPED; j++) {
            int l = capped[j].label;
            if (!sy__value_admit(capped[j].set, k->s[l], k->len[l]))
                refused |= 1u << l;
        }
        if (refused) {
            k->refused = refused;
            return NULL;
        }
    }
    if (counted && !sy__series_reserve(sh->max_series))
        return NULL;
    size_t strbytes = 0;
    for (int j = 0; j < SY__D_COUNT; j++)
        strbytes += k->len[j] + 1u;
    struct sy__dentry *e = calloc(1, sizeof *e + strbytes);
    if (!e) {
        if (counted)
            sy__series_unreserve();
        return NULL;
    }
    char *p = (char *)(e + 1);
    for (int j = 0; j < SY__D_COUNT; j++) {
        memcpy(p, k->s[j], k->len[j]);
        p[k->len[j]] = 0;
        e->s[j] = p;
        e->len[j] = k->len[j];
        p += k->len[j] + 1;
    }
    e->hash = k->hash;
    e->kind = k->kind;
    e->ok = k->ok;
    e->status = k->status;
    sh->dentries[n] = e;
    __atomic_store_n(&sh->dn, n + 1, __ATOMIC_RELEASE);
    sh->dtable[i] = n + 1;
    return e;
}

/* The dentry an event with key k is counted in (see the file comment), or
 * NULL when out of memory (the event is lost but counted as overflowed). */
static struct sy__dentry *find(struct sy_metrics_shard *sh, struct dkey *k)
{
    struct sy__dentry *e = sh->dlast;
    if (e && key_eq(k, e))
        return e;
    k->admit_checked = 0;
    k->refused = 0;
    key_hash(k);
    e = lookup(sh, k, 1);
    if (!e && k->refused) {
        for (int l = 0; l < SY__D_COUNT; l++)
            if (k->refused & (1u << l)) {
                k->s[l] = sy__overflow;
                k->len[l] = SY__OVERFLOW_LEN;
            }
        k->admit_checked = 1;
        key_hash(k);
        e = lookup(sh, k, 1);
        if (e)
            __atomic_store_n(&sh->overflowed, sh->overflowed + 1, __ATOMIC_RELAXED);
    }
    if (!e) {
        for (int l = 0; l < SY__D_COUNT; l++)
            if ((kind_labels[k->kind] & (1u << l)) && (!(keep_empty & (1u << l)) || k->len[l])) {
                /* an empty exception class (success) or error type stays empty */
                k->s[l] = sy__overflow;
                k->len[l] = SY__OVERFLOW_LEN;
            }
        k->admit_checked = 1;
        key_hash(k);
        e = lookup(sh, k, 0);
        __atomic_store_n(&sh->overflowed, sh->overflowed + 1, __ATOMIC_RELAXED);
        if (!e)
            return NULL;
    }
    sh->dlast = e;
    return e;
}

/* exception_class of a failure: the caller's, else derived from the status. */
static inline const char *exc_class(const char *given, int status)
{
    return given && *given ? given : sy_status_exception_class(status);
}

void sy_metrics_attempt(struct sy_metrics_shard *sh, const struct sy_metric_attempt *a)
{
    if (!sh || !a || !sh->dentries)
        return;
    struct dkey k;
    key_clear(&k, SY__DK_ATTEMPT);
    set_label(&k, SY__D_REQ_MODEL, a->requested_model);
    set_label(&k, SY__D_MODEL, a->model);
    set_label(&k, SY__D_MODEL_ID, a->model_id);
    set_label(&k, SY__D_API_BASE, a->api_base);
    set_label(&k, SY__D_PROVIDER, a->api_provider);
    set_label(&k, SY__D_KEY_HASH, a->hashed_api_key);
    set_label(&k, SY__D_KEY_ALIAS, a->api_key_alias);
    set_label(&k, SY__D_TEAM, a->team);
    set_label(&k, SY__D_TEAM_ALIAS, a->team_alias);
    k.ok = a->ok ? 1 : 0;
    if (!k.ok) {
        k.status = clamp_status(a->status);
        set_label(&k, SY__D_EXC_CLASS, exc_class(a->exception_class, k.status));
    }
    struct sy__dentry *e = find(sh, &k);
    if (!e)
        return;
    sy__add(&e->count, 1);
    if (k.ok && a->latency_per_output_token_s >= 0) {
        /* >= 0 is false for NaN: a NaN is not observed */
        sy__add(&e->h.b[sy__default_bucket_of(a->latency_per_output_token_s)], 1);
        sy__addd(&e->h.sum_bits, a->latency_per_output_token_s);
    }
}

void sy_metrics_cooldown(struct sy_metrics_shard *sh, const char *model, const char *model_id, const char *api_base,
                         const char *api_provider, int status)
{
    if (!sh || !sh->dentries)
        return;
    struct dkey k;
    key_clear(&k, SY__DK_COOLDOWN);
    set_label(&k, SY__D_MODEL, model);
    set_label(&k, SY__D_MODEL_ID, model_id);
    set_label(&k, SY__D_API_BASE, api_base);
    set_label(&k, SY__D_PROVIDER, api_provider);
    k.status = clamp_status(status);
    struct sy__dentry *e = find(sh, &k);
    if (e)
        sy__add(&e->count, 1);
}

void sy_metrics_fallback(struct sy_metrics_shard *sh, const struct sy_metric_fallback *f)
{
    if (!sh || !f || !sh->dentries)
        return;
    struct dkey k;
    key_clear(&k, SY__DK_FALLBACK);
    set_label(&k, SY__D_REQ_MODEL, f->requested_model);
    set_label(&k, SY__D_FALLBACK, f->fallback_model);
    set_label(&k, SY__D_KEY_HASH, f->hashed_api_key);
    set_label(&k, SY__D_KEY_ALIAS, f->api_key_alias);
    set_label(&k, SY__D_TEAM, f->team);
    set_label(&k, SY__D_TEAM_ALIAS, f->team_alias);
    k.ok = f->ok ? 1 : 0;
    k.status = clamp_status(f->status);
    set_label(&k, SY__D_EXC_CLASS, exc_class(f->exception_class, k.status));
    struct sy__dentry *e = find(sh, &k);
    if (e)
        sy__add(&e->count, 1);
}

void sy_metrics_guardrail(struct sy_metrics_shard *sh, const struct sy_metric_guardrail *g)
{
    if (!sh || !g || !sh->dentries)
        return;
    struct dkey k;
    key_clear(&k, SY__DK_GUARDRAIL);
    set_label(&k, SY__D_GUARDRAIL, g->name);
    set_label(&k, SY__D_GSTATUS, g->status);
    set_label(&k, SY__D_HOOK, g->hook);
    set_label(&k, SY__D_ERR_TYPE, g->error_type);
    /* LiteLLM: litellm_guardrail_errors_total when status == "error" and error_type */
    k.ok = !(g->status && !strcmp(g->status, "error") && k.len[SY__D_ERR_TYPE]);
    struct sy__dentry *e = find(sh, &k);
    if (!e)
        return;
    sy__add(&e->count, 1);
    double v = g->latency_s >= 0 ? g->latency_s : 0; /* negative or NaN: 0 */
    sy__add(&e->h.b[sy__bucket_of(v)], 1);
    sy__addd(&e->h.sum_bits, v);
}

/* One MCP tool call (stages/mcp.c): a counter and a latency histogram
 * (LATENCY_BUCKETS) keyed by server, tool and status. The tool name comes
 * from the client (any name of an allowed server is forwarded), so it has a
 * value cap of its own. */
void sy_metrics_mcp(struct sy_metrics_shard *sh, const struct sy_metric_mcp *m)
{
    if (!sh || !m || !sh->dentries)
        return;
    struct dkey k;
    key_clear(&k, SY__DK_MCP);
    set_label(&k, SY__D_MCP_SERVER, m->server_name);
    set_label(&k, SY__D_MCP_TOOL, m->tool_name);
    set_label(&k, SY__D_GSTATUS, m->status);
    k.ok = m->status && !strcmp(m->status, "success");
    struct sy__dentry *e = find(sh, &k);
    if (!e)
        return;
    sy__add(&e->count, 1);
    double v = m->latency_s >= 0 ? m->latency_s : 0; /* negative or NaN: 0 */
    sy__add(&e->h.b[sy__bucket_of(v)], 1);
    sy__addd(&e->h.sum_bits, v);
}

/* ---- litellm_deployment_state ---- */

static pthread_mutex_t state_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sy__state_row **state_rows; /* guarded by state_mu */
static size_t state_n, state_cap;
uint64_t sy__state_dropped; /* atomic */

static const int state_labels[] = {SY__D_MODEL, SY__D_MODEL_ID, SY__D_API_BASE, SY__D_PROVIDER};
#define NSTATE_LABELS (sizeof state_labels / sizeof state_labels[0])

void sy_metrics_deployment_state(const char *model, const char *model_id, const char *api_base,
                                 const char *api_provider, int state)
{
    const char *v[NSTATE_LABELS] = {model, model_id, api_base, api_provider};
    uint32_t len[NSTATE_LABELS];
    size_t strbytes = 0;
    for (size_t j = 0; j < NSTATE_LABELS; j++) {
        if (!v[j])
            v[j] = "";
        len[j] = sy__cut_len(v[j]);
        strbytes += len[j] + 1u;
    }
    pthread_mutex_lock(&state_mu);
    for (size_t i = 0; i < state_n; i++) {
        struct sy__state_row *r = state_rows[i];
        size_t j = 0;
        for (; j < NSTATE_LABELS; j++) {
            int l = state_labels[j];
            if (r->len[l] != len[j] || memcmp(r->s[l], v[j], len[j]) != 0)
                break;
        }
        if (j == NSTATE_LABELS) {
            __atomic_store_n(&r->state, state, __ATOMIC_RELAXED);
            pthread_mutex_unlock(&state_mu);
            return;
        }
    }
    /* a new deployment: rows are bounded like series (deployments come from
     * the config; past the bound the value is dropped and counted) */
    struct sy__state_row *r = NULL;
    if (state_n < sy_metrics_max_series()) {
        if (state_n == state_cap) {
            size_t nc = state_cap ? state_cap * 2 : 16;
            struct sy__state_row **nr = realloc(state_rows, nc * sizeof *nr);
            if (nr) {
                state_rows = nr;
                state_cap = nc;
            }
        }
        if (state_n < state_cap)
            r = calloc(1, sizeof *r + strbytes);
    }
    if (!r) {
        pthread_mutex_unlock(&state_mu);
        __atomic_fetch_add(&sy__state_dropped, 1, __ATOMIC_RELAXED);
        return;
    }
    char *p = (char *)(r + 1);
    for (int l = 0; l < SY__D_COUNT; l++)
        r->s[l] = ""; /* labels a state row does not have */
    for (size_t j = 0; j < NSTATE_LABELS; j++) {
        int l = state_labels[j];
        memcpy(p, v[j], len[j]);
        p[len[j]] = 0;
        r->s[l] = p;
        r->len[l] = len[j];
        p += len[j] + 1;
    }
    r->state = state;
    state_rows[state_n++] = r;
    pthread_mutex_unlock(&state_mu);
}

struct sy__state_row **sy__state_snapshot(size_t *n)
{
    pthread_mutex_lock(&state_mu);
    struct sy__state_row **copy = NULL;
    *n = state_n;
    if (state_n) {
        copy = malloc(state_n * sizeof *copy);
        if (copy)
            memcpy(copy, state_rows, state_n * sizeof *copy);
        else
            *n = SIZE_MAX;
    }
    pthread_mutex_unlock(&state_mu);
    return copy;
}

void sy__state_free(void)
{
    pthread_mutex_lock(&state_mu);
    for (size_t i = 0; i < state_n; i++)
        free(state_rows[i]);
    free(state_rows);
    state_rows = NULL;
    state_n = state_cap = 0;
    __atomic_store_n(&sy__state_dropped, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&state_mu);
}
