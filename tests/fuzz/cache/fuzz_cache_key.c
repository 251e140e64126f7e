/* fuzz_cache_key.c - sy_cache_key over arbitrary bytes: never crashes, the
 * key is 64 hex digits (after "<ns>:") whenever it succeeds. */
#include <stdint.h>
#include <string.h>

#include "cache/cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char out[SY_CACHE_KEY_MAX];
    if (sy_cache_key((const char *)data, size, "group", size & 1 ? "ns" : NULL, out) == 0 &&
        strlen(out) != 64 + (size & 1 ? 3 : 0))
        __builtin_trap();
    return 0;
}
