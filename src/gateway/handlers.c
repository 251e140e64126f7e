/* handlers.c - routes answered by the gateway itself: models, health, metrics.
 * Each is the last stage of its route's pipeline. */
#include "gateway/gateway.h"
#include "keys/keys.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "gateway/offload.h"
#include "http/reply.h"
#include "http/server.h"
#include "metrics/metrics.h"
#include "redis/redis.h"

/* A boolean query parameter as FastAPI reads one (1/true/t/yes/y/on, any
 * case); absent or anything else: 0. */
static int query_bool(struct sy_str q, const char *name)
{
    static const char *const t[] = {"1", "on", "t", "true", "y", "yes"};
    char v[16];
    if (!sy_query_get(q.p, q.n, name, v, sizeof v))
        return 0;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcasecmp(v, t[i]) == 0)
            return 1;
    return 0;
}

static int key_allows(void *ud, const char *model)
{
    struct sy_call *c = ud;
    struct sy_check_err e;
    return sy_keys_check_model(c->key, model, sy_group_access_groups, c->g, &e) == 0;
}

/* GET /v1/models, /models [?return_wildcard_routes=true]
 * [&include_model_access_groups=true]: the servable model groups, aliases
 * and wildcard groups' known models (sy_models_list_json). Without a key
 * model list or query parameters: the body prebuilt at load. A virtual key
 * with a model list sees only what it may call, as LiteLLM (access group
 * names are then not added). */
int sy_stage_models(struct sy_call *c)
{
    const struct sy_keyinfo *k = c->key;
    int keyed = k && (k->nmodels || (k->team && k->team->nmodels));
    int wr = query_bool(c->req->query, "return_wildcard_routes");
    int ag = query_bool(c->req->query, "include_model_access_groups");
    if (!keyed && !wr && !ag) {
        sy_reply_json(c->req, 200, c->g->models_json, c->g->models_json_len);
        return SY_DONE;
    }
    struct sy_buf b;
    sy_buf_init(&b, 64u << 20);
    sy_models_list_json(c->g, wr, ag, keyed ? key_allows : NULL, c, &b);
    sy_reply_json(c->req, 200, b.p, b.len);
    sy_buf_free(&b);
    return SY_DONE;
}

/* GET /v1/models/{id}: the id as asked (a wildcard group's model, an alias),
 * 404 when no servable group answers to it or the key may not use it: LiteLLM
 * looks the id up in the key's filtered /v1/models list, so a model the key
 * cannot see does not exist for it (the same 404, nothing about the model
 * leaks). The key's and team's aliases resolve as on a call. */
int sy_stage_model_one(struct sy_call *c)
{
    char id[512];
    size_t n = c->path_model.n < sizeof id ? c->path_model.n : sizeof id - 1;
    memcpy(id, c->path_model.p, n);
    id[n] = 0;
    const char *name = c->key && n == c->path_model.n && !memchr(id, 0, n) ? sy_call_aliased(c, id) : id;
    const struct sy_group *gr = n == c->path_model.n ? sy_router_resolve(c->g, name, strlen(name)) : NULL;
    struct sy_check_err e;
    if (!gr || !gr->usable || (c->key && sy_call_model_denied(c, id, &e) != 0)) {
        char msg[512];
        snprintf(msg, sizeof msg, "The model '%.*s' does not exist",
                 (int)(c->path_model.n > 300 ? 300 : c->path_model.n), c->path_model.p);
        sy_reply_error(c->req, 404, "invalid_request_error", "model", msg);
        return SY_DONE;
    }
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    SY_BUF_LIT(&b, "{\"id\":\"");
    sy_buf_json_escape(&b, c->path_model.p, c->path_model.n);
    SY_BUF_LIT(&b, "\",\"object\":\"model\",\"created\":1677610602,\"owned_by\":\"openai\"}");
    sy_reply_json(c->req, 200, b.p, b.len);
    sy_buf_free(&b);
    return SY_DONE;
}

int sy_stage_liveness(struct sy_call *c)
{
    static const char body[] = "\"I'm alive!\"";
    sy_reply_json(c->req, 200, body, sizeof body - 1);
    return SY_DONE;
}

/* GET /health/readiness, LiteLLM's shape plus our fields:
 *
 *   member              value
 *   status              "healthy" (also with Redis down: requests are served on local state)
 *   db                  "Not connected" (no database)
 *   cache               null (no response cache), "local" or "redis"
 *   rate_limits         where limit counters live: "local", "redis", "local, redis unreachable"
 *                       (fail open) or "refusing, redis unreachable" (fail closed)
 *   litellm_version, switchyard_version, success_callbacks (as LiteLLM)
 *   redis               "connected" | "disconnected" | "not configured"
 *                       (router_settings Redis: shared cooldowns, usage, in-flight counts)
 *   workers, model_groups
 */
int sy_stage_readiness(struct sy_call *c)
{
    const struct sy_config *cfg = c->g->cfg;
    enum sy_redis_state rs = sy_redis_global_state();
    if (rs == SY_REDIS_NOT_CONFIGURED && cfg->router.redis_host)
        rs = SY_REDIS_DISCONNECTED; /* configured, but no client is up yet */
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    SY_BUF_LIT(&b, "{\"status\":\"healthy\",\"db\":\"Not connected\",\"cache\":");
    if (cfg->cache)
        sy_buf_printf(&b, "\"%s\"", cfg->cache_redis ? "redis" : "local");
    else
        SY_BUF_LIT(&b, "null");
    SY_BUF_LIT(&b, ",\"litellm_version\":\"" SY_VERSION "\",\"switchyard_version\":\"" SY_VERSION
                   "\",\"success_callbacks\":[");
    for (size_t i = 0; i < cfg->n_callbacks; i++) {
        if (i)
            SY_BUF_LIT(&b, ",");
        SY_BUF_LIT(&b, "\"");
        sy_buf_json_escape(&b, cfg->callbacks[i], strlen(cfg->callbacks[i]));
        SY_BUF_LIT(&b, "\"");
    }
    sy_buf_printf(&b, "],\"redis\":\"%s\",\"rate_limits\":\"%s\",\"workers\":%d,\"model_groups\":%zu}",
                  sy_redis_state_name(rs), sy_limits_state(c->g), sy_gw.nworkers, c->g->ngroups);
    sy_reply_json(c->req, 200, b.p, b.len);
    sy_buf_free(&b);
    return SY_DONE;
}

/* /metrics: rendering is linear in the number of series (~45 us and ~33 KB
 * each on the development machine), so a page of more than
 * SY_METRICS_INLINE_SERIES series is rendered on libuv's thread pool and the
 * request resumes on the loop. Rendering only reads the shards (published
 * counts with acquire, counters with relaxed loads), which is safe from any
 * thread while workers record; the worker's loop keeps the request, and so the
 * process keeps the shards, until the work is done. */
struct metrics_job {
    struct sy_buf out;
    int rc;
};

static void metrics_work(struct sy_call *c, void *arg)
{
    (void)c;
    struct metrics_job *j = arg;
    j->rc = sy_metrics_render(&j->out);
}

/* Loop thread: send the page (ends the request; c is gone afterwards). */
static void metrics_done(struct sy_call *c, void *arg)
{
    struct metrics_job *j = arg;
    if (j->rc != 0)
        sy_reply_error(c->req, 500, "internal_server_error", NULL, "metrics too large to render");
    else
        sy_resp_simple(c->req, 200, NULL, 0, "text/plain; version=0.0.4; charset=utf-8", j->out.p, j->out.len);
}

static void metrics_free(void *arg) { sy_buf_free(&((struct metrics_job *)arg)->out); }

int sy_stage_metrics(struct sy_call *c)
{
    struct metrics_job *j = sy_arena_alloc(&c->req->arena, sizeof *j);
    if (!j) {
        sy_reply_error(c->req, 500, "internal_server_error", NULL, "out of memory");
        return SY_DONE;
    }
    sy_buf_init(&j->out, 256u << 20);
    j->rc = SY_EINTERNAL;
    sy_arena_defer(&c->req->arena, metrics_free, j);
    /* Either replies now (inline) or later from the loop: do not touch c after. */
    if (sy_metrics_series() > SY_METRICS_INLINE_SERIES && sy_call_offload(c, metrics_work, metrics_done, j) == 0)
        return SY_DONE;
    metrics_work(c, j);
    metrics_done(c, j);
    return SY_DONE;
}
