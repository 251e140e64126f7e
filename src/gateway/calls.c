/* calls.c - what the engine and the stages share about a call, beyond the
 * run loop: model access (may the call's key use a model, also when it is an
 * alias; LiteLLM's _can_object_call_model), the key's and team's aliases,
 * LiteLLM's "Invalid model name" reply, the routing token count, and the
 * call's cost from its usage.
 *
 * These are engine services, not stages: the attempt machine (proxy.c) asks
 * them for every fallback group it tries, and so do the stages of several
 * routes (key_checks, route, the pass-through and Responses stages,
 * token counters). Keeping them here keeps every call pointing down (the
 * layer check: stages/ may call the engine, never the reverse).
 */
#include "gateway/gateway.h"

#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/errors.h"
#include "http/server.h"
#include "keys/keys.h"
#include "spend/spend.h"
#include "tokenizer/tokenizer.h"

/* model_info.access_groups of the group named model (NUL-separated). */
const char *sy_group_access_groups(void *ud, const char *model)
{
    const struct sy_gwconf *g = ud;
    const struct sy_group *gr = sy_gwconf_group(g, model, strlen(model));
    return gr ? gr->access_groups : NULL;
}

/* What model is an alias of, for the access check (NULL: not an alias). */
static const char *alias_also(const struct sy_call *c, const char *model)
{
    const char *t = sy_keys_alias_target(c->auth.key, model);
    for (size_t i = 0; !t && i < c->g->naliases; i++)
        if (strcmp(c->g->aliases[i].alias, model) == 0)
            t = c->g->aliases[i].group;
    return t;
}

int sy_call_model_denied(const struct sy_call *c, const char *model, struct sy_check_err *e)
{
    if (!c->auth.key || !model)
        return 0;
    return sy_keys_check_model_as(c->auth.key, model, alias_also(c, model), sy_group_access_groups, c->g, e);
}

const char *sy_call_aliased(const struct sy_call *c, const char *model)
{
    if (!c->auth.key || !c->auth.key->found)
        return model;
    const char *t = sy_keys_alias_of(c->auth.key->team_aliases, c->auth.key->nteam_aliases, model);
    if (t)
        model = t;
    t = sy_keys_alias_of(c->auth.key->aliases, c->auth.key->naliases, model);
    return t ? t : model;
}

int sy_call_refuse(struct sy_call *c, const struct sy_check_err *e)
{
    if (e->status == 401)
        c->out.exception_class = "AuthenticationError";
    else if (e->status == 400 && strcmp(e->type, "budget_exceeded") == 0)
        c->out.exception_class = "BudgetExceededError";
    sy_call_error(c, e->status, e->type, e->param[0] ? e->param : NULL /* null, as LiteLLM for these */, e->message,
                  NULL, 0);
    return SY_DONE;
}

int sy_call_check_model(struct sy_call *c, const char *model)
{
    struct sy_check_err e;
    memset(&e, 0, sizeof e);
    return sy_call_model_denied(c, model, &e) != 0 ? sy_call_refuse(c, &e) : SY_OK;
}

int sy_call_invalid_model(struct sy_call *c, const char *model)
{
    const char *route = c->kind == SY_RK_CHAT          ? "/chat/completions"
                        : c->kind == SY_RK_COMPLETIONS ? "/completions"
                        : c->kind == SY_RK_MESSAGES    ? "/v1/messages"
                                                       : "/embeddings";
    char msg[1024];
    snprintf(msg, sizeof msg,
             "%s: Invalid model name passed in model=%.400s. Call `/v1/models` to view available models for "
             "your key.",
             route, model);
    sy_call_error(c, 400, "invalid_request_error", "model", msg, NULL, 0);
    return SY_DONE;
}

/* Does picking in gr need the prompt's exact token count?
 *
 * Counting a 1 KB prompt costs more than the rest of the routing, so the
 * exact count is made only when it can change the outcome. An upper bound
 * comes for free: every token covers at least one byte of the text, the JSON
 * body is longer than its text, and the per-message and tool overheads
 * LiteLLM adds are smaller than the JSON syntax around them; only images
 * (85+ tokens for a short URL) break that, so a body that mentions "image"
 * is always counted. When the bound passes every deployment's
 * max_input_tokens (pre-call checks) and tpm headroom (usage, latency and
 * cost routing), the bound stands in for the count: the same deployments
 * pass either way. 1: count exactly; 0: c->rt.input_tokens holds the bound. */
int sy_route_needs_count(struct sy_call *c, const struct sy_group *gr)
{
    const struct sy_gwconf *g = c->g;
    int limits = g->rc.strategy == SY_RS_USAGE || g->rc.strategy == SY_RS_LATENCY || g->rc.strategy == SY_RS_COST;
    if (c->rt.input_tokens >= 0 && !c->rt.input_is_bound)
        return 0; /* already exact */
    int any = 0;
    for (size_t i = 0; i < gr->n && !any; i++) {
        const struct sy_deployment *d = gr->d[i]->d;
        any = (g->rc.pre_call_checks && d->max_input_tokens >= 0) || (limits && d->tpm > 0);
    }
    if (!any)
        return 0;
    const char *b = c->req->body.p;
    size_t n = c->req->body.len;
    if (memmem(b, n, "image", 5))
        return 1;
    int64_t bound = (int64_t)n, now = sy_wall_ms();
    for (size_t i = 0; i < gr->n; i++) {
        const struct sy_drt *r = gr->d[i];
        const struct sy_deployment *d = r->d;
        if (g->rc.pre_call_checks && d->max_input_tokens >= 0 && bound > d->max_input_tokens)
            return 1;
        if (limits && d->tpm > 0 && (double)(sy_router_tpm_used(r->st, now) + (uint64_t)bound) > d->tpm)
            return 1;
    }
    c->rt.input_tokens = bound;
    c->rt.input_is_bound = 1;
    return 0;
}

void sy_route_count_work(struct sy_call *c, void *arg)
{
    const struct sy_drt *d = c->group->d[0];
    const struct sy_tok *t = sy_tok_get((enum sy_tok_encoding)d->enc);
    long n = sy_tok_count_request(t, c->req->body.p, c->req->body.len);
    c->rt.input_tokens = n >= 0 ? n : -1;
    c->rt.input_is_bound = 0;
}

void sy_call_dprice(const struct sy_call *c, const struct sy_group *gr, const struct sy_drt *r, struct sy_dprice *out)
{
    *out = r->price;
    if (!r->wildcard || r->price.known || r->price.priced || !gr || !r->d->upstream_model)
        return;
    const char *part, *um = r->d->upstream_model, *star = strchr(um, '*');
    size_t pl;
    char m[512];
    sy_router_wild_part(gr->name, c->group_model ? c->group_model : c->in.model, &part, &pl);
    if (!star || !part || (size_t)(star - um) + pl + strlen(star + 1) >= sizeof m)
        return;
    snprintf(m, sizeof m, "%.*s%.*s%s", (int)(star - um), um, (int)pl, part, star + 1);
    struct sy_dprice dp;
    sy_dprice_from(&dp, sy_price_find(r->d->provider, m));
    if (!dp.known && !dp.priced)
        return;
    /* the deployment's own limits stay; the table gives the rates */
    if (r->price.max_output_tokens > 0)
        dp.max_output_tokens = r->price.max_output_tokens;
    if (r->price.max_input_tokens > 0)
        dp.max_input_tokens = r->price.max_input_tokens;
    *out = dp;
}

void sy_call_cost(struct sy_call *c)
{
    if (c->usage.cost_known || !c->drt || !(c->usage.have_usage || c->usage.usage_counted))
        return; /* usage reported by the upstream or counted by us (proxy.c) */
    struct sy_usage u = {0};
    u.prompt_tokens = c->usage.prompt_tokens;
    u.completion_tokens = c->usage.completion_tokens;
    u.cached_tokens = c->usage.cached_tokens;
    u.cache_creation_tokens = c->usage.cache_write_tokens;
    u.cache_creation_1h_tokens = c->usage.cache_write_1h_tokens;
    u.reasoning_tokens = c->usage.reasoning_tokens;
    struct sy_dprice dp;
    sy_call_dprice(c, c->group, c->drt, &dp);
    c->usage.cost = sy_cost(&dp, &u);
    c->usage.cost_known = 1;
}
