/* test_mcp.c - the MCP tool call series (sy_metrics_mcp):
 * litellm_mcp_tool_calls_total and litellm_mcp_tool_call_latency_seconds
 * (LATENCY_BUCKETS), keyed by server_name, tool_name and status; announced
 * after LiteLLM's families; summed across shards; the tool name's value cap;
 * odd latencies and NULLs. */
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

static void call(int shard, const char *server, const char *tool, const char *status, double s)
{
    struct sy_metric_mcp m = {.server_name = server, .tool_name = tool, .status = status, .latency_s = s};
    sy_metrics_mcp(sy_metrics_shard(shard), &m);
}

/* Both families announced last, with no series before any call. */
static void test_announced(void **st)
{
    (void)st;
    char *t = render();
    const char *c = strstr(t, "# HELP litellm_mcp_tool_calls_total Total number of MCP tool calls made through the "
                              "gateway\n# TYPE litellm_mcp_tool_calls_total counter\n");
    const char *h = strstr(t, "# HELP litellm_mcp_tool_call_latency_seconds ");
    assert_non_null(c);
    assert_non_null(h);
    assert_true(c < h);
    assert_true(strstr(t, "# HELP litellm_requests_metric") < c); /* after LiteLLM's last family */
    assert_null(strstr(t, "litellm_mcp_tool_calls_total{"));
    free(t);
}

/* Calls on two shards sum into one series per (server, tool, status). */
static void test_counts(void **st)
{
    (void)st;
    call(0, "bed", "echo", "success", 0.004);
    call(1, "bed", "echo", "success", 0.002);
    call(1, "bed", "fail", "error", 0.75);
    call(0, "two\"x", "add", "success", 2.0);
    char *t = render();
    expect(t, "litellm_mcp_tool_calls_total{server_name=\"bed\",tool_name=\"echo\",status=\"success\"} 2.0\n");
    expect(t, "litellm_mcp_tool_calls_total{server_name=\"bed\",tool_name=\"fail\",status=\"error\"} 1.0\n");
    expect(t, "litellm_mcp_tool_calls_total{server_name=\"two\\\"x\",tool_name=\"add\",status=\"success\"} 1.0\n");
    expect(t, "litellm_mcp_tool_call_latency_seconds_bucket{server_name=\"bed\",tool_name=\"echo\",status=\"success\","
              "le=\"0.005\"} 2.0\n");
    expect(t, "litellm_mcp_tool_call_latency_seconds_bucket{server_name=\"bed\",tool_name=\"fail\",status=\"error\","
              "le=\"0.5\"} 0.0\n");
    expect(t, "litellm_mcp_tool_call_latency_seconds_bucket{server_name=\"bed\",tool_name=\"fail\",status=\"error\","
              "le=\"1.0\"} 1.0\n");
    expect(t, "litellm_mcp_tool_call_latency_seconds_count{server_name=\"bed\",tool_name=\"echo\",status=\"success\"} "
              "2.0\n");
    expect(t, "litellm_mcp_tool_call_latency_seconds_sum{server_name=\"two\\\"x\",tool_name=\"add\",status=\"success\"}"
              " 2.0\n");
    /* no other family moved */
    assert_null(strstr(t, "litellm_proxy_total_requests_metric_total{"));
    assert_null(strstr(t, "litellm_guardrail_requests_total{"));
    free(t);
}

/* Odd latencies observed as 0, NULL strings as None, NULL shard or event ignored. */
static void test_values(void **st)
{
    (void)st;
    call(0, "s", "t", "success", -3);
    call(0, "s", "t", "success", NAN);
    call(0, NULL, NULL, NULL, 0.01);
    sy_metrics_mcp(NULL, &(struct sy_metric_mcp){.server_name = "x"});
    sy_metrics_mcp(sy_metrics_shard(0), NULL);
    char *t = render();
    expect(t, "litellm_mcp_tool_call_latency_seconds_bucket{server_name=\"s\",tool_name=\"t\",status=\"success\","
              "le=\"0.005\"} 2.0\n");
    expect(t, "litellm_mcp_tool_calls_total{server_name=\"None\",tool_name=\"None\",status=\"None\"} 1.0\n");
    assert_null(strstr(t, "server_name=\"x\""));
    free(t);
}

/* A client may name any tool: past the cap new names count as __overflow__. */
static void test_tool_cap(void **st)
{
    (void)st;
    sy_metrics_shutdown();
    sy_metrics_set_max_label_values(3);
    assert_int_equal(sy_metrics_init(2), 0);
    char tool[32];
    for (int i = 0; i < 10; i++) {
        snprintf(tool, sizeof tool, "t-%d", i);
        call(i % 2, "bed", tool, "success", 0.01);
    }
    char *t = render();
    expect(t, "litellm_mcp_tool_calls_total{server_name=\"bed\",tool_name=\"t-2\",status=\"success\"} 1.0\n");
    assert_null(strstr(t, "tool_name=\"t-3\""));
    expect(t, "litellm_mcp_tool_calls_total{server_name=\"bed\",tool_name=\"__overflow__\",status=\"success\"} 7.0\n");
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_announced, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_counts, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_values, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_tool_cap, setup2, teardown),
    };
    return cmocka_run_group_tests_name("metrics_mcp", tests, NULL, NULL);
}
