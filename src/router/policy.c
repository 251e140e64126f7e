/* policy.c - retry and fallback decisions (reference §3.5, §3.6).
 *
 * Pure functions over the failure and the group's live state; the gateway
 * (gateway/proxy.c) acts on them. After an attempt fails:
 *
 *   retry in the same group?      no when: the client already has bytes, the
 *     error is a context-window (content-policy) error and such fallbacks
 *     exist, 404, 401 in a group of one, no healthy deployment is left, or
 *     the class's retries are used up. Retries for a class: the request's
 *     num_retries, else retry_policy[class], else the failed deployment's
 *     litellm_params.num_retries (LiteLLM: the exception carries it and it
 *     replaces the group's count), else the router's num_retries
 *     (router_settings, litellm_settings, default 2).
 *     LiteLLM difference (docs/router.md): a 400-class error (bad request,
 *     403, 422, context window, content policy) is retried only when
 *     retry_policy names its class; it fails the same way on every attempt.
 *   wait how long?                0 when another healthy deployment exists;
 *     else the upstream's Retry-After if 0 < it <= 60 s; else
 *     min(0.5 s * 2^retries, 8 s) * (1 - 0.25 * random), at least retry_after.
 *   else fall back?               the context-window list for a context
 *     error, the content-policy list for a policy error, else the group's
 *     fallbacks (its own, "*", default_fallbacks) or the request's; each
 *     fallback group is tried in order with its own retries, at most
 *     max_fallbacks groups; disable_fallbacks turns them off.
 */
#include <math.h>

#include "router/strategy.h"

enum sy_exc_class sy_router_exc_class(int status, int content_policy)
{
    if (content_policy)
        return SY_EXC_CONTENT_POLICY;
    switch (status) {
    case 400: return SY_EXC_BAD_REQUEST;
    case 401: return SY_EXC_AUTHENTICATION;
    case 408: return SY_EXC_TIMEOUT;
    case 429: return SY_EXC_RATE_LIMIT;
    default: return status >= 500 ? SY_EXC_INTERNAL_SERVER : SY_EXC__COUNT;
    }
}

int sy_router_retries(const struct sy_rconf *rc, int req_retries, int dep_retries, enum sy_exc_class exc)
{
    if (req_retries >= 0)
        return req_retries;
    if (exc < SY_EXC__COUNT && rc->retry_policy[exc] >= 0)
        return rc->retry_policy[exc];
    if (dep_retries >= 0)
        return dep_retries;
    return rc->num_retries;
}

int sy_router_should_retry(const struct sy_rconf *rc, const struct sy_group *g, const struct sy_failure *f,
                           double *delay_s, uint64_t rnd)
{
    if (f->status == 404)
        return 0;
    if (f->context_window && f->has_cw_fallbacks)
        return 0;
    if (f->content_policy && f->has_cp_fallbacks)
        return 0;
    if (f->status == 401 && g->usable <= 1)
        return 0;
    int four = f->status >= 400 && f->status < 500 && f->status != 401 && f->status != 408 && f->status != 409 &&
               f->status != 429;
    if (four && !(f->exc < SY_EXC__COUNT && rc->retry_policy[f->exc] >= 0) && f->req_retries < 0)
        return 0;
    if (f->retries_done >= sy_router_retries(rc, f->req_retries, f->dep_retries, f->exc))
        return 0;
    size_t healthy = sy_router_available(g, NULL);
    if (!healthy)
        return 0;
    if (sy_router_available(g, f->failed) > 0 && g->usable > 1) {
        *delay_s = 0;
        return 1;
    }
    double jitter = (double)(rnd % 1000) / 1000.0;
    if (f->retry_after_s > 0 && f->retry_after_s <= 60) {
        *delay_s = f->retry_after_s + 0.25 * jitter;
        return 1;
    }
    double d = fmin(0.5 * pow(2, f->retries_done), 8.0) * (1 - 0.25 * jitter);
    *delay_s = d < rc->retry_after_s ? rc->retry_after_s : d;
    return 1;
}
