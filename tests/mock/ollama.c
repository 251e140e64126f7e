/* ollama.c - Ollama's native API: /api/chat (JSON or NDJSON stream) and /api/embed.
 *
 * | Request                | POST /api/chat {model (required), messages, stream (default true when
 * |                        | absent), tools?, options?:{num_predict}}; no auth (the log shows any
 * |                        | Authorization header sent)
 * | JSON answer            | {"model":M,"created_at":"YYYY-MM-DDTHH:MM:SS.000000Z","message":
 * |                        | {"role":"assistant","content":…},"done":true,"done_reason":D,
 * |                        | "total_duration":1,"load_duration":1,"prompt_eval_count":N,
 * |                        | "prompt_eval_duration":1,"eval_count":M,"eval_duration":1}
 * |                        | (D stop, length when capped by num_predict)
 * | Tool call              | tools and a last turn from the user: message {"role":"assistant",
 * |                        | "content":"","tool_calls":[{"function":{"name":TOOL,"arguments":{…}}}]}
 * |                        | (arguments an object, not a string), D stop
 * | Stream                 | Content-Type application/x-ndjson, one JSON line per HTTP chunk:
 * |                        | {"model","created_at","message":{"role":"assistant","content":word},
 * |                        | "done":false} per word (a tool call: one line with tool_calls), then
 * |                        | {…,"message":{"role":"assistant","content":""},"done":true,
 * |                        | "done_reason":D, durations and counts}
 * | Segments               | 0: the head; one per line
 * | Mid-stream error       | stream_error=MSG: after stream_error_after lines, {"error":MSG} (or
 * |                        | error_message), then the end of the body
 * | Embed                  | POST /api/embed {model, input (string or list), dimensions?} ->
 * |                        | {"model":M,"embeddings":[[…],…],"total_duration":1,"load_duration":1,
 * |                        | "prompt_eval_count":N} (dimension 8 unless given)
 * | Error                  | {"error":"…"}
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mock.h"

#define DEFAULT_DIMS 8

static const struct {
    int status;
    const char *message;
} errs[] = {
    {400, "invalid request"},
    {404, "model not found, try pulling it first"},
    {429, "too many requests"},
    {500, "an error was encountered while running the model"},
    {503, "server busy, please try again.  maximum pending requests exceeded"},
};

void mock_ollama_error(struct mock_resp *r, int status, const char *message, const struct mock_fault *f)
{
    struct sy_buf *s = &r->c->th->scratch;
    const char *m = message;
    for (size_t i = 0; !m && i < sizeof errs / sizeof errs[0]; i++)
        if (errs[i].status == status)
            m = errs[i].message;
    if (!m)
        m = "error";
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"error\":\"");
    if (f && f->error_message.p)
        sy_buf_append(s, f->error_message.p, f->error_message.n);
    else
        sy_buf_json_escape(s, m, strlen(m));
    SY_BUF_LIT(s, "\"}");
    mock_body_json(r, status, s, f);
}

struct line {
    const struct mock_req *q;
    char created[40];
};

static void line_head(struct sy_buf *s, const struct line *l)
{
    SY_BUF_LIT(s, "{\"model\":\"");
    sy_buf_append(s, l->q->model.p, l->q->model.n);
    SY_BUF_LIT(s, "\",\"created_at\":\"");
    sy_buf_puts(s, l->created);
    SY_BUF_LIT(s, "\",\"message\":{\"role\":\"assistant\",\"content\":\"");
}

/* Returns the output tokens it stands for (arguments' bytes / 4). */
static long tool_calls(struct sy_buf *s, const struct mock_req *q)
{
    SY_BUF_LIT(s, "\",\"tool_calls\":[{\"function\":{\"name\":\"");
    sy_buf_append(s, q->tool.p, q->tool.n);
    SY_BUF_LIT(s, "\",\"arguments\":");
    size_t a = s->len;
    mock_tool_args(s, q);
    long out = (long)(s->len - a + 3) / 4;
    SY_BUF_LIT(s, "}}]");
    return out;
}

static void done_fields(struct sy_buf *s, const struct line *l, const char *reason, long out)
{
    SY_BUF_LIT(s, "\"done\":true,\"done_reason\":\"");
    mock_reason(s, &l->q->fault, reason);
    if (l->q->fault.no_usage > 0) { /* no_usage: the counts left out (as Ollama may) */
        SY_BUF_LIT(s, "\",\"total_duration\":1,\"load_duration\":1}");
        return;
    }
    sy_buf_printf(s,
                  "\",\"total_duration\":1,\"load_duration\":1,\"prompt_eval_count\":%ld,"
                  "\"prompt_eval_duration\":1,\"eval_count\":%ld,\"eval_duration\":1}",
                  mock_prompt_tokens(l->q), out);
}

/* s + "\n" as one HTTP chunk, a segment. */
static void ndjson(struct mock_resp *r, struct sy_buf *s)
{
    size_t start = r->b->len;
    SY_BUF_LIT(s, "\n");
    mock_chunk(r, s->p, s->len);
    mock_seg_end(r, start);
}

static void chat(struct mock_resp *r, const struct mock_req *q, const struct mock_text *t, int tool, int stream_it)
{
    struct sy_buf *s = &r->c->th->scratch;
    const struct mock_fault *f = &q->fault;
    struct line l = {.q = q};
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(l.created, sizeof l.created, "%Y-%m-%dT%H:%M:%S.000000Z", &tm);
    const char *reason = !tool && t->truncated ? "length" : "stop";
    long out;
    if (!stream_it) {
        sy_buf_reset(s);
        line_head(s, &l);
        if (tool) {
            out = tool_calls(s, q);
        } else {
            out = mock_text_all(s, t, f);
            SY_BUF_LIT(s, "\"");
        }
        SY_BUF_LIT(s, "},");
        done_fields(s, &l, reason, out);
        mock_body_json(r, 200, s, NULL);
        return;
    }
    long err_after = mock_stream_error_after(f), i = 0;
    mock_head(r, 200, "application/x-ndjson", -1, NULL);
    mock_mark(r);
    if (tool) {
        if (err_after != 0) {
            sy_buf_reset(s);
            line_head(s, &l);
            out = tool_calls(s, q);
            SY_BUF_LIT(s, "},\"done\":false}");
            ndjson(r, s);
            i = 1;
        } else {
            out = 0;
        }
    } else {
        size_t payload = 0;
        for (; mock_text_more(t, f, i, payload) && i != err_after; i++) {
            sy_buf_reset(s);
            line_head(s, &l);
            mock_text_word(s, t, i);
            SY_BUF_LIT(s, "\"},\"done\":false}");
            ndjson(r, s);
            payload += s->len;
        }
        out = i;
    }
    sy_buf_reset(s);
    if (err_after >= 0) {
        SY_BUF_LIT(s, "{\"error\":\"");
        if (f->error_message.p)
            sy_buf_append(s, f->error_message.p, f->error_message.n);
        else
            sy_buf_append(s, f->stream_error.p, f->stream_error.n);
        SY_BUF_LIT(s, "\"}");
    } else {
        line_head(s, &l);
        SY_BUF_LIT(s, "\"},");
        done_fields(s, &l, reason, out);
    }
    ndjson(r, s);
    mock_chunked_end(r);
}

static void embed(struct mock_resp *r, const struct mock_req *q)
{
    struct sy_buf *s = &r->c->th->scratch;
    long dims = q->dimensions > 0 ? q->dimensions : DEFAULT_DIMS;
    if (dims > 16384)
        dims = 16384;
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"model\":\"");
    sy_buf_append(s, q->model.p, q->model.n);
    SY_BUF_LIT(s, "\",\"embeddings\":[");
    for (int i = 0; i < q->n_items; i++) {
        if (i)
            SY_BUF_LIT(s, ",");
        mock_vector(s, q->items[i], dims);
    }
    sy_buf_printf(s, "],\"total_duration\":1,\"load_duration\":1,\"prompt_eval_count\":%ld}", mock_prompt_tokens(q));
    mock_body_json(r, 200, s, NULL);
}

int mock_ollama(struct mock_resp *r, const struct mock_req *q, int emb)
{
    if (!q->model.n) {
        mock_ollama_error(r, 400, "model is required", NULL);
        return 0;
    }
    if (emb) {
        embed(r, q);
        return 0;
    }
    struct mock_text t;
    if (mock_text_init(&t, q) < 0) {
        mock_ollama_error(r, 500, NULL, NULL);
        return 0;
    }
    int stream_it = q->stream_set ? q->stream : 1;
    chat(r, q, &t, mock_wants_tool(q), stream_it);
    mock_text_free(&t);
    return stream_it;
}
