/* router.c - pick a deployment for the requested model group.
 *
 * simple-shuffle as LiteLLM (reference §3.3): weights come from `weight`,
 * else `rpm`, else `tpm`, looked up on the group's first deployment (each
 * deployment's own value, missing = 0), precomputed at load; otherwise a
 * uniform pick. A retry picks again, avoiding the deployment that just failed
 * when the group has another.
 */
#include "gateway/gateway.h"

#include <stdio.h>
#include <string.h>

#include "core/errors.h"

uint64_t sy_rand(struct sy_worker *w)
{
    /* xorshift64*: per worker, seeded at start */
    uint64_t x = w->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    w->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static double unit(struct sy_worker *w)
{
    return (double)(sy_rand(w) >> 11) / 9007199254740992.0;
}

struct sy_drt *sy_pick(struct sy_call *c, const struct sy_drt *avoid)
{
    const struct sy_group *gr = c->group;
    if (gr->n == 1)
        return gr->d[0];
    for (int tries = 0; tries < 4; tries++) {
        struct sy_drt *d;
        if (gr->weights) {
            double x = unit(c->w) * gr->wsum, acc = 0;
            size_t i = 0;
            for (; i + 1 < gr->n; i++) {
                acc += gr->weights[i];
                if (x < acc)
                    break;
            }
            d = gr->d[i];
        } else {
            d = gr->d[sy_rand(c->w) % gr->n];
        }
        if (d != avoid && d->prov)
            return d;
    }
    for (size_t i = 0; i < gr->n; i++) /* deterministic fallback */
        if (gr->d[i] != avoid && gr->d[i]->prov)
            return gr->d[i];
    return gr->d[0];
}

int sy_call_invalid_model(struct sy_call *c, const char *model)
{
    const char *route = c->kind == SY_RK_CHAT          ? "/chat/completions"
                        : c->kind == SY_RK_COMPLETIONS ? "/completions"
                                                       : "/embeddings";
    char msg[1024];
    snprintf(msg, sizeof msg,
             "%s: Invalid model name passed in model=%.400s. Call `/v1/models` to view available models for "
             "your key.",
             route, model);
    sy_call_error(c, 400, "invalid_request_error", "model", msg, NULL, 0);
    return SY_DONE;
}

int sy_stage_route(struct sy_call *c)
{
    c->group = sy_gwconf_group(c->g, c->model, strlen(c->model));
    if (!c->group)
        return sy_call_invalid_model(c, c->model);
    c->drt = sy_pick(c, NULL);
    if (!c->drt->prov) {
        char msg[1024];
        const struct sy_deployment *d = c->drt->d;
        snprintf(msg, sizeof msg,
                 "Model group '%s' cannot be served: provider '%s' (model=%s) is not supported by switchyard yet",
                 c->group->name, d->provider ? d->provider : "?", d->model ? d->model : "None");
        sy_call_error(c, 400, "invalid_request_error", "model", msg, NULL, 0);
        return SY_DONE;
    }
    return SY_OK;
}
