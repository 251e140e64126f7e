/* generic_api.c - the generic webhook sink (LiteLLM's GenericAPILogger,
 * litellm/integrations/generic_api/generic_api_callback.py).
 *
 * Settings, as LiteLLM reads them (later ones win, header by header):
 *   endpoint   callback_settings.<name>.endpoint (or a key's/team's
 *              callback_vars.endpoint), else env GENERIC_LOGGER_ENDPOINT;
 *              required (LiteLLM raises at start without it)
 *   headers    Content-Type: application/json, then env GENERIC_LOGGER_HEADERS
 *              ("k1=v1,k2=v2", each split at its first '=', trimmed), then the
 *              settings' headers object
 *   event_types  ["llm_api_success", "llm_api_failure"] (default: both)
 *   log_format   "json_array" (default): one POST of a JSON array of
 *              StandardLoggingPayload objects per batch; "ndjson": the objects
 *              one per line; "single": one POST per object
 *   batch_size   records per POST (LiteLLM's CustomBatchLogger batch_size;
 *              default and at most 512)
 * A named callback (callbacks: ["my_hook"] with callback_settings.my_hook.
 * callback_type: generic_api) reaches here with that entry as vars (engine.c).
 *
 * Header names must be HTTP tokens and values may not hold CR or LF: a header
 * that is not is left out (and said once), so no setting can inject a line.
 * The verdict is the engine's default (2xx sent; 408, 429, 5xx, no answer
 * retried; other statuses dropped); LiteLLM sends once and forgets.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/log.h"
#include "logging/logging.h"
#include "providers/jdom.h"

#define MAX_BATCH   512
#define MAX_HEADERS 64

enum { FMT_ARRAY, FMT_NDJSON, FMT_SINGLE };

struct gapi {
    char *endpoint;
    char *headers; /* raw header lines */
    size_t headers_len;
    int on_success, on_failure;
    int fmt;
    size_t batch;
};

struct hdrs {
    char *k[MAX_HEADERS], *v[MAX_HEADERS];
    size_t n;
};

static void hdrs_free(struct hdrs *h)
{
    for (size_t i = 0; i < h->n; i++) {
        free(h->k[i]);
        free(h->v[i]);
    }
    h->n = 0;
}

static int token_ok(const char *s, size_t n)
{
    if (!n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(isalnum(c) || strchr("!#$%&'*+-.^_`|~", c)))
            return 0;
    }
    return 1;
}

static int value_ok(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\r' || s[i] == '\n' || s[i] == 0)
            return 0;
    return 1;
}

/* Set k: v (replacing an equal name, as a Python dict update). */
static void hdr_set(struct hdrs *h, const char *k, size_t kn, const char *v, size_t vn)
{
    if (!token_ok(k, kn) || !value_ok(v, vn)) {
        char shown[65]; /* the name, printable characters only (no log line injection) */
        size_t n = 0;
        for (size_t i = 0; i < kn && n < sizeof shown - 1; i++)
            shown[n++] = (unsigned char)k[i] >= 0x20 && (unsigned char)k[i] < 0x7f ? k[i] : '?';
        shown[n] = 0;
        sy_warn("generic_api: header '%s' left out (not a valid header name or value)", shown);
        return;
    }
    for (size_t i = 0; i < h->n; i++)
        if (strlen(h->k[i]) == kn && !memcmp(h->k[i], k, kn)) {
            char *nv = strndup(v, vn);
            if (nv) {
                free(h->v[i]);
                h->v[i] = nv;
            }
            return;
        }
    if (h->n == MAX_HEADERS)
        return;
    h->k[h->n] = strndup(k, kn);
    h->v[h->n] = strndup(v, vn);
    if (h->k[h->n] && h->v[h->n])
        h->n++;
    else {
        free(h->k[h->n]);
        free(h->v[h->n]);
    }
}

static void trim(const char **s, size_t *n)
{
    while (*n && isspace((unsigned char)**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n && isspace((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

/* GENERIC_LOGGER_HEADERS: "k1=v1,k2=v2"; an item without '=' is skipped. */
static void env_headers(struct hdrs *h, const char *env)
{
    const char *p = env;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        if (eq) {
            const char *k = p, *v = eq + 1;
            size_t kn = (size_t)(eq - p), vn = n - kn - 1;
            trim(&k, &kn);
            trim(&v, &vn);
            hdr_set(h, k, kn, v, vn);
        }
        p += n;
        if (*p == ',')
            p++;
    }
}

static void gapi_close(void *inst)
{
    struct gapi *g = inst;
    if (!g)
        return;
    free(g->endpoint);
    free(g->headers);
    free(g);
}

static void *gapi_open(const struct sy_logconf *lc, const char *vars, char *err, size_t errlen)
{
    (void)lc;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int have = 0;
    if (vars && *vars) {
        if (sy_jdom_parse(&d, vars, strlen(vars), &a, 0) != 0 || sy_jdom_type(&d, 0) != 'o') {
            snprintf(err, errlen, "generic_api settings are not a JSON object");
            sy_arena_free(&a);
            return NULL;
        }
        have = 1;
    }
    struct gapi *g = calloc(1, sizeof *g);
    struct hdrs h = {0};
    if (!g)
        goto oom;
    g->on_success = g->on_failure = 1;
    g->fmt = FMT_ARRAY;
    g->batch = MAX_BATCH;
    const char *ep = have ? sy_jdom_str(&d, sy_jdom_top(&d, "endpoint"), &a, NULL) : NULL;
    if (!ep || !*ep)
        ep = getenv("GENERIC_LOGGER_ENDPOINT");
    if (!ep || !*ep) {
        snprintf(err, errlen,
                 "endpoint not set for GenericAPILogger, GENERIC_LOGGER_ENDPOINT not found in environment variables");
        goto fail;
    }
    if (strncmp(ep, "http://", 7) && strncmp(ep, "https://", 8)) {
        snprintf(err, errlen, "generic_api endpoint must be an http:// or https:// URL");
        goto fail;
    }
    if (!(g->endpoint = strdup(ep)))
        goto oom;
    hdr_set(&h, "Content-Type", 12, "application/json", 16);
    const char *env = getenv("GENERIC_LOGGER_HEADERS");
    if (env)
        env_headers(&h, env);
    if (have) {
        uint32_t ho = sy_jdom_top(&d, "headers");
        if (sy_jdom_kind(&d, ho) == 'o')
            for (uint32_t k = sy_jdom_first(&d, ho); k; k = sy_jdom_next_key(&d, k)) {
                size_t kn, vn;
                const char *ks = sy_jdom_str(&d, k, &a, &kn);
                uint32_t v = sy_jdom_val(k);
                const char *vs = sy_jdom_type(&d, v) == 's' ? sy_jdom_str(&d, v, &a, &vn) : NULL;
                if (!vs && sy_jdom_type(&d, v) != 'z' && sy_jdom_type(&d, v) != 'o' && sy_jdom_type(&d, v) != 'a')
                    vs = sy_jdom_raw(&d, v, &vn); /* a number or a boolean, as its text */
                if (ks && vs)
                    hdr_set(&h, ks, kn, vs, vn);
            }
        uint32_t et = sy_jdom_top(&d, "event_types");
        if (sy_jdom_kind(&d, et) == 'a') {
            g->on_success = g->on_failure = 0;
            for (uint32_t e = sy_jdom_first(&d, et); e; e = sy_jdom_next(&d, e)) {
                if (sy_jdom_str_eq(&d, e, "llm_api_success"))
                    g->on_success = 1;
                else if (sy_jdom_str_eq(&d, e, "llm_api_failure"))
                    g->on_failure = 1;
            }
        }
        uint32_t lf = sy_jdom_top(&d, "log_format");
        if (lf) {
            if (sy_jdom_str_eq(&d, lf, "json_array"))
                g->fmt = FMT_ARRAY;
            else if (sy_jdom_str_eq(&d, lf, "ndjson"))
                g->fmt = FMT_NDJSON;
            else if (sy_jdom_str_eq(&d, lf, "single"))
                g->fmt = FMT_SINGLE;
            else {
                size_t n;
                const char *raw = sy_jdom_raw(&d, lf, &n);
                snprintf(err, errlen, "Invalid log_format: %.*s. Must be one of: 'json_array', 'ndjson', 'single'",
                         (int)(n > 64 ? 64 : n), raw);
                goto fail;
            }
        }
        int64_t bs;
        if (sy_jdom_i64(&d, sy_jdom_top(&d, "batch_size"), &bs) && bs >= 1)
            g->batch = bs < MAX_BATCH ? (size_t)bs : MAX_BATCH;
    }
    if (g->fmt == FMT_SINGLE && g->batch > SY_SINK_MAX_REQS)
        g->batch = SY_SINK_MAX_REQS;
    struct sy_buf hb;
    sy_buf_init(&hb, 1 << 20);
    for (size_t i = 0; i < h.n; i++)
        sy_buf_printf(&hb, "%s: %s\r\n", h.k[i], h.v[i]);
    if (sy_buf_failed(&hb)) {
        sy_buf_free(&hb);
        goto oom;
    }
    g->headers = hb.p;
    g->headers_len = hb.len;
    hdrs_free(&h);
    sy_arena_free(&a);
    return g;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    hdrs_free(&h);
    gapi_close(g);
    sy_arena_free(&a);
    return NULL;
}

static size_t gapi_inst_max_batch(void *inst)
{
    return ((struct gapi *)inst)->batch;
}

static int new_req(struct gapi *g, struct sy_sink_req *r)
{
    r->method = "POST";
    r->url = strdup(g->endpoint);
    sy_buf_init(&r->headers, 1 << 20);
    sy_buf_init(&r->body, (size_t)1 << 30);
    if (!r->url || sy_buf_append(&r->headers, g->headers ? g->headers : "", g->headers_len))
        return -1;
    return 0;
}

static int gapi_encode(void *inst, struct sy_logrec *const *recs, size_t n, struct sy_sink_req *out, size_t *nout)
{
    struct gapi *g = inst;
    *nout = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int fail = (recs[i]->flags & SY_LOGREC_FAILURE) != 0;
        if (fail ? !g->on_failure : !g->on_success)
            continue;
        size_t pl;
        const char *p = sy_log_payload(recs[i], &pl);
        if (!p)
            continue; /* out of memory building it: this record only */
        if (g->fmt == FMT_SINGLE || *nout == 0) {
            if (*nout == SY_SINK_MAX_REQS)
                break;
            if (new_req(g, &out[*nout])) {
                sy_sink_req_free(&out[*nout]);
                goto fail;
            }
            (*nout)++;
            k = 0;
        }
        struct sy_buf *b = &out[*nout - 1].body;
        if (g->fmt == FMT_ARRAY)
            sy_buf_append(b, k ? "," : "[", 1);
        else if (g->fmt == FMT_NDJSON && k)
            sy_buf_append(b, "\n", 1);
        sy_buf_append(b, p, pl);
        k++;
    }
    if (g->fmt == FMT_ARRAY && *nout)
        sy_buf_append(&out[0].body, "]", 1);
    for (size_t i = 0; i < *nout; i++)
        if (sy_buf_failed(&out[i].body))
            goto fail;
    return 0;
fail:
    for (size_t i = 0; i < *nout; i++)
        sy_sink_req_free(&out[i]);
    *nout = 0;
    return -1;
}

const struct sy_sink_ops sy_sink_generic_api = {
    .name = "generic_api",
    .max_batch = MAX_BATCH,
    .open = gapi_open,
    .close = gapi_close,
    .encode = gapi_encode,
    .verdict = NULL,
    .inst_max_batch = gapi_inst_max_batch,
};
