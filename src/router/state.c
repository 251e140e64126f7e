/* state.c - live per-deployment router state: the registry and minute windows.
 *
 * States are created on first use and never freed, keyed by deployment id, so
 * a config reload finds the cooldowns, windows and latency samples of the
 * deployments it keeps. The registry is an open-addressing table guarded by a
 * mutex; it is touched only when a config is compiled (startup, SIGHUP), never
 * on the request path, which holds direct pointers (sy_drt.st).
 */
#include "router/router.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WIN_BITS 40
#define WIN_MASK ((1ull << WIN_BITS) - 1)
#define MIN_MASK ((1ull << 24) - 1)

int64_t sy_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline uint64_t minute_tag(int64_t now_ms)
{
    return ((uint64_t)(now_ms / 60000) & MIN_MASK) << WIN_BITS;
}

uint64_t sy_win_get(_Atomic uint64_t *w, int64_t now_ms)
{
    uint64_t v = atomic_load_explicit(w, memory_order_relaxed);
    return (v & ~WIN_MASK) == minute_tag(now_ms) ? v & WIN_MASK : 0;
}

uint64_t sy_win_add(_Atomic uint64_t *w, int64_t now_ms, uint64_t n)
{
    uint64_t tag = minute_tag(now_ms);
    uint64_t v = atomic_load_explicit(w, memory_order_relaxed), nv;
    do {
        uint64_t cur = (v & ~WIN_MASK) == tag ? v & WIN_MASK : 0;
        uint64_t sum = cur + n > WIN_MASK ? WIN_MASK : cur + n;
        nv = tag | sum;
    } while (!atomic_compare_exchange_weak_explicit(w, &v, nv, memory_order_relaxed, memory_order_relaxed));
    return nv & WIN_MASK;
}

int sy_win_add_below(_Atomic uint64_t *w, int64_t now_ms, uint64_t limit)
{
    uint64_t tag = minute_tag(now_ms);
    uint64_t v = atomic_load_explicit(w, memory_order_relaxed), nv;
    do {
        uint64_t cur = (v & ~WIN_MASK) == tag ? v & WIN_MASK : 0;
        if (cur >= limit)
            return 0;
        nv = tag | (cur + 1);
    } while (!atomic_compare_exchange_weak_explicit(w, &v, nv, memory_order_relaxed, memory_order_relaxed));
    return 1;
}

int sy_win_take(_Atomic uint64_t *w, int64_t now_ms)
{
    uint64_t tag = minute_tag(now_ms);
    uint64_t v = atomic_load_explicit(w, memory_order_relaxed);
    do {
        if ((v & ~WIN_MASK) != tag || (v & WIN_MASK) == 0)
            return 0;
    } while (!atomic_compare_exchange_weak_explicit(w, &v, v - 1, memory_order_relaxed, memory_order_relaxed));
    return 1;
}

void sy_win_sub(_Atomic uint64_t *w, int64_t now_ms, uint64_t n)
{
    uint64_t tag = minute_tag(now_ms);
    uint64_t v = atomic_load_explicit(w, memory_order_relaxed), nv;
    do {
        if ((v & ~WIN_MASK) != tag)
            return; /* the window moved on: nothing of ours is left in it */
        uint64_t cur = v & WIN_MASK;
        nv = tag | (cur > n ? cur - n : 0);
    } while (!atomic_compare_exchange_weak_explicit(w, &v, nv, memory_order_relaxed, memory_order_relaxed));
}

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sy_dstate **reg;
static size_t reg_cap, reg_n;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int reg_grow(void)
{
    size_t nc = reg_cap ? reg_cap * 2 : 64;
    struct sy_dstate **nt = calloc(nc, sizeof *nt);
    if (!nt)
        return -1;
    for (size_t i = 0; i < reg_cap; i++) {
        if (!reg[i])
            continue;
        size_t j = hash_str(reg[i]->id) & (nc - 1);
        while (nt[j])
            j = (j + 1) & (nc - 1);
        nt[j] = reg[i];
    }
    free(reg);
    reg = nt;
    reg_cap = nc;
    return 0;
}

struct sy_dstate *sy_dstate_get(const char *id)
{
    if (!id)
        id = "";
    pthread_mutex_lock(&reg_mu);
    struct sy_dstate *s = NULL;
    if ((reg_n + 1) * 2 > reg_cap && reg_grow() != 0)
        goto out;
    size_t j = hash_str(id) & (reg_cap - 1);
    while (reg[j]) {
        if (strcmp(reg[j]->id, id) == 0) {
            s = reg[j];
            goto out;
        }
        j = (j + 1) & (reg_cap - 1);
    }
    s = calloc(1, sizeof *s);
    char *cid = strdup(id);
    if (!s || !cid) {
        free(s);
        free(cid);
        s = NULL;
        goto out;
    }
    s->id = cid;
    reg[j] = s;
    reg_n++;
out:
    pthread_mutex_unlock(&reg_mu);
    return s;
}
