/* files.c - the mock's Files and Batches APIs, kept in memory.
 *
 * | POST /v1/files          | multipart: purpose (required), file (required, with a filename) ->
 * |                         | {"object":"file","id":"file-<24 hex>","purpose":P,"filename":F,
 * |                         | "bytes":N,"created_at":T,"expires_at":null,"status":"processed",
 * |                         | "status_details":null}
 * | GET /v1/files           | {"object":"list","data":[FILE…],"first_id","last_id","has_more"}:
 * |                         | newest first (?order=asc oldest first), ?purpose=, ?limit=, ?after=
 * | GET /v1/files/{id}      | FILE; unknown: 404 "No such File object: ID" (param "id")
 * | DELETE /v1/files/{id}   | {"id":ID,"object":"file","deleted":true}
 * | GET …/{id}/content      | the stored bytes, Content-Type application/octet-stream
 * | POST /v1/batches        | JSON {input_file_id, endpoint (/v1/chat/completions, /v1/embeddings,
 * |                         | /v1/completions, /v1/responses, /v1/moderations, or without /v1),
 * |                         | completion_window "24h", metadata?} -> BATCH {"id":"batch_<24 hex>",
 * |                         | "object":"batch","endpoint","errors":null,"input_file_id",
 * |                         | "completion_window","status":"validating","output_file_id":null,
 * |                         | "error_file_id":null,"created_at":T,"in_progress_at":null,
 * |                         | "expires_at":T+86400,"finalizing_at":null,"completed_at":null,
 * |                         | "failed_at":null,"expired_at":null,"cancelling_at":null,
 * |                         | "cancelled_at":null,"request_counts":{"total":0,"completed":0,
 * |                         | "failed":0},"metadata":M|null}; a missing field or an unknown
 * |                         | input_file_id: 400 (param names the field)
 * | GET /v1/batches         | {"object":"list","data":[BATCH…],"first_id","last_id","has_more"},
 * |                         | newest first, ?limit= (default 20, max 100), ?after=
 * | GET /v1/batches/{id}    | BATCH (a cancelling batch is cancelled from then on); unknown: 404
 * | POST …/{id}/cancel      | BATCH with "status":"cancelling","cancelling_at":T (later reads:
 * |                         | "cancelled","cancelled_at")
 *
 * Bounds: FILES_MAX files and FILES_BYTES of content (the oldest go first),
 * BATCHES_MAX batches. One mutex for both tables; ids and strings are stored
 * JSON-escaped, ready to be emitted.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mock.h"

#define FILES_MAX   1000
#define FILES_BYTES (64u << 20)
#define BATCHES_MAX 1000

struct file {
    char *id, *filename, *purpose; /* NULL id = free */
    char *data;
    size_t n;
    long created;
};

struct batch {
    char *id, *endpoint, *input_file_id, *window, *metadata; /* metadata: raw JSON or NULL */
    long created, cancelling_at, cancelled_at;
    const char *status;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct file files[FILES_MAX];
static unsigned f_head, f_count;
static size_t f_bytes;
static struct batch batches[BATCHES_MAX];
static unsigned b_head, b_count;

static char *dup_escaped(struct sy_str s)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    sy_buf_json_escape(&b, s.p ? s.p : "", s.n);
    return b.p ? b.p : calloc(1, 1);
}

static char *dup_raw(struct sy_str s)
{
    char *p = malloc(s.n + 1);
    if (p) {
        memcpy(p, s.p, s.n);
        p[s.n] = 0;
    }
    return p;
}

static void file_free(struct file *f)
{
    f_bytes -= f->n;
    free(f->id);
    free(f->filename);
    free(f->purpose);
    free(f->data);
    memset(f, 0, sizeof *f);
}

static void batch_free(struct batch *b)
{
    free(b->id);
    free(b->endpoint);
    free(b->input_file_id);
    free(b->window);
    free(b->metadata);
    memset(b, 0, sizeof *b);
}

void mock_files_reset(void)
{
    pthread_mutex_lock(&mu);
    for (unsigned i = 0; i < FILES_MAX; i++)
        if (files[i].id)
            file_free(&files[i]);
    for (unsigned i = 0; i < BATCHES_MAX; i++)
        if (batches[i].id)
            batch_free(&batches[i]);
    f_head = f_count = b_head = b_count = 0;
    f_bytes = 0;
    pthread_mutex_unlock(&mu);
}

static int id_eq(const char *id, struct sy_str s)
{
    return id && strlen(id) == s.n && memcmp(id, s.p, s.n) == 0;
}

/* With mu held. */
static struct file *file_find(struct sy_str id)
{
    for (unsigned i = 0; i < f_count; i++) {
        struct file *f = &files[(f_head + i) % FILES_MAX];
        if (id_eq(f->id, id))
            return f;
    }
    return NULL;
}

static struct batch *batch_find(struct sy_str id)
{
    for (unsigned i = 0; i < b_count; i++) {
        struct batch *b = &batches[(b_head + i) % BATCHES_MAX];
        if (id_eq(b->id, id))
            return b;
    }
    return NULL;
}

static void file_json(struct sy_buf *s, const struct file *f)
{
    sy_buf_printf(s,
                  "{\"object\":\"file\",\"id\":\"%s\",\"purpose\":\"%s\",\"filename\":\"%s\","
                  "\"bytes\":%zu,\"created_at\":%ld,\"expires_at\":null,\"status\":\"processed\","
                  "\"status_details\":null}",
                  f->id, f->purpose, f->filename, f->n, f->created);
}

static void ts(struct sy_buf *s, const char *name, long t)
{
    if (t)
        sy_buf_printf(s, ",\"%s\":%ld", name, t);
    else
        sy_buf_printf(s, ",\"%s\":null", name);
}

static void batch_json(struct sy_buf *s, struct batch *b)
{
    sy_buf_printf(s,
                  "{\"id\":\"%s\",\"object\":\"batch\",\"endpoint\":\"%s\",\"errors\":null,"
                  "\"input_file_id\":\"%s\",\"completion_window\":\"%s\",\"status\":\"%s\","
                  "\"output_file_id\":null,\"error_file_id\":null,\"created_at\":%ld,"
                  "\"in_progress_at\":null,\"expires_at\":%ld,\"finalizing_at\":null,"
                  "\"completed_at\":null,\"failed_at\":null,\"expired_at\":null",
                  b->id, b->endpoint, b->input_file_id, b->window, b->status, b->created, b->created + 86400);
    ts(s, "cancelling_at", b->cancelling_at);
    ts(s, "cancelled_at", b->cancelled_at);
    SY_BUF_LIT(s, ",\"request_counts\":{\"total\":0,\"completed\":0,\"failed\":0},\"metadata\":");
    sy_buf_puts(s, b->metadata ? b->metadata : "null");
    SY_BUF_LIT(s, "}");
}

/* A read moves a cancelling batch on to cancelled. */
static void batch_advance(struct batch *b)
{
    if (!strcmp(b->status, "cancelling")) {
        b->status = "cancelled";
        b->cancelled_at = (long)time(NULL);
    }
}

static void not_found(struct mock_resp *r, const char *what, struct sy_str id)
{
    struct sy_buf m;
    sy_buf_init(&m, 1024);
    sy_buf_printf(&m, "No such %s: %.*s", what, (int)(id.n > 200 ? 200 : id.n), id.p);
    mock_error_param(r, 404, m.p, "id", NULL);
    sy_buf_free(&m);
}

static long limit_of(struct sy_str query, long dflt, long max)
{
    struct sy_str l = mock_query_param(query, "limit");
    long v = l.p && l.n && l.n < 7 ? mock_digits(l) : dflt;
    return v < 1 ? 1 : v > max ? max : v;
}

/* ---- files ---- */

static void upload(struct mock_resp *r)
{
    struct mock_part p[MOCK_MAX_PARTS];
    struct mock_http_req *h = &r->c->req;
    int np = mock_multipart(mock_header(r->c, "content-type"), h->body.p, h->body.len, p, MOCK_MAX_PARTS);
    const struct mock_part *purpose = np > 0 ? mock_part(p, np, "purpose") : NULL;
    const struct mock_part *file = np > 0 ? mock_part(p, np, "file") : NULL;
    if (np < 0) {
        mock_error_param(r, 400,
                         "Invalid Content-Type header (expected multipart/form-data with a "
                         "boundary) or malformed multipart body.",
                         NULL, NULL);
        return;
    }
    if (!purpose || !purpose->data.n) {
        mock_error_param(r, 400, "Missing required parameter: 'purpose'.", "purpose", "missing_required_parameter");
        return;
    }
    if (!file || !file->filename.p) {
        mock_error_param(r, 400, "Missing required parameter: 'file'.", "file", "missing_required_parameter");
        return;
    }
    if (file->data.n > FILES_BYTES / 2) {
        mock_error_param(r, 400, "File too large for the mock.", "file", NULL);
        return;
    }
    struct sy_buf id;
    sy_buf_init(&id, 64);
    mock_hex_id(r->c->th, &id, "file-", 24);
    struct file f = {.id = id.p,
                     .filename = dup_escaped(file->filename),
                     .purpose = dup_escaped(purpose->data),
                     .data = malloc(file->data.n + 1),
                     .n = file->data.n,
                     .created = (long)time(NULL)};
    if (!f.data || !f.filename || !f.purpose) {
        free(f.id);
        free(f.filename);
        free(f.purpose);
        free(f.data);
        mock_error(r, 500, NULL, NULL, NULL, NULL);
        return;
    }
    memcpy(f.data, file->data.p, file->data.n);
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    file_json(s, &f);
    pthread_mutex_lock(&mu);
    while (f_count && (f_count == FILES_MAX || f_bytes + f.n > FILES_BYTES)) {
        if (files[f_head].id)
            file_free(&files[f_head]);
        f_head = (f_head + 1) % FILES_MAX;
        f_count--;
    }
    files[(f_head + f_count) % FILES_MAX] = f;
    f_count++;
    f_bytes += f.n;
    pthread_mutex_unlock(&mu);
    mock_body_json(r, 200, s, NULL);
}

static void file_list(struct mock_resp *r, struct sy_str query)
{
    struct sy_buf *s = &r->c->th->scratch;
    struct sy_str purpose = mock_query_param(query, "purpose"), after = mock_query_param(query, "after");
    int asc = SY_STR_EQ(mock_query_param(query, "order"), "asc"), started = !after.p, more = 0;
    long limit = limit_of(query, 10000, 10000), cnt = 0;
    const char *first = NULL, *last = NULL;
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"object\":\"list\",\"data\":[");
    pthread_mutex_lock(&mu);
    for (unsigned j = 0; j < f_count; j++) {
        struct file *f = &files[(f_head + (asc ? j : f_count - 1 - j)) % FILES_MAX];
        if (!f->id ||
            (purpose.p && !(strlen(f->purpose) == purpose.n && memcmp(f->purpose, purpose.p, purpose.n) == 0)))
            continue;
        if (!started) {
            started = id_eq(f->id, after);
            continue;
        }
        if (cnt == limit) {
            more = 1;
            break;
        }
        if (cnt++)
            SY_BUF_LIT(s, ",");
        file_json(s, f);
        if (!first)
            first = f->id;
        last = f->id;
    }
    SY_BUF_LIT(s, "]");
    if (first)
        sy_buf_printf(s, ",\"first_id\":\"%s\",\"last_id\":\"%s\"", first, last);
    else
        SY_BUF_LIT(s, ",\"first_id\":null,\"last_id\":null");
    pthread_mutex_unlock(&mu);
    sy_buf_printf(s, ",\"has_more\":%s}", more ? "true" : "false");
    mock_body_json(r, 200, s, NULL);
}

static void file_one(struct mock_resp *r, const struct mock_call *k)
{
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    pthread_mutex_lock(&mu);
    struct file *f = file_find(k->id);
    if (f && k->api == MOCK_A_FILE_GET) {
        file_json(s, f);
    } else if (f && k->api == MOCK_A_FILE_DELETE) {
        sy_buf_printf(s, "{\"id\":\"%s\",\"object\":\"file\",\"deleted\":true}", f->id);
        file_free(f);
    } else if (f) { /* content: straight into the response */
        mock_head(r, 200, "application/octet-stream", (long)f->n, NULL);
        mock_mark(r);
        size_t start = r->b->len;
        sy_buf_append(r->b, f->data, f->n);
        mock_seg_end(r, start);
    }
    pthread_mutex_unlock(&mu);
    if (!f)
        not_found(r, "File object", k->id);
    else if (k->api != MOCK_A_FILE_CONTENT)
        mock_body_json(r, 200, s, NULL);
}

/* ---- batches ---- */

static int endpoint_ok(struct sy_str e)
{
    static const char *const ok[] = {"/v1/chat/completions", "/v1/embeddings", "/v1/completions", "/v1/responses",
                                     "/v1/moderations"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (sy_str_eq(e, ok[i], strlen(ok[i])) || sy_str_eq(e, ok[i] + 3, strlen(ok[i]) - 3))
            return 1;
    return 0;
}

static void batch_create(struct mock_resp *r)
{
    static const char *const keys[] = {"input_file_id", "endpoint", "completion_window", "metadata"};
    struct mock_jv v[4];
    struct mock_http_req *h = &r->c->req;
    mock_json_get(h->body.p ? h->body.p : "", h->body.len, keys, 4, v);
    for (int i = 0; i < 3; i++)
        if (v[i].type != 's') {
            struct sy_buf m;
            sy_buf_init(&m, 256);
            sy_buf_printf(&m, "Missing required parameter: '%s'.", keys[i]);
            mock_error_param(r, 400, m.p, keys[i], "missing_required_parameter");
            sy_buf_free(&m);
            return;
        }
    if (!endpoint_ok(v[1].v)) {
        mock_error_param(r, 400, "Invalid value for 'endpoint'.", "endpoint", "invalid_value");
        return;
    }
    if (!SY_STR_EQ(v[2].v, "24h")) {
        mock_error_param(r, 400, "Invalid value for 'completion_window': only '24h' is supported.", "completion_window",
                         "invalid_value");
        return;
    }
    struct sy_buf id;
    sy_buf_init(&id, 64);
    mock_hex_id(r->c->th, &id, "batch_", 24);
    struct batch b = {.id = id.p,
                      .endpoint = dup_raw(v[1].v),
                      .input_file_id = dup_raw(v[0].v),
                      .window = dup_raw(v[2].v),
                      .metadata = v[3].type == 'o' ? dup_raw(v[3].v) : NULL,
                      .created = (long)time(NULL),
                      .status = "validating"};
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    pthread_mutex_lock(&mu);
    int found = file_find(v[0].v) != NULL;
    if (found) {
        if (b_count == BATCHES_MAX) {
            batch_free(&batches[b_head]);
            b_head = (b_head + 1) % BATCHES_MAX;
            b_count--;
        }
        batches[(b_head + b_count) % BATCHES_MAX] = b;
        b_count++;
        batch_json(s, &b);
    }
    pthread_mutex_unlock(&mu);
    if (!found) {
        struct sy_buf m;
        sy_buf_init(&m, 1024);
        sy_buf_printf(&m, "Invalid 'input_file_id': '%.*s'. File not found.", (int)(v[0].v.n > 200 ? 200 : v[0].v.n),
                      v[0].v.p);
        mock_error_param(r, 400, m.p, "input_file_id", "invalid_value");
        sy_buf_free(&m);
        batch_free(&b);
        return;
    }
    mock_body_json(r, 200, s, NULL);
}

static void batch_list(struct mock_resp *r, struct sy_str query)
{
    struct sy_buf *s = &r->c->th->scratch;
    struct sy_str after = mock_query_param(query, "after");
    long limit = limit_of(query, 20, 100), cnt = 0;
    int started = !after.p, more = 0;
    const char *first = NULL, *last = NULL;
    sy_buf_reset(s);
    SY_BUF_LIT(s, "{\"object\":\"list\",\"data\":[");
    pthread_mutex_lock(&mu);
    for (unsigned j = b_count; j-- > 0;) {
        struct batch *b = &batches[(b_head + j) % BATCHES_MAX];
        if (!started) {
            started = id_eq(b->id, after);
            continue;
        }
        if (cnt == limit) {
            more = 1;
            break;
        }
        if (cnt++)
            SY_BUF_LIT(s, ",");
        batch_advance(b);
        batch_json(s, b);
        if (!first)
            first = b->id;
        last = b->id;
    }
    SY_BUF_LIT(s, "]");
    if (first)
        sy_buf_printf(s, ",\"first_id\":\"%s\",\"last_id\":\"%s\"", first, last);
    else
        SY_BUF_LIT(s, ",\"first_id\":null,\"last_id\":null");
    pthread_mutex_unlock(&mu);
    sy_buf_printf(s, ",\"has_more\":%s}", more ? "true" : "false");
    mock_body_json(r, 200, s, NULL);
}

static void batch_one(struct mock_resp *r, const struct mock_call *k)
{
    struct sy_buf *s = &r->c->th->scratch;
    sy_buf_reset(s);
    pthread_mutex_lock(&mu);
    struct batch *b = batch_find(k->id);
    if (b && k->api == MOCK_A_BATCH_CANCEL) {
        if (!strcmp(b->status, "validating") || !strcmp(b->status, "in_progress")) {
            b->status = "cancelling";
            b->cancelling_at = (long)time(NULL);
        }
    } else if (b) {
        batch_advance(b);
    }
    if (b)
        batch_json(s, b);
    pthread_mutex_unlock(&mu);
    if (!b)
        not_found(r, "batch", k->id);
    else
        mock_body_json(r, 200, s, NULL);
}

void mock_files(struct mock_resp *r, const struct mock_call *k, struct mock_req *q)
{
    const struct mock_fault *f = &q->fault;
    if (mock_api_begin(r, f))
        return;
    switch (k->api) {
    case MOCK_A_FILE_UPLOAD: upload(r); break;
    case MOCK_A_FILE_LIST: file_list(r, k->query); break;
    case MOCK_A_FILE_GET:
    case MOCK_A_FILE_DELETE:
    case MOCK_A_FILE_CONTENT: file_one(r, k); break;
    case MOCK_A_BATCH_CREATE: batch_create(r); break;
    case MOCK_A_BATCH_LIST: batch_list(r, k->query); break;
    default: batch_one(r, k); break;
    }
    mock_commit(r, f, 0);
}
