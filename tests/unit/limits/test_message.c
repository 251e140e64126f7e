/* test_message.c - unit tests of the limiter's client-facing texts
 * (src/limits/message.c): the exact 429 message and headers, and the
 * x-ratelimit-* headers of a taken request.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/buf.h"
#include "limits/limits.h"

/* 2026-12-03 23:58:00 UTC */
#define T_MIN 1796342280.0

static void desc(struct sy_lim_req *lr, enum sy_lim_kind k, const char *v, int64_t rpm, int64_t tpm, int64_t par)
{
    struct sy_lim_desc *d = &lr->d[lr->n++];
    d->kind = k;
    snprintf(d->value, sizeof d->value, "%s", v);
    d->rpm = rpm;
    d->tpm = tpm;
    d->par = par;
}

static void test_error_requests(void **st)
{
    (void)st;
    struct sy_lim_req lr;
    memset(&lr, 0, sizeof lr);
    desc(&lr, SY_LIM_API_KEY, "abc", 50, -1, -1);
    lr.over = 0;
    lr.over_type = "requests";
    lr.over_limit = 50;
    lr.over_remaining = 0;
    char msg[512], hdrs[512];
    sy_lim_error(&lr, T_MIN + 17.5, msg, sizeof msg, hdrs, sizeof hdrs);
    assert_string_equal(msg, "Rate limit exceeded for api_key: abc. Limit type: requests. Current limit: 50, "
                             "Remaining: 0. Limit resets at: 2026-12-03 23:59:00 UTC");
    assert_string_equal(hdrs, "retry-after: 43\r\n"
                              "rate_limit_type: requests\r\n"
                              "reset_at: 2026-12-03 23:59:00 UTC\r\n"
                              "x-ratelimit-remaining-requests: 0\r\n"
                              "x-ratelimit-limit-requests: 50\r\n");
    /* the last fraction of a second still says 1 */
    sy_lim_error(&lr, T_MIN + 59.9, msg, sizeof msg, hdrs, sizeof hdrs);
    assert_true(strncmp(hdrs, "retry-after: 1\r\n", 16) == 0);
    /* a cap too small: a cut message, never a cut header block */
    char small_m[20], small_h[20];
    sy_lim_error(&lr, T_MIN, small_m, sizeof small_m, small_h, sizeof small_h);
    assert_string_equal(small_m, "Rate limit exceeded");
    assert_string_equal(small_h, "");
}

static void test_error_tokens_parallel(void **st)
{
    (void)st;
    struct sy_lim_req lr;
    char msg[512], hdrs[512];
    memset(&lr, 0, sizeof lr);
    desc(&lr, SY_LIM_API_KEY, "abc", 50, -1, -1);
    desc(&lr, SY_LIM_MODEL_PER_TEAM, "t1:gpt-4o", -1, 1000, -1);
    lr.over = 1;
    lr.over_type = "tokens";
    lr.over_limit = 1000;
    lr.over_remaining = 120;
    sy_lim_error(&lr, T_MIN, msg, sizeof msg, hdrs, sizeof hdrs);
    assert_string_equal(msg, "Rate limit exceeded for model_per_team: t1:gpt-4o. Limit type: tokens. Current limit: "
                             "1000, Remaining: 0. Limit resets at: 2026-12-03 23:59:00 UTC");
    assert_string_equal(hdrs, "retry-after: 60\r\n"
                              "rate_limit_type: tokens\r\n"
                              "reset_at: 2026-12-03 23:59:00 UTC\r\n"
                              "x-ratelimit-remaining-tokens: 0\r\n"
                              "x-ratelimit-limit-tokens: 1000\r\n");
    lr.over = 0;
    lr.over_type = "max_parallel_requests";
    lr.over_limit = 2;
    lr.over_remaining = -3; /* shown as 0 */
    sy_lim_error(&lr, T_MIN + 30, msg, sizeof msg, hdrs, sizeof hdrs);
    assert_string_equal(msg, "Rate limit exceeded for api_key: abc. Limit type: max_parallel_requests. Current limit: "
                             "2, Remaining: 0. Limit resets at: 2026-12-03 23:59:00 UTC");
    assert_string_equal(hdrs, "retry-after: 1\r\n"
                              "rate_limit_type: max_parallel_requests\r\n"
                              "reset_at: 2026-12-03 23:59:00 UTC\r\n"
                              "x-ratelimit-remaining-max_parallel_requests: 0\r\n"
                              "x-ratelimit-limit-max_parallel_requests: 2\r\n");
}

static void test_headers(void **st)
{
    (void)st;
    struct sy_lim_req lr;
    struct sy_buf b;
    memset(&lr, 0, sizeof lr);
    desc(&lr, SY_LIM_API_KEY, "abc", 50, 1000, 2);
    desc(&lr, SY_LIM_TEAM, "t1", 10, -1, -1);
    desc(&lr, SY_LIM_GLOBAL, "global", -1, -1, 100);
    lr.rem_req[0] = 40;
    lr.rem_tok[0] = 900;
    lr.rem_req[1] = 3;
    lr.rem_tok[1] = -1;
    lr.rem_req[2] = lr.rem_tok[2] = -1;
    sy_buf_init(&b, 4096);
    sy_lim_headers(&lr, &b);
    assert_string_equal(b.p, "x-ratelimit-remaining-requests: 3\r\n"
                             "x-ratelimit-limit-requests: 10\r\n"
                             "x-ratelimit-remaining-tokens: 900\r\n"
                             "x-ratelimit-limit-tokens: 1000\r\n"
                             "x-ratelimit-api_key-remaining-requests: 40\r\n"
                             "x-ratelimit-api_key-limit-requests: 50\r\n"
                             "x-ratelimit-api_key-remaining-tokens: 900\r\n"
                             "x-ratelimit-api_key-limit-tokens: 1000\r\n"
                             "x-litellm-key-tpm-limit: 1000\r\n"
                             "x-litellm-key-rpm-limit: 50\r\n"
                             "x-ratelimit-team-remaining-requests: 3\r\n"
                             "x-ratelimit-team-limit-requests: 10\r\n");
    /* parallel only: nothing */
    sy_buf_reset(&b);
    memset(&lr, 0, sizeof lr);
    desc(&lr, SY_LIM_GLOBAL, "global", -1, -1, 100);
    sy_lim_headers(&lr, &b);
    assert_int_equal(b.len, 0);
    sy_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_requests),
        cmocka_unit_test(test_error_tokens_parallel),
        cmocka_unit_test(test_headers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
