/* test_accesslog.c - the JSON access log: every line written from several
 * threads is valid JSON with the expected fields and is on disk after close. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics/metrics.h"

#define NTHREADS 3
#define NLINES   600

static char long_model[3000];

static void *writer(void *arg)
{
    int t = (int)(intptr_t)arg;
    char call_id[64];
    for (int i = 0; i < NLINES; i++) {
        snprintf(call_id, sizeof call_id, "call-%d-%d", t, i);
        /* nasty strings: quotes, control bytes, invalid UTF-8, very long */
        const char *models[] = {"gpt-4o", "a\"b\\c\n\t\x01", "bad\xff\xfeutf8\xc3", long_model, "caf\xc3\xa9"};
        struct sy_metric_req r = {
            .route = "/v1/chat/completions",
            .requested_model = models[i % 5],
            .model = "gpt-4o-mini",
            .api_provider = "openai",
            .status = i % 7 ? 200 : 429,
            .exception_class = i % 7 ? NULL : "RateLimitError",
            .total_s = 0.0123,
            .llm_s = 0.01,
            .ttft_s = i % 2 ? 0.002 : -1,
            .overhead_s = 0.0023,
            .prompt_tokens = (uint64_t)i,
            .completion_tokens = 7,
        };
        sy_accesslog_write(&r, call_id, "dep-1");
    }
    return NULL;
}

static void test_lines_are_json(void **st)
{
    (void)st;
    memset(long_model, 'x', sizeof long_model - 1);
    char path[] = "/tmp/sy-accesslog-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(sy_accesslog_open(path), 0);
    assert_int_not_equal(sy_accesslog_open(path), 0); /* already open */
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, writer, (void *)(intptr_t)i);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    sy_accesslog_close();
    uint64_t dropped = sy_accesslog_dropped();
    assert_int_equal(dropped, 0); /* 1800 lines (< 1 MiB) fit the queue even if the writer never ran */

    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lines = 0, limited = 0, streams = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        assert_true(line[n - 1] == '\n');
        struct json_tokener *tok = json_tokener_new();
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        struct json_object *o = json_tokener_parse_ex(tok, line, (int)n - 1);
        if (!o)
            fprintf(stderr, "bad line: %s (%s)\n", line, json_tokener_error_desc(json_tokener_get_error(tok)));
        assert_non_null(o);
        json_tokener_free(tok);
        struct json_object *v;
        assert_true(json_object_object_get_ex(o, "call_id", &v));
        assert_true(strncmp(json_object_get_string(v), "call-", 5) == 0);
        assert_true(json_object_object_get_ex(o, "ts", &v));
        const char *ts = json_object_get_string(v);
        assert_int_equal(strlen(ts), 24); /* 2025-01-02T03:04:05.678Z */
        assert_true(ts[10] == 'T' && ts[23] == 'Z');
        assert_true(json_object_object_get_ex(o, "route", &v));
        assert_string_equal(json_object_get_string(v), "/v1/chat/completions");
        assert_true(json_object_object_get_ex(o, "deployment", &v));
        assert_string_equal(json_object_get_string(v), "dep-1");
        assert_true(json_object_object_get_ex(o, "provider", &v));
        assert_string_equal(json_object_get_string(v), "openai");
        assert_true(json_object_object_get_ex(o, "model_group", &v));
        assert_true(strlen(json_object_get_string(v)) <= 256);
        assert_true(json_object_object_get_ex(o, "status", &v));
        int status = json_object_get_int(v);
        assert_true(status == 200 || status == 429);
        if (status == 429) {
            limited++;
            assert_true(json_object_object_get_ex(o, "exception_class", &v));
            assert_string_equal(json_object_get_string(v), "RateLimitError");
        }
        assert_true(json_object_object_get_ex(o, "total_ms", &v));
        assert_true(json_object_get_double(v) > 12.2 && json_object_get_double(v) < 12.4);
        assert_true(json_object_object_get_ex(o, "llm_ms", &v));
        assert_true(json_object_object_get_ex(o, "overhead_ms", &v));
        assert_true(json_object_object_get_ex(o, "prompt_tokens", &v));
        assert_true(json_object_object_get_ex(o, "completion_tokens", &v));
        assert_int_equal(json_object_get_int(v), 7);
        streams += json_object_object_get_ex(o, "ttft_ms", &v);
        json_object_put(o);
        lines++;
    }
    free(line);
    fclose(f);
    unlink(path);
    assert_int_equal(lines, NTHREADS * NLINES);
    assert_int_equal(streams, NTHREADS * NLINES / 2);
    int per = 0;
    for (int i = 0; i < NLINES; i++)
        per += i % 7 == 0;
    assert_int_equal(limited, NTHREADS * per);
}

static void test_closed_is_noop(void **st)
{
    (void)st;
    struct sy_metric_req r = {.route = "/x", .status = 200, .ttft_s = -1};
    sy_accesslog_write(&r, "c", NULL); /* not open: ignored */
    sy_accesslog_close();              /* not open: ignored */
    assert_int_not_equal(sy_accesslog_open("/nonexistent-dir/x.log"), 0);
    assert_int_equal(sy_accesslog_open("-"), 0); /* stderr */
    sy_accesslog_write(&r, "c", NULL);
    sy_accesslog_close();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_are_json),
        cmocka_unit_test(test_closed_is_noop),
    };
    return cmocka_run_group_tests_name("metrics_accesslog", tests, NULL, NULL);
}
