/* rng.h - the router's random-number state (xorshift64*).
 *
 * Strategies and the retry back-off draw from a generator passed to them,
 * never from a worker: each worker holds one (struct sy_worker.rng, seeded at
 * start) and hands it down, and a test seeds its own so a distribution is
 * asserted with a fixed seed. Not for secrets (uuid4 and keys use their own
 * sources). The state must not be 0 (sy_rng_seed maps 0 to a constant).
 */
#ifndef SY_ROUTER_RNG_H
#define SY_ROUTER_RNG_H

#include <stdint.h>

struct sy_rng {
    uint64_t s;
};

static inline void sy_rng_seed(struct sy_rng *r, uint64_t seed)
{
    r->s = seed ? seed : 88172645463325252ULL;
}

/* Next 64-bit value (xorshift64*). */
static inline uint64_t sy_rng_next(struct sy_rng *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform double in [0, 1). */
static inline double sy_rng_unit(struct sy_rng *r)
{
    return (double)(sy_rng_next(r) >> 11) / 9007199254740992.0;
}

#endif
