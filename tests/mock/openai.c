/* openai.c - renders OpenAI-shaped responses: status line + headers, chat and
 * text completions (JSON or SSE), embeddings, model lists and errors.
 *
 * Wire formats produced (shapes as OpenAI sends them in 2025):
 *
 *   chat, non-stream   {"id":"chatcmpl-…","object":"chat.completion","created":T,"model":M,
 *                       "choices":[{"index":0,"message":{"role":"assistant","content":…,
 *                       "refusal":null,"annotations":[]},"logprobs":null,"finish_reason":…}],
 *                       "usage":{…,"prompt_tokens_details":{…},"completion_tokens_details":{…}},
 *                       "service_tier":"default","system_fingerprint":"fp_…"}
 *   chat, stream       chunked; each HTTP chunk = one "data: {…chat.completion.chunk…}\n\n":
 *                       role chunk, one chunk per word, finish chunk, usage chunk
 *                       (choices:[], only with stream_options.include_usage), "data: [DONE]\n\n"
 *   text completion    "object":"text_completion", choices[].text; stream without a role chunk
 *   embeddings         {"object":"list","data":[{"object":"embedding","index":i,"embedding":[…]}],
 *                       "model":M,"usage":{"prompt_tokens":P,"total_tokens":P}}
 *   error              {"error":{"message":…,"type":…,"param":null,"code":…}}
 *
 * Segments (for delays, resets and trickles, see conn.c): segment 0 is the
 * head (for chat streams together with the role chunk), then one segment per
 * SSE event, or one segment for a whole JSON body.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "mock.h"

#define FINGERPRINT "fp_0ba0d124f1"

static const struct sy_str default_words[] = {
    SY_STR("Hello!"), SY_STR("This"), SY_STR("is"), SY_STR("a"), SY_STR("deterministic"),
    SY_STR("reply"), SY_STR("from"), SY_STR("the"), SY_STR("mock"), SY_STR("upstream"),
    SY_STR("server,"), SY_STR("used"), SY_STR("to"), SY_STR("test"), SY_STR("and"),
    SY_STR("benchmark"), SY_STR("the"), SY_STR("gateway."),
};

static const struct {
    int status;
    const char *reason, *message, *type, *code;
} statuses[] = {
    {200, "OK", NULL, NULL, NULL},
    {400, "Bad Request", "Invalid request.", "invalid_request_error", NULL},
    {401, "Unauthorized",
     "Incorrect API key provided. You can find your API key at "
     "https://platform.openai.com/account/api-keys.",
     "invalid_request_error", "invalid_api_key"},
    {403, "Forbidden", "You are not allowed to access this resource.", "invalid_request_error",
     NULL},
    {404, "Not Found", "The model does not exist or you do not have access to it.",
     "invalid_request_error", "model_not_found"},
    {408, "Request Timeout", "Request timed out.", "invalid_request_error", NULL},
    {409, "Conflict", "Conflict.", "invalid_request_error", NULL},
    {413, "Payload Too Large", "Request body too large.", "invalid_request_error", NULL},
    {422, "Unprocessable Entity", "Unprocessable entity.", "invalid_request_error", NULL},
    {429, "Too Many Requests",
     "Rate limit reached for requests. Please try again later. Visit "
     "https://platform.openai.com/account/rate-limits to learn more.",
     "requests", "rate_limit_exceeded"},
    {500, "Internal Server Error",
     "The server had an error while processing your request. Sorry about that!", "server_error",
     NULL},
    {502, "Bad Gateway", "Bad gateway.", "cf_bad_gateway", NULL},
    {503, "Service Unavailable", "The engine is currently overloaded, please try again later.",
     "server_error", NULL},
    {504, "Gateway Timeout", "Gateway timeout.", "cf_gateway_timeout", NULL},
};

static int status_index(int status)
{
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
        if (statuses[i].status == status)
            return (int)i;
    return -1;
}

void mock_rand_id(struct mock_thread *th, struct sy_buf *b, const char *prefix, int n)
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    char tmp[64];
    sy_buf_puts(b, prefix);
    for (int i = 0; i < n && i < 64; i++) {
        th->rng ^= th->rng << 13;
        th->rng ^= th->rng >> 7;
        th->rng ^= th->rng << 17;
        tmp[i] = al[th->rng % 62];
    }
    sy_buf_append(b, tmp, (size_t)(n < 64 ? n : 64));
}

void mock_head(struct mock_resp *r, int status, const char *ctype, long clen,
               const struct mock_fault *f)
{
    struct sy_buf *b = r->b;
    int si = status_index(status);
    sy_buf_printf(b, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n", status,
                  si >= 0 ? statuses[si].reason : (status < 500 ? "Client Error" : "Server Error"),
                  ctype);
    if (clen >= 0) {
        SY_BUF_LIT(b, "Content-Length: ");
        sy_buf_u64(b, (uint64_t)clen);
        SY_BUF_LIT(b, "\r\n");
    } else {
        SY_BUF_LIT(b, "Transfer-Encoding: chunked\r\n");
    }
    SY_BUF_LIT(b, "openai-version: 2020-10-01\r\nopenai-processing-ms: 1\r\nx-request-id: ");
    mock_rand_id(r->c->th, b, "req_", 32);
    SY_BUF_LIT(b, "\r\nx-ratelimit-limit-requests: 10000\r\n"
                  "x-ratelimit-remaining-requests: 9999\r\n"
                  "x-ratelimit-limit-tokens: 30000000\r\n"
                  "x-ratelimit-remaining-tokens: 29999000\r\n");
    if (f && f->retry_after >= 0)
        sy_buf_printf(b, "retry-after: %ld\r\n", f->retry_after);
    if (f && f->retry_after_ms >= 0)
        sy_buf_printf(b, "retry-after-ms: %ld\r\n", f->retry_after_ms);
    if (!http_should_keep_alive(&r->c->parser))
        SY_BUF_LIT(b, "Connection: close\r\n");
    SY_BUF_LIT(b, "\r\n");
}

void mock_body_json(struct mock_resp *r, int status, const struct sy_buf *body,
                    const struct mock_fault *f)
{
    mock_head(r, status, "application/json", (long)body->len, f);
    mock_mark(r);
    sy_buf_append(r->b, body->p ? body->p : "", body->len);
    mock_mark(r);
}

void mock_error(struct mock_resp *r, int status, const char *message, const char *type,
                const char *code, const struct mock_fault *f)
{
    struct sy_buf *s = &r->c->th->scratch;
    int si = status_index(status);
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"error\":{\"message\":\"");
    if (f && f->error_message.p)
        sy_buf_append(s, f->error_message.p, f->error_message.n);
    else
        sy_buf_json_escape(s, message ? message : si >= 0 ? statuses[si].message : "Error.",
                           strlen(message ? message : si >= 0 ? statuses[si].message : "Error."));
    SY_BUF_LIT(s, "\",\"type\":\"");
    if (f && f->error_type.p)
        sy_buf_append(s, f->error_type.p, f->error_type.n);
    else
        sy_buf_puts(s, type ? type : si >= 0 ? statuses[si].type
                                  : status < 500 ? "invalid_request_error" : "server_error");
    SY_BUF_LIT(s, "\",\"param\":null,\"code\":");
    if (!code && si >= 0)
        code = statuses[si].code;
    if (f && f->error_code.p) {
        SY_BUF_LIT(s, "\"");
        sy_buf_append(s, f->error_code.p, f->error_code.n);
        SY_BUF_LIT(s, "\"");
    } else if (code && *code) { /* "" = null */
        sy_buf_printf(s, "\"%s\"", code);
    } else {
        SY_BUF_LIT(s, "null");
    }
    SY_BUF_LIT(s, "}}");
    mock_body_json(r, status, s, f);
}

/* ---- completions ---- */

struct comp {
    enum mock_kind kind;
    const struct mock_req *q;
    struct sy_buf id;
    uint64_t created;
    struct sy_str *words;
    size_t nw;
};

static void usage_json(struct sy_buf *s, const struct comp *x, long ctoks)
{
    long p = (long)(x->q->prompt_chars + 3) / 4;
    if (p < 1)
        p = 1;
    sy_buf_printf(s, "{\"prompt_tokens\":%ld,\"completion_tokens\":%ld,\"total_tokens\":%ld", p,
                  ctoks, p + ctoks);
    if (x->kind == MOCK_CHAT)
        SY_BUF_LIT(s, ",\"prompt_tokens_details\":{\"cached_tokens\":0,\"audio_tokens\":0},"
                      "\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0,"
                      "\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}");
    SY_BUF_LIT(s, "}");
}

static void word(struct sy_buf *s, const struct comp *x, long i)
{
    if (i > 0)
        SY_BUF_LIT(s, " ");
    const struct sy_str *w = &x->words[(size_t)i % x->nw];
    sy_buf_append(s, w->p, w->n);
}

static void head_fields(struct sy_buf *s, const struct comp *x, int chunk)
{
    SY_BUF_LIT(s, "{\"id\":\"");
    sy_buf_append(s, x->id.p, x->id.len);
    if (x->kind == MOCK_CHAT)
        sy_buf_puts(s, chunk ? "\",\"object\":\"chat.completion.chunk\"" : "\",\"object\":\"chat.completion\"");
    else
        SY_BUF_LIT(s, "\",\"object\":\"text_completion\"");
    SY_BUF_LIT(s, ",\"created\":");
    sy_buf_u64(s, x->created);
    SY_BUF_LIT(s, ",\"model\":\"");
    sy_buf_append(s, x->q->model.p ? x->q->model.p : "", x->q->model.n);
    SY_BUF_LIT(s, "\",");
    if (x->kind == MOCK_CHAT)
        SY_BUF_LIT(s, "\"service_tier\":\"default\",");
    SY_BUF_LIT(s, "\"system_fingerprint\":\"" FINGERPRINT "\",\"choices\":[");
}

/* Write s as one SSE event in one HTTP chunk. */
static void event(struct mock_resp *r, const struct sy_buf *s)
{
    sy_buf_printf(r->b, "%zx\r\ndata: ", s->len + 8);
    sy_buf_append(r->b, s->p, s->len);
    SY_BUF_LIT(r->b, "\n\n\r\n");
}

static void finish_reason(struct sy_buf *s, const struct mock_fault *f, int truncated)
{
    SY_BUF_LIT(s, "\"finish_reason\":\"");
    if (f->finish_reason.p)
        sy_buf_append(s, f->finish_reason.p, f->finish_reason.n);
    else
        sy_buf_puts(s, truncated ? "length" : "stop");
    SY_BUF_LIT(s, "\"");
}

static void stream(struct mock_resp *r, struct comp *x, long nchunks, int truncated)
{
    const struct mock_fault *f = &x->q->fault;
    struct sy_buf *s = &r->c->th->scratch;
    const char *tail = x->q->include_usage ? "],\"usage\":null}" : "]}";
    mock_head(r, 200, "text/event-stream; charset=utf-8", -1, NULL);
    if (x->kind == MOCK_CHAT) {
        sy_buf_reset(s);
        head_fields(s, x, 1);
        SY_BUF_LIT(s, "{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\","
                      "\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}");
        sy_buf_puts(s, tail);
        event(r, s);
    }
    mock_mark(r);
    long i;
    size_t payload = 0; /* decoded body bytes so far (for body_bytes) */
    for (i = 0; i < nchunks || (f->body_bytes > 0 && (long)payload < f->body_bytes); i++) {
        sy_buf_reset(s);
        head_fields(s, x, 1);
        if (x->kind == MOCK_CHAT) {
            SY_BUF_LIT(s, "{\"index\":0,\"delta\":{\"content\":\"");
            word(s, x, i);
            SY_BUF_LIT(s, "\"},\"logprobs\":null,\"finish_reason\":null}");
        } else {
            SY_BUF_LIT(s, "{\"text\":\"");
            word(s, x, i);
            SY_BUF_LIT(s, "\",\"index\":0,\"logprobs\":null,\"finish_reason\":null}");
        }
        sy_buf_puts(s, tail);
        event(r, s);
        payload += s->len + 8;
        mock_mark(r);
    }
    sy_buf_reset(s);
    head_fields(s, x, 1);
    if (x->kind == MOCK_CHAT)
        SY_BUF_LIT(s, "{\"index\":0,\"delta\":{},\"logprobs\":null,");
    else
        SY_BUF_LIT(s, "{\"text\":\"\",\"index\":0,\"logprobs\":null,");
    finish_reason(s, f, truncated);
    SY_BUF_LIT(s, "}");
    sy_buf_puts(s, tail);
    event(r, s);
    mock_mark(r);
    if (x->q->include_usage) {
        sy_buf_reset(s);
        head_fields(s, x, 1);
        SY_BUF_LIT(s, "],\"usage\":");
        usage_json(s, x, i);
        SY_BUF_LIT(s, "}");
        event(r, s);
        mock_mark(r);
    }
    SY_BUF_LIT(r->b, "e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n");
    mock_mark(r);
}

static void whole(struct mock_resp *r, struct comp *x, long nchunks, int truncated)
{
    const struct mock_fault *f = &x->q->fault;
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    head_fields(s, x, 0);
    if (x->kind == MOCK_CHAT)
        SY_BUF_LIT(s, "{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"");
    else
        SY_BUF_LIT(s, "{\"text\":\"");
    long i;
    for (i = 0; i < nchunks || (f->body_bytes > 0 && (long)s->len < f->body_bytes); i++)
        word(s, x, i);
    if (x->kind == MOCK_CHAT)
        SY_BUF_LIT(s, "\",\"refusal\":null,\"annotations\":[]},\"logprobs\":null,");
    else
        SY_BUF_LIT(s, "\",\"index\":0,\"logprobs\":null,");
    finish_reason(s, f, truncated);
    SY_BUF_LIT(s, "}],\"usage\":");
    usage_json(s, x, i);
    SY_BUF_LIT(s, "}");
    mock_body_json(r, 200, s, NULL);
}

void mock_completion(struct mock_resp *r, const struct mock_req *q, enum mock_kind k)
{
    struct comp x = {.kind = k, .q = q, .created = (uint64_t)time(NULL)};
    const struct mock_fault *f = &q->fault;
    struct sy_str *own = NULL;
    x.words = (struct sy_str *)default_words;
    x.nw = sizeof default_words / sizeof default_words[0];
    if (f->content.p) { /* split the scripted content on spaces */
        own = malloc(sizeof *own * (f->content.n + 2)); /* n spaces make n + 1 words */
        if (!own)
            return;
        x.words = own;
        x.nw = 0;
        for (size_t i = 0; i <= f->content.n;) {
            size_t j = i;
            while (j < f->content.n && f->content.p[j] != ' ')
                j++;
            own[x.nw++] = (struct sy_str){f->content.p + i, j - i};
            i = j + 1;
        }
    }
    long nchunks = f->chunks >= 0 ? f->chunks : (long)x.nw;
    int truncated = 0;
    if (q->max_tokens > 0 && q->max_tokens < nchunks)
        nchunks = q->max_tokens, truncated = 1;
    sy_buf_init(&x.id, 64);
    mock_rand_id(r->c->th, &x.id, k == MOCK_CHAT ? "chatcmpl-" : "cmpl-", 29);
    if (q->stream)
        stream(r, &x, nchunks, truncated);
    else
        whole(r, &x, nchunks, truncated);
    sy_buf_free(&x.id);
    free(own);
}

/* ---- embeddings ---- */

static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h ? h : 1;
}

/* Fixed-point decimal with 9 fraction digits, without printf. */
static void put_float(struct sy_buf *b, float v)
{
    char tmp[32];
    int n = 0;
    double a = fabs((double)v);
    unsigned long long q = (unsigned long long)llround(a * 1e9);
    unsigned long long ip = q / 1000000000ull, fp = q % 1000000000ull;
    if (v < 0)
        tmp[n++] = '-';
    n += snprintf(tmp + n, sizeof tmp - (size_t)n, "%llu.", ip);
    for (int d = 8; d >= 0; d--) {
        tmp[n + d] = (char)('0' + fp % 10);
        fp /= 10;
    }
    sy_buf_append(b, tmp, (size_t)n + 9);
}

void mock_embeddings(struct mock_resp *r, const struct mock_req *q)
{
    struct sy_buf *s = &r->c->th->scratch;
    long dims = q->dimensions > 0 ? q->dimensions : 1536;
    if (dims > 16384)
        dims = 16384;
    float *v = malloc(sizeof *v * (size_t)dims);
    char *b64 = q->base64 ? malloc(((size_t)dims * 4 + 2) / 3 * 4 + 1) : NULL;
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"object\":\"list\",\"data\":[");
    for (int i = 0; i < q->n_items; i++) {
        uint64_t h = fnv1a(q->items[i].p, q->items[i].n);
        double norm = 0;
        for (long d = 0; d < dims; d++) {
            h ^= h << 13, h ^= h >> 7, h ^= h << 17;
            v[d] = (float)((double)(h >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
            norm += (double)v[d] * v[d];
        }
        norm = sqrt(norm);
        for (long d = 0; d < dims; d++)
            v[d] = (float)(v[d] / norm);
        sy_buf_printf(s, "%s{\"object\":\"embedding\",\"index\":%d,\"embedding\":", i ? "," : "", i);
        if (b64) {
            int n = EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)v, (int)dims * 4);
            SY_BUF_LIT(s, "\"");
            sy_buf_append(s, b64, (size_t)n);
            SY_BUF_LIT(s, "\"}");
        } else {
            SY_BUF_LIT(s, "[");
            for (long d = 0; d < dims; d++) {
                if (d)
                    SY_BUF_LIT(s, ",");
                put_float(s, v[d]);
            }
            SY_BUF_LIT(s, "]}");
        }
    }
    long p = (long)(q->prompt_chars + 3) / 4;
    SY_BUF_LIT(s, "],\"model\":\"");
    if (q->model.n)
        sy_buf_append(s, q->model.p, q->model.n);
    else
        SY_BUF_LIT(s, "text-embedding-3-small");
    sy_buf_printf(s, "\",\"usage\":{\"prompt_tokens\":%ld,\"total_tokens\":%ld}}", p ? p : 1,
                  p ? p : 1);
    free(v);
    free(b64);
    mock_body_json(r, 200, s, NULL);
}

/* ---- models ---- */

static const char *const models[] = {"gpt-4o-mini", "gpt-4o", "gpt-4.1", "gpt-3.5-turbo-instruct",
                                     "text-embedding-3-small", "text-embedding-3-large"};

static void model_obj(struct sy_buf *s, const char *id, size_t n)
{
    SY_BUF_LIT(s, "{\"id\":\"");
    sy_buf_json_escape(s, id, n);
    SY_BUF_LIT(s, "\",\"object\":\"model\",\"created\":1721172741,\"owned_by\":\"system\"}");
}

void mock_models(struct mock_resp *r, struct sy_str one)
{
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    if (one.p) {
        model_obj(s, one.p, one.n);
    } else {
        SY_BUF_LIT(s, "{\"object\":\"list\",\"data\":[");
        for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
            if (i)
                SY_BUF_LIT(s, ",");
            model_obj(s, models[i], strlen(models[i]));
        }
        SY_BUF_LIT(s, "]}");
    }
    mock_body_json(r, 200, s, NULL);
}
