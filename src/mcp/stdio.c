/* stdio.c - an MCP server as a supervised child process (mcp_int.h).
 *
 * MCP's stdio transport: the server reads newline-delimited JSON-RPC
 * messages on its stdin and writes its own, one per line, on its stdout;
 * stderr is its log. One sy_mcp_stdio runs one such child on a worker's
 * loop (uv_spawn, three pipes) and keeps it running:
 *
 *   start ──spawn──▶ RUNNING ──exit, stdout EOF, a pipe error──▶ (on_state 0)
 *                       ▲          a live child is killed first (below)
 *                       │                     │ its handles closed
 *                       │                     ▼
 *                       └─(on_state 1)── back-off timer: 1 s, doubling to 60 s,
 *                                        back to 1 s after a child lived 60 s
 *
 * The child is not trusted: a stdout line longer than max_line is dropped
 * whole (counted, the stream stays in step at its newline), stdin writes are
 * refused past STDIN_MAX queued bytes (a child that does not read is
 * restarted), and stderr lines are logged with the server's name, cut to
 * ERR_LINE_MAX bytes with control bytes masked, at most ERR_BURST lines per
 * ERR_WINDOW_MS (the rest counted and reported).
 *
 * The security model: only the config can start a process. A server that
 * came from the database (s->from_db) is refused here, whatever wrote the
 * row (LiteLLM's UI on a shared database, SQL: the API refuses stdio
 * servers), so a database write cannot run a command on the gateway's hosts. The child gets a minimal environment:
 * PATH, HOME and LANG of the gateway (read once) and the server's own env entries, never the gateway's secrets (master
 * key, database URL, provider keys). Before each spawn every descriptor of the process is marked close-on-exec (libuv
 * does not close inherited descriptors), so the child holds none of the gateway's sockets or files.
 *
 * Each child leads its own process group (UV_PROCESS_DETACHED: setsid), so a
 * signal reaches what it started too (npx and the node it runs). Stopping:
 * stdin closed (MCP's polite end), SIGTERM to the group, SIGKILL after
 * KILL_GRACE_MS, and once the leader is reaped the group is sent SIGKILL in
 * case a descendant outlived it. libuv reaps the child (no zombie). If the
 * gateway itself is killed with SIGKILL, its children see EOF on stdin, which
 * ends a well-behaved MCP server.
 *
 * Callbacks: on_msg and on_state may call sy_mcp_stdio_send or
 * sy_mcp_stdio_stop; after stop no callback follows, and the struct is freed
 * once its last handle is closed.
 */
#include "mcp/mcp_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/log.h"

#define BACKOFF_MIN_MS 1000u
#define BACKOFF_MAX_MS 60000u
#define STABLE_MS      60000u /* a child that lived this long resets the back-off */
#define KILL_GRACE_MS  2000u  /* SIGTERM, then SIGKILL */
#define STDIN_MAX      (16u << 20)
#define LINE_DEFAULT   (16u << 20)
#define ERR_LINE_MAX   1024u
#define ERR_BURST      20u
#define ERR_WINDOW_MS  10000u

struct sy_mcp_stdio {
    uv_loop_t *loop;
    const struct sy_mcp_server *s; /* the pool holds its set while we run */
    char name[96];                 /* for logs, also while stopping */
    size_t max_line;
    struct sy_mcp_stdio_cbs cbs;
    void *ud;
    uv_process_t proc;
    uv_pipe_t in, out, err;
    uv_timer_t timer;  /* the kill grace while a child dies, else the back-off */
    int child_handles; /* proc and pipes of the current child not yet closed */
    int timer_open;
    int alive;    /* a child was spawned and not yet reaped */
    int running;  /* alive and its pipes good: messages flow */
    int stopping; /* sy_mcp_stdio_stop was called */
    int pid;
    uint64_t started_ms, backoff_ms;
    struct sy_buf line; /* stdout's partial line */
    int dropping;       /* inside an over-long stdout line: skip to its newline */
    struct sy_buf eline;
    int edropping;
    uint64_t ewin_start;
    unsigned ewin_n;
    unsigned long esuppressed;
    unsigned long spawns, restarts, dropped;
    char rbuf[65536]; /* one read at a time: stdout and stderr share it */
};

struct wreq {
    uv_write_t req;
    struct sy_mcp_stdio *t;
    char data[];
};

static uint64_t now_ms(void)
{
    return sy_now_ns() / 1000000u;
}

/* ---- the child's environment ---- */

static uv_once_t env_once = UV_ONCE_INIT;
static char *base_env[3]; /* "PATH=...", "HOME=...", "LANG=..." of the gateway; NULL when unset */

static void env_init(void)
{
    static const char *const names[] = {"PATH", "HOME", "LANG"};
    for (size_t i = 0; i < 3; i++) {
        const char *v = getenv(names[i]);
        if (!v)
            continue;
        size_t nl = strlen(names[i]), vl = strlen(v);
        char *e = malloc(nl + vl + 2);
        if (!e)
            continue;
        memcpy(e, names[i], nl);
        e[nl] = '=';
        memcpy(e + nl + 1, v, vl + 1);
        base_env[i] = e;
    }
}

/* s->env ("K=V") plus the base entries it does not set; malloc'd array, the
 * strings borrowed. */
static char **child_env(const struct sy_mcp_server *s)
{
    uv_once(&env_once, env_init);
    char **e = malloc((s->nenv + 4) * sizeof *e);
    if (!e)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < s->nenv; i++)
        if (s->env[i] && strchr(s->env[i], '='))
            e[n++] = s->env[i];
    for (size_t b = 0; b < 3; b++) {
        if (!base_env[b])
            continue;
        size_t kl = (size_t)(strchr(base_env[b], '=') - base_env[b]) + 1; /* "PATH=" */
        int set = 0;
        for (size_t i = 0; i < n && !set; i++)
            set = strncmp(e[i], base_env[b], kl) == 0;
        if (!set)
            e[n++] = base_env[b];
    }
    e[n] = NULL;
    return e;
}

/* Every descriptor above stderr close-on-exec, so the child inherits none of
 * ours (libuv's own are already; a library's may not be). */
static void cloexec_all(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    int self = dirfd(d);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long fd = strtol(de->d_name, &end, 10);
        if (*end || end == de->d_name || fd <= 2 || fd == self)
            continue;
        int fl = fcntl((int)fd, F_GETFD);
        if (fl >= 0 && !(fl & FD_CLOEXEC))
            fcntl((int)fd, F_SETFD, fl | FD_CLOEXEC);
    }
    closedir(d);
}

/* ---- lifecycle ---- */

static int spawn(struct sy_mcp_stdio *t);
static void on_timer(uv_timer_t *tm);

static void maybe_free(struct sy_mcp_stdio *t)
{
    if (!t->stopping || t->child_handles || t->timer_open)
        return;
    sy_buf_free(&t->line);
    sy_buf_free(&t->eline);
    free(t);
}

static void on_timer_closed(uv_handle_t *h)
{
    struct sy_mcp_stdio *t = h->data;
    t->timer_open = 0;
    maybe_free(t);
}

static void close_timer(struct sy_mcp_stdio *t)
{
    if (t->timer_open && !uv_is_closing((uv_handle_t *)&t->timer))
        uv_close((uv_handle_t *)&t->timer, on_timer_closed);
}

static void arm_backoff(struct sy_mcp_stdio *t)
{
    uint64_t d = t->backoff_ms;
    t->backoff_ms = d * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : d * 2;
    uv_timer_start(&t->timer, on_timer, d, 0);
}

static void on_child_closed(uv_handle_t *h)
{
    struct sy_mcp_stdio *t = h->data;
    if (--t->child_handles > 0)
        return;
    if (t->stopping) {
        close_timer(t);
        maybe_free(t);
        return;
    }
    arm_backoff(t);
}

static void close_child_handle(struct sy_mcp_stdio *t, uv_handle_t *h)
{
    if (!uv_is_closing(h))
        uv_close(h, on_child_closed);
    (void)t;
}

static void close_pipes(struct sy_mcp_stdio *t)
{
    close_child_handle(t, (uv_handle_t *)&t->in);
    close_child_handle(t, (uv_handle_t *)&t->out);
    close_child_handle(t, (uv_handle_t *)&t->err);
}

/* The child's process group, or the child alone when the group is gone. */
static void signal_child(struct sy_mcp_stdio *t, int sig)
{
    if (t->pid <= 0)
        return;
    if (kill(-t->pid, sig) != 0 && t->alive)
        uv_process_kill(&t->proc, sig);
}

static void on_timer(uv_timer_t *tm)
{
    struct sy_mcp_stdio *t = tm->data;
    if (t->alive) { /* the grace after SIGTERM ran out */
        sy_warn("mcp server %s: the child did not end on SIGTERM, killing it", t->name);
        signal_child(t, SIGKILL);
        return;
    }
    if (t->stopping || t->child_handles)
        return;
    if (spawn(t) != 0)
        return; /* its handles close, then the next back-off */
    t->restarts++;
    sy_info("mcp server %s: restarted (pid %d)", t->name, t->pid);
    if (t->cbs.on_state)
        t->cbs.on_state(t->ud, 1);
}

/* The child broke the protocol or its pipes failed: it stops serving now
 * (on_state 0) and is ended as a stop would; on_exit restarts it. */
static void fail(struct sy_mcp_stdio *t, const char *why)
{
    if (!t->running)
        return;
    t->running = 0;
    sy_warn("mcp server %s: %s; ending the child (pid %d)", t->name, why, t->pid);
    uv_read_stop((uv_stream_t *)&t->out);
    close_pipes(t);
    signal_child(t, SIGTERM);
    uv_timer_start(&t->timer, on_timer, KILL_GRACE_MS, 0);
    if (t->cbs.on_state && !t->stopping)
        t->cbs.on_state(t->ud, 0);
}

static void on_exit_cb(uv_process_t *p, int64_t status, int sig)
{
    struct sy_mcp_stdio *t = p->data;
    t->alive = 0;
    uint64_t lived = now_ms() - t->started_ms;
    int was_running = t->running;
    t->running = 0;
    uv_timer_stop(&t->timer);
    if (kill(-t->pid, SIGKILL) == 0 && !t->stopping) /* what it left behind in its group */
        sy_warn("mcp server %s: killed what the child left running", t->name);
    if (!t->stopping)
        sy_warn("mcp server %s: the child (pid %d) exited (status %lld, signal %d) after %llu ms", t->name, t->pid,
                (long long)status, sig, (unsigned long long)lived);
    if (lived >= STABLE_MS)
        t->backoff_ms = BACKOFF_MIN_MS;
    close_pipes(t);
    close_child_handle(t, (uv_handle_t *)&t->proc);
    if (was_running && !t->stopping && t->cbs.on_state)
        t->cbs.on_state(t->ud, 0);
}

/* ---- stdout: one message per line ---- */

static void drop_line(struct sy_mcp_stdio *t)
{
    t->dropped++;
    if (t->dropped <= 10 || t->dropped % 1000 == 0)
        sy_warn("mcp server %s: a stdout line over %zu bytes was dropped (%lu so far)", t->name, t->max_line,
                t->dropped);
}

static void deliver(struct sy_mcp_stdio *t, const char *p, size_t n)
{
    if (n && p[n - 1] == '\r')
        n--;
    if (n > t->max_line) {
        drop_line(t);
        return;
    }
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
        i++;
    if (i == n)
        return; /* a blank line */
    t->cbs.on_msg(t->ud, p, n);
}

static void out_data(struct sy_mcp_stdio *t, const char *p, size_t n)
{
    while (n && t->running && !t->stopping) {
        const char *nl = memchr(p, '\n', n);
        size_t k = nl ? (size_t)(nl - p) : n;
        if (t->dropping) {
            if (nl)
                t->dropping = 0;
        } else if (k > t->max_line + 1 - t->line.len) { /* + 1: a CR before the newline */
            drop_line(t);
            sy_buf_reset(&t->line);
            t->dropping = !nl;
        } else if (!nl) {
            if (sy_buf_append(&t->line, p, k) != 0) { /* out of memory: drop the line */
                sy_buf_reset(&t->line);
                t->dropped++;
                t->dropping = 1;
            }
        } else if (t->line.len) {
            if (sy_buf_append(&t->line, p, k) == 0)
                deliver(t, t->line.p, t->line.len);
            else
                t->dropped++;
            sy_buf_reset(&t->line);
        } else {
            deliver(t, p, k);
        }
        if (!nl)
            break;
        p = nl + 1;
        n -= k + 1;
    }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    struct sy_mcp_stdio *t = h->data;
    (void)suggested;
    *b = uv_buf_init(t->rbuf, sizeof t->rbuf);
}

static void on_out(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    struct sy_mcp_stdio *t = st->data;
    if (n > 0) {
        out_data(t, b->base, (size_t)n);
        return;
    }
    if (n == 0)
        return;
    fail(t, n == UV_EOF ? "the child closed its stdout" : uv_strerror((int)n));
}

/* ---- stderr: logged, bounded ---- */

static void log_err_line(struct sy_mcp_stdio *t, const char *p, size_t n, int cut)
{
    uint64_t now = now_ms();
    if (now - t->ewin_start >= ERR_WINDOW_MS) {
        if (t->esuppressed)
            sy_warn("mcp server %s: %lu stderr line(s) not logged (over %u per %u s)", t->name, t->esuppressed,
                    ERR_BURST, ERR_WINDOW_MS / 1000);
        t->ewin_start = now;
        t->ewin_n = 0;
        t->esuppressed = 0;
    }
    if (t->ewin_n >= ERR_BURST) {
        t->esuppressed++;
        return;
    }
    t->ewin_n++;
    char line[ERR_LINE_MAX + 1];
    size_t m = n < ERR_LINE_MAX ? n : ERR_LINE_MAX;
    for (size_t i = 0; i < m; i++) {
        unsigned char c = (unsigned char)p[i];
        line[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    line[m] = 0;
    sy_info("mcp server %s: stderr: %s%s", t->name, line, cut || n > m ? " ..." : "");
}

static void err_data(struct sy_mcp_stdio *t, const char *p, size_t n)
{
    while (n) {
        const char *nl = memchr(p, '\n', n);
        size_t k = nl ? (size_t)(nl - p) : n;
        if (t->edropping) {
            if (nl)
                t->edropping = 0;
        } else if (k > ERR_LINE_MAX - t->eline.len) { /* log its beginning, skip the rest */
            size_t room = ERR_LINE_MAX - t->eline.len;
            sy_buf_append(&t->eline, p, room);
            log_err_line(t, t->eline.p, t->eline.len, 1);
            sy_buf_reset(&t->eline);
            t->edropping = !nl;
        } else if (!nl) {
            sy_buf_append(&t->eline, p, k);
        } else {
            sy_buf_append(&t->eline, p, k);
            size_t l = t->eline.len;
            if (l && t->eline.p[l - 1] == '\r')
                l--;
            if (l)
                log_err_line(t, t->eline.p, l, 0);
            sy_buf_reset(&t->eline);
        }
        if (!nl)
            break;
        p = nl + 1;
        n -= k + 1;
    }
}

static void on_err(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    struct sy_mcp_stdio *t = st->data;
    if (n > 0) {
        err_data(t, b->base, (size_t)n);
        return;
    }
    if (n < 0) /* the child closed its stderr: that is its business */
        uv_read_stop(st);
}

/* ---- spawning ---- */

static int spawn(struct sy_mcp_stdio *t)
{
    const struct sy_mcp_server *s = t->s;
    char **argv = malloc((s->nargs + 2) * sizeof *argv);
    char **envp = child_env(s);
    int rc = UV_ENOMEM;
    uv_pipe_init(t->loop, &t->in, 0);
    uv_pipe_init(t->loop, &t->out, 0);
    uv_pipe_init(t->loop, &t->err, 0);
    t->in.data = t->out.data = t->err.data = t->proc.data = t;
    t->child_handles = 3;
    sy_buf_reset(&t->line);
    sy_buf_reset(&t->eline);
    t->dropping = t->edropping = 0;
    if (argv && envp) {
        argv[0] = s->command;
        for (size_t i = 0; i < s->nargs; i++)
            argv[i + 1] = s->args[i];
        argv[s->nargs + 1] = NULL;
        uv_stdio_container_t io[3] = {
            {.flags = UV_CREATE_PIPE | UV_READABLE_PIPE, .data.stream = (uv_stream_t *)&t->in},
            {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&t->out},
            {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&t->err},
        };
        uv_process_options_t o = {
            .exit_cb = on_exit_cb,
            .file = s->command,
            .args = argv,
            .env = envp,
            .flags = UV_PROCESS_DETACHED, /* its own process group (see the top) */
            .stdio_count = 3,
            .stdio = io,
        };
        cloexec_all();
        rc = uv_spawn(t->loop, &t->proc, &o); /* the handle is to be closed either way */
        t->child_handles = 4;
    }
    free(argv);
    free(envp);
    if (rc != 0) {
        sy_warn("mcp server %s: cannot start %s: %s (next try in %llu s)", t->name, s->command, uv_strerror(rc),
                (unsigned long long)(t->backoff_ms / 1000));
        close_pipes(t);
        if (t->child_handles == 4)
            close_child_handle(t, (uv_handle_t *)&t->proc);
        return rc;
    }
    t->alive = 1;
    t->running = 1;
    t->pid = t->proc.pid;
    t->started_ms = now_ms();
    t->spawns++;
    uv_read_start((uv_stream_t *)&t->out, on_alloc, on_out);
    uv_read_start((uv_stream_t *)&t->err, on_alloc, on_err);
    return 0;
}

struct sy_mcp_stdio *sy_mcp_stdio_start(uv_loop_t *loop, const struct sy_mcp_server *s, size_t max_line,
                                        const struct sy_mcp_stdio_cbs *cbs, void *ud)
{
    if (!loop || !s || !s->command || !s->command[0] || !cbs || !cbs->on_msg)
        return NULL;
    if (s->from_db) {
        sy_warn("mcp server %s: a stdio server from the database is refused: only the config starts processes",
                s->name ? s->name : "?");
        return NULL;
    }
    struct sy_mcp_stdio *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->loop = loop;
    t->s = s;
    const char *nm = s->name ? s->name : s->command;
    size_t nl = strlen(nm);
    if (nl >= sizeof t->name)
        nl = sizeof t->name - 1;
    memcpy(t->name, nm, nl);
    t->max_line = max_line ? max_line : LINE_DEFAULT;
    t->cbs = *cbs;
    t->ud = ud;
    t->backoff_ms = BACKOFF_MIN_MS;
    sy_buf_init(&t->line, t->max_line + 1);
    sy_buf_init(&t->eline, ERR_LINE_MAX);
    uv_timer_init(loop, &t->timer);
    t->timer.data = t;
    t->timer_open = 1;
    if (spawn(t) == 0)
        sy_info("mcp server %s: started %s (pid %d)", t->name, s->command, t->pid);
    return t;
}

/* ---- writing ---- */

static void on_written(uv_write_t *req, int status)
{
    struct wreq *w = (struct wreq *)req;
    struct sy_mcp_stdio *t = w->t;
    free(w);
    if (status < 0 && status != UV_ECANCELED)
        fail(t, uv_strerror(status));
}

int sy_mcp_stdio_send(struct sy_mcp_stdio *t, const char *msg, size_t n)
{
    if (!t || !t->running || t->stopping)
        return -1;
    if (t->in.write_queue_size + n + 1 > STDIN_MAX) {
        fail(t, "the child does not read its stdin");
        return -1;
    }
    /* A raw CR or LF in valid JSON is whitespace between tokens (never inside
     * a string): a pretty-printed message is flattened to one line. */
    int flat = memchr(msg, '\n', n) || memchr(msg, '\r', n);
    size_t done = 0;
    if (!flat) {
        uv_buf_t b[2] = {uv_buf_init((char *)msg, (unsigned)n), uv_buf_init((char *)"\n", 1)};
        int w = uv_try_write((uv_stream_t *)&t->in, b, 2);
        if (w == (int)(n + 1))
            return 0;
        if (w < 0 && w != UV_EAGAIN) {
            fail(t, uv_strerror(w));
            return -1;
        }
        done = w > 0 ? (size_t)w : 0;
    }
    size_t rest = n + 1 - done;
    struct wreq *w = malloc(sizeof *w + rest);
    if (!w)
        return -1;
    w->t = t;
    if (done < n)
        memcpy(w->data, msg + done, n - done);
    w->data[rest - 1] = '\n';
    if (flat)
        for (size_t i = 0; i + 1 < rest; i++)
            if (w->data[i] == '\n' || w->data[i] == '\r')
                w->data[i] = ' ';
    uv_buf_t b = uv_buf_init(w->data, (unsigned)rest);
    int rc = uv_write(&w->req, (uv_stream_t *)&t->in, &b, 1, on_written);
    if (rc != 0) {
        free(w);
        fail(t, uv_strerror(rc));
        return -1;
    }
    return 0;
}

int sy_mcp_stdio_running(const struct sy_mcp_stdio *t)
{
    return t && t->running && !t->stopping;
}

void sy_mcp_stdio_stop(struct sy_mcp_stdio *t)
{
    if (!t || t->stopping)
        return;
    t->stopping = 1;
    t->running = 0;
    if (t->alive) {
        uv_read_stop((uv_stream_t *)&t->out);
        close_pipes(t); /* stdin's EOF asks a well-behaved server to end */
        signal_child(t, SIGTERM);
        uv_timer_start(&t->timer, on_timer, KILL_GRACE_MS, 0);
        return; /* on_exit_cb closes the rest */
    }
    uv_timer_stop(&t->timer);
    if (!t->child_handles) /* else on_child_closed closes the timer */
        close_timer(t);
    maybe_free(t);
}

void sy_mcp_stdio_counts(const struct sy_mcp_stdio *t, unsigned long *spawns, unsigned long *restarts)
{
    if (spawns)
        *spawns = t ? t->spawns : 0;
    if (restarts)
        *restarts = t ? t->restarts : 0;
}

unsigned long sy_mcp_stdio_dropped(const struct sy_mcp_stdio *t)
{
    return t ? t->dropped : 0;
}

int sy_mcp_stdio_pid(const struct sy_mcp_stdio *t)
{
    return t && t->alive ? t->pid : 0;
}
