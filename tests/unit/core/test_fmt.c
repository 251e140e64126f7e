/* test_fmt.c - core/fmt: sy_fmt_g12 writes exactly what snprintf's "%.12g" does.
 *
 * A few cases are spelled out; then millions of seeded random doubles of four
 * kinds are compared with glibc's output: any bit pattern (NaN, infinities,
 * subnormals included), log-uniform magnitudes across and beyond the fast
 * range, prices times token counts (what the cost header prints), and
 * decimals whose 13th significant digit is a 5 (the rounding ties).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/fmt.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double unit(void)
{
    return (double)(next() >> 11) / 9007199254740992.0;
}

static int same(double v)
{
    char want[64], got[SY_FMT_G12_MAX + 8];
    memset(got, 'x', sizeof got);
    int n = snprintf(want, sizeof want, "%.12g", v);
    size_t m = sy_fmt_g12(got, v);
    if ((size_t)n != m || strcmp(want, got) != 0) {
        print_error("%.17g (%a): snprintf \"%s\", sy_fmt_g12 \"%s\" (%zu)\n", v, v, want, got, m);
        return 0;
    }
    return 1;
}

static void test_cases(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *s;
    } c[] = {
        {0.0, "0"},
        {-0.0, "-0"},
        {1.0, "1"},
        {1000.0, "1000"},
        {0.1, "0.1"},
        {0.00042, "0.00042"},
        {0.0001, "0.0001"},
        {0.00001, "1e-05"},
        {1.5e-7, "1.5e-07"},
        {123456789012.0, "123456789012"},
        {1234567890123.0, "1.23456789012e+12"},
        {999999999999.5, "1e+12"},
        {2.5e-05, "2.5e-05"},
        {0.000315, "0.000315"},
        {-3.25, "-3.25"},
        {1.0 / 3.0, "0.333333333333"},
        {2.0 / 3.0, "0.666666666667"},
        {1e15, "1e+15"},
        {1e-300, "1e-300"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char got[SY_FMT_G12_MAX];
        size_t n = sy_fmt_g12(got, c[i].v);
        assert_string_equal(got, c[i].s);
        assert_int_equal(n, strlen(c[i].s));
        assert_true(same(c[i].v));
    }
    assert_true(same(INFINITY));
    assert_true(same(-INFINITY));
    assert_true(same(NAN));
}

static void test_any_bits(void **state)
{
    (void)state;
    int ok = 1;
    for (int i = 0; i < 1000000 && ok; i++) {
        uint64_t b = next();
        double v;
        memcpy(&v, &b, sizeof v);
        ok = same(v);
    }
    assert_true(ok);
}

static void test_magnitudes(void **state)
{
    (void)state;
    int ok = 1;
    for (int i = 0; i < 1500000 && ok; i++) {
        double v = pow(10.0, -13.0 + 30.0 * unit()) * (next() & 1 ? -1 : 1);
        ok = same(v);
    }
    assert_true(ok);
}

static void test_costs(void **state)
{
    (void)state;
    int ok = 1;
    for (int i = 0; i < 1000000 && ok; i++) {
        /* a per-token price with a few significant digits times a count, summed as in sy_cost */
        double in = (double)(1 + next() % 9999) * pow(10.0, -(double)(4 + next() % 6));
        double out = (double)(1 + next() % 9999) * pow(10.0, -(double)(4 + next() % 6));
        double v = in * (double)(next() % 200000) + out * (double)(next() % 20000);
        ok = same(v);
    }
    assert_true(ok);
}

static void test_ties(void **state)
{
    (void)state;
    int ok = 1;
    for (int i = 0; i < 1000000 && ok; i++) {
        /* 13 significant digits ending in 5, at every scale of the fast range */
        uint64_t m = 1000000000000u + next() % 9000000000000u;
        m = m / 10 * 10 + 5;
        double v = (double)m / pow(10.0, (double)(next() % 25));
        ok = same(v) && same(nextafter(v, 0)) && same(nextafter(v, INFINITY));
    }
    assert_true(ok);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases), cmocka_unit_test(test_any_bits), cmocka_unit_test(test_magnitudes),
        cmocka_unit_test(test_costs), cmocka_unit_test(test_ties),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
