/* keys_impl.h - what the files of src/keys share: the sharded cache table
 * (cache.c) both caches are built on, the free functions, the JSON helpers
 * the loader and the checks use, Python-style rendering of numbers and lists
 * for LiteLLM's messages, and the Redis invalidation listener (invalidate.c).
 */
#ifndef SY_KEYS_IMPL_H
#define SY_KEYS_IMPL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "keys/keys.h"

/* ---- the sharded cache table (cache.c) -------------------------------------
 *
 *   table ── shard[0..63] (each its own rwlock, cache-line aligned)
 *              └─ buckets[nb] ─▶ node ─▶ node ─▶ NULL     (chained)
 *
 * A node holds one published object (struct sy_keyinfo or struct sy_enduser;
 * both start with `atomic_int refs`), the key it is filed under (pointing
 * into the object, so it lives as long as the node), and a copy of the
 * object's loaded_at/found for the freshness test. The shard is picked by the
 * low 6 bits of the key's hash, the bucket by the next bits. Lookups take the
 * shard's read lock, compare the hash then memcmp the key, bump refs and
 * return: no allocation. Writers (put, invalidate, sweep) take the write lock
 * and unreference dropped objects after releasing it. */
#define SY__CSHARDS 64

struct sy__cnode {
    struct sy__cnode *next;
    uint64_t h;
    const char *key;
    size_t klen;
    void *obj;
    double loaded_at;
    int found;
};

struct sy__cshard {
    _Alignas(64) pthread_rwlock_t lock;
    struct sy__cnode **b;
    size_t nb;       /* buckets (power of two; 0 before the first put) */
    size_t count;    /* nodes */
    size_t sweep_at; /* sweep stale nodes when count reaches this */
};

struct sy__ctab {
    struct sy__cshard shard[SY__CSHARDS];
    void (*unref)(void *obj); /* drops one reference (frees at 0) */
};

void sy__ctab_init(struct sy__ctab *t, void (*unref)(void *obj));
/* The referenced object under key when fresh (now - loaded_at < ttl, or <
 * neg_ttl when !found), else NULL. */
void *sy__ctab_get(struct sy__ctab *t, const char *key, size_t klen, uint64_t h, double ttl, double neg_ttl);
/* File obj (takes over one reference) under key (which must point into obj),
 * replacing the object filed there. */
void sy__ctab_put(struct sy__ctab *t, const char *key, size_t klen, uint64_t h, void *obj, double loaded_at, int found,
                  double ttl, double neg_ttl);
/* Drop the object under key; drop every object for which match(obj, arg) is
 * non-zero (match NULL: everything). */
void sy__ctab_drop_key(struct sy__ctab *t, const char *key, size_t klen, uint64_t h);
void sy__ctab_drop_if(struct sy__ctab *t, int (*match)(void *obj, void *arg), void *arg);
size_t sy__ctab_count(struct sy__ctab *t);

uint64_t sy__hash_bytes(const char *s, size_t n); /* FNV-1a 64 */
uint64_t sy__hash_token(const char *tok);         /* a 64-hex token: its first 16 hex digits */

/* The two caches (cache.c, enduser.c) and the TTLs sy_keys_init set. */
extern struct sy__ctab sy__endusers;
void sy__keys_ensure(void);
double sy__keys_ttl(void);
double sy__keys_neg_ttl(void);

/* Free every pointer a struct owns (not the struct itself for budgets). */
void sy__budget_clear(struct sy_budget *b);
void sy__budget_free(struct sy_budget *b); /* clear + free(b); NULL ok */
void sy__budget_init(struct sy_budget *b); /* "none" everywhere: -1 limits, 0 spend */
void sy__keyinfo_free(struct sy_keyinfo *ki);
void sy__objperm_free(struct sy_objperm *p); /* load.c; NULL ok */
void sy__enduser_free(struct sy_enduser *eu);
/* atomically add x to a double (CAS loop) */
void sy__add_double(_Atomic double *d, double x);
void sy__add_plain_double(double *d, double x); /* __atomic builtins on a plain double */
double sy__load_plain_double(const double *d);

/* ---- JSON helpers (load.c) -------------------------------------------------
 * A JSON array of strings -> malloc'd vector (non-strings skipped); 0 on
 * success (*v NULL, *n 0 for NULL / empty / not an array), -1 out of memory. */
int sy__strv_from_json(const char *json, char ***v, size_t *n);
void sy__strv_free(char **v, size_t n);
/* A JSON object of strings as pairs (key, value, key, value, ...); *n counts
 * strings. Members that are not strings are left out; NULL/0 when none. */
int sy__strmap_from_json(const char *json, char ***v, size_t *n);
/* model_max_budget: {"gpt-4o": {"budget_limit": 1.0, "time_period": "1d"}}
 * (or {"max_budget": .., "budget_duration": ..}, LiteLLM's BudgetConfig
 * aliases); entries without a numeric budget are skipped. The spend of each
 * entry is taken from model_spend ({"gpt-4o": 0.12}, may be NULL). */
int sy__mmb_parse(const char *json, const char *model_spend, struct sy_model_budget **out, size_t *n);
void sy__mmb_free(struct sy_model_budget *m, size_t n);
/* The string value of key in a JSON object text, malloc'd; NULL if absent. */
char *sy__json_get_string(const char *json, const char *key);

/* The model_max_budget entry governing model: the model as named, else its
 * name after the last '/' (LiteLLM's resolve_model_budget candidates). */
struct sy_model_budget *sy__mmb_find(const struct sy_keyinfo *ki, const char *model);

/* ---- model access (checks.c), exposed for the fuzzer ------------------------
 * LiteLLM's _check_model_access_helper for one object's model list: 1 when
 * models allows model (empty list, "*", "all-proxy-models", the name, an
 * access group model belongs to, a wildcard pattern such as "openai/" followed by a star). */
int sy__models_allow(char *const *models, size_t n, const char *model, sy_access_groups_fn ag, void *ud);
/* Python's re.match("^" + pattern.replace("*", ".*") + "$", s) for the
 * patterns used in model lists ('.' any character, '*' any run). */
int sy__wild_match(const char *pat, const char *s);

#endif
