/* gwconf.c - compile a config snapshot into what the request path reads.
 *
 * Done once per load, never per request: the router policy and the model
 * table (router/table.c: deployments resolved, groups sorted, weights, prices
 * and response header lines precomputed), the /v1/models body prebuilt, and
 * each route's stage arrays flattened from the stage list (gateway/stage.h)
 * to only the stages the config enables.
 */
#include "gateway/gateway.h"

#include <pthread.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "core/log.h"
#include "gateway/slot.h"
#include "gateway/stage.h"
#include "gateway/filter.h"

/* Warnings found while compiling a config count with the loader's, so that
 * --check-config's "N warnings" matches what was printed. Builds run on one
 * thread at a time (startup, SIGHUP); the counter is per build. */
static _Thread_local int build_warnings;
#define gw_warn(...)          \
    do {                      \
        build_warnings++;     \
        sy_warn(__VA_ARGS__); \
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

/* Give every listed stage's slot an index: once, at the first build, before
 * any worker runs (later builds find them registered). */
static void register_slots(void)
{
    for (size_t i = 0; i < sy_nstages; i++)
        sy_slot_register(sy_stages[i]->slot);
}

/* Each route's pipeline: one walk of the stage list (src/stages/list.def)
 * keeping the stages whose routes mask has the route and that the config
 * enables, counted first, then flattened into one block holding run[],
 * names[], finish[] and headers[] sized by those counts (DESIGN §1, "build,
 * don't check"; nginx's ngx_http_init_phase_handlers). -1: out of memory. */
static int applies(const struct sy_stage *s, const struct sy_gwconf *g, int k)
{
    return (s->routes & SY_RKB(k)) && (!s->enabled || s->enabled(g, (enum sy_route_kind)k));
}

_Static_assert(_Alignof(sy_stage_fn) == _Alignof(const char *) && _Alignof(sy_finish_fn) == _Alignof(const char *) &&
                   _Alignof(sy_headers_fn) == _Alignof(const char *) &&
                   _Alignof(sy_answer_fn) == _Alignof(const char *),
               "a pipeline's arrays share one block");

static int build_pipelines(struct sy_gwconf *g)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_slots);
    for (int k = 0; k < SY_RK__COUNT; k++) {
        struct sy_pipeline *p = &g->routes[k];
        size_t nrun = 0, nfin = 0, nhdr = 0, nfb = 0, nans = 0;
        for (size_t i = 0; i < sy_nstages; i++)
            if (applies(sy_stages[i], g, k)) {
                nrun += sy_stages[i]->run != NULL;
                nfin += sy_stages[i]->finish != NULL;
                nhdr += sy_stages[i]->headers != NULL;
                nfb += sy_stages[i]->fallback != NULL;
                nans += sy_stages[i]->answer != NULL;
            }
        size_t o_names = nrun * sizeof(sy_stage_fn), o_fin = o_names + nrun * sizeof(const char *),
               o_hdr = o_fin + nfin * sizeof(sy_finish_fn), o_fb = o_hdr + nhdr * sizeof(sy_headers_fn),
               o_ans = o_fb + nfb * sizeof(sy_fallback_fn), size = o_ans + nans * sizeof(sy_answer_fn);
        char *mem = malloc(size ? size : 1);
        if (!mem)
            return -1;
        p->mem = mem;
        p->run = (sy_stage_fn *)mem;
        p->names = (const char **)(mem + o_names);
        p->finish = (sy_finish_fn *)(mem + o_fin);
        p->headers = (sy_headers_fn *)(mem + o_hdr);
        p->fallback = (sy_fallback_fn *)(mem + o_fb);
        p->answer = (sy_answer_fn *)(mem + o_ans);
        for (size_t i = 0; i < sy_nstages; i++) {
            const struct sy_stage *s = sy_stages[i];
            if (!applies(s, g, k))
                continue;
            if (s->run) {
                p->names[p->n] = s->name;
                p->run[p->n++] = s->run;
            }
            if (s->finish)
                p->finish[p->nfinish++] = s->finish;
            if (s->headers)
                p->headers[p->nheaders++] = s->headers;
            if (s->fallback)
                p->fallback[p->nfallback++] = s->fallback;
            if (s->answer)
                p->answer[p->nanswer++] = s->answer;
        }
    }
    return 0;
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
    if (!(g->sconf = calloc(sy_nstages ? sy_nstages : 1, sizeof *g->sconf))) {
        snprintf(err, errlen, "out of memory");
        sy_gwconf_unref(g);
        return NULL;
    }
    for (size_t i = 0; i < sy_nstages; i++) { /* the stages' own per-config state */
        const struct sy_stage *s = sy_stages[i];
        if (!s->conf_build)
            continue;
        if (s->conf_slot)
            *s->conf_slot = (int)i;
        if (s->conf_build(g, &g->sconf[i], err, errlen) != 0) {
            sy_gwconf_unref(g);
            return NULL;
        }
    }
    if (build_pipelines(g) != 0 || sy_filters_build(g) != 0) {
        snprintf(err, errlen, "out of memory");
        sy_gwconf_unref(g);
        return NULL;
    }
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
    for (int k = 0; k < SY_RK__COUNT; k++)
        free(g->routes[k].mem);
    sy_filters_free(g);
    for (size_t i = 0; g->sconf && i < sy_nstages; i++)
        if (g->sconf[i] && sy_stages[i]->conf_free)
            sy_stages[i]->conf_free(g->sconf[i]);
    free(g->sconf);
    free(g->models_json);
    sy_config_unref(g->cfg);
    free(g);
}

void sy_gwconf_print(const struct sy_gwconf *g, FILE *out)
{
    static const char *names[SY_RK__COUNT] = {
        "chat",          "completions", "embeddings",   "responses", "passthrough", "messages",      "messages_count",
        "models",        "model_one",   "liveness",     "readiness", "metrics",     "token_counter", "health",
        "admin",         "cache_admin", "responses_id", "files",     "routes",      "root",          "provider",
        "provider_open", "guardrails",  "mcp",          "mcp_sse",   "mcp_rest",    "ui"};
    fprintf(out, "pipelines:\n");
    for (int k = 0; k < SY_RK__COUNT; k++) {
        fprintf(out, "  %-14s", names[k]);
        for (unsigned i = 0; i < g->routes[k].n; i++)
            fprintf(out, "%s%s", i ? " -> " : "", g->routes[k].names[i]);
        fprintf(out, "\n");
    }
    size_t ok = 0;
    for (size_t i = 0; i < g->ndrts; i++)
        ok += g->drts[i].prov != NULL;
    fprintf(out, "deployments: %zu usable of %zu, model groups: %zu\n", ok, g->ndrts, g->ngroups);
    for (size_t i = 0; i < sy_nstages; i++) /* what stages compiled (guardrails and where they run) */
        if (sy_stages[i]->conf_print && g->sconf && g->sconf[i])
            sy_stages[i]->conf_print(g, out);
}
