/* metrics.h - Prometheus metrics with LiteLLM's names, counted per worker without locks.
 *
 * Each worker owns one shard and is its only writer; sy_metrics_render() sums
 * all shards when /metrics is scraped (readers see each counter atomically).
 * Series are keyed by their label values; a shard adds a new series rarely
 * (first request for a model group/status) and publishes it safely to readers.
 */
#ifndef SY_METRICS_H
#define SY_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct sy_buf;
struct sy_metrics_shard;

/* One finished request, as the gateway saw it. Strings may be NULL (-> ""). */
struct sy_metric_req {
    const char *route;           /* "/v1/chat/completions" */
    const char *requested_model; /* model group asked for */
    const char *model;           /* upstream model of the deployment used ("" when none) */
    const char *model_id;        /* deployment id */
    const char *api_provider;    /* "openai", "azure", "mock" ... */
    const char *api_base;
    const char *hashed_api_key;  /* sha256 of the key used, "" when none */
    int status;                  /* HTTP status sent to the client */
    int llm_called;              /* 1 when an upstream/mock call was made (litellm_requests_metric etc.;
                                    litellm_deployment_* counts come from sy_metrics_attempt) */
    int llm_failed;              /* 1 when that call failed */
    const char *exception_class; /* for failed requests, e.g. "RateLimitError" (may be NULL) */
    double total_s;              /* request received -> response finished */
    double llm_s;                /* upstream call duration (0 when none) */
    double ttft_s;               /* time to first token for streams (< 0 when not a stream) */
    double overhead_s;           /* total - llm */
    uint64_t prompt_tokens, completion_tokens;
    double spend; /* USD, 0 when unknown */
    int cache;    /* response cache: 0 not looked up, 1 hit, 2 miss */
    /* Identity labels from auth (added; NULL or "" is rendered as "None", as
     * LiteLLM's Python client renders a missing value). */
    const char *api_key_alias;
    const char *team, *team_alias;
    const char *user, *user_email;
    const char *end_user; /* the request body's "user" */
};

/* Create n shards (call once, before workers start). 0 or SY_ENOMEM.
 * Calling it again without sy_metrics_shutdown() in between is SY_EINVAL. */
int sy_metrics_init(int nshards);
/* Shard i (0 <= i < nshards), or NULL when out of range / not initialised.
 * The shard belongs to one worker thread: only that thread may pass it to
 * sy_metrics_record() (the record path takes no lock). */
struct sy_metrics_shard *sy_metrics_shard(int i);
/* Count one finished request. Copies what it keeps (label strings are cut to
 * SY_METRICS_LABEL_MAX bytes); the caller's strings may die after the call.
 * A value of a capped label beyond sy_metrics_max_label_values() distinct ones
 * is counted as "__overflow__"; past sy_metrics_max_series() label tuples (all
 * shards together) a new tuple is counted with every string label
 * "__overflow__". Never blocks, never takes a lock. s NULL: no-op. */
void sy_metrics_record(struct sy_metrics_shard *s, const struct sy_metric_req *r);
/* In-flight gauge (litellm_in_flight_requests): +1 at request start, -1 at end.
 * Atomic add, so any thread may call it. */
void sy_metrics_inflight(struct sy_metrics_shard *s, int delta);
/* Render every metric in Prometheus text format 0.0.4. 0 or SY_ENOSPC
 * (SY_ENOMEM if scratch memory runs out). Appends to out. Any thread, any
 * time between init and shutdown; never blocks the writers. */
int sy_metrics_render(struct sy_buf *out);

/* ---- router / deployment metrics (LiteLLM's prometheus.py names and labels) ----
 *
 * One upstream attempt (a retry or fallback is another attempt; LiteLLM counts
 * these from its per-call success/failure callbacks): counts
 *   litellm_deployment_total_requests, and litellm_deployment_success_responses
 *   or litellm_deployment_failure_responses (+exception_status, exception_class),
 *   labels requested_model, litellm_model_name, model_id, api_base, api_provider,
 *   hashed_api_key, api_key_alias, team, team_alias;
 * and on success with latency_per_output_token_s >= 0 the histogram
 *   litellm_deployment_latency_per_output_token (labels litellm_model_name,
 *   model_id, api_base, api_provider, hashed_api_key, api_key_alias, team, team_alias).
 * These three counters come only from sy_metrics_attempt (sy_metrics_record
 * does not count them), so the gateway calls it once per upstream attempt,
 * including the only attempt of a request without retries.
 * Same shard rules and caps as sy_metrics_record: only the shard's worker
 * calls it, no lock, no allocation once the series exists; requested_model,
 * hashed_api_key, api_key_alias, team and team_alias are subject to the
 * per-label value caps (shared with the request labels of the same name).
 * Strings may be NULL (rendered "None"); they are copied. */
struct sy_metric_attempt {
    const char *requested_model;
    const char *model; /* litellm_model_name: the deployment's litellm_params.model */
    const char *model_id, *api_base, *api_provider;
    const char *hashed_api_key, *api_key_alias, *team, *team_alias;
    int ok;
    int status;                        /* exception_status when !ok (0 or out of 100..599: "None") */
    const char *exception_class;       /* when !ok; NULL: derived from status (sy_status_exception_class) */
    double latency_per_output_token_s; /* seconds per output token; < 0 or NaN: not observed (LiteLLM: latency
                                          (ttft for streams) / completion tokens, when tokens > 0) */
};
void sy_metrics_attempt(struct sy_metrics_shard *s, const struct sy_metric_attempt *a);
/* litellm_deployment_cooled_down (counter): labels litellm_model_name, model_id,
 * api_base, api_provider, exception_status. Worker thread of shard s only,
 * as sy_metrics_record. */
void sy_metrics_cooldown(struct sy_metrics_shard *s, const char *model, const char *model_id, const char *api_base,
                         const char *api_provider, int status);
/* litellm_deployment_successful_fallbacks / litellm_deployment_failed_fallbacks
 * (counters): labels requested_model, fallback_model, hashed_api_key,
 * api_key_alias, team, team_alias, exception_status, exception_class (of the
 * error that triggered the fallback). LiteLLM counts one per fallback group
 * tried: ok when that group answered. Worker thread of shard s only; the
 * client-influenced labels (all but the exception ones) are capped like
 * sy_metrics_record's (fallback_model has a cap of its own). */
struct sy_metric_fallback {
    int ok;                      /* the fallback group answered */
    const char *requested_model; /* the original model group */
    const char *fallback_model;  /* the fallback group tried */
    const char *hashed_api_key, *api_key_alias, *team, *team_alias;
    int status;                  /* exception_status of the triggering error */
    const char *exception_class; /* of the triggering error; NULL: derived from status */
};
void sy_metrics_fallback(struct sy_metrics_shard *s, const struct sy_metric_fallback *f);
/* litellm_deployment_state (gauge, 0 healthy, 1 partial outage, 2 complete
 * outage): labels litellm_model_name, model_id, api_base, api_provider. The
 * last value set wins; any thread may set it, at any time (also before
 * sy_metrics_init); it takes a mutex (rare: state changes only). At most
 * sy_metrics_max_series() label tuples are kept; a value for a further one is
 * dropped and counted in sy_metrics_overflowed(). Kept until
 * sy_metrics_shutdown(). */
void sy_metrics_deployment_state(const char *model, const char *model_id, const char *api_base,
                                 const char *api_provider, int state);

/* Longest label value kept, in bytes (longer ones are cut at a UTF-8 boundary). */
#define SY_METRICS_LABEL_MAX 256
/* Default bound on distinct label tuples, all shards together (OpenTelemetry's
 * default cardinality limit per metric is 2000): requests, attempts,
 * cooldowns, fallbacks and guardrail checks share it. Env SWITCHYARD_METRICS_MAX_SERIES. */
#define SY_METRICS_MAX_SERIES 2000
/* Default bound on distinct values of each client-influenced label (route,
 * requested_model, end_user, user, user_email, hashed_api_key, api_key_alias,
 * team, team_alias, fallback_model, guardrail_name, a guardrail's
 * error_type), across all shards: later new values are
 * rendered as "__overflow__". Env SWITCHYARD_METRICS_MAX_LABEL_VALUES. */
#define SY_METRICS_MAX_LABEL_VALUES 100
/* One guardrail check (stages/guardrails.c), LiteLLM's three series:
 *   litellm_guardrail_requests_total{guardrail_name, status, hook_type}
 *   litellm_guardrail_latency_seconds{guardrail_name, status, error_type, hook_type} (histogram)
 *   litellm_guardrail_errors_total{guardrail_name, error_type, hook_type} (status "error" only)
 * status: "success" (passed), "blocked", "masked" or "error"; hook_type: "pre_call",
 * "during_call", "post_call"; error_type: "" unless status is "error" (then e.g.
 * "timeout", "http_500", "bad_response"). Same rules as sy_metrics_record.
 * Rendered as LiteLLM's PrometheusLogger._record_guardrail_metrics records
 * them: the latency histogram (LATENCY_BUCKETS) labels error_type "none"
 * when there is none; errors_total counts status "error" with an error_type
 * only. A negative or NaN latency is observed as 0. */
struct sy_metric_guardrail {
    const char *name, *hook, *status, *error_type;
    double latency_s;
};
void sy_metrics_guardrail(struct sy_metrics_shard *s, const struct sy_metric_guardrail *g);
/* One MCP tool call through the gateway (stages/mcp.c):
 *   litellm_mcp_tool_calls_total{server_name, tool_name, status}
 *   litellm_mcp_tool_call_latency_seconds{server_name, tool_name, status} (histogram, LATENCY_BUCKETS)
 * status "success" or "error"; tool_name is the bare name and has a value cap
 * of its own. Same rules as sy_metrics_record. */
struct sy_metric_mcp {
    const char *server_name, *tool_name, *status;
    double latency_s;
};
void sy_metrics_mcp(struct sy_metrics_shard *s, const struct sy_metric_mcp *m);

/* Change the per-label bound for the next sy_metrics_init(). n >= 1. */
void sy_metrics_set_max_label_values(unsigned n);
/* Change the series bound (all shards together) for the next
 * sy_metrics_init() (tests use small values). n >= 1. The environment
 * variables, when set, win over these at init. */
void sy_metrics_set_max_series(unsigned n);
unsigned sy_metrics_max_series(void);
unsigned sy_metrics_max_label_values(void);
/* Label tuples held now, all shards (a relaxed snapshot; any thread). The
 * /metrics handler uses it to decide whether rendering goes to a pool thread. */
size_t sy_metrics_series(void);
/* Pages of up to this many series are rendered on the worker's loop (< ~0.5 ms
 * on the development machine); larger ones on a pool thread. */
#define SY_METRICS_INLINE_SERIES 8
/* Records counted under "__overflow__" so far, all shards. */
uint64_t sy_metrics_overflowed(void);
/* Free all shards. Only when no worker records and no render runs. */
void sy_metrics_shutdown(void);

/* JSON access log: one line per request, written by a background thread
 * (never on the request path). Off unless opened. path "-" means stderr. */
/* 0, SY_EINVAL (already open), or SY_EINTERNAL (open/thread failed; logged).
 * The file is opened O_APPEND|O_CREAT. Call before workers start. */
int sy_accesslog_open(const char *path);
/* Queue one line (the record is formatted by the caller's thread into a small
 * buffer, then handed over; drops and counts lines if the queue is full). */
void sy_accesslog_write(const struct sy_metric_req *r, const char *call_id, const char *deployment);
void sy_accesslog_close(void);
/* Lines dropped so far (queue full or write errors). */
uint64_t sy_accesslog_dropped(void);

#endif
