/* test_value.c - unit tests for src/cache/value.c: LiteLLM's stored value
 * {"timestamp": t, "response": "<json string>"} (golden bytes from Python's
 * json.dumps). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cache/cache.h"
#include "core/buf.h"

/* the response text model_dump_json would give (UTF-8, compact) */
static const char resp[] = "{\"id\":\"x\",\"c\":\"\xc3\xa9\xe2\x80\xa8\xf0\x9f\x98\x80\\n\\\"\\\\\\u0001/\"}";
/* python3: json.dumps({"timestamp": 1718000000.123456, "response": resp}) */
static const char stored[] =
    "{\"timestamp\": 1718000000.123456, \"response\": "
    "\"{\\\"id\\\":\\\"x\\\",\\\"c\\\":\\\"\\u00e9\\u2028\\ud83d\\ude00\\\\n\\\\\\\"\\\\\\\\\\\\"
    "u0001/\\\"}\"}";

static void encode_golden(void **st)
{
    (void)st;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    assert_int_equal(sy_cache_value_encode(resp, strlen(resp), 1718000000.123456, &b), 0);
    assert_string_equal(b.p, stored);
    sy_buf_free(&b);
}

static void decode_both_paths(void **st)
{
    (void)st;
    struct sy_buf b;
    double ts = 0;
    sy_buf_init(&b, 1 << 20);
    assert_int_equal(sy_cache_value_decode(stored, strlen(stored), &b, &ts), 0);
    assert_string_equal(b.p, resp);
    assert_true(ts == 1718000000.123456);
    /* another spelling: json-c fallback */
    const char *other = "{ \"response\" : \"{}\", \"timestamp\" : 5 }";
    sy_buf_reset(&b);
    assert_int_equal(sy_cache_value_decode(other, strlen(other), &b, &ts), 0);
    assert_string_equal(b.p, "{}");
    assert_true(ts == 5);
    /* response stored as an object */
    const char *obj = "{\"timestamp\": 1.5, \"response\": {\"a\": [1, \"x/y\"]}}";
    sy_buf_reset(&b);
    assert_int_equal(sy_cache_value_decode(obj, strlen(obj), &b, &ts), 0);
    assert_string_equal(b.p, "{\"a\":[1,\"x/y\"]}");
    /* refused */
    const char *bad[] = {"",
                         "{}",
                         "{\"response\": \"x\"}",
                         "{\"timestamp\": 1}",
                         "[1]",
                         "{\"timestamp\": 1, \"response\": \"\\q\"}",
                         "{\"timestamp\": \"1\", \"response\": \"x\"}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sy_buf_reset(&b);
        assert_int_equal(sy_cache_value_decode(bad[i], strlen(bad[i]), &b, &ts), -1);
    }
    sy_buf_free(&b);
}

static void round_trip(void **st)
{
    (void)st;
    struct sy_buf e, d;
    sy_buf_init(&e, 1 << 20);
    sy_buf_init(&d, 1 << 20);
    char all[256];
    for (int i = 0; i < 128; i++)
        all[i] = (char)(i ? i : ' ');
    memcpy(all + 128, "\xe4\xb8\xad\xf0\x9f\x98\x80\xff", 8); /* CJK, emoji, an invalid byte */
    assert_int_equal(sy_cache_value_encode(all, 136, 1.0, &e), 0);
    double ts;
    assert_int_equal(sy_cache_value_decode(e.p, e.len, &d, &ts), 0);
    assert_int_equal(d.len, 128 + 7 + 3);
    assert_memory_equal(d.p, all, 135);
    assert_memory_equal(d.p + 135, "\xef\xbf\xbd", 3); /* U+FFFD */
    assert_true(ts == 1.0);
    assert_non_null(strstr(e.p, "{\"timestamp\": 1.0, \"response\": \""));
    /* json.dumps escapes DEL (CPython: "\u007f"); it was copied raw before */
    assert_non_null(strstr(e.p, "~\\u007f\\u4e2d\\ud83d\\ude00\\ufffd\""));
    sy_buf_free(&e);
    sy_buf_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(encode_golden),
        cmocka_unit_test(decode_both_paths),
        cmocka_unit_test(round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
