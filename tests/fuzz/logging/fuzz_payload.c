/* fuzz_payload.c - libFuzzer harness: the StandardLoggingPayload builder
 * (src/logging/payload.c: request parsing, the OpenAI / Anthropic / Responses
 * stream assemblers, metadata and tag merging) and SpendLogs' prompt columns
 * (src/spend/prompts.c: long strings cut by characters).
 *
 * Input: byte 0 picks the call type and the record's flags; the rest is split
 * at "\n--\n" into the request body, the response (SSE or JSON), the
 * request metadata, the key's metadata, the tags and the guardrails' list
 * (guard_info; byte 0 also picks guard_status, out of range included). Must
 * never crash, and whatever the bytes, the payload is one JSON object that
 * json-c reads back with every member LiteLLM's TypedDict declares,
 * guardrail_information an array or null, and both prompt columns are
 * JSON. */
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "logging/logging.h"
#include "spend/spend.h"

static const char *const members[] = {"id",
                                      "trace_id",
                                      "call_type",
                                      "stream",
                                      "status",
                                      "metadata",
                                      "messages",
                                      "response",
                                      "request_tags",
                                      "model_parameters",
                                      "error_information",
                                      "hidden_params",
                                      "guardrail_information",
                                      "standard_built_in_tools_params"};

static void must_parse(const char *p, size_t n, int object)
{
    struct json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH * 4);
    json_object *o = json_tokener_parse_ex(tok, p, (int)n);
    if (!o || json_tokener_get_error(tok) != json_tokener_success)
        abort();
    if (object) {
        if (!json_object_is_type(o, json_type_object))
            abort();
        for (size_t i = 0; i < sizeof members / sizeof members[0]; i++)
            if (!json_object_object_get_ex(o, members[i], NULL))
                abort();
        json_object *gi = NULL;
        json_object_object_get_ex(o, "guardrail_information", &gi);
        if (gi && !json_object_is_type(gi, json_type_array))
            abort();
    }
    json_object_put(o);
    json_tokener_free(tok);
}

/* The next part of s[*off..n) up to "\n--\n", NUL-terminated in place. */
static char *part(char *s, size_t n, size_t *off, size_t *len)
{
    if (*off > n)
        return NULL;
    char *p = s + *off, *e = memmem(p, n - *off, "\n--\n", 4);
    *len = e ? (size_t)(e - p) : n - *off;
    p[*len] = 0;
    *off += *len + 4;
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const char *const types[] = {"acompletion",      "anthropic_messages", "aresponses",
                                        "atext_completion", "aembedding",         NULL};
    unsigned sel = data[0];
    char *s = malloc(size + 4);
    if (!s)
        return 0;
    memcpy(s, data + 1, size - 1);
    size_t n = size - 1, off = 0, len[6] = {0};
    s[n] = 0;
    char *parts[6] = {0};
    for (int i = 0; i < 6; i++)
        parts[i] = part(s, n, &off, &len[i]);

    struct sy_logrec r;
    memset(&r, 0, sizeof r);
    r.id = "chatcmpl-fuzz";
    r.call_id = "7a1f0c1e-0000-4000-8000-000000000000";
    r.call_type = types[sel % 6];
    r.flags = (sel >> 3) &
              (SY_LOGREC_STREAM | SY_LOGREC_CACHE_HIT | SY_LOGREC_FAILURE | SY_LOGREC_RESP_SSE | SY_LOGREC_NO_MESSAGES);
    if (sel & 0x80)
        r.flags |= SY_LOGREC_REDACT_KEY;
    r.request = parts[0];
    r.request_len = len[0];
    r.response = parts[1];
    r.response_len = len[1];
    r.request_metadata = parts[2];
    r.key_metadata = parts[3];
    r.team_metadata = parts[3];
    r.tags = parts[4];
    r.user_agent = parts[4];
    r.api_base = parts[2];
    r.error_message = parts[1];
    r.upstream_model = parts[2];
    r.provider = parts[3];
    r.http_status = 429;
    r.guard_info = parts[5];
    r.guard_status = (int)(sel % 5);

    struct sy_buf b;
    sy_buf_init(&b, 64u << 20);
    if (sy_log_payload_build(&r, &b) == 0)
        must_parse(b.p, b.len, 1);
    sy_buf_free(&b);

    struct sy_spend_rec sr;
    memset(&sr, 0, sizeof sr);
    sr.call_type = r.call_type;
    sr.prompt = parts[0];
    sr.prompt_len = len[0];
    sr.response = parts[1];
    sr.response_len = len[1];
    sr.response_sse = !!(r.flags & SY_LOGREC_RESP_SSE);
    struct sy_buf q, a;
    sy_buf_init(&q, 64u << 20);
    sy_buf_init(&a, 64u << 20);
    if (sy_spend_prompt_columns(&sr, &q, &a) == 0) {
        must_parse(q.p, q.len, 0);
        must_parse(a.p, a.len, 0);
    }
    sy_buf_free(&q);
    sy_buf_free(&a);
    free(s);
    return 0;
}
