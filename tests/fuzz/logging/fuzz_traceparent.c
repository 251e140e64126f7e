/* fuzz_traceparent.c - the OpenTelemetry sink's W3C traceparent parser and
 * its span encoding on arbitrary bytes (src/logging/sinks/otel.c, otlp.c).
 *
 * The input up to the first newline is a traceparent: the parser's verdict
 * must equal an independent one (POSIX regex of OpenTelemetry Python's
 * TraceContextTextMapPropagator: "^[ \t]*(vv)-(32 hex)-(16 hex)-(2 hex)(-.*)?[ \t]*$",
 * version ff and version 00 with a tail invalid, zero ids invalid), and an
 * accepted header's ids must be the hex it holds. Then a record carrying that
 * traceparent, with the rest of the input as its request body, its answer and
 * its StandardLoggingPayload, is encoded in protobuf and in OTLP/JSON: no
 * crash, and the JSON parses.
 *
 * Built from the sink's sources (tests/fuzz/meson.build), so the two engine
 * functions the sink calls are defined here.
 */
#include <json-c/json.h>
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/hex.h"
#include "logging/logging.h"
#include "logging/sinks/otel.h"
#include "logging/sinks/otlp.h"

const char *sy_log_payload(struct sy_logrec *rec, size_t *len)
{
    if (len)
        *len = rec->payload_len;
    return rec->payload;
}

void sy_sink_req_free(struct sy_sink_req *r)
{
    free(r->url);
    sy_buf_free(&r->headers);
    sy_buf_free(&r->body);
}

static regex_t re;
static void *inst;

static int oracle(const char *s, uint8_t trace[16], uint8_t span[8])
{
    regmatch_t m[6];
    if (regexec(&re, s, 6, m, 0))
        return -1;
    if (!strncmp(s + m[1].rm_so, "ff", 2))
        return -1;
    if (!strncmp(s + m[1].rm_so, "00", 2) && m[5].rm_so >= 0)
        return -1;
    sy_hex_decode(trace, s + m[2].rm_so, 16);
    sy_hex_decode(span, s + m[3].rm_so, 8);
    static const uint8_t z[16];
    if (!memcmp(trace, z, 16) || !memcmp(span, z, 8))
        return -1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!inst) {
        if (regcomp(&re, "^[ \t]*([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?[ \t]*$", REG_EXTENDED))
            abort();
        static struct sy_logconf lc;
        char err[256];
        setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318", 1);
        inst = sy_otel_open(&lc, err, sizeof err);
        if (!inst)
            abort();
    }
    const uint8_t *nl = memchr(data, '\n', size);
    size_t tn = nl ? (size_t)(nl - data) : size;
    char *tp = malloc(tn + 1);
    memcpy(tp, data, tn);
    tp[tn] = 0;
    struct sy_traceparent got;
    int rc = sy_otel_traceparent(tp, tn, &got);
    if (!memchr(tp, 0, tn)) { /* the regex sees a C string */
        uint8_t t[16], s[8];
        int want = oracle(tp, t, s);
        if (rc != want)
            abort();
        if (!rc && (memcmp(t, got.trace_id, 16) || memcmp(s, got.span_id, 8)))
            abort();
    }

    /* the same text as a record's traceparent, the rest as its JSON */
    size_t rn = nl ? size - tn - 1 : 0;
    char *rest = malloc(rn + 1);
    if (rn)
        memcpy(rest, nl + 1, rn);
    rest[rn] = 0;
    struct sy_logattempt a = {"d", "openai/m", "openai", NULL, 1.5, 2.5, 500, "InternalServerError"};
    struct sy_logrec r;
    memset(&r, 0, sizeof r);
    r.traceparent = memchr(tp, 0, tn) ? NULL : tp;
    r.call_type = "acompletion";
    r.flags = (data[0] & 1 ? SY_LOGREC_FAILURE : 0) | (size > 1 && data[1] & 1 ? SY_LOGREC_STREAM : 0);
    r.error_class = "InternalServerError";
    r.start_s = 1.0;
    r.end_s = 3.0;
    r.request = rest;
    r.request_len = rn;
    r.response = rest;
    r.response_len = rn;
    r.payload = rest;
    r.payload_len = rn;
    r.attempts = &a;
    r.nattempts = 1;
    for (int json = 0; json < 2; json++) {
        struct sy_otlp_batch b;
        sy_otel_batch_init(inst, &b);
        sy_otel_record(inst, &b, &r);
        struct sy_buf out;
        sy_buf_init(&out, 64u << 20);
        int e = json ? sy_otlp_json(&b, &out) : sy_otlp_proto(&b, &out);
        if (!e && json) {
            struct json_object *o = json_tokener_parse(out.p);
            if (!o)
                abort();
            json_object_put(o);
        }
        sy_buf_free(&out);
        sy_otlp_batch_free(&b);
    }
    free(rest);
    free(tp);
    return 0;
}
