/* test_jdom.c - the flat JSON DOM and writer (providers/jdom.h), and the
 * OpenAI writer helpers (providers/oai.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/errors.h"
#include "providers/jdom.h"
#include "providers/oai.h"

static int parse(struct sy_jdoc *d, struct sy_arena *a, const char *s)
{
    return sy_jdom_parse(d, s, strlen(s), a, 0);
}

static void test_layout(void **st)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    assert_int_equal(parse(&d, &a, " {\"a\":1,\"b\":[true],\"c\":{}} "), 0);
    assert_int_equal(d.count, 8);
    assert_int_equal(d.n[0].type, 'o');
    assert_int_equal(d.n[0].kids, 3);
    uint32_t b = sy_jdom_get(&d, 0, "b");
    assert_int_equal(sy_jdom_type(&d, b), 'a');
    int v = 0;
    assert_true(sy_jdom_bool(&d, sy_jdom_first(&d, b), &v));
    assert_int_equal(v, 1);
    int64_t i = 0;
    assert_true(sy_jdom_i64(&d, sy_jdom_get(&d, 0, "a"), &i));
    assert_int_equal(i, 1);
    assert_int_equal(sy_jdom_get(&d, 0, "zz"), 0);
    struct sy_jdoc e;
    assert_int_equal(parse(&e, &a, "{\"\":1,\"x\":2}"), 0);
    assert_int_equal(sy_jdom_get(&e, 0, ""), 2); /* the empty key is a key like any other */
    size_t n = 0;
    int keys = 0;
    for (uint32_t k = sy_jdom_first(&d, 0); k; k = sy_jdom_next_key(&d, k))
        keys++;
    assert_int_equal(keys, 3);
    const char *raw = sy_jdom_raw(&d, sy_jdom_get(&d, 0, "c"), &n);
    assert_int_equal(n, 2);
    assert_memory_equal(raw, "{}", 2);
    sy_arena_free(&a);
}

static void test_strings(void **st)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    assert_int_equal(
        parse(&d, &a, "{\"m\\u006fdel\":\"x\\n\\u00e9\\ud83d\\ude00\",\"model\":\"last\",\"z\":\"\\u0000\"}"), 0);
    size_t n;
    const char *s = sy_jdom_str(&d, sy_jdom_get(&d, 0, "model"), &a, &n);
    assert_string_equal(s, "last"); /* duplicates: the last wins */
    s = sy_jdom_str(&d, sy_jdom_val(sy_jdom_first(&d, 0)), &a, &n);
    assert_int_equal(n, 1 + 1 + 2 + 4);
    assert_memory_equal(s, "x\n\xc3\xa9\xf0\x9f\x98\x80", n);
    s = sy_jdom_str(&d, sy_jdom_get(&d, 0, "z"), &a, &n);
    assert_int_equal(n, 1);
    assert_int_equal(s[0], 0);
    assert_true(sy_jdom_str_eq(&d, sy_jdom_get(&d, 0, "model"), "last"));
    sy_arena_free(&a);
}

static void test_errors(void **st)
{
    static const char *bad[] = {"",          "{",     "[1,]",         "{\"a\":1,}",       "01",
                                "1.",        "-",     "\"\\x\"",      "\"a\001\"",        "tru",
                                "{\"a\" 1}", "[1 2]", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "{}x",
                                "\"\\u12\"", "[[[[",  "nul"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_jdoc d;
        assert_int_equal(parse(&d, &a, bad[i]), SY_EJSON);
        assert_non_null(d.err);
        sy_arena_free(&a);
    }
    char deep[400];
    memset(deep, '[', 200);
    memset(deep + 200, ']', 200);
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    assert_int_equal(sy_jdom_parse(&d, deep, 400, &a, 0), SY_EJSON);
    assert_int_equal(sy_jdom_parse(&d, "[1,2,3]", 7, &a, 2), SY_ENOSPC);
    sy_arena_free(&a);
}

static void test_writer(void **st)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    struct sy_jw w;
    sy_jw_init(&w, &b);
    sy_jw_obj(&w);
    sy_jw_key(&w, "a");
    sy_jw_arr(&w);
    sy_jw_int(&w, -5);
    sy_jw_double(&w, 0.1);
    sy_jw_str(&w, "q\"\n\x01\xff\xc3\xa9", 7);
    sy_jw_obj(&w);
    sy_jw_end(&w);
    sy_jw_end(&w);
    sy_jw_key(&w, "b");
    sy_jw_bool(&w, 0);
    sy_jw_key(&w, "c");
    sy_jw_cstr(&w, NULL);
    sy_jw_end(&w);
    assert_int_equal(w.err, 0);
    assert_string_equal(b.p, "{\"a\":[-5,0.1,\"q\\\"\\n\\u0001\xef\xbf\xbd\xc3\xa9\",{}],\"b\":false,\"c\":null}");
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    const char *src = "{\"args\":{\"x\":\"y\"},\"s\":\"t\"}";
    assert_int_equal(parse(&d, &a, src), 0);
    sy_buf_reset(&b);
    sy_jw_init(&w, &b);
    sy_jw_arr(&w);
    sy_jw_node_as_str(&w, &d, sy_jdom_get(&d, 0, "args"));
    sy_jw_node_as_str(&w, &d, sy_jdom_get(&d, 0, "s"));
    sy_jw_node(&w, &d, sy_jdom_get(&d, 0, "nope"));
    sy_jw_end(&w);
    assert_string_equal(b.p, "[\"{\\\"x\\\":\\\"y\\\"}\",\"t\",null]");
    sy_arena_free(&a);
    sy_buf_free(&b);
}

static void test_oai(void **st)
{
    struct sy_xstate s;
    memset(&s, 0, sizeof s);
    strcpy(s.id, "chatcmpl-1");
    strcpy(s.model, "m");
    s.created = 7;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    sy_oai_chunk_text(&s, &b, "hi", 2);
    int ti = sy_oai_chunk_tool_start(&s, &b, "call_1", 6, "f", 1);
    sy_oai_chunk_tool_args(&s, &b, ti, "{\"a\"", 4);
    sy_oai_chunk_finish(&s, &b, "tool_calls");
    sy_oai_chunk_finish(&s, &b, "stop"); /* once only */
    s.u.prompt = 3;
    s.u.completion = 4;
    s.u.cache_read = 1;
    sy_oai_chunk_usage(&s, &b);
    const char *want =
        "data: "
        "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":7,\"model\":\"m\",\"choices\":[{"
        "\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
        "data: "
        "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":7,\"model\":\"m\",\"choices\":[{"
        "\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n"
        "data: "
        "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":7,\"model\":\"m\",\"choices\":[{"
        "\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{"
        "\"name\":\"f\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n"
        "data: "
        "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":7,\"model\":\"m\",\"choices\":[{"
        "\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"a\\\"\"}}]},\"finish_"
        "reason\":null}]}\n\n"
        "data: "
        "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":7,\"model\":\"m\",\"choices\":[{"
        "\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
        "data: "
        "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":7,\"model\":\"m\",\"choices\":[],"
        "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4,\"total_tokens\":7,\"prompt_tokens_details\":{\"cached_"
        "tokens\":1},\"cache_read_input_tokens\":1,\"cache_creation_input_tokens\":0}}\n\n";
    assert_string_equal(b.p, want);
    sy_buf_reset(&b);
    struct sy_xtool t = {"call_1", "f", "{}", 6, 1, 2};
    struct sy_xmsg m = {.content = "ok", .content_len = 2, .tools = &t, .ntools = 1, .finish_reason = "tool_calls"};
    s.u.cache_read = 0;
    sy_oai_write_response(&s, &m, &b);
    assert_string_equal(
        b.p, "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":7,\"model\":\"m\",\"choices\":[{"
             "\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"ok\",\"tool_calls\":[{\"id\":\"call_1\","
             "\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_"
             "calls\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4,\"total_tokens\":7}}");
    assert_string_equal(sy_oai_finish_reason("end_turn", 8), "stop");
    assert_string_equal(sy_oai_finish_reason("MAX_TOKENS", 10), "length");
    assert_string_equal(sy_oai_finish_reason("SAFETY", 6), "content_filter");
    struct sy_pconf pc = {0};
    struct sy_xctx x = {.pc = &pc, .model = "claude"};
    struct sy_xerr e;
    assert_int_equal(sy_oai_unsupported(&x, "anthropic", "logit_bias", &e), 0);
    assert_int_equal(e.status, 400);
    assert_non_null(strstr(e.message, "anthropic does not support parameters: ['logit_bias'], for model=claude"));
    pc.drop_params = 1;
    assert_int_equal(sy_oai_unsupported(&x, "anthropic", "logit_bias", &e), 1);
    sy_buf_free(&b);
}

static void test_fast_text(void **st)
{
    assert_int_equal(sy_jdom_string_len("\"a\\u00e9b\"}}", 12, NULL), 10);
    assert_int_equal(sy_jdom_string_len("\"a\x01\"", 4, NULL), 0);
    assert_int_equal(sy_jdom_string_len("\"abc", 4, NULL), 0);
    assert_int_equal(sy_jdom_string_len("\"\xc3\"", 3, NULL), 0);
    struct sy_xstate s;
    memset(&s, 0, sizeof s);
    strcpy(s.id, "i");
    strcpy(s.model, "m");
    struct sy_buf a, b;
    sy_buf_init(&a, 1 << 16);
    sy_buf_init(&b, 1 << 16);
    sy_oai_chunk_text_json(&s, &a, "\"h\\\"i\"", 6);
    struct sy_xstate s2;
    memset(&s2, 0, sizeof s2);
    strcpy(s2.id, "i");
    strcpy(s2.model, "m");
    sy_oai_chunk_text(&s2, &b, "h\"i", 3);
    assert_string_equal(a.p, b.p); /* the raw path writes what the decoding path writes */
    sy_buf_free(&a);
    sy_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout), cmocka_unit_test(test_strings), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_writer), cmocka_unit_test(test_oai),     cmocka_unit_test(test_fast_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
