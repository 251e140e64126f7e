/* test_render.c - /metrics text: names, labels, escaping, buckets, sums, overflow bound,
 * the global series cap and the bucket search. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "metrics/metrics.h"
#include "metrics/shard.h"

static struct sy_metric_req ok_req(const char *model)
{
    return (struct sy_metric_req){
        .route = "/v1/chat/completions",
        .requested_model = model,
        .model = "gpt-4o-mini",
        .model_id = "dep-1",
        .api_provider = "openai",
        .api_base = "http://127.0.0.1:9000/v1",
        .hashed_api_key = "abc123",
        .status = 200,
        .llm_called = 1,
        .total_s = 0.02,
        .llm_s = 0.015,
        .ttft_s = -1,
        .overhead_s = 0.005,
        .prompt_tokens = 10,
        .completion_tokens = 5,
        .spend = 0.1,
    };
}

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
        fprintf(stderr, "missing line: %s\n", line);
        fail();
    }
}

static int setup2(void **st)
{
    (void)st;
    sy_metrics_set_max_series(SY_METRICS_MAX_SERIES);
    return sy_metrics_init(2);
}
static int teardown(void **st)
{
    (void)st;
    sy_metrics_shutdown();
    return 0;
}

static void test_counters_summed_across_shards(void **st)
{
    (void)st;
    struct sy_metric_req r = ok_req("gpt-4o");
    sy_metrics_record(sy_metrics_shard(0), &r);
    sy_metrics_record(sy_metrics_shard(1), &r);
    r.spend = 0.2;
    sy_metrics_record(sy_metrics_shard(1), &r);
    struct sy_metric_req f = ok_req("gpt-4o");
    f.status = 429;
    f.llm_failed = 1;
    f.exception_class = "RateLimitError";
    f.prompt_tokens = f.completion_tokens = 0;
    f.spend = 0;
    sy_metrics_record(sy_metrics_shard(0), &f);
    sy_metrics_inflight(sy_metrics_shard(0), 1);
    sy_metrics_inflight(sy_metrics_shard(1), 2);
    sy_metrics_inflight(sy_metrics_shard(1), -1);

    char *t = render();
    expect(t, "# HELP litellm_proxy_total_requests_metric_total Total number of requests made to the proxy "
              "server - track number of client side requests\n# TYPE litellm_proxy_total_requests_metric_total "
              "counter\n");
    expect(t, "litellm_proxy_total_requests_metric_total{end_user=\"None\",hashed_api_key=\"abc123\","
              "api_key_alias=\"None\",requested_model=\"gpt-4o\",team=\"None\",team_alias=\"None\",user=\"None\","
              "status_code=\"200\",user_email=\"None\",route=\"/v1/chat/completions\"} 3.0\n");
    expect(t, "litellm_proxy_total_requests_metric_total{end_user=\"None\",hashed_api_key=\"abc123\","
              "api_key_alias=\"None\",requested_model=\"gpt-4o\",team=\"None\",team_alias=\"None\",user=\"None\","
              "status_code=\"429\",user_email=\"None\",route=\"/v1/chat/completions\"} 1.0\n");
    expect(t, "litellm_proxy_failed_requests_metric_total{end_user=\"None\",hashed_api_key=\"abc123\","
              "api_key_alias=\"None\",requested_model=\"gpt-4o\",team=\"None\",team_alias=\"None\",user=\"None\","
              "user_email=\"None\",exception_status=\"429\",exception_class=\"RateLimitError\","
              "route=\"/v1/chat/completions\"} 1.0\n");
    /* LLM calls: 3 ok + 1 failed, same labels (status is not a label here) */
    expect(t, "litellm_requests_metric_total{end_user=\"None\",hashed_api_key=\"abc123\",api_key_alias=\"None\","
              "model=\"gpt-4o-mini\",team=\"None\",team_alias=\"None\",user=\"None\",user_email=\"None\","
              "model_id=\"dep-1\"} 4.0\n");
    expect(t, "litellm_input_tokens_metric_total{end_user=\"None\",hashed_api_key=\"abc123\",api_key_alias=\"None\","
              "model=\"gpt-4o-mini\",team=\"None\",team_alias=\"None\",user=\"None\",user_email=\"None\","
              "requested_model=\"gpt-4o\",model_id=\"dep-1\"} 30.0\n");
    expect(t, "litellm_total_tokens_metric_total{end_user=\"None\",hashed_api_key=\"abc123\",api_key_alias=\"None\","
              "model=\"gpt-4o-mini\",team=\"None\",team_alias=\"None\",user=\"None\",user_email=\"None\","
              "requested_model=\"gpt-4o\",model_id=\"dep-1\"} 45.0\n");
    /* 0.1 + 0.1 + 0.2 printed the way Python's repr prints it */
    expect(t, "litellm_spend_metric_total{end_user=\"None\",hashed_api_key=\"abc123\",api_key_alias=\"None\","
              "model=\"gpt-4o-mini\",team=\"None\",team_alias=\"None\",user=\"None\",user_email=\"None\","
              "model_id=\"dep-1\"} 0.4\n");
    /* the litellm_deployment_* counters come from sy_metrics_attempt only
     * (test_deployment.c): a request record adds none */
    expect(t, "# TYPE litellm_deployment_total_requests_total counter\n");
    assert_null(strstr(t, "litellm_deployment_total_requests_total{"));
    assert_null(strstr(t, "litellm_deployment_success_responses_total{"));
    assert_null(strstr(t, "litellm_deployment_failure_responses_total{"));
    expect(t, "litellm_llm_api_failed_requests_metric_total{end_user=\"None\",hashed_api_key=\"abc123\","
              "api_key_alias=\"None\",model=\"gpt-4o-mini\",team=\"None\",team_alias=\"None\",user=\"None\","
              "model_id=\"dep-1\"} 1.0\n");
    expect(t, "# TYPE litellm_in_flight_requests gauge\nlitellm_in_flight_requests 2.0\n");
    /* no TTFT samples for non-streams, but the family is announced */
    expect(t, "# TYPE litellm_llm_api_time_to_first_token_metric histogram\n");
    assert_null(strstr(t, "litellm_llm_api_time_to_first_token_metric_count"));

    /* rendering is deterministic */
    char *t2 = render();
    assert_string_equal(t, t2);
    free(t);
    free(t2);
}

static void test_label_escaping(void **st)
{
    (void)st;
    struct sy_metric_req r = ok_req("a\"b\\c\nd");
    r.team = "t1";
    sy_metrics_record(sy_metrics_shard(0), &r);
    char *t = render();
    expect(t, "requested_model=\"a\\\"b\\\\c\\nd\",team=\"t1\"");
    free(t);
}

static void test_float_format(void **st)
{
    (void)st;
    struct sy_metric_req r = ok_req("tiny");
    r.spend = 0.00001; /* Python: repr(1e-05) == "1e-05" */
    sy_metrics_record(sy_metrics_shard(0), &r);
    r = ok_req("big");
    r.model = "big"; /* spend's labels have the upstream model, not the group */
    r.spend = 1e16;
    sy_metrics_record(sy_metrics_shard(0), &r);
    char *t = render();
    expect(t, "model_id=\"dep-1\"} 1e-05\n");
    expect(t, "model=\"big\",team=\"None\",team_alias=\"None\",user=\"None\",user_email=\"None\","
              "model_id=\"dep-1\"} 1e+16\n");
    free(t);
}

static void test_long_label_cut(void **st)
{
    (void)st;
    char model[1000];
    memset(model, 'x', sizeof model - 1);
    model[sizeof model - 1] = 0;
    /* a 2-byte UTF-8 character straddling the cut must not be split */
    model[SY_METRICS_LABEL_MAX - 1] = (char)0xC3;
    model[SY_METRICS_LABEL_MAX] = (char)0xA9;
    struct sy_metric_req r = ok_req(model);
    sy_metrics_record(sy_metrics_shard(0), &r);
    char *t = render();
    char want[SY_METRICS_LABEL_MAX + 64];
    snprintf(want, sizeof want, "requested_model=\"%.*s\",", SY_METRICS_LABEL_MAX - 1, model);
    expect(t, want);
    free(t);
}

static void test_histogram_buckets(void **st)
{
    (void)st;
    assert_int_equal(sy__bucket_of(0), 0);
    assert_int_equal(sy__bucket_of(0.005), 0);
    assert_int_equal(sy__bucket_of(0.0050001), 1);
    assert_int_equal(sy__bucket_of(0.00625), 1);
    assert_int_equal(sy__bucket_of(300), SY__NBUCKETS - 1);
    assert_int_equal(sy__bucket_of(300.5), SY__NBUCKETS);

    struct sy_metric_req r = ok_req("h");
    r.total_s = 0.005; /* exactly on a bound: counted in le="0.005" */
    sy_metrics_record(sy_metrics_shard(0), &r);
    r.total_s = 0.006;
    sy_metrics_record(sy_metrics_shard(1), &r);
    r.total_s = 400;
    r.ttft_s = 0.7;
    sy_metrics_record(sy_metrics_shard(1), &r);
    char *t = render();
    const char *lab = "litellm_request_total_latency_metric_bucket{end_user=\"None\",hashed_api_key=\"abc123\","
                      "api_key_alias=\"None\",requested_model=\"h\",team=\"None\",team_alias=\"None\","
                      "user=\"None\",model=\"gpt-4o-mini\",model_id=\"dep-1\",";
    char want[1024];
    snprintf(want, sizeof want, "%sle=\"0.005\"} 1.0\n%sle=\"0.00625\"} 2.0\n%sle=\"0.0125\"} 2.0\n", lab, lab, lab);
    expect(t, want);
    snprintf(want, sizeof want, "%sle=\"1.0\"} 2.0\n", lab);
    expect(t, want);
    snprintf(want, sizeof want, "%sle=\"300.0\"} 2.0\n%sle=\"+Inf\"} 3.0\n", lab, lab);
    expect(t, want);
    expect(t, "litellm_request_total_latency_metric_count{end_user=\"None\",hashed_api_key=\"abc123\","
              "api_key_alias=\"None\",requested_model=\"h\",team=\"None\",team_alias=\"None\",user=\"None\","
              "model=\"gpt-4o-mini\",model_id=\"dep-1\"} 3.0\n"
              "litellm_request_total_latency_metric_sum{end_user=\"None\",hashed_api_key=\"abc123\","
              "api_key_alias=\"None\",requested_model=\"h\",team=\"None\",team_alias=\"None\",user=\"None\","
              "model=\"gpt-4o-mini\",model_id=\"dep-1\"} 400.01099999999997\n");
    expect(t, "litellm_llm_api_time_to_first_token_metric_count{model=\"gpt-4o-mini\",hashed_api_key=\"abc123\","
              "api_key_alias=\"None\",team=\"None\",team_alias=\"None\",requested_model=\"h\",end_user=\"None\","
              "user=\"None\",model_id=\"dep-1\"} 1.0\n");
    expect(t, "litellm_overhead_latency_metric_count{model_group=\"h\",api_provider=\"openai\","
              "api_base=\"http://127.0.0.1:9000/v1\",litellm_model_name=\"gpt-4o-mini\",hashed_api_key=\"abc123\","
              "api_key_alias=\"None\",model_id=\"dep-1\"} 3.0\n");
    free(t);
}

static void test_overflow_bound(void **st)
{
    (void)st;
    sy_metrics_shutdown();
    sy_metrics_set_max_series(5);
    assert_int_equal(sy_metrics_init(1), 0);
    char name[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "random-%d", i);
        struct sy_metric_req r = ok_req(name);
        r.status = i % 2 ? 200 : 400;
        r.llm_called = r.status == 200;
        sy_metrics_record(sy_metrics_shard(0), &r);
    }
    assert_int_equal(sy_metrics_overflowed(), 995);
    /* 5 real series plus one overflow series per status */
    assert_true(sy_metrics_shard(0)->n <= 5 + 2);
    char *t = render();
    expect(t, "litellm_proxy_total_requests_metric_total{end_user=\"__overflow__\",hashed_api_key=\"__overflow__\","
              "api_key_alias=\"__overflow__\",requested_model=\"__overflow__\",team=\"__overflow__\","
              "team_alias=\"__overflow__\",user=\"__overflow__\",status_code=\"200\",user_email=\"__overflow__\","
              "route=\"__overflow__\"} 498.0\n");
    expect(t, "status_code=\"400\",user_email=\"__overflow__\",route=\"__overflow__\"} 497.0\n");
    free(t);
    sy_metrics_set_max_series(SY_METRICS_MAX_SERIES);
}

/* Client-chosen label values are capped per label across shards: the first
 * values keep their series, later new ones share "__overflow__" while the
 * other labels keep their values. */
static void test_label_value_cap(void **st)
{
    (void)st;
    sy_metrics_shutdown();
    sy_metrics_set_max_label_values(10);
    assert_int_equal(sy_metrics_init(2), 0);
    char name[32];
    for (int i = 0; i < 3000; i++) {
        snprintf(name, sizeof name, "end-user-%d", i);
        struct sy_metric_req r = ok_req("h");
        r.end_user = name;
        sy_metrics_record(sy_metrics_shard(i % 2), &r);
    }
    /* 10 admitted values (seen by both shards) + one overflow series each */
    assert_true(sy_metrics_shard(0)->n + sy_metrics_shard(1)->n <= 2 * (10 + 1));
    char *t = render();
    expect(t, "end_user=\"end-user-0\",");
    expect(t, "end_user=\"end-user-9\",");
    assert_null(strstr(t, "end_user=\"end-user-10\","));
    expect(t, "litellm_proxy_total_requests_metric_total{end_user=\"__overflow__\",hashed_api_key=\"abc123\","
              "api_key_alias=\"None\",requested_model=\"h\",team=\"None\",team_alias=\"None\",user=\"None\","
              "status_code=\"200\",user_email=\"None\",route=\"/v1/chat/completions\"} 2990.0\n");
    assert_true(strlen(t) < 400000);
    free(t);
    sy_metrics_shutdown();
    sy_metrics_set_max_label_values(SY_METRICS_MAX_LABEL_VALUES);
    assert_int_equal(sy_metrics_init(2), 0);
}

/* The series bound is shared by all shards: two shards together hold at most
 * max_series tuples, plus their all-"__overflow__" entries. */
static void test_series_cap_is_global(void **st)
{
    (void)st;
    sy_metrics_shutdown();
    sy_metrics_set_max_series(6);
    assert_int_equal(sy_metrics_init(2), 0);
    char name[32];
    for (int i = 0; i < 400; i++) {
        snprintf(name, sizeof name, "u-%d", i % 9);
        struct sy_metric_req r = ok_req("h");
        r.user = name;
        sy_metrics_record(sy_metrics_shard(i % 2), &r);
    }
    /* 6 series + one overflow entry per shard */
    assert_true(sy_metrics_series() <= 6 + 2);
    char *t = render();
    expect(t, "user=\"__overflow__\",status_code=\"200\"");
    free(t);
    sy_metrics_shutdown();
    sy_metrics_set_max_series(SY_METRICS_MAX_SERIES);
    assert_int_equal(sy_metrics_init(2), 0);
}

/* The bucket search agrees with a plain "first bound >= v" scan, exactly at,
 * just below and just above every bound. */
static void test_bucket_search(void **st)
{
    (void)st;
    for (int b = 0; b < SY__NBUCKETS; b++) {
        double bound = sy__latency_buckets[b];
        double vs[] = {bound, nextafter(bound, 0), nextafter(bound, INFINITY), bound * 0.999, bound * 1.001};
        for (size_t j = 0; j < sizeof vs / sizeof vs[0]; j++) {
            int want = 0;
            while (want < SY__NBUCKETS && !(vs[j] <= sy__latency_buckets[want]))
                want++;
            assert_int_equal(sy__bucket_of(vs[j]), want);
        }
    }
    for (double v = 0; v < 400; v += 0.0137) {
        int want = 0;
        while (want < SY__NBUCKETS && !(v <= sy__latency_buckets[want]))
            want++;
        assert_int_equal(sy__bucket_of(v), want);
    }
    assert_int_equal(sy__bucket_of(0), 0);
    assert_int_equal(sy__bucket_of(-1), 0);
    assert_int_equal(sy__bucket_of(NAN), SY__NBUCKETS);
    assert_int_equal(sy__bucket_of(INFINITY), SY__NBUCKETS);
    assert_int_equal(sy__bucket_of(1e300), SY__NBUCKETS);
}

static void test_empty_render(void **st)
{
    (void)st;
    char *t = render();
    expect(t, "# TYPE litellm_proxy_total_requests_metric_total counter\n");
    expect(t, "# TYPE litellm_overhead_latency_metric histogram\n");
    expect(t, "litellm_in_flight_requests 0.0\n");
    assert_null(strstr(t, "{"));
    free(t);
    /* a tiny cap is refused, not overrun */
    struct sy_buf b;
    sy_buf_init(&b, 100);
    assert_int_not_equal(sy_metrics_render(&b), 0);
    sy_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_counters_summed_across_shards, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_label_escaping, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_float_format, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_long_label_cut, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_histogram_buckets, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_overflow_bound, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_label_value_cap, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_series_cap_is_global, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_bucket_search, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_empty_render, setup2, teardown),
    };
    return cmocka_run_group_tests_name("metrics_render", tests, NULL, NULL);
}
