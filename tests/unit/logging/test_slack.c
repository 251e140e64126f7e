/* test_slack.c - Slack alerting (src/logging/sinks/slack.c) without a network:
 * the settings LiteLLM's general_settings give, the message LiteLLM's
 * send_alert writes, de-duplication, and what the sink encodes from records
 * (llm_exceptions, llm_too_slow, outage_alerts, raw alerts), checked by
 * parsing every body with json-c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "logging/logging.h"
#include "logging/sinks/slack.h"

#define NOW 1767229200.0

static struct sy_logconf lc_default(void)
{
    struct sy_logconf lc;
    memset(&lc, 0, sizeof lc);
    lc.alerting_slack = 1;
    return lc;
}

static void install_default(void)
{
    struct sy_logconf lc = lc_default();
    struct sy_slack_settings s;
    char err[256];
    assert_int_equal(sy_slack_parse(&lc, &s, NULL, 0, err, sizeof err), 0);
    sy_slack_install(&s);
}

/* The "text" of a Slack body; fails when the body is not {"text": string}. */
static char *text_of(const char *body, size_t n)
{
    json_tokener *tok = json_tokener_new();
    json_object *o = json_tokener_parse_ex(tok, body, (int)n);
    assert_int_equal(json_tokener_get_error(tok), json_tokener_success);
    json_tokener_free(tok);
    assert_non_null(o);
    assert_true(json_object_is_type(o, json_type_object));
    assert_int_equal(json_object_object_length(o), 1);
    json_object *t;
    assert_true(json_object_object_get_ex(o, "text", &t));
    assert_true(json_object_is_type(t, json_type_string));
    char *s = strdup(json_object_get_string(t));
    json_object_put(o);
    return s;
}

static void test_parse_defaults_and_filters(void **state)
{
    (void)state;
    struct sy_logconf lc = lc_default();
    struct sy_slack_settings s;
    char err[256] = "", quiet[256];
    assert_int_equal(sy_slack_parse(&lc, &s, quiet, sizeof quiet, err, sizeof err), 0);
    assert_int_equal(s.mask, (1u << SY_ALERT__COUNT) - 1);
    assert_true(s.threshold_s == 300);
    assert_true(s.dedup_ttl_s == 300);
    assert_true(s.budget_ttl_s == 86400);
    assert_true(s.outage_ttl_s == 60);
    assert_int_equal(s.minor_outage, 5);
    assert_int_equal(s.major_outage, 10);
    assert_string_equal(quiet, "");

    lc.alerting_threshold_s = 0.5;
    lc.alert_types = "[\"llm_exceptions\", \"budget_alerts\", \"daily_reports\", \"spend_reports\"]";
    lc.alerting_args = "{\"budget_alert_ttl\": 10, \"outage_alert_ttl\": \"30\", \"minor_outage_alert_threshold\": 2,"
                       " \"major_outage_alert_threshold\": 3, \"switchyard_alert_dedup_ttl\": 7,"
                       " \"daily_report_frequency\": 100, \"log_to_console\": true}";
    assert_int_equal(sy_slack_parse(&lc, &s, quiet, sizeof quiet, err, sizeof err), 0);
    assert_int_equal(s.mask, (1u << SY_ALERT_LLM_EXCEPTIONS) | (1u << SY_ALERT_BUDGET_ALERTS));
    assert_true(s.threshold_s == 0.5);
    assert_true(s.budget_ttl_s == 10);
    assert_true(s.outage_ttl_s == 30);
    assert_true(s.dedup_ttl_s == 7);
    assert_int_equal(s.minor_outage, 2);
    assert_int_equal(s.major_outage, 3);
    assert_int_equal(s.log_to_console, 1);
    assert_string_equal(quiet, "daily_reports, spend_reports");

    /* an empty list: nothing on */
    lc.alert_types = "[]";
    assert_int_equal(sy_slack_parse(&lc, &s, NULL, 0, err, sizeof err), 0);
    assert_int_equal(s.mask, 0);

    /* what is not LiteLLM's: ignored (LiteLLM never matches it), named in the warning */
    lc.alert_types = "[\"llm_exceptionz\", 1, \"db_exceptions\"]";
    assert_int_equal(sy_slack_parse(&lc, &s, quiet, sizeof quiet, err, sizeof err), 0);
    assert_int_equal(s.mask, 1u << SY_ALERT_DB_EXCEPTIONS);
    assert_string_equal(quiet, "llm_exceptionz (unknown), (not a string) (unknown)");
    lc.alert_types = "\"llm_exceptions\"";
    assert_int_equal(sy_slack_parse(&lc, &s, NULL, 0, err, sizeof err), -1);
    lc.alert_types = "[\"llm_exceptions\"";
    assert_int_equal(sy_slack_parse(&lc, &s, NULL, 0, err, sizeof err), -1);
    lc.alert_types = NULL;
    lc.alerting_args = "[1,2]";
    assert_int_equal(sy_slack_parse(&lc, &s, NULL, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "alerting_args"));
    /* negative or non-numeric values keep the defaults */
    lc.alerting_args =
        "{\"budget_alert_ttl\": -5, \"outage_alert_ttl\": \"soon\", \"minor_outage_alert_threshold\": 0}";
    assert_int_equal(sy_slack_parse(&lc, &s, NULL, 0, err, sizeof err), 0);
    assert_true(s.budget_ttl_s == 86400);
    assert_true(s.outage_ttl_s == 60);
    assert_int_equal(s.minor_outage, 1);
}

static void test_message_and_dedup(void **state)
{
    (void)state;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    sy_slack_install(NULL);
    assert_int_equal(sy_slack_prepare(SY_ALERT_BUDGET_ALERTS, "k", "x", NOW, &b), 0); /* off */
    install_default();
    assert_int_equal(sy_slack_prepare(SY_ALERT_BUDGET_ALERTS, "key:abc", "Key Budget: Budget Crossed", NOW, &b), 1);
    char *t = text_of(b.p, b.len);
    assert_true(strncmp(t, "Level: `High`\nTimestamp: `", 26) == 0);
    assert_non_null(strstr(t, "\n\nMessage: Key Budget: Budget Crossed"));
    assert_non_null(strstr(t, "\n\nAlert Type: `budget_alerts`"));
    free(t);
    /* the same key: held back for budget_alert_ttl (24 h) */
    assert_int_equal(sy_slack_prepare(SY_ALERT_BUDGET_ALERTS, "key:abc", "again", NOW + 10, &b), 0);
    assert_int_equal(sy_slack_prepare(SY_ALERT_BUDGET_ALERTS, "key:abc", "again", NOW + 86000, &b), 0);
    /* another key, another type: sent */
    assert_int_equal(sy_slack_prepare(SY_ALERT_BUDGET_ALERTS, "key:def", "other", NOW + 10, &b), 1);
    assert_int_equal(sy_slack_prepare(SY_ALERT_COOLDOWN_DEPLOYMENT, "key:abc", "cooled", NOW + 10, &b), 1);
    t = text_of(b.p, b.len);
    assert_true(strncmp(t, "Level: `Medium`", 15) == 0);
    free(t);
    /* after the window: sent, saying how many it stands for */
    assert_int_equal(sy_slack_prepare(SY_ALERT_BUDGET_ALERTS, "key:abc", "third", NOW + 86401, &b), 1);
    t = text_of(b.p, b.len);
    assert_true(strncmp(t, "[Num Alerts: 3]\n\nLevel: `High`", 30) == 0);
    free(t);
    /* other types use the 300 s window */
    assert_int_equal(sy_slack_prepare(SY_ALERT_DB_EXCEPTIONS, "db", "down", NOW, &b), 1);
    assert_int_equal(sy_slack_prepare(SY_ALERT_DB_EXCEPTIONS, "db", "down", NOW + 299, &b), 0);
    assert_int_equal(sy_slack_prepare(SY_ALERT_DB_EXCEPTIONS, "db", "down", NOW + 301, &b), 1);
    /* a NULL key de-duplicates on the text */
    assert_int_equal(sy_slack_prepare(SY_ALERT_LLM_TOO_SLOW, NULL, "same text", NOW, &b), 1);
    assert_int_equal(sy_slack_prepare(SY_ALERT_LLM_TOO_SLOW, NULL, "same text", NOW + 1, &b), 0);
    assert_int_equal(sy_slack_prepare(SY_ALERT_LLM_TOO_SLOW, NULL, "other text", NOW + 1, &b), 1);
    /* out of range */
    assert_int_equal(sy_slack_prepare(SY_ALERT__COUNT, "x", "x", NOW, &b), 0);
    assert_int_equal(sy_slack_prepare((enum sy_alert_type) - 1, "x", "x", NOW, &b), 0);
    sy_buf_free(&b);
}

/* Quotes, control characters, invalid UTF-8 and a huge text: always one valid
 * JSON body, the text capped. */
static void test_hostile_text(void **state)
{
    (void)state;
    install_default();
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    char msg[200];
    snprintf(msg, sizeof msg, "quote \" backslash \\ nl \n tab \t bell \a bad \xff\xfe utf8 \xe2\x82 end");
    assert_int_equal(sy_slack_prepare(SY_ALERT_DB_EXCEPTIONS, "hostile", msg, NOW, &b), 1);
    char *t = text_of(b.p, b.len);
    assert_non_null(strstr(t, "quote \" backslash \\ nl \n tab \t bell \a bad "));
    free(t);
    char *big = malloc(100000);
    memset(big, 'A', 99999);
    big[99999] = 0;
    assert_int_equal(sy_slack_prepare(SY_ALERT_DB_EXCEPTIONS, "big", big, NOW, &b), 1);
    t = text_of(b.p, b.len);
    assert_true(strlen(t) < SY_SLACK_TEXT_MAX + 300);
    free(t);
    free(big);
    sy_buf_free(&b);
}

/* ---- the sink's encode ------------------------------------------------------ */

static void *open_sink(const char *types, const char *args, double threshold)
{
    setenv("SLACK_WEBHOOK_URL", "http://127.0.0.1:9/hooks/T000/B000/XXX", 1);
    struct sy_logconf lc = lc_default();
    lc.alert_types = types;
    lc.alerting_args = args;
    lc.alerting_threshold_s = threshold;
    char err[256] = "";
    void *inst = sy_sink_slack.open(&lc, NULL, err, sizeof err);
    if (!inst)
        fail_msg("open: %s", err);
    return inst;
}

static size_t encode(void *inst, struct sy_logrec *const *recs, size_t n, char **texts)
{
    struct sy_sink_req out[SY_SINK_MAX_REQS];
    size_t nout = 99;
    assert_int_equal(sy_sink_slack.encode(inst, recs, n, out, &nout), 0);
    assert_true(nout <= SY_SINK_MAX_REQS);
    for (size_t i = 0; i < nout; i++) {
        assert_string_equal(out[i].method, "POST");
        assert_string_equal(out[i].url, "http://127.0.0.1:9/hooks/T000/B000/XXX");
        assert_non_null(strstr(out[i].headers.p, "Content-Type: application/json\r\n"));
        texts[i] = text_of(out[i].body.p, out[i].body.len);
        sy_sink_req_free(&out[i]);
    }
    return nout;
}

static struct sy_logattempt att_fail = {.model_id = "dep-1",
                                        .model = "openai/gpt-4o",
                                        .provider = "openai",
                                        .api_base = "http://up.example/v1",
                                        .start_s = NOW,
                                        .end_s = NOW + 1,
                                        .status = 503,
                                        .error = "ServiceUnavailableError"};

static struct sy_logrec failure_rec(void)
{
    struct sy_logrec r;
    memset(&r, 0, sizeof r);
    r.id = "chatcmpl-1";
    r.model = "gpt-4o";
    r.model_group = "gpt-4o";
    r.model_id = "dep-1";
    r.api_base = "http://up.example/v1";
    r.hashed_key = "88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b";
    r.key_alias = "team-a-key";
    r.team_alias = "team-a";
    r.http_status = 503;
    r.flags = SY_LOGREC_FAILURE;
    r.error_class = "ServiceUnavailableError";
    r.error_message = "upstream said no";
    r.start_s = NOW;
    r.api_start_s = NOW;
    r.end_s = NOW + 1;
    r.attempts = &att_fail;
    r.nattempts = 1;
    return r;
}

static void free_texts(char **t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(t[i]);
}

static void test_failure_alerted_once(void **state)
{
    (void)state;
    void *inst = open_sink("[\"llm_exceptions\"]", NULL, 0);
    struct sy_logrec r[5];
    struct sy_logrec *p[5];
    for (int i = 0; i < 5; i++) {
        r[i] = failure_rec();
        p[i] = &r[i];
    }
    char *t[SY_SINK_MAX_REQS];
    /* five identical failures, in batches of one and of four: one alert */
    size_t n = encode(inst, p, 1, t);
    assert_int_equal(n, 1);
    assert_true(strncmp(t[0], "Level: `High`", 13) == 0);
    assert_non_null(strstr(t[0], "Message: LLM API call failed: `litellm.ServiceUnavailableError: upstream said no`"));
    assert_non_null(strstr(t[0], "\nModel Group: `gpt-4o`"));
    assert_non_null(strstr(t[0], "\nDeployment: `dep-1`"));
    assert_non_null(strstr(t[0], "\nAPI Base: `http://up.example/v1`"));
    assert_non_null(strstr(t[0], "\nKey Alias: `team-a-key`"));
    assert_non_null(strstr(t[0], "\nTeam: `team-a`"));
    assert_non_null(strstr(t[0], "Alert Type: `llm_exceptions`"));
    assert_null(strstr(t[0], r[0].hashed_key));
    free_texts(t, n);
    assert_int_equal(encode(inst, p + 1, 4, t), 0);
    /* another error class on the same group: its own alert */
    r[0].error_class = "RateLimitError";
    r[0].http_status = 429;
    n = encode(inst, p, 1, t);
    assert_int_equal(n, 1);
    free_texts(t, n);
    /* a refusal by the proxy itself (no upstream attempt failed): no alert */
    struct sy_logrec refused = failure_rec();
    refused.error_class = "BudgetExceededError";
    refused.http_status = 400;
    refused.attempts = NULL;
    refused.nattempts = 0;
    struct sy_logrec *rp = &refused;
    assert_int_equal(encode(inst, &rp, 1, t), 0);
    /* a success: nothing */
    struct sy_logrec ok = failure_rec();
    ok.flags = 0;
    ok.error_class = NULL;
    ok.attempts = NULL;
    ok.nattempts = 0;
    ok.http_status = 200;
    rp = &ok;
    assert_int_equal(encode(inst, &rp, 1, t), 0);
    sy_sink_slack.close(inst);
}

static void test_redaction_and_truncation(void **state)
{
    (void)state;
    void *inst = open_sink(NULL, NULL, 0);
    struct sy_logrec r = failure_rec();
    r.flags |= SY_LOGREC_REDACT_KEY;
    char *big = malloc(5000);
    memset(big, 'e', 4999);
    big[4999] = 0;
    big[10] = '`'; /* would end Slack's code span */
    r.error_message = big;
    struct sy_logrec *p = &r;
    char *t[SY_SINK_MAX_REQS];
    size_t n = encode(inst, &p, 1, t);
    assert_int_equal(n, 1);
    assert_null(strstr(t[0], "Key Alias"));
    assert_null(strstr(t[0], "team-a"));
    const char *q = strstr(t[0], "litellm.ServiceUnavailableError: ");
    assert_non_null(q);
    q += strlen("litellm.ServiceUnavailableError: ");
    assert_int_equal(q[10], '\'');
    assert_int_equal(strspn(q + 11, "e"), SY_SLACK_ERROR_MAX - 11);
    assert_true(strncmp(q + SY_SLACK_ERROR_MAX, "...`", 4) == 0);
    free_texts(t, n);
    free(big);
    sy_sink_slack.close(inst);
}

static void test_slow_response(void **state)
{
    (void)state;
    void *inst = open_sink("[\"llm_too_slow\"]", NULL, 0.5);
    struct sy_logrec r = failure_rec();
    r.flags = SY_LOGREC_STREAM;
    r.error_class = NULL;
    r.error_message = NULL;
    r.http_status = 200;
    r.attempts = NULL;
    r.nattempts = 0;
    r.start_s = NOW;
    r.api_start_s = NOW + 0.1;
    r.completion_start_s = NOW + 0.3;
    r.end_s = NOW + 0.55; /* 0.45 s from the call: under the threshold */
    struct sy_logrec *p = &r;
    char *t[SY_SINK_MAX_REQS];
    assert_int_equal(encode(inst, &p, 1, t), 0);
    r.end_s = NOW + 2.35;
    size_t n = encode(inst, &p, 1, t);
    assert_int_equal(n, 1);
    assert_true(strncmp(t[0], "Level: `Low`", 12) == 0);
    assert_non_null(strstr(t[0], "`Responses are slow - 2.25s response time > Alerting threshold: 0.5s`"));
    assert_non_null(strstr(t[0], "\nRequest Model: `gpt-4o`"));
    assert_non_null(strstr(t[0], "\nTime To First Token: `0.20s`"));
    assert_non_null(strstr(t[0], "Alert Type: `llm_too_slow`"));
    free_texts(t, n);
    /* de-duplicated per deployment */
    assert_int_equal(encode(inst, &p, 1, t), 0);
    /* a cache hit is never slow upstream */
    r.model_id = "dep-2";
    r.flags |= SY_LOGREC_CACHE_HIT;
    assert_int_equal(encode(inst, &p, 1, t), 0);
    /* a failure is not a slow response; and llm_exceptions is not on */
    struct sy_logrec f = failure_rec();
    f.end_s = NOW + 100;
    p = &f;
    assert_int_equal(encode(inst, &p, 1, t), 0);
    sy_sink_slack.close(inst);
}

static void test_outage(void **state)
{
    (void)state;
    void *inst = open_sink("[\"outage_alerts\"]",
                           "{\"minor_outage_alert_threshold\": 3, \"major_outage_alert_threshold\": 5}", 0);
    struct sy_logrec r = failure_rec();
    struct sy_logrec *p[4] = {&r, &r, &r, &r};
    char *t[SY_SINK_MAX_REQS];
    assert_int_equal(encode(inst, p, 2, t), 0);
    size_t n = encode(inst, p, 1, t); /* the third: minor */
    assert_int_equal(n, 1);
    assert_true(strncmp(t[0], "Level: `Medium`", 15) == 0);
    assert_non_null(strstr(t[0], "*⚠️ Minor Service Outage*"));
    assert_non_null(strstr(t[0], "*Model Name:*: `openai/gpt-4o`"));
    assert_non_null(strstr(t[0], "API Errors: 3"));
    free_texts(t, n);
    n = encode(inst, p, 2, t); /* the fifth: major */
    assert_int_equal(n, 1);
    assert_true(strncmp(t[0], "Level: `High`", 13) == 0);
    assert_non_null(strstr(t[0], "*⚠️ Major Service Outage*"));
    free_texts(t, n);
    assert_int_equal(encode(inst, p, 4, t), 0); /* both sent in this window */
    /* a 400 from upstream is not an outage */
    att_fail.model_id = "dep-400";
    att_fail.status = 400;
    for (int i = 0; i < 3; i++)
        assert_int_equal(encode(inst, p, 4, t), 0);
    att_fail.model_id = "dep-1";
    att_fail.status = 503;
    sy_sink_slack.close(inst);
}

static void test_raw_and_open(void **state)
{
    (void)state;
    unsetenv("SLACK_WEBHOOK_URL");
    struct sy_logconf lc = lc_default();
    char err[256] = "";
    assert_null(sy_sink_slack.open(&lc, NULL, err, sizeof err));
    assert_non_null(strstr(err, "SLACK_WEBHOOK_URL"));
    setenv("SLACK_WEBHOOK_URL", "ftp://x", 1);
    assert_null(sy_sink_slack.open(&lc, NULL, err, sizeof err));
    lc.alert_types = "{\"llm_exceptions\": true}";
    setenv("SLACK_WEBHOOK_URL", "http://127.0.0.1:9/x", 1);
    assert_null(sy_sink_slack.open(&lc, NULL, err, sizeof err));
    assert_non_null(strstr(err, "alert_types"));

    void *inst = open_sink(NULL, NULL, 0);
    struct sy_logrec raw;
    memset(&raw, 0, sizeof raw);
    raw.flags = SY_LOGREC_RAW;
    char body[] = "{\"text\":\"prepared\"}";
    raw.payload = body;
    raw.payload_len = strlen(body);
    struct sy_logrec *p[2] = {&raw, &raw};
    char *t[SY_SINK_MAX_REQS];
    size_t n = encode(inst, p, 2, t);
    assert_int_equal(n, 2); /* de-duplicated when raised, not here */
    assert_string_equal(t[0], "prepared");
    free_texts(t, n);
    /* closing the instance turns alerting off; a newer instance's settings survive an older one's close */
    void *newer = open_sink(NULL, NULL, 0);
    sy_sink_slack.close(inst);
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    assert_int_equal(sy_slack_prepare(SY_ALERT_DB_EXCEPTIONS, "after-close", "x", NOW, &b), 1);
    sy_sink_slack.close(newer);
    assert_int_equal(sy_slack_prepare(SY_ALERT_DB_EXCEPTIONS, "after-close-2", "x", NOW, &b), 0);
    sy_buf_free(&b);
    /* verdicts: Slack's 200 sent; a revoked hook dropped; throttling retried */
    assert_int_equal(sy_sink_slack.verdict(NULL, 200, "ok", 2), SY_SINK_SENT);
    assert_int_equal(sy_sink_slack.verdict(NULL, 404, "no_service", 10), SY_SINK_DROP);
    assert_int_equal(sy_sink_slack.verdict(NULL, 400, "invalid_payload", 15), SY_SINK_DROP);
    assert_int_equal(sy_sink_slack.verdict(NULL, 429, "", 0), SY_SINK_RETRY);
    assert_int_equal(sy_sink_slack.verdict(NULL, 0, NULL, 0), SY_SINK_RETRY);
    assert_int_equal(sy_sink_slack.verdict(NULL, 503, "", 0), SY_SINK_RETRY);
}

/* The dedup table is bounded: many distinct keys never grow it, and the
 * oldest are forgotten first. */
static void test_dedup_bounded(void **state)
{
    (void)state;
    install_default();
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    char key[32];
    for (int i = 0; i < 3 * SY_SLACK_DEDUP_SLOTS; i++) {
        snprintf(key, sizeof key, "k%d", i);
        assert_int_equal(sy_slack_prepare(SY_ALERT_DB_EXCEPTIONS, key, "x", NOW, &b), 1);
    }
    /* the most recent ones are still remembered, the first ones not */
    snprintf(key, sizeof key, "k%d", 3 * SY_SLACK_DEDUP_SLOTS - 1);
    assert_int_equal(sy_slack_prepare(SY_ALERT_DB_EXCEPTIONS, key, "x", NOW, &b), 0);
    assert_int_equal(sy_slack_prepare(SY_ALERT_DB_EXCEPTIONS, "k0", "x", NOW, &b), 1);
    sy_buf_free(&b);
    sy_slack_install(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_defaults_and_filters),
        cmocka_unit_test(test_message_and_dedup),
        cmocka_unit_test(test_hostile_text),
        cmocka_unit_test(test_failure_alerted_once),
        cmocka_unit_test(test_redaction_and_truncation),
        cmocka_unit_test(test_slow_response),
        cmocka_unit_test(test_outage),
        cmocka_unit_test(test_raw_and_open),
        cmocka_unit_test(test_dedup_bounded),
    };
    return cmocka_run_group_tests_name("slack", tests, NULL, NULL);
}
