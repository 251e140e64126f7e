/* test_client.c - the MCP client pool (src/mcp/client.c, http.c, sse.c,
 * auth.c) on a real libuv loop against msrv, a scripted MCP server: what
 * goes on the wire (one initialize per server, the session id and protocol
 * version on later requests, auth headers, OAuth2 token fetches), what the
 * caller gets back (its own id, caps, timeouts, errors), and the old SSE
 * transport. Every wait is bounded by a watchdog. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/buf.h"
#include "core/errors.h"
#include "mcp/client_int.h"
#include "mcp/mcp.h"
#include "msrv.h"
#include "upstream/client.h"

struct env {
    uv_loop_t loop;
    struct sy_upool *up;
    struct sy_mcp_pool *p;
    struct msrv *srv;
    struct sy_mcp_server s;
    char url[160], token_url[160];
};

struct res {
    int done, err, calls;
    char *msg;
};

static void done_cb(void *ud, int err, const char *msg, size_t n)
{
    struct res *r = ud;
    r->calls++;
    r->done = 1;
    r->err = err;
    free(r->msg);
    r->msg = strndup(msg, n);
}

static void wd_cb(uv_timer_t *t)
{
    *(int *)t->data = 1;
}

/* Run the loop until *flag, failing after 10 s. */
static void run_until(struct env *e, int *flag)
{
    uv_timer_t wd;
    int fired = 0;
    uv_timer_init(&e->loop, &wd);
    wd.data = &fired;
    uv_timer_start(&wd, wd_cb, 10000, 0);
    while (!*flag && !fired)
        uv_run(&e->loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&wd, NULL);
    uv_run(&e->loop, UV_RUN_NOWAIT);
    if (!*flag)
        fail_msg("timed out waiting");
}

/* Run the loop for ms. */
static void run_for(struct env *e, unsigned ms)
{
    uv_timer_t t;
    int fired = 0;
    uv_timer_init(&e->loop, &t);
    t.data = &fired;
    uv_timer_start(&t, wd_cb, ms, 0);
    while (!fired)
        uv_run(&e->loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(&e->loop, UV_RUN_NOWAIT);
}

/* Poll the server (its threads) until count(method) >= n, 10 s at most. */
static void wait_count(struct env *e, const char *method, int n)
{
    for (int i = 0; i < 500 && msrv_count(e->srv, method) < n; i++)
        run_for(e, 20);
    assert_true(msrv_count(e->srv, method) >= n);
}

static struct env *env_new(const struct msrv_opts *o, const char *path, enum sy_mcp_transport tr)
{
    struct env *e = calloc(1, sizeof *e);
    uv_loop_init(&e->loop);
    e->srv = msrv_start(o);
    assert_non_null(e->srv);
    struct sy_upool_opts uo = {.ssl_verify = 1};
    e->up = sy_upool_new(&e->loop, &uo);
    assert_non_null(e->up);
    e->p = sy_mcp_pool_new(&e->loop, e->up);
    assert_non_null(e->p);
    snprintf(e->url, sizeof e->url, "http://127.0.0.1:%u%s", msrv_port(e->srv), path);
    snprintf(e->token_url, sizeof e->token_url, "http://127.0.0.1:%u/token", msrv_port(e->srv));
    e->s.name = e->s.id = e->s.prefix = "srv";
    e->s.url = e->url;
    e->s.transport = tr;
    e->s.timeout_s = 5;
    snprintf(e->s.fingerprint, sizeof e->s.fingerprint, "fp-%s-%u", path, msrv_port(e->srv));
    return e;
}

static void env_free(struct env *e)
{
    sy_mcp_pool_close(e->p);
    sy_upool_close(e->up);
    uv_run(&e->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&e->loop), 0); /* every handle was closed */
    msrv_stop(e->srv);
    free(e);
}

static struct sy_mcp_op *start(struct env *e, struct res *r, const char *method, const char *params,
                               const struct sy_mcp_req *over)
{
    memset(r, 0, sizeof *r);
    struct sy_mcp_req q = {0};
    if (over)
        q = *over;
    q.s = &e->s;
    q.method = method;
    q.params = params;
    q.params_len = params ? strlen(params) : 0;
    struct sy_mcp_op *op = sy_mcp_request(e->p, &q, done_cb, r);
    assert_non_null(op);
    assert_int_equal(r->done, 0); /* never from inside sy_mcp_request */
    return op;
}

static void call(struct env *e, struct res *r, const char *method, const char *params, const struct sy_mcp_req *over)
{
    start(e, r, method, params, over);
    run_until(e, &r->done);
}

static char *head_of(struct env *e, const char *method)
{
    char *h = msrv_head(e->srv, method);
    assert_non_null(h);
    return h;
}

static void expect_header(struct env *e, const char *method, const char *line)
{
    char *h = head_of(e, method);
    if (!strcasestr(h, line))
        fail_msg("%s: \"%s\" not in:\n%s", method, line, h);
    free(h);
}

static void expect_no_header(struct env *e, const char *method, const char *name)
{
    char *h = head_of(e, method);
    char n[80];
    snprintf(n, sizeof n, "\r\n%s:", name);
    if (strcasestr(h, n))
        fail_msg("%s: \"%s\" should not be in:\n%s", method, name, h);
    free(h);
}

#define ECHO_ARGS(t) "{\"name\":\"echo\",\"arguments\":{\"text\":\"" t "\"}}"

/* ---- streamable HTTP ---- */

static void t_http_handshake_once(void **state)
{
    (void)state;
    struct env *e = env_new(NULL, "/mcp", SY_MCP_HTTP);
    struct res r[4];
    /* four calls made at once: one initialize, all four wait for it */
    for (int i = 0; i < 4; i++)
        start(e, &r[i], "tools/call", ECHO_ARGS("hi"), NULL);
    for (int i = 0; i < 4; i++) {
        run_until(e, &r[i].done);
        assert_int_equal(r[i].err, 0);
        assert_non_null(strstr(r[i].msg, "\"text\":\"hi\""));
        assert_int_equal(r[i].calls, 1);
    }
    struct res r2;
    call(e, &r2, "tools/list", NULL, NULL);
    assert_int_equal(r2.err, 0);
    assert_non_null(strstr(r2.msg, "\"tools\""));
    assert_int_equal(msrv_count(e->srv, "initialize"), 1);
    assert_int_equal(msrv_count(e->srv, "notifications/initialized"), 1);
    assert_int_equal(msrv_count(e->srv, "tools/call"), 4);
    /* the initialize: our client info, the newest revision, no session yet */
    char *b = msrv_body(e->srv, "initialize");
    assert_non_null(strstr(b, "\"protocolVersion\":\"2025-11-25\""));
    assert_non_null(strstr(b, "\"clientInfo\":{\"name\":\"switchyard\""));
    free(b);
    expect_no_header(e, "initialize", "Mcp-Session-Id");
    expect_header(e, "initialize", "Accept: application/json, text/event-stream");
    expect_header(e, "initialize", "Content-Type: application/json");
    /* later requests carry the session and the negotiated revision */
    expect_header(e, "notifications/initialized", "Mcp-Session-Id: sess-1");
    expect_header(e, "tools/list", "Mcp-Session-Id: sess-1");
    expect_header(e, "tools/list", "MCP-Protocol-Version: 2025-11-25");
    struct sy_mcp_pool_stats st;
    sy_mcp_pool_stats(e->p, &st);
    assert_int_equal(st.requests, 5);
    assert_int_equal(st.initializes, 1);
    assert_int_equal(st.reinitializes, 0);
    for (int i = 0; i < 4; i++)
        free(r[i].msg);
    free(r2.msg);
    env_free(e);
}

static void t_http_ids(void **state)
{
    (void)state;
    struct env *e = env_new(NULL, "/mcp", SY_MCP_HTTP);
    struct res r;
    struct sy_mcp_req q = {.id = "\"client-7\"", .id_len = 10};
    call(e, &r, "tools/call", ECHO_ARGS("a"), &q);
    assert_int_equal(r.err, 0);
    assert_non_null(strstr(r.msg, "\"id\":\"client-7\""));
    /* the wire carried the pool's own integer */
    char *b = msrv_body(e->srv, "tools/call");
    assert_null(strstr(b, "client-7"));
    assert_non_null(strstr(b, "\"id\":"));
    free(b);
    /* without a caller id the answer keeps ours */
    struct res r2;
    call(e, &r2, "tools/call", ECHO_ARGS("b"), NULL);
    assert_int_equal(r2.err, 0);
    assert_null(strstr(r2.msg, "client-7"));
    free(r.msg);
    free(r2.msg);
    env_free(e);
}

static void t_http_sse_answers(void **state)
{
    (void)state;
    struct msrv_opts o = {.sse = 1};
    struct env *e = env_new(&o, "/mcp", SY_MCP_HTTP);
    struct res r;
    call(e, &r, "tools/call", ECHO_ARGS("streamed"), NULL);
    assert_int_equal(r.err, 0);
    assert_non_null(strstr(r.msg, "\"text\":\"streamed\""));
    /* a server request (ping) inside the answer's stream is answered */
    struct res r2;
    call(e, &r2, "tools/call", "{\"name\":\"pinger\"}", NULL);
    assert_int_equal(r2.err, 0);
    assert_non_null(strstr(r2.msg, "pong seen 1"));
    char *b = msrv_body(e->srv, "response");
    assert_non_null(strstr(b, "\"id\":\"srv-1\",\"result\":{}"));
    free(b);
    /* the answered streams were drained: the connection is reused */
    run_for(e, 50);
    struct res r3;
    call(e, &r3, "tools/call", ECHO_ARGS("again"), NULL);
    assert_int_equal(r3.err, 0);
    struct sy_upool_stats us;
    sy_upool_stats(e->up, &us);
    assert_true(us.reuses > 0);
    free(r.msg);
    free(r2.msg);
    free(r3.msg);
    env_free(e);
}

static void t_http_reinit_after_404(void **state)
{
    (void)state;
    struct env *e = env_new(NULL, "/mcp", SY_MCP_HTTP);
    struct res r;
    call(e, &r, "tools/call", ECHO_ARGS("one"), NULL);
    assert_int_equal(r.err, 0);
    free(r.msg);
    msrv_expire(e->srv); /* the server forgot sess-1 */
    struct res a, b, more[4];
    start(e, &a, "tools/call", ECHO_ARGS("two"), NULL);
    start(e, &b, "tools/call", ECHO_ARGS("three"), NULL);
    for (int i = 0; i < 4; i++) /* their 404s come while the new session is being made */
        start(e, &more[i], "tools/call", "{\"name\":\"slow\",\"arguments\":{\"ms\":30}}", NULL);
    run_until(e, &a.done);
    run_until(e, &b.done);
    assert_int_equal(a.err, 0);
    assert_int_equal(b.err, 0);
    assert_non_null(strstr(a.msg, "\"two\""));
    assert_non_null(strstr(b.msg, "\"three\""));
    for (int i = 0; i < 4; i++) {
        run_until(e, &more[i].done);
        if (more[i].err)
            fail_msg("%s", more[i].msg);
        free(more[i].msg);
    }
    assert_int_equal(msrv_count(e->srv, "initialize"), 2); /* once, for all */
    expect_header(e, "tools/call", "Mcp-Session-Id: sess-2");
    struct sy_mcp_pool_stats st;
    sy_mcp_pool_stats(e->p, &st);
    assert_int_equal(st.initializes, 2);
    assert_int_equal(st.reinitializes, 1);
    free(a.msg);
    free(b.msg);
    env_free(e);
}

static void t_http_timeout(void **state)
{
    (void)state;
    struct env *e = env_new(NULL, "/mcp", SY_MCP_HTTP);
    struct res r;
    call(e, &r, "tools/list", NULL, NULL); /* the session first: the timeout below is the call's */
    assert_int_equal(r.err, 0);
    free(r.msg);
    struct sy_mcp_req q = {.timeout_s = 0.3};
    call(e, &r, "tools/call", "{\"name\":\"slow\",\"arguments\":{\"ms\":3000}}", &q);
    assert_int_equal(r.err, SY_EUPTIMEOUT);
    assert_non_null(strstr(r.msg, "srv"));
    struct sy_mcp_pool_stats st;
    sy_mcp_pool_stats(e->p, &st);
    assert_int_equal(st.timeouts, 1);
    /* the server is told */
    wait_count(e, "notifications/cancelled", 1);
    char *b = msrv_body(e->srv, "notifications/cancelled");
    assert_non_null(strstr(b, "\"requestId\":"));
    free(b);
    /* and the session still serves */
    struct res r2;
    call(e, &r2, "tools/call", ECHO_ARGS("after"), NULL);
    assert_int_equal(r2.err, 0);
    free(r.msg);
    free(r2.msg);
    env_free(e);
}

static void t_http_cap(void **state)
{
    (void)state;
    for (int sse = 0; sse < 2; sse++) {
        struct msrv_opts o = {.sse = sse};
        struct env *e = env_new(&o, "/mcp", SY_MCP_HTTP);
        struct res r;
        struct sy_mcp_req q = {.max_result = 10000};
        call(e, &r, "tools/call", "{\"name\":\"big\",\"arguments\":{\"n\":100000}}", &q);
        assert_int_equal(r.err, SY_ENOSPC);
        free(r.msg);
        /* under the cap it goes through */
        call(e, &r, "tools/call", "{\"name\":\"big\",\"arguments\":{\"n\":9000}}", &q);
        assert_int_equal(r.err, 0);
        assert_true(strlen(r.msg) > 9000);
        free(r.msg);
        env_free(e);
    }
}

static void t_http_errors(void **state)
{
    (void)state;
    struct env *e = env_new(NULL, "/mcp", SY_MCP_HTTP);
    struct res r;
    call(e, &r, "tools/call", "{\"name\":\"fail\"}", NULL);
    assert_int_equal(r.err, SY_EUPPROTO);
    assert_non_null(strstr(r.msg, "HTTP 500"));
    if (!strstr(r.msg, "internal boom")) /* the excerpt, on one line */
        fail_msg("%s", r.msg);
    free(r.msg);
    env_free(e);
    /* nobody listening */
    e = env_new(NULL, "/mcp", SY_MCP_HTTP);
    snprintf(e->url, sizeof e->url, "http://127.0.0.1:1/mcp");
    call(e, &r, "tools/list", NULL, NULL);
    assert_int_equal(r.err, SY_EUPCONNECT);
    assert_non_null(strstr(r.msg, "initialize failed"));
    free(r.msg);
    env_free(e);
}

static void t_http_bad_version(void **state)
{
    (void)state;
    struct msrv_opts o = {.version = "1999-01-01"};
    struct env *e = env_new(&o, "/mcp", SY_MCP_HTTP);
    struct res r[2];
    start(e, &r[0], "tools/list", NULL, NULL);
    start(e, &r[1], "tools/list", NULL, NULL);
    run_until(e, &r[0].done);
    run_until(e, &r[1].done);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(r[i].err, SY_EUPPROTO);
        assert_non_null(strstr(r[i].msg, "unsupported protocol version"));
        free(r[i].msg);
    }
    assert_int_equal(msrv_count(e->srv, "tools/list"), 0);
    env_free(e);
    /* an older one we speak is taken, and sent back */
    struct msrv_opts o2 = {.version = "2025-03-26"};
    e = env_new(&o2, "/mcp", SY_MCP_HTTP);
    e->s.spec_version = "2025-06-18";
    struct res r2;
    call(e, &r2, "tools/list", NULL, NULL);
    assert_int_equal(r2.err, 0);
    char *b = msrv_body(e->srv, "initialize");
    assert_non_null(strstr(b, "\"protocolVersion\":\"2025-06-18\""));
    free(b);
    expect_header(e, "tools/list", "MCP-Protocol-Version: 2025-03-26");
    free(r2.msg);
    env_free(e);
}

static void t_notify(void **state)
{
    (void)state;
    struct env *e = env_new(NULL, "/mcp", SY_MCP_HTTP);
    struct res r;
    struct sy_mcp_req q = {.notify = 1};
    call(e, &r, "notifications/roots/list_changed", NULL, &q);
    assert_int_equal(r.err, 0);
    assert_string_equal(r.msg, "");
    assert_int_equal(msrv_count(e->srv, "notifications/roots/list_changed"), 1);
    free(r.msg);
    env_free(e);
}

/* ---- auth ---- */

static void t_auth_headers(void **state)
{
    (void)state;
    struct {
        enum sy_mcp_auth t;
        const char *value, *line;
    } cases[] = {
        {SY_MCP_AUTH_API_KEY, "k-123", "X-API-Key: k-123"},
        {SY_MCP_AUTH_BEARER, "b-456", "Authorization: Bearer b-456"},
        {SY_MCP_AUTH_BASIC, "user:pass", "Authorization: Basic dXNlcjpwYXNz"},
        {SY_MCP_AUTH_BASIC, "dXNlcjpwYXNz", "Authorization: Basic dXNlcjpwYXNz"},
        {SY_MCP_AUTH_AUTHORIZATION, "token abc", "Authorization: token abc"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct msrv_opts o = {.require = cases[i].line};
        struct env *e = env_new(&o, "/mcp", SY_MCP_HTTP);
        e->s.auth_type = cases[i].t;
        e->s.auth_value = (char *)cases[i].value;
        struct res r;
        call(e, &r, "tools/list", NULL, NULL);
        if (r.err)
            fail_msg("case %zu: %s", i, r.msg);
        expect_header(e, "initialize", cases[i].line);
        expect_header(e, "tools/list", cases[i].line);
        free(r.msg);
        env_free(e);
    }
    /* wrong credentials: the server's 401, as an error */
    struct msrv_opts o = {.require = "X-API-Key: right"};
    struct env *e = env_new(&o, "/mcp", SY_MCP_HTTP);
    e->s.auth_type = SY_MCP_AUTH_API_KEY;
    e->s.auth_value = "wrong";
    struct res r;
    call(e, &r, "tools/list", NULL, NULL);
    assert_int_equal(r.err, SY_EUPPROTO);
    assert_non_null(strstr(r.msg, "HTTP 401"));
    free(r.msg);
    env_free(e);
}

static void t_auth_precedence(void **state)
{
    (void)state;
    struct env *e = env_new(NULL, "/mcp", SY_MCP_HTTP);
    e->s.auth_type = SY_MCP_AUTH_BEARER;
    e->s.auth_value = "server-token";
    e->s.static_headers = "X-Team: blue\r\nX-Region: eu\r\nContent-Length: 0\r\n";
    struct res r;
    /* the caller's lines win by name; lines the transport owns are dropped */
    const char *xh = "Authorization: Bearer user-token\r\nX-Region: us\r\nHost: evil.example\r\n"
                     "Mcp-Session-Id: forged\r\nTransfer-Encoding: chunked\r\n";
    struct sy_mcp_req q = {.headers = xh, .headers_len = strlen(xh)};
    call(e, &r, "tools/list", NULL, &q);
    assert_int_equal(r.err, 0);
    expect_header(e, "tools/list", "Authorization: Bearer user-token");
    expect_header(e, "tools/list", "X-Region: us");
    expect_header(e, "tools/list", "X-Team: blue");
    expect_header(e, "tools/list", "Mcp-Session-Id: sess-1");
    char *h = head_of(e, "tools/list");
    assert_null(strstr(h, "server-token"));
    assert_null(strstr(h, "X-Region: eu"));
    assert_null(strstr(h, "evil.example"));
    assert_null(strstr(h, "forged"));
    assert_null(strcasestr(h, "Transfer-Encoding"));
    free(h);
    /* the server's own credentials when the caller has none */
    expect_header(e, "initialize", "Authorization: Bearer server-token");
    free(r.msg);
    /* header injection in the caller's lines: refused, nothing sent */
    int before = msrv_count(e->srv, "tools/list");
    const char *bad[] = {"X-A: 1\r\nX-B: 2\nX-C: 3\r\n", "X-A: 1\rX-Evil: 2\r\n", "Bad Name: 1\r\n", ": v\r\n",
                         "X-A: \x01\r\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct sy_mcp_req qb = {.headers = bad[i], .headers_len = strlen(bad[i])};
        call(e, &r, "tools/list", NULL, &qb);
        assert_int_equal(r.err, SY_EINVAL);
        free(r.msg);
    }
    assert_int_equal(msrv_count(e->srv, "tools/list"), before);
    env_free(e);
}

static void t_oauth(void **state)
{
    (void)state;
    struct msrv_opts o = {.oauth = 1, .token_ttl = 3600};
    struct env *e = env_new(&o, "/mcp", SY_MCP_HTTP);
    e->s.auth_type = SY_MCP_AUTH_OAUTH2;
    e->s.token_url = e->token_url;
    e->s.client_id = "cid";
    e->s.client_secret = "s&cret";
    e->s.scopes = "read write";
    struct res r[5];
    for (int i = 0; i < 5; i++)
        start(e, &r[i], "tools/call", ECHO_ARGS("o"), NULL);
    for (int i = 0; i < 5; i++) {
        run_until(e, &r[i].done);
        if (r[i].err)
            fail_msg("%s", r[i].msg);
        free(r[i].msg);
    }
    assert_int_equal(msrv_token_fetches(e->srv), 1); /* one fetch for all, then cached */
    char *tb = msrv_body(e->srv, "token");
    assert_non_null(strstr(tb, "grant_type=client_credentials"));
    assert_non_null(strstr(tb, "client_secret=s%26cret"));
    assert_non_null(strstr(tb, "scope=read+write"));
    free(tb);
    expect_header(e, "token", "Content-Type: application/x-www-form-urlencoded");
    expect_header(e, "tools/call", "Authorization: Bearer tok-0");
    /* the server stops taking the token: a 401, one fetch, one retry */
    msrv_rotate(e->srv);
    call(e, &r[0], "tools/call", ECHO_ARGS("p"), NULL);
    assert_int_equal(r[0].err, 0);
    assert_int_equal(msrv_token_fetches(e->srv), 2);
    expect_header(e, "tools/call", "Authorization: Bearer tok-1");
    free(r[0].msg);
    struct sy_mcp_pool_stats st;
    sy_mcp_pool_stats(e->p, &st);
    assert_int_equal(st.token_fetches, 2);
    env_free(e);
    /* bad client credentials: the calls fail with the token endpoint's answer */
    e = env_new(&o, "/mcp", SY_MCP_HTTP);
    e->s.auth_type = SY_MCP_AUTH_OAUTH2;
    e->s.token_url = e->token_url;
    e->s.client_id = "cid";
    e->s.client_secret = "wrong";
    call(e, &r[0], "tools/list", NULL, NULL);
    assert_int_not_equal(r[0].err, 0);
    assert_non_null(strstr(r[0].msg, "OAuth2"));
    assert_non_null(strstr(r[0].msg, "invalid_client"));
    free(r[0].msg);
    env_free(e);
}

static void t_oauth_expiry(void **state)
{
    (void)state;
    /* expires_in 30: cached 10 s at least (30 - 60 margin, floored); and
     * expires_in absent: 3600 */
    struct msrv_opts o = {.oauth = 1, .token_ttl = 30};
    struct env *e = env_new(&o, "/mcp", SY_MCP_HTTP);
    e->s.auth_type = SY_MCP_AUTH_OAUTH2;
    e->s.token_url = e->token_url;
    e->s.client_id = "cid";
    e->s.client_secret = "s&cret";
    struct res r;
    call(e, &r, "tools/list", NULL, NULL);
    assert_int_equal(r.err, 0);
    free(r.msg);
    call(e, &r, "tools/list", NULL, NULL);
    assert_int_equal(r.err, 0);
    free(r.msg);
    assert_int_equal(msrv_token_fetches(e->srv), 1);
    env_free(e);
    char *t;
    double ttl;
    char why[128];
    assert_int_equal(mcp_token_parse("{\"access_token\":\"a\"}", 20, &t, &ttl, why, sizeof why), 0);
    assert_true(ttl == 3600);
    free(t);
    assert_int_equal(mcp_token_parse("{\"access_token\":\"a\",\"expires_in\":\"120\"}", 39, &t, &ttl, why, sizeof why),
                     0);
    assert_true(ttl == 120);
    free(t);
    assert_int_equal(mcp_token_parse("{\"token\":\"a\"}", 13, &t, &ttl, why, sizeof why), -1);
    assert_int_equal(mcp_token_parse("{\"access_token\":\"a\\r\\nX: y\"}", 28, &t, &ttl, why, sizeof why), -1);
    assert_int_equal(mcp_token_parse("[1]", 3, &t, &ttl, why, sizeof why), -1);
}

/* ---- the old SSE transport ---- */

static void t_sse_transport(void **state)
{
    (void)state;
    struct env *e = env_new(NULL, "/sse", SY_MCP_SSE);
    struct res r[3];
    for (int i = 0; i < 3; i++)
        start(e, &r[i], "tools/call", ECHO_ARGS("over-sse"), NULL);
    for (int i = 0; i < 3; i++) {
        run_until(e, &r[i].done);
        if (r[i].err)
            fail_msg("%s", r[i].msg);
        assert_non_null(strstr(r[i].msg, "over-sse"));
        free(r[i].msg);
    }
    assert_int_equal(msrv_count(e->srv, "initialize"), 1);
    assert_int_equal(msrv_count(e->srv, "notifications/initialized"), 1);
    char *h = head_of(e, "tools/call");
    assert_non_null(strstr(h, "POST /messages?sid=1 "));
    free(h);
    /* the stream is lost: what is in flight fails, the next call reconnects */
    start(e, &r[0], "tools/call", "{\"name\":\"slow\",\"arguments\":{\"ms\":2000}}", NULL);
    wait_count(e, "tools/call", 4);
    msrv_drop_streams(e->srv);
    run_until(e, &r[0].done);
    assert_int_equal(r[0].err, SY_EUPRESET);
    free(r[0].msg);
    call(e, &r[1], "tools/call", ECHO_ARGS("back"), NULL);
    assert_int_equal(r[1].err, 0);
    assert_non_null(strstr(r[1].msg, "back"));
    free(r[1].msg);
    assert_int_equal(msrv_count(e->srv, "initialize"), 2);
    h = head_of(e, "tools/call");
    assert_non_null(strstr(h, "POST /messages?sid=2 "));
    free(h);
    env_free(e);
}

static void t_sse_foreign_endpoint(void **state)
{
    (void)state;
    struct msrv_opts o = {.endpoint_abs = "http://198.51.100.7/steal"};
    struct env *e = env_new(&o, "/sse", SY_MCP_SSE);
    struct res r;
    call(e, &r, "tools/list", NULL, NULL);
    assert_int_equal(r.err, SY_EUPPROTO);
    assert_non_null(strstr(r.msg, "endpoint"));
    free(r.msg);
    env_free(e);
}

static void t_url_resolve(void **state)
{
    (void)state;
    struct {
        const char *base, *ref, *want;
    } ok[] = {
        {"http://h:1/sse", "/messages?s=1", "http://h:1/messages?s=1"},
        {"http://h:1/a/sse", "messages?s=1", "http://h:1/a/messages?s=1"},
        {"http://h:1", "messages", "http://h:1/messages"},
        {"https://H:1/sse?x=1", "https://h:1/m", "https://h:1/m"},
        {"http://h/sse", "//h/m", "http://h/m"},
        {"http://h/sse?a=1", "?b=2", "http://h/sse?b=2"},
        {"http://h/sse", "/m#frag", "http://h/m"},
    };
    struct sy_buf b;
    sy_buf_init(&b, 8192);
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        if (mcp_url_resolve(ok[i].base, ok[i].ref, strlen(ok[i].ref), &b) != 0)
            fail_msg("refused: %s against %s", ok[i].ref, ok[i].base);
        assert_string_equal(b.p, ok[i].want);
    }
    const char *bad[] = {"http://other/m", "//other/m", "/m x", "/m\r\nX: y", "", "ftp://h/m", "https://h/m"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(mcp_url_resolve("http://h/sse", bad[i], strlen(bad[i]), &b), -1);
    sy_buf_free(&b);
}

/* ---- messages ---- */

static void t_msg_scan(void **state)
{
    (void)state;
    struct mcp_scan sc;
    const char *m = "{\"jsonrpc\":\"2.0\",\"result\":{\"a\":[1,2.5e3,\"x\\\"y\",true,null]},\"id\":42}";
    assert_int_equal(mcp_msg_scan(m, strlen(m), &sc), 0);
    assert_int_equal(sc.has_result, 1);
    assert_int_equal(mcp_id_u64(sc.id, sc.id_len), 42);
    m = " {\"method\":\"ping\",\"id\":\"s1\"} ";
    assert_int_equal(mcp_msg_scan(m, strlen(m), &sc), 0);
    assert_int_equal(sc.method_len, 6);
    assert_int_equal(mcp_id_u64(sc.id, sc.id_len), 0);
    const char *bad[] = {
        "",
        "[]",
        "{\"id\":1,\"id\":2,\"result\":{}}",
        "{\"id\":1,\"result\":{},}",
        "{\"id\":01,\"result\":{}}",
        "{\"id\":1,\"result\":{}} x",
        "{\"id\":1,\"result\":\"\x01\"}",
        "{\"id\":1,\"result\":[1 2]}",
        "{\"method\":1}",
        "{\"id\":1,\"result\":{\"a\":tru}}",
        "{\"id\":1,\"result\":-}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (mcp_msg_scan(bad[i], strlen(bad[i]), &sc) != -1)
            fail_msg("accepted: %s", bad[i]);
    /* nesting is bounded */
    char deep[600];
    size_t n = 0;
    n += (size_t)snprintf(deep, sizeof deep, "{\"result\":");
    for (int i = 0; i < 200; i++)
        deep[n++] = '[';
    for (int i = 0; i < 200; i++)
        deep[n++] = ']';
    deep[n++] = '}';
    assert_int_equal(mcp_msg_scan(deep, n, &sc), -1);
    assert_int_equal(mcp_id_u64("18446744073709551615", 20), 0);
    assert_int_equal(mcp_id_u64("1234567890123456789", 19), 1234567890123456789ull);
}

/* ---- lifecycle ---- */

static void t_cancel_and_close(void **state)
{
    (void)state;
    struct env *e = env_new(NULL, "/mcp", SY_MCP_HTTP);
    struct res r, r2;
    call(e, &r, "tools/list", NULL, NULL);
    free(r.msg);
    struct sy_mcp_op *op = start(e, &r, "tools/call", "{\"name\":\"slow\",\"arguments\":{\"ms\":2000}}", NULL);
    wait_count(e, "tools/call", 1);
    sy_mcp_cancel(op);
    run_for(e, 100);
    assert_int_equal(r.calls, 0); /* no callback after cancel */
    wait_count(e, "notifications/cancelled", 1);
    /* close with one pending: its callback, SY_ECANCELED */
    start(e, &r2, "tools/call", "{\"name\":\"slow\",\"arguments\":{\"ms\":2000}}", NULL);
    wait_count(e, "tools/call", 2);
    sy_mcp_pool_close(e->p);
    assert_int_equal(r2.calls, 1);
    assert_int_equal(r2.err, SY_ECANCELED);
    free(r2.msg);
    /* a closed pool takes nothing */
    struct sy_mcp_req q = {.s = &e->s, .method = "tools/list"};
    assert_null(sy_mcp_request(e->p, &q, done_cb, &r));
    sy_upool_close(e->up);
    uv_run(&e->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&e->loop), 0);
    msrv_stop(e->srv);
    free(e);
}

static void t_sync(void **state)
{
    (void)state;
    struct env *e = env_new(NULL, "/mcp", SY_MCP_HTTP);
    struct res r;
    call(e, &r, "tools/list", NULL, NULL);
    free(r.msg);
    start(e, &r, "tools/call", "{\"name\":\"slow\",\"arguments\":{\"ms\":2000}}", NULL);
    wait_count(e, "tools/call", 1);
    /* a set that still has the server: nothing happens */
    struct sy_mcp_set set = {.s = &e->s, .n = 1};
    sy_mcp_pool_sync(e->p, &set);
    run_for(e, 50);
    assert_int_equal(r.calls, 0);
    /* one without it: pending ops fail, the session is ended */
    struct sy_mcp_set none = {.n = 0};
    sy_mcp_pool_sync(e->p, &none);
    run_until(e, &r.done);
    assert_int_equal(r.err, SY_ECANCELED);
    free(r.msg);
    wait_count(e, "DELETE", 1);
    expect_header(e, "DELETE", "Mcp-Session-Id: sess-1");
    /* bad arguments */
    struct sy_mcp_req q = {.s = &e->s, .method = "tools/list", .params = "1", .params_len = 1};
    assert_null(sy_mcp_request(e->p, &q, done_cb, &r));
    q.params = NULL;
    q.method = "";
    assert_null(sy_mcp_request(e->p, &q, done_cb, &r));
    q.method = "tools/list";
    assert_null(sy_mcp_request(e->p, &q, NULL, &r));
    env_free(e);
}

/* ---- stdio (the child is this program, run with --stdio-server) ---- */

/* The stdio MCP server: one JSON-RPC message a line on stdin, answers on
 * stdout; each initialize is counted in the file $MSRV_COUNT. Tools: echo,
 * "crash" (exits without answering), "chatty" (a ping request and a
 * notification before the answer). */
static int stdio_server(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    const char *cf = getenv("MSRV_COUNT");
    setvbuf(stdout, NULL, _IOLBF, 0);
    while ((n = getline(&line, &cap, stdin)) > 0) {
        char *id = strstr(line, "\"id\":");
        char idv[64] = "";
        if (id)
            snprintf(idv, sizeof idv, "%.*s", (int)strcspn(id + 5, ",}"), id + 5);
        if (strstr(line, "\"method\":\"initialize\"")) {
            if (cf) {
                FILE *f = fopen(cf, "a");
                if (f) {
                    fputs("init\n", f);
                    fclose(f);
                }
            }
            printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                   "\"serverInfo\":{\"name\":\"child\"}}}\n",
                   idv);
        } else if (strstr(line, "\"method\":\"tools/call\"")) {
            if (strstr(line, "\"name\":\"crash\""))
                exit(3);
            if (strstr(line, "\"name\":\"chatty\""))
                printf("{\"jsonrpc\":\"2.0\",\"id\":\"c-1\",\"method\":\"ping\"}\n"
                       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n"
                       "not json at all\n");
            printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"from child "
                   "%d\"}]}}\n",
                   idv, (int)getpid());
        } else if (strstr(line, "\"result\":{}") && strstr(line, "\"c-1\"")) {
            /* our ping was answered */
        } else if (id && strstr(line, "\"method\"")) {
            printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n", idv);
        }
    }
    free(line);
    return 0;
}

static char self_exe[4096];

static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    int n = 0, ch;
    if (!f)
        return 0;
    while ((ch = fgetc(f)) != EOF)
        n += ch == '\n';
    fclose(f);
    return n;
}

static void t_stdio(void **state)
{
    (void)state;
    struct env *e = env_new(NULL, "/stdio", SY_MCP_STDIO);
    char cf[4200], envv[4300], cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        fail_msg("getcwd");
    snprintf(cf, sizeof cf, "%s/test_mcp_client.%d.count", cwd, (int)getpid());
    unlink(cf);
    snprintf(envv, sizeof envv, "MSRV_COUNT=%s", cf);
    char *args[] = {"--stdio-server"};
    char *envs[] = {envv};
    e->s.url = NULL;
    e->s.command = self_exe;
    e->s.args = args;
    e->s.nargs = 1;
    e->s.env = envs;
    e->s.nenv = 1;
    struct res r[3];
    for (int i = 0; i < 3; i++)
        start(e, &r[i], "tools/call", ECHO_ARGS("x"), NULL);
    for (int i = 0; i < 3; i++) {
        run_until(e, &r[i].done);
        if (r[i].err)
            fail_msg("%s", r[i].msg);
        assert_non_null(strstr(r[i].msg, "from child"));
        free(r[i].msg);
    }
    assert_int_equal(count_lines(cf), 1);
    /* the child's own requests are answered, noise is skipped */
    struct sy_mcp_req q = {.id = "5", .id_len = 1};
    call(e, &r[0], "tools/call", "{\"name\":\"chatty\"}", &q);
    assert_int_equal(r[0].err, 0);
    assert_non_null(strstr(r[0].msg, "\"id\":5,"));
    free(r[0].msg);
    /* the child dies mid-call: the call fails, the next one runs on a new child, initialized again */
    call(e, &r[0], "tools/call", "{\"name\":\"crash\"}", NULL);
    assert_int_equal(r[0].err, SY_EUPRESET);
    free(r[0].msg);
    struct sy_mcp_req q2 = {.timeout_s = 8};
    call(e, &r[1], "tools/call", ECHO_ARGS("y"), &q2);
    if (r[1].err)
        fail_msg("%s", r[1].msg);
    free(r[1].msg);
    assert_int_equal(count_lines(cf), 2);
    struct sy_mcp_pool_stats st;
    sy_mcp_pool_stats(e->p, &st);
    assert_int_equal(st.initializes, 2);
    assert_int_equal(st.reinitializes, 1);
    assert_true(st.spawns >= 2);
    unlink(cf);
    env_free(e);
    /* a stdio server from the database is never started */
    e = env_new(NULL, "/stdio-db", SY_MCP_STDIO);
    e->s.url = NULL;
    e->s.command = self_exe;
    e->s.from_db = 1;
    call(e, &r[0], "tools/list", NULL, NULL);
    assert_int_equal(r[0].err, SY_EUPCONNECT);
    assert_non_null(strstr(r[0].msg, "database"));
    free(r[0].msg);
    env_free(e);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--stdio-server"))
        return stdio_server();
    ssize_t sl = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    if (sl > 0)
        self_exe[sl] = 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_http_handshake_once),
        cmocka_unit_test(t_http_ids),
        cmocka_unit_test(t_http_sse_answers),
        cmocka_unit_test(t_http_reinit_after_404),
        cmocka_unit_test(t_http_timeout),
        cmocka_unit_test(t_http_cap),
        cmocka_unit_test(t_http_errors),
        cmocka_unit_test(t_http_bad_version),
        cmocka_unit_test(t_notify),
        cmocka_unit_test(t_auth_headers),
        cmocka_unit_test(t_auth_precedence),
        cmocka_unit_test(t_oauth),
        cmocka_unit_test(t_oauth_expiry),
        cmocka_unit_test(t_sse_transport),
        cmocka_unit_test(t_sse_foreign_endpoint),
        cmocka_unit_test(t_url_resolve),
        cmocka_unit_test(t_msg_scan),
        cmocka_unit_test(t_cancel_and_close),
        cmocka_unit_test(t_sync),
        cmocka_unit_test(t_stdio),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
