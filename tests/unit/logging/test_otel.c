/* test_otel.c - the OpenTelemetry sink (src/logging/sinks/otel.c, otlp.c)
 * without a network: records built by hand go through the sink's encode(),
 * and the bytes are read back with a small protobuf reader written here from
 * opentelemetry-proto's field numbers (so a wrong field number or wire type in
 * the writer fails here, not only at a collector), and the OTLP/JSON with
 * json-c. The W3C traceparent parser and the OTEL_* settings have their edge
 * cases here; tests/logging/otel.test.mjs decodes the same bytes with the
 * official definitions through the real binary.
 *
 * Built from the sink's own sources (meson.build), so the record's
 * StandardLoggingPayload is the text each test puts in rec.payload (the
 * payload builder has its own tests): sy_log_payload below is never reached
 * when it is set, and sy_sink_req_free frees what encode() built.
 */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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
    memset(r, 0, sizeof *r);
}

/* ---- a protobuf reader ------------------------------------------------------ */

struct pbf {
    unsigned field, wt;
    uint64_t v;       /* varint, fixed32, fixed64 */
    const uint8_t *p; /* length-delimited */
    size_t n;
};

/* The fields of msg[0..n) into f (at most max); -1 on malformed bytes. */
static int pb_read(const uint8_t *m, size_t n, struct pbf *f, size_t max)
{
    size_t i = 0, k = 0;
    while (i < n) {
        uint64_t tag = 0;
        int sh = 0;
        do {
            if (i >= n || sh > 63)
                return -1;
            tag |= (uint64_t)(m[i] & 0x7f) << sh;
            sh += 7;
        } while (m[i++] & 0x80);
        if (k == max)
            return -1;
        struct pbf *x = &f[k++];
        memset(x, 0, sizeof *x);
        x->field = (unsigned)(tag >> 3);
        x->wt = (unsigned)(tag & 7);
        if (x->field == 0)
            return -1;
        switch (x->wt) {
        case 0:
            sh = 0;
            do {
                if (i >= n || sh > 63)
                    return -1;
                x->v |= (uint64_t)(m[i] & 0x7f) << sh;
                sh += 7;
            } while (m[i++] & 0x80);
            break;
        case 1:
            if (n - i < 8)
                return -1;
            for (int b = 0; b < 8; b++)
                x->v |= (uint64_t)m[i + b] << (8 * b);
            i += 8;
            break;
        case 5:
            if (n - i < 4)
                return -1;
            for (int b = 0; b < 4; b++)
                x->v |= (uint64_t)m[i + b] << (8 * b);
            i += 4;
            break;
        case 2: {
            uint64_t len = 0;
            sh = 0;
            do {
                if (i >= n || sh > 63)
                    return -1;
                len |= (uint64_t)(m[i] & 0x7f) << sh;
                sh += 7;
            } while (m[i++] & 0x80);
            if (len > n - i)
                return -1;
            x->p = m + i;
            x->n = (size_t)len;
            i += (size_t)len;
            break;
        }
        default: return -1;
        }
    }
    return (int)k;
}

#define MAXF 4096
static struct pbf *fields(const uint8_t *m, size_t n, int *count)
{
    struct pbf *f = calloc(MAXF, sizeof *f);
    assert_non_null(f);
    *count = pb_read(m, n, f, MAXF);
    assert_true(*count >= 0);
    return f;
}

/* The idx-th occurrence of field in f (wire type checked), or NULL. */
static const struct pbf *nth(const struct pbf *f, int n, unsigned field, unsigned wt, int idx)
{
    for (int i = 0; i < n; i++)
        if (f[i].field == field) {
            assert_int_equal(f[i].wt, wt);
            if (idx-- == 0)
                return &f[i];
        }
    return NULL;
}

static int count(const struct pbf *f, int n, unsigned field)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += f[i].field == field;
    return c;
}

/* A decoded span: what the tests look at. */
struct span {
    uint8_t trace[16], id[8], parent[8];
    int has_parent;
    char name[128];
    uint64_t kind, start, end, flags, status, nevents;
    char status_msg[128];
    const struct pbf *f;
    int nf;
};

/* The AnyValue of attribute key in span fields (field 9) or event fields (3). */
static const struct pbf *attr(const struct pbf *f, int n, unsigned field, const char *key, int *vtype)
{
    for (int i = 0; i < n; i++) {
        if (f[i].field != field)
            continue;
        assert_int_equal(f[i].wt, 2);
        struct pbf kv[4];
        int k = pb_read(f[i].p, f[i].n, kv, 4);
        assert_int_equal(k, 2);
        assert_int_equal(kv[0].field, 1); /* key */
        assert_int_equal(kv[1].field, 2); /* value */
        if (kv[0].n != strlen(key) || memcmp(kv[0].p, key, kv[0].n))
            continue;
        static struct pbf v[2];
        int m = pb_read(kv[1].p, kv[1].n, v, 2);
        assert_int_equal(m, 1); /* exactly one member of the oneof */
        *vtype = (int)v[0].field;
        return &v[0];
    }
    return NULL;
}

static char *attr_str(const struct span *s, const char *key)
{
    int t = 0;
    const struct pbf *v = attr(s->f, s->nf, 9, key, &t);
    if (!v)
        return NULL;
    assert_int_equal(t, 1);
    assert_int_equal(v->wt, 2);
    return strndup((const char *)v->p, v->n);
}

static int64_t attr_int(const struct span *s, const char *key)
{
    int t = 0;
    const struct pbf *v = attr(s->f, s->nf, 9, key, &t);
    assert_non_null(v);
    assert_int_equal(t, 3);
    assert_int_equal(v->wt, 0);
    return (int64_t)v->v;
}

static int has_attr(const struct span *s, const char *key)
{
    int t;
    return attr(s->f, s->nf, 9, key, &t) != NULL;
}

static void read_span(const struct pbf *sf, struct span *s)
{
    memset(s, 0, sizeof *s);
    s->f = fields(sf->p, sf->n, &s->nf);
    const struct pbf *x = nth(s->f, s->nf, 1, 2, 0);
    assert_non_null(x);
    assert_int_equal(x->n, 16);
    memcpy(s->trace, x->p, 16);
    x = nth(s->f, s->nf, 2, 2, 0);
    assert_non_null(x);
    assert_int_equal(x->n, 8);
    memcpy(s->id, x->p, 8);
    if ((x = nth(s->f, s->nf, 4, 2, 0))) {
        assert_int_equal(x->n, 8);
        memcpy(s->parent, x->p, 8);
        s->has_parent = 1;
    }
    x = nth(s->f, s->nf, 5, 2, 0);
    assert_non_null(x);
    assert_true(x->n < sizeof s->name);
    memcpy(s->name, x->p, x->n);
    if ((x = nth(s->f, s->nf, 6, 0, 0)))
        s->kind = x->v;
    x = nth(s->f, s->nf, 7, 1, 0);
    assert_non_null(x);
    s->start = x->v;
    x = nth(s->f, s->nf, 8, 1, 0);
    assert_non_null(x);
    s->end = x->v;
    if ((x = nth(s->f, s->nf, 16, 5, 0)))
        s->flags = x->v;
    s->nevents = (uint64_t)count(s->f, s->nf, 11);
    if ((x = nth(s->f, s->nf, 15, 2, 0))) {
        struct pbf st[3];
        int k = pb_read(x->p, x->n, st, 3);
        assert_true(k >= 0);
        for (int i = 0; i < k; i++) {
            if (st[i].field == 3) {
                assert_int_equal(st[i].wt, 0);
                s->status = st[i].v;
            } else if (st[i].field == 2) {
                assert_int_equal(st[i].wt, 2);
                assert_true(st[i].n < sizeof s->status_msg);
                memcpy(s->status_msg, st[i].p, st[i].n);
            } else {
                fail_msg("Status has field %u", st[i].field);
            }
        }
    }
    /* every field of a Span is one the writer means to write */
    for (int i = 0; i < s->nf; i++) {
        unsigned f = s->f[i].field;
        assert_true(f == 1 || f == 2 || f == 4 || f == 5 || f == 6 || f == 7 || f == 8 || f == 9 || f == 11 ||
                    f == 15 || f == 16);
    }
}

/* A decoded request: resource attributes, scope name, spans. */
struct req {
    struct pbf *top, *rs, *res, *ss, *scope;
    int ntop, nrs, nres, nss, nscope;
    struct span spans[64];
    int nspans;
};

static void read_req(const struct sy_buf *body, struct req *q)
{
    memset(q, 0, sizeof *q);
    q->top = fields((const uint8_t *)body->p, body->len, &q->ntop);
    assert_int_equal(q->ntop, 1);
    assert_int_equal(q->top[0].field, 1);
    assert_int_equal(q->top[0].wt, 2);
    q->rs = fields(q->top[0].p, q->top[0].n, &q->nrs);
    const struct pbf *r = nth(q->rs, q->nrs, 1, 2, 0);
    assert_non_null(r);
    q->res = fields(r->p, r->n, &q->nres);
    const struct pbf *ss = nth(q->rs, q->nrs, 2, 2, 0);
    assert_non_null(ss);
    assert_int_equal(count(q->rs, q->nrs, 2), 1);
    q->ss = fields(ss->p, ss->n, &q->nss);
    const struct pbf *sc = nth(q->ss, q->nss, 1, 2, 0);
    assert_non_null(sc);
    q->scope = fields(sc->p, sc->n, &q->nscope);
    for (int i = 0; i < q->nss; i++)
        if (q->ss[i].field == 2) {
            assert_true(q->nspans < 64);
            read_span(&q->ss[i], &q->spans[q->nspans++]);
        }
}

static void free_req(struct req *q)
{
    for (int i = 0; i < q->nspans; i++)
        free((void *)q->spans[i].f);
    free(q->top);
    free(q->rs);
    free(q->res);
    free(q->ss);
    free(q->scope);
}

static char *res_str(const struct req *q, const char *key)
{
    int t = 0;
    const struct pbf *v = attr(q->res, q->nres, 1, key, &t);
    if (!v)
        return NULL;
    assert_int_equal(t, 1);
    return strndup((const char *)v->p, v->n);
}

/* ---- fixtures ------------------------------------------------------------------ */

static const char *const otel_vars[] = {
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_ENDPOINT",
    "OTEL_EXPORTER",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_HEADERS",
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_ENVIRONMENT_NAME",
    "OTEL_MODEL_ID",
    "OTEL_TRACER_NAME",
    "USE_OTEL_LITELLM_REQUEST_SPAN",
};

static void clear_env(void)
{
    for (size_t i = 0; i < sizeof otel_vars / sizeof *otel_vars; i++)
        unsetenv(otel_vars[i]);
}

static struct sy_logconf lc;

static void *open_env(void)
{
    char err[256] = "";
    void *o = sy_otel_open(&lc, err, sizeof err);
    if (!o)
        fail_msg("open: %s", err);
    return o;
}

static const char payload_ok[] =
    "{\"id\":\"chatcmpl-abc\",\"call_type\":\"acompletion\",\"model\":\"gpt-4o\","
    "\"metadata\":{\"user_api_key_hash\":\"88dc28\",\"user_api_key_alias\":null,\"user_api_key_team_id\":\"team-1\","
    "\"spend_logs_metadata\":{\"a\":1,\"b\":[true,null,\"x'y\"]},\"requester_ip_address\":\"127.0.0.1\","
    "\"user_api_key_spend\":0.5},"
    "\"hidden_params\":{\"model_id\":\"dep-1\",\"api_base\":\"http://up/v1\"},"
    "\"model_parameters\":{\"max_tokens\":64,\"temperature\":0.5,\"top_p\":0,\"user\":\"u-9\"},"
    "\"response\":{\"id\":\"chatcmpl-abc\",\"model\":\"gpt-4o-2024-08-06\",\"choices\":[{\"index\":0,"
    "\"finish_reason\":\"stop\",\"message\":{\"role\":\"assistant\",\"content\":\"Hello there\"}}]}}";

static const char request_ok[] =
    "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
    "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}],\"max_tokens\":64,"
    "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_w\",\"description\":\"weather\","
    "\"parameters\":{\"type\":\"object\"}}}]}";

static struct sy_logattempt attempts2[] = {
    {"dep-0", "openai/gpt-4o", "openai", "http://a/v1", 1700000000.25, 1700000000.5, 429, "RateLimitError"},
    {"dep-1", "openai/gpt-4o", "openai", "http://b/v1", 1700000000.5, 1700000001.0, 200, NULL},
};

static void rec_ok(struct sy_logrec *r)
{
    memset(r, 0, sizeof *r);
    r->id = "chatcmpl-abc";
    r->call_id = "call-1";
    r->call_type = "acompletion";
    r->route = "/v1/chat/completions";
    r->http_status = 200;
    r->flags = SY_LOGREC_COST_KNOWN;
    r->model = "gpt-4o";
    r->model_group = "gpt-4o";
    r->upstream_model = "openai/gpt-4o";
    r->provider = "openai";
    r->prompt_tokens = 12;
    r->completion_tokens = 5;
    r->cost = 0.00042;
    r->start_s = 1700000000.125;
    r->api_start_s = 1700000000.25;
    r->completion_start_s = 1700000001.0;
    r->end_s = 1700000001.0;
    r->request = request_ok;
    r->request_len = strlen(request_ok);
    r->attempts = attempts2;
    r->nattempts = 2;
    r->seq = 7;
    r->payload = (char *)payload_ok;
    r->payload_len = strlen(payload_ok);
}

/* encode() of n records, one request expected; its body read back. */
static void encode_one(void *o, struct sy_logrec **recs, size_t n, struct sy_sink_req *out)
{
    size_t nout = 99;
    assert_int_equal(sy_sink_otel.encode(o, recs, n, out, &nout), 0);
    assert_int_equal(nout, 1);
    assert_string_equal(out->method, "POST");
}

/* ---- tests ------------------------------------------------------------------------ */

static void traceparent(void **state)
{
    (void)state;
    struct sy_traceparent tp;
    const char *ok = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    assert_int_equal(sy_otel_traceparent(ok, strlen(ok), &tp), 0);
    assert_int_equal(tp.trace_id[0], 0x0a);
    assert_int_equal(tp.trace_id[15], 0x9c);
    assert_int_equal(tp.span_id[0], 0xb7);
    assert_int_equal(tp.span_id[7], 0x31);
    assert_int_equal(tp.flags, 1);
    const char *blanks = " \t00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00 ";
    assert_int_equal(sy_otel_traceparent(blanks, strlen(blanks), &tp), 0);
    assert_int_equal(tp.flags, 0);
    /* a later version may carry more after a '-' */
    const char *v1 = "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-what-ever";
    assert_int_equal(sy_otel_traceparent(v1, strlen(v1), &tp), 0);
    static const char *const bad[] = {
        "",
        "00",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0",               /* short */
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x",            /* 00 with more */
        "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x",             /* more without '-' */
        "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",              /* version ff */
        "00-00000000000000000000000000000000-b7ad6b7169203331-01",              /* zero trace */
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",              /* zero span */
        "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",              /* upper case */
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0g",              /* not hex */
        "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",              /* separator */
        "00-0af7651916cd43dd8448eb211c80319-cb7ad6b7169203331-01",              /* misplaced '-' */
        "0x-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",              /* version not hex */
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\nX-Evil: 1", /* a header smuggled in */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(sy_otel_traceparent(bad[i], strlen(bad[i]), &tp), -1);
    assert_int_equal(sy_otel_traceparent(NULL, 0, &tp), -1);
    /* a NUL inside: the length counts, not the C string */
    char nul[56];
    memcpy(nul, ok, 55);
    nul[10] = 0;
    assert_int_equal(sy_otel_traceparent(nul, 55, &tp), -1);
}

static void traces_url(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"http://c:4318", "http://c:4318/v1/traces"},
        {"http://c:4318/", "http://c:4318/v1/traces"},
        {"http://c:4318/v1", "http://c:4318/v1/traces"},
        {"http://c:4318/v1/traces", "http://c:4318/v1/traces"},
        {"http://c:4318/v1/traces/", "http://c:4318/v1/traces"},
        {"http://c:4318/v1/logs", "http://c:4318/v1/traces"},
        {"http://c:4318/v1/metrics", "http://c:4318/v1/traces"},
        {"https://api.honeycomb.io/otlp", "https://api.honeycomb.io/otlp/v1/traces"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *u = sy_otel_traces_url(cases[i][0]);
        assert_string_equal(u, cases[i][1]);
        free(u);
    }
}

static void settings(void **state)
{
    (void)state;
    clear_env();
    void *o = open_env();
    assert_string_equal(sy_otel_url(o), "http://localhost:4318/v1/traces");
    assert_string_equal(sy_otel_headers(o), "Content-Type: application/x-protobuf\r\n");
    sy_otel_close(o);

    /* the signal's variables win over the general ones; values percent-decoded */
    setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://general:4318", 1);
    setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:9999/custom/path", 1);
    setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-general=1", 1);
    setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS",
           " api-key = abc%3D%3D ,x-team=a%2Cb,novalue,=nokey,bad name=1,x-inject=a%0D%0AX-Evil: "
           "1,content-type=text/plain",
           1);
    setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", 1);
    setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json", 1);
    o = open_env();
    assert_string_equal(sy_otel_url(o), "http://traces:9999/custom/path");
    assert_string_equal(sy_otel_headers(o), "Content-Type: application/json\r\napi-key: abc==\r\nx-team: a,b\r\n");
    sy_otel_close(o);

    /* LiteLLM's own names */
    clear_env();
    setenv("OTEL_ENDPOINT", "https://api.honeycomb.io/v1/traces", 1);
    setenv("OTEL_HEADERS", "x-honeycomb-team=B85Y", 1);
    setenv("OTEL_EXPORTER", "otlp_http", 1);
    o = open_env();
    assert_string_equal(sy_otel_url(o), "https://api.honeycomb.io/v1/traces");
    assert_string_equal(sy_otel_headers(o), "Content-Type: application/x-protobuf\r\nx-honeycomb-team: B85Y\r\n");
    sy_otel_close(o);

    /* grpc: a warning, then http/protobuf */
    setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", 1);
    o = open_env();
    assert_string_equal(sy_otel_headers(o), "Content-Type: application/x-protobuf\r\nx-honeycomb-team: B85Y\r\n");
    sy_otel_close(o);

    /* console with an endpoint: LiteLLM sends to the endpoint; without one, off with a reason */
    clear_env();
    setenv("OTEL_EXPORTER", "console", 1);
    char err[256] = "";
    assert_null(sy_otel_open(&lc, err, sizeof err));
    assert_non_null(strstr(err, "OTEL_EXPORTER_OTLP_ENDPOINT"));
    setenv("OTEL_ENDPOINT", "http://c:4318", 1);
    o = open_env();
    assert_string_equal(sy_otel_url(o), "http://c:4318/v1/traces");
    sy_otel_close(o);

    /* an endpoint that is not an http(s) URL */
    clear_env();
    setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "file:///etc/passwd", 1);
    err[0] = 0;
    assert_null(sy_otel_open(&lc, err, sizeof err));
    assert_non_null(strstr(err, "http"));
    clear_env();
}

static void resource(void **state)
{
    (void)state;
    clear_env();
    setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-list,team=ml%20ops,deployment.environment=staging", 1);
    setenv("OTEL_TRACER_NAME", "my-tracer", 1);
    void *o = open_env();
    struct sy_logrec r;
    rec_ok(&r);
    struct sy_logrec *recs[] = {&r};
    struct sy_sink_req out;
    encode_one(o, recs, 1, &out);
    struct req q;
    read_req(&out.body, &q);
    char *s;
    assert_string_equal(s = res_str(&q, "service.name"), "from-list");
    free(s);
    assert_string_equal(s = res_str(&q, "model_id"), "from-list");
    free(s);
    assert_string_equal(s = res_str(&q, "team"), "ml ops");
    free(s);
    assert_string_equal(s = res_str(&q, "deployment.environment"), "staging");
    free(s);
    assert_string_equal(s = res_str(&q, "telemetry.sdk.name"), "switchyard");
    free(s);
    const struct pbf *name = nth(q.scope, q.nscope, 1, 2, 0);
    assert_non_null(name);
    assert_int_equal(name->n, 9);
    assert_memory_equal(name->p, "my-tracer", 9);
    free_req(&q);
    sy_sink_req_free(&out);
    sy_otel_close(o);

    /* OTEL_SERVICE_NAME wins over the list's; default "litellm" */
    setenv("OTEL_SERVICE_NAME", "gw", 1);
    o = open_env();
    encode_one(o, recs, 1, &out);
    read_req(&out.body, &q);
    assert_string_equal(s = res_str(&q, "service.name"), "gw");
    free(s);
    free_req(&q);
    sy_sink_req_free(&out);
    sy_otel_close(o);
    clear_env();
    o = open_env();
    encode_one(o, recs, 1, &out);
    read_req(&out.body, &q);
    assert_string_equal(s = res_str(&q, "service.name"), "litellm");
    free(s);
    assert_string_equal(s = res_str(&q, "deployment.environment"), "production");
    free(s);
    name = nth(q.scope, q.nscope, 1, 2, 0);
    assert_int_equal(name->n, 7);
    assert_memory_equal(name->p, "litellm", 7);
    free_req(&q);
    sy_sink_req_free(&out);
    sy_otel_close(o);
}

static void success_spans(void **state)
{
    (void)state;
    clear_env();
    setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318", 1);
    void *o = open_env();
    struct sy_logrec r;
    rec_ok(&r);
    struct sy_logrec *recs[] = {&r};
    struct sy_sink_req out;
    encode_one(o, recs, 1, &out);
    assert_string_equal(out.url, "http://collector:4318/v1/traces");
    assert_non_null(strstr(out.headers.p, "Content-Type: application/x-protobuf\r\n"));
    struct req q;
    read_req(&out.body, &q);
    assert_int_equal(q.nspans, 3);
    struct span *srv = &q.spans[0], *a0 = &q.spans[1], *a1 = &q.spans[2];
    assert_string_equal(srv->name, "Received Proxy Server Request");
    assert_int_equal(srv->kind, SY_OTLP_KIND_SERVER);
    assert_int_equal(srv->has_parent, 0);
    assert_int_equal(srv->start, 1700000000125000000ull);
    assert_int_equal(srv->end, 1700000001000000000ull);
    assert_int_equal(srv->status, SY_OTLP_STATUS_OK);
    assert_int_equal(srv->flags, SY_OTLP_FLAG_SAMPLED | SY_OTLP_FLAG_HAS_IS_REMOTE);
    assert_int_equal(srv->nevents, 0);
    /* LiteLLM's attributes */
    char *s;
    assert_string_equal(s = attr_str(srv, "metadata.user_api_key_hash"), "88dc28");
    free(s);
    assert_string_equal(s = attr_str(srv, "metadata.user_api_key_alias"), ""); /* None -> "" */
    free(s);
    assert_string_equal(s = attr_str(srv, "metadata.spend_logs_metadata"), "{'a': 1, 'b': [True, None, \"x'y\"]}");
    free(s);
    int t = 0;
    const struct pbf *v = attr(srv->f, srv->nf, 9, "metadata.user_api_key_spend", &t);
    assert_non_null(v);
    assert_int_equal(t, 4); /* double */
    assert_int_equal(v->wt, 1);
    double d;
    memcpy(&d, &v->v, 8);
    assert_true(d == 0.5);
    assert_string_equal(s = attr_str(srv, "hidden_params"), "{\"model_id\":\"dep-1\",\"api_base\":\"http://up/v1\"}");
    free(s);
    assert_string_equal(s = attr_str(srv, "gen_ai.request.model"), "gpt-4o");
    free(s);
    assert_string_equal(s = attr_str(srv, "llm.request.type"), "acompletion");
    free(s);
    assert_string_equal(s = attr_str(srv, "gen_ai.system"), "openai");
    free(s);
    assert_string_equal(s = attr_str(srv, "gen_ai.operation.name"), "chat");
    free(s);
    assert_int_equal(attr_int(srv, "gen_ai.request.max_tokens"), 64);
    assert_true(has_attr(srv, "gen_ai.request.temperature"));
    assert_false(has_attr(srv, "gen_ai.request.top_p")); /* 0: not set, as LiteLLM */
    assert_string_equal(s = attr_str(srv, "llm.is_streaming"), "False");
    free(s);
    assert_string_equal(s = attr_str(srv, "llm.user"), "u-9");
    free(s);
    assert_string_equal(s = attr_str(srv, "gen_ai.response.id"), "chatcmpl-abc");
    free(s);
    assert_string_equal(s = attr_str(srv, "gen_ai.response.model"), "gpt-4o-2024-08-06");
    free(s);
    assert_int_equal(attr_int(srv, "gen_ai.usage.input_tokens"), 12);
    assert_int_equal(attr_int(srv, "gen_ai.usage.output_tokens"), 5);
    assert_int_equal(attr_int(srv, "gen_ai.usage.total_tokens"), 17);
    assert_false(has_attr(srv, "gen_ai.response.time_to_first_token")); /* not a stream */
    /* messages: LiteLLM's OTel GenAI 1.38 shapes */
    s = attr_str(srv, "gen_ai.input.messages");
    assert_non_null(s);
    struct json_object *in = json_tokener_parse(s);
    assert_non_null(in);
    assert_string_equal(json_object_to_json_string_ext(in, JSON_C_TO_STRING_PLAIN),
                        "[{\"role\":\"system\",\"parts\":[{\"type\":\"text\",\"content\":\"be brief\"}]},"
                        "{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"hi\"}]}]");
    json_object_put(in);
    free(s);
    assert_string_equal(s = attr_str(srv, "gen_ai.output.messages"),
                        "[{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"content\":\"Hello there\"}],"
                        "\"finish_reason\":\"stop\"}]");
    free(s);
    assert_string_equal(s = attr_str(srv, "gen_ai.response.finish_reasons"), "[\"stop\"]");
    free(s);
    assert_string_equal(s = attr_str(srv, "llm.request.functions.0.name"), "get_w");
    free(s);
    assert_string_equal(s = attr_str(srv, "llm.request.functions.0.parameters"), "{\"type\":\"object\"}");
    free(s);

    /* one CLIENT child per attempt */
    for (int i = 1; i < 3; i++) {
        struct span *a = &q.spans[i];
        assert_string_equal(a->name, "raw_gen_ai_request");
        assert_int_equal(a->kind, SY_OTLP_KIND_CLIENT);
        assert_memory_equal(a->trace, srv->trace, 16);
        assert_int_equal(a->has_parent, 1);
        assert_memory_equal(a->parent, srv->id, 8);
        assert_memory_not_equal(a->id, srv->id, 8);
        assert_false(has_attr(a, "metadata.user_api_key_hash"));
        assert_string_equal(s = attr_str(a, "gen_ai.request.model"), "gpt-4o");
        free(s);
    }
    assert_memory_not_equal(a0->id, a1->id, 8);
    assert_int_equal(a0->start, 1700000000250000000ull);
    assert_int_equal(a0->end, 1700000000500000000ull);
    assert_int_equal(a0->status, SY_OTLP_STATUS_ERROR);
    assert_string_equal(a0->status_msg, "RateLimitError");
    assert_int_equal(attr_int(a0, "http.response.status_code"), 429);
    assert_string_equal(s = attr_str(a0, "error.type"), "RateLimitError");
    free(s);
    assert_string_equal(s = attr_str(a0, "litellm.model_id"), "dep-0");
    free(s);
    assert_int_equal(a1->status, SY_OTLP_STATUS_OK);
    assert_false(has_attr(a1, "error.type"));
    assert_int_equal(attr_int(a1, "litellm.attempt"), 2);
    free_req(&q);

    /* the same record encoded again (a retry): the same bytes; another record: other ids */
    struct sy_sink_req again;
    encode_one(o, recs, 1, &again);
    assert_int_equal(again.body.len, out.body.len);
    assert_memory_equal(again.body.p, out.body.p, out.body.len);
    sy_sink_req_free(&again);
    struct sy_logrec r2;
    rec_ok(&r2);
    r2.seq = 8;
    struct sy_logrec *recs2[] = {&r, &r2};
    encode_one(o, recs2, 2, &again);
    read_req(&again.body, &q);
    assert_int_equal(q.nspans, 6);
    for (int i = 0; i < 6; i++)
        for (int j = i + 1; j < 6; j++)
            assert_memory_not_equal(q.spans[i].id, q.spans[j].id, 8);
    assert_memory_not_equal(q.spans[0].trace, q.spans[3].trace, 16);
    free_req(&q);
    sy_sink_req_free(&again);
    sy_sink_req_free(&out);
    sy_otel_close(o);
}

static void traceparent_honoured(void **state)
{
    (void)state;
    clear_env();
    setenv("USE_OTEL_LITELLM_REQUEST_SPAN", "true", 1);
    void *o = open_env();
    struct sy_logrec r;
    rec_ok(&r);
    r.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    r.generation_name = "my-gen";
    r.nattempts = 1;
    r.attempts = &attempts2[1];
    struct sy_logrec *recs[] = {&r};
    struct sy_sink_req out;
    encode_one(o, recs, 1, &out);
    struct req q;
    read_req(&out.body, &q);
    assert_int_equal(q.nspans, 3);
    uint8_t tid[16], pid[8];
    sy_hex_decode(tid, "4bf92f3577b34da6a3ce929d0e0e4736", 16);
    sy_hex_decode(pid, "00f067aa0ba902b7", 8);
    struct span *srv = &q.spans[0], *req = &q.spans[1], *raw = &q.spans[2];
    for (int i = 0; i < 3; i++)
        assert_memory_equal(q.spans[i].trace, tid, 16);
    assert_int_equal(srv->has_parent, 1);
    assert_memory_equal(srv->parent, pid, 8);
    assert_int_equal(srv->flags, 0x01 | SY_OTLP_FLAG_HAS_IS_REMOTE | SY_OTLP_FLAG_IS_REMOTE);
    /* the nested layout: the attributes on "litellm_request" (here the generation name) */
    assert_string_equal(req->name, "my-gen");
    assert_int_equal(req->kind, SY_OTLP_KIND_INTERNAL);
    assert_memory_equal(req->parent, srv->id, 8);
    assert_int_equal(req->flags, 0x01 | SY_OTLP_FLAG_HAS_IS_REMOTE);
    assert_true(has_attr(req, "gen_ai.request.model"));
    assert_false(has_attr(srv, "gen_ai.request.model"));
    assert_string_equal(raw->name, "my-gen");
    assert_memory_equal(raw->parent, req->id, 8);
    free_req(&q);
    sy_sink_req_free(&out);

    /* an invalid traceparent: a trace of our own, no parent */
    r.traceparent = "00-00000000000000000000000000000000-00f067aa0ba902b7-01";
    encode_one(o, recs, 1, &out);
    read_req(&out.body, &q);
    assert_int_equal(q.spans[0].has_parent, 0);
    assert_memory_not_equal(q.spans[0].trace, tid, 16);
    free_req(&q);
    sy_sink_req_free(&out);
    sy_otel_close(o);
    clear_env();
}

static void failure_and_redaction(void **state)
{
    (void)state;
    clear_env();
    void *o = open_env();
    static const char payload_fail[] =
        "{\"id\":\"call-9\",\"model\":\"gpt-4o\",\"metadata\":{},\"error_information\":{\"error_code\":\"429\","
        "\"error_class\":\"RateLimitError\",\"llm_provider\":\"openai\"}}";
    struct sy_logrec r;
    rec_ok(&r);
    r.flags = SY_LOGREC_FAILURE | SY_LOGREC_NO_MESSAGES | SY_LOGREC_STREAM;
    r.http_status = 429;
    r.error_class = "RateLimitError";
    r.error_message = "litellm.RateLimitError: slow down";
    r.request = NULL;
    r.request_len = 0;
    r.payload = (char *)payload_fail;
    r.payload_len = strlen(payload_fail);
    r.nattempts = 1;
    r.attempts = attempts2;
    struct sy_logrec *recs[] = {&r};
    struct sy_sink_req out;
    encode_one(o, recs, 1, &out);
    struct req q;
    read_req(&out.body, &q);
    struct span *srv = &q.spans[0];
    assert_int_equal(srv->status, SY_OTLP_STATUS_ERROR);
    assert_int_equal(srv->nevents, 1);
    const struct pbf *ev = nth(srv->f, srv->nf, 11, 2, 0);
    int ne;
    struct pbf *ef = fields(ev->p, ev->n, &ne);
    const struct pbf *en = nth(ef, ne, 2, 2, 0);
    assert_int_equal(en->n, 9);
    assert_memory_equal(en->p, "exception", 9);
    assert_int_equal(nth(ef, ne, 1, 1, 0)->v, 1700000001000000000ull);
    int t;
    const struct pbf *et = attr(ef, ne, 3, "exception.type", &t);
    assert_non_null(et);
    assert_int_equal(et->n, strlen("litellm.exceptions.RateLimitError"));
    assert_memory_equal(et->p, "litellm.exceptions.RateLimitError", et->n);
    assert_non_null(attr(ef, ne, 3, "exception.message", &t));
    free(ef);
    char *s;
    assert_string_equal(s = attr_str(srv, "error.code"), "429");
    free(s);
    assert_string_equal(s = attr_str(srv, "error.type"), "RateLimitError");
    free(s);
    assert_string_equal(s = attr_str(srv, "error.llm_provider"), "openai");
    free(s);
    assert_string_equal(s = attr_str(srv, "llm.is_streaming"), "True");
    free(s);
    assert_false(has_attr(srv, "gen_ai.usage.input_tokens"));
    /* redaction: no content attribute at all */
    for (int i = 0; i < srv->nf; i++) {
        if (srv->f[i].field != 9)
            continue;
        struct pbf kv[2];
        assert_int_equal(pb_read(srv->f[i].p, srv->f[i].n, kv, 2), 2);
        char key[128] = "";
        memcpy(key, kv[0].p, kv[0].n < 127 ? kv[0].n : 127);
        assert_null(strstr(key, "messages"));
        assert_null(strstr(key, "functions"));
        assert_null(strstr(key, "completion"));
        assert_null(strstr(key, "system_instructions"));
    }
    free_req(&q);
    sy_sink_req_free(&out);

    /* a stream that succeeded: time to first token from the first attempt's send */
    rec_ok(&r);
    r.flags |= SY_LOGREC_STREAM | SY_LOGREC_NO_MESSAGES;
    r.completion_start_s = 1700000000.75;
    encode_one(o, recs, 1, &out);
    read_req(&out.body, &q);
    {
        const struct pbf *v = attr(q.spans[0].f, q.spans[0].nf, 9, "gen_ai.response.time_to_first_token", &t);
        assert_non_null(v);
        assert_int_equal(t, 4);
        double d;
        memcpy(&d, &v->v, 8);
        assert_true(d > 0.49 && d < 0.51);
    }
    assert_false(has_attr(&q.spans[0], "gen_ai.input.messages"));
    assert_false(has_attr(&q.spans[0], "gen_ai.output.messages"));
    free_req(&q);
    sy_sink_req_free(&out);
    sy_otel_close(o);
}

static void json_protocol(void **state)
{
    (void)state;
    clear_env();
    setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", 1);
    void *o = open_env();
    struct sy_logrec r;
    rec_ok(&r);
    r.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    struct sy_logrec *recs[] = {&r};
    struct sy_sink_req out;
    encode_one(o, recs, 1, &out);
    assert_non_null(strstr(out.headers.p, "Content-Type: application/json\r\n"));
    struct json_object *j = json_tokener_parse(out.body.p);
    assert_non_null(j);
    struct json_object *spans = json_object_object_get(
        json_object_array_get_idx(
            json_object_object_get(json_object_array_get_idx(json_object_object_get(j, "resourceSpans"), 0),
                                   "scopeSpans"),
            0),
        "spans");
    assert_int_equal(json_object_array_length(spans), 3);
    struct json_object *s0 = json_object_array_get_idx(spans, 0);
    assert_string_equal(json_object_get_string(json_object_object_get(s0, "traceId")),
                        "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_string_equal(json_object_get_string(json_object_object_get(s0, "parentSpanId")), "00f067aa0ba902b7");
    assert_int_equal(strlen(json_object_get_string(json_object_object_get(s0, "spanId"))), 16);
    assert_true(json_object_is_type(json_object_object_get(s0, "kind"), json_type_int));
    assert_int_equal(json_object_get_int(json_object_object_get(s0, "kind")), 2);
    struct json_object *st = json_object_object_get(s0, "startTimeUnixNano");
    assert_true(json_object_is_type(st, json_type_string));
    assert_string_equal(json_object_get_string(st), "1700000000125000000");
    assert_int_equal(json_object_get_int(json_object_object_get(json_object_object_get(s0, "status"), "code")), 1);
    /* an int attribute is a string, a double a number */
    struct json_object *attrs = json_object_object_get(s0, "attributes");
    int seen_int = 0, seen_dbl = 0;
    for (size_t i = 0; i < json_object_array_length(attrs); i++) {
        struct json_object *a = json_object_array_get_idx(attrs, i);
        const char *k = json_object_get_string(json_object_object_get(a, "key"));
        struct json_object *val = json_object_object_get(a, "value");
        if (!strcmp(k, "gen_ai.usage.input_tokens")) {
            struct json_object *iv = json_object_object_get(val, "intValue");
            assert_true(json_object_is_type(iv, json_type_string));
            assert_string_equal(json_object_get_string(iv), "12");
            seen_int = 1;
        }
        if (!strcmp(k, "gen_ai.request.temperature")) {
            struct json_object *dv = json_object_object_get(val, "doubleValue");
            assert_true(json_object_is_type(dv, json_type_double));
            assert_true(json_object_get_double(dv) == 0.5);
            seen_dbl = 1;
        }
    }
    assert_true(seen_int && seen_dbl);
    json_object_put(j);
    sy_sink_req_free(&out);
    sy_otel_close(o);
    clear_env();
}

static void wire_details(void **state)
{
    (void)state;
    /* invalid UTF-8 becomes U+FFFD; "" is still a string value; negative ints are 10-byte varints */
    struct sy_otlp_batch b;
    sy_otlp_batch_init(&b);
    b.scope_name = "litellm";
    struct sy_otlp_span *s = sy_otlp_span(&b, "n\xff", SY_OTLP_KIND_INTERNAL);
    assert_non_null(s);
    s->trace_id[0] = 1;
    s->span_id[0] = 1;
    s->start_ns = 1;
    s->end_ns = 2;
    sy_otlp_strn(&b, "bad", "a\xc3\x28z", 4);
    sy_otlp_str(&b, "empty", "");
    sy_otlp_int(&b, "neg", -2);
    sy_otlp_bool(&b, "f", 0);
    sy_otlp_dbl(&b, "nan", 0.0 / 0.0); /* left out */
    struct sy_buf o;
    sy_buf_init(&o, 1 << 20);
    assert_int_equal(sy_otlp_proto(&b, &o), 0);
    struct req q;
    read_req(&o, &q);
    struct span *sp = &q.spans[0];
    assert_memory_equal(sp->name, "n\xef\xbf\xbd", 4);
    char *v = attr_str(sp, "bad");
    assert_string_equal(v, "a\xef\xbf\xbd(z");
    free(v);
    v = attr_str(sp, "empty");
    assert_string_equal(v, "");
    free(v);
    assert_int_equal(attr_int(sp, "neg"), -2);
    int t;
    const struct pbf *f = attr(sp->f, sp->nf, 9, "f", &t);
    assert_int_equal(t, 2);
    assert_int_equal(f->v, 0);
    assert_false(has_attr(sp, "nan"));
    free_req(&q);
    /* JSON: the same text valid, control characters escaped */
    sy_buf_reset(&o);
    sy_otlp_str(&b, "ctl", "a\"\n\x01");
    assert_int_equal(sy_otlp_json(&b, &o), 0);
    struct json_object *j = json_tokener_parse(o.p);
    assert_non_null(j);
    assert_non_null(strstr(o.p, "\"intValue\":\"-2\""));
    assert_non_null(strstr(o.p, "\"boolValue\":false"));
    json_object_put(j);
    sy_buf_free(&o);
    sy_otlp_batch_free(&b);
}

static void big_batch(void **state)
{
    (void)state;
    clear_env();
    void *o = open_env();
    /* 40 records of ~1 MiB of request each: split in several requests, every record in one */
    size_t big = 1u << 20, n = 40;
    char *body = malloc(big + 64);
    assert_non_null(body);
    int k = snprintf(body, 64, "{\"messages\":[{\"role\":\"user\",\"content\":\"");
    memset(body + k, 'x', big - (size_t)k - 8);
    memcpy(body + big - 8, "\"}]}", 5);
    struct sy_logrec *recs = calloc(n, sizeof *recs), **rp = calloc(n, sizeof *rp);
    for (size_t i = 0; i < n; i++) {
        rec_ok(&recs[i]);
        recs[i].seq = 100 + i;
        recs[i].request = body;
        recs[i].request_len = strlen(body);
        recs[i].nattempts = 0;
        rp[i] = &recs[i];
    }
    struct sy_sink_req out[SY_SINK_MAX_REQS];
    size_t nout = 0;
    assert_int_equal(sy_sink_otel.encode(o, rp, n, out, &nout), 0);
    assert_true(nout > 1 && nout <= SY_SINK_MAX_REQS);
    int spans = 0;
    for (size_t i = 0; i < nout; i++) {
        struct req q;
        read_req(&out[i].body, &q);
        spans += q.nspans;
        free_req(&q);
        sy_sink_req_free(&out[i]);
    }
    assert_int_equal(spans, (int)n);
    free(recs);
    free(rp);
    free(body);
    sy_otel_close(o);
}

static void verdict(void **state)
{
    (void)state;
    assert_int_equal(sy_sink_otel.verdict(NULL, 200, "", 0), SY_SINK_SENT);
    assert_int_equal(sy_sink_otel.verdict(NULL, 0, NULL, 0), SY_SINK_RETRY);
    assert_int_equal(sy_sink_otel.verdict(NULL, 429, "", 0), SY_SINK_RETRY);
    assert_int_equal(sy_sink_otel.verdict(NULL, 503, "", 0), SY_SINK_RETRY);
    assert_int_equal(sy_sink_otel.verdict(NULL, 400, "", 0), SY_SINK_DROP);
    assert_int_equal(sy_sink_otel.verdict(NULL, 500, "", 0), SY_SINK_DROP);
    assert_string_equal(sy_sink_otel.name, "otel");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(traceparent),
        cmocka_unit_test(traces_url),
        cmocka_unit_test(settings),
        cmocka_unit_test(resource),
        cmocka_unit_test(success_spans),
        cmocka_unit_test(traceparent_honoured),
        cmocka_unit_test(failure_and_redaction),
        cmocka_unit_test(json_protocol),
        cmocka_unit_test(wire_details),
        cmocka_unit_test(big_batch),
        cmocka_unit_test(verdict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
