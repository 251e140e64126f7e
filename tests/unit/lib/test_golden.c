/* test_golden.c - the golden-file harness itself: a run over a scratch
 * directory, the trailing-newline rule, a mismatch, a missing file, and the
 * two update modes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "golden.h"

static char dir[256];

static void put(const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *get(const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return sy_golden_read(p, NULL);
}

/* the case: the input upper-cased; "fail" fails on its own */
static int upper(void *ud, const char *d, const char *name, const char *in, size_t n, struct sy_buf *out)
{
    (*(int *)ud)++;
    assert_string_equal(d, dir);
    if (!strcmp(name, "fail"))
        return -1;
    if (!strcmp(name, "skip"))
        return SY_GOLDEN_SKIP;
    for (size_t i = 0; i < n; i++) {
        char c = in[i] >= 'a' && in[i] <= 'z' ? (char)(in[i] - 32) : in[i];
        sy_buf_append(out, &c, 1);
    }
    return 0;
}

static int setup(void **st)
{
    (void)st;
    snprintf(dir, sizeof dir, "%s/sy-golden-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(dir));
    unsetenv("SY_GOLDEN_UPDATE");
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    static const char *const F[] = {"a.in", "a.out", "b.in", "b.out", "c.in", "c.out", "fail.in", "skip.in", "x.out"};
    for (size_t i = 0; i < sizeof F / sizeof F[0]; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, F[i]);
        unlink(p);
    }
    rmdir(dir);
    unsetenv("SY_GOLDEN_UPDATE");
    return 0;
}

static void runs_and_compares(void **st)
{
    (void)st;
    put("a.in", "one\ntwo");
    put("a.out", "ONE\nTWO\n"); /* the output and one newline */
    put("b.in", "x");
    put("b.out", "X"); /* without it: matches too */
    put("skip.in", "not a case here");
    int calls = 0, n = 0;
    assert_int_equal(sy_golden_run(dir, ".in", ".out", upper, &calls, &n), 0);
    assert_int_equal(n, 2);     /* skip.in is not counted */
    assert_int_equal(calls, 3); /* .out files are not inputs */
    size_t len = 0;
    char *t = get("a.in");
    assert_string_equal(t, "one\ntwo");
    free(t);
    char p[512];
    snprintf(p, sizeof p, "%s/a.in", dir);
    t = sy_golden_read(p, &len);
    assert_int_equal(len, 7);
    free(t);
    snprintf(p, sizeof p, "%s/none", dir);
    assert_null(sy_golden_read(p, &len));
}

static void reports_failures(void **st)
{
    (void)st;
    put("a.in", "one\ntwo\nthree");
    put("a.out", "ONE\nTWO\nTHREE\n");
    put("b.in", "one\ntwo\nthree");
    put("b.out", "ONE\nTW0\nTHREE\n"); /* differs on line 2 */
    put("c.in", "c");                  /* no c.out: missing */
    put("fail.in", "");
    int calls = 0, n = 0;
    assert_int_equal(sy_golden_run(dir, ".in", ".out", upper, &calls, &n), 3);
    assert_int_equal(n, 4);
    /* a longer or shorter output is a difference, an extra newline is not */
    char p[512];
    snprintf(p, sizeof p, "%s/a.out", dir);
    assert_int_equal(sy_golden_expect(p, "ONE\nTWO\nTHREE", 13), 1);
    assert_int_equal(sy_golden_expect(p, "ONE\nTWO\nTHREE\n\n", 15), 0);
    assert_int_equal(sy_golden_expect(p, "ONE\nTWO\nTHRE", 12), 0);
    assert_int_equal(sy_golden_expect(p, "", 0), 0);
}

static void update_modes(void **st)
{
    (void)st;
    put("a.in", "abc");
    put("a.out", "stale\n");
    put("b.in", "def");
    put("b.out", "DEF\n");
    put("c.in", "ghi");
    setenv("SY_GOLDEN_UPDATE", "new", 1); /* the missing one only */
    int calls = 0, n = 0;
    assert_int_equal(sy_golden_updating(), 2);
    assert_int_equal(sy_golden_run(dir, ".in", ".out", upper, &calls, &n), 1); /* a still differs */
    char *t = get("c.out");
    assert_string_equal(t, "GHI\n");
    free(t);
    t = get("a.out");
    assert_string_equal(t, "stale\n");
    free(t);
    setenv("SY_GOLDEN_UPDATE", "1", 1); /* everything */
    assert_int_equal(sy_golden_updating(), 1);
    assert_int_equal(sy_golden_run(dir, ".in", ".out", upper, &calls, &n), 0);
    t = get("a.out");
    assert_string_equal(t, "ABC\n");
    free(t);
    unsetenv("SY_GOLDEN_UPDATE");
    assert_int_equal(sy_golden_updating(), 0);
    assert_int_equal(sy_golden_run(dir, ".in", ".out", upper, &calls, &n), 0);
    assert_int_equal(n, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(runs_and_compares, setup, teardown),
        cmocka_unit_test_setup_teardown(reports_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(update_modes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
