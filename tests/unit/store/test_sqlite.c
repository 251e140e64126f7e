/* test_sqlite.c - the store.h suite against the SQLite backend.
 *
 * The suite (everything above main) is written once for both backends:
 * test_postgres.c includes this file with STORE_SUITE_NO_MAIN defined and
 * runs the same tests against PostgreSQL. Each test opens suite_url (set by
 * main) and works on its own table "T_kinds", recreated by the fixture.
 *
 * Covered: every parameter and result kind, NULLs, RETURNING, ON CONFLICT
 * upserts, transactions (commit / rollback), ECONFLICT and EQUERY, row counts,
 * a callback that stops early, $N inside a string literal left alone, the
 * statement cache (same INSERT many times), sy_srow_json.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/utf8.h"
#include "store/store.h"

static const char *suite_url;

static struct sy_store *suite_open(void)
{
    struct sy_store_conf conf = {.url = suite_url, .connect_timeout_s = 3, .busy_timeout_s = 3};
    char err[256];
    struct sy_store *st = sy_store_open(&conf, err, sizeof err);
    if (!st)
        fail_msg("open %s: %s", suite_url, err);
    return st;
}

static void ok_exec(struct sy_store *st, const char *sql)
{
    int rc = sy_store_exec(st, sql, 0, NULL, NULL, NULL);
    if (rc < 0)
        fail_msg("%s: %s", sql, sy_store_errmsg(st));
}

static int suite_setup(void **state)
{
    struct sy_store *st = suite_open();
    ok_exec(st, "DROP TABLE IF EXISTS \"T_kinds\"");
    if (sy_store_kind(st) == SY_STORE_POSTGRES)
        ok_exec(st, "CREATE TABLE \"T_kinds\" (id TEXT PRIMARY KEY, n DOUBLE PRECISION, i BIGINT, b BOOLEAN, "
                    "ts TIMESTAMP(3), arr TEXT[], js JSONB, t TEXT, \"camelCase\" TEXT)");
    else
        ok_exec(st, "CREATE TABLE \"T_kinds\" (id TEXT PRIMARY KEY, n DOUBLE PRECISION, i BIGINT, b BOOLEAN, "
                    "ts TIMESTAMP, arr JSONTEXT, js JSONTEXT, t TEXT, \"camelCase\" TEXT)");
    *state = st;
    return 0;
}

static int suite_teardown(void **state)
{
    struct sy_store *st = *state;
    sy_store_exec(st, "DROP TABLE IF EXISTS \"T_kinds\"", 0, NULL, NULL, NULL);
    sy_store_close(st);
    return 0;
}

static int json_same(const char *a, const char *b)
{
    struct json_object *x = json_tokener_parse(a), *y = json_tokener_parse(b);
    int same = x && y && json_object_equal(x, y);
    json_object_put(x);
    json_object_put(y);
    return same;
}

/* Copies of one row, kept past the callback. */
struct got {
    int rows;
    enum sy_sv_kind k[16];
    char s[16][256];
    int64_t i[16];
    double d[16];
    int ncols;
    char json[1024];
};

static int grab(void *ud, const struct sy_srow *r)
{
    struct got *g = ud;
    g->rows++;
    g->ncols = r->ncols;
    for (int c = 0; c < r->ncols && c < 16; c++) {
        g->k[c] = r->v[c].k;
        g->i[c] = r->v[c].i;
        g->d[c] = r->v[c].d;
        snprintf(g->s[c], sizeof g->s[c], "%s", r->v[c].s ? r->v[c].s : "");
        if (r->v[c].s)
            assert_int_equal(strlen(r->v[c].s), r->v[c].n); /* NUL-terminated, n right */
    }
    struct sy_buf b;
    sy_buf_init(&b, sizeof g->json - 1);
    sy_srow_json(&b, r);
    snprintf(g->json, sizeof g->json, "%s", b.p ? b.p : "");
    sy_buf_free(&b);
    return 0;
}

static void kinds_round_trip(void **state)
{
    struct sy_store *st = *state;
    struct sy_sval p[] = {
        sy_sv_text("k1"),
        sy_sv_num(1.25),
        sy_sv_int(9007199254740993LL),
        sy_sv_bool(1),
        sy_sv_ts("2026-12-03T19:00:00.123Z"),
        sy_sv_textarr("[\"a\",\"b \\\"c\\\"\",\"\",\"NULL\",null,\"x\\\\y,{z}\"]"),
        sy_sv_json("{\"a\":1,\"b\":[true,null]}"),
        sy_sv_textn("hello world", 5),
        sy_sv_text("cc"),
    };
    int rc = sy_store_exec(st,
                           "INSERT INTO \"T_kinds\" (id, n, i, b, ts, arr, js, t, \"camelCase\") "
                           "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                           9, p, NULL, NULL);
    assert_int_equal(rc, 1);
    assert_int_equal(sy_store_up(st), 1);

    struct got g = {0};
    struct sy_sval key = sy_sv_text("k1");
    rc = sy_store_exec(st, "SELECT id, n, i, b, ts, arr, js, t, \"camelCase\" FROM \"T_kinds\" WHERE id = $1", 1, &key,
                       grab, &g);
    assert_int_equal(rc, 1);
    assert_int_equal(g.rows, 1);
    assert_int_equal(g.ncols, 9);
    assert_int_equal(g.k[0], SY_SV_TEXT);
    assert_string_equal(g.s[0], "k1");
    assert_int_equal(g.k[1], SY_SV_NUM);
    assert_true(g.d[1] == 1.25);
    assert_int_equal(g.k[2], SY_SV_INT);
    assert_true(g.i[2] == 9007199254740993LL);
    assert_int_equal(g.k[3], SY_SV_BOOL);
    assert_int_equal(g.i[3], 1);
    assert_int_equal(g.k[4], SY_SV_TS);
    assert_string_equal(g.s[4], "2026-12-03T19:00:00.123Z");
    assert_int_equal(g.k[5], SY_SV_JSON);
    assert_true(json_same(g.s[5], "[\"a\",\"b \\\"c\\\"\",\"\",\"NULL\",null,\"x\\\\y,{z}\"]"));
    assert_int_equal(g.k[6], SY_SV_JSON);
    assert_true(json_same(g.s[6], "{\"a\":1,\"b\":[true,null]}"));
    assert_int_equal(g.k[7], SY_SV_TEXT);
    assert_string_equal(g.s[7], "hello");
    assert_string_equal(g.s[8], "cc");
    /* the row as JSON: TS as a string, JSON raw, BOOL as true */
    assert_true(json_same(g.json, "{\"id\":\"k1\",\"n\":1.25,\"i\":9007199254740993,\"b\":true,"
                                  "\"ts\":\"2026-12-03T19:00:00.123Z\","
                                  "\"arr\":[\"a\",\"b \\\"c\\\"\",\"\",\"NULL\",null,\"x\\\\y,{z}\"],"
                                  "\"js\":{\"a\":1,\"b\":[true,null]},\"t\":\"hello\",\"camelCase\":\"cc\"}"));
}

static int read_one(void *ud, const struct sy_srow *r)
{
    struct got *g = ud;
    g->rows++;
    const char *t = sy_srow_text(r, "t");
    snprintf(g->s[0], sizeof g->s[0], "%s", t ? t : "(null)");
    g->d[0] = sy_srow_num(r, "n", -1);
    g->i[0] = sy_srow_int(r, "i", -7);
    g->i[1] = sy_srow_int(r, "b", -7);
    g->k[0] = sy_srow_get(r, "ts") ? sy_srow_get(r, "ts")->k : SY_SV_TEXTARR;
    g->k[1] = sy_srow_get(r, "arr")->k;
    g->k[2] = sy_srow_get(r, "nope") ? SY_SV_TEXT : SY_SV_NULL;
    return 0;
}

static void nulls_and_helpers(void **state)
{
    struct sy_store *st = *state;
    struct sy_sval p[] = {sy_sv_text("k2"), sy_sv_null(),        sy_sv_null(),     sy_sv_bool(0),
                          sy_sv_ts(NULL),   sy_sv_textarr(NULL), sy_sv_json(NULL), sy_sv_text(NULL)};
    assert_int_equal(p[7].k, SY_SV_NULL);
    assert_int_equal(p[4].k, SY_SV_NULL);
    int rc = sy_store_exec(
        st, "INSERT INTO \"T_kinds\" (id, n, i, b, ts, arr, js, t) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", 8, p, NULL,
        NULL);
    assert_int_equal(rc, 1);
    struct got g = {0};
    rc = sy_store_exec(st, "SELECT * FROM \"T_kinds\" WHERE id = $1", 1, p, read_one, &g);
    assert_int_equal(rc, 1);
    assert_string_equal(g.s[0], "(null)");
    assert_true(g.d[0] == -1);
    assert_int_equal(g.i[0], -7);
    assert_int_equal(g.i[1], 0); /* false */
    assert_int_equal(g.k[0], SY_SV_NULL);
    assert_int_equal(g.k[1], SY_SV_NULL);
    assert_int_equal(g.k[2], SY_SV_NULL);
}

static int count_rows(void *ud, const struct sy_srow *r)
{
    (*(int *)ud)++;
    return 0;
}

static int stop_now(void *ud, const struct sy_srow *r)
{
    (*(int *)ud)++;
    return 1;
}

static int grab_ret(void *ud, const struct sy_srow *r)
{
    struct got *g = ud;
    g->rows++;
    snprintf(g->s[0], sizeof g->s[0], "%s", sy_srow_text(r, "id") ? sy_srow_text(r, "id") : "");
    g->d[0] = sy_srow_num(r, "n", -1);
    return 0;
}

static void returning_upsert_counts(void **state)
{
    struct sy_store *st = *state;
    const char *up = "INSERT INTO \"T_kinds\" (id, n, i) VALUES ($1, $2, $3) "
                     "ON CONFLICT (id) DO UPDATE SET n = \"T_kinds\".n + EXCLUDED.n, i = \"T_kinds\".i + EXCLUDED.i "
                     "RETURNING id, n";
    struct got g = {0};
    struct sy_sval p[] = {sy_sv_text("u1"), sy_sv_num(0.5), sy_sv_int(2)};
    assert_int_equal(sy_store_exec(st, up, 3, p, grab_ret, &g), 1);
    assert_string_equal(g.s[0], "u1");
    assert_true(g.d[0] == 0.5);
    p[1] = sy_sv_num(0.25);
    memset(&g, 0, sizeof g);
    assert_int_equal(sy_store_exec(st, up, 3, p, grab_ret, &g), 1);
    assert_true(g.d[0] == 0.75);
    /* RETURNING with no callback still counts */
    assert_int_equal(sy_store_exec(st, up, 3, p, NULL, NULL), 1);

    for (int k = 0; k < 5; k++) {
        char id[16];
        snprintf(id, sizeof id, "r%d", k);
        struct sy_sval q[] = {sy_sv_text(id), sy_sv_num(k), sy_sv_int(k)};
        assert_int_equal(sy_store_exec(st, "INSERT INTO \"T_kinds\" (id, n, i) VALUES ($1, $2, $3)", 3, q, NULL, NULL),
                         1);
    }
    struct sy_sval like = sy_sv_text("r%");
    assert_int_equal(sy_store_exec(st, "UPDATE \"T_kinds\" SET t = 'x' WHERE id LIKE $1", 1, &like, NULL, NULL), 5);
    int n = 0;
    assert_int_equal(
        sy_store_exec(st, "SELECT id FROM \"T_kinds\" WHERE id LIKE $1 ORDER BY id", 1, &like, count_rows, &n), 5);
    assert_int_equal(n, 5);
    n = 0;
    int rc = sy_store_exec(st, "SELECT id FROM \"T_kinds\" WHERE id LIKE $1 ORDER BY id", 1, &like, stop_now, &n);
    assert_true(rc >= 1);
    assert_int_equal(n, 1);
    /* a RETURNING whose callback stops early still applies every row */
    n = 0;
    rc = sy_store_exec(st, "UPDATE \"T_kinds\" SET i = 100 WHERE id LIKE $1 RETURNING id", 1, &like, stop_now, &n);
    assert_int_equal(n, 1);
    n = 0;
    sy_store_exec(st, "SELECT id FROM \"T_kinds\" WHERE i = 100", 0, NULL, count_rows, &n);
    assert_int_equal(n, 5);
    assert_int_equal(sy_store_exec(st, "DELETE FROM \"T_kinds\" WHERE id LIKE $1", 1, &like, NULL, NULL), 5);
    /* aggregates and casts: expression columns */
    memset(&g, 0, sizeof g);
    rc = sy_store_exec(st,
                       "SELECT COUNT(*) AS c, CAST(SUM(n) AS DOUBLE PRECISION) AS s, CAST(7 AS BIGINT) AS b, "
                       "CAST(12 AS TEXT) AS t FROM \"T_kinds\"",
                       0, NULL, grab, &g);
    assert_int_equal(rc, 1);
    assert_int_equal(g.k[0], SY_SV_INT);
    assert_int_equal(g.i[0], 1);
    assert_int_equal(g.k[1], SY_SV_NUM);
    assert_true(g.d[1] == 1.0);
    assert_int_equal(g.k[2], SY_SV_INT);
    assert_int_equal(g.i[2], 7);
    assert_int_equal(g.k[3], SY_SV_TEXT);
    assert_string_equal(g.s[3], "12");
}

static void transactions(void **state)
{
    struct sy_store *st = *state;
    struct sy_sval a = sy_sv_text("tx1"), b = sy_sv_text("tx2");
    assert_int_equal(sy_store_begin(st), 0);
    assert_int_equal(sy_store_exec(st, "INSERT INTO \"T_kinds\" (id) VALUES ($1)", 1, &a, NULL, NULL), 1);
    assert_int_equal(sy_store_rollback(st), 0);
    int n = 0;
    sy_store_exec(st, "SELECT id FROM \"T_kinds\" WHERE id = $1", 1, &a, count_rows, &n);
    assert_int_equal(n, 0);

    assert_int_equal(sy_store_begin(st), 0);
    assert_int_equal(sy_store_exec(st, "INSERT INTO \"T_kinds\" (id) VALUES ($1)", 1, &a, NULL, NULL), 1);
    assert_int_equal(sy_store_exec(st, "INSERT INTO \"T_kinds\" (id) VALUES ($1)", 1, &b, NULL, NULL), 1);
    assert_int_equal(sy_store_commit(st), 0);
    n = 0;
    sy_store_exec(st, "SELECT id FROM \"T_kinds\" WHERE id IN ($1, $2)", 2, (struct sy_sval[]){a, b}, count_rows, &n);
    assert_int_equal(n, 2);

    /* the statement cache: the same INSERT many times in one transaction */
    assert_int_equal(sy_store_begin(st), 0);
    for (int k = 0; k < 500; k++) {
        char id[16];
        snprintf(id, sizeof id, "bulk%03d", k);
        struct sy_sval q[] = {sy_sv_text(id), sy_sv_num(0.001)};
        assert_int_equal(sy_store_exec(st, "INSERT INTO \"T_kinds\" (id, n) VALUES ($1, $2)", 2, q, NULL, NULL), 1);
    }
    assert_int_equal(sy_store_commit(st), 0);
    struct got g = {0};
    sy_store_exec(st, "SELECT COUNT(*) AS c, SUM(n) AS s FROM \"T_kinds\" WHERE id LIKE 'bulk%'", 0, NULL, grab, &g);
    assert_int_equal(g.i[0], 500);
    assert_int_equal(g.k[1], SY_SV_NUM);
    assert_true(fabs(g.d[1] - 0.5) < 1e-9);
}

static void errors(void **state)
{
    struct sy_store *st = *state;
    struct sy_sval a = sy_sv_text("dup");
    assert_int_equal(sy_store_exec(st, "INSERT INTO \"T_kinds\" (id) VALUES ($1)", 1, &a, NULL, NULL), 1);
    assert_int_equal(sy_store_exec(st, "INSERT INTO \"T_kinds\" (id) VALUES ($1)", 1, &a, NULL, NULL),
                     SY_STORE_ECONFLICT);
    assert_true(strlen(sy_store_errmsg(st)) > 0);
    assert_int_equal(sy_store_exec(st, "SELEKT nonsense", 0, NULL, NULL, NULL), SY_STORE_EQUERY);
    assert_true(strlen(sy_store_errmsg(st)) > 0);
    assert_int_equal(sy_store_exec(st, "SELECT * FROM \"No_Such_Table\"", 0, NULL, NULL, NULL), SY_STORE_EQUERY);
    assert_int_equal(sy_store_up(st), 1); /* errors from a live database */
    /* a conflict inside a transaction, then rollback: the connection is usable */
    assert_int_equal(sy_store_begin(st), 0);
    assert_int_equal(sy_store_exec(st, "INSERT INTO \"T_kinds\" (id) VALUES ($1)", 1, &a, NULL, NULL),
                     SY_STORE_ECONFLICT);
    assert_int_equal(sy_store_rollback(st), 0);
    int n = 0;
    assert_int_equal(sy_store_exec(st, "SELECT id FROM \"T_kinds\"", 0, NULL, count_rows, &n), 1);
    assert_string_equal(sy_store_errmsg(st), "");
}

static void dollar_in_literal(void **state)
{
    struct sy_store *st = *state;
    struct got g = {0};
    struct sy_sval p[] = {sy_sv_text("param-one"), sy_sv_text("param-two")};
    int rc = sy_store_exec(st,
                           "SELECT '$1' AS lit, CAST($2 AS TEXT) AS two, 'it''s $2' AS lit2, CAST($1 AS TEXT) AS one "
                           "/* $1 */ -- $2\n",
                           2, p, grab, &g);
    assert_int_equal(rc, 1);
    assert_string_equal(g.s[0], "$1");
    assert_string_equal(g.s[1], "param-two");
    assert_string_equal(g.s[2], "it's $2");
    assert_string_equal(g.s[3], "param-one");
    /* a quoted identifier with a $1 in it */
    ok_exec(st, "DROP TABLE IF EXISTS \"T_$1\"");
    ok_exec(st, "CREATE TABLE \"T_$1\" (\"a$1\" TEXT)");
    assert_int_equal(sy_store_exec(st, "INSERT INTO \"T_$1\" (\"a$1\") VALUES ($1)", 1, p, NULL, NULL), 1);
    memset(&g, 0, sizeof g);
    assert_int_equal(sy_store_exec(st, "SELECT \"a$1\" FROM \"T_$1\" WHERE \"a$1\" = $1", 1, p, grab, &g), 1);
    assert_string_equal(g.s[0], "param-one");
    ok_exec(st, "DROP TABLE \"T_$1\"");
}

#define SUITE_TESTS                                                                            \
    cmocka_unit_test_setup_teardown(kinds_round_trip, suite_setup, suite_teardown),            \
        cmocka_unit_test_setup_teardown(nulls_and_helpers, suite_setup, suite_teardown),       \
        cmocka_unit_test_setup_teardown(returning_upsert_counts, suite_setup, suite_teardown), \
        cmocka_unit_test_setup_teardown(transactions, suite_setup, suite_teardown),            \
        cmocka_unit_test_setup_teardown(errors, suite_setup, suite_teardown),                  \
        cmocka_unit_test_setup_teardown(dollar_in_literal, suite_setup, suite_teardown)

#ifndef STORE_SUITE_NO_MAIN

/* SQLite only: the declared-type mapping, URL forms, bad paths, a busy
 * database. */
static void sqlite_specifics(void **state)
{
    struct sy_store *st = *state;
    assert_int_equal(sy_store_kind(st), SY_STORE_SQLITE);
    assert_int_equal(sy_store_url_kind("postgresql://u@h/db"), SY_STORE_POSTGRES);
    assert_int_equal(sy_store_url_kind("postgres://u@h/db"), SY_STORE_POSTGRES);
    assert_int_equal(sy_store_url_kind("sqlite:///tmp/x.db"), SY_STORE_SQLITE);
    assert_int_equal(sy_store_url_kind("x.db"), SY_STORE_SQLITE);
    /* TIMESTAMP text written by SQLite's CURRENT_TIMESTAMP is normalised */
    ok_exec(st, "INSERT INTO \"T_kinds\" (id, ts, b) VALUES ('cur', '2026-01-02 03:04:05', 'true')");
    struct got g = {0};
    assert_int_equal(sy_store_exec(st, "SELECT ts, b FROM \"T_kinds\" WHERE id = 'cur'", 0, NULL, grab, &g), 1);
    assert_int_equal(g.k[0], SY_SV_TS);
    assert_string_equal(g.s[0], "2026-01-02T03:04:05.000Z");
    assert_int_equal(g.k[1], SY_SV_BOOL);
    assert_int_equal(g.i[1], 1);
    /* a second statement in one call is refused */
    assert_int_equal(sy_store_exec(st, "SELECT 1; SELECT 2", 0, NULL, NULL, NULL), SY_STORE_EQUERY);

    char err[256];
    struct sy_store_conf bad = {.url = "sqlite:///nonexistent-dir-sy/x/y.db"};
    assert_null(sy_store_open(&bad, err, sizeof err));
    assert_true(strlen(err) > 0);

    /* another connection holding the write lock: BUSY after the timeout -> EDOWN */
    struct sy_store_conf c2 = {.url = suite_url, .busy_timeout_s = 0.2};
    struct sy_store *a = sy_store_open(&c2, err, sizeof err), *b = sy_store_open(&c2, err, sizeof err);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(sy_store_begin(a), 0);
    ok_exec(a, "INSERT INTO \"T_kinds\" (id) VALUES ('lock')");
    assert_int_equal(sy_store_exec(b, "INSERT INTO \"T_kinds\" (id) VALUES ('lock2')", 0, NULL, NULL, NULL),
                     SY_STORE_EDOWN);
    assert_int_equal(sy_store_up(b), 0);
    assert_int_equal(sy_store_commit(a), 0);
    assert_int_equal(sy_store_exec(b, "INSERT INTO \"T_kinds\" (id) VALUES ('lock2')", 0, NULL, NULL, NULL), 1);
    assert_int_equal(sy_store_up(b), 1);
    sy_store_close(a);
    sy_store_close(b);
}

/* Rows written with bytes that are not UTF-8 (SQLite keeps any bytes as
 * TEXT; such rows predate the management API's input gate, or came from
 * another program): inserted here by SQL, bypassing every API, they still
 * come out of sy_srow_json as valid UTF-8 and valid JSON, each bad byte as
 * U+FFFD, in a text cell, a JSON cell, an array cell and a column name. */
static void bad_utf8_rows(void **state)
{
    struct sy_store *st = *state;
    /* t = "a" FF "b" C3A9 (e-acute, valid) ED A080 (a surrogate) "c" E282 (cut short)
     * js = {"a":"x" C0AF "y"}   arr = ["p" 80]   column alias "n" FE */
    ok_exec(st, "INSERT INTO \"T_kinds\" (id, t, js, arr) VALUES ('bad', CAST(X'61ff62c3a9eda08063e282' AS TEXT), "
                "CAST(X'7b2261223a2278c0af79227d' AS TEXT), CAST(X'5b227080225d' AS TEXT))");
    struct got g = {0};
    assert_int_equal(sy_store_exec(st,
                                   "SELECT t, js, arr, t AS \"n\xfe\" FROM \"T_kinds\" WHERE id = 'bad' "
                                   "AND length(CAST(t AS BLOB)) = 11",
                                   0, NULL, grab, &g),
                     1);
    assert_int_equal(g.rows, 1); /* the bytes were stored as written */
    assert_int_equal(g.k[0], SY_SV_TEXT);
    assert_int_equal(g.k[1], SY_SV_JSON);
    size_t n = strlen(g.json);
    assert_int_equal(sy_utf8_check(g.json, n), n);
    struct json_tokener *tok = json_tokener_new();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    struct json_object *o = json_tokener_parse_ex(tok, g.json, (int)n);
    assert_int_equal(json_tokener_get_error(tok), json_tokener_success);
    json_tokener_free(tok);
    assert_non_null(o);
    struct json_object *v;
    assert_true(json_object_object_get_ex(o, "t", &v));
    assert_string_equal(json_object_get_string(v), "a\xef\xbf\xbd"
                                                   "b\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                                                   "c\xef\xbf\xbd\xef\xbf\xbd");
    assert_true(json_object_object_get_ex(o, "js", &v));
    assert_true(json_same(json_object_to_json_string(v), "{\"a\":\"x\\ufffd\\ufffdy\"}"));
    assert_true(json_object_object_get_ex(o, "arr", &v));
    assert_true(json_same(json_object_to_json_string(v), "[\"p\\ufffd\"]"));
    assert_true(json_object_object_get_ex(o, "n\xef\xbf\xbd", &v));
    json_object_put(o);
}

int main(void)
{
    static char path[512], url[600];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/sy-test-sqlite-%d.db", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    snprintf(url, sizeof url, "sqlite://%s", path);
    suite_url = url;
    const struct CMUnitTest tests[] = {
        SUITE_TESTS,
        cmocka_unit_test_setup_teardown(sqlite_specifics, suite_setup, suite_teardown),
        cmocka_unit_test_setup_teardown(bad_utf8_rows, suite_setup, suite_teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char f[600];
    unlink(path);
    snprintf(f, sizeof f, "%s-wal", path);
    unlink(f);
    snprintf(f, sizeof f, "%s-shm", path);
    unlink(f);
    return rc;
}
#endif
