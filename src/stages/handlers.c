/* handlers.c - routes answered by the gateway itself: models, health, metrics.
 * Each is the last stage of its route's pipeline. */
#include "gateway/gateway.h"
#include "gateway/stage.h"
#include "keys/keys.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/clock.h"
#include "core/errors.h"
#include "core/log.h"
#include "gateway/offload.h"
#include "http/reply.h"
#include "http/server.h"
#include "logging/logging.h"
#include "metrics/metrics.h"
#include "redis/redis.h"
#include "spend/spend.h"
#include "store/dbpool.h"
#include "store/store.h"

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
    return sy_keys_check_model(c->auth.key, model, sy_group_access_groups, c->g, &e) == 0;
}

/* 1 when name is an access group of a servable group. */
static int is_access_group(const struct sy_gwconf *g, const char *name)
{
    for (size_t i = 0; i < g->ngroups; i++)
        for (const char *ag = g->groups[i].usable ? g->groups[i].access_groups : NULL; ag && *ag; ag += strlen(ag) + 1)
            if (strcmp(ag, name) == 0)
                return 1;
    return 0;
}

static void list_add(struct sy_buf *b, int *n, const char *id)
{
    if ((*n)++)
        SY_BUF_LIT(b, ",");
    SY_BUF_LIT(b, "{\"id\":\"");
    sy_buf_json_escape(b, id, strlen(id));
    SY_BUF_LIT(b, "\",\"object\":\"model\",\"created\":1677610602,\"owned_by\":\"openai\"}");
}

/* ?only_model_access_groups=true: the access group names among the models
 * the list would hold (LiteLLM's get_complete_model_list): with
 * include_model_access_groups, every group's for a key without a model list,
 * else those its (or its team's) models name; without it, none (the names
 * are expanded into their models first). */
static void access_groups_only(const struct sy_call *c, int keyed, int ag, struct sy_buf *b)
{
    const struct sy_gwconf *g = c->g;
    int n = 0;
    SY_BUF_LIT(b, "{\"data\":[");
    if (ag && !keyed) {
        const char *seen[256];
        size_t ns = 0;
        for (size_t i = 0; i < g->ngroups; i++)
            for (const char *a = g->groups[i].usable ? g->groups[i].access_groups : NULL; a && *a; a += strlen(a) + 1) {
                size_t j = 0;
                while (j < ns && strcmp(seen[j], a) != 0)
                    j++;
                if (j < ns)
                    continue;
                if (ns < 256)
                    seen[ns++] = a;
                list_add(b, &n, a);
            }
    } else if (ag) {
        const struct sy_keyinfo *k = c->auth.key;
        char *const *m = k->models;
        size_t nm = k->nmodels;
        if ((!nm || (nm == 1 && !strcmp(m[0], "all-team-models"))) && k->team)
            m = k->team->models, nm = k->team->nmodels;
        for (size_t i = 0; i < nm; i++)
            if (is_access_group(g, m[i]))
                list_add(b, &n, m[i]);
    }
    SY_BUF_LIT(b, "],\"object\":\"list\"}");
}

/* GET /v1/models, /models [?return_wildcard_routes=true]
 * [&include_model_access_groups=true]: the servable model groups, aliases
 * and wildcard groups' known models (sy_models_list_json). Without a key
 * model list or query parameters: the body prebuilt at load. A virtual key
 * with a model list sees only what it may call, as LiteLLM (access group
 * names are then not added). ?only_model_access_groups=true: the access
 * group names alone (access_groups_only). */
static int models_run(struct sy_call *c)
{
    const struct sy_keyinfo *k = c->auth.key;
    int keyed = k && (k->nmodels || (k->team && k->team->nmodels));
    int wr = query_bool(c->req->query, "return_wildcard_routes");
    int ag = query_bool(c->req->query, "include_model_access_groups");
    if (query_bool(c->req->query, "only_model_access_groups")) {
        struct sy_buf b;
        sy_buf_init(&b, 16u << 20);
        access_groups_only(c, keyed, ag, &b);
        sy_reply_buf(c->req, 200, &b);
        sy_buf_free(&b);
        return SY_DONE;
    }
    if (!keyed && !wr && !ag) {
        sy_reply_json(c->req, 200, c->g->models_json, c->g->models_json_len);
        return SY_DONE;
    }
    struct sy_buf b;
    sy_buf_init(&b, 64u << 20);
    sy_models_list_json(&c->g->table, wr, ag, keyed ? key_allows : NULL, c, &b);
    sy_reply_buf(c->req, 200, &b);
    sy_buf_free(&b);
    return SY_DONE;
}

/* GET /v1/models/{id}: the id as asked (a wildcard group's model, an alias),
 * 404 when no servable group answers to it or the key may not use it: LiteLLM
 * looks the id up in the key's filtered /v1/models list, so a model the key
 * cannot see does not exist for it (the same 404, nothing about the model
 * leaks). The key's and team's aliases resolve as on a call. */
static int model_one_run(struct sy_call *c)
{
    char id[512];
    size_t n = c->in.path_model.n < sizeof id ? c->in.path_model.n : sizeof id - 1;
    memcpy(id, c->in.path_model.p, n);
    id[n] = 0;
    const char *name = c->auth.key && n == c->in.path_model.n && !memchr(id, 0, n) ? sy_call_aliased(c, id) : id;
    const struct sy_group *gr = n == c->in.path_model.n ? sy_router_resolve(&c->g->table, name, strlen(name)) : NULL;
    struct sy_check_err e;
    if (!gr || !gr->usable || (c->auth.key && sy_call_model_denied(c, id, &e) != 0)) {
        char msg[512];
        snprintf(msg, sizeof msg, "The model '%.*s' does not exist",
                 (int)(c->in.path_model.n > 300 ? 300 : c->in.path_model.n), c->in.path_model.p);
        sy_reply_error(c->req, 404, "invalid_request_error", "model", msg);
        return SY_DONE;
    }
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    SY_BUF_LIT(&b, "{\"id\":\"");
    sy_buf_json_escape(&b, c->in.path_model.p, c->in.path_model.n);
    SY_BUF_LIT(&b, "\",\"object\":\"model\",\"created\":1677610602,\"owned_by\":\"openai\"");
    if (!gr->wildcard)
        sy_model_limits_json(&b, &gr->price_max);
    SY_BUF_LIT(&b, "}");
    sy_reply_buf(c->req, 200, &b);
    sy_buf_free(&b);
    return SY_DONE;
}

static int liveness_run(struct sy_call *c)
{
    static const char body[] = "\"I'm alive!\"";
    sy_reply_json(c->req, 200, body, sizeof body - 1);
    return SY_DONE;
}

/* GET /health/readiness, LiteLLM's shape plus our fields:
 *
 *   member              value
 *   status              "healthy" (as LiteLLM's current code; Redis down does not change it)
 *   db                  "connected" | "disconnected" (a database is in use: SQLite or
 *                       PostgreSQL, pinged as below), "Not connected" (no database)
 *
 * HTTP status: 503 while a database in use is unreachable (LiteLLM: a configured DB
 * that is not reachable means the worker cannot serve requests that depend on keys,
 * budgets or spend, so orchestrators take it out of rotation), unless
 * general_settings.allow_requests_on_db_unavailable lets requests through; else 200.
 *   cache               null (no response cache), "local" or "redis"
 *   rate_limits         where limit counters live: "local", "redis", "local, redis unreachable"
 *                       (fail open) or "refusing, redis unreachable" (fail closed)
 *   litellm_version, switchyard_version, success_callbacks, log_level ("DEBUG",
 *                       "INFO", "WARNING", "ERROR"), is_detailed_debug (as LiteLLM; its
 *                       use_aiohttp_transport, a Python transport switch, is left out)
 *   redis               "connected" | "disconnected" | "not configured"
 *                       (router_settings Redis: shared cooldowns, usage, in-flight counts)
 *   workers, model_groups
 *   logging             (callbacks, request log or alerting on) the logging thread's
 *                       inbox and each sink's queue_depth, queued, sent, retried, dropped
 *
 * The database is pinged (SELECT 1) on a DB thread, never on the loop, at
 * most once per READY_TTL_NS for the whole process: the result and its time
 * are shared by all workers, a probe that arrives while another one's ping is
 * in flight is answered from the last result (or the pool's last-known state
 * before any ping). LiteLLM caches a "connected" answer for 15 s and pings on
 * every probe while disconnected; one second both ways reports an outage or a
 * recovery within a second without letting a probe storm reach the database.
 * The result is recorded on the DB thread, so a client that leaves while its
 * ping runs still updates the cache and never leaves a probe marked in flight. */
#define READY_TTL_NS 1000000000ull

static _Atomic uint64_t ready_at_ns; /* when the last ping ended; 0 = never */
static atomic_int ready_ok;          /* its result */
static atomic_int ready_probing;     /* a ping is queued or running */

static void readiness_reply(struct sy_call *c, const char *db)
{
    const struct sy_config *cfg = c->g->cfg;
    enum sy_redis_state rs = sy_redis_global_state();
    if (rs == SY_REDIS_NOT_CONFIGURED && cfg->router.redis_host)
        rs = SY_REDIS_DISCONNECTED; /* configured, but no client is up yet */
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    sy_buf_printf(&b, "{\"status\":\"healthy\",\"db\":\"%s\",\"cache\":", db);
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
    static const char *const levels[] = {"DEBUG", "INFO", "WARNING", "ERROR"}; /* Python's level names */
    sy_buf_printf(&b, "],\"log_level\":\"%s\",\"is_detailed_debug\":%s", levels[sy_log_level & 3],
                  sy_log_level == SY_LOG_DEBUG ? "true" : "false");
    sy_buf_printf(&b, ",\"redis\":\"%s\",\"rate_limits\":\"%s\",\"workers\":%d,\"model_groups\":%zu}",
                  sy_redis_state_name(rs), sy_limits_state(c->g), sy_gw.nworkers, c->g->ngroups);
    if (sy_log_enabled(cfg)) { /* the logging callbacks' queues: ,"logging":{...} before the closing brace */
        b.len--;
        sy_log_render_readiness(&b);
        SY_BUF_LIT(&b, "}");
    }
    int down = !strcmp(db, "disconnected") && !cfg->allow_requests_on_db_unavailable;
    sy_reply_buf(c->req, down ? 503 : 200, &b);
    sy_buf_free(&b);
}

static const char *db_word(int ok)
{
    return ok ? "connected" : "disconnected";
}

/* DB thread. */
static void ready_ping(struct sy_store *st, struct sy_call *c, void *arg)
{
    (void)c;
    (void)arg;
    int ok = sy_store_exec(st, "SELECT 1", 0, NULL, NULL, NULL) >= 0;
    atomic_store(&ready_ok, ok);
    atomic_store(&ready_at_ns, sy_now_ns());
    atomic_store(&ready_probing, 0);
}

static void ready_done(struct sy_call *c, void *arg)
{
    (void)arg;
    readiness_reply(c, db_word(atomic_load(&ready_ok)));
}

static int readiness_run(struct sy_call *c)
{
    if (!c->g->db) {
        readiness_reply(c, "Not connected");
        return SY_DONE;
    }
    uint64_t at = atomic_load(&ready_at_ns);
    int fresh = at && sy_now_ns() - at < READY_TTL_NS;
    if (!fresh && !atomic_exchange(&ready_probing, 1)) {
        if (sy_call_db(c, ready_ping, ready_done, NULL) == 0)
            return SY_DONE; /* answered by ready_done */
        atomic_store(&ready_probing, 0);
    }
    readiness_reply(c, db_word(at ? atomic_load(&ready_ok) : sy_db_up()));
    return SY_DONE;
}

/* GET /routes: LiteLLM's {"routes": [...]} (pipeline.c sy_routes_json). */
static int routes_run(struct sy_call *c)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    sy_routes_json(&b);
    sy_reply_buf(c->req, 200, &b);
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
    if (!j->rc) { /* the logging callbacks' queues (logging/engine.c) */
        sy_log_render_metrics(&j->out);
        sy_retention_render_metrics(&j->out); /* spend/retention.c */
        j->rc = sy_buf_failed(&j->out);
    }
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

static void metrics_free(void *arg)
{
    sy_buf_free(&((struct metrics_job *)arg)->out);
}

static int metrics_run(struct sy_call *c)
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

const struct sy_stage sy_stage_models = {
    .name = "models",
    .routes = SY_RKB(SY_RK_MODELS),
    .run = models_run,
};

const struct sy_stage sy_stage_model_one = {
    .name = "model_one",
    .routes = SY_RKB(SY_RK_MODEL_ONE),
    .run = model_one_run,
};

const struct sy_stage sy_stage_liveness = {
    .name = "liveness",
    .routes = SY_RKB(SY_RK_LIVENESS),
    .run = liveness_run,
};

const struct sy_stage sy_stage_readiness = {
    .name = "readiness",
    .routes = SY_RKB(SY_RK_READINESS),
    .run = readiness_run,
};

const struct sy_stage sy_stage_routes = {
    .name = "routes",
    .routes = SY_RKB(SY_RK_ROUTES),
    .run = routes_run,
};

const struct sy_stage sy_stage_metrics = {
    .name = "metrics",
    .routes = SY_RKB(SY_RK_METRICS),
    .run = metrics_run,
};
