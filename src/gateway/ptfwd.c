/* ptfwd.c - the provider pass-through routes on the engine's side: which
 * requests are one (route matching with the config's pass_through_endpoints),
 * and the forwarding of one call.
 *
 * A provider route is not a routed LLM call: no model group, no retries, no
 * translation. The stage (stages/provider_pt.c) picks the target and the
 * credentials; here the client's body goes out as it came (one piece, never
 * copied) and the answer comes back byte for byte, status and body included
 * (an upstream error is the provider's own, as a native client expects):
 *
 *   sy_ptfwd_start ─ sy_ureq_start ─ on_head: status, Content-Type, headers kept
 *        on_body: the first byte sends the client's head, then every piece is
 *                 written as it arrives (SSE and AWS event streams untouched);
 *                 the client's write queue over HIGH_WATER pauses the upstream
 *        on_done: end of the answer (an empty one sent then), or a transport
 *                 error: LiteLLM's 500 before any byte, a cut stream after
 *   client leaves ─ the upstream request is cancelled (its connection closed)
 *
 * Usage, for the spend row, is read from the answer's bytes without a DOM:
 * the first piece (Anthropic's message_start) and the last 64 KB (every
 * provider ends its answer or stream with its usage). Anthropic's fields are
 * read by xlate.c's reader; Gemini's usageMetadata and Bedrock's Converse
 * usage here; Bedrock InvokeModel streams carry base64 Anthropic events in
 * AWS event-stream messages, decoded through the framer as they pass.
 */
#include "gateway/gateway.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/clock.h"
#include "core/errors.h"
#include "gateway/ptfwd.h"
#include "gateway/usage.h"
#include "gateway/xlate.h"
#include "http/reply.h"
#include "http/server.h"
#include "providers/ptroute.h"
#include "upstream/client.h"
#include "upstream/framing.h"

#define HIGH_WATER  (1u << 20)
#define TAIL_KEEP   (64u << 10)
#define HEADERS_MAX 8192

/* ---- which requests are pass-through routes ---- */

const struct sy_ptendpoint *sy_ptfwd_endpoint(const struct sy_gwconf *g, struct sy_str path, size_t *sub)
{
    const struct sy_config *cfg = g->cfg;
    for (size_t i = 0; i < cfg->n_pt_endpoints; i++) {
        const struct sy_ptendpoint *e = &cfg->pt_endpoints[i];
        size_t pl = strlen(e->path);
        if (path.n == pl && memcmp(path.p, e->path, pl) == 0) {
            *sub = pl;
            return e;
        }
        if (e->include_subpath && path.n > pl && memcmp(path.p, e->path, pl) == 0 &&
            (path.p[pl] == '/' || (pl == 1 && e->path[0] == '/'))) {
            *sub = pl == 1 ? 0 : pl;
            return e;
        }
    }
    return NULL;
}

int sy_ptfwd_route(const struct sy_gwconf *g, const struct sy_req *r)
{
    size_t sub;
    const struct sy_ptendpoint *e = sy_ptfwd_endpoint(g, r->path, &sub);
    if (e)
        return e->auth ? SY_RK_PROVIDER : SY_RK_PROVIDER_OPEN;
    return sy_pt_find(r->path.p, r->path.n, &sub) ? SY_RK_PROVIDER : -1;
}

/* ---- usage from the answer's bytes ---- */

static void set_usage(struct sy_call *c, int64_t in, int64_t out, int64_t cr, int64_t cw, int64_t rt)
{
    if (in < 0 && out < 0)
        return;
    c->usage.prompt_tokens = (uint64_t)(in > 0 ? in : 0);
    c->usage.cached_tokens = cr > 0 && (uint64_t)cr <= c->usage.prompt_tokens ? (uint64_t)cr : 0;
    c->usage.cache_write_tokens = cw > 0 ? (uint64_t)cw : 0;
    c->usage.completion_tokens = (uint64_t)(out > 0 ? out : 0);
    c->usage.reasoning_tokens = rt > 0 && (uint64_t)rt <= c->usage.completion_tokens ? (uint64_t)rt : 0;
    c->usage.have_usage = 1;
}

/* Gemini / Vertex generateContent: usageMetadata (prompt includes cached
 * content; thoughts are output tokens, priced as completion, as LiteLLM). */
static void gemini_usage(struct sy_call *c, const char *p, size_t n)
{
    int64_t in = SY_USAGE_LAST_NUM(p, n, "\"promptTokenCount\""),
            out = SY_USAGE_LAST_NUM(p, n, "\"candidatesTokenCount\"");
    int64_t th = SY_USAGE_LAST_NUM(p, n, "\"thoughtsTokenCount\""),
            cr = SY_USAGE_LAST_NUM(p, n, "\"cachedContentTokenCount\"");
    if (th > 0)
        out = (out > 0 ? out : 0) + th;
    set_usage(c, in, out, cr, -1, th);
}

/* Bedrock Converse / ConverseStream's metadata event: inputTokens excludes the cache. */
static void bedrock_usage(struct sy_call *c, const char *p, size_t n)
{
    int64_t in = SY_USAGE_LAST_NUM(p, n, "\"inputTokens\""), out = SY_USAGE_LAST_NUM(p, n, "\"outputTokens\"");
    int64_t cr = SY_USAGE_LAST_NUM(p, n, "\"cacheReadInputTokens\""),
            cw = SY_USAGE_LAST_NUM(p, n, "\"cacheWriteInputTokens\"");
    if (in < 0 && out < 0) { /* InvokeModel with an Anthropic body: Anthropic's fields */
        sy_xlate_native_usage(c, p, n);
        return;
    }
    set_usage(c, in >= 0 ? in + (cr > 0 ? cr : 0) + (cw > 0 ? cw : 0) : -1, out, cr, cw, -1);
}

/* One AWS event-stream message of an InvokeModel stream: {"bytes":"<base64 event>"}. */
static int invoke_event(void *ud, const char *type, size_t tl, const char *data, size_t dl)
{
    (void)type;
    (void)tl;
    struct sy_call *c = ud;
    const char *k = memmem(data, dl, "\"bytes\":\"", 9);
    if (!k)
        return 0;
    k += 9;
    const char *e = memchr(k, '"', (size_t)(data + dl - k));
    if (!e || e - k > (1 << 20) || (e - k) % 4)
        return 0;
    size_t bl = (size_t)(e - k);
    unsigned char *o = sy_arena_alloc(&c->req->arena, bl / 4 * 3 + 4);
    int on = o ? EVP_DecodeBlock(o, (const unsigned char *)k, (int)bl) : -1;
    if (on <= 0)
        return 0;
    const char *j = (const char *)o;
    size_t jn = (size_t)on;
    if (memmem(j, jn, "\"usage\"", 7))
        sy_xlate_native_usage(c, j, jn);
    int64_t in = SY_USAGE_LAST_NUM(j, jn, "\"inputTokenCount\""),
            out = SY_USAGE_LAST_NUM(j, jn, "\"outputTokenCount\"");
    if (in >= 0 && out >= 0 && !c->usage.have_usage)
        set_usage(c, in, out, -1, -1, -1);
    return 0;
}

/* ---- forwarding ---- */

struct fwd {
    struct sy_ptfwd_state *st;
    struct sy_framer fr; /* Bedrock InvokeModel streams */
    int framing;
    uv_buf_t part;
};

static void keep_tail(struct sy_ptfwd_state *st, const char *p, size_t n)
{
    if (n >= TAIL_KEEP) {
        sy_buf_reset(&st->tail);
        sy_buf_append(&st->tail, p + n - TAIL_KEEP, TAIL_KEEP);
        return;
    }
    if (st->tail.len + n > 2 * TAIL_KEEP) {
        size_t drop = st->tail.len + n - TAIL_KEEP;
        if (drop > st->tail.len)
            drop = st->tail.len;
        memmove(st->tail.p, st->tail.p + drop, st->tail.len - drop);
        st->tail.len -= drop;
    }
    sy_buf_append(&st->tail, p, n);
}

static void read_usage_end(struct sy_call *c)
{
    struct sy_ptfwd_state *st = c->pass.pt;
    if (c->up.up_status >= 300 || !st->tail.len)
        return;
    switch (st->usage) {
    case SY_PTU_ANTHROPIC: sy_xlate_native_usage(c, st->tail.p, st->tail.len); break;
    case SY_PTU_GEMINI: gemini_usage(c, st->tail.p, st->tail.len); break;
    case SY_PTU_BEDROCK:
        if (!st->bedrock_invoke_stream)
            bedrock_usage(c, st->tail.p, st->tail.len);
        break;
    default: break;
    }
}

static void end_call(struct sy_call *c, int status)
{
    struct sy_req *r = c->req;
    r->on_abort = NULL;
    sy_call_account(c, status);
    sy_resp_end(r);
}

static void on_client_drain(struct sy_req *r)
{
    struct sy_call *c = r->handler_data;
    if (c->up.paused && c->up.ureq) {
        c->up.paused = 0;
        sy_ureq_resume(c->up.ureq);
    }
}

static void on_abort(struct sy_req *r)
{
    struct sy_call *c = r->handler_data;
    c->aborted = 1;
    if (c->in_cb)
        return; /* on_body ends the call after its write returns */
    if (c->up.ureq) {
        sy_ureq_cancel(c->up.ureq);
        c->up.ureq = NULL;
    }
    read_usage_end(c);
    c->out.llm_failed = 1;
    sy_call_account(c, 499);
    sy_resp_end(r);
}

static int hname(const struct sy_uheader *h, const char *n)
{
    size_t l = strlen(n);
    return h->name_len == l && strncasecmp(h->name, n, l) == 0;
}

static int on_head(void *ud, int status, const struct sy_uheader *h, size_t nh)
{
    struct fwd *f = ud;
    struct sy_call *c = f->st->c;
    c->up.up_status = status;
    c->up.t_up_first = sy_now_ns();
    c->up.up_ctype[0] = 0;
    char *o = sy_arena_alloc(&c->req->arena, HEADERS_MAX);
    size_t n = 0;
    for (size_t i = 0; i < nh; i++) {
        const struct sy_uheader *x = &h[i];
        if (memchr(x->value, '\r', x->value_len) || memchr(x->value, '\n', x->value_len))
            continue;
        if (hname(x, "content-type")) {
            if (x->value_len < sizeof c->up.up_ctype) {
                memcpy(c->up.up_ctype, x->value, x->value_len);
                c->up.up_ctype[x->value_len] = 0;
            }
            continue;
        }
        if (hname(x, "content-length") || hname(x, "transfer-encoding") || hname(x, "connection") ||
            hname(x, "keep-alive") || hname(x, "date") || hname(x, "server") || !x->name_len)
            continue;
        if (n + x->name_len + x->value_len + 4 > HEADERS_MAX)
            break;
        n += sy_header_line(o + n, x->name, x->name_len, x->value, x->value_len);
    }
    c->up.up_headers = o;
    c->up.up_headers_len = n;
    if (f->st->usage == SY_PTU_BEDROCK && status < 300 &&
        strncasecmp(c->up.up_ctype, "application/vnd.amazon.eventstream", 34) == 0 &&
        memmem(c->req->path.p, c->req->path.n, "/invoke-with-response-stream", 28)) {
        f->st->bedrock_invoke_stream = 1;
        sy_framer_init(&f->fr, SY_FRAME_AWS_EVENTSTREAM, 4u << 20);
        f->framing = 1;
    }
    return 0;
}

/* The client's head (status, the provider's headers and ours). Nonzero when the client left meanwhile. */
static int start_client(struct sy_call *c)
{
    struct sy_buf hb;
    sy_buf_init(&hb, 16384);
    sy_call_headers(c, &hb, 1);
    const char *ctype = c->up.up_ctype[0] ? c->up.up_ctype : "application/octet-stream";
    c->in_cb = 1;
    sy_resp_start(c->req, c->up.up_status, hb.p, hb.len, ctype);
    c->in_cb = 0;
    sy_buf_free(&hb);
    c->out.client_started = 1;
    if (c->aborted)
        return 1;
    sy_resp_set_drain_cb(c->req, on_client_drain, HIGH_WATER);
    return 0;
}

static int on_body(void *ud, const char *p, size_t n)
{
    struct fwd *f = ud;
    struct sy_ptfwd_state *st = f->st;
    struct sy_call *c = st->c;
    if (c->up.up_status < 300 && st->usage != SY_PTU_NONE) {
        if (!st->scanned_head && st->usage == SY_PTU_ANTHROPIC) {
            st->scanned_head = 1;
            sy_xlate_native_usage(c, p, n); /* message_start: input tokens */
        }
        if (f->framing && sy_framer_feed(&f->fr, p, n, invoke_event, c) != 0) {
            f->framing = 0; /* not a stream we read: the bytes still pass */
            sy_framer_free(&f->fr);
        }
        keep_tail(st, p, n);
    }
    if (!c->out.client_started && start_client(c)) {
        c->up.ureq = NULL; /* returning 1 closes the upstream connection */
        on_abort(c->req);
        return 1;
    }
    if (st->is_head)
        return 0;
    c->in_cb = 1;
    size_t q = sy_resp_chunk(c->req, p, n);
    c->in_cb = 0;
    if (c->aborted) {
        c->up.ureq = NULL;
        on_abort(c->req);
        return 1;
    }
    if (q > HIGH_WATER && !c->up.paused) {
        c->up.paused = 1;
        sy_ureq_pause(c->up.ureq);
    }
    return 0;
}

static void on_done(void *ud, int err)
{
    struct fwd *f = ud;
    struct sy_call *c = f->st->c;
    c->up.ureq = NULL;
    c->up.t_up_end = sy_now_ns();
    if (f->framing) {
        sy_framer_free(&f->fr);
        f->framing = 0;
    }
    if (err && !c->out.client_started) {
        char msg[256];
        snprintf(msg, sizeof msg, "litellm.APIConnectionError: pass-through upstream failed: %s", sy_err_name(err));
        c->out.llm_failed = 1;
        c->out.exception_class = err == SY_EUPTIMEOUT ? "Timeout" : "APIConnectionError";
        c->req->on_abort = NULL;
        sy_call_error(c, err == SY_EUPTIMEOUT ? 408 : 500, "None", NULL, msg, NULL, 0);
        return;
    }
    read_usage_end(c);
    if (err) { /* mid-answer: the client sees the answer cut, as the provider's own would be */
        c->out.llm_failed = 1;
        end_call(c, 500);
        return;
    }
    if (!c->out.client_started) {
        if (f->st->is_head) {
            struct sy_buf hb;
            sy_buf_init(&hb, 16384);
            sy_call_headers(c, &hb, 1);
            c->req->on_abort = NULL;
            sy_call_account(c, c->up.up_status);
            sy_resp_simple(c->req, c->up.up_status, hb.p, hb.len,
                           c->up.up_ctype[0] ? c->up.up_ctype : "application/octet-stream", "", 0);
            sy_buf_free(&hb);
            return;
        }
        if (start_client(c)) {
            on_abort(c->req);
            return;
        }
    }
    if (c->up.up_status >= 400)
        c->out.llm_failed = 1;
    end_call(c, c->up.up_status);
}

static const struct sy_ureq_cbs cbs = {on_head, on_body, on_done};

static void free_state(void *p)
{
    struct fwd *f = p;
    sy_buf_free(&f->st->tail);
    if (f->framing)
        sy_framer_free(&f->fr);
}

int sy_ptfwd_start(struct sy_call *c, struct sy_ptfwd_state *st, const struct sy_ptfwd *fw)
{
    struct fwd *f = sy_arena_alloc(&c->req->arena, sizeof *f);
    memset(f, 0, sizeof *f);
    f->st = st;
    st->c = c;
    st->usage = fw->usage;
    st->is_head = strcmp(fw->method, "HEAD") == 0;
    sy_buf_init(&st->tail, 2 * TAIL_KEEP + 1);
    sy_arena_defer(&c->req->arena, free_state, f);
    c->pass.pt = st;
    f->part = uv_buf_init((char *)fw->body, (unsigned)fw->body_len);
    double t = fw->timeout_s > 0 ? fw->timeout_s : 600;
    struct sy_ureq_opts o = {0};
    o.url = fw->url;
    o.method = fw->method;
    o.headers = fw->headers;
    o.headers_len = fw->headers_len;
    o.body = &f->part;
    o.nbody = fw->body_len ? 1 : 0;
    o.connect_timeout_s = t < 10 ? t : 10;
    o.first_byte_timeout_s = t;
    o.idle_timeout_s = t;
    c->up.t_up_start = sy_now_ns();
    c->up.ureq = sy_ureq_start(c->w->upool, &o, &cbs, f);
    if (!c->up.ureq) {
        c->out.exception_class = "APIConnectionError";
        sy_call_error(c, 500, "None", NULL, "litellm.APIConnectionError: the pass-through target URL is not valid",
                      NULL, 0);
        return SY_DONE;
    }
    c->req->on_abort = on_abort;
    return SY_AGAIN;
}
