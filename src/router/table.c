/* table.c - compile a config snapshot's model list into the model table.
 *
 * Done once per load, never per request: provider presets (or a translating
 * provider's adapter) resolved, upstream URLs and auth header lines
 * pre-formatted, deployments grouped by model_name and the groups sorted for
 * binary search, simple-shuffle weights precomputed, each deployment's live
 * state attached (kept across reloads by id), the x-litellm-* response header
 * lines and the price entries prebuilt; router/compile.c then resolves
 * wildcard groups, aliases and fallbacks. Also here: the lookups by name and
 * by deployment, and the GET /v1/models list, which is a view of the table.
 * The gateway (gateway/gwconf.c) owns the table inside its compiled config;
 * the router and the management API only read it.
 */
#include "router/table.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "providers/adapter.h"
#include "tokenizer/tokenizer.h"

/* A config warning: formatted, then printed and counted by the owner's warn(). */
static void twarn(void (*warn)(const char *), const char *f, ...) __attribute__((format(printf, 2, 3)));
static void twarn(void (*warn)(const char *), const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *msg = NULL;
    if (vasprintf(&msg, f, ap) < 0)
        msg = NULL;
    va_end(ap);
    warn(msg ? msg : "config: a deployment cannot be served (out of memory)");
    free(msg);
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *out = NULL;
    if (vasprintf(&out, f, ap) < 0)
        out = NULL;
    va_end(ap);
    return out;
}

static const char *env_first(const char *const names[2])
{
    for (int i = 0; i < 2; i++)
        if (names[i]) {
            const char *v = getenv(names[i]);
            if (v && *v)
                return v;
        }
    return NULL;
}

static int cmp_drt_group(const void *a, const void *b)
{
    const struct sy_drt *x = *(struct sy_drt *const *)a, *y = *(struct sy_drt *const *)b;
    int c = strcmp(x->d->model_name, y->d->model_name);
    if (c)
        return c;
    return (x > y) - (x < y); /* keep config order within a group */
}

/* A translating provider's deployment: its adapter resolves the settings
 * (base URL, keys, region ...) once, here. */
static int resolve_adapter(struct sy_table *t, struct sy_drt *r, void (*warn)(const char *))
{
    const struct sy_deployment *d = r->d;
    char err[512] = "";
    struct sy_pconf *pc = calloc(1, sizeof *pc);
    if (!pc || r->ad->configure(d, t->cfg->drop_params, pc, err, sizeof err) != 0) {
        twarn(warn, "config: %s:%d: deployment '%s' (%s): %s; requests to it will fail", d->file ? d->file : "config",
              d->line, d->model_name, d->model, err[0] ? err : "out of memory");
        if (pc) {
            sy_pconf_free(pc);
            free(pc);
        }
        r->ad = NULL;
        return -1;
    }
    r->pc = pc;
    r->prov = sy_adapter_provider(r->ad);
    r->wildcard = d->upstream_model && strchr(d->upstream_model, '*') != NULL;
    r->tls = pc->base && strncmp(pc->base, "https://", 8) == 0;
    const char *um = d->upstream_model ? d->upstream_model : "";
    struct sy_buf m;
    sy_buf_init(&m, 1 << 16);
    SY_BUF_LIT(&m, "\"");
    sy_buf_json_escape(&m, um, strlen(um));
    SY_BUF_LIT(&m, "\"");
    r->model_json = m.p;
    r->model_json_len = m.len;
    return 0;
}

/* Resolve URLs and headers for one deployment. 0, or -1 (warned) when unusable. */
static int resolve(struct sy_table *t, struct sy_drt *r, void (*warn)(const char *))
{
    const struct sy_deployment *d = r->d;
    const struct sy_config *cfg = t->cfg;
    r->prov = d->provider ? sy_provider_find(d->provider) : NULL;
    r->timeout_s = d->timeout_s > 0            ? d->timeout_s
                   : cfg->router_timeout_s > 0 ? cfg->router_timeout_s
                                               : cfg->request_timeout_s;
    r->stream_timeout_s = d->stream_timeout_s > 0            ? d->stream_timeout_s
                          : cfg->router.stream_timeout_s > 0 ? cfg->router.stream_timeout_s
                                                             : r->timeout_s;
    const char *um = d->upstream_model ? d->upstream_model : "";
    r->enc = d->tokenizer && sy_tok_encoding_by_name(d->tokenizer, strlen(d->tokenizer)) >= 0
                 ? sy_tok_encoding_by_name(d->tokenizer, strlen(d->tokenizer))
                 : (int)sy_tok_encoding_for_model(um, strlen(um));
    if (d->mock_response) { /* answered in-process whatever the provider */
        r->prov = sy_provider_find("mock");
        return 0;
    }
    if (!d->model) {
        twarn(warn, "config: model_name '%s' has no litellm_params.model; requests to it will fail", d->model_name);
        return -1;
    }
    if (!r->prov && (r->ad = sy_adapter_find(d->provider)) != NULL)
        return resolve_adapter(t, r, warn);
    if (!r->prov) {
        twarn(warn, "config: %s:%d: provider '%s' (model '%s') is %s; requests to model group '%s' will fail",
              d->file ? d->file : "config", d->line, d->provider ? d->provider : "?", d->model,
              d->provider && sy_provider_known_unsupported(d->provider) ? "not supported by switchyard yet" : "unknown",
              d->model_name);
        return -1;
    }
    if (r->prov->flags & SY_PRESET_MOCK)
        return 0;
    r->wildcard = strchr(um, '*') != NULL;
    const char *base = d->api_base ? d->api_base : env_first(r->prov->base_env);
    if (!base)
        base = r->prov->default_base;
    if (!base) {
        twarn(warn, "config: %s:%d: deployment '%s' (%s) needs api_base", d->file ? d->file : "config", d->line,
              d->model_name, d->model);
        r->prov = NULL;
        return -1;
    }
    size_t bl = strlen(base);
    while (bl && base[bl - 1] == '/')
        bl--;
    const char *v1 = "";
    if ((r->prov->flags & SY_PRESET_APPEND_V1) && !(bl >= 3 && memcmp(base + bl - 3, "/v1", 3) == 0))
        v1 = "/v1";
    r->tls = strncmp(base, "https://", 8) == 0;
    static const char *ops[3] = {"chat/completions", "completions", "embeddings"};
    for (int i = 0; i < 3; i++) {
        if (r->prov->flags & SY_PRESET_AZURE) {
            const char *ver = d->api_version ? d->api_version : getenv("AZURE_API_VERSION");
            if (!ver)
                ver = "2024-10-21";
            r->url[i] = fmt("%.*s/openai/deployments/%s/%s?api-version=%s", (int)bl, base, um, ops[i], ver);
        } else {
            r->url[i] = fmt("%.*s%s/%s", (int)bl, base, v1, ops[i]);
        }
    }
    const char *key = d->api_key ? d->api_key : env_first(r->prov->key_env);
    if (!key)
        key = r->prov->default_key;
    struct sy_buf h;
    sy_buf_init(&h, 1 << 16);
    SY_BUF_LIT(&h, "Content-Type: application/json\r\nUser-Agent: switchyard/" SY_VERSION "\r\n");
    if (key && *key) {
        if (r->prov->auth == SY_AUTH_API_KEY_HEADER)
            sy_buf_printf(&h, "api-key: %s\r\n", key);
        else if (r->prov->auth == SY_AUTH_BEARER)
            sy_buf_printf(&h, "Authorization: Bearer %s\r\n", key);
    }
    if (d->organization)
        sy_buf_printf(&h, "OpenAI-Organization: %s\r\n", d->organization);
    if (strcmp(r->prov->name, "openrouter") == 0) {
        const char *site = getenv("OR_SITE_URL"), *app = getenv("OR_APP_NAME");
        if (site)
            sy_buf_printf(&h, "HTTP-Referer: %s\r\n", site);
        if (app)
            sy_buf_printf(&h, "X-Title: %s\r\n", app);
    }
    if (r->prov->extra_headers)
        sy_buf_puts(&h, r->prov->extra_headers);
    r->headers = h.p;
    r->headers_len = h.len;
    struct sy_buf m;
    sy_buf_init(&m, 1 << 16);
    SY_BUF_LIT(&m, "\"");
    sy_buf_json_escape(&m, um, strlen(um));
    SY_BUF_LIT(&m, "\"");
    r->model_json = m.p;
    r->model_json_len = m.len;
    return 0;
}

/* The x-litellm-* response header lines that name a deployment or a group
 * are the same on every response: build them once (pipeline.c copies them). */
static void build_resp_headers(struct sy_table *t)
{
    for (size_t i = 0; i < t->ndrts; i++) {
        struct sy_drt *r = &t->drts[i];
        struct sy_buf h;
        sy_buf_init(&h, 1 << 16);
        sy_buf_printf(&h, "x-litellm-model-id: %s\r\n", r->d->id ? r->d->id : "");
        if (r->d->api_base)
            sy_buf_printf(&h, "x-litellm-model-api-base: %s\r\n", r->d->api_base);
        r->resp_headers = h.p;
        r->resp_headers_len = h.len;
    }
    for (size_t i = 0; i < t->ngroups; i++) {
        struct sy_group *gr = &t->groups[i];
        struct sy_buf h;
        sy_buf_init(&h, 1 << 16);
        sy_buf_printf(&h, "x-litellm-model-group: %s\r\n", gr->name);
        gr->resp_header = h.p;
        gr->resp_header_len = h.len;
    }
}

/* Prices (spend/spend.h): each deployment's entry of the price table with its
 * own overrides; each group's dearest rates (budget reservations). */
static void build_prices(struct sy_table *t)
{
    for (size_t i = 0; i < t->ndrts; i++) {
        struct sy_drt *r = &t->drts[i];
        const struct sy_deployment *d = r->d;
        const char *m = d->base_model ? d->base_model : d->upstream_model;
        const struct sy_price *p = m ? sy_price_find(d->provider, m) : NULL;
        sy_dprice_from(&r->price, p);
        struct sy_dprice *dp = &r->price;
        if (d->input_cost_per_token >= 0)
            dp->in = d->input_cost_per_token, dp->known = 1, dp->tier_threshold = 0;
        if (d->output_cost_per_token >= 0)
            dp->out = d->output_cost_per_token, dp->known = 1, dp->tier_threshold = 0;
        if (d->cache_read_input_token_cost >= 0)
            dp->cache_read = d->cache_read_input_token_cost;
        if (d->cache_creation_input_token_cost >= 0)
            dp->cache_write = d->cache_creation_input_token_cost;
        if (d->cache_creation_input_token_cost_above_1hr >= 0)
            dp->cache_write_1h = d->cache_creation_input_token_cost_above_1hr;
        if (d->output_cost_per_reasoning_token >= 0)
            dp->reasoning = d->output_cost_per_reasoning_token;
        if (d->max_output_tokens > 0)
            dp->max_output_tokens = d->max_output_tokens;
        else if (d->max_tokens > 0 && !dp->max_output_tokens)
            dp->max_output_tokens = d->max_tokens;
        if (d->max_input_tokens > 0)
            dp->max_input_tokens = d->max_input_tokens;
    }
#define MAXF(f)                       \
    if (r->price.f > gr->price_max.f) \
    gr->price_max.f = r->price.f
    for (size_t i = 0; i < t->ngroups; i++) {
        struct sy_group *gr = &t->groups[i];
        memset(&gr->price_max, 0, sizeof gr->price_max);
        struct sy_buf ag;
        sy_buf_init(&ag, 1 << 20);
        for (size_t k = 0; k < gr->n; k++) {
            const struct sy_drt *r = gr->d[k];
            if (r->price.known)
                gr->price_max.known = 1;
            MAXF(in);
            MAXF(out);
            MAXF(cache_read);
            MAXF(cache_write);
            MAXF(cache_write_1h);
            MAXF(reasoning);
            MAXF(tier_in);
            MAXF(tier_out);
            MAXF(tier_cache_read);
            MAXF(tier_cache_write);
            MAXF(tier_cache_write_1h);
            MAXF(max_output_tokens);
            MAXF(max_input_tokens);
            if (r->price.tier_threshold &&
                (!gr->price_max.tier_threshold || r->price.tier_threshold < gr->price_max.tier_threshold))
                gr->price_max.tier_threshold = r->price.tier_threshold;
            for (size_t a = 0; a < r->d->n_access_groups; a++)
                sy_buf_append(&ag, r->d->access_groups[a], strlen(r->d->access_groups[a]) + 1);
        }
        if (ag.len) {
            sy_buf_append(&ag, "", 1);
            gr->access_groups = ag.p;
        } else {
            sy_buf_free(&ag);
        }
    }
#undef MAXF
}

/* Group the deployments by model_name (config order within a group) and
 * precompute each group's simple-shuffle weights. */
static int build_groups(struct sy_table *t)
{
    struct sy_drt **order = calloc(t->ndrts ? t->ndrts : 1, sizeof *order);
    t->groups = calloc(t->ndrts ? t->ndrts : 1, sizeof *t->groups);
    if (!order || !t->groups) {
        free(order);
        return -1;
    }
    size_t nuse = 0;
    for (size_t i = 0; i < t->ndrts; i++)
        if (t->drts[i].d->model_name)
            order[nuse++] = &t->drts[i];
    qsort(order, nuse, sizeof *order, cmp_drt_group);
    for (size_t i = 0; i < nuse;) {
        size_t j = i;
        while (j < nuse && strcmp(order[j]->d->model_name, order[i]->d->model_name) == 0)
            j++;
        struct sy_group *gr = &t->groups[t->ngroups++];
        gr->name = order[i]->d->model_name;
        gr->name_len = strlen(gr->name);
        gr->n = j - i;
        gr->d = calloc(gr->n, sizeof *gr->d);
        memcpy(gr->d, order + i, gr->n * sizeof *gr->d);
        /* simple-shuffle: weight, then rpm, then tpm - looked up on the first deployment */
        const struct sy_deployment *f = gr->d[0]->d;
        int field = f->weight >= 0 ? 1 : f->rpm >= 0 ? 2 : f->tpm >= 0 ? 3 : 0;
        gr->weighted = field != 0;
        for (size_t k = 0; k < gr->n; k++) {
            const struct sy_deployment *dd = gr->d[k]->d;
            double v = field == 1 ? dd->weight : field == 2 ? dd->rpm : field == 3 ? dd->tpm : 0;
            gr->d[k]->weight = v > 0 ? v : 0;
            gr->usable += gr->d[k]->prov != NULL;
        }
        gr->wildcard = strchr(gr->name, '*') != NULL;
        i = j;
    }
    free(order);
    return 0;
}

int sy_table_build(struct sy_table *t, void (*warn)(const char *), char *err, size_t errlen)
{
    const struct sy_config *cfg = t->cfg;
    t->ndrts = cfg->n_deployments;
    t->drts = calloc(t->ndrts ? t->ndrts : 1, sizeof *t->drts);
    if (!t->drts)
        goto oom;
    for (size_t i = 0; i < t->ndrts; i++) {
        t->drts[i].d = &cfg->deployments[i];
        resolve(t, &t->drts[i], warn);
    }
    if (build_groups(t) != 0)
        goto oom;
    for (size_t i = 0; i < t->ndrts; i++) {
        struct sy_drt *r = &t->drts[i];
        const struct sy_deployment *d = r->d;
        r->st = sy_dstate_get(d->id ? d->id : d->model_name);
        if (!r->st)
            goto oom;
        r->max_parallel = d->max_parallel_requests > 0 ? d->max_parallel_requests : t->rc.default_max_parallel;
        double in = d->input_cost_per_token, out = d->output_cost_per_token;
        r->cost = in < 0 && out < 0 ? 5.0 : (in > 0 ? in : 0) + (out > 0 ? out : 0);
    }
    sy_router_compile_groups(t, warn);
    build_resp_headers(t);
    build_prices(t);
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

void sy_table_free(struct sy_table *t)
{
    for (size_t i = 0; i < t->ndrts; i++) {
        for (int k = 0; k < 3; k++)
            free((char *)t->drts[i].url[k]);
        free((char *)t->drts[i].headers);
        free((char *)t->drts[i].model_json);
        free((char *)t->drts[i].resp_headers);
        if (t->drts[i].pc) {
            sy_pconf_free(t->drts[i].pc);
            free(t->drts[i].pc);
        }
    }
    for (size_t i = 0; i < t->ngroups; i++) {
        free(t->groups[i].d);
        for (int k = 0; k < 3; k++) {
            free((void *)t->groups[i].fb[k]);
            free((void *)t->groups[i].fbname[k]);
        }
        free((char *)t->groups[i].resp_header);
        free((char *)t->groups[i].access_groups);
    }
    free(t->groups);
    free(t->wild);
    free(t->drts);
}

const struct sy_group *sy_table_group_of(const struct sy_table *t, const struct sy_drt *d)
{
    for (size_t i = 0; i < t->ngroups; i++)
        for (size_t j = 0; j < t->groups[i].n; j++)
            if (t->groups[i].d[j] == d)
                return &t->groups[i];
    return NULL;
}

const struct sy_group *sy_table_group(const struct sy_table *t, const char *name, size_t len)
{
    size_t lo = 0, hi = t->ngroups;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const struct sy_group *gr = &t->groups[mid];
        size_t m = gr->name_len < len ? gr->name_len : len;
        int c = memcmp(gr->name, name, m);
        if (c == 0)
            c = (gr->name_len > len) - (gr->name_len < len);
        if (c == 0)
            return gr;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ---- GET /v1/models -----------------------------------------------------------
 * The list LiteLLM's model_list builds (proxy/auth/model_checks.py
 * get_complete_model_list, then _get_wildcard_models), in this order:
 *
 *   1. model groups that can be served (a deployment with a supported
 *      provider: sy_group.usable), sorted by name; a wildcard group's own
 *      name ("openai/<star>", "<star>") only with return_wildcard_routes
 *   2. model_group_alias names (not hidden) of listed groups
 *   3. include_model_access_groups (no key filter): the access group names
 *   4. each wildcard group's known models (get_known_models_from_wildcard):
 *      group "P/S" whose deployment has litellm_params.model "X/..." lists
 *      sy_prices_provider_models(X) ("azure": "Azure-LLM", as get_valid_models);
 *      S other than "<star>" is a filter: S without its stars as a prefix of
 *      the names when some name has it, else put in front of every name;
 *      a name not starting with P becomes "P/name". A group without a '/'
 *      ("<star>") lists nothing here.
 *
 * allow (a virtual key's model list) filters: a name is listed when allowed,
 * an expansion also when its group is. Names are listed once (LiteLLM can
 * repeat one). LiteLLM (with a router) also keeps the wildcard names in the
 * list without return_wildcard_routes (and then lists them twice); here they
 * are left out: they are patterns, not models a client can pick. */
struct mlist {
    struct sy_buf *b;
    int (*allow)(void *ud, const char *model);
    void *ud;
    char **seen; /* names listed, open addressing */
    size_t cap, n;
};

static uint64_t ml_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

void sy_model_limits_json(struct sy_buf *b, const struct sy_dprice *dp)
{
    if (!dp)
        return;
    if (dp->max_input_tokens > 0)
        sy_buf_printf(b, ",\"context_window\":%lld,\"max_input_tokens\":%lld", (long long)dp->max_input_tokens,
                      (long long)dp->max_input_tokens);
    if (dp->max_output_tokens > 0)
        sy_buf_printf(b, ",\"max_output_tokens\":%lld", (long long)dp->max_output_tokens);
}

/* List id[0..n) unless already listed; with the limits of dp (may be NULL). */
static void ml_add(struct mlist *m, const char *id, size_t n, const struct sy_dprice *dp)
{
    if (m->n * 2 >= m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        char **s = calloc(cap, sizeof *s);
        if (!s)
            return;
        for (size_t i = 0; i < m->cap; i++)
            if (m->seen[i]) {
                size_t j = ml_hash(m->seen[i], strlen(m->seen[i])) & (cap - 1);
                while (s[j])
                    j = (j + 1) & (cap - 1);
                s[j] = m->seen[i];
            }
        free(m->seen);
        m->seen = s;
        m->cap = cap;
    }
    size_t j = ml_hash(id, n) & (m->cap - 1);
    for (; m->seen[j]; j = (j + 1) & (m->cap - 1))
        if (strncmp(m->seen[j], id, n) == 0 && m->seen[j][n] == 0)
            return;
    if (!(m->seen[j] = strndup(id, n)))
        return;
    if (m->n++)
        SY_BUF_LIT(m->b, ",");
    SY_BUF_LIT(m->b, "{\"id\":\"");
    sy_buf_json_escape(m->b, id, n);
    SY_BUF_LIT(m->b, "\",\"object\":\"model\",\"created\":1677610602,\"owned_by\":\"openai\"");
    sy_model_limits_json(m->b, dp);
    SY_BUF_LIT(m->b, "}");
}

struct wexp {
    struct mlist *m;
    const char *gp; /* the group name's provider part, P */
    size_t gpl;
    const char *mp; /* the suffix without its stars; NULL for "<star>" */
    size_t mpl;
    int filter;   /* pass 1: some name starts with mp; pass 2: keep only those */
    int group_ok; /* allow() accepted the group name */
    int counting; /* pass 1 */
};

static void wexp_one(const char *name, void *ctx)
{
    struct wexp *w = ctx;
    size_t nl = strlen(name);
    int has = w->mp && nl >= w->mpl && strncmp(name, w->mp, w->mpl) == 0;
    if (w->counting) {
        w->filter |= has;
        return;
    }
    char base[512], id[600];
    if (w->mp && w->filter && !has)
        return;
    int bl = snprintf(base, sizeof base, "%.*s%s", (int)(w->mp && !w->filter ? w->mpl : 0), w->mp ? w->mp : "", name);
    if (bl < 0 || (size_t)bl >= sizeof base)
        return;
    int il = (size_t)bl >= w->gpl && strncmp(base, w->gp, w->gpl) == 0
                 ? snprintf(id, sizeof id, "%s", base)
                 : snprintf(id, sizeof id, "%.*s/%s", (int)w->gpl, w->gp, base);
    if (il < 0 || (size_t)il >= sizeof id)
        return;
    if (w->m->allow && !w->group_ok && !w->m->allow(w->m->ud, id))
        return;
    struct sy_dprice dp;
    sy_dprice_from(&dp, sy_price_find(NULL, name));
    ml_add(w->m, id, (size_t)il, &dp);
}

static void wildcard_models(struct mlist *m, const struct sy_group *gr)
{
    const char *slash = memchr(gr->name, '/', gr->name_len);
    if (!slash)
        return; /* "<star>": LiteLLM's split("/", 1) fails, nothing */
    struct wexp w = {.m = m, .gp = gr->name, .gpl = (size_t)(slash - gr->name)};
    char mp[256];
    const char *suf = slash + 1;
    if (strcmp(suf, "*") != 0) {
        size_t k = 0;
        for (const char *s = suf; *s && k + 1 < sizeof mp; s++)
            if (*s != '*')
                mp[k++] = *s;
        mp[k] = 0;
        w.mp = mp;
        w.mpl = k;
    }
    w.group_ok = !m->allow || m->allow(m->ud, gr->name);
    for (size_t i = 0; i < gr->n; i++) {
        const struct sy_deployment *d = gr->d[i]->d;
        if ((!gr->d[i]->prov && !gr->d[i]->ad) || !d->model)
            continue;
        char prov[64];
        size_t pl = strcspn(d->model, "/");
        if (pl >= sizeof prov)
            continue;
        memcpy(prov, d->model, pl);
        prov[pl] = 0;
        if (strcmp(prov, "azure") == 0) { /* get_valid_models: one placeholder */
            w.counting = 1;
            w.filter = 0;
            wexp_one("Azure-LLM", &w);
            w.counting = 0;
            wexp_one("Azure-LLM", &w);
            continue;
        }
        w.counting = 1;
        w.filter = 0;
        if (w.mp)
            sy_prices_provider_models(prov, wexp_one, &w);
        w.counting = 0;
        sy_prices_provider_models(prov, wexp_one, &w);
    }
}

void sy_models_list_json(const struct sy_table *t, int wildcard_routes, int access_groups,
                         int (*allow)(void *ud, const char *model), void *ud, struct sy_buf *b)
{
    struct mlist m = {.b = b, .allow = allow, .ud = ud};
    SY_BUF_LIT(b, "{\"data\":[");
    for (size_t i = 0; i < t->ngroups; i++) {
        const struct sy_group *gr = &t->groups[i];
        if (gr->usable && (!gr->wildcard || wildcard_routes) && (!allow || allow(ud, gr->name)))
            ml_add(&m, gr->name, gr->name_len, gr->wildcard ? NULL : &gr->price_max);
    }
    for (size_t i = 0; i < t->naliases; i++) { /* model_group_alias, unless hidden (as LiteLLM) */
        const struct sy_alias *a = &t->aliases[i];
        const struct sy_group *gr = sy_table_group(t, a->group, strlen(a->group));
        if (!a->hidden && gr && gr->usable && (!allow || allow(ud, a->alias)))
            ml_add(&m, a->alias, strlen(a->alias), gr->wildcard ? NULL : &gr->price_max);
    }
    for (size_t i = 0; access_groups && !allow && i < t->ngroups; i++)
        for (const char *ag = t->groups[i].usable ? t->groups[i].access_groups : NULL; ag && *ag; ag += strlen(ag) + 1)
            ml_add(&m, ag, strlen(ag), NULL);
    for (size_t i = 0; i < t->ngroups; i++)
        if (t->groups[i].wildcard && t->groups[i].usable)
            wildcard_models(&m, &t->groups[i]);
    SY_BUF_LIT(b, "],\"object\":\"list\"}");
    for (size_t i = 0; i < m.cap; i++)
        free(m.seen[i]);
    free(m.seen);
}
