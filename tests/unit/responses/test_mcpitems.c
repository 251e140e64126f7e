/* test_mcpitems.c - the MCP tool loop's pure parts (responses/mcpitems.c):
 * approval ids round-trip whatever the call holds and refuse what switchyard
 * did not make; a CallToolResult's text as LiteLLM gives it to the model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/errors.h"
#include "responses/responses.h"

static void roundtrip(const char *call_id, size_t cl, const char *name, const char *args, size_t al, const char *label)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_resp_mcp_call k = {call_id, name, args, label, cl, strlen(name), al, label ? strlen(label) : 0}, b;
    struct sy_buf id;
    sy_buf_init(&id, 1 << 20);
    assert_int_equal(sy_resp_mcp_approval_id(&k, &id), 0);
    assert_memory_equal(id.p, "mcpr_", 5);
    for (size_t i = 0; i < id.len; i++) /* an id is plain ASCII: no escaping anywhere it goes */
        assert_true(id.p[i] > ' ' && id.p[i] < 127 && id.p[i] != '"' && id.p[i] != '\\');
    assert_int_equal(sy_resp_mcp_approval_decode(id.p, id.len, &a, &b), 0);
    assert_int_equal(b.call_id_len, cl);
    assert_memory_equal(b.call_id, call_id, cl);
    assert_string_equal(b.name, name);
    assert_int_equal(b.args_len, al);
    assert_memory_equal(b.args, args, al);
    assert_string_equal(b.label, label ? label : "");
    sy_buf_free(&id);
    sy_arena_free(&a);
}

static void test_approval_roundtrip(void **st)
{
    (void)st;
    roundtrip("call_1", 6, "bed-echo", "{\"text\":\"mock\"}", 15, "bed");
    roundtrip("c", 1, "x", "", 0, NULL);
    /* quotes, backslashes, control characters, UTF-8, a NUL inside the arguments */
    static const char args[] = "{\"t\":\"a\\\"b\\\\c\\n\xc3\xa9\xf0\x9f\x9a\x80\"}\0tail";
    roundtrip("id \"q\"", 6, "s-t\xc3\xa9", args, sizeof args - 1, "l\tabel");
}

static void test_approval_refusals(void **st)
{
    (void)st;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_resp_mcp_call k;
    static const char *const bad[] = {
        "",
        "mcpr_",
        "mcpr",
        "mcpr_!!!!",
        "resp_abc",
        "mcpr_e30=" /* {} */,
        "mcpr_eyJjIjoxfQ==" /* {"c":1} */,
        "mcpr_eyJjIjoiYSIsIm4iOiIiLCJhIjoiIn0=" /* {"c":"a","n":"","a":""}: no tool */,
        "mcpr_W10=" /* [] */,
        "mcpr_bnVsbA==" /* null */,
        "MCPR_eyJjIjoiYSIsIm4iOiJiIiwiYSI6IiJ9",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(sy_resp_mcp_approval_decode(bad[i], strlen(bad[i]), &a, &k), SY_EINVAL);
    assert_int_equal(sy_resp_mcp_approval_decode(NULL, 0, &a, &k), SY_EINVAL);
    /* a well-formed one made by hand is accepted: the id is not a secret, the call is checked when it runs */
    static const char ok[] = "mcpr_eyJjIjoiYSIsIm4iOiJiIiwiYSI6IiJ9"; /* {"c":"a","n":"b","a":""} */
    assert_int_equal(sy_resp_mcp_approval_decode(ok, sizeof ok - 1, &a, &k), 0);
    assert_string_equal(k.name, "b");
    assert_string_equal(k.label, "");
    sy_arena_free(&a);
}

static void text_is(const char *json, const char *want, int want_err)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 20);
    int e = -1;
    assert_int_equal(sy_resp_mcp_result_text(json, json ? strlen(json) : 0, &a, &out, &e), 0);
    assert_int_equal(out.len, strlen(want));
    assert_memory_equal(out.p, want, out.len);
    assert_int_equal(e, want_err);
    sy_buf_free(&out);
    sy_arena_free(&a);
}

static void test_result_text(void **st)
{
    (void)st;
    text_is("{\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":\"b\\nc\"}]}", "a b\nc", 0);
    text_is("{\"content\":[{\"type\":\"image\",\"data\":\"x\",\"mimeType\":\"image/png\"},{\"type\":\"text\","
            "\"text\":\"t\"},{\"type\":\"resource\",\"resource\":{}}]}",
            "t [Generated Image, EmbeddedResource]", 0);
    text_is("{\"content\":[{\"type\":\"audio\"}]}", "[Generated Audio]", 0);
    text_is("{\"content\":[{\"type\":\"text\",\"text\":\"boom\"}],\"isError\":true}", "boom", 1);
    text_is("{\"content\":[]}", "Tool executed successfully", 0);
    text_is("{\"structuredContent\":{\"sum\":3}}", "Tool executed successfully", 0);
    text_is("not json", "Tool executed successfully", 0);
    text_is(NULL, "Tool executed successfully", 0);
    text_is("{\"content\":{\"type\":\"text\"}}", "Tool executed successfully", 0);
    text_is("{\"content\":[{\"type\":\"text\",\"text\":7}]}", "[Generated ResourceLink]", 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_approval_roundtrip),
        cmocka_unit_test(test_approval_refusals),
        cmocka_unit_test(test_result_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
