/* test_key.c - unit tests for src/cache/key.c: cache keys equal LiteLLM's
 * (golden values from gen_keys.py, which runs LiteLLM's algorithm in Python). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cache/cache.h"

static const struct {
    const char *body, *group, *ns, *key;
} golden[] = {
    {"{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", "gpt-4o", NULL,
     "7839cd844bab0fcbdacae88f0ff579014b0d97cb8029f2407513327aafbe60a5"},
    {"{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"model\":\"gpt-4o\",\"temperature\":0.7,\"max_tokens\":"
     "10}",
     "gpt-4o", NULL, "5c863aef8cc90c1dd89fa37daa3eeea38e10c285c0775915ba1d34f9b7b20353"},
    {"{\"model\":\"x\",\"temperature\":1.0,\"top_p\":1e-05,\"seed\":42,\"stream\":true,\"stream_options\":{\"include_"
     "usage\":true},\"messages\":[{\"role\":\"user\",\"content\":\"it's \\\"q\\\" \\n \\u00e9 \\u00a0 \\u2028 "
     "\\ud83d\\ude00\"}],\"metadata\":{\"a\":1},\"cache\":{\"no-cache\":true},\"user\":\"u1\",\"fallbacks\":[\"y\"]}",
     "grp", "ns1", "ns1:cc4a8d9bf30e4ff6f83cfd5e330c034ebc120a5d5e587ed5a1897d4755b690e2"},
    {"{\"model\":\"m\",\"messages\":[],\"stop\":null,\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\","
     "\"parameters\":{\"type\":\"object\",\"properties\":{},\"required\":[]}}}],\"tool_choice\":\"auto\",\"logit_"
     "bias\":{\"50256\":-100},\"n\":2,\"presence_penalty\":-0.5,\"frequency_penalty\":1e16}",
     "m", NULL, "4bd398c6fee398b3e30ea6b3a5cd5077c5503096185de2f865958e561be0d752"},
    {"{\"model\":\"e\",\"input\":[\"a\",\"b\"],\"encoding_format\":\"float\",\"dimensions\":256}", "emb-group", NULL,
     "1752a7ea3ac5e44d5b10e4d37f4dda2199fdd7004c137a125f0d28f269fbbb07"},
    {"{\"model\":\"t\",\"prompt\":\"Say 'hi'\",\"max_tokens\":5,\"echo\":false,\"logprobs\":null,\"suffix\":\"x\\ty\"}",
     "t", NULL, "79cec24ec9b34af5a81fdbb83873519b871e31fda9d603a8e65ea31cf4107047"},
    {"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\\\\b\\u0007\"}]}],"
     "\"temperature\":0,\"response_format\":{\"type\":\"json_object\"}}",
     "", NULL, "dca2985daaf22c327374d63822774853155e2a7f1be86bf9481c8a611afe7091"},
    /* U+0378, U+FFF0 (unassigned), U+0890, U+1D173 (format): escaped only with CPython's isprintable table */
    {"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"\\u0378 \\ufff0 \\u0890 \\ud834\\udd73 "
     "\\u007f \\u061c\"}],\"temperature\":1000.0}",
     "m", NULL, "649401b26cd5ce06446a111850e1a57ff6a267c3b62a0d38a69ae88562ab12c6"},
};

static void golden_keys(void **st)
{
    (void)st;
    for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++) {
        char out[SY_CACHE_KEY_MAX];
        assert_int_equal(sy_cache_key(golden[i].body, strlen(golden[i].body), golden[i].group, golden[i].ns, out), 0);
        assert_string_equal(out, golden[i].key);
    }
}

static void ignored_members(void **st)
{
    (void)st;
    char a[SY_CACHE_KEY_MAX], b[SY_CACHE_KEY_MAX];
    const char *x = "{\"model\":\"m\",\"messages\":[]}";
    const char *y =
        "{\"model\":\"other\",\"messages\":[],\"metadata\":{\"k\":1},\"cache\":{\"ttl\":5},\"num_retries\":3,"
        "\"temperature\":null}";
    assert_int_equal(sy_cache_key(x, strlen(x), "g", NULL, a), 0);
    assert_int_equal(sy_cache_key(y, strlen(y), "g", "", b), 0);
    assert_string_equal(a, b);
    assert_int_equal(strlen(a), 64);
    /* stream is part of LiteLLM's key */
    const char *z = "{\"model\":\"m\",\"messages\":[],\"stream\":true}";
    assert_int_equal(sy_cache_key(z, strlen(z), "g", NULL, b), 0);
    assert_string_not_equal(a, b);
}

static void refused(void **st)
{
    (void)st;
    char out[SY_CACHE_KEY_MAX], ns[400];
    assert_int_equal(sy_cache_key("[1]", 3, "g", NULL, out), -1);
    assert_int_equal(sy_cache_key("{", 1, "g", NULL, out), -1);
    memset(ns, 'n', 301);
    ns[301] = 0;
    assert_int_equal(sy_cache_key("{}", 2, "g", ns, out), -1);
    ns[300] = 0;
    assert_int_equal(sy_cache_key("{}", 2, "g", ns, out), 0);
    assert_int_equal(strlen(out), 300 + 1 + 64);
}

/* switchyard_scope: the tenant is hashed in; global is LiteLLM's key; no
 * namespace makes two tenants' keys meet. */
static void scoped(void **st)
{
    (void)st;
    const char *b = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    char plain[SY_CACHE_KEY_MAX], g[SY_CACHE_KEY_MAX], a[SY_CACHE_KEY_MAX], a2[SY_CACHE_KEY_MAX], t[SY_CACHE_KEY_MAX],
        ns[SY_CACHE_KEY_MAX];
    assert_int_equal(sy_cache_key(b, strlen(b), "grp", NULL, plain), 0);
    assert_int_equal(sy_cache_key_scoped(b, strlen(b), "grp", NULL, "", g), 0);
    assert_string_equal(plain, g);
    assert_int_equal(sy_cache_key_scoped(b, strlen(b), "grp", NULL, NULL, g), 0);
    assert_string_equal(plain, g);
    assert_int_equal(sy_cache_key_scoped(b, strlen(b), "grp", NULL, "key:aaaa", a), 0);
    assert_int_equal(sy_cache_key_scoped(b, strlen(b), "grp", NULL, "key:aaaa", a2), 0);
    assert_int_equal(sy_cache_key_scoped(b, strlen(b), "grp", NULL, "team:aaaa", t), 0);
    assert_string_equal(a, a2);
    assert_string_not_equal(a, plain);
    assert_string_not_equal(a, t);
    assert_int_equal(strlen(a), 64);
    /* a namespace stays a visible prefix; the tenant stays inside the hash */
    assert_int_equal(sy_cache_key_scoped(b, strlen(b), "grp", "ns", "key:aaaa", ns), 0);
    assert_memory_equal(ns, "ns:", 3);
    assert_string_equal(ns + 3, a);
    /* a body member cannot spell the scope: "user" is a param hashed before it */
    const char *b2 = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                     "\"user\":\"x\\nswitchyard_scope: key:aaaa\"}";
    assert_int_equal(sy_cache_key_scoped(b2, strlen(b2), "grp", NULL, NULL, g), 0);
    assert_string_not_equal(g, a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden_keys),
        cmocka_unit_test(ignored_members),
        cmocka_unit_test(refused),
        cmocka_unit_test(scoped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
