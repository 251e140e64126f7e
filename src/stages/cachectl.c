/* cachectl.c - LiteLLM's cache management routes (proxy/caching_routes.py):
 *
 *   | route                | answer                                                           |
 *   |----------------------|------------------------------------------------------------------|
 *   | GET  /cache/ping     | {"status":"healthy","cache_type":"local"|"redis",...}; a Redis   |
 *   |                      | cache is PINGed and written once (ping_response, set_cache_...)  |
 *   | POST /cache/delete   | {"keys":[...]} -> {"status":"success"}                           |
 *   | POST /cache/flushall | {"status":"success"}                                             |
 *
 * 503 "Cache not initialized. litellm.cache is None" without a cache, as
 * LiteLLM. Any valid key may ping; delete and flushall need an admin (the
 * master key or a proxy_admin key; LiteLLM lets any key drop what every
 * caller shares). Where LiteLLM only supports Redis for delete and flushall, both
 * work on the local cache too; and flushall on Redis removes only cache
 * entries (keys shaped like LiteLLM's cache keys), not the whole database
 * (LiteLLM's FLUSHALL would also wipe rate-limit counters and router state).
 */
#include "gateway/gateway.h"
#include "gateway/stage.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "core/errors.h"
#include "gateway/offload.h"
#include "http/reply.h"
#include "http/server.h"
#include "redis/redis.h"

/* Delete every key ending in 64 hex digits without a '{' (rate-limit keys
 * have hash tags): LiteLLM's cache keys, with or without a namespace. */
static struct sy_redis_script flush_script = {
    "local cur, n = '0', 0\n"
    "repeat\n"
    "  local r = redis.call('SCAN', cur, 'COUNT', 1000)\n"
    "  cur = r[1]\n"
    "  for _, k in ipairs(r[2]) do\n"
    "    if #k >= 64 and not string.find(k, '{', 1, true) and string.match(string.sub(k, -64), '^%x+$') then\n"
    "      redis.call('UNLINK', k)\n"
    "      n = n + 1\n"
    "    end\n"
    "  end\n"
    "until cur == '0'\n"
    "return n\n",
    {0}};

static void reply_json(struct sy_call *c, int status, const char *body)
{
    sy_reply_json(c->req, status, body, strlen(body));
}

static void fail(struct sy_call *c, int status, const char *msg)
{
    sy_reply_error(c->req, status, status == 503 ? "None" : "invalid_request_error", "None", msg);
}

/* Common end of an async Redis step: 1 when the client left (request ended). */
static int gone(struct sy_call *c)
{
    c->req->on_abort = NULL;
    if (c->aborted) {
        sy_resp_end(c->req);
        return 1;
    }
    return 0;
}

static const char *params_json(const struct sy_config *cfg)
{
    static __thread char b[512];
    snprintf(b, sizeof b, "\"litellm_cache_params\":\"{'type': '%s', 'ttl': %g, 'namespace': %s%s%s, 'mode': '%s'}\"",
             cfg->cache_redis ? "redis" : "local", cfg->cache_ttl_s, cfg->cache_namespace ? "'" : "",
             cfg->cache_namespace ? cfg->cache_namespace : "None", cfg->cache_namespace ? "'" : "",
             cfg->cache_default_off ? "default_off" : "default_on");
    return b;
}

static void on_set(void *ud, const redisReply *r)
{
    struct sy_call *c = ud;
    if (gone(c))
        return;
    if (!r || r->type == REDIS_REPLY_ERROR) {
        fail(c, 503, "Service Unhealthy (Redis did not accept a write)");
        return;
    }
    char b[1024];
    snprintf(b, sizeof b,
             "{\"status\":\"healthy\",\"cache_type\":\"redis\",\"ping_response\":true,\"set_cache_response\":"
             "\"success\",%s,\"health_check_cache_params\":{}}",
             params_json(c->g->cfg));
    reply_json(c, 200, b);
}

static void on_ping(void *ud, const redisReply *r)
{
    struct sy_call *c = ud;
    if (gone(c))
        return;
    if (!r || r->type == REDIS_REPLY_ERROR) {
        fail(c, 503, "Service Unhealthy (Redis did not answer PING)");
        return;
    }
    /* a write, as LiteLLM's ping does (async_add_cache of a test entry) */
    const char *argv[5] = {"SET", "switchyard:cache_ping", "test_key", "EX", "60"};
    if (sy_redis_cmd(c->w->redis, on_set, c, 5, argv, NULL) != 0) {
        fail(c, 503, "Service Unhealthy (Redis is unreachable)");
        return;
    }
    c->req->on_abort = sy_call_wait_abort;
}

static void on_done(void *ud, const redisReply *r)
{
    struct sy_call *c = ud;
    if (gone(c))
        return;
    if (!r || r->type == REDIS_REPLY_ERROR) {
        fail(c, 503, "Service Unhealthy (Redis is unreachable)");
        return;
    }
    reply_json(c, 200, "{\"status\":\"success\"}");
}

static int redis_ready(struct sy_call *c)
{
    if (c->w->redis && sy_redis_up(c->w->redis))
        return 1;
    fail(c, 503, "Service Unhealthy (Redis is unreachable)");
    return 0;
}

static int do_delete(struct sy_call *c)
{
    const struct sy_config *cfg = c->g->cfg;
    json_object *root = c->req->body.len
                            ? json_tokener_parse(sy_arena_strndup(&c->req->arena, c->req->body.p, c->req->body.len))
                            : NULL;
    json_object *keys = NULL;
    if (!root || !json_object_is_type(root, json_type_object) || !json_object_object_get_ex(root, "keys", &keys) ||
        !json_object_is_type(keys, json_type_array)) {
        json_object_put(root);
        fail(c, 400, "Cache Delete Failed: expected a JSON body {\"keys\": [\"<cache key>\", ...]}");
        return SY_DONE;
    }
    size_t n = json_object_array_length(keys);
    if (!cfg->cache_redis) {
        for (size_t i = 0; i < n; i++) {
            const char *k = json_object_get_string(json_object_array_get_idx(keys, i));
            if (k)
                sy_cache_local_delete(k);
        }
        json_object_put(root);
        reply_json(c, 200, "{\"status\":\"success\"}");
        return SY_DONE;
    }
    if (!redis_ready(c)) {
        json_object_put(root);
        return SY_DONE;
    }
    if (n == 0 || n > 10000) {
        json_object_put(root);
        if (n)
            fail(c, 400, "Cache Delete Failed: at most 10000 keys per call");
        else
            reply_json(c, 200, "{\"status\":\"success\"}");
        return SY_DONE;
    }
    const char **argv = sy_arena_alloc(&c->req->arena, (n + 1) * sizeof *argv);
    size_t *lens = sy_arena_alloc(&c->req->arena, (n + 1) * sizeof *lens);
    argv[0] = "DEL";
    lens[0] = 3;
    size_t m = 1;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(keys, i);
        if (!json_object_is_type(e, json_type_string))
            continue;
        argv[m] = sy_arena_strndup(&c->req->arena, json_object_get_string(e), (size_t)json_object_get_string_len(e));
        lens[m++] = (size_t)json_object_get_string_len(e);
    }
    json_object_put(root);
    if (m == 1) {
        reply_json(c, 200, "{\"status\":\"success\"}");
        return SY_DONE;
    }
    if (sy_redis_cmd(c->w->redis, on_done, c, (int)m, argv, lens) != 0) {
        fail(c, 503, "Service Unhealthy (Redis is unreachable)");
        return SY_DONE;
    }
    c->req->on_abort = sy_call_wait_abort;
    return SY_AGAIN;
}

static int cache_admin_run(struct sy_call *c)
{
    const struct sy_config *cfg = c->g->cfg;
    if (!cfg->cache) {
        fail(c, 503, "Cache not initialized. litellm.cache is None");
        return SY_DONE;
    }
    const char *p = c->req->path.p;
    size_t pn = c->req->path.n;
    if (pn == 11 && memcmp(p, "/cache/ping", 11) == 0) {
        if (!cfg->cache_redis) {
            char b[768];
            snprintf(b, sizeof b, "{\"status\":\"healthy\",\"cache_type\":\"local\",%s}", params_json(cfg));
            reply_json(c, 200, b);
            return SY_DONE;
        }
        if (!redis_ready(c))
            return SY_DONE;
        const char *argv[1] = {"PING"};
        if (sy_redis_cmd(c->w->redis, on_ping, c, 1, argv, NULL) != 0) {
            fail(c, 503, "Service Unhealthy (Redis is unreachable)");
            return SY_DONE;
        }
        c->req->on_abort = sy_call_wait_abort;
        return SY_AGAIN;
    }
    if (!c->auth.is_admin) { /* any key may ping; dropping entries every caller shares is the admin's */
        sy_reply_error(c->req, 403, "auth_error", "None",
                       "Only proxy admins (the master key or a proxy_admin key) can delete cache entries");
        return SY_DONE;
    }
    if (pn == 13 && memcmp(p, "/cache/delete", 13) == 0)
        return do_delete(c);
    /* /cache/flushall */
    if (!cfg->cache_redis) {
        sy_cache_local_flush();
        reply_json(c, 200, "{\"status\":\"success\"}");
        return SY_DONE;
    }
    if (!redis_ready(c))
        return SY_DONE;
    if (sy_redis_eval(c->w->redis, &flush_script, on_done, c, 0, NULL, NULL, 0, NULL, NULL) != 0) {
        fail(c, 503, "Service Unhealthy (Redis is unreachable)");
        return SY_DONE;
    }
    c->req->on_abort = sy_call_wait_abort;
    return SY_AGAIN;
}

const struct sy_stage sy_stage_cache_admin = {
    .name = "cache_admin",
    .routes = SY_RKB(SY_RK_CACHE_ADMIN),
    .run = cache_admin_run,
};
