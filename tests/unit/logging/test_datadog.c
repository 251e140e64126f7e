/* test_datadog.c - the datadog sink (src/logging/sinks/datadog.c) and Python's
 * str() of JSON values it shares with the langfuse sink (sinks/pystr.c).
 *
 * Expected str() texts are what CPython 3 prints for json.loads() of the same
 * input; the entry layout is LiteLLM's DatadogPayload. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "logging/logging.h"
#include "logging/sinks/pystr.h"

extern const struct sy_sink_ops sy_sink_datadog;

__attribute__((weak)) const char *sy_log_payload(struct sy_logrec *rec, size_t *len)
{
    *len = rec->payload_len;
    return rec->payload;
}
__attribute__((weak)) void sy_sink_req_free(struct sy_sink_req *r)
{
    free(r->url);
    r->url = NULL;
    sy_buf_free(&r->headers);
    sy_buf_free(&r->body);
}

/* ---- pystr ------------------------------------------------------------------ */

static void pystr_golden(void **st)
{
    (void)st;
    static const struct {
        const char *json, *str;
    } g[] = {
        {"[\"\\n\"]", "['\\n']"},
        {"{\"a\":1,\"b\":[true,null,1.5,1e5,-0,\"it's\"],\"a\":2}",
         "{'a': 2, 'b': [True, None, 1.5, 100000.0, 0, \"it's\"]}"},
        {"{\"x\":\"\\u00e9\\u0001\",\"y\":{\"z\":1E2}}", "{'x': '\xc3\xa9\\x01', 'y': {'z': 100.0}}"},
        {"[1e16, 0.1, 12345678901234567890]", "[1e+16, 0.1, 12345678901234567890]"},
        {"\"plain \\\"text\\\"\"", "plain \"text\""},
        {"{}", "{}"},
        {"[]", "[]"},
        {"false", "False"},
        {"-12", "-12"},
        {"[{\"role\":\"user\",\"content\":\"it's \\\"q\\\"\"}]", "[{'role': 'user', 'content': 'it\\'s \"q\"'}]"},
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_jdoc d;
        assert_int_equal(sy_jdom_parse(&d, g[i].json, strlen(g[i].json), &a, 0), 0);
        struct sy_buf b;
        sy_buf_init(&b, 1 << 16);
        if (sy_pystr_node(&b, &d, 0, &a) != 0)
            fail_msg("str() of %s failed", g[i].json);
        assert_string_equal(b.p ? b.p : "", g[i].str);
        sy_buf_free(&b);
        sy_arena_free(&a);
    }
    /* code points, not bytes */
    assert_int_equal(sy_pystr_len("a\xc3\xa9\xf0\x9f\x98\x80", 7), 3);
    assert_int_equal(sy_pystr_prefix("a\xc3\xa9\xf0\x9f\x98\x80", 7, 2), 3);
    assert_int_equal(sy_pystr_len("\xff\xfe", 2), 2);
}

static void pystr_deep(void **st)
{
    (void)st;
    /* nesting deeper than the DOM allows is refused by the parser; at its cap it prints */
    char deep[2 * 120 + 1];
    for (int i = 0; i < 120; i++) {
        deep[i] = '[';
        deep[240 - 1 - i] = ']';
    }
    deep[240] = 0;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    assert_int_equal(sy_jdom_parse(&d, deep, 240, &a, 0), 0);
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    assert_int_equal(sy_pystr_node(&b, &d, 0, &a), 0);
    assert_string_equal(b.p, deep);
    sy_buf_free(&b);
    /* a buffer that fills up fails, never a partial success */
    sy_buf_init(&b, 8);
    assert_int_equal(sy_pystr_node(&b, &d, 0, &a), -1);
    sy_buf_free(&b);
    sy_arena_free(&a);
}

/* ---- the sink ----------------------------------------------------------------- */

static const char *PAYLOAD =
    "{\"id\":\"chatcmpl-1\",\"trace_id\":\"t\",\"call_type\":\"acompletion\",\"status\":\"success\","
    "\"model\":\"gpt-4o\",\"prompt_tokens\":10,\"completion_tokens\":5,\"total_tokens\":15,"
    "\"response_cost\":0.001,\"messages\":[{\"role\":\"user\",\"content\":\"secret prompt\"}],"
    "\"response\":{\"id\":\"chatcmpl-1\",\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"hi\"}}]},"
    "\"metadata\":{\"user_api_key_hash\":\"h\",\"user_api_key_team_alias\":\"Team A\",\"user_api_key_team_id\":"
    "\"team-a\"},\"request_tags\":[\"prod\",\"blue\"],\"error_str\":null}";

static void rec_init(struct sy_logrec *r, const char *payload)
{
    memset(r, 0, sizeof *r);
    r->id = "chatcmpl-1";
    r->call_id = "call-1";
    r->call_type = "acompletion";
    r->payload = (char *)payload;
    r->payload_len = strlen(payload);
    r->start_s = 1700000000;
    r->end_s = 1700000001;
}

static void clear_env(void)
{
    static const char *const names[] = {
        "DD_API_KEY",           "DD_SITE",    "DD_BASE_URL", "DD_SOURCE", "DD_ENV",
        "DD_SERVICE",           "DD_VERSION", "HOSTNAME",    "POD_NAME",  "LITELLM_DD_AGENT_HOST",
        "LITELLM_DD_AGENT_PORT"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unsetenv(names[i]);
}

static void *open_ok(const char *vars)
{
    char err[256] = "";
    struct sy_logconf lc = {0};
    void *inst = sy_sink_datadog.open(&lc, vars, err, sizeof err);
    if (!inst)
        fail_msg("open: %s", err);
    return inst;
}

static json_object *encode_one(void *inst, struct sy_logrec **recs, size_t n, struct sy_sink_req *q)
{
    struct sy_sink_req out[SY_SINK_MAX_REQS];
    memset(out, 0, sizeof out);
    size_t nout = 99;
    assert_int_equal(sy_sink_datadog.encode(inst, recs, n, out, &nout), 0);
    assert_int_equal(nout, 1);
    *q = out[0];
    json_object *j = json_tokener_parse(q->body.p);
    assert_non_null(j);
    assert_true(json_object_is_type(j, json_type_array));
    return j;
}

static const char *field(json_object *e, const char *k)
{
    json_object *v;
    assert_true(json_object_object_get_ex(e, k, &v));
    return json_object_get_string(v);
}

static void success_entry(void **st)
{
    (void)st;
    clear_env();
    setenv("DD_API_KEY", "dd-key-1", 1);
    setenv("DD_SITE", "us5.datadoghq.com", 1);
    setenv("HOSTNAME", "gw-1", 1);
    void *inst = open_ok(NULL);
    struct sy_logrec r;
    rec_init(&r, PAYLOAD);
    struct sy_logrec *recs[1] = {&r};
    struct sy_sink_req q;
    json_object *j = encode_one(inst, recs, 1, &q);
    assert_string_equal(q.method, "POST");
    assert_string_equal(q.url, "https://http-intake.logs.us5.datadoghq.com/api/v2/logs");
    assert_non_null(strstr(q.headers.p, "DD-API-KEY: dd-key-1\r\n"));
    assert_non_null(strstr(q.headers.p, "Content-Type: application/json\r\n"));
    assert_int_equal(json_object_array_length(j), 1);
    json_object *e = json_object_array_get_idx(j, 0);
    assert_int_equal(json_object_object_length(e), 6);
    assert_string_equal(field(e, "ddsource"), "litellm");
    assert_string_equal(field(e, "service"), "litellm-server");
    assert_string_equal(field(e, "hostname"), "gw-1");
    assert_string_equal(field(e, "status"), "info");
    assert_string_equal(field(e, "ddtags"), "env:unknown,service:litellm-server,version:unknown,HOSTNAME:gw-1,"
                                            "POD_NAME:unknown,request_tag:prod,request_tag:blue,team:Team A");
    assert_string_equal(field(e, "message"), PAYLOAD); /* the payload as it is: nothing to cut */
    json_object_put(j);
    sy_sink_req_free(&q);
    sy_sink_datadog.close(inst);

    /* DD_* settings */
    setenv("DD_SOURCE", "gateway", 1);
    setenv("DD_SERVICE", "llm", 1);
    setenv("DD_ENV", "prod", 1);
    setenv("DD_VERSION", "1.2", 1);
    setenv("POD_NAME", "pod-7", 1);
    inst = open_ok(NULL);
    j = encode_one(inst, recs, 1, &q);
    e = json_object_array_get_idx(j, 0);
    assert_string_equal(field(e, "ddsource"), "gateway");
    assert_string_equal(field(e, "service"), "llm");
    assert_int_equal(strncmp(field(e, "ddtags"), "env:prod,service:llm,version:1.2,HOSTNAME:gw-1,POD_NAME:pod-7,", 62),
                     0);
    json_object_put(j);
    sy_sink_req_free(&q);
    sy_sink_datadog.close(inst);
}

static void failure_and_redacted(void **st)
{
    (void)st;
    clear_env();
    setenv("DD_API_KEY", "k", 1);
    setenv("DD_SITE", "datadoghq.eu", 1);
    void *inst = open_ok(NULL);
    const char *failed = "{\"status\":\"failure\",\"error_str\":\"litellm.BadRequestError: nope\",\"messages\":"
                         "[{\"role\":\"user\",\"content\":\"redacted-by-litellm\"}],\"response\":{},"
                         "\"metadata\":{\"user_api_key_team_alias\":null,\"user_api_key_team_id\":\"\"},"
                         "\"request_tags\":[]}";
    struct sy_logrec r;
    rec_init(&r, failed);
    r.flags = SY_LOGREC_FAILURE | SY_LOGREC_NO_MESSAGES;
    struct sy_logrec *recs[1] = {&r};
    struct sy_sink_req q;
    json_object *j = encode_one(inst, recs, 1, &q);
    json_object *e = json_object_array_get_idx(j, 0);
    assert_string_equal(field(e, "status"), "error");
    assert_null(strstr(field(e, "ddtags"), "team:")); /* None and "" are no team */
    json_object *m = json_tokener_parse(field(e, "message"));
    assert_non_null(m);
    json_object *es;
    assert_true(json_object_object_get_ex(m, "error_str", &es));
    assert_string_equal(json_object_get_string(es), "litellm.BadRequestError: nope");
    assert_null(strstr(q.body.p, "secret prompt"));
    json_object_put(m);
    json_object_put(j);
    sy_sink_req_free(&q);
    sy_sink_datadog.close(inst);
}

static void truncation(void **st)
{
    (void)st;
    clear_env();
    setenv("DD_API_KEY", "k", 1);
    setenv("DD_SITE", "datadoghq.com", 1);
    void *inst = open_ok(NULL);
    /* messages whose str() is 12,033 characters; a short response stays an object */
    size_t n = 12000;
    char *p = malloc(n + 256);
    int o = sprintf(p, "{\"messages\":[{\"role\":\"user\",\"content\":\"");
    for (size_t i = 0; i < n; i++)
        p[o++] = (char)('a' + i % 26);
    o += sprintf(p + o, "\"}],\"response\":{\"choices\":[]},\"error_str\":null,\"request_tags\":[]}");
    struct sy_logrec r;
    rec_init(&r, p);
    struct sy_logrec *recs[1] = {&r};
    struct sy_sink_req q;
    json_object *j = encode_one(inst, recs, 1, &q);
    json_object *m = json_tokener_parse(field(json_object_array_get_idx(j, 0), "message"));
    assert_non_null(m);
    json_object *msgs, *resp;
    assert_true(json_object_object_get_ex(m, "messages", &msgs));
    assert_true(json_object_is_type(msgs, json_type_string));
    const char *s = json_object_get_string(msgs);
    const char *suffix = "...truncated by litellm, this logger does not support large content";
    assert_int_equal(strlen(s), 10000 + strlen(suffix));
    assert_int_equal(strncmp(s, "[{'role': 'user', 'content': 'abcdef", 36), 0);
    assert_string_equal(s + 10000, suffix);
    assert_true(json_object_object_get_ex(m, "response", &resp));
    assert_true(json_object_is_type(resp, json_type_object));
    json_object_put(m);
    json_object_put(j);
    sy_sink_req_free(&q);

    /* under the limit in characters though above it in bytes: kept (str() counts code points) */
    o = sprintf(p, "{\"messages\":\"");
    for (int i = 0; i < 4000; i++)
        o += sprintf(p + o, "\xc3\xa9");
    sprintf(p + o, "\",\"request_tags\":[]}");
    rec_init(&r, p);
    j = encode_one(inst, recs, 1, &q);
    m = json_tokener_parse(field(json_object_array_get_idx(j, 0), "message"));
    assert_true(json_object_object_get_ex(m, "messages", &msgs));
    assert_int_equal(strlen(json_object_get_string(msgs)), 8000);
    json_object_put(m);
    json_object_put(j);
    sy_sink_req_free(&q);
    free(p);
    sy_sink_datadog.close(inst);
}

static void destinations(void **st)
{
    (void)st;
    char err[256];
    struct sy_logconf lc = {0};
    struct sy_logrec r;
    rec_init(&r, PAYLOAD);
    struct sy_logrec *recs[1] = {&r};
    struct sy_sink_req q;
    json_object *j;

    clear_env();
    assert_null(sy_sink_datadog.open(&lc, NULL, err, sizeof err));
    assert_non_null(strstr(err, "DD_API_KEY"));
    setenv("DD_API_KEY", "k", 1);
    assert_null(sy_sink_datadog.open(&lc, NULL, err, sizeof err));
    assert_non_null(strstr(err, "DD_SITE"));

    /* DD_BASE_URL: the intake of a test or a proxy, DD_SITE then optional */
    setenv("DD_BASE_URL", "http://127.0.0.1:8126/", 1);
    void *inst = open_ok(NULL);
    j = encode_one(inst, recs, 1, &q);
    assert_string_equal(q.url, "http://127.0.0.1:8126/api/v2/logs");
    json_object_put(j);
    sy_sink_req_free(&q);
    sy_sink_datadog.close(inst);
    unsetenv("DD_BASE_URL");

    /* an agent: no key needed */
    unsetenv("DD_API_KEY");
    setenv("LITELLM_DD_AGENT_HOST", "dd-agent", 1);
    inst = open_ok(NULL);
    j = encode_one(inst, recs, 1, &q);
    assert_string_equal(q.url, "http://dd-agent:10518/api/v2/logs");
    assert_null(strstr(q.headers.p, "DD-API-KEY"));
    json_object_put(j);
    sy_sink_req_free(&q);
    sy_sink_datadog.close(inst);
    unsetenv("LITELLM_DD_AGENT_HOST");

    /* a tenant's settings never take the environment's key */
    setenv("DD_API_KEY", "proxy-key", 1);
    setenv("DD_SITE", "datadoghq.com", 1);
    assert_null(sy_sink_datadog.open(&lc, "{\"dd_site\":\"evil.example\"}", err, sizeof err));
    assert_non_null(strstr(err, "dd_api_key"));
    inst = open_ok("{\"dd_api_key\":\"team-key\",\"dd_site\":\"datadoghq.eu\"}");
    j = encode_one(inst, recs, 1, &q);
    assert_string_equal(q.url, "https://http-intake.logs.datadoghq.eu/api/v2/logs");
    assert_non_null(strstr(q.headers.p, "DD-API-KEY: team-key\r\n"));
    assert_null(strstr(q.headers.p, "proxy-key"));
    json_object_put(j);
    sy_sink_req_free(&q);
    sy_sink_datadog.close(inst);

    /* header injection through the key */
    assert_null(sy_sink_datadog.open(&lc, "{\"dd_api_key\":\"k\\r\\nX: 1\",\"dd_site\":\"a\"}", err, sizeof err));
}

static void batches(void **st)
{
    (void)st;
    clear_env();
    setenv("DD_API_KEY", "k", 1);
    setenv("DD_SITE", "datadoghq.com", 1);
    void *inst = open_ok(NULL);
    assert_true(sy_sink_datadog.max_batch <= 1000);
    /* entries of ~1.3 MB (a big hidden_params): requests stay under 4 MB */
    size_t n = 1300000;
    char *p = malloc(n + 128);
    int o = sprintf(p, "{\"hidden_params\":{\"x\":\"");
    memset(p + o, 'y', n);
    o += (int)n;
    sprintf(p + o, "\"},\"request_tags\":[]}");
    struct sy_logrec rs[6], *recs[7];
    for (int i = 0; i < 6; i++) {
        rec_init(&rs[i], p);
        recs[i] = &rs[i];
    }
    struct sy_logrec raw;
    memset(&raw, 0, sizeof raw);
    raw.flags = SY_LOGREC_RAW;
    recs[6] = &raw;
    struct sy_sink_req out[SY_SINK_MAX_REQS];
    memset(out, 0, sizeof out);
    size_t nout = 0, entries = 0;
    assert_int_equal(sy_sink_datadog.encode(inst, recs, 7, out, &nout), 0);
    assert_int_equal(nout, 2);
    for (size_t i = 0; i < nout; i++) {
        assert_true(out[i].body.len <= 4000000);
        json_object *j = json_tokener_parse(out[i].body.p);
        assert_non_null(j);
        entries += json_object_array_length(j);
        json_object_put(j);
        sy_sink_req_free(&out[i]);
    }
    assert_int_equal(entries, 6);
    free(p);

    /* no payload: nothing can be sent, the batch is reported as failed */
    struct sy_logrec none;
    rec_init(&none, "");
    none.payload = NULL;
    recs[0] = &none;
    assert_int_equal(sy_sink_datadog.encode(inst, recs, 1, out, &nout), -1);
    assert_int_equal(nout, 0);
    /* only another sink's messages: nothing to send, not a failure */
    recs[0] = &raw;
    assert_int_equal(sy_sink_datadog.encode(inst, recs, 1, out, &nout), 0);
    assert_int_equal(nout, 0);
    sy_sink_datadog.close(inst);
}

static void verdicts(void **st)
{
    (void)st;
    clear_env();
    setenv("DD_API_KEY", "k", 1);
    setenv("DD_SITE", "datadoghq.com", 1);
    void *inst = open_ok(NULL);
    assert_int_equal(sy_sink_datadog.verdict(inst, 202, "{}", 2), SY_SINK_SENT);
    assert_int_equal(sy_sink_datadog.verdict(inst, 200, "", 0), SY_SINK_SENT);
    assert_int_equal(sy_sink_datadog.verdict(inst, 403, "{\"errors\":[\"Forbidden\"]}", 24), SY_SINK_DROP);
    assert_int_equal(sy_sink_datadog.verdict(inst, 413, NULL, 0), SY_SINK_DROP);
    assert_int_equal(sy_sink_datadog.verdict(inst, 400, "", 0), SY_SINK_DROP);
    assert_int_equal(sy_sink_datadog.verdict(inst, 408, "", 0), SY_SINK_RETRY);
    assert_int_equal(sy_sink_datadog.verdict(inst, 429, "", 0), SY_SINK_RETRY);
    assert_int_equal(sy_sink_datadog.verdict(inst, 500, "", 0), SY_SINK_RETRY);
    assert_int_equal(sy_sink_datadog.verdict(inst, 0, NULL, 0), SY_SINK_RETRY);
    sy_sink_datadog.close(inst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pystr_golden),  cmocka_unit_test(pystr_deep),
        cmocka_unit_test(success_entry), cmocka_unit_test(failure_and_redacted),
        cmocka_unit_test(truncation),    cmocka_unit_test(destinations),
        cmocka_unit_test(batches),       cmocka_unit_test(verdicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
