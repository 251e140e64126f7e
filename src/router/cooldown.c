/* cooldown.c - what one attempt's outcome does to its deployment (reference §3.7).
 *
 * Failure:
 *   1. count it in the deployment's minute windows (failures; legacy
 *      allowed_fails counter) and set litellm_deployment_state to 1;
 *   2. is a cooldown possible at all? not with disable_cooldowns, nor a
 *      cooldown_time of 0; statuses 429, 401, 408, 404 and every >= 500 are
 *      eligible, any other 4xx never (LiteLLM _is_cooldown_required);
 *   3. decide:
 *      legacy mode (allowed_fails or allowed_fails_policy set): failures this
 *        minute > allowed (the class's policy value, else allowed_fails, else 3);
 *      default ("v2"): 429 in a group of several deployments; or 100% failures
 *        with >= 1000 requests this minute; or > 50% failures with >= 5
 *        requests this minute in a group of several; or a status that is not
 *        retryable (401, 404: litellm._should_retry is false);
 *   4. cooldown time: the deployment's cooldown_time, else the upstream's
 *      Retry-After, else router cooldown_time (default 5 s). The deadline is
 *      wall-clock ms so instances share it through Redis (router/sync.c).
 * sy_router_cooldown is that decision over the deployment's state alone
 * (unit-tested); sy_router_fail (router/sync.c) adds what needs the worker's
 * sharing (router/sync.h): the cooldown counter of its metrics shard and the
 * Redis broadcast.
 * Success counts in the windows, adds the tokens to the tpm window, records
 * a latency sample and sets the state back to 0.
 *
 * LiteLLM difference (docs/router.md): a connection error (refused, reset,
 * DNS) counts like a 500 here; LiteLLM never cools down on
 * "APIConnectionError", so a dead deployment keeps receiving traffic.
 */
#include <stdio.h>

#include "core/log.h"
#include "metrics/metrics.h"
#include "router/strategy.h"

#define SINGLE_DEPLOYMENT_TRAFFIC_FAILURE_THRESHOLD 1000
#define FAILURE_THRESHOLD_MINIMUM_REQUESTS          5
#define FAILURE_THRESHOLD_PERCENT                   0.5
#define DEFAULT_COOLDOWN_S                          5.0

void sy_router_latency_sample(const struct sy_rconf *rc, struct sy_dstate *s, double v);

static void set_state(struct sy_drt *d, int state)
{
    if (atomic_exchange_explicit(&d->st->state, state, memory_order_relaxed) == state)
        return;
    const struct sy_deployment *dp = d->d;
    sy_metrics_deployment_state(dp->model ? dp->model : "", dp->id ? dp->id : "", dp->api_base ? dp->api_base : "",
                                d->prov ? d->prov->name : "", state);
}

static int eligible(int status)
{
    if (status >= 400 && status < 500)
        return status == 429 || status == 401 || status == 408 || status == 404;
    return 1;
}

static int retryable(int status)
{
    return status == 408 || status == 409 || status == 429 || status >= 500;
}

int64_t sy_router_cooldown(const struct sy_rconf *rc, const struct sy_group *g, struct sy_drt *d, int status,
                           enum sy_exc_class exc, double retry_after_s, int64_t now)
{
    struct sy_dstate *s = d->st;
    uint64_t fails = sy_win_add(&s->w_fail, now, 1);
    uint64_t oks = sy_win_get(&s->w_ok, now);
    set_state(d, 1);
    if (rc->disable_cooldowns || !eligible(status))
        return 0;
    double t = d->d->cooldown_time_s >= 0 ? d->d->cooldown_time_s
               : retry_after_s > 0        ? retry_after_s
               : rc->cooldown_time_s >= 0 ? rc->cooldown_time_s
                                          : DEFAULT_COOLDOWN_S;
    if (t <= 0)
        return 0;
    int single = g->usable <= 1, cool = 0;
    if (rc->legacy_cooldown) {
        int allowed = rc->allowed_fails_policy[exc] >= 0 ? rc->allowed_fails_policy[exc]
                      : rc->allowed_fails >= 0           ? rc->allowed_fails
                                                         : 3;
        cool = sy_win_add(&s->w_afail, now, 1) > (uint64_t)allowed;
    } else {
        uint64_t total = fails + oks;
        cool = (status == 429 && !single) || (oks == 0 && total >= SINGLE_DEPLOYMENT_TRAFFIC_FAILURE_THRESHOLD) ||
               (!single && total >= FAILURE_THRESHOLD_MINIMUM_REQUESTS &&
                (double)fails / (double)total > FAILURE_THRESHOLD_PERCENT) ||
               !retryable(status);
    }
    if (!cool)
        return 0;
    int64_t until = now + (int64_t)(t * 1000);
    int64_t cur = atomic_load_explicit(&s->cooldown_until_ms, memory_order_relaxed);
    while (cur < until && !atomic_compare_exchange_weak_explicit(&s->cooldown_until_ms, &cur, until,
                                                                 memory_order_relaxed, memory_order_relaxed))
        ;
    atomic_store_explicit(&s->cooldown_status, status, memory_order_relaxed);
    atomic_store_explicit(&s->w_afail, 0, memory_order_relaxed);
    set_state(d, 2);
    const struct sy_deployment *dp = d->d;
    sy_info("router: deployment %s (%s) cooled down for %.1f s after status %d", dp->id ? dp->id : "?", dp->model_name,
            t, status);
    return until;
}

void sy_router_ok(const struct sy_rconf *rc, struct sy_drt *d, uint64_t tokens, double lat_s)
{
    struct sy_dstate *s = d->st;
    int64_t now = sy_wall_ms();
    sy_win_add(&s->w_ok, now, 1);
    if (tokens)
        sy_win_add(&s->w_tpm, now, tokens);
    if (lat_s >= 0 && rc->strategy == SY_RS_LATENCY)
        sy_router_latency_sample(rc, s, lat_s);
    if (atomic_load_explicit(&s->state, memory_order_relaxed) != 0)
        set_state(d, 0);
}
