/* test_hex.c - unit tests for core/hex: every digit both ways, digests,
 * partial numbers, and the refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/errors.h"
#include "core/hex.h"

static void digit_values(void **st)
{
    (void)st;
    for (int c = -1; c < 256; c++) {
        int want = -1;
        if (c >= '0' && c <= '9')
            want = c - '0';
        else if (c >= 'a' && c <= 'f')
            want = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            want = c - 'A' + 10;
        assert_int_equal(sy_hex_val(c), want);
    }
    assert_int_equal(sy_hex_val((char)0xC6), -1); /* a signed char above 0x7f */
    for (int i = 0; i < 16; i++) {
        assert_int_equal(sy_hex_val(sy_hex_lc[i]), i);
        assert_int_equal(sy_hex_val(sy_hex_uc[i]), i);
    }
}

static void four_digits(void **st)
{
    (void)st;
    unsigned v = 7;
    assert_int_equal(sy_hex4("00e9", &v), 0);
    assert_int_equal(v, 0xe9);
    assert_int_equal(sy_hex4("D83dxx", &v), 0);
    assert_int_equal(v, 0xd83d);
    assert_int_equal(sy_hex4("FFFF", &v), 0);
    assert_int_equal(v, 0xffff);
    assert_int_equal(sy_hex4("12g4", &v), -1);
    assert_int_equal(sy_hex4("12\0"
                             "4",
                             &v),
                     -1);
}

static void encode_decode(void **st)
{
    (void)st;
    unsigned char all[256], back[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    char txt[513];
    char *e = sy_hex_encode(txt, all, sizeof all);
    assert_ptr_equal(e, txt + 512);
    assert_int_equal(*e, 0);
    assert_memory_equal(txt, "000102", 6);
    assert_memory_equal(txt + 506, "fdfeff", 6);
    for (int i = 0; i < 256; i++) {
        char want[3];
        snprintf(want, sizeof want, "%02x", i);
        assert_memory_equal(txt + 2 * i, want, 2);
    }
    assert_int_equal(sy_hex_decode(back, txt, sizeof back), 0);
    assert_memory_equal(back, all, sizeof all);
    assert_int_equal(sy_hex_decode(back, "ABcd", 2), 0);
    assert_int_equal(back[0], 0xab);
    assert_int_equal(back[1], 0xcd);
    assert_int_equal(sy_hex_decode(back, "a-", 1), -1);
    assert_int_equal(sy_hex_decode(back, "", 0), 0);
    /* a SHA-256 sized digest, the common use */
    unsigned char d[32];
    memset(d, 0xa5, sizeof d);
    char h[65];
    sy_hex_encode(h, d, sizeof d);
    assert_int_equal(strlen(h), 64);
    assert_memory_equal(h, "a5a5a5a5", 8);
}

static void buf_hex(void **st)
{
    (void)st;
    unsigned char all[300];
    for (int i = 0; i < 300; i++)
        all[i] = (unsigned char)(i * 7);
    struct sy_buf b;
    sy_buf_init(&b, 1 << 12);
    SY_BUF_LIT(&b, "x=");
    assert_int_equal(sy_buf_hex(&b, all, sizeof all), 0); /* more than one 64-byte piece */
    assert_int_equal(b.len, 2 + 600);
    char want[601];
    sy_hex_encode(want, all, sizeof all);
    assert_string_equal(b.p + 2, want);
    sy_buf_free(&b);
    sy_buf_init(&b, 10);
    assert_int_equal(sy_buf_hex(&b, all, 6), SY_ENOSPC);
    assert_int_equal(sy_buf_failed(&b), SY_ENOSPC);
    sy_buf_free(&b);
}

static void numbers(void **st)
{
    (void)st;
    char o[17] = {0};
    sy_hex_u64(o, 0x0123456789abcdefULL, 16);
    assert_string_equal(o, "0123456789abcdef");
    memset(o, 0, sizeof o);
    sy_hex_u64(o, 0xe9, 4);
    assert_string_equal(o, "00e9");
    memset(o, 0, sizeof o);
    sy_hex_u64(o, 0xfedcba9876543210ULL >> 16, 12);
    assert_string_equal(o, "fedcba987654");
    static const uint64_t vs[] = {0, 1, 15, 16, 255, 4096, 65535, 1u << 20, UINT64_MAX};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        char t[24], want[24];
        char *end = t + sizeof t;
        char *s = sy_hex_uint_rev(end, vs[i]);
        snprintf(want, sizeof want, "%llx", (unsigned long long)vs[i]);
        assert_int_equal((size_t)(end - s), strlen(want));
        assert_memory_equal(s, want, strlen(want));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(digit_values), cmocka_unit_test(four_digits), cmocka_unit_test(encode_decode),
        cmocka_unit_test(buf_hex),      cmocka_unit_test(numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
