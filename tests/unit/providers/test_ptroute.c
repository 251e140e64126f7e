/* test_ptroute.c - the provider pass-through route parsers (providers/ptroute.h):
 * prefixes, sub-path safety (traversal in every spelling), LiteLLM's
 * allowed_passthrough_routes matching, the model and Vertex location a path
 * names, which operations stream. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "providers/ptroute.h"

#define SAFE(s) sy_pt_subpath_safe((s), strlen(s))

static void test_find(void **st)
{
    (void)st;
    size_t sub = 99;
    const struct sy_ptprov *p = sy_pt_find("/anthropic/v1/messages", 22, &sub);
    assert_non_null(p);
    assert_int_equal(p->kind, SY_PT_ANTHROPIC);
    assert_int_equal(sub, 10);
    p = sy_pt_find("/vertex-ai/v1/x", 15, &sub);
    assert_non_null(p);
    assert_string_equal(p->provider, "vertex_ai");
    assert_non_null(sy_pt_find("/vllm", 5, &sub));
    assert_int_equal(sub, 5);
    assert_string_equal(sy_pt_find("/vllm/v1", 8, &sub)->provider, "hosted_vllm");
    assert_null(sy_pt_find("/anthropicx/v1", 14, &sub)); /* a prefix of a word is not the route */
    assert_null(sy_pt_find("/v1/anthropic/x", 15, &sub));
    assert_null(sy_pt_find("", 0, &sub));
    assert_null(sy_pt_find("/langfus", 8, &sub));
}

static void test_safe(void **st)
{
    (void)st;
    assert_true(SAFE(""));
    assert_true(SAFE("/v1/messages"));
    assert_true(SAFE("/v1/projects/p/locations/l/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict"));
    assert_true(SAFE("/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.anthropic.claude/invoke"));
    assert_true(SAFE("/v1/...")); /* three dots are a name */
    assert_true(SAFE("/v1/.hidden/..x"));
    assert_false(SAFE("/../key/generate"));
    assert_false(SAFE("/.."));
    assert_false(SAFE("/./v1"));
    assert_false(SAFE("/%2e%2e/key/generate"));
    assert_false(SAFE("/%2E%2E/key"));
    assert_false(SAFE("/.%2e/key"));
    assert_false(SAFE("/v1/%2e%2e%2fkey")); /* "../key" once the upstream decodes it */
    assert_false(SAFE("/v1/..%5ckey"));     /* backslash */
    assert_false(SAFE("/v1\\..\\key"));
    assert_false(SAFE("/v1/a%00b"));
    assert_false(SAFE("/v1/a%0d%0aHost: evil"));
    assert_false(SAFE("/v1/a#frag"));
    assert_true(SAFE("/v1/%252e%252e")); /* decoded once: "%2e%2e", a name */
    assert_true(SAFE("/v1/%zz/%"));      /* not an escape: bytes */
}

static void test_covers(void **st)
{
    (void)st;
    assert_true(sy_pt_route_covers("/anthropic", 10, "/anthropic", 10));
    assert_true(sy_pt_route_covers("/anthropic", 10, "/anthropic/v1/messages", 22));
    assert_false(sy_pt_route_covers("/anthropic", 10, "/anthropicx", 11));
    assert_false(sy_pt_route_covers("/anthropic/v1/messages", 22, "/anthropic", 10));
    assert_false(sy_pt_route_covers("", 0, "/anthropic", 10));
    assert_true(sy_pt_route_covers("/", 1, "//x", 3));
}

static void test_model(void **st)
{
    (void)st;
    char m[128], p[64], l[64];
    const char *v = "/v1/projects/p1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4%4020250514:"
                    "streamRawPredict";
    assert_int_equal(sy_pt_path_model(SY_PT_VERTEX, v, strlen(v), m, sizeof m), 24);
    assert_string_equal(m, "claude-sonnet-4@20250514");
    assert_true(sy_pt_vertex_where(v, strlen(v), p, sizeof p, l, sizeof l));
    assert_string_equal(p, "p1");
    assert_string_equal(l, "us-east5");
    assert_true(sy_pt_path_streams(v, strlen(v)));
    const char *b = "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/invoke-with-response-stream";
    assert_true(sy_pt_path_model(SY_PT_BEDROCK, b, strlen(b), m, sizeof m) > 0);
    assert_string_equal(m, "anthropic.claude-3-5-sonnet-20240620-v1:0");
    assert_true(sy_pt_path_streams(b, strlen(b)));
    const char *g = "/v1beta/models/gemini-1.5-pro:generateContent";
    assert_true(sy_pt_path_model(SY_PT_GEMINI, g, strlen(g), m, sizeof m) > 0);
    assert_string_equal(m, "gemini-1.5-pro");
    assert_false(sy_pt_path_streams(g, strlen(g)));
    assert_int_equal(sy_pt_path_model(SY_PT_ANTHROPIC, "/v1/messages", 12, m, sizeof m), 0);
    assert_int_equal(sy_pt_path_model(SY_PT_GEMINI, g, strlen(g), m, 5), 0); /* does not fit */
    assert_int_equal(sy_pt_path_model(SY_PT_BEDROCK, "/model/a%00b/x", 14, m, sizeof m), 0);
    assert_false(sy_pt_vertex_where("/v1/projects/p1", 15, p, sizeof p, l, sizeof l));
}

int main(void)
{
    const struct CMUnitTest t[] = {cmocka_unit_test(test_find), cmocka_unit_test(test_safe),
                                   cmocka_unit_test(test_covers), cmocka_unit_test(test_model)};
    return cmocka_run_group_tests(t, NULL, NULL);
}
