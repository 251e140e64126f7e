/* fuzz_cache_ctl.c - sy_cache_ctl_parse: the input split into a body
 * "cache" value and a Cache-Control header at the first NUL. */
#include <stdint.h>
#include <string.h>

#include "cache/cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    const char *nul = memchr(s, 0, size);
    size_t blen = nul ? (size_t)(nul - s) : size;
    const char *cc = nul ? nul + 1 : NULL;
    size_t cclen = nul ? size - blen - 1 : 0;
    struct sy_cache_ctl c;
    char err[128];
    if (sy_cache_ctl_parse(s, blen, cc, cclen, &c, err, sizeof err) == 0 && strlen(c.ns) > 300)
        __builtin_trap();
    return 0;
}
