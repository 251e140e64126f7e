/* fuzz_tok_bpe.c - libFuzzer: any byte string encodes without crashing in
 * both encodings, decode(encode(x)) == x byte for byte, and count == number
 * of ids. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "tokenizer/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (sy_tok_init() != 0)
        abort();
    for (int e = 0; e < SY_TOK__COUNT; e++) {
        const struct sy_tok *t = sy_tok_get((enum sy_tok_encoding)e);
        uint32_t *ids = NULL;
        size_t n = 0, cap = 0;
        if (sy_tok_encode(t, (const char *)data, size, &ids, &n, &cap) != 0)
            abort();
        if (sy_tok_count(t, (const char *)data, size) != n)
            abort();
        struct sy_buf b;
        sy_buf_init(&b, size + 1);
        if (sy_tok_decode(t, ids, n, &b) != 0 || b.len != size || (size && memcmp(b.p, data, size) != 0))
            abort();
        sy_buf_free(&b);
        free(ids);
    }
    return 0;
}
