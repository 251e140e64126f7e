/* prompts.c - general_settings.store_prompts_in_spend_logs: the request and
 * the answer in LiteLLM_SpendLogs, as LiteLLM writes them
 * (proxy/spend_tracking/spend_tracking_utils.py):
 *
 *   "messages"              "{}" (LiteLLM writes the prompt in the request's column)
 *   "proxy_server_request"  the request body, every string longer than
 *                           MAX_STRING_LENGTH_PROMPT_IN_DB (2048 characters)
 *                           cut to its first 35% and last 65% around
 *                           "... (litellm_truncated skipped N chars) ..."
 *                           (_sanitize_request_body_for_spend_logs_payload)
 *   "response"              the answer as the logging payload's "response"
 *                           (a stream assembled: logging/payload.c), its
 *                           strings cut the same way
 *
 * Without the setting all three are "{}". Runs on the writer thread (the
 * request path only hands the bytes over); json-c, linear in the input.
 */
#include <json-c/json.h>
#include <string.h>

#include "core/buf.h"
#include "logging/logging.h"
#include "spend/spend.h"

#define MAX_CHARS   2048 /* LiteLLM's MAX_STRING_LENGTH_PROMPT_IN_DB */
#define JDEPTH      64
#define JSONC_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Byte offset of character k of UTF-8 s[0..n) (a continuation byte is not a character). */
static size_t char_off(const char *s, size_t n, size_t k)
{
    size_t i = 0;
    for (; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80 && k-- == 0)
            return i;
    return n;
}

static size_t char_count(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* A string over the limit, cut as LiteLLM cuts it (NULL when it is within). New reference. */
static json_object *cut_string(json_object *v)
{
    const char *s = json_object_get_string(v);
    size_t n = (size_t)json_object_get_string_len(v), chars = char_count(s, n);
    if (chars <= MAX_CHARS)
        return NULL;
    size_t head = (size_t)(MAX_CHARS * 0.35), tail = (size_t)(MAX_CHARS * 0.65);
    if (head + tail > MAX_CHARS)
        tail = MAX_CHARS - head;
    size_t head_end = char_off(s, n, head), tail_start = char_off(s, n, chars - tail);
    struct sy_buf b;
    sy_buf_init(&b, n + 128);
    sy_buf_append(&b, s, head_end);
    sy_buf_printf(&b, "... (litellm_truncated skipped %zu chars) ...", chars - head - tail);
    sy_buf_append(&b, s + tail_start, n - tail_start);
    json_object *o = sy_buf_failed(&b) ? NULL : json_object_new_string_len(b.p, (int)b.len);
    sy_buf_free(&b);
    return o;
}

/* Cut every long string of o in place (objects and arrays, depth bounded by the parser). */
static void sanitize(json_object *o)
{
    if (json_object_is_type(o, json_type_object)) {
        json_object_object_foreach(o, k, v)
        {
            json_object *c = json_object_is_type(v, json_type_string) ? cut_string(v) : NULL;
            if (c)
                json_object_object_add(o, k, c);
            else
                sanitize(v);
        }
    } else if (json_object_is_type(o, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(o); i++) {
            json_object *v = json_object_array_get_idx(o, i);
            json_object *c = json_object_is_type(v, json_type_string) ? cut_string(v) : NULL;
            if (c)
                json_object_array_put_idx(o, i, c);
            else
                sanitize(v);
        }
    }
}

static json_object *parse(const char *p, size_t n)
{
    if (!p || !n || n > 0x7ffffff0u)
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

/* o (sanitized) into out, or "{}" when there is none. */
static void put(struct sy_buf *out, json_object *o)
{
    if (!o) {
        sy_buf_puts(out, "{}");
        return;
    }
    sanitize(o);
    sy_buf_puts(out, json_object_to_json_string_ext(o, JSONC_FLAGS)); /* a string answer: a JSON string */
    json_object_put(o);
}

int sy_spend_prompt_columns(const struct sy_spend_rec *r, struct sy_buf *request, struct sy_buf *response)
{
    json_object *req = parse(r->prompt, r->prompt_len);
    if (req && !json_object_is_type(req, json_type_object)) {
        json_object_put(req);
        req = NULL;
    }
    put(request, req);
    json_object *resp = NULL;
    if (r->response && r->response_len) {
        struct sy_buf j;
        sy_buf_init(&j, 64u << 20);
        if (sy_log_response_json(r->response, r->response_len, r->response_sse, r->call_type, &j) == 0)
            resp = parse(j.p, j.len);
        sy_buf_free(&j);
    }
    put(response, resp);
    return sy_buf_failed(request) || sy_buf_failed(response) ? -1 : 0;
}
