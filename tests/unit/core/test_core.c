/* test_core.c - unit tests for src/core: capped buffers, JSON escaping, arena, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/errors.h"

static void buf_cap_is_hard(void **st)
{
    struct sy_buf b;
    sy_buf_init(&b, 8);
    assert_int_equal(sy_buf_append(&b, "12345678", 8), 0);
    assert_int_equal(sy_buf_append(&b, "9", 1), SY_ENOSPC);
    assert_int_equal(b.len, 8);
    assert_string_equal(b.p, "12345678");
    sy_buf_consume(&b, 3);
    assert_string_equal(b.p, "45678");
    assert_int_equal(sy_buf_printf(&b, "%d", 12), 0);
    assert_string_equal(b.p, "4567812");
    assert_int_equal(sy_buf_printf(&b, "%s", "long string"), SY_ENOSPC);
    sy_buf_free(&b);
}

static void buf_printf_large(void **st)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    char big[1000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    assert_int_equal(sy_buf_printf(&b, "<%s>", big), 0);
    assert_int_equal(b.len, 1001);
    assert_int_equal(sy_buf_u64(&b, 18446744073709551615ULL), 0);
    assert_string_equal(b.p + 1001, "18446744073709551615");
    /* every digit count, both parities, against printf */
    static const uint64_t vs[] = {0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345, 99999999, 1000000, 4294967296ULL};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        char want[32];
        snprintf(want, sizeof want, "%llu", (unsigned long long)vs[i]);
        sy_buf_reset(&b);
        assert_int_equal(sy_buf_u64(&b, vs[i]), 0);
        assert_string_equal(b.p, want);
    }
    sy_buf_free(&b);
}

static void json_escape(void **st)
{
    struct sy_buf b;
    sy_buf_init(&b, 1024);
    sy_buf_json_escape(&b, "a\"b\\c\n\x01\xc3\xa9", 9);
    assert_string_equal(b.p, "a\\\"b\\\\c\\n\\u0001\xc3\xa9");
    sy_buf_free(&b);
}

static int cleaned;
static void cleanup(void *p)
{
    cleaned += *(int *)p;
}

static void arena_alloc_and_cleanup(void **st)
{
    struct sy_arena a;
    sy_arena_init(&a);
    for (int i = 0; i < 1000; i++) {
        char *p = sy_arena_alloc(&a, 100);
        assert_int_equal((uintptr_t)p % 16, 0);
        memset(p, 1, 100);
    }
    char *big = sy_arena_alloc(&a, 100000);
    memset(big, 2, 100000);
    static int v = 5;
    sy_arena_defer(&a, cleanup, &v);
    assert_string_equal(sy_arena_strndup(&a, "hello", 3), "hel");
    sy_arena_reset(&a);
    assert_int_equal(cleaned, 5);
    sy_arena_free(&a);
}

static void error_table(void **st)
{
    assert_int_equal(sy_err_status(SY_EAUTH), 401);
    assert_int_equal(sy_err_status(SY_EHDRSIZE), 431);
    assert_string_equal(sy_err_type(SY_EAUTH), "auth_error");
    assert_string_equal(sy_err_name(SY_EUPTIMEOUT), "EUPTIMEOUT");
    assert_int_equal(sy_err_status(-9999), 500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(buf_cap_is_hard),         cmocka_unit_test(buf_printf_large), cmocka_unit_test(json_escape),
        cmocka_unit_test(arena_alloc_and_cleanup), cmocka_unit_test(error_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
