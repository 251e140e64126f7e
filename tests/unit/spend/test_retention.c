/* test_retention.c - spend-log retention (src/spend/retention.c) on SQLite,
 * and on PostgreSQL when SY_TEST_PG_URL is set.
 *
 * Covered: rows older than the period are deleted and newer ones kept, in
 * batches (a run deletes at most batch x max_batches rows, the next run the
 * rest); a row exactly at the cutoff is kept; period 0 deletes nothing; on
 * PostgreSQL a run finds the advisory lock held by another session and
 * deletes nothing (SY_RETENTION_BUSY), then runs once it is released; the
 * thread runs the job one interval after start, not before, and counts what
 * it deleted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
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
static struct sy_store *st;

#define NOW 1767229200.0 /* 2026-01-01T01:00:00Z */

static void exec_p(struct sy_store *s, const char *sql, int n, const struct sy_sval *p)
{
    if (sy_store_exec(s, sql, n, p, NULL, NULL) < 0)
        fail_msg("%s: %s", sql, sy_store_errmsg(s));
}

static int count_cb(void *ud, const struct sy_srow *r)
{
    *(long *)ud = (long)sy_srow_int(r, "n", -1);
    return 1;
}

static long count_where(const char *cond)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) AS \"n\" FROM \"LiteLLM_SpendLogs\" WHERE %s", cond);
    long n = -1;
    if (sy_store_exec(st, sql, 0, NULL, count_cb, &n) < 0)
        fail_msg("%s: %s", sql, sy_store_errmsg(st));
    return n;
}

/* n rows whose startTime is `age` seconds before NOW, ids prefix-0.. */
static void add_rows(const char *prefix, int n, double age)
{
    char ts[32];
    sy_iso_time(NOW - age, ts);
    exec_p(st, "BEGIN", 0, NULL);
    for (int i = 0; i < n; i++) {
        char id[64];
        snprintf(id, sizeof id, "%s-%d", prefix, i);
        struct sy_sval p[3] = {sy_sv_text(id), sy_sv_ts(ts), sy_sv_ts(ts)};
        exec_p(st,
               "INSERT INTO \"LiteLLM_SpendLogs\" (\"request_id\", \"call_type\", \"startTime\", \"endTime\") "
               "VALUES ($1, 'acompletion', $2, $3)",
               3, p);
    }
    exec_p(st, "COMMIT", 0, NULL);
}

static void clear(void)
{
    exec_p(st, "DELETE FROM \"LiteLLM_SpendLogs\"", 0, NULL);
}

static void test_old_rows_go_in_batches(void **state)
{
    (void)state;
    clear();
    add_rows("old", 2500, 8 * 86400.0); /* 8 days old */
    add_rows("new", 30, 3600.0);        /* 1 hour old */
    add_rows("edge", 1, 7 * 86400.0);   /* exactly at the cutoff: kept ("startTime" < cutoff) */
    struct sy_retention_conf c = {.period_s = 7 * 86400.0, .batch = 1000, .max_batches = 2};
    /* the first run stops at its cap: 2 batches of 1000 */
    assert_int_equal(sy_retention_run(st, &c, NOW), 2000);
    assert_int_equal(count_where("\"request_id\" LIKE 'old-%'"), 500);
    /* the next takes the rest: a batch smaller than the batch size ends it */
    assert_int_equal(sy_retention_run(st, &c, NOW), 500);
    assert_int_equal(count_where("\"request_id\" LIKE 'old-%'"), 0);
    assert_int_equal(count_where("\"request_id\" LIKE 'new-%'"), 30);
    assert_int_equal(count_where("\"request_id\" = 'edge-0'"), 1);
    /* nothing left to delete */
    assert_int_equal(sy_retention_run(st, &c, NOW), 0);
    /* a shorter period takes the hour-old rows too; the edge row is now older than it */
    c.period_s = 60;
    assert_int_equal(sy_retention_run(st, &c, NOW), 31);
    assert_int_equal(count_where("1 = 1"), 0);
}

static void test_period_zero_keeps_everything(void **state)
{
    (void)state;
    clear();
    add_rows("old", 10, 400 * 86400.0);
    struct sy_retention_conf c = {.period_s = 0};
    assert_int_equal(sy_retention_run(st, &c, NOW), 0);
    assert_int_equal(count_where("1 = 1"), 10);
    c.period_s = -5;
    assert_int_equal(sy_retention_run(st, &c, NOW), 0);
    assert_int_equal(count_where("1 = 1"), 10);
}

/* PostgreSQL: another session holds the lock; this instance skips. */
static void test_lock_held_elsewhere(void **state)
{
    (void)state;
    if (sy_store_kind(st) != SY_STORE_POSTGRES)
        skip();
    clear();
    add_rows("old", 20, 30 * 86400.0);
    struct sy_store_conf conf = {.url = url, .connect_timeout_s = 3};
    char err[256];
    struct sy_store *other = sy_store_open(&conf, err, sizeof err);
    assert_non_null(other);
    struct sy_sval k = sy_sv_int(SY_RETENTION_LOCK_KEY);
    exec_p(other, "SELECT pg_advisory_lock($1)", 1, &k);
    struct sy_retention_conf c = {.period_s = 86400.0};
    assert_int_equal(sy_retention_run(st, &c, NOW), SY_RETENTION_BUSY);
    assert_int_equal(count_where("1 = 1"), 20);
    exec_p(other, "SELECT pg_advisory_unlock($1)", 1, &k);
    assert_int_equal(sy_retention_run(st, &c, NOW), 20);
    /* the run released its lock: the other session can take it at once */
    struct sy_sval k2 = sy_sv_int(SY_RETENTION_LOCK_KEY);
    long n = -1;
    if (sy_store_exec(other, "SELECT CAST(pg_try_advisory_lock($1) AS INTEGER) AS \"n\"", 1, &k2, count_cb, &n) < 0)
        fail_msg("%s", sy_store_errmsg(other));
    assert_int_equal(n, 1);
    exec_p(other, "SELECT pg_advisory_unlock($1)", 1, &k2);
    sy_store_close(other);
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The thread: no run before one interval has passed; then the rows go. */
static void test_thread_runs_each_interval(void **state)
{
    (void)state;
    clear();
    char err[256];
    struct sy_store_conf conf = {.url = url, .connect_timeout_s = 3, .busy_timeout_s = 5};
    assert_int_equal(sy_db_start(&conf, 1, 0, err, sizeof err), 0);
    /* a long interval: started, but nothing runs yet */
    add_rows("old", 5, 400 * 86400.0);
    struct sy_retention_conf c = {.period_s = 86400.0, .interval_s = 3600};
    assert_int_equal(sy_retention_start(&c), 0);
    struct sy_retention_stats s;
    sy_retention_stats(&s);
    assert_int_equal(s.runs, 0);
    sy_retention_stop();
    assert_int_equal(count_where("1 = 1"), 5);
    /* a short one: the rows go within a bounded wait */
    c.interval_s = 0.2;
    assert_int_equal(sy_retention_start(&c), 0);
    double until = mono() + 20;
    do {
        sy_retention_stats(&s);
        if (s.runs >= 2)
            break;
        usleep(50000);
    } while (mono() < until);
    sy_retention_stop();
    assert_true(s.runs >= 2);
    assert_int_equal(s.deleted, 5);
    assert_int_equal(s.failures, 0);
    assert_int_equal(count_where("1 = 1"), 0);
    /* the series /metrics shows */
    struct sy_buf m;
    sy_buf_init(&m, 1 << 16);
    sy_retention_render_metrics(&m);
    assert_non_null(strstr(m.p, "\nswitchyard_spend_logs_retention_deleted_total 5.0\n"));
    assert_non_null(strstr(m.p, "\nswitchyard_spend_logs_retention_runs_total{result=\"skipped\"} 0.0\n"));
    assert_non_null(strstr(m.p, "# TYPE switchyard_spend_logs_retention_runs_total counter\n"));
    sy_buf_free(&m);
    /* period 0: no thread at all */
    c.period_s = 0;
    assert_int_equal(sy_retention_start(&c), 0);
    sy_retention_stop();
    sy_db_stop();
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
        cmocka_unit_test(test_old_rows_go_in_batches),
        cmocka_unit_test(test_period_zero_keeps_everything),
        cmocka_unit_test(test_lock_held_elsewhere),
        cmocka_unit_test(test_thread_runs_each_interval),
    };
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(sqlite_path, sizeof sqlite_path, "%s/sy_test_retention_%d.db", tmp, (int)getpid());
    url = sqlite_path;
    int fails = cmocka_run_group_tests_name("retention_sqlite", tests, setup, teardown);
    char side[300];
    unlink(sqlite_path);
    snprintf(side, sizeof side, "%s-wal", sqlite_path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", sqlite_path);
    unlink(side);
    const char *pg = getenv("SY_TEST_PG_URL");
    if (pg && *pg) {
        url = pg;
        fails += cmocka_run_group_tests_name("retention_postgres", tests, setup, teardown);
    } else {
        const struct CMUnitTest skipped[] = {cmocka_unit_test(test_pg_skipped)};
        fails += cmocka_run_group_tests_name("retention_postgres", skipped, NULL, NULL);
    }
    return fails;
}
