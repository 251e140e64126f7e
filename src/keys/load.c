/* load.c - building a key's auth object (and an end user's) from the database.
 *
 * Runs on a DB thread (store/dbpool.h), never on a loop. One key costs up to
 * eight point reads, each by primary key, in LiteLLM's own tables (the SQL is
 * the common subset of store.h, so it runs on SQLite and PostgreSQL alike):
 *
 *   1 "LiteLLM_VerificationToken"  WHERE token = $1           the key
 *   2 "LiteLLM_BudgetTable"        WHERE budget_id = key's     fills what the key leaves NULL
 *   3 "LiteLLM_TeamTable"          WHERE team_id = key's       team budget, models, blocked, limits
 *     "LiteLLM_ModelTable"         WHERE id = team's model_id  the team's model_aliases
 *   4 "LiteLLM_UserTable"          WHERE user_id = key's       user budget, models, role
 *   5 "LiteLLM_TeamMembership"     WHERE (user_id, team_id)    member spend + budget_id
 *     "LiteLLM_BudgetTable"        WHERE budget_id = member's  (else team.metadata.team_member_budget_id)
 *   6 "LiteLLM_OrganizationTable"  WHERE organization_id = key's, else the team's
 *     "LiteLLM_BudgetTable"        WHERE budget_id = org's     org max_budget, limits
 *
 * The key, its team and its organization each bring their
 * "LiteLLM_ObjectPermissionTable" row (MCP servers, access groups, tool
 * permissions: sy_keyinfo.perm, team_perm, org_perm) in the same statement,
 * by a LEFT JOIN on object_permission_id.
 *
 * How the key's own fields combine with its budget row follows LiteLLM's
 * LiteLLM_VerificationTokenView: max_budget, soft_budget, tpm_limit,
 * rpm_limit and model_max_budget come from the budget row when the key's own
 * column is NULL (model_max_budget also when it is {}); then a live
 * metadata.temp_budget_increase (until metadata.temp_budget_expiry) is added
 * to max_budget, as _update_key_budget_with_temp_budget_increase does.
 *
 * Value shapes (store.h): TEXT[] columns arrive as JSON array text, JSONB as
 * JSON text, TIMESTAMP(3) as ISO-8601 text (converted with sy_iso_parse).
 * JSON is parsed with json-c (this is not the hot path).
 *
 * End users: "LiteLLM_EndUserTable" WHERE user_id = $1, and its budget row.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keys/keys.h"
#include "keys/keys_impl.h"
#include "store/store.h"

/* ---- JSON helpers -------------------------------------------------------- */

static char *xstrdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

int sy__strv_from_json(const char *json, char ***v, size_t *n)
{
    *v = NULL;
    *n = 0;
    if (!json || !*json)
        return 0;
    struct json_object *o = json_tokener_parse(json);
    if (!o)
        return 0;
    if (!json_object_is_type(o, json_type_array) || json_object_array_length(o) == 0) {
        json_object_put(o);
        return 0;
    }
    size_t len = json_object_array_length(o);
    char **out = calloc(len, sizeof *out);
    if (!out) {
        json_object_put(o);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        struct json_object *e = json_object_array_get_idx(o, i);
        if (!json_object_is_type(e, json_type_string))
            continue;
        if (!(out[k] = strdup(json_object_get_string(e)))) {
            sy__strv_free(out, k);
            json_object_put(o);
            return -1;
        }
        k++;
    }
    json_object_put(o);
    if (!k) {
        free(out);
        return 0;
    }
    *v = out;
    *n = k;
    return 0;
}

int sy__strmap_from_json(const char *json, char ***v, size_t *n)
{
    *v = NULL;
    *n = 0;
    if (!json || !*json)
        return 0;
    struct json_object *o = json_tokener_parse(json);
    if (!o || !json_object_is_type(o, json_type_object) || json_object_object_length(o) == 0) {
        json_object_put(o);
        return 0;
    }
    size_t cap = 2 * (size_t)json_object_object_length(o), k = 0;
    char **out = calloc(cap, sizeof *out);
    int rc = out ? 0 : -1;
    json_object_object_foreach(o, name, val)
    {
        if (rc || !json_object_is_type(val, json_type_string))
            continue;
        if (!(out[k] = strdup(name)) || !(out[k + 1] = strdup(json_object_get_string(val)))) {
            rc = -1;
            continue;
        }
        k += 2;
    }
    json_object_put(o);
    if (rc || !k) {
        for (size_t i = 0; out && i < cap; i++)
            free(out[i]);
        free(out);
        return rc;
    }
    *v = out;
    *n = k;
    return 0;
}

char *sy__json_get_string(const char *json, const char *key)
{
    if (!json || !*json)
        return NULL;
    struct json_object *o = json_tokener_parse(json), *e;
    char *r = NULL;
    if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &e) &&
        json_object_is_type(e, json_type_string))
        r = strdup(json_object_get_string(e));
    json_object_put(o);
    return r;
}

static int num_of(struct json_object *e, double *d)
{
    if (json_object_is_type(e, json_type_double) || json_object_is_type(e, json_type_int)) {
        *d = json_object_get_double(e);
        return isfinite(*d) ? 0 : -1;
    }
    return -1;
}

int sy__mmb_parse(const char *json, const char *model_spend, struct sy_model_budget **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!json || !*json)
        return 0;
    struct json_object *o = json_tokener_parse(json);
    if (!o || !json_object_is_type(o, json_type_object) || json_object_object_length(o) == 0) {
        json_object_put(o);
        return 0;
    }
    struct json_object *ms = model_spend ? json_tokener_parse(model_spend) : NULL;
    if (ms && !json_object_is_type(ms, json_type_object)) {
        json_object_put(ms);
        ms = NULL;
    }
    size_t cap = (size_t)json_object_object_length(o), k = 0;
    struct sy_model_budget *m = calloc(cap, sizeof *m);
    int rc = m ? 0 : -1;
    json_object_object_foreach(o, name, cfg)
    {
        if (rc || k >= cap)
            break;
        if (!cfg || !json_object_is_type(cfg, json_type_object))
            continue;
        struct json_object *e;
        double budget;
        /* BudgetConfig: budget_limit / time_period are aliases of max_budget / budget_duration */
        if (!((json_object_object_get_ex(cfg, "budget_limit", &e) && num_of(e, &budget) == 0) ||
              (json_object_object_get_ex(cfg, "max_budget", &e) && num_of(e, &budget) == 0)))
            continue;
        const char *dur = NULL;
        if ((json_object_object_get_ex(cfg, "time_period", &e) && json_object_is_type(e, json_type_string)) ||
            (json_object_object_get_ex(cfg, "budget_duration", &e) && json_object_is_type(e, json_type_string)))
            dur = json_object_get_string(e);
        double spent = 0;
        if (ms && json_object_object_get_ex(ms, name, &e) && num_of(e, &spent) != 0)
            spent = 0;
        m[k].model = strdup(name);
        m[k].budget_duration = xstrdup(dur);
        m[k].max_budget = budget;
        m[k].spend = spent;
        if (!m[k].model || (dur && !m[k].budget_duration)) {
            free(m[k].model);
            free(m[k].budget_duration);
            rc = -1;
            break;
        }
        k++;
    }
    json_object_put(ms);
    json_object_put(o);
    if (rc) {
        sy__mmb_free(m, k);
        return -1;
    }
    if (!k) {
        free(m);
        return 0;
    }
    *out = m;
    *n = k;
    return 0;
}

/* ---- row capture ----------------------------------------------------------
 * A row callback copies what it needs out of the row (the row's text is only
 * valid during the callback). `oom` is set when a copy fails. */

struct cap {
    int found;
    int oom;
};

static char *dup_col(struct cap *c, const struct sy_srow *r, const char *name)
{
    const char *s = sy_srow_text(r, name);
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        c->oom = 1;
    return d;
}

static double ts_col(const struct sy_srow *r, const char *name)
{
    const char *s = sy_srow_text(r, name);
    if (!s)
        return 0;
    double t = sy_iso_parse(s);
    return t == -1 ? 0 : t; /* unparseable: as if none */
}

static void strv_col(struct cap *c, const struct sy_srow *r, const char *name, char ***v, size_t *n)
{
    if (sy__strv_from_json(sy_srow_text(r, name), v, n) != 0)
        c->oom = 1;
}

void sy__objperm_free(struct sy_objperm *p)
{
    if (!p)
        return;
    sy__strv_free(p->mcp_servers, p->nmcp_servers);
    sy__strv_free(p->mcp_access_groups, p->nmcp_access_groups);
    free(p->mcp_tool_permissions);
    free(p);
}

/* The joined object permission columns (OP_COLS) of a row; NULL when the
 * entity has none (or its row is gone). */
static struct sy_objperm *perm_col(struct cap *c, const struct sy_srow *r)
{
    if (!sy_srow_text(r, "op_id"))
        return NULL;
    struct sy_objperm *p = calloc(1, sizeof *p);
    if (!p) {
        c->oom = 1;
        return NULL;
    }
    strv_col(c, r, "op_mcp_servers", &p->mcp_servers, &p->nmcp_servers);
    strv_col(c, r, "op_mcp_access_groups", &p->mcp_access_groups, &p->nmcp_access_groups);
    const char *tp = sy_srow_text(r, "op_mcp_tool_permissions");
    if (tp && strcmp(tp, "null") != 0 && !(p->mcp_tool_permissions = strdup(tp)))
        c->oom = 1;
    return p;
}

/* a budget row, "LiteLLM_BudgetTable" */
struct budget_row {
    struct cap c;
    double max_budget, soft_budget, reset_at;
    int64_t tpm, rpm, par;
    char *duration, *mmb;
    char **models; /* allowed_models */
    size_t nmodels;
};

static const char budget_sql[] = "SELECT max_budget, soft_budget, max_parallel_requests, tpm_limit, rpm_limit, "
                                 "model_max_budget, budget_duration, budget_reset_at, allowed_models "
                                 "FROM \"LiteLLM_BudgetTable\" WHERE budget_id = $1";

static int budget_cb(void *ud, const struct sy_srow *r)
{
    struct budget_row *b = ud;
    b->c.found = 1;
    b->max_budget = sy_srow_num(r, "max_budget", -1);
    b->soft_budget = sy_srow_num(r, "soft_budget", -1);
    b->par = sy_srow_int(r, "max_parallel_requests", -1);
    b->tpm = sy_srow_int(r, "tpm_limit", -1);
    b->rpm = sy_srow_int(r, "rpm_limit", -1);
    b->mmb = dup_col(&b->c, r, "model_max_budget");
    b->duration = dup_col(&b->c, r, "budget_duration");
    b->reset_at = ts_col(r, "budget_reset_at");
    strv_col(&b->c, r, "allowed_models", &b->models, &b->nmodels);
    return 1;
}

static void budget_row_free(struct budget_row *b)
{
    free(b->duration);
    free(b->mmb);
    sy__strv_free(b->models, b->nmodels);
    memset(b, 0, sizeof *b);
}

/* Read budget_id's row into *b (b->c.found 0 when there is none). */
static int load_budget(struct sy_store *st, const char *budget_id, struct budget_row *b)
{
    memset(b, 0, sizeof *b);
    if (!budget_id)
        return 0;
    struct sy_sval p[1] = {sy_sv_text(budget_id)};
    int rc = sy_store_exec(st, budget_sql, 1, p, budget_cb, b);
    if (rc < 0) {
        budget_row_free(b);
        return rc;
    }
    return b->c.oom ? SY_STORE_EQUERY : 0;
}

/* Apply a budget row to an entity: max_budget, soft_budget, limits, duration,
 * reset time and models (allowed_models) from the row. */
static int apply_budget(struct sy_budget *e, struct budget_row *b)
{
    e->max_budget = b->max_budget;
    e->soft_budget = b->soft_budget;
    e->tpm_limit = b->tpm;
    e->rpm_limit = b->rpm;
    e->max_parallel = b->par;
    e->budget_reset_at = b->reset_at;
    free(e->budget_duration);
    e->budget_duration = b->duration;
    b->duration = NULL;
    if (b->models) {
        sy__strv_free(e->models, e->nmodels);
        e->models = b->models;
        e->nmodels = b->nmodels;
        b->models = NULL;
        b->nmodels = 0;
    }
    return 0;
}

/* ---- the key ------------------------------------------------------------- */

struct key_row {
    struct cap c;
    struct sy_keyinfo *ki;
    char *budget_id, *mmb, *model_spend;
};

/* Each entity's object permission row comes with it (a LEFT JOIN: no
 * extra round trip, nothing when object_permission_id is NULL). */
#define OP_COLS                                                            \
    "op.object_permission_id AS op_id, op.mcp_servers AS op_mcp_servers, " \
    "op.mcp_access_groups AS op_mcp_access_groups, op.mcp_tool_permissions AS op_mcp_tool_permissions "
#define OP_JOIN(t) \
    " LEFT JOIN \"LiteLLM_ObjectPermissionTable\" op ON op.object_permission_id = " t ".object_permission_id"

static const char key_sql[] =
    "SELECT k.token, k.key_name, k.key_alias, k.spend, k.expires, k.models, k.user_id, k.team_id, "
    "k.max_parallel_requests, k.metadata, k.blocked, k.tpm_limit, k.rpm_limit, k.max_budget, k.budget_duration, "
    "k.budget_reset_at, k.model_spend, k.model_max_budget, k.budget_id, k.organization_id, k.allowed_routes, "
    "k.aliases, " OP_COLS "FROM \"LiteLLM_VerificationToken\" k" OP_JOIN("k") " WHERE k.token = $1";

static int key_cb(void *ud, const struct sy_srow *r)
{
    struct key_row *k = ud;
    struct sy_keyinfo *ki = k->ki;
    struct cap *c = &k->c;
    c->found = 1;
    ki->key_name = dup_col(c, r, "key_name");
    ki->key_alias = dup_col(c, r, "key_alias");
    atomic_store(&ki->key.spend, sy_srow_num(r, "spend", 0));
    ki->expires = ts_col(r, "expires");
    strv_col(c, r, "models", &ki->models, &ki->nmodels);
    ki->user_id = dup_col(c, r, "user_id");
    ki->team_id = dup_col(c, r, "team_id");
    ki->key.max_parallel = sy_srow_int(r, "max_parallel_requests", -1);
    ki->key.metadata = dup_col(c, r, "metadata");
    ki->blocked = sy_srow_int(r, "blocked", 0) != 0;
    ki->key.blocked = ki->blocked;
    ki->key.tpm_limit = sy_srow_int(r, "tpm_limit", -1);
    ki->key.rpm_limit = sy_srow_int(r, "rpm_limit", -1);
    ki->key.max_budget = sy_srow_num(r, "max_budget", -1);
    ki->key.budget_duration = dup_col(c, r, "budget_duration");
    ki->key.budget_reset_at = ts_col(r, "budget_reset_at");
    k->model_spend = dup_col(c, r, "model_spend");
    k->mmb = dup_col(c, r, "model_max_budget");
    k->budget_id = dup_col(c, r, "budget_id");
    ki->org_id = dup_col(c, r, "organization_id");
    strv_col(c, r, "allowed_routes", &ki->allowed_routes, &ki->nallowed_routes);
    if (sy__strmap_from_json(sy_srow_text(r, "aliases"), &ki->aliases, &ki->naliases) != 0)
        c->oom = 1;
    ki->perm = perm_col(c, r);
    return 1;
}

/* the team */
struct team_row {
    struct cap c;
    struct sy_budget *b;
    char *alias, *org_id;
    int64_t model_id; /* its LiteLLM_ModelTable row (model_aliases); < 0 none */
    struct sy_objperm *perm;
};

static const char team_sql[] =
    "SELECT t.team_id, t.team_alias, t.organization_id, t.metadata, t.max_budget, t.spend, t.models, "
    "t.max_parallel_requests, t.tpm_limit, t.rpm_limit, t.budget_duration, t.budget_reset_at, t.blocked, "
    "t.soft_budget, t.model_id, " OP_COLS "FROM \"LiteLLM_TeamTable\" t" OP_JOIN("t") " WHERE t.team_id = $1";

/* the team's model_aliases */
struct alias_row {
    struct cap c;
    struct sy_keyinfo *ki;
};

static const char alias_sql[] = "SELECT aliases FROM \"LiteLLM_ModelTable\" WHERE id = $1";

static int alias_cb(void *ud, const struct sy_srow *r)
{
    struct alias_row *a = ud;
    a->c.found = 1;
    if (sy__strmap_from_json(sy_srow_text(r, "aliases"), &a->ki->team_aliases, &a->ki->nteam_aliases) != 0)
        a->c.oom = 1;
    return 1;
}

static int team_cb(void *ud, const struct sy_srow *r)
{
    struct team_row *t = ud;
    struct sy_budget *b = t->b;
    t->c.found = 1;
    b->id = dup_col(&t->c, r, "team_id");
    t->alias = dup_col(&t->c, r, "team_alias");
    t->org_id = dup_col(&t->c, r, "organization_id");
    b->metadata = dup_col(&t->c, r, "metadata");
    b->max_budget = sy_srow_num(r, "max_budget", -1);
    b->soft_budget = sy_srow_num(r, "soft_budget", -1);
    atomic_store(&b->spend, sy_srow_num(r, "spend", 0));
    strv_col(&t->c, r, "models", &b->models, &b->nmodels);
    b->max_parallel = sy_srow_int(r, "max_parallel_requests", -1);
    b->tpm_limit = sy_srow_int(r, "tpm_limit", -1);
    b->rpm_limit = sy_srow_int(r, "rpm_limit", -1);
    b->budget_duration = dup_col(&t->c, r, "budget_duration");
    b->budget_reset_at = ts_col(r, "budget_reset_at");
    b->blocked = sy_srow_int(r, "blocked", 0) != 0;
    t->model_id = sy_srow_int(r, "model_id", -1);
    t->perm = perm_col(&t->c, r);
    return 1;
}

/* the user */
struct user_row {
    struct cap c;
    struct sy_budget *b;
    char *role;
};

static const char user_sql[] =
    "SELECT user_id, user_role, max_budget, spend, models, tpm_limit, rpm_limit, max_parallel_requests, "
    "budget_duration, budget_reset_at, metadata "
    "FROM \"LiteLLM_UserTable\" WHERE user_id = $1";

static int user_cb(void *ud, const struct sy_srow *r)
{
    struct user_row *u = ud;
    struct sy_budget *b = u->b;
    u->c.found = 1;
    b->id = dup_col(&u->c, r, "user_id");
    u->role = dup_col(&u->c, r, "user_role");
    b->max_budget = sy_srow_num(r, "max_budget", -1);
    atomic_store(&b->spend, sy_srow_num(r, "spend", 0));
    strv_col(&u->c, r, "models", &b->models, &b->nmodels);
    b->tpm_limit = sy_srow_int(r, "tpm_limit", -1);
    b->rpm_limit = sy_srow_int(r, "rpm_limit", -1);
    b->max_parallel = sy_srow_int(r, "max_parallel_requests", -1);
    b->budget_duration = dup_col(&u->c, r, "budget_duration");
    b->budget_reset_at = ts_col(r, "budget_reset_at");
    b->metadata = dup_col(&u->c, r, "metadata");
    return 1;
}

/* the membership */
struct member_row {
    struct cap c;
    double spend;
    char *budget_id;
};

static const char member_sql[] = "SELECT spend, budget_id FROM \"LiteLLM_TeamMembership\" "
                                 "WHERE user_id = $1 AND team_id = $2";

static int member_cb(void *ud, const struct sy_srow *r)
{
    struct member_row *m = ud;
    m->c.found = 1;
    m->spend = sy_srow_num(r, "spend", 0);
    m->budget_id = dup_col(&m->c, r, "budget_id");
    return 1;
}

/* the organization */
struct org_row {
    struct cap c;
    struct sy_budget *b;
    char *budget_id;
    struct sy_objperm *perm;
};

static const char org_sql[] = "SELECT o.organization_id, o.budget_id, o.models, o.spend, o.metadata, " OP_COLS
                              "FROM \"LiteLLM_OrganizationTable\" o" OP_JOIN("o") " WHERE o.organization_id = $1";

static int org_cb(void *ud, const struct sy_srow *r)
{
    struct org_row *o = ud;
    struct sy_budget *b = o->b;
    o->c.found = 1;
    b->id = dup_col(&o->c, r, "organization_id");
    o->budget_id = dup_col(&o->c, r, "budget_id");
    strv_col(&o->c, r, "models", &b->models, &b->nmodels);
    atomic_store(&b->spend, sy_srow_num(r, "spend", 0));
    b->metadata = dup_col(&o->c, r, "metadata");
    o->perm = perm_col(&o->c, r);
    return 1;
}

static struct sy_budget *budget_new(void)
{
    struct sy_budget *b = malloc(sizeof *b);
    if (b)
        sy__budget_init(b);
    return b;
}

static int run(struct sy_store *st, const char *sql, int np, const struct sy_sval *p, sy_srow_cb cb, void *ud,
               struct cap *c)
{
    int rc = sy_store_exec(st, sql, np, p, cb, ud);
    if (rc < 0)
        return rc;
    return c->oom ? SY_STORE_EQUERY : 0;
}

/* Steps 3-6 once the key row is in. */
static int load_joined(struct sy_store *st, struct sy_keyinfo *ki)
{
    int rc;
    char *team_org = NULL;
    /* 3. team */
    if (ki->team_id) {
        struct team_row t = {{0, 0}, budget_new(), NULL, NULL, -1, NULL};
        if (!t.b)
            return SY_STORE_EQUERY;
        struct sy_sval p[1] = {sy_sv_text(ki->team_id)};
        rc = run(st, team_sql, 1, p, team_cb, &t, &t.c);
        if (rc < 0 || !t.c.found) {
            sy__budget_free(t.b);
            free(t.alias);
            free(t.org_id);
            sy__objperm_free(t.perm);
            if (rc < 0)
                return rc;
        } else {
            ki->team = t.b;
            ki->team_alias = t.alias;
            ki->team_perm = t.perm;
            team_org = t.org_id;
            if (t.model_id >= 0) {
                struct alias_row ar = {{0, 0}, ki};
                struct sy_sval pa[1] = {sy_sv_int(t.model_id)};
                if ((rc = run(st, alias_sql, 1, pa, alias_cb, &ar, &ar.c)) < 0) {
                    free(team_org);
                    return rc;
                }
            }
        }
    }
    /* 4. user */
    if (ki->user_id) {
        struct user_row u = {{0, 0}, budget_new(), NULL};
        if (!u.b) {
            free(team_org);
            return SY_STORE_EQUERY;
        }
        struct sy_sval p[1] = {sy_sv_text(ki->user_id)};
        rc = run(st, user_sql, 1, p, user_cb, &u, &u.c);
        if (rc < 0 || !u.c.found) {
            sy__budget_free(u.b);
            free(u.role);
            if (rc < 0) {
                free(team_org);
                return rc;
            }
        } else {
            ki->user = u.b;
            ki->role = sy_role_parse(u.role);
            free(u.role);
        }
    }
    /* 5. membership: its budget row, else the team's default member budget */
    if (ki->user_id && ki->team) {
        struct member_row m = {{0, 0}, 0, NULL};
        struct sy_sval p[2] = {sy_sv_text(ki->user_id), sy_sv_text(ki->team_id)};
        rc = run(st, member_sql, 2, p, member_cb, &m, &m.c);
        if (rc < 0) {
            free(m.budget_id);
            free(team_org);
            return rc;
        }
        struct budget_row br;
        char *bid = m.budget_id;
        if (!bid)
            bid = sy__json_get_string(ki->team->metadata, "team_member_budget_id");
        rc = load_budget(st, bid, &br);
        free(bid);
        if (rc < 0) {
            free(team_org);
            return rc;
        }
        if (m.c.found || br.c.found) {
            struct sy_budget *b = budget_new();
            size_t n = strlen(ki->team_id) + strlen(ki->user_id) + 2;
            char *id = malloc(n);
            if (!b || !id) {
                free(b);
                free(id);
                budget_row_free(&br);
                free(team_org);
                return SY_STORE_EQUERY;
            }
            snprintf(id, n, "%s:%s", ki->team_id, ki->user_id);
            b->id = id;
            atomic_store(&b->spend, m.spend);
            if (br.c.found)
                apply_budget(b, &br);
            ki->member = b;
        }
        budget_row_free(&br);
    }
    /* 6. organization: the key's, else its team's */
    if (!ki->org_id && team_org) {
        ki->org_id = team_org;
        team_org = NULL;
    }
    free(team_org);
    if (ki->org_id) {
        struct org_row o = {{0, 0}, budget_new(), NULL, NULL};
        if (!o.b)
            return SY_STORE_EQUERY;
        struct sy_sval p[1] = {sy_sv_text(ki->org_id)};
        rc = run(st, org_sql, 1, p, org_cb, &o, &o.c);
        if (rc < 0 || !o.c.found) {
            sy__budget_free(o.b);
            free(o.budget_id);
            sy__objperm_free(o.perm);
            return rc < 0 ? rc : 0;
        }
        ki->org_perm = o.perm;
        struct budget_row br;
        rc = load_budget(st, o.budget_id, &br);
        free(o.budget_id);
        if (rc < 0) {
            sy__budget_free(o.b);
            return rc;
        }
        if (br.c.found) {
            sy__strv_free(br.models, br.nmodels); /* the org's own models[] is what counts */
            br.models = NULL;
            br.nmodels = 0;
            apply_budget(o.b, &br);
        }
        budget_row_free(&br);
        ki->org = o.b;
    }
    return 0;
}

/* LiteLLM's _update_key_budget_with_temp_budget_increase: while
 * metadata.temp_budget_expiry is in the future, metadata.temp_budget_increase
 * is added to the key's max_budget (when it has one). */
static void temp_budget(struct sy_keyinfo *ki)
{
    if (ki->key.max_budget < 0 || !ki->key.metadata || !strstr(ki->key.metadata, "temp_budget_increase"))
        return;
    struct json_object *o = json_tokener_parse(ki->key.metadata), *inc, *exp;
    double d;
    if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, "temp_budget_increase", &inc) &&
        num_of(inc, &d) == 0 && json_object_object_get_ex(o, "temp_budget_expiry", &exp) &&
        json_object_is_type(exp, json_type_string)) {
        double t = sy_iso_parse(json_object_get_string(exp));
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        if (t != -1 && t > (double)now.tv_sec)
            ki->key.max_budget += d;
    }
    json_object_put(o);
}

static struct sy_keyinfo *keyinfo_new(const char *token)
{
    struct sy_keyinfo *ki = calloc(1, sizeof *ki);
    if (!ki)
        return NULL;
    atomic_init(&ki->refs, 1);
    snprintf(ki->token, sizeof ki->token, "%s", token);
    sy__budget_init(&ki->key);
    ki->key.id = strdup(ki->token);
    if (!ki->key.id) {
        free(ki);
        return NULL;
    }
    return ki;
}

int sy_keys_load(struct sy_store *st, const char *token, struct sy_keyinfo **out)
{
    *out = NULL;
    if (!token)
        return SY_STORE_EQUERY;
    struct sy_keyinfo *ki = keyinfo_new(token);
    if (!ki)
        return SY_STORE_EQUERY;
    struct key_row k = {{0, 0}, ki, NULL, NULL, NULL};
    struct sy_sval p[1] = {sy_sv_text(token)};
    int rc = run(st, key_sql, 1, p, key_cb, &k, &k.c);
    if (rc == 0 && k.c.found) {
        /* 2. the key's budget row fills what the key leaves NULL */
        struct budget_row br;
        rc = load_budget(st, k.budget_id, &br);
        if (rc == 0 && br.c.found) {
            if (ki->key.max_budget < 0)
                ki->key.max_budget = br.max_budget;
            if (ki->key.soft_budget < 0)
                ki->key.soft_budget = br.soft_budget;
            if (ki->key.tpm_limit < 0)
                ki->key.tpm_limit = br.tpm;
            if (ki->key.rpm_limit < 0)
                ki->key.rpm_limit = br.rpm;
            if (br.mmb) {
                struct sy_model_budget *m = NULL;
                size_t n = 0;
                if (sy__mmb_parse(k.mmb, NULL, &m, &n) == 0 && n == 0) { /* NULL or {} on the key */
                    free(k.mmb);
                    k.mmb = br.mmb;
                    br.mmb = NULL;
                }
                sy__mmb_free(m, n);
            }
        }
        if (rc == 0)
            budget_row_free(&br);
        if (rc == 0)
            temp_budget(ki);
        if (rc == 0 && sy__mmb_parse(k.mmb, k.model_spend, &ki->mmb, &ki->nmmb) != 0)
            rc = SY_STORE_EQUERY;
        if (rc == 0)
            rc = load_joined(st, ki);
        ki->found = 1;
    }
    free(k.budget_id);
    free(k.mmb);
    free(k.model_spend);
    if (rc < 0) {
        sy_keyinfo_unref(ki);
        return rc;
    }
    ki->loaded_at = sy_keys_now();
    *out = ki;
    return 0;
}

/* ---- end users ------------------------------------------------------------ */

struct eu_row {
    struct cap c;
    struct sy_enduser *eu;
    char *budget_id;
};

static const char eu_sql[] = "SELECT user_id, alias, spend, allowed_model_region, default_model, budget_id, blocked "
                             "FROM \"LiteLLM_EndUserTable\" WHERE user_id = $1";

static int eu_cb(void *ud, const struct sy_srow *r)
{
    struct eu_row *e = ud;
    struct sy_enduser *eu = e->eu;
    e->c.found = 1;
    eu->alias = dup_col(&e->c, r, "alias");
    atomic_store(&eu->b.spend, sy_srow_num(r, "spend", 0));
    eu->allowed_model_region = dup_col(&e->c, r, "allowed_model_region");
    eu->default_model = dup_col(&e->c, r, "default_model");
    e->budget_id = dup_col(&e->c, r, "budget_id");
    eu->b.blocked = sy_srow_int(r, "blocked", 0) != 0;
    return 1;
}

int sy_endusers_load(struct sy_store *st, const char *id, struct sy_enduser **out)
{
    *out = NULL;
    if (!id)
        return SY_STORE_EQUERY;
    struct sy_enduser *eu = calloc(1, sizeof *eu);
    if (!eu)
        return SY_STORE_EQUERY;
    atomic_init(&eu->refs, 1);
    sy__budget_init(&eu->b);
    if (!(eu->b.id = strdup(id))) {
        free(eu);
        return SY_STORE_EQUERY;
    }
    struct eu_row e = {{0, 0}, eu, NULL};
    struct sy_sval p[1] = {sy_sv_text(id)};
    int rc = run(st, eu_sql, 1, p, eu_cb, &e, &e.c);
    if (rc == 0 && e.c.found) {
        struct budget_row br;
        rc = load_budget(st, e.budget_id, &br);
        if (rc == 0) {
            if (br.c.found)
                apply_budget(&eu->b, &br);
            budget_row_free(&br);
        }
        eu->found = 1;
    }
    free(e.budget_id);
    if (rc < 0) {
        sy_enduser_unref(eu);
        return rc;
    }
    eu->loaded_at = sy_keys_now();
    *out = eu;
    return 0;
}
