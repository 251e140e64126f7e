/* fuzz_pyrepr.c - core/pyrepr on arbitrary bytes.
 *
 * The first 8 bytes, as a double: repr(float) reads back (strtod) to the same
 * value and sign, "nan" for a NaN. The whole input, as text (any bytes,
 * invalid UTF-8 included): repr(str) is valid UTF-8, quoted, with no raw
 * control character; json.dumps(str) is printable ASCII that json-c parses
 * back to a string, and that decodes (by the small decoder below, not json-c:
 * json-c 0.16 turns some valid surrogate pairs into U+FFFD) to the input when
 * the input is valid UTF-8.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/pyrepr.h"
#include "core/utf8.h"

static void check_float(const uint8_t *data)
{
    double d;
    memcpy(&d, data, sizeof d);
    struct sy_buf b;
    sy_buf_init(&b, 64);
    if (sy_py_float_repr(&b, d) != 0 || !b.p)
        abort();
    if (isnan(d)) {
        if (strcmp(b.p, "nan") != 0)
            abort();
    } else {
        char *end;
        double back = strtod(b.p, &end);
        if (*end || back != d || signbit(back) != signbit(d))
            abort();
        /* Python always marks a float: a point, an exponent or inf */
        if (isfinite(d) && !strpbrk(b.p, ".e"))
            abort();
    }
    sy_buf_free(&b);
}

static void check_repr(const char *s, size_t n)
{
    struct sy_buf b;
    sy_buf_init(&b, 16 + 10 * n);
    if (sy_py_str_repr(&b, s, n) != 0 || !b.p || b.len < 2)
        abort();
    if (sy_utf8_check(b.p, b.len) != b.len)
        abort();
    if ((b.p[0] != '\'' && b.p[0] != '"') || b.p[b.len - 1] != b.p[0])
        abort();
    for (size_t i = 0; i < b.len; i++)
        if ((unsigned char)b.p[i] < 0x20 || b.p[i] == 0x7f)
            abort();
    sy_buf_free(&b);
}

static int hex4(const char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (d == 16)
            return -1;
        *v = *v << 4 | d;
    }
    return 0;
}

/* decode a JSON string literal (the whole of p[0..n)) to UTF-8; -1 when it is
 * not one (an unpaired surrogate included) */
static int json_unquote(const char *p, size_t n, struct sy_buf *out)
{
    if (n < 2 || p[0] != '"' || p[n - 1] != '"')
        return -1;
    for (size_t i = 1; i < n - 1; i++) {
        char c = p[i];
        if (c != '\\') {
            if (c == '"')
                return -1;
            sy_buf_append(out, &c, 1);
            continue;
        }
        if (++i >= n - 1)
            return -1;
        char e = p[i], r;
        switch (e) {
        case '"': r = '"'; break;
        case '\\': r = '\\'; break;
        case '/': r = '/'; break;
        case 'b': r = '\b'; break;
        case 'f': r = '\f'; break;
        case 'n': r = '\n'; break;
        case 'r': r = '\r'; break;
        case 't': r = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (i + 4 > n - 2 || hex4(p + i + 1, &cp) != 0)
                return -1;
            i += 4;
            if (cp >= 0xdc00 && cp <= 0xdfff)
                return -1;
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (i + 6 > n - 2 || p[i + 1] != '\\' || p[i + 2] != 'u' || hex4(p + i + 3, &lo) != 0 || lo < 0xdc00 ||
                    lo > 0xdfff)
                    return -1;
                i += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            char u[4];
            size_t k;
            if (cp < 0x80) {
                u[0] = (char)cp, k = 1;
            } else if (cp < 0x800) {
                u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f)), k = 2;
            } else if (cp < 0x10000) {
                u[0] = (char)(0xe0 | cp >> 12), u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
                u[2] = (char)(0x80 | (cp & 0x3f)), k = 3;
            } else {
                u[0] = (char)(0xf0 | cp >> 18), u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
                u[2] = (char)(0x80 | (cp >> 6 & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), k = 4;
            }
            sy_buf_append(out, u, k);
            continue;
        }
        default: return -1;
        }
        sy_buf_append(out, &r, 1);
    }
    return 0;
}

static void check_json(const char *s, size_t n)
{
    struct sy_buf b;
    sy_buf_init(&b, 16 + 12 * n);
    if (sy_py_json_dumps_str(&b, s, n) != 0 || !b.p)
        abort();
    for (size_t i = 0; i < b.len; i++)
        if ((unsigned char)b.p[i] < 0x20 || (unsigned char)b.p[i] > 0x7e)
            abort();
    struct json_object *o = json_tokener_parse(b.p);
    if (!o || !json_object_is_type(o, json_type_string))
        abort();
    json_object_put(o);
    struct sy_buf d;
    sy_buf_init(&d, n + 1);
    if (json_unquote(b.p, b.len, &d) != 0)
        abort();
    if (sy_utf8_check(s, n) == n && (d.len != n || (n && memcmp(d.p, s, n) != 0)))
        abort();
    sy_buf_free(&d);
    sy_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 8)
        check_float(data);
    check_repr((const char *)data, size);
    check_json((const char *)data, size);
    return 0;
}
