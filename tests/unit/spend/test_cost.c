/* test_cost.c - unit tests for src/spend/cost.c (sy_cost, sy_cost_bound,
 * sy_dprice_from) against the built-in table, and src/spend/duration.c
 * (budget_duration parsing and LiteLLM's standardized reset times, UTC);
 * image generation priced per image and size (sy_image_cost), and usage
 * read from OpenAI-shaped bytes with its priced-apart parts (sy_usage_read). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "gateway/usage.h"
#include "spend/spend.h"

#define near(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-12 + 1e-9 * fabs((double)(b)))

static struct sy_dprice dp_of(const char *provider, const char *model)
{
    struct sy_dprice dp;
    const struct sy_price *p = sy_price_find(provider, model);
    assert_non_null(p);
    sy_dprice_from(&dp, p);
    return dp;
}

static void cost_gpt4o(void **st)
{
    struct sy_dprice dp = dp_of("openai", "gpt-4o");
    assert_true(dp.known);
    assert_int_equal(dp.max_output_tokens, 16384);
    assert_int_equal(dp.max_input_tokens, 128000);
    struct sy_usage u = {.prompt_tokens = 1000, .completion_tokens = 500};
    near(sy_cost(&dp, &u), 1000 * 2.5e-6 + 500 * 1e-5);
    /* cached tokens are part of prompt_tokens (OpenAI's convention) */
    u.cached_tokens = 400;
    near(sy_cost(&dp, &u), 600 * 2.5e-6 + 400 * 1.25e-6 + 500 * 1e-5);
    /* gpt-4o has no cache-write price: writes at the input price */
    u.cached_tokens = 0;
    u.cache_creation_tokens = 300;
    near(sy_cost(&dp, &u), 1000 * 2.5e-6 + 500 * 1e-5);
    /* nonsense usage does not underflow */
    struct sy_usage w = {.prompt_tokens = 10, .cached_tokens = 50, .completion_tokens = 5, .reasoning_tokens = 9};
    near(sy_cost(&dp, &w), 50 * 1.25e-6 + 9 * 1e-5);
}

static void cost_claude_cache(void **st)
{
    struct sy_dprice dp = dp_of("anthropic", "claude-sonnet-4-5-20250929");
    /* Anthropic reports input_tokens=100, cache_read_input_tokens=2000,
     * cache_creation_input_tokens=1000: prompt_tokens is their sum */
    struct sy_usage u = {
        .prompt_tokens = 3100, .cached_tokens = 2000, .cache_creation_tokens = 1000, .completion_tokens = 300};
    near(sy_cost(&dp, &u), 100 * 3e-6 + 2000 * 3e-7 + 1000 * 3.75e-6 + 300 * 1.5e-5);
    /* claude-3-haiku: writes $0.30/M, reads $0.03/M */
    dp = dp_of("anthropic", "claude-3-haiku-20240307");
    near(sy_cost(&dp, &u), 100 * 2.5e-7 + 2000 * 3e-8 + 1000 * 3e-7 + 300 * 1.25e-6);
    /* the same through Bedrock with a region prefix */
    dp = dp_of("bedrock", "us.anthropic.claude-3-7-sonnet-20250219-v1:0");
    near(sy_cost(&dp, &u), 100 * 3e-6 + 2000 * 3e-7 + 1000 * 3.75e-6 + 300 * 1.5e-5);
    /* sonnet 4.5 above 200k prompt tokens: every rate switches */
    dp = dp_of("anthropic", "claude-sonnet-4-5");
    struct sy_usage big = {
        .prompt_tokens = 300000, .cached_tokens = 100000, .cache_creation_tokens = 50000, .completion_tokens = 1000};
    near(sy_cost(&dp, &big), 150000 * 6e-6 + 100000 * 6e-7 + 50000 * 7.5e-6 + 1000 * 2.25e-5);
}

static void cost_gemini_tier(void **st)
{
    struct sy_dprice dp = dp_of("gemini", "gemini-2.5-pro");
    assert_int_equal(dp.tier_threshold, 200000);
    struct sy_usage u = {.prompt_tokens = 200000, .completion_tokens = 1000};
    near(sy_cost(&dp, &u), 200000 * 1.25e-6 + 1000 * 1e-5); /* at the threshold: base rates */
    u.prompt_tokens = 200001;
    near(sy_cost(&dp, &u), 200001 * 2.5e-6 + 1000 * 1.5e-5);
    u.prompt_tokens = 250000;
    u.cached_tokens = 50000;
    near(sy_cost(&dp, &u), 200000 * 2.5e-6 + 50000 * 2.5e-7 + 1000 * 1.5e-5);
    /* thinking tokens on Gemini are output tokens */
    u.reasoning_tokens = 800;
    near(sy_cost(&dp, &u), 200000 * 2.5e-6 + 50000 * 2.5e-7 + 1000 * 1.5e-5);
}

/* 1-hour cache writes (Anthropic's cache_creation.ephemeral_1h_input_tokens)
 * at cache_creation_input_token_cost_above_1hr, 5-minute ones at
 * cache_creation_input_token_cost; reasoning tokens at their own price. */
static void cost_cache_1h_and_reasoning(void **st)
{
    struct sy_dprice dp = dp_of("anthropic", "claude-sonnet-4-5");
    /* input 100, cache read 2000, cache writes 1000 of which 600 for an hour, output 300 */
    struct sy_usage u = {.prompt_tokens = 3100,
                         .cached_tokens = 2000,
                         .cache_creation_tokens = 1000,
                         .cache_creation_1h_tokens = 600,
                         .completion_tokens = 300};
    near(sy_cost(&dp, &u), 100 * 3e-6 + 2000 * 3e-7 + 400 * 3.75e-6 + 600 * 6e-6 + 300 * 1.5e-5);
    /* a lying 1h count above the writes is capped */
    u.cache_creation_1h_tokens = 5000;
    near(sy_cost(&dp, &u), 100 * 3e-6 + 2000 * 3e-7 + 1000 * 6e-6 + 300 * 1.5e-5);
    /* without a 1h rate: the 5-minute rate */
    dp.cache_write_1h = -1;
    near(sy_cost(&dp, &u), 100 * 3e-6 + 2000 * 3e-7 + 1000 * 3.75e-6 + 300 * 1.5e-5);
    /* the bound covers a prompt written for an hour */
    struct sy_dprice c = dp_of("anthropic", "claude-sonnet-4-5");
    struct sy_usage w = {.prompt_tokens = 1000,
                         .cache_creation_tokens = 1000,
                         .cache_creation_1h_tokens = 1000,
                         .completion_tokens = 10};
    assert_true(sy_cost_bound(&c, 1000, 10) >= sy_cost(&c, &w) - 1e-12);
    /* a reasoning price of the table's own */
    const struct sy_price *p = NULL;
    for (size_t i = 0; (p = sy_price_at(i)); i++)
        if (p->output_cost_per_reasoning_token >= 0 && p->output_cost_per_token >= 0 &&
            p->output_cost_per_reasoning_token != p->output_cost_per_token && p->tier_threshold == 0)
            break;
    assert_non_null(p);
    struct sy_dprice r;
    sy_dprice_from(&r, p);
    struct sy_usage ru = {.prompt_tokens = 10, .completion_tokens = 100, .reasoning_tokens = 60};
    double in = p->input_cost_per_token >= 0 ? p->input_cost_per_token : 0;
    near(sy_cost(&r, &ru), 10 * in + 40 * p->output_cost_per_token + 60 * p->output_cost_per_reasoning_token);
}

static void cost_reasoning(void **st)
{
    struct sy_dprice dp = dp_of("openai", "o3-mini");
    struct sy_usage u = {.prompt_tokens = 100, .completion_tokens = 1000, .reasoning_tokens = 800};
    /* no reasoning price in the table: reasoning at the output price */
    near(sy_cost(&dp, &u), 100 * 1.1e-6 + 1000 * 4.4e-6);
    /* a reasoning price of its own (a deployment override) */
    dp.reasoning = 2e-5;
    near(sy_cost(&dp, &u), 100 * 1.1e-6 + 200 * 4.4e-6 + 800 * 2e-5);
}

static void cost_unknown_and_overrides(void **st)
{
    struct sy_dprice dp;
    sy_dprice_from(&dp, NULL);
    assert_false(dp.known);
    struct sy_usage u = {.prompt_tokens = 1000, .completion_tokens = 1000, .cached_tokens = 10};
    near(sy_cost(&dp, &u), 0);
    near(sy_cost_bound(&dp, 1000, 100), 0);
    /* a deployment giving only input/output prices */
    dp.in = 1e-6;
    dp.out = 2e-6;
    dp.known = 1;
    near(sy_cost(&dp, &u), 1000 * 1e-6 + 1000 * 2e-6); /* cached at the input price */
    assert_true(sy_cost(NULL, &u) == 0);
    assert_true(sy_cost(&dp, NULL) == 0);
    /* free local models */
    dp = dp_of("ollama", "llama3");
    assert_true(dp.known);
    near(sy_cost(&dp, &u), 0);
}

static void cost_bound(void **st)
{
    struct sy_dprice dp = dp_of(NULL, "gpt-4o");
    near(sy_cost_bound(&dp, 1000, 0), 1000 * 2.5e-6 + 16384 * 1e-5); /* the model's max output */
    near(sy_cost_bound(&dp, 1000, 100), 1000 * 2.5e-6 + 100 * 1e-5); /* the request's max_tokens */
    near(sy_cost_bound(&dp, 1000, -1), 1000 * 2.5e-6 + 16384 * 1e-5);
    dp.max_output_tokens = 0;
    near(sy_cost_bound(&dp, 1000, 0), 1000 * 2.5e-6 + 4096 * 1e-5); /* unknown: 4096 */
    /* the bound is never below the real cost of a call within it */
    struct sy_dprice c = dp_of("anthropic", "claude-sonnet-4-5-20250929");
    struct sy_usage u = {
        .prompt_tokens = 3100, .cached_tokens = 0, .cache_creation_tokens = 3100, .completion_tokens = 500};
    assert_true(sy_cost_bound(&c, 3100, 500) >= sy_cost(&c, &u));
    near(sy_cost_bound(&c, 3100, 500), 3100 * 6e-6 + 500 * 1.5e-5); /* a 1-hour write is the dearest input */
    /* above the tier threshold the tier rates apply */
    struct sy_dprice g = dp_of("gemini", "gemini-2.5-pro");
    near(sy_cost_bound(&g, 300000, 1000), 300000 * 2.5e-6 + 1000 * 1.5e-5);
    near(sy_cost_bound(&g, 1000, 0), 1000 * 1.25e-6 + 65535 * 1e-5);
    /* a dearer reasoning price bounds the output */
    struct sy_dprice r = dp_of("openai", "o3-mini");
    r.reasoning = 1e-5;
    near(sy_cost_bound(&r, 0, 10), 10 * 1e-5);
    assert_true(sy_cost_bound(NULL, 1, 1) == 0);
}

/* 2024-03-13 10:15:30 UTC, a Wednesday */
#define NOW 1710324930.0

static void duration_seconds(void **st)
{
    near(sy_duration_seconds("30s"), 30);
    near(sy_duration_seconds("30m"), 1800);
    near(sy_duration_seconds("30h"), 108000);
    near(sy_duration_seconds("30d"), 2592000);
    near(sy_duration_seconds("2w"), 1209600);
    near(sy_duration_seconds("1mo"), 2592000);
    near(sy_duration_seconds("3mo"), 3 * 2592000);
    near(sy_duration_seconds("0d"), 0);
    near(sy_duration_seconds("30min"), 1800); /* LiteLLM's regex reads "m" */
    near(sy_duration_seconds("7days"), 7 * 86400);
    const char *bad[] = {"", "  ", "None", "null", "NULL", "30", "d", "30x", "-1d", " 30d", "1234567890s", "x30s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_true(sy_duration_seconds(bad[i]) == -1);
    assert_true(sy_duration_seconds(NULL) == -1);
}

static void duration_next(void **st)
{
    /* days */
    near(sy_duration_next("1d", NOW), 1710374400); /* next midnight */
    near(sy_duration_next("2d", NOW), 1710460800); /* today's midnight + 2 days */
    near(sy_duration_next("7d", NOW), 1710720000); /* next Monday */
    near(sy_duration_next("1w", NOW), 1710720000);
    near(sy_duration_next("14d", NOW), 1711497600);
    near(sy_duration_next("2w", NOW), 1711497600);
    near(sy_duration_next("30d", NOW), 1711929600); /* 1st of next month */
    near(sy_duration_next("0d", NOW), NOW);
    /* on a Monday, "7d" is the following Monday */
    near(sy_duration_next("7d", 1710756000), 1710720000 + 7 * 86400);
    /* hours: aligned to multiples of N, wrapping onto tomorrow modulo 24 */
    near(sy_duration_next("2h", NOW), 1710331200); /* 12:00 */
    near(sy_duration_next("1h", NOW), 1710324000 + 3600);
    near(sy_duration_next("30h", NOW), 1710396000); /* tomorrow 06:00, as LiteLLM */
    near(sy_duration_next("0h", NOW), NOW);
    /* minutes */
    near(sy_duration_next("30m", NOW), 1710325800); /* 10:30 */
    near(sy_duration_next("15m", NOW), 1710325800); /* 10:30: 15 is a multiple, so strictly later */
    near(sy_duration_next("90m", NOW), 1710329400); /* 11:30 */
    /* seconds */
    near(sy_duration_next("30s", NOW), 1710324960); /* 10:16:00 */
    near(sy_duration_next("15s", NOW), 1710324945); /* 10:15:45 */
    /* months */
    near(sy_duration_next("1mo", NOW), 1711929600);
    near(sy_duration_next("2mo", NOW), 1714521600);
    /* year end */
    double eoy = 1735689590; /* 2024-12-31 23:59:50 */
    near(sy_duration_next("30s", eoy), 1735689600);
    near(sy_duration_next("1m", eoy), 1735689600);
    near(sy_duration_next("1h", eoy), 1735689600);
    near(sy_duration_next("1d", eoy), 1735689600);
    near(sy_duration_next("30d", eoy), 1735689600);
    near(sy_duration_next("1mo", eoy), 1735689600);
    near(sy_duration_next("2mo", eoy), 1738368000); /* 2025-02-01 */
    /* unknown unit letters: next midnight, as LiteLLM */
    near(sy_duration_next("30days", NOW), 1710374400);
    near(sy_duration_next("30min", NOW), 1710374400);
    /* not a duration */
    assert_true(sy_duration_next("", NOW) == -1);
    assert_true(sy_duration_next("None", NOW) == -1);
    assert_true(sy_duration_next("30", NOW) == -1);
    assert_true(sy_duration_next("abc", NOW) == -1);
    assert_true(sy_duration_next(NULL, NOW) == -1);
    assert_true(sy_duration_next("1d", NAN) == -1);
    /* the next reset is always later than now (or now for 0) */
    const char *all[] = {"1s",  "7s",  "59s", "61s", "1m", "7m",  "59m", "61m", "1h",  "5h",
                         "23h", "25h", "1d",  "3d",  "7d", "30d", "1w",  "1mo", "12mo"};
    for (double t = NOW; t < NOW + 86400 * 40; t += 3607.3)
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            assert_true(sy_duration_next(all[i], t) > t);
}

/* LiteLLM's price map: DALL-E per pixel, keyed by size (and quality for dall-e-3). */
static void image_cost(void **st)
{
    near(sy_image_cost("openai", "dall-e-3", NULL, NULL, 1, NULL), 1024.0 * 1024 * 3.81469e-08); /* $0.04 */
    near(sy_image_cost("openai", "dall-e-3", "1024x1024", "standard", 1, NULL), 1024.0 * 1024 * 3.81469e-08);
    near(sy_image_cost("openai", "dall-e-3", "1024x1792", "hd", 2, NULL), 2 * 1024.0 * 1792 * 6.539e-08);
    near(sy_image_cost("openai", "dall-e-3", "1792-x-1024", "hd", 1, NULL), 1792.0 * 1024 * 6.539e-08);
    near(sy_image_cost("openai", "dall-e-3", "1024x1024", "hd", 1, NULL), 1024.0 * 1024 * 7.629e-08);
    near(sy_image_cost("openai", "dall-e-2", "512x512", NULL, 3, NULL), 3 * 512.0 * 512 * 6.86e-08);
    near(sy_image_cost("openai", "dall-e-2", "256-x-256", NULL, 1, NULL), 256.0 * 256 * 2.4414e-07);
    near(sy_image_cost("azure", "dall-e-2", "256x256", NULL, 1, NULL), 256.0 * 256 * 2.4414e-07);
    near(sy_image_cost(NULL, "openai/dall-e-2", "256x256", NULL, 1, NULL), 256.0 * 256 * 2.4414e-07);
    /* a size that is not WxH ("auto", junk, zero, overflow) prices as 1024x1024 */
    const char *odd[] = {"auto",          "",     "x",          "1024x", "x1024", "0x0", "1024x1024x1",
                         "99999999999x1", "-5x5", "1024 x 1024"};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        near(sy_image_cost("openai", "dall-e-2", odd[i], NULL, 1, NULL), 1024.0 * 1024 * 1.9e-08);
    /* a size the table has no entry for: not priced by the table */
    assert_true(sy_image_cost("openai", "dall-e-2", "640x480", NULL, 1, NULL) < 0);
    /* unknown model, no images */
    assert_true(sy_image_cost("openai", "no-such-image-model", "1024x1024", NULL, 1, NULL) < 0);
    assert_true(sy_image_cost("openai", "dall-e-2", "256x256", NULL, 0, NULL) < 0);
    assert_true(sy_image_cost("openai", NULL, "256x256", NULL, 1, NULL) < 0);
    /* the deployment's own entry: per image first, else per pixel */
    struct sy_price own;
    memset(&own, 0, sizeof own);
    own.input_cost_per_pixel = -1;
    own.output_cost_per_image = 0.03;
    near(sy_image_cost("vertex_ai", "imagen-3.0-generate-002", NULL, NULL, 4, &own), 0.12);
    own.output_cost_per_image = -1;
    own.input_cost_per_pixel = 1e-08;
    near(sy_image_cost("x", "y", "512x256", NULL, 2, &own), 2 * 512.0 * 256 * 1e-08);
    own.input_cost_per_pixel = -1;
    assert_true(sy_image_cost("x", "y", NULL, NULL, 1, &own) < 0);
}

/* usage read from a response: totals and the parts priced apart, then priced */
static void usage_read_priced(void **st)
{
    struct sy_usage u;
    const char *r = "{\"id\":\"x\",\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":500,\"total_tokens\":1500,"
                    "\"prompt_tokens_details\":{\"cached_tokens\":400,\"audio_tokens\":0},"
                    "\"completion_tokens_details\":{\"reasoning_tokens\":200,\"audio_tokens\":0}}}";
    assert_int_equal(sy_usage_read(r, strlen(r), &u), 1);
    assert_int_equal(u.prompt_tokens, 1000);
    assert_int_equal(u.completion_tokens, 500);
    assert_int_equal(u.cached_tokens, 400);
    assert_int_equal(u.reasoning_tokens, 200);
    assert_int_equal(u.cache_creation_tokens, 0);
    struct sy_dprice dp = dp_of("openai", "gpt-4o");
    near(sy_cost(&dp, &u), 600 * 2.5e-06 + 400 * 1.25e-06 + 500 * 1e-05);
    /* LiteLLM's own usage for Anthropic: cache reads and writes at the top level */
    const char *a = "{\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":5,\"cache_read_input_tokens\":30,"
                    "\"cache_creation_input_tokens\":20}}";
    assert_int_equal(sy_usage_read(a, strlen(a), &u), 1);
    assert_int_equal(u.cached_tokens, 30);
    assert_int_equal(u.cache_creation_tokens, 20);
    assert_int_equal(u.cache_creation_1h_tokens, 0);
    /* LiteLLM's cache_creation_token_details: the 1-hour part, priced at its rate */
    const char *h = "{\"usage\":{\"prompt_tokens\":3100,\"completion_tokens\":300,\"prompt_tokens_details\":"
                    "{\"cached_tokens\":2000,\"cache_creation_tokens\":1000,\"cache_creation_token_details\":"
                    "{\"ephemeral_5m_input_tokens\":400,\"ephemeral_1h_input_tokens\":600}},"
                    "\"cache_read_input_tokens\":2000,\"cache_creation_input_tokens\":1000}}";
    assert_int_equal(sy_usage_read(h, strlen(h), &u), 1);
    assert_int_equal(u.cache_creation_tokens, 1000);
    assert_int_equal(u.cache_creation_1h_tokens, 600);
    struct sy_dprice s45 = dp_of("anthropic", "claude-sonnet-4-5");
    near(sy_cost(&s45, &u), 100 * 3e-6 + 2000 * 3e-7 + 400 * 3.75e-6 + 600 * 6e-6 + 300 * 1.5e-5);
    /* a 1-hour count above the writes is capped at them */
    const char *h2 = "{\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":1,\"cache_creation_input_tokens\":10,"
                     "\"cache_creation\":{\"ephemeral_1h_input_tokens\":99}}}";
    assert_int_equal(sy_usage_read(h2, strlen(h2), &u), 1);
    assert_int_equal(u.cache_creation_1h_tokens, 10);
    /* parts larger than their totals are capped (no negative text tokens) */
    const char *bad = "{\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2,\"prompt_tokens_details\":"
                      "{\"cached_tokens\":50},\"cache_creation_input_tokens\":99,\"completion_tokens_details\":"
                      "{\"reasoning_tokens\":7}}}";
    assert_int_equal(sy_usage_read(bad, strlen(bad), &u), 1);
    assert_int_equal(u.cached_tokens, 10);
    assert_int_equal(u.cache_creation_tokens, 0);
    assert_int_equal(u.reasoning_tokens, 2);
    assert_true(sy_cost(&dp, &u) >= 0);
    /* a null usage (stream chunks before the last) and none at all */
    const char *nul = "{\"choices\":[],\"usage\":null}";
    assert_int_equal(sy_usage_read(nul, strlen(nul), &u), 0);
    assert_int_equal(sy_usage_read("{}", 2, &u), 0);
    /* where the usage object closes (for usage.cost), -1 when unclosed */
    const char *c = "data: {\"usage\":{\"prompt_tokens\":1,\"x\":{\"y\":2}}}\n";
    assert_int_equal(sy_usage_close(c, strlen(c)), (long)(strstr(c, "}}}") - c + 1));
    assert_int_equal(sy_usage_close(c, 30), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cost_gpt4o),
        cmocka_unit_test(cost_claude_cache),
        cmocka_unit_test(cost_gemini_tier),
        cmocka_unit_test(cost_reasoning),
        cmocka_unit_test(cost_cache_1h_and_reasoning),
        cmocka_unit_test(cost_unknown_and_overrides),
        cmocka_unit_test(cost_bound),
        cmocka_unit_test(duration_seconds),
        cmocka_unit_test(duration_next),
        cmocka_unit_test(image_cost),
        cmocka_unit_test(usage_read_priced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
