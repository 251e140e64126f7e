/* retention.c - spend-log retention: LiteLLM's SpendLogCleanup
 * (litellm/proxy/db/db_transaction_queue/spend_log_cleanup.py), off the
 * request path.
 *
 *   general_settings.maximum_spend_logs_retention_period   "7d", "1h" ...: rows of
 *       "LiteLLM_SpendLogs" whose "startTime" is older than now - period go
 *   general_settings.maximum_spend_logs_retention_interval how often (default 1 day)
 *
 * A thread of its own with its own connection (the pool's configuration,
 * store/dbpool.h), asleep between runs: nothing here ever touches a worker's
 * loop or a DB-pool thread, so a long delete never delays a request's key
 * lookup. The first run comes one interval after start (LiteLLM schedules the
 * job the same way), then one every interval.
 *
 * One run:
 *   PostgreSQL: SELECT pg_try_advisory_lock(K); another instance holding K
 *               is running the job: this run is skipped (logged at debug).
 *               The lock is the session's, so an instance that dies mid-run
 *               frees it with its connection. SQLite is one instance per
 *               file: no lock.
 *   then at most MAX_BATCHES times:
 *       DELETE FROM "LiteLLM_SpendLogs" WHERE "request_id" IN
 *         (SELECT "request_id" FROM "LiteLLM_SpendLogs" WHERE "startTime" < $1 LIMIT $2)
 *     (LiteLLM's find_many + delete_many in one statement, each its own
 *     transaction, so a lock on the table is never held for long); a batch
 *     smaller than the batch size ends the run; between batches a pause, so
 *     the spend writer's inserts interleave. What is left after MAX_BATCHES
 *     (100 x 1000 rows, LiteLLM's cap) goes at the next run.
 *   PostgreSQL: pg_advisory_unlock(K).
 * The rows deleted are logged (info) and counted (sy_retention_stats).
 *
 * "startTime" is compared with an ISO-8601 parameter: a timestamp on
 * PostgreSQL, ISO text on SQLite where the writer stores it in that same
 * fixed-width UTC form, so text order is time order.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/log.h"
#include "spend/spend.h"
#include "store/dbpool.h"
#include "store/store.h"

static const char delete_sql[] =
    "DELETE FROM \"LiteLLM_SpendLogs\" WHERE \"request_id\" IN (SELECT \"request_id\" FROM \"LiteLLM_SpendLogs\" "
    "WHERE \"startTime\" < $1 LIMIT $2)";

static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake;
    int cond_ready;
    int running;
    atomic_int stopping;
    pthread_t tid;
    struct sy_retention_conf conf;
    struct sy_store *st;
    struct sy_retention_stats stats;
    int started; /* a thread was started in this process: the metrics are shown */
} R = {.mu = PTHREAD_MUTEX_INITIALIZER};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void conf_defaults(struct sy_retention_conf *c)
{
    if (c->interval_s <= 0)
        c->interval_s = 86400;
    if (c->batch == 0)
        c->batch = SY_RETENTION_BATCH;
    if (c->max_batches == 0)
        c->max_batches = SY_RETENTION_MAX_BATCHES;
    if (c->pause_s < 0)
        c->pause_s = 0;
}

/* Wait on R.wake until monotonic time t or a stop; R.mu held. */
static void wait_until(double t)
{
    double s = t;
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&R.wake, &R.mu, &ts);
}

static int on_lock(void *ud, const struct sy_srow *row)
{
    *(int *)ud = (int)sy_srow_int(row, "ok", 0);
    return 1;
}

/* The pause between batches; 1 when the thread is asked to stop meanwhile. */
static int pause_or_stop(double s)
{
    if (atomic_load(&R.stopping))
        return 1;
    if (s <= 0)
        return 0;
    pthread_mutex_lock(&R.mu);
    if (R.cond_ready && R.running) {
        double until = mono() + s;
        while (!atomic_load(&R.stopping) && mono() < until)
            wait_until(until);
    } else {
        pthread_mutex_unlock(&R.mu);
        struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
        nanosleep(&ts, NULL);
        return atomic_load(&R.stopping);
    }
    pthread_mutex_unlock(&R.mu);
    return atomic_load(&R.stopping);
}

long sy_retention_run(struct sy_store *st, const struct sy_retention_conf *conf, double now_unix)
{
    struct sy_retention_conf c = *conf;
    conf_defaults(&c);
    if (c.period_s <= 0)
        return 0;
    int pg = sy_store_kind(st) == SY_STORE_POSTGRES;
    struct sy_sval key = sy_sv_int(SY_RETENTION_LOCK_KEY);
    if (pg) {
        int ok = 0;
        int rc = sy_store_exec(st, "SELECT pg_try_advisory_lock($1) AS \"ok\"", 1, &key, on_lock, &ok);
        if (rc < 0)
            return rc;
        if (!ok)
            return SY_RETENTION_BUSY;
    }
    char cutoff[32];
    sy_iso_time(now_unix - c.period_s, cutoff);
    struct sy_sval p[2] = {sy_sv_ts(cutoff), sy_sv_int((int64_t)c.batch)};
    long total = 0;
    int err = 0;
    for (unsigned i = 0; i < c.max_batches; i++) {
        int rc = sy_store_exec(st, delete_sql, 2, p, NULL, NULL);
        if (rc < 0) {
            err = rc;
            break;
        }
        total += rc;
        if ((size_t)rc < c.batch)
            break;
        if (i + 1 < c.max_batches && pause_or_stop(c.pause_s))
            break;
    }
    if (pg)
        sy_store_exec(st, "SELECT pg_advisory_unlock($1)", 1, &key, NULL, NULL); /* a lost connection frees it too */
    if (err < 0 && total == 0)
        return err;
    return total;
}

static void *retention_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&R.mu);
    double next = mono() + R.conf.interval_s;
    for (;;) {
        while (!atomic_load(&R.stopping) && mono() < next)
            wait_until(next);
        if (atomic_load(&R.stopping))
            break;
        struct sy_retention_conf c = R.conf;
        pthread_mutex_unlock(&R.mu);
        double t0 = mono();
        long n = sy_retention_run(R.st, &c, wall());
        pthread_mutex_lock(&R.mu);
        R.stats.runs++;
        R.stats.last_run_unix = wall();
        if (n == SY_RETENTION_BUSY) {
            R.stats.skipped++;
            sy_debug("spend-log retention: another instance is running the job; skipped");
        } else if (n < 0) {
            R.stats.failures++;
            sy_warn("spend-log retention: delete failed (%s); next run in %.0fs", sy_store_errmsg(R.st), c.interval_s);
        } else if (n == 0) {
            sy_debug("spend-log retention: no LiteLLM_SpendLogs row older than %.0fs", c.period_s);
        } else {
            R.stats.deleted += (uint64_t)n;
            sy_info("spend-log retention: %ld LiteLLM_SpendLogs rows older than %.0fs deleted in %.2fs", n, c.period_s,
                    mono() - t0);
        }
        next = mono() + c.interval_s;
    }
    R.running = 0;
    pthread_mutex_unlock(&R.mu);
    return NULL;
}

static void init_cond(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&R.wake, &a);
    pthread_condattr_destroy(&a);
    R.cond_ready = 1;
}

int sy_retention_start(const struct sy_retention_conf *conf)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_cond);
    if (conf->period_s <= 0)
        return 0; /* keep forever: no thread */
    const struct sy_store_conf *sc = sy_db_conf();
    if (!sc) {
        sy_error("spend-log retention: the database is not configured");
        return -1;
    }
    pthread_mutex_lock(&R.mu);
    int busy = R.running;
    pthread_mutex_unlock(&R.mu);
    if (busy)
        return -1;
    char err[256];
    struct sy_store *st = sy_store_open(sc, err, sizeof err);
    if (!st) {
        sy_error("spend-log retention: %s", err);
        return -1;
    }
    pthread_mutex_lock(&R.mu);
    R.conf = *conf;
    conf_defaults(&R.conf);
    R.st = st;
    R.running = 1;
    R.started = 1;
    atomic_store(&R.stopping, 0);
    memset(&R.stats, 0, sizeof R.stats);
    if (pthread_create(&R.tid, NULL, retention_main, NULL) != 0) {
        R.running = 0;
        R.st = NULL;
        pthread_mutex_unlock(&R.mu);
        sy_store_close(st);
        sy_error("spend-log retention: cannot start its thread");
        return -1;
    }
    pthread_mutex_unlock(&R.mu);
    sy_info("spend-log retention: LiteLLM_SpendLogs rows older than %gs deleted every %gs", R.conf.period_s,
            R.conf.interval_s);
    return 0;
}

void sy_retention_stop(void)
{
    pthread_mutex_lock(&R.mu);
    if (!R.st) {
        pthread_mutex_unlock(&R.mu);
        return;
    }
    atomic_store(&R.stopping, 1);
    pthread_cond_broadcast(&R.wake);
    pthread_mutex_unlock(&R.mu);
    pthread_join(R.tid, NULL);
    pthread_mutex_lock(&R.mu);
    sy_store_close(R.st);
    R.st = NULL;
    atomic_store(&R.stopping, 0);
    pthread_mutex_unlock(&R.mu);
}

void sy_retention_stats(struct sy_retention_stats *out)
{
    pthread_mutex_lock(&R.mu);
    *out = R.stats;
    pthread_mutex_unlock(&R.mu);
}

void sy_retention_render_metrics(struct sy_buf *b)
{
    struct sy_retention_stats s;
    pthread_mutex_lock(&R.mu);
    int on = R.started;
    s = R.stats;
    pthread_mutex_unlock(&R.mu);
    if (!on)
        return;
    sy_buf_printf(b,
                  "# HELP switchyard_spend_logs_retention_deleted_total LiteLLM_SpendLogs rows deleted by "
                  "maximum_spend_logs_retention_period\n"
                  "# TYPE switchyard_spend_logs_retention_deleted_total counter\n"
                  "switchyard_spend_logs_retention_deleted_total %llu.0\n"
                  "# HELP switchyard_spend_logs_retention_runs_total Spend-log retention runs: ran, skipped (another "
                  "instance held the lock), failed\n"
                  "# TYPE switchyard_spend_logs_retention_runs_total counter\n"
                  "switchyard_spend_logs_retention_runs_total{result=\"ran\"} %llu.0\n"
                  "switchyard_spend_logs_retention_runs_total{result=\"skipped\"} %llu.0\n"
                  "switchyard_spend_logs_retention_runs_total{result=\"failed\"} %llu.0\n",
                  (unsigned long long)s.deleted, (unsigned long long)(s.runs - s.skipped - s.failures),
                  (unsigned long long)s.skipped, (unsigned long long)s.failures);
}
