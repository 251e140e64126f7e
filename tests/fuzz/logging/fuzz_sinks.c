/* fuzz_sinks.c - the langfuse and datadog sinks on arbitrary records and answers.
 *
 * Input: flags byte, then payload NUL request-metadata NUL answer. The
 * payload (StandardLoggingPayload text) and the request's metadata are what
 * the sinks parse; neither has to be valid JSON. Every request encode()
 * produces must be valid JSON (json-c parses it) with a URL and headers; the
 * verdicts take the answer under several statuses without crashing.
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "logging/logging.h"

extern const struct sy_sink_ops sy_sink_langfuse, sy_sink_datadog;

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

static void run(const struct sy_sink_ops *ops, void *inst, struct sy_logrec *r, const char *ans, size_t an)
{
    struct sy_sink_req out[SY_SINK_MAX_REQS];
    memset(out, 0, sizeof out);
    size_t nout = 0;
    struct sy_logrec *recs[2] = {r, r};
    if (ops->encode(inst, recs, 2, out, &nout) == 0) {
        if (nout > SY_SINK_MAX_REQS)
            abort();
        for (size_t i = 0; i < nout; i++) {
            if (!out[i].url || !out[i].body.p || !out[i].headers.p)
                abort();
            json_object *j = json_tokener_parse(out[i].body.p);
            if (!j)
                abort();
            json_object_put(j);
            sy_sink_req_free(&out[i]);
        }
    } else if (nout) {
        abort();
    }
    static const int statuses[] = {0, 200, 207, 401, 413, 429, 500};
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        int v = ops->verdict(inst, statuses[i], ans, an);
        if (v != SY_SINK_SENT && v != SY_SINK_RETRY && v != SY_SINK_DROP)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static void *lf, *dd;
    if (!lf) {
        setenv("LANGFUSE_PUBLIC_KEY", "pk", 1);
        setenv("LANGFUSE_SECRET_KEY", "sk", 1);
        setenv("LANGFUSE_HOST", "http://127.0.0.1:1", 1);
        setenv("DD_API_KEY", "k", 1);
        setenv("DD_SITE", "datadoghq.com", 1);
        char err[256];
        struct sy_logconf lc = {0};
        lf = sy_sink_langfuse.open(&lc, NULL, err, sizeof err);
        dd = sy_sink_datadog.open(&lc, NULL, err, sizeof err);
        if (!lf || !dd)
            abort();
    }
    if (size < 1)
        return 0;
    char *buf = malloc(size + 2);
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = 0;
    buf[size] = 0;
    buf[size + 1] = 0;
    char *payload = buf, *meta = payload + strlen(payload) + 1;
    if (meta > buf + size - 1)
        meta = buf + size;
    char *ans = meta + strlen(meta) + 1;
    if (ans > buf + size)
        ans = buf + size + 1;
    struct sy_logrec r;
    memset(&r, 0, sizeof r);
    r.flags = data[0] & (SY_LOGREC_FAILURE | SY_LOGREC_NO_MESSAGES | SY_LOGREC_REDACT_KEY | SY_LOGREC_COST_KNOWN |
                         SY_LOGREC_CACHE_HIT);
    r.id = "chatcmpl-1";
    r.call_id = "call-1";
    r.call_type = (data[0] & 128) ? "aembedding" : "acompletion";
    r.tags = meta;
    r.request_metadata = meta;
    r.payload = payload;
    r.payload_len = strlen(payload);
    r.start_s = 1e9;
    r.end_s = 1e9 + 1;
    r.cost = 1.5;
    run(&sy_sink_langfuse, lf, &r, ans, strlen(ans));
    run(&sy_sink_datadog, dd, &r, ans, strlen(ans));
    free(buf);
    return 0;
}
