/* cache.c - the process-wide auth-object cache: virtual keys by token.
 *
 * DESIGN. Every request carrying a virtual key looks its token up here, from
 * every worker thread, so a lookup must be cheap and must not contend: the
 * table is split into 64 shards, each with its own rwlock (readers share it)
 * and its own chained hash. The token is already a SHA-256 in hex, so its
 * first 16 hex digits are the hash (no hashing pass); the low 6 bits pick the
 * shard, the next ones the bucket; the key is compared with memcmp; a hit
 * bumps the entry's reference count under the read lock and returns it. No
 * allocation, no DB, no blocking on writers except for the few instructions
 * a put or an invalidation holds the write lock.
 *
 * Entries are immutable once published (sy_keys_put), except the spend
 * figures (atomics bumped by sy_keys_add_spend). A reader keeps its entry
 * alive by its reference; replacing or dropping an entry only drops the
 * cache's reference, and the last sy_keyinfo_unref frees it.
 *
 * Freshness: an entry is served while younger than ttl (found == 1) or
 * neg_ttl (found == 0, an unknown key); a stale entry stays filed until it is
 * replaced by a fresh load, or swept: when a shard's node count reaches its
 * sweep mark a put first drops that shard's stale nodes, so a flood of
 * distinct bad keys cannot grow the table without bound (it holds about two
 * neg_ttl's worth of them at most).
 *
 * Invariants: a node's key points into its object (token / end-user id);
 * objects are unreferenced only after the shard lock is released.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keys/keys.h"
#include "keys/keys_impl.h"

/* ---- the generic sharded table ------------------------------------------ */

uint64_t sy__hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

uint64_t sy__hash_token(const char *tok)
{
    /* hex digit -> value; anything else -> 0 (still consistent, only a worse spread) */
    static const signed char hv[256] = {
        ['0'] = 0,  ['1'] = 1,  ['2'] = 2,  ['3'] = 3,  ['4'] = 4,  ['5'] = 5,  ['6'] = 6,  ['7'] = 7,
        ['8'] = 8,  ['9'] = 9,  ['a'] = 10, ['b'] = 11, ['c'] = 12, ['d'] = 13, ['e'] = 14, ['f'] = 15,
        ['A'] = 10, ['B'] = 11, ['C'] = 12, ['D'] = 13, ['E'] = 14, ['F'] = 15,
    };
    uint64_t h = 0;
    for (int i = 0; i < 16 && tok[i]; i++)
        h = h << 4 | (uint64_t)hv[(unsigned char)tok[i]];
    return h;
}

void sy__ctab_init(struct sy__ctab *t, void (*unref)(void *obj))
{
    memset(t, 0, sizeof *t);
    t->unref = unref;
    for (int i = 0; i < SY__CSHARDS; i++) {
        pthread_rwlock_init(&t->shard[i].lock, NULL);
        t->shard[i].sweep_at = 256;
    }
}

static inline struct sy__cshard *shard_of(struct sy__ctab *t, uint64_t h)
{
    return &t->shard[h & (SY__CSHARDS - 1)];
}

static inline size_t bucket_of(const struct sy__cshard *s, uint64_t h)
{
    return (size_t)(h >> 6) & (s->nb - 1);
}

static inline int fresh(const struct sy__cnode *n, double now, double ttl, double neg_ttl)
{
    return now - n->loaded_at < (n->found ? ttl : neg_ttl);
}

void *sy__ctab_get(struct sy__ctab *t, const char *key, size_t klen, uint64_t h, double ttl, double neg_ttl)
{
    struct sy__cshard *s = shard_of(t, h);
    void *obj = NULL;
    pthread_rwlock_rdlock(&s->lock);
    if (s->nb) {
        for (struct sy__cnode *n = s->b[bucket_of(s, h)]; n; n = n->next) {
            if (n->h == h && n->klen == klen && memcmp(n->key, key, klen) == 0) {
                if (fresh(n, sy_keys_now(), ttl, neg_ttl)) {
                    atomic_fetch_add_explicit((atomic_int *)n->obj, 1, memory_order_relaxed);
                    obj = n->obj;
                }
                break;
            }
        }
    }
    pthread_rwlock_unlock(&s->lock);
    return obj;
}

/* Double the buckets (write lock held). Allocation failure leaves it as is. */
static void grow(struct sy__cshard *s)
{
    size_t nb = s->nb ? s->nb * 2 : 16;
    struct sy__cnode **b = calloc(nb, sizeof *b);
    if (!b)
        return;
    for (size_t i = 0; i < s->nb; i++) {
        struct sy__cnode *n = s->b[i], *next;
        for (; n; n = next) {
            next = n->next;
            size_t j = (size_t)(n->h >> 6) & (nb - 1);
            n->next = b[j];
            b[j] = n;
        }
    }
    free(s->b);
    s->b = b;
    s->nb = nb;
}

/* Unlink the nodes for which drop(n) says so onto *out (write lock held). */
static void unlink_if(struct sy__cshard *s, int (*drop)(struct sy__cnode *n, void *arg), void *arg,
                      struct sy__cnode **out)
{
    for (size_t i = 0; i < s->nb; i++) {
        struct sy__cnode **pp = &s->b[i];
        while (*pp) {
            struct sy__cnode *n = *pp;
            if (drop(n, arg)) {
                *pp = n->next;
                n->next = *out;
                *out = n;
                s->count--;
            } else {
                pp = &n->next;
            }
        }
    }
}

static void release_list(struct sy__ctab *t, struct sy__cnode *n)
{
    while (n) {
        struct sy__cnode *next = n->next;
        t->unref(n->obj);
        free(n);
        n = next;
    }
}

struct stale_arg {
    double now, ttl, neg_ttl;
};

static int drop_stale(struct sy__cnode *n, void *arg)
{
    const struct stale_arg *a = arg;
    return !fresh(n, a->now, a->ttl, a->neg_ttl);
}

void sy__ctab_put(struct sy__ctab *t, const char *key, size_t klen, uint64_t h, void *obj, double loaded_at, int found,
                  double ttl, double neg_ttl)
{
    struct sy__cnode *nn = malloc(sizeof *nn);
    if (!nn) { /* cannot file it: the cache simply misses next time */
        t->unref(obj);
        return;
    }
    nn->h = h;
    nn->key = key;
    nn->klen = klen;
    nn->obj = obj;
    nn->loaded_at = loaded_at;
    nn->found = found;

    struct sy__cshard *s = shard_of(t, h);
    struct sy__cnode *dead = NULL;
    pthread_rwlock_wrlock(&s->lock);
    if (s->count >= s->sweep_at) {
        struct stale_arg a = {sy_keys_now(), ttl, neg_ttl};
        unlink_if(s, drop_stale, &a, &dead);
        s->sweep_at = s->count * 2 > 256 ? s->count * 2 : 256;
    }
    if (!s->nb || s->count >= s->nb * 2)
        grow(s);
    if (!s->nb) { /* no buckets and none to be had */
        pthread_rwlock_unlock(&s->lock);
        nn->next = dead;
        release_list(t, nn);
        return;
    }
    struct sy__cnode **pp = &s->b[bucket_of(s, h)];
    for (; *pp; pp = &(*pp)->next) {
        struct sy__cnode *n = *pp;
        if (n->h == h && n->klen == klen && memcmp(n->key, key, klen) == 0) {
            *pp = n->next; /* replaced */
            n->next = dead;
            dead = n;
            s->count--;
            break;
        }
    }
    nn->next = s->b[bucket_of(s, h)];
    s->b[bucket_of(s, h)] = nn;
    s->count++;
    pthread_rwlock_unlock(&s->lock);
    release_list(t, dead);
}

struct key_arg {
    const char *key;
    size_t klen;
    uint64_t h;
};

static int drop_key(struct sy__cnode *n, void *arg)
{
    const struct key_arg *a = arg;
    return n->h == a->h && n->klen == a->klen && memcmp(n->key, a->key, a->klen) == 0;
}

void sy__ctab_drop_key(struct sy__ctab *t, const char *key, size_t klen, uint64_t h)
{
    struct sy__cshard *s = shard_of(t, h);
    struct key_arg a = {key, klen, h};
    struct sy__cnode *dead = NULL;
    pthread_rwlock_wrlock(&s->lock);
    unlink_if(s, drop_key, &a, &dead);
    pthread_rwlock_unlock(&s->lock);
    release_list(t, dead);
}

struct match_arg {
    int (*match)(void *obj, void *arg);
    void *arg;
};

static int drop_match(struct sy__cnode *n, void *arg)
{
    const struct match_arg *a = arg;
    return !a->match || a->match(n->obj, a->arg);
}

void sy__ctab_drop_if(struct sy__ctab *t, int (*match)(void *obj, void *arg), void *arg)
{
    struct match_arg a = {match, arg};
    for (int i = 0; i < SY__CSHARDS; i++) {
        struct sy__cshard *s = &t->shard[i];
        struct sy__cnode *dead = NULL;
        pthread_rwlock_wrlock(&s->lock);
        unlink_if(s, drop_match, &a, &dead);
        pthread_rwlock_unlock(&s->lock);
        release_list(t, dead);
    }
}

size_t sy__ctab_count(struct sy__ctab *t)
{
    size_t c = 0;
    for (int i = 0; i < SY__CSHARDS; i++) {
        pthread_rwlock_rdlock(&t->shard[i].lock);
        c += t->shard[i].count;
        pthread_rwlock_unlock(&t->shard[i].lock);
    }
    return c;
}

/* ---- the key cache ------------------------------------------------------ */

static struct sy__ctab keys_tab;
struct sy__ctab sy__endusers;
static _Atomic double g_ttl = 10, g_neg_ttl = 5;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void ki_unref(void *obj)
{
    sy_keyinfo_unref(obj);
}

static void eu_unref(void *obj)
{
    sy_enduser_unref(obj);
}

static void init_once(void)
{
    sy__ctab_init(&keys_tab, ki_unref);
    sy__ctab_init(&sy__endusers, eu_unref);
}

void sy__keys_ensure(void)
{
    pthread_once(&once, init_once);
}

double sy__keys_ttl(void)
{
    return atomic_load_explicit(&g_ttl, memory_order_relaxed);
}

double sy__keys_neg_ttl(void)
{
    return atomic_load_explicit(&g_neg_ttl, memory_order_relaxed);
}

void sy_keys_init(double ttl_s, double neg_ttl_s)
{
    sy__keys_ensure();
    atomic_store(&g_ttl, ttl_s > 0 ? ttl_s : 10);
    atomic_store(&g_neg_ttl, neg_ttl_s > 0 ? neg_ttl_s : 5);
}

void sy_keys_shutdown(void)
{
    sy__keys_ensure();
    sy__ctab_drop_if(&keys_tab, NULL, NULL);
    sy__ctab_drop_if(&sy__endusers, NULL, NULL);
}

double sy_keys_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct sy_keyinfo *sy_keys_get(const char *token)
{
    sy__keys_ensure();
    if (!token)
        return NULL;
    return sy__ctab_get(&keys_tab, token, strnlen(token, 64), sy__hash_token(token), sy__keys_ttl(),
                        sy__keys_neg_ttl());
}

struct sy_keyinfo *sy_keys_get_stale(const char *token)
{
    sy__keys_ensure();
    if (!token)
        return NULL;
    return sy__ctab_get(&keys_tab, token, strnlen(token, 64), sy__hash_token(token), 1e18, 1e18);
}

void sy_keys_put(struct sy_keyinfo *ki)
{
    if (!ki)
        return;
    sy__keys_ensure();
    ki->token[64] = 0;
    sy__ctab_put(&keys_tab, ki->token, strlen(ki->token), sy__hash_token(ki->token), ki, ki->loaded_at, ki->found,
                 sy__keys_ttl(), sy__keys_neg_ttl());
}

/* ---- freeing ------------------------------------------------------------ */

void sy__strv_free(char **v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void sy__budget_init(struct sy_budget *b)
{
    memset(b, 0, sizeof *b);
    atomic_init(&b->spend, 0.0);
    b->max_budget = -1;
    b->soft_budget = -1;
    b->rpm_limit = b->tpm_limit = b->max_parallel = -1;
}

void sy__budget_clear(struct sy_budget *b)
{
    free(b->id);
    free(b->budget_duration);
    sy__strv_free(b->models, b->nmodels);
    free(b->metadata);
    b->id = b->budget_duration = b->metadata = NULL;
    b->models = NULL;
    b->nmodels = 0;
}

void sy__budget_free(struct sy_budget *b)
{
    if (!b)
        return;
    sy__budget_clear(b);
    free(b);
}

void sy__mmb_free(struct sy_model_budget *m, size_t n)
{
    if (!m)
        return;
    for (size_t i = 0; i < n; i++) {
        free(m[i].model);
        free(m[i].budget_duration);
    }
    free(m);
}

void sy__keyinfo_free(struct sy_keyinfo *ki)
{
    free(ki->key_name);
    free(ki->key_alias);
    free(ki->user_id);
    free(ki->team_id);
    free(ki->org_id);
    sy__strv_free(ki->models, ki->nmodels);
    sy__strv_free(ki->allowed_routes, ki->nallowed_routes);
    sy__strv_free(ki->aliases, ki->naliases);
    sy__strv_free(ki->team_aliases, ki->nteam_aliases);
    sy__budget_clear(&ki->key);
    sy__mmb_free(ki->mmb, ki->nmmb);
    sy__budget_free(ki->team);
    free(ki->team_alias);
    sy__budget_free(ki->user);
    sy__budget_free(ki->member);
    sy__budget_free(ki->org);
    sy__objperm_free(ki->perm);
    sy__objperm_free(ki->team_perm);
    sy__objperm_free(ki->org_perm);
    free(ki);
}

void sy_keyinfo_unref(struct sy_keyinfo *ki)
{
    if (ki && atomic_fetch_sub_explicit(&ki->refs, 1, memory_order_acq_rel) == 1)
        sy__keyinfo_free(ki);
}

/* ---- invalidation ------------------------------------------------------- */

static int eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

struct inval {
    int kind; /* 'u' user, 't' team, 'o' org */
    const char *id;
};

static int ki_matches(void *obj, void *arg)
{
    const struct sy_keyinfo *ki = obj;
    const struct inval *iv = arg;
    switch (iv->kind) {
    case 'u': return eq(ki->user_id, iv->id) || (ki->user && eq(ki->user->id, iv->id));
    case 't': return eq(ki->team_id, iv->id) || (ki->team && eq(ki->team->id, iv->id));
    case 'o': return eq(ki->org_id, iv->id) || (ki->org && eq(ki->org->id, iv->id));
    }
    return 0;
}

static void (*_Atomic inval_hook)(const char *kind, const char *id);
static void (*_Atomic inval_hook2)(const char *kind, const char *id); /* sy_keys_add_invalidate_hook's */

void sy_keys_set_invalidate_hook(void (*fn)(const char *kind, const char *id))
{
    atomic_store(&inval_hook, fn);
}

void sy_keys_add_invalidate_hook(void (*fn)(const char *kind, const char *id))
{
    atomic_store(&inval_hook2, fn);
}

void sy_keys_invalidate(const char *kind, const char *id)
{
    if (!kind)
        return;
    sy__keys_ensure();
    if (!id)
        id = "";
    if (strcmp(kind, "all") == 0) {
        sy__ctab_drop_if(&keys_tab, NULL, NULL);
        sy__ctab_drop_if(&sy__endusers, NULL, NULL);
    } else if (strcmp(kind, "token") == 0) {
        size_t n = strlen(id);
        sy__ctab_drop_key(&keys_tab, id, n, sy__hash_token(id));
    } else if (strcmp(kind, "end_user") == 0) {
        size_t n = strlen(id);
        sy__ctab_drop_key(&sy__endusers, id, n, sy__hash_bytes(id, n));
    } else if (strcmp(kind, "user") == 0 || strcmp(kind, "team") == 0 || strcmp(kind, "org") == 0) {
        struct inval iv = {kind[0], id};
        sy__ctab_drop_if(&keys_tab, ki_matches, &iv);
    }
    void (*hook)(const char *, const char *) = atomic_load(&inval_hook);
    if (hook)
        hook(kind, id);
    void (*hook2)(const char *, const char *) = atomic_load(&inval_hook2);
    if (hook2)
        hook2(kind, id);
}

/* ---- settled spend ------------------------------------------------------ */

void sy__add_double(_Atomic double *d, double x)
{
    double o = atomic_load_explicit(d, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(d, &o, o + x, memory_order_relaxed, memory_order_relaxed))
        ;
}

void sy__add_plain_double(double *d, double x)
{
    double o, n;
    __atomic_load(d, &o, __ATOMIC_RELAXED);
    do {
        n = o + x;
    } while (!__atomic_compare_exchange(d, &o, &n, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

double sy__load_plain_double(const double *d)
{
    double o;
    __atomic_load(d, &o, __ATOMIC_RELAXED);
    return o;
}

struct sy_model_budget *sy__mmb_find(const struct sy_keyinfo *ki, const char *model)
{
    if (!ki || !model || !ki->nmmb)
        return NULL;
    for (size_t i = 0; i < ki->nmmb; i++)
        if (strcmp(ki->mmb[i].model, model) == 0)
            return &ki->mmb[i];
    const char *slash = strrchr(model, '/');
    if (slash)
        for (size_t i = 0; i < ki->nmmb; i++)
            if (strcmp(ki->mmb[i].model, slash + 1) == 0)
                return &ki->mmb[i];
    return NULL;
}

void sy_keys_add_spend(struct sy_keyinfo *ki, struct sy_enduser *eu, const char *model, double amount)
{
    if (amount == 0 || amount != amount)
        return;
    if (ki && ki->found) {
        sy__add_double(&ki->key.spend, amount);
        struct sy_budget *bs[] = {ki->user, ki->team, ki->member, ki->org};
        for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++)
            if (bs[i])
                sy__add_double(&bs[i]->spend, amount);
        struct sy_model_budget *m = sy__mmb_find(ki, model);
        if (m)
            sy__add_plain_double(&m->spend, amount);
    }
    if (eu && eu->found)
        sy__add_double(&eu->b.spend, amount);
}
