/* buf.c - capped growable buffers; see buf.h for the contract. */
#include "core/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "core/hex.h"

void sy_buf_init(struct sy_buf *b, size_t cap)
{
    b->p = NULL;
    b->len = b->size = 0;
    b->cap = cap;
    b->cap0 = 0;
    b->err = 0;
}

void sy_buf_free(struct sy_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->size = 0;
    if (b->err)
        sy__buf_clear_err(b);
}

void sy__buf_clear_err(struct sy_buf *b)
{
    b->cap = b->cap0;
    b->cap0 = 0;
    b->err = 0;
}

/* Remember the first refusal. A cap of 0 keeps every later non-empty append
 * off the inline fast path (whatever len becomes), so it lands here. */
static int fail(struct sy_buf *b, int rc)
{
    b->err = rc;
    b->cap0 = b->cap;
    b->cap = 0;
    return rc;
}

int sy_buf_reserve(struct sy_buf *b, size_t n)
{
    if (b->err)
        return b->err;
    if (n > b->cap || b->len > b->cap - n)
        return fail(b, SY_ENOSPC);
    size_t need = b->len + n + 1;
    if (need <= b->size)
        return 0;
    size_t ns = b->size ? b->size : 256;
    while (ns < need)
        ns *= 2;
    if (ns > b->cap + 1)
        ns = b->cap + 1;
    char *np = realloc(b->p, ns);
    if (!np)
        return fail(b, SY_ENOMEM);
    b->p = np;
    b->size = ns;
    return 0;
}

int sy__buf_append_slow(struct sy_buf *b, const void *p, size_t n)
{
    int rc = sy_buf_reserve(b, n);
    if (rc)
        return rc;
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}

int sy_buf_vprintf(struct sy_buf *b, const char *fmt, va_list ap)
{
    if (b->err)
        return b->err;
    va_list ap2;
    va_copy(ap2, ap);
    char tmp[256];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return SY_EINVAL;
    if ((size_t)n < sizeof tmp)
        return sy_buf_append(b, tmp, (size_t)n);
    int rc = sy_buf_reserve(b, (size_t)n);
    if (rc)
        return rc;
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int sy_buf_printf(struct sy_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = sy_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

int sy_buf_json_escape(struct sy_buf *b, const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *rep = NULL;
        char u[6];
        size_t rn = 2;
        switch (c) {
        case '"': rep = "\\\""; break;
        case '\\': rep = "\\\\"; break;
        case '\n': rep = "\\n"; break;
        case '\r': rep = "\\r"; break;
        case '\t': rep = "\\t"; break;
        case '\b': rep = "\\b"; break;
        case '\f': rep = "\\f"; break;
        default:
            if (c < 0x20) {
                u[0] = '\\';
                u[1] = 'u';
                u[2] = '0';
                u[3] = '0';
                u[4] = sy_hex_lc[c >> 4];
                u[5] = sy_hex_lc[c & 15];
                rep = u;
                rn = 6;
            }
        }
        if (rep) {
            int rc = sy_buf_append(b, s + start, i - start);
            if (!rc)
                rc = sy_buf_append(b, rep, rn);
            if (rc)
                return rc;
            start = i + 1;
        }
    }
    return sy_buf_append(b, s + start, n - start);
}

int sy_buf_append_buf(struct sy_buf *b, const struct sy_buf *src)
{
    if (src->err && !b->err)
        return fail(b, src->err);
    if (!src->len) /* an empty src may have no bytes at all (p NULL) */
        return b->err;
    return sy_buf_append(b, src->p, src->len);
}

int sy_buf_u64(struct sy_buf *b, uint64_t v)
{
    /* two digits per division (headers and JSON numbers on every response) */
    static const char d2[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                             "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                             "8081828384858687888990919293949596979899";
    char tmp[24];
    int i = sizeof tmp;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        tmp[--i] = d2[2 * r + 1];
        tmp[--i] = d2[2 * r];
    }
    if (v >= 10) {
        tmp[--i] = d2[2 * v + 1];
        tmp[--i] = d2[2 * v];
    } else {
        tmp[--i] = (char)('0' + v);
    }
    return sy_buf_append(b, tmp + i, sizeof tmp - (size_t)i);
}

void sy_buf_consume(struct sy_buf *b, size_t n)
{
    if (n >= b->len) {
        sy_buf_reset(b);
        return;
    }
    memmove(b->p, b->p + n, b->len - n);
    b->len -= n;
    b->p[b->len] = 0;
}
