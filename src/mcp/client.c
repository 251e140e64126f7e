/* client.c - the pool of upstream MCP sessions, one per worker on its loop.
 *
 * A conn is one server as the pool knows it, keyed by the server's
 * fingerprint and holding its own copy of what shapes the connection (url,
 * transport, auth, command), so it outlives the sets that named it:
 *
 *   IDLE ──first op──▶ INIT: initialize {protocolVersion: spec_version or the
 *     ▲                newest we speak, capabilities {}, clientInfo
 *     │                {name "switchyard", version}} ─▶ the answer's
 *     │                protocolVersion must be one we speak ─▶
 *     │                notifications/initialized (its 202 awaited: HTTP posts
 *     │                of one session may be handled out of order) ─▶ READY
 *     └── 404 on the session (HTTP), stream lost (SSE), child exited (stdio)
 *
 * Ops made while a conn initializes wait on it and are sent once it is READY
 * (or all fail with the handshake's error). Every message we send carries
 * the pool's own integer id; an answer is matched by it and handed over
 * with the caller's id put back (sy_mcp_req.id) or as it came.
 *
 * Completion is never immediate: transports (http.c, sse.c, the stdio
 * callbacks) only record an op's outcome and move it to the kick list; a
 * zero timer then calls the callbacks. No caller code ever runs inside a
 * socket callback, so a done callback may start requests, cancel others,
 * even close the pool, without pulling a request out from under its reader.
 * An HTTP answer that came as an SSE stream leaves its request draining (the
 * rest of the stream read and dropped, so the keep-alive connection is
 * reused) for at most DRAIN_MS.
 *
 * Deadlines: every op is on one sorted list with one uv timer for the
 * earliest (equal timeouts append at the tail, so inserting is O(1) in the
 * common case). A timed-out op in flight gets notifications/cancelled sent
 * to its server, as the spec asks.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/errors.h"
#include "core/log.h"
#include "mcp/client_int.h"
#include "mcp/mcp_int.h"
#include "providers/jdom.h"
#include "upstream/client.h"

#ifndef SY_VERSION
#define SY_VERSION "0"
#endif

#define DEFAULT_MAX_RESULT ((size_t)16 << 20)
#define DEFAULT_TIMEOUT_S  60.0
#define DRAIN_MS           10000

static void kick_cb(uv_timer_t *t);
static void dl_cb(uv_timer_t *t);
static void conn_init_start(struct mconn *c);
static void op_free(struct sy_mcp_op *op);

/* ---- deadlines ---- */

static void dl_rearm(struct sy_mcp_pool *p)
{
    if (p->closing)
        return;
    if (ml_empty(&p->deadlines)) {
        if (p->dl_armed) {
            uv_timer_stop(&p->dl_timer);
            p->dl_armed = 0;
        }
        return;
    }
    struct sy_mcp_op *h = ml_entry(p->deadlines.next, struct sy_mcp_op, tl);
    if (p->dl_armed == h->deadline)
        return;
    uint64_t now = uv_now(p->loop);
    uv_timer_start(&p->dl_timer, dl_cb, h->deadline > now ? h->deadline - now : 0, 0);
    p->dl_armed = h->deadline;
}

static void op_arm(struct sy_mcp_op *op, uint64_t ms)
{
    struct sy_mcp_pool *p = op->p;
    ml_del(&op->tl);
    op->deadline = uv_now(p->loop) + ms;
    struct mlink *at = p->deadlines.prev;
    while (at != &p->deadlines && ml_entry(at, struct sy_mcp_op, tl)->deadline > op->deadline)
        at = at->prev;
    ml_push(at->next, &op->tl); /* insert before at->next, i.e. after at */
    dl_rearm(p);
}

static uint64_t timeout_ms(double s)
{
    if (!(s > 0))
        s = DEFAULT_TIMEOUT_S;
    if (s > 86400)
        s = 86400;
    return (uint64_t)(s * 1000.0 + 0.5);
}

/* ---- ops ---- */

static struct sy_mcp_op *op_new(struct sy_mcp_pool *p, struct mconn *c, enum op_kind kind)
{
    struct sy_mcp_op *op = calloc(1, sizeof *op);
    if (!op)
        return NULL;
    op->p = p;
    op->c = c;
    op->kind = kind;
    ml_init(&op->q);
    ml_init(&op->tl);
    sy_buf_init(&op->body, (size_t)64 << 20);
    sy_buf_init(&op->xhdr, 64 << 10);
    sy_buf_init(&op->hdr, 128 << 10);
    op->max_result = DEFAULT_MAX_RESULT;
    sy_buf_init(&op->resp, op->max_result + 4096);
    return op;
}

/* The wire message: {"jsonrpc":"2.0","id":N,"method":"m","params":...}. */
static void op_body(struct sy_mcp_op *op, const char *method, const char *params, size_t plen)
{
    struct sy_buf *b = &op->body;
    SY_BUF_LIT(b, "{\"jsonrpc\":\"2.0\",");
    if (!op->notify) {
        op->wid = ++op->p->next_id;
        SY_BUF_LIT(b, "\"id\":");
        sy_buf_u64(b, op->wid);
        SY_BUF_LIT(b, ",");
    }
    SY_BUF_LIT(b, "\"method\":\"");
    sy_buf_json_escape(b, method, strlen(method));
    SY_BUF_LIT(b, "\"");
    if (params && plen) {
        SY_BUF_LIT(b, ",\"params\":");
        sy_buf_append(b, params, plen);
    }
    SY_BUF_LIT(b, "}");
}

static void op_detach(struct sy_mcp_op *op)
{
    ml_del(&op->q);
    ml_del(&op->tl);
    op->where = OPW_NONE;
    if (op->post) {
        *op->post = NULL; /* the SSE post outlives us; it no longer points here */
        op->post = NULL;
    }
}

static void op_free(struct sy_mcp_op *op)
{
    op_detach(op);
    if (op->ureq) {
        sy_ureq_cancel(op->ureq);
        op->ureq = NULL;
    }
    sy_buf_free(&op->body);
    sy_buf_free(&op->xhdr);
    sy_buf_free(&op->hdr);
    sy_buf_free(&op->resp);
    if (op->fr) {
        sy_framer_free(op->fr);
        free(op->fr);
    }
    free(op->cid);
    free(op);
}

/* Record op's outcome (the message or a reason in op->resp) and queue its
 * callbacks for the next loop turn. A message already in op->resp is kept. */
static void op_complete_buf(struct sy_mcp_op *op, int err)
{
    struct sy_mcp_pool *p = op->p;
    op_detach(op);
    op->kerr = err;
    op->where = OPW_KICK;
    ml_push(&p->kick, &op->q);
    if (!p->closing && !uv_is_active((uv_handle_t *)&p->kick_timer))
        uv_timer_start(&p->kick_timer, kick_cb, 0, 0);
}

void mcp_op_finish(struct sy_mcp_op *op, int err, const char *msg, size_t n)
{
    if (op->where == OPW_KICK || op->where == OPW_DRAIN)
        return; /* already decided */
    if (!(msg >= op->resp.p && op->resp.p && msg < op->resp.p + op->resp.len + 1)) {
        sy_buf_reset(&op->resp);
        if (n)
            sy_buf_append(&op->resp, msg, n);
    }
    op_complete_buf(op, err);
}

void mcp_op_failf(struct sy_mcp_op *op, int err, const char *fmt, ...)
{
    if (op->where == OPW_KICK || op->where == OPW_DRAIN)
        return;
    sy_buf_reset(&op->resp);
    op->resp.cap = op->resp.cap < 4096 ? 4096 : op->resp.cap;
    va_list ap;
    va_start(ap, fmt);
    sy_buf_vprintf(&op->resp, fmt, ap);
    va_end(ap);
    op_complete_buf(op, err);
}

void mcp_fail_list(struct mlink *l, int err, const char *msg)
{
    struct mlink tmp;
    ml_init(&tmp);
    ml_move(&tmp, l);
    while (!ml_empty(&tmp)) {
        struct sy_mcp_op *op = ml_entry(tmp.next, struct sy_mcp_op, q);
        ml_del(&op->q);
        op->where = OPW_NONE;
        mcp_op_finish(op, err, msg, strlen(msg));
    }
}

/* ---- the handshake ---- */

static void conn_fail_init(struct mconn *c, int err, const char *msg)
{
    c->state = CS_IDLE;
    free(c->session);
    c->session = NULL;
    c->version[0] = 0;
    if (c->s.transport == SY_MCP_SSE)
        mcp_conn_lost(c);
    char m[512];
    snprintf(m, sizeof m, "MCP server '%s': initialize failed: %.400s", c->s.name ? c->s.name : "?", msg);
    mcp_fail_list(&c->waiting, err, m);
}

static void send_initialized(struct mconn *c)
{
    struct sy_mcp_op *op = op_new(c->p, c, OPK_INITIALIZED);
    if (!op) {
        conn_fail_init(c, SY_ENOMEM, "out of memory");
        return;
    }
    op->notify = 1;
    op_body(op, "notifications/initialized", NULL, 0);
    c->init_op = op;
    op_arm(op, timeout_ms(c->s.timeout_s));
    mcp_conn_send(op);
}

/* The protocol revision an initialize answer settled on; 0, or -1. */
static int init_version(struct mconn *c, const char *msg, size_t n, char *err, size_t errlen)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int rc = -1;
    if (sy_jdom_parse(&d, msg, n, &a, 0) != 0) {
        snprintf(err, errlen, "the answer is not JSON");
        goto out;
    }
    uint32_t e = sy_jdom_top(&d, "error");
    if (e) {
        size_t el;
        const char *ej = sy_jdom_raw(&d, e, &el);
        snprintf(err, errlen, "the server refused: %.*s", (int)(el > 300 ? 300 : el), ej);
        goto out;
    }
    uint32_t v = sy_jdom_at(&d, sy_jdom_top(&d, "result"), "protocolVersion");
    size_t vl = 0;
    const char *vs = sy_jdom_str(&d, v, &a, &vl);
    if (!vs) {
        snprintf(err, errlen, "the answer has no result.protocolVersion");
        goto out;
    }
    for (size_t i = 0; sy_mcp_versions[i]; i++)
        if (strlen(sy_mcp_versions[i]) == vl && !memcmp(sy_mcp_versions[i], vs, vl)) {
            snprintf(c->version, sizeof c->version, "%s", sy_mcp_versions[i]);
            rc = 0;
            goto out;
        }
    snprintf(err, errlen, "unsupported protocol version \"%.32s\"", vs);
out:
    sy_arena_free(&a);
    return rc;
}

static void init_fin(struct sy_mcp_op *op, int err, const char *msg, size_t n)
{
    struct mconn *c = op->c;
    if (!c || c->init_op != op)
        return; /* a conn dropped meanwhile, or a stale handshake */
    c->init_op = NULL;
    if (err) {
        conn_fail_init(c, err, n ? msg : sy_err_name(err));
        return;
    }
    if (op->kind == OPK_INIT) {
        char why[400];
        if (init_version(c, msg, n, why, sizeof why) != 0) {
            conn_fail_init(c, SY_EUPPROTO, why);
            return;
        }
        send_initialized(c);
        return;
    }
    /* notifications/initialized went through: the session is READY */
    c->state = CS_READY;
    c->had_session = 1;
    struct mlink tmp;
    ml_init(&tmp);
    ml_move(&tmp, &c->waiting);
    while (!ml_empty(&tmp)) {
        struct sy_mcp_op *w = ml_entry(tmp.next, struct sy_mcp_op, q);
        ml_del(&w->q);
        w->where = OPW_NONE;
        mcp_conn_send(w);
    }
}

static void conn_init_start(struct mconn *c)
{
    if (c->state != CS_IDLE || c->p->closing)
        return;
    if (c->s.transport == SY_MCP_STDIO) {
        if (!c->stdio || !sy_mcp_stdio_running(c->stdio))
            return; /* on_state(1) starts it */
    }
    c->state = CS_INIT;
    c->gen++;
    free(c->session);
    c->session = NULL;
    c->version[0] = 0;
    c->p->st.initializes++;
    if (c->had_session)
        c->p->st.reinitializes++;
    struct sy_mcp_op *op = op_new(c->p, c, OPK_INIT);
    if (!op) {
        conn_fail_init(c, SY_ENOMEM, "out of memory");
        return;
    }
    const char *v = c->s.spec_version && *c->s.spec_version ? c->s.spec_version : sy_mcp_versions[0];
    struct sy_buf pr;
    sy_buf_init(&pr, 4096);
    SY_BUF_LIT(&pr, "{\"protocolVersion\":\"");
    sy_buf_json_escape(&pr, v, strlen(v));
    SY_BUF_LIT(&pr, "\",\"capabilities\":{},\"clientInfo\":{\"name\":\"switchyard\",\"version\":\"" SY_VERSION "\"}}");
    op_body(op, "initialize", pr.p, pr.len);
    sy_buf_free(&pr);
    c->init_op = op;
    op_arm(op, timeout_ms(c->s.timeout_s));
    mcp_conn_send(op);
}

/* ---- conns ---- */

static char *dupn(struct sy_arena *a, const char *s)
{
    return s ? sy_arena_strndup(a, s, strlen(s)) : NULL;
}

static char **dupv(struct sy_arena *a, char **v, size_t n)
{
    if (!n)
        return NULL;
    char **o = sy_arena_alloc(a, (n + 1) * sizeof *o);
    for (size_t i = 0; i < n; i++)
        o[i] = dupn(a, v[i]);
    o[n] = NULL;
    return o;
}

static void stdio_on_msg(void *ud, const char *line, size_t n)
{
    mcp_conn_message(ud, NULL, line, n);
}

static void stdio_on_state(void *ud, int running)
{
    struct mconn *c = ud;
    if (!running) {
        mcp_conn_lost(c);
        return;
    }
    if (!ml_empty(&c->waiting))
        conn_init_start(c);
}

static const struct sy_mcp_stdio_cbs stdio_cbs = {stdio_on_msg, stdio_on_state};

static struct mconn *conn_get(struct sy_mcp_pool *p, const struct sy_mcp_server *s)
{
    for (struct mlink *l = p->conns.next; l != &p->conns; l = l->next) {
        struct mconn *c = ml_entry(l, struct mconn, link);
        if (!strcmp(c->s.fingerprint, s->fingerprint))
            return c;
    }
    struct mconn *c = calloc(1, sizeof *c);
    struct sy_arena *a = malloc(sizeof *a);
    if (!c || !a) {
        free(c);
        free(a);
        return NULL;
    }
    sy_arena_init(a);
    c->p = p;
    c->smem = a;
    c->s.idx = s->idx;
    c->s.id = dupn(a, s->id);
    c->s.name = dupn(a, s->name ? s->name : s->id ? s->id : "?");
    c->s.alias = dupn(a, s->alias);
    c->s.prefix = dupn(a, s->prefix);
    c->s.url = dupn(a, s->url);
    c->s.transport = s->transport;
    c->s.spec_version = dupn(a, s->spec_version);
    c->s.auth_type = s->auth_type;
    c->s.auth_value = dupn(a, s->auth_value);
    c->s.token_url = dupn(a, s->token_url);
    c->s.client_id = dupn(a, s->client_id);
    c->s.client_secret = dupn(a, s->client_secret);
    c->s.scopes = dupn(a, s->scopes);
    c->s.command = dupn(a, s->command);
    c->s.args = dupv(a, s->args, s->nargs);
    c->s.nargs = s->nargs;
    c->s.env = dupv(a, s->env, s->nenv);
    c->s.nenv = s->nenv;
    c->s.timeout_s = s->timeout_s;
    c->s.from_db = s->from_db;
    memcpy(c->s.fingerprint, s->fingerprint, sizeof c->s.fingerprint);
    /* the static headers, checked once (lines we own dropped) */
    if (s->static_headers && *s->static_headers) {
        struct sy_buf h;
        sy_buf_init(&h, 64 << 10);
        if (mcp_headers_take(s->static_headers, strlen(s->static_headers), &h) == 0)
            c->s.static_headers = sy_arena_strndup(a, h.p ? h.p : "", h.len);
        else
            sy_warn("mcp: server '%s': static_headers ignored (not header lines)", c->s.name ? c->s.name : "?");
        sy_buf_free(&h);
    }
    ml_init(&c->waiting);
    ml_init(&c->parked);
    ml_init(&c->flight);
    sy_buf_init(&c->tok_body, 64 << 10);
    sy_buf_init(&c->tok_resp, 64 << 10);
    sy_framer_init(&c->sfr, 0 /* SSE */, DEFAULT_MAX_RESULT + (64 << 10));
    if (s->transport == SY_MCP_STDIO) {
        c->stdio = sy_mcp_stdio_start(p->loop, &c->s, DEFAULT_MAX_RESULT + (64 << 10), &stdio_cbs, c);
        if (!c->stdio)
            sy_warn("mcp: server '%s': the stdio server could not be started", c->s.name ? c->s.name : "?");
    }
    ml_push(&p->conns, &c->link);
    return c;
}

/* Ops of list l that belong to c are finished with err now (pool closing)
 * or their conn pointer cleared (they were decided already). */
static void unlink_kicked(struct mlink *l, struct mconn *c)
{
    for (struct mlink *e = l->next; e != l; e = e->next) {
        struct sy_mcp_op *op = ml_entry(e, struct sy_mcp_op, q);
        if (op->c == c)
            op->c = NULL;
    }
}

static void conn_free(struct mconn *c, int err, const char *why)
{
    struct sy_mcp_pool *p = c->p;
    c->state = CS_IDLE;
    c->init_op = NULL;
    if (c->session && c->s.transport == SY_MCP_HTTP && !p->closing)
        mcp_http_delete(p, c);
    mcp_sse_close(c);
    mcp_auth_close(c);
    if (c->stdio) {
        sy_mcp_stdio_stop(c->stdio);
        c->stdio = NULL;
    }
    struct mlink all;
    ml_init(&all);
    ml_move(&all, &c->waiting);
    ml_move(&all, &c->parked);
    ml_move(&all, &c->flight);
    for (struct mlink *e = all.next; e != &all; e = e->next) {
        struct sy_mcp_op *op = ml_entry(e, struct sy_mcp_op, q);
        op->where = OPW_NONE;
        if (op->ureq) {
            sy_ureq_cancel(op->ureq);
            op->ureq = NULL;
        }
    }
    mcp_fail_list(&all, err, why);
    unlink_kicked(&p->kick, c);
    unlink_kicked(&p->kicking, c);
    free(c->session);
    free(c->token);
    sy_buf_free(&c->tok_body);
    sy_buf_free(&c->tok_resp);
    sy_framer_free(&c->sfr);
    ml_del(&c->link);
    sy_arena_free(c->smem);
    free(c->smem);
    free(c);
}

void mcp_conn_lost(struct mconn *c)
{
    c->state = c->state == CS_INIT ? CS_INIT : CS_IDLE; /* a handshake in flight fails on its own */
    if (c->state == CS_IDLE) {
        free(c->session);
        c->session = NULL;
        c->version[0] = 0;
        c->gen++;
    }
    if (c->s.transport == SY_MCP_HTTP)
        return; /* requests in flight learn it themselves (404) */
    mcp_sse_close(c);
    char m[200];
    snprintf(m, sizeof m, "MCP server '%s': connection lost", c->s.name ? c->s.name : "?");
    mcp_fail_list(&c->flight, SY_EUPRESET, m);
    mcp_fail_list(&c->parked, SY_EUPRESET, m);
}

/* ---- sending ---- */

void mcp_conn_send(struct sy_mcp_op *op)
{
    struct mconn *c = op->c;
    int rc = 0;
    switch (c->s.transport) {
    case SY_MCP_HTTP:
        if (mcp_auth_wait(op))
            return;
        rc = mcp_http_send(op);
        break;
    case SY_MCP_SSE:
        if (mcp_auth_wait(op))
            return;
        rc = mcp_sse_send(op);
        break;
    case SY_MCP_STDIO:
        if (!c->stdio || sy_mcp_stdio_send(c->stdio, op->body.p, op->body.len) != 0) {
            mcp_op_failf(op, SY_EUPRESET, "MCP server '%s': the stdio server is not running", mcp_op_name(op));
            return;
        }
        if (op->notify) {
            mcp_op_finish(op, 0, "", 0);
            return;
        }
        op->where = OPW_FLIGHT;
        ml_push(&c->flight, &op->q);
        return;
    }
    if (rc)
        mcp_op_failf(op, rc, "MCP server '%s': cannot send to %s (%s)", mcp_op_name(op), c->s.url ? c->s.url : "?",
                     sy_err_name(rc));
}

static void conn_submit(struct sy_mcp_op *op)
{
    struct mconn *c = op->c;
    if (c->state == CS_READY) {
        mcp_conn_send(op);
        return;
    }
    op->where = OPW_WAIT;
    ml_push(&c->waiting, &op->q);
    if (c->state == CS_IDLE) {
        if (c->s.transport == SY_MCP_STDIO && !c->stdio) {
            char m[300];
            snprintf(m, sizeof m, "MCP server '%s': %s", c->s.name,
                     c->s.from_db ? "a stdio server from the database is never started (only the config may start "
                                    "processes)"
                                  : "the stdio server could not be started");
            mcp_fail_list(&c->waiting, SY_EUPCONNECT, m);
            return;
        }
        conn_init_start(c);
    }
}

void mcp_conn_resubmit(struct sy_mcp_op *op)
{
    struct mconn *c = op->c;
    if (op->gen == c->gen && c->state == CS_READY)
        mcp_conn_lost(c); /* the first to learn the session is gone */
    op->retried_404 = 1;
    conn_submit(op);
}

/* A message nobody waits for an answer to. */
void mcp_conn_reply(struct mconn *c, const char *msg, size_t n)
{
    struct sy_mcp_op *op = op_new(c->p, c, OPK_REPLY);
    if (!op)
        return;
    op->notify = 1;
    sy_buf_append(&op->body, msg, n);
    op_arm(op, timeout_ms(c->s.timeout_s));
    mcp_conn_send(op);
}

static void send_cancelled(struct mconn *c, uint64_t wid, const char *reason)
{
    if (!c || c->state != CS_READY || !wid)
        return;
    char m[256];
    int n = snprintf(m, sizeof m,
                     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":%" PRIu64
                     ",\"reason\":\"%s\"}}",
                     wid, reason);
    mcp_conn_reply(c, m, (size_t)n);
}

/* ---- answers ---- */

/* Deliver answer p[0..n) (scanned: sc) to op: capped, our id swapped for
 * the caller's. */
static void op_deliver(struct sy_mcp_op *op, const char *p, size_t n, const struct mcp_scan *sc)
{
    if (n > op->max_result) {
        mcp_op_failf(op, SY_ENOSPC, "MCP server answer larger than %zu bytes", op->max_result);
        return;
    }
    if (!op->cid || !sc->id) {
        mcp_op_finish(op, 0, p, n);
        return;
    }
    struct sy_buf b;
    size_t pre = (size_t)(sc->id - p);
    sy_buf_init(&b, n + op->cid_len + 16);
    sy_buf_append(&b, p, pre);
    sy_buf_append(&b, op->cid, op->cid_len);
    sy_buf_append(&b, sc->id + sc->id_len, n - pre - sc->id_len);
    if (sy_buf_failed(&b))
        mcp_op_failf(op, SY_ENOMEM, "out of memory");
    else
        mcp_op_finish(op, 0, b.p, b.len);
    sy_buf_free(&b);
}

static int is_null(const char *p, size_t n)
{
    return n == 4 && !memcmp(p, "null", 4);
}

int mcp_conn_message(struct mconn *c, struct sy_mcp_op *want, const char *p, size_t n)
{
    struct mcp_scan sc;
    if (mcp_msg_scan(p, n, &sc) != 0) {
        sy_debug("mcp: server '%s' sent a message that is not a JSON object", c->s.name);
        return 0;
    }
    if (sc.method) {
        if (!sc.id)
            return 0; /* a notification: progress, logging, list changes */
        struct sy_buf r;
        sy_buf_init(&r, sc.id_len + 256);
        SY_BUF_LIT(&r, "{\"jsonrpc\":\"2.0\",\"id\":");
        sy_buf_append(&r, sc.id, sc.id_len);
        if (sc.method_len == 6 && !memcmp(sc.method, "\"ping\"", 6))
            SY_BUF_LIT(&r, ",\"result\":{}}");
        else /* sampling, elicitation, roots: a gateway has no user to ask */
            SY_BUF_LIT(&r, ",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}");
        if (!sy_buf_failed(&r))
            mcp_conn_reply(c, r.p, r.len);
        sy_buf_free(&r);
        return 0;
    }
    if (!sc.has_result && !sc.has_error)
        return 0;
    uint64_t id = sc.id ? mcp_id_u64(sc.id, sc.id_len) : 0;
    if (want) {
        if (id == want->wid || (!id && sc.has_error && (!sc.id || is_null(sc.id, sc.id_len)))) {
            op_deliver(want, p, n, &sc);
            return 1;
        }
        return 0;
    }
    if (!id)
        return 0;
    for (struct mlink *e = c->flight.next; e != &c->flight; e = e->next) {
        struct sy_mcp_op *op = ml_entry(e, struct sy_mcp_op, q);
        if (op->wid == id) {
            op_deliver(op, p, n, &sc);
            return 0;
        }
    }
    return 0;
}

/* ---- the kick: every callback runs from here ---- */

static void op_callbacks(struct sy_mcp_op *op)
{
    const char *m = op->resp.p ? op->resp.p : "";
    size_t n = op->resp.len;
    switch (op->kind) {
    case OPK_USER:
        if (op->done)
            op->done(op->ud, op->kerr, m, n);
        break;
    case OPK_INIT:
    case OPK_INITIALIZED: init_fin(op, op->kerr, m, n); break;
    case OPK_REPLY: break;
    }
}

void mcp_op_drained(struct sy_mcp_op *op)
{
    op_free(op);
}

static void kick_one(struct sy_mcp_pool *p, struct sy_mcp_op *op)
{
    ml_del(&op->q);
    op->where = OPW_NONE;
    op_callbacks(op);
    if (op->ureq && op->kerr == 0 &&
        !p->closing) { /* an SSE answer: read the rest of its stream, then pool the connection */
        op->where = OPW_DRAIN;
        ml_push(&p->drains, &op->q);
        op_arm(op, DRAIN_MS);
        return;
    }
    op_free(op);
}

static void kick_cb(uv_timer_t *t)
{
    struct sy_mcp_pool *p = t->data;
    ml_move(&p->kicking, &p->kick);
    while (!ml_empty(&p->kicking))
        kick_one(p, ml_entry(p->kicking.next, struct sy_mcp_op, q));
}

static void dl_cb(uv_timer_t *t)
{
    struct sy_mcp_pool *p = t->data;
    p->dl_armed = 0;
    uint64_t now = uv_now(p->loop);
    while (!ml_empty(&p->deadlines)) {
        struct sy_mcp_op *op = ml_entry(p->deadlines.next, struct sy_mcp_op, tl);
        if (op->deadline > now)
            break;
        if (op->where == OPW_DRAIN) {
            op_free(op);
            continue;
        }
        if (op->where == OPW_FLIGHT && !op->notify)
            send_cancelled(op->c, op->wid, "timeout");
        if (op->kind == OPK_USER)
            p->st.timeouts++;
        mcp_op_failf(op, SY_EUPTIMEOUT, "MCP server '%s' did not answer in time", mcp_op_name(op));
    }
    dl_rearm(p);
}

/* ---- public API ---- */

struct sy_mcp_pool *sy_mcp_pool_new(uv_loop_t *loop, struct sy_upool *up)
{
    if (!loop)
        return NULL;
    struct sy_mcp_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->loop = loop;
    p->up = up;
    ml_init(&p->conns);
    ml_init(&p->deadlines);
    ml_init(&p->kick);
    ml_init(&p->kicking);
    ml_init(&p->drains);
    uv_timer_init(loop, &p->dl_timer);
    uv_timer_init(loop, &p->kick_timer);
    p->dl_timer.data = p->kick_timer.data = p;
    return p;
}

void sy_mcp_pool_sync(struct sy_mcp_pool *p, const struct sy_mcp_set *set)
{
    if (!p || p->closing)
        return;
    struct mlink *l = p->conns.next;
    while (l != &p->conns) {
        struct mconn *c = ml_entry(l, struct mconn, link);
        l = l->next;
        int keep = 0;
        for (size_t i = 0; set && i < set->n && !keep; i++)
            keep = !strcmp(set->s[i].fingerprint, c->s.fingerprint);
        if (!keep)
            conn_free(c, SY_ECANCELED, "the MCP server was removed or changed");
    }
}

static void pool_closed(uv_handle_t *h)
{
    struct sy_mcp_pool *p = h->data;
    if (--p->handles == 0)
        free(p);
}

void sy_mcp_pool_close(struct sy_mcp_pool *p)
{
    if (!p || p->closing)
        return;
    p->closing = 1;
    while (!ml_empty(&p->conns))
        conn_free(ml_entry(p->conns.next, struct mconn, link), SY_ECANCELED, "the MCP client pool closed");
    /* decided ops: their callbacks now; draining requests: dropped */
    ml_move(&p->kicking, &p->kick);
    while (!ml_empty(&p->kicking))
        kick_one(p, ml_entry(p->kicking.next, struct sy_mcp_op, q));
    while (!ml_empty(&p->drains))
        op_free(ml_entry(p->drains.next, struct sy_mcp_op, q));
    while (!ml_empty(&p->deadlines))
        ml_del(p->deadlines.next);
    p->handles = 2;
    uv_timer_stop(&p->dl_timer);
    uv_timer_stop(&p->kick_timer);
    uv_close((uv_handle_t *)&p->dl_timer, pool_closed);
    uv_close((uv_handle_t *)&p->kick_timer, pool_closed);
}

struct sy_mcp_op *sy_mcp_request(struct sy_mcp_pool *p, const struct sy_mcp_req *r, sy_mcp_done_fn done, void *ud)
{
    if (!p || p->closing || !r || !r->s || !r->method || !*r->method || !done)
        return NULL;
    if (r->s->transport != SY_MCP_STDIO && (!r->s->url || !*r->s->url))
        return NULL;
    if (r->params && r->params_len) {
        size_t i = 0;
        while (i < r->params_len && strchr(" \t\r\n", r->params[i]))
            i++;
        if (i == r->params_len || (r->params[i] != '{' && r->params[i] != '['))
            return NULL;
    }
    struct mconn *c = conn_get(p, r->s);
    if (!c)
        return NULL;
    struct sy_mcp_op *op = op_new(p, c, OPK_USER);
    if (!op)
        return NULL;
    op->done = done;
    op->ud = ud;
    op->sname = r->s->name;
    op->notify = r->notify != 0;
    if (r->max_result)
        op->max_result = r->max_result;
    op->resp.cap = op->max_result + 4096; /* room for the caller's id */
    op_body(op, r->method, r->params, r->params ? r->params_len : 0);
    if (r->id && r->id_len && !op->notify) {
        op->cid = malloc(r->id_len);
        if (op->cid) {
            memcpy(op->cid, r->id, r->id_len);
            op->cid_len = r->id_len;
        }
    }
    p->st.requests++;
    op_arm(op, timeout_ms(r->timeout_s > 0 ? r->timeout_s
                                           : r->s->timeout_s)); /* the named server's: a conn may serve several */
    if (sy_buf_failed(&op->body)) {
        mcp_op_failf(op, SY_ENOSPC, "the MCP request is too large");
        return op;
    }
    if (r->headers && r->headers_len && mcp_headers_take(r->headers, r->headers_len, &op->xhdr) != 0) {
        mcp_op_failf(op, SY_EINVAL, "bad header lines for the MCP server");
        return op;
    }
    conn_submit(op);
    return op;
}

void sy_mcp_cancel(struct sy_mcp_op *op)
{
    if (!op)
        return;
    if (op->where == OPW_FLIGHT && !op->notify && op->c)
        send_cancelled(op->c, op->wid, "cancelled by the client");
    op->done = NULL;
    if (op->where == OPW_KICK)
        return; /* the kick frees it, calling nobody */
    op_free(op);
}

void sy_mcp_pool_stats(const struct sy_mcp_pool *p, struct sy_mcp_pool_stats *st)
{
    *st = p->st;
    for (struct mlink *l = p->conns.next; l != &p->conns; l = l->next) {
        struct mconn *c = ml_entry(l, struct mconn, link);
        if (c->stdio) {
            unsigned long sp = 0, re = 0;
            sy_mcp_stdio_counts(c->stdio, &sp, &re);
            st->spawns += sp;
            st->restarts += re;
        }
    }
}

/* ---- message scanning ----
 * One pass over a message from a server: the text must be one JSON object
 * (strict RFC 8259: strings checked by jdom's string reader, numbers by the
 * grammar, nesting at most SY_JDOM_MAX_DEPTH), and its top-level id, method,
 * result and error are found. A repeated one of those four refuses the
 * message (which of the two would the server mean?). No allocation. */

static const char *skip_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

static const char *skip_digits(const char *p, const char *e)
{
    while (p < e && *p >= '0' && *p <= '9')
        p++;
    return p;
}

static const char *skip_number(const char *p, const char *e)
{
    if (p < e && *p == '-')
        p++;
    if (p >= e)
        return NULL;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        p = skip_digits(p, e);
    else
        return NULL;
    if (p < e && *p == '.') {
        const char *q = skip_digits(++p, e);
        if (q == p)
            return NULL;
        p = q;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-'))
            p++;
        const char *q = skip_digits(p, e);
        if (q == p)
            return NULL;
        p = q;
    }
    return p;
}

static const char *skip_lit(const char *p, const char *e, const char *lit, size_t n)
{
    return (size_t)(e - p) >= n && !memcmp(p, lit, n) ? p + n : NULL;
}

static const char *skip_value(const char *p, const char *e, int depth)
{
    if (p >= e)
        return NULL;
    switch (*p) {
    case '"': {
        size_t l = sy_jdom_string_len(p, (size_t)(e - p), NULL);
        return l ? p + l : NULL;
    }
    case '{':
    case '[': {
        char close = *p == '{' ? '}' : ']';
        int obj = *p == '{';
        if (depth >= SY_JDOM_MAX_DEPTH)
            return NULL;
        p = skip_ws(p + 1, e);
        if (p < e && *p == close)
            return p + 1;
        for (;;) {
            if (obj) {
                if (p >= e || *p != '"')
                    return NULL;
                size_t l = sy_jdom_string_len(p, (size_t)(e - p), NULL);
                if (!l)
                    return NULL;
                p = skip_ws(p + l, e);
                if (p >= e || *p != ':')
                    return NULL;
                p = skip_ws(p + 1, e);
            }
            p = skip_value(p, e, depth + 1);
            if (!p)
                return NULL;
            p = skip_ws(p, e);
            if (p >= e)
                return NULL;
            if (*p == close)
                return p + 1;
            if (*p != ',')
                return NULL;
            p = skip_ws(p + 1, e);
        }
    }
    case 't': return skip_lit(p, e, "true", 4);
    case 'f': return skip_lit(p, e, "false", 5);
    case 'n': return skip_lit(p, e, "null", 4);
    default: return skip_number(p, e);
    }
}

int mcp_msg_scan(const char *p, size_t n, struct mcp_scan *out)
{
    memset(out, 0, sizeof *out);
    const char *e = p + n;
    p = skip_ws(p, e);
    if (p >= e || *p != '{')
        return -1;
    p = skip_ws(p + 1, e);
    if (p < e && *p == '}')
        return skip_ws(p + 1, e) == e ? 0 : -1;
    for (;;) {
        if (p >= e || *p != '"')
            return -1;
        size_t kl = sy_jdom_string_len(p, (size_t)(e - p), NULL);
        if (!kl)
            return -1;
        const char *k = p;
        p = skip_ws(p + kl, e);
        if (p >= e || *p != ':')
            return -1;
        const char *v = skip_ws(p + 1, e);
        const char *ve = skip_value(v, e, 1);
        if (!ve)
            return -1;
        if (kl == 4 && !memcmp(k, "\"id\"", 4)) {
            if (out->id)
                return -1;
            out->id = v;
            out->id_len = (size_t)(ve - v);
        } else if (kl == 8 && !memcmp(k, "\"method\"", 8)) {
            if (out->method || *v != '"')
                return -1;
            out->method = v;
            out->method_len = (size_t)(ve - v);
        } else if (kl == 8 && !memcmp(k, "\"result\"", 8)) {
            if (out->has_result)
                return -1;
            out->has_result = 1;
        } else if (kl == 7 && !memcmp(k, "\"error\"", 7)) {
            if (out->has_error)
                return -1;
            out->has_error = 1;
        }
        p = skip_ws(ve, e);
        if (p >= e)
            return -1;
        if (*p == '}')
            return skip_ws(p + 1, e) == e ? 0 : -1;
        if (*p != ',')
            return -1;
        p = skip_ws(p + 1, e);
    }
}

uint64_t mcp_id_u64(const char *p, size_t n)
{
    if (!n || n > 19 || (p[0] == '0' && n > 1))
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return 0;
        v = v * 10 + (uint64_t)(p[i] - '0');
    }
    return v;
}
