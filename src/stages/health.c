/* health.c - LiteLLM's deep health check: GET /health and background checks
 * (litellm/proxy/health_check.py, health_endpoints/_health_endpoints.py).
 *
 * A "round" makes one cheap call per deployment, all at once, on the upstream
 * pool of the worker that runs it, and never blocks its loop:
 *
 *   mode (model_info.mode)  call                     body
 *   chat (default)          POST {base}/chat/completions  {"model":M,"messages":[{"role":"user",
 *                                                     "content":"Hey how's it going?"|"What's 1 + 1?"}],
 *                                                     "max_tokens":1}
 *   completion              POST {base}/completions   {"model":M,"prompt":"test from litellm","max_tokens":1}
 *   embedding               POST {base}/embeddings    {"model":M,"input":["test from litellm"]}
 *   built-in mock / mock_response   none: healthy
 *   provider unsupported (drt->prov NULL), other modes   none: unhealthy, with the reason
 *
 * M is the deployment's upstream model, or model_info.health_check_model
 * (without the deployment's "provider/" prefix) when set. OpenAI/Azure
 * reasoning models (o1, o3, o4, gpt-5 families) get "max_completion_tokens"
 * instead of "max_tokens", as LiteLLM maps it for them. Each call is bounded
 * by the deployment's timeout capped at SY_HEALTH_TIMEOUT_CAP_S (60 s, LiteLLM's
 * HEALTH_CHECK_TIMEOUT_SECONDS) for connect, first byte, gaps and the whole
 * call. A 2xx answer whose body is JSON is healthy; anything else is not.
 *
 * Response (LiteLLM's shape; endpoints in config order, duplicates by
 * deployment id checked once):
 *
 *   member               value
 *   healthy_endpoints    [endpoint...]
 *   unhealthy_endpoints  [endpoint...]
 *   healthy_count        number of healthy_endpoints
 *   unhealthy_count      number of unhealthy_endpoints
 *
 *   endpoint member      value
 *   <litellm_params>     every litellm_params key of the deployment except secret-looking ones
 *                        (see secret_key(); nested objects are redacted the same way) and any
 *                        value containing the deployment's api_key; "model" is
 *                        health_check_model when set (LiteLLM shows the model it called)
 *   x-ratelimit-remaining-requests / -tokens, x-ms-region   healthy, when the upstream sent them
 *   error                unhealthy: LiteLLM's exception text, e.g. "litellm.InternalServerError:
 *                        InternalServerError: OpenAIException - <upstream message>"
 *   model_id             the deployment id (model_info.id or the generated one)
 *
 * Query string: ?model=NAME checks the deployments whose litellm_params.model
 * is NAME, else those of model group NAME (LiteLLM's order); ?model_id=ID the
 * deployment with that id (404 when there is none).
 *
 * Every finished call updates the deployment's router state
 * (sy_dstate_set_healthy); calls that were cancelled (client gone, worker
 * stopping) and deployments not called (mock, unsupported) leave it alone,
 * except that an unsupported provider is marked unhealthy.
 *
 * Lifetimes. A round (struct hrun) is malloc'd, holds a reference to the
 * config it checks (the deployments it points at), and owns its probes and
 * their request bodies, so nothing of it lives in the request's arena. A
 * request round is answered and freed when its last call ends; if the client
 * goes away first, on_abort cancels every call still in flight (no callback
 * follows sy_ureq_cancel), frees the round and ends the request. The request
 * finds its round through a per-thread list of live request rounds.
 *
 * What needs no worker, call or socket - which call a deployment gets, the
 * endpoint objects with secrets redacted, ?model= / ?model_id= selection and
 * the process-wide store of background results - is router/health.c.
 *
 * Background checks run on worker 0 only: a one-shot timer re-armed every
 * tick (at most 1 s) reads the worker's current config, so a SIGHUP reload is
 * picked up at the next round. A round starts health_check_interval seconds
 * after the previous one ended (the first at once), as LiteLLM's loop sleeps
 * between rounds. Results are stored process-wide under a mutex (any worker
 * serves GET /health); each stored endpoint is its finished JSON text, so a
 * reload never leaves pointers into a freed config. While background checks
 * are on, GET /health answers from the store (filtered by ?model=/?model_id=)
 * and makes no call, or runs a round of its own while the store is empty.
 */
#include "stages/health.h"

#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/clock.h"
#include "core/errors.h"
#include "core/log.h"
#include "gateway/gateway.h"
#include "gateway/stage.h"
#include "gateway/xlate.h"
#include "http/reply.h"
#include "http/server.h"
#include "router/health.h"
#include "upstream/client.h"

#define HEALTH_CONNECT_CAP_S 10.0        /* as the proxy: connect within min(timeout, 10 s) */
#define OK_BODY_MAX          (1u << 20)  /* a 2xx body is checked to be JSON up to this size */
#define ERR_BODY_MAX         (64u << 10) /* an error body is read up to this size */
#define HDR_VAL_MAX          64
#define BG_TICK_MAX_MS       1000 /* a reload is noticed within this */
#define BG_TICK_MIN_MS       50
#define OUT_MAX              (256u << 20) /* response body cap */

struct hrun;

/* One deployment's check. */
struct hprobe {
    struct hrun *run;
    const struct sy_drt *drt;
    struct sy_ureq *ureq; /* in flight; NULL once finished or cancelled */
    char *body;           /* request body (malloc): must outlive ureq */
    char *xurl, *xhdrs;   /* translated deployments: the adapter's URL and header lines (malloc) */
    uv_buf_t part;
    struct sy_buf resp; /* response body, capped */
    int status;
    int overflow; /* resp hit its cap (the rest was dropped) */
    int done;
    int ok;
    int mark;    /* the result says something about the deployment: update its router state */
    char *error; /* unhealthy: the error text (malloc) */
    char rl_req[HDR_VAL_MAX], rl_tok[HDR_VAL_MAX], region[HDR_VAL_MAX];
};

/* One round: the probes of one GET /health, or one background round. */
struct hrun {
    struct sy_worker *w;
    struct sy_gwconf *g; /* reference held while the round lives */
    struct sy_call *c;   /* the GET /health answered at the end; NULL: background */
    struct hprobe *p;
    size_t n;
    size_t pending;           /* probes not finished yet */
    int canceled;             /* pool closing: results are not stored */
    struct hrun *next, *prev; /* this thread's live request rounds */
};

static _Thread_local struct hrun *live_runs;

/* ---- process-wide store of the latest background results ------------------ */

/* ---- small helpers --------------------------------------------------------- */

static char *xstrdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* LiteLLM's exception text: "litellm.<Class>: <Class>: <Provider>Exception - <message>". */
static char *litellm_error(const struct sy_drt *d, const char *cls, const char *msg)
{
    char pl[64];
    return sy_health_fmt_error("litellm.%s: %s: %sException - %s", cls, cls, sy_provider_label(d, pl, sizeof pl), msg);
}

/* ---- selection ------------------------------------------------------------- */

/* Decoded value of query parameter `name` (arena), or NULL. */
static char *query_param(struct sy_req *r, const char *name)
{
    const char *q = r->query.p, *end = q ? q + r->query.n : NULL;
    size_t nl = strlen(name);
    while (q && q < end) {
        const char *amp = memchr(q, '&', (size_t)(end - q));
        const char *pe = amp ? amp : end;
        const char *eq = memchr(q, '=', (size_t)(pe - q));
        if (eq && (size_t)(eq - q) == nl && memcmp(q, name, nl) == 0) {
            const char *v = eq + 1;
            char *out = sy_arena_alloc(&r->arena, (size_t)(pe - v) + 1);
            size_t k = 0;
            for (const char *s = v; s < pe; s++) {
                int h1, h2;
                if (*s == '+') {
                    out[k++] = ' ';
                } else if (*s == '%' && pe - s >= 3 && (h1 = hexval(s[1])) >= 0 && (h2 = hexval(s[2])) >= 0) {
                    out[k++] = (char)(h1 * 16 + h2);
                    s += 2;
                } else {
                    out[k++] = *s;
                }
            }
            out[k] = 0;
            if (memchr(out, 0, k))
                return NULL; /* an embedded NUL matches nothing */
            return out;
        }
        q = amp ? amp + 1 : end;
    }
    return NULL;
}

/* ---- one call -------------------------------------------------------------- */

static void probe_finish(struct hprobe *p);
static void probe_mark(struct hprobe *p);

/* Copy a header value into dst (cut to fit; bytes outside printable ASCII become '?'). */
static void keep_header(char *dst, const struct sy_uheader *h)
{
    size_t n = h->value_len < HDR_VAL_MAX - 1 ? h->value_len : HDR_VAL_MAX - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)h->value[i];
        dst[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
    dst[n] = 0;
}

static int hname(const struct sy_uheader *h, const char *n)
{
    size_t l = strlen(n);
    return h->name_len == l && strncasecmp(h->name, n, l) == 0;
}

static int on_head(void *ud, int status, const struct sy_uheader *h, size_t nh)
{
    struct hprobe *p = ud;
    p->status = status;
    for (size_t i = 0; i < nh; i++) {
        if (hname(&h[i], "x-ratelimit-remaining-requests"))
            keep_header(p->rl_req, &h[i]);
        else if (hname(&h[i], "x-ratelimit-remaining-tokens"))
            keep_header(p->rl_tok, &h[i]);
        else if (hname(&h[i], "x-ms-region"))
            keep_header(p->region, &h[i]);
    }
    sy_buf_reset(&p->resp);
    p->resp.cap = status >= 200 && status < 300 ? OK_BODY_MAX : ERR_BODY_MAX;
    p->overflow = 0;
    return 0;
}

static int on_body(void *ud, const char *b, size_t n)
{
    struct hprobe *p = ud;
    if (!p->overflow && sy_buf_append(&p->resp, b, n) != 0)
        p->overflow = 1; /* keep what fits, drop the rest (never a spliced body) */
    return 0;
}

/* Judge a finished call: p->ok, or p->error. */
static void judge(struct hprobe *p, int err)
{
    const struct sy_drt *d = p->drt;
    if (err == SY_ECANCELED) {
        p->error = sy_health_fmt_error("health check cancelled: the worker is shutting down");
        return;
    }
    p->mark = 1;
    if (err == SY_EUPTIMEOUT) {
        char m[96];
        snprintf(m, sizeof m, "Request timed out after %.1f seconds.", sy_health_timeout(d));
        p->error = litellm_error(d, "Timeout", m);
        return;
    }
    if (err) {
        char m[96];
        snprintf(m, sizeof m, "Connection error (%s).", sy_err_name(err));
        p->error = litellm_error(d, "APIConnectionError", m);
        return;
    }
    if (p->status >= 200 && p->status < 300) {
        json_object *root = NULL;
        if (!p->overflow)
            root = p->resp.len ? json_tokener_parse(p->resp.p) : NULL;
        if (p->overflow || (root && json_object_is_type(root, json_type_object))) {
            p->ok = 1;
        } else {
            p->error =
                litellm_error(d, "APIError", "Invalid response from the upstream: the body is not a JSON object");
        }
        if (root)
            json_object_put(root);
        return;
    }
    /* an error status: the upstream's error.message, as the proxy reports it */
    const char *cls = p->status >= 400 ? sy_status_exception_class(p->status) : "APIError";
    json_object *root = p->resp.len && !p->overflow ? json_tokener_parse(p->resp.p) : NULL;
    json_object *e = NULL, *v = NULL;
    const char *msg = NULL;
    if (root && json_object_object_get_ex(root, "error", &e)) {
        if (json_object_is_type(e, json_type_object) && json_object_object_get_ex(e, "message", &v) &&
            json_object_is_type(v, json_type_string))
            msg = json_object_get_string(v);
        else if (json_object_is_type(e, json_type_string))
            msg = json_object_get_string(e);
    }
    if (msg) {
        p->error = litellm_error(d, cls, msg);
    } else {
        char m[512];
        snprintf(m, sizeof m, "Error code: %d - %.400s", p->status, p->resp.len ? p->resp.p : "");
        p->error = litellm_error(d, cls, m);
    }
    if (root)
        json_object_put(root);
}

static void on_done(void *ud, int err)
{
    struct hprobe *p = ud;
    p->ureq = NULL;
    judge(p, err);
    if (err == SY_ECANCELED)
        p->run->canceled = 1;
    probe_finish(p);
}

static const struct sy_ureq_cbs probe_cbs = {on_head, on_body, on_done};

static int reasoning_model(const struct sy_drt *d, const char *m)
{
    const char *pn = d->prov ? d->prov->name : "";
    if (strcmp(pn, "openai") != 0 && strcmp(pn, "azure") != 0)
        return 0;
    return strncmp(m, "o1", 2) == 0 || strncmp(m, "o3", 2) == 0 || strncmp(m, "o4", 2) == 0 ||
           strncmp(m, "gpt-5", 5) == 0;
}

/* The request body of p's call (malloc), or NULL when out of memory. */
static char *probe_body(struct hrun *run, const struct sy_drt *drt, enum sy_health_mode mode, size_t *len)
{
    const struct sy_deployment *d = drt->d;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    int rc = SY_BUF_LIT(&b, "{\"model\":");
    const char *um = d->upstream_model ? d->upstream_model : "";
    if (d->health_check_model) {
        const char *m = d->health_check_model;
        size_t pl = d->provider ? strlen(d->provider) : 0;
        if (pl && strncmp(m, d->provider, pl) == 0 && m[pl] == '/')
            m += pl + 1;
        um = m;
        rc |= SY_BUF_LIT(&b, "\"");
        rc |= sy_buf_json_escape(&b, m, strlen(m));
        rc |= SY_BUF_LIT(&b, "\"");
    } else {
        rc |= sy_buf_append(&b, drt->model_json, drt->model_json_len);
    }
    static const char *const msgs[2] = {"Hey how's it going?", "What's 1 + 1?"};
    switch (mode) {
    case SY_HM_CHAT:
        rc |=
            sy_buf_printf(&b, ",\"messages\":[{\"role\":\"user\",\"content\":\"%s\"}],\"%s\":1}",
                          msgs[sy_rand(run->w) & 1], reasoning_model(drt, um) ? "max_completion_tokens" : "max_tokens");
        break;
    case SY_HM_COMPLETION: rc |= SY_BUF_LIT(&b, ",\"prompt\":\"test from litellm\",\"max_tokens\":1}"); break;
    default: rc |= SY_BUF_LIT(&b, ",\"input\":[\"test from litellm\"]}"); break;
    }
    if (rc) {
        sy_buf_free(&b);
        return NULL;
    }
    *len = b.len;
    return b.p;
}

/* Start p's call, or finish it at once (mock, unsupported). Returns 1 when a
 * call is in flight. */
static int probe_start(struct hprobe *p)
{
    const struct sy_drt *drt = p->drt;
    const struct sy_deployment *d = drt->d;
    struct hrun *run = p->run;
    sy_buf_init(&p->resp, OK_BODY_MAX);
    if (!drt->prov) {
        p->error = sy_health_unsupported_reason(drt);
        p->mark = 1;
        return 0;
    }
    if (drt->prov->flags & SY_PRESET_MOCK) { /* answered in-process: always up */
        p->ok = 1;
        p->mark = 1;
        return 0;
    }
    enum sy_health_mode mode = sy_health_mode_of(d);
    if (mode == SY_HM_NONE) {
        p->error = sy_health_fmt_error("Mode %s not supported by switchyard's health check (chat, completion and "
                                       "embedding are); no health check call was made",
                                       d->mode);
        return 0;
    }
    if (!run->w->upool) {
        p->error = sy_health_fmt_error("health check not run: the worker is shutting down");
        return 0;
    }
    size_t len = 0;
    p->body = probe_body(run, drt, mode, &len);
    if (!p->body) {
        p->error = sy_health_fmt_error("health check not run: out of memory");
        return 0;
    }
    double t = sy_health_timeout(drt);
    int kind = mode == SY_HM_CHAT ? 0 : mode == SY_HM_COMPLETION ? 1 : 2;
    struct sy_ureq_opts o = {0};
    o.url = drt->url[kind];
    o.headers = drt->headers;
    o.headers_len = drt->headers_len;
    if (drt->ad) { /* a translating provider: its adapter builds the call */
        char err[600] = "", *xb = NULL;
        size_t xl = 0, hl = 0;
        if (mode == SY_HM_COMPLETION || sy_xlate_probe(run->w, drt, mode != SY_HM_CHAT, p->body, len, &p->xurl,
                                                       &p->xhdrs, &hl, &xb, &xl, err, sizeof err) != 0) {
            p->error = mode == SY_HM_COMPLETION
                           ? sy_health_fmt_error("text completions are not supported by provider %s", drt->prov->name)
                           : sy_health_fmt_error("health check not run: %s", err);
            return 0;
        }
        free(p->body);
        p->body = xb;
        len = xl;
        o.url = p->xurl;
        o.headers = p->xhdrs;
        o.headers_len = hl;
    }
    p->part = uv_buf_init(p->body, (unsigned)len);
    o.method = "POST";
    o.body = &p->part;
    o.nbody = 1;
    o.connect_timeout_s = t < HEALTH_CONNECT_CAP_S ? t : HEALTH_CONNECT_CAP_S;
    o.first_byte_timeout_s = t;
    o.idle_timeout_s = t;
    o.total_timeout_s = t;
    p->ureq = o.url ? sy_ureq_start(run->w->upool, &o, &probe_cbs, p) : NULL;
    if (!p->ureq) {
        p->error = litellm_error(drt, "APIConnectionError", "Invalid upstream URL");
        p->mark = 1;
        return 0;
    }
    return 1;
}

/* p's endpoint object (router/health.c) into b. */
static int endpoint_json(struct sy_buf *b, const struct hprobe *p)
{
    const struct sy_health_seen seen = {p->ok, p->error, p->rl_req, p->rl_tok, p->region};
    return sy_health_endpoint_json(b, p->drt->d, &seen);
}

/* ---- rounds ------------------------------------------------------------------ */

static void run_free(struct hrun *run)
{
    if (!run)
        return;
    for (size_t i = 0; i < run->n; i++) {
        struct hprobe *p = &run->p[i];
        if (p->ureq) {
            sy_ureq_cancel(p->ureq);
            p->ureq = NULL;
        }
        free(p->body);
        free(p->xurl);
        free(p->xhdrs);
        free(p->error);
        sy_buf_free(&p->resp);
    }
    free(run->p);
    if (run->g)
        sy_gwconf_unref(run->g);
    free(run);
}

/* A round of the deployments of g that f selects, on worker w. NULL when out
 * of memory. Sets *notfound when f names a model_id that does not exist. */
static struct hrun *run_new(struct sy_worker *w, struct sy_gwconf *g, const struct sy_health_filter *f, int *notfound)
{
    *notfound = 0;
    struct hrun *run = calloc(1, sizeof *run);
    struct sy_health_key *k = calloc(g->ndrts ? g->ndrts : 1, sizeof *k);
    unsigned char *sel = calloc(g->ndrts ? g->ndrts : 1, 1);
    if (!run || !k || !sel) {
        free(run);
        free(k);
        free(sel);
        return NULL;
    }
    for (size_t i = 0; i < g->ndrts; i++)
        k[i] = (struct sy_health_key){g->drts[i].d->id, g->drts[i].d->model_name, g->drts[i].d->model};
    size_t n = sy_health_filter_keys(f, k, g->ndrts, sel);
    run->p = calloc(n ? n : 1, sizeof *run->p);
    if (!run->p) {
        free(run);
        free(k);
        free(sel);
        return NULL;
    }
    run->w = w;
    run->g = g;
    sy_gwconf_ref(g);
    for (size_t i = 0; i < g->ndrts; i++)
        if (sel[i]) {
            run->p[run->n].run = run;
            run->p[run->n++].drt = &g->drts[i];
        }
    *notfound = f->model_id && n == 0;
    free(k);
    free(sel);
    return run;
}

/* Start every probe of run. Returns the number in flight (run->pending). */
static size_t run_start(struct hrun *run)
{
    run->pending = 0;
    for (size_t i = 0; i < run->n; i++)
        run->pending += (size_t)probe_start(&run->p[i]);
    /* probes that finished at once are judged now; their router state too */
    for (size_t i = 0; i < run->n; i++) {
        struct hprobe *p = &run->p[i];
        if (!p->ureq) {
            p->done = 1;
            probe_mark(p);
        }
    }
    return run->pending;
}

/* Record p's result in the deployment's router state (when it says something
 * about the deployment and the round was not cancelled); log changes. */
static void probe_mark(struct hprobe *p)
{
    struct sy_dstate *st = p->drt->st;
    if (!p->mark || !st || p->run->canceled)
        return;
    int was_unhealthy = atomic_load_explicit(&st->unhealthy, memory_order_relaxed);
    const char *id = p->drt->d->id ? p->drt->d->id : "?";
    const char *group = p->drt->d->model_name ? p->drt->d->model_name : "?";
    if (!p->ok && !was_unhealthy)
        sy_warn("health: deployment %s (model group '%s') is unhealthy: %s", id, group, p->error ? p->error : "?");
    else if (p->ok && was_unhealthy)
        sy_info("health: deployment %s (model group '%s') is healthy again", id, group);
    sy_dstate_set_healthy(st, p->ok);
}

/* The response body of a finished round into out. */
static int run_response(const struct hrun *run, struct sy_buf *out)
{
    int rc = SY_BUF_LIT(out, "{\"healthy_endpoints\":[");
    size_t cnt[2] = {0, 0};
    for (int want = 1; want >= 0; want--) {
        if (want == 0)
            rc |= SY_BUF_LIT(out, "],\"unhealthy_endpoints\":[");
        for (size_t i = 0; i < run->n; i++) {
            const struct hprobe *p = &run->p[i];
            if (p->ok != want)
                continue;
            if (cnt[want]++)
                rc |= SY_BUF_LIT(out, ",");
            rc |= endpoint_json(out, p);
        }
    }
    rc |= sy_buf_printf(out, "],\"healthy_count\":%zu,\"unhealthy_count\":%zu}", cnt[1], cnt[0]);
    return rc;
}

static void live_unlink(struct hrun *run)
{
    if (run->prev)
        run->prev->next = run->next;
    else if (live_runs == run)
        live_runs = run->next;
    if (run->next)
        run->next->prev = run->prev;
    run->next = run->prev = NULL;
}

static void bg_round_done(struct hrun *run);

/* A request round is over: answer and free it (the call ends here). */
static void request_round_done(struct hrun *run)
{
    struct sy_call *c = run->c;
    struct sy_buf b;
    sy_buf_init(&b, OUT_MAX);
    int rc = run_response(run, &b);
    live_unlink(run);
    run->c = NULL;
    c->req->on_abort = NULL;
    if (rc)
        sy_reply_error(c->req, 500, "internal_server_error", NULL, "health check response too large");
    else
        sy_reply_json(c->req, 200, b.p, b.len);
    sy_buf_free(&b);
    run_free(run);
}

static void probe_finish(struct hprobe *p)
{
    struct hrun *run = p->run;
    p->done = 1;
    probe_mark(p);
    if (--run->pending)
        return;
    if (run->c)
        request_round_done(run);
    else
        bg_round_done(run);
}

/* The client went away: cancel every call still in flight, then end the request. */
static void on_abort(struct sy_req *r)
{
    struct sy_call *c = r->handler_data;
    struct hrun *run = live_runs;
    while (run && run->c != c)
        run = run->next;
    if (run) {
        live_unlink(run);
        run->c = NULL;
        run_free(run); /* cancels the calls in flight: no callback follows */
    }
    sy_resp_end(r);
}

/* ---- answering from the background store -------------------------------------- */

/* Reply from the stored background results; 0 when answered, -1 when there
 * are none yet. */
static int reply_stored(struct sy_call *c, const struct sy_health_filter *f)
{
    struct sy_buf b;
    sy_buf_init(&b, OUT_MAX);
    int notfound = 0;
    int rc = sy_health_stored_json(f, &b, &notfound);
    if (rc < 0) {
        sy_buf_free(&b);
        return -1;
    }
    if (notfound) {
        char msg[400];
        snprintf(msg, sizeof msg, "Model with ID %.300s not found", f->model_id);
        sy_reply_error(c->req, 404, "invalid_request_error", "model_id", msg);
    } else if (rc) {
        sy_reply_error(c->req, 500, "internal_server_error", NULL, "health check response too large");
    } else {
        sy_reply_json(c->req, 200, b.p, b.len);
    }
    sy_buf_free(&b);
    return 0;
}

/* ---- the stage ------------------------------------------------------------------ */

static int health_run(struct sy_call *c)
{
    struct sy_health_filter f = {query_param(c->req, "model"), query_param(c->req, "model_id")};
    if (f.model && !*f.model)
        f.model = NULL;
    if (f.model_id && !*f.model_id)
        f.model_id = NULL;
    if (c->g->cfg->router.background_health_checks && reply_stored(c, &f) == 0)
        return SY_DONE;
    int notfound = 0;
    struct hrun *run = run_new(c->w, c->g, &f, &notfound);
    if (!run) {
        sy_reply_error(c->req, 500, "internal_server_error", NULL, "out of memory");
        return SY_DONE;
    }
    if (notfound) {
        run_free(run);
        char msg[400];
        snprintf(msg, sizeof msg, "Model with ID %.300s not found", f.model_id);
        sy_reply_error(c->req, 404, "invalid_request_error", "model_id", msg);
        return SY_DONE;
    }
    run->c = c;
    run->next = live_runs;
    if (live_runs)
        live_runs->prev = run;
    live_runs = run;
    if (run_start(run) == 0) {
        request_round_done(run); /* nothing to wait for: answered now */
        return SY_DONE;
    }
    c->req->on_abort = on_abort;
    return SY_AGAIN;
}

/* ---- background checks (worker 0) --------------------------------------------- */

static struct {
    struct sy_worker *w; /* worker 0 while started */
    uv_timer_t *timer;
    struct hrun *run;     /* round in flight */
    uint64_t last_end_ms; /* loop time the last round ended; 0 = none yet */
    int have_round;
} bg;

/* A background round is over: store its results (unless it was cancelled). */
static void bg_round_done(struct hrun *run)
{
    if (bg.run == run) {
        bg.run = NULL;
        bg.have_round = 1;
        bg.last_end_ms = uv_now(&run->w->loop);
    }
    if (!run->canceled) {
        struct sy_health_entry *e = calloc(run->n ? run->n : 1, sizeof *e);
        size_t n = 0, bad = 0;
        int oom = !e;
        for (size_t i = 0; i < run->n && !oom; i++) {
            const struct hprobe *p = &run->p[i];
            struct sy_buf b;
            sy_buf_init(&b, 16u << 20);
            if (endpoint_json(&b, p) != 0) {
                sy_buf_free(&b);
                oom = 1;
                break;
            }
            const struct sy_deployment *d = p->drt->d;
            e[n] =
                (struct sy_health_entry){xstrdup(d->id), xstrdup(d->model_name), xstrdup(d->model), p->ok, b.p, b.len};
            n++;
            bad += !p->ok;
        }
        if (oom) {
            sy_health_entries_free(e, n);
            sy_warn("health: background round results dropped (out of memory)");
        } else {
            sy_health_store_replace(e, n);
            sy_debug("health: background round done: %zu healthy, %zu unhealthy", n - bad, bad);
        }
    }
    run_free(run);
}

static void bg_tick(uv_timer_t *t);

static void bg_arm(uint64_t ms)
{
    if (!bg.timer)
        return;
    if (ms < BG_TICK_MIN_MS)
        ms = BG_TICK_MIN_MS;
    if (ms > BG_TICK_MAX_MS)
        ms = BG_TICK_MAX_MS;
    uv_timer_start(bg.timer, bg_tick, ms, 0);
}

static void bg_tick(uv_timer_t *t)
{
    struct sy_worker *w = t->data;
    const struct sy_config *cfg = w->conf->cfg;
    if (w->draining || !w->upool)
        return; /* not re-armed: the worker is stopping */
    if (!cfg->router.background_health_checks) {
        if (bg.have_round)
            sy_health_store_clear(); /* turned off by a reload: never serve stale results later */
        bg.have_round = 0;
        bg.last_end_ms = 0;
        bg_arm(BG_TICK_MAX_MS);
        return;
    }
    double iv = cfg->router.health_check_interval_s > 0 ? cfg->router.health_check_interval_s : 300;
    uint64_t iv_ms = (uint64_t)(iv * 1000);
    uint64_t now = uv_now(&w->loop);
    if (bg.run) {
        bg_arm(BG_TICK_MAX_MS);
        return;
    }
    if (bg.have_round && now - bg.last_end_ms < iv_ms) {
        bg_arm(iv_ms - (now - bg.last_end_ms));
        return;
    }
    struct sy_health_filter all = {NULL, NULL};
    int notfound = 0;
    struct hrun *run = run_new(w, w->conf, &all, &notfound);
    if (!run) {
        bg_arm(BG_TICK_MAX_MS);
        return;
    }
    bg.run = run;
    if (run_start(run) == 0) /* nothing to wait for */
        bg_round_done(run);
    bg_arm(bg.run ? BG_TICK_MAX_MS : iv_ms);
}

void sy_health_background_start(struct sy_worker *w)
{
    if (!w || w->id != 0 || bg.timer)
        return;
    uv_timer_t *t = malloc(sizeof *t);
    if (!t) {
        sy_warn("health: background checks not started (out of memory)");
        return;
    }
    uv_timer_init(&w->loop, t);
    t->data = w;
    uv_unref((uv_handle_t *)t);
    bg.w = w;
    bg.timer = t;
    bg.run = NULL;
    bg.have_round = 0;
    bg.last_end_ms = 0;
    uv_timer_start(t, bg_tick, 0, 0); /* the first round at once (as LiteLLM at startup) */
}

static void bg_timer_closed(uv_handle_t *h)
{
    free(h);
}

void sy_health_background_stop(struct sy_worker *w)
{
    if (!w || bg.w != w || !bg.timer)
        return;
    uv_timer_stop(bg.timer);
    uv_close((uv_handle_t *)bg.timer, bg_timer_closed);
    bg.timer = NULL;
    bg.w = NULL;
    if (bg.run) {
        struct hrun *run = bg.run;
        bg.run = NULL;
        run_free(run); /* cancels its calls: no callback follows */
    }
}

const struct sy_stage sy_stage_health = {
    .name = "health",
    .routes = SY_RKB(SY_RK_HEALTH),
    .run = health_run,
    .worker_start = sy_health_background_start,
    .worker_stop = sy_health_background_stop,
};
