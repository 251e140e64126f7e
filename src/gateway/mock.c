/* mock.c - the built-in mock model: `mock/<name>` deployments and any
 * deployment with litellm_params.mock_response answer in-process.
 *
 * Responses have OpenAI's exact shapes (chat.completion, chat.completion.chunk
 * SSE, text_completion, embeddings list) and realistic usage: prompt tokens
 * are counted from the request with the tokenizer (LiteLLM's token_counter
 * rules), completion tokens from the returned text.
 */
#include "gateway/gateway.h"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/errors.h"
#include "gateway/filter.h"
#include "gateway/xlate.h"
#include "http/reply.h"
#include "http/server.h"
#include "tokenizer/tokenizer.h"

static const char default_text[] = "This is a mock response from switchyard's built-in model.";

static void put_str(struct sy_buf *b, const char *s, size_t n)
{
    SY_BUF_LIT(b, "\"");
    sy_buf_json_escape(b, s, n);
    SY_BUF_LIT(b, "\"");
}

static void chunk_head(struct sy_buf *b, struct sy_call *c, const char *obj, long created, const char *model)
{
    sy_buf_printf(b, "data: {\"id\":\"%s-%s\",\"object\":\"%s\",\"created\":%ld,\"model\":",
                  c->kind == SY_RK_CHAT ? "chatcmpl" : "cmpl", c->call_id, obj, created);
    put_str(b, model, strlen(model));
}

static void usage_json(struct sy_buf *b, uint64_t pt, uint64_t ct)
{
    sy_buf_printf(b,
                  "{\"completion_tokens\":%llu,\"prompt_tokens\":%llu,\"total_tokens\":%llu,"
                  "\"completion_tokens_details\":null,\"prompt_tokens_details\":null}",
                  (unsigned long long)ct, (unsigned long long)pt, (unsigned long long)(pt + ct));
}

static void mock_json_send(struct sy_call *c)
{
    struct sy_buf h;
    sy_buf_init(&h, 8192);
    sy_call_headers(c, &h, 1);
    sy_filter_head(c, 200, "application/json", h.p, h.len);
    sy_filter_data(c, c->up.up_body.p, c->up.up_body.len);
    sy_call_account(c, 200);
    sy_resp_simple(c->req, 200, h.p, h.len, "application/json", c->up.up_body.p, c->up.up_body.len);
    sy_buf_free(&h);
}

static void send_headers_and(struct sy_call *c, int stream, struct sy_buf *body)
{
    struct sy_buf ab;
    if (c->kind == SY_RK_MESSAGES || c->kind == SY_RK_RESPONSES) { /* the same answer in the client's format */
        sy_buf_init(&ab, 64u << 20);
        if (c->kind == SY_RK_MESSAGES)
            sy_messages_from_mock(c, stream, body, &ab);
        else
            sy_responses_from_mock(c, stream, body, &ab);
        sy_buf_free(body);
        *body = ab;
    }
    c->up.up_status = 200;
    sy_filter_start(c, stream); /* the response filters see the answer as an upstream's */
    if (!stream) {              /* the stages' answer hooks (a post_call guardrail) may hold it: it lives in the call */
        sy_buf_free(&c->up.up_body);
        c->up.up_body = *body;
        sy_buf_init(body, 0);
        if (sy_call_answer(c, &c->up.up_body, mock_json_send) == SY_OK)
            mock_json_send(c);
        return;
    }
    struct sy_buf h;
    sy_buf_init(&h, 8192);
    sy_call_headers(c, &h, 1);
    SY_BUF_LIT(&h, "cache-control: no-cache\r\nx-accel-buffering: no\r\n");
    sy_filter_head(c, 200, "text/event-stream", h.p, h.len);
    sy_resp_start(c->req, 200, h.p, h.len, "text/event-stream");
    c->out.client_started = 1;
    sy_buf_free(&h);
    if (!c->out.wr) {
        sy_resp_chunk(c->req, body->p, body->len);
        sy_filter_data(c, body->p, body->len);
        sy_call_account(c, 200);
        sy_resp_end(c->req);
        return;
    }
    c->in_cb = 1;
    c->out.wr->write(c, body->p, body->len, 2); /* a stage's writer (guardrails) */
    c->in_cb = 0;
    if (c->aborted || c->out.block_status || !c->out.wr->end || c->out.wr->end(c, sy_call_stream_finish) == SY_OK)
        sy_call_stream_finish(c);
}

/* Embedding input count, and a deterministic pseudo-random unit vector per input. */
static int mock_embeddings(struct sy_call *c, const struct sy_tok *tok, const char *model)
{
    struct sy_req *r = c->req;
    json_object *root = json_tokener_parse(r->body.p), *in = NULL, *v;
    size_t n_inputs = 1;
    int dims = 1536, b64 = 0;
    if (root && json_object_object_get_ex(root, "input", &in)) {
        if (json_object_is_type(in, json_type_array)) {
            size_t len = json_object_array_length(in);
            json_object *first = len ? json_object_array_get_idx(in, 0) : NULL;
            n_inputs = first && json_object_is_type(first, json_type_int) ? 1 : len;
        }
    }
    if (!in || (json_object_is_type(in, json_type_array) && n_inputs == 0)) {
        if (root)
            json_object_put(root);
        sy_call_error(c, 400, "invalid_request_error", "input", "'input' is required and must not be empty", NULL, 0);
        return SY_DONE;
    }
    if (root && json_object_object_get_ex(root, "dimensions", &v) && json_object_is_type(v, json_type_int)) {
        int d = json_object_get_int(v);
        if (d > 0 && d <= 8192)
            dims = d;
    }
    if (root && json_object_object_get_ex(root, "encoding_format", &v) && json_object_is_type(v, json_type_string))
        b64 = strcmp(json_object_get_string(v), "base64") == 0;
    if (root)
        json_object_put(root);
    long pt = sy_tok_count_request(tok, r->body.p, r->body.len);
    c->usage.prompt_tokens = pt > 0 ? (uint64_t)pt : 0;
    struct sy_buf b;
    sy_buf_init(&b, 512u << 20);
    SY_BUF_LIT(&b, "{\"object\":\"list\",\"data\":[");
    static const char b64c[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n_inputs; i++) {
        uint64_t x = 0x9E3779B97F4A7C15ULL * (i + 1);
        sy_buf_printf(&b, "%s{\"object\":\"embedding\",\"index\":%zu,\"embedding\":", i ? "," : "", i);
        float *vec = malloc(sizeof(float) * (size_t)dims);
        double norm = 0;
        for (int k = 0; k < dims; k++) {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            vec[k] = (float)((double)((x * 0x2545F4914F6CDD1DULL) >> 40) / 16777216.0 - 0.5);
            norm += (double)vec[k] * vec[k];
        }
        norm = sqrt(norm);
        for (int k = 0; k < dims; k++)
            vec[k] = (float)(vec[k] / norm);
        if (b64) {
            const unsigned char *p = (const unsigned char *)vec;
            size_t len = sizeof(float) * (size_t)dims;
            SY_BUF_LIT(&b, "\"");
            for (size_t k = 0; k < len; k += 3) {
                unsigned v3 =
                    (unsigned)p[k] << 16 | (k + 1 < len ? (unsigned)p[k + 1] << 8 : 0) | (k + 2 < len ? p[k + 2] : 0);
                char q[4] = {b64c[(v3 >> 18) & 63], b64c[(v3 >> 12) & 63], k + 1 < len ? b64c[(v3 >> 6) & 63] : '=',
                             k + 2 < len ? b64c[v3 & 63] : '='};
                sy_buf_append(&b, q, 4);
            }
            SY_BUF_LIT(&b, "\"");
        } else {
            SY_BUF_LIT(&b, "[");
            for (int k = 0; k < dims; k++)
                sy_buf_printf(&b, k ? ",%.8f" : "%.8f", (double)vec[k]);
            SY_BUF_LIT(&b, "]");
        }
        free(vec);
        SY_BUF_LIT(&b, "}");
    }
    SY_BUF_LIT(&b, "],\"model\":");
    put_str(&b, model, strlen(model));
    sy_buf_printf(&b, ",\"usage\":{\"prompt_tokens\":%llu,\"total_tokens\":%llu}}",
                  (unsigned long long)c->usage.prompt_tokens, (unsigned long long)c->usage.prompt_tokens);
    send_headers_and(c, 0, &b);
    sy_buf_free(&b);
    return SY_DONE;
}

int sy_mock_answer(struct sy_call *c)
{
    const struct sy_drt *d = c->drt;
    const struct sy_tok *tok = sy_tok_get((enum sy_tok_encoding)d->enc);
    const char *model = d->d->upstream_model && *d->d->upstream_model ? d->d->upstream_model : d->d->model_name;
    c->up.t_up_start = sy_now_ns();
    if (c->pass.raw) {
        c->up.t_up_end = sy_now_ns();
        sy_call_error(c, 400, "invalid_request_error", "model",
                      "switchyard: the built-in mock model answers chat, completions, embeddings, messages and "
                      "responses only",
                      NULL, 0);
        return SY_DONE;
    }
    if (c->kind == SY_RK_EMBEDDINGS)
        return mock_embeddings(c, tok, model);
    const char *text = d->d->mock_response ? d->d->mock_response : default_text;
    size_t tl = strlen(text);
    const char *pb = c->req->body.p;
    size_t pn = c->req->body.len;
    if (c->kind == SY_RK_RESPONSES && sy_responses_mock_chat(c, &pb, &pn) != 0)
        return SY_DONE;
    long pt = sy_tok_count_request(tok, pb, pn);
    c->usage.prompt_tokens = pt > 0 ? (uint64_t)pt : 0;
    c->usage.completion_tokens = sy_tok_count(tok, text, tl);
    c->usage.have_usage = 1;
    c->up.t_up_first = c->up.t_up_end = sy_now_ns();
    long created = (long)time(NULL);
    struct sy_buf b;
    sy_buf_init(&b, 64u << 20);
    int chat = c->kind == SY_RK_CHAT || c->kind == SY_RK_MESSAGES || c->kind == SY_RK_RESPONSES;
    if (!c->in.stream) {
        sy_buf_printf(&b, "{\"id\":\"%s-%s\",\"object\":\"%s\",\"created\":%ld,\"model\":", chat ? "chatcmpl" : "cmpl",
                      c->call_id, chat ? "chat.completion" : "text_completion", created);
        put_str(&b, model, strlen(model));
        if (chat) {
            SY_BUF_LIT(&b, ",\"system_fingerprint\":null,\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
                           "\"content\":");
            put_str(&b, text, tl);
            SY_BUF_LIT(&b, ",\"tool_calls\":null,\"function_call\":null},\"finish_reason\":\"stop\"}],\"usage\":");
        } else {
            SY_BUF_LIT(&b, ",\"choices\":[{\"text\":");
            put_str(&b, text, tl);
            SY_BUF_LIT(&b, ",\"index\":0,\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":");
        }
        usage_json(&b, c->usage.prompt_tokens, c->usage.completion_tokens);
        SY_BUF_LIT(&b, "}");
        send_headers_and(c, 0, &b);
        sy_buf_free(&b);
        return SY_DONE;
    }
    const char *obj = chat ? "chat.completion.chunk" : "text_completion";
    if (chat) {
        chunk_head(&b, c, obj, created, model);
        SY_BUF_LIT(&b, ",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_"
                       "reason\":null}]}\n\n");
    }
    /* one chunk per word, keeping the separating space with the word */
    size_t i = 0;
    while (i < tl) {
        size_t j = i + 1;
        while (j < tl && text[j] != ' ')
            j++;
        chunk_head(&b, c, obj, created, model);
        if (chat)
            SY_BUF_LIT(&b, ",\"choices\":[{\"index\":0,\"delta\":{\"content\":");
        else
            SY_BUF_LIT(&b, ",\"choices\":[{\"index\":0,\"text\":");
        put_str(&b, text + i, j - i);
        sy_buf_puts(&b, chat ? "},\"finish_reason\":null}]}\n\n" : ",\"logprobs\":null,\"finish_reason\":null}]}\n\n");
        i = j;
    }
    chunk_head(&b, c, obj, created, model);
    sy_buf_puts(&b,
                chat ? ",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
                     : ",\"choices\":[{\"index\":0,\"text\":\"\",\"logprobs\":null,\"finish_reason\":\"stop\"}]}\n\n");
    if (c->in.include_usage || c->kind == SY_RK_MESSAGES || c->kind == SY_RK_RESPONSES) {
        chunk_head(&b, c, obj, created, model);
        SY_BUF_LIT(&b, ",\"choices\":[],\"usage\":");
        usage_json(&b, c->usage.prompt_tokens, c->usage.completion_tokens);
        SY_BUF_LIT(&b, "}\n\n");
    }
    SY_BUF_LIT(&b, "data: [DONE]\n\n");
    send_headers_and(c, 1, &b);
    sy_buf_free(&b);
    return SY_DONE;
}
