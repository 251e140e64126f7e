/* test_perm.c - who may use which MCP server and tool (src/mcp/perm.c), rule
 * by rule: admin, key lists by id / name / alias, access groups, team
 * intersection and inheritance, the organization's cap, "no-mcp-servers",
 * allow_all_keys; server allow/deny lists and mcp_tool_permissions of the key
 * and the team (bare and prefixed names, malformed entries fail closed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp.h"

static const char *CFG = "{"
                         "\"gh\":{\"url\":\"https://gh.example/mcp\",\"access_groups\":[\"dev\"]},"
                         "\"wiki\":{\"url\":\"https://wiki.example/mcp\",\"alias\":\"docs\"},"
                         "\"open\":{\"url\":\"https://open.example/mcp\",\"allow_all_keys\":true},"
                         "\"ops\":{\"url\":\"https://ops.example/mcp\",\"access_groups\":[\"dev\",\"ops\"],"
                         "\"allowed_tools\":[\"restart\",\"status\"],\"disallowed_tools\":[\"restart\"]}"
                         "}";
static const char *ROWS = "[{\"server_id\":\"6f1c-uuid\",\"server_name\":\"jira\",\"url\":\"https://jira.example/mcp\","
                          "\"transport\":\"http\"}]";

static struct sy_mcp_set *set(void)
{
    char err[256];
    struct sy_mcp_set *s = sy_mcp_set_build(CFG, NULL, ROWS, err, sizeof err, NULL);
    if (!s)
        fprintf(stderr, "%s\n", err);
    assert_non_null(s);
    assert_int_equal(s->n, 5);
    return s;
}

/* The allowed servers as "name,name,..." in set order. */
static char *allowed(const struct sy_mcp_set *s, int admin, const struct sy_objperm *k, const struct sy_objperm *t,
                     const struct sy_objperm *o)
{
    static char out[256];
    unsigned char m[16];
    memset(m, 7, sizeof m);
    sy_mcp_allowed(s, admin, k, t, o, m);
    out[0] = 0;
    for (size_t i = 0; i < s->n; i++) {
        assert_true(m[i] == 0 || m[i] == 1);
        if (m[i]) {
            if (out[0])
                strcat(out, ",");
            strcat(out, s->s[i].name);
        }
    }
    return out;
}

static struct sy_objperm P(char **servers, size_t ns, char **groups, size_t ng, char *tools) {
    struct sy_objperm p = {servers, ns, groups, ng, tools};
    return p;
}

static void
test_servers(void **state)
{
    (void)state;
    struct sy_mcp_set *s = set();
    char *gh[] = {"gh"}, *docs[] = {"docs"}, *jira_id[] = {"6f1c-uuid"}, *none[] = {"no-mcp-servers"};
    char *dev[] = {"dev"}, *ops[] = {"ops"}, *ghwiki[] = {"gh", "wiki"}, *unknown[] = {"nope"};
    char *gh_id[] = {(char *)s->s[0].id};
    struct sy_objperm k, t, o, empty = P(NULL, 0, NULL, 0, NULL);

    /* nothing granted: only allow_all_keys servers */
    assert_string_equal(allowed(s, 0, NULL, NULL, NULL), "open");
    assert_string_equal(allowed(s, 0, &empty, &empty, &empty), "open");
    /* admin without its own list: everything; with one: its list */
    assert_string_equal(allowed(s, 1, NULL, NULL, NULL), "gh,wiki,open,ops,jira");
    k = P(gh, 1, NULL, 0, NULL);
    assert_string_equal(allowed(s, 1, &k, NULL, NULL), "gh,open");
    /* by name, alias, id (a config server's stable id, a DB row's id) */
    assert_string_equal(allowed(s, 0, &k, NULL, NULL), "gh,open");
    k = P(docs, 1, NULL, 0, NULL);
    assert_string_equal(allowed(s, 0, &k, NULL, NULL), "wiki,open");
    k = P(jira_id, 1, NULL, 0, NULL);
    assert_string_equal(allowed(s, 0, &k, NULL, NULL), "open,jira");
    k = P(gh_id, 1, NULL, 0, NULL);
    assert_string_equal(allowed(s, 0, &k, NULL, NULL), "gh,open");
    k = P(unknown, 1, NULL, 0, NULL);
    assert_string_equal(allowed(s, 0, &k, NULL, NULL), "open");
    /* access groups */
    k = P(NULL, 0, dev, 1, NULL);
    assert_string_equal(allowed(s, 0, &k, NULL, NULL), "gh,open,ops");
    k = P(docs, 1, ops, 1, NULL);
    assert_string_equal(allowed(s, 0, &k, NULL, NULL), "wiki,open,ops");
    /* team: the key is cut to the team's */
    k = P(ghwiki, 2, NULL, 0, NULL);
    t = P(NULL, 0, dev, 1, NULL);
    assert_string_equal(allowed(s, 0, &k, &t, NULL), "gh,open");
    /* a key without a list inherits the team's */
    assert_string_equal(allowed(s, 0, &empty, &t, NULL), "gh,open,ops");
    assert_string_equal(allowed(s, 0, NULL, &t, NULL), "gh,open,ops");
    /* a team without a list leaves the key's */
    assert_string_equal(allowed(s, 0, &k, &empty, NULL), "gh,wiki,open");
    /* the organization caps */
    o = P(docs, 1, NULL, 0, NULL);
    assert_string_equal(allowed(s, 0, &k, NULL, &o), "wiki,open");
    assert_string_equal(allowed(s, 0, &empty, &t, &o), "open");
    /* but an admin without a list is not capped */
    assert_string_equal(allowed(s, 1, NULL, &t, &o), "gh,wiki,open,ops,jira");
    /* no-mcp-servers: none at all, not even allow_all_keys, whatever the team or admin */
    k = P(none, 1, NULL, 0, NULL);
    assert_string_equal(allowed(s, 0, &k, &t, NULL), "");
    assert_string_equal(allowed(s, 1, &k, NULL, NULL), "");
    /* a team with only the sentinel gets nothing but allow_all_keys */
    assert_string_equal(allowed(s, 0, NULL, &k, NULL), "open");
    /* an organization's list with no key or team list is the result */
    assert_string_equal(allowed(s, 0, NULL, NULL, &o), "wiki,open");
    assert_string_equal(allowed(s, 0, &empty, &empty, &o), "wiki,open");
    /* servers named in mcp_tool_permissions are granted (and make a list) */
    k = P(NULL, 0, NULL, 0, "{\"jira\":[\"get\"]}");
    assert_string_equal(allowed(s, 0, &k, NULL, NULL), "open,jira");
    assert_string_equal(allowed(s, 0, &k, &t, NULL), "open"); /* and cut by the team */
    t = P(NULL, 0, NULL, 0, "{\"gh\":[]}");
    assert_string_equal(allowed(s, 0, NULL, &t, NULL), "gh,open");
    k = P(NULL, 0, NULL, 0, "{}"); /* an empty object restricts nothing */
    assert_string_equal(allowed(s, 0, &k, &t, NULL), "gh,open");
    assert_string_equal(allowed(s, 1, &k, NULL, NULL), "gh,wiki,open,ops,jira");
    /* the special names */
    char *allp[] = {"all-proxy-mcpservers"}, *allt[] = {"all-team-mcpservers"};
    t = P(allp, 1, NULL, 0, NULL);
    k = P(gh, 1, NULL, 0, NULL);
    assert_string_equal(allowed(s, 0, &k, &t, NULL), "gh,open");
    assert_string_equal(allowed(s, 0, NULL, &t, NULL), "gh,wiki,open,ops,jira");
    t = P(dev, 0, dev, 1, NULL);
    k = P(allt, 1, NULL, 0, NULL);
    assert_string_equal(allowed(s, 0, &k, &t, NULL), "gh,open,ops"); /* inherits the team's */
    assert_string_equal(allowed(s, 0, &k, NULL, NULL), "open");
    /* NULL set or out: nothing happens */
    sy_mcp_allowed(NULL, 1, NULL, NULL, NULL, NULL);
    sy_mcp_set_unref(s);
}

static void test_tools(void **state)
{
    (void)state;
    struct sy_mcp_set *s = set();
    const struct sy_mcp_server *gh = sy_mcp_find(s, "gh", 2), *ops = sy_mcp_find(s, "ops", 3);
    const struct sy_mcp_server *wiki = sy_mcp_find(s, "docs", 4);
    assert_non_null(gh);
    assert_non_null(ops);
    assert_non_null(wiki);
    /* no lists: every tool */
    assert_true(sy_mcp_tool_allowed(gh, "search", 6, NULL, NULL));
    assert_false(sy_mcp_tool_allowed(gh, "", 0, NULL, NULL));
    assert_false(sy_mcp_tool_allowed(NULL, "x", 1, NULL, NULL));
    /* the server's allowed_tools, then disallowed_tools */
    assert_true(sy_mcp_tool_allowed(ops, "status", 6, NULL, NULL));
    assert_false(sy_mcp_tool_allowed(ops, "restart", 7, NULL, NULL));
    assert_false(sy_mcp_tool_allowed(ops, "stat", 4, NULL, NULL)); /* a prefix is not the name */
    assert_false(sy_mcp_tool_allowed(ops, "statusx", 7, NULL, NULL));
    /* the key's mcp_tool_permissions, keyed by name / alias / id */
    struct sy_objperm k = P(NULL, 0, NULL, 0, "{\"gh\":[\"search\",\"gh-read\"]}");
    assert_true(sy_mcp_tool_allowed(gh, "search", 6, &k, NULL));
    assert_true(sy_mcp_tool_allowed(gh, "read", 4, &k, NULL)); /* listed with its prefix */
    assert_false(sy_mcp_tool_allowed(gh, "delete", 6, &k, NULL));
    assert_true(sy_mcp_tool_allowed(wiki, "anything", 8, &k, NULL)); /* no entry for wiki */
    k.mcp_tool_permissions = "{\"docs\":[\"read\"]}";
    assert_true(sy_mcp_tool_allowed(wiki, "read", 4, &k, NULL));
    assert_false(sy_mcp_tool_allowed(wiki, "write", 5, &k, NULL));
    char tp[256];
    snprintf(tp, sizeof tp, "{\"%s\":[\"se\\u0061rch\"]}", gh->id);
    k.mcp_tool_permissions = tp;
    assert_true(sy_mcp_tool_allowed(gh, "search", 6, &k, NULL));
    assert_false(sy_mcp_tool_allowed(gh, "read", 4, &k, NULL));
    /* the team's list applies as well (both must allow) */
    struct sy_objperm t = P(NULL, 0, NULL, 0, "{\"gh\":[\"read\"]}");
    k.mcp_tool_permissions = "{\"gh\":[\"search\",\"read\"]}";
    assert_true(sy_mcp_tool_allowed(gh, "read", 4, &k, &t));
    assert_false(sy_mcp_tool_allowed(gh, "search", 6, &k, &t));
    assert_false(sy_mcp_tool_allowed(gh, "search", 6, NULL, &t));
    /* two entries naming one server (by name and alias): both must list it */
    k.mcp_tool_permissions = "{\"wiki\":[\"a\",\"b\"],\"docs\":[\"a\"]}";
    assert_true(sy_mcp_tool_allowed(wiki, "a", 1, &k, NULL));
    assert_false(sy_mcp_tool_allowed(wiki, "b", 1, &k, NULL));
    /* an empty list for a server: no tool */
    k.mcp_tool_permissions = "{\"gh\":[]}";
    assert_false(sy_mcp_tool_allowed(gh, "search", 6, &k, NULL));
    /* the organization's ceiling: a second call with the org's permission */
    struct sy_objperm org = P(NULL, 0, NULL, 0, "{\"gh\":[\"read\"]}");
    k.mcp_tool_permissions = "{\"gh\":[\"search\",\"read\"]}";
    assert_true(sy_mcp_tool_allowed(gh, "read", 4, &k, NULL) && sy_mcp_tool_allowed(gh, "read", 4, &org, NULL));
    assert_false(sy_mcp_tool_allowed(gh, "search", 6, &org, NULL));
    /* malformed: fail closed */
    const char *bad[] = {"{\"gh\":\"search\"}",          "{\"gh\":[1]}", "{\"gh\":[\"search\",", "[\"gh\"]", "nonsense",
                         "{\"gh\":[\"search\"] \"x\":1}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        k.mcp_tool_permissions = (char *)bad[i];
        assert_false(sy_mcp_tool_allowed(gh, "search", 6, &k, NULL));
    }
    /* a tool name with a NUL inside never matches a listed one */
    k.mcp_tool_permissions = "{\"gh\":[\"search\"]}";
    assert_false(sy_mcp_tool_allowed(gh, "search\0x", 8, &k, NULL));
    sy_mcp_set_unref(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_servers),
        cmocka_unit_test(test_tools),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
