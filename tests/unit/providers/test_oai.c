/* test_oai.c - the OpenAI writer every adapter shares (providers/oai.c).
 *
 * The adapters' golden files check these functions through a provider; here
 * each public function is checked alone, with exact bytes: the stream chunks
 * (role chunk written once and first, text escaped, the pre-escaped JSON
 * string path, tool calls, finish once, the usage chunk), the whole response,
 * embeddings, the usage members with and without cache/reasoning details,
 * LiteLLM's finish_reason map, the UnsupportedParamsError and drop rules,
 * and the error types by status. Every written JSON is also parsed back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "core/buf.h"
#include "providers/adapter.h"
#include "providers/oai.h"

#define PRE            "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"m-1\""
#define CH(delta, fin) PRE ",\"choices\":[{\"index\":0,\"delta\":{" delta "},\"finish_reason\":" fin "}]}\n\n"
#define ROLE           CH("\"role\":\"assistant\",\"content\":\"\"", "null")

static void state_init(struct sy_xstate *st, const char *id, const char *model)
{
    memset(st, 0, sizeof *st);
    snprintf(st->id, sizeof st->id, "%s", id);
    snprintf(st->model, sizeof st->model, "%s", model);
    st->created = 1700000000;
}

/* b holds exactly `want`. */
static void expect_bytes(const struct sy_buf *b, const char *want)
{
    size_t n = strlen(want);
    if (b->len != n || memcmp(b->p, want, n) != 0) {
        fprintf(stderr, "want: %s\n got: %.*s\n", want, (int)b->len, b->p ? b->p : "");
        fail();
    }
}

/* Every "data: " frame of b parses as a JSON object; returns the frame count. */
static int frames_parse(const struct sy_buf *b)
{
    int n = 0;
    const char *p = b->p, *end = b->p + b->len;
    while (p < end) {
        assert_true(end - p > 6 && memcmp(p, "data: ", 6) == 0);
        const char *e = strstr(p, "\n\n");
        assert_non_null(e);
        char *j = strndup(p + 6, (size_t)(e - p - 6));
        json_object *o = json_tokener_parse(j);
        assert_non_null(o);
        assert_true(json_object_is_type(o, json_type_object));
        json_object_put(o);
        free(j);
        p = e + 2;
        n++;
    }
    return n;
}

static void t_stream_text(void **state)
{
    (void)state;
    struct sy_xstate st;
    struct sy_buf b;
    state_init(&st, "chatcmpl-1", "m-1");
    sy_buf_init(&b, 1 << 16);
    sy_oai_chunk_text(&st, &b, "hi \"you\"\n", 9);
    expect_bytes(&b, ROLE CH("\"content\":\"hi \\\"you\\\"\\n\"", "null"));
    assert_int_equal(st.role_sent, 1);

    /* the role chunk is written once; empty text writes nothing */
    sy_buf_reset(&b);
    sy_oai_chunk_role(&st, &b);
    sy_oai_chunk_text(&st, &b, "", 0);
    sy_oai_chunk_reasoning(&st, &b, "", 0);
    assert_int_equal(b.len, 0);

    sy_oai_chunk_reasoning(&st, &b, "think", 5);
    expect_bytes(&b, CH("\"reasoning_content\":\"think\"", "null"));

    /* finish once, whatever the adapter calls again; NULL is "stop" */
    sy_buf_reset(&b);
    sy_oai_chunk_finish(&st, &b, "length");
    sy_oai_chunk_finish(&st, &b, "stop");
    expect_bytes(&b, CH("", "\"length\""));
    assert_int_equal(st.finished, 1);

    state_init(&st, "chatcmpl-1", "m-1");
    sy_buf_reset(&b);
    sy_oai_chunk_finish(&st, &b, NULL);
    expect_bytes(&b, ROLE CH("", "\"stop\""));
    assert_int_equal(frames_parse(&b), 2);
    sy_buf_free(&b);
}

static void t_stream_text_json(void **state)
{
    (void)state;
    struct sy_xstate st;
    struct sy_buf b;
    state_init(&st, "chatcmpl-1", "m-1");
    sy_buf_init(&b, 1 << 16);
    /* an already valid JSON literal is copied as it is (escapes kept, not doubled) */
    static const char lit[] = "\"a\\u00e9\\n\\\"b\"";
    sy_oai_chunk_text_json(&st, &b, lit, sizeof lit - 1);
    expect_bytes(&b, ROLE CH("\"content\":\"a\\u00e9\\n\\\"b\"", "null"));
    /* "" (two bytes) writes nothing after the role chunk */
    sy_buf_reset(&b);
    sy_oai_chunk_text_json(&st, &b, "\"\"", 2);
    assert_int_equal(b.len, 0);

    /* an id too long for the cached prefix (each control byte is escaped to 6):
     * the literal is decoded and written in place, the same content */
    state_init(&st, "", "m-1");
    memset(st.id, 0x01, sizeof st.id - 1);
    st.id[sizeof st.id - 1] = 0;
    sy_buf_reset(&b);
    sy_oai_chunk_text_json(&st, &b, lit, sizeof lit - 1);
    assert_int_equal(st.pre_len, 0);
    assert_int_equal(frames_parse(&b), 2);
    const char *second = strstr(b.p, "\n\ndata: ") + 8;
    char *j = strndup(second, (size_t)(b.p + b.len - 2 - second));
    json_object *o = json_tokener_parse(j), *ch, *delta, *content;
    assert_non_null(o);
    assert_true(json_object_object_get_ex(o, "choices", &ch));
    assert_true(json_object_object_get_ex(json_object_array_get_idx(ch, 0), "delta", &delta));
    assert_true(json_object_object_get_ex(delta, "content", &content));
    assert_string_equal(json_object_get_string(content), "a\xc3\xa9\n\"b");
    json_object_put(o);
    free(j);
    sy_buf_free(&b);
}

static void t_stream_tools_usage(void **state)
{
    (void)state;
    struct sy_xstate st;
    struct sy_buf b;
    state_init(&st, "chatcmpl-1", "m-1");
    sy_buf_init(&b, 1 << 16);
    int i0 = sy_oai_chunk_tool_start(&st, &b, "call_1", 6, "get_weather", 11);
    int i1 = sy_oai_chunk_tool_start(&st, &b, NULL, 0, NULL, 0);
    assert_int_equal(i0, 0);
    assert_int_equal(i1, 1);
    assert_int_equal(st.ntools, 2);
    expect_bytes(
        &b, ROLE CH("\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":"
                    "\"get_weather\",\"arguments\":\"\"}}]",
                    "null") CH("\"tool_calls\":[{\"index\":1,\"id\":\"\",\"type\":\"function\",\"function\":{\"name\":"
                               "\"\",\"arguments\":\"\"}}]",
                               "null"));
    sy_buf_reset(&b);
    sy_oai_chunk_tool_args(&st, &b, 0, "{\"city\":", 8);
    sy_oai_chunk_tool_args(&st, &b, 0, "", 0);
    expect_bytes(&b, CH("\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"city\\\":\"}}]", "null"));

    sy_buf_reset(&b);
    st.u = (struct sy_xusage){.prompt = 10, .completion = 5, .have = 1};
    sy_oai_chunk_usage(&st, &b);
    expect_bytes(&b, PRE ",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5,"
                         "\"total_tokens\":15}}\n\n");
    assert_int_equal(frames_parse(&b), 1);
    sy_buf_free(&b);
}

static void t_usage_members(void **state)
{
    (void)state;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 12);
    struct sy_xusage u = {.prompt = 100, .completion = 20, .cache_read = 30, .cache_write = 7, .reasoning = 4};
    sy_oai_usage_members(&u, &b);
    expect_bytes(&b, "\"prompt_tokens\":100,\"completion_tokens\":20,\"total_tokens\":120,"
                     "\"prompt_tokens_details\":{\"cached_tokens\":30},\"cache_read_input_tokens\":30,"
                     "\"cache_creation_input_tokens\":7,\"completion_tokens_details\":{\"reasoning_tokens\":4}");
    /* a cache write alone still reports the details (cached_tokens 0) */
    sy_buf_reset(&b);
    u = (struct sy_xusage){.prompt = 1, .cache_write = 2};
    sy_oai_usage_members(&u, &b);
    expect_bytes(&b, "\"prompt_tokens\":1,\"completion_tokens\":0,\"total_tokens\":1,"
                     "\"prompt_tokens_details\":{\"cached_tokens\":0},\"cache_read_input_tokens\":0,"
                     "\"cache_creation_input_tokens\":2");
    /* a lying upstream (values near INT64_MAX) gives no undefined behaviour, still a number */
    sy_buf_reset(&b);
    u = (struct sy_xusage){.prompt = INT64_MAX, .completion = INT64_MAX};
    sy_oai_usage_members(&u, &b);
    sy_buf_append(&b, "}", 1);
    char *j = malloc(b.len + 2);
    j[0] = '{';
    memcpy(j + 1, b.p, b.len);
    j[b.len + 1] = 0;
    json_object *o = json_tokener_parse(j);
    assert_non_null(o);
    json_object_put(o);
    free(j);
    sy_buf_free(&b);
}

static void t_write_response(void **state)
{
    (void)state;
    struct sy_xstate st;
    struct sy_buf b;
    state_init(&st, "chatcmpl-9", "claude-x");
    st.u = (struct sy_xusage){.prompt = 3, .completion = 2};
    sy_buf_init(&b, 1 << 14);

    struct sy_xmsg m = {.content = NULL, .finish_reason = NULL};
    sy_oai_write_response(&st, &m, &b);
    expect_bytes(&b, "{\"id\":\"chatcmpl-9\",\"object\":\"chat.completion\",\"created\":1700000000,\"model\":"
                     "\"claude-x\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null},"
                     "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,"
                     "\"total_tokens\":5}}");

    struct sy_xtool tools[2] = {
        {.id = "t1", .idl = 2, .name = "f", .nl = 1, .args = "{\"a\":1}", .al = 7},
        {.id = NULL, .name = NULL, .args = NULL},
    };
    m = (struct sy_xmsg){.content = "ok\t",
                         .content_len = 3,
                         .reasoning = "why",
                         .reasoning_len = 3,
                         .thinking_blocks_json = "[{\"type\":\"thinking\"}]",
                         .thinking_blocks_len = 21,
                         .tools = tools,
                         .ntools = 2,
                         .finish_reason = "tool_calls"};
    sy_buf_reset(&b);
    sy_oai_write_response(&st, &m, &b);
    expect_bytes(&b, "{\"id\":\"chatcmpl-9\",\"object\":\"chat.completion\",\"created\":1700000000,\"model\":"
                     "\"claude-x\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
                     "\"ok\\t\",\"reasoning_content\":\"why\",\"thinking_blocks\":[{\"type\":\"thinking\"}],"
                     "\"tool_calls\":[{\"id\":\"t1\",\"type\":\"function\",\"function\":{\"name\":\"f\","
                     "\"arguments\":\"{\\\"a\\\":1}\"}},{\"id\":\"\",\"type\":\"function\",\"function\":{"
                     "\"name\":\"\",\"arguments\":\"\"}}]},\"finish_reason\":\"tool_calls\"}],\"usage\":{"
                     "\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}");
    sy_buf_append(&b, "", 1);
    json_object *o = json_tokener_parse(b.p);
    assert_non_null(o);
    json_object_put(o);
    sy_buf_free(&b);
}

static void t_write_embeddings(void **state)
{
    (void)state;
    struct sy_xstate st;
    struct sy_buf b;
    state_init(&st, "x", "embed-1");
    st.u.prompt = 8;
    sy_buf_init(&b, 1 << 12);
    const char *vec[2] = {"[0.1,-2]", "[]"};
    size_t vl[2] = {8, 2};
    sy_oai_write_embeddings(&st, vec, vl, 2, &b);
    expect_bytes(&b, "{\"object\":\"list\",\"data\":[{\"object\":\"embedding\",\"index\":0,\"embedding\":[0.1,-2]},"
                     "{\"object\":\"embedding\",\"index\":1,\"embedding\":[]}],\"model\":\"embed-1\",\"usage\":{"
                     "\"prompt_tokens\":8,\"total_tokens\":8}}");
    sy_buf_reset(&b);
    sy_oai_write_embeddings(&st, NULL, NULL, 0, &b);
    expect_bytes(&b, "{\"object\":\"list\",\"data\":[],\"model\":\"embed-1\",\"usage\":{\"prompt_tokens\":8,"
                     "\"total_tokens\":8}}");
    sy_buf_free(&b);
}

static void t_finish_reason(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"end_turn", "stop"},
        {"stop_sequence", "stop"},
        {"COMPLETE", "stop"},
        {"max_tokens", "length"},
        {"MAX_TOKENS", "length"},
        {"tool_use", "tool_calls"},
        {"TOOL_CALL", "tool_calls"},
        {"SAFETY", "content_filter"},
        {"RECITATION", "content_filter"},
        {"guardrail_intervened", "content_filter"},
        {"function_call", "function_call"},
        {"MALFORMED_FUNCTION_CALL", "stop"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_string_equal(sy_oai_finish_reason(cases[i][0], strlen(cases[i][0])), cases[i][1]);
    /* the length is honoured: a prefix or a longer word is not a match */
    assert_string_equal(sy_oai_finish_reason("max_tokens_x", 10), "length");
    assert_string_equal(sy_oai_finish_reason("tool_use", 4), "stop");
    assert_string_equal(sy_oai_finish_reason(NULL, 0), "stop");
}

static void t_unsupported(void **state)
{
    (void)state;
    char *extra[] = {"seed"};
    struct sy_pconf pc = {.drop_extra = extra, .n_drop_extra = 1};
    struct sy_xctx x = {.pc = &pc, .model = "command-r"};
    struct sy_xerr e;
    memset(&e, 0, sizeof e);

    assert_int_equal(sy_oai_drop_extra(&x, "seed"), 1);
    assert_int_equal(sy_oai_drop_extra(&x, "see"), 0);
    assert_int_equal(sy_oai_unsupported(&x, "cohere", "seed", &e), 1); /* listed: dropped */
    assert_int_equal(e.status, 0);

    assert_int_equal(sy_oai_unsupported(&x, "cohere", "logit_bias", &e), 0);
    assert_int_equal(e.status, 400);
    assert_string_equal(e.type, "invalid_request_error");
    assert_string_equal(e.param, "logit_bias");
    assert_string_equal(e.cls, "UnsupportedParamsError");
    assert_string_equal(e.message, "litellm.UnsupportedParamsError: cohere does not support parameters: "
                                   "['logit_bias'], for model=command-r. To drop these, set "
                                   "`litellm.drop_params=True` or for proxy:\n\n`litellm_settings:\n "
                                   "drop_params: true`\n");

    pc.drop_params = 1; /* drop_params drops everything */
    assert_int_equal(sy_oai_unsupported(&x, "cohere", "logit_bias", &e), 1);

    /* no pconf, no model: still a 400, never a crash */
    struct sy_xctx bare = {0};
    assert_int_equal(sy_oai_drop_extra(&bare, "seed"), 0);
    assert_int_equal(sy_oai_unsupported(&bare, "ollama", "n", &e), 0);
    assert_non_null(strstr(e.message, "['n'], for model=. "));
}

static void t_err(void **state)
{
    (void)state;
    static const struct {
        int status;
        const char *type;
    } cases[] = {
        {400, "invalid_request_error"},
        {413, "invalid_request_error"},
        {422, "invalid_request_error"},
        {401, "authentication_error"},
        {403, "permission_denied"},
        {404, "not_found_error"},
        {408, "timeout"},
        {429, "rate_limit_error"},
        {503, "service_unavailable"},
        {500, "api_error"},
        {529, "api_error"},
        {409, "invalid_request_error"},
    };
    struct sy_xerr e;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(&e, 0x55, sizeof e);
        sy_oai_err(&e, cases[i].status, "boom", 4);
        assert_int_equal(e.status, cases[i].status);
        assert_string_equal(e.type, cases[i].type);
        assert_string_equal(e.message, "boom");
        assert_string_equal(e.param, "");
        assert_string_equal(e.cls, "");
    }
    /* a message longer than the field is cut, still terminated; NULL is "" */
    char big[3000];
    memset(big, 'z', sizeof big);
    sy_oai_err(&e, 400, big, sizeof big);
    assert_int_equal(strlen(e.message), sizeof e.message - 1);
    sy_oai_err(&e, 500, NULL, 10);
    assert_string_equal(e.message, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_stream_text),   cmocka_unit_test(t_stream_text_json), cmocka_unit_test(t_stream_tools_usage),
        cmocka_unit_test(t_usage_members), cmocka_unit_test(t_write_response),   cmocka_unit_test(t_write_embeddings),
        cmocka_unit_test(t_finish_reason), cmocka_unit_test(t_unsupported),      cmocka_unit_test(t_err),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
