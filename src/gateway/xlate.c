/* xlate.c - translation glue for the upstream stage: an attempt is the
 * client's dialect (dialects/dialect.h) composed with the deployment's
 * adapter, or with none (OpenAI-compatible), or the dialect's native
 * shortcut; see xlate.h for the table.
 *
 * The dialect is reached only through its table: the request becomes chat
 * with dl->to_chat (once per call), each chat chunk becomes the dialect's
 * events with dl->stream_chunk, a whole answer with dl->from_chat. What is
 * the engine's and not the dialect's stays here: the model of the attempt,
 * the native requests' URLs and headers (they need the deployment), usage
 * into the call's counts, the Responses ids and store (gateway/responses.c).
 *
 * Everything here runs on the worker's loop and is linear in the bytes it is
 * given: one DOM parse of the request per call (kept across retries and
 * fallbacks), one encode per attempt, and per upstream read one pass of the
 * framer and the adapter's event decoder. Buffers are capped like the
 * pass-through path's (a response over MAX_XBODY is a 502, an event over
 * MAX_EVENT a protocol error).
 */
#include "gateway/xlate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/errors.h"
#include "core/log.h"
#include "gateway/usage.h"
#include "http/server.h"
#include "providers/oai.h"
#include "spend/spend.h"
#include "tokenizer/tokenizer.h"

#define MAX_XBODY (256u << 20) /* a request or response body after translation */
#define MAX_EVENT (16u << 20)  /* one upstream stream event */
#define MAX_URL   (16u << 10)
#define MAX_HDRS  (64u << 10)
#define MAX_EMIT  (512u << 20)

/* The client dialect of each route kind (xlate.h: NULL is chat). */
const struct sy_dialect *const sy_xlate_dialects[SY_RK__COUNT] = {
    [SY_RK_MESSAGES] = &sy_dialect_messages,
    [SY_RK_MESSAGES_COUNT] = &sy_dialect_messages,
    [SY_RK_RESPONSES] = &sy_dialect_responses,
    [SY_RK_RESPONSES_ID] = &sy_dialect_responses,
};

int sy_xlate_native(const struct sy_drt *d, const struct sy_dialect *dl)
{
    if (!d || !dl->native || !dl->native(d->ad, d->d->provider))
        return 0;
    return d->ad || (d->prov && d->url[0]); /* an OpenAI-compatible one needs its preset's URL */
}

static void x_cleanup(void *p)
{
    struct sy_xcall *x = p;
    sy_buf_free(&x->out.url);
    sy_buf_free(&x->out.headers);
    sy_buf_free(&x->out.body);
    sy_buf_free(&x->emit);
    sy_buf_free(&x->mid);
    sy_framer_free(&x->fr);
    sy_framer_free(&x->ofr);
    if (x->ds_on && x->dl->stream_free)
        x->dl->stream_free(x->ds);
}

static struct sy_xcall *xc(struct sy_call *c)
{
    if (c->x)
        return c->x;
    struct sy_xcall *x = sy_arena_alloc(&c->req->arena, sizeof *x);
    memset(x, 0, sizeof *x);
    sy_buf_init(&x->out.url, MAX_URL);
    sy_buf_init(&x->out.headers, MAX_HDRS);
    sy_buf_init(&x->out.body, MAX_XBODY);
    sy_buf_init(&x->emit, MAX_EMIT);
    sy_buf_init(&x->mid, MAX_EMIT);
    sy_framer_init(&x->fr, SY_FRAME_SSE, MAX_EVENT);
    sy_framer_init(&x->ofr, SY_FRAME_SSE, MAX_EVENT);
    snprintf(x->msg_id, sizeof x->msg_id, "msg_%.8s%.4s%.4s%.4s%.12s", c->call_id, c->call_id + 9, c->call_id + 14,
             c->call_id + 19, c->call_id + 24);
    sy_arena_defer(&c->req->arena, x_cleanup, x);
    c->x = x;
    return x;
}

static void set_err(struct sy_xcall *x, int status, const char *msg)
{
    sy_oai_err(&x->err, status, msg, strlen(msg));
    x->have_err = 1;
}

/* The upstream model of this attempt as a C string (a wildcard group's part
 * substituted). */
static char *upstream_model(struct sy_call *c)
{
    const struct sy_drt *d = c->drt;
    const char *um = d->d->upstream_model ? d->d->upstream_model : "";
    if (!d->wildcard)
        return (char *)um;
    const char *part, *star = strchr(um, '*');
    size_t pl;
    sy_router_wild_part(c->group->name, c->group_model ? c->group_model : c->in.model, &part, &pl);
    size_t a = (size_t)(star - um), b = strlen(star + 1);
    char *m = sy_arena_alloc(&c->req->arena, a + pl + b + 1);
    memcpy(m, um, a);
    memcpy(m + a, part, pl);
    memcpy(m + a + pl, star + 1, b + 1);
    return m;
}

/* Client headers an Anthropic upstream should see. */
static void fwd_headers(struct sy_call *c, struct sy_xcall *x, int version_too)
{
    size_t n = 0;
    static const char *const names[2] = {"anthropic-beta", "anthropic-version"};
    for (int i = 0; i < 1 + version_too; i++) {
        struct sy_str v = sy_req_header(c->req, names[i]);
        if (!v.p || !v.n || memchr(v.p, '\r', v.n) || memchr(v.p, '\n', v.n))
            continue;
        int k = snprintf(x->fwd_headers + n, sizeof x->fwd_headers - n, "%s: %.*s\r\n", names[i], (int)v.n, v.p);
        if (k < 0 || (size_t)k >= sizeof x->fwd_headers - n)
            break;
        n += (size_t)k;
    }
    x->fwd_headers[n] = 0;
    x->ctx.fwd_headers = n ? x->fwd_headers : NULL;
    x->ctx.fwd_headers_len = n;
}

/* The client's request in its dialect, parsed (once per call). */
static int client_doc(struct sy_call *c, struct sy_xcall *x)
{
    if (x->have_areq)
        return 0;
    int rc = sy_jdom_parse(&x->areq, c->opt.fwd_body ? c->opt.fwd_body : c->req->body.p,
                           c->opt.fwd_body ? c->opt.fwd_len : c->req->body.len, &c->req->arena, 0);
    if (rc) {
        set_err(x, 400, "Invalid JSON payload");
        return rc;
    }
    x->have_areq = 1;
    return 0;
}

void sy_xlate_redo(struct sy_call *c)
{
    struct sy_xcall *x = c->x;
    if (x) {
        x->have_areq = 0;
        x->have_oreq = 0;
        x->oai_body = NULL;
        x->oai_len = 0;
        x->oai_ws = x->oai_had_ws = 0;
        x->prepared = 0;
        x->have_err = 0;
        x->native_status = 0;
    }
    struct sy_rcall *r = c->rsp;
    if (r) { /* the built-in mock's view of a Responses request, made again */
        r->chat = NULL;
        r->have_req = 0;
    }
}

/* A Responses request continuing a conversation that could not be loaded. */
static int prior_missing(struct sy_call *c, struct sy_xcall *x)
{
    struct sy_rcall *r = c->rsp;
    if (!r || !r->has_prev || r->prior_loaded)
        return 0;
    char m[800];
    if (r->prior_error) {
        set_err(x, 503, "switchyard: the database holding stored responses is unreachable");
    } else {
        snprintf(m, sizeof m, "Previous response with id '%.600s' not found.",
                 r->prev_full ? r->prev_full : r->prev.inner);
        set_err(x, 400, m);
        snprintf(x->err.param, sizeof x->err.param, "previous_response_id");
    }
    return 1;
}

/* Does the attempt's model search the web (the price map's supports_web_search)? */
static int web_search_ok(struct sy_call *c, struct sy_xcall *x)
{
    const struct sy_price *p = sy_price_find(c->drt->d->provider, x->model);
    return p && (p->supports & SY_SUPPORTS_WEB_SEARCH);
}

/* The client's request translated to chat by its dialect (once per call; for
 * Responses the stored conversation before it comes first, and a request with
 * a web search tool again when an attempt's model differs in searching). */
static int to_chat(struct sy_call *c, struct sy_xcall *x)
{
    if (x->oai_body && (!x->oai_had_ws || x->oai_ws == web_search_ok(c, x)))
        return 0;
    x->oai_body = NULL;
    x->have_oreq = 0;
    if (prior_missing(c, x) || client_doc(c, x))
        return SY_EINVAL;
    struct sy_rcall *r = c->rsp;
    struct sy_dl_in in = {.req = &x->areq};
    if (r) {
        sy_buf_reset(&r->items);
        in = (struct sy_dl_in){.req = &x->areq,
                               .prior = r->prior,
                               .prior_len = r->prior_len,
                               .id_seed = r->seed,
                               .items = &r->items,
                               .web_search = sy_resp_wants_web_search(&x->areq) && web_search_ok(c, x),
                               .report = &r->rep};
    }
    struct sy_buf b;
    sy_buf_init(&b, MAX_XBODY);
    int rc = x->dl->to_chat(&in, &c->req->arena, &b, &x->err);
    if (rc) {
        x->have_err = 1;
        sy_buf_free(&b);
        return rc;
    }
    char *p = sy_arena_alloc(&c->req->arena, b.len + 1);
    memcpy(p, b.p, b.len);
    p[b.len] = 0;
    x->oai_body = p;
    x->oai_len = b.len;
    sy_buf_free(&b);
    if (r) {
        x->oai_ws = in.web_search;
        x->oai_had_ws = r->rep.had_web_search;
        if (r->rep.dropped[0])
            sy_warn("responses: call %s to %s: hosted tools dropped (the deployment cannot run them): %s", c->call_id,
                    x->model, r->rep.dropped);
    }
    return 0;
}

/* Native Responses: URL (and, for an encoded previous_response_id, the body
 * with it decoded and the model replaced) of the attempt. */
static int resp_native_prepare(struct sy_call *c, struct sy_xcall *x, struct sy_ureq_opts *o, unsigned *nbody)
{
    struct sy_drt *d = c->drt;
    struct sy_rcall *r = c->rsp;
    char path[900], msg[600];
    if (c->kind == SY_RK_RESPONSES_ID) {
        static const char *const sfx[] = {"", "", "/input_items", "/cancel"};
        snprintf(path, sizeof path, "/responses/%s%s%s", r->rid.inner, sfx[r->id_op & 3],
                 r->id_op == 2 && c->req->query.n ? "?" : "");
        if (r->id_op == 2 && c->req->query.n) {
            size_t l = strlen(path), q = c->req->query.n < sizeof path - l - 1 ? c->req->query.n : sizeof path - l - 1;
            memcpy(path + l, c->req->query.p, q);
            path[l + q] = 0;
        }
        o->method = r->id_op == 1 ? "DELETE" : r->id_op == 3 ? "POST" : "GET";
    } else {
        snprintf(path, sizeof path, "/responses");
    }
    sy_buf_reset(&x->out.url);
    if (sy_passthru_url(c, d, path, &x->out.url, msg, sizeof msg) != 0) {
        set_err(x, 400, msg);
        return SY_EINVAL;
    }
    o->url = x->out.url.p;
    o->headers = d->headers;
    o->headers_len = d->headers_len;
    *nbody = 0;
    if (c->kind != SY_RK_RESPONSES || !r->has_prev || !r->prev.encoded)
        return 0; /* proxy.c replaces the model as for chat */
    /* the body with "model" and "previous_response_id" replaced */
    const char *b = c->opt.fwd_body ? c->opt.fwd_body : c->req->body.p;
    size_t n = c->opt.fwd_body ? c->opt.fwd_len : c->req->body.len;
    struct sy_jspan top = {0, n, 'o'};
    struct sy_jspan m = sy_jscan_member(b, top, "model"), pv = sy_jscan_member(b, top, "previous_response_id");
    if (m.type != 's' || pv.type != 's') {
        set_err(x, 400, "Invalid request body");
        return SY_EINVAL;
    }
    struct sy_jspan first = m.off < pv.off ? m : pv, second = m.off < pv.off ? pv : m;
    struct sy_buf *ob = &x->out.body;
    sy_buf_reset(ob);
    sy_buf_reserve(ob, n + 256);
    for (int i = 0; i < 2; i++) {
        struct sy_jspan sp = i ? second : first;
        size_t from = i ? first.off + first.len : 0;
        sy_buf_append(ob, b + from, sp.off - from);
        if (sp.off == m.off) {
            SY_BUF_LIT(ob, "\"");
            sy_buf_json_escape(ob, x->model, strlen(x->model));
            SY_BUF_LIT(ob, "\"");
        } else {
            SY_BUF_LIT(ob, "\"");
            sy_buf_json_escape(ob, r->prev.inner, strlen(r->prev.inner));
            SY_BUF_LIT(ob, "\"");
        }
    }
    sy_buf_append(ob, b + second.off + second.len, n - second.off - second.len);
    c->up.body_parts[0] = uv_buf_init(ob->p, (unsigned)ob->len);
    c->up.body_parts[1] = uv_buf_init(NULL, 0);
    c->up.body_parts[2] = uv_buf_init(NULL, 0);
    *nbody = 1;
    return 0;
}

/* oai_body as a DOM (once per call). */
static int oai_dom(struct sy_call *c, struct sy_xcall *x)
{
    if (x->have_oreq)
        return 0;
    if (!x->oai_body) {
        x->oai_body = c->opt.fwd_body ? c->opt.fwd_body : c->req->body.p;
        x->oai_len = c->opt.fwd_body ? c->opt.fwd_len : c->req->body.len;
    }
    int rc = sy_jdom_parse(&x->oreq, x->oai_body, x->oai_len, &c->req->arena, 0);
    if (rc) {
        set_err(x, 400, "Invalid JSON payload");
        return rc;
    }
    x->have_oreq = 1;
    uint32_t ef = c->kind == SY_RK_EMBEDDINGS ? sy_jdom_get(&x->oreq, 0, "encoding_format") : 0;
    if (ef && sy_jdom_str_eq(&x->oreq, ef, "base64")) {
        /* providers return floats: ask for floats, encode them for the client (the openai SDK
         * asks for base64 by default and decodes whatever comes as base64) */
        const struct sy_jnode *nd = &x->oreq.n[ef];
        size_t n = x->oai_len - nd->len + 7;
        char *b = sy_arena_alloc(&c->req->arena, n + 1);
        memcpy(b, x->oai_body, nd->off);
        memcpy(b + nd->off, "\"float\"", 7);
        memcpy(b + nd->off + 7, x->oai_body + nd->off + nd->len, x->oai_len - nd->off - nd->len);
        b[n] = 0;
        x->oai_body = b;
        x->oai_len = n;
        x->b64 = 1;
        rc = sy_jdom_parse(&x->oreq, x->oai_body, x->oai_len, &c->req->arena, 0);
        if (rc) {
            set_err(x, 400, "Invalid JSON payload");
            return rc;
        }
    }
    return 0;
}

/* An embeddings list with float arrays -> the same with each vector as the
 * base64 of its little-endian float32 values (OpenAI's encoding_format
 * "base64"). 0, or -1 when body is not such a list (left unchanged). */
static int embeddings_to_b64(struct sy_arena *a, struct sy_buf *body)
{
    static const char b64c[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, body->p, body->len, a, 0) != 0)
        return -1;
    uint32_t data = sy_jdom_get(&d, 0, "data");
    if (sy_jdom_type(&d, data) != 'a')
        return -1;
    struct sy_buf o;
    sy_buf_init(&o, MAX_XBODY);
    size_t at = 0;
    for (uint32_t it = sy_jdom_first(&d, data); it; it = sy_jdom_next(&d, it)) {
        uint32_t e = sy_jdom_get(&d, it, "embedding");
        if (sy_jdom_type(&d, e) != 'a')
            continue;
        const struct sy_jnode *nd = &d.n[e];
        sy_buf_append(&o, body->p + at, nd->off - at);
        SY_BUF_LIT(&o, "\"");
        unsigned char q[3];
        int k = 0;
        for (uint32_t v = sy_jdom_first(&d, e); v; v = sy_jdom_next(&d, v)) {
            double dv = 0;
            sy_jdom_num(&d, v, &dv);
            float f = (float)dv;
            unsigned char le[4];
            memcpy(le, &f, 4); /* the gateway runs on little-endian hosts (x86-64, arm64) */
            for (int j = 0; j < 4; j++) {
                q[k++] = le[j];
                if (k == 3) {
                    char t[4] = {b64c[q[0] >> 2], b64c[((q[0] & 3) << 4) | (q[1] >> 4)],
                                 b64c[((q[1] & 15) << 2) | (q[2] >> 6)], b64c[q[2] & 63]};
                    sy_buf_append(&o, t, 4);
                    k = 0;
                }
            }
        }
        if (k) {
            if (k == 1)
                q[1] = 0;
            char t[4] = {b64c[q[0] >> 2], b64c[((q[0] & 3) << 4) | (q[1] >> 4)], k == 2 ? b64c[(q[1] & 15) << 2] : '=',
                         '='};
            sy_buf_append(&o, t, 4);
        }
        SY_BUF_LIT(&o, "\"");
        at = nd->off + nd->len;
    }
    sy_buf_append(&o, body->p + at, body->len - at);
    sy_buf_free(body);
    *body = o;
    return 0;
}

/* Native Anthropic: the client's body as it is (model replaced by proxy.c);
 * our URL and key, the client's anthropic-* headers. */
static int msg_native_prepare(struct sy_call *c, struct sy_xcall *x, struct sy_ureq_opts *o, unsigned *nbody)
{
    const struct sy_drt *d = c->drt;
    fwd_headers(c, x, 1);
    const char *base = d->pc->base ? d->pc->base : "https://api.anthropic.com";
    size_t bl = strlen(base);
    if (bl >= 12 && strcmp(base + bl - 12, "/v1/messages") == 0)
        sy_buf_puts(&x->out.url, base);
    else if (bl >= 3 && strcmp(base + bl - 3, "/v1") == 0)
        sy_buf_printf(&x->out.url, "%s/messages", base);
    else
        sy_buf_printf(&x->out.url, "%s/v1/messages", base);
    if (c->req->query.n) { /* the client's query as it came (Claude Code's ?beta=true) */
        sy_buf_append(&x->out.url, memchr(x->out.url.p, '?', x->out.url.len) ? "&" : "?", 1);
        sy_buf_append(&x->out.url, c->req->query.p, c->req->query.n);
    }
    SY_BUF_LIT(&x->out.headers, "Content-Type: application/json\r\n");
    if (d->pc->key)
        sy_buf_printf(&x->out.headers, "x-api-key: %s\r\n", d->pc->key);
    if (!strstr(x->fwd_headers, "anthropic-version:"))
        sy_buf_printf(&x->out.headers, "anthropic-version: %s\r\n", d->pc->version ? d->pc->version : "2023-06-01");
    sy_buf_puts(&x->out.headers, x->fwd_headers);
    o->url = x->out.url.p;
    o->headers = x->out.headers.p;
    o->headers_len = x->out.headers.len;
    return 0;
}

/* The native request of each dialect that has a native shortcut: it needs the
 * deployment (URL, key), so it is the engine's, not the dialect's. */
static int (*const native_prepare[SY_DL__COUNT])(struct sy_call *, struct sy_xcall *, struct sy_ureq_opts *,
                                                 unsigned *) = {
    [SY_DL_MESSAGES] = msg_native_prepare,
    [SY_DL_RESPONSES] = resp_native_prepare,
};

/* ---- reasoning_effort only where the model reasons ---------------------------- */

int sy_xlate_reasons(const struct sy_drt *d)
{
    if (d->d->supports_reasoning >= 0)
        return d->d->supports_reasoning;
    const char *m = d->d->base_model ? d->d->base_model : d->d->upstream_model;
    const struct sy_price *p = m ? sy_price_find(d->d->provider, m) : NULL;
    return p && (p->supports & SY_SUPPORTS_REASONING);
}

/* p[0..n) (a JSON object our dialect wrote) without its top-level member
 * `key` and one comma beside it, into out. 1 when the member was there. */
static int strip_member(const char *p, size_t n, const char *key, struct sy_buf *out)
{
    size_t i = 0;
    while (i < n && p[i] != '{')
        i++;
    struct sy_jspan top = {i, n - i, 'o'};
    struct sy_jspan v = sy_jscan_member(p, top, key);
    if (!v.type)
        return 0;
    size_t k = v.off; /* back over ':' to the key's opening quote (the key has no escapes) */
    while (k > i && p[k - 1] != ':')
        k--;
    k--;
    while (k > i && p[k - 1] != '"')
        k--;
    k--; /* the closing quote */
    while (k > i && p[k - 1] != '"')
        k--;
    k--; /* the opening quote */
    size_t from = k, to = v.off + v.len, b = k;
    while (b > i && (p[b - 1] == ' ' || p[b - 1] == '\n' || p[b - 1] == '\t' || p[b - 1] == '\r'))
        b--;
    if (p[b - 1] == ',') {
        from = b - 1;
    } else { /* the first member: the comma after it goes */
        size_t a = to;
        while (a < n && (p[a] == ' ' || p[a] == '\n' || p[a] == '\t' || p[a] == '\r'))
            a++;
        if (a < n && p[a] == ',')
            to = a + 1;
    }
    sy_buf_append(out, p, from);
    sy_buf_append(out, p + to, n - to);
    return 1;
}

/* A translated request (Anthropic thinking, Responses reasoning.effort) on an
 * OpenAI-compatible deployment whose model does not reason: its
 * reasoning_effort is dropped (such models answer it with a 400; thinking
 * is a hint). *p, *n become the body without it; 1 when it was there. */
static int effort_dropped(struct sy_call *c, const char **p, size_t *n)
{
    if (!memmem(*p, *n, "\"reasoning_effort\"", 18))
        return 0;
    struct sy_buf b;
    sy_buf_init(&b, MAX_XBODY);
    if (!strip_member(*p, *n, "reasoning_effort", &b) || sy_buf_failed(&b)) {
        sy_buf_free(&b);
        return 0;
    }
    char *cp = sy_arena_alloc(&c->req->arena, b.len + 1);
    memcpy(cp, b.p, b.len);
    cp[b.len] = 0;
    *p = cp;
    *n = b.len;
    sy_buf_free(&b);
    return 1;
}

/* The dialect's stream state and answer meta for this attempt. */
static void dialect_start(struct sy_call *c, struct sy_xcall *x)
{
    const struct sy_dialect *dl = x->dl;
    struct sy_rcall *r = c->rsp;
    if (r && !x->native) { /* a translated response: its id, encoded for this deployment */
        const struct sy_drt *d = c->drt;
        r->created_at = (int64_t)time(NULL);
        if (sy_resp_id_encode(d->d->provider, d->d->id, r->inner, strlen(r->inner), r->id, sizeof r->id) != 0)
            snprintf(r->id, sizeof r->id, "%s", r->inner);
    }
    x->dm = (struct sy_dl_meta){.id = r ? r->id : x->msg_id,
                                .model = c->in.model ? c->in.model : x->model,
                                .created_at = r ? r->created_at : 0,
                                .id_seed = r ? r->seed : NULL,
                                .req = x->have_areq ? &x->areq : NULL,
                                .previous_response_id = r && r->has_prev ? r->prev_full : NULL};
    if (!dl->stream_size || (x->native && !dl->native_keeps_stream))
        return;
    if (x->ds_on && dl->stream_free)
        dl->stream_free(x->ds);
    if (!x->ds)
        x->ds = sy_arena_alloc(&c->req->arena, dl->stream_size);
    dl->stream_init(x->ds, &x->dm);
    x->ds_on = 1;
    x->st.include_usage = 1; /* the dialect's answer always reports usage */
}

int sy_xlate_prepare(struct sy_call *c, struct sy_ureq_opts *o, unsigned *nbody)
{
    struct sy_drt *d = c->drt;
    struct sy_xcall *x = xc(c);
    x->dl = sy_xlate_dialect(c->kind);
    x->ad = d->ad;
    x->native = sy_xlate_native(d, x->dl);
    /* per-attempt state */
    memset(&x->st, 0, sizeof x->st);
    x->have_err = 0;
    x->fwd_passing = 0;
    x->native_status = 0;
    sy_buf_reset(&x->emit);
    sy_buf_reset(&x->mid);
    sy_buf_reset(&x->out.url);
    sy_buf_reset(&x->out.headers);
    sy_buf_reset(&x->out.body);
    sy_framer_free(&x->fr);
    sy_framer_init(&x->fr, d->ad ? (int)d->ad->framing : SY_FRAME_SSE, MAX_EVENT);
    sy_framer_free(&x->ofr);
    sy_framer_init(&x->ofr, SY_FRAME_SSE, MAX_EVENT);
    x->model = upstream_model(c);
    memcpy(x->st.id, "chatcmpl-", 9);
    memcpy(x->st.id + 9, c->call_id, 37);
    /* the client's answer names the model it asked for (LiteLLM's proxy restamps it) */
    const char *shown = sy_xlate_echo_name(c) ? sy_xlate_echo_name(c) : x->model;
    size_t ml = strlen(shown);
    if (ml >= sizeof x->st.model)
        ml = sizeof x->st.model - 1;
    memcpy(x->st.model, shown, ml);
    x->st.model[ml] = 0;
    x->st.model_fixed = shown != x->model;
    x->st.created = (int64_t)time(NULL);
    x->st.include_usage = c->in.include_usage;
    if (x->dl->to_chat && !x->native && client_doc(c, x))
        return SY_EJSON;
    dialect_start(c, x);
    memset(&x->ctx, 0, sizeof x->ctx);
    x->ctx.d = d->d;
    x->ctx.pc = d->pc;
    x->ctx.model = x->model;
    x->ctx.op = c->kind == SY_RK_EMBEDDINGS ? SY_OP_EMBED : SY_OP_CHAT;
    x->ctx.stream = c->in.stream;
    x->ctx.now = (int64_t)time(NULL);
    x->ctx.arena = &c->req->arena;
    *nbody = 0;
    if (x->native)
        return native_prepare[x->dl->id](c, x, o, nbody);
    fwd_headers(c, x, 0);
    if (x->dl->to_chat && to_chat(c, x))
        return SY_EINVAL;
    if (!d->ad) {
        /* an OpenAI-compatible deployment: the translated body with model replaced (and
         * reasoning_effort left out where the model does not reason) */
        const char *ob = x->oai_body;
        size_t on = x->oai_len;
        struct sy_jscan sc;
        if (sy_jscan(ob, on, &sc) != 0 || sc.model.type != 's') {
            set_err(x, 500, "switchyard: the translated request has no model");
            return SY_EINTERNAL;
        }
        if (!sy_xlate_reasons(d) && effort_dropped(c, &ob, &on) && (sy_jscan(ob, on, &sc) != 0 || !sc.model.type)) {
            set_err(x, 500, "switchyard: the translated request has no model");
            return SY_EINTERNAL;
        }
        size_t mo = sc.model.off, mlen = sc.model.len;
        sy_buf_reset(&x->out.body);
        SY_BUF_LIT(&x->out.body, "\"");
        sy_buf_json_escape(&x->out.body, x->model, strlen(x->model));
        SY_BUF_LIT(&x->out.body, "\"");
        c->up.body_parts[0] = uv_buf_init((char *)ob, (unsigned)mo);
        c->up.body_parts[1] = uv_buf_init(x->out.body.p, (unsigned)x->out.body.len);
        c->up.body_parts[2] = uv_buf_init((char *)ob + mo + mlen, (unsigned)(on - mo - mlen));
        *nbody = 3;
        o->url = d->url[0];
        o->headers = d->headers;
        o->headers_len = d->headers_len;
        return 0;
    }
    /* an adapter encodes the OpenAI request */
    if (oai_dom(c, x))
        return SY_EINVAL;
    char tok[4096];
    if ((d->ad->caps & SY_CAP_OAUTH) && x->tok_ready) { /* fetched on the loop (sy_xlate_oauth) */
        memcpy(tok, x->tok, sizeof tok);
        x->tok_ready = 0;
        x->ctx.access_token = tok;
    } else if (d->ad->caps & SY_CAP_OAUTH) {
        char err[512] = "";
        int t = sy_oauth_token(c->w, d->pc, tok, sizeof tok, err, sizeof err);
        if (t == 0)
            return SY_AGAIN;
        if (t < 0) {
            char m[700];
            snprintf(m, sizeof m, "Failed to get an OAuth2 access token: %s", err);
            set_err(x, 401, m);
            x->err.status = 401;
            snprintf(x->err.cls, sizeof x->err.cls, "AuthenticationError");
            return SY_EAUTH;
        }
        x->ctx.access_token = tok;
    }
    sy_buf_reserve(&x->out.body, x->oai_len + 512); /* one allocation, not a growth series */
    sy_buf_reserve(&x->out.headers, 512);
    sy_buf_reserve(&x->out.url, 256);
    int rc = d->ad->encode(&x->ctx, &x->oreq, &x->out);
    x->ctx.access_token = NULL; /* tok lives on this stack frame */
    if (rc) {
        if (!x->out.err.status)
            sy_oai_err(&x->out.err, 400, "switchyard: the request could not be translated", 48);
        x->err = x->out.err;
        x->have_err = 1;
        return rc < 0 ? rc : SY_EINVAL;
    }
    c->up.body_parts[0] = uv_buf_init(x->out.body.p, (unsigned)x->out.body.len);
    c->up.body_parts[1] = uv_buf_init(NULL, 0);
    c->up.body_parts[2] = uv_buf_init(NULL, 0);
    *nbody = 1;
    o->url = x->out.url.p;
    o->headers = x->out.headers.p;
    o->headers_len = x->out.headers.len;
    return 0;
}

int sy_xlate_oauth(struct sy_call *c)
{
    struct sy_drt *d = c->drt;
    struct sy_xcall *x = xc(c);
    x->tok_ready = 0;
    if (!d->ad || !(d->ad->caps & SY_CAP_OAUTH))
        return 0;
    char err[512] = "";
    int t = sy_oauth_token(c->w, d->pc, x->tok, sizeof x->tok, err, sizeof err);
    if (t == 0)
        return SY_AGAIN;
    if (t < 0) {
        char m[700];
        snprintf(m, sizeof m, "Failed to get an OAuth2 access token: %s", err);
        set_err(x, 401, m);
        snprintf(x->err.cls, sizeof x->err.cls, "AuthenticationError");
        return SY_EAUTH;
    }
    x->tok_ready = 1;
    return 0;
}

/* ---- streams -------------------------------------------------------------- */

/* An OpenAI body or chunk's reported usage into c's token counts. */
static void take_usage(struct sy_call *c, const char *p, size_t n)
{
    struct sy_usage u;
    if (sy_usage_read(p, n, &u)) {
        c->usage.prompt_tokens = u.prompt_tokens;
        c->usage.completion_tokens = u.completion_tokens;
        c->usage.cached_tokens = u.cached_tokens;
        c->usage.cache_write_tokens = u.cache_creation_tokens;
        c->usage.cache_write_1h_tokens = u.cache_creation_1h_tokens;
        c->usage.reasoning_tokens = u.reasoning_tokens;
        c->usage.have_usage = 1;
    }
}

static int on_oai_event(void *ud, const char *type, size_t tl, const char *data, size_t dl);

/* Chat SSE frames in p[0..n) (an adapter's output) -> the dialect's events into x->emit. */
static void chat_frames_to_dialect(struct sy_call *c, const char *p, size_t n)
{
    const char *e = p + n;
    while (p < e) {
        const char *nl = memmem(p, (size_t)(e - p), "\n\n", 2);
        if (!nl)
            break;
        if (nl - p > 6 && memcmp(p, "data: ", 6) == 0)
            on_oai_event(c, "", 0, p + 6, (size_t)(nl - p - 6));
        p = nl + 2;
    }
}

/* One event of a translating adapter's stream: its chat chunks go to the
 * client (the chat dialect) or to x->mid for the dialect. */
static int on_event(void *ud, const char *type, size_t tl, const char *data, size_t dl)
{
    struct sy_call *c = ud;
    struct sy_xcall *x = c->x;
    if (x->st.done)
        return 0; /* the provider said the stream ended: ignore what follows */
    struct sy_buf *dst = x->dl->stream_chunk ? &x->mid : &x->emit;
    int rc = x->ad->decode_event(&x->ctx, &x->st, type, tl, data, dl, dst);
    if (rc == SY_DONE) {
        x->st.done = 1;
        return 0;
    }
    if (rc < 0) {
        x->err = x->st.err;
        if (!x->err.status)
            sy_oai_err(&x->err, 500, "switchyard: the provider's stream could not be decoded", 54);
        x->have_err = 1;
        return rc;
    }
    return 0;
}

/* One chat chunk (an OpenAI-compatible upstream's, or an adapter's) -> the
 * dialect's events; or a native upstream's own event, its ids rewritten. */
static int on_oai_event(void *ud, const char *type, size_t tl, const char *data, size_t dl)
{
    struct sy_call *c = ud;
    struct sy_xcall *x = c->x;
    if (x->native) { /* the upstream's own events in the client's dialect */
        if (tl == 18 && memcmp(type, "response.completed", 18) == 0)
            sy_xlate_native_usage(c, data, dl);
        if (c->rsp && !c->rsp->native_recorded)
            sy_responses_native_made(c, data, dl, 1); /* the first event with the response names its owner */
        if (tl) {
            SY_BUF_LIT(&x->emit, "event: ");
            sy_buf_append(&x->emit, type, tl);
            SY_BUF_LIT(&x->emit, "\n");
        }
        SY_BUF_LIT(&x->emit, "data: ");
        if (sy_xlate_echo_name(c) && memmem(data, dl, "\"model\"", 7)) { /* response.created ... */
            sy_buf_reset(&x->mid);
            x->dl->native_rewrite(data, dl, c->drt->d->provider, c->drt->d->id, &x->mid);
            sy_xlate_echo_model(x->mid.p, x->mid.len, sy_xlate_echo_name(c), &x->emit);
        } else {
            x->dl->native_rewrite(data, dl, c->drt->d->provider, c->drt->d->id, &x->emit);
        }
        SY_BUF_LIT(&x->emit, "\n\n");
        return 0;
    }
    if (dl >= 7 && memmem(data, dl, "\"usage\"", 7))
        take_usage(c, data, dl);
    int rc = x->dl->stream_chunk(x->ds, data, dl, &x->emit);
    if (rc < 0 && rc != SY_ENOSPC)
        x->dl->stream_error(x->ds, 502, "switchyard: upstream sent an invalid stream chunk", 48, &x->emit);
    return 0;
}

static void set_ctx_now(struct sy_xcall *x)
{
    x->ctx.now = (int64_t)time(NULL);
}

int sy_xlate_feed(struct sy_call *c, const char *p, size_t n, const char **out, size_t *outn)
{
    struct sy_xcall *x = c->x;
    sy_buf_reset(&x->emit);
    int rc = 0;
    set_ctx_now(x);
    if (!x->ad) {
        rc = sy_framer_feed(&x->ofr, p, n, on_oai_event, c);
    } else {
        sy_buf_reset(&x->mid);
        rc = sy_framer_feed(&x->fr, p, n, on_event, c);
        if (x->mid.len)
            chat_frames_to_dialect(c, x->mid.p, x->mid.len);
    }
    if (rc < 0 && !x->have_err)
        set_err(x, 502, "switchyard: the provider's stream framing is broken");
    *out = x->emit.p;
    *outn = x->emit.len;
    return rc < 0 ? rc : 0;
}

int sy_xlate_stream_flush(struct sy_call *c, const char **out, size_t *outn)
{
    struct sy_xcall *x = c->x;
    sy_buf_reset(&x->emit);
    sy_buf_reset(&x->mid);
    int rc = !x->ad ? sy_framer_finish(&x->ofr, on_oai_event, c) : sy_framer_finish(&x->fr, on_event, c);
    if (x->mid.len)
        chat_frames_to_dialect(c, x->mid.p, x->mid.len);
    if (rc < 0 && !x->have_err)
        set_err(x, 502, "switchyard: the provider's stream ended in the middle of an event");
    *out = x->emit.p;
    *outn = x->emit.len;
    return rc < 0 ? rc : 0;
}

int sy_xlate_stream_end(struct sy_call *c, const char **out, size_t *outn)
{
    struct sy_xcall *x = c->x;
    sy_buf_reset(&x->emit);
    sy_buf_reset(&x->mid);
    if (!x->native) {
        if (x->ad) { /* the adapter's last chat chunks: the finish, the usage */
            struct sy_buf *dst = x->dl->stream_chunk ? &x->mid : &x->emit;
            if (x->st.done && !x->st.finished)
                sy_oai_chunk_finish(&x->st, dst, x->st.ntools ? "tool_calls" : "stop");
            if (x->st.include_usage)
                sy_oai_chunk_usage(&x->st, dst);
            if (x->mid.len)
                chat_frames_to_dialect(c, x->mid.p, x->mid.len);
        }
        x->dl->stream_end(x->ds, &x->emit);
    }
    *out = x->emit.p;
    *outn = x->emit.len;
    return 0;
}

/* ---- whole responses and errors ------------------------------------------ */

int sy_xlate_response(struct sy_call *c)
{
    struct sy_xcall *x = c->x;
    struct sy_buf nb;
    sy_buf_init(&nb, MAX_XBODY);
    sy_buf_reserve(&nb, c->up.up_body.len + 1024);
    int rc = 0;
    set_ctx_now(x);
    const char *body = c->up.up_body.p ? c->up.up_body.p : "";
    size_t n = c->up.up_body.len;
    /* native: the dialect's own answer (Responses: ids rewritten) */
    if (x->native) {
        const char *u = NULL; /* the usage object (the last "usage" member): read only there */
        for (const char *k = body; (k = memmem(k, (size_t)(body + n - k), "\"usage\"", 7)) != NULL; k += 7)
            u = k;
        if (u)
            sy_xlate_native_usage(c, u, (size_t)(body + n - u));
        if (c->kind == SY_RK_RESPONSES_ID)
            c->usage.have_usage = 1; /* nothing to count */
        else
            sy_responses_native_made(c, body, n, 0);
        x->dl->native_rewrite(body, n, c->drt->d->provider, c->drt->d->id, &nb);
        if (sy_xlate_echo_name(c) && c->kind == SY_RK_RESPONSES) {
            sy_buf_reset(&c->up.up_body);
            sy_xlate_echo_model(nb.p ? nb.p : "", nb.len, sy_xlate_echo_name(c), &c->up.up_body);
            sy_buf_free(&nb);
            return 0;
        }
        sy_buf_free(&c->up.up_body);
        c->up.up_body = nb;
        return 0;
    }
    if (x->ad) { /* the adapter's answer -> chat */
        rc = x->ad->decode_response(&x->ctx, &x->st, body, n, &nb);
        if (!rc && x->ctx.op == SY_OP_EMBED && !x->st.u.have && c->req->body.len <= (64u << 10)) {
            /* no usage from the provider: count the input as LiteLLM's token_counter does, and
             * write the answer again with it (embeddings inputs are small; larger ones stay 0) */
            long pt =
                sy_tok_count_request(sy_tok_get((enum sy_tok_encoding)c->drt->enc), c->req->body.p, c->req->body.len);
            if (pt > 0) {
                memset(&x->st.u, 0, sizeof x->st.u);
                x->st.u.prompt = pt;
                sy_buf_reset(&nb);
                rc = x->ad->decode_response(&x->ctx, &x->st, body, n, &nb);
                x->st.u.prompt = pt;
                x->st.u.have = 1;
            }
        }
        if (!rc && x->b64)
            embeddings_to_b64(&c->req->arena, &nb);
        if (rc) {
            x->err = x->st.err;
            if (!x->err.status)
                sy_oai_err(&x->err, 502, "switchyard: the provider's response could not be decoded", 56);
            x->have_err = 1;
            sy_buf_free(&nb);
            return rc < 0 ? rc : SY_EUPPROTO;
        }
        if (x->st.u.have) {
            c->usage.prompt_tokens = (uint64_t)(x->st.u.prompt > 0 ? x->st.u.prompt : 0);
            c->usage.completion_tokens = (uint64_t)(x->st.u.completion > 0 ? x->st.u.completion : 0);
            c->usage.cached_tokens = (uint64_t)(x->st.u.cache_read > 0 ? x->st.u.cache_read : 0);
            c->usage.cache_write_tokens = (uint64_t)(x->st.u.cache_write > 0 ? x->st.u.cache_write : 0);
            c->usage.cache_write_1h_tokens = (uint64_t)(x->st.u.cache_write_1h > 0 ? x->st.u.cache_write_1h : 0);
            c->usage.reasoning_tokens = (uint64_t)(x->st.u.reasoning > 0 ? x->st.u.reasoning : 0);
            c->usage.have_usage = 1;
        }
    }
    if (x->dl->from_chat) { /* chat -> the client's dialect */
        const char *ob = x->ad ? nb.p : body;
        size_t on = x->ad ? nb.len : n;
        if (!x->ad)
            take_usage(c, ob, on);
        struct sy_buf ab;
        sy_buf_init(&ab, MAX_XBODY);
        rc = x->dl->from_chat(&x->dm, ob ? ob : "", on, &c->req->arena, &ab);
        sy_buf_free(&nb);
        if (rc) {
            sy_buf_free(&ab);
            set_err(x, 502, "switchyard: the upstream's response could not be translated");
            return rc < 0 ? rc : SY_EUPPROTO;
        }
        nb = ab;
    }
    sy_buf_free(&c->up.up_body);
    c->up.up_body = nb;
    return 0;
}

void sy_xlate_error(struct sy_call *c)
{
    struct sy_xcall *x = c->x;
    x->native_status = x->native ? c->up.up_status : 0;
    if (!x->ad)
        return; /* an OpenAI error body: proxy.c reads it as for the pass-through path */
    memset(&x->err, 0, sizeof x->err);
    x->ad->decode_error(&x->ctx, c->up.up_status, c->up.up_body.p ? c->up.up_body.p : "", c->up.up_body.len, &x->err);
    if (!x->err.status)
        x->err.status = c->up.up_status;
    x->have_err = 1;
}

/* ---- the model the client asked for ---------------------------------------- */

int sy_xlate_echo_model(const char *p, size_t n, const char *model, struct sy_buf *out)
{
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
        i++;
    struct sy_jscan sc; /* the member lookups below need valid JSON: an upstream's bytes may be anything */
    if (!model || i >= n || p[i] != '{' || !memmem(p + i, n - i, "\"model\"", 7) || sy_jscan(p + i, n - i, &sc) != 0) {
        sy_buf_append(out, p, n);
        return 0;
    }
    struct sy_jspan top = {i, n - i, 'o'}, at[3];
    int k = 0;
    at[k] = sy_jscan_member(p, top, "model");
    k += at[k].type == 's';
    static const char *const inner[2] = {"message", "response"};
    for (int j = 0; j < 2; j++) {
        struct sy_jspan o = sy_jscan_member(p, top, inner[j]);
        if (o.type != 'o')
            continue;
        at[k] = sy_jscan_member(p, o, "model");
        k += at[k].type == 's';
    }
    for (int a = 1; a < k; a++) /* in the order they come (they never overlap) */
        for (int b = a; b > 0 && at[b].off < at[b - 1].off; b--) {
            struct sy_jspan t = at[b];
            at[b] = at[b - 1];
            at[b - 1] = t;
        }
    size_t from = 0;
    for (int j = 0; j < k; j++) {
        sy_buf_append(out, p + from, at[j].off - from);
        SY_BUF_LIT(out, "\"");
        sy_buf_json_escape(out, model, strlen(model));
        SY_BUF_LIT(out, "\"");
        from = at[j].off + at[j].len;
    }
    sy_buf_append(out, p + from, n - from);
    return k;
}

/* The first top-level "model" member of the object at p[i] (p[i] == '{'),
 * found by walking the object's first TOP_MODEL_WALK bytes: OpenAI answers and
 * chunks put it fourth, after id, object and created, so the walk is a few
 * dozen bytes where sy_jscan_member scans the whole body (it keeps the last
 * duplicate). 1 with *off, *len the value's span (quotes included) when it is a
 * string, 0 when the object has no such member or it is not a string, -1
 * when the walk cannot tell (an escaped key, a long prefix, bad JSON): then
 * the caller asks sy_jscan_member. */
#define TOP_MODEL_WALK 4096
/* The closing quote of the string whose text starts at p[i]: the first '"'
 * not escaped (preceded by an even run of backslashes); lim when none. */
static size_t str_end(const char *p, size_t i, size_t lim)
{
    while (i < lim) {
        const char *q = memchr(p + i, '"', lim - i);
        if (!q)
            return lim;
        size_t e = (size_t)(q - p), b = e;
        while (b > i && p[b - 1] == '\\')
            b--;
        if (((e - b) & 1) == 0)
            return e;
        i = e + 1;
    }
    return lim;
}
static int top_model(const char *p, size_t n, size_t i, size_t *off, size_t *len)
{
    size_t lim = n < i + TOP_MODEL_WALK ? n : i + TOP_MODEL_WALK;
    int depth = 1, want_key = 1;
    for (size_t k = i + 1; k < lim; k++) {
        char ch = p[k];
        if (ch == '"') {
            size_t e = str_end(p, k + 1, lim);
            if (e >= lim)
                return -1;
            if (depth == 1 && want_key) {
                if (memchr(p + k + 1, '\\', e - k - 1))
                    return -1; /* an escaped key: decoded by jscan */
                int is_model = e - k - 1 == 5 && memcmp(p + k + 1, "model", 5) == 0;
                size_t v = e + 1;
                while (v < lim && (p[v] == ' ' || p[v] == '\t' || p[v] == '\r' || p[v] == '\n'))
                    v++;
                if (v >= lim || p[v] != ':')
                    return -1;
                v++;
                while (v < lim && (p[v] == ' ' || p[v] == '\t' || p[v] == '\r' || p[v] == '\n'))
                    v++;
                if (is_model) {
                    if (v >= lim || p[v] != '"')
                        return -1;
                    size_t ve = str_end(p, v + 1, lim);
                    if (ve >= lim)
                        return -1;
                    *off = v;
                    *len = ve + 1 - v;
                    return 1;
                }
                want_key = 0;
                k = v - 1;
                continue;
            }
            k = e;
            continue;
        }
        if (ch == '{' || ch == '[') {
            depth++;
        } else if (ch == '}' || ch == ']') {
            if (--depth == 0)
                return 0;
        } else if (ch == ',' && depth == 1) {
            want_key = 1;
        }
    }
    return -1;
}

/* OpenAI's own layout, without a walk: the first `"model"` of the object's
 * first bytes, when no '{' or '[' comes before it (so it is at depth 1). In
 * JSON text an unescaped quote never occurs inside a string, so these bytes,
 * followed by ':', are a member named model, not text. 1 with the span of a
 * string value, -1 when this cannot tell (top_model walks). */
static int quick_model(const char *p, size_t n, size_t i, size_t *off, size_t *len)
{
    size_t lim = n < i + 512 ? n : i + 512;
    const char *q = p + i + 1, *e = p + lim;
    while ((q = memchr(q, '"', (size_t)(e - q))) != NULL && ((size_t)(e - q) < 7 || memcmp(q + 1, "model\"", 6) != 0))
        q++; /* memmem's set-up costs more than these few quotes */
    if (!q || memchr(p + i + 1, '{', (size_t)(q - p) - i - 1) || memchr(p + i + 1, '[', (size_t)(q - p) - i - 1))
        return -1;
    size_t v = (size_t)(q - p) + 7;
    while (v < lim && (p[v] == ' ' || p[v] == '\t' || p[v] == '\r' || p[v] == '\n'))
        v++;
    if (v >= lim || p[v] != ':')
        return -1;
    v++;
    while (v < lim && (p[v] == ' ' || p[v] == '\t' || p[v] == '\r' || p[v] == '\n'))
        v++;
    if (v >= lim || p[v] != '"')
        return -1;
    size_t ve = str_end(p, v + 1, n);
    if (ve >= n)
        return -1;
    *off = v;
    *len = ve + 1 - v;
    return 1;
}

int sy_xlate_model_span(const char *p, size_t n, size_t *off, size_t *len)
{
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
        i++;
    if (i >= n || p[i] != '{')
        return 0;
    int r = quick_model(p, n, i, off, len);
    if (r < 0)
        r = top_model(p, n, i, off, len);
    if (r < 0) { /* jscan validates the whole object and decodes the keys (sy_jscan_member needs valid JSON) */
        struct sy_jscan sc;
        if (sy_jscan(p + i, n - i, &sc) != 0 || sc.model.type != 's')
            return 0;
        *off = i + sc.model.off;
        *len = sc.model.len;
        return 1;
    }
    return r == 1;
}

int sy_xlate_echo_top(const char *p, size_t n, const char *model, struct sy_buf *out)
{
    size_t off, len, ml;
    int r = model ? sy_xlate_model_span(p, n, &off, &len) : 0;
    ml = model ? strlen(model) : 0;
    if (r != 1 ||
        (len == ml + 2 && memcmp(p + off + 1, model, ml) == 0 && !memchr(model, '"', ml) && !memchr(model, '\\', ml)))
        return 0;  /* none, or already the name asked for */
    int plain = 1; /* a name without bytes to escape (the usual one) is copied */
    for (size_t k = 0; k < ml && plain; k++)
        plain = (unsigned char)model[k] >= 0x20 && model[k] != '"' && model[k] != '\\';
    sy_buf_reserve(out, n - len + ml + 2);
    sy_buf_append(out, p, off + 1);
    if (plain)
        sy_buf_append(out, model, ml);
    else
        sy_buf_json_escape(out, model, ml);
    sy_buf_append(out, p + off + len - 1, n - off - len + 1);
    return 1;
}

#define MAX_FIRST_EVENT (1u << 20)

void sy_xlate_fwd_body(struct sy_call *c)
{
    const char *m = sy_xlate_echo_name(c);
    if (!m || !c->up.up_body.len)
        return;
    struct sy_buf nb;
    sy_buf_init(&nb, MAX_XBODY);
    int top = c->kind == SY_RK_CHAT || c->kind == SY_RK_COMPLETIONS; /* OpenAI's: a top-level model only */
    if ((top ? sy_xlate_echo_top(c->up.up_body.p, c->up.up_body.len, m, &nb)
             : sy_xlate_echo_model(c->up.up_body.p, c->up.up_body.len, m, &nb)) &&
        !sy_buf_failed(&nb)) {
        sy_buf_free(&c->up.up_body);
        c->up.up_body = nb;
        return;
    }
    sy_buf_free(&nb);
}

/* The first SSE event in b: the model in its data line replaced, into out. */
static void first_event_echo(const char *m, const char *b, size_t n, struct sy_buf *out)
{
    const char *d = NULL;
    for (const char *q = b; q < b + n; q++) { /* the "data:" line: at the start or after a line end */
        if ((q == b || q[-1] == '\n') && (size_t)(b + n - q) >= 5 && memcmp(q, "data:", 5) == 0) {
            d = q + 5;
            break;
        }
    }
    if (!d) {
        sy_buf_append(out, b, n);
        return;
    }
    const char *e = memchr(d, '\n', (size_t)(b + n - d));
    if (!e)
        e = b + n;
    size_t dl = (size_t)(e - d);
    if (dl && d[dl - 1] == '\r')
        dl--;
    sy_buf_append(out, b, (size_t)(d - b));
    sy_xlate_echo_model(d, dl, m, out);
    sy_buf_append(out, d + dl, (size_t)(b + n - d - dl));
}

int sy_xlate_fwd_stream(struct sy_call *c, const char **p, size_t *n)
{
    struct sy_xcall *x = c->x;
    const char *m = sy_xlate_echo_name(c);
    if (x->fwd_passing || !m)
        return 0;
    /* x->emit holds the first event's bytes (a forwarded call decodes nothing) */
    size_t before = x->emit.len;
    sy_buf_append(&x->emit, *p, *n);
    const char *h = x->emit.p;
    size_t hl = x->emit.len, end = 0;
    size_t from = before >= 3 ? before - 3 : 0;
    for (size_t i = from; i + 1 < hl; i++) { /* the event ends at an empty line: LF LF or CRLF CRLF */
        if (h[i] == '\n' && h[i + 1] == '\n') {
            end = i + 2;
            break;
        }
        if (i + 3 < hl && h[i] == '\r' && h[i + 1] == '\n' && h[i + 2] == '\r' && h[i + 3] == '\n') {
            end = i + 4;
            break;
        }
    }
    if (!end && hl < MAX_FIRST_EVENT && !sy_buf_failed(&x->emit))
        return 1;
    x->fwd_passing = 1;
    sy_buf_reset(&x->mid);
    if (end) {
        first_event_echo(m, h, end, &x->mid);
        sy_buf_append(&x->mid, h + end, hl - end);
    } else {
        sy_buf_append(&x->mid, h, hl);
    }
    sy_buf_reset(&x->emit);
    *p = x->mid.p;
    *n = x->mid.len;
    return 0;
}

void sy_xlate_fwd_held(struct sy_call *c, const char **p, size_t *n)
{
    struct sy_xcall *x = c->x;
    *p = NULL;
    *n = 0;
    if (!x || x->fwd_passing || !x->emit.len)
        return;
    x->fwd_passing = 1;
    *p = x->emit.p;
    *n = x->emit.len;
}

void sy_xlate_native_usage(struct sy_call *c, const char *p, size_t n)
{
    int64_t in = SY_USAGE_LAST_NUM(p, n, "\"input_tokens\"");
    int64_t out = SY_USAGE_LAST_NUM(p, n, "\"output_tokens\"");
    int64_t cr = SY_USAGE_LAST_NUM(p, n, "\"cache_read_input_tokens\"");
    int64_t cw = SY_USAGE_LAST_NUM(p, n, "\"cache_creation_input_tokens\"");
    if (in >= 0) {
        /* Anthropic counts cache reads and writes apart from input_tokens; the Responses
         * API's input_tokens include input_tokens_details.cached_tokens */
        int64_t cached = cr > 0 ? cr : SY_USAGE_LAST_NUM(p, n, "\"cached_tokens\"");
        c->usage.prompt_tokens = (uint64_t)(in + (cr > 0 ? cr : 0) + (cw > 0 ? cw : 0));
        c->usage.cached_tokens = cached > 0 && (uint64_t)cached <= c->usage.prompt_tokens ? (uint64_t)cached : 0;
        c->usage.cache_write_tokens = cw > 0 ? (uint64_t)cw : 0;
        int64_t h1 = SY_USAGE_LAST_NUM(p, n, "\"ephemeral_1h_input_tokens\""); /* usage.cache_creation's */
        c->usage.cache_write_1h_tokens = h1 > 0 && h1 <= cw ? (uint64_t)h1 : 0;
    }
    if (out >= 0) {
        int64_t rt = SY_USAGE_LAST_NUM(p, n, "\"reasoning_tokens\"");
        c->usage.completion_tokens = (uint64_t)out;
        c->usage.reasoning_tokens = rt > 0 && rt <= out ? (uint64_t)rt : 0;
    }
    if (in >= 0 || out >= 0)
        c->usage.have_usage = 1;
}

int sy_xlate_client_error(int kind, int status, const char *message, struct sy_buf *out)
{
    const struct sy_dialect *dl = sy_xlate_dialect(kind);
    if (!dl->error)
        return 0;
    dl->error(status, message ? message : "", message ? strlen(message) : 0, out);
    return 1;
}

int sy_xlate_stream_error(struct sy_call *c, int status, const char *message, struct sy_buf *out)
{
    struct sy_xcall *x = c->x;
    if (!x || !x->ds_on || !x->dl->stream_error || (x->native && !x->dl->native_keeps_stream))
        return 0;
    x->dl->stream_error(x->ds, status, message ? message : "", message ? strlen(message) : 0, out);
    return 1;
}

/* ---- health checks ---------------------------------------------------------- */

int sy_xlate_probe(struct sy_worker *w, const struct sy_drt *d, int embed, const char *body, size_t n, char **url,
                   char **hdrs, size_t *hlen, char **obody, size_t *olen, char *err, size_t errlen)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc doc;
    struct sy_xout out;
    memset(&out, 0, sizeof out);
    sy_buf_init(&out.url, MAX_URL);
    sy_buf_init(&out.headers, MAX_HDRS);
    sy_buf_init(&out.body, 1 << 20);
    char tok[4096];
    int rc = sy_jdom_parse(&doc, body, n, &a, 0);
    struct sy_xctx x = {.d = d->d, .pc = d->pc, .op = embed ? SY_OP_EMBED : SY_OP_CHAT, .arena = &a};
    x.model = d->d->upstream_model ? d->d->upstream_model : "";
    x.now = (int64_t)time(NULL);
    if (!rc && (d->ad->caps & SY_CAP_OAUTH)) {
        int t = sy_oauth_token(w, d->pc, tok, sizeof tok, err, errlen);
        if (t == 0)
            snprintf(err, errlen, "OAuth2 access token not available yet (being fetched); try again");
        if (t != 1)
            rc = SY_EAUTH;
        else
            x.access_token = tok;
    }
    if (!rc) {
        rc = d->ad->encode(&x, &doc, &out);
        if (rc)
            snprintf(err, errlen, "%s", out.err.message[0] ? out.err.message : "request could not be translated");
    }
    if (!rc) {
        *url = strdup(out.url.p);
        *hdrs = malloc(out.headers.len + 1);
        *obody = malloc(out.body.len + 1);
        if (!*url || !*hdrs || !*obody) {
            free(*url);
            free(*hdrs);
            free(*obody);
            *url = *hdrs = *obody = NULL;
            snprintf(err, errlen, "out of memory");
            rc = SY_ENOMEM;
        } else {
            memcpy(*hdrs, out.headers.p, out.headers.len + 1);
            memcpy(*obody, out.body.p, out.body.len + 1);
            *hlen = out.headers.len;
            *olen = out.body.len;
        }
    }
    sy_buf_free(&out.url);
    sy_buf_free(&out.headers);
    sy_buf_free(&out.body);
    sy_arena_free(&a);
    return rc;
}
