/* select.c - candidate filtering and the strategy call (reference §3.2, §3.4).
 *
 * For one attempt on group g:
 *   1. drop deployments whose provider is unsupported, in cooldown, marked
 *      unhealthy by a health check, or at their max_parallel_requests;
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

struct sy_drt *sy_router_pick(struct sy_worker *w, const struct sy_rconf *rc, const struct sy_group *g,
                              const struct sy_drt *avoid, int64_t input_tokens, int *why)
{
    int64_t now = sy_wall_ms();
    struct sy_drt *cand[g->n ? g->n : 1];
    size_t n = 0, ctx_dropped = 0, ctx_fit = 0, supported = 0;
    int limits = rc->strategy == SY_RS_USAGE || rc->strategy == SY_RS_LATENCY || rc->strategy == SY_RS_COST;
    for (size_t i = 0; i < g->n; i++) {
        struct sy_drt *d = g->d[i];
        supported += d->prov != NULL;
        if (!usable_now(d, now))
            continue;
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
        case SY_RS_LEAST_BUSY: i = sy_rs_least_busy(w, cand, n); break;
        case SY_RS_USAGE: i = sy_rs_usage(w, cand, n, now); break;
        case SY_RS_LATENCY: i = sy_rs_latency(w, rc, cand, n, now); break;
        case SY_RS_COST: i = sy_rs_cost(w, cand, n); break;
        default: i = sy_rs_shuffle(w, g, cand, n); break;
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
    *why = supported == 0 ? SY_PICK_NONE_SUPPORTED : ctx_dropped && !ctx_fit ? SY_PICK_NONE_CONTEXT : SY_PICK_NONE_AVAILABLE;
    return NULL;
}
