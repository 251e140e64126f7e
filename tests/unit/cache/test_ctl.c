/* test_ctl.c - unit tests for src/cache/ctl.c: the body "cache" object and
 * the Cache-Control header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cache/cache.h"

#define S(x) x, strlen(x)

static void body_controls(void **st)
{
    (void)st;
    struct sy_cache_ctl c;
    char err[128];
    assert_int_equal(sy_cache_ctl_parse(NULL, 0, NULL, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.no_cache + c.no_store + c.use_cache, 0);
    assert_true(c.ttl < 0 && c.s_maxage < 0 && c.ns[0] == 0);
    assert_int_equal(sy_cache_ctl_parse(S("{\"no-cache\":true,\"no-store\":true,\"use-cache\":true,\"ttl\":60,"
                                          "\"s-maxage\":10,\"namespace\":\"team-a\",\"other\":[1]}"),
                                        NULL, 0, &c, err, sizeof err),
                     0);
    assert_int_equal(c.no_cache, 1);
    assert_int_equal(c.no_store, 1);
    assert_int_equal(c.use_cache, 1);
    assert_true(c.ttl == 60 && c.s_maxage == 10);
    assert_string_equal(c.ns, "team-a");
    /* flags count only when exactly true (LiteLLM's `is True`) */
    assert_int_equal(sy_cache_ctl_parse(S("{\"no-cache\":\"true\",\"no-store\":1,\"ttl\":1.5,\"s-max-age\":0}"), NULL,
                                        0, &c, err, sizeof err),
                     0);
    assert_int_equal(c.no_cache + c.no_store, 0);
    assert_true(c.ttl == 1.5 && c.s_maxage == 0);
    /* ttl <= 0: LiteLLM's write fails -> no-store */
    assert_int_equal(sy_cache_ctl_parse(S("{\"ttl\":0}"), NULL, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.no_store, 1);
    assert_true(c.ttl < 0);
    assert_int_equal(sy_cache_ctl_parse(S("null"), NULL, 0, &c, err, sizeof err), 0);
}

static void body_errors(void **st)
{
    (void)st;
    struct sy_cache_ctl c;
    char err[128];
    assert_int_equal(sy_cache_ctl_parse(S("{\"ttl\":\"60\"}"), NULL, 0, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "ttl"));
    assert_int_equal(sy_cache_ctl_parse(S("{\"s-maxage\":true}"), NULL, 0, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "s-maxage"));
    assert_int_equal(sy_cache_ctl_parse(S("{\"namespace\":5}"), NULL, 0, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "namespace"));
    assert_int_equal(sy_cache_ctl_parse(S("[1]"), NULL, 0, &c, err, sizeof err), -1);
    assert_int_equal(sy_cache_ctl_parse(S("{\"ttl\":"), NULL, 0, &c, err, sizeof err), -1);
    char big[400] = "{\"namespace\":\"";
    memset(big + strlen(big), 'x', 301);
    strcpy(big + 14 + 301, "\"}");
    assert_int_equal(sy_cache_ctl_parse(S(big), NULL, 0, &c, err, sizeof err), -1);
}

static void header(void **st)
{
    (void)st;
    struct sy_cache_ctl c;
    char err[128];
    assert_int_equal(
        sy_cache_ctl_parse(NULL, 0, S("No-Cache, NO-STORE,max-age=30 , s-maxage=\"20\""), &c, err, sizeof err), 0);
    assert_int_equal(c.no_cache, 1);
    assert_int_equal(c.no_store, 1);
    assert_true(c.s_maxage == 20);
    assert_int_equal(sy_cache_ctl_parse(NULL, 0, S("max-age=abc, private, x=\"a,b\""), &c, err, sizeof err), 0);
    assert_true(c.s_maxage < 0);
    assert_int_equal(c.no_cache, 0);
    /* the body wins for values; flags are OR'ed */
    assert_int_equal(sy_cache_ctl_parse(S("{\"s-maxage\":5}"), S("max-age=100, no-cache"), &c, err, sizeof err), 0);
    assert_true(c.s_maxage == 5);
    assert_int_equal(c.no_cache, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(body_controls),
        cmocka_unit_test(body_errors),
        cmocka_unit_test(header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
