/* logging.h - LiteLLM's logging callbacks, never on the request path (issue 22).
 *
 * The request path's part is one call: at the end of a call the log stage
 * (stages/log.c) fills a struct sy_logrec with borrowed pointers and hands it
 * to sy_log_submit(), which deep-copies it into one allocation and appends it
 * to the logging thread's inbox under a short mutex. No I/O, no JSON, no
 * syscall per record (the thread is woken only when the inbox passes a
 * threshold; otherwise its batch timer finds the records).
 *
 * The logging thread (engine.c) runs its own libuv loop and its own upstream
 * pool (upstream/client.h). For each record it builds LiteLLM's
 * StandardLoggingPayload once (payload.c, sy_log_payload), lazily, the first
 * time a sink asks for it, and offers the record to every sink instance the
 * record is routed to:
 *   - the config's sinks (litellm_settings.success_callback / failure_callback
 *     / callbacks), each sink taking successes, failures or both;
 *   - or, when the key's metadata.logging or the team's default_team_settings
 *     name their own (per-tenant Langfuse keys), instances opened on demand
 *     for those settings (rec->route_json), at most SY_LOG_MAX_INSTANCES.
 *
 * Each sink instance has a bounded queue (records referenced, not copied),
 * batches by count (ops->max_batch) and age (batch_interval_s), sends through
 * the pool, retries with exponential back-off and jitter up to max_retries,
 * and counts what it drops: litellm_callback_logging_failures_metric{callback_name}
 * plus switchyard_callback_{queue_depth,sent,retried,dropped}{callback_name}
 * in /metrics, and the same in /health/readiness. A drop is logged at most
 * once per interval per sink. A sink that hangs is cut by its request timeout;
 * a sink that refuses, answers 500 or never answers changes nothing on the
 * request path: the only shared state is the inbox, bounded by inbox_max.
 *
 * A sink is a const descriptor of pure functions (sinks.c is the one list):
 *   open    its settings (environment, s3_callback_params, callback_vars)
 *           into an instance; an error at start is a config warning
 *   encode  a batch of records into HTTP requests (method, URL, headers, body)
 *   verdict an answer: sent, retry or drop
 * so each sink's wire format is unit-tested without a network.
 *
 * The operator's request log (reqlog.c: --detailed_debug, LITELLM_LOG=DEBUG,
 * json_logs) is a local sink on the same thread: one line per request to
 * stderr, written by the logging thread, never by a worker.
 *
 * Alerts (sinks/slack.c: general_settings.alerting) enter through sy_alert(),
 * from any thread (de-duplicated there, then sy_log_submit_to("slack", ...));
 * with alerting on, the slack sink also sees every record (success and
 * failure) and turns slow or failed calls into alerts itself.
 */
#ifndef SY_LOGGING_LOGGING_H
#define SY_LOGGING_LOGGING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

struct sy_config;

/* ---- the record ---------------------------------------------------------- */

/* One upstream attempt (an OTel child span). */
struct sy_logattempt {
    const char *model_id;  /* deployment id */
    const char *model;     /* litellm_params.model ("openai/gpt-4o") */
    const char *provider;  /* custom_llm_provider */
    const char *api_base;  /* may be NULL */
    double start_s, end_s; /* unix seconds */
    int status;            /* HTTP status of the upstream's answer; 0: none (connect error, timeout) */
    const char *error;     /* LiteLLM exception class when it failed ("RateLimitError"); NULL: success */
};

#define SY_LOGREC_STREAM      1u  /* the client asked for a stream */
#define SY_LOGREC_CACHE_HIT   2u  /* answered from the response cache */
#define SY_LOGREC_FAILURE     4u  /* status "failure" (HTTP status >= 400, or a stream that ended in error) */
#define SY_LOGREC_RESP_SSE    8u  /* response holds the SSE bytes the client got (else a JSON answer) */
#define SY_LOGREC_NO_MESSAGES 16u /* turn_off_message_logging (or the key/team's): request/response not kept */
#define SY_LOGREC_REDACT_KEY  32u /* redact_user_api_key_info: key hash, alias, user, team, org left out */
#define SY_LOGREC_COST_KNOWN  64u
#define SY_LOGREC_STREAM_CUT  128u /* the client left mid-stream */
#define SY_LOGREC_RAW         256u /* sy_log_submit_to: payload is one sink's prepared message, no fields */

/* sy_logrec.guard_status (the values of gateway.h's SY_GUARD_*). */
#define SY_LOGREC_GUARD_NOT_RUN    0 /* "not_run" (then read from guard_info, as LiteLLM does) */
#define SY_LOGREC_GUARD_SUCCESS    1 /* "success" */
#define SY_LOGREC_GUARD_INTERVENED 2 /* "guardrail_intervened" */
#define SY_LOGREC_GUARD_FAILED     3 /* "guardrail_failed_to_respond" */

/* LiteLLM's StandardLoggingPayload's facts about one call. Every pointer is
 * NUL-terminated text or NULL (absent). Filled with borrowed pointers by the
 * log stage; sy_log_submit copies all of it. */
struct sy_logrec {
    /* ids */
    const char *id;              /* SpendLogs request_id: the response's id ("chatcmpl-...") or the call id */
    const char *call_id;         /* litellm_call_id (x-litellm-call-id) */
    const char *trace_id;        /* request metadata.trace_id / litellm_trace_id; NULL: none given */
    const char *generation_name; /* request metadata.generation_name (Langfuse) */
    const char *traceparent;     /* the incoming W3C traceparent header */
    const char *call_type;       /* "acompletion", "anthropic_messages", "aresponses", "aembedding", ... */
    const char *route;           /* "/v1/chat/completions" */
    int http_status;             /* what the client got */
    unsigned flags;              /* SY_LOGREC_* */
    /* model */
    const char *model;          /* the model the client asked for */
    const char *model_group;    /* the group that answered (after aliases) */
    const char *model_id;       /* deployment id of the last attempt */
    const char *upstream_model; /* litellm_params.model of the last attempt ("openai/gpt-4o") */
    const char *provider;       /* custom_llm_provider */
    const char *api_base;
    /* who */
    const char *hashed_key, *key_alias, *user_id, *user_email, *team_id, *team_alias, *org_id, *end_user;
    const char *requester_ip, *user_agent;
    const char *key_metadata;     /* JSON object text: the key's metadata */
    const char *team_metadata;    /* JSON object text: the team's metadata */
    const char *request_metadata; /* JSON object text: the body's "metadata" (or litellm_metadata) */
    const char *tags;             /* JSON array text: request tags (body, metadata, key, team) */
    /* usage and cost */
    uint64_t prompt_tokens, completion_tokens, cached_tokens, cache_creation_tokens, reasoning_tokens;
    double cost; /* USD; meaningful with SY_LOGREC_COST_KNOWN */
    const char *cache_key;
    /* time, unix seconds */
    double start_s;            /* request received */
    double api_start_s;        /* first upstream attempt sent (= start_s when none) */
    double completion_start_s; /* first token / first byte of the answer (= end_s for a JSON answer) */
    double end_s;
    /* content (NULL under SY_LOGREC_NO_MESSAGES) */
    const char *request; /* the client's JSON body */
    size_t request_len;
    const char *response; /* the answer the client got: JSON, or SSE bytes (SY_LOGREC_RESP_SSE); capped */
    size_t response_len;
    /* failure */
    const char *error_class;   /* LiteLLM exception class ("BadRequestError"); NULL on success */
    const char *error_message; /* the error's message as the client got it */
    /* attempts, in order */
    const struct sy_logattempt *attempts;
    size_t nattempts;
    /* routing: a JSON array [{"callback_name","callback_type","callback_vars":{..}}] from the
     * key's metadata.logging or the team's default_team_settings; NULL: the config's sinks */
    const char *route_json;
    /* guardrails (stages/guardrails.c): a JSON array of LiteLLM's
     * StandardLoggingGuardrailInformation, one per check; NULL: none ran */
    const char *guard_info;
    int guard_status; /* SY_LOGREC_GUARD_*: the payload's status_fields.guardrail_status */

    /* ---- below: set by sy_log_submit / the logging thread, not by the stage ---- */
    atomic_int refs;
    uint64_t seq;  /* submission order */
    char *payload; /* StandardLoggingPayload JSON, built once on the logging thread */
    size_t payload_len;
};

/* ---- the configuration ---------------------------------------------------- */

/* What the logging thread is told (engine.c builds it from struct sy_config). */
struct sy_logconf {
    const char *const *success; /* sink names for successes (success_callback + callbacks) */
    size_t nsuccess;
    const char *const *failure; /* ... for failures (failure_callback + callbacks) */
    size_t nfailure;
    int turn_off_message_logging;
    int redact_user_api_key_info;
    int request_log;               /* one operator line per request (--detailed_debug, LITELLM_LOG=DEBUG) */
    int json_logs;                 /* ... as JSON */
    double batch_interval_s;       /* a batch leaves when this old (default 5; LiteLLM's flush_interval) */
    size_t queue_max;              /* records held per sink instance (default 10000) */
    size_t inbox_max;              /* records waiting for the logging thread (default 100000) */
    unsigned max_retries;          /* per batch (default 5) */
    double timeout_s;              /* per HTTP request to a sink (default 10) */
    const char *s3_params;         /* JSON object text of litellm_settings.s3_callback_params; may be NULL */
    const char *callback_settings; /* JSON object text of callback_settings; may be NULL */
    /* alerting (general_settings) */
    int alerting_slack;
    double alerting_threshold_s; /* slow-response threshold (default 300) */
    const char *alert_types;     /* JSON array text; NULL: all */
    const char *alerting_args;   /* JSON object text; NULL: defaults */
};

/* ---- sinks ----------------------------------------------------------------- */

/* One HTTP request a batch becomes. The engine frees it (sy_sink_req_free). */
struct sy_sink_req {
    const char *method;    /* static: "POST", "PUT" */
    char *url;             /* malloc'd, absolute */
    struct sy_buf headers; /* raw "Name: value\r\n" lines (Content-Type included) */
    struct sy_buf body;
};
void sy_sink_req_free(struct sy_sink_req *r);

enum { SY_SINK_SENT = 0, SY_SINK_RETRY = 1, SY_SINK_DROP = -1 };

struct sy_sink_ops {
    const char *name; /* the callback name in a config: "langfuse", "otel", "s3", ... */
    size_t max_batch; /* records per encode() call (1: one request per record) */
    /* An instance from the settings: env (getenv), lc, and vars (JSON object text of a
     * key's or team's callback_vars; for the config's instance, the callback's
     * callback_settings.<name> entry, or NULL when it has none). NULL with err set when
     * it cannot run (a missing key): the config warns at start and the sink is off. */
    void *(*open)(const struct sy_logconf *lc, const char *vars, char *err, size_t errlen);
    void (*close)(void *inst);
    /* A batch (1 <= n <= max_batch) into *nout requests (at most 8, filled in out[];
     * 0 is fine: nothing to send, e.g. the slack sink for a fast success).
     * sy_log_payload(recs[i]) gives a record's StandardLoggingPayload. 0, or -1 when
     * the batch cannot be encoded (dropped and counted). */
    int (*encode)(void *inst, struct sy_logrec *const *recs, size_t n, struct sy_sink_req *out, size_t *nout);
    /* The answer to one request; NULL: 2xx sent, 408/429/5xx/transport error retry,
     * other statuses drop. status 0: no answer (transport error, timeout). */
    int (*verdict)(void *inst, int status, const char *body, size_t n);
    /* Optional: this instance's records per encode() call (1..max_batch), e.g. a
     * webhook told to send one request per record. NULL: max_batch. */
    size_t (*inst_max_batch)(void *inst);
    /* Batches an instance keeps on their way at once (0: 1, the order of the
     * queue kept). More for a sink that sends one request per record (s3):
     * its rate is then not one record per round trip. */
    unsigned max_inflight;
};
#define SY_SINK_MAX_REQS 8

/* The sinks this build has (sinks.c), and the one named name, or NULL. */
extern const struct sy_sink_ops *const sy_sinks[];
extern const size_t sy_nsinks;
const struct sy_sink_ops *sy_sink_find(const char *name);

/* ---- the payload (payload.c) -------------------------------------------------- */

/* The record's StandardLoggingPayload JSON (LiteLLM's litellm/types/utils.py
 * field for field), built on first use and kept in rec->payload. Logging thread
 * only. NULL when out of memory. */
const char *sy_log_payload(struct sy_logrec *rec, size_t *len);
/* Build it into out (tests). 0 or -1. */
int sy_log_payload_build(const struct sy_logrec *rec, struct sy_buf *out);
/* The answer a client got as JSON, as the payload's "response" holds it: a JSON
 * answer as is, a stream (sse) assembled for its call_type ("anthropic_messages",
 * "aresponses", else OpenAI chunks), anything unparseable as a JSON string.
 * Any thread (SpendLogs' response column, spend/prompts.c). 0 or -1. */
int sy_log_response_json(const char *p, size_t n, int sse, const char *call_type, struct sy_buf *out);

/* ---- the engine (engine.c) ------------------------------------------------------ */

/* Sink instances open at once (the config's plus the tenants' opened on demand);
 * past it the least recently used idle tenant instance is closed, else the
 * record is refused for that tenant (counted). */
#define SY_LOG_MAX_INSTANCES 64

/* Start the logging thread for cfg (no thread when nothing is on: no sink, no
 * request log, no alerting); on reload, sy_log_configure swaps the sinks
 * (queued records of a sink that stays are kept). Warnings (a sink that cannot
 * open, a Python callback) go to the log. 0 or -1. */
int sy_log_start(const struct sy_config *cfg);
int sy_log_configure(const struct sy_config *cfg);
/* 1 when a finished call should be submitted (some sink, the request log or
 * slow-response alerting is on): the log stage's enabled(). */
int sy_log_enabled(const struct sy_config *cfg);
/* Queue one finished call. Copies rec. Any thread; never blocks on I/O.
 * 0, or -1 when the inbox is full (dropped and counted). */
int sy_log_submit(const struct sy_logrec *rec);
/* Queue a message prepared for one sink (alerts: slack.c's sy_alert): a
 * SY_LOGREC_RAW record whose payload is a copy of p[0..n). Any thread.
 * 0, or -1 when that sink is not running or the inbox is full. */
int sy_log_submit_to(const char *sink, const char *p, size_t n);
/* Flush every queue within timeout_s (SIGTERM), then stop the thread. What
 * could not be delivered is counted and logged once. */
void sy_log_stop(double timeout_s);

/* Per sink instance, for /metrics and /health/readiness. */
struct sy_log_sink_stats {
    char name[48]; /* callback name ("langfuse", "langfuse:team-a" for a tenant's instance) */
    uint64_t queued, sent, retried, dropped, failures;
    size_t depth;
};
/* Up to max sinks' stats into out; returns how many. Any thread. */
size_t sy_log_stats(struct sy_log_sink_stats *out, size_t max);
/* Append the Prometheus series (litellm_callback_logging_failures_metric and the
 * switchyard_callback_* ones) to b. Any thread. */
void sy_log_render_metrics(struct sy_buf *b);
/* Append ,"logging":{...} members for /health/readiness. */
void sy_log_render_readiness(struct sy_buf *b);

/* ---- alerts (slack.c) ------------------------------------------------------------ */

/* LiteLLM's alert_types. */
enum sy_alert_type {
    SY_ALERT_LLM_EXCEPTIONS,
    SY_ALERT_LLM_TOO_SLOW,
    SY_ALERT_LLM_REQUESTS_HANGING,
    SY_ALERT_BUDGET_ALERTS,
    SY_ALERT_DB_EXCEPTIONS,
    SY_ALERT_COOLDOWN_DEPLOYMENT,
    SY_ALERT_OUTAGE_ALERTS,
    SY_ALERT_FAILED_TRACKING_SPEND,
    SY_ALERT__COUNT
};
/* Raise an alert (any thread; a short mutex, no I/O). Alerts of the same type
 * and dedup_key within the de-duplication window are sent once. No-op when
 * alerting is off or the type is not in alert_types. */
void sy_alert(enum sy_alert_type t, const char *dedup_key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
