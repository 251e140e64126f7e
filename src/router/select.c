/* select.c - candidate filtering and the strategy call (reference §3.2, §3.4).
 *
 * For one attempt on group g:
 *   0. request filters, over the whole group (so "none matches" is told
 *      apart from "all matching ones are cooling down"):
 *      - tags (router_settings.enable_tag_filtering, LiteLLM's
 *        tag_based_routing.py): a request with tags keeps the deployments
 *        whose litellm_params.tags share one of them (all of them with
 *        tag_filtering_match_any: false), else those tagged "default", else
 *        none (SY_PICK_NONE_TAGS); a request without tags keeps the
 *        "default"-tagged deployments when there are any, else all;
 *      - region (the end user's allowed_model_region): only deployments
 *        whose region (sy_router_region_of) is that one, else
 *        SY_PICK_NONE_REGION;
 *   1. drop deployments whose provider is unsupported, in cooldown, marked
 *      unhealthy by a health check, or at their max_parallel_requests, and
 *      those whose provider spent its provider_budget_config budget in the
 *      current window (all available ones over budget: SY_PICK_NONE_BUDGET);
 *   2. rpm/tpm: usage-, latency- and cost-based routing drop deployments
 *      whose requests this minute reached `rpm` or whose tokens this minute
 *      plus the prompt pass `tpm`; with enable_pre_call_checks every strategy
 *      drops those over `rpm`;
 *   3. enable_pre_call_checks: drop deployments whose max_input_tokens is
 *      below the prompt's exact count (none left only for that reason ->
 *      ContextWindowExceeded, so context_window_fallbacks fire);
 *   4. keep only the lowest `order` (1 = first); then avoid the deployment
 *      that just failed when another remains;
 *   5. the strategy picks; usage-based routing reserves an rpm slot on the
 *      pick with a compare-and-swap and picks again if a concurrent request
 *      took the last one.
 * Everything is O(deployments in the group), lock-free, no allocation (the
 * candidate array is on the stack).
 *
 * LiteLLM differences (docs/router.md): `order` applies to every strategy
 * (LiteLLM 1.80 applies it only inside pre-call checks; its newer docs
 * describe it as a priority); a deployment reaching its rpm is skipped at
 * rpm, not at rpm - 1.
 */
#include <stdio.h>
#include <string.h>

#include "router/strategy.h"

uint64_t sy_router_rpm_used(struct sy_dstate *s, int64_t now_ms)
{
    uint64_t l = sy_win_get(&s->w_rpm, now_ms), r = sy_win_get(&s->r_rpm, now_ms);
    return l > r ? l : r;
}

uint64_t sy_router_tpm_used(struct sy_dstate *s, int64_t now_ms)
{
    uint64_t l = sy_win_get(&s->w_tpm, now_ms), r = sy_win_get(&s->r_tpm, now_ms);
    return l > r ? l : r;
}

static int usable_now(const struct sy_drt *d, int64_t now_ms)
{
    if (!d->prov)
        return 0;
    struct sy_dstate *s = d->st;
    if (atomic_load_explicit(&s->cooldown_until_ms, memory_order_relaxed) > now_ms)
        return 0;
    return !atomic_load_explicit(&s->unhealthy, memory_order_relaxed);
}

size_t sy_router_available(const struct sy_group *g, const struct sy_drt *except)
{
    int64_t now = sy_wall_ms();
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++)
        n += g->d[i] != except && usable_now(g->d[i], now);
    return n;
}

double sy_router_cooldown_left(const struct sy_group *g, char *buf, size_t cap)
{
    int64_t now = sy_wall_ms(), first = 0;
    size_t o = 0;
    if (cap)
        buf[0] = 0;
    o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "[");
    int k = 0;
    for (size_t i = 0; i < g->n; i++) {
        int64_t u = atomic_load_explicit(&g->d[i]->st->cooldown_until_ms, memory_order_relaxed);
        if (u <= now)
            continue;
        if (!first || u < first)
            first = u;
        if (o < cap)
            o += (size_t)snprintf(buf + o, cap - o, "%s'%s'", k++ ? ", " : "", g->d[i]->st->id);
    }
    if (o < cap)
        snprintf(buf + o, cap - o, "]");
    double s = first ? (double)(first - now) / 1000.0 : 0;
    return s < 1 ? 1 : s;
}

static int has_tag(const struct sy_deployment *d, const char *t)
{
    for (size_t i = 0; i < d->n_tags; i++)
        if (strcmp(d->tags[i], t) == 0)
            return 1;
    return 0;
}

static int tags_match(const struct sy_deployment *d, const struct sy_rfilter *f, int any)
{
    if (!d->n_tags)
        return 0;
    for (size_t i = 0; i < f->ntags; i++) {
        int h = has_tag(d, f->tags[i]);
        if (any && h)
            return 1;
        if (!any && !h)
            return 0;
    }
    return !any;
}

/* Step 0: allow[i] for g->d[i]; 0 with *why when the filters leave none. */
static int filter_group(const struct sy_rconf *rc, const struct sy_group *g, const struct sy_rfilter *f,
                        unsigned char *allow, int *why)
{
    memset(allow, 1, g->n);
    if (!f)
        return 1;
    if (rc->tag_filtering) {
        size_t matched = 0, defaults = 0;
        for (size_t i = 0; i < g->n; i++) {
            matched += f->ntags && tags_match(g->d[i]->d, f, rc->tag_match_any);
            defaults += has_tag(g->d[i]->d, "default");
        }
        if (f->ntags && !matched && !defaults) {
            *why = SY_PICK_NONE_TAGS;
            return 0;
        }
        if (matched || defaults)
            for (size_t i = 0; i < g->n; i++)
                allow[i] = matched ? tags_match(g->d[i]->d, f, rc->tag_match_any) : has_tag(g->d[i]->d, "default");
    }
    if (f->region) {
        size_t in = 0;
        for (size_t i = 0; i < g->n; i++) {
            allow[i] = allow[i] && g->d[i]->region == f->region;
            in += allow[i];
        }
        if (!in) {
            *why = SY_PICK_NONE_REGION;
            return 0;
        }
    }
    return 1;
}

static int over_budget(const struct sy_drt *d, int64_t now_ms)
{
    return d->pb && d->pb_limit > 0 && sy_pbudget_spend(d->pb, now_ms) >= d->pb_limit;
}

void sy_router_budget_info(const struct sy_group *g, char *buf, size_t cap)
{
    int64_t now = sy_wall_ms();
    size_t o = 0;
    if (cap)
        buf[0] = 0;
    for (size_t i = 0; i < g->n && o < cap; i++) {
        const struct sy_drt *d = g->d[i];
        if (!over_budget(d, now))
            continue;
        int dup = 0; /* one line per provider */
        for (size_t j = 0; j < i && !dup; j++)
            dup = g->d[j]->pb == d->pb && over_budget(g->d[j], now);
        if (!dup)
            o += (size_t)snprintf(buf + o, cap - o, "Exceeded budget for provider %s: %.12g >= %.12g\n",
                                  d->pb->provider, sy_pbudget_spend(d->pb, now), d->pb_limit);
    }
}

struct sy_drt *sy_router_pick(struct sy_rng *rng, const struct sy_rconf *rc, const struct sy_group *g,
                              const struct sy_drt *avoid, int64_t input_tokens, const struct sy_rfilter *f, int *why)
{
    int64_t now = sy_wall_ms();
    struct sy_drt *cand[g->n ? g->n : 1];
    unsigned char allow[g->n ? g->n : 1];
    size_t n = 0, ctx_dropped = 0, ctx_fit = 0, supported = 0, avail = 0, over = 0;
    int limits = rc->strategy == SY_RS_USAGE || rc->strategy == SY_RS_LATENCY || rc->strategy == SY_RS_COST;
    if (!filter_group(rc, g, f, allow, why))
        return NULL;
    for (size_t i = 0; i < g->n; i++) {
        struct sy_drt *d = g->d[i];
        supported += d->prov != NULL;
        if (!allow[i] || !usable_now(d, now))
            continue;
        avail++;
        if (rc->provider_budgets && over_budget(d, now)) {
            over++;
            continue;
        }
        struct sy_dstate *s = d->st;
        if (d->max_parallel > 0 && atomic_load_explicit(&s->inflight, memory_order_relaxed) >= d->max_parallel)
            continue;
        if ((limits || rc->pre_call_checks) && d->d->rpm > 0 && (double)sy_router_rpm_used(s, now) >= d->d->rpm)
            continue;
        if (limits && d->d->tpm > 0 &&
            (double)(sy_router_tpm_used(s, now) + (uint64_t)(input_tokens > 0 ? input_tokens : 0)) > d->d->tpm)
            continue;
        if (rc->pre_call_checks && input_tokens >= 0 && d->d->max_input_tokens >= 0 &&
            input_tokens > d->d->max_input_tokens) {
            ctx_dropped++;
            continue;
        }
        cand[n++] = d;
        ctx_fit++;
    }
    if (n > 1) { /* best order only */
        int best = -1;
        for (size_t i = 0; i < n; i++)
            if (cand[i]->d->order >= 0 && (best < 0 || cand[i]->d->order < best))
                best = cand[i]->d->order;
        if (best >= 0) {
            size_t k = 0;
            for (size_t i = 0; i < n; i++)
                if (cand[i]->d->order == best || cand[i]->d->order < 0)
                    cand[k++] = cand[i];
            /* deployments without `order` rank after every ordered one */
            size_t m = 0;
            for (size_t i = 0; i < k; i++)
                if (cand[i]->d->order == best)
                    cand[m++] = cand[i];
            n = m ? m : k;
        }
    }
    if (n > 1 && avoid) {
        for (size_t i = 0; i < n; i++)
            if (cand[i] == avoid) {
                cand[i] = cand[--n];
                break;
            }
    }
    while (n) {
        size_t i;
        switch (rc->strategy) {
        case SY_RS_LEAST_BUSY: i = sy_rs_least_busy(rng, cand, n); break;
        case SY_RS_USAGE: i = sy_rs_usage(rng, cand, n, now); break;
        case SY_RS_LATENCY: i = sy_rs_latency(rng, rc, cand, n, now); break;
        case SY_RS_COST: i = sy_rs_cost(rng, cand, n); break;
        default: i = sy_rs_shuffle(rng, g, cand, n); break;
        }
        struct sy_drt *d = cand[i];
        if (limits && d->d->rpm > 0) {
            /* reserve the rpm slot; a concurrent request may have taken the last one */
            uint64_t cap = (uint64_t)d->d->rpm;
            uint64_t remote = sy_win_get(&d->st->r_rpm, now);
            uint64_t local = sy_win_get(&d->st->w_rpm, now);
            if (remote > local && remote >= cap) {
                cand[i] = cand[--n];
                continue;
            }
            if (!sy_win_add_below(&d->st->w_rpm, now, cap)) {
                cand[i] = cand[--n];
                continue;
            }
        } else {
            sy_win_add(&d->st->w_rpm, now, 1);
        }
        return d;
    }
    /* ContextWindowExceeded when the context check alone emptied the list */
    *why = supported == 0            ? SY_PICK_NONE_SUPPORTED
           : over && over == avail   ? SY_PICK_NONE_BUDGET
           : ctx_dropped && !ctx_fit ? SY_PICK_NONE_CONTEXT
                                     : SY_PICK_NONE_AVAILABLE;
    return NULL;
}
