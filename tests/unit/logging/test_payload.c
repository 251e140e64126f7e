/* test_payload.c - unit tests for src/logging/payload.c: the
 * StandardLoggingPayload of hand-built records against golden files (what
 * LiteLLM's get_standard_logging_object_payload writes for the same call:
 * a chat answer, an OpenAI stream, an Anthropic stream with a tool call, a
 * Responses stream, a failure, a cache hit, both redactions, guardrails that
 * masked, passed and blocked), every member
 * LiteLLM's TypedDict names present, and hostile input (invalid JSON, a cut
 * capture, invalid UTF-8, an out-of-range block index) giving valid JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "golden.h"
#include "logging/logging.h"

#define DIR GOLDEN_DIR "/payload"

static const char chat_req[] = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
                               "\"temperature\":0.2,\"max_tokens\":50,\"user\":\"eu-1\","
                               "\"metadata\":{\"tags\":[\"prod\"],\"trace_id\":\"tr-9\","
                               "\"generation_name\":\"gen-a\",\"spend_logs_metadata\":{\"job\":\"j1\"}},"
                               "\"mock_testing_fallbacks\":false,\"api_key\":\"sk-secret\"}";
static const char chat_resp[] =
    "{\"id\":\"chatcmpl-abc\",\"object\":\"chat.completion\",\"created\":1733450000,\"model\":\"gpt-4o-2024-08-06\","
    "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hello!\"},\"finish_reason\":"
    "\"stop\"}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3,\"total_tokens\":12}}";

static const struct sy_logattempt two_attempts[] = {
    {"dep-1", "openai/gpt-4o", "openai", "https://a.example/v1", 1733450000.1, 1733450000.3, 429, "RateLimitError"},
    {"dep-2", "openai/gpt-4o", "openai", "https://b.example/v1/", 1733450000.3, 1733450001.0, 200, NULL},
};

static struct sy_logrec base(void)
{
    struct sy_logrec r;
    memset(&r, 0, sizeof r);
    r.id = "chatcmpl-abc";
    r.call_id = "0b9c1a52-4cde-4f1e-9a57-1c1b2d3e4f50";
    r.trace_id = "tr-9";
    r.generation_name = "gen-a";
    r.call_type = "acompletion";
    r.route = "/v1/chat/completions";
    r.http_status = 200;
    r.flags = SY_LOGREC_COST_KNOWN;
    r.model = "gpt-4o";
    r.model_group = "gpt-4o";
    r.model_id = "dep-2";
    r.upstream_model = "openai/gpt-4o";
    r.provider = "openai";
    r.api_base = "https://b.example/v1/";
    r.hashed_key = "88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b";
    r.key_alias = "ci-key";
    r.user_id = "u-1";
    r.user_email = "u1@example.com";
    r.team_id = "team-a";
    r.team_alias = "Team A";
    r.org_id = "org-1";
    r.end_user = "eu-1";
    r.requester_ip = "10.0.0.7";
    r.user_agent = "OpenAI/Python 1.55.0";
    r.key_metadata =
        "{\"owner\":\"ci\",\"logging\":[{\"callback_name\":\"langfuse\"}],\"tags\":[\"key-tag\",\"prod\"]}";
    r.team_metadata = "{\"tags\":[\"team-tag\",\"team-2\"]}";
    r.request_metadata = "{\"tags\":[\"prod\"],\"trace_id\":\"tr-9\",\"generation_name\":\"gen-a\","
                         "\"spend_logs_metadata\":{\"job\":\"j1\"}}";
    r.tags = "[\"prod\",\"team-tag\"]";
    r.prompt_tokens = 9;
    r.completion_tokens = 3;
    r.cost = 0.0000525;
    r.start_s = 1733450000.0;
    r.api_start_s = 1733450000.1;
    r.completion_start_s = 1733450001.0;
    r.end_s = 1733450001.0;
    r.request = chat_req;
    r.request_len = sizeof chat_req - 1;
    r.response = chat_resp;
    r.response_len = sizeof chat_resp - 1;
    r.attempts = two_attempts;
    r.nattempts = 2;
    return r;
}

/* Build r's payload, check it is one JSON object with every member LiteLLM
 * names, compare it with DIR/<name>.json; the parsed payload is returned. */
static json_object *check(const struct sy_logrec *r, const char *name)
{
    struct sy_buf b;
    sy_buf_init(&b, 64u << 20);
    assert_int_equal(sy_log_payload_build(r, &b), 0);
    json_object *o = json_tokener_parse(b.p);
    if (!o)
        fprintf(stderr, "%s: not JSON: %s\n", name, b.p);
    assert_non_null(o);
    static const char *const members[] = {"id",
                                          "trace_id",
                                          "call_type",
                                          "stream",
                                          "response_cost",
                                          "response_cost_failure_debug_info",
                                          "status",
                                          "status_fields",
                                          "custom_llm_provider",
                                          "total_tokens",
                                          "prompt_tokens",
                                          "completion_tokens",
                                          "startTime",
                                          "endTime",
                                          "completionStartTime",
                                          "response_time",
                                          "model_map_information",
                                          "model",
                                          "model_id",
                                          "model_group",
                                          "api_base",
                                          "metadata",
                                          "cache_hit",
                                          "cache_key",
                                          "saved_cache_cost",
                                          "request_tags",
                                          "end_user",
                                          "requester_ip_address",
                                          "messages",
                                          "response",
                                          "error_str",
                                          "error_information",
                                          "model_parameters",
                                          "hidden_params",
                                          "guardrail_information",
                                          "standard_built_in_tools_params",
                                          "cost_breakdown"};
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
        json_object *v;
        if (!json_object_object_get_ex(o, members[i], &v))
            fail_msg("%s: member %s missing", name, members[i]);
    }
    if (name) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s.json", DIR, name);
        assert_true(sy_golden_expect(path, b.p, b.len));
    }
    sy_buf_free(&b);
    return o;
}

static json_object *get(json_object *o, const char *path)
{
    char k[128];
    while (o && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        snprintf(k, sizeof k, "%.*s", (int)n, path);
        json_object *v = NULL;
        if (json_object_is_type(o, json_type_array))
            v = json_object_array_get_idx(o, (size_t)atoi(k));
        else if (!json_object_object_get_ex(o, k, &v))
            return NULL;
        o = v;
        path += n + (dot ? 1 : 0);
    }
    return o;
}

static const char *gets(json_object *o, const char *path)
{
    json_object *v = get(o, path);
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static void test_chat(void **state)
{
    (void)state;
    struct sy_logrec r = base();
    json_object *o = check(&r, "chat");
    assert_string_equal(gets(o, "id"), "chatcmpl-abc");
    assert_string_equal(gets(o, "trace_id"), "tr-9");
    assert_string_equal(gets(o, "status"), "success");
    assert_string_equal(gets(o, "model"), "gpt-4o");
    assert_string_equal(gets(o, "api_base"), "https://b.example/v1");
    assert_string_equal(gets(o, "metadata.user_api_key_hash"), r.hashed_key);
    assert_string_equal(gets(o, "metadata.user_api_key_auth_metadata.logging"),
                        "scrubbed_by_litellm_for_sensitive_keys");
    assert_string_equal(gets(o, "metadata.spend_logs_metadata.job"), "j1");
    assert_string_equal(gets(o, "messages.0.content"), "Hi");
    assert_string_equal(gets(o, "response.choices.0.message.content"), "Hello!");
    /* the request's, the key's and the team's, each once, then the user agent's */
    assert_string_equal(gets(o, "request_tags.2"), "key-tag");
    assert_string_equal(gets(o, "request_tags.3"), "team-2");
    assert_string_equal(gets(o, "request_tags.4"), "User-Agent: OpenAI");
    assert_string_equal(gets(o, "request_tags.5"), "User-Agent: OpenAI/Python 1.55.0");
    assert_int_equal(json_object_array_length(get(o, "request_tags")), 6);
    assert_int_equal(json_object_get_int(get(o, "total_tokens")), 12);
    assert_null(get(o, "model_parameters.api_key")); /* a secret in the body is not a model parameter */
    assert_null(get(o, "model_parameters.messages"));
    assert_non_null(get(o, "model_parameters.temperature"));
    assert_true(json_object_is_type(get(o, "stream"), json_type_null));
    json_object_put(o);
}

static const char oai_sse[] =
    "data: {\"id\":\"chatcmpl-s1\",\"object\":\"chat.completion.chunk\",\"created\":1733450000,\"model\":\"gpt-4o\","
    "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-s1\",\"object\":\"chat.completion.chunk\",\"created\":1733450000,\"model\":\"gpt-4o\","
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n"
    "data: {\"id\":\"chatcmpl-s1\",\"object\":\"chat.completion.chunk\",\"created\":1733450000,\"model\":\"gpt-4o\","
    "\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,\"total_tokens\":11}}\n\n"
    "data: [DONE]\n\n";

static void test_stream_openai(void **state)
{
    (void)state;
    struct sy_logrec r = base();
    r.id = "chatcmpl-s1";
    r.flags |= SY_LOGREC_STREAM | SY_LOGREC_RESP_SSE;
    r.response = oai_sse;
    r.response_len = sizeof oai_sse - 1;
    r.completion_start_s = 1733450000.25;
    r.completion_tokens = 2;
    json_object *o = check(&r, "stream_openai");
    assert_string_equal(gets(o, "response.choices.0.message.content"), "Hello");
    assert_string_equal(gets(o, "response.object"), "chat.completion");
    assert_true(json_object_get_boolean(get(o, "stream")));
    assert_true(json_object_get_double(get(o, "response_time")) == 0.25); /* first token, for a stream */
    json_object_put(o);
    /* the same stream cut before its end: kept as the bytes the client got */
    r.response_len = 120;
    o = check(&r, NULL);
    assert_true(json_object_is_type(get(o, "response"), json_type_string));
    json_object_put(o);
}

static const char anth_req[] = "{\"model\":\"claude\",\"max_tokens\":100,\"system\":\"Be brief.\","
                               "\"messages\":[{\"role\":\"user\",\"content\":\"Weather in Paris?\"}],"
                               "\"tools\":[{\"name\":\"get_weather\",\"input_schema\":{\"type\":\"object\"}}]}";
static const char anth_sse[] =
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01\",\"type\":\"message\",\"role\":"
    "\"assistant\",\"model\":\"claude-sonnet-4\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,"
    "\"usage\":{\"input_tokens\":20,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Let me \"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"check.\"}}\n\n"
    "event: content_block_stop\n"
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":"
    "\"toolu_1\",\"name\":\"get_weather\",\"input\":{}}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
    "\"partial_json\":\"{\\\"city\\\": \"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
    "\"partial_json\":\"\\\"Paris\\\"}\"}}\n\n"
    "event: content_block_stop\n"
    "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
    "event: message_delta\n"
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},"
    "\"usage\":{\"output_tokens\":31}}\n\n"
    "event: message_stop\n"
    "data: {\"type\":\"message_stop\"}\n\n";

static void test_stream_anthropic(void **state)
{
    (void)state;
    struct sy_logrec r = base();
    r.id = "msg_01";
    r.call_type = "anthropic_messages";
    r.route = "/v1/messages";
    r.model = r.model_group = "claude";
    r.upstream_model = "anthropic/claude-sonnet-4";
    r.provider = "anthropic";
    r.api_base = NULL;
    r.flags |= SY_LOGREC_STREAM | SY_LOGREC_RESP_SSE;
    r.request = anth_req;
    r.request_len = sizeof anth_req - 1;
    r.response = anth_sse;
    r.response_len = sizeof anth_sse - 1;
    r.prompt_tokens = 20;
    r.completion_tokens = 31;
    r.request_metadata = NULL;
    r.trace_id = NULL;
    json_object *o = check(&r, "stream_anthropic");
    assert_string_equal(gets(o, "messages.0.role"), "system"); /* the system prompt, as LiteLLM prepends it */
    assert_string_equal(gets(o, "messages.1.content"), "Weather in Paris?");
    assert_string_equal(gets(o, "response.content.0.text"), "Let me check.");
    assert_string_equal(gets(o, "response.content.1.input.city"), "Paris");
    assert_string_equal(gets(o, "response.stop_reason"), "tool_use");
    assert_int_equal(json_object_get_int(get(o, "response.usage.output_tokens")), 31);
    assert_string_equal(gets(o, "trace_id"), r.call_id); /* no trace id given: the call's */
    assert_string_equal(gets(o, "api_base"), "");
    assert_string_equal(gets(o, "model"), "claude-sonnet-4");
    json_object_put(o);
}

static const char resp_sse[] =
    "event: response.created\n"
    "data: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\"}}\n\n"
    "event: response.output_text.delta\n"
    "data: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n"
    "event: response.completed\n"
    "data: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":"
    "\"completed\",\"output\":[{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\","
    "\"text\":\"Hi\"}]}],\"usage\":{\"input_tokens\":4,\"output_tokens\":1,\"total_tokens\":5}}}\n\n";

static void test_stream_responses(void **state)
{
    (void)state;
    struct sy_logrec r = base();
    static const char req[] = "{\"model\":\"gpt-4o\",\"input\":\"Say hi\",\"stream\":true}";
    r.call_type = "aresponses";
    r.id = "resp_1";
    r.flags |= SY_LOGREC_STREAM | SY_LOGREC_RESP_SSE;
    r.request = req;
    r.request_len = sizeof req - 1;
    r.response = resp_sse;
    r.response_len = sizeof resp_sse - 1;
    json_object *o = check(&r, NULL);
    assert_string_equal(gets(o, "messages.0.role"), "user"); /* a string input: one user message */
    assert_string_equal(gets(o, "messages.0.content"), "Say hi");
    assert_string_equal(gets(o, "response.status"), "completed");
    assert_string_equal(gets(o, "response.output.0.content.0.text"), "Hi");
    assert_true(json_object_get_boolean(get(o, "model_parameters.stream")));
    json_object_put(o);
}

static void test_failure(void **state)
{
    (void)state;
    struct sy_logrec r = base();
    r.id = r.call_id;
    r.http_status = 429;
    r.flags = SY_LOGREC_FAILURE;
    r.error_class = "RateLimitError";
    r.error_message = "litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached";
    r.response = "{\"error\":{\"message\":\"x\"}}";
    r.response_len = strlen(r.response);
    r.prompt_tokens = r.completion_tokens = 0;
    json_object *o = check(&r, "failure");
    assert_string_equal(gets(o, "status"), "failure");
    assert_string_equal(gets(o, "status_fields.llm_api_status"), "failure");
    assert_string_equal(gets(o, "error_information.error_code"), "429");
    assert_string_equal(gets(o, "error_information.error_class"), "RateLimitError");
    assert_string_equal(gets(o, "error_information.llm_provider"), "openai");
    assert_string_equal(gets(o, "error_str"), r.error_message);
    assert_int_equal(json_object_object_length(get(o, "response")), 0);
    assert_true(json_object_get_double(get(o, "response_cost")) == 0.0);
    json_object_put(o);
}

static void test_cache_hit(void **state)
{
    (void)state;
    struct sy_logrec r = base();
    r.flags |= SY_LOGREC_CACHE_HIT;
    r.cache_key = "8f7c0e2b";
    r.cost = 0;
    json_object *o = check(&r, NULL);
    assert_string_equal(gets(o, "id"), "chatcmpl-abc_cache_hit1733450001.0");
    assert_true(json_object_get_boolean(get(o, "cache_hit")));
    assert_string_equal(gets(o, "cache_key"), "8f7c0e2b");
    assert_string_equal(gets(o, "hidden_params.cache_key"), "8f7c0e2b");
    json_object_put(o);
}

static void test_redacted(void **state)
{
    (void)state;
    struct sy_logrec r = base();
    r.flags |= SY_LOGREC_NO_MESSAGES | SY_LOGREC_REDACT_KEY;
    r.request = r.response = NULL;
    r.request_len = r.response_len = 0;
    json_object *o = check(&r, "redacted");
    assert_string_equal(gets(o, "messages.0.content"), "redacted-by-litellm");
    assert_string_equal(gets(o, "response.text"), "redacted-by-litellm");
    json_object *md = get(o, "metadata");
    json_object_object_foreach(md, k, v)
    {
        (void)v;
        assert_true(strncmp(k, "user_api_key", 12) != 0);
    }
    assert_null(get(o, "metadata.team_id")); /* absent from the object, or null */
    json_object_put(o);
}

/* Nothing of the record may break the JSON: invalid bodies, invalid UTF-8,
 * control bytes, quotes in every string, Anthropic events out of range. */
static void test_hostile(void **state)
{
    (void)state;
    struct sy_logrec r = base();
    r.request = "{\"messages\": [1, 2,";
    r.request_len = strlen(r.request);
    r.response = "\xff\xfe\"\\\n\x01 not json";
    r.response_len = strlen(r.response);
    r.key_alias = "a\"b\\c\n\x02\xc3";
    r.key_metadata = "[1,2]";
    r.request_metadata = "{\"spend_logs_metadata\": 5}";
    r.tags = "{\"not\":\"a list\"}";
    r.user_agent = "\xe2\x82";
    r.api_base = "////";
    json_object *o = check(&r, NULL);
    assert_true(json_object_is_type(get(o, "messages"), json_type_null));
    assert_true(json_object_is_type(get(o, "response"), json_type_string));
    assert_string_equal(gets(o, "api_base"), "");
    json_object_put(o);

    static const char bad_anth[] =
        "data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[]}}\n"
        "data: {\"type\":\"content_block_start\",\"index\":99999999999,\"content_block\":{\"type\":\"text\"}}\n"
        "data: {\"type\":\"content_block_start\",\"index\":-1,\"content_block\":{\"type\":\"text\"}}\n"
        "data: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n"
        "data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\"}}\n"
        "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\","
        "\"partial_json\":\"{broken\"}}\n"
        "data: {\"type\":\"message_delta\",\"delta\":[1],\"usage\":5}\n"
        "data: not json at all\n";
    struct sy_logrec a = base();
    a.call_type = "anthropic_messages";
    a.flags |= SY_LOGREC_RESP_SSE | SY_LOGREC_STREAM;
    a.response = bad_anth;
    a.response_len = sizeof bad_anth - 1;
    o = check(&a, NULL);
    assert_string_equal(gets(o, "response.content.0.input"), "{broken"); /* unparseable input kept as text */
    json_object_put(o);
}

/* sy_log_payload builds once and keeps it in the record. */
/* The guardrails that ran: guardrail_information as the stage wrote it,
 * status_fields.guardrail_status from the record, applied_guardrails the
 * names, each once. A blocked call is a failure with the guardrail's error. */
static const char guard_info[] =
    "[{\"guardrail_name\":\"pii-mask\",\"guardrail_provider\":\"presidio\",\"guardrail_mode\":\"pre_call\","
    "\"guardrail_request\":null,\"guardrail_response\":\"masked 1 entity\",\"guardrail_status\":"
    "\"guardrail_intervened\",\"start_time\":1733450000.01,\"end_time\":1733450000.0125,\"duration\":0.0025,"
    "\"masked_entity_count\":{\"EMAIL_ADDRESS\":1}},"
    "{\"guardrail_name\":\"content-filter\",\"guardrail_provider\":\"litellm_content_filter\",\"guardrail_mode\":"
    "\"pre_call\",\"guardrail_request\":null,\"guardrail_response\":null,\"guardrail_status\":\"success\","
    "\"start_time\":1733450000.0125,\"end_time\":1733450000.013,\"duration\":0.0005},"
    "{\"guardrail_name\":\"pii-mask\",\"guardrail_provider\":\"presidio\",\"guardrail_mode\":\"post_call\","
    "\"guardrail_request\":null,\"guardrail_response\":null,\"guardrail_status\":\"success\",\"start_time\":"
    "1733450001.0,\"end_time\":1733450001.001,\"duration\":0.001}]";

static void test_guardrails(void **state)
{
    (void)state;
    struct sy_logrec r = base();
    r.guard_info = guard_info;
    r.guard_status = SY_LOGREC_GUARD_INTERVENED;
    json_object *o = check(&r, "guardrails");
    assert_string_equal(gets(o, "status_fields.guardrail_status"), "guardrail_intervened");
    assert_string_equal(gets(o, "status_fields.llm_api_status"), "success");
    assert_int_equal(json_object_array_length(get(o, "metadata.applied_guardrails")), 2);
    assert_string_equal(gets(o, "metadata.applied_guardrails.0"), "pii-mask");
    assert_string_equal(gets(o, "metadata.applied_guardrails.1"), "content-filter");
    assert_int_equal(json_object_array_length(get(o, "guardrail_information")), 3);
    assert_string_equal(gets(o, "guardrail_information.2.guardrail_mode"), "post_call");
    assert_int_equal(json_object_get_int(get(o, "guardrail_information.0.masked_entity_count.EMAIL_ADDRESS")), 1);
    json_object_put(o);

    /* a pre_call block: the call failed with LiteLLM's 400 */
    static const char blocked[] = "[{\"guardrail_name\":\"content-filter\",\"guardrail_mode\":\"pre_call\","
                                  "\"guardrail_response\":\"Content blocked: keyword 'secret' detected\","
                                  "\"guardrail_status\":\"guardrail_intervened\",\"start_time\":1733450000.01,"
                                  "\"end_time\":1733450000.011,\"duration\":0.001}]";
    r = base();
    r.id = r.call_id;
    r.http_status = 400;
    r.flags = SY_LOGREC_FAILURE;
    r.error_class = "BadRequestError";
    r.error_message = "Content blocked: keyword 'secret' detected";
    r.response = NULL;
    r.response_len = 0;
    r.prompt_tokens = r.completion_tokens = 0;
    r.nattempts = 0;
    r.guard_info = blocked;
    r.guard_status = SY_LOGREC_GUARD_INTERVENED;
    o = check(&r, "guardrails_blocked");
    assert_string_equal(gets(o, "status_fields.llm_api_status"), "failure");
    assert_string_equal(gets(o, "status_fields.guardrail_status"), "guardrail_intervened");
    assert_string_equal(gets(o, "metadata.applied_guardrails.0"), "content-filter");
    json_object_put(o);

    /* a service that did not answer */
    r.guard_status = SY_LOGREC_GUARD_FAILED;
    o = check(&r, NULL);
    assert_string_equal(gets(o, "status_fields.guardrail_status"), "guardrail_failed_to_respond");
    json_object_put(o);
}

/* guard_status "not_run" with a list: LiteLLM's _get_status_fields, the first
 * entry that ran, legacy values mapped; anything that is not a JSON array is
 * no information (null, never broken JSON); no list, no cost: the payload of
 * a call without guardrails is byte for byte the one before guardrails. */
static void test_guardrails_odd(void **state)
{
    (void)state;
    static const struct {
        const char *info, *status;
    } cases[] = {
        {"[{\"guardrail_name\":\"a\",\"guardrail_status\":\"not_run\"},"
         "{\"guardrail_name\":\"b\",\"guardrail_status\":\"blocked\"}]",
         "guardrail_intervened"},
        {"[{\"guardrail_name\":\"a\",\"guardrail_status\":\"failure\"}]", "guardrail_failed_to_respond"},
        {"[{\"guardrail_name\":\"a\",\"guardrail_status\":\"success\"}]", "success"},
        {"[{\"guardrail_name\":\"a\",\"guardrail_status\":\"weird\"}]", "not_run"},
        {"[{\"guardrail_name\":\"a\",\"guardrail_status\":7},{\"guardrail_name\":\"b\"}]", "not_run"},
        {"[1,\"x\",null,[],{\"guardrail_name\":3}]", "not_run"},
        {"[]", "not_run"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sy_logrec r = base();
        r.guard_info = cases[i].info;
        json_object *o = check(&r, NULL);
        assert_string_equal(gets(o, "status_fields.guardrail_status"), cases[i].status);
        assert_true(json_object_is_type(get(o, "guardrail_information"), json_type_array));
        assert_true(json_object_is_type(get(o, "metadata.applied_guardrails"), json_type_array));
        json_object_put(o);
    }
    struct sy_logrec r = base();
    r.guard_info = "[{\"guardrail_name\":\"a\"},{\"guardrail_name\":\"a\"},{\"guardrail_name\":\"b\\\"c\"}]";
    json_object *o = check(&r, NULL);
    assert_int_equal(json_object_array_length(get(o, "metadata.applied_guardrails")), 2);
    assert_string_equal(gets(o, "metadata.applied_guardrails.1"), "b\"c");
    json_object_put(o);
    /* not an array, not JSON, cut, invalid UTF-8, a status out of range */
    static const char *const bad[] = {
        "{\"guardrail_name\":\"a\"}", "[{\"guardrail_name\":", "not json", "", "[\"\xff\xfe\"]", "[{\"a\":1}] [2]"};
    struct sy_buf plain, b;
    sy_buf_init(&plain, 64u << 20);
    r = base();
    assert_int_equal(sy_log_payload_build(&r, &plain), 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = base();
        r.guard_info = bad[i];
        r.guard_status = 9;
        o = check(&r, NULL);
        assert_true(json_object_is_type(get(o, "guardrail_information"), json_type_null));
        assert_true(json_object_is_type(get(o, "metadata.applied_guardrails"), json_type_null));
        assert_string_equal(gets(o, "status_fields.guardrail_status"), "not_run");
        json_object_put(o);
        /* the same bytes as a call without guardrails */
        sy_buf_init(&b, 64u << 20);
        assert_int_equal(sy_log_payload_build(&r, &b), 0);
        assert_int_equal(b.len, plain.len);
        assert_memory_equal(b.p, plain.p, b.len);
        sy_buf_free(&b);
    }
    sy_buf_free(&plain);
}

static void test_cached_in_record(void **state)
{
    (void)state;
    struct sy_logrec r = base();
    size_t n1 = 0, n2 = 0;
    const char *p1 = sy_log_payload(&r, &n1);
    const char *p2 = sy_log_payload(&r, &n2);
    assert_non_null(p1);
    assert_ptr_equal(p1, p2);
    assert_int_equal(n1, strlen(p1));
    free(r.payload);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chat),
        cmocka_unit_test(test_stream_openai),
        cmocka_unit_test(test_stream_anthropic),
        cmocka_unit_test(test_stream_responses),
        cmocka_unit_test(test_failure),
        cmocka_unit_test(test_cache_hit),
        cmocka_unit_test(test_redacted),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_cached_in_record),
        cmocka_unit_test(test_guardrails),
        cmocka_unit_test(test_guardrails_odd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
