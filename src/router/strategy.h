/* strategy.h - helpers shared by the strategy files (router-internal). */
#ifndef SY_ROUTER_STRATEGY_H
#define SY_ROUTER_STRATEGY_H

#include "gateway/gateway.h"

/* Uniform double in [0, 1) from the worker's generator. */
static inline double sy_unit(struct sy_worker *w)
{
    return (double)(sy_rand(w) >> 11) / 9007199254740992.0;
}

/* Index of a uniformly random element among those of cand[0..n) whose key
 * equals the minimum of key(), computed by the caller into v[]. */
static inline size_t sy_pick_min(struct sy_worker *w, const double *v, size_t n)
{
    double best = v[0];
    for (size_t i = 1; i < n; i++)
        if (v[i] < best)
            best = v[i];
    size_t ties = 0, pick = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] <= best && sy_rand(w) % ++ties == 0) /* reservoir sampling among ties */
            pick = i;
    return pick;
}

#endif
