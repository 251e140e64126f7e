/* limits.c - the limits stage: rpm / tpm / parallel-request limits before the
 * call, released when it ends (limits/limits.h has the semantics).
 *
 * In a pipeline only when limits can apply (a database with virtual keys, or
 * general_settings.global_max_parallel_requests), after route (the prompt's
 * token count for tpm needs the group's tokenizer) and before the cache (a
 * cache hit is a request too, as in LiteLLM, where the limiter is a pre-call
 * hook). A request whose key, user, team... carry no limit builds no
 * descriptor and costs one call to sy_lim_build.
 *
 *   descriptors? ─no─▶ next stage
 *        │yes
 *   tpm? ─▶ reserve the body's length (a bound of the prompt's count); when
 *        │    that does not fit, the exact count (pool above SY_OFFLOAD_MIN_BYTES)
 *        │
 *   Redis configured and up? ─yes─▶ shadow says over? ─yes─▶ 429
 *        │no                               │no
 *        │                         one script call ─▶ taken / 429 / failed ─┐
 *        ▼                                                                   │
 *   fail closed and Redis configured? ─yes─▶ 503   ◀── failed ───────────────┘
 *        │no
 *   local counters ─▶ taken / 429
 *
 * The take is settled by the stage's finish hook (sy_call_account): in-flight
 * count released, tokens adjusted to the usage per token_rate_limit_type (a
 * cache hit uses no tokens). Its headers hook adds the x-ratelimit-* lines of
 * a take to every answer.
 *
 * Per-request state (slot): the descriptors, and whether the tokens reserved
 * for tpm are the body's length (a bound) rather than the count. The slot is
 * set only when some limit applies: finish and headers then find NULL.
 */
#include "gateway/gateway.h"
#include "gateway/slot.h"
#include "gateway/stage.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/errors.h"
#include "core/log.h"
#include "gateway/offload.h"
#include "http/server.h"
#include "limits/limits.h"
#include "redis/redis.h"

struct lstate {
    struct sy_lim_req lr; /* the request's limit descriptors */
    int bound;            /* lr.tokens is the body's length, not the prompt's count */
};
static int limits_slot = -1;

static struct lstate *st(const struct sy_call *c)
{
    return sy_call_slot(c, limits_slot);
}

/* Per process: this instance's prefix of parallel-set members. */
static char instance_id[24];
static atomic_int redis_fallback_logged; /* 1 while Redis is down and that was logged */

static const char *instance(void)
{
    if (!instance_id[0]) {
        unsigned long long r =
            ((unsigned long long)getpid() << 32) ^ (unsigned long long)time(NULL) ^ (unsigned long long)(uintptr_t)&r;
        snprintf(instance_id, sizeof instance_id, "%08llx", (r ^ (r >> 32)) & 0xffffffffULL);
    }
    return instance_id;
}

const char *sy_limits_state(const struct sy_gwconf *g)
{
    if (!g->cfg->router.redis_host)
        return "local";
    if (sy_redis_global_state() == SY_REDIS_CONNECTED)
        return "redis";
    return g->cfg->limits_fail_closed ? "refusing, redis unreachable" : "local, redis unreachable";
}

static int over(struct sy_call *c)
{
    char msg[768], hdrs[512];
    sy_lim_error(&st(c)->lr, sy_wall_now(), msg, sizeof msg, hdrs, sizeof hdrs);
    c->out.exception_class = "RateLimitError";
    sy_call_error(c, 429, "None", "None", msg, hdrs, strlen(hdrs));
    return SY_DONE;
}

static int recount(struct sy_call *c);

/* Over on tokens with only the bound reserved: the exact count may fit. */
static int bound_over(const struct sy_call *c)
{
    const struct lstate *ls = st(c);
    return ls->bound && ls->lr.over_type && strcmp(ls->lr.over_type, "tokens") == 0;
}

static int take_local(struct sy_call *c)
{
    struct sy_lim_req *lr = &st(c)->lr;
    if (sy_lim_take(lr, lr->tokens, sy_wall_now()) != 0)
        return bound_over(c) ? recount(c) : over(c);
    return SY_OK;
}

/* Redis unusable for this take: fail closed (503) or count locally. */
static int redis_failed(struct sy_call *c)
{
    if (c->g->cfg->limits_fail_closed) {
        c->out.exception_class = "ServiceUnavailableError";
        sy_call_error(c, 503, "None", "None",
                      "Rate limits cannot be checked: Redis is unreachable "
                      "(general_settings.switchyard_rate_limit_redis_failure: closed)",
                      NULL, 0);
        return SY_DONE;
    }
    int expect = 0;
    if (atomic_compare_exchange_strong(&redis_fallback_logged, &expect, 1))
        sy_warn("rate limits: Redis unreachable, counting on this instance's local counters (fail open) "
                "until it is back");
    return take_local(c);
}

static void on_taken(void *ud, int rc)
{
    struct sy_call *c = ud;
    c->req->on_abort = NULL;
    if (c->aborted) { /* the client left while Redis answered: settle (in account) and end */
        sy_call_account(c, 499);
        sy_resp_end(c->req);
        return;
    }
    int st;
    if (rc == 0) {
        atomic_store(&redis_fallback_logged, 0);
        st = SY_OK;
    } else if (rc == 1) {
        st = bound_over(c) ? recount(c) : over(c);
    } else {
        st = redis_failed(c);
    }
    if (st == SY_OK) {
        const struct lstate *ls = sy_call_slot(c, limits_slot);
        c->own_ratelimit = ls && ls->lr.taken;
        sy_call_resume(c);
    }
}

static int take_now(struct sy_call *c)
{
    struct sy_lim_req *lr = &st(c)->lr;
    struct sy_redis *r = c->w->redis;
    if (!c->g->cfg->router.redis_host)
        return take_local(c);
    if (!r || !sy_redis_up(r))
        return redis_failed(c);
    double now = sy_wall_now();
    if (sy_lim_shadow_over(lr, lr->tokens, now))
        return bound_over(c) ? recount(c) : over(c);
    if (sy_lim_take_redis(lr, r, lr->tokens, now, on_taken, c) != 0)
        return redis_failed(c);
    c->req->on_abort = sy_call_wait_abort;
    return SY_AGAIN;
}

/* Take; once taken, the answer's x-ratelimit-* headers are the call's own
 * (c->own_ratelimit: proxy.c then does not echo the provider's). */
static int take(struct sy_call *c)
{
    int rc = take_now(c);
    if (rc == SY_OK && st(c)->lr.taken)
        c->own_ratelimit = 1;
    return rc;
}

static void count_work(struct sy_call *c, void *arg)
{
    sy_route_count_work(c, NULL);
}

static void count_done(struct sy_call *c, void *arg)
{
    st(c)->lr.tokens = c->rt.input_tokens > 0 ? c->rt.input_tokens : 0;
    int st = take(c);
    if (st == SY_OK && arg)
        sy_call_resume(c);
}

/* Count the prompt exactly (on the pool when large), then take with it. */
static int recount(struct sy_call *c)
{
    struct lstate *ls = st(c);
    ls->bound = 0;
    ls->lr.over = -1;
    ls->lr.over_type = NULL;
    if (c->req->body.len < SY_OFFLOAD_MIN_BYTES) {
        count_work(c, NULL);
        ls->lr.tokens = c->rt.input_tokens > 0 ? c->rt.input_tokens : 0;
        return take(c);
    }
    sy_call_run_work(c, c->req->body.len, count_work, count_done, (void *)1);
    return SY_AGAIN;
}

/* "image" occurs in p[0..n): memchr hops (glibc's memmem costs ~2.5 instructions a byte here). */
static int has_image(const char *p, size_t n)
{
    const char *e = p + n;
    while (e - p >= 5) {
        p = memchr(p, 'i', (size_t)(e - p) - 4); /* an 'i' with 4 bytes after it */
        if (!p)
            return 0;
        if (memcmp(p + 1, "mage", 4) == 0)
            return 1;
        p++;
    }
    return 0;
}

/* Idle counters are freed every SWEEP_S seconds by whichever request comes first. */
#define SWEEP_S 10
static atomic_llong last_sweep;

static int limits_run(struct sy_call *c)
{
    long long sec = (long long)time(NULL), prev = atomic_load_explicit(&last_sweep, memory_order_relaxed);
    if (sec - prev >= SWEEP_S && atomic_compare_exchange_strong(&last_sweep, &prev, sec))
        sy_lim_sweep((double)sec);
    struct lstate *ls = sy_arena_alloc(&c->req->arena, sizeof *ls);
    if (!ls)
        return SY_OK;
    memset(ls, 0, sizeof *ls);
    struct sy_lim_req *lr = &ls->lr;
    const char *model = c->in.model;
    if (!sy_lim_build(lr, c->auth.key, c->auth.eu, model, c->g->cfg->global_max_parallel))
        return SY_OK;
    sy_call_slot(c, limits_slot) = ls;
    memcpy(lr->member, instance(), 8); /* "<instance>:<call id>", 45 bytes: no printf on the hot path */
    lr->member[8] = ':';
    memcpy(lr->member + 9, c->call_id, 36);
    lr->member[45] = 0;
    double t = c->g->cfg->request_timeout_s;
    lr->par_ttl_s = (t > 0 && t < 3600 ? t : 3600) + 30;
    if (!sy_lim_needs_tokens(lr) || c->g->cfg->token_rate_limit_type == 2 /* output: nothing known before */)
        return take(c);
    if (c->rt.input_tokens >= 0 && !c->rt.input_is_bound) {
        lr->tokens = c->rt.input_tokens;
        return take(c);
    }
    if (c->kind == SY_RK_PASSTHRU || c->kind == SY_RK_FILES) { /* no prompt to reserve; the usage settles */
        lr->tokens = 0;
        return take(c);
    }
    /* The body's length bounds the prompt's count (images excepted: they count
     * fixed amounts): reserve it while it fits, and count exactly only when it
     * does not (near the limit). The settle replaces it with the usage. */
    if (!has_image(c->req->body.p, c->req->body.len)) {
        lr->tokens = (int64_t)c->req->body.len;
        ls->bound = 1;
        return take(c);
    }
    return recount(c);
}

/* The call ended: release the take (finish hook). */
static void limits_finish(struct sy_call *c, int status)
{
    (void)status;
    struct lstate *ls = st(c);
    if (!ls || !ls->lr.taken)
        return;
    struct sy_lim_req *lr = &ls->lr;
    int64_t used = 0;
    if (c->cache != SY_CACHE_HIT) {
        int type = c->g->cfg->token_rate_limit_type;
        used = type == 1   ? (int64_t)c->usage.prompt_tokens
               : type == 2 ? (int64_t)c->usage.completion_tokens
                           : (int64_t)(c->usage.prompt_tokens + c->usage.completion_tokens);
    }
    sy_lim_settle(lr, c->w->redis, used, sy_wall_now());
}

/* The take's x-ratelimit-* lines on every answer (headers hook). */
static void limits_headers(const struct sy_call *c, struct sy_buf *b)
{
    const struct lstate *ls = st(c);
    if (ls && ls->lr.taken)
        sy_lim_headers(&ls->lr, b);
}

static int limits_on(const struct sy_gwconf *g, enum sy_route_kind k)
{
    (void)k;
    return g->db || g->cfg->global_max_parallel > 0; /* virtual keys' limits, or the global parallel limit */
}

const struct sy_stage sy_stage_limits = {
    .name = "limits",
    .routes = SY_RKB_LLM | SY_RKB(SY_RK_FILES),
    .enabled = limits_on,
    .run = limits_run,
    .finish = limits_finish,
    .headers = limits_headers,
    .slot = &limits_slot,
};
