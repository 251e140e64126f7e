/* bench_record.c - sy_metrics_record in a loop, for callgrind (not a test).
 *
 *   valgrind --tool=callgrind --toggle-collect=sy_metrics_record ./metrics-bench-record [mode] [n]
 *
 * mode "same": the proxy's usual request (the same key every time, as a worker
 * sees back to back); "mixed": 8 keys in turn (user / status vary), so the
 * last-entry shortcut misses and the hash lookup runs. Divide the collected
 * instructions by n. Mode "new": a new end-user value every record, past the
 * label cap after the first 100 (a client inventing ids: the overflow path).
 * Mode "render": n distinct users (one series each, caps
 * raised), then one sy_metrics_render timed and its size printed.
 *
 *   valgrind --tool=callgrind --toggle-collect=sy_metrics_attempt ./metrics-bench-record attempt [n]
 *
 * Modes "attempt" / "attempt-mixed": sy_metrics_attempt for the same upstream
 * attempt every time / for 8 attempts in turn (deployment and outcome vary).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "metrics/metrics.h"

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "same";
    int n = argc > 2 ? atoi(argv[2]) : 100000;
    int render = strcmp(mode, "render") == 0;
    if (render) {
        sy_metrics_set_max_series((unsigned)n + 10);
        sy_metrics_set_max_label_values((unsigned)n + 10);
    }
    if (sy_metrics_init(1) != 0)
        return 1;
    struct sy_metrics_shard *sh = sy_metrics_shard(0);
    static const char *const users[8] = {"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"};
    int mixed = strcmp(mode, "mixed") == 0, fresh = strcmp(mode, "new") == 0;
    if (strncmp(mode, "attempt", 7) == 0) {
        static const char *const ids[8] = {"dep-a", "dep-b", "dep-c", "dep-d", "dep-e", "dep-f", "dep-g", "dep-h"};
        int amixed = strcmp(mode, "attempt-mixed") == 0;
        for (int i = 0; i < n; i++) {
            struct sy_metric_attempt a = {
                .requested_model = "mock-gpt",
                .model = "mock-gpt-upstream",
                .model_id = amixed ? ids[i % 8] : "c4f1a2b3d4e5f60718293a4b5c6d7e8f",
                .api_base = "http://127.0.0.1:9000/v1",
                .api_provider = "openai",
                .hashed_api_key = "88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b",
                .ok = !(amixed && i % 8 == 7),
                .status = 429,
                .latency_per_output_token_s = 0.0005 + (i % 50) * 0.00001,
            };
            sy_metrics_attempt(sh, &a);
        }
        sy_metrics_shutdown();
        return 0;
    }
    char eu[32];
    for (int i = 0; i < n; i++) {
        snprintf(eu, sizeof eu, "end-user-%d", i);
        struct sy_metric_req r = {
            .route = "/v1/chat/completions",
            .requested_model = "mock-gpt",
            .model = "mock-gpt-upstream",
            .model_id = "c4f1a2b3d4e5f60718293a4b5c6d7e8f",
            .api_provider = "openai",
            .api_base = "http://127.0.0.1:9000/v1",
            .hashed_api_key = "88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b",
            .status = mixed && i % 8 == 7 ? 429 : 200,
            .llm_called = 1,
            .llm_failed = 0,
            .total_s = 0.0021 + (i % 50) * 0.0001,
            .llm_s = 0.0015,
            .ttft_s = i % 2 ? 0.0009 : -1,
            .overhead_s = 0.0006,
            .prompt_tokens = 12,
            .completion_tokens = 30,
            .spend = 0.00002,
            .user = mixed ? users[i % 8] : "alice",
            .end_user = render || fresh ? eu : NULL,
        };
        sy_metrics_record(sh, &r);
    }
    if (render) {
        struct sy_buf b;
        sy_buf_init(&b, (size_t)1 << 31);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int rc = sy_metrics_render(&b);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("%d series: rc %d, %zu bytes, %.3f ms\n", n, rc, b.len,
               (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
        sy_buf_free(&b);
    }
    sy_metrics_shutdown();
    return 0;
}
