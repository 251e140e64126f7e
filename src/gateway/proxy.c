/* proxy.c - the upstream stage for OpenAI-compatible providers (pass-through).
 *
 * The request body is forwarded as three pieces without copying or parsing:
 * the bytes before the `model` value, the deployment's upstream model as a
 * JSON string, and the bytes after it. Non-streaming responses are buffered
 * (capped) so `usage` can be read and errors rewritten into LiteLLM's shape;
 * streaming responses are written to the client as each piece arrives, never
 * held back, with backpressure: when the client's write queue passes
 * HIGH_WATER the upstream read is paused until it drains. A client that goes
 * away cancels the upstream transfer (its connection is closed, so the
 * provider stops generating); once the stream had started, the call is billed
 * for the prompt and the output streamed so far ("a client that leaves
 * mid-stream" below). Every answer is priced on its usage: the provider's, or
 * counted by our tokenizer when it reports none ("usage"). Retries (router
 * semantics, reference §3.5) happen only before any byte reached the client.
 *
 *   attempt:  pick deployment -> sy_ureq_start -> on_head -> on_body* -> on_done
 *   on_done:  success -> reply/end | retryable & attempts left -> timer -> attempt
 *             | error -> LiteLLM error JSON (or an SSE error frame mid-stream)
 */
#include "gateway/gateway.h"
#include "gateway/stage.h"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/errors.h"
#include "core/log.h"
#include "gateway/ustream.h"
#include "gateway/filter.h"
#include "gateway/offload.h"
#include "gateway/usage.h"
#include "gateway/xlate.h"
#include "providers/adapter.h"
#include "http/reply.h"
#include "http/server.h"
#include "keys/keys.h"
#include "limits/limits.h"
#include "tokenizer/tokenizer.h"
#include "upstream/client.h"
#include "metrics/metrics.h"

#define HIGH_WATER     (1u << 20)
#define MAX_RESPONSE   (256u << 20)
#define MAX_ERROR_BODY (1u << 20)

static void attempt(struct sy_call *c);
static void launch(struct sy_call *c);
static void attempt_end(struct sy_call *c, int ok);
static void attempt_release(struct sy_call *c);
static int sdk_retry(struct sy_call *c);
static void on_abort(struct sy_req *r);
static void stream_cut(struct sy_call *c);
static int failed(struct sy_call *c, int err);
static int mock_failure(struct sy_call *c);
static int pass_write(struct sy_call *c, const char *p, size_t n);

/* "OpenAI", "Azure", else the provider name capitalized, as LiteLLM's
 * exception texts name it ("<Provider>Exception"). */
const char *sy_provider_label(const struct sy_drt *d, char *buf, size_t cap)
{
    const char *n = d->prov ? d->prov->name : d->d->provider ? d->d->provider : "OpenAI";
    if (strcmp(n, "openai") == 0 || strcmp(n, "text-completion-openai") == 0)
        return "OpenAI";
    if (strcmp(n, "azure") == 0)
        return "Azure";
    if (strcmp(n, "vertex_ai") == 0)
        return "VertexAI";
    snprintf(buf, cap, "%s", n);
    if (buf[0] >= 'a' && buf[0] <= 'z')
        buf[0] = (char)(buf[0] - 32);
    return buf;
}

/* ---- finishing --------------------------------------------------------- */

/* LiteLLM's error JSON into b; a non-NULL openai_code (the upstream's own
 * `error.code`, e.g. "context_length_exceeded") is kept as a member
 * "openai_code" after "code", which stays the status string as LiteLLM's
 * ProxyException.to_dict renders it (reference §1.3):
 *   {"error":{"message":..,"type":..,"param":..,"code":"400","openai_code":".."}} */
static void error_body(struct sy_buf *b, int status, const char *type, const char *param, const char *msg,
                       const char *openai_code)
{
    sy_error_json(b, status, type, param, msg);
    if (openai_code && b->len >= 2) {
        b->len -= 2; /* reopen the error object: drop "}}" */
        SY_BUF_LIT(b, ",\"openai_code\":\"");
        sy_buf_json_escape(b, openai_code, strlen(openai_code));
        SY_BUF_LIT(b, "\"}}");
    }
}

static void finish_error_code(struct sy_call *c, int status, const char *cls, const char *type, const char *param,
                              const char *upmsg, const char *openai_code);

static void finish_error(struct sy_call *c, int status, const char *cls, const char *type, const char *param,
                         const char *upmsg)
{
    finish_error_code(c, status, cls, type, param, upmsg, NULL);
}

static void finish_error_code(struct sy_call *c, int status, const char *cls, const char *type, const char *param,
                              const char *upmsg, const char *openai_code)
{
    char pl[64];
    char *msg = NULL;
    if (!c->drt || (upmsg && strncmp(upmsg, "litellm.", 8) == 0))
        msg = strdup(upmsg ? upmsg : ""); /* router errors, and adapters' complete messages
                                             (UnsupportedParamsError ...), are LiteLLM's own texts */
    else if (asprintf(&msg, "litellm.%s: %s: %sException - %s", cls, cls, sy_provider_label(c->drt, pl, sizeof pl),
                      upmsg ? upmsg : "") < 0)
        msg = NULL;
    c->out.exception_class = cls;
    c->out.llm_failed = 1;
    c->out.err_msg = msg; /* the logging callbacks' error_str (stages/log.c), while accounted */
    if (c->out.client_started) {
        /* mid-stream: an SSE error frame, then [DONE], as LiteLLM (reference §6);
         * an Anthropic client gets an `error` event */
        struct sy_buf b;
        sy_buf_init(&b, 1 << 20);
        if (!sy_xlate_stream_error(c, status, msg, &b)) {
            SY_BUF_LIT(&b, "data: ");
            error_body(&b, status, type, param, msg, openai_code);
            SY_BUF_LIT(&b, "\n\ndata: [DONE]\n\n");
        }
        sy_resp_chunk(c->req, b.p, b.len);
        sy_filter_data(c, b.p, b.len);
        sy_buf_free(&b);
        sy_call_account(c, status);
        c->out.err_msg = NULL; /* read by the finish hooks only; the answer's end may free c */
        sy_resp_end(c->req);
    } else {
        char extra[64];
        size_t el = 0;
        if (c->up.retry_after_hdr[0])
            el = (size_t)snprintf(extra, sizeof extra, "retry-after: %s\r\n", c->up.retry_after_hdr);
        struct sy_buf h, b;
        sy_buf_init(&h, 16384);
        sy_buf_init(&b, 1 << 20);
        sy_call_headers(c, &h, 1);
        if (el)
            sy_buf_append(&h, extra, el);
        if (!sy_xlate_client_error(c->kind, status, msg, &b))
            error_body(&b, status, type, param, msg, openai_code);
        sy_call_account(c, status);
        c->out.err_msg = NULL; /* read by the finish hooks only; the answer frees c */
        sy_resp_simple(c->req, status, h.p, h.len, "application/json", b.p, b.len);
        sy_buf_free(&h);
        sy_buf_free(&b);
    }
    free(msg);
}

/* A native same-format attempt's error (sy_xlate_native_error): the
 * provider's status, body and content type as they came (Claude Code and
 * Codex match their recovery on the provider's wording); our headers. */
static void finish_native_error(struct sy_call *c)
{
    int st = c->x->native_status;
    const char *cls = c->x->have_err && c->x->err.cls[0]         ? c->x->err.cls
                      : c->rt.err_class == -2                    ? "ContextWindowExceededError"
                      : c->rt.err_class == SY_EXC_CONTENT_POLICY ? "ContentPolicyViolationError"
                                                                 : sy_status_exception_class(st);
    c->out.exception_class = cls;
    c->out.llm_failed = 1;
    struct sy_buf h;
    sy_buf_init(&h, 16384);
    sy_call_headers(c, &h, 1);
    if (c->up.retry_after_hdr[0])
        sy_buf_printf(&h, "retry-after: %s\r\n", c->up.retry_after_hdr);
    sy_call_account(c, st);
    sy_resp_simple(c->req, st, h.p, h.len, c->up.up_ctype[0] ? c->up.up_ctype : "application/json",
                   c->up.up_body.p ? c->up.up_body.p : "", c->up.up_body.len);
    sy_buf_free(&h);
}

static void finish_upstream_error(struct sy_call *c)
{
    if (sy_xlate_native_error(c)) {
        finish_native_error(c);
        return;
    }
    if (c->x && c->x->have_err) { /* decoded by the provider's adapter (xlate.c) */
        const struct sy_xerr *e = &c->x->err;
        const char *cls = e->cls[0]                                  ? e->cls
                          : c->rt.err_class == -2                    ? "ContextWindowExceededError"
                          : c->rt.err_class == SY_EXC_CONTENT_POLICY ? "ContentPolicyViolationError"
                                                                     : sy_status_exception_class(e->status);
        finish_error_code(c, e->status, cls, e->type[0] ? e->type : "None", e->param[0] ? e->param : NULL, e->message,
                          NULL);
        return;
    }
    int st = c->up.up_status;
    const char *cls = sy_status_exception_class(st);
    json_object *root = c->up.up_body.len ? json_tokener_parse(c->up.up_body.p) : NULL;
    json_object *err = NULL, *v;
    const char *message = NULL, *type = NULL, *param = NULL, *ocode = NULL;
    if (root && json_object_object_get_ex(root, "error", &err)) {
        if (json_object_is_type(err, json_type_object)) {
            if (json_object_object_get_ex(err, "message", &v) && json_object_is_type(v, json_type_string))
                message = json_object_get_string(v);
            if (json_object_object_get_ex(err, "type", &v) && json_object_is_type(v, json_type_string))
                type = json_object_get_string(v);
            if (json_object_object_get_ex(err, "param", &v) && json_object_is_type(v, json_type_string))
                param = json_object_get_string(v);
            if (json_object_object_get_ex(err, "code", &v) &&
                (json_object_is_type(v, json_type_string) || json_object_is_type(v, json_type_int)))
                ocode = json_object_get_string(v);
        } else if (json_object_is_type(err, json_type_string)) {
            message = json_object_get_string(err);
        }
    }
    char fallback[512];
    if (!message) {
        /* an error body over MAX_ERROR_BODY was cut at that size (never spliced): it is no
         * longer JSON, so its start is quoted, escaped by sy_error_json */
        snprintf(fallback, sizeof fallback, "Error code: %d - %.400s%s", st, c->up.up_body.len ? c->up.up_body.p : "",
                 c->up.up_body_over ? " ... (upstream error body truncated at 1048576 bytes)" : "");
        message = fallback;
    }
    if (c->rt.err_class == -2)
        cls = "ContextWindowExceededError";
    else if (c->rt.err_class == SY_EXC_CONTENT_POLICY)
        cls = "ContentPolicyViolationError";
    finish_error_code(c, st, cls, type ? type : "None", param, message, ocode);
    if (root)
        json_object_put(root);
}

static void finish_transport_error(struct sy_call *c, int err)
{
    char m[256];
    if (err == SY_EUPTIMEOUT) {
        double t = c->in.stream && !c->out.client_started ? c->rt.eff_stream_timeout_s : c->rt.eff_timeout_s;
        snprintf(m, sizeof m, "Request timed out after %.1f seconds.", t);
        finish_error(c, 408, "Timeout", "timeout", NULL, m);
        return;
    }
    snprintf(m, sizeof m, "Connection error (%s).", sy_err_name(err));
    finish_error(c, 500, "APIConnectionError", "api_connection_error", NULL, m);
}

/* Pool job: count what the upstream did not report. Reads the request body
 * and the streamed text (gateway/ustream.c) or up_body, writes only the call's
 * token fields. */
static void count_work(struct sy_call *c, void *arg)
{
    const struct sy_tok *t = sy_tok_get((enum sy_tok_encoding)c->drt->enc);
    long pr = sy_tok_count_request(t, c->req->body.p, c->req->body.len);
    c->usage.prompt_tokens = pr > 0 ? (uint64_t)pr : 0;
    if (c->out.client_started) {
        c->usage.completion_tokens = sy_ustream_tokens(c, t);
    } else {
        struct sy_buf text;
        sy_buf_init(&text, c->up.up_body.len + 16);
        sy_ustream_collect(c, c->up.up_body.p ? c->up.up_body.p : "", c->up.up_body.len, &text);
        c->usage.completion_tokens = sy_tok_count(t, text.p ? text.p : "", text.len);
        sy_buf_free(&text);
    }
    c->usage.usage_counted = 1;
}

/* Upstream-reported usage from p[0..n); 1 when found. */
static int read_usage(struct sy_call *c, const char *p, size_t n)
{
    struct sy_usage u;
    if (!p || !sy_usage_read(p, n, &u))
        return 0;
    c->usage.prompt_tokens = u.prompt_tokens;
    c->usage.completion_tokens = u.completion_tokens;
    c->usage.cached_tokens = u.cached_tokens;
    c->usage.cache_write_tokens = u.cache_creation_tokens;
    c->usage.cache_write_1h_tokens = u.cache_creation_1h_tokens;
    c->usage.reasoning_tokens = u.reasoning_tokens;
    c->usage.have_usage = 1;
    return 1;
}

/* A translating adapter's reported usage (st.u) into the call. */
static void take_xusage(struct sy_call *c, const struct sy_xusage *u)
{
    c->usage.prompt_tokens = (uint64_t)(u->prompt > 0 ? u->prompt : 0);
    c->usage.completion_tokens = (uint64_t)(u->completion > 0 ? u->completion : 0);
    c->usage.cached_tokens = (uint64_t)(u->cache_read > 0 ? u->cache_read : 0);
    c->usage.cache_write_tokens = (uint64_t)(u->cache_write > 0 ? u->cache_write : 0);
    c->usage.cache_write_1h_tokens = (uint64_t)(u->cache_write_1h > 0 ? u->cache_write_1h : 0);
    c->usage.reasoning_tokens = (uint64_t)(u->reasoning > 0 ? u->reasoning : 0);
    c->usage.have_usage = 1;
}

static void success_send(struct sy_call *c)
{
    struct sy_buf h;
    sy_buf_init(&h, 16384);
    sy_call_headers(c, &h, 1);
    sy_filter_start(c, 0);
    sy_filter_head(c, c->up.up_status, "application/json", h.p, h.len);
    sy_filter_data(c, c->up.up_body.p, c->up.up_body.len);
    sy_call_account(c, c->up.up_status);
    sy_resp_simple(c->req, c->up.up_status, h.p, h.len, "application/json", c->up.up_body.p, c->up.up_body.len);
    sy_buf_free(&h);
}

/* A whole answer: the stages' answer hooks (a post_call guardrail may rewrite,
 * hold or refuse it), then out. */
static void success_reply(struct sy_call *c, void *arg)
{
    attempt_end(c, 1);
    c->req->on_abort = on_abort; /* a hook that holds the answer: a client that leaves is accounted 499 */
    if (c->up.up_status < 300 && sy_call_answer(c, &c->up.up_body, success_send) != SY_OK)
        return;
    success_send(c);
}

/* A writer's block (sy_call_stream_block) ends the stream: the client
 * dialect's error event, the call accounted with the block's status. */
static void block_end(struct sy_call *c)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    int status = c->out.block_status;
    if (!sy_xlate_stream_error(c, status, c->out.block_msg, &b)) {
        SY_BUF_LIT(&b, "data: ");
        error_body(&b, status, c->out.block_type, "None", c->out.block_msg, NULL);
        SY_BUF_LIT(&b, "\n\ndata: [DONE]\n\n");
    }
    c->in_cb = 1;
    sy_resp_chunk(c->req, b.p, b.len);
    c->in_cb = 0;
    sy_filter_data(c, b.p, b.len);
    sy_buf_free(&b);
    c->out.exception_class = "GuardrailRaisedException";
    c->out.err_msg = c->out.block_msg;
    sy_call_account(c, status);
    c->out.err_msg = NULL;
    sy_resp_end(c->req);
}

void sy_call_stream_finish(struct sy_call *c)
{
    if (c->aborted) { /* the client left while a writer released what it held */
        stream_cut(c);
        return;
    }
    if (c->out.block_status) {
        block_end(c);
        return;
    }
    sy_call_account(c, c->up.up_status);
    sy_resp_end(c->req);
}

static void stream_end(struct sy_call *c, void *arg)
{
    attempt_end(c, 1);
    c->req->on_abort = on_abort; /* while a writer holds bytes: a client that leaves is billed as a cut */
    if (c->out.wr && c->out.wr->end && !c->out.block_status && c->out.wr->end(c, sy_call_stream_finish) != SY_OK)
        return; /* held bytes go out (or a block is recorded), then sy_call_stream_finish */
    sy_call_stream_finish(c);
}

/* A writer blocked the stream during a write from the upstream's callbacks:
 * the deployment did its part; the upstream transfer is closed (the caller
 * returns 1). Returns 1. */
static int block_stop(struct sy_call *c)
{
    c->up.ureq = NULL;
    attempt_end(c, 1);
    c->req->on_abort = NULL;
    block_end(c);
    return 1;
}

void sy_call_stream_block(struct sy_call *c, int status, const char *type, const char *msg)
{
    if (c->out.block_status)
        return;
    c->out.block_status = status ? status : 400;
    c->out.block_type = type ? type : "None";
    c->out.block_msg = msg ? msg : "";
}

size_t sy_call_out_bytes(struct sy_call *c, const char *p, size_t n, int costed)
{
    if (!n || c->aborted)
        return 0;
    size_t q;
    int was = c->in_cb;
    c->in_cb = 1; /* a client that leaves during the write only marks the call (the caller ends it) */
    if (costed == 1) {
        const char *w = p;
        size_t wn = n;
        struct sy_buf cb;
        sy_ustream_costed(c, &w, &wn, &cb);
        q = sy_resp_chunk(c->req, w, wn);
        sy_buf_free(&cb);
    } else {
        q = costed == 0 && c->out.fl_hold ? sy_ustream_write(c, p, n) : sy_resp_chunk(c->req, p, n);
    }
    c->in_cb = was;
    if (!c->aborted)
        sy_filter_data(c, p, n);
    return q;
}

/* Stream bytes for the client: through the stage's writer when one is set. */
static size_t client_write(struct sy_call *c, const char *p, size_t n, int costed)
{
    int was = c->in_cb;
    c->in_cb = 1; /* a client that leaves during the write is handled by the caller */
    size_t q = c->out.wr ? c->out.wr->write(c, p, n, costed) : sy_call_out_bytes(c, p, n, costed);
    c->in_cb = was;
    return q;
}

/* A translated answer whose provider reported no usage (Ollama may leave its
 * counts out): the OpenAI body's usage (zeros, written by the adapter) gets the
 * counted tokens, as LiteLLM's token_counter fallback fills it. */
static void counted_reply(struct sy_call *c, void *arg)
{
    size_t o, e;
    if (sy_xlate_chat_adapter(c) && c->up.up_body.p && sy_usage_span(c->up.up_body.p, c->up.up_body.len, &o, &e)) {
        struct sy_buf nb;
        sy_buf_init(&nb, c->up.up_body.len + 256);
        sy_buf_append(&nb, c->up.up_body.p, o);
        SY_BUF_LIT(&nb, "{\"prompt_tokens\":");
        sy_buf_u64(&nb, c->usage.prompt_tokens);
        SY_BUF_LIT(&nb, ",\"completion_tokens\":");
        sy_buf_u64(&nb, c->usage.completion_tokens);
        SY_BUF_LIT(&nb, ",\"total_tokens\":");
        sy_buf_u64(&nb, c->usage.prompt_tokens + c->usage.completion_tokens);
        SY_BUF_LIT(&nb, "}");
        sy_buf_append(&nb, c->up.up_body.p + e + 1, c->up.up_body.len - e - 1);
        sy_buf_free(&c->up.up_body);
        c->up.up_body = nb;
    }
    success_reply(c, NULL);
}

static void finish_success(struct sy_call *c)
{
    if (c->pass.raw_whole) { /* files and batches: ids recorded, lists filtered (passthru.c) */
        sy_passthru_answer(c);
        success_reply(c, NULL);
        return;
    }
    if (sy_xlate_decodes(c)) {
        if (sy_xlate_response(c) != 0) {
            const struct sy_xerr *e = &c->x->err;
            attempt_end(c, 0);
            finish_error(c, e->status ? e->status : 502, "APIError", e->type[0] ? e->type : "api_error", NULL,
                         e->message);
            return;
        }
        if (c->usage.have_usage) {
            success_reply(c, NULL);
            return;
        }
        /* the translated body's usage is the adapter's zeros, not the provider's: count */
        c->req->on_abort = NULL;
        sy_call_run_work(c, c->req->body.len + c->up.up_body.len, count_work, counted_reply, NULL);
        return;
    } else if (sy_xlate_forwarded(c)) {
        sy_xlate_fwd_body(c); /* the model the client asked for */
        sy_xlate_native_usage(c, c->up.up_body.p ? c->up.up_body.p : "", c->up.up_body.len);
        if (c->usage.have_usage) {
            success_reply(c, NULL);
            return;
        }
    } else if (sy_ustream_echoes(c)) {
        sy_xlate_fwd_body(c); /* LiteLLM restamps the model the client asked for */
    }
    if (read_usage(c, c->up.up_body.p, c->up.up_body.len)) {
        success_reply(c, NULL);
        return;
    }
    c->req->on_abort = NULL; /* no upstream left to cancel: the offload layer handles a vanished client */
    sy_call_run_work(c, c->req->body.len + c->up.up_body.len, count_work, success_reply, NULL);
}

/* Write translated stream bytes to the client (the stream has started). 0, or
 * 1 when the client went away (the call is ended). */
static int x_write(struct sy_call *c, const char *p, size_t n)
{
    if (!n)
        return 0;
    client_write(c, p, n, 1);
    if (c->aborted) {
        stream_cut(c);
        return 1;
    }
    if (c->out.block_status)
        return block_stop(c);
    return 0;
}

/* A translated stream's end: usage chunk (counted when the provider did not
 * report it), [DONE] or the Anthropic closing events. */
static void x_stream_end(struct sy_call *c, void *arg)
{
    struct sy_xcall *x = c->x;
    if (!x->st.u.have && !sy_xlate_upstream_oai(c)) {
        x->st.u.prompt = (int64_t)c->usage.prompt_tokens;
        x->st.u.completion = (int64_t)c->usage.completion_tokens;
    }
    const char *o;
    size_t on;
    sy_xlate_stream_end(c, &o, &on);
    if (x_write(c, o, on))
        return;
    stream_end(c, NULL);
}

/* Image generation priced per image and size (spend/cost.c, LiteLLM's
 * default_image_cost_calculator) from the request's n, size and quality,
 * unless the API reported token usage the deployment has token prices for
 * (gpt-image-1). The request is JSON of a few KB; a larger one is priced at
 * the defaults (n 1, 1024x1024). */
#define IMAGE_REQ_MAX (64u << 10)

static void image_price(struct sy_call *c)
{
    const struct sy_drt *d = c->drt;
    if (!d || strcmp(sy_passthru_call_type(c), "aimage_generation") != 0 || (c->usage.have_usage && d->price.known))
        return;
    int64_t n = 1;
    const char *size = NULL, *quality = NULL;
    json_object *root = c->req->body.len <= IMAGE_REQ_MAX && c->req->body.p ? json_tokener_parse(c->req->body.p) : NULL;
    json_object *v;
    if (root && json_object_is_type(root, json_type_object)) {
        if (json_object_object_get_ex(root, "n", &v) && json_object_is_type(v, json_type_int))
            n = json_object_get_int64(v);
        if (json_object_object_get_ex(root, "size", &v) && json_object_is_type(v, json_type_string))
            size = json_object_get_string(v);
        if (json_object_object_get_ex(root, "quality", &v) && json_object_is_type(v, json_type_string))
            quality = json_object_get_string(v);
    }
    const char *m = d->d->base_model ? d->d->base_model : d->d->upstream_model;
    double cost = sy_image_cost(d->d->provider, m, size, quality, n, m ? sy_price_find(d->d->provider, m) : NULL);
    if (cost >= 0) {
        c->usage.cost = cost;
        c->usage.cost_known = 1;
    }
    if (root)
        json_object_put(root);
}

static void finish_stream(struct sy_call *c)
{
    if (c->pass.raw) { /* usage where the API reports one (images, transcriptions); never counted */
        size_t tn;
        const char *t = sy_ustream_tail(c, &tn);
        t = t ? t : "";
        if (!strncmp(c->up.up_ctype, "application/json", 16) && !read_usage(c, t, tn))
            sy_xlate_native_usage(c, t, tn);
        if (c->up.up_status < 300)
            image_price(c);
        stream_end(c, NULL);
        return;
    }
    if (sy_xlate_decodes(c)) {
        struct sy_xcall *x = c->x;
        const char *o;
        size_t on;
        int rc = sy_xlate_stream_flush(c, &o, &on);
        if (on && x_write(c, o, on))
            return;
        if (rc) {
            attempt_end(c, 0);
            finish_error(c, x->err.status ? x->err.status : 502, "APIError", x->err.type, NULL, x->err.message);
            return;
        }
        if (x->st.u.have)
            take_xusage(c, &x->st.u);
        if (c->usage.have_usage || sy_xlate_upstream_oai(c)) {
            x_stream_end(c, NULL);
            return;
        }
        c->req->on_abort = NULL;
        sy_call_run_work(c, c->req->body.len + sy_ustream_pending(c), count_work, x_stream_end, NULL);
        return;
    }
    c->in_cb = 1;
    int held = sy_ustream_drain(c); /* a last line without its line end (usage.cost) */
    c->in_cb = 0;
    if (held && c->aborted) {
        stream_cut(c);
        return;
    }
    size_t tn;
    const char *tail = sy_ustream_tail(c, &tn);
    if (sy_xlate_forwarded(c)) {
        sy_xlate_native_usage(c, tail ? tail : "", tn);
        if (c->usage.have_usage) {
            stream_end(c, NULL);
            return;
        }
    }
    if (read_usage(c, tail, tn)) {
        stream_end(c, NULL);
        return;
    }
    c->req->on_abort = NULL;
    sy_call_run_work(c, c->req->body.len + sy_ustream_pending(c), count_work, stream_end, NULL);
}

/* ---- a client that leaves mid-stream ----------------------------------------
 *
 * Once the stream has started, a client that goes away still pays for what
 * was generated (LiteLLM logs nothing then: its cost is computed only after
 * the last chunk). The upstream connection is closed at once, so the provider
 * stops generating, and the call is accounted as 499 with:
 *   prompt      the provider's count when it reported one already (Anthropic's
 *               message_start, a usage chunk that got through), else ours
 *   completion  the output tokens counted from the text streamed so far (the
 *               larger of that and a count the provider reported)
 * The SpendLogs row says so (metadata.stream_cut, usage_source "counted"), and
 * the budget reservation settles to this cost (budget.c). Counting a large
 * prompt or text goes to the thread pool, as at a normal stream end.
 */
static void cut_work(struct sy_call *c, void *arg)
{
    const struct sy_tok *t = sy_tok_get((enum sy_tok_encoding)c->drt->enc);
    if (!c->usage.prompt_tokens) {
        long pr = sy_tok_count_request(t, c->req->body.p, c->req->body.len);
        c->usage.prompt_tokens = pr > 0 ? (uint64_t)pr : 0;
    }
    uint64_t ct = sy_ustream_tokens(c, t);
    if (ct > c->usage.completion_tokens)
        c->usage.completion_tokens = ct;
    c->usage.usage_counted = 1;
}

static void cut_done(struct sy_call *c, void *arg)
{
    c->out.llm_failed = 1;
    sy_call_account(c, 499);
    sy_resp_end(c->req);
}

/* The client left after the stream started (c->out.client_started): close the
 * upstream, bill what was streamed, end the request (now or after counting). */
static void stream_cut(struct sy_call *c)
{
    attempt_release(c);
    if (c->up.ureq) {
        sy_ureq_cancel(c->up.ureq);
        c->up.ureq = NULL;
    }
    c->req->on_abort = NULL;
    if (c->pass.raw || !c->drt) { /* bytes (images, audio): usage only as the API reports it */
        cut_done(c, NULL);
        return;
    }
    int native = !sy_xlate_active(c);
    if (!native && c->x->st.u.have)
        take_xusage(c, &c->x->st.u);
    else if (native && !c->usage.have_usage) {
        size_t tn;
        const char *tail = sy_ustream_tail(c, &tn);
        read_usage(c, tail, tn); /* a usage chunk that got through */
    }
    if (c->usage.usage_counted || (c->usage.have_usage && (native || c->up.t_up_end))) {
        cut_done(c, NULL); /* the usage is complete: the upstream's final count, or ours */
        return;
    }
    sy_call_run_work(c, c->req->body.len + sy_ustream_pending(c), cut_work, cut_done, NULL);
}

/* ---- attempts, retries, fallbacks ------------------------------------------
 *
 * An attempt picks a deployment of c->group (router/select.c), reserves its
 * rpm slot across instances when Redis shares usage (router/sync.c), then
 * sends. Its end (success, failure, client gone) is reported once to the
 * router (cooldowns, windows, latency) and to the deployment metrics. A
 * failure before the client got a byte asks router/policy.c: retry in the
 * group (after a delay, picking again), else the next fallback group, else
 * the error goes to the client.
 */

static void timer_close_cb(uv_handle_t *h)
{
    free(h);
}

/* Run cb after delay_s on c's retry timer (on_abort stops it). 0 when out of memory. */
static int schedule(struct sy_call *c, double delay_s, uv_timer_cb cb)
{
    uv_timer_t *t = malloc(sizeof *t);
    if (!t)
        return 0;
    uv_timer_init(&c->w->loop, t);
    t->data = c;
    c->rt.retry_timer = t;
    c->req->on_abort = on_abort;
    uv_timer_start(t, cb, (uint64_t)(delay_s * 1000), 0);
    return 1;
}

static void on_retry_timer(uv_timer_t *t)
{
    struct sy_call *c = t->data;
    uv_close((uv_handle_t *)t, timer_close_cb);
    c->rt.retry_timer = NULL;
    attempt(c);
}

static void metric_attempt(struct sy_call *c, int ok, int status, const char *cls)
{
    const struct sy_drt *d = c->drt;
    struct sy_metric_attempt a = {0};
    a.requested_model = c->req_group ? c->req_group->name : "";
    a.model = d->d->model ? d->d->model : "";
    a.model_id = d->d->id ? d->d->id : "";
    a.api_base = d->d->api_base ? d->d->api_base : "";
    a.api_provider = d->prov ? d->prov->name : "";
    a.hashed_api_key = c->auth.hashed_key ? c->auth.hashed_key : "";
    a.ok = ok;
    a.status = status;
    a.exception_class = cls;
    a.latency_per_output_token_s = -1;
    if (ok && c->usage.completion_tokens && c->up.t_up_start) {
        uint64_t end = c->up.t_up_end ? c->up.t_up_end : sy_now_ns();
        a.latency_per_output_token_s = (double)(end - c->up.t_up_start) / 1e9 / (double)c->usage.completion_tokens;
    }
    sy_metrics_attempt(c->w->metrics, &a);
}

static void metric_fallback(struct sy_call *c, int ok)
{
    struct sy_metric_fallback f = {0};
    f.ok = ok;
    f.requested_model = c->req_group->name;
    f.fallback_model = c->group->name;
    f.hashed_api_key = c->auth.hashed_key ? c->auth.hashed_key : "";
    f.status = c->rt.fb_status;
    f.exception_class = c->rt.fb_exc_class;
    sy_metrics_fallback(c->w->metrics, &f);
}

/* ---- the attempts list (gateway.h struct sy_call_attempts) ----
 * For the logging callbacks (an OTel span per attempt): nothing unless the
 * log stage turned c->att.on; then an array in the arena, allocated at the
 * first attempt. */
static void att_begin(struct sy_call *c)
{
    struct sy_call_attempts *l = &c->att;
    if (!l->on || !c->drt)
        return;
    if (!l->a && !(l->a = sy_arena_alloc(&c->req->arena, SY_CALL_MAX_ATTEMPTS * sizeof *l->a)))
        return;
    if (l->n == SY_CALL_MAX_ATTEMPTS) {
        l->dropped++;
        l->open = 0;
        return;
    }
    l->a[l->n++] = (struct sy_call_attempt){c->drt, sy_now_ns(), 0, 0, NULL};
    l->open = 1;
}

static void att_end(struct sy_call *c, int status, const char *error)
{
    struct sy_call_attempts *l = &c->att;
    if (!l->open)
        return;
    l->open = 0;
    struct sy_call_attempt *a = &l->a[l->n - 1];
    a->t_end = c->up.t_up_end ? c->up.t_up_end : sy_now_ns();
    a->status = status;
    a->error = error;
}

/* The attempt in progress ends (once): in-flight count, router state, metrics. */
static void attempt_end(struct sy_call *c, int ok)
{
    if (!c->rt.attempt_open)
        return;
    c->rt.attempt_open = 0;
    struct sy_drt *d = c->drt;
    atomic_fetch_sub_explicit(&d->st->inflight, 1, memory_order_relaxed);
    if (ok) {
        double lat = -1;
        if (c->in.stream && c->up.t_up_first && c->up.t_up_start)
            lat = (double)(c->up.t_up_first - c->up.t_up_start) / 1e9;
        else if (c->usage.completion_tokens && c->up.t_up_start && c->up.t_up_end)
            lat = (double)(c->up.t_up_end - c->up.t_up_start) / 1e9 / (double)c->usage.completion_tokens;
        uint64_t tok = c->usage.prompt_tokens + c->usage.completion_tokens;
        sy_router_ok(&c->g->rc, d, tok, lat);
        sy_rsync_tokens(&c->w->rsync, d, tok);
        metric_attempt(c, 1, c->up.up_status, NULL);
        att_end(c, c->up.up_status, NULL);
        if (c->group != c->req_group)
            metric_fallback(c, 1);
    }
}

/* The attempt ends because the client went away: free its in-flight slot;
 * the deployment did nothing wrong. */
static void attempt_release(struct sy_call *c)
{
    if (!c->rt.attempt_open)
        return;
    c->rt.attempt_open = 0;
    atomic_fetch_sub_explicit(&c->drt->st->inflight, 1, memory_order_relaxed);
}

/* Classify the failed attempt into c->rt.err_status / c->rt.err_class (-2: context
 * window, SY_EXC_CONTENT_POLICY, else the retry_policy class) and return the
 * LiteLLM exception class name. err: transport error, or 0 (upstream status). */
static const char *classify(struct sy_call *c, int err)
{
    if (err) {
        c->rt.err_status = err == SY_EUPTIMEOUT ? 408 : 500;
        c->rt.err_class = err == SY_EUPTIMEOUT ? SY_EXC_TIMEOUT : SY_EXC_INTERNAL_SERVER;
        return err == SY_EUPTIMEOUT ? "Timeout" : "APIConnectionError";
    }
    int st = c->up.up_status;
    c->rt.err_status = st;
    int cw = 0, cp = 0;
    if (st == 400 && c->up.up_body.len) {
        const char *b = c->up.up_body.p;
        size_t n = c->up.up_body.len;
        cw = memmem(b, n, "context_length_exceeded", 23) || memmem(b, n, "context length", 14) ||
             memmem(b, n, "maximum context", 15) || memmem(b, n, "context window", 14) ||
             memmem(b, n, "prompt is too long", 18) || memmem(b, n, "input is too long", 17) ||
             memmem(b, n, "Input is too long", 17) || memmem(b, n, "exceeds the maximum number of tokens", 36);
        cp = !cw && (memmem(b, n, "content_policy_violation", 24) || memmem(b, n, "content management policy", 26) ||
                     memmem(b, n, "content_filter", 14) || memmem(b, n, "ResponsibleAIPolicyViolation", 28));
    }
    c->rt.err_class = cw ? -2 : (int)sy_router_exc_class(st, cp);
    return cw ? "ContextWindowExceededError" : cp ? "ContentPolicyViolationError" : sy_status_exception_class(st);
}

/* The fallback list for this failure, chosen once per request. */
static void choose_fallbacks(struct sy_call *c)
{
    if (c->rt.fb_kind >= 0)
        return;
    const struct sy_group *g = c->req_group;
    if (c->rt.err_class == -2 && g->nfb[1])
        c->rt.fb_kind = 1;
    else if (c->rt.err_class == SY_EXC_CONTENT_POLICY && g->nfb[2])
        c->rt.fb_kind = 2;
    else
        c->rt.fb_kind = 0;
    c->rt.fb_next = 0;
}

/* Next fallback group, or NULL; c->group_model becomes the name it was
 * reached by (a wildcard group forwards that name's '*' part).
 *
 * A config fallback (fallbacks, default_fallbacks, context_window_ and
 * content_policy_fallbacks) the key may not use is skipped, never called:
 * LiteLLM does not check these, but every model a request reaches passes the
 * key's access checks here. Request fallbacks were checked up front
 * (route.c). */
static const struct sy_group *next_fallback(struct sy_call *c)
{
    if (c->opt.disable_fallbacks || c->rt.fallbacks_done >= c->g->rc.max_fallbacks)
        return NULL;
    choose_fallbacks(c);
    for (;;) {
        const struct sy_group *t = NULL;
        const char *name;
        if (c->rt.fb_kind == 0 && c->opt.fb_req) {
            if (c->rt.fb_next >= c->opt.nfb_req)
                return NULL;
            name = c->opt.fb_req[c->rt.fb_next++];
            t = sy_router_resolve(&c->g->table, name, strlen(name));
            if (!t || t == c->req_group)
                continue; /* LiteLLM fails that fallback and tries the next one */
        } else {
            if (c->rt.fb_next >= c->req_group->nfb[c->rt.fb_kind])
                return NULL;
            name = c->req_group->fbname[c->rt.fb_kind][c->rt.fb_next];
            t = c->req_group->fb[c->rt.fb_kind][c->rt.fb_next++];
            struct sy_check_err e;
            if (sy_call_model_denied(c, name, &e) != 0)
                continue;
        }
        c->group_model = name;
        return t;
    }
}

/* A failure before the client got any byte: retry, fall back or answer.
 * err: transport error or 0 (upstream status in c->up.up_status), or 1 for
 * "no deployment" (c->err_* already set). Returns 1 when another attempt is
 * scheduled. */
static int failed(struct sy_call *c, int err)
{
    const char *cls = err == 1 ? c->out.exception_class : classify(c, err);
    struct sy_drt *d = c->drt;
    if (err != 1 && d)
        att_end(c, err ? 0 : c->rt.err_status, cls);
    if (err == 0 && d && (c->kind == SY_RK_RESPONSES_ID || c->kind == SY_RK_FILES) && c->up.up_status < 500 &&
        c->up.up_status != 429) {
        /* a management call's 4xx (a response or file that does not exist) is the answer, not the
         * deployment failing: no retry, no cooldown */
        attempt_release(c);
        c->out.exception_class = cls;
        return 0;
    }
    if (err != 1 && d && sdk_retry(c))
        return 1;
    c->rt.sdk_retries = 0;
    if (err != 1 && d) {
        attempt_end(c, 0);
        metric_attempt(c, 0, c->rt.err_status, cls);
        /* allowed_fails_policy classes: a context-window error and the other 4xx count as BadRequest */
        enum sy_exc_class exc = c->rt.err_class < 0 || c->rt.err_class >= SY_EXC__COUNT
                                    ? SY_EXC_BAD_REQUEST
                                    : (enum sy_exc_class)c->rt.err_class;
        sy_router_fail(&c->w->rsync, &c->g->rc, c->group, d, c->rt.err_status, exc, c->rt.retry_after_s);
        if (c->rt.err_status == 408)
            sy_router_latency_penalty(&c->g->rc, d);
    }
    c->out.exception_class = cls;
    if (c->aborted || c->out.client_started)
        return 0;
    struct sy_failure f = {0};
    f.status = c->rt.err_status;
    f.exc = c->rt.err_class == -2 ? SY_EXC_BAD_REQUEST : (enum sy_exc_class)c->rt.err_class;
    f.context_window = c->rt.err_class == -2;
    f.content_policy = c->rt.err_class == SY_EXC_CONTENT_POLICY;
    f.has_cw_fallbacks = c->req_group->nfb[1] > 0;
    f.has_cp_fallbacks = c->req_group->nfb[2] > 0;
    f.retries_done = c->rt.retries_in_group;
    f.req_retries = c->opt.num_retries_req;
    f.dep_retries = d ? d->d->num_retries : -1;
    f.retry_after_s = c->rt.retry_after_s;
    f.failed = d;
    c->rt.max_retries = sy_router_retries(&c->g->rc, f.req_retries, f.dep_retries, f.exc); /* x-litellm-max-retries */
    double delay = 0;
    if (err != 1 && sy_router_should_retry(&c->g->rc, c->group, &f, &delay, sy_rand(c->w))) {
        c->rt.retries_in_group++;
        c->rt.retries_total++;
        if (schedule(c, delay, on_retry_timer))
            return 1;
    }
    const struct sy_group *fb = next_fallback(c);
    if (c->group != c->req_group) /* the fallback group in use failed */
        metric_fallback(c, 0);
    if (fb) {
        if (!c->rt.fallbacks_done) {
            c->rt.fb_exc_class = cls;
            c->rt.fb_status = c->rt.err_status;
        }
        c->rt.fallbacks_done++;
        c->group = fb;
        c->rt.retries_in_group = 0;
        c->drt = NULL;
        if (sy_call_fallback(c, attempt) == SY_OK) /* priced at the group it calls now */
            attempt(c);
        return 1;
    }
    return 0;
}

static void on_sdk_retry_timer(uv_timer_t *t)
{
    struct sy_call *c = t->data;
    uv_close((uv_handle_t *)t, timer_close_cb);
    c->rt.retry_timer = NULL;
    launch(c);
}

/* litellm_params.max_retries: the retries the provider SDK makes on the same
 * deployment before the router sees the error (the openai SDK's rules:
 * 408, 409, 429, >= 500 and connection errors; Retry-After when 0 < it <= 60 s,
 * else 0.5 s * 2^n, at most 8 s, times a jitter of 0.75..1). 1 when one is
 * scheduled; the attempt (and its in-flight slot) continues. */
static int sdk_retry(struct sy_call *c)
{
    const struct sy_drt *d = c->drt;
    int st = c->rt.err_status;
    if (d->d->max_retries <= 0 || c->rt.sdk_retries >= d->d->max_retries || c->aborted || c->out.client_started ||
        c->rt.mock_failing)
        return 0;
    if (!(st == 408 || st == 409 || st == 429 || st >= 500))
        return 0;
    double delay =
        c->rt.retry_after_s > 0 && c->rt.retry_after_s <= 60
            ? c->rt.retry_after_s
            : fmin(0.5 * pow(2, c->rt.sdk_retries), 8.0) * (1 - 0.25 * (double)(sy_rand(c->w) % 1000) / 1000.0);
    if (!schedule(c, delay, on_sdk_retry_timer))
        return 0;
    c->rt.sdk_retries++;
    return 1;
}

static void reply_no_deployment(struct sy_call *c, int why)
{
    char msg[1400], list[800];
    const struct sy_group *g = c->group;
    if (why == SY_PICK_NONE_SUPPORTED) {
        const struct sy_deployment *d = g->d[0]->d;
        snprintf(msg, sizeof msg,
                 "Model group '%s' cannot be served: provider '%s' (model=%s) is not supported by switchyard yet",
                 g->name, d->provider ? d->provider : "?", d->model ? d->model : "None");
        sy_call_error(c, 400, "invalid_request_error", "model", msg, NULL, 0);
        return;
    }
    if (why == SY_PICK_NONE_TAGS) {
        /* LiteLLM's RouterErrors.no_deployments_with_tag_routing */
        size_t o = 0;
        list[0] = 0;
        for (size_t i = 0; i < c->opt.rf.ntags && o < sizeof list; i++)
            o += (size_t)snprintf(list + o, sizeof list - o, "%s'%.100s'", i ? ", " : "", c->opt.rf.tags[i]);
        snprintf(msg, sizeof msg,
                 "Not allowed to access model due to tags configuration. Passed model=%.300s and tags=[%s]", g->name,
                 list);
        c->out.exception_class = "BadRequestError";
        sy_call_error(c, 400, "invalid_request_error", NULL, msg, NULL, 0);
        return;
    }
    if (why == SY_PICK_NONE_REGION) {
        snprintf(msg, sizeof msg,
                 "litellm.RateLimitError: No deployments available for selected model, Try again in 0 seconds. "
                 "Passed model=%.300s. pre-call-checks=True, allowed_model_region=%s, cooldown_list=[]",
                 g->name, c->opt.rf.region == 'e' ? "eu" : "us");
        c->out.exception_class = "RateLimitError";
        sy_call_error(c, 429, "None", NULL, msg, NULL, 0);
        return;
    }
    if (why == SY_PICK_NONE_BUDGET) {
        /* LiteLLM's RouterErrors.no_deployments_with_provider_budget_routing */
        sy_router_budget_info(g, list, sizeof list);
        snprintf(msg, sizeof msg, "No deployments available - crossed budget: %s", list);
        c->out.exception_class = "RateLimitError";
        sy_call_error(c, 429, "None", NULL, msg, NULL, 0);
        return;
    }
    if (why == SY_PICK_NONE_CONTEXT) {
        snprintf(msg, sizeof msg,
                 "litellm.ContextWindowExceededError: litellm.BadRequestError: Context Window Error - the prompt (%lld "
                 "tokens) does not fit the max_input_tokens of any deployment of model group=%s",
                 (long long)c->rt.input_tokens, g->name);
        c->out.llm_failed = 1;
        c->out.exception_class = "ContextWindowExceededError";
        sy_call_error(c, 400, "invalid_request_error", NULL, msg, NULL, 0);
        return;
    }
    double left = sy_router_cooldown_left(g, list, sizeof list);
    snprintf(msg, sizeof msg,
             "litellm.RateLimitError: No deployments available for selected model, Try again in %.0f seconds. Passed "
             "model=%s. pre-call-checks=%s, cooldown_list=%s",
             left, g->name, c->g->rc.pre_call_checks ? "True" : "False", list);
    char extra[64];
    int el = snprintf(extra, sizeof extra, "retry-after: %.0f\r\n", left);
    c->out.exception_class = "RateLimitError";
    sy_call_error(c, 429, "None", NULL, msg, extra, (size_t)el);
}

static void on_reserved(void *ud, int ok)
{
    struct sy_call *c = ud;
    c->rt.reserving = 0;
    if (c->aborted) {
        if (c->rt.attempt_open) {
            c->rt.attempt_open = 0;
            atomic_fetch_sub_explicit(&c->drt->st->inflight, 1, memory_order_relaxed);
        }
        c->out.llm_failed = 1;
        sy_call_account(c, 499);
        sy_resp_end(c->req);
        return;
    }
    if (!ok) { /* the fleet used this deployment's rpm: give the local slot back and pick again */
        sy_win_sub(&c->drt->st->w_rpm, sy_wall_ms(), 1);
        c->rt.attempt_open = 0;
        atomic_fetch_sub_explicit(&c->drt->st->inflight, 1, memory_order_relaxed);
        c->rt.reserve_skips++;
        attempt(c);
        return;
    }
    launch(c);
}

static void count_then_attempt(struct sy_call *c, void *arg)
{
    attempt(c);
}

/* 1 when d is one of gr's deployments: a pinned deployment (an encoded response
 * id) serves the request only then, never one the key did not ask for. */
static int group_holds(const struct sy_group *gr, const struct sy_drt *d)
{
    for (size_t i = 0; i < gr->n; i++)
        if (gr->d[i] == d)
            return 1;
    return 0;
}

/* LiteLLM's test flags (stages/route.c reads them): the picked deployment
 * fails without a call, as if it had answered, so retries, cooldowns and
 * fallbacks run as for a real failure.
 *   mock_testing_rate_limit_error: true  the first attempt only gets a 429
 *     RateLimitError (LiteLLM raises it once, before the first call);
 *   mock_timeout: true  every attempt waits the attempt's timeout (the
 *     request's, else the deployment's) and fails with a 408 Timeout; also
 *     as the deployment's litellm_params.mock_timeout (that deployment only). */
static void mock_fail(struct sy_call *c, int status)
{
    const char *grp = c->group->name;
    char msg[512];
    c->up.up_status = status;
    sy_buf_reset(&c->up.up_body);
    c->rt.retry_after_s = 0;
    c->rt.mock_failing = 1;
    int again = failed(c, 0);
    c->rt.mock_failing = 0;
    if (again)
        return;
    if (status == 429)
        snprintf(msg, sizeof msg,
                 "litellm.RateLimitError: This is a mock exception for model=%.300s, to trigger a rate limit error.",
                 grp);
    else
        snprintf(msg, sizeof msg, "litellm.Timeout: This is a mock timeout error");
    finish_error(c, status, status == 429 ? "RateLimitError" : "Timeout", status == 429 ? "None" : "timeout", NULL,
                 msg);
}

static void on_mock_timeout(uv_timer_t *t)
{
    struct sy_call *c = t->data;
    uv_close((uv_handle_t *)t, timer_close_cb);
    c->rt.retry_timer = NULL;
    c->up.t_up_end = sy_now_ns();
    mock_fail(c, 408);
}

/* 1 when the attempt on c->drt is a mock failure (then it is under way). */
static int mock_failure(struct sy_call *c)
{
    struct sy_drt *d = c->drt;
    int rl = c->opt.mock_rate_limit;
    c->opt.mock_rate_limit = 0;
    atomic_fetch_add_explicit(&d->st->inflight, 1, memory_order_relaxed);
    c->rt.attempt_open = 1;
    att_begin(c);
    c->rt.eff_timeout_s = c->opt.timeout_req > 0 ? c->opt.timeout_req : d->timeout_s;
    c->rt.eff_stream_timeout_s = c->rt.eff_timeout_s;
    if (rl) {
        mock_fail(c, 429);
        return 1;
    }
    c->up.t_up_start = sy_now_ns();
    c->up.t_up_first = c->up.t_up_end = 0;
    if (schedule(c, c->rt.eff_timeout_s, on_mock_timeout))
        return 1;
    attempt_release(c);
    return 0;
}

static void attempt(struct sy_call *c)
{
    int why = 0;
    if (c->rt.input_is_bound && c->group != c->req_group && sy_route_needs_count(c, c->group)) {
        /* a fallback group whose limits the bound cannot decide: count exactly (pool if large) */
        sy_call_run_work(c, c->req->body.len, sy_route_count_work, count_then_attempt, NULL);
        return;
    }
    if (c->opt.mock_testing_fallbacks && c->group == c->req_group) {
        /* LiteLLM's test hook: the requested group fails without a call, so its fallbacks run */
        c->drt = NULL;
        c->rt.err_status = 500;
        c->rt.err_class = SY_EXC_INTERNAL_SERVER;
        c->out.exception_class = "InternalServerError";
        c->rt.retry_after_s = 0;
        if (failed(c, 1))
            return;
        char msg[512];
        snprintf(msg, sizeof msg,
                 "litellm.InternalServerError: This is a mock exception for model=%.300s, to trigger a fallback. "
                 "Fallbacks=[]",
                 c->group->name);
        c->out.llm_failed = 1;
        sy_call_error(c, 500, "None", NULL, msg, NULL, 0);
        return;
    }
    struct sy_drt *d =
        c->pin && c->group == c->req_group && group_holds(c->group, c->pin) ? c->pin
        : c->rt.reserve_skips > (int)c->group->n
            ? NULL
            : sy_router_pick(&c->w->rng, &c->g->rc, c->group, c->drt, c->rt.input_tokens, &c->opt.rf, &why);
    if (!d) {
        if (!why)
            why = SY_PICK_NONE_AVAILABLE;
        if (why != SY_PICK_NONE_SUPPORTED && why != SY_PICK_NONE_TAGS && why != SY_PICK_NONE_REGION) {
            c->drt = NULL;
            c->rt.err_status = why == SY_PICK_NONE_CONTEXT ? 400 : 429;
            c->rt.err_class = why == SY_PICK_NONE_CONTEXT ? -2 : SY_EXC_RATE_LIMIT;
            c->out.exception_class = why == SY_PICK_NONE_CONTEXT ? "ContextWindowExceededError" : "RateLimitError";
            c->rt.retry_after_s = 0;
            if (failed(c, 1))
                return;
        }
        reply_no_deployment(c, why);
        return;
    }
    c->drt = d;
    c->rt.attempt++;
    if ((c->opt.mock_rate_limit || c->opt.mock_timeout || d->d->mock_timeout) && mock_failure(c))
        return;
    if (d->prov->flags & SY_PRESET_MOCK) { /* answered in-process */
        att_begin(c);
        if (c->out.gated) { /* after the gate (sy_call_ungate) */
            c->out.gate_done = 2;
            c->req->on_abort = on_abort;
            return;
        }
        c->req->on_abort = NULL;
        sy_mock_answer(c);
        return;
    }
    atomic_fetch_add_explicit(&d->st->inflight, 1, memory_order_relaxed);
    c->rt.attempt_open = 1;
    c->req->on_abort = on_abort;
    if (sy_rsync_reserve(&c->w->rsync, &c->g->rc, d, on_reserved, c)) {
        c->rt.reserving = 1;
        return;
    }
    launch(c);
}

/* ---- upstream callbacks ------------------------------------------------- */

static void on_client_drain(struct sy_req *r)
{
    struct sy_call *c = r->handler_data;
    if (c->up.paused && c->up.ureq) {
        c->up.paused = 0;
        sy_ureq_resume(c->up.ureq);
    }
}

/* Provider response headers echoed to the client, as LiteLLM's
 * process_response_headers: every header as "llm_provider-<name>", plus the
 * OpenAI rate-limit headers unprefixed; and (unlike LiteLLM) the request id
 * unprefixed too, so SDKs find it (the openai SDK's _request_id reads
 * x-request-id). Hop-by-hop and framing headers are not echoed; the total is
 * capped at PROVIDER_HEADERS_MAX bytes (further headers are dropped).
 *
 *   upstream                          client
 *   x-request-id: r1                  x-request-id: r1, llm_provider-x-request-id: r1
 *   x-ratelimit-remaining-tokens: 9   x-ratelimit-remaining-tokens: 9, llm_provider-x-ratelimit-...
 *   openai-processing-ms: 12          llm_provider-openai-processing-ms: 12
 *   content-length / transfer-encoding / connection / keep-alive: not echoed
 */
#define PROVIDER_HEADERS_MAX 4096

static int hname_is(const struct sy_uheader *h, const char *n, size_t l)
{
    return h->name_len == l && (h->name[0] | 0x20) == n[0] && strncasecmp(h->name, n, l) == 0;
}

static void keep_provider_headers(struct sy_call *c, const struct sy_uheader *h, size_t nh)
{
    c->up.up_headers_len = 0;
    if (!nh)
        return;
    size_t need = 0;
    for (size_t i = 0; i < nh; i++)
        need += 2 * (h[i].name_len + h[i].value_len) + 32;
    if (need > 2 * PROVIDER_HEADERS_MAX)
        need = 2 * PROVIDER_HEADERS_MAX;
    char *o = sy_arena_alloc(&c->req->arena, need);
    size_t n = 0;
    for (size_t i = 0; i < nh; i++) {
        const struct sy_uheader *x = &h[i];
        if (hname_is(x, "content-length", 14) || hname_is(x, "transfer-encoding", 17) ||
            hname_is(x, "connection", 10) || hname_is(x, "keep-alive", 10) || !x->name_len)
            continue;
        /* x-request-id and the provider's x-ratelimit-* are echoed as they are too, unless the
         * call's own limits set x-ratelimit-* (LiteLLM: the key's limits if set, else the provider's) */
        int rl = x->name_len > 12 && strncasecmp(x->name, "x-ratelimit-", 12) == 0;
        int plain = (x->name[0] | 0x20) == 'x' && (hname_is(x, "x-request-id", 12) || (rl && !c->own_ratelimit));
        size_t line = x->name_len + x->value_len + 4;
        if (n + line + 13 + (plain ? line : 0) > PROVIDER_HEADERS_MAX)
            break;
        for (int k = plain ? 0 : 1; k < 2; k++) {
            if (k == 1) {
                memcpy(o + n, "llm_provider-", 13);
                n += 13;
            }
            n += sy_header_line(o + n, x->name, x->name_len, x->value, x->value_len);
        }
    }
    c->up.up_headers = o;
    c->up.up_headers_len = n;
}

/* Send the stream's head to the client (the first upstream body byte is
 * here). Nonzero when the client vanished meanwhile (the call is ended). */
static int start_stream(struct sy_call *c)
{
    c->up.sse_pending = 0;
    struct sy_buf hb;
    sy_buf_init(&hb, 16384);
    /* no x-litellm-response-cost on a stream's head: a usage seen so far (Anthropic's
     * message_start) is not the call's, and pricing it here would fix the cost early */
    int hu = c->usage.have_usage;
    c->usage.have_usage = 0;
    sy_call_headers(c, &hb, 1);
    c->usage.have_usage = hu;
    if (!c->pass.raw)
        SY_BUF_LIT(&hb, "cache-control: no-cache\r\nx-accel-buffering: no\r\n");
    const char *ctype = !c->pass.raw        ? "text/event-stream"
                        : c->up.up_ctype[0] ? c->up.up_ctype
                                            : "application/octet-stream";
    c->in_cb = 1;
    sy_resp_start(c->req, c->up.up_status, hb.p, hb.len, ctype);
    c->in_cb = 0;
    c->out.client_started = 1;
    sy_filter_start(c, 1); /* the response filters (usage links on every stream) */
    sy_filter_head(c, c->up.up_status, ctype, hb.p, hb.len);
    sy_buf_free(&hb);
    if (c->aborted) {
        c->up.ureq = NULL; /* the caller returns 1: the upstream connection is closed */
        stream_cut(c);
        return 1;
    }
    sy_resp_set_drain_cb(c->req, on_client_drain, HIGH_WATER);
    return 0;
}

static int on_head(void *ud, int status, const struct sy_uheader *h, size_t nh)
{
    struct sy_call *c = ud;
    c->up.up_status = status;
    c->up.t_up_first = sy_now_ns();
    c->rt.retry_after_s = 0;
    c->up.retry_after_hdr[0] = 0;
    int is_sse = 0;
    keep_provider_headers(c, h, nh);
    if (!c->pass.raw)
        c->up.up_ctype[0] = 0;
    for (size_t i = 0; i < nh; i++) {
        if (h[i].name_len == 11 && (h[i].name[0] | 0x20) == 'r' && strncasecmp(h[i].name, "retry-after", 11) == 0 &&
            h[i].value_len < 31) {
            memcpy(c->up.retry_after_hdr, h[i].value, h[i].value_len);
            c->up.retry_after_hdr[h[i].value_len] = 0;
            c->rt.retry_after_s = atof(c->up.retry_after_hdr);
        } else if (h[i].name_len == 14 && (h[i].name[0] | 0x20) == 'r' &&
                   strncasecmp(h[i].name, "retry-after-ms", 14) == 0 && !c->rt.retry_after_s) {
            c->rt.retry_after_s = atof(h[i].value) / 1000.0;
        } else if (h[i].name_len == 12 && (h[i].name[0] | 0x20) == 'c' &&
                   strncasecmp(h[i].name, "content-type", 12) == 0) {
            is_sse = h[i].value_len >= 17 && strncasecmp(h[i].value, "text/event-stream", 17) == 0;
            if (status >= 400 && sy_xlate_active(c) && c->x->native && h[i].value_len < sizeof c->up.up_ctype &&
                !memchr(h[i].value, '\r', h[i].value_len) && !memchr(h[i].value, '\n', h[i].value_len)) {
                memcpy(c->up.up_ctype, h[i].value, h[i].value_len); /* a native error goes out with it */
                c->up.up_ctype[h[i].value_len] = 0;
            }
        }
    }
    sy_buf_reset(&c->up.up_body);
    c->up.up_body_over = 0; /* non-stream: the error body was truncated (this attempt) */
    if (sy_xlate_decodes(c))
        is_sse = 1; /* decoded into SSE for the client, whatever the provider's framing */
    if (c->pass.raw) {
        c->up.up_ctype[0] = 0;
        for (size_t i = 0; i < nh; i++)
            if (h[i].name_len == 12 && strncasecmp(h[i].name, "content-type", 12) == 0 &&
                h[i].value_len < sizeof c->up.up_ctype && !memchr(h[i].value, '\r', h[i].value_len) &&
                !memchr(h[i].value, '\n', h[i].value_len)) {
                memcpy(c->up.up_ctype, h[i].value, h[i].value_len);
                c->up.up_ctype[h[i].value_len] = 0;
            }
    }
    if (status >= 200 && status < 300 && ((c->in.stream && is_sse) || (c->pass.raw && !c->pass.raw_whole))) {
        /* the client's head waits for the first body byte: a stream that fails
         * before it can still be retried or fall back transparently */
        c->up.sse_pending = 1;
    } else {
        c->up.up_body.cap = status >= 400 ? MAX_ERROR_BODY : MAX_RESPONSE;
    }
    return 0;
}

/* A provider error event (or a broken framing) in a translated stream. Before
 * the client got a byte it is an upstream error like any other (retries and
 * fallbacks apply); after, an error frame ends the stream. Returns 1 (the
 * upstream transfer is cancelled). */
static int x_stream_failed(struct sy_call *c)
{
    struct sy_xcall *x = c->x;
    c->up.ureq = NULL;
    c->up.t_up_end = sy_now_ns();
    c->up.up_status = x->err.status ? x->err.status : 502;
    if (!c->out.client_started) {
        c->up.sse_pending = 0;
        sy_buf_reset(&c->up.up_body);
        if (x->err.message[0])
            sy_buf_append(&c->up.up_body, x->err.message, strlen(x->err.message));
        if (failed(c, 0))
            return 1;
        finish_upstream_error(c);
        return 1;
    }
    attempt_end(c, 0);
    finish_upstream_error(c);
    return 1;
}

static int on_body(void *ud, const char *p, size_t n)
{
    struct sy_call *c = ud;
    if (c->out.gated && (c->up.sse_pending || c->out.client_started)) {
        /* a stage holds the answer (sy_call_gate): keep the bytes, stop reading */
        if (sy_buf_append(&c->out.gate_buf, p, n)) {
            c->up.ureq = NULL;
            attempt_end(c, 0);
            finish_error(c, 502, "APIError", "api_error", NULL, "Upstream response too large");
            return 1;
        }
        if (!c->up.paused) {
            c->up.paused = 1;
            sy_ureq_pause(c->up.ureq);
        }
        return 0;
    }
    if (sy_xlate_forwarded(c) && c->up.up_status < 300 && !c->usage.have_usage)
        sy_xlate_native_usage(c, p, n); /* message_start carries input_tokens */
    if (sy_xlate_decodes(c) && (c->up.sse_pending || c->out.client_started)) {
        const char *o;
        size_t on;
        int rc = sy_xlate_feed(c, p, n, &o, &on);
        if (on) {
            if (c->up.sse_pending && start_stream(c))
                return 1;
            size_t q = client_write(c, o, on, 1);
            if (c->aborted) {
                c->up.ureq = NULL; /* returning 1 closes the upstream connection */
                stream_cut(c);
                return 1;
            }
            if (c->out.block_status)
                return block_stop(c);
            if (q > HIGH_WATER && !c->up.paused && !rc) {
                c->up.paused = 1;
                sy_ureq_pause(c->up.ureq);
            }
        }
        if (rc)
            return x_stream_failed(c);
        return 0;
    }
    /* a forwarded stream: its first event waits until whole (its model is replaced) */
    if (sy_xlate_forwarded(c) && (c->up.sse_pending || c->out.client_started) && sy_xlate_fwd_stream(c, &p, &n))
        return 0;
    return pass_write(c, p, n);
}

/* Pass-through bytes of the answer: to the client once the stream started
 * (its head goes out with the first of them), else into up_body. 0, or 1
 * when the upstream transfer is to be closed. */
static int pass_write(struct sy_call *c, const char *p, size_t n)
{
    if (c->up.sse_pending && start_stream(c))
        return 1;
    if (c->out.client_started) {
        size_t q = client_write(c, p, n, 0);
        if (c->aborted) {      /* the client went away during the write */
            c->up.ureq = NULL; /* returning 1 closes the upstream connection */
            stream_cut(c);
            return 1;
        }
        if (c->out.block_status)
            return block_stop(c);
        if (q > HIGH_WATER && !c->up.paused) {
            c->up.paused = 1;
            sy_ureq_pause(c->up.ureq);
        }
        return 0;
    }
    if (c->up.up_body_over)
        return 0; /* error body already truncated */
    if (sy_buf_append(&c->up.up_body, p, n)) {
        if (c->up.up_status >= 400) {
            /* keep the first MB of an error body and drop everything after it: a later,
             * smaller piece must not be appended after a dropped one (a spliced body) */
            c->up.up_body_over = 1;
            return 0;
        }
        c->up.ureq = NULL;
        attempt_end(c, 0); /* frees the in-flight slot; the deployment answered, too much */
        finish_error(c, 502, "APIError", "api_error", NULL, "Upstream response too large");
        return 1;
    }
    return 0;
}

static void on_done(void *ud, int err)
{
    struct sy_call *c = ud;
    c->up.ureq = NULL;
    c->up.t_up_end = sy_now_ns();
    if (c->out.gated) { /* the answer waits for the gate (sy_call_ungate) */
        c->out.gate_done = 1;
        c->out.gate_err = err;
        return;
    }
    if (!err && sy_xlate_forwarded(c) && c->up.up_status < 300) { /* a first event that never ended */
        const char *hp;
        size_t hn;
        sy_xlate_fwd_held(c, &hp, &hn);
        if (hn && pass_write(c, hp, hn))
            return;
    }
    if (!err && c->up.sse_pending) /* a stream that ended before its first byte: an empty 2xx stream */
        start_stream(c);
    if (err) {
        if (failed(c, err))
            return;
        finish_transport_error(c, err);
        return;
    }
    if (c->up.up_status >= 400) {
        if (sy_xlate_active(c)) {
            sy_xlate_error(c);
            if (c->x->have_err)
                c->up.up_status = c->x->err.status; /* the status LiteLLM maps the provider's error to */
        }
        if (failed(c, 0))
            return;
        finish_upstream_error(c);
        return;
    }
    if (c->out.client_started) {
        finish_stream(c);
        return;
    }
    finish_success(c);
}

static const struct sy_ureq_cbs cbs = {on_head, on_body, on_done};

/* ---- the gate (a during_call guardrail) --------------------------------- */

void sy_call_ungate(struct sy_call *c)
{
    if (!c->out.gated)
        return;
    c->out.gated = 0;
    if (c->out.gate_done == 2) { /* the built-in mock's answer */
        c->out.gate_done = 0;
        c->req->on_abort = NULL;
        sy_mock_answer(c);
        return;
    }
    if (c->out.gate_buf.len) {
        struct sy_buf b = c->out.gate_buf;
        sy_buf_init(&c->out.gate_buf, 0);
        struct sy_ureq *u = c->up.ureq;
        int stop = on_body(c, b.p, b.len);
        sy_buf_free(&b);
        if (stop) { /* the call ended (or will): close the transfer on_body gave up */
            if (u)
                sy_ureq_cancel(u);
            return;
        }
    }
    if (c->out.gate_done == 1) {
        c->out.gate_done = 0;
        on_done(c, c->out.gate_err);
        return;
    }
    if (c->up.paused && c->up.ureq) {
        c->up.paused = 0;
        sy_ureq_resume(c->up.ureq);
    }
}

void sy_call_gate_refuse(struct sy_call *c)
{
    c->out.gated = 0;
    c->out.gate_done = 0;
    sy_buf_free(&c->out.gate_buf);
    if (c->up.ureq) {
        sy_ureq_cancel(c->up.ureq);
        c->up.ureq = NULL;
    }
    if (c->rt.retry_timer) {
        uv_timer_stop(c->rt.retry_timer);
        uv_close((uv_handle_t *)c->rt.retry_timer, timer_close_cb);
        c->rt.retry_timer = NULL;
    }
    attempt_release(c);
    c->req->on_abort = NULL;
}

static void on_abort(struct sy_req *r)
{
    struct sy_call *c = r->handler_data;
    c->aborted = 1;
    if (c->in_cb || c->rt.reserving)
        return;                  /* on_body finishes the call after its write returns; on_reserved when Redis answers */
    if (c->out.client_started) { /* mid-stream: bill what was streamed */
        stream_cut(c);
        return;
    }
    attempt_release(c);
    if (c->up.ureq) {
        sy_ureq_cancel(c->up.ureq);
        c->up.ureq = NULL;
    }
    if (c->rt.retry_timer) {
        uv_timer_stop(c->rt.retry_timer);
        uv_close((uv_handle_t *)c->rt.retry_timer, timer_close_cb);
        c->rt.retry_timer = NULL;
    }
    c->out.llm_failed = 1;
    sy_call_account(c, 499);
    sy_resp_end(r);
}

/* Send the attempt to c->drt (picked, its in-flight slot held). */
static void on_oauth_wait(uv_timer_t *t)
{
    struct sy_call *c = t->data;
    uv_close((uv_handle_t *)t, timer_close_cb);
    c->rt.retry_timer = NULL;
    launch(c);
}

void sy_proxy_relaunch(struct sy_call *c)
{
    launch(c);
}

/* Pool work: translate a large request (xlate.c) off the loop. */
static void xlate_work(struct sy_call *c, void *arg)
{
    struct sy_ureq_opts o = {0};
    unsigned nb = 0;
    struct sy_xcall *x = c->x;
    x->p_rc = sy_xlate_prepare(c, &o, &nb);
    x->p_nbody = nb;
    x->p_url = o.url;
    x->p_headers = o.headers;
    x->p_headers_len = o.headers_len;
    x->prepared = 1;
}

static void xlate_done(struct sy_call *c, void *arg)
{
    launch(c);
}

/* Requests from this size on are translated on the thread pool. */
#define XLATE_OFFLOAD_BYTES (256u << 10)

static void launch(struct sy_call *c)
{
    struct sy_req *r = c->req;
    const struct sy_drt *d = c->drt;
    struct sy_ureq_opts o = {0};
    unsigned xbody = 0;
    if (c->pass.raw) { /* images, audio, files ... (passthru.c) */
        struct sy_xerr e;
        if (sy_passthru_prepare(c, &o, &xbody, &e) != 0) {
            attempt_release(c);
            finish_error(c, e.status, sy_status_exception_class(e.status), e.type, NULL, e.message);
            return;
        }
        if (xbody || !r->body.len)
            goto send;
        goto model_body;
    }
    if (sy_xlate_wanted(c, d) && !(c->x && c->x->prepared) &&
        r->body.len + (c->rsp ? c->rsp->prior_len : 0) >= XLATE_OFFLOAD_BYTES && !sy_xlate_forwards(c, d)) {
        int rc = sy_xlate_oauth(c); /* the token is the loop's business; the rest goes to the pool */
        if (rc == SY_AGAIN) {
            if (!schedule(c, 0.005, on_oauth_wait)) {
                attempt_release(c);
                finish_error(c, 500, "InternalServerError", "internal_server_error", NULL, "out of memory");
            }
            return;
        }
        if (rc == 0) {
            sy_call_run_work(c, r->body.len + (c->rsp ? c->rsp->prior_len : 0), xlate_work, xlate_done, NULL);
            return;
        }
        /* a token failure: sy_xlate_prepare below reports it */
    }
    if (sy_xlate_wanted(c, d)) {
        int rc;
        if (c->x && c->x->prepared) { /* done on the pool */
            struct sy_xcall *x = c->x;
            x->prepared = 0;
            rc = x->p_rc;
            xbody = x->p_nbody;
            o.url = x->p_url;
            o.headers = x->p_headers;
            o.headers_len = x->p_headers_len;
        } else {
            rc = sy_xlate_prepare(c, &o, &xbody);
        }
        if (rc == SY_AGAIN) { /* an OAuth token is on its way: look again shortly */
            if (!schedule(c, 0.005, on_oauth_wait)) {
                attempt_release(c);
                finish_error(c, 500, "InternalServerError", "internal_server_error", NULL, "out of memory");
            }
            return;
        }
        if (rc) {
            const struct sy_xerr *e = &c->x->err;
            attempt_release(c);
            finish_error(c, e->status ? e->status : 400,
                         e->cls[0] ? e->cls : sy_status_exception_class(e->status ? e->status : 400),
                         e->type[0] ? e->type : "invalid_request_error", e->param[0] ? e->param : NULL, e->message);
            return;
        }
    } else {
        sy_xlate_off(c); /* a fallback from a translated attempt: this one passes through */
    }
    if (xbody || (c->kind == SY_RK_RESPONSES_ID && o.url)) /* body pieces set by sy_xlate_prepare */
        goto send;
model_body : {
    const char *b = c->opt.fwd_body ? c->opt.fwd_body : r->body.p;
    size_t n = c->opt.fwd_body ? c->opt.fwd_len : r->body.len;
    struct sy_jspan model = c->opt.fwd_body ? c->opt.fwd_model : c->in.scan.model;
    const char *mj = d->model_json;
    size_t mjl = d->model_json_len;
    if (d->wildcard) { /* "openai/<star>" serving "openai/gpt-4o": the upstream model is "gpt-4o" */
        const char *part;
        size_t pl;
        sy_router_wild_part(c->group->name, c->group_model ? c->group_model : c->in.model, &part, &pl);
        const char *um = d->d->upstream_model, *star = strchr(um, '*');
        struct sy_buf m;
        sy_buf_init(&m, 1 << 16);
        SY_BUF_LIT(&m, "\"");
        sy_buf_json_escape(&m, um, (size_t)(star - um));
        sy_buf_json_escape(&m, part, pl);
        sy_buf_json_escape(&m, star + 1, strlen(star + 1));
        SY_BUF_LIT(&m, "\"");
        char *cp = sy_arena_alloc(&r->arena, m.len + 1);
        memcpy(cp, m.p, m.len);
        mjl = m.len;
        mj = cp;
        sy_buf_free(&m);
    }
    if (model.type) {
        size_t mo = model.off, ml = model.len;
        c->up.body_parts[0] = uv_buf_init((char *)b, (unsigned)mo);
        c->up.body_parts[1] = uv_buf_init((char *)mj, (unsigned)mjl);
        c->up.body_parts[2] = uv_buf_init((char *)b + mo + ml, (unsigned)(n - mo - ml));
    } else { /* model from the path: insert it as the first member */
        const char *brace = memchr(b, '{', n);
        size_t after = (size_t)(brace - b) + 1;
        size_t k = after;
        while (k < n && (b[k] == ' ' || b[k] == '\n' || b[k] == '\r' || b[k] == '\t'))
            k++;
        int empty = k < n && b[k] == '}';
        size_t pl = 10 + mjl + 1;
        char *pre = sy_arena_alloc(&r->arena, pl + 1);
        int w = snprintf(pre, pl + 1, "{\"model\":%.*s%s", (int)mjl, mj, empty ? "" : ",");
        c->up.body_parts[0] = uv_buf_init(pre, (unsigned)w);
        c->up.body_parts[1] = uv_buf_init((char *)b + after, (unsigned)(n - after));
        c->up.body_parts[2] = uv_buf_init(NULL, 0);
    }
    xbody = c->up.body_parts[2].len ? 3 : 2;
}
send:;
    int kind = c->kind == SY_RK_CHAT ? 0 : c->kind == SY_RK_COMPLETIONS ? 1 : 2;
    /* timeouts (reference §3.8): the request's, else the deployment's (router, litellm defaults at load) */
    double timeout = c->opt.timeout_req > 0 ? c->opt.timeout_req : d->timeout_s;
    double stimeout = c->opt.stream_timeout_req > 0                           ? c->opt.stream_timeout_req
                      : c->opt.timeout_req > 0 && d->d->stream_timeout_s <= 0 ? c->opt.timeout_req
                                                                              : d->stream_timeout_s;
    c->rt.eff_timeout_s = timeout;
    c->rt.eff_stream_timeout_s = stimeout;
    if (!o.url) {
        o.url = d->url[kind];
        o.headers = d->headers;
        o.headers_len = d->headers_len;
    }
    if (!o.method)
        o.method = "POST";
    o.body = c->up.body_parts;
    o.nbody = xbody;
    o.connect_timeout_s = timeout < 10 ? timeout : 10;
    o.first_byte_timeout_s = c->in.stream ? stimeout : timeout;
    o.idle_timeout_s = timeout;
    /* non-stream: `timeout` bounds the whole request (a body trickling in below the idle
     * gap still ends in 408); streams: stream_timeout to the first byte, timeout per gap */
    o.total_timeout_s = c->in.stream ? 0 : timeout;
    c->up.up_status = 0;
    c->up.t_up_start = sy_now_ns();
    c->up.t_up_first = 0;
    c->up.t_up_end = 0;
    att_begin(c);
    c->up.sse_pending = 0;
    c->up.up_headers_len = 0;
    sy_buf_reset(&c->up.up_body);
    c->up.ureq = sy_ureq_start(c->w->upool, &o, &cbs, c);
    if (!c->up.ureq) {
        attempt_release(c);
        finish_error(c, 500, "APIConnectionError", "api_connection_error", NULL, "Invalid upstream URL");
        return;
    }
    r->on_abort = on_abort;
}

/* ---- another round (sy_call_redo) ---------------------------------------- */

/* The finished round's usage and cost into the carry; the usage cleared for the next. */
static void carry_usage(struct sy_call *c)
{
    struct sy_call_usage *u = &c->usage;
    sy_call_cost(c); /* priced at the deployment that answered it */
    u->carry_prompt += u->prompt_tokens;
    u->carry_completion += u->completion_tokens;
    u->carry_cached += u->cached_tokens;
    u->carry_cache_write += u->cache_write_tokens;
    u->carry_cache_write_1h += u->cache_write_1h_tokens;
    u->carry_reasoning += u->reasoning_tokens;
    if (u->cost_known) {
        u->carry_cost += u->cost;
        u->carry_cost_known = 1;
    }
    u->rounds++;
    u->prompt_tokens = u->completion_tokens = u->cached_tokens = 0;
    u->cache_write_tokens = u->cache_write_1h_tokens = u->reasoning_tokens = 0;
    u->have_usage = u->usage_counted = 0;
    u->cost = 0;
    u->cost_known = 0;
}

int sy_call_redo(struct sy_call *c, const char *body, size_t n)
{
    struct sy_jscan sc;
    if (c->finished || !body || sy_jscan(body, n, &sc) != 0 || !sc.top_is_object || sc.model.type != 's')
        return SY_EINVAL;
    struct sy_buf nb;
    sy_buf_init(&nb, n + 1 > c->req->body.cap ? n + 1 : c->req->body.cap);
    sy_buf_append(&nb, body, n);
    if (sy_buf_failed(&nb)) {
        sy_buf_free(&nb);
        return SY_EINVAL;
    }
    carry_usage(c);
    sy_buf_free(&c->req->body);
    c->req->body = nb;
    c->in.scan = sc;
    c->opt.fwd_body = NULL; /* the router keys were stripped from the first body; the new one has none */
    c->opt.fwd_len = 0;
    sy_xlate_redo(c);
    /* a fresh attempt machine in the group that answered */
    struct sy_call_progress *rt = &c->rt;
    rt->mock_failing = 0;
    rt->max_retries = -1;
    rt->fb_kind = -1;
    rt->fb_next = 0;
    rt->retries_in_group = 0;
    rt->sdk_retries = 0;
    rt->err_status = 0;
    rt->err_class = 0;
    rt->input_tokens = -1; /* the router's pre-call checks count again if they must */
    rt->input_is_bound = 0;
    rt->retry_after_s = 0;
    c->up.up_status = 0;
    c->up.up_body_over = 0;
    c->up.retry_after_hdr[0] = 0;
    sy_buf_reset(&c->up.up_body);
    c->out.exception_class = NULL;
    c->req->on_abort = on_abort;
    attempt(c);
    return 0;
}

static int upstream_run(struct sy_call *c)
{
    attempt(c);
    return SY_AGAIN;
}

const struct sy_stage sy_stage_upstream = {
    .name = "upstream",
    .routes = SY_RKB_LLM | SY_RKB(SY_RK_RESPONSES_ID) | SY_RKB(SY_RK_FILES),
    .run = upstream_run,
};
