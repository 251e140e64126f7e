/* perm.c - who may use which MCP server and tool: LiteLLM's MCPRequestHandler
 * (proxy/_experimental/mcp_server/auth/user_api_key_auth_mcp.py,
 * get_allowed_mcp_servers and get_allowed_tools_for_server) over the object
 * permissions auth already loaded (keys/keys.h struct sy_objperm).
 *
 * A permission P "grants" server S when P.mcp_servers holds S's id, name,
 * alias or prefix (or "all-proxy-mcpservers"), when one of
 * P.mcp_access_groups is one of S's access_groups, or when
 * P.mcp_tool_permissions has an entry for S (LiteLLM: servers named there
 * are reachable). P "restricts" when it has any of the three.
 *
 * Servers (sy_mcp_allowed), for each server S of the set:
 *   - the key's list holds "no-mcp-servers": no server at all (LiteLLM's
 *     opt-out; it beats the team, the organization and allow_all_keys);
 *   - an admin key that does not restrict: every server;
 *   - K = the key grants S, T = the team does. Key and team restrict: K and T
 *     (the key is cut to the team's); only the team: T (the key inherits; a
 *     key whose list is "all-team-mcpservers" inherits too); only the key: K;
 *     neither: no server;
 *   - the organization, when it restricts, is a ceiling: S must be granted by
 *     it as well; when neither key nor team restricts, its list is the result
 *     (LiteLLM: "no lower-level restrictions: the org list becomes the
 *     ceiling");
 *   - S with allow_all_keys: every caller but the "no-mcp-servers" key.
 *   Unlike LiteLLM, a name that matches no server still counts as a
 *   restriction: a key whose only server was deleted gets none, not its
 *   team's or organization's (LiteLLM drops unknown names first, so such a key
 *   falls back to the levels above it).
 *
 * Tools (sy_mcp_tool_allowed): S's own allowed_tools (when any) must hold the
 * tool and its disallowed_tools must not; then each of the key's and the
 * team's mcp_tool_permissions ({"<server id, name or alias>": ["tool", ...]})
 * that has an entry for S must list it, bare or as "<prefix>-<tool>" (so the
 * team's entry is a ceiling on the key's, and a key without one inherits the
 * team's: LiteLLM's intersection). An entry that is not a list of strings
 * denies (fail closed). The organization's ceiling is the same check again:
 * sy_mcp_tool_allowed(s, tool, len, org, NULL).
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

/* perm names s as a key of its mcp_tool_permissions object (1), not (0). */
static int tool_perm_names(const struct sy_objperm *p, const struct sy_mcp_server *s)
{
    if (!p->mcp_tool_permissions)
        return 0;
    struct sy__mcp_it it;
    const char *j = p->mcp_tool_permissions;
    if (sy__mcp_it_init(&it, j, strlen(j)) < 0)
        return 0;
    const char *ids[4] = {s->id, s->name, s->alias, s->prefix};
    while (sy__mcp_it_next(&it) > 0)
        for (int k = 0; k < 4; k++)
            if (ids[k] && sy__mcp_str_eq(it.k, it.klen, it.kesc, ids[k], strlen(ids[k])))
                return 1;
    return 0;
}

/* mcp_tool_permissions has at least one entry. */
static int tool_perm_any(const struct sy_objperm *p)
{
    struct sy__mcp_it it;
    const char *j = p->mcp_tool_permissions;
    return j && sy__mcp_it_init(&it, j, strlen(j)) == 0 && sy__mcp_it_next(&it) > 0;
}

static int in_servers(const struct sy_objperm *p, const char *name)
{
    if (p)
        for (size_t i = 0; i < p->nmcp_servers; i++)
            if (streq(p->mcp_servers[i], name))
                return 1;
    return 0;
}

static int restricts(const struct sy_objperm *p)
{
    return p && (p->nmcp_servers > 0 || p->nmcp_access_groups > 0 || tool_perm_any(p));
}

static int grants(const struct sy_objperm *p, const struct sy_mcp_server *s)
{
    for (size_t i = 0; i < p->nmcp_servers; i++)
        if (names_server(p->mcp_servers[i], s) || streq(p->mcp_servers[i], "all-proxy-mcpservers"))
            return 1;
    for (size_t i = 0; i < p->nmcp_access_groups; i++)
        for (size_t j = 0; j < s->naccess_groups; j++)
            if (streq(p->mcp_access_groups[i], s->access_groups[j]))
                return 1;
    return tool_perm_names(p, s);
}

void sy_mcp_allowed(const struct sy_mcp_set *set, int is_admin, const struct sy_objperm *key,
                    const struct sy_objperm *team, const struct sy_objperm *org, unsigned char *out)
{
    if (!set || !out)
        return;
    int none = in_servers(key, "no-mcp-servers");
    int hk = restricts(key) && !in_servers(key, "all-team-mcpservers");
    int ht = restricts(team), ho = restricts(org), all = is_admin && !restricts(key);
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
            if (ho)
                r = (hk || ht) ? r && grants(org, s) : grants(org, s);
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
