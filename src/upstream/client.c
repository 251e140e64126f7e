/* client.c - the request/connection state machine of the upstream client.
 *
 *   sy_ureq_start ─▶ idle conn of the origin? ──yes──▶ send ─┐
 *                         │ no                               │
 *                         ▼                                  ▼
 *   RESOLVING (DNS cache miss) ─▶ CONNECTING ─▶ HANDSHAKE (https) ─▶ ACTIVE
 *                                                                    │ response complete,
 *                                        IDLE (origin's LIFO) ◀──────┘ keep-alive, body sent
 *
 * One uv_timer per connection serves whichever timeout is current (connect,
 * first byte, idle gap, pooled idle), set lazily (timer_arm): a timeout only
 * moves a deadline unless it is earlier than the timer's, and the timer
 * re-arms itself when it fires early.
 * Reads land in the pool's shared buffer and are parsed at once (http-parser
 * is streaming), so nothing is buffered per connection. Errors are reported
 * on the next loop turn (pool.c); a finished response is reported directly.
 * A callback may cancel its own request: every return from user code checks
 * whether the connection is closing before touching anything again.
 */
#include <openssl/err.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "upstream/up_int.h"

static const http_parser_settings settings;
static void conn_connect(struct sy__conn *c);
static void conn_send(struct sy__conn *c);
static void on_timer(uv_timer_t *t);

static uint64_t to_ms(double s)
{
    return s <= 0 ? 0 : (uint64_t)(s * 1000.0 + 0.999);
}

/* ---- connection lifetime ------------------------------------------------ */

static void conn_free(struct sy__conn *c)
{
    struct sy_upool *p = c->pool;
    if (c->ssl) {
        /* Mark the TLS shutdown done so OpenSSL keeps the session resumable
         * (an unclean SSL_free would invalidate the origin's saved ticket). */
        SSL_set_shutdown(c->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
        SSL_free(c->ssl); /* frees both BIOs */
    }
    free(c);
    p->nconns--;
    sy__pool_maybe_free(p);
}

static void on_handle_closed(uv_handle_t *h)
{
    struct sy__conn *c = h->data;
    if (--c->nhandles == 0 && !c->gai_pending)
        conn_free(c);
}

void sy__conn_close(struct sy__conn *c)
{
    if (c->state == C_CLOSING)
        return;
    sy__conn_unlink(c);
    c->state = C_CLOSING;
    c->req = NULL;
    if (c->gai_pending)
        uv_cancel((uv_req_t *)&c->gai);
    uv_close((uv_handle_t *)&c->timer, on_handle_closed);
    if (!c->tcp_reopening)
        uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
}

/* Detach the request, close the connection, report err next turn. */
static void conn_fail(struct sy__conn *c, int err)
{
    struct sy_ureq *r = c->req;
    c->req = NULL;
    sy__conn_close(c);
    if (r)
        sy__req_defer(r, err);
}

static void conn_open(struct sy_ureq *r);

/* The connection died (EOF, reset, write error) while r was on it. */
static void conn_broken(struct sy__conn *c, int err)
{
    struct sy_ureq *r = c->req;
    if (r && c->reused && !r->got_byte && !r->retried) {
        /* Stale keep-alive race: the server closed as we sent. Once, on a fresh socket. */
        c->req = NULL;
        sy__conn_close(c);
        r->retried = 1;
        r->conn = NULL;
        r->pool->stats.retries++;
        conn_open(r);
        return;
    }
    conn_fail(c, err);
}

/* ms capped so the timer fires no later than r's total deadline (r may be NULL). */
static uint64_t cap_total(struct sy__conn *c, const struct sy_ureq *r, uint64_t ms)
{
    if (!r || !r->total_at)
        return ms;
    uint64_t now = uv_now(c->pool->loop);
    uint64_t left = r->total_at > now ? r->total_at - now : 1;
    return !ms || ms > left ? left : ms;
}

/* The lazy T_IDLE deadline after a read at `now`: the idle gap, capped by the total deadline. */
static uint64_t idle_deadline(const struct sy_ureq *r, uint64_t now)
{
    uint64_t d = r->it_ms ? now + r->it_ms : UINT64_MAX;
    return r->total_at && r->total_at < d ? r->total_at : d;
}

/* Lazy, as the server's connection timer: a new timeout only records its kind
 * and deadline; the uv timer is (re)started only when the deadline is earlier
 * than the one it is set for (a pooled connection's idle timer, set when the
 * last response ended, usually fires after the next request's first-byte and
 * idle deadlines, so a request on it starts no timer). A timer that fires
 * early re-arms itself for the rest; one that fires with none set does
 * nothing. */
static void timer_set(struct sy__conn *c, uint64_t now)
{
    uv_timer_start(&c->timer, on_timer, c->deadline > now ? c->deadline - now : 1, 0);
    c->timer_due = c->deadline;
}

static void timer_arm(struct sy__conn *c, enum sy__ctimer kind, uint64_t ms, uv_timer_cb cb)
{
    (void)cb;
    if (kind != T_POOLIDLE && kind != T_NONE)
        ms = cap_total(c, c->req, ms);
    c->tkind = kind;
    if (kind == T_NONE || !ms) {
        c->tkind = T_NONE;
        return;
    }
    uint64_t now = uv_now(c->pool->loop);
    c->deadline = now + ms;
    if (c->timer_due && c->timer_due <= c->deadline)
        return; /* fires first; on_timer re-checks */
    timer_set(c, now);
}

static void on_timer(uv_timer_t *t)
{
    struct sy__conn *c = t->data;
    c->timer_due = 0;
    if (c->tkind == T_NONE)
        return;
    uint64_t now = uv_now(c->pool->loop);
    if (now < c->deadline) {
        timer_set(c, now);
        return;
    }
    if (c->tkind == T_POOLIDLE) {
        sy__conn_close(c);
        return;
    }
    c->tkind = T_NONE;
    conn_fail(c, SY_EUPTIMEOUT);
}

static struct sy__conn *conn_new(struct sy_upool *p, struct sy__origin *o)
{
    struct sy__conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->pool = p;
    c->origin = o;
    uv_tcp_init(p->loop, &c->tcp);
    uv_timer_init(p->loop, &c->timer);
    c->tcp.data = c->timer.data = c;
    c->nhandles = 2;
    c->state = C_CONNECTING;
    p->nconns++;
    sy__busy_add(p, c);
    return c;
}

static void on_gai(uv_getaddrinfo_t *g, int status, struct addrinfo *res)
{
    struct sy__conn *c = g->data;
    c->gai_pending = 0;
    if (c->state == C_CLOSING) {
        uv_freeaddrinfo(res);
        if (c->nhandles == 0)
            conn_free(c);
        return;
    }
    struct sy__origin *o = c->origin;
    if (status < 0 || !res) {
        uv_freeaddrinfo(res);
        conn_fail(c, SY_EDNS);
        return;
    }
    unsigned n = 0;
    for (struct addrinfo *a = res; a && n < SY__UP_MAXADDR; a = a->ai_next) {
        if (a->ai_family != AF_INET && a->ai_family != AF_INET6)
            continue;
        memcpy(&o->addrs[n], a->ai_addr, a->ai_addrlen);
        if (a->ai_family == AF_INET)
            ((struct sockaddr_in *)&o->addrs[n])->sin_port = htons(o->port);
        else
            ((struct sockaddr_in6 *)&o->addrs[n])->sin6_port = htons(o->port);
        n++;
    }
    uv_freeaddrinfo(res);
    if (!n) {
        conn_fail(c, SY_EDNS);
        return;
    }
    o->naddr = n;
    o->dns_expire = uv_now(c->pool->loop) + SY__UP_DNS_TTL_MS;
    c->state = C_CONNECTING;
    conn_connect(c);
}

static void conn_read_start(struct sy__conn *c);

static void on_connect(uv_connect_t *cr, int status)
{
    struct sy__conn *c = cr->data;
    if (c->state == C_CLOSING)
        return;
    if (status < 0) {
        if (c->addr_i + 1 < c->origin->naddr) {
            c->addr_i++;
            conn_connect(c);
        } else {
            if (!c->origin->is_ip) /* resolve again next time: the address may have moved */
                c->origin->dns_expire = 0;
            conn_fail(c, SY_EUPCONNECT);
        }
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    conn_read_start(c);
    if (!c->origin->tls) {
        conn_send(c);
        return;
    }
    c->state = C_HANDSHAKE;
    int rc = sy__tls_conn_init(c);
    if (rc == 0)
        rc = sy__tls_handshake(c);
    if (rc < 0)
        conn_fail(c, rc == SY_ENOMEM ? SY_ENOMEM : SY_ETLS);
}

static void on_tcp_reopened(uv_handle_t *h)
{
    struct sy__conn *c = h->data;
    c->tcp_reopening = 0;
    if (c->state == C_CLOSING) {
        on_handle_closed(h);
        return;
    }
    uv_tcp_init(c->pool->loop, &c->tcp);
    conn_connect(c);
}

static void conn_connect(struct sy__conn *c)
{
    if (c->creq.data) { /* a failed connect leaves the socket unusable: reopen it first */
        c->creq.data = NULL;
        c->tcp_reopening = 1;
        uv_close((uv_handle_t *)&c->tcp, on_tcp_reopened);
        return;
    }
    c->creq.data = c;
    c->pool->stats.connects++;
    int rc = uv_tcp_connect(&c->creq, &c->tcp, (struct sockaddr *)&c->origin->addrs[c->addr_i], on_connect);
    if (rc < 0)
        on_connect(&c->creq, rc);
}

/* Start a fresh connection for r (never fails synchronously toward the caller). */
static void conn_open(struct sy_ureq *r)
{
    struct sy_upool *p = r->pool;
    struct sy__origin *o = r->origin;
    struct sy__conn *c = conn_new(p, o);
    if (!c) {
        sy__req_defer(r, SY_ENOMEM);
        return;
    }
    c->req = r;
    r->conn = c;
    timer_arm(c, T_CONNECT, r->ct_ms, on_timer);
    if (o->naddr && uv_now(p->loop) < o->dns_expire) {
        conn_connect(c);
        return;
    }
    static const struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    c->state = C_RESOLVING;
    c->gai.data = c;
    p->stats.dns_lookups++;
    if (uv_getaddrinfo(p->loop, &c->gai, on_gai, o->host, NULL, &hints) < 0) {
        conn_fail(c, SY_EDNS);
        return;
    }
    c->gai_pending = 1;
}

/* ---- writing ------------------------------------------------------------ */

static void on_write(uv_write_t *w, int status)
{
    sy__conn_wrote(w->data, status);
}

void sy__conn_wrote(struct sy__conn *c, int status)
{
    c->wpending--;
    if (c->state == C_CLOSING || status == UV_ECANCELED)
        return;
    if (status < 0 && c->req)
        conn_broken(c, SY_EUPRESET);
}

/* Write synchronously when the socket takes it all (the usual case): no
 * uv_write_t, no completion callback, and none of the epoll_ctl that libuv
 * does after every queued write. Only a remainder is queued. */
static int plain_write(struct sy__conn *c, uv_buf_t *b, unsigned n)
{
    uv_stream_t *s = (uv_stream_t *)&c->tcp;
    int w = uv_try_write(s, b, n);
    if (w < 0 && w != UV_EAGAIN)
        return w;
    size_t done = w < 0 ? 0 : (size_t)w;
    unsigned i = 0;
    while (i < n && done >= b[i].len)
        done -= b[i++].len;
    if (i == n)
        return 0;
    uv_buf_t keep = b[i]; /* uv_write copies the array: adjust, queue, restore */
    b[i].base += done;
    b[i].len -= done;
    c->wreq.data = c;
    int rc = uv_write(&c->wreq, s, b + i, n - i, on_write);
    b[i] = keep;
    if (rc == 0)
        c->wpending++;
    return rc;
}

static void conn_send(struct sy__conn *c)
{
    struct sy_ureq *r = c->req;
    c->state = C_ACTIVE;
    c->msg_done = 0;
    http_parser_init(&c->parser, HTTP_RESPONSE);
    c->parser.data = c;
    r->got_byte = r->head_done = 0;
    timer_arm(c, T_FIRSTBYTE, r->fbt_ms, on_timer);
    if (r->paused)
        uv_read_stop((uv_stream_t *)&c->tcp);
    int rc;
    if (c->ssl) {
        rc = sy__tls_write(c, r->bufs, r->nbufs);
    } else {
        rc = plain_write(c, r->bufs, r->nbufs);
    }
    r->sent = 1;
    if (rc < 0)
        conn_broken(c, rc == SY_ETLS ? SY_ETLS : SY_EUPRESET);
}

/* ---- reading ------------------------------------------------------------ */

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
    struct sy__conn *c = h->data;
    *b = uv_buf_init(c->pool->rbuf, sizeof c->pool->rbuf);
}

/* The response is complete: pool or close the connection, then report. */
static void msg_complete(struct sy__conn *c, int extra)
{
    struct sy_ureq *r = c->req;
    int keep = !extra && http_should_keep_alive(&c->parser) && c->wpending == 0 && r->sent;
    c->req = NULL;
    r->conn = NULL;
    if (keep) {
        c->reused = 1;
        if (r->paused) /* idle connections always read, to notice the server closing */
            conn_read_start(c);
        sy__idle_push(c);
        if (c->state == C_IDLE)
            timer_arm(c, T_POOLIDLE, to_ms(c->pool->opts.idle_timeout_s), on_timer);
    } else {
        sy__conn_close(c);
    }
    r->cbs.on_done(r->ud, 0);
    sy__req_recycle(r);
}

/* Parse n response bytes. Returns 1 when the connection was finished with
 * (closed, failed, or the response completed), else 0. */
static int feed(struct sy__conn *c, const char *p, size_t n, int more)
{
    struct sy_ureq *r = c->req;
    if (!r) { /* bytes on an idle connection: protocol violation */
        sy__conn_close(c);
        return 1;
    }
    int first = !r->got_byte;
    r->got_byte = 1;
    if (c->tkind == T_IDLE && r->it_ms) /* lazy: only the deadline moves (a total one never does) */
        c->deadline = idle_deadline(r, uv_now(c->pool->loop));
    if (first) {
        /* The usual head, whole in the first read: read it here (head.c) and give
         * http-parser a minimal head with the same status and framing. */
        struct sy__rhead h;
        size_t hl = sy__head_parse(p, n, &h);
        if (hl)
            sy_buf_reset(&r->rh);
        if (hl && sy_buf_append(&r->rh, p, hl) == 0) {
            r->nh = h.nh;
            memcpy(r->hoff, h.hoff, h.nh * sizeof h.hoff[0]);
            char syn[160];
            size_t sl = sy__head_synth(&h, syn, sizeof syn);
            r->fast = 1;
            size_t sp = http_parser_execute(&c->parser, &settings, syn, sl);
            r->fast = 0;
            if (c->state == C_CLOSING)
                return 1;
            enum http_errno e0 = HTTP_PARSER_ERRNO(&c->parser);
            if (e0 == HPE_PAUSED) { /* complete with its head (Content-Length: 0, 204, 304) */
                http_parser_pause(&c->parser, 0);
                msg_complete(c, hl < n || more);
                return 1;
            }
            if (e0 != HPE_OK || sp != sl) {
                conn_fail(c, SY_EUPPROTO);
                return 1;
            }
            p += hl;
            n -= hl;
            if (!n)
                return 0;
        }
    }
    size_t np = http_parser_execute(&c->parser, &settings, p, n);
    if (c->state == C_CLOSING)
        return 1;
    enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
    if (e == HPE_PAUSED) {
        http_parser_pause(&c->parser, 0);
        msg_complete(c, np < n || more);
        return 1;
    }
    if (e != HPE_OK) {
        conn_fail(c, SY_EUPPROTO);
        return 1;
    }
    return 0;
}

/* The peer closed (EOF) or the socket failed. */
static void conn_eof(struct sy__conn *c, int err)
{
    struct sy_ureq *r = c->req;
    if (!r) {
        sy__conn_close(c);
        return;
    }
    if (c->state == C_HANDSHAKE) {
        conn_fail(c, SY_ETLS);
        return;
    }
    if (r->got_byte && err == UV_EOF) {
        /* A close-delimited body ends here; anything else is cut short. */
        http_parser_execute(&c->parser, &settings, NULL, 0);
        if (c->state == C_CLOSING)
            return;
        if (HTTP_PARSER_ERRNO(&c->parser) == HPE_PAUSED) {
            http_parser_pause(&c->parser, 0);
            msg_complete(c, 1);
            return;
        }
    }
    conn_broken(c, SY_EUPRESET);
}

static void tls_read(struct sy__conn *c, const char *p, size_t n)
{
    if (BIO_write(c->rbio, p, (int)n) != (int)n) {
        conn_fail(c, SY_ENOMEM);
        return;
    }
    if (c->state == C_HANDSHAKE) {
        int rc = sy__tls_handshake(c);
        if (rc < 0) {
            conn_fail(c, SY_ETLS);
            return;
        }
        if (rc == 0)
            return;
        conn_send(c);
        if (c->state != C_ACTIVE)
            return;
    }
    char *tb = c->pool->tbuf;
    for (;;) {
        int got = SSL_read(c->ssl, tb, (int)sizeof c->pool->tbuf);
        if (got <= 0) {
            int e = SSL_get_error(c->ssl, got);
            if (sy__tls_flush(c) < 0) {
                conn_eof(c, UV_ECONNRESET);
                return;
            }
            if (e == SSL_ERROR_WANT_READ)
                return;
            if (e == SSL_ERROR_ZERO_RETURN) {
                conn_eof(c, UV_EOF);
                return;
            }
            ERR_clear_error();
            if (c->req)
                conn_fail(c, SY_ETLS);
            else
                sy__conn_close(c);
            return;
        }
        if (feed(c, tb, (size_t)got, SSL_pending(c->ssl) > 0))
            return;
    }
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *b)
{
    struct sy__conn *c = s->data;
    struct sy_upool *p = c->pool; /* outlives c: freed only after every handle closed */
    if (nread == 0 || c->state == C_CLOSING)
        return;
    if (nread < 0)
        conn_eof(c, (int)nread);
    else if (c->ssl)
        tls_read(c, b->base, (size_t)nread);
    else
        feed(c, b->base, (size_t)nread, 0);
    if (p->opts.after_read)
        p->opts.after_read(p->opts.after_read_arg);
}

static void conn_read_start(struct sy__conn *c)
{
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

/* ---- http-parser callbacks --------------------------------------------- */

static int hp_begin(http_parser *hp)
{
    struct sy__conn *c = hp->data;
    struct sy_ureq *r = c->req;
    if (r->fast)
        return 0; /* head.c filled the headers */
    sy_buf_reset(&r->rh);
    r->nh = 0;
    r->last_value = 0;
    return 0;
}

static int hp_field(http_parser *hp, const char *at, size_t n)
{
    struct sy__conn *c = hp->data;
    struct sy_ureq *r = c->req;
    if (r->fast)
        return 0;
    if (r->nh == 0 || r->last_value) {
        if (r->nh == SY__UP_MAXHDR)
            return -1;
        uint32_t *h = r->hoff[r->nh++];
        h[0] = (uint32_t)r->rh.len;
        h[1] = h[2] = h[3] = 0;
        r->last_value = 0;
    }
    if (sy_buf_append(&r->rh, at, n))
        return -1;
    r->hoff[r->nh - 1][1] += (uint32_t)n;
    return 0;
}

static int hp_value(http_parser *hp, const char *at, size_t n)
{
    struct sy__conn *c = hp->data;
    struct sy_ureq *r = c->req;
    if (r->fast)
        return 0;
    if (!r->nh)
        return -1;
    uint32_t *h = r->hoff[r->nh - 1];
    if (!r->last_value) {
        h[2] = (uint32_t)r->rh.len;
        r->last_value = 1;
    }
    if (sy_buf_append(&r->rh, at, n))
        return -1;
    h[3] += (uint32_t)n;
    return 0;
}

static int hp_headers(http_parser *hp)
{
    struct sy__conn *c = hp->data;
    struct sy_ureq *r = c->req;
    if (hp->status_code / 100 == 1)
        return 0; /* interim response: no body, the real one follows */
    r->head_done = 1;
    timer_arm(c, r->it_ms || r->total_at ? T_IDLE : T_NONE, r->it_ms, on_timer);
    c->deadline = idle_deadline(r, uv_now(c->pool->loop));
    struct sy_uheader hv[SY__UP_MAXHDR];
    const char *base = r->rh.p;
    for (unsigned i = 0; i < r->nh; i++) {
        hv[i].name = base + r->hoff[i][0];
        hv[i].name_len = r->hoff[i][1];
        hv[i].value = base + r->hoff[i][2];
        hv[i].value_len = r->hoff[i][3];
    }
    if (!r->cbs.on_head)
        return 0;
    if (r->cbs.on_head(r->ud, hp->status_code, hv, r->nh)) {
        if (c->state != C_CLOSING)
            sy_ureq_cancel(r);
        return -1;
    }
    return c->state == C_CLOSING ? -1 : r->head_req ? 1 : 0; /* 1: no body follows (HEAD) */
}

static int hp_body(http_parser *hp, const char *at, size_t n)
{
    struct sy__conn *c = hp->data;
    struct sy_ureq *r = c->req;
    if (!r->cbs.on_body)
        return 0;
    if (r->cbs.on_body(r->ud, at, n)) {
        if (c->state != C_CLOSING)
            sy_ureq_cancel(r);
        return -1;
    }
    return c->state == C_CLOSING ? -1 : 0;
}

static int hp_complete(http_parser *hp)
{
    if (hp->status_code / 100 == 1)
        return 0;
    http_parser_pause(hp, 1);
    return 0;
}

static const http_parser_settings settings = {
    .on_message_begin = hp_begin,
    .on_header_field = hp_field,
    .on_header_value = hp_value,
    .on_headers_complete = hp_headers,
    .on_body = hp_body,
    .on_message_complete = hp_complete,
};

/* ---- public API --------------------------------------------------------- */

static int build_head(struct sy_ureq *r, const struct sy_ureq_opts *o, const struct sy__url *u, size_t body_len)
{
    struct sy_buf *b = &r->head;
    sy_buf_reset(b);
    const char *m = o->method ? o->method : "GET";
    r->head_req = strcmp(m, "HEAD") == 0;
    int rc = sy_buf_puts(b, m);
    rc |= SY_BUF_LIT(b, " ");
    if (u->path_len == 0 || u->path[0] != '/')
        rc |= SY_BUF_LIT(b, "/");
    rc |= sy_buf_append(b, u->path, u->path_len);
    rc |= SY_BUF_LIT(b, " HTTP/1.1\r\nHost: ");
    rc |= sy_buf_append(b, u->auth, u->auth_len);
    rc |= SY_BUF_LIT(b, "\r\n");
    if (o->headers && o->headers_len) {
        rc |= sy_buf_append(b, o->headers, o->headers_len);
        if (o->headers_len < 2 || memcmp(o->headers + o->headers_len - 2, "\r\n", 2))
            rc |= SY_BUF_LIT(b, "\r\n");
    }
    if (body_len || (strcmp(m, "GET") && strcmp(m, "HEAD") && strcmp(m, "DELETE"))) {
        rc |= SY_BUF_LIT(b, "Content-Length: ");
        rc |= sy_buf_u64(b, body_len);
        rc |= SY_BUF_LIT(b, "\r\n");
    }
    rc |= SY_BUF_LIT(b, "Connection: keep-alive\r\n\r\n");
    return rc ? SY_ENOSPC : 0;
}

static struct sy_ureq *req_alloc(struct sy_upool *p)
{
    struct sy_ureq *r = p->free_reqs;
    if (r) {
        p->free_reqs = r->next;
        p->nfree--;
        struct sy_buf h = r->head, rh = r->rh;
        memset(r, 0, offsetof(struct sy_ureq, hoff));
        r->head = h;
        r->rh = rh;
        memset(&r->nh, 0, sizeof *r - offsetof(struct sy_ureq, nh));
        return r;
    }
    r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    sy_buf_init(&r->head, SY__UP_HEAD_CAP);
    sy_buf_init(&r->rh, SY__UP_RHEAD_CAP);
    return r;
}

/* sy__url_parse through the pool's small cache (slot by the string's address,
 * hit by its text): a deployment's URL is one fixed string, so a request
 * costs a compare instead of a parse (~0.5k instructions). */
static int url_parse(struct sy_upool *p, const char *url, struct sy__url *u)
{
    size_t n = strlen(url);
    struct sy__urlc *e = &p->urlc[((uintptr_t)url >> 4) % SY__UP_URLC];
    if (n && e->n == n && memcmp(e->s, url, n) == 0) {
        *u = e->u;
        u->host = url + (e->u.host - e->s);
        u->auth = url + (e->u.auth - e->s);
        u->path = url + (e->u.path - e->s);
        return 0;
    }
    int rc = sy__url_parse(url, u);
    if (rc == 0 && n < sizeof e->s) {
        memcpy(e->s, url, n + 1);
        e->n = n;
        e->u = *u;
        e->u.host = e->s + (u->host - url);
        e->u.auth = e->s + (u->auth - url);
        e->u.path = e->s + (u->path - url);
    }
    return rc;
}

struct sy_ureq *sy_ureq_start(struct sy_upool *p, const struct sy_ureq_opts *o, const struct sy_ureq_cbs *cbs, void *ud)
{
    struct sy__url u;
    if (!p || p->closing || !o || !o->url || !cbs || !cbs->on_done || (o->nbody && !o->body) ||
        url_parse(p, o->url, &u))
        return NULL;
    struct sy_ureq *r = req_alloc(p);
    if (!r)
        return NULL;
    r->pool = p;
    r->cbs = *cbs;
    r->ud = ud;
    r->ct_ms = to_ms(o->connect_timeout_s ? o->connect_timeout_s : 10);
    r->fbt_ms = to_ms(o->first_byte_timeout_s);
    r->it_ms = to_ms(o->idle_timeout_s);
    if (o->total_timeout_s > 0)
        r->total_at = uv_now(p->loop) + to_ms(o->total_timeout_s);
    p->stats.requests++;
    size_t body_len = 0;
    for (unsigned i = 0; i < o->nbody; i++)
        body_len += o->body[i].len;
    r->bufs = o->nbody + 1 <= SY__UP_IBUFS ? r->ibufs : malloc((o->nbody + 1) * sizeof(uv_buf_t));
    int err = r->bufs ? build_head(r, o, &u, body_len) : SY_ENOMEM;
    if (err) {
        if (!r->bufs)
            r->bufs = r->ibufs;
        sy__req_defer(r, err);
        return r;
    }
    r->bufs[0] = uv_buf_init(r->head.p, (unsigned)r->head.len);
    r->nbufs = 1;
    for (unsigned i = 0; i < o->nbody; i++)
        if (o->body[i].len) /* empty pieces would upset SSL_write and add nothing */
            r->bufs[r->nbufs++] = o->body[i];
    r->origin = sy__origin_get(p, &u);
    if (!r->origin) {
        sy__req_defer(r, SY_ENOMEM);
        return r;
    }
    struct sy__conn *c = sy__idle_pop(r->origin);
    if (!c) {
        conn_open(r);
        return r;
    }
    p->stats.reuses++;
    c->req = r;
    r->conn = c;
    conn_send(c);
    return r;
}

void sy_ureq_pause(struct sy_ureq *r)
{
    if (!r || r->paused)
        return;
    r->paused = 1;
    struct sy__conn *c = r->conn;
    if (c && c->state == C_ACTIVE) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        if (c->tkind == T_IDLE) {
            uv_timer_stop(&c->timer);
            c->timer_due = 0;
        }
    }
}

void sy_ureq_resume(struct sy_ureq *r)
{
    if (!r || !r->paused)
        return;
    r->paused = 0;
    struct sy__conn *c = r->conn;
    if (c && c->state == C_ACTIVE) {
        conn_read_start(c);
        if (c->tkind == T_IDLE) {
            uint64_t now = uv_now(c->pool->loop);
            c->deadline = idle_deadline(r, now);
            timer_set(c, now);
        }
    }
}

void sy_ureq_cancel(struct sy_ureq *r)
{
    if (!r)
        return;
    if (r->queued) { /* waiting for its deferred on_done: just silence it */
        r->canceled = 1;
        return;
    }
    struct sy__conn *c = r->conn;
    if (c) {
        c->req = NULL;
        r->conn = NULL;
        sy__conn_close(c);
    }
    sy__req_recycle(r);
}
