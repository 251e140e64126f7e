/* fuzz_slack.c - libFuzzer harness for Slack alerting (src/logging/sinks/slack.c):
 * the input, split at NUL bytes, is general_settings.alert_types,
 * alerting_args, an alert's text and a failed call's error message. The
 * settings parser must never crash, and every Slack body the alert path and
 * the sink's encode produce must be one JSON object {"text": string} (json-c
 * is the oracle) whatever bytes the texts hold. */
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "logging/logging.h"
#include "logging/sinks/slack.h"

static void check_body(const char *p, size_t n)
{
    json_tokener *tok = json_tokener_new();
    json_object *o = json_tokener_parse_ex(tok, p, (int)n);
    int ok = json_tokener_get_error(tok) == json_tokener_success && o && json_object_is_type(o, json_type_object);
    json_object *t = NULL;
    ok = ok && json_object_object_get_ex(o, "text", &t) && json_object_is_type(t, json_type_string);
    json_object_put(o);
    json_tokener_free(tok);
    if (!ok)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    const char *part[4] = {"", "", "", ""};
    size_t k = 0, at = 0;
    for (size_t i = 0; i <= size && k < 4; i++)
        if (i == size || s[i] == 0) {
            part[k++] = s + at;
            at = i + 1;
        }
    struct sy_logconf lc;
    memset(&lc, 0, sizeof lc);
    lc.alerting_slack = 1;
    lc.alert_types = part[0][0] ? part[0] : NULL;
    lc.alerting_args = part[1][0] ? part[1] : NULL;
    lc.alerting_threshold_s = 0.01;
    struct sy_slack_settings st;
    char err[256], quiet[128];
    if (sy_slack_parse(&lc, &st, quiet, sizeof quiet, err, sizeof err) != 0) {
        /* fall back to every alert, to exercise the rest */
        lc.alert_types = NULL;
        lc.alerting_args = NULL;
        if (sy_slack_parse(&lc, &st, NULL, 0, err, sizeof err) != 0)
            abort();
    }
    st.mask = (1u << SY_ALERT__COUNT) - 1;
    st.minor_outage = 1;
    sy_slack_install(&st);
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    if (sy_slack_prepare(SY_ALERT_DB_EXCEPTIONS, part[2], part[2], 1e9, &b))
        check_body(b.p, b.len);
    sy_buf_free(&b);

    static const char url[] = "http://127.0.0.1:9/hook";
    setenv("SLACK_WEBHOOK_URL", url, 1);
    lc.alert_types = NULL;
    lc.alerting_args = NULL;
    void *inst = sy_sink_slack.open(&lc, NULL, err, sizeof err);
    if (!inst)
        abort();
    struct sy_logattempt a = {.model_id = part[2], .model = part[3], .api_base = part[2], .status = 502, .error = "x"};
    struct sy_logrec r;
    memset(&r, 0, sizeof r);
    r.flags = SY_LOGREC_FAILURE;
    r.model = part[3];
    r.model_group = part[2];
    r.key_alias = part[3];
    r.error_class = part[2];
    r.error_message = part[3];
    r.attempts = &a;
    r.nattempts = 1;
    r.end_s = 1e9;
    struct sy_logrec *p = &r;
    struct sy_sink_req out[SY_SINK_MAX_REQS];
    size_t nout = 0;
    if (sy_sink_slack.encode(inst, &p, 1, out, &nout) == 0)
        for (size_t i = 0; i < nout; i++) {
            check_body(out[i].body.p, out[i].body.len);
            sy_sink_req_free(&out[i]);
        }
    sy_sink_slack.close(inst);
    free(s);
    return 0;
}
