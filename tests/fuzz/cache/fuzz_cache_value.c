/* fuzz_cache_value.c - decode arbitrary bytes as a stored value; encode the
 * input as a response and decode it back to the same bytes (for valid UTF-8). */
#include <stdint.h>
#include <string.h>

#include "cache/cache.h"
#include "core/buf.h"

static int valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (!len || i + len > n)
            return 0;
        unsigned long cp = len == 1 ? c : c & (0x7f >> len);
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp < 0xe000))
            return 0;
        i += len;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sy_buf out, enc;
    double ts;
    sy_buf_init(&out, 1 << 24);
    sy_buf_init(&enc, 1 << 24);
    sy_cache_value_decode((const char *)data, size, &out, &ts);
    sy_buf_reset(&out);
    if (sy_cache_value_encode((const char *)data, size, 1718000000.5, &enc) == 0) {
        if (sy_cache_value_decode(enc.p, enc.len, &out, &ts) != 0 || ts != 1718000000.5)
            __builtin_trap();
        if (valid_utf8(data, size) && (out.len != size || memcmp(out.p, data, size)))
            __builtin_trap();
    }
    sy_buf_free(&out);
    sy_buf_free(&enc);
    return 0;
}
