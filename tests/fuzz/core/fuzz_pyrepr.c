/* fuzz_pyrepr.c - core/pyrepr on arbitrary bytes.
 *
 * The first 8 bytes, as a double: repr(float) reads back (strtod) to the same
 * value and sign, "nan" for a NaN. The whole input, as text (any bytes,
 * invalid UTF-8 included): repr(str) is valid UTF-8, quoted, with no raw
 * control character; json.dumps(str) is printable ASCII that json-c parses
 * back to a string, equal to the input when the input is valid UTF-8.
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
    if (sy_utf8_check(s, n) == n &&
        ((size_t)json_object_get_string_len(o) != n || memcmp(json_object_get_string(o), s, n) != 0))
        abort();
    json_object_put(o);
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
