/* utf8.c - UTF-8 validity and replacement (utf8.h). */
#include "core/utf8.h"

#include <stdint.h>
#include <string.h>

#include "core/buf.h"

/* Offset of the first byte >= 0x80 in p[i..n), or n: eight bytes at a time. */
static size_t skip_ascii(const unsigned char *p, size_t i, size_t n)
{
    while (n - i >= 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w & 0x8080808080808080ull)
            break;
        i += 8;
    }
    while (i < n && p[i] < 0x80)
        i++;
    return i;
}

size_t sy_utf8_check(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while ((i = skip_ascii(p, i, n)) < n) {
        size_t l = sy_utf8_seq(p + i, n - i);
        if (!l)
            return i;
        i += l;
    }
    return n;
}

/* The valid runs of s go through emit (escaped or copied), each bad byte
 * becomes \ufffd. */
static int replace_bad(struct sy_buf *b, const char *s, size_t n, int (*emit)(struct sy_buf *, const char *, size_t))
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, start = 0;
    while ((i = skip_ascii(p, i, n)) < n) {
        size_t l = sy_utf8_seq(p + i, n - i);
        if (l) {
            i += l;
            continue;
        }
        int rc = emit(b, s + start, i - start); /* the valid run before */
        if (!rc)
            rc = SY_BUF_LIT(b, "\\ufffd");
        if (rc)
            return rc;
        start = ++i;
    }
    return emit(b, s + start, n - start);
}

static int append(struct sy_buf *b, const char *s, size_t n)
{
    return sy_buf_append(b, s, n);
}

int sy_utf8_json_escape(struct sy_buf *b, const char *s, size_t n)
{
    return replace_bad(b, s, n, sy_buf_json_escape);
}

int sy_utf8_json_raw(struct sy_buf *b, const char *s, size_t n)
{
    return replace_bad(b, s, n, append);
}

int sy_buf_utf8(struct sy_buf *b, unsigned cp)
{
    char u[4];
    return sy_buf_append(b, u, sy_utf8_put(u, cp));
}
