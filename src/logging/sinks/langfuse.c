/* langfuse.c - the `langfuse` callback: traces and generations on Langfuse's public ingestion API.
 *
 * LiteLLM's LangFuseLogger (litellm/integrations/langfuse/langfuse.py,
 * _log_langfuse_v2) hands each call to the Langfuse Python SDK as one
 * trace() and one trace.generation(); the SDK queues them as two ingestion
 * events and its consumer thread posts batches to
 *     POST {LANGFUSE_HOST}/api/public/ingestion
 *     Authorization: Basic base64(public_key:secret_key)
 *     {"batch":[{"id":uuid,"timestamp":..,"type":"trace-create","body":{..}},
 *               {"id":uuid,"timestamp":..,"type":"generation-create","body":{..}}, ...],
 *      "metadata":{"batch_size":n,"sdk_integration":"litellm",...}}
 * This sink writes the same two events per record, field for field:
 *
 *   trace-create    id        metadata.trace_id, else the call id (litellm_call_id);
 *                             metadata.existing_trace_id: only {id} plus the
 *                             update_trace_keys asked for (an existing trace is
 *                             never renamed)
 *                   name      metadata.trace_name, else "litellm-<call_type>"
 *                   userId    the end user (user_api_key_end_user_id), or metadata.trace_user_id
 *                   sessionId metadata.session_id; version, release, tags (request_tags),
 *                             input, output (not on failures), trace_* metadata keys
 *   generation-create
 *                   id        metadata.generation_id, else "time-HH-MM-SS-ffffff_<response id>"
 *                             (LiteLLM's get_logging_id) on success
 *                   traceId, name (metadata.generation_name, else "litellm:<key alias>",
 *                             else "litellm-<call_type>"), startTime, endTime,
 *                             completionStartTime, model, modelParameters (every value that
 *                             is not a str/int/bool/float as Python's str(), pystr.h),
 *                             input {"messages", "tools"/"functions"}, output (the
 *                             response's message; the error text on failure),
 *                             usage {input, output, unit "TOKENS", totalCost},
 *                             usageDetails {input, output, total, cache_creation_input_tokens,
 *                             cache_read_input_tokens}, level DEFAULT / ERROR,
 *                             statusMessage, version, parentObservationId, promptName/Version
 *                   metadata  the StandardLoggingMetadata (key hash, alias, team, user, ...;
 *                             user_api_key_* left out under redact_user_api_key_info)
 *                             plus model_group, deployment, model_info, api_base, cache_hit,
 *                             litellm_response_cost, hidden_params, and the request's own
 *                             metadata under requester_metadata (LiteLLM's log_requester_metadata)
 * turn_off_message_logging gives LiteLLM's redacted input and output
 * ("redacted-by-litellm"); metadata.mask_input / mask_output do the same per call.
 *
 * Limits are the SDK's: an event above 1 MB has its largest of input, output
 * and metadata replaced by "<truncated due to size exceeding limit>" until it
 * fits; a request carries up to 2.5 MB of events (a batch of up to 8 records
 * therefore always fits the 8 requests one encode may produce).
 *
 * Event ids are derived from the record (SHA-256 of its ids), not random: a
 * retried batch carries the same ids, and Langfuse upserts on them.
 *
 * Answers: 2xx sent. Langfuse answers 207 with {successes, errors} per event:
 * events it refused are logged (once per minute) and counted in the
 * instance; a 207 where every event failed is dropped (4xx) or retried (5xx).
 * 401/403: wrong keys, dropped and logged once per minute. 429/5xx retried.
 *
 * Settings: LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY, LANGFUSE_HOST (default
 * https://cloud.langfuse.com, "http://" added when it has no scheme),
 * LANGFUSE_RELEASE, LANGFUSE_TRACING_ENVIRONMENT; a key's or team's
 * callback_vars langfuse_public_key, langfuse_secret_key (or langfuse_secret),
 * langfuse_host. A tenant that names its own host gets no key from the
 * environment: the proxy's secret is never sent to a host a tenant chose.
 */
#include <math.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/clock.h"
#include "core/log.h"
#include "logging/logging.h"
#include "logging/sinks/pystr.h"
#include "providers/jdom.h"

#define LF_EVENT_MAX   1000000u /* the SDK's MAX_EVENT_SIZE_BYTES */
#define LF_REQUEST_MAX 2500000u /* the SDK's MAX_BATCH_SIZE_BYTES */
#define LF_BODY_CAP    (64u << 20)
#define LF_TRUNCATED   "\"<truncated due to size exceeding limit>\""
#define LF_REDACTED    "redacted-by-litellm"
#define LF_WARN_EVERY  60.0

struct lf {
    char *url; /* {host}/api/public/ingestion */
    struct sy_buf headers;
    char *public_key;
    char *release;     /* LANGFUSE_RELEASE */
    char *environment; /* LANGFUSE_TRACING_ENVIRONMENT, when valid */
    uint64_t rejected; /* events Langfuse refused in 207 answers */
    double last_warn;
};

/* ---- settings ------------------------------------------------------------- */

static char *var_str(const struct sy_jdoc *d, const char *key, struct sy_arena *a)
{
    uint32_t v = d ? sy_jdom_top(d, key) : 0;
    if (sy_jdom_kind(d, v) != 's')
        return NULL;
    size_t n;
    const char *s = sy_jdom_str(d, v, a, &n);
    return s && n && strlen(s) == n ? (char *)s : NULL;
}

static const char *env_str(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* Text that goes into a header line: no control characters. */
static int header_safe(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 0;
    return 1;
}

static int env_name_ok(const char *e)
{
    /* the SDK's ENVIRONMENT_PATTERN ^(?!langfuse-)[a-z0-9-_]+$ */
    if (!*e || strncmp(e, "langfuse-", 9) == 0 || strlen(e) > 40)
        return 0;
    for (; *e; e++)
        if (!((*e >= 'a' && *e <= 'z') || (*e >= '0' && *e <= '9') || *e == '-' || *e == '_'))
            return 0;
    return 1;
}

static void lf_close(void *p)
{
    struct lf *lf = p;
    if (!lf)
        return;
    free(lf->url);
    sy_buf_free(&lf->headers);
    free(lf->public_key);
    free(lf->release);
    free(lf->environment);
    free(lf);
}

static void *lf_open(const struct sy_logconf *lc, const char *vars, char *err, size_t errlen)
{
    (void)lc;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d, *vd = NULL;
    if (vars && sy_jdom_parse(&d, vars, strlen(vars), &a, 0) == 0 && sy_jdom_type(&d, 0) == 'o')
        vd = &d;
    const char *pk = var_str(vd, "langfuse_public_key", &a);
    const char *sk = var_str(vd, "langfuse_secret_key", &a);
    if (!sk)
        sk = var_str(vd, "langfuse_secret", &a);
    const char *host = var_str(vd, "langfuse_host", &a);
    if (!host) { /* a tenant's own host never gets the environment's keys */
        if (!pk)
            pk = env_str("LANGFUSE_PUBLIC_KEY");
        if (!sk)
            sk = env_str("LANGFUSE_SECRET_KEY");
        host = env_str("LANGFUSE_HOST");
    }
    struct lf *lf = NULL;
    if (!pk || !sk) {
        snprintf(err, errlen, "langfuse: %s not set",
                 !pk ? (vd ? "langfuse_public_key" : "LANGFUSE_PUBLIC_KEY")
                     : (vd ? "langfuse_secret_key" : "LANGFUSE_SECRET_KEY"));
        goto out;
    }
    if (!host)
        host = "https://cloud.langfuse.com";
    if (!header_safe(pk) || !header_safe(sk) || !header_safe(host) || strchr(host, ' ')) {
        snprintf(err, errlen, "langfuse: the public key, secret key or host holds control characters");
        goto out;
    }
    lf = calloc(1, sizeof *lf);
    if (!lf) {
        snprintf(err, errlen, "langfuse: out of memory");
        goto out;
    }
    size_t hl = strlen(host);
    while (hl && host[hl - 1] == '/')
        hl--;
    int scheme = strncmp(host, "http://", 7) == 0 || strncmp(host, "https://", 8) == 0;
    struct sy_buf u;
    sy_buf_init(&u, 4096);
    if (!scheme) /* as LiteLLM: a bare host is reached over plain HTTP (a private network) */
        SY_BUF_LIT(&u, "http://");
    sy_buf_append(&u, host, hl);
    SY_BUF_LIT(&u, "/api/public/ingestion");
    lf->url = u.p ? strdup(u.p) : NULL;
    sy_buf_free(&u);

    /* Basic auth of public:secret */
    size_t pl = strlen(pk), sl = strlen(sk);
    unsigned char *cred = malloc(pl + sl + 2);
    char *b64 = malloc(4 * ((pl + sl + 1 + 2) / 3) + 1);
    sy_buf_init(&lf->headers, 16384);
    if (cred && b64) {
        memcpy(cred, pk, pl);
        cred[pl] = ':';
        memcpy(cred + pl + 1, sk, sl);
        EVP_EncodeBlock((unsigned char *)b64, cred, (int)(pl + sl + 1));
        sy_buf_printf(&lf->headers,
                      "Content-Type: application/json\r\nAuthorization: Basic %s\r\n"
                      "X-Langfuse-Sdk-Name: switchyard\r\nX-Langfuse-Sdk-Version: " SY_VERSION "\r\n"
                      "X-Langfuse-Public-Key: %s\r\n",
                      b64, pk);
        OPENSSL_cleanse(cred, pl + sl + 1);
    }
    free(cred);
    free(b64);
    lf->public_key = strdup(pk);
    const char *rel = env_str("LANGFUSE_RELEASE");
    lf->release = rel ? strdup(rel) : NULL;
    const char *envn = env_str("LANGFUSE_TRACING_ENVIRONMENT");
    lf->environment = envn && env_name_ok(envn) ? strdup(envn) : NULL;
    if (!lf->url || !lf->public_key || sy_buf_failed(&lf->headers) || (rel && !lf->release)) {
        snprintf(err, errlen, "langfuse: out of memory");
        lf_close(lf);
        lf = NULL;
    }
out:
    sy_arena_free(&a);
    return lf;
}

/* ---- small writers ---------------------------------------------------------- */

static void iso_time(char out[64], double t)
{
    if (!(t > 0) || t > 253402300799.0)
        t = 0;
    time_t s = (time_t)floor(t);
    int ms = (int)((t - (double)s) * 1000.0);
    if (ms > 999)
        ms = 999;
    struct tm tm;
    gmtime_r(&s, &tm);
    snprintf(out, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec, ms);
}

static void jw_time(struct sy_jw *w, const char *key, double t)
{
    char ts[64];
    iso_time(ts, t);
    sy_jw_key(w, key);
    sy_jw_cstr(w, ts);
}

/* A UUID (version 4 layout) derived from the record and a tag: stable across retries. */
static void rec_uuid(char out[37], const struct sy_logrec *r, const char *tag)
{
    unsigned char h[SHA256_DIGEST_LENGTH];
    struct sy_buf in;
    sy_buf_init(&in, 1u << 16);
    const char *parts[3] = {r->id, r->call_id, tag};
    for (int i = 0; i < 3; i++) {
        const char *p = parts[i] ? parts[i] : "";
        sy_buf_append(&in, p, strlen(p) + 1);
    }
    sy_buf_append(&in, &r->start_s, sizeof r->start_s);
    sy_buf_append(&in, &r->seq, sizeof r->seq);
    SHA256((const unsigned char *)(in.p ? in.p : ""), in.len, h);
    sy_buf_free(&in);
    h[6] = (unsigned char)((h[6] & 0x0f) | 0x40);
    h[8] = (unsigned char)((h[8] & 0x3f) | 0x80);
    static const char hx[] = "0123456789abcdef";
    int o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hx[h[i] >> 4];
        out[o++] = hx[h[i] & 15];
    }
    out[o] = 0;
}

/* ---- one record ---------------------------------------------------------- */

/* What a record's JSON texts give, parsed once. */
struct lfctx {
    const struct sy_logrec *r;
    struct sy_arena *a;
    struct sy_jdoc P; /* StandardLoggingPayload */
    struct sy_jdoc M; /* the request's metadata */
    int hasP, hasM;
    int failure, redact_msgs, redact_key;
};

static uint32_t pget(const struct lfctx *c, const char *key)
{
    return c->hasP ? sy_jdom_top(&c->P, key) : 0;
}
static uint32_t mget(const struct lfctx *c, const char *key)
{
    return c->hasM ? sy_jdom_top(&c->M, key) : 0;
}

/* A metadata value used as a Langfuse string field (id, name, session): a
 * string, or a number's text (pydantic coerces it); else NULL. */
static const char *mstr(const struct lfctx *c, const char *key)
{
    uint32_t v = mget(c, key);
    char t = sy_jdom_kind(&c->M, v);
    if (t == 's') {
        size_t n;
        const char *s = sy_jdom_str(&c->M, v, c->a, &n);
        return s && strlen(s) == n ? s : NULL;
    }
    if (t == 'n') {
        size_t n;
        const char *raw = sy_jdom_raw(&c->M, v, &n);
        return sy_arena_strndup(c->a, raw, n);
    }
    return NULL;
}

/* Python truthiness of metadata[key], strings "true" (any case) counting too. */
static int mtrue(const struct lfctx *c, const char *key)
{
    uint32_t v = mget(c, key);
    switch (sy_jdom_kind(&c->M, v)) {
    case 't': return 1;
    case 's': {
        size_t n;
        const char *s = sy_jdom_view(&c->M, v, c->a, &n);
        return n == 4 && strncasecmp(s, "true", 4) == 0;
    }
    default: return 0;
    }
}

/* The generation's and trace's input: {"messages": .., "tools"/"functions"}. */
static void write_input(struct lfctx *c, struct sy_buf *b)
{
    struct sy_jw w;
    sy_jw_init(&w, b);
    if (mtrue(c, "mask_input")) {
        sy_jw_cstr(&w, LF_REDACTED);
        return;
    }
    sy_jw_obj(&w);
    sy_jw_key(&w, "messages");
    uint32_t msgs = pget(c, "messages");
    if (c->redact_msgs) {
        sy_jw_raw(&w, "[{\"role\":\"user\",\"content\":\"" LF_REDACTED "\"}]",
                  sizeof("[{\"role\":\"user\",\"content\":\"" LF_REDACTED "\"}]") - 1);
    } else if (msgs) {
        sy_jw_node(&w, &c->P, msgs);
    } else {
        sy_jw_null(&w);
    }
    uint32_t mp = pget(c, "model_parameters");
    if (sy_jdom_kind(&c->P, mp) == 'o') {
        uint32_t f = sy_jdom_member(&c->P, mp, "functions"), t = sy_jdom_member(&c->P, mp, "tools");
        if (f) {
            sy_jw_key(&w, "functions");
            sy_jw_node(&w, &c->P, f);
        }
        if (t) {
            sy_jw_key(&w, "tools");
            sy_jw_node(&w, &c->P, t);
        }
    }
    sy_jw_end(&w);
}

static int call_type_is(const struct sy_logrec *r, const char *a, const char *b)
{
    return r->call_type && (strcmp(r->call_type, a) == 0 || (b && strcmp(r->call_type, b) == 0));
}

/* The output LiteLLM's _get_langfuse_input_output_content picks: the error
 * text on failure, else the first choice's message (chat), its text (text
 * completion), the output items (responses), images' data; nothing for
 * embeddings. Returns 0 when there is no output. */
static int write_output(struct lfctx *c, struct sy_buf *b, const char *status_message)
{
    struct sy_jw w;
    sy_jw_init(&w, b);
    if (c->failure) {
        if (!status_message)
            return 0;
        sy_jw_cstr(&w, status_message);
        return 1;
    }
    if (call_type_is(c->r, "aembedding", "embedding"))
        return 0;
    if (mtrue(c, "mask_output")) {
        sy_jw_cstr(&w, LF_REDACTED);
        return 1;
    }
    uint32_t resp = pget(c, "response");
    if (sy_jdom_kind(&c->P, resp) != 'o')
        resp = 0;
    uint32_t choices = resp ? sy_jdom_member(&c->P, resp, "choices") : 0;
    uint32_t ch0 = sy_jdom_kind(&c->P, choices) == 'a' ? sy_jdom_first(&c->P, choices) : 0;
    if (c->redact_msgs) {
        if (ch0 && !sy_jdom_member(&c->P, ch0, "message") && sy_jdom_member(&c->P, ch0, "text")) {
            sy_jw_cstr(&w, LF_REDACTED);
            return 1;
        }
        sy_jw_raw(&w,
                  "{\"content\":\"" LF_REDACTED "\",\"role\":\"assistant\",\"tool_calls\":null,\"function_call\":null}",
                  sizeof("{\"content\":\"" LF_REDACTED
                         "\",\"role\":\"assistant\",\"tool_calls\":null,\"function_call\":null}") -
                      1);
        return 1;
    }
    if (!resp)
        return 0;
    if (choices) {
        if (!ch0)
            return 0;
        uint32_t m = sy_jdom_member(&c->P, ch0, "message");
        if (!m)
            m = sy_jdom_member(&c->P, ch0, "text");
        if (!m)
            return 0;
        sy_jw_node(&w, &c->P, m);
        return 1;
    }
    uint32_t o = sy_jdom_member(&c->P, resp, "output");
    if (!o)
        o = sy_jdom_member(&c->P, resp, "data");
    if (!o && sy_jdom_member(&c->P, resp, "content"))
        o = resp; /* an Anthropic /v1/messages answer as the client got it */
    if (!o)
        return 0;
    sy_jw_node(&w, &c->P, o);
    return 1;
}

/* modelParameters: the call's optional params but tools/functions; values
 * that are not str/int/bool/float become str(value); system_fingerprint added
 * from the response. */
static void write_model_params(struct lfctx *c, struct sy_jw *w)
{
    uint32_t mp = pget(c, "model_parameters");
    uint32_t resp = pget(c, "response");
    uint32_t fp = sy_jdom_kind(&c->P, resp) == 'o' ? sy_jdom_member(&c->P, resp, "system_fingerprint") : 0;
    if (sy_jdom_kind(&c->P, mp) != 'o' && !fp)
        return;
    sy_jw_key(w, "modelParameters");
    sy_jw_obj(w);
    if (sy_jdom_kind(&c->P, mp) == 'o') {
        for (uint32_t k = sy_jdom_first(&c->P, mp); k; k = sy_jdom_next_key(&c->P, k)) {
            if (sy_jdom_str_eq(&c->P, k, "functions") || sy_jdom_str_eq(&c->P, k, "tools"))
                continue;
            if (fp && sy_jdom_str_eq(&c->P, k, "system_fingerprint"))
                continue;
            size_t kl;
            const char *ks = sy_jdom_str(&c->P, k, c->a, &kl);
            uint32_t v = sy_jdom_val(k);
            sy_jw_keyn(w, ks, kl);
            char t = sy_jdom_type(&c->P, v);
            if (t == 's' || t == 'n' || t == 't' || t == 'f') {
                sy_jw_node(w, &c->P, v);
            } else {
                struct sy_buf s;
                sy_buf_init(&s, 1u << 20);
                if (sy_pystr_node(&s, &c->P, v, c->a) == 0)
                    sy_jw_str(w, s.p ? s.p : "", s.len);
                else
                    sy_jw_null(w);
                sy_buf_free(&s);
            }
        }
    }
    if (fp) {
        sy_jw_key(w, "system_fingerprint");
        sy_jw_node(w, &c->P, fp);
    }
    sy_jw_end(w);
}

static int key_in(const struct sy_jdoc *d, uint32_t obj, const char *ks, size_t kl, struct sy_arena *a)
{
    if (sy_jdom_kind(d, obj) != 'o')
        return 0;
    for (uint32_t k = sy_jdom_first(d, obj); k; k = sy_jdom_next_key(d, k)) {
        size_t n;
        const char *s = sy_jdom_view(d, k, a, &n);
        if (n == kl && memcmp(s, ks, kl) == 0)
            return 1;
    }
    return 0;
}

static int key_is_user_api_key(const char *k, size_t n)
{
    return n >= 12 && memcmp(k, "user_api_key", 12) == 0;
}

/* The generation's metadata (LiteLLM's clean_metadata after log_requester_metadata). */
static void write_metadata(struct lfctx *c, struct sy_buf *b)
{
    const struct sy_logrec *r = c->r;
    struct sy_jw w;
    sy_jw_init(&w, b);
    sy_jw_obj(&w);
    /* requester_metadata: the request's own metadata */
    const struct sy_jdoc *rd = NULL;
    uint32_t rm = 0;
    uint32_t pm = pget(c, "metadata");
    if (sy_jdom_kind(&c->P, pm) != 'o')
        pm = 0;
    if (pm && sy_jdom_kind(&c->P, sy_jdom_member(&c->P, pm, "requester_metadata")) == 'o') {
        rd = &c->P;
        rm = sy_jdom_member(&c->P, pm, "requester_metadata");
    } else if (c->hasM && sy_jdom_type(&c->M, 0) == 'o') {
        rd = &c->M;
        rm = 0; /* the root */
    }
    /* a top-level key that the requester also sent is only under requester_metadata */
#define SKIP(ks, kl) (rd && key_in(rd, rm, (ks), (kl), c->a))
    if (pm) {
        for (uint32_t k = sy_jdom_first(&c->P, pm); k; k = sy_jdom_next_key(&c->P, k)) {
            size_t kl;
            const char *ks = sy_jdom_str(&c->P, k, c->a, &kl);
            if (sy_jdom_str_eq(&c->P, k, "requester_metadata"))
                continue;
            if (c->redact_key && key_is_user_api_key(ks, kl))
                continue;
            if (SKIP(ks, kl))
                continue;
            sy_jw_keyn(&w, ks, kl);
            sy_jw_node(&w, &c->P, sy_jdom_val(k));
        }
    }
    static const char *const own[] = {"model_group",           "deployment",   "model_info", "api_base", "cache_hit",
                                      "litellm_response_cost", "hidden_params"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        const char *k = own[i];
        if ((pm && sy_jdom_at(&c->P, pm, k)) || SKIP(k, strlen(k)))
            continue;
        if (strcmp(k, "model_group") == 0 && r->model_group) {
            sy_jw_key(&w, k);
            sy_jw_cstr(&w, r->model_group);
        } else if (strcmp(k, "deployment") == 0 && r->upstream_model) {
            sy_jw_key(&w, k);
            sy_jw_cstr(&w, r->upstream_model);
        } else if (strcmp(k, "model_info") == 0 && r->model_id) {
            sy_jw_key(&w, k);
            sy_jw_obj(&w);
            sy_jw_key(&w, "id");
            sy_jw_cstr(&w, r->model_id);
            sy_jw_end(&w);
        } else if (strcmp(k, "api_base") == 0 && r->api_base && *r->api_base) {
            sy_jw_key(&w, k);
            sy_jw_cstr(&w, r->api_base);
        } else if (strcmp(k, "cache_hit") == 0) {
            sy_jw_key(&w, k);
            sy_jw_bool(&w, (r->flags & SY_LOGREC_CACHE_HIT) != 0);
        } else if (strcmp(k, "litellm_response_cost") == 0) {
            sy_jw_key(&w, k);
            if (r->flags & SY_LOGREC_COST_KNOWN)
                sy_jw_double(&w, r->cost);
            else
                sy_jw_null(&w);
        } else if (strcmp(k, "hidden_params") == 0) {
            uint32_t hp = pget(c, "hidden_params");
            if (hp) {
                sy_jw_key(&w, k);
                sy_jw_node(&w, &c->P, hp);
            }
        }
    }
#undef SKIP
    sy_jw_key(&w, "requester_metadata");
    if (rd)
        sy_jw_node(&w, rd, rm);
    else
        sy_jw_raw(&w, "{}", 2);
    sy_jw_end(&w);
}

/* One event: {"id","timestamp","type","body":{<fixed>,<parts>}} into dst. The
 * body's fixed members are in fixed (an object's text); parts named names[i]
 * (JSON texts, len 0: absent) are appended, the largest replaced by the SDK's
 * marker while the event is above LF_EVENT_MAX. */
static void emit_event(struct sy_buf *dst, const char *id, const char *ts, const char *type, const struct sy_buf *fixed,
                       const char *const names[3], struct sy_buf parts[3])
{
    size_t lens[3], total = 0;
    int cut[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
        lens[i] = parts[i].len;
        total += lens[i] + strlen(names[i]) + 4;
    }
    size_t head = 96 + strlen(type) + fixed->len;
    while (head + total > LF_EVENT_MAX) {
        int big = -1;
        for (int i = 0; i < 3; i++)
            if (!cut[i] && lens[i] && (big < 0 || lens[i] > lens[big]))
                big = i;
        if (big < 0)
            break;
        cut[big] = 1;
        total = total - lens[big] + sizeof(LF_TRUNCATED) - 1;
        lens[big] = sizeof(LF_TRUNCATED) - 1;
    }
    sy_buf_printf(dst, "{\"id\":\"%s\",\"timestamp\":\"%s\",\"type\":\"%s\",\"body\":", id, ts, type);
    sy_buf_append(dst, fixed->p, fixed->len - 1); /* without its closing brace */
    for (int i = 0; i < 3; i++) {
        if (!parts[i].len)
            continue;
        sy_buf_printf(dst, ",\"%s\":", names[i]);
        if (cut[i])
            SY_BUF_LIT(dst, LF_TRUNCATED);
        else
            sy_buf_append(dst, parts[i].p, parts[i].len);
    }
    SY_BUF_LIT(dst, "}}");
}

static void jw_opt(struct sy_jw *w, const char *key, const char *v)
{
    if (v) {
        sy_jw_key(w, key);
        sy_jw_cstr(w, v);
    }
}

/* The trace_* metadata keys LiteLLM moves onto a new trace (trace_user_id -> userId, ...). */
static void write_trace_keys(struct lfctx *c, struct sy_jw *w, int *has_user, int *has_tags, int *has_meta)
{
    static const struct {
        const char *from, *to;
        char kind; /* 's' string, 'j' any JSON, 'b' bool, 'a' string array */
    } tk[] = {{"trace_user_id", "userId", 's'},  {"trace_session_id", "sessionId", 's'},
              {"trace_release", "release", 's'}, {"trace_metadata", "metadata", 'j'},
              {"trace_tags", "tags", 'a'},       {"trace_public", "public", 'b'},
              {"trace_input", "input", 'j'},     {"trace_output", "output", 'j'}};
    for (size_t i = 0; i < sizeof tk / sizeof tk[0]; i++) {
        uint32_t v = mget(c, tk[i].from);
        if (!v)
            continue;
        char t = sy_jdom_type(&c->M, v);
        if ((tk[i].kind == 's' && t != 's') || (tk[i].kind == 'b' && t != 't' && t != 'f') ||
            (tk[i].kind == 'a' && t != 'a'))
            continue;
        if (tk[i].kind == 'a') { /* strings only: Langfuse refuses others */
            int ok = 1;
            for (uint32_t e = sy_jdom_first(&c->M, v); e; e = sy_jdom_next(&c->M, e))
                ok &= sy_jdom_type(&c->M, e) == 's';
            if (!ok)
                continue;
            *has_tags = 1;
        }
        if (!strcmp(tk[i].to, "userId"))
            *has_user = 1;
        if (!strcmp(tk[i].to, "metadata"))
            *has_meta = 1;
        sy_jw_key(w, tk[i].to);
        sy_jw_node(w, &c->M, v);
    }
}

static void write_tags(struct lfctx *c, struct sy_jw *w)
{
    uint32_t t = pget(c, "request_tags");
    struct sy_jdoc td;
    const struct sy_jdoc *d = &c->P;
    if (!t && c->r->tags && sy_jdom_parse(&td, c->r->tags, strlen(c->r->tags), c->a, 0) == 0) {
        d = &td;
        t = 0;
        if (sy_jdom_type(&td, 0) != 'a')
            d = NULL;
    } else if (!t) {
        d = NULL;
    }
    sy_jw_key(w, "tags");
    sy_jw_arr(w);
    if (d && sy_jdom_type(d, t) == 'a')
        for (uint32_t e = sy_jdom_first(d, t); e; e = sy_jdom_next(d, e))
            if (sy_jdom_type(d, e) == 's')
                sy_jw_node(w, d, e);
    sy_jw_end(w);
}

/* The record's two events appended to dst (each complete, comma-separated). 0 or -1. */
static int lf_record(struct lf *lf, struct sy_logrec *r, struct sy_buf *dst, struct sy_arena *a)
{
    struct lfctx c = {.r = r, .a = a};
    c.failure = (r->flags & SY_LOGREC_FAILURE) != 0;
    c.redact_msgs = (r->flags & SY_LOGREC_NO_MESSAGES) != 0;
    c.redact_key = (r->flags & SY_LOGREC_REDACT_KEY) != 0;
    size_t plen = 0;
    const char *p = sy_log_payload(r, &plen);
    c.hasP = p && sy_jdom_parse(&c.P, p, plen, a, 0) == 0 && sy_jdom_type(&c.P, 0) == 'o';
    c.hasM = r->request_metadata && sy_jdom_parse(&c.M, r->request_metadata, strlen(r->request_metadata), a, 0) == 0 &&
             sy_jdom_type(&c.M, 0) == 'o';

    const char *call_type = r->call_type ? r->call_type : "completion";
    const char *session_id = mstr(&c, "session_id");
    const char *trace_name = mstr(&c, "trace_name");
    const char *trace_id = mstr(&c, "trace_id");
    if (!trace_id)
        trace_id = r->call_id ? r->call_id : r->id;
    const char *existing = mstr(&c, "existing_trace_id");
    const char *version = mstr(&c, "version");
    const char *trace_version = mstr(&c, "trace_version");
    if (!trace_version)
        trace_version = version;
    if (!trace_name && !existing) {
        size_t nl = strlen(call_type) + 9;
        char *n = sy_arena_alloc(a, nl);
        snprintf(n, nl, "litellm-%s", call_type);
        trace_name = n;
    }
    const char *status_message = NULL;
    if (c.failure) {
        uint32_t es = pget(&c, "error_str");
        if (sy_jdom_kind(&c.P, es) == 's')
            status_message = sy_jdom_str(&c.P, es, a, NULL);
        if (!status_message)
            status_message = r->error_message ? r->error_message : r->error_class;
    }

    struct sy_buf in, outp, md;
    sy_buf_init(&in, LF_BODY_CAP);
    sy_buf_init(&outp, LF_BODY_CAP);
    sy_buf_init(&md, LF_BODY_CAP);
    write_input(&c, &in);
    int has_out = write_output(&c, &outp, status_message);
    if (!has_out)
        sy_buf_reset(&outp);
    write_metadata(&c, &md);

    char ts[64], trace_ev[37], gen_ev[37];
    iso_time(ts, r->end_s > 0 ? r->end_s : sy_wall_now());
    rec_uuid(trace_ev, r, "trace-create");
    rec_uuid(gen_ev, r, "generation-create");

    /* ---- trace-create ---- */
    struct sy_buf tf;
    sy_buf_init(&tf, LF_BODY_CAP);
    struct sy_jw w;
    sy_jw_init(&w, &tf);
    sy_jw_obj(&w);
    int has_user = 0, has_tags = 0, has_meta = 0;
    int trace_in = 0, trace_out = 0;
    if (existing) {
        sy_jw_key(&w, "id");
        sy_jw_cstr(&w, existing);
        /* update_trace_keys: the named keys only ("input"/"output", or metadata keys, trace_ dropped) */
        uint32_t u = mget(&c, "update_trace_keys");
        if (sy_jdom_kind(&c.M, u) == 'a') {
            for (uint32_t e = sy_jdom_first(&c.M, u); e; e = sy_jdom_next(&c.M, e)) {
                if (sy_jdom_str_eq(&c.M, e, "input")) {
                    trace_in = 1;
                } else if (sy_jdom_str_eq(&c.M, e, "output")) {
                    trace_out = has_out;
                } else if (sy_jdom_type(&c.M, e) == 's') {
                    const char *k = sy_jdom_str(&c.M, e, a, NULL);
                    const char *to = strncmp(k, "trace_", 6) == 0 ? k + 6 : k;
                    static const struct {
                        const char *k, *camel;
                    } map[] = {{"name", "name"},       {"user_id", "userId"},  {"session_id", "sessionId"},
                               {"version", "version"}, {"release", "release"}, {"metadata", "metadata"},
                               {"tags", "tags"},       {"public", "public"}};
                    uint32_t v = mget(&c, k);
                    for (size_t i = 0; v && i < sizeof map / sizeof map[0]; i++)
                        if (!strcmp(map[i].k, to)) {
                            sy_jw_key(&w, map[i].camel);
                            sy_jw_node(&w, &c.M, v);
                        }
                }
            }
        }
    } else {
        sy_jw_key(&w, "id");
        sy_jw_cstr(&w, trace_id);
        jw_opt(&w, "name", trace_name);
        jw_opt(&w, "sessionId", session_id);
        jw_opt(&w, "version", trace_version);
        write_trace_keys(&c, &w, &has_user, &has_tags, &has_meta);
        if (!has_user && r->end_user)
            jw_opt(&w, "userId", r->end_user);
        if (!has_tags)
            write_tags(&c, &w);
        if (mtrue(&c, "debug_langfuse") && !has_meta && c.hasM) {
            sy_jw_key(&w, "metadata");
            sy_jw_obj(&w);
            sy_jw_key(&w, "metadata_passed_to_litellm");
            sy_jw_node(&w, &c.M, 0);
            sy_jw_end(&w);
        }
        trace_in = 1;
        trace_out = has_out && !c.failure;
    }
    if (lf->release && !mget(&c, "trace_release")) {
        sy_jw_key(&w, "release");
        sy_jw_cstr(&w, lf->release);
    }
    jw_opt(&w, "environment", lf->environment);
    sy_jw_key(&w, "timestamp");
    sy_jw_cstr(&w, ts);
    sy_jw_end(&w);

    static const char *const tnames[3] = {"input", "output", "metadata"};
    struct sy_buf tparts[3], none;
    sy_buf_init(&none, 1);
    tparts[0] = trace_in ? in : none;
    tparts[1] = trace_out ? outp : none;
    tparts[2] = none;
    emit_event(dst, trace_ev, ts, "trace-create", &tf, tnames, tparts);
    SY_BUF_LIT(dst, ",");

    /* ---- generation-create ---- */
    struct sy_buf gf;
    sy_buf_init(&gf, LF_BODY_CAP);
    sy_jw_init(&w, &gf);
    sy_jw_obj(&w);
    const char *gen_id = mstr(&c, "generation_id");
    char gid[160];
    if (!gen_id && !c.failure) {
        uint32_t resp = pget(&c, "response"), rid = 0;
        if (sy_jdom_kind(&c.P, resp) == 'o')
            rid = sy_jdom_member(&c.P, resp, "id");
        const char *id = sy_jdom_kind(&c.P, rid) == 's' ? sy_jdom_str(&c.P, rid, a, NULL) : r->id;
        if (id) {
            time_t s = (time_t)floor(r->start_s);
            struct tm tm;
            localtime_r(&s, &tm); /* LiteLLM's start_time is a naive local datetime */
            int us = (int)((r->start_s - (double)s) * 1e6);
            if (us > 999999)
                us = 999999;
            size_t gl = strlen(id) + 64;
            char *g = sy_arena_alloc(a, gl);
            snprintf(g, gl, "time-%02d-%02d-%02d-%06d_%s", tm.tm_hour, tm.tm_min, tm.tm_sec, us, id);
            gen_id = g;
        }
    }
    if (!gen_id) {
        rec_uuid(gid, r, "generation");
        gen_id = gid;
    }
    sy_jw_key(&w, "id");
    sy_jw_cstr(&w, gen_id);
    sy_jw_key(&w, "traceId");
    sy_jw_cstr(&w, existing ? existing : trace_id);
    const char *gen_name = mstr(&c, "generation_name");
    if (!gen_name && r->generation_name)
        gen_name = r->generation_name;
    if (!gen_name) {
        /* litellm:<key alias> when the alias is logged, else litellm-<call_type> */
        const char *alias = NULL;
        if (!c.redact_key) {
            uint32_t pm = pget(&c, "metadata");
            uint32_t al = sy_jdom_kind(&c.P, pm) == 'o' ? sy_jdom_member(&c.P, pm, "user_api_key_alias") : 0;
            if (sy_jdom_kind(&c.P, al) == 's')
                alias = sy_jdom_str(&c.P, al, a, NULL);
            else if (!c.hasP)
                alias = r->key_alias;
        }
        size_t nl = strlen(alias ? alias : call_type) + 10;
        char *n = sy_arena_alloc(a, nl);
        snprintf(n, nl, alias ? "litellm:%s" : "litellm-%s", alias ? alias : call_type);
        gen_name = n;
    }
    sy_jw_key(&w, "name");
    sy_jw_cstr(&w, gen_name);
    jw_time(&w, "startTime", r->start_s);
    jw_time(&w, "endTime", r->end_s);
    jw_time(&w, "completionStartTime", r->completion_start_s > 0 ? r->completion_start_s : r->end_s);
    const char *model = NULL;
    uint32_t pmodel = pget(&c, "model");
    if (sy_jdom_kind(&c.P, pmodel) == 's')
        model = sy_jdom_str(&c.P, pmodel, a, NULL);
    if (!model)
        model = r->model;
    jw_opt(&w, "model", model);
    write_model_params(&c, &w);
    if (!c.failure) {
        uint64_t pt = r->prompt_tokens, ct = r->completion_tokens;
        sy_jw_key(&w, "usage");
        sy_jw_obj(&w);
        sy_jw_key(&w, "input");
        sy_jw_int(&w, (int64_t)pt);
        sy_jw_key(&w, "output");
        sy_jw_int(&w, (int64_t)ct);
        sy_jw_key(&w, "unit");
        sy_jw_cstr(&w, "TOKENS");
        if (r->flags & SY_LOGREC_COST_KNOWN) {
            sy_jw_key(&w, "totalCost");
            sy_jw_double(&w, r->cost);
        }
        sy_jw_end(&w);
        sy_jw_key(&w, "usageDetails");
        sy_jw_obj(&w);
        sy_jw_key(&w, "input");
        sy_jw_int(&w, (int64_t)pt);
        sy_jw_key(&w, "output");
        sy_jw_int(&w, (int64_t)ct);
        sy_jw_key(&w, "total");
        sy_jw_int(&w, (int64_t)(pt + ct));
        sy_jw_key(&w, "cache_creation_input_tokens");
        sy_jw_int(&w, (int64_t)r->cache_creation_tokens);
        sy_jw_key(&w, "cache_read_input_tokens");
        sy_jw_int(&w, (int64_t)r->cached_tokens);
        sy_jw_end(&w);
    }
    sy_jw_key(&w, "level");
    sy_jw_cstr(&w, c.failure ? "ERROR" : "DEFAULT");
    if (c.failure && status_message) {
        sy_jw_key(&w, "statusMessage");
        sy_jw_cstr(&w, status_message);
    }
    jw_opt(&w, "version", version);
    jw_opt(&w, "parentObservationId", mstr(&c, "parent_observation_id"));
    /* metadata.prompt = {"name", "version"}: the Langfuse prompt this generation used */
    uint32_t pr = mget(&c, "prompt");
    if (sy_jdom_kind(&c.M, pr) == 'o') {
        uint32_t pn = sy_jdom_member(&c.M, pr, "name"), pv = sy_jdom_member(&c.M, pr, "version");
        int64_t ver;
        if (sy_jdom_kind(&c.M, pn) == 's' && pv && sy_jdom_i64(&c.M, pv, &ver) && ver > 0 && ver < INT32_MAX) {
            sy_jw_key(&w, "promptName");
            sy_jw_node(&w, &c.M, pn);
            sy_jw_key(&w, "promptVersion");
            sy_jw_int(&w, ver);
        }
    }
    jw_opt(&w, "environment", lf->environment);
    sy_jw_end(&w);

    struct sy_buf gparts[3] = {in, has_out ? outp : none, md};
    emit_event(dst, gen_ev, ts, "generation-create", &gf, tnames, gparts);

    int rc = (sy_buf_failed(&in) || sy_buf_failed(&outp) || sy_buf_failed(&md) || sy_buf_failed(&tf) ||
              sy_buf_failed(&gf) || w.err)
                 ? -1
                 : 0;
    sy_buf_free(&in);
    sy_buf_free(&outp);
    sy_buf_free(&md);
    sy_buf_free(&tf);
    sy_buf_free(&gf);
    sy_buf_free(&none);
    return rc;
}

/* ---- the batch ------------------------------------------------------------ */

static int lf_finish_req(struct lf *lf, struct sy_sink_req *q, struct sy_buf *events, size_t nev)
{
    q->method = "POST";
    q->url = strdup(lf->url);
    sy_buf_init(&q->headers, 1u << 16);
    sy_buf_append_buf(&q->headers, &lf->headers);
    sy_buf_init(&q->body, LF_BODY_CAP);
    SY_BUF_LIT(&q->body, "{\"batch\":[");
    sy_buf_append_buf(&q->body, events);
    SY_BUF_LIT(&q->body, "],\"metadata\":{\"batch_size\":");
    sy_buf_u64(&q->body, nev);
    SY_BUF_LIT(&q->body, ",\"sdk_integration\":\"litellm\",\"sdk_name\":\"switchyard\",\"sdk_version\":\"" SY_VERSION
                         "\",\"public_key\":");
    struct sy_jw w;
    sy_jw_init(&w, &q->body);
    sy_jw_cstr(&w, lf->public_key);
    SY_BUF_LIT(&q->body, "}}");
    if (q->url && !sy_buf_failed(&q->body) && !sy_buf_failed(&q->headers))
        return 0;
    sy_sink_req_free(q);
    memset(q, 0, sizeof *q);
    return -1;
}

static int lf_encode(void *inst, struct sy_logrec *const *recs, size_t n, struct sy_sink_req *out, size_t *nout)
{
    struct lf *lf = inst;
    *nout = 0;
    struct sy_buf events, one;
    sy_buf_init(&events, LF_BODY_CAP);
    sy_buf_init(&one, LF_BODY_CAP);
    struct sy_arena a;
    sy_arena_init(&a);
    size_t nev = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (recs[i]->flags & SY_LOGREC_RAW)
            continue;
        sy_buf_reset(&one);
        if (lf_record(lf, recs[i], &one, &a) != 0 || sy_buf_failed(&one)) {
            sy_arena_reset(&a);
            continue; /* this record cannot be written; the others still go */
        }
        sy_arena_reset(&a);
        if (nev && events.len + one.len + 1 > LF_REQUEST_MAX) {
            if (*nout == SY_SINK_MAX_REQS - 1 || lf_finish_req(lf, &out[*nout], &events, nev) != 0) {
                rc = -1;
                break;
            }
            (*nout)++;
            sy_buf_reset(&events);
            nev = 0;
        }
        if (nev)
            SY_BUF_LIT(&events, ",");
        sy_buf_append_buf(&events, &one);
        nev += 2;
    }
    if (rc == 0 && nev) {
        if (lf_finish_req(lf, &out[*nout], &events, nev) == 0)
            (*nout)++;
        else
            rc = -1;
    }
    if (rc != 0) {
        for (size_t i = 0; i < *nout; i++)
            sy_sink_req_free(&out[i]);
        *nout = 0;
    } else if (*nout == 0 && n > 0) {
        int any = 0;
        for (size_t i = 0; i < n; i++)
            any |= !(recs[i]->flags & SY_LOGREC_RAW);
        rc = any ? -1 : 0; /* every record failed to encode */
    }
    sy_buf_free(&events);
    sy_buf_free(&one);
    sy_arena_free(&a);
    return rc;
}

/* ---- answers -------------------------------------------------------------- */

/* A remote answer's text for our log: printable ASCII, at most cap - 1 bytes. */
static void log_text(char *dst, size_t cap, const char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; s && i < n && o + 1 < cap; i++)
        dst[o++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    dst[o] = 0;
}

static int lf_warn_due(struct lf *lf)
{
    double now = sy_wall_now();
    if (now - lf->last_warn < LF_WARN_EVERY)
        return 0;
    lf->last_warn = now;
    return 1;
}

static int lf_verdict(void *inst, int status, const char *body, size_t n)
{
    struct lf *lf = inst;
    if (status == 401 || status == 403) {
        if (lf_warn_due(lf))
            sy_warn("langfuse: %s refused the keys (HTTP %d): check LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY", lf->url,
                    status);
        return SY_SINK_DROP;
    }
    if (status == 207) {
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_jdoc d;
        int verdict = SY_SINK_SENT;
        if (body && n && sy_jdom_parse(&d, body, n, &a, 1u << 20) == 0 && sy_jdom_type(&d, 0) == 'o') {
            uint32_t errs = sy_jdom_top(&d, "errors"), oks = sy_jdom_top(&d, "successes");
            size_t nerr = sy_jdom_kind(&d, errs) == 'a' ? d.n[errs].kids : 0;
            size_t nok = sy_jdom_kind(&d, oks) == 'a' ? d.n[oks].kids : 0;
            if (nerr) {
                int retry = 0;
                const char *first = NULL;
                for (uint32_t e = sy_jdom_first(&d, errs); e; e = sy_jdom_next(&d, e)) {
                    double st = 0;
                    if (sy_jdom_num(&d, sy_jdom_at(&d, e, "status"), &st) && (st >= 500 || st == 429))
                        retry = 1;
                    if (!first) {
                        uint32_t m = sy_jdom_member(&d, e, "message");
                        if (sy_jdom_kind(&d, m) == 's')
                            first = sy_jdom_str(&d, m, &a, NULL);
                    }
                }
                lf->rejected += nerr;
                if (nok == 0)
                    verdict = retry ? SY_SINK_RETRY : SY_SINK_DROP;
                if (lf_warn_due(lf)) {
                    char msg[160];
                    log_text(msg, sizeof msg, first ? first : "no message", strlen(first ? first : "no message"));
                    sy_warn("langfuse: %s refused %zu of %zu events (%s); %llu refused so far", lf->url, nerr,
                            nerr + nok, msg, (unsigned long long)lf->rejected);
                }
            }
        } else if (body && n && memmem(body, n, "\"errors\":[{", 11) && lf_warn_due(lf))
            /* the engine keeps the first few kB of an answer: a long 207 is cut */
            sy_warn("langfuse: %s refused some events (its answer, cut, lists them)", lf->url);
        sy_arena_free(&a);
        return verdict;
    }
    if (status >= 200 && status < 300)
        return SY_SINK_SENT;
    if (status == 0 || status == 408 || status == 429 || status >= 500)
        return SY_SINK_RETRY;
    return SY_SINK_DROP;
}

const struct sy_sink_ops sy_sink_langfuse = {
    .name = "langfuse",
    .max_batch = 8,
    .open = lf_open,
    .close = lf_close,
    .encode = lf_encode,
    .verdict = lf_verdict,
};
