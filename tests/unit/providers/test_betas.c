/* test_betas.c - the anthropic-beta table of Bedrock and Vertex (betas.h):
 * which betas each platform takes, renamed ones, header lines with odd
 * spacing, case and repeats, and values that nobody takes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "providers/betas.h"

struct got {
    char s[1024];
    size_t n;
};

static void take(const char *name, void *ud)
{
    struct got *g = ud;
    size_t l = strlen(g->s);
    snprintf(g->s + l, sizeof g->s - l, "%s%s", l ? "," : "", name);
    g->n++;
}

static const char *each(enum sy_beta_platform p, const char *hdrs, size_t *n)
{
    static struct got g;
    memset(&g, 0, sizeof g);
    *n = sy_betas_each(p, hdrs, hdrs ? strlen(hdrs) : 0, take, &g);
    assert_int_equal(*n, g.n);
    return g.s;
}

static void lookup(void **state)
{
    (void)state;
    const char *b = "context-1m-2025-08-07";
    assert_string_equal(sy_beta_for(SY_BETA_BEDROCK_CONVERSE, b, strlen(b)), b);
    assert_string_equal(sy_beta_for(SY_BETA_VERTEX, b, strlen(b)), b);
    b = "interleaved-thinking-2025-05-14";
    assert_null(sy_beta_for(SY_BETA_BEDROCK_CONVERSE, b, strlen(b)));
    assert_null(sy_beta_for(SY_BETA_BEDROCK_INVOKE, b, strlen(b)));
    assert_string_equal(sy_beta_for(SY_BETA_VERTEX, b, strlen(b)), b);
    b = "advanced-tool-use-2025-11-20"; /* renamed on Bedrock InvokeModel and Vertex */
    assert_null(sy_beta_for(SY_BETA_BEDROCK_CONVERSE, b, strlen(b)));
    assert_string_equal(sy_beta_for(SY_BETA_BEDROCK_INVOKE, b, strlen(b)), "tool-search-tool-2025-10-19");
    assert_string_equal(sy_beta_for(SY_BETA_VERTEX, b, strlen(b)), "tool-search-tool-2025-10-19");
    b = "effort-2025-11-24";
    assert_non_null(sy_beta_for(SY_BETA_BEDROCK_CONVERSE, b, strlen(b)));
    assert_null(sy_beta_for(SY_BETA_VERTEX, b, strlen(b)));
    /* Claude Code's own, unknown ones, prefixes and near misses: nobody */
    static const char *const none[] = {"claude-code-20250219", "oauth-2025-04-20",       "no-such-beta",         "",
                                       "context-1m-2025-08-0", "context-1m-2025-08-07x", "CONTEXT-1M-2025-08-07"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        for (int p = 0; p < SY_BETA__COUNT; p++)
            assert_null(sy_beta_for((enum sy_beta_platform)p, none[i], strlen(none[i])));
    assert_null(sy_beta_for(SY_BETA__COUNT, "context-1m-2025-08-07", 21));
    assert_null(sy_beta_for(SY_BETA_VERTEX, NULL, 0));
}

static void header_lines(void **state)
{
    (void)state;
    size_t n;
    /* Claude Code 2.1's header, recorded */
    const char *cc = "anthropic-version: 2023-06-01\r\n"
                     "anthropic-beta: claude-code-20250219,context-1m-2025-08-07,interleaved-thinking-2025-05-14,"
                     "thinking-token-count-2026-05-13,context-management-2025-06-27,prompt-caching-scope-2026-01-05,"
                     "mid-conversation-system-2026-04-07,effort-2025-11-24\r\n";
    assert_string_equal(each(SY_BETA_BEDROCK_CONVERSE, cc, &n), "context-1m-2025-08-07,effort-2025-11-24");
    assert_string_equal(each(SY_BETA_BEDROCK_INVOKE, cc, &n),
                        "context-1m-2025-08-07,context-management-2025-06-27,effort-2025-11-24");
    assert_string_equal(each(SY_BETA_VERTEX, cc, &n),
                        "context-1m-2025-08-07,interleaved-thinking-2025-05-14,context-management-2025-06-27");
    /* two lines, any case, blanks and empty items, repeats and a rename that meets its target once */
    const char *odd = "Anthropic-Beta:  ,tool-search-tool-2025-10-19 ,, context-1m-2025-08-07\t\r\n"
                      "x-other: context-1m-2025-08-07\r\n"
                      "ANTHROPIC-BETA:advanced-tool-use-2025-11-20,context-1m-2025-08-07";
    assert_string_equal(each(SY_BETA_VERTEX, odd, &n), "tool-search-tool-2025-10-19,context-1m-2025-08-07");
    assert_int_equal(n, 2);
    assert_string_equal(each(SY_BETA_BEDROCK_CONVERSE, odd, &n), "context-1m-2025-08-07");
    /* nothing at all */
    assert_string_equal(each(SY_BETA_VERTEX, NULL, &n), "");
    assert_int_equal(n, 0);
    assert_string_equal(each(SY_BETA_VERTEX, "anthropic-beta:\r\n", &n), "");
    assert_string_equal(each(SY_BETA_VERTEX, "anthropic-beta: claude-code-20250219", &n), "");
    assert_string_equal(each(SY_BETA_VERTEX, "anthropic-betas: context-1m-2025-08-07\r\n", &n), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lookup),
        cmocka_unit_test(header_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
