/* server.c - one worker's HTTP/1.1 server: accept, parse, limits, timers, writes.
 *
 * DESIGN. A connection is in one of four states:
 *   IDLE     between requests (keep-alive timer armed)
 *   HEAD     request line/headers arriving (header timer armed at first byte)
 *   BODY     body arriving (idle-body timer re-armed on every byte)
 *   SERVING  the handler owns the request; further bytes are buffered, not parsed
 * The parser is paused at each message end, so pipelined requests are served
 * one at a time, in order. Pipelining is bounded both ways (backpressure, never
 * a reset): reading stops while a request is served and the bytes buffered
 * behind it reach max_header_bytes + PIPELINE_CAP, and resumes when it ends;
 * the next pipelined request is held (SERVING with no request) while more than
 * PIPELINE_OUT_CAP of answers wait for a client that does not read them, and
 * served when the socket drains. Header fields, values and the URL are copied out of
 * the read buffer as http-parser reports them, so read buffers can be reused
 * at once. Writes copy their bytes (one malloc per write) and count queued
 * bytes for backpressure. A connection is freed only after its request ended
 * and both its uv handles are closed (deferred destruction as in libuv).
 */
#include "http/server.h"

#include <errno.h>
#include <http_parser.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netdb.h>

#include "core/clock.h"
#include "core/errors.h"
#include "core/hex.h"
#include "core/log.h"
#include "http/head.h"
#include "http/reply.h"

enum { ST_IDLE, ST_HEAD, ST_BODY, ST_SERVING };

#define MAX_HEADERS      128
#define PIPELINE_CAP     (256 * 1024)  /* bytes buffered while a request is served */
#define PIPELINE_OUT_CAP (1024 * 1024) /* unread answers before the next request waits */
/* Output buffer kept between flushes. A stream's head with its first event (~2 KB)
 * grows it; what a stream sends after that is a few hundred bytes per event, so a
 * larger buffer is released after its first deferred flush while the response is
 * still going, instead of being held for the rest of the stream (1.5 KB per
 * concurrent stream). Only once per response, so a stream of large events does not
 * allocate per event; a response that ends in the callback that wrote it (sy_resp_end
 * flushes at once) keeps the buffer for the connection's next response. */
#define OUT_KEEP 1024

struct sy_conn {
    uv_tcp_t tcp;
    uv_timer_t timer;
    struct sy_server *srv;
    struct sy_conn *prev, *next;
    http_parser parser;
    int state;
    int closing; /* close after the current response */
    int dead;    /* socket gone: drop writes */
    int close_started;
    int handles_open;
    int reading;
    int msg_done;    /* on_message_complete fired during this execute */
    int dispatching; /* inside the handler call of conn_parse's loop */
    int again;       /* the response ended inside dispatch and c->in holds more: loop */
    int parse_error; /* an error reply was already sent */
    int linger;      /* close by lingering: the client may still be sending */
    int lingering;   /* write side shut down, discarding input until EOF */
    int held;        /* next request waits for queued answers to drain (see writing) */
    uv_shutdown_t shut;
    struct sy_server_limits lim;
    struct sy_buf in;   /* unparsed bytes */
    struct sy_req *req; /* request being parsed or served */
    /* head accumulation */
    struct sy_buf url;
    struct sy_buf hraw;             /* "name\0value\0" pairs */
    uint32_t hoff[MAX_HEADERS * 2]; /* into hraw, whose cap is far below 4 GiB (1 KB less per connection) */
    size_t nh;                      /* number of fields started */
    int in_value;
    size_t head_bytes;
    uint64_t body_deadline; /* loop ms by which the whole body must have arrived; 0 = none */
    uint64_t deadline;      /* loop ms of the current state's timeout; 0 = none (see timers) */
    uint64_t timer_due;     /* loop ms the uv timer is set to fire at; 0 = not set */
    /* writes */
    struct sy_buf out; /* bytes collected this loop iteration (see writing) */
    struct sy_conn *flush_next;
    int in_flush;
    int gone_pending; /* a write failed: run on_client_gone from the check callback */
    int out_released; /* out was released once during this response (see OUT_KEEP) */
    size_t queued;
    size_t high_water;
    int over_high;
    void (*drain_cb)(struct sy_req *);
};

struct sy_server {
    uv_loop_t *loop;
    uv_tcp_t listener;
    int listening;
    sy_req_handler handler;
    sy_limits_cb limits;
    void *ud;
    struct sy_conn *conns;
    size_t nconns;
    int draining;
    void (*drain_done)(void *);
    void *drain_arg;
    uv_check_t check; /* flushes connections' output once per loop iteration */
    struct sy_conn *flush_head;
    char rbuf[65536]; /* shared read buffer: data is parsed or copied in read_cb */
    int rbuf_busy;
};

static http_parser_settings settings;
static void conn_close(struct sy_conn *c);
static void conn_parse(struct sy_conn *c, const char *p, size_t n);
static void conn_next(struct sy_conn *c);
static void throttle(struct sy_conn *c);
static void unschedule_flush(struct sy_conn *c);

/* ---- timers ---------------------------------------------------------- */

/* One timer per connection, set lazily (as nginx and h2o do): a state
 * change only records c->deadline; the uv timer is (re)started only when the
 * new deadline is earlier than the one it is set for. A timer that fires
 * early re-arms itself for the rest; one that fires with no deadline does
 * nothing. Callbacks inside http_parser_execute only record (set_deadline);
 * conn_parse syncs the timer once when it returns, so a request that arrives
 * whole in one read and is answered at once starts no timer at all. */
static void sync_timer(struct sy_conn *c);

static void on_timer(uv_timer_t *t)
{
    struct sy_conn *c = t->data;
    c->timer_due = 0;
    if (!c->deadline)
        return;
    if (uv_now(c->srv->loop) < c->deadline) {
        sync_timer(c);
        return;
    }
    c->deadline = 0;
    if (c->lingering) {
        conn_close(c);
        return;
    }
    switch (c->state) {
    case ST_IDLE: conn_close(c); break;
    case ST_HEAD:
    case ST_BODY: {
        if (!c->req) {
            conn_close(c);
            break;
        }
        const char *msg = c->state == ST_HEAD ? "Request timeout: the request head did not arrive in time"
                                              : "Request timeout: the request body did not arrive in time";
        c->closing = 1;
        c->parse_error = 1;
        c->state = ST_SERVING;
        if (c->reading) {
            uv_read_stop((uv_stream_t *)&c->tcp);
            c->reading = 0;
        }
        sy_reply_error(c->req, 408, "timeout", NULL, msg);
        break;
    }
    default: break;
    }
}

static void set_deadline(struct sy_conn *c, uint64_t ms)
{
    c->deadline = ms ? uv_now(c->srv->loop) + ms : 0;
}

static void sync_timer(struct sy_conn *c)
{
    if (!c->deadline || c->close_started)
        return;
    if (c->timer_due && c->timer_due <= c->deadline)
        return; /* fires first; on_timer re-checks */
    uint64_t now = uv_now(c->srv->loop);
    uv_timer_start(&c->timer, on_timer, c->deadline > now ? c->deadline - now : 1, 0);
    c->timer_due = c->deadline;
}

static void arm(struct sy_conn *c, uint64_t ms)
{
    set_deadline(c, ms);
    sync_timer(c);
}

/* ---- request objects --------------------------------------------------- */

static struct sy_req *req_new(struct sy_conn *c)
{
    struct sy_req *r = malloc(sizeof *r);
    if (!r)
        return NULL;
    memset(r, 0, offsetof(struct sy_req, arena));
    sy_arena_init(&r->arena);
    r->conn = c;
    sy_buf_init(&r->body, c->lim.max_body_bytes);
    r->t_start_ns = sy_now_ns();
    return r;
}

static void req_free(struct sy_req *r)
{
    sy_buf_free(&r->body);
    sy_arena_free(&r->arena);
    free(r);
}

/* ---- parser callbacks ------------------------------------------------------ */

/* ---- CORS ---------------------------------------------------------------
 *
 * As LiteLLM (Starlette's CORSMiddleware with allow_origins ["*"],
 * allow_credentials, allow_methods ["*"], allow_headers ["*"]), except that
 * simple responses echo the allowed Origin (with Vary: Origin) instead of
 * "*", so credentialed browser requests work too.
 *
 *   preflight: OPTIONS + Origin + Access-Control-Request-Method, any path
 *     allowed origin -> 200 "OK"
 *        access-control-allow-origin: <origin>      vary: Origin
 *        access-control-allow-credentials: true
 *        access-control-allow-methods: DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT
 *        access-control-allow-headers: <the request's Access-Control-Request-Headers>
 *        access-control-max-age: 600
 *     other origin   -> 400 "Disallowed CORS origin" (no CORS headers)
 *   any other response to an allowed Origin: allow-origin, allow-credentials, vary
 */
static int cors_allowed(const char *list, struct sy_str origin)
{
    if (!list)
        return 1;
    for (const char *p = list; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if ((n == 1 && *p == '*') || (n == origin.n && memcmp(p, origin.p, n) == 0))
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

static void cors_preflight(struct sy_req *r)
{
    if (!r->cors_origin.p) {
        static const char no[] = "Disallowed CORS origin";
        sy_resp_simple(r, 400, NULL, 0, "text/plain; charset=utf-8", no, sizeof no - 1);
        return;
    }
    struct sy_str rh = sy_req_header(r, "access-control-request-headers");
    struct sy_buf h;
    sy_buf_init(&h, 16384);
    SY_BUF_LIT(&h, "access-control-allow-methods: DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT\r\n"
                   "access-control-max-age: 600\r\n");
    if (rh.p && rh.n) {
        SY_BUF_LIT(&h, "access-control-allow-headers: ");
        sy_buf_append(&h, rh.p, rh.n);
        SY_BUF_LIT(&h, "\r\n");
    }
    sy_resp_simple(r, 200, h.p, h.len, "text/plain; charset=utf-8", "OK", 2);
    sy_buf_free(&h);
}

static int head_add(struct sy_conn *c, size_t n)
{
    c->head_bytes += n;
    /* http-parser's nread counts the raw head so far (request line, names,
     * values and the whitespace between them): that is the size limited */
    return c->head_bytes > c->lim.max_header_bytes || c->parser.nread > c->lim.max_header_bytes;
}

static void head_error(struct sy_conn *c, int status, const char *msg)
{
    char m[160];
    if (status == 413 && !msg) {
        snprintf(m, sizeof m, "Request size is too large. Max size is %.2f MB",
                 (double)c->lim.max_body_bytes / (1024.0 * 1024.0));
        msg = m;
    }
    c->parse_error = 1;
    c->closing = 1;
    c->linger = 1;
    c->state = ST_SERVING;
    c->deadline = 0;
    sy_reply_error(c->req, status, "invalid_request_error", NULL, msg);
}

static int on_message_begin(http_parser *p)
{
    struct sy_conn *c = p->data;
    c->req = req_new(c);
    if (!c->req)
        return -1;
    c->state = ST_HEAD;
    c->nh = 0;
    c->in_value = 0;
    c->head_bytes = 0;
    sy_buf_reset(&c->url);
    sy_buf_reset(&c->hraw);
    set_deadline(c, c->lim.header_timeout_ms);
    return 0;
}

static int on_url(http_parser *p, const char *at, size_t n)
{
    struct sy_conn *c = p->data;
    if (head_add(c, n) || sy_buf_append(&c->url, at, n)) {
        head_error(c, 431, "Request header fields too large");
        return -1;
    }
    return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t n)
{
    struct sy_conn *c = p->data;
    if (head_add(c, n)) {
        head_error(c, 431, "Request header fields too large");
        return -1;
    }
    if (c->in_value || c->nh == 0) {
        if (c->nh == MAX_HEADERS) {
            head_error(c, 431, "Too many request headers");
            return -1;
        }
        if (c->nh && sy_buf_append(&c->hraw, "", 1))
            goto big;
        c->hoff[2 * c->nh] = (uint32_t)c->hraw.len;
        c->hoff[2 * c->nh + 1] = UINT32_MAX;
        c->nh++;
        c->in_value = 0;
    }
    if (sy_buf_append(&c->hraw, at, n))
        goto big;
    return 0;
big:
    head_error(c, 431, "Request header fields too large");
    return -1;
}

static int on_header_value(http_parser *p, const char *at, size_t n)
{
    struct sy_conn *c = p->data;
    if (head_add(c, n)) {
        head_error(c, 431, "Request header fields too large");
        return -1;
    }
    if (!c->in_value) {
        if (sy_buf_append(&c->hraw, "", 1))
            goto big;
        c->hoff[2 * c->nh - 1] = (uint32_t)c->hraw.len;
        c->in_value = 1;
    }
    if (sy_buf_append(&c->hraw, at, n))
        goto big;
    return 0;
big:
    head_error(c, 431, "Request header fields too large");
    return -1;
}

static int on_headers_complete(http_parser *p)
{
    struct sy_conn *c = p->data;
    struct sy_req *r = c->req;
    if (p->nread > c->lim.max_header_bytes) {
        head_error(c, 431, "Request header fields too large");
        return -1;
    }
    if (c->nh && c->in_value == 0) { /* field without value */
        if (sy_buf_append(&c->hraw, "", 1)) {
            head_error(c, 431, "Request header fields too large");
            return -1;
        }
        c->hoff[2 * c->nh - 1] = (uint32_t)c->hraw.len;
    }
    /* copy URL and headers into the request's arena */
    char *u = sy_arena_strndup(&r->arena, c->url.p ? c->url.p : "", c->url.len);
    char *q = memchr(u, '?', c->url.len);
    if (q) {
        r->path = (struct sy_str){u, (size_t)(q - u)};
        r->query = (struct sy_str){q + 1, c->url.len - (size_t)(q - u) - 1};
    } else {
        r->path = (struct sy_str){u, c->url.len};
    }
    /* One spelling per route: trailing slashes are dropped ("/key/info/" is
     * "/key/info"; FastAPI's redirect_slashes sends LiteLLM's clients there
     * with a 307), so every check (the route table, allowed_routes, admin
     * permissions) sees the path that was matched. Nothing else is rewritten:
     * no percent-decoding ("/key%2Fgenerate"), no "//" or dot-segment folding,
     * case kept ("/KEY/generate"); such paths match no route (404). */
    while (r->path.n > 1 && r->path.p[r->path.n - 1] == '/')
        r->path.n--;
    char *h = c->hraw.len ? sy_arena_strndup(&r->arena, c->hraw.p, c->hraw.len) : NULL;
    r->headers = sy_arena_alloc(&r->arena, (c->nh ? c->nh : 1) * sizeof *r->headers);
    r->nheaders = c->nh;
    for (size_t i = 0; i < c->nh; i++) {
        size_t fo = c->hoff[2 * i], vo = c->hoff[2 * i + 1];
        size_t vend = (i + 1 < c->nh ? c->hoff[2 * (i + 1)] - 1 : c->hraw.len);
        r->headers[i].name = (struct sy_str){h + fo, vo - 1 - fo};
        /* trim trailing whitespace of the value */
        size_t vl = vend - vo;
        while (vl && (h[vo + vl - 1] == ' ' || h[vo + vl - 1] == '\t'))
            vl--;
        r->headers[i].value = (struct sy_str){h + vo, vl};
    }
    r->method = p->method;
    r->head = p->method == HTTP_HEAD;
    r->http_minor = p->http_minor;
    r->keep_alive = http_should_keep_alive(p);
    struct sy_str origin = sy_req_header(r, "origin");
    if (origin.p && origin.n && cors_allowed(c->lim.cors_origins, origin))
        r->cors_origin = origin;
    if ((p->flags & F_CONTENTLENGTH) && p->content_length > c->lim.max_body_bytes) {
        head_error(c, 413, NULL);
        return -1;
    }
    struct sy_str ex = sy_req_header(r, "expect");
    if (ex.p && SY_STR_CASEEQ(ex, "100-continue") && !c->dead) {
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        uv_buf_t b = uv_buf_init((char *)cont, sizeof cont - 1);
        uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    }
    c->state = ST_BODY;
    c->body_deadline = c->lim.body_total_timeout_ms ? uv_now(c->srv->loop) + c->lim.body_total_timeout_ms : 0;
    set_deadline(c, c->lim.body_timeout_ms);
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
    struct sy_conn *c = p->data;
    if (sy_buf_append(&c->req->body, at, n)) {
        head_error(c, 413, NULL);
        return -1;
    }
    /* idle gap timer, but never past the total body deadline */
    uint64_t ms = c->lim.body_timeout_ms;
    if (c->body_deadline) {
        uint64_t now = uv_now(c->srv->loop);
        uint64_t left = c->body_deadline > now ? c->body_deadline - now : 1;
        if (!ms || left < ms)
            ms = left;
    }
    set_deadline(c, ms);
    return 0;
}

static int on_message_complete(http_parser *p)
{
    struct sy_conn *c = p->data;
    c->msg_done = 1;
    c->state = ST_SERVING;
    c->deadline = 0;
    http_parser_pause(p, 1);
    return 0;
}

/* ---- the fast path ------------------------------------------------------- */

/* A whole request of the common shape (head.c) in p[0..n), read without
 * http-parser: the request gets what the callbacks above would have given
 * it (one arena copy of the head, names and values NUL-terminated in it; the
 * body copied once) and the connection ends up as after on_message_complete.
 * Returns the bytes consumed, 0 to let http-parser read them (not that shape,
 * head or body not complete, over a limit), or (size_t)-1 when an error reply
 * went out. Taken only from ST_IDLE, where http-parser waits for a new
 * message; as an accepted request is keep-alive, it still waits after. */
static size_t fast_request(struct sy_conn *c, const char *p, size_t n)
{
    struct sy_http_head h;
    size_t hl = sy_http_head_read(p, n, &h);
    if (!hl || hl > c->lim.max_header_bytes)
        return 0;
    size_t blen = h.clen > 0 ? (size_t)h.clen : 0;
    if (blen > c->lim.max_body_bytes || n - hl < blen)
        return 0;
    struct sy_req *r = req_new(c);
    if (!r)
        return 0;
    c->req = r;
    char *a = sy_arena_alloc(&r->arena, hl);
    memcpy(a, p, hl);
    char *u = a + h.url_off;
    u[h.url_len] = 0;
    char *q = memchr(u, '?', h.url_len);
    if (q) {
        r->path = (struct sy_str){u, (size_t)(q - u)};
        r->query = (struct sy_str){q + 1, h.url_len - (size_t)(q - u) - 1};
    } else {
        r->path = (struct sy_str){u, h.url_len};
    }
    while (r->path.n > 1 && r->path.p[r->path.n - 1] == '/') /* as on_headers_complete */
        r->path.n--;
    r->headers = sy_arena_alloc(&r->arena, (h.nh ? h.nh : 1) * sizeof *r->headers);
    r->nheaders = h.nh;
    for (unsigned i = 0; i < h.nh; i++) {
        const uint32_t *o = h.hoff[i];
        a[o[0] + o[1]] = 0; /* the ':' */
        a[o[2] + o[3]] = 0; /* trailing whitespace or the CR */
        r->headers[i].name = (struct sy_str){a + o[0], o[1]};
        r->headers[i].value = (struct sy_str){a + o[2], o[3]};
    }
    r->method = h.method;
    r->head = h.method == HTTP_HEAD;
    r->http_minor = 1;
    r->keep_alive = 1;
    struct sy_str origin = sy_req_header(r, "origin");
    if (origin.p && origin.n && cors_allowed(c->lim.cors_origins, origin))
        r->cors_origin = origin;
    if (blen && sy_buf_append(&r->body, p + hl, blen)) {
        c->state = ST_BODY;
        head_error(c, 413, NULL);
        return (size_t)-1;
    }
    c->msg_done = 1;
    c->state = ST_SERVING;
    c->deadline = 0;
    return hl + blen;
}

/* ---- dispatch ---------------------------------------------------------- */

static void dispatch(struct sy_conn *c)
{
    struct sy_req *r = c->req;
    r->t_ready_ns = sy_now_ns();
    if (!r->body.p)
        sy_buf_append(&r->body, "", 0);
    if (r->method == HTTP_OPTIONS && sy_req_header(r, "origin").p &&
        sy_req_header(r, "access-control-request-method").p) {
        cors_preflight(r);
        return;
    }
    if (r->head) /* answered as GET would be, without the body (sy_resp_*) */
        r->method = HTTP_GET;
    c->srv->handler(r, c->srv->ud);
}

/* Parse bytes p[0..n) (which may alias c->in); leftovers stay in c->in.
 * Pipelined requests answered synchronously are served by this loop, never by
 * recursion: a response that ends inside dispatch only sets c->again. */
static void conn_parse_loop(struct sy_conn *c, const char *p, size_t n);

static void conn_parse(struct sy_conn *c, const char *p, size_t n)
{
    conn_parse_loop(c, p, n);
    sync_timer(c);
}

static void conn_parse_loop(struct sy_conn *c, const char *p, size_t n)
{
    size_t off = 0; /* bytes of c->in consumed by this loop when parsing from it */
    int from_in = (p == c->in.p);
    for (;;) {
        c->msg_done = 0;
        if (c->state == ST_IDLE && n) {
            /* limits are taken per request from the current config */
            c->srv->limits(&c->lim, c->srv->ud);
        }
        size_t done = 0;
        enum http_errno e = HPE_OK;
        if (c->state == ST_IDLE && n)
            done = fast_request(c, p, n);
        if (done == (size_t)-1) {
            if (from_in)
                sy_buf_reset(&c->in);
            return;
        }
        if (!done) {
            done = http_parser_execute(&c->parser, &settings, p, n);
            e = HTTP_PARSER_ERRNO(&c->parser);
            if (c->msg_done)
                http_parser_pause(&c->parser, 0);
        }
        if (c->msg_done) {
            /* keep the unparsed rest for after this response */
            if (from_in) {
                off += done;
            } else if (done < n) {
                if (sy_buf_append(&c->in, p + done, n - done))
                    c->closing = 1;
                from_in = 1;
                off = 0;
            }
            c->again = 0;
            c->dispatching = 1;
            dispatch(c);
            c->dispatching = 0;
            if (c->again && from_in && off < c->in.len && !c->close_started) {
                c->again = 0;
                p = c->in.p + off;
                n = c->in.len - off;
                continue;
            }
            c->again = 0;
            if (from_in)
                sy_buf_consume(&c->in, off);
            if (c->state == ST_IDLE && !c->close_started && !c->in.len)
                arm(c, c->lim.keepalive_timeout_ms);
            throttle(c); /* what is left behind a request now served may be a lot */
            return;
        }
        if (from_in)
            sy_buf_reset(&c->in);
        if (e != HPE_OK && e != HPE_PAUSED) {
            if (c->parse_error || c->state == ST_SERVING)
                return; /* a reply is already going out */
            if (!c->req)
                c->req = req_new(c);
            if (!c->req) {
                conn_close(c);
                return;
            }
            if (e == HPE_HEADER_OVERFLOW) {
                head_error(c, 431, "Request header fields too large");
                return;
            }
            char msg[160];
            snprintf(msg, sizeof msg, "Malformed HTTP request: %s", http_errno_description(e));
            head_error(c, 400, msg);
        }
        return;
    }
}

/* ---- reading --------------------------------------------------------------- */

/* Read-side backpressure: while a request is served, stop reading once the
 * pipelined bytes buffered behind it reach the bound; conn_next resumes. With
 * reads stopped at the bound, c->in (cap: bound + one read) never overflows.
 * A lingering close keeps reading (it discards input until EOF). */
static void throttle(struct sy_conn *c)
{
    if (c->reading && !c->lingering && c->state == ST_SERVING && c->in.len >= c->lim.max_header_bytes + PIPELINE_CAP) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = 0;
    }
}

static void alloc_cb(uv_handle_t *h, size_t sug, uv_buf_t *b)
{
    struct sy_conn *c = h->data;
    struct sy_server *s = c->srv;
    if (!s->rbuf_busy) {
        s->rbuf_busy = 1;
        *b = uv_buf_init(s->rbuf, sizeof s->rbuf);
    } else {
        *b = uv_buf_init(malloc(16384), 16384);
        if (!b->base)
            b->len = 0;
    }
}

static void release_rbuf(struct sy_server *s, const uv_buf_t *b)
{
    if (b->base == s->rbuf)
        s->rbuf_busy = 0;
    else
        free(b->base);
}

static void on_client_gone(struct sy_conn *c)
{
    c->dead = 1;
    if (c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = 0;
    }
    if (c->req && c->state == ST_SERVING && !c->parse_error) {
        if (c->req->on_abort) {
            sy_req_abort_cb cb = c->req->on_abort;
            c->req->on_abort = NULL;
            cb(c->req); /* ends the request now or later */
        }
        /* without on_abort the handler is about to end the request itself */
        return;
    }
    conn_close(c);
}

static void read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *b)
{
    struct sy_conn *c = st->data;
    if (c->lingering) { /* discard until the client closes or the timer fires */
        release_rbuf(c->srv, b);
        if (nread < 0)
            conn_close(c);
        return;
    }
    if (nread < 0) {
        release_rbuf(c->srv, b);
        on_client_gone(c);
        return;
    }
    if (nread == 0) {
        release_rbuf(c->srv, b);
        return;
    }
    if (c->state == ST_SERVING || c->in.len) {
        /* busy, or leftovers: append and (if not busy) parse from c->in */
        int rc = sy_buf_append(&c->in, b->base, (size_t)nread);
        release_rbuf(c->srv, b);
        if (rc) { /* cannot happen while throttle() stops reads at the bound; be safe */
            c->closing = 1;
            uv_read_stop(st);
            c->reading = 0;
            return;
        }
        throttle(c);
        if (c->state != ST_SERVING)
            conn_parse(c, c->in.p, c->in.len);
        return;
    }
    conn_parse(c, b->base, (size_t)nread);
    release_rbuf(c->srv, b);
}

/* ---- lifecycle ------------------------------------------------------------- */

static void conn_free(struct sy_conn *c)
{
    struct sy_server *s = c->srv;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    s->nconns--;
    unschedule_flush(c);
    sy_buf_free(&c->out);
    sy_buf_free(&c->in);
    sy_buf_free(&c->url);
    sy_buf_free(&c->hraw);
    free(c);
    if (s->draining && s->nconns == 0 && s->drain_done) {
        void (*d)(void *) = s->drain_done;
        s->drain_done = NULL;
        d(s->drain_arg);
    }
}

static void close_cb(uv_handle_t *h)
{
    struct sy_conn *c = h->data;
    if (--c->handles_open == 0)
        conn_free(c);
}

static void conn_close(struct sy_conn *c)
{
    if (c->close_started)
        return;
    if (c->req && c->state == ST_SERVING) {
        /* the handler still owns the request: close when it ends */
        c->dead = 1;
        c->closing = 1;
        if (c->req->on_abort) {
            sy_req_abort_cb cb = c->req->on_abort;
            c->req->on_abort = NULL;
            cb(c->req);
        }
        return;
    }
    c->close_started = 1;
    if (c->req) {
        req_free(c->req);
        c->req = NULL;
    }
    uv_close((uv_handle_t *)&c->tcp, close_cb);
    uv_close((uv_handle_t *)&c->timer, close_cb);
}

/* Set up a connection whose tcp handle is initialised and connected. */
static void conn_setup(struct sy_server *s, struct sy_conn *c)
{
    uv_tcp_nodelay(&c->tcp, 1);
    uv_timer_init(s->loop, &c->timer);
    c->timer.data = c;
    c->handles_open = 2;
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    s->limits(&c->lim, s->ud);
    sy_buf_init(&c->in, c->lim.max_header_bytes + PIPELINE_CAP + sizeof s->rbuf);
    sy_buf_init(&c->url, c->lim.max_header_bytes + 1);
    sy_buf_init(&c->hraw, c->lim.max_header_bytes + MAX_HEADERS * 2 + 2);
    sy_buf_init(&c->out, 4u << 20);
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    s->nconns++;
    c->state = ST_IDLE;
    arm(c, c->lim.keepalive_timeout_ms);
    if (s->draining) {
        conn_close(c);
        return;
    }
    c->reading = 1;
    uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb);
}

static void on_connection(uv_stream_t *ls, int status)
{
    struct sy_server *s = ls->data;
    if (status < 0)
        return;
    struct sy_conn *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->srv = s;
    uv_tcp_init(s->loop, &c->tcp);
    c->tcp.data = c;
    if (uv_accept(ls, (uv_stream_t *)&c->tcp) != 0) {
        c->handles_open = 1;
        c->close_started = 1;
        s->nconns++;
        c->next = s->conns;
        if (s->conns)
            s->conns->prev = c;
        s->conns = c;
        uv_close((uv_handle_t *)&c->tcp, close_cb);
        return;
    }
    conn_setup(s, c);
}

int sy_server_adopt(struct sy_server *s, int fd)
{
    struct sy_conn *c = calloc(1, sizeof *c);
    if (!c)
        return SY_ENOMEM;
    c->srv = s;
    uv_tcp_init(s->loop, &c->tcp);
    c->tcp.data = c;
    int rc = uv_tcp_open(&c->tcp, fd);
    if (rc != 0) {
        c->handles_open = 1;
        c->close_started = 1;
        s->nconns++;
        c->next = s->conns;
        if (s->conns)
            s->conns->prev = c;
        s->conns = c;
        uv_close((uv_handle_t *)&c->tcp, close_cb);
        return rc;
    }
    conn_setup(s, c);
    return 0;
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    struct sy_conn *c = req->data;
    if (status < 0)
        conn_close(c);
}

/* Lingering close (as nginx's lingering_close): after an error reply sent
 * while the client may still be writing its body, shut down our side and
 * drain its input for a while, so the client reads the reply instead of a
 * reset. */
static void start_linger(struct sy_conn *c)
{
    c->lingering = 1;
    c->shut.data = c;
    if (uv_shutdown(&c->shut, (uv_stream_t *)&c->tcp, on_shutdown) != 0) {
        conn_close(c);
        return;
    }
    if (!c->reading) {
        c->reading = 1;
        uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb);
    }
    arm(c, 2000);
}

/* After a response: next pipelined request, keep-alive wait, or close. */
static void conn_next(struct sy_conn *c)
{
    if (c->linger && !c->dead && !c->lingering) {
        start_linger(c);
        return;
    }
    if (c->dead || c->closing || c->srv->draining) {
        if (c->queued == 0)
            conn_close(c);
        else
            c->closing = 1; /* closed by the last write callback */
        return;
    }
    c->parse_error = 0;
    if (c->queued + c->out.len > PIPELINE_OUT_CAP) {
        /* the client is not reading its answers: serve nothing more until
         * they drain (write_cb); bytes it sends meanwhile buffer up to the
         * read bound, then reading stops too */
        c->held = 1;
        c->state = ST_SERVING;
        c->deadline = 0;
        throttle(c);
        return;
    }
    c->state = ST_IDLE;
    if (!c->reading) {
        c->reading = 1;
        uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb);
    }
    if (c->dispatching) { /* ended inside conn_parse's loop: it continues */
        c->again = 1;
        return;
    }
    if (c->in.len)
        conn_parse(c, c->in.p, c->in.len);
    else
        arm(c, c->lim.keepalive_timeout_ms);
}

/* ---- writing ----------------------------------------------------------------
 *
 * Bytes for a connection collect in c->out and go to the socket once per I/O
 * callback that produced them: sy_server_flush() runs after each upstream read
 * (the upstream pool's after_read hook) and from the server's uv_check handle
 * (after all I/O callbacks of the iteration, before the loop blocks again). An
 * upstream read that carries 20 SSE events, or a stream's head and its first
 * event, becomes one write. The check handle alone is not enough: when 1024
 * descriptors are ready at once libuv polls again without leaving its poll
 * phase, up to 48 times, so under load a stream's bytes would wait for tens of
 * thousands of other events (every stream stalled at once, for 0.5 s and more,
 * at 2304 concurrent streams on one worker). A write first tries uv_try_write;
 * only what the kernel does not take is copied into a queued uv_write. Write
 * errors are never reported from inside a sy_resp_* call: the connection is
 * marked and the client-gone path (on_abort) runs from the next flush.
 */

struct wreq {
    uv_write_t w;
    struct sy_conn *c;
    size_t len;
    char data[];
};

static void write_cb(uv_write_t *w, int status)
{
    struct wreq *wr = (struct wreq *)w;
    struct sy_conn *c = wr->c;
    c->queued -= wr->len;
    free(wr);
    if (status < 0 && !c->dead) {
        on_client_gone(c);
        return;
    }
    if (c->over_high && c->queued <= c->high_water / 4 && c->req && c->drain_cb) {
        c->over_high = 0;
        c->drain_cb(c->req);
    }
    if (c->held && c->queued <= PIPELINE_OUT_CAP / 2 && !c->close_started) {
        c->held = 0;
        conn_next(c);
        return;
    }
    if (c->queued == 0 && !c->out.len && !c->req && !c->lingering && (c->closing || c->dead || c->srv->draining) &&
        !c->close_started)
        conn_close(c);
}

static void schedule_flush(struct sy_conn *c)
{
    if (c->in_flush)
        return;
    c->in_flush = 1;
    c->flush_next = c->srv->flush_head;
    c->srv->flush_head = c;
}

static void unschedule_flush(struct sy_conn *c)
{
    if (!c->in_flush)
        return;
    struct sy_conn **pp = &c->srv->flush_head;
    while (*pp && *pp != c)
        pp = &(*pp)->flush_next;
    if (*pp)
        *pp = c->flush_next;
    c->in_flush = 0;
}

/* Write the concatenation of bufs now (try_write, then queue the rest). */
static void write_bufs(struct sy_conn *c, uv_buf_t *b, unsigned nb)
{
    if (c->dead || c->close_started)
        return;
    size_t total = 0, done = 0;
    for (unsigned i = 0; i < nb; i++)
        total += b[i].len;
    if (!total)
        return;
    if (c->queued == 0) {
        int w = uv_try_write((uv_stream_t *)&c->tcp, b, nb);
        if (w > 0)
            done = (size_t)w;
        else if (w < 0 && w != UV_EAGAIN && w != UV_ENOSYS) {
            c->dead = 1;
            c->gone_pending = 1;
            schedule_flush(c);
            return;
        }
    }
    if (done == total)
        return;
    size_t rem = total - done;
    struct wreq *wr = malloc(sizeof *wr + rem);
    if (!wr) {
        c->dead = 1;
        c->gone_pending = 1;
        schedule_flush(c);
        return;
    }
    char *o = wr->data;
    size_t skip = done;
    for (unsigned i = 0; i < nb; i++) {
        size_t l = b[i].len;
        if (skip >= l) {
            skip -= l;
            continue;
        }
        memcpy(o, b[i].base + skip, l - skip);
        o += l - skip;
        skip = 0;
    }
    wr->c = c;
    wr->len = rem;
    uv_buf_t ub = uv_buf_init(wr->data, (unsigned)rem);
    c->queued += rem;
    if (uv_write(&wr->w, (uv_stream_t *)&c->tcp, &ub, 1, write_cb) != 0) {
        c->queued -= rem;
        free(wr);
        c->dead = 1;
        c->gone_pending = 1;
        schedule_flush(c);
    }
}

static void conn_flush(struct sy_conn *c)
{
    if (!c->out.len)
        return;
    uv_buf_t b = uv_buf_init(c->out.p, (unsigned)c->out.len);
    write_bufs(c, &b, 1);
    sy_buf_reset(&c->out);
}

/* Append bytes to the connection's output for this iteration. */
static void conn_out(struct sy_conn *c, const char *p, size_t n)
{
    if (c->dead || c->close_started || !n)
        return;
    if (sy_buf_append(&c->out, p, n) != 0) { /* over the cap: write what we have, then this */
        conn_flush(c);
        sy_buf_reset(&c->out); /* the refusal is handled: clear the buffer's sticky error */
        uv_buf_t b = uv_buf_init((char *)p, (unsigned)n);
        write_bufs(c, &b, 1);
        return;
    }
    if (c->out.len >= 65536)
        conn_flush(c);
    else
        schedule_flush(c);
}

void sy_server_flush(struct sy_server *s)
{
    while (s->flush_head) {
        struct sy_conn *c = s->flush_head;
        s->flush_head = c->flush_next;
        c->in_flush = 0;
        if (c->close_started)
            continue;
        if (c->gone_pending) {
            c->gone_pending = 0;
            sy_buf_reset(&c->out);
            c->dead = 0; /* let on_client_gone run its course */
            on_client_gone(c);
            continue;
        }
        conn_flush(c);
        if (c->out.size > OUT_KEEP && c->req && !c->out_released) {
            /* a response still going (a stream): write_bufs copied what the kernel did not take */
            sy_buf_free(&c->out);
            c->out_released = 1; /* once per response: a stream of large events keeps its buffer */
        }
    }
}

static void on_check(uv_check_t *h)
{
    sy_server_flush(h->data);
}

static const char *reason(int st)
{
    switch (st) {
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 499: return "Client Closed Request";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Unknown";
    }
}

/* Append a literal or a view to the head being built (bounded by cap). */
#define HEAD_PUT(o, n, cap, src, len)     \
    do {                                  \
        size_t l_ = (len);                \
        if ((n) + l_ < (cap)) {           \
            memcpy((o) + (n), (src), l_); \
            (n) += l_;                    \
        }                                 \
    } while (0)
#define HEAD_LIT(o, n, cap, lit) HEAD_PUT(o, n, cap, lit, sizeof(lit) - 1)

/* Decimal digits of v into t (at least 24 bytes); returns the start. */
static char *fmt_u64(char *t, uint64_t v)
{
    char *e = t + 23;
    *e = 0;
    do {
        *--e = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return e;
}

/* The status line and the server's own header lines (no printf: this runs
 * for every response). */
static size_t format_head(char *out, size_t cap, struct sy_req *r, int status, const char *ctype, long long clen,
                          int chunked, int close)
{
    size_t n = 0;
    char t[24];
    const char *rs = reason(status);
    HEAD_LIT(out, n, cap, "HTTP/1.1 ");
    char *d = fmt_u64(t, (uint64_t)(status > 0 ? status : 500));
    HEAD_PUT(out, n, cap, d, (size_t)(t + 23 - d));
    HEAD_LIT(out, n, cap, " ");
    HEAD_PUT(out, n, cap, rs, strlen(rs));
    HEAD_LIT(out, n, cap, "\r\ncontent-type: ");
    HEAD_PUT(out, n, cap, ctype, strlen(ctype));
    HEAD_LIT(out, n, cap, "\r\n");
    if (clen >= 0) {
        HEAD_LIT(out, n, cap, "content-length: ");
        d = fmt_u64(t, (uint64_t)clen);
        HEAD_PUT(out, n, cap, d, (size_t)(t + 23 - d));
        HEAD_LIT(out, n, cap, "\r\n");
    }
    if (chunked)
        HEAD_LIT(out, n, cap, "transfer-encoding: chunked\r\n");
    if (close)
        HEAD_LIT(out, n, cap, "connection: close\r\n");
    else if (r->http_minor == 0)
        HEAD_LIT(out, n, cap, "connection: keep-alive\r\n");
    if (r->cors_origin.p && r->cors_origin.n < 1024) {
        HEAD_LIT(out, n, cap, "access-control-allow-origin: ");
        HEAD_PUT(out, n, cap, r->cors_origin.p, r->cors_origin.n);
        HEAD_LIT(out, n, cap, "\r\naccess-control-allow-credentials: true\r\nvary: Origin\r\n");
    }
    return n;
}

static int want_close(struct sy_req *r)
{
    struct sy_conn *c = r->conn;
    return !r->keep_alive || c->closing || c->srv->draining;
}

static void req_finish(struct sy_req *r)
{
    struct sy_conn *c = r->conn;
    r->resp_done = 1;
    c->out_released = 0;
    c->req = NULL;
    c->drain_cb = NULL;
    c->over_high = 0;
    if (!r->keep_alive)
        c->closing = 1;
    req_free(r);
    conn_next(c);
}

void sy_resp_simple(struct sy_req *r, int status, const char *extra, size_t extra_len, const char *ctype,
                    const char *body, size_t body_len)
{
    struct sy_conn *c = r->conn;
    int close = want_close(r);
    char head[1800];
    size_t hn = format_head(head, sizeof head, r, status, ctype, (long long)body_len, 0, close);
    r->status = status;
    r->resp_started = 1;
    r->bytes_out = r->head ? 0 : body_len;
    if (close)
        c->closing = 1;
    conn_flush(c); /* keep order behind anything still pending */
    uv_buf_t b[4] = {uv_buf_init(head, (unsigned)hn), uv_buf_init((char *)extra, (unsigned)extra_len),
                     uv_buf_init("\r\n", 2), uv_buf_init((char *)body, (unsigned)body_len)};
    write_bufs(c, b, r->head ? 3 : 4); /* HEAD: the GET's content-length, no body */
    req_finish(r);
}

void sy_resp_start(struct sy_req *r, int status, const char *extra, size_t extra_len, const char *ctype)
{
    struct sy_conn *c = r->conn;
    int chunked = r->http_minor >= 1;
    int close = want_close(r) || (!chunked && !r->head); /* HEAD: no body, nothing to delimit */
    if (close)
        c->closing = 1;
    char head[1800];
    size_t hn = format_head(head, sizeof head, r, status, ctype, -1, chunked, close);
    r->status = status;
    r->resp_started = 1;
    r->resp_chunked = chunked;
    conn_out(c, head, hn);
    conn_out(c, extra, extra_len);
    conn_out(c, "\r\n", 2);
}

size_t sy_resp_chunk(struct sy_req *r, const char *p, size_t n)
{
    struct sy_conn *c = r->conn;
    if (!n || r->head) /* HEAD: the body is never sent */
        return c->queued + c->out.len;
    r->bytes_out += n;
    if (r->resp_chunked) {
        char sz[24];
        char *e = sz + sizeof sz, *b = e;
        *--b = '\n';
        *--b = '\r';
        b = sy_hex_uint_rev(b, n);
        conn_out(c, b, (size_t)(e - b));
        conn_out(c, p, n);
        conn_out(c, "\r\n", 2);
    } else {
        conn_out(c, p, n);
    }
    size_t q = c->queued + c->out.len;
    if (c->high_water && q > c->high_water)
        c->over_high = 1;
    return q;
}

void sy_resp_set_drain_cb(struct sy_req *r, void (*cb)(struct sy_req *), size_t high_water)
{
    r->conn->drain_cb = cb;
    r->conn->high_water = high_water;
}

size_t sy_resp_queued(const struct sy_req *r)
{
    return r->conn->queued + r->conn->out.len;
}

void sy_resp_end(struct sy_req *r)
{
    struct sy_conn *c = r->conn;
    if (r->resp_started && r->resp_chunked && !c->dead && !r->head)
        conn_out(c, "0\r\n\r\n", 5);
    conn_flush(c);
    req_finish(r);
}

/* ---- public ------------------------------------------------------------- */

struct sy_str sy_req_header(const struct sy_req *r, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < r->nheaders; i++)
        if (sy_str_caseeq(r->headers[i].name, name, n))
            return r->headers[i].value;
    return SY_STR_NULL;
}

int sy_req_peer(const struct sy_req *r, char *out, size_t cap)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    if (!r->conn || uv_tcp_getpeername(&r->conn->tcp, (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET6)
        return uv_ip6_name((struct sockaddr_in6 *)&ss, out, cap) == 0 ? 0 : -1;
    if (ss.ss_family == AF_INET)
        return uv_ip4_name((struct sockaddr_in *)&ss, out, cap) == 0 ? 0 : -1;
    return -1;
}

struct sy_server *sy_server_new(uv_loop_t *loop, sy_req_handler h, sy_limits_cb lim, void *ud)
{
    static int inited;
    if (!inited) { /* settings is constant; racing writers store the same values */
        settings.on_message_begin = on_message_begin;
        settings.on_url = on_url;
        settings.on_header_field = on_header_field;
        settings.on_header_value = on_header_value;
        settings.on_headers_complete = on_headers_complete;
        settings.on_body = on_body;
        settings.on_message_complete = on_message_complete;
        /* our own limit (head_add) is the configured one; http-parser's is
         * only a backstop at the largest value we accept */
        http_parser_set_max_header_size(SY_MAX_HEADER_BYTES_MAX + 4096);
        inited = 1;
    }
    struct sy_server *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->loop = loop;
    uv_check_init(loop, &s->check);
    s->check.data = s;
    uv_check_start(&s->check, on_check);
    uv_unref((uv_handle_t *)&s->check);
    s->handler = h;
    s->limits = lim;
    s->ud = ud;
    return s;
}

int sy_server_listen(struct sy_server *s, const char *host, int port)
{
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int rc = getaddrinfo(host, ps, &hints, &ai);
    if (rc != 0)
        return -EINVAL;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        freeaddrinfo(ai);
        return -errno;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 1024) != 0) {
        int e = errno;
        close(fd);
        freeaddrinfo(ai);
        return -e;
    }
    freeaddrinfo(ai);
    uv_tcp_init(s->loop, &s->listener);
    s->listener.data = s;
    if ((rc = uv_tcp_open(&s->listener, fd)) != 0)
        return rc;
    if ((rc = uv_listen((uv_stream_t *)&s->listener, 1024, on_connection)) != 0)
        return rc;
    s->listening = 1;
    return 0;
}

void sy_server_drain(struct sy_server *s, void (*done)(void *), void *arg)
{
    s->draining = 1;
    s->drain_done = done;
    s->drain_arg = arg;
    if (s->listening) {
        uv_close((uv_handle_t *)&s->listener, NULL);
        s->listening = 0;
    }
    struct sy_conn *c = s->conns, *nx;
    for (; c; c = nx) {
        nx = c->next;
        if (c->state == ST_IDLE && !c->in.len)
            conn_close(c);
        else
            c->closing = 1;
    }
    if (s->nconns == 0 && s->drain_done) {
        s->drain_done = NULL;
        done(arg);
    }
}

void sy_server_close_all(struct sy_server *s)
{
    struct sy_conn *c = s->conns, *nx;
    for (; c; c = nx) {
        nx = c->next;
        on_client_gone(c);
        if (!c->close_started && !c->req)
            conn_close(c);
    }
}

size_t sy_server_nconns(const struct sy_server *s)
{
    return s->nconns;
}

void sy_server_close_handles(struct sy_server *s)
{
    if (!uv_is_closing((uv_handle_t *)&s->check))
        uv_close((uv_handle_t *)&s->check, NULL);
    if (s->listening) {
        uv_close((uv_handle_t *)&s->listener, NULL);
        s->listening = 0;
    }
}

/* ---- query strings and percent-encoding ----------------------------------- */

size_t sy_pct_decode(const char *s, size_t n, char *out, size_t cap, int plus_space)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        int c = (unsigned char)s[i];
        if (c == '+' && plus_space)
            c = ' ';
        else if (c == '%' && i + 2 < n && sy_hex_val(s[i + 1]) >= 0 && sy_hex_val(s[i + 2]) >= 0) {
            c = sy_hex_val(s[i + 1]) * 16 + sy_hex_val(s[i + 2]);
            i += 2;
        }
        out[o++] = (char)c;
    }
    out[o] = 0;
    return o;
}

const char *sy_query_get(const char *q, size_t qn, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    char key[128];
    if (!cap || !q)
        return NULL;
    const char *e = q + qn;
    while (q < e) {
        const char *amp = memchr(q, '&', (size_t)(e - q));
        size_t len = amp ? (size_t)(amp - q) : (size_t)(e - q);
        const char *eq = memchr(q, '=', len);
        size_t kl = eq ? (size_t)(eq - q) : len;
        sy_pct_decode(q, kl, key, sizeof key, 1);
        if (strlen(key) == nl && memcmp(key, name, nl) == 0) {
            if (eq)
                sy_pct_decode(eq + 1, len - kl - 1, out, cap, 1);
            else
                out[0] = 0;
            return out;
        }
        q += len;
        if (q < e)
            q++; /* the '&' */
    }
    return NULL;
}

/* ---- content negotiation ---------------------------------------------------
 *
 * RFC 9110 §12.5.1: each candidate type gets the q of the most specific range
 * that matches it (type/subtype over type/<star> over <star>/<star>; case-
 * insensitive; parameters other than q ignored); the highest q wins. On a tie
 * a candidate named by a range of its own beats one matched by a wildcard, and
 * among those the one the client listed first wins; else the first candidate
 * (the server's preference). No header, or nothing acceptable: the first. */

/* q of one media range's parameters p[0..n) (after the type): 1000ths. */
static int accept_q(const char *p, size_t n)
{
    int q = 1000;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != ';')
            continue;
        size_t j = i + 1;
        while (j < n && (p[j] == ' ' || p[j] == '\t'))
            j++;
        if (j + 2 > n || (p[j] != 'q' && p[j] != 'Q') || p[j + 1] != '=')
            continue;
        j += 2;
        int v = 0, scale = 1000, frac = 0;
        if (j < n && (p[j] == '0' || p[j] == '1')) {
            v = (p[j] - '0') * 1000;
            for (j++; j < n && (p[j] == '.' || (p[j] >= '0' && p[j] <= '9')); j++) {
                if (p[j] == '.') {
                    frac = 1;
                } else if (frac && scale > 1) {
                    scale /= 10;
                    v += (p[j] - '0') * scale;
                }
            }
        }
        q = v > 1000 ? 1000 : v;
    }
    return q;
}

static int ci_eq(const char *a, size_t an, const char *b, size_t bn)
{
    if (an != bn)
        return 0;
    for (size_t i = 0; i < an; i++) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z')
            x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = (char)(y - 'A' + 'a');
        if (x != y)
            return 0;
    }
    return 1;
}

int sy_accept_pick(const char *accept, size_t n, const char *const *types, int ntypes)
{
    if (!accept || !n || ntypes <= 0)
        return 0;
    int best = 0, best_q = -1, best_spec = -1;
    size_t best_pos = (size_t)-1;
    for (int t = 0; t < ntypes; t++) {
        const char *ty = types[t], *sl = strchr(ty, '/');
        if (!sl)
            continue;
        size_t tl = (size_t)(sl - ty), sbl = strlen(sl + 1);
        int q = -1, spec = -1; /* spec: 2 exact, 1 type/<star>, 0 <star>/<star> */
        size_t pos = (size_t)-1;
        size_t i = 0;
        while (i < n) {
            size_t re = i; /* this range is accept[i..re) */
            while (re < n && accept[re] != ',')
                re++;
            while (i < re && (accept[i] == ' ' || accept[i] == '\t'))
                i++;
            size_t me = i; /* the media type: accept[i..me) */
            while (me < re && accept[me] != ';')
                me++;
            size_t pe = me; /* its parameters: accept[me..re) */
            while (me > i && (accept[me - 1] == ' ' || accept[me - 1] == '\t'))
                me--;
            size_t ms = i;
            while (ms < me && accept[ms] != '/')
                ms++;
            if (ms < me) {
                const char *mt = accept + i, *st = accept + ms + 1;
                size_t mtl = ms - i, msl = me - ms - 1;
                int s = -1;
                if (ci_eq(mt, mtl, ty, tl) && ci_eq(st, msl, sl + 1, sbl))
                    s = 2;
                else if (ci_eq(mt, mtl, ty, tl) && msl == 1 && *st == '*')
                    s = 1;
                else if (mtl == 1 && *mt == '*' && msl == 1 && *st == '*')
                    s = 0;
                if (s > spec) {
                    spec = s;
                    q = accept_q(accept + pe, re - pe);
                    pos = i;
                }
            }
            i = re + 1;
        }
        if (q <= 0)
            continue; /* not acceptable */
        int better = q > best_q || (q == best_q && spec == 2 && best_spec < 2) ||
                     (q == best_q && spec == 2 && best_spec == 2 && pos < best_pos);
        if (better) {
            best = t;
            best_q = q;
            best_spec = spec;
            best_pos = pos;
        }
    }
    return best;
}
