/* anthropic.c - Anthropic Messages API, also Claude on Vertex AI (the same
 * bodies behind rawPredict / streamRawPredict).
 *
 * | Request                | POST /v1/messages; headers x-api-key (checked when the mock has a
 * |                        | key), anthropic-version (required); body {model, max_tokens (required),
 * |                        | messages, system?, tools?, stream?}. Vertex: POST …/publishers/
 * |                        | anthropic/models/{m}:rawPredict|:streamRawPredict, Bearer token,
 * |                        | body with "anthropic_version" and without "model"
 * | JSON answer            | {"id":"msg_mock…","type":"message","role":"assistant","model":M,
 * |                        | "content":[BLOCK],"stop_reason":R,"stop_sequence":null,"usage":
 * |                        | {"input_tokens":N,"output_tokens":M,"cache_creation_input_tokens":0,
 * |                        | "cache_read_input_tokens":0}}
 * | BLOCK                  | {"type":"text","text":…} (R end_turn, max_tokens when capped), or with
 * |                        | tools and a last user turn without tool_result: {"type":"tool_use",
 * |                        | "id":"toolu_mock1","name":TOOL,"input":{…}} (R tool_use)
 * | Stream (SSE, "event:"  | message_start {message: id, model, content [], usage input_tokens,
 * | and "data:" lines, one | output_tokens 1} / content_block_start {index 0, content_block text ""
 * | event per HTTP chunk)  | or tool_use {id, name, input {}}} / ping / content_block_delta
 * |                        | {text_delta: one word} or {input_json_delta: partial_json "" then
 * |                        | 8-byte pieces}, … / content_block_stop / message_delta {delta
 * |                        | {stop_reason, stop_sequence null}, usage {output_tokens}} / message_stop
 * | Segments               | 0: head + message_start + content_block_start + ping; one per delta;
 * |                        | then content_block_stop, message_delta, message_stop
 * | Error                  | {"type":"error","error":{"type":T,"message":…}}: 400
 * |                        | invalid_request_error, 401 authentication_error, 402 billing_error,
 * |                        | 403 permission_error, 404 not_found_error, 413 request_too_large,
 * |                        | 429 rate_limit_error, 500 api_error, 504 timeout_error,
 * |                        | 529 overloaded_error
 * | Mid-stream error       | stream_error=T: after stream_error_after deltas, "event: error" with
 * |                        | that body, then the end of the body
 * | Extended thinking      | body "thinking":{"type":"enabled",...}: the answer starts with a signed
 * |                        | block {"type":"thinking","thinking":"Mock thinking.","signature":
 * |                        | "mocksig_…"} (streamed: content_block_start thinking, thinking_delta,
 * |                        | signature_delta, content_block_stop at index 0, the rest at index 1).
 * |                        | As the real API, when the last turn carries tool results the last
 * |                        | assistant message must start with a thinking / redacted_thinking
 * |                        | block, else 400 "…Expected `thinking` or `redacted_thinking`, but
 * |                        | found `tool_use`…"; a thinking block whose signature this mock did not
 * |                        | issue (no "mocksig_" prefix) is 400 "Invalid `signature`…"
 * | Token counting         | POST /v1/messages/count_tokens (x-api-key, anthropic-version as above)
 * |                        | and Vertex's …/publishers/anthropic/models/count-tokens:rawPredict
 * |                        | (Bearer token): body {model (required), messages (at least one),
 * |                        | system?, tools?, ...}; generation members (max_tokens, stream,
 * |                        | temperature, ...) are 400 "Extra inputs are not permitted", as the real
 * |                        | counters; answer {"input_tokens":N}, N = mock_count_text(body) + 3
 * |                        | (Vertex: + 5)
 */
#define JSMN_STATIC
#include <jsmn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock.h"

#define PIECE 8 /* bytes of tool-call JSON per input_json_delta */

static const struct {
    int status;
    const char *type, *message;
} errs[] = {
    {400, "invalid_request_error", "Invalid request."},
    {401, "authentication_error", "invalid x-api-key"},
    {402, "billing_error", "Your credit balance is too low to access the Anthropic API."},
    {403, "permission_error", "Your API key does not have permission to use the specified resource."},
    {404, "not_found_error", "The requested resource could not be found."},
    {413, "request_too_large", "Request exceeds the maximum allowed number of bytes."},
    {429, "rate_limit_error",
     "This request would exceed the rate limit for your organization. Please try again later."},
    {500, "api_error", "Internal server error"},
    {504, "timeout_error", "Request timed out"},
    {529, "overloaded_error", "Overloaded"},
};

static int err_index(int status, struct sy_str type)
{
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
        if (type.p ? strlen(errs[i].type) == type.n && memcmp(errs[i].type, type.p, type.n) == 0
                   : errs[i].status == status)
            return (int)i;
    return -1;
}

/* {"type":"error","error":{"type":…,"message":…}} into s. */
static void error_body(struct sy_buf *s, int status, const char *type, const char *message, const struct mock_fault *f,
                       struct sy_str stream_type)
{
    int ei = err_index(status, stream_type);
    SY_BUF_LIT(s, "{\"type\":\"error\",\"error\":{\"type\":\"");
    if (stream_type.p)
        sy_buf_append(s, stream_type.p, stream_type.n);
    else if (f && f->error_type.p)
        sy_buf_append(s, f->error_type.p, f->error_type.n);
    else
        sy_buf_puts(s, type ? type : ei >= 0 ? errs[ei].type : status < 500 ? "invalid_request_error" : "api_error");
    SY_BUF_LIT(s, "\",\"message\":\"");
    if (f && f->error_message.p) {
        sy_buf_append(s, f->error_message.p, f->error_message.n);
    } else {
        const char *m = message ? message : ei >= 0 ? errs[ei].message : "Internal server error";
        sy_buf_json_escape(s, m, strlen(m));
    }
    SY_BUF_LIT(s, "\"}}");
}

void mock_anthropic_error(struct mock_resp *r, int status, const char *type, const char *message,
                          const struct mock_fault *f)
{
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    error_body(s, status, type, message, f, SY_STR_NULL);
    mock_body_json(r, status, s, f);
}

int mock_anthropic_auth(struct mock_resp *r)
{
    const char *k = mock_opts.require_key;
    if (k) {
        const char *a = mock_header(r->c, "x-api-key");
        if (!a || strcmp(a, k) != 0) {
            mock_anthropic_error(r, 401, "authentication_error",
                                 a ? "invalid x-api-key" : "x-api-key header is required", NULL);
            return 0;
        }
    }
    if (!mock_header(r->c, "anthropic-version")) {
        mock_anthropic_error(r, 400, "invalid_request_error", "anthropic-version: header is required", NULL);
        return 0;
    }
    return 1;
}

/* usage; the directives cache_read / cache_write / cache_write_1h give the
 * cache counts (0 by default), cache_write_1h also as cache_creation's
 * ephemeral_1h_input_tokens (the rest of cache_write as ephemeral_5m). */
static void usage(struct sy_buf *s, const struct mock_fault *f, long in, long out)
{
    long cr = f->cache_read > 0 ? f->cache_read : 0, cw = f->cache_write > 0 ? f->cache_write : 0;
    long h1 = f->cache_write_1h > 0 && f->cache_write_1h <= cw ? f->cache_write_1h : 0;
    SY_BUF_LIT(s, "{\"input_tokens\":");
    sy_buf_u64(s, (uint64_t)in);
    SY_BUF_LIT(s, ",\"output_tokens\":");
    sy_buf_u64(s, (uint64_t)out);
    SY_BUF_LIT(s, ",\"cache_creation_input_tokens\":");
    sy_buf_u64(s, (uint64_t)cw);
    SY_BUF_LIT(s, ",\"cache_read_input_tokens\":");
    sy_buf_u64(s, (uint64_t)cr);
    if (cw) {
        SY_BUF_LIT(s, ",\"cache_creation\":{\"ephemeral_5m_input_tokens\":");
        sy_buf_u64(s, (uint64_t)(cw - h1));
        SY_BUF_LIT(s, ",\"ephemeral_1h_input_tokens\":");
        sy_buf_u64(s, (uint64_t)h1);
        SY_BUF_LIT(s, "}");
    }
    SY_BUF_LIT(s, "}");
}

static void message_head(struct mock_resp *r, struct sy_buf *s, const struct mock_req *q)
{
    SY_BUF_LIT(s, "{\"id\":\"");
    mock_rand_id(r->c->th, s, "msg_mock", 20);
    SY_BUF_LIT(s, "\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"");
    sy_buf_append(s, q->model.p ? q->model.p : "", q->model.n);
    SY_BUF_LIT(s, "\",\"content\":[");
}

/* ---- extended thinking ---- */

#define SIG_PREFIX "mocksig_"

static int tskip(const jsmntok_t *t, int n, int i)
{
    int end = t[i].end;
    for (i++; i < n && t[i].start < end; i++)
        ;
    return i;
}

static int teq(const char *js, const jsmntok_t *t, const char *s)
{
    size_t l = strlen(s);
    return t->type == JSMN_STRING && (size_t)(t->end - t->start) == l && !memcmp(js + t->start, s, l);
}

/* Member `key` of object token o (its value's index), or -1. */
static int tget(const char *js, const jsmntok_t *t, int n, int o, const char *key)
{
    if (o < 0 || t[o].type != JSMN_OBJECT)
        return -1;
    for (int k = o + 1, m = 0; m < t[o].size && k + 1 < n; m++) {
        if (teq(js, &t[k], key))
            return k + 1;
        k = tskip(t, n, k + 1);
    }
    return -1;
}

/* 1 when the body turns thinking on; *msg set to a 400 message (static or
 * in err[cap]) when the conversation breaks the thinking rules. */
static int thinking_check(const struct mock_req *q, char *err, size_t cap, const char **msg)
{
    *msg = NULL;
    const char *js = q->body;
    if (!js || !q->body_n)
        return 0;
    jsmn_parser p;
    jsmn_init(&p);
    int nt = jsmn_parse(&p, js, q->body_n, NULL, 0);
    if (nt <= 0)
        return 0;
    jsmntok_t *t = malloc(sizeof *t * (size_t)nt);
    if (!t)
        return 0;
    jsmn_init(&p);
    nt = jsmn_parse(&p, js, q->body_n, t, (unsigned)nt);
    int th = nt > 0 ? tget(js, t, nt, 0, "thinking") : -1, on = 0;
    int ty = tget(js, t, nt, th, "type");
    on = ty >= 0 && teq(js, &t[ty], "enabled");
    int msgs = on ? tget(js, t, nt, 0, "messages") : -1;
    if (msgs >= 0 && t[msgs].type == JSMN_ARRAY) {
        int last = -1, li = -1;
        for (int k = msgs + 1, m = 0; m < t[msgs].size && k < nt; m++, k = tskip(t, nt, k)) {
            int role = tget(js, t, nt, k, "role");
            if (role >= 0 && teq(js, &t[role], "assistant"))
                last = k, li = m;
        }
        int c = tget(js, t, nt, last, "content");
        if (q->last_tool_result && c >= 0 && t[c].type == JSMN_ARRAY && t[c].size > 0) {
            int b0 = c + 1, bt = tget(js, t, nt, b0, "type");
            if (bt < 0 || (!teq(js, &t[bt], "thinking") && !teq(js, &t[bt], "redacted_thinking"))) {
                snprintf(err, cap,
                         "messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%.*s`. "
                         "When `thinking` is enabled, a final `assistant` message must start with a thinking block "
                         "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you "
                         "include thinking blocks from previous turns. To avoid this requirement, disable "
                         "`thinking`.",
                         li, bt >= 0 ? t[bt].end - t[bt].start : 4, bt >= 0 ? js + t[bt].start : "none");
                *msg = err;
            } else if (teq(js, &t[bt], "thinking")) {
                int sg = tget(js, t, nt, b0, "signature");
                if (sg < 0 || t[sg].type != JSMN_STRING || t[sg].end - t[sg].start <= (int)strlen(SIG_PREFIX) ||
                    memcmp(js + t[sg].start, SIG_PREFIX, strlen(SIG_PREFIX))) {
                    snprintf(err, cap, "messages.%d.content.0: Invalid `signature` in `thinking` block", li);
                    *msg = err;
                }
            }
        }
    }
    free(t);
    return on;
}

/* The signed thinking block, whole. */
static void thinking_block(struct mock_resp *r, struct sy_buf *s)
{
    SY_BUF_LIT(s, "{\"type\":\"thinking\",\"thinking\":\"Mock thinking.\",\"signature\":\"");
    mock_rand_id(r->c->th, s, SIG_PREFIX, 24);
    SY_BUF_LIT(s, "\"},");
}

static void tool_block_head(struct sy_buf *s, const struct mock_req *q)
{
    SY_BUF_LIT(s, "{\"type\":\"tool_use\",\"id\":\"toolu_mock1\",\"name\":\"");
    sy_buf_append(s, q->tool.p, q->tool.n);
    SY_BUF_LIT(s, "\",\"input\":");
}

static void whole(struct mock_resp *r, const struct mock_req *q, const struct mock_text *t, int tool, int think)
{
    struct sy_buf *s = &r->c->th->scratch;
    const struct mock_fault *f = &q->fault;
    long out;
    sy_buf_reset(s);
    message_head(r, s, q);
    if (think)
        thinking_block(r, s);
    if (tool) {
        tool_block_head(s, q);
        size_t a = s->len;
        mock_tool_args(s, q);
        out = (long)(s->len - a + 3) / 4;
        SY_BUF_LIT(s, "}],\"stop_reason\":\"");
        mock_reason(s, f, "tool_use");
    } else {
        SY_BUF_LIT(s, "{\"type\":\"text\",\"text\":\"");
        out = mock_text_all(s, t, f);
        SY_BUF_LIT(s, "\"}],\"stop_reason\":\"");
        mock_reason(s, f, t->truncated ? "max_tokens" : "end_turn");
    }
    SY_BUF_LIT(s, "\",\"stop_sequence\":null,\"usage\":");
    usage(s, &q->fault, mock_prompt_tokens(q), out);
    SY_BUF_LIT(s, "}");
    mock_body_json(r, 200, s, NULL);
}

/* One content_block_delta; returns its size. */
static size_t delta(struct mock_resp *r, struct sy_buf *s, int tool, const struct mock_text *t, long i,
                    const char *piece, size_t pn, int bi)
{
    sy_buf_reset(s);
    if (tool) {
        sy_buf_printf(s,
                      "{\"type\":\"content_block_delta\",\"index\":%d,\"delta\":{\"type\":"
                      "\"input_json_delta\",\"partial_json\":\"",
                      bi);
        sy_buf_json_escape(s, piece, pn);
    } else {
        sy_buf_printf(s,
                      "{\"type\":\"content_block_delta\",\"index\":%d,\"delta\":{\"type\":"
                      "\"text_delta\",\"text\":\"",
                      bi);
        mock_text_word(s, t, i);
    }
    SY_BUF_LIT(s, "\"}}");
    mock_sse(r, "content_block_delta", s, 0, 1);
    return s->len;
}

static void stream(struct mock_resp *r, const struct mock_req *q, const struct mock_text *t, int tool, int think)
{
    int bi = think ? 1 : 0; /* the index of the text / tool_use block */
    struct sy_buf *s = &r->c->th->scratch, *args = &r->c->th->aux;
    const struct mock_fault *f = &q->fault;
    long err_after = mock_stream_error_after(f), i = 0, out;
    mock_head(r, 200, r->bedrock_invoke ? "application/vnd.amazon.eventstream" : "text/event-stream; charset=utf-8", -1,
              NULL);
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"type\":\"message_start\",\"message\":");
    message_head(r, s, q);
    SY_BUF_LIT(s, "],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":");
    usage(s, &q->fault, mock_prompt_tokens(q), 1);
    SY_BUF_LIT(s, "}}");
    mock_sse(r, "message_start", s, 0, 0);
    if (think) {
        sy_buf_reset(s);
        SY_BUF_LIT(s, "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":"
                      "\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}");
        mock_sse(r, "content_block_start", s, 0, 0);
        sy_buf_reset(s);
        SY_BUF_LIT(s, "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\","
                      "\"thinking\":\"Mock thinking.\"}}");
        mock_sse(r, "content_block_delta", s, 0, 0);
        sy_buf_reset(s);
        SY_BUF_LIT(s, "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\","
                      "\"signature\":\"");
        mock_rand_id(r->c->th, s, SIG_PREFIX, 24);
        SY_BUF_LIT(s, "\"}}");
        mock_sse(r, "content_block_delta", s, 0, 0);
        sy_buf_reset(s);
        SY_BUF_LIT(s, "{\"type\":\"content_block_stop\",\"index\":0}");
        mock_sse(r, "content_block_stop", s, 0, 0);
    }
    sy_buf_reset(s);
    sy_buf_printf(s, "{\"type\":\"content_block_start\",\"index\":%d,\"content_block\":", bi);
    if (tool) {
        tool_block_head(s, q);
        SY_BUF_LIT(s, "{}}}");
    } else {
        SY_BUF_LIT(s, "{\"type\":\"text\",\"text\":\"\"}}");
    }
    mock_sse(r, "content_block_start", s, 0, 0);
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"type\": \"ping\"}");
    mock_sse(r, "ping", s, 0, 0);
    mock_mark(r);

    if (tool) {
        sy_buf_reset(args);
        mock_tool_args(args, q);
        out = (long)(args->len + 3) / 4;
        for (size_t off = 0, pn = 0; i == 0 || off < args->len; off += pn, i++) {
            if (i == err_after)
                break;
            pn = i == 0 ? 0 : mock_piece(args->p, args->len, off, PIECE); /* first: "" */
            delta(r, s, 1, t, i, args->p + off, pn, bi);
        }
    } else {
        size_t payload = 0;
        for (; mock_text_more(t, f, i, payload); i++) {
            if (i == err_after)
                break;
            payload += delta(r, s, 0, t, i, NULL, 0, bi);
        }
        out = i;
    }
    if (err_after >= 0) { /* a mid-stream error ends the body */
        sy_buf_reset(s);
        error_body(s, 500, NULL, NULL, f, f->stream_error);
        mock_sse(r, "error", s, 0, 1);
        mock_chunked_end(r);
        return;
    }
    sy_buf_reset(s);
    sy_buf_printf(s, "{\"type\":\"content_block_stop\",\"index\":%d}", bi);
    mock_sse(r, "content_block_stop", s, 0, 1);
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"");
    mock_reason(s, f, tool ? "tool_use" : t->truncated ? "max_tokens" : "end_turn");
    SY_BUF_LIT(s, "\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":");
    sy_buf_u64(s, (uint64_t)out);
    SY_BUF_LIT(s, "}}");
    mock_sse(r, "message_delta", s, 0, 1);
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"type\":\"message_stop\"}");
    mock_sse(r, "message_stop", s, 0, 0);
    mock_chunked_end(r);
}

int mock_anthropic(struct mock_resp *r, const struct mock_req *q, int vertex, int stream_it)
{
    const char *bad = NULL;
    if (vertex && q->has_model)
        bad = "model: Extra inputs are not permitted";
    else if (vertex && !q->anthropic_version.p)
        bad = "anthropic_version: Field required";
    else if (!vertex && !q->model.n)
        bad = "model: Field required";
    else if (q->max_tokens < 0)
        bad = "max_tokens: Field required";
    else if (q->n_msgs == 0)
        bad = "messages: at least one message is required";
    if (bad) {
        mock_anthropic_error(r, 400, "invalid_request_error", bad, NULL);
        return 0;
    }
    struct mock_text t;
    if (mock_text_init(&t, q) < 0) {
        mock_anthropic_error(r, 500, NULL, NULL, NULL);
        return 0;
    }
    char err[600];
    const char *terr;
    int think = thinking_check(q, err, sizeof err, &terr);
    if (terr) {
        mock_text_free(&t);
        mock_anthropic_error(r, 400, "invalid_request_error", terr, NULL);
        return 0;
    }
    int tool = mock_wants_tool(q);
    if (stream_it)
        stream(r, q, &t, tool, think);
    else
        whole(r, q, &t, tool, think);
    mock_text_free(&t);
    return stream_it;
}

/* ---- token counting ---- */

long mock_count_text(const char *body, size_t n)
{
    static const char *const keys[] = {"text", "content", "system", "description"};
    jsmn_parser p;
    jsmn_init(&p);
    int nt = jsmn_parse(&p, body, n, NULL, 0);
    if (nt <= 0)
        return -1;
    jsmntok_t *t = malloc(sizeof *t * (size_t)nt);
    if (!t)
        return -1;
    jsmn_init(&p);
    nt = jsmn_parse(&p, body, n, t, (unsigned)nt);
    long sum = nt > 0 && t[0].type == JSMN_OBJECT ? 0 : -1;
    for (int i = 1; sum >= 0 && i + 1 < nt; i++) {
        if (t[i].type != JSMN_STRING || t[i].size != 1 || t[i + 1].type != JSMN_STRING)
            continue; /* a key whose value is a string */
        size_t kl = (size_t)(t[i].end - t[i].start);
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            if (strlen(keys[k]) == kl && !memcmp(body + t[i].start, keys[k], kl))
                sum += t[i + 1].end - t[i + 1].start;
    }
    free(t);
    return sum;
}

void mock_anthropic_count(struct mock_resp *r, const struct mock_req *q, const char *body, size_t n, int vertex)
{
    static const char *const keys[] = {"model", "messages", "max_tokens", "stream", "temperature", "stop_sequences"};
    struct mock_jv v[6];
    const char *bad = NULL;
    if (mock_json_get(body, n, keys, 6, v) < 0)
        bad = "The request body is not a valid JSON object.";
    else if (v[0].type != 's' || !v[0].v.n)
        bad = "model: Field required";
    else if (v[1].type != 'a' || !q->n_msgs)
        bad = "messages: at least one message is required";
    else if (v[2].type)
        bad = "max_tokens: Extra inputs are not permitted";
    else if (v[3].type)
        bad = "stream: Extra inputs are not permitted";
    else if (v[4].type)
        bad = "temperature: Extra inputs are not permitted";
    else if (v[5].type)
        bad = "stop_sequences: Extra inputs are not permitted";
    long c = bad ? -1 : mock_count_text(body, n);
    if (bad || c < 0) {
        mock_anthropic_error(r, 400, "invalid_request_error", bad ? bad : "invalid JSON", &q->fault);
        return;
    }
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    sy_buf_printf(s, "{\"input_tokens\":%ld}", c + (vertex ? MOCK_COUNT_VERTEX_CLAUDE : MOCK_COUNT_ANTHROPIC));
    mock_body_json(r, 200, s, &q->fault);
}
