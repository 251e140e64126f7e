/* test_sse.c - unit tests for src/cache/sse.c: assembling recorded OpenAI
 * streams (text, split tool calls, n=2, usage, CRLF, "data:" without the
 * space, UTF-8 split across chunks), refusals of incomplete streams, and
 * replay -> assemble round trips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cache/cache.h"
#include "core/buf.h"

#define HDR                                                                                                         \
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"gpt-4o-2024\"," \
    "\"system_fingerprint\":\"fp_1\","

/* content split inside a multi-byte character: "h\u00e9" then raw bytes of U+1F600 split */
static const char text_stream[] =
    "data: " HDR "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,"
    "\"finish_reason\":null}]}\n\n"
    "data: " HDR "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"h\\u00e9 "
    "\"},\"logprobs\":null,\"finish_reason\":null}]}\r\n\r\n"
    "data:" HDR "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xf0\x9f\x98\x80!\"},\"logprobs\":null,\"finish_"
    "reason\":null}]}\n\n"
    ": keep-alive comment\n\n"
    "data: " HDR "\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}]}\n\n"
    "data: " HDR "\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3,\"total_tokens\":8}}\n\n"
    "data: [DONE]\n\n";

static const char text_expect[] =
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1700000000,\"model\":\"gpt-4o-2024\","
    "\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
    "\"h\xc3\xa9 \xf0\x9f\x98\x80!\"},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,"
    "\"completion_tokens\":3,\"total_tokens\":8}}";

/* n=2, choice 1 makes two parallel tool calls whose arguments are split */
static const char tool_stream[] =
    "data: " HDR "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}"
    ",{\"index\":1,\"delta\":{\"role\":\"assistant\",\"content\":null},\"finish_reason\":null}]}\n\n"
    "data: " HDR
    "\"choices\":[{\"index\":1,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\","
    "\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n"
    "data: " HDR "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n"
    "data: " HDR "\"choices\":[{\"index\":1,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{"
    "\\\"city\\\"\"}}]},\"finish_reason\":null}]}\n\n"
    "data: " HDR
    "\"choices\":[{\"index\":1,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"type\":\"function\","
    "\"function\":{\"name\":\"get_time\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\n\n"
    "data: " HDR "\"choices\":[{\"index\":1,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\": "
    "\\\"Paris\\\"}\"}}]},\"finish_reason\":null}]}\n\n"
    "data: " HDR "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
    "data: " HDR "\"choices\":[{\"index\":1,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
    "data: [DONE]\n\n";

static const char tool_expect[] =
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1700000000,\"model\":\"gpt-4o-2024\","
    "\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},"
    "\"logprobs\":null,\"finish_reason\":\"stop\"},{\"index\":1,\"message\":{\"role\":\"assistant\",\"content\":null,"
    "\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
    "\"arguments\":\"{\\\"city\\\": "
    "\\\"Paris\\\"}\"}},{\"index\":1,\"id\":\"call_b\",\"type\":\"function\",\"function\":"
    "{\"name\":\"get_time\",\"arguments\":\"{}\"}}]},\"logprobs\":null,\"finish_reason\":\"tool_calls\"}]}";

static const char completion_stream[] =
    "data: "
    "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1,\"choices\":[{\"text\":\"Hel\",\"index\":0,"
    "\"logprobs\":null,\"finish_reason\":null}],\"model\":\"gpt-3.5-turbo-instruct\"}\n\n"
    "data: "
    "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1,\"choices\":[{\"text\":\"lo\",\"index\":0,"
    "\"logprobs\":null,\"finish_reason\":\"length\"}],\"model\":\"gpt-3.5-turbo-instruct\"}\n\n"
    "data: [DONE]\n\n";

static const char completion_expect[] =
    "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1,\"model\":\"gpt-3.5-turbo-instruct\",\"choices\":"
    "[{\"text\":\"Hello\",\"index\":0,\"logprobs\":null,\"finish_reason\":\"length\"}]}";

static void check(const char *stream, const char *expect)
{
    struct sy_buf b, r, b2;
    sy_buf_init(&b, 1 << 20);
    sy_buf_init(&r, 1 << 20);
    sy_buf_init(&b2, 1 << 20);
    assert_int_equal(sy_cache_sse_assemble(stream, strlen(stream), &b), 0);
    assert_string_equal(b.p, expect);
    /* replay, then assemble again: the same response */
    assert_int_equal(sy_cache_sse_replay(b.p, b.len, 1, &r), 0);
    assert_int_equal(sy_cache_sse_assemble(r.p, r.len, &b2), 0);
    assert_string_equal(b2.p, expect);
    assert_true(r.len > 16 && !strcmp(r.p + r.len - 14, "data: [DONE]\n\n"));
    sy_buf_free(&b);
    sy_buf_free(&r);
    sy_buf_free(&b2);
}

static void assemble_text(void **st)
{
    (void)st;
    check(text_stream, text_expect);
}

static void assemble_tools_n2(void **st)
{
    (void)st;
    check(tool_stream, tool_expect);
}

static void assemble_completion(void **st)
{
    (void)st;
    check(completion_stream, completion_expect);
}

static void refused(void **st)
{
    (void)st;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    /* no [DONE] */
    size_t n = strlen(text_stream) - strlen("data: [DONE]\n\n");
    assert_int_equal(sy_cache_sse_assemble(text_stream, n, &b), -1);
    /* an error event */
    const char *err = "data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\ndata: [DONE]\n\n";
    assert_int_equal(sy_cache_sse_assemble(err, strlen(err), &b), -1);
    /* an unparseable chunk */
    const char *bad = "data: {\"id\":\n\ndata: [DONE]\n\n";
    assert_int_equal(sy_cache_sse_assemble(bad, strlen(bad), &b), -1);
    assert_int_equal(sy_cache_sse_replay("[]", 2, 0, &b), -1);
    assert_int_equal(sy_cache_sse_replay("{\"object\":\"list\"}", 17, 0, &b), -1);
    sy_buf_free(&b);
}

static void replay_shape(void **st)
{
    (void)st;
    struct sy_buf r;
    sy_buf_init(&r, 1 << 20);
    const char *resp =
        "{\"id\":\"c1\",\"object\":\"chat.completion\",\"created\":7,\"model\":\"m\",\"choices\":[{\"index\":0,"
        "\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":\"stop\"}],"
        "\"usage\":{\"total_tokens\":3}}";
    assert_int_equal(sy_cache_sse_replay(resp, strlen(resp), 0, &r), 0);
    const char *expect =
        "data: "
        "{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":7,\"model\":\"m\",\"choices\":[{\"index\":0,"
        "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n"
        "data: "
        "{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":7,\"model\":\"m\",\"choices\":[{\"index\":0,"
        "\"delta\":{\"content\":\"hi\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n"
        "data: "
        "{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":7,\"model\":\"m\",\"choices\":[{\"index\":0,"
        "\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}]}\n\n"
        "data: [DONE]\n\n";
    assert_string_equal(r.p, expect);
    sy_buf_reset(&r);
    assert_int_equal(sy_cache_sse_replay(resp, strlen(resp), 1, &r), 0);
    assert_non_null(strstr(r.p, "\"choices\":[],\"usage\":{\"total_tokens\":3}}\n\ndata: [DONE]\n\n"));
    sy_buf_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(assemble_text), cmocka_unit_test(assemble_tools_n2), cmocka_unit_test(assemble_completion),
        cmocka_unit_test(refused),       cmocka_unit_test(replay_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
