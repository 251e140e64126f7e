/* least_busy.c - least-busy routing (reference §3.3, LiteLLM least_busy.py).
 *
 * Picks the deployment with the fewest requests in flight: this instance's
 * atomic count plus, with Redis, the other instances' counts as last synced
 * (router/sync.c). Ties are broken at random, so an idle group spreads
 * evenly.
 */
#include "router/strategy.h"

size_t sy_rs_least_busy(struct sy_rng *rng, struct sy_drt **cand, size_t n)
{
    double v[n];
    for (size_t i = 0; i < n; i++)
        v[i] = (double)atomic_load_explicit(&cand[i]->st->inflight, memory_order_relaxed) +
               (double)atomic_load_explicit(&cand[i]->st->remote_inflight, memory_order_relaxed);
    return sy_pick_min(rng, v, n);
}
