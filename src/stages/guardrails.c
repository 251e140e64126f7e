/* guardrails.c - the `guardrails` stage: LiteLLM's guardrails on the LLM routes
 * (pre_call checks, the post_call check of a JSON answer, what ran), and
 * GET /guardrails/list. The design is in stages/guardrails.h; the guardrails
 * themselves are src/guardrails/.
 *
 * Per config (conf_build) the `guardrails:` lists compile into a struct
 * sy_guardset (guardrails/set.c); a config without guardrails adds no stage to
 * any route. Per call the stage picks what runs (default_on, the request's
 * `guardrails`, the key's and the team's), then runs the pre_call ones in
 * config order: an in-process one inline (on the offload pool for a body of
 * SY_OFFLOAD_MIN_BYTES or more), a service one as an HTTP exchange on the
 * worker's upstream pool, bounded by its timeout. Their verdicts:
 *   pass     go on
 *   masked   the body is rewritten (texts spliced, guardrails/texts.c) and
 *            rescanned; the placeholders of a reversible mask are kept to be
 *            put back in the answer
 *   block    LiteLLM's 400: {"error":{"message": str(detail), "type":"None",
 *            "param":"None","code":"400"}} (Anthropic's shape on /v1/messages)
 *   error    fail_open: go on (recorded as guardrail_failed_to_respond);
 *            else 500 with the guardrail's message
 * Every check is counted (litellm_guardrail_* series) and listed in the
 * x-litellm-applied-guardrails header, and the call's
 * StandardLoggingGuardrailInformation list goes to the logs and the spend row
 * (c->out.guard_info, set in this stage's finish hook, which runs before
 * theirs).
 */
#include "stages/guardrails.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/errors.h"
#include "core/log.h"
#include "gateway/jscan.h"
#include "gateway/offload.h"
#include "gateway/slot.h"
#include "gateway/stage.h"
#include "http/reply.h"
#include "http/server.h"
#include "keys/keys.h"
#include "metrics/metrics.h"
#include "upstream/client.h"

int sy_guard_slot = -1;
int sy_guard_conf_slot = -1;

#define SVC_MAX_ANSWER (4u << 20) /* a service's answer is cut here (then it is no answer) */

static const struct sy_guardset *set_of(const struct sy_gwconf *g)
{
    return sy_stage_conf(g, sy_guard_conf_slot);
}

/* ---- per config ------------------------------------------------------- */

/* openai_moderation through a model group: the group's first OpenAI-compatible
 * deployment's base URL and auth lines. */
static int group_target(void *ud, const char *model, char *url, size_t urlcap, char *auth, size_t authcap)
{
    const struct sy_gwconf *g = ud;
    const struct sy_group *gr = sy_gwconf_group(g, model, strlen(model));
    for (size_t i = 0; gr && i < gr->n; i++) {
        const struct sy_drt *d = gr->d[i];
        if (!d->prov || d->ad || !d->url[0])
            continue;
        const char *u = d->url[0];
        size_t n = strlen(u);
        static const char suf[] = "/chat/completions";
        const char *q = strchr(u, '?');
        if (q)
            n = (size_t)(q - u);
        if (n >= sizeof suf - 1 && !memcmp(u + n - (sizeof suf - 1), suf, sizeof suf - 1))
            n -= sizeof suf - 1;
        if (n + 1 > urlcap)
            return -1;
        memcpy(url, u, n);
        url[n] = 0;
        size_t an = 0;
        auth[0] = 0;
        for (const char *l = d->headers; l && *l;) {
            const char *e = strstr(l, "\r\n");
            size_t ln = e ? (size_t)(e - l) + 2 : strlen(l);
            if ((!strncasecmp(l, "authorization:", 14) || !strncasecmp(l, "api-key:", 8)) && an + ln + 1 <= authcap) {
                memcpy(auth + an, l, ln);
                an += ln;
                auth[an] = 0;
            }
            l += ln;
        }
        return 0;
    }
    return -1;
}

struct warn_ctx {
    struct sy_gwconf *g;
};

static void conf_warn(void *ud, const char *msg)
{
    struct warn_ctx *w = ud;
    sy_error("config: %s", msg);
    w->g->cfg->n_warnings++;
}

static int guard_conf(struct sy_gwconf *g, void **conf, char *err, size_t errlen)
{
    const struct sy_config *cfg = g->cfg;
    struct warn_ctx w = {g};
    struct sy_genv env = {group_target, g, conf_warn, &w};
    struct sy_guardset *s = NULL;
    char e[512];
    if (sy_guardset_build(cfg->guardrails, cfg->legacy_guardrails, cfg->skip_system_message_in_guardrail,
                          cfg->skip_tool_message_in_guardrail, &env, conf_warn, &w, &s, e, sizeof e) != 0) {
        snprintf(err, errlen, "config: %s", e);
        return -1;
    }
    *conf = s;
    return 0;
}

static void guard_conf_free(void *conf)
{
    sy_guardset_free(conf);
}

static void guard_conf_print(const struct sy_gwconf *g, FILE *out)
{
    const struct sy_guardset *s = set_of(g);
    if (!s || !s->n)
        return;
    fprintf(out, "guardrails: %zu (chat, completions, embeddings, responses, messages)\n", s->n);
    for (size_t i = 0; i < s->n; i++) {
        const struct sy_guard *gd = &s->g[i];
        fprintf(out, "  %-24s %-24s", gd->name, gd->ops->name);
        static const struct {
            unsigned bit;
            const char *where;
        } w[] = {{SY_GM_PRE, "pre_call: stage guardrails, before route"},
                 {SY_GM_DURING, "during_call: stage guardrails_during, beside upstream"},
                 {SY_GM_POST, "post_call: the answer (JSON hook, stream writer)"},
                 {SY_GM_LOGGING_ONLY, "logging_only"}};
        int first = 1;
        for (size_t k = 0; k < sizeof w / sizeof *w; k++)
            if (gd->modes & w[k].bit) {
                unsigned bit = w[k].bit;
                const char *where = w[k].where;
                if (bit == SY_GM_DURING && gd->ops->check)
                    where = "during_call: in process, run with pre_call";
                fprintf(out, "%s%s", first ? "" : "; ", where);
                first = 0;
            }
        fprintf(out, "%s%s\n", gd->default_on ? " [default_on]" : " [on request]",
                gd->ops->check ? "" : (gd->fail_open ? " [fail_open]" : " [fail_closed]"));
    }
}

static int guard_on(const struct sy_gwconf *g, enum sy_route_kind k)
{
    if (k == SY_RK_GUARDRAILS)
        return 1;
    const struct sy_guardset *s = set_of(g);
    return s && s->n && k != SY_RK_PASSTHRU;
}

/* ---- a call's state ------------------------------------------------------ */

static void gcall_free(void *p)
{
    struct gcall *gc = p;
    sy_gtexts_free(&gc->tx);
    sy_gresult_free(&gc->res);
    for (size_t i = 0; i < gc->npairs; i++) {
        free(gc->pairs[i].placeholder);
        free(gc->pairs[i].original);
    }
    free(gc->pairs);
    for (size_t i = 0; gc->extra && gc->set && i < gc->set->n; i++)
        free(gc->extra[i]);
    sy_buf_free(&gc->applied);
    sy_buf_free(&gc->logbody);
    sy_buf_free(&gc->info);
    for (unsigned i = 0; i < gc->nsv; i++) {
        struct gsvc *s = gc->sv[i];
        if (s->ur)
            sy_ureq_cancel(s->ur);
        if (s->state && s->g->ops->free_state)
            s->g->ops->free_state(s->state);
        sy_ghttp_free(&s->req);
        sy_buf_free(&s->resp);
    }
}

static enum sy_gdialect dialect_of(enum sy_route_kind k)
{
    switch (k) {
    case SY_RK_MESSAGES: return SY_GD_MESSAGES;
    case SY_RK_RESPONSES: return SY_GD_RESPONSES;
    case SY_RK_COMPLETIONS: return SY_GD_COMPLETIONS;
    case SY_RK_EMBEDDINGS: return SY_GD_EMBEDDINGS;
    default: return SY_GD_CHAT;
    }
}

void sy_guard_input(struct sy_call *c, struct gcall *gc, const struct sy_guard *g, unsigned phase, const char *body,
                    size_t n, struct sy_ginput *in)
{
    memset(in, 0, sizeof *in);
    in->phase = phase;
    in->dialect = gc->d;
    in->model = c->in.model;
    in->call_id = c->call_id;
    in->seg = gc->tx.seg;
    in->nseg = gc->tx.nseg;
    in->tool = gc->tx.tool;
    in->ntool = gc->tx.ntool;
    in->body = body;
    in->body_len = n;
    if (phase == SY_GM_POST) {
        in->request = c->req->body.p;
        in->request_len = c->req->body.len;
    }
    in->extra_body = gc->extra ? gc->extra[g->index] : NULL;
    if (c->auth.key) {
        in->user_key_alias = c->auth.key->key_alias;
        in->team_id = c->auth.key->team_id;
        in->user_id = c->auth.key->user_id;
    }
}

/* ---- what ran ------------------------------------------------------------ */

static const char *status_name(const struct sy_gresult *r)
{
    switch (r->verdict) {
    case SY_GV_PASS: return "success";
    case SY_GV_MASKED: return "masked";
    case SY_GV_BLOCK: return "blocked";
    default: return "error";
    }
}

static void json_str(struct sy_buf *b, const char *s)
{
    SY_BUF_LIT(b, "\"");
    sy_buf_json_escape(b, s ? s : "", s ? strlen(s) : 0);
    SY_BUF_LIT(b, "\"");
}

/* Microseconds as seconds with six decimals (what %.6f prints, without the
 * floating-point formatting every check would pay for). */
static void put_secs(struct sy_buf *b, uint64_t us)
{
    char f[7];
    uint64_t frac = us % 1000000;
    for (int i = 5; i >= 0; i--, frac /= 10)
        f[i] = (char)('0' + frac % 10);
    f[6] = '.';
    sy_buf_u64(b, us / 1000000);
    sy_buf_append(b, f + 6, 1);
    sy_buf_append(b, f, 6);
}

void sy_guard_record(struct sy_call *c, struct gcall *gc, const struct sy_guard *g, unsigned hook,
                     const struct sy_gresult *r, uint64_t t0)
{
    uint64_t t1 = sy_now_ns();
    double lat = t0 && t1 > t0 ? (double)(t1 - t0) / 1e9 : 0;
    const char *st = status_name(r);
    const char *et = "";
    if (r->verdict == SY_GV_ERROR)
        et = r->message && strstr(r->message, "timed out") ? "timeout" : "guardrail_error";
    struct sy_metric_guardrail m = {g->name, sy_guard_mode_name(hook), st, et, lat};
    sy_metrics_guardrail(c->w->metrics, &m);
    /* the header: each name once */
    size_t nl = strlen(g->name);
    int seen = 0;
    for (const char *p = gc->applied.p; p && p < gc->applied.p + gc->applied.len;) {
        const char *e = memchr(p, ',', (size_t)(gc->applied.p + gc->applied.len - p));
        size_t l = e ? (size_t)(e - p) : (size_t)(gc->applied.p + gc->applied.len - p);
        if (l == nl && !memcmp(p, g->name, nl))
            seen = 1;
        p += l + 1;
    }
    if (!seen) {
        if (gc->applied.len)
            SY_BUF_LIT(&gc->applied, ",");
        sy_buf_append(&gc->applied, g->name, nl);
    }
    /* LiteLLM's StandardLoggingGuardrailInformation */
    const char *gs = r->verdict == SY_GV_PASS    ? "success"
                     : r->verdict == SY_GV_ERROR ? "guardrail_failed_to_respond"
                                                 : "guardrail_intervened";
    /* the call's guardrail_status: intervened over failed over success */
    if (r->verdict == SY_GV_BLOCK || r->verdict == SY_GV_MASKED)
        gc->status = SY_GUARD_INTERVENED;
    else if (r->verdict == SY_GV_ERROR && gc->status != SY_GUARD_INTERVENED)
        gc->status = SY_GUARD_FAILED;
    else if (gc->status == SY_GUARD_NOT_RUN)
        gc->status = SY_GUARD_SUCCESS;
    struct sy_buf *b = &gc->info;
    sy_buf_puts(b, gc->info.len ? ",{" : "[{");
    SY_BUF_LIT(b, "\"guardrail_name\":");
    json_str(b, g->name);
    SY_BUF_LIT(b, ",\"guardrail_provider\":");
    json_str(b, g->ops->name);
    SY_BUF_LIT(b, ",\"guardrail_mode\":");
    json_str(b, sy_guard_mode_name(hook));
    SY_BUF_LIT(b, ",\"guardrail_request\":null,\"guardrail_response\":");
    if (r->detail && *r->detail)
        sy_buf_puts(b, r->detail);
    else if (r->message)
        json_str(b, r->message);
    else
        SY_BUF_LIT(b, "null");
    SY_BUF_LIT(b, ",\"guardrail_status\":");
    json_str(b, gs);
    uint64_t lat_us = t0 && t1 > t0 ? (t1 - t0 + 500) / 1000 : 0, end_us = (uint64_t)sy_wall_ms() * 1000;
    SY_BUF_LIT(b, ",\"start_time\":");
    put_secs(b, end_us - lat_us);
    SY_BUF_LIT(b, ",\"end_time\":");
    put_secs(b, end_us);
    SY_BUF_LIT(b, ",\"duration\":");
    put_secs(b, lat_us);
    SY_BUF_LIT(b, ",\"masked_entity_count\":");
    if (r->masked) {
        SY_BUF_LIT(b, "{\"total\":");
        sy_buf_u64(b, r->masked);
        SY_BUF_LIT(b, "}");
    } else
        SY_BUF_LIT(b, "null");
    SY_BUF_LIT(b, "}");
}

int sy_guard_refuse(struct sy_call *c, struct gcall *gc, const struct sy_guard *g, const struct sy_gresult *r)
{
    char msg[2048];
    int status = r->verdict == SY_GV_BLOCK ? (r->status ? r->status : 400) : 500;
    if (r->message)
        snprintf(msg, sizeof msg, "%s", r->message);
    else if (r->verdict == SY_GV_BLOCK)
        snprintf(msg, sizeof msg, "{'error': 'Violated guardrail policy', 'guardrail_name': '%s'}", g->name);
    else
        snprintf(msg, sizeof msg, "Guardrail %s failed to respond", g->name);
    c->out.exception_class = "GuardrailRaisedException";
    sy_call_error(c, status, "None", "None", msg, NULL, 0); /* with x-litellm-applied-guardrails (headers hook) */
    (void)gc;
    return SY_DONE;
}

/* ---- service exchanges ---------------------------------------------------- */

static void svc_send(struct gsvc *s);

static int svc_on_head(void *ud, int status, const struct sy_uheader *h, size_t nh)
{
    (void)h, (void)nh;
    struct gsvc *s = ud;
    s->status = status;
    sy_buf_reset(&s->resp);
    return 0;
}

static int svc_on_body(void *ud, const char *p, size_t n)
{
    struct gsvc *s = ud;
    if (sy_buf_append(&s->resp, p, n))
        s->status = -1; /* too large: no answer */
    return 0;
}

static void svc_finish(struct gsvc *s, struct sy_gresult *r)
{
    if (s->state && s->g->ops->free_state) {
        s->g->ops->free_state(s->state);
        s->state = NULL;
    }
    sy_ghttp_free(&s->req);
    sy_buf_free(&s->resp);
    s->done(s, r);
}

static void svc_on_done(void *ud, int err)
{
    struct gsvc *s = ud;
    s->ur = NULL;
    struct sy_gresult r = {0};
    if (err || s->status <= 0) {
        sy_gresult_error(&r, "guardrail %s: %s", s->g->name,
                         err == SY_EUPTIMEOUT ? "the service timed out"
                         : s->status < 0      ? "the service's answer is too large"
                                              : "the service could not be reached");
        svc_finish(s, &r);
        sy_gresult_free(&r);
        return;
    }
    int more =
        s->g->ops->answer(s->g, &s->in, s->step, &s->state, s->status, s->resp.p ? s->resp.p : "", s->resp.len, &r);
    if (more == SY_GSTEP_MORE && s->step < 8) {
        sy_gresult_free(&r);
        s->step++;
        svc_send(s);
        return;
    }
    if (more == SY_GSTEP_MORE) {
        sy_gresult_free(&r);
        sy_gresult_error(&r, "guardrail %s: too many steps", s->g->name);
    }
    svc_finish(s, &r);
    sy_gresult_free(&r);
}

static const struct sy_ureq_cbs svc_cbs = {svc_on_head, svc_on_body, svc_on_done};

static void svc_send(struct gsvc *s)
{
    struct sy_gresult r = {0};
    sy_ghttp_free(&s->req);
    sy_buf_init(&s->req.headers, 64u << 10);
    sy_buf_init(&s->req.body, 64u << 20);
    int rc = s->g->ops->request(s->g, &s->in, s->step, &s->state, &s->req);
    if (rc == 0 && !s->req.url) { /* nothing for the service to check (no text of the kind it reads): a pass */
        svc_finish(s, &r);
        return;
    }
    if (rc != 0) {
        sy_gresult_error(&r, "guardrail %s: the request could not be built", s->g->name);
        svc_finish(s, &r);
        sy_gresult_free(&r);
        return;
    }
    s->body = uv_buf_init(s->req.body.p ? s->req.body.p : (char *)"", (unsigned)s->req.body.len);
    double t = s->g->timeout_s > 0 ? s->g->timeout_s : 10;
    struct sy_ureq_opts o = {
        .url = s->req.url,
        .method = s->req.method ? s->req.method : "POST",
        .headers = s->req.headers.p,
        .headers_len = s->req.headers.len,
        .body = &s->body,
        .nbody = s->req.body.len ? 1 : 0,
        .connect_timeout_s = t < 10 ? t : 10,
        .total_timeout_s = t,
    };
    sy_buf_free(&s->resp); /* the previous step's answer */
    sy_buf_init(&s->resp, SVC_MAX_ANSWER);
    s->status = 0;
    s->ur = sy_ureq_start(s->c->w->upool, &o, &svc_cbs, s);
    if (!s->ur) {
        sy_gresult_error(&r, "guardrail %s: invalid service URL", s->g->name);
        svc_finish(s, &r);
        sy_gresult_free(&r);
    }
}

struct gsvc *sy_guard_svc_start(struct sy_call *c, struct gcall *gc, const struct sy_guard *g, unsigned hook,
                                const struct sy_ginput *in, void (*done)(struct gsvc *s, struct sy_gresult *r))
{
    if (gc->nsv >= sizeof gc->sv / sizeof *gc->sv)
        return NULL;
    struct gsvc *s = sy_arena_alloc(&c->req->arena, sizeof *s);
    if (!s)
        return NULL;
    memset(s, 0, sizeof *s);
    s->gc = gc;
    s->c = c;
    s->g = g;
    s->hook = hook;
    s->in = *in;
    s->done = done;
    s->t0 = sy_now_ns();
    gc->sv[gc->nsv++] = s;
    svc_send(s);
    return s;
}

/* ---- a sequential pass: pre_call on the request, post_call on an answer ---- */

static int pass_run(struct sy_call *c, struct gcall *gc);

/* What a pass reads: the answer, or the request (pre_call, logging_only). */
static unsigned tphase(const struct gcall *gc)
{
    return gc->phase == SY_GM_POST ? SY_GM_POST : SY_GM_PRE;
}

/* Texts of gc->body for g (re-read when the body changed or g skips other roles). */
static int texts_for(struct gcall *gc, const struct sy_guard *g)
{
    int skip = (g->skip_system ? 1 : 0) | (g->skip_tool ? 2 : 0);
    if (gc->tx_ok && gc->tx_skip == skip)
        return 0;
    sy_gtexts_free(&gc->tx);
    memset(&gc->tx, 0, sizeof gc->tx);
    gc->tx_ok = 0;
    if (sy_gtexts_read(&gc->tx, gc->d, tphase(gc), gc->body->p ? gc->body->p : "", gc->body->len, g->skip_system,
                       g->skip_tool) != 0)
        return -1;
    gc->tx_ok = 1;
    gc->tx_skip = skip;
    return 0;
}

/* A new body for the pass (the request: rescanned, as every later stage reads
 * its spans). */
static void set_body(struct sy_call *c, struct gcall *gc, char *nb, size_t n)
{
    struct sy_buf *b = gc->body;
    size_t cap = b->cap > n ? b->cap : n;
    sy_buf_free(b);
    sy_buf_init(b, cap);
    sy_buf_append(b, nb, n); /* a sy_buf keeps a NUL after its bytes */
    gc->tx_ok = 0;
    if (gc->phase == SY_GM_PRE) {
        struct sy_jscan sc;
        if (sy_jscan(b->p, b->len, &sc) == 0)
            c->in.scan = sc;
    }
}

static void keep_pairs(struct gcall *gc, struct sy_gresult *r)
{
    if (!r->npairs)
        return;
    struct sy_gpair *np = realloc(gc->pairs, (gc->npairs + r->npairs) * sizeof *np);
    if (!np)
        return;
    gc->pairs = np;
    for (size_t i = 0; i < r->npairs; i++)
        gc->pairs[gc->npairs++] = r->pairs[i];
    free(r->pairs);
    r->pairs = NULL;
    r->npairs = 0;
}

/* Apply r of g to the pass. SY_OK go on, SY_DONE answered. */
static int pass_apply(struct sy_call *c, struct gcall *gc, const struct sy_guard *g, struct sy_gresult *r, uint64_t t0)
{
    unsigned hook = gc->phase == SY_GM_POST           ? SY_GM_POST
                    : gc->phase == SY_GM_LOGGING_ONLY ? SY_GM_LOGGING_ONLY
                    : g->modes & SY_GM_PRE            ? SY_GM_PRE
                                                      : SY_GM_DURING;
    sy_guard_record(c, gc, g, hook, r, t0);
    if (gc->phase == SY_GM_LOGGING_ONLY) { /* masks what the logs see; never blocks */
        if (r->verdict == SY_GV_MASKED && r->repl) {
            char *nb = NULL;
            size_t nn = 0;
            if (sy_gtext_splice(gc->body->p, gc->body->len, gc->tx.seg, gc->tx.nseg, r->repl, &nb, &nn) == 0) {
                set_body(c, gc, nb, nn);
                free(nb);
            }
        } else if (r->verdict == SY_GV_MASKED && r->body) {
            set_body(c, gc, r->body, r->body_len);
        }
        return SY_OK;
    }
    switch (r->verdict) {
    case SY_GV_PASS: return SY_OK;
    case SY_GV_MASKED:
        if (r->body) {
            set_body(c, gc, r->body, r->body_len);
        } else if (r->repl) {
            char *nb = NULL;
            size_t nn = 0;
            if (sy_gtext_splice(gc->body->p, gc->body->len, gc->tx.seg, gc->tx.nseg, r->repl, &nb, &nn) == 0) {
                set_body(c, gc, nb, nn);
                free(nb);
            }
        }
        if (gc->phase == SY_GM_PRE)
            keep_pairs(gc, r);
        return SY_OK;
    case SY_GV_BLOCK: return sy_guard_refuse(c, gc, g, r);
    default:
        if (g->fail_open) {
            sy_warn("guardrail %s failed (%s): fail_open lets the call through", g->name,
                    r->message ? r->message : "?");
            return SY_OK;
        }
        return sy_guard_refuse(c, gc, g, r);
    }
}

/* Does guardrail i run in the current pass? */
static int in_pass(const struct gcall *gc, const struct sy_guard *g)
{
    if (!gc->on[g->index])
        return 0;
    if (gc->phase == SY_GM_POST)
        return (g->modes & SY_GM_POST) != 0;
    if (gc->phase == SY_GM_LOGGING_ONLY)
        return (g->modes & SY_GM_LOGGING_ONLY) && g->ops->check;
    /* pre_call; an in-process during_call check runs here too (same verdict, no gate) */
    return (g->modes & SY_GM_PRE) || ((g->modes & SY_GM_DURING) && g->ops->check);
}

static void pass_continue(struct sy_call *c, struct gcall *gc)
{
    if (gc->waiting && sy_call_wait_done(c, &gc->waiting))
        return; /* the client left: accounted */
    int rc = pass_run(c, gc);
    if (rc != SY_OK)
        return;
    if (gc->phase != SY_GM_POST)
        sy_call_resume(c);
    else
        sy_call_answer_resume(c);
}

static void pass_wait(struct sy_call *c, struct gcall *gc)
{
    gc->async = 1;
    if (!c->req->on_abort) { /* nobody else handles a client that leaves now */
        c->req->on_abort = sy_call_wait_abort;
        gc->waiting = 1;
    }
}

static void check_work(struct sy_call *c, void *arg)
{
    struct gcall *gc = sy_guard_call(c);
    const struct sy_guard *g = arg;
    sy_gresult_free(&gc->res);
    if (texts_for(gc, g) != 0)
        return; /* no texts: a pass */
    struct sy_ginput in;
    sy_guard_input(c, gc, g, tphase(gc), gc->body->p, gc->body->len, &in);
    g->ops->check(g, &in, &gc->res);
}

static void check_done(struct sy_call *c, void *arg)
{
    struct gcall *gc = sy_guard_call(c);
    const struct sy_guard *g = arg;
    struct sy_gresult r = gc->res;
    memset(&gc->res, 0, sizeof gc->res);
    gc->pos++; /* before: an answer (a block) frees gc with the request */
    int rc = pass_apply(c, gc, g, &r, gc->t0);
    sy_gresult_free(&r);
    if (rc != SY_OK)
        return;
    pass_continue(c, gc);
}

static void svc_pass_done(struct gsvc *s, struct sy_gresult *r)
{
    struct sy_call *c = s->c;
    struct gcall *gc = s->gc;
    if (c->finished)
        return;
    gc->pos++; /* before: an answer (a block) frees gc with the request */
    if (sy_call_wait_done(c, &gc->waiting))
        return; /* the client left while the service answered: accounted */
    if (pass_apply(c, gc, s->g, r, s->t0) != SY_OK)
        return;
    pass_continue(c, gc); /* the next service wait arms the abort hook again (pass_wait) */
}

/* Run the pass's remaining guardrails: SY_OK all passed (synchronously),
 * SY_AGAIN one is under way (pass_continue follows), SY_DONE answered. */
static int pass_run(struct sy_call *c, struct gcall *gc)
{
    const struct sy_guardset *s = gc->set;
    for (; gc->pos < s->n; gc->pos++) {
        const struct sy_guard *g = &s->g[gc->pos];
        if (!in_pass(gc, g))
            continue;
        if (g->ops->check && gc->phase == SY_GM_POST && g->post_pass) { /* the answer is not its concern */
            struct sy_gresult r = {.verdict = SY_GV_PASS};
            int rc = pass_apply(c, gc, g, &r, sy_now_ns());
            if (rc != SY_OK)
                return rc;
            continue;
        }
        if (g->ops->check) {
            size_t omin = g->ops->offload_min ? g->ops->offload_min : SY_OFFLOAD_MIN_BYTES;
            if (gc->body->len >= omin) { /* a large body (or a costly kind): off the loop */
                gc->t0 = sy_now_ns();
                gc->async = 1; /* the offload layer handles a client that leaves meanwhile */
                sy_call_run_work(c, gc->body->len >= SY_OFFLOAD_MIN_BYTES ? gc->body->len : SY_OFFLOAD_MIN_BYTES,
                                 check_work, check_done, (void *)g);
                return SY_AGAIN;
            }
            uint64_t t0 = sy_now_ns();
            struct sy_gresult r = {0};
            if (texts_for(gc, g) == 0) {
                struct sy_ginput in;
                sy_guard_input(c, gc, g, tphase(gc), gc->body->p, gc->body->len, &in);
                g->ops->check(g, &in, &r);
            }
            int rc = pass_apply(c, gc, g, &r, t0);
            sy_gresult_free(&r);
            if (rc != SY_OK)
                return rc;
            continue;
        }
        if (!g->ops->request)
            continue;
        if (texts_for(gc, g) != 0)
            continue;
        struct sy_ginput in;
        sy_guard_input(c, gc, g, tphase(gc), gc->body->p, gc->body->len, &in);
        pass_wait(c, gc);
        if (!sy_guard_svc_start(c, gc, g, gc->phase == SY_GM_POST ? SY_GM_POST : SY_GM_PRE, &in, svc_pass_done)) {
            struct sy_gresult r = {0};
            sy_gresult_error(&r, "guardrail %s: too many checks in one call", g->name);
            int rc = pass_apply(c, gc, g, &r, 0);
            sy_gresult_free(&r);
            if (rc != SY_OK)
                return rc;
            continue;
        }
        return SY_AGAIN;
    }
    if (gc->phase == SY_GM_PRE && gc->logonly) { /* then logging_only ones, on a copy for the logs */
        gc->phase = SY_GM_LOGGING_ONLY;
        gc->pos = 0;
        gc->tx_ok = 0;
        sy_buf_init(&gc->logbody, c->req->body.len + 1);
        sy_buf_append(&gc->logbody, c->req->body.p ? c->req->body.p : "", c->req->body.len);
        gc->body = &gc->logbody;
        return pass_run(c, gc);
    }
    return SY_OK;
}

/* ---- the stage ------------------------------------------------------------ */

static struct sy_str span_str(const char *p, struct sy_jspan v)
{
    struct sy_str s = {NULL, 0};
    if (v.type) {
        s.p = p + v.off;
        s.n = v.len;
    }
    return s;
}

static int list_run(struct sy_call *c)
{
    const struct sy_guardset *s = set_of(c->g);
    static const char empty[] = "{\"guardrails\":[]}";
    if (s && s->list_json)
        sy_reply_json(c->req, 200, s->list_json, s->list_len);
    else
        sy_reply_json(c->req, 200, empty, sizeof empty - 1);
    return SY_DONE;
}

static int guard_run(struct sy_call *c)
{
    if (c->kind == SY_RK_GUARDRAILS)
        return list_run(c);
    const struct sy_guardset *s = set_of(c->g);
    if (!s || !s->n)
        return SY_OK;
    const char *body = c->req->body.p;
    struct sy_str rq = span_str(body, c->in.scan.rk[SY_JR_GUARDRAILS]);
    struct sy_jspan top = {0, c->req->body.len, 'o'};
    struct sy_str md = {NULL, 0};
    if (c->in.scan.top_is_object)
        md = span_str(body, sy_jscan_member(body, top, "metadata"));
    unsigned char on[256];
    char *extra[256];
    const struct sy_keyinfo *k = c->auth.key;
    size_t nrun = sy_guardset_select(s, rq.p, rq.n, md.p, md.n, k ? k->key.metadata : NULL,
                                     k && k->team ? k->team->metadata : NULL, on, extra);
    if (!nrun)
        return SY_OK;
    struct gcall *gc = sy_call_slot_new(c, sy_guard_slot, sizeof *gc);
    if (!gc)
        return SY_OK;
    memset(gc, 0, sizeof *gc);
    gc->set = s;
    gc->nrun = nrun;
    gc->on = sy_arena_alloc(&c->req->arena, s->n);
    gc->extra = sy_arena_alloc(&c->req->arena, s->n * sizeof *gc->extra);
    memcpy(gc->on, on, s->n);
    memcpy(gc->extra, extra, s->n * sizeof *gc->extra);
    gc->d = dialect_of(c->kind);
    sy_buf_init(&gc->applied, 4096);
    sy_buf_init(&gc->info, 1u << 20);
    sy_arena_defer(&c->req->arena, gcall_free, gc);
    for (size_t i = 0; i < s->n; i++) {
        if (on[i] && (s->g[i].modes & SY_GM_POST))
            gc->post = 1;
        if (on[i] && (s->g[i].modes & SY_GM_LOGGING_ONLY) && s->g[i].ops->check)
            gc->logonly = 1;
    }
    gc->phase = SY_GM_PRE;
    gc->body = &c->req->body;
    return pass_run(c, gc);
}

/* A JSON answer: the post_call guardrails, then the request's reversible masks undone. */
static int unmask_body(struct sy_call *c, struct gcall *gc, struct sy_buf *body)
{
    if (!gc->npairs)
        return SY_OK;
    struct sy_gtexts t = {0};
    if (sy_gtexts_read(&t, gc->d, SY_GM_POST, body->p ? body->p : "", body->len, 0, 0) != 0)
        return SY_OK;
    char **repl = calloc(t.nseg ? t.nseg : 1, sizeof *repl);
    int any = 0;
    for (size_t i = 0; repl && i < t.nseg; i++) {
        struct sy_buf o;
        sy_buf_init(&o, SY_GUARD_BUF_MAX);
        if (t.seg[i].raw_len && sy_gunmask(gc->pairs, gc->npairs, t.seg[i].text, t.seg[i].len, &o)) {
            repl[i] = o.p; /* NUL-terminated */
            any = 1;
        } else {
            sy_buf_free(&o);
        }
    }
    char *nb = NULL;
    size_t nn = 0;
    if (any && sy_gtext_splice(body->p, body->len, t.seg, t.nseg, repl, &nb, &nn) == 0) {
        size_t cap = body->cap > nn ? body->cap : nn;
        sy_buf_free(body);
        sy_buf_init(body, cap);
        sy_buf_append(body, nb, nn);
        free(nb);
    }
    for (size_t i = 0; repl && i < t.nseg; i++)
        free(repl[i]);
    free(repl);
    sy_gtexts_free(&t);
    (void)c;
    return SY_OK;
}

static int guard_answer(struct sy_call *c, struct sy_buf *body)
{
    struct gcall *gc = sy_guard_call(c);
    if (!gc)
        return SY_OK;
    if (gc->phase != SY_GM_POST) { /* first entry: start the pass */
        gc->phase = SY_GM_POST;
        gc->pos = 0;
        gc->tx_ok = 0;
        gc->body = body;
        if (gc->post) {
            int rc = pass_run(c, gc);
            if (rc != SY_OK)
                return rc;
        }
    }
    return unmask_body(c, gc, body);
}

static void guard_headers(const struct sy_call *c, struct sy_buf *b)
{
    struct gcall *gc = sy_guard_call((struct sy_call *)c);
    if (!gc || !gc->applied.len)
        return;
    SY_BUF_LIT(b, "x-litellm-applied-guardrails: ");
    sy_buf_append(b, gc->applied.p, gc->applied.len);
    SY_BUF_LIT(b, "\r\n");
}

static void guard_finish(struct sy_call *c, int status)
{
    (void)status;
    struct gcall *gc = sy_guard_call(c);
    if (!gc)
        return;
    for (unsigned i = 0; i < gc->nsv; i++) /* nothing comes back to a call that ended */
        if (gc->sv[i]->ur) {
            sy_ureq_cancel(gc->sv[i]->ur);
            gc->sv[i]->ur = NULL;
        }
    gc->during_pending = 0;
    if (gc->info.len) {
        SY_BUF_LIT(&gc->info, "]");
        c->out.guard_info = sy_arena_strndup(&c->req->arena, gc->info.p, gc->info.len);
        gc->info.len--; /* a second finish (none expected) appends after the same list */
    }
    c->out.guard_status = gc->status;
    if (gc->logonly && gc->logbody.p) { /* the request as the logs see it (logging_only masks) */
        c->out.log_request = gc->logbody.p;
        c->out.log_request_len = gc->logbody.len;
    }
}

const struct sy_stage sy_stage_guardrails = {
    .name = "guardrails",
    .routes = SY_RKB_LLM | SY_RKB(SY_RK_GUARDRAILS),
    .enabled = guard_on,
    .run = guard_run,
    .finish = guard_finish,
    .headers = guard_headers,
    .answer = guard_answer,
    .slot = &sy_guard_slot,
    .conf_build = guard_conf,
    .conf_free = guard_conf_free,
    .conf_print = guard_conf_print,
    .conf_slot = &sy_guard_conf_slot,
};
