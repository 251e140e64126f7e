/* gemini.c - Gemini API and Vertex AI (Google publisher models), their
 * embeddings, and the Google OAuth2 token endpoint Vertex callers use.
 *
 * | Request (Gemini)       | POST /v1beta/models/{m}:generateContent | :streamGenerateContent?alt=sse
 * |                        | | :batchEmbedContents | :embedContent (also under /v1/models/);
 * |                        | x-goog-api-key header or ?key= (checked when the mock has a key)
 * | Request (Vertex)       | POST /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:
 * |                        | generateContent | :streamGenerateContent?alt=sse | :predict
 * |                        | (also /v1beta1/); Authorization: Bearer ya29.mock-N (from /token)
 * | Body                   | {contents:[{role,parts:[{text}|{functionCall}|{functionResponse}]}],
 * |                        | systemInstruction?, tools?:[{functionDeclarations:[{name,parameters}]}],
 * |                        | generationConfig?:{maxOutputTokens}}
 * | JSON answer            | {"candidates":[{"content":{"role":"model","parts":[PART]},
 * |                        | "finishReason":F,"index":0}],"usageMetadata":{"promptTokenCount":N,
 * |                        | "candidatesTokenCount":M,"totalTokenCount":N+M,"promptTokensDetails":
 * |                        | [{"modality":"TEXT","tokenCount":N}]},"modelVersion":M,"responseId":ID}
 * | PART                   | {"text":…} (F STOP, MAX_TOKENS when capped), or with tools and a last
 * |                        | user turn without functionResponse {"functionCall":{"name":TOOL,
 * |                        | "args":{…}}} (F STOP)
 * | Stream (SSE, CRLF      | "data: " + the same object per word (one text part, no finishReason,
 * | line ends, as Google   | no usageMetadata), then a last one with text "", finishReason and
 * | sends them)            | usageMetadata; a tool call is one event with all of it
 * | Segments               | 0: the head; one per word; the last event
 * | batchEmbedContents     | {requests:[{model:"models/…",content:{parts:[{text}]},
 * |                        | outputDimensionality?}]} -> {"embeddings":[{"values":[…]},…]}
 * |                        | (dimension outputDimensionality, else 8)
 * | embedContent           | {content:{parts:[{text}]}} -> {"embedding":{"values":[…]}}
 * | Vertex :predict        | {instances:[{content}],parameters?:{outputDimensionality}} ->
 * |                        | {"predictions":[{"embeddings":{"values":[…],"statistics":
 * |                        | {"token_count":N,"truncated":false}}}],"metadata":
 * |                        | {"billableCharacterCount":C}}
 * | Error                  | {"error":{"code":C,"message":…,"status":S}}: 400 INVALID_ARGUMENT,
 * |                        | 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 NOT_FOUND, 409 ABORTED,
 * |                        | 429 RESOURCE_EXHAUSTED, 499 CANCELLED, 500 INTERNAL, 501 UNIMPLEMENTED,
 * |                        | 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED
 * | Mid-stream error       | stream_error=S: after stream_error_after words,
 * |                        | "data: {"error":{"code":C,"message":…,"status":S}}", then the end
 * | Token                  | POST /token, form grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer
 * |                        | &assertion=JWT (three base64url parts, header alg RS256, claims iss,
 * |                        | scope, aud, iat, exp with 0 < exp - iat <= 3600; the signature is not
 * |                        | verified) -> {"access_token":"ya29.mock-N","expires_in":E,
 * |                        | "token_type":"Bearer"}; errors {"error":…,"error_description":…}.
 * |                        | Directives from the query (/token?expires_in=5&status=500)
 *
 * Issued tokens are remembered (the last 4096) with their expiry: a Vertex call
 * with one of them after it expired gets 401. Other ya29.mock- tokens pass.
 */
#define JSMN_STATIC
#include <jsmn.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mock.h"

#define DEFAULT_DIMS 8
#define TOKEN_RING   4096

static const struct {
    int code;
    const char *status, *message;
} errs[] = {
    {400, "INVALID_ARGUMENT", "Request contains an invalid argument."},
    {401, "UNAUTHENTICATED",
     "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie "
     "or other valid authentication credential. See "
     "https://developers.google.com/identity/sign-in/web/devconsole-project."},
    {403, "PERMISSION_DENIED", "The caller does not have permission"},
    {404, "NOT_FOUND", "Requested entity was not found."},
    {409, "ABORTED", "The operation was aborted."},
    {429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."},
    {499, "CANCELLED", "The operation was cancelled."},
    {500, "INTERNAL",
     "An internal error has occurred. Please retry or report in "
     "https://developers.generativeai.google/guide/troubleshooting"},
    {501, "UNIMPLEMENTED", "Operation is not implemented, or supported, or enabled."},
    {503, "UNAVAILABLE", "The model is overloaded. Please try again later."},
    {504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete."},
};

static int err_index(int code, struct sy_str status)
{
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
        if (status.p ? strlen(errs[i].status) == status.n && memcmp(errs[i].status, status.p, status.n) == 0
                     : errs[i].code == code)
            return (int)i;
    return -1;
}

/* {"error":{"code":…,"message":…,"status":…}} into s. status.p: by status name. */
static void error_body(struct sy_buf *s, int code, const char *message, const struct mock_fault *f,
                       struct sy_str status)
{
    int ei = err_index(code, status);
    if (status.p)
        code = ei >= 0 ? errs[ei].code : 500;
    SY_BUF_LIT(s, "{\"error\":{\"code\":");
    sy_buf_u64(s, (uint64_t)code);
    SY_BUF_LIT(s, ",\"message\":\"");
    if (f && f->error_message.p) {
        sy_buf_append(s, f->error_message.p, f->error_message.n);
    } else {
        const char *m = message ? message : ei >= 0 ? errs[ei].message : "Unknown error.";
        sy_buf_json_escape(s, m, strlen(m));
    }
    SY_BUF_LIT(s, "\",\"status\":\"");
    if (status.p)
        sy_buf_append(s, status.p, status.n);
    else if (f && f->error_type.p)
        sy_buf_append(s, f->error_type.p, f->error_type.n);
    else
        sy_buf_puts(s, ei >= 0 ? errs[ei].status : code < 500 ? "FAILED_PRECONDITION" : "INTERNAL");
    SY_BUF_LIT(s, "\"}}");
}

void mock_google_error(struct mock_resp *r, int status, const char *message, const struct mock_fault *f)
{
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    error_body(s, status, message, f, SY_STR_NULL);
    mock_body_json(r, status, s, f);
}

/* Value of name=… in a query string or form body (raw), .p NULL if absent. */
static struct sy_str param(struct sy_str q, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < q.n;) {
        const char *amp = memchr(q.p + i, '&', q.n - i);
        size_t end = amp ? (size_t)(amp - q.p) : q.n;
        if (end - i > n && memcmp(q.p + i, name, n) == 0 && q.p[i + n] == '=')
            return (struct sy_str){q.p + i + n + 1, end - i - n - 1};
        i = end + 1;
    }
    return SY_STR_NULL;
}

int mock_gemini_auth(struct mock_resp *r, struct sy_str query)
{
    const char *k = mock_opts.require_key;
    if (!k)
        return 1;
    const char *h = mock_header(r->c, "x-goog-api-key");
    struct sy_str qk = param(query, "key");
    if (h ? strcmp(h, k) == 0 : qk.p && qk.n == strlen(k) && memcmp(qk.p, k, qk.n) == 0)
        return 1;
    if (!h && !qk.p)
        mock_google_error(r, 403,
                          "Method doesn't allow unregistered callers (callers without established "
                          "identity). Please use API Key or other form of API consumer identity "
                          "to call this API.",
                          NULL);
    else
        mock_google_error(r, 400, "API key not valid. Please pass a valid API key.", NULL);
    return 0;
}

/* ---- OAuth2 tokens ---- */

static pthread_mutex_t tok_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t tok_next; /* ids issued so far (never reset: tokens stay unique) */
static long tok_fetches, tok_issued;
static struct {
    uint64_t id;
    int64_t expires_ms;
} toks[TOKEN_RING];

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int mock_vertex_auth(struct mock_resp *r)
{
    static const char pre[] = "Bearer ya29.mock-";
    const char *a = mock_header(r->c, "authorization");
    int ok = a && strncmp(a, pre, sizeof pre - 1) == 0 && a[sizeof pre - 1];
    if (ok) {
        char *end;
        uint64_t id = strtoull(a + sizeof pre - 1, &end, 10);
        if (*end == 0 && id) {
            pthread_mutex_lock(&tok_mu);
            if (toks[id % TOKEN_RING].id == id && toks[id % TOKEN_RING].expires_ms <= now_ms())
                ok = 0; /* expired */
            pthread_mutex_unlock(&tok_mu);
        }
    }
    if (!ok)
        mock_google_error(r, 401, NULL, NULL);
    return ok;
}

void mock_token_stats(struct sy_buf *s)
{
    pthread_mutex_lock(&tok_mu);
    sy_buf_printf(s, "{\"token_fetches\":%ld,\"tokens_issued\":%ld}", tok_fetches, tok_issued);
    pthread_mutex_unlock(&tok_mu);
}

void mock_token_reset(void)
{
    pthread_mutex_lock(&tok_mu);
    tok_fetches = tok_issued = 0;
    pthread_mutex_unlock(&tok_mu);
}

static void oauth_error(struct mock_resp *r, int status, const char *error, const char *desc,
                        const struct mock_fault *f)
{
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"error\":\"");
    if (f && f->error_type.p)
        sy_buf_append(s, f->error_type.p, f->error_type.n);
    else
        sy_buf_puts(s, error);
    SY_BUF_LIT(s, "\",\"error_description\":\"");
    if (f && f->error_message.p)
        sy_buf_append(s, f->error_message.p, f->error_message.n);
    else
        sy_buf_json_escape(s, desc, strlen(desc));
    SY_BUF_LIT(s, "\"}");
    mock_body_json(r, status, s, f);
}

static int b64url_val(unsigned char c)
{
    return c >= 'A' && c <= 'Z'   ? c - 'A'
           : c >= 'a' && c <= 'z' ? c - 'a' + 26
           : c >= '0' && c <= '9' ? c - '0' + 52
           : c == '-'             ? 62
           : c == '_'             ? 63
                                  : -1;
}

/* Decode base64url (padding tolerated) into out; -1 on a bad character. */
static int b64url_decode(struct sy_buf *out, const char *p, size_t n)
{
    uint32_t acc = 0;
    int bits = 0;
    while (n && p[n - 1] == '=')
        n--;
    for (size_t i = 0; i < n; i++) {
        int v = b64url_val((unsigned char)p[i]);
        if (v < 0)
            return -1;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            char ch = (char)(acc >> bits & 0xff);
            sy_buf_append(out, &ch, 1);
        }
    }
    return 0;
}

/* Is the JSON object in js a map with these keys? Returns the first missing key, or NULL
 * (*bad = 1 if js is not a JSON object). Numbers of iat / exp go to *iat / *exp. */
static const char *claims_missing(const char *js, size_t n, const char *const *keys, int nk, long *iat, long *exp,
                                  struct sy_str *alg, int *bad)
{
    jsmntok_t t[128];
    jsmn_parser p;
    jsmn_init(&p);
    int nt = jsmn_parse(&p, js, n, t, 128);
    *bad = nt < 1 || t[0].type != JSMN_OBJECT;
    if (*bad)
        return NULL;
    int seen = 0;
    for (int i = 1; i + 1 < nt;) {
        struct sy_str k = {js + t[i].start, (size_t)(t[i].end - t[i].start)};
        const jsmntok_t *v = &t[i + 1];
        for (int j = 0; j < nk; j++)
            if (strlen(keys[j]) == k.n && memcmp(keys[j], k.p, k.n) == 0)
                seen |= 1 << j;
        if (SY_STR_EQ(k, "iat") && iat)
            *iat = strtol(js + v->start, NULL, 10);
        if (SY_STR_EQ(k, "exp") && exp)
            *exp = strtol(js + v->start, NULL, 10);
        if (SY_STR_EQ(k, "alg") && alg)
            *alg = (struct sy_str){js + v->start, (size_t)(v->end - v->start)};
        int end = v->end, j = i + 2;
        while (j < nt && t[j].start < end)
            j++;
        i = j;
    }
    for (int j = 0; j < nk; j++)
        if (!(seen & 1 << j))
            return keys[j];
    return NULL;
}

void mock_token(struct mock_resp *r, struct sy_str query)
{
    static const char *const claims[] = {"iss", "scope", "aud", "iat", "exp"};
    static const char grant[] = "urn:ietf:params:oauth:grant-type:jwt-bearer";
    struct mock_conn *c = r->c;
    struct sy_buf *aux = &c->th->aux;
    struct mock_fault f;
    mock_fault_init(&f);
    mock_fault_parse_kv(&f, query.p, query.n, '&');
    mock_begin(r, &f);
    pthread_mutex_lock(&tok_mu);
    tok_fetches++;
    pthread_mutex_unlock(&tok_mu);
    if (f.status > 0 && f.status != 200) {
        oauth_error(r, (int)f.status,
                    f.status == 429   ? "rate_limit_exceeded"
                    : f.status >= 500 ? "internal_failure"
                                      : "invalid_request",
                    "Scripted failure.", &f);
        mock_commit(r, &f, 0);
        return;
    }
    struct sy_str form = {c->req.body.p ? c->req.body.p : "", c->req.body.len};
    struct sy_str gt = param(form, "grant_type"), as = param(form, "assertion");
    char gbuf[128];
    size_t gn = gt.p && gt.n < sizeof gbuf ? gt.n : 0;
    memcpy(gbuf, gt.p ? gt.p : "", gn);
    gn = mock_pct_decode(gbuf, gn);
    const char *err = NULL;
    char msg[256];
    if (!gt.p || gn != sizeof grant - 1 || memcmp(gbuf, grant, gn) != 0) {
        err = "unsupported_grant_type";
        snprintf(msg, sizeof msg, "Invalid grant_type: %.*s", (int)gn, gbuf);
    } else if (!as.p) {
        err = "invalid_request";
        snprintf(msg, sizeof msg, "Missing required parameter: assertion");
    } else {
        const char *e = as.p + as.n, *d1 = memchr(as.p, '.', as.n);
        const char *d2 = d1 ? memchr(d1 + 1, '.', (size_t)(e - d1 - 1)) : NULL;
        long iat = 0, exp = 0;
        struct sy_str alg = SY_STR_NULL;
        int bad = 0, sig_ok = d2 && d2 + 1 < e;
        for (const char *x = d2 ? d2 + 1 : e; x < e; x++)
            if (b64url_val((unsigned char)*x) < 0 && *x != '=')
                sig_ok = 0;
        err = "invalid_grant";
        sy_buf_reset(aux);
        if (!d1 || !d2 || d1 == as.p || d2 == d1 + 1 || !sig_ok || b64url_decode(aux, as.p, (size_t)(d1 - as.p)) < 0) {
            snprintf(msg, sizeof msg, "Invalid JWT: the assertion is not three base64url parts");
        } else if (claims_missing(aux->p, aux->len, NULL, 0, NULL, NULL, &alg, &bad), bad || !SY_STR_EQ(alg, "RS256")) {
            snprintf(msg, sizeof msg, "Invalid JWT: the header's alg must be RS256");
        } else {
            const char *miss = NULL;
            sy_buf_reset(aux);
            if (b64url_decode(aux, d1 + 1, (size_t)(d2 - d1 - 1)) < 0)
                bad = 1;
            else
                miss = claims_missing(aux->p, aux->len, claims, 5, &iat, &exp, NULL, &bad);
            if (bad)
                snprintf(msg, sizeof msg, "Invalid JWT: the claims are not a JSON object");
            else if (miss)
                snprintf(msg, sizeof msg, "Invalid JWT: missing claim %s", miss);
            else if (exp - iat <= 0 || exp - iat > 3600)
                snprintf(msg, sizeof msg,
                         "Invalid JWT: Token must be a short-lived token (60 minutes) and in a "
                         "reasonable timeframe. Check your iat and exp values in the JWT claim.");
            else
                err = NULL;
        }
    }
    if (err) {
        oauth_error(r, 400, err, msg, NULL);
        mock_commit(r, &f, 0);
        return;
    }
    long expires = f.expires_in >= 0 ? f.expires_in : mock_opts.token_expires_in;
    pthread_mutex_lock(&tok_mu);
    uint64_t id = ++tok_next;
    tok_issued++;
    toks[id % TOKEN_RING].id = id;
    toks[id % TOKEN_RING].expires_ms = now_ms() + (int64_t)expires * 1000;
    pthread_mutex_unlock(&tok_mu);
    struct sy_buf *s = &c->th->scratch;
    sy_buf_reset(s);
    sy_buf_printf(s, "{\"access_token\":\"ya29.mock-%llu\",\"expires_in\":%ld,\"token_type\":\"Bearer\"}",
                  (unsigned long long)id, expires);
    mock_body_json(r, 200, s, NULL);
    mock_commit(r, &f, 0);
}

/* ---- generateContent ---- */

static void usage(struct sy_buf *s, long in, long out)
{
    SY_BUF_LIT(s, "\"usageMetadata\":{\"promptTokenCount\":");
    sy_buf_u64(s, (uint64_t)in);
    SY_BUF_LIT(s, ",\"candidatesTokenCount\":");
    sy_buf_u64(s, (uint64_t)out);
    SY_BUF_LIT(s, ",\"totalTokenCount\":");
    sy_buf_u64(s, (uint64_t)(in + out));
    SY_BUF_LIT(s, ",\"promptTokensDetails\":[{\"modality\":\"TEXT\",\"tokenCount\":");
    sy_buf_u64(s, (uint64_t)in);
    SY_BUF_LIT(s, "}]},");
}

static void tail(struct sy_buf *s, const struct mock_req *q, const char *rid)
{
    SY_BUF_LIT(s, "\"modelVersion\":\"");
    sy_buf_append(s, q->model.p ? q->model.p : "", q->model.n);
    SY_BUF_LIT(s, "\",\"responseId\":\"");
    sy_buf_puts(s, rid);
    SY_BUF_LIT(s, "\"}");
}

static void function_call(struct sy_buf *s, const struct mock_req *q)
{
    SY_BUF_LIT(s, "{\"functionCall\":{\"name\":\"");
    sy_buf_append(s, q->tool.p, q->tool.n);
    SY_BUF_LIT(s, "\",\"args\":");
    mock_tool_args(s, q);
    SY_BUF_LIT(s, "}}");
}

static void generate(struct mock_resp *r, const struct mock_req *q, int stream_it)
{
    struct sy_buf *s = &r->c->th->scratch, *aux = &r->c->th->aux;
    const struct mock_fault *f = &q->fault;
    sy_buf_reset(aux);
    mock_rand_id(r->c->th, aux, "", 22);
    const char *rid = aux->p;
    struct mock_text t;
    if (mock_text_init(&t, q) < 0)
        return;
    int tool = mock_wants_tool(q);
    long in = mock_prompt_tokens(q), err_after = mock_stream_error_after(f);
    static const char open[] = "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[";
    if (!stream_it || tool) {
        long out = 0;
        sy_buf_reset(s);
        sy_buf_append(s, open, sizeof open - 1);
        if (tool) {
            size_t a = s->len;
            function_call(s, q);
            out = (long)(s->len - a + 3) / 4;
        } else {
            SY_BUF_LIT(s, "{\"text\":\"");
            out = mock_text_all(s, &t, f);
            SY_BUF_LIT(s, "\"}");
        }
        SY_BUF_LIT(s, "]},\"finishReason\":\"");
        mock_reason(s, f, t.truncated && !tool ? "MAX_TOKENS" : "STOP");
        SY_BUF_LIT(s, "\",\"index\":0}],");
        usage(s, in, out);
        tail(s, q, rid);
        if (!stream_it) {
            mock_body_json(r, 200, s, NULL);
        } else {
            mock_head(r, 200, "text/event-stream", -1, NULL);
            mock_mark(r);
            if (err_after != 0)
                mock_sse(r, NULL, s, 1, 1);
            if (err_after >= 0) {
                sy_buf_reset(s);
                error_body(s, 500, NULL, f, f->stream_error);
                mock_sse(r, NULL, s, 1, 1);
            }
            mock_chunked_end(r);
        }
        mock_text_free(&t);
        return;
    }
    mock_head(r, 200, "text/event-stream", -1, NULL);
    mock_mark(r);
    long i;
    size_t payload = 0;
    for (i = 0; mock_text_more(&t, f, i, payload); i++) {
        if (i == err_after)
            break;
        sy_buf_reset(s);
        sy_buf_append(s, open, sizeof open - 1);
        SY_BUF_LIT(s, "{\"text\":\"");
        mock_text_word(s, &t, i);
        SY_BUF_LIT(s, "\"}]},\"index\":0}],");
        tail(s, q, rid);
        mock_sse(r, NULL, s, 1, 1);
        payload += s->len;
    }
    sy_buf_reset(s);
    if (err_after >= 0) {
        error_body(s, 500, NULL, f, f->stream_error);
    } else {
        sy_buf_append(s, open, sizeof open - 1);
        SY_BUF_LIT(s, "{\"text\":\"\"}]},\"finishReason\":\"");
        mock_reason(s, f, t.truncated ? "MAX_TOKENS" : "STOP");
        SY_BUF_LIT(s, "\",\"index\":0}],");
        usage(s, in, i);
        tail(s, q, rid);
    }
    mock_sse(r, NULL, s, 1, 1);
    mock_chunked_end(r);
    mock_text_free(&t);
}

/* ---- embeddings ---- */

static void embeddings(struct mock_resp *r, const struct mock_req *q, enum mock_gop op)
{
    struct sy_buf *s = &r->c->th->scratch;
    long dims = q->dimensions > 0 ? q->dimensions : DEFAULT_DIMS;
    if (dims > 16384)
        dims = 16384;
    sy_buf_reset(s);
    if (op == MOCK_G_EMBED) {
        SY_BUF_LIT(s, "{\"embedding\":{\"values\":");
        mock_vector(s, q->items[0], dims);
        SY_BUF_LIT(s, "}}");
    } else if (op == MOCK_G_BATCH_EMBED) {
        SY_BUF_LIT(s, "{\"embeddings\":[");
        for (int i = 0; i < q->n_items; i++) {
            SY_BUF_LIT(s, "{\"values\":");
            mock_vector(s, q->items[i], dims);
            sy_buf_puts(s, i + 1 < q->n_items ? "}," : "}");
        }
        SY_BUF_LIT(s, "]}");
    } else {
        size_t chars = 0;
        SY_BUF_LIT(s, "{\"predictions\":[");
        for (int i = 0; i < q->n_items; i++) {
            long tc = (long)(q->items[i].n + 3) / 4;
            chars += q->items[i].n;
            SY_BUF_LIT(s, "{\"embeddings\":{\"values\":");
            mock_vector(s, q->items[i], dims);
            sy_buf_printf(s, ",\"statistics\":{\"token_count\":%ld,\"truncated\":false}}}%s", tc < 1 ? 1 : tc,
                          i + 1 < q->n_items ? "," : "");
        }
        sy_buf_printf(s, "],\"metadata\":{\"billableCharacterCount\":%zu}}", chars);
    }
    mock_body_json(r, 200, s, NULL);
}

/* countTokens: AI Studio {"generateContentRequest":{"model":"models/M","contents",...}} or
 * {"contents":...}; Vertex {"contents":...,"systemInstruction"?,"tools"?} -> {"totalTokens":N},
 * N = mock_count_text(body) + 11 (AI Studio) / + 13 (Vertex). */
static void count_tokens(struct mock_resp *r, const struct mock_req *q, int vertex)
{
    static const char *const keys[] = {"contents", "generateContentRequest"};
    static const char *const gkeys[] = {"model", "contents"};
    const char *body = r->c->req.body.p ? r->c->req.body.p : "";
    size_t n = r->c->req.body.len;
    struct mock_jv v[2], g[2];
    const char *bad = NULL;
    if (mock_json_get(body, n, keys, 2, v) < 0)
        bad = "Invalid JSON payload received.";
    else if (vertex && v[1].type)
        bad = "Invalid JSON payload received. Unknown name \"generateContentRequest\": Cannot find field.";
    else if (v[1].type == 'o') {
        if (mock_json_get(v[1].v.p, v[1].v.n, gkeys, 2, g) < 0 || g[0].type != 's' ||
            !sy_str_startswith(g[0].v, "models/", 7))
            bad = "* GenerateContentRequest.model: unexpected model name format";
        else if (g[1].type != 'a')
            bad = "* GenerateContentRequest.contents: contents is not specified";
    } else if (v[0].type != 'a')
        bad = "* CountTokensRequest.contents: contents is not specified";
    long c = bad ? -1 : mock_count_text(body, n);
    if (c < 0) {
        mock_google_error(r, 400, bad ? bad : "Invalid JSON payload received.", &q->fault);
        return;
    }
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    sy_buf_printf(s, "{\"totalTokens\":%ld}", c + (vertex ? MOCK_COUNT_VERTEX_GEMINI : MOCK_COUNT_GEMINI));
    mock_body_json(r, 200, s, &q->fault);
}

int mock_gemini(struct mock_resp *r, const struct mock_req *q, enum mock_gop op, struct sy_str query)
{
    if (op == MOCK_G_COUNT) {
        count_tokens(
            r, q,
            sy_str_startswith((struct sy_str){r->c->req.url.p, r->c->req.url.len}, "/v1/projects/", 13) ||
                sy_str_startswith((struct sy_str){r->c->req.url.p, r->c->req.url.len}, "/v1beta1/projects/", 18));
        return 0;
    }
    if (op == MOCK_G_GENERATE || op == MOCK_G_STREAM) {
        if (q->n_msgs == 0) {
            mock_google_error(r, 400, "* GenerateContentRequest.contents: contents is not specified", NULL);
            return 0;
        }
        struct sy_str alt = param(query, "alt");
        if (op == MOCK_G_STREAM && !SY_STR_EQ(alt, "sse")) {
            mock_google_error(r, 400,
                              "The mock upstream streams only with ?alt=sse "
                              "(without it Google sends one JSON array).",
                              NULL);
            return 0;
        }
        generate(r, q, op == MOCK_G_STREAM);
        return op == MOCK_G_STREAM;
    }
    if (q->n_items == 0) {
        mock_google_error(r, 400,
                          op == MOCK_G_PREDICT ? "instances is required"
                          : op == MOCK_G_EMBED ? "* EmbedContentRequest.content: contents is not specified"
                                               : "* BatchEmbedContentsRequest.requests: requests is not specified",
                          NULL);
        return 0;
    }
    if (op == MOCK_G_BATCH_EMBED && q->bad_item_model) {
        mock_google_error(r, 400,
                          "* BatchEmbedContentsRequest.requests[].model: each request "
                          "needs a model of the form models/{model}",
                          NULL);
        return 0;
    }
    embeddings(r, q, op);
    return 0;
}
