/* compile.c - router policy and group wiring, built once per config load.
 *
 * sy_router_compile_policy turns the loader's router settings into the flat
 * struct the request path reads (defaults applied once, here).
 * sy_router_compile_groups (called by router/table.c once the groups are
 * built) collects wildcard groups most specific first,
 * keeps aliases, then resolves fallback lists to group pointers as a request's
 * model resolves (own entry, else "*", else default_fallbacks; unknown groups
 * warn and are skipped), keeping each fallback's own name beside it.
 * sy_router_resolve maps a requested model name to a group: exact name, then
 * model_group_alias, then the most specific matching wildcard pattern.
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "core/str.h"
#include "router/strategy.h"

static enum sy_strategy strategy_of(const char *s)
{
    if (!s)
        return SY_RS_SHUFFLE;
    if (strcmp(s, "least-busy") == 0)
        return SY_RS_LEAST_BUSY;
    if (strcmp(s, "usage-based-routing") == 0 || strcmp(s, "usage-based-routing-v2") == 0)
        return SY_RS_USAGE;
    if (strcmp(s, "latency-based-routing") == 0)
        return SY_RS_LATENCY;
    if (strcmp(s, "cost-based-routing") == 0)
        return SY_RS_COST;
    return SY_RS_SHUFFLE;
}

void sy_router_compile_policy(struct sy_rconf *rc, const struct sy_config *cfg, void (*warn)(const char *))
{
    const struct sy_router_config *r = &cfg->router;
    memset(rc, 0, sizeof *rc);
    rc->strategy = strategy_of(cfg->routing_strategy);
    rc->num_retries = cfg->router_num_retries >= 0 ? cfg->router_num_retries
                      : cfg->num_retries >= 0      ? cfg->num_retries
                                                   : 2; /* openai's default, as LiteLLM */
    for (int i = 0; i < SY_EXC__COUNT; i++) {
        rc->retry_policy[i] = r->has_retry_policy ? r->retry_policy[i] : -1;
        rc->allowed_fails_policy[i] = r->has_allowed_fails_policy ? r->allowed_fails_policy[i] : -1;
    }
    rc->retry_after_s = r->retry_after_s > 0 ? r->retry_after_s : 0;
    rc->legacy_cooldown = r->allowed_fails >= 0 || r->has_allowed_fails_policy;
    rc->allowed_fails = r->allowed_fails;
    rc->cooldown_time_s = r->cooldown_time_s;
    rc->disable_cooldowns = r->disable_cooldowns;
    rc->max_fallbacks = r->max_fallbacks > 0 ? r->max_fallbacks : r->max_fallbacks == 0 ? 0 : 5;
    rc->pre_call_checks = r->enable_pre_call_checks;
    rc->default_max_parallel = r->default_max_parallel_requests;
    rc->lowest_latency_buffer = r->lowest_latency_buffer > 0 ? r->lowest_latency_buffer : 0;
    rc->latency_ttl_s = r->latency_ttl_s > 0 ? r->latency_ttl_s : 3600;
    int m = r->max_latency_list_size > 0 ? r->max_latency_list_size : 10;
    if (m > SY_LAT_MAX) {
        char msg[160];
        snprintf(msg, sizeof msg, "config: routing_strategy_args.max_latency_list_size %d is capped at %d", m,
                 SY_LAT_MAX);
        warn(msg);
        m = SY_LAT_MAX;
    }
    rc->max_latency_list_size = (unsigned)m;
    rc->tag_filtering = r->enable_tag_filtering;
    rc->tag_match_any = r->tag_filtering_match_any;
    rc->provider_budgets = r->n_provider_budgets > 0;
}

/* Region of a deployment for an end user's allowed_model_region, as
 * LiteLLM's _is_region_eu / _is_region_us: region_name "eu" or "us" as
 * written; else the provider's location (vertex_ai: vertex_location, bedrock:
 * aws_region_name, others: region_name) matched against the provider's
 * region names: azure "europe", "sweden", "switzerland", "france", "uk" are
 * eu and any other containing "us" is us; vertex_ai "europe-*" / "us-*";
 * bedrock "eu-*" / "us-*". Other providers have no region unless region_name
 * says "eu" or "us". */
char sy_router_region_of(const struct sy_deployment *d)
{
    if (d->region_name && (strcmp(d->region_name, "eu") == 0 || strcmp(d->region_name, "us") == 0))
        return d->region_name[0] == 'e' ? 'e' : 'u';
    const char *p = d->provider ? d->provider : "";
    const char *loc = strncmp(p, "vertex_ai", 9) == 0 ? sy_deployment_param(d, "vertex_location")
                      : strcmp(p, "bedrock") == 0     ? sy_deployment_param(d, "aws_region_name")
                                                      : d->region_name;
    if (!loc && strncmp(p, "vertex_ai", 9) == 0)
        loc = sy_deployment_param(d, "vertex_ai_location");
    if (!loc && strncmp(p, "vertex_ai", 9) == 0 && !(loc = getenv("VERTEXAI_LOCATION")))
        loc = getenv("VERTEX_LOCATION");
    if (!loc)
        return 0;
    char low[64];
    size_t n = 0;
    for (; loc[n] && n < sizeof low - 1; n++)
        low[n] = (char)(loc[n] >= 'A' && loc[n] <= 'Z' ? loc[n] + 32 : loc[n]);
    low[n] = 0;
    if (strcmp(p, "azure") == 0) {
        static const char *const eu[] = {"europe", "sweden", "switzerland", "france", "uk"};
        for (size_t i = 0; i < sizeof eu / sizeof *eu; i++)
            if (strstr(low, eu[i]))
                return 'e';
        return strstr(low, "us") ? 'u' : 0;
    }
    if (strncmp(p, "vertex_ai", 9) == 0)
        return strncmp(low, "europe-", 7) == 0 ? 'e' : strncmp(low, "us-", 3) == 0 ? 'u' : 0;
    if (strcmp(p, "bedrock") == 0)
        return strncmp(low, "eu-", 3) == 0 ? 'e' : strncmp(low, "us-", 3) == 0 ? 'u' : 0;
    return 0;
}

/* Each deployment's region class and provider budget window. */
static void wire_deployments(struct sy_table *t)
{
    const struct sy_router_config *r = &t->cfg->router;
    for (size_t i = 0; i < t->ndrts; i++) {
        struct sy_drt *d = &t->drts[i];
        d->region = sy_router_region_of(d->d);
        d->pb = NULL;
        d->pb_limit = 0;
        for (size_t k = 0; k < r->n_provider_budgets && d->d->provider; k++) {
            const struct sy_provider_budget *b = &r->provider_budgets[k];
            if (strcmp(b->provider, d->d->provider) == 0) {
                d->pb = sy_pbudget_get(b->provider, b->period, b->period_s);
                d->pb_limit = b->budget_limit;
                break;
            }
        }
    }
}

static size_t literal_len(const char *p)
{
    size_t n = 0;
    for (; *p; p++)
        n += *p != '*';
    return n;
}

static int cmp_specific(const void *a, const void *b)
{
    const struct sy_group *x = *(const struct sy_group *const *)a, *y = *(const struct sy_group *const *)b;
    size_t lx = literal_len(x->name), ly = literal_len(y->name);
    return lx != ly ? (lx > ly ? -1 : 1) : strcmp(x->name, y->name);
}

/* A fallback name resolves as a request's model does (exact, alias, wildcard
 * pattern); *names keeps the name itself, which a wildcard group forwards and
 * the key's access check reads. */
static void resolve_list(struct sy_table *t, struct sy_group *from, const char **names, size_t n, int kind,
                         void (*warn)(const char *), const char *what)
{
    const struct sy_group **l = calloc(n ? n : 1, sizeof *l);
    const char **ln = calloc(n ? n : 1, sizeof *ln);
    if (!ln) {
        free(l);
        l = NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n && l; i++) {
        const struct sy_group *to = sy_router_resolve(t, names[i], strlen(names[i]));
        if (!to) {
            char msg[512];
            snprintf(msg, sizeof msg, "config: %s of '%s' names model group '%s', which does not exist; skipped", what,
                     from->name, names[i]);
            warn(msg);
            continue;
        }
        if (to != from) {
            ln[k] = names[i];
            l[k++] = to;
        }
    }
    from->fb[kind] = l;
    from->fbname[kind] = ln;
    from->nfb[kind] = k;
}

static const struct sy_fallback *find_fb(const struct sy_fallback *f, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (f[i].group && strcmp(f[i].group, name) == 0)
            return &f[i];
    return NULL;
}

void sy_router_compile_groups(struct sy_table *t, void (*warn)(const char *))
{
    const struct sy_router_config *r = &t->cfg->router;
    const struct sy_fallback *lists[3] = {r->fallbacks, r->context_window_fallbacks, r->content_policy_fallbacks};
    size_t nl[3] = {r->n_fallbacks, r->n_context_window_fallbacks, r->n_content_policy_fallbacks};
    static const char *what[3] = {"fallbacks", "context_window_fallbacks", "content_policy_fallbacks"};
    t->wild = calloc(t->ngroups ? t->ngroups : 1, sizeof *t->wild);
    for (size_t i = 0; i < t->ngroups && t->wild; i++)
        if (t->groups[i].wildcard)
            t->wild[t->nwild++] = &t->groups[i];
    if (t->nwild > 1)
        qsort(t->wild, t->nwild, sizeof *t->wild, cmp_specific);
    t->aliases = r->aliases;
    t->naliases = r->n_aliases;
    /* after the wildcard groups and aliases: fallback names resolve through them */
    for (size_t i = 0; i < t->ngroups; i++) {
        struct sy_group *gr = &t->groups[i];
        for (int k = 0; k < 3; k++) {
            const struct sy_fallback *f = find_fb(lists[k], nl[k], gr->name);
            if (!f && k == 0)
                f = find_fb(lists[k], nl[k], "*");
            if (f)
                resolve_list(t, gr, f->to, f->n, k, warn, what[k]);
            else if (k == 0 && r->n_default_fallbacks)
                resolve_list(t, gr, r->default_fallbacks, r->n_default_fallbacks, k, warn, "default_fallbacks");
        }
    }
    wire_deployments(t);
}

const struct sy_group *sy_router_resolve(const struct sy_table *t, const char *name, size_t len)
{
    const struct sy_group *gr = sy_table_group(t, name, len);
    if (gr)
        return gr;
    for (size_t i = 0; i < t->naliases; i++) {
        const struct sy_alias *a = &t->aliases[i];
        if (strlen(a->alias) == len && memcmp(a->alias, name, len) == 0)
            return sy_table_group(t, a->group, strlen(a->group));
    }
    for (size_t i = 0; i < t->nwild; i++)
        if (sy_glob(t->wild[i]->name, name, len))
            return t->wild[i];
    return NULL;
}

/* The part of `name` the first '*' of pattern matched (pattern "openai/<star>",
 * name "openai/gpt-4o" -> "gpt-4o"); the whole name when nothing matches. */
void sy_router_wild_part(const char *pattern, const char *name, const char **part, size_t *plen)
{
    const char *star = strchr(pattern, '*');
    size_t nl = strlen(name);
    if (!star) {
        *part = name;
        *plen = nl;
        return;
    }
    size_t pre = (size_t)(star - pattern), post = strlen(star + 1);
    if (pre + post > nl || strncmp(pattern, name, pre) != 0) {
        *part = name;
        *plen = nl;
        return;
    }
    *part = name + pre;
    *plen = nl - pre - post;
}
