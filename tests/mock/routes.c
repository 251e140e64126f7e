/* routes.c - what the mock answers: path dispatch, API-key check, Azure rules,
 * fault selection, and the request log behind GET /__mock/requests.
 *
 *   POST /v1/chat/completions, /chat/completions          chat (JSON or SSE)
 *   POST /v1/completions, /completions                    legacy text completion
 *   POST /v1/embeddings, /embeddings                      embeddings
 *   GET  /v1/models, /models, /v1/models/{id}             model list / one model
 *   POST /openai/deployments/{dep}/{chat/completions|completions|embeddings}?api-version=…
 *   POST /v1/messages, /v1/messages/count_tokens          Anthropic (anthropic.c)
 *   POST /v1beta/models/{m}:{method}, /v1/models/{m}:…    Gemini (gemini.c)
 *   POST /v1[beta1]/projects/{p}/locations/{l}/publishers/{google|anthropic}/models/{m}:{method}
 *                                                         Vertex AI (gemini.c, anthropic.c); {method}
 *                                                         countTokens, and anthropic/models/count-tokens:rawPredict
 *   POST /token                                           Google OAuth2 token (gemini.c)
 *   POST /model/{id}/{converse|converse-stream|invoke|invoke-with-response-stream|count-tokens}  Bedrock (bedrock.c)
 *   POST /v2/chat, /v2/embed                              Cohere (cohere.c)
 *   POST /api/chat, /api/embed                            Ollama (ollama.c)
 *   POST /v1/responses, GET|DELETE /v1/responses/{id}, GET /v1/responses/{id}/input_items
 *                                                         Responses API (responses.c)
 *   POST /v1/images/{generations|edits}, /v1/audio/{speech|transcriptions|translations},
 *        /v1/moderations, /v1/rerank, /v2/rerank, /rerank  (media.c)
 *   POST|GET /v1/files, GET|DELETE /v1/files/{id}, GET /v1/files/{id}/content,
 *   POST|GET /v1/batches, GET /v1/batches/{id}, POST /v1/batches/{id}/cancel  (files.c)
 *        these also without /v1, and on Azure under /openai/…, /openai/v1/… and
 *        /openai/deployments/{dep}/… (classify_api)
 *   GET  /__mock/requests    last 100 requests, oldest first (JSON array)
 *   GET  /__mock/stats       {"token_fetches":N,"tokens_issued":M,"streams_started":..,"requests":R}
 *   POST /__mock/reset       clear that log and those counts
 *
 * Model names in paths (Gemini, Vertex, Bedrock) are percent-decoded in place
 * (after the request was logged and authenticated as sent) and may carry
 * "@directives" like a body's model.
 *
 * The log is shared between worker threads (one mutex); each entry is rendered
 * to JSON when recorded so that reading it is a join. The only other shared
 * state is gemini.c's table of issued OAuth2 tokens, and the responses, files
 * and batches that responses.c and files.c remember (each its own mutex).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mock.h"

#define RING 100

static pthread_mutex_t ring_mu = PTHREAD_MUTEX_INITIALIZER;
static char *ring[RING];
static size_t ring_len[RING];
static unsigned ring_head, ring_count;

int mock_record_init(void)
{
    return 0;
}

static void record(struct mock_conn *c)
{
    struct mock_http_req *h = &c->req;
    struct sy_buf s;
    sy_buf_init(&s, MOCK_MAX_BODY * 7);
    SY_BUF_LIT(&s, "{\"method\":\"");
    sy_buf_puts(&s, http_method_str(c->parser.method));
    SY_BUF_LIT(&s, "\",\"path\":\"");
    sy_buf_json_escape(&s, h->url.p ? h->url.p : "", h->url.len);
    SY_BUF_LIT(&s, "\",\"headers\":{");
    for (int i = 0; i < h->nh; i++) {
        const char *n = h->hdrs.p + h->name_off[i], *v = h->hdrs.p + h->val_off[i];
        SY_BUF_LIT(&s, "\"");
        sy_buf_json_escape(&s, n, strlen(n));
        SY_BUF_LIT(&s, "\":\"");
        sy_buf_json_escape(&s, v, strlen(v));
        sy_buf_puts(&s, i + 1 < h->nh ? "\"," : "\"");
    }
    SY_BUF_LIT(&s, "},\"body\":\"");
    sy_buf_json_escape(&s, h->body.p ? h->body.p : "", h->body.len);
    SY_BUF_LIT(&s, "\"");
    mock_multipart_log(&s, mock_header(c, "content-type"), h->body.p, h->body.len);
    SY_BUF_LIT(&s, "}");
    pthread_mutex_lock(&ring_mu);
    unsigned slot = (ring_head + ring_count) % RING;
    if (ring_count == RING) {
        free(ring[ring_head]);
        ring_head = (ring_head + 1) % RING;
    } else {
        ring_count++;
    }
    ring[slot] = s.p;
    ring_len[slot] = s.len;
    pthread_mutex_unlock(&ring_mu);
}

static void dump(struct mock_resp *r)
{
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    SY_BUF_LIT(s, "[");
    pthread_mutex_lock(&ring_mu);
    for (unsigned i = 0; i < ring_count; i++) {
        unsigned k = (ring_head + i) % RING;
        if (i)
            SY_BUF_LIT(s, ",");
        sy_buf_append(s, ring[k] ? ring[k] : "null", ring[k] ? ring_len[k] : 4);
    }
    pthread_mutex_unlock(&ring_mu);
    SY_BUF_LIT(s, "]");
    mock_body_json(r, 200, s, NULL);
}

/* Requests answered (all but /__mock/ ones), since start or the last reset: counted
 * also with --no-record (bench/full.sh checks spend rows against it). */
static long n_requests;

static void reset_log(struct mock_resp *r)
{
    __atomic_store_n(&n_requests, 0, __ATOMIC_RELAXED);
    pthread_mutex_lock(&ring_mu);
    for (unsigned i = 0; i < RING; i++) {
        free(ring[i]);
        ring[i] = NULL;
    }
    ring_head = ring_count = 0;
    pthread_mutex_unlock(&ring_mu);
    mock_token_reset();
    mock_stream_stats_reset();
    mock_responses_reset();
    mock_files_reset();
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"ok\":true}");
    mock_body_json(r, 200, s, NULL);
}

enum route { R_NONE, R_CHAT, R_TEXT, R_EMB, R_MODELS, R_MODEL };

static enum route classify(struct sy_str p, struct sy_str *arg)
{
    if (SY_STR_EQ(p, "/v1/chat/completions") || SY_STR_EQ(p, "/chat/completions"))
        return R_CHAT;
    if (SY_STR_EQ(p, "/v1/completions") || SY_STR_EQ(p, "/completions"))
        return R_TEXT;
    if (SY_STR_EQ(p, "/v1/embeddings") || SY_STR_EQ(p, "/embeddings"))
        return R_EMB;
    if (SY_STR_EQ(p, "/v1/models") || SY_STR_EQ(p, "/models"))
        return R_MODELS;
    if (sy_str_startswith(p, "/v1/models/", 11) && p.n > 11) {
        *arg = (struct sy_str){p.p + 11, p.n - 11};
        return R_MODEL;
    }
    return R_NONE;
}

/* "/openai/deployments/{dep}/{rest}" -> dep and the route of "/{rest}". */
static enum route classify_azure(struct sy_str p, struct sy_str *dep)
{
    static const char pre[] = "/openai/deployments/";
    if (!sy_str_startswith(p, pre, sizeof pre - 1))
        return R_NONE;
    const char *d = p.p + sizeof pre - 1, *end = p.p + p.n;
    const char *slash = memchr(d, '/', (size_t)(end - d));
    if (!slash || slash == d)
        return R_NONE;
    *dep = (struct sy_str){d, (size_t)(slash - d)};
    struct sy_str rest = {slash, (size_t)(end - slash)}, unused;
    enum route rt = classify(rest, &unused);
    return rt == R_CHAT || rt == R_TEXT || rt == R_EMB ? rt : R_NONE;
}

struct sy_str mock_query_param(struct sy_str q, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < q.n;) {
        const char *amp = memchr(q.p + i, '&', q.n - i);
        size_t e = amp ? (size_t)(amp - q.p) : q.n;
        if (e - i > n && memcmp(q.p + i, name, n) == 0 && q.p[i + n] == '=')
            return (struct sy_str){q.p + i + n + 1, e - i - n - 1};
        i = e + 1;
    }
    return SY_STR_NULL;
}

long mock_digits(struct sy_str s)
{
    size_t i = 0;
    int neg = s.n > 0 && s.p[0] == '-';
    long v = 0;
    for (i = (size_t)neg; i < s.n && s.p[i] >= '0' && s.p[i] <= '9' && v < 100000000; i++)
        v = v * 10 + (s.p[i] - '0');
    return neg ? -v : v;
}

static int has_query_param(struct sy_str q, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < q.n;) {
        if (q.n - i > n && memcmp(q.p + i, name, n) == 0 && q.p[i + n] == '=' && i + n + 1 < q.n &&
            q.p[i + n + 1] != '&')
            return 1;
        const char *amp = memchr(q.p + i, '&', q.n - i);
        if (!amp)
            break;
        i = (size_t)(amp - q.p) + 1;
    }
    return 0;
}

static int authorized(struct mock_conn *c, int azure)
{
    const char *k = mock_opts.require_key;
    if (!k)
        return 1;
    const char *a = mock_header(c, "authorization");
    if (a && strncmp(a, "Bearer ", 7) == 0 && strcmp(a + 7, k) == 0)
        return 1;
    const char *ak = azure ? mock_header(c, "api-key") : NULL;
    return ak && strcmp(ak, k) == 0;
}

/* OpenAI's 401, with the offered key masked the way OpenAI masks it. */
static void unauthorized(struct mock_resp *r)
{
    const char *a = mock_header(r->c, "authorization");
    if (!a || strncmp(a, "Bearer ", 7) != 0) {
        mock_error(r, 401,
                   "You didn't provide an API key. You need to provide your API key in an "
                   "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
                   "invalid_request_error", "invalid_api_key", NULL);
        return;
    }
    const char *k = a + 7;
    size_t n = strlen(k);
    struct sy_buf m;
    sy_buf_init(&m, 1024);
    SY_BUF_LIT(&m, "Incorrect API key provided: ");
    if (n > 8)
        sy_buf_printf(&m, "%.3s%s%s", k, "****************", k + n - 4);
    else
        SY_BUF_LIT(&m, "********");
    SY_BUF_LIT(&m, ". You can find your API key at https://platform.openai.com/account/api-keys.");
    mock_error(r, 401, m.p, "invalid_request_error", "invalid_api_key", NULL);
    sy_buf_free(&m);
}

static int needs_async(const struct mock_fault *f)
{
    return f->delay_ms > 0 || f->chunk_delay_ms > 0 || f->reset_after_chunks >= 0 || f->trickle_bytes_per_s > 0 ||
           f->close_without_response || f->split_utf8 > 0;
}

void mock_begin(struct mock_resp *r, const struct mock_fault *f)
{
    struct mock_conn *c = r->c;
    if (needs_async(f)) {
        sy_buf_reset(&c->rbuf);
        c->nsegs = c->nsplits = 0;
        r->b = &c->rbuf;
        r->track = 1;
    }
    r->split = f->split_utf8 > 0;
}

/* ---- native provider routes ---- */

enum native {
    N_NONE,
    N_ANTHROPIC,
    N_GEMINI,
    N_VERTEX_GOOGLE,
    N_VERTEX_ANTHROPIC,
    N_TOKEN,
    N_BEDROCK,
    N_COHERE_CHAT,
    N_COHERE_EMBED,
    N_OLLAMA_CHAT,
    N_OLLAMA_EMBED
};

struct call {
    enum native n;
    int op;              /* enum mock_gop / mock_bop; Vertex Claude: 1 = stream */
    struct sy_str model; /* from the path, still percent-encoded */
};

static const char *find(struct sy_str s, const char *lit)
{
    size_t n = strlen(lit);
    for (size_t i = 0; i + n <= s.n; i++)
        if (s.p[i] == lit[0] && memcmp(s.p + i, lit, n) == 0)
            return s.p + i;
    return NULL;
}

/* "{model}:{method}" (the last ':') -> model and method. */
static int model_method(const char *p, const char *end, struct sy_str *model, struct sy_str *method)
{
    const char *colon = NULL;
    for (const char *x = p; x < end; x++)
        if (*x == ':')
            colon = x;
        else if (*x == '/')
            return 0;
    if (!colon || colon == p)
        return 0;
    *model = (struct sy_str){p, (size_t)(colon - p)};
    *method = (struct sy_str){colon + 1, (size_t)(end - colon - 1)};
    return 1;
}

static int gemini_op(struct sy_str m)
{
    if (SY_STR_EQ(m, "generateContent"))
        return MOCK_G_GENERATE;
    if (SY_STR_EQ(m, "streamGenerateContent"))
        return MOCK_G_STREAM;
    if (SY_STR_EQ(m, "batchEmbedContents"))
        return MOCK_G_BATCH_EMBED;
    if (SY_STR_EQ(m, "embedContent"))
        return MOCK_G_EMBED;
    if (SY_STR_EQ(m, "predict"))
        return MOCK_G_PREDICT;
    if (SY_STR_EQ(m, "countTokens"))
        return MOCK_G_COUNT;
    return -1;
}

static enum native classify_native(struct sy_str p, struct call *k)
{
    const char *end = p.p + p.n;
    struct sy_str method;
    k->model = SY_STR_NULL;
    k->op = 0;
    if (SY_STR_EQ(p, "/v1/messages"))
        return k->n = N_ANTHROPIC;
    if (SY_STR_EQ(p, "/v1/messages/count_tokens")) {
        k->op = 2; /* token counting */
        return k->n = N_ANTHROPIC;
    }
    if (SY_STR_EQ(p, "/token"))
        return k->n = N_TOKEN;
    if (SY_STR_EQ(p, "/v2/chat"))
        return k->n = N_COHERE_CHAT;
    if (SY_STR_EQ(p, "/v2/embed"))
        return k->n = N_COHERE_EMBED;
    if (SY_STR_EQ(p, "/api/chat"))
        return k->n = N_OLLAMA_CHAT;
    if (SY_STR_EQ(p, "/api/embed"))
        return k->n = N_OLLAMA_EMBED;
    if (sy_str_startswith(p, "/model/", 7)) { /* Bedrock */
        const char *id = p.p + 7, *slash = memchr(id, '/', (size_t)(end - id));
        if (!slash || slash == id)
            return N_NONE;
        struct sy_str op = {slash + 1, (size_t)(end - slash - 1)};
        k->model = (struct sy_str){id, (size_t)(slash - id)};
        k->op = SY_STR_EQ(op, "converse")                      ? MOCK_B_CONVERSE
                : SY_STR_EQ(op, "converse-stream")             ? MOCK_B_STREAM
                : SY_STR_EQ(op, "invoke")                      ? MOCK_B_INVOKE
                : SY_STR_EQ(op, "invoke-with-response-stream") ? MOCK_B_INVOKE_STREAM
                : SY_STR_EQ(op, "count-tokens")                ? MOCK_B_COUNT
                                                               : -1;
        return k->n = k->op >= 0 ? N_BEDROCK : N_NONE;
    }
    const char *m = NULL;
    if (sy_str_startswith(p, "/v1beta/models/", 15))
        m = p.p + 15;
    else if (sy_str_startswith(p, "/v1/models/", 11))
        m = p.p + 11;
    if (m) { /* Gemini API */
        if (!model_method(m, end, &k->model, &method) || (k->op = gemini_op(method)) < 0 || k->op == MOCK_G_PREDICT)
            return N_NONE;
        return k->n = N_GEMINI;
    }
    if (sy_str_startswith(p, "/v1/projects/", 13) || sy_str_startswith(p, "/v1beta1/projects/", 18)) {
        const char *pub = find(p, "/locations/") ? find(p, "/publishers/") : NULL;
        if (!pub)
            return N_NONE;
        pub += 12;
        struct sy_str rest = {pub, (size_t)(end - pub)};
        if (sy_str_startswith(rest, "google/models/", 14)) {
            if (!model_method(pub + 14, end, &k->model, &method) || (k->op = gemini_op(method)) < 0 ||
                k->op == MOCK_G_BATCH_EMBED || k->op == MOCK_G_EMBED)
                return N_NONE;
            return k->n = N_VERTEX_GOOGLE;
        }
        if (sy_str_startswith(rest, "anthropic/models/", 17)) {
            if (!model_method(pub + 17, end, &k->model, &method))
                return N_NONE;
            if (SY_STR_EQ(method, "rawPredict") && SY_STR_EQ(k->model, "count-tokens"))
                k->op = 2; /* token counting */
            else if (SY_STR_EQ(method, "rawPredict"))
                k->op = 0;
            else if (SY_STR_EQ(method, "streamRawPredict"))
                k->op = 1;
            else
                return N_NONE;
            return k->n = N_VERTEX_ANTHROPIC;
        }
    }
    return N_NONE;
}

static void dialect_error(struct mock_resp *r, enum native n, int status, const char *msg, const struct mock_fault *f)
{
    switch (n) {
    case N_ANTHROPIC: mock_anthropic_error(r, status, NULL, msg, f); break;
    case N_VERTEX_ANTHROPIC: /* Vertex's own quota errors are Google-shaped */
        if (status == 429)
            mock_google_error(r, status,
                              "Quota exceeded for aiplatform.googleapis.com/"
                              "online_prediction_requests_per_base_model with base model: "
                              "anthropic-claude. Please submit a quota increase request.",
                              f);
        else
            mock_anthropic_error(r, status, NULL, msg, f);
        break;
    case N_GEMINI:
    case N_VERTEX_GOOGLE:
    case N_TOKEN: mock_google_error(r, status, msg, f); break;
    case N_BEDROCK:
        mock_bedrock_error(r, status, status == 400 && msg ? "SerializationException" : NULL, msg, f);
        break;
    case N_COHERE_CHAT:
    case N_COHERE_EMBED: mock_cohere_error(r, status, msg, f); break;
    default: mock_ollama_error(r, status, msg, f); break;
    }
}

static void route_native(struct mock_conn *c, struct mock_resp *r, struct call *k, struct sy_str path,
                         struct sy_str query)
{
    struct mock_http_req *h = &c->req;
    static const enum mock_dialect dialect[] = {
        [N_ANTHROPIC] = MOCK_ANTHROPIC,        [N_GEMINI] = MOCK_GOOGLE,       [N_VERTEX_GOOGLE] = MOCK_GOOGLE,
        [N_VERTEX_ANTHROPIC] = MOCK_ANTHROPIC, [N_TOKEN] = MOCK_GOOGLE,        [N_BEDROCK] = MOCK_BEDROCK,
        [N_COHERE_CHAT] = MOCK_COHERE,         [N_COHERE_EMBED] = MOCK_COHERE, [N_OLLAMA_CHAT] = MOCK_OLLAMA,
        [N_OLLAMA_EMBED] = MOCK_OLLAMA,
    };
    r->d = dialect[k->n];
    int ok = 1;
    switch (k->n) {
    case N_ANTHROPIC: ok = mock_anthropic_auth(r); break;
    case N_GEMINI: ok = mock_gemini_auth(r, query); break;
    case N_VERTEX_GOOGLE:
    case N_VERTEX_ANTHROPIC: ok = mock_vertex_auth(r); break;
    case N_BEDROCK: ok = mock_bedrock_auth(r, http_method_str(c->parser.method), path, query); break;
    case N_COHERE_CHAT:
    case N_COHERE_EMBED: ok = mock_cohere_auth(r); break;
    default: break;
    }
    if (!ok) {
        mock_commit(r, NULL, 0);
        return;
    }
    if (k->n == N_TOKEN) {
        mock_token(r, query);
        return;
    }
    if (k->model.p) /* the URL buffer is ours; the log already has the raw path */
        k->model.n = mock_pct_decode((char *)k->model.p, k->model.n);

    struct mock_req q;
    if (mock_scan(h->body.p ? h->body.p : "", h->body.len, k->model, &q) < 0) {
        dialect_error(r, k->n, 400,
                      r->d == MOCK_GOOGLE ? "Invalid JSON payload received. Unexpected token."
                                          : "The request body is not a valid JSON object.",
                      NULL);
        mock_commit(r, NULL, 0);
        free(q.items);
        return;
    }
    const struct mock_fault *f = &q.fault;
    mock_begin(r, f);
    int stream = 0;
    if (f->status > 0 && f->status != 200) {
        dialect_error(r, k->n, (int)f->status, NULL, f);
    } else {
        switch (k->n) {
        case N_ANTHROPIC:
            if (k->op == 2)
                mock_anthropic_count(r, &q, h->body.p ? h->body.p : "", h->body.len, 0);
            else
                stream = mock_anthropic(r, &q, 0, q.stream);
            break;
        case N_VERTEX_ANTHROPIC:
            if (k->op == 2)
                mock_anthropic_count(r, &q, h->body.p ? h->body.p : "", h->body.len, 1);
            else
                stream = mock_anthropic(r, &q, 1, k->op == 1);
            break;
        case N_GEMINI:
        case N_VERTEX_GOOGLE: stream = mock_gemini(r, &q, (enum mock_gop)k->op, query); break;
        case N_BEDROCK: stream = mock_bedrock(r, &q, (enum mock_bop)k->op); break;
        case N_COHERE_CHAT:
        case N_COHERE_EMBED: stream = mock_cohere(r, &q, k->n == N_COHERE_EMBED); break;
        case N_OLLAMA_CHAT:
        case N_OLLAMA_EMBED: stream = mock_ollama(r, &q, k->n == N_OLLAMA_EMBED); break;
        default: break;
        }
    }
    mock_commit(r, f, stream);
    free(q.items);
}

static void azure_error(struct mock_resp *r, int status, const char *code, const char *msg)
{
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    sy_buf_printf(s, "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}", code, msg);
    mock_body_json(r, status, s, NULL);
}

/* The API key (Azure: also api-key) and Azure's api-version (azure 1). On
 * failure the error is rendered and 0 returned. */
static int check_key(struct mock_conn *c, struct mock_resp *r, int azure, struct sy_str query)
{
    if (!authorized(c, azure)) {
        if (azure)
            azure_error(r, 401, "401",
                        "Access denied due to invalid subscription key or wrong API endpoint. "
                        "Make sure to provide a valid key for an active subscription and use a "
                        "correct regional API endpoint for your resource.");
        else
            unauthorized(r);
        return 0;
    }
    if (azure == 1 && !has_query_param(query, "api-version")) {
        azure_error(r, 400, "MissingApiVersionParameter",
                    "The api-version query parameter (?api-version=) is required for all "
                    "requests.");
        return 0;
    }
    return 1;
}

/* ---- the other OpenAI APIs (responses.c, media.c, files.c) ---- */

/* "/x/{id}[/tail]" under base "/x/": the id, and whether what follows it is
 * exactly tail ("" = nothing). */
static int id_path(struct sy_str p, const char *base, const char *tail, struct sy_str *id)
{
    size_t bn = strlen(base), tn = strlen(tail);
    if (!sy_str_startswith(p, base, bn) || p.n <= bn + tn)
        return 0;
    const char *s = p.p + bn, *end = p.p + p.n - tn;
    if (memcmp(end, tail, tn) != 0 || memchr(s, '/', (size_t)(end - s)))
        return 0;
    *id = (struct sy_str){s, (size_t)(end - s)};
    return 1;
}

static enum mock_api classify_api(struct sy_str p, int method, struct mock_call *k)
{
    struct sy_str x = p;
    int get = method == HTTP_GET, post = method == HTTP_POST, del = method == HTTP_DELETE;
    memset(k, 0, sizeof *k);
    if (sy_str_startswith(p, "/openai/deployments/", 20)) {
        const char *d = p.p + 20, *end = p.p + p.n;
        const char *slash = memchr(d, '/', (size_t)(end - d));
        if (!slash || slash == d)
            return MOCK_A_NONE;
        k->dep = (struct sy_str){d, (size_t)(slash - d)};
        x = (struct sy_str){slash, (size_t)(end - slash)};
        k->azure = 1;
    } else if (sy_str_startswith(p, "/openai/v1/", 11)) {
        x = (struct sy_str){p.p + 10, p.n - 10};
        k->azure = 2;
    } else if (sy_str_startswith(p, "/openai/", 8)) {
        x = (struct sy_str){p.p + 7, p.n - 7};
        k->azure = 1;
    } else if (sy_str_startswith(p, "/v1/", 4)) {
        x = (struct sy_str){p.p + 3, p.n - 3};
    } else if (SY_STR_EQ(p, "/v2/rerank")) {
        x = (struct sy_str){p.p + 3, p.n - 3};
    }
    static const struct {
        const char *path;
        enum mock_api api;
    } posts[] = {
        {"/responses", MOCK_A_RESP_CREATE},
        {"/images/generations", MOCK_A_IMG_GEN},
        {"/images/edits", MOCK_A_IMG_EDIT},
        {"/audio/speech", MOCK_A_SPEECH},
        {"/audio/transcriptions", MOCK_A_TRANSCRIBE},
        {"/audio/translations", MOCK_A_TRANSLATE},
        {"/moderations", MOCK_A_MODERATE},
        {"/rerank", MOCK_A_RERANK},
        {"/files", MOCK_A_FILE_UPLOAD},
        {"/batches", MOCK_A_BATCH_CREATE},
    };
    for (size_t i = 0; post && i < sizeof posts / sizeof posts[0]; i++)
        if (sy_str_eq(x, posts[i].path, strlen(posts[i].path)))
            return k->api = posts[i].api;
    if (get && SY_STR_EQ(x, "/files"))
        return k->api = MOCK_A_FILE_LIST;
    if (get && SY_STR_EQ(x, "/batches"))
        return k->api = MOCK_A_BATCH_LIST;
    if (get && id_path(x, "/responses/", "/input_items", &k->id))
        return k->api = MOCK_A_RESP_ITEMS;
    if ((get || del) && id_path(x, "/responses/", "", &k->id))
        return k->api = get ? MOCK_A_RESP_GET : MOCK_A_RESP_DELETE;
    if (get && id_path(x, "/files/", "/content", &k->id))
        return k->api = MOCK_A_FILE_CONTENT;
    if ((get || del) && id_path(x, "/files/", "", &k->id))
        return k->api = get ? MOCK_A_FILE_GET : MOCK_A_FILE_DELETE;
    if (post && id_path(x, "/batches/", "/cancel", &k->id))
        return k->api = MOCK_A_BATCH_CANCEL;
    if (get && id_path(x, "/batches/", "", &k->id))
        return k->api = MOCK_A_BATCH_GET;
    return MOCK_A_NONE;
}

int mock_api_begin(struct mock_resp *r, const struct mock_fault *f)
{
    mock_begin(r, f);
    if (f->status <= 0 || f->status == 200)
        return 0;
    if (r->d == MOCK_COHERE)
        mock_cohere_error(r, (int)f->status, NULL, f);
    else
        mock_error(r, (int)f->status, NULL, NULL, NULL, f);
    mock_commit(r, f, 0);
    return 1;
}

/* JSON bodies are scanned here (directives, model, input items); multipart
 * ones and bodiless requests get an empty scan, directives from an Azure
 * deployment name either way. The handlers render and commit. */
static void route_api(struct mock_conn *c, struct mock_resp *r, struct mock_call *k)
{
    struct mock_http_req *h = &c->req;
    enum mock_api a = k->api;
    int json = a == MOCK_A_RESP_CREATE || a == MOCK_A_IMG_GEN || a == MOCK_A_SPEECH || a == MOCK_A_MODERATE ||
               a == MOCK_A_RERANK || a == MOCK_A_BATCH_CREATE;
    struct mock_req q;
    if (a == MOCK_A_RERANK)
        r->d = MOCK_COHERE;
    if (json && mock_scan(h->body.p ? h->body.p : "", h->body.len, SY_STR_NULL, &q) < 0) {
        if (r->d == MOCK_COHERE)
            mock_cohere_error(r, 400, "invalid request: the body is not valid JSON", NULL);
        else
            mock_error(r, 400,
                       "We could not parse the JSON body of your request. (HINT: This likely "
                       "means you aren't using your HTTP library correctly. The OpenAI API "
                       "expects a JSON payload, but what was sent was not valid JSON.)",
                       "invalid_request_error", NULL, NULL);
        mock_commit(r, NULL, 0);
        free(q.items);
        return;
    }
    if (!json) {
        memset(&q, 0, sizeof q);
        q.max_tokens = q.dimensions = -1;
        mock_fault_init(&q.fault);
    }
    if (k->dep.p)
        q.model = mock_model_split(k->dep, &q.fault);
    if (a <= MOCK_A_RESP_ITEMS)
        mock_responses(r, k, &q);
    else if (a <= MOCK_A_RERANK)
        mock_media(r, k, &q);
    else
        mock_files(r, k, &q);
    free(q.items);
}

void mock_route(struct mock_conn *c)
{
    struct mock_http_req *h = &c->req;
    struct mock_resp r = {.c = c, .b = &c->out, .track = 0};
    struct sy_str url = {h->url.p ? h->url.p : "", h->url.len}, path = url, query = {"", 0};
    const char *qm = memchr(url.p, '?', url.n);
    if (qm) {
        path.n = (size_t)(qm - url.p);
        query = (struct sy_str){qm + 1, url.n - path.n - 1};
    }
    int is_get = c->parser.method == HTTP_GET, is_post = c->parser.method == HTTP_POST;

    if (sy_str_startswith(path, "/__mock/", 8)) {
        if (is_get && SY_STR_EQ(path, "/__mock/requests")) {
            dump(&r);
        } else if (is_get && SY_STR_EQ(path, "/__mock/stats")) {
            sy_buf_reset(&c->th->scratch);
            mock_token_stats(&c->th->scratch);
            c->th->scratch.len--; /* reopen the object */
            SY_BUF_LIT(&c->th->scratch, ",");
            mock_stream_stats(&c->th->scratch);
            sy_buf_printf(&c->th->scratch, ",\"requests\":%ld}", __atomic_load_n(&n_requests, __ATOMIC_RELAXED));
            mock_body_json(&r, 200, &c->th->scratch, NULL);
        } else if (is_post && SY_STR_EQ(path, "/__mock/reset"))
            reset_log(&r);
        else
            mock_error(&r, 404, "Unknown mock control endpoint.", NULL, "unknown_url", NULL);
        mock_commit(&r, NULL, 0);
        return;
    }
    __atomic_fetch_add(&n_requests, 1, __ATOMIC_RELAXED);
    if (mock_opts.record)
        record(c);
    if (h->too_big) {
        mock_error(&r, 413, NULL, NULL, NULL, NULL);
        mock_commit(&r, NULL, 0);
        return;
    }

    struct mock_call api;
    if (classify_api(path, c->parser.method, &api) != MOCK_A_NONE) {
        api.query = query;
        if (api.api == MOCK_A_RERANK ? (r.d = MOCK_COHERE, mock_cohere_auth(&r)) : check_key(c, &r, api.azure, query))
            route_api(c, &r, &api);
        else
            mock_commit(&r, NULL, 0);
        return;
    }

    struct call k;
    if (is_post && classify_native(path, &k) != N_NONE) {
        route_native(c, &r, &k, path, query);
        return;
    }

    struct sy_str arg = {0}, dep = {0};
    enum route rt = classify(path, &arg);
    int azure = 0;
    if (rt == R_NONE && (rt = classify_azure(path, &dep)) != R_NONE)
        azure = 1;
    if (rt == R_NONE || ((rt == R_MODELS || rt == R_MODEL) ? !is_get : !is_post)) {
        struct sy_buf msg;
        sy_buf_init(&msg, 8192);
        sy_buf_printf(&msg, "Invalid URL (%s %.*s)", http_method_str(c->parser.method),
                      (int)(path.n > 4096 ? 4096 : path.n), path.p);
        mock_error(&r, 404, msg.p, "invalid_request_error", "", NULL);
        sy_buf_free(&msg);
        mock_commit(&r, NULL, 0);
        return;
    }
    if (!check_key(c, &r, azure, query)) {
        mock_commit(&r, NULL, 0);
        return;
    }
    if (rt == R_MODELS || rt == R_MODEL) {
        mock_models(&r, rt == R_MODEL ? arg : SY_STR_NULL);
        mock_commit(&r, NULL, 0);
        return;
    }

    struct mock_req q;
    if (mock_scan(h->body.p ? h->body.p : "", h->body.len, SY_STR_NULL, &q) < 0) {
        mock_error(&r, 400,
                   "We could not parse the JSON body of your request. (HINT: This likely means "
                   "you aren't using your HTTP library correctly. The OpenAI API expects a JSON "
                   "payload, but what was sent was not valid JSON.)",
                   "invalid_request_error", NULL, NULL);
        mock_commit(&r, NULL, 0);
        free(q.items);
        return;
    }
    if (azure) /* directives may also ride on the deployment name */
        q.model = mock_model_split(dep, &q.fault);

    const struct mock_fault *f = &q.fault;
    mock_begin(&r, f);
    int ok = 0;
    if (f->status > 0 && f->status != 200) {
        mock_error(&r, (int)f->status, NULL, NULL, NULL, f);
    } else if (!q.model.n && rt != R_EMB) {
        mock_error(&r, 400, "you must provide a model parameter", "invalid_request_error", NULL, NULL);
    } else if (rt == R_EMB && q.n_items == 0) {
        mock_error(&r, 400, "'input' is a required property", "invalid_request_error", NULL, NULL);
    } else if (rt == R_EMB) {
        mock_embeddings(&r, &q);
        ok = 1;
    } else {
        mock_completion(&r, &q, rt == R_CHAT ? MOCK_CHAT : MOCK_TEXT);
        ok = 1;
    }
    mock_commit(&r, f, ok && q.stream && rt != R_EMB);
    free(q.items);
}
