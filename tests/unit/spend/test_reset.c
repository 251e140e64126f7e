/* test_reset.c - budget_duration resets (src/spend/reset.c) on SQLite, and on
 * PostgreSQL when SY_TEST_PG_URL is set.
 *
 * Covered: keys, users and teams whose budget_reset_at has passed get spend 0
 * and the next reset time; rows not yet due, rows without a duration and
 * expired keys are left alone; a duration without a reset time gets one
 * (spend kept); LiteLLM_BudgetTable rows that are due reset the end users and
 * team memberships pointing at them; a second run resets nothing; the spend
 * writer runs the job and calls sy_spend_on_reset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spend/spend.h"
#include "spend/spend_impl.h"
#include "store/dbpool.h"
#include "store/store.h"

static const char *url;
static char sqlite_path[256];
static struct sy_store *st;

#define NOW    1767229200.0 /* 2026-01-01T01:00:00Z */
#define PAST   "2026-01-01T00:00:00.000Z"
#define FUTURE "2026-01-05T00:00:00.000Z"

static void exec_p(const char *sql, int n, const struct sy_sval *p)
{
    int rc = sy_store_exec(st, sql, n, p, NULL, NULL);
    if (rc < 0)
        fail_msg("%s: %s", sql, sy_store_errmsg(st));
}

static void exec_ok(const char *sql)
{
    exec_p(sql, 0, NULL);
}

struct cell {
    double spend;
    char reset[40];
    int found;
};

static int cell_cb(void *ud, const struct sy_srow *r)
{
    struct cell *c = ud;
    c->found = 1;
    c->spend = sy_srow_num(r, "spend", NAN);
    const char *t = sy_srow_text(r, "budget_reset_at");
    snprintf(c->reset, sizeof c->reset, "%s", t ? t : "NULL");
    return 1;
}

static struct cell get(const char *table, const char *pk, const char *id)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT * FROM \"%s\" WHERE \"%s\" = $1", table, pk);
    struct cell c;
    memset(&c, 0, sizeof c);
    struct sy_sval p = sy_sv_text(id);
    if (sy_store_exec(st, sql, 1, &p, cell_cb, &c) < 0)
        fail_msg("%s: %s", sql, sy_store_errmsg(st));
    if (!c.found)
        fail_msg("no row %s %s", table, id);
    return c;
}

static void seed(void)
{
    static const char *const tables[] = {"LiteLLM_VerificationToken", "LiteLLM_UserTable",    "LiteLLM_TeamTable",
                                         "LiteLLM_TeamMembership",    "LiteLLM_EndUserTable", "LiteLLM_BudgetTable"};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "DELETE FROM \"%s\"", tables[i]);
        exec_ok(sql);
    }
    struct sy_sval p[2] = {sy_sv_ts(PAST), sy_sv_ts(FUTURE)};
    /* keys: due, not due, no reset time yet, no duration, expired and due */
    exec_p("INSERT INTO \"LiteLLM_VerificationToken\" (\"token\", \"spend\", \"budget_duration\", \"budget_reset_at\") "
           "VALUES ('due', 5, '1d', $1)",
           1, p);
    exec_p("INSERT INTO \"LiteLLM_VerificationToken\" (\"token\", \"spend\", \"budget_duration\", \"budget_reset_at\") "
           "VALUES ('later', 5, '1d', $1)",
           1, p + 1);
    exec_ok("INSERT INTO \"LiteLLM_VerificationToken\" (\"token\", \"spend\", \"budget_duration\") "
            "VALUES ('unset', 5, '30d')");
    exec_ok("INSERT INTO \"LiteLLM_VerificationToken\" (\"token\", \"spend\") VALUES ('none', 5)");
    exec_p("INSERT INTO \"LiteLLM_VerificationToken\" (\"token\", \"spend\", \"budget_duration\", \"budget_reset_at\", "
           "\"expires\") VALUES ('expired', 5, '1d', $1, $1)",
           1, p);
    exec_p("INSERT INTO \"LiteLLM_UserTable\" (\"user_id\", \"spend\", \"budget_duration\", \"budget_reset_at\") "
           "VALUES ('u-due', 7, '1h', $1)",
           1, p);
    exec_p("INSERT INTO \"LiteLLM_UserTable\" (\"user_id\", \"spend\", \"budget_duration\", \"budget_reset_at\") "
           "VALUES ('u-later', 7, '1h', $1)",
           1, p + 1);
    exec_p("INSERT INTO \"LiteLLM_TeamTable\" (\"team_id\", \"spend\", \"budget_duration\", \"budget_reset_at\") "
           "VALUES ('t-due', 9, '7d', $1)",
           1, p);
    /* budget table: b-due (end user e1, member t-due/u-due), b-later (end user e2) */
    exec_p("INSERT INTO \"LiteLLM_BudgetTable\" (\"budget_id\", \"budget_duration\", \"budget_reset_at\", "
           "\"created_by\", \"updated_by\") VALUES ('b-due', '1mo', $1, 'x', 'x')",
           1, p);
    exec_p("INSERT INTO \"LiteLLM_BudgetTable\" (\"budget_id\", \"budget_duration\", \"budget_reset_at\", "
           "\"created_by\", \"updated_by\") VALUES ('b-later', '1d', $1, 'x', 'x')",
           1, p + 1);
    exec_ok("INSERT INTO \"LiteLLM_EndUserTable\" (\"user_id\", \"spend\", \"budget_id\") VALUES ('e1', 3, 'b-due')");
    exec_ok("INSERT INTO \"LiteLLM_EndUserTable\" (\"user_id\", \"spend\", \"budget_id\") VALUES ('e2', 3, 'b-later')");
    exec_ok("INSERT INTO \"LiteLLM_TeamMembership\" (\"team_id\", \"user_id\", \"spend\", \"budget_id\") "
            "VALUES ('t-due', 'u-due', 2, 'b-due')");
}

static const char *next_iso(const char *dur, char out[32])
{
    sy_iso_time(sy_duration_next(dur, NOW), out);
    return out;
}

static void test_reset_due(void **state)
{
    (void)state;
    seed();
    int n = sy_budget_reset_due(st, NOW);
    /* key due, user due, team due, end user e1, member */
    assert_int_equal(n, 5);
    char want[32];
    struct cell c = get("LiteLLM_VerificationToken", "token", "due");
    assert_true(c.spend == 0);
    assert_string_equal(c.reset, next_iso("1d", want));
    assert_string_equal(c.reset, "2026-01-02T00:00:00.000Z");
    c = get("LiteLLM_VerificationToken", "token", "later");
    assert_true(c.spend == 5);
    assert_string_equal(c.reset, FUTURE);
    c = get("LiteLLM_VerificationToken", "token", "unset");
    assert_true(c.spend == 5);
    assert_string_equal(c.reset, next_iso("30d", want));
    c = get("LiteLLM_VerificationToken", "token", "none");
    assert_true(c.spend == 5);
    assert_string_equal(c.reset, "NULL");
    c = get("LiteLLM_VerificationToken", "token", "expired");
    assert_true(c.spend == 5);
    assert_string_equal(c.reset, PAST);
    c = get("LiteLLM_UserTable", "user_id", "u-due");
    assert_true(c.spend == 0);
    assert_string_equal(c.reset, next_iso("1h", want));
    c = get("LiteLLM_UserTable", "user_id", "u-later");
    assert_true(c.spend == 7);
    c = get("LiteLLM_TeamTable", "team_id", "t-due");
    assert_true(c.spend == 0);
    assert_string_equal(c.reset, next_iso("7d", want));
    c = get("LiteLLM_BudgetTable", "budget_id", "b-due");
    assert_string_equal(c.reset, next_iso("1mo", want));
    assert_string_equal(c.reset, "2026-02-01T00:00:00.000Z");
    c = get("LiteLLM_BudgetTable", "budget_id", "b-later");
    assert_string_equal(c.reset, FUTURE);
    c = get("LiteLLM_EndUserTable", "user_id", "e1");
    assert_true(c.spend == 0);
    c = get("LiteLLM_EndUserTable", "user_id", "e2");
    assert_true(c.spend == 3);
    c = get("LiteLLM_TeamMembership", "team_id", "t-due");
    assert_true(c.spend == 0);

    /* nothing is due any more */
    assert_int_equal(sy_budget_reset_due(st, NOW), 0);
    assert_int_equal(sy_budget_reset_due(st, NOW + 60), 0);
    /* an hour on, the user is due again */
    exec_ok("UPDATE \"LiteLLM_UserTable\" SET \"spend\" = 1 WHERE \"user_id\" = 'u-due'");
    assert_int_equal(sy_budget_reset_due(st, NOW + 3600), 1);
    assert_true(get("LiteLLM_UserTable", "user_id", "u-due").spend == 0);
}

static atomic_int hook_calls;
static void hook(void)
{
    hook_calls++;
}

static void test_writer_runs_reset(void **state)
{
    (void)state;
    seed();
    /* make 'due' due relative to the real clock too */
    struct sy_sval p = sy_sv_ts("2000-01-01T00:00:00.000Z");
    exec_p("UPDATE \"LiteLLM_VerificationToken\" SET \"budget_reset_at\" = $1 WHERE \"token\" = 'due'", 1, &p);
    struct sy_store_conf conf = {.url = url, .connect_timeout_s = 3, .busy_timeout_s = 3};
    char err[256];
    assert_int_equal(sy_db_start(&conf, 1, 0, err, sizeof err), 0);
    hook_calls = 0;
    sy_spend_on_reset = hook;
    struct sy_spend_conf c = {.batch_interval_s = 0.05, .max_queue = 1000, .reset_interval_s = 0.1};
    assert_int_equal(sy_spend_start(&c), 0);
    for (int i = 0; i < 100 && hook_calls == 0; i++)
        usleep(20000);
    sy_spend_stop(2);
    sy_db_stop();
    sy_spend_on_reset = NULL;
    assert_true(hook_calls >= 1);
    assert_true(get("LiteLLM_VerificationToken", "token", "due").spend == 0);
}

static int setup(void **state)
{
    (void)state;
    struct sy_store_conf conf = {.url = url, .connect_timeout_s = 3, .busy_timeout_s = 5};
    char err[256];
    st = sy_store_open(&conf, err, sizeof err);
    if (!st)
        fail_msg("open %s: %s", url, err);
    if (sy_store_migrate(st) < 0)
        fail_msg("migrate: %s", sy_store_errmsg(st));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sy_store_close(st);
    return 0;
}

static void test_pg_skipped(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reset_due),
        cmocka_unit_test(test_writer_runs_reset),
    };
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(sqlite_path, sizeof sqlite_path, "%s/sy_test_reset_%d.db", tmp, (int)getpid());
    url = sqlite_path;
    int fails = cmocka_run_group_tests_name("reset_sqlite", tests, setup, teardown);
    char side[300];
    unlink(sqlite_path);
    snprintf(side, sizeof side, "%s-wal", sqlite_path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", sqlite_path);
    unlink(side);
    const char *pg = getenv("SY_TEST_PG_URL");
    if (pg && *pg) {
        url = pg;
        fails += cmocka_run_group_tests_name("reset_postgres", tests, setup, teardown);
    } else {
        const struct CMUnitTest skipped[] = {cmocka_unit_test(test_pg_skipped)};
        fails += cmocka_run_group_tests_name("reset_postgres", skipped, NULL, NULL);
    }
    return fails;
}
