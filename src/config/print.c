/* print.c - sy_config_print: the human summary `switchyard --check-config` shows.
 *
 * One block per model group (in first-appearance order) listing its
 * deployments, then the settings in effect, then the router settings
 * ("router:" lines: strategy, retries, cooldowns, fallbacks, aliases, Redis,
 * health checks). Secrets (api_key, master_key) are never printed in full:
 * "sk-...abcd" when long enough, else "***"; the Redis password is always "***".
 */
#include <stdio.h>
#include <string.h>

#include "config/config.h"

static void redact(const char *s, char *out, size_t cap)
{
    size_t n = s ? strlen(s) : 0;
    if (!s)
        snprintf(out, cap, "-");
    else if (n >= 12)
        snprintf(out, cap, "%.3s...%s", s, s + n - 4);
    else
        snprintf(out, cap, "***");
}

static void num(FILE *out, const char *name, double v)
{
    if (v >= 0)
        fprintf(out, " %s=%g", name, v);
}

/* "Class:n,Class:n" for the entries of a retry/allowed-fails policy that are
 * set (>= 0), "-" when none is. */
static void policy(FILE *out, const int v[SY_EXC__COUNT])
{
    static const char *const cls[SY_EXC__COUNT] = {"BadRequest", "Authentication",         "Timeout",
                                                   "RateLimit",  "ContentPolicyViolation", "InternalServer"};
    int n = 0;
    for (int i = 0; i < SY_EXC__COUNT; i++)
        if (v[i] >= 0)
            fprintf(out, "%s%s:%d", n++ ? "," : "", cls[i], v[i]);
    if (!n)
        fputc('-', out);
}

/* "router: <name>: group -> a,b; group2 -> c" when the list is not empty. */
static void fallbacks(FILE *out, const char *name, const struct sy_fallback *f, size_t n)
{
    if (!n)
        return;
    fprintf(out, "router: %s:", name);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%s %s ->", i ? ";" : "", f[i].group);
        for (size_t j = 0; j < f[i].n; j++)
            fprintf(out, "%s%s", j ? "," : " ", f[i].to[j]);
        if (!f[i].n)
            fprintf(out, " (none)");
    }
    fputc('\n', out);
}

/* The router settings in effect (config.h struct sy_router_config). */
static void print_router(const struct sy_config *c, FILE *out)
{
    const struct sy_router_config *r = &c->router;
    int retries = c->router_num_retries >= 0 ? c->router_num_retries : c->num_retries;
    fprintf(out, "router: strategy=%s", c->routing_strategy);
    if (strcmp(c->routing_strategy, "latency-based-routing") == 0)
        fprintf(out, " (ttl=%gs lowest_latency_buffer=%g max_latency_list_size=%d)", r->latency_ttl_s,
                r->lowest_latency_buffer, r->max_latency_list_size);
    if (retries >= 0)
        fprintf(out, " num_retries=%d", retries);
    else
        fprintf(out, " num_retries=default");
    if (r->retry_after_s > 0)
        fprintf(out, " retry_after=%gs", r->retry_after_s);
    if (r->has_retry_policy) {
        fprintf(out, " retry_policy=");
        policy(out, r->retry_policy);
    }
    if (r->stream_timeout_s >= 0)
        fprintf(out, " stream_timeout=%gs", r->stream_timeout_s);
    fprintf(out, " pre_call_checks=%s", r->enable_pre_call_checks ? "on" : "off");
    if (r->default_max_parallel_requests >= 0)
        fprintf(out, " default_max_parallel_requests=%d", r->default_max_parallel_requests);
    fputc('\n', out);

    if (r->enable_tag_filtering)
        fprintf(out, "router: tag_filtering=on match=%s\n", r->tag_filtering_match_any ? "any" : "all");
    for (size_t i = 0; i < r->n_provider_budgets; i++)
        fprintf(out, "router: provider_budget %s=%g per %s\n", r->provider_budgets[i].provider,
                r->provider_budgets[i].budget_limit, r->provider_budgets[i].period);

    if (r->disable_cooldowns) {
        fprintf(out, "router: cooldowns=off\n");
    } else {
        fprintf(out, "router: cooldowns=on cooldown_time=");
        if (r->cooldown_time_s >= 0)
            fprintf(out, "%gs", r->cooldown_time_s);
        else
            fprintf(out, "default");
        if (r->allowed_fails >= 0)
            fprintf(out, " allowed_fails=%d", r->allowed_fails);
        if (r->has_allowed_fails_policy) {
            fprintf(out, " allowed_fails_policy=");
            policy(out, r->allowed_fails_policy);
        }
        fputc('\n', out);
    }

    fprintf(out,
            "router: max_fallbacks=%d fallbacks=%zu context_window_fallbacks=%zu content_policy_fallbacks=%zu "
            "default_fallbacks=",
            r->max_fallbacks, r->n_fallbacks, r->n_context_window_fallbacks, r->n_content_policy_fallbacks);
    for (size_t i = 0; i < r->n_default_fallbacks; i++)
        fprintf(out, "%s%s", i ? "," : "", r->default_fallbacks[i]);
    fprintf(out, "%s\n", r->n_default_fallbacks ? "" : "-");
    fallbacks(out, "fallbacks", r->fallbacks, r->n_fallbacks);
    fallbacks(out, "context_window_fallbacks", r->context_window_fallbacks, r->n_context_window_fallbacks);
    fallbacks(out, "content_policy_fallbacks", r->content_policy_fallbacks, r->n_content_policy_fallbacks);
    if (r->n_aliases) {
        fprintf(out, "router: model_group_alias:");
        for (size_t i = 0; i < r->n_aliases; i++)
            fprintf(out, "%s %s -> %s%s", i ? "," : "", r->aliases[i].alias, r->aliases[i].group,
                    r->aliases[i].hidden ? " (hidden)" : "");
        fputc('\n', out);
    }

    if (r->redis_host)
        fprintf(out, "router: redis=%s:%d db=%d username=%s password=%s", r->redis_host, r->redis_port, r->redis_db,
                r->redis_username ? r->redis_username : "-", r->redis_password ? "***" : "-");
    else
        fprintf(out, "router: redis=off");
    fprintf(out, " background_health_checks=%s health_check_interval=%gs\n", r->background_health_checks ? "on" : "off",
            r->health_check_interval_s);
}

static void print_list(FILE *out, const char *name, const char *const *l, size_t n)
{
    fprintf(out, " %s=", name);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? "," : "", l[i]);
    fprintf(out, "%s", n ? "" : "-");
}

/* The logging callbacks (logging/logging.h), when any is on: what each list runs and how. */
static void print_logging(const struct sy_config *c, FILE *out)
{
    if (!c->n_success_callbacks && !c->n_failure_callbacks && !c->alerting_slack && !c->detailed_debug &&
        !c->store_prompts_in_spend_logs && !c->spend_logs_retention_s)
        return;
    fprintf(out, "logging:");
    print_list(out, "success", c->success_callbacks, c->n_success_callbacks);
    print_list(out, "failure", c->failure_callbacks, c->n_failure_callbacks);
    fprintf(out,
            " turn_off_message_logging=%s redact_user_api_key_info=%s request_log=%s%s alerting=%s "
            "store_prompts_in_spend_logs=%s batch_interval=%gs queue_max=%zu",
            c->turn_off_message_logging ? "true" : "false", c->redact_user_api_key_info ? "true" : "false",
            c->detailed_debug ? "on" : "off", c->json_logs ? " json_logs=true" : "", c->alerting_slack ? "slack" : "-",
            c->store_prompts_in_spend_logs ? "true" : "false", c->callback_batch_interval_s, c->callback_queue_max);
    if (c->spend_logs_retention_s > 0)
        fprintf(out, " spend_logs_retention=%gs every %gs", c->spend_logs_retention_s,
                c->spend_logs_retention_interval_s);
    fprintf(out, "\n");
}

void sy_config_print(const struct sy_config *c, FILE *out)
{
    size_t groups = 0;
    for (size_t i = 0; i < c->n_deployments; i++) {
        const struct sy_deployment *d = &c->deployments[i];
        size_t j;
        for (j = 0; j < i; j++)
            if (strcmp(c->deployments[j].model_name, d->model_name) == 0)
                break;
        if (j < i)
            continue; /* group already printed */
        groups++;
        size_t n = 0;
        for (j = i; j < c->n_deployments; j++)
            n += strcmp(c->deployments[j].model_name, d->model_name) == 0;
        fprintf(out, "model %s (%zu deployment%s)\n", d->model_name, n, n == 1 ? "" : "s");
        for (j = i; j < c->n_deployments; j++) {
            const struct sy_deployment *e = &c->deployments[j];
            if (strcmp(e->model_name, d->model_name) != 0)
                continue;
            char key[64];
            redact(e->api_key, key, sizeof key);
            fprintf(out, "  - %s %s api_base=%s api_key=%s id=%.12s", e->provider,
                    e->upstream_model ? e->upstream_model : "(no model)", e->api_base ? e->api_base : "-", key, e->id);
            num(out, "rpm", e->rpm);
            num(out, "tpm", e->tpm);
            num(out, "weight", e->weight);
            if (e->order >= 0)
                fprintf(out, " order=%d", e->order);
            num(out, "timeout", e->timeout_s);
            if (e->max_parallel_requests >= 0)
                fprintf(out, " max_parallel_requests=%d", e->max_parallel_requests);
            num(out, "cooldown_time", e->cooldown_time_s);
            if (strcmp(e->mode, "chat") != 0)
                fprintf(out, " mode=%s", e->mode);
            fprintf(out, "  (%s:%d)\n", e->file, e->line);
        }
    }
    char mk[64];
    redact(c->master_key, mk, sizeof mk);
    fprintf(out, "%zu model groups, %zu deployments\n", groups, c->n_deployments);
    fprintf(out, "settings: routing_strategy=%s num_retries=%d router_num_retries=%d request_timeout=%gs",
            c->routing_strategy, c->num_retries, c->router_num_retries, c->request_timeout_s);
    if (c->router_timeout_s >= 0)
        fprintf(out, " router_timeout=%gs", c->router_timeout_s);
    fprintf(out, " drop_params=%s master_key=%s auth=%s\n", c->drop_params ? "true" : "false", mk,
            c->master_key ? "on" : "off");
    fprintf(out,
            "settings: max_request_size_mb=%g max_header_bytes=%zu header_timeout=%gs body_timeout=%gs "
            "keepalive_timeout=%gs ssl_verify=%s%s%s\n",
            c->max_request_size_mb, c->max_header_bytes, c->header_timeout_s, c->body_timeout_s, c->keepalive_timeout_s,
            c->ssl_verify ? "true" : "false", c->ssl_ca_file ? " ca_file=" : "", c->ssl_ca_file ? c->ssl_ca_file : "");
    fprintf(out, "settings: prometheus=%s require_auth_for_metrics_endpoint=%s access_log=%s callbacks=",
            c->prometheus ? "on" : "off", c->require_auth_for_metrics_endpoint ? "true" : "false",
            c->access_log ? c->access_log : "-");
    for (size_t i = 0; i < c->n_callbacks; i++)
        fprintf(out, "%s%s", i ? "," : "", c->callbacks[i]);
    fprintf(out, "%s\n", c->n_callbacks ? "" : "-");
    print_logging(c, out);
    print_router(c, out);
    if (c->n_warnings)
        fprintf(out, "%d warning%s (see above)\n", c->n_warnings, c->n_warnings == 1 ? "" : "s");
}
