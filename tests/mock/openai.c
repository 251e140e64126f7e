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
 *   chat, tool call    with tools[] declared and a last message that is not a tool result
 *                       (or tool_call=1; tool_call=0 never): message {"role":"assistant",
 *                       "content":null,"tool_calls":[{"id":"call_mock1","type":"function",
 *                       "function":{"name":TOOL,"arguments":"{…}"}}],"refusal":null,
 *                       "annotations":[]}, finish_reason "tool_calls". Stream: role chunk
 *                       (content null), a chunk opening the call (delta.tool_calls[{index 0,
 *                       id, type, function {name, arguments ""}}]), then delta.tool_calls
 *                       [{index 0, function {arguments: 8-byte piece}}] chunks, finish chunk,
 *                       usage chunk, [DONE]; completion_tokens = argument bytes / 4
 *   text completion    "object":"text_completion", choices[].text; stream without a role chunk
 *   embeddings         {"object":"list","data":[{"object":"embedding","index":i,"embedding":[…]}],
 *                       "model":M,"usage":{"prompt_tokens":P,"total_tokens":P}}
 *   error              {"error":{"message":…,"type":…,"param":null,"code":…}}
 *   stream error       (stream_error=TYPE) after N content chunks:
 *                       "data: {"error":{"message":…,"type":TYPE,"param":null,"code":null}}",
 *                       then the end of the body (no finish chunk, no [DONE])
 *
 * mock_head() also writes the heads of the other dialects (their own
 * request-id headers instead of OpenAI's).
 *
 * Segments (for delays, resets and trickles, see conn.c): segment 0 is the
 * head (for chat streams together with the role chunk), then one segment per
 * SSE event, or one segment for a whole JSON body. In a tool-call stream the
 * chunk opening the call and each arguments piece count as content chunks.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "mock.h"

#define FINGERPRINT "fp_0ba0d124f1"
#define PIECE       8 /* bytes of tool-call arguments per stream chunk */

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
    {403, "Forbidden", "You are not allowed to access this resource.", "invalid_request_error", NULL},
    {404, "Not Found", "The model does not exist or you do not have access to it.", "invalid_request_error",
     "model_not_found"},
    {408, "Request Timeout", "Request timed out.", "invalid_request_error", NULL},
    {409, "Conflict", "Conflict.", "invalid_request_error", NULL},
    {413, "Payload Too Large", "Request body too large.", "invalid_request_error", NULL},
    {422, "Unprocessable Entity", "Unprocessable entity.", "invalid_request_error", NULL},
    {429, "Too Many Requests",
     "Rate limit reached for requests. Please try again later. Visit "
     "https://platform.openai.com/account/rate-limits to learn more.",
     "requests", "rate_limit_exceeded"},
    {500, "Internal Server Error", "The server had an error while processing your request. Sorry about that!",
     "server_error", NULL},
    {502, "Bad Gateway", "Bad gateway.", "cf_bad_gateway", NULL},
    {503, "Service Unavailable", "The engine is currently overloaded, please try again later.", "server_error", NULL},
    {504, "Gateway Timeout", "Gateway timeout.", "cf_gateway_timeout", NULL},
    {529, "Site Overloaded", "Overloaded.", "server_error", NULL},
};

static int status_index(int status)
{
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
        if (statuses[i].status == status)
            return (int)i;
    return -1;
}

const char *mock_status_reason(int status)
{
    int si = status_index(status);
    return si >= 0 ? statuses[si].reason : NULL;
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

void mock_head(struct mock_resp *r, int status, const char *ctype, long clen, const struct mock_fault *f)
{
    struct sy_buf *b = r->b;
    int si = status_index(status);
    sy_buf_printf(b, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n", status,
                  si >= 0 ? statuses[si].reason : (status < 500 ? "Client Error" : "Server Error"), ctype);
    if (clen >= 0) {
        SY_BUF_LIT(b, "Content-Length: ");
        sy_buf_u64(b, (uint64_t)clen);
        SY_BUF_LIT(b, "\r\n");
    } else {
        SY_BUF_LIT(b, "Transfer-Encoding: chunked\r\n");
    }
    switch (r->d) {
    case MOCK_OPENAI:
        SY_BUF_LIT(b, "openai-version: 2020-10-01\r\nopenai-processing-ms: 1\r\nx-request-id: ");
        mock_rand_id(r->c->th, b, "req_", 32);
        SY_BUF_LIT(b, "\r\nx-ratelimit-limit-requests: 10000\r\n"
                      "x-ratelimit-remaining-requests: 9999\r\n"
                      "x-ratelimit-limit-tokens: 30000000\r\n"
                      "x-ratelimit-remaining-tokens: 29999000\r\n");
        break;
    case MOCK_ANTHROPIC:
        SY_BUF_LIT(b, "request-id: ");
        mock_rand_id(r->c->th, b, "req_mock", 20);
        SY_BUF_LIT(b, "\r\n");
        break;
    case MOCK_BEDROCK:
        SY_BUF_LIT(b, "x-amzn-RequestId: ");
        mock_uuid(r->c->th, b);
        SY_BUF_LIT(b, "\r\n");
        if (r->amz_error)
            sy_buf_printf(b, "x-amzn-ErrorType: %s:http://internal.amazon.com/coral/com.amazon.bedrock/\r\n",
                          r->amz_error);
        break;
    case MOCK_GOOGLE: SY_BUF_LIT(b, "Vary: Origin, X-Origin, Referer\r\nServer: scaffolding on HTTPServer2\r\n"); break;
    case MOCK_COHERE: SY_BUF_LIT(b, "x-trial-endpoint-call-remaining: 999\r\n"); break;
    case MOCK_OLLAMA: break;
    }
    if (f && f->retry_after >= 0)
        sy_buf_printf(b, "retry-after: %ld\r\n", f->retry_after);
    if (f && f->retry_after_ms >= 0)
        sy_buf_printf(b, "retry-after-ms: %ld\r\n", f->retry_after_ms);
    if (!http_should_keep_alive(&r->c->parser))
        SY_BUF_LIT(b, "Connection: close\r\n");
    SY_BUF_LIT(b, "\r\n");
}

void mock_body_json(struct mock_resp *r, int status, const struct sy_buf *body, const struct mock_fault *f)
{
    mock_head(r, status, "application/json", (long)body->len, f);
    mock_mark(r);
    size_t start = r->b->len;
    sy_buf_append(r->b, body->p ? body->p : "", body->len);
    mock_seg_end(r, start);
}

void mock_error(struct mock_resp *r, int status, const char *message, const char *type, const char *code,
                const struct mock_fault *f)
{
    struct sy_buf *s = &r->c->th->scratch;
    int si = status_index(status);
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"error\":{\"message\":\"");
    if (f && f->error_message.p)
        sy_buf_append(s, f->error_message.p, f->error_message.n);
    else
        sy_buf_json_escape(s,
                           message   ? message
                           : si >= 0 ? statuses[si].message
                                     : "Error.",
                           strlen(message   ? message
                                  : si >= 0 ? statuses[si].message
                                            : "Error."));
    SY_BUF_LIT(s, "\",\"type\":\"");
    if (f && f->error_type.p)
        sy_buf_append(s, f->error_type.p, f->error_type.n);
    else
        sy_buf_puts(s, type           ? type
                       : si >= 0      ? statuses[si].type
                       : status < 500 ? "invalid_request_error"
                                      : "server_error");
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
    struct mock_text t;
};

static void usage_json(struct sy_buf *s, const struct comp *x, long ctoks)
{
    long p = (long)(x->q->prompt_chars + 3) / 4;
    if (p < 1)
        p = 1;
    sy_buf_printf(s, "{\"prompt_tokens\":%ld,\"completion_tokens\":%ld,\"total_tokens\":%ld", p, ctoks, p + ctoks);
    if (x->kind == MOCK_CHAT)
        SY_BUF_LIT(s, ",\"prompt_tokens_details\":{\"cached_tokens\":0,\"audio_tokens\":0},"
                      "\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0,"
                      "\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}");
    SY_BUF_LIT(s, "}");
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

static void finish_reason(struct sy_buf *s, const struct mock_fault *f, const char *dflt)
{
    SY_BUF_LIT(s, "\"finish_reason\":\"");
    mock_reason(s, f, dflt);
    SY_BUF_LIT(s, "\"");
}

/* The declared tool is called unless the last message is a tool result
 * (role "tool" / "function"); the tool_call directive forces (1) or
 * suppresses (0) the call. */
static int wants_tool(const struct mock_req *q)
{
    if (!q->tool.n || q->fault.tool_call == 0)
        return 0;
    return q->fault.tool_call > 0 || !q->last_tool_result;
}

/* The content chunks of a text stream (one word each). Returns the words sent. */
static long text_chunks(struct mock_resp *r, struct comp *x, const char *tail, long err_after)
{
    const struct mock_fault *f = &x->q->fault;
    struct sy_buf *s = &r->c->th->scratch;
    long i;
    size_t payload = 0; /* decoded body bytes so far (for body_bytes) */
    for (i = 0; mock_text_more(&x->t, f, i, payload); i++) {
        if (i == err_after)
            break;
        size_t start = r->b->len;
        sy_buf_reset(s);
        head_fields(s, x, 1);
        if (x->kind == MOCK_CHAT) {
            SY_BUF_LIT(s, "{\"index\":0,\"delta\":{\"content\":\"");
            mock_text_word(s, &x->t, i);
            SY_BUF_LIT(s, "\"},\"logprobs\":null,\"finish_reason\":null}");
        } else {
            SY_BUF_LIT(s, "{\"text\":\"");
            mock_text_word(s, &x->t, i);
            SY_BUF_LIT(s, "\",\"index\":0,\"logprobs\":null,\"finish_reason\":null}");
        }
        sy_buf_puts(s, tail);
        event(r, s);
        payload += s->len + 8;
        mock_seg_end(r, start);
    }
    return i;
}

/* The content chunks of a tool-call stream: the chunk opening the call, then
 * the arguments in pieces. Returns the completion tokens (argument bytes / 4). */
static long tool_chunks(struct mock_resp *r, struct comp *x, const char *tail, long err_after)
{
    struct sy_buf *s = &r->c->th->scratch, *args = &r->c->th->aux;
    const struct mock_req *q = x->q;
    long i = 0;
    sy_buf_reset(args);
    mock_tool_args(args, q);
    for (size_t off = 0, pn = 0; i == 0 || off < args->len; off += pn, i++) {
        if (i == err_after)
            break;
        size_t start = r->b->len;
        sy_buf_reset(s);
        head_fields(s, x, 1);
        if (i == 0) {
            pn = 0;
            SY_BUF_LIT(s, "{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_mock1\","
                          "\"type\":\"function\",\"function\":{\"name\":\"");
            sy_buf_append(s, q->tool.p, q->tool.n);
            SY_BUF_LIT(s, "\",\"arguments\":\"\"}}]},\"logprobs\":null,\"finish_reason\":null}");
        } else {
            pn = mock_piece(args->p, args->len, off, PIECE);
            SY_BUF_LIT(s, "{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"
                          "{\"arguments\":\"");
            sy_buf_json_escape(s, args->p + off, pn);
            SY_BUF_LIT(s, "\"}}]},\"logprobs\":null,\"finish_reason\":null}");
        }
        sy_buf_puts(s, tail);
        event(r, s);
        mock_seg_end(r, start);
    }
    return (long)(args->len + 3) / 4;
}

static void stream(struct mock_resp *r, struct comp *x, int truncated, int tool)
{
    const struct mock_fault *f = &x->q->fault;
    struct sy_buf *s = &r->c->th->scratch;
    int with_usage = x->q->include_usage && f->no_usage <= 0;
    const char *tail = with_usage ? "],\"usage\":null}" : "]}";
    long err_after = mock_stream_error_after(f);
    mock_head(r, 200, "text/event-stream; charset=utf-8", -1, NULL);
    if (x->kind == MOCK_CHAT) {
        sy_buf_reset(s);
        head_fields(s, x, 1);
        if (tool)
            SY_BUF_LIT(s, "{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,");
        else
            SY_BUF_LIT(s, "{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",");
        SY_BUF_LIT(s, "\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}");
        sy_buf_puts(s, tail);
        event(r, s);
    }
    mock_mark(r);
    long ctoks = tool ? tool_chunks(r, x, tail, err_after) : text_chunks(r, x, tail, err_after);
    if (err_after >= 0) { /* a mid-stream error ends the body */
        sy_buf_reset(s);
        SY_BUF_LIT(s, "{\"error\":{\"message\":\"");
        if (f->error_message.p)
            sy_buf_append(s, f->error_message.p, f->error_message.n);
        else
            SY_BUF_LIT(s, "The server had an error while processing your request. Sorry about that!");
        SY_BUF_LIT(s, "\",\"type\":\"");
        sy_buf_append(s, f->stream_error.p, f->stream_error.n);
        SY_BUF_LIT(s, "\",\"param\":null,\"code\":null}}");
        event(r, s);
        mock_mark(r);
        mock_chunked_end(r);
        return;
    }
    sy_buf_reset(s);
    head_fields(s, x, 1);
    if (x->kind == MOCK_CHAT)
        SY_BUF_LIT(s, "{\"index\":0,\"delta\":{},\"logprobs\":null,");
    else
        SY_BUF_LIT(s, "{\"text\":\"\",\"index\":0,\"logprobs\":null,");
    finish_reason(s, f, tool ? "tool_calls" : truncated ? "length" : "stop");
    SY_BUF_LIT(s, "}");
    sy_buf_puts(s, tail);
    event(r, s);
    mock_mark(r);
    if (with_usage) {
        sy_buf_reset(s);
        head_fields(s, x, 1);
        SY_BUF_LIT(s, "],\"usage\":");
        usage_json(s, x, ctoks);
        SY_BUF_LIT(s, "}");
        event(r, s);
        mock_mark(r);
    }
    SY_BUF_LIT(r->b, "e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n");
    mock_mark(r);
}

static void whole(struct mock_resp *r, struct comp *x, int truncated, int tool)
{
    const struct mock_fault *f = &x->q->fault;
    struct sy_buf *s = &r->c->th->scratch, *args = &r->c->th->aux;
    sy_buf_reset(s);
    head_fields(s, x, 0);
    if (tool) {
        sy_buf_reset(args);
        mock_tool_args(args, x->q);
        SY_BUF_LIT(s, "{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,"
                      "\"tool_calls\":[{\"id\":\"call_mock1\",\"type\":\"function\",\"function\":"
                      "{\"name\":\"");
        sy_buf_append(s, x->q->tool.p, x->q->tool.n);
        SY_BUF_LIT(s, "\",\"arguments\":\"");
        sy_buf_json_escape(s, args->p, args->len);
        SY_BUF_LIT(s, "\"}}],\"refusal\":null,\"annotations\":[]},\"logprobs\":null,");
        finish_reason(s, f, "tool_calls");
        SY_BUF_LIT(s, "}]");
        if (f->no_usage <= 0) {
            SY_BUF_LIT(s, ",\"usage\":");
            usage_json(s, x, (long)(args->len + 3) / 4);
        }
        SY_BUF_LIT(s, "}");
        mock_body_json(r, 200, s, NULL);
        return;
    }
    if (x->kind == MOCK_CHAT)
        SY_BUF_LIT(s, "{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"");
    else
        SY_BUF_LIT(s, "{\"text\":\"");
    long i = mock_text_all(s, &x->t, f);
    if (x->kind == MOCK_CHAT)
        SY_BUF_LIT(s, "\",\"refusal\":null,\"annotations\":[]},\"logprobs\":null,");
    else
        SY_BUF_LIT(s, "\",\"index\":0,\"logprobs\":null,");
    finish_reason(s, f, truncated ? "length" : "stop");
    SY_BUF_LIT(s, "}]");
    if (f->no_usage <= 0) {
        SY_BUF_LIT(s, ",\"usage\":");
        usage_json(s, x, i);
    }
    SY_BUF_LIT(s, "}");
    mock_body_json(r, 200, s, NULL);
}

void mock_completion(struct mock_resp *r, const struct mock_req *q, enum mock_kind k)
{
    struct comp x = {.kind = k, .q = q, .created = (uint64_t)time(NULL)};
    if (mock_text_init(&x.t, q) < 0)
        return;
    sy_buf_init(&x.id, 64);
    mock_rand_id(r->c->th, &x.id, k == MOCK_CHAT ? "chatcmpl-" : "cmpl-", 29);
    int tool = k == MOCK_CHAT && wants_tool(q);
    if (q->stream)
        stream(r, &x, x.t.truncated, tool);
    else
        whole(r, &x, x.t.truncated, tool);
    sy_buf_free(&x.id);
    mock_text_free(&x.t);
}

/* ---- embeddings ---- */

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
        uint64_t h = mock_fnv1a(q->items[i].p, q->items[i].n);
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
                mock_put_float(s, v[d]);
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
    sy_buf_printf(s, "\",\"usage\":{\"prompt_tokens\":%ld,\"total_tokens\":%ld}}", p ? p : 1, p ? p : 1);
    free(v);
    free(b64);
    mock_body_json(r, 200, s, NULL);
}

/* ---- models ---- */

static const char *const models[] = {
    "gpt-4o-mini", "gpt-4o", "gpt-4.1", "gpt-3.5-turbo-instruct", "text-embedding-3-small", "text-embedding-3-large"};

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
