/* shuffle.c - simple-shuffle (LiteLLM's default; reference §3.3).
 *
 * If the group's first deployment has `weight`, else `rpm`, else `tpm`, each
 * candidate's value of that field is its weight (missing = 0) and the pick is
 * weighted (random.choices); otherwise uniform. No usage state is read. The
 * field is chosen once at load (gwconf.c sets group->weighted and each
 * deployment's weight); a candidate list already filtered by cooldowns is
 * weighted among itself.
 */
#include "router/strategy.h"

size_t sy_rs_shuffle(struct sy_rng *rng, const struct sy_group *g, struct sy_drt **cand, size_t n)
{
    if (n == 1)
        return 0;
    if (g->weighted) {
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += cand[i]->weight;
        if (sum > 0) {
            double x = sy_rng_unit(rng) * sum, acc = 0;
            for (size_t i = 0; i + 1 < n; i++) {
                acc += cand[i]->weight;
                if (x < acc)
                    return i;
            }
            /* rounding: the last candidate with a positive weight */
            for (size_t i = n; i-- > 0;)
                if (cand[i]->weight > 0)
                    return i;
        }
    }
    return sy_rng_next(rng) % n;
}
