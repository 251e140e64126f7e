/* users.c - LiteLLM's internal-user management API on "LiteLLM_UserTable"
 * (proxy/management_endpoints/internal_user_endpoints.py), and the helpers
 * every entity handler shares (admin/entity_impl.h).
 *
 *   | route              | body / query                          | answer                                   |
 *   |--------------------|---------------------------------------|------------------------------------------|
 *   | POST /user/new     | NewUserRequest                        | NewUserResponse: key (plaintext, "" when  |
 *   |                    |                                       | auto_create_key is false), user fields   |
 *   | POST /user/update  | UpdateUserRequest (user_id|user_email)| {"user_id":..,"data":row}                 |
 *   | POST /user/delete  | {"user_ids":[..]}                     | number of users deleted                  |
 *   | GET  /user/info    | user_id (none: the caller; the admin  | {"user_id","user_info","keys","teams"}   |
 *   |                    | without one: every key and team)     |                                          |
 *   | GET  /user/list    | page page_size role user_ids          | {"users":[row+key_count],"total","page", |
 *   |                    | user_email team sort_by sort_order    |  "page_size","total_pages"}              |
 *
 * /user/new is generate_key_helper_fn(request_type="user"): the user row
 * (user_role as given, else NULL, as LiteLLM stores it) and, unless
 * auto_create_key is false, a key row for the user in
 * "LiteLLM_VerificationToken"; then every team of `teams` (ids or
 * {"team_id","max_budget_in_team","user_role"}) is joined as
 * /team/member_add does, errors ignored as LiteLLM ignores them.
 * /user/update creates the row when the id is unknown (Prisma upsert), as
 * LiteLLM's update_data does. Passwords are not stored (LiteLLM keeps a
 * scrypt hash for its UI login only) and never returned.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <openssl/sha.h>
#include <string.h>
#include <strings.h>

#include <http_parser.h>

#include "admin/admin_impl.h"
#include "limits/limits.h"
#include "admin/entity_impl.h"
#include "config/config.h"
#include "core/hex.h"
#include "core/buf.h"
#include "core/pyrepr.h"
#include "router/table.h"
#include "keys/keys.h"
#include "spend/spend.h"

#define T_USERS  "\"LiteLLM_UserTable\""
#define T_TEAMS  "\"LiteLLM_TeamTable\""
#define T_KEYS   "\"LiteLLM_VerificationToken\""
#define T_TM     "\"LiteLLM_TeamMembership\""
#define T_BUDGET "\"LiteLLM_BudgetTable\""

/* ======================================================================== */
/* shared helpers (entity_impl.h)                                            */
/* ======================================================================== */

void sy__cset_put(struct sy__cset *cs, const char *col, struct sy_sval v)
{
    for (int i = 0; i < cs->n; i++)
        if (strcmp(cs->col[i], col) == 0) {
            cs->v[i] = v;
            return;
        }
    if (cs->n < SY__CSET_MAX) {
        cs->col[cs->n] = col;
        cs->v[cs->n++] = v;
    }
}

const char *sy__cset_own(struct sy__cset *cs, char *s)
{
    if (s && cs->nown < (int)(sizeof cs->own / sizeof cs->own[0]))
        cs->own[cs->nown++] = s;
    return s;
}

int sy__cset_has(const struct sy__cset *cs, const char *col)
{
    return sy__cset_get(cs, col) != NULL;
}

const struct sy_sval *sy__cset_get(const struct sy__cset *cs, const char *col)
{
    for (int i = 0; i < cs->n; i++)
        if (strcmp(cs->col[i], col) == 0)
            return &cs->v[i];
    return NULL;
}

void sy__cset_free(struct sy__cset *cs)
{
    for (int i = 0; i < cs->nown; i++)
        free(cs->own[i]);
    memset(cs, 0, sizeof *cs);
}

static int is_empty_json(struct json_object *v)
{
    if (json_object_is_type(v, json_type_array))
        return json_object_array_length(v) == 0;
    if (json_object_is_type(v, json_type_object))
        return json_object_object_length(v) == 0;
    return 0;
}

int sy__collect(struct sy_admin_ctx *a, struct json_object *body, const struct sy__field *f, int nf, int update,
                struct sy__cset *cs)
{
    for (int i = 0; i < nf; i++) {
        struct json_object *raw = NULL, *arr = NULL;
        const char *s = NULL;
        double d = 0;
        int64_t n = 0;
        int b = 0, r;
        json_object_object_get_ex(body, f[i].name, &raw);
        switch (f[i].kind) {
        case SY_FK_STR:
        case SY_FK_TS: r = sy_admin_get_str(a, body, f[i].name, &s); break;
        case SY_FK_NUM: r = sy_admin_get_num(a, body, f[i].name, &d); break;
        case SY_FK_INT: r = sy_admin_get_int(a, body, f[i].name, &n); break;
        case SY_FK_BOOL: r = sy_admin_get_bool(a, body, f[i].name, &b); break;
        case SY_FK_STRARR: r = sy_admin_get_strarr(a, body, f[i].name, &arr); break;
        default: r = sy_admin_get_obj(a, body, f[i].name, &arr); break;
        }
        if (r == SY_AF_ERR)
            return -1;
        if (!f[i].col || r == SY_AF_ABSENT)
            continue;
        if (r == SY_AF_NULL) {
            if (update && !(f[i].flags & (SY_FF_NOTNULL | SY_FF_NONDEF)))
                sy__cset_put(cs, f[i].col, sy_sv_null());
            continue;
        }
        if ((f[i].flags & SY_FF_NONDEF) && arr && is_empty_json(arr))
            continue;
        switch (f[i].kind) {
        case SY_FK_STR: sy__cset_put(cs, f[i].col, sy_sv_text(s)); break;
        case SY_FK_TS: {
            double t = sy_iso_parse(s);
            char iso[32];
            if (t < 0) {
                sy_admin_422(a, f[i].name, "datetime_from_date_parsing",
                             "Input should be a valid datetime or date, invalid character in year", raw);
                return -1;
            }
            sy_iso_time(t, iso);
            sy__cset_put(cs, f[i].col, sy_sv_ts(sy__cset_own(cs, strdup(iso))));
            break;
        }
        case SY_FK_NUM: sy__cset_put(cs, f[i].col, sy_sv_num(d)); break;
        case SY_FK_INT: sy__cset_put(cs, f[i].col, sy_sv_int(n)); break;
        case SY_FK_BOOL: sy__cset_put(cs, f[i].col, sy_sv_bool(b)); break;
        case SY_FK_STRARR:
            sy__cset_put(cs, f[i].col, sy_sv_textarr(sy__cset_own(cs, strdup(sy_admin_jtext(arr)))));
            break;
        default: sy__cset_put(cs, f[i].col, sy_sv_json(sy__cset_own(cs, strdup(sy_admin_jtext(arr))))); break;
        }
    }
    return 0;
}

int sy__insert_cols(struct sy_store *st, const char *table, const char *const *col, const struct sy_sval *v, int n,
                    sy_srow_cb cb, void *ud)
{
    struct sy_buf sql;
    sy_buf_init(&sql, 1 << 16);
    sy_buf_printf(&sql, "INSERT INTO %s (", table);
    for (int i = 0; i < n; i++)
        sy_buf_printf(&sql, "%s\"%s\"", i ? ", " : "", col[i]);
    SY_BUF_LIT(&sql, ") VALUES (");
    for (int i = 0; i < n; i++)
        sy_buf_printf(&sql, "%s$%d", i ? ", " : "", i + 1);
    SY_BUF_LIT(&sql, ") RETURNING *");
    int rc = sy_store_exec(st, sql.p, n, v, cb, ud);
    sy_buf_free(&sql);
    return rc;
}

int sy__insert(struct sy_store *st, const char *table, const struct sy__cset *cs, sy_srow_cb cb, void *ud)
{
    return sy__insert_cols(st, table, cs->col, cs->v, cs->n, cb, ud);
}

int sy__update_cols(struct sy_store *st, const char *table, const char *keycol, const char *key, const char *const *col,
                    const struct sy_sval *v, int n, sy_srow_cb cb, void *ud)
{
    struct sy_buf sql;
    struct sy_sval *p = malloc(sizeof *p * (size_t)(n + 1));
    if (!p)
        return SY_STORE_EQUERY;
    sy_buf_init(&sql, 1 << 16);
    sy_buf_printf(&sql, "UPDATE %s SET ", table);
    for (int i = 0; i < n; i++) {
        sy_buf_printf(&sql, "%s\"%s\" = $%d", i ? ", " : "", col[i], i + 1);
        p[i] = v[i];
    }
    p[n] = sy_sv_text(key);
    sy_buf_printf(&sql, " WHERE \"%s\" = $%d RETURNING *", keycol, n + 1);
    int rc = sy_store_exec(st, sql.p, n + 1, p, cb, ud);
    sy_buf_free(&sql);
    free(p);
    return rc;
}

int sy__update(struct sy_store *st, const char *table, const char *keycol, const char *key, const struct sy__cset *cs,
               sy_srow_cb cb, void *ud)
{
    return sy__update_cols(st, table, keycol, key, cs->col, cs->v, cs->n, cb, ud);
}

void sy__err_dict(struct sy_admin_ctx *a, int status, const char *type, const char *fmt, ...)
{
    char msg[1024];
    struct sy_buf b;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sy_buf_init(&b, 8192);
    sy_buf_puts(&b, "{'error': ");
    sy_py_str_repr(&b, msg, strlen(msg));
    sy_buf_puts(&b, "}");
    sy_admin_error(a, status, type, NULL, "%s", b.p ? b.p : "");
    sy_buf_free(&b);
}

void sy__detail(struct sy_admin_ctx *a, int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    a->status = status;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"detail\":{\"error\":");
    sy_admin_jstr(&a->out, msg);
    SY_BUF_LIT(&a->out, "}}");
}

void sy__value_error(struct sy_admin_ctx *a, struct json_object *body, const char *msg)
{
    a->status = 422;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"detail\":[{\"type\":\"value_error\",\"loc\":[\"body\"],\"msg\":");
    char m[512];
    snprintf(m, sizeof m, "Value error, %s", msg);
    sy_admin_jstr(&a->out, m);
    SY_BUF_LIT(&a->out, ",\"input\":");
    sy_buf_puts(&a->out, sy_admin_jtext(body));
    SY_BUF_LIT(&a->out, ",\"ctx\":{\"error\":{}}}]}");
}

void sy__missing(struct sy_admin_ctx *a, const char *where, const char *name, struct json_object *input)
{
    a->status = 422;
    sy_buf_reset(&a->out);
    sy_buf_printf(&a->out, "{\"detail\":[{\"type\":\"missing\",\"loc\":[\"%s\",", where);
    sy_admin_jstr(&a->out, name);
    SY_BUF_LIT(&a->out, "],\"msg\":\"Field required\",\"input\":");
    sy_buf_puts(&a->out, input ? sy_admin_jtext(input) : "null");
    SY_BUF_LIT(&a->out, "}]}");
}

void sy__row_members(struct sy_buf *b, const struct sy_srow *r, const char *skip, int *first)
{
    for (int i = 0; i < r->ncols; i++) {
        if (skip && strcmp(r->names[i], skip) == 0)
            continue;
        sy_admin_jkey(b, first, r->names[i]);
        sy_sval_json(b, &r->v[i]);
    }
}

int sy__rows_nopw_cb(void *ud, const struct sy_srow *r)
{
    struct sy_admin_rows *rows = ud;
    int first = 1;
    if (rows->n++)
        SY_BUF_LIT(rows->b, ",");
    SY_BUF_LIT(rows->b, "{");
    sy__row_members(rows->b, r, "password", &first);
    SY_BUF_LIT(rows->b, "}");
    return 0;
}

static struct json_object *arr_parse(const char *arr)
{
    struct json_object *o = arr ? json_tokener_parse(arr) : NULL;
    if (!o || !json_object_is_type(o, json_type_array)) {
        json_object_put(o);
        o = json_object_new_array();
    }
    return o;
}

int sy__arr_has(const char *arr, const char *s)
{
    struct json_object *o = arr_parse(arr);
    int has = 0;
    for (size_t i = 0; i < json_object_array_length(o) && !has; i++) {
        const char *e = json_object_get_string(json_object_array_get_idx(o, i));
        has = e && strcmp(e, s) == 0;
    }
    json_object_put(o);
    return has;
}

char *sy__arr_add(const char *arr, const char *s)
{
    struct json_object *o = arr_parse(arr);
    int has = 0;
    for (size_t i = 0; i < json_object_array_length(o) && !has; i++) {
        const char *e = json_object_get_string(json_object_array_get_idx(o, i));
        has = e && strcmp(e, s) == 0;
    }
    if (!has)
        json_object_array_add(o, json_object_new_string(s));
    char *t = strdup(sy_admin_jtext(o));
    json_object_put(o);
    return t;
}

char *sy__arr_del(const char *arr, const char *s)
{
    struct json_object *o = arr_parse(arr), *n = json_object_new_array();
    for (size_t i = 0; i < json_object_array_length(o); i++) {
        struct json_object *e = json_object_array_get_idx(o, i);
        const char *es = json_object_get_string(e);
        if (es && strcmp(es, s) == 0)
            continue;
        json_object_array_add(n, json_object_get(e));
    }
    char *t = strdup(sy_admin_jtext(n));
    json_object_put(o);
    json_object_put(n);
    return t;
}

void sy__in_list(struct sy_buf *sql, int k, int n)
{
    for (int i = 0; i < n; i++)
        sy_buf_printf(sql, "%s$%d", i ? "," : "", k + i);
}

int sy__budget_insert(struct sy_store *st, struct sy_admin_ctx *a, struct sy__cset *cs, char *id_out,
                      struct sy_admin_row *row)
{
    char now[32], id[37];
    const struct sy_sval *given = sy__cset_get(cs, "budget_id");
    if (given && given->k == SY_SV_TEXT && given->s)
        snprintf(id_out, 128, "%s", given->s);
    else {
        sy_admin_uuid(id);
        snprintf(id_out, 128, "%s", id);
        sy__cset_put(cs, "budget_id", sy_sv_text(sy__cset_own(cs, strdup(id))));
    }
    sy_admin_iso_now(a, now);
    sy__cset_put(cs, "created_at", sy_sv_ts(sy__cset_own(cs, strdup(now))));
    sy__cset_put(cs, "updated_at", sy_sv_ts(sy__cset_own(cs, strdup(now))));
    sy__cset_put(cs, "created_by", sy_sv_text(sy_admin_actor(a)));
    sy__cset_put(cs, "updated_by", sy_sv_text(sy_admin_actor(a)));
    struct sy_admin_row tmp = {0};
    int rc = sy__insert(st, T_BUDGET, cs, sy_admin_row_cb, row ? (void *)row : (void *)&tmp);
    sy_admin_row_free(&tmp);
    return rc;
}

int sy__budget_json(struct sy_store *st, const char *id, struct sy_buf *b)
{
    if (!id) {
        SY_BUF_LIT(b, "null");
        return 0;
    }
    struct sy_admin_rows rows = {b, 0};
    struct sy_sval p = sy_sv_text(id);
    size_t mark = b->len;
    int rc = sy_store_exec(st, "SELECT * FROM " T_BUDGET " WHERE \"budget_id\" = $1", 1, &p, sy_admin_rows_cb, &rows);
    if (rc < 0)
        return rc;
    if (!rows.n) {
        b->len = mark;
        SY_BUF_LIT(b, "null");
    }
    return 0;
}

/* Users whose user_email is email: count, and the first one's row. */
struct email_hits {
    int n;
    struct sy_admin_row row;
};
static int email_cb(void *ud, const struct sy_srow *r)
{
    struct email_hits *h = ud;
    if (!h->n++)
        sy_admin_row_cb(&h->row, r);
    return 0;
}

int sy__team_add_member(struct sy_store *st, struct sy_admin_ctx *a, const char *team_id, const char *user_id,
                        const char *user_email, int has_budget, double max_budget_in_team,
                        const char *default_budget_id, char *uid_out, size_t uid_cap, struct sy_buf *users,
                        struct sy_buf *tms)
{
    struct sy_admin_row row = {0};
    struct email_hits hits = {0};
    struct sy__cset cs = {0};
    char now[32], newid[37];
    int rc;
    sy_admin_iso_now(a, now);
    if (user_id) {
        struct sy_sval p = sy_sv_text(user_id);
        rc = sy_store_exec(st, "SELECT * FROM " T_USERS " WHERE \"user_id\" = $1", 1, &p, sy_admin_row_cb, &row);
    } else {
        struct sy_sval p = sy_sv_text(user_email);
        rc = sy_store_exec(st, "SELECT * FROM " T_USERS " WHERE \"user_email\" = $1", 1, &p, email_cb, &hits);
        if (rc >= 0 && hits.n > 1) {
            sy_admin_row_free(&hits.row);
            sy__err_dict(a, 500, "internal_server_error",
                         "Unable to add user - user_id=None user_email='%s' role='user', to team - %s, for reason - "
                         "400: {'error': \"Multiple users with this email found in db. Please use 'user_id' "
                         "instead.\"}",
                         user_email, team_id);
            return 1;
        }
        row = hits.row;
    }
    if (rc < 0)
        goto out;
    if (row.found) { /* push the team into the user's teams */
        const char *uid = sy_srow_text(&row.r, "user_id");
        snprintf(uid_out, uid_cap, "%s", uid ? uid : "");
        char *teams = sy__arr_add(sy_srow_text(&row.r, "teams"), team_id);
        sy__cset_put(&cs, "teams", sy_sv_textarr(sy__cset_own(&cs, teams)));
        sy__cset_put(&cs, "updated_at", sy_sv_ts(now));
        sy_admin_row_free(&row);
        if (users->len && users->p[users->len - 1] != '[')
            SY_BUF_LIT(users, ",");
        struct sy_admin_rows rows = {users, 0};
        rc = sy__update(st, T_USERS, "user_id", uid_out, &cs, sy__rows_nopw_cb, &rows);
    } else { /* get_new_internal_user_defaults + teams */
        if (!user_id) {
            sy_admin_uuid(newid);
            user_id = newid;
        }
        snprintf(uid_out, uid_cap, "%s", user_id);
        char teams[1024];
        struct sy_buf tb;
        sy_buf_init(&tb, 4096);
        SY_BUF_LIT(&tb, "[");
        sy_admin_jstr(&tb, team_id);
        SY_BUF_LIT(&tb, "]");
        snprintf(teams, sizeof teams, "%s", tb.p);
        sy_buf_free(&tb);
        sy__cset_put(&cs, "user_id", sy_sv_text(uid_out));
        if (user_email)
            sy__cset_put(&cs, "user_email", sy_sv_text(user_email));
        sy__cset_put(&cs, "user_role", sy_sv_text("internal_user"));
        sy__cset_put(&cs, "teams", sy_sv_textarr(teams));
        sy__cset_put(&cs, "created_at", sy_sv_ts(now));
        sy__cset_put(&cs, "updated_at", sy_sv_ts(now));
        if (users->len && users->p[users->len - 1] != '[')
            SY_BUF_LIT(users, ",");
        struct sy_admin_rows rows = {users, 0};
        rc = sy__insert(st, T_USERS, &cs, sy__rows_nopw_cb, &rows);
    }
    if (rc < 0)
        goto out;

    /* the membership row, when a budget applies */
    const char *bid = default_budget_id;
    char bidbuf[128];
    if (has_budget) {
        struct sy__cset bcs = {0};
        sy__cset_put(&bcs, "max_budget", sy_sv_num(max_budget_in_team));
        rc = sy__budget_insert(st, a, &bcs, bidbuf, NULL);
        sy__cset_free(&bcs);
        if (rc < 0)
            goto out;
        bid = bidbuf;
    }
    if (bid) {
        struct sy_sval p[3] = {sy_sv_text(uid_out), sy_sv_text(team_id), sy_sv_text(bid)};
        struct sy_admin_row tm = {0};
        rc = sy_store_exec(st,
                           "INSERT INTO " T_TM " (\"user_id\", \"team_id\", \"budget_id\", \"spend\") "
                           "VALUES ($1, $2, $3, 0) ON CONFLICT (\"user_id\", \"team_id\") DO UPDATE SET "
                           "\"budget_id\" = EXCLUDED.\"budget_id\" RETURNING *",
                           3, p, sy_admin_row_cb, &tm);
        if (rc >= 0 && tm.found) {
            int first = 1;
            if (tms->len && tms->p[tms->len - 1] != '[')
                SY_BUF_LIT(tms, ",");
            SY_BUF_LIT(tms, "{");
            sy__row_members(tms, &tm.r, NULL, &first);
            sy_admin_jkey(tms, &first, "litellm_budget_table");
            rc = sy__budget_json(st, bid, tms);
            SY_BUF_LIT(tms, "}");
        }
        sy_admin_row_free(&tm);
        if (rc < 0)
            goto out;
    }
    sy_admin_invalidate(a, "user", uid_out);
    rc = 0;
out:
    sy__cset_free(&cs);
    return rc;
}

/* ======================================================================== */
/* users                                                                     */
/* ======================================================================== */

/* User-row columns NewUserRequest / UpdateUserRequest fill. */
static const struct sy__field USER_F[] = {
    {"user_alias", SY_FK_STR, "user_alias", 0},
    {"user_email", SY_FK_STR, "user_email", 0},
    {"user_role", SY_FK_STR, "user_role", 0},
    {"team_id", SY_FK_STR, "team_id", 0},
    {"organization_id", SY_FK_STR, "organization_id", 0},
    {"max_budget", SY_FK_NUM, "max_budget", 0},
    {"spend", SY_FK_NUM, "spend", SY_FF_NOTNULL},
    {"models", SY_FK_STRARR, "models", 0},
    {"metadata", SY_FK_OBJ, "metadata", SY_FF_NOTNULL},
    {"max_parallel_requests", SY_FK_INT, "max_parallel_requests", 0},
    {"tpm_limit", SY_FK_INT, "tpm_limit", 0},
    {"rpm_limit", SY_FK_INT, "rpm_limit", 0},
    {"budget_duration", SY_FK_STR, "budget_duration", 0},
    {"allowed_cache_controls", SY_FK_STRARR, "allowed_cache_controls", 0},
    {"model_max_budget", SY_FK_OBJ, "model_max_budget", SY_FF_NOTNULL},
    {"sso_user_id", SY_FK_STR, "sso_user_id", 0},
    {"policies", SY_FK_STRARR, "policies", 0},
    /* read and type-checked only */
    {"user_id", SY_FK_STR, NULL, 0},
    {"key_alias", SY_FK_STR, NULL, 0},
    {"duration", SY_FK_STR, NULL, 0},
    {"aliases", SY_FK_OBJ, NULL, 0},
    {"config", SY_FK_OBJ, NULL, 0},
    {"permissions", SY_FK_OBJ, NULL, 0},
    {"blocked", SY_FK_BOOL, NULL, 0},
    {"auto_create_key", SY_FK_BOOL, NULL, 0},
    {"send_invite_email", SY_FK_BOOL, NULL, 0},
    {"password", SY_FK_STR, "password", 0}, /* stored as its sha256 hex (hash_password below) */
    {"guardrails", SY_FK_STRARR, NULL, 0},
    {"prompts", SY_FK_STRARR, NULL, 0},
    {"model_rpm_limit", SY_FK_OBJ, NULL, 0},
    {"model_tpm_limit", SY_FK_OBJ, NULL, 0},
    {"organizations", SY_FK_STRARR, NULL, 0},
};
#define NUSER_F ((int)(sizeof USER_F / sizeof USER_F[0]))

static const char *const ROLES[] = {"proxy_admin", "proxy_admin_viewer", "internal_user", "internal_user_viewer"};

/* user_role must be one of NewUserRequest's literals (pydantic literal_error). */
static int role_check(struct sy_admin_ctx *a, struct json_object *body)
{
    const char *role = NULL;
    if (sy_admin_get_str(a, body, "user_role", &role) != SY_AF_SET)
        return 0;
    for (size_t i = 0; i < sizeof ROLES / sizeof ROLES[0]; i++)
        if (strcmp(role, ROLES[i]) == 0)
            return 0;
    struct json_object *v = NULL;
    json_object_object_get_ex(body, "user_role", &v);
    a->status = 422;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"detail\":[{\"type\":\"literal_error\",\"loc\":[\"body\",\"user_role\"],\"msg\":\"Input "
                        "should be <LitellmUserRoles.PROXY_ADMIN: 'proxy_admin'>, "
                        "<LitellmUserRoles.PROXY_ADMIN_VIEW_ONLY: 'proxy_admin_viewer'>, "
                        "<LitellmUserRoles.INTERNAL_USER: 'internal_user'> or "
                        "<LitellmUserRoles.INTERNAL_USER_VIEW_ONLY: 'internal_user_viewer'>\",\"input\":");
    sy_buf_puts(&a->out, sy_admin_jtext(v));
    SY_BUF_LIT(&a->out, "}]}");
    return -1;
}

/* metadata with LiteLLM's management metadata fields folded in
 * (model_rpm_limit, model_tpm_limit, guardrails, prompts). NULL when none
 * of them nor metadata was given; else a malloc'd JSON text. */
static char *meta_fold(struct json_object *body, const char *existing)
{
    static const char *const MF[] = {"model_rpm_limit", "model_tpm_limit", "guardrails", "prompts"};
    struct json_object *meta = NULL, *v;
    int touched = 0;
    if (json_object_object_get_ex(body, "metadata", &v) && json_object_is_type(v, json_type_object)) {
        meta = json_tokener_parse(sy_admin_jtext(v));
        touched = 1;
    } else if (existing)
        meta = json_tokener_parse(existing);
    if (!meta || !json_object_is_type(meta, json_type_object)) {
        json_object_put(meta);
        meta = json_object_new_object();
    }
    for (size_t i = 0; i < sizeof MF / sizeof MF[0]; i++)
        if (json_object_object_get_ex(body, MF[i], &v) && v) {
            json_object_object_add(meta, MF[i], json_object_get(v));
            touched = 1;
        }
    char *t = touched ? strdup(sy_admin_jtext(meta)) : NULL;
    json_object_put(meta);
    return t;
}

static int count_cb(void *ud, const struct sy_srow *r)
{
    *(int64_t *)ud = r->ncols ? sy_srow_int(r, r->names[0], 0) : 0;
    return 0;
}

/* Join the new user to each team of `teams` (strings or NewUserRequestTeam),
 * ignoring failures as LiteLLM's _add_user_to_team does. */
static int join_teams(struct sy_store *st, struct sy_admin_ctx *a, struct json_object *teams, const char *uid,
                      const char *email)
{
    for (size_t i = 0; teams && i < json_object_array_length(teams); i++) {
        struct json_object *t = json_object_array_get_idx(teams, i), *v;
        const char *tid = NULL, *role = "user";
        int has_b = 0;
        double b = 0;
        if (json_object_is_type(t, json_type_string))
            tid = json_object_get_string(t);
        else if (json_object_is_type(t, json_type_object)) {
            if (json_object_object_get_ex(t, "team_id", &v) && json_object_is_type(v, json_type_string))
                tid = json_object_get_string(v);
            if (json_object_object_get_ex(t, "user_role", &v) && json_object_is_type(v, json_type_string))
                role = json_object_get_string(v);
            if (json_object_object_get_ex(t, "max_budget_in_team", &v) &&
                (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
                has_b = 1, b = json_object_get_double(v);
        }
        if (!tid)
            continue;
        struct sy_admin_row team = {0};
        struct sy_sval p = sy_sv_text(tid);
        int rc = sy_store_exec(st, "SELECT * FROM " T_TEAMS " WHERE \"team_id\" = $1", 1, &p, sy_admin_row_cb, &team);
        if (rc < 0)
            return rc;
        if (!team.found)
            continue; /* "Team not found": LiteLLM logs it and goes on */
        const char *mwr = sy_srow_text(&team.r, "members_with_roles");
        struct json_object *members = mwr ? json_tokener_parse(mwr) : NULL;
        if (!members || !json_object_is_type(members, json_type_array)) {
            json_object_put(members);
            members = json_object_new_array();
        }
        int dup = 0;
        for (size_t j = 0; j < json_object_array_length(members); j++) {
            struct json_object *m = json_object_array_get_idx(members, j), *mu;
            if (json_object_object_get_ex(m, "user_id", &mu) && mu && strcmp(json_object_get_string(mu), uid) == 0)
                dup = 1;
        }
        if (!dup) {
            char got[256];
            struct sy_buf ub, tb;
            sy_buf_init(&ub, 1 << 20);
            sy_buf_init(&tb, 1 << 20);
            const char *md = NULL;
            struct json_object *meta = NULL, *mb;
            const char *ms = sy_srow_text(&team.r, "metadata");
            if (ms && (meta = json_tokener_parse(ms)) && json_object_object_get_ex(meta, "team_member_budget_id", &mb))
                md = json_object_get_string(mb);
            rc = sy__team_add_member(st, a, tid, uid, email, has_b, b, md, got, sizeof got, &ub, &tb);
            json_object_put(meta);
            sy_buf_free(&ub);
            sy_buf_free(&tb);
            if (rc == 0) {
                struct json_object *m = json_object_new_object();
                json_object_object_add(m, "user_id", json_object_new_string(uid));
                json_object_object_add(m, "user_email", email ? json_object_new_string(email) : NULL);
                json_object_object_add(m, "role", json_object_new_string(role));
                json_object_array_add(members, m);
                char now[32];
                sy_admin_iso_now(a, now);
                struct sy_sval q[3] = {sy_sv_json(sy_admin_jtext(members)), sy_sv_ts(now), sy_sv_text(tid)};
                rc = sy_store_exec(st,
                                   "UPDATE " T_TEAMS " SET \"members_with_roles\" = $1, \"updated_at\" = $2 "
                                   "WHERE \"team_id\" = $3",
                                   3, q, NULL, NULL);
                sy_admin_invalidate(a, "team", tid);
            }
        }
        json_object_put(members);
        sy_admin_row_free(&team);
        if (rc < 0)
            return rc;
        if (rc > 0) { /* an error written for this team: LiteLLM ignores it */
            a->status = 200;
            sy_buf_reset(&a->out);
        }
    }
    return 0;
}

/* LiteLLM's _update_internal_new_user_params: litellm_settings'
 * default_internal_user_params fill the fields the request leaves out or
 * null (but available_teams); an internal user (internal_user /
 * internal_user_viewer, or no role, which is one) without max_budget /
 * budget_duration gets max_internal_user_budget /
 * internal_user_budget_duration. The body is changed in place. */
static void new_user_defaults(const struct sy_admin_ctx *a, struct json_object *body)
{
    const struct sy_config *c = a->table ? a->table->cfg : NULL;
    struct json_object *v;
    if (!c)
        return;
    if (c->default_internal_user_params) {
        struct json_object *d = json_tokener_parse(c->default_internal_user_params);
        if (d && json_object_is_type(d, json_type_object)) {
            json_object_object_foreach(d, k, dv)
            {
                if (strcmp(k, "available_teams") != 0 && (!json_object_object_get_ex(body, k, &v) || !v))
                    json_object_object_add(body, k, json_object_get(dv));
            }
        }
        json_object_put(d);
    }
    const char *role = json_object_object_get_ex(body, "user_role", &v) && json_object_is_type(v, json_type_string)
                           ? json_object_get_string(v)
                           : NULL;
    if (role && strcmp(role, "internal_user") != 0 && strcmp(role, "internal_user_viewer") != 0)
        return;
    if (c->max_internal_user_budget >= 0 && (!json_object_object_get_ex(body, "max_budget", &v) || !v))
        json_object_object_add(body, "max_budget", json_object_new_double(c->max_internal_user_budget));
    if (c->internal_user_budget_duration && (!json_object_object_get_ex(body, "budget_duration", &v) || !v))
        json_object_object_add(body, "budget_duration", json_object_new_string(c->internal_user_budget_duration));
}

/* A password given to /user/new or /user/update is stored as LiteLLM's
 * hash_token of it (sha256 hex), which LiteLLM's login accepts as it accepts
 * the text; the UI's login (stages/ui.c) checks it the same way. Never
 * returned (row answers leave the column out). */
static void hash_password(struct json_object *body)
{
    struct json_object *v;
    if (!body || !json_object_object_get_ex(body, "password", &v) || !json_object_is_type(v, json_type_string))
        return;
    unsigned char d[SHA256_DIGEST_LENGTH];
    char hx[65];
    SHA256((const unsigned char *)json_object_get_string(v), (size_t)json_object_get_string_len(v), d);
    sy_hex_encode(hx, d, sizeof d);
    json_object_object_add(body, "password", json_object_new_string(hx));
}

static void user_new(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a), *teams = NULL;
    hash_password(body);
    struct sy__cset cs = {0}, ks = {0};
    struct sy_admin_row urow = {0}, krow = {0};
    char uid[256], now[32], key[64], token[65], key_name[32];
    int auto_key = 1, in_tx = 0, rc;
    const char *user_id = NULL, *email = NULL, *duration = NULL, *key_alias = NULL;
    if (!body)
        return;
    new_user_defaults(a, body);
    if (sy__collect(a, body, USER_F, NUSER_F, 0, &cs) < 0 || role_check(a, body) < 0)
        goto out;
    if (sy_admin_get_arr(a, body, "teams", &teams) < 0 || sy_admin_get_bool(a, body, "auto_create_key", &auto_key) < 0)
        goto out;
    sy_admin_get_str(a, body, "user_id", &user_id);
    sy_admin_get_str(a, body, "user_email", &email);
    sy_admin_get_str(a, body, "duration", &duration);
    sy_admin_get_str(a, body, "key_alias", &key_alias);
    double dur_s = 0;
    if (duration && (dur_s = sy_duration_seconds(duration)) < 0) {
        sy_admin_error(a, 500, "internal_server_error", NULL, "Internal Server Error, Invalid duration: %s", duration);
        goto out;
    }
    if (user_id)
        snprintf(uid, sizeof uid, "%s", user_id);
    else {
        char u[37];
        sy_admin_uuid(u);
        snprintf(uid, sizeof uid, "%s", u);
    }

    /* _check_duplicate_user_id / _check_duplicate_user_email */
    {
        struct sy_admin_row dup = {0};
        struct sy_sval p = sy_sv_text(uid);
        rc = sy_store_exec(st, "SELECT \"user_id\" FROM " T_USERS " WHERE \"user_id\" = $1", 1, &p, sy_admin_row_cb,
                           &dup);
        int found = dup.found;
        sy_admin_row_free(&dup);
        if (rc < 0) {
            sy_admin_db_error(a, st, rc);
            goto out;
        }
        if (found) {
            sy__err_dict(a, 409, "internal_server_error", "User with id %s already exists", uid);
            goto out;
        }
        if (email && *email) {
            struct sy_sval q = sy_sv_text(email);
            rc = sy_store_exec(st, "SELECT \"user_email\" FROM " T_USERS " WHERE LOWER(\"user_email\") = LOWER($1)", 1,
                               &q, sy_admin_row_cb, &dup);
            if (rc < 0) {
                sy_admin_row_free(&dup);
                sy_admin_db_error(a, st, rc);
                goto out;
            }
            if (dup.found) {
                const char *ex = sy_srow_text(&dup.r, "user_email");
                sy__err_dict(a, 409, "internal_server_error", "User with email %s already exists", ex ? ex : email);
                sy_admin_row_free(&dup);
                goto out;
            }
            sy_admin_row_free(&dup);
        }
    }

    sy_admin_iso_now(a, now);
    char *meta = meta_fold(body, NULL);
    sy__cset_put(&cs, "user_id", sy_sv_text(uid));
    if (meta)
        sy__cset_put(&cs, "metadata", sy_sv_json(sy__cset_own(&cs, meta)));
    if (!sy__cset_has(&cs, "models"))
        sy__cset_put(&cs, "models", sy_sv_textarr("[]"));
    if (!sy__cset_has(&cs, "spend"))
        sy__cset_put(&cs, "spend", sy_sv_num(0));
    if (!sy__cset_has(&cs, "allowed_cache_controls"))
        sy__cset_put(&cs, "allowed_cache_controls", sy_sv_textarr("[]"));
    const struct sy_sval *bd = sy__cset_get(&cs, "budget_duration");
    if (bd && bd->k == SY_SV_TEXT) {
        double next = sy_duration_next(bd->s, a->now);
        if (next < 0) {
            sy_admin_error(a, 500, "internal_server_error", NULL, "Internal Server Error, Invalid duration: %s", bd->s);
            goto out;
        }
        char iso[32];
        sy_iso_time(next, iso);
        sy__cset_put(&cs, "budget_reset_at", sy_sv_ts(sy__cset_own(&cs, strdup(iso))));
    }
    sy__cset_put(&cs, "created_at", sy_sv_ts(now));
    sy__cset_put(&cs, "updated_at", sy_sv_ts(now));

    if ((rc = sy_store_begin(st)) < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    in_tx = 1;
    rc = sy__insert(st, T_USERS, &cs, sy_admin_row_cb, &urow);
    if (rc == SY_STORE_ECONFLICT) {
        sy__err_dict(a, 409, "internal_server_error", "User with id %s already exists", uid);
        goto out;
    }
    if (rc < 0 || !urow.found) {
        sy_admin_db_error(a, st, rc < 0 ? rc : SY_STORE_EQUERY);
        goto out;
    }

    key[0] = token[0] = 0;
    if (auto_key) { /* the key row, as generate_key_helper_fn writes it */
        sy_admin_new_key(key, sizeof key);
        sy_keys_hash(key, strlen(key), token);
        sy_keys_abbrev(key, strlen(key), key_name, sizeof key_name);
        static const char *const COPY[] = {"models",
                                           "spend",
                                           "user_id",
                                           "team_id",
                                           "max_parallel_requests",
                                           "metadata",
                                           "tpm_limit",
                                           "rpm_limit",
                                           "allowed_cache_controls",
                                           "model_max_budget",
                                           "organization_id"};
        for (size_t i = 0; i < sizeof COPY / sizeof COPY[0]; i++) {
            const struct sy_sval *v = sy__cset_get(&cs, COPY[i]);
            if (v)
                sy__cset_put(&ks, COPY[i], *v);
        }
        struct json_object *v;
        int bl;
        sy__cset_put(&ks, "token", sy_sv_text(token));
        sy__cset_put(&ks, "key_name", sy_sv_text(key_name));
        if (key_alias)
            sy__cset_put(&ks, "key_alias", sy_sv_text(key_alias));
        if (duration) {
            char exp[32];
            sy_admin_iso_after(a, dur_s, exp);
            sy__cset_put(&ks, "expires", sy_sv_ts(sy__cset_own(&ks, strdup(exp))));
        }
        static const char *const OBJS[] = {"aliases", "config", "permissions"};
        for (size_t i = 0; i < 3; i++)
            sy__cset_put(&ks, OBJS[i],
                         sy_sv_json(json_object_object_get_ex(body, OBJS[i], &v) && v
                                        ? sy__cset_own(&ks, strdup(sy_admin_jtext(v)))
                                        : "{}"));
        if (!sy__cset_has(&ks, "metadata"))
            sy__cset_put(&ks, "metadata", sy_sv_json("{}"));
        if (!sy__cset_has(&ks, "model_max_budget"))
            sy__cset_put(&ks, "model_max_budget", sy_sv_json("{}"));
        if (sy_admin_get_bool(a, body, "blocked", &bl) == SY_AF_SET)
            sy__cset_put(&ks, "blocked", sy_sv_bool(bl));
        sy__cset_put(&ks, "allowed_routes", sy_sv_textarr("[]"));
        sy__cset_put(&ks, "router_settings", sy_sv_json("{}"));
        sy__cset_put(&ks, "access_group_ids", sy_sv_textarr("[]"));
        sy__cset_put(&ks, "created_at", sy_sv_ts(now));
        sy__cset_put(&ks, "updated_at", sy_sv_ts(now));
        rc = sy__insert(st, T_KEYS, &ks, sy_admin_row_cb, &krow);
        if (rc < 0 || !krow.found) {
            sy_admin_db_error(a, st, rc < 0 ? rc : SY_STORE_EQUERY);
            goto out;
        }
    }
    {
        /* team_id: the new user is a member of that team too (LiteLLM's new_user
         * adds it as team_member_add would) */
        const char *tid = NULL;
        if (sy_admin_get_str(a, body, "team_id", &tid) == SY_AF_SET && *tid) {
            struct json_object *one = json_object_new_array();
            json_object_array_add(one, json_object_new_string(tid));
            rc = join_teams(st, a, one, uid, email);
            json_object_put(one);
            if (rc < 0) {
                sy_admin_db_error(a, st, rc);
                goto out;
            }
        }
    }
    if ((rc = join_teams(st, a, teams, uid, email)) < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    if ((rc = sy_store_commit(st)) < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    in_tx = 0;
    sy_admin_invalidate(a, "user", uid);
    if (auto_key)
        sy_admin_invalidate(a, "token", token);

    /* NewUserResponse: the key's fields updated with the user's */
    a->status = 200;
    sy_buf_reset(&a->out);
    int first = 0;
    SY_BUF_LIT(&a->out, "{\"key\":");
    sy_admin_jstr(&a->out, key);
    static const char *const KCOLS[] = {"key_name",    "key_alias", "expires",        "aliases",    "config",
                                        "permissions", "blocked",   "allowed_routes", "created_at", "updated_at"};
    for (size_t i = 0; i < sizeof KCOLS / sizeof KCOLS[0]; i++) {
        const struct sy_sval *v = krow.found ? sy_srow_get(&krow.r, KCOLS[i]) : NULL;
        if (!v && !(i >= 8)) {
            sy_admin_jkey(&a->out, &first, KCOLS[i]);
            SY_BUF_LIT(&a->out, "null");
            continue;
        }
        if (!v)
            continue;
        sy_admin_jkey(&a->out, &first, KCOLS[i]);
        sy_sval_json(&a->out, v);
    }
    static const char *const UCOLS[] = {"user_id",
                                        "user_email",
                                        "user_alias",
                                        "user_role",
                                        "team_id",
                                        "organization_id",
                                        "max_budget",
                                        "spend",
                                        "models",
                                        "metadata",
                                        "max_parallel_requests",
                                        "tpm_limit",
                                        "rpm_limit",
                                        "budget_duration",
                                        "budget_reset_at",
                                        "allowed_cache_controls",
                                        "model_max_budget",
                                        "sso_user_id"};
    for (size_t i = 0; i < sizeof UCOLS / sizeof UCOLS[0]; i++) {
        sy_admin_jkey(&a->out, &first, UCOLS[i]);
        const struct sy_sval *v = sy_srow_get(&urow.r, UCOLS[i]);
        if (v)
            sy_sval_json(&a->out, v);
        else
            SY_BUF_LIT(&a->out, "null");
    }
    if (!krow.found) {
        sy_admin_jkey(&a->out, &first, "created_at");
        sy_sval_json(&a->out, sy_srow_get(&urow.r, "created_at"));
        sy_admin_jkey(&a->out, &first, "updated_at");
        sy_sval_json(&a->out, sy_srow_get(&urow.r, "updated_at"));
    }
    sy_admin_jkey(&a->out, &first, "budget_id");
    SY_BUF_LIT(&a->out, "null");
    sy_admin_jkey(&a->out, &first, "teams");
    SY_BUF_LIT(&a->out, "null");
    SY_BUF_LIT(&a->out, "}");
out:
    if (in_tx)
        sy_store_rollback(st);
    sy_admin_row_free(&urow);
    sy_admin_row_free(&krow);
    sy__cset_free(&cs);
    sy__cset_free(&ks);
    json_object_put(body);
}

/* ---- POST /user/update ---------------------------------------------------- */

static void user_update(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a);
    hash_password(body);
    struct sy__cset cs = {0};
    struct sy_admin_row old = {0}, row = {0};
    const char *user_id = NULL, *email = NULL;
    char uid[256], now[32];
    int rc;
    if (!body)
        return;
    /* fields: non-default values only (None / [] / {} skipped), but an
     * explicit max_budget (even null) is kept */
    struct sy__field f[NUSER_F];
    memcpy(f, USER_F, sizeof f);
    for (int i = 0; i < NUSER_F; i++)
        if (!f[i].col || strcmp(f[i].name, "max_budget") != 0)
            f[i].flags |= SY_FF_NONDEF;
    if (sy__collect(a, body, f, NUSER_F, 1, &cs) < 0 || role_check(a, body) < 0)
        goto out;
    if (sy_admin_get_str(a, body, "user_id", &user_id) < 0 || sy_admin_get_str(a, body, "user_email", &email) < 0)
        goto out;
    if (!user_id && !email) {
        sy__value_error(a, body, "Either user id or user email must be provided");
        goto out;
    }
    if (user_id && *user_id) {
        snprintf(uid, sizeof uid, "%s", user_id);
        struct sy_sval p = sy_sv_text(uid);
        rc = sy_store_exec(st, "SELECT * FROM " T_USERS " WHERE \"user_id\" = $1", 1, &p, sy_admin_row_cb, &old);
    } else {
        struct sy_sval p = sy_sv_text(email);
        rc = sy_store_exec(st, "SELECT * FROM " T_USERS " WHERE \"user_email\" = $1", 1, &p, sy_admin_row_cb, &old);
        if (old.found)
            snprintf(uid, sizeof uid, "%s", sy_srow_text(&old.r, "user_id"));
        else {
            char u[37];
            sy_admin_uuid(u);
            snprintf(uid, sizeof uid, "%s", u);
            sy__cset_put(&cs, "user_email", sy_sv_text(email));
        }
    }
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    char *meta = meta_fold(body, old.found ? sy_srow_text(&old.r, "metadata") : NULL);
    if (meta)
        sy__cset_put(&cs, "metadata", sy_sv_json(sy__cset_own(&cs, meta)));
    const struct sy_sval *bd = sy__cset_get(&cs, "budget_duration");
    if (bd && bd->k == SY_SV_TEXT) {
        double next = sy_duration_next(bd->s, a->now);
        char iso[32];
        if (next < 0) {
            sy_admin_error(a, 400, "auth_error", "None", "Authentication Error, Invalid duration: %s", bd->s);
            goto out;
        }
        sy_iso_time(next, iso);
        sy__cset_put(&cs, "budget_reset_at", sy_sv_ts(sy__cset_own(&cs, strdup(iso))));
    }
    sy_admin_iso_now(a, now);
    sy__cset_put(&cs, "updated_at", sy_sv_ts(now));
    if (old.found)
        rc = sy__update(st, T_USERS, "user_id", uid, &cs, sy_admin_row_cb, &row);
    else { /* Prisma upsert: create */
        sy__cset_put(&cs, "user_id", sy_sv_text(uid));
        sy__cset_put(&cs, "created_at", sy_sv_ts(now));
        rc = sy__insert(st, T_USERS, &cs, sy_admin_row_cb, &row);
    }
    if (rc < 0 || !row.found) {
        sy_admin_db_error(a, st, rc < 0 ? rc : SY_STORE_EQUERY);
        goto out;
    }
    sy_admin_invalidate(a, "user", uid);
    a->status = 200;
    sy_buf_reset(&a->out);
    int first = 1;
    SY_BUF_LIT(&a->out, "{\"user_id\":");
    sy_admin_jstr(&a->out, uid);
    SY_BUF_LIT(&a->out, ",\"data\":{");
    sy__row_members(&a->out, &row.r, "password", &first);
    SY_BUF_LIT(&a->out, "}}");
out:
    sy_admin_row_free(&old);
    sy_admin_row_free(&row);
    sy__cset_free(&cs);
    json_object_put(body);
}

/* ---- POST /user/delete ---------------------------------------------------- */

/* Remove uid (or email) from a members_with_roles JSON array; a new text, or
 * NULL when the user was not in it. */
static char *members_without(const char *mwr, const char *uid, const char *email)
{
    struct json_object *o = mwr ? json_tokener_parse(mwr) : NULL, *n;
    int hit = 0;
    if (!o || !json_object_is_type(o, json_type_array)) {
        json_object_put(o);
        return NULL;
    }
    n = json_object_new_array();
    for (size_t i = 0; i < json_object_array_length(o); i++) {
        struct json_object *m = json_object_array_get_idx(o, i), *v;
        const char *mu = json_object_object_get_ex(m, "user_id", &v) && v ? json_object_get_string(v) : NULL;
        const char *me = json_object_object_get_ex(m, "user_email", &v) && v ? json_object_get_string(v) : NULL;
        if ((uid && mu && strcmp(uid, mu) == 0) || (email && me && strcmp(email, me) == 0)) {
            hit = 1;
            continue;
        }
        json_object_array_add(n, json_object_get(m));
    }
    char *t = hit ? strdup(sy_admin_jtext(n)) : NULL;
    json_object_put(o);
    json_object_put(n);
    return t;
}

struct team_ids {
    int n;
    char *id[256];
    char *mwr[256];
};
static int team_ids_cb(void *ud, const struct sy_srow *r)
{
    struct team_ids *t = ud;
    if (t->n >= 256)
        return 1;
    const char *id = sy_srow_text(r, "team_id"), *m = sy_srow_text(r, "members_with_roles");
    t->id[t->n] = strdup(id ? id : "");
    t->mwr[t->n++] = m ? strdup(m) : NULL;
    return 0;
}
static void team_ids_free(struct team_ids *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->id[i]), free(t->mwr[i]);
    t->n = 0;
}

static void user_delete(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a), *ids = NULL;
    struct sy_buf sql;
    struct sy_sval *p = NULL;
    int rc, in_tx = 0, n = 0;
    sy_buf_init(&sql, 1 << 20);
    if (!body)
        goto out;
    rc = sy_admin_get_strarr(a, body, "user_ids", &ids);
    if (rc < 0)
        goto out;
    if (rc != SY_AF_SET) {
        sy__missing(a, "body", "user_ids", body);
        goto out;
    }
    n = (int)json_object_array_length(ids);
    p = calloc((size_t)n + 1, sizeof *p);
    for (int i = 0; i < n; i++)
        p[i] = sy_sv_text(json_object_get_string(json_object_array_get_idx(ids, i)));
    if ((rc = sy_store_begin(st)) < 0)
        goto dberr;
    in_tx = 1;
    for (int i = 0; i < n; i++) {
        struct sy_admin_row u = {0};
        rc = sy_store_exec(st, "SELECT * FROM " T_USERS " WHERE \"user_id\" = $1", 1, &p[i], sy_admin_row_cb, &u);
        if (rc < 0) {
            sy_admin_row_free(&u);
            goto dberr;
        }
        if (!u.found) {
            sy__detail(a, 404, "User not found, passed user_id=%s", p[i].s);
            goto out;
        }
        /* cleanup members_with_roles of the user's teams */
        struct json_object *teams =
            json_tokener_parse(sy_srow_text(&u.r, "teams") ? sy_srow_text(&u.r, "teams") : "[]");
        const char *email = sy_srow_text(&u.r, "user_email");
        for (size_t j = 0; teams && json_object_is_type(teams, json_type_array) && j < json_object_array_length(teams);
             j++) {
            struct json_object *tid = json_object_array_get_idx(teams, j);
            struct team_ids t = {0};
            struct sy_sval q = sy_sv_text(json_object_get_string(tid));
            rc = sy_store_exec(st, "SELECT \"team_id\", \"members_with_roles\" FROM " T_TEAMS " WHERE \"team_id\" = $1",
                               1, &q, team_ids_cb, &t);
            if (rc >= 0 && t.n) {
                char *nm = members_without(t.mwr[0], p[i].s, email);
                if (nm) {
                    struct sy_sval w[2] = {sy_sv_json(nm), sy_sv_text(t.id[0])};
                    rc = sy_store_exec(st, "UPDATE " T_TEAMS " SET \"members_with_roles\" = $1 WHERE \"team_id\" = $2",
                                       2, w, NULL, NULL);
                    sy_admin_invalidate(a, "team", t.id[0]);
                    free(nm);
                }
            }
            team_ids_free(&t);
            if (rc < 0)
                break;
        }
        json_object_put(teams);
        sy_admin_row_free(&u);
        if (rc < 0)
            goto dberr;
    }
    static const char *const DEL[] = {
        "DELETE FROM " T_KEYS " WHERE \"user_id\" IN (",
        "DELETE FROM \"LiteLLM_OrganizationMembership\" WHERE \"user_id\" IN (",
        "DELETE FROM " T_TM " WHERE \"user_id\" IN (",
        "DELETE FROM " T_USERS " WHERE \"user_id\" IN (",
    };
    int deleted = 0;
    for (size_t k = 0; k < sizeof DEL / sizeof DEL[0] && n > 0; k++) {
        sy_buf_reset(&sql);
        sy_buf_puts(&sql, DEL[k]);
        sy__in_list(&sql, 1, n);
        SY_BUF_LIT(&sql, ")");
        rc = sy_store_exec(st, sql.p, n, p, NULL, NULL);
        if (rc < 0)
            goto dberr;
        deleted = rc;
    }
    if ((rc = sy_store_commit(st)) < 0)
        goto dberr;
    in_tx = 0;
    for (int i = 0; i < n; i++)
        sy_admin_invalidate(a, "user", p[i].s);
    a->status = 200;
    sy_buf_reset(&a->out);
    sy_buf_printf(&a->out, "%d", deleted);
    goto out;
dberr:
    sy_admin_db_error(a, st, rc);
out:
    if (in_tx)
        sy_store_rollback(st);
    free(p);
    sy_buf_free(&sql);
    json_object_put(body);
}

/* ---- GET /user/info ------------------------------------------------------- */

/* key rows as LiteLLM's _process_keys_for_user_info returns them: the row,
 * plus team_alias ("None" for a key without a team); UI session keys left out. */
struct keys_out {
    struct sy_buf *b;
    int n;
};
/* rows of KEYS_SELECT: the key row, then team_alias */
static int key_row_cb(void *ud, const struct sy_srow *r)
{
    struct keys_out *k = ud;
    const char *tid = sy_srow_text(r, "team_id");
    int first = 1;
    if (k->n++)
        SY_BUF_LIT(k->b, ",");
    SY_BUF_LIT(k->b, "{");
    for (int i = 0; i < r->ncols; i++) {
        if (strcmp(r->names[i], "__team_alias") == 0)
            continue;
        sy_admin_jkey(k->b, &first, r->names[i]);
        sy_sval_json(k->b, &r->v[i]);
    }
    sy_admin_jkey(k->b, &first, "team_alias");
    if (!tid)
        SY_BUF_LIT(k->b, "\"None\"");
    else
        sy_sval_json(k->b, sy_srow_get(r, "__team_alias"));
    SY_BUF_LIT(k->b, "}");
    return 0;
}
#define KEYS_SELECT                                                                         \
    "SELECT k.*, t.\"team_alias\" AS \"__team_alias\" FROM " T_KEYS " k LEFT JOIN " T_TEAMS \
    " t ON t.\"team_id\" = k.\"team_id\" WHERE (k.\"team_id\" IS NULL OR k.\"team_id\" <> 'litellm-dashboard')"

/* Team rows collected (members text without braces, and ids) for /user/info. */
struct team_rows {
    char *json[256], *id[256];
    int n;
};

static int team_rows_cb(void *ud, const struct sy_srow *r)
{
    struct team_rows *t = ud;
    if (t->n == 256)
        return 0;
    struct sy_buf b;
    int first = 1;
    sy_buf_init(&b, 16 << 20);
    sy__row_members(&b, r, NULL, &first);
    const char *id = sy_srow_text(r, "team_id");
    t->json[t->n] = strndup(b.p ? b.p : "", b.len);
    t->id[t->n] = strdup(id ? id : "");
    sy_buf_free(&b);
    if (t->json[t->n] && t->id[t->n])
        t->n++;
    else
        free(t->json[t->n]), free(t->id[t->n]);
    return 0;
}

static void team_rows_free(struct team_rows *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->json[i]), free(t->id[i]);
    t->n = 0;
}

/* The "LiteLLM_TeamMembership" rows of user in team, each with its
 * "litellm_budget_table", comma-separated into b. rc as sy_store_exec. */
static int memberships_json(struct sy_store *st, const char *user_id, const char *team_id, struct sy_buf *b)
{
    struct sy_admin_row m = {0};
    struct sy_sval p[2] = {sy_sv_text(user_id), sy_sv_text(team_id)};
    int rc = sy_store_exec(st, "SELECT * FROM " T_TM " WHERE \"user_id\" = $1 AND \"team_id\" = $2", 2, p,
                           sy_admin_row_cb, &m);
    if (rc > 0 && m.found) { /* (user_id, team_id) is the key: one row at most */
        int first = 1;
        SY_BUF_LIT(b, "{");
        sy__row_members(b, &m.r, NULL, &first);
        sy_admin_jkey(b, &first, "litellm_budget_table");
        rc = sy__budget_json(st, sy_srow_text(&m.r, "budget_id"), b);
        SY_BUF_LIT(b, "}");
    }
    sy_admin_row_free(&m);
    return rc;
}

static void user_info(struct sy_store *st, struct sy_admin_ctx *a)
{
    char uid[512];
    const char *user_id = sy_admin_query(a, "user_id", uid, sizeof uid);
    struct sy_admin_row u = {0};
    struct sy_buf keys, teams;
    int rc;
    sy_buf_init(&keys, 64 << 20);
    sy_buf_init(&teams, 64 << 20);
    if (user_id && !a->is_admin && !a->is_admin_viewer && (!a->caller_user_id || strcmp(user_id, a->caller_user_id))) {
        sy_admin_error(a, 403, "auth_error", "None",
                       "key not allowed to access this user's info. user_id=%s, key's user_id=%s", user_id,
                       a->caller_user_id ? a->caller_user_id : "None");
        goto done;
    }
    if (!user_id && a->is_admin && !a->caller_user_id) {
        /* _get_user_info_for_proxy_admin: every team and key */
        struct keys_out ko = {&keys, 0};
        struct sy_admin_rows tr = {&teams, 0};
        rc = sy_store_exec(st, KEYS_SELECT, 0, NULL, key_row_cb, &ko);
        if (rc >= 0)
            rc = sy_store_exec(st, "SELECT * FROM " T_TEAMS " ORDER BY COALESCE(\"team_alias\", '')", 0, NULL,
                               sy_admin_rows_cb, &tr);
        if (rc < 0) {
            sy_admin_db_error(a, st, rc);
            goto done;
        }
        a->status = 200;
        sy_buf_reset(&a->out);
        SY_BUF_LIT(&a->out, "{\"user_id\":null,\"user_info\":null,\"keys\":[");
        sy_buf_append(&a->out, keys.p ? keys.p : "", keys.len);
        SY_BUF_LIT(&a->out, "],\"teams\":[");
        sy_buf_append(&a->out, teams.p ? teams.p : "", teams.len);
        SY_BUF_LIT(&a->out, "]}");
        goto done;
    }
    if (!user_id)
        user_id = a->caller_user_id;
    if (user_id) {
        struct sy_sval p = sy_sv_text(user_id);
        rc = sy_store_exec(st, "SELECT * FROM " T_USERS " WHERE \"user_id\" = $1", 1, &p, sy_admin_row_cb, &u);
        if (rc < 0) {
            sy_admin_db_error(a, st, rc);
            goto done;
        }
    }
    if (!u.found) {
        sy_admin_error(a, 404, "internal_server_error", "None", "User %s not found", user_id ? user_id : "None");
        goto done;
    }
    {
        /* teams: the user's "teams" and the teams listing it as a member */
        struct sy_sval p = sy_sv_text(user_id);
        struct keys_out ko = {&keys, 0};
        rc = sy_store_exec(st, KEYS_SELECT " AND k.\"user_id\" = $1", 1, &p, key_row_cb, &ko);
        if (rc < 0) {
            sy_admin_db_error(a, st, rc);
            goto done;
        }
        struct team_ids all = {0};
        rc = sy_store_exec(st, "SELECT \"team_id\", \"members_with_roles\" FROM " T_TEAMS, 0, NULL, team_ids_cb, &all);
        if (rc < 0) {
            sy_admin_db_error(a, st, rc);
            goto done;
        }
        const char *ut = sy_srow_text(&u.r, "teams");
        struct sy_buf sql;
        struct sy_sval ps[256];
        int np = 0;
        sy_buf_init(&sql, 1 << 20);
        for (int i = 0; i < all.n && np < 256; i++) {
            char *nm = members_without(all.mwr[i], user_id, NULL);
            if (nm || sy__arr_has(ut, all.id[i]))
                ps[np++] = sy_sv_text(all.id[i]);
            free(nm);
        }
        struct team_rows tr = {0};
        if (np) {
            SY_BUF_LIT(&sql, "SELECT * FROM " T_TEAMS " WHERE \"team_id\" IN (");
            sy__in_list(&sql, 1, np);
            SY_BUF_LIT(&sql, ") ORDER BY COALESCE(\"team_alias\", '')");
            rc = sy_store_exec(st, sql.p, np, ps, team_rows_cb, &tr);
        }
        for (int i = 0; rc >= 0 && i < tr.n; i++) { /* each team with this user's memberships of it */
            if (i)
                SY_BUF_LIT(&teams, ",");
            SY_BUF_LIT(&teams, "{");
            sy_buf_puts(&teams, tr.json[i]);
            SY_BUF_LIT(&teams, ",\"team_memberships\":[");
            rc = memberships_json(st, user_id, tr.id[i], &teams);
            SY_BUF_LIT(&teams, "]}");
        }
        team_rows_free(&tr);
        sy_buf_free(&sql);
        team_ids_free(&all);
        if (rc < 0) {
            sy_admin_db_error(a, st, rc);
            goto done;
        }
    }
    a->status = 200;
    sy_buf_reset(&a->out);
    int first = 1;
    SY_BUF_LIT(&a->out, "{\"user_id\":");
    sy_admin_jstr(&a->out, user_id);
    SY_BUF_LIT(&a->out, ",\"user_info\":{");
    sy__row_members(&a->out, &u.r, "password", &first);
    sy_admin_limits_usage(&a->out, &first, SY_LIM_USER, user_id);
    SY_BUF_LIT(&a->out, "},\"keys\":[");
    sy_buf_append(&a->out, keys.p ? keys.p : "", keys.len);
    SY_BUF_LIT(&a->out, "],\"teams\":[");
    sy_buf_append(&a->out, teams.p ? teams.p : "", teams.len);
    SY_BUF_LIT(&a->out, "]}");
done:
    sy_admin_row_free(&u);
    sy_buf_free(&keys);
    sy_buf_free(&teams);
}

/* ---- GET /user/list ------------------------------------------------------- */

#define USERS_SELECT                                                                                            \
    "SELECT u.*, (SELECT COUNT(*) FROM " T_KEYS " k WHERE k.\"user_id\" = u.\"user_id\" AND (k.\"team_id\" IS " \
    "NULL OR k.\"team_id\" <> 'litellm-dashboard')) AS \"key_count\" FROM " T_USERS " u"

static void user_list(struct sy_store *st, struct sy_admin_ctx *a)
{
    int64_t page = 1, size = 25;
    char role[128], ids[4096], email[512], team[512], sort_by[64], order[16];
    struct sy_buf where, sql, out;
    struct sy_sval p[128];
    char *idv[100];
    int np = 0, nid = 0, rc;
    sy_buf_init(&where, 1 << 20);
    sy_buf_init(&sql, 1 << 20);
    sy_buf_init(&out, 256 << 20);
    if (sy_admin_query_int(a, "page", &page) < 0 || sy_admin_query_int(a, "page_size", &size) < 0)
        goto done;
    if (page < 1 || size < 1 || size > 100) {
        const char *n = page < 1 ? "page" : "page_size";
        int ge = page < 1 || size < 1;
        a->status = 422;
        sy_buf_reset(&a->out);
        sy_buf_printf(&a->out,
                      "{\"detail\":[{\"type\":\"%s\",\"loc\":[\"query\",\"%s\"],\"msg\":\"Input should be %s\","
                      "\"input\":\"%lld\",\"ctx\":{\"%s\":%d}}]}",
                      ge ? "greater_than_equal" : "less_than_equal", n,
                      ge ? "greater than or equal to 1" : "less than or equal to 100",
                      (long long)(page < 1 ? page : size), ge ? "ge" : "le", ge ? 1 : 100);
        goto done;
    }
    SY_BUF_LIT(&where, " WHERE 1 = 1");
    if (sy_admin_query(a, "role", role, sizeof role) && *role) {
        p[np++] = sy_sv_text(role);
        sy_buf_printf(&where, " AND u.\"user_role\" = $%d", np);
    }
    if (sy_admin_query(a, "user_ids", ids, sizeof ids) && *ids) {
        char *save = NULL; /* strtok_r: handlers run on several DB threads at once */
        for (char *s = strtok_r(ids, ",", &save); s && nid < 100; s = strtok_r(NULL, ",", &save)) {
            while (*s == ' ')
                s++;
            char *e = s + strlen(s);
            while (e > s && e[-1] == ' ')
                *--e = 0;
            if (*s)
                idv[nid++] = s;
        }
        if (nid == 1) {
            size_t pl = strlen(idv[0]) + 3;
            char *pat = malloc(pl);
            snprintf(pat, pl, "%%%s%%", idv[0]);
            idv[0] = pat;
            p[np++] = sy_sv_text(pat);
            sy_buf_printf(&where, " AND LOWER(u.\"user_id\") LIKE LOWER($%d)", np);
        } else if (nid > 1) {
            SY_BUF_LIT(&where, " AND u.\"user_id\" IN (");
            sy__in_list(&where, np + 1, nid);
            SY_BUF_LIT(&where, ")");
            for (int i = 0; i < nid; i++)
                p[np++] = sy_sv_text(idv[i]);
        }
    }
    char epat[520];
    if (sy_admin_query(a, "user_email", email, sizeof email)) {
        snprintf(epat, sizeof epat, "%%%s%%", email);
        p[np++] = sy_sv_text(epat);
        sy_buf_printf(&where, " AND LOWER(u.\"user_email\") LIKE LOWER($%d)", np);
    }
    if (sy_admin_query(a, "team", team, sizeof team)) {
        p[np++] = sy_sv_text(team);
        if (sy_store_kind(st) == SY_STORE_POSTGRES)
            sy_buf_printf(&where, " AND $%d = ANY(u.\"teams\")", np);
        else
            sy_buf_printf(&where, " AND EXISTS (SELECT 1 FROM json_each(u.\"teams\") WHERE value = $%d)", np);
    }
    const char *ord = "\"created_at\" DESC";
    char ordbuf[96];
    if (sy_admin_query(a, "sort_by", sort_by, sizeof sort_by)) {
        static const char *const VALID[] = {"user_id", "user_email", "created_at", "spend", "user_alias", "user_role"};
        int ok = 0;
        for (size_t i = 0; i < sizeof VALID / sizeof VALID[0]; i++)
            ok |= strcmp(sort_by, VALID[i]) == 0;
        if (!ok) {
            sy__detail(a, 400,
                       "Invalid sort column. Must be one of: user_id, user_email, created_at, spend, user_alias, "
                       "user_role");
            goto done;
        }
        if (!sy_admin_query(a, "sort_order", order, sizeof order))
            snprintf(order, sizeof order, "asc");
        if (strcasecmp(order, "asc") && strcasecmp(order, "desc")) {
            sy__detail(a, 400, "Invalid sort order. Must be 'asc' or 'desc'");
            goto done;
        }
        snprintf(ordbuf, sizeof ordbuf, "\"%s\" %s", sort_by, strcasecmp(order, "asc") ? "DESC" : "ASC");
        ord = ordbuf;
    }
    int64_t total = 0;
    sy_buf_printf(&sql, "SELECT COUNT(*) AS n FROM " T_USERS " u%s", where.p);
    rc = sy_store_exec(st, sql.p, np, p, count_cb, &total);
    if (rc >= 0) {
        struct sy_admin_rows lo = {&out, 0};
        sy_buf_reset(&sql);
        sy_buf_printf(&sql, USERS_SELECT "%s ORDER BY u.%s LIMIT %lld OFFSET %lld", where.p, ord, (long long)size,
                      (long long)(sy_admin_page_offset(page, size)));
        rc = sy_store_exec(st, sql.p, np, p, sy__rows_nopw_cb, &lo);
    }
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        goto done;
    }
    a->status = 200;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"users\":[");
    sy_buf_append(&a->out, out.p ? out.p : "", out.len);
    sy_buf_printf(&a->out, "],\"total\":%lld,\"page\":%lld,\"page_size\":%lld,\"total_pages\":%lld}", (long long)total,
                  (long long)page, (long long)size, (long long)((total + size - 1) / size));
done:
    if (nid == 1)
        free(idv[0]);
    sy_buf_free(&where);
    sy_buf_free(&sql);
    sy_buf_free(&out);
}

const struct sy_admin_route sy_admin_user_routes[] = {
    {HTTP_POST, "/user/new", user_new, 0},
    {HTTP_POST, "/user/update", user_update, 0},
    {HTTP_POST, "/user/delete", user_delete, 0},
    {HTTP_GET, "/user/info", user_info, SY_ADMIN_SELF | SY_ADMIN_READONLY},
    {HTTP_GET, "/user/list", user_list, SY_ADMIN_READONLY},
    {0, NULL, NULL, 0},
};
