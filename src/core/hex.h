/* hex.h - hexadecimal digits, one copy.
 *
 * Digests printed as text (SHA-256 of a virtual key, of a cache key, of a
 * deployment's parameters; SHA-1 of a Redis script), percent-encoding
 * (SigV4's canonical URI, form values), \uXXXX escapes, HTTP chunk sizes and
 * generated ids all spell bytes in hex; and JSON, YAML, query strings and
 * percent-encoded values read it back. These are the helpers they share.
 *
 *   sy_hex_lc / sy_hex_uc  the 16 digits, lower and upper case
 *   sy_hex_val(c)          the value of one digit (either case), -1 if none
 *   sy_hex4(p, &v)         the 4 digits of a \uXXXX escape, 0 or -1
 *   sy_hex_encode(o, p, n) n bytes as 2n lowercase digits and a NUL
 *   sy_buf_hex(b, p, n)    the same appended to a buffer
 *   sy_hex_decode(o, s, n) 2n digits back to n bytes, -1 on a non-digit
 *   sy_hex_u64(o, v, k)    the low k digits of v, most significant first
 *   sy_hex_uint_rev(e, v)  v in as few digits as it needs, written to end
 *                          before e (for numbers built right to left)
 *
 * The one-digit helpers are inline: JSON scanners on the request path call
 * them per escape.
 */
#ifndef SY_HEX_H
#define SY_HEX_H

#include <stddef.h>
#include <stdint.h>

struct sy_buf;

extern const char sy_hex_lc[16]; /* "0123456789abcdef" */
extern const char sy_hex_uc[16]; /* "0123456789ABCDEF" */

static inline int sy_hex_val(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The four digits at p (which must hold four bytes) as *v; -1 if one is not
 * a digit (*v is then unspecified). */
static inline int sy_hex4(const char *p, unsigned *v)
{
    unsigned r = 0;
    for (int k = 0; k < 4; k++) {
        int d = sy_hex_val((unsigned char)p[k]);
        if (d < 0)
            return -1;
        r = r << 4 | (unsigned)d;
    }
    *v = r;
    return 0;
}

/* out must hold 2n + 1 bytes; returns out + 2n (the NUL). */
char *sy_hex_encode(char *out, const void *in, size_t n);
int sy_buf_hex(struct sy_buf *b, const void *in, size_t n);
/* in holds 2n digits (either case); out gets n bytes. 0, or -1 at the first
 * non-digit. */
int sy_hex_decode(void *out, const char *in, size_t n);
void sy_hex_u64(char *out, uint64_t v, int digits);
char *sy_hex_uint_rev(char *end, uint64_t v);

#endif
