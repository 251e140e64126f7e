/* test_value.c - store values without a database: constructors, row
 * helpers, JSON output, ISO-8601 time, and the text converters of
 * store_impl.h ($N rewriting, PostgreSQL array literals <-> JSON). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "core/buf.h"
#include "store/store.h"
#include "store/store_impl.h"

static void constructors(void **st)
{
    struct sy_sval v = sy_sv_text(NULL);
    assert_int_equal(v.k, SY_SV_NULL);
    v = sy_sv_text("abc");
    assert_int_equal(v.k, SY_SV_TEXT);
    assert_int_equal(v.n, 3);
    v = sy_sv_textn("abcdef", 2);
    assert_int_equal(v.n, 2);
    assert_int_equal(sy_sv_int(-5).i, -5);
    assert_true(sy_sv_num(2.5).d == 2.5);
    assert_int_equal(sy_sv_bool(7).i, 1);
    assert_int_equal(sy_sv_ts(NULL).k, SY_SV_NULL);
    assert_int_equal(sy_sv_ts("2026-01-01T00:00:00.000Z").k, SY_SV_TS);
    assert_int_equal(sy_sv_json(NULL).k, SY_SV_NULL);
    assert_int_equal(sy_sv_json("{}").k, SY_SV_JSON);
    assert_int_equal(sy_sv_textarr("[]").k, SY_SV_TEXTARR);
    assert_int_equal(sy_sv_null().k, SY_SV_NULL);
}

static void row_helpers_and_json(void **st)
{
    const char *names[] = {"t", "i", "n", "b", "ts", "js", "nul", "q\"uote"};
    struct sy_sval v[] = {sy_sv_text("x\"y\n"),
                          sy_sv_int(42),
                          sy_sv_num(0.1),
                          sy_sv_bool(1),
                          sy_sv_ts("2026-12-03T19:00:00.123Z"),
                          sy_sv_json("[1,{\"a\":null}]"),
                          sy_sv_null(),
                          sy_sv_text("12.5")};
    struct sy_srow r = {8, names, v};
    assert_ptr_equal(sy_srow_get(&r, "i"), &v[1]);
    assert_null(sy_srow_get(&r, "missing"));
    assert_string_equal(sy_srow_text(&r, "t"), "x\"y\n");
    assert_string_equal(sy_srow_text(&r, "ts"), "2026-12-03T19:00:00.123Z");
    assert_null(sy_srow_text(&r, "i"));
    assert_null(sy_srow_text(&r, "nul"));
    assert_true(sy_srow_num(&r, "i", -1) == 42);
    assert_true(sy_srow_num(&r, "n", -1) == 0.1);
    assert_true(sy_srow_num(&r, "nul", -1) == -1);
    assert_true(sy_srow_num(&r, "q\"uote", -1) == 12.5);
    assert_int_equal(sy_srow_int(&r, "b", -1), 1);
    assert_int_equal(sy_srow_int(&r, "n", -1), 0);
    assert_int_equal(sy_srow_int(&r, "missing", -3), -3);
    assert_int_equal(sy_srow_int(&r, "t", -3), -3);

    struct sy_buf b;
    sy_buf_init(&b, 4096);
    sy_srow_json(&b, &r);
    assert_string_equal(b.p, "{\"t\":\"x\\\"y\\n\",\"i\":42,\"n\":0.1,\"b\":true,"
                             "\"ts\":\"2026-12-03T19:00:00.123Z\",\"js\":[1,{\"a\":null}],\"nul\":null,"
                             "\"q\\\"uote\":\"12.5\"}");
    sy_buf_reset(&b);
    struct sy_sval x = sy_sv_num(NAN);
    sy_sval_json(&b, &x);
    assert_string_equal(b.p, "null");
    sy_buf_reset(&b);
    x = sy_sv_num(1e300);
    sy_sval_json(&b, &x);
    assert_string_equal(b.p, "1e+300");
    sy_buf_reset(&b);
    x = sy_sv_num(1000); /* Python's repr, as LiteLLM's /spend answers: not 1000 or 1e+03 */
    sy_sval_json(&b, &x);
    assert_string_equal(b.p, "1000.0");
    sy_buf_reset(&b);
    x = sy_sv_num(1e-5);
    sy_sval_json(&b, &x);
    assert_string_equal(b.p, "1e-05");
    sy_buf_free(&b);
}

static void iso_time(void **st)
{
    char out[32];
    sy_iso_time(0, out);
    assert_string_equal(out, "1970-01-01T00:00:00.000Z");
    sy_iso_time(1796324400.123, out);
    assert_string_equal(out, "2026-12-03T19:00:00.123Z");
    sy_iso_time(951782400.9995, out); /* rounds to the next second */
    assert_string_equal(out, "2000-02-29T00:00:01.000Z");
    sy_iso_time(-1.5, out);
    assert_string_equal(out, "1969-12-31T23:59:58.500Z");

    assert_true(sy_iso_parse("2026-12-03T19:00:00.123Z") == 1796324400.123);
    assert_true(fabs(sy_iso_parse("2026-12-03 19:00:00.123") - 1796324400.123) < 1e-6);
    assert_true(sy_iso_parse("2026-12-03T19:00:00Z") == 1796324400);
    assert_true(sy_iso_parse("2026-12-03T19:00:00+00:00") == 1796324400);
    assert_true(sy_iso_parse("2026-12-03T20:30:00+01:30") == 1796324400);
    assert_true(sy_iso_parse("2026-12-03 14:00:00-05") == 1796324400);
    assert_true(sy_iso_parse("2026-12-03 19:00:00.4+00") == 1796324400.4);
    assert_true(sy_iso_parse("2026-12-03") == 1796256000);
    assert_true(sy_iso_parse("1969-12-31T23:59:59Z") == -1); /* a real -1 */
    const char *bad[] = {"",
                         "2026",
                         "2026-13-01T00:00:00Z",
                         "2026-02-30T00:00:00Z",
                         "2025-02-29T00:00:00Z",
                         "2026-01-01T24:00:00Z",
                         "2026-01-01T00:00:00.Z",
                         "2026-01-01T00:00:00Zjunk",
                         "2026-01-01X00:00:00",
                         "2026-01-01T00:00",
                         "infinity",
                         "2026-01-01 00:00:00 BC",
                         NULL};
    for (int i = 0; bad[i]; i++)
        assert_true(sy_iso_parse(bad[i]) == -1);
    assert_true(sy_iso_parse(NULL) == -1);
    /* round trips */
    for (double t = -86400 * 400.0; t < 4102444800.0; t += 86400 * 37.3 + 0.123) {
        sy_iso_time(t, out);
        double back = sy_iso_parse(out);
        assert_true(fabs(back - round(t * 1000) / 1000) < 1e-6);
    }
    char norm[32];
    assert_int_equal(sy__ts_normalise("2026-01-01 00:00:00.4", norm), 0);
    assert_string_equal(norm, "2026-01-01T00:00:00.400Z");
    assert_int_equal(sy__ts_normalise("2026-01-01 05:00:00+05", norm), 0);
    assert_string_equal(norm, "2026-01-01T00:00:00.000Z");
    assert_int_equal(sy__ts_normalise("infinity", norm), -1);
}

static const char *rw(struct sy_buf *b, const char *sql)
{
    sy_buf_reset(b);
    assert_int_equal(sy__sql_rewrite(sql, strlen(sql), b), 0);
    return b->p;
}

static void dollar_rewrite(void **st)
{
    struct sy_buf b;
    sy_buf_init(&b, 4096);
    assert_string_equal(rw(&b, "SELECT $1, $23"), "SELECT ?1, ?23");
    assert_string_equal(rw(&b, "x = '$1' AND y = $2"), "x = '$1' AND y = ?2");
    assert_string_equal(rw(&b, "'it''s $1' $1"), "'it''s $1' ?1");
    assert_string_equal(rw(&b, "\"a$1\" = $1"), "\"a$1\" = ?1");
    assert_string_equal(rw(&b, "\"a\"\"$1\" = $1"), "\"a\"\"$1\" = ?1");
    assert_string_equal(rw(&b, "-- $1\n$1 /* $2 */ $3"), "-- $1\n?1 /* $2 */ ?3");
    assert_string_equal(rw(&b, "$a $ $"), "$a $ $");
    assert_string_equal(rw(&b, "'unterminated $1"), "'unterminated $1");
    assert_string_equal(rw(&b, ""), "");
    assert_string_equal(rw(&b, "[$1] `$2` $3"), "[$1] `$2` ?3");
    sy_buf_free(&b);
}

static const char *a2j(struct sy_buf *b, const char *lit, int style)
{
    sy_buf_reset(b);
    if (sy__pg_array_to_json(lit, strlen(lit), style, b))
        return "ERR";
    return b->p;
}

static void pg_arrays(void **st)
{
    struct sy_buf b;
    sy_buf_init(&b, 4096);
    assert_string_equal(a2j(&b, "{}", 0), "[]");
    assert_string_equal(a2j(&b, "{a,b}", 0), "[\"a\",\"b\"]");
    assert_string_equal(a2j(&b, "{\"a b\",\"x\\\"y\",\"back\\\\slash\",NULL,\"NULL\",null}", 0),
                        "[\"a b\",\"x\\\"y\",\"back\\\\slash\",null,\"NULL\",null]");
    assert_string_equal(a2j(&b, "{ a , b }", 0), "[\"a\",\"b\"]");
    assert_string_equal(a2j(&b, "{{1,2},{3,NULL}}", 1), "[[1,2],[3,null]]");
    assert_string_equal(a2j(&b, "{1.5,-2,NaN,1e3}", 1), "[1.5,-2,\"NaN\",1e3]");
    assert_string_equal(a2j(&b, "{t,f,NULL}", 2), "[true,false,null]");
    assert_string_equal(a2j(&b, "[0:1]={x,y}", 0), "[\"x\",\"y\"]");
    assert_string_equal(a2j(&b, "{\"\"}", 0), "[\"\"]");
    assert_string_equal(a2j(&b, "{\"{\\\"k\\\": 1}\"}", 0), "[\"{\\\"k\\\": 1}\"]");
    assert_string_equal(a2j(&b, "{\"\xc3\xa9\\n\"}", 0), "[\"\xc3\xa9n\"]");
    /* bytes that are not UTF-8 (a SQL_ASCII database holds any): U+FFFD each */
    assert_string_equal(a2j(&b, "{a\xff,\"b\xc0\xaf\"}", 0), "[\"a\\ufffd\",\"b\\ufffd\\ufffd\"]");
    const char *bad[] = {"", "{", "}", "{a", "{a,}", "{,a}", "{\"a}", "{a}x", "a", "{a\"b}", "[1:2]", "{{a}", NULL};
    for (int i = 0; bad[i]; i++)
        assert_string_equal(a2j(&b, bad[i], 0), "ERR");

    /* JSON -> literal */
    const char *j = "[\"a\",\"b \\\"c\\\"\",\"\",null,\"NULL\",\"x\\\\y\",1,true]";
    sy_buf_reset(&b);
    assert_int_equal(sy__json_to_pg_array(j, strlen(j), &b), 0);
    assert_string_equal(b.p, "{\"a\",\"b \\\"c\\\"\",\"\",NULL,\"NULL\",\"x\\\\y\",\"1\",\"true\"}");
    /* and back */
    struct sy_buf c;
    sy_buf_init(&c, 4096);
    assert_int_equal(sy__pg_array_to_json(b.p, b.len, 0, &c), 0);
    assert_string_equal(c.p, "[\"a\",\"b \\\"c\\\"\",\"\",null,\"NULL\",\"x\\\\y\",\"1\",\"true\"]");
    sy_buf_free(&c);
    const char *notarr[] = {"{}", "\"a\"", "[[\"a\"]]", "[{}]", "[", "[] x", "", NULL};
    for (int i = 0; notarr[i]; i++) {
        sy_buf_reset(&b);
        assert_int_equal(sy__json_to_pg_array(notarr[i], strlen(notarr[i]), &b), -1);
    }
    sy_buf_reset(&b);
    assert_int_equal(sy__json_to_pg_array("[] ", 3, &b), 0);
    assert_string_equal(b.p, "{}");
    sy_buf_free(&b);
}

/* sy_srow_json on cells holding bytes that are not UTF-8: text, JSON, array
 * and column name each come out valid, one \ufffd per bad byte; valid
 * multi-byte text is kept as is. */
static void row_json_bad_utf8(void **st)
{
    (void)st;
    const char *names[] = {"t", "js", "arr", "n\xfe"};
    struct sy_sval v[] = {sy_sv_text("ok \xc3\xa9 \xff\"end\""), sy_sv_json("{\"k\":\"v\xed\xa0\x80\"}"),
                          sy_sv_textarr("[\"\xe2\x82\"]"), sy_sv_text("x")};
    struct sy_srow r = {4, names, v};
    struct sy_buf b;
    sy_buf_init(&b, 4096);
    sy_srow_json(&b, &r);
    assert_string_equal(b.p, "{\"t\":\"ok \xc3\xa9 \\ufffd\\\"end\\\"\",\"js\":{\"k\":\"v\\ufffd\\ufffd\\ufffd\"},"
                             "\"arr\":[\"\\ufffd\\ufffd\"],\"n\\ufffd\":\"x\"}");
    sy_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(constructors), cmocka_unit_test(row_helpers_and_json),
        cmocka_unit_test(iso_time),     cmocka_unit_test(dollar_rewrite),
        cmocka_unit_test(pg_arrays),    cmocka_unit_test(row_json_bad_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
