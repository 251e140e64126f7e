/* provider_pt.c - the provider pass-through routes, as LiteLLM serves them
 * (proxy/pass_through_endpoints/llm_passthrough_endpoints.py): /anthropic/...,
 * /vertex_ai/... and /vertex-ai/..., /gemini/..., /bedrock/..., /openai/..., /azure/...,
 * /cohere/..., /mistral/..., /vllm/..., /langfuse/..., any method, and the config's
 * general_settings.pass_through_endpoints.
 *
 * The caller authenticated in the auth stage (a virtual key or the master
 * key; on /gemini also ?key=). This stage then:
 *
 *   1. refuses a sub-path that would leave the route (providers/ptroute.h:
 *      "." / ".." segments, also percent-encoded): 400;
 *   2. checks the key's allowed_passthrough_routes (metadata of the key,
 *      else of its team; LiteLLM's check_passthrough_route_access: equal or a
 *      prefix followed by '/'): a key whose list does not cover the route gets
 *      403 (an empty list counts as none); on a config endpoint a non-admin
 *      key must have the route listed;
 *      then the key's budgets (spent so far, as key_checks);
 *   3. picks the credentials: the deployment of that provider whose model
 *      the request names (Vertex and Gemini ".../models/{m}:op", Bedrock
 *      "/model/{id}/op", else the body's "model"), else the provider's
 *      environment variables as LiteLLM reads them, else the provider's first
 *      deployment (its litellm_params, api_base included):
 *
 *        anthropic  x-api-key                api_base | ANTHROPIC_API_BASE | api.anthropic.com
 *        vertex_ai  Bearer <OAuth token>     api_base | VERTEXAI_API_BASE | {location}-aiplatform.googleapis.com
 *                   (gateway/oauth.c: the service account's token, cached; GOOGLE_APPLICATION_CREDENTIALS)
 *        gemini     ?key=                    api_base | GEMINI_API_BASE | generativelanguage.googleapis.com
 *        bedrock    SigV4 over the body      api_base | AWS_BEDROCK_RUNTIME_ENDPOINT | bedrock-runtime.{region}...
 *        openai     Bearer                   api_base | OPENAI_API_BASE | api.openai.com
 *        azure      api-key                  api_base | AZURE_API_BASE (api-version: AZURE_API_VERSION)
 *        cohere     Bearer                   api_base | COHERE_API_BASE | api.cohere.com
 *        mistral    Bearer                   api_base | MISTRAL_API_BASE | api.mistral.ai
 *        vllm       Bearer (when set)        api_base | HOSTED_VLLM_API_BASE | VLLM_API_BASE
 *        langfuse   Basic public:secret      LANGFUSE_HOST | cloud.langfuse.com
 *
 *      The client's own credential headers (Authorization, x-api-key,
 *      x-litellm-api-key, api-key, x-goog-api-key, x-amz-*, cookies) and
 *      hop-by-hop headers are never forwarded; the rest are. A config entry
 *      sends its own headers, plus the client's (filtered the same way) with
 *      forward_headers;
 *   4. hands the call to gateway/ptfwd.c, which streams the answer back as it
 *      comes; at the end (finish hook) a spend row is written and the key's
 *      spend grows when the answer carried usage (Anthropic messages,
 *      Gemini/Vertex generateContent, Bedrock Converse/InvokeModel), priced
 *      at the deployment's rates, else the price map's for the model.
 */
#include "gateway/gateway.h"
#include "gateway/slot.h"
#include "gateway/stage.h"

#include <http_parser.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/clock.h"
#include "core/errors.h"
#include "core/log.h"
#include "gateway/ptfwd.h"
#include "gateway/xlate.h"
#include "http/server.h"
#include "keys/keys.h"
#include "providers/adapter.h"
#include "providers/jdom.h"
#include "providers/ptroute.h"
#include "providers/sigv4.h"
#include "spend/spend.h"

#define URL_MAX        8192
#define OAUTH_WAIT_MAX 30.0 /* seconds a call waits for a Vertex token */

static int pt_slot = -1;

struct pt {
    struct sy_ptfwd_state st;
    struct sy_ptfwd f;
    const struct sy_ptprov *prov;
    const struct sy_drt *d;
    struct sy_pconf *pc; /* the Vertex credentials in use (d's, or the environment's) */
    const char *url_base;
    const char *sub;     /* the sub-path forwarded (NUL-terminated) */
    struct sy_buf hdr;   /* the headers forwarded */
    uv_timer_t *timer;   /* waiting for an OAuth token */
    uint64_t wait_start; /* ns */
};

static char *dupn(struct sy_call *c, const char *p, size_t n)
{
    return sy_arena_strndup(&c->req->arena, p, n);
}

static char *aprintf(struct sy_call *c, const char *fmt, const char *a, const char *b)
{
    size_t n = strlen(fmt) + strlen(a) + (b ? strlen(b) : 0) + 1;
    char *o = sy_arena_alloc(&c->req->arena, n);
    snprintf(o, n, fmt, a, b);
    return o;
}

static int refuse(struct sy_call *c, int status, const char *type, const char *msg)
{
    c->out.exception_class = status == 401 ? "AuthenticationError" : status == 403 ? "PermissionDeniedError" : NULL;
    sy_call_error(c, status, type, "None", msg, NULL, 0);
    return SY_DONE;
}

/* ---- allowed_passthrough_routes ---- */

/* 1 covered, 0 not, -1 the metadata has no list (or it is null). */
static int list_covers(struct sy_call *c, const char *meta, struct sy_str route, char *shown, size_t cap)
{
    if (!meta || !*meta)
        return -1;
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, meta, strlen(meta), &c->req->arena, 0) || d.n[0].type != 'o')
        return -1;
    uint32_t l = sy_jdom_get(&d, 0, "allowed_passthrough_routes");
    if (!l || d.n[l].type != 'a' || !d.n[l].kids)
        return -1; /* absent, null or empty: LiteLLM's `or` falls through to the team's */
    size_t w = 0;
    int hit = 0;
    if (cap)
        shown[w++] = '[';
    for (uint32_t i = sy_jdom_first(&d, l), k = 0; i; i = sy_jdom_next(&d, i), k++) {
        size_t n;
        const char *s = sy_jdom_type(&d, i) == 's' ? sy_jdom_str(&d, i, &c->req->arena, &n) : NULL;
        if (!s)
            continue;
        if (sy_pt_route_covers(s, n, route.p, route.n))
            hit = 1;
        if (w + n + 6 < cap) {
            w += (size_t)snprintf(shown + w, cap - w, "%s'%.*s'", k ? ", " : "", (int)n, s);
        }
    }
    if (cap) {
        if (w + 2 > cap)
            w = cap - 2;
        shown[w++] = ']';
        shown[w] = 0;
    }
    return hit;
}

/* SY_OK, or the 403 sent. custom: a config endpoint (a key must list it). */
static int route_allowed(struct sy_call *c, int custom)
{
    if (c->auth.is_admin || !c->auth.key)
        return SY_OK; /* master key, proxy admin, auth off */
    struct sy_str route = c->req->path;
    char shown[512] = "[]";
    int r = list_covers(c, c->auth.key->key.metadata, route, shown, sizeof shown);
    if (r < 0 && c->auth.key->team)
        r = list_covers(c, c->auth.key->team->metadata, route, shown, sizeof shown);
    if (r == 1 || (r < 0 && !custom))
        return SY_OK;
    char msg[1024];
    snprintf(msg, sizeof msg,
             "Virtual key is not allowed to call this route. Only allowed to call passthrough routes: %s. "
             "Tried to call route: %.300s",
             shown, dupn(c, route.p, route.n > 300 ? 300 : route.n));
    return refuse(c, 403, "auth_error", msg);
}

/* ---- headers ---- */

static int drop_header(struct sy_str n)
{
    static const char *const drop[] = {"host",
                                       "content-length",
                                       "connection",
                                       "keep-alive",
                                       "transfer-encoding",
                                       "te",
                                       "upgrade",
                                       "expect",
                                       "proxy-authorization",
                                       "proxy-connection",
                                       "accept-encoding",
                                       "authorization",
                                       "x-api-key",
                                       "api-key",
                                       "x-goog-api-key",
                                       "ocp-apim-subscription-key",
                                       "cookie"};
    for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
        if (sy_str_caseeq(n, drop[i], strlen(drop[i])))
            return 1;
    return (n.n >= 10 && strncasecmp(n.p, "x-litellm-", 10) == 0) || (n.n >= 6 && strncasecmp(n.p, "x-amz-", 6) == 0);
}

static void client_headers(struct sy_call *c, struct sy_buf *b, int all)
{
    const struct sy_req *r = c->req;
    for (size_t i = 0; i < r->nheaders; i++) {
        struct sy_str n = r->headers[i].name, v = r->headers[i].value;
        if (drop_header(n) || (!all && !SY_STR_CASEEQ(n, "content-type")))
            continue;
        if (memchr(v.p, '\r', v.n) || memchr(v.p, '\n', v.n))
            continue;
        sy_buf_append(b, n.p, n.n);
        SY_BUF_LIT(b, ": ");
        sy_buf_append(b, v.p, v.n);
        SY_BUF_LIT(b, "\r\n");
    }
}

static void header(struct sy_buf *b, const char *name, const char *pre, const char *v)
{
    if (!v || !*v || sy_pconf_has_ctl(v))
        return;
    sy_buf_puts(b, name);
    SY_BUF_LIT(b, ": ");
    if (pre)
        sy_buf_puts(b, pre);
    sy_buf_puts(b, v);
    SY_BUF_LIT(b, "\r\n");
}

/* ---- which deployment, which credentials ---- */

static const char *env(const char *a, const char *b)
{
    const char *v = getenv(a);
    if ((!v || !*v) && b)
        v = getenv(b);
    return v && *v ? v : NULL;
}

/* The model the request names: in the path, else the JSON body's "model". */
static const char *req_model(struct sy_call *c, const struct sy_ptprov *p, const char *sub, size_t n)
{
    char m[512];
    if (sy_pt_path_model(p->kind, sub, n, m, sizeof m))
        return dupn(c, m, strlen(m));
    struct sy_jscan sc;
    if (c->req->body.len && c->req->body.len < (4u << 20) && sy_jscan(c->req->body.p, c->req->body.len, &sc) == 0 &&
        sc.model.type == 's' && sc.model.len < sizeof m &&
        sy_jstr_decode(c->req->body.p + sc.model.off, sc.model.len, m, sizeof m) > 0)
        return dupn(c, m, strlen(m));
    return NULL;
}

static int is_prov(const struct sy_drt *d, const char *prov)
{
    return d->d->provider && strcmp(d->d->provider, prov) == 0;
}

/* The deployment serving model (upstream model or group name), else NULL. */
static const struct sy_drt *model_drt(const struct sy_gwconf *g, const char *prov, const char *model)
{
    if (!model || !prov)
        return NULL;
    for (size_t i = 0; i < g->ndrts; i++) {
        const struct sy_drt *d = &g->drts[i];
        if (is_prov(d, prov) && ((d->d->upstream_model && strcmp(d->d->upstream_model, model) == 0) ||
                                 (d->d->model_name && strcmp(d->d->model_name, model) == 0)))
            return d;
    }
    return NULL;
}

static const struct sy_drt *first_drt(const struct sy_gwconf *g, const char *prov)
{
    for (size_t i = 0; prov && i < g->ndrts; i++)
        if (is_prov(&g->drts[i], prov))
            return &g->drts[i];
    return NULL;
}

/* The environment's key variable of a provider (decides env before a first deployment). */
static const char *env_key(enum sy_pt_kind k)
{
    switch (k) {
    case SY_PT_ANTHROPIC: return env("ANTHROPIC_API_KEY", NULL);
    case SY_PT_GEMINI: return env("GEMINI_API_KEY", "GOOGLE_API_KEY");
    case SY_PT_OPENAI: return env("OPENAI_API_KEY", NULL);
    case SY_PT_AZURE: return env("AZURE_API_KEY", NULL);
    case SY_PT_COHERE: return env("COHERE_API_KEY", "CO_API_KEY");
    case SY_PT_MISTRAL: return env("MISTRAL_API_KEY", NULL);
    case SY_PT_VLLM: return env("HOSTED_VLLM_API_BASE", "VLLM_API_BASE");
    case SY_PT_BEDROCK: return env("AWS_ACCESS_KEY_ID", NULL);
    case SY_PT_VERTEX: return env("GOOGLE_APPLICATION_CREDENTIALS", "VERTEXAI_CREDENTIALS");
    default: return NULL;
    }
}

/* base without trailing '/', and without a "/v1" the sub-path repeats. */
static const char *join_base(struct sy_call *c, const char *base, const char *sub)
{
    size_t bl = strlen(base);
    while (bl && base[bl - 1] == '/')
        bl--;
    if (bl >= 3 && memcmp(base + bl - 3, "/v1", 3) == 0 && strncmp(sub, "/v1/", 4) == 0)
        bl -= 3;
    return dupn(c, base, bl);
}

/* The Authorization / api-key line of an OpenAI-compatible deployment's prebuilt headers. */
static void drt_auth(struct sy_buf *b, const struct sy_drt *d)
{
    const char *p = d->headers, *e = p ? p + d->headers_len : NULL;
    while (p && p < e) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t ln = nl ? (size_t)(nl - p) + 1 : (size_t)(e - p);
        if ((ln > 14 && strncasecmp(p, "authorization:", 14) == 0) || (ln > 8 && strncasecmp(p, "api-key:", 8) == 0))
            sy_buf_append(b, p, ln);
        p += ln;
    }
}

/* Vertex without a deployment: GOOGLE_APPLICATION_CREDENTIALS read once (a small file, first use only). */
static pthread_mutex_t env_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sy_pconf env_vertex;
static int env_vertex_done;

static struct sy_pconf *vertex_env_pconf(void)
{
    pthread_mutex_lock(&env_mu);
    if (!env_vertex_done) {
        env_vertex_done = 1;
        const char *v = env("VERTEXAI_CREDENTIALS", NULL), *path = env("GOOGLE_APPLICATION_CREDENTIALS", NULL);
        if (v && *v == '{') {
            env_vertex.credentials = strdup(v);
        } else if (path) {
            FILE *f = fopen(path, "rb");
            if (f) {
                char *buf = calloc(1, 65537);
                size_t n = buf ? fread(buf, 1, 65536, f) : 0;
                fclose(f);
                if (buf && n)
                    env_vertex.credentials = buf;
                else
                    free(buf);
            }
        }
    }
    pthread_mutex_unlock(&env_mu);
    return env_vertex.credentials ? &env_vertex : NULL;
}

/* ---- SigV4 ---- */

static int sign_bedrock(struct sy_call *c, struct pt *p, const char *url, const char *ak, const char *sk,
                        const char *tok, const char *region)
{
    const char *h = strstr(url, "://");
    h = h ? h + 3 : url;
    const char *path = strchr(h, '/');
    const char *q = strchr(h, '?');
    if (!path || (q && q < path))
        path = q ? q : h + strlen(h);
    char *host = dupn(c, h, (size_t)(path - h));
    const char *pe = q ? q : path + strlen(path);
    char *ppath = dupn(c, path, (size_t)(pe - path));
    struct sy_sigv4_header sh[1];
    size_t nsh = 0;
    struct sy_str ct = sy_req_header(c->req, "content-type");
    if (ct.p)
        sh[nsh++] = (struct sy_sigv4_header){"content-type", dupn(c, ct.p, ct.n)};
    char date[17];
    sy_sigv4_amz_date((int64_t)time(NULL), date);
    struct sy_sigv4 s = {.method = p->f.method,
                         .host = host,
                         .path = ppath,
                         .query = q ? q + 1 : NULL,
                         .headers = sh,
                         .nheaders = nsh,
                         .payload = c->req->body.p,
                         .payload_len = c->req->body.len,
                         .access_key = ak,
                         .secret_key = sk,
                         .session_token = tok,
                         .region = region,
                         .service = "bedrock",
                         .amz_date = date};
    return sy_sigv4_sign(&s, &p->hdr);
}

/* ---- the call ---- */

static void timer_closed(uv_handle_t *h)
{
    free(h);
}

static void stop_timer(struct pt *p)
{
    if (p->timer) {
        uv_timer_stop(p->timer);
        uv_close((uv_handle_t *)p->timer, timer_closed);
        p->timer = NULL;
    }
}

static void pt_abort(struct sy_req *r)
{
    struct sy_call *c = r->handler_data;
    struct pt *p = sy_call_slot(c, pt_slot);
    c->aborted = 1;
    if (p)
        stop_timer(p);
    sy_call_account(c, 499);
    sy_resp_end(r);
}

static int go(struct sy_call *c, struct pt *p);

static void on_token_wait(uv_timer_t *t)
{
    struct sy_call *c = t->data;
    struct pt *p = sy_call_slot(c, pt_slot);
    stop_timer(p);
    c->req->on_abort = NULL;
    go(c, p);
}

/* Build the URL and headers and send; SY_AGAIN (sent, or waiting for a token) or SY_DONE. */
static int go(struct sy_call *c, struct pt *p)
{
    struct sy_req *r = c->req;
    struct sy_buf url;
    sy_buf_init(&url, URL_MAX);
    sy_buf_puts(&url, p->url_base);
    sy_buf_puts(&url, p->sub);
    /* the query as the client sent it (on /gemini without its key=: the caller's virtual key) */
    int first = 1;
    const char *q = r->query.p, *qe = q ? q + r->query.n : NULL;
    while (q && q < qe) {
        const char *amp = memchr(q, '&', (size_t)(qe - q));
        size_t pl = amp ? (size_t)(amp - q) : (size_t)(qe - q);
        if (!(p->prov && p->prov->kind == SY_PT_GEMINI && pl >= 4 && memcmp(q, "key=", 4) == 0) && pl) {
            sy_buf_append(&url, first ? "?" : "&", 1);
            sy_buf_append(&url, q, pl);
            first = 0;
        }
        q += pl + 1;
    }
    if (p->prov && p->prov->kind == SY_PT_GEMINI) {
        const char *k = p->d && p->d->pc ? p->d->pc->key : env_key(SY_PT_GEMINI);
        if (k && !sy_pconf_has_ctl(k)) {
            sy_buf_append(&url, first ? "?key=" : "&key=", 5);
            for (const char *s = k; *s; s++) { /* the key is URL-safe in practice; encode what is not */
                unsigned char ch = (unsigned char)*s;
                if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '-' ||
                    ch == '_' || ch == '.' || ch == '~')
                    sy_buf_append(&url, s, 1);
                else
                    sy_buf_printf(&url, "%%%02X", ch);
            }
        }
    }
    if (p->prov && p->prov->kind == SY_PT_AZURE && !sy_query_get(r->query.p, r->query.n, "api-version", NULL, 0)) {
        const char *v = p->d && p->d->d->api_version ? p->d->d->api_version : env("AZURE_API_VERSION", NULL);
        if (v) {
            sy_buf_puts(&url, first ? "?api-version=" : "&api-version=");
            sy_buf_puts(&url, v);
        }
    }
    if (sy_buf_failed(&url)) {
        sy_buf_free(&url);
        return refuse(c, 414, "invalid_request_error", "the pass-through URL is too long");
    }
    char *u = dupn(c, url.p, url.len);
    sy_buf_free(&url);
    if (p->prov && p->prov->kind == SY_PT_VERTEX) {
        char tok[4096], err[384];
        int rc = sy_oauth_token(c->w, p->pc, tok, sizeof tok, err, sizeof err);
        if (rc == 0) { /* a fetch is under way: look again shortly (bounded) */
            if (!p->wait_start)
                p->wait_start = sy_now_ns();
            if ((double)(sy_now_ns() - p->wait_start) / 1e9 > OAUTH_WAIT_MAX)
                return refuse(c, 500, "None", "vertex_ai: no OAuth2 access token in time");
            p->timer = malloc(sizeof *p->timer);
            if (!p->timer || uv_timer_init(&c->w->loop, p->timer) != 0) {
                free(p->timer);
                p->timer = NULL;
                return refuse(c, 500, "None", "out of memory");
            }
            p->timer->data = c;
            uv_timer_start(p->timer, on_token_wait, 5, 0);
            r->on_abort = pt_abort;
            return SY_AGAIN;
        }
        if (rc < 0) {
            char msg[512];
            snprintf(msg, sizeof msg, "vertex_ai: could not get an OAuth2 access token: %s", err);
            return refuse(c, 500, "None", msg);
        }
        header(&p->hdr, "Authorization", "Bearer ", tok);
    } else if (p->prov && p->prov->kind == SY_PT_BEDROCK) {
        const struct sy_pconf *pc = p->d ? p->d->pc : NULL;
        const char *ak = pc && pc->access_key ? pc->access_key : env("AWS_ACCESS_KEY_ID", NULL);
        const char *sk = pc && pc->secret_key ? pc->secret_key : env("AWS_SECRET_ACCESS_KEY", NULL);
        const char *st = pc && pc->access_key ? pc->session_token : env("AWS_SESSION_TOKEN", NULL);
        const char *rg = pc && pc->region ? pc->region : env("AWS_REGION_NAME", "AWS_REGION");
        if (ak && sk && sign_bedrock(c, p, u, ak, sk, st, rg ? rg : "us-east-1") != 0)
            return refuse(c, 500, "None", "bedrock: the request could not be signed");
    }
    if (sy_buf_failed(&p->hdr))
        return refuse(c, 431, "invalid_request_error", "the pass-through request headers are too large");
    p->f.url = u;
    p->f.headers = p->hdr.p;
    p->f.headers_len = p->hdr.len;
    p->f.body = r->body.p;
    p->f.body_len = r->body.len;
    return sy_ptfwd_start(c, &p->st, &p->f);
}

static void free_pt(void *v)
{
    struct pt *p = v;
    stop_timer(p);
    sy_buf_free(&p->hdr);
}

static const char *method_name(int m)
{
    return http_method_str((enum http_method)m);
}

/* The price of st->model: the deployment's (with its overrides), else the price map's. */
static void price_of(struct pt *p)
{
    if (p->d) {
        p->st.price = p->d->price;
        p->st.priced = 1;
        return;
    }
    const struct sy_price *pr = p->st.model[0] ? sy_price_find(p->prov ? p->prov->provider : NULL, p->st.model) : NULL;
    if (pr) {
        sy_dprice_from(&p->st.price, pr);
        p->st.priced = 1;
    }
}

static int provider_run(struct sy_call *c, struct pt *p, size_t sub)
{
    const struct sy_ptprov *pv = p->prov;
    const char *s = c->req->path.p + sub;
    size_t sn = c->req->path.n - sub;
    const char *model = req_model(c, pv, s, sn);
    const char *envk = env_key(pv->kind);
    const struct sy_drt *d = model_drt(c->g, pv->provider, model);
    if (!d && !envk)
        d = first_drt(c->g, pv->provider);
    p->d = d;
    const struct sy_pconf *pc = d ? d->pc : NULL;
    const char *dbase = d && d->d->api_base && *d->d->api_base ? d->d->api_base : NULL;
    const char *base = NULL;
    switch (pv->kind) {
    case SY_PT_ANTHROPIC:
        base = pc && pc->base ? pc->base : env("ANTHROPIC_API_BASE", NULL);
        base = base ? base : "https://api.anthropic.com";
        header(&p->hdr, "x-api-key", NULL, pc ? pc->key : envk);
        p->f.usage = SY_PTU_ANTHROPIC;
        break;
    case SY_PT_GEMINI:
        base = pc && pc->base ? pc->base : env("GEMINI_API_BASE", NULL);
        base = base ? base : "https://generativelanguage.googleapis.com";
        p->f.usage = SY_PTU_GEMINI;
        break;
    case SY_PT_VERTEX: {
        char proj[256], loc[128];
        int where = sy_pt_vertex_where(s, sn, proj, sizeof proj, loc, sizeof loc);
        base = dbase ? dbase : env("VERTEXAI_API_BASE", NULL);
        if (!base && where) {
            for (const char *q = loc; *q; q++)
                if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '-'))
                    return refuse(c, 400, "invalid_request_error", "vertex_ai: the location in the path is not valid");
            base = strcmp(loc, "global") == 0 ? "https://aiplatform.googleapis.com"
                                              : aprintf(c, "https://%s-aiplatform.googleapis.com%s", loc, "");
        }
        if (!base && pc && pc->base)
            base = pc->base;
        if (!base)
            return refuse(c, 400, "invalid_request_error",
                          "vertex_ai: the path names no location (/v1/projects/{project}/locations/{location}/...)");
        p->pc = d && d->pc && d->pc->credentials ? d->pc : vertex_env_pconf();
        if (!p->pc)
            return refuse(c, 500, "None",
                          "vertex_ai: no credentials for the pass-through route (a vertex_ai deployment with "
                          "vertex_credentials, or GOOGLE_APPLICATION_CREDENTIALS)");
        p->f.usage = memmem(s, sn, "/publishers/anthropic/", 22) ? SY_PTU_ANTHROPIC : SY_PTU_GEMINI;
        break;
    }
    case SY_PT_BEDROCK:
        base = pc && pc->base ? pc->base : env("AWS_BEDROCK_RUNTIME_ENDPOINT", NULL);
        if (!base) {
            const char *rg = env("AWS_REGION_NAME", "AWS_REGION");
            base = aprintf(c, "https://bedrock-runtime.%s.amazonaws.com%s",
                           rg && !sy_pconf_has_ctl(rg) && !strpbrk(rg, "/?#@") ? rg : "us-east-1", "");
        }
        p->f.usage = SY_PTU_BEDROCK;
        break;
    case SY_PT_OPENAI:
    case SY_PT_AZURE:
    case SY_PT_MISTRAL:
    case SY_PT_VLLM:
    case SY_PT_COHERE: {
        static const char *const benv[] = {[SY_PT_OPENAI] = "OPENAI_API_BASE",
                                           [SY_PT_AZURE] = "AZURE_API_BASE",
                                           [SY_PT_MISTRAL] = "MISTRAL_API_BASE",
                                           [SY_PT_VLLM] = "HOSTED_VLLM_API_BASE",
                                           [SY_PT_COHERE] = "COHERE_API_BASE"};
        static const char *const bdef[] = {[SY_PT_OPENAI] = "https://api.openai.com",
                                           [SY_PT_AZURE] = NULL,
                                           [SY_PT_MISTRAL] = "https://api.mistral.ai",
                                           [SY_PT_VLLM] = NULL,
                                           [SY_PT_COHERE] = "https://api.cohere.com"};
        base = dbase            ? dbase
               : pc && pc->base ? pc->base
                                : env(benv[pv->kind], pv->kind == SY_PT_VLLM ? "VLLM_API_BASE" : NULL);
        base = base ? base : bdef[pv->kind];
        if (!base) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s: no base URL for the pass-through route (a deployment with api_base, or %s)",
                     pv->provider, benv[pv->kind]);
            return refuse(c, 500, "None", msg);
        }
        if (pc && pc->key)
            header(&p->hdr, "Authorization", "Bearer ", pc->key);
        else if (d && !d->ad)
            drt_auth(&p->hdr, d);
        else if (pv->kind == SY_PT_AZURE)
            header(&p->hdr, "api-key", NULL, env("AZURE_API_KEY", NULL));
        else if (pv->kind == SY_PT_VLLM)
            header(&p->hdr, "Authorization", "Bearer ", env("HOSTED_VLLM_API_KEY", "VLLM_API_KEY"));
        else
            header(&p->hdr, "Authorization", "Bearer ", envk);
        break;
    }
    case SY_PT_LANGFUSE: {
        base = env("LANGFUSE_HOST", NULL);
        base = base ? base : "https://cloud.langfuse.com";
        const char *pub = env("LANGFUSE_PUBLIC_KEY", NULL), *sec = env("LANGFUSE_SECRET_KEY", NULL);
        if (pub && sec) {
            char *pair = aprintf(c, "%s:%s", pub, sec);
            size_t pl = strlen(pair);
            unsigned char *b64 = sy_arena_alloc(&c->req->arena, 4 * ((pl + 2) / 3) + 1);
            EVP_EncodeBlock(b64, (const unsigned char *)pair, (int)pl);
            header(&p->hdr, "Authorization", "Basic ", (const char *)b64);
        }
        break;
    }
    }
    if (strncmp(base, "http://", 7) != 0 && strncmp(base, "https://", 8) != 0)
        return refuse(c, 500, "None", "the pass-through base URL is not an http(s) URL");
    if (memmem(s, sn, "count_tokens", 12) || memmem(s, sn, "count-tokens", 12) || memmem(s, sn, "countTokens", 11))
        p->f.usage = SY_PTU_NONE; /* a token count is not a billed call (its answer names input tokens) */
    p->sub = dupn(c, s, sn);
    p->url_base = join_base(c, base, p->sub);
    p->st.provider = pv->provider ? pv->provider : "langfuse";
    p->st.api_base = p->url_base;
    p->st.model = model ? model : "";
    if (d && d->d->upstream_model && (!model || !strcmp(d->d->model_name ? d->d->model_name : "", model)))
        p->st.model = d->d->upstream_model;
    price_of(p);
    client_headers(c, &p->hdr, 1);
    return go(c, p);
}

static int endpoint_run(struct sy_call *c, struct pt *p, const struct sy_ptendpoint *e, size_t sub)
{
    const char *s = c->req->path.p + sub;
    size_t sn = c->req->path.n - sub;
    p->sub = dupn(c, s, sn);
    p->url_base = join_base(c, e->target, "");
    for (size_t i = 0; i < e->nheaders; i++)
        header(&p->hdr, e->hname[i], NULL, e->hvalue[i]);
    client_headers(c, &p->hdr, e->forward_headers);
    p->st.provider = "pass_through";
    p->st.api_base = p->url_base;
    p->st.model = "";
    return go(c, p);
}

static int provider_pt_run(struct sy_call *c)
{
    struct sy_req *r = c->req;
    size_t sub = 0;
    const struct sy_ptendpoint *e = sy_ptfwd_endpoint(c->g, r->path, &sub);
    const struct sy_ptprov *pv = e ? NULL : sy_pt_find(r->path.p, r->path.n, &sub);
    if (!e && !pv)
        return refuse(c, 404, "invalid_request_error", "Route not found");
    if (!sy_pt_subpath_safe(r->path.p + sub, r->path.n - sub))
        return refuse(c, 400, "invalid_request_error",
                      "the pass-through path has a '.' or '..' segment (also percent-encoded) or a control byte");
    for (size_t i = 0; i < r->query.n; i++)
        if ((unsigned char)r->query.p[i] < 0x20 || r->query.p[i] == '#')
            return refuse(c, 400, "invalid_request_error", "the pass-through query has a control byte");
    if (route_allowed(c, e != NULL) != SY_OK)
        return SY_DONE;
    if (c->auth.key || c->auth.eu) {
        struct sy_check_err ce;
        memset(&ce, 0, sizeof ce);
        if (sy_keys_check_budgets(c->auth.key, c->auth.eu, NULL, &ce) != 0)
            return sy_call_refuse(c, &ce);
    }
    struct pt *p = sy_call_slot_new(c, pt_slot, sizeof *p);
    if (!p)
        return refuse(c, 500, "None", "out of memory");
    memset(p, 0, sizeof *p);
    sy_buf_init(&p->hdr, 64 << 10);
    sy_arena_defer(&r->arena, free_pt, p);
    p->prov = pv;
    p->f.method = r->head ? "HEAD" : method_name(r->method); /* HEAD arrives as GET (http/server.h) */
    p->st.route = dupn(c, r->path.p, r->path.n);
    return e ? endpoint_run(c, p, e, sub) : provider_run(c, p, sub);
}

/* The call ended: a spend row and the key's spend, when the answer carried usage. */
static void provider_pt_finish(struct sy_call *c, int status)
{
    struct pt *p = sy_call_slot(c, pt_slot);
    if (!p || !c->pass.pt || !c->g->db || !c->usage.have_usage)
        return;
    struct sy_usage u = {0};
    u.prompt_tokens = c->usage.prompt_tokens;
    u.completion_tokens = c->usage.completion_tokens;
    u.cached_tokens = c->usage.cached_tokens;
    u.cache_creation_tokens = c->usage.cache_write_tokens;
    u.reasoning_tokens = c->usage.reasoning_tokens;
    double cost = p->st.priced ? sy_cost(&p->st.price, &u) : 0;
    c->usage.cost = cost;
    c->usage.cost_known = p->st.priced;
    struct sy_spend_rec rec;
    memset(&rec, 0, sizeof rec);
    rec.request_id = c->call_id;
    rec.call_type = "pass_through_endpoint";
    rec.status = status < 400 ? "success" : "failure";
    rec.api_key = c->auth.hashed_key ? c->auth.hashed_key : "";
    const struct sy_keyinfo *k = c->auth.key;
    if (k) {
        rec.key_alias = k->key_alias;
        rec.user_id = k->user_id;
        rec.team_id = k->team_id;
        rec.org_id = k->org_id;
        rec.has_entity[SY_ENT_KEY] = 1;
        rec.has_entity[SY_ENT_USER] = k->user_id != NULL;
        rec.has_entity[SY_ENT_TEAM] = k->team_id != NULL;
        rec.has_entity[SY_ENT_MEMBER] = k->team_id && k->user_id && k->member;
        rec.has_entity[SY_ENT_ORG] = k->org_id != NULL;
    }
    rec.model = p->st.model ? p->st.model : "";
    rec.model_id = p->d && p->d->d->id ? p->d->d->id : "";
    rec.model_group = p->d && p->d->d->model_name ? p->d->d->model_name : "";
    rec.custom_llm_provider = p->st.provider ? p->st.provider : "";
    rec.api_base = p->st.api_base ? p->st.api_base : "";
    struct sy_buf mb;
    sy_buf_init(&mb, 4096);
    SY_BUF_LIT(&mb, "{\"user_api_key_request_route\": \"");
    sy_buf_json_escape(&mb, p->st.route ? p->st.route : "", p->st.route ? strlen(p->st.route) : 0);
    SY_BUF_LIT(&mb, "\"}");
    rec.metadata = sy_buf_failed(&mb) ? NULL : dupn(c, mb.p, mb.len);
    sy_buf_free(&mb);
    rec.spend = cost;
    rec.usage = u;
    rec.usage_source = "provider";
    rec.stream_cut = status == 499;
    double now = sy_wall_now();
    double wall = (double)(sy_now_ns() - c->req->t_start_ns) / 1e9;
    rec.start_s = now - wall;
    rec.end_s = now;
    rec.completion_start_s =
        c->up.t_up_first ? rec.start_s + (double)(c->up.t_up_first - c->req->t_start_ns) / 1e9 : now;
    sy_spend_record(&rec);
    if (cost > 0 && c->auth.key)
        sy_keys_add_spend(c->auth.key, c->auth.eu, rec.model, cost);
}

const struct sy_stage sy_stage_provider_pt = {
    .name = "provider_pt",
    .routes = SY_RKB(SY_RK_PROVIDER) | SY_RKB(SY_RK_PROVIDER_OPEN),
    .run = provider_pt_run,
    .finish = provider_pt_finish,
    .slot = &pt_slot,
};
