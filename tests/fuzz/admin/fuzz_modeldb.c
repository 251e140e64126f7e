/* fuzz_modeldb.c - libFuzzer harness for the LiteLLM_ProxyModelTable row
 * parser (admin/modeldb.c): sy_modeldb_entry on a row's litellm_params and
 * model_info as stored, then the entry through the config loader
 * (sy_modeldb_check) as the models registry does.
 *
 * Input: litellm_params text, a NUL byte, model_info text (absent: NULL).
 * Properties checked:
 *   - an entry made is valid JSON whose model_info.id is the row's id;
 *   - the loader's check answers 0 or -1 with a reason, never crashes, leaks
 *     or loops;
 *   - the params encrypted (as the routes store them) make an entry again.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "admin/modeldb.h"
#include "core/buf.h"

#define SALT "sk-fuzz-salt"

static char *entry_of(const char *params, const char *info)
{
    struct sy_buf b;
    char err[256];
    sy_buf_init(&b, 8u << 20);
    if (sy_modeldb_entry("fuzz-id", "fuzz-model", params, info, SALT, &b, err, sizeof err) != 0 || sy_buf_failed(&b)) {
        sy_buf_free(&b);
        return NULL;
    }
    char *out = strndup(b.p ? b.p : "", b.len);
    sy_buf_free(&b);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    char *buf = malloc(size + 2);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = buf[size + 1] = 0;
    const char *params = buf;
    size_t pl = strlen(params);
    const char *info = pl < size ? buf + pl + 1 : NULL;
    char *e = entry_of(params, info);
    if (e) {
        json_object *o = json_tokener_parse(e), *mi, *id;
        if (!o || !json_object_object_get_ex(o, "model_info", &mi) || !json_object_object_get_ex(mi, "id", &id) ||
            strcmp(json_object_get_string(id), "fuzz-id") != 0)
            abort();
        json_object_put(o);
        char err[256];
        (void)sy_modeldb_check(e, strlen(e), NULL, err, sizeof err);
        char *enc = sy_modeldb_encrypt_params(params, SALT);
        if (enc) {
            char *e2 = entry_of(enc, info);
            json_object *o2 = e2 ? json_tokener_parse(e2) : NULL;
            if (!o2)
                abort();
            json_object_put(o2);
            free(e2);
            free(enc);
        }
        free(e);
    }
    free(buf);
    return 0;
}
