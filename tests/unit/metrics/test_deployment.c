/* test_deployment.c - router / deployment metrics: attempts, cooldowns,
 * fallbacks and deployment state rendered exactly as LiteLLM's Python client
 * prints them (names, label order, values, buckets), summed across shards;
 * the per-label value caps and the series cap; writers on several shards,
 * state setters on other threads and scrapers running at once. */
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

#define BASE "http://127.0.0.1:9000/v1"

static struct sy_metric_attempt attempt(const char *group, int ok, double lat)
{
    return (struct sy_metric_attempt){
        .requested_model = group,
        .model = "openai/gpt-4o-mini",
        .model_id = "dep-1",
        .api_base = BASE,
        .api_provider = "openai",
        .hashed_api_key = "abc123",
        .api_key_alias = "ci",
        .team = "t1",
        .ok = ok,
        .latency_per_output_token_s = lat,
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
        fprintf(stderr, "missing: %s\n", line);
        fail();
    }
}

/* Lines of text starting with prefix. */
static size_t count_lines(const char *text, const char *prefix)
{
    size_t n = 0, pl = strlen(prefix);
    for (const char *p = text; p && *p;) {
        if (strncmp(p, prefix, pl) == 0)
            n++;
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return n;
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
            int ok = 1;
            if (has) {
                const char *h = strstr(p, has);
                ok = h && h < end;
            }
            if (ok) {
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

/* Every family is announced, in LiteLLM's registration order, with its help
 * text, even without series; counters carry "_total" as the Python client
 * prints them. */
static void test_families_announced(void **st)
{
    (void)st;
    char *t = render();
    static const char *const heads[] = {
        "# HELP litellm_overhead_latency_metric ",
        "# HELP litellm_deployment_state LLM Deployment Analytics - The state of the deployment: 0 = healthy, "
        "1 = partial outage, 2 = complete outage\n# TYPE litellm_deployment_state gauge\n",
        "# HELP litellm_deployment_cooled_down_total LLM Deployment Analytics - Number of times a deployment has been "
        "cooled down by LiteLLM load balancing logic. exception_status is the status of the exception that caused "
        "the deployment to be cooled down\n# TYPE litellm_deployment_cooled_down_total counter\n",
        "# HELP litellm_deployment_success_responses_total LLM Deployment Analytics - Total number of successful LLM "
        "API calls via litellm\n# TYPE litellm_deployment_success_responses_total counter\n",
        "# HELP litellm_deployment_failure_responses_total LLM Deployment Analytics - Total number of failed LLM API "
        "calls for a specific LLM deploymeny. exception_status is the status of the exception from the llm api\n"
        "# TYPE litellm_deployment_failure_responses_total counter\n",
        "# HELP litellm_deployment_total_requests_total LLM Deployment Analytics - Total number of LLM API calls via "
        "litellm - success + failure\n# TYPE litellm_deployment_total_requests_total counter\n",
        "# HELP litellm_deployment_latency_per_output_token LLM Deployment Analytics - Latency per output token\n"
        "# TYPE litellm_deployment_latency_per_output_token histogram\n",
        "# HELP litellm_deployment_successful_fallbacks_total LLM Deployment Analytics - Number of successful fallback "
        "requests from primary model -> fallback model\n"
        "# TYPE litellm_deployment_successful_fallbacks_total counter\n",
        "# HELP litellm_deployment_failed_fallbacks_total LLM Deployment Analytics - Number of failed fallback "
        "requests from primary model -> fallback model\n# TYPE litellm_deployment_failed_fallbacks_total counter\n",
        "# HELP litellm_llm_api_failed_requests_metric_total ",
    };
    const char *prev = t;
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
        const char *at = strstr(t, heads[i]);
        if (!at || at < prev) {
            fprintf(stderr, "missing or out of order: %s\n", heads[i]);
            fail();
        }
        prev = at;
    }
    assert_null(strstr(t, "{"));
    free(t);
}

static void test_attempts_summed_across_shards(void **st)
{
    (void)st;
    struct sy_metrics_shard *s0 = sy_metrics_shard(0), *s1 = sy_metrics_shard(1);
    struct sy_metric_attempt a = attempt("gpt-4o", 1, 0.02);
    sy_metrics_attempt(s0, &a);
    a.latency_per_output_token_s = 0.004;
    sy_metrics_attempt(s1, &a);
    a.latency_per_output_token_s = -1; /* no output tokens: counted, not observed */
    sy_metrics_attempt(s0, &a);
    a = attempt("gpt-4o-fb", 1, 0.3); /* same deployment, another group */
    sy_metrics_attempt(s1, &a);
    /* failures: class derived from the status, or the caller's; latency ignored */
    a = attempt("gpt-4o", 0, 0.5);
    a.status = 429;
    sy_metrics_attempt(s0, &a);
    sy_metrics_attempt(s1, &a);
    a.status = 503;
    a.exception_class = "Openai.ServiceUnavailableError";
    sy_metrics_attempt(s1, &a);
    a.status = 0; /* no status: "None" */
    a.exception_class = NULL;
    sy_metrics_attempt(s0, &a);

    char *t = render();
#define DLAB(group)                                                                                               \
    "requested_model=\"" group "\",litellm_model_name=\"openai/gpt-4o-mini\",model_id=\"dep-1\",api_base=\"" BASE \
    "\",api_provider=\"openai\""
#define KLAB "hashed_api_key=\"abc123\",api_key_alias=\"ci\",team=\"t1\",team_alias=\"None\""
    expect(t, "litellm_deployment_success_responses_total{" DLAB(
                  "gpt-4o") "," KLAB "} 3.0\n"
                            "litellm_deployment_success_responses_total{" DLAB("gpt-4o-fb") "," KLAB "} 1.0\n");
    expect(t, "litellm_deployment_total_requests_total{" DLAB("gpt-4o") "," KLAB "} 7.0\n"
                                                                        "litellm_deployment_total_requests_total{" DLAB(
                                                                            "gpt-4o-fb") "," KLAB "} 1.0\n");
    expect(t, "litellm_deployment_failure_responses_total{" DLAB("gpt-4o") ",exception_status=\"429\","
                                                                           "exception_class=\"RateLimitError\"," KLAB
                                                                           "} 2.0\n");
    expect(t, "litellm_deployment_failure_responses_total{" DLAB(
                  "gpt-4o") ",exception_status=\"503\","
                            "exception_class=\"Openai.ServiceUnavailableError\"," KLAB "} 1.0\n");
    expect(t,
           "litellm_deployment_failure_responses_total{" DLAB("gpt-4o") ",exception_status=\"None\","
                                                                        "exception_class=\"APIError\"," KLAB "} 1.0\n");
    assert_int_equal(count_lines(t, "litellm_deployment_failure_responses_total{"), 3);
    assert_null(strstr(t, "gpt-4o-fb\",litellm_model_name=\"openai/gpt-4o-mini\",model_id=\"dep-1\",api_base=\"" BASE
                          "\",api_provider=\"openai\",exception_status"));

    /* the histogram has no requested_model: both groups' observations merge;
     * prometheus_client's default buckets, cumulative, then _count, _sum */
#define HLAB \
    "litellm_model_name=\"openai/gpt-4o-mini\",model_id=\"dep-1\",api_base=\"" BASE "\",api_provider=\"openai\"," KLAB
#define HB(le, v) "litellm_deployment_latency_per_output_token_bucket{" HLAB ",le=\"" le "\"} " v "\n"
    expect(t, HB("0.005", "1.0") HB("0.01", "1.0") HB("0.025", "2.0") HB("0.05", "2.0") HB("0.075", "2.0")
                  HB("0.1", "2.0") HB("0.25", "2.0") HB("0.5", "3.0") HB("0.75", "3.0") HB("1.0", "3.0")
                      HB("2.5", "3.0") HB("5.0", "3.0") HB("7.5", "3.0") HB("10.0", "3.0")
                          HB("+Inf", "3.0") "litellm_deployment_latency_per_output_token_count{" HLAB "} 3.0\n"
                                            "litellm_deployment_latency_per_output_token_sum{" HLAB "} 0.324\n");
    assert_int_equal(count_lines(t, "litellm_deployment_latency_per_output_token_bucket{"), 15);

    /* nothing leaked into the request families */
    assert_null(strstr(t, "litellm_proxy_total_requests_metric_total{"));
    assert_null(strstr(t, "litellm_requests_metric_total{"));
    char *t2 = render();
    assert_string_equal(t, t2); /* deterministic */
    free(t);
    free(t2);
}

static void test_cooldowns(void **st)
{
    (void)st;
    sy_metrics_cooldown(sy_metrics_shard(0), "openai/gpt-4o-mini", "dep-1", BASE, "openai", 429);
    sy_metrics_cooldown(sy_metrics_shard(1), "openai/gpt-4o-mini", "dep-1", BASE, "openai", 429);
    sy_metrics_cooldown(sy_metrics_shard(1), "openai/gpt-4o-mini", "dep-1", BASE, "openai", 500);
    sy_metrics_cooldown(sy_metrics_shard(0), "azure/gpt-4o", "dep-2", NULL, "azure", 1000);
    char *t = render();
    expect(t, "litellm_deployment_cooled_down_total{litellm_model_name=\"azure/gpt-4o\",model_id=\"dep-2\","
              "api_base=\"None\",api_provider=\"azure\",exception_status=\"None\"} 1.0\n"
              "litellm_deployment_cooled_down_total{litellm_model_name=\"openai/gpt-4o-mini\",model_id=\"dep-1\","
              "api_base=\"" BASE "\",api_provider=\"openai\",exception_status=\"429\"} 2.0\n"
              "litellm_deployment_cooled_down_total{litellm_model_name=\"openai/gpt-4o-mini\",model_id=\"dep-1\","
              "api_base=\"" BASE "\",api_provider=\"openai\",exception_status=\"500\"} 1.0\n");
    assert_null(strstr(t, "litellm_deployment_total_requests_total{"));
    free(t);
}

static void test_fallbacks(void **st)
{
    (void)st;
    struct sy_metric_fallback f = {
        .ok = 1,
        .requested_model = "gpt-4o",
        .fallback_model = "claude",
        .hashed_api_key = "abc123",
        .api_key_alias = "ci",
        .team = "t1",
        .team_alias = "Team \"One\"",
        .status = 429,
    };
    sy_metrics_fallback(sy_metrics_shard(0), &f);
    sy_metrics_fallback(sy_metrics_shard(1), &f);
    f.ok = 0;
    f.fallback_model = "gpt-3.5";
    f.status = 500;
    f.exception_class = "Openai.InternalServerError";
    sy_metrics_fallback(sy_metrics_shard(1), &f);
    sy_metrics_fallback(sy_metrics_shard(1), NULL); /* no-op */
    sy_metrics_fallback(NULL, &f);                  /* no-op */
    char *t = render();
    expect(t, "litellm_deployment_successful_fallbacks_total{requested_model=\"gpt-4o\",fallback_model=\"claude\","
              "hashed_api_key=\"abc123\",api_key_alias=\"ci\",team=\"t1\",team_alias=\"Team \\\"One\\\"\","
              "exception_status=\"429\",exception_class=\"RateLimitError\"} 2.0\n");
    expect(t, "litellm_deployment_failed_fallbacks_total{requested_model=\"gpt-4o\",fallback_model=\"gpt-3.5\","
              "hashed_api_key=\"abc123\",api_key_alias=\"ci\",team=\"t1\",team_alias=\"Team \\\"One\\\"\","
              "exception_status=\"500\",exception_class=\"Openai.InternalServerError\"} 1.0\n");
    assert_int_equal(count_lines(t, "litellm_deployment_successful_fallbacks_total{"), 1);
    assert_int_equal(count_lines(t, "litellm_deployment_failed_fallbacks_total{"), 1);
    free(t);
}

static void test_deployment_state(void **st)
{
    (void)st;
    /* may be set before init; kept until shutdown */
    sy_metrics_shutdown();
    sy_metrics_deployment_state("openai/gpt-4o-mini", "dep-b", BASE, "openai", 1);
    assert_int_equal(sy_metrics_init(2), 0);
    sy_metrics_deployment_state("openai/gpt-4o-mini", "dep-a", BASE, "openai", 0);
    sy_metrics_deployment_state("openai/gpt-4o-mini", "dep-b", BASE, "openai", 2); /* last value wins */
    sy_metrics_deployment_state(NULL, "dep-c", NULL, NULL, 1);
    char *t = render();
    expect(t, "# TYPE litellm_deployment_state gauge\n"
              "litellm_deployment_state{litellm_model_name=\"None\",model_id=\"dep-c\",api_base=\"None\","
              "api_provider=\"None\"} 1.0\n"
              "litellm_deployment_state{litellm_model_name=\"openai/gpt-4o-mini\",model_id=\"dep-a\",api_base=\"" BASE
              "\",api_provider=\"openai\"} 0.0\n"
              "litellm_deployment_state{litellm_model_name=\"openai/gpt-4o-mini\",model_id=\"dep-b\",api_base=\"" BASE
              "\",api_provider=\"openai\"} 2.0\n"
              "# HELP litellm_deployment_cooled_down_total ");
    free(t);
    sy_metrics_shutdown();
    assert_int_equal(sy_metrics_init(2), 0);
    t = render();
    assert_null(strstr(t, "litellm_deployment_state{")); /* shutdown forgot them */
    free(t);

    /* the table is bounded like series: past it a value is dropped and counted */
    sy_metrics_shutdown();
    sy_metrics_set_max_series(3);
    assert_int_equal(sy_metrics_init(1), 0);
    char id[16];
    for (int i = 0; i < 5; i++) {
        snprintf(id, sizeof id, "d%d", i);
        sy_metrics_deployment_state("m", id, "", "openai", 1);
    }
    sy_metrics_deployment_state("m", "d0", "", "openai", 2); /* existing rows still update */
    assert_int_equal(sy_metrics_overflowed(), 2);
    t = render();
    assert_int_equal(count_lines(t, "litellm_deployment_state{"), 3);
    expect(t, "model_id=\"d0\",api_base=\"None\",api_provider=\"openai\"} 2.0\n");
    free(t);
}

/* Client-influenced labels of attempts and fallbacks share the per-label caps
 * (requested_model's with the request path; fallback_model has its own);
 * deployment labels are kept when a client value overflows. */
static void test_label_value_caps(void **st)
{
    (void)st;
    sy_metrics_shutdown();
    sy_metrics_set_max_label_values(3);
    assert_int_equal(sy_metrics_init(2), 0);
    char group[16], fb[16];
    for (int i = 0; i < 10; i++) {
        snprintf(group, sizeof group, "g-%d", i);
        struct sy_metric_attempt a = attempt(group, 1, 0.01);
        sy_metrics_attempt(sy_metrics_shard(i % 2), &a);
    }
    for (int i = 0; i < 10; i++) {
        snprintf(fb, sizeof fb, "fb-%d", i);
        struct sy_metric_fallback f = {
            .ok = 1, .requested_model = "g-0", .fallback_model = fb, .hashed_api_key = "abc123", .status = 429};
        sy_metrics_fallback(sy_metrics_shard(i % 2), &f);
    }
    /* a request record shares requested_model's set: g-0..g-2 are admitted */
    struct sy_metric_req r = {.route = "/v1/chat/completions", .requested_model = "g-9", .status = 200};
    sy_metrics_record(sy_metrics_shard(0), &r);
    char *t = render();
    expect(t, "litellm_deployment_total_requests_total{" DLAB("g-0") "," KLAB "} 1.0\n");
    expect(t, "litellm_deployment_total_requests_total{" DLAB("g-2") "," KLAB "} 1.0\n");
    assert_null(strstr(t, DLAB("g-3")));
    expect(t, "litellm_deployment_total_requests_total{" DLAB("__overflow__") "," KLAB "} 7.0\n");
    expect(t, "litellm_proxy_total_requests_metric_total{end_user=\"None\",hashed_api_key=\"None\","
              "api_key_alias=\"None\",requested_model=\"__overflow__\",");
    /* fallback_model's first 3 values own their series, later ones share
     * "__overflow__" while the other labels keep their values */
    expect(t, "litellm_deployment_successful_fallbacks_total{requested_model=\"g-0\",fallback_model=\"fb-0\","
              "hashed_api_key=\"abc123\",");
    expect(t, "litellm_deployment_successful_fallbacks_total{requested_model=\"g-0\",fallback_model=\"fb-2\","
              "hashed_api_key=\"abc123\",");
    expect(t, "litellm_deployment_successful_fallbacks_total{requested_model=\"g-0\","
              "fallback_model=\"__overflow__\",hashed_api_key=\"abc123\",api_key_alias=\"None\","
              "team=\"None\",team_alias=\"None\",exception_status=\"429\",exception_class=\"RateLimitError\"} 7.0\n");
    assert_int_equal(count_lines(t, "litellm_deployment_successful_fallbacks_total{"), 4);
    assert_true(sy_metrics_overflowed() == 7 + 7 + 1);
    free(t);
}

/* The series bound is shared with the request path; past it an event counts
 * under all-"__overflow__" labels with its kind, outcome and status kept. */
static void test_series_cap(void **st)
{
    (void)st;
    sy_metrics_shutdown();
    sy_metrics_set_max_series(4);
    assert_int_equal(sy_metrics_init(2), 0);
    struct sy_metric_req r = {.route = "/v1/chat/completions", .requested_model = "g", .status = 200};
    sy_metrics_record(sy_metrics_shard(0), &r); /* one of the 4 */
    char id[16];
    for (int i = 0; i < 10; i++) {
        snprintf(id, sizeof id, "dep-%d", i);
        struct sy_metric_attempt a = attempt("gpt-4o", i % 2, 0.01);
        a.model_id = id;
        a.status = 500;
        sy_metrics_attempt(sy_metrics_shard(i % 2), &a);
        sy_metrics_cooldown(sy_metrics_shard(i % 2), "m", id, BASE, "openai", 500);
    }
    assert_true(sy_metrics_series() <= 4 + 2 * 3); /* + per shard: ok, failed/500, cooldown/500 */
    char *t = render();
    const double attempts = sum_samples(t, "litellm_deployment_total_requests_total{", NULL);
    assert_true(attempts == 10);
    assert_true(sum_samples(t, "litellm_deployment_cooled_down_total{", NULL) == 10);
    expect(t, "litellm_deployment_failure_responses_total{requested_model=\"__overflow__\","
              "litellm_model_name=\"__overflow__\",model_id=\"__overflow__\",api_base=\"__overflow__\","
              "api_provider=\"__overflow__\",exception_status=\"500\",exception_class=\"__overflow__\","
              "hashed_api_key=\"__overflow__\",api_key_alias=\"__overflow__\",team=\"__overflow__\","
              "team_alias=\"__overflow__\"} ");
    expect(t, "litellm_deployment_cooled_down_total{litellm_model_name=\"__overflow__\",model_id=\"__overflow__\","
              "api_base=\"__overflow__\",api_provider=\"__overflow__\",exception_status=\"500\"} ");
    /* successes past the cap keep their histogram */
    assert_true(sum_samples(t, "litellm_deployment_latency_per_output_token_count{", NULL) == 5);
    assert_true(sum_samples(t, "litellm_deployment_success_responses_total{", NULL) == 5);
    assert_true(sy_metrics_overflowed() > 0);
    free(t);
}

/* Long values are cut at a UTF-8 boundary, NULL strings print None, and
 * the record path ignores NULL shards and events. */
static void test_values(void **st)
{
    (void)st;
    char model[600];
    memset(model, 'x', sizeof model - 1);
    model[sizeof model - 1] = 0;
    model[SY_METRICS_LABEL_MAX - 1] = (char)0xC3; /* a 2-byte character across the cut */
    model[SY_METRICS_LABEL_MAX] = (char)0xA9;
    struct sy_metric_attempt a = {.model = model, .ok = 1, .latency_per_output_token_s = -1};
    sy_metrics_attempt(sy_metrics_shard(0), &a);
    sy_metrics_attempt(NULL, &a);
    sy_metrics_attempt(sy_metrics_shard(0), NULL);
    sy_metrics_cooldown(NULL, "m", "d", "b", "p", 429);
    char *t = render();
    char want[SY_METRICS_LABEL_MAX + 256];
    snprintf(want, sizeof want,
             "litellm_deployment_success_responses_total{requested_model=\"None\",litellm_model_name=\"%.*s\","
             "model_id=\"None\",api_base=\"None\",api_provider=\"None\",hashed_api_key=\"None\","
             "api_key_alias=\"None\",team=\"None\",team_alias=\"None\"} 1.0\n",
             SY_METRICS_LABEL_MAX - 1, model);
    expect(t, want);
    assert_null(strstr(t, "litellm_deployment_latency_per_output_token_count{"));
    assert_null(strstr(t, "litellm_deployment_cooled_down_total{"));
    free(t);
}

/* ---- concurrency ---- */

#define NWRITERS 4
#define NEVENTS  30000
#define NDEPS    8
static int writers_done;

static void dep_id(char *out, size_t n, int i)
{
    snprintf(out, n, "dep-%d", i % NDEPS);
}

static void *writer(void *arg)
{
    int w = (int)(intptr_t)arg;
    struct sy_metrics_shard *sh = sy_metrics_shard(w);
    char id[16], group[16];
    for (int i = 0; i < NEVENTS; i++) {
        dep_id(id, sizeof id, i + w);
        snprintf(group, sizeof group, "g%d", (i * 7 + w) % 13);
        int ok = i % 5 != 0;
        struct sy_metric_attempt a = attempt(group, ok, (i % 40) * 0.001);
        a.model_id = id;
        a.status = 429;
        sy_metrics_attempt(sh, &a);
        if (i % 50 == 0)
            sy_metrics_cooldown(sh, "m", id, BASE, "openai", i % 100 ? 429 : 503);
        if (i % 20 == 0) {
            struct sy_metric_fallback f = {.ok = i % 40 == 0,
                                           .requested_model = group,
                                           .fallback_model = "fb",
                                           .hashed_api_key = "abc123",
                                           .status = 429};
            sy_metrics_fallback(sh, &f);
        }
    }
    return NULL;
}

static void *state_setter(void *arg)
{
    (void)arg;
    char id[16];
    for (int i = 0; !__atomic_load_n(&writers_done, __ATOMIC_ACQUIRE); i++) {
        dep_id(id, sizeof id, i);
        sy_metrics_deployment_state("m", id, BASE, "openai", i % 3);
    }
    /* a known final value */
    for (int i = 0; i < NDEPS; i++) {
        dep_id(id, sizeof id, i);
        sy_metrics_deployment_state("m", id, BASE, "openai", 1);
    }
    return NULL;
}

static void *renderer(void *arg)
{
    int *renders = arg;
    double last_total = 0, last_cool = 0, last_fb = 0;
    struct sy_buf b;
    sy_buf_init(&b, 256u << 20);
    while (!__atomic_load_n(&writers_done, __ATOMIC_ACQUIRE)) {
        sy_buf_reset(&b);
        if (sy_metrics_render(&b) != 0)
            abort();
        double total = sum_samples(b.p, "litellm_deployment_total_requests_total{", NULL);
        double ok = sum_samples(b.p, "litellm_deployment_success_responses_total{", NULL);
        double cool = sum_samples(b.p, "litellm_deployment_cooled_down_total{", NULL);
        double fb = sum_samples(b.p, "litellm_deployment_successful_fallbacks_total{", NULL) +
                    sum_samples(b.p, "litellm_deployment_failed_fallbacks_total{", NULL);
        if (total < last_total || cool < last_cool || fb < last_fb)
            abort(); /* a counter went backwards */
        if (ok > total)
            abort();
        /* a histogram's +Inf bucket and _count come from the same reads */
        if (sum_samples(b.p, "litellm_deployment_latency_per_output_token_bucket{", "le=\"+Inf\"") !=
            sum_samples(b.p, "litellm_deployment_latency_per_output_token_count{", NULL))
            abort();
        if (count_lines(b.p, "litellm_deployment_state{") > NDEPS)
            abort();
        last_total = total;
        last_cool = cool;
        last_fb = fb;
        (*renders)++;
    }
    sy_buf_free(&b);
    return NULL;
}

static void test_concurrent_writers_and_scrapers(void **st)
{
    (void)st;
    sy_metrics_shutdown();
    assert_int_equal(sy_metrics_init(NWRITERS), 0);
    __atomic_store_n(&writers_done, 0, __ATOMIC_RELEASE);
    pthread_t w[NWRITERS], r[2], s;
    int renders[2] = {0, 0};
    assert_int_equal(pthread_create(&s, NULL, state_setter, NULL), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&r[i], NULL, renderer, &renders[i]), 0);
    for (int i = 0; i < NWRITERS; i++)
        assert_int_equal(pthread_create(&w[i], NULL, writer, (void *)(intptr_t)i), 0);
    for (int i = 0; i < NWRITERS; i++)
        pthread_join(w[i], NULL);
    __atomic_store_n(&writers_done, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++)
        pthread_join(r[i], NULL);
    pthread_join(s, NULL);
    assert_true(renders[0] + renders[1] > 0);

    char *t = render();
    const double all = (double)NWRITERS * NEVENTS, failed = (double)NWRITERS * (NEVENTS / 5);
    assert_true(sum_samples(t, "litellm_deployment_total_requests_total{", NULL) == all);
    assert_true(sum_samples(t, "litellm_deployment_failure_responses_total{", NULL) == failed);
    assert_true(sum_samples(t, "litellm_deployment_success_responses_total{", NULL) == all - failed);
    assert_true(sum_samples(t, "litellm_deployment_latency_per_output_token_count{", NULL) == all - failed);
    assert_true(sum_samples(t, "litellm_deployment_latency_per_output_token_bucket{", "le=\"+Inf\"") == all - failed);
    assert_true(sum_samples(t, "litellm_deployment_cooled_down_total{", NULL) == (double)NWRITERS * (NEVENTS / 50));
    assert_true(sum_samples(t, "litellm_deployment_cooled_down_total{", "exception_status=\"503\"") ==
                (double)NWRITERS * (NEVENTS / 100));
    assert_true(sum_samples(t, "litellm_deployment_successful_fallbacks_total{", NULL) ==
                (double)NWRITERS * (NEVENTS / 40));
    assert_true(sum_samples(t, "litellm_deployment_failed_fallbacks_total{", NULL) ==
                (double)NWRITERS * (NEVENTS / 40));
    /* equal tuples from different shards were merged: one line per
     * (group, deployment) pair for the success counter */
    assert_true(count_lines(t, "litellm_deployment_success_responses_total{") <= 13 * NDEPS);
    assert_int_equal(count_lines(t, "litellm_deployment_latency_per_output_token_count{"), NDEPS);
    assert_int_equal(count_lines(t, "litellm_deployment_state{"), NDEPS);
    assert_true(sum_samples(t, "litellm_deployment_state{", NULL) == NDEPS);
    assert_int_equal(sy_metrics_overflowed(), 0);
    free(t);
}

/* Racing shards cannot admit more fallback_model values than the cap. */
#define CAP_VALUES 20
static int cap_go;
static void *cap_writer(void *arg)
{
    int w = (int)(intptr_t)arg;
    struct sy_metrics_shard *sh = sy_metrics_shard(w);
    while (!__atomic_load_n(&cap_go, __ATOMIC_ACQUIRE))
        ;
    char fb[32];
    for (int i = 0; i < 3000; i++) {
        snprintf(fb, sizeof fb, "fb-%d-%d", w, i);
        struct sy_metric_fallback f = {.ok = i % 2, .requested_model = "g", .fallback_model = fb, .status = 500};
        sy_metrics_fallback(sh, &f);
    }
    return NULL;
}

static void test_fallback_cap_races(void **st)
{
    (void)st;
    sy_metrics_shutdown();
    sy_metrics_set_max_label_values(CAP_VALUES);
    assert_int_equal(sy_metrics_init(NWRITERS), 0);
    __atomic_store_n(&cap_go, 0, __ATOMIC_RELEASE);
    pthread_t w[NWRITERS];
    for (int i = 0; i < NWRITERS; i++)
        assert_int_equal(pthread_create(&w[i], NULL, cap_writer, (void *)(intptr_t)i), 0);
    __atomic_store_n(&cap_go, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < NWRITERS; i++)
        pthread_join(w[i], NULL);
    char *t = render();
    /* each admitted value has at most 2 series (ok / failed), plus overflow lines */
    size_t lines = count_lines(t, "litellm_deployment_successful_fallbacks_total{") +
                   count_lines(t, "litellm_deployment_failed_fallbacks_total{");
    assert_true(lines <= 2 * CAP_VALUES + 2);
    expect(t, "fallback_model=\"__overflow__\"");
    assert_true(sum_samples(t, "litellm_deployment_successful_fallbacks_total{", NULL) +
                    sum_samples(t, "litellm_deployment_failed_fallbacks_total{", NULL) ==
                (double)NWRITERS * 3000);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_families_announced, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_attempts_summed_across_shards, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_cooldowns, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_fallbacks, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_deployment_state, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_label_value_caps, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_series_cap, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_values, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_writers_and_scrapers, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_fallback_cap_races, setup2, teardown),
    };
    return cmocka_run_group_tests_name("metrics_deployment", tests, NULL, NULL);
}
