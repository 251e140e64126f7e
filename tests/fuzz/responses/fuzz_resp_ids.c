/* fuzz_resp_ids.c - libFuzzer harness for responses/ids.c: decode any id,
 * encode what came out and decode it again (must round trip), and rewrite
 * any payload (the output must differ from the input only in rewritten ids). */
#include <stdint.h>
#include <string.h>

#include "core/buf.h"
#include "responses/responses.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sy_resp_id d;
    if (sy_resp_id_decode((const char *)data, size, &d) == 0) {
        char enc[2048];
        if (sy_resp_id_encode(d.provider, d.model_id, d.inner, strlen(d.inner), enc, sizeof enc) == 0) {
            struct sy_resp_id d2;
            if (sy_resp_id_decode(enc, strlen(enc), &d2) != 0 || !d2.encoded || strcmp(d2.inner, d.inner) != 0)
                __builtin_trap();
        }
    }
    struct sy_buf out;
    sy_buf_init(&out, 64u << 20);
    int n = sy_resp_ids_rewrite((const char *)data, size, "openai", "m1", &out);
    if (n == 0 && (out.len != size || (size && memcmp(out.p, data, size) != 0)))
        __builtin_trap();
    sy_buf_free(&out);
    return 0;
}
