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
#include "core/utf8.h"

static void buf_cap_is_hard(void **st)
{
    struct sy_buf b;
    sy_buf_init(&b, 8);
    assert_int_equal(sy_buf_append(&b, "12345678", 8), 0);
    assert_int_equal(sy_buf_append(&b, "9", 1), SY_ENOSPC);
    assert_int_equal(b.len, 8);
    assert_string_equal(b.p, "12345678");
    sy_buf_reset(&b);
    assert_int_equal(sy_buf_append(&b, "12345678", 8), 0);
    sy_buf_consume(&b, 3);
    assert_string_equal(b.p, "45678");
    assert_int_equal(sy_buf_printf(&b, "%d", 12), 0);
    assert_string_equal(b.p, "4567812");
    assert_int_equal(sy_buf_printf(&b, "%s", "long string"), SY_ENOSPC);
    sy_buf_free(&b);
}

/* The first refusal sticks: later appends that would fit are no-ops, through
 * every entry point, until reset; the contents stay the prefix before it. */
static void buf_error_is_sticky(void **st)
{
    struct sy_buf b;
    sy_buf_init(&b, 16);
    assert_int_equal(sy_buf_failed(&b), 0);
    assert_int_equal(SY_BUF_LIT(&b, "{\"a\":"), 0);
    assert_int_equal(sy_buf_append(&b, "0123456789abcdef", 16), SY_ENOSPC);
    assert_int_equal(sy_buf_failed(&b), SY_ENOSPC);
    /* a short tail would fit the cap and the allocation: still refused */
    assert_int_equal(SY_BUF_LIT(&b, "1}"), SY_ENOSPC);
    assert_int_equal(sy_buf_puts(&b, "}"), SY_ENOSPC);
    assert_int_equal(sy_buf_printf(&b, "%d", 1), SY_ENOSPC);
    assert_int_equal(sy_buf_u64(&b, 7), SY_ENOSPC);
    assert_int_equal(sy_buf_json_escape(&b, "x", 1), SY_ENOSPC);
    assert_int_equal(sy_buf_reserve(&b, 1), SY_ENOSPC);
    assert_int_equal(b.len, 5);
    assert_string_equal(b.p, "{\"a\":");
    /* dropping bytes or rolling len back does not make the text whole */
    sy_buf_consume(&b, 1);
    assert_int_equal(SY_BUF_LIT(&b, "x"), SY_ENOSPC);
    b.len = 0;
    assert_int_equal(SY_BUF_LIT(&b, "x"), SY_ENOSPC);
    assert_int_equal(sy_buf_failed(&b), SY_ENOSPC);
    /* reset starts new contents with the original cap */
    sy_buf_reset(&b);
    assert_int_equal(sy_buf_failed(&b), 0);
    assert_int_equal(b.cap, 16);
    assert_int_equal(sy_buf_append(&b, "0123456789abcdef", 16), 0);
    assert_int_equal(sy_buf_append(&b, "", 0), 0);
    assert_int_equal(sy_buf_failed(&b), 0);
    assert_int_equal(SY_BUF_LIT(&b, "x"), SY_ENOSPC);
    sy_buf_free(&b);
    /* free clears it too: the struct is ready for sy_buf_init's cap again */
    assert_int_equal(sy_buf_failed(&b), 0);
    assert_int_equal(b.cap, 16);
    assert_int_equal(SY_BUF_LIT(&b, "ok"), 0);
    assert_string_equal(b.p, "ok");
    sy_buf_free(&b);
}

/* A document assembled from pieces fails when a piece did. */
static void buf_error_propagates(void **st)
{
    (void)st;
    struct sy_buf piece, doc;
    sy_buf_init(&piece, 4);
    sy_buf_init(&doc, 64);
    SY_BUF_LIT(&piece, "[1]");
    assert_int_equal(sy_buf_append_buf(&doc, &piece), 0);
    assert_string_equal(doc.p, "[1]");
    assert_int_equal(SY_BUF_LIT(&piece, ",2]"), SY_ENOSPC);
    assert_int_equal(sy_buf_append_buf(&doc, &piece), SY_ENOSPC);
    assert_int_equal(sy_buf_failed(&doc), SY_ENOSPC);
    assert_string_equal(doc.p, "[1]");
    sy_buf_free(&piece);
    sy_buf_free(&doc);
}

/* A printf that does not fit (the long path through reserve) sets it too. */
static void buf_error_from_printf(void **st)
{
    struct sy_buf b;
    sy_buf_init(&b, 300);
    char big[400];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    assert_int_equal(sy_buf_printf(&b, "%s", big), SY_ENOSPC);
    assert_int_equal(sy_buf_failed(&b), SY_ENOSPC);
    assert_int_equal(b.len, 0);
    assert_int_equal(SY_BUF_LIT(&b, "{}"), SY_ENOSPC);
    assert_int_equal(b.len, 0);
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
/* core/utf8.h: the sequence check at every boundary RFC 3629 draws, and the
 * replacing writers. */
/* The encoder against the checker: every scalar value encodes to a sequence
 * sy_utf8_seq accepts whole, of the length RFC 3629 gives. */
static void utf8_encode(void **st)
{
    (void)st;
    char o[4];
    for (unsigned cp = 0; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        size_t n = sy_utf8_put(o, cp);
        size_t want = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        assert_int_equal(n, want);
        assert_int_equal(sy_utf8_seq((const unsigned char *)o, n), n);
    }
    struct sy_buf b;
    sy_buf_init(&b, 16);
    assert_int_equal(sy_buf_utf8(&b, 0xE9), 0);
    assert_int_equal(sy_buf_utf8(&b, 0x20AC), 0);
    assert_int_equal(sy_buf_utf8(&b, 0x1F600), 0);
    assert_int_equal(sy_buf_utf8(&b, 'A'), 0);
    assert_string_equal(b.p, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
                             "A");
    sy_buf_free(&b);
}

static void utf8_sequences(void **st)
{
    (void)st;
    static const struct {
        const char *s;
        size_t n, len;
    } seq[] = {
        {"a", 1, 1},
        {"\xc3\xa9", 2, 2},         /* e-acute */
        {"\xe2\x82\xac", 3, 3},     /* euro sign */
        {"\xf0\x9f\x98\x80", 4, 4}, /* U+1F600 */
        {"\xf4\x8f\xbf\xbf", 4, 4}, /* U+10FFFF, the last */
        {"\xed\x9f\xbf", 3, 3},     /* U+D7FF, just below the surrogates */
        {"\xee\x80\x80", 3, 3},     /* U+E000, just above */
        {"\x80", 1, 0},             /* a lone continuation byte */
        {"\xc0\xaf", 2, 0},         /* overlong '/' */
        {"\xc1\xbf", 2, 0},         /* overlong */
        {"\xe0\x9f\xbf", 3, 0},     /* overlong three-byte */
        {"\xf0\x8f\xbf\xbf", 4, 0}, /* overlong four-byte */
        {"\xed\xa0\x80", 3, 0},     /* U+D800, a surrogate */
        {"\xf4\x90\x80\x80", 4, 0}, /* U+110000 */
        {"\xf5\x80\x80\x80", 4, 0}, /* no such lead byte */
        {"\xff", 1, 0},
        {"\xe2\x82", 2, 0},     /* cut short by the end */
        {"\xe2\x28\xac", 3, 0}, /* a continuation that is not one */
    };
    for (size_t i = 0; i < sizeof seq / sizeof *seq; i++)
        assert_int_equal(sy_utf8_seq((const unsigned char *)seq[i].s, seq[i].n), seq[i].len);
    assert_int_equal(sy_utf8_check("plain ascii text, longer than a word", 36), 36);
    assert_int_equal(sy_utf8_check("0123456789abcdef\xc3\xa9\xff", 19), 18);
    assert_int_equal(sy_utf8_check("01234567\xe2\x82", 10), 8);
    assert_int_equal(sy_utf8_check("", 0), 0);
}

static void utf8_json_writers(void **st)
{
    (void)st;
    struct sy_buf b;
    sy_buf_init(&b, 1024);
    /* clean text: the same bytes as the plain escape */
    const char *ok = "caf\xc3\xa9 \"q\"\n\xf0\x9f\x98\x80 long enough to take the word loop";
    struct sy_buf plain;
    sy_buf_init(&plain, 1024);
    assert_int_equal(sy_buf_json_escape(&plain, ok, strlen(ok)), 0);
    assert_int_equal(sy_utf8_json_escape(&b, ok, strlen(ok)), 0);
    assert_string_equal(b.p, plain.p);
    sy_buf_free(&plain);
    /* one \ufffd per bad byte; the escape of the valid runs kept */
    sy_buf_reset(&b);
    const char *bad = "a\xff\"b\xc0\xaf\xe2\x82\xac\xed\xa0\x80z\xe2\x82";
    assert_int_equal(sy_utf8_json_escape(&b, bad, strlen(bad)), 0);
    assert_string_equal(b.p, "a\\ufffd\\\"b\\ufffd\\ufffd\xe2\x82\xac\\ufffd\\ufffd\\ufffdz\\ufffd\\ufffd");
    assert_int_equal(sy_utf8_check(b.p, b.len), b.len);
    /* JSON text: copied as is, bad bytes inside strings replaced */
    sy_buf_reset(&b);
    const char *js = "{\"k\":\"v\xfe\",\"\xc3\xa9\":[\"\x80\"]}";
    assert_int_equal(sy_utf8_json_raw(&b, js, strlen(js)), 0);
    assert_string_equal(b.p, "{\"k\":\"v\\ufffd\",\"\xc3\xa9\":[\"\\ufffd\"]}");
    /* the buffer's cap still holds */
    struct sy_buf small;
    sy_buf_init(&small, 8);
    assert_int_not_equal(sy_utf8_json_escape(&small, "\xff\xff", 2), 0);
    assert_true(small.len <= 8);
    sy_buf_free(&small);
    sy_buf_free(&b);
}

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
        cmocka_unit_test(buf_cap_is_hard),         cmocka_unit_test(buf_error_is_sticky),
        cmocka_unit_test(buf_error_from_printf),   cmocka_unit_test(buf_error_propagates),
        cmocka_unit_test(buf_printf_large),        cmocka_unit_test(json_escape),
        cmocka_unit_test(arena_alloc_and_cleanup), cmocka_unit_test(error_table),
        cmocka_unit_test(utf8_sequences),          cmocka_unit_test(utf8_encode),
        cmocka_unit_test(utf8_json_writers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
