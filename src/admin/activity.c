/* activity.c - LiteLLM's daily-activity routes (the Usage page's data):
 *
 *   GET /user/daily/activity   LiteLLM_DailyUserSpend  filter user_id
 *   GET /team/daily/activity   LiteLLM_DailyTeamSpend  filter team_ids, exclude_team_ids
 *   GET /tag/daily/activity    LiteLLM_DailyTagSpend   filter tags
 *
 * Common query parameters (LiteLLM's common_daily_activity.py):
 * start_date and end_date ("YYYY-MM-DD", both required, both inclusive: the
 * tables' date column is that text), model, api_key ("sk-..." is hashed, a
 * hash taken as is), page (>= 1) and page_size (1..1000, default 50).
 *
 * Answer (SpendAnalyticsPaginatedResponse, field order kept):
 *   {"results":[{"date":"YYYY-MM-DD","metrics":{SpendMetrics},
 *                "breakdown":{"mcp_servers":{},"models":{m:{"metrics","metadata":{},"api_key_breakdown":{k:..}}},
 *                             "model_groups":{..},"providers":{..},"endpoints":{},
 *                             "api_keys":{k:{"metrics","metadata":{"key_alias","team_id"}}},
 *                             "entities":{id:{"metrics","metadata":{},"api_key_breakdown":{}}}}}, ...],
 *    "metadata":{"total_spend",...,"page","total_pages","has_more"}}
 * SpendMetrics: spend, prompt_tokens, completion_tokens,
 * cache_read_input_tokens, cache_creation_input_tokens, total_tokens,
 * successful_requests, failed_requests, api_requests.
 *
 * The grouping is SQL's: one query sums the rows per (date, entity, api_key,
 * model, model_group, provider) joined with the key's alias and team, and a
 * page is a page of those groups (LiteLLM pages its records the same way),
 * newest day first; the C side only folds a page (<= 1000 groups) into the
 * per-day breakdowns. A second query sums the whole filtered range for
 * "metadata" (LiteLLM sums the page; the whole range is what a chart's
 * totals mean), a third counts the groups.
 *
 * Scope. Admins and proxy_admin_viewer see everything. Anyone else (an
 * internal user, a team admin; the gate lets internal users and their
 * viewers through):
 *   user  their own user_id; asking for another's is 403 as LiteLLM's
 *   team  the teams their user row lists (LiteLLM_UserTable.teams); naming
 *         another team is 403; none named = all of theirs
 *   tag   rows of their own keys only (api_key IN their tokens)
 */
#include <ctype.h>
#include <http_parser.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/activity.h"
#include "admin/admin.h"
#include "admin/admin_impl.h"
#include "store/store.h"

#define MAXLIST   64  /* items in team_ids / tags */
#define MAXPARAMS 160 /* 2 * MAXLIST + the scalar filters */

/* ---- parsers (activity.h) ----------------------------------------------- */

int sy_activity_ymd(const char *s)
{
    if (!s || strlen(s) != 10 || s[4] != '-' || s[7] != '-')
        return -1;
    for (int i = 0; i < 10; i++)
        if (i != 4 && i != 7 && !isdigit((unsigned char)s[i]))
            return -1;
    int y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    int m = (s[5] - '0') * 10 + (s[6] - '0'), d = (s[8] - '0') * 10 + (s[9] - '0');
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1 || m < 1 || m > 12 || d < 1)
        return -1;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return d <= mdays[m - 1] + (m == 2 && leap) ? 0 : -1;
}

int sy_activity_list(const char *s, char (*out)[256], int max)
{
    int n = 0;
    while (s && *s) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        const char *b = s;
        while (len && isspace((unsigned char)*b))
            b++, len--;
        while (len && isspace((unsigned char)b[len - 1]))
            len--;
        if (len) {
            if (n >= max || len > 255)
                return -1;
            memcpy(out[n], b, len);
            out[n][len] = 0;
            n++;
        }
        s = e ? e + 1 : NULL;
    }
    return n;
}

/* ---- SQL with numbered parameters --------------------------------------- */

struct aq {
    struct sy_buf w; /* " WHERE ..." */
    struct sy_sval p[MAXPARAMS];
    char *own[MAXPARAMS]; /* the parameters' text, owned (the query outlives the buffers it came from) */
    int n;
};

static void aq_and(struct aq *q, const char *cond)
{
    sy_buf_puts(&q->w, q->w.len ? " AND " : " WHERE ");
    sy_buf_puts(&q->w, cond);
}

/* Append "$<n>" for a new text parameter (copied). */
static void aq_param(struct aq *q, const char *text)
{
    if (q->n >= MAXPARAMS)
        return;
    q->own[q->n] = strdup(text);
    q->p[q->n] = q->own[q->n] ? sy_sv_text(q->own[q->n]) : sy_sv_null();
    q->n++;
    sy_buf_printf(&q->w, "$%d", q->n);
}

static void aq_free(struct aq *q)
{
    for (int i = 0; i < q->n; i++)
        free(q->own[i]);
    sy_buf_free(&q->w);
}

static void aq_eq(struct aq *q, const char *col, const char *v)
{
    aq_and(q, col);
    sy_buf_puts(&q->w, " = ");
    aq_param(q, v);
}

/* col [NOT] IN (items); an empty list matches nothing (IN) or everything (NOT IN). */
static void aq_in(struct aq *q, const char *col, int not, char (*items)[256], int n)
{
    if (n == 0) {
        if (!not )
            aq_and(q, "1 = 0");
        return;
    }
    aq_and(q, col);
    sy_buf_puts(&q->w, not ? " NOT IN (" : " IN (");
    for (int i = 0; i < n; i++) {
        if (i)
            sy_buf_puts(&q->w, ", ");
        aq_param(q, items[i]);
    }
    sy_buf_puts(&q->w, ")");
}

/* ---- folding a page into days ------------------------------------------- */

struct met {
    double spend;
    int64_t pt, ct, cr, cc, req, ok, fail;
};

struct ent {
    char *name;
    struct met m;
    char *alias, *team; /* api_keys: the key's metadata */
    struct emap *sub;   /* api_key_breakdown (models, model_groups) */
};

struct emap {
    struct ent *e;
    size_t n, cap;
};

struct day {
    char date[11];
    struct met m;
    struct emap models, groups, providers, keys, entities;
};

struct fold {
    struct day *d;
    size_t n, cap;
    int oom;
};

static void met_add(struct met *m, const struct met *x)
{
    m->spend += x->spend;
    m->pt += x->pt, m->ct += x->ct, m->cr += x->cr, m->cc += x->cc;
    m->req += x->req, m->ok += x->ok, m->fail += x->fail;
}

static struct ent *emap_get(struct emap *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->e[i].name, name) == 0)
            return &m->e[i];
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 8;
        struct ent *e = realloc(m->e, cap * sizeof *e);
        if (!e)
            return NULL;
        m->e = e;
        m->cap = cap;
    }
    struct ent *e = &m->e[m->n];
    memset(e, 0, sizeof *e);
    if (!(e->name = strdup(name)))
        return NULL;
    m->n++;
    return e;
}

static void emap_free(struct emap *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->e[i].name);
        free(m->e[i].alias);
        free(m->e[i].team);
        if (m->e[i].sub) {
            emap_free(m->e[i].sub);
            free(m->e[i].sub);
        }
    }
    free(m->e);
    memset(m, 0, sizeof *m);
}

/* Add x under name in m, and under key in its api_key_breakdown when key. */
static int emap_add(struct emap *m, const char *name, const struct met *x, const char *key)
{
    struct ent *e = emap_get(m, name);
    if (!e)
        return -1;
    met_add(&e->m, x);
    if (!key)
        return 0;
    if (!e->sub && !(e->sub = calloc(1, sizeof *e->sub)))
        return -1;
    struct ent *k = emap_get(e->sub, key);
    if (!k)
        return -1;
    met_add(&k->m, x);
    return 0;
}

static struct day *fold_day(struct fold *f, const char *date)
{
    if (f->n && strcmp(f->d[f->n - 1].date, date) == 0)
        return &f->d[f->n - 1];
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->d[i].date, date) == 0)
            return &f->d[i];
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        struct day *d = realloc(f->d, cap * sizeof *d);
        if (!d)
            return NULL;
        f->d = d;
        f->cap = cap;
    }
    struct day *d = &f->d[f->n++];
    memset(d, 0, sizeof *d);
    snprintf(d->date, sizeof d->date, "%s", date);
    return d;
}

static const char *nz(const char *s, const char *dflt)
{
    return s && *s ? s : dflt;
}

static void met_of(const struct sy_srow *r, struct met *m)
{
    m->spend = sy_srow_num(r, "spend", 0);
    m->pt = sy_srow_int(r, "prompt_tokens", 0);
    m->ct = sy_srow_int(r, "completion_tokens", 0);
    m->cr = sy_srow_int(r, "cache_read_input_tokens", 0);
    m->cc = sy_srow_int(r, "cache_creation_input_tokens", 0);
    m->req = sy_srow_int(r, "api_requests", 0);
    m->ok = sy_srow_int(r, "successful_requests", 0);
    m->fail = sy_srow_int(r, "failed_requests", 0);
}

static int fold_row(void *ud, const struct sy_srow *r)
{
    struct fold *f = ud;
    const char *date = sy_srow_text(r, "date");
    struct day *d = fold_day(f, date ? date : "");
    if (!d) {
        f->oom = 1;
        return 1;
    }
    struct met m;
    met_of(r, &m);
    met_add(&d->m, &m);
    const char *key = nz(sy_srow_text(r, "api_key"), "");
    const char *model = sy_srow_text(r, "model");
    const char *group = nz(sy_srow_text(r, "model_group"), model);
    const char *ent = sy_srow_text(r, "entity");
    int rc = 0;
    if (model && *model)
        rc |= emap_add(&d->models, model, &m, key);
    if (group && *group)
        rc |= emap_add(&d->groups, group, &m, key);
    rc |= emap_add(&d->providers, nz(sy_srow_text(r, "provider"), "unknown"), &m, NULL);
    struct ent *k = emap_get(&d->keys, key);
    if (k) {
        met_add(&k->m, &m);
        const char *al = sy_srow_text(r, "key_alias"), *tm = sy_srow_text(r, "key_team_id");
        if (!k->alias && al)
            k->alias = strdup(al);
        if (!k->team && tm)
            k->team = strdup(tm);
    } else {
        rc = -1;
    }
    if (ent && *ent)
        rc |= emap_add(&d->entities, ent, &m, NULL);
    if (rc) {
        f->oom = 1;
        return 1;
    }
    return 0;
}

static void fold_free(struct fold *f)
{
    for (size_t i = 0; i < f->n; i++) {
        emap_free(&f->d[i].models);
        emap_free(&f->d[i].groups);
        emap_free(&f->d[i].providers);
        emap_free(&f->d[i].keys);
        emap_free(&f->d[i].entities);
    }
    free(f->d);
}

/* ---- output -------------------------------------------------------------- */

static void put_met(struct sy_buf *b, const struct met *m)
{
    SY_BUF_LIT(b, "{\"spend\":");
    sy_admin_jnum(b, m->spend);
    sy_buf_printf(b,
                  ",\"prompt_tokens\":%lld,\"completion_tokens\":%lld,\"cache_read_input_tokens\":%lld,"
                  "\"cache_creation_input_tokens\":%lld,\"total_tokens\":%lld,\"successful_requests\":%lld,"
                  "\"failed_requests\":%lld,\"api_requests\":%lld}",
                  (long long)m->pt, (long long)m->ct, (long long)m->cr, (long long)m->cc, (long long)(m->pt + m->ct),
                  (long long)m->ok, (long long)m->fail, (long long)m->req);
}

static void put_key_meta(struct sy_buf *b, const struct ent *e)
{
    SY_BUF_LIT(b, "{\"key_alias\":");
    sy_admin_jstr(b, e->alias);
    SY_BUF_LIT(b, ",\"team_id\":");
    sy_admin_jstr(b, e->team);
    SY_BUF_LIT(b, "}");
}

/* {name:{"metrics":..,"metadata":..[,"api_key_breakdown":{..}]}, ...}; keys: KeyMetricWithMetadata. */
static void put_map(struct sy_buf *b, const struct emap *m, int keys)
{
    SY_BUF_LIT(b, "{");
    for (size_t i = 0; i < m->n; i++) {
        const struct ent *e = &m->e[i];
        if (i)
            SY_BUF_LIT(b, ",");
        sy_admin_jstr(b, e->name);
        SY_BUF_LIT(b, ":{\"metrics\":");
        put_met(b, &e->m);
        SY_BUF_LIT(b, ",\"metadata\":");
        if (keys) {
            put_key_meta(b, e);
        } else {
            SY_BUF_LIT(b, "{},\"api_key_breakdown\":");
            if (e->sub) {
                put_map(b, e->sub, 1);
            } else {
                SY_BUF_LIT(b, "{}");
            }
        }
        SY_BUF_LIT(b, "}");
    }
    SY_BUF_LIT(b, "}");
}

/* The api_key_breakdown entries take the key metadata of the day's api_keys. */
static void link_meta(struct day *d, struct emap *m)
{
    for (size_t i = 0; i < m->n; i++)
        for (size_t j = 0; m->e[i].sub && j < m->e[i].sub->n; j++) {
            struct ent *k = &m->e[i].sub->e[j];
            for (size_t x = 0; x < d->keys.n; x++)
                if (strcmp(d->keys.e[x].name, k->name) == 0) {
                    if (!k->alias && d->keys.e[x].alias)
                        k->alias = strdup(d->keys.e[x].alias);
                    if (!k->team && d->keys.e[x].team)
                        k->team = strdup(d->keys.e[x].team);
                }
        }
}

static void put_day(struct sy_buf *b, struct day *d)
{
    link_meta(d, &d->models);
    link_meta(d, &d->groups);
    SY_BUF_LIT(b, "{\"date\":");
    sy_admin_jstr(b, d->date);
    SY_BUF_LIT(b, ",\"metrics\":");
    put_met(b, &d->m);
    SY_BUF_LIT(b, ",\"breakdown\":{\"mcp_servers\":{},\"models\":");
    put_map(b, &d->models, 0);
    SY_BUF_LIT(b, ",\"model_groups\":");
    put_map(b, &d->groups, 0);
    SY_BUF_LIT(b, ",\"providers\":");
    put_map(b, &d->providers, 0);
    SY_BUF_LIT(b, ",\"endpoints\":{},\"api_keys\":");
    put_map(b, &d->keys, 1);
    SY_BUF_LIT(b, ",\"entities\":");
    put_map(b, &d->entities, 0);
    SY_BUF_LIT(b, "}}");
}

/* ---- the handler --------------------------------------------------------- */

enum act_kind { ACT_USER, ACT_TEAM, ACT_TAG };

struct act_def {
    const char *table;
    const char *col; /* the entity column */
};

static const struct act_def defs[] = {
    [ACT_USER] = {"\"LiteLLM_DailyUserSpend\"", "D.user_id"},
    [ACT_TEAM] = {"\"LiteLLM_DailyTeamSpend\"", "D.team_id"},
    [ACT_TAG] = {"\"LiteLLM_DailyTagSpend\"", "D.tag"},
};

static int privileged(const struct sy_admin_ctx *a)
{
    return a->is_admin || a->is_admin_viewer;
}

static void detail_error(struct sy_admin_ctx *a, int status, const char *msg)
{
    a->status = status;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"detail\":{\"error\":");
    sy_admin_jstr(&a->out, msg);
    SY_BUF_LIT(&a->out, "}}");
}

/* The caller's teams (their user row's "teams"): the number, or -1 on a
 * database error (written). */
struct teams_ud {
    char (*out)[256];
    int n;
};

static int teams_cb(void *ud, const struct sy_srow *r)
{
    struct teams_ud *t = ud;
    const char *txt = sy_srow_text(r, "teams");
    struct json_object *arr = txt ? json_tokener_parse(txt) : NULL;
    for (size_t i = 0; arr && json_object_is_type(arr, json_type_array) && i < json_object_array_length(arr); i++) {
        struct json_object *v = json_object_array_get_idx(arr, i);
        if (t->n < MAXLIST && json_object_is_type(v, json_type_string) && json_object_get_string_len(v) < 256)
            snprintf(t->out[t->n++], 256, "%s", json_object_get_string(v));
    }
    json_object_put(arr);
    return 1;
}

static int own_teams(struct sy_store *st, struct sy_admin_ctx *a, char (*out)[256])
{
    struct teams_ud t = {out, 0};
    if (!a->caller_user_id)
        return 0;
    struct sy_sval p = sy_sv_text(a->caller_user_id);
    int rc = sy_store_exec(st, "SELECT teams FROM \"LiteLLM_UserTable\" WHERE user_id = $1", 1, &p, teams_cb, &t);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        return -1;
    }
    return t.n;
}

static int in_list(char (*l)[256], int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(l[i], s) == 0)
            return 1;
    return 0;
}

/* Read a list parameter; -1 with a 400 written when too long. */
static int list_param(struct sy_admin_ctx *a, const char *name, char (*out)[256])
{
    char raw[MAXLIST * 258];
    if (!sy_admin_query(a, name, raw, sizeof raw))
        return 0;
    int n = sy_activity_list(raw, out, MAXLIST);
    if (n < 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s: at most %d values of at most 255 bytes each", name, MAXLIST);
        detail_error(a, 400, msg);
    }
    return n;
}

/* The WHERE clause for kind from the query string and the caller; 0, or -1
 * with an answer written. */
static int build_where(struct sy_store *st, struct sy_admin_ctx *a, enum act_kind kind, struct aq *q)
{
    char sd[64], ed[64], model[512], key[512], uid[512];
    if (!sy_admin_query(a, "start_date", sd, sizeof sd) || !sy_admin_query(a, "end_date", ed, sizeof ed)) {
        detail_error(a, 400, "Please provide start_date and end_date");
        return -1;
    }
    if (sy_activity_ymd(sd) < 0 || sy_activity_ymd(ed) < 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "Invalid date '%s': expected YYYY-MM-DD", sy_activity_ymd(sd) < 0 ? sd : ed);
        detail_error(a, 400, msg);
        return -1;
    }
    aq_and(q, "D.date >= ");
    aq_param(q, sd);
    aq_and(q, "D.date <= ");
    aq_param(q, ed);
    if (sy_admin_query(a, "model", model, sizeof model))
        aq_eq(q, "D.model", model);
    if (sy_admin_query(a, "api_key", key, sizeof key) && *key) {
        char tok[65];
        sy_admin_token_of(key, tok);
        aq_eq(q, "D.api_key", tok);
    }
    char(*l1)[256] = malloc(sizeof(char[MAXLIST][256]) * 2);
    if (!l1) {
        sy_admin_error(a, 500, "internal_server_error", NULL, "out of memory");
        return -1;
    }
    char(*l2)[256] = l1 + MAXLIST;
    int rc = 0;
    if (kind == ACT_USER) {
        const char *u = sy_admin_query(a, "user_id", uid, sizeof uid);
        if (!privileged(a)) {
            const char *me = a->caller_user_id ? a->caller_user_id : "";
            if (u && strcmp(u, me) != 0) {
                sy_admin_error(a, 403, "auth_error", "None", "User=%s is not allowed to view activity of user=%s", me,
                               u);
                rc = -1;
                goto out;
            }
            u = me;
        }
        if (u)
            aq_eq(q, "D.user_id", u);
    } else if (kind == ACT_TEAM) {
        int n = list_param(a, "team_ids", l1), nx;
        if (n < 0 || (nx = list_param(a, "exclude_team_ids", l2)) < 0) {
            rc = -1;
            goto out;
        }
        if (!privileged(a)) {
            char(*mine)[256] = malloc(sizeof(char[MAXLIST][256]));
            int nm = mine ? own_teams(st, a, mine) : -1;
            if (nm < 0) {
                if (!mine)
                    sy_admin_error(a, 500, "internal_server_error", NULL, "out of memory");
                free(mine);
                rc = -1;
                goto out;
            }
            for (int i = 0; i < n; i++)
                if (!in_list(mine, nm, l1[i])) {
                    sy_admin_error(a, 403, "auth_error", "None",
                                   "User=%s is not a member of team=%s; only team members and admins can view "
                                   "its activity",
                                   a->caller_user_id ? a->caller_user_id : "", l1[i]);
                    free(mine);
                    rc = -1;
                    goto out;
                }
            if (n == 0) {
                memcpy(l1, mine, sizeof(char[256]) * (size_t)nm);
                n = nm;
            }
            free(mine);
            aq_in(q, "D.team_id", 0, l1, n);
        } else if (n > 0) {
            aq_in(q, "D.team_id", 0, l1, n);
        }
        if (nx > 0)
            aq_in(q, "D.team_id", 1, l2, nx);
    } else {
        int n = list_param(a, "tags", l1);
        if (n < 0) {
            rc = -1;
            goto out;
        }
        if (n > 0)
            aq_in(q, "D.tag", 0, l1, n);
        if (!privileged(a)) {
            aq_and(q, "D.api_key IN (SELECT token FROM \"LiteLLM_VerificationToken\" WHERE user_id = ");
            aq_param(q, a->caller_user_id ? a->caller_user_id : "");
            sy_buf_puts(&q->w, ")");
        }
    }
out:
    free(l1);
    return rc;
}

#define SUMS                                                                                                   \
    "SUM(D.spend) AS spend, SUM(D.prompt_tokens) AS prompt_tokens, SUM(D.completion_tokens) AS "               \
    "completion_tokens, SUM(D.cache_read_input_tokens) AS cache_read_input_tokens, "                           \
    "SUM(D.cache_creation_input_tokens) AS cache_creation_input_tokens, SUM(D.api_requests) AS api_requests, " \
    "SUM(D.successful_requests) AS successful_requests, SUM(D.failed_requests) AS failed_requests"

static int one_met_cb(void *ud, const struct sy_srow *r)
{
    met_of(r, ud);
    return 1;
}

static int count_cb(void *ud, const struct sy_srow *r)
{
    *(int64_t *)ud = r->ncols > 0 ? sy_srow_int(r, r->names[0], 0) : 0;
    return 1;
}

static void activity(struct sy_store *st, struct sy_admin_ctx *a, enum act_kind kind)
{
    int64_t page = 1, size = 50;
    if (sy_admin_query_int(a, "page", &page) < 0 || sy_admin_query_int(a, "page_size", &size) < 0)
        return;
    if (page < 1 || size < 1 || size > 1000) { /* FastAPI's Query(ge=1) / Query(ge=1, le=1000) */
        const char *f = page < 1 ? "page" : "page_size";
        int le = page >= 1 && size > 1000;
        a->status = 422;
        sy_buf_reset(&a->out);
        sy_buf_printf(&a->out,
                      "{\"detail\":[{\"type\":\"%s\",\"loc\":[\"query\",\"%s\"],\"msg\":\"Input should be %s %d\","
                      "\"input\":\"%lld\",\"ctx\":{\"%s\":%d}}]}",
                      le ? "less_than_equal" : "greater_than_equal", f,
                      le ? "less than or equal to" : "greater than or equal to", le ? 1000 : 1,
                      (long long)(page < 1 ? page : size), le ? "le" : "ge", le ? 1000 : 1);
        return;
    }
    const struct act_def *def = &defs[kind];
    struct aq q;
    memset(&q, 0, sizeof q);
    sy_buf_init(&q.w, 1 << 16);
    struct sy_buf sql;
    sy_buf_init(&sql, 1 << 17);
    struct fold f;
    memset(&f, 0, sizeof f);
    if (build_where(st, a, kind, &q) < 0)
        goto out;
    /* the groups of the page */
    char grp[512];
    snprintf(grp, sizeof grp, "D.date, %s, D.api_key, D.model, D.model_group, D.custom_llm_provider", def->col);
    sy_buf_printf(&sql,
                  "SELECT D.date AS date, %s AS entity, D.api_key AS api_key, D.model AS model, D.model_group AS "
                  "model_group, D.custom_llm_provider AS provider, MAX(V.key_alias) AS key_alias, MAX(V.team_id) AS "
                  "key_team_id, " SUMS " FROM %s D LEFT JOIN \"LiteLLM_VerificationToken\" V ON V.token = D.api_key",
                  def->col, def->table);
    sy_buf_append(&sql, q.w.p, q.w.len);
    sy_buf_printf(&sql, " GROUP BY %s ORDER BY D.date DESC, SUM(D.spend) DESC, %s LIMIT %lld OFFSET %lld", grp, grp,
                  (long long)size, (long long)sy_admin_page_offset(page, size));
    int rc = sy_store_exec(st, sql.p, q.n, q.p, fold_row, &f);
    if (rc >= 0 && f.oom) {
        sy_admin_error(a, 500, "internal_server_error", NULL, "out of memory");
        goto out;
    }
    /* the number of groups, and the whole range's totals */
    int64_t groups = 0;
    struct met tot;
    memset(&tot, 0, sizeof tot);
    if (rc >= 0) {
        sy_buf_reset(&sql);
        sy_buf_printf(&sql, "SELECT COUNT(*) AS n FROM (SELECT 1 AS one FROM %s D", def->table);
        sy_buf_append(&sql, q.w.p, q.w.len);
        sy_buf_printf(&sql, " GROUP BY %s) G", grp);
        rc = sy_store_exec(st, sql.p, q.n, q.p, count_cb, &groups);
    }
    if (rc >= 0) {
        sy_buf_reset(&sql);
        sy_buf_printf(&sql, "SELECT " SUMS " FROM %s D", def->table);
        sy_buf_append(&sql, q.w.p, q.w.len);
        rc = sy_store_exec(st, sql.p, q.n, q.p, one_met_cb, &tot);
    }
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    int64_t pages = (groups + size - 1) / size;
    if (pages < 1)
        pages = 1;
    SY_BUF_LIT(&a->out, "{\"results\":[");
    for (size_t i = 0; i < f.n; i++) {
        if (i)
            SY_BUF_LIT(&a->out, ",");
        put_day(&a->out, &f.d[i]);
    }
    SY_BUF_LIT(&a->out, "],\"metadata\":{\"total_spend\":");
    sy_admin_jnum(&a->out, tot.spend);
    sy_buf_printf(&a->out,
                  ",\"total_prompt_tokens\":%lld,\"total_completion_tokens\":%lld,\"total_tokens\":%lld,"
                  "\"total_api_requests\":%lld,\"total_successful_requests\":%lld,\"total_failed_requests\":%lld,"
                  "\"total_cache_read_input_tokens\":%lld,\"total_cache_creation_input_tokens\":%lld,"
                  "\"page\":%lld,\"total_pages\":%lld,\"has_more\":%s}}",
                  (long long)tot.pt, (long long)tot.ct, (long long)(tot.pt + tot.ct), (long long)tot.req,
                  (long long)tot.ok, (long long)tot.fail, (long long)tot.cr, (long long)tot.cc, (long long)page,
                  (long long)pages, page < pages ? "true" : "false");
out:
    fold_free(&f);
    sy_buf_free(&sql);
    aq_free(&q);
}

static void user_activity(struct sy_store *st, struct sy_admin_ctx *a)
{
    activity(st, a, ACT_USER);
}

static void team_activity(struct sy_store *st, struct sy_admin_ctx *a)
{
    activity(st, a, ACT_TEAM);
}

static void tag_activity(struct sy_store *st, struct sy_admin_ctx *a)
{
    activity(st, a, ACT_TAG);
}

/* LiteLLM's spend_tracking_routes: internal users and their viewers too, scoped (above) */
#define ACT (SY_ADMIN_READONLY | SY_ADMIN_USER | SY_ADMIN_USER_VIEW)
const struct sy_admin_route sy_admin_activity_routes[] = {
    {HTTP_GET, "/user/daily/activity", user_activity, ACT},
    {HTTP_GET, "/team/daily/activity", team_activity, ACT},
    {HTTP_GET, "/tag/daily/activity", tag_activity, ACT},
    {0, NULL, NULL, 0},
};
