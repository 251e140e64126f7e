/* customers.c - LiteLLM's customer (end-user) management API on
 * "LiteLLM_EndUserTable" (proxy/management_endpoints/customer_endpoints.py),
 * also served under /end_user/... as LiteLLM does.
 *
 *   | route                 | body / query                       | answer                                       |
 *   |-----------------------|------------------------------------|----------------------------------------------|
 *   | POST /customer/new    | NewCustomerRequest (user_id)       | row + litellm_budget_table + object_permission |
 *   | POST /customer/update | UpdateCustomerRequest (user_id)    | row + litellm_budget_table + object_permission |
 *   | POST /customer/delete | {"user_ids":[..]}                  | {"deleted_customers":n,"message":..}         |
 *   | GET  /customer/info   | end_user_id                        | row + litellm_budget_table, nulls left out   |
 *   | GET  /customer/list   | -                                  | [row + litellm_budget_table + object_permission] |
 *   | POST /customer/block  | {"user_ids":[..]}                  | {"blocked_users":[row..]} (rows created)     |
 *   | POST /customer/unblock| {"user_ids":[..]}                  | {"blocked_users":[row..]}                    |
 *
 * Budget fields (max_budget, soft_budget, max_parallel_requests, tpm_limit,
 * rpm_limit, budget_duration, model_max_budget, budget_reset_at) make a
 * "LiteLLM_BudgetTable" row linked by budget_id (new_budget_request; its
 * budget_reset_at is now + duration); on update they update the linked row
 * or create one. /customer/unblock clears `blocked` on the rows (LiteLLM's
 * only edits an enterprise in-memory list and answers 400 without it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>

#include "admin/admin_impl.h"
#include "admin/entity_impl.h"
#include "core/buf.h"
#include "core/pyrepr.h"
#include "spend/spend.h"

#define T_EU     "\"LiteLLM_EndUserTable\""
#define T_BUDGET "\"LiteLLM_BudgetTable\""

static const struct sy__field BUDGET_F[] = {
    {"max_budget", SY_FK_NUM, "max_budget", 0},
    {"soft_budget", SY_FK_NUM, "soft_budget", 0},
    {"max_parallel_requests", SY_FK_INT, "max_parallel_requests", 0},
    {"tpm_limit", SY_FK_INT, "tpm_limit", 0},
    {"rpm_limit", SY_FK_INT, "rpm_limit", 0},
    {"budget_duration", SY_FK_STR, "budget_duration", 0},
    {"model_max_budget", SY_FK_OBJ, "model_max_budget", 0},
    {"budget_reset_at", SY_FK_TS, "budget_reset_at", 0},
};
#define NBUDGET_F ((int)(sizeof BUDGET_F / sizeof BUDGET_F[0]))

static const struct sy__field EU_F[] = {
    {"alias", SY_FK_STR, "alias", 0},
    {"blocked", SY_FK_BOOL, "blocked", SY_FF_NOTNULL},
    {"budget_id", SY_FK_STR, "budget_id", 0},
    {"spend", SY_FK_NUM, "spend", SY_FF_NOTNULL},
    {"allowed_model_region", SY_FK_STR, "allowed_model_region", 0},
    {"default_model", SY_FK_STR, "default_model", 0},
    {"object_permission", SY_FK_OBJ, NULL, 0},
};
#define NEU_F ((int)(sizeof EU_F / sizeof EU_F[0]))

/* The end-user row with its budget: "SELECT e.*, b_* ..." */
#define EU_SELECT                                                                                                 \
    "SELECT e.*, b.\"budget_id\" AS \"b_budget_id\", b.\"max_budget\" AS \"b_max_budget\", b.\"soft_budget\" AS " \
    "\"b_soft_budget\", b.\"max_parallel_requests\" AS \"b_max_parallel_requests\", b.\"tpm_limit\" AS "          \
    "\"b_tpm_limit\", b.\"rpm_limit\" AS \"b_rpm_limit\", b.\"model_max_budget\" AS \"b_model_max_budget\", "     \
    "b.\"budget_duration\" AS \"b_budget_duration\", b.\"budget_reset_at\" AS \"b_budget_reset_at\", "            \
    "b.\"created_at\" "                                                                                           \
    "AS \"b_created_at\", b.\"created_by\" AS \"b_created_by\", b.\"updated_at\" AS \"b_updated_at\", "           \
    "b.\"updated_by\" AS \"b_updated_by\", b.\"allowed_models\" AS \"b_allowed_models\" FROM " T_EU               \
    " e LEFT JOIN " T_BUDGET " b ON b.\"budget_id\" = e.\"budget_id\" "

struct eu_out {
    struct sy_buf *b;
    int n;
    int skip_nulls; /* model_dump(exclude_none=True) */
};
static int eu_cb(void *ud, const struct sy_srow *r)
{
    struct eu_out *o = ud;
    int first = 1;
    if (o->n++)
        SY_BUF_LIT(o->b, ",");
    SY_BUF_LIT(o->b, "{");
    for (int i = 0; i < r->ncols; i++) {
        if (strncmp(r->names[i], "b_", 2) == 0 || (o->skip_nulls && r->v[i].k == SY_SV_NULL))
            continue;
        sy_admin_jkey(o->b, &first, r->names[i]);
        sy_sval_json(o->b, &r->v[i]);
    }
    if (sy_srow_text(r, "b_budget_id")) {
        int f2 = 1;
        sy_admin_jkey(o->b, &first, "litellm_budget_table");
        SY_BUF_LIT(o->b, "{");
        for (int i = 0; i < r->ncols; i++)
            if (strncmp(r->names[i], "b_", 2) == 0 && !(o->skip_nulls && r->v[i].k == SY_SV_NULL)) {
                sy_admin_jkey(o->b, &f2, r->names[i] + 2);
                sy_sval_json(o->b, &r->v[i]);
            }
        SY_BUF_LIT(o->b, "}");
    } else if (!o->skip_nulls) {
        sy_admin_jkey(o->b, &first, "litellm_budget_table");
        SY_BUF_LIT(o->b, "null");
    }
    if (!o->skip_nulls) {
        sy_admin_jkey(o->b, &first, "object_permission");
        SY_BUF_LIT(o->b, "null");
    }
    SY_BUF_LIT(o->b, "}");
    return 0;
}

/* a->out = the customer row (EU_SELECT) of id; 0, or < 0 (store), 1 when absent */
static int answer_row(struct sy_store *st, struct sy_admin_ctx *a, const char *id, int skip_nulls)
{
    struct sy_buf b;
    struct eu_out o = {&b, 0, skip_nulls};
    struct sy_sval p = sy_sv_text(id);
    sy_buf_init(&b, 1 << 20);
    int rc = sy_store_exec(st, EU_SELECT "WHERE e.\"user_id\" = $1", 1, &p, eu_cb, &o);
    if (rc >= 0 && o.n) {
        a->status = 200;
        sy_buf_reset(&a->out);
        sy_buf_append_buf(&a->out, &b);
    }
    sy_buf_free(&b);
    return rc < 0 ? rc : o.n ? 0 : 1;
}

static int budget_reset(struct sy_admin_ctx *a, struct sy__cset *cs)
{
    const struct sy_sval *bd = sy__cset_get(cs, "budget_duration");
    if (!bd || bd->k != SY_SV_TEXT || sy__cset_has(cs, "budget_reset_at"))
        return 0;
    double s = sy_duration_seconds(bd->s);
    char iso[32];
    if (s < 0) {
        sy_admin_error(a, 500, "internal_server_error", "None", "Internal Server Error, Invalid duration: %s", bd->s);
        return -1;
    }
    sy_admin_iso_after(a, s, iso);
    sy__cset_put(cs, "budget_reset_at", sy_sv_ts(sy__cset_own(cs, strdup(iso))));
    return 0;
}

static int required_id(struct sy_admin_ctx *a, struct json_object *body, const char **out)
{
    int r = sy_admin_get_str(a, body, "user_id", out);
    if (r == SY_AF_ERR)
        return -1;
    if (r != SY_AF_SET) {
        struct json_object *v = NULL;
        json_object_object_get_ex(body, "user_id", &v);
        if (r == SY_AF_NULL)
            sy_admin_422(a, "user_id", "string_type", "Input should be a valid string", v);
        else
            sy__missing(a, "body", "user_id", body);
        return -1;
    }
    return 0;
}

static int region_check(struct sy_admin_ctx *a, struct json_object *body)
{
    const char *r = NULL;
    if (sy_admin_get_str(a, body, "allowed_model_region", &r) != SY_AF_SET || !strcmp(r, "eu") || !strcmp(r, "us"))
        return 0;
    struct json_object *v = NULL;
    json_object_object_get_ex(body, "allowed_model_region", &v);
    a->status = 422;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"detail\":[{\"type\":\"literal_error\",\"loc\":[\"body\",\"allowed_model_region\"],"
                        "\"msg\":\"Input should be 'eu' or 'us'\",\"input\":");
    sy_buf_puts(&a->out, sy_admin_jtext(v));
    SY_BUF_LIT(&a->out, ",\"ctx\":{\"expected\":\"'eu' or 'us'\"}}]}");
    return -1;
}

/* ---- POST /customer/new --------------------------------------------------- */

/* The transactions of /customer/new and /customer/update: the budget row
 * (inserted or updated), the end user, and the answer read back. */
struct customer_tx {
    const char *uid;
    struct sy__cset *bcs, *cs;
    const struct sy_admin_row *old; /* update: the row before */
};

static int new_tx(struct sy_store *st, struct sy_admin_ctx *a, void *ud)
{
    struct customer_tx *x = ud;
    int rc;
    if (x->bcs->n) {
        char bid[128];
        if (budget_reset(a, x->bcs) < 0)
            return SY_ADMIN_TX_ABORT;
        if ((rc = sy__budget_insert(st, a, x->bcs, bid, NULL)) < 0)
            return rc;
        sy__cset_put(x->cs, "budget_id", sy_sv_text(sy__cset_own(x->cs, strdup(bid))));
    }
    sy__cset_put(x->cs, "user_id", sy_sv_text(x->uid));
    if (!sy__cset_has(x->cs, "spend"))
        sy__cset_put(x->cs, "spend", sy_sv_num(0));
    if (!sy__cset_has(x->cs, "blocked"))
        sy__cset_put(x->cs, "blocked", sy_sv_bool(0));
    rc = sy__insert(st, T_EU, x->cs, NULL, NULL);
    if (rc == SY_STORE_ECONFLICT) {
        sy_admin_error(a, 400, "bad_request", "user_id",
                       "Customer already exists, passed user_id=%s. Please pass a new user_id.", x->uid);
        return SY_ADMIN_TX_ABORT;
    }
    if (rc < 0 || (rc = answer_row(st, a, x->uid, 0)) < 0)
        return rc;
    return 0;
}

static int update_tx(struct sy_store *st, struct sy_admin_ctx *a, void *ud)
{
    struct customer_tx *x = ud;
    int rc = 0;
    if (x->bcs->n) {
        const char *bid = sy_srow_text(&x->old->r, "budget_id");
        if (bid) {
            char now[32];
            sy_admin_iso_now(a, now);
            sy__cset_put(x->bcs, "updated_at", sy_sv_ts(sy__cset_own(x->bcs, strdup(now))));
            rc = sy__update(st, T_BUDGET, "budget_id", bid, x->bcs, NULL, NULL);
        } else {
            char nb[128];
            rc = sy__budget_insert(st, a, x->bcs, nb, NULL);
            if (rc >= 0 && !sy__cset_has(x->cs, "budget_id"))
                sy__cset_put(x->cs, "budget_id", sy_sv_text(sy__cset_own(x->cs, strdup(nb))));
        }
        if (rc < 0)
            return rc;
    }
    if (x->cs->n && (rc = sy__update(st, T_EU, "user_id", x->uid, x->cs, NULL, NULL)) < 0)
        return rc;
    if ((rc = answer_row(st, a, x->uid, 0)) < 0)
        return rc;
    return 0;
}

static void customer_new(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a);
    struct sy__cset bcs = {0}, cs = {0};
    const char *uid = NULL;
    if (!body)
        return;
    if (required_id(a, body, &uid) < 0 || sy__collect(a, body, BUDGET_F, NBUDGET_F, 0, &bcs) < 0 ||
        sy__collect(a, body, EU_F, NEU_F, 0, &cs) < 0 || region_check(a, body) < 0)
        goto out;
    if (sy__cset_has(&bcs, "max_budget") && sy__cset_has(&cs, "budget_id")) {
        sy__value_error(a, body, "Set either 'max_budget' or 'budget_id', not both.");
        goto out;
    }
    struct customer_tx tx = {uid, &bcs, &cs, NULL};
    if (sy_admin_tx(st, a, new_tx, &tx) == 0)
        sy_admin_invalidate(a, "end_user", uid);
out:
    sy__cset_free(&bcs);
    sy__cset_free(&cs);
    json_object_put(body);
}

/* ---- POST /customer/update ------------------------------------------------ */

static void customer_update(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a);
    struct sy__cset bcs = {0}, cs = {0};
    struct sy_admin_row old = {0};
    const char *uid = NULL;
    int rc;
    if (!body)
        return;
    /* non_default_values: None, [], {} and 0 / False are skipped */
    if (required_id(a, body, &uid) < 0 || sy__collect(a, body, BUDGET_F, NBUDGET_F, 0, &bcs) < 0 ||
        sy__collect(a, body, EU_F, NEU_F, 0, &cs) < 0 || region_check(a, body) < 0)
        goto out;
    for (int i = bcs.n; i-- > 0;)
        if ((bcs.v[i].k == SY_SV_NUM && bcs.v[i].d == 0) || (bcs.v[i].k == SY_SV_INT && bcs.v[i].i == 0)) {
            bcs.col[i] = bcs.col[bcs.n - 1], bcs.v[i] = bcs.v[bcs.n - 1];
            bcs.n--;
        }
    for (int i = cs.n; i-- > 0;)
        if ((cs.v[i].k == SY_SV_BOOL && !cs.v[i].i) || (cs.v[i].k == SY_SV_NUM && cs.v[i].d == 0) ||
            strcmp(cs.col[i], "spend") == 0) {
            cs.col[i] = cs.col[cs.n - 1], cs.v[i] = cs.v[cs.n - 1];
            cs.n--;
        }
    struct sy_sval p = sy_sv_text(uid);
    if ((rc = sy_store_exec(st, "SELECT * FROM " T_EU " WHERE \"user_id\" = $1", 1, &p, sy_admin_row_cb, &old)) < 0)
        goto dberr;
    if (!old.found) {
        sy_admin_error(a, 404, "not_found", "user_id", "End User Id=%s does not exist in db", uid);
        goto out;
    }
    struct customer_tx tx = {uid, &bcs, &cs, &old};
    if (sy_admin_tx(st, a, update_tx, &tx) == 0)
        sy_admin_invalidate(a, "end_user", uid);
    goto out;
dberr:
    sy_admin_db_error(a, st, rc);
out:
    sy_admin_row_free(&old);
    sy__cset_free(&bcs);
    sy__cset_free(&cs);
    json_object_put(body);
}

/* ---- POST /customer/delete ------------------------------------------------ */

static int ids_arg(struct sy_admin_ctx *a, struct json_object *body, struct json_object **ids)
{
    int r = sy_admin_get_strarr(a, body, "user_ids", ids);
    if (r == SY_AF_ERR)
        return -1;
    if (r != SY_AF_SET) {
        sy__missing(a, "body", "user_ids", body);
        return -1;
    }
    return 0;
}

struct idset {
    int n;
    char *id[1024];
};
static int idset_cb(void *ud, const struct sy_srow *r)
{
    struct idset *s = ud;
    if (s->n < 1024)
        s->id[s->n++] = strdup(sy_srow_text(r, "user_id") ? sy_srow_text(r, "user_id") : "");
    return 0;
}

static void customer_delete(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a), *ids = NULL;
    struct idset have = {0};
    struct sy_buf sql, miss, list;
    struct sy_sval *p = NULL;
    int rc, n;
    sy_buf_init(&sql, 1 << 20);
    sy_buf_init(&miss, 1 << 20);
    sy_buf_init(&list, 1 << 20);
    if (!body || ids_arg(a, body, &ids) < 0)
        goto out;
    n = (int)json_object_array_length(ids);
    SY_BUF_LIT(&list, "[");
    for (int i = 0; i < n; i++) {
        if (i)
            SY_BUF_LIT(&list, ", ");
        const char *id = json_object_get_string(json_object_array_get_idx(ids, i));
        if (id)
            sy_py_str_repr(&list, id, strlen(id));
        else
            SY_BUF_LIT(&list, "None");
    }
    SY_BUF_LIT(&list, "]");
    if (n == 0) {
        sy_admin_error(a, 500, "internal_server_error", "None",
                       "Internal Server Error, user_id is required, passed user_id = []");
        goto out;
    }
    p = calloc((size_t)n, sizeof *p);
    for (int i = 0; i < n; i++)
        p[i] = sy_sv_text(json_object_get_string(json_object_array_get_idx(ids, i)));
    SY_BUF_LIT(&sql, "SELECT \"user_id\" FROM " T_EU " WHERE \"user_id\" IN (");
    sy__in_list(&sql, 1, n);
    SY_BUF_LIT(&sql, ")");
    if ((rc = sy_store_exec(st, sql.p, n, p, idset_cb, &have)) < 0)
        goto dberr;
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (int j = 0; j < have.n && !found; j++)
            found = strcmp(have.id[j], p[i].s) == 0;
        if (!found)
            sy_buf_printf(&miss, "%s%s", miss.len ? ", " : "", p[i].s);
    }
    if (miss.len) {
        sy_admin_error(a, 404, "not_found", "user_ids", "End User Id(s)=%s do not exist in db", miss.p);
        goto out;
    }
    sy_buf_reset(&sql);
    SY_BUF_LIT(&sql, "DELETE FROM " T_EU " WHERE \"user_id\" IN (");
    sy__in_list(&sql, 1, n);
    SY_BUF_LIT(&sql, ")");
    if ((rc = sy_store_exec(st, sql.p, n, p, NULL, NULL)) < 0)
        goto dberr;
    for (int i = 0; i < n; i++)
        sy_admin_invalidate(a, "end_user", p[i].s);
    a->status = 200;
    sy_buf_reset(&a->out);
    sy_buf_printf(&a->out, "{\"deleted_customers\":%d,\"message\":", rc);
    char msg[8192];
    snprintf(msg, sizeof msg, "Successfully deleted customers with ids: %s", list.p);
    sy_admin_jstr(&a->out, msg);
    SY_BUF_LIT(&a->out, "}");
    goto out;
dberr:
    sy_admin_db_error(a, st, rc);
out:
    for (int i = 0; i < have.n; i++)
        free(have.id[i]);
    free(p);
    sy_buf_free(&sql);
    sy_buf_free(&miss);
    sy_buf_free(&list);
    json_object_put(body);
}

/* ---- GET /customer/info, /customer/list ----------------------------------- */

static void customer_info(struct sy_store *st, struct sy_admin_ctx *a)
{
    char id[512];
    if (!sy_admin_query(a, "end_user_id", id, sizeof id)) {
        sy__missing(a, "query", "end_user_id", NULL);
        return;
    }
    int rc = answer_row(st, a, id, 1);
    if (rc < 0)
        sy_admin_db_error(a, st, rc);
    else if (rc > 0)
        sy_admin_error(a, 404, "not_found", "end_user_id", "End User Id=%s does not exist in db", id);
}

static void customer_list(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct sy_buf b;
    struct eu_out o = {&b, 0, 0};
    sy_buf_init(&b, 256 << 20);
    int rc = sy_store_exec(st, EU_SELECT "ORDER BY e.\"user_id\"", 0, NULL, eu_cb, &o);
    if (rc < 0)
        sy_admin_db_error(a, st, rc);
    else {
        a->status = 200;
        sy_buf_reset(&a->out);
        SY_BUF_LIT(&a->out, "[");
        sy_buf_append(&a->out, b.p ? b.p : "", b.len);
        SY_BUF_LIT(&a->out, "]");
    }
    sy_buf_free(&b);
}

/* ---- POST /customer/block, /customer/unblock ------------------------------ */

static void set_blocked(struct sy_store *st, struct sy_admin_ctx *a, int blocked)
{
    struct json_object *body = sy_admin_body(a), *ids = NULL;
    struct sy_buf rows;
    int rc = 0;
    sy_buf_init(&rows, 64 << 20);
    if (!body || ids_arg(a, body, &ids) < 0)
        goto out;
    struct sy_admin_rows r = {&rows, 0};
    for (size_t i = 0; i < json_object_array_length(ids); i++) {
        const char *id = json_object_get_string(json_object_array_get_idx(ids, i));
        struct sy_sval p[2] = {sy_sv_text(id), sy_sv_bool(blocked)};
        if (blocked) /* upsert: create {"user_id", "blocked": true} / update blocked */
            rc = sy_store_exec(st,
                               "INSERT INTO " T_EU " (\"user_id\", \"blocked\", \"spend\") VALUES ($1, $2, 0) "
                               "ON CONFLICT (\"user_id\") DO UPDATE SET \"blocked\" = EXCLUDED.\"blocked\" RETURNING *",
                               2, p, sy_admin_rows_cb, &r);
        else
            rc = sy_store_exec(st, "UPDATE " T_EU " SET \"blocked\" = $2 WHERE \"user_id\" = $1 RETURNING *", 2, p,
                               sy_admin_rows_cb, &r);
        if (rc < 0)
            break;
        sy_admin_invalidate(a, "end_user", id);
    }
    if (rc < 0) {
        sy__detail(a, 500, "%s", sy_store_errmsg(st) ? sy_store_errmsg(st) : "DB error");
        goto out;
    }
    a->status = 200;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"blocked_users\":[");
    sy_buf_append(&a->out, rows.p ? rows.p : "", rows.len);
    SY_BUF_LIT(&a->out, "]}");
out:
    sy_buf_free(&rows);
    json_object_put(body);
}
static void customer_block(struct sy_store *st, struct sy_admin_ctx *a)
{
    set_blocked(st, a, 1);
}
static void customer_unblock(struct sy_store *st, struct sy_admin_ctx *a)
{
    set_blocked(st, a, 0);
}

const struct sy_admin_route sy_admin_customer_routes[] = {
    {HTTP_POST, "/customer/new", customer_new, 0},
    {HTTP_POST, "/customer/update", customer_update, 0},
    {HTTP_POST, "/customer/delete", customer_delete, 0},
    {HTTP_GET, "/customer/info", customer_info, SY_ADMIN_READONLY},
    {HTTP_GET, "/customer/list", customer_list, SY_ADMIN_READONLY},
    {HTTP_POST, "/customer/block", customer_block, 0},
    {HTTP_POST, "/customer/unblock", customer_unblock, 0},
    {HTTP_POST, "/end_user/new", customer_new, 0},
    {HTTP_POST, "/end_user/update", customer_update, 0},
    {HTTP_POST, "/end_user/delete", customer_delete, 0},
    {HTTP_GET, "/end_user/info", customer_info, SY_ADMIN_READONLY},
    {HTTP_GET, "/end_user/list", customer_list, SY_ADMIN_READONLY},
    {HTTP_POST, "/end_user/block", customer_block, 0},
    {HTTP_POST, "/end_user/unblock", customer_unblock, 0},
    {0, NULL, NULL, 0},
};
