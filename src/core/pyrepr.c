/* pyrepr.c - Python's repr(float), repr(str) and json.dumps(str); see pyrepr.h.
 *
 * Float: for each precision p = 1..17, "%.*e" gives the correctly rounded
 * p-digit decimal; the first one that strtod reads back to the same double
 * is the shortest. Near a power of two the rounding interval is lopsided and
 * the nearest p-digit decimal may miss it while its neighbour on the wide
 * side hits it, so the neighbours (mantissa +-1) are tried too - that is the
 * case where CPython's dtoa (mode 0) also picks a non-nearest string.
 *
 * Strings: runs of plain printable ASCII are appended in one call (prompts
 * and messages are mostly such runs); everything else is decoded one code
 * point at a time with the invalid-byte rule of pyrepr.h.
 */
#include "core/hex.h"
#include "core/pyrepr.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/pyprintable.h"
#include "core/utf8.h"

/* ---- float ---------------------------------------------------------------- */

/* "%.*e" text -> integer mantissa m and exponent x (value = m * 10^x). */
static void parse_e(const char *t, int p, uint64_t *m, int *x)
{
    uint64_t v = 0;
    for (; *t && *t != 'e'; t++)
        if (*t >= '0' && *t <= '9')
            v = v * 10 + (uint64_t)(*t - '0');
    *m = v;
    *x = (*t == 'e' ? (int)strtol(t + 1, NULL, 10) : 0) - (p - 1);
}

static int reads_back(uint64_t m, int x, double a)
{
    char t[48];
    snprintf(t, sizeof t, "%llue%d", (unsigned long long)m, x);
    return strtod(t, NULL) == a;
}

/* Shortest round-trip digits of a (> 0, finite): dig (no trailing zeros) and
 * decpt, the value being 0.DIG x 10^decpt. Returns the digit count.
 *
 * The search starts at 15 digits, not 1: when some k <= 15 digit decimal
 * reads back as a, it lies within half an ulp of a (< 1.2e-16 relative), and
 * 15-digit decimals are at least 1e-15 relative apart, so the 15-digit
 * rounding of a is that decimal padded with zeros, which the loop below
 * strips. A neighbour (m +- 1) can read back where the rounding does not
 * only at a power of two (the ulp below is half the one above; elsewhere the
 * interval that reads back is symmetric and the rounding is the nearest), and
 * then no shorter decimal reads back either: the neighbours are tried only
 * there. Three tries at most, where counting up
 * from one digit took up to 17 (a timestamp's 16 digits cost 50 conversions:
 * the logging sinks print several per record). Normal numbers only: a
 * subnormal carries fewer bits. */
static int shortest(double a, char dig[24], int *decpt)
{
    uint64_t m = 0;
    int x = 0;
    int e2;
    int pow2 = frexp(a, &e2) == 0.5; /* the ulp below a is half the one above */
    /* a subnormal has fewer bits, so fewer digits may do: the whole search */
    for (int p = a < DBL_MIN ? 1 : 15; p <= 17; p++) {
        char t[48];
        snprintf(t, sizeof t, "%.*e", p - 1, a);
        parse_e(t, p, &m, &x);
        if (p == 17 || strtod(t, NULL) == a) /* 17 digits always read back */
            break;
        if (!pow2) /* the rounding is the nearest decimal: when it misses, its neighbours do too */
            continue;
        if (reads_back(m + 1, x, a)) {
            m++;
            break;
        }
        if (m > 1 && reads_back(m - 1, x, a)) {
            m--;
            break;
        }
    }
    while (m % 10 == 0 && m) {
        m /= 10;
        x++;
    }
    char t[24];
    int nd = snprintf(t, sizeof t, "%llu", (unsigned long long)m);
    memcpy(dig, t, (size_t)nd + 1);
    *decpt = nd + x;
    return nd;
}

int sy_py_float_repr(struct sy_buf *b, double d)
{
    if (isnan(d))
        return SY_BUF_LIT(b, "nan");
    if (isinf(d))
        return d < 0 ? SY_BUF_LIT(b, "-inf") : SY_BUF_LIT(b, "inf");
    if (d == 0)
        return signbit(d) ? SY_BUF_LIT(b, "-0.0") : SY_BUF_LIT(b, "0.0");
    if (fabs(d) < 1e16 && d == (double)(int64_t)d) { /* integral: "600.0" without the digit search */
        int rc = d < 0 ? SY_BUF_LIT(b, "-") : 0;
        rc |= sy_buf_u64(b, (uint64_t)(d < 0 ? -(int64_t)d : (int64_t)d));
        return rc | SY_BUF_LIT(b, ".0");
    }
    char dig[24];
    int decpt;
    size_t nd = (size_t)shortest(fabs(d), dig, &decpt);
    int rc = d < 0 ? SY_BUF_LIT(b, "-") : 0;
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            rc |= SY_BUF_LIT(b, "0.");
            for (int i = 0; i < -decpt; i++)
                rc |= SY_BUF_LIT(b, "0");
            rc |= sy_buf_append(b, dig, nd);
        } else if ((size_t)decpt >= nd) {
            rc |= sy_buf_append(b, dig, nd);
            for (size_t i = nd; i < (size_t)decpt; i++)
                rc |= SY_BUF_LIT(b, "0");
            rc |= SY_BUF_LIT(b, ".0");
        } else {
            rc |= sy_buf_append(b, dig, (size_t)decpt);
            rc |= SY_BUF_LIT(b, ".");
            rc |= sy_buf_append(b, dig + decpt, nd - (size_t)decpt);
        }
        return rc;
    }
    int e = decpt - 1;
    rc |= sy_buf_append(b, dig, 1);
    if (nd > 1) {
        rc |= SY_BUF_LIT(b, ".");
        rc |= sy_buf_append(b, dig + 1, nd - 1);
    }
    return rc | sy_buf_printf(b, "e%c%02d", e < 0 ? '-' : '+', abs(e));
}

size_t sy_py_float_str(char out[SY_PY_FLOAT_MAX], double d)
{
    /* a buffer over out that can never grow: the longest repr
     * ("-2.2250738585072014e-308") is 24 bytes */
    struct sy_buf b = {.p = out, .size = SY_PY_FLOAT_MAX, .cap = SY_PY_FLOAT_MAX - 1};
    out[0] = 0;
    sy_py_float_repr(&b, d);
    return b.len;
}

/* ---- UTF-8 as CPython's decode(errors="replace") reads it ----------------- */

unsigned sy_py_utf8_next(const unsigned char *s, size_t n, size_t *i)
{
    unsigned c = s[*i];
    if (c < 0x80) {
        (*i)++;
        return c;
    }
    int need;
    unsigned lo = 0x80, hi = 0xbf, cp;
    if (c >= 0xc2 && c <= 0xdf)
        need = 1, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        need = 2, cp = c & 0x0f, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4)
        need = 3, cp = c & 0x07, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else {
        (*i)++;
        return 0xfffd;
    }
    size_t k = *i + 1;
    for (int j = 0; j < need; j++, k++) {
        /* the second byte has the lead's own range, the later ones 80..BF */
        unsigned l = j == 0 ? lo : 0x80, h = j == 0 ? hi : 0xbf;
        if (k >= n || s[k] < l || s[k] > h) {
            *i = k; /* the maximal subpart: lead plus the continuations that fit */
            return 0xfffd;
        }
        cp = (cp << 6) | (s[k] & 0x3fu);
    }
    *i = k;
    return cp;
}

int sy_py_isprintable(unsigned cp)
{
    if (cp < 0x100)
        return !(cp < 0x20 || (cp >= 0x7f && cp <= 0xa0) || cp == 0xad);
    size_t lo = 0, hi = sizeof sy__py_unprintable / sizeof sy__py_unprintable[0];
    while (lo < hi) { /* first range whose end is >= cp */
        size_t mid = (lo + hi) / 2;
        if (sy__py_unprintable[mid][1] < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return !(lo < sizeof sy__py_unprintable / sizeof sy__py_unprintable[0] && sy__py_unprintable[lo][0] <= cp);
}

/* ---- repr(str) ------------------------------------------------------------- */

int sy_py_str_repr(struct sy_buf *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    char q = (memchr(s, '\'', n) && !memchr(s, '"', n)) ? '"' : '\'';
    int rc = sy_buf_append(b, &q, 1);
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        while (run < n && u[run] >= 0x20 && u[run] < 0x7f && u[run] != '\\' && u[run] != (unsigned char)q)
            run++;
        if (run > i) {
            rc |= sy_buf_append(b, s + i, run - i);
            i = run;
            continue;
        }
        unsigned cp = sy_py_utf8_next(u, n, &i);
        if (cp == '\\' || cp == (unsigned char)q) {
            char e[2] = {'\\', (char)cp};
            rc |= sy_buf_append(b, e, 2);
        } else if (cp == '\n')
            rc |= SY_BUF_LIT(b, "\\n");
        else if (cp == '\r')
            rc |= SY_BUF_LIT(b, "\\r");
        else if (cp == '\t')
            rc |= SY_BUF_LIT(b, "\\t");
        else if (sy_py_isprintable(cp))
            rc |= sy_buf_utf8(b, cp);
        else if (cp < 0x100)
            rc |= sy_buf_printf(b, "\\x%02x", cp);
        else if (cp < 0x10000)
            rc |= sy_buf_printf(b, "\\u%04x", cp);
        else
            rc |= sy_buf_printf(b, "\\U%08x", cp);
    }
    return rc | sy_buf_append(b, &q, 1);
}

/* ---- json.dumps(str) ------------------------------------------------------- */

static int put_u(struct sy_buf *b, unsigned v)
{
    char e[6] = {'\\', 'u', 0, 0, 0, 0};
    sy_hex_u64(e + 2, v, 4);
    return sy_buf_append(b, e, 6);
}

int sy_py_json_escape(struct sy_buf *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    int rc = 0;
    while (i < n) {
        size_t run = i;
        while (run < n && u[run] >= 0x20 && u[run] <= '~' && u[run] != '"' && u[run] != '\\')
            run++;
        if (run > i) {
            rc |= sy_buf_append(b, s + i, run - i);
            i = run;
            continue;
        }
        unsigned cp = sy_py_utf8_next(u, n, &i);
        const char *rep = cp == '"'    ? "\\\""
                          : cp == '\\' ? "\\\\"
                          : cp == '\n' ? "\\n"
                          : cp == '\r' ? "\\r"
                          : cp == '\t' ? "\\t"
                          : cp == '\b' ? "\\b"
                          : cp == '\f' ? "\\f"
                                       : NULL;
        if (rep)
            rc |= sy_buf_append(b, rep, 2);
        else if (cp >= 0x10000)
            rc |= put_u(b, 0xd800 + ((cp - 0x10000) >> 10)) | put_u(b, 0xdc00 + ((cp - 0x10000) & 0x3ff));
        else
            rc |= put_u(b, cp);
    }
    return rc;
}

int sy_py_json_dumps_str(struct sy_buf *b, const char *s, size_t n)
{
    int rc = SY_BUF_LIT(b, "\"");
    rc |= sy_py_json_escape(b, s, n);
    return rc | SY_BUF_LIT(b, "\"");
}
