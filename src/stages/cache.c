/* cache.c - the response cache stage, and the put its store filter calls
 * (filters/cache_store.c); cache/cache.h has the key, controls, value format
 * and streams.
 *
 * In a pipeline only with litellm_settings.cache: true, on the routes of the
 * supported call types (chat, text completions, embeddings; not
 * /v1/messages), after limits and before the budget reservation (a hit costs
 * nothing):
 *
 *   controls (body "cache", Cache-Control) ─▶ default_off and no use-cache? ─▶ not cached
 *   key = LiteLLM's (model group, namespace), with the tenant hashed in when
 *         cache_params.switchyard_scope is team or key
 *   no-cache? ─▶ miss
 *   local LRU, or Redis GET (async; Redis down = miss)
 *   found, younger than s-maxage? ─▶ hit: the stored response (as JSON, or
 *        replayed as an SSE stream), x-litellm-cache-key, x-litellm-cache-hit
 *   else miss: the call goes on; when it ends 200 and no-store is not set, the
 *        cache_store filter (filters/cache_store.c) stores the response (a
 *        stream: the bytes the client got, assembled) with sy_cache_put, ttl =
 *        the request's "ttl" or cache_params.ttl
 *
 * Redis is shared by instances: a response stored by one is a hit on all.
 * Stored values use LiteLLM's format, under LiteLLM's key.
 *
 * Per-request state: struct sy_ccall in the stage's slot, set once the call
 * has a key (NULL: not cached); c->cache says hit or miss to the rest of the
 * request path (metrics, spend, limits, the stream's capture). The store is
 * the stage's finish hook, the x-litellm-cache-* lines its headers hook.
 */
#include "gateway/gateway.h"
#include "gateway/slot.h"
#include "gateway/stage.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cache/cache.h"
#include "core/clock.h"
#include "core/errors.h"
#include "core/log.h"
#include "gateway/offload.h"
#include "gateway/usage.h"
#include "http/reply.h"
#include "http/server.h"
#include "keys/keys.h"
#include "metrics/metrics.h"
#include "redis/redis.h"

struct sy_ccall {
    char key[SY_CACHE_KEY_MAX];
    const char *ns; /* the namespace (the request's, else cache_params'), or NULL */
    char scope[80]; /* cache_params.switchyard_scope's tenant: "team:<id>", "key:<hash>", or "" */
    struct sy_cache_ctl ctl;
    int store; /* store the response when the call succeeds (filters/cache_store.c) */
};

static int cache_slot = -1;

static struct sy_ccall *ccall(const struct sy_call *c)
{
    return sy_call_slot(c, cache_slot);
}

const char *sy_cache_key_of(const struct sy_call *c)
{
    return ccall(c) ? ccall(c)->key : NULL;
}

/* x-litellm-cache-key / -hit on every answer of a cached call (headers hook). */
static void cache_headers(const struct sy_call *c, struct sy_buf *b)
{
    const struct sy_ccall *cc = ccall(c);
    if (!cc)
        return;
    SY_BUF_LIT(b, "x-litellm-cache-key: ");
    sy_buf_append(b, cc->key, strlen(cc->key));
    SY_BUF_LIT(b, "\r\n");
    if (c->cache == SY_CACHE_HIT)
        SY_BUF_LIT(b, "x-litellm-cache-hit: True\r\n");
}

/* Answer c from a stored response (JSON text). */
static void serve(struct sy_call *c, const char *resp, size_t n)
{
    c->cache = SY_CACHE_HIT;
    c->out.hit_body = resp; /* the logging callbacks' record (stages/log.c) */
    c->out.hit_len = n;
    uint64_t pt = 0, ct = 0;
    if (sy_usage_scan(resp, n, &pt, &ct)) {
        c->usage.prompt_tokens = pt;
        c->usage.completion_tokens = ct;
        c->usage.have_usage = 1;
    }
    c->usage.cost = 0;
    c->usage.cost_known = 1;
    struct sy_buf h;
    sy_buf_init(&h, 16384);
    sy_call_headers(c, &h, 1);
    if (c->in.stream) {
        struct sy_buf sse;
        sy_buf_init(&sse, 64u << 20);
        if (sy_cache_sse_replay(resp, n, c->in.include_usage, &sse) != 0) {
            sy_buf_free(&sse);
            sy_buf_free(&h);
            c->cache = SY_CACHE_MISS;
            sy_call_error(c, 500, "internal_server_error", NULL, "the cached response cannot be streamed", NULL, 0);
            return;
        }
        SY_BUF_LIT(&h, "cache-control: no-cache\r\nx-accel-buffering: no\r\n");
        sy_resp_start(c->req, 200, h.p, h.len, "text/event-stream");
        sy_resp_chunk(c->req, sse.p, sse.len);
        sy_call_account(c, 200);
        sy_resp_end(c->req);
        sy_buf_free(&sse);
    } else {
        sy_call_account(c, 200);
        sy_resp_simple(c->req, 200, h.p, h.len, "application/json", resp, n);
    }
    sy_buf_free(&h);
}

static int young(struct sy_call *c, double ts);

/* A stored value: 1 and the response in out when it decodes and is young
 * enough for the request's s-maxage. */
static int usable(struct sy_call *c, const char *v, size_t n, struct sy_buf *out)
{
    double ts = 0;
    if (sy_cache_value_decode(v, n, out, &ts) != 0)
        return 0;
    return young(c, ts);
}

/* In memory the value is LOCAL_TS (the store time, a double) then the
 * response's bytes: no encoding to undo on a hit. LiteLLM's format
 * ({"timestamp", "response"}) is what Redis holds, where other instances
 * (LiteLLM's too) read it. */
#define LOCAL_TS sizeof(double)

static int local_usable(struct sy_call *c, const char *v, size_t n, const char **resp, size_t *rn)
{
    double ts;
    if (n <= LOCAL_TS)
        return 0;
    memcpy(&ts, v, LOCAL_TS);
    *resp = v + LOCAL_TS;
    *rn = n - LOCAL_TS;
    return young(c, ts);
}

static int young(struct sy_call *c, double ts)
{
    const struct sy_ccall *cc = ccall(c);
    if (cc->ctl.s_maxage >= 0 && sy_wall_now() - ts > cc->ctl.s_maxage)
        return 0;
    return 1;
}

static void on_get(void *ud, const redisReply *reply)
{
    struct sy_call *c = ud;
    c->req->on_abort = NULL;
    if (c->aborted) {
        sy_call_account(c, 499);
        sy_resp_end(c->req);
        return;
    }
    if (reply && reply->type == REDIS_REPLY_STRING) {
        struct sy_buf out;
        sy_buf_init(&out, 64u << 20);
        if (usable(c, reply->str, reply->len, &out)) {
            serve(c, out.p, out.len);
            sy_buf_free(&out);
            return;
        }
        sy_buf_free(&out);
    }
    sy_call_resume(c);
}

/* After the key: the lookup. SY_OK (a miss: go on), SY_DONE (a hit, answered)
 * or SY_AGAIN (Redis asked; on_get continues). */
static int lookup(struct sy_call *c)
{
    const struct sy_config *cfg = c->g->cfg;
    struct sy_ccall *cc = ccall(c);
    if (cc->ctl.no_cache)
        return SY_OK;
    if (!cfg->cache_redis) {
        struct sy_buf v;
        sy_buf_init(&v, 64u << 20);
        const char *resp;
        size_t rn;
        int hit = sy_cache_local_get(cc->key, sy_wall_now(), &v) && local_usable(c, v.p, v.len, &resp, &rn);
        if (hit)
            serve(c, resp, rn);
        sy_buf_free(&v);
        return hit ? SY_DONE : SY_OK;
    }
    struct sy_redis *r = c->w->redis;
    if (!r || !sy_redis_up(r))
        return SY_OK; /* Redis down: a miss (the call goes on) */
    const char *argv[2] = {"GET", cc->key};
    if (sy_redis_cmd(r, on_get, c, 2, argv, NULL) != 0)
        return SY_OK;
    c->req->on_abort = sy_call_wait_abort;
    return SY_AGAIN;
}

/* The key: parsing and hashing the body, on the pool for large bodies (a
 * 32 MB body must not hold the loop). */
static void key_work(struct sy_call *c, void *arg)
{
    struct sy_ccall *cc = ccall(c);
    if (sy_cache_key_scoped(c->req->body.p, c->req->body.len, c->req_group->name, cc->ns, cc->scope, cc->key) != 0)
        cc->key[0] = 0;
}

/* The tenant whose entries this call may read and write (cache_params.switchyard_scope):
 * key: the hashed key (the master key's hash for the master key); team: the key's team,
 * else its hash (a key without a team shares with no one). Auth off: global. */
static void scope_of(const struct sy_call *c, int mode, char *out, size_t cap)
{
    out[0] = 0;
    if (mode == SY_CACHE_SCOPE_GLOBAL || !c->auth.hashed_key)
        return;
    if (mode == SY_CACHE_SCOPE_TEAM && c->auth.key && c->auth.key->team_id && c->auth.key->team_id[0] &&
        strlen(c->auth.key->team_id) < cap - 6)
        snprintf(out, cap, "team:%s", c->auth.key->team_id);
    else
        snprintf(out, cap, "key:%.64s", c->auth.hashed_key);
}

static int keyed(struct sy_call *c)
{
    struct sy_ccall *cc = ccall(c);
    if (!cc->key[0]) { /* not a JSON object we can key: not cached */
        sy_call_slot(c, cache_slot) = NULL;
        c->cache = 0;
        return SY_OK;
    }
    cc->store = !cc->ctl.no_store;
    return lookup(c);
}

static void key_done(struct sy_call *c, void *arg)
{
    if (keyed(c) == SY_OK)
        sy_call_resume(c);
}

static int cache_run(struct sy_call *c)
{
    const struct sy_config *cfg = c->g->cfg;
    unsigned ct = c->kind == SY_RK_CHAT          ? SY_CACHE_CT_CHAT
                  : c->kind == SY_RK_COMPLETIONS ? SY_CACHE_CT_TEXT
                  : c->kind == SY_RK_EMBEDDINGS  ? SY_CACHE_CT_EMBED
                                                 : 0;
    if (!(cfg->cache_call_types & ct))
        return SY_OK;
    struct sy_ccall *cc = sy_arena_alloc(&c->req->arena, sizeof *cc);
    if (!cc)
        return SY_OK;
    memset(cc, 0, sizeof *cc);
    const char *obj = NULL;
    size_t objlen = 0;
    if (c->in.scan.rk_mask & (1u << SY_JR_CACHE)) {
        obj = c->req->body.p + c->in.scan.rk[SY_JR_CACHE].off;
        objlen = c->in.scan.rk[SY_JR_CACHE].len;
    }
    struct sy_str ccv = sy_req_header(c->req, "cache-control");
    char err[256];
    if (sy_cache_ctl_parse(obj, objlen, ccv.p, ccv.n, &cc->ctl, err, sizeof err) != 0) {
        sy_call_error(c, 400, "invalid_request_error", "cache", err, NULL, 0);
        return SY_DONE;
    }
    if (cfg->cache_default_off && !cc->ctl.use_cache)
        return SY_OK;
    cc->ns = cc->ctl.ns[0] ? cc->ctl.ns : cfg->cache_namespace;
    scope_of(c, cfg->cache_scope, cc->scope, sizeof cc->scope);
    sy_call_slot(c, cache_slot) = cc;
    c->cache = SY_CACHE_MISS; /* until served */
    if (c->req->body.len >= SY_OFFLOAD_MIN_BYTES) {
        sy_call_run_work(c, c->req->body.len, key_work, key_done, NULL);
        return SY_AGAIN;
    }
    key_work(c, NULL);
    return keyed(c);
}

int sy_cache_will_store(const struct sy_call *c)
{
    const struct sy_ccall *cc = ccall(c);
    return cc && cc->store && c->cache != SY_CACHE_HIT;
}

void sy_cache_put(struct sy_call *c, const char *p, size_t n)
{
    struct sy_ccall *cc = ccall(c);
    const struct sy_config *cfg = c->g->cfg;
    double now = sy_wall_now();
    double ttl = cc->ctl.ttl > 0 ? cc->ctl.ttl : cfg->cache_ttl_s;
    struct sy_buf v;
    sy_buf_init(&v, 128u << 20);
    if (!cfg->cache_redis) {
        if (sy_buf_append(&v, (const char *)&now, LOCAL_TS) == 0 && sy_buf_append(&v, p, n) == 0)
            sy_cache_local_put(cc->key, v.p, v.len, ttl, now);
    } else if (sy_cache_value_encode(p, n, now, &v) == 0) {
        if (c->w->redis && sy_redis_up(c->w->redis)) {
            char ttls[32];
            snprintf(ttls, sizeof ttls, "%ld", (long)(ttl < 1 ? 1 : ttl + 0.5));
            const char *argv[5] = {"SET", cc->key, v.p, "EX", ttls};
            size_t lens[5] = {3, strlen(cc->key), v.len, 2, strlen(ttls)};
            sy_redis_cmd(c->w->redis, NULL, NULL, 5, argv, lens);
        }
    }
    sy_buf_free(&v);
}

static int cache_on(const struct sy_gwconf *g, enum sy_route_kind k)
{
    (void)k;
    return g->cfg->cache; /* litellm_settings.cache: true */
}

const struct sy_stage sy_stage_cache = {
    .name = "cache",
    .routes = SY_RKB(SY_RK_CHAT) | SY_RKB(SY_RK_COMPLETIONS) | SY_RKB(SY_RK_EMBEDDINGS),
    .enabled = cache_on,
    .run = cache_run,
    .headers = cache_headers,
    .slot = &cache_slot,
};
