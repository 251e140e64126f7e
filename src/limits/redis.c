/* redis.c - the limiter's counters in Redis: one Lua script call takes a
 * request for all its descriptors at once (all or nothing), one
 * fire-and-forget script call settles it (contract: limits.h).
 *
 * TAKE script (EVALSHA take 4n <keys> 5+3n <args>):
 *
 *   KEYS, per descriptor i (4 each): {<kind>:<value>}:window, :requests,
 *        :tokens, :parallel
 *   ARGV: [1] window start (unix s)  [2] now (unix ms)  [3] T
 *         [4] member  [5] the member's deadline (unix ms: the zset's scores)
 *         [6 + 3(i-1) ..] rpm, tpm, par of descriptor i (-1: none)
 *   Per descriptor: a stored window older than ARGV[1] (or none) resets the
 *   window (SET window, requests = 0, tokens = 0, all EX 120); parallel
 *   members whose deadline passed are dropped (ZREMRANGEBYSCORE -inf now).
 *   Then checks requests + 1 <= rpm, tokens + T <= tpm (T = 0: tokens < tpm),
 *   ZCARD + 1 <= par for every descriptor; only when all pass: INCR requests,
 *   INCRBY tokens T, ZADD parallel deadline member (for descriptors with par),
 *   with EXPIREs.
 *   Reply: {failed (1-based, 0 none), type (0 none, 1 requests, 2 tokens,
 *   3 max_parallel_requests), then per descriptor requests, tokens, parallel
 *   (after the increments when taken)} - all integers.
 *
 * SETTLE script (EVALSHA settle 4n <keys> 5+n <args>), fire and forget:
 *
 *   KEYS, per descriptor (4 each): as for the take
 *   ARGV: [1] member  [2] the take's window  [3] current window  [4] used
 *         [5] T  [5 + i] 1 when descriptor i has par, else 0
 *   ZREM parallel member; tokens += used - T when the stored window is the
 *   take's and still current (floor 0); else used is added to the current window (started
 *   afresh when the stored one is older).
 *
 * The counters of every descriptor are hash-tagged by their own descriptor,
 * so a request with several descriptors touches several slots: fine on a
 * single Redis (and Sentinel), not on Redis Cluster (LiteLLM groups by slot
 * and loses atomicity across them).
 *
 * Lifetime: the lr must stay alive until the take's callback ran (the caller
 * keeps its call until then). One small context is allocated per take.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits/limits.h"
#include "redis/redis.h"

/* counters.c */
void sy__lim_resolve(struct sy_lim_req *lr, double now_unix);
void sy__lim_release(struct sy_lim_req *lr);
void sy__lim_shadow_set(struct sy_lim_ctr *c, int64_t window_start, int64_t req, int64_t tok, int64_t par);
void sy__lim_settle_local(struct sy_lim_req *lr, int64_t used_tokens, double now_unix);

#define TTL_S           120
#define PAR_TTL_DEFAULT 600.0

static struct sy_redis_script take_script = {
    .src = "local n = #KEYS / 4\n"
           "local win = tonumber(ARGV[1])\n"
           "local now = ARGV[2]\n"
           "local T = tonumber(ARGV[3])\n"
           "local member = ARGV[4]\n"
           "local deadline = ARGV[5]\n"
           "local ttl = "
           "120"
           "\n"
           "local out = {0, 0}\n"
           "local fail, ftype = 0, 0\n"
           "local rpm, tpm, par = {}, {}, {}\n"
           "for i = 1, n do\n"
           "  local k = (i - 1) * 4\n"
           "  local a = 5 + (i - 1) * 3\n"
           "  rpm[i] = tonumber(ARGV[a + 1]); tpm[i] = tonumber(ARGV[a + 2]); par[i] = tonumber(ARGV[a + 3])\n"
           "  local sw = tonumber(redis.call('GET', KEYS[k + 1]) or '')\n"
           "  local req, tok = 0, 0\n"
           "  if sw ~= nil and sw >= win then\n"
           "    req = tonumber(redis.call('GET', KEYS[k + 2]) or '0') or 0\n"
           "    tok = tonumber(redis.call('GET', KEYS[k + 3]) or '0') or 0\n"
           "  else\n"
           "    redis.call('SET', KEYS[k + 1], ARGV[1], 'EX', ttl)\n"
           "    redis.call('SET', KEYS[k + 2], 0, 'EX', ttl)\n"
           "    redis.call('SET', KEYS[k + 3], 0, 'EX', ttl)\n"
           "  end\n"
           "  local p = 0\n"
           "  if par[i] >= 0 then\n"
           "    redis.call('ZREMRANGEBYSCORE', KEYS[k + 4], '-inf', now)\n"
           "    p = redis.call('ZCARD', KEYS[k + 4])\n"
           "  end\n"
           "  out[#out + 1] = req; out[#out + 1] = tok; out[#out + 1] = p\n"
           "  if fail == 0 then\n"
           "    if rpm[i] >= 0 and req + 1 > rpm[i] then fail = i; ftype = 1\n"
           "    elseif tpm[i] >= 0 and ((T > 0 and tok + T > tpm[i]) or (T == 0 and tok >= tpm[i])) then fail = i; "
           "ftype = 2\n"
           "    elseif par[i] >= 0 and p + 1 > par[i] then fail = i; ftype = 3 end\n"
           "  end\n"
           "end\n"
           "if fail ~= 0 then out[1] = fail; out[2] = ftype; return out end\n"
           "local pttl = math.ceil((tonumber(deadline) - tonumber(now)) / 1000) + 60\n"
           "for i = 1, n do\n"
           "  local k = (i - 1) * 4\n"
           "  local o = 2 + (i - 1) * 3\n"
           "  out[o + 1] = redis.call('INCR', KEYS[k + 2])\n"
           "  if redis.call('TTL', KEYS[k + 2]) < 0 then redis.call('EXPIRE', KEYS[k + 2], ttl) end\n"
           "  if T > 0 then out[o + 2] = redis.call('INCRBY', KEYS[k + 3], T) end\n"
           "  if redis.call('TTL', KEYS[k + 3]) < 0 then redis.call('EXPIRE', KEYS[k + 3], ttl) end\n"
           "  if par[i] >= 0 then\n"
           "    redis.call('ZADD', KEYS[k + 4], deadline, member)\n"
           "    out[o + 3] = redis.call('ZCARD', KEYS[k + 4])\n"
           "    if redis.call('TTL', KEYS[k + 4]) < pttl then redis.call('EXPIRE', KEYS[k + 4], pttl) end\n"
           "  end\n"
           "end\n"
           "return out\n"};

static struct sy_redis_script settle_script = {
    .src = "local n = #KEYS / 4\n"
           "local member = ARGV[1]\n"
           "local tw = tonumber(ARGV[2])\n"
           "local cw = tonumber(ARGV[3])\n"
           "local used = tonumber(ARGV[4])\n"
           "local T = tonumber(ARGV[5])\n"
           "for i = 1, n do\n"
           "  local k = (i - 1) * 4\n"
           "  if ARGV[5 + i] == '1' then redis.call('ZREM', KEYS[k + 4], member) end\n"
           "  local sw = tonumber(redis.call('GET', KEYS[k + 1]) or '')\n"
           "  if sw == tw and tw == cw then\n"
           "    if used ~= T then\n"
           "      local v = redis.call('INCRBY', KEYS[k + 3], used - T)\n"
           "      if v < 0 then redis.call('INCRBY', KEYS[k + 3], -v) end\n"
           "    end\n"
           "  elseif used > 0 then\n"
           "    if sw ~= nil and sw >= cw then\n"
           "      redis.call('INCRBY', KEYS[k + 3], used)\n"
           "    else\n"
           "      redis.call('SET', KEYS[k + 1], cw, 'EX', 120)\n"
           "      redis.call('SET', KEYS[k + 2], 0, 'EX', 120)\n"
           "      redis.call('SET', KEYS[k + 3], used, 'EX', 120)\n"
           "    end\n"
           "  end\n"
           "end\n"
           "return 0\n"};

static const char *const sfx[4] = {"window", "requests", "tokens", "parallel"};

struct take_ctx {
    struct sy_lim_req *lr;
    sy_lim_cb cb;
    void *ud;
};

#define KEYLEN (SY_LIM_VALUE_MAX + 48)

/* "{<kind>:<value>}:<suffix>" into out (KEYLEN bytes): memcpy, no printf
 * (the hot path with Redis formats 4 keys per descriptor per request). */
static size_t key_of(char *out, const struct sy_lim_desc *d, const char *suffix)
{
    const char *k = sy_lim_kind_names[d->kind];
    size_t kl = strlen(k), vl = strnlen(d->value, SY_LIM_VALUE_MAX), sl = strlen(suffix), n = 0;
    out[n++] = '{';
    memcpy(out + n, k, kl);
    n += kl;
    out[n++] = ':';
    memcpy(out + n, d->value, vl);
    n += vl;
    out[n++] = '}';
    out[n++] = ':';
    memcpy(out + n, suffix, sl);
    n += sl;
    out[n] = 0;
    return n;
}

/* A signed integer in decimal into out (>= 21 bytes); returns out. */
static const char *i64s(char *out, int64_t v)
{
    char t[24];
    int n = 0, neg = v < 0;
    uint64_t u = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        t[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    int o = 0;
    if (neg)
        out[o++] = '-';
    while (n)
        out[o++] = t[--n];
    out[o] = 0;
    return out;
}

static int rint_of(const redisReply *r, long long *v)
{
    if (!r || r->type != REDIS_REPLY_INTEGER)
        return -1;
    *v = r->integer;
    return 0;
}

static void on_take(void *ud, const redisReply *reply)
{
    struct take_ctx *t = ud;
    struct sy_lim_req *lr = t->lr;
    sy_lim_cb cb = t->cb;
    void *cud = t->ud;
    unsigned n = lr->n < SY_LIM_MAX ? lr->n : SY_LIM_MAX;
    long long fail, type, v[SY_LIM_MAX][3];
    int rc = -1;
    free(t);

    if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 + 3 * (size_t)n ||
        rint_of(reply->element[0], &fail) || rint_of(reply->element[1], &type) || fail < 0 || fail > (long long)n ||
        type < 0 || type > 3 || (fail == 0) != (type == 0))
        goto failed;
    for (unsigned i = 0; i < n; i++)
        for (int j = 0; j < 3; j++)
            if (rint_of(reply->element[2 + 3 * i + j], &v[i][j]))
                goto failed;
    for (unsigned i = 0; i < n; i++)
        sy__lim_shadow_set(lr->d[i].ctr, lr->window, v[i][0], v[i][1], v[i][2]);
    if (fail) {
        unsigned i = (unsigned)fail - 1;
        struct sy_lim_desc *d = &lr->d[i];
        int64_t lim = type == 1 ? d->rpm : type == 2 ? d->tpm : d->par;
        int64_t used = v[i][type - 1];
        lr->over = (int)i;
        lr->over_type = type == 1 ? "requests" : type == 2 ? "tokens" : "max_parallel_requests";
        lr->over_limit = lim;
        lr->over_remaining = lim - used < 0 ? 0 : lim - used;
        sy__lim_release(lr);
        rc = 1;
    } else {
        for (unsigned i = 0; i < n; i++) {
            struct sy_lim_desc *d = &lr->d[i];
            lr->rem_req[i] = d->rpm < 0 ? -1 : d->rpm - v[i][0] < 0 ? 0 : d->rpm - v[i][0];
            lr->rem_tok[i] = d->tpm < 0 ? -1 : d->tpm - v[i][1] < 0 ? 0 : d->tpm - v[i][1];
        }
        lr->taken = 1;
        lr->in_redis = 1;
        rc = 0;
    }
    cb(cud, rc);
    return;
failed:
    sy__lim_release(lr);
    cb(cud, -1);
}

int sy_lim_take_redis(struct sy_lim_req *lr, struct sy_redis *r, int64_t tokens, double now_unix, sy_lim_cb cb,
                      void *ud)
{
    unsigned n = lr->n < SY_LIM_MAX ? lr->n : SY_LIM_MAX;
    char keys[SY_LIM_MAX * 4][KEYLEN];
    const char *kp[SY_LIM_MAX * 4];
    size_t kl[SY_LIM_MAX * 4];
    char nums[5 + SY_LIM_MAX * 3][32];
    const char *ap[5 + SY_LIM_MAX * 3];

    if (!r || !cb)
        return -1;
    if (tokens < 0)
        tokens = 0;
    lr->over = -1;
    lr->over_type = NULL;
    lr->window = (int64_t)floor(now_unix / SY_LIM_WINDOW_S) * SY_LIM_WINDOW_S;
    lr->tokens = tokens;
    double ttl = lr->par_ttl_s > 0 ? lr->par_ttl_s : PAR_TTL_DEFAULT;
    for (unsigned i = 0; i < n; i++)
        for (int j = 0; j < 4; j++) {
            kl[i * 4 + j] = key_of(keys[i * 4 + j], &lr->d[i], sfx[j]);
            kp[i * 4 + j] = keys[i * 4 + j];
        }
    i64s(nums[0], lr->window);
    i64s(nums[1], (int64_t)(now_unix * 1000)); /* ms: the parallel sets' scores */
    i64s(nums[2], tokens);
    i64s(nums[4], (int64_t)((now_unix + ttl) * 1000));
    for (unsigned i = 0; i < n; i++) {
        i64s(nums[5 + i * 3], lr->d[i].rpm < 0 ? -1 : lr->d[i].rpm);
        i64s(nums[6 + i * 3], lr->d[i].tpm < 0 ? -1 : lr->d[i].tpm);
        i64s(nums[7 + i * 3], lr->d[i].par < 0 ? -1 : lr->d[i].par);
    }
    for (unsigned i = 0; i < 5 + n * 3; i++)
        ap[i] = nums[i];
    ap[3] = lr->member[0] ? lr->member : "-";

    struct take_ctx *t = malloc(sizeof *t);
    if (!t)
        return -1;
    *t = (struct take_ctx){lr, cb, ud};
    sy__lim_resolve(lr, now_unix); /* the shadow's counters (referenced until settle) */
    if (sy_redis_eval(r, &take_script, on_take, t, (int)(n * 4), kp, kl, (int)(5 + n * 3), ap, NULL) != 0) {
        free(t);
        sy__lim_release(lr);
        return -1;
    }
    return 0;
}

void sy_lim_settle(struct sy_lim_req *lr, struct sy_redis *r, int64_t used_tokens, double now_unix)
{
    if (used_tokens < 0)
        used_tokens = 0;
    if (lr->taken && lr->in_redis && r) {
        /* only descriptors with a tpm or a parallel limit have anything to settle:
         * a request whose limits are all rpm makes no settle call */
        unsigned nd = lr->n < SY_LIM_MAX ? lr->n : SY_LIM_MAX, n = 0;
        const struct sy_lim_desc *ds[SY_LIM_MAX];
        for (unsigned i = 0; i < nd; i++)
            if (lr->d[i].tpm >= 0 || lr->d[i].par >= 0)
                ds[n++] = &lr->d[i];
        char keys[SY_LIM_MAX * 4][KEYLEN];
        const char *kp[SY_LIM_MAX * 4];
        size_t kl[SY_LIM_MAX * 4];
        char nums[5 + SY_LIM_MAX][32];
        const char *ap[5 + SY_LIM_MAX];
        for (unsigned i = 0; i < n; i++)
            for (int j = 0; j < 4; j++) {
                kl[i * 4 + j] = key_of(keys[i * 4 + j], ds[i], sfx[j]);
                kp[i * 4 + j] = keys[i * 4 + j];
            }
        i64s(nums[1], lr->window);
        i64s(nums[2], (int64_t)floor(now_unix / SY_LIM_WINDOW_S) * SY_LIM_WINDOW_S);
        i64s(nums[3], used_tokens);
        i64s(nums[4], lr->tokens);
        for (unsigned i = 0; i < n; i++)
            i64s(nums[5 + i], ds[i]->par >= 0);
        for (unsigned i = 1; i < 5 + n; i++)
            ap[i] = nums[i];
        ap[0] = lr->member[0] ? lr->member : "-";
        if (n)
            (void)sy_redis_eval(r, &settle_script, NULL, NULL, (int)(n * 4), kp, kl, (int)(5 + n), ap, NULL);
    }
    sy__lim_settle_local(lr, used_tokens, now_unix);
}
