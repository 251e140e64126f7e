/* test_pyrepr.c - core/pyrepr against the outputs of CPython itself.
 *
 * pyrepr_cases.txt is written by pyrepr_cases.py (python3, seeded): repr of
 * named, boundary, random and subnormal doubles; repr and json.dumps of
 * strings with quotes, escapes, C0/C1 controls, U+2028, astral characters,
 * a sweep of the code space, and invalid UTF-8 (read as CPython's
 * decode("utf-8", errors="replace")). Every line is checked; the test fails
 * on the first mismatch with the case printed. A few cases are also spelled
 * out below so the contract reads in plain text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/pyrepr.h"

#ifndef PYREPR_CASES
#error "PYREPR_CASES (path of pyrepr_cases.txt) must be defined by the build"
#endif

static size_t unhex(const char *h, unsigned char *out, size_t cap)
{
    size_t n = 0;
    if (h[0] == '-' && h[1] == 0)
        return 0;
    for (; h[0] && h[1] && n < cap; h += 2) {
        char t[3] = {h[0], h[1], 0};
        out[n++] = (unsigned char)strtoul(t, NULL, 16);
    }
    return n;
}

static char *float_text(double d)
{
    static char t[64];
    struct sy_buf b;
    sy_buf_init(&b, 64);
    assert_int_equal(sy_py_float_repr(&b, d), 0);
    snprintf(t, sizeof t, "%s", b.p);
    sy_buf_free(&b);
    return t;
}

static void float_named(void **st)
{
    (void)st;
    assert_string_equal(float_text(1000.0), "1000.0");
    assert_string_equal(float_text(1e16), "1e+16");
    assert_string_equal(float_text(1e15), "1000000000000000.0");
    assert_string_equal(float_text(0.1), "0.1");
    assert_string_equal(float_text(-0.0), "-0.0");
    assert_string_equal(float_text(INFINITY), "inf");
    assert_string_equal(float_text(-INFINITY), "-inf");
    assert_string_equal(float_text(NAN), "nan");
    assert_string_equal(float_text(1e-5), "1e-05");
    assert_string_equal(float_text(1e-4), "0.0001");
    assert_string_equal(float_text(123456789012345.0), "123456789012345.0");
    assert_string_equal(float_text(1.2345678901234567e16), "1.2345678901234568e+16"); /* CPython rounds so too */
    assert_string_equal(float_text(5e-324), "5e-324");
}

static void str_named(void **st)
{
    (void)st;
    struct sy_buf b;
    sy_buf_init(&b, 256);
    sy_py_str_repr(&b, "it's \"x\"\n\x01\xc2\xa0\xe2\x80\xa8\xc3\xa9\xf0\x9f\x98\x80\xff", 22);
    assert_string_equal(b.p, "'it\\'s \"x\"\\n\\x01\\xa0\\u2028\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbd'");
    b.len = 0;
    sy_py_json_dumps_str(&b, "\"\x7f\xc3\xa9\xf0\x9f\x98\x80\xe2\x82", 10);
    assert_string_equal(b.p, "\"\\\"\\u007f\\u00e9\\ud83d\\ude00\\ufffd\"");
    sy_buf_free(&b);
}

static void cpython_cases(void **st)
{
    (void)st;
    FILE *f = fopen(PYREPR_CASES, "r");
    assert_non_null(f);
    static char line[1 << 16];
    static unsigned char in[1 << 15], want[1 << 15];
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    size_t nf = 0, nr = 0, nj = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#')
            continue;
        line[strcspn(line, "\n")] = 0;
        char kind = line[0];
        char *hin = line + 2, *hout = strchr(hin, ' ');
        assert_non_null(hout);
        *hout++ = 0;
        size_t nin = unhex(hin, in, sizeof in), nwant = unhex(hout, want, sizeof want);
        b.len = 0;
        int rc;
        if (kind == 'F') {
            uint64_t bits = 0;
            for (size_t k = 0; k < 8; k++)
                bits = bits << 8 | in[k];
            double d;
            memcpy(&d, &bits, sizeof d);
            rc = sy_py_float_repr(&b, d);
            char t[SY_PY_FLOAT_MAX]; /* the fixed-size form gives the same text */
            size_t tn = sy_py_float_str(t, d);
            assert_int_equal(tn, nwant);
            assert_memory_equal(t, want, nwant);
            assert_int_equal(t[tn], 0);
            nf++;
        } else if (kind == 'R') {
            rc = sy_py_str_repr(&b, (const char *)in, nin);
            nr++;
        } else {
            assert_int_equal(kind, 'J');
            rc = sy_py_json_dumps_str(&b, (const char *)in, nin);
            nj++;
        }
        assert_int_equal(rc, 0);
        if (b.len != nwant || memcmp(b.p, want, nwant) != 0) {
            print_error("line %zu: %c %s: want '%.*s', got '%.*s'\n", lineno, kind, hin, (int)nwant, (const char *)want,
                        (int)b.len, b.p);
            fail();
        }
    }
    fclose(f);
    sy_buf_free(&b);
    /* the file is whole: thousands of each kind */
    assert_true(nf > 5000);
    assert_true(nr > 3000 && nr == nj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(float_named),
        cmocka_unit_test(str_named),
        cmocka_unit_test(cpython_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
