/* test_mcp.c - admin/mcp.c (LiteLLM's /v1/mcp/server routes) and
 * admin/objperm.c's pieces they share, against a real SQLite database made by
 * sy_store_migrate, with a config that declares one server:
 *
 *   - create, read, update, list, access groups, delete: the row as stored,
 *     the answer (credentials null), the "mcp:servers" invalidation;
 *   - bad input: each refusal with its status (and LiteLLM's texts);
 *   - roles: writes are admins'; a key lists and reads only the servers its
 *     object permission grants, without url, headers or env;
 *   - rows under review in a newer LiteLLM database are not served.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <http_parser.h>

#include "admin/admin.h"
#include "config/config.h"
#include "keys/keys.h"
#include "router/table.h"
#include "store/store.h"

static char db_path[256];
static struct sy_config g_cfg;
static struct sy_table g_table;
static int g_admin = 1;
static const struct sy_keyinfo *g_key;

struct call {
    struct sy_admin_ctx a;
    struct json_object *j;
};

static void call_free(struct call *c)
{
    for (int i = 0; i < c->a.ninval; i++)
        free(c->a.inval[i]);
    sy_buf_free(&c->a.out);
    if (c->j)
        json_object_put(c->j);
    memset(c, 0, sizeof *c);
}

static void do_call(struct sy_store *st, struct call *c, int method, const char *path, const char *body)
{
    memset(c, 0, sizeof *c);
    int known = 0;
    const struct sy_admin_route *rt = sy_admin_match(method, path, strlen(path), &known);
    if (!rt)
        fail_msg("no route %d %s", method, path);
    c->a.method = method;
    c->a.path = path;
    c->a.query = "";
    c->a.body = body ? body : "";
    c->a.body_len = strlen(c->a.body);
    c->a.is_admin = g_admin;
    c->a.caller_key = g_key;
    c->a.caller_token = g_key ? g_key->token : NULL;
    c->a.now = 1800000000.0;
    c->a.table = &g_table;
    c->a.status = 200;
    sy_buf_init(&c->a.out, 1 << 22);
    rt->fn(st, &c->a);
    c->j = json_tokener_parse(c->a.out.p ? c->a.out.p : "");
    if (!c->j)
        fail_msg("answer is not JSON: %s", c->a.out.p ? c->a.out.p : "(none)");
}

static struct json_object *jget(struct json_object *o, const char *k)
{
    struct json_object *v = NULL;
    if (o)
        json_object_object_get_ex(o, k, &v);
    return v;
}

static const char *jstr(struct json_object *o, const char *k)
{
    struct json_object *v = jget(o, k);
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static const char *detail(const struct call *c)
{
    return jstr(jget(c->j, "detail"), "error");
}

static void expect(struct call *c, int status)
{
    if (c->a.status != status)
        fail_msg("status %d, want %d: %s", c->a.status, status, c->a.out.p);
}

static int has_inval(const struct call *c)
{
    for (int i = 0; i < c->a.ninval; i++)
        if (strcmp(c->a.inval[i], "mcp:servers") == 0)
            return 1;
    return 0;
}

static int setup(void **state)
{
    snprintf(db_path, sizeof db_path, "/tmp/sy-test-admin-mcp-%d.db", (int)getpid());
    unlink(db_path);
    struct sy_store_conf conf = {.url = db_path};
    char err[256];
    struct sy_store *st = sy_store_open(&conf, err, sizeof err);
    if (!st)
        fail_msg("open: %s", err);
    if (sy_store_migrate(st) < 0)
        fail_msg("migrate: %s", sy_store_errmsg(st));
    memset(&g_cfg, 0, sizeof g_cfg);
    g_cfg.mcp_servers = "{\"cfgsrv\": {\"url\": \"http://127.0.0.1:9/mcp\", \"transport\": \"http\", "
                        "\"access_groups\": [\"from_cfg\"]}}";
    memset(&g_table, 0, sizeof g_table);
    g_table.cfg = &g_cfg;
    g_admin = 1;
    g_key = NULL;
    *state = st;
    return 0;
}

static int teardown(void **state)
{
    sy_store_close(*state);
    unlink(db_path);
    return 0;
}

static void test_round_trip(void **state)
{
    struct sy_store *st = *state;
    struct call c;
    do_call(st, &c, HTTP_POST, "/v1/mcp/server",
            "{\"server_name\":\"db_one\",\"url\":\"https://mcp.example/mcp\",\"transport\":\"http\","
            "\"auth_type\":\"bearer_token\",\"credentials\":{\"auth_value\":\"s3cret\"},"
            "\"mcp_access_groups\":[\"dev\"],\"static_headers\":{\"x-a\":\"1\"}}");
    expect(&c, 201);
    char id[64];
    snprintf(id, sizeof id, "%s", jstr(c.j, "server_id"));
    assert_int_equal(strlen(id), 36);
    assert_string_equal(jstr(c.j, "alias"), "db_one");
    assert_string_equal(jstr(c.j, "created_by"), "default_user_id");
    assert_null(jget(c.j, "credentials"));
    assert_null(strstr(c.a.out.p, "s3cret"));
    assert_true(has_inval(&c));
    call_free(&c);

    /* stored as given (LiteLLM's columns) */
    struct sy_sval p = sy_sv_text(id);
    assert_int_equal(sy_store_exec(st,
                                   "SELECT 1 FROM \"LiteLLM_MCPServerTable\" WHERE server_id = $1 AND "
                                   "credentials LIKE '%s3cret%' AND mcp_access_groups LIKE '%dev%'",
                                   1, &p, NULL, NULL),
                     1);

    char path[128];
    snprintf(path, sizeof path, "/v1/mcp/server/%s", id);
    do_call(st, &c, HTTP_GET, path, NULL);
    expect(&c, 200);
    assert_string_equal(jstr(c.j, "server_name"), "db_one");
    assert_string_equal(jstr(c.j, "url"), "https://mcp.example/mcp");
    call_free(&c);

    /* a config server by its name */
    do_call(st, &c, HTTP_GET, "/v1/mcp/server/cfgsrv", NULL);
    expect(&c, 200);
    call_free(&c);

    char body[256];
    snprintf(body, sizeof body, "{\"server_id\":\"%s\",\"description\":\"d2\",\"alias\":\"db one\"}", id);
    do_call(st, &c, HTTP_PUT, "/v1/mcp/server", body);
    expect(&c, 200);
    assert_string_equal(jstr(c.j, "description"), "d2");
    assert_string_equal(jstr(c.j, "alias"), "db_one"); /* spaces in alias become '_' */
    assert_string_equal(jstr(c.j, "url"), "https://mcp.example/mcp");
    assert_true(has_inval(&c));
    call_free(&c);

    do_call(st, &c, HTTP_GET, "/v1/mcp/server", NULL);
    expect(&c, 200);
    assert_true(json_object_is_type(c.j, json_type_array));
    assert_int_equal(json_object_array_length(c.j), 2);
    assert_string_equal(jstr(json_object_array_get_idx(c.j, 1), "server_id"), id);
    call_free(&c);

    do_call(st, &c, HTTP_GET, "/v1/mcp/access_groups", NULL);
    expect(&c, 200);
    struct json_object *g = jget(c.j, "access_groups");
    assert_int_equal(json_object_array_length(g), 2);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(g, 0)), "dev");
    assert_string_equal(json_object_get_string(json_object_array_get_idx(g, 1)), "from_cfg");
    call_free(&c);

    do_call(st, &c, HTTP_DELETE, path, NULL);
    expect(&c, 202);
    assert_true(has_inval(&c));
    call_free(&c);
    do_call(st, &c, HTTP_DELETE, path, NULL);
    expect(&c, 404);
    call_free(&c);
    do_call(st, &c, HTTP_GET, path, NULL);
    expect(&c, 404);
    char want[128];
    snprintf(want, sizeof want, "MCP Server with id %s not found", id);
    assert_string_equal(detail(&c), want);
    call_free(&c);
}

static void test_bad_input(void **state)
{
    struct sy_store *st = *state;
    static const struct {
        int method;
        const char *body;
        int status;
    } cases[] = {
        {HTTP_POST, "{\"server_name\":\"a-b\",\"url\":\"http://h/mcp\",\"transport\":\"http\"}", 400},
        {HTTP_POST, "{\"server_name\":\"ok\",\"alias\":\"x/y\",\"url\":\"http://h/mcp\",\"transport\":\"http\"}", 400},
        {HTTP_POST, "{\"server_name\":\"ok\",\"url\":\"http://h/mcp\",\"transport\":\"ws\"}", 422},
        {HTTP_POST, "{\"server_name\":\"ok\",\"url\":\"http://h/mcp\",\"auth_type\":\"magic\"}", 422},
        {HTTP_POST, "{\"server_name\":\"ok\",\"transport\":\"http\"}", 400},
        {HTTP_POST, "{\"server_name\":\"ok\",\"url\":\"ftp://h/mcp\",\"transport\":\"http\"}", 400},
        {HTTP_POST, "{\"server_name\":\"ok\",\"url\":\"http://\",\"transport\":\"sse\"}", 400},
        {HTTP_POST, "{\"server_name\":\"ok\",\"url\":\"http://h/a b\",\"transport\":\"http\"}", 400},
        {HTTP_POST, "{\"server_name\":\"ok\",\"url\":\"http://h/mcp\",\"static_headers\":{\"x\":[1]}}", 400},
        {HTTP_POST, "{\"server_name\":\"ok\",\"url\":\"http://h/mcp\",\"env\":\"A=1\"}", 422},
        {HTTP_POST, "{\"server_name\":\"ok\",\"transport\":\"stdio\",\"command\":\"/bin/true\"}", 400},
        {HTTP_POST, "{\"server_name\":\"cfgsrv\",\"url\":\"http://h/mcp\"}", 400},
        {HTTP_POST, "{\"server_id\":\"all-team-mcpservers\",\"url\":\"http://h/mcp\"}", 400},
        {HTTP_POST, "{\"server_name\":42}", 422},
        {HTTP_POST, "[1]", 422},
        {HTTP_PUT, "{\"description\":\"no id\"}", 422},
        {HTTP_PUT, "{\"server_id\":\"nope\",\"description\":\"x\"}", 404},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct call c;
        do_call(st, &c, cases[i].method, "/v1/mcp/server", cases[i].body);
        if (c.a.status != cases[i].status)
            fail_msg("case %zu %s: status %d, want %d: %s", i, cases[i].body, c.a.status, cases[i].status, c.a.out.p);
        assert_int_equal(c.a.ninval, 0);
        call_free(&c);
    }
    struct call c;
    do_call(st, &c, HTTP_POST, "/v1/mcp/server", "{\"server_name\":\"a-b\",\"url\":\"http://h/mcp\"}");
    assert_string_equal(detail(&c), "Server name cannot contain '-'. Use an alternative character instead Found: a-b");
    call_free(&c);
    /* ids and names are unique */
    do_call(st, &c, HTTP_POST, "/v1/mcp/server",
            "{\"server_id\":\"fixed\",\"server_name\":\"n1\",\"url\":\"http://h/mcp\"}");
    expect(&c, 201);
    assert_string_equal(jstr(c.j, "transport"), "sse"); /* LiteLLM's column default */
    call_free(&c);
    do_call(st, &c, HTTP_POST, "/v1/mcp/server",
            "{\"server_id\":\"fixed\",\"server_name\":\"n2\",\"url\":\"http://h/mcp\"}");
    expect(&c, 400);
    assert_string_equal(detail(&c), "MCP Server with id fixed already exists. Cannot create another.");
    call_free(&c);
    do_call(st, &c, HTTP_POST, "/v1/mcp/server", "{\"server_name\":\"n1\",\"url\":\"http://h/mcp\"}");
    expect(&c, 400);
    call_free(&c);
    do_call(st, &c, HTTP_POST, "/v1/mcp/server",
            "{\"server_name\":\"n3\",\"alias\":\"fixed\",\"url\":\"http://h/mcp\"}");
    expect(&c, 400); /* an alias may not be another server's id */
    call_free(&c);
    /* stdio with the opt-in: a command is required, then it is stored */
    g_cfg.mcp_stdio_from_api = 1;
    do_call(st, &c, HTTP_POST, "/v1/mcp/server", "{\"server_name\":\"proc\",\"transport\":\"stdio\"}");
    expect(&c, 400);
    call_free(&c);
    do_call(st, &c, HTTP_POST, "/v1/mcp/server",
            "{\"server_name\":\"proc\",\"transport\":\"stdio\",\"command\":\"node\",\"args\":[\"s.mjs\"]}");
    expect(&c, 201);
    assert_string_equal(jstr(c.j, "command"), "node");
    call_free(&c);
    g_cfg.mcp_stdio_from_api = 0;
    /* an update may not turn a server into a process */
    do_call(st, &c, HTTP_PUT, "/v1/mcp/server", "{\"server_id\":\"fixed\",\"transport\":\"stdio\",\"command\":\"sh\"}");
    expect(&c, 400);
    call_free(&c);
}

static void test_roles(void **state)
{
    struct sy_store *st = *state;
    struct call c;
    do_call(st, &c, HTTP_POST, "/v1/mcp/server",
            "{\"server_name\":\"granted\",\"url\":\"http://h/mcp?token=t0ken\",\"transport\":\"http\","
            "\"env\":{\"A\":\"b\"}}");
    expect(&c, 201);
    call_free(&c);
    do_call(st, &c, HTTP_POST, "/v1/mcp/server", "{\"server_name\":\"other\",\"url\":\"http://h/mcp\"}");
    expect(&c, 201);
    char other[64];
    snprintf(other, sizeof other, "/v1/mcp/server/%s", jstr(c.j, "server_id"));
    call_free(&c);

    /* a key whose object permission grants "granted" */
    struct sy_keyinfo *ki = calloc(1, sizeof *ki);
    struct sy_objperm *op = calloc(1, sizeof *op);
    char *names[] = {"granted"};
    op->mcp_servers = names;
    op->nmcp_servers = 1;
    ki->perm = op;
    snprintf(ki->token, sizeof ki->token, "%064d", 7);
    g_key = ki;
    g_admin = 0;

    do_call(st, &c, HTTP_GET, "/v1/mcp/server", NULL);
    expect(&c, 200);
    assert_int_equal(json_object_array_length(c.j), 1);
    struct json_object *s = json_object_array_get_idx(c.j, 0);
    assert_string_equal(jstr(s, "server_name"), "granted");
    assert_null(jget(s, "url"));
    assert_null(jget(s, "env"));
    assert_null(strstr(c.a.out.p, "t0ken"));
    call_free(&c);
    do_call(st, &c, HTTP_GET, other, NULL);
    expect(&c, 403);
    call_free(&c);
    do_call(st, &c, HTTP_POST, "/v1/mcp/server", "{\"server_name\":\"mine\",\"url\":\"http://h/mcp\"}");
    expect(&c, 403);
    assert_string_equal(detail(&c), "User does not have permission to create mcp servers. You can only create mcp "
                                    "servers if you are a PROXY_ADMIN.");
    call_free(&c);
    do_call(st, &c, HTTP_DELETE, other, NULL);
    expect(&c, 403);
    call_free(&c);
    do_call(st, &c, HTTP_PUT, "/v1/mcp/server", "{\"server_id\":\"x\",\"url\":\"http://evil/mcp\"}");
    expect(&c, 403);
    call_free(&c);
    g_key = NULL;
    g_admin = 1;
    free(op);
    free(ki);
}

/* A newer LiteLLM's submission under review is not a server (yet). */
static void test_review_rows(void **state)
{
    struct sy_store *st = *state;
    assert_true(sy_store_exec(st, "ALTER TABLE \"LiteLLM_MCPServerTable\" ADD COLUMN approval_status TEXT", 0, NULL,
                              NULL, NULL) >= 0);
    assert_int_equal(
        sy_store_exec(st,
                      "INSERT INTO \"LiteLLM_MCPServerTable\" (server_id, server_name, url, transport, "
                      "approval_status) VALUES ('p1', 'pending', 'http://h/mcp', 'http', 'pending_review'), "
                      "('a1', 'active1', 'http://h/mcp', 'http', 'active'), "
                      "('n1', 'legacy', 'http://h/mcp', 'http', NULL)",
                      0, NULL, NULL, NULL),
        3);
    struct call c;
    do_call(st, &c, HTTP_GET, "/v1/mcp/server", NULL);
    expect(&c, 200);
    assert_null(strstr(c.a.out.p, "\"pending\""));
    assert_non_null(strstr(c.a.out.p, "\"active1\""));
    assert_non_null(strstr(c.a.out.p, "\"legacy\""));
    call_free(&c);
    do_call(st, &c, HTTP_GET, "/v1/mcp/server/p1", NULL);
    expect(&c, 404);
    call_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_roles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_review_rows, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
