/* test_client.c - unit tests of the upstream HTTP/1.1 client (src/upstream)
 * against the scripted in-process server of tsrv.c, plain and TLS. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/buf.h"
#include "core/errors.h"
#include "tsrv.h"
#include "upstream/client.h"

struct env {
    uv_loop_t loop;
    struct tsrv *srv;
    struct sy_upool *pool;
    char base[64];
};

struct res {
    struct env *e;
    struct sy_ureq *req;
    int status, err, done, heads, bodies;
    int cancel_at_body;  /* return nonzero from on_body number N */
    int cancel_explicit; /* call sy_ureq_cancel from on_body number N, return 0 */
    int pause_at_body;   /* pause after body number N, resume from a timer */
    size_t at_pause, at_resume;
    int saw_xtest;
    struct sy_buf body;
};

static int on_head(void *ud, int status, const struct sy_uheader *h, size_t nh)
{
    struct res *r = ud;
    r->status = status;
    r->heads++;
    for (size_t i = 0; i < nh; i++)
        if (h[i].name_len == 6 && !strncasecmp(h[i].name, "X-Test", 6) && h[i].value_len == 3 &&
            !memcmp(h[i].value, "yes", 3))
            r->saw_xtest = 1;
    return 0;
}

static void resume_cb(uv_timer_t *t)
{
    struct res *r = t->data;
    r->at_resume = r->body.len;
    sy_ureq_resume(r->req);
    uv_close((uv_handle_t *)t, (uv_close_cb)free);
}

static int on_body(void *ud, const char *p, size_t n)
{
    struct res *r = ud;
    r->bodies++;
    assert_int_equal(sy_buf_append(&r->body, p, n), 0);
    if (r->cancel_at_body && r->bodies == r->cancel_at_body) {
        r->done = 2;
        return 1;
    }
    if (r->cancel_explicit && r->bodies == r->cancel_explicit) {
        r->done = 2;
        sy_ureq_cancel(r->req);
        return 0;
    }
    if (r->pause_at_body && r->bodies == r->pause_at_body) {
        sy_ureq_pause(r->req);
        r->at_pause = r->body.len;
        uv_timer_t *t = malloc(sizeof *t);
        uv_timer_init(&r->e->loop, t);
        t->data = r;
        uv_timer_start(t, resume_cb, 100, 0);
    }
    return 0;
}

static void on_done(void *ud, int err)
{
    struct res *r = ud;
    assert_int_equal(r->done, 0); /* exactly once, never after a cancel */
    r->err = err;
    r->done = 1;
}

static const struct sy_ureq_cbs cbs = {on_head, on_body, on_done};

static void res_init(struct res *r, struct env *e)
{
    memset(r, 0, sizeof *r);
    r->e = e;
    r->status = -1;
    sy_buf_init(&r->body, 64u << 20);
}

static void run_until(struct env *e, int *flag)
{
    while (!*flag)
        uv_run(&e->loop, UV_RUN_ONCE);
}

static void nop_timer(uv_timer_t *t)
{
    *(int *)t->data = 1;
}

/* Run the loop for ms of wall time. */
static void run_for(struct env *e, unsigned ms)
{
    uv_timer_t t;
    int fired = 0;
    uv_timer_init(&e->loop, &t);
    t.data = &fired;
    uv_timer_start(&t, nop_timer, ms, 0);
    run_until(e, &fired);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(&e->loop, UV_RUN_NOWAIT);
}

static struct sy_ureq *start(struct env *e, struct res *r, const char *path, const char *method, const uv_buf_t *body,
                             unsigned nbody, struct sy_ureq_opts *over)
{
    char url[256];
    snprintf(url, sizeof url, "%s%s", e->base, path);
    struct sy_ureq_opts o = {0};
    if (over)
        o = *over;
    o.url = url;
    o.method = method;
    o.body = body;
    o.nbody = nbody;
    r->req = sy_ureq_start(e->pool, &o, &cbs, r);
    assert_non_null(r->req);
    return r->req;
}

static void fetch(struct env *e, struct res *r, const char *path)
{
    res_init(r, e);
    start(e, r, path, "GET", NULL, 0, NULL);
    run_until(e, &r->done);
}

static struct env *env_new(SSL_CTX *sctx, const struct sy_upool_opts *po, const char *host)
{
    struct env *e = calloc(1, sizeof *e);
    uv_loop_init(&e->loop);
    e->srv = tsrv_start(sctx);
    assert_non_null(e->srv);
    struct sy_upool_opts d = {.ssl_verify = 1};
    e->pool = sy_upool_new(&e->loop, po ? po : &d);
    assert_non_null(e->pool);
    snprintf(e->base, sizeof e->base, "%s://%s:%u", sctx ? "https" : "http", host ? host : "127.0.0.1",
             tsrv_port(e->srv));
    return e;
}

static void env_free(struct env *e)
{
    sy_upool_close(e->pool);
    uv_run(&e->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&e->loop), 0); /* every handle was closed */
    tsrv_stop(e->srv);
    free(e);
}

static int setup(void **state)
{
    *state = env_new(NULL, NULL, NULL);
    return 0;
}

static int teardown(void **state)
{
    env_free(*state);
    return 0;
}

static void check_pattern(const struct sy_buf *b, size_t n)
{
    assert_int_equal(b->len, n);
    for (size_t i = 0; i < n; i++)
        if (b->p[i] != (char)('a' + i % 26))
            fail_msg("body byte %zu differs", i);
}

/* ---- plain HTTP --------------------------------------------------------- */

static void t_content_length(void **state)
{
    struct env *e = *state;
    struct res r;
    fetch(e, &r, "/cl?n=1000");
    assert_int_equal(r.err, 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.heads, 1);
    check_pattern(&r.body, 1000);
    char *h = tsrv_last_head(e->srv);
    char want[128];
    snprintf(want, sizeof want, "GET /cl?n=1000 HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n", tsrv_port(e->srv));
    assert_memory_equal(h, want, strlen(want));
    assert_non_null(strstr(h, "Connection: keep-alive\r\n\r\n"));
    assert_null(strstr(h, "Content-Length"));
    free(h);
    sy_buf_free(&r.body);
}

static void t_chunked(void **state)
{
    struct env *e = *state;
    struct res r;
    fetch(e, &r, "/chunked");
    assert_int_equal(r.err, 0);
    assert_int_equal(r.status, 200);
    assert_true(r.saw_xtest);
    assert_int_equal(r.body.len, 11);
    assert_memory_equal(r.body.p, "hello world", 11);
    sy_buf_free(&r.body);
}

static void t_trickle(void **state)
{
    struct env *e = *state;
    struct res r;
    fetch(e, &r, "/trickle?n=6&ms=15");
    assert_int_equal(r.err, 0);
    const char *want = "data: 0\n\ndata: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\ndata: 5\n\n";
    assert_int_equal(r.body.len, strlen(want));
    assert_memory_equal(r.body.p, want, strlen(want));
    assert_true(r.bodies >= 6); /* each event delivered as it arrived */
    sy_buf_free(&r.body);
}

/* The after_read hook runs after every read's bytes were delivered and before the
 * next read's: a worker writes a stream's bytes to its client there, event by event. */
struct after_read_log {
    struct res *r;
    int calls;
    int bodies_at[64]; /* r->bodies at each call */
};

static void after_read_cb(void *arg)
{
    struct after_read_log *l = arg;
    if (l->calls < 64)
        l->bodies_at[l->calls] = l->r->bodies;
    l->calls++;
}

static void t_after_read(void **state)
{
    struct env *e = *state;
    struct res r;
    struct after_read_log l = {.r = &r};
    sy_upool_after_read(e->pool, after_read_cb, &l);
    fetch(e, &r, "/trickle?n=6&ms=15");
    assert_int_equal(r.err, 0);
    assert_int_equal(r.done, 1);
    assert_true(r.bodies >= 6);
    /* events 15 ms apart arrive in several reads (a busy machine may merge some) */
    assert_true(l.calls >= 2);
    assert_true(l.calls < 64);
    for (int i = 1; i < l.calls; i++) /* called after the pieces, in order */
        assert_true(l.bodies_at[i] >= l.bodies_at[i - 1]);
    assert_int_equal(l.bodies_at[l.calls - 1], r.bodies); /* the last piece was followed by a call */
    sy_upool_after_read(e->pool, NULL, NULL);
    int before = l.calls;
    sy_buf_free(&r.body);
    fetch(e, &r, "/cl?n=100");
    assert_int_equal(r.err, 0);
    assert_int_equal(l.calls, before); /* cleared: not called */
    sy_buf_free(&r.body);
}

static void t_close_delimited(void **state)
{
    struct env *e = *state;
    struct res r;
    fetch(e, &r, "/closedelim");
    assert_int_equal(r.err, 0);
    assert_int_equal(r.body.len, 20);
    assert_memory_equal(r.body.p, "close-delimited body", 20);
    sy_buf_free(&r.body);
    fetch(e, &r, "/cl?n=3"); /* the pool is still usable, on a new connection */
    assert_int_equal(r.err, 0);
    assert_int_equal(tsrv_conns(e->srv), 2);
    sy_buf_free(&r.body);
}

static void t_connection_close(void **state)
{
    struct env *e = *state;
    struct res r;
    for (int i = 0; i < 3; i++) {
        fetch(e, &r, "/connclose");
        assert_int_equal(r.err, 0);
        assert_memory_equal(r.body.p, "ok", 2);
        sy_buf_free(&r.body);
    }
    assert_int_equal(tsrv_conns(e->srv), 3);
    struct sy_upool_stats st;
    sy_upool_stats(e->pool, &st);
    assert_int_equal(st.retries, 0);
    assert_int_equal(st.idle_conns, 0);
}

static void t_keepalive_reuse(void **state)
{
    struct env *e = *state;
    struct res r;
    for (int i = 0; i < 20; i++) {
        fetch(e, &r, i % 2 ? "/chunked" : "/cl?n=100");
        assert_int_equal(r.err, 0);
        assert_int_equal(r.status, 200);
        sy_buf_free(&r.body);
    }
    assert_int_equal(tsrv_conns(e->srv), 1);
    assert_int_equal(tsrv_reqs(e->srv), 20);
    struct sy_upool_stats st;
    sy_upool_stats(e->pool, &st);
    assert_int_equal(st.reuses, 19);
    assert_int_equal(st.connects, 1);
    assert_int_equal(st.idle_conns, 1);
}

/* Start the next request from inside on_done: the connection just pooled is reused. */
struct chain {
    struct env *e;
    struct res r;
    int left, ok;
};
static void chain_done(void *ud, int err);
static const struct sy_ureq_cbs chain_cbs = {NULL, NULL, chain_done};
static void chain_next(struct chain *c)
{
    char url[128];
    snprintf(url, sizeof url, "%s/cl?n=10", c->e->base);
    struct sy_ureq_opts o = {.url = url, .method = "GET"};
    assert_non_null(sy_ureq_start(c->e->pool, &o, &chain_cbs, c));
}
static void chain_done(void *ud, int err)
{
    struct chain *c = ud;
    assert_int_equal(err, 0);
    c->ok++;
    if (--c->left)
        chain_next(c);
    else
        c->r.done = 1;
}

static void t_start_from_on_done(void **state)
{
    struct env *e = *state;
    struct chain c = {.e = e, .left = 10};
    chain_next(&c);
    run_until(e, &c.r.done);
    assert_int_equal(c.ok, 10);
    assert_int_equal(tsrv_conns(e->srv), 1);
}

static void t_stale_retry(void **state)
{
    struct env *e = *state;
    struct res r;
    fetch(e, &r, "/once"); /* the server will close this connection on its next request */
    assert_int_equal(r.err, 0);
    sy_buf_free(&r.body);
    fetch(e, &r, "/cl?n=5");
    assert_int_equal(r.err, 0);
    assert_int_equal(r.status, 200);
    check_pattern(&r.body, 5);
    sy_buf_free(&r.body);
    struct sy_upool_stats st;
    sy_upool_stats(e->pool, &st);
    assert_int_equal(st.retries, 1);
    assert_int_equal(tsrv_conns(e->srv), 2);
}

static void t_idle_closed_by_server(void **state)
{
    struct env *e = *state;
    struct res r;
    fetch(e, &r, "/idleclose");
    assert_int_equal(r.err, 0);
    sy_buf_free(&r.body);
    struct sy_upool_stats st;
    for (int i = 0; i < 100; i++) { /* until the EOF on the idle connection is seen */
        sy_upool_stats(e->pool, &st);
        if (!st.idle_conns)
            break;
        run_for(e, 10);
    }
    assert_int_equal(st.idle_conns, 0);
    fetch(e, &r, "/cl?n=5");
    assert_int_equal(r.err, 0);
    sy_buf_free(&r.body);
    sy_upool_stats(e->pool, &st);
    assert_int_equal(st.retries, 0);
    assert_int_equal(st.reuses, 0);
}

static void t_pool_idle_timeout(void **state)
{
    struct env *e = calloc(1, sizeof *e);
    uv_loop_init(&e->loop);
    e->srv = tsrv_start(NULL);
    struct sy_upool_opts po = {.ssl_verify = 1, .idle_timeout_s = 0.05};
    e->pool = sy_upool_new(&e->loop, &po);
    snprintf(e->base, sizeof e->base, "http://127.0.0.1:%u", tsrv_port(e->srv));
    struct res r;
    fetch(e, &r, "/cl?n=5");
    sy_buf_free(&r.body);
    struct sy_upool_stats st;
    sy_upool_stats(e->pool, &st);
    assert_int_equal(st.idle_conns, 1);
    run_for(e, 150);
    sy_upool_stats(e->pool, &st);
    assert_int_equal(st.idle_conns, 0);
    env_free(e);
}

static void t_connect_refused(void **state)
{
    struct env *e = *state;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    bind(fd, (struct sockaddr *)&a, sizeof a);
    getsockname(fd, (struct sockaddr *)&a, &al);
    close(fd); /* nothing listens there now */
    struct res r;
    res_init(&r, e);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/x", ntohs(a.sin_port));
    struct sy_ureq_opts o = {.url = url, .method = "GET"};
    r.req = sy_ureq_start(e->pool, &o, &cbs, &r);
    assert_int_equal(r.done, 0); /* never called from inside start */
    run_until(e, &r.done);
    assert_int_equal(r.err, SY_EUPCONNECT);
    assert_int_equal(r.heads, 0);
}

static void t_dns_failure(void **state)
{
    struct env *e = *state;
    struct res r;
    res_init(&r, e);
    struct sy_ureq_opts o = {.url = "http://no-such-host.invalid/x", .method = "GET"};
    r.req = sy_ureq_start(e->pool, &o, &cbs, &r);
    run_until(e, &r.done);
    assert_int_equal(r.err, SY_EDNS);
}

static void t_dns_localhost_cached(void **state)
{
    struct env *e = *state;
    snprintf(e->base, sizeof e->base, "http://localhost:%u", tsrv_port(e->srv));
    struct res r;
    fetch(e, &r, "/connclose");
    assert_int_equal(r.err, 0);
    sy_buf_free(&r.body);
    fetch(e, &r, "/connclose");
    assert_int_equal(r.err, 0);
    sy_buf_free(&r.body);
    struct sy_upool_stats st;
    sy_upool_stats(e->pool, &st);
    assert_int_equal(st.dns_lookups, 1);
    assert_int_equal(st.connects, 2);
}

static void t_first_byte_timeout(void **state)
{
    struct env *e = *state;
    struct res r;
    res_init(&r, e);
    struct sy_ureq_opts o = {.first_byte_timeout_s = 0.1};
    start(e, &r, "/sleep?ms=3000", "GET", NULL, 0, &o);
    run_until(e, &r.done);
    assert_int_equal(r.err, SY_EUPTIMEOUT);
    assert_int_equal(r.heads, 0);
}

static void t_idle_timeout(void **state)
{
    struct env *e = *state;
    struct res r;
    res_init(&r, e);
    struct sy_ureq_opts o = {.first_byte_timeout_s = 5, .idle_timeout_s = 0.1};
    start(e, &r, "/stall", "GET", NULL, 0, &o);
    run_until(e, &r.done);
    assert_int_equal(r.err, SY_EUPTIMEOUT);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.body.len, 10);
    sy_buf_free(&r.body);
}

static void t_reset_mid_body(void **state)
{
    struct env *e = *state;
    struct res r;
    fetch(e, &r, "/reset");
    assert_int_equal(r.err, SY_EUPRESET);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.body.len, 10);
    sy_buf_free(&r.body);
}

static void t_bad_response(void **state)
{
    struct env *e = *state;
    struct res r;
    fetch(e, &r, "/bad");
    assert_int_equal(r.err, SY_EUPPROTO);
}

static void t_interim_100(void **state)
{
    struct env *e = *state;
    struct res r;
    fetch(e, &r, "/100");
    assert_int_equal(r.err, 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.heads, 1);
    assert_memory_equal(r.body.p, "ok", 2);
    sy_buf_free(&r.body);
}

static void t_pause_resume(void **state)
{
    struct env *e = *state;
    struct res r;
    res_init(&r, e);
    r.pause_at_body = 1;
    start(e, &r, "/cl?n=3000000", "GET", NULL, 0, NULL);
    run_until(e, &r.done);
    assert_int_equal(r.err, 0);
    check_pattern(&r.body, 3000000);
    /* while paused at most the rest of one read buffer was delivered */
    assert_true(r.at_resume - r.at_pause <= 65536);
    assert_true(r.at_resume < 3000000);
    sy_buf_free(&r.body);
}

static void t_cancel_in_on_body(void **state)
{
    struct env *e = *state;
    struct res r;
    res_init(&r, e);
    r.cancel_at_body = 1;
    start(e, &r, "/cl?n=2000000", "GET", NULL, 0, NULL);
    run_until(e, &r.done);
    run_for(e, 30); /* on_done must not follow (on_done asserts done == 0) */
    assert_int_equal(r.done, 2);
    sy_buf_free(&r.body);
    res_init(&r, e);
    r.cancel_explicit = 2;
    start(e, &r, "/cl?n=2000000", "GET", NULL, 0, NULL);
    run_until(e, &r.done);
    run_for(e, 30);
    assert_int_equal(r.done, 2);
    sy_buf_free(&r.body);
    fetch(e, &r, "/cl?n=7"); /* the pool still works */
    assert_int_equal(r.err, 0);
    check_pattern(&r.body, 7);
    sy_buf_free(&r.body);
}

static int cancel_head(void *ud, int status, const struct sy_uheader *h, size_t nh)
{
    struct res *r = ud;
    r->done = 2;
    return 1;
}

static void t_cancel_in_on_head_and_early(void **state)
{
    struct env *e = *state;
    struct res r;
    res_init(&r, e);
    struct sy_ureq_cbs c2 = {cancel_head, on_body, on_done};
    char url[128];
    snprintf(url, sizeof url, "%s/cl?n=100", e->base);
    struct sy_ureq_opts o = {.url = url, .method = "GET"};
    r.req = sy_ureq_start(e->pool, &o, &c2, &r);
    run_until(e, &r.done);
    run_for(e, 20);
    assert_int_equal(r.done, 2);
    assert_int_equal(r.body.len, 0);
    /* cancelled before anything happened: connecting, and a DNS failure pending */
    res_init(&r, e);
    start(e, &r, "/cl?n=100", "GET", NULL, 0, NULL);
    sy_ureq_cancel(r.req);
    struct sy_ureq_opts o2 = {.url = "http://x.invalid/", .method = "GET"};
    struct res r2;
    res_init(&r2, e);
    r2.req = sy_ureq_start(e->pool, &o2, &cbs, &r2);
    sy_ureq_cancel(r2.req);
    run_for(e, 50);
    assert_int_equal(r.done, 0);
    assert_int_equal(r2.done, 0);
}

static void t_large_bodies(void **state)
{
    struct env *e = *state;
    size_t n = 5u << 20;
    char *big = malloc(n);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)('a' + i % 26);
    uv_buf_t pieces[3] = {uv_buf_init(big, 1000), uv_buf_init(big + 1000, 3u << 20),
                          uv_buf_init(big + 1000 + (3u << 20), (unsigned)(n - 1000 - (3u << 20)))};
    struct res r;
    res_init(&r, e);
    start(e, &r, "/echo", "POST", pieces, 3, NULL);
    run_until(e, &r.done);
    assert_int_equal(r.err, 0);
    assert_int_equal(tsrv_last_body_len(e->srv), n);
    check_pattern(&r.body, n);
    sy_buf_free(&r.body);
    free(big);
}

static void t_many_body_pieces(void **state)
{
    struct env *e = *state;
    static const char *parts[] = {
        "{\"model\":", "\"gpt-4o\"", ",", "\"messages\":[", "{\"role\":", "\"user\",", "\"content\":", "\"hi\"", "}",
        "]",           "",           "}"};
    uv_buf_t b[12];
    char all[256] = "";
    for (int i = 0; i < 12; i++) {
        b[i] = uv_buf_init((char *)parts[i], (unsigned)strlen(parts[i]));
        strcat(all, parts[i]);
    }
    struct res r;
    res_init(&r, e);
    struct sy_ureq_opts o = {.headers = "Content-Type: application/json\r\nAuthorization: Bearer k", .headers_len = 55};
    start(e, &r, "/echo", "POST", b, 12, &o);
    run_until(e, &r.done);
    assert_int_equal(r.err, 0);
    assert_int_equal(r.body.len, strlen(all));
    assert_memory_equal(r.body.p, all, strlen(all));
    char *h = tsrv_last_head(e->srv);
    char want[64];
    snprintf(want, sizeof want, "Content-Length: %zu\r\n", strlen(all));
    assert_non_null(strstr(h, want));
    assert_non_null(strstr(h, "\r\nAuthorization: Bearer k\r\n"));
    assert_non_null(strstr(h, "POST /echo HTTP/1.1\r\n"));
    free(h);
    sy_buf_free(&r.body);
}

static void t_early_response(void **state)
{
    struct env *e = *state;
    size_t n = 16u << 20;
    char *big = calloc(1, n);
    uv_buf_t b = uv_buf_init(big, (unsigned)n);
    struct res r;
    res_init(&r, e);
    start(e, &r, "/early", "POST", &b, 1, NULL);
    run_until(e, &r.done);
    assert_int_equal(r.err, 0);
    assert_int_equal(r.status, 413);
    assert_memory_equal(r.body.p, "too big", 7);
    sy_buf_free(&r.body);
    free(big);
}

static void t_concurrent(void **state)
{
    struct env *e = *state;
    enum { N = 16 };
    struct res r[N];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
            res_init(&r[i], e);
            start(e, &r[i], "/cl?n=5000", "GET", NULL, 0, NULL);
        }
        for (int i = 0; i < N; i++) {
            run_until(e, &r[i].done);
            assert_int_equal(r[i].err, 0);
            check_pattern(&r[i].body, 5000);
            sy_buf_free(&r[i].body);
        }
    }
    assert_int_equal(tsrv_conns(e->srv), N); /* the second round reused all of them */
}

static void t_pool_close_inflight(void **state)
{
    struct env *e = *state;
    struct res r;
    res_init(&r, e);
    start(e, &r, "/sleep?ms=2000", "GET", NULL, 0, NULL);
    run_for(e, 30);
    sy_upool_close(e->pool);
    assert_int_equal(r.done, 1);
    assert_int_equal(r.err, SY_ECANCELED);
    uv_run(&e->loop, UV_RUN_DEFAULT);
    e->pool = sy_upool_new(&e->loop, NULL); /* for teardown */
}

static void t_bad_urls(void **state)
{
    struct env *e = *state;
    static const char *bad[] = {"ftp://x/",    "http://",      "http:///x",  "http://h:0/", "http://h:99999/",
                                "http://u@h/", "http://[::1/", "http://h:/", "localhost/x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct sy_ureq_opts o = {.url = bad[i], .method = "GET"};
        assert_null(sy_ureq_start(e->pool, &o, &cbs, NULL));
    }
}

/* ---- TLS ---------------------------------------------------------------- */

static struct tcert *pki;
static SSL_CTX *sctx_ok, *sctx_wrong;

static void tls_case(SSL_CTX *sctx, const char *host, int verify, int use_ca, int want_err)
{
    struct sy_upool_opts po = {.ssl_verify = verify, .ca_file = use_ca ? tcert_ca_file(pki) : NULL};
    struct env *e = env_new(sctx, &po, host);
    struct res r;
    fetch(e, &r, "/cl?n=100");
    assert_int_equal(r.err, want_err);
    if (!want_err) {
        check_pattern(&r.body, 100);
        sy_buf_free(&r.body);
        fetch(e, &r, "/chunked"); /* keep-alive over TLS */
        assert_int_equal(r.err, 0);
        assert_memory_equal(r.body.p, "hello world", 11);
        assert_int_equal(tsrv_conns(e->srv), 1);
    }
    sy_buf_free(&r.body);
    env_free(e);
}

static void t_tls_verified_name(void **state)
{
    tls_case(sctx_ok, "localhost", 1, 1, 0);
}
static void t_tls_verified_ip(void **state)
{
    tls_case(sctx_ok, "127.0.0.1", 1, 1, 0);
}
static void t_tls_untrusted(void **state)
{
    tls_case(sctx_ok, "localhost", 1, 0, SY_ETLS);
}
static void t_tls_noverify(void **state)
{
    tls_case(sctx_ok, "localhost", 0, 0, 0);
}
static void t_tls_name_mismatch(void **state)
{
    tls_case(sctx_wrong, "localhost", 1, 1, SY_ETLS);
}
static void t_tls_ip_mismatch(void **state)
{
    tls_case(sctx_wrong, "127.0.0.1", 1, 1, SY_ETLS);
}

static void t_tls_bodies_and_resume(void **state)
{
    struct sy_upool_opts po = {.ssl_verify = 1, .ca_file = tcert_ca_file(pki)};
    struct env *e = env_new(sctx_ok, &po, "localhost");
    size_t n = 3u << 20;
    char *big = malloc(n);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)('a' + i % 26);
    uv_buf_t b[2] = {uv_buf_init(big, 77), uv_buf_init(big + 77, (unsigned)(n - 77))};
    struct res r;
    res_init(&r, e);
    start(e, &r, "/echo", "POST", b, 2, NULL);
    run_until(e, &r.done);
    assert_int_equal(r.err, 0);
    check_pattern(&r.body, n);
    sy_buf_free(&r.body);
    res_init(&r, e);
    r.pause_at_body = 1;
    start(e, &r, "/cl?n=1000000", "GET", NULL, 0, NULL);
    run_until(e, &r.done);
    assert_int_equal(r.err, 0);
    check_pattern(&r.body, 1000000);
    sy_buf_free(&r.body);
    for (int i = 0; i < 2; i++) { /* new connections resume the TLS session */
        fetch(e, &r, "/connclose");
        assert_int_equal(r.err, 0);
        sy_buf_free(&r.body);
    }
    struct sy_upool_stats st;
    sy_upool_stats(e->pool, &st);
    assert_true(st.tls_resumed >= 1);
    res_init(&r, e);
    r.cancel_at_body = 1;
    start(e, &r, "/cl?n=1000000", "GET", NULL, 0, NULL);
    run_until(e, &r.done);
    sy_buf_free(&r.body);
    free(big);
    env_free(e);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    pki = tcert_new();
    sctx_ok = tcert_server_ctx(pki, "DNS:localhost,IP:127.0.0.1");
    sctx_wrong = tcert_server_ctx(pki, "DNS:wrong.example,IP:10.9.9.9");
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(t_content_length),
        T(t_chunked),
        T(t_trickle),
        T(t_after_read),
        T(t_close_delimited),
        T(t_connection_close),
        T(t_keepalive_reuse),
        T(t_start_from_on_done),
        T(t_stale_retry),
        T(t_idle_closed_by_server),
        cmocka_unit_test(t_pool_idle_timeout),
        T(t_connect_refused),
        T(t_dns_failure),
        T(t_dns_localhost_cached),
        T(t_first_byte_timeout),
        T(t_idle_timeout),
        T(t_reset_mid_body),
        T(t_bad_response),
        T(t_interim_100),
        T(t_pause_resume),
        T(t_cancel_in_on_body),
        T(t_cancel_in_on_head_and_early),
        T(t_large_bodies),
        T(t_many_body_pieces),
        T(t_early_response),
        T(t_concurrent),
        T(t_pool_close_inflight),
        T(t_bad_urls),
        cmocka_unit_test(t_tls_verified_name),
        cmocka_unit_test(t_tls_verified_ip),
        cmocka_unit_test(t_tls_untrusted),
        cmocka_unit_test(t_tls_noverify),
        cmocka_unit_test(t_tls_name_mismatch),
        cmocka_unit_test(t_tls_ip_mismatch),
        cmocka_unit_test(t_tls_bodies_and_resume),
    };
    int rc = cmocka_run_group_tests_name("upstream_client", tests, NULL, NULL);
    SSL_CTX_free(sctx_ok);
    SSL_CTX_free(sctx_wrong);
    tcert_free(pki);
    return rc;
}
