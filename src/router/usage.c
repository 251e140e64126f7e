/* usage.c - usage-based-routing(-v2) (reference §3.3, LiteLLM lowest_tpm_rpm_v2.py).
 *
 * Picks the deployment with the lowest TPM used this minute, at random among
 * ties. Deployments over their rpm/tpm have already been dropped by
 * select.c, which also reserves the chosen one's rpm slot atomically, so
 * concurrent requests cannot pass a deployment's rpm. With Redis the counts
 * are the whole fleet's (r_tpm, kept fresh by router/sync.c) when they are
 * larger than the local ones.
 */
#include "router/strategy.h"

size_t sy_rs_usage(struct sy_rng *rng, struct sy_drt **cand, size_t n, int64_t now_ms)
{
    double v[n];
    for (size_t i = 0; i < n; i++)
        v[i] = (double)sy_router_tpm_used(cand[i]->st, now_ms);
    return sy_pick_min(rng, v, n);
}
