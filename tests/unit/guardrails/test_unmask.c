/* test_unmask.c - reversible masking's way back (src/guardrails/unmask.c):
 * sy_gunmask replaces placeholders in one pass (the longest one when they
 * share a prefix), and a text cut into two stream pieces at every byte
 * position, unmasked with sy_gunmask_hold holding back a cut placeholder,
 * gives the same text as the whole; random sets against a naive oracle.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "guardrails/guardrail.h"

static char *unmask(const struct sy_gpair *p, size_t np, const char *t, size_t *count)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 24);
    size_t c = sy_gunmask(p, np, t, strlen(t), &b);
    if (count)
        *count = c;
    char *s = strdup(b.p ? b.p : "");
    sy_buf_free(&b);
    return s;
}

/* The oracle: at each position the longest placeholder that starts there. */
static char *naive(const struct sy_gpair *p, size_t np, const char *t)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 24);
    size_t n = strlen(t);
    for (size_t i = 0; i < n;) {
        size_t best = 0, bj = 0;
        for (size_t j = 0; j < np; j++) {
            size_t l = strlen(p[j].placeholder);
            if (l && l <= n - i && !memcmp(t + i, p[j].placeholder, l) && l >= best)
                best = l, bj = j;
        }
        if (best) {
            sy_buf_puts(&b, p[bj].original);
            i += best;
        } else {
            sy_buf_append(&b, t + i, 1);
            i++;
        }
    }
    char *s = strdup(b.p ? b.p : "");
    sy_buf_free(&b);
    return s;
}

static void test_basic(void **state)
{
    (void)state;
    struct sy_gpair p[] = {
        {"<EMAIL_ADDRESS_1>", "a@b.io"}, {"<PHONE_NUMBER_2>", "555-123-4567"}, {"<EMAIL_ADDRESS_10>", "z@z.io"}};
    size_t c;
    char *s = unmask(p, 3, "to <EMAIL_ADDRESS_1>, <EMAIL_ADDRESS_10> or <PHONE_NUMBER_2> <EMAIL_ADDRESS_", &c);
    assert_string_equal(s, "to a@b.io, z@z.io or 555-123-4567 <EMAIL_ADDRESS_");
    assert_int_equal(c, 3);
    free(s);
    s = unmask(NULL, 0, "nothing <EMAIL_ADDRESS_1>", &c);
    assert_string_equal(s, "nothing <EMAIL_ADDRESS_1>");
    assert_int_equal(c, 0);
    free(s);
    /* placeholders that are prefixes of each other: the longest wins */
    struct sy_gpair q[] = {{"<A", "1"}, {"<AB", "2"}, {"<ABC>", "3"}, {"", "empty is ignored"}, {"X", "x"}};
    s = unmask(q, 5, "<ABC> <AB> <A <ABD XX", &c);
    assert_string_equal(s, "3 2> 1 2D xx");
    free(s);
}

static void test_hold(void **state)
{
    (void)state;
    struct sy_gpair p[] = {{"<EMAIL_ADDRESS_1>", "a@b.io"}, {"<PHONE_NUMBER_2>", "555"}};
    assert_int_equal(sy_gunmask_hold(p, 2, "abc<EMAIL_ADD", 13), 10);
    assert_int_equal(sy_gunmask_hold(p, 2, "abc<", 4), 1);
    assert_int_equal(sy_gunmask_hold(p, 2, "abc<P", 5), 2);
    assert_int_equal(sy_gunmask_hold(p, 2, "abc<EMAIL_ADDRESS_1>", 20), 0);
    assert_int_equal(sy_gunmask_hold(p, 2, "abc", 3), 0);
    assert_int_equal(sy_gunmask_hold(p, 2, "", 0), 0);
    assert_int_equal(sy_gunmask_hold(NULL, 0, "<", 1), 0);
}

/* Stream: pieces [0, k) and [k, n); each piece is unmasked but for what hold
 * keeps, which goes in front of the next piece; the end flushes. */
static char *streamed(const struct sy_gpair *p, size_t np, const char *t, size_t k)
{
    size_t n = strlen(t);
    struct sy_buf out, carry;
    sy_buf_init(&out, 1 << 24);
    sy_buf_init(&carry, 1 << 24);
    const char *piece[2] = {t, t + k};
    size_t plen[2] = {k, n - k};
    for (int i = 0; i < 2; i++) {
        sy_buf_append(&carry, piece[i], plen[i]);
        size_t h = sy_gunmask_hold(p, np, carry.p ? carry.p : "", carry.len);
        sy_gunmask(p, np, carry.p ? carry.p : "", carry.len - h, &out);
        sy_buf_consume(&carry, carry.len - h);
    }
    sy_gunmask(p, np, carry.p ? carry.p : "", carry.len, &out);
    char *s = strdup(out.p ? out.p : "");
    sy_buf_free(&out);
    sy_buf_free(&carry);
    return s;
}

static void test_split_everywhere(void **state)
{
    (void)state;
    struct sy_gpair p[] = {
        {"<EMAIL_ADDRESS_1>", "a@b.io"}, {"<PHONE_NUMBER_2>", "555-123-4567"}, {"<EMAIL_ADDRESS_12>", "q@r.io"}};
    const char *t = "<EMAIL_ADDRESS_1>x<PHONE_NUMBER_2><EMAIL_ADDRESS_12> <<EMAIL_ADDRESS_1> <PHONE_NUM end"
                    "<EMAIL_ADDRESS_12>";
    char *whole = unmask(p, 3, t, NULL);
    assert_string_equal(whole, "a@b.iox555-123-4567q@r.io <a@b.io <PHONE_NUM endq@r.io");
    for (size_t k = 0; k <= strlen(t); k++) {
        char *s = streamed(p, 3, t, k);
        assert_string_equal(s, whole);
        free(s);
    }
    free(whole);
}

static void test_random_vs_naive(void **state)
{
    (void)state;
    srand(12345);
    const char alpha[] = "<>AB_1";
    for (int round = 0; round < 300; round++) {
        size_t np = (size_t)(rand() % 12);
        struct sy_gpair p[12];
        char ph[12][8], orig[12][8];
        for (size_t j = 0; j < np; j++) {
            size_t l = 1 + (size_t)(rand() % 5);
            for (size_t x = 0; x < l; x++)
                ph[j][x] = alpha[rand() % 6];
            ph[j][l] = 0;
            snprintf(orig[j], sizeof orig[j], "[%zu]", j);
            p[j] = (struct sy_gpair){ph[j], orig[j]};
        }
        char t[64];
        size_t tl = (size_t)(rand() % 60);
        for (size_t x = 0; x < tl; x++)
            t[x] = alpha[rand() % 6];
        t[tl] = 0;
        char *a = unmask(p, np, t, NULL), *b = naive(p, np, t);
        /* duplicates: both take one of the equal placeholders; compare only when they are unique */
        int dup = 0;
        for (size_t x = 0; x < np; x++)
            for (size_t y = x + 1; y < np; y++)
                dup |= !strcmp(ph[x], ph[y]);
        if (!dup)
            assert_string_equal(a, b);
        free(a);
        free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_hold),
        cmocka_unit_test(test_split_everywhere),
        cmocka_unit_test(test_random_vs_naive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
