/* print.c - sy_config_print: the human summary `switchyard --check-config` shows.
 *
 * One block per model group (in first-appearance order) listing its
 * deployments, then the settings in effect. Secrets (api_key, master_key) are
 * never printed in full: "sk-...abcd" when long enough, else "***".
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
                    e->upstream_model ? e->upstream_model : "(no model)", e->api_base ? e->api_base : "-", key,
                    e->id);
            num(out, "rpm", e->rpm);
            num(out, "tpm", e->tpm);
            num(out, "weight", e->weight);
            if (e->order >= 0)
                fprintf(out, " order=%d", e->order);
            num(out, "timeout", e->timeout_s);
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
    fprintf(out, "settings: max_request_size_mb=%g max_header_bytes=%zu header_timeout=%gs body_timeout=%gs "
                 "keepalive_timeout=%gs ssl_verify=%s%s%s\n",
            c->max_request_size_mb, c->max_header_bytes, c->header_timeout_s, c->body_timeout_s,
            c->keepalive_timeout_s, c->ssl_verify ? "true" : "false", c->ssl_ca_file ? " ca_file=" : "",
            c->ssl_ca_file ? c->ssl_ca_file : "");
    fprintf(out, "settings: prometheus=%s require_auth_for_metrics_endpoint=%s access_log=%s callbacks=",
            c->prometheus ? "on" : "off", c->require_auth_for_metrics_endpoint ? "true" : "false",
            c->access_log ? c->access_log : "-");
    for (size_t i = 0; i < c->n_callbacks; i++)
        fprintf(out, "%s%s", i ? "," : "", c->callbacks[i]);
    fprintf(out, "%s\n", c->n_callbacks ? "" : "-");
    if (c->n_warnings)
        fprintf(out, "%d warning%s (see above)\n", c->n_warnings, c->n_warnings == 1 ? "" : "s");
}
