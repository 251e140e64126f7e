/* hex.c - hexadecimal digits; see hex.h. */
#include "core/hex.h"

#include "core/buf.h"

const char sy_hex_lc[16] = "0123456789abcdef";
const char sy_hex_uc[16] = "0123456789ABCDEF";

char *sy_hex_encode(char *out, const void *in, size_t n)
{
    const unsigned char *p = in;
    for (size_t i = 0; i < n; i++) {
        *out++ = sy_hex_lc[p[i] >> 4];
        *out++ = sy_hex_lc[p[i] & 15];
    }
    *out = 0;
    return out;
}

int sy_buf_hex(struct sy_buf *b, const void *in, size_t n)
{
    const unsigned char *p = in;
    char t[2 * 64 + 1];
    int rc = 0;
    while (n && !rc) {
        size_t k = n < 64 ? n : 64;
        sy_hex_encode(t, p, k);
        rc = sy_buf_append(b, t, 2 * k);
        p += k;
        n -= k;
    }
    return rc;
}

int sy_hex_decode(void *out, const char *in, size_t n)
{
    unsigned char *o = out;
    for (size_t i = 0; i < n; i++) {
        int hi = sy_hex_val((unsigned char)in[2 * i]), lo = sy_hex_val((unsigned char)in[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        o[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

void sy_hex_u64(char *out, uint64_t v, int digits)
{
    for (int i = digits - 1; i >= 0; i--, v >>= 4)
        out[i] = sy_hex_lc[v & 15];
}

char *sy_hex_uint_rev(char *end, uint64_t v)
{
    do {
        *--end = sy_hex_lc[v & 15];
        v >>= 4;
    } while (v);
    return end;
}
