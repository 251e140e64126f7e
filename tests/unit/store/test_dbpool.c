/* test_dbpool.c - the DB threads (store/dbpool.h) on a SQLite file:
 * completions arrive on the submitting port's loop thread, exactly once,
 * with many jobs from two loops at once; nowait jobs; sy_db_stop runs what
 * is queued before it returns; a port freed with jobs in flight drops them
 * without crashing; run_sync; the pool's state calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "store/dbpool.h"
#include "store/store.h"

static char path[512], url[600];

static void rm_db(void)
{
    char f[600];
    unlink(path);
    snprintf(f, sizeof f, "%s-wal", path);
    unlink(f);
    snprintf(f, sizeof f, "%s-shm", path);
    unlink(f);
}

static int start_pool(void **state)
{
    rm_db();
    struct sy_store_conf conf = {.url = url, .busy_timeout_s = 10};
    char err[256];
    if (sy_db_start(&conf, 4, 1, err, sizeof err) != 0)
        fail_msg("start: %s", err);
    return 0;
}

static int stop_pool(void **state)
{
    sy_db_stop();
    rm_db();
    return 0;
}

/* ---- many jobs from two loops ------------------------------------------- */

#define NJOBS 300

struct loopctx;
struct myjob {
    struct sy_db_job job; /* first */
    struct loopctx *lc;
    int n;
    int rc;
    pthread_t ran_on;
};

struct loopctx {
    uv_loop_t loop;
    struct sy_db_port *port;
    pthread_t self;
    int tag;
    int done;
    int wrong_thread;
    int bad_rc;
    int dup;
    unsigned char seen[NJOBS];
    struct myjob jobs[NJOBS];
};

static void run_insert(struct sy_store *st, struct sy_db_job *j)
{
    struct myjob *m = (struct myjob *)j;
    char id[32];
    snprintf(id, sizeof id, "L%d-%d", m->lc->tag, m->n);
    struct sy_sval p[] = {sy_sv_text(id), sy_sv_num(0.5)};
    m->rc =
        sy_store_exec(st, "INSERT INTO \"LiteLLM_Config\" (param_name, param_value) VALUES ($1, $2)", 2, p, NULL, NULL);
    m->ran_on = pthread_self();
}

static void done_insert(struct sy_db_job *j)
{
    struct myjob *m = (struct myjob *)j;
    struct loopctx *lc = m->lc;
    if (!pthread_equal(pthread_self(), lc->self) || pthread_equal(m->ran_on, lc->self))
        lc->wrong_thread++;
    if (m->rc != 1)
        lc->bad_rc++;
    if (lc->seen[m->n]++)
        lc->dup++;
    if (++lc->done == NJOBS) {
        sy_db_port_free(lc->port); /* the loop then has nothing left and returns */
        lc->port = NULL;
    }
}

static void kick(uv_timer_t *t)
{
    struct loopctx *lc = t->data;
    for (int i = 0; i < NJOBS; i++) {
        struct myjob *m = &lc->jobs[i];
        m->job.run = run_insert;
        m->job.done = done_insert;
        m->lc = lc;
        m->n = i;
        if (sy_db_submit(lc->port, &m->job) != 0)
            lc->bad_rc++;
    }
    uv_close((uv_handle_t *)t, NULL);
}

static void *loop_thread(void *arg)
{
    struct loopctx *lc = arg;
    lc->self = pthread_self();
    uv_loop_init(&lc->loop);
    lc->port = sy_db_port_new(&lc->loop);
    uv_timer_t t;
    uv_timer_init(&lc->loop, &t);
    t.data = lc;
    uv_timer_start(&t, kick, 0, 0);
    uv_run(&lc->loop, UV_RUN_DEFAULT); /* returns when the port is freed */
    uv_loop_close(&lc->loop);
    return NULL;
}

static void two_loops(void **state)
{
    assert_int_equal(sy_db_enabled(), 1);
    assert_int_equal(sy_db_kind(), SY_STORE_SQLITE);
    assert_int_equal(sy_db_up(), 1);
    assert_non_null(sy_db_conf());
    struct loopctx *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    a->tag = 1, b->tag = 2;
    pthread_t ta, tb;
    pthread_create(&ta, NULL, loop_thread, a);
    pthread_create(&tb, NULL, loop_thread, b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    struct loopctx *both[] = {a, b};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(both[i]->done, NJOBS);
        assert_int_equal(both[i]->wrong_thread, 0);
        assert_int_equal(both[i]->bad_rc, 0);
        assert_int_equal(both[i]->dup, 0);
    }
    free(a);
    free(b);
}

/* ---- run_sync ---------------------------------------------------------- */

static int count_cb(void *ud, const struct sy_srow *r)
{
    *(int64_t *)ud = sy_srow_int(r, "c", -1);
    return 0;
}

static int sync_fn(struct sy_store *st, void *arg)
{
    int64_t c = -1;
    if (sy_store_exec(st, "SELECT COUNT(*) AS c FROM \"LiteLLM_Config\"", 0, NULL, count_cb, &c) < 0)
        return -2;
    *(int64_t *)arg = c;
    return 7;
}

static void run_sync(void **state)
{
    int64_t c = -1;
    assert_int_equal(sy_db_run_sync(sync_fn, &c), 7); /* the pool migrated at start */
    assert_int_equal(c, 0);
}

/* ---- nowait, and stop drains ---------------------------------------------- */

static atomic_int nowait_ran;

struct nw {
    struct sy_db_job job;
    int n;
};

static void run_nowait(struct sy_store *st, struct sy_db_job *j)
{
    struct nw *w = (struct nw *)j;
    char id[32];
    snprintf(id, sizeof id, "nw-%d", w->n);
    struct sy_sval p = sy_sv_text(id);
    if (sy_store_exec(st, "INSERT INTO \"LiteLLM_Config\" (param_name) VALUES ($1)", 1, &p, NULL, NULL) == 1)
        atomic_fetch_add(&nowait_ran, 1);
    free(w); /* the job is the runner's */
}

static void stop_drains(void **state)
{
    atomic_store(&nowait_ran, 0);
    for (int i = 0; i < 500; i++) {
        struct nw *w = calloc(1, sizeof *w);
        w->job.run = run_nowait;
        w->n = i;
        assert_int_equal(sy_db_submit_nowait(&w->job), 0);
    }
    sy_db_stop();
    assert_int_equal(atomic_load(&nowait_ran), 500);
    assert_int_equal(sy_db_enabled(), 0);
    assert_null(sy_db_conf());
    struct nw w = {.job.run = run_nowait};
    assert_int_equal(sy_db_submit_nowait(&w.job), -1);
    assert_int_equal(sy_db_run_sync(sync_fn, NULL), -1);
    /* started again on the same file: the rows are there */
    struct sy_store_conf conf = {.url = url};
    char err[256];
    assert_int_equal(sy_db_start(&conf, 2, 1, err, sizeof err), 0);
    int64_t c = -1;
    assert_int_equal(sy_db_run_sync(sync_fn, &c), 7);
    assert_int_equal(c, 500);
}

/* ---- a port freed with jobs in flight -------------------------------------- */

static atomic_int slow_ran, slow_done;

static void run_slow(struct sy_store *st, struct sy_db_job *j)
{
    usleep(20000);
    atomic_fetch_add(&slow_ran, 1);
}

static void done_slow(struct sy_db_job *j)
{
    atomic_fetch_add(&slow_done, 1);
}

static void freed_port(void **state)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct sy_db_port *p = sy_db_port_new(&loop);
    assert_non_null(p);
    static struct sy_db_job jobs[16];
    atomic_store(&slow_ran, 0);
    atomic_store(&slow_done, 0);
    for (int i = 0; i < 16; i++) {
        jobs[i].run = run_slow;
        jobs[i].done = done_slow;
        assert_int_equal(sy_db_submit(p, &jobs[i]), 0);
    }
    sy_db_port_free(p);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    sy_db_stop(); /* the queued jobs still run; their port is gone */
    assert_int_equal(atomic_load(&slow_ran), 16);
    assert_int_equal(atomic_load(&slow_done), 0);
}

/* ---- bad configuration ------------------------------------------------------ */

static void bad_start(void **state)
{
    struct sy_store_conf conf = {.url = "sqlite:///nonexistent-sy-dir/a/b.db"};
    char err[256];
    assert_int_equal(sy_db_start(&conf, 2, 1, err, sizeof err), -1);
    assert_true(strlen(err) > 0);
    assert_int_equal(sy_db_enabled(), 0);
    struct sy_db_job j = {.run = run_slow};
    assert_int_equal(sy_db_submit_nowait(&j), -1);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/sy-test-dbpool-%d.db", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    snprintf(url, sizeof url, "%s", path);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(two_loops, start_pool, stop_pool),
        cmocka_unit_test_setup_teardown(run_sync, start_pool, stop_pool),
        cmocka_unit_test_setup_teardown(stop_drains, start_pool, stop_pool),
        cmocka_unit_test_setup_teardown(freed_port, start_pool, stop_pool),
        cmocka_unit_test(bad_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
