/* test_gateway.c - unit tests for the gateway's pure parts: the request-body
 * scan (jscan), JSON string decoding, usage scanning, provider presets, the
 * model echoed in native answers (xlate.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "gateway/jscan.h"
#include "gateway/usage.h"
#include "gateway/xlate.h"
#include "providers/provider.h"

#define SCAN(s, out) sy_jscan((s), strlen(s), (out))

static void scan_finds_top_level_members(void **st)
{
    const char *b = "{\"messages\":[{\"model\":\"inner\"}],\"model\" : \"gpt-4o\",\"stream\":true,"
                    "\"stream_options\":{\"include_usage\":true}}";
    struct sy_jscan s;
    assert_int_equal(SCAN(b, &s), 0);
    assert_int_equal(s.model.type, 's');
    assert_memory_equal(b + s.model.off, "\"gpt-4o\"", 8);
    assert_int_equal(s.stream.type, 't');
    assert_int_equal(s.messages.type, 'a');
    struct sy_jspan iu = sy_jscan_member(b, s.stream_options, "include_usage");
    assert_int_equal(iu.type, 't');
    assert_int_equal(sy_jscan_member(b, s.stream_options, "nope").type, 0);
}

static void scan_rejects_invalid(void **st)
{
    static const char *bad[] = {"",
                                "{",
                                "{\"a\":}",
                                "{\"a\":1,}",
                                "[1,]",
                                "{\"a\" 1}",
                                "01",
                                "1.",
                                "-",
                                "tru",
                                "\"\\x\"",
                                "\"a\nb\"",
                                "{} {}",
                                "\"\xff\"",
                                "\"\xed\xa0\x80\"",
                                "{\"a\":\"\\u12g4\"}",
                                "nul",
                                "[1 2]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct sy_jscan s;
        assert_int_equal(SCAN(bad[i], &s), -4);
        assert_non_null(s.err);
    }
    static const char *good[] = {"{}",
                                 "[]",
                                 " 1 ",
                                 "-0.5e+10",
                                 "\"\\u00e9\\ud83d\\ude00\"",
                                 "null",
                                 "[[[]]]",
                                 "{\"a\":{\"b\":[true,false,null]}}",
                                 "\"\xc3\xa9\xf0\x9f\x98\x80\""};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        struct sy_jscan s;
        assert_int_equal(SCAN(good[i], &s), 0);
    }
}

static void scan_depth_is_capped(void **st)
{
    char deep[1000];
    memset(deep, '[', sizeof deep);
    struct sy_jscan s;
    assert_int_equal(sy_jscan(deep, sizeof deep, &s), -4);
    assert_string_equal(s.err, "nesting too deep");
}

static void decode_strings(void **st)
{
    char out[64];
    const char *s = "\"a\\\"b\\n\\u00e9\\ud83d\\ude00\"";
    long n = sy_jstr_decode(s, strlen(s), out, sizeof out);
    assert_int_equal(n, 10);
    assert_string_equal(out, "a\"b\n\xc3\xa9\xf0\x9f\x98\x80");
    assert_int_equal(sy_jstr_decode("\"\\u0000\"", 8, out, sizeof out), -1);
    assert_int_equal(sy_jstr_decode("\"abcdef\"", 8, out, 4), -1);
}

static void scan_decodes_keys_and_flags_duplicates(void **st)
{
    struct sy_jscan s;
    const char *esc = "{\"mod\\u0065l\":\"b\",\"stre\\u0061m\":true}";
    assert_int_equal(SCAN(esc, &s), 0);
    assert_int_equal(s.model.type, 's');
    assert_memory_equal(esc + s.model.off, "\"b\"", 3);
    assert_int_equal(s.stream.type, 't');
    assert_null(s.dup);
    const char *d = "{\"model\":\"a\",\"x\":1,\"mod\\u0065l\":\"b\"}";
    assert_int_equal(SCAN(d, &s), 0);
    assert_string_equal(s.dup, "model");
    assert_memory_equal(d + s.model.off, "\"b\"", 3); /* the last, as json-c and Python */
    const char *d2 = "{\"stream\":false,\"stream\":true}";
    assert_int_equal(SCAN(d2, &s), 0);
    assert_string_equal(s.dup, "stream");
    const char *iu = "{\"stream_options\":{\"include_usage\":false,\"include_\\u0075sage\":true}}";
    assert_int_equal(SCAN(iu, &s), 0);
    assert_string_equal(s.dup, "stream_options.include_usage");
    assert_int_equal(s.include_usage.type, 't');
    assert_int_equal(sy_jscan_member(iu, s.stream_options, "include_usage").type, 't');
    const char *nested = "{\"messages\":[{\"model\":1,\"model\":2}],\"a\":{\"stream\":1,\"stream\":2}}";
    assert_int_equal(SCAN(nested, &s), 0);
    assert_null(s.dup);
    const char *nul = "{\"model\\u0000\":\"x\"}";
    assert_int_equal(SCAN(nul, &s), 0);
    assert_int_equal(s.model.type, 0);
}

static void usage_scan(void **st)
{
    const char *r = "{\"choices\":[{\"message\":{\"content\":\"the \\\"usage\\\" word\"}}],"
                    "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":34,\"total_tokens\":46,"
                    "\"prompt_tokens_details\":{\"cached_tokens\":0}}}";
    uint64_t p = 0, c = 0;
    assert_int_equal(sy_usage_scan(r, strlen(r), &p, &c), 1);
    assert_int_equal(p, 12);
    assert_int_equal(c, 34);
    const char *none = "{\"usage\":null}";
    assert_int_equal(sy_usage_scan(none, strlen(none), &p, &c), 0);
    const char *emb = "{\"data\":[],\"usage\":{\"prompt_tokens\":5,\"total_tokens\":5}}";
    assert_int_equal(sy_usage_scan(emb, strlen(emb), &p, &c), 1);
    assert_int_equal(p, 5);
    assert_int_equal(c, 0);
}

static void presets(void **st)
{
    const struct sy_provider *p = sy_provider_find("azure");
    assert_non_null(p);
    assert_true(p->flags & SY_PRESET_AZURE);
    assert_int_equal(p->auth, SY_AUTH_API_KEY_HEADER);
    assert_string_equal(sy_provider_find("groq")->default_base, "https://api.groq.com/openai/v1");
    assert_string_equal(sy_provider_find("hosted_vllm")->default_key, "fake-api-key");
    assert_null(sy_provider_find("anthropic"));
    assert_false(sy_provider_known_unsupported("anthropic")); /* a translating adapter serves it */
    assert_true(sy_provider_known_unsupported("sagemaker"));
    static const char *all[] = {"openai",      "azure",        "hosted_vllm", "groq", "mistral",   "deepseek",
                                "together_ai", "fireworks_ai", "openrouter",  "xai",  "lm_studio", "mock"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        assert_non_null(sy_provider_find(all[i]));
}

/* sy_xlate_echo_model: the top-level "model", and message.model /
 * response.model, replaced; every other byte kept; nested or non-string
 * models, other objects and non-JSON left alone. */
static void echo(const char *in, const char *want, int count)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    assert_int_equal(sy_xlate_echo_model(in, strlen(in), "claude-sonnet-4-5", &b), count);
    assert_int_equal(b.len, strlen(want));
    assert_memory_equal(b.p, want, b.len);
    sy_buf_free(&b);
}

static void echo_model(void **st)
{
    (void)st;
    echo("{\"id\":\"msg_1\",\"type\":\"message\",\"model\" : \"claude-sonnet-4-5-20250929\",\"content\":[]}",
         "{\"id\":\"msg_1\",\"type\":\"message\",\"model\" : \"claude-sonnet-4-5\",\"content\":[]}", 1);
    echo(" {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"x\",\"usage\":{\"input_tokens\":3}}}\n",
         " {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_"
         "tokens\":3}}}\n",
         1);
    echo("{\"type\":\"response.created\",\"response\":{\"tools\":[{\"model\":\"gpt-image-1\"}],\"model\":\"gpt-4o\"}}",
         "{\"type\":\"response.created\",\"response\":{\"tools\":[{\"model\":\"gpt-image-1\"}],\"model\":\"claude-"
         "sonnet-4-5\"}}",
         1);
    /* the top level's and an inner one's, in their order; escapes in the name */
    echo("{\"response\":{\"model\":\"a\"},\"mod\\u0065l\":\"b\"}",
         "{\"response\":{\"model\":\"claude-sonnet-4-5\"},\"mod\\u0065l\":\"claude-sonnet-4-5\"}", 2);
    /* left alone: nested deeper, not a string, no model, not an object, broken JSON */
    static const char *const same[] = {"{\"choices\":[{\"message\":{\"model\":\"x\"}}]}",
                                       "{\"model\":null}",
                                       "{\"model\":{\"model\":\"x\"}}",
                                       "{\"type\":\"ping\"}",
                                       "[\"model\"]",
                                       "\"model\"",
                                       "",
                                       "{\"model\":\"x",
                                       "{\"model\" \"x\"}",
                                       "{\"message\":\"model\"}"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        echo(same[i], same[i], 0);
    /* a name that needs escaping is written escaped */
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    assert_int_equal(sy_xlate_echo_model("{\"model\":\"x\"}", 13, "a\"b\\c", &b), 1);
    assert_int_equal(b.len, strlen("{\"model\":\"a\\\"b\\\\c\"}"));
    assert_memory_equal(b.p, "{\"model\":\"a\\\"b\\\\c\"}", b.len);
    sy_buf_free(&b);
}

/* sy_xlate_echo_top: OpenAI's answers and chunks, a top-level "model" only,
 * found by the short walk or (escaped keys, long prefixes) by jscan. */
static void top(const char *in, const char *want)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    int r = sy_xlate_echo_top(in, strlen(in), "bench-model", &b);
    assert_int_equal(r, want != NULL);
    assert_int_equal(b.len, want ? strlen(want) : 0); /* 0: out untouched */
    if (want)
        assert_memory_equal(b.p, want, b.len);
    sy_buf_free(&b);
}

static void echo_top(void **st)
{
    (void)st;
    top("{\"id\":\"c\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{"
        "\"message\":"
        "{\"content\":\"a \\\"model\\\": \\\"x\\\"\"}}]}",
        "{\"id\":\"c\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"bench-model\",\"choices\":[{"
        "\"message\":"
        "{\"content\":\"a \\\"model\\\": \\\"x\\\"\"}}]}");
    /* a string that looks like members; arrays and objects before it */
    top("{\"a\":\"x\\\",\\\"model\\\":\\\"y\",\"choices\":[{\"model\":\"n\"},[1,{\"b\":2}]],\"model\" : \"z\"}",
        "{\"a\":\"x\\\",\\\"model\\\":\\\"y\",\"choices\":[{\"model\":\"n\"},[1,{\"b\":2}]],\"model\" : "
        "\"bench-model\"}");
    /* a value that reads "model", a brace in a string before it, spaces around the colon */
    top("{\"object\":\"model\",\"model\":\"m\"}", "{\"object\":\"model\",\"model\":\"bench-model\"}");
    top("{\"id\":\"{[\",\"model\" :\t\"m\\\"x\"}", "{\"id\":\"{[\",\"model\" :\t\"bench-model\"}");
    /* an escaped key and a model after a long member: jscan decides */
    top("{\"mod\\u0065l\":\"q\"}", "{\"mod\\u0065l\":\"bench-model\"}");
    char big[6000], want[6000];
    memset(big, 0, sizeof big);
    strcpy(big, "{\"t\":\"");
    memset(big + 6, 'x', 5000);
    strcpy(big + 5006, "\",\"model\":\"m\"}");
    memcpy(want, big, 5006);
    strcpy(want + 5006, "\",\"model\":\"bench-model\"}");
    top(big, want);
    /* nothing to do: already the name, none, nested, not a string, broken, not an object */
    static const char *const none[] = {"{\"model\":\"bench-model\"}",
                                       "{\"id\":1}",
                                       "{\"x\":{\"model\":\"m\"}}",
                                       "{\"model\":null}",
                                       "{\"model\":\"x",
                                       "[{\"model\":\"x\"}]",
                                       "",
                                       "  "};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        top(none[i], NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scan_finds_top_level_members),
        cmocka_unit_test(scan_rejects_invalid),
        cmocka_unit_test(scan_depth_is_capped),
        cmocka_unit_test(decode_strings),
        cmocka_unit_test(scan_decodes_keys_and_flags_duplicates),
        cmocka_unit_test(usage_scan),
        cmocka_unit_test(presets),
        cmocka_unit_test(echo_model),
        cmocka_unit_test(echo_top),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
