/* render.c - /metrics: every family in Prometheus text format 0.0.4, as the
 * Python prometheus_client prints LiteLLM's metrics.
 *
 * A family is a row of the table below: name, kind, help text, label list and
 * which entries it counts. Its source is the shards' request entries, their
 * router/deployment dentries (deployment.c) or the deployment state rows.
 * Rendering a family projects each entry of each shard onto the family's
 * labels (the rendered `a="x",b="y"` text is the series key), sorts by that
 * text and sums runs of equal keys, so the output is deterministic and a
 * series is summed across entries and shards. Readers take no lock on the
 * shards: they only load published counts and counters; the state rows are
 * copied under their mutex (deployment.c) and formatted without it.
 *
 *   # HELP <name>_total <help>          counters get "_total", like the
 *   # TYPE <name>_total counter          Python client does
 *   <name>_total{labels} 3.0
 *   # HELP <name> <help>                histograms
 *   # TYPE <name> histogram
 *   <name>_bucket{labels,le="0.005"} 0.0  ... le="+Inf"
 *   <name>_count{labels} 3.0
 *   <name>_sum{labels} 0.42
 *   # HELP <name> <help>                gauges (litellm_deployment_state)
 *   # TYPE <name> gauge
 *   <name>{labels} 2.0
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/errors.h"
#include "core/pyrepr.h"
#include "metrics/metrics.h"
#include "metrics/shard.h"

/* Label sources beyond the entry strings (past every enum sy__mkey and
 * enum sy__dkey index). */
enum { L_STATUS = 64, L_EXC_STATUS, L_ERR_NONE };
_Static_assert((int)SY__K_COUNT < (int)L_STATUS && (int)SY__D_COUNT < (int)L_STATUS, "label sources");

struct label {
    const char *name;
    int src; /* enum sy__mkey (request families) or enum sy__dkey (the others), L_STATUS, L_EXC_STATUS or
              * L_ERR_NONE (a guardrail's error_type, "none" when it has none: LiteLLM's `error_type or "none"`) */
};

enum kind { COUNTER, HISTOGRAM, GAUGE };

/* What an entry contributes to a family. */
enum value {
    V_REQUESTS,  /* entry->requests */
    V_LLM_CALLS, /* entry->llm_calls */
    V_IN_TOKENS,
    V_OUT_TOKENS,
    V_ALL_TOKENS,
    V_SPEND,
    V_CACHE_HITS,
    V_CACHE_MISSES,
    V_HIST,  /* entry->h[hist], dentry->h */
    V_COUNT, /* dentry->count */
    V_STATE, /* state row */
};

/* Which entries a family counts. */
enum filter {
    F_ALL,        /* every request */
    F_FAILED,     /* status >= 400 */
    F_LLM,        /* made an upstream call */
    F_LLM_OK,     /* upstream call succeeded */
    F_LLM_FAILED, /* upstream call failed */
    F_CACHE_HIT,  /* answered from the response cache */
    F_CACHE_MISS, /* looked up in the cache, not found */
    /* dentries (enum sy__dkey labels) */
    F_ATTEMPT, /* every upstream attempt */
    F_ATTEMPT_OK,
    F_ATTEMPT_FAILED,
    F_COOLDOWN,
    F_FALLBACK_OK,
    F_FALLBACK_FAILED,
    F_GUARD,       /* every guardrail check */
    F_GUARD_ERROR, /* guardrail checks with status "error" and an error_type */
    F_MCP,         /* MCP tool calls (stages/mcp.c) */
    /* state rows (enum sy__dkey labels) */
    F_STATE,
};

/* Where a family's series come from. */
enum source { SRC_ENTRY, SRC_DENTRY, SRC_STATE };
static enum source source_of(enum filter f)
{
    return f >= F_STATE ? SRC_STATE : f >= F_ATTEMPT ? SRC_DENTRY : SRC_ENTRY;
}

/* Bucket layouts: LiteLLM gives its request histograms and
 * litellm_guardrail_latency_seconds LATENCY_BUCKETS, and
 * litellm_deployment_latency_per_output_token no buckets, i.e.
 * prometheus_client's DEFAULT_BUCKETS. */
enum buckets { B_LATENCY, B_DEFAULT };
static enum buckets buckets_of(enum filter f)
{
    return source_of(f) == SRC_DENTRY && f != F_GUARD && f != F_MCP ? B_DEFAULT : B_LATENCY;
}

#define NLAB 12
struct family {
    const char *name;
    enum kind kind;
    const char *help;
    enum filter filter;
    enum value value;
    int hist;                  /* enum sy__hist_id when value == V_HIST (request entries) */
    struct label labels[NLAB]; /* ends at name == NULL */
};

#define END_USER                   \
    {                              \
        "end_user", SY__K_END_USER \
    }
#define KEY_HASH                         \
    {                                    \
        "hashed_api_key", SY__K_KEY_HASH \
    }
#define KEY_ALIAS                        \
    {                                    \
        "api_key_alias", SY__K_KEY_ALIAS \
    }
#define REQ_MODEL                          \
    {                                      \
        "requested_model", SY__K_REQ_MODEL \
    }
#define TEAM               \
    {                      \
        "team", SY__K_TEAM \
    }
#define TEAM_ALIAS                     \
    {                                  \
        "team_alias", SY__K_TEAM_ALIAS \
    }
#define USER               \
    {                      \
        "user", SY__K_USER \
    }
#define USER_EMAIL                     \
    {                                  \
        "user_email", SY__K_USER_EMAIL \
    }
#define MODEL                \
    {                        \
        "model", SY__K_MODEL \
    }
#define MODEL_V2                          \
    {                                     \
        "litellm_model_name", SY__K_MODEL \
    }
#define MODEL_GROUP                    \
    {                                  \
        "model_group", SY__K_REQ_MODEL \
    }
#define MODEL_ID                   \
    {                              \
        "model_id", SY__K_MODEL_ID \
    }
#define API_BASE                   \
    {                              \
        "api_base", SY__K_API_BASE \
    }
#define PROVIDER                       \
    {                                  \
        "api_provider", SY__K_PROVIDER \
    }
#define ROUTE                \
    {                        \
        "route", SY__K_ROUTE \
    }
#define STATUS                  \
    {                           \
        "status_code", L_STATUS \
    }
#define EXC_STATUS                       \
    {                                    \
        "exception_status", L_EXC_STATUS \
    }
#define EXC_CLASS                          \
    {                                      \
        "exception_class", SY__K_EXC_CLASS \
    }

/* Label lists follow LiteLLM's PrometheusMetricLabels (without client_ip and
 * user_agent, which newer releases added). */
#define LLM_CALL_LABELS    END_USER, KEY_HASH, KEY_ALIAS, MODEL, TEAM, TEAM_ALIAS, USER, USER_EMAIL, MODEL_ID
#define TOKEN_LABELS       END_USER, KEY_HASH, KEY_ALIAS, MODEL, TEAM, TEAM_ALIAS, USER, USER_EMAIL, REQ_MODEL, MODEL_ID
#define LLM_LATENCY_LABELS MODEL, KEY_HASH, KEY_ALIAS, TEAM, TEAM_ALIAS, REQ_MODEL, END_USER, USER, MODEL_ID

/* Labels of the router / deployment families (dentry and state row strings). */
#define D_REQ_MODEL                        \
    {                                      \
        "requested_model", SY__D_REQ_MODEL \
    }
#define D_MODEL_V2                        \
    {                                     \
        "litellm_model_name", SY__D_MODEL \
    }
#define D_MODEL_ID                 \
    {                              \
        "model_id", SY__D_MODEL_ID \
    }
#define D_API_BASE                 \
    {                              \
        "api_base", SY__D_API_BASE \
    }
#define D_PROVIDER                     \
    {                                  \
        "api_provider", SY__D_PROVIDER \
    }
#define D_KEY_HASH                       \
    {                                    \
        "hashed_api_key", SY__D_KEY_HASH \
    }
#define D_KEY_ALIAS                      \
    {                                    \
        "api_key_alias", SY__D_KEY_ALIAS \
    }
#define D_TEAM             \
    {                      \
        "team", SY__D_TEAM \
    }
#define D_TEAM_ALIAS                   \
    {                                  \
        "team_alias", SY__D_TEAM_ALIAS \
    }
#define D_FALLBACK                       \
    {                                    \
        "fallback_model", SY__D_FALLBACK \
    }
#define D_EXC_CLASS                        \
    {                                      \
        "exception_class", SY__D_EXC_CLASS \
    }
/* litellm_guardrail_* (labelnames given inline in prometheus.py) */
#define G_NAME                            \
    {                                     \
        "guardrail_name", SY__D_GUARDRAIL \
    }
#define G_STATUS                \
    {                           \
        "status", SY__D_GSTATUS \
    }
#define G_ERR                        \
    {                                \
        "error_type", SY__D_ERR_TYPE \
    }
#define G_ERR_NONE               \
    {                            \
        "error_type", L_ERR_NONE \
    }
#define G_HOOK                  \
    {                           \
        "hook_type", SY__D_HOOK \
    }
/* switchyard's MCP tool calls (LiteLLM's prometheus.py has no MCP series) */
#define MCP_LABELS                                                    \
    {"server_name", SY__D_MCP_SERVER}, {"tool_name", SY__D_MCP_TOOL}, \
    {                                                                 \
        "status", SY__D_GSTATUS                                       \
    }
/* _logged_llm_labels, PrometheusMetricLabels.litellm_deployment_total_requests
 * and .litellm_deployment_successful_fallbacks (LiteLLM 1.80.11) */
#define D_LLM_LABELS    D_MODEL_V2, D_MODEL_ID, D_API_BASE, D_PROVIDER
#define D_DEPLOY_LABELS D_REQ_MODEL, D_LLM_LABELS, D_KEY_HASH, D_KEY_ALIAS, D_TEAM, D_TEAM_ALIAS
#define D_FALLBACK_LABELS \
    D_REQ_MODEL, D_FALLBACK, D_KEY_HASH, D_KEY_ALIAS, D_TEAM, D_TEAM_ALIAS, EXC_STATUS, D_EXC_CLASS

static const struct family families[] = {
    {"litellm_proxy_failed_requests_metric",
     COUNTER,
     "Total number of failed responses from proxy - the client did not get a success response from litellm proxy",
     F_FAILED,
     V_REQUESTS,
     0,
     {END_USER, KEY_HASH, KEY_ALIAS, REQ_MODEL, TEAM, TEAM_ALIAS, USER, USER_EMAIL, EXC_STATUS, EXC_CLASS, ROUTE}},
    {"litellm_proxy_total_requests_metric",
     COUNTER,
     "Total number of requests made to the proxy server - track number of client side requests",
     F_ALL,
     V_REQUESTS,
     0,
     {END_USER, KEY_HASH, KEY_ALIAS, REQ_MODEL, TEAM, TEAM_ALIAS, USER, STATUS, USER_EMAIL, ROUTE}},
    {"litellm_request_total_latency_metric",
     HISTOGRAM,
     "Total latency (seconds) for a request to LiteLLM",
     F_LLM_OK,
     V_HIST,
     SY__H_TOTAL,
     {END_USER, KEY_HASH, KEY_ALIAS, REQ_MODEL, TEAM, TEAM_ALIAS, USER, MODEL, MODEL_ID}},
    {"litellm_llm_api_latency_metric",
     HISTOGRAM,
     "Total latency (seconds) for a models LLM API call",
     F_LLM_OK,
     V_HIST,
     SY__H_LLM,
     {LLM_LATENCY_LABELS}},
    {"litellm_llm_api_time_to_first_token_metric",
     HISTOGRAM,
     "Time to first token for a models LLM API call",
     F_LLM_OK,
     V_HIST,
     SY__H_TTFT,
     {LLM_LATENCY_LABELS}},
    {"litellm_spend_metric", COUNTER, "Total spend on LLM requests", F_LLM, V_SPEND, 0, {LLM_CALL_LABELS}},
    {"litellm_total_tokens_metric",
     COUNTER,
     "Total number of input + output tokens from LLM requests",
     F_LLM_OK,
     V_ALL_TOKENS,
     0,
     {TOKEN_LABELS}},
    {"litellm_input_tokens_metric",
     COUNTER,
     "Total number of input tokens from LLM requests",
     F_LLM_OK,
     V_IN_TOKENS,
     0,
     {TOKEN_LABELS}},
    {"litellm_output_tokens_metric",
     COUNTER,
     "Total number of output tokens from LLM requests",
     F_LLM_OK,
     V_OUT_TOKENS,
     0,
     {TOKEN_LABELS}},
    {"litellm_overhead_latency_metric",
     HISTOGRAM,
     "Latency overhead (seconds) added by LiteLLM processing",
     F_LLM_OK,
     V_HIST,
     SY__H_OVERHEAD,
     {MODEL_GROUP, PROVIDER, API_BASE, MODEL_V2, KEY_HASH, KEY_ALIAS, MODEL_ID}},
    /* guardrail checks, registered as LiteLLM does after the overhead latency */
    {"litellm_guardrail_latency_seconds",
     HISTOGRAM,
     "Latency (seconds) for guardrail execution",
     F_GUARD,
     V_HIST,
     0,
     {G_NAME, G_STATUS, G_ERR_NONE, G_HOOK}},
    {"litellm_guardrail_errors",
     COUNTER,
     "Total number of errors encountered during guardrail execution",
     F_GUARD_ERROR,
     V_COUNT,
     0,
     {G_NAME, G_ERR, G_HOOK}},
    {"litellm_guardrail_requests",
     COUNTER,
     "Total number of guardrail invocations",
     F_GUARD,
     V_COUNT,
     0,
     {G_NAME, G_STATUS, G_HOOK}},
    {"litellm_deployment_state",
     GAUGE,
     "LLM Deployment Analytics - The state of the deployment: 0 = healthy, 1 = partial outage, 2 = complete "
     "outage",
     F_STATE,
     V_STATE,
     0,
     {D_LLM_LABELS}},
    {"litellm_deployment_cooled_down",
     COUNTER,
     "LLM Deployment Analytics - Number of times a deployment has been cooled down by LiteLLM load balancing "
     "logic. exception_status is the status of the exception that caused the deployment to be cooled down",
     F_COOLDOWN,
     V_COUNT,
     0,
     {D_LLM_LABELS, EXC_STATUS}},
    {"litellm_deployment_success_responses",
     COUNTER,
     "LLM Deployment Analytics - Total number of successful LLM API calls via litellm",
     F_ATTEMPT_OK,
     V_COUNT,
     0,
     {D_DEPLOY_LABELS}},
    {"litellm_deployment_failure_responses",
     COUNTER,
     "LLM Deployment Analytics - Total number of failed LLM API calls for a specific LLM deploymeny. "
     "exception_status is the status of the exception from the llm api",
     F_ATTEMPT_FAILED,
     V_COUNT,
     0,
     {D_REQ_MODEL, D_LLM_LABELS, EXC_STATUS, D_EXC_CLASS, D_KEY_HASH, D_KEY_ALIAS, D_TEAM, D_TEAM_ALIAS}},
    {"litellm_deployment_total_requests",
     COUNTER,
     "LLM Deployment Analytics - Total number of LLM API calls via litellm - success + failure",
     F_ATTEMPT,
     V_COUNT,
     0,
     {D_DEPLOY_LABELS}},
    {"litellm_deployment_latency_per_output_token",
     HISTOGRAM,
     "LLM Deployment Analytics - Latency per output token",
     F_ATTEMPT_OK,
     V_HIST,
     0,
     {D_LLM_LABELS, D_KEY_HASH, D_KEY_ALIAS, D_TEAM, D_TEAM_ALIAS}},
    {"litellm_deployment_successful_fallbacks",
     COUNTER,
     "LLM Deployment Analytics - Number of successful fallback requests from primary model -> fallback model",
     F_FALLBACK_OK,
     V_COUNT,
     0,
     {D_FALLBACK_LABELS}},
    {"litellm_deployment_failed_fallbacks",
     COUNTER,
     "LLM Deployment Analytics - Number of failed fallback requests from primary model -> fallback model",
     F_FALLBACK_FAILED,
     V_COUNT,
     0,
     {D_FALLBACK_LABELS}},
    {"litellm_llm_api_failed_requests_metric",
     COUNTER,
     "deprecated - use litellm_proxy_failed_requests_metric",
     F_LLM_FAILED,
     V_LLM_CALLS,
     0,
     {END_USER, KEY_HASH, KEY_ALIAS, MODEL, TEAM, TEAM_ALIAS, USER, MODEL_ID}},
    {"litellm_cache_hits_metric",
     COUNTER,
     "Total number of LiteLLM cache hits",
     F_CACHE_HIT,
     V_CACHE_HITS,
     0,
     {REQ_MODEL, KEY_HASH, KEY_ALIAS, TEAM, TEAM_ALIAS, END_USER, USER}},
    {"litellm_cache_misses_metric",
     COUNTER,
     "Total number of LiteLLM cache misses",
     F_CACHE_MISS,
     V_CACHE_MISSES,
     0,
     {REQ_MODEL, KEY_HASH, KEY_ALIAS, TEAM, TEAM_ALIAS, END_USER, USER}},
    {"litellm_requests_metric",
     COUNTER,
     "deprecated - use litellm_proxy_total_requests_metric. Total number of LLM calls to litellm - track total "
     "per API Key, team, user",
     F_LLM,
     V_LLM_CALLS,
     0,
     {LLM_CALL_LABELS}},
    /* switchyard's MCP tool calls, after LiteLLM's families */
    {"litellm_mcp_tool_calls",
     COUNTER,
     "Total number of MCP tool calls made through the gateway",
     F_MCP,
     V_COUNT,
     0,
     {MCP_LABELS}},
    {"litellm_mcp_tool_call_latency_seconds",
     HISTOGRAM,
     "Latency (seconds) of MCP tool calls made through the gateway",
     F_MCP,
     V_HIST,
     0,
     {MCP_LABELS}},
};
#define NFAMILIES (sizeof families / sizeof families[0])

/* ---- formatting ---- */

/* A float as Python's repr() prints it ("1.0", "0.00625", "1e-05"), which
 * is what prometheus_client writes, except +Inf, -Inf and NaN (its
 * floatToGoString). */
static int put_double(struct sy_buf *b, double v)
{
    if (isnan(v))
        return SY_BUF_LIT(b, "NaN");
    if (isinf(v))
        return v > 0 ? SY_BUF_LIT(b, "+Inf") : SY_BUF_LIT(b, "-Inf");
    return sy_py_float_repr(b, v);
}

/* An integral count as Python prints a float holding it ("3.0"). */
static int put_count(struct sy_buf *b, uint64_t v)
{
    if (v >= (1ull << 53))
        return put_double(b, (double)v);
    return sy_buf_u64(b, v) || SY_BUF_LIT(b, ".0");
}

/* The `le` label of each bucket, as repr(float) prints LATENCY_BUCKETS and
 * prometheus_client's DEFAULT_BUCKETS; then +Inf. */
static const char *const le_text[SY__NBUCKETS + 1] = {
    "0.005", "0.00625", "0.0125", "0.025", "0.05", "0.1",  "0.5",  "1.0",   "1.5",   "2.0",   "2.5",   "3.0",
    "3.5",   "4.0",     "4.5",    "5.0",   "5.5",  "6.0",  "6.5",  "7.0",   "7.5",   "8.0",   "8.5",   "9.0",
    "9.5",   "10.0",    "15.0",   "20.0",  "25.0", "30.0", "60.0", "120.0", "180.0", "240.0", "300.0", "+Inf",
};
static const char *const le_default_text[SY__NDEFBUCKETS + 1] = {
    "0.005", "0.01", "0.025", "0.05", "0.075", "0.1", "0.25", "0.5", "0.75", "1.0", "2.5", "5.0", "7.5", "10.0", "+Inf",
};
/* Buckets of a layout, +Inf included. */
static int nbuckets(enum buckets b)
{
    return b == B_DEFAULT ? SY__NDEFBUCKETS + 1 : SY__NBUCKETS + 1;
}

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

/* The family's label text for one entry, dentry or state row: its strings
 * (indexed by the labels' src), and its status. */
static int put_labels(struct sy_buf *b, const struct family *f, const char *const *s, const uint32_t *len, int status)
{
    for (int i = 0; i < NLAB && f->labels[i].name; i++) {
        const struct label *l = &f->labels[i];
        if ((i && SY_BUF_LIT(b, ",")) || sy_buf_puts(b, l->name) || SY_BUF_LIT(b, "=\""))
            return SY_ENOSPC;
        int rc;
        if (l->src == L_ERR_NONE) {
            rc = len[SY__D_ERR_TYPE] ? put_label_value(b, s[SY__D_ERR_TYPE], len[SY__D_ERR_TYPE])
                                     : SY_BUF_LIT(b, "none");
        } else if (l->src == L_EXC_STATUS && status == 0) {
            rc = SY_BUF_LIT(b, "None"); /* LiteLLM: str(getattr(exc, "status_code", None)) */
        } else if (l->src == L_STATUS || l->src == L_EXC_STATUS) {
            rc = sy_buf_u64(b, (uint64_t)status);
        } else if (len[l->src] == 0) {
            rc = SY_BUF_LIT(b, "None"); /* Python's str(None) */
        } else {
            rc = put_label_value(b, s[l->src], len[l->src]);
        }
        if (rc || SY_BUF_LIT(b, "\""))
            return SY_ENOSPC;
    }
    return 0;
}

/* ---- aggregation ---- */

struct item {
    size_t off, len;   /* label text in the scratch buffer */
    size_t seq;        /* collection order: ties sort by it, so float sums are reproducible */
    double v;          /* counters */
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
    case F_CACHE_HIT: return sy__ld(&e->cache_hits) > 0;
    case F_CACHE_MISS: return sy__ld(&e->cache_misses) > 0;
    default: return 0;
    }
}

static int dentry_counts(const struct family *f, const struct sy__dentry *e)
{
    switch (f->filter) {
    case F_ATTEMPT: return e->kind == SY__DK_ATTEMPT;
    case F_ATTEMPT_OK: return e->kind == SY__DK_ATTEMPT && e->ok;
    case F_ATTEMPT_FAILED: return e->kind == SY__DK_ATTEMPT && !e->ok;
    case F_COOLDOWN: return e->kind == SY__DK_COOLDOWN;
    case F_FALLBACK_OK: return e->kind == SY__DK_FALLBACK && e->ok;
    case F_FALLBACK_FAILED: return e->kind == SY__DK_FALLBACK && !e->ok;
    case F_GUARD: return e->kind == SY__DK_GUARDRAIL;
    case F_GUARD_ERROR: return e->kind == SY__DK_GUARDRAIL && !e->ok;
    case F_MCP: return e->kind == SY__DK_MCP;
    default: return 0;
    }
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
    case V_CACHE_HITS: return (double)sy__ld(&e->cache_hits);
    case V_CACHE_MISSES: return (double)sy__ld(&e->cache_misses);
    default: return 0;
    }
}

/* What a render reads: each shard's published counts, loaded once at the
 * start (acquire), and the state rows. */
struct snapshot {
    uint32_t *ns, *dns;
    struct sy__state_row **rows;
    size_t nrows;
};

/* Append one item: the label text of (s, len, status) and its value, or its
 * histogram h (skipped when it has no observation). */
static int add_item(struct scratch *sc, const struct family *f, const char *const *s, const uint32_t *len, int status,
                    double v, const struct sy__hist *h)
{
    struct item it = {.off = sc->text.len, .seq = sc->n, .v = v};
    if (h) {
        uint64_t cnt = 0;
        for (int j = 0; j < nbuckets(buckets_of(f->filter)); j++)
            cnt += it.h.b[j] = sy__ld(&h->b[j]);
        if (cnt == 0)
            return 0;
        double sum = sy__ldd(&h->sum_bits);
        memcpy(&it.h.sum_bits, &sum, sizeof sum);
    }
    int rc = put_labels(&sc->text, f, s, len, status);
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
    return 0;
}

/* Collect the family's items from every shard (counts from the snapshot). */
static int collect(struct scratch *sc, const struct family *f, const struct snapshot *snap)
{
    sc->n = 0;
    sy_buf_reset(&sc->text);
    int rc = 0;
    enum source src = source_of(f->filter);
    if (src == SRC_STATE) {
        for (size_t i = 0; i < snap->nrows && !rc; i++) {
            const struct sy__state_row *r = snap->rows[i];
            rc = add_item(sc, f, r->s, r->len, 0, (double)__atomic_load_n(&r->state, __ATOMIC_RELAXED), NULL);
        }
        return rc;
    }
    for (int s = 0; s < sy__nshards && !rc; s++) {
        struct sy_metrics_shard *sh = &sy__shards[s];
        if (src == SRC_DENTRY) {
            for (uint32_t i = 0; i < snap->dns[s] && !rc; i++) {
                const struct sy__dentry *e = sh->dentries[i];
                if (dentry_counts(f, e))
                    rc = add_item(sc, f, e->s, e->len, e->status, (double)sy__ld(&e->count),
                                  f->value == V_HIST ? &e->h : NULL);
            }
            continue;
        }
        for (uint32_t i = 0; i < snap->ns[s] && !rc; i++) {
            const struct sy__entry *e = sh->entries[i];
            if (entry_counts(f, e))
                rc = add_item(sc, f, e->s, e->len, e->status, entry_value(f, e),
                              f->value == V_HIST ? &e->h[f->hist] : NULL);
        }
    }
    return rc;
}

/* One histogram series: cumulative buckets, +Inf, _count, _sum. Lines are
 * assembled with memcpy from a per-series prefix (this is most of /metrics). */
static int emit_histogram(struct sy_buf *out, const char *name, enum buckets layout, const char *lab, size_t ll,
                          const uint64_t *b, double sum)
{
    size_t nl = strlen(name);
    uint64_t cum = 0;
    const char *const *le = layout == B_DEFAULT ? le_default_text : le_text;
    for (int k = 0; k < nbuckets(layout); k++) {
        cum += b[k];
        if (sy_buf_reserve(out, nl + ll + 96))
            return SY_ENOSPC;
        sy_buf_append(out, name, nl);
        SY_BUF_LIT(out, "_bucket{");
        sy_buf_append(out, lab, ll);
        SY_BUF_LIT(out, ",le=\"");
        sy_buf_puts(out, le[k]);
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
    static const char *const type[] = {[COUNTER] = "counter", [HISTOGRAM] = "histogram", [GAUGE] = "gauge"};
    const char *suffix = f->kind == COUNTER ? "_total" : "";
    if (sy_buf_printf(out, "# HELP %s%s %s\n# TYPE %s%s %s\n", f->name, suffix, f->help, f->name, suffix,
                      type[f->kind]))
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
                for (int k = 0; k < nbuckets(buckets_of(f->filter)); k++)
                    acc.h.b[k] += it->h.b[k];
            }
        }
        i = j;
        const char *lab = sc->text.p + acc.off;
        int rc = 0;
        if (f->kind != HISTOGRAM) {
            rc = sy_buf_reserve(out, strlen(f->name) + acc.len + 64);
            if (!rc) {
                sy_buf_puts(out, f->name);
                sy_buf_puts(out, suffix);
                SY_BUF_LIT(out, "{");
                sy_buf_append(out, lab, acc.len);
                SY_BUF_LIT(out, "} ");
                put_double(out, acc.v);
                SY_BUF_LIT(out, "\n");
            }
        } else {
            rc = emit_histogram(out, f->name, buckets_of(f->filter), lab, acc.len, acc.h.b, sum);
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
    struct snapshot snap = {0};
    snap.ns = calloc((size_t)(nsh ? nsh : 1) * 2, sizeof *snap.ns);
    if (!snap.ns)
        return SY_ENOMEM;
    snap.dns = snap.ns + (nsh ? nsh : 1);
    int64_t inflight = 0;
    for (int s = 0; s < nsh; s++) {
        snap.ns[s] = __atomic_load_n(&all[s].n, __ATOMIC_ACQUIRE);
        snap.dns[s] = __atomic_load_n(&all[s].dn, __ATOMIC_ACQUIRE);
        inflight += __atomic_load_n(&all[s].inflight, __ATOMIC_RELAXED);
    }
    snap.rows = sy__state_snapshot(&snap.nrows);
    if (snap.nrows == SIZE_MAX) {
        free(snap.ns);
        return SY_ENOMEM;
    }
    struct scratch sc = {0};
    sy_buf_init(&sc.text, (size_t)1 << 30);
    int rc = 0;
    for (size_t i = 0; i < NFAMILIES && !rc; i++) {
        rc = collect(&sc, &families[i], &snap);
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
    free(snap.rows);
    free(snap.ns);
    return rc;
}
