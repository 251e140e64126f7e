/* test_writer.c - the spend writer thread (src/spend/writer.c) on SQLite, and
 * on PostgreSQL when SY_TEST_PG_URL is set.
 *
 * Covered: 10,000 records -> 10,000 LiteLLM_SpendLogs rows with LiteLLM's
 * field values (cache_hit 'False', "user", metadata.user_api_key, ...), the
 * entity spend equal to the sum, the daily aggregates summed per (entity,
 * date, api_key, model, provider); settlement of reserved amounts; a
 * duplicate request_id written once; disable_spend_logs; a database that is
 * unavailable (SQLite: another connection holding an exclusive transaction;
 * PostgreSQL: a server that does not answer) - records queue and are all
 * written when it is back; queue overflow counted; stop flushes; stop with the
 * database down gives up after its timeout; the guardrails that ran in the
 * metadata (guardrail_information, applied_guardrails).
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
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "spend/spend.h"
#include "store/dbpool.h"
#include "store/store.h"

static const char *url;
static char sqlite_path[256];
static struct sy_store *st; /* the test's own connection */

static struct sy_store *open_url(const char *u)
{
    struct sy_store_conf conf = {.url = u, .connect_timeout_s = 3, .busy_timeout_s = 0.3};
    char err[256];
    struct sy_store *s = sy_store_open(&conf, err, sizeof err);
    if (!s)
        fail_msg("open %s: %s", u, err);
    return s;
}

static void exec_ok(const char *sql)
{
    int rc = sy_store_exec(st, sql, 0, NULL, NULL, NULL);
    if (rc < 0)
        fail_msg("%s: %s", sql, sy_store_errmsg(st));
}

static int num_cb(void *ud, const struct sy_srow *r)
{
    const struct sy_sval *v = &r->v[0];
    *(double *)ud = v->k == SY_SV_NUM ? v->d : v->k == SY_SV_INT ? (double)v->i : NAN;
    return 1;
}

static double num(const char *sql)
{
    double d = NAN;
    int rc = sy_store_exec(st, sql, 0, NULL, num_cb, &d);
    if (rc < 0)
        fail_msg("%s: %s", sql, sy_store_errmsg(st));
    return d;
}

struct rowcopy {
    char *json;
};

static int row_cb(void *ud, const struct sy_srow *r)
{
    struct rowcopy *c = ud;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    sy_srow_json(&b, r);
    c->json = strdup(b.p);
    sy_buf_free(&b);
    return 1;
}

/* One row as a JSON object (caller puts it). */
static struct json_object *row(const char *sql)
{
    struct rowcopy c = {0};
    int rc = sy_store_exec(st, sql, 0, NULL, row_cb, &c);
    if (rc < 0)
        fail_msg("%s: %s", sql, sy_store_errmsg(st));
    if (!c.json)
        fail_msg("no row: %s", sql);
    struct json_object *o = json_tokener_parse(c.json);
    free(c.json);
    return o;
}

static const char *jstr(struct json_object *o, const char *k)
{
    struct json_object *v;
    if (!json_object_object_get_ex(o, k, &v) || !v)
        return NULL;
    return json_object_get_string(v);
}

static void seed(void)
{
    static const char *const tables[] = {"LiteLLM_VerificationToken", "LiteLLM_UserTable",
                                         "LiteLLM_TeamTable",         "LiteLLM_TeamMembership",
                                         "LiteLLM_EndUserTable",      "LiteLLM_OrganizationTable",
                                         "LiteLLM_SpendLogs",         "LiteLLM_DailyUserSpend",
                                         "LiteLLM_DailyTeamSpend",    "LiteLLM_DailyOrganizationSpend",
                                         "LiteLLM_DailyEndUserSpend"};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "DELETE FROM \"%s\"", tables[i]);
        exec_ok(sql);
    }
    exec_ok("INSERT INTO \"LiteLLM_VerificationToken\" (\"token\", \"spend\", \"max_budget\") VALUES ('k1', 0, 100)");
    exec_ok("INSERT INTO \"LiteLLM_UserTable\" (\"user_id\", \"spend\") VALUES ('u1', 0)");
    exec_ok("INSERT INTO \"LiteLLM_TeamTable\" (\"team_id\", \"spend\") VALUES ('t1', 0)");
    exec_ok("INSERT INTO \"LiteLLM_TeamMembership\" (\"team_id\", \"user_id\", \"spend\") VALUES ('t1', 'u1', 0)");
    exec_ok("INSERT INTO \"LiteLLM_EndUserTable\" (\"user_id\", \"spend\") VALUES ('eu1', 0)");
    exec_ok("INSERT INTO \"LiteLLM_OrganizationTable\" (\"organization_id\", \"organization_alias\", \"budget_id\", "
            "\"spend\", \"created_by\", \"updated_by\") VALUES ('o1', 'org', 'b1', 0, 'x', 'x')");
}

static void mkrec(struct sy_spend_rec *r, char *idbuf, int i, double spend)
{
    memset(r, 0, sizeof *r);
    snprintf(idbuf, 64, "req-%06d", i);
    r->request_id = idbuf;
    r->call_type = "acompletion";
    r->status = i % 10 == 9 ? "failure" : "success";
    r->usage_source = i % 10 == 9 ? "counted" : "provider"; /* the failures: a client that left mid-stream */
    r->stream_cut = i % 10 == 9;
    r->api_key = "k1";
    r->key_alias = "alias-1";
    r->user_id = "u1";
    r->team_id = "t1";
    r->org_id = "o1";
    r->end_user = "eu1";
    r->model = i % 2 ? "gpt-4o" : "gpt-4o-mini";
    r->model_id = "dep-1";
    r->model_group = "gpt-4o";
    r->custom_llm_provider = "openai";
    r->api_base = "https://api.openai.com/v1";
    r->requester_ip = "127.0.0.1";
    r->spend = spend;
    r->usage.prompt_tokens = 10;
    r->usage.completion_tokens = 20;
    r->usage.cached_tokens = 3;
    r->usage.cache_creation_tokens = 1;
    r->start_s = 1767225600.0; /* 2026-01-01T00:00:00Z */
    r->end_s = r->start_s + 1.25;
    r->completion_start_s = r->start_s + 0.4;
    for (int e = 0; e < SY_ENT__COUNT; e++)
        r->has_entity[e] = 1;
}

static struct sy_spend_conf wconf(void)
{
    struct sy_spend_conf c = {
        .batch_interval_s = 0.05, .max_queue = 100000, .disable_spend_logs = 0, .reset_interval_s = 3600};
    return c;
}

static int group_setup(void **state)
{
    (void)state;
    struct sy_store_conf conf = {.url = url, .connect_timeout_s = 3, .busy_timeout_s = 0.3};
    char err[256];
    if (sy_db_start(&conf, 1, 1, err, sizeof err) < 0)
        fail_msg("db start: %s", err);
    st = open_url(url);
    if (sy_store_migrate(st) < 0)
        fail_msg("migrate: %s", sy_store_errmsg(st));
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    sy_store_close(st);
    st = NULL;
    sy_db_stop();
    return 0;
}

/* ---- tests ---- */

static void test_10k(void **state)
{
    (void)state;
    seed();
    struct sy_spend_conf c = wconf();
    assert_int_equal(sy_spend_start(&c), 0);
    char id[64];
    struct sy_spend_rec r;
    struct timespec a, b, f;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < 10000; i++) {
        mkrec(&r, id, i, 0.001);
        assert_int_equal(sy_spend_record(&r), 0);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    sy_spend_flush();
    sy_spend_flush();
    clock_gettime(CLOCK_MONOTONIC, &f);
    fprintf(stderr, "  10000 records: sy_spend_record %.0f ns each; written in %.3f s\n",
            ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 10000,
            (double)(f.tv_sec - b.tv_sec) + (double)(f.tv_nsec - b.tv_nsec) / 1e9);
    struct sy_spend_stats s;
    sy_spend_stats(&s);
    assert_int_equal(s.queued, 10000);
    assert_int_equal(s.written, 10000);
    assert_int_equal(s.pending, 0);
    assert_int_equal(s.dropped, 0);
    assert_true(num("SELECT COUNT(*) FROM \"LiteLLM_SpendLogs\"") == 10000);
    assert_true(fabs(num("SELECT SUM(\"spend\") FROM \"LiteLLM_SpendLogs\"") - 10.0) < 1e-6);
    static const char *const ent[] = {
        "SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = 'k1'",
        "SELECT \"spend\" FROM \"LiteLLM_UserTable\" WHERE \"user_id\" = 'u1'",
        "SELECT \"spend\" FROM \"LiteLLM_TeamTable\" WHERE \"team_id\" = 't1'",
        "SELECT \"spend\" FROM \"LiteLLM_TeamMembership\" WHERE \"team_id\" = 't1' AND \"user_id\" = 'u1'",
        "SELECT \"spend\" FROM \"LiteLLM_EndUserTable\" WHERE \"user_id\" = 'eu1'",
        "SELECT \"spend\" FROM \"LiteLLM_OrganizationTable\" WHERE \"organization_id\" = 'o1'",
    };
    for (size_t i = 0; i < sizeof ent / sizeof ent[0]; i++)
        assert_true(fabs(num(ent[i]) - 10.0) < 1e-6);

    /* one row's fields, as LiteLLM writes them */
    struct json_object *o = row("SELECT * FROM \"LiteLLM_SpendLogs\" WHERE \"request_id\" = 'req-000009'");
    assert_string_equal(jstr(o, "call_type"), "acompletion");
    assert_string_equal(jstr(o, "api_key"), "k1");
    assert_string_equal(jstr(o, "user"), "u1");
    assert_string_equal(jstr(o, "team_id"), "t1");
    assert_string_equal(jstr(o, "organization_id"), "o1");
    assert_string_equal(jstr(o, "end_user"), "eu1");
    assert_string_equal(jstr(o, "model"), "gpt-4o");
    assert_string_equal(jstr(o, "model_id"), "dep-1");
    assert_string_equal(jstr(o, "model_group"), "gpt-4o");
    assert_string_equal(jstr(o, "custom_llm_provider"), "openai");
    assert_string_equal(jstr(o, "api_base"), "https://api.openai.com/v1");
    assert_string_equal(jstr(o, "cache_hit"), "False");
    assert_string_equal(jstr(o, "cache_key"), "Cache OFF");
    assert_string_equal(jstr(o, "status"), "failure");
    assert_string_equal(jstr(o, "requester_ip_address"), "127.0.0.1");
    assert_string_equal(jstr(o, "startTime"), "2026-01-01T00:00:00.000Z");
    assert_string_equal(jstr(o, "endTime"), "2026-01-01T00:00:01.250Z");
    assert_string_equal(jstr(o, "completionStartTime"), "2026-01-01T00:00:00.400Z");
    struct json_object *v;
    assert_true(json_object_object_get_ex(o, "total_tokens", &v) && json_object_get_int(v) == 30);
    assert_true(json_object_object_get_ex(o, "prompt_tokens", &v) && json_object_get_int(v) == 10);
    assert_true(json_object_object_get_ex(o, "request_duration_ms", &v) && json_object_get_int(v) == 1250);
    struct json_object *meta, *tags;
    assert_true(json_object_object_get_ex(o, "metadata", &meta) && json_object_is_type(meta, json_type_object));
    assert_string_equal(jstr(meta, "user_api_key"), "k1");
    assert_string_equal(jstr(meta, "user_api_key_alias"), "alias-1");
    assert_string_equal(jstr(meta, "user_api_key_team_id"), "t1");
    assert_string_equal(jstr(meta, "user_api_key_user_id"), "u1");
    assert_string_equal(jstr(meta, "user_api_key_org_id"), "o1");
    assert_string_equal(jstr(meta, "status"), "failure");
    struct json_object *uo;
    assert_true(json_object_object_get_ex(meta, "usage_object", &uo));
    assert_true(json_object_object_get_ex(uo, "cache_read_input_tokens", &v) && json_object_get_int(v) == 3);
    assert_string_equal(jstr(meta, "usage_source"), "counted");
    assert_true(json_object_object_get_ex(meta, "stream_cut", &v) && json_object_get_boolean(v));
    assert_true(json_object_object_get_ex(o, "request_tags", &tags) && json_object_is_type(tags, json_type_array));
    json_object_put(o);

    /* daily aggregates: one row per model, same day, summed */
    static const char *const daily[] = {"LiteLLM_DailyUserSpend", "LiteLLM_DailyTeamSpend",
                                        "LiteLLM_DailyOrganizationSpend", "LiteLLM_DailyEndUserSpend"};
    for (size_t i = 0; i < 4; i++) {
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM \"%s\"", daily[i]);
        assert_true(num(sql) == 2);
        snprintf(sql, sizeof sql, "SELECT SUM(\"api_requests\") FROM \"%s\"", daily[i]);
        assert_true(num(sql) == 10000);
        snprintf(sql, sizeof sql, "SELECT SUM(\"failed_requests\") FROM \"%s\"", daily[i]);
        assert_true(num(sql) == 1000);
        snprintf(sql, sizeof sql, "SELECT SUM(\"successful_requests\") FROM \"%s\"", daily[i]);
        assert_true(num(sql) == 9000);
        snprintf(sql, sizeof sql, "SELECT SUM(\"prompt_tokens\") FROM \"%s\"", daily[i]);
        assert_true(num(sql) == 100000);
        snprintf(sql, sizeof sql, "SELECT SUM(\"cache_read_input_tokens\") FROM \"%s\"", daily[i]);
        assert_true(num(sql) == 30000);
        snprintf(sql, sizeof sql, "SELECT SUM(\"spend\") FROM \"%s\"", daily[i]);
        assert_true(fabs(num(sql) - 10.0) < 1e-6);
    }
    o = row("SELECT * FROM \"LiteLLM_DailyTeamSpend\" WHERE \"model\" = 'gpt-4o'");
    assert_string_equal(jstr(o, "team_id"), "t1");
    assert_string_equal(jstr(o, "date"), "2026-01-01");
    assert_string_equal(jstr(o, "api_key"), "k1");
    assert_string_equal(jstr(o, "custom_llm_provider"), "openai");
    assert_string_equal(jstr(o, "model_group"), "gpt-4o");
    assert_int_equal(strlen(jstr(o, "id")), 36);
    json_object_put(o);

    /* a second flush of more rows adds to the same daily rows */
    for (int i = 10000; i < 10010; i++) {
        mkrec(&r, id, i, 0.5);
        sy_spend_record(&r);
    }
    sy_spend_flush();
    assert_true(num("SELECT COUNT(*) FROM \"LiteLLM_DailyUserSpend\"") == 2);
    assert_true(num("SELECT SUM(\"api_requests\") FROM \"LiteLLM_DailyUserSpend\"") == 10010);
    assert_true(fabs(num("SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = 'k1'") - 15.0) < 1e-6);
    sy_spend_stop(5);
}

static void test_settle_reserved(void **state)
{
    (void)state;
    seed();
    /* the reservation already added the worst case (5) to the key and the team */
    struct sy_reserve rv;
    memset(&rv, 0, sizeof rv);
    rv.id[SY_ENT_KEY] = "k1";
    rv.max_budget[SY_ENT_KEY] = 100;
    rv.id[SY_ENT_TEAM] = "t1";
    rv.max_budget[SY_ENT_TEAM] = 100;
    rv.amount = 5;
    assert_int_equal(sy_reserve_take(st, &rv), 0);
    assert_int_equal(rv.refused, 0);
    assert_true(num("SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = 'k1'") == 5);

    struct sy_spend_conf c = wconf();
    assert_int_equal(sy_spend_start(&c), 0);
    char id[64];
    struct sy_spend_rec r;
    mkrec(&r, id, 1, 1.25);
    r.reserved[SY_ENT_KEY] = 5;
    r.reserved[SY_ENT_TEAM] = 5;
    r.has_entity[SY_ENT_END_USER] = 0; /* unknown end user: no entity spend */
    assert_int_equal(sy_spend_record(&r), 0);
    /* the same request id again: one SpendLogs row only */
    assert_int_equal(sy_spend_record(&r), 0);
    sy_spend_flush();
    assert_true(num("SELECT COUNT(*) FROM \"LiteLLM_SpendLogs\"") == 1);
    assert_true(fabs(num("SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = 'k1'") -
                     (5 + 2 * (1.25 - 5))) < 1e-9);
    assert_true(fabs(num("SELECT \"spend\" FROM \"LiteLLM_UserTable\" WHERE \"user_id\" = 'u1'") - 2.5) < 1e-9);
    assert_true(num("SELECT \"spend\" FROM \"LiteLLM_EndUserTable\" WHERE \"user_id\" = 'eu1'") == 0);
    sy_spend_stop(5);

    /* one request, reserved and settled */
    seed();
    assert_int_equal(sy_reserve_take(st, &rv), 0);
    assert_int_equal(sy_spend_start(&c), 0);
    mkrec(&r, id, 2, 1.25);
    r.reserved[SY_ENT_KEY] = 5;
    r.reserved[SY_ENT_TEAM] = 5;
    sy_spend_record(&r);
    sy_spend_flush();
    assert_true(fabs(num("SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = 'k1'") - 1.25) < 1e-9);
    assert_true(fabs(num("SELECT \"spend\" FROM \"LiteLLM_TeamTable\" WHERE \"team_id\" = 't1'") - 1.25) < 1e-9);
    assert_true(fabs(num("SELECT \"spend\" FROM \"LiteLLM_UserTable\" WHERE \"user_id\" = 'u1'") - 1.25) < 1e-9);
    sy_spend_stop(5);
}

static void test_disable_spend_logs(void **state)
{
    (void)state;
    seed();
    struct sy_spend_conf c = wconf();
    c.disable_spend_logs = 1;
    assert_int_equal(sy_spend_start(&c), 0);
    char id[64];
    struct sy_spend_rec r;
    for (int i = 0; i < 10; i++) {
        mkrec(&r, id, i, 0.25);
        sy_spend_record(&r);
    }
    sy_spend_flush();
    assert_true(num("SELECT COUNT(*) FROM \"LiteLLM_SpendLogs\"") == 0);
    assert_true(fabs(num("SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = 'k1'") - 2.5) < 1e-9);
    assert_true(num("SELECT SUM(\"api_requests\") FROM \"LiteLLM_DailyUserSpend\"") == 10);
    sy_spend_stop(5);
}

static void test_stop_flushes(void **state)
{
    (void)state;
    seed();
    struct sy_spend_conf c = wconf();
    c.batch_interval_s = 60;
    assert_int_equal(sy_spend_start(&c), 0);
    char id[64];
    struct sy_spend_rec r;
    for (int i = 0; i < 50; i++) {
        mkrec(&r, id, i, 0.1);
        sy_spend_record(&r);
    }
    sy_spend_stop(5);
    assert_true(num("SELECT COUNT(*) FROM \"LiteLLM_SpendLogs\"") == 50);
    struct sy_spend_stats s;
    sy_spend_stats(&s);
    assert_int_equal(s.written, 50);
    /* stopped: records are refused */
    assert_int_equal(sy_spend_record(&r), -1);
}

/* SQLite: a second connection holds an exclusive transaction. */
static struct sy_store *lock_db(void)
{
    struct sy_store *l = open_url(url);
    if (sy_store_exec(l, "BEGIN EXCLUSIVE", 0, NULL, NULL, NULL) < 0)
        fail_msg("lock: %s", sy_store_errmsg(l));
    /* make it hold the write lock for real */
    if (sy_store_exec(l, "UPDATE \"LiteLLM_UserTable\" SET \"spend\" = \"spend\" WHERE \"user_id\" = 'u1'", 0, NULL,
                      NULL, NULL) < 0)
        fail_msg("lock: %s", sy_store_errmsg(l));
    return l;
}

static void unlock_db(struct sy_store *l)
{
    sy_store_exec(l, "COMMIT", 0, NULL, NULL, NULL);
    sy_store_close(l);
}

static void test_db_unavailable(void **state)
{
    (void)state;
    if (sy_store_url_kind(url) != SY_STORE_SQLITE)
        skip();
    seed();
    struct sy_spend_conf c = wconf();
    assert_int_equal(sy_spend_start(&c), 0);
    struct sy_store *l = lock_db();
    char id[64];
    struct sy_spend_rec r;
    for (int i = 0; i < 100; i++) {
        mkrec(&r, id, i, 0.01);
        assert_int_equal(sy_spend_record(&r), 0);
    }
    sy_spend_flush();
    struct sy_spend_stats s;
    sy_spend_stats(&s);
    assert_true(s.failures >= 1);
    assert_int_equal(s.pending, 100);
    assert_int_equal(s.written, 0);
    /* more arrive while it is down */
    for (int i = 100; i < 150; i++) {
        mkrec(&r, id, i, 0.01);
        assert_int_equal(sy_spend_record(&r), 0);
    }
    unlock_db(l);
    /* the back-off retries on its own */
    for (int i = 0; i < 100; i++) {
        sy_spend_stats(&s);
        if (s.written == 150)
            break;
        usleep(100000);
    }
    assert_int_equal(s.written, 150);
    assert_int_equal(s.pending, 0);
    assert_true(num("SELECT COUNT(*) FROM \"LiteLLM_SpendLogs\"") == 150);
    assert_true(fabs(num("SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = 'k1'") - 1.5) < 1e-9);
    sy_spend_stop(5);
}

static void test_overflow(void **state)
{
    (void)state;
    if (sy_store_url_kind(url) != SY_STORE_SQLITE)
        skip();
    seed();
    struct sy_spend_conf c = wconf();
    c.max_queue = 10;
    assert_int_equal(sy_spend_start(&c), 0);
    struct sy_store *l = lock_db();
    char id[64];
    struct sy_spend_rec r;
    int refused = 0;
    for (int i = 0; i < 15; i++) {
        mkrec(&r, id, i, 1);
        refused += sy_spend_record(&r) < 0;
    }
    assert_int_equal(refused, 5);
    struct sy_spend_stats s;
    sy_spend_stats(&s);
    assert_int_equal(s.dropped, 5);
    assert_int_equal(s.queued, 10);
    assert_int_equal(s.pending, 10);
    unlock_db(l);
    sy_spend_flush();
    sy_spend_stats(&s);
    assert_int_equal(s.written, 10);
    assert_true(num("SELECT COUNT(*) FROM \"LiteLLM_SpendLogs\"") == 10);
    sy_spend_stop(5);
}

static void test_stop_while_down(void **state)
{
    (void)state;
    if (sy_store_url_kind(url) != SY_STORE_SQLITE)
        skip();
    seed();
    struct sy_spend_conf c = wconf();
    assert_int_equal(sy_spend_start(&c), 0);
    struct sy_store *l = lock_db();
    char id[64];
    struct sy_spend_rec r;
    for (int i = 0; i < 20; i++) {
        mkrec(&r, id, i, 1);
        sy_spend_record(&r);
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    sy_spend_stop(1.0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double took = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    assert_true(took >= 0.9 && took < 4);
    struct sy_spend_stats s;
    sy_spend_stats(&s);
    assert_int_equal(s.written, 0);
    assert_int_equal(s.dropped, 20);
    assert_int_equal(s.pending, 0);
    unlock_db(l);
}

/* PostgreSQL: a server that is not there. Records queue; stop gives up. */
static void test_pg_down(void **state)
{
    (void)state;
    if (sy_store_url_kind(url) != SY_STORE_POSTGRES)
        skip();
    sy_db_stop();
    struct sy_store_conf conf = {.url = "postgresql://postgres@127.0.0.1:1/postgres", .connect_timeout_s = 1};
    char err[256];
    assert_int_equal(sy_db_start(&conf, 1, 0, err, sizeof err), 0);
    struct sy_spend_conf c = wconf();
    assert_int_equal(sy_spend_start(&c), 0);
    char id[64];
    struct sy_spend_rec r;
    for (int i = 0; i < 30; i++) {
        mkrec(&r, id, i, 1);
        assert_int_equal(sy_spend_record(&r), 0);
    }
    sy_spend_flush();
    struct sy_spend_stats s;
    sy_spend_stats(&s);
    assert_true(s.failures >= 1);
    assert_int_equal(s.pending, 30);
    sy_spend_stop(0.5);
    sy_spend_stats(&s);
    assert_int_equal(s.dropped, 30);
    sy_db_stop();
    struct sy_store_conf back = {.url = url, .connect_timeout_s = 3};
    assert_int_equal(sy_db_start(&back, 1, 0, err, sizeof err), 0);
}

static int pid_cb(void *ud, const struct sy_srow *r)
{
    *(int64_t *)ud = r->v[0].k == SY_SV_INT ? r->v[0].i : -1;
    return 1;
}

/* PostgreSQL: the writer blocked behind a table lock, then its connection
 * killed under it (SY_STORE_EDOWN mid-transaction): records never block, the
 * batch is kept and retried, nothing is lost or written twice. */
static void test_pg_lock_and_kill(void **state)
{
    (void)state;
    if (sy_store_url_kind(url) != SY_STORE_POSTGRES)
        skip();
    seed();
    struct sy_spend_conf c = wconf();
    assert_int_equal(sy_spend_start(&c), 0);
    struct sy_store *l = open_url(url);
    int64_t lpid = -1;
    assert_true(sy_store_exec(l, "SELECT pg_backend_pid()", 0, NULL, pid_cb, &lpid) == 1);
    assert_true(sy_store_exec(l, "BEGIN", 0, NULL, NULL, NULL) >= 0);
    assert_true(sy_store_exec(l, "LOCK TABLE \"LiteLLM_SpendLogs\" IN ACCESS EXCLUSIVE MODE", 0, NULL, NULL, NULL) >=
                0);
    char id[64];
    struct sy_spend_rec r;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < 100; i++) {
        mkrec(&r, id, i, 0.01);
        assert_int_equal(sy_spend_record(&r), 0);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    assert_true((double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < 0.5);
    usleep(300000);
    struct sy_spend_stats s;
    sy_spend_stats(&s);
    assert_int_equal(s.written, 0);
    assert_int_equal(s.pending, 100);
    struct sy_sval p = sy_sv_int(lpid);
    assert_true(
        sy_store_exec(st,
                      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                      "AND pid <> pg_backend_pid() AND pid <> $1 AND backend_type = 'client backend'",
                      1, &p, NULL, NULL) >= 0);
    for (int i = 0; i < 50; i++) {
        sy_spend_stats(&s);
        if (s.failures >= 1)
            break;
        usleep(20000);
    }
    assert_true(s.failures >= 1);
    for (int i = 100; i < 150; i++) {
        mkrec(&r, id, i, 0.01);
        assert_int_equal(sy_spend_record(&r), 0);
    }
    sy_store_exec(l, "COMMIT", 0, NULL, NULL, NULL);
    sy_store_close(l);
    for (int i = 0; i < 100; i++) {
        sy_spend_stats(&s);
        if (s.written == 150)
            break;
        usleep(100000);
    }
    assert_int_equal(s.written, 150);
    assert_true(num("SELECT COUNT(*) FROM \"LiteLLM_SpendLogs\"") == 150);
    assert_true(fabs(num("SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = 'k1'") - 1.5) < 1e-9);
    assert_true(num("SELECT SUM(\"api_requests\") FROM \"LiteLLM_DailyUserSpend\"") == 150);
    sy_spend_stop(5);
}

/* PostgreSQL rejects metadata that is not JSON: that one row is dropped, the
 * rows around it in the same batch are written. */
static void test_pg_bad_row(void **state)
{
    (void)state;
    if (sy_store_url_kind(url) != SY_STORE_POSTGRES)
        skip();
    seed();
    struct sy_spend_conf c = wconf();
    c.batch_interval_s = 60;
    assert_int_equal(sy_spend_start(&c), 0);
    char id[64];
    struct sy_spend_rec r;
    for (int i = 0; i < 120; i++) {
        mkrec(&r, id, i, 0.5);
        if (i == 60)
            r.metadata = "{not json";
        assert_int_equal(sy_spend_record(&r), 0);
    }
    struct sy_spend_stats s;
    for (int i = 0; i < 200; i++) {
        sy_spend_flush();
        sy_spend_stats(&s);
        if (s.pending == 0)
            break;
        usleep(50000);
    }
    assert_int_equal(s.written, 119);
    assert_int_equal(s.dropped, 1);
    assert_true(num("SELECT COUNT(*) FROM \"LiteLLM_SpendLogs\"") == 119);
    assert_true(fabs(num("SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = 'k1'") - 59.5) < 1e-9);
    sy_spend_stop(5);
}

/* The guardrails that ran: SpendLogsMetadata's guardrail_information is the
 * list as the stage wrote it, applied_guardrails its names (each once); a
 * call without guardrails keeps [] and null; what is not a JSON array is no
 * information and the row is still written; a U+0000 escape (which
 * PostgreSQL's jsonb refuses) is written U+FFFD. */
static void test_guardrail_information(void **state)
{
    (void)state;
    seed();
    struct sy_spend_conf c = wconf();
    assert_int_equal(sy_spend_start(&c), 0);
    static const char *const infos[] = {
        "[{\"guardrail_name\":\"pii-mask\",\"guardrail_mode\":\"pre_call\",\"guardrail_status\":"
        "\"guardrail_intervened\",\"start_time\":1767225600.01,\"end_time\":1767225600.0125,\"duration\":0.0025,"
        "\"masked_entity_count\":{\"EMAIL_ADDRESS\":2}},"
        "{\"guardrail_name\":\"content-filter\",\"guardrail_mode\":\"pre_call\",\"guardrail_status\":\"success\"},"
        "{\"guardrail_name\":\"pii-mask\",\"guardrail_mode\":\"post_call\",\"guardrail_status\":\"success\"}]",
        NULL,
        "{\"guardrail_name\":\"not-a-list\"}",
        "[{\"guardrail_name\":\"cut\"",
        "[{\"guardrail_name\":\"nul\",\"guardrail_response\":\"a\\u0000b \\\\u0000 c\"}]",
    };
    char id[64];
    struct sy_spend_rec r;
    for (int i = 0; i < 5; i++) {
        mkrec(&r, id, 500 + i, 0.001);
        char *copy = infos[i] ? strdup(infos[i]) : NULL; /* the call's arena: gone after the record */
        r.guard_info = copy;
        assert_int_equal(sy_spend_record(&r), 0);
        if (copy) {
            memset(copy, 'x', strlen(copy));
            free(copy);
        }
    }
    sy_spend_flush();
    assert_true(num("SELECT COUNT(*) FROM \"LiteLLM_SpendLogs\"") == 5);

    struct json_object *o = row("SELECT * FROM \"LiteLLM_SpendLogs\" WHERE \"request_id\" = 'req-000500'");
    struct json_object *meta, *v, *e;
    assert_true(json_object_object_get_ex(o, "metadata", &meta) && json_object_is_type(meta, json_type_object));
    assert_true(json_object_object_get_ex(meta, "applied_guardrails", &v) && json_object_array_length(v) == 2);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 0)), "pii-mask");
    assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 1)), "content-filter");
    assert_true(json_object_object_get_ex(meta, "guardrail_information", &v) && json_object_array_length(v) == 3);
    e = json_object_array_get_idx(v, 0);
    assert_string_equal(jstr(e, "guardrail_status"), "guardrail_intervened");
    assert_true(json_object_object_get_ex(e, "masked_entity_count", &e) &&
                json_object_object_get_ex(e, "EMAIL_ADDRESS", &e) && json_object_get_int(e) == 2);
    assert_string_equal(jstr(json_object_array_get_idx(v, 2), "guardrail_mode"), "post_call");
    assert_string_equal(jstr(meta, "user_api_key"), "k1"); /* the rest of the metadata as before */
    json_object_put(o);

    for (int i = 501; i <= 503; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT * FROM \"LiteLLM_SpendLogs\" WHERE \"request_id\" = 'req-%06d'", i);
        o = row(sql);
        assert_true(json_object_object_get_ex(o, "metadata", &meta));
        assert_true(json_object_object_get_ex(meta, "applied_guardrails", &v) &&
                    json_object_is_type(v, json_type_array) && json_object_array_length(v) == 0);
        assert_true(json_object_object_get_ex(meta, "guardrail_information", &v) && v == NULL);
        json_object_put(o);
    }

    o = row("SELECT * FROM \"LiteLLM_SpendLogs\" WHERE \"request_id\" = 'req-000504'");
    assert_true(json_object_object_get_ex(o, "metadata", &meta));
    assert_true(json_object_object_get_ex(meta, "guardrail_information", &v) && json_object_array_length(v) == 1);
    /* the escape became U+FFFD; an escaped backslash followed by "u0000" is text, kept */
    assert_string_equal(jstr(json_object_array_get_idx(v, 0), "guardrail_response"), "a\xef\xbf\xbd"
                                                                                     "b \\u0000 c");
    json_object_put(o);
    sy_spend_stop(5);
}

/* MCP tool calls: the SpendLogs row carries mcp_namespaced_tool_name (NULL for
 * an LLM call); the daily rows are keyed by it, so two tools of one key and
 * day are two rows, and an LLM call of the same key and model a third. */
static void test_mcp_tool_name(void **state)
{
    (void)state;
    seed();
    struct sy_spend_conf c = wconf();
    assert_int_equal(sy_spend_start(&c), 0);
    char id[64];
    struct sy_spend_rec r;
    static const char *const tools[] = {"bed-echo", "bed-echo", "bed-add", NULL};
    for (int i = 0; i < 4; i++) {
        mkrec(&r, id, 700 + i, 0.25);
        r.status = "success";
        if (tools[i]) {
            r.call_type = "call_mcp_tool";
            r.model = "mcp-model";
            r.custom_llm_provider = "mcp";
            r.mcp_namespaced_tool_name = tools[i];
        } else {
            r.model = "mcp-model"; /* same model and provider as the tool rows: only the tool name differs */
            r.custom_llm_provider = "mcp";
        }
        assert_int_equal(sy_spend_record(&r), 0);
    }
    sy_spend_flush();
    struct json_object *o = row("SELECT * FROM \"LiteLLM_SpendLogs\" WHERE \"request_id\" = 'req-000702'");
    assert_string_equal(jstr(o, "mcp_namespaced_tool_name"), "bed-add");
    assert_string_equal(jstr(o, "call_type"), "call_mcp_tool");
    json_object_put(o);
    o = row("SELECT * FROM \"LiteLLM_SpendLogs\" WHERE \"request_id\" = 'req-000703'");
    assert_null(jstr(o, "mcp_namespaced_tool_name"));
    json_object_put(o);
    assert_true(num("SELECT COUNT(*) FROM \"LiteLLM_DailyUserSpend\" WHERE \"model\" = 'mcp-model'") == 3);
    assert_true(num("SELECT \"api_requests\" FROM \"LiteLLM_DailyUserSpend\" WHERE "
                    "\"mcp_namespaced_tool_name\" = 'bed-echo'") == 2);
    assert_true(fabs(num("SELECT \"spend\" FROM \"LiteLLM_DailyTeamSpend\" WHERE "
                         "\"mcp_namespaced_tool_name\" = 'bed-add'") -
                     0.25) < 1e-9);
    assert_true(num("SELECT \"api_requests\" FROM \"LiteLLM_DailyUserSpend\" WHERE \"model\" = 'mcp-model' AND "
                    "\"mcp_namespaced_tool_name\" = ''") == 1);
    sy_spend_stop(5);
}

static void test_pg_skipped(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_10k),
        cmocka_unit_test(test_guardrail_information),
        cmocka_unit_test(test_mcp_tool_name),
        cmocka_unit_test(test_settle_reserved),
        cmocka_unit_test(test_disable_spend_logs),
        cmocka_unit_test(test_stop_flushes),
        cmocka_unit_test(test_db_unavailable),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_stop_while_down),
        cmocka_unit_test(test_pg_lock_and_kill),
        cmocka_unit_test(test_pg_bad_row),
        cmocka_unit_test(test_pg_down),
    };
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(sqlite_path, sizeof sqlite_path, "%s/sy_test_writer_%d.db", tmp, (int)getpid());
    url = sqlite_path;
    int fails = cmocka_run_group_tests_name("writer_sqlite", tests, group_setup, group_teardown);
    char side[300];
    unlink(sqlite_path);
    snprintf(side, sizeof side, "%s-wal", sqlite_path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", sqlite_path);
    unlink(side);
    const char *pg = getenv("SY_TEST_PG_URL");
    if (pg && *pg) {
        url = pg;
        fails += cmocka_run_group_tests_name("writer_postgres", tests, group_setup, group_teardown);
    } else {
        const struct CMUnitTest skipped[] = {cmocka_unit_test(test_pg_skipped)};
        fails += cmocka_run_group_tests_name("writer_postgres", skipped, NULL, NULL);
    }
    return fails;
}
