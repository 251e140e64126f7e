/* writer.c - the spend writer thread: every finished request's SpendLogs row,
 * entity spend and daily aggregates, written in batches off the request path.
 *
 *   any thread                         writer thread (own sy_store connection)
 *   sy_spend_record(rec) ─┐
 *     one malloc per rec  ├─▶ queue ──(every batch_interval_s, sy_spend_flush, stop)──▶ batch
 *     one mutex, no DB    ┘   (bounded: queued + batch <= max_queue, else dropped)      │
 *                                                                                       ▼
 *       BEGIN; SpendLogs INSERTs; Daily*Spend upserts; entity UPDATEs; COMMIT  (<= CHUNK rows each)
 *         ok   ─▶ rows freed, counted written
 *         fail ─▶ the batch stays (ahead of anything queued since), retried after
 *                 250 ms, doubling to 5 s; logged once when the DB goes away and
 *                 once when it is back (with the rows written then)
 *   every reset_interval_s: sy_budget_reset_due on the same connection, then
 *   sy_spend_on_reset() when rows were reset.
 *   PostgreSQL, every LEASE_S / 3: this instance's lease renewed and lapsed
 *   reservations reclaimed (spend/reserve.c).
 *
 * One transaction per chunk, in this order (so row locks are always taken in
 * one global order - daily rows by key, then entity rows by (kind, id), the
 * order reserve.c uses too - and entity rows, which reservations wait on,
 * are held for the shortest time):
 *
 *   1. "LiteLLM_SpendLogs": multi-row INSERTs of 256, 128, ..., 2, 1 rows
 *      (greedy: 300 rows = 256 + 32 + 8 + 4; nine SQL texts in all, so they
 *      stay in the SQLite backend's statement cache, and PostgreSQL parses
 *      one statement per up to 256 rows), ON CONFLICT (request_id)
 *      DO NOTHING so a batch retried after an unknown commit outcome never
 *      duplicates. Skipped with disable_spend_logs; failure rows skipped with
 *      disable_error_logs.
 *   2. "LiteLLM_Daily{User,Team,Organization,EndUser}Spend": rows aggregated in
 *      memory per LiteLLM's unique key (entity, date, api_key, model,
 *      custom_llm_provider, mcp_namespaced_tool_name, endpoint), then one
 *      INSERT ... ON CONFLICT (that key) DO UPDATE SET x = x + EXCLUDED.x each.
 *      date is the UTC day of startTime (as LiteLLM); mcp_namespaced_tool_name
 *      is an MCP tool call's, else '', and endpoint is '' (NULLs would never
 *      conflict); a NULL model or
 *      provider is written ''. User rows are written for every request
 *      (user_id '' when the key has no user, as LiteLLM), team / org / end user
 *      rows only when the request has one.
 *   3. Entity spend: deltas summed per entity, one UPDATE ... SET "spend" =
 *      "spend" + $d each. For an entity the request reserved from, the delta is
 *      spend - reserved (the reservation already added the worst case).
 *      model_spend (LiteLLM's per-model JSON on keys/users/teams) is not
 *      maintained: it needs JSON operators outside store.h's common subset.
 *
 * A chunk that fails twice with an error other than SY_STORE_EDOWN (a row the
 * database rejects, e.g. metadata that is not JSON on PostgreSQL) is then
 * written one row per transaction; a single row that fails MAX_QERR times in
 * a row is dropped (logged, counted in dropped), so one bad row can neither
 * wedge the queue nor take its neighbours with it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <json-c/json.h>

#include "core/buf.h"
#include "core/log.h"
#include "logging/logging.h"
#include "spend/spend.h"
#include "spend/spend_impl.h"
#include "store/dbpool.h"
#include "store/store.h"

void (*sy_spend_on_reset)(void);

#define LOG_SHIFT   8 /* SpendLogs INSERTs carry 2^k rows, k = LOG_SHIFT..0 */
#define LOG_ROWS    (1 << LOG_SHIFT)
#define LOG_COLS    30   /* parameters per SpendLogs row */
#define CHUNK       2000 /* rows per transaction */
#define MAX_QERR    5    /* non-EDOWN failures before a chunk is dropped */
#define BACKOFF_MIN 0.25
#define BACKOFF_MAX 5.0
#define DROP_LOG_S  10.0
#define META_CAP    (64u << 20) /* one SpendLogs metadata object */
#define LEASE_S     15.0        /* an instance's reservations outlive it by this much (spend/reserve.c) */

/* One queued record: the struct, then its strings, in one allocation. */
struct wrec {
    struct wrec *next;
    struct sy_spend_rec r;
    char strings[];
};

static const size_t str_fields[] = {
    offsetof(struct sy_spend_rec, request_id),
    offsetof(struct sy_spend_rec, call_type),
    offsetof(struct sy_spend_rec, status),
    offsetof(struct sy_spend_rec, api_key),
    offsetof(struct sy_spend_rec, key_alias),
    offsetof(struct sy_spend_rec, user_id),
    offsetof(struct sy_spend_rec, team_id),
    offsetof(struct sy_spend_rec, org_id),
    offsetof(struct sy_spend_rec, end_user),
    offsetof(struct sy_spend_rec, model),
    offsetof(struct sy_spend_rec, model_id),
    offsetof(struct sy_spend_rec, model_group),
    offsetof(struct sy_spend_rec, custom_llm_provider),
    offsetof(struct sy_spend_rec, api_base),
    offsetof(struct sy_spend_rec, requester_ip),
    offsetof(struct sy_spend_rec, metadata),
    offsetof(struct sy_spend_rec, request_tags),
    offsetof(struct sy_spend_rec, cache_key),
    offsetof(struct sy_spend_rec, usage_source),
    offsetof(struct sy_spend_rec, resv_id),
    offsetof(struct sy_spend_rec, guard_info),
    offsetof(struct sy_spend_rec, mcp_namespaced_tool_name),
    offsetof(struct sy_spend_rec, error_class),
    offsetof(struct sy_spend_rec, error_message),
};
#define NSTR          (sizeof str_fields / sizeof str_fields[0])
#define FIELD(r, off) (*(const char **)((char *)(r) + (off)))

static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake; /* the writer waits on it */
    pthread_cond_t done; /* flush callers wait on it */
    int inited;
    int running; /* accepting records */
    int stopping;
    double stop_deadline;
    pthread_t tid;
    struct sy_spend_conf conf;
    struct sy_store *st;
    /* queue */
    struct wrec *head, *tail;
    size_t nqueued, ninflight;
    uint64_t flush_req, flush_done;
    /* stats */
    uint64_t queued, written, dropped, batches, failures;
    uint64_t drop_unlogged;
    double drop_logged_at;
    /* backpressure (sy_spend_backlogged): rows pending, and the database failing */
    _Atomic size_t pending;
    _Atomic size_t admitted; /* calls admitted whose row is not queued yet (sy_spend_admit) */
    atomic_int failing;
} W = {.mu = PTHREAD_MUTEX_INITIALIZER};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void wait_until(pthread_cond_t *c, double t)
{
    struct timespec ts;
    if (t > 4e9)
        t = 4e9;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_nsec = 999999999L;
    pthread_cond_timedwait(c, &W.mu, &ts);
}

/* ---- ids ---------------------------------------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t seed(void)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s)
        s = (uint64_t)(wall() * 1e6) ^ (uint64_t)(uintptr_t)&s;
    return s;
}

/* A version-4 UUID text (36 chars + NUL). */
static void uuid4(char out[37], uint64_t *s)
{
    uint64_t a = splitmix(s), b = splitmix(s);
    a = (a & ~0xF000ull) | 0x4000ull;                        /* version 4 */
    b = (b & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull; /* variant 10 */
    snprintf(out, 37, "%08x-%04x-%04x-%04x-%012llx", (unsigned)(a >> 32), (unsigned)((a >> 16) & 0xFFFF),
             (unsigned)(a & 0xFFFF), (unsigned)(b >> 48), (unsigned long long)(b & 0xFFFFFFFFFFFFull));
}

/* ---- recording (any thread) --------------------------------------------- */

static void log_drops(uint64_t n)
{
    sy_warn("spend writer: queue full (max_queue %zu rows held): dropped %llu spend rows", W.conf.max_queue,
            (unsigned long long)n);
    sy_alert(
        SY_ALERT_FAILED_TRACKING_SPEND, "spend_queue_full",
        "Failed Tracking Cost: the spend writer's queue is full (max_queue %zu rows held): %llu spend rows dropped",
        W.conf.max_queue, (unsigned long long)n);
}

int sy_spend_record(const struct sy_spend_rec *r)
{
    char rid[37];
    size_t lens[NSTR], total = 0;
    for (size_t i = 0; i < NSTR; i++) {
        const char *s = FIELD(r, str_fields[i]);
        lens[i] = s ? strlen(s) + 1 : 0;
        total += lens[i];
    }
    total += (r->prompt ? r->prompt_len : 0) + (r->response ? r->response_len : 0); /* store_prompts_in_spend_logs */
    if (!r->request_id) { /* cannot happen on the gateway path; still a unique row */
        static __thread uint64_t rs;
        if (!rs)
            rs = seed() | 1;
        uuid4(rid, &rs);
        total += 37;
    }
    struct wrec *w = malloc(sizeof *w + total);
    if (!w)
        return -1;
    w->next = NULL;
    w->r = *r;
    char *p = w->strings;
    for (size_t i = 0; i < NSTR; i++) {
        if (!lens[i])
            continue;
        memcpy(p, FIELD(r, str_fields[i]), lens[i]);
        FIELD(&w->r, str_fields[i]) = p;
        p += lens[i];
    }
    if (!r->request_id) {
        memcpy(p, rid, 37);
        w->r.request_id = p;
        p += 37;
    }
    if (r->prompt) {
        memcpy(p, r->prompt, r->prompt_len);
        w->r.prompt = p;
        p += r->prompt_len;
    }
    if (r->response) {
        memcpy(p, r->response, r->response_len);
        w->r.response = p;
    }

    uint64_t report = 0;
    size_t pending = 0;
    pthread_mutex_lock(&W.mu);
    if (!W.running) {
        pthread_mutex_unlock(&W.mu);
        free(w);
        return -1;
    }
    pending = W.nqueued + W.ninflight;
    if (pending >= W.conf.max_queue) {
        W.dropped++;
        W.drop_unlogged++;
        double now = mono();
        if (now - W.drop_logged_at >= DROP_LOG_S) {
            report = W.drop_unlogged;
            W.drop_unlogged = 0;
            W.drop_logged_at = now;
        }
        pthread_mutex_unlock(&W.mu);
        free(w);
        if (report)
            log_drops(report);
        return -1;
    }
    if (W.tail)
        W.tail->next = w;
    else
        W.head = w;
    W.tail = w;
    W.nqueued++;
    atomic_store_explicit(&W.pending, W.nqueued + W.ninflight, memory_order_relaxed);
    W.queued++;
    pthread_mutex_unlock(&W.mu);
    return 0;
}

/* ---- the batch transaction (writer thread) -------------------------------- */

struct wctx {
    struct sy_store *st;
    struct sy_buf sql[LOG_SHIFT + 1]; /* sql[k]: the INSERT of 2^k rows */
    struct sy_buf meta[LOG_ROWS];
    struct sy_buf preq[LOG_ROWS], presp[LOG_ROWS]; /* store_prompts_in_spend_logs (prompts.c) */
    char ts[LOG_ROWS][3][32];
    struct sy_sval params[LOG_ROWS * LOG_COLS];
    uint64_t rng;
    char err[512]; /* the failed statement's message (ROLLBACK clears the store's) */
};

static const char *const logs_head =
    "INSERT INTO \"LiteLLM_SpendLogs\" (\"request_id\", \"call_type\", \"api_key\", \"spend\", \"total_tokens\", "
    "\"prompt_tokens\", \"completion_tokens\", \"startTime\", \"endTime\", \"completionStartTime\", \"model\", "
    "\"model_id\", \"model_group\", \"custom_llm_provider\", \"api_base\", \"user\", \"metadata\", \"cache_hit\", "
    "\"cache_key\", \"request_tags\", \"team_id\", \"organization_id\", \"end_user\", \"requester_ip_address\", "
    "\"status\", \"request_duration_ms\", \"messages\", \"response\", \"proxy_server_request\", "
    "\"mcp_namespaced_tool_name\") VALUES ";

static void build_logs_sql(struct sy_buf *b, int rows)
{
    sy_buf_puts(b, logs_head);
    for (int r = 0; r < rows; r++) {
        sy_buf_puts(b, r ? ", (" : "(");
        for (int c = 0; c < LOG_COLS; c++)
            sy_buf_printf(b, c ? ", $%d" : "$%d", r * LOG_COLS + c + 1);
        sy_buf_puts(b, ")");
    }
    sy_buf_puts(b, " ON CONFLICT (\"request_id\") DO NOTHING");
}

static void jkey_str(struct sy_buf *b, const char *k, const char *v, int *first)
{
    sy_buf_puts(b, *first ? "\"" : ",\"");
    *first = 0;
    sy_buf_puts(b, k);
    sy_buf_puts(b, "\":");
    if (!v) {
        SY_BUF_LIT(b, "null");
        return;
    }
    sy_buf_puts(b, "\"");
    sy_buf_json_escape(b, v, strlen(v));
    sy_buf_puts(b, "\"");
}

/* The guardrails of a record (r->guard_info) parsed, when it is a JSON
 * array; NULL otherwise (PostgreSQL would refuse the row's metadata: what is
 * not an array is no information). */
static json_object *guard_list(const char *info)
{
    size_t n = strlen(info);
    struct json_tokener *tok = n < (size_t)0x7ffffff0 ? json_tokener_new_ex(64) : NULL;
    if (!tok)
        return NULL;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *gi = json_tokener_parse_ex(tok, info, (int)n);
    if (gi && (json_tokener_get_error(tok) != json_tokener_success || tok->char_offset != (int)n ||
               !json_object_is_type(gi, json_type_array))) {
        json_object_put(gi);
        gi = NULL;
    }
    json_tokener_free(tok);
    return gi;
}

/* JSON text with each \u0000 escape written \ufffd: PostgreSQL's jsonb
 * refuses U+0000, and the whole row would be refused with it. */
static void put_json_no_nul(struct sy_buf *b, const char *s)
{
    if (!strstr(s, "\\u0000")) {
        sy_buf_puts(b, s);
        return;
    }
    const char *run = s;
    for (const char *p = s; *p;) {
        if (*p != '\\') {
            p++;
            continue;
        }
        if (p[1] == 'u' && !strncmp(p + 2, "0000", 4)) {
            sy_buf_append(b, run, (size_t)(p - run));
            sy_buf_puts(b, "\\ufffd");
            p += 6;
            run = p;
        } else {
            p += p[1] ? 2 : 1; /* an escape: its second character is not a backslash to look at */
        }
    }
    sy_buf_puts(b, run);
}

/* applied_guardrails: the names of the list, each once, in order ([] without
 * one), as LiteLLM's _get_spend_logs_metadata copies the payload's. */
static void put_applied(struct sy_buf *b, json_object *gi)
{
    sy_buf_puts(b, ",\"applied_guardrails\":[");
    json_object *seen = gi ? json_object_new_object() : NULL;
    int first = 1;
    for (size_t i = 0; gi && i < json_object_array_length(gi); i++) {
        json_object *e = json_object_array_get_idx(gi, i), *v = NULL;
        if (!json_object_is_type(e, json_type_object) || !json_object_object_get_ex(e, "guardrail_name", &v) ||
            !json_object_is_type(v, json_type_string))
            continue;
        const char *name = json_object_get_string(v);
        if (json_object_object_get_ex(seen, name, NULL))
            continue;
        json_object_object_add(seen, name, NULL);
        sy_buf_puts(b, first ? "\"" : ",\"");
        first = 0;
        sy_buf_json_escape(b, name, strlen(name));
        sy_buf_puts(b, "\"");
    }
    sy_buf_puts(b, "]");
    json_object_put(seen);
}

/* LiteLLM's SpendLogsMetadata for a record that brought none. */
static void build_metadata(struct sy_buf *b, const struct sy_spend_rec *r)
{
    int first = 1;
    const struct sy_usage *u = &r->usage;
    sy_buf_puts(b, "{");
    jkey_str(b, "user_api_key", r->api_key ? r->api_key : "", &first);
    jkey_str(b, "user_api_key_alias", r->key_alias, &first);
    jkey_str(b, "user_api_key_team_id", r->team_id, &first);
    jkey_str(b, "user_api_key_org_id", r->org_id, &first);
    jkey_str(b, "user_api_key_user_id", r->user_id, &first);
    jkey_str(b, "user_api_key_team_alias", NULL, &first);
    jkey_str(b, "spend_logs_metadata", NULL, &first);
    jkey_str(b, "requester_ip_address", r->requester_ip, &first);
    json_object *gi = r->guard_info ? guard_list(r->guard_info) : NULL; /* nothing ran: no parse */
    put_applied(b, gi);
    jkey_str(b, "batch_models", NULL, &first);
    jkey_str(b, "mcp_tool_call_metadata", NULL, &first);
    jkey_str(b, "vector_store_request_metadata", NULL, &first);
    if (gi) { /* the list as the stage wrote it (its floats kept) */
        sy_buf_puts(b, ",\"guardrail_information\":");
        put_json_no_nul(b, r->guard_info);
        json_object_put(gi);
    } else {
        jkey_str(b, "guardrail_information", NULL, &first);
    }
    /* no printf: this runs for every row */
    SY_BUF_LIT(b, ",\"usage_object\":{\"completion_tokens\":");
    sy_buf_u64(b, u->completion_tokens);
    SY_BUF_LIT(b, ",\"prompt_tokens\":");
    sy_buf_u64(b, u->prompt_tokens);
    SY_BUF_LIT(b, ",\"total_tokens\":");
    sy_buf_u64(b, u->prompt_tokens + u->completion_tokens);
    SY_BUF_LIT(b, ",\"completion_tokens_details\":{\"reasoning_tokens\":");
    sy_buf_u64(b, u->reasoning_tokens);
    SY_BUF_LIT(b, "},\"prompt_tokens_details\":{\"cached_tokens\":");
    sy_buf_u64(b, u->cached_tokens);
    SY_BUF_LIT(b, "},\"cache_creation_input_tokens\":");
    sy_buf_u64(b, u->cache_creation_tokens);
    SY_BUF_LIT(b, ",\"cache_read_input_tokens\":");
    sy_buf_u64(b, u->cached_tokens);
    SY_BUF_LIT(b, "}");
    sy_buf_puts(b, ",\"model_map_information\":null,\"additional_usage_values\":null");
    /* switchyard's own keys: where the tokens came from, and a stream the client left */
    jkey_str(b, "usage_source", r->usage_source, &first);
    if (r->stream_cut)
        SY_BUF_LIT(b, ",\"stream_cut\":true");
    jkey_str(b, "status", r->status ? r->status : "success", &first);
    jkey_str(b, "proxy_server_request", NULL, &first);
    if (r->error_code || r->error_class || r->error_message) { /* LiteLLM's StandardLoggingPayloadErrorInformation */
        sy_buf_puts(b, ",\"error_information\":{");
        int f2 = 1;
        char code[16];
        snprintf(code, sizeof code, "%d", r->error_code);
        jkey_str(b, "error_code", r->error_code ? code : NULL, &f2);
        jkey_str(b, "error_class", r->error_class, &f2);
        jkey_str(b, "llm_provider", r->custom_llm_provider, &f2);
        jkey_str(b, "traceback", NULL, &f2);
        jkey_str(b, "error_message", r->error_message, &f2);
        sy_buf_puts(b, "}");
    } else {
        jkey_str(b, "error_information", NULL, &first);
    }
    sy_buf_puts(b, "}");
}

static const char *nz(const char *s)
{
    return s ? s : "";
}

static int is_failure(const struct sy_spend_rec *r)
{
    return r->status && strcmp(r->status, "success") != 0;
}

/* Fill row i's parameters. */
static void log_params(struct wctx *x, int i, const struct sy_spend_rec *r)
{
    struct sy_sval *p = &x->params[i * LOG_COLS];
    const char *meta = r->metadata;
    if (!meta) {
        sy_buf_reset(&x->meta[i]);
        build_metadata(&x->meta[i], r);
        meta = x->meta[i].p;
    }
    sy_iso_time(r->start_s, x->ts[i][0]);
    sy_iso_time(r->end_s, x->ts[i][1]);
    sy_iso_time(r->completion_start_s, x->ts[i][2]);
    double ms = (r->end_s - r->start_s) * 1000.0;
    p[0] = sy_sv_text(r->request_id);
    p[1] = sy_sv_text(nz(r->call_type));
    p[2] = sy_sv_text(nz(r->api_key));
    p[3] = sy_sv_num(r->spend);
    p[4] = sy_sv_int((int64_t)(r->usage.prompt_tokens + r->usage.completion_tokens));
    p[5] = sy_sv_int((int64_t)r->usage.prompt_tokens);
    p[6] = sy_sv_int((int64_t)r->usage.completion_tokens);
    p[7] = sy_sv_ts(x->ts[i][0]);
    p[8] = sy_sv_ts(x->ts[i][1]);
    p[9] = r->completion_start_s > 0 ? sy_sv_ts(x->ts[i][2]) : sy_sv_null();
    p[10] = sy_sv_text(nz(r->model));
    p[11] = sy_sv_text(nz(r->model_id));
    p[12] = sy_sv_text(nz(r->model_group));
    p[13] = sy_sv_text(nz(r->custom_llm_provider));
    p[14] = sy_sv_text(nz(r->api_base));
    p[15] = sy_sv_text(nz(r->user_id));
    p[16] = sy_sv_json(meta);
    p[17] = sy_sv_text(r->cache_hit ? "True" : "False");
    p[18] = sy_sv_text(r->cache_key ? r->cache_key : "Cache OFF");
    p[19] = sy_sv_json(r->request_tags ? r->request_tags : "[]");
    p[20] = sy_sv_text(r->team_id);
    p[21] = sy_sv_text(r->org_id);
    p[22] = sy_sv_text(nz(r->end_user));
    p[23] = sy_sv_text(r->requester_ip);
    p[24] = sy_sv_text(r->status ? r->status : "success");
    p[25] = sy_sv_int(ms > 0 ? (int64_t)(ms + 0.5) : 0);
    p[26] = sy_sv_json("{}"); /* LiteLLM writes the prompt in proxy_server_request */
    p[27] = sy_sv_json("{}");
    p[28] = sy_sv_json("{}");
    p[29] = sy_sv_text(r->mcp_namespaced_tool_name); /* NULL for LLM calls, as LiteLLM */
    if (r->prompt || r->response) {
        sy_buf_reset(&x->preq[i]);
        sy_buf_reset(&x->presp[i]);
        if (sy_spend_prompt_columns(r, &x->preq[i], &x->presp[i]) == 0) {
            p[27] = sy_sv_json(x->presp[i].p);
            p[28] = sy_sv_json(x->preq[i].p);
        }
    }
}

/* A record that gets a SpendLogs row: all of them, except failures under
 * disable_error_logs (LiteLLM's failure hook writes nothing then). */
static int logged(const struct wrec *w)
{
    return !W.conf.disable_error_logs || !w->r.status || strcmp(w->r.status, "success") == 0;
}

static int write_logs(struct wctx *x, struct wrec *list, size_t n)
{
    struct wrec *w = list;
    size_t m = 0;
    for (size_t i = 0; i < n; i++, w = w->next)
        m += (size_t)logged(w);
    n = m;
    w = list;
    while (n > 0) {
        /* SQLite runs in-process: a statement per few rows costs nothing,
         * while thousands of numbered parameters make its parameter lookup
         * quadratic; PostgreSQL wants few round trips. */
        int k = sy_store_kind(x->st) == SY_STORE_SQLITE ? 3 : LOG_SHIFT;
        while ((size_t)1 << k > n)
            k--;
        int rows = 1 << k;
        for (int i = 0; i < rows; w = w->next) {
            if (!logged(w))
                continue;
            log_params(x, i++, &w->r);
        }
        int rc = sy_store_exec(x->st, x->sql[k].p, rows * LOG_COLS, x->params, NULL, NULL);
        if (rc < 0)
            return rc;
        n -= (size_t)rows;
    }
    return 0;
}

/* ---- daily aggregates ---- */

enum { D_USER, D_TEAM, D_ORG, D_END_USER, D__COUNT };

#define DAILY_SQL(T, COL)                                                                                          \
    "INSERT INTO \"" T "\" (\"id\", \"" COL "\", \"date\", \"api_key\", \"model\", \"model_group\", "              \
    "\"custom_llm_provider\", \"mcp_namespaced_tool_name\", \"endpoint\", \"prompt_tokens\", "                     \
    "\"completion_tokens\", \"cache_read_input_tokens\", \"cache_creation_input_tokens\", \"spend\", "             \
    "\"api_requests\", \"successful_requests\", \"failed_requests\", \"created_at\", \"updated_at\") "             \
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $17, '', $8, $9, $10, $11, $12, $13, $14, $15, $16, $16) "                \
    "ON CONFLICT (\"" COL "\", \"date\", \"api_key\", \"model\", \"custom_llm_provider\", "                        \
    "\"mcp_namespaced_tool_name\", \"endpoint\") DO UPDATE SET "                                                   \
    "\"prompt_tokens\" = \"" T "\".\"prompt_tokens\" + EXCLUDED.\"prompt_tokens\", "                               \
    "\"completion_tokens\" = \"" T "\".\"completion_tokens\" + EXCLUDED.\"completion_tokens\", "                   \
    "\"cache_read_input_tokens\" = \"" T "\".\"cache_read_input_tokens\" + EXCLUDED.\"cache_read_input_tokens\", " \
    "\"cache_creation_input_tokens\" = \"" T "\".\"cache_creation_input_tokens\" + "                               \
    "EXCLUDED.\"cache_creation_input_tokens\", "                                                                   \
    "\"spend\" = \"" T "\".\"spend\" + EXCLUDED.\"spend\", "                                                       \
    "\"api_requests\" = \"" T "\".\"api_requests\" + EXCLUDED.\"api_requests\", "                                  \
    "\"successful_requests\" = \"" T "\".\"successful_requests\" + EXCLUDED.\"successful_requests\", "             \
    "\"failed_requests\" = \"" T "\".\"failed_requests\" + EXCLUDED.\"failed_requests\", "                         \
    "\"updated_at\" = EXCLUDED.\"updated_at\""

static const char *const daily_sql[D__COUNT] = {
    [D_USER] = DAILY_SQL("LiteLLM_DailyUserSpend", "user_id"),
    [D_TEAM] = DAILY_SQL("LiteLLM_DailyTeamSpend", "team_id"),
    [D_ORG] = DAILY_SQL("LiteLLM_DailyOrganizationSpend", "organization_id"),
    [D_END_USER] = DAILY_SQL("LiteLLM_DailyEndUserSpend", "end_user_id"),
};

struct daily {
    int t;
    const char *id, *api_key, *model, *provider, *group, *tool;
    char date[11];
    int64_t pt, ct, cr, cc, req, ok, fail;
    double spend;
};

static int daily_cmp(const void *a_, const void *b_)
{
    const struct daily *a = a_, *b = b_;
    int c;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if ((c = strcmp(a->id, b->id)) || (c = strcmp(a->date, b->date)) || (c = strcmp(a->api_key, b->api_key)) ||
        (c = strcmp(a->model, b->model)) || (c = strcmp(a->provider, b->provider)))
        return c;
    return strcmp(a->tool, b->tool);
}

static int write_daily(struct wctx *x, struct wrec *list, size_t n)
{
    struct daily *d = malloc(n * D__COUNT * sizeof *d);
    if (!d)
        return SY_STORE_EQUERY;
    size_t m = 0;
    struct wrec *w = list;
    for (size_t i = 0; i < n; i++, w = w->next) {
        const struct sy_spend_rec *r = &w->r;
        const char *ids[D__COUNT] = {nz(r->user_id), r->team_id, r->org_id, r->end_user};
        char date[32];
        sy_iso_time(r->start_s, date);
        for (int t = 0; t < D__COUNT; t++) {
            if (!ids[t] || (t != D_USER && !ids[t][0]))
                continue;
            struct daily *e = &d[m++];
            e->t = t;
            e->id = ids[t];
            e->api_key = nz(r->api_key);
            e->model = nz(r->model);
            e->provider = nz(r->custom_llm_provider);
            e->group = r->model_group;
            e->tool = nz(r->mcp_namespaced_tool_name);
            memcpy(e->date, date, 10);
            e->date[10] = 0;
            e->pt = (int64_t)r->usage.prompt_tokens;
            e->ct = (int64_t)r->usage.completion_tokens;
            e->cr = (int64_t)r->usage.cached_tokens;
            e->cc = (int64_t)r->usage.cache_creation_tokens;
            e->spend = r->spend;
            e->req = 1;
            e->fail = is_failure(r);
            e->ok = !e->fail;
        }
    }
    qsort(d, m, sizeof *d, daily_cmp);
    char now_iso[32];
    sy_iso_time(wall(), now_iso);
    int rc = 0;
    for (size_t i = 0; i < m && rc >= 0;) {
        struct daily a = d[i];
        size_t j = i + 1;
        for (; j < m && daily_cmp(&a, &d[j]) == 0; j++) {
            a.pt += d[j].pt, a.ct += d[j].ct, a.cr += d[j].cr, a.cc += d[j].cc;
            a.spend += d[j].spend, a.req += d[j].req, a.ok += d[j].ok, a.fail += d[j].fail;
            if (!a.group)
                a.group = d[j].group;
        }
        i = j;
        char id[37];
        uuid4(id, &x->rng);
        struct sy_sval p[17] = {
            sy_sv_text(id),      sy_sv_text(a.id),       sy_sv_text(a.date), sy_sv_text(a.api_key), sy_sv_text(a.model),
            sy_sv_text(a.group), sy_sv_text(a.provider), sy_sv_int(a.pt),    sy_sv_int(a.ct),       sy_sv_int(a.cr),
            sy_sv_int(a.cc),     sy_sv_num(a.spend),     sy_sv_int(a.req),   sy_sv_int(a.ok),       sy_sv_int(a.fail),
            sy_sv_ts(now_iso),   sy_sv_text(a.tool),
        };
        rc = sy_store_exec(x->st, daily_sql[a.t], 17, p, NULL, NULL);
    }
    free(d);
    return rc < 0 ? rc : 0;
}

/* LiteLLM_DailyTagSpend: one upsert per request tag (the record's
 * request_tags JSON array), as LiteLLM's tag aggregate. */
static int write_daily_tags(struct wctx *x, struct wrec *list, size_t n)
{
    static const char *const sql = DAILY_SQL("LiteLLM_DailyTagSpend", "tag");
    char now_iso[32];
    sy_iso_time(wall(), now_iso);
    int rc = 0;
    struct wrec *w = list;
    for (size_t i = 0; i < n && rc >= 0; i++, w = w->next) {
        const struct sy_spend_rec *r = &w->r;
        if (!r->request_tags || !strchr(r->request_tags, '"'))
            continue;
        struct json_object *arr = json_tokener_parse(r->request_tags);
        char date[32], id[37];
        sy_iso_time(r->start_s, date);
        date[10] = 0;
        size_t nt = arr && json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
        for (size_t t = 0; t < nt && rc >= 0; t++) {
            struct json_object *v = json_object_array_get_idx(arr, t);
            if (!json_object_is_type(v, json_type_string) || !json_object_get_string_len(v))
                continue;
            int fail = is_failure(r);
            uuid4(id, &x->rng);
            struct sy_sval p[17] = {
                sy_sv_text(id),
                sy_sv_text(json_object_get_string(v)),
                sy_sv_text(date),
                sy_sv_text(nz(r->api_key)),
                sy_sv_text(nz(r->model)),
                sy_sv_text(r->model_group),
                sy_sv_text(nz(r->custom_llm_provider)),
                sy_sv_int((int64_t)r->usage.prompt_tokens),
                sy_sv_int((int64_t)r->usage.completion_tokens),
                sy_sv_int((int64_t)r->usage.cached_tokens),
                sy_sv_int((int64_t)r->usage.cache_creation_tokens),
                sy_sv_num(r->spend),
                sy_sv_int(1),
                sy_sv_int(!fail),
                sy_sv_int(fail),
                sy_sv_ts(now_iso),
                sy_sv_text(nz(r->mcp_namespaced_tool_name)),
            };
            rc = sy_store_exec(x->st, sql, 17, p, NULL, NULL);
        }
        json_object_put(arr);
    }
    return rc < 0 ? rc : 0;
}

/* ---- entity spend ---- */

static const char *const ent_sql[SY_ENT__COUNT] = {
    [SY_ENT_KEY] = "UPDATE \"LiteLLM_VerificationToken\" SET \"spend\" = \"spend\" + $1 WHERE \"token\" = $2",
    [SY_ENT_USER] = "UPDATE \"LiteLLM_UserTable\" SET \"spend\" = \"spend\" + $1 WHERE \"user_id\" = $2",
    [SY_ENT_TEAM] = "UPDATE \"LiteLLM_TeamTable\" SET \"spend\" = \"spend\" + $1 WHERE \"team_id\" = $2",
    [SY_ENT_MEMBER] = "UPDATE \"LiteLLM_TeamMembership\" SET \"spend\" = \"spend\" + $1 "
                      "WHERE \"team_id\" = $2 AND \"user_id\" = $3",
    [SY_ENT_END_USER] = "UPDATE \"LiteLLM_EndUserTable\" SET \"spend\" = \"spend\" + $1 WHERE \"user_id\" = $2",
    [SY_ENT_ORG] = "UPDATE \"LiteLLM_OrganizationTable\" SET \"spend\" = \"spend\" + $1 "
                   "WHERE \"organization_id\" = $2",
};

struct edelta {
    int e;
    const char *id, *id2; /* member: team_id, user_id */
    double d;
};

static int edelta_cmp(const void *a_, const void *b_)
{
    const struct edelta *a = a_, *b = b_;
    if (a->e != b->e)
        return a->e < b->e ? -1 : 1;
    int c = strcmp(a->id, b->id);
    return c ? c : strcmp(a->id2, b->id2);
}

static int write_entities(struct wctx *x, struct wrec *list, size_t n)
{
    struct edelta *d = malloc(n * SY_ENT__COUNT * sizeof *d);
    if (!d)
        return SY_STORE_EQUERY;
    size_t m = 0;
    struct wrec *w = list;
    for (size_t i = 0; i < n; i++, w = w->next) {
        const struct sy_spend_rec *r = &w->r;
        const char *ids[SY_ENT__COUNT] = {r->api_key, r->user_id, r->team_id, r->team_id, r->end_user, r->org_id};
        /* durable reservation rows (reserve.c): gone = reclaimed, the whole cost is added */
        int held = 1;
        if (r->resv_id && (held = sy_reserve_settle_in_tx(x->st, r->resv_id)) < 0) {
            free(d);
            return held;
        }
        for (int e = 0; e < SY_ENT__COUNT; e++) {
            double reserved = held ? r->reserved[e] : 0;
            if (!r->has_entity[e] && reserved == 0)
                continue;
            if (!ids[e] || !ids[e][0])
                continue;
            if (e == SY_ENT_MEMBER && (!r->user_id || !r->user_id[0]))
                continue;
            double delta = r->spend - reserved;
            if (delta == 0)
                continue;
            d[m].e = e;
            d[m].id = ids[e];
            d[m].id2 = e == SY_ENT_MEMBER ? r->user_id : "";
            d[m].d = delta;
            m++;
        }
    }
    qsort(d, m, sizeof *d, edelta_cmp);
    int rc = 0;
    for (size_t i = 0; i < m && rc >= 0;) {
        struct edelta a = d[i];
        size_t j = i + 1;
        for (; j < m && edelta_cmp(&a, &d[j]) == 0; j++)
            a.d += d[j].d;
        i = j;
        if (a.d == 0)
            continue;
        struct sy_sval p[3] = {sy_sv_num(a.d), sy_sv_text(a.id), sy_sv_text(a.id2)};
        rc = sy_store_exec(x->st, ent_sql[a.e], a.e == SY_ENT_MEMBER ? 3 : 2, p, NULL, NULL);
    }
    free(d);
    return rc < 0 ? rc : 0;
}

/* The credit the chunk's records carry (reserve.c reads spend - credit). */
static void credit(struct wrec *w, size_t n, double sign)
{
    for (; n > 0 && w; n--, w = w->next)
        sy_spend_rec_credit(&w->r, sign);
}

/* The whole chunk in one transaction. 0 or a negative SY_STORE_E*. */
static int write_chunk(struct wctx *x, struct wrec *list, size_t n, int logs)
{
    int rc = sy_store_begin(x->st);
    if (rc < 0) {
        snprintf(x->err, sizeof x->err, "%s", sy_store_errmsg(x->st));
        return rc;
    }
    if (logs && (rc = write_logs(x, list, n)) < 0)
        goto fail;
    if ((rc = write_daily(x, list, n)) < 0)
        goto fail;
    if ((rc = write_daily_tags(x, list, n)) < 0)
        goto fail;
    if ((rc = write_entities(x, list, n)) < 0)
        goto fail;
    credit(list, n, -1); /* taken back while the entity rows are locked (ledger.c) */
    if ((rc = sy_store_commit(x->st)) < 0) {
        credit(list, n, 1);
        goto fail;
    }
    return 0;
fail:
    snprintf(x->err, sizeof x->err, "%s", sy_store_errmsg(x->st));
    sy_store_rollback(x->st);
    return rc;
}

/* ---- the thread ------------------------------------------------------------ */

struct wstate {
    struct wrec *batch, *batch_tail; /* taken from the queue, not yet written */
    size_t nbatch;
    double backoff, retry_at;
    int down;          /* the last attempt failed: 1 EDOWN, 2 another error */
    int qerr;          /* non-EDOWN failures of the head chunk in a row */
    size_t isolate;    /* rows left to write one per transaction (after a bad chunk) */
    int recovering;    /* s->down before the DB came back; the held rows are being written */
    uint64_t since_up; /* rows written since the DB came back */
};

static void free_list(struct wrec *w, size_t n)
{
    while (n-- > 0 && w) {
        struct wrec *next = w->next;
        free(w);
        w = next;
    }
}

/* Write everything in the batch, CHUNK rows per transaction. On failure the
 * rest stays in the batch and the back-off is armed. Logs once when the
 * database goes away and once when everything held has been written after it
 * came back. */
static void write_batch(struct wctx *x, struct wstate *s, int logs)
{
    while (s->batch) {
        size_t n = s->isolate ? 1 : s->nbatch < CHUNK ? s->nbatch : CHUNK;
        int rc = write_chunk(x, s->batch, n, logs);
        struct wrec *rest = s->batch;
        for (size_t i = 0; i < n; i++)
            rest = rest->next;
        if (rc < 0) {
            pthread_mutex_lock(&W.mu);
            W.failures++;
            size_t pending = W.nqueued + W.ninflight;
            pthread_mutex_unlock(&W.mu);
            if (!s->down) {
                sy_warn("spend writer: database %s (%s); %zu spend rows held, retrying",
                        rc == SY_STORE_EDOWN ? "unavailable" : "write failed", x->err, pending);
                s->down = rc == SY_STORE_EDOWN ? 1 : 2;
                s->recovering = 0;
                atomic_store(&W.failing, 1);
            }
            if (rc != SY_STORE_EDOWN) {
                s->qerr++;
                if (n > 1 && s->qerr >= 2) {
                    /* failed twice: probably one bad row; write this chunk row by row */
                    s->isolate = n;
                    s->qerr = 0;
                    continue;
                }
                if (n == 1 && s->qerr >= MAX_QERR) {
                    sy_error("spend writer: dropping spend row %s after %d failed attempts: %s", s->batch->r.request_id,
                             s->qerr, x->err);
                    sy_alert(SY_ALERT_FAILED_TRACKING_SPEND, "spend_row_refused",
                             "Failed Tracking Cost for request `%.100s`: the database refused its spend row: %.500s",
                             s->batch->r.request_id, x->err);
                    if (s->batch->r.resv_id) { /* its reservation goes back */
                        sy_spend_rec_credit(&s->batch->r, -1);
                        sy_reserve_in_doubt(s->batch->r.resv_id);
                    }
                    free_list(s->batch, 1);
                    s->batch = rest;
                    s->nbatch -= 1;
                    if (!rest)
                        s->batch_tail = NULL;
                    if (s->isolate)
                        s->isolate--;
                    pthread_mutex_lock(&W.mu);
                    W.ninflight -= 1;
                    atomic_store_explicit(&W.pending, W.nqueued + W.ninflight, memory_order_relaxed);
                    W.dropped += 1;
                    pthread_mutex_unlock(&W.mu);
                    s->qerr = 0;
                    continue;
                }
            }
            s->backoff = s->backoff > 0 ? s->backoff * 2 : BACKOFF_MIN;
            if (s->backoff > BACKOFF_MAX)
                s->backoff = BACKOFF_MAX;
            s->retry_at = mono() + s->backoff;
            return;
        }
        free_list(s->batch, n);
        s->batch = rest;
        s->nbatch -= n;
        if (!rest)
            s->batch_tail = NULL;
        s->qerr = 0;
        if (s->isolate)
            s->isolate--;
        pthread_mutex_lock(&W.mu);
        W.ninflight -= n;
        W.written += n;
        W.batches++;
        atomic_store_explicit(&W.pending, W.nqueued + W.ninflight, memory_order_relaxed);
        pthread_mutex_unlock(&W.mu);
        atomic_store(&W.failing, 0);
        if (s->down) {
            s->recovering = s->down;
            s->down = 0;
            s->backoff = 0;
            s->since_up = 0;
        }
        if (s->recovering)
            s->since_up += n;
    }
    if (s->recovering) {
        sy_info("spend writer: %s; %llu spend rows written",
                s->recovering == 1 ? "database back" : "writes succeed again", (unsigned long long)s->since_up);
        s->recovering = 0;
    }
}

static void *writer_main(void *arg)
{
    (void)arg;
    struct wctx *x = calloc(1, sizeof *x);
    struct wstate s;
    memset(&s, 0, sizeof s);
    if (!x) {
        sy_error("spend writer: out of memory");
        pthread_mutex_lock(&W.mu);
        W.running = 0;
        pthread_cond_broadcast(&W.done);
        pthread_mutex_unlock(&W.mu);
        return NULL;
    }
    x->st = W.st;
    x->rng = seed();
    for (int k = 0; k <= LOG_SHIFT; k++) {
        sy_buf_init(&x->sql[k], 1 << 20);
        build_logs_sql(&x->sql[k], 1 << k);
    }
    for (int i = 0; i < LOG_ROWS; i++) {
        sy_buf_init(&x->meta[i], META_CAP);
        sy_buf_init(&x->preq[i], META_CAP);
        sy_buf_init(&x->presp[i], META_CAP);
    }

    double interval = W.conf.batch_interval_s > 0 ? W.conf.batch_interval_s : 1;
    double reset_every = W.conf.reset_interval_s > 0 ? W.conf.reset_interval_s : 60;
    double next_batch = mono() + interval, next_reset = mono(), next_lease = mono();
    int pg = sy_store_kind(x->st) == SY_STORE_POSTGRES;
    int logs = !W.conf.disable_spend_logs;

    pthread_mutex_lock(&W.mu);
    for (;;) {
        double now;
        for (;;) {
            now = mono();
            if (W.flush_req != W.flush_done)
                break;
            double due = s.backoff > 0 ? s.retry_at : next_batch;
            if (W.stopping && s.backoff == 0)
                break;
            if (W.stopping && due > W.stop_deadline)
                due = W.stop_deadline;
            if (now >= due || (!W.stopping && (now >= next_reset || (pg && now >= next_lease))))
                break;
            double until = due;
            if (!W.stopping && next_reset < until)
                until = next_reset;
            if (!W.stopping && pg && next_lease < until)
                until = next_lease;
            wait_until(&W.wake, until);
        }
        uint64_t target = W.flush_req;
        int stopping = W.stopping, flush = W.flush_req != W.flush_done;
        if (W.head) {
            if (s.batch_tail)
                s.batch_tail->next = W.head;
            else
                s.batch = W.head;
            s.batch_tail = W.tail;
            s.nbatch += W.nqueued;
            W.ninflight += W.nqueued;
            W.head = W.tail = NULL;
            W.nqueued = 0;
        }
        pthread_mutex_unlock(&W.mu);

        double due = s.backoff > 0 ? s.retry_at : next_batch;
        if (stopping || flush || now >= due) {
            if (s.batch)
                write_batch(x, &s, logs);
            next_batch = mono() + interval;
        }
        if (!stopping && now >= next_reset) {
            if (!s.down) {
                int n = sy_budget_reset_due(x->st, wall());
                if (n > 0 && sy_spend_on_reset)
                    sy_spend_on_reset();
            }
            next_reset = mono() + reset_every;
        }
        if (!stopping && pg && now >= next_lease) {
            if (sy_reserve_heartbeat(x->st, wall(), LEASE_S) >= 0) {
                int n = sy_reserve_reclaim(x->st, wall(), LEASE_S);
                if (n > 0)
                    sy_info("spend writer: %d budget reservations of lapsed instances given back", n);
            }
            next_lease = mono() + LEASE_S / 3;
        }

        pthread_mutex_lock(&W.mu);
        W.flush_done = target;
        pthread_cond_broadcast(&W.done);
        if (stopping) {
            if (!s.batch && !W.head)
                break;
            if (mono() >= W.stop_deadline) {
                sy_warn("spend writer: stopping with the database unavailable: %zu spend rows not written",
                        s.nbatch + W.nqueued);
                break;
            }
        }
    }
    /* leftovers (database down at stop): counted as dropped */
    size_t left = s.nbatch + W.nqueued;
    free_list(s.batch, s.nbatch);
    free_list(W.head, W.nqueued);
    W.head = W.tail = NULL;
    W.nqueued = W.ninflight = 0;
    atomic_store(&W.pending, 0);
    W.dropped += left;
    W.running = 0;
    pthread_cond_broadcast(&W.done);
    pthread_mutex_unlock(&W.mu);

    for (int k = 0; k <= LOG_SHIFT; k++)
        sy_buf_free(&x->sql[k]);
    for (int i = 0; i < LOG_ROWS; i++) {
        sy_buf_free(&x->meta[i]);
        sy_buf_free(&x->preq[i]);
        sy_buf_free(&x->presp[i]);
    }
    free(x);
    return NULL;
}

/* ---- control --------------------------------------------------------------- */

static void init_conds(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&W.wake, &a);
    pthread_condattr_destroy(&a);
    pthread_cond_init(&W.done, NULL);
}

int sy_spend_start(const struct sy_spend_conf *conf)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_conds);
    const struct sy_store_conf *sc = sy_db_conf();
    if (!sc) {
        sy_error("spend writer: the database is not configured");
        return -1;
    }
    pthread_mutex_lock(&W.mu);
    int busy = W.running || W.inited;
    pthread_mutex_unlock(&W.mu);
    if (busy)
        return -1;
    char err[256];
    struct sy_store *st = sy_store_open(sc, err, sizeof err);
    if (!st) {
        sy_error("spend writer: %s", err);
        return -1;
    }
    pthread_mutex_lock(&W.mu);
    W.conf = *conf;
    if (W.conf.batch_interval_s <= 0)
        W.conf.batch_interval_s = 1;
    if (W.conf.max_queue == 0)
        W.conf.max_queue = 100000;
    if (W.conf.reset_interval_s <= 0)
        W.conf.reset_interval_s = 60;
    W.st = st;
    W.running = 1;
    W.inited = 1;
    W.stopping = 0;
    W.head = W.tail = NULL;
    W.nqueued = W.ninflight = 0;
    atomic_store(&W.pending, 0);
    W.flush_req = W.flush_done = 0;
    W.queued = W.written = W.dropped = W.batches = W.failures = 0;
    W.drop_unlogged = 0;
    W.drop_logged_at = -1e9;
    int rc = pthread_create(&W.tid, NULL, writer_main, NULL);
    if (rc) {
        W.running = 0;
        W.inited = 0;
        W.st = NULL;
        pthread_mutex_unlock(&W.mu);
        sy_store_close(st);
        sy_error("spend writer: cannot start its thread");
        return -1;
    }
    pthread_mutex_unlock(&W.mu);
    return 0;
}

void sy_spend_stop(double timeout_s)
{
    pthread_mutex_lock(&W.mu);
    if (!W.inited || W.stopping) {
        pthread_mutex_unlock(&W.mu);
        return;
    }
    W.stopping = 1;
    W.stop_deadline = mono() + (timeout_s > 0 ? timeout_s : 0);
    pthread_cond_signal(&W.wake);
    pthread_mutex_unlock(&W.mu);
    pthread_join(W.tid, NULL);
    sy_store_close(W.st);
    pthread_mutex_lock(&W.mu);
    W.st = NULL;
    W.inited = 0;
    W.stopping = 0;
    if (W.drop_unlogged) {
        log_drops(W.drop_unlogged);
        W.drop_unlogged = 0;
    }
    pthread_mutex_unlock(&W.mu);
}

/* Backpressure. Rows come from every finished request; the writer drains them
 * at the database's pace (SQLite: ~25 us a row on a CPU it may share with the
 * workers). When requests come faster than that for long, the queue would reach
 * max_queue and rows would be dropped: instead, while the database answers and
 * the backlog - rows queued, plus calls admitted whose row is still to come -
 * is over half of max_queue, new calls wait before their upstream call (the
 * reserve stage, stages/budget.c) until it is back under, so intake follows
 * the writer and no row is lost, however many calls are in flight. A database that fails does not hold
 * requests (allow_requests_on_db_unavailable, the outage tests): its rows are
 * held up to max_queue, then dropped with a warning, as before. */
int sy_spend_backlogged(void)
{
    return atomic_load_explicit(&W.pending, memory_order_relaxed) +
                   atomic_load_explicit(&W.admitted, memory_order_relaxed) >
               W.conf.max_queue / 2 &&
           !atomic_load_explicit(&W.failing, memory_order_relaxed);
}

void sy_spend_admit(int delta)
{
    if (delta > 0)
        atomic_fetch_add_explicit(&W.admitted, (size_t)delta, memory_order_relaxed);
    else
        atomic_fetch_sub_explicit(&W.admitted, (size_t)-delta, memory_order_relaxed);
}

void sy_spend_stats(struct sy_spend_stats *out)
{
    pthread_mutex_lock(&W.mu);
    out->queued = W.queued;
    out->written = W.written;
    out->dropped = W.dropped;
    out->batches = W.batches;
    out->failures = W.failures;
    out->pending = W.nqueued + W.ninflight;
    pthread_mutex_unlock(&W.mu);
}

void sy_spend_flush(void)
{
    pthread_mutex_lock(&W.mu);
    if (!W.running) {
        pthread_mutex_unlock(&W.mu);
        return;
    }
    uint64_t want = ++W.flush_req;
    pthread_cond_signal(&W.wake);
    while (W.running && W.flush_done < want)
        pthread_cond_wait(&W.done, &W.mu);
    pthread_mutex_unlock(&W.mu);
}
