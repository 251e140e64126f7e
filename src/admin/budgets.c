/* budgets.c - LiteLLM's budget management API on "LiteLLM_BudgetTable"
 * (proxy/management_endpoints/budget_management_endpoints.py).
 *
 *   | route               | body / query                    | answer                                  |
 *   |---------------------|---------------------------------|-----------------------------------------|
 *   | POST /budget/new    | BudgetNewRequest                | the new row                             |
 *   | POST /budget/update | BudgetNewRequest (budget_id)    | the updated row, null when unknown      |
 *   | POST /budget/delete | {"id": ..}                      | the deleted row, null when unknown      |
 *   | POST /budget/info   | {"budgets":[ids]}               | [rows]                                  |
 *   | GET  /budget/list   | -                               | [rows]                                  |
 *   | GET  /budget/settings | budget_id                     | [ConfigList per budget field]           |
 *
 * budget_reset_at defaults to the next reset of budget_duration on /new.
 * A budget can be shared by end users, team members, keys and orgs, so a
 * change invalidates every cached entry ("all").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>

#include "admin/admin_impl.h"
#include "admin/entity_impl.h"
#include "core/buf.h"
#include "core/pyrepr.h"
#include "spend/spend.h"

#define T_BUDGET "\"LiteLLM_BudgetTable\""

static const struct sy__field BUDGET_F[] = {
    {"budget_id", SY_FK_STR, "budget_id", SY_FF_NOTNULL},
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

/* max_budget / soft_budget must be finite and >= 0. */
static int limits_check(struct sy_admin_ctx *a, const struct sy__cset *cs)
{
    static const char *const F[] = {"max_budget", "soft_budget"};
    for (int i = 0; i < 2; i++) {
        const struct sy_sval *v = sy__cset_get(cs, F[i]);
        if (v && v->k == SY_SV_NUM && (!isfinite(v->d) || v->d < 0)) {
            char num[SY_PY_FLOAT_MAX];
            sy_py_float_str(num, v->d); /* the float as Python prints it: -5.0 */
            sy__detail(a, 400, "%s must be a non-negative finite number. Received: %s", F[i], num);
            return -1;
        }
    }
    return 0;
}

static void answer_row(struct sy_admin_ctx *a, const struct sy_admin_row *row)
{
    a->status = 200;
    sy_buf_reset(&a->out);
    if (!row->found) {
        SY_BUF_LIT(&a->out, "null");
        return;
    }
    int first = 1;
    SY_BUF_LIT(&a->out, "{");
    sy__row_members(&a->out, &row->r, NULL, &first);
    SY_BUF_LIT(&a->out, "}");
}

static void budget_new(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a);
    struct sy__cset cs = {0};
    struct sy_admin_row row = {0};
    char id[128];
    if (!body)
        return;
    if (sy__collect(a, body, BUDGET_F, NBUDGET_F, 0, &cs) < 0 || limits_check(a, &cs) < 0)
        goto out;
    const struct sy_sval *bd = sy__cset_get(&cs, "budget_duration");
    if (bd && !sy__cset_has(&cs, "budget_reset_at")) {
        double next = sy_duration_next(bd->s, a->now);
        char iso[32];
        if (next < 0) {
            sy_admin_error(a, 500, "internal_server_error", "None", "Internal Server Error, Invalid duration: %s",
                           bd->s);
            goto out;
        }
        sy_iso_time(next, iso);
        sy__cset_put(&cs, "budget_reset_at", sy_sv_ts(sy__cset_own(&cs, strdup(iso))));
    }
    int rc = sy__budget_insert(st, a, &cs, id, &row);
    if (rc == SY_STORE_ECONFLICT)
        sy__detail(a, 400, "Budget with id '%s' already exists.", id);
    else if (rc < 0)
        sy_admin_db_error(a, st, rc);
    else
        answer_row(a, &row);
out:
    sy_admin_row_free(&row);
    sy__cset_free(&cs);
    json_object_put(body);
}

static void budget_update(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a);
    struct sy__cset cs = {0};
    struct sy_admin_row row = {0};
    const char *id = NULL;
    char now[32];
    if (!body)
        return;
    if (sy__collect(a, body, BUDGET_F, NBUDGET_F, 1, &cs) < 0)
        goto out;
    if (sy_admin_get_str(a, body, "budget_id", &id) != SY_AF_SET) {
        sy__detail(a, 400, "budget_id is required");
        goto out;
    }
    if (limits_check(a, &cs) < 0)
        goto out;
    sy_admin_iso_now(a, now);
    sy__cset_put(&cs, "updated_at", sy_sv_ts(now));
    sy__cset_put(&cs, "updated_by", sy_sv_text(sy_admin_actor(a)));
    int rc = sy__update(st, T_BUDGET, "budget_id", id, &cs, sy_admin_row_cb, &row);
    if (rc < 0)
        sy_admin_db_error(a, st, rc);
    else {
        answer_row(a, &row);
        if (row.found)
            sy_admin_invalidate(a, "all", NULL);
    }
out:
    sy_admin_row_free(&row);
    sy__cset_free(&cs);
    json_object_put(body);
}

static void budget_delete(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a);
    struct sy_admin_row row = {0};
    const char *id = NULL;
    if (!body)
        return;
    int r = sy_admin_get_str(a, body, "id", &id);
    if (r == SY_AF_SET) {
        struct sy_sval p = sy_sv_text(id);
        int rc = sy_store_exec(st, "DELETE FROM " T_BUDGET " WHERE \"budget_id\" = $1 RETURNING *", 1, &p,
                               sy_admin_row_cb, &row);
        if (rc < 0)
            sy_admin_db_error(a, st, rc);
        else {
            answer_row(a, &row);
            if (row.found)
                sy_admin_invalidate(a, "all", NULL);
        }
    } else if (r != SY_AF_ERR)
        sy__missing(a, "body", "id", body);
    sy_admin_row_free(&row);
    json_object_put(body);
}

static void budget_info(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a), *ids = NULL;
    struct sy_buf sql;
    sy_buf_init(&sql, 1 << 20);
    if (!body)
        goto out;
    int r = sy_admin_get_strarr(a, body, "budgets", &ids);
    if (r == SY_AF_ERR)
        goto out;
    if (r != SY_AF_SET) {
        sy__missing(a, "body", "budgets", body);
        goto out;
    }
    int n = (int)json_object_array_length(ids);
    if (n == 0) {
        sy__detail(a, 400, "Specify list of budget id's to query. Passed in=[]");
        goto out;
    }
    struct sy_sval *p = calloc((size_t)n, sizeof *p);
    for (int i = 0; i < n; i++)
        p[i] = sy_sv_text(json_object_get_string(json_object_array_get_idx(ids, i)));
    SY_BUF_LIT(&sql, "SELECT * FROM " T_BUDGET " WHERE \"budget_id\" IN (");
    sy__in_list(&sql, 1, n);
    SY_BUF_LIT(&sql, ")");
    struct sy_buf rows;
    sy_buf_init(&rows, 64 << 20);
    struct sy_admin_rows rr = {&rows, 0};
    int rc = sy_store_exec(st, sql.p, n, p, sy_admin_rows_cb, &rr);
    if (rc < 0)
        sy_admin_db_error(a, st, rc);
    else {
        a->status = 200;
        sy_buf_reset(&a->out);
        SY_BUF_LIT(&a->out, "[");
        sy_buf_append(&a->out, rows.p ? rows.p : "", rows.len);
        SY_BUF_LIT(&a->out, "]");
    }
    sy_buf_free(&rows);
    free(p);
out:
    sy_buf_free(&sql);
    json_object_put(body);
}

static void budget_list(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct sy_buf rows;
    sy_buf_init(&rows, 64 << 20);
    struct sy_admin_rows rr = {&rows, 0};
    int rc = sy_store_exec(st, "SELECT * FROM " T_BUDGET " ORDER BY \"created_at\"", 0, NULL, sy_admin_rows_cb, &rr);
    if (rc < 0)
        sy_admin_db_error(a, st, rc);
    else {
        a->status = 200;
        sy_buf_reset(&a->out);
        SY_BUF_LIT(&a->out, "[");
        sy_buf_append(&a->out, rows.p ? rows.p : "", rows.len);
        SY_BUF_LIT(&a->out, "]");
    }
    sy_buf_free(&rows);
}

/* GET /budget/settings: BudgetNewRequest's configurable fields, in its order. */
static void budget_settings(struct sy_store *st, struct sy_admin_ctx *a)
{
    static const struct {
        const char *name, *type, *desc;
    } S[] = {
        {"max_budget", "Float", "Requests will fail if this budget (in USD) is exceeded."},
        {"soft_budget", "Float", "Requests will NOT fail if this is exceeded. Will fire alerting though."},
        {"max_parallel_requests", "Integer", "Max concurrent requests allowed for this budget id."},
        {"tpm_limit", "Integer", "Max tokens per minute, allowed for this budget id."},
        {"rpm_limit", "Integer", "Max requests per minute, allowed for this budget id."},
        {"budget_duration", "String", "Max duration budget should be set for (e.g. '1hr', '1d', '28d')"},
        {"model_max_budget", "Object",
         "Max budget for each model (e.g. {'gpt-4o': {'max_budget': '0.0000001', 'budget_duration': '1d', "
         "'tpm_limit': 1000, 'rpm_limit': 1000}})"},
    };
    char id[512];
    struct sy_admin_row row = {0};
    if (!sy_admin_query(a, "budget_id", id, sizeof id)) {
        sy__missing(a, "query", "budget_id", NULL);
        return;
    }
    struct sy_sval p = sy_sv_text(id);
    int rc = sy_store_exec(st, "SELECT * FROM " T_BUDGET " WHERE \"budget_id\" = $1", 1, &p, sy_admin_row_cb, &row);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        return;
    }
    a->status = 200;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "[");
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++) {
        const struct sy_sval *v = row.found ? sy_srow_get(&row.r, S[i].name) : NULL;
        sy_buf_printf(&a->out, "%s{\"field_name\":\"%s\",\"field_type\":\"%s\",\"field_description\":", i ? "," : "",
                      S[i].name, S[i].type);
        sy_admin_jstr(&a->out, S[i].desc);
        SY_BUF_LIT(&a->out, ",\"field_value\":");
        if (v)
            sy_sval_json(&a->out, v);
        else
            SY_BUF_LIT(&a->out, "null");
        SY_BUF_LIT(&a->out, ",\"stored_in_db\":true,\"field_default_value\":null,\"premium_field\":false,"
                            "\"nested_fields\":null}");
    }
    SY_BUF_LIT(&a->out, "]");
    sy_admin_row_free(&row);
}

const struct sy_admin_route sy_admin_budget_routes[] = {
    {HTTP_POST, "/budget/new", budget_new, 0},
    {HTTP_POST, "/budget/update", budget_update, 0},
    {HTTP_POST, "/budget/delete", budget_delete, 0},
    {HTTP_POST, "/budget/info", budget_info, SY_ADMIN_READONLY},
    {HTTP_GET, "/budget/list", budget_list, SY_ADMIN_READONLY},
    {HTTP_GET, "/budget/settings", budget_settings, SY_ADMIN_READONLY},
    {0, NULL, NULL, 0},
};
