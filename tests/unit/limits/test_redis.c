/* test_redis.c - unit tests of the limiter's Redis scripts (src/limits/redis.c)
 * against a real redis-server the test starts on a free loopback port (the
 * tests are skipped when redis-server is not installed).
 *
 * Each test uses its own descriptor values and an explicit "now" (a fixed
 * second inside the current real minute, so the 120 s key expiries behave),
 * so windows never roll over by accident. Waits are bounded (5 s).
 */
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/clock.h"
#include "limits/limits.h"
#include "redis/redis.h"

#define WAIT_MS 5000

static pid_t g_pid;
static int g_port;
static char g_dir[64];
static uv_loop_t loop;
static uv_timer_t tick;
static struct sy_redis *ra, *rb;

/* ---- redis-server ----------------------------------------------------------------- */

static int have_redis_server(void)
{
    const char *path = getenv("PATH");
    char buf[4096];
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        snprintf(buf, sizeof buf, "%.*s/redis-server", (int)n, p);
        if (access(buf, X_OK) == 0)
            return 1;
        p += n + (e ? 1 : 0);
    }
    return 0;
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static int port_accepts(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

static void srv_start(void)
{
    g_port = free_port();
    snprintf(g_dir, sizeof g_dir, "/tmp/sy-lim-redis.XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    char port[16];
    snprintf(port, sizeof port, "%d", g_port);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execlp("redis-server", "redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly",
               "no", "--daemonize", "no", "--dir", g_dir, (char *)NULL);
        _exit(127);
    }
    g_pid = pid;
    uint64_t end = sy_now_us() / 1000 + WAIT_MS;
    while (!port_accepts(g_port)) {
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            g_pid = 0;
            fail_msg("redis-server exited before accepting");
        }
        if (sy_now_us() / 1000 > end)
            fail_msg("redis-server did not accept within 5 s");
        usleep(5000);
    }
}

static void srv_kill(void)
{
    if (g_pid > 0) {
        kill(g_pid, SIGKILL);
        waitpid(g_pid, NULL, 0);
        g_pid = 0;
    }
    if (g_dir[0]) {
        rmdir(g_dir);
        g_dir[0] = 0;
    }
}

/* ---- loop ------------------------------------------------------------------------- */

static void on_tick(uv_timer_t *t)
{
    (void)t;
}

static int run_until(int (*done)(void *), void *arg, int ms)
{
    uint64_t end = sy_now_us() / 1000 + (uint64_t)ms;
    while (!done(arg)) {
        if (sy_now_us() / 1000 > end)
            return 0;
        uv_run(&loop, UV_RUN_ONCE);
    }
    return 1;
}

static int both_up(void *arg)
{
    (void)arg;
    return sy_redis_up(ra) && sy_redis_up(rb);
}

static struct sy_redis *client(void)
{
    struct sy_redis_opts o = {.host = "127.0.0.1", .port = g_port, .cmd_timeout_s = 1.0, .connect_timeout_s = 1.0};
    struct sy_redis *r = sy_redis_new(&loop, &o);
    assert_non_null(r);
    return r;
}

static int setup(void **st)
{
    (void)st;
    if (!have_redis_server())
        return 0;
    sy_lim_init();
    srv_start();
    assert_int_equal(uv_loop_init(&loop), 0);
    uv_timer_init(&loop, &tick);
    uv_timer_start(&tick, on_tick, 5, 5);
    ra = client();
    rb = client();
    assert_true(run_until(both_up, NULL, WAIT_MS));
    return 0;
}

static void close_cb(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static int teardown(void **st)
{
    (void)st;
    if (!have_redis_server())
        return 0;
    sy_redis_free(ra);
    sy_redis_free(rb);
    ra = rb = NULL;
    uv_timer_stop(&tick);
    uv_close((uv_handle_t *)&tick, NULL);
    for (int i = 0; i < 100 && uv_run(&loop, UV_RUN_NOWAIT); i++)
        ;
    uv_walk(&loop, close_cb, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    srv_kill();
    sy_lim_shutdown();
    return 0;
}

#define NEED_REDIS()              \
    do {                          \
        if (!have_redis_server()) \
            skip();               \
    } while (0)

/* A fixed now inside the current real minute. */
static double now_fixed(void)
{
    return floor((double)time(NULL) / 60) * 60 + 1.5;
}

/* ---- takes -------------------------------------------------------------------------- */

struct take {
    struct sy_lim_req lr;
    int done, rc;
};

static int g_pending;

static void on_cb(void *ud, int rc)
{
    struct take *t = ud;
    assert_int_equal(t->done, 0);
    t->done = 1;
    t->rc = rc;
    g_pending--;
}

static int none_pending(void *arg)
{
    (void)arg;
    return g_pending == 0;
}

static void prep(struct take *t, enum sy_lim_kind k, const char *v, int64_t rpm, int64_t tpm, int64_t par, int id)
{
    memset(t, 0, sizeof *t);
    struct sy_lim_desc *d = &t->lr.d[t->lr.n++];
    d->kind = k;
    snprintf(d->value, sizeof d->value, "%s", v);
    d->rpm = rpm;
    d->tpm = tpm;
    d->par = par;
    t->lr.over = -1;
    snprintf(t->lr.member, sizeof t->lr.member, "test:%d", id);
    t->lr.par_ttl_s = 30;
}

/* Send a take and wait for its callback; returns rc. */
static int take_sync(struct take *t, struct sy_redis *r, int64_t tokens, double now)
{
    g_pending++;
    if (sy_lim_take_redis(&t->lr, r, tokens, now, on_cb, t) != 0) {
        g_pending--;
        return -2;
    }
    assert_true(run_until(none_pending, NULL, WAIT_MS));
    return t->rc;
}

/* GET key synchronously (the value as an integer; -1 when nil). */
struct get {
    int done;
    long long v;
};
static void on_get(void *ud, const redisReply *r)
{
    struct get *g = ud;
    g->done = 1;
    g->v = r && r->type == REDIS_REPLY_STRING ? atoll(r->str) : r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
}
static int get_done(void *arg)
{
    return ((struct get *)arg)->done;
}
/* (after a round trip first: a fire-and-forget settle sent just before may
 * still be in its NOSCRIPT -> EVAL retry, which would land after this) */
static long long redis_do(const char *a0, const char *a1, const char *a2)
{
    struct get g = {0};
    const char *ping[1] = {"PING"};
    assert_int_equal(sy_redis_cmd(ra, on_get, &g, 1, ping, NULL), 0);
    assert_true(run_until(get_done, &g, WAIT_MS));
    g.done = 0;
    const char *argv[3] = {a0, a1, a2};
    assert_int_equal(sy_redis_cmd(ra, on_get, &g, a2 ? 3 : 2, argv, NULL), 0);
    assert_true(run_until(get_done, &g, WAIT_MS));
    return g.v;
}

static void test_exact_two_clients(void **st)
{
    (void)st;
    NEED_REDIS();
    static struct take t[200];
    double now = now_fixed();
    for (int i = 0; i < 200; i++) {
        prep(&t[i], SY_LIM_API_KEY, "exact", 50, -1, -1, i);
        g_pending++;
        assert_int_equal(sy_lim_take_redis(&t[i].lr, i % 2 ? rb : ra, 0, now, on_cb, &t[i]), 0);
    }
    assert_true(run_until(none_pending, NULL, WAIT_MS));
    int ok = 0, over = 0;
    for (int i = 0; i < 200; i++) {
        assert_int_equal(t[i].done, 1);
        if (t[i].rc == 0) {
            ok++;
            assert_int_equal(t[i].lr.taken, 1);
            assert_int_equal(t[i].lr.in_redis, 1);
            assert_true(t[i].lr.rem_req[0] >= 0 && t[i].lr.rem_req[0] < 50);
            assert_int_equal(t[i].lr.rem_tok[0], -1);
        } else {
            assert_int_equal(t[i].rc, 1);
            over++;
            assert_int_equal(t[i].lr.over, 0);
            assert_string_equal(t[i].lr.over_type, "requests");
            assert_int_equal(t[i].lr.over_limit, 50);
            assert_int_equal(t[i].lr.over_remaining, 0);
            assert_int_equal(t[i].lr.taken, 0);
            assert_null(t[i].lr.d[0].ctr);
        }
    }
    assert_int_equal(ok, 50);
    assert_int_equal(over, 150);
    assert_int_equal(redis_do("GET", "{api_key:exact}:requests", NULL), 50);
    assert_int_equal(redis_do("GET", "{api_key:exact}:window", NULL), (long long)(now - 1.5));
    /* the shadow now refuses without Redis */
    struct take s;
    prep(&s, SY_LIM_API_KEY, "exact", 50, -1, -1, 999);
    assert_int_equal(sy_lim_shadow_over(&s.lr, 0, now + 1), 1);
    assert_string_equal(s.lr.over_type, "requests");
    int64_t r;
    assert_int_equal(sy_lim_usage(SY_LIM_API_KEY, "exact", now, &r, NULL, NULL), 0);
    assert_int_equal(r, 50);
    for (int i = 0; i < 200; i++)
        sy_lim_settle(&t[i].lr, ra, 0, now + 2);
    /* next window: free again */
    prep(&s, SY_LIM_API_KEY, "exact", 50, -1, -1, 1000);
    assert_int_equal(sy_lim_shadow_over(&s.lr, 0, now + 60), 0);
    assert_int_equal(take_sync(&s, ra, 0, now + 60), 0);
    assert_int_equal(s.lr.rem_req[0], 49);
    sy_lim_settle(&s.lr, ra, 0, now + 60);
}

static void test_tpm(void **st)
{
    (void)st;
    NEED_REDIS();
    double now = now_fixed();
    struct take a, b, c;
    prep(&a, SY_LIM_TEAM, "tpm", -1, 100, -1, 1);
    assert_int_equal(take_sync(&a, ra, 60, now), 0);
    assert_int_equal(a.lr.rem_tok[0], 40);
    assert_int_equal(a.lr.rem_req[0], -1);
    prep(&b, SY_LIM_TEAM, "tpm", -1, 100, -1, 2);
    assert_int_equal(take_sync(&b, rb, 41, now), 1);
    assert_string_equal(b.lr.over_type, "tokens");
    assert_int_equal(b.lr.over_remaining, 40);
    /* a settles having used 10: 50 freed */
    sy_lim_settle(&a.lr, ra, 10, now + 1);
    assert_int_equal(a.lr.taken, 0);
    assert_int_equal(redis_do("GET", "{team:tpm}:tokens", NULL), 10);
    prep(&b, SY_LIM_TEAM, "tpm", -1, 100, -1, 2);
    assert_int_equal(take_sync(&b, rb, 41, now + 1), 0);
    assert_int_equal(b.lr.rem_tok[0], 49);
    /* T = 0: tokens < tpm */
    prep(&c, SY_LIM_TEAM, "tpm", -1, 100, -1, 3);
    assert_int_equal(take_sync(&c, ra, 0, now + 1), 0);
    sy_lim_settle(&c.lr, ra, 49, now + 1); /* 100 now */
    prep(&c, SY_LIM_TEAM, "tpm", -1, 100, -1, 3);
    assert_int_equal(take_sync(&c, ra, 0, now + 1), 1);
    assert_string_equal(c.lr.over_type, "tokens");
    /* b settles after the window ended: its use goes to the current window */
    sy_lim_settle(&b.lr, rb, 30, now + 61);
    assert_int_equal(redis_do("GET", "{team:tpm}:window", NULL), (long long)(now - 1.5 + 60));
    assert_int_equal(redis_do("GET", "{team:tpm}:tokens", NULL), 30);
    assert_int_equal(redis_do("GET", "{team:tpm}:requests", NULL), 0);
}

static void test_parallel(void **st)
{
    (void)st;
    NEED_REDIS();
    double now = now_fixed();
    struct take t[4];
    for (int i = 0; i < 2; i++) {
        prep(&t[i], SY_LIM_API_KEY, "par", -1, -1, 2, i);
        assert_int_equal(take_sync(&t[i], i ? rb : ra, 0, now), 0);
    }
    prep(&t[2], SY_LIM_API_KEY, "par", -1, -1, 2, 2);
    assert_int_equal(take_sync(&t[2], ra, 0, now), 1);
    assert_string_equal(t[2].lr.over_type, "max_parallel_requests");
    assert_int_equal(t[2].lr.over_limit, 2);
    assert_int_equal(redis_do("ZCARD", "{api_key:par}:parallel", NULL), 2);
    /* settle releases the member */
    sy_lim_settle(&t[0].lr, ra, 0, now + 1);
    assert_int_equal(redis_do("ZCARD", "{api_key:par}:parallel", NULL), 1);
    prep(&t[2], SY_LIM_API_KEY, "par", -1, -1, 2, 2);
    assert_int_equal(take_sync(&t[2], ra, 0, now + 1), 0);
    /* a member whose deadline passed (a crashed instance's) is dropped */
    prep(&t[3], SY_LIM_API_KEY, "par", -1, -1, 2, 3);
    assert_int_equal(take_sync(&t[3], ra, 0, now + 1), 1);
    prep(&t[3], SY_LIM_API_KEY, "par", -1, -1, 2, 3);
    assert_int_equal(take_sync(&t[3], ra, 0, now + 30.5),
                     0); /* t[1] (deadline now + 30) is gone, t[2] (now + 31) not */
    assert_int_equal(redis_do("ZCARD", "{api_key:par}:parallel", NULL), 2);
    sy_lim_settle(&t[1].lr, rb, 0, now + 33);
    sy_lim_settle(&t[2].lr, ra, 0, now + 33);
    sy_lim_settle(&t[3].lr, ra, 0, now + 33);
    assert_int_equal(redis_do("ZCARD", "{api_key:par}:parallel", NULL), 0);
}

static void test_all_or_nothing(void **st)
{
    (void)st;
    NEED_REDIS();
    double now = now_fixed();
    struct take t;
    prep(&t, SY_LIM_TEAM, "aon-team", 1, -1, -1, 1);
    assert_int_equal(take_sync(&t, ra, 0, now), 0);
    sy_lim_settle(&t.lr, ra, 0, now);
    /* key passes, team over: nothing counted for the key */
    prep(&t, SY_LIM_API_KEY, "aon-key", 10, 1000, 3, 2);
    struct sy_lim_desc *d = &t.lr.d[t.lr.n++];
    d->kind = SY_LIM_TEAM;
    strcpy(d->value, "aon-team");
    d->rpm = 1;
    d->tpm = d->par = -1;
    assert_int_equal(take_sync(&t, ra, 100, now), 1);
    assert_int_equal(t.lr.over, 1);
    assert_string_equal(t.lr.over_type, "requests");
    assert_int_equal(redis_do("GET", "{api_key:aon-key}:requests", NULL), 0);
    assert_int_equal(redis_do("GET", "{api_key:aon-key}:tokens", NULL), 0);
    assert_int_equal(redis_do("ZCARD", "{api_key:aon-key}:parallel", NULL), 0);
}

static void test_error_reply(void **st)
{
    (void)st;
    NEED_REDIS();
    double now = now_fixed();
    struct take t;
    const char *argv[] = {"SET", "{api_key:wrongtype}:parallel", "x"};
    struct get g = {0};
    assert_int_equal(sy_redis_cmd(ra, on_get, &g, 3, argv, NULL), 0);
    assert_true(run_until(get_done, &g, WAIT_MS));
    prep(&t, SY_LIM_API_KEY, "wrongtype", 5, -1, 2, 1);
    assert_int_equal(take_sync(&t, ra, 0, now), -1);
    assert_int_equal(t.lr.taken, 0);
    assert_null(t.lr.d[0].ctr);
    /* the local fallback then works on the same lr */
    assert_int_equal(sy_lim_take(&t.lr, 0, now), 0);
    assert_int_equal(t.lr.in_redis, 0);
    sy_lim_settle(&t.lr, ra, 0, now);
}

static void test_redis_down(void **st)
{
    (void)st;
    NEED_REDIS();
    double now = now_fixed();
    struct take t[10];
    srv_kill();
    /* in flight or refused at once: never a hang */
    int refused = 0, failed = 0;
    for (int i = 0; i < 10; i++) {
        prep(&t[i], SY_LIM_API_KEY, "down", 5, -1, 1, i);
        g_pending++;
        if (sy_lim_take_redis(&t[i].lr, ra, 0, now, on_cb, &t[i]) != 0) {
            g_pending--;
            refused++;
            assert_null(t[i].lr.d[0].ctr);
        }
    }
    assert_true(run_until(none_pending, NULL, WAIT_MS));
    for (int i = 0; i < 10; i++)
        if (t[i].done) {
            assert_int_equal(t[i].rc, -1);
            failed++;
            assert_null(t[i].lr.d[0].ctr);
        }
    assert_int_equal(refused + failed, 10);
    /* once down, refused at once */
    struct take u;
    prep(&u, SY_LIM_API_KEY, "down", 5, -1, 1, 99);
    assert_int_equal(sy_lim_take_redis(&u.lr, ra, 0, now, on_cb, &u), -1);
    assert_int_equal(u.done, 0);
    /* settling a Redis take with the client down is harmless */
    prep(&u, SY_LIM_API_KEY, "down", 5, -1, 1, 98);
    assert_int_equal(sy_lim_take(&u.lr, 0, now), 0);
    u.lr.in_redis = 1;
    sy_lim_settle(&u.lr, ra, 0, now);
    assert_int_equal(u.lr.taken, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_exact_two_clients, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tpm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parallel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_all_or_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redis_down, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
