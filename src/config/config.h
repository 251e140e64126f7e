/* config.h - the loaded LiteLLM-compatible config.yaml, as an immutable snapshot.
 *
 * sy_config_load() reads the YAML file (libyaml), applies LiteLLM's rules
 * (include:, anchors/aliases/merge keys, YAML 1.1 scalars, duplicate keys keep
 * the last, os.environ/VAR substitution in map values at any depth,
 * environment_variables exported), validates types and fills this struct.
 * Unknown keys are warnings naming the key and its line; wrong types are
 * errors naming the line. The snapshot is shared read-only by all worker
 * threads and reference counted: SIGHUP loads a new one and swaps the pointer;
 * in-flight requests keep the one they started with.
 *
 * All strings are owned by the snapshot (NUL-terminated, never NULL unless the
 * field comment says "may be NULL").
 */
#ifndef SY_CONFIG_H
#define SY_CONFIG_H

#define SY_DB_THREADS_DEFAULT 2  /* DB threads when database_connection_pool_limit is not set */
#define SY_DB_THREADS_MAX     64 /* database_connection_pool_limit is capped here */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One key of a deployment's litellm_params, as text (see sy_deployment.params). */
struct sy_kv {
    const char *key;
    const char *value;
};

/* One entry of model_list. */
struct sy_deployment {
    const char *model_name; /* public alias = model group */
    const char *id;         /* model_info.id, else sha256 hex as LiteLLM's Router._generate_model_id */
    const char
        *model; /* litellm_params.model as written, e.g. "azure/my-gpt4o" (may be NULL: entry without litellm_params) */
    const char *provider;       /* the prefix before '/', or custom_llm_provider, or "openai" if unprefixed */
    const char *upstream_model; /* the part after the provider prefix, e.g. "my-gpt4o" */
    const char *api_base;       /* may be NULL */
    const char *api_key;        /* may be NULL */
    const char *api_version;    /* may be NULL */
    const char *organization;   /* may be NULL */
    double rpm, tpm, weight;    /* < 0 when absent */
    double timeout_s;           /* < 0 when absent */
    double stream_timeout_s;    /* < 0 when absent */
    int max_retries;            /* < 0 when absent */
    int order;                  /* < 0 when absent */
    const char *mock_response;  /* may be NULL */
    /* model_info */
    const char *mode;                                   /* "chat" (default), "embedding", "completion", ... */
    int64_t max_input_tokens;                           /* < 0 when absent */
    int64_t max_tokens;                                 /* < 0 when absent */
    double input_cost_per_token, output_cost_per_token; /* < 0 when absent (litellm_params wins over model_info) */
    const char *tokenizer;                              /* model_info.tokenizer: "cl100k_base" | "o200k_base" | NULL */
    int line;                                           /* line of the entry in its file, for messages */
    const char *file;                                   /* file the entry came from */
    /* added by the loader (not in the original interface) */
    const struct sy_kv *params; /* every litellm_params key (plus router_settings.default_litellm_params
                                   keys the entry lacks), value as text: strings as written, other
                                   values as JSON; null values left out */
    size_t n_params;
    const char *credential_name; /* litellm_params.litellm_credential_name; may be NULL */
    /* router (issue 7) */
    int max_parallel_requests;      /* litellm_params.max_parallel_requests; < 0 when absent */
    double cooldown_time_s;         /* litellm_params.cooldown_time; < 0 when absent (0 = never cool down) */
    const char *health_check_model; /* model_info.health_check_model; may be NULL */
    /* cost (issue 9): litellm_params wins over model_info; < 0 when absent */
    double cache_read_input_token_cost, cache_creation_input_token_cost, output_cost_per_reasoning_token;
    /* 1-hour cache writes (litellm_params, else model_info); < 0 when absent */
    double cache_creation_input_token_cost_above_1hr;
    int64_t max_output_tokens;  /* model_info.max_output_tokens; < 0 when absent */
    const char **access_groups; /* model_info.access_groups; may be NULL */
    size_t n_access_groups;
    const char *base_model; /* model_info.base_model (price lookup); may be NULL */
    /* routing (issue 19) */
    const char *region_name; /* litellm_params.region_name, else model_info.region_name; may be NULL */
    const char **tags;       /* litellm_params.tags (tag routing); may be NULL */
    size_t n_tags;
    int num_retries;        /* litellm_params.num_retries: retries in the group after this deployment
                               fails; < 0 when absent */
    int mock_timeout;       /* litellm_params.mock_timeout: every call times out (LiteLLM's test flag) */
    int supports_reasoning; /* model_info.supports_reasoning: 1, 0, or -1 when absent (the price map's) */
};

/* router_settings.provider_budget_config entry: a provider's spend cap over a
 * rolling window (router/budget.c). */
struct sy_provider_budget {
    const char *provider; /* "openai", "anthropic", ... (the deployment's provider) */
    double budget_limit;  /* USD; budget_limit or max_budget */
    double period_s;      /* time_period or budget_duration ("30s", "1h", "1d", "1mo") in seconds */
    const char *period;   /* as written, for the Redis key and messages */
};

/* One fallbacks entry: {"group": ["fb1", "fb2"]} (group may be "*"). */
struct sy_fallback {
    const char *group;
    const char **to;
    size_t n;
};

/* Exception classes of retry_policy / allowed_fails_policy, in this order. */
enum sy_exc_class {
    SY_EXC_BAD_REQUEST,     /* BadRequestError(Retries|AllowedFails) */
    SY_EXC_AUTHENTICATION,  /* AuthenticationError... */
    SY_EXC_TIMEOUT,         /* TimeoutError... */
    SY_EXC_RATE_LIMIT,      /* RateLimitError... */
    SY_EXC_CONTENT_POLICY,  /* ContentPolicyViolationError... */
    SY_EXC_INTERNAL_SERVER, /* InternalServerError... */
    SY_EXC__COUNT
};

/* One model_group_alias entry: alias -> group ({"alias": "group"} or
 * {"alias": {"model": "group", "hidden": true}}). */
struct sy_alias {
    const char *alias;
    const char *group;
    int hidden;
};

/* Router settings. Keys that exist in both litellm_settings and
 * router_settings (fallbacks, num_retries, ...) take router_settings' value
 * when both are set, as LiteLLM's Router(**router_settings) does. */
struct sy_router_config {
    /* routing_strategy_args */
    double lowest_latency_buffer; /* default 0 */
    double latency_ttl_s;         /* routing_strategy_args.ttl, default 3600 */
    int max_latency_list_size;    /* default 10 */
    /* retries */
    double retry_after_s;            /* router_settings.retry_after (min back-off), default 0 */
    int retry_policy[SY_EXC__COUNT]; /* < 0 when absent */
    int has_retry_policy;
    /* cooldowns */
    int allowed_fails;                       /* < 0 when absent (router_settings or litellm_settings) */
    int allowed_fails_policy[SY_EXC__COUNT]; /* < 0 when absent */
    int has_allowed_fails_policy;
    double cooldown_time_s; /* < 0 when absent (default 5 applied by the router) */
    int disable_cooldowns;  /* bool */
    /* timeouts */
    double stream_timeout_s; /* router_settings.stream_timeout; < 0 when absent */
    /* fallbacks */
    int max_fallbacks; /* default 5 */
    struct sy_fallback *fallbacks;
    size_t n_fallbacks;
    struct sy_fallback *context_window_fallbacks;
    size_t n_context_window_fallbacks;
    struct sy_fallback *content_policy_fallbacks;
    size_t n_content_policy_fallbacks;
    const char **default_fallbacks;
    size_t n_default_fallbacks;
    /* selection */
    int enable_pre_call_checks; /* bool */
    struct sy_alias *aliases;
    size_t n_aliases;                  /* model_group_alias */
    int default_max_parallel_requests; /* < 0 when absent */
    int enable_tag_filtering;          /* bool: route by request tags (router/select.c) */
    int tag_filtering_match_any;       /* bool, default 1: one common tag suffices (0: all request tags) */
    struct sy_provider_budget *provider_budgets;
    size_t n_provider_budgets; /* provider_budget_config */
    /* Redis: router_settings.redis_host/redis_port/redis_password/redis_db, or redis_url
     * (redis://[user[:password]@]host[:port][/db], parsed into these fields); else the env
     * REDIS_URL, or REDIS_HOST (+REDIS_PORT, REDIS_PASSWORD, REDIS_USERNAME). */
    const char *redis_host;     /* may be NULL: no Redis */
    int redis_port;             /* default 6379 */
    const char *redis_password; /* may be NULL */
    const char *redis_username; /* may be NULL */
    int redis_db;               /* default 0 */
    /* health (general_settings) */
    int background_health_checks;   /* bool */
    double health_check_interval_s; /* default 300 */
};

/* cache_params.supported_call_types */
#define SY_CACHE_CT_CHAT  1u /* completion, acompletion */
#define SY_CACHE_CT_TEXT  2u /* text_completion, atext_completion */
#define SY_CACHE_CT_EMBED 4u /* embedding, aembedding */

enum { SY_CACHE_SCOPE_GLOBAL, SY_CACHE_SCOPE_TEAM, SY_CACHE_SCOPE_KEY };

/* general_settings.pass_through_endpoints: one entry (LiteLLM's
 * PassThroughGenericEndpoint; config/passthrough.c, stages/provider_pt.c). */
struct sy_ptendpoint {
    const char *path;             /* "/my-route" (leading '/', no trailing '/') */
    const char *target;           /* absolute http(s) URL */
    const char **hname, **hvalue; /* headers sent with every call (os.environ/ resolved) */
    size_t nheaders;
    int auth;            /* a virtual key or the master key is required (default 1) */
    int forward_headers; /* the client's headers are forwarded too (default 0) */
    int include_subpath; /* "/my-route/x" goes to target + "/x" (default 0: the path only) */
};
/* general_settings.switchyard_unpriced_models (docs/prices.md) */
enum { SY_UNPRICED_REJECT = 0, SY_UNPRICED_ALLOW = 1, SY_UNPRICED_WARN = 2 };

struct sy_config {
    int refs;         /* atomic; see sy_config_ref/unref */
    const char *path; /* main file, may be NULL for the built-in default */

    struct sy_deployment *deployments;
    size_t n_deployments;

    /* litellm_settings */
    int drop_params;                     /* bool, default 0 */
    int include_cost_in_streaming_usage; /* bool, default 0: a stream's usage chunk carries usage.cost */
    int num_retries;                     /* < 0 when absent */
    double request_timeout_s;            /* default 6000 */
    const char **callbacks;              /* union of callbacks + success_callback + failure_callback */
    size_t n_callbacks;
    int prometheus; /* "prometheus" appears in callbacks/success_callback */
    /* logging callbacks (issue 22; logging/logging.h). The lists hold the names
     * LiteLLM would run (prometheus and Python objects left out): */
    const char **success_callbacks; /* success_callback + callbacks */
    size_t n_success_callbacks;
    const char **failure_callbacks; /* failure_callback + callbacks */
    size_t n_failure_callbacks;
    int turn_off_message_logging;   /* litellm_settings, bool */
    int redact_user_api_key_info;   /* litellm_settings, bool */
    int json_logs;                  /* litellm_settings, bool: operator logs as JSON lines */
    int detailed_debug;             /* --detailed_debug / LITELLM_LOG=DEBUG: one line per request */
    const char *s3_callback_params; /* litellm_settings.s3_callback_params as JSON object text; NULL */
    const char *callback_settings;  /* top-level callback_settings as JSON object text; NULL */
    const char *guardrails;         /* top-level guardrails: list as JSON array text; NULL (guardrails/) */
    const char *legacy_guardrails;  /* litellm_settings.guardrails (the old form) as JSON array text; NULL */
    const char *mcp_servers;        /* top-level mcp_servers: {name: {...}} as JSON object text; NULL (mcp/) */
    const char *mcp_aliases;        /* litellm_settings.mcp_aliases: {alias: server name} as JSON text; NULL */
    int mcp_max_rounds; /* general_settings.switchyard_mcp_max_tool_rounds: tool rounds of a call with MCP tools
                         * (stages/mcp_tools.c), default 5 (LiteLLM's MAX_MCP_TOOL_CALL_ROUNDS), at most 100 */
    int skip_system_message_in_guardrail;  /* litellm_settings, bool: guardrails do not read system messages */
    int skip_tool_message_in_guardrail;    /* litellm_settings, bool: ... nor tool messages */
    const char *default_team_settings;     /* litellm_settings.default_team_settings as JSON array text; NULL */
    double callback_batch_interval_s;      /* switchyard_callback_batch_interval (default 5) */
    size_t callback_queue_max;             /* switchyard_callback_queue_max per sink (default 10000) */
    int require_auth_for_metrics_endpoint; /* bool, default 0 */
    int ssl_verify;                        /* default 1; 0 when ssl_verify: false */
    const char *ssl_ca_file;               /* ssl_verify given as a path; may be NULL */
    const char *access_log; /* switchyard extension: litellm_settings.switchyard_access_log path; may be NULL */
    const char *vertex_project, *vertex_location; /* defaults for vertex_ai deployments; may be NULL */
    /* new internal users (admin/users.c, LiteLLM's _update_internal_new_user_params) */
    double max_internal_user_budget;           /* litellm_settings.max_internal_user_budget; < 0 when absent */
    const char *internal_user_budget_duration; /* "30d"...; may be NULL */
    const char *default_internal_user_params;  /* JSON object text of the mapping; may be NULL */

    /* router_settings */
    const char *routing_strategy;   /* default "simple-shuffle"; one of simple-shuffle, least-busy,
                                       usage-based-routing, usage-based-routing-v2,
                                       latency-based-routing, cost-based-routing */
    int router_num_retries;         /* < 0 when absent */
    double router_timeout_s;        /* < 0 when absent */
    struct sy_router_config router; /* everything else the router reads */

    /* general_settings */
    const char *master_key;     /* may be NULL (auth off); env LITELLM_MASTER_KEY when absent */
    double max_request_size_mb; /* default 32 */
    /* keys and spend (issue 9) */
    const char *database_url;             /* general_settings.database_url, else env DATABASE_URL; may be NULL
                                             (then the embedded SQLite file, see gateway) */
    int allow_requests_on_db_unavailable; /* bool, default 0 */
    double proxy_batch_write_at_s;        /* spend writer interval, default 1 (LiteLLM: 10) */
    int disable_spend_logs;               /* bool: no SpendLogs rows (entity spend still written) */
    int disable_error_logs;               /* bool: no SpendLogs rows for failed requests (LiteLLM's
                                             _should_track_errors_in_db) */
    int database_connection_pool_limit;   /* DB threads = database connections (store/dbpool.h); 0: the
                                             default SY_DB_THREADS_DEFAULT; read at start only */
    double user_api_key_cache_ttl_s;      /* key cache TTL, default 10 */
    size_t spend_queue_max;               /* general_settings.switchyard_spend_queue_max, default 100000 */
    const char *model_prices_path; /* general_settings.switchyard_model_prices (LiteLLM-format JSON); may be NULL */
    int unpriced_models; /* general_settings.switchyard_unpriced_models: SY_UNPRICED_* (budgeted keys, no price) */
    int reject_clientside_metadata_tags; /* general_settings: a request whose metadata carries tags is refused */
    int mcp_stdio_from_api; /* general_settings.switchyard_mcp_stdio_from_api: stdio MCP servers from the database */
    double ui_session_ttl_s; /* general_settings.switchyard_ui_session_ttl: admin UI sessions, default 43200 */
    int store_prompts_in_spend_logs; /* general_settings, bool: SpendLogs.messages / response kept */
    /* alerting (general_settings; logging/sinks/slack.c) */
    int alerting_slack;          /* "slack" in general_settings.alerting */
    double alerting_threshold_s; /* slow-response threshold, default 300 */
    const char *alert_types;     /* JSON array text; NULL: all */
    const char *alerting_args;   /* JSON object text; NULL */
    /* spend-log retention (spend/retention.c) */
    double spend_logs_retention_s;          /* maximum_spend_logs_retention_period; 0: keep forever */
    double spend_logs_retention_interval_s; /* maximum_spend_logs_retention_interval, default 1 day */
    /* budgets */
    double max_budget;           /* litellm_settings.max_budget: the proxy-wide budget, 0 none */
    const char *budget_duration; /* litellm_settings.budget_duration: its window ("30d"); NULL = 30 days */
    double budget_resched_min_s; /* general_settings.proxy_budget_rescheduler_min_time; 0 unset */
    double budget_resched_max_s; /* general_settings.proxy_budget_rescheduler_max_time; 0 unset */

    /* rate limits (issue 10; limits/limits.h) */
    long global_max_parallel;  /* general_settings.global_max_parallel_requests; < 0 none */
    int token_rate_limit_type; /* general_settings.token_rate_limit_type: 0 total (default), 1 input, 2 output */
    int limits_fail_closed;    /* general_settings.switchyard_rate_limit_redis_failure: closed (default open) */

    /* response cache (issue 10; cache/cache.h): litellm_settings.cache + cache_params */
    int cache;                   /* litellm_settings.cache: true */
    int cache_redis;             /* cache_params.type: redis (else local) */
    double cache_ttl_s;          /* cache_params.ttl; default 600 (LiteLLM's in-memory default) */
    const char *cache_namespace; /* cache_params.namespace; may be NULL */
    int cache_default_off;       /* cache_params.mode: default_off */
    int cache_scope;             /* cache_params.switchyard_scope: SY_CACHE_SCOPE_* (default global) */
    unsigned cache_call_types;   /* SY_CACHE_CT_* bits: cache_params.supported_call_types */
    size_t cache_max_bytes;      /* cache_params.switchyard_max_bytes; default 64 MiB (local) */
    size_t cache_max_items;      /* cache_params.max_size_in_memory; default 10000 (local) */
    const char *cache_redis_host, *cache_redis_url, *cache_redis_password, *cache_redis_username; /* cache_params */
    int cache_redis_port, cache_redis_db;

    /* switchyard server limits (general_settings.switchyard_* or CLI) */
    size_t max_header_bytes;     /* default 65536 */
    size_t mcp_sse_max_streams;  /* switchyard_mcp_sse_max_streams: MCP SSE streams per worker; 0 = 1000 */
    double header_timeout_s;     /* default 30: whole request head must arrive */
    double body_timeout_s;       /* default 60: idle time between body bytes */
    double body_total_timeout_s; /* default 60: the whole body must arrive in this time */
    double keepalive_timeout_s;  /* default 75 */
    /* general_settings.switchyard_cors_allowed_origins: NULL = any origin
     * (LiteLLM's default); else "origin\n..." (a list or a comma-separated string) */
    const char *cors_origins;
    struct sy_ptendpoint *pt_endpoints; /* general_settings.pass_through_endpoints */
    size_t n_pt_endpoints;

    int n_warnings; /* warnings printed while loading */
    void *priv;     /* loader's private allocations */
};

/* Load and validate `path`. On success returns 0 and sets *out (refs = 1).
 * On failure returns a negative SY_E* and writes a one-line reason naming the
 * file and line into err (size errlen). Warnings go to the log. */
int sy_config_load(const char *path, struct sy_config **out, char *err, size_t errlen);

/* Load from an in-memory YAML string (used for the built-in default and tests);
 * `name` is used in messages and `dir` to resolve include: paths (may be NULL). */
int sy_config_load_string(const char *yaml, size_t len, const char *name, const char *dir, struct sy_config **out,
                          char *err, size_t errlen);

/* Flags for sy_config_load_string_ex(). */
#define SY_CONFIG_NO_SETENV  0x1 /* do not export environment_variables (fuzzing, tests) */
#define SY_CONFIG_QUIET      0x2 /* do not log warnings/errors (they are still counted and kept) */
#define SY_CONFIG_NO_INCLUDE 0x4 /* refuse include: (fuzzing) */

/* sy_config_load_string() with flags. */
int sy_config_load_string_ex(const char *yaml, size_t len, const char *name, const char *dir, unsigned flags,
                             struct sy_config **out, char *err, size_t errlen);

/* The i-th warning printed while loading ("file:line: message"), or NULL when
 * i is out of range. Owned by the snapshot. */
const char *sy_config_warning(const struct sy_config *c, int i);

/* Value of litellm_params key `key` of a deployment as text, or NULL. */
const char *sy_deployment_param(const struct sy_deployment *d, const char *key);

void sy_config_ref(struct sy_config *c);
void sy_config_unref(struct sy_config *c);

/* Inputs of every load from outside the file, set by main before the first:
 *   sy_config_sink_known  1 when a logging sink implements callback `name`
 *                         (logging/logging.h sy_sink_find; config/ sits below
 *                         logging/, so main hands it down); NULL: every name
 *                         is taken as implemented;
 *   sy_config_detailed_debug  --detailed_debug was given. */
extern int (*sy_config_sink_known)(const char *name);
extern int sy_config_detailed_debug;

/* Print the model groups (secrets redacted) as --check-config does. */
void sy_config_print(const struct sy_config *c, FILE *out);

#endif
