/* gwconf.c - compile a config snapshot into what the request path reads.
 *
 * Done once per load, never per request: the router policy and the model
 * table (router/table.c: deployments resolved, groups sorted, weights, prices
 * and response header lines precomputed), the /v1/models body prebuilt, and
 * each route's stage array assembled from only the enabled stages.
 */
#include "gateway/gateway.h"

#include <pthread.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "core/log.h"


/* Warnings found while compiling a config count with the loader's, so that
 * --check-config's "N warnings" matches what was printed. Builds run on one
 * thread at a time (startup, SIGHUP); the counter is per build. */
static _Thread_local int build_warnings;
#define gw_warn(...)             \
    do {                         \
        build_warnings++;        \
        sy_warn(__VA_ARGS__);    \
    } while (0)

static void build_warn_cb(const char *msg)
{
    gw_warn("%s", msg);
}

/* The CORS origin list outlives any one config: connections keep a pointer
 * to it between requests (http/server.h). Interned, so reloads with the same
 * list allocate nothing; a new list is a few bytes kept until exit. */
static const char *intern_origins(const char *list)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static char **tab;
    static size_t n;
    if (!list)
        return NULL;
    pthread_mutex_lock(&mu);
    const char *found = NULL;
    for (size_t i = 0; i < n && !found; i++)
        if (strcmp(tab[i], list) == 0)
            found = tab[i];
    if (!found) {
        char **nt = realloc(tab, (n + 1) * sizeof *nt);
        char *d = strdup(list);
        if (nt && d) {
            tab = nt;
            tab[n++] = d;
            found = d;
        } else {
            if (nt)
                tab = nt;
            free(d);
            found = ""; /* out of memory: allow no origin rather than any */
        }
    }
    pthread_mutex_unlock(&mu);
    return found;
}

static void build_pipelines(struct sy_gwconf *g)
{
    const struct sy_config *cfg = g->cfg;
    int auth = g->master_key != NULL;
#define ADD(rk, fn)                             \
    do {                                        \
        struct sy_pipeline *p = &g->routes[rk]; \
        p->names[p->n] = #fn;                   \
        p->stages[p->n++] = fn;                 \
    } while (0)
    for (int k = SY_RK_CHAT; k <= SY_RK_MESSAGES; k++) {
        if (auth)
            ADD(k, sy_stage_auth);
        if (k == SY_RK_PASSTHRU)
            ADD(k, sy_stage_passthru); /* JSON or multipart: finds the model */
        else
            ADD(k, sy_stage_parse);
        if (k == SY_RK_RESPONSES)
            ADD(k, sy_stage_responses_prev);
        if (auth && g->db && (k == SY_RK_CHAT || k == SY_RK_RESPONSES))
            ADD(k, sy_stage_file_refs); /* a file id in the request must be the caller's (passthru.c) */
        if (g->db)
            ADD(k, sy_stage_key_checks);
        ADD(k, sy_stage_route);
        if (g->db || cfg->global_max_parallel > 0)
            ADD(k, sy_stage_limits);
        if (cfg->cache && k <= SY_RK_EMBEDDINGS)
            ADD(k, sy_stage_cache);
        if (g->db)
            ADD(k, sy_stage_reserve);
        ADD(k, sy_stage_upstream);
    }
    if (auth)
        ADD(SY_RK_ADMIN, sy_stage_auth);
    ADD(SY_RK_ADMIN, sy_stage_admin);
    if (auth)
        ADD(SY_RK_CACHE_ADMIN, sy_stage_auth);
    ADD(SY_RK_CACHE_ADMIN, sy_stage_cache_admin);
    if (auth) {
        ADD(SY_RK_MODELS, sy_stage_auth);
        ADD(SY_RK_MODEL_ONE, sy_stage_auth);
        ADD(SY_RK_TOKEN_COUNTER, sy_stage_auth);
        ADD(SY_RK_HEALTH, sy_stage_auth);
        ADD(SY_RK_MESSAGES_COUNT, sy_stage_auth);
    }
    if (auth) {
        ADD(SY_RK_RESPONSES_ID, sy_stage_auth);
        ADD(SY_RK_FILES, sy_stage_auth);
    }
    ADD(SY_RK_RESPONSES_ID, sy_stage_responses_id);
    ADD(SY_RK_RESPONSES_ID, sy_stage_upstream); /* native deployments; stored ones are answered above */
    ADD(SY_RK_FILES, sy_stage_files);
    if (g->db)
        ADD(SY_RK_FILES, sy_stage_key_checks); /* budgets, blocked keys, end users */
    if (g->db || cfg->global_max_parallel > 0)
        ADD(SY_RK_FILES, sy_stage_limits);
    ADD(SY_RK_FILES, sy_stage_upstream);
    ADD(SY_RK_MESSAGES_COUNT, sy_stage_parse);
    ADD(SY_RK_MESSAGES_COUNT, sy_stage_messages_count);
    ADD(SY_RK_MODELS, sy_stage_models);
    ADD(SY_RK_MODEL_ONE, sy_stage_model_one);
    ADD(SY_RK_LIVENESS, sy_stage_liveness);
    ADD(SY_RK_READINESS, sy_stage_readiness);
    ADD(SY_RK_ROUTES, sy_stage_routes); /* public, as LiteLLM's */
    if (cfg->require_auth_for_metrics_endpoint)
        ADD(SY_RK_METRICS, sy_stage_metrics_auth);
    ADD(SY_RK_METRICS, sy_stage_metrics);
    ADD(SY_RK_TOKEN_COUNTER, sy_stage_token_counter);
    ADD(SY_RK_HEALTH, sy_stage_health);
#undef ADD
}

static void build_models_json(struct sy_gwconf *g)
{
    struct sy_buf b;
    sy_buf_init(&b, 64u << 20);
    sy_models_list_json(&g->table, 0, 0, NULL, NULL, &b);
    g->models_json = b.p;
    g->models_json_len = b.len;
}

struct sy_gwconf *sy_gwconf_build(struct sy_config *cfg, char *err, size_t errlen)
{
    struct sy_gwconf *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of memory");
        sy_config_unref(cfg);
        return NULL;
    }
    atomic_init(&g->refs, 1);
    build_warnings = 0;
    g->cfg = cfg;
    g->cors_origins = intern_origins(cfg->cors_origins);
    if (cfg->master_key && *cfg->master_key) {
        g->master_key = cfg->master_key;
        g->master_key_len = strlen(cfg->master_key);
        if (strncmp(cfg->master_key, "sk-", 3) != 0)
            gw_warn("config: general_settings.master_key should start with 'sk-' (LiteLLM requires it)");
    }
    g->max_body = (size_t)(cfg->max_request_size_mb * 1024 * 1024);
    sy_router_compile_policy(&g->rc, cfg, build_warn_cb); /* num_retries: router, litellm_settings, 2 */
    g->num_retries = g->rc.num_retries;
    if (!cfg->ssl_verify)
        gw_warn("config: litellm_settings.ssl_verify is false: upstream TLS certificates are NOT verified");

    if (sy_table_build(&g->table, build_warn_cb, err, errlen) != 0) {
        free(g); /* not reachable in practice; the process is out of memory */
        return NULL;
    }
    g->db = sy_gw.db;
    g->keys = g->db && g->master_key != NULL;
    build_pipelines(g);
    build_models_json(g);
    cfg->n_warnings += build_warnings;
    return g;
}

void sy_gwconf_ref(struct sy_gwconf *g)
{
    atomic_fetch_add_explicit(&g->refs, 1, memory_order_relaxed);
}

void sy_gwconf_unref(struct sy_gwconf *g)
{
    if (!g || atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel) != 1)
        return;
    sy_table_free(&g->table);
    free(g->models_json);
    sy_config_unref(g->cfg);
    free(g);
}

void sy_gwconf_print(const struct sy_gwconf *g, FILE *out)
{
    static const char *names[SY_RK__COUNT] = {
        "chat",    "completions", "embeddings",    "responses", "passthrough", "messages",    "messages_count",
        "models",  "model_one",   "liveness",      "readiness", "metrics",     "token_counter", "health",
        "admin",   "cache_admin", "responses_id",  "files"};
    fprintf(out, "pipelines:\n");
    for (int k = 0; k < SY_RK__COUNT; k++) {
        fprintf(out, "  %-14s", names[k]);
        for (unsigned i = 0; i < g->routes[k].n; i++)
            fprintf(out, "%s%s", i ? " -> " : "", g->routes[k].names[i] + strlen("sy_stage_"));
        fprintf(out, "\n");
    }
    size_t ok = 0;
    for (size_t i = 0; i < g->ndrts; i++)
        ok += g->drts[i].prov != NULL;
    fprintf(out, "deployments: %zu usable of %zu, model groups: %zu\n", ok, g->ndrts, g->ngroups);
}
