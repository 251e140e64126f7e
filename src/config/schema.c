/* schema.c - the config.yaml schema: key tables, type checks, filling struct sy_config.
 *
 * Each section has a table saying what every LiteLLM key means to switchyard:
 *   USED   read here;
 *   QUIET  a LiteLLM key with nothing to do in switchyard (logging verbosity,
 *          telemetry): accepted silently;
 *   UNSUP  a LiteLLM feature switchyard does not have yet: "not supported yet,
 *          ignored" warning (none when the value is false/null/empty, which
 *          asks for nothing).
 * A key in no table is "unknown": a warning naming the key path and line
 * (LiteLLM itself ignores such keys silently). A wrong type for a key we read
 * is an error naming file:line. Numbers may be written as numeric strings
 * ("6379"), as pydantic accepts them.
 *
 * Router settings (struct sy_router_config) come from router_settings, from
 * the keys litellm_settings shares with it (fallbacks, max_fallbacks,
 * allowed_fails, ...; router_settings wins when both set one, as LiteLLM's
 * Router(**router_settings) over litellm.* globals), from general_settings
 * (health checks) and, for Redis, from the environment when the config names
 * no Redis. Negative counts and times are errors; fallbacks and aliases that
 * name no model group are warnings (checked after model_list is read).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/loader.h"
#include "core/buf.h"

enum kclass { USED, QUIET, UNSUP };
struct kdef {
    const char *name;
    enum kclass cls;
};

static const struct kdef top_keys[] = {
    {"model_list", USED}, {"litellm_settings", USED}, {"general_settings", USED}, {"router_settings", USED},
    {"environment_variables", USED}, {"credential_list", USED}, {"include", USED},
    {"guardrails", UNSUP}, {"prompts", UNSUP}, {"finetune_settings", UNSUP}, {"files_settings", UNSUP},
    {"assistant_settings", UNSUP}, {"default_vertex_config", UNSUP}, {"mcp_servers", UNSUP},
    {"mcp_tools", UNSUP}, {"agent_list", UNSUP}, {"vector_store_registry", UNSUP},
    {"callback_settings", UNSUP}, {"search_tools", UNSUP}, {NULL, USED}};

static const struct kdef litellm_keys[] = {
    {"drop_params", USED}, {"num_retries", USED}, {"request_timeout", USED}, {"callbacks", USED},
    {"success_callback", USED}, {"failure_callback", USED}, {"require_auth_for_metrics_endpoint", USED},
    {"ssl_verify", USED}, {"switchyard_access_log", USED},
    {"set_verbose", QUIET}, {"json_logs", QUIET}, {"telemetry", QUIET}, {"suppress_debug_info", QUIET},
    {"turn_off_message_logging", QUIET}, {"redact_user_api_key_info", QUIET}, {"log_raw_request_response", QUIET},
    {"fallbacks", USED}, {"default_fallbacks", USED}, {"context_window_fallbacks", USED},
    {"content_policy_fallbacks", USED}, {"max_fallbacks", USED}, {"allowed_fails", USED},
    {"cache", UNSUP}, {"cache_params", UNSUP}, {"service_callback", UNSUP}, {"service_callbacks", UNSUP},
    {"enable_redis_auth_cache", UNSUP},
    {"force_ipv4", UNSUP}, {"modify_params", UNSUP}, {"disable_hf_tokenizer_download", UNSUP},
    {"cost_discount_config", UNSUP}, {"cost_margin_config", UNSUP}, {"key_generation_settings", UNSUP},
    {"default_team_params", UNSUP}, {"default_team_settings", UNSUP}, {"max_budget", UNSUP},
    {"budget_duration", UNSUP}, {"network_mock", UNSUP},
    {"route_all_chat_openai_to_responses", UNSUP}, {"use_chat_completions_url_for_anthropic_messages", UNSUP},
    {"s3_callback_params", UNSUP}, {"default_internal_user_params", UNSUP},
    {"disable_end_user_cost_tracking", UNSUP}, {"disable_end_user_cost_tracking_prometheus_only", UNSUP},
    {"guardrails", UNSUP}, {"include_cost_in_streaming_usage", UNSUP}, {"internal_user_budget_duration", UNSUP},
    {"max_internal_user_budget", UNSUP}, {"max_end_user_budget", UNSUP}, {"mcp_aliases", UNSUP},
    {"vertex_location", UNSUP}, {"vertex_project", UNSUP}, {"upperbound_key_generate_params", UNSUP},
    {"default_key_generate_params", UNSUP}, {"public_model_groups", UNSUP}, {"callback_settings", UNSUP},
    {"datadog_params", UNSUP}, {"langfuse_default_tags", UNSUP}, {"ssl_certificate", UNSUP},
    {"enable_json_schema_validation", UNSUP}, {"enable_preview_features", UNSUP}, {"tag_budget_config", UNSUP},
    {"model_alias_map", UNSUP}, {"max_user_budget", UNSUP}, {"enable_loadbalancing_on_batch_endpoints", UNSUP},
    {"cache_responses", UNSUP}, {"prometheus_metrics_config", UNSUP}, {"custom_prometheus_metadata_labels", UNSUP},
    {NULL, USED}};

static const struct kdef router_keys[] = {
    {"routing_strategy", USED}, {"num_retries", USED}, {"timeout", USED}, {"default_litellm_params", USED},
    {"routing_strategy_args", USED}, {"retry_after", USED}, {"retry_policy", USED}, {"allowed_fails", USED},
    {"allowed_fails_policy", USED}, {"cooldown_time", USED}, {"disable_cooldowns", USED},
    {"stream_timeout", USED}, {"max_fallbacks", USED}, {"fallbacks", USED}, {"context_window_fallbacks", USED},
    {"content_policy_fallbacks", USED}, {"default_fallbacks", USED}, {"enable_pre_call_checks", USED},
    {"model_group_alias", USED}, {"default_max_parallel_requests", USED}, {"redis_host", USED},
    {"redis_port", USED}, {"redis_password", USED}, {"redis_db", USED}, {"redis_url", USED},
    {"redis_username", USED},
    {"set_verbose", QUIET}, {"debug_level", QUIET},
    {"model_group_retry_policy", UNSUP}, {"cache_kwargs", UNSUP}, {"cache_responses", UNSUP},
    {"caching_groups", UNSUP}, {"client_ttl", UNSUP}, {"optional_pre_call_checks", UNSUP},
    {"enable_tag_filtering", UNSUP}, {"tag_filtering_match_any", UNSUP}, {"provider_budget_config", UNSUP},
    {"enable_health_check_routing", UNSUP}, {"ignore_invalid_deployments", UNSUP}, {"polling_interval", UNSUP},
    {"default_priority", UNSUP}, {"router_general_settings", UNSUP}, {"alerting_config", UNSUP},
    {"assistants_config", UNSUP}, {"max_parallel_requests", UNSUP}, {"deployment_affinity_ttl", UNSUP},
    {NULL, USED}};

static const struct kdef general_keys[] = {
    {"master_key", USED}, {"max_request_size_mb", USED}, {"switchyard_max_header_bytes", USED},
    {"switchyard_header_timeout_s", USED}, {"switchyard_body_timeout_s", USED},
    {"switchyard_body_total_timeout_s", USED}, {"switchyard_cors_allowed_origins", USED},
    {"switchyard_keepalive_timeout_s", USED}, {"background_health_checks", USED}, {"health_check_interval", USED},
    {"set_verbose", QUIET}, {"debug", QUIET}, {"detailed_debug", QUIET},
    {"database_url", UNSUP}, {"database_connection_pool_limit", UNSUP}, {"database_connection_timeout", UNSUP},
    {"store_model_in_db", UNSUP}, {"disable_spend_logs", UNSUP}, {"disable_spend_updates", UNSUP},
    {"disable_error_logs", UNSUP}, {"store_prompts_in_spend_logs", UNSUP}, {"proxy_batch_write_at", UNSUP},
    {"use_redis_transaction_buffer", UNSUP}, {"maximum_spend_logs_retention_period", UNSUP},
    {"maximum_spend_logs_retention_interval", UNSUP}, {"alerting", UNSUP}, {"alerting_threshold", UNSUP},
    {"alert_types", UNSUP}, {"alert_to_webhook_url", UNSUP}, {"alerting_args", UNSUP},
    {"health_check_details", UNSUP},
    {"max_parallel_requests", UNSUP}, {"global_max_parallel_requests", UNSUP}, {"token_rate_limit_type", UNSUP},
    {"proxy_budget_rescheduler_min_time", UNSUP}, {"proxy_budget_rescheduler_max_time", UNSUP},
    {"allow_requests_on_db_unavailable", UNSUP}, {"user_api_key_cache_ttl", UNSUP},
    {"litellm_key_header_name", UNSUP}, {"custom_auth", UNSUP}, {"custom_auth_settings", UNSUP},
    {"enable_jwt_auth", UNSUP}, {"litellm_jwtauth", UNSUP}, {"enforce_user_param", UNSUP},
    {"allowed_routes", UNSUP}, {"public_routes", UNSUP}, {"admin_only_routes", UNSUP}, {"allowed_ips", UNSUP},
    {"forward_client_headers_to_llm_api", UNSUP}, {"max_response_size_mb", UNSUP},
    {"pass_through_endpoints", UNSUP}, {"key_management_system", UNSUP}, {"key_management_settings", UNSUP},
    {"otel", UNSUP}, {"reject_clientside_metadata_tags", UNSUP}, {"custom_key_generate", UNSUP},
    {"infer_model_from_keys", UNSUP}, {"ui_access_mode", UNSUP}, {"enable_oauth2_auth", UNSUP},
    {"service_account_settings", UNSUP}, {"disable_master_key_return", UNSUP}, {"disable_reset_budget", UNSUP},
    {"disable_retry_on_max_parallel_request_limit_error", UNSUP}, {"enable_public_model_hub", UNSUP},
    {"disable_prisma_schema_update", UNSUP}, {"custom_sso", UNSUP}, {"allowed_user_roles", UNSUP},
    {"enforced_params", UNSUP}, {"use_x_forwarded_for", UNSUP}, {"user_header_name", UNSUP},
    {"mcp_client_side_auth_header_name", UNSUP}, {"spend_report_frequency", UNSUP},
    {"store_audit_logs", UNSUP}, {"embedding_model", UNSUP}, {"use_shared_health_check", UNSUP},
    {"health_check_ignore_transient_errors", UNSUP}, {"enable_health_check_routing", UNSUP},
    {NULL, USED}};

static const struct kdef entry_keys[] = {
    {"model_name", USED}, {"litellm_params", USED}, {"model_info", USED}, {"rpm", USED}, {"tpm", USED},
    {NULL, USED}};

/* litellm_params keys read here; others are passed through in params[], except
 * those below that name a router feature switchyard lacks. */
static const struct kdef params_keys[] = {
    {"model", USED}, {"api_base", USED}, {"api_key", USED}, {"api_version", USED}, {"organization", USED},
    {"custom_llm_provider", USED}, {"litellm_provider", USED}, {"rpm", USED}, {"tpm", USED}, {"weight", USED},
    {"order", USED}, {"timeout", USED}, {"stream_timeout", USED}, {"max_retries", USED},
    {"mock_response", USED}, {"input_cost_per_token", USED}, {"output_cost_per_token", USED},
    {"litellm_credential_name", USED}, {"max_parallel_requests", USED}, {"cooldown_time", USED},
    {"tags", UNSUP}, {"max_budget", UNSUP}, {"budget_duration", UNSUP}, {"use_in_pass_through", UNSUP},
    {"num_retries", UNSUP},
    {"additional_drop_params", UNSUP}, {"merge_reasoning_content_in_choices", UNSUP}, {"mock_timeout", UNSUP},
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

static const char *key_text(struct sy_ld *ld, const struct sy_ynode *k)
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
        const char *name = key_text(ld, k);
        char path[256];
        snprintf(path, sizeof path, "%s%s%s", section, *section ? "." : "", name);
        if (d && d->cls != UNSUP)
            continue;
        if (once && !sy__ld_first(ld, path))
            continue;
        if (d) {
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

static int get_num(struct sy_ld *ld, const struct sy_ynode *n, const char *path, int integer, double *out)
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
                     integer ? "an integer" : "a number", sy__ykind_name(n->kind),
                     n->kind == SY_Y_STR ? " '" : "", n->kind == SY_Y_STR ? n->s : "",
                     n->kind == SY_Y_STR ? "'" : "");
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

static int get_bool(struct sy_ld *ld, const struct sy_ynode *n, const char *path, int *out)
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

static const char *get_str(struct sy_ld *ld, const struct sy_ynode *n, const char *path)
{
    if (!n || n->kind == SY_Y_NULL)
        return NULL;
    if (n->kind != SY_Y_STR) {
        sy__ld_error(ld, n->file, n->line, "%s: expected a string, found %s", path, sy__ykind_name(n->kind));
        return NULL;
    }
    return n->s;
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

static void read_callbacks(struct sy_ld *ld, const struct sy_ynode *ls, const char *key, const char ***list,
                           size_t *n, size_t *cap)
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
        sy__ld_error(ld, v->file, v->line, "%s: expected a list of callback names, found %s", path,
                     sy__ykind_name(v->kind));
        return;
    }
    for (size_t i = 0; i < v->n; i++) {
        const struct sy_ynode *it = v->items[i];
        if (it->kind == SY_Y_STR)
            add_callback(ld, list, n, cap, it->s);
        else
            sy__ld_warn(ld, it->file, it->line, "%s: item is %s, not a callback name; ignored", path,
                        sy__ykind_name(it->kind));
    }
}

/* ---- router settings: value readers ----
 *
 * Shapes LiteLLM accepts (and we accept as leniently):
 *   fallbacks:         [{"group": ["fb1", "fb2"]}, {"*": ["fb"]}]  also {"group": [...]} alone
 *                      and {"group": "fb1"} (one name); "*" is the generic entry
 *   default_fallbacks: ["fb1", "fb2"] or "fb1"
 *   model_group_alias: {"alias": "group"} or {"alias": {model: "group", hidden: true}}
 *   retry_policy:      {BadRequestErrorRetries: 1, ...}; allowed_fails_policy: {...ErrorAllowedFails: 3}
 * Every reader returns 1 when it stored a value, 0 when the key is absent or
 * null, -1 after an error naming file:line (the load then fails).
 */

/* A value that wins over litellm_settings' one: present, not null, not an
 * empty list/map (LiteLLM's Router does `fallbacks or litellm.fallbacks`). */
static int is_set(const struct sy_ynode *v)
{
    return v && v->kind != SY_Y_NULL && !((v->kind == SY_Y_SEQ || v->kind == SY_Y_MAP) && v->n == 0);
}

/* get_num() that also refuses negative values (and 0 when `positive`). */
static int get_count(struct sy_ld *ld, const struct sy_ynode *n, const char *path, int integer, int positive,
                     double *out)
{
    double d;
    int r = get_num(ld, n, path, integer, &d);
    if (r <= 0)
        return r;
    if (d < 0 || (positive && d == 0)) {
        sy__ld_error(ld, n->file, n->line, "%s: must be %s, found %g", path,
                     positive ? "greater than 0" : "0 or more", d);
        return -1;
    }
    *out = d;
    return 1;
}

/* A list of one-key maps {group: [fallback groups]} into *out (arena). */
static int read_fallbacks(struct sy_ld *ld, const struct sy_ynode *v, const char *path, struct sy_fallback **out,
                          size_t *nout)
{
    if (!v || v->kind == SY_Y_NULL)
        return 0;
    const struct sy_ynode *one = v;
    const struct sy_ynode *const *maps = &one;
    size_t nmaps = 1;
    if (v->kind == SY_Y_SEQ) {
        maps = (const struct sy_ynode *const *)v->items;
        nmaps = v->n;
    } else if (v->kind != SY_Y_MAP) {
        sy__ld_error(ld, v->file, v->line, "%s: expected a list of {model group: [fallback groups]} maps, found %s",
                     path, sy__ykind_name(v->kind));
        return -1;
    }
    size_t cap = 0;
    int bad = 0;
    for (size_t i = 0; i < nmaps; i++) {
        if (maps[i]->kind != SY_Y_MAP) {
            sy__ld_error(ld, maps[i]->file, maps[i]->line,
                         "%s[%zu]: expected a map {model group: [fallback groups]}, found %s", path, i,
                         sy__ykind_name(maps[i]->kind));
            bad = 1;
            continue;
        }
        cap += maps[i]->n;
    }
    if (bad)
        return -1;
    struct sy_fallback *fb = sy_arena_alloc(ld->a, (cap ? cap : 1) * sizeof *fb);
    size_t n = 0;
    for (size_t i = 0; i < nmaps; i++) {
        for (size_t j = 0; j < maps[i]->n; j++) {
            const struct sy_ynode *k = maps[i]->pairs[j].key, *val = maps[i]->pairs[j].val;
            if (k->kind != SY_Y_STR) {
                sy__ld_error(ld, k->file, k->line, "%s: a model group name must be a string, found %s", path,
                             sy__ykind_name(k->kind));
                bad = 1;
                continue;
            }
            struct sy_fallback *f = &fb[n++];
            f->group = k->s;
            f->to = NULL;
            f->n = 0;
            if (val->kind == SY_Y_STR) {
                const char **to = sy_arena_alloc(ld->a, sizeof *to);
                to[0] = val->s;
                f->to = to;
                f->n = 1;
            } else if (val->kind == SY_Y_SEQ) {
                const char **to = sy_arena_alloc(ld->a, (val->n ? val->n : 1) * sizeof *to);
                for (size_t m = 0; m < val->n; m++) {
                    const struct sy_ynode *it = val->items[m];
                    if (it->kind == SY_Y_STR) {
                        to[f->n++] = it->s;
                    } else {
                        sy__ld_error(ld, it->file, it->line, "%s.%s[%zu]: expected a model group name, found %s",
                                     path, k->s, m, sy__ykind_name(it->kind));
                        bad = 1;
                    }
                }
                f->to = to;
            } else if (val->kind != SY_Y_NULL) {
                sy__ld_error(ld, val->file, val->line, "%s.%s: expected a list of model group names, found %s",
                             path, k->s, sy__ykind_name(val->kind));
                bad = 1;
            }
        }
    }
    if (bad)
        return -1;
    *out = fb;
    *nout = n;
    return 1;
}

/* A list of model group names, or a single name (default_fallbacks). */
static int read_names(struct sy_ld *ld, const struct sy_ynode *v, const char *path, const char ***out, size_t *nout)
{
    if (!v || v->kind == SY_Y_NULL)
        return 0;
    if (v->kind == SY_Y_STR) {
        const char **l = sy_arena_alloc(ld->a, sizeof *l);
        l[0] = v->s;
        *out = l;
        *nout = 1;
        return 1;
    }
    if (v->kind != SY_Y_SEQ) {
        sy__ld_error(ld, v->file, v->line, "%s: expected a list of model group names, found %s", path,
                     sy__ykind_name(v->kind));
        return -1;
    }
    const char **l = sy_arena_alloc(ld->a, (v->n ? v->n : 1) * sizeof *l);
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (v->items[i]->kind != SY_Y_STR) {
            sy__ld_error(ld, v->items[i]->file, v->items[i]->line, "%s[%zu]: expected a model group name, found %s",
                         path, i, sy__ykind_name(v->items[i]->kind));
            return -1;
        }
        l[n++] = v->items[i]->s;
    }
    *out = l;
    *nout = n;
    return 1;
}

/* model_group_alias: {alias: group} or {alias: {model: group, hidden: bool}}. */
static int read_aliases(struct sy_ld *ld, const struct sy_ynode *v, const char *path, struct sy_alias **out,
                        size_t *nout)
{
    if (!v || v->kind == SY_Y_NULL)
        return 0;
    if (v->kind != SY_Y_MAP) {
        sy__ld_error(ld, v->file, v->line, "%s: expected a map {alias: model group}, found %s", path,
                     sy__ykind_name(v->kind));
        return -1;
    }
    struct sy_alias *al = sy_arena_alloc(ld->a, (v->n ? v->n : 1) * sizeof *al);
    size_t n = 0;
    int bad = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct sy_ynode *k = v->pairs[i].key, *val = v->pairs[i].val;
        if (k->kind != SY_Y_STR) {
            sy__ld_error(ld, k->file, k->line, "%s: an alias must be a string, found %s", path,
                         sy__ykind_name(k->kind));
            bad = 1;
            continue;
        }
        char p2[256];
        snprintf(p2, sizeof p2, "%s.%s", path, k->s);
        struct sy_alias a = {k->s, NULL, 0};
        if (val->kind == SY_Y_STR) {
            a.group = val->s;
        } else if (val->kind == SY_Y_MAP) {
            for (size_t j = 0; j < val->n; j++) {
                const struct sy_ynode *kk = val->pairs[j].key;
                if (kk->kind != SY_Y_STR || (strcmp(kk->s, "model") != 0 && strcmp(kk->s, "hidden") != 0))
                    sy__ld_warn(ld, kk->file, kk->line, "unknown key %s.%s (not a LiteLLM key), ignored", p2,
                                key_text(ld, kk));
            }
            char p3[300];
            snprintf(p3, sizeof p3, "%s.model", p2);
            a.group = get_str(ld, sy__ymap_get(val, "model"), p3);
            if (!a.group) {
                if (!is_set(sy__ymap_get(val, "model")))
                    sy__ld_error(ld, val->file, val->line, "%s: 'model' (the model group) is required", p2);
                bad = 1;
                continue;
            }
            snprintf(p3, sizeof p3, "%s.hidden", p2);
            if (get_bool(ld, sy__ymap_get(val, "hidden"), p3, &a.hidden) < 0)
                bad = 1;
        } else {
            sy__ld_error(ld, val->file, val->line, "%s: expected a model group name or {model: ..., hidden: ...}, "
                         "found %s", p2, sy__ykind_name(val->kind));
            bad = 1;
            continue;
        }
        al[n++] = a;
    }
    if (bad)
        return -1;
    *out = al;
    *nout = n;
    return 1;
}

/* Exception class names of retry_policy / allowed_fails_policy keys, in enum sy_exc_class order. */
static const char *const exc_names[SY_EXC__COUNT] = {
    "BadRequestError", "AuthenticationError", "TimeoutError", "RateLimitError", "ContentPolicyViolationError",
    "InternalServerError"};

/* retry_policy ({...ErrorRetries: n}) or allowed_fails_policy ({...ErrorAllowedFails: n}) into out[]
 * (entries not given stay as they are, -1). `suffix` is "Retries" or "AllowedFails". */
static int read_policy(struct sy_ld *ld, const struct sy_ynode *v, const char *path, const char *suffix,
                       int out[SY_EXC__COUNT])
{
    if (!v || v->kind == SY_Y_NULL)
        return 0;
    if (v->kind != SY_Y_MAP) {
        sy__ld_error(ld, v->file, v->line, "%s: expected a map {<Exception>%s: count}, found %s", path, suffix,
                     sy__ykind_name(v->kind));
        return -1;
    }
    int bad = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct sy_ynode *k = v->pairs[i].key;
        int e = -1;
        size_t sl = strlen(suffix);
        for (int j = 0; k->kind == SY_Y_STR && j < SY_EXC__COUNT && e < 0; j++) {
            size_t nl = strlen(exc_names[j]);
            if (k->len == nl + sl && memcmp(k->s, exc_names[j], nl) == 0 && memcmp(k->s + nl, suffix, sl) == 0)
                e = j;
        }
        if (e < 0) {
            sy__ld_warn(ld, k->file, k->line, "unknown key %s.%s (not a LiteLLM key), ignored", path,
                        key_text(ld, k));
            continue;
        }
        char p2[256];
        snprintf(p2, sizeof p2, "%s.%s", path, k->s);
        double d;
        int r = get_count(ld, v->pairs[i].val, p2, 1, 0, &d);
        if (r < 0)
            bad = 1;
        else if (r > 0)
            out[e] = (int)d;
    }
    return bad ? -1 : 1;
}

/* A scalar as text: strings as written, numbers as Python str() (a numeric
 * password); NULL when absent, null or empty; error for lists and maps. */
static const char *get_scalar_text(struct sy_ld *ld, const struct sy_ynode *n, const char *path)
{
    if (!n || n->kind == SY_Y_NULL)
        return NULL;
    if (n->kind == SY_Y_INT || n->kind == SY_Y_FLOAT)
        return key_text(ld, n);
    const char *s = get_str(ld, n, path);
    return s && *s ? s : NULL;
}

/* ---- router settings: Redis ---- */

static int hexval(int ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0'
           : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
           : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                    : -1;
}

/* Arena copy of s[0..n) with %XX decoded (as redis-py unquotes user and
 * password); NULL when n == 0. */
static const char *unquote(struct sy_arena *a, const char *s, size_t n)
{
    if (!n)
        return NULL;
    char *o = sy_arena_alloc(a, n + 1), *w = o;
    for (size_t i = 0; i < n; i++) {
        int h, l;
        if (s[i] == '%' && i + 2 < n && (h = hexval((unsigned char)s[i + 1])) >= 0 &&
            (l = hexval((unsigned char)s[i + 2])) >= 0) {
            *w++ = (char)(h * 16 + l);
            i += 2;
        } else {
            *w++ = s[i];
        }
    }
    *w = 0;
    return o;
}

/* Parse a small decimal integer s[0..n) in [lo, hi]; -1 when it is not one. */
static long parse_small(const char *s, size_t n, long lo, long hi)
{
    if (!n || n > 9)
        return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v < lo || v > hi ? -1 : v;
}

/* An error at file:line when `strict` (a config value), else a warning ending
 * in "; ignored" (a value from the environment). */
static void url_problem(struct sy_ld *ld, int strict, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void url_problem(struct sy_ld *ld, int strict, const char *file, int line, const char *fmt, ...)
{
    char m[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    if (strict)
        sy__ld_error(ld, file, line, "%s", m);
    else
        sy__ld_warn(ld, file, line, "%s; ignored", m);
}

/* Parse redis://[user[:password]@]host[:port][/db][?db=N] (also rediss://,
 * with a warning: no TLS here) into r, overriding only what the URL gives, as
 * redis-py's from_url(url, **kwargs) does. `what` names the source in
 * messages. A malformed URL is an error at file:line when `strict` (a config
 * value), else a warning (the environment). Returns 0, or -1 (r unchanged). */
static int parse_redis_url(struct sy_ld *ld, const char *file, int line, const char *what, const char *url,
                           int strict, struct sy_router_config *r)
{
    const char *form = "expected redis://[user[:password]@]host[:port][/db]";
    const char *p;
    int tls = 0;
    if (strncasecmp(url, "redis://", 8) == 0) {
        p = url + 8;
    } else if (strncasecmp(url, "rediss://", 9) == 0) {
        p = url + 9;
        tls = 1;
    } else {
        url_problem(ld, strict, file, line, "%s: %s, found '%.60s'", what, form, url);
        return -1;
    }
    size_t alen = strcspn(p, "/?#");
    const char *auth = p, *aend = p + alen;
    const char *at = NULL;
    for (const char *q = auth; q < aend; q++)
        if (*q == '@')
            at = q; /* the last '@', as urllib's netloc.rpartition('@') */
    const char *user = NULL, *pass = NULL, *host = auth;
    if (at) {
        const char *colon = memchr(auth, ':', (size_t)(at - auth));
        size_t ul = colon ? (size_t)(colon - auth) : (size_t)(at - auth);
        user = unquote(ld->a, auth, ul);
        if (colon)
            pass = unquote(ld->a, colon + 1, (size_t)(at - colon - 1));
        host = at + 1;
    }
    const char *hend = aend, *port_s = NULL;
    if (*host == '[') { /* [IPv6]:port */
        const char *rb = memchr(host, ']', (size_t)(aend - host));
        if (!rb || (rb + 1 < aend && rb[1] != ':')) {
            url_problem(ld, strict, file, line, "%s: bad IPv6 host in '%.60s'", what, url);
            return -1;
        }
        if (rb + 1 < aend)
            port_s = rb + 2;
        hend = rb + 1;
        host++;
        hend--;
    } else {
        const char *colon = memchr(host, ':', (size_t)(aend - host));
        if (colon) {
            port_s = colon + 1;
            hend = colon;
        }
    }
    long port = -1;
    if (port_s && port_s < aend && (port = parse_small(port_s, (size_t)(aend - port_s), 1, 65535)) < 0) {
        url_problem(ld, strict, file, line, "%s: bad port '%.*s' (1-65535)", what, (int)(aend - port_s), port_s);
        return -1;
    }
    long db = -1;
    const char *rest = aend;
    if (*rest == '/') {
        size_t pl = strcspn(rest + 1, "?#");
        if (pl && (db = parse_small(rest + 1, pl, 0, 1000000)) < 0) {
            url_problem(ld, strict, file, line, "%s: bad database number '/%.*s'", what, (int)pl, rest + 1);
            return -1;
        }
        rest += 1 + pl;
    }
    if (*rest == '?') { /* ?db=N wins over the path, as in redis-py; other options are not used */
        const char *q = rest + 1, *qend = q + strcspn(q, "#");
        while (q < qend) {
            const char *amp = memchr(q, '&', (size_t)(qend - q));
            const char *e = amp ? amp : qend;
            if (e - q > 3 && memcmp(q, "db=", 3) == 0) {
                if ((db = parse_small(q + 3, (size_t)(e - q - 3), 0, 1000000)) < 0) {
                    url_problem(ld, strict, file, line, "%s: bad database number '%.*s'", what, (int)(e - q), q);
                    return -1;
                }
            } else if (e > q) {
                sy__ld_warn(ld, file, line, "%s: URL option '%.*s' not supported, ignored", what, (int)(e - q), q);
            }
            q = amp ? amp + 1 : qend;
        }
    }
    if (tls)
        sy__ld_warn(ld, file, line, "%s: rediss:// (TLS) is not supported yet; connecting without TLS", what);
    if (hend > host)
        r->redis_host = sy_arena_strndup(ld->a, host, (size_t)(hend - host));
    else if (!r->redis_host)
        r->redis_host = "localhost"; /* redis-py's default */
    if (port > 0)
        r->redis_port = (int)port;
    if (db >= 0)
        r->redis_db = (int)db;
    if (user)
        r->redis_username = user;
    if (pass)
        r->redis_password = pass;
    return 0;
}

/* Arena copy of env `name`, or NULL when unset or empty. */
static const char *env_str(struct sy_ld *ld, const char *name)
{
    const char *v = getenv(name);
    return v && *v ? sy_arena_strndup(ld->a, v, strlen(v)) : NULL;
}

/* Redis location: router_settings.redis_url over redis_host/redis_port/
 * redis_password/redis_username/redis_db (the URL overrides what it gives);
 * neither redis_url nor redis_host: env REDIS_URL, else env REDIS_HOST with
 * REDIS_PORT, REDIS_PASSWORD, REDIS_USERNAME for what the config leaves out.
 * `file` names the main config in messages about the environment. */
static void fill_redis(struct sy_ld *ld, struct sy_router_config *r, const struct sy_ynode *rs, const char *file)
{
    const struct sy_ynode *hn = sy__ymap_get(rs, "redis_host"), *un = sy__ymap_get(rs, "redis_url");
    const struct sy_ynode *pn = sy__ymap_get(rs, "redis_port");
    double d;
    int has_port = 0;
    const char *host = get_str(ld, hn, "router_settings.redis_host");
    const char *url = get_str(ld, un, "router_settings.redis_url");
    if (get_num(ld, pn, "router_settings.redis_port", 1, &d) > 0) {
        if (d < 1 || d > 65535)
            sy__ld_error(ld, pn->file, pn->line, "router_settings.redis_port: must be 1-65535, found %g", d);
        else {
            r->redis_port = (int)d;
            has_port = 1;
        }
    }
    if (get_count(ld, sy__ymap_get(rs, "redis_db"), "router_settings.redis_db", 1, 0, &d) > 0)
        r->redis_db = (int)d;
    r->redis_password = get_scalar_text(ld, sy__ymap_get(rs, "redis_password"), "router_settings.redis_password");
    r->redis_username = get_scalar_text(ld, sy__ymap_get(rs, "redis_username"), "router_settings.redis_username");

    if (url && *url) {
        if (host && *host)
            r->redis_host = host; /* the URL's host replaces it */
        parse_redis_url(ld, un->file, un->line, "router_settings.redis_url", url, 1, r);
        return;
    }
    if (host && *host) {
        r->redis_host = host;
        return;
    }
    const char *eurl = env_str(ld, "REDIS_URL");
    if (eurl && parse_redis_url(ld, file, 0, "environment variable REDIS_URL", eurl, 0, r) == 0)
        return;
    const char *ehost = env_str(ld, "REDIS_HOST");
    if (ehost) {
        r->redis_host = ehost;
        const char *ep = getenv("REDIS_PORT");
        if (!has_port && ep && *ep) {
            long port = parse_small(ep, strlen(ep), 1, 65535);
            if (port > 0)
                r->redis_port = (int)port;
            else
                sy__ld_warn(ld, file, 0, "environment variable REDIS_PORT: '%.20s' is not a port (1-65535); "
                            "using %d", ep, r->redis_port);
        }
        if (!r->redis_password)
            r->redis_password = env_str(ld, "REDIS_PASSWORD");
        if (!r->redis_username)
            r->redis_username = env_str(ld, "REDIS_USERNAME");
        return;
    }
    static const char *const others[] = {"redis_port", "redis_password", "redis_username", "redis_db"};
    for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
        const struct sy_ynode *o = sy__ymap_get(rs, others[i]);
        if (is_set(o)) {
            sy__ld_warn(ld, o->file, o->line, "router_settings.%s is set but there is no redis_host or redis_url "
                        "(nor REDIS_URL/REDIS_HOST in the environment); Redis is not used", others[i]);
            break;
        }
    }
}

/* fallbacks, context_window_fallbacks, content_policy_fallbacks and
 * default_fallbacks of one section into r. A set value (is_set) replaces an
 * earlier one: litellm_settings is read first, so router_settings wins. */
static void read_fallback_lists(struct sy_ld *ld, struct sy_router_config *r, const struct sy_ynode *sec,
                                const char *name)
{
    static const char *const keys[] = {"fallbacks", "context_window_fallbacks", "content_policy_fallbacks"};
    struct sy_fallback **lists[] = {&r->fallbacks, &r->context_window_fallbacks, &r->content_policy_fallbacks};
    size_t *counts[] = {&r->n_fallbacks, &r->n_context_window_fallbacks, &r->n_content_policy_fallbacks};
    char path[96];
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const struct sy_ynode *v = sy__ymap_get(sec, keys[i]);
        struct sy_fallback *fb;
        size_t n;
        snprintf(path, sizeof path, "%s.%s", name, keys[i]);
        if (read_fallbacks(ld, v, path, &fb, &n) > 0 && is_set(v)) {
            *lists[i] = fb;
            *counts[i] = n;
        }
    }
    const struct sy_ynode *v = sy__ymap_get(sec, "default_fallbacks");
    const char **l;
    size_t n;
    snprintf(path, sizeof path, "%s.default_fallbacks", name);
    if (read_names(ld, v, path, &l, &n) > 0 && is_set(v)) {
        r->default_fallbacks = l;
        r->n_default_fallbacks = n;
    }
}

/* ---- router settings: model groups named by fallbacks and aliases ---- */

/* LiteLLM's pattern router: only '*' is special (re.escape, then '*' -> '(.*)'). */
static int glob_match(const char *p, const char *s)
{
    const char *star = NULL, *back = NULL;
    while (*s) {
        if (*p == '*') {
            star = p++;
            back = s;
        } else if (*p == *s) {
            p++;
            s++;
        } else if (star) {
            p = star + 1;
            s = ++back;
        } else {
            return 0;
        }
    }
    while (*p == '*')
        p++;
    return !*p;
}

/* A request for `name` finds deployments: a model_name, a wildcard model_name
 * (a pattern with '*', such as a provider prefix then '*') matching it, or
 * (when `aliases`) a model_group_alias. */
static int group_known(const struct sy_config *c, const char *name, int aliases)
{
    for (size_t i = 0; i < c->n_deployments; i++)
        if (strcmp(c->deployments[i].model_name, name) == 0)
            return 1;
    for (size_t i = 0; aliases && i < c->router.n_aliases; i++)
        if (strcmp(c->router.aliases[i].alias, name) == 0)
            return 1;
    for (size_t i = 0; i < c->n_deployments; i++)
        if (strchr(c->deployments[i].model_name, '*') && glob_match(c->deployments[i].model_name, name))
            return 1;
    return 0;
}

/* Warn (once per name) about a group named at node n that no deployment serves. */
static void check_group(struct sy_ld *ld, const struct sy_config *c, const struct sy_ynode *n, const char *path,
                        int aliases)
{
    if (n->kind != SY_Y_STR || strcmp(n->s, "*") == 0 || group_known(c, n->s, aliases))
        return;
    char key[320];
    snprintf(key, sizeof key, "model group\n%s", n->s);
    if (sy__ld_first(ld, key))
        sy__ld_warn(ld, n->file, n->line, "%s: model group '%s' is not in model_list (LiteLLM accepts it; a "
                    "request routed to it fails)", path, n->s);
}

/* Every group name in a fallback list (any shape read_fallbacks/read_names
 * take): `v` is the list itself (depth 0), a list item (1), or the target
 * list of a group (2: strings, or a list of strings). */
static void check_fallback_node(struct sy_ld *ld, const struct sy_config *c, const struct sy_ynode *v,
                                const char *path, int depth)
{
    if (v->kind == SY_Y_STR) {
        check_group(ld, c, v, path, 1);
    } else if (v->kind == SY_Y_SEQ) {
        for (size_t i = 0; i < v->n; i++)
            if (depth < 2 || v->items[i]->kind == SY_Y_STR)
                check_fallback_node(ld, c, v->items[i], path, depth + 1);
    } else if (v->kind == SY_Y_MAP && depth < 2) {
        for (size_t i = 0; i < v->n; i++) {
            check_group(ld, c, v->pairs[i].key, path, 1);
            check_fallback_node(ld, c, v->pairs[i].val, path, 2);
        }
    }
}

/* After model_list is read: warn about fallback and alias targets that name no
 * model group (LiteLLM loads such configs; the request fails when it gets there). */
static void check_router_groups(struct sy_ld *ld, const struct sy_config *c, const struct sy_ynode *root)
{
    static const char *const keys[] = {"fallbacks", "context_window_fallbacks", "content_policy_fallbacks",
                                       "default_fallbacks"};
    const struct sy_ynode *ls = sy__ymap_get(root, "litellm_settings"), *rs = sy__ymap_get(root, "router_settings");
    if (ls && ls->kind != SY_Y_MAP)
        ls = NULL;
    if (rs && rs->kind != SY_Y_MAP)
        rs = NULL;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const struct sy_ynode *v = sy__ymap_get(rs, keys[i]);
        const char *sec = "router_settings";
        if (!is_set(v)) {
            v = sy__ymap_get(ls, keys[i]);
            sec = "litellm_settings";
        }
        if (!v)
            continue;
        char path[96];
        snprintf(path, sizeof path, "%s.%s", sec, keys[i]);
        check_fallback_node(ld, c, v, path, 0);
    }
    const struct sy_ynode *al = sy__ymap_get(rs, "model_group_alias");
    for (size_t i = 0; al && al->kind == SY_Y_MAP && i < al->n; i++) {
        const struct sy_ynode *g = al->pairs[i].val;
        if (g->kind == SY_Y_MAP)
            g = sy__ymap_get(g, "model");
        if (g)
            check_group(ld, c, g, "router_settings.model_group_alias", 0);
    }
}

/* ---- sections ---- */

static void fill_litellm(struct sy_ld *ld, struct sy_config *c, const struct sy_ynode *ls)
{
    check_keys(ld, ls, litellm_keys, "litellm_settings", 0, 1);
    double d;
    int b;
    if (get_bool(ld, sy__ymap_get(ls, "drop_params"), "litellm_settings.drop_params", &b) > 0)
        c->drop_params = b;
    if (get_num(ld, sy__ymap_get(ls, "num_retries"), "litellm_settings.num_retries", 1, &d) > 0)
        c->num_retries = (int)d;
    if (get_num(ld, sy__ymap_get(ls, "request_timeout"), "litellm_settings.request_timeout", 0, &d) > 0)
        c->request_timeout_s = d;
    if (get_bool(ld, sy__ymap_get(ls, "require_auth_for_metrics_endpoint"),
                 "litellm_settings.require_auth_for_metrics_endpoint", &b) > 0)
        c->require_auth_for_metrics_endpoint = b;
    const struct sy_ynode *sv = sy__ymap_get(ls, "ssl_verify");
    if (sv && sv->kind == SY_Y_STR && sv->len) {
        c->ssl_verify = 1;
        c->ssl_ca_file = sv->s;
    } else if (get_bool(ld, sv, "litellm_settings.ssl_verify", &b) > 0) {
        c->ssl_verify = b;
    }
    c->access_log = get_str(ld, sy__ymap_get(ls, "switchyard_access_log"), "litellm_settings.switchyard_access_log");
    read_fallback_lists(ld, &c->router, ls, "litellm_settings");
    if (get_count(ld, sy__ymap_get(ls, "max_fallbacks"), "litellm_settings.max_fallbacks", 1, 0, &d) > 0)
        c->router.max_fallbacks = (int)d;
    if (get_count(ld, sy__ymap_get(ls, "allowed_fails"), "litellm_settings.allowed_fails", 1, 0, &d) > 0)
        c->router.allowed_fails = (int)d;

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
        else
            sy__ld_warn(ld, ls->file, ls->line, "litellm_settings: callback '%s' not supported yet, ignored",
                        list[i]);
    }
}

static void fill_router(struct sy_ld *ld, struct sy_config *c, const struct sy_ynode *rs, const char *file)
{
    static const char *const strategies[] = {"simple-shuffle", "least-busy", "usage-based-routing",
                                             "usage-based-routing-v2", "latency-based-routing",
                                             "cost-based-routing"};
    struct sy_router_config *r = &c->router;
    check_keys(ld, rs, router_keys, "router_settings", 0, 1);
    double d;
    int b;
    const struct sy_ynode *st = sy__ymap_get(rs, "routing_strategy");
    const char *s = get_str(ld, st, "router_settings.routing_strategy");
    if (s) {
        size_t i = 0;
        while (i < sizeof strategies / sizeof *strategies && strcmp(s, strategies[i]) != 0)
            i++;
        if (i < sizeof strategies / sizeof *strategies)
            c->routing_strategy = strategies[i];
        else
            sy__ld_warn(ld, st->file, st->line,
                        "router_settings.routing_strategy: unknown or unsupported strategy '%s', using "
                        "simple-shuffle", s);
    }
    if (get_num(ld, sy__ymap_get(rs, "num_retries"), "router_settings.num_retries", 1, &d) > 0)
        c->router_num_retries = (int)d;
    if (get_num(ld, sy__ymap_get(rs, "timeout"), "router_settings.timeout", 0, &d) > 0)
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
                            key_text(ld, k));
        }
        if (get_count(ld, sy__ymap_get(args, "ttl"), "router_settings.routing_strategy_args.ttl", 0, 1, &d) > 0)
            r->latency_ttl_s = d;
        if (get_count(ld, sy__ymap_get(args, "lowest_latency_buffer"),
                      "router_settings.routing_strategy_args.lowest_latency_buffer", 0, 0, &d) > 0)
            r->lowest_latency_buffer = d;
        if (get_count(ld, sy__ymap_get(args, "max_latency_list_size"),
                      "router_settings.routing_strategy_args.max_latency_list_size", 1, 1, &d) > 0)
            r->max_latency_list_size = (int)d;
    } else if (args && args->kind != SY_Y_NULL) {
        sy__ld_error(ld, args->file, args->line, "router_settings.routing_strategy_args: expected a map, found %s",
                     sy__ykind_name(args->kind));
    }

    if (get_count(ld, sy__ymap_get(rs, "retry_after"), "router_settings.retry_after", 0, 0, &d) > 0)
        r->retry_after_s = d;
    if (read_policy(ld, sy__ymap_get(rs, "retry_policy"), "router_settings.retry_policy", "Retries",
                    r->retry_policy) > 0)
        r->has_retry_policy = 1;
    if (read_policy(ld, sy__ymap_get(rs, "allowed_fails_policy"), "router_settings.allowed_fails_policy",
                    "AllowedFails", r->allowed_fails_policy) > 0)
        r->has_allowed_fails_policy = 1;
    if (get_count(ld, sy__ymap_get(rs, "allowed_fails"), "router_settings.allowed_fails", 1, 0, &d) > 0)
        r->allowed_fails = (int)d;
    if (get_count(ld, sy__ymap_get(rs, "cooldown_time"), "router_settings.cooldown_time", 0, 0, &d) > 0)
        r->cooldown_time_s = d;
    if (get_bool(ld, sy__ymap_get(rs, "disable_cooldowns"), "router_settings.disable_cooldowns", &b) > 0)
        r->disable_cooldowns = b;
    if (get_count(ld, sy__ymap_get(rs, "stream_timeout"), "router_settings.stream_timeout", 0, 0, &d) > 0)
        r->stream_timeout_s = d;
    if (get_count(ld, sy__ymap_get(rs, "max_fallbacks"), "router_settings.max_fallbacks", 1, 0, &d) > 0)
        r->max_fallbacks = (int)d;
    read_fallback_lists(ld, r, rs, "router_settings");
    if (get_bool(ld, sy__ymap_get(rs, "enable_pre_call_checks"), "router_settings.enable_pre_call_checks", &b) > 0)
        r->enable_pre_call_checks = b;
    read_aliases(ld, sy__ymap_get(rs, "model_group_alias"), "router_settings.model_group_alias", &r->aliases,
                 &r->n_aliases);
    if (get_count(ld, sy__ymap_get(rs, "default_max_parallel_requests"),
                  "router_settings.default_max_parallel_requests", 1, 0, &d) > 0)
        r->default_max_parallel_requests = (int)d;
    fill_redis(ld, r, rs, file);
}

static int positive(struct sy_ld *ld, const struct sy_ynode *gs, const char *key, int integer, double *out)
{
    char path[96];
    snprintf(path, sizeof path, "general_settings.%s", key);
    const struct sy_ynode *n = sy__ymap_get(gs, key);
    double d;
    int r = get_num(ld, n, path, integer, &d);
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
    c->master_key = get_str(ld, mk, "general_settings.master_key");
    if (c->master_key && strncmp(c->master_key, "sk-", 3) != 0)
        sy__ld_warn(ld, mk->file, mk->line, "general_settings.master_key does not start with 'sk-' (LiteLLM requires it)");
    double d;
    if (positive(ld, gs, "max_request_size_mb", 0, &d))
        c->max_request_size_mb = d;
    if (positive(ld, gs, "switchyard_max_header_bytes", 1, &d)) {
        const struct sy_ynode *n = sy__ymap_get(gs, "switchyard_max_header_bytes");
        if (d > 1048576) { /* http/server.h SY_MAX_HEADER_BYTES_MAX */
            sy__ld_warn(ld, n->file, n->line,
                        "general_settings.switchyard_max_header_bytes: %.0f is over the maximum 1048576; using 1048576", d);
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
    if (positive(ld, gs, "switchyard_header_timeout_s", 0, &d))
        c->header_timeout_s = d;
    if (positive(ld, gs, "switchyard_body_timeout_s", 0, &d))
        c->body_timeout_s = d;
    if (positive(ld, gs, "switchyard_body_total_timeout_s", 0, &d))
        c->body_total_timeout_s = d;
    if (positive(ld, gs, "switchyard_keepalive_timeout_s", 0, &d))
        c->keepalive_timeout_s = d;
    int b;
    if (get_bool(ld, sy__ymap_get(gs, "background_health_checks"), "general_settings.background_health_checks",
                 &b) > 0)
        c->router.background_health_checks = b;
    if (positive(ld, gs, "health_check_interval", 0, &d))
        c->router.health_check_interval_s = d;
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

/* A string param from litellm_params, then the credential, then router defaults. */
static const char *param_str(struct sy_ld *ld, const struct sy_ynode *lp, const struct sy_ynode *cred,
                             const struct sy_ynode *defaults, const char *key, const char *where)
{
    char path[160];
    snprintf(path, sizeof path, "%s.%s", where, key);
    const struct sy_ynode *v = sy__ymap_get(lp, key);
    if (v && v->kind != SY_Y_NULL)
        return get_str(ld, v, path);
    if (cred && (v = sy__ymap_get(cred, key)) && v->kind == SY_Y_STR)
        return v->s;
    if (defaults && (v = sy__ymap_get(defaults, key)) && v->kind != SY_Y_NULL) {
        snprintf(path, sizeof path, "router_settings.default_litellm_params.%s", key);
        return get_str(ld, v, path);
    }
    return NULL;
}

static double param_num(struct sy_ld *ld, const struct sy_ynode *m, const char *key, const char *where, int integer)
{
    char path[160];
    snprintf(path, sizeof path, "%s.%s", where, key);
    double d;
    return get_num(ld, sy__ymap_get(m, key), path, integer, &d) > 0 ? d : -1;
}

static void fill_deployment(struct sy_ld *ld, struct fill_ctx *fc, struct sy_deployment *d,
                            const struct sy_ynode *e, size_t idx)
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
    d->max_parallel_requests = -1;
    d->cooldown_time_s = -1;
    d->mode = "chat";
    check_keys(ld, e, entry_keys, "model_list[]", 1, 1);

    const struct sy_ynode *mn = sy__ymap_get(e, "model_name");
    char path[160];
    snprintf(path, sizeof path, "%s.model_name", where);
    if (!mn || mn->kind == SY_Y_NULL) {
        sy__ld_error(ld, e->file, e->line, "%s: model_name is required", where);
        d->model_name = "";
    } else {
        d->model_name = get_str(ld, mn, path);
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
    d->credential_name = lp ? get_str(ld, sy__ymap_get(lp, "litellm_credential_name"), "litellm_credential_name")
                            : NULL;
    if (d->credential_name) {
        cred = credential(fc, d->credential_name);
        if (!cred)
            sy__ld_warn(ld, e->file, e->line, "%s: credential '%s' is not in credential_list", lpw,
                        d->credential_name);
    }

    snprintf(path, sizeof path, "%s.model", lpw);
    d->model = lp ? get_str(ld, sy__ymap_get(lp, "model"), path) : NULL;
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
            d->upstream_model = (strncmp(d->model, prov, pl) == 0 && d->model[pl] == '/') ? d->model + pl + 1
                                                                                         : d->model;
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
    double v;
    snprintf(path, sizeof path, "%s.max_parallel_requests", lpw);
    if (get_count(ld, sy__ymap_get(lp, "max_parallel_requests"), path, 1, 0, &v) > 0)
        d->max_parallel_requests = (int)v;
    snprintf(path, sizeof path, "%s.cooldown_time", lpw);
    if (get_count(ld, sy__ymap_get(lp, "cooldown_time"), path, 0, 0, &v) > 0)
        d->cooldown_time_s = v;

    if (mi) {
        snprintf(path, sizeof path, "%s.mode", miw);
        const char *mode = get_str(ld, sy__ymap_get(mi, "mode"), path);
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
        snprintf(path, sizeof path, "%s.tokenizer", miw);
        d->tokenizer = get_str(ld, sy__ymap_get(mi, "tokenizer"), path);
        snprintf(path, sizeof path, "%s.health_check_model", miw);
        d->health_check_model = get_str(ld, sy__ymap_get(mi, "health_check_model"), path);
        const struct sy_ynode *id = sy__ymap_get(mi, "id");
        if (id && id->kind == SY_Y_INT) {
            d->id = value_text(ld, id);
        } else if (id && id->kind != SY_Y_NULL) {
            snprintf(path, sizeof path, "%s.id", miw);
            d->id = get_str(ld, id, path);
        }
    }
    if (!d->id)
        d->id = sy__model_id(ld->a, d->model_name, lp);
    collect_params(ld, d, lp, fc->defaults);
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
            sy__ld_error(ld, e->file, e->line, "model_list[%zu]: expected a map with model_name and "
                         "litellm_params, found %s", i, sy__ykind_name(e->kind));
            continue;
        }
        struct sy_deployment *d = &c->deployments[c->n_deployments];
        fill_deployment(ld, &fc, d, e, i);
        for (size_t j = 0; j < c->n_deployments; j++)
            if (strcmp(c->deployments[j].id, d->id) == 0) {
                sy__ld_warn(ld, e->file, e->line, "model_list[%zu] (%s): same id %.12s... as the deployment "
                            "at %s:%d", i, d->model_name, d->id, c->deployments[j].file, c->deployments[j].line);
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
        sy__ld_error(ld, cl->file, cl->line, "credential_list: expected a list, found %s",
                     sy__ykind_name(cl->kind));
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
        if (!get_str(ld, sy__ymap_get(cr, "credential_name"), p2))
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

    for (size_t i = 0; i < root->n; i++) {
        const struct sy_ynode *k = root->pairs[i].key, *v = root->pairs[i].val;
        const struct kdef *d = kfind(top_keys, k);
        if (d && d->cls == USED)
            continue;
        if (d) {
            if (!asks_nothing(v))
                sy__ld_warn(ld, k->file, k->line, "%s: not supported yet, ignored", k->s);
        } else {
            sy__ld_warn(ld, k->file, k->line, "unknown top-level key %s (LiteLLM ignores it too)",
                        key_text(ld, k));
        }
    }
    const struct sy_ynode *s;
    if ((s = section(ld, root, "litellm_settings")))
        fill_litellm(ld, c, s);
    if ((s = section(ld, root, "router_settings")))
        fill_router(ld, c, s, root->file);
    else
        fill_redis(ld, &c->router, NULL, root->file); /* REDIS_URL / REDIS_HOST from the environment */
    if ((s = section(ld, root, "general_settings")))
        fill_general(ld, c, s);
    check_credentials(ld, root);
    fill_models(ld, c, root);
    check_router_groups(ld, c, root);

    if (!c->master_key) {
        const char *env = getenv("LITELLM_MASTER_KEY");
        if (env && *env)
            c->master_key = sy_arena_strndup(ld->a, env, strlen(env));
    }
}
