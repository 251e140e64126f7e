/* cohere.c - Cohere API v2: chat (JSON or SSE) and embed.
 *
 * | Request                | POST /v2/chat, POST /v2/embed; Authorization: Bearer K (checked when
 * |                        | the mock has a key; 401 {"id","message":"invalid api token"} /
 * |                        | "no api key supplied")
 * | Chat body              | {model (required), messages (required), stream?, max_tokens?, tools?:
 * |                        | [{type:"function",function:{name,parameters}}]}
 * | Chat answer            | {"id":UUID,"message":{"role":"assistant","content":[{"type":"text",
 * |                        | "text":…}]},"finish_reason":F,"usage":{"billed_units":{"input_tokens":
 * |                        | N,"output_tokens":M},"tokens":{"input_tokens":N,"output_tokens":M}}}
 * |                        | (F COMPLETE, MAX_TOKENS when capped)
 * | Tool call              | tools and a last turn from the user (not role "tool"): message
 * |                        | {"role":"assistant","tool_plan":"I will call TOOL.","tool_calls":
 * |                        | [{"id":"call_mock1","type":"function","function":{"name":TOOL,
 * |                        | "arguments":"{…}"}}]}, F TOOL_CALL
 * | Stream (SSE, "event:"  | message-start {id, delta:{message:{role, content [], tool_plan "",
 * | + "data:" lines)       | tool_calls [], citations []}}} / content-start {index 0, delta:
 * |                        | {message:{content:{type text, text ""}}}} / content-delta {index 0,
 * |                        | delta:{message:{content:{text: word}}}} per word / content-end
 * |                        | {index 0} / message-end {delta:{finish_reason, usage}}. Tools:
 * |                        | message-start / tool-plan-delta {delta:{message:{tool_plan: word}}}
 * |                        | per word / tool-call-start {index 0, delta:{message:{tool_calls:{id,
 * |                        | type, function:{name, arguments ""}}}}} / tool-call-delta {index 0,
 * |                        | delta:{message:{tool_calls:{function:{arguments: 8-byte piece}}}}} /
 * |                        | tool-call-end / message-end
 * | Segments               | 0: head + message-start (+ content-start); one per delta; the rest
 * | Mid-stream error       | stream_error=F (e.g. ERROR): after stream_error_after deltas,
 * |                        | message-end {delta:{error:…, finish_reason:F, usage}}
 * | Embed                  | {model, texts, input_type (required), embedding_types?,
 * |                        | output_dimension?} -> {"id":UUID,"embeddings":{"float":[[…],…]},
 * |                        | "texts":[…],"meta":{"api_version":{"version":"2"},"billed_units":
 * |                        | {"input_tokens":N}},"response_type":"embeddings_by_type"}
 * |                        | (dimension 8 unless output_dimension; only "float" vectors)
 * | Error                  | {"id":UUID,"message":…}
 */
#include <stdlib.h>
#include <string.h>

#include "mock.h"

#define PIECE        8
#define DEFAULT_DIMS 8

static const struct {
    int status;
    const char *message;
} errs[] = {
    {400, "invalid request"},
    {401, "invalid api token"},
    {402, "Please add or update your payment method at https://dashboard.cohere.com/billing"},
    {404, "model not found"},
    {429, "You are past the per minute request limit, please wait and try again later."},
    {499, "request cancelled by the user"},
    {500, "internal server error, this has been reported to our developers."},
    {503, "service unavailable"},
    {504, "request timed out"},
};

void mock_cohere_error(struct mock_resp *r, int status, const char *message, const struct mock_fault *f)
{
    struct sy_buf *s = &r->c->th->scratch;
    const char *m = message;
    for (size_t i = 0; !m && i < sizeof errs / sizeof errs[0]; i++)
        if (errs[i].status == status)
            m = errs[i].message;
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"id\":\"");
    mock_uuid(r->c->th, s);
    SY_BUF_LIT(s, "\",\"message\":\"");
    if (f && f->error_message.p)
        sy_buf_append(s, f->error_message.p, f->error_message.n);
    else
        sy_buf_json_escape(s, m ? m : "error", strlen(m ? m : "error"));
    SY_BUF_LIT(s, "\"}");
    mock_body_json(r, status, s, f);
}

int mock_cohere_auth(struct mock_resp *r)
{
    const char *k = mock_opts.require_key;
    if (!k)
        return 1;
    const char *a = mock_header(r->c, "authorization");
    if (a && strncmp(a, "Bearer ", 7) == 0 && strcmp(a + 7, k) == 0)
        return 1;
    mock_cohere_error(r, 401, a ? "invalid api token" : "no api key supplied", NULL);
    return 0;
}

static void usage(struct sy_buf *s, long in, long out)
{
    sy_buf_printf(s,
                  "\"usage\":{\"billed_units\":{\"input_tokens\":%ld,\"output_tokens\":%ld},"
                  "\"tokens\":{\"input_tokens\":%ld,\"output_tokens\":%ld}}",
                  in, out, in, out);
}

static void tool_plan(struct sy_buf *s, const struct mock_req *q)
{
    SY_BUF_LIT(s, "I will call ");
    sy_buf_append(s, q->tool.p, q->tool.n);
    SY_BUF_LIT(s, ".");
}

static void whole(struct mock_resp *r, const struct mock_req *q, const struct mock_text *t, int tool)
{
    struct sy_buf *s = &r->c->th->scratch, *args = &r->c->th->aux;
    const struct mock_fault *f = &q->fault;
    long out;
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"id\":\"");
    mock_uuid(r->c->th, s);
    SY_BUF_LIT(s, "\",\"message\":{\"role\":\"assistant\",");
    if (tool) {
        sy_buf_reset(args);
        mock_tool_args(args, q);
        out = (long)(args->len + 3) / 4;
        SY_BUF_LIT(s, "\"tool_plan\":\"");
        tool_plan(s, q);
        SY_BUF_LIT(s, "\",\"tool_calls\":[{\"id\":\"call_mock1\",\"type\":\"function\",\"function\":"
                      "{\"name\":\"");
        sy_buf_append(s, q->tool.p, q->tool.n);
        SY_BUF_LIT(s, "\",\"arguments\":\"");
        sy_buf_json_escape(s, args->p, args->len);
        SY_BUF_LIT(s, "\"}}]},\"finish_reason\":\"");
        mock_reason(s, f, "TOOL_CALL");
    } else {
        SY_BUF_LIT(s, "\"content\":[{\"type\":\"text\",\"text\":\"");
        out = mock_text_all(s, t, f);
        SY_BUF_LIT(s, "\"}]},\"finish_reason\":\"");
        mock_reason(s, f, t->truncated ? "MAX_TOKENS" : "COMPLETE");
    }
    SY_BUF_LIT(s, "\",");
    usage(s, mock_prompt_tokens(q), out);
    SY_BUF_LIT(s, "}");
    mock_body_json(r, 200, s, NULL);
}

static void stream(struct mock_resp *r, const struct mock_req *q, const struct mock_text *t, int tool)
{
    struct sy_buf *s = &r->c->th->scratch, *args = &r->c->th->aux;
    const struct mock_fault *f = &q->fault;
    long err_after = mock_stream_error_after(f), i = 0, out;
    mock_head(r, 200, "text/event-stream", -1, NULL);
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"id\":\"");
    mock_uuid(r->c->th, s);
    SY_BUF_LIT(s, "\",\"type\":\"message-start\",\"delta\":{\"message\":{\"role\":\"assistant\","
                  "\"content\":[],\"tool_plan\":\"\",\"tool_calls\":[],\"citations\":[]}}}");
    mock_sse(r, "message-start", s, 0, 0);
    if (!tool) {
        sy_buf_reset(s);
        SY_BUF_LIT(s, "{\"type\":\"content-start\",\"index\":0,\"delta\":{\"message\":{\"content\":"
                      "{\"type\":\"text\",\"text\":\"\"}}}}");
        mock_sse(r, "content-start", s, 0, 0);
    }
    mock_mark(r);
    if (tool) {
        /* the plan, word by word; then the call, in pieces */
        sy_buf_reset(args);
        tool_plan(args, q);
        size_t plan_len = args->len, off = 0;
        mock_tool_args(args, q);
        out = (long)(args->len - plan_len + 3) / 4;
        for (; off < plan_len && i != err_after; i++) {
            const char *sp = memchr(args->p + off + 1, ' ', plan_len - off - 1);
            size_t end = sp ? (size_t)(sp - args->p) : plan_len;
            sy_buf_reset(s);
            SY_BUF_LIT(s, "{\"type\":\"tool-plan-delta\",\"delta\":{\"message\":{\"tool_plan\":\"");
            sy_buf_append(s, args->p + off, end - off);
            SY_BUF_LIT(s, "\"}}}");
            mock_sse(r, "tool-plan-delta", s, 0, 1);
            off = end;
        }
        if (i != err_after) {
            sy_buf_reset(s);
            SY_BUF_LIT(s, "{\"type\":\"tool-call-start\",\"index\":0,\"delta\":{\"message\":"
                          "{\"tool_calls\":{\"id\":\"call_mock1\",\"type\":\"function\","
                          "\"function\":{\"name\":\"");
            sy_buf_append(s, q->tool.p, q->tool.n);
            SY_BUF_LIT(s, "\",\"arguments\":\"\"}}}}}");
            mock_sse(r, "tool-call-start", s, 0, 1);
            for (off = plan_len; off < args->len && i != err_after; i++) {
                size_t pn = mock_piece(args->p, args->len, off, PIECE);
                sy_buf_reset(s);
                SY_BUF_LIT(s, "{\"type\":\"tool-call-delta\",\"index\":0,\"delta\":{\"message\":"
                              "{\"tool_calls\":{\"function\":{\"arguments\":\"");
                sy_buf_json_escape(s, args->p + off, pn);
                SY_BUF_LIT(s, "\"}}}}}");
                mock_sse(r, "tool-call-delta", s, 0, 1);
                off += pn;
            }
            if (err_after < 0) {
                sy_buf_reset(s);
                SY_BUF_LIT(s, "{\"type\":\"tool-call-end\",\"index\":0}");
                mock_sse(r, "tool-call-end", s, 0, 1);
            }
        }
    } else {
        size_t payload = 0;
        for (; mock_text_more(t, f, i, payload) && i != err_after; i++) {
            sy_buf_reset(s);
            SY_BUF_LIT(s, "{\"type\":\"content-delta\",\"index\":0,\"delta\":{\"message\":"
                          "{\"content\":{\"text\":\"");
            mock_text_word(s, t, i);
            SY_BUF_LIT(s, "\"}}}}");
            mock_sse(r, "content-delta", s, 0, 1);
            payload += s->len;
        }
        out = i;
        if (err_after < 0) {
            sy_buf_reset(s);
            SY_BUF_LIT(s, "{\"type\":\"content-end\",\"index\":0}");
            mock_sse(r, "content-end", s, 0, 1);
        }
    }
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"type\":\"message-end\",\"delta\":{");
    if (err_after >= 0) {
        SY_BUF_LIT(s, "\"error\":\"");
        if (f->error_message.p)
            sy_buf_append(s, f->error_message.p, f->error_message.n);
        else
            SY_BUF_LIT(s, "internal server error, this has been reported to our developers.");
        SY_BUF_LIT(s, "\",\"finish_reason\":\"");
        sy_buf_append(s, f->stream_error.p, f->stream_error.n);
    } else {
        SY_BUF_LIT(s, "\"finish_reason\":\"");
        mock_reason(s, f, tool ? "TOOL_CALL" : t->truncated ? "MAX_TOKENS" : "COMPLETE");
    }
    SY_BUF_LIT(s, "\",");
    usage(s, mock_prompt_tokens(q), out);
    SY_BUF_LIT(s, "}}");
    mock_sse(r, "message-end", s, 0, 0);
    mock_chunked_end(r);
}

static void embed(struct mock_resp *r, const struct mock_req *q)
{
    struct sy_buf *s = &r->c->th->scratch;
    long dims = q->dimensions > 0 ? q->dimensions : DEFAULT_DIMS;
    if (dims > 16384)
        dims = 16384;
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"id\":\"");
    mock_uuid(r->c->th, s);
    SY_BUF_LIT(s, "\",\"embeddings\":{\"float\":[");
    for (int i = 0; i < q->n_items; i++) {
        if (i)
            SY_BUF_LIT(s, ",");
        mock_vector(s, q->items[i], dims);
    }
    SY_BUF_LIT(s, "]},\"texts\":[");
    for (int i = 0; i < q->n_items; i++) {
        SY_BUF_LIT(s, "\"");
        sy_buf_append(s, q->items[i].p, q->items[i].n);
        sy_buf_puts(s, i + 1 < q->n_items ? "\"," : "\"");
    }
    sy_buf_printf(s,
                  "],\"meta\":{\"api_version\":{\"version\":\"2\"},\"billed_units\":"
                  "{\"input_tokens\":%ld}},\"response_type\":\"embeddings_by_type\"}",
                  mock_prompt_tokens(q));
    mock_body_json(r, 200, s, NULL);
}

int mock_cohere(struct mock_resp *r, const struct mock_req *q, int emb)
{
    const char *bad = NULL;
    if (!q->model.n)
        bad = "invalid request: model must be specified";
    else if (emb && q->n_items == 0)
        bad = "invalid request: texts must not be empty";
    else if (emb && !q->input_type.p)
        bad = "invalid request: input_type is required for embed-v3 and newer models";
    else if (!emb && q->n_msgs == 0)
        bad = "invalid request: messages must not be empty";
    if (bad) {
        mock_cohere_error(r, 400, bad, NULL);
        return 0;
    }
    if (emb) {
        embed(r, q);
        return 0;
    }
    struct mock_text t;
    if (mock_text_init(&t, q) < 0) {
        mock_cohere_error(r, 500, NULL, NULL);
        return 0;
    }
    int tool = mock_wants_tool(q);
    if (q->stream)
        stream(r, q, &t, tool);
    else
        whole(r, q, &t, tool);
    mock_text_free(&t);
    return q->stream;
}
