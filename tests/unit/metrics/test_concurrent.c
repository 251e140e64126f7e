/* test_concurrent.c - writers on several shards while other threads render:
 * no crash, totals never go backwards, and the final sums are exact; the
 * per-label value cap and the series cap hold across racing shards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "metrics/metrics.h"

#define NWRITERS 4
#define NRECORDS 40000
#define NMODELS  50

static int writers_done;

static void *writer(void *arg)
{
    int w = (int)(intptr_t)arg;
    struct sy_metrics_shard *sh = sy_metrics_shard(w);
    char model[32];
    for (int i = 0; i < NRECORDS; i++) {
        snprintf(model, sizeof model, "m%d", (i * 7 + w) % NMODELS);
        int ok = i % 5 != 0;
        struct sy_metric_req r = {
            .route = "/v1/chat/completions",
            .requested_model = model,
            .model = model,
            .model_id = w % 2 ? "d1" : "d2",
            .api_provider = "openai",
            .status = ok ? 200 : 500,
            .llm_called = 1,
            .llm_failed = !ok,
            .total_s = (i % 100) * 0.01,
            .llm_s = (i % 100) * 0.008,
            .ttft_s = i % 2 ? 0.003 : -1,
            .overhead_s = (i % 100) * 0.002,
            .prompt_tokens = 3,
            .completion_tokens = ok ? 2 : 0,
        };
        /* the gateway counts each upstream attempt as well as the request */
        struct sy_metric_attempt a = {
            .requested_model = model,
            .model = model,
            .model_id = r.model_id,
            .api_provider = "openai",
            .ok = ok,
            .status = ok ? 0 : 500,
            .latency_per_output_token_s = ok ? r.llm_s / 2 : -1,
        };
        sy_metrics_inflight(sh, 1);
        sy_metrics_attempt(sh, &a);
        sy_metrics_record(sh, &r);
        sy_metrics_inflight(sh, -1);
    }
    return NULL;
}

/* Sum of the values of every sample line starting with prefix. */
static double sum_samples(const char *text, const char *prefix)
{
    double total = 0;
    size_t pl = strlen(prefix);
    for (const char *p = text; p && *p;) {
        const char *eol = strchr(p, '\n');
        if (strncmp(p, prefix, pl) == 0) {
            const char *sp = eol ? eol : p + strlen(p);
            while (sp > p && sp[-1] != ' ')
                sp--;
            total += strtod(sp, NULL);
        }
        p = eol ? eol + 1 : NULL;
    }
    return total;
}

static void *renderer(void *arg)
{
    int *renders = arg;
    double last = 0;
    struct sy_buf b;
    sy_buf_init(&b, 256u << 20);
    while (!__atomic_load_n(&writers_done, __ATOMIC_ACQUIRE)) {
        sy_buf_reset(&b);
        if (sy_metrics_render(&b) != 0)
            abort();
        double now = sum_samples(b.p, "litellm_proxy_total_requests_metric_total{");
        if (now < last)
            abort(); /* a counter went backwards */
        last = now;
        (*renders)++;
    }
    sy_buf_free(&b);
    return NULL;
}

static void test_concurrent_record_and_render(void **st)
{
    (void)st;
    assert_int_equal(sy_metrics_init(NWRITERS), 0);
    pthread_t w[NWRITERS], r[2];
    int renders[2] = {0, 0};
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&r[i], NULL, renderer, &renders[i]), 0);
    for (int i = 0; i < NWRITERS; i++)
        assert_int_equal(pthread_create(&w[i], NULL, writer, (void *)(intptr_t)i), 0);
    for (int i = 0; i < NWRITERS; i++)
        pthread_join(w[i], NULL);
    __atomic_store_n(&writers_done, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++)
        pthread_join(r[i], NULL);
    assert_true(renders[0] + renders[1] > 0);

    struct sy_buf b;
    sy_buf_init(&b, 256u << 20);
    assert_int_equal(sy_metrics_render(&b), 0);
    const double all = (double)NWRITERS * NRECORDS, failed = (double)NWRITERS * (NRECORDS / 5);
    assert_true(sum_samples(b.p, "litellm_proxy_total_requests_metric_total{") == all);
    assert_true(sum_samples(b.p, "litellm_proxy_failed_requests_metric_total{") == failed);
    assert_true(sum_samples(b.p, "litellm_requests_metric_total{") == all);
    assert_true(sum_samples(b.p, "litellm_deployment_total_requests_total{") == all);
    assert_true(sum_samples(b.p, "litellm_deployment_failure_responses_total{") == failed);
    assert_true(sum_samples(b.p, "litellm_deployment_success_responses_total{") == all - failed);
    assert_true(sum_samples(b.p, "litellm_deployment_latency_per_output_token_count{") == all - failed);
    assert_true(sum_samples(b.p, "litellm_input_tokens_metric_total{") == 3 * (all - failed));
    assert_true(sum_samples(b.p, "litellm_output_tokens_metric_total{") == 2 * (all - failed));
    assert_true(sum_samples(b.p, "litellm_request_total_latency_metric_count{") == all - failed);
    assert_true(sum_samples(b.p, "litellm_llm_api_time_to_first_token_metric_count{") == (all - failed) / 2);
    assert_true(sum_samples(b.p, "litellm_in_flight_requests ") == 0);
    /* every requested_model appears once per status in the proxy counter:
     * equal label tuples from different shards were merged */
    size_t lines = 0;
    for (const char *p = b.p; (p = strstr(p, "\nlitellm_proxy_total_requests_metric_total{")); p++)
        lines++;
    static char seen[NMODELS][2];
    size_t want = 0;
    for (int wi = 0; wi < NWRITERS; wi++)
        for (int i = 0; i < NRECORDS; i++) {
            char *c = &seen[(i * 7 + wi) % NMODELS][i % 5 != 0];
            want += !*c;
            *c = 1;
        }
    assert_int_equal(lines, want);
    sy_buf_free(&b);
    sy_metrics_shutdown();
}

/* ---- caps under racing writers ---- */

#define CAP_VALUES  40
#define CAP_SERIES  150
#define CAP_RECORDS 6000
static int cap_go;

/* Every writer sends values no other writer sends, so all race to admit. */
static void *cap_writer(void *arg)
{
    int w = (int)(intptr_t)arg;
    struct sy_metrics_shard *sh = sy_metrics_shard(w);
    while (!__atomic_load_n(&cap_go, __ATOMIC_ACQUIRE))
        ;
    char eu[32], user[32], model[32];
    for (int i = 0; i < CAP_RECORDS; i++) {
        snprintf(eu, sizeof eu, "eu-%d-%d", w, i);
        snprintf(user, sizeof user, "user-%d-%d", w, i % 97);
        snprintf(model, sizeof model, "group-%d", i % 13);
        struct sy_metric_req r = {
            .route = "/v1/chat/completions",
            .requested_model = model,
            .model = "up",
            .status = 200,
            .llm_called = 1,
            .total_s = 0.01,
            .llm_s = 0.008,
            .ttft_s = -1,
            .overhead_s = 0.002,
            .user = user,
            .end_user = eu,
        };
        sy_metrics_record(sh, &r);
    }
    return NULL;
}

/* Distinct values of label `name` in the text (each value counted once). */
static size_t distinct_values(const char *text, const char *name, int *saw_overflow)
{
    char pat[64];
    snprintf(pat, sizeof pat, ",%s=\"", name);
    size_t pl = strlen(pat), n = 0, cap = 0;
    char **vals = NULL;
    *saw_overflow = 0;
    for (const char *p = text; (p = strstr(p, pat)); p++) {
        const char *v = p + pl, *e = strchr(v, '"');
        size_t len = (size_t)(e - v);
        if (len == 12 && memcmp(v, "__overflow__", 12) == 0) {
            *saw_overflow = 1;
            continue;
        }
        size_t j = 0;
        while (j < n && !(strlen(vals[j]) == len && memcmp(vals[j], v, len) == 0))
            j++;
        if (j < n)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            vals = realloc(vals, cap * sizeof *vals);
            assert_non_null(vals);
        }
        vals[n] = strndup(v, len);
        n++;
    }
    for (size_t j = 0; j < n; j++)
        free(vals[j]);
    free(vals);
    return n;
}

static void test_caps_hold_across_racing_shards(void **st)
{
    (void)st;
    sy_metrics_set_max_label_values(CAP_VALUES);
    sy_metrics_set_max_series(CAP_SERIES);
    assert_int_equal(sy_metrics_init(NWRITERS), 0);
    pthread_t w[NWRITERS];
    __atomic_store_n(&cap_go, 0, __ATOMIC_RELEASE);
    for (int i = 0; i < NWRITERS; i++)
        assert_int_equal(pthread_create(&w[i], NULL, cap_writer, (void *)(intptr_t)i), 0);
    __atomic_store_n(&cap_go, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < NWRITERS; i++)
        pthread_join(w[i], NULL);

    /* series: at most CAP_SERIES, plus all-overflow entries (one status here) per shard */
    assert_true(sy_metrics_series() <= CAP_SERIES + NWRITERS);
    struct sy_buf b;
    sy_buf_init(&b, 256u << 20);
    assert_int_equal(sy_metrics_render(&b), 0);
    int ov;
    /* NWRITERS * CAP_RECORDS distinct end users, at most CAP_VALUES admitted */
    size_t eu = distinct_values(b.p, "end_user", &ov);
    assert_true(eu <= CAP_VALUES);
    assert_true(eu > 0);
    assert_true(ov);
    size_t users = distinct_values(b.p, "user", &ov);
    assert_true(users <= CAP_VALUES);
    assert_true(ov);
    /* nothing is lost: every record is counted somewhere */
    assert_true(sum_samples(b.p, "litellm_proxy_total_requests_metric_total{") == (double)NWRITERS * CAP_RECORDS);
    assert_true(sum_samples(b.p, "litellm_request_total_latency_metric_count{") == (double)NWRITERS * CAP_RECORDS);
    assert_true(sy_metrics_overflowed() > 0);
    sy_buf_free(&b);
    sy_metrics_shutdown();
    sy_metrics_set_max_label_values(SY_METRICS_MAX_LABEL_VALUES);
    sy_metrics_set_max_series(SY_METRICS_MAX_SERIES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_record_and_render),
        cmocka_unit_test(test_caps_hold_across_racing_shards),
    };
    return cmocka_run_group_tests_name("metrics_concurrent", tests, NULL, NULL);
}
