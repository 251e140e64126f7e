/* count.c - the providers' input-token counters: see count.h for the table of
 * counters, their requests and answers.
 *
 * Everything here writes into the struct sy_xout the stage hands in, as an
 * adapter's encode does, and reads the deployment's settings (sy_pconf), the
 * time and the OAuth token from the sy_xctx: no I/O, no clock, no globals.
 */
#include "providers/count.h"

#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "providers/gemini.h"
#include "providers/oai.h"
#include "providers/sigv4.h"

#define ANTHROPIC_BASE    "https://api.anthropic.com"
#define ANTHROPIC_VERSION "2023-06-01"
#define BEDROCK_VERSION   "bedrock-2023-05-31"

/* ---- which counter --------------------------------------------------------- */

static int has_ci(const char *s, const char *lit)
{
    return s && strcasestr(s, lit) != NULL;
}

/* An OpenAI model, whatever the provider serving it: the built-in tokenizer
 * is its own (o200k / cl100k, tokenizer.h). */
static int openai_family(const char *model)
{
    const char *m = model ? strrchr(model, '/') : NULL;
    m = m ? m + 1 : model;
    if (!m)
        return 0;
    if (!strncasecmp(m, "gpt-", 4) || !strncasecmp(m, "chatgpt-", 8) || !strncasecmp(m, "text-embedding-", 15))
        return 1;
    return (m[0] == 'o' || m[0] == 'O') && (m[1] == '1' || m[1] == '3' || m[1] == '4') && (m[2] == 0 || m[2] == '-');
}

enum sy_count_kind sy_count_kind_of(const char *provider, const char *model)
{
    const char *p = provider ? provider : "";
    if (!strcmp(p, "anthropic"))
        return SY_COUNT_ANTHROPIC;
    if (!strcmp(p, "bedrock"))
        return has_ci(model, "anthropic.") || has_ci(model, "claude") ? SY_COUNT_BEDROCK : SY_COUNT_ESTIMATE;
    if (!strcmp(p, "vertex_ai"))
        return has_ci(model, "claude")   ? SY_COUNT_VERTEX_CLAUDE
               : has_ci(model, "gemini") ? SY_COUNT_VERTEX_GEMINI
                                         : SY_COUNT_ESTIMATE;
    if (!strcmp(p, "gemini"))
        return SY_COUNT_GEMINI;
    if (!strcmp(p, "openai") || !strcmp(p, "azure") || openai_family(model))
        return SY_COUNT_EXACT;
    return SY_COUNT_ESTIMATE;
}

const char *sy_count_label(enum sy_count_kind kind)
{
    switch (kind) {
    case SY_COUNT_ESTIMATE: return "estimate";
    case SY_COUNT_EXACT: return "exact";
    default: return "provider";
    }
}

/* ---- helpers ----------------------------------------------------------------- */

static int fail(struct sy_xerr *e, int rc, int status, const char *msg)
{
    sy_oai_err(e, status, msg, strlen(msg));
    return rc;
}

/* Members of an Anthropic request that the counters refuse as extra inputs
 * and that do not change the input. */
static int generation_only(const char *k, size_t n)
{
    static const char *const names[] = {"model", "max_tokens",     "stream",   "temperature", "top_p",
                                        "top_k", "stop_sequences", "metadata", "service_tier"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == n && !memcmp(names[i], k, n))
            return 1;
    return 0;
}

/* The members of req but model and the generation-only ones, after the
 * object w has open. */
static void copy_members(struct sy_jw *w, const struct sy_jdoc *req, struct sy_arena *a, int keep_max_tokens)
{
    for (uint32_t k = sy_jdom_first(req, 0); k; k = sy_jdom_next_key(req, k)) {
        size_t kl;
        const char *ks = sy_jdom_str(req, k, a, &kl);
        if (!ks)
            continue;
        int is_max = kl == 10 && !memcmp(ks, "max_tokens", 10);
        if (generation_only(ks, kl) && !(keep_max_tokens && is_max))
            continue;
        sy_jw_keyn(w, ks, kl);
        sy_jw_node(w, req, sy_jdom_val(k));
    }
}

/* The value of header line `name` in lines[0..n) ("Name: v\r\n"...), trimmed; NULL when absent. */
static const char *fwd_value(const char *lines, size_t n, const char *name, size_t *vl)
{
    size_t nl = strlen(name);
    const char *p = lines, *end = lines ? lines + n : NULL;
    while (p && p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *le = eol ? eol : end;
        size_t ll = (size_t)(le - p);
        if (ll && p[ll - 1] == '\r')
            ll--;
        if (ll > nl && p[nl] == ':' && !strncasecmp(p, name, nl)) {
            const char *v = p + nl + 1;
            size_t l = ll - nl - 1;
            while (l && (*v == ' ' || *v == '\t'))
                v++, l--;
            while (l && (v[l - 1] == ' ' || v[l - 1] == '\t'))
                l--;
            *vl = l;
            return v;
        }
        p = eol ? eol + 1 : end;
    }
    return NULL;
}

/* A header value safe on one line (no control characters). */
static int line_safe(const char *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x20 && v[i] != '\t')
            return 0;
    return 1;
}

/* ---- Anthropic --------------------------------------------------------------- */

int sy_count_anthropic(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o)
{
    const struct sy_pconf *pc = x->pc;
    const char *base = pc && pc->base ? pc->base : ANTHROPIC_BASE;
    size_t bl = strlen(base);
    int rc;
    if (bl >= 12 && !strcmp(base + bl - 12, "/v1/messages"))
        rc = sy_buf_printf(&o->url, "%s/count_tokens", base);
    else if (bl >= 3 && !strcmp(base + bl - 3, "/v1"))
        rc = sy_buf_printf(&o->url, "%s/messages/count_tokens", base);
    else
        rc = sy_buf_printf(&o->url, "%s/v1/messages/count_tokens", base);
    rc |= SY_BUF_LIT(&o->headers, "Content-Type: application/json\r\n");
    if (pc && pc->key && *pc->key)
        rc |= sy_buf_printf(&o->headers, "x-api-key: %s\r\n", pc->key);
    size_t vl = 0;
    const char *v = fwd_value(x->fwd_headers, x->fwd_headers_len, "anthropic-version", &vl);
    if (v && vl && line_safe(v, vl))
        rc |= sy_buf_printf(&o->headers, "anthropic-version: %.*s\r\n", (int)vl, v);
    else
        rc |= sy_buf_printf(&o->headers, "anthropic-version: %s\r\n",
                            pc && pc->version ? pc->version : ANTHROPIC_VERSION);
    v = fwd_value(x->fwd_headers, x->fwd_headers_len, "anthropic-beta", &vl);
    if (v && vl && line_safe(v, vl))
        rc |= sy_buf_printf(&o->headers, "anthropic-beta: %.*s\r\n", (int)vl, v);
    struct sy_jw w;
    sy_jw_init(&w, &o->body);
    sy_jw_obj(&w);
    sy_jw_key(&w, "model");
    sy_jw_cstr(&w, x->model ? x->model : "");
    copy_members(&w, req, x->arena, 0);
    sy_jw_end(&w);
    if (rc || w.err)
        return fail(&o->err, SY_ENOSPC, 413, "count_tokens: request too large for the upstream buffer");
    return 0;
}

/* ---- Vertex AI, Claude ----------------------------------------------------------- */

int sy_count_vertex_claude(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o)
{
    const struct sy_pconf *pc = x->pc;
    if (!pc || !pc->base || sy__gemini_base_has_path(pc->base))
        return fail(&o->err, SY_EINVAL, 400, "count_tokens: the deployment's api_base names a path of its own");
    if (!x->access_token || !*x->access_token)
        return fail(&o->err, SY_EAUTH, 401, "count_tokens: no OAuth2 access token");
    int rc =
        sy_buf_printf(&o->url, "%s/v1/projects/%s/locations/%s/publishers/anthropic/models/count-tokens:rawPredict",
                      pc->base, pc->project ? pc->project : "", pc->region ? pc->region : "us-central1");
    rc |= sy_buf_printf(&o->headers, "Content-Type: application/json\r\nAuthorization: Bearer %s\r\n", x->access_token);
    struct sy_jw w;
    sy_jw_init(&w, &o->body);
    sy_jw_obj(&w);
    sy_jw_key(&w, "model");
    sy_jw_cstr(&w, x->model ? x->model : "");
    copy_members(&w, req, x->arena, 0);
    sy_jw_end(&w);
    if (rc || w.err)
        return fail(&o->err, SY_ENOSPC, 413, "count_tokens: request too large for the upstream buffer");
    return 0;
}

/* ---- Bedrock ------------------------------------------------------------------- */

const char *sy_count_bedrock_model(const char *model)
{
    static const char *const routes[] = {"converse/", "invoke/"};
    static const char *const geo[] = {"us.", "eu.", "apac.", "global.", "jp.", "au.", "us-gov.", "ca."};
    const char *m = model ? model : "";
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (!strncmp(m, routes[i], strlen(routes[i])))
            m += strlen(routes[i]);
    for (size_t i = 0; i < sizeof geo / sizeof geo[0]; i++)
        if (!strncmp(m, geo[i], strlen(geo[i])))
            return m + strlen(geo[i]);
    return m;
}

int sy_count_bedrock(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o)
{
    const struct sy_pconf *pc = x->pc;
    const char *base = pc && pc->base ? pc->base : "";
    const char *auth = strstr(base, "://");
    if (!pc || !auth)
        return fail(&o->err, SY_EINVAL, 500, "count_tokens: bedrock: no endpoint configured");
    if (!pc->key && (!pc->access_key || !pc->secret_key))
        return fail(&o->err, SY_EAUTH, 401, "count_tokens: bedrock: no AWS credentials");
    auth += 3;
    const char *pfx = strchr(auth, '/');
    size_t auth_len = pfx ? (size_t)(pfx - auth) : strlen(auth);
    char host[512];
    if (auth_len >= sizeof host)
        return fail(&o->err, SY_EINVAL, 400, "count_tokens: bedrock: endpoint host too long");
    memcpy(host, auth, auth_len);
    host[auth_len] = 0;

    /* the InvokeModel body, then base64 of it */
    struct sy_buf inv;
    sy_buf_init(&inv, o->body.cap ? o->body.cap / 2 : 64u << 20);
    struct sy_jw w;
    sy_jw_init(&w, &inv);
    sy_jw_obj(&w);
    if (!sy_jdom_top(req, "anthropic_version")) {
        sy_jw_key(&w, "anthropic_version");
        sy_jw_cstr(&w, BEDROCK_VERSION);
    }
    uint32_t mt = sy_jdom_top(req, "max_tokens");
    if (!mt) {
        sy_jw_key(&w, "max_tokens");
        sy_jw_int(&w, SY_COUNT_MAX_OUT);
    }
    copy_members(&w, req, x->arena, 1);
    sy_jw_end(&w);
    if (w.err) {
        sy_buf_free(&inv);
        return fail(&o->err, SY_ENOSPC, 413, "count_tokens: request too large for the upstream buffer");
    }
    size_t b64n = 4 * ((inv.len + 2) / 3);
    unsigned char *b64 = malloc(b64n + 1);
    if (!b64) {
        sy_buf_free(&inv);
        return fail(&o->err, SY_ENOMEM, 500, "count_tokens: out of memory");
    }
    int en = inv.len ? EVP_EncodeBlock(b64, (const unsigned char *)inv.p, (int)inv.len) : 0;
    sy_buf_free(&inv);
    int rc = SY_BUF_LIT(&o->body, "{\"input\":{\"invokeModel\":{\"body\":\"");
    rc |= sy_buf_append(&o->body, (const char *)b64, en > 0 ? (size_t)en : 0);
    rc |= SY_BUF_LIT(&o->body, "\"}}}");
    free(b64);

    const char *id = sy_count_bedrock_model(x->model);
    rc |= sy_buf_puts(&o->url, base);
    size_t path_off = o->url.len - (pfx ? strlen(pfx) : 0);
    rc |= SY_BUF_LIT(&o->url, "/model/");
    rc |= sy_sigv4_uri_encode(&o->url, id, strlen(id), 0);
    rc |= SY_BUF_LIT(&o->url, "/count-tokens");
    rc |= SY_BUF_LIT(&o->headers, "Content-Type: application/json\r\nAccept: application/json\r\n");
    if (rc)
        return fail(&o->err, SY_ENOSPC, 413, "count_tokens: request too large for the upstream buffer");
    if (pc->key) {
        rc = sy_buf_printf(&o->headers, "Authorization: Bearer %s\r\n", pc->key);
        return rc ? fail(&o->err, SY_ENOSPC, 413, "count_tokens: headers too large") : 0;
    }
    if (sy_sigv4_bedrock_post(host, o->url.p + path_off, o->body.p, o->body.len, pc->access_key, pc->secret_key,
                              pc->session_token, pc->region, x->now, &o->headers) != 0)
        return fail(&o->err, SY_EINVAL, 500, "count_tokens: bedrock: the request could not be signed");
    return 0;
}

/* ---- Gemini and Vertex AI Gemini ------------------------------------------------------ */

int sy_count_gemini(const struct sy_xctx *x, enum sy_count_kind kind, struct sy_xout *o)
{
    static const char gen[] = ":generateContent";
    size_t gl = sizeof gen - 1;
    if (o->url.len < gl || memcmp(o->url.p + o->url.len - gl, gen, gl) != 0)
        return fail(&o->err, SY_EINVAL, 400, "count_tokens: not a generateContent call");
    o->url.len -= gl;
    int rc = SY_BUF_LIT(&o->url, ":countTokens");
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, o->body.p ? o->body.p : "", o->body.len, x->arena, 0) != 0 || sy_jdom_type(&d, 0) != 'o')
        return fail(&o->err, SY_EINVAL, 500, "count_tokens: the encoded body is not a JSON object");
    struct sy_buf nb;
    sy_buf_init(&nb, o->body.cap ? o->body.cap : 64u << 20);
    struct sy_jw w;
    sy_jw_init(&w, &nb);
    sy_jw_obj(&w);
    if (kind == SY_COUNT_GEMINI) { /* AI Studio: systemInstruction and tools only inside a generateContentRequest */
        sy_jw_key(&w, "generateContentRequest");
        sy_jw_obj(&w);
        size_t ml = 7 + (x->model ? strlen(x->model) : 0);
        char *mname = sy_arena_alloc(x->arena, ml + 1);
        if (!mname) {
            sy_buf_free(&nb);
            return fail(&o->err, SY_ENOMEM, 500, "count_tokens: out of memory");
        }
        snprintf(mname, ml + 1, "models/%s", x->model ? x->model : "");
        sy_jw_key(&w, "model");
        sy_jw_str(&w, mname, ml);
    }
    static const char *const keep[] = {"contents", "systemInstruction", "tools"};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        uint32_t v = sy_jdom_top(&d, keep[i]);
        if (!v)
            continue;
        sy_jw_key(&w, keep[i]);
        sy_jw_node(&w, &d, v);
    }
    if (kind == SY_COUNT_GEMINI)
        sy_jw_end(&w);
    sy_jw_end(&w);
    if (rc || w.err) {
        sy_buf_free(&nb);
        return fail(&o->err, SY_ENOSPC, 413, "count_tokens: request too large for the upstream buffer");
    }
    sy_buf_free(&o->body);
    o->body = nb;
    return 0;
}

/* ---- answers and the estimate ------------------------------------------------------ */

int64_t sy_count_parse(enum sy_count_kind kind, const char *body, size_t n)
{
    const char *key = kind == SY_COUNT_BEDROCK                                       ? "inputTokens"
                      : kind == SY_COUNT_GEMINI || kind == SY_COUNT_VERTEX_GEMINI    ? "totalTokens"
                      : kind == SY_COUNT_ANTHROPIC || kind == SY_COUNT_VERTEX_CLAUDE ? "input_tokens"
                                                                                     : NULL;
    if (!key || !body)
        return -1;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int64_t v = -1;
    if (sy_jdom_parse(&d, body, n, &a, 4096) == 0 && sy_jdom_type(&d, 0) == 'o') {
        uint32_t i = sy_jdom_top(&d, key);
        int64_t t;
        if (i && sy_jdom_i64(&d, i, &t) == 1 && t >= 0)
            v = t;
    }
    sy_arena_free(&a);
    return v;
}

int64_t sy_count_estimate(int64_t tokens, size_t nmsgs, int has_tools)
{
    if (tokens < 0)
        tokens = 0;
    double e = ceil((double)tokens * SY_COUNT_FACTOR);
    if (e > 9e15)
        return INT64_MAX / 2;
    int64_t r = (int64_t)e + (int64_t)nmsgs * SY_COUNT_PER_MSG + (has_tools ? SY_COUNT_TOOLS : 0);
    return r < tokens ? tokens : r;
}
