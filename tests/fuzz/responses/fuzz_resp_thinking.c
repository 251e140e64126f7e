/* fuzz_resp_thinking.c - libFuzzer harness for responses/thinking.c: the
 * input read as an encrypted_content string, and as the JSON inside one
 * (prefix + base64 of the input, so the parser is reached); blocks read back
 * must write and read again to the same blocks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/buf.h"
#include "responses/resp_impl.h"

static void round_trip(const char *blocks, size_t n, struct sy_arena *a)
{
    struct sy_buf arr, out;
    sy_buf_init(&arr, 64u << 20);
    sy_buf_init(&out, 128u << 20);
    sy_buf_append(&arr, blocks, n);
    struct sy_jw w;
    sy_jw_init(&w, &out);
    sy_jw_obj(&w);
    sy__resp_think_write(&w, &arr);
    sy_jw_end(&w);
    /* {"encrypted_content":"<value>"} */
    const char *v = out.p ? strstr(out.p, ":\"") : NULL;
    if (!v)
        __builtin_trap();
    v += 2;
    size_t vl = out.len - (size_t)(v - out.p) - 2, n2;
    struct sy_buf text;
    sy_buf_init(&text, 64u << 20);
    const char *again = sy__resp_think_read(v, vl, a, &n2, &text);
    if (!again || n2 != n || memcmp(again, blocks, n))
        __builtin_trap();
    sy_buf_free(&text);
    sy_buf_free(&arr);
    sy_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sy_arena a;
    sy_arena_init(&a);
    size_t n;
    const char *b = sy__resp_think_read((const char *)data, size, &a, &n, NULL);
    if (b)
        round_trip(b, n, &a);
    size_t pl = sizeof SY__RESP_THINK_PREFIX - 1;
    char *enc = malloc(pl + (size + 2) / 3 * 4 + 1);
    memcpy(enc, SY__RESP_THINK_PREFIX, pl);
    size_t el = pl + sy__resp_b64_encode(data, size, enc + pl);
    b = sy__resp_think_read(enc, el, &a, &n, NULL);
    if (b)
        round_trip(b, n, &a);
    free(enc);
    sy_arena_free(&a);
    return 0;
}
