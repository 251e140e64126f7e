/* payload.c - LiteLLM's StandardLoggingPayload from a finished call's record.
 *
 * Built once per record, on the logging thread (never on a worker's loop),
 * the first time a sink asks for it (sy_log_payload), and shared by every
 * sink. The shape is LiteLLM's (litellm/types/utils.py StandardLoggingPayload,
 * filled by litellm_logging.py get_standard_logging_object_payload), member
 * for member and in its order:
 *
 *   id                the response's id; a cache hit's is "<id>_cache_hit<time>"
 *                     as LiteLLM writes it (a hit is not the same request twice)
 *   trace_id          metadata.trace_id / litellm_trace_id, else the call id
 *   call_type, cache_hit, stream (true for a stream, else null), status,
 *   status_fields     {"llm_api_status", "guardrail_status"}: the record's
 *                     guard_status, or when that is "not_run" the first
 *                     entry of guardrail_information that ran, mapped as
 *                     LiteLLM's _get_status_fields maps it
 *   custom_llm_provider, saved_cache_cost (0.0), startTime, endTime,
 *   completionStartTime (unix seconds, floats), response_time (first token
 *                     for a stream, the end otherwise)
 *   model             litellm_params.model without its provider prefix
 *   metadata          StandardLoggingMetadata: user_api_key_* of the key,
 *                     spend_logs_metadata, requester_ip_address, user_agent,
 *                     requester_metadata (the body's metadata), usage_object,
 *                     user_api_key_auth_metadata (the key's metadata, its
 *                     "logging" entry scrubbed as LiteLLM scrubs it),
 *                     applied_guardrails (the names in guardrail_information,
 *                     each once, in order; null when none ran), ...
 *   cache_key, response_cost, cost_breakdown (null), total/prompt/completion
 *   tokens, request_tags (the record's tags, then LiteLLM's two User-Agent
 *   tags), end_user, api_base (trailing slash dropped), model_group,
 *   model_id, requester_ip_address, user_agent,
 *   messages          the request's messages; input or prompt as LiteLLM's
 *                     Logging turns them into messages (a string: one user
 *                     message; a list of strings: one each); a string system
 *                     prompt (/v1/messages) prepended as a system message
 *   response          the JSON answer; a stream assembled into the answer it
 *                     stands for (OpenAI chunks: cache/sse.c; Anthropic
 *                     events: message_start + content blocks + message_delta;
 *                     Responses events: the final response.completed
 *                     object); {} for a failure; what cannot be parsed (a cut
 *                     capture, a stream without its end) is kept as a string
 *   model_parameters  the request's members other than the prompt, the
 *                     model, metadata and switchyard/LiteLLM routing keys
 *   hidden_params, model_map_information, error_str, error_information,
 *   response_cost_failure_debug_info,
 *   guardrail_information  the record's guard_info (the list of LiteLLM's
 *                     StandardLoggingGuardrailInformation the guardrails
 *                     stage built) as it came; null when none ran or when it
 *                     is not a JSON array
 *   standard_built_in_tools_params.
 *
 * Redaction. SY_LOGREC_NO_MESSAGES (turn_off_message_logging): messages is
 * [{"role":"user","content":"redacted-by-litellm"}] and response
 * {"text":"redacted-by-litellm"} (LiteLLM's perform_redaction for a response
 * it cannot edit in place: the record holds no content to edit).
 * SY_LOGREC_REDACT_KEY (redact_user_api_key_info): every user_api_key_*
 * member of metadata is left out, as LiteLLM's redact_user_api_key_info does.
 *
 * Parsing is json-c, linear in the input; invalid input (the fuzzer's) gives
 * strings and nulls, never a failure: -1 is out of memory only.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "core/buf.h"
#include "core/pyrepr.h"
#include "logging/logging.h"

#define REDACTED       "redacted-by-litellm"
#define JDEPTH         64
#define MAX_BLOCKS     256 /* content blocks of one Anthropic message kept */
#define PAYLOAD_CAP    (64u << 20)
#define JSONC_TEXT_OPT (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* ---- small writers ---- */

static void jstr(struct sy_buf *b, const char *s)
{
    if (!s) {
        sy_buf_puts(b, "null");
        return;
    }
    sy_py_json_dumps_str(b, s, strlen(s));
}

static void jstr_or_empty(struct sy_buf *b, const char *s)
{
    jstr(b, s ? s : "");
}

static void jfloat(struct sy_buf *b, double d)
{
    if (!isfinite(d))
        d = 0;
    sy_py_float_repr(b, d);
}

static void jkey(struct sy_buf *b, int *first, const char *k)
{
    if (!*first)
        sy_buf_puts(b, ",");
    *first = 0;
    sy_buf_puts(b, "\"");
    sy_buf_puts(b, k);
    sy_buf_puts(b, "\":");
}

static void jobj(struct sy_buf *b, json_object *o)
{
    const char *t = json_object_to_json_string_ext(o, JSONC_TEXT_OPT);
    sy_buf_puts(b, t ? t : "null");
}

/* Parse p[0..n) as one JSON value (strict, UTF-8 checked); NULL when it is not. */
static json_object *jparse(const char *p, size_t n)
{
    if (!p || !n || n > (size_t)0x7ffffff0)
        return NULL;
    struct json_tokener *tok = json_tokener_new_ex(JDEPTH);
    if (!tok)
        return NULL;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(tok, p, (int)n);
    if (o && (json_tokener_get_error(tok) != json_tokener_success || tok->char_offset != (int)n)) {
        json_object_put(o);
        o = NULL;
    }
    json_tokener_free(tok);
    return o;
}

static json_object *jget(json_object *o, const char *k)
{
    json_object *v = NULL;
    if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, k, &v))
        return v;
    return NULL;
}

static const char *jget_str(json_object *o, const char *k)
{
    json_object *v = jget(o, k);
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* ---- messages ---- */

/* LiteLLM's Logging.__init__: a string becomes one user message, a list of
 * strings one user message each; anything else is kept. New reference. */
static json_object *as_messages(json_object *v)
{
    if (json_object_is_type(v, json_type_string)) {
        json_object *a = json_object_new_array(), *m = json_object_new_object();
        json_object_object_add(m, "role", json_object_new_string("user"));
        json_object_object_add(m, "content", json_object_get(v));
        json_object_array_add(a, m);
        return a;
    }
    if (json_object_is_type(v, json_type_array) && json_object_array_length(v) > 0 &&
        json_object_is_type(json_object_array_get_idx(v, 0), json_type_string)) {
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *m = json_object_new_object();
            json_object_object_add(m, "role", json_object_new_string("user"));
            json_object_object_add(m, "content", json_object_get(json_object_array_get_idx(v, i)));
            json_object_array_add(a, m);
        }
        return a;
    }
    return json_object_get(v);
}

static void write_messages(struct sy_buf *b, const struct sy_logrec *r, json_object *req)
{
    if (r->flags & SY_LOGREC_NO_MESSAGES) {
        sy_buf_puts(b, "[{\"role\":\"user\",\"content\":\"" REDACTED "\"}]");
        return;
    }
    json_object *v = NULL;
    static const char *const names[] = {"messages", "input", "prompt"};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !v; i++)
        v = jget(req, names[i]);
    if (!v || json_object_is_type(v, json_type_null)) {
        sy_buf_puts(b, "null");
        return;
    }
    json_object *m = as_messages(v);
    const char *sys = jget_str(req, "system"); /* append_system_prompt_messages: a string system only */
    if (sys && json_object_is_type(m, json_type_array)) {
        json_object *first = json_object_array_length(m) ? json_object_array_get_idx(m, 0) : NULL;
        const char *role = jget_str(first, "role"), *content = jget_str(first, "content");
        if (!(role && !strcmp(role, "system") && content && !strcmp(content, sys))) {
            json_object *a = json_object_new_array(), *s = json_object_new_object();
            json_object_object_add(s, "role", json_object_new_string("system"));
            json_object_object_add(s, "content", json_object_new_string(sys));
            json_object_array_add(a, s);
            for (size_t i = 0; i < json_object_array_length(m); i++)
                json_object_array_add(a, json_object_get(json_object_array_get_idx(m, i)));
            json_object_put(m);
            m = a;
        }
    }
    jobj(b, m);
    json_object_put(m);
}

/* ---- the response: a JSON answer, or a stream assembled ---- */

struct sse_ev {
    const char *p; /* the data lines' payload (first line only when several) */
    size_t n;
};

/* The next "data:" payload of an SSE text from *off; 0 at the end. Lines end
 * "\n" or "\r\n"; one event's several data lines are rare in what LLM APIs
 * send and are read as separate payloads. */
static int sse_next(const char *s, size_t n, size_t *off, struct sse_ev *ev)
{
    while (*off < n) {
        const char *line = s + *off;
        const char *nl = memchr(line, '\n', n - *off);
        size_t len = nl ? (size_t)(nl - line) : n - *off;
        *off += len + (nl ? 1 : 0);
        if (len && line[len - 1] == '\r')
            len--;
        if (len >= 5 && !memcmp(line, "data:", 5)) {
            ev->p = line + 5;
            ev->n = len - 5;
            if (ev->n && ev->p[0] == ' ') {
                ev->p++;
                ev->n--;
            }
            return 1;
        }
    }
    return 0;
}

struct blk {
    json_object *obj; /* the content_block as started */
    struct sy_buf text, json;
    int kind; /* 0 other, 1 text, 2 thinking, 3 tool_use (input from partial_json) */
};

static void blk_finish(struct blk *k)
{
    if (!k->obj)
        return;
    if (k->kind == 1)
        json_object_object_add(k->obj, "text",
                               json_object_new_string_len(k->text.p ? k->text.p : "", (int)k->text.len));
    else if (k->kind == 2)
        json_object_object_add(k->obj, "thinking",
                               json_object_new_string_len(k->text.p ? k->text.p : "", (int)k->text.len));
    else if (k->kind == 3 && k->json.len) {
        json_object *in = jparse(k->json.p, k->json.len);
        json_object_object_add(k->obj, "input", in ? in : json_object_new_string_len(k->json.p, (int)k->json.len));
    }
    k->kind = 0;
}

/* Anthropic /v1/messages events into the message they stand for; NULL when
 * no message_start was seen. */
static json_object *assemble_anthropic(const char *s, size_t n)
{
    json_object *msg = NULL;
    struct blk *blks = calloc(MAX_BLOCKS, sizeof *blks);
    if (!blks)
        return NULL;
    size_t nblk = 0, off = 0;
    struct sse_ev ev;
    while (sse_next(s, n, &off, &ev)) {
        json_object *e = jparse(ev.p, ev.n);
        const char *type = jget_str(e, "type");
        if (!type) {
            json_object_put(e);
            continue;
        }
        json_object *idx = jget(e, "index");
        int64_t i = idx && json_object_is_type(idx, json_type_int) ? json_object_get_int64(idx) : -1;
        struct blk *k = i >= 0 && i < MAX_BLOCKS ? &blks[i] : NULL;
        if (!strcmp(type, "message_start") && !msg) {
            json_object *m = jget(e, "message");
            if (m && json_object_is_type(m, json_type_object))
                msg = json_object_get(m);
        } else if (!strcmp(type, "content_block_start") && k && !k->obj) {
            json_object *cb = jget(e, "content_block");
            if (cb && json_object_is_type(cb, json_type_object)) {
                const char *t = jget_str(cb, "type");
                k->obj = json_object_get(cb);
                sy_buf_init(&k->text, 64u << 20);
                sy_buf_init(&k->json, 64u << 20);
                k->kind = !t ? 0 : !strcmp(t, "text") ? 1 : !strcmp(t, "thinking") ? 2 : !strcmp(t, "tool_use") ? 3 : 0;
                if (k->kind == 1 && jget_str(cb, "text"))
                    sy_buf_puts(&k->text, jget_str(cb, "text"));
                if ((size_t)i + 1 > nblk)
                    nblk = (size_t)i + 1;
            }
        } else if (!strcmp(type, "content_block_delta") && k && k->obj) {
            json_object *d = jget(e, "delta");
            const char *dt = jget_str(d, "type");
            if (dt && !strcmp(dt, "text_delta") && jget_str(d, "text"))
                sy_buf_puts(&k->text, jget_str(d, "text"));
            else if (dt && !strcmp(dt, "thinking_delta") && jget_str(d, "thinking"))
                sy_buf_puts(&k->text, jget_str(d, "thinking"));
            else if (dt && !strcmp(dt, "input_json_delta") && jget_str(d, "partial_json"))
                sy_buf_puts(&k->json, jget_str(d, "partial_json"));
            else if (dt && !strcmp(dt, "signature_delta") && jget_str(d, "signature"))
                json_object_object_add(k->obj, "signature", json_object_new_string(jget_str(d, "signature")));
        } else if (!strcmp(type, "content_block_stop") && k) {
            blk_finish(k);
        } else if (!strcmp(type, "message_delta") && msg) {
            json_object *d = jget(e, "delta"), *u = jget(e, "usage");
            if (d && json_object_is_type(d, json_type_object)) {
                json_object_object_foreach(d, dk, dv)
                {
                    json_object_object_add(msg, dk, json_object_get(dv));
                }
            }
            if (u && json_object_is_type(u, json_type_object)) {
                json_object *mu = jget(msg, "usage");
                if (!mu || !json_object_is_type(mu, json_type_object)) {
                    mu = json_object_new_object();
                    json_object_object_add(msg, "usage", mu);
                }
                json_object_object_foreach(u, uk, uv)
                {
                    if (!json_object_is_type(uv, json_type_null))
                        json_object_object_add(mu, uk, json_object_get(uv));
                }
            }
        }
        json_object_put(e);
    }
    if (msg) {
        json_object *content = json_object_new_array();
        for (size_t i = 0; i < nblk; i++) {
            blk_finish(&blks[i]);
            if (blks[i].obj)
                json_object_array_add(content, json_object_get(blks[i].obj));
        }
        json_object_object_add(msg, "content", content);
    }
    for (size_t i = 0; i < nblk; i++) {
        json_object_put(blks[i].obj);
        sy_buf_free(&blks[i].text);
        sy_buf_free(&blks[i].json);
    }
    free(blks);
    return msg;
}

/* Responses API events: the response of the last response.completed /
 * .incomplete / .failed event; NULL when none. */
static json_object *assemble_responses(const char *s, size_t n)
{
    json_object *resp = NULL;
    size_t off = 0;
    struct sse_ev ev;
    while (sse_next(s, n, &off, &ev)) {
        if (!memmem(ev.p, ev.n, "\"response.", 10))
            continue;
        json_object *e = jparse(ev.p, ev.n);
        const char *type = jget_str(e, "type");
        json_object *r = jget(e, "response");
        if (type &&
            (!strcmp(type, "response.completed") || !strcmp(type, "response.incomplete") ||
             !strcmp(type, "response.failed")) &&
            r && json_object_is_type(r, json_type_object)) {
            json_object_put(resp);
            resp = json_object_get(r);
        }
        json_object_put(e);
    }
    return resp;
}

static json_object *assemble_openai(const char *s, size_t n)
{
    struct sy_buf out;
    sy_buf_init(&out, PAYLOAD_CAP);
    json_object *o = NULL;
    if (sy_cache_sse_assemble(s, n, &out) == 0 && !sy_buf_failed(&out))
        o = jparse(out.p, out.len);
    sy_buf_free(&out);
    return o;
}

static void write_response(struct sy_buf *b, const struct sy_logrec *r)
{
    if (r->flags & SY_LOGREC_NO_MESSAGES) {
        sy_buf_puts(b, "{\"text\":\"" REDACTED "\"}");
        return;
    }
    if ((r->flags & SY_LOGREC_FAILURE) || !r->response || !r->response_len) {
        sy_buf_puts(b, "{}"); /* LiteLLM: no response object */
        return;
    }
    sy_log_response_json(r->response, r->response_len, !!(r->flags & SY_LOGREC_RESP_SSE), r->call_type, b);
}

int sy_log_response_json(const char *p, size_t n, int sse, const char *call_type, struct sy_buf *b)
{
    json_object *o = NULL;
    if (sse) {
        const char *ct = call_type ? call_type : "";
        if (!strcmp(ct, "anthropic_messages"))
            o = assemble_anthropic(p, n);
        else if (!strcmp(ct, "aresponses"))
            o = assemble_responses(p, n);
        else
            o = assemble_openai(p, n);
    } else {
        o = jparse(p, n);
    }
    if (o) {
        jobj(b, o);
        json_object_put(o);
    } else {
        sy_py_json_dumps_str(b, p, n);
    }
    return sy_buf_failed(b) ? -1 : 0;
}

/* ---- model_parameters: the request's optional params ---- */

static int not_a_param(const char *k)
{
    static const char *const skip[] = {"model",
                                       "messages",
                                       "input",
                                       "prompt",
                                       "system",
                                       "metadata",
                                       "litellm_metadata",
                                       "api_key",
                                       "api_base",
                                       "base_url",
                                       "api_version",
                                       "organization",
                                       "mock_response",
                                       "mock_testing_fallbacks",
                                       "mock_testing_rate_limit_error",
                                       "mock_timeout",
                                       "num_retries",
                                       "fallbacks",
                                       "context_window_fallbacks",
                                       "timeout",
                                       "stream_timeout",
                                       "tags",
                                       "caching",
                                       "cache",
                                       "no-log",
                                       "litellm_trace_id",
                                       "litellm_session_id",
                                       "litellm_call_id",
                                       "disable_fallbacks",
                                       "previous_response_id"};
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
        if (!strcmp(k, skip[i]))
            return 1;
    return 0;
}

static void write_model_parameters(struct sy_buf *b, json_object *req)
{
    sy_buf_puts(b, "{");
    int first = 1;
    if (req && json_object_is_type(req, json_type_object)) {
        json_object_object_foreach(req, k, v)
        {
            if (not_a_param(k))
                continue;
            if (!first)
                sy_buf_puts(b, ",");
            first = 0;
            sy_py_json_dumps_str(b, k, strlen(k));
            sy_buf_puts(b, ":");
            jobj(b, v);
        }
    }
    sy_buf_puts(b, "}");
}

/* ---- metadata ---- */

/* A JSON object text of the record (request metadata, key metadata) parsed;
 * NULL when absent or not an object. */
static json_object *jparse_obj(const char *s)
{
    json_object *o = s ? jparse(s, strlen(s)) : NULL;
    if (o && !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        o = NULL;
    }
    return o;
}

static void write_usage_object(struct sy_buf *b, const struct sy_logrec *r)
{
    sy_buf_puts(b, "{\"completion_tokens\":");
    sy_buf_u64(b, r->completion_tokens);
    sy_buf_puts(b, ",\"prompt_tokens\":");
    sy_buf_u64(b, r->prompt_tokens);
    sy_buf_puts(b, ",\"total_tokens\":");
    sy_buf_u64(b, r->prompt_tokens + r->completion_tokens);
    sy_buf_puts(b, ",\"completion_tokens_details\":{\"reasoning_tokens\":");
    sy_buf_u64(b, r->reasoning_tokens);
    sy_buf_puts(b, "},\"prompt_tokens_details\":{\"cached_tokens\":");
    sy_buf_u64(b, r->cached_tokens);
    sy_buf_puts(b, ",\"cache_creation_tokens\":");
    sy_buf_u64(b, r->cache_creation_tokens);
    sy_buf_puts(b, "},\"cache_creation_input_tokens\":");
    sy_buf_u64(b, r->cache_creation_tokens);
    sy_buf_puts(b, ",\"cache_read_input_tokens\":");
    sy_buf_u64(b, r->cached_tokens);
    sy_buf_puts(b, "}");
}

/* The key's metadata as LiteLLM logs it (scrub_sensitive_keys_in_metadata):
 * its "logging" entry (per-key callback credentials) replaced. */
static void write_key_metadata(struct sy_buf *b, json_object *km)
{
    if (!km) {
        sy_buf_puts(b, "null");
        return;
    }
    if (jget(km, "logging"))
        json_object_object_add(km, "logging", json_object_new_string("scrubbed_by_litellm_for_sensitive_keys"));
    jobj(b, km);
}

/* applied_guardrails: each guardrail_name of the list once, in order. */
static void write_applied_guardrails(struct sy_buf *b, json_object *gi)
{
    if (!gi) {
        sy_buf_puts(b, "null");
        return;
    }
    json_object *seen = json_object_new_object();
    int first = 1;
    sy_buf_puts(b, "[");
    for (size_t i = 0; i < json_object_array_length(gi); i++) {
        const char *name = jget_str(json_object_array_get_idx(gi, i), "guardrail_name");
        if (!name || json_object_object_get_ex(seen, name, NULL))
            continue;
        json_object_object_add(seen, name, NULL);
        if (!first)
            sy_buf_puts(b, ",");
        first = 0;
        jstr(b, name);
    }
    sy_buf_puts(b, "]");
    json_object_put(seen);
}

/* status_fields.guardrail_status: the record's, else (not_run) LiteLLM's
 * _get_status_fields over the list: the first entry that ran, its legacy
 * values mapped. */
static const char *guardrail_status(const struct sy_logrec *r, json_object *gi)
{
    static const char *const names[] = {
        [SY_LOGREC_GUARD_NOT_RUN] = "not_run",
        [SY_LOGREC_GUARD_SUCCESS] = "success",
        [SY_LOGREC_GUARD_INTERVENED] = "guardrail_intervened",
        [SY_LOGREC_GUARD_FAILED] = "guardrail_failed_to_respond",
    };
    if (r->guard_status > 0 && r->guard_status < (int)(sizeof names / sizeof names[0]))
        return names[r->guard_status];
    static const char *const map[][2] = {
        {"success", "success"},
        {"blocked", "guardrail_intervened"},
        {"guardrail_intervened", "guardrail_intervened"},
        {"failure", "guardrail_failed_to_respond"},
        {"guardrail_failed_to_respond", "guardrail_failed_to_respond"},
    };
    for (size_t i = 0; gi && i < json_object_array_length(gi); i++) {
        json_object *e = json_object_array_get_idx(gi, i);
        if (!e || !json_object_is_type(e, json_type_object))
            continue;
        json_object *v = jget(e, "guardrail_status");
        const char *st = v ? (json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "") : "not_run";
        if (!strcmp(st, "not_run"))
            continue;
        for (size_t j = 0; j < sizeof map / sizeof map[0]; j++)
            if (!strcmp(st, map[j][0]))
                return map[j][1];
        return "not_run"; /* GUARDRAIL_STATUS_MAP.get(raw_status, "not_run") */
    }
    return "not_run";
}

static void write_metadata(struct sy_buf *b, const struct sy_logrec *r, json_object *rm, json_object *gi)
{
    int keys = !(r->flags & SY_LOGREC_REDACT_KEY), first = 1;
    sy_buf_puts(b, "{");
    if (keys) {
        jkey(b, &first, "user_api_key_hash");
        jstr(b, r->hashed_key);
        jkey(b, &first, "user_api_key_alias");
        jstr(b, r->key_alias);
        jkey(b, &first, "user_api_key_spend");
        sy_buf_puts(b, "null");
        jkey(b, &first, "user_api_key_max_budget");
        sy_buf_puts(b, "null");
        jkey(b, &first, "user_api_key_budget_reset_at");
        sy_buf_puts(b, "null");
        jkey(b, &first, "user_api_key_team_id");
        jstr(b, r->team_id);
        jkey(b, &first, "user_api_key_org_id");
        jstr(b, r->org_id);
        jkey(b, &first, "user_api_key_project_id");
        sy_buf_puts(b, "null");
        jkey(b, &first, "user_api_key_user_id");
        jstr(b, r->user_id);
        jkey(b, &first, "user_api_key_team_alias");
        jstr(b, r->team_alias);
        jkey(b, &first, "user_api_key_user_email");
        jstr(b, r->user_email);
        jkey(b, &first, "user_api_key_end_user_id");
        jstr(b, r->end_user);
        jkey(b, &first, "user_api_key_request_route");
        jstr(b, r->route);
    }
    jkey(b, &first, "spend_logs_metadata");
    json_object *slm = jget(rm, "spend_logs_metadata");
    if (slm && json_object_is_type(slm, json_type_object))
        jobj(b, slm);
    else
        sy_buf_puts(b, "null");
    jkey(b, &first, "requester_ip_address");
    jstr(b, r->requester_ip);
    jkey(b, &first, "user_agent");
    jstr(b, r->user_agent);
    jkey(b, &first, "requester_metadata");
    if (rm)
        jobj(b, rm);
    else
        sy_buf_puts(b, "null");
    jkey(b, &first, "prompt_management_metadata");
    sy_buf_puts(b, "null");
    jkey(b, &first, "applied_guardrails");
    write_applied_guardrails(b, gi);
    jkey(b, &first, "mcp_tool_call_metadata");
    sy_buf_puts(b, "null");
    jkey(b, &first, "vector_store_request_metadata");
    sy_buf_puts(b, "null");
    jkey(b, &first, "usage_object");
    write_usage_object(b, r);
    jkey(b, &first, "requester_custom_headers");
    sy_buf_puts(b, "null");
    jkey(b, &first, "cold_storage_object_key");
    sy_buf_puts(b, "null");
    if (keys) {
        jkey(b, &first, "user_api_key_auth_metadata");
        json_object *km = jparse_obj(r->key_metadata);
        write_key_metadata(b, km);
        json_object_put(km);
    }
    jkey(b, &first, "team_alias");
    jstr(b, keys ? r->team_alias : NULL);
    jkey(b, &first, "team_id");
    jstr(b, keys ? r->team_id : NULL);
    sy_buf_puts(b, "}");
}

/* The strings of array a not yet in seen (added to it) written to b. */
static void add_tags(struct sy_buf *b, int *first, json_object *a, json_object *seen)
{
    if (!a || !json_object_is_type(a, json_type_array))
        return;
    for (size_t i = 0; i < json_object_array_length(a); i++) {
        json_object *e = json_object_array_get_idx(a, i);
        if (!json_object_is_type(e, json_type_string) || jget(seen, json_object_get_string(e)))
            continue;
        json_object_object_add(seen, json_object_get_string(e), json_object_new_boolean(1));
        if (!*first)
            sy_buf_puts(b, ",");
        *first = 0;
        jobj(b, e);
    }
}

/* request_tags: the request's tags (body, metadata), the key's and the team's
 * metadata.tags merged in as LiteLLM's proxy merges them (each once), then
 * LiteLLM's _get_user_agent_tags. */
static void write_tags(struct sy_buf *b, const struct sy_logrec *r)
{
    json_object *seen = json_object_new_object();
    json_object *t = r->tags ? jparse(r->tags, strlen(r->tags)) : NULL;
    json_object *km = jparse_obj(r->key_metadata), *tm = jparse_obj(r->team_metadata);
    sy_buf_puts(b, "[");
    int first = 1;
    add_tags(b, &first, t, seen);
    add_tags(b, &first, jget(km, "tags"), seen);
    add_tags(b, &first, jget(tm, "tags"), seen);
    json_object_put(t);
    json_object_put(km);
    json_object_put(tm);
    json_object_put(seen);
    if (r->user_agent) {
        const char *slash = strchr(r->user_agent, '/');
        struct sy_buf tag;
        sy_buf_init(&tag, 16384);
        if (slash) {
            sy_buf_puts(&tag, "User-Agent: ");
            sy_buf_append(&tag, r->user_agent, (size_t)(slash - r->user_agent));
            if (!first)
                sy_buf_puts(b, ",");
            first = 0;
            sy_py_json_dumps_str(b, tag.p ? tag.p : "", tag.len);
            sy_buf_reset(&tag);
        }
        sy_buf_puts(&tag, "User-Agent: ");
        sy_buf_puts(&tag, r->user_agent);
        if (!first)
            sy_buf_puts(b, ",");
        sy_py_json_dumps_str(b, tag.p ? tag.p : "", tag.len);
        sy_buf_free(&tag);
    }
    sy_buf_puts(b, "]");
}

/* litellm_params.model without its provider prefix ("openai/gpt-4o" -> "gpt-4o"). */
static const char *bare_model(const struct sy_logrec *r)
{
    const char *m = r->upstream_model ? r->upstream_model : r->model_group ? r->model_group : r->model;
    if (!m)
        return "";
    size_t pl = r->provider ? strlen(r->provider) : 0;
    if (pl && !strncmp(m, r->provider, pl) && m[pl] == '/')
        return m + pl + 1;
    return m;
}

static void write_api_base(struct sy_buf *b, const char *s)
{
    if (!s) {
        sy_buf_puts(b, "\"\"");
        return;
    }
    size_t n = strlen(s);
    while (n && s[n - 1] == '/') /* strip_trailing_slash */
        n--;
    sy_py_json_dumps_str(b, s, n);
}

/* trace_id: metadata.trace_id / session_id, else litellm_trace_id as given,
 * else the call id (LiteLLM: a uuid of its own per call). */
static const char *trace_id(const struct sy_logrec *r)
{
    return r->trace_id ? r->trace_id : r->call_id ? r->call_id : r->id;
}

int sy_log_payload_build(const struct sy_logrec *r, struct sy_buf *b)
{
    int fail = !!(r->flags & SY_LOGREC_FAILURE), first = 1;
    json_object *req = r->request && !(r->flags & SY_LOGREC_NO_MESSAGES) ? jparse(r->request, r->request_len) : NULL;
    if (req && !json_object_is_type(req, json_type_object)) {
        json_object_put(req);
        req = NULL;
    }
    json_object *rm = jparse_obj(r->request_metadata);
    json_object *gi = r->guard_info ? jparse(r->guard_info, strlen(r->guard_info)) : NULL; /* NULL: none ran */
    if (gi && !json_object_is_type(gi, json_type_array)) {
        json_object_put(gi);
        gi = NULL;
    }
    double cost = (r->flags & SY_LOGREC_COST_KNOWN) ? r->cost : 0;
    uint64_t total = r->prompt_tokens + r->completion_tokens;

    sy_buf_puts(b, "{");
    jkey(b, &first, "id");
    if (r->flags & SY_LOGREC_CACHE_HIT) { /* LiteLLM: f"{id}_cache_hit{time.time()}" */
        struct sy_buf id;
        sy_buf_init(&id, 4096);
        sy_buf_puts(&id, r->id ? r->id : "");
        sy_buf_puts(&id, "_cache_hit");
        sy_py_float_repr(&id, r->end_s);
        sy_py_json_dumps_str(b, id.p ? id.p : "", id.len);
        sy_buf_free(&id);
    } else {
        jstr_or_empty(b, r->id);
    }
    jkey(b, &first, "trace_id");
    jstr_or_empty(b, trace_id(r));
    jkey(b, &first, "call_type");
    jstr_or_empty(b, r->call_type);
    jkey(b, &first, "cache_hit");
    sy_buf_puts(b, (r->flags & SY_LOGREC_CACHE_HIT) ? "true" : "false");
    jkey(b, &first, "stream");
    sy_buf_puts(b, (r->flags & SY_LOGREC_STREAM) ? "true" : "null");
    jkey(b, &first, "status");
    sy_buf_puts(b, fail ? "\"failure\"" : "\"success\"");
    jkey(b, &first, "status_fields");
    sy_buf_puts(b, fail ? "{\"llm_api_status\":\"failure\",\"guardrail_status\":\""
                        : "{\"llm_api_status\":\"success\",\"guardrail_status\":\"");
    sy_buf_puts(b, guardrail_status(r, gi));
    sy_buf_puts(b, "\"}");
    jkey(b, &first, "custom_llm_provider");
    jstr(b, r->provider);
    jkey(b, &first, "saved_cache_cost");
    sy_buf_puts(b, "0.0");
    jkey(b, &first, "startTime");
    jfloat(b, r->start_s);
    jkey(b, &first, "endTime");
    jfloat(b, r->end_s);
    jkey(b, &first, "completionStartTime");
    jfloat(b, r->completion_start_s);
    jkey(b, &first, "response_time");
    jfloat(b, (r->flags & SY_LOGREC_STREAM) ? r->completion_start_s - r->start_s : r->end_s - r->start_s);
    jkey(b, &first, "model");
    jstr(b, bare_model(r));
    jkey(b, &first, "metadata");
    write_metadata(b, r, rm, gi);
    jkey(b, &first, "cache_key");
    jstr(b, r->cache_key);
    jkey(b, &first, "response_cost");
    jfloat(b, cost);
    jkey(b, &first, "cost_breakdown");
    sy_buf_puts(b, "null");
    jkey(b, &first, "total_tokens");
    sy_buf_u64(b, total);
    jkey(b, &first, "prompt_tokens");
    sy_buf_u64(b, r->prompt_tokens);
    jkey(b, &first, "completion_tokens");
    sy_buf_u64(b, r->completion_tokens);
    jkey(b, &first, "request_tags");
    write_tags(b, r);
    jkey(b, &first, "end_user");
    jstr_or_empty(b, r->end_user);
    jkey(b, &first, "api_base");
    write_api_base(b, r->api_base);
    jkey(b, &first, "model_group");
    jstr_or_empty(b, r->model_group);
    jkey(b, &first, "model_id");
    jstr_or_empty(b, r->model_id);
    jkey(b, &first, "requester_ip_address");
    jstr(b, r->requester_ip);
    jkey(b, &first, "user_agent");
    jstr(b, r->user_agent);
    jkey(b, &first, "messages");
    write_messages(b, r, req);
    jkey(b, &first, "response");
    write_response(b, r);
    jkey(b, &first, "model_parameters");
    write_model_parameters(b, req);
    jkey(b, &first, "hidden_params");
    sy_buf_puts(b, "{\"model_id\":");
    jstr(b, r->model_id);
    sy_buf_puts(b, ",\"cache_key\":");
    jstr(b, r->cache_key);
    sy_buf_puts(b, ",\"api_base\":");
    jstr(b, r->api_base);
    sy_buf_puts(b, ",\"response_cost\":");
    if (r->flags & SY_LOGREC_COST_KNOWN)
        jfloat(b, cost);
    else
        sy_buf_puts(b, "null");
    sy_buf_puts(b, ",\"litellm_overhead_time_ms\":null,\"additional_headers\":null,\"batch_models\":null,"
                   "\"litellm_model_name\":");
    jstr(b, r->upstream_model);
    sy_buf_puts(b, ",\"usage_object\":null}");
    jkey(b, &first, "model_map_information");
    sy_buf_puts(b, "{\"model_map_key\":");
    jstr(b, bare_model(r));
    sy_buf_puts(b, ",\"model_map_value\":null}");
    jkey(b, &first, "error_str");
    jstr(b, fail ? (r->error_message ? r->error_message : "") : NULL);
    jkey(b, &first, "error_information");
    sy_buf_puts(b, "{\"error_code\":");
    if (fail) {
        char code[16];
        snprintf(code, sizeof code, "%d", r->http_status);
        jstr(b, r->http_status > 0 ? code : "");
    } else {
        sy_buf_puts(b, "\"\"");
    }
    sy_buf_puts(b, ",\"error_class\":");
    jstr_or_empty(b, fail ? r->error_class : NULL);
    sy_buf_puts(b, ",\"llm_provider\":");
    jstr_or_empty(b, fail ? r->provider : NULL);
    sy_buf_puts(b, ",\"traceback\":\"\",\"error_message\":");
    jstr_or_empty(b, fail ? r->error_message : NULL);
    sy_buf_puts(b, "}");
    jkey(b, &first, "response_cost_failure_debug_info");
    sy_buf_puts(b, "null");
    jkey(b, &first, "guardrail_information");
    sy_buf_puts(b, gi ? r->guard_info : "null"); /* as the stage wrote it (its floats kept) */
    jkey(b, &first, "standard_built_in_tools_params");
    sy_buf_puts(b, "{\"web_search_options\":");
    json_object *ws = jget(req, "web_search_options");
    if (ws)
        jobj(b, ws);
    else
        sy_buf_puts(b, "null");
    sy_buf_puts(b, ",\"file_search\":null}");
    sy_buf_puts(b, "}");
    json_object_put(req);
    json_object_put(rm);
    json_object_put(gi);
    return sy_buf_failed(b) ? -1 : 0;
}

const char *sy_log_payload(struct sy_logrec *rec, size_t *len)
{
    if (!rec->payload) {
        struct sy_buf b;
        sy_buf_init(&b, PAYLOAD_CAP);
        if (sy_log_payload_build(rec, &b) != 0 || !b.p) {
            sy_buf_free(&b);
            return NULL;
        }
        rec->payload = b.p; /* the engine frees it with the record */
        rec->payload_len = b.len;
    }
    if (len)
        *len = rec->payload_len;
    return rec->payload;
}
