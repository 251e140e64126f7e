/* schema.c - the config.yaml schema: key tables, type checks, filling struct sy_config.
 *
 * Each section has a table saying what every LiteLLM key means to switchyard:
 *   USED   read here;
 *   QUIET  a LiteLLM key with nothing to do in switchyard (logging verbosity,
 *          telemetry): accepted silently;
 *   UNSUP  a LiteLLM feature switchyard does not have yet: "not supported yet,
 *          ignored" warning (none when the value is false/null/empty, which
 *          asks for nothing).
 *   PYONLY a Python hook (custom_auth, custom_sso, custom_key_generate: a
 *          module path LiteLLM imports): one warning line saying it is a
 *          Python-only hook switchyard cannot run. Callbacks given as a Python
 *          object path ("module.instance") get the same kind of line.
 * A key in no table is "unknown": a warning naming the key path and line
 * (LiteLLM itself ignores such keys silently). A wrong type for a key we read
 * is an error naming file:line. Numbers may be written as numeric strings
 * ("6379"), as pydantic accepts them.
 *
 * Router settings (struct sy_router_config) are filled here section by
 * section (fill_litellm, fill_router, fill_general); the readers of their
 * values (fallbacks, aliases, policies, Redis) and the check of the model
 * groups they name are in router_settings.c. The typed getters below
 * (sy__get_num, ...) are shared with it through loader.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/loader.h"
#include "core/buf.h"

enum kclass { USED, QUIET, UNSUP, PYONLY };
struct kdef {
    const char *name;
    enum kclass cls;
};

static const struct kdef top_keys[] = {{"model_list", USED},
                                       {"litellm_settings", USED},
                                       {"general_settings", USED},
                                       {"router_settings", USED},
                                       {"environment_variables", USED},
                                       {"credential_list", USED},
                                       {"include", USED},
                                       {"guardrails", USED},
                                       {"prompts", UNSUP},
                                       {"finetune_settings", UNSUP},
                                       {"files_settings", UNSUP},
                                       {"assistant_settings", UNSUP},
                                       {"default_vertex_config", UNSUP},
                                       {"mcp_servers", USED},
                                       {"mcp_tools", UNSUP},
                                       {"agent_list", UNSUP},
                                       {"vector_store_registry", UNSUP},
                                       {"callback_settings", USED},
                                       {"search_tools", UNSUP},
                                       {NULL, USED}};

static const struct kdef litellm_keys[] = {{"drop_params", USED},
                                           {"num_retries", USED},
                                           {"request_timeout", USED},
                                           {"callbacks", USED},
                                           {"success_callback", USED},
                                           {"failure_callback", USED},
                                           {"require_auth_for_metrics_endpoint", USED},
                                           {"ssl_verify", USED},
                                           {"switchyard_access_log", USED},
                                           {"include_cost_in_streaming_usage", USED},
                                           {"set_verbose", QUIET},
                                           {"json_logs", USED},
                                           {"telemetry", QUIET},
                                           {"suppress_debug_info", QUIET},
                                           {"turn_off_message_logging", USED},
                                           {"skip_system_message_in_guardrail", USED},
                                           {"skip_tool_message_in_guardrail", USED},
                                           {"redact_user_api_key_info", USED},
                                           {"switchyard_callback_batch_interval", USED},
                                           {"switchyard_callback_queue_max", USED},
                                           {"log_raw_request_response", QUIET},
                                           {"fallbacks", USED},
                                           {"default_fallbacks", USED},
                                           {"context_window_fallbacks", USED},
                                           {"content_policy_fallbacks", USED},
                                           {"max_fallbacks", USED},
                                           {"allowed_fails", USED},
                                           {"cache", USED},
                                           {"cache_params", USED},
                                           {"service_callback", USED},
                                           {"service_callbacks", USED},
                                           {"enable_redis_auth_cache", UNSUP},
                                           {"force_ipv4", UNSUP},
                                           {"modify_params", UNSUP},
                                           {"disable_hf_tokenizer_download", UNSUP},
                                           {"cost_discount_config", UNSUP},
                                           {"cost_margin_config", UNSUP},
                                           {"key_generation_settings", UNSUP},
                                           {"default_team_params", UNSUP},
                                           {"default_team_settings", USED},
                                           {"max_budget", USED},
                                           {"budget_duration", USED},
                                           {"network_mock", UNSUP},
                                           {"route_all_chat_openai_to_responses", UNSUP},
                                           {"use_chat_completions_url_for_anthropic_messages", UNSUP},
                                           {"s3_callback_params", USED},
                                           {"default_internal_user_params", USED},
                                           {"disable_end_user_cost_tracking", UNSUP},
                                           {"disable_end_user_cost_tracking_prometheus_only", UNSUP},
                                           {"guardrails", USED},
                                           {"internal_user_budget_duration", USED},
                                           {"max_internal_user_budget", USED},
                                           {"max_end_user_budget", UNSUP},
                                           {"mcp_aliases", USED},
                                           {"vertex_location", USED},
                                           {"vertex_project", USED},
                                           {"upperbound_key_generate_params", UNSUP},
                                           {"default_key_generate_params", UNSUP},
                                           {"public_model_groups", UNSUP},
                                           {"callback_settings", UNSUP},
                                           {"datadog_params", UNSUP},
                                           {"langfuse_default_tags", UNSUP},
                                           {"ssl_certificate", UNSUP},
                                           {"enable_json_schema_validation", UNSUP},
                                           {"enable_preview_features", UNSUP},
                                           {"tag_budget_config", UNSUP},
                                           {"model_alias_map", UNSUP},
                                           {"max_user_budget", UNSUP},
                                           {"enable_loadbalancing_on_batch_endpoints", UNSUP},
                                           {"cache_responses", UNSUP},
                                           {"prometheus_metrics_config", UNSUP},
                                           {"custom_prometheus_metadata_labels", UNSUP},
                                           {NULL, USED}};

static const struct kdef router_keys[] = {{"routing_strategy", USED},
                                          {"num_retries", USED},
                                          {"timeout", USED},
                                          {"default_litellm_params", USED},
                                          {"routing_strategy_args", USED},
                                          {"retry_after", USED},
                                          {"retry_policy", USED},
                                          {"allowed_fails", USED},
                                          {"allowed_fails_policy", USED},
                                          {"cooldown_time", USED},
                                          {"disable_cooldowns", USED},
                                          {"stream_timeout", USED},
                                          {"max_fallbacks", USED},
                                          {"fallbacks", USED},
                                          {"context_window_fallbacks", USED},
                                          {"content_policy_fallbacks", USED},
                                          {"default_fallbacks", USED},
                                          {"enable_pre_call_checks", USED},
                                          {"model_group_alias", USED},
                                          {"default_max_parallel_requests", USED},
                                          {"redis_host", USED},
                                          {"redis_port", USED},
                                          {"redis_password", USED},
                                          {"redis_db", USED},
                                          {"redis_url", USED},
                                          {"redis_username", USED},
                                          {"set_verbose", QUIET},
                                          {"debug_level", QUIET},
                                          {"model_group_retry_policy", UNSUP},
                                          {"cache_kwargs", UNSUP},
                                          {"cache_responses", UNSUP},
                                          {"caching_groups", UNSUP},
                                          {"client_ttl", UNSUP},
                                          {"optional_pre_call_checks", UNSUP},
                                          {"enable_tag_filtering", USED},
                                          {"tag_filtering_match_any", USED},
                                          {"provider_budget_config", USED},
                                          {"enable_health_check_routing", UNSUP},
                                          {"ignore_invalid_deployments", UNSUP},
                                          {"polling_interval", UNSUP},
                                          {"default_priority", UNSUP},
                                          {"router_general_settings", UNSUP},
                                          {"alerting_config", UNSUP},
                                          {"assistants_config", UNSUP},
                                          {"max_parallel_requests", UNSUP},
                                          {"deployment_affinity_ttl", UNSUP},
                                          {NULL, USED}};

static const struct kdef general_keys[] = {{"master_key", USED},
                                           {"max_request_size_mb", USED},
                                           {"switchyard_max_header_bytes", USED},
                                           {"switchyard_header_timeout_s", USED},
                                           {"switchyard_body_timeout_s", USED},
                                           {"switchyard_body_total_timeout_s", USED},
                                           {"switchyard_cors_allowed_origins", USED},
                                           {"switchyard_keepalive_timeout_s", USED},
                                           {"switchyard_mcp_sse_max_streams", USED},
                                           {"switchyard_spend_queue_max", USED},
                                           {"switchyard_mcp_max_tool_rounds", USED},
                                           {"switchyard_model_prices", USED},
                                           {"switchyard_unpriced_models", USED},
                                           {"background_health_checks", USED},
                                           {"health_check_interval", USED},
                                           {"set_verbose", QUIET},
                                           {"debug", QUIET},
                                           {"detailed_debug", QUIET},
                                           {"database_url", USED},
                                           {"database_connection_pool_limit", USED},
                                           {"database_connection_timeout", UNSUP},
                                           {"store_model_in_db", UNSUP},
                                           {"disable_spend_logs", USED},
                                           {"disable_spend_updates", UNSUP},
                                           {"disable_error_logs", USED},
                                           {"store_prompts_in_spend_logs", USED},
                                           {"proxy_batch_write_at", USED},
                                           {"use_redis_transaction_buffer", UNSUP},
                                           {"maximum_spend_logs_retention_period", USED},
                                           {"maximum_spend_logs_retention_interval", USED},
                                           {"alerting", USED},
                                           {"alerting_threshold", USED},
                                           {"alert_types", USED},
                                           {"alert_to_webhook_url", UNSUP},
                                           {"alerting_args", USED},
                                           {"health_check_details", UNSUP},
                                           {"max_parallel_requests", UNSUP},
                                           {"global_max_parallel_requests", USED},
                                           {"token_rate_limit_type", USED},
                                           {"switchyard_rate_limit_redis_failure", USED},
                                           {"proxy_budget_rescheduler_min_time", USED},
                                           {"proxy_budget_rescheduler_max_time", USED},
                                           {"allow_requests_on_db_unavailable", USED},
                                           {"user_api_key_cache_ttl", USED},
                                           {"litellm_key_header_name", UNSUP},
                                           {"custom_auth", PYONLY},
                                           {"custom_auth_settings", UNSUP},
                                           {"enable_jwt_auth", UNSUP},
                                           {"litellm_jwtauth", UNSUP},
                                           {"enforce_user_param", UNSUP},
                                           {"allowed_routes", UNSUP},
                                           {"public_routes", UNSUP},
                                           {"admin_only_routes", UNSUP},
                                           {"allowed_ips", UNSUP},
                                           {"forward_client_headers_to_llm_api", UNSUP},
                                           {"max_response_size_mb", UNSUP},
                                           {"pass_through_endpoints", USED},
                                           {"key_management_system", UNSUP},
                                           {"key_management_settings", UNSUP},
                                           {"otel", USED},
                                           {"reject_clientside_metadata_tags", USED},
                                           {"switchyard_mcp_stdio_from_api", USED},
                                           {"switchyard_ui_session_ttl", USED},
                                           {"custom_key_generate", PYONLY},
                                           {"infer_model_from_keys", UNSUP},
                                           {"ui_access_mode", UNSUP},
                                           {"enable_oauth2_auth", UNSUP},
                                           {"service_account_settings", UNSUP},
                                           {"disable_master_key_return", UNSUP},
                                           {"disable_reset_budget", UNSUP},
                                           {"disable_retry_on_max_parallel_request_limit_error", UNSUP},
                                           {"enable_public_model_hub", UNSUP},
                                           {"disable_prisma_schema_update", UNSUP},
                                           {"custom_sso", PYONLY},
                                           {"allowed_user_roles", UNSUP},
                                           {"enforced_params", UNSUP},
                                           {"use_x_forwarded_for", UNSUP},
                                           {"user_header_name", UNSUP},
                                           {"mcp_client_side_auth_header_name", UNSUP},
                                           {"spend_report_frequency", UNSUP},
                                           {"store_audit_logs", UNSUP},
                                           {"embedding_model", UNSUP},
                                           {"use_shared_health_check", UNSUP},
                                           {"health_check_ignore_transient_errors", UNSUP},
                                           {"enable_health_check_routing", UNSUP},
                                           {NULL, USED}};

static const struct kdef entry_keys[] = {
    {"model_name", USED}, {"litellm_params", USED}, {"model_info", USED}, {"rpm", USED}, {"tpm", USED}, {NULL, USED}};

/* litellm_params keys read here; others are passed through in params[], except
 * those below that name a router feature switchyard lacks. */
static const struct kdef params_keys[] = {{"model", USED},
                                          {"api_base", USED},
                                          {"api_key", USED},
                                          {"api_version", USED},
                                          {"organization", USED},
                                          {"custom_llm_provider", USED},
                                          {"litellm_provider", USED},
                                          {"rpm", USED},
                                          {"tpm", USED},
                                          {"weight", USED},
                                          {"order", USED},
                                          {"timeout", USED},
                                          {"stream_timeout", USED},
                                          {"max_retries", USED},
                                          {"mock_response", USED},
                                          {"input_cost_per_token", USED},
                                          {"output_cost_per_token", USED},
                                          {"cache_read_input_token_cost", USED},
                                          {"cache_creation_input_token_cost", USED},
                                          {"output_cost_per_reasoning_token", USED},
                                          {"cache_creation_input_token_cost_above_1hr", USED},
                                          {"litellm_credential_name", USED},
                                          {"max_parallel_requests", USED},
                                          {"cooldown_time", USED},
                                          {"tags", USED},
                                          {"max_budget", UNSUP},
                                          {"budget_duration", UNSUP},
                                          {"use_in_pass_through", UNSUP},
                                          {"num_retries", USED},
                                          {"region_name", USED},
                                          {"additional_drop_params", UNSUP},
                                          {"merge_reasoning_content_in_choices", UNSUP},
                                          {"mock_timeout", USED},
                                          {NULL, USED}};

static const struct kdef *kfind(const struct kdef *t, const struct sy_ynode *k)
{
    if (k->kind != SY_Y_STR)
        return NULL;
    for (; t->name; t++)
        if (strlen(t->name) == k->len && memcmp(t->name, k->s, k->len) == 0)
            return t;
    return NULL;
}

static int asks_nothing(const struct sy_ynode *v)
{
    return v->kind == SY_Y_NULL || (v->kind == SY_Y_BOOL && !v->i) ||
           ((v->kind == SY_Y_MAP || v->kind == SY_Y_SEQ || v->kind == SY_Y_STR) && v->n == 0 && v->len == 0);
}

const char *sy__key_text(struct sy_ld *ld, const struct sy_ynode *k)
{
    if (k->kind == SY_Y_STR)
        return k->s;
    struct sy_buf b;
    sy_buf_init(&b, 256);
    sy__py_str(&b, k);
    const char *s = sy_arena_strndup(ld->a, b.p ? b.p : "", b.len);
    sy_buf_free(&b);
    return s;
}

/* Warn about every key of `map` that is not USED/QUIET. `section` is the path
 * prefix; `once` makes a key warn only the first time in this load. */
static void check_keys(struct sy_ld *ld, const struct sy_ynode *map, const struct kdef *t, const char *section,
                       int once, int warn_unknown)
{
    for (size_t i = 0; i < map->n; i++) {
        const struct sy_ynode *k = map->pairs[i].key, *v = map->pairs[i].val;
        const struct kdef *d = kfind(t, k);
        const char *name = sy__key_text(ld, k);
        char path[256];
        snprintf(path, sizeof path, "%s%s%s", section, *section ? "." : "", name);
        if (d && (d->cls == USED || d->cls == QUIET))
            continue;
        if (once && !sy__ld_first(ld, path))
            continue;
        if (d && d->cls == PYONLY) {
            if (!asks_nothing(v))
                sy__ld_warn(ld, k->file, k->line,
                            "%s: '%s' is a Python hook (LiteLLM imports it); switchyard cannot run Python, ignored",
                            path, v->kind == SY_Y_STR ? v->s : "...");
        } else if (d) {
            if (!asks_nothing(v))
                sy__ld_warn(ld, k->file, k->line, "%s: not supported yet, ignored", path);
        } else if (warn_unknown) {
            sy__ld_warn(ld, k->file, k->line, "unknown key %s (not a LiteLLM key), ignored", path);
        }
    }
}

/* ---- typed getters: absent/null -> 0; wrong type -> error, -1 ---- */

static int num_from_str(const struct sy_ynode *n, double *out)
{
    const char *s = n->s;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s)
        return -1;
    char *end;
    double d = strtod(s, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    if (*end || end == s || (size_t)(end - n->s) != n->len)
        return -1;
    *out = d;
    return 0;
}

int sy__get_num(struct sy_ld *ld, const struct sy_ynode *n, const char *path, int integer, double *out)
{
    if (!n || n->kind == SY_Y_NULL)
        return 0;
    double d;
    if (n->kind == SY_Y_INT || n->kind == SY_Y_FLOAT)
        d = n->d;
    else if (n->kind == SY_Y_STR && num_from_str(n, &d) == 0)
        ;
    else {
        sy__ld_error(ld, n->file, n->line, "%s: expected %s, found %s%s%.40s%s", path,
                     integer ? "an integer" : "a number", sy__ykind_name(n->kind), n->kind == SY_Y_STR ? " '" : "",
                     n->kind == SY_Y_STR ? n->s : "", n->kind == SY_Y_STR ? "'" : "");
        return -1;
    }
    if (isnan(d) || (integer && (d != floor(d) || isinf(d)))) {
        sy__ld_error(ld, n->file, n->line, "%s: expected %s", path, integer ? "an integer" : "a number");
        return -1;
    }
    if (integer && fabs(d) > 2147483647.0) {
        sy__ld_error(ld, n->file, n->line, "%s: integer out of range", path);
        return -1;
    }
    *out = d;
    return 1;
}

int sy__get_bool(struct sy_ld *ld, const struct sy_ynode *n, const char *path, int *out)
{
    if (!n || n->kind == SY_Y_NULL)
        return 0;
    if (n->kind == SY_Y_BOOL) {
        *out = (int)n->i;
        return 1;
    }
    if (n->kind == SY_Y_INT && (n->i == 0 || n->i == 1)) {
        *out = (int)n->i;
        return 1;
    }
    if (n->kind == SY_Y_STR) {
        static const char *const t[] = {"true", "yes", "on", "1", "t", "y"};
        static const char *const f[] = {"false", "no", "off", "0", "f", "n"};
        for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
            if (strcasecmp(n->s, t[i]) == 0) {
                *out = 1;
                return 1;
            }
            if (strcasecmp(n->s, f[i]) == 0) {
                *out = 0;
                return 1;
            }
        }
    }
    sy__ld_error(ld, n->file, n->line, "%s: expected true or false, found %s", path, sy__ykind_name(n->kind));
    return -1;
}

const char *sy__get_str(struct sy_ld *ld, const struct sy_ynode *n, const char *path)
{
    if (!n || n->kind == SY_Y_NULL)
        return NULL;
    if (n->kind != SY_Y_STR) {
        sy__ld_error(ld, n->file, n->line, "%s: expected a string, found %s", path, sy__ykind_name(n->kind));
        return NULL;
    }
    return n->s;
}

/* sy__get_num() that also refuses negative values (and 0 when `positive`). */
int sy__get_count(struct sy_ld *ld, const struct sy_ynode *n, const char *path, int integer, int positive, double *out)
{
    double d;
    int r = sy__get_num(ld, n, path, integer, &d);
    if (r <= 0)
        return r;
    if (d < 0 || (positive && d == 0)) {
        sy__ld_error(ld, n->file, n->line, "%s: must be %s, found %g", path, positive ? "greater than 0" : "0 or more",
                     d);
        return -1;
    }
    *out = d;
    return 1;
}

static const struct sy_ynode *section(struct sy_ld *ld, const struct sy_ynode *root, const char *name)
{
    const struct sy_ynode *s = sy__ymap_get(root, name);
    if (!s || s->kind == SY_Y_NULL)
        return NULL;
    if (s->kind != SY_Y_MAP) {
        sy__ld_error(ld, s->file, s->line, "%s: expected a map, found %s", name, sy__ykind_name(s->kind));
        return NULL;
    }
    return s;
}

/* ---- callbacks ---- */

static void add_callback(struct sy_ld *ld, const char ***list, size_t *n, size_t *cap, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*list)[i], name) == 0)
            return;
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        const char **l = sy_arena_alloc(ld->a, nc * sizeof *l);
        if (*list)
            memcpy(l, *list, *n * sizeof *l);
        *list = l;
        *cap = nc;
    }
    (*list)[(*n)++] = name;
}

static void read_callbacks_q(struct sy_ld *ld, const struct sy_ynode *ls, const char *key, const char ***list,
                             size_t *n, size_t *cap, int quiet)
{
    const struct sy_ynode *v = sy__ymap_get(ls, key);
    char path[96];
    snprintf(path, sizeof path, "litellm_settings.%s", key);
    if (!v || v->kind == SY_Y_NULL)
        return;
    if (v->kind == SY_Y_STR) { /* a single string is allowed (corpus 14) */
        add_callback(ld, list, n, cap, v->s);
        return;
    }
    if (v->kind != SY_Y_SEQ) {
        if (!quiet)
            sy__ld_error(ld, v->file, v->line, "%s: expected a list of callback names, found %s", path,
                         sy__ykind_name(v->kind));
        return;
    }
    for (size_t i = 0; i < v->n; i++) {
        const struct sy_ynode *it = v->items[i];
        if (it->kind == SY_Y_STR)
            add_callback(ld, list, n, cap, it->s);
        else if (!quiet)
            sy__ld_warn(ld, it->file, it->line, "%s: item is %s, not a callback name; ignored", path,
                        sy__ykind_name(it->kind));
    }
}

static void read_callbacks(struct sy_ld *ld, const struct sy_ynode *ls, const char *key, const char ***list, size_t *n,
                           size_t *cap)
{
    read_callbacks_q(ld, ls, key, list, n, cap, 0);
}
/* ---- sections ---- */

static const struct kdef cache_keys[] = {{"type", USED},
                                         {"host", USED},
                                         {"port", USED},
                                         {"password", USED},
                                         {"username", USED},
                                         {"db", USED},
                                         {"url", USED},
                                         {"redis_url", USED},
                                         {"ttl", USED},
                                         {"namespace", USED},
                                         {"mode", USED},
                                         {"supported_call_types", USED},
                                         {"max_size_in_memory", USED},
                                         {"switchyard_max_bytes", USED},
                                         {"switchyard_scope", USED},
                                         {"default_in_memory_ttl", USED},
                                         {"default_in_redis_ttl", USED},
                                         {"max_size_per_item", QUIET},
                                         {"ssl", UNSUP},
                                         {"redis_startup_nodes", UNSUP},
                                         {"sentinel_nodes", UNSUP},
                                         {"service_name", UNSUP},
                                         {"similarity_threshold", UNSUP},
                                         {"redis_semantic_cache_embedding_model", UNSUP},
                                         {"qdrant_semantic_cache_embedding_model", UNSUP},
                                         {"s3_bucket_name", UNSUP},
                                         {"gcs_bucket_name", UNSUP},
                                         {"disk_cache_dir", UNSUP},
                                         {"azure_account_url", UNSUP},
                                         {"azure_blob_container", UNSUP},
                                         {"gcp_service_account", UNSUP},
                                         {"gcp_ssl_ca_certs", UNSUP},
                                         {"max_connections", QUIET},
                                         {NULL, USED}};

/* litellm_settings.cache / cache_params (reference §7). type local | redis
 * (others: a warning, then local); a redis cache's host/port/password/db/url
 * also become the Redis of the router and the limiter when router_settings
 * names none (one connection per worker serves all three). */
static void fill_cache(struct sy_ld *ld, struct sy_config *c, const struct sy_ynode *ls)
{
    int b;
    double d;
    if (sy__get_bool(ld, sy__ymap_get(ls, "cache"), "litellm_settings.cache", &b) > 0)
        c->cache = b;
    const struct sy_ynode *cp = sy__ymap_get(ls, "cache_params");
    if (!cp || cp->kind == SY_Y_NULL)
        return;
    if (cp->kind != SY_Y_MAP) {
        sy__ld_error(ld, cp->file, cp->line, "litellm_settings.cache_params: expected a mapping");
        return;
    }
    check_keys(ld, cp, cache_keys, "litellm_settings.cache_params", 0, 1);
    const char *type = sy__get_str(ld, sy__ymap_get(cp, "type"), "litellm_settings.cache_params.type");
    if (type && strcmp(type, "redis") == 0) {
        c->cache_redis = 1;
    } else if (type && strcmp(type, "local") != 0) {
        if (c->cache)
            sy__ld_warn(ld, cp->file, cp->line,
                        "litellm_settings.cache_params.type: '%s' is not supported yet, using 'local'", type);
    }
    if (sy__get_count(ld, sy__ymap_get(cp, "ttl"), "litellm_settings.cache_params.ttl", 0, 1, &d) > 0)
        c->cache_ttl_s = d;
    else if (sy__get_count(ld, sy__ymap_get(cp, c->cache_redis ? "default_in_redis_ttl" : "default_in_memory_ttl"),
                           "litellm_settings.cache_params.default_ttl", 0, 1, &d) > 0)
        c->cache_ttl_s = d;
    c->cache_namespace = sy__get_str(ld, sy__ymap_get(cp, "namespace"), "litellm_settings.cache_params.namespace");
    if (c->cache_namespace && strlen(c->cache_namespace) > 250)
        sy__ld_error(ld, cp->file, cp->line, "litellm_settings.cache_params.namespace: longer than 250 bytes");
    const char *mode = sy__get_str(ld, sy__ymap_get(cp, "mode"), "litellm_settings.cache_params.mode");
    if (mode && strcmp(mode, "default_off") == 0)
        c->cache_default_off = 1;
    else if (mode && strcmp(mode, "default_on") != 0)
        sy__ld_error(ld, cp->file, cp->line, "litellm_settings.cache_params.mode: expected default_on or default_off");
    const char *scope =
        sy__get_str(ld, sy__ymap_get(cp, "switchyard_scope"), "litellm_settings.cache_params.switchyard_scope");
    if (scope && strcmp(scope, "team") == 0)
        c->cache_scope = SY_CACHE_SCOPE_TEAM;
    else if (scope && strcmp(scope, "key") == 0)
        c->cache_scope = SY_CACHE_SCOPE_KEY;
    else if (scope && strcmp(scope, "global") != 0)
        sy__ld_error(ld, cp->file, cp->line,
                     "litellm_settings.cache_params.switchyard_scope: expected global, team or key");
    const struct sy_ynode *ct = sy__ymap_get(cp, "supported_call_types");
    if (ct && ct->kind == SY_Y_SEQ) {
        c->cache_call_types = 0;
        for (size_t i = 0; i < ct->n; i++) {
            const struct sy_ynode *e = ct->items[i];
            if (e->kind != SY_Y_STR)
                continue;
            const char *t = e->s[0] == 'a' && e->s[1] != 'n' ? e->s + 1 : e->s; /* acompletion -> completion */
            if (strcmp(t, "completion") == 0)
                c->cache_call_types |= SY_CACHE_CT_CHAT;
            else if (strcmp(t, "text_completion") == 0)
                c->cache_call_types |= SY_CACHE_CT_TEXT;
            else if (strcmp(t, "embedding") == 0)
                c->cache_call_types |= SY_CACHE_CT_EMBED;
        }
    } else if (ct && ct->kind != SY_Y_NULL) {
        sy__ld_error(ld, ct->file, ct->line, "litellm_settings.cache_params.supported_call_types: expected a list");
    }
    if (sy__get_count(ld, sy__ymap_get(cp, "max_size_in_memory"), "litellm_settings.cache_params.max_size_in_memory", 1,
                      1, &d) > 0)
        c->cache_max_items = (size_t)d;
    if (sy__get_count(ld, sy__ymap_get(cp, "switchyard_max_bytes"),
                      "litellm_settings.cache_params.switchyard_max_bytes", 1, 1, &d) > 0)
        c->cache_max_bytes = (size_t)d;
    if (c->cache_redis) {
        struct sy_router_config tmp = {0};
        tmp.redis_port = 6379;
        const struct sy_ynode *h = sy__ymap_get(cp, "host"), *u = sy__ymap_get(cp, "url");
        if (!u)
            u = sy__ymap_get(cp, "redis_url");
        if (u || h) {
            c->cache_redis_host = sy__get_str(ld, h, "litellm_settings.cache_params.host");
            c->cache_redis_url = sy__get_str(ld, u, "litellm_settings.cache_params.url");
            if (sy__get_num(ld, sy__ymap_get(cp, "port"), "litellm_settings.cache_params.port", 1, &d) > 0)
                c->cache_redis_port = (int)d;
            if (sy__get_count(ld, sy__ymap_get(cp, "db"), "litellm_settings.cache_params.db", 1, 0, &d) > 0)
                c->cache_redis_db = (int)d;
            c->cache_redis_password =
                sy__get_str(ld, sy__ymap_get(cp, "password"), "litellm_settings.cache_params.password");
            c->cache_redis_username =
                sy__get_str(ld, sy__ymap_get(cp, "username"), "litellm_settings.cache_params.username");
        }
        (void)tmp;
    }
}

/* ---- logging callbacks (logging/logging.h) ----
 * litellm_settings.callbacks / success_callback / failure_callback: the
 * union stays in c->callbacks (prometheus reads it); the names a sink runs go
 * to success_callbacks (success_callback + callbacks) and failure_callbacks
 * (failure_callback + callbacks). prometheus is the metrics endpoint, not a
 * sink; a dotted name is a Python object LiteLLM imports (an error-level line:
 * it cannot run here, generic_api is the way to keep it); any other name no
 * sink implements warns "not supported yet". */

int (*sy_config_sink_known)(const char *name);
int sy_config_detailed_debug;

static int python_callback(const char *name)
{
    return strchr(name, '.') != NULL; /* "module.instance" */
}

static int sink_known(const char *name)
{
    return !sy_config_sink_known || sy_config_sink_known(name);
}

/* A name a sink runs: a sink's own, or one callback_settings gives a sink's
 * callback_type (a named generic_api webhook: {my_hook: {callback_type: generic_api}}). */
static int runs(const struct sy_ld *ld, const char *name)
{
    if (sink_known(name))
        return 1;
    const struct sy_ynode *e = ld->callback_settings ? sy__ymap_get(ld->callback_settings, name) : NULL;
    const struct sy_ynode *t = e && e->kind == SY_Y_MAP ? sy__ymap_get(e, "callback_type") : NULL;
    return t && t->kind == SY_Y_STR && sink_known(t->s);
}

/* The names of list[0..n) a sink runs, in the arena. */
static const char **runnable(struct sy_ld *ld, const char **list, size_t n, size_t *nout)
{
    const char **out = sy_arena_alloc(ld->a, (n ? n : 1) * sizeof *out);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], "prometheus") != 0 && !python_callback(list[i]) && runs(ld, list[i]))
            out[k++] = list[i];
    *nout = k;
    return out;
}

static void fill_callbacks(struct sy_ld *ld, struct sy_config *c, const struct sy_ynode *ls)
{
    const char **list = NULL;
    size_t n = 0, cap = 0;
    read_callbacks(ld, ls, "callbacks", &list, &n, &cap);
    read_callbacks(ld, ls, "success_callback", &list, &n, &cap);
    read_callbacks(ld, ls, "failure_callback", &list, &n, &cap);
    c->callbacks = list;
    c->n_callbacks = n;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(list[i], "prometheus") == 0)
            c->prometheus = 1;
        else if (python_callback(list[i]))
            sy__ld_alert(ld, ls->file, ls->line,
                         "litellm_settings: callback '%s' is a Python object (a custom logger LiteLLM imports); "
                         "switchyard cannot run Python, so it is not called. To keep a custom logger, serve it as "
                         "an HTTP endpoint and use the generic_api callback (GENERIC_LOGGER_ENDPOINT): it receives "
                         "each request's StandardLoggingPayload",
                         list[i]);
        else if (!runs(ld, list[i]))
            sy__ld_warn(ld, ls->file, ls->line, "litellm_settings: callback '%s' not supported yet, ignored", list[i]);
    }
    const char **succ = NULL, **fail = NULL;
    size_t ns = 0, nf = 0, cs = 0, cf = 0;
    read_callbacks_q(ld, ls, "success_callback", &succ, &ns, &cs, 1); /* warned above */
    read_callbacks_q(ld, ls, "callbacks", &succ, &ns, &cs, 1);
    read_callbacks_q(ld, ls, "failure_callback", &fail, &nf, &cf, 1);
    read_callbacks_q(ld, ls, "callbacks", &fail, &nf, &cf, 1);
    c->success_callbacks = runnable(ld, succ, ns, &c->n_success_callbacks);
    c->failure_callbacks = runnable(ld, fail, nf, &c->n_failure_callbacks);
}

/* litellm_settings.service_callback(s): LiteLLM's service-health loggers
 * (_service_logger.py ServiceLogging: prometheus_system, datadog, otel, a
 * CustomLogger object; other names it ignores). prometheus is the /metrics
 * endpoint; datadog and otel service events are not sent: one warning each. */
static void read_service_callbacks(struct sy_ld *ld, const struct sy_ynode *ls, const char *key)
{
    const struct sy_ynode *v = sy__ymap_get(ls, key);
    if (!v || v->kind == SY_Y_NULL)
        return;
    const struct sy_ynode *one[1] = {v};
    const struct sy_ynode *const *items = v->kind == SY_Y_SEQ ? (const struct sy_ynode *const *)v->items : one;
    size_t n = v->kind == SY_Y_SEQ ? v->n : 1;
    for (size_t i = 0; i < n; i++) {
        const struct sy_ynode *it = items[i];
        if (it->kind != SY_Y_STR)
            sy__ld_warn(ld, it->file, it->line, "litellm_settings.%s: item is %s, not a callback name; ignored", key,
                        sy__ykind_name(it->kind));
        else if (!strcmp(it->s, "datadog") || !strcmp(it->s, "otel"))
            sy__ld_warn(ld, it->file, it->line,
                        "litellm_settings.%s: '%s' not supported (only prometheus: service health is in /metrics), "
                        "ignored",
                        key, it->s);
        else if (python_callback(it->s))
            sy__ld_alert(ld, it->file, it->line,
                         "litellm_settings.%s: '%s' is a Python object (a custom logger LiteLLM imports); switchyard "
                         "cannot run Python, so it is not called",
                         key, it->s);
        /* prometheus / prometheus_system: /metrics; other names LiteLLM's ServiceLogging ignores too */
    }
}

/* A map (or, with list, a list) as JSON text in the arena; NULL when absent
 * or null; an error naming path for another kind. */
static const char *json_of(struct sy_ld *ld, const struct sy_ynode *v, const char *path, int list)
{
    if (!v || v->kind == SY_Y_NULL)
        return NULL;
    if (v->kind != (list ? SY_Y_SEQ : SY_Y_MAP)) {
        sy__ld_error(ld, v->file, v->line, "%s: expected a %s, found %s", path, list ? "list" : "map",
                     sy__ykind_name(v->kind));
        return NULL;
    }
    struct sy_buf b;
    sy_buf_init(&b, 16u << 20);
    sy__py_json(&b, v);
    const char *s = sy_buf_failed(&b) ? NULL : sy_arena_strndup(ld->a, b.p ? b.p : "", b.len);
    sy_buf_free(&b);
    return s;
}

/* LiteLLM's duration_in_seconds: digits then s, m, h, d, w or mo ("30d");
 * a bare number is seconds. -1 when it is neither. */
static double duration_s(const char *s)
{
    const char *u = s;
    while (*u >= '0' && *u <= '9')
        u++;
    if (u == s || u - s > 9)
        return -1;
    double n = strtod(s, NULL);
    if (!*u)
        return n;
    if (!strcmp(u, "s"))
        return n;
    if (!strcmp(u, "m"))
        return n * 60;
    if (!strcmp(u, "h"))
        return n * 3600;
    if (!strcmp(u, "d"))
        return n * 86400;
    if (!strcmp(u, "w"))
        return n * 7 * 86400;
    if (!strcmp(u, "mo"))
        return n * 30 * 86400;
    return -1;
}

static int read_duration(struct sy_ld *ld, const struct sy_ynode *gs, const char *key, double *out)
{
    const struct sy_ynode *v = sy__ymap_get(gs, key);
    if (!v || v->kind == SY_Y_NULL)
        return 0;
    double d = -1;
    if (v->kind == SY_Y_INT || v->kind == SY_Y_FLOAT)
        d = v->d;
    else if (v->kind == SY_Y_STR)
        d = duration_s(v->s);
    if (!(d > 0) || !isfinite(d)) {
        sy__ld_error(ld, v->file, v->line,
                     "general_settings.%s: expected a duration (\"1h\", \"7d\", \"30d\", \"1w\", \"1mo\") or seconds",
                     key);
        return -1;
    }
    *out = d;
    return 1;
}

/* The rest of litellm_settings' logging: redaction, operator logs, S3 and per-team settings, the queues. */
static void fill_logging(struct sy_ld *ld, struct sy_config *c, const struct sy_ynode *ls)
{
    int b;
    double d;
    if (sy__get_bool(ld, sy__ymap_get(ls, "skip_system_message_in_guardrail"),
                     "litellm_settings.skip_system_message_in_guardrail", &b) > 0)
        c->skip_system_message_in_guardrail = b;
    if (sy__get_bool(ld, sy__ymap_get(ls, "skip_tool_message_in_guardrail"),
                     "litellm_settings.skip_tool_message_in_guardrail", &b) > 0)
        c->skip_tool_message_in_guardrail = b;
    if (sy__get_bool(ld, sy__ymap_get(ls, "turn_off_message_logging"), "litellm_settings.turn_off_message_logging",
                     &b) > 0)
        c->turn_off_message_logging = b;
    if (sy__get_bool(ld, sy__ymap_get(ls, "redact_user_api_key_info"), "litellm_settings.redact_user_api_key_info",
                     &b) > 0)
        c->redact_user_api_key_info = b;
    if (sy__get_bool(ld, sy__ymap_get(ls, "json_logs"), "litellm_settings.json_logs", &b) > 0)
        c->json_logs = b;
    read_service_callbacks(ld, ls, "service_callback");
    read_service_callbacks(ld, ls, "service_callbacks");
    c->s3_callback_params =
        json_of(ld, sy__ymap_get(ls, "s3_callback_params"), "litellm_settings.s3_callback_params", 0);
    const struct sy_ynode *dts = sy__ymap_get(ls, "default_team_settings");
    c->default_team_settings = json_of(ld, dts, "litellm_settings.default_team_settings", 1);
    c->legacy_guardrails = json_of(ld, sy__ymap_get(ls, "guardrails"), "litellm_settings.guardrails", 1);
    c->mcp_aliases = json_of(ld, sy__ymap_get(ls, "mcp_aliases"), "litellm_settings.mcp_aliases", 0);
    if (c->default_team_settings)
        for (size_t i = 0; i < dts->n; i++) {
            const struct sy_ynode *t = dts->items[i], *id = sy__ymap_get(t, "team_id");
            if (t->kind != SY_Y_MAP || !id || id->kind != SY_Y_STR)
                sy__ld_warn(ld, t->file, t->line,
                            "litellm_settings.default_team_settings[%zu]: not a map with a team_id; ignored", i);
        }
    if (sy__get_count(ld, sy__ymap_get(ls, "switchyard_callback_batch_interval"),
                      "litellm_settings.switchyard_callback_batch_interval", 0, 1, &d) > 0)
        c->callback_batch_interval_s = d;
    if (sy__get_count(ld, sy__ymap_get(ls, "switchyard_callback_queue_max"),
                      "litellm_settings.switchyard_callback_queue_max", 1, 1, &d) > 0)
        c->callback_queue_max = (size_t)d;
}

/* list[0..*n) with name appended, in the arena. */
static const char **append_name(struct sy_ld *ld, const char **list, size_t *n, const char *name)
{
    const char **out = sy_arena_alloc(ld->a, (*n + 1) * sizeof *out);
    if (!out)
        return list;
    for (size_t i = 0; i < *n; i++)
        out[i] = list[i];
    out[(*n)++] = name;
    return out;
}

/* general_settings: prompts in SpendLogs, alerting, spend-log retention. */
static void fill_general_logging(struct sy_ld *ld, struct sy_config *c, const struct sy_ynode *gs)
{
    double d;
    /* LiteLLM (_should_store_prompts_and_responses_in_spend_logs): the setting
     * `is True`, else STORE_PROMPTS_IN_SPEND_LOGS read as a bool; anything else is off */
    const struct sy_ynode *sp = sy__ymap_get(gs, "store_prompts_in_spend_logs");
    if (sp && sp->kind == SY_Y_BOOL)
        c->store_prompts_in_spend_logs = (int)sp->i;
    else if (sp && sp->kind != SY_Y_NULL)
        sy__ld_warn(ld, sp->file, sp->line,
                    "general_settings.store_prompts_in_spend_logs: not true or false (%s%s%.40s%s); off, as LiteLLM",
                    sy__ykind_name(sp->kind), sp->kind == SY_Y_STR ? " '" : "", sp->kind == SY_Y_STR ? sp->s : "",
                    sp->kind == SY_Y_STR ? "'" : "");
    const char *spe = getenv("STORE_PROMPTS_IN_SPEND_LOGS");
    if (!c->store_prompts_in_spend_logs && spe && !strcasecmp(spe, "true"))
        c->store_prompts_in_spend_logs = 1;
    const struct sy_ynode *al = sy__ymap_get(gs, "alerting");
    if (al && al->kind != SY_Y_NULL) {
        const struct sy_ynode *one[1] = {al};
        const struct sy_ynode *const *items = al->kind == SY_Y_SEQ ? (const struct sy_ynode *const *)al->items : one;
        size_t n = al->kind == SY_Y_SEQ ? al->n : 1;
        for (size_t i = 0; i < n; i++) {
            const struct sy_ynode *it = items[i];
            if (it->kind == SY_Y_STR && !strcmp(it->s, "slack"))
                c->alerting_slack = 1;
            else if (it->kind == SY_Y_STR && !strcmp(it->s, "email"))
                sy__ld_warn(ld, it->file, it->line,
                            "general_settings.alerting: 'email' not supported, ignored "
                            "(slack is: SLACK_WEBHOOK_URL)");
            else if (it->kind == SY_Y_MAP && !it->n)
                ; /* an empty entry asks for nothing */
            else
                sy__ld_warn(ld, it->file, it->line, "general_settings.alerting: '%s' not supported, ignored",
                            it->kind == SY_Y_STR ? it->s : sy__ykind_name(it->kind));
        }
    }
    if (sy__get_count(ld, sy__ymap_get(gs, "alerting_threshold"), "general_settings.alerting_threshold", 0, 1, &d) > 0)
        c->alerting_threshold_s = d;
    c->alert_types = json_of(ld, sy__ymap_get(gs, "alert_types"), "general_settings.alert_types", 1);
    c->alerting_args = json_of(ld, sy__ymap_get(gs, "alerting_args"), "general_settings.alerting_args", 0);
    if (read_duration(ld, gs, "maximum_spend_logs_retention_period", &d) > 0)
        c->spend_logs_retention_s = d;
    if (read_duration(ld, gs, "maximum_spend_logs_retention_interval", &d) > 0)
        c->spend_logs_retention_interval_s = d;
    /* otel: true (LiteLLM: OpenTelemetry on for the proxy's requests) is the otel
     * callback, added to both lists when litellm_settings did not name it */
    int otel = 0;
    if (sy__get_bool(ld, sy__ymap_get(gs, "otel"), "general_settings.otel", &otel) > 0 && otel && runs(ld, "otel")) {
        int in_s = 0, in_f = 0;
        for (size_t i = 0; i < c->n_success_callbacks; i++)
            in_s |= !strcmp(c->success_callbacks[i], "otel");
        for (size_t i = 0; i < c->n_failure_callbacks; i++)
            in_f |= !strcmp(c->failure_callbacks[i], "otel");
        if (!in_s)
            c->success_callbacks = append_name(ld, c->success_callbacks, &c->n_success_callbacks, "otel");
        if (!in_f)
            c->failure_callbacks = append_name(ld, c->failure_callbacks, &c->n_failure_callbacks, "otel");
    }
}

static const char *value_text(struct sy_ld *ld, const struct sy_ynode *v);

static void fill_litellm(struct sy_ld *ld, struct sy_config *c, const struct sy_ynode *ls)
{
    check_keys(ld, ls, litellm_keys, "litellm_settings", 0, 1);
    double d;
    int b;
    if (sy__get_bool(ld, sy__ymap_get(ls, "drop_params"), "litellm_settings.drop_params", &b) > 0)
        c->drop_params = b;
    if (sy__get_bool(ld, sy__ymap_get(ls, "include_cost_in_streaming_usage"),
                     "litellm_settings.include_cost_in_streaming_usage", &b) > 0)
        c->include_cost_in_streaming_usage = b;
    if (sy__get_num(ld, sy__ymap_get(ls, "num_retries"), "litellm_settings.num_retries", 1, &d) > 0)
        c->num_retries = (int)d;
    if (sy__get_num(ld, sy__ymap_get(ls, "request_timeout"), "litellm_settings.request_timeout", 0, &d) > 0)
        c->request_timeout_s = d;
    c->vertex_project = sy__get_str(ld, sy__ymap_get(ls, "vertex_project"), "litellm_settings.vertex_project");
    c->vertex_location = sy__get_str(ld, sy__ymap_get(ls, "vertex_location"), "litellm_settings.vertex_location");
    /* the proxy-wide budget (stages/budget.c) */
    const struct sy_ynode *mb = sy__ymap_get(ls, "max_budget");
    if (sy__get_num(ld, mb, "litellm_settings.max_budget", 0, &d) > 0) {
        if (d < 0 || !isfinite(d))
            sy__ld_error(ld, mb->file, mb->line, "litellm_settings.max_budget: must be a number >= 0");
        else
            c->max_budget = d;
    }
    const struct sy_ynode *bd = sy__ymap_get(ls, "budget_duration");
    const char *dur = sy__get_str(ld, bd, "litellm_settings.budget_duration");
    if (dur && *dur) {
        /* LiteLLM's grammar (spend/duration.c): digits, then s, m, h, d, w or mo */
        const char *u = dur;
        while (*u >= '0' && *u <= '9')
            u++;
        if (u == dur || u - dur > 9 || !*u || !strchr("smhdw", *u))
            sy__ld_error(ld, bd->file, bd->line,
                         "litellm_settings.budget_duration: \"%s\" is not a duration (\"30s\", \"30m\", \"30h\", "
                         "\"30d\", \"1w\", \"1mo\")",
                         dur);
        else
            c->budget_duration = dur;
    }
    if (sy__get_bool(ld, sy__ymap_get(ls, "require_auth_for_metrics_endpoint"),
                     "litellm_settings.require_auth_for_metrics_endpoint", &b) > 0)
        c->require_auth_for_metrics_endpoint = b;
    const struct sy_ynode *sv = sy__ymap_get(ls, "ssl_verify");
    if (sv && sv->kind == SY_Y_STR && sv->len) {
        c->ssl_verify = 1;
        c->ssl_ca_file = sv->s;
    } else if (sy__get_bool(ld, sv, "litellm_settings.ssl_verify", &b) > 0) {
        c->ssl_verify = b;
    }
    c->access_log =
        sy__get_str(ld, sy__ymap_get(ls, "switchyard_access_log"), "litellm_settings.switchyard_access_log");
    if (sy__get_count(ld, sy__ymap_get(ls, "max_internal_user_budget"), "litellm_settings.max_internal_user_budget", 0,
                      0, &d) > 0)
        c->max_internal_user_budget = d;
    c->internal_user_budget_duration = sy__get_str(ld, sy__ymap_get(ls, "internal_user_budget_duration"),
                                                   "litellm_settings.internal_user_budget_duration");
    const struct sy_ynode *dip = sy__ymap_get(ls, "default_internal_user_params");
    if (dip && dip->kind == SY_Y_MAP)
        c->default_internal_user_params = value_text(ld, dip);
    else if (dip && dip->kind != SY_Y_NULL)
        sy__ld_error(ld, dip->file, dip->line, "litellm_settings.default_internal_user_params must be a mapping");
    fill_cache(ld, c, ls);
    sy__read_fallback_lists(ld, &c->router, ls, "litellm_settings");
    if (sy__get_count(ld, sy__ymap_get(ls, "max_fallbacks"), "litellm_settings.max_fallbacks", 1, 0, &d) > 0)
        c->router.max_fallbacks = (int)d;
    if (sy__get_count(ld, sy__ymap_get(ls, "allowed_fails"), "litellm_settings.allowed_fails", 1, 0, &d) > 0)
        c->router.allowed_fails = (int)d;

    fill_callbacks(ld, c, ls);
    fill_logging(ld, c, ls);
}

static void fill_router(struct sy_ld *ld, struct sy_config *c, const struct sy_ynode *rs, const char *file)
{
    static const char *const strategies[] = {"simple-shuffle",        "least-busy",
                                             "usage-based-routing",   "usage-based-routing-v2",
                                             "latency-based-routing", "cost-based-routing"};
    struct sy_router_config *r = &c->router;
    check_keys(ld, rs, router_keys, "router_settings", 0, 1);
    double d;
    int b;
    const struct sy_ynode *st = sy__ymap_get(rs, "routing_strategy");
    const char *s = sy__get_str(ld, st, "router_settings.routing_strategy");
    if (s) {
        size_t i = 0;
        while (i < sizeof strategies / sizeof *strategies && strcmp(s, strategies[i]) != 0)
            i++;
        if (i < sizeof strategies / sizeof *strategies)
            c->routing_strategy = strategies[i];
        else
            sy__ld_warn(ld, st->file, st->line,
                        "router_settings.routing_strategy: unknown or unsupported strategy '%s', using "
                        "simple-shuffle",
                        s);
    }
    if (sy__get_num(ld, sy__ymap_get(rs, "num_retries"), "router_settings.num_retries", 1, &d) > 0)
        c->router_num_retries = (int)d;
    if (sy__get_num(ld, sy__ymap_get(rs, "timeout"), "router_settings.timeout", 0, &d) > 0)
        c->router_timeout_s = d;
    const struct sy_ynode *dp = sy__ymap_get(rs, "default_litellm_params");
    if (dp && dp->kind != SY_Y_NULL && dp->kind != SY_Y_MAP)
        sy__ld_error(ld, dp->file, dp->line, "router_settings.default_litellm_params: expected a map, found %s",
                     sy__ykind_name(dp->kind));

    const struct sy_ynode *args = sy__ymap_get(rs, "routing_strategy_args");
    if (args && args->kind == SY_Y_MAP) {
        for (size_t i = 0; i < args->n; i++) {
            const struct sy_ynode *k = args->pairs[i].key;
            if (k->kind != SY_Y_STR || (strcmp(k->s, "ttl") != 0 && strcmp(k->s, "lowest_latency_buffer") != 0 &&
                                        strcmp(k->s, "max_latency_list_size") != 0))
                sy__ld_warn(ld, k->file, k->line,
                            "unknown key router_settings.routing_strategy_args.%s (not a LiteLLM key), ignored",
                            sy__key_text(ld, k));
        }
        if (sy__get_count(ld, sy__ymap_get(args, "ttl"), "router_settings.routing_strategy_args.ttl", 0, 1, &d) > 0)
            r->latency_ttl_s = d;
        if (sy__get_count(ld, sy__ymap_get(args, "lowest_latency_buffer"),
                          "router_settings.routing_strategy_args.lowest_latency_buffer", 0, 0, &d) > 0)
            r->lowest_latency_buffer = d;
        if (sy__get_count(ld, sy__ymap_get(args, "max_latency_list_size"),
                          "router_settings.routing_strategy_args.max_latency_list_size", 1, 1, &d) > 0)
            r->max_latency_list_size = (int)d;
    } else if (args && args->kind != SY_Y_NULL) {
        sy__ld_error(ld, args->file, args->line, "router_settings.routing_strategy_args: expected a map, found %s",
                     sy__ykind_name(args->kind));
    }

    if (sy__get_count(ld, sy__ymap_get(rs, "retry_after"), "router_settings.retry_after", 0, 0, &d) > 0)
        r->retry_after_s = d;
    if (sy__read_policy(ld, sy__ymap_get(rs, "retry_policy"), "router_settings.retry_policy", "Retries",
                        r->retry_policy) > 0)
        r->has_retry_policy = 1;
    if (sy__read_policy(ld, sy__ymap_get(rs, "allowed_fails_policy"), "router_settings.allowed_fails_policy",
                        "AllowedFails", r->allowed_fails_policy) > 0)
        r->has_allowed_fails_policy = 1;
    if (sy__get_count(ld, sy__ymap_get(rs, "allowed_fails"), "router_settings.allowed_fails", 1, 0, &d) > 0)
        r->allowed_fails = (int)d;
    if (sy__get_count(ld, sy__ymap_get(rs, "cooldown_time"), "router_settings.cooldown_time", 0, 0, &d) > 0)
        r->cooldown_time_s = d;
    if (sy__get_bool(ld, sy__ymap_get(rs, "disable_cooldowns"), "router_settings.disable_cooldowns", &b) > 0)
        r->disable_cooldowns = b;
    if (sy__get_count(ld, sy__ymap_get(rs, "stream_timeout"), "router_settings.stream_timeout", 0, 0, &d) > 0)
        r->stream_timeout_s = d;
    if (sy__get_count(ld, sy__ymap_get(rs, "max_fallbacks"), "router_settings.max_fallbacks", 1, 0, &d) > 0)
        r->max_fallbacks = (int)d;
    sy__read_fallback_lists(ld, r, rs, "router_settings");
    if (sy__get_bool(ld, sy__ymap_get(rs, "enable_pre_call_checks"), "router_settings.enable_pre_call_checks", &b) > 0)
        r->enable_pre_call_checks = b;
    sy__read_aliases(ld, sy__ymap_get(rs, "model_group_alias"), "router_settings.model_group_alias", &r->aliases,
                     &r->n_aliases);
    if (sy__get_count(ld, sy__ymap_get(rs, "default_max_parallel_requests"),
                      "router_settings.default_max_parallel_requests", 1, 0, &d) > 0)
        r->default_max_parallel_requests = (int)d;
    if (sy__get_bool(ld, sy__ymap_get(rs, "enable_tag_filtering"), "router_settings.enable_tag_filtering", &b) > 0)
        r->enable_tag_filtering = b;
    if (sy__get_bool(ld, sy__ymap_get(rs, "tag_filtering_match_any"), "router_settings.tag_filtering_match_any", &b) >
        0)
        r->tag_filtering_match_any = b;
    sy__read_provider_budgets(ld, sy__ymap_get(rs, "provider_budget_config"), r);
    sy__fill_redis(ld, r, rs, file);
}

static int positive(struct sy_ld *ld, const struct sy_ynode *gs, const char *key, int integer, double *out)
{
    char path[96];
    snprintf(path, sizeof path, "general_settings.%s", key);
    const struct sy_ynode *n = sy__ymap_get(gs, key);
    double d;
    int r = sy__get_num(ld, n, path, integer, &d);
    if (r <= 0)
        return 0;
    if (d <= 0) {
        sy__ld_error(ld, n->file, n->line, "%s: must be greater than 0", path);
        return 0;
    }
    *out = d;
    return 1;
}

static void fill_general(struct sy_ld *ld, struct sy_config *c, const struct sy_ynode *gs)
{
    check_keys(ld, gs, general_keys, "general_settings", 0, 1);
    const struct sy_ynode *mk = sy__ymap_get(gs, "master_key");
    c->master_key = sy__get_str(ld, mk, "general_settings.master_key");
    if (c->master_key && strncmp(c->master_key, "sk-", 3) != 0)
        sy__ld_warn(ld, mk->file, mk->line,
                    "general_settings.master_key does not start with 'sk-' (LiteLLM requires it)");
    double d;
    if (positive(ld, gs, "max_request_size_mb", 0, &d))
        c->max_request_size_mb = d;
    if (positive(ld, gs, "switchyard_max_header_bytes", 1, &d)) {
        const struct sy_ynode *n = sy__ymap_get(gs, "switchyard_max_header_bytes");
        if (d > 1048576) { /* http/server.h SY_MAX_HEADER_BYTES_MAX */
            sy__ld_warn(ld, n->file, n->line,
                        "general_settings.switchyard_max_header_bytes: %.0f is over the maximum 1048576; using 1048576",
                        d);
            d = 1048576;
        }
        c->max_header_bytes = (size_t)d;
    }
    const struct sy_ynode *co = sy__ymap_get(gs, "switchyard_cors_allowed_origins");
    if (co && co->kind != SY_Y_NULL) {
        char *list = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&list, &len);
        if (co->kind == SY_Y_STR) {
            for (const char *q = co->s; *q; q++)
                fputc(*q == ',' ? '\n' : *q, m);
        } else if (co->kind == SY_Y_SEQ) {
            for (size_t i = 0; i < co->n; i++) {
                if (co->items[i]->kind == SY_Y_STR)
                    fprintf(m, "%s\n", co->items[i]->s);
                else
                    sy__ld_warn(ld, co->items[i]->file, co->items[i]->line,
                                "general_settings.switchyard_cors_allowed_origins: item is %s, not an origin; ignored",
                                sy__ykind_name(co->items[i]->kind));
            }
        } else {
            sy__ld_error(ld, co->file, co->line,
                         "general_settings.switchyard_cors_allowed_origins: expected a list of origins, found %s",
                         sy__ykind_name(co->kind));
        }
        fclose(m);
        /* trim spaces around each origin */
        char *o = list, *w = list;
        for (char *q = list; q && *q;) {
            char *e = strchr(q, '\n');
            if (!e)
                e = q + strlen(q);
            while (q < e && (*q == ' ' || *q == '\t'))
                q++;
            char *t = e;
            while (t > q && (t[-1] == ' ' || t[-1] == '\t'))
                t--;
            if (t > q) {
                memmove(w, q, (size_t)(t - q));
                w += t - q;
                *w++ = '\n';
            }
            q = *e ? e + 1 : e;
        }
        if (o)
            *w = 0;
        c->cors_origins = sy_arena_strndup(ld->a, o ? o : "", o ? strlen(o) : 0);
        free(list);
    }
    sy__fill_pass_through(ld, sy__ymap_get(gs, "pass_through_endpoints"));
    if (positive(ld, gs, "switchyard_header_timeout_s", 0, &d))
        c->header_timeout_s = d;
    if (positive(ld, gs, "switchyard_body_timeout_s", 0, &d))
        c->body_timeout_s = d;
    if (positive(ld, gs, "switchyard_body_total_timeout_s", 0, &d))
        c->body_total_timeout_s = d;
    if (positive(ld, gs, "switchyard_keepalive_timeout_s", 0, &d))
        c->keepalive_timeout_s = d;
    if (positive(ld, gs, "switchyard_mcp_sse_max_streams", 1, &d)) /* stages/mcp_sse.c */
        c->mcp_sse_max_streams = (size_t)d;
    int b;
    if (sy__get_bool(ld, sy__ymap_get(gs, "background_health_checks"), "general_settings.background_health_checks",
                     &b) > 0)
        c->router.background_health_checks = b;
    /* keys and spend */
    c->database_url = sy__get_str(ld, sy__ymap_get(gs, "database_url"), "general_settings.database_url");
    if (sy__get_bool(ld, sy__ymap_get(gs, "allow_requests_on_db_unavailable"),
                     "general_settings.allow_requests_on_db_unavailable", &b) > 0)
        c->allow_requests_on_db_unavailable = b;
    if (sy__get_bool(ld, sy__ymap_get(gs, "disable_spend_logs"), "general_settings.disable_spend_logs", &b) > 0)
        c->disable_spend_logs = b;
    if (sy__get_bool(ld, sy__ymap_get(gs, "disable_error_logs"), "general_settings.disable_error_logs", &b) > 0)
        c->disable_error_logs = b;
    const struct sy_ynode *pl = sy__ymap_get(gs, "database_connection_pool_limit");
    if (sy__get_count(ld, pl, "general_settings.database_connection_pool_limit", 1, 1, &d) > 0) {
        if (d > SY_DB_THREADS_MAX) {
            sy__ld_warn(ld, pl->file, pl->line,
                        "general_settings.database_connection_pool_limit: %g is more than %d; using %d", d,
                        SY_DB_THREADS_MAX, SY_DB_THREADS_MAX);
            d = SY_DB_THREADS_MAX;
        }
        c->database_connection_pool_limit = (int)d;
    }
    if (positive(ld, gs, "proxy_batch_write_at", 0, &d))
        c->proxy_batch_write_at_s = d;
    if (positive(ld, gs, "switchyard_ui_session_ttl", 0, &d)) /* the admin UI's session lifetime, seconds */
        c->ui_session_ttl_s = d < 60 ? 60 : d > 31536000 ? 31536000 : d;
    /* the budget-reset job's interval: a random time in [min, max], chosen at start (LiteLLM: 597 / 605) */
    if (positive(ld, gs, "proxy_budget_rescheduler_min_time", 0, &d))
        c->budget_resched_min_s = d;
    if (positive(ld, gs, "proxy_budget_rescheduler_max_time", 0, &d))
        c->budget_resched_max_s = d;
    if (c->budget_resched_min_s > 0 || c->budget_resched_max_s > 0) {
        if (c->budget_resched_min_s <= 0)
            c->budget_resched_min_s = c->budget_resched_max_s < 597 ? c->budget_resched_max_s : 597;
        if (c->budget_resched_max_s <= 0)
            c->budget_resched_max_s = c->budget_resched_min_s > 605 ? c->budget_resched_min_s : 605;
        if (c->budget_resched_min_s > c->budget_resched_max_s) {
            const struct sy_ynode *n = sy__ymap_get(gs, "proxy_budget_rescheduler_min_time");
            sy__ld_error(ld, n ? n->file : NULL, n ? n->line : 0,
                         "general_settings.proxy_budget_rescheduler_min_time: %g is greater than "
                         "proxy_budget_rescheduler_max_time %g",
                         c->budget_resched_min_s, c->budget_resched_max_s);
        }
    }
    if (positive(ld, gs, "user_api_key_cache_ttl", 0, &d))
        c->user_api_key_cache_ttl_s = d;
    if (positive(ld, gs, "switchyard_spend_queue_max", 1, &d))
        c->spend_queue_max = (size_t)d;
    if (positive(ld, gs, "switchyard_mcp_max_tool_rounds", 1, &d))
        c->mcp_max_rounds = d > 100 ? 100 : (int)d;
    c->model_prices_path =
        sy__get_str(ld, sy__ymap_get(gs, "switchyard_model_prices"), "general_settings.switchyard_model_prices");
    if (sy__get_bool(ld, sy__ymap_get(gs, "reject_clientside_metadata_tags"),
                     "general_settings.reject_clientside_metadata_tags", &b) > 0)
        c->reject_clientside_metadata_tags = b;
    if (sy__get_bool(ld, sy__ymap_get(gs, "switchyard_mcp_stdio_from_api"),
                     "general_settings.switchyard_mcp_stdio_from_api", &b) > 0)
        c->mcp_stdio_from_api = b;
    if (sy__get_count(ld, sy__ymap_get(gs, "global_max_parallel_requests"),
                      "general_settings.global_max_parallel_requests", 1, 1, &d) > 0)
        c->global_max_parallel = (long)d;
    const char *trl =
        sy__get_str(ld, sy__ymap_get(gs, "token_rate_limit_type"), "general_settings.token_rate_limit_type");
    if (trl) {
        if (strcmp(trl, "input") == 0)
            c->token_rate_limit_type = 1;
        else if (strcmp(trl, "output") == 0)
            c->token_rate_limit_type = 2;
        else if (strcmp(trl, "total") != 0)
            sy__ld_error(ld, gs->file, gs->line,
                         "general_settings.token_rate_limit_type: expected input, output or total, found '%s'", trl);
    }
    const char *up =
        sy__get_str(ld, sy__ymap_get(gs, "switchyard_unpriced_models"), "general_settings.switchyard_unpriced_models");
    if (up) {
        if (strcmp(up, "allow") == 0)
            c->unpriced_models = SY_UNPRICED_ALLOW;
        else if (strcmp(up, "zero_cost_warn") == 0)
            c->unpriced_models = SY_UNPRICED_WARN;
        else if (strcmp(up, "reject") != 0)
            sy__ld_error(ld, gs->file, gs->line,
                         "general_settings.switchyard_unpriced_models: expected reject, allow or zero_cost_warn, "
                         "found '%s'",
                         up);
    }
    const char *rf = sy__get_str(ld, sy__ymap_get(gs, "switchyard_rate_limit_redis_failure"),
                                 "general_settings.switchyard_rate_limit_redis_failure");
    if (rf) {
        if (strcmp(rf, "closed") == 0)
            c->limits_fail_closed = 1;
        else if (strcmp(rf, "open") != 0)
            sy__ld_error(ld, gs->file, gs->line,
                         "general_settings.switchyard_rate_limit_redis_failure: expected open or closed, found '%s'",
                         rf);
    }
    if (positive(ld, gs, "health_check_interval", 0, &d))
        c->router.health_check_interval_s = d;
    fill_general_logging(ld, c, gs);
}

/* ---- model_list ---- */

struct fill_ctx {
    const struct sy_ynode *creds;    /* credential_list (SEQ) or NULL */
    const struct sy_ynode *defaults; /* router_settings.default_litellm_params (MAP) or NULL */
};

static const struct sy_ynode *credential(struct fill_ctx *fc, const char *name)
{
    if (!fc->creds)
        return NULL;
    for (size_t i = 0; i < fc->creds->n; i++) {
        const struct sy_ynode *cr = fc->creds->items[i];
        const struct sy_ynode *nm = sy__ymap_get(cr, "credential_name");
        if (nm && nm->kind == SY_Y_STR && strcmp(nm->s, name) == 0) {
            const struct sy_ynode *v = sy__ymap_get(cr, "credential_values");
            return v && v->kind == SY_Y_MAP ? v : NULL;
        }
    }
    return NULL;
}

static const char *value_text(struct sy_ld *ld, const struct sy_ynode *v)
{
    if (v->kind == SY_Y_STR)
        return v->s;
    struct sy_buf b;
    sy_buf_init(&b, 16u << 20);
    sy__py_json(&b, v);
    const char *s = sy_arena_strndup(ld->a, b.p ? b.p : "", b.len);
    sy_buf_free(&b);
    return s;
}

static void collect_params(struct sy_ld *ld, struct sy_deployment *d, const struct sy_ynode *lp,
                           const struct sy_ynode *defaults)
{
    size_t cap = (lp ? lp->n : 0) + (defaults ? defaults->n : 0);
    struct sy_kv *kv = sy_arena_alloc(ld->a, (cap ? cap : 1) * sizeof *kv);
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        const struct sy_ynode *m = pass ? defaults : lp;
        if (!m)
            continue;
        for (size_t i = 0; i < m->n; i++) {
            const struct sy_ynode *k = m->pairs[i].key, *v = m->pairs[i].val;
            if (k->kind != SY_Y_STR || v->kind == SY_Y_NULL)
                continue;
            int dup = 0;
            for (size_t j = 0; j < n && !dup; j++)
                dup = strcmp(kv[j].key, k->s) == 0;
            if (!dup)
                kv[n++] = (struct sy_kv){k->s, value_text(ld, v)};
        }
    }
    d->params = kv;
    d->n_params = n;
}

/* litellm_settings.vertex_project / vertex_location: the defaults of vertex_ai
 * deployments that set neither the key nor its vertex_ai_* alias (LiteLLM:
 * litellm_params, then litellm.vertex_project, then the environment). */
static void vertex_defaults(struct sy_ld *ld, struct sy_deployment *d)
{
    const struct sy_config *c = ld->c;
    if (strncmp(d->provider, "vertex_ai", 9) != 0 || (!c->vertex_project && !c->vertex_location))
        return;
    const char *keys[2][2] = {{"vertex_project", "vertex_ai_project"}, {"vertex_location", "vertex_ai_location"}};
    const char *vals[2] = {c->vertex_project, c->vertex_location};
    struct sy_kv *kv = sy_arena_alloc(ld->a, (d->n_params + 2) * sizeof *kv);
    memcpy(kv, d->params, d->n_params * sizeof *kv);
    size_t n = d->n_params;
    for (int k = 0; k < 2; k++) {
        int have = 0;
        for (size_t j = 0; j < d->n_params && !have; j++)
            have = !strcmp(kv[j].key, keys[k][0]) || !strcmp(kv[j].key, keys[k][1]);
        if (!have && vals[k])
            kv[n++] = (struct sy_kv){keys[k][0], vals[k]};
    }
    d->params = kv;
    d->n_params = n;
}

/* A string param from litellm_params, then the credential, then router defaults. */
static const char *param_str(struct sy_ld *ld, const struct sy_ynode *lp, const struct sy_ynode *cred,
                             const struct sy_ynode *defaults, const char *key, const char *where)
{
    char path[160];
    snprintf(path, sizeof path, "%s.%s", where, key);
    const struct sy_ynode *v = sy__ymap_get(lp, key);
    if (v && v->kind != SY_Y_NULL)
        return sy__get_str(ld, v, path);
    if (cred && (v = sy__ymap_get(cred, key)) && v->kind == SY_Y_STR)
        return v->s;
    if (defaults && (v = sy__ymap_get(defaults, key)) && v->kind != SY_Y_NULL) {
        snprintf(path, sizeof path, "router_settings.default_litellm_params.%s", key);
        return sy__get_str(ld, v, path);
    }
    return NULL;
}

static double param_num(struct sy_ld *ld, const struct sy_ynode *m, const char *key, const char *where, int integer)
{
    char path[256];
    snprintf(path, sizeof path, "%s.%s", where, key);
    double d;
    return sy__get_num(ld, sy__ymap_get(m, key), path, integer, &d) > 0 ? d : -1;
}

static void fill_deployment(struct sy_ld *ld, struct fill_ctx *fc, struct sy_deployment *d, const struct sy_ynode *e,
                            size_t idx)
{
    char where[96], lpw[128], miw[128];
    snprintf(where, sizeof where, "model_list[%zu]", idx);
    snprintf(lpw, sizeof lpw, "%s.litellm_params", where);
    snprintf(miw, sizeof miw, "%s.model_info", where);
    d->line = e->line;
    d->file = e->file;
    d->rpm = d->tpm = d->weight = d->timeout_s = d->stream_timeout_s = -1;
    d->max_retries = d->order = -1;
    d->max_input_tokens = d->max_tokens = -1;
    d->input_cost_per_token = d->output_cost_per_token = -1;
    d->cache_read_input_token_cost = d->cache_creation_input_token_cost = d->output_cost_per_reasoning_token = -1;
    d->cache_creation_input_token_cost_above_1hr = -1;
    d->max_output_tokens = -1;
    d->max_parallel_requests = -1;
    d->cooldown_time_s = -1;
    d->num_retries = -1;
    d->supports_reasoning = -1;
    d->mode = "chat";
    check_keys(ld, e, entry_keys, "model_list[]", 1, 1);

    const struct sy_ynode *mn = sy__ymap_get(e, "model_name");
    char path[160];
    snprintf(path, sizeof path, "%s.model_name", where);
    if (!mn || mn->kind == SY_Y_NULL) {
        sy__ld_error(ld, e->file, e->line, "%s: model_name is required", where);
        d->model_name = "";
    } else {
        d->model_name = sy__get_str(ld, mn, path);
        if (!d->model_name)
            d->model_name = "";
    }

    const struct sy_ynode *lp = sy__ymap_get(e, "litellm_params");
    if (lp && lp->kind == SY_Y_NULL)
        lp = NULL;
    if (lp && lp->kind != SY_Y_MAP) {
        sy__ld_error(ld, lp->file, lp->line, "%s: expected a map, found %s", lpw, sy__ykind_name(lp->kind));
        lp = NULL;
    }
    if (lp)
        check_keys(ld, lp, params_keys, "model_list[].litellm_params", 1, 0);
    const struct sy_ynode *mi = sy__ymap_get(e, "model_info");
    if (mi && mi->kind == SY_Y_NULL)
        mi = NULL;
    if (mi && mi->kind != SY_Y_MAP) {
        sy__ld_error(ld, mi->file, mi->line, "%s: expected a map, found %s", miw, sy__ykind_name(mi->kind));
        mi = NULL;
    }

    /* credentials */
    const struct sy_ynode *cred = NULL;
    d->credential_name =
        lp ? sy__get_str(ld, sy__ymap_get(lp, "litellm_credential_name"), "litellm_credential_name") : NULL;
    if (d->credential_name) {
        cred = credential(fc, d->credential_name);
        if (!cred)
            sy__ld_warn(ld, e->file, e->line, "%s: credential '%s' is not in credential_list", lpw, d->credential_name);
    }

    snprintf(path, sizeof path, "%s.model", lpw);
    d->model = lp ? sy__get_str(ld, sy__ymap_get(lp, "model"), path) : NULL;
    if (!d->model)
        sy__ld_warn(ld, e->file, e->line, "%s (%s): no litellm_params.model; the deployment cannot serve requests",
                    where, d->model_name);

    /* provider */
    const char *prov = lp ? param_str(ld, lp, NULL, NULL, "custom_llm_provider", lpw) : NULL;
    if (!prov && lp)
        prov = param_str(ld, lp, NULL, NULL, "litellm_provider", lpw);
    if (d->model) {
        const char *slash = strchr(d->model, '/');
        if (prov) {
            size_t pl = strlen(prov);
            d->upstream_model =
                (strncmp(d->model, prov, pl) == 0 && d->model[pl] == '/') ? d->model + pl + 1 : d->model;
        } else if (slash) {
            prov = sy_arena_strndup(ld->a, d->model, (size_t)(slash - d->model));
            d->upstream_model = slash + 1;
        } else {
            d->upstream_model = d->model;
        }
    }
    d->provider = prov ? prov : "openai";

    d->api_base = param_str(ld, lp, cred, fc->defaults, "api_base", lpw);
    d->api_key = param_str(ld, lp, cred, fc->defaults, "api_key", lpw);
    d->api_version = param_str(ld, lp, cred, fc->defaults, "api_version", lpw);
    d->organization = param_str(ld, lp, cred, fc->defaults, "organization", lpw);
    d->mock_response = NULL;
    const struct sy_ynode *mr = sy__ymap_get(lp, "mock_response");
    if (mr && mr->kind == SY_Y_STR)
        d->mock_response = mr->s;
    else if (mr && mr->kind != SY_Y_NULL)
        sy__ld_warn(ld, mr->file, mr->line, "%s.mock_response: only a string is supported, ignored", lpw);

    d->rpm = param_num(ld, lp, "rpm", lpw, 0);
    if (d->rpm < 0)
        d->rpm = param_num(ld, e, "rpm", where, 0);
    d->tpm = param_num(ld, lp, "tpm", lpw, 0);
    if (d->tpm < 0)
        d->tpm = param_num(ld, e, "tpm", where, 0);
    d->weight = param_num(ld, lp, "weight", lpw, 0);
    d->order = (int)param_num(ld, lp, "order", lpw, 1);
    d->timeout_s = param_num(ld, lp, "timeout", lpw, 0);
    d->stream_timeout_s = param_num(ld, lp, "stream_timeout", lpw, 0);
    d->max_retries = (int)param_num(ld, lp, "max_retries", lpw, 1);
    d->input_cost_per_token = param_num(ld, lp, "input_cost_per_token", lpw, 0);
    d->output_cost_per_token = param_num(ld, lp, "output_cost_per_token", lpw, 0);
    d->cache_read_input_token_cost = param_num(ld, lp, "cache_read_input_token_cost", lpw, 0);
    d->cache_creation_input_token_cost = param_num(ld, lp, "cache_creation_input_token_cost", lpw, 0);
    d->output_cost_per_reasoning_token = param_num(ld, lp, "output_cost_per_reasoning_token", lpw, 0);
    d->cache_creation_input_token_cost_above_1hr =
        param_num(ld, lp, "cache_creation_input_token_cost_above_1hr", lpw, 0);
    double v;
    snprintf(path, sizeof path, "%s.max_parallel_requests", lpw);
    if (sy__get_count(ld, sy__ymap_get(lp, "max_parallel_requests"), path, 1, 0, &v) > 0)
        d->max_parallel_requests = (int)v;
    snprintf(path, sizeof path, "%s.cooldown_time", lpw);
    if (sy__get_count(ld, sy__ymap_get(lp, "cooldown_time"), path, 0, 0, &v) > 0)
        d->cooldown_time_s = v;
    snprintf(path, sizeof path, "%s.num_retries", lpw);
    if (sy__get_count(ld, sy__ymap_get(lp, "num_retries"), path, 1, 0, &v) > 0)
        d->num_retries = (int)v;
    d->region_name = param_str(ld, lp, cred, fc->defaults, "region_name", lpw);
    int mt;
    snprintf(path, sizeof path, "%s.mock_timeout", lpw);
    if (sy__get_bool(ld, sy__ymap_get(lp, "mock_timeout"), path, &mt) > 0)
        d->mock_timeout = mt;
    const struct sy_ynode *tg = sy__ymap_get(lp, "tags");
    if (tg && tg->kind == SY_Y_SEQ && tg->n) {
        d->tags = sy_arena_alloc(ld->a, tg->n * sizeof *d->tags);
        for (size_t i = 0; i < tg->n; i++) {
            if (tg->items[i]->kind == SY_Y_STR)
                d->tags[d->n_tags++] = tg->items[i]->s;
            else
                sy__ld_warn(ld, tg->items[i]->file, tg->items[i]->line, "%s.tags[%zu]: not a string; ignored", lpw, i);
        }
    } else if (tg && tg->kind != SY_Y_NULL) {
        sy__ld_warn(ld, tg->file, tg->line, "%s.tags: expected a list of strings; ignored", lpw);
    }

    if (mi) {
        snprintf(path, sizeof path, "%s.mode", miw);
        const char *mode = sy__get_str(ld, sy__ymap_get(mi, "mode"), path);
        if (mode)
            d->mode = mode;
        v = param_num(ld, mi, "max_input_tokens", miw, 1);
        if (v >= 0)
            d->max_input_tokens = (int64_t)v;
        v = param_num(ld, mi, "max_tokens", miw, 1);
        if (v >= 0)
            d->max_tokens = (int64_t)v;
        if (d->input_cost_per_token < 0)
            d->input_cost_per_token = param_num(ld, mi, "input_cost_per_token", miw, 0);
        if (d->output_cost_per_token < 0)
            d->output_cost_per_token = param_num(ld, mi, "output_cost_per_token", miw, 0);
        if (d->cache_read_input_token_cost < 0)
            d->cache_read_input_token_cost = param_num(ld, mi, "cache_read_input_token_cost", miw, 0);
        if (d->cache_creation_input_token_cost < 0)
            d->cache_creation_input_token_cost = param_num(ld, mi, "cache_creation_input_token_cost", miw, 0);
        if (d->output_cost_per_reasoning_token < 0)
            d->output_cost_per_reasoning_token = param_num(ld, mi, "output_cost_per_reasoning_token", miw, 0);
        if (d->cache_creation_input_token_cost_above_1hr < 0)
            d->cache_creation_input_token_cost_above_1hr =
                param_num(ld, mi, "cache_creation_input_token_cost_above_1hr", miw, 0);
        v = param_num(ld, mi, "max_output_tokens", miw, 1);
        if (v >= 0)
            d->max_output_tokens = (int64_t)v;
        snprintf(path, sizeof path, "%s.base_model", miw);
        d->base_model = sy__get_str(ld, sy__ymap_get(mi, "base_model"), path);
        const struct sy_ynode *ag = sy__ymap_get(mi, "access_groups");
        if (ag && ag->kind == SY_Y_SEQ && ag->n) {
            d->access_groups = sy_arena_alloc(ld->a, ag->n * sizeof *d->access_groups);
            for (size_t i = 0; i < ag->n; i++)
                if (ag->items[i]->kind == SY_Y_STR)
                    d->access_groups[d->n_access_groups++] = ag->items[i]->s;
        } else if (ag && ag->kind != SY_Y_NULL) {
            sy__ld_warn(ld, ag->file, ag->line, "%s.access_groups: expected a list of names; ignored", miw);
        }
        snprintf(path, sizeof path, "%s.tokenizer", miw);
        d->tokenizer = sy__get_str(ld, sy__ymap_get(mi, "tokenizer"), path);
        if (!d->region_name) {
            snprintf(path, sizeof path, "%s.region_name", miw);
            d->region_name = sy__get_str(ld, sy__ymap_get(mi, "region_name"), path);
        }
        snprintf(path, sizeof path, "%s.health_check_model", miw);
        d->health_check_model = sy__get_str(ld, sy__ymap_get(mi, "health_check_model"), path);
        int sr;
        snprintf(path, sizeof path, "%s.supports_reasoning", miw);
        if (sy__get_bool(ld, sy__ymap_get(mi, "supports_reasoning"), path, &sr) > 0)
            d->supports_reasoning = sr != 0;
        const struct sy_ynode *id = sy__ymap_get(mi, "id");
        if (id && id->kind == SY_Y_INT) {
            d->id = value_text(ld, id);
        } else if (id && id->kind != SY_Y_NULL) {
            snprintf(path, sizeof path, "%s.id", miw);
            d->id = sy__get_str(ld, id, path);
        }
    }
    if (!d->id)
        d->id = sy__model_id(ld->a, d->model_name, lp);
    collect_params(ld, d, lp, fc->defaults);
    vertex_defaults(ld, d);
}

static void fill_models(struct sy_ld *ld, struct sy_config *c, const struct sy_ynode *root)
{
    const struct sy_ynode *ml = sy__ymap_get(root, "model_list");
    if (!ml || ml->kind == SY_Y_NULL)
        return;
    if (ml->kind != SY_Y_SEQ) {
        sy__ld_error(ld, ml->file, ml->line, "model_list: expected a list, found %s", sy__ykind_name(ml->kind));
        return;
    }
    struct fill_ctx fc = {0};
    const struct sy_ynode *cl = sy__ymap_get(root, "credential_list");
    if (cl && cl->kind == SY_Y_SEQ)
        fc.creds = cl;
    const struct sy_ynode *rs = sy__ymap_get(root, "router_settings");
    const struct sy_ynode *dp = rs && rs->kind == SY_Y_MAP ? sy__ymap_get(rs, "default_litellm_params") : NULL;
    if (dp && dp->kind == SY_Y_MAP)
        fc.defaults = dp;

    c->deployments = sy_arena_alloc(ld->a, (ml->n ? ml->n : 1) * sizeof *c->deployments);
    memset(c->deployments, 0, (ml->n ? ml->n : 1) * sizeof *c->deployments);
    for (size_t i = 0; i < ml->n; i++) {
        const struct sy_ynode *e = ml->items[i];
        if (e->kind != SY_Y_MAP) {
            sy__ld_error(ld, e->file, e->line,
                         "model_list[%zu]: expected a map with model_name and "
                         "litellm_params, found %s",
                         i, sy__ykind_name(e->kind));
            continue;
        }
        struct sy_deployment *d = &c->deployments[c->n_deployments];
        fill_deployment(ld, &fc, d, e, i);
        for (size_t j = 0; j < c->n_deployments; j++)
            if (strcmp(c->deployments[j].id, d->id) == 0) {
                sy__ld_warn(ld, e->file, e->line,
                            "model_list[%zu] (%s): same id %.12s... as the deployment "
                            "at %s:%d",
                            i, d->model_name, d->id, c->deployments[j].file, c->deployments[j].line);
                break;
            }
        c->n_deployments++;
    }
}

static void check_credentials(struct sy_ld *ld, const struct sy_ynode *root)
{
    const struct sy_ynode *cl = sy__ymap_get(root, "credential_list");
    if (!cl || cl->kind == SY_Y_NULL)
        return;
    if (cl->kind != SY_Y_SEQ) {
        sy__ld_error(ld, cl->file, cl->line, "credential_list: expected a list, found %s", sy__ykind_name(cl->kind));
        return;
    }
    for (size_t i = 0; i < cl->n; i++) {
        const struct sy_ynode *cr = cl->items[i];
        char path[96];
        snprintf(path, sizeof path, "credential_list[%zu]", i);
        if (cr->kind != SY_Y_MAP) {
            sy__ld_error(ld, cr->file, cr->line, "%s: expected a map, found %s", path, sy__ykind_name(cr->kind));
            continue;
        }
        char p2[128];
        snprintf(p2, sizeof p2, "%s.credential_name", path);
        if (!sy__get_str(ld, sy__ymap_get(cr, "credential_name"), p2))
            sy__ld_error(ld, cr->file, cr->line, "%s: credential_name is required", path);
        const struct sy_ynode *v = sy__ymap_get(cr, "credential_values");
        if (v && v->kind != SY_Y_MAP && v->kind != SY_Y_NULL)
            sy__ld_error(ld, v->file, v->line, "%s.credential_values: expected a map, found %s", path,
                         sy__ykind_name(v->kind));
    }
}

void sy__config_fill(struct sy_ld *ld, struct sy_ynode *root)
{
    struct sy_config *c = ld->c;
    c->num_retries = -1;
    c->request_timeout_s = 6000;
    c->max_internal_user_budget = -1;
    c->ssl_verify = 1;
    c->routing_strategy = "simple-shuffle";
    c->router_num_retries = -1;
    c->router_timeout_s = -1;
    struct sy_router_config *r = &c->router;
    r->lowest_latency_buffer = 0;
    r->latency_ttl_s = 3600;
    r->max_latency_list_size = 10;
    r->retry_after_s = 0;
    for (int i = 0; i < SY_EXC__COUNT; i++)
        r->retry_policy[i] = r->allowed_fails_policy[i] = -1;
    r->has_retry_policy = r->has_allowed_fails_policy = 0;
    r->allowed_fails = -1;
    r->cooldown_time_s = -1;
    r->disable_cooldowns = 0;
    r->stream_timeout_s = -1;
    r->max_fallbacks = 5;
    r->enable_pre_call_checks = 0;
    r->default_max_parallel_requests = -1;
    r->tag_filtering_match_any = 1;
    r->redis_host = r->redis_password = r->redis_username = NULL;
    r->redis_port = 6379;
    r->redis_db = 0;
    r->background_health_checks = 0;
    r->health_check_interval_s = 300;
    c->max_request_size_mb = 32;
    c->max_header_bytes = 65536;
    c->header_timeout_s = 30;
    c->body_timeout_s = 60;
    c->body_total_timeout_s = 60;
    c->keepalive_timeout_s = 75;
    c->proxy_batch_write_at_s = 1;
    c->ui_session_ttl_s = 43200;
    c->user_api_key_cache_ttl_s = 10;
    c->spend_queue_max = 100000;
    c->mcp_max_rounds = 5;
    c->global_max_parallel = -1;
    c->cache_ttl_s = 600;
    c->cache_call_types = SY_CACHE_CT_CHAT | SY_CACHE_CT_TEXT | SY_CACHE_CT_EMBED;
    c->cache_max_bytes = 64u << 20;
    c->cache_max_items = 10000;
    c->cache_redis_port = 6379;
    c->callback_batch_interval_s = 5;
    c->callback_queue_max = 10000;
    c->alerting_threshold_s = 300;
    c->spend_logs_retention_interval_s = 86400;
    const char *ll = getenv("LITELLM_LOG");
    c->detailed_debug = sy_config_detailed_debug || (ll && !strcasecmp(ll, "DEBUG"));

    for (size_t i = 0; i < root->n; i++) {
        const struct sy_ynode *k = root->pairs[i].key, *v = root->pairs[i].val;
        const struct kdef *d = kfind(top_keys, k);
        if (d && d->cls == USED)
            continue;
        if (d) {
            if (!asks_nothing(v))
                sy__ld_warn(ld, k->file, k->line, "%s: not supported yet, ignored", k->s);
        } else {
            sy__ld_warn(ld, k->file, k->line, "unknown top-level key %s (LiteLLM ignores it too)", sy__key_text(ld, k));
        }
    }
    c->callback_settings = json_of(ld, sy__ymap_get(root, "callback_settings"), "callback_settings", 0);
    c->guardrails = json_of(ld, sy__ymap_get(root, "guardrails"), "guardrails", 1);
    c->mcp_servers = json_of(ld, sy__ymap_get(root, "mcp_servers"), "mcp_servers", 0);
    if (c->callback_settings)
        ld->callback_settings = sy__ymap_get(root, "callback_settings");
    const struct sy_ynode *s;
    if ((s = section(ld, root, "litellm_settings")))
        fill_litellm(ld, c, s);
    if ((s = section(ld, root, "router_settings")))
        fill_router(ld, c, s, root->file);
    else
        sy__fill_redis(ld, &c->router, NULL, root->file); /* REDIS_URL / REDIS_HOST from the environment */
    if ((s = section(ld, root, "general_settings")))
        fill_general(ld, c, s);
    /* a redis cache's server is also the router's and the limiter's unless router_settings names one */
    if (c->cache_redis && (c->cache_redis_host || c->cache_redis_url)) {
        const struct sy_ynode *rs = section(ld, root, "router_settings");
        if (!rs || (!sy__ymap_get(rs, "redis_host") && !sy__ymap_get(rs, "redis_url"))) {
            r->redis_host = c->cache_redis_host;
            r->redis_port = c->cache_redis_port;
            r->redis_db = c->cache_redis_db;
            r->redis_password = c->cache_redis_password;
            r->redis_username = c->cache_redis_username;
            if (c->cache_redis_url)
                sy__parse_redis_url(ld, root->file, 0, "litellm_settings.cache_params.url", c->cache_redis_url, r);
        } else {
            sy__ld_warn(ld, rs->file, rs->line,
                        "litellm_settings.cache_params names a Redis server and so does router_settings: "
                        "switchyard uses router_settings' for the cache, the limiter and the router");
        }
    }
    if (c->cache && c->cache_redis && !r->redis_host)
        sy__ld_error(ld, root->file, 0,
                     "litellm_settings.cache_params.type is redis but no Redis server is named "
                     "(cache_params.host / url, router_settings.redis_host / redis_url, REDIS_HOST or REDIS_URL)");
    check_credentials(ld, root);
    fill_models(ld, c, root);
    sy__check_router_groups(ld, c, root);

    if (!c->database_url) {
        const char *env = getenv("DATABASE_URL");
        if (env && *env)
            c->database_url = sy_arena_strndup(ld->a, env, strlen(env));
    }
    if (!c->master_key) {
        const char *env = getenv("LITELLM_MASTER_KEY");
        if (env && *env)
            c->master_key = sy_arena_strndup(ld->a, env, strlen(env));
    }
}
