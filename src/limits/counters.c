/* counters.c - the process-wide local counters of the rate limiter: the
 * sharded (kind, value) -> counter table, the all-or-nothing local take, the
 * Redis shadow and the local part of settling (contract: limits.h).
 *
 * DESIGN
 *
 * The table is SHARDS shards, each a mutex and a chained hash that grows by
 * doubling. A shard's mutex is held only to find, insert or unlink a counter;
 * the counting itself is lock-free on the counter's atomics:
 *
 *   | field   | type                  | meaning                                                   |
 *   |---------|-----------------------|-----------------------------------------------------------|
 *   | req     | _Atomic uint64_t      | window index (floor(unix / 60)) << 32 | requests in it    |
 *   | tok     | _Atomic uint64_t      | window index << 32 | tokens in it (saturates at 2^32 - 1)  |
 *   | par     | _Atomic int64_t       | requests in flight                                         |
 *   | refs    | atomic_int            | sy_lim_req's holding this counter (resolve .. release)     |
 *   | last    | _Atomic int64_t       | window index of the last resolve (for the sweep)          |
 *   | sh_req  | _Atomic uint64_t      | Redis shadow: window index << 32 | requests (last reply)  |
 *   | sh_tok  | _Atomic uint64_t      | Redis shadow: window index << 32 | tokens                 |
 *   | sh_par  | _Atomic int64_t       | Redis shadow: members of the parallel set                  |
 *
 * req/tok are updated by compare-and-swap on the packed word, so a window
 * roll-over and an increment are one atomic step and concurrent takes are
 * exact. A stored window older than the caller's is a fresh (zero) window; a
 * newer one (a thread whose clock read is a hair older) is counted in as is.
 *
 * Lifetime: refs only grow under the shard's lock (sy__lim_resolve), and the
 * sweep unlinks a counter only under that lock when refs == 0, par == 0 and
 * last is two windows old, so a referenced counter is never freed. Refs are
 * held from resolve (sy_lim_take, sy_lim_shadow_over, sy_lim_take_redis)
 * until the request is settled, or released at once when the outcome is "not
 * taken" (over, Redis failed, not sent). After sy_lim_shadow_over returned 0
 * the caller goes on to sy_lim_take / sy_lim_take_redis (or calls
 * sy_lim_settle, which also drops refs of an untaken lr).
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "limits/limits.h"

#define SHARDS  64
#define NB0     64 /* initial buckets per shard */
#define CNT_MAX 0xffffffffull

struct sy_lim_ctr {
    struct sy_lim_ctr *next;
    uint64_t hash;
    enum sy_lim_kind kind;
    _Atomic uint64_t req, tok;
    _Atomic int64_t par;
    atomic_int refs;
    _Atomic int64_t last;
    _Atomic uint64_t sh_req, sh_tok;
    _Atomic int64_t sh_par;
    char value[]; /* NUL-terminated */
};

struct shard {
    pthread_mutex_t mu;
    struct sy_lim_ctr **b;
    size_t nb, n;
};

static struct shard g_shards[SHARDS];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void once_init(void)
{
    for (int i = 0; i < SHARDS; i++)
        pthread_mutex_init(&g_shards[i].mu, NULL);
}

void sy_lim_init(void)
{
    pthread_once(&g_once, once_init);
}

void sy_lim_shutdown(void)
{
    pthread_once(&g_once, once_init);
    for (int i = 0; i < SHARDS; i++) {
        struct shard *s = &g_shards[i];
        pthread_mutex_lock(&s->mu);
        for (size_t j = 0; j < s->nb; j++)
            for (struct sy_lim_ctr *c = s->b[j], *nx; c; c = nx) {
                nx = c->next;
                free(c);
            }
        free(s->b);
        s->b = NULL;
        s->nb = s->n = 0;
        pthread_mutex_unlock(&s->mu);
    }
}

static inline uint64_t pack(int64_t w, uint64_t c)
{
    return ((uint64_t)(uint32_t)w << 32) | (c > CNT_MAX ? CNT_MAX : c);
}
static inline int64_t pw(uint64_t v)
{
    return (int64_t)(v >> 32);
}
static inline uint64_t pc(uint64_t v)
{
    return v & CNT_MAX;
}
static inline int64_t widx(double now)
{
    return (int64_t)floor(now / SY_LIM_WINDOW_S);
}

/* 8 bytes at a time (values are 64-hex-digit key hashes and ids: a byte
 * loop cost ~4 instructions a byte on every request). In-process only. */
static uint64_t hash_of(enum sy_lim_kind k, const char *v)
{
    size_t n = strlen(v), i = 0;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)k << 56) ^ n, w;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, v + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, v + i, n - i);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
}

static void grow(struct shard *s)
{
    size_t nb = s->nb ? s->nb * 2 : NB0;
    struct sy_lim_ctr **b = calloc(nb, sizeof *b);
    if (!b)
        return; /* keep the old table: longer chains, still correct */
    for (size_t j = 0; j < s->nb; j++)
        for (struct sy_lim_ctr *c = s->b[j], *nx; c; c = nx) {
            nx = c->next;
            size_t i = (c->hash >> 6) & (nb - 1);
            c->next = b[i];
            b[i] = c;
        }
    free(s->b);
    s->b = b;
    s->nb = nb;
}

/* Find (insert when create) the counter of (kind, value); with ref, take a
 * reference (under the lock). NULL when absent (or out of memory). */
static struct sy_lim_ctr *lookup(enum sy_lim_kind kind, const char *value, int create, int ref, int64_t w)
{
    pthread_once(&g_once, once_init);
    uint64_t h = hash_of(kind, value);
    struct shard *s = &g_shards[h & (SHARDS - 1)];
    struct sy_lim_ctr *c = NULL;
    pthread_mutex_lock(&s->mu);
    if (s->nb) {
        for (c = s->b[(h >> 6) & (s->nb - 1)]; c; c = c->next)
            if (c->hash == h && c->kind == kind && strcmp(c->value, value) == 0)
                break;
    }
    if (!c && create) {
        if (s->n >= s->nb)
            grow(s);
        size_t len = strlen(value);
        if (s->nb && (c = calloc(1, sizeof *c + len + 1))) {
            c->hash = h;
            c->kind = kind;
            memcpy(c->value, value, len + 1);
            size_t i = (h >> 6) & (s->nb - 1);
            c->next = s->b[i];
            s->b[i] = c;
            s->n++;
        }
    }
    if (c) {
        if (ref)
            atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
        if (w > atomic_load_explicit(&c->last, memory_order_relaxed))
            atomic_store_explicit(&c->last, w, memory_order_relaxed);
    }
    pthread_mutex_unlock(&s->mu);
    return c;
}

/* ---- shared with redis.c --------------------------------------------------- */

/* Resolve every descriptor's counter not yet resolved (taking a reference). */
void sy__lim_resolve(struct sy_lim_req *lr, double now_unix);
/* Drop the references of every resolved descriptor (ctr = NULL). */
void sy__lim_release(struct sy_lim_req *lr);
/* Mirror a Redis reply's counts into a counter's shadow. */
void sy__lim_shadow_set(struct sy_lim_ctr *c, int64_t window_start, int64_t req, int64_t tok, int64_t par);
/* Adjust the shadow's tokens by delta when its window is window_start. */
void sy__lim_shadow_add(struct sy_lim_ctr *c, int64_t window_start, int64_t delta);

void sy__lim_resolve(struct sy_lim_req *lr, double now_unix)
{
    int64_t w = widx(now_unix);
    for (unsigned i = 0; i < lr->n && i < SY_LIM_MAX; i++)
        if (!lr->d[i].ctr)
            lr->d[i].ctr = lookup(lr->d[i].kind, lr->d[i].value, 1, 1, w);
}

void sy__lim_release(struct sy_lim_req *lr)
{
    for (unsigned i = 0; i < lr->n && i < SY_LIM_MAX; i++)
        if (lr->d[i].ctr) {
            atomic_fetch_sub_explicit(&lr->d[i].ctr->refs, 1, memory_order_release);
            lr->d[i].ctr = NULL;
        }
}

void sy__lim_shadow_set(struct sy_lim_ctr *c, int64_t window_start, int64_t req, int64_t tok, int64_t par)
{
    if (!c)
        return;
    int64_t w = window_start / SY_LIM_WINDOW_S;
    atomic_store_explicit(&c->sh_req, pack(w, req < 0 ? 0 : (uint64_t)req), memory_order_relaxed);
    atomic_store_explicit(&c->sh_tok, pack(w, tok < 0 ? 0 : (uint64_t)tok), memory_order_relaxed);
    atomic_store_explicit(&c->sh_par, par < 0 ? 0 : par, memory_order_relaxed);
}

void sy__lim_shadow_add(struct sy_lim_ctr *c, int64_t window_start, int64_t delta)
{
    if (!c || !delta)
        return;
    int64_t w = window_start / SY_LIM_WINDOW_S;
    uint64_t o = atomic_load_explicit(&c->sh_tok, memory_order_relaxed), n;
    do {
        if (pw(o) != (int64_t)(uint32_t)w)
            return;
        int64_t v = (int64_t)pc(o) + delta;
        n = pack(w, v < 0 ? 0 : (uint64_t)v);
    } while (!atomic_compare_exchange_weak_explicit(&c->sh_tok, &o, n, memory_order_relaxed, memory_order_relaxed));
}

/* ---- the local take -------------------------------------------------------- */

/* One counter step applied by a take, for the rollback. */
struct step {
    struct sy_lim_ctr *c;
    int what;   /* 0 req, 1 tok, 2 par */
    int64_t w;  /* window counted in */
    uint64_t n; /* amount added */
};

/* Add n to a packed windowed counter when the result stays within limit
 * (limit < 0: none; strict: count < limit instead, for T = 0). Returns the
 * count after (>= 0) or -1 - count before when over. *wout: window used. */
static int64_t add_windowed(_Atomic uint64_t *a, int64_t w, uint64_t n, int64_t limit, int strict, int64_t *wout)
{
    uint64_t o = atomic_load_explicit(a, memory_order_relaxed), nv;
    int64_t ww;
    uint64_t c;
    do {
        ww = pw(o);
        c = pc(o);
        if (ww < (int64_t)(uint32_t)w) { /* an older window: start afresh */
            ww = (int64_t)(uint32_t)w;
            c = 0;
        }
        if (limit >= 0) {
            if (strict ? (int64_t)c >= limit : (int64_t)(c + n) > limit || c + n < c)
                return -1 - (int64_t)c;
        }
        nv = pack(ww, c + n);
    } while (!atomic_compare_exchange_weak_explicit(a, &o, nv, memory_order_acq_rel, memory_order_relaxed));
    *wout = ww;
    return (int64_t)pc(nv);
}

/* Subtract n (floor 0) from a windowed counter when its window is still w. */
static void sub_windowed(_Atomic uint64_t *a, int64_t w, uint64_t n)
{
    uint64_t o = atomic_load_explicit(a, memory_order_relaxed), nv;
    do {
        if (pw(o) != w)
            return;
        uint64_t c = pc(o);
        nv = pack(w, c > n ? c - n : 0);
    } while (!atomic_compare_exchange_weak_explicit(a, &o, nv, memory_order_acq_rel, memory_order_relaxed));
}

static void rollback(struct step *st, int ns)
{
    while (ns-- > 0) {
        struct step *s = &st[ns];
        if (s->what == 0)
            sub_windowed(&s->c->req, s->w, s->n);
        else if (s->what == 1)
            sub_windowed(&s->c->tok, s->w, s->n);
        else
            atomic_fetch_sub_explicit(&s->c->par, 1, memory_order_acq_rel);
    }
}

static void set_over(struct sy_lim_req *lr, unsigned i, const char *type, int64_t limit, int64_t used)
{
    lr->over = (int)i;
    lr->over_type = type;
    lr->over_limit = limit;
    lr->over_remaining = limit - used < 0 ? 0 : limit - used;
}

int sy_lim_take(struct sy_lim_req *lr, int64_t tokens, double now_unix)
{
    if (tokens < 0)
        tokens = 0;
    uint64_t T = (uint64_t)tokens;
    int64_t w = widx(now_unix);
    struct step st[SY_LIM_MAX * 3];
    int ns = 0;
    unsigned n = lr->n < SY_LIM_MAX ? lr->n : SY_LIM_MAX;

    lr->over = -1;
    lr->over_type = NULL;
    sy__lim_resolve(lr, now_unix);
    for (unsigned i = 0; i < n; i++) {
        struct sy_lim_desc *d = &lr->d[i];
        struct sy_lim_ctr *c = d->ctr;
        lr->rem_req[i] = lr->rem_tok[i] = -1;
        if (!c) { /* out of memory: this descriptor is not enforced */
            continue;
        }
        if (d->rpm >= 0) {
            int64_t ww, r = add_windowed(&c->req, w, 1, d->rpm, 0, &ww);
            if (r < 0) {
                rollback(st, ns);
                set_over(lr, i, "requests", d->rpm, -1 - r);
                sy__lim_release(lr);
                return 1;
            }
            st[ns++] = (struct step){c, 0, ww, 1};
            lr->rem_req[i] = d->rpm - r;
        }
        if (d->tpm >= 0) {
            int64_t ww, r = add_windowed(&c->tok, w, T, d->tpm, T == 0, &ww);
            if (r < 0) {
                rollback(st, ns);
                set_over(lr, i, "tokens", d->tpm, -1 - r);
                sy__lim_release(lr);
                return 1;
            }
            st[ns++] = (struct step){c, 1, ww, T};
            lr->rem_tok[i] = d->tpm - r < 0 ? 0 : d->tpm - r;
        }
        if (d->par >= 0) {
            int64_t o = atomic_load_explicit(&c->par, memory_order_relaxed);
            do {
                if (o + 1 > d->par) {
                    rollback(st, ns);
                    set_over(lr, i, "max_parallel_requests", d->par, o);
                    sy__lim_release(lr);
                    return 1;
                }
            } while (
                !atomic_compare_exchange_weak_explicit(&c->par, &o, o + 1, memory_order_acq_rel, memory_order_relaxed));
            st[ns++] = (struct step){c, 2, 0, 1};
        }
    }
    lr->tokens = tokens;
    lr->window = w * SY_LIM_WINDOW_S;
    lr->taken = 1;
    lr->in_redis = 0;
    return 0;
}

int sy_lim_shadow_over(struct sy_lim_req *lr, int64_t tokens, double now_unix)
{
    if (tokens < 0)
        tokens = 0;
    int64_t w = (int64_t)(uint32_t)widx(now_unix);
    unsigned n = lr->n < SY_LIM_MAX ? lr->n : SY_LIM_MAX;
    lr->over = -1;
    lr->over_type = NULL;
    sy__lim_resolve(lr, now_unix);
    for (unsigned i = 0; i < n; i++) {
        struct sy_lim_desc *d = &lr->d[i];
        struct sy_lim_ctr *c = d->ctr;
        if (!c)
            continue;
        /* requests and tokens only: they never go down within a window (the
         * parallel count does, so a stale shadow could refuse forever). */
        if (d->rpm >= 0) {
            uint64_t v = atomic_load_explicit(&c->sh_req, memory_order_relaxed);
            if (pw(v) == w && (int64_t)pc(v) + 1 > d->rpm) {
                set_over(lr, i, "requests", d->rpm, (int64_t)pc(v));
                goto over;
            }
        }
        if (d->tpm >= 0) {
            uint64_t v = atomic_load_explicit(&c->sh_tok, memory_order_relaxed);
            int64_t t = (int64_t)pc(v);
            if (pw(v) == w && (tokens ? t + tokens > d->tpm : t >= d->tpm)) {
                set_over(lr, i, "tokens", d->tpm, t);
                goto over;
            }
        }
    }
    return 0;
over:
    lr->window = w * SY_LIM_WINDOW_S;
    sy__lim_release(lr);
    return 1;
}

/* The local part of settling (redis.c's sy_lim_settle calls it last):
 * parallel - 1 and the token adjustment for a local take, the shadow's token
 * adjustment for a Redis take; then the references are dropped. */
void sy__lim_settle_local(struct sy_lim_req *lr, int64_t used_tokens, double now_unix);
void sy__lim_settle_local(struct sy_lim_req *lr, int64_t used_tokens, double now_unix)
{
    unsigned n = lr->n < SY_LIM_MAX ? lr->n : SY_LIM_MAX;
    if (!lr->taken) {
        sy__lim_release(lr);
        return;
    }
    if (used_tokens < 0)
        used_tokens = 0;
    int64_t tw = lr->window / SY_LIM_WINDOW_S, cw = widx(now_unix);
    int64_t delta = used_tokens - lr->tokens;
    for (unsigned i = 0; i < n; i++) {
        struct sy_lim_desc *d = &lr->d[i];
        struct sy_lim_ctr *c = d->ctr;
        if (!c)
            continue;
        if (lr->in_redis) {
            sy__lim_shadow_add(c, lr->window, delta);
            continue;
        }
        if (d->par >= 0)
            atomic_fetch_sub_explicit(&c->par, 1, memory_order_acq_rel);
        if (d->tpm < 0)
            continue;
        uint64_t o = atomic_load_explicit(&c->tok, memory_order_relaxed), nv;
        do {
            int64_t ww = pw(o), cnt = (int64_t)pc(o);
            if (tw == cw && ww == (int64_t)(uint32_t)tw) {
                cnt += delta; /* the take's window is the stored one */
            } else if (ww >= (int64_t)(uint32_t)cw) {
                cnt += used_tokens; /* a later window already started */
            } else {
                ww = cw; /* the take's window is over and the current one not started */
                cnt = used_tokens;
            }
            nv = pack(ww, cnt < 0 ? 0 : (uint64_t)cnt);
        } while (!atomic_compare_exchange_weak_explicit(&c->tok, &o, nv, memory_order_acq_rel, memory_order_relaxed));
    }
    sy__lim_release(lr);
    lr->taken = 0;
}

void sy_lim_sweep(double now_unix)
{
    pthread_once(&g_once, once_init);
    int64_t w = widx(now_unix);
    for (int i = 0; i < SHARDS; i++) {
        struct shard *s = &g_shards[i];
        pthread_mutex_lock(&s->mu);
        for (size_t j = 0; j < s->nb; j++) {
            struct sy_lim_ctr **pp = &s->b[j];
            while (*pp) {
                struct sy_lim_ctr *c = *pp;
                if (atomic_load_explicit(&c->refs, memory_order_acquire) == 0 &&
                    atomic_load_explicit(&c->par, memory_order_acquire) == 0 &&
                    atomic_load_explicit(&c->last, memory_order_relaxed) + 2 <= w &&
                    pw(atomic_load_explicit(&c->req, memory_order_relaxed)) + 2 <= w &&
                    pw(atomic_load_explicit(&c->tok, memory_order_relaxed)) + 2 <= w) {
                    *pp = c->next;
                    s->n--;
                    free(c);
                } else {
                    pp = &c->next;
                }
            }
        }
        pthread_mutex_unlock(&s->mu);
    }
}

int sy_lim_usage(enum sy_lim_kind kind, const char *value, double now_unix, int64_t *requests, int64_t *tokens,
                 int64_t *parallel)
{
    int64_t r = 0, t = 0, p = 0;
    int rc = -1;
    if (value && (unsigned)kind < SY_LIM__COUNT) {
        int64_t w = (int64_t)(uint32_t)widx(now_unix);
        uint64_t h = hash_of(kind, value);
        struct shard *s;
        pthread_once(&g_once, once_init);
        s = &g_shards[h & (SHARDS - 1)];
        pthread_mutex_lock(&s->mu);
        struct sy_lim_ctr *c = NULL;
        if (s->nb)
            for (c = s->b[(h >> 6) & (s->nb - 1)]; c; c = c->next)
                if (c->hash == h && c->kind == kind && strcmp(c->value, value) == 0)
                    break;
        if (c) {
            uint64_t v;
            rc = 0;
            v = atomic_load(&c->req);
            r = pw(v) == w ? (int64_t)pc(v) : 0;
            v = atomic_load(&c->tok);
            t = pw(v) == w ? (int64_t)pc(v) : 0;
            p = atomic_load(&c->par);
            v = atomic_load(&c->sh_req);
            if (pw(v) == w && (int64_t)pc(v) > r)
                r = (int64_t)pc(v);
            v = atomic_load(&c->sh_tok);
            if (pw(v) == w && (int64_t)pc(v) > t)
                t = (int64_t)pc(v);
            if (pw(v) == w && atomic_load(&c->sh_par) > p)
                p = atomic_load(&c->sh_par);
        }
        pthread_mutex_unlock(&s->mu);
    }
    if (requests)
        *requests = r;
    if (tokens)
        *tokens = t;
    if (parallel)
        *parallel = p;
    return rc;
}
