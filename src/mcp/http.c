/* http.c - MCP's streamable HTTP transport, the client side (protocol
 * revisions 2025-03-26 and later), one upstream request per message:
 *
 *   POST <url>
 *   Accept: application/json, text/event-stream
 *   Content-Type: application/json
 *   Mcp-Session-Id: <the id the initialize answer carried>     (after it)
 *   MCP-Protocol-Version: <the negotiated revision>            (after it)
 *   <static headers, the auth header, the caller's lines>
 *
 *   answer                          what happens
 *   ------------------------------  ----------------------------------------
 *   200 application/json            the body is the answer (capped at max_result)
 *   200 text/event-stream           `message` events are read until the one
 *                                   with our id; the server's requests in it
 *                                   (ping) are answered by a POST of their
 *                                   own, its notifications dropped; the rest
 *                                   of the stream is drained (client.c)
 *   202 (or 200/204 without body)   a notification went through
 *   404 on a session                it expired: initialize again, once per op
 *   401 with OAuth2                 the token is dropped and fetched again, once
 *   other 4xx/5xx                   SY_EUPPROTO: the status and the start of the body
 *
 * Timeouts are the pool's (one deadline per op); only connecting is
 * bounded here.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "core/log.h"
#include "mcp/client_int.h"
#include "upstream/client.h"

#define EXCERPT 300

static int hv_eq(const struct sy_uheader *h, const char *name)
{
    return h->name_len == strlen(name) && !strncasecmp(h->name, name, h->name_len);
}

/* A session id is visible ASCII (0x21..0x7E), as the spec requires. */
static int session_ok(const char *v, size_t n)
{
    if (!n || n > 512)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x21 || (unsigned char)v[i] > 0x7e)
            return 0;
    return 1;
}

static int on_head(void *ud, int status, const struct sy_uheader *h, size_t nh)
{
    struct sy_mcp_op *op = ud;
    if (op->where != OPW_FLIGHT)
        return 0; /* decided already, draining */
    op->status = status;
    for (size_t i = 0; i < nh; i++) {
        if (hv_eq(&h[i], "content-type")) {
            if (h[i].value_len >= 17 && memmem(h[i].value, h[i].value_len, "text/event-stream", 17))
                op->is_sse = 1;
        } else if (hv_eq(&h[i], "mcp-session-id") && op->kind == OPK_INIT && status / 100 == 2) {
            struct mconn *c = op->c;
            if (!session_ok(h[i].value, h[i].value_len)) {
                op->ureq = NULL;
                mcp_op_failf(op, SY_EUPPROTO, "MCP server '%s' sent a malformed Mcp-Session-Id", mcp_op_name(op));
                return 1;
            }
            free(c->session);
            c->session = strndup(h[i].value, h[i].value_len);
        }
    }
    if (op->is_sse && status / 100 == 2) {
        op->fr = calloc(1, sizeof *op->fr);
        if (!op->fr) {
            op->ureq = NULL;
            mcp_op_failf(op, SY_ENOMEM, "out of memory");
            return 1;
        }
        sy_framer_init(op->fr, 0 /* SSE */, op->max_result);
    }
    return 0;
}

static int on_event(void *ud, const char *type, size_t tl, const char *data, size_t dl)
{
    struct sy_mcp_op *op = ud;
    if (tl && !(tl == 7 && !memcmp(type, "message", 7)))
        return 0;
    return mcp_conn_message(op->c, op, data, dl);
}

static int on_body(void *ud, const char *p, size_t n)
{
    struct sy_mcp_op *op = ud;
    if (op->where != OPW_FLIGHT)
        return 0;                /* decided already: drain */
    if (op->status / 100 != 2) { /* keep the start of an error body */
        if (op->resp.len < EXCERPT)
            sy_buf_append(&op->resp, p, n < EXCERPT - op->resp.len ? n : EXCERPT - op->resp.len);
        return 0;
    }
    if (op->fr) {
        int rc = sy_sse_feed(op->fr, p, n, on_event, op);
        if (rc < 0) {
            op->ureq = NULL;
            mcp_op_failf(op, SY_ENOSPC, "MCP server '%s': an answer larger than %zu bytes", mcp_op_name(op),
                         op->max_result);
            return 1;
        }
        return 0;
    }
    if (op->resp.len + n > op->max_result) {
        op->ureq = NULL;
        mcp_op_failf(op, SY_ENOSPC, "MCP server '%s': an answer larger than %zu bytes", mcp_op_name(op),
                     op->max_result);
        return 1;
    }
    if (sy_buf_append(&op->resp, p, n) != 0) {
        op->ureq = NULL;
        mcp_op_failf(op, SY_ENOMEM, "out of memory");
        return 1;
    }
    return 0;
}

static void json_answer(struct sy_mcp_op *op)
{
    struct mconn *c = op->c;
    if (!op->resp.len) {
        if (op->notify)
            mcp_op_finish(op, 0, "", 0);
        else
            mcp_op_failf(op, SY_EUPPROTO, "MCP server '%s' answered a request with no message (HTTP %d)",
                         mcp_op_name(op), op->status);
        return;
    }
    if (op->notify) { /* a body to a notification: ignored */
        sy_buf_reset(&op->resp);
        mcp_op_finish(op, 0, "", 0);
        return;
    }
    if (!mcp_conn_message(c, op, op->resp.p, op->resp.len)) {
        char ex[101];
        size_t n = op->resp.len < 100 ? op->resp.len : 100;
        for (size_t i = 0; i < n; i++)
            ex[i] = (unsigned char)op->resp.p[i] < 0x20 ? ' ' : op->resp.p[i];
        ex[n] = 0;
        mcp_op_failf(op, SY_EUPPROTO, "MCP server '%s' answered with something that is not the answer (%s)",
                     mcp_op_name(op), ex);
    }
}

static void on_done(void *ud, int err)
{
    struct sy_mcp_op *op = ud;
    op->ureq = NULL;
    if (op->where == OPW_DRAIN) {
        mcp_op_drained(op);
        return;
    }
    if (op->where != OPW_FLIGHT)
        return; /* decided already: the kick frees it */
    struct mconn *c = op->c;
    if (err) {
        mcp_op_failf(op, err, "MCP server '%s': %s", mcp_op_name(op),
                     err == SY_EUPCONNECT || err == SY_EDNS ? "cannot connect"
                     : err == SY_ETLS                       ? "TLS failed"
                     : err == SY_EUPRESET                   ? "connection reset"
                                                            : sy_err_name(err));
        return;
    }
    int st = op->status;
    if (st == 404 && op->kind == OPK_USER && op->sent_sid && !op->retried_404) {
        /* the session expired on the server: initialize again, then retry */
        ml_del(&op->q);
        op->where = OPW_NONE;
        mcp_conn_resubmit(op);
        return;
    }
    if (st == 401 && !op->retried_401 && mcp_auth_rejected(c, op->token_gen)) {
        ml_del(&op->q);
        op->where = OPW_NONE;
        op->retried_401 = 1;
        mcp_conn_send(op);
        return;
    }
    if (st / 100 != 2) {
        char ex[EXCERPT + 1];
        size_t n = op->resp.len < EXCERPT ? op->resp.len : EXCERPT;
        for (size_t i = 0; i < n; i++) /* one line in a log or an error message */
            ex[i] = (unsigned char)op->resp.p[i] < 0x20 ? ' ' : op->resp.p[i];
        ex[n] = 0;
        mcp_op_failf(op, SY_EUPPROTO, "MCP server '%s' answered HTTP %d: %s", mcp_op_name(op), st, ex);
        return;
    }
    if (op->fr) {
        sy_sse_finish(op->fr, on_event, op);
        if (op->where == OPW_FLIGHT) {
            if (op->notify)
                mcp_op_finish(op, 0, "", 0);
            else
                mcp_op_failf(op, SY_EUPPROTO, "MCP server '%s' ended its stream without the answer", mcp_op_name(op));
        }
        return;
    }
    json_answer(op);
}

static const struct sy_ureq_cbs cbs = {on_head, on_body, on_done};

int mcp_http_send(struct sy_mcp_op *op)
{
    struct mconn *c = op->c;
    op->status = 0;
    op->is_sse = 0;
    sy_buf_reset(&op->resp);
    if (op->fr) {
        sy_framer_free(op->fr);
        free(op->fr);
        op->fr = NULL;
    }
    struct sy_buf *h = &op->hdr;
    sy_buf_reset(h);
    SY_BUF_LIT(h, "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n");
    op->sent_sid = 0;
    if (op->kind != OPK_INIT) {
        if (c->session) {
            op->sent_sid = 1;
            SY_BUF_LIT(h, "Mcp-Session-Id: ");
            sy_buf_puts(h, c->session);
            SY_BUF_LIT(h, "\r\n");
        }
        if (c->version[0]) {
            SY_BUF_LIT(h, "MCP-Protocol-Version: ");
            sy_buf_puts(h, c->version);
            SY_BUF_LIT(h, "\r\n");
        }
    }
    mcp_auth_headers(c, &op->xhdr, h);
    if (sy_buf_failed(h))
        return SY_ENOSPC;
    op->gen = c->gen;
    op->token_gen = c->token_gen;
    op->bodyv = uv_buf_init(op->body.p, (unsigned)op->body.len);
    struct sy_ureq_opts o = {
        .url = c->s.url,
        .method = "POST",
        .headers = h->p,
        .headers_len = h->len,
        .body = &op->bodyv,
        .nbody = 1,
        .connect_timeout_s = c->s.timeout_s > 0 && c->s.timeout_s < 10 ? c->s.timeout_s : 10,
    };
    op->ureq = sy_ureq_start(op->p->up, &o, &cbs, op);
    if (!op->ureq)
        return SY_EINVAL;
    op->where = OPW_FLIGHT;
    ml_push(&c->flight, &op->q);
    return 0;
}

/* ---- DELETE of a session we drop: nobody waits ---- */

struct del {
    struct sy_buf hdr;
};

static void del_done(void *ud, int err)
{
    struct del *d = ud;
    (void)err;
    sy_buf_free(&d->hdr);
    free(d);
}

static const struct sy_ureq_cbs del_cbs = {NULL, NULL, del_done};

void mcp_http_delete(struct sy_mcp_pool *p, struct mconn *c)
{
    if (!p->up || !c->session || !c->s.url)
        return;
    struct del *d = calloc(1, sizeof *d);
    if (!d)
        return;
    sy_buf_init(&d->hdr, 64 << 10);
    SY_BUF_LIT(&d->hdr, "Mcp-Session-Id: ");
    sy_buf_puts(&d->hdr, c->session);
    SY_BUF_LIT(&d->hdr, "\r\n");
    if (c->version[0]) {
        SY_BUF_LIT(&d->hdr, "MCP-Protocol-Version: ");
        sy_buf_puts(&d->hdr, c->version);
        SY_BUF_LIT(&d->hdr, "\r\n");
    }
    mcp_auth_headers(c, NULL, &d->hdr);
    struct sy_ureq_opts o = {
        .url = c->s.url,
        .method = "DELETE",
        .headers = d->hdr.p,
        .headers_len = d->hdr.len,
        .connect_timeout_s = 5,
        .total_timeout_s = 5,
    };
    if (sy_buf_failed(&d->hdr) || !sy_ureq_start(p->up, &o, &del_cbs, d)) {
        sy_buf_free(&d->hdr);
        free(d);
    }
}
