/* teams.c - LiteLLM's team management API on "LiteLLM_TeamTable" and
 * "LiteLLM_TeamMembership" (proxy/management_endpoints/team_endpoints.py).
 *
 *   | route                  | body / query                               | answer                                  |
 *   |------------------------|--------------------------------------------|-----------------------------------------|
 *   | POST /team/new         | NewTeamRequest                             | the team row (members_with_roles filled)|
 *   | POST /team/update      | UpdateTeamRequest (team_id)                | {"team_id":..,"data":row}               |
 *   | POST /team/delete      | {"team_ids":[..]}                          | {"deleted_teams":[..]}                  |
 *   | GET  /team/info        | team_id                                    | {"team_id","team_info","keys",          |
 *   |                        |                                            |  "team_memberships"}                    |
 *   | GET  /team/list        | user_id organization_id                    | [team row + keys + team_memberships]    |
 *   | POST /team/member_add  | {"team_id","member":{..}|[..],             | team row + updated_users +              |
 *   |                        |  "max_budget_in_team"}                     |  updated_team_memberships               |
 *   | POST /team/member_delete | {"team_id","user_id"|"user_email"}       | the team row                            |
 *   | POST /team/member_update | {"team_id","user_id"|"user_email","role",| TeamMemberUpdateResponse                |
 *   |                        |  "max_budget_in_team","tpm_limit","rpm_limit"} |                                     |
 *   | POST /team/block, /team/unblock | {"team_id"}                       | the team row                            |
 *
 * members_with_roles is a JSON list of Member: {"user_id","user_email","role"}.
 * A member added (on /team/new too) gets the team in its user row's "teams"
 * (the user is created when missing) and a membership row when a budget
 * applies (max_budget_in_team, or the team's team_member_budget). admins /
 * members (deprecated) are written as [] as LiteLLM does. Deleting a team
 * deletes its keys and memberships and takes it out of its users' teams.
 * /team/new answers with the row after its members were added (LiteLLM
 * answers with the row as first inserted, members_with_roles []).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>

#include "admin/admin_impl.h"
#include "limits/limits.h"
#include "admin/entity_impl.h"
#include "core/buf.h"
#include "core/pyrepr.h"
#include "keys/keys.h"
#include "spend/spend.h"

#define T_TEAMS  "\"LiteLLM_TeamTable\""
#define T_USERS  "\"LiteLLM_UserTable\""
#define T_KEYS   "\"LiteLLM_VerificationToken\""
#define T_TM     "\"LiteLLM_TeamMembership\""
#define T_BUDGET "\"LiteLLM_BudgetTable\""

static const struct sy__field TEAM_F[] = {
    {"team_alias", SY_FK_STR, "team_alias", 0},
    {"organization_id", SY_FK_STR, "organization_id", 0},
    {"metadata", SY_FK_OBJ, "metadata", SY_FF_NOTNULL},
    {"tpm_limit", SY_FK_INT, "tpm_limit", 0},
    {"rpm_limit", SY_FK_INT, "rpm_limit", 0},
    {"max_parallel_requests", SY_FK_INT, "max_parallel_requests", 0},
    {"max_budget", SY_FK_NUM, "max_budget", 0},
    {"soft_budget", SY_FK_NUM, "soft_budget", 0},
    {"budget_duration", SY_FK_STR, "budget_duration", 0},
    {"models", SY_FK_STRARR, "models", 0},
    {"blocked", SY_FK_BOOL, "blocked", SY_FF_NOTNULL},
    {"model_max_budget", SY_FK_OBJ, "model_max_budget", SY_FF_NOTNULL},
    {"team_member_permissions", SY_FK_STRARR, "team_member_permissions", 0},
    {"router_settings", SY_FK_OBJ, "router_settings", 0},
    {"access_group_ids", SY_FK_STRARR, "access_group_ids", 0},
    {"default_team_member_models", SY_FK_STRARR, "default_team_member_models", 0},
    {"policies", SY_FK_STRARR, "policies", 0},
    /* checked, not stored as columns */
    {"team_id", SY_FK_STR, NULL, 0},
    {"tags", SY_FK_STRARR, NULL, 0},
    {"guardrails", SY_FK_STRARR, NULL, 0},
    {"prompts", SY_FK_STRARR, NULL, 0},
    {"model_aliases", SY_FK_OBJ, NULL, 0}, /* stored in LiteLLM_ModelTable (put_model_aliases) */
    {"model_rpm_limit", SY_FK_OBJ, NULL, 0},
    {"model_tpm_limit", SY_FK_OBJ, NULL, 0},
    {"team_member_budget", SY_FK_NUM, NULL, 0},
    {"team_member_rpm_limit", SY_FK_INT, NULL, 0},
    {"team_member_tpm_limit", SY_FK_INT, NULL, 0},
    {"team_member_key_duration", SY_FK_STR, NULL, 0},
    {"team_member_budget_duration", SY_FK_STR, NULL, 0},
};
#define NTEAM_F ((int)(sizeof TEAM_F / sizeof TEAM_F[0]))

/* Fields LiteLLM keeps in metadata (LiteLLM_ManagementEndpoint_MetadataFields). */
static const char *const META_F[] = {
    "tags", "guardrails", "prompts", "model_rpm_limit", "model_tpm_limit", "team_member_key_duration"};

/* model_aliases live where LiteLLM keeps them: a "LiteLLM_ModelTable" row
 * that the team's model_id names (a new row per write; the id is the next
 * free one, not a sequence, so the SQL runs on SQLite and PostgreSQL alike).
 * 0, or a store error. */
static int id_cb(void *ud, const struct sy_srow *r)
{
    *(int64_t *)ud = sy_srow_int(r, "id", -1);
    return 1;
}

static int put_model_aliases(struct sy_store *st, struct sy_admin_ctx *a, struct json_object *body, struct sy__cset *cs)
{
    struct json_object *ma;
    if (!json_object_object_get_ex(body, "model_aliases", &ma) || !json_object_is_type(ma, json_type_object))
        return 0;
    char now[32];
    sy_admin_iso_now(a, now);
    int64_t id = -1;
    struct sy_sval p[3] = {sy_sv_json(json_object_to_json_string_ext(ma, JSON_C_TO_STRING_PLAIN)), sy_sv_ts(now),
                           sy_sv_text("default_user_id")};
    int rc = sy_store_exec(st,
                           "INSERT INTO \"LiteLLM_ModelTable\" (\"id\", \"aliases\", \"created_at\", \"created_by\", "
                           "\"updated_at\", \"updated_by\") SELECT COALESCE(MAX(\"id\"), 0) + 1, $1, $2, $3, $2, $3 "
                           "FROM \"LiteLLM_ModelTable\" RETURNING \"id\"",
                           3, p, id_cb, &id);
    if (rc < 0)
        return rc;
    if (id < 0)
        return SY_STORE_EQUERY;
    sy__cset_put(cs, "model_id", sy_sv_int(id));
    return 0;
}

static int load_team(struct sy_store *st, const char *id, struct sy_admin_row *row)
{
    struct sy_sval p = sy_sv_text(id);
    return sy_store_exec(st, "SELECT * FROM " T_TEAMS " WHERE \"team_id\" = $1", 1, &p, sy_admin_row_cb, row);
}

static struct json_object *members_of(const struct sy_admin_row *team)
{
    const char *m = team->found ? sy_srow_text(&team->r, "members_with_roles") : NULL;
    struct json_object *o = m ? json_tokener_parse(m) : NULL;
    if (!o || !json_object_is_type(o, json_type_array)) {
        json_object_put(o);
        o = json_object_new_array();
    }
    return o;
}

static const char *mstr(struct json_object *m, const char *k)
{
    struct json_object *v;
    return json_object_object_get_ex(m, k, &v) && v && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

/* Python repr of a Member list: [Member(user_id='u', user_email=None, role='user'), ...] */
static void members_repr(struct sy_buf *b, struct json_object *members)
{
    SY_BUF_LIT(b, "[");
    for (size_t i = 0; i < json_object_array_length(members); i++) {
        struct json_object *m = json_object_array_get_idx(members, i);
        static const char *const K[] = {"user_id", "user_email", "role"};
        sy_buf_puts(b, i ? ", Member(" : "Member(");
        for (int k = 0; k < 3; k++) {
            const char *v = mstr(m, K[k]);
            sy_buf_printf(b, "%s%s=", k ? ", " : "", K[k]);
            if (v)
                sy_py_str_repr(b, v, strlen(v));
            else
                SY_BUF_LIT(b, "None");
        }
        SY_BUF_LIT(b, ")");
    }
    SY_BUF_LIT(b, "]");
}

/* Validate one Member object: 422 as pydantic when it is not one. */
static int member_check(struct sy_admin_ctx *a, struct json_object *m, int idx)
{
    const char *role = mstr(m, "role");
    const char *why = NULL;
    if (!json_object_is_type(m, json_type_object))
        why = "input needs to be a dictionary";
    else if (!mstr(m, "user_id") && !mstr(m, "user_email"))
        why = "Either user id or user email must be provided";
    if (why) {
        a->status = 422;
        sy_buf_reset(&a->out);
        SY_BUF_LIT(&a->out, "{\"detail\":[{\"type\":\"value_error\",\"loc\":[\"body\",\"member\"");
        if (idx >= 0)
            sy_buf_printf(&a->out, ",%d", idx);
        SY_BUF_LIT(&a->out, "],\"msg\":");
        char msg[128];
        snprintf(msg, sizeof msg, "Value error, %s", why);
        sy_admin_jstr(&a->out, msg);
        SY_BUF_LIT(&a->out, ",\"input\":");
        sy_buf_puts(&a->out, sy_admin_jtext(m));
        SY_BUF_LIT(&a->out, ",\"ctx\":{\"error\":{}}}]}");
        return -1;
    }
    if (!role || (strcmp(role, "admin") && strcmp(role, "user"))) {
        struct json_object *v = NULL;
        json_object_object_get_ex(m, "role", &v);
        a->status = 422;
        sy_buf_reset(&a->out);
        if (!role && !v) {
            SY_BUF_LIT(&a->out, "{\"detail\":[{\"type\":\"missing\",\"loc\":[\"body\",\"member\"");
            if (idx >= 0)
                sy_buf_printf(&a->out, ",%d", idx);
            SY_BUF_LIT(&a->out, ",\"role\"],\"msg\":\"Field required\",\"input\":");
        } else {
            SY_BUF_LIT(&a->out, "{\"detail\":[{\"type\":\"literal_error\",\"loc\":[\"body\",\"member\"");
            if (idx >= 0)
                sy_buf_printf(&a->out, ",%d", idx);
            SY_BUF_LIT(&a->out, ",\"role\"],\"msg\":\"Input should be 'admin' or 'user'\",\"input\":");
            sy_buf_puts(&a->out, sy_admin_jtext(v));
            SY_BUF_LIT(&a->out, ",\"ctx\":{\"expected\":\"'admin' or 'user'\"}}]}");
            return -1;
        }
        sy_buf_puts(&a->out, sy_admin_jtext(m));
        SY_BUF_LIT(&a->out, "}]}");
        return -1;
    }
    return 0;
}

/* Add members (a JSON array of Member) to team row `team`: users, budgets,
 * memberships, then members_with_roles. users / tms collect the JSON of the
 * touched rows (comma-separated). Returns 0, 1 (error written) or < 0. */
static int add_members(struct sy_store *st, struct sy_admin_ctx *a, struct sy_admin_row *team, struct json_object *add,
                       int has_budget, double budget, struct sy_buf *users, struct sy_buf *tms)
{
    const char *tid = sy_srow_text(&team->r, "team_id");
    struct json_object *members = members_of(team), *meta = NULL, *v;
    const char *ms = sy_srow_text(&team->r, "metadata");
    const char *default_bid = NULL;
    int rc = 0;
    if (ms && (meta = json_tokener_parse(ms)) && json_object_object_get_ex(meta, "team_member_budget_id", &v) && v)
        default_bid = json_object_get_string(v);
    for (size_t i = 0; i < json_object_array_length(add); i++) {
        struct json_object *m = json_object_array_get_idx(add, i);
        const char *uid = mstr(m, "user_id"), *email = mstr(m, "user_email");
        char got[256];
        rc = sy__team_add_member(st, a, tid, uid, email, has_budget, budget, default_bid, got, sizeof got, users, tms);
        if (rc)
            break;
        int exists = 0;
        for (size_t j = 0; j < json_object_array_length(members); j++) {
            struct json_object *e = json_object_array_get_idx(members, j);
            const char *eu = mstr(e, "user_id"), *ee = mstr(e, "user_email");
            if ((eu && strcmp(eu, got) == 0) || (email && ee && strcmp(email, ee) == 0))
                exists = 1;
        }
        if (!exists) {
            struct json_object *nm = json_object_new_object();
            json_object_object_add(nm, "user_id", json_object_new_string(got));
            json_object_object_add(nm, "user_email", email ? json_object_new_string(email) : NULL);
            json_object_object_add(nm, "role", json_object_new_string(mstr(m, "role") ? mstr(m, "role") : "user"));
            json_object_array_add(members, nm);
        }
    }
    if (rc == 0) {
        char now[32];
        sy_admin_iso_now(a, now);
        struct sy_sval p[3] = {sy_sv_json(sy_admin_jtext(members)), sy_sv_ts(now), sy_sv_text(tid)};
        rc = sy_store_exec(
            st, "UPDATE " T_TEAMS " SET \"members_with_roles\" = $1, \"updated_at\" = $2 WHERE \"team_id\" = $3", 3, p,
            NULL, NULL);
        rc = rc < 0 ? rc : 0;
    }
    json_object_put(members);
    json_object_put(meta);
    return rc;
}

/* metadata with the management metadata fields folded in; malloc'd or NULL. */
static char *team_meta(struct json_object *body, const char *existing, int *touched)
{
    struct json_object *meta = NULL, *v;
    *touched = 0;
    if (json_object_object_get_ex(body, "metadata", &v) && v && json_object_is_type(v, json_type_object)) {
        meta = json_tokener_parse(sy_admin_jtext(v));
        *touched = 1;
    } else if (existing)
        meta = json_tokener_parse(existing);
    if (!meta || !json_object_is_type(meta, json_type_object)) {
        json_object_put(meta);
        meta = json_object_new_object();
    }
    for (size_t i = 0; i < sizeof META_F / sizeof META_F[0]; i++)
        if (json_object_object_get_ex(body, META_F[i], &v) && v) {
            json_object_object_add(meta, META_F[i], json_object_get(v));
            *touched = 1;
        }
    char *t = strdup(sy_admin_jtext(meta));
    json_object_put(meta);
    return t;
}

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

/* ---- POST /team/new ------------------------------------------------------- */

static void team_new(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a), *mwr = NULL, *add = NULL;
    struct sy__cset cs = {0};
    struct sy_admin_row team = {0};
    struct sy_buf users, tms;
    char tid[256], now[32];
    const char *team_id = NULL, *org = NULL;
    int rc, in_tx = 0, touched;
    sy_buf_init(&users, 16 << 20);
    sy_buf_init(&tms, 16 << 20);
    if (!body)
        goto out;
    struct json_object *op = NULL;
    char op_id[128] = "";
    if (sy__collect(a, body, TEAM_F, NTEAM_F, 0, &cs) < 0 ||
        sy_admin_get_arr(a, body, "members_with_roles", &mwr) < 0 || sy__objperm_get(a, body, &op) < 0)
        goto out;
    add = json_object_new_array();
    for (size_t i = 0; mwr && i < json_object_array_length(mwr); i++) {
        struct json_object *m = json_object_array_get_idx(mwr, i);
        if (member_check(a, m, (int)i) < 0) {
            a->status = 422; /* loc says "member": LiteLLM's says "members_with_roles" */
            goto out;
        }
        json_object_array_add(add, json_object_get(m));
    }
    sy_admin_get_str(a, body, "team_id", &team_id);
    sy_admin_get_str(a, body, "organization_id", &org);
    if (team_id)
        snprintf(tid, sizeof tid, "%s", team_id);
    else {
        char u[37];
        sy_admin_uuid(u);
        snprintf(tid, sizeof tid, "%s", u);
    }
    if (team_id) {
        rc = load_team(st, tid, &team);
        if (rc < 0)
            goto dberr;
        if (team.found) {
            sy__err_dict(a, 400, "internal_server_error",
                         "Team id = %s already exists. Please use a different team id.", tid);
            goto out;
        }
    }
    if (org) {
        struct sy_admin_row o = {0};
        struct sy_sval p = sy_sv_text(org);
        rc = sy_store_exec(
            st, "SELECT \"organization_id\" FROM \"LiteLLM_OrganizationTable\" WHERE \"organization_id\" = $1", 1, &p,
            sy_admin_row_cb, &o);
        int found = o.found;
        sy_admin_row_free(&o);
        if (rc < 0)
            goto dberr;
        if (!found) {
            sy_admin_error(a, 400, "internal_server_error", "None", "Organization not found for organization_id=%s",
                           org);
            goto out;
        }
    }
    /* the caller becomes a team admin when not listed: a user key's user, the
     * master key's "default_user_id" (LiteLLM's litellm_proxy_admin_name is the
     * master key's user_id) */
    const char *creator = a->caller_user_id ? a->caller_user_id : a->is_master ? sy_admin_actor(a) : NULL;
    if (creator) {
        int listed = 0;
        for (size_t i = 0; i < json_object_array_length(add); i++) {
            const char *u = mstr(json_object_array_get_idx(add, i), "user_id");
            listed |= u && strcmp(u, creator) == 0;
        }
        if (!listed) {
            struct json_object *m = json_object_new_object();
            json_object_object_add(m, "user_id", json_object_new_string(creator));
            json_object_object_add(m, "user_email", NULL);
            json_object_object_add(m, "role", json_object_new_string("admin"));
            json_object_array_add(add, m);
        }
    }
    if ((rc = sy_store_begin(st)) < 0)
        goto dberr;
    in_tx = 1;
    char *meta = team_meta(body, NULL, &touched);
    /* team member budget (TeamMemberBudgetHandler) */
    {
        double tmb;
        int64_t tmr, tmt;
        int hb = sy_admin_get_num(a, body, "team_member_budget", &tmb) == SY_AF_SET;
        int hr = sy_admin_get_int(a, body, "team_member_rpm_limit", &tmr) == SY_AF_SET;
        int ht = sy_admin_get_int(a, body, "team_member_tpm_limit", &tmt) == SY_AF_SET;
        const char *tmd = NULL;
        sy_admin_get_str(a, body, "team_member_budget_duration", &tmd);
        if (hb || hr || ht) {
            struct sy__cset b = {0};
            char bid[128];
            if (hb)
                sy__cset_put(&b, "max_budget", sy_sv_num(tmb));
            if (hr)
                sy__cset_put(&b, "rpm_limit", sy_sv_int(tmr));
            if (ht)
                sy__cset_put(&b, "tpm_limit", sy_sv_int(tmt));
            if (tmd)
                sy__cset_put(&b, "budget_duration", sy_sv_text(tmd));
            rc = sy__budget_insert(st, a, &b, bid, NULL);
            sy__cset_free(&b);
            if (rc < 0) {
                free(meta);
                goto dberr;
            }
            struct json_object *mo = json_tokener_parse(meta);
            json_object_object_add(mo, "team_member_budget_id", json_object_new_string(bid));
            free(meta);
            meta = strdup(sy_admin_jtext(mo));
            json_object_put(mo);
        }
    }
    sy__cset_put(&cs, "metadata", sy_sv_json(sy__cset_own(&cs, meta)));
    if (reset_at(a, &cs) < 0)
        goto out;
    sy_admin_iso_now(a, now);
    sy__cset_put(&cs, "team_id", sy_sv_text(tid));
    sy__cset_put(&cs, "admins", sy_sv_textarr("[]"));
    sy__cset_put(&cs, "members", sy_sv_textarr("[]"));
    sy__cset_put(&cs, "members_with_roles", sy_sv_json("[]"));
    if (!sy__cset_has(&cs, "models"))
        sy__cset_put(&cs, "models", sy_sv_textarr("[]"));
    sy__cset_put(&cs, "spend", sy_sv_num(0));
    if (!sy__cset_has(&cs, "blocked"))
        sy__cset_put(&cs, "blocked", sy_sv_bool(0));
    sy__cset_put(&cs, "created_at", sy_sv_ts(now));
    sy__cset_put(&cs, "updated_at", sy_sv_ts(now));
    if ((rc = put_model_aliases(st, a, body, &cs)) < 0)
        goto dberr;
    if (op) { /* the team's object permission row (admin/objperm.c) */
        if ((rc = sy__objperm_put(st, op, NULL, op_id)) < 0)
            goto dberr;
        sy__cset_put(&cs, "object_permission_id", sy_sv_text(op_id));
    }
    rc = sy__insert(st, T_TEAMS, &cs, sy_admin_row_cb, &team);
    if (rc == SY_STORE_ECONFLICT) {
        sy__err_dict(a, 400, "internal_server_error", "Team id = %s already exists. Please use a different team id.",
                     tid);
        goto out;
    }
    if (rc < 0 || !team.found) {
        rc = rc < 0 ? rc : SY_STORE_EQUERY;
        goto dberr;
    }
    rc = add_members(st, a, &team, add, 0, 0, &users, &tms);
    if (rc > 0)
        goto out;
    if (rc < 0)
        goto dberr;
    sy_admin_row_free(&team);
    if ((rc = load_team(st, tid, &team)) < 0)
        goto dberr;
    if ((rc = sy_store_commit(st)) < 0)
        goto dberr;
    in_tx = 0;
    sy_admin_invalidate(a, "team", tid);
    a->status = 200;
    sy_buf_reset(&a->out);
    int first = 1;
    SY_BUF_LIT(&a->out, "{");
    sy__row_members(&a->out, &team.r, NULL, &first);
    if ((rc = sy__objperm_member(st, &a->out, &first, op_id)) < 0)
        goto dberr;
    sy_admin_jkey(&a->out, &first, "litellm_model_table");
    SY_BUF_LIT(&a->out, "null}");
    goto out;
dberr:
    sy_admin_db_error(a, st, rc);
out:
    if (in_tx)
        sy_store_rollback(st);
    sy_admin_row_free(&team);
    sy__cset_free(&cs);
    sy_buf_free(&users);
    sy_buf_free(&tms);
    json_object_put(add);
    json_object_put(body);
}

/* ---- POST /team/update ---------------------------------------------------- */

static int required_str(struct sy_admin_ctx *a, struct json_object *body, const char *name, const char **out)
{
    int r = sy_admin_get_str(a, body, name, out);
    if (r == SY_AF_ERR)
        return -1;
    if (r != SY_AF_SET) {
        if (r == SY_AF_NULL) {
            struct json_object *v = NULL;
            json_object_object_get_ex(body, name, &v);
            sy_admin_422(a, name, "string_type", "Input should be a valid string", v);
        } else
            sy__missing(a, "body", name, body);
        return -1;
    }
    return 0;
}

static void team_update(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a);
    struct sy__cset cs = {0};
    struct sy_admin_row old = {0}, row = {0};
    const char *tid = NULL;
    char now[32];
    int rc, touched;
    if (!body)
        return;
    struct json_object *op = NULL;
    if (required_str(a, body, "team_id", &tid) < 0 || sy__collect(a, body, TEAM_F, NTEAM_F, 1, &cs) < 0 ||
        sy__objperm_get(a, body, &op) < 0)
        goto out;
    if ((rc = load_team(st, tid, &old)) < 0)
        goto dberr;
    if (!old.found) {
        sy__err_dict(a, 404, "internal_server_error", "Team not found, passed team_id=%s", tid);
        goto out;
    }
    if (op) { /* the team's row gets the fields given; a team without one gets one */
        const char *cur = sy_srow_text(&old.r, "object_permission_id");
        char op_id[128];
        if ((rc = sy__objperm_put(st, op, cur, op_id)) < 0)
            goto dberr;
        if (!cur || !*cur)
            sy__cset_put(&cs, "object_permission_id", sy_sv_text(sy__cset_own(&cs, strdup(op_id))));
    }
    char *meta = team_meta(body, sy_srow_text(&old.r, "metadata"), &touched);
    if (touched)
        sy__cset_put(&cs, "metadata", sy_sv_json(sy__cset_own(&cs, meta)));
    else
        free(meta);
    if (reset_at(a, &cs) < 0)
        goto out;
    sy_admin_iso_now(a, now);
    sy__cset_put(&cs, "updated_at", sy_sv_ts(now));
    if ((rc = put_model_aliases(st, a, body, &cs)) < 0)
        goto dberr;
    rc = sy__update(st, T_TEAMS, "team_id", tid, &cs, sy_admin_row_cb, &row);
    if (rc < 0 || !row.found) {
        rc = rc < 0 ? rc : SY_STORE_EQUERY;
        goto dberr;
    }
    sy_admin_invalidate(a, "team", tid);
    a->status = 200;
    sy_buf_reset(&a->out);
    int first = 1;
    SY_BUF_LIT(&a->out, "{\"team_id\":");
    sy_admin_jstr(&a->out, tid);
    SY_BUF_LIT(&a->out, ",\"data\":{");
    sy__row_members(&a->out, &row.r, NULL, &first);
    if ((rc = sy__objperm_member(st, &a->out, &first, sy_srow_text(&row.r, "object_permission_id"))) < 0)
        goto dberr;
    SY_BUF_LIT(&a->out, "}}");
    goto out;
dberr:
    sy_admin_db_error(a, st, rc);
out:
    sy_admin_row_free(&old);
    sy_admin_row_free(&row);
    sy__cset_free(&cs);
    json_object_put(body);
}

/* ---- member removal (member_delete, team delete) -------------------------- */

/* team_member_delete's effects for one member: out of members_with_roles
 * (members updated in place), the team out of the user rows' teams, the
 * membership rows deleted. *found: the member was listed. */
static int remove_member(struct sy_store *st, struct sy_admin_ctx *a, const char *tid, struct json_object *members,
                         const char *uid, const char *email, int *found)
{
    int rc;
    *found = 0;
    for (size_t i = json_object_array_length(members); i-- > 0;) {
        struct json_object *m = json_object_array_get_idx(members, i);
        const char *mu = mstr(m, "user_id"), *me = mstr(m, "user_email");
        if ((uid && mu && strcmp(uid, mu) == 0) || (!uid && email && me && strcmp(email, me) == 0)) {
            *found = 1;
            json_object_array_del_idx(members, i, 1);
        }
    }
    if (!*found)
        return 0;
    /* the users' teams */
    struct sy_sval p = sy_sv_text(uid ? uid : email);
    struct sy_buf ids;
    struct sy_admin_rows rows = {&ids, 0};
    sy_buf_init(&ids, 1 << 20);
    SY_BUF_LIT(&ids, "[");
    rc = sy_store_exec(st,
                       uid ? "SELECT \"user_id\", \"teams\" FROM " T_USERS " WHERE \"user_id\" = $1"
                           : "SELECT \"user_id\", \"teams\" FROM " T_USERS " WHERE \"user_email\" = $1",
                       1, &p, sy_admin_rows_cb, &rows);
    SY_BUF_LIT(&ids, "]");
    struct json_object *urows = rc >= 0 ? json_tokener_parse(ids.p) : NULL;
    sy_buf_free(&ids);
    for (size_t i = 0; rc >= 0 && urows && i < json_object_array_length(urows); i++) {
        struct json_object *u = json_object_array_get_idx(urows, i), *t = NULL;
        const char *u_id = mstr(u, "user_id");
        json_object_object_get_ex(u, "teams", &t);
        char *nt = sy__arr_del(t ? sy_admin_jtext(t) : NULL, tid);
        struct sy_sval q[2] = {sy_sv_textarr(nt), sy_sv_text(u_id)};
        rc = sy_store_exec(st, "UPDATE " T_USERS " SET \"teams\" = $1 WHERE \"user_id\" = $2", 2, q, NULL, NULL);
        if (rc >= 0) {
            struct sy_sval d[2] = {sy_sv_text(tid), sy_sv_text(u_id)};
            rc =
                sy_store_exec(st, "DELETE FROM " T_TM " WHERE \"team_id\" = $1 AND \"user_id\" = $2", 2, d, NULL, NULL);
        }
        sy_admin_invalidate(a, "user", u_id);
        free(nt);
    }
    json_object_put(urows);
    if (rc >= 0 && uid) {
        struct sy_sval d[2] = {sy_sv_text(tid), sy_sv_text(uid)};
        rc = sy_store_exec(st, "DELETE FROM " T_TM " WHERE \"team_id\" = $1 AND \"user_id\" = $2", 2, d, NULL, NULL);
    }
    return rc < 0 ? rc : 0;
}

static int save_members(struct sy_store *st, struct sy_admin_ctx *a, const char *tid, struct json_object *members,
                        struct sy_admin_row *row)
{
    char now[32];
    sy_admin_iso_now(a, now);
    struct sy_sval p[3] = {sy_sv_json(sy_admin_jtext(members)), sy_sv_ts(now), sy_sv_text(tid)};
    return sy_store_exec(st,
                         "UPDATE " T_TEAMS " SET \"members_with_roles\" = $1, \"updated_at\" = $2 WHERE \"team_id\" = "
                         "$3 RETURNING *",
                         3, p, row ? sy_admin_row_cb : NULL, row);
}

/* ---- POST /team/delete ---------------------------------------------------- */

static void team_delete(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a), *ids = NULL;
    int rc, in_tx = 0;
    if (!body)
        return;
    rc = sy_admin_get_strarr(a, body, "team_ids", &ids);
    if (rc < 0)
        goto out;
    if (rc != SY_AF_SET) {
        sy__missing(a, "body", "team_ids", body);
        goto out;
    }
    size_t n = json_object_array_length(ids);
    for (size_t i = 0; i < n; i++) {
        struct sy_admin_row t = {0};
        const char *tid = json_object_get_string(json_object_array_get_idx(ids, i));
        rc = load_team(st, tid, &t);
        int found = t.found;
        sy_admin_row_free(&t);
        if (rc < 0)
            goto dberr;
        if (!found) {
            sy__detail(a, 404, "Team not found, passed team_id=%s", tid);
            goto out;
        }
    }
    if ((rc = sy_store_begin(st)) < 0)
        goto dberr;
    in_tx = 1;
    for (size_t i = 0; i < n; i++) {
        struct sy_admin_row t = {0};
        const char *tid = json_object_get_string(json_object_array_get_idx(ids, i));
        struct sy_sval p = sy_sv_text(tid);
        rc = sy_store_exec(st, "DELETE FROM " T_KEYS " WHERE \"team_id\" = $1", 1, &p, NULL, NULL);
        if (rc >= 0)
            rc = load_team(st, tid, &t);
        if (rc >= 0 && t.found) {
            struct json_object *members = members_of(&t), *copy = json_tokener_parse(sy_admin_jtext(members));
            for (size_t j = 0; rc >= 0 && j < json_object_array_length(copy); j++) {
                struct json_object *m = json_object_array_get_idx(copy, j);
                int found;
                rc = remove_member(st, a, tid, members, mstr(m, "user_id"), mstr(m, "user_email"), &found);
            }
            json_object_put(members);
            json_object_put(copy);
        }
        sy_admin_row_free(&t);
        if (rc >= 0)
            rc = sy_store_exec(st, "DELETE FROM " T_TM " WHERE \"team_id\" = $1", 1, &p, NULL, NULL);
        if (rc >= 0)
            rc = sy_store_exec(st, "DELETE FROM " T_TEAMS " WHERE \"team_id\" = $1", 1, &p, NULL, NULL);
        if (rc < 0)
            goto dberr;
        sy_admin_invalidate(a, "team", tid);
    }
    if ((rc = sy_store_commit(st)) < 0)
        goto dberr;
    in_tx = 0;
    a->status = 200;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"deleted_teams\":");
    sy_buf_puts(&a->out, sy_admin_jtext(ids));
    SY_BUF_LIT(&a->out, "}");
    goto out;
dberr:
    sy_admin_db_error(a, st, rc);
out:
    if (in_tx)
        sy_store_rollback(st);
    json_object_put(body);
}

/* ---- GET /team/info, /team/list ------------------------------------------- */

/* memberships of a team, each with its budget row as "litellm_budget_table" */
static int tm_cb(void *ud, const struct sy_srow *r)
{
    struct sy_admin_rows *rows = ud;
    int first = 1;
    if (rows->n++)
        SY_BUF_LIT(rows->b, ",");
    SY_BUF_LIT(rows->b, "{");
    for (int i = 0; i < r->ncols; i++) {
        if (strncmp(r->names[i], "b_", 2) == 0)
            continue;
        sy_admin_jkey(rows->b, &first, r->names[i]);
        sy_sval_json(rows->b, &r->v[i]);
    }
    sy_admin_jkey(rows->b, &first, "litellm_budget_table");
    if (!sy_srow_text(r, "b_budget_id"))
        SY_BUF_LIT(rows->b, "null");
    else {
        int f2 = 1;
        SY_BUF_LIT(rows->b, "{");
        for (int i = 0; i < r->ncols; i++)
            if (strncmp(r->names[i], "b_", 2) == 0) {
                sy_admin_jkey(rows->b, &f2, r->names[i] + 2);
                sy_sval_json(rows->b, &r->v[i]);
            }
        SY_BUF_LIT(rows->b, "}");
    }
    SY_BUF_LIT(rows->b, "}");
    return 0;
}
#define TM_SELECT                                                                                                 \
    "SELECT m.*, b.\"budget_id\" AS \"b_budget_id\", b.\"max_budget\" AS \"b_max_budget\", b.\"soft_budget\" AS " \
    "\"b_soft_budget\", b.\"max_parallel_requests\" AS \"b_max_parallel_requests\", b.\"tpm_limit\" AS "          \
    "\"b_tpm_limit\", b.\"rpm_limit\" AS \"b_rpm_limit\", b.\"model_max_budget\" AS \"b_model_max_budget\", "     \
    "b.\"budget_duration\" AS \"b_budget_duration\", b.\"budget_reset_at\" AS \"b_budget_reset_at\", "            \
    "b.\"created_at\" "                                                                                           \
    "AS \"b_created_at\", b.\"created_by\" AS \"b_created_by\", b.\"updated_at\" AS \"b_updated_at\", "           \
    "b.\"updated_by\" AS \"b_updated_by\" FROM " T_TM " m LEFT JOIN " T_BUDGET                                    \
    " b ON b.\"budget_id\" = m.\"budget_id\" "

/* keys and memberships of team tid into b: ,"keys":[..],"team_memberships":[..] */
static int team_extras(struct sy_store *st, struct sy_admin_ctx *a, const char *tid, struct sy_buf *b)
{
    char now[32];
    sy_admin_iso_now(a, now);
    struct sy_sval p[2] = {sy_sv_text(tid), sy_sv_ts(now)};
    struct sy_admin_rows rows = {b, 0};
    SY_BUF_LIT(b, ",\"keys\":[");
    int rc = sy_store_exec(
        st, "SELECT * FROM " T_KEYS " WHERE \"team_id\" = $1 AND (\"expires\" IS NULL OR \"expires\" > $2)", 2, p,
        sy_admin_rows_cb, &rows);
    if (rc < 0)
        return rc;
    SY_BUF_LIT(b, "],\"team_memberships\":[");
    rows.n = 0;
    rc = sy_store_exec(st, TM_SELECT "WHERE m.\"team_id\" = $1", 1, p, tm_cb, &rows);
    SY_BUF_LIT(b, "]");
    return rc < 0 ? rc : 0;
}

static void team_info(struct sy_store *st, struct sy_admin_ctx *a)
{
    char tid[512];
    struct sy_admin_row t = {0};
    int rc;
    if (!sy_admin_query(a, "team_id", tid, sizeof tid)) {
        sy_admin_error(a, 422, "auth_error", "None", "{'message': 'Malformed request. No team id passed in.'}");
        return;
    }
    if ((rc = load_team(st, tid, &t)) < 0) {
        sy_admin_db_error(a, st, rc);
        return;
    }
    if (!t.found) {
        sy_admin_error(a, 404, "auth_error", "None", "{'message': 'Team not found, passed team id: %s.'}", tid);
        return;
    }
    /* validate_membership: admins, the team's own keys, its members */
    if (!a->is_admin && !a->is_admin_viewer && !(a->caller_team_id && strcmp(a->caller_team_id, tid) == 0)) {
        struct json_object *members = members_of(&t);
        int member = 0;
        for (size_t i = 0; i < json_object_array_length(members); i++) {
            const char *u = mstr(json_object_array_get_idx(members, i), "user_id");
            member |= u && a->caller_user_id && strcmp(u, a->caller_user_id) == 0;
        }
        json_object_put(members);
        if (!member) {
            sy_admin_error(a, 403, "auth_error", "None", "{'error': 'User=%s not authorized to access this team=%s'}",
                           a->caller_user_id ? a->caller_user_id : "None", tid);
            sy_admin_row_free(&t);
            return;
        }
    }
    struct sy_buf extra;
    sy_buf_init(&extra, 64 << 20);
    rc = team_extras(st, a, tid, &extra);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        goto out;
    }
    /* team_member_budget_table when the team has a member budget */
    struct sy_buf tmb;
    sy_buf_init(&tmb, 1 << 20);
    {
        const char *ms = sy_srow_text(&t.r, "metadata");
        struct json_object *meta = ms ? json_tokener_parse(ms) : NULL, *v;
        const char *bid = meta && json_object_object_get_ex(meta, "team_member_budget_id", &v) && v
                              ? json_object_get_string(v)
                              : NULL;
        rc = sy__budget_json(st, bid, &tmb);
        json_object_put(meta);
    }
    a->status = 200;
    sy_buf_reset(&a->out);
    int first = 1;
    SY_BUF_LIT(&a->out, "{\"team_id\":");
    sy_admin_jstr(&a->out, tid);
    SY_BUF_LIT(&a->out, ",\"team_info\":{");
    sy__row_members(&a->out, &t.r, NULL, &first);
    if ((rc = sy__objperm_member(st, &a->out, &first, sy_srow_text(&t.r, "object_permission_id"))) < 0) {
        sy_admin_db_error(a, st, rc);
        sy_buf_free(&tmb);
        goto out;
    }
    sy_admin_jkey(&a->out, &first, "team_member_budget_table");
    sy_buf_append(&a->out, tmb.p ? tmb.p : "null", tmb.p ? tmb.len : 4);
    sy_admin_limits_usage(&a->out, &first, SY_LIM_TEAM, tid);
    SY_BUF_LIT(&a->out, "}");
    sy_buf_append_buf(&a->out, &extra);
    SY_BUF_LIT(&a->out, "}");
    sy_buf_free(&tmb);
out:
    sy_buf_free(&extra);
    sy_admin_row_free(&t);
}

struct tlist {
    int n;
    char *json[4096];
    char *id[4096];
};
static int tlist_cb(void *ud, const struct sy_srow *r)
{
    struct tlist *l = ud;
    struct sy_buf b;
    int first = 1;
    if (l->n >= 4096)
        return 1;
    sy_buf_init(&b, 16 << 20);
    sy__row_members(&b, r, NULL, &first);
    l->json[l->n] = strndup(b.p ? b.p : "", b.len);
    l->id[l->n++] = strdup(sy_srow_text(r, "team_id") ? sy_srow_text(r, "team_id") : "");
    sy_buf_free(&b);
    return 0;
}

static void team_list(struct sy_store *st, struct sy_admin_ctx *a)
{
    char uid[512], org[512];
    const char *user_id = sy_admin_query(a, "user_id", uid, sizeof uid);
    const char *org_id = sy_admin_query(a, "organization_id", org, sizeof org);
    struct tlist l = {0};
    struct sy_buf out;
    int rc;
    if (user_id && !*user_id)
        user_id = NULL;
    /* list_team: a non-admin lists only the teams it is a member of */
    if (!a->is_admin && !a->is_admin_viewer) {
        if (!a->caller_user_id || (user_id && strcmp(user_id, a->caller_user_id) != 0)) {
            sy__detail(a, 401, "Only admin users can query all teams/other teams. Your user role=%s",
                       a->caller_role == SY_ROLE_NONE ? "None" : sy_role_name(a->caller_role));
            return;
        }
        user_id = a->caller_user_id;
    }
    sy_buf_init(&out, 256 << 20);
    if (org_id)
        rc = sy_store_exec(st, "SELECT * FROM " T_TEAMS " WHERE \"organization_id\" = $1 ORDER BY \"created_at\"", 1,
                           (struct sy_sval[]){sy_sv_text(org_id)}, tlist_cb, &l);
    else
        rc = sy_store_exec(st, "SELECT * FROM " T_TEAMS " ORDER BY \"created_at\"", 0, NULL, tlist_cb, &l);
    if (rc < 0)
        goto dberr;
    SY_BUF_LIT(&out, "[");
    int n = 0;
    for (int i = 0; i < l.n; i++) {
        if (user_id) { /* teams listing user_id in members_with_roles */
            size_t wl = strlen(l.json[i]) + 3;
            char *wrapped = malloc(wl);
            snprintf(wrapped, wl, "{%s}", l.json[i]);
            struct json_object *row = json_tokener_parse(wrapped), *mw = NULL;
            free(wrapped);
            int member = 0;
            if (row && json_object_object_get_ex(row, "members_with_roles", &mw) &&
                json_object_is_type(mw, json_type_array))
                for (size_t j = 0; j < json_object_array_length(mw); j++) {
                    const char *u = mstr(json_object_array_get_idx(mw, j), "user_id");
                    member |= u && strcmp(u, user_id) == 0;
                }
            json_object_put(row);
            if (!member)
                continue;
        }
        if (n++)
            SY_BUF_LIT(&out, ",");
        SY_BUF_LIT(&out, "{");
        sy_buf_puts(&out, l.json[i]);
        if ((rc = team_extras(st, a, l.id[i], &out)) < 0)
            goto dberr;
        SY_BUF_LIT(&out, "}");
    }
    SY_BUF_LIT(&out, "]");
    a->status = 200;
    sy_buf_reset(&a->out);
    sy_buf_append_buf(&a->out, &out);
    goto done;
dberr:
    sy_admin_db_error(a, st, rc);
done:
    for (int i = 0; i < l.n; i++)
        free(l.json[i]), free(l.id[i]);
    sy_buf_free(&out);
}

/* ---- POST /team/member_add ------------------------------------------------ */

/* The member routes are a proxy admin's or the team's admins' (LiteLLM's
 * _is_user_team_admin): 0 ok, 1 refused (403 written), < 0 a store error. */
static int team_admin_check(struct sy_store *st, struct sy_admin_ctx *a, const char *tid, const char *route)
{
    if (a->is_admin)
        return 0;
    int rc = sy__is_team_admin(st, a, tid);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        sy__detail(a, 403, "Call not allowed. User not proxy admin OR team admin. route=%s, team_id=%s", route, tid);
        return 1;
    }
    return 0;
}

/* The transaction of /team/member_add: the members added (users and
 * memberships written, listed in users and tms), then the team read back. */
struct member_add_tx {
    const char *tid;
    struct sy_admin_row *t;
    struct json_object *add;
    int has_budget;
    double budget;
    struct sy_buf *users, *tms;
};
static int member_add_tx(struct sy_store *st, struct sy_admin_ctx *a, void *ud)
{
    struct member_add_tx *x = ud;
    SY_BUF_LIT(x->users, "[");
    SY_BUF_LIT(x->tms, "[");
    int rc = add_members(st, a, x->t, x->add, x->has_budget, x->budget, x->users, x->tms);
    if (rc != 0)
        return rc > 0 ? SY_ADMIN_TX_ABORT : rc; /* > 0: it answered (a 4xx) */
    SY_BUF_LIT(x->users, "]");
    SY_BUF_LIT(x->tms, "]");
    sy_admin_row_free(x->t);
    rc = load_team(st, x->tid, x->t);
    return rc < 0 ? rc : 0;
}

static void team_member_add(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a), *member = NULL, *add = NULL;
    struct sy_admin_row t = {0};
    struct sy_buf users, tms;
    const char *tid = NULL;
    double budget = 0;
    int has_budget = 0, rc;
    sy_buf_init(&users, 16 << 20);
    sy_buf_init(&tms, 16 << 20);
    if (!body)
        goto out;
    if (required_str(a, body, "team_id", &tid) < 0)
        goto out;
    if (!json_object_object_get_ex(body, "member", &member) || !member) {
        sy__missing(a, "body", "member", body);
        goto out;
    }
    rc = sy_admin_get_num(a, body, "max_budget_in_team", &budget);
    if (rc < 0)
        goto out;
    has_budget = rc == SY_AF_SET;
    int is_list = json_object_is_type(member, json_type_array);
    add = json_object_new_array();
    if (is_list) {
        for (size_t i = 0; i < json_object_array_length(member); i++) {
            if (member_check(a, json_object_array_get_idx(member, i), (int)i) < 0)
                goto out;
            json_object_array_add(add, json_object_get(json_object_array_get_idx(member, i)));
        }
    } else {
        if (member_check(a, member, -1) < 0)
            goto out;
        json_object_array_add(add, json_object_get(member));
    }
    if ((rc = load_team(st, tid, &t)) < 0)
        goto dberr;
    if (!t.found) {
        sy__detail(a, 404, "Team not found for team_id=%s", tid);
        goto out;
    }
    if ((rc = team_admin_check(st, a, tid, "/team/member_add")) != 0) {
        if (rc < 0)
            goto dberr;
        goto out;
    }
    /* team_member_add_duplication_check */
    {
        struct json_object *members = members_of(&t);
        size_t dups = 0;
        for (size_t i = 0; i < json_object_array_length(add); i++) {
            struct json_object *m = json_object_array_get_idx(add, i);
            const char *u = mstr(m, "user_id"), *e = mstr(m, "user_email");
            for (size_t j = 0; j < json_object_array_length(members); j++) {
                struct json_object *x = json_object_array_get_idx(members, j);
                const char *xu = mstr(x, "user_id"), *xe = mstr(x, "user_email");
                if ((u && xu && strcmp(u, xu) == 0) || (e && xe && strcmp(e, xe) == 0)) {
                    dups++;
                    break;
                }
            }
        }
        if (dups && (!is_list || dups == json_object_array_length(add))) {
            struct sy_buf msg;
            sy_buf_init(&msg, 1 << 20);
            if (is_list)
                sy_buf_puts(&msg, "All users are already in team. Existing members=");
            else {
                const char *u = mstr(member, "user_id"), *e = mstr(member, "user_email");
                sy_buf_printf(&msg, "User already in team. Member: user_id=%s, user_email=%s. Existing members=",
                              u ? u : "None", e ? e : "None");
            }
            members_repr(&msg, members);
            sy_admin_error(a, 400, "team_member_already_in_team", "member", "%s", msg.p);
            sy_buf_free(&msg);
            json_object_put(members);
            goto out;
        }
        json_object_put(members);
    }
    struct member_add_tx tx = {tid, &t, add, has_budget, budget, &users, &tms};
    if (sy_admin_tx(st, a, member_add_tx, &tx) != 0)
        goto out;
    sy_admin_invalidate(a, "team", tid);
    a->status = 200;
    sy_buf_reset(&a->out);
    int first = 1;
    SY_BUF_LIT(&a->out, "{");
    sy__row_members(&a->out, &t.r, NULL, &first);
    SY_BUF_LIT(&a->out, ",\"updated_users\":");
    sy_buf_append_buf(&a->out, &users);
    SY_BUF_LIT(&a->out, ",\"updated_team_memberships\":");
    sy_buf_append_buf(&a->out, &tms);
    SY_BUF_LIT(&a->out, "}");
    goto out;
dberr:
    sy_admin_db_error(a, st, rc);
out:
    sy_admin_row_free(&t);
    sy_buf_free(&users);
    sy_buf_free(&tms);
    json_object_put(add);
    json_object_put(body);
}

/* ---- POST /team/member_delete --------------------------------------------- */

/* The transaction of /team/member_delete: the member out of the team's
 * list and its membership rows. */
struct member_delete_tx {
    const char *tid;
    struct json_object *members;
    const char *uid, *email;
    struct sy_admin_row *row;
};
static int member_delete_tx(struct sy_store *st, struct sy_admin_ctx *a, void *ud)
{
    struct member_delete_tx *x = ud;
    int found;
    int rc = remove_member(st, a, x->tid, x->members, x->uid, x->email, &found);
    if (rc < 0)
        return rc;
    if (!found) {
        sy__detail(a, 400, "User not found in team");
        return SY_ADMIN_TX_ABORT;
    }
    rc = save_members(st, a, x->tid, x->members, x->row);
    return rc < 0 ? rc : 0;
}

static void team_member_delete(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a), *members = NULL;
    struct sy_admin_row t = {0}, row = {0};
    const char *tid = NULL, *uid = NULL, *email = NULL;
    int rc;
    if (!body)
        return;
    if (required_str(a, body, "team_id", &tid) < 0 || sy_admin_get_str(a, body, "user_id", &uid) < 0 ||
        sy_admin_get_str(a, body, "user_email", &email) < 0)
        goto out;
    if (!uid && !email) {
        sy__detail(a, 400, "Either user_id or user_email needs to be passed in");
        goto out;
    }
    if ((rc = load_team(st, tid, &t)) < 0)
        goto dberr;
    if (!t.found) {
        sy__detail(a, 400, "Team id=%s does not exist in db", tid);
        goto out;
    }
    if ((rc = team_admin_check(st, a, tid, "/team/member_delete")) != 0) {
        if (rc < 0)
            goto dberr;
        goto out;
    }
    members = members_of(&t);
    struct member_delete_tx tx = {tid, members, uid, email, &row};
    if (sy_admin_tx(st, a, member_delete_tx, &tx) != 0)
        goto out;
    sy_admin_invalidate(a, "team", tid);
    a->status = 200;
    sy_buf_reset(&a->out);
    int first = 1;
    SY_BUF_LIT(&a->out, "{");
    sy__row_members(&a->out, &row.r, NULL, &first);
    SY_BUF_LIT(&a->out, "}");
    goto out;
dberr:
    sy_admin_db_error(a, st, rc);
out:
    json_object_put(members);
    sy_admin_row_free(&t);
    sy_admin_row_free(&row);
    json_object_put(body);
}

/* ---- POST /team/member_update --------------------------------------------- */

static void team_member_update(struct sy_store *st, struct sy_admin_ctx *a)
{
    struct json_object *body = sy_admin_body(a), *members = NULL;
    struct sy_admin_row t = {0}, tm = {0};
    const char *tid = NULL, *uid = NULL, *email = NULL, *role = NULL;
    double mb = 0;
    int64_t tpm = 0, rpm = 0;
    int hb, ht, hr, rc, in_tx = 0;
    char who[256];
    if (!body)
        return;
    if (required_str(a, body, "team_id", &tid) < 0 || sy_admin_get_str(a, body, "user_id", &uid) < 0 ||
        sy_admin_get_str(a, body, "user_email", &email) < 0 || sy_admin_get_str(a, body, "role", &role) < 0 ||
        (hb = sy_admin_get_num(a, body, "max_budget_in_team", &mb)) < 0 ||
        (ht = sy_admin_get_int(a, body, "tpm_limit", &tpm)) < 0 ||
        (hr = sy_admin_get_int(a, body, "rpm_limit", &rpm)) < 0)
        goto out;
    hb = hb == SY_AF_SET, ht = ht == SY_AF_SET, hr = hr == SY_AF_SET;
    if (role && strcmp(role, "admin") && strcmp(role, "user")) {
        struct json_object *v = NULL;
        json_object_object_get_ex(body, "role", &v);
        sy_admin_422(a, "role", "literal_error", "Input should be 'admin' or 'user'", v);
        goto out;
    }
    if (!uid && !email) {
        sy__detail(a, 400, "Either user_id or user_email needs to be passed in");
        goto out;
    }
    if ((rc = load_team(st, tid, &t)) < 0)
        goto dberr;
    if (!t.found) {
        sy__detail(a, 400, "Team id=%s does not exist in db", tid);
        goto out;
    }
    /* LiteLLM names /team/member_delete in this message too */
    if ((rc = team_admin_check(st, a, tid, "/team/member_delete")) != 0) {
        if (rc < 0)
            goto dberr;
        goto out;
    }
    members = members_of(&t);
    who[0] = 0;
    if (uid)
        snprintf(who, sizeof who, "%s", uid);
    else
        for (size_t i = 0; i < json_object_array_length(members); i++) {
            struct json_object *m = json_object_array_get_idx(members, i);
            if (mstr(m, "user_email") && strcmp(mstr(m, "user_email"), email) == 0 && mstr(m, "user_id")) {
                snprintf(who, sizeof who, "%s", mstr(m, "user_id"));
                break;
            }
        }
    if (!who[0]) {
        sy__detail(a, 400, "User id doesn't exist in team table. Data=team_id='%s' user_id=None user_email='%s'", tid,
                   email);
        goto out;
    }
    if ((rc = sy_store_begin(st)) < 0)
        goto dberr;
    in_tx = 1;
    {
        struct sy_sval p[2] = {sy_sv_text(who), sy_sv_text(tid)};
        rc = sy_store_exec(st, "SELECT * FROM " T_TM " WHERE \"user_id\" = $1 AND \"team_id\" = $2", 2, p,
                           sy_admin_row_cb, &tm);
        if (rc < 0)
            goto dberr;
        const char *bid = tm.found ? sy_srow_text(&tm.r, "budget_id") : NULL;
        if (!hb && !ht && !hr) { /* _upsert_budget_and_membership: unlink the budget */
            if (tm.found)
                rc = sy_store_exec(
                    st, "UPDATE " T_TM " SET \"budget_id\" = NULL WHERE \"user_id\" = $1 AND \"team_id\" = $2", 2, p,
                    NULL, NULL);
        } else if (bid) {
            struct sy__cset cs = {0};
            char now[32];
            sy_admin_iso_now(a, now);
            if (hb)
                sy__cset_put(&cs, "max_budget", sy_sv_num(mb));
            if (ht)
                sy__cset_put(&cs, "tpm_limit", sy_sv_int(tpm));
            if (hr)
                sy__cset_put(&cs, "rpm_limit", sy_sv_int(rpm));
            sy__cset_put(&cs, "updated_at", sy_sv_ts(now));
            sy__cset_put(&cs, "updated_by", sy_sv_text(sy_admin_actor(a)));
            rc = sy__update(st, T_BUDGET, "budget_id", bid, &cs, NULL, NULL);
            sy__cset_free(&cs);
        } else {
            struct sy__cset cs = {0};
            char nb[128];
            if (hb)
                sy__cset_put(&cs, "max_budget", sy_sv_num(mb));
            if (ht)
                sy__cset_put(&cs, "tpm_limit", sy_sv_int(tpm));
            if (hr)
                sy__cset_put(&cs, "rpm_limit", sy_sv_int(rpm));
            rc = sy__budget_insert(st, a, &cs, nb, NULL);
            sy__cset_free(&cs);
            if (rc >= 0) {
                struct sy_sval q[3] = {sy_sv_text(who), sy_sv_text(tid), sy_sv_text(nb)};
                rc = sy_store_exec(st,
                                   "INSERT INTO " T_TM " (\"user_id\", \"team_id\", \"budget_id\", \"spend\") VALUES "
                                   "($1, $2, $3, 0) ON CONFLICT (\"user_id\", \"team_id\") DO UPDATE SET \"budget_id\" "
                                   "= EXCLUDED.\"budget_id\"",
                                   3, q, NULL, NULL);
            }
        }
        if (rc < 0)
            goto dberr;
    }
    if (role) {
        for (size_t i = 0; i < json_object_array_length(members); i++) {
            struct json_object *m = json_object_array_get_idx(members, i);
            if (mstr(m, "user_id") && strcmp(mstr(m, "user_id"), who) == 0) {
                json_object_object_add(m, "role", json_object_new_string(role));
                if (email)
                    json_object_object_add(m, "user_email", json_object_new_string(email));
            }
        }
        if ((rc = save_members(st, a, tid, members, NULL)) < 0)
            goto dberr;
    }
    if ((rc = sy_store_commit(st)) < 0)
        goto dberr;
    in_tx = 0;
    sy_admin_invalidate(a, "team", tid);
    sy_admin_invalidate(a, "user", who);
    a->status = 200;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"team_id\":");
    sy_admin_jstr(&a->out, tid);
    SY_BUF_LIT(&a->out, ",\"user_id\":");
    sy_admin_jstr(&a->out, who);
    SY_BUF_LIT(&a->out, ",\"user_email\":");
    sy_admin_jstr(&a->out, email);
    SY_BUF_LIT(&a->out, ",\"max_budget_in_team\":");
    if (hb)
        sy_admin_jnum(&a->out, mb);
    else
        SY_BUF_LIT(&a->out, "null");
    SY_BUF_LIT(&a->out, ",\"tpm_limit\":");
    if (ht)
        sy_buf_printf(&a->out, "%lld", (long long)tpm);
    else
        SY_BUF_LIT(&a->out, "null");
    SY_BUF_LIT(&a->out, ",\"rpm_limit\":");
    if (hr)
        sy_buf_printf(&a->out, "%lld", (long long)rpm);
    else
        SY_BUF_LIT(&a->out, "null");
    SY_BUF_LIT(&a->out, "}");
    goto out;
dberr:
    sy_admin_db_error(a, st, rc);
out:
    if (in_tx)
        sy_store_rollback(st);
    json_object_put(members);
    sy_admin_row_free(&t);
    sy_admin_row_free(&tm);
    json_object_put(body);
}

/* ---- POST /team/block, /team/unblock -------------------------------------- */

static void set_blocked(struct sy_store *st, struct sy_admin_ctx *a, int blocked)
{
    struct json_object *body = sy_admin_body(a);
    struct sy_admin_row row = {0};
    const char *tid = NULL;
    if (!body)
        return;
    if (required_str(a, body, "team_id", &tid) == 0) {
        char now[32];
        sy_admin_iso_now(a, now);
        struct sy_sval p[3] = {sy_sv_bool(blocked), sy_sv_ts(now), sy_sv_text(tid)};
        int rc = sy_store_exec(st,
                               "UPDATE " T_TEAMS " SET \"blocked\" = $1, \"updated_at\" = $2 WHERE \"team_id\" = $3 "
                               "RETURNING *",
                               3, p, sy_admin_row_cb, &row);
        if (rc < 0)
            sy_admin_db_error(a, st, rc);
        else if (!row.found)
            sy__detail(a, 404, "Team not found, passed team_id=%s", tid);
        else {
            int first = 1;
            sy_admin_invalidate(a, "team", tid);
            a->status = 200;
            sy_buf_reset(&a->out);
            SY_BUF_LIT(&a->out, "{");
            sy__row_members(&a->out, &row.r, NULL, &first);
            SY_BUF_LIT(&a->out, "}");
        }
    }
    sy_admin_row_free(&row);
    json_object_put(body);
}
static void team_block(struct sy_store *st, struct sy_admin_ctx *a)
{
    set_blocked(st, a, 1);
}
static void team_unblock(struct sy_store *st, struct sy_admin_ctx *a)
{
    set_blocked(st, a, 0);
}

const struct sy_admin_route sy_admin_team_routes[] = {
    {HTTP_POST, "/team/new", team_new, 0},
    {HTTP_POST, "/team/update", team_update, 0},
    {HTTP_POST, "/team/delete", team_delete, 0},
    {HTTP_GET, "/team/info", team_info, SY_ADMIN_SELF | SY_ADMIN_READONLY},
    {HTTP_GET, "/team/list", team_list, SY_ADMIN_SELF | SY_ADMIN_READONLY},
    {HTTP_POST, "/team/member_add", team_member_add, SY_ADMIN_TEAM},
    {HTTP_POST, "/team/member_delete", team_member_delete, SY_ADMIN_TEAM},
    {HTTP_POST, "/team/member_update", team_member_update, SY_ADMIN_TEAM},
    {HTTP_POST, "/team/block", team_block, 0},
    {HTTP_POST, "/team/unblock", team_unblock, 0},
    {0, NULL, NULL, 0},
};
