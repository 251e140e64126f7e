/* spend.c - LiteLLM's spend-reporting routes (spend_management_endpoints.py):
 * /spend/logs, /spend/logs/ui|v2, /spend/keys, /spend/users, /spend/tags,
 * /spend/calculate and the /global/spend* family.
 *
 * Every handler runs on a DB thread (admin.h) and reads "LiteLLM_SpendLogs"
 * (and the key / user / team tables) with SQL from the common subset of
 * store.h: no date functions. Dates come in as "YYYY-MM-DD" text and become
 * ISO-8601 bounds computed here; a day bucket is the first ten characters of
 * the timestamp's text form, SUBSTR(CAST("startTime" AS TEXT), 1, 10), which
 * is "YYYY-MM-DD" on both backends (PostgreSQL prints "2026-01-01 00:00:00",
 * SQLite holds "2026-01-01T00:00:00.000Z"). What LiteLLM does with jsonb
 * functions (request tags) or in Python (nesting, top-N) is done here in C
 * over grouped rows.
 *
 * LiteLLM reads several of these from views it creates at start
 * (db/create_views.py): "MonthlyGlobalSpend", "Last30dKeysBySpend",
 * "Last30dModelsBySpend", "MonthlyGlobalSpendPerKey", "DailyTagSpend". They
 * are computed directly from "LiteLLM_SpendLogs" here with the same
 * definitions, so a LiteLLM database without the views works too. "Last 30
 * days" is LiteLLM's CURRENT_DATE - INTERVAL '30 days': UTC midnight of today
 * minus 30 days.
 *
 * Date windows are LiteLLM's, quirks included:
 *   /spend/logs, /global/spend/report   startTime >= start 00:00 AND <= end 00:00
 *                                       (a row later on the end day is outside)
 *   /global/spend/tags                  whole days: start 00:00 <= t < end+1 00:00
 *   /spend/logs/ui, /spend/logs/v2      "YYYY-MM-DD HH:MM:SS" bounds, both inclusive
 *
 * Response shapes (Python dict order kept):
 *   GET /spend/logs?start_date&end_date  (summarize=true, the default)
 *     [{"users":{uid:$},"models":{model:$},"spend":$,"<api_key>":$,...,"startTime":"YYYY-MM-DD"},
 *      ... then every day after the last one with rows up to end_date:
 *      {"startTime":"YYYY-MM-DD","spend":0,"users":{},"models":{}}]
 *   GET /spend/logs (summarize=false)    [row, ...] newest first
 *   GET /spend/logs (no dates)           [row, ...]; ?request_id= -> [row] or [null]
 *   GET /spend/logs/ui|v2                {"data":[row..],"total","page","page_size","total_pages"}
 *   GET /global/spend                    {"spend":$|null,"max_budget":litellm.max_budget}
 *   GET /global/spend/logs               [{"date":"YYYY-MM-DD","spend":$[,"api_key"]}]
 *   GET /global/spend/keys               [{"api_key","key_alias","key_name","total_spend"}]
 *   GET /global/spend/teams              {"daily_spend":[{"date",alias:$..}],"teams":[..],
 *                                         "total_spend_per_team":[{"team_id","total_spend"}]}
 *   GET /global/spend/models             [{"model","total_spend"}]
 *   POST /global/spend/end_users         [{"end_user","total_count","total_spend"}]
 *   GET /global/spend/report             see report() below
 *   GET /spend/tags                      [{"individual_request_tag","log_count","total_spend"}]
 *   GET /global/spend/tags               {"spend_per_tag":[{"name","spend","log_count"}]}
 *   POST /spend/calculate                {"cost":$}
 */
#include <ctype.h>
#include <http_parser.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin.h"
#include "admin/admin_impl.h"
#include "config/config.h"
#include "router/table.h"
#include "spend/spend.h"
#include "store/store.h"
#include "tokenizer/tokenizer.h"

#define DAY     86400.0
#define SL      "\"LiteLLM_SpendLogs\""
#define DAYEXPR "SUBSTR(CAST(\"startTime\" AS TEXT), 1, 10)"

/* ---- small helpers ------------------------------------------------------- */

static void jstr(struct sy_buf *b, const char *s)
{
    sy_admin_jstr(b, s);
}

/* A cell as a JSON value (NULL-safe). */
static void jcell(struct sy_buf *b, const struct sy_srow *r, const char *name)
{
    sy_sval_json(b, sy_srow_get(r, name));
}

/* "YYYY-MM-DD" exactly (Python's strptime "%Y-%m-%d"); unix seconds or -1. */
static double parse_ymd(const char *s)
{
    if (!s || strlen(s) != 10)
        return -1;
    return sy_iso_parse(s);
}

/* "YYYY-MM-DD HH:MM:SS" (also accepts a 'T' and a bare date), UTC. */
static double parse_ymdhms(const char *s)
{
    if (!s || (strlen(s) != 19 && strlen(s) != 10))
        return -1;
    return sy_iso_parse(s);
}

static void iso(double t, char out[32])
{
    sy_iso_time(t, out);
}

static void day_text(double t, char out[11])
{
    char buf[32];
    sy_iso_time(t, buf);
    memcpy(out, buf, 10);
    out[10] = 0;
}

/* UTC midnight of the day holding t. */
static double midnight(double t)
{
    return floor(t / DAY) * DAY;
}

/* ISO text of LiteLLM's CURRENT_DATE - INTERVAL '30 days'. */
static void last30(const struct sy_admin_ctx *a, char out[32])
{
    iso(midnight(a->now) - 30 * DAY, out);
}

/* SQL with numbered parameters, built up clause by clause. */
struct q {
    struct sy_buf sql;
    struct sy_sval p[16];
    int n;
    int where; /* a WHERE was written */
};

static void q_init(struct q *q, const char *head)
{
    sy_buf_init(&q->sql, 1 << 16);
    sy_buf_puts(&q->sql, head);
    q->n = 0;
    q->where = 0;
}

/* Append " WHERE|AND " + fmt where fmt has one "%d" for the parameter number. */
static void q_and(struct q *q, const char *fmt, struct sy_sval v)
{
    if (q->n >= 16)
        return;
    sy_buf_puts(&q->sql, q->where ? " AND " : " WHERE ");
    q->where = 1;
    q->p[q->n] = v;
    q->n++;
    sy_buf_printf(&q->sql, fmt, q->n);
}

/* Append a condition without parameters. */
static void q_and_lit(struct q *q, const char *cond)
{
    sy_buf_puts(&q->sql, q->where ? " AND " : " WHERE ");
    q->where = 1;
    sy_buf_puts(&q->sql, cond);
}

static void q_free(struct q *q)
{
    sy_buf_free(&q->sql);
}

static int q_exec(struct sy_store *st, struct q *q, sy_srow_cb cb, void *ud)
{
    return sy_store_exec(st, q->sql.p, q->n, q->p, cb, ud);
}

/* Rows as a JSON array into a->out. 0 or a store error (written). */
static int rows_array(struct sy_store *st, struct sy_admin_ctx *a, struct q *q)
{
    size_t mark = a->out.len;
    struct sy_admin_rows rows = {&a->out, 0};
    SY_BUF_LIT(&a->out, "[");
    int rc = q_exec(st, q, sy_admin_rows_cb, &rows);
    if (rc < 0) {
        a->out.len = mark;
        if (a->out.p)
            a->out.p[mark] = 0;
        sy_admin_db_error(a, st, rc);
        return rc;
    }
    SY_BUF_LIT(&a->out, "]");
    return 0;
}

/* Key -> sum map (small: a linear scan; groups are few per bucket). */
struct agg {
    char *k;
    double v;
    int64_t n, n2;
    struct sy_buf sub; /* nested JSON collected for this key (reports) */
};
struct aggs {
    struct agg *a;
    size_t n, cap;
};

static struct agg *agg_get(struct aggs *m, const char *k)
{
    if (!k)
        k = "";
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->a[i].k, k) == 0)
            return &m->a[i];
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16;
        struct agg *na = realloc(m->a, cap * sizeof *na);
        if (!na)
            return NULL;
        m->a = na;
        m->cap = cap;
    }
    struct agg *e = &m->a[m->n++];
    memset(e, 0, sizeof *e);
    e->k = strdup(k);
    sy_buf_init(&e->sub, 64u << 20);
    return e;
}

static void aggs_clear(struct aggs *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->a[i].k);
        sy_buf_free(&m->a[i].sub);
    }
    m->n = 0;
}

static void aggs_free(struct aggs *m)
{
    aggs_clear(m);
    free(m->a);
    m->a = NULL;
    m->cap = 0;
}

static int agg_cmp_desc(const void *x, const void *y)
{
    const struct agg *a = x, *b = y;
    return a->v < b->v ? 1 : a->v > b->v ? -1 : 0;
}

/* {"k":v,...} */
static void aggs_obj(struct sy_buf *b, const struct aggs *m)
{
    SY_BUF_LIT(b, "{");
    for (size_t i = 0; i < m->n; i++) {
        if (i)
            SY_BUF_LIT(b, ",");
        jstr(b, m->a[i].k);
        SY_BUF_LIT(b, ":");
        sy_admin_jnum(b, m->a[i].v);
    }
    SY_BUF_LIT(b, "}");
}

/* A query parameter into a static-size buffer; NULL when absent. */
#define QP(name, buf) sy_admin_query(a, name, buf, sizeof buf)

/* The api_key filter as stored: a plaintext "sk-..." is hashed. */
static void key_filter(const char *in, char out[65])
{
    if (strncmp(in, "sk-", 3) == 0)
        sy_admin_token_of(in, out);
    else
        snprintf(out, 65, "%.64s", in);
}

/* ---- GET /spend/logs --------------------------------------------------- */

struct sum_ctx {
    struct sy_buf *b;
    char day[11];
    int any;
    double spend;
    struct aggs users, models, keys;
};

static void sum_flush(struct sum_ctx *s)
{
    if (!s->day[0])
        return;
    struct sy_buf *b = s->b;
    if (s->any)
        SY_BUF_LIT(b, ",");
    s->any = 1;
    SY_BUF_LIT(b, "{\"users\":");
    aggs_obj(b, &s->users);
    SY_BUF_LIT(b, ",\"models\":");
    aggs_obj(b, &s->models);
    SY_BUF_LIT(b, ",\"spend\":");
    sy_admin_jnum(b, s->spend);
    for (size_t i = 0; i < s->keys.n; i++) {
        /* LiteLLM writes each api_key beside "spend": result[date][api_key] */
        if (!strcmp(s->keys.a[i].k, "users") || !strcmp(s->keys.a[i].k, "models") || !strcmp(s->keys.a[i].k, "spend") ||
            !strcmp(s->keys.a[i].k, "startTime"))
            continue;
        SY_BUF_LIT(b, ",");
        jstr(b, s->keys.a[i].k);
        SY_BUF_LIT(b, ":");
        sy_admin_jnum(b, s->keys.a[i].v);
    }
    SY_BUF_LIT(b, ",\"startTime\":");
    jstr(b, s->day);
    SY_BUF_LIT(b, "}");
    aggs_clear(&s->users);
    aggs_clear(&s->models);
    aggs_clear(&s->keys);
    s->spend = 0;
}

static int sum_row(void *ud, const struct sy_srow *r)
{
    struct sum_ctx *s = ud;
    const char *day = sy_srow_text(r, "day");
    if (!day)
        return 0;
    if (strncmp(s->day, day, 10) != 0) {
        sum_flush(s);
        snprintf(s->day, sizeof s->day, "%.10s", day);
    }
    double v = sy_srow_num(r, "spend", 0);
    const char *user = sy_srow_text(r, "user");
    struct agg *e;
    s->spend += v;
    if ((e = agg_get(&s->keys, sy_srow_text(r, "api_key"))))
        e->v += v;
    if ((e = agg_get(&s->users, user ? user : "null")))
        e->v += v;
    if ((e = agg_get(&s->models, sy_srow_text(r, "model"))))
        e->v += v;
    return 0;
}

/* The user whose rows a non-admin caller may see (the gate lets only
 * internal users and their viewers, who have a user_id, call the scoped
 * routes; a key without one sees the rows of no user); NULL for admins and
 * proxy_admin_viewer. */
static const char *own(const struct sy_admin_ctx *a)
{
    if (a->is_admin || a->is_admin_viewer)
        return NULL;
    return a->caller_user_id ? a->caller_user_id : "";
}

static void spend_logs(struct sy_store *st, struct sy_admin_ctx *a)
{
    char api_key[512], request_id[512], user_id[512], start[64], end[64], summ[16];
    const char *k = QP("api_key", api_key), *rid = QP("request_id", request_id), *uid = QP("user_id", user_id);
    const char *sd = QP("start_date", start), *ed = QP("end_date", end);
    int summarize = 1;
    if (QP("summarize", summ) && sy_admin_query_bool(a, "summarize", &summarize) < 0)
        return;
    /* LiteLLM: an internal user only ever sees their own logs */
    if (own(a))
        uid = own(a), k = NULL, rid = NULL;
    char hashed[65] = "";
    if (k)
        key_filter(k, hashed);
    struct q q;
    if (sd && ed) {
        double t0 = parse_ymd(sd), t1 = parse_ymd(ed);
        if (t0 < 0 || t1 < 0) {
            sy_admin_error(a, 500, "internal_error", "None",
                           "/spend/logs Errortime data '%s' does not match format '%%Y-%%m-%%d'", t0 < 0 ? sd : ed);
            return;
        }
        char i0[32], i1[32];
        iso(t0, i0);
        iso(t1, i1);
        if (!summarize)
            q_init(&q, "SELECT * FROM " SL);
        else
            q_init(&q, "SELECT " DAYEXPR " AS day, api_key, \"user\", model, SUM(spend) AS spend FROM " SL);
        q_and(&q, "\"startTime\" >= $%d", sy_sv_ts(i0));
        q_and(&q, "\"startTime\" <= $%d", sy_sv_ts(i1));
        if (k)
            q_and(&q, "api_key = $%d", sy_sv_text(hashed));
        else if (rid)
            q_and(&q, "request_id = $%d", sy_sv_text(rid));
        else if (uid)
            q_and(&q, "\"user\" = $%d", sy_sv_text(uid));
        if (!summarize) {
            sy_buf_puts(&q.sql, " ORDER BY \"startTime\" DESC");
            rows_array(st, a, &q);
            q_free(&q);
            return;
        }
        sy_buf_puts(&q.sql, " GROUP BY " DAYEXPR ", api_key, \"user\", model ORDER BY 1");
        struct sum_ctx s;
        memset(&s, 0, sizeof s);
        struct sy_buf body;
        sy_buf_init(&body, 256u << 20);
        s.b = &body;
        SY_BUF_LIT(&body, "[");
        int rc = q_exec(st, &q, sum_row, &s);
        q_free(&q);
        if (rc < 0) {
            sy_admin_db_error(a, st, rc);
        } else {
            sum_flush(&s);
            if (s.any) { /* LiteLLM pads the days after the last one with rows */
                double d = sy_iso_parse(s.day) + DAY;
                for (; d <= t1 && d < t1 + DAY * 2; d += DAY) {
                    char dt[11];
                    day_text(d, dt);
                    sy_buf_printf(&body, ",{\"startTime\":\"%s\",\"spend\":0,\"users\":{},\"models\":{}}", dt);
                }
            }
            SY_BUF_LIT(&body, "]");
            sy_buf_append_buf(&a->out, &body);
        }
        sy_buf_free(&body);
        aggs_free(&s.users);
        aggs_free(&s.models);
        aggs_free(&s.keys);
        return;
    }
    q_init(&q, "SELECT * FROM " SL);
    if (k)
        q_and(&q, "api_key = $%d", sy_sv_text(hashed));
    else if (rid)
        q_and(&q, "request_id = $%d", sy_sv_text(rid));
    else if (uid)
        q_and(&q, "\"user\" = $%d", sy_sv_text(uid));
    sy_buf_puts(&q.sql, " ORDER BY \"startTime\" DESC");
    if (!k && rid) { /* find_unique: [row] or [null] */
        size_t mark = a->out.len;
        if (rows_array(st, a, &q) == 0 && a->out.len == mark + 2) {
            a->out.len = mark;
            SY_BUF_LIT(&a->out, "[null]");
        }
    } else {
        rows_array(st, a, &q);
    }
    q_free(&q);
}

/* ---- GET /spend/logs/ui, /spend/logs/v2 (paginated) ---------------------- */

static int count_cb(void *ud, const struct sy_srow *r)
{
    *(int64_t *)ud = r->ncols > 0 ? sy_srow_int(r, r->names[0], 0) : 0;
    return 1;
}

static void spend_logs_page(struct sy_store *st, struct sy_admin_ctx *a)
{
    char sd[64], ed[64], api_key[512], user_id[512], rid[512], team[512], status[64], model[512], eu[512], mins[64],
        maxs[64], order[16];
    if (!QP("start_date", sd) || !QP("end_date", ed)) {
        sy_admin_error(a, 400, "bad_request", "None", "Start date and end date are required");
        return;
    }
    double t0 = parse_ymdhms(sd), t1 = parse_ymdhms(ed);
    if (t0 < 0 || t1 < 0) {
        sy_admin_error(a, 500, "internal_error", "None",
                       "time data '%s' does not match format '%%Y-%%m-%%d %%H:%%M:%%S'", t0 < 0 ? sd : ed);
        return;
    }
    int64_t page = 1, size = 50;
    if (sy_admin_query_int(a, "page", &page) < 0 || sy_admin_query_int(a, "page_size", &size) < 0)
        return;
    if (page < 1 || size < 1 || size > 100) { /* FastAPI's Query(ge=1[, le=100]) */
        const char *f = page < 1 ? "page" : "page_size";
        long long v = page < 1 ? page : size;
        int le = page >= 1 && size > 100;
        a->status = 422;
        sy_buf_reset(&a->out);
        sy_buf_printf(&a->out,
                      "{\"detail\":[{\"type\":\"%s\",\"loc\":[\"query\",\"%s\"],\"msg\":\"Input should be %s %d\","
                      "\"input\":\"%lld\",\"ctx\":{\"%s\":%d}}]}",
                      le ? "less_than_equal" : "greater_than_equal", f,
                      le ? "less than or equal to" : "greater than or equal to", le ? 100 : 1, v, le ? "le" : "ge",
                      le ? 100 : 1);
        return;
    }
    char i0[32], i1[32], hashed[65];
    iso(t0, i0);
    iso(t1, i1);
    struct q q;
    q_init(&q, "");
    q_and(&q, "\"startTime\" >= $%d", sy_sv_ts(i0));
    q_and(&q, "\"startTime\" <= $%d", sy_sv_ts(i1));
    if (QP("team_id", team))
        q_and(&q, "team_id = $%d", sy_sv_text(team));
    if (QP("status_filter", status)) {
        if (strcmp(status, "success") == 0)
            q_and_lit(&q, "(status = 'success' OR status IS NULL)");
        else
            q_and(&q, "status = $%d", sy_sv_text(status));
    }
    if (QP("api_key", api_key)) {
        key_filter(api_key, hashed);
        q_and(&q, "api_key = $%d", sy_sv_text(hashed));
    }
    const char *uid = QP("user_id", user_id);
    if (own(a))
        uid = own(a);
    if (uid)
        q_and(&q, "\"user\" = $%d", sy_sv_text(uid));
    if (QP("request_id", rid))
        q_and(&q, "request_id = $%d", sy_sv_text(rid));
    if (QP("model", model))
        q_and(&q, "model = $%d", sy_sv_text(model));
    char alias[512]; /* LiteLLM's key_alias filter: the keys with that alias */
    if (QP("key_alias", alias))
        q_and(&q, "api_key IN (SELECT token FROM \"LiteLLM_VerificationToken\" WHERE key_alias = $%d)",
              sy_sv_text(alias));
    if (QP("end_user", eu))
        q_and(&q, "end_user = $%d", sy_sv_text(eu));
    if (QP("min_spend", mins))
        q_and(&q, "spend >= $%d", sy_sv_num(strtod(mins, NULL)));
    if (QP("max_spend", maxs))
        q_and(&q, "spend <= $%d", sy_sv_num(strtod(maxs, NULL)));
    struct q cq;
    q_init(&cq, "SELECT COUNT(*) AS n FROM " SL);
    sy_buf_append(&cq.sql, q.sql.p, q.sql.len);
    memcpy(cq.p, q.p, sizeof q.p);
    cq.n = q.n;
    int64_t total = 0;
    int rc = q_exec(st, &cq, count_cb, &total);
    q_free(&cq);
    if (rc < 0) {
        q_free(&q);
        sy_admin_db_error(a, st, rc);
        return;
    }
    struct q dq;
    q_init(&dq, "SELECT * FROM " SL);
    sy_buf_append(&dq.sql, q.sql.p, q.sql.len);
    memcpy(dq.p, q.p, sizeof q.p);
    dq.n = q.n;
    int asc = QP("sort_order", order) && strcmp(order, "asc") == 0;
    sy_buf_printf(&dq.sql, " ORDER BY \"startTime\" %s LIMIT %lld OFFSET %lld", asc ? "ASC" : "DESC", (long long)size,
                  (long long)(sy_admin_page_offset(page, size)));
    q_free(&q);
    SY_BUF_LIT(&a->out, "{\"data\":");
    size_t mark = a->out.len;
    struct sy_admin_rows rows = {&a->out, 0};
    SY_BUF_LIT(&a->out, "[");
    rc = q_exec(st, &dq, sy_admin_rows_cb, &rows);
    q_free(&dq);
    if (rc < 0) {
        a->out.len = 0;
        (void)mark;
        sy_admin_db_error(a, st, rc);
        return;
    }
    sy_buf_printf(&a->out, "],\"total\":%lld,\"page\":%lld,\"page_size\":%lld,\"total_pages\":%lld}", (long long)total,
                  (long long)page, (long long)size, (long long)((total + size - 1) / size));
}

/* ---- GET /spend/keys, /spend/users ---------------------------------------- */

static void spend_keys(struct sy_store *st, struct sy_admin_ctx *a)
{
    int64_t limit = 0;
    if (sy_admin_query_int(a, "limit", &limit) < 0)
        return;
    struct q q;
    q_init(&q, "SELECT * FROM \"LiteLLM_VerificationToken\"");
    if (own(a))
        q_and(&q, "user_id = $%d", sy_sv_text(own(a)));
    sy_buf_puts(&q.sql, " ORDER BY spend DESC");
    if (limit > 0)
        sy_buf_printf(&q.sql, " LIMIT %lld", (long long)limit);
    rows_array(st, a, &q);
    q_free(&q);
}

/* A user row without its password hash. */
static int user_row(void *ud, const struct sy_srow *r)
{
    struct sy_admin_rows *rows = ud;
    struct sy_buf *b = rows->b;
    if (rows->n++)
        SY_BUF_LIT(b, ",");
    SY_BUF_LIT(b, "{");
    int first = 1;
    for (int i = 0; i < r->ncols; i++) {
        if (strcmp(r->names[i], "password") == 0)
            continue;
        sy_admin_jkey(b, &first, r->names[i]);
        sy_sval_json(b, &r->v[i]);
    }
    SY_BUF_LIT(b, "}");
    return 0;
}

static void spend_users(struct sy_store *st, struct sy_admin_ctx *a)
{
    char uid[512];
    struct q q;
    q_init(&q, "SELECT * FROM \"LiteLLM_UserTable\"");
    int one = QP("user_id", uid) != NULL;
    if (own(a)) { /* an internal user sees its own row only */
        snprintf(uid, sizeof uid, "%s", own(a));
        one = 1;
    }
    if (one)
        q_and(&q, "user_id = $%d", sy_sv_text(uid));
    sy_buf_puts(&q.sql, " ORDER BY spend DESC");
    size_t mark = a->out.len;
    struct sy_admin_rows rows = {&a->out, 0};
    SY_BUF_LIT(&a->out, "[");
    int rc = q_exec(st, &q, user_row, &rows);
    q_free(&q);
    if (rc < 0) {
        a->out.len = mark;
        sy_admin_db_error(a, st, rc);
        return;
    }
    if (one && rows.n == 0)
        SY_BUF_LIT(&a->out, "null");
    SY_BUF_LIT(&a->out, "]");
}

/* ---- tags ---------------------------------------------------------------- */

/* Each row's request_tags (a JSON array) counted into the map. */
static int tag_row(void *ud, const struct sy_srow *r)
{
    struct aggs *m = ud;
    const char *t = sy_srow_text(r, "request_tags");
    if (!t || !*t)
        return 0;
    json_object *o = json_tokener_parse(t);
    if (o && json_object_is_type(o, json_type_array)) {
        double v = sy_srow_num(r, "spend", 0);
        for (size_t i = 0, n = json_object_array_length(o); i < n; i++) {
            json_object *e = json_object_array_get_idx(o, i);
            struct agg *g;
            if (json_object_is_type(e, json_type_string) && (g = agg_get(m, json_object_get_string(e)))) {
                g->v += v;
                g->n++;
            }
        }
    }
    json_object_put(o);
    return 0;
}

static int tags_collect(struct sy_store *st, struct sy_admin_ctx *a, const char *i0, const char *i1, struct aggs *m)
{
    struct q q;
    q_init(&q, "SELECT request_tags, spend FROM " SL);
    if (own(a))
        q_and(&q, "\"user\" = $%d", sy_sv_text(own(a)));
    if (i0)
        q_and(&q, "\"startTime\" >= $%d", sy_sv_ts(i0));
    if (i1)
        q_and(&q, "\"startTime\" < $%d", sy_sv_ts(i1));
    q_and_lit(&q, "request_tags IS NOT NULL");
    int rc = q_exec(st, &q, tag_row, m);
    q_free(&q);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        return rc;
    }
    return 0;
}

/* GET /spend/tags: every tag ever, dates ignored (as LiteLLM's get_spend_by_tags). */
static void spend_tags(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct aggs m = {0};
    if (tags_collect(st, a, NULL, NULL, &m) == 0) {
        SY_BUF_LIT(&a->out, "[");
        for (size_t i = 0; i < m.n; i++) {
            if (i)
                SY_BUF_LIT(&a->out, ",");
            SY_BUF_LIT(&a->out, "{\"individual_request_tag\":");
            jstr(&a->out, m.a[i].k);
            sy_buf_printf(&a->out, ",\"log_count\":%lld,\"total_spend\":", (long long)m.a[i].n);
            sy_admin_jnum(&a->out, m.a[i].v);
            SY_BUF_LIT(&a->out, "}");
        }
        SY_BUF_LIT(&a->out, "]");
    }
    aggs_free(&m);
}

/* GET /global/spend/tags?start_date&end_date[&tags=a,b|all-tags] */
static void global_spend_tags(struct sy_store *st, struct sy_admin_ctx *a)
{
    char sd[64], ed[64], tags[4096];
    if (!QP("start_date", sd) || !QP("end_date", ed)) {
        sy_admin_error(a, 400, "bad_request", "None", "Please provide start_date and end_date");
        return;
    }
    double t0 = parse_ymd(sd), t1 = parse_ymd(ed);
    if (t0 < 0 || t1 < 0) {
        sy_admin_error(a, 500, "internal_error", "None", "/spend/tags Errorinvalid date '%s'", t0 < 0 ? sd : ed);
        return;
    }
    char i0[32], i1[32];
    iso(t0, i0);
    iso(t1 + DAY, i1);
    const char *want = QP("tags", tags);
    if (want && (!*want || strstr(want, "all-tags")))
        want = NULL;
    struct aggs m = {0};
    if (tags_collect(st, a, i0, i1, &m) == 0) {
        if (m.n > 1)
            qsort(m.a, m.n, sizeof *m.a, agg_cmp_desc);
        SY_BUF_LIT(&a->out, "{\"spend_per_tag\":[");
        int n = 0;
        for (size_t i = 0; i < m.n; i++) {
            if (want) { /* comma-separated list: exact names */
                int hit = 0;
                size_t kl = strlen(m.a[i].k);
                for (const char *p = want; *p && !hit;) {
                    const char *c = strchr(p, ',');
                    size_t l = c ? (size_t)(c - p) : strlen(p);
                    hit = l == kl && memcmp(p, m.a[i].k, l) == 0;
                    p += l + (c ? 1 : 0);
                }
                if (!hit)
                    continue;
            }
            if (n++)
                SY_BUF_LIT(&a->out, ",");
            SY_BUF_LIT(&a->out, "{\"name\":");
            jstr(&a->out, m.a[i].k);
            SY_BUF_LIT(&a->out, ",\"spend\":");
            sy_admin_jnum(&a->out, round(m.a[i].v * 1e4) / 1e4);
            sy_buf_printf(&a->out, ",\"log_count\":%lld}", (long long)m.a[i].n);
        }
        SY_BUF_LIT(&a->out, "]}");
    }
    aggs_free(&m);
}

/* GET /global/spend/all_tag_names */
static void all_tag_names(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct aggs m = {0};
    if (tags_collect(st, a, NULL, NULL, &m) == 0) {
        SY_BUF_LIT(&a->out, "{\"tag_names\":[");
        for (size_t i = 0; i < m.n; i++) {
            if (i)
                SY_BUF_LIT(&a->out, ",");
            jstr(&a->out, m.a[i].k);
        }
        SY_BUF_LIT(&a->out, "]}");
    }
    aggs_free(&m);
}

/* ---- /global/spend ------------------------------------------------------- */

struct one_num {
    int found, null;
    double v;
};

static int one_num_cb(void *ud, const struct sy_srow *r)
{
    struct one_num *o = ud;
    o->found = 1;
    const struct sy_sval *v = r->ncols ? &r->v[0] : NULL;
    o->null = !v || v->k == SY_SV_NULL;
    o->v = r->ncols ? sy_srow_num(r, r->names[0], 0) : 0;
    return 1;
}

/* litellm_settings.max_budget (a global budget) is not supported: LiteLLM's
 * default, 0.0, is what /global/spend reports. */
static double global_max_budget(const struct sy_admin_ctx *a)
{
    (void)a;
    return 0.0;
}

static void global_spend(struct sy_store *st, struct sy_admin_ctx *a)
{
    char since[32];
    last30(a, since);
    struct sy_sval p[1] = {sy_sv_ts(since)};
    struct one_num o = {0};
    int rc = sy_store_exec(st, "SELECT SUM(spend) AS total_spend FROM " SL " WHERE \"startTime\" >= $1", 1, p,
                           one_num_cb, &o);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        return;
    }
    SY_BUF_LIT(&a->out, "{\"spend\":");
    if (!o.found || o.null)
        SY_BUF_LIT(&a->out, "null");
    else
        sy_admin_jnum(&a->out, o.v);
    SY_BUF_LIT(&a->out, ",\"max_budget\":");
    sy_admin_jnum(&a->out, global_max_budget(a));
    SY_BUF_LIT(&a->out, "}");
}

/* GET /global/spend/logs[?api_key=]: spend per day over the last 30 days. */
static int daily_row(void *ud, const struct sy_srow *r)
{
    struct sy_admin_rows *rows = ud;
    struct sy_buf *b = rows->b;
    if (rows->n++)
        SY_BUF_LIT(b, ",");
    SY_BUF_LIT(b, "{\"date\":");
    jcell(b, r, "date");
    SY_BUF_LIT(b, ",\"spend\":");
    sy_admin_jnum(b, sy_srow_num(r, "spend", 0));
    if (sy_srow_get(r, "api_key")) {
        SY_BUF_LIT(b, ",\"api_key\":");
        jcell(b, r, "api_key");
    }
    SY_BUF_LIT(b, "}");
    return 0;
}

static void global_spend_logs(struct sy_store *st, struct sy_admin_ctx *a)
{
    char key[512], since[32];
    last30(a, since);
    const char *k = QP("api_key", key);
    struct q q;
    if (k)
        q_init(&q, "SELECT " DAYEXPR " AS date, SUM(spend) AS spend, api_key FROM " SL);
    else
        q_init(&q, "SELECT " DAYEXPR " AS date, SUM(spend) AS spend FROM " SL);
    q_and(&q, "\"startTime\" >= $%d", sy_sv_ts(since));
    if (k)
        q_and(&q, "api_key = $%d", sy_sv_text(k));
    if (!a->is_admin && !a->is_admin_viewer && a->caller_user_id)
        q_and(&q, "\"user\" = $%d", sy_sv_text(a->caller_user_id));
    sy_buf_puts(&q.sql, k ? " GROUP BY " DAYEXPR ", api_key ORDER BY 1" : " GROUP BY " DAYEXPR " ORDER BY 1");
    struct sy_admin_rows rows = {&a->out, 0};
    SY_BUF_LIT(&a->out, "[");
    int rc = q_exec(st, &q, daily_row, &rows);
    q_free(&q);
    if (rc < 0) {
        a->out.len = 0;
        sy_admin_db_error(a, st, rc);
        return;
    }
    SY_BUF_LIT(&a->out, "]");
}

/* GET /global/spend/keys[?limit=n]: "Last30dKeysBySpend". */
static void global_spend_keys(struct sy_store *st, struct sy_admin_ctx *a)
{
    char lim[64], since[32];
    last30(a, since);
    int64_t limit = 0;
    if (QP("limit", lim)) {
        char *e;
        long long v = strtoll(lim, &e, 10);
        if (*e || e == lim || v < 1) {
            a->status = 422;
            sy_buf_reset(&a->out);
            sy_buf_printf(&a->out,
                          "{\"detail\":{\"error\":\"Invalid limit: %lld, error: Limit must be greater than 0\"}}", v);
            return;
        }
        limit = v;
    }
    struct q q;
    q_init(&q, "SELECT L.api_key, V.key_alias, V.key_name, SUM(L.spend) AS total_spend FROM " SL
               " L LEFT JOIN \"LiteLLM_VerificationToken\" V ON L.api_key = V.token");
    q_and(&q, "L.\"startTime\" >= $%d", sy_sv_ts(since));
    if (!a->is_admin && !a->is_admin_viewer && a->caller_user_id)
        q_and(&q, "L.\"user\" = $%d", sy_sv_text(a->caller_user_id));
    sy_buf_puts(&q.sql, " GROUP BY L.api_key, V.key_alias, V.key_name ORDER BY total_spend DESC");
    if (limit > 0)
        sy_buf_printf(&q.sql, " LIMIT %lld", (long long)limit);
    rows_array(st, a, &q);
    q_free(&q);
}

/* GET /global/spend/models[?limit=10]: "Last30dModelsBySpend". */
static void global_spend_models(struct sy_store *st, struct sy_admin_ctx *a)
{
    char since[32];
    last30(a, since);
    int64_t limit = 10;
    if (sy_admin_query_int(a, "limit", &limit) < 0)
        return;
    struct q q;
    q_init(&q, "SELECT model, SUM(spend) AS total_spend FROM " SL);
    q_and(&q, "\"startTime\" >= $%d", sy_sv_ts(since));
    q_and_lit(&q, "model <> ''");
    if (!a->is_admin && !a->is_admin_viewer && a->caller_user_id)
        q_and(&q, "\"user\" = $%d", sy_sv_text(a->caller_user_id));
    sy_buf_printf(&q.sql, " GROUP BY model ORDER BY total_spend DESC LIMIT %lld", (long long)(limit > 0 ? limit : 0));
    rows_array(st, a, &q);
    q_free(&q);
}

/* GET /global/spend/teams: daily spend per team alias over the last 30 days. */
struct teams_ctx {
    struct sy_buf daily; /* "daily_spend" items */
    char day[11];
    int ndays, inday;
    struct aggs teams; /* alias -> total */
};

static int teams_row(void *ud, const struct sy_srow *r)
{
    struct teams_ctx *t = ud;
    const char *day = sy_srow_text(r, "spend_date");
    const char *alias = sy_srow_text(r, "team_alias");
    if (!day)
        return 0;
    if (!alias)
        alias = "Unassigned";
    double v = round(sy_srow_num(r, "total_spend", 0) * 100) / 100;
    if (strncmp(t->day, day, 10) != 0) {
        if (t->ndays)
            SY_BUF_LIT(&t->daily, "},");
        snprintf(t->day, sizeof t->day, "%.10s", day);
        sy_buf_printf(&t->daily, "{\"date\":\"%s\"", t->day);
        t->ndays++;
    }
    SY_BUF_LIT(&t->daily, ",");
    jstr(&t->daily, alias);
    SY_BUF_LIT(&t->daily, ":");
    sy_admin_jnum(&t->daily, v);
    struct agg *e = agg_get(&t->teams, alias);
    if (e)
        e->v += v;
    return 0;
}

static void global_spend_teams(struct sy_store *st, struct sy_admin_ctx *a)
{
    char since[32];
    last30(a, since);
    struct sy_sval p[1] = {sy_sv_ts(since)};
    struct teams_ctx t;
    memset(&t, 0, sizeof t);
    sy_buf_init(&t.daily, 64u << 20);
    int rc =
        sy_store_exec(st,
                      "SELECT t.team_alias AS team_alias, SUBSTR(CAST(s.\"startTime\" AS TEXT), 1, 10) AS spend_date,"
                      " SUM(s.spend) AS total_spend FROM " SL " s LEFT JOIN \"LiteLLM_TeamTable\" t"
                      " ON s.team_id = t.team_id WHERE s.\"startTime\" >= $1"
                      " GROUP BY t.team_alias, SUBSTR(CAST(s.\"startTime\" AS TEXT), 1, 10) ORDER BY 2",
                      1, p, teams_row, &t);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
    } else {
        SY_BUF_LIT(&a->out, "{\"daily_spend\":[");
        if (t.ndays) {
            sy_buf_append(&a->out, t.daily.p, t.daily.len);
            SY_BUF_LIT(&a->out, "}");
        }
        SY_BUF_LIT(&a->out, "],\"teams\":[");
        for (size_t i = 0; i < t.teams.n; i++) {
            if (i)
                SY_BUF_LIT(&a->out, ",");
            jstr(&a->out, t.teams.a[i].k);
        }
        SY_BUF_LIT(&a->out, "],\"total_spend_per_team\":[");
        if (t.teams.n > 1)
            qsort(t.teams.a, t.teams.n, sizeof *t.teams.a, agg_cmp_desc);
        for (size_t i = 0; i < t.teams.n && i < 10; i++) {
            if (i)
                SY_BUF_LIT(&a->out, ",");
            SY_BUF_LIT(&a->out, "{\"team_id\":");
            jstr(&a->out, t.teams.a[i].k);
            SY_BUF_LIT(&a->out, ",\"total_spend\":");
            sy_admin_jnum(&a->out, t.teams.a[i].v);
            SY_BUF_LIT(&a->out, "}");
        }
        SY_BUF_LIT(&a->out, "]}");
    }
    sy_buf_free(&t.daily);
    aggs_free(&t.teams);
}

/* POST /global/spend/end_users {"api_key","startTime","endTime"}: top 100
 * end users by spend (default window: the last 30 days up to now). */
static void global_spend_end_users(struct sy_store *st, struct sy_admin_ctx *a)
{
    json_object *body = sy_admin_body(a);
    if (!body)
        return;
    const char *key = NULL, *ts0 = NULL, *ts1 = NULL;
    if (sy_admin_get_str(a, body, "api_key", &key) < 0 || sy_admin_get_str(a, body, "startTime", &ts0) < 0 ||
        sy_admin_get_str(a, body, "endTime", &ts1) < 0) {
        json_object_put(body);
        return;
    }
    double t0 = ts0 ? sy_iso_parse(ts0) : a->now - 30 * DAY, t1 = ts1 ? sy_iso_parse(ts1) : a->now;
    if ((ts0 && t0 < 0) || (ts1 && t1 < 0)) {
        sy_admin_422(a, ts0 && t0 < 0 ? "startTime" : "endTime", "datetime_from_date_parsing",
                     "Input should be a valid datetime or date",
                     json_object_object_get(body, ts0 && t0 < 0 ? "startTime" : "endTime"));
        json_object_put(body);
        return;
    }
    char i0[32], i1[32];
    iso(t0, i0);
    iso(t1, i1);
    struct q q;
    q_init(&q, "SELECT end_user, COUNT(*) AS total_count, SUM(spend) AS total_spend FROM " SL);
    q_and(&q, "\"startTime\" >= $%d", sy_sv_ts(i0));
    q_and(&q, "\"startTime\" < $%d", sy_sv_ts(i1));
    if (key)
        q_and(&q, "api_key = $%d", sy_sv_text(key));
    sy_buf_puts(&q.sql, " GROUP BY end_user ORDER BY total_spend DESC LIMIT 100");
    rows_array(st, a, &q);
    q_free(&q);
    json_object_put(body);
}

/* GET /global/all_end_users -> {"end_users":[...]} */
static int end_user_row(void *ud, const struct sy_srow *r)
{
    struct sy_admin_rows *rows = ud;
    if (rows->n++)
        SY_BUF_LIT(rows->b, ",");
    jcell(rows->b, r, "end_user");
    return 0;
}

static void all_end_users(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct sy_admin_rows rows = {&a->out, 0};
    SY_BUF_LIT(&a->out, "{\"end_users\":[");
    int rc = sy_store_exec(st, "SELECT DISTINCT end_user FROM " SL, 0, NULL, end_user_row, &rows);
    if (rc < 0) {
        a->out.len = 0;
        sy_admin_db_error(a, st, rc);
        return;
    }
    SY_BUF_LIT(&a->out, "]}");
}

/* ---- GET /global/spend/report ---------------------------------------------
 * group_by=team (default) / customer:
 *   [{"group_by_day":"YYYY-MM-DDT00:00:00+00:00",
 *     "teams"|"customers":[{"metadata":[{"model","spend","api_key","total_tokens"}],
 *                           "team_name"|"customer":..., "total_spend":$}]}]
 * group_by=api_key, or ?api_key= / ?internal_user_id=:
 *   [{"api_key","total_cost","total_input_tokens","total_output_tokens",
 *     "model_details":[{"model","total_cost","total_input_tokens","total_output_tokens"}]}]
 * (members in jsonb's key order, as PostgreSQL's jsonb_build_object returns them) */

struct rep_ctx {
    struct sy_buf *b;
    const char *who; /* "team_name" / "customer" */
    char day[11];
    int ndays;
    struct aggs groups; /* per day: name -> total, sub = metadata items */
};

static void rep_flush_day(struct rep_ctx *c)
{
    if (!c->day[0])
        return;
    struct sy_buf *b = c->b;
    if (c->ndays++)
        SY_BUF_LIT(b, ",");
    sy_buf_printf(b, "{\"group_by_day\":\"%sT00:00:00+00:00\",\"%s\":[", c->day,
                  strcmp(c->who, "customer") == 0 ? "customers" : "teams");
    for (size_t i = 0; i < c->groups.n; i++) {
        struct agg *g = &c->groups.a[i];
        if (i)
            SY_BUF_LIT(b, ",");
        SY_BUF_LIT(b, "{\"metadata\":[");
        sy_buf_append(b, g->sub.p ? g->sub.p : "", g->sub.len);
        sy_buf_printf(b, "],\"%s\":", c->who);
        if (g->n2) /* NULL customer */
            SY_BUF_LIT(b, "null");
        else
            jstr(b, g->k);
        SY_BUF_LIT(b, ",\"total_spend\":");
        sy_admin_jnum(b, g->v);
        SY_BUF_LIT(b, "}");
    }
    SY_BUF_LIT(b, "]}");
    aggs_clear(&c->groups);
}

static int rep_row(void *ud, const struct sy_srow *r)
{
    struct rep_ctx *c = ud;
    const char *day = sy_srow_text(r, "day");
    if (!day)
        return 0;
    if (strncmp(c->day, day, 10) != 0) {
        rep_flush_day(c);
        snprintf(c->day, sizeof c->day, "%.10s", day);
    }
    const char *name = sy_srow_text(r, "grp");
    struct agg *g = agg_get(&c->groups, name ? name : "\x01null");
    if (!g)
        return 0;
    g->n2 = name == NULL;
    double v = sy_srow_num(r, "spend", 0);
    g->v += v;
    if (g->n++)
        SY_BUF_LIT(&g->sub, ",");
    SY_BUF_LIT(&g->sub, "{\"model\":");
    jcell(&g->sub, r, "model");
    SY_BUF_LIT(&g->sub, ",\"spend\":");
    sy_admin_jnum(&g->sub, v);
    SY_BUF_LIT(&g->sub, ",\"api_key\":");
    jcell(&g->sub, r, "api_key");
    sy_buf_printf(&g->sub, ",\"total_tokens\":%lld}", (long long)sy_srow_int(r, "tokens", 0));
    return 0;
}

/* api_key grouping: rows (api_key, model, cost, in, out) -> per key. */
static int repk_row(void *ud, const struct sy_srow *r)
{
    struct aggs *m = ud;
    const char *k = sy_srow_text(r, "api_key");
    struct agg *g = agg_get(m, k ? k : "");
    if (!g)
        return 0;
    double v = sy_srow_num(r, "cost", 0);
    int64_t in = sy_srow_int(r, "tin", 0), out = sy_srow_int(r, "tout", 0);
    g->v += v;
    g->n += in;
    g->n2 += out;
    if (g->sub.len)
        SY_BUF_LIT(&g->sub, ",");
    SY_BUF_LIT(&g->sub, "{\"model\":");
    jcell(&g->sub, r, "model");
    SY_BUF_LIT(&g->sub, ",\"total_cost\":");
    sy_admin_jnum(&g->sub, v);
    sy_buf_printf(&g->sub, ",\"total_input_tokens\":%lld,\"total_output_tokens\":%lld}", (long long)in, (long long)out);
    return 0;
}

static void report(struct sy_store *st, struct sy_admin_ctx *a)
{
    char sd[64], ed[64], gb[32], key[512], iuid[512], team[512], cust[512];
    if (!QP("start_date", sd) || !QP("end_date", ed)) {
        a->status = 400;
        sy_buf_reset(&a->out);
        SY_BUF_LIT(&a->out, "{\"detail\":{\"error\":\"Please provide start_date and end_date\"}}");
        return;
    }
    double t0 = parse_ymd(sd), t1 = parse_ymd(ed);
    if (t0 < 0 || t1 < 0) {
        a->status = 400;
        sy_buf_reset(&a->out);
        SY_BUF_LIT(&a->out, "{\"detail\":{\"error\":\"");
        sy_buf_printf(&a->out, "time data '%s' does not match format '%%Y-%%m-%%d'\"}}", t0 < 0 ? sd : ed);
        return;
    }
    const char *group = QP("group_by", gb);
    if (!group)
        group = "team";
    if (strcmp(group, "team") && strcmp(group, "customer") && strcmp(group, "api_key")) {
        sy_admin_422(a, "group_by", "literal_error", "Input should be 'team', 'customer' or 'api_key'", NULL);
        return;
    }
    const char *k = QP("api_key", key), *uid = QP("internal_user_id", iuid);
    if (QP("team_id", team) && QP("customer_id", cust)) {
        sy_admin_error(a, 400, "None", "None", "/global/spend/report: team_id with customer_id is not supported");
        return;
    }
    char i0[32], i1[32], hashed[65];
    iso(t0, i0);
    iso(t1, i1);
    struct q q;
    int rc;
    if (k || uid || strcmp(group, "api_key") == 0) {
        q_init(&q, "SELECT api_key, model, SUM(spend) AS cost, SUM(prompt_tokens) AS tin,"
                   " SUM(completion_tokens) AS tout FROM " SL);
        q_and(&q, "\"startTime\" >= $%d", sy_sv_ts(i0));
        q_and(&q, "\"startTime\" <= $%d", sy_sv_ts(i1));
        if (k) {
            key_filter(k, hashed);
            q_and(&q, "api_key = $%d", sy_sv_text(hashed));
        } else if (uid) {
            q_and(&q, "\"user\" = $%d", sy_sv_text(uid));
        }
        sy_buf_puts(&q.sql, " GROUP BY api_key, model ORDER BY api_key, model");
        struct aggs m = {0};
        rc = q_exec(st, &q, repk_row, &m);
        q_free(&q);
        if (rc < 0) {
            sy_admin_db_error(a, st, rc);
        } else {
            if (m.n > 1)
                qsort(m.a, m.n, sizeof *m.a, agg_cmp_desc);
            SY_BUF_LIT(&a->out, "[");
            for (size_t i = 0; i < m.n; i++) {
                if (i)
                    SY_BUF_LIT(&a->out, ",");
                SY_BUF_LIT(&a->out, "{\"api_key\":");
                jstr(&a->out, m.a[i].k);
                SY_BUF_LIT(&a->out, ",\"total_cost\":");
                sy_admin_jnum(&a->out, m.a[i].v);
                sy_buf_printf(&a->out, ",\"total_input_tokens\":%lld,\"total_output_tokens\":%lld,\"model_details\":[",
                              (long long)m.a[i].n, (long long)m.a[i].n2);
                sy_buf_append(&a->out, m.a[i].sub.p ? m.a[i].sub.p : "", m.a[i].sub.len);
                SY_BUF_LIT(&a->out, "]}");
            }
            SY_BUF_LIT(&a->out, "]");
        }
        aggs_free(&m);
        return;
    }
    int team_mode = strcmp(group, "team") == 0;
    if (team_mode)
        q_init(&q, "SELECT SUBSTR(CAST(sl.\"startTime\" AS TEXT), 1, 10) AS day,"
                   " COALESCE(tt.team_alias, 'Unassigned Team') AS grp, sl.model AS model, sl.api_key AS api_key,"
                   " SUM(sl.spend) AS spend, SUM(sl.total_tokens) AS tokens FROM " SL
                   " sl LEFT JOIN \"LiteLLM_TeamTable\" tt ON sl.team_id = tt.team_id");
    else
        q_init(&q, "SELECT SUBSTR(CAST(sl.\"startTime\" AS TEXT), 1, 10) AS day, sl.end_user AS grp,"
                   " sl.model AS model, sl.api_key AS api_key, SUM(sl.spend) AS spend,"
                   " SUM(sl.total_tokens) AS tokens FROM " SL " sl");
    q_and(&q, "sl.\"startTime\" >= $%d", sy_sv_ts(i0));
    q_and(&q, "sl.\"startTime\" <= $%d", sy_sv_ts(i1));
    sy_buf_printf(&q.sql,
                  " GROUP BY SUBSTR(CAST(sl.\"startTime\" AS TEXT), 1, 10), %s, sl.model, sl.api_key"
                  " ORDER BY 1, 2, 3, 4",
                  team_mode ? "tt.team_alias" : "sl.end_user");
    struct rep_ctx c;
    memset(&c, 0, sizeof c);
    struct sy_buf body;
    sy_buf_init(&body, 256u << 20);
    c.b = &body;
    c.who = team_mode ? "team_name" : "customer";
    SY_BUF_LIT(&body, "[");
    rc = q_exec(st, &q, rep_row, &c);
    q_free(&q);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
    } else {
        rep_flush_day(&c);
        SY_BUF_LIT(&body, "]");
        sy_buf_append_buf(&a->out, &body);
    }
    aggs_free(&c.groups);
    sy_buf_free(&body);
}

/* ---- POST /global/spend/reset -------------------------------------------- */

static void global_spend_reset(struct sy_store *st, struct sy_admin_ctx *a)
{
    int rc = sy_store_exec(st, "UPDATE \"LiteLLM_VerificationToken\" SET spend = 0.0", 0, NULL, NULL, NULL);
    if (rc >= 0)
        rc = sy_store_exec(st, "UPDATE \"LiteLLM_TeamTable\" SET spend = 0.0", 0, NULL, NULL, NULL);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        return;
    }
    sy_admin_invalidate(a, "all", NULL);
    SY_BUF_LIT(&a->out, "{\"message\":\"Spend for all API Keys and Teams reset successfully\",\"status\":\"success\"}");
}

/* ---- POST /spend/calculate --------------------------------------------------
 * {"model","messages"}: the prompt's tokens (our tokenizer, LiteLLM's
 * token_counter rules) at the model's input price; the deployment's
 * input/output_cost_per_token win when the model is a configured group
 * (LiteLLM takes the last deployment of that name). {"completion_response":
 * {"model","usage":{...}}}: the usage at the response model's prices. */

/* The model a name resolves to: the configured group's last deployment, or NULL. */
static const struct sy_deployment *calc_deployment(const struct sy_admin_ctx *a, const char *name)
{
    const struct sy_table *g = a->table;
    if (!g || !name)
        return NULL;
    for (size_t i = 0; i < g->naliases; i++)
        if (strcmp(g->aliases[i].alias, name) == 0) {
            name = g->aliases[i].group;
            break;
        }
    const struct sy_deployment *hit = NULL;
    for (size_t i = 0; i < g->ndrts; i++)
        if (g->drts[i].d->model_name && strcmp(g->drts[i].d->model_name, name) == 0)
            hit = g->drts[i].d;
    return hit;
}

static void dep_price(const struct sy_deployment *d, struct sy_dprice *dp)
{
    const struct sy_price *p = NULL;
    if (d->base_model)
        p = sy_price_find(d->provider, d->base_model);
    if (!p && d->upstream_model)
        p = sy_price_find(d->provider, d->upstream_model);
    if (!p && d->model)
        p = sy_price_find(NULL, d->model);
    sy_dprice_from(dp, p);
    if (d->input_cost_per_token >= 0)
        dp->in = d->input_cost_per_token;
    if (d->output_cost_per_token >= 0)
        dp->out = d->output_cost_per_token;
    if (d->cache_read_input_token_cost >= 0)
        dp->cache_read = d->cache_read_input_token_cost;
    if (d->cache_creation_input_token_cost >= 0)
        dp->cache_write = d->cache_creation_input_token_cost;
    if (d->cache_creation_input_token_cost_above_1hr >= 0)
        dp->cache_write_1h = d->cache_creation_input_token_cost_above_1hr;
    if (d->output_cost_per_reasoning_token >= 0)
        dp->reasoning = d->output_cost_per_reasoning_token;
    dp->known = dp->known || dp->in >= 0 || dp->out >= 0;
}

static void not_mapped(struct sy_admin_ctx *a, const char *model)
{
    sy_admin_error(a, 500, "None", "None",
                   "This model isn't mapped yet. model=%s, custom_llm_provider=None. Add it here - "
                   "https://github.com/BerriAI/litellm/blob/main/model_prices_and_context_window.json.",
                   model);
}

static uint64_t jnonneg(json_object *o, const char *k)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, k, &v) || !v)
        return 0;
    int64_t i = json_object_get_int64(v);
    return i > 0 ? (uint64_t)i : 0;
}

static void spend_calculate(struct sy_store *st, struct sy_admin_ctx *a)
{
    (void)st;
    json_object *body = sy_admin_body(a);
    if (!body)
        return;
    const char *model = NULL;
    json_object *messages = NULL, *cr = NULL;
    if (sy_admin_get_str(a, body, "model", &model) < 0 || sy_admin_get_arr(a, body, "messages", &messages) < 0 ||
        sy_admin_get_obj(a, body, "completion_response", &cr) < 0)
        goto out;
    struct sy_dprice dp;
    struct sy_usage u;
    memset(&u, 0, sizeof u);
    if (model) {
        if (!messages) {
            sy_admin_error(a, 400, "None", "None", "Bad Request - messages must be provided if 'model' is provided");
            goto out;
        }
        const struct sy_deployment *d = calc_deployment(a, model);
        const char *upstream = d && d->model ? d->model : model;
        if (d)
            dep_price(d, &dp);
        else
            sy_dprice_from(&dp, sy_price_find(NULL, model));
        if (!dp.known) {
            not_mapped(a, upstream);
            goto out;
        }
        if (sy_tok_init() != 0) {
            sy_admin_error(a, 500, "None", "None", "tokenizer unavailable");
            goto out;
        }
        const char *up = d && d->upstream_model ? d->upstream_model : model;
        const struct sy_tok *t = sy_tok_get(sy_tok_encoding_for_model(up, strlen(up)));
        const char *text = sy_admin_jtext(body);
        long n = sy_tok_count_request(t, text, strlen(text));
        u.prompt_tokens = n > 0 ? (uint64_t)n : 0;
    } else if (cr) {
        json_object *usage = NULL, *mv = NULL, *det = NULL;
        json_object_object_get_ex(cr, "usage", &usage);
        const char *m = json_object_object_get_ex(cr, "model", &mv) && json_object_is_type(mv, json_type_string)
                            ? json_object_get_string(mv)
                            : NULL;
        if (!m) {
            sy_admin_error(a, 500, "None", "None", "Model is None and does not exist in passed completion_response.");
            goto out;
        }
        sy_dprice_from(&dp, sy_price_find(NULL, m));
        if (!dp.known) {
            not_mapped(a, m);
            goto out;
        }
        u.prompt_tokens = jnonneg(usage, "prompt_tokens");
        u.completion_tokens = jnonneg(usage, "completion_tokens");
        if (usage && json_object_object_get_ex(usage, "prompt_tokens_details", &det))
            u.cached_tokens = jnonneg(det, "cached_tokens");
        if (!u.cached_tokens)
            u.cached_tokens = jnonneg(usage, "cache_read_input_tokens");
        u.cache_creation_tokens = jnonneg(usage, "cache_creation_input_tokens");
        if (usage && json_object_object_get_ex(usage, "completion_tokens_details", &det))
            u.reasoning_tokens = jnonneg(det, "reasoning_tokens");
    } else {
        sy_admin_error(a, 400, "None", "None",
                       "Bad Request - Either 'model' or 'completion_response' must be provided");
        goto out;
    }
    SY_BUF_LIT(&a->out, "{\"cost\":");
    sy_admin_jnum(&a->out, sy_cost(&dp, &u));
    SY_BUF_LIT(&a->out, "}");
out:
    json_object_put(body);
}

/* ---- route table ---------------------------------------------------------- */

#define RO SY_ADMIN_READONLY
/* LiteLLM's spend_tracking_routes: internal users and their viewers too, scoped to their own */
#define SPEND (SY_ADMIN_READONLY | SY_ADMIN_USER | SY_ADMIN_USER_VIEW)
const struct sy_admin_route sy_admin_spend_routes[] = {
    {HTTP_GET, "/spend/logs", spend_logs, SPEND},
    {HTTP_GET, "/spend/logs/ui", spend_logs_page, SPEND},
    {HTTP_GET, "/spend/logs/v2", spend_logs_page, SPEND},
    {HTTP_GET, "/spend/keys", spend_keys, SPEND},
    {HTTP_GET, "/spend/users", spend_users, SPEND},
    {HTTP_GET, "/spend/tags", spend_tags, SPEND},
    {HTTP_POST, "/spend/calculate", spend_calculate, SPEND | SY_ADMIN_NODB},
    {HTTP_GET, "/global/spend", global_spend, RO},
    {HTTP_GET, "/global/spend/logs", global_spend_logs, RO},
    {HTTP_GET, "/global/spend/keys", global_spend_keys, RO},
    {HTTP_GET, "/global/spend/teams", global_spend_teams, RO},
    {HTTP_GET, "/global/spend/models", global_spend_models, RO},
    {HTTP_POST, "/global/spend/end_users", global_spend_end_users, RO},
    {HTTP_GET, "/global/spend/report", report, RO},
    {HTTP_GET, "/global/spend/tags", global_spend_tags, RO},
    {HTTP_GET, "/global/spend/all_tag_names", all_tag_names, RO},
    {HTTP_GET, "/global/all_end_users", all_end_users, RO},
    {HTTP_POST, "/global/spend/reset", global_spend_reset, SY_ADMIN_MASTER},
    {0, NULL, NULL, 0},
};
