/* sync.c - router state shared by instances through Redis (reference §3.2, §3.3).
 *
 * Requests make a Redis call only when it matters, and most make none:
 *   - a cooldown set here:   SET deployment:{id}:cooldown <until_ms> PX <ms>
 *   - usage-based/latency/cost routing on a deployment with rpm: rpm slots
 *     are LEASED from Redis by one script call (RESERVE below) that grants
 *     up to `want` slots only while the fleet's count stays within rpm; the
 *     instance then spends its lease locally. want = 1/16 of the headroom
 *     this instance last saw, between 1 and 100: far from the limit one call
 *     serves up to 100 requests, near it every request asks for exactly one,
 *     so N instances together never pass the deployment's rpm (a lease not
 *     spent by the end of the minute is unused capacity, never excess);
 *   - the tokens of successes are added up locally and flushed by the sync
 *     call (tpm is shared with at most one interval of delay).
 * Everything else is read by one script call (SYNC below) every
 * SY_RSYNC_INTERVAL_MS from one worker (worker 0; router/sync.h is what the
 * worker hands in: Redis client, metrics shard, its current table): each deployment's cooldown deadline,
 * its rpm/tpm this minute (all instances), and the other instances' in-flight
 * counts (each instance writes its own into a hash with a short expiry), so a
 * cooldown set by one instance is honoured by the others within one interval.
 *
 * Keys (minute = UTC "HH-MM", as LiteLLM's lowest_tpm_rpm_v2):
 *   | key                           | type   | value                       | expiry          |
 *   | deployment:{id}:cooldown      | string | until (ms since epoch)      | the cooldown    |
 *   | {id}:{group}:rpm:{minute}     | string | requests this minute        | 120 s           |
 *   | {id}:{group}:tpm:{minute}     | string | tokens this minute          | 120 s           |
 *   | switchyard:inflight:{id}      | hash   | instance -> in-flight count | 3 s (refreshed) |
 *   | provider_spend:{prov}:{period}| string | provider budget spend (USD) | the period      |
 *   (the last one is router/budget.c's, pushed and read on the same tick)
 *
 * sy_router_fail (the end of this file) is router/cooldown.c's decision plus
 * what needs the worker's sharing: the cooldown metric of its shard and the
 * broadcast.
 *
 * Redis down: every call is refused at once (redis/redis.h), the router runs
 * on local state, and sharing resumes when the client reconnects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "router/sync.h"

#include "logging/logging.h"
#include "metrics/metrics.h"
#include "redis/redis.h"
#include "router/strategy.h"

/* KEYS[1] rpm key; ARGV: rpm, slots wanted. Returns the slots granted (0: none left). */
static struct sy_redis_script reserve_script = {
    "local n = tonumber(redis.call('GET', KEYS[1])) or 0\n"
    "local lim, want = tonumber(ARGV[1]), tonumber(ARGV[2])\n"
    "if n >= lim then return 0 end\n"
    "local g = math.min(want, lim - n)\n"
    "if redis.call('INCRBY', KEYS[1], g) == g then redis.call('EXPIRE', KEYS[1], 120) end\n"
    "return g\n",
    {0}};

/* ARGV: instance, minute, then per deployment: id, group, local in-flight, tokens to add.
 * Returns per deployment: cooldown until (ms or 0), rpm, tpm, others' in-flight. */
static struct sy_redis_script sync_script = {
    "local out = {}\n"
    "local inst, minute = ARGV[1], ARGV[2]\n"
    "for i = 3, #ARGV, 4 do\n"
    "  local id, grp, mine, add = ARGV[i], ARGV[i+1], tonumber(ARGV[i+2]), tonumber(ARGV[i+3])\n"
    "  local cd = tonumber(redis.call('GET', 'deployment:' .. id .. ':cooldown')) or 0\n"
    "  local rpm = tonumber(redis.call('GET', id .. ':' .. grp .. ':rpm:' .. minute)) or 0\n"
    "  local tk = id .. ':' .. grp .. ':tpm:' .. minute\n"
    "  local tpm\n"
    "  if add > 0 then tpm = redis.call('INCRBY', tk, add); redis.call('EXPIRE', tk, 120)\n"
    "  else tpm = tonumber(redis.call('GET', tk)) or 0 end\n"
    "  local h = 'switchyard:inflight:' .. id\n"
    "  local others = 0\n"
    "  local all = redis.call('HGETALL', h)\n"
    "  for j = 1, #all, 2 do if all[j] ~= inst then others = others + (tonumber(all[j+1]) or 0) end end\n"
    "  if mine > 0 then redis.call('HSET', h, inst, mine); redis.call('EXPIRE', h, 3)\n"
    "  elseif #all > 0 then redis.call('HDEL', h, inst) end\n"
    "  out[#out+1] = cd; out[#out+1] = rpm; out[#out+1] = tpm; out[#out+1] = others\n"
    "end\n"
    "return out\n",
    {0}};

static void minute_str(char out[8])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(out, 8, "%02d-%02d", tm.tm_hour, tm.tm_min);
}

static int usage_key(char *out, size_t cap, const struct sy_drt *d, const char *kind)
{
    char m[8];
    minute_str(m);
    return snprintf(out, cap, "%s:%s:%s:%s", d->st->id, d->d->model_name, kind, m);
}

void sy_rsync_cooldown(struct sy_rsync *s, struct sy_drt *d, int64_t until_ms, int status)
{
    if (!s->redis || !sy_redis_up(s->redis))
        return;
    char key[512], val[32], px[32];
    snprintf(key, sizeof key, "deployment:%s:cooldown", d->st->id);
    snprintf(val, sizeof val, "%lld", (long long)until_ms);
    int64_t ms = until_ms - sy_wall_ms();
    if (ms <= 0)
        return;
    snprintf(px, sizeof px, "%lld", (long long)ms);
    const char *argv[] = {"SET", key, val, "PX", px};
    size_t lens[] = {3, strlen(key), strlen(val), 2, strlen(px)};
    sy_redis_cmd(s->redis, NULL, NULL, 5, argv, lens);
}

void sy_rsync_tokens(struct sy_rsync *s, struct sy_drt *d, uint64_t tokens)
{
    if (tokens && s->redis && d->d->tpm > 0)
        atomic_fetch_add_explicit(&d->st->tpm_pending, tokens, memory_order_relaxed);
}

/* ---- rpm reservation --------------------------------------------------- */

struct reserve_ctx {
    sy_rsync_reserved_fn cb;
    void *ud;
    struct sy_drt *d;
};

static void on_reserve(void *ud, const redisReply *r)
{
    struct reserve_ctx *x = ud;
    int ok = 1; /* Redis down or an error: fall back to the local reservation already held */
    struct sy_dstate *s = x->d->st;
    int64_t now = sy_wall_ms();
    if (r && r->type == REDIS_REPLY_INTEGER) {
        if (r->integer <= 0) {
            ok = 0;
            /* shadow: the fleet filled this minute; later picks skip it without a round trip */
            uint64_t have = sy_win_get(&s->r_rpm, now), cap = (uint64_t)x->d->d->rpm;
            if (have < cap)
                sy_win_add(&s->r_rpm, now, cap - have);
        } else {
            sy_win_add(&s->r_rpm, now, (uint64_t)r->integer);
            if (r->integer > 1)
                sy_win_add(&s->w_lease, now, (uint64_t)r->integer - 1);
        }
    }
    sy_rsync_reserved_fn cb = x->cb;
    void *cud = x->ud;
    free(x);
    cb(cud, ok);
}

int sy_rsync_reserve(struct sy_rsync *s, const struct sy_rconf *rc, struct sy_drt *d, sy_rsync_reserved_fn cb, void *ud)
{
    if (!s->redis || d->d->rpm <= 0 || !sy_redis_up(s->redis))
        return 0;
    if (rc->strategy != SY_RS_USAGE && rc->strategy != SY_RS_LATENCY && rc->strategy != SY_RS_COST)
        return 0; /* rpm is only a weight for the other strategies */
    int64_t now = sy_wall_ms();
    if (sy_win_take(&d->st->w_lease, now))
        return 0;
    struct reserve_ctx *x = malloc(sizeof *x);
    if (!x)
        return 0;
    *x = (struct reserve_ctx){cb, ud, d};
    char key[512], lim[32], want[32];
    usage_key(key, sizeof key, d, "rpm");
    snprintf(lim, sizeof lim, "%.0f", d->d->rpm);
    uint64_t used = sy_router_rpm_used(d->st, now), cap = (uint64_t)d->d->rpm;
    uint64_t k = used < cap ? (cap - used) / 16 : 1;
    snprintf(want, sizeof want, "%llu", (unsigned long long)(k < 1 ? 1 : k > 100 ? 100 : k));
    const char *keys[] = {key};
    size_t kl[] = {strlen(key)};
    const char *args[] = {lim, want};
    size_t al[] = {strlen(lim), strlen(want)};
    if (sy_redis_eval(s->redis, &reserve_script, on_reserve, x, 1, keys, kl, 2, args, al) != 0) {
        free(x);
        return 0;
    }
    return 1;
}

/* ---- periodic sync (worker 0) ------------------------------------------- */

static char instance_id[64];

/* What a sync call reads back into: the live states of the table's
 * deployments at the tick, in ARGV order. States live for the process, so
 * the reply needs no reference to the table, which a reload may free. */
struct sync_ctx {
    size_t n;
    struct sy_dstate *st[];
};

static void on_sync(void *ud, const redisReply *r)
{
    struct sync_ctx *x = ud;
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 4 * x->n) {
        int64_t now = sy_wall_ms();
        for (size_t i = 0; i < x->n; i++) {
            struct sy_dstate *s = x->st[i];
            long long v[4];
            for (int k = 0; k < 4; k++)
                v[k] = r->element[4 * i + k]->type == REDIS_REPLY_INTEGER ? r->element[4 * i + k]->integer : 0;
            int64_t cur = atomic_load_explicit(&s->cooldown_until_ms, memory_order_relaxed);
            if (v[0] > now && v[0] > cur)
                atomic_store_explicit(&s->cooldown_until_ms, (int64_t)v[0], memory_order_relaxed);
            uint64_t rr = sy_win_get(&s->r_rpm, now), rt = sy_win_get(&s->r_tpm, now);
            if ((uint64_t)v[1] > rr)
                sy_win_add(&s->r_rpm, now, (uint64_t)v[1] - rr);
            if ((uint64_t)v[2] > rt)
                sy_win_add(&s->r_tpm, now, (uint64_t)v[2] - rt);
            atomic_store_explicit(&s->remote_inflight, (int)v[3], memory_order_relaxed);
        }
    }
    free(x);
}

static void on_tick(uv_timer_t *tm)
{
    struct sy_rsync *rs = tm->data;
    if (!rs->redis || !sy_redis_up(rs->redis))
        return;
    sy_pbudget_sync(rs->redis); /* provider budgets (router/budget.c) */
    const struct sy_table *g = rs->table(rs->ud);
    if (!g->ndrts)
        return;
    size_t na = 2 + 4 * g->ndrts;
    const char **a = malloc(na * sizeof *a);
    size_t *al = malloc(na * sizeof *al);
    char(*num)[16] = malloc(g->ndrts * sizeof *num);
    char(*tok)[24] = malloc(g->ndrts * sizeof *tok);
    struct sync_ctx *x = malloc(sizeof *x + g->ndrts * sizeof x->st[0]);
    char minute[8];
    minute_str(minute);
    if (!a || !al || !num || !tok || !x)
        goto out;
    a[0] = instance_id;
    a[1] = minute;
    x->n = g->ndrts;
    for (size_t i = 0; i < g->ndrts; i++) {
        struct sy_drt *d = &g->drts[i];
        x->st[i] = d->st;
        snprintf(num[i], sizeof num[i], "%d", atomic_load_explicit(&d->st->inflight, memory_order_relaxed));
        snprintf(tok[i], sizeof tok[i], "%llu",
                 (unsigned long long)atomic_exchange_explicit(&d->st->tpm_pending, 0, memory_order_relaxed));
        a[2 + 4 * i] = d->st->id;
        a[3 + 4 * i] = d->d->model_name;
        a[4 + 4 * i] = num[i];
        a[5 + 4 * i] = tok[i];
    }
    for (size_t i = 0; i < na; i++)
        al[i] = strlen(a[i]);
    if (sy_redis_eval(rs->redis, &sync_script, on_sync, x, 0, NULL, NULL, (int)na, a, al) != 0)
        goto out;
    x = NULL;
out:
    free(x);
    free(tok);
    free(num);
    free(al);
    free(a);
}

void sy_rsync_start(struct sy_rsync *s, uv_loop_t *loop, uint64_t rnd)
{
    if (!s->redis)
        return;
    char host[40] = "";
    gethostname(host, sizeof host - 1);
    snprintf(instance_id, sizeof instance_id, "%s:%d:%llx", host, (int)getpid(), (unsigned long long)(rnd & 0xffffff));
    uv_timer_init(loop, &s->timer);
    s->timer.data = s;
    uv_timer_start(&s->timer, on_tick, SY_RSYNC_INTERVAL_MS, SY_RSYNC_INTERVAL_MS);
    uv_unref((uv_handle_t *)&s->timer);
    s->on = 1;
}

void sy_rsync_stop(struct sy_rsync *s)
{
    if (!s->on)
        return;
    s->on = 0;
    uv_timer_stop(&s->timer);
    uv_close((uv_handle_t *)&s->timer, NULL);
}

int sy_router_fail(struct sy_rsync *s, const struct sy_rconf *rc, const struct sy_group *g, struct sy_drt *d,
                   int status, enum sy_exc_class exc, double retry_after_s)
{
    int64_t until = sy_router_cooldown(rc, g, d, status, exc, retry_after_s, sy_wall_ms());
    if (!until)
        return 0;
    const struct sy_deployment *dp = d->d;
    sy_metrics_cooldown(s->metrics, dp->model ? dp->model : "", dp->id ? dp->id : "", dp->api_base ? dp->api_base : "",
                        d->prov ? d->prov->name : "", status);
    sy_alert(SY_ALERT_COOLDOWN_DEPLOYMENT, dp->id,
             "Deployment cooled down for %.1fs after status %d\nModel Group: `%s`\nDeployment: `%s`\nModel: `%s`\n"
             "API Base: `%s`",
             (double)(until - sy_wall_ms()) / 1000.0, status, dp->model_name ? dp->model_name : "",
             dp->id ? dp->id : "", dp->model ? dp->model : "", dp->api_base ? dp->api_base : "");
    sy_rsync_cooldown(s, d, until, status);
    return 1;
}
