/* test_activity.c - the daily-activity routes (admin/activity.c) on SQLite:
 * the query parsers, the grouping and totals over seeded LiteLLM_Daily*Spend
 * rows, paging, and scoping for a non-admin caller (own user, own teams from
 * LiteLLM_UserTable.teams, own keys' tag rows).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <http_parser.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin/activity.h"
#include "admin/admin.h"
#include "store/store.h"

static struct sy_store *g_st;
static char g_path[256];

static void exec_ok(const char *sql, int n, const struct sy_sval *p)
{
    int rc = sy_store_exec(g_st, sql, n, p, NULL, NULL);
    if (rc < 0)
        fprintf(stderr, "SQL failed: %s\n", sy_store_errmsg(g_st));
    assert_true(rc >= 0);
}

static void daily(const char *table, const char *col, const char *id, const char *ent, const char *date,
                  const char *key, const char *model, double spend, int64_t req)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT INTO \"%s\" (id, %s, date, api_key, model, custom_llm_provider, prompt_tokens, completion_tokens,"
             " spend, api_requests, successful_requests, failed_requests, updated_at)"
             " VALUES ($1, $2, $3, $4, $5, 'openai', 10, 5, $6, $7, $7, 0, '2026-03-01T00:00:00.000Z')",
             table, col);
    struct sy_sval p[] = {sy_sv_text(id),    sy_sv_text(ent),  sy_sv_text(date), sy_sv_text(key),
                          sy_sv_text(model), sy_sv_num(spend), sy_sv_int(req)};
    exec_ok(sql, 7, p);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_path, sizeof g_path, "%s/sy_test_activity_%d.db", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    unlink(g_path);
    char err[512] = "";
    struct sy_store_conf sc = {.url = g_path};
    if (!(g_st = sy_store_open(&sc, err, sizeof err)) || sy_store_migrate(g_st) != 0)
        return -1;
    daily("LiteLLM_DailyUserSpend", "user_id", "1", "u1", "2026-03-01", "k1", "gpt-4o", 1.0, 2);
    daily("LiteLLM_DailyUserSpend", "user_id", "2", "u1", "2026-03-02", "k1", "gpt-4o-mini", 0.5, 1);
    daily("LiteLLM_DailyUserSpend", "user_id", "3", "u2", "2026-03-02", "k2", "gpt-4o", 4.0, 3);
    daily("LiteLLM_DailyUserSpend", "user_id", "4", "u2", "2026-02-01", "k2", "gpt-4o", 100.0, 9);
    daily("LiteLLM_DailyTeamSpend", "team_id", "5", "t1", "2026-03-01", "k1", "gpt-4o", 1.0, 2);
    daily("LiteLLM_DailyTeamSpend", "team_id", "6", "t2", "2026-03-02", "k2", "gpt-4o", 4.0, 3);
    daily("LiteLLM_DailyTagSpend", "tag", "7", "a", "2026-03-01", "k1", "gpt-4o", 1.0, 2);
    daily("LiteLLM_DailyTagSpend", "tag", "8", "b", "2026-03-02", "k2", "gpt-4o", 4.0, 3);
    struct sy_sval u[] = {sy_sv_text("u1"), sy_sv_textarr("[\"t1\"]")};
    exec_ok("INSERT INTO \"LiteLLM_UserTable\" (user_id, teams) VALUES ($1, $2)", 2, u);
    struct sy_sval k[] = {sy_sv_text("k1"), sy_sv_text("u1")};
    exec_ok("INSERT INTO \"LiteLLM_VerificationToken\" (token, user_id, key_alias) VALUES ($1, $2, 'alias-1')", 2, k);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sy_store_close(g_st);
    unlink(g_path);
    return 0;
}

/* Call route with query; admin, or a non-admin caller with user_id uid. */
static json_object *call(const char *path, const char *query, const char *uid, int *status)
{
    int known = 0;
    const struct sy_admin_route *r = sy_admin_match(HTTP_GET, path, strlen(path), &known);
    assert_non_null(r);
    struct sy_admin_ctx a;
    memset(&a, 0, sizeof a);
    a.method = HTTP_GET;
    a.path = path;
    a.query = query;
    a.body = "";
    a.is_admin = uid == NULL;
    a.caller_user_id = uid;
    a.status = 200;
    sy_buf_init(&a.out, 64u << 20);
    r->fn(g_st, &a);
    json_object *o = json_tokener_parse(a.out.p ? a.out.p : "");
    if (!o || getenv("SY_TEST_VERBOSE"))
        fprintf(stderr, "%s?%s -> %d %s\n", path, query, a.status, a.out.p ? a.out.p : "");
    *status = a.status;
    sy_buf_free(&a.out);
    return o;
}

static json_object *get(json_object *o, const char *dotted)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", dotted);
    for (char *save = NULL, *t = strtok_r(buf, ".", &save); t && o; t = strtok_r(NULL, ".", &save))
        if (!json_object_object_get_ex(o, t, &o))
            return NULL;
    return o;
}

static double num(json_object *o, const char *dotted)
{
    json_object *v = get(o, dotted);
    assert_non_null(v);
    return json_object_get_double(v);
}

static void test_parsers(void **state)
{
    (void)state;
    assert_int_equal(sy_activity_ymd("2024-02-29"), 0);
    assert_int_equal(sy_activity_ymd("2026-12-31"), 0);
    const char *bad[] = {"2026-02-29",  "2026-13-01", "2026-00-10", "2026-04-31", "2026-1-01",
                         "2026-01-01 ", "+026-01-01", "",           "2026/01/01", "1900-02-29"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(sy_activity_ymd(bad[i]), -1);
    static char out[4][256];
    assert_int_equal(sy_activity_list(" a , b,,c ", out, 4), 3);
    assert_string_equal(out[0], "a");
    assert_string_equal(out[1], "b");
    assert_string_equal(out[2], "c");
    assert_int_equal(sy_activity_list(",, ,", out, 4), 0);
    assert_int_equal(sy_activity_list("a,b,c,d,e", out, 4), -1);
    char big[300];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    assert_int_equal(sy_activity_list(big, out, 4), -1);
}

static void test_user_totals_and_days(void **state)
{
    (void)state;
    int st;
    json_object *o = call("/user/daily/activity", "start_date=2026-03-01&end_date=2026-03-31", NULL, &st);
    assert_int_equal(st, 200);
    assert_true(fabs(num(o, "metadata.total_spend") - 5.5) < 1e-9);
    assert_int_equal((int)num(o, "metadata.total_api_requests"), 6);
    assert_int_equal((int)num(o, "metadata.total_tokens"), 45);
    json_object *res = get(o, "results");
    assert_int_equal(json_object_array_length(res), 2);
    json_object *d0 = json_object_array_get_idx(res, 0); /* newest first */
    assert_string_equal(json_object_get_string(get(d0, "date")), "2026-03-02");
    assert_true(fabs(num(d0, "metrics.spend") - 4.5) < 1e-9);
    assert_int_equal((int)num(d0, "breakdown.entities.u2.metrics.api_requests"), 3);
    json_object *d1 = json_object_array_get_idx(res, 1);
    assert_string_equal(json_object_get_string(get(d1, "breakdown.api_keys.k1.metadata.key_alias")), "alias-1");
    json_object_put(o);
    /* page_size 1: three groups, three pages */
    o = call("/user/daily/activity", "start_date=2026-03-01&end_date=2026-03-31&page_size=1&page=2", NULL, &st);
    assert_int_equal((int)num(o, "metadata.total_pages"), 3);
    assert_true(json_object_get_boolean(get(o, "metadata.has_more")));
    json_object_put(o);
    o = call("/user/daily/activity", "start_date=2026-03-01", NULL, &st);
    assert_int_equal(st, 400);
    json_object_put(o);
    o = call("/user/daily/activity", "start_date=2026-03-01&end_date=2026-03-32", NULL, &st);
    assert_int_equal(st, 400);
    json_object_put(o);
    o = call("/user/daily/activity", "start_date=2026-03-01&end_date=2026-03-31&page_size=1001", NULL, &st);
    assert_int_equal(st, 422);
    json_object_put(o);
}

static void test_scoping(void **state)
{
    (void)state;
    int st;
    const char *range = "start_date=2026-01-01&end_date=2026-12-31";
    json_object *o = call("/user/daily/activity", range, "u1", &st);
    assert_int_equal(st, 200);
    assert_int_equal((int)num(o, "metadata.total_api_requests"), 3);
    json_object_put(o);
    char q[256];
    snprintf(q, sizeof q, "%s&user_id=u2", range);
    o = call("/user/daily/activity", q, "u1", &st);
    assert_int_equal(st, 403);
    json_object_put(o);
    o = call("/team/daily/activity", range, "u1", &st);
    assert_int_equal(st, 200);
    assert_int_equal((int)num(o, "metadata.total_api_requests"), 2);
    json_object_put(o);
    snprintf(q, sizeof q, "%s&team_ids=t2", range);
    o = call("/team/daily/activity", q, "u1", &st);
    assert_int_equal(st, 403);
    json_object_put(o);
    o = call("/tag/daily/activity", range, "u1", &st);
    assert_int_equal(st, 200);
    assert_int_equal((int)num(o, "metadata.total_api_requests"), 2); /* k1's rows only */
    json_object_put(o);
    o = call("/team/daily/activity", range, "nobody", &st); /* no user row: no teams, nothing */
    assert_int_equal(st, 200);
    assert_int_equal((int)num(o, "metadata.total_api_requests"), 0);
    json_object_put(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parsers),
        cmocka_unit_test(test_user_totals_and_days),
        cmocka_unit_test(test_scoping),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
