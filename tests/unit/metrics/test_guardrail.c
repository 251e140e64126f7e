/* test_guardrail.c - the guardrail series (sy_metrics_guardrail) rendered
 * exactly as LiteLLM's PrometheusLogger._record_guardrail_metrics leaves them
 * in prometheus_client: litellm_guardrail_latency_seconds (LATENCY_BUCKETS,
 * error_type "none" when there is none), litellm_guardrail_errors_total
 * (status "error" with an error_type only), litellm_guardrail_requests_total;
 * names, help texts, label order, escaping, sums across shards; the value caps
 * of guardrail_name and error_type, the series cap, odd latencies, and
 * writers racing a scraper. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "metrics/metrics.h"

static char *render(void)
{
    struct sy_buf b;
    sy_buf_init(&b, 64u << 20);
    assert_int_equal(sy_metrics_render(&b), 0);
    assert_non_null(b.p);
    return b.p; /* caller frees */
}

static void expect(const char *text, const char *line)
{
    if (!strstr(text, line)) {
        fprintf(stderr, "missing: %s\n", line);
        fail();
    }
}

/* The guardrail families' text: from the latency histogram's HELP line to the
 * next family LiteLLM registers (litellm_deployment_state). Malloc'd. */
static char *guard_section(const char *t)
{
    const char *a = strstr(t, "# HELP litellm_guardrail_latency_seconds ");
    const char *b = strstr(t, "# HELP litellm_deployment_state ");
    assert_non_null(a);
    assert_non_null(b);
    assert_true(a < b);
    return strndup(a, (size_t)(b - a));
}

/* Sum of the values of the sample lines starting with prefix and containing
 * `has` (NULL: any). */
static double sum_samples(const char *text, const char *prefix, const char *has)
{
    double total = 0;
    size_t pl = strlen(prefix);
    for (const char *p = text; p && *p;) {
        const char *eol = strchr(p, '\n');
        const char *end = eol ? eol : p + strlen(p);
        if (strncmp(p, prefix, pl) == 0) {
            const char *h = has ? strstr(p, has) : p;
            if (h && h < end) {
                const char *sp = end;
                while (sp > p && sp[-1] != ' ')
                    sp--;
                total += strtod(sp, NULL);
            }
        }
        p = eol ? eol + 1 : NULL;
    }
    return total;
}

static int setup2(void **st)
{
    (void)st;
    sy_metrics_set_max_series(SY_METRICS_MAX_SERIES);
    sy_metrics_set_max_label_values(SY_METRICS_MAX_LABEL_VALUES);
    return sy_metrics_init(2);
}
static int teardown(void **st)
{
    (void)st;
    sy_metrics_shutdown();
    sy_metrics_set_max_series(SY_METRICS_MAX_SERIES);
    sy_metrics_set_max_label_values(SY_METRICS_MAX_LABEL_VALUES);
    return 0;
}

static void check(int shard, const char *name, const char *hook, const char *status, const char *err, double s)
{
    struct sy_metric_guardrail g = {.name = name, .hook = hook, .status = status, .error_type = err, .latency_s = s};
    sy_metrics_guardrail(sy_metrics_shard(shard), &g);
}

/* LiteLLM's LATENCY_BUCKETS as repr(float) prints them, then +Inf. */
static const char *const le[] = {
    "0.005", "0.00625", "0.0125", "0.025", "0.05", "0.1",  "0.5",  "1.0",   "1.5",   "2.0",   "2.5",   "3.0",
    "3.5",   "4.0",     "4.5",    "5.0",   "5.5",  "6.0",  "6.5",  "7.0",   "7.5",   "8.0",   "8.5",   "9.0",
    "9.5",   "10.0",    "15.0",   "20.0",  "25.0", "30.0", "60.0", "120.0", "180.0", "240.0", "300.0", "+Inf",
};
#define NLE (sizeof le / sizeof le[0])

/* One latency series with n observations all in bucket `at`. */
static void hist(struct sy_buf *b, const char *labels, size_t at, unsigned n, const char *sum)
{
    for (size_t i = 0; i < NLE; i++)
        sy_buf_printf(b, "litellm_guardrail_latency_seconds_bucket{%s,le=\"%s\"} %u.0\n", labels, le[i],
                      i >= at ? n : 0);
    sy_buf_printf(b, "litellm_guardrail_latency_seconds_count{%s} %u.0\n", labels, n);
    sy_buf_printf(b, "litellm_guardrail_latency_seconds_sum{%s} %s\n", labels, sum);
}

/* The three families are announced, in LiteLLM's registration order (after
 * the overhead latency, before the deployment state), without series. */
static void test_families_announced(void **st)
{
    (void)st;
    char *t = render();
    char *g = guard_section(t);
    assert_string_equal(g, "# HELP litellm_guardrail_latency_seconds Latency (seconds) for guardrail execution\n"
                           "# TYPE litellm_guardrail_latency_seconds histogram\n"
                           "# HELP litellm_guardrail_errors_total Total number of errors encountered during "
                           "guardrail execution\n"
                           "# TYPE litellm_guardrail_errors_total counter\n"
                           "# HELP litellm_guardrail_requests_total Total number of guardrail invocations\n"
                           "# TYPE litellm_guardrail_requests_total counter\n");
    const char *over = strstr(t, "# HELP litellm_overhead_latency_metric ");
    assert_non_null(over);
    assert_true(over < strstr(t, "# HELP litellm_guardrail_latency_seconds "));
    free(g);
    free(t);
}

/* A few checks on two shards: the exposition text, exactly. */
static void test_exposition(void **st)
{
    (void)st;
    check(0, "content-filter", "pre_call", "success", "", 0.0009765625);
    check(1, "content-filter", "pre_call", "success", NULL, 0.00390625); /* same series, other shard */
    check(0, "content-filter", "pre_call", "blocked", NULL, 0.25);
    check(1, "lakera", "during_call", "error", "timeout", 2.25);
    check(1, "lakera", "post_call", "error", NULL, 0.0625);    /* an error without a type: no errors_total */
    check(0, "pii\"mask\\", "post_call", "masked", NULL, 0.5); /* escaped; 0.5 is in le="0.5" */
    char *t = render();
    char *g = guard_section(t);
    struct sy_buf want;
    sy_buf_init(&want, 1u << 20);
    sy_buf_puts(&want, "# HELP litellm_guardrail_latency_seconds Latency (seconds) for guardrail execution\n"
                       "# TYPE litellm_guardrail_latency_seconds histogram\n");
    /* series sorted by their label text */
    hist(&want, "guardrail_name=\"content-filter\",status=\"blocked\",error_type=\"none\",hook_type=\"pre_call\"", 6, 1,
         "0.25");
    hist(&want, "guardrail_name=\"content-filter\",status=\"success\",error_type=\"none\",hook_type=\"pre_call\"", 0, 2,
         "0.0048828125");
    hist(&want, "guardrail_name=\"lakera\",status=\"error\",error_type=\"none\",hook_type=\"post_call\"", 5, 1,
         "0.0625");
    hist(&want, "guardrail_name=\"lakera\",status=\"error\",error_type=\"timeout\",hook_type=\"during_call\"", 10, 1,
         "2.25");
    hist(&want, "guardrail_name=\"pii\\\"mask\\\\\",status=\"masked\",error_type=\"none\",hook_type=\"post_call\"", 6,
         1, "0.5");
    sy_buf_puts(&want, "# HELP litellm_guardrail_errors_total Total number of errors encountered during guardrail "
                       "execution\n"
                       "# TYPE litellm_guardrail_errors_total counter\n"
                       "litellm_guardrail_errors_total{guardrail_name=\"lakera\",error_type=\"timeout\","
                       "hook_type=\"during_call\"} 1.0\n"
                       "# HELP litellm_guardrail_requests_total Total number of guardrail invocations\n"
                       "# TYPE litellm_guardrail_requests_total counter\n"
                       "litellm_guardrail_requests_total{guardrail_name=\"content-filter\",status=\"blocked\","
                       "hook_type=\"pre_call\"} 1.0\n"
                       "litellm_guardrail_requests_total{guardrail_name=\"content-filter\",status=\"success\","
                       "hook_type=\"pre_call\"} 2.0\n"
                       "litellm_guardrail_requests_total{guardrail_name=\"lakera\",status=\"error\","
                       "hook_type=\"during_call\"} 1.0\n"
                       "litellm_guardrail_requests_total{guardrail_name=\"lakera\",status=\"error\","
                       "hook_type=\"post_call\"} 1.0\n"
                       "litellm_guardrail_requests_total{guardrail_name=\"pii\\\"mask\\\\\",status=\"masked\","
                       "hook_type=\"post_call\"} 1.0\n");
    assert_false(sy_buf_failed(&want));
    assert_string_equal(g, want.p);
    /* the guardrail series touch no other family */
    assert_null(strstr(t, "litellm_deployment_total_requests_total{"));
    assert_null(strstr(t, "litellm_proxy_total_requests_metric_total{"));
    sy_buf_free(&want);
    free(g);
    free(t);
}

/* Errors of several types and hooks each count once in errors_total; a
 * success that names an error type is labelled with it but is no error. */
static void test_errors(void **st)
{
    (void)st;
    for (int i = 0; i < 3; i++)
        check(i % 2, "aporia", "pre_call", "error", "http_500", 0.01);
    check(0, "aporia", "post_call", "error", "http_500", 0.01);
    check(0, "aporia", "pre_call", "error", "bad_response", 0.01);
    check(1, "aporia", "pre_call", "success", "odd", 0.01);
    char *t = render();
    expect(t, "litellm_guardrail_errors_total{guardrail_name=\"aporia\",error_type=\"http_500\","
              "hook_type=\"pre_call\"} 3.0\n");
    expect(t, "litellm_guardrail_errors_total{guardrail_name=\"aporia\",error_type=\"http_500\","
              "hook_type=\"post_call\"} 1.0\n");
    expect(t, "litellm_guardrail_errors_total{guardrail_name=\"aporia\",error_type=\"bad_response\","
              "hook_type=\"pre_call\"} 1.0\n");
    assert_true(sum_samples(t, "litellm_guardrail_errors_total{", NULL) == 5);
    expect(t, "litellm_guardrail_requests_total{guardrail_name=\"aporia\",status=\"error\","
              "hook_type=\"pre_call\"} 4.0\n");
    expect(t, "litellm_guardrail_latency_seconds_count{guardrail_name=\"aporia\",status=\"success\","
              "error_type=\"odd\",hook_type=\"pre_call\"} 1.0\n");
    assert_true(sum_samples(t, "litellm_guardrail_requests_total{", NULL) == 6);
    assert_true(sum_samples(t, "litellm_guardrail_latency_seconds_count{", NULL) == 6);
    free(t);
}

/* Negative and NaN latencies are observed as 0, huge ones in +Inf; NULL
 * strings print None; NULL shards and events are ignored. */
static void test_values(void **st)
{
    (void)st;
    check(0, "g", "pre_call", "success", NULL, -1.0);
    check(0, "g", "pre_call", "success", NULL, NAN);
    check(0, "g", "pre_call", "success", NULL, 1e9);
    check(0, NULL, NULL, NULL, NULL, 0.001);
    sy_metrics_guardrail(NULL, &(struct sy_metric_guardrail){.name = "x", .latency_s = 1});
    sy_metrics_guardrail(sy_metrics_shard(0), NULL);
    char *t = render();
    const char *lab = "guardrail_name=\"g\",status=\"success\",error_type=\"none\",hook_type=\"pre_call\"";
    char line[512];
    snprintf(line, sizeof line, "litellm_guardrail_latency_seconds_bucket{%s,le=\"0.005\"} 2.0\n", lab);
    expect(t, line);
    snprintf(line, sizeof line, "litellm_guardrail_latency_seconds_bucket{%s,le=\"300.0\"} 2.0\n", lab);
    expect(t, line);
    snprintf(line, sizeof line, "litellm_guardrail_latency_seconds_bucket{%s,le=\"+Inf\"} 3.0\n", lab);
    expect(t, line);
    snprintf(line, sizeof line, "litellm_guardrail_latency_seconds_sum{%s} 1000000000.0\n", lab);
    expect(t, line);
    expect(t, "litellm_guardrail_requests_total{guardrail_name=\"None\",status=\"None\",hook_type=\"None\"} 1.0\n");
    assert_null(strstr(t, "guardrail_name=\"x\""));
    assert_true(sum_samples(t, "litellm_guardrail_requests_total{", NULL) == 4);
    free(t);
}

/* guardrail_name and error_type have value caps of their own: past them new
 * values count as "__overflow__", the other labels kept. */
static void test_label_value_caps(void **st)
{
    (void)st;
    sy_metrics_shutdown();
    sy_metrics_set_max_label_values(3);
    assert_int_equal(sy_metrics_init(2), 0);
    char name[32], err[32];
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof name, "g-%d", i);
        check(i % 2, name, "pre_call", "success", NULL, 0.01);
    }
    for (int i = 0; i < 10; i++) {
        snprintf(err, sizeof err, "e-%d", i);
        check(i % 2, "g-0", "post_call", "error", err, 0.01);
    }
    char *t = render();
    expect(t, "litellm_guardrail_requests_total{guardrail_name=\"g-0\",status=\"success\",hook_type=\"pre_call\"} "
              "1.0\n");
    expect(t, "litellm_guardrail_requests_total{guardrail_name=\"g-2\",status=\"success\",hook_type=\"pre_call\"} "
              "1.0\n");
    assert_null(strstr(t, "guardrail_name=\"g-3\""));
    expect(t, "litellm_guardrail_requests_total{guardrail_name=\"__overflow__\",status=\"success\","
              "hook_type=\"pre_call\"} 7.0\n");
    expect(t, "litellm_guardrail_errors_total{guardrail_name=\"g-0\",error_type=\"e-2\",hook_type=\"post_call\"} "
              "1.0\n");
    assert_null(strstr(t, "error_type=\"e-3\""));
    expect(t, "litellm_guardrail_errors_total{guardrail_name=\"g-0\",error_type=\"__overflow__\","
              "hook_type=\"post_call\"} 7.0\n");
    assert_true(sum_samples(t, "litellm_guardrail_errors_total{", NULL) == 10);
    assert_true(sy_metrics_overflowed() == 14);
    free(t);
}

/* The series bound is shared with the other families: past it a check counts
 * under all-"__overflow__" labels, an empty error_type kept empty (so it is
 * no error), and nothing is lost. */
static void test_series_cap(void **st)
{
    (void)st;
    sy_metrics_shutdown();
    sy_metrics_set_max_series(2);
    assert_int_equal(sy_metrics_init(2), 0);
    char name[32];
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "g-%d", i);
        check(0, name, "pre_call", "success", NULL, 0.01);
        check(0, name, "post_call", "error", "timeout", 0.01);
    }
    assert_true(sy_metrics_series() <= 2 + 2);
    char *t = render();
    assert_true(sum_samples(t, "litellm_guardrail_requests_total{", NULL) == 12);
    assert_true(sum_samples(t, "litellm_guardrail_errors_total{", NULL) == 6);
    assert_true(sum_samples(t, "litellm_guardrail_latency_seconds_count{", NULL) == 12);
    expect(t, "litellm_guardrail_requests_total{guardrail_name=\"__overflow__\",status=\"__overflow__\","
              "hook_type=\"__overflow__\"} ");
    expect(t, "litellm_guardrail_latency_seconds_count{guardrail_name=\"__overflow__\",status=\"__overflow__\","
              "error_type=\"none\",hook_type=\"__overflow__\"} ");
    expect(t, "litellm_guardrail_errors_total{guardrail_name=\"__overflow__\",error_type=\"__overflow__\","
              "hook_type=\"__overflow__\"} ");
    free(t);
}

/* Writers on both shards while a scraper renders: every check is counted. */
#define NWRITERS 2
#define NCHECKS  3000
static void *writer(void *arg)
{
    int shard = (int)(intptr_t)arg;
    static const char *const names[] = {"a", "b", "c"};
    static const char *const status[] = {"success", "blocked", "masked", "error"};
    for (int i = 0; i < NCHECKS; i++)
        check(shard, names[i % 3], i % 2 ? "pre_call" : "post_call", status[i % 4], i % 4 == 3 ? "timeout" : NULL,
              (double)(i % 7) * 0.01);
    return NULL;
}
static void *scraper(void *arg)
{
    int *stop = arg;
    while (!__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
        struct sy_buf b;
        sy_buf_init(&b, 64u << 20);
        if (sy_metrics_render(&b) != 0)
            abort();
        sy_buf_free(&b);
    }
    return NULL;
}
static void test_concurrent(void **st)
{
    (void)st;
    pthread_t w[NWRITERS], r;
    int stop = 0;
    assert_int_equal(pthread_create(&r, NULL, scraper, &stop), 0);
    for (int i = 0; i < NWRITERS; i++)
        assert_int_equal(pthread_create(&w[i], NULL, writer, (void *)(intptr_t)i), 0);
    for (int i = 0; i < NWRITERS; i++)
        pthread_join(w[i], NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(r, NULL);
    char *t = render();
    assert_true(sum_samples(t, "litellm_guardrail_requests_total{", NULL) == (double)NWRITERS * NCHECKS);
    assert_true(sum_samples(t, "litellm_guardrail_latency_seconds_count{", NULL) == (double)NWRITERS * NCHECKS);
    assert_true(sum_samples(t, "litellm_guardrail_errors_total{", NULL) == (double)NWRITERS * NCHECKS / 4);
    assert_true(sum_samples(t, "litellm_guardrail_requests_total{", "status=\"blocked\"") ==
                (double)NWRITERS * NCHECKS / 4);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_families_announced, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_exposition, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_values, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_label_value_caps, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_series_cap, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent, setup2, teardown),
    };
    return cmocka_run_group_tests_name("metrics_guardrail", tests, NULL, NULL);
}
