/* perm.c - who may use which MCP server and tool: LiteLLM's MCPRequestHandler
 * (proxy/_experimental/mcp_server/auth/user_api_key_auth_mcp.py) over the
 * object permissions auth already loaded (keys/keys.h struct sy_objperm).
 *
 * Servers (sy_mcp_allowed), for each server S of the set:
 *   - the key's list names "no-mcp-servers": no server at all (LiteLLM's
 *     sentinel for "this key gets none, whatever its team has");
 *   - an admin key without an object permission of its own: every server;
 *   - K = the key grants S (mcp_servers holds S's id, name, alias or prefix,
 *     or one of mcp_access_groups is one of S's access_groups); T the same
 *     for the team. A key with a grant list and a team with one: K and T (the
 *     key is cut to the team's); a key with none: T (inherits); no team
 *     list: K;
 *   - the organization, when it has a list, caps the result: S must be in it;
 *   - S with allow_all_keys: every caller (but the "no-mcp-servers" key).
 *   A permission "has a list" when it names at least one server or group.
 *
 * Tools (sy_mcp_tool_allowed): S's own allowed_tools (when any) must hold the
 * tool and its disallowed_tools must not; then the key's and the team's
 * mcp_tool_permissions ({"<server id, name or alias>": ["tool", ...]}), when
 * they have an entry for S, must each list it (bare, or "<prefix>-<tool>").
 * An entry that is not a list of strings denies (fail closed).
 */
#include "mcp/mcp.h"

#include <string.h>

#include "mcp/span.h"

static int streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static int names_server(const char *x, const struct sy_mcp_server *s)
{
    return streq(x, s->id) || streq(x, s->name) || streq(x, s->alias) || streq(x, s->prefix);
}

static int has_list(const struct sy_objperm *p)
{
    return p && (p->nmcp_servers > 0 || p->nmcp_access_groups > 0);
}

static int grants(const struct sy_objperm *p, const struct sy_mcp_server *s)
{
    for (size_t i = 0; i < p->nmcp_servers; i++)
        if (names_server(p->mcp_servers[i], s))
            return 1;
    for (size_t i = 0; i < p->nmcp_access_groups; i++)
        for (size_t j = 0; j < s->naccess_groups; j++)
            if (streq(p->mcp_access_groups[i], s->access_groups[j]))
                return 1;
    return 0;
}

static int no_servers(const struct sy_objperm *p)
{
    if (p)
        for (size_t i = 0; i < p->nmcp_servers; i++)
            if (streq(p->mcp_servers[i], "no-mcp-servers"))
                return 1;
    return 0;
}

void sy_mcp_allowed(const struct sy_mcp_set *set, int is_admin, const struct sy_objperm *key,
                    const struct sy_objperm *team, const struct sy_objperm *org, unsigned char *out)
{
    if (!set || !out)
        return;
    int none = no_servers(key), all = is_admin && !has_list(key);
    int hk = has_list(key), ht = has_list(team), ho = has_list(org);
    for (size_t i = 0; i < set->n; i++) {
        const struct sy_mcp_server *s = &set->s[i];
        int r;
        if (none) {
            r = 0;
        } else if (all) {
            r = 1;
        } else {
            if (ht)
                r = grants(team, s) && (!hk || grants(key, s));
            else
                r = hk && grants(key, s);
            if (ho && !grants(org, s))
                r = 0;
            if (s->allow_all_keys)
                r = 1;
        }
        out[i] = (unsigned char)r;
    }
}

static int in_list(char **l, size_t n, const char *t, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (l[i] && strlen(l[i]) == len && memcmp(l[i], t, len) == 0)
            return 1;
    return 0;
}

/* The JSON string literal e names tool t of s: "t" or "<prefix>-t". */
static int names_tool(const char *e, size_t el, int esc, const struct sy_mcp_server *s, const char *t, size_t len)
{
    if (sy__mcp_str_eq(e, el, esc, t, len))
        return 1;
    size_t pl = strlen(s->prefix);
    if (el < pl + len + 3 || esc)
        return 0;
    return memcmp(e + 1, s->prefix, pl) == 0 && e[1 + pl] == '-' && el - 3 - pl == len &&
           memcmp(e + 2 + pl, t, len) == 0;
}

/* 1 allowed, 0 denied by permission p's mcp_tool_permissions. */
static int perm_tools_allow(const struct sy_objperm *p, const struct sy_mcp_server *s, const char *t, size_t len)
{
    if (!p || !p->mcp_tool_permissions)
        return 1;
    const char *j = p->mcp_tool_permissions;
    struct sy__mcp_it it;
    if (sy__mcp_it_init(&it, j, strlen(j)) < 0)
        return 0; /* not an object: deny, never guess */
    int rc, seen = 0, ok = 1;
    while ((rc = sy__mcp_it_next(&it)) > 0) {
        const char *ids[4] = {s->id, s->name, s->alias, s->prefix};
        int match = 0;
        for (int k = 0; k < 4 && !match; k++)
            if (ids[k])
                match = sy__mcp_str_eq(it.k, it.klen, it.kesc, ids[k], strlen(ids[k]));
        if (!match)
            continue;
        /* an entry for s: the tool must be listed (each entry naming s must) */
        seen = 1;
        if (it.v[0] != '[') {
            ok = 0;
            continue;
        }
        int listed = 0;
        size_t i = sy__mcp_ws(it.v, it.vlen, 1);
        while (i < it.vlen && it.v[i] != ']') {
            size_t e = sy__mcp_skip(it.v, it.vlen, i);
            if (!e || it.v[i] != '"') {
                ok = 0;
                break;
            }
            int esc = memchr(it.v + i, '\\', e - i) != NULL;
            if (names_tool(it.v + i, e - i, esc, s, t, len))
                listed = 1;
            i = sy__mcp_ws(it.v, it.vlen, e);
            if (i < it.vlen && it.v[i] == ',')
                i = sy__mcp_ws(it.v, it.vlen, i + 1);
        }
        if (!listed)
            ok = 0;
    }
    if (rc < 0)
        return 0;
    return seen ? ok : 1;
}

int sy_mcp_tool_allowed(const struct sy_mcp_server *s, const char *tool, size_t len, const struct sy_objperm *key,
                        const struct sy_objperm *team)
{
    if (!s || !tool || !len)
        return 0;
    if (s->nallowed_tools && !in_list(s->allowed_tools, s->nallowed_tools, tool, len))
        return 0;
    if (in_list(s->disallowed_tools, s->ndisallowed_tools, tool, len))
        return 0;
    return perm_tools_allow(key, s, tool, len) && perm_tools_allow(team, s, tool, len);
}
