/* test_stdio.c - stdio MCP servers as supervised children (src/mcp/stdio.c)
 * with tiny shell children: a line round trip, the minimal environment, a
 * crash restarted with its back-off, over-long lines dropped whole, a child
 * that closes its stdout, stop killing the child's whole process group (the
 * pids are gone: reaped, no zombie), no callback after stop, a command that
 * does not exist, and a server from the database refused. Every wait is
 * bounded by a guard timer; no test asserts a duration. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <sys/types.h>

#include "mcp/mcp_int.h"

#define MAXMSG 16

struct ctx {
    uv_loop_t loop;
    struct sy_mcp_stdio *t;
    char *msgs[MAXMSG];
    size_t nmsgs;
    int states[MAXMSG];
    size_t nstates;
    int stop_on_msg;
    int guard_fired;
    uv_timer_t guard;
};

static void on_msg(void *ud, const char *line, size_t n)
{
    struct ctx *x = ud;
    if (x->nmsgs < MAXMSG) {
        x->msgs[x->nmsgs] = malloc(n + 1);
        memcpy(x->msgs[x->nmsgs], line, n);
        x->msgs[x->nmsgs][n] = 0;
    }
    x->nmsgs++;
    if (x->stop_on_msg) {
        sy_mcp_stdio_stop(x->t);
        x->t = NULL;
    }
}

static void on_state(void *ud, int running)
{
    struct ctx *x = ud;
    if (x->nstates < MAXMSG)
        x->states[x->nstates] = running;
    x->nstates++;
}

static const struct sy_mcp_stdio_cbs cbs = {.on_msg = on_msg, .on_state = on_state};

static void on_guard(uv_timer_t *tm)
{
    struct ctx *x = tm->data;
    x->guard_fired = 1;
}

static void ctx_init(struct ctx *x)
{
    memset(x, 0, sizeof *x);
    uv_loop_init(&x->loop);
    uv_timer_init(&x->loop, &x->guard);
    x->guard.data = x;
}

/* Run the loop until cond(x) holds; fails the test after 20 s. */
static void run_until(struct ctx *x, int (*cond)(struct ctx *))
{
    x->guard_fired = 0;
    uv_timer_start(&x->guard, on_guard, 20000, 0);
    uv_unref((uv_handle_t *)&x->guard);
    while (!cond(x) && !x->guard_fired)
        uv_run(&x->loop, UV_RUN_ONCE);
    uv_timer_stop(&x->guard);
    assert_false(x->guard_fired);
}

/* Stop the transport (if still held) and run until its handles are closed. */
static void finish(struct ctx *x)
{
    if (x->t)
        sy_mcp_stdio_stop(x->t);
    x->t = NULL;
    x->guard_fired = 0;
    uv_timer_start(&x->guard, on_guard, 20000, 0);
    uv_unref((uv_handle_t *)&x->guard);
    while (uv_run(&x->loop, UV_RUN_ONCE) && !x->guard_fired)
        ;
    assert_false(x->guard_fired);
    uv_close((uv_handle_t *)&x->guard, NULL);
    uv_run(&x->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&x->loop), 0);
    for (size_t i = 0; i < x->nmsgs && i < MAXMSG; i++)
        free(x->msgs[i]);
}

static int gone(int pid)
{
    if (kill(pid, 0) != 0)
        return errno == ESRCH;
    char path[64], st[256];
    snprintf(path, sizeof path, "/proc/%d/stat", pid); /* reparented and killed: a zombie of init's */
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    size_t n = fread(st, 1, sizeof st - 1, f);
    fclose(f);
    st[n] = 0;
    const char *p = strrchr(st, ')');
    return p && p[1] == ' ' && p[2] == 'Z';
}

static struct sy_mcp_server sh_server(const char *script, char **args)
{
    args[0] = "-c";
    args[1] = (char *)script;
    return (struct sy_mcp_server){.name = "t", .command = "sh", .args = args, .nargs = 2, .transport = SY_MCP_STDIO};
}

static int one_msg(struct ctx *x)
{
    return x->nmsgs >= 1;
}
static int two_msgs(struct ctx *x)
{
    return x->nmsgs >= 2;
}
static int three_msgs(struct ctx *x)
{
    return x->nmsgs >= 3;
}

static void t_echo(void **st)
{
    struct ctx x;
    ctx_init(&x);
    char *args[1] = {NULL};
    struct sy_mcp_server s = {.name = "echo", .command = "cat", .args = args, .transport = SY_MCP_STDIO};
    x.t = sy_mcp_stdio_start(&x.loop, &s, 0, &cbs, &x);
    assert_non_null(x.t);
    assert_true(sy_mcp_stdio_running(x.t));
    int pid = sy_mcp_stdio_pid(x.t);
    assert_true(pid > 0);
    const char *m = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    assert_int_equal(sy_mcp_stdio_send(x.t, m, strlen(m)), 0);
    const char *pretty = "{\n  \"jsonrpc\": \"2.0\",\r\n  \"id\": 2\n}";
    assert_int_equal(sy_mcp_stdio_send(x.t, pretty, strlen(pretty)), 0); /* flattened to one line */
    run_until(&x, two_msgs);
    assert_string_equal(x.msgs[0], m);
    assert_string_equal(x.msgs[1], "{   \"jsonrpc\": \"2.0\",    \"id\": 2 }");
    unsigned long sp, rs;
    sy_mcp_stdio_counts(x.t, &sp, &rs);
    assert_int_equal(sp, 1);
    assert_int_equal(rs, 0);
    assert_int_equal(x.nstates, 0); /* the first child is reported by running(), not on_state */
    finish(&x);
    assert_true(gone(pid));
}

static void t_env(void **st)
{
    struct ctx x;
    ctx_init(&x);
    setenv("SY_TEST_SECRET", "leak", 1);
    char *args[2], *env[] = {"FOO=bar baz"};
    struct sy_mcp_server s = sh_server(
        "echo \"{\\\"foo\\\":\\\"$FOO\\\",\\\"secret\\\":\\\"$SY_TEST_SECRET\\\",\\\"path\\\":\\\"${PATH:+set}\\\"}\"; "
        "exec cat",
        args);
    s.env = env;
    s.nenv = 1;
    x.t = sy_mcp_stdio_start(&x.loop, &s, 0, &cbs, &x);
    assert_non_null(x.t);
    run_until(&x, one_msg);
    assert_string_equal(x.msgs[0], "{\"foo\":\"bar baz\",\"secret\":\"\",\"path\":\"set\"}");
    finish(&x);
    unsetenv("SY_TEST_SECRET");
}

static int restarted(struct ctx *x)
{
    unsigned long sp, rs;
    sy_mcp_stdio_counts(x->t, &sp, &rs);
    return rs >= 1 && x->nmsgs >= 2 && x->nstates >= 2;
}

static void t_crash_restart(void **st)
{
    struct ctx x;
    ctx_init(&x);
    char *args[2];
    struct sy_mcp_server s = sh_server("echo \"{\\\"pid\\\":$$}\"; exit 3", args);
    x.t = sy_mcp_stdio_start(&x.loop, &s, 0, &cbs, &x);
    assert_non_null(x.t);
    run_until(&x, restarted);
    assert_int_equal(x.states[0], 0); /* the first child exited */
    assert_int_equal(x.states[1], 1); /* the next one runs */
    assert_string_not_equal(x.msgs[0], x.msgs[1]);
    int first = (int)strtol(strchr(x.msgs[0], ':') + 1, NULL, 10);
    assert_true(first > 0);
    assert_true(gone(first)); /* reaped: no zombie */
    unsigned long sp, rs;
    sy_mcp_stdio_counts(x.t, &sp, &rs);
    assert_true(sp >= 2);
    finish(&x);
}

static void t_long_lines(void **st)
{
    struct ctx x;
    ctx_init(&x);
    char *args[2];
    struct sy_mcp_server s = sh_server("head -c 100000 /dev/zero | tr '\\000' a; echo; "
                                       "printf '%065d\\n' 0 | tr 0 b; "
                                       "printf '%064d\\r\\n' 0 | tr 0 c; "
                                       "printf '\\n  \\n{\"ok\":1}\\n'; exec cat",
                                       args);
    x.t = sy_mcp_stdio_start(&x.loop, &s, 64, &cbs, &x);
    assert_non_null(x.t);
    run_until(&x, two_msgs);
    char c64[65];
    memset(c64, 'c', 64);
    c64[64] = 0;
    assert_string_equal(x.msgs[0], c64); /* exactly max_line passes (CR stripped) */
    assert_string_equal(x.msgs[1], "{\"ok\":1}");
    assert_int_equal(x.nmsgs, 2); /* blank lines are no messages */
    assert_int_equal(sy_mcp_stdio_dropped(x.t), 2);
    assert_true(sy_mcp_stdio_running(x.t)); /* the stream stayed in step */
    const char *m = "{\"id\":3}";
    assert_int_equal(sy_mcp_stdio_send(x.t, m, strlen(m)), 0);
    run_until(&x, three_msgs); /* cat answers: the pipe still works */
    assert_string_equal(x.msgs[2], m);
    finish(&x);
}

static int state_down_and_respawned(struct ctx *x)
{
    unsigned long sp, rs;
    sy_mcp_stdio_counts(x->t, &sp, &rs);
    return x->nstates >= 2 && sp >= 2;
}

static void t_stdout_closed(void **st)
{
    struct ctx x;
    ctx_init(&x);
    char *args[2];
    struct sy_mcp_server s = sh_server("exec 1>&-; exec sleep 300", args);
    x.t = sy_mcp_stdio_start(&x.loop, &s, 0, &cbs, &x);
    assert_non_null(x.t);
    int pid = sy_mcp_stdio_pid(x.t);
    run_until(&x, state_down_and_respawned);
    assert_int_equal(x.states[0], 0);
    assert_int_equal(x.states[1], 1);
    assert_true(gone(pid)); /* ended, though it never exited by itself */
    finish(&x);
}

static void t_stop_kills_group(void **st)
{
    struct ctx x;
    ctx_init(&x);
    char *args[2];
    /* the shell and its background child ignore SIGTERM: only the SIGKILL
     * after the grace ends them */
    struct sy_mcp_server s =
        sh_server("trap '' TERM; sleep 300 & echo \"{\\\"bg\\\":$!}\"; while :; do sleep 1; done", args);
    x.t = sy_mcp_stdio_start(&x.loop, &s, 0, &cbs, &x);
    assert_non_null(x.t);
    int pid = sy_mcp_stdio_pid(x.t);
    run_until(&x, one_msg);
    int bg = (int)strtol(strchr(x.msgs[0], ':') + 1, NULL, 10);
    assert_true(pid > 0 && bg > 0);
    assert_int_equal(kill(bg, 0), 0);
    finish(&x); /* returns once every handle is closed: the child was reaped */
    assert_true(gone(pid));
    for (int i = 0; i < 200 && !gone(bg); i++) /* the grandchild is init's to reap */
        uv_sleep(10);
    assert_true(gone(bg));
    assert_int_equal(x.nstates, 0); /* no callback after stop */
}

static void t_stop_in_callback(void **st)
{
    struct ctx x;
    ctx_init(&x);
    char *args[2];
    struct sy_mcp_server s = sh_server("printf '{\"a\":1}\\n{\"b\":2}\\n{\"c\":3}\\n'; exec cat", args);
    x.stop_on_msg = 1;
    x.t = sy_mcp_stdio_start(&x.loop, &s, 0, &cbs, &x);
    assert_non_null(x.t);
    run_until(&x, one_msg);
    finish(&x);
    assert_int_equal(x.nmsgs, 1);
    assert_int_equal(x.nstates, 0);
}

static void t_not_found(void **st)
{
    struct ctx x;
    ctx_init(&x);
    char *args[1] = {NULL};
    struct sy_mcp_server s = {.name = "nf", .command = "/nonexistent/mcp-server", .args = args};
    x.t = sy_mcp_stdio_start(&x.loop, &s, 0, &cbs, &x);
    assert_non_null(x.t); /* retried with its back-off until stopped */
    assert_false(sy_mcp_stdio_running(x.t));
    assert_int_equal(sy_mcp_stdio_send(x.t, "{}", 2), -1);
    unsigned long sp, rs;
    sy_mcp_stdio_counts(x.t, &sp, &rs);
    assert_int_equal(sp, 0);
    finish(&x);
}

static void t_refused(void **st)
{
    struct ctx x;
    ctx_init(&x);
    char *args[1] = {NULL};
    struct sy_mcp_server s = {.name = "db", .command = "cat", .args = args, .from_db = 1};
    assert_null(sy_mcp_stdio_start(&x.loop, &s, 0, &cbs, &x)); /* only the config starts processes */
    sy_mcp_stdio_allow_db(1); /* general_settings.switchyard_mcp_stdio_from_api: true */
    x.t = sy_mcp_stdio_start(&x.loop, &s, 0, &cbs, &x);
    assert_non_null(x.t);
    assert_true(sy_mcp_stdio_running(x.t));
    sy_mcp_stdio_stop(x.t);
    x.t = NULL;
    sy_mcp_stdio_allow_db(0);
    s.from_db = 0;
    s.command = "";
    assert_null(sy_mcp_stdio_start(&x.loop, &s, 0, &cbs, &x));
    s.command = NULL;
    assert_null(sy_mcp_stdio_start(&x.loop, &s, 0, &cbs, &x));
    s.command = "cat";
    assert_null(sy_mcp_stdio_start(&x.loop, &s, 0, NULL, &x));
    finish(&x);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_echo),
        cmocka_unit_test(t_env),
        cmocka_unit_test(t_crash_restart),
        cmocka_unit_test(t_long_lines),
        cmocka_unit_test(t_stdout_closed),
        cmocka_unit_test(t_stop_kills_group),
        cmocka_unit_test(t_stop_in_callback),
        cmocka_unit_test(t_not_found),
        cmocka_unit_test(t_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
