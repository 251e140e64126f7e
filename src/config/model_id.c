/* model_id.c - LiteLLM's deployment id when model_info.id is absent.
 *
 * LiteLLM 1.80.11 Router._generate_model_id(model_group, litellm_params):
 *     concat_str = model_group
 *     for k, v in litellm_params.items():
 *         concat_str += k if isinstance(k, str) else json.dumps(k) if dict else str(k)
 *         concat_str += v if isinstance(v, str) else json.dumps(v) if dict else str(v)
 *     return hashlib.sha256(concat_str.encode()).hexdigest()
 * litellm_params is the dict after os.environ/ resolution, in file order
 * (merge-key entries first, as PyYAML builds the dict). Python's str() and
 * json.dumps() renderings come from pyrepr.c.
 */
#include <openssl/evp.h>
#include <string.h>

#include "config/loader.h"
#include "core/buf.h"
#include "core/hex.h"

const char *sy__model_id(struct sy_arena *a, const char *model_group, const struct sy_ynode *params)
{
    struct sy_buf b;
    sy_buf_init(&b, 64u << 20);
    sy_buf_puts(&b, model_group);
    if (params && params->kind == SY_Y_MAP) {
        for (size_t i = 0; i < params->n; i++) {
            const struct sy_ynode *k = params->pairs[i].key, *v = params->pairs[i].val;
            sy__py_str(&b, k);
            if (v->kind == SY_Y_MAP)
                sy__py_json(&b, v);
            else
                sy__py_str(&b, v);
        }
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    EVP_Digest(b.p ? b.p : "", b.len, md, &mdlen, EVP_sha256(), NULL);
    sy_buf_free(&b);
    char *hex = sy_arena_alloc(a, mdlen * 2 + 1);
    sy_hex_encode(hex, md, mdlen);
    return hex;
}
