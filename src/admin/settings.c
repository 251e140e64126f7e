/* settings.c - GET /switchyard/settings: the settings in force, read-only, for
 * the UI's Settings page (proxy_admin and proxy_admin_viewer).
 *
 * LiteLLM spreads this over several routes whose answers carry secrets or
 * write paths (/get/config/callbacks returns callback env vars, /config/list
 * and /router/settings are backed by the database config); one read-only
 * route of our own shows what this process serves, from the config snapshot
 * the request runs under (after a SIGHUP, the new one).
 *
 * Nothing secret is written: members are chosen one by one (an allow-list,
 * never a copy of a config section), so a password, an api_key, the master
 * key, a token or anything resolved from os.environ/ cannot appear. Where a
 * secret's presence matters it is shown as "<redacted>" (master_key,
 * database_url) and a URL's user:password is cut (cache/redis URLs).
 * Guardrails show name, kind, mode and default_on only.
 *
 *   {"router_settings":{...},"litellm_settings":{...,"callbacks":[..]},
 *    "cache":{...}|null,"guardrails":[{"guardrail_name","guardrail","mode","default_on"}],
 *    "general_settings":{...}}
 *
 * Runs on the loop (SY_ADMIN_NODB): a walk over the snapshot, no I/O.
 */
#include <http_parser.h>
#include <json-c/json.h>
#include <string.h>

#include "admin/admin.h"
#include "admin/admin_impl.h"
#include "config/config.h"
#include "router/table.h"

#define REDACTED "<redacted>"

static void key(struct sy_buf *b, int *first, const char *name)
{
    sy_admin_jkey(b, first, name);
}

static void kstr(struct sy_buf *b, int *first, const char *name, const char *v)
{
    key(b, first, name);
    sy_admin_jstr(b, v);
}

static void knum(struct sy_buf *b, int *first, const char *name, double v)
{
    key(b, first, name);
    if (v < 0)
        SY_BUF_LIT(b, "null");
    else
        sy_admin_jnum(b, v);
}

static void kint(struct sy_buf *b, int *first, const char *name, long long v)
{
    key(b, first, name);
    if (v < 0)
        SY_BUF_LIT(b, "null");
    else
        sy_buf_printf(b, "%lld", v);
}

static void kbool(struct sy_buf *b, int *first, const char *name, int v)
{
    key(b, first, name);
    sy_buf_puts(b, v ? "true" : "false");
}

static void kstrs(struct sy_buf *b, int *first, const char *name, const char *const *v, size_t n)
{
    key(b, first, name);
    SY_BUF_LIT(b, "[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            SY_BUF_LIT(b, ",");
        sy_admin_jstr(b, v[i]);
    }
    SY_BUF_LIT(b, "]");
}

/* [{"group":["to",..]},..] as LiteLLM's config writes fallbacks. */
static void kfallbacks(struct sy_buf *b, int *first, const char *name, const struct sy_fallback *f, size_t n)
{
    key(b, first, name);
    SY_BUF_LIT(b, "[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            SY_BUF_LIT(b, ",");
        SY_BUF_LIT(b, "{");
        sy_admin_jstr(b, f[i].group);
        SY_BUF_LIT(b, ":[");
        for (size_t j = 0; j < f[i].n; j++) {
            if (j)
                SY_BUF_LIT(b, ",");
            sy_admin_jstr(b, f[i].to[j]);
        }
        SY_BUF_LIT(b, "]}");
    }
    SY_BUF_LIT(b, "]");
}

/* A URL without its user:password ("redis://:pw@h:6379" -> "redis://h:6379"). */
static void kurl(struct sy_buf *b, int *first, const char *name, const char *url)
{
    key(b, first, name);
    if (!url) {
        SY_BUF_LIT(b, "null");
        return;
    }
    const char *scheme = strstr(url, "://");
    const char *host = scheme ? scheme + 3 : url;
    const char *end = host + strcspn(host, "/?#");
    const char *at = NULL;
    for (const char *p = host; p < end; p++)
        if (*p == '@')
            at = p;
    if (!at) {
        sy_admin_jstr(b, url);
        return;
    }
    struct sy_buf t;
    sy_buf_init(&t, 1 << 16);
    sy_buf_append(&t, url, (size_t)(host - url));
    sy_buf_puts(&t, at + 1);
    sy_admin_jstr(b, t.p);
    sy_buf_free(&t);
}

static void router_settings(struct sy_buf *b, const struct sy_config *c)
{
    const struct sy_router_config *r = &c->router;
    int f = 1;
    SY_BUF_LIT(b, "{");
    kstr(b, &f, "routing_strategy", c->routing_strategy ? c->routing_strategy : "simple-shuffle");
    kint(b, &f, "num_retries", c->router_num_retries);
    knum(b, &f, "timeout", c->router_timeout_s);
    knum(b, &f, "stream_timeout", r->stream_timeout_s);
    knum(b, &f, "retry_after", r->retry_after_s);
    kint(b, &f, "allowed_fails", r->allowed_fails);
    knum(b, &f, "cooldown_time", r->cooldown_time_s);
    kbool(b, &f, "disable_cooldowns", r->disable_cooldowns);
    kint(b, &f, "max_fallbacks", r->max_fallbacks);
    kfallbacks(b, &f, "fallbacks", r->fallbacks, r->n_fallbacks);
    kfallbacks(b, &f, "context_window_fallbacks", r->context_window_fallbacks, r->n_context_window_fallbacks);
    kfallbacks(b, &f, "content_policy_fallbacks", r->content_policy_fallbacks, r->n_content_policy_fallbacks);
    kstrs(b, &f, "default_fallbacks", r->default_fallbacks, r->n_default_fallbacks);
    kbool(b, &f, "enable_pre_call_checks", r->enable_pre_call_checks);
    kbool(b, &f, "enable_tag_filtering", r->enable_tag_filtering);
    kint(b, &f, "default_max_parallel_requests", r->default_max_parallel_requests);
    key(b, &f, "model_group_alias");
    SY_BUF_LIT(b, "{");
    for (size_t i = 0; i < r->n_aliases; i++) {
        if (i)
            SY_BUF_LIT(b, ",");
        sy_admin_jstr(b, r->aliases[i].alias);
        SY_BUF_LIT(b, ":");
        sy_admin_jstr(b, r->aliases[i].group);
    }
    SY_BUF_LIT(b, "}");
    kstr(b, &f, "redis_host", r->redis_host);
    kint(b, &f, "redis_port", r->redis_host ? r->redis_port : -1);
    kbool(b, &f, "background_health_checks", r->background_health_checks);
    knum(b, &f, "health_check_interval", r->health_check_interval_s);
    SY_BUF_LIT(b, "}");
}

static void litellm_settings(struct sy_buf *b, const struct sy_config *c)
{
    int f = 1;
    SY_BUF_LIT(b, "{");
    kstrs(b, &f, "callbacks", c->callbacks, c->n_callbacks);
    kstrs(b, &f, "success_callback", c->success_callbacks, c->n_success_callbacks);
    kstrs(b, &f, "failure_callback", c->failure_callbacks, c->n_failure_callbacks);
    kbool(b, &f, "drop_params", c->drop_params);
    kint(b, &f, "num_retries", c->num_retries);
    knum(b, &f, "request_timeout", c->request_timeout_s);
    kbool(b, &f, "turn_off_message_logging", c->turn_off_message_logging);
    kbool(b, &f, "redact_user_api_key_info", c->redact_user_api_key_info);
    kbool(b, &f, "json_logs", c->json_logs);
    knum(b, &f, "max_budget", c->max_budget);
    kstr(b, &f, "budget_duration", c->budget_duration);
    knum(b, &f, "max_internal_user_budget", c->max_internal_user_budget);
    kstr(b, &f, "internal_user_budget_duration", c->internal_user_budget_duration);
    kbool(b, &f, "cache", c->cache);
    SY_BUF_LIT(b, "}");
}

static void cache(struct sy_buf *b, const struct sy_config *c)
{
    if (!c->cache) {
        SY_BUF_LIT(b, "null");
        return;
    }
    int f = 1;
    SY_BUF_LIT(b, "{");
    kstr(b, &f, "type", c->cache_redis ? "redis" : "local");
    knum(b, &f, "ttl", c->cache_ttl_s);
    kstr(b, &f, "namespace", c->cache_namespace);
    kstr(b, &f, "mode", c->cache_default_off ? "default_off" : "default_on");
    if (c->cache_redis) {
        kstr(b, &f, "host", c->cache_redis_host);
        kint(b, &f, "port", c->cache_redis_host ? c->cache_redis_port : -1);
        kint(b, &f, "db", c->cache_redis_db);
        kurl(b, &f, "url", c->cache_redis_url);
        kbool(b, &f, "password_set", c->cache_redis_password && *c->cache_redis_password);
    } else {
        kint(b, &f, "max_size_in_memory", (long long)c->cache_max_items);
    }
    SY_BUF_LIT(b, "}");
}

/* One guardrail of the config's list: name, kind, mode, default_on. */
static void guardrail(struct sy_buf *b, int *n, struct json_object *g, int legacy)
{
    if (!json_object_is_type(g, json_type_object))
        return;
    const char *name = NULL, *kind = NULL;
    struct json_object *mode = NULL, *on = NULL, *lp = NULL, *v;
    if (legacy) { /* litellm_settings.guardrails: [{name: {callbacks, default_on}}] */
        json_object_object_foreach(g, k, val)
        {
            name = k;
            lp = val;
            break;
        }
        if (lp && json_object_object_get_ex(lp, "callbacks", &v) && json_object_is_type(v, json_type_array) &&
            json_object_array_length(v) > 0)
            kind = json_object_get_string(json_object_array_get_idx(v, 0));
    } else {
        if (json_object_object_get_ex(g, "guardrail_name", &v) && json_object_is_type(v, json_type_string))
            name = json_object_get_string(v);
        json_object_object_get_ex(g, "litellm_params", &lp);
        if (lp && json_object_object_get_ex(lp, "guardrail", &v) && json_object_is_type(v, json_type_string))
            kind = json_object_get_string(v);
        if (lp)
            json_object_object_get_ex(lp, "mode", &mode);
    }
    if (lp && json_object_is_type(lp, json_type_object))
        json_object_object_get_ex(lp, "default_on", &on);
    if ((*n)++)
        SY_BUF_LIT(b, ",");
    int f = 1;
    SY_BUF_LIT(b, "{");
    kstr(b, &f, "guardrail_name", name);
    kstr(b, &f, "guardrail", kind);
    key(b, &f, "mode");
    if (mode && json_object_is_type(mode, json_type_string)) {
        sy_admin_jstr(b, json_object_get_string(mode));
    } else if (mode && json_object_is_type(mode, json_type_array)) {
        SY_BUF_LIT(b, "[");
        for (size_t i = 0; i < json_object_array_length(mode); i++) {
            if (i)
                SY_BUF_LIT(b, ",");
            sy_admin_jstr(b, json_object_get_string(json_object_array_get_idx(mode, i)));
        }
        SY_BUF_LIT(b, "]");
    } else {
        SY_BUF_LIT(b, "null");
    }
    kbool(b, &f, "default_on", on && json_object_get_boolean(on));
    SY_BUF_LIT(b, "}");
}

static void guardrails(struct sy_buf *b, const struct sy_config *c)
{
    int n = 0;
    SY_BUF_LIT(b, "[");
    const char *src[2] = {c->guardrails, c->legacy_guardrails};
    for (int s = 0; s < 2; s++) {
        struct json_object *arr = src[s] ? json_tokener_parse(src[s]) : NULL;
        for (size_t i = 0; arr && json_object_is_type(arr, json_type_array) && i < json_object_array_length(arr); i++)
            guardrail(b, &n, json_object_array_get_idx(arr, i), s == 1);
        json_object_put(arr);
    }
    SY_BUF_LIT(b, "]");
}

static void general_settings(struct sy_buf *b, const struct sy_config *c)
{
    int f = 1;
    SY_BUF_LIT(b, "{");
    kstr(b, &f, "master_key", c->master_key ? REDACTED : NULL);
    kstr(b, &f, "database_url", c->database_url ? REDACTED : NULL);
    knum(b, &f, "max_request_size_mb", c->max_request_size_mb);
    knum(b, &f, "proxy_batch_write_at", c->proxy_batch_write_at_s);
    kbool(b, &f, "disable_spend_logs", c->disable_spend_logs);
    kbool(b, &f, "disable_error_logs", c->disable_error_logs);
    kbool(b, &f, "store_prompts_in_spend_logs", c->store_prompts_in_spend_logs);
    kbool(b, &f, "allow_requests_on_db_unavailable", c->allow_requests_on_db_unavailable);
    knum(b, &f, "user_api_key_cache_ttl", c->user_api_key_cache_ttl_s);
    kint(b, &f, "database_connection_pool_limit", c->database_connection_pool_limit);
    kint(b, &f, "global_max_parallel_requests", c->global_max_parallel);
    kbool(b, &f, "require_auth_for_metrics_endpoint", c->require_auth_for_metrics_endpoint);
    key(b, &f, "alerting");
    sy_buf_puts(b, c->alerting_slack ? "[\"slack\"]" : "[]");
    knum(b, &f, "alerting_threshold", c->alerting_threshold_s);
    knum(b, &f, "maximum_spend_logs_retention_period", c->spend_logs_retention_s > 0 ? c->spend_logs_retention_s : -1);
    kint(b, &f, "pass_through_endpoints", (long long)c->n_pt_endpoints);
    SY_BUF_LIT(b, "}");
}

static void settings(struct sy_store *st, struct sy_admin_ctx *a)
{
    (void)st;
    const struct sy_config *c = a->table ? a->table->cfg : NULL;
    if (!c) {
        sy_admin_error(a, 500, "internal_server_error", NULL, "no configuration loaded");
        return;
    }
    struct sy_buf *b = &a->out;
    SY_BUF_LIT(b, "{\"router_settings\":");
    router_settings(b, c);
    SY_BUF_LIT(b, ",\"litellm_settings\":");
    litellm_settings(b, c);
    SY_BUF_LIT(b, ",\"cache\":");
    cache(b, c);
    SY_BUF_LIT(b, ",\"guardrails\":");
    guardrails(b, c);
    SY_BUF_LIT(b, ",\"general_settings\":");
    general_settings(b, c);
    sy_buf_printf(b, ",\"models\":%zu}", c->n_deployments);
}

/* proxy_admin and proxy_admin_viewer; read-only, no database needed */
const struct sy_admin_route sy_admin_settings_routes[] = {
    {HTTP_GET, "/switchyard/settings", settings, SY_ADMIN_READONLY | SY_ADMIN_NODB},
    {0, NULL, NULL, 0},
};
