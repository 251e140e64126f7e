/* test_redis.c - unit tests of the Redis client (src/redis) against real
 * redis-server processes that the test starts itself on free loopback ports
 * (and a TCP listener of its own that accepts and never answers).
 *
 * redis-server missing is a FAILURE with a message, never a silent skip. Waits
 * are bounded ("within 5 s"); no test asserts a timing beyond such bounds.
 * Each test runs on a fresh loop; teardown frees every client, checks that the
 * loop closes with no handle left (and ASan checks the memory) and that the
 * process-wide state is back to "not configured".
 */
#include <errno.h>
#include <fcntl.h>
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/clock.h"
#include "redis/redis.h"

#define WAIT_MS 5000

/* ---- redis-server processes ------------------------------------------------ */

struct srv {
    pid_t pid;
    int port;
    char dir[64];
};

#define MAX_SRV 4
static struct srv g_srvs[MAX_SRV]; /* killed by teardown and at exit, whatever happened */
static int g_nsrv;

static struct srv *srv_new(void)
{
    assert_true(g_nsrv < MAX_SRV);
    return &g_srvs[g_nsrv++];
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

/* Start redis-server on s->port (a free one when 0), extra "--opt value"
 * pairs after the fixed ones; returns once it accepts connections. */
static void srv_start(struct srv *s, const char *opt, const char *val)
{
    if (!have_redis_server())
        fail_msg("redis-server not found in PATH: these tests need a real server (Debian: apt-get install "
                 "redis-server)");
    if (!s->port)
        s->port = free_port();
    if (!s->dir[0]) {
        snprintf(s->dir, sizeof s->dir, "/tmp/sy-redis-test.XXXXXX");
        assert_non_null(mkdtemp(s->dir));
    }
    char port[16];
    snprintf(port, sizeof port, "%d", s->port);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with the test, even if the test crashes */
        char log[128];
        snprintf(log, sizeof log, "%s/redis.log", s->dir);
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        const char *argv[] = {
            "redis-server", "--port",      port, "--bind", "127.0.0.1 -::1", "--save", "",  "--appendonly",
            "no",           "--daemonize", "no", "--dir",  s->dir,           opt,      val, NULL};
        execvp("redis-server", (char *const *)argv);
        _exit(127);
    }
    s->pid = pid;
    uint64_t end = sy_now_us() / 1000 + WAIT_MS;
    while (!port_accepts(s->port)) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            s->pid = 0;
            fail_msg("redis-server exited (status %d) before accepting on port %d; see %s/redis.log", st, s->port,
                     s->dir);
        }
        if (sy_now_us() / 1000 > end)
            fail_msg("redis-server did not accept on port %d within 5 s; see %s/redis.log", s->port, s->dir);
        usleep(5000);
    }
}

static void srv_signal(struct srv *s, int sig)
{
    if (s->pid > 0)
        kill(s->pid, sig);
}

/* SIGSTOP, and wait until the kernel shows the process stopped ('T' in /proc/pid/stat). */
static void srv_stop(struct srv *s)
{
    srv_signal(s, SIGSTOP);
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)s->pid);
    uint64_t end = sy_now_us() / 1000 + WAIT_MS;
    for (;;) {
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        const char *p = strrchr(buf, ')'); /* "pid (comm) S ..." */
        if (p && p[1] == ' ' && p[2] == 'T')
            return;
        if (sy_now_us() / 1000 > end)
            fail_msg("redis-server did not stop within 5 s");
        usleep(1000);
    }
}

static void srv_kill(struct srv *s)
{
    if (s->pid <= 0)
        return;
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
}

static void srv_cleanup_all(void)
{
    for (int i = 0; i < g_nsrv; i++) {
        struct srv *s = &g_srvs[i];
        srv_kill(s);
        if (s->dir[0]) {
            char cmd[128];
            snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
            if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", s->dir);
        }
        memset(s, 0, sizeof *s);
    }
    g_nsrv = 0;
}

/* ---- loop, clients, replies ------------------------------------------------- */

static uv_loop_t loop;
static uv_timer_t tick; /* wakes the loop every few ms so waits can check their deadline */

#define MAX_CLIENTS 8
static struct sy_redis *g_clients[MAX_CLIENTS];

static void on_tick(uv_timer_t *t)
{
    (void)t;
}

static struct sy_redis *client_new(const struct sy_redis_opts *o)
{
    struct sy_redis *r = sy_redis_new(&loop, o);
    assert_non_null(r);
    for (int i = 0; i < MAX_CLIENTS; i++)
        if (!g_clients[i]) {
            g_clients[i] = r;
            return r;
        }
    fail_msg("too many clients");
    return NULL;
}

static void client_free(struct sy_redis *r)
{
    for (int i = 0; i < MAX_CLIENTS; i++)
        if (g_clients[i] == r)
            g_clients[i] = NULL;
    sy_redis_free(r);
}

static struct sy_redis *local_client(int port, double cmd_to, double conn_to)
{
    struct sy_redis_opts o = {.host = "127.0.0.1", .port = port, .cmd_timeout_s = cmd_to, .connect_timeout_s = conn_to};
    return client_new(&o);
}

static uint64_t now_ms(void)
{
    return sy_now_us() / 1000;
}

/* Run the loop until done(arg) or ms elapsed; 1 when done. */
static int run_until(int (*done)(void *), void *arg, int ms)
{
    uint64_t end = now_ms() + (uint64_t)ms;
    while (!done(arg)) {
        if (now_ms() > end)
            return 0;
        uv_run(&loop, UV_RUN_ONCE);
    }
    return 1;
}

static int never(void *arg)
{
    (void)arg;
    return 0;
}

static void run_for(int ms)
{
    run_until(never, NULL, ms);
}

static int is_up(void *r)
{
    return sy_redis_up(r);
}
static int is_down(void *r)
{
    return !sy_redis_up(r);
}

static void wait_up(struct sy_redis *r)
{
    if (!run_until(is_up, r, WAIT_MS))
        fail_msg("client not UP within 5 s");
}

struct rec {
    int calls, nulls;
    int type;
    long long integer;
    size_t len;
    char str[4096];
    /* optional actions from inside the callback */
    struct sy_redis *free_client; /* sy_redis_free this client */
    struct sy_redis *cmd_client;  /* try a command on this client; result in cmd_rc */
    int cmd_rc;
};

static void rec_cb(void *ud, const redisReply *reply)
{
    struct rec *x = ud;
    x->calls++;
    if (!reply) {
        x->nulls++;
    } else {
        x->type = reply->type;
        x->integer = reply->integer;
        x->len = reply->len;
        if (reply->str)
            memcpy(x->str, reply->str, reply->len < sizeof x->str ? reply->len : sizeof x->str - 1);
        if (reply->type == REDIS_REPLY_ARRAY)
            x->len = reply->elements;
    }
    if (x->cmd_client) {
        const char *argv[] = {"PING"};
        x->cmd_rc = sy_redis_cmd(x->cmd_client, NULL, NULL, 1, argv, NULL);
    }
    if (x->free_client) {
        client_free(x->free_client);
        x->free_client = NULL;
    }
}

static int rec_done(void *x)
{
    return ((struct rec *)x)->calls > 0;
}

/* sy_redis_cmd with NUL-terminated arguments. */
static int cmd(struct sy_redis *r, struct rec *x, int argc, ...)
{
    const char *argv[16];
    va_list ap;
    va_start(ap, argc);
    for (int i = 0; i < argc; i++)
        argv[i] = va_arg(ap, const char *);
    va_end(ap);
    if (x)
        memset(x, 0, sizeof *x);
    return sy_redis_cmd(r, x ? rec_cb : NULL, x, argc, argv, NULL);
}

/* Send and wait for the reply (within 5 s); the reply in *x. */
static void call(struct sy_redis *r, struct rec *x, int argc, ...)
{
    const char *argv[16];
    va_list ap;
    va_start(ap, argc);
    for (int i = 0; i < argc; i++)
        argv[i] = va_arg(ap, const char *);
    va_end(ap);
    memset(x, 0, sizeof *x);
    assert_int_equal(sy_redis_cmd(r, rec_cb, x, argc, argv, NULL), 0);
    if (!run_until(rec_done, x, WAIT_MS))
        fail_msg("no reply to %s within 5 s", argv[0]);
    assert_int_equal(x->calls, 1);
}

/* ---- stderr capture (the client logs there) ----------------------------------- */

static int cap_saved = -1;
static char cap_path[64];

static void cap_start(void)
{
    fflush(stderr);
    snprintf(cap_path, sizeof cap_path, "/tmp/sy-redis-log.XXXXXX");
    int fd = mkstemp(cap_path);
    assert_true(fd >= 0);
    cap_saved = dup(2);
    dup2(fd, 2);
    close(fd);
}

/* Stop capturing; the captured text (malloc'ed), also echoed to stderr. */
static char *cap_stop(void)
{
    if (cap_saved < 0)
        return NULL;
    fflush(stderr);
    dup2(cap_saved, 2);
    close(cap_saved);
    cap_saved = -1;
    FILE *f = fopen(cap_path, "r");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = 0;
    fclose(f);
    unlink(cap_path);
    fputs(buf, stderr);
    return buf;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* ---- fixtures ------------------------------------------------------------------ */

static int setup(void **state)
{
    (void)state;
    if (uv_loop_init(&loop) != 0)
        return -1;
    uv_timer_init(&loop, &tick);
    uv_timer_start(&tick, on_tick, 5, 5);
    return sy_redis_global_state() == SY_REDIS_NOT_CONFIGURED ? 0 : -1;
}

static void close_walk(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static int teardown(void **state)
{
    (void)state;
    char *log = cap_stop();
    free(log);
    for (int i = 0; i < MAX_CLIENTS; i++)
        if (g_clients[i])
            client_free(g_clients[i]);
    srv_cleanup_all();
    uv_close((uv_handle_t *)&tick, NULL);
    /* Every handle the client opened must close by itself; bounded, in case one does not. */
    uint64_t end = now_ms() + WAIT_MS;
    while (uv_loop_alive(&loop) && now_ms() < end) {
        uv_run(&loop, UV_RUN_NOWAIT);
        usleep(1000);
    }
    int leaked = uv_loop_alive(&loop);
    uv_walk(&loop, close_walk, NULL); /* test-owned leftovers (listener) after a failure */
    uv_run(&loop, UV_RUN_DEFAULT);
    int rc = uv_loop_close(&loop);
    if (leaked || rc != 0) {
        fprintf(stderr, "teardown: the loop still had handles or requests\n");
        return -1;
    }
    return sy_redis_global_state() == SY_REDIS_NOT_CONFIGURED ? 0 : -1;
}

/* ---- tests ----------------------------------------------------------------------- */

static void t_roundtrip(void **state)
{
    (void)state;
    struct srv *s = srv_new();
    srv_start(s, NULL, NULL);
    struct sy_redis *r = local_client(s->port, 0, 0);
    assert_int_equal(sy_redis_global_state(), SY_REDIS_DISCONNECTED); /* connecting */
    wait_up(r);
    assert_int_equal(sy_redis_global_state(), SY_REDIS_CONNECTED);
    assert_string_equal(sy_redis_state_name(sy_redis_global_state()), "connected");

    struct rec x;
    call(r, &x, 3, "SET", "k", "v");
    assert_int_equal(x.type, REDIS_REPLY_STATUS);
    assert_string_equal(x.str, "OK");
    call(r, &x, 2, "GET", "k");
    assert_int_equal(x.type, REDIS_REPLY_STRING);
    assert_string_equal(x.str, "v");
    for (int i = 1; i <= 3; i++) {
        call(r, &x, 2, "INCR", "n");
        assert_int_equal(x.type, REDIS_REPLY_INTEGER);
        assert_int_equal(x.integer, i);
    }
    call(r, &x, 2, "GET", "missing");
    assert_int_equal(x.type, REDIS_REPLY_NIL);
    call(r, &x, 2, "INCR", "k"); /* an error reply is passed as is */
    assert_int_equal(x.type, REDIS_REPLY_ERROR);
    assert_non_null(strstr(x.str, "not an integer"));

    /* binary safe: NUL bytes in key and value */
    const char *argv[] = {"SET", "b\0k", "a\0b\r\nc"};
    const size_t lens[] = {3, 3, 7};
    memset(&x, 0, sizeof x);
    assert_int_equal(sy_redis_cmd(r, rec_cb, &x, 3, argv, lens), 0);
    assert_true(run_until(rec_done, &x, WAIT_MS));
    const char *gargv[] = {"GET", "b\0k"};
    const size_t glens[] = {3, 3};
    memset(&x, 0, sizeof x);
    assert_int_equal(sy_redis_cmd(r, rec_cb, &x, 2, gargv, glens), 0);
    assert_true(run_until(rec_done, &x, WAIT_MS));
    assert_int_equal(x.type, REDIS_REPLY_STRING);
    assert_int_equal(x.len, 7);
    assert_memory_equal(x.str, "a\0b\r\nc", 7);

    /* fire and forget, then a reply proves it ran */
    assert_int_equal(cmd(r, NULL, 3, "SET", "ff", "1"), 0);
    call(r, &x, 2, "GET", "ff");
    assert_string_equal(x.str, "1");

    /* commands that would break the client are refused; bad arguments too */
    assert_int_equal(cmd(r, &x, 2, "SUBSCRIBE", "ch"), -1);
    assert_int_equal(cmd(r, &x, 1, "monitor"), -1);
    assert_int_equal(cmd(r, &x, 2, "select", "2"), -1);
    assert_int_equal(sy_redis_cmd(r, rec_cb, &x, 0, argv, NULL), -1);
    assert_int_equal(x.calls, 0);
    assert_true(sy_redis_up(r));

    client_free(r);
    assert_int_equal(sy_redis_global_state(), SY_REDIS_NOT_CONFIGURED);
    assert_string_equal(sy_redis_state_name(SY_REDIS_NOT_CONFIGURED), "not configured");
    assert_string_equal(sy_redis_state_name(SY_REDIS_DISCONNECTED), "disconnected");
}

/* Replies keep the client UP while the lazy timeout timer re-arms for newer commands. */
static void t_no_false_timeout(void **state)
{
    (void)state;
    struct srv *s = srv_new();
    srv_start(s, NULL, NULL);
    struct sy_redis *r = local_client(s->port, 0.5, 0);
    wait_up(r);
    struct rec x[15];
    for (int i = 0; i < 15; i++) {
        assert_int_equal(cmd(r, &x[i], 1, "PING"), 0);
        run_for(100);
    }
    assert_true(run_until(rec_done, &x[14], WAIT_MS));
    for (int i = 0; i < 15; i++) {
        assert_int_equal(x[i].calls, 1);
        assert_int_equal(x[i].nulls, 0);
    }
    assert_true(sy_redis_up(r));

    /* The loop stalls past the timeout while the reply waits in the socket:
     * timers run before I/O in a loop turn, the client reads before it gives up. */
    assert_int_equal(cmd(r, &x[0], 1, "PING"), 0);
    uv_run(&loop, UV_RUN_NOWAIT); /* written; the reply cannot have been read in that same poll */
    usleep(800 * 1000);
    assert_true(run_until(rec_done, &x[0], WAIT_MS));
    assert_int_equal(x[0].nulls, 0);
    assert_string_equal(x[0].str, "PONG");
    assert_true(sy_redis_up(r));

    /* a command issued from a reply callback */
    struct rec y;
    assert_int_equal(cmd(r, &y, 1, "PING"), 0);
    y.cmd_client = r;
    assert_true(run_until(rec_done, &y, WAIT_MS));
    assert_int_equal(y.cmd_rc, 0);
    run_for(50);
}

static void t_hostname(void **state)
{
    (void)state;
    struct srv *s = srv_new();
    srv_start(s, NULL, NULL);
    struct sy_redis_opts o = {.host = "localhost", .port = s->port};
    struct sy_redis *r = client_new(&o);
    wait_up(r); /* resolved with uv_getaddrinfo; ::1 or 127.0.0.1, whichever the server has */
    struct rec x;
    call(r, &x, 1, "PING");
    assert_string_equal(x.str, "PONG");
}

struct seq {
    int *order; /* reply i must see INCR value i+1 */
    int *calls;
    int i;
};

static int n_pipe_done;
static void pipe_cb(void *ud, const redisReply *reply)
{
    struct seq *q = ud;
    q->calls[q->i]++;
    q->order[q->i] = reply && reply->type == REDIS_REPLY_INTEGER ? (int)reply->integer : -1;
    n_pipe_done++;
}

static int pipe_done(void *n)
{
    return n_pipe_done >= *(int *)n;
}

static void t_pipeline(void **state)
{
    (void)state;
    struct srv *s = srv_new();
    srv_start(s, NULL, NULL);
    struct sy_redis *r = local_client(s->port, 0, 0);
    wait_up(r);
    enum { N = 1000 };
    static int order[N], calls[N];
    static struct seq q[N];
    memset(order, 0, sizeof order);
    memset(calls, 0, sizeof calls);
    n_pipe_done = 0;
    /* all in this one loop iteration */
    for (int i = 0; i < N; i++) {
        q[i] = (struct seq){.order = order, .calls = calls, .i = i};
        const char *argv[] = {"INCR", "ctr"};
        assert_int_equal(sy_redis_cmd(r, pipe_cb, &q[i], 2, argv, NULL), 0);
    }
    int n = N;
    assert_true(run_until(pipe_done, &n, WAIT_MS));
    for (int i = 0; i < N; i++) {
        assert_int_equal(calls[i], 1);
        assert_int_equal(order[i], i + 1);
    }
}

static void t_auth(void **state)
{
    (void)state;
    struct srv *s = srv_new();
    srv_start(s, "--requirepass", "s3cret");

    struct sy_redis_opts good = {.host = "127.0.0.1", .port = s->port, .password = "s3cret"};
    struct sy_redis *r = client_new(&good);
    wait_up(r);
    struct rec x;
    call(r, &x, 3, "SET", "a", "1");
    assert_string_equal(x.str, "OK");

    struct sy_redis_opts user = {.host = "127.0.0.1", .port = s->port, .username = "default", .password = "s3cret"};
    struct sy_redis *u = client_new(&user);
    wait_up(u);
    call(u, &x, 2, "GET", "a");
    assert_string_equal(x.str, "1");
    client_free(u);

    /* A wrong password: never UP, refused commands, logged once across retries. */
    cap_start();
    struct sy_redis_opts bad = {.host = "127.0.0.1", .port = s->port, .password = "wrong"};
    struct sy_redis *b = client_new(&bad);
    run_for(1000); /* back-off 100, 200, 400 ms: several attempts */
    char *log = cap_stop();
    assert_false(sy_redis_up(b));
    assert_int_equal(cmd(b, &x, 1, "PING"), -1);
    assert_int_equal(sy_redis_global_state(), SY_REDIS_DISCONNECTED); /* r is up, b is not */
    assert_int_equal(count(log, "AUTH failed"), 1);
    assert_non_null(strstr(log, "WRONGPASS"));
    assert_null(strstr(log, "wrong")); /* the password is not logged */
    free(log);
    client_free(b);
    assert_int_equal(sy_redis_global_state(), SY_REDIS_CONNECTED);

    /* No password against a server that needs one: the handshake PING fails. */
    struct sy_redis *n = local_client(s->port, 0, 0);
    run_for(300);
    assert_false(sy_redis_up(n));
    client_free(n);
}

static void t_select(void **state)
{
    (void)state;
    struct srv *s = srv_new();
    srv_start(s, NULL, NULL);
    struct sy_redis_opts o3 = {.host = "127.0.0.1", .port = s->port, .db = 3};
    struct sy_redis *r3 = client_new(&o3);
    struct sy_redis *r0 = local_client(s->port, 0, 0);
    wait_up(r3);
    wait_up(r0);
    struct rec x;
    call(r3, &x, 3, "SET", "only3", "yes");
    call(r0, &x, 2, "GET", "only3");
    assert_int_equal(x.type, REDIS_REPLY_NIL);
    call(r3, &x, 2, "GET", "only3");
    assert_string_equal(x.str, "yes");
    call(r0, &x, 2, "EXISTS", "only3");
    assert_int_equal(x.integer, 0);

    /* an out-of-range db fails the handshake */
    struct sy_redis_opts o99 = {.host = "127.0.0.1", .port = s->port, .db = 99};
    struct sy_redis *r99 = client_new(&o99);
    run_for(300);
    assert_false(sy_redis_up(r99));
}

static int n_eval_done;
static void eval_cb(void *ud, const redisReply *reply)
{
    struct rec *x = ud;
    rec_cb(x, reply);
    n_eval_done++;
}

static int eval_done(void *n)
{
    return n_eval_done >= *(int *)n;
}

static void eval_wait(struct sy_redis *r, struct sy_redis_script *sc, struct rec *x, const char *key, const char *arg)
{
    memset(x, 0, sizeof *x);
    n_eval_done = 0;
    int one = 1;
    assert_int_equal(sy_redis_eval(r, sc, eval_cb, x, 1, &key, NULL, 1, &arg, NULL), 0);
    assert_true(run_until(eval_done, &one, WAIT_MS));
    assert_int_equal(x->calls, 1);
}

static void t_eval(void **state)
{
    (void)state;
    struct srv *s = srv_new();
    srv_start(s, NULL, NULL);
    struct sy_redis *r = local_client(s->port, 0, 0);
    wait_up(r);
    static struct sy_redis_script incr = {.src = "return redis.call('INCRBY', KEYS[1], ARGV[1])"};
    struct rec x;

    /* NOSCRIPT -> EVAL: the callback sees only the final reply */
    call(r, &x, 2, "SCRIPT", "FLUSH");
    call(r, &x, 2, "CONFIG", "RESETSTAT");
    eval_wait(r, &incr, &x, "e", "5");
    assert_int_equal(x.type, REDIS_REPLY_INTEGER);
    assert_int_equal(x.integer, 5);
    call(r, &x, 2, "INFO", "commandstats");
    assert_non_null(strstr(x.str, "cmdstat_eval:calls=1,"));
    /* our SHA-1 is the server's */
    call(r, &x, 3, "SCRIPT", "LOAD", incr.src);
    assert_int_equal(x.type, REDIS_REPLY_STRING);
    assert_string_equal(x.str, incr.sha);

    /* the script is cached now: EVALSHA only */
    call(r, &x, 2, "CONFIG", "RESETSTAT");
    eval_wait(r, &incr, &x, "e", "5");
    assert_int_equal(x.integer, 10);
    call(r, &x, 2, "INFO", "commandstats");
    assert_null(strstr(x.str, "cmdstat_eval:"));
    assert_non_null(strstr(x.str, "cmdstat_evalsha:calls=1,"));

    /* many arguments (beyond the inline argv), binary, pipelined, after a flush */
    static struct sy_redis_script cnt = {.src = "return {#KEYS, #ARGV, string.len(ARGV[#ARGV])}"};
    call(r, &x, 2, "SCRIPT", "FLUSH");
    enum { M = 20 };
    const char *keys[2] = {"k1", "k2"};
    const char *args[M];
    size_t alens[M];
    for (int i = 0; i < M; i++) {
        args[i] = "x\0y";
        alens[i] = 3;
    }
    static struct rec xs[50];
    memset(xs, 0, sizeof xs);
    n_eval_done = 0;
    for (int i = 0; i < 50; i++)
        assert_int_equal(sy_redis_eval(r, &cnt, eval_cb, &xs[i], 2, keys, NULL, M, args, alens), 0);
    int n = 50;
    assert_true(run_until(eval_done, &n, WAIT_MS));
    for (int i = 0; i < 50; i++) {
        assert_int_equal(xs[i].calls, 1);
        assert_int_equal(xs[i].type, REDIS_REPLY_ARRAY);
        assert_int_equal(xs[i].len, 3);
    }

    /* a script error is the user's reply */
    static struct sy_redis_script bad = {.src = "return redis.call('NOSUCHCOMMAND')"};
    eval_wait(r, &bad, &x, "e", "1");
    assert_int_equal(x.type, REDIS_REPLY_ERROR);

    client_free(r);
}

/* Several pending commands: BLPOP blocks the connection, the rest wait behind it. */
static void send_pending(struct sy_redis *r, struct rec *x, int n)
{
    assert_int_equal(cmd(r, &x[0], 3, "BLPOP", "nothing", "0"), 0);
    for (int i = 1; i < n; i++)
        assert_int_equal(cmd(r, &x[i], 3, "SET", "p", "1"), 0);
}

static int all_called(void *arg)
{
    struct rec *x = arg;
    for (int i = 0; i < 4; i++)
        if (!x[i].calls)
            return 0;
    return 1;
}

static void check_all_null_once(struct rec *x, int n)
{
    for (int i = 0; i < n; i++) {
        assert_int_equal(x[i].calls, 1);
        assert_int_equal(x[i].nulls, 1);
    }
}

static void t_server_killed(void **state)
{
    (void)state;
    struct srv *s = srv_new();
    srv_start(s, NULL, NULL);
    struct sy_redis *r = local_client(s->port, 10, 0); /* the loss, not a timeout, must end the commands */
    wait_up(r);
    struct rec x[4];
    cap_start();
    send_pending(r, x, 4);
    run_for(100); /* written and read by the server */
    assert_int_equal(x[0].calls + x[1].calls + x[2].calls + x[3].calls, 0);
    srv_kill(s);
    if (!run_until(all_called, x, WAIT_MS))
        fail_msg("pending callbacks did not run within 5 s of the server's death");
    check_all_null_once(x, 4);
    assert_false(sy_redis_up(r));
    struct rec y;
    assert_int_equal(cmd(r, &y, 1, "PING"), -1);
    assert_int_equal(sy_redis_global_state(), SY_REDIS_DISCONNECTED);
    run_for(600); /* several refused reconnects */
    check_all_null_once(x, 4);
    assert_int_equal(y.calls, 0);

    srv_start(s, NULL, NULL); /* same port */
    wait_up(r);
    assert_int_equal(sy_redis_global_state(), SY_REDIS_CONNECTED);
    call(r, &y, 1, "PING");
    assert_string_equal(y.str, "PONG");
    char *log = cap_stop();
    assert_int_equal(count(log, ": down: "), 1);
    assert_int_equal(count(log, ": connected"), 1);
    free(log);
}

static void t_timeout_stopped_server(void **state)
{
    (void)state;
    struct srv *s = srv_new();
    srv_start(s, NULL, NULL);
    struct sy_redis *r = local_client(s->port, 0.3, 1);
    wait_up(r);
    srv_stop(s);
    struct rec x[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(cmd(r, &x[i], 2, "GET", "k"), 0);
    if (!run_until(all_called, x, WAIT_MS))
        fail_msg("commands to a stopped server did not time out within 5 s");
    check_all_null_once(x, 4);
    assert_false(sy_redis_up(r));
    assert_int_equal(cmd(r, x, 1, "PING"), -1);
    run_for(1500); /* reconnects: TCP connects (kernel backlog), the handshake times out */
    assert_false(sy_redis_up(r));
    srv_signal(s, SIGCONT);
    wait_up(r);
    struct rec y;
    call(r, &y, 1, "PING");
    assert_string_equal(y.str, "PONG");
}

/* A TCP listener on the test loop that accepts and never reads or writes. */
static int n_accepted;
static void on_mute_conn(uv_stream_t *srv, int status)
{
    if (status < 0)
        return;
    uv_tcp_t *c = malloc(sizeof *c);
    uv_tcp_init(srv->loop, c);
    if (uv_accept(srv, (uv_stream_t *)c) == 0)
        n_accepted++;
    c->data = c;
}

static void free_closed(uv_handle_t *h)
{
    free(h->data);
}
static void close_accepted(uv_handle_t *h, void *listener)
{
    if (h->type == UV_TCP && h != listener && !uv_is_closing(h))
        uv_close(h, free_closed);
}

static int two_accepted(void *arg)
{
    (void)arg;
    return n_accepted >= 2;
}

static void t_mute_listener(void **state)
{
    (void)state;
    uv_tcp_t lst;
    uv_tcp_init(&loop, &lst);
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", 0, &a);
    assert_int_equal(uv_tcp_bind(&lst, (struct sockaddr *)&a, 0), 0);
    assert_int_equal(uv_listen((uv_stream_t *)&lst, 16, on_mute_conn), 0);
    int len = sizeof a;
    uv_tcp_getsockname(&lst, (struct sockaddr *)&a, &len);
    n_accepted = 0;
    struct sy_redis *r = local_client(ntohs(a.sin_port), 0.2, 0.2);
    /* connected, the PING is never answered: the connect deadline ends the attempt, another follows */
    if (!run_until(two_accepted, NULL, WAIT_MS))
        fail_msg("no reconnect to a mute server within 5 s");
    assert_false(sy_redis_up(r));
    struct rec x;
    assert_int_equal(cmd(r, &x, 1, "PING"), -1);
    assert_int_equal(sy_redis_global_state(), SY_REDIS_DISCONNECTED);
    client_free(r);
    uv_walk(&loop, close_accepted, &lst);
    uv_close((uv_handle_t *)&lst, NULL);
}

static void t_refused_then_listening(void **state)
{
    (void)state;
    /* A refused connect is noticed at once (not after the 30 s connect or
     * command timeouts): the client retries with back-off and is UP soon
     * after the server appears. */
    struct srv *s = srv_new();
    s->port = free_port();
    struct sy_redis *r = local_client(s->port, 30, 30);
    run_for(300);
    assert_false(sy_redis_up(r));
    assert_int_equal(sy_redis_global_state(), SY_REDIS_DISCONNECTED);
    srv_start(s, NULL, NULL);
    wait_up(r);
}

static void t_free_pending(void **state)
{
    (void)state;
    struct srv *s = srv_new();
    srv_start(s, NULL, NULL);

    /* freed with commands in flight: each callback once with NULL, commands from them refused */
    struct sy_redis *r = local_client(s->port, 10, 0);
    wait_up(r);
    struct rec x[4];
    send_pending(r, x, 4);
    x[3].cmd_client = r;
    run_for(50);
    client_free(r);
    check_all_null_once(x, 4);
    assert_int_equal(x[3].cmd_rc, -1);

    /* freed from inside a callback: the commands behind it get NULL */
    r = local_client(s->port, 10, 0);
    wait_up(r);
    struct rec y[3];
    assert_int_equal(cmd(r, &y[0], 1, "PING"), 0);
    assert_int_equal(cmd(r, &y[1], 1, "PING"), 0);
    assert_int_equal(cmd(r, &y[2], 1, "PING"), 0);
    y[0].free_client = r; /* set after cmd() cleared the record */
    assert_true(run_until(rec_done, &y[2], WAIT_MS));
    assert_int_equal(y[0].calls, 1);
    assert_int_equal(y[0].nulls, 0);
    assert_int_equal(y[1].calls, 1); /* hiredis frees the context when y[0]'s callback returns */
    assert_int_equal(y[1].nulls, 1);
    assert_int_equal(y[2].calls, 1);
    assert_int_equal(y[2].nulls, 1);

    /* freed while DOWN (back-off), while resolving, and right after creation */
    r = local_client(free_port(), 0, 0);
    run_for(150);
    assert_false(sy_redis_up(r));
    client_free(r);
    struct sy_redis_opts o = {.host = "localhost", .port = s->port};
    r = client_new(&o);
    client_free(r); /* the getaddrinfo is still out: released when it returns */
    r = local_client(s->port, 0, 0);
    client_free(r);
    sy_redis_free(NULL);
}

static void t_global_state(void **state)
{
    (void)state;
    assert_int_equal(sy_redis_global_state(), SY_REDIS_NOT_CONFIGURED);
    struct srv *s = srv_new();
    srv_start(s, NULL, NULL);
    struct sy_redis *a = local_client(s->port, 0, 0);
    struct sy_redis *b = local_client(s->port, 0, 0);
    wait_up(a);
    wait_up(b);
    assert_int_equal(sy_redis_global_state(), SY_REDIS_CONNECTED);
    struct sy_redis *c = local_client(free_port(), 0, 0); /* nobody there */
    run_for(100);
    assert_int_equal(sy_redis_global_state(), SY_REDIS_DISCONNECTED);
    client_free(c);
    assert_int_equal(sy_redis_global_state(), SY_REDIS_CONNECTED);
    srv_kill(s);
    assert_true(run_until(is_down, a, WAIT_MS));
    assert_true(run_until(is_down, b, WAIT_MS));
    assert_int_equal(sy_redis_global_state(), SY_REDIS_DISCONNECTED);
    client_free(a);
    client_free(b);
    assert_int_equal(sy_redis_global_state(), SY_REDIS_NOT_CONFIGURED);
}

static void t_bad_opts(void **state)
{
    (void)state;
    struct sy_redis_opts o = {0};
    assert_null(sy_redis_new(&loop, &o));
    o.host = "";
    assert_null(sy_redis_new(&loop, &o));
    o.host = "127.0.0.1";
    o.port = 70000;
    assert_null(sy_redis_new(&loop, &o));
    assert_null(sy_redis_new(&loop, NULL));
    assert_int_equal(sy_redis_global_state(), SY_REDIS_NOT_CONFIGURED);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* as the gateway does: hiredis writes with write(2) */
    atexit(srv_cleanup_all);
    if (!have_redis_server()) {
        fprintf(stderr, "FAIL: redis-server not found in PATH. The Redis client tests start real servers; "
                        "install it (Debian: apt-get install redis-server).\n");
        return 1;
    }
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(t_roundtrip),
        T(t_no_false_timeout),
        T(t_hostname),
        T(t_pipeline),
        T(t_auth),
        T(t_select),
        T(t_eval),
        T(t_server_killed),
        T(t_timeout_stopped_server),
        T(t_mute_listener),
        T(t_refused_then_listening),
        T(t_free_pending),
        T(t_global_state),
        T(t_bad_opts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
