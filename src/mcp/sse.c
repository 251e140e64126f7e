/* sse.c - MCP's old HTTP+SSE transport (protocol 2024-11-05), the client
 * side: one long GET stream per server, messages POSTed to the endpoint the
 * stream names.
 *
 *   GET <url>   Accept: text/event-stream          (auth headers as for POSTs)
 *     event: endpoint   data: /messages?sessionId=…  resolved against <url>;
 *                                                    another origin is refused
 *     event: message    data: {JSON-RPC}             answers, matched by our id;
 *                                                    the server's requests (ping)
 *                                                    answered, notifications dropped
 *   POST <endpoint>  Content-Type: application/json  one message; 202 (any 2xx) expected
 *
 * Ops wait parked until the endpoint is known, then are POSTed and wait in
 * flight for their message. A POST answered with an error fails its op; the
 * POST may also finish after the answer came on the stream (the server
 * handles the message before it writes 202), so a post owns its request and
 * body and only points at its op (op->post clears the pointer when the op is
 * decided first). When the stream ends or fails, every op in flight fails
 * with SY_EUPRESET and the session is gone: the next request opens a new
 * stream and initializes again (a server that is down is not retried in the
 * background).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "core/log.h"
#include "mcp/client_int.h"
#include "upstream/client.h"

#define EXCERPT   300
#define MAX_EVENT (((size_t)16 << 20) + (64 << 10))

/* ---- the endpoint url ---- */

/* Length of "scheme://authority" at the start of u; 0 when u is not an
 * absolute http(s) url. */
static size_t origin_len(const char *u, size_t n)
{
    size_t s;
    if (n >= 7 && !strncasecmp(u, "http://", 7))
        s = 7;
    else if (n >= 8 && !strncasecmp(u, "https://", 8))
        s = 8;
    else
        return 0;
    size_t i = s;
    while (i < n && u[i] != '/' && u[i] != '?' && u[i] != '#')
        i++;
    return i > s ? i : 0;
}

static int same_origin(const char *a, size_t al, const char *b, size_t bl)
{
    return al == bl && !strncasecmp(a, b, al);
}

int mcp_url_resolve(const char *base, const char *ref, size_t n, struct sy_buf *out)
{
    size_t bl = strlen(base), bo = origin_len(base, bl);
    if (!bo || !n || n > 4096)
        return -1;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)ref[i] < 0x21 || (unsigned char)ref[i] > 0x7e)
            return -1; /* spaces, controls, raw UTF-8: not a url we send */
    const char *hash = memchr(ref, '#', n);
    if (hash)
        n = (size_t)(hash - ref);
    sy_buf_reset(out);
    size_t sc = 0; /* a scheme other than http(s): refused */
    while (sc < n &&
           ((ref[sc] >= 'a' && ref[sc] <= 'z') || (ref[sc] >= 'A' && ref[sc] <= 'Z') ||
            (sc && ((ref[sc] >= '0' && ref[sc] <= '9') || ref[sc] == '+' || ref[sc] == '-' || ref[sc] == '.'))))
        sc++;
    size_t ro = origin_len(ref, n);
    if (sc && sc < n && ref[sc] == ':' && !ro)
        return -1;
    if (ro) {
        if (!same_origin(base, bo, ref, ro))
            return -1;
        sy_buf_append(out, ref, n);
    } else if (n >= 2 && ref[0] == '/' && ref[1] == '/') { /* scheme-relative */
        size_t scheme = (size_t)((const char *)memchr(base, ':', bo) - base) + 1;
        sy_buf_append(out, base, scheme);
        sy_buf_append(out, ref, n);
        if (!same_origin(base, bo, out->p, origin_len(out->p, out->len)))
            return -1;
    } else if (n && ref[0] == '/') {
        sy_buf_append(out, base, bo);
        sy_buf_append(out, ref, n);
    } else {
        /* relative: against the base's path up to its last '/' (or its query for "?…") */
        size_t end = bo;
        while (end < bl && base[end] != '?' && base[end] != '#')
            end++;
        size_t dir = end;
        if (n && ref[0] == '?') {
            sy_buf_append(out, base, end);
        } else {
            while (dir > bo && base[dir - 1] != '/')
                dir--;
            sy_buf_append(out, base, dir);
            if (dir == bo)
                SY_BUF_LIT(out, "/");
        }
        sy_buf_append(out, ref, n);
    }
    return sy_buf_failed(out) ? -1 : 0;
}

/* ---- POSTs ---- */

struct post {
    struct sy_mcp_op *op; /* NULL once the op was decided */
    struct sy_buf body, hdr, err;
    uv_buf_t bv;
    int status;
};

static void post_free(struct post *pp)
{
    if (pp->op)
        pp->op->post = NULL;
    sy_buf_free(&pp->body);
    sy_buf_free(&pp->hdr);
    sy_buf_free(&pp->err);
    free(pp);
}

static int post_head(void *ud, int status, const struct sy_uheader *h, size_t nh)
{
    (void)h;
    (void)nh;
    ((struct post *)ud)->status = status;
    return 0;
}

static int post_body(void *ud, const char *p, size_t n)
{
    struct post *pp = ud;
    if (pp->status / 100 != 2 && pp->err.len < EXCERPT)
        sy_buf_append(&pp->err, p, n < EXCERPT - pp->err.len ? n : EXCERPT - pp->err.len);
    return 0;
}

static void post_done(void *ud, int err)
{
    struct post *pp = ud;
    struct sy_mcp_op *op = pp->op;
    if (op) {
        const char *name = mcp_op_name(op);
        if (err) {
            mcp_op_failf(op, err, "MCP server '%s': POST of the message failed (%s)", name, sy_err_name(err));
        } else if (pp->status / 100 != 2) {
            for (size_t i = 0; i < pp->err.len; i++)
                if ((unsigned char)pp->err.p[i] < 0x20)
                    pp->err.p[i] = ' ';
            mcp_op_failf(op, SY_EUPPROTO, "MCP server '%s' answered HTTP %d: %.*s", name, pp->status, (int)pp->err.len,
                         pp->err.len ? pp->err.p : "");
        } else if (op->notify) {
            mcp_op_finish(op, 0, "", 0);
        }
        /* else: the answer comes on the stream */
    }
    post_free(pp);
}

static const struct sy_ureq_cbs post_cbs = {post_head, post_body, post_done};

static int post_start(struct sy_mcp_op *op)
{
    struct mconn *c = op->c;
    struct post *pp = calloc(1, sizeof *pp);
    if (!pp)
        return SY_ENOMEM;
    sy_buf_init(&pp->body, op->body.len + 1);
    sy_buf_init(&pp->hdr, 128 << 10);
    sy_buf_init(&pp->err, EXCERPT + 1);
    sy_buf_append(&pp->body, op->body.p, op->body.len);
    SY_BUF_LIT(&pp->hdr, "Content-Type: application/json\r\n");
    mcp_auth_headers(c, &op->xhdr, &pp->hdr);
    if (sy_buf_failed(&pp->body) || sy_buf_failed(&pp->hdr)) {
        post_free(pp);
        return SY_ENOSPC;
    }
    pp->bv = uv_buf_init(pp->body.p, (unsigned)pp->body.len);
    struct sy_ureq_opts o = {
        .url = c->endpoint,
        .method = "POST",
        .headers = pp->hdr.p,
        .headers_len = pp->hdr.len,
        .body = &pp->bv,
        .nbody = 1,
        .connect_timeout_s = 10,
        .total_timeout_s = c->s.timeout_s > 0 ? c->s.timeout_s : 60,
    };
    pp->op = op;
    op->token_gen = c->token_gen;
    op->gen = c->gen;
    if (!sy_ureq_start(op->p->up, &o, &post_cbs, pp)) {
        pp->op = NULL;
        post_free(pp);
        return SY_EINVAL;
    }
    op->post = &pp->op;
    op->where = OPW_FLIGHT;
    ml_push(&c->flight, &op->q);
    return 0;
}

/* ---- the stream ---- */

static void stream_fail(struct mconn *c, int err, const char *why)
{
    c->stream = NULL;
    char m[400];
    snprintf(m, sizeof m, "MCP server '%s': %s", c->s.name, why);
    mcp_fail_list(&c->parked, err, m);
    mcp_conn_lost(c);
}

static int stream_event(void *ud, const char *type, size_t tl, const char *data, size_t dl)
{
    struct mconn *c = ud;
    if (tl == 8 && !memcmp(type, "endpoint", 8)) {
        struct sy_buf u;
        sy_buf_init(&u, 8192);
        int rc = mcp_url_resolve(c->s.url, data, dl, &u);
        if (rc == 0) {
            free(c->endpoint);
            c->endpoint = strndup(u.p, u.len);
        }
        sy_buf_free(&u);
        if (rc != 0 || !c->endpoint)
            return 1; /* stream_body fails the stream */
        struct mlink tmp;
        ml_init(&tmp);
        ml_move(&tmp, &c->parked);
        while (!ml_empty(&tmp)) {
            struct sy_mcp_op *op = ml_entry(tmp.next, struct sy_mcp_op, q);
            ml_del(&op->q);
            op->where = OPW_NONE;
            mcp_conn_send(op);
        }
        return 0;
    }
    if (!tl || (tl == 7 && !memcmp(type, "message", 7)))
        mcp_conn_message(c, NULL, data, dl);
    return 0;
}

static int stream_head(void *ud, int status, const struct sy_uheader *h, size_t nh)
{
    struct mconn *c = ud;
    c->stream_status = status;
    c->stream_ok = 0;
    for (size_t i = 0; i < nh; i++)
        if (h[i].name_len == 12 && !strncasecmp(h[i].name, "content-type", 12) && h[i].value_len >= 17 &&
            memmem(h[i].value, h[i].value_len, "text/event-stream", 17))
            c->stream_ok = status == 200;
    if (!c->stream_ok) {
        char why[96];
        if (status == 401)
            mcp_auth_rejected(c, c->token_gen);
        snprintf(why, sizeof why, "the SSE stream was answered HTTP %d%s", status,
                 status == 200 ? " without text/event-stream" : "");
        stream_fail(c, SY_EUPPROTO, why);
        return 1;
    }
    return 0;
}

static int stream_body(void *ud, const char *p, size_t n)
{
    struct mconn *c = ud;
    int rc = sy_sse_feed(&c->sfr, p, n, stream_event, c);
    if (rc != 0) {
        stream_fail(c, SY_EUPPROTO,
                    rc > 0 ? "the SSE stream named a bad endpoint" : "the SSE stream sent an event too large");
        return 1;
    }
    return 0;
}

static void stream_done(void *ud, int err)
{
    struct mconn *c = ud;
    c->stream = NULL;
    stream_fail(c, err ? err : SY_EUPRESET, err ? sy_err_name(err) : "the SSE stream ended");
}

static const struct sy_ureq_cbs stream_cbs = {stream_head, stream_body, stream_done};

static int stream_open(struct mconn *c)
{
    struct sy_buf h;
    sy_buf_init(&h, 128 << 10);
    SY_BUF_LIT(&h, "Accept: text/event-stream\r\nCache-Control: no-cache\r\n");
    mcp_auth_headers(c, NULL, &h);
    if (sy_buf_failed(&h)) {
        sy_buf_free(&h);
        return SY_ENOSPC;
    }
    sy_framer_free(&c->sfr);
    sy_framer_init(&c->sfr, 0 /* SSE */, MAX_EVENT);
    struct sy_ureq_opts o = {
        .url = c->s.url,
        .method = "GET",
        .headers = h.p,
        .headers_len = h.len,
        .connect_timeout_s = 10,
        .first_byte_timeout_s = c->s.timeout_s > 0 ? c->s.timeout_s : 60,
    };
    c->stream = sy_ureq_start(c->p->up, &o, &stream_cbs, c);
    sy_buf_free(&h);
    return c->stream ? 0 : SY_EINVAL;
}

int mcp_sse_send(struct sy_mcp_op *op)
{
    struct mconn *c = op->c;
    if (!c->endpoint) {
        if (!c->stream) {
            int rc = stream_open(c);
            if (rc)
                return rc;
        }
        op->where = OPW_PARK;
        ml_push(&c->parked, &op->q);
        return 0;
    }
    return post_start(op);
}

void mcp_sse_close(struct mconn *c)
{
    if (c->stream) {
        sy_ureq_cancel(c->stream);
        c->stream = NULL;
    }
    free(c->endpoint);
    c->endpoint = NULL;
    sy_framer_free(&c->sfr);
    sy_framer_init(&c->sfr, 0, MAX_EVENT);
}
