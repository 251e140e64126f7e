/* conn.c - one client connection of the mock: HTTP/1.1 parsing, optional TLS
 * (OpenSSL over memory BIOs), writes, and the paced/faulty send machine.
 *
 * Invariants:
 *  - Requests are answered strictly in order. An immediate response is
 *    rendered into c->out and all of them are flushed together at the end of
 *    the read callback (so pipelined requests cost one write).
 *  - A response with a fault that needs time (delay, chunk delay, trickle,
 *    reset, close) is rendered whole into c->rbuf with segment marks, the
 *    parser is paused (c->busy), and later input waits in c->pending_in until
 *    the response is done; then parsing resumes where it stopped.
 *  - Writes: uv_try_write first; what does not fit is copied into a write
 *    request. c is freed only in the close callback of its last handle.
 *  - split_utf8: c->splits holds offsets inside segments (between the bytes
 *    of a UTF-8 character); the send stops there for SPLIT_MS, so the
 *    character arrives in two network writes. Splits are not segments: they
 *    do not count as chunks for reset_after_chunks.
 *  - A paced stream whose peer closes the connection before the last byte
 *    stops at once (as a provider stops generating for a client that left)
 *    and is counted as cut; GET /__mock/stats shows how far it got.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "mock.h"

#define SPLIT_MS 15

struct wreq {
    uv_write_t req;
    struct mock_conn *c;
    char data[];
};

static void begin(uv_timer_t *t);
static void flush(struct mock_conn *c);

/* ---- paced stream statistics (shared by all threads) ---- */

static pthread_mutex_t st_mu = PTHREAD_MUTEX_INITIALIZER;
static long st_started, st_completed, st_cut;
static long st_last_segments = -1, st_last_sent = -1;

/* Segments of c's response sent whole. */
static long segs_sent(const struct mock_conn *c)
{
    long k = 0;
    for (size_t i = 0; i < c->nsegs; i++)
        if (c->segs[i] <= c->sent)
            k++;
    return k;
}

/* A paced stream ends: completed (all sent) or cut by the peer. */
static void stream_ended(struct mock_conn *c, int cut)
{
    pthread_mutex_lock(&st_mu);
    if (cut)
        st_cut++;
    else
        st_completed++;
    st_last_segments = (long)c->nsegs;
    st_last_sent = segs_sent(c);
    pthread_mutex_unlock(&st_mu);
}

void mock_stream_stats(struct sy_buf *s)
{
    pthread_mutex_lock(&st_mu);
    sy_buf_printf(s,
                  "\"streams_started\":%ld,\"streams_completed\":%ld,\"streams_cut\":%ld,"
                  "\"last_stream_segments\":%ld,\"last_stream_segments_sent\":%ld",
                  st_started, st_completed, st_cut, st_last_segments, st_last_sent);
    pthread_mutex_unlock(&st_mu);
}

void mock_stream_stats_reset(void)
{
    pthread_mutex_lock(&st_mu);
    st_started = st_completed = st_cut = 0;
    st_last_segments = st_last_sent = -1;
    pthread_mutex_unlock(&st_mu);
}

const char *mock_header(struct mock_conn *c, const char *name)
{
    struct mock_http_req *h = &c->req;
    for (int i = 0; i < h->nh; i++)
        if (strcmp(h->hdrs.p + h->name_off[i], name) == 0)
            return h->hdrs.p + h->val_off[i];
    return NULL;
}

/* ---- lifetime ---- */

static void on_handle_closed(uv_handle_t *hd)
{
    struct mock_conn *c = hd->data;
    if (--c->handles_open > 0)
        return;
    sy_buf_free(&c->req.url);
    sy_buf_free(&c->req.hdrs);
    sy_buf_free(&c->req.body);
    sy_buf_free(&c->out);
    sy_buf_free(&c->pending_in);
    sy_buf_free(&c->rbuf);
    free(c->segs);
    free(c->splits);
    if (c->ssl)
        SSL_free(c->ssl); /* frees both BIOs */
    free(c);
}

/* Close the connection; rst sends a TCP reset (SO_LINGER 0) instead of FIN. */
static void conn_close(struct mock_conn *c, int rst)
{
    if (c->closing)
        return;
    c->closing = 1;
    if (c->busy && c->stream && !c->rst_pending && c->sent < c->rbuf.len)
        stream_ended(c, 1); /* the peer left (or a write failed) mid-stream */
    if (rst) {
        uv_os_fd_t fd;
        struct linger l = {1, 0};
        if (uv_fileno((uv_handle_t *)&c->tcp, &fd) == 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    uv_timer_stop(&c->timer);
    uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
    uv_close((uv_handle_t *)&c->timer, on_handle_closed);
}

static void maybe_close(struct mock_conn *c)
{
    if (!c->closing && c->close_after_flush && !c->busy && c->pending_writes == 0)
        conn_close(c, 0);
}

/* ---- writes ---- */

static void on_write(uv_write_t *req, int status)
{
    struct wreq *w = (struct wreq *)req;
    struct mock_conn *c = w->c;
    free(w);
    c->pending_writes--;
    if (c->closing)
        return;
    if (status < 0) {
        conn_close(c, 0);
        return;
    }
    if (c->pending_writes == 0 && c->on_drain) {
        void (*fn)(struct mock_conn *) = c->on_drain;
        c->on_drain = NULL;
        fn(c);
    }
    maybe_close(c);
}

static void write_raw(struct mock_conn *c, const char *p, size_t n)
{
    if (n == 0 || c->closing)
        return;
    if (c->pending_writes == 0) {
        uv_buf_t b = uv_buf_init((char *)p, (unsigned)n);
        int w = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
        if (w >= 0 && (size_t)w == n)
            return;
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        } else if (w != UV_EAGAIN) {
            conn_close(c, 0);
            return;
        }
    }
    struct wreq *w = malloc(sizeof *w + n);
    if (!w) {
        conn_close(c, 0);
        return;
    }
    w->c = c;
    memcpy(w->data, p, n);
    uv_buf_t b = uv_buf_init(w->data, (unsigned)n);
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, on_write) < 0) {
        free(w);
        conn_close(c, 0);
        return;
    }
    c->pending_writes++;
}

/* Send c->out (through TLS if any) and any pending TLS records. */
static void flush(struct mock_conn *c)
{
    if (c->closing)
        return;
    if (!c->ssl) {
        write_raw(c, c->out.p, c->out.len);
        sy_buf_reset(&c->out);
        return;
    }
    if (c->out.len) {
        if (SSL_write(c->ssl, c->out.p, (int)c->out.len) <= 0) {
            conn_close(c, 0);
            return;
        }
        sy_buf_reset(&c->out);
    }
    char *p;
    long n = BIO_get_mem_data(c->wbio, &p);
    if (n > 0) {
        write_raw(c, p, (size_t)n);
        (void)BIO_reset(c->wbio);
    }
}

/* ---- parsing ---- */

static struct mock_conn *conn_of(http_parser *p)
{
    return p->data;
}

static int on_begin(http_parser *p)
{
    struct mock_http_req *h = &conn_of(p)->req;
    sy_buf_reset(&h->url);
    sy_buf_reset(&h->hdrs);
    sy_buf_reset(&h->body);
    h->nh = h->in_value = h->too_big = 0;
    return 0;
}

static int on_url(http_parser *p, const char *at, size_t n)
{
    return sy_buf_append(&conn_of(p)->req.url, at, n) ? -1 : 0;
}

/* in_value: 0 before the first header, 1 in a name, 2 in a value, 3 skipping */
static int on_hfield(http_parser *p, const char *at, size_t n)
{
    struct mock_http_req *h = &conn_of(p)->req;
    if (h->in_value == 3)
        return 0;
    if (h->in_value != 1) {
        if (h->in_value == 2 && sy_buf_append(&h->hdrs, "", 1))
            return -1;
        if (h->nh == MOCK_MAX_HEADERS) {
            h->in_value = 3;
            return 0;
        }
        h->name_off[h->nh++] = (uint32_t)h->hdrs.len;
        h->in_value = 1;
    }
    size_t start = h->hdrs.len;
    if (sy_buf_append(&h->hdrs, at, n))
        return -1;
    for (size_t i = start; i < h->hdrs.len; i++)
        if (h->hdrs.p[i] >= 'A' && h->hdrs.p[i] <= 'Z')
            h->hdrs.p[i] = (char)(h->hdrs.p[i] + 32);
    return 0;
}

static int on_hvalue(http_parser *p, const char *at, size_t n)
{
    struct mock_http_req *h = &conn_of(p)->req;
    if (h->in_value == 3)
        return 0;
    if (h->in_value == 1) {
        if (sy_buf_append(&h->hdrs, "", 1))
            return -1;
        h->val_off[h->nh - 1] = (uint32_t)h->hdrs.len;
        h->in_value = 2;
    }
    return sy_buf_append(&h->hdrs, at, n) ? -1 : 0;
}

static int on_hdone(http_parser *p)
{
    struct mock_conn *c = conn_of(p);
    struct mock_http_req *h = &c->req;
    if (h->in_value == 1) { /* name without a value callback: empty value */
        sy_buf_append(&h->hdrs, "", 1);
        h->val_off[h->nh - 1] = (uint32_t)h->hdrs.len;
    }
    if (h->in_value != 0 && h->in_value != 3 && sy_buf_append(&h->hdrs, "", 1))
        return -1;
    if (h->in_value == 3)
        sy_buf_append(&h->hdrs, "", 1);
    h->in_value = 0;
    const char *e = mock_header(c, "expect");
    if (e && strcasecmp(e, "100-continue") == 0)
        SY_BUF_LIT(&c->out, "HTTP/1.1 100 Continue\r\n\r\n");
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
    struct mock_http_req *h = &conn_of(p)->req;
    if (!h->too_big && sy_buf_append(&h->body, at, n))
        h->too_big = 1;
    return 0;
}

static int on_done(http_parser *p)
{
    struct mock_conn *c = conn_of(p);
    int keep_alive = http_should_keep_alive(p);
    mock_route(c);
    if (!keep_alive)
        c->close_after_flush = 1;
    if (c->busy || c->close_after_flush || c->closing)
        http_parser_pause(p, 1);
    return 0;
}

static const http_parser_settings settings = {
    .on_message_begin = on_begin,
    .on_url = on_url,
    .on_header_field = on_hfield,
    .on_header_value = on_hvalue,
    .on_headers_complete = on_hdone,
    .on_body = on_body,
    .on_message_complete = on_done,
};

static void parse(struct mock_conn *c, const char *p, size_t n)
{
    size_t k = http_parser_execute(&c->parser, &settings, p, n);
    enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
    if (e == HPE_PAUSED) {
        http_parser_pause(&c->parser, 0);
        if (k < n && !c->close_after_flush && !c->closing && sy_buf_append(&c->pending_in, p + k, n - k)) {
            uv_read_stop((uv_stream_t *)&c->tcp);
            c->reading = 0;
        }
    } else if (e != HPE_OK && !c->closing) {
        SY_BUF_LIT(&c->out, "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n"
                            "Content-Length: 12\r\nConnection: close\r\n\r\nbad request\n");
        c->close_after_flush = 1;
    }
}

/* Input that arrives while a response is in flight waits in pending_in. */
static void feed(struct mock_conn *c, const char *p, size_t n)
{
    if (c->closing || c->close_after_flush)
        return;
    if (c->busy || c->pending_in.len) {
        if (sy_buf_append(&c->pending_in, p, n)) {
            uv_read_stop((uv_stream_t *)&c->tcp);
            c->reading = 0;
        }
        return;
    }
    parse(c, p, n);
}

/* ---- reading ---- */

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    struct mock_conn *c = h->data;
    *buf = uv_buf_init(c->th->rbuf, sizeof c->th->rbuf);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct mock_conn *c = s->data;
    if (nread == 0 || c->closing)
        return;
    if (nread < 0) {
        uv_read_stop(s);
        c->reading = 0;
        if (c->busy && c->stream && c->sent < c->rbuf.len) {
            conn_close(c, 0); /* a stream whose reader left: stop generating */
            return;
        }
        if (c->busy || c->pending_writes)
            c->close_after_flush = 1;
        else
            conn_close(c, 0);
        return;
    }
    if (!c->ssl) {
        feed(c, buf->base, (size_t)nread);
    } else {
        BIO_write(c->rbio, buf->base, (int)nread);
        while (!c->closing) {
            int k = SSL_read(c->ssl, c->th->plain, sizeof c->th->plain);
            if (k > 0) {
                feed(c, c->th->plain, (size_t)k);
                continue;
            }
            int err = SSL_get_error(c->ssl, k);
            if (err == SSL_ERROR_WANT_READ)
                break;
            flush(c);
            if (err == SSL_ERROR_ZERO_RETURN && (c->busy || c->pending_writes))
                c->close_after_flush = 1;
            else
                conn_close(c, 0);
            return;
        }
    }
    flush(c);
    maybe_close(c);
}

static void start_reading(struct mock_conn *c)
{
    if (!c->reading && !c->closing && !c->close_after_flush &&
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
        c->reading = 1;
}

/* ---- paced and faulty responses ---- */

void mock_mark(struct mock_resp *r)
{
    struct mock_conn *c = r->c;
    if (!r->track)
        return;
    if (c->nsegs && c->segs[c->nsegs - 1] == r->b->len)
        return;
    if (c->nsegs == c->segcap) {
        size_t nc = c->segcap ? c->segcap * 2 : 64;
        uint32_t *ns = realloc(c->segs, nc * sizeof *ns);
        if (!ns)
            return;
        c->segs = ns;
        c->segcap = nc;
    }
    c->segs[c->nsegs++] = (uint32_t)r->b->len;
}

void mock_split_at(struct mock_resp *r, size_t off)
{
    struct mock_conn *c = r->c;
    if (!r->track || (c->nsplits && c->splits[c->nsplits - 1] >= off))
        return;
    if (c->nsplits == c->splitcap) {
        size_t nc = c->splitcap ? c->splitcap * 2 : 32;
        uint32_t *ns = realloc(c->splits, nc * sizeof *ns);
        if (!ns)
            return;
        c->splits = ns;
        c->splitcap = nc;
    }
    c->splits[c->nsplits++] = (uint32_t)off;
}

/* Response finished: resume parsing what arrived meanwhile. */
static void done(struct mock_conn *c)
{
    uv_timer_stop(&c->timer);
    if (c->busy && c->stream)
        stream_ended(c, 0);
    c->busy = 0;
    if (c->pending_in.len && !c->close_after_flush) {
        struct sy_buf in = c->pending_in;
        sy_buf_init(&c->pending_in, in.cap);
        parse(c, in.p, in.len);
        sy_buf_free(&in);
        flush(c);
    }
    if (!c->busy)
        start_reading(c);
    maybe_close(c);
}

static void send_upto(struct mock_conn *c, size_t end)
{
    if (end > c->rbuf.len)
        end = c->rbuf.len;
    if (end > c->sent) {
        sy_buf_append(&c->out, c->rbuf.p + c->sent, end - c->sent);
        c->sent = end;
    }
    flush(c);
}

static void rst_now(uv_timer_t *t)
{
    conn_close(t->data, 1);
}

/* Give the peer a moment to read what was sent, then reset. */
static void rst_soon(struct mock_conn *c)
{
    uv_timer_start(&c->timer, rst_now, 10, 0);
}

/* Where a reset cuts the response (byte offset), or rbuf.len for none. */
static size_t cut_point(struct mock_conn *c)
{
    long n = c->fault.reset_after_chunks;
    if (n < 0 || c->nsegs == 0)
        return c->rbuf.len;
    if (!c->stream) /* head + half of the body */
        return c->segs[0] + (c->rbuf.len - c->segs[0]) / 2;
    if ((size_t)n + 1 >= c->nsegs) /* fewer chunks than that: completes normally */
        return c->rbuf.len;
    return c->segs[n];
}

static void finish(struct mock_conn *c)
{
    if (c->sent < c->rbuf.len) { /* cut short: reset once written */
        c->rst_pending = 1;
        if (c->pending_writes)
            c->on_drain = rst_soon;
        else
            rst_soon(c);
        return;
    }
    done(c);
}

static void next_segment(uv_timer_t *t)
{
    struct mock_conn *c = t->data;
    size_t cut = cut_point(c), end = cut;
    if (c->fault.chunk_delay_ms > 0) {
        while (c->seg_i < c->nsegs && c->segs[c->seg_i] <= c->sent)
            c->seg_i++;
        end = c->seg_i < c->nsegs ? c->segs[c->seg_i] : c->rbuf.len;
        if (end > cut)
            end = cut;
    }
    while (c->split_i < c->nsplits && c->splits[c->split_i] <= c->sent)
        c->split_i++;
    int split = c->split_i < c->nsplits && c->splits[c->split_i] < end;
    if (split)
        end = c->splits[c->split_i];
    send_upto(c, end);
    if (c->sent < cut && !c->closing) {
        uv_timer_start(&c->timer, next_segment, split ? SPLIT_MS : (uint64_t)c->fault.chunk_delay_ms, 0);
        return;
    }
    if (!c->closing)
        finish(c);
}

static void trickle(uv_timer_t *t)
{
    struct mock_conn *c = t->data;
    long rate = c->fault.trickle_bytes_per_s;
    uint64_t tick = rate >= 10 ? 100 : (uint64_t)(1000 / rate);
    size_t per = (size_t)(rate * (long)tick / 1000);
    if (per == 0)
        per = 1;
    send_upto(c, c->sent + per);
    if (c->closing)
        return;
    if (c->sent < c->rbuf.len)
        uv_timer_start(&c->timer, trickle, tick, 0);
    else
        finish(c);
}

static void begin(uv_timer_t *t)
{
    struct mock_conn *c = t->data;
    flush(c);
    if (c->fault.close_without_response) {
        c->busy = 0;
        c->close_after_flush = 1;
        maybe_close(c);
        return;
    }
    if (c->fault.trickle_bytes_per_s > 0) {
        send_upto(c, c->nsegs ? c->segs[0] : 0); /* head at once, then the body */
        if (!c->closing)
            trickle(t);
        return;
    }
    next_segment(t);
}

void mock_commit(struct mock_resp *r, const struct mock_fault *f, int stream)
{
    struct mock_conn *c = r->c;
    if (!r->track)
        return;
    if (!f) { /* nothing scripted after all: answer now */
        sy_buf_append(&c->out, c->rbuf.p, c->rbuf.len);
        return;
    }
    mock_mark(r);
    c->fault = *f;
    /* string views point into the request body; they were used while rendering */
    c->fault.error_message = c->fault.error_type = c->fault.error_code = SY_STR_NULL;
    c->fault.content = c->fault.finish_reason = c->fault.stream_error = SY_STR_NULL;
    c->stream = stream;
    c->busy = 1;
    if (stream) {
        pthread_mutex_lock(&st_mu);
        st_started++;
        pthread_mutex_unlock(&st_mu);
    }
    c->seg_i = 0;
    c->split_i = 0;
    c->sent = 0;
    c->rst_pending = 0;
    uv_timer_start(&c->timer, begin, f->delay_ms > 0 ? (uint64_t)f->delay_ms : 0, 0);
}

/* ---- accept ---- */

void mock_on_connection(uv_stream_t *server, int status)
{
    struct mock_thread *th = server->data;
    if (status < 0)
        return;
    struct mock_conn *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->th = th;
    uv_tcp_init(&th->loop, &c->tcp);
    uv_timer_init(&th->loop, &c->timer);
    c->tcp.data = c->timer.data = c;
    c->handles_open = 2;
    sy_buf_init(&c->req.url, 64 << 10);
    sy_buf_init(&c->req.hdrs, 1 << 20);
    sy_buf_init(&c->req.body, MOCK_MAX_BODY);
    sy_buf_init(&c->out, MOCK_MAX_OUT);
    sy_buf_init(&c->pending_in, 16u << 20);
    sy_buf_init(&c->rbuf, MOCK_MAX_OUT);
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) < 0) {
        conn_close(c, 0);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    int tls = th->lis_tls[(uv_tcp_t *)server == &th->lis[1]];
    if (tls) {
        c->ssl = SSL_new(mock_ssl_ctx);
        c->rbio = BIO_new(BIO_s_mem());
        c->wbio = BIO_new(BIO_s_mem());
        if (!c->ssl || !c->rbio || !c->wbio) {
            BIO_free(c->rbio);
            BIO_free(c->wbio);
            conn_close(c, 0);
            return;
        }
        SSL_set_bio(c->ssl, c->rbio, c->wbio);
        SSL_set_accept_state(c->ssl);
    }
    start_reading(c);
}
