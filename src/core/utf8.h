/* utf8.h - UTF-8 validity and encoding, and JSON text that is always valid
 * UTF-8.
 *
 * One copy of the sequence check (RFC 3629: no overlong forms, no UTF-16
 * surrogates, nothing above U+10FFFF), shared by the management API's input
 * gate (admin/validate.c), the store's row-to-JSON writer (store/value.c),
 * the JSON DOM (providers/jdom.c) and the access log; and one copy of the
 * encoder (sy_utf8_put) for every JSON \u unescaper.
 *
 * sy_buf_json_escape (core/buf.h) copies bytes >= 0x80 as they are: the
 * request path escapes text it built or already checked, and stays one pass
 * with no per-byte decoding. The writers here are for text that came from
 * outside and was never checked - rows written before the input gate
 * existed, or by another program into a shared database: each byte that does
 * not start a valid sequence becomes U+FFFD (the replacement a Python or
 * JavaScript decoder with errors="replace" would produce, one per bad byte),
 * so the response is valid JSON whatever the row holds. ASCII runs are
 * skipped a word at a time, so clean text costs little more than the plain
 * escape.
 */
#ifndef SY_UTF8_H
#define SY_UTF8_H

#include <stddef.h>

struct sy_buf;

/* Length of the valid UTF-8 sequence at p[0..n) (1..4), 0 when the bytes
 * there are not one (overlong forms, surrogates and > U+10FFFF included).
 * n must be at least 1. Inline: JSON scanners call it per non-ASCII
 * character. */
static inline size_t sy_utf8_seq(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xbf; /* the allowed range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0; /* overlong */
        else if (c == 0xed)
            hi = 0x9f; /* UTF-16 surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90; /* overlong */
        else if (c == 0xf4)
            hi = 0x8f; /* > U+10FFFF */
    } else {
        return 0;
    }
    if (n < len || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

/* Code point cp (at most U+10FFFF) as UTF-8 at o (room for 4 bytes);
 * returns the length, 1..4. */
static inline size_t sy_utf8_put(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18);
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}
/* The same appended to b. */
int sy_buf_utf8(struct sy_buf *b, unsigned cp);
/* Offset of the first byte of s[0..n) that is not valid UTF-8, or n. */
size_t sy_utf8_check(const char *s, size_t n);

/* sy_buf_json_escape that never emits invalid UTF-8: a byte that does not
 * start a valid sequence is written as \ufffd. */
int sy_utf8_json_escape(struct sy_buf *b, const char *s, size_t n);
/* Append s, already JSON text, as is except that a byte that does not start
 * a valid sequence becomes the six characters \ufffd (such bytes can only
 * stand inside a string of otherwise valid JSON, where that is the escape of
 * U+FFFD). */
int sy_utf8_json_raw(struct sy_buf *b, const char *s, size_t n);

#endif
