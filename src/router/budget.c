/* budget.c - provider budgets (router_settings.provider_budget_config;
 * LiteLLM's router_strategy/budget_limiter.py).
 *
 * One window per (provider, period), process-wide and never freed, so a
 * SIGHUP reload keeps the spend. A window opens with the first spend after
 * the previous one ended and lasts `period`; its spend is the sum of the
 * costs of the calls made through deployments of that provider
 * (sy_pbudget_add, called where the call is accounted). The router drops a
 * provider's deployments while the window's spend is >= budget_limit
 * (router/select.c), as LiteLLM's filter does (a budget_limit of 0 means no
 * limit there too).
 *
 * Writes take the window's mutex (one per call, never contended for long);
 * reads on the selection path are two atomic loads.
 *
 * With Redis, worker 0's sync tick (router/sync.c) adds each window's
 * unsent spend to LiteLLM's key provider_spend:{provider}:{period}
 * (INCRBYFLOAT; the key expires after the period, set when it is created)
 * and reads the fleet's total back: a provider's spend is the larger of this
 * instance's window and that total, so every instance stops routing to it
 * within one sync interval of the fleet crossing the limit.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis/redis.h"
#include "router/strategy.h"
#include "router/sync.h" /* SY_RSYNC_INTERVAL_MS */

struct pb_slot {
    struct sy_pbudget b;
    pthread_mutex_t mu;
    _Atomic uint64_t remote_bits; /* the fleet's total as last read from Redis */
    _Atomic int64_t remote_ms;    /* when it was read */
    struct pb_slot *next;
};

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct pb_slot *_Atomic reg_head;

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double bitsd(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static struct pb_slot *slot_of(struct sy_pbudget *b)
{
    return (struct pb_slot *)b; /* b is the first member */
}

struct sy_pbudget *sy_pbudget_get(const char *provider, const char *period, double period_s)
{
    pthread_mutex_lock(&reg_mu);
    struct pb_slot *s = atomic_load(&reg_head);
    for (; s; s = s->next)
        if (strcmp(s->b.provider, provider) == 0 && strcmp(s->b.period, period) == 0)
            break;
    if (!s && (s = calloc(1, sizeof *s)) != NULL) {
        size_t kl = strlen(provider) + strlen(period) + 32;
        s->b.provider = strdup(provider);
        s->b.period = strdup(period);
        s->b.key = malloc(kl);
        if (!s->b.provider || !s->b.period || !s->b.key) {
            free((char *)s->b.provider);
            free((char *)s->b.period);
            free(s->b.key);
            free(s);
            s = NULL;
        } else {
            snprintf(s->b.key, kl, "provider_spend:%s:%s", provider, period);
            s->b.period_s = period_s;
            pthread_mutex_init(&s->mu, NULL);
            s->next = atomic_load(&reg_head);
            atomic_store(&reg_head, s);
        }
    }
    pthread_mutex_unlock(&reg_mu);
    return s ? &s->b : NULL;
}

static int window_open(const struct sy_pbudget *b, int64_t start, int64_t now_ms)
{
    return start > 0 && (double)(now_ms - start) < b->period_s * 1000.0;
}

double sy_pbudget_spend(struct sy_pbudget *b, int64_t now_ms)
{
    struct pb_slot *s = slot_of(b);
    int64_t start = atomic_load_explicit(&b->start_ms, memory_order_acquire);
    double local =
        window_open(b, start, now_ms) ? bitsd(atomic_load_explicit(&b->spend_bits, memory_order_relaxed)) : 0;
    /* the fleet's total counts while it is fresh (a few sync intervals) */
    int64_t rt = atomic_load_explicit(&s->remote_ms, memory_order_relaxed);
    double remote = rt && now_ms - rt < 10 * SY_RSYNC_INTERVAL_MS
                        ? bitsd(atomic_load_explicit(&s->remote_bits, memory_order_relaxed))
                        : 0;
    return remote > local ? remote : local;
}

void sy_pbudget_add(struct sy_pbudget *b, double cost, int64_t now_ms)
{
    if (!(cost > 0) || !isfinite(cost))
        return;
    struct pb_slot *s = slot_of(b);
    pthread_mutex_lock(&s->mu);
    int64_t start = atomic_load_explicit(&b->start_ms, memory_order_relaxed);
    double cur = window_open(b, start, now_ms) ? bitsd(atomic_load_explicit(&b->spend_bits, memory_order_relaxed)) : 0;
    if (!window_open(b, start, now_ms))
        atomic_store_explicit(&b->start_ms, now_ms, memory_order_release);
    atomic_store_explicit(&b->spend_bits, dbits(cur + cost), memory_order_relaxed);
    double pend = bitsd(atomic_load_explicit(&b->pending_bits, memory_order_relaxed));
    atomic_store_explicit(&b->pending_bits, dbits(pend + cost), memory_order_relaxed);
    pthread_mutex_unlock(&s->mu);
}

/* KEYS[1] spend key; ARGV: spend to add, period in seconds. Returns the total as text. */
static struct sy_redis_script add_script = {
    "local add, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])\n"
    "local v\n"
    "if add > 0 then v = redis.call('INCRBYFLOAT', KEYS[1], ARGV[1])\n"
    "  if redis.call('TTL', KEYS[1]) < 0 then redis.call('EXPIRE', KEYS[1], ttl) end\n"
    "else v = redis.call('GET', KEYS[1]) or '0' end\n"
    "return tostring(v)\n",
    {0}};

static void on_synced(void *ud, const redisReply *r)
{
    struct pb_slot *s = ud;
    if (r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) && r->str) {
        double v = strtod(r->str, NULL);
        if (isfinite(v) && v >= 0) {
            atomic_store_explicit(&s->remote_bits, dbits(v), memory_order_relaxed);
            atomic_store_explicit(&s->remote_ms, sy_wall_ms(), memory_order_relaxed);
        }
    }
}

void sy_pbudget_sync(struct sy_redis *redis)
{
    for (struct pb_slot *s = atomic_load(&reg_head); s; s = s->next) {
        pthread_mutex_lock(&s->mu);
        double pend = bitsd(atomic_exchange_explicit(&s->b.pending_bits, dbits(0), memory_order_relaxed));
        pthread_mutex_unlock(&s->mu);
        char add[40], ttl[24];
        snprintf(add, sizeof add, "%.17g", pend);
        snprintf(ttl, sizeof ttl, "%.0f", s->b.period_s < 1 ? 1 : ceil(s->b.period_s));
        const char *keys[1] = {s->b.key};
        const char *args[2] = {add, ttl};
        if (sy_redis_eval(redis, &add_script, on_synced, s, 1, keys, NULL, 2, args, NULL) != 0 && pend > 0) {
            /* Redis went down: keep the spend for the next sync */
            pthread_mutex_lock(&s->mu);
            double p = bitsd(atomic_load_explicit(&s->b.pending_bits, memory_order_relaxed));
            atomic_store_explicit(&s->b.pending_bits, dbits(p + pend), memory_order_relaxed);
            pthread_mutex_unlock(&s->mu);
        }
    }
}
