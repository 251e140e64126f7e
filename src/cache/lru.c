/* lru.c - the process-wide in-memory response cache (cache_params.type
 * local, and the local tier in front of Redis).
 *
 * DESIGN. The key's 64-bit FNV-1a hash picks a shard (top bits) and a
 * bucket (low bits). Each shard has its own mutex, a chained hash table that
 * doubles when it holds more items than buckets, and an intrusive doubly
 * linked list in recency order (head = most recent). An entry is one
 * allocation: the header, the key (NUL-terminated) and the value.
 *
 *   struct entry | key bytes \0 | value bytes
 *
 * Bounds: max_bytes and max_items are split evenly across the shards; a put
 * evicts from its shard's tail until the new entry fits. Small bounds use
 * fewer shards (down to one, an exact global LRU) so that each shard keeps a
 * useful share. An entry's size is key + value + the header; an entry larger
 * than its shard's byte share, or a value larger than max_bytes / 8, is not
 * stored. Entries past their expiry are never returned; they are dropped
 * when a get meets them or when eviction reaches them.
 *
 * Cost of a get: one hash, one lock, one chain walk, one memcpy into out
 * (under the lock: the entry may be replaced as soon as it is released).
 * Counters of evictions and expiries are atomics; items and bytes are per
 * shard and summed under the shard locks by sy_cache_local_stats.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "core/buf.h"

#define MAX_SHARDS 16

struct entry {
    struct entry *hnext;       /* hash chain */
    struct entry *prev, *next; /* recency list */
    uint64_t hash;
    double expires; /* unix seconds */
    size_t klen, vlen;
    char data[]; /* key \0 value */
};

struct shard {
    pthread_mutex_t mu;
    struct entry **buckets;
    size_t nbuckets; /* power of two */
    struct entry *head, *tail;
    size_t items, bytes;
    size_t max_items, max_bytes;
};

static struct {
    struct shard shards[MAX_SHARDS];
    unsigned nshards; /* power of two; 0 = not initialised */
    unsigned shift;   /* 64 - log2(nshards) */
    size_t max_value;
    atomic_uint_fast64_t evictions, expired;
} L;

static uint64_t fnv1a(const char *s, size_t *len)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;
    for (; p[n]; n++) {
        h ^= p[n];
        h *= 0x100000001b3ULL;
    }
    *len = n;
    return h ^ (h >> 29);
}

static size_t entry_size(const struct entry *e)
{
    return sizeof *e + e->klen + 1 + e->vlen;
}

static struct shard *shard_of(uint64_t h)
{
    return &L.shards[L.nshards > 1 ? (unsigned)(h >> L.shift) : 0];
}

static void list_unlink(struct shard *s, struct entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        s->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        s->tail = e->prev;
    e->prev = e->next = NULL;
}

static void list_push_front(struct shard *s, struct entry *e)
{
    e->prev = NULL;
    e->next = s->head;
    if (s->head)
        s->head->prev = e;
    s->head = e;
    if (!s->tail)
        s->tail = e;
}

/* The chain link that points at the entry for key, or at the chain's NULL end. */
static struct entry **find(struct shard *s, uint64_t h, const char *key, size_t klen)
{
    struct entry **pp = &s->buckets[h & (s->nbuckets - 1)];
    for (; *pp; pp = &(*pp)->hnext) {
        struct entry *e = *pp;
        if (e->hash == h && e->klen == klen && !memcmp(e->data, key, klen))
            break;
    }
    return pp;
}

/* Unlink e from its chain and the list and free it. */
static void drop(struct shard *s, struct entry *e)
{
    struct entry **pp = &s->buckets[e->hash & (s->nbuckets - 1)];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    list_unlink(s, e);
    s->items--;
    s->bytes -= entry_size(e);
    free(e);
}

static void grow(struct shard *s)
{
    size_t nb = s->nbuckets * 2;
    struct entry **b = calloc(nb, sizeof *b);
    if (!b)
        return; /* keep the longer chains */
    for (size_t i = 0; i < s->nbuckets; i++) {
        struct entry *e = s->buckets[i], *next;
        for (; e; e = next) {
            next = e->hnext;
            e->hnext = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = nb;
}

static void shard_clear(struct shard *s)
{
    struct entry *e = s->head, *next;
    for (; e; e = next) {
        next = e->next;
        free(e);
    }
    s->head = s->tail = NULL;
    if (s->buckets)
        memset(s->buckets, 0, s->nbuckets * sizeof *s->buckets);
    s->items = s->bytes = 0;
}

void sy_cache_local_init(size_t max_bytes, size_t max_items)
{
    if (L.nshards)
        sy_cache_local_shutdown();
    if (max_items == 0)
        max_items = 1;
    unsigned n = MAX_SHARDS;
    while (n > 1 && (max_items / n < 64 || max_bytes / n < ((size_t)1 << 20)))
        n /= 2;
    unsigned lg = 0;
    while ((1u << lg) < n)
        lg++;
    L.shift = 64 - lg;
    L.max_value = max_bytes / 8;
    atomic_store(&L.evictions, 0);
    atomic_store(&L.expired, 0);
    for (unsigned i = 0; i < n; i++) {
        struct shard *s = &L.shards[i];
        memset(s, 0, sizeof *s);
        pthread_mutex_init(&s->mu, NULL);
        s->nbuckets = 64;
        s->buckets = calloc(s->nbuckets, sizeof *s->buckets);
        s->max_items = max_items / n ? max_items / n : 1;
        s->max_bytes = max_bytes / n;
    }
    L.nshards = n;
}

void sy_cache_local_shutdown(void)
{
    for (unsigned i = 0; i < L.nshards; i++) {
        struct shard *s = &L.shards[i];
        shard_clear(s);
        free(s->buckets);
        s->buckets = NULL;
        pthread_mutex_destroy(&s->mu);
    }
    L.nshards = 0;
}

int sy_cache_local_get(const char *key, double now, struct sy_buf *out)
{
    if (!L.nshards || !key)
        return 0;
    size_t klen;
    uint64_t h = fnv1a(key, &klen);
    struct shard *s = shard_of(h);
    int found = 0;
    pthread_mutex_lock(&s->mu);
    if (s->buckets) {
        struct entry *e = *find(s, h, key, klen);
        if (e && e->expires <= now) {
            drop(s, e);
            atomic_fetch_add_explicit(&L.expired, 1, memory_order_relaxed);
        } else if (e) {
            if (s->head != e) {
                list_unlink(s, e);
                list_push_front(s, e);
            }
            found = sy_buf_append(out, e->data + e->klen + 1, e->vlen) == 0;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return found;
}

int sy_cache_local_put(const char *key, const char *v, size_t n, double ttl, double now)
{
    if (!L.nshards || !key || (!v && n) || !(ttl > 0) || n > L.max_value)
        return -1;
    size_t klen;
    uint64_t h = fnv1a(key, &klen);
    struct shard *s = shard_of(h);
    size_t size = sizeof(struct entry) + klen + 1 + n;
    if (size > s->max_bytes)
        return -1;
    struct entry *e = malloc(size); /* outside the lock */
    if (!e)
        return -1;
    e->hnext = e->prev = e->next = NULL;
    e->hash = h;
    e->expires = now + ttl;
    e->klen = klen;
    e->vlen = n;
    memcpy(e->data, key, klen + 1);
    if (n)
        memcpy(e->data + klen + 1, v, n);

    uint64_t evicted = 0, expired = 0;
    pthread_mutex_lock(&s->mu);
    if (!s->buckets) {
        pthread_mutex_unlock(&s->mu);
        free(e);
        return -1;
    }
    struct entry *old = *find(s, h, key, klen);
    if (old)
        drop(s, old);
    while (s->tail && (s->bytes + size > s->max_bytes || s->items + 1 > s->max_items)) {
        if (s->tail->expires <= now)
            expired++;
        else
            evicted++;
        drop(s, s->tail);
    }
    struct entry **pp = &s->buckets[h & (s->nbuckets - 1)];
    e->hnext = *pp;
    *pp = e;
    list_push_front(s, e);
    s->items++;
    s->bytes += size;
    if (s->items > s->nbuckets)
        grow(s);
    pthread_mutex_unlock(&s->mu);
    if (evicted)
        atomic_fetch_add_explicit(&L.evictions, evicted, memory_order_relaxed);
    if (expired)
        atomic_fetch_add_explicit(&L.expired, expired, memory_order_relaxed);
    return 0;
}

int sy_cache_local_delete(const char *key)
{
    if (!L.nshards || !key)
        return 0;
    size_t klen;
    uint64_t h = fnv1a(key, &klen);
    struct shard *s = shard_of(h);
    int removed = 0;
    pthread_mutex_lock(&s->mu);
    if (s->buckets) {
        struct entry *e = *find(s, h, key, klen);
        if (e) {
            drop(s, e);
            removed = 1;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return removed;
}

void sy_cache_local_flush(void)
{
    for (unsigned i = 0; i < L.nshards; i++) {
        pthread_mutex_lock(&L.shards[i].mu);
        shard_clear(&L.shards[i]);
        pthread_mutex_unlock(&L.shards[i].mu);
    }
}

void sy_cache_local_stats(struct sy_cache_stats *st)
{
    memset(st, 0, sizeof *st);
    for (unsigned i = 0; i < L.nshards; i++) {
        pthread_mutex_lock(&L.shards[i].mu);
        st->items += L.shards[i].items;
        st->bytes += L.shards[i].bytes;
        pthread_mutex_unlock(&L.shards[i].mu);
    }
    st->evictions = atomic_load(&L.evictions);
    st->expired = atomic_load(&L.expired);
}
