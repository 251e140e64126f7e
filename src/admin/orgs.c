/* orgs.c - LiteLLM's organization management API on
 * "LiteLLM_OrganizationTable" and "LiteLLM_OrganizationMembership"
 * (proxy/management_endpoints/organization_endpoints.py).
 *
 *   | route                        | body / query                          | answer                              |
 *   |------------------------------|---------------------------------------|-------------------------------------|
 *   | POST /organization/new       | NewOrganizationRequest                | the new row                         |
 *   |                              | (organization_alias required)         |                                     |
 *   | PATCH|POST /organization/update | organization_id + fields           | row + litellm_budget_table          |
 *   | DELETE|POST /organization/delete | {"organization_ids":[..]}         | [deleted rows]                      |
 *   | GET  /organization/info      | organization_id                       | row + litellm_budget_table +        |
 *   |                              |                                       |  members + teams                    |
 *   | POST /organization/info      | {"organizations":[..]} (deprecated)   | [row + litellm_budget_table]        |
 *   | GET  /organization/list      | -                                     | [row + litellm_budget_table +       |
 *   |                              |                                       |  members + teams]                   |
 *   | POST /organization/member_add| {"organization_id","member":{..}|[..],| {"organization_id","updated_users", |
 *   |                              |  "max_budget_in_organization"}        |  "updated_organization_memberships"}|
 *
 * Every organization has a budget row: budget_id as given, else one made of
 * the request's budget fields (max_budget, tpm_limit, ...). Deleting an
 * organization deletes its teams, keys and memberships, as LiteLLM does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>

#include "admin/admin_impl.h"
#include "admin/entity_impl.h"
#include "core/buf.h"
#include "spend/spend.h"

#define T_ORG    "\"LiteLLM_OrganizationTable\""
#define T_OM     "\"LiteLLM_OrganizationMembership\""
#define T_BUDGET "\"LiteLLM_BudgetTable\""
#define T_USERS  "\"LiteLLM_UserTable\""

static const struct sy__field BUDGET_F[] = {
    {"max_budget", SY_FK_NUM, "max_budget", 0},
    {"soft_budget", SY_FK_NUM, "soft_budget", 0},
    {"max_parallel_requests", SY_FK_INT, "max_parallel_requests", 0},
    {"tpm_limit", SY_FK_INT, "tpm_limit", 0},
    {"rpm_limit", SY_FK_INT, "rpm_limit", 0},
    {"budget_duration", SY_FK_STR, "budget_duration", 0},
    {"model_max_budget", SY_FK_OBJ, "model_max_budget", 0},
};
#define NBUDGET_F ((int)(sizeof BUDGET_F / sizeof BUDGET_F[0]))

static const struct sy__field ORG_F[] = {
    {"organization_alias", SY_FK_STR, "organization_alias", SY_FF_NOTNULL},
    {"models", SY_FK_STRARR, "models", 0},
    {"budget_id", SY_FK_STR, "budget_id", SY_FF_NOTNULL},
    {"metadata", SY_FK_OBJ, "metadata", SY_FF_NOTNULL},
    {"spend", SY_FK_NUM, "spend", SY_FF_NOTNULL},
    {"organization_id", SY_FK_STR, NULL, 0},
    {"model_rpm_limit", SY_FK_OBJ, NULL, 0},
    {"model_tpm_limit", SY_FK_OBJ, NULL, 0},
    {"object_permission", SY_FK_OBJ, NULL, 0},
};
#define NORG_F ((int)(sizeof ORG_F / sizeof ORG_F[0]))

static int reset_at(struct sy_admin_ctx *a, struct sy__cset *cs)
{
    const struct sy_sval *bd = sy__cset_get(cs, "budget_duration");
    if (!bd || bd->k != SY_SV_TEXT)
        return 0;
    double next = sy_duration_next(bd->s, a->now);
    char iso[32];
    if (next < 0) {
        sy_admin_error(a, 500, "internal_server_error", "None", "Internal Server Error, Invalid duration: %s", bd->s);
        return -1;
    }
    sy_iso_time(next, iso);
    sy__cset_put(cs, "budget_reset_at", sy_sv_ts(sy__cset_own(cs, strdup(iso))));
    return 0;
}

/* The org row of id as JSON into b with "litellm_budget_table" (and, when
 * full, "members" and "teams"); returns rows found (0/1) or < 0. */
static int org_json(struct sy_store *st, const char *id, int full, struct sy_buf *b)
{
    struct sy_admin_row row = {0};
    struct sy_sval p = sy_sv_text(id);
    int rc = sy_store_exec(st, "SELECT * FROM " T_ORG " WHERE \"organization_id\" = $1", 1, &p, sy_admin_row_cb, &row);
    if (rc < 0 || !row.found) {
        sy_admin_row_free(&row);
        return rc < 0 ? rc : 0;
    }
    int first = 1;
    SY_BUF_LIT(b, "{");
    sy__row_members(b, &row.r, NULL, &first);
    rc = sy__objperm_member(st, b, &first, sy_srow_text(&row.r, "object_permission_id"));
    sy_admin_jkey(b, &first, "litellm_budget_table");
    if (rc >= 0)
        rc = sy__budget_json(st, sy_srow_text(&row.r, "budget_id"), b);
    if (rc >= 0 && full) {
        struct sy_admin_rows rr = {b, 0};
        SY_BUF_LIT(b, ",\"members\":[");
        rc = sy_store_exec(st, "SELECT * FROM " T_OM " WHERE \"organization_id\" = $1", 1, &p, sy_admin_rows_cb, &rr);
        SY_BUF_LIT(b, "],\"teams\":[");
        rr.n = 0;
        if (rc >= 0)
            rc = sy_store_exec(st, "SELECT * FROM \"LiteLLM_TeamTable\" WHERE \"organization_id\" = $1", 1, &p,
                               sy_admin_rows_cb, &rr);
        SY_BUF_LIT(b, "]");
    }
    SY_BUF_LIT(b, "}");
    sy_admin_row_free(&row);
    return rc < 0 ? rc : 1;
}

/* ---- POST /organization/new ----------------------------------------------- */

static void org_new(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a);
    struct sy__cset bcs = {0}, cs = {0};
    struct sy_admin_row row = {0};
    const char *alias = NULL, *oid = NULL;
    char id[128], bid[128], now[32];
    int rc, in_tx = 0;
    if (!body)
        return;
    if (!a->is_admin) {
        sy__detail(a, 401, "Only admins can create orgs. Your role is = %s", "None");
        goto out;
    }
    struct json_object *op = NULL;
    char op_id[128] = "";
    if (sy__collect(a, body, BUDGET_F, NBUDGET_F, 0, &bcs) < 0 || sy__collect(a, body, ORG_F, NORG_F, 0, &cs) < 0 ||
        sy__objperm_get(a, body, &op) < 0)
        goto out;
    if (sy_admin_get_str(a, body, "organization_alias", &alias) != SY_AF_SET) {
        struct json_object *v = NULL;
        if (json_object_object_get_ex(body, "organization_alias", &v))
            sy_admin_422(a, "organization_alias", "string_type", "Input should be a valid string", v);
        else
            sy__missing(a, "body", "organization_alias", body);
        goto out;
    }
    sy_admin_get_str(a, body, "organization_id", &oid);
    if (oid)
        snprintf(id, sizeof id, "%s", oid);
    else {
        char u[37];
        sy_admin_uuid(u);
        snprintf(id, sizeof id, "%s", u);
    }
    if ((rc = sy_store_begin(st)) < 0)
        goto dberr;
    in_tx = 1;
    if (!sy__cset_has(&cs, "budget_id")) {
        if (reset_at(a, &bcs) < 0)
            goto out;
        if ((rc = sy__budget_insert(st, a, &bcs, bid, NULL)) < 0)
            goto dberr;
        sy__cset_put(&cs, "budget_id", sy_sv_text(bid));
    }
    /* model_rpm_limit / model_tpm_limit live in metadata */
    {
        struct json_object *meta = NULL, *v;
        if (json_object_object_get_ex(body, "metadata", &v) && v)
            meta = json_tokener_parse(sy_admin_jtext(v));
        if (!meta)
            meta = json_object_new_object();
        static const char *const MF[] = {"model_rpm_limit", "model_tpm_limit"};
        for (int i = 0; i < 2; i++)
            if (json_object_object_get_ex(body, MF[i], &v) && v)
                json_object_object_add(meta, MF[i], json_object_get(v));
        sy__cset_put(&cs, "metadata", sy_sv_json(sy__cset_own(&cs, strdup(sy_admin_jtext(meta)))));
        json_object_put(meta);
    }
    sy_admin_iso_now(a, now);
    sy__cset_put(&cs, "organization_id", sy_sv_text(id));
    if (!sy__cset_has(&cs, "models"))
        sy__cset_put(&cs, "models", sy_sv_textarr("[]"));
    if (!sy__cset_has(&cs, "spend"))
        sy__cset_put(&cs, "spend", sy_sv_num(0));
    sy__cset_put(&cs, "model_spend", sy_sv_json("{}"));
    sy__cset_put(&cs, "created_at", sy_sv_ts(now));
    sy__cset_put(&cs, "updated_at", sy_sv_ts(now));
    sy__cset_put(&cs, "created_by", sy_sv_text(sy_admin_actor(a)));
    sy__cset_put(&cs, "updated_by", sy_sv_text(sy_admin_actor(a)));
    if (op) { /* the org's object permission row (admin/objperm.c) */
        if ((rc = sy__objperm_put(st, op, NULL, op_id)) < 0)
            goto dberr;
        sy__cset_put(&cs, "object_permission_id", sy_sv_text(op_id));
    }
    rc = sy__insert(st, T_ORG, &cs, sy_admin_row_cb, &row);
    if (rc == SY_STORE_ECONFLICT) {
        sy__err_dict(a, 400, "internal_server_error",
                     "Organization id = %s already exists. Please use a different organization id.", id);
        goto out;
    }
    if (rc < 0 || !row.found) {
        rc = rc < 0 ? rc : SY_STORE_EQUERY;
        goto dberr;
    }
    if ((rc = sy_store_commit(st)) < 0)
        goto dberr;
    in_tx = 0;
    sy_admin_invalidate(a, "org", id);
    a->status = 200;
    sy_buf_reset(&a->out);
    int first = 1;
    SY_BUF_LIT(&a->out, "{");
    sy__row_members(&a->out, &row.r, NULL, &first);
    if ((rc = sy__objperm_member(st, &a->out, &first, op_id)) < 0)
        goto dberr;
    SY_BUF_LIT(&a->out, "}");
    goto out;
dberr:
    sy_admin_db_error(a, st, rc);
out:
    if (in_tx)
        sy_store_rollback(st);
    sy_admin_row_free(&row);
    sy__cset_free(&bcs);
    sy__cset_free(&cs);
    json_object_put(body);
}

/* ---- PATCH /organization/update ------------------------------------------- */

/* The transaction of /organization/update: its budget and row, and the
 * answer read back. */
struct org_update_tx {
    const char *id, *now;
    const struct sy_admin_row *old;
    struct sy__cset *bcs, *cs;
    struct sy_buf *b;
    struct json_object *op; /* object_permission given, or NULL */
};
static int org_update_tx(struct sy_store *st, struct sy_admin_ctx *a, void *ud)
{
    struct org_update_tx *x = ud;
    int rc;
    if (x->bcs->n) {
        const char *bid = sy__cset_has(x->cs, "budget_id") ? sy__cset_get(x->cs, "budget_id")->s
                                                           : sy_srow_text(&x->old->r, "budget_id");
        if (reset_at(a, x->bcs) < 0)
            return SY_ADMIN_TX_ABORT;
        sy__cset_put(x->bcs, "updated_at", sy_sv_ts(x->now));
        sy__cset_put(x->bcs, "updated_by", sy_sv_text(sy_admin_actor(a)));
        if ((rc = sy__update(st, T_BUDGET, "budget_id", bid, x->bcs, NULL, NULL)) < 0)
            return rc;
    }
    if (x->op) { /* the org's row gets the fields given; an org without one gets one */
        const char *cur = sy_srow_text(&x->old->r, "object_permission_id");
        char op_id[128];
        if ((rc = sy__objperm_put(st, x->op, cur, op_id)) < 0)
            return rc;
        if (!cur || !*cur)
            sy__cset_put(x->cs, "object_permission_id", sy_sv_text(sy__cset_own(x->cs, strdup(op_id))));
    }
    sy__cset_put(x->cs, "updated_at", sy_sv_ts(x->now));
    sy__cset_put(x->cs, "updated_by", sy_sv_text(sy_admin_actor(a)));
    if ((rc = sy__update(st, T_ORG, "organization_id", x->id, x->cs, NULL, NULL)) < 0)
        return rc;
    rc = org_json(st, x->id, 1, x->b);
    return rc < 0 ? rc : 0;
}

static void org_update(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a);
    struct sy__cset bcs = {0}, cs = {0};
    struct sy_admin_row old = {0};
    const char *id = NULL;
    char now[32];
    int rc;
    if (!body)
        return;
    struct json_object *op = NULL;
    if (sy__collect(a, body, BUDGET_F, NBUDGET_F, 0, &bcs) < 0 || sy__collect(a, body, ORG_F, NORG_F, 0, &cs) < 0 ||
        sy__objperm_get(a, body, &op) < 0)
        goto out;
    if (sy_admin_get_str(a, body, "organization_id", &id) != SY_AF_SET) {
        sy__missing(a, "body", "organization_id", body);
        goto out;
    }
    struct sy_sval p = sy_sv_text(id);
    if ((rc = sy_store_exec(st, "SELECT * FROM " T_ORG " WHERE \"organization_id\" = $1", 1, &p, sy_admin_row_cb,
                            &old)) < 0)
        goto dberr;
    if (!old.found) {
        sy__detail(a, 404, "Organization not found for organization_id=%s", id);
        goto out;
    }
    sy_admin_iso_now(a, now);
    struct sy_buf b;
    sy_buf_init(&b, 16 << 20);
    struct org_update_tx tx = {id, now, &old, &bcs, &cs, &b, op};
    if (sy_admin_tx(st, a, org_update_tx, &tx) != 0) {
        sy_buf_free(&b);
        goto out;
    }
    sy_admin_invalidate(a, "org", id);
    a->status = 200;
    sy_buf_reset(&a->out);
    sy_buf_append_buf(&a->out, &b);
    sy_buf_free(&b);
    goto out;
dberr:
    sy_admin_db_error(a, st, rc);
out:
    sy_admin_row_free(&old);
    sy__cset_free(&bcs);
    sy__cset_free(&cs);
    json_object_put(body);
}

/* ---- DELETE /organization/delete ------------------------------------------ */

/* The transaction of /organization/delete: each organization's answer
 * read, then its teams, memberships, keys and row deleted. */
struct org_delete_tx {
    struct json_object *ids;
    struct sy_buf *b;
};
static int org_delete_tx(struct sy_store *st, struct sy_admin_ctx *a, void *ud)
{
    struct org_delete_tx *x = ud;
    static const char *const DEL[] = {
        "DELETE FROM \"LiteLLM_TeamTable\" WHERE \"organization_id\" = $1",
        "DELETE FROM " T_OM " WHERE \"organization_id\" = $1",
        "DELETE FROM \"LiteLLM_VerificationToken\" WHERE \"organization_id\" = $1",
        "DELETE FROM " T_ORG " WHERE \"organization_id\" = $1",
    };
    SY_BUF_LIT(x->b, "[");
    for (size_t i = 0; i < json_object_array_length(x->ids); i++) {
        const char *id = json_object_get_string(json_object_array_get_idx(x->ids, i));
        if (i)
            SY_BUF_LIT(x->b, ",");
        int rc = org_json(st, id, 1, x->b);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            sy__detail(a, 404, "Organization=%s not found", id);
            return SY_ADMIN_TX_ABORT;
        }
        struct sy_sval p = sy_sv_text(id);
        for (size_t k = 0; k < sizeof DEL / sizeof DEL[0]; k++)
            if ((rc = sy_store_exec(st, DEL[k], 1, &p, NULL, NULL)) < 0)
                return rc;
    }
    SY_BUF_LIT(x->b, "]");
    return 0;
}

static void org_delete(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a), *ids = NULL;
    struct sy_buf b;
    sy_buf_init(&b, 64 << 20);
    if (!body)
        goto out;
    int r = sy_admin_get_strarr(a, body, "organization_ids", &ids);
    if (r == SY_AF_ERR)
        goto out;
    if (r != SY_AF_SET) {
        sy__missing(a, "body", "organization_ids", body);
        goto out;
    }
    struct org_delete_tx tx = {ids, &b};
    if (sy_admin_tx(st, a, org_delete_tx, &tx) != 0)
        goto out;
    sy_admin_invalidate(a, "all", NULL); /* teams and keys went with it */
    a->status = 200;
    sy_buf_reset(&a->out);
    sy_buf_append_buf(&a->out, &b);
out:
    sy_buf_free(&b);
    json_object_put(body);
}

/* ---- /organization/info, /organization/list ------------------------------- */

static void org_info(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct sy_buf b;
    int rc;
    sy_buf_init(&b, 64 << 20);
    if (a->method == HTTP_GET) {
        char id[512];
        if (!sy_admin_query(a, "organization_id", id, sizeof id)) {
            sy__missing(a, "query", "organization_id", NULL);
            goto out;
        }
        if ((rc = org_json(st, id, 1, &b)) < 0)
            goto dberr;
        if (rc == 0) {
            sy__detail(a, 404, "Organization not found for organization_id=%s", id);
            goto out;
        }
    } else { /* deprecated POST {"organizations":[..]} */
        struct json_object *body = sy_admin_body(a), *ids = NULL;
        if (!body)
            goto out;
        int r = sy_admin_get_strarr(a, body, "organizations", &ids);
        if (r != SY_AF_SET) {
            if (r != SY_AF_ERR)
                sy__missing(a, "body", "organizations", body);
            json_object_put(body);
            goto out;
        }
        if (json_object_array_length(ids) == 0) {
            sy__detail(a, 400, "Specify list of organization id's to query. Passed in=[]");
            json_object_put(body);
            goto out;
        }
        SY_BUF_LIT(&b, "[");
        int n = 0;
        for (size_t i = 0; i < json_object_array_length(ids); i++) {
            size_t mark = b.len;
            if (n)
                SY_BUF_LIT(&b, ",");
            rc = org_json(st, json_object_get_string(json_object_array_get_idx(ids, i)), 0, &b);
            if (rc < 0) {
                json_object_put(body);
                goto dberr;
            }
            if (rc == 0)
                b.len = mark;
            else
                n++;
        }
        SY_BUF_LIT(&b, "]");
        json_object_put(body);
    }
    a->status = 200;
    sy_buf_reset(&a->out);
    sy_buf_append_buf(&a->out, &b);
    goto out;
dberr:
    sy_admin_db_error(a, st, rc);
out:
    sy_buf_free(&b);
}

struct idlist {
    int n;
    char *id[4096];
};
static int idlist_cb(void *ud, const struct sy_srow *r)
{
    struct idlist *l = ud;
    if (l->n < 4096)
        l->id[l->n++] = strdup(sy_srow_text(r, "organization_id") ? sy_srow_text(r, "organization_id") : "");
    return 0;
}

static void org_list(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct idlist l = {0};
    struct sy_buf b;
    int rc;
    sy_buf_init(&b, 256 << 20);
    if (!a->is_admin && !a->is_admin_viewer && !a->caller_user_id)
        rc = 0; /* a key without a user belongs to no organization */
    else if (a->is_admin || a->is_admin_viewer)
        rc = sy_store_exec(st, "SELECT \"organization_id\" FROM " T_ORG " ORDER BY \"created_at\"", 0, NULL, idlist_cb,
                           &l);
    else {
        struct sy_sval p = sy_sv_text(a->caller_user_id);
        rc = sy_store_exec(st, "SELECT \"organization_id\" FROM " T_OM " WHERE \"user_id\" = $1", 1, &p, idlist_cb, &l);
    }
    SY_BUF_LIT(&b, "[");
    for (int i = 0; rc >= 0 && i < l.n; i++) {
        if (i)
            SY_BUF_LIT(&b, ",");
        rc = org_json(st, l.id[i], 1, &b);
    }
    SY_BUF_LIT(&b, "]");
    if (rc < 0)
        sy_admin_db_error(a, st, rc);
    else {
        a->status = 200;
        sy_buf_reset(&a->out);
        sy_buf_append_buf(&a->out, &b);
    }
    for (int i = 0; i < l.n; i++)
        free(l.id[i]);
    sy_buf_free(&b);
}

/* ---- POST /organization/member_add ---------------------------------------- */

static void org_member_add(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a), *member = NULL, *list = NULL;
    struct sy_buf users, oms;
    const char *oid = NULL;
    double mb = 0;
    int hb, rc = 0, in_tx = 0;
    sy_buf_init(&users, 16 << 20);
    sy_buf_init(&oms, 16 << 20);
    if (!body)
        goto out;
    if (sy_admin_get_str(a, body, "organization_id", &oid) != SY_AF_SET) {
        sy__missing(a, "body", "organization_id", body);
        goto out;
    }
    if (!json_object_object_get_ex(body, "member", &member) || !member) {
        sy__missing(a, "body", "member", body);
        goto out;
    }
    if ((hb = sy_admin_get_num(a, body, "max_budget_in_organization", &mb)) < 0)
        goto out;
    list = json_object_new_array();
    if (json_object_is_type(member, json_type_array))
        for (size_t i = 0; i < json_object_array_length(member); i++)
            json_object_array_add(list, json_object_get(json_object_array_get_idx(member, i)));
    else
        json_object_array_add(list, json_object_get(member));
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        struct json_object *m = json_object_array_get_idx(list, i), *v;
        const char *role = json_object_object_get_ex(m, "role", &v) && v ? json_object_get_string(v) : NULL;
        int has_id = json_object_object_get_ex(m, "user_id", &v) && v;
        int has_em = json_object_object_get_ex(m, "user_email", &v) && v;
        if (!json_object_is_type(m, json_type_object) || (!has_id && !has_em)) {
            sy__value_error(a, m, "Either user id or user email must be provided");
            goto out;
        }
        if (!role ||
            (strcmp(role, "org_admin") && strcmp(role, "internal_user") && strcmp(role, "internal_user_viewer"))) {
            json_object_object_get_ex(m, "role", &v);
            sy_admin_422(a, "member", "literal_error",
                         "Input should be 'org_admin', 'internal_user' or 'internal_user_viewer'", v);
            goto out;
        }
    }
    struct sy_sval p = sy_sv_text(oid);
    struct sy_admin_row org = {0};
    rc = sy_store_exec(st, "SELECT \"organization_id\" FROM " T_ORG " WHERE \"organization_id\" = $1", 1, &p,
                       sy_admin_row_cb, &org);
    int found = org.found;
    sy_admin_row_free(&org);
    if (rc < 0)
        goto dberr;
    if (!found) {
        sy_admin_error(a, 404, "auth_error", "None", "{'error': 'Organization not found for organization_id=%s'}", oid);
        goto out;
    }
    if ((rc = sy_store_begin(st)) < 0)
        goto dberr;
    in_tx = 1;
    SY_BUF_LIT(&users, "[");
    SY_BUF_LIT(&oms, "[");
    char now[32];
    sy_admin_iso_now(a, now);
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        struct json_object *m = json_object_array_get_idx(list, i), *v;
        const char *uid = json_object_object_get_ex(m, "user_id", &v) && v ? json_object_get_string(v) : NULL;
        const char *em = json_object_object_get_ex(m, "user_email", &v) && v ? json_object_get_string(v) : NULL;
        const char *role = json_object_object_get_ex(m, "role", &v) && v ? json_object_get_string(v) : NULL;
        struct sy_admin_row u = {0};
        struct sy_sval q = sy_sv_text(uid ? uid : em);
        rc = sy_store_exec(st,
                           uid ? "SELECT * FROM " T_USERS " WHERE \"user_id\" = $1"
                               : "SELECT * FROM " T_USERS " WHERE \"user_email\" = $1",
                           1, &q, sy_admin_row_cb, &u);
        char got[256], nid[37];
        if (rc >= 0 && u.found) {
            snprintf(got, sizeof got, "%s", sy_srow_text(&u.r, "user_id"));
            int first = 1;
            if (users.len > 1)
                SY_BUF_LIT(&users, ",");
            SY_BUF_LIT(&users, "{");
            sy__row_members(&users, &u.r, "password", &first);
            SY_BUF_LIT(&users, "}");
        } else if (rc >= 0) { /* get_new_internal_user_defaults */
            struct sy__cset cs = {0};
            if (!uid)
                sy_admin_uuid(nid), uid = nid;
            snprintf(got, sizeof got, "%s", uid);
            sy__cset_put(&cs, "user_id", sy_sv_text(got));
            if (em)
                sy__cset_put(&cs, "user_email", sy_sv_text(em));
            sy__cset_put(&cs, "user_role", sy_sv_text("internal_user"));
            sy__cset_put(&cs, "created_at", sy_sv_ts(now));
            sy__cset_put(&cs, "updated_at", sy_sv_ts(now));
            if (users.len > 1)
                SY_BUF_LIT(&users, ",");
            struct sy_admin_rows rr = {&users, 0};
            rc = sy__insert(st, T_USERS, &cs, sy__rows_nopw_cb, &rr);
            sy__cset_free(&cs);
        }
        sy_admin_row_free(&u);
        if (rc < 0)
            goto dberr;
        char bid[128];
        int has_bid = 0;
        if (hb == SY_AF_SET) {
            struct sy__cset bcs = {0};
            sy__cset_put(&bcs, "max_budget", sy_sv_num(mb));
            rc = sy__budget_insert(st, a, &bcs, bid, NULL);
            sy__cset_free(&bcs);
            if (rc < 0)
                goto dberr;
            has_bid = 1;
        }
        struct sy_sval w[6] = {sy_sv_text(got),  sy_sv_text(oid),
                               sy_sv_text(role), has_bid ? sy_sv_text(bid) : sy_sv_null(),
                               sy_sv_ts(now),    sy_sv_ts(now)};
        if (!has_bid)
            w[3] = sy_sv_null();
        if (oms.len > 1)
            SY_BUF_LIT(&oms, ",");
        struct sy_admin_rows rr = {&oms, 0};
        rc =
            sy_store_exec(st,
                          "INSERT INTO " T_OM " (\"user_id\", \"organization_id\", \"user_role\", \"budget_id\", "
                          "\"spend\", \"created_at\", \"updated_at\") VALUES ($1, $2, $3, CAST($4 AS TEXT), 0, $5, $6) "
                          "ON CONFLICT (\"user_id\", \"organization_id\") DO UPDATE SET \"user_role\" = "
                          "EXCLUDED.\"user_role\", \"updated_at\" = EXCLUDED.\"updated_at\" RETURNING *",
                          6, w, sy_admin_rows_cb, &rr);
        if (rc < 0)
            goto dberr;
        sy_admin_invalidate(a, "user", got);
    }
    SY_BUF_LIT(&users, "]");
    SY_BUF_LIT(&oms, "]");
    if ((rc = sy_store_commit(st)) < 0)
        goto dberr;
    in_tx = 0;
    sy_admin_invalidate(a, "org", oid);
    a->status = 200;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"organization_id\":");
    sy_admin_jstr(&a->out, oid);
    SY_BUF_LIT(&a->out, ",\"updated_users\":");
    sy_buf_append_buf(&a->out, &users);
    SY_BUF_LIT(&a->out, ",\"updated_organization_memberships\":");
    sy_buf_append_buf(&a->out, &oms);
    SY_BUF_LIT(&a->out, "}");
    goto out;
dberr:
    sy_admin_db_error(a, st, rc);
out:
    if (in_tx)
        sy_store_rollback(st);
    sy_buf_free(&users);
    sy_buf_free(&oms);
    json_object_put(list);
    json_object_put(body);
}

/* ---- PATCH /organization/member_update, DELETE /organization/member_delete -- */

/* The member named by body's user_id (else user_email, looked up) into uid.
 * 0 ok; 1 an answer written; < 0 a store error. */
static int member_of_body(struct sy_store *st, struct sy_admin_ctx *a, struct json_object *body, const char **oid,
                          char *uid, size_t cap)
{
    const char *u = NULL, *em = NULL;
    if (sy_admin_get_str(a, body, "organization_id", oid) != SY_AF_SET) {
        if (a->status < 400)
            sy__missing(a, "body", "organization_id", body);
        return 1;
    }
    if (sy_admin_get_str(a, body, "user_id", &u) < 0 || sy_admin_get_str(a, body, "user_email", &em) < 0)
        return 1;
    if (u && *u) {
        snprintf(uid, cap, "%s", u);
        return 0;
    }
    if (!em || !*em) {
        sy__err_dict(a, 400, "bad_request_error", "Either user_id or user_email needs to be passed in");
        return 1;
    }
    struct sy_admin_row row = {0};
    struct sy_sval p = sy_sv_text(em);
    int rc = sy_store_exec(st, "SELECT \"user_id\" FROM " T_USERS " WHERE \"user_email\" = $1", 1, &p, sy_admin_row_cb,
                           &row);
    if (rc < 0)
        return rc;
    if (rc != 1 || !sy_srow_text(&row.r, "user_id")) {
        sy__err_dict(a, 400, "bad_request_error",
                     rc > 1 ? "Multiple users with this email found in db. Please use "
                              "'user_id' instead."
                            : "User not found for user_email=%s",
                     em);
        sy_admin_row_free(&row);
        return 1;
    }
    snprintf(uid, cap, "%s", sy_srow_text(&row.r, "user_id"));
    sy_admin_row_free(&row);
    return 0;
}

static int om_load(struct sy_store *st, const char *uid, const char *oid, struct sy_admin_row *row)
{
    struct sy_sval p[2] = {sy_sv_text(uid), sy_sv_text(oid)};
    return sy_store_exec(st, "SELECT * FROM " T_OM " WHERE \"user_id\" = $1 AND \"organization_id\" = $2", 2, p,
                         sy_admin_row_cb, row);
}

static const char *const ORG_ROLES[] = {"org_admin", "internal_user", "internal_user_viewer", NULL};

static void org_member_update(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a);
    struct sy_admin_row om = {0};
    const char *oid = NULL, *role = NULL;
    char uid[256];
    double mb = 0;
    int rc = 0, in_tx = 0, hb;
    if (!body)
        return;
    if ((rc = member_of_body(st, a, body, &oid, uid, sizeof uid)) != 0)
        goto done;
    if (sy_admin_get_str(a, body, "role", &role) < 0 ||
        (hb = sy_admin_get_num(a, body, "max_budget_in_organization", &mb)) < 0)
        goto out;
    if (role) {
        int ok = 0;
        for (int i = 0; ORG_ROLES[i]; i++)
            ok |= strcmp(role, ORG_ROLES[i]) == 0;
        if (!ok) {
            sy__err_dict(a, 400, "bad_request_error",
                         "Invalid role=%s. Allowed roles: org_admin, internal_user, "
                         "internal_user_viewer",
                         role);
            goto out;
        }
    }
    if ((rc = om_load(st, uid, oid, &om)) < 0)
        goto done;
    if (!om.found) {
        sy__err_dict(a, 404, "not_found_error", "Member not found in organization for user_id=%s", uid);
        goto out;
    }
    char now[32];
    sy_admin_iso_now(a, now);
    if ((rc = sy_store_begin(st)) < 0)
        goto done;
    in_tx = 1;
    if (role) {
        struct sy_sval p[4] = {sy_sv_text(role), sy_sv_ts(now), sy_sv_text(uid), sy_sv_text(oid)};
        if ((rc = sy_store_exec(st,
                                "UPDATE " T_OM " SET \"user_role\" = $1, \"updated_at\" = $2 "
                                "WHERE \"user_id\" = $3 AND \"organization_id\" = $4",
                                4, p, NULL, NULL)) < 0)
            goto done;
    }
    if (hb == SY_AF_SET) {
        const char *bid = sy_srow_text(&om.r, "budget_id");
        if (bid) {
            struct sy_sval p[4] = {sy_sv_num(mb), sy_sv_ts(now), sy_sv_text(sy_admin_actor(a)), sy_sv_text(bid)};
            rc = sy_store_exec(st,
                               "UPDATE " T_BUDGET " SET \"max_budget\" = $1, \"updated_at\" = $2, "
                               "\"updated_by\" = $3 WHERE \"budget_id\" = $4",
                               4, p, NULL, NULL);
        } else {
            char nb[128];
            struct sy__cset bcs = {0};
            sy__cset_put(&bcs, "max_budget", sy_sv_num(mb));
            rc = sy__budget_insert(st, a, &bcs, nb, NULL);
            sy__cset_free(&bcs);
            struct sy_sval p[3] = {sy_sv_text(nb), sy_sv_text(uid), sy_sv_text(oid)};
            if (rc >= 0)
                rc = sy_store_exec(st,
                                   "UPDATE " T_OM " SET \"budget_id\" = $1 WHERE \"user_id\" = $2 AND "
                                   "\"organization_id\" = $3",
                                   3, p, NULL, NULL);
        }
        if (rc < 0)
            goto done;
    }
    if ((rc = sy_store_commit(st)) < 0)
        goto done;
    in_tx = 0;
    sy_admin_row_free(&om);
    if ((rc = om_load(st, uid, oid, &om)) < 0)
        goto done;
    sy_admin_invalidate(a, "user", uid);
    sy_admin_invalidate(a, "org", oid);
    a->status = 200;
    sy_buf_reset(&a->out);
    int first = 1;
    SY_BUF_LIT(&a->out, "{");
    if (om.found)
        sy__row_members(&a->out, &om.r, NULL, &first);
    sy_admin_jkey(&a->out, &first, "litellm_budget_table");
    if ((rc = sy__budget_json(st, om.found ? sy_srow_text(&om.r, "budget_id") : NULL, &a->out)) < 0)
        goto done;
    SY_BUF_LIT(&a->out, "}");
    goto out;
done:
    if (rc < 0)
        sy_admin_db_error(a, st, rc);
out:
    if (in_tx)
        sy_store_rollback(st);
    sy_admin_row_free(&om);
    json_object_put(body);
}

static void org_member_delete(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a);
    struct sy_admin_row om = {0};
    const char *oid = NULL;
    char uid[256];
    int rc;
    if (!body)
        return;
    if ((rc = member_of_body(st, a, body, &oid, uid, sizeof uid)) != 0)
        goto done;
    struct sy_sval p[2] = {sy_sv_text(uid), sy_sv_text(oid)};
    rc = sy_store_exec(st, "DELETE FROM " T_OM " WHERE \"user_id\" = $1 AND \"organization_id\" = $2 RETURNING *", 2, p,
                       sy_admin_row_cb, &om);
    if (rc < 0)
        goto done;
    if (!om.found) { /* prisma's delete of a missing row: RecordNotFound */
        sy__err_dict(a, 404, "not_found_error", "Member not found in organization for user_id=%s", uid);
        goto done;
    }
    sy_admin_invalidate(a, "user", uid);
    sy_admin_invalidate(a, "org", oid);
    a->status = 200;
    sy_buf_reset(&a->out);
    sy_srow_json(&a->out, &om.r);
done:
    if (rc < 0)
        sy_admin_db_error(a, st, rc);
    sy_admin_row_free(&om);
    json_object_put(body);
}

const struct sy_admin_route sy_admin_org_routes[] = {
    {HTTP_POST, "/organization/new", org_new, 0},
    {HTTP_PATCH, "/organization/update", org_update, 0},
    {HTTP_POST, "/organization/update", org_update, 0},
    {HTTP_DELETE, "/organization/delete", org_delete, 0},
    {HTTP_POST, "/organization/delete", org_delete, 0},
    {0, "/organization/info", org_info, SY_ADMIN_READONLY},
    {HTTP_GET, "/organization/list", org_list, SY_ADMIN_SELF | SY_ADMIN_READONLY},
    {HTTP_POST, "/organization/member_add", org_member_add, 0},
    {HTTP_PATCH, "/organization/member_update", org_member_update, 0},
    {HTTP_DELETE, "/organization/member_delete", org_member_delete, 0},
    {0, NULL, NULL, 0},
};
