/* otel.c - the OpenTelemetry sink ("otel"): each call as spans over OTLP/HTTP.
 *
 * Settings, read once at open() from the environment as LiteLLM's
 * OpenTelemetryConfig.from_env and the OpenTelemetry SDKs read them:
 *   endpoint  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is), else
 *             OTEL_EXPORTER_OTLP_ENDPOINT or LiteLLM's OTEL_ENDPOINT,
 *             normalised as LiteLLM does (".../v1/traces" kept, "/v1/logs" or
 *             "/v1/metrics" replaced, "/v1/traces" appended otherwise);
 *             default http://localhost:4318/v1/traces (the OTLP default).
 *   headers   OTEL_EXPORTER_OTLP_TRACES_HEADERS, _HEADERS, or OTEL_HEADERS:
 *             "k=v,k2=v2", values percent-decoded; an entry that is not a
 *             header (no name, a byte outside a token, CR/LF/NUL in the value)
 *             is left out with a warning.
 *   protocol  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, _PROTOCOL, or LiteLLM's
 *             OTEL_EXPORTER: http/protobuf (and otlp_http) by default,
 *             http/json; grpc / otlp_grpc warns and sends http/protobuf;
 *             console without an endpoint cannot print here: the sink is off
 *             with a warning (LiteLLM then prints spans on stdout).
 *   resource  service.name (OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES'
 *             service.name, else "litellm"), deployment.environment
 *             (OTEL_ENVIRONMENT_NAME, "production"), model_id (OTEL_MODEL_ID,
 *             the service name), telemetry.sdk.*, then every pair of
 *             OTEL_RESOURCE_ATTRIBUTES (percent-decoded) - LiteLLM's
 *             Resource.create(base).merge(env).
 *   scope     OTEL_TRACER_NAME, "litellm".
 *   layout    USE_OTEL_LITELLM_REQUEST_SPAN=true: LiteLLM's older nested
 *             "litellm_request" span (below).
 *
 * The spans of one call, as LiteLLM's proxy (>= 1.81) emits them:
 *   "Received Proxy Server Request"   SERVER, the call's start to end, child
 *                                     of the incoming traceparent's span;
 *                                     carries LiteLLM's attributes (metadata.*,
 *                                     gen_ai.*, llm.*) and, on failure, status
 *                                     ERROR, an "exception" event and error.*;
 *     [USE_OTEL_LITELLM_REQUEST_SPAN: "litellm_request" (or the request's
 *      metadata.generation_name), INTERNAL, which then carries them]
 *     "raw_gen_ai_request" (or generation_name)   CLIENT, one per upstream
 *                                     attempt (rec->attempts): its times,
 *                                     deployment, provider, HTTP status, and
 *                                     status ERROR with the exception class
 *                                     when it failed.
 * The GenAI semantic-convention attributes (gen_ai.*) are set on these LLM
 * spans only. Message content (gen_ai.input.messages, gen_ai.output.messages,
 * tool definitions and calls) only when the record kept messages (not under
 * SY_LOGREC_NO_MESSAGES), as LiteLLM's message_logging.
 *
 * Ids: the trace id is the incoming traceparent's when it is valid (W3C
 * trace-context level 1: "vv-<32 hex>-<16 hex>-<2 hex>", lowercase, version
 * ff invalid, version 00 with nothing after, neither id all zeros; the
 * request span's parent is its span id and the sampled flag is kept). Every
 * other id is the first bytes of SHA-256(instance secret, record sequence,
 * span index): unique per span, unpredictable from outside, and the same when
 * a batch is encoded again for a retry, so a collector that got the first
 * try de-duplicates instead of showing the call twice.
 *
 * A batch is one ExportTraceServiceRequest per request (split in up to
 * SY_SINK_MAX_REQS requests of about OTEL_REQ_TARGET bytes when large), built
 * on the logging thread: the payload (sy_log_payload) and the request body
 * are parsed with json-c there, never on a worker.
 */
#include <json-c/json.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "core/buf.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/pyrepr.h"
#include "logging/logging.h"
#include "logging/sinks/otel.h"
#include "logging/sinks/otlp.h"

#define OTEL_DEFAULT_URL   "http://localhost:4318/v1/traces"
#define OTEL_MAX_BATCH     512
#define OTEL_REQ_TARGET    (4u << 20)  /* a request aims at this many bytes ... */
#define OTEL_REQ_CAP       (64u << 20) /* ... and never passes this */
#define OTEL_SERVER_SPAN   "Received Proxy Server Request"
#define OTEL_REQUEST_SPAN  "litellm_request"
#define OTEL_RAW_SPAN      "raw_gen_ai_request"
#define OTEL_MAX_RESOURCES 64

struct otel {
    char *url;
    struct sy_buf headers; /* "Name: value\r\n" lines, Content-Type first */
    int json;
    int request_span; /* USE_OTEL_LITELLM_REQUEST_SPAN */
    char *scope;
    struct sy_otlp_kv res[OTEL_MAX_RESOURCES];
    size_t nres;
    struct sy_arena arena; /* the resource's strings */
    uint8_t secret[32];
    struct sy_otlp_batch batch; /* reused from one encode() to the next (the logging thread's alone) */
};

/* ---- traceparent ---------------------------------------------------------- */

static int lhex(const char *s, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return -1;
    return sy_hex_decode(out, s, n / 2);
}

int sy_otel_traceparent(const char *s, size_t n, struct sy_traceparent *tp)
{
    if (!s)
        return -1;
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n < 55 || s[2] != '-' || s[35] != '-' || s[52] != '-')
        return -1;
    uint8_t ver;
    if (lhex(s, 2, &ver) || ver == 0xff)
        return -1;
    if (n > 55 && (ver == 0 || s[55] != '-')) /* version 00 has nothing after; later ones "-..." */
        return -1;
    if (lhex(s + 3, 32, tp->trace_id) || lhex(s + 36, 16, tp->span_id) || lhex(s + 53, 2, &tp->flags))
        return -1;
    int z = 1;
    for (int i = 0; i < 16; i++)
        z &= tp->trace_id[i] == 0;
    if (z)
        return -1;
    z = 1;
    for (int i = 0; i < 8; i++)
        z &= tp->span_id[i] == 0;
    return z ? -1 : 0;
}

/* ---- settings ------------------------------------------------------------- */

static const char *env2(const char *a, const char *b)
{
    const char *v = getenv(a);
    if ((!v || !*v) && b)
        v = getenv(b);
    return v && *v ? v : NULL;
}

static int env_true(const char *name)
{
    const char *v = getenv(name);
    return v && (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes"));
}

/* LiteLLM's _normalize_otel_endpoint(endpoint, "traces"). */
char *sy_otel_traces_url(const char *base)
{
    size_t n = strlen(base);
    while (n && base[n - 1] == '/')
        n--;
    struct sy_buf b;
    sy_buf_init(&b, n + 32);
    sy_buf_append(&b, base, n);
    static const char *const other[] = {"/v1/logs", "/v1/metrics"};
    if (n >= 10 && !memcmp(b.p + n - 10, "/v1/traces", 10)) {
        /* kept */
    } else {
        int done = 0;
        for (size_t i = 0; i < 2 && !done; i++) {
            size_t k = strlen(other[i]);
            if (n >= k && !memcmp(b.p + n - k, other[i], k)) {
                b.len = n - k;
                SY_BUF_LIT(&b, "/v1/traces");
                done = 1;
            }
        }
        if (!done) {
            if (n >= 3 && !memcmp(b.p + n - 3, "/v1", 3))
                SY_BUF_LIT(&b, "/traces");
            else
                SY_BUF_LIT(&b, "/v1/traces");
        }
    }
    if (sy_buf_failed(&b)) {
        sy_buf_free(&b);
        return NULL;
    }
    return b.p;
}

/* Percent-decode s[0..n) into out (NUL-terminated, at most n bytes); a bad
 * escape is kept as is (the SDKs' unquote). Returns the length. */
static size_t pct_decode(const char *s, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int hi, lo;
        if (s[i] == '%' && i + 2 < n && (hi = sy_hex_val((unsigned char)s[i + 1])) >= 0 &&
            (lo = sy_hex_val((unsigned char)s[i + 2])) >= 0) {
            out[k++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            out[k++] = s[i];
        }
    }
    out[k] = 0;
    return k;
}

static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

static int is_token(const char *s, size_t n)
{
    if (!n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 32 || c >= 127 || strchr("\"(),/:;<=>?@[\\]{}", c))
            return 0;
    }
    return 1;
}

/* Walk "k=v,k2=v2": fn(key, value) for each pair, key trimmed, value trimmed
 * and percent-decoded. A pair without '=' or with an empty key is skipped
 * with a warning naming the variable (never its value: headers hold keys). */
static void each_pair(const char *var, const char *list, void (*fn)(void *, const char *, const char *), void *arg)
{
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        const char *k = p;
        size_t kn = eq ? (size_t)(eq - p) : n;
        trim(&k, &kn);
        if (!eq || !kn) {
            if (n)
                sy_warn("otel: %s: an entry without name=value is ignored", var);
        } else {
            const char *v = eq + 1;
            size_t vn = (size_t)(p + n - v);
            trim(&v, &vn);
            char *key = strndup(k, kn), *val = malloc(vn + 1);
            if (key && val) {
                pct_decode(v, vn, val);
                fn(arg, key, val);
            }
            free(key);
            free(val);
        }
        p += n;
        if (*p == ',')
            p++;
    }
}

struct hdr_ctx {
    struct sy_buf *b;
    const char *var;
};

static void add_header(void *arg, const char *k, const char *v)
{
    struct hdr_ctx *c = arg;
    if (!is_token(k, strlen(k)) || strpbrk(v, "\r\n") || !strcasecmp(k, "content-type") ||
        !strcasecmp(k, "content-length") || !strcasecmp(k, "host") || !strcasecmp(k, "transfer-encoding")) {
        sy_warn("otel: %s: header '%s' is not sent (not a header name, a control character in its value, or set by the "
                "exporter)",
                c->var, is_token(k, strlen(k)) ? k : "?");
        return;
    }
    for (const char *q = v; *q; q++)
        if ((unsigned char)*q < 32 && *q != '\t') {
            sy_warn("otel: %s: header '%s' has a control character: not sent", c->var, k);
            return;
        }
    sy_buf_printf(c->b, "%s: %s\r\n", k, v);
}

struct res_ctx {
    struct otel *o;
    const char *service; /* OTEL_SERVICE_NAME: wins over the list's service.name */
};

static void res_set(struct otel *o, const char *k, const char *v)
{
    for (size_t i = 0; i < o->nres; i++)
        if (!strcmp(o->res[i].key, k)) {
            o->res[i].s = sy_arena_strndup(&o->arena, v, strlen(v));
            o->res[i].slen = strlen(v);
            return;
        }
    if (o->nres == OTEL_MAX_RESOURCES)
        return;
    struct sy_otlp_kv *kv = &o->res[o->nres++];
    memset(kv, 0, sizeof *kv);
    kv->key = sy_arena_strndup(&o->arena, k, strlen(k));
    kv->t = SY_OTLP_STR;
    kv->s = sy_arena_strndup(&o->arena, v, strlen(v));
    kv->slen = strlen(v);
}

static void add_resource(void *arg, const char *k, const char *v)
{
    struct res_ctx *c = arg;
    if (c->service && !strcmp(k, "service.name"))
        return;
    res_set(c->o, k, v);
}

static void otel_close(void *inst)
{
    struct otel *o = inst;
    if (!o)
        return;
    free(o->url);
    free(o->scope);
    sy_buf_free(&o->headers);
    sy_arena_free(&o->arena);
    sy_otlp_batch_free(&o->batch);
    free(o);
}

static void *otel_open(const struct sy_logconf *lc, const char *vars, char *err, size_t errlen)
{
    (void)lc;
    (void)vars; /* LiteLLM's generic otel logger takes no per-key or per-team settings */
    const char *proto = env2("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL");
    const char *exporter = getenv("OTEL_EXPORTER");
    const char *traces_url = env2("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", NULL);
    const char *base = env2("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_ENDPOINT");
    const char *mode = proto ? proto : exporter && *exporter ? exporter : NULL;
    int json = 0;
    if (mode) {
        if (!strcmp(mode, "http/json")) {
            json = 1;
        } else if (!strcmp(mode, "grpc") || !strcmp(mode, "otlp_grpc")) {
            sy_warn("otel: protocol '%s': switchyard exports OTLP over HTTP only; sending http/protobuf (point the "
                    "endpoint at the collector's OTLP/HTTP port, 4318 by default)",
                    mode);
        } else if (!strcmp(mode, "console") && !traces_url && !base) {
            snprintf(err, errlen,
                     "otel: OTEL_EXPORTER=console prints spans in LiteLLM; switchyard exports OTLP/HTTP only: set "
                     "OTEL_EXPORTER_OTLP_ENDPOINT");
            return NULL;
        } else if (strcmp(mode, "http/protobuf") && strcmp(mode, "otlp_http") && strcmp(mode, "console")) {
            sy_warn("otel: protocol '%s' is not known; sending http/protobuf", mode);
        }
    }
    struct otel *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(err, errlen, "otel: out of memory");
        return NULL;
    }
    sy_arena_init(&o->arena);
    sy_buf_init(&o->headers, 64 << 10);
    sy_otlp_batch_init(&o->batch);
    o->json = json;
    o->request_span = env_true("USE_OTEL_LITELLM_REQUEST_SPAN");
    o->url = traces_url ? strdup(traces_url) : base ? sy_otel_traces_url(base) : strdup(OTEL_DEFAULT_URL);
    const char *tracer = getenv("OTEL_TRACER_NAME");
    o->scope = strdup(tracer && *tracer ? tracer : "litellm");
    if (!o->url || !o->scope) {
        otel_close(o);
        snprintf(err, errlen, "otel: out of memory");
        return NULL;
    }
    if (strncmp(o->url, "http://", 7) && strncmp(o->url, "https://", 8)) {
        snprintf(err, errlen, "otel: the traces endpoint must be an http:// or https:// URL");
        otel_close(o);
        return NULL;
    }
    if (!traces_url && !base)
        sy_info("otel: no OTEL_EXPORTER_OTLP_ENDPOINT: sending spans to %s", OTEL_DEFAULT_URL);

    sy_buf_puts(&o->headers, json ? "Content-Type: application/json\r\n" : "Content-Type: application/x-protobuf\r\n");
    static const char *const hvars[] = {"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS",
                                        "OTEL_HEADERS"};
    for (size_t i = 0; i < 3; i++) {
        const char *h = getenv(hvars[i]);
        if (h && *h) {
            struct hdr_ctx hc = {&o->headers, hvars[i]};
            each_pair(hvars[i], h, add_header, &hc);
            break;
        }
    }

    /* the resource: LiteLLM's base attributes, the SDK's, then the environment's */
    const char *svc = getenv("OTEL_SERVICE_NAME");
    if (svc && !*svc)
        svc = NULL;
    const char *ra = getenv("OTEL_RESOURCE_ATTRIBUTES");
    const char *svc_name = svc;
    char *from_ra = NULL;
    if (!svc_name && ra) { /* the list's service.name names the model_id default too */
        const char *p = strstr(ra, "service.name=");
        if (p && (p == ra || p[-1] == ',' || p[-1] == ' ')) {
            p += 13;
            size_t n = strcspn(p, ",");
            from_ra = malloc(n + 1);
            if (from_ra) {
                const char *t = p;
                trim(&t, &n);
                pct_decode(t, n, from_ra);
                svc_name = from_ra;
            }
        }
    }
    if (!svc_name)
        svc_name = "litellm";
    res_set(o, "service.name", svc_name);
    const char *env = getenv("OTEL_ENVIRONMENT_NAME");
    res_set(o, "deployment.environment", env && *env ? env : "production");
    const char *mid = getenv("OTEL_MODEL_ID");
    res_set(o, "model_id", mid && *mid ? mid : svc_name);
    res_set(o, "telemetry.sdk.language", "c");
    res_set(o, "telemetry.sdk.name", "switchyard");
    res_set(o, "telemetry.sdk.version", SY_VERSION);
    if (ra && *ra) {
        struct res_ctx rc = {o, svc};
        each_pair("OTEL_RESOURCE_ATTRIBUTES", ra, add_resource, &rc);
    }
    free(from_ra);
    if (getrandom(o->secret, sizeof o->secret, 0) != (ssize_t)sizeof o->secret) {
        snprintf(err, errlen, "otel: no random bytes for span ids");
        otel_close(o);
        return NULL;
    }
    if (sy_buf_failed(&o->headers)) {
        snprintf(err, errlen, "otel: the headers are too long");
        otel_close(o);
        return NULL;
    }
    return o;
}

/* ---- one record's spans --------------------------------------------------- */

/* The id of span idx of the record with sequence seq (label 't': the trace). */
static void derive(const struct otel *o, const struct sy_logrec *r, int label, unsigned idx, uint8_t *out, size_t n)
{
    uint8_t msg[32 + 8 + 1 + 4], md[32];
    unsigned mdlen = 0;
    memcpy(msg, o->secret, 32);
    for (int i = 0; i < 8; i++)
        msg[32 + i] = (uint8_t)(r->seq >> (8 * i));
    msg[40] = (uint8_t)label;
    for (int i = 0; i < 4; i++)
        msg[41 + i] = (uint8_t)(idx >> (8 * i));
    EVP_Digest(msg, sizeof msg, md, &mdlen, EVP_sha256(), NULL);
    memcpy(out, md, n);
    int z = 1;
    for (size_t i = 0; i < n; i++)
        z &= out[i] == 0;
    if (z)
        out[n - 1] = 1; /* an all-zero id is invalid */
}

static const char *jstr(struct json_object *o, const char *k)
{
    struct json_object *v;
    if (!o || !json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

static struct json_object *jget(struct json_object *o, const char *k)
{
    struct json_object *v;
    return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static const char *dumps(struct sy_otlp_batch *b, struct json_object *v)
{
    const char *s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    return s ? sy_otlp_dup(b, s, strlen(s)) : NULL;
}

/* Python's str() of a JSON value (LiteLLM's safe_set_attribute on a dict or list). */
static void pyrepr(struct sy_buf *o, struct json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null: SY_BUF_LIT(o, "None"); break;
    case json_type_boolean: sy_buf_puts(o, json_object_get_boolean(v) ? "True" : "False"); break;
    case json_type_int: sy_buf_printf(o, "%lld", (long long)json_object_get_int64(v)); break;
    case json_type_double: sy_py_float_repr(o, json_object_get_double(v)); break;
    case json_type_string: sy_py_str_repr(o, json_object_get_string(v), (size_t)json_object_get_string_len(v)); break;
    case json_type_array: {
        SY_BUF_LIT(o, "[");
        size_t n = json_object_array_length(v);
        for (size_t i = 0; i < n; i++) {
            if (i)
                SY_BUF_LIT(o, ", ");
            pyrepr(o, json_object_array_get_idx(v, i));
        }
        SY_BUF_LIT(o, "]");
        break;
    }
    case json_type_object: {
        SY_BUF_LIT(o, "{");
        int first = 1;
        json_object_object_foreach(v, k, e)
        {
            if (!first)
                SY_BUF_LIT(o, ", ");
            first = 0;
            sy_py_str_repr(o, k, strlen(k));
            SY_BUF_LIT(o, ": ");
            pyrepr(o, e);
        }
        SY_BUF_LIT(o, "}");
        break;
    }
    }
}

/* LiteLLM's safe_set_attribute: None -> "", str/bool/int/float as they are,
 * anything else as Python's str() of it. */
static void attr_json(struct sy_otlp_batch *b, const char *key, struct json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null: sy_otlp_str(b, key, ""); break;
    case json_type_boolean: sy_otlp_bool(b, key, json_object_get_boolean(v)); break;
    case json_type_int: sy_otlp_int(b, key, json_object_get_int64(v)); break;
    case json_type_double: sy_otlp_dbl(b, key, json_object_get_double(v)); break;
    case json_type_string:
        sy_otlp_strn(b, key, sy_otlp_dup(b, json_object_get_string(v), (size_t)json_object_get_string_len(v)),
                     (size_t)json_object_get_string_len(v));
        break;
    default: {
        struct sy_buf t;
        sy_buf_init(&t, 16u << 20);
        pyrepr(&t, v);
        if (!sy_buf_failed(&t))
            sy_otlp_strn(b, key, sy_otlp_dup(b, t.p ? t.p : "", t.len), t.len);
        sy_buf_free(&t);
    }
    }
}

static const char *keyf(struct sy_otlp_batch *b, const char *fmt, const char *s, long i)
{
    char k[256];
    int n = i >= 0 ? snprintf(k, sizeof k, fmt, i) : snprintf(k, sizeof k, fmt, s);
    if (n < 0)
        return NULL;
    return sy_otlp_dup(b, k, (size_t)n < sizeof k ? (size_t)n : sizeof k - 1);
}

/* The GenAI operation for a LiteLLM call type (semantic conventions' values). */
static const char *operation(const char *call_type)
{
    if (!call_type)
        return "chat";
    if (strstr(call_type, "embedding"))
        return "embeddings";
    if (strstr(call_type, "text_completion"))
        return "text_completion";
    return "chat";
}

/* LiteLLM's _transform_messages_to_otel_semantic_conventions, one message. */
static struct json_object *otel_msg(struct json_object *m)
{
    struct json_object *out = json_object_new_object(), *parts = json_object_new_array();
    const char *role = jstr(m, "role");
    json_object_object_add(out, "role", json_object_new_string(role ? role : "user"));
    struct json_object *c = jget(m, "content");
    if (c && json_object_is_type(c, json_type_string)) {
        struct json_object *p = json_object_new_object();
        json_object_object_add(p, "type", json_object_new_string("text"));
        json_object_object_add(p, "content", json_object_get(c));
        json_object_array_add(parts, p);
    } else if (c && json_object_is_type(c, json_type_array)) {
        size_t n = json_object_array_length(c);
        for (size_t i = 0; i < n; i++) {
            struct json_object *e = json_object_array_get_idx(c, i);
            if (json_object_is_type(e, json_type_object)) {
                json_object_array_add(parts, json_object_get(e));
            } else { /* str(part): a string as it is, anything else as Python prints it */
                struct json_object *p = json_object_new_object();
                json_object_object_add(p, "type", json_object_new_string("text"));
                if (json_object_is_type(e, json_type_string)) {
                    json_object_object_add(p, "content", json_object_get(e));
                } else {
                    struct sy_buf t;
                    sy_buf_init(&t, 1u << 20);
                    pyrepr(&t, e);
                    json_object_object_add(p, "content", json_object_new_string_len(t.p ? t.p : "", (int)t.len));
                    sy_buf_free(&t);
                }
                json_object_array_add(parts, p);
            }
        }
    }
    json_object_object_add(out, "parts", parts);
    static const char *const keep[] = {"id", "tool_calls", "tool_call_id"};
    for (size_t i = 0; i < 3; i++) {
        struct json_object *v = jget(m, keep[i]);
        if (v)
            json_object_object_add(out, keep[i], json_object_get(v));
    }
    return out;
}

/* The answer as an object: the payload's response, else the record's JSON answer. */
static struct json_object *response_obj(struct json_object *payload, const struct sy_logrec *r,
                                        struct json_object **own)
{
    struct json_object *v = jget(payload, "response");
    if (v && json_object_is_type(v, json_type_object))
        return v;
    if (r->response && r->response_len && !(r->flags & SY_LOGREC_RESP_SSE)) {
        struct json_tokener *t = json_tokener_new();
        if (t) {
            *own = json_tokener_parse_ex(t, r->response, (int)r->response_len);
            json_tokener_free(t);
        }
        if (*own && json_object_is_type(*own, json_type_object))
            return *own;
    }
    return NULL;
}

/* msgs holds the prompt ("messages", else "input"; "system"), params the
 * request's "tools": the payload and its model_parameters, or the request. */
static void message_attrs(struct sy_otlp_batch *b, struct json_object *msgs_in, struct json_object *params,
                          struct json_object *resp)
{
    /* tools: llm.request.functions.<i>.{name,description,parameters} */
    struct json_object *tools = jget(params, "tools");
    if (tools && json_object_is_type(tools, json_type_array)) {
        size_t n = json_object_array_length(tools);
        for (size_t i = 0; i < n; i++) {
            struct json_object *f = jget(json_object_array_get_idx(tools, i), "function");
            if (!f)
                continue;
            const char *name = jstr(f, "name"), *desc = jstr(f, "description");
            sy_otlp_str(b, keyf(b, "llm.request.functions.%ld.name", NULL, (long)i),
                        name ? sy_otlp_dup(b, name, strlen(name)) : "");
            sy_otlp_str(b, keyf(b, "llm.request.functions.%ld.description", NULL, (long)i),
                        desc ? sy_otlp_dup(b, desc, strlen(desc)) : "");
            struct json_object *fparams = jget(f, "parameters");
            sy_otlp_str(b, keyf(b, "llm.request.functions.%ld.parameters", NULL, (long)i),
                        fparams ? dumps(b, fparams) : "null");
        }
    }
    struct json_object *msgs = jget(msgs_in, "messages"), *input = jget(msgs_in, "input");
    struct json_object *arr = json_object_new_array();
    if (msgs && json_object_is_type(msgs, json_type_array)) {
        size_t n = json_object_array_length(msgs);
        for (size_t i = 0; i < n; i++) {
            struct json_object *m = json_object_array_get_idx(msgs, i);
            if (json_object_is_type(m, json_type_object))
                json_object_array_add(arr, otel_msg(m));
        }
    } else if (input && json_object_is_type(input, json_type_string)) {
        struct json_object *m = json_object_new_object();
        json_object_object_add(m, "role", json_object_new_string("user"));
        json_object_object_add(m, "content", json_object_get(input));
        json_object_array_add(arr, otel_msg(m));
        json_object_put(m);
    }
    if (json_object_array_length(arr))
        sy_otlp_str(b, "gen_ai.input.messages", dumps(b, arr));
    json_object_put(arr);
    struct json_object *sys = jget(msgs_in, "system"); /* Anthropic's messages: the system prompt */
    if (sys && (json_object_is_type(sys, json_type_string) || json_object_is_type(sys, json_type_array))) {
        struct json_object *m = json_object_new_object(), *one = json_object_new_array();
        json_object_object_add(m, "role", json_object_new_string("system"));
        json_object_object_add(m, "content", json_object_get(sys));
        json_object_array_add(one, otel_msg(m));
        json_object_put(m);
        sy_otlp_str(b, "gen_ai.system_instructions", dumps(b, one));
        json_object_put(one);
    }
    if (!resp)
        return;
    struct json_object *choices = jget(resp, "choices");
    if (choices && json_object_is_type(choices, json_type_array) && json_object_array_length(choices)) {
        struct json_object *out = json_object_new_array(), *reasons = json_object_new_array();
        size_t n = json_object_array_length(choices);
        for (size_t i = 0; i < n; i++) {
            struct json_object *c = json_object_array_get_idx(choices, i);
            struct json_object *m = jget(c, "message");
            struct json_object *t = otel_msg(m ? m : c);
            const char *fr = jstr(c, "finish_reason");
            if (fr) {
                json_object_object_add(t, "finish_reason", json_object_new_string(fr));
                json_object_array_add(reasons, json_object_new_string(fr));
            }
            json_object_array_add(out, t);
        }
        sy_otlp_str(b, "gen_ai.output.messages", dumps(b, out));
        if (json_object_array_length(reasons))
            sy_otlp_str(b, "gen_ai.response.finish_reasons", dumps(b, reasons));
        for (size_t i = 0; i < n; i++) { /* gen_ai.completion.<i>.function_call.{name,arguments} */
            struct json_object *c = json_object_array_get_idx(choices, i);
            struct json_object *tc = jget(jget(c, "message"), "tool_calls");
            if (!jstr(c, "finish_reason") || !tc || !json_object_is_type(tc, json_type_array))
                continue;
            size_t k = json_object_array_length(tc);
            for (size_t j = 0; j < k; j++) {
                struct json_object *f = jget(json_object_array_get_idx(tc, j), "function");
                const char *fn = jstr(f, "name"), *fa = jstr(f, "arguments");
                if (fn && *fn)
                    sy_otlp_str(b, keyf(b, "gen_ai.completion.%ld.function_call.name", NULL, (long)j),
                                sy_otlp_dup(b, fn, strlen(fn)));
                if (fa && *fa)
                    sy_otlp_str(b, keyf(b, "gen_ai.completion.%ld.function_call.arguments", NULL, (long)j),
                                sy_otlp_dup(b, fa, strlen(fa)));
            }
        }
        json_object_put(out);
        json_object_put(reasons);
        return;
    }
    struct json_object *content = jget(resp, "content"); /* Anthropic's message */
    if (content && json_object_is_type(content, json_type_array)) {
        struct json_object *m = json_object_new_object(), *out = json_object_new_array();
        json_object_object_add(m, "role", json_object_new_string("assistant"));
        json_object_object_add(m, "content", json_object_get(content));
        struct json_object *t = otel_msg(m);
        json_object_put(m);
        const char *sr = jstr(resp, "stop_reason");
        if (sr)
            json_object_object_add(t, "finish_reason", json_object_new_string(sr));
        json_object_array_add(out, t);
        sy_otlp_str(b, "gen_ai.output.messages", dumps(b, out));
        json_object_put(out);
        if (sr) {
            struct json_object *rs = json_object_new_array();
            json_object_array_add(rs, json_object_new_string(sr));
            sy_otlp_str(b, "gen_ai.response.finish_reasons", dumps(b, rs));
            json_object_put(rs);
        }
    }
}

static const char *bare_model(const char *m)
{
    const char *s = m ? strchr(m, '/') : NULL;
    return s ? s + 1 : m;
}

/* LiteLLM's set_attributes on the span that carries the call. */
static void call_attrs(struct sy_otlp_batch *b, const struct sy_logrec *r, struct json_object *payload,
                       struct json_object *req, struct json_object *resp)
{
    struct json_object *md = jget(payload, "metadata");
    if (md && json_object_is_type(md, json_type_object)) {
        json_object_object_foreach(md, k, v)
        {
            attr_json(b, keyf(b, "metadata.%s", k, -1), v);
        }
    }
    struct json_object *hp = jget(payload, "hidden_params");
    if (hp && json_object_is_type(hp, json_type_object) && json_object_object_length(hp))
        sy_otlp_str(b, "hidden_params", dumps(b, hp));
    struct json_object *cb = jget(payload, "cost_breakdown");
    if (cb && json_object_is_type(cb, json_type_object)) {
        json_object_object_foreach(cb, k, v)
        {
            if (!json_object_is_type(v, json_type_null))
                attr_json(b, keyf(b, "gen_ai.cost.%s", k, -1), v);
        }
    }
    const char *model = jstr(payload, "model");
    if (model && *model)
        model = sy_otlp_dup(b, model, strlen(model)); /* the payload's text goes before the batch does */
    else
        model = bare_model(r->upstream_model ? r->upstream_model : r->model);
    if (model && *model)
        sy_otlp_str(b, "gen_ai.request.model", model);
    sy_otlp_str(b, "llm.request.type", r->call_type ? r->call_type : "acompletion");
    const char *prov = r->provider && *r->provider ? r->provider : "Unknown";
    sy_otlp_str(b, "gen_ai.system", prov);
    sy_otlp_str(b, "gen_ai.provider.name", prov);
    sy_otlp_str(b, "gen_ai.operation.name", operation(r->call_type));
    struct json_object *mp = jget(payload, "model_parameters");
    if (!mp || !json_object_is_type(mp, json_type_object))
        mp = req;
    static const char *const num[][2] = {{"max_tokens", "gen_ai.request.max_tokens"},
                                         {"temperature", "gen_ai.request.temperature"},
                                         {"top_p", "gen_ai.request.top_p"}};
    for (size_t i = 0; i < 3; i++) {
        struct json_object *v = jget(mp, num[i][0]);
        if (!v && i == 0)
            v = jget(mp, "max_completion_tokens");
        if (v && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) &&
            json_object_get_double(v) != 0)
            attr_json(b, num[i][1], v);
    }
    sy_otlp_str(b, "llm.is_streaming", r->flags & SY_LOGREC_STREAM ? "True" : "False");
    const char *user = jstr(mp, "user");
    if (user && *user)
        sy_otlp_str(b, "llm.user", sy_otlp_dup(b, user, strlen(user)));
    const char *rid = jstr(resp, "id");
    if (!rid || !*rid)
        rid = jstr(payload, "id");
    if (!rid || !*rid)
        rid = r->id;
    if (rid && *rid)
        sy_otlp_str(b, "gen_ai.response.id", sy_otlp_dup(b, rid, strlen(rid)));
    const char *rmodel = jstr(resp, "model");
    if (rmodel && *rmodel)
        sy_otlp_str(b, "gen_ai.response.model", sy_otlp_dup(b, rmodel, strlen(rmodel)));
    if (!(r->flags & SY_LOGREC_FAILURE)) {
        sy_otlp_int(b, "gen_ai.usage.total_tokens", (int64_t)(r->prompt_tokens + r->completion_tokens));
        sy_otlp_int(b, "gen_ai.usage.output_tokens", (int64_t)r->completion_tokens);
        sy_otlp_int(b, "gen_ai.usage.input_tokens", (int64_t)r->prompt_tokens);
    }
    if (r->flags & SY_LOGREC_COST_KNOWN)
        sy_otlp_dbl(b, "gen_ai.cost.total_cost", r->cost);
    if ((r->flags & SY_LOGREC_STREAM) && r->completion_start_s > 0 && r->api_start_s > 0 &&
        r->completion_start_s >= r->api_start_s)
        sy_otlp_dbl(b, "gen_ai.response.time_to_first_token", r->completion_start_s - r->api_start_s);
    if (r->flags & SY_LOGREC_CACHE_HIT)
        sy_otlp_bool(b, "litellm.cache_hit", 1);
    if (!(r->flags & SY_LOGREC_NO_MESSAGES))
        message_attrs(b, jget(payload, "messages") ? payload : req, jget(mp, "tools") ? mp : req, resp);
}

/* LiteLLM's _record_exception_on_span. */
static void failure_attrs(struct sy_otlp_batch *b, const struct sy_logrec *r, struct json_object *payload, uint64_t t)
{
    const char *cls = r->error_class && *r->error_class ? r->error_class : "APIError";
    sy_otlp_event(b, "exception", t);
    sy_otlp_str(b, "exception.type", keyf(b, "litellm.exceptions.%s", cls, -1));
    sy_otlp_str(b, "exception.message", r->error_message ? r->error_message : "");
    sy_otlp_str(b, "exception.escaped", "False");
    sy_otlp_event_end(b);
    struct json_object *ei = jget(payload, "error_information");
    const char *code = jstr(ei, "error_code");
    char st[16];
    if (!code || !*code) {
        snprintf(st, sizeof st, "%d", r->http_status);
        code = r->http_status ? st : NULL;
    }
    if (code && *code)
        sy_otlp_str(b, "error.code", sy_otlp_dup(b, code, strlen(code)));
    sy_otlp_str(b, "error.type", cls);
    if (r->error_message && *r->error_message)
        sy_otlp_str(b, "error.message", r->error_message);
    const char *lp = jstr(ei, "llm_provider");
    if (lp && *lp)
        sy_otlp_str(b, "error.llm_provider", sy_otlp_dup(b, lp, strlen(lp)));
    else if (r->provider && *r->provider)
        sy_otlp_str(b, "error.llm_provider", r->provider);
}

static struct json_object *parse(const char *s, size_t n)
{
    if (!s || !n || n > INT32_MAX)
        return NULL;
    struct json_tokener *t = json_tokener_new_ex(64);
    if (!t)
        return NULL;
    struct json_object *o = json_tokener_parse_ex(t, s, (int)n);
    json_tokener_free(t);
    if (o && !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        o = NULL;
    }
    return o;
}

int sy_otel_record(const struct otel *o, struct sy_otlp_batch *b, struct sy_logrec *r)
{
    size_t plen = r->payload_len;
    const char *p = r->payload;
    if (!p)
        p = sy_log_payload(r, &plen);
    struct json_object *payload = p ? parse(p, plen ? plen : strlen(p)) : NULL;
    /* the payload has the prompt and the parameters already: the request is read only without them */
    struct json_object *pmp = jget(payload, "model_parameters"), *pmsgs = jget(payload, "messages");
    int from_payload =
        pmp && json_object_is_type(pmp, json_type_object) && pmsgs && json_object_is_type(pmsgs, json_type_array);
    struct json_object *req = from_payload ? NULL : parse(r->request, r->request_len), *own = NULL;
    struct json_object *resp = response_obj(payload, r, &own);

    struct sy_traceparent tp;
    int remote = r->traceparent && !sy_otel_traceparent(r->traceparent, strlen(r->traceparent), &tp);
    uint8_t trace[16];
    if (remote)
        memcpy(trace, tp.trace_id, 16);
    else
        derive(o, r, 't', 0, trace, 16);
    uint32_t tflags = remote ? (tp.flags & 0xffu) : SY_OTLP_FLAG_SAMPLED;
    int failed = (r->flags & SY_LOGREC_FAILURE) != 0;
    uint64_t t0 = sy_otlp_ns(r->start_s), t1 = sy_otlp_ns(r->end_s);
    if (t1 < t0)
        t1 = t0;

    struct sy_otlp_span *s = sy_otlp_span(b, OTEL_SERVER_SPAN, SY_OTLP_KIND_SERVER);
    if (!s)
        goto out;
    memcpy(s->trace_id, trace, 16);
    derive(o, r, 's', 0, s->span_id, 8);
    if (remote) {
        memcpy(s->parent_id, tp.span_id, 8);
        s->has_parent = 1;
    }
    s->flags = tflags | SY_OTLP_FLAG_HAS_IS_REMOTE | (remote ? SY_OTLP_FLAG_IS_REMOTE : 0);
    s->start_ns = t0;
    s->end_ns = t1;
    s->status = failed ? SY_OTLP_STATUS_ERROR : SY_OTLP_STATUS_OK;
    uint8_t carrier[8];
    memcpy(carrier, s->span_id, 8);
    const char *gen = jstr(jget(payload, "metadata"), "generation_name");
    if (!gen)
        gen = r->generation_name;
    if (o->request_span) {
        s = sy_otlp_span(b, gen && *gen ? sy_otlp_dup(b, gen, strlen(gen)) : OTEL_REQUEST_SPAN, SY_OTLP_KIND_INTERNAL);
        if (!s)
            goto out;
        memcpy(s->trace_id, trace, 16);
        derive(o, r, 's', 1, s->span_id, 8);
        memcpy(s->parent_id, carrier, 8);
        s->has_parent = 1;
        s->flags = tflags | SY_OTLP_FLAG_HAS_IS_REMOTE;
        s->start_ns = t0;
        s->end_ns = t1;
        s->status = failed ? SY_OTLP_STATUS_ERROR : SY_OTLP_STATUS_OK;
        memcpy(carrier, s->span_id, 8);
    }
    call_attrs(b, r, payload, req, resp);
    if (failed)
        failure_attrs(b, r, payload, t1);

    for (size_t i = 0; i < r->nattempts; i++) {
        const struct sy_logattempt *a = &r->attempts[i];
        s = sy_otlp_span(b, gen && *gen ? sy_otlp_dup(b, gen, strlen(gen)) : OTEL_RAW_SPAN, SY_OTLP_KIND_CLIENT);
        if (!s)
            goto out;
        memcpy(s->trace_id, trace, 16);
        derive(o, r, 's', 2 + (unsigned)i, s->span_id, 8);
        memcpy(s->parent_id, carrier, 8);
        s->has_parent = 1;
        s->flags = tflags | SY_OTLP_FLAG_HAS_IS_REMOTE;
        s->start_ns = sy_otlp_ns(a->start_s);
        s->end_ns = sy_otlp_ns(a->end_s);
        if (s->end_ns < s->start_ns)
            s->end_ns = s->start_ns;
        s->status = a->error ? SY_OTLP_STATUS_ERROR : SY_OTLP_STATUS_OK;
        s->status_msg = a->error;
        sy_otlp_str(b, "gen_ai.operation.name", operation(r->call_type));
        const char *ap = a->provider && *a->provider ? a->provider : "Unknown";
        sy_otlp_str(b, "gen_ai.system", ap);
        sy_otlp_str(b, "gen_ai.provider.name", ap);
        if (a->model)
            sy_otlp_str(b, "gen_ai.request.model", bare_model(a->model));
        sy_otlp_str(b, "litellm.model_id", a->model_id);
        sy_otlp_str(b, "gen_ai.api_base", a->api_base);
        sy_otlp_int(b, "litellm.attempt", (int64_t)i + 1);
        if (a->status)
            sy_otlp_int(b, "http.response.status_code", a->status);
        if (a->error)
            sy_otlp_str(b, "error.type", a->error);
    }
out:
    if (payload)
        json_object_put(payload);
    if (req)
        json_object_put(req);
    if (own)
        json_object_put(own);
    return b->oom ? -1 : 0;
}

/* ---- the sink --------------------------------------------------------------- */

void sy_otel_batch_init(const struct otel *o, struct sy_otlp_batch *b)
{
    sy_otlp_batch_init(b);
    b->resource = o->res;
    b->nresource = o->nres;
    b->scope_name = o->scope;
}

int sy_otel_body(const struct otel *o, struct sy_otlp_batch *b, struct sy_buf *body)
{
    return o->json ? sy_otlp_json(b, body) : sy_otlp_proto(b, body);
}

static int encode_group(struct otel *o, struct sy_logrec *const *recs, size_t n, struct sy_sink_req *out)
{
    struct sy_otlp_batch *b = &o->batch;
    sy_otlp_batch_reset(b);
    b->resource = o->res;
    b->nresource = o->nres;
    b->scope_name = o->scope;
    for (size_t i = 0; i < n; i++)
        if (!(recs[i]->flags & SY_LOGREC_RAW))
            sy_otel_record(o, b, recs[i]);
    memset(out, 0, sizeof *out);
    out->method = "POST";
    out->url = strdup(o->url);
    sy_buf_init(&out->headers, o->headers.len + 1);
    sy_buf_append(&out->headers, o->headers.p, o->headers.len);
    sy_buf_init(&out->body, OTEL_REQ_CAP);
    int rc = !out->url || b->oom || sy_otel_body(o, b, &out->body) || sy_buf_failed(&out->headers) ? -1 : 0;
    sy_otlp_batch_reset(b); /* the records' strings are not kept past encode() */
    if (rc) {
        free(out->url);
        sy_buf_free(&out->headers);
        sy_buf_free(&out->body);
        memset(out, 0, sizeof *out);
    }
    return rc;
}

static int otel_encode(void *inst, struct sy_logrec *const *recs, size_t n, struct sy_sink_req *out, size_t *nout)
{
    struct otel *o = inst;
    *nout = 0;
    size_t i = 0;
    while (i < n) {
        /* a group of records of about OTEL_REQ_TARGET bytes of content; the last takes the rest */
        size_t j = i, bytes = 0;
        while (j < n && (j == i || bytes < OTEL_REQ_TARGET || *nout == SY_SINK_MAX_REQS - 1)) {
            bytes += recs[j]->request_len + recs[j]->response_len + recs[j]->payload_len + 2048;
            j++;
        }
        if (encode_group(o, recs + i, j - i, &out[*nout])) {
            for (size_t k = 0; k < *nout; k++)
                sy_sink_req_free(&out[k]);
            *nout = 0;
            return -1;
        }
        (*nout)++;
        i = j;
    }
    return 0;
}

/* OTLP/HTTP: 429, 502, 503, 504 are retryable, other 4xx and 5xx are not;
 * no answer is retried. A 2xx with a partial_success still counts as sent
 * (the collector took what it could; what it rejected would be rejected again). */
static int otel_verdict(void *inst, int status, const char *body, size_t n)
{
    (void)inst;
    (void)body;
    (void)n;
    if (status >= 200 && status < 300)
        return SY_SINK_SENT;
    if (status == 0 || status == 408 || status == 429 || status == 502 || status == 503 || status == 504)
        return SY_SINK_RETRY;
    return SY_SINK_DROP;
}

const struct sy_sink_ops sy_sink_otel = {
    .name = "otel",
    .max_batch = OTEL_MAX_BATCH,
    .open = otel_open,
    .close = otel_close,
    .encode = otel_encode,
    .verdict = otel_verdict,
};

/* for tests */
void *sy_otel_open(const struct sy_logconf *lc, char *err, size_t errlen)
{
    return otel_open(lc, NULL, err, errlen);
}
void sy_otel_close(void *inst)
{
    otel_close(inst);
}
const char *sy_otel_url(const struct otel *o)
{
    return o->url;
}
const char *sy_otel_headers(const struct otel *o)
{
    return o->headers.p;
}
