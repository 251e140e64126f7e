/* test_http.c - the server's HEAD handling and content negotiation
 * (http/server.h):
 *   - a HEAD request reaches the handler as a GET (r->head set) and its answer
 *     has the GET's status, headers and content-length but no body, for a
 *     one-shot answer and a streamed (chunked) one; the next pipelined request
 *     on the connection is read and answered in step;
 *   - sy_accept_pick: q values, specificity, order, wildcards, malformed input.
 * The server adopts one end of a socketpair; the test writes requests to the
 * other end and reads what comes back, running the loop a bounded number of
 * times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <http_parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "core/buf.h"
#include "http/server.h"

static int seen_head[8], seen_method[8], nseen;

static void limits(struct sy_server_limits *l, void *ud)
{
    (void)ud;
    memset(l, 0, sizeof *l);
    l->max_header_bytes = 8192;
    l->max_body_bytes = 1 << 16;
    l->header_timeout_ms = 5000;
    l->body_timeout_ms = 5000;
    l->keepalive_timeout_ms = 5000;
}

/* /stream answers chunked, everything else in one piece. */
static void handler(struct sy_req *r, void *ud)
{
    (void)ud;
    if (nseen < 8) {
        seen_head[nseen] = r->head;
        seen_method[nseen++] = r->method;
    }
    if (r->path.n == 7 && !memcmp(r->path.p, "/stream", 7)) {
        sy_resp_start(r, 200, "x-a: 1\r\n", 8, "text/event-stream");
        sy_resp_chunk(r, "data: one\n\n", 11);
        sy_resp_chunk(r, "data: two\n\n", 11);
        sy_resp_end(r);
        return;
    }
    sy_resp_simple(r, 200, "x-b: 2\r\n", 8, "application/json", "{\"ok\":true}", 11);
}

/* Write req to a fresh server connection, run the loop until `expect` bytes
 * or 2000 iterations, return what came back (malloc'd). */
static char *exchange(const char *req, size_t expect)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct sy_server *s = sy_server_new(&loop, handler, limits, NULL);
    assert_non_null(s);
    assert_int_equal(sy_server_adopt(s, sv[0]), 0);
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    assert_int_equal(write(sv[1], req, strlen(req)), (ssize_t)strlen(req));
    struct sy_buf out;
    sy_buf_init(&out, 1 << 20);
    char tmp[4096];
    for (int it = 0; it < 2000 && out.len < expect; it++) {
        uv_run(&loop, UV_RUN_NOWAIT);
        ssize_t n;
        while ((n = read(sv[1], tmp, sizeof tmp)) > 0)
            sy_buf_append(&out, tmp, (size_t)n);
        if (out.len < expect)
            usleep(1000);
    }
    /* anything more would arrive now */
    uv_run(&loop, UV_RUN_NOWAIT);
    ssize_t n;
    while ((n = read(sv[1], tmp, sizeof tmp)) > 0)
        sy_buf_append(&out, tmp, (size_t)n);
    close(sv[1]);
    sy_server_close_all(s);
    sy_server_close_handles(s);
    for (int it = 0; it < 1000 && uv_run(&loop, UV_RUN_NOWAIT); it++)
        ;
    uv_loop_close(&loop);
    free(s);
    sy_buf_append(&out, "", 1);
    return out.p;
}

static void head_simple(void **state)
{
    (void)state;
    nseen = 0;
    static const char get[] = "GET /x HTTP/1.1\r\nHost: h\r\n\r\n";
    char *g = exchange(get, 1);
    const char *gb = strstr(g, "\r\n\r\n");
    assert_non_null(gb);
    assert_string_equal(gb + 4, "{\"ok\":true}");
    assert_int_equal(seen_head[0], 0);

    /* HEAD, then a pipelined GET on the same connection */
    char *h = exchange("HEAD /x HTTP/1.1\r\nHost: h\r\n\r\nGET /x HTTP/1.1\r\nHost: h\r\n\r\n",
                       2 * (size_t)(gb - g + 4) + 11);
    assert_int_equal(nseen, 3);
    assert_int_equal(seen_head[1], 1);
    assert_int_equal(seen_method[1], HTTP_GET);
    assert_int_equal(seen_head[2], 0);
    /* the HEAD's answer is the GET's head, byte for byte (dates aside: none are sent) */
    size_t headlen = (size_t)(gb - g) + 4;
    assert_memory_equal(h, g, headlen);
    assert_true(strstr(g, "content-length: 11\r\n") != NULL);
    /* then directly the GET's whole answer */
    assert_string_equal(h + headlen, g);
    free(g);
    free(h);
}

static void head_streamed(void **state)
{
    (void)state;
    nseen = 0;
    char *g = exchange("GET /stream HTTP/1.1\r\nHost: h\r\n\r\n", 1);
    assert_true(strstr(g, "transfer-encoding: chunked\r\n") != NULL);
    assert_true(strstr(g, "data: two") != NULL);
    const char *gb = strstr(g, "\r\n\r\n");
    size_t headlen = (size_t)(gb - g) + 4;
    char *h =
        exchange("HEAD /stream HTTP/1.1\r\nHost: h\r\n\r\nGET /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
                 headlen + 60);
    assert_memory_equal(h, g, headlen); /* the same head, chunked included */
    /* no chunk, not even the last one: the next answer follows the head */
    assert_memory_equal(h + headlen, "HTTP/1.1 200 OK\r\n", 17);
    assert_null(strstr(h, "data: one"));
    assert_null(strstr(h, "0\r\n\r\n"));
    assert_true(strstr(h + headlen, "{\"ok\":true}") != NULL);
    free(g);
    free(h);
}

static void head_http10(void **state)
{
    (void)state;
    nseen = 0;
    /* HTTP/1.0: a streamed GET closes to end its body; a HEAD has none to end */
    char *h = exchange("HEAD /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /x HTTP/1.0\r\n\r\n", 120);
    assert_int_equal(nseen, 2);
    assert_null(strstr(h, "data: one"));
    assert_true(strstr(h, "{\"ok\":true}") != NULL);
    free(h);
}

static int pick(const char *accept)
{
    static const char *const types[] = {"text/html", "application/json"};
    return sy_accept_pick(accept, accept ? strlen(accept) : 0, types, 2);
}

static void accept_pick(void **state)
{
    (void)state;
    assert_int_equal(pick(NULL), 0);
    assert_int_equal(pick(""), 0);
    assert_int_equal(pick("*/*"), 0);
    assert_int_equal(pick("application/json"), 1);
    assert_int_equal(pick("APPLICATION/JSON; charset=utf-8"), 1);
    assert_int_equal(pick("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"), 0);
    assert_int_equal(pick("application/json, text/html"), 1); /* both named, q 1: the first listed */
    assert_int_equal(pick("text/html, application/json"), 0);
    assert_int_equal(pick("application/json, */*;q=0.1"), 1); /* named beats a wildcard */
    assert_int_equal(pick("*/*, application/json"), 1);
    assert_int_equal(pick("text/html;q=0.2, application/json;q=0.9"), 1);
    assert_int_equal(pick("text/html;q=0.9, application/*;q=0.95"), 1);
    assert_int_equal(pick("application/json;q=0"), 0); /* not acceptable */
    assert_int_equal(pick("text/*;q=0, application/json;q=0.001"), 1);
    assert_int_equal(pick("text/html;q=0, application/json;q=0"), 0); /* nothing: the default */
    assert_int_equal(pick("application/json;q=1.5"), 1);              /* clamped */
    assert_int_equal(pick("application/json;q=abc"), 0);              /* unreadable q: 0, not acceptable */
    assert_int_equal(pick(" , ;;, /, application/ , /json,application/json "), 1);
    assert_int_equal(pick("application/jsonx"), 0);
    assert_int_equal(pick("application"), 0);
    static const char *const one[] = {"nonsense"};
    assert_int_equal(sy_accept_pick("nonsense", 8, one, 1), 0);
    assert_int_equal(sy_accept_pick("x/y", 3, one, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(head_simple),
        cmocka_unit_test(head_streamed),
        cmocka_unit_test(head_http10),
        cmocka_unit_test(accept_pick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
