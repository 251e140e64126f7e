/* messages_count.c - the POST /v1/messages/count_tokens stage: Claude Code
 * asks it how large its conversation is to decide when to compact, so the
 * answer must not understate.
 *
 *   {"input_tokens": N}            always this shape (errors: Anthropic's, as /v1/messages)
 *   x-switchyard-token-count: provider | exact | estimate
 *
 * Which count (providers/count.h has the table of counters):
 *
 *   1. The model group's deployment: the first of the group that routing
 *      could pick now (supported, not cooling down, healthy), after the key's
 *      and team's aliases; the key's model access is checked first, as on
 *      /v1/messages (LiteLLM's 401).
 *   2. Its provider's own counter when it has one (Anthropic, Bedrock Claude,
 *      Vertex Claude, Gemini, Vertex Gemini): one upstream call on the
 *      worker's pool, bounded by the deployment's timeout capped at
 *      COUNT_TIMEOUT_CAP_S; a client that leaves cancels it. -> "provider"
 *   3. OpenAI models (openai/, azure/, an OpenAI model anywhere): the built-in
 *      tokenizer, which is theirs (o200k / cl100k by model). -> "exact"
 *   4. Anything else, and a counter that failed (transport error, timeout,
 *      4xx/5xx, an answer without a count): the tokenizer's count of the
 *      request translated to OpenAI form, biased up by sy_count_estimate
 *      (x SY_COUNT_FACTOR, + per message, + the tool-use prompt). -> "estimate"
 *
 * The parse, the translation to OpenAI form, the local count and the
 * provider request (pure builders, providers/count.c; the Gemini ones through
 * the deployment's adapter) are one unit of work, on libuv's thread pool for
 * large bodies (gateway/offload.h). A Vertex deployment's OAuth token is taken
 * on the loop first (gateway/oauth.c); while it is being fetched the stage
 * polls it on a timer, up to the call's deadline (then: the estimate).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/errors.h"
#include "core/log.h"
#include "dialects/messages.h"
#include "gateway/offload.h"
#include "gateway/slot.h"
#include "gateway/stage.h"
#include "gateway/xlate.h"
#include "http/reply.h"
#include "http/server.h"
#include "providers/count.h"
#include "tokenizer/tokenizer.h"
#include "upstream/client.h"

#define COUNT_TIMEOUT_CAP_S 10.0        /* a counter that takes longer is not worth waiting for */
#define COUNT_CONNECT_CAP_S 5.0         /* connect within min(timeout, this) */
#define COUNT_RESP_MAX      (64u << 10) /* a counter's answer is a few bytes */
#define COUNT_BODY_MAX      (64u << 20)
#define TOKEN_POLL_MS       25

static int mc_slot = -1;

struct mc {
    struct sy_call *c;
    const struct sy_drt *drt; /* the deployment counted for; NULL: none (estimate) */
    enum sy_count_kind kind;  /* the counter to ask; falls back to the local count */
    const char *model;        /* the deployment's upstream model (arena) */
    double timeout_s;
    uint64_t deadline_ms; /* loop time after which the provider is not asked */
    /* the work's results */
    int status; /* != 0: the request is refused with this status and message */
    char msg[1024];
    int64_t local;    /* tokenizer count of the OpenAI form */
    int local_exact;  /* it is the model's own tokenizer (EXACT) */
    int64_t estimate; /* sy_count_estimate of it */
    int built;        /* out holds the provider request */
    struct sy_xout out;
    /* the call */
    char fwd[1024]; /* the client's anthropic-version / anthropic-beta lines */
    size_t fwd_len;
    char tok[4096];
    uv_timer_t *timer; /* polling for the OAuth token (malloc: closed asynchronously) */
    struct sy_ureq *ureq;
    uv_buf_t part;
    struct sy_buf resp;
    int up_status;
    int overflow;
};

static void mc_cleanup(void *p)
{
    struct mc *m = p;
    if (m->ureq) {
        sy_ureq_cancel(m->ureq);
        m->ureq = NULL;
    }
    sy_buf_free(&m->out.url);
    sy_buf_free(&m->out.headers);
    sy_buf_free(&m->out.body);
    sy_buf_free(&m->resp);
}

static void timer_closed(uv_handle_t *h)
{
    free(h);
}

static void timer_drop(struct mc *m)
{
    if (!m->timer)
        return;
    uv_timer_stop(m->timer);
    uv_close((uv_handle_t *)m->timer, timer_closed);
    m->timer = NULL;
}

/* ---- the answer ------------------------------------------------------------ */

static void reply_count(struct mc *m, int64_t n, const char *label)
{
    struct sy_call *c = m->c;
    char body[64];
    int bl = snprintf(body, sizeof body, "{\"input_tokens\":%lld}", (long long)(n > 0 ? n : 0));
    struct sy_buf h;
    sy_buf_init(&h, 16384);
    sy_call_headers(c, &h, 0);
    sy_buf_printf(&h, "x-switchyard-token-count: %s\r\n", label);
    c->req->on_abort = NULL;
    sy_call_account(c, 200);
    sy_resp_simple(c->req, 200, h.p, h.len, "application/json", body, (size_t)bl);
    sy_buf_free(&h);
}

/* The local answer: exact for an OpenAI model, else the estimate. */
static void reply_local(struct mc *m)
{
    if (m->local_exact)
        reply_count(m, m->local, sy_count_label(SY_COUNT_EXACT));
    else
        reply_count(m, m->estimate, sy_count_label(SY_COUNT_ESTIMATE));
}

/* ---- the provider's counter -------------------------------------------------- */

static int on_head(void *ud, int status, const struct sy_uheader *h, size_t nh)
{
    (void)h;
    (void)nh;
    struct mc *m = ud;
    m->up_status = status;
    sy_buf_reset(&m->resp);
    m->overflow = 0;
    return 0;
}

static int on_body(void *ud, const char *b, size_t n)
{
    struct mc *m = ud;
    if (!m->overflow && sy_buf_append(&m->resp, b, n) != 0)
        m->overflow = 1;
    return 0;
}

static void on_done(void *ud, int err)
{
    struct mc *m = ud;
    m->ureq = NULL;
    int64_t n = -1;
    if (!err && m->up_status >= 200 && m->up_status < 300 && !m->overflow)
        n = sy_count_parse(m->kind, m->resp.p, m->resp.len);
    if (n >= 0) {
        reply_count(m, n, sy_count_label(m->kind));
        return;
    }
    const char *id = m->drt && m->drt->d->id ? m->drt->d->id : "?";
    if (err)
        sy_info("count_tokens: deployment %s: the provider's counter failed (%s); answering an estimate", id,
                sy_err_name(err));
    else
        sy_info("count_tokens: deployment %s: the provider's counter answered %d without a count; answering an "
                "estimate",
                id, m->up_status);
    m->local_exact = 0;
    reply_local(m);
}

static const struct sy_ureq_cbs count_cbs = {on_head, on_body, on_done};

/* The client went away: cancel the call or the wait, end the request. */
static void mc_abort(struct sy_req *r)
{
    struct sy_call *c = r->handler_data;
    struct mc *m = sy_call_slot(c, mc_slot);
    if (m) {
        if (m->ureq) {
            sy_ureq_cancel(m->ureq);
            m->ureq = NULL;
        }
        timer_drop(m);
    }
    r->on_abort = NULL;
    sy_call_account(c, 499);
    sy_resp_end(r);
}

/* ---- the work: parse, translate, count, build ------------------------------------ */

static void refuse(struct mc *m, int status, const char *msg)
{
    m->status = status;
    snprintf(m->msg, sizeof m->msg, "%s", msg);
}

/* The provider request of m->kind into m->out (pool or loop; pure). */
static void build(struct mc *m, const struct sy_jdoc *req, const char *oai, size_t oai_len, struct sy_arena *a)
{
    const struct sy_drt *d = m->drt;
    struct sy_xctx x = {.d = d->d, .pc = d->pc, .model = m->model, .op = SY_OP_CHAT, .arena = a};
    x.now = (int64_t)time(NULL);
    x.access_token = m->tok[0] ? m->tok : NULL;
    x.fwd_headers = m->fwd_len ? m->fwd : NULL;
    x.fwd_headers_len = m->fwd_len;
    int rc = SY_EINVAL;
    if (!d->pc) { /* not configured for its provider: nothing to ask */
        snprintf(m->out.err.message, sizeof m->out.err.message, "the deployment has no provider settings");
        m->built = 0;
        return;
    }
    switch (m->kind) {
    case SY_COUNT_ANTHROPIC: rc = sy_count_anthropic(&x, req, &m->out); break;
    case SY_COUNT_BEDROCK: rc = sy_count_bedrock(&x, req, &m->out); break;
    case SY_COUNT_VERTEX_CLAUDE: rc = sy_count_vertex_claude(&x, req, &m->out); break;
    case SY_COUNT_GEMINI:
    case SY_COUNT_VERTEX_GEMINI: {
        struct sy_jdoc od;
        rc = d->ad ? sy_jdom_parse(&od, oai, oai_len, a, 0) : SY_EINVAL;
        if (!rc)
            rc = d->ad->encode(&x, &od, &m->out);
        if (!rc)
            rc = sy_count_gemini(&x, m->kind, &m->out);
        break;
    }
    default: rc = SY_EINVAL; break;
    }
    m->built = rc == 0;
    if (rc)
        m->out.err.message[sizeof m->out.err.message - 1] = 0; /* logged by the caller */
}

static void mc_work(struct sy_call *c, void *arg)
{
    struct mc *m = arg;
    struct sy_req *r = c->req;
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, r->body.p, r->body.len, &r->arena, 0) != 0 || sy_jdom_type(&d, 0) != 'o') {
        refuse(m, 400, "Invalid JSON payload: expected a JSON object");
        return;
    }
    uint32_t msgs = sy_jdom_top(&d, "messages");
    if (!msgs || sy_jdom_type(&d, msgs) != 'a') {
        refuse(m, 400, "messages: Field required (a list of messages)");
        return;
    }
    struct sy_buf ob;
    struct sy_xerr e = {0};
    sy_buf_init(&ob, COUNT_BODY_MAX);
    if (sy_msg_to_openai(&d, &r->arena, &ob, &e) != 0) {
        refuse(m, e.status ? e.status : 400, e.message[0] ? e.message : "the request could not be read");
        sy_buf_free(&ob);
        return;
    }
    const char *mm = m->model ? m->model : "";
    int enc = m->drt ? m->drt->enc : (int)sy_tok_encoding_for_model(mm, strlen(mm));
    long n = sy_tok_count_request(sy_tok_get((enum sy_tok_encoding)enc), ob.p ? ob.p : "{}", ob.len);
    m->local = n > 0 ? n : 0;
    size_t nmsgs = 0;
    for (uint32_t i = sy_jdom_first(&d, msgs); i; i = sy_jdom_next(&d, i))
        nmsgs++;
    uint32_t tools = sy_jdom_top(&d, "tools");
    int has_tools = tools && sy_jdom_type(&d, tools) == 'a' && sy_jdom_first(&d, tools);
    m->estimate = sy_count_estimate(m->local, nmsgs + (sy_jdom_top(&d, "system") ? 1 : 0), has_tools);
    if (m->kind != SY_COUNT_ESTIMATE && m->kind != SY_COUNT_EXACT && m->drt)
        build(m, &d, ob.p ? ob.p : "{}", ob.len, &r->arena);
    sy_buf_free(&ob);
}

static void mc_done(struct sy_call *c, void *arg)
{
    struct mc *m = arg;
    if (m->status) {
        sy_call_error(c, m->status, "invalid_request_error", NULL, m->msg, NULL, 0);
        return;
    }
    if (m->kind == SY_COUNT_EXACT || m->kind == SY_COUNT_ESTIMATE || !m->drt) {
        reply_local(m);
        return;
    }
    if (!m->built) {
        sy_info("count_tokens: deployment %s: no request for the provider's counter (%s); answering an estimate",
                m->drt->d->id ? m->drt->d->id : "?", m->out.err.message);
        m->local_exact = 0;
        reply_local(m);
        return;
    }
    uint64_t now = uv_now(&c->w->loop);
    double left = m->deadline_ms > now ? (double)(m->deadline_ms - now) / 1000.0 : 0;
    if (left <= 0.001 || !c->w->upool) {
        reply_local(m);
        return;
    }
    m->part = uv_buf_init(m->out.body.p, (unsigned)m->out.body.len);
    struct sy_ureq_opts o = {0};
    o.url = m->out.url.p;
    o.method = "POST";
    o.headers = m->out.headers.p;
    o.headers_len = m->out.headers.len;
    o.body = &m->part;
    o.nbody = 1;
    o.connect_timeout_s = left < COUNT_CONNECT_CAP_S ? left : COUNT_CONNECT_CAP_S;
    o.first_byte_timeout_s = left;
    o.idle_timeout_s = left;
    o.total_timeout_s = left;
    m->ureq = sy_ureq_start(c->w->upool, &o, &count_cbs, m);
    if (!m->ureq) {
        sy_info("count_tokens: deployment %s: invalid counter URL; answering an estimate",
                m->drt->d->id ? m->drt->d->id : "?");
        reply_local(m);
        return;
    }
    c->req->on_abort = mc_abort;
}

static void start_work(struct mc *m)
{
    m->c->req->on_abort = NULL; /* the offload layer ends a request whose client left */
    /* Either replies now (inline) or later from the loop: do not touch c after. */
    sy_call_run_work(m->c, m->c->req->body.len, mc_work, mc_done, m);
}

/* ---- the OAuth token (Vertex) ------------------------------------------------------ */

/* 1: the token is in m->tok (or not needed); 0: being fetched; -1: failed. */
static int take_token(struct mc *m)
{
    if (m->kind != SY_COUNT_VERTEX_CLAUDE && m->kind != SY_COUNT_VERTEX_GEMINI)
        return 1;
    if (!m->drt->pc)
        return -1;
    char err[256] = "";
    int t = sy_oauth_token(m->c->w, m->drt->pc, m->tok, sizeof m->tok, err, sizeof err);
    if (t < 0)
        sy_info("count_tokens: deployment %s: no OAuth2 token (%s); answering an estimate",
                m->drt->d->id ? m->drt->d->id : "?", err);
    return t;
}

static void token_poll(uv_timer_t *t)
{
    struct mc *m = t->data;
    int tk = take_token(m);
    if (tk == 0 && uv_now(&m->c->w->loop) < m->deadline_ms)
        return; /* the repeating timer asks again */
    timer_drop(m);
    if (tk != 1)
        m->kind = SY_COUNT_ESTIMATE;
    start_work(m);
}

/* ---- the stage ------------------------------------------------------------------------ */

/* The first deployment of g routing could pick now. */
static const struct sy_drt *pick(const struct sy_group *g)
{
    size_t avail = sy_router_available(g, NULL);
    for (size_t i = 0; i < g->n; i++)
        if (g->d[i]->prov && sy_router_available(g, g->d[i]) < avail)
            return g->d[i];
    for (size_t i = 0; i < g->n; i++) /* all cooling down: the count is still the model's */
        if (g->d[i]->prov)
            return g->d[i];
    return NULL;
}

/* The upstream model d serves for the requested name (a wildcard's '*' filled). */
static const char *upstream_model(struct sy_call *c, const struct sy_group *g, const struct sy_drt *d,
                                  const char *asked)
{
    const char *um = d->d->upstream_model ? d->d->upstream_model : "";
    const char *star = d->wildcard ? strchr(um, '*') : NULL;
    if (!star)
        return um;
    const char *part;
    size_t pl;
    sy_router_wild_part(g->name, asked, &part, &pl);
    size_t n = (size_t)(star - um) + pl + strlen(star + 1);
    char *s = sy_arena_alloc(&c->req->arena, n + 1);
    if (!s)
        return um;
    snprintf(s, n + 1, "%.*s%.*s%s", (int)(star - um), um, (int)pl, part, star + 1);
    return s;
}

/* The client's anthropic-version and anthropic-beta lines (forwarded to Anthropic). */
static void fwd_headers(struct mc *m, struct sy_req *r)
{
    static const char *const names[] = {"anthropic-version", "anthropic-beta"};
    size_t n = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct sy_str v = sy_req_header(r, names[i]);
        if (!v.p)
            continue;
        int k = snprintf(m->fwd + n, sizeof m->fwd - n, "%s: %.*s\r\n", names[i], (int)v.n, v.p);
        if (k < 0 || (size_t)k >= sizeof m->fwd - n)
            break; /* too long: not forwarded */
        n += (size_t)k;
    }
    m->fwd[n] = 0;
    m->fwd_len = n;
}

static int messages_count_run(struct sy_call *c)
{
    struct sy_req *r = c->req;
    if (c->auth.key && c->in.model && sy_call_check_model(c, c->in.model) != SY_OK)
        return SY_DONE; /* the key may not use the model: LiteLLM's 401, as on /v1/messages */
    struct mc *m = sy_call_slot_new(c, mc_slot, sizeof *m);
    if (!m) {
        sy_call_error(c, 500, "internal_server_error", NULL, "out of memory", NULL, 0);
        return SY_DONE;
    }
    memset(m, 0, sizeof *m);
    m->c = c;
    sy_buf_init(&m->out.url, 1u << 16);
    sy_buf_init(&m->out.headers, 1u << 16);
    sy_buf_init(&m->out.body, COUNT_BODY_MAX);
    sy_buf_init(&m->resp, COUNT_RESP_MAX);
    sy_arena_defer(&r->arena, mc_cleanup, m);
    m->kind = SY_COUNT_ESTIMATE;
    const char *asked = c->in.model;
    const struct sy_group *g = NULL;
    if (asked) {
        asked = sy_call_aliased(c, asked); /* the group the model routes to: aliases first */
        g = sy_router_resolve(&c->g->table, asked, strlen(asked));
    }
    m->drt = g ? pick(g) : NULL;
    if (m->drt) {
        m->model = upstream_model(c, g, m->drt, asked);
        m->kind = sy_count_kind_of(m->drt->d->provider, m->model);
        if (m->drt->prov && (m->drt->prov->flags & SY_PRESET_MOCK) && m->kind != SY_COUNT_EXACT)
            m->kind = SY_COUNT_ESTIMATE; /* answered in-process (mock_response): no counter to ask */
        m->timeout_s =
            m->drt->timeout_s > 0 && m->drt->timeout_s < COUNT_TIMEOUT_CAP_S ? m->drt->timeout_s : COUNT_TIMEOUT_CAP_S;
    } else {
        m->model = asked;
        m->timeout_s = COUNT_TIMEOUT_CAP_S;
        if (asked && sy_count_kind_of(NULL, asked) == SY_COUNT_EXACT)
            m->kind = SY_COUNT_EXACT; /* an OpenAI model named directly */
    }
    m->local_exact = m->kind == SY_COUNT_EXACT;
    m->deadline_ms = uv_now(&c->w->loop) + (uint64_t)(m->timeout_s * 1000.0);
    fwd_headers(m, r);
    int tk = m->drt ? take_token(m) : 1;
    if (tk < 0)
        m->kind = SY_COUNT_ESTIMATE;
    if (tk == 0) { /* being fetched: ask again shortly */
        m->timer = malloc(sizeof *m->timer);
        if (!m->timer) {
            m->kind = SY_COUNT_ESTIMATE;
        } else {
            uv_timer_init(&c->w->loop, m->timer);
            m->timer->data = m;
            uv_timer_start(m->timer, token_poll, TOKEN_POLL_MS, TOKEN_POLL_MS);
            r->on_abort = mc_abort;
            return SY_DONE;
        }
    }
    start_work(m);
    return SY_DONE;
}

const struct sy_stage sy_stage_messages_count = {
    .name = "messages_count",
    .routes = SY_RKB(SY_RK_MESSAGES_COUNT),
    .run = messages_count_run,
    .slot = &mc_slot,
};
