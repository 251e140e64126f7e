/* access.c - who a non-admin caller of the management API is to a team or a
 * key: LiteLLM's _is_user_team_admin (management_endpoints/common_utils.py)
 * and the key-ownership rule of key_management_endpoints.py, shared by the
 * key and team handlers (entity_impl.h).
 *
 * A team's members are its members_with_roles list ([{"user_id","role"}]);
 * role "admin" makes a team admin. An empty or NULL id is nobody: it never
 * matches a member or a key's owner.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "admin/entity_impl.h"

int sy__team_role(struct sy_store *st, const char *team_id, const char *user_id, char *role, size_t cap)
{
    if (cap)
        role[0] = 0;
    if (!team_id || !*team_id || !user_id || !*user_id)
        return 0;
    struct sy_admin_row row = {0};
    struct sy_sval p = sy_sv_text(team_id);
    int rc = sy_store_exec(st, "SELECT \"members_with_roles\" FROM \"LiteLLM_TeamTable\" WHERE \"team_id\" = $1", 1, &p,
                           sy_admin_row_cb, &row);
    if (rc < 0)
        return rc;
    int found = 0;
    const char *mw = row.found ? sy_srow_text(&row.r, "members_with_roles") : NULL;
    struct json_object *arr = mw ? json_tokener_parse(mw) : NULL;
    if (arr && json_object_is_type(arr, json_type_array))
        for (size_t i = 0, n = json_object_array_length(arr); i < n && !found; i++) {
            struct json_object *m = json_object_array_get_idx(arr, i), *u, *r;
            if (!json_object_object_get_ex(m, "user_id", &u) || !json_object_is_type(u, json_type_string) ||
                strcmp(json_object_get_string(u), user_id) != 0)
                continue;
            found = 1;
            if (cap && json_object_object_get_ex(m, "role", &r) && json_object_is_type(r, json_type_string))
                snprintf(role, cap, "%s", json_object_get_string(r));
        }
    json_object_put(arr);
    sy_admin_row_free(&row);
    return found;
}

int sy__is_team_admin(struct sy_store *st, const struct sy_admin_ctx *a, const char *team_id)
{
    char role[16];
    int rc = sy__team_role(st, team_id, a->caller_user_id, role, sizeof role);
    return rc < 0 ? rc : rc == 1 && strcmp(role, "admin") == 0;
}

int sy__may_manage_key(struct sy_store *st, const struct sy_admin_ctx *a, const struct sy_srow *r)
{
    if (a->is_admin)
        return 1;
    const char *uid = sy_srow_text(r, "user_id");
    const char *tok = sy_srow_text(r, "token");
    const char *tid = sy_srow_text(r, "team_id");
    if (a->caller_token && tok && strcmp(a->caller_token, tok) == 0)
        return 1;
    if (a->caller_user_id && uid && *uid && strcmp(a->caller_user_id, uid) == 0)
        return 1;
    return tid && *tid ? sy__is_team_admin(st, a, tid) : 0;
}
