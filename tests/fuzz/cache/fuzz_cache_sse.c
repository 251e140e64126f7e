/* fuzz_cache_sse.c - assemble arbitrary bytes as an SSE stream; when that
 * succeeds, replay the result and assemble it again (must give the same
 * response). Also replay the input itself as a JSON response. */
#include <stdint.h>
#include <string.h>

#include "cache/cache.h"
#include "core/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sy_buf a, r, a2;
    sy_buf_init(&a, 1 << 24);
    sy_buf_init(&r, 1 << 24);
    sy_buf_init(&a2, 1 << 24);
    if (sy_cache_sse_assemble((const char *)data, size, &a) == 0) {
        if (sy_cache_sse_replay(a.p, a.len, 1, &r) != 0)
            __builtin_trap();
        if (sy_cache_sse_assemble(r.p, r.len, &a2) != 0 || a2.len != a.len || memcmp(a.p, a2.p, a.len))
            __builtin_trap();
    }
    sy_buf_reset(&r);
    sy_cache_sse_replay((const char *)data, size, size & 1, &r);
    sy_buf_free(&a);
    sy_buf_free(&r);
    sy_buf_free(&a2);
    return 0;
}
