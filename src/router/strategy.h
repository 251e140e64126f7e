/* strategy.h - helpers shared by the strategy files (router-internal).
 *
 * The strategies, the cooldown rule and the retry policy see only the
 * compiled model table (router/table.h), the live state and policy
 * (router/router.h) and a random-number state (router/rng.h): never a worker
 * or a call, so they are unit-tested with a seeded generator.
 */
#ifndef SY_ROUTER_STRATEGY_H
#define SY_ROUTER_STRATEGY_H

#include "router/rng.h"
#include "router/router.h"
#include "router/table.h"

/* Index of a uniformly random element among those of v[0..n) equal to the
 * minimum (reservoir sampling among the ties). */
static inline size_t sy_pick_min(struct sy_rng *r, const double *v, size_t n)
{
    double best = v[0];
    for (size_t i = 1; i < n; i++)
        if (v[i] < best)
            best = v[i];
    size_t ties = 0, pick = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] <= best && sy_rng_next(r) % ++ties == 0)
            pick = i;
    return pick;
}

#endif
