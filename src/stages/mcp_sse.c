/* mcp_sse.c - the `mcp_sse` stage: MCP's old HTTP+SSE transport (protocol
 * 2024-11-05) served to clients that still speak it (LiteLLM's /mcp/sse and
 * its message endpoint, the MCP SDKs' SSEClientTransport).
 *
 *   GET /sse, GET /mcp/sse            a text/event-stream that stays open:
 *       event: endpoint               first, the URL to POST messages to:
 *       data: /mcp/sse/messages?session_id=<sy1.session id>
 *       event: message                then each answer, one JSON-RPC message
 *       data: {"jsonrpc":"2.0",...}   per event (a batch's answers one by one)
 *       : ping                        a comment after 15 s of silence
 *   POST /mcp/sse/messages?session_id=...
 *       the JSON-RPC body is checked against the session (signature, the
 *       same key that opened the stream), dispatched as on /mcp
 *       (sy_mcp_dispatch, stages/mcp.c: the caller's servers and tools), and
 *       its answer is written on the stream; the POST gets 202 "Accepted"
 *       once the answer is on its way (an error of the transport itself -
 *       auth, a bad session, an unparsable body - is the POST's answer).
 *
 * The session id is the gateway's signed one (sy_mcp_session_mint,
 * mcp/session.c): any instance can read it, but the stream is a connection
 * held by one worker of one instance. So:
 *   - within the process, a registry (one mutex, a hash of the sessions'
 *     nonces) maps a session to its stream; a POST that lands on another
 *     worker (SO_REUSEPORT spreads connections) hands the formatted event
 *     to the stream's worker through that worker's hub: a small queue and a
 *     uv_async of this file, created on the worker's loop at its first
 *     stream, closed at worker_stop;
 *   - a POST for a stream another instance holds (a valid session this
 *     process does not know) is answered 404 with a JSON-RPC error that
 *     says so: the SSE transport is bound to the instance holding the
 *     stream, and streamable HTTP (/mcp) is the transport that spreads
 *     over instances.
 * Bounds: streams per worker (general_settings.switchyard_mcp_sse_max_streams,
 * default 1000: a 503 past it); bytes queued for one stream (MAX_QUEUED: a
 * client that does not read loses its stream). A stream ends when its client
 * leaves, when its worker drains (SIGTERM) or stops, or past MAX_QUEUED;
 * its registry entry goes with it. Nothing of this runs without a stream:
 * no hub, no timer, no async handle.
 */
#include "gateway/gateway.h"
#include "gateway/stage.h"
#include "stages/mcp.h"

#include <http_parser.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/errors.h"
#include "core/log.h"
#include "gateway/offload.h"
#include "http/server.h"
#include "keys/keys.h"

#define SSE_MESSAGES_PATH   "/mcp/sse/messages"
#define SSE_VERSION         "2024-11-05" /* the protocol revision of the HTTP+SSE transport */
#define MAX_STREAMS_DEFAULT 1000
#define KEEPALIVE_MS        15000u
#define TICK_MS             1000u
#define MAX_QUEUED          (8u << 20) /* bytes waiting for one stream's client */
#define NBUCKETS            256

struct hub;

/* One open stream. The fields above `next` are read by other workers'
 * threads under reg_mu; the rest belong to its worker. */
struct stream {
    struct stream *hnext; /* registry chain */
    char nonce[24];
    struct hub *hub;
    size_t queued; /* bytes in the hub's queue for it */
    int doomed;    /* over MAX_QUEUED: its worker ends it */
    struct stream *next, *prev;
    struct sy_call *c; /* the GET's call: alive until the stream ends */
    uint64_t last_ms;  /* last write (keep-alive) */
};

/* A formatted event for a stream of another worker. */
struct qmsg {
    struct qmsg *next;
    struct stream *st;
    size_t n;
    char data[];
};

/* One worker's side: its streams, and the queue other workers fill. */
struct hub {
    struct hub *next; /* the hubs list (reg_mu) */
    struct sy_worker *w;
    uv_async_t async;
    uv_timer_t tick;
    int open;    /* reg_mu: async may be sent */
    int closing; /* handles being closed (worker_stop) */
    int ticking; /* the keep-alive timer runs */
    struct stream *streams;
    size_t nstreams;
    struct qmsg *qhead, *qtail; /* reg_mu */
};

static uv_once_t reg_once = UV_ONCE_INIT;
static uv_mutex_t reg_mu;
static struct stream *buckets[NBUCKETS];
static struct hub *hubs;
static int conf_slot = -1;

struct sse_conf {
    size_t max_streams;
};

static void reg_init(void)
{
    uv_mutex_init(&reg_mu);
}

static uint64_t now_ms(void)
{
    return sy_now_ns() / 1000000u;
}

static unsigned bucket_of(const char *nonce)
{
    uint32_t h = 2166136261u;
    for (const char *p = nonce; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return h % NBUCKETS;
}

/* reg_mu held */
static struct stream *reg_find(const char *nonce)
{
    for (struct stream *s = buckets[bucket_of(nonce)]; s; s = s->hnext)
        if (strcmp(s->nonce, nonce) == 0)
            return s;
    return NULL;
}

/* ---- the session secret: mcp.c's (sy_mcp_secret) ---- */

static const char *secret(const struct sy_gwconf *g, size_t *len)
{
    return sy_mcp_secret(g, len);
}

/* The caller as a session records it (as mcp.c binds its sessions): the
 * first 16 hex of its hashed key, "" for the master key or no auth. */
static void caller_hash(const struct sy_call *c, char out[17])
{
    const char *h = c->auth.key ? c->auth.key->token : c->auth.no_db ? c->auth.hashed_key : NULL;
    if (h && strlen(h) >= 16) {
        memcpy(out, h, 16);
        out[16] = 0;
    } else {
        out[0] = 0;
    }
}

static void b64url(const unsigned char *p, size_t n, char *out)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        out[o++] = a[v >> 18];
        out[o++] = a[(v >> 12) & 63];
        out[o++] = a[(v >> 6) & 63];
        out[o++] = a[v & 63];
    }
    if (n - i == 1) {
        out[o++] = a[p[i] >> 2];
        out[o++] = a[(p[i] & 3) << 4];
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 8 | p[i + 1];
        out[o++] = a[v >> 10];
        out[o++] = a[(v >> 4) & 63];
        out[o++] = a[(v & 15) << 2];
    }
    out[o] = 0;
}

/* ---- events ---- */

/* One event: "event: message", a "data: " line per line of the JSON (a
 * CR or LF there is whitespace, and SSE splits lines at both), a blank line. */
static void event_one(struct sy_buf *b, const char *p, size_t n)
{
    SY_BUF_LIT(b, "event: message\ndata: ");
    size_t s = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '\n' && p[i] != '\r')
            continue;
        sy_buf_append(b, p + s, i - s);
        SY_BUF_LIT(b, "\ndata: ");
        if (p[i] == '\r' && i + 1 < n && p[i + 1] == '\n')
            i++;
        s = i + 1;
    }
    sy_buf_append(b, p + s, n - s);
    SY_BUF_LIT(b, "\n\n");
}

/* The end of the JSON value starting at p[i] (strings and nesting skipped),
 * or n when it does not end. */
static size_t value_end(const char *p, size_t n, size_t i)
{
    int depth = 0;
    for (; i < n; i++) {
        char ch = p[i];
        if (ch == '"') {
            for (i++; i < n && p[i] != '"'; i++)
                if (p[i] == '\\')
                    i++;
            if (depth == 0)
                return i < n ? i + 1 : n;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if (ch == '}' || ch == ']') {
            if (--depth <= 0)
                return depth == 0 ? i + 1 : i;
        } else if (depth == 0 && (ch == ',' || ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n')) {
            return i;
        }
    }
    return n;
}

static int ws(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/* The events of an answer: a batch's (a JSON array) one per message, as the
 * transport carries single messages (stages/mcp.h). */
void sy_mcp_sse_events(struct sy_buf *b, const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && ws(p[i]))
        i++;
    if (i == n || p[i] != '[') {
        event_one(b, p, n);
        return;
    }
    size_t mark = b->len;
    for (i++;;) {
        while (i < n && (ws(p[i]) || p[i] == ','))
            i++;
        if (i >= n || p[i] == ']')
            return;
        size_t e = value_end(p, n, i);
        if (e <= i || e > n) { /* not what dispatch writes: send it whole */
            b->len = mark;
            event_one(b, p, n);
            return;
        }
        event_one(b, p + i, e - i);
        i = e;
    }
}

/* ---- streams (on their worker) ---- */

static void stream_end(struct stream *st);

/* Write to the stream's client; 0, or -1 when the stream ended (its client
 * does not read: st is freed). */
static int stream_write(struct stream *st, const char *p, size_t n)
{
    if (sy_resp_queued(st->c->req) > MAX_QUEUED) {
        sy_warn("mcp sse: a client does not read its stream (over %u bytes queued): closing it", MAX_QUEUED);
        stream_end(st);
        return -1;
    }
    sy_resp_chunk(st->c->req, p, n);
    st->last_ms = now_ms();
    return 0;
}

static void stream_end(struct stream *st)
{
    struct hub *h = st->hub;
    uv_mutex_lock(&reg_mu);
    struct stream **pp = &buckets[bucket_of(st->nonce)];
    while (*pp && *pp != st)
        pp = &(*pp)->hnext;
    if (*pp)
        *pp = st->hnext;
    struct qmsg **qp = &h->qhead, *drop = NULL;
    h->qtail = NULL;
    while (*qp) { /* its events still queued go with it */
        struct qmsg *m = *qp;
        if (m->st == st) {
            *qp = m->next;
            m->next = drop;
            drop = m;
        } else {
            h->qtail = m;
            qp = &m->next;
        }
    }
    uv_mutex_unlock(&reg_mu);
    while (drop) {
        struct qmsg *m = drop;
        drop = m->next;
        free(m);
    }
    if (st->prev)
        st->prev->next = st->next;
    else
        h->streams = st->next;
    if (st->next)
        st->next->prev = st->prev;
    if (--h->nstreams == 0 && h->ticking) {
        uv_timer_stop(&h->tick);
        h->ticking = 0;
    }
    struct sy_call *c = st->c;
    free(st);
    c->req->on_abort = NULL;
    sy_call_account(c, 200);
    sy_resp_end(c->req);
}

static void on_stream_abort(struct sy_req *r)
{
    struct sy_call *c = r->handler_data;
    struct hub *h;
    uv_mutex_lock(&reg_mu);
    for (h = hubs; h && h->w != c->w; h = h->next)
        ;
    uv_mutex_unlock(&reg_mu);
    for (struct stream *st = h ? h->streams : NULL; st; st = st->next)
        if (st->c == c) {
            stream_end(st);
            return;
        }
    sy_call_account(c, 499);
    sy_resp_end(r);
}

/* Streams whose queue overflowed (flagged by other workers). */
static void end_doomed(struct hub *h)
{
    for (;;) {
        struct stream *st;
        uv_mutex_lock(&reg_mu);
        for (st = h->streams; st && !st->doomed; st = st->next)
            ;
        uv_mutex_unlock(&reg_mu);
        if (!st)
            return;
        sy_warn("mcp sse: a client does not read its stream (over %u bytes queued): closing it", MAX_QUEUED);
        stream_end(st);
    }
}

static void on_async(uv_async_t *a)
{
    struct hub *h = a->data;
    for (;;) {
        uv_mutex_lock(&reg_mu);
        struct qmsg *m = h->qhead;
        if (m) {
            h->qhead = m->next;
            if (!h->qhead)
                h->qtail = NULL;
            m->st->queued -= m->n;
        }
        uv_mutex_unlock(&reg_mu);
        if (!m)
            break;
        stream_write(m->st, m->data, m->n); /* ending it purges the rest of its queue */
        free(m);
    }
    end_doomed(h);
}

static void on_tick(uv_timer_t *t)
{
    struct hub *h = t->data;
    uint64_t now = now_ms();
    int draining = h->w->draining;
    for (struct stream *st = h->streams, *next; st; st = next) {
        next = st->next;
        if (draining)
            stream_end(st); /* a draining worker does not wait for streams that never end */
        else if (now - st->last_ms >= KEEPALIVE_MS)
            stream_write(st, ": ping\n\n", 8);
    }
}

/* This worker's hub, made on its loop at its first stream. */
static struct hub *hub_get(struct sy_worker *w)
{
    uv_once(&reg_once, reg_init);
    uv_mutex_lock(&reg_mu);
    struct hub *h;
    for (h = hubs; h && h->w != w; h = h->next)
        ;
    if (!h && (h = calloc(1, sizeof *h)) != NULL) {
        h->w = w;
        uv_async_init(&w->loop, &h->async, on_async);
        h->async.data = h;
        uv_timer_init(&w->loop, &h->tick);
        h->tick.data = h;
        h->open = 1;
        h->next = hubs;
        hubs = h;
    }
    uv_mutex_unlock(&reg_mu);
    return h && !h->closing ? h : NULL;
}

static void on_hub_closed(uv_handle_t *hd)
{
    struct hub *h = hd->data;
    if (++h->closing == 3) /* 1 when closing began, +1 per handle */
        free(h);
}

static void sse_worker_stop(struct sy_worker *w)
{
    uv_once(&reg_once, reg_init);
    uv_mutex_lock(&reg_mu);
    struct hub **pp = &hubs, *h;
    while (*pp && (*pp)->w != w)
        pp = &(*pp)->next;
    h = *pp;
    uv_mutex_unlock(&reg_mu);
    if (!h)
        return;
    while (h->streams)
        stream_end(h->streams);
    uv_mutex_lock(&reg_mu);
    for (pp = &hubs; *pp && *pp != h; pp = &(*pp)->next)
        ;
    if (*pp)
        *pp = h->next;
    h->open = 0;
    struct qmsg *m = h->qhead;
    h->qhead = h->qtail = NULL;
    uv_mutex_unlock(&reg_mu);
    while (m) {
        struct qmsg *n = m->next;
        free(m);
        m = n;
    }
    h->closing = 1;
    uv_close((uv_handle_t *)&h->async, on_hub_closed);
    uv_close((uv_handle_t *)&h->tick, on_hub_closed);
}

/* ---- answers ---- */

static void reply(struct sy_call *c, int status, const char *ctype, const char *body, size_t n)
{
    struct sy_buf h;
    sy_buf_init(&h, 16384);
    sy_call_headers(c, &h, 0);
    sy_call_account(c, status);
    sy_resp_simple(c->req, status, h.p, h.len, ctype, body, n);
    sy_buf_free(&h);
}

/* A JSON-RPC error of the transport (id null) as the POST's answer. */
static int rpc_fail(struct sy_call *c, int status, int code, const char *msg)
{
    struct sy_buf b;
    sy_buf_init(&b, 4096);
    sy_mcp_rpc_error(&b, NULL, 0, code, msg);
    reply(c, status, "application/json", b.p, b.len);
    sy_buf_free(&b);
    return SY_DONE;
}

/* Hand the events of an answer to the stream of session nonce (this worker's
 * or another's). 0, or -1 when the stream is gone. */
static int deliver(struct sy_call *c, const char *nonce, const char *body, size_t n)
{
    struct sy_buf ev;
    sy_buf_init(&ev, 8 * n + 4096); /* each line of the answer costs at most 7 bytes more ("data: ") */
    sy_mcp_sse_events(&ev, body, n);
    if (sy_buf_failed(&ev)) {
        sy_buf_free(&ev);
        return -1;
    }
    int rc = -1;
    uv_mutex_lock(&reg_mu);
    struct stream *st = reg_find(nonce);
    if (st && st->hub->w == c->w) {
        uv_mutex_unlock(&reg_mu); /* ours: only this thread ends it */
        rc = stream_write(st, ev.p, ev.len);
        sy_buf_free(&ev);
        return rc;
    }
    if (st && st->hub->open) {
        rc = 0;
        if (st->queued > MAX_QUEUED) {
            st->doomed = 1;
            rc = -1;
        } else {
            struct qmsg *m = malloc(sizeof *m + ev.len);
            if (m) {
                m->next = NULL;
                m->st = st;
                m->n = ev.len;
                memcpy(m->data, ev.p, ev.len);
                if (st->hub->qtail)
                    st->hub->qtail->next = m;
                else
                    st->hub->qhead = m;
                st->hub->qtail = m;
                st->queued += ev.len;
            } else {
                rc = -1;
            }
        }
        uv_async_send(&st->hub->async);
    }
    uv_mutex_unlock(&reg_mu);
    sy_buf_free(&ev);
    return rc;
}

struct post {
    int waiting;
    char nonce[24];
};

static void on_dispatched(struct sy_call *c, int status, const char *body, size_t n, void *arg)
{
    struct post *p = arg;
    int delivered = 1;
    if (status < 300 && n)
        delivered = deliver(c, p->nonce, body, n) == 0; /* also when the POST's client left meanwhile */
    if (sy_call_wait_done(c, &p->waiting))
        return;
    if (status >= 300) {
        reply(c, status, "application/json", body, n);
        return;
    }
    if (!delivered) {
        rpc_fail(c, 404, -32001, "Could not find session: its SSE stream ended before the answer could be written");
        return;
    }
    reply(c, 202, "text/plain", "Accepted", 8);
}

static int post_message(struct sy_call *c)
{
    struct sy_req *r = c->req;
    char tok[600];
    if (!sy_query_get(r->query.p, r->query.n, "session_id", tok, sizeof tok) || !tok[0])
        return rpc_fail(c, 400, -32600, "session_id is required");
    size_t slen;
    const char *sec = secret(c->g, &slen);
    struct sy_mcp_session ss;
    if (sy_mcp_session_read(sec, slen, tok, strlen(tok), 0, &ss) != 0)
        return rpc_fail(c, 400, -32600, "Invalid session ID");
    char me[17];
    caller_hash(c, me);
    uv_once(&reg_once, reg_init);
    uv_mutex_lock(&reg_mu);
    struct stream *st = strcmp(ss.key_hash, me) == 0 && !ss.scope[0] ? reg_find(ss.nonce) : NULL;
    uv_mutex_unlock(&reg_mu);
    if (!st)
        return rpc_fail(c, 404, -32001,
                        "Could not find session: the SSE transport is bound to the gateway instance that holds the "
                        "session's stream (GET /mcp/sse), and this instance holds none for it, or the stream "
                        "ended. Open a new stream, or use the streamable HTTP endpoint /mcp, whose sessions any "
                        "instance serves");
    struct post *p = sy_arena_alloc(&r->arena, sizeof *p);
    if (!p)
        return rpc_fail(c, 500, -32603, "out of memory");
    memcpy(p->nonce, ss.nonce, sizeof p->nonce - 1);
    p->nonce[sizeof p->nonce - 1] = 0;
    p->waiting = 1;
    r->on_abort = sy_call_wait_abort;
    sy_mcp_dispatch(c, NULL, r->body.p ? r->body.p : "", r->body.len, on_dispatched, p);
    return SY_AGAIN;
}

static int open_stream(struct sy_call *c)
{
    struct sy_req *r = c->req;
    struct sy_mcp_set *set = sy_mcp_current(c->g);
    if (!set) {
        sy_call_error(c, 404, "invalid_request_error", NULL,
                      "MCP is not enabled on this gateway: no mcp_servers in the config and no database", NULL, 0);
        return SY_DONE;
    }
    sy_mcp_set_unref(set);
    struct sy_buf h;
    sy_buf_init(&h, 16384);
    sy_call_headers(c, &h, 0);
    SY_BUF_LIT(&h, "cache-control: no-cache, no-transform\r\nx-accel-buffering: no\r\n");
    if (r->head) { /* HEAD: the head a GET gets, never a stream that does not end */
        sy_call_account(c, 200);
        sy_resp_simple(r, 200, h.p, h.len, "text/event-stream", "", 0);
        sy_buf_free(&h);
        return SY_DONE;
    }
    const struct sse_conf *cf = sy_stage_conf(c->g, conf_slot);
    size_t max = cf ? cf->max_streams : MAX_STREAMS_DEFAULT;
    struct hub *hb = hub_get(c->w);
    struct stream *st = hb && hb->nstreams < max ? calloc(1, sizeof *st) : NULL;
    if (!st) {
        sy_buf_free(&h);
        char msg[256];
        snprintf(msg, sizeof msg,
                 "Too many MCP SSE streams open on this worker (%zu); close one, or use the streamable HTTP "
                 "endpoint /mcp",
                 max);
        sy_call_error(c, 503, "service_unavailable", NULL, hb ? msg : "out of memory", NULL, 0);
        return SY_DONE;
    }
    struct sy_mcp_session ss;
    memset(&ss, 0, sizeof ss);
    caller_hash(c, ss.key_hash);
    memcpy(ss.version, SSE_VERSION, sizeof SSE_VERSION);
    ss.issued = (int64_t)sy_wall_s();
    unsigned char rnd[16];
    RAND_bytes(rnd, sizeof rnd);
    b64url(rnd, sizeof rnd, ss.nonce);
    size_t slen;
    const char *sec = secret(c->g, &slen);
    char tok[512];
    int tl = sy_mcp_session_mint(sec, slen, &ss, tok, sizeof tok);
    if (tl <= 0) {
        free(st);
        sy_buf_free(&h);
        sy_call_error(c, 500, "internal_server_error", NULL, "cannot make an MCP session id", NULL, 0);
        return SY_DONE;
    }
    memcpy(st->nonce, ss.nonce, sizeof st->nonce - 1);
    st->hub = hb;
    st->c = c;
    st->last_ms = now_ms();
    uv_mutex_lock(&reg_mu);
    unsigned bk = bucket_of(st->nonce);
    st->hnext = buckets[bk];
    buckets[bk] = st;
    uv_mutex_unlock(&reg_mu);
    st->next = hb->streams;
    if (hb->streams)
        hb->streams->prev = st;
    hb->streams = st;
    hb->nstreams++;
    if (!hb->ticking) {
        uv_timer_start(&hb->tick, on_tick, TICK_MS, TICK_MS);
        hb->ticking = 1;
    }
    sy_resp_start(r, 200, h.p, h.len, "text/event-stream");
    sy_buf_free(&h);
    r->on_abort = on_stream_abort;
    struct sy_buf ev;
    sy_buf_init(&ev, 1024);
    SY_BUF_LIT(&ev, "event: endpoint\ndata: " SSE_MESSAGES_PATH "?session_id=");
    sy_buf_append(&ev, tok, (size_t)tl); /* base64url and '.': nothing to escape in a query */
    SY_BUF_LIT(&ev, "\n\n");
    stream_write(st, ev.p, ev.len);
    sy_buf_free(&ev);
    return SY_AGAIN; /* the stream runs until its client leaves */
}

static int sse_run(struct sy_call *c)
{
    return c->req->method == HTTP_POST ? post_message(c) : open_stream(c);
}

/* general_settings.switchyard_mcp_sse_max_streams */
static int sse_conf_build(struct sy_gwconf *g, void **conf, char *err, size_t errlen)
{
    struct sse_conf *cf = calloc(1, sizeof *cf);
    if (!cf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cf->max_streams = g->cfg->mcp_sse_max_streams ? g->cfg->mcp_sse_max_streams : MAX_STREAMS_DEFAULT;
    *conf = cf;
    return 0;
}

static void sse_conf_free(void *conf)
{
    free(conf);
}

const struct sy_stage sy_stage_mcp_sse = {
    .name = "mcp_sse",
    .routes = SY_RKB(SY_RK_MCP_SSE),
    .run = sse_run,
    .worker_stop = sse_worker_stop,
    .conf_build = sse_conf_build,
    .conf_free = sse_conf_free,
    .conf_slot = &conf_slot,
};
