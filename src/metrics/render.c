/* render.c - /metrics: every family in Prometheus text format 0.0.4, as the
 * Python prometheus_client prints LiteLLM's metrics.
 *
 * A family is a row of the table below: name, kind, help text, label list and
 * which entries it counts. Rendering a family projects each entry of each
 * shard onto the family's labels (the rendered `a="x",b="y"` text is the
 * series key), sorts by that text and sums runs of equal keys, so the output
 * is deterministic and a series is summed across entries and shards.
 * Readers take no lock: they only load published counts and counters.
 *
 *   # HELP <name>_total <help>          counters get "_total", like the
 *   # TYPE <name>_total counter          Python client does
 *   <name>_total{labels} 3.0
 *   # HELP <name> <help>                histograms
 *   # TYPE <name> histogram
 *   <name>_bucket{labels,le="0.005"} 0.0  ... le="+Inf"
 *   <name>_count{labels} 3.0
 *   <name>_sum{labels} 0.42
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/errors.h"
#include "metrics/metrics.h"
#include "metrics/shard.h"

/* Label sources beyond the entry strings. */
enum { L_STATUS = SY__K_COUNT, L_EXC_STATUS };

struct label {
    const char *name;
    int src; /* enum sy__mkey, L_STATUS or L_EXC_STATUS */
};

enum kind { COUNTER, HISTOGRAM };

/* What an entry contributes to a family. */
enum value {
    V_REQUESTS,   /* entry->requests */
    V_LLM_CALLS,  /* entry->llm_calls */
    V_IN_TOKENS,
    V_OUT_TOKENS,
    V_ALL_TOKENS,
    V_SPEND,
    V_HIST,       /* entry->h[hist] */
};

/* Which entries a family counts. */
enum filter {
    F_ALL,        /* every request */
    F_FAILED,     /* status >= 400 */
    F_LLM,        /* made an upstream call */
    F_LLM_OK,     /* upstream call succeeded */
    F_LLM_FAILED, /* upstream call failed */
};

#define NLAB 12
struct family {
    const char *name;
    enum kind kind;
    const char *help;
    enum filter filter;
    enum value value;
    int hist; /* enum sy__hist_id when value == V_HIST */
    struct label labels[NLAB]; /* ends at name == NULL */
};

#define END_USER {"end_user", SY__K_END_USER}
#define KEY_HASH {"hashed_api_key", SY__K_KEY_HASH}
#define KEY_ALIAS {"api_key_alias", SY__K_KEY_ALIAS}
#define REQ_MODEL {"requested_model", SY__K_REQ_MODEL}
#define TEAM {"team", SY__K_TEAM}
#define TEAM_ALIAS {"team_alias", SY__K_TEAM_ALIAS}
#define USER {"user", SY__K_USER}
#define USER_EMAIL {"user_email", SY__K_USER_EMAIL}
#define MODEL {"model", SY__K_MODEL}
#define MODEL_V2 {"litellm_model_name", SY__K_MODEL}
#define MODEL_GROUP {"model_group", SY__K_REQ_MODEL}
#define MODEL_ID {"model_id", SY__K_MODEL_ID}
#define API_BASE {"api_base", SY__K_API_BASE}
#define PROVIDER {"api_provider", SY__K_PROVIDER}
#define ROUTE {"route", SY__K_ROUTE}
#define STATUS {"status_code", L_STATUS}
#define EXC_STATUS {"exception_status", L_EXC_STATUS}
#define EXC_CLASS {"exception_class", SY__K_EXC_CLASS}

/* Label lists follow LiteLLM's PrometheusMetricLabels (without client_ip and
 * user_agent, which newer releases added). */
#define LLM_CALL_LABELS END_USER, KEY_HASH, KEY_ALIAS, MODEL, TEAM, TEAM_ALIAS, USER, USER_EMAIL, MODEL_ID
#define TOKEN_LABELS END_USER, KEY_HASH, KEY_ALIAS, MODEL, TEAM, TEAM_ALIAS, USER, USER_EMAIL, REQ_MODEL, MODEL_ID
#define LLM_LATENCY_LABELS MODEL, KEY_HASH, KEY_ALIAS, TEAM, TEAM_ALIAS, REQ_MODEL, END_USER, USER, MODEL_ID
#define DEPLOY_LABELS REQ_MODEL, MODEL_V2, MODEL_ID, API_BASE, PROVIDER, KEY_HASH, KEY_ALIAS, TEAM, TEAM_ALIAS

static const struct family families[] = {
    {"litellm_proxy_failed_requests_metric", COUNTER,
     "Total number of failed responses from proxy - the client did not get a success response from litellm proxy",
     F_FAILED, V_REQUESTS, 0,
     {END_USER, KEY_HASH, KEY_ALIAS, REQ_MODEL, TEAM, TEAM_ALIAS, USER, USER_EMAIL, EXC_STATUS, EXC_CLASS, ROUTE}},
    {"litellm_proxy_total_requests_metric", COUNTER,
     "Total number of requests made to the proxy server - track number of client side requests",
     F_ALL, V_REQUESTS, 0,
     {END_USER, KEY_HASH, KEY_ALIAS, REQ_MODEL, TEAM, TEAM_ALIAS, USER, STATUS, USER_EMAIL, ROUTE}},
    {"litellm_request_total_latency_metric", HISTOGRAM, "Total latency (seconds) for a request to LiteLLM",
     F_LLM_OK, V_HIST, SY__H_TOTAL,
     {END_USER, KEY_HASH, KEY_ALIAS, REQ_MODEL, TEAM, TEAM_ALIAS, USER, MODEL, MODEL_ID}},
    {"litellm_llm_api_latency_metric", HISTOGRAM, "Total latency (seconds) for a models LLM API call",
     F_LLM_OK, V_HIST, SY__H_LLM, {LLM_LATENCY_LABELS}},
    {"litellm_llm_api_time_to_first_token_metric", HISTOGRAM, "Time to first token for a models LLM API call",
     F_LLM_OK, V_HIST, SY__H_TTFT, {LLM_LATENCY_LABELS}},
    {"litellm_spend_metric", COUNTER, "Total spend on LLM requests", F_LLM, V_SPEND, 0, {LLM_CALL_LABELS}},
    {"litellm_total_tokens_metric", COUNTER, "Total number of input + output tokens from LLM requests",
     F_LLM_OK, V_ALL_TOKENS, 0, {TOKEN_LABELS}},
    {"litellm_input_tokens_metric", COUNTER, "Total number of input tokens from LLM requests",
     F_LLM_OK, V_IN_TOKENS, 0, {TOKEN_LABELS}},
    {"litellm_output_tokens_metric", COUNTER, "Total number of output tokens from LLM requests",
     F_LLM_OK, V_OUT_TOKENS, 0, {TOKEN_LABELS}},
    {"litellm_overhead_latency_metric", HISTOGRAM, "Latency overhead (seconds) added by LiteLLM processing",
     F_LLM_OK, V_HIST, SY__H_OVERHEAD,
     {MODEL_GROUP, PROVIDER, API_BASE, MODEL_V2, KEY_HASH, KEY_ALIAS, MODEL_ID}},
    {"litellm_deployment_success_responses", COUNTER,
     "LLM Deployment Analytics - Total number of successful LLM API calls via litellm",
     F_LLM_OK, V_LLM_CALLS, 0, {DEPLOY_LABELS}},
    {"litellm_deployment_failure_responses", COUNTER,
     "LLM Deployment Analytics - Total number of failed LLM API calls for a specific LLM deploymeny. "
     "exception_status is the status of the exception from the llm api",
     F_LLM_FAILED, V_LLM_CALLS, 0,
     {REQ_MODEL, MODEL_V2, MODEL_ID, API_BASE, PROVIDER, EXC_STATUS, EXC_CLASS, KEY_HASH, KEY_ALIAS, TEAM,
      TEAM_ALIAS}},
    {"litellm_deployment_total_requests", COUNTER,
     "LLM Deployment Analytics - Total number of LLM API calls via litellm - success + failure",
     F_LLM, V_LLM_CALLS, 0, {DEPLOY_LABELS}},
    {"litellm_llm_api_failed_requests_metric", COUNTER, "deprecated - use litellm_proxy_failed_requests_metric",
     F_LLM_FAILED, V_LLM_CALLS, 0,
     {END_USER, KEY_HASH, KEY_ALIAS, MODEL, TEAM, TEAM_ALIAS, USER, MODEL_ID}},
    {"litellm_requests_metric", COUNTER,
     "deprecated - use litellm_proxy_total_requests_metric. Total number of LLM calls to litellm - track total "
     "per API Key, team, user",
     F_LLM, V_LLM_CALLS, 0, {LLM_CALL_LABELS}},
};
#define NFAMILIES (sizeof families / sizeof families[0])

/* ---- formatting ---- */

/* A float as Python's repr() prints it ("1.0", "0.00625", "1e-05", "+Inf"),
 * which is what prometheus_client writes. Returns the length. */
static int fmt_double(char *out, size_t n, double v)
{
    if (isnan(v))
        return snprintf(out, n, "NaN");
    if (isinf(v))
        return snprintf(out, n, v > 0 ? "+Inf" : "-Inf");
    if (v == floor(v) && fabs(v) < 1e16)
        return snprintf(out, n, "%.1f", v);
    int len = 0;
    for (int prec = 1; prec <= 17; prec++) {
        len = snprintf(out, n, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            break;
    }
    return len;
}

static int put_double(struct sy_buf *b, double v)
{
    char tmp[40];
    int n = fmt_double(tmp, sizeof tmp, v);
    return sy_buf_append(b, tmp, (size_t)n);
}

/* An integral count as Python prints a float holding it ("3.0"). */
static int put_count(struct sy_buf *b, uint64_t v)
{
    if (v >= (1ull << 53))
        return put_double(b, (double)v);
    return sy_buf_u64(b, v) || SY_BUF_LIT(b, ".0");
}

/* The `le` label of each bucket, as repr(float) prints LATENCY_BUCKETS. */
static const char *const le_text[SY__NBUCKETS] = {
    "0.005", "0.00625", "0.0125", "0.025", "0.05", "0.1",  "0.5",   "1.0",   "1.5",   "2.0",  "2.5",  "3.0",
    "3.5",   "4.0",     "4.5",    "5.0",   "5.5",  "6.0",  "6.5",   "7.0",   "7.5",   "8.0",  "8.5",  "9.0",
    "9.5",   "10.0",    "15.0",   "20.0",  "25.0", "30.0", "60.0",  "120.0", "180.0", "240.0", "300.0",
};

/* Label value escaping of the text format: backslash, quote, newline. */
static int put_label_value(struct sy_buf *b, const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        const char *esc = s[i] == '\\' ? "\\\\" : s[i] == '"' ? "\\\"" : s[i] == '\n' ? "\\n" : NULL;
        if (!esc)
            continue;
        if (sy_buf_append(b, s + start, i - start) || sy_buf_append(b, esc, 2))
            return SY_ENOSPC;
        start = i + 1;
    }
    return sy_buf_append(b, s + start, n - start);
}

static int put_labels(struct sy_buf *b, const struct family *f, const struct sy__entry *e)
{
    for (int i = 0; i < NLAB && f->labels[i].name; i++) {
        const struct label *l = &f->labels[i];
        if ((i && SY_BUF_LIT(b, ",")) || sy_buf_puts(b, l->name) || SY_BUF_LIT(b, "=\""))
            return SY_ENOSPC;
        int rc;
        if (l->src == L_STATUS || l->src == L_EXC_STATUS) {
            rc = sy_buf_u64(b, (uint64_t)e->status);
        } else if (e->len[l->src] == 0) {
            rc = SY_BUF_LIT(b, "None"); /* Python's str(None) */
        } else {
            rc = put_label_value(b, e->s[l->src], e->len[l->src]);
        }
        if (rc || SY_BUF_LIT(b, "\""))
            return SY_ENOSPC;
    }
    return 0;
}

/* ---- aggregation ---- */

struct item {
    size_t off, len; /* label text in the scratch buffer */
    size_t seq;      /* collection order: ties sort by it, so float sums are reproducible */
    double v;        /* counters */
    struct sy__hist h; /* histograms: buckets and sum (sum as a double here) */
};

struct scratch {
    struct sy_buf text;
    struct item *items;
    size_t n, cap;
};

/* qsort_r comparator; ctx is the scratch text (renders may run concurrently). */
static int item_cmp(const void *a, const void *b, void *ctx)
{
    const struct item *x = a, *y = b;
    const char *base = ctx;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(base + x->off, base + y->off, n);
    if (c)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

static int item_order(const void *a, const void *b, void *ctx)
{
    int c = item_cmp(a, b, ctx);
    if (c)
        return c;
    const struct item *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int entry_counts(const struct family *f, const struct sy__entry *e)
{
    switch (f->filter) {
    case F_ALL: return 1;
    case F_FAILED: return e->status >= 400;
    case F_LLM: return sy__ld(&e->llm_calls) > 0;
    case F_LLM_OK: return !e->llm_failed && sy__ld(&e->llm_calls) > 0;
    case F_LLM_FAILED: return e->llm_failed && sy__ld(&e->llm_calls) > 0;
    }
    return 0;
}

static double entry_value(const struct family *f, const struct sy__entry *e)
{
    switch (f->value) {
    case V_REQUESTS: return (double)sy__ld(&e->requests);
    case V_LLM_CALLS: return (double)sy__ld(&e->llm_calls);
    case V_IN_TOKENS: return (double)sy__ld(&e->in_tokens);
    case V_OUT_TOKENS: return (double)sy__ld(&e->out_tokens);
    case V_ALL_TOKENS: return (double)(sy__ld(&e->in_tokens) + sy__ld(&e->out_tokens));
    case V_SPEND: return sy__ldd(&e->spend_bits);
    case V_HIST: return 0;
    }
    return 0;
}

/* Collect the family's items from every shard (snapshot counts in `ns`). */
static int collect(struct scratch *sc, const struct family *f, const uint32_t *ns)
{
    sc->n = 0;
    sy_buf_reset(&sc->text);
    for (int s = 0; s < sy__nshards; s++) {
        struct sy_metrics_shard *sh = &sy__shards[s];
        for (uint32_t i = 0; i < ns[s]; i++) {
            const struct sy__entry *e = sh->entries[i];
            if (!entry_counts(f, e))
                continue;
            struct item it = {.off = sc->text.len, .seq = sc->n};
            if (f->value == V_HIST) {
                uint64_t cnt = 0;
                for (int j = 0; j <= SY__NBUCKETS; j++)
                    cnt += it.h.b[j] = sy__ld(&e->h[f->hist].b[j]);
                if (cnt == 0)
                    continue;
                double sum = sy__ldd(&e->h[f->hist].sum_bits);
                memcpy(&it.h.sum_bits, &sum, sizeof sum);
            } else {
                it.v = entry_value(f, e);
            }
            int rc = put_labels(&sc->text, f, e);
            if (rc)
                return rc;
            it.len = sc->text.len - it.off;
            if (sc->n == sc->cap) {
                size_t nc = sc->cap ? sc->cap * 2 : 256;
                struct item *ni = realloc(sc->items, nc * sizeof *ni);
                if (!ni)
                    return SY_ENOMEM;
                sc->items = ni;
                sc->cap = nc;
            }
            sc->items[sc->n++] = it;
        }
    }
    return 0;
}

/* One histogram series: cumulative buckets, +Inf, _count, _sum. Lines are
 * assembled with memcpy from a per-series prefix (this is most of /metrics). */
static int emit_histogram(struct sy_buf *out, const char *name, const char *lab, size_t ll, const uint64_t *b,
                          double sum)
{
    size_t nl = strlen(name);
    uint64_t cum = 0;
    for (int k = 0; k <= SY__NBUCKETS; k++) {
        cum += b[k];
        if (sy_buf_reserve(out, nl + ll + 96))
            return SY_ENOSPC;
        sy_buf_append(out, name, nl);
        SY_BUF_LIT(out, "_bucket{");
        sy_buf_append(out, lab, ll);
        SY_BUF_LIT(out, ",le=\"");
        sy_buf_puts(out, k < SY__NBUCKETS ? le_text[k] : "+Inf");
        SY_BUF_LIT(out, "\"} ");
        put_count(out, cum);
        SY_BUF_LIT(out, "\n");
    }
    static const char *const tails[] = {"_count{", "_sum{"};
    for (int t = 0; t < 2; t++) {
        if (sy_buf_reserve(out, nl + ll + 64))
            return SY_ENOSPC;
        sy_buf_append(out, name, nl);
        sy_buf_puts(out, tails[t]);
        sy_buf_append(out, lab, ll);
        SY_BUF_LIT(out, "} ");
        if (t == 0)
            put_count(out, cum);
        else
            put_double(out, sum);
        SY_BUF_LIT(out, "\n");
    }
    return 0;
}

static int emit_family(struct sy_buf *out, struct scratch *sc, const struct family *f)
{
    const char *suffix = f->kind == COUNTER ? "_total" : "";
    if (sy_buf_printf(out, "# HELP %s%s %s\n# TYPE %s%s %s\n", f->name, suffix, f->help, f->name, suffix,
                      f->kind == COUNTER ? "counter" : "histogram"))
        return SY_ENOSPC;
    if (sc->n > 1)
        qsort_r(sc->items, sc->n, sizeof *sc->items, item_order, sc->text.p);
    for (size_t i = 0; i < sc->n;) {
        /* merge the run of equal label texts starting at i */
        struct item acc = sc->items[i];
        double sum = 0;
        if (f->kind == HISTOGRAM)
            memcpy(&sum, &acc.h.sum_bits, sizeof sum);
        size_t j = i + 1;
        for (; j < sc->n && item_cmp(&sc->items[j], &acc, sc->text.p) == 0; j++) {
            const struct item *it = &sc->items[j];
            acc.v += it->v;
            if (f->kind == HISTOGRAM) {
                double s2;
                memcpy(&s2, &it->h.sum_bits, sizeof s2);
                sum += s2;
                for (int k = 0; k <= SY__NBUCKETS; k++)
                    acc.h.b[k] += it->h.b[k];
            }
        }
        i = j;
        const char *lab = sc->text.p + acc.off;
        int rc = 0;
        if (f->kind == COUNTER) {
            rc = sy_buf_reserve(out, strlen(f->name) + acc.len + 64);
            if (!rc) {
                sy_buf_puts(out, f->name);
                SY_BUF_LIT(out, "_total{");
                sy_buf_append(out, lab, acc.len);
                SY_BUF_LIT(out, "} ");
                put_double(out, acc.v);
                SY_BUF_LIT(out, "\n");
            }
        } else {
            rc = emit_histogram(out, f->name, lab, acc.len, acc.h.b, sum);
        }
        if (rc)
            return SY_ENOSPC;
    }
    return 0;
}

int sy_metrics_render(struct sy_buf *out)
{
    struct sy_metrics_shard *all = __atomic_load_n(&sy__shards, __ATOMIC_ACQUIRE);
    int nsh = all ? sy__nshards : 0;
    uint32_t *ns = calloc((size_t)(nsh ? nsh : 1), sizeof *ns);
    if (!ns)
        return SY_ENOMEM;
    int64_t inflight = 0;
    for (int s = 0; s < nsh; s++) {
        ns[s] = __atomic_load_n(&all[s].n, __ATOMIC_ACQUIRE);
        inflight += __atomic_load_n(&all[s].inflight, __ATOMIC_RELAXED);
    }
    struct scratch sc = {0};
    sy_buf_init(&sc.text, (size_t)1 << 30);
    int rc = 0;
    for (size_t i = 0; i < NFAMILIES && !rc; i++) {
        rc = collect(&sc, &families[i], ns);
        if (!rc)
            rc = emit_family(out, &sc, &families[i]);
    }
    if (!rc)
        rc = sy_buf_printf(out,
                           "# HELP litellm_in_flight_requests Number of HTTP requests currently in-flight\n"
                           "# TYPE litellm_in_flight_requests gauge\n"
                           "litellm_in_flight_requests %lld.0\n",
                           (long long)inflight)
                 ? SY_ENOSPC
                 : 0;
    sy_buf_free(&sc.text);
    free(sc.items);
    free(ns);
    return rc;
}
