/* entity_impl.h - helpers shared by the entity handlers of the management API
 * (admin/users.c, teams.c, customers.c, orgs.c, budgets.c); implemented in
 * admin/users.c. Private to src/admin.
 *
 * Column sets. A handler reads the request fields it knows (a table of
 * struct sy__field) into a struct sy__cset of (column, value) pairs and
 * writes them with one INSERT or UPDATE ... RETURNING *:
 *
 *   struct sy__cset cs = {0};
 *   if (sy__collect(a, body, F, NF, 0, &cs) < 0) goto out;   // 422 written
 *   sy__cset_put(&cs, "created_at", sy_sv_ts(now));
 *   rc = sy__insert(st, "\"LiteLLM_BudgetTable\"", &cs, sy_admin_row_cb, &row);
 *   sy__cset_free(&cs);
 *
 * Error shapes (LiteLLM raises three kinds, and clients see each as is):
 *   sy__err_dict  ProxyException whose message is the Python repr of
 *                 HTTPException's detail dict: "{'error': 'Team not found...'}"
 *   sy__detail    an HTTPException FastAPI renders itself (no ProxyException
 *                 handler on the way): {"detail":{"error":"..."}}
 *   sy_admin_error  a ProxyException raised with a plain message.
 */
#ifndef SY_ADMIN_ENTITY_IMPL_H
#define SY_ADMIN_ENTITY_IMPL_H

#include <json-c/json.h>

#include "admin/admin_impl.h"

#define SY__CSET_MAX 64

struct sy__cset {
    int n;
    const char *col[SY__CSET_MAX];
    struct sy_sval v[SY__CSET_MAX];
    char *own[SY__CSET_MAX * 2]; /* strings the set owns */
    int nown;
};

/* Request field kinds: how the JSON is checked and bound. */
enum sy__fk {
    SY_FK_STR,    /* string -> TEXT */
    SY_FK_NUM,    /* number -> DOUBLE PRECISION */
    SY_FK_INT,    /* integer -> INTEGER / BIGINT */
    SY_FK_BOOL,   /* boolean -> BOOLEAN */
    SY_FK_STRARR, /* list of strings -> TEXT[] */
    SY_FK_OBJ,    /* object -> JSONB */
    SY_FK_TS      /* ISO datetime string -> TIMESTAMP(3) */
};
struct sy__field {
    const char *name; /* request field */
    enum sy__fk kind;
    const char *col; /* column; NULL: read and checked, not stored */
    unsigned flags;
};
#define SY_FF_NOTNULL 0x1 /* NOT NULL column: an explicit null is skipped */
#define SY_FF_NONDEF  0x2 /* skipped when null, [], {} (LiteLLM's "non default values") */

/* Put (or replace) a column's value; sy__cset_own hands a malloc'd string to
 * the set (freed by sy__cset_free) and returns it. */
void sy__cset_put(struct sy__cset *cs, const char *col, struct sy_sval v);
const char *sy__cset_own(struct sy__cset *cs, char *s);
int sy__cset_has(const struct sy__cset *cs, const char *col);
const struct sy_sval *sy__cset_get(const struct sy__cset *cs, const char *col);
void sy__cset_free(struct sy__cset *cs);

/* Read fields f[0..nf) of body into cs. update = 0 (create): nulls are
 * skipped (exclude_none); update = 1: nulls are written as NULL unless the
 * column is NOT NULL or the field is SY_FF_NONDEF. Returns 0 or -1 (422
 * written). */
int sy__collect(struct sy_admin_ctx *a, struct json_object *body, const struct sy__field *f, int nf, int update,
                struct sy__cset *cs);

/* INSERT INTO table (cs) VALUES (...) RETURNING *, and UPDATE table SET cs
 * WHERE keycol = key RETURNING *. rc as sy_store_exec. */
int sy__insert(struct sy_store *st, const char *table, const struct sy__cset *cs, sy_srow_cb cb, void *ud);
int sy__update(struct sy_store *st, const char *table, const char *keycol, const char *key, const struct sy__cset *cs,
               sy_srow_cb cb, void *ud);
/* The same over parallel column / value arrays (keys.c keeps its own set type). */
int sy__insert_cols(struct sy_store *st, const char *table, const char *const *col, const struct sy_sval *v, int n,
                    sy_srow_cb cb, void *ud);
int sy__update_cols(struct sy_store *st, const char *table, const char *keycol, const char *key, const char *const *col,
                    const struct sy_sval *v, int n, sy_srow_cb cb, void *ud);

/* Errors (see above). */
void sy__err_dict(struct sy_admin_ctx *a, int status, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void sy__detail(struct sy_admin_ctx *a, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* FastAPI's 422 for a model validator's ValueError:
 * {"detail":[{"type":"value_error","loc":["body"],"msg":"Value error, <msg>","input":<body>,"ctx":{"error":{}}}]} */
void sy__value_error(struct sy_admin_ctx *a, struct json_object *body, const char *msg);
/* FastAPI's 422 for a missing field: loc [where, name]. */
void sy__missing(struct sy_admin_ctx *a, const char *where, const char *name, struct json_object *input);

/* A row's members (no braces) into b, leaving out the column named skip. */
void sy__row_members(struct sy_buf *b, const struct sy_srow *r, const char *skip, int *first);
/* sy_store_exec callback: each row as a JSON object without "password",
 * comma-separated (ud: struct sy_admin_rows). */
int sy__rows_nopw_cb(void *ud, const struct sy_srow *r);

/* JSON array text of strings: s appended (when absent) / removed; a new
 * malloc'd text. arr may be NULL (an empty array). */
char *sy__arr_add(const char *arr, const char *s);
char *sy__arr_del(const char *arr, const char *s);
int sy__arr_has(const char *arr, const char *s);

/* A "LiteLLM_BudgetTable" row: cs holds its budget columns; budget_id
 * (a uuid unless cs has one), created/updated by/at are added. id_out gets
 * the id (>= 128 bytes); row (may be NULL) the new row. rc as sy_store_exec. */
int sy__budget_insert(struct sy_store *st, struct sy_admin_ctx *a, struct sy__cset *cs, char *id_out,
                      struct sy_admin_row *row);
/* The budget row of id as a JSON object (or null) into b. rc < 0 on error. */
int sy__budget_json(struct sy_store *st, const char *id, struct sy_buf *b);

/* LiteLLM's add_new_member (management_helpers/utils.py): the member's user
 * row gets team_id in "teams" (created as an internal_user when missing;
 * by email when no user_id), and a "LiteLLM_TeamMembership" row is made
 * when a budget applies: a new budget row with max_budget_in_team
 * (has_budget), else default_budget_id. The user row (JSON) is appended
 * to users (comma-separated), the membership (JSON, with
 * "litellm_budget_table") to tms. uid_out gets the user id.
 * Returns 0; 1 with an error written; < 0 a store error. */
int sy__team_add_member(struct sy_store *st, struct sy_admin_ctx *a, const char *team_id, const char *user_id,
                        const char *user_email, int has_budget, double max_budget_in_team,
                        const char *default_budget_id, char *uid_out, size_t uid_cap, struct sy_buf *users,
                        struct sy_buf *tms);

/* Access of a non-admin caller (admin/access.c). sy__team_role: 1 when
 * user_id is in team_id's members_with_roles (role, may be NULL with cap 0,
 * gets its role: "admin" / "user"), 0 when not (or either id is NULL or
 * ""), < 0 a store error. sy__is_team_admin: the caller is an admin of the
 * team (1 / 0 / < 0). sy__may_manage_key: the caller may change or read key
 * row r: an admin, the key itself, the key's user, or an admin of the key's
 * team (1 / 0 / < 0). */
int sy__team_role(struct sy_store *st, const char *team_id, const char *user_id, char *role, size_t cap);
int sy__is_team_admin(struct sy_store *st, const struct sy_admin_ctx *a, const char *team_id);
int sy__may_manage_key(struct sy_store *st, const struct sy_admin_ctx *a, const struct sy_srow *r);

/* "object_permission" (admin/objperm.c). sy__objperm_get reads and checks
 * body's member (SY_AF_*, *out borrowed; SY_AF_ERR with the 422 written).
 * sy__objperm_put writes op for an entity whose object_permission_id is cur
 * (NULL: none): that row gets op's fields (made when gone), else a new row;
 * id_out (>= 128 bytes) gets its id. sy__objperm_member appends the member
 * "object_permission": the row of id, or null. Both: 0 or a store error. */
int sy__objperm_get(struct sy_admin_ctx *a, struct json_object *body, struct json_object **out);
int sy__objperm_put(struct sy_store *st, struct json_object *op, const char *cur, char *id_out);
int sy__objperm_member(struct sy_store *st, struct sy_buf *b, int *first, const char *id);

/* The keys of a SQL IN list: "$k,$k+1,..." for n values from k. */
void sy__in_list(struct sy_buf *sql, int k, int n);

#endif
