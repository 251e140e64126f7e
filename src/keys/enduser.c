/* enduser.c - the end-user ("customer") cache: LiteLLM_EndUserTable rows by id.
 *
 * Same table as the key cache (cache.c: 64 rwlock'd shards, chained), keyed
 * by the end-user id as given in the request (body `user`, or the
 * x-litellm-end-user-id / x-litellm-customer-id header), hashed with FNV-1a
 * since ids are arbitrary text. Entries are published with refs owned by the
 * cache, immutable except b.spend; unknown ids are cached too (found == 0)
 * for neg_ttl. The loader is sy_endusers_load (load.c); invalidation by
 * sy_keys_invalidate("end_user", id) or "all".
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "keys/keys.h"
#include "keys/keys_impl.h"

struct sy_enduser *sy_endusers_get(const char *id)
{
    if (!id)
        return NULL;
    sy__keys_ensure();
    size_t n = strlen(id);
    return sy__ctab_get(&sy__endusers, id, n, sy__hash_bytes(id, n), sy__keys_ttl(), sy__keys_neg_ttl());
}

void sy_endusers_put(struct sy_enduser *eu)
{
    if (!eu)
        return;
    if (!eu->b.id) { /* nothing to file it under */
        sy_enduser_unref(eu);
        return;
    }
    sy__keys_ensure();
    size_t n = strlen(eu->b.id);
    sy__ctab_put(&sy__endusers, eu->b.id, n, sy__hash_bytes(eu->b.id, n), eu, eu->loaded_at, eu->found, sy__keys_ttl(),
                 sy__keys_neg_ttl());
}

void sy__enduser_free(struct sy_enduser *eu)
{
    sy__budget_clear(&eu->b);
    free(eu->alias);
    free(eu->allowed_model_region);
    free(eu->default_model);
    free(eu);
}

void sy_enduser_unref(struct sy_enduser *eu)
{
    if (eu && atomic_fetch_sub_explicit(&eu->refs, 1, memory_order_acq_rel) == 1)
        sy__enduser_free(eu);
}
