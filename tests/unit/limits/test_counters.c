/* test_counters.c - unit tests of the local counters (src/limits/counters.c):
 * exactness under 8 threads, tpm reservation and settling, parallel, window
 * roll-over with explicit clocks, all-or-nothing rollback, the shadow, usage
 * and the sweep. Every test uses its own descriptor values (the table is
 * process-wide) and explicit now values.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "limits/limits.h"

#define T0 1800000000.0 /* a minute boundary (divisible by 60) */

static void desc(struct sy_lim_req *lr, enum sy_lim_kind k, const char *v, int64_t rpm, int64_t tpm, int64_t par)
{
    struct sy_lim_desc *d = &lr->d[lr->n++];
    d->kind = k;
    snprintf(d->value, sizeof d->value, "%s", v);
    d->rpm = rpm;
    d->tpm = tpm;
    d->par = par;
    lr->over = -1;
}

/* ---- 8 threads x 1000 takes against rpm 500 ---------------------------------- */

static atomic_int g_ok;

static void *hammer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        struct sy_lim_req lr;
        memset(&lr, 0, sizeof lr);
        desc(&lr, SY_LIM_API_KEY, "threads", 500, -1, -1);
        if (sy_lim_take(&lr, 0, T0 + 5) == 0) {
            atomic_fetch_add(&g_ok, 1);
            sy_lim_settle(&lr, NULL, 0, T0 + 5);
        } else {
            assert_int_equal(lr.over, 0);
            assert_string_equal(lr.over_type, "requests");
            assert_true(lr.d[0].ctr == NULL); /* released */
        }
    }
    return NULL;
}

static void test_threads_exact(void **st)
{
    (void)st;
    pthread_t th[8];
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_create(&th[i], NULL, hammer, NULL), 0);
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&g_ok), 500);
    int64_t r, t, p;
    assert_int_equal(sy_lim_usage(SY_LIM_API_KEY, "threads", T0 + 6, &r, &t, &p), 0);
    assert_int_equal(r, 500);
    assert_int_equal(p, 0);
}

/* ---- rpm, remaining, window roll-over ------------------------------------------ */

static void test_rpm_window(void **st)
{
    (void)st;
    struct sy_lim_req lr;
    for (int i = 0; i < 3; i++) {
        memset(&lr, 0, sizeof lr);
        desc(&lr, SY_LIM_USER, "u-window", 3, -1, -1);
        assert_int_equal(sy_lim_take(&lr, 0, T0 + 10 + i), 0);
        assert_int_equal(lr.taken, 1);
        assert_int_equal(lr.in_redis, 0);
        assert_int_equal(lr.window, (int64_t)T0);
        assert_int_equal(lr.rem_req[0], 2 - i);
        assert_int_equal(lr.rem_tok[0], -1);
        sy_lim_settle(&lr, NULL, 0, T0 + 20);
        assert_int_equal(lr.taken, 0);
    }
    memset(&lr, 0, sizeof lr);
    desc(&lr, SY_LIM_USER, "u-window", 3, -1, -1);
    assert_int_equal(sy_lim_take(&lr, 0, T0 + 59.9), 1);
    assert_int_equal(lr.over, 0);
    assert_string_equal(lr.over_type, "requests");
    assert_int_equal(lr.over_limit, 3);
    assert_int_equal(lr.over_remaining, 0);
    assert_int_equal(lr.taken, 0);
    /* the next minute starts afresh */
    memset(&lr, 0, sizeof lr);
    desc(&lr, SY_LIM_USER, "u-window", 3, -1, -1);
    assert_int_equal(sy_lim_take(&lr, 0, T0 + 60), 0);
    assert_int_equal(lr.window, (int64_t)T0 + 60);
    assert_int_equal(lr.rem_req[0], 2);
    sy_lim_settle(&lr, NULL, 0, T0 + 61);
    /* a thread whose clock read is a hair older counts in the newer window */
    memset(&lr, 0, sizeof lr);
    desc(&lr, SY_LIM_USER, "u-window", 3, -1, -1);
    assert_int_equal(sy_lim_take(&lr, 0, T0 + 59.99), 0);
    assert_int_equal(lr.rem_req[0], 1);
    sy_lim_settle(&lr, NULL, 0, T0 + 61);
    int64_t r;
    assert_int_equal(sy_lim_usage(SY_LIM_USER, "u-window", T0 + 70, &r, NULL, NULL), 0);
    assert_int_equal(r, 2);
    assert_int_equal(sy_lim_usage(SY_LIM_USER, "u-window", T0 + 120, &r, NULL, NULL), 0);
    assert_int_equal(r, 0);
    assert_int_equal(sy_lim_usage(SY_LIM_USER, "no-such", T0, &r, NULL, NULL), -1);
}

/* ---- tpm reservation and settling ---------------------------------------------- */

static void test_tpm(void **st)
{
    (void)st;
    struct sy_lim_req a, b, c;
    memset(&a, 0, sizeof a);
    desc(&a, SY_LIM_TEAM, "t-tpm", -1, 100, -1);
    assert_int_equal(sy_lim_take(&a, 60, T0 + 1), 0);
    assert_int_equal(a.tokens, 60);
    assert_int_equal(a.rem_tok[0], 40);
    assert_int_equal(a.rem_req[0], -1);
    memset(&b, 0, sizeof b);
    desc(&b, SY_LIM_TEAM, "t-tpm", -1, 100, -1);
    assert_int_equal(sy_lim_take(&b, 41, T0 + 2), 1); /* 60 + 41 > 100 */
    assert_string_equal(b.over_type, "tokens");
    assert_int_equal(b.over_limit, 100);
    assert_int_equal(b.over_remaining, 40);
    assert_int_equal(sy_lim_take(&b, 40, T0 + 2), 0); /* 60 + 40 <= 100 */
    assert_int_equal(b.rem_tok[0], 0);
    /* T = 0: tokens < tpm is the test */
    memset(&c, 0, sizeof c);
    desc(&c, SY_LIM_TEAM, "t-tpm", -1, 100, -1);
    assert_int_equal(sy_lim_take(&c, 0, T0 + 3), 1);
    /* a settles having used 10 (reserved 60): 50 freed */
    sy_lim_settle(&a, NULL, 10, T0 + 4);
    int64_t t;
    sy_lim_usage(SY_LIM_TEAM, "t-tpm", T0 + 4, NULL, &t, NULL);
    assert_int_equal(t, 50);
    assert_int_equal(sy_lim_take(&c, 0, T0 + 5), 0);
    assert_int_equal(c.rem_tok[0], 50);
    sy_lim_settle(&c, NULL, 30, T0 + 5);
    sy_lim_usage(SY_LIM_TEAM, "t-tpm", T0 + 5, NULL, &t, NULL);
    assert_int_equal(t, 80);
    /* b settles after its window ended: its use goes into the current window */
    sy_lim_settle(&b, NULL, 70, T0 + 65);
    sy_lim_usage(SY_LIM_TEAM, "t-tpm", T0 + 65, NULL, &t, NULL);
    assert_int_equal(t, 70);
    /* settling more than once is a no-op */
    sy_lim_settle(&b, NULL, 70, T0 + 65);
    sy_lim_usage(SY_LIM_TEAM, "t-tpm", T0 + 65, NULL, &t, NULL);
    assert_int_equal(t, 70);
}

/* ---- parallel ------------------------------------------------------------------ */

static void test_parallel(void **st)
{
    (void)st;
    struct sy_lim_req l[3];
    for (int i = 0; i < 2; i++) {
        memset(&l[i], 0, sizeof l[i]);
        desc(&l[i], SY_LIM_API_KEY, "k-par", -1, -1, 2);
        assert_int_equal(sy_lim_take(&l[i], 0, T0), 0);
    }
    memset(&l[2], 0, sizeof l[2]);
    desc(&l[2], SY_LIM_API_KEY, "k-par", -1, -1, 2);
    assert_int_equal(sy_lim_take(&l[2], 0, T0), 1);
    assert_string_equal(l[2].over_type, "max_parallel_requests");
    assert_int_equal(l[2].over_limit, 2);
    assert_int_equal(l[2].over_remaining, 0);
    int64_t p;
    sy_lim_usage(SY_LIM_API_KEY, "k-par", T0, NULL, NULL, &p);
    assert_int_equal(p, 2);
    sy_lim_settle(&l[0], NULL, 0, T0 + 1);
    assert_int_equal(sy_lim_take(&l[2], 0, T0 + 1), 0);
    sy_lim_settle(&l[1], NULL, 0, T0 + 1);
    sy_lim_settle(&l[2], NULL, 0, T0 + 1);
    sy_lim_usage(SY_LIM_API_KEY, "k-par", T0, NULL, NULL, &p);
    assert_int_equal(p, 0);
}

/* ---- all or nothing ------------------------------------------------------------ */

static void test_rollback(void **st)
{
    (void)st;
    struct sy_lim_req lr;
    /* fill the team's rpm (1) */
    memset(&lr, 0, sizeof lr);
    desc(&lr, SY_LIM_TEAM, "t-rb", 1, -1, -1);
    assert_int_equal(sy_lim_take(&lr, 0, T0), 0);
    /* key ok, team over: the key's counts must be undone */
    memset(&lr, 0, sizeof lr);
    desc(&lr, SY_LIM_API_KEY, "k-rb", 10, 1000, 5);
    desc(&lr, SY_LIM_TEAM, "t-rb", 1, -1, -1);
    assert_int_equal(sy_lim_take(&lr, 100, T0 + 1), 1);
    assert_int_equal(lr.over, 1);
    assert_string_equal(lr.over_type, "requests");
    assert_null(lr.d[0].ctr);
    assert_null(lr.d[1].ctr);
    int64_t r, t, p;
    assert_int_equal(sy_lim_usage(SY_LIM_API_KEY, "k-rb", T0 + 1, &r, &t, &p), 0);
    assert_int_equal(r, 0);
    assert_int_equal(t, 0);
    assert_int_equal(p, 0);
    /* over on the first descriptor's tokens after its requests were counted */
    memset(&lr, 0, sizeof lr);
    desc(&lr, SY_LIM_API_KEY, "k-rb2", 10, 50, 5);
    assert_int_equal(sy_lim_take(&lr, 51, T0 + 1), 1);
    assert_string_equal(lr.over_type, "tokens");
    assert_int_equal(sy_lim_usage(SY_LIM_API_KEY, "k-rb2", T0 + 1, &r, &t, &p), 0);
    assert_int_equal(r, 0);
    assert_int_equal(p, 0);
}

/* ---- shadow --------------------------------------------------------------------- */

void sy__lim_shadow_set(struct sy_lim_ctr *c, int64_t window_start, int64_t req, int64_t tok, int64_t par);

static void test_shadow(void **st)
{
    (void)st;
    struct sy_lim_req lr;
    memset(&lr, 0, sizeof lr);
    desc(&lr, SY_LIM_API_KEY, "k-shadow", 5, 100, 1);
    assert_int_equal(sy_lim_shadow_over(&lr, 10, T0), 0);
    assert_non_null(lr.d[0].ctr); /* resolved, held */
    sy__lim_shadow_set(lr.d[0].ctr, (int64_t)T0, 5, 20, 1);
    sy_lim_settle(&lr, NULL, 0, T0); /* not taken: drops the reference */
    assert_null(lr.d[0].ctr);

    memset(&lr, 0, sizeof lr);
    desc(&lr, SY_LIM_API_KEY, "k-shadow", 5, 100, 1);
    assert_int_equal(sy_lim_shadow_over(&lr, 10, T0 + 30), 1);
    assert_string_equal(lr.over_type, "requests");
    assert_int_equal(lr.over_remaining, 0);
    assert_null(lr.d[0].ctr);
    /* parallel is never refused from the shadow; tokens are */
    memset(&lr, 0, sizeof lr);
    desc(&lr, SY_LIM_API_KEY, "k-shadow", 6, 25, 1);
    assert_int_equal(sy_lim_shadow_over(&lr, 5, T0 + 30), 0);
    assert_int_equal(sy_lim_shadow_over(&lr, 6, T0 + 30), 1);
    assert_string_equal(lr.over_type, "tokens");
    assert_int_equal(lr.over_remaining, 5);
    /* another window: the shadow says nothing */
    memset(&lr, 0, sizeof lr);
    desc(&lr, SY_LIM_API_KEY, "k-shadow", 5, 100, 1);
    assert_int_equal(sy_lim_shadow_over(&lr, 10, T0 + 60), 0);
    int64_t r, t;
    sy_lim_usage(SY_LIM_API_KEY, "k-shadow", T0 + 30, &r, &t, NULL);
    assert_int_equal(r, 5);
    assert_int_equal(t, 20);
    sy_lim_settle(&lr, NULL, 0, T0 + 60);
}

/* ---- sweep ---------------------------------------------------------------------- */

static void test_sweep(void **st)
{
    (void)st;
    struct sy_lim_req held, idle;
    memset(&held, 0, sizeof held);
    desc(&held, SY_LIM_ORG, "o-held", 10, -1, 3);
    memset(&idle, 0, sizeof idle);
    desc(&idle, SY_LIM_ORG, "o-idle", 10, -1, 3);
    assert_int_equal(sy_lim_take(&held, 0, T0), 0);
    assert_int_equal(sy_lim_take(&idle, 0, T0), 0);
    sy_lim_settle(&idle, NULL, 0, T0 + 1);
    sy_lim_sweep(T0 + 61); /* one window: both stay */
    assert_int_equal(sy_lim_usage(SY_LIM_ORG, "o-idle", T0 + 61, NULL, NULL, NULL), 0);
    sy_lim_sweep(T0 + 120); /* two windows: the idle one goes, the held one stays */
    assert_int_equal(sy_lim_usage(SY_LIM_ORG, "o-idle", T0 + 120, NULL, NULL, NULL), -1);
    int64_t p;
    assert_int_equal(sy_lim_usage(SY_LIM_ORG, "o-held", T0 + 120, NULL, NULL, &p), 0);
    assert_int_equal(p, 1);
    sy_lim_settle(&held, NULL, 0, T0 + 121);
    sy_lim_sweep(T0 + 300);
    assert_int_equal(sy_lim_usage(SY_LIM_ORG, "o-held", T0 + 300, NULL, NULL, NULL), -1);
}

/* many counters: the shards grow */
static void test_many(void **st)
{
    (void)st;
    for (int i = 0; i < 20000; i++) {
        struct sy_lim_req lr;
        memset(&lr, 0, sizeof lr);
        char v[32];
        snprintf(v, sizeof v, "many-%d", i);
        desc(&lr, SY_LIM_END_USER, v, 1, -1, -1);
        assert_int_equal(sy_lim_take(&lr, 0, T0), 0);
        sy_lim_settle(&lr, NULL, 0, T0);
    }
    for (int i = 0; i < 20000; i += 997) {
        char v[32];
        int64_t r;
        snprintf(v, sizeof v, "many-%d", i);
        assert_int_equal(sy_lim_usage(SY_LIM_END_USER, v, T0, &r, NULL, NULL), 0);
        assert_int_equal(r, 1);
    }
    sy_lim_sweep(T0 + 1000);
    assert_int_equal(sy_lim_usage(SY_LIM_END_USER, "many-5", T0, NULL, NULL, NULL), -1);
}

static int setup(void **st)
{
    (void)st;
    sy_lim_init();
    return 0;
}
static int teardown(void **st)
{
    (void)st;
    sy_lim_shutdown();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_exact), cmocka_unit_test(test_rpm_window), cmocka_unit_test(test_tpm),
        cmocka_unit_test(test_parallel),      cmocka_unit_test(test_rollback),   cmocka_unit_test(test_shadow),
        cmocka_unit_test(test_sweep),         cmocka_unit_test(test_many),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
