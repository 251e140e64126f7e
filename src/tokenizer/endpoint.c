/* endpoint.c - POST /utils/token_counter in LiteLLM's response shape.
 *
 *   request:  {"model": str, "messages": [...] | "prompt": str|[str],
 *              "return_token_ids": bool (ours, optional)}
 *   200:      {"total_tokens": N, "request_model": "...", "model_used": "...",
 *              "tokenizer_type": "openai_tokenizer"[, "token_ids": [...]]}
 *   400:      {"error": {"message", "type", "param", "code": "400"}}
 *
 * `messages` are counted with `tools` and `tool_choice` when the request
 * carries them, as LiteLLM's token_counter(messages=, tools=, tool_choice=)
 * counts them (a prompt with tools is refused, as token_counter refuses
 * text with tools); model_used drops a provider prefix ("openai/gpt-4o" -> "gpt-4o"),
 * and a deployment's model_info.tokenizer picks the encoding when it names
 * cl100k_base or o200k_base. token_ids (opt-in) are the ids of the prompt
 * string, or of each message string field in order, without the fixed
 * per-message overheads.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/errors.h"
#include "tokenizer/tok_internal.h"

static int error_reply(struct sy_buf *out, const char *msg)
{
    sy_buf_reset(out);
    SY_BUF_LIT(out, "{\"error\":{\"message\":\"");
    sy_buf_json_escape(out, msg, strlen(msg));
    SY_BUF_LIT(out, "\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"400\"}}");
    return 400;
}

static void put_str(struct sy_buf *out, const char *s, size_t n)
{
    SY_BUF_LIT(out, "\"");
    sy_buf_json_escape(out, s, n);
    SY_BUF_LIT(out, "\"");
}

struct ids {
    uint32_t *v;
    size_t n, cap;
};

/* Collect ids of every string a count would encode (messages' string fields,
 * text parts, tool call arguments) or of the prompt. */
static void collect(const struct sy_tok *t, struct json_object *o, struct ids *ids, int depth)
{
    if (depth > 32)
        return;
    switch (json_object_get_type(o)) {
    case json_type_string:
        sy_tok_encode(t, json_object_get_string(o), (size_t)json_object_get_string_len(o), &ids->v, &ids->n, &ids->cap);
        break;
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(o); i++)
            collect(t, json_object_array_get_idx(o, i), ids, depth + 1);
        break;
    case json_type_object: {
        json_object_object_foreach(o, k, v)
        {
            if (strcmp(k, "type") == 0 || strcmp(k, "id") == 0 || strcmp(k, "image_url") == 0 ||
                strcmp(k, "tool_call_id") == 0 || strcmp(k, "cache_control") == 0)
                continue;
            collect(t, v, ids, depth + 1);
        }
        break;
    }
    default: break;
    }
}

struct fixed {
    const char *model_used, *enc;
};

static void fixed_resolve(void *ud, const char *model, size_t len, const char **model_used, const char **enc)
{
    (void)model;
    (void)len;
    const struct fixed *f = ud;
    *model_used = f->model_used;
    *enc = f->enc;
}

int sy_tok_counter_response(const char *body, size_t len, const char *model_used, const char *encoding_override,
                            struct sy_buf *out)
{
    struct fixed f = {model_used, encoding_override};
    return sy_tok_counter_response_r(body, len, fixed_resolve, &f, out);
}

int sy_tok_counter_response_r(const char *body, size_t len, sy_tok_model_resolver resolve, void *ud, struct sy_buf *out)
{
    if (sy_tok_init() != 0)
        return error_reply(out, "tokenizer unavailable");
    struct json_tokener *tok = json_tokener_new();
    if (!tok)
        return error_reply(out, "out of memory");
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT); /* RFC 8259, as Python's json: no trailing commas */
    struct json_object *req = json_tokener_parse_ex(tok, body, (int)len);
    int ok = req && json_tokener_get_error(tok) == json_tokener_success;
    json_tokener_free(tok);
    int status = 200;
    if (!ok || !json_object_is_type(req, json_type_object)) {
        status = error_reply(out, "Invalid JSON in request body");
        goto out;
    }
    struct json_object *model = NULL, *msgs = NULL, *prompt = NULL, *want_ids = NULL, *tools = NULL, *choice = NULL;
    json_object_object_get_ex(req, "model", &model);
    json_object_object_get_ex(req, "tools", &tools);
    json_object_object_get_ex(req, "tool_choice", &choice);
    json_object_object_get_ex(req, "messages", &msgs);
    json_object_object_get_ex(req, "prompt", &prompt);
    json_object_object_get_ex(req, "return_token_ids", &want_ids);
    if (!json_object_is_type(model, json_type_string)) {
        status = error_reply(out, "model is required");
        goto out;
    }
    if (!msgs && !prompt) {
        status = error_reply(out, "prompt or messages must be provided");
        goto out;
    }
    if (tools && !json_object_is_type(tools, json_type_array)) {
        status = error_reply(out, "tools must be a list of tool definitions");
        goto out;
    }
    if (!msgs && ((tools && json_object_array_length(tools) > 0) || sy__tok_truthy(choice))) {
        status = error_reply(out, "tools or tool_choice cannot be set if using text");
        goto out;
    }
    const char *req_model = json_object_get_string(model);
    const char *model_used = NULL, *encoding_override = NULL;
    resolve(ud, req_model, (size_t)json_object_get_string_len(model), &model_used, &encoding_override);
    const char *used = model_used ? model_used : req_model;
    if (model_used) {
        const char *slash = strchr(model_used, '/');
        if (slash)
            used = slash + 1;
    }
    enum sy_tok_encoding e = sy_tok_encoding_for_model(used, strlen(used));
    if (encoding_override) {
        int o = sy_tok_encoding_by_name(encoding_override, strlen(encoding_override));
        if (o >= 0)
            e = (enum sy_tok_encoding)o;
    }
    const struct sy_tok *t = sy_tok_get(e);
    /* Count only what the endpoint passes to token_counter. */
    struct json_object *q = json_object_new_object();
    if (msgs) {
        json_object_object_add(q, "messages", json_object_get(msgs));
        if (tools)
            json_object_object_add(q, "tools", json_object_get(tools));
        if (choice)
            json_object_object_add(q, "tool_choice", json_object_get(choice));
    } else if (prompt) {
        json_object_object_add(q, "prompt", json_object_get(prompt));
    }
    long n = sy__tok_count_parsed(t, q, 1);
    json_object_put(q);
    if (n < 0) {
        status = error_reply(out, n == SY_EINVAL ? "Invalid messages, tools or prompt: unsupported content"
                                                 : "token counting failed");
        goto out;
    }
    sy_buf_reset(out);
    SY_BUF_LIT(out, "{\"total_tokens\":");
    sy_buf_u64(out, (uint64_t)n);
    SY_BUF_LIT(out, ",\"request_model\":");
    put_str(out, req_model, strlen(req_model));
    SY_BUF_LIT(out, ",\"model_used\":");
    put_str(out, used, strlen(used));
    SY_BUF_LIT(out, ",\"tokenizer_type\":\"openai_tokenizer\"");
    if (json_object_get_boolean(want_ids)) {
        struct ids ids = {0};
        collect(t, msgs ? msgs : prompt, &ids, 0);
        SY_BUF_LIT(out, ",\"token_ids\":[");
        for (size_t i = 0; i < ids.n; i++) {
            if (i)
                SY_BUF_LIT(out, ",");
            sy_buf_u64(out, ids.v[i]);
        }
        SY_BUF_LIT(out, "]");
        free(ids.v);
    }
    if (SY_BUF_LIT(out, "}") != 0)
        status = error_reply(out, "response too large");
out:
    json_object_put(req);
    return status;
}
