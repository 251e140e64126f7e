/* bedrock.c - AWS Bedrock runtime: Converse (JSON), ConverseStream (binary AWS
 * event stream) and InvokeModel for the Titan and Cohere embedding models.
 *
 * | Request                | POST /model/{modelId}/converse | /converse-stream | /invoke |
 * |                        | /invoke-with-response-stream (anthropic.* models: an Anthropic Messages
 * |                        | body and answer, the stream's events base64 in "chunk" messages); modelId
 * |                        | percent-encoded (anthropic.claude-3-5-sonnet-20240620-v1%3A0), decoded
 * |                        | here; it may carry "@directives" (also encoded: %40, %3D, %2C)
 * | Auth                   | Authorization: AWS4-HMAC-SHA256 Credential=AKID/YYYYMMDD/REGION/
 * |                        | bedrock/aws4_request, SignedHeaders=…(host and x-amz-date among them),
 * |                        | Signature=<64 hex> and X-Amz-Date: YYYYMMDD'T'HHMMSS'Z' (same day);
 * |                        | with --aws-secret-key the signature itself is recomputed (SigV4, the
 * |                        | path encoded once more, payload hash from x-amz-content-sha256 or
 * |                        | the body). Or Authorization: Bearer K (K checked against --require-key).
 * |                        | Otherwise 403 {"message":…} with x-amzn-ErrorType
 * | Converse body          | {messages:[{role,content:[{text}|{toolUse}|{toolResult}]}], system?,
 * |                        | inferenceConfig?:{maxTokens}, toolConfig?:{tools:[{toolSpec:{name,
 * |                        | inputSchema:{json}}}]}}
 * | Converse answer        | {"output":{"message":{"role":"assistant","content":[BLOCK]}},
 * |                        | "stopReason":R,"usage":{"inputTokens":N,"outputTokens":M,
 * |                        | "totalTokens":N+M},"metrics":{"latencyMs":1}}
 * | BLOCK                  | {"text":…} (R end_turn, max_tokens when capped), or with toolConfig and
 * |                        | a last user turn without toolResult {"toolUse":{"toolUseId":
 * |                        | "tooluse_mock1","name":TOOL,"input":{…}}} (R tool_use)
 * | Stream                 | Content-Type application/vnd.amazon.eventstream, one message per HTTP
 * |                        | chunk, headers :event-type, :content-type application/json,
 * |                        | :message-type event; payloads (each with AWS's "p" padding field):
 * |                        | messageStart {role} / [tool: contentBlockStart {contentBlockIndex,
 * |                        | start:{toolUse:{toolUseId,name}}}] / contentBlockDelta
 * |                        | {contentBlockIndex, delta:{text: word}} per word, or delta:{toolUse:
 * |                        | {input: 8-byte piece}} / contentBlockStop {contentBlockIndex} /
 * |                        | messageStop {stopReason} / metadata {usage, metrics {latencyMs}}
 * | Event-stream message   | total length (4) | headers length (4) | CRC-32 of those 8 (4) | headers
 * | (big-endian, CRC-32    | | payload | CRC-32 of everything before (4); header = name length (1)
 * | IEEE as zlib's)        | | name | type 7 (1) | value length (2) | value
 * | Segments               | 0: head + messageStart (+ contentBlockStart); one per delta; then
 * |                        | contentBlockStop, messageStop, metadata
 * | Mid-stream exception   | stream_error=T (e.g. throttlingException, modelStreamErrorException,
 * |                        | internalServerException, serviceUnavailableException): after
 * |                        | stream_error_after deltas, a message with :message-type exception,
 * |                        | :exception-type T, payload {"message":…}, then the end of the body
 * | Error                  | {"message":…} + x-amzn-ErrorType: 400 ValidationException,
 * |                        | 403 AccessDeniedException, 404 ResourceNotFoundException,
 * |                        | 408 ModelTimeoutException, 424 ModelErrorException, 429
 * |                        | ThrottlingException, 500 InternalServerException,
 * |                        | 503 ServiceUnavailableException (error_type overrides the type)
 * | Invoke: Titan          | amazon.titan-embed-*: {inputText, dimensions?} -> {"embedding":[…],
 * |                        | "inputTextTokenCount":N} (dimension 8 unless given)
 * | Invoke: Cohere         | cohere.embed-*: {texts:[…], input_type (required)} -> {"embeddings":
 * |                        | [[…],…],"id":…,"response_type":"embeddings_floats","texts":[…]}
 * | CountTokens            | POST /model/{modelId}/count-tokens (signed as above):
 * |                        | {"input":{"invokeModel":{"body":B64}}}, B64 an Anthropic InvokeModel
 * |                        | body (anthropic_version "bedrock-2023-05-31", max_tokens, messages; no
 * |                        | model), or {"input":{"converse":{"messages":…}}} -> {"inputTokens":N},
 * |                        | N = mock_count_text(the decoded body, or the converse object) + 7
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "mock.h"

#define PIECE        8
#define DEFAULT_DIMS 8

/* ---- CRC-32 (IEEE 802.3, reflected, as zlib's crc32()) ---- */

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
}

static uint32_t crc32_ieee(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint32_t c = 0xFFFFFFFFu;
    pthread_once(&crc_once, crc_init);
    for (size_t i = 0; i < n; i++)
        c = crc_table[(c ^ b[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static void be32(unsigned char *o, uint32_t v)
{
    o[0] = (unsigned char)(v >> 24), o[1] = (unsigned char)(v >> 16);
    o[2] = (unsigned char)(v >> 8), o[3] = (unsigned char)v;
}

/* One event-stream message with string headers into out. */
static void es_message(struct sy_buf *out, const char *const *hv, int nh, const char *payload, size_t pl)
{
    size_t hl = 0, start = out->len;
    for (int i = 0; i < nh; i++)
        hl += 1 + strlen(hv[2 * i]) + 1 + 2 + strlen(hv[2 * i + 1]);
    unsigned char pre[12], crc[4];
    be32(pre, (uint32_t)(12 + hl + pl + 4));
    be32(pre + 4, (uint32_t)hl);
    be32(pre + 8, crc32_ieee(pre, 8));
    sy_buf_append(out, pre, 12);
    for (int i = 0; i < nh; i++) {
        size_t nl = strlen(hv[2 * i]), vl = strlen(hv[2 * i + 1]);
        unsigned char len = (unsigned char)nl, tv[3] = {7, (unsigned char)(vl >> 8), (unsigned char)vl};
        sy_buf_append(out, &len, 1);
        sy_buf_append(out, hv[2 * i], nl);
        sy_buf_append(out, tv, 3);
        sy_buf_append(out, hv[2 * i + 1], vl);
    }
    sy_buf_append(out, payload, pl);
    be32(crc, crc32_ieee(out->p + start, out->len - start));
    sy_buf_append(out, crc, 4);
}

/* Send the event payload s as one message in one HTTP chunk (a segment if mark). */
static void es_event(struct mock_resp *r, const char *type, const struct sy_buf *s, int mark)
{
    struct sy_buf *m = &r->c->th->aux;
    const char *hv[] = {":event-type", type, ":content-type", "application/json", ":message-type", "event"};
    sy_buf_reset(m);
    es_message(m, hv, 3, s->p, s->len);
    size_t start = r->b->len;
    mock_chunk(r, m->p, m->len);
    if (!mark)
        return;
    if (r->split) { /* cut a character of the payload, not a byte of the binary frame */
        const char *nl = memchr(r->b->p + start, '\n', r->b->len - start);
        size_t poff = (size_t)(nl + 1 - r->b->p) + (m->len - s->len - 4);
        for (size_t i = 0; i < s->len; i++)
            if ((unsigned char)s->p[i] >= 0xC0) {
                mock_split_at(r, poff + i + 1);
                break;
            }
    }
    mock_mark(r);
}

/* AWS pads event payloads with a "p" field of varying length. */
static void pad(struct sy_buf *s, long i)
{
    static const char al[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    SY_BUF_LIT(s, "\"p\":\"");
    sy_buf_append(s, al, (size_t)(1 + (i * 7) % 40));
    SY_BUF_LIT(s, "\"");
}

/* ---- errors ---- */

static const struct {
    int status;
    const char *type, *message;
} errs[] = {
    {400, "ValidationException", "Malformed input request, please reformat your input and try again."},
    {403, "AccessDeniedException", "You don't have access to the model with the specified model ID."},
    {404, "ResourceNotFoundException", "Could not resolve the foundation model from the provided model identifier."},
    {408, "ModelTimeoutException", "Model has timed out in processing the request."},
    {424, "ModelErrorException", "The model returned an error."},
    {429, "ThrottlingException", "Too many requests, please wait before trying again."},
    {500, "InternalServerException", "The server encountered an internal error."},
    {503, "ServiceUnavailableException", "Bedrock is unable to process your request."},
};

void mock_bedrock_error(struct mock_resp *r, int status, const char *type, const char *message,
                        const struct mock_fault *f)
{
    struct sy_buf *s = &r->c->th->scratch;
    char tbuf[128];
    int ei = -1;
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
        if (errs[i].status == status)
            ei = (int)i;
    if (f && f->error_type.p) {
        snprintf(tbuf, sizeof tbuf, "%.*s", (int)f->error_type.n, f->error_type.p);
        type = tbuf;
    }
    r->amz_error = type           ? type
                   : ei >= 0      ? errs[ei].type
                   : status < 500 ? "ValidationException"
                                  : "InternalServerException";
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"message\":\"");
    if (f && f->error_message.p) {
        sy_buf_append(s, f->error_message.p, f->error_message.n);
    } else {
        const char *m = message ? message : ei >= 0 ? errs[ei].message : "Error.";
        sy_buf_json_escape(s, m, strlen(m));
    }
    SY_BUF_LIT(s, "\"}");
    mock_body_json(r, status, s, f);
    r->amz_error = NULL;
}

/* ---- auth ---- */

/* Value of "Key=" in a SigV4 Authorization header (up to ',' or end). */
static struct sy_str auth_field(const char *a, const char *key)
{
    const char *p = strstr(a, key);
    if (!p)
        return SY_STR_NULL;
    p += strlen(key);
    size_t n = strcspn(p, ", ");
    return (struct sy_str){p, n};
}

static void hexify(char *out, const unsigned char *in, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hex[in[i] >> 4];
        out[2 * i + 1] = hex[in[i] & 15];
    }
    out[2 * n] = 0;
}

static void sha256_hex(char out[65], const void *p, size_t n)
{
    unsigned char md[32];
    unsigned int ml = 0;
    EVP_Digest(p, n, md, &ml, EVP_sha256(), NULL);
    hexify(out, md, 32);
}

static void hmac(unsigned char out[32], const void *key, size_t kl, const void *p, size_t n)
{
    unsigned int ol = 32;
    HMAC(EVP_sha256(), key, (int)kl, p, n, out, &ol);
}

/* URI-encode as SigV4 does (unreserved kept; '/' kept when keep_slash). */
static void uri_encode(struct sy_buf *b, const char *p, size_t n, int keep_slash)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
            ch == '.' || ch == '_' || ch == '~' || (keep_slash && ch == '/'))
            sy_buf_append(b, p + i, 1);
        else
            sy_buf_printf(b, "%%%02X", ch);
    }
}

static int cmp_str(const void *a, const void *b)
{
    const struct sy_str *x = a, *y = b;
    int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* Recompute the signature with mock_opts.aws_secret; 1 if it matches. */
static int sigv4_ok(struct mock_conn *c, const char *method, struct sy_str path, struct sy_str query,
                    struct sy_str cred, struct sy_str signed_h, struct sy_str sig, const char *amz_date)
{
    struct sy_buf cr, tmp;
    sy_buf_init(&cr, 1u << 20);
    sy_buf_init(&tmp, 1u << 20);
    sy_buf_printf(&cr, "%s\n", method);
    uri_encode(&cr, path.p, path.n, 1); /* non-S3 services: the path encoded once more */
    SY_BUF_LIT(&cr, "\n");
    /* query: decode, encode strictly, sort */
    struct sy_str params[64];
    int np = 0;
    for (size_t i = 0; i < query.n && np < 64;) {
        const char *amp = memchr(query.p + i, '&', query.n - i);
        size_t end = amp ? (size_t)(amp - query.p) : query.n;
        if (end > i)
            params[np++] = (struct sy_str){query.p + i, end - i};
        i = end + 1;
    }
    qsort(params, (size_t)np, sizeof params[0], cmp_str);
    for (int i = 0; i < np; i++) {
        const char *eq = memchr(params[i].p, '=', params[i].n);
        size_t kn = eq ? (size_t)(eq - params[i].p) : params[i].n;
        char kv[2][1024];
        size_t l[2] = {kn < 1024 ? kn : 1023, 0};
        memcpy(kv[0], params[i].p, l[0]);
        if (eq) {
            l[1] = params[i].n - kn - 1 < 1024 ? params[i].n - kn - 1 : 1023;
            memcpy(kv[1], eq + 1, l[1]);
        }
        if (i)
            SY_BUF_LIT(&cr, "&");
        uri_encode(&cr, kv[0], mock_pct_decode(kv[0], l[0]), 0);
        SY_BUF_LIT(&cr, "=");
        uri_encode(&cr, kv[1], mock_pct_decode(kv[1], l[1]), 0);
    }
    SY_BUF_LIT(&cr, "\n");
    for (size_t i = 0; i < signed_h.n;) { /* canonical headers, in SignedHeaders order */
        const char *semi = memchr(signed_h.p + i, ';', signed_h.n - i);
        size_t end = semi ? (size_t)(semi - signed_h.p) : signed_h.n;
        sy_buf_reset(&tmp);
        sy_buf_append(&tmp, signed_h.p + i, end - i);
        const char *v = mock_header(c, tmp.p);
        sy_buf_append(&cr, tmp.p, tmp.len);
        SY_BUF_LIT(&cr, ":");
        while (v && *v == ' ')
            v++;
        size_t vl = v ? strlen(v) : 0;
        while (vl && v[vl - 1] == ' ')
            vl--;
        for (size_t k = 0; k < vl; k++) /* sequential spaces become one */
            if (!(v[k] == ' ' && k && v[k - 1] == ' '))
                sy_buf_append(&cr, v + k, 1);
        SY_BUF_LIT(&cr, "\n");
        i = end + 1;
    }
    SY_BUF_LIT(&cr, "\n");
    sy_buf_append(&cr, signed_h.p, signed_h.n);
    SY_BUF_LIT(&cr, "\n");
    const char *ph = mock_header(c, "x-amz-content-sha256");
    char hex[65];
    if (ph) {
        sy_buf_puts(&cr, ph);
    } else {
        sha256_hex(hex, c->req.body.p ? c->req.body.p : "", c->req.body.len);
        sy_buf_append(&cr, hex, 64);
    }
    /* string to sign */
    const char *slash = memchr(cred.p, '/', cred.n);
    struct sy_str scope = {slash + 1, cred.n - (size_t)(slash + 1 - cred.p)};
    sy_buf_reset(&tmp);
    sy_buf_printf(&tmp, "AWS4-HMAC-SHA256\n%s\n%.*s\n", amz_date, (int)scope.n, scope.p);
    sha256_hex(hex, cr.p, cr.len);
    sy_buf_append(&tmp, hex, 64);
    /* signing key: date / region / service / aws4_request */
    unsigned char k[32];
    char ks[512];
    int kl = snprintf(ks, sizeof ks, "AWS4%s", mock_opts.aws_secret);
    struct sy_str parts[4];
    size_t o = 0;
    for (int i = 0; i < 4; i++) { /* the caller checked there are four */
        const char *sl = o < scope.n ? memchr(scope.p + o, '/', scope.n - o) : NULL;
        size_t end = sl ? (size_t)(sl - scope.p) : scope.n;
        parts[i] = (struct sy_str){scope.p + (o < scope.n ? o : scope.n), end > o ? end - o : 0};
        o = end + 1;
    }
    hmac(k, ks, (size_t)kl, parts[0].p, parts[0].n);
    for (int i = 1; i < 4; i++)
        hmac(k, k, 32, parts[i].p, parts[i].n);
    unsigned char out[32];
    hmac(out, k, 32, tmp.p, tmp.len);
    hexify(hex, out, 32);
    int ok = sig.n == 64 && memcmp(hex, sig.p, 64) == 0;
    sy_buf_free(&cr);
    sy_buf_free(&tmp);
    return ok;
}

static int all_hex(struct sy_str s)
{
    for (size_t i = 0; i < s.n; i++)
        if (!((s.p[i] >= '0' && s.p[i] <= '9') || (s.p[i] >= 'a' && s.p[i] <= 'f')))
            return 0;
    return 1;
}

/* ";"-separated list l contains name? */
static int has_item(struct sy_str l, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < l.n;) {
        const char *semi = memchr(l.p + i, ';', l.n - i);
        size_t end = semi ? (size_t)(semi - l.p) : l.n;
        if (end - i == n && memcmp(l.p + i, name, n) == 0)
            return 1;
        i = end + 1;
    }
    return 0;
}

int mock_bedrock_auth(struct mock_resp *r, const char *method, struct sy_str path, struct sy_str query)
{
    const char *a = mock_header(r->c, "authorization"), *d = mock_header(r->c, "x-amz-date");
    const char *type = "IncompleteSignatureException", *msg = NULL;
    if (a && strncmp(a, "Bearer ", 7) == 0) {
        if (!mock_opts.require_key || strcmp(a + 7, mock_opts.require_key) == 0)
            return 1;
        type = "UnrecognizedClientException";
        msg = "The security token included in the request is invalid.";
    } else if (!a) {
        type = "MissingAuthenticationTokenException";
        msg = "Missing Authentication Token";
    } else if (strncmp(a, "AWS4-HMAC-SHA256 ", 17) != 0) {
        msg = "Authorization header requires 'Credential' parameter. Authorization header "
              "requires 'Signature' parameter. Authorization header requires 'SignedHeaders' "
              "parameter. Authorization header requires existence of either a 'X-Amz-Date' or "
              "a 'Date' header.";
    } else {
        struct sy_str cred = auth_field(a, "Credential="), sh = auth_field(a, "SignedHeaders="),
                      sig = auth_field(a, "Signature=");
        /* AKID/YYYYMMDD/region/service/aws4_request */
        const char *s1 = cred.p ? memchr(cred.p, '/', cred.n) : NULL;
        int slashes = 0;
        for (size_t i = 0; cred.p && i < cred.n; i++)
            slashes += cred.p[i] == '/';
        if (!cred.p || !sh.p || !sig.p || !s1 || slashes != 4 || s1 == cred.p)
            msg = "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' "
                  "parameters.";
        else if (cred.n < 13 || !sy_str_startswith((struct sy_str){cred.p + cred.n - 13, 13}, "/aws4_request", 13) ||
                 !memmem(cred.p, cred.n, "/bedrock/", 9))
            msg = "Credential should be scoped to a valid service: 'bedrock'.";
        else if (sig.n != 64 || !all_hex(sig))
            msg = "The signature must be 64 lowercase hex digits.";
        else if (!has_item(sh, "host") || !has_item(sh, "x-amz-date"))
            msg = "SignedHeaders must include host and x-amz-date.";
        else if (!d || strlen(d) != 16 || d[8] != 'T' || d[15] != 'Z')
            msg = "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' "
                  "header.";
        else if (memcmp(s1 + 1, d, 8) != 0 || s1[9] != '/')
            msg = "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of "
                  "date from HTTP.";
        else if (mock_opts.aws_secret && !sigv4_ok(r->c, method, path, query, cred, sh, sig, d)) {
            type = "InvalidSignatureException";
            msg = "The request signature we calculated does not match the signature you "
                  "provided. Check your AWS Secret Access Key and signing method. Consult the "
                  "service documentation for details.";
        } else {
            return 1;
        }
    }
    mock_bedrock_error(r, 403, type, msg, NULL);
    return 0;
}

/* ---- Converse ---- */

static void usage(struct sy_buf *s, long in, long out)
{
    SY_BUF_LIT(s, "\"usage\":{\"inputTokens\":");
    sy_buf_u64(s, (uint64_t)in);
    SY_BUF_LIT(s, ",\"outputTokens\":");
    sy_buf_u64(s, (uint64_t)out);
    SY_BUF_LIT(s, ",\"totalTokens\":");
    sy_buf_u64(s, (uint64_t)(in + out));
    SY_BUF_LIT(s, "}");
}

static void converse(struct mock_resp *r, const struct mock_req *q, const struct mock_text *t, int tool)
{
    struct sy_buf *s = &r->c->th->scratch;
    const struct mock_fault *f = &q->fault;
    long out;
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"output\":{\"message\":{\"role\":\"assistant\",\"content\":[");
    if (tool) {
        SY_BUF_LIT(s, "{\"toolUse\":{\"toolUseId\":\"tooluse_mock1\",\"name\":\"");
        sy_buf_append(s, q->tool.p, q->tool.n);
        SY_BUF_LIT(s, "\",\"input\":");
        size_t a = s->len;
        mock_tool_args(s, q);
        out = (long)(s->len - a + 3) / 4;
        SY_BUF_LIT(s, "}}");
    } else {
        SY_BUF_LIT(s, "{\"text\":\"");
        out = mock_text_all(s, t, f);
        SY_BUF_LIT(s, "\"}");
    }
    SY_BUF_LIT(s, "]}},\"stopReason\":\"");
    mock_reason(s, f, tool ? "tool_use" : t->truncated ? "max_tokens" : "end_turn");
    SY_BUF_LIT(s, "\",");
    usage(s, mock_prompt_tokens(q), out);
    SY_BUF_LIT(s, ",\"metrics\":{\"latencyMs\":1}}");
    mock_body_json(r, 200, s, NULL);
}

static void converse_stream(struct mock_resp *r, const struct mock_req *q, const struct mock_text *t, int tool)
{
    struct sy_buf *s = &r->c->th->scratch, args;
    const struct mock_fault *f = &q->fault;
    long err_after = mock_stream_error_after(f), i = 0, out, ev = 0;
    mock_head(r, 200, "application/vnd.amazon.eventstream", -1, NULL);
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{");
    pad(s, ev++);
    SY_BUF_LIT(s, ",\"role\":\"assistant\"}");
    es_event(r, "messageStart", s, 0);
    sy_buf_init(&args, 1u << 20);
    if (tool) {
        sy_buf_reset(s);
        SY_BUF_LIT(s, "{\"contentBlockIndex\":0,");
        pad(s, ev++);
        SY_BUF_LIT(s, ",\"start\":{\"toolUse\":{\"toolUseId\":\"tooluse_mock1\",\"name\":\"");
        sy_buf_append(s, q->tool.p, q->tool.n);
        SY_BUF_LIT(s, "\"}}}");
        es_event(r, "contentBlockStart", s, 0);
        mock_tool_args(&args, q);
    }
    mock_mark(r);
    size_t payload = 0, off = 0;
    for (;; i++) {
        if (tool ? off >= args.len : !mock_text_more(t, f, i, payload))
            break;
        if (i == err_after)
            break;
        sy_buf_reset(s);
        SY_BUF_LIT(s, "{\"contentBlockIndex\":0,\"delta\":{");
        if (tool) {
            size_t pn = mock_piece(args.p, args.len, off, PIECE);
            SY_BUF_LIT(s, "\"toolUse\":{\"input\":\"");
            sy_buf_json_escape(s, args.p + off, pn);
            SY_BUF_LIT(s, "\"}},");
            off += pn;
        } else {
            SY_BUF_LIT(s, "\"text\":\"");
            mock_text_word(s, t, i);
            SY_BUF_LIT(s, "\"},");
        }
        pad(s, ev++);
        SY_BUF_LIT(s, "}");
        es_event(r, "contentBlockDelta", s, 1);
        payload += s->len;
    }
    out = tool ? (long)(args.len + 3) / 4 : i;
    sy_buf_free(&args);
    if (err_after >= 0) {
        static const struct {
            const char *type, *message;
        } ex[] = {
            {"throttlingException", "Too many requests, please wait before trying again."},
            {"modelStreamErrorException", "The model stream returned an error."},
            {"internalServerException", "The server encountered an internal error."},
            {"serviceUnavailableException", "Bedrock is unable to process your request."},
            {"validationException", "Input validation failed."},
            {"modelTimeoutException", "Model has timed out in processing the request."},
        };
        char type[128];
        const char *m = "Stream error.";
        snprintf(type, sizeof type, "%.*s", (int)f->stream_error.n, f->stream_error.p);
        for (size_t k = 0; k < sizeof ex / sizeof ex[0]; k++)
            if (!strcmp(ex[k].type, type))
                m = ex[k].message;
        sy_buf_reset(s);
        SY_BUF_LIT(s, "{\"message\":\"");
        if (f->error_message.p)
            sy_buf_append(s, f->error_message.p, f->error_message.n);
        else
            sy_buf_puts(s, m);
        SY_BUF_LIT(s, "\"}");
        const char *hv[] = {":exception-type", type, ":content-type", "application/json", ":message-type", "exception"};
        struct sy_buf *msg = &r->c->th->aux;
        sy_buf_reset(msg);
        es_message(msg, hv, 3, s->p, s->len);
        mock_chunk(r, msg->p, msg->len);
        mock_mark(r);
        mock_chunked_end(r);
        return;
    }
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"contentBlockIndex\":0,");
    pad(s, ev++);
    SY_BUF_LIT(s, "}");
    es_event(r, "contentBlockStop", s, 1);
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{");
    pad(s, ev++);
    SY_BUF_LIT(s, ",\"stopReason\":\"");
    mock_reason(s, f, tool ? "tool_use" : t->truncated ? "max_tokens" : "end_turn");
    SY_BUF_LIT(s, "\"}");
    es_event(r, "messageStop", s, 1);
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"metrics\":{\"latencyMs\":1},");
    pad(s, ev++);
    SY_BUF_LIT(s, ",");
    usage(s, mock_prompt_tokens(q), out);
    SY_BUF_LIT(s, "}");
    es_event(r, "metadata", s, 0);
    mock_chunked_end(r);
}

/* ---- InvokeModel embeddings ---- */

static void invoke(struct mock_resp *r, const struct mock_req *q)
{
    struct sy_buf *s = &r->c->th->scratch;
    long dims = q->dimensions > 0 ? q->dimensions : DEFAULT_DIMS;
    if (dims > 16384)
        dims = 16384;
    int titan = memmem(q->model.p, q->model.n, "titan-embed", 11) != NULL;
    int cohere = memmem(q->model.p, q->model.n, "cohere.embed", 12) != NULL;
    if (!titan && !cohere) {
        mock_bedrock_error(r, 400, "ValidationException",
                           "The mock upstream answers InvokeModel only for amazon.titan-embed-* "
                           "and cohere.embed-* models.",
                           NULL);
        return;
    }
    if (q->n_items == 0 || (cohere && !q->input_type.p)) {
        mock_bedrock_error(r, 400, "ValidationException",
                           titan             ? "Malformed input request: #: required key [inputText] not "
                                               "found, please reformat your input and try again."
                           : q->n_items == 0 ? "Malformed input request: #: required key [texts] not found, "
                                               "please reformat your input and try again."
                                             : "Malformed input request: #: required key [input_type] not "
                                               "found, please reformat your input and try again.",
                           NULL);
        return;
    }
    sy_buf_reset(s);
    if (titan) {
        SY_BUF_LIT(s, "{\"embedding\":");
        mock_vector(s, q->items[0], dims);
        SY_BUF_LIT(s, ",\"inputTextTokenCount\":");
        sy_buf_u64(s, (uint64_t)mock_prompt_tokens(q));
        SY_BUF_LIT(s, "}");
    } else {
        SY_BUF_LIT(s, "{\"embeddings\":[");
        for (int i = 0; i < q->n_items; i++) {
            if (i)
                SY_BUF_LIT(s, ",");
            mock_vector(s, q->items[i], dims);
        }
        SY_BUF_LIT(s, "],\"id\":\"");
        mock_uuid(r->c->th, s);
        SY_BUF_LIT(s, "\",\"response_type\":\"embeddings_floats\",\"texts\":[");
        for (int i = 0; i < q->n_items; i++) {
            SY_BUF_LIT(s, "\"");
            sy_buf_append(s, q->items[i].p, q->items[i].n);
            sy_buf_puts(s, i + 1 < q->n_items ? "\"," : "\"");
        }
        SY_BUF_LIT(s, "]}");
    }
    mock_body_json(r, 200, s, NULL);
}

void mock_bedrock_count(struct mock_resp *r, const struct mock_req *q, const char *body, size_t n);
void mock_bedrock_chunk(struct mock_resp *r, const struct sy_buf *s, int mark)
{
    struct sy_buf p, m;
    sy_buf_init(&p, 4 * (s->len / 3 + 2) + 32);
    sy_buf_init(&m, 4 * (s->len / 3 + 2) + 256);
    SY_BUF_LIT(&p, "{\"bytes\":\"");
    if (sy_buf_reserve(&p, 4 * (s->len / 3 + 1) + 4) == 0)
        p.len += (size_t)EVP_EncodeBlock((unsigned char *)p.p + p.len, (const unsigned char *)s->p, (int)s->len);
    SY_BUF_LIT(&p, "\"}");
    const char *hv[] = {":event-type", "chunk", ":content-type", "application/json", ":message-type", "event"};
    es_message(&m, hv, 3, p.p, p.len);
    mock_chunk(r, m.p, m.len);
    sy_buf_free(&p);
    sy_buf_free(&m);
    if (mark)
        mock_mark(r);
}

int mock_bedrock(struct mock_resp *r, const struct mock_req *q, enum mock_bop op)
{
    if ((op == MOCK_B_INVOKE || op == MOCK_B_INVOKE_STREAM) && memmem(q->model.p, q->model.n, "anthropic.", 10)) {
        /* Claude on Bedrock: an Anthropic Messages body (anthropic_version, no model) and answer */
        r->bedrock_invoke = op == MOCK_B_INVOKE_STREAM;
        return mock_anthropic(r, q, 1, op == MOCK_B_INVOKE_STREAM);
    }
    if (op == MOCK_B_INVOKE || op == MOCK_B_INVOKE_STREAM) {
        invoke(r, q);
        return 0;
    }
    if (op == MOCK_B_COUNT) {
        mock_bedrock_count(r, q, r->c->req.body.p ? r->c->req.body.p : "", r->c->req.body.len);
        return 0;
    }
    if (q->n_msgs == 0) {
        mock_bedrock_error(r, 400, "ValidationException",
                           "A conversation must start with a user message. Try again with a "
                           "conversation that starts with a user message.",
                           NULL);
        return 0;
    }
    struct mock_text t;
    if (mock_text_init(&t, q) < 0) {
        mock_bedrock_error(r, 500, NULL, NULL, NULL);
        return 0;
    }
    int tool = mock_wants_tool(q);
    if (op == MOCK_B_STREAM)
        converse_stream(r, q, &t, tool);
    else
        converse(r, q, &t, tool);
    mock_text_free(&t);
    return op == MOCK_B_STREAM;
}

/* ---- CountTokens ---- */

/* Standard base64 text p[0..n) -> malloc'd bytes (*out, *outn); -1 when not base64. */
static int b64_decode(const char *p, size_t n, unsigned char **out, size_t *outn)
{
    if (n % 4)
        return -1;
    unsigned char *o = malloc(n / 4 * 3 + 1);
    if (!o)
        return -1;
    int k = n ? EVP_DecodeBlock(o, (const unsigned char *)p, (int)n) : 0;
    if (k < 0) {
        free(o);
        return -1;
    }
    size_t len = (size_t)k;
    for (size_t i = n; i > 0 && p[i - 1] == '=' && len; i--)
        len--; /* EVP_DecodeBlock counts the padding as zero bytes */
    *out = o;
    *outn = len;
    return 0;
}

static void count_bad(struct mock_resp *r, const struct mock_req *q, const char *msg)
{
    mock_bedrock_error(r, 400, "ValidationException", msg, &q->fault);
}

void mock_bedrock_count(struct mock_resp *r, const struct mock_req *q, const char *body, size_t n)
{
    static const char *const k_input[] = {"input"};
    static const char *const k_kind[] = {"invokeModel", "converse"};
    static const char *const k_body[] = {"body"};
    static const char *const k_inv[] = {"anthropic_version", "max_tokens", "messages", "model"};
    struct mock_jv in[1], kind[2], b[1], inv[4];
    if (mock_json_get(body, n, k_input, 1, in) < 0 || in[0].type != 'o' ||
        mock_json_get(in[0].v.p, in[0].v.n, k_kind, 2, kind) < 0 || (kind[0].type != 'o') == (kind[1].type != 'o')) {
        count_bad(r, q,
                  "1 validation error detected: Value at 'input' failed to satisfy constraint: exactly one of "
                  "invokeModel, converse must be set");
        return;
    }
    long c;
    if (kind[1].type == 'o') {
        c = mock_count_text(kind[1].v.p, kind[1].v.n);
    } else {
        unsigned char *raw = NULL;
        size_t rn = 0;
        if (mock_json_get(kind[0].v.p, kind[0].v.n, k_body, 1, b) < 0 || b[0].type != 's' ||
            b64_decode(b[0].v.p, b[0].v.n, &raw, &rn) < 0) {
            count_bad(r, q, "invokeModel.body: a base64-encoded request body is required");
            return;
        }
        const char *bad = NULL;
        if (mock_json_get((const char *)raw, rn, k_inv, 4, inv) < 0)
            bad = "The model's request body is not valid JSON.";
        else if (inv[0].type != 's' || !SY_STR_EQ(inv[0].v, "bedrock-2023-05-31"))
            bad = "anthropic_version: bedrock-2023-05-31 is required";
        else if (inv[1].type != 'p')
            bad = "max_tokens: Field required";
        else if (inv[2].type != 'a')
            bad = "messages: Field required";
        else if (inv[3].type)
            bad = "model: Extra inputs are not permitted";
        c = bad ? -1 : mock_count_text((const char *)raw, rn);
        free(raw);
        if (bad) {
            count_bad(r, q, bad);
            return;
        }
    }
    if (c < 0) {
        count_bad(r, q, "The input is not valid JSON.");
        return;
    }
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    sy_buf_printf(s, "{\"inputTokens\":%ld}", c + MOCK_COUNT_BEDROCK);
    mock_body_json(r, 200, s, &q->fault);
}
