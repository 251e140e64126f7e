/* objperm.c - "object_permission" on keys, teams and organizations
 * (LiteLLM's LiteLLM_ObjectPermissionBase, stored in
 * "LiteLLM_ObjectPermissionTable" and linked by the entity's
 * object_permission_id; management_endpoints' handle_update_object_permission
 * and _set_object_permission):
 *
 *   request  "object_permission": {"mcp_servers": [..], "mcp_access_groups": [..],
 *             "mcp_tool_permissions": {"<server>": ["tool", ..]}, "vector_stores": [..],
 *             "agents": [..], "agent_access_groups": [..], "models": [..]}
 *   create   a new row (uuid) with the fields given; the entity gets its id
 *   update   the entity's row gets the fields given (others kept); an entity
 *            without one (or whose row is gone) gets a new row
 *   answer   "object_permission": the row ({"object_permission_id", ...}) or
 *            null, on /key/generate|update|info, /team/new|update|info,
 *            /organization/new|update|info
 *
 * A field given as null clears it ([] for the lists, NULL for
 * mcp_tool_permissions). Fields LiteLLM's model does not have are ignored,
 * as pydantic does. Wrong types are FastAPI's 422 with the nested loc
 * ["body", "object_permission", <field>(, <index>)].
 */
#include <stdio.h>
#include <string.h>

#include "admin/admin_impl.h"
#include "admin/entity_impl.h"
#include "core/buf.h"

#define T_OP "\"LiteLLM_ObjectPermissionTable\""

static const char *const LISTS[] = {
    "mcp_servers", "mcp_access_groups", "vector_stores", "agents", "agent_access_groups", "models", NULL};

static void loc_422(struct sy_admin_ctx *a, const char *field, long idx, const char *sub, const char *type,
                    const char *msg, struct json_object *input)
{
    a->status = 422;
    sy_buf_reset(&a->out);
    SY_BUF_LIT(&a->out, "{\"detail\":[{\"type\":");
    sy_admin_jstr(&a->out, type);
    SY_BUF_LIT(&a->out, ",\"loc\":[\"body\",\"object_permission\",");
    sy_admin_jstr(&a->out, field);
    if (sub) {
        SY_BUF_LIT(&a->out, ",");
        sy_admin_jstr(&a->out, sub);
    }
    if (idx >= 0)
        sy_buf_printf(&a->out, ",%ld", idx);
    SY_BUF_LIT(&a->out, "],\"msg\":");
    sy_admin_jstr(&a->out, msg);
    SY_BUF_LIT(&a->out, ",\"input\":");
    sy_buf_puts(&a->out, input ? sy_admin_jtext(input) : "null");
    SY_BUF_LIT(&a->out, "}]}");
}

/* A list of strings (or null). 0, or -1 with the 422 written. */
static int check_list(struct sy_admin_ctx *a, const char *field, const char *sub, struct json_object *v)
{
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_array)) {
        loc_422(a, field, -1, sub, "list_type", "Input should be a valid list", v);
        return -1;
    }
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        struct json_object *e = json_object_array_get_idx(v, i);
        if (!json_object_is_type(e, json_type_string)) {
            loc_422(a, field, (long)i, sub, "string_type", "Input should be a valid string", e);
            return -1;
        }
    }
    return 0;
}

int sy__objperm_get(struct sy_admin_ctx *a, struct json_object *body, struct json_object **out)
{
    int r = sy_admin_get_obj(a, body, "object_permission", out);
    if (r != SY_AF_SET)
        return r;
    for (int i = 0; LISTS[i]; i++)
        if (check_list(a, LISTS[i], NULL, json_object_object_get(*out, LISTS[i])) < 0)
            return SY_AF_ERR;
    struct json_object *tp = json_object_object_get(*out, "mcp_tool_permissions");
    if (tp) {
        if (!json_object_is_type(tp, json_type_object)) {
            loc_422(a, "mcp_tool_permissions", -1, NULL, "dict_type", "Input should be a valid dictionary", tp);
            return SY_AF_ERR;
        }
        json_object_object_foreach(tp, server, tools)
        {
            if (check_list(a, "mcp_tool_permissions", server, tools) < 0)
                return SY_AF_ERR;
        }
    }
    return SY_AF_SET;
}

/* The columns op gives, into cs. */
static void op_cset(struct json_object *op, struct sy__cset *cs)
{
    for (int i = 0; LISTS[i]; i++) {
        struct json_object *v;
        if (!json_object_object_get_ex(op, LISTS[i], &v))
            continue;
        const char *t = v ? sy__cset_own(cs, strdup(sy_admin_jtext(v))) : "[]";
        sy__cset_put(cs, LISTS[i], sy_sv_textarr(t ? t : "[]"));
    }
    struct json_object *tp;
    if (json_object_object_get_ex(op, "mcp_tool_permissions", &tp))
        sy__cset_put(cs, "mcp_tool_permissions",
                     tp ? sy_sv_json(sy__cset_own(cs, strdup(sy_admin_jtext(tp)))) : sy_sv_null());
}

int sy__objperm_put(struct sy_store *st, struct json_object *op, const char *cur, char *id_out)
{
    struct sy__cset cs = {0};
    op_cset(op, &cs);
    int rc = 0;
    if (cur && *cur) {
        if (cur != id_out) /* may be the same buffer */
            memmove(id_out, cur, strnlen(cur, 127) + 1);
        id_out[127] = 0;
        cur = id_out;
        rc = cs.n ? sy__update(st, T_OP, "object_permission_id", cur, &cs, NULL, NULL) : 0;
        if (rc < 0)
            goto out;
        if (cs.n && rc > 0)
            goto out;
        /* no change asked, or the row is gone: make it (under the same id) */
        struct sy_sval p = sy_sv_text(cur);
        rc = sy_store_exec(st, "SELECT 1 FROM " T_OP " WHERE \"object_permission_id\" = $1", 1, &p, NULL, NULL);
        if (rc != 0)
            goto out; /* there, or an error */
    } else {
        sy_admin_uuid(id_out);
    }
    sy__cset_put(&cs, "object_permission_id", sy_sv_text(id_out));
    rc = sy__insert(st, T_OP, &cs, NULL, NULL);
out:
    sy__cset_free(&cs);
    return rc < 0 ? rc : 0;
}

int sy__objperm_member(struct sy_store *st, struct sy_buf *b, int *first, const char *id)
{
    sy_admin_jkey(b, first, "object_permission");
    struct sy_admin_row row = {0};
    int rc = 0;
    if (id && *id) {
        struct sy_sval p = sy_sv_text(id);
        rc = sy_store_exec(st, "SELECT * FROM " T_OP " WHERE \"object_permission_id\" = $1", 1, &p, sy_admin_row_cb,
                           &row);
    }
    if (rc >= 0 && row.found)
        sy_srow_json(b, &row.r);
    else
        SY_BUF_LIT(b, "null");
    sy_admin_row_free(&row);
    return rc < 0 ? rc : 0;
}
