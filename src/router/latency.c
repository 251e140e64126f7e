/* latency.c - latency-based-routing (reference §3.3, LiteLLM lowest_latency.py).
 *
 * Each deployment keeps its last max_latency_list_size samples (seconds per
 * output token; time to first token for streams; a timeout adds a 1000 s
 * penalty) in a lock-free ring of atomics. The mean of the samples younger
 * than routing_strategy_args.ttl is its latency; a deployment without samples
 * counts as 0, so new ones get tried. The pick is random among the
 * deployments within lowest_latency_buffer of the fastest:
 * latency <= min * (1 + buffer).
 */
#include <string.h>

#include "router/strategy.h"

double sy_router_latency(const struct sy_rconf *rc, struct sy_dstate *s, int64_t now_ms)
{
    int64_t last = atomic_load_explicit(&s->lat_last_ms, memory_order_relaxed);
    if (!last || (double)(now_ms - last) > rc->latency_ttl_s * 1000)
        return 0;
    uint32_t seq = atomic_load_explicit(&s->lat_seq, memory_order_acquire);
    unsigned k = seq < rc->max_latency_list_size ? seq : rc->max_latency_list_size;
    if (!k)
        return 0;
    double sum = 0;
    for (unsigned i = 0; i < k; i++) {
        uint64_t b = atomic_load_explicit(&s->lat_bits[i], memory_order_relaxed);
        double d;
        memcpy(&d, &b, sizeof d);
        sum += d;
    }
    return sum / k;
}

static void add_sample(const struct sy_rconf *rc, struct sy_dstate *s, double v)
{
    uint32_t seq = atomic_fetch_add_explicit(&s->lat_seq, 1, memory_order_acq_rel);
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    atomic_store_explicit(&s->lat_bits[seq % rc->max_latency_list_size], b, memory_order_relaxed);
    atomic_store_explicit(&s->lat_last_ms, sy_wall_ms(), memory_order_relaxed);
    /* keep seq from wrapping past the ring (a count above the size is all it needs) */
    if (seq > 1u << 30)
        atomic_fetch_sub_explicit(&s->lat_seq, 1u << 29, memory_order_relaxed);
}

void sy_router_latency_sample(const struct sy_rconf *rc, struct sy_dstate *s, double v)
{
    add_sample(rc, s, v);
}

void sy_router_latency_penalty(const struct sy_rconf *rc, struct sy_drt *d)
{
    add_sample(rc, d->st, 1000.0);
}

size_t sy_rs_latency(struct sy_rng *rng, const struct sy_rconf *rc, struct sy_drt **cand, size_t n, int64_t now_ms)
{
    double v[n];
    double best = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = sy_router_latency(rc, cand[i]->st, now_ms);
        if (i == 0 || v[i] < best)
            best = v[i];
    }
    double limit = best * (1 + rc->lowest_latency_buffer);
    size_t ties = 0, pick = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] <= limit && sy_rng_next(rng) % ++ties == 0)
            pick = i;
    return pick;
}
