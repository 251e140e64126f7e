/* cost.c - cost-based-routing (reference §3.3, LiteLLM lowest_cost.py).
 *
 * A deployment's cost is input_cost_per_token + output_cost_per_token from its
 * litellm_params or model_info (5.0 when unknown, as LiteLLM), computed at
 * load (sy_drt.cost). The cheapest candidate wins; ties at random. rpm/tpm
 * limits were applied by select.c.
 */
#include "router/strategy.h"

size_t sy_rs_cost(struct sy_rng *rng, struct sy_drt **cand, size_t n)
{
    double v[n];
    for (size_t i = 0; i < n; i++)
        v[i] = cand[i]->cost;
    return sy_pick_min(rng, v, n);
}
