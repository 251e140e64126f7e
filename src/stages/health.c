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
 * by the deployment's timeout capped at HEALTH_TIMEOUT_CAP_S (60 s, LiteLLM's
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
 * finds its round through a per-thread list of live request rounds (sy_call
 * has no slot for stage data).
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
#include "router/health.h"

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
#include "providers/adapter.h"
#include "http/reply.h"
#include "http/server.h"
#include "upstream/client.h"

#define HEALTH_TIMEOUT_CAP_S 60.0        /* LiteLLM's HEALTH_CHECK_TIMEOUT_SECONDS */
#define HEALTH_CONNECT_CAP_S 10.0        /* as the proxy: connect within min(timeout, 10 s) */
#define OK_BODY_MAX          (1u << 20)  /* a 2xx body is checked to be JSON up to this size */
#define ERR_BODY_MAX         (64u << 10) /* an error body is read up to this size */
#define HDR_VAL_MAX          64
#define BG_TICK_MAX_MS       1000 /* a reload is noticed within this */
#define BG_TICK_MIN_MS       50
#define OUT_MAX              (256u << 20) /* response body cap */

enum hmode { HM_CHAT, HM_COMPLETION, HM_EMBEDDING, HM_NONE };

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

/* A /health filter from the query string (either may be NULL). */
struct hfilter {
    const char *model;
    const char *model_id;
};

/* What a filter looks at, for deployments and stored endpoints alike. */
struct hkey {
    const char *id, *name, *model;
};

static _Thread_local struct hrun *live_runs;

/* ---- process-wide store of the latest background results ------------------ */

struct hentry {
    char *id, *name, *model;
    int ok;
    char *json; /* the endpoint object */
    size_t json_len;
};

static pthread_mutex_t store_mu = PTHREAD_MUTEX_INITIALIZER;
static struct hentry *store_e;
static size_t store_n;
static int store_have;

static void entries_free(struct hentry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(e[i].id);
        free(e[i].name);
        free(e[i].model);
        free(e[i].json);
    }
    free(e);
}

/* Replace the stored results by e[0..n) (taken over). */
static void store_replace(struct hentry *e, size_t n)
{
    pthread_mutex_lock(&store_mu);
    struct hentry *old = store_e;
    size_t on = store_n;
    store_e = e;
    store_n = n;
    store_have = 1;
    pthread_mutex_unlock(&store_mu);
    entries_free(old, on);
}

static void store_clear(void)
{
    pthread_mutex_lock(&store_mu);
    struct hentry *old = store_e;
    size_t on = store_n;
    store_e = NULL;
    store_n = 0;
    store_have = 0;
    pthread_mutex_unlock(&store_mu);
    entries_free(old, on);
}

/* ---- small helpers --------------------------------------------------------- */

static char *xstrdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int str_has(const char *hay, const char *needle)
{
    return strstr(hay, needle) != NULL;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Copy s[0..n) to a new string with every byte that is not part of valid
 * UTF-8 replaced by '?' (error texts quote upstream bytes, possibly cut). */
static char *utf8_clean(const char *s, size_t n)
{
    char *o = malloc(n + 1);
    if (!o)
        return NULL;
    size_t i = 0, k = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        int good = len > 0 && i + len <= n && !(len == 2 && c < 0xc2) && !(len == 4 && c > 0xf4);
        for (size_t j = 1; good && j < len; j++)
            good = ((unsigned char)s[i + j] & 0xc0) == 0x80;
        if (good && len == 3) {
            unsigned char c1 = (unsigned char)s[i + 1];
            good = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);
        } else if (good && len == 4) {
            unsigned char c1 = (unsigned char)s[i + 1];
            good = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
        }
        if (!good) {
            o[k++] = '?';
            i++;
            continue;
        }
        memcpy(o + k, s + i, len);
        k += len;
        i += len;
    }
    o[k] = 0;
    return o;
}

static char *fmt_error(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt_error(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *out = NULL;
    if (vasprintf(&out, f, ap) < 0)
        out = NULL;
    va_end(ap);
    if (!out)
        return NULL;
    char *clean = utf8_clean(out, strlen(out));
    free(out);
    return clean;
}


/* LiteLLM's exception text: "litellm.<Class>: <Class>: <Provider>Exception - <message>". */
static char *litellm_error(const struct sy_drt *d, const char *cls, const char *msg)
{
    char pl[64];
    return fmt_error("litellm.%s: %s: %sException - %s", cls, cls, sy_provider_label(d, pl, sizeof pl), msg);
}

static enum hmode mode_of(const struct sy_deployment *d)
{
    const char *m = d->mode;
    if (!m || !*m || strcmp(m, "chat") == 0)
        return HM_CHAT;
    if (strcmp(m, "completion") == 0)
        return HM_COMPLETION;
    if (strcmp(m, "embedding") == 0)
        return HM_EMBEDDING;
    return HM_NONE;
}

/* The deployment's effective health-check timeout in seconds. */
static double probe_timeout(const struct sy_drt *d)
{
    double t = d->timeout_s;
    return t > 0 && t < HEALTH_TIMEOUT_CAP_S ? t : HEALTH_TIMEOUT_CAP_S;
}

/* ---- redaction ------------------------------------------------------------- */

/* A litellm_params key that is (or may carry) a secret, or that LiteLLM never
 * displays: LiteLLM's ILLEGAL_DISPLAY_PARAMS (messages, api_key, prompt, input,
 * vertex_credentials, aws_access_key_id, aws_secret_access_key) and, beyond
 * them, any name containing key, secret, password, passwd, credential, auth,
 * header, cookie, signature or private, or containing "token" but not
 * "tokens" (azure_ad_token, aws_session_token; max_tokens stays). Case-insensitive. */
static int secret_key(const char *k, size_t n)
{
    static const char *const exact[] = {"messages", "prompt", "input"};
    static const char *const parts[] = {"key",  "secret", "password", "passwd",    "credential",
                                        "auth", "header", "cookie",   "signature", "private"};
    char low[128];
    if (n >= sizeof low)
        return 1; /* absurdly long: not shown */
    for (size_t i = 0; i < n; i++)
        low[i] = (char)((k[i] >= 'A' && k[i] <= 'Z') ? k[i] + 32 : k[i]);
    low[n] = 0;
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strcmp(low, exact[i]) == 0)
            return 1;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (str_has(low, parts[i]))
            return 1;
    return str_has(low, "token") && !str_has(low, "tokens");
}

/* Drop secret keys at any depth; 0, or -1 when the value holds a number JSON
 * cannot carry (NaN, Infinity: then the caller shows the text as a string). */
static int redact_json(json_object *o, int depth)
{
    if (depth > 64)
        return -1;
    switch (json_object_get_type(o)) {
    case json_type_double: return isfinite(json_object_get_double(o)) ? 0 : -1;
    case json_type_array:
        for (size_t i = 0, n = json_object_array_length(o); i < n; i++)
            if (redact_json(json_object_array_get_idx(o, i), depth + 1))
                return -1;
        return 0;
    case json_type_object: {
        size_t n = (size_t)json_object_object_length(o), nd = 0;
        const char **del = calloc(n ? n : 1, sizeof *del);
        if (!del)
            return -1;
        json_object_object_foreach(o, key, val)
        {
            if (secret_key(key, strlen(key)))
                del[nd++] = key;
            else if (redact_json(val, depth + 1)) {
                free(del);
                return -1;
            }
        }
        /* keys point into the object: delete one by one, copying the name first */
        for (size_t i = 0; i < nd; i++) {
            char *name = strdup(del[i]);
            if (name) {
                json_object_object_del(o, name);
                free(name);
            }
        }
        free(del);
        return 0;
    }
    default: return 0;
    }
}

/* v with a URL's "user:password@" replaced by "****@" (an api_base may carry
 * credentials); malloc'd, NULL when out of memory. */
static char *mask_userinfo(const char *v)
{
    const char *s = strstr(v, "://");
    if (!s)
        return strdup(v);
    const char *h = s + 3;
    size_t hl = strcspn(h, "/?#");
    const char *at = memrchr(h, '@', hl);
    if (!at)
        return strdup(v);
    char *out = NULL;
    if (asprintf(&out, "%.*s****%s", (int)(h - v), v, at) < 0)
        out = NULL;
    return out;
}

/* Append the value text v of a litellm_params key as JSON into b: a value the
 * loader wrote as JSON (numbers, booleans, lists, maps) stays JSON, with
 * secret keys removed inside; anything else is a JSON string, a URL's
 * credentials masked. (The loader keeps YAML strings as written, so a quoted
 * "5" shows as 5.) */
static int append_param_value(struct sy_buf *b, const char *v)
{
    size_t n = strlen(v);
    int rc = 0;
    struct json_tokener *tok = json_tokener_new_ex(64);
    json_object *o = NULL;
    if (tok && n) {
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        o = json_tokener_parse_ex(tok, v, (int)n + 1); /* the NUL ends a bare number */
        if (o && (json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != n ||
                  json_object_get_type(o) == json_type_string || redact_json(o, 0) != 0)) {
            json_object_put(o);
            o = NULL;
        }
    }
    if (o) {
        rc = sy_buf_puts(b, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
    } else {
        char *masked = mask_userinfo(v);
        char *clean = masked ? utf8_clean(masked, strlen(masked)) : NULL;
        free(masked);
        rc = SY_BUF_LIT(b, "\"");
        if (clean)
            rc |= sy_buf_json_escape(b, clean, strlen(clean));
        rc |= SY_BUF_LIT(b, "\"");
        free(clean);
    }
    if (tok)
        json_tokener_free(tok);
    return rc;
}

/* The endpoint object of one deployment (see the table at the top). */
static int endpoint_json(struct sy_buf *b, const struct hprobe *p)
{
    const struct sy_deployment *d = p->drt->d;
    const char *key = d->api_key && strlen(d->api_key) >= 4 ? d->api_key : NULL;
    int rc = SY_BUF_LIT(b, "{");
    int first = 1, have_model = 0;
    for (size_t i = 0; i < d->n_params; i++) {
        const struct sy_kv *kv = &d->params[i];
        if (!kv->key || !kv->value || secret_key(kv->key, strlen(kv->key)))
            continue;
        int is_model = strcmp(kv->key, "model") == 0;
        const char *val = is_model && d->health_check_model ? d->health_check_model : kv->value;
        size_t mark = b->len;
        rc |= first ? 0 : SY_BUF_LIT(b, ",");
        rc |= SY_BUF_LIT(b, "\"");
        rc |= sy_buf_json_escape(b, kv->key, strlen(kv->key));
        rc |= SY_BUF_LIT(b, "\":");
        size_t vstart = b->len;
        if (is_model) { /* always a string, even "5" */
            rc |= SY_BUF_LIT(b, "\"");
            rc |= sy_buf_json_escape(b, val, strlen(val));
            rc |= SY_BUF_LIT(b, "\"");
        } else {
            rc |= append_param_value(b, val);
        }
        if (key && b->len >= vstart && memmem(b->p + vstart, b->len - vstart, key, strlen(key))) {
            b->len = mark; /* a value that carries the api key (a URL with ?key=...) is not shown */
            b->p[b->len] = 0;
            continue;
        }
        first = 0;
        have_model |= is_model;
    }
    if (!have_model && (d->health_check_model || d->model)) {
        const char *m = d->health_check_model ? d->health_check_model : d->model;
        rc |= first ? 0 : SY_BUF_LIT(b, ",");
        rc |= SY_BUF_LIT(b, "\"model\":\"");
        rc |= sy_buf_json_escape(b, m, strlen(m));
        rc |= SY_BUF_LIT(b, "\"");
        first = 0;
    }
    if (p->ok) {
        static const char *const names[3] = {"x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens",
                                             "x-ms-region"};
        const char *vals[3] = {p->rl_req, p->rl_tok, p->region};
        for (int i = 0; i < 3; i++) {
            if (!vals[i][0])
                continue;
            rc |= first ? 0 : SY_BUF_LIT(b, ",");
            rc |= sy_buf_printf(b, "\"%s\":\"", names[i]);
            rc |= sy_buf_json_escape(b, vals[i], strlen(vals[i]));
            rc |= SY_BUF_LIT(b, "\"");
            first = 0;
        }
    } else {
        const char *e = p->error ? p->error : "unknown error";
        rc |= first ? 0 : SY_BUF_LIT(b, ",");
        rc |= SY_BUF_LIT(b, "\"error\":\"");
        rc |= sy_buf_json_escape(b, e, strlen(e));
        rc |= SY_BUF_LIT(b, "\"");
        first = 0;
    }
    if (d->id) {
        rc |= first ? 0 : SY_BUF_LIT(b, ",");
        rc |= SY_BUF_LIT(b, "\"model_id\":\"");
        rc |= sy_buf_json_escape(b, d->id, strlen(d->id));
        rc |= SY_BUF_LIT(b, "\"");
    }
    rc |= SY_BUF_LIT(b, "}");
    return rc;
}

/* ---- selection ------------------------------------------------------------- */

/* Mark sel[i] for the keys f selects (LiteLLM: model_id; else litellm_params.model,
 * falling back to model_name; else all), each id once. Returns how many. */
static size_t filter_keys(const struct hfilter *f, const struct hkey *k, size_t n, unsigned char *sel)
{
    size_t cnt = 0;
    for (size_t i = 0; i < n; i++) {
        if (f->model_id)
            sel[i] = k[i].id && strcmp(k[i].id, f->model_id) == 0;
        else if (f->model)
            sel[i] = k[i].model && strcmp(k[i].model, f->model) == 0;
        else
            sel[i] = 1;
        cnt += sel[i];
    }
    if (!cnt && f->model && !f->model_id)
        for (size_t i = 0; i < n; i++)
            sel[i] = k[i].name && strcmp(k[i].name, f->model) == 0;
    cnt = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; sel[i] && k[i].id && j < i; j++)
            if (sel[j] && k[j].id && strcmp(k[i].id, k[j].id) == 0)
                sel[i] = 0;
        cnt += sel[i];
    }
    return cnt;
}

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
        p->error = fmt_error("health check cancelled: the worker is shutting down");
        return;
    }
    p->mark = 1;
    if (err == SY_EUPTIMEOUT) {
        char m[96];
        snprintf(m, sizeof m, "Request timed out after %.1f seconds.", probe_timeout(d));
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
static char *probe_body(struct hrun *run, const struct sy_drt *drt, enum hmode mode, size_t *len)
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
    case HM_CHAT:
        rc |=
            sy_buf_printf(&b, ",\"messages\":[{\"role\":\"user\",\"content\":\"%s\"}],\"%s\":1}",
                          msgs[sy_rand(run->w) & 1], reasoning_model(drt, um) ? "max_completion_tokens" : "max_tokens");
        break;
    case HM_COMPLETION: rc |= SY_BUF_LIT(&b, ",\"prompt\":\"test from litellm\",\"max_tokens\":1}"); break;
    default: rc |= SY_BUF_LIT(&b, ",\"input\":[\"test from litellm\"]}"); break;
    }
    if (rc) {
        sy_buf_free(&b);
        return NULL;
    }
    *len = b.len;
    return b.p;
}

/* Why a deployment without a provider cannot be checked. */
static char *unsupported_reason(const struct sy_drt *drt)
{
    const struct sy_deployment *d = drt->d;
    if (!d->model)
        return fmt_error("switchyard: deployment of '%s' has no litellm_params.model; no health check call was made",
                         d->model_name ? d->model_name : "?");
    if (d->upstream_model && strchr(d->upstream_model, '*'))
        return fmt_error("switchyard: wildcard model '%s' is not supported yet; no health check call was made",
                         d->model);
    if (d->provider && sy_adapter_find(d->provider))
        return fmt_error("switchyard: deployment '%s' (model '%s') is not usable: its %s settings are incomplete "
                         "(see the startup warning); no health check call was made",
                         d->model_name ? d->model_name : "?", d->model, d->provider);
    if (d->provider && sy_provider_find(d->provider))
        return fmt_error("switchyard: provider '%s' (model '%s') needs api_base; no health check call was made",
                         d->provider, d->model);
    return fmt_error("switchyard: provider '%s' (model '%s') is %s; no health check call was made",
                     d->provider ? d->provider : "?", d->model,
                     d->provider && sy_provider_known_unsupported(d->provider) ? "not supported yet" : "unknown");
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
        p->error = unsupported_reason(drt);
        p->mark = 1;
        return 0;
    }
    if (drt->prov->flags & SY_PRESET_MOCK) { /* answered in-process: always up */
        p->ok = 1;
        p->mark = 1;
        return 0;
    }
    enum hmode mode = mode_of(d);
    if (mode == HM_NONE) {
        p->error = fmt_error("Mode %s not supported by switchyard's health check (chat, completion and "
                             "embedding are); no health check call was made",
                             d->mode);
        return 0;
    }
    if (!run->w->upool) {
        p->error = fmt_error("health check not run: the worker is shutting down");
        return 0;
    }
    size_t len = 0;
    p->body = probe_body(run, drt, mode, &len);
    if (!p->body) {
        p->error = fmt_error("health check not run: out of memory");
        return 0;
    }
    double t = probe_timeout(drt);
    int kind = mode == HM_CHAT ? 0 : mode == HM_COMPLETION ? 1 : 2;
    struct sy_ureq_opts o = {0};
    o.url = drt->url[kind];
    o.headers = drt->headers;
    o.headers_len = drt->headers_len;
    if (drt->ad) { /* a translating provider: its adapter builds the call */
        char err[600] = "", *xb = NULL;
        size_t xl = 0, hl = 0;
        if (mode == HM_COMPLETION ||
            sy_xlate_probe(run->w, drt, mode != HM_CHAT, p->body, len, &p->xurl, &p->xhdrs, &hl, &xb, &xl, err,
                           sizeof err) != 0) {
            p->error = mode == HM_COMPLETION ? fmt_error("text completions are not supported by provider %s",
                                                         drt->prov->name)
                                             : fmt_error("health check not run: %s", err);
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
static struct hrun *run_new(struct sy_worker *w, struct sy_gwconf *g, const struct hfilter *f, int *notfound)
{
    *notfound = 0;
    struct hrun *run = calloc(1, sizeof *run);
    struct hkey *k = calloc(g->ndrts ? g->ndrts : 1, sizeof *k);
    unsigned char *sel = calloc(g->ndrts ? g->ndrts : 1, 1);
    if (!run || !k || !sel) {
        free(run);
        free(k);
        free(sel);
        return NULL;
    }
    for (size_t i = 0; i < g->ndrts; i++)
        k[i] = (struct hkey){g->drts[i].d->id, g->drts[i].d->model_name, g->drts[i].d->model};
    size_t n = filter_keys(f, k, g->ndrts, sel);
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
static int reply_stored(struct sy_call *c, const struct hfilter *f)
{
    struct sy_buf b;
    sy_buf_init(&b, OUT_MAX);
    int rc = 0, notfound = 0;
    pthread_mutex_lock(&store_mu);
    if (!store_have) {
        pthread_mutex_unlock(&store_mu);
        sy_buf_free(&b);
        return -1;
    }
    struct hkey *k = calloc(store_n ? store_n : 1, sizeof *k);
    unsigned char *sel = calloc(store_n ? store_n : 1, 1);
    if (!k || !sel) {
        rc = -1;
    } else {
        for (size_t i = 0; i < store_n; i++)
            k[i] = (struct hkey){store_e[i].id, store_e[i].name, store_e[i].model};
        size_t n = filter_keys(f, k, store_n, sel);
        notfound = f->model_id && n == 0;
        size_t cnt[2] = {0, 0};
        rc |= SY_BUF_LIT(&b, "{\"healthy_endpoints\":[");
        for (int want = 1; want >= 0; want--) {
            if (want == 0)
                rc |= SY_BUF_LIT(&b, "],\"unhealthy_endpoints\":[");
            for (size_t i = 0; i < store_n; i++) {
                if (!sel[i] || store_e[i].ok != want)
                    continue;
                if (cnt[want]++)
                    rc |= SY_BUF_LIT(&b, ",");
                rc |= sy_buf_append(&b, store_e[i].json, store_e[i].json_len);
            }
        }
        rc |= sy_buf_printf(&b, "],\"healthy_count\":%zu,\"unhealthy_count\":%zu}", cnt[1], cnt[0]);
    }
    pthread_mutex_unlock(&store_mu);
    free(k);
    free(sel);
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
    struct hfilter f = {query_param(c->req, "model"), query_param(c->req, "model_id")};
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
        struct hentry *e = calloc(run->n ? run->n : 1, sizeof *e);
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
            e[n] = (struct hentry){xstrdup(d->id), xstrdup(d->model_name), xstrdup(d->model), p->ok, b.p, b.len};
            n++;
            bad += !p->ok;
        }
        if (oom) {
            entries_free(e, n);
            sy_warn("health: background round results dropped (out of memory)");
        } else {
            store_replace(e, n);
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
            store_clear(); /* turned off by a reload: never serve stale results later */
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
    struct hfilter all = {NULL, NULL};
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
};
