/* test_keys.c - the key management handlers (admin/keys.c) and the shared
 * admin helpers (admin/util.c), called directly on a SQLite store made by
 * sy_store_migrate in a temp file.
 *
 * With SY_TEST_PG_URL set, generate / info / update / delete also run
 * against PostgreSQL, in a fresh database loaded with LiteLLM's own schema
 * (tests/config/litellm-schema/litellm-schema.sql), so the SQL is
 * proven against LiteLLM's real column types.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <http_parser.h>

#include "admin/admin.h"
#include "admin/admin_impl.h"
#include "core/buf.h"
#include "keys/keys.h"
#include "store/store.h"

#define LITELLM_SCHEMA SY_LITELLM_SCHEMA_DIR "/litellm-schema.sql"

static char db_path[256];
static double t_now;

/* ---- harness ---------------------------------------------------------------- */

struct call {
    struct sy_admin_ctx a;
    struct json_object *j; /* the parsed response */
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

/* Caller identity for the next calls (NULL user: the master key). */
static int g_admin = 1, g_viewer;
static const char *g_caller_token, *g_caller_user, *g_caller_team;

static void run(struct sy_store *st, struct call *c, sy_admin_fn fn, int method, const char *path, const char *query,
                const char *body)
{
    memset(c, 0, sizeof *c);
    c->a.method = method;
    c->a.path = path;
    c->a.query = query ? query : "";
    c->a.body = body ? body : "";
    c->a.body_len = strlen(c->a.body);
    c->a.is_admin = g_admin;
    c->a.is_admin_viewer = g_viewer;
    c->a.caller_token = g_caller_token;
    c->a.caller_user_id = g_caller_user;
    c->a.caller_team_id = g_caller_team;
    c->a.now = t_now;
    c->a.status = 200;
    sy_buf_init(&c->a.out, 1 << 22);
    fn(st, &c->a);
    assert_non_null(c->a.out.p);
    c->j = json_tokener_parse(c->a.out.p);
    if (!c->j)
        fail_msg("response is not JSON: %s", c->a.out.p);
}

/* The handler of a route, through the table. */
static sy_admin_fn route(int method, const char *path)
{
    for (const struct sy_admin_route *r = sy_admin_key_routes; r->path; r++) {
        /* exact paths first; the '*' pattern by hand */
        if (r->method == method && strcmp(r->path, path) == 0)
            return r->fn;
    }
    if (strstr(path, "/regenerate"))
        for (const struct sy_admin_route *r = sy_admin_key_routes; r->path; r++)
            if (strcmp(r->path, "/key/*/regenerate") == 0)
                return r->fn;
    fail_msg("no route %s", path);
    return NULL;
}

static void do_call(struct sy_store *st, struct call *c, int method, const char *path, const char *query,
                    const char *body)
{
    run(st, c, route(method, path), method, path, query, body);
}

static const char *jstr(struct json_object *o, const char *k)
{
    struct json_object *v;
    if (!o || !json_object_object_get_ex(o, k, &v) || !v)
        return NULL;
    return json_object_get_string(v);
}

static struct json_object *jget(struct json_object *o, const char *k)
{
    struct json_object *v = NULL;
    if (o)
        json_object_object_get_ex(o, k, &v);
    return v;
}

static int has_inval(const struct call *c, const char *kind, const char *id)
{
    char want[256];
    snprintf(want, sizeof want, "%s:%s", kind, id);
    for (int i = 0; i < c->a.ninval; i++)
        if (strcmp(c->a.inval[i], want) == 0)
            return 1;
    return 0;
}

static void expect_status(const struct call *c, int status)
{
    if (c->a.status != status)
        fail_msg("status %d, want %d: %s", c->a.status, status, c->a.out.p);
}

/* A key row as a json object (NULL when absent). */
static struct json_object *row_of(struct sy_store *st, const char *table, const char *col, const char *val)
{
    char sql[256];
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    struct sy_admin_rows rows = {&b, 0};
    snprintf(sql, sizeof sql, "SELECT * FROM \"%s\" WHERE \"%s\" = $1", table, col);
    struct sy_sval p = sy_sv_text(val);
    int rc = sy_store_exec(st, sql, 1, &p, sy_admin_rows_cb, &rows);
    if (rc < 0)
        fail_msg("%s: %s", sql, sy_store_errmsg(st));
    struct json_object *o = rows.n ? json_tokener_parse(b.p) : NULL;
    sy_buf_free(&b);
    return o;
}

static struct sy_store *open_store(const char *url)
{
    struct sy_store_conf conf = {.url = url, .connect_timeout_s = 3, .busy_timeout_s = 3};
    char err[256];
    struct sy_store *st = sy_store_open(&conf, err, sizeof err);
    if (!st)
        fail_msg("open %s: %s", url, err);
    int rc = sy_store_migrate(st);
    if (rc < 0)
        fail_msg("migrate: %s", sy_store_errmsg(st));
    return st;
}

static int setup(void **state)
{
    unlink(db_path);
    char wal[300];
    snprintf(wal, sizeof wal, "%s-wal", db_path);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", db_path);
    unlink(wal);
    *state = open_store(db_path);
    g_admin = 1;
    g_viewer = 0;
    g_caller_token = g_caller_user = g_caller_team = NULL;
    return 0;
}

static int teardown(void **state)
{
    sy_store_close(*state);
    return 0;
}

/* Generate a key with body; returns the plaintext (static copy) and the hash. */
static const char *gen(struct sy_store *st, const char *body, char token[65])
{
    static char key[128][8];
    static int slot;
    struct call c;
    do_call(st, &c, HTTP_POST, "/key/generate", NULL, body);
    expect_status(&c, 200);
    char *k = key[slot++ % 8];
    snprintf(k, 128, "%s", jstr(c.j, "key"));
    if (token)
        snprintf(token, 65, "%s", jstr(c.j, "token"));
    call_free(&c);
    return k;
}

/* ---- util.c ------------------------------------------------------------------ */

static void test_util(void **state)
{
    (void)state;
    struct sy_admin_ctx a;
    char out[64];
    memset(&a, 0, sizeof a);
    a.query = "page=2&key=sk-a%2Bb+c&empty=&flag";
    assert_string_equal(sy_admin_query(&a, "key", out, sizeof out), "sk-a+b c");
    assert_string_equal(sy_admin_query(&a, "page", out, sizeof out), "2");
    assert_string_equal(sy_admin_query(&a, "empty", out, sizeof out), "");
    assert_string_equal(sy_admin_query(&a, "flag", out, sizeof out), "");
    assert_null(sy_admin_query(&a, "pag", out, sizeof out));

    char k[64], k2[64], u[37];
    sy_admin_new_key(k, sizeof k);
    sy_admin_new_key(k2, sizeof k2);
    assert_int_equal(strlen(k), 25);
    assert_memory_equal(k, "sk-", 3);
    assert_string_not_equal(k, k2);
    for (const char *p = k + 3; *p; p++)
        assert_true((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
                    *p == '_');
    sy_admin_uuid(u);
    assert_int_equal(strlen(u), 36);
    assert_int_equal(u[14], '4');
    assert_true(strchr("89ab", u[19]) != NULL);

    sy_buf_init(&a.out, 1 << 16);
    sy_admin_error(&a, 404, NULL, "key", "Key %s not found", "x\"y");
    assert_int_equal(a.status, 404);
    assert_string_equal(
        a.out.p,
        "{\"error\":{\"message\":\"Key x\\\"y not found\",\"type\":\"None\",\"param\":\"key\",\"code\":\"404\"}}");

    for (int i = 0; i < 3; i++)
        sy_admin_invalidate(&a, "token", "abc");
    assert_int_equal(a.ninval, 1);
    assert_string_equal(a.inval[0], "token:abc");
    for (int i = 0; i < SY_ADMIN_MAX_INVAL + 2; i++) {
        char id[16];
        snprintf(id, sizeof id, "%d", i);
        sy_admin_invalidate(&a, "user", id);
    }
    assert_int_equal(a.ninval, 1);
    assert_string_equal(a.inval[0], "all");
    free(a.inval[0]);
    sy_buf_free(&a.out);

    char tok[65];
    sy_admin_token_of("sk-test-1234", tok);
    assert_string_equal(tok, "eceadfbb53b79c09477666aa69fb6ac5994e1e25f7f0fe2f3c270c29717de213");
    char same[65];
    sy_admin_token_of(tok, same);
    assert_string_equal(same, tok);
}

/* ---- /key/generate ------------------------------------------------------------ */

static void test_generate(void **state)
{
    struct sy_store *st = *state;
    struct call c;
    do_call(st, &c, HTTP_POST, "/key/generate", NULL,
            "{\"key_alias\":\"alias-1\",\"models\":[\"gpt-4o\",\"claude\"],\"max_budget\":10.5,\"duration\":\"1h\","
            "\"budget_duration\":\"30d\",\"metadata\":{\"app\":\"x\"},\"tags\":[\"t1\"],"
            "\"model_rpm_limit\":{\"gpt-4o\":5},\"tpm_limit\":1000,\"rpm_limit\":10,\"max_parallel_requests\":3,"
            "\"user_id\":\"u1\",\"team_id\":\"team-nowhere\",\"soft_budget\":2,\"aliases\":{\"a\":\"gpt-4o\"},"
            "\"allowed_cache_controls\":[\"no-cache\"],\"guardrails\":[\"g1\"],\"blocked\":false,"
            "\"object_permission\":{\"vector_stores\":[]}}");
    expect_status(&c, 200);
    const char *key = jstr(c.j, "key");
    assert_non_null(key);
    assert_int_equal(strlen(key), 25);
    char tok[65], name[32];
    sy_keys_hash(key, strlen(key), tok);
    sy_keys_abbrev(key, strlen(key), name, sizeof name);
    assert_string_equal(jstr(c.j, "token"), tok);
    assert_string_equal(jstr(c.j, "token_id"), tok);
    assert_string_equal(jstr(c.j, "key_name"), name);
    assert_string_equal(jstr(c.j, "key_alias"), "alias-1");
    assert_string_equal(jstr(c.j, "user_id"), "u1");
    assert_true(json_object_get_double(jget(c.j, "soft_budget")) == 2.0);
    assert_true(has_inval(&c, "token", tok));

    struct json_object *r = row_of(st, "LiteLLM_VerificationToken", "token", tok);
    assert_non_null(r);
    assert_string_equal(jstr(r, "key_name"), name);
    assert_string_equal(jstr(r, "created_by"), "default_user_id");
    assert_string_equal(jstr(r, "updated_by"), "default_user_id");
    assert_string_equal(jstr(r, "team_id"), "team-nowhere");
    assert_true(json_object_get_double(jget(r, "max_budget")) == 10.5);
    assert_true(json_object_get_double(jget(r, "spend")) == 0);
    assert_int_equal(json_object_get_int64(jget(r, "tpm_limit")), 1000);
    assert_int_equal(json_object_get_int64(jget(r, "rpm_limit")), 10);
    assert_int_equal(json_object_get_int64(jget(r, "max_parallel_requests")), 3);
    assert_int_equal(json_object_array_length(jget(r, "models")), 2);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(r, "models"), 1)), "claude");
    assert_string_equal(jstr(jget(r, "aliases"), "a"), "gpt-4o");
    struct json_object *meta = jget(r, "metadata");
    assert_string_equal(jstr(meta, "app"), "x");
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(meta, "tags"), 0)), "t1");
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(meta, "guardrails"), 0)), "g1");
    assert_int_equal(json_object_get_int(jget(jget(meta, "model_rpm_limit"), "gpt-4o")), 5);
    assert_string_equal(jstr(r, "budget_duration"), "30d");
    assert_non_null(jstr(r, "budget_reset_at"));
    double exp = sy_iso_parse(jstr(r, "expires"));
    assert_true(fabs(exp - (t_now + 3600)) < 1.0);
    assert_true(sy_iso_parse(jstr(r, "budget_reset_at")) > t_now);
    assert_false(json_object_get_boolean(jget(r, "blocked")));
    assert_int_equal(json_object_array_length(jget(r, "allowed_routes")), 0);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(r, "allowed_cache_controls"), 0)),
                        "no-cache");
    /* soft_budget: a budget row linked by budget_id */
    const char *bid = jstr(r, "budget_id");
    assert_non_null(bid);
    struct json_object *b = row_of(st, "LiteLLM_BudgetTable", "budget_id", bid);
    assert_non_null(b);
    assert_true(json_object_get_double(jget(b, "soft_budget")) == 2.0);
    json_object_put(b);
    json_object_put(r);
    call_free(&c);

    /* defaults; key_type -> allowed_routes */
    do_call(st, &c, HTTP_POST, "/key/generate", NULL, "{\"key_type\":\"llm_api\"}");
    expect_status(&c, 200);
    r = row_of(st, "LiteLLM_VerificationToken", "token", jstr(c.j, "token"));
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(r, "allowed_routes"), 0)),
                        "llm_api_routes");
    assert_null(jget(r, "expires"));
    assert_null(jget(r, "max_budget"));
    assert_null(jget(r, "key_alias"));
    assert_int_equal(json_object_object_length(jget(r, "metadata")), 0);
    json_object_put(r);
    call_free(&c);

    /* an empty body is an empty request */
    do_call(st, &c, HTTP_POST, "/key/generate", NULL, "");
    expect_status(&c, 200);
    call_free(&c);
}

/* object_permission: a row of its own linked by object_permission_id, shown
 * by generate, update and info; update changes the fields given only; bad
 * shapes are FastAPI's 422 with the nested loc; only admins set it. */
static void test_object_permission(void **state)
{
    struct sy_store *st = *state;
    struct call c;
    do_call(st, &c, HTTP_POST, "/key/generate", NULL,
            "{\"object_permission\":{\"mcp_servers\":[\"github\"],\"mcp_access_groups\":[\"dev\"],"
            "\"mcp_tool_permissions\":{\"github\":[\"search\"]}}}");
    expect_status(&c, 200);
    char tok[65], opid[128];
    snprintf(tok, sizeof tok, "%s", jstr(c.j, "token"));
    struct json_object *op = jget(c.j, "object_permission");
    assert_non_null(op);
    const char *id0 = jstr(op, "object_permission_id");
    assert_non_null(id0);
    snprintf(opid, sizeof opid, "%s", id0 ? id0 : "");
    assert_string_equal(jstr(c.j, "object_permission_id"), opid);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(op, "mcp_servers"), 0)), "github");
    assert_int_equal(json_object_array_length(jget(jget(op, "mcp_tool_permissions"), "github")), 1);
    call_free(&c);
    struct json_object *r = row_of(st, "LiteLLM_ObjectPermissionTable", "object_permission_id", opid);
    assert_non_null(r);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(r, "mcp_access_groups"), 0)), "dev");
    json_object_put(r);

    /* update: mcp_servers replaced, the access groups kept, the same row */
    char body[256];
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"object_permission\":{\"mcp_servers\":[\"jira\",\"wiki\"]}}", tok);
    do_call(st, &c, HTTP_POST, "/key/update", NULL, body);
    expect_status(&c, 200);
    op = jget(c.j, "object_permission");
    assert_string_equal(jstr(op, "object_permission_id"), opid);
    assert_int_equal(json_object_array_length(jget(op, "mcp_servers")), 2);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(op, "mcp_access_groups"), 0)), "dev");
    assert_true(has_inval(&c, "token", tok));
    call_free(&c);

    /* info shows it */
    char q[128];
    snprintf(q, sizeof q, "key=%s", tok);
    do_call(st, &c, HTTP_GET, "/key/info", q, NULL);
    expect_status(&c, 200);
    op = jget(jget(c.j, "info"), "object_permission");
    assert_non_null(op);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(op, "mcp_servers"), 1)), "wiki");
    call_free(&c);

    /* a key without one: null; an update gives it one */
    do_call(st, &c, HTTP_POST, "/key/generate", NULL, "{}");
    expect_status(&c, 200);
    assert_null(jget(c.j, "object_permission"));
    snprintf(tok, sizeof tok, "%s", jstr(c.j, "token"));
    call_free(&c);
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"object_permission\":{\"mcp_access_groups\":[\"ops\"]}}", tok);
    do_call(st, &c, HTTP_POST, "/key/update", NULL, body);
    expect_status(&c, 200);
    assert_non_null(jstr(c.j, "object_permission_id"));
    assert_string_equal(jstr(jget(c.j, "object_permission"), "object_permission_id"),
                        jstr(c.j, "object_permission_id"));
    call_free(&c);

    /* bad shapes */
    static const struct {
        const char *body, *type, *loc;
    } bad[] = {
        {"{\"object_permission\":{\"mcp_servers\":\"github\"}}", "list_type",
         "[\"body\",\"object_permission\",\"mcp_servers\"]"},
        {"{\"object_permission\":{\"mcp_servers\":[\"a\",7]}}", "string_type",
         "[\"body\",\"object_permission\",\"mcp_servers\",1]"},
        {"{\"object_permission\":{\"mcp_tool_permissions\":[\"x\"]}}", "dict_type",
         "[\"body\",\"object_permission\",\"mcp_tool_permissions\"]"},
        {"{\"object_permission\":{\"mcp_tool_permissions\":{\"s\":\"tool\"}}}", "list_type",
         "[\"body\",\"object_permission\",\"mcp_tool_permissions\",\"s\"]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        do_call(st, &c, HTTP_POST, "/key/generate", NULL, bad[i].body);
        expect_status(&c, 422);
        struct json_object *d = json_object_array_get_idx(jget(c.j, "detail"), 0);
        assert_string_equal(jstr(d, "type"), bad[i].type);
        assert_string_equal(json_object_to_json_string_ext(jget(d, "loc"), JSON_C_TO_STRING_PLAIN), bad[i].loc);
        call_free(&c);
    }

    /* a non-admin may not grant MCP servers on a key */
    g_admin = 0;
    g_caller_user = "alice";
    do_call(st, &c, HTTP_POST, "/key/generate", NULL, "{\"object_permission\":{\"mcp_servers\":[\"github\"]}}");
    expect_status(&c, 403);
    call_free(&c);
    g_admin = 1;
    g_caller_user = NULL;
}

static void test_generate_custom_and_conflicts(void **state)
{
    struct sy_store *st = *state;
    struct call c;
    char tok[65];
    do_call(st, &c, HTTP_POST, "/key/generate", NULL, "{\"key\":\"sk-my-custom-key-9876\",\"key_alias\":\"dup\"}");
    expect_status(&c, 200);
    assert_string_equal(jstr(c.j, "key"), "sk-my-custom-key-9876");
    sy_keys_hash("sk-my-custom-key-9876", 21, tok);
    assert_string_equal(jstr(c.j, "token"), tok);
    assert_string_equal(jstr(c.j, "key_name"), "sk-...9876");
    call_free(&c);

    /* the same key again */
    do_call(st, &c, HTTP_POST, "/key/generate", NULL, "{\"key\":\"sk-my-custom-key-9876\"}");
    expect_status(&c, 400);
    assert_non_null(jget(c.j, "error"));
    call_free(&c);
    /* the same alias again */
    do_call(st, &c, HTTP_POST, "/key/generate", NULL, "{\"key_alias\":\"dup\"}");
    expect_status(&c, 400);
    assert_string_equal(jstr(jget(c.j, "error"), "message"),
                        "Key with alias 'dup' already exists. Unique key aliases across all keys are required.");
    assert_string_equal(jstr(jget(c.j, "error"), "param"), "key_alias");
    assert_string_equal(jstr(jget(c.j, "error"), "code"), "400");
    call_free(&c);
    /* not sk- */
    do_call(st, &c, HTTP_POST, "/key/generate", NULL, "{\"key\":\"abcdefghijkl\"}");
    expect_status(&c, 400);
    assert_string_equal(jstr(jget(c.j, "error"), "message"),
                        "{'error': \"Invalid key format. LiteLLM Virtual Key must start with 'sk-'. Received: "
                        "abcd****ijkl\"}");
    call_free(&c);
    /* negative budget */
    do_call(st, &c, HTTP_POST, "/key/generate", NULL, "{\"max_budget\":-1}");
    expect_status(&c, 400);
    assert_string_equal(jstr(jget(c.j, "error"), "message"),
                        "{'error': 'max_budget cannot be negative. Received: -1.0'}");
    call_free(&c);
    /* repr(float) as CPython: -1000.0, where %g printed -1e+03 */
    do_call(st, &c, HTTP_POST, "/key/generate", NULL, "{\"max_budget\":-1000}");
    expect_status(&c, 400);
    assert_string_equal(jstr(jget(c.j, "error"), "message"),
                        "{'error': 'max_budget cannot be negative. Received: -1000.0'}");
    call_free(&c);
    do_call(st, &c, HTTP_POST, "/key/generate", NULL, "{\"soft_budget\":-0.1}");
    expect_status(&c, 400);
    assert_string_equal(jstr(jget(c.j, "error"), "message"),
                        "{'error': 'soft_budget cannot be negative. Received: -0.1'}");
    call_free(&c);
    /* the soft_budget echoed as json.dumps writes it: 0.1, not 0.10000000000000001 */
    do_call(st, &c, HTTP_POST, "/key/generate", NULL, "{\"soft_budget\":0.1}");
    expect_status(&c, 200);
    assert_non_null(strstr(c.a.out.p, "\"soft_budget\":0.1,"));
    call_free(&c);
    /* unknown organization */
    do_call(st, &c, HTTP_POST, "/key/generate", NULL, "{\"organization_id\":\"org-x\"}");
    expect_status(&c, 400);
    assert_string_equal(jstr(jget(c.j, "error"), "message"), "Organization not found for organization_id=org-x");
    call_free(&c);
    /* a bad duration */
    do_call(st, &c, HTTP_POST, "/key/generate", NULL, "{\"duration\":\"soon\"}");
    expect_status(&c, 400);
    call_free(&c);
}

static void test_bad_bodies(void **state)
{
    struct sy_store *st = *state;
    struct call c;
    static const struct {
        const char *body, *type, *loc;
    } cases[] = {
        {"{\"max_budget\":", "json_invalid", NULL},
        {"{\"a\":1} x", "json_invalid", NULL},
        {"[1,2]", "model_attributes_type", NULL},
        {"{\"max_budget\":\"abc\"}", "float_parsing", "max_budget"},
        {"{\"max_budget\":[1]}", "float_type", "max_budget"},
        {"{\"models\":\"gpt-4o\"}", "list_type", "models"},
        {"{\"models\":[1]}", "string_type", "models"},
        {"{\"key_alias\":5}", "string_type", "key_alias"},
        {"{\"tpm_limit\":1.5}", "int_from_float", "tpm_limit"},
        {"{\"tpm_limit\":\"x\"}", "int_parsing", "tpm_limit"},
        {"{\"blocked\":\"maybe\"}", "bool_parsing", "blocked"},
        {"{\"metadata\":[]}", "dict_type", "metadata"},
        {"{\"key_type\":\"admin\"}", "enum", "key_type"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        do_call(st, &c, HTTP_POST, "/key/generate", NULL, cases[i].body);
        if (c.a.status != 422)
            fail_msg("%s: status %d %s", cases[i].body, c.a.status, c.a.out.p);
        struct json_object *d = json_object_array_get_idx(jget(c.j, "detail"), 0);
        assert_non_null(d);
        assert_string_equal(jstr(d, "type"), cases[i].type);
        struct json_object *loc = jget(d, "loc");
        assert_string_equal(json_object_get_string(json_object_array_get_idx(loc, 0)), "body");
        if (cases[i].loc)
            assert_string_equal(json_object_get_string(json_object_array_get_idx(loc, 1)), cases[i].loc);
        call_free(&c);
    }
    /* lax coercions pydantic accepts */
    do_call(st, &c, HTTP_POST, "/key/generate", NULL,
            "{\"max_budget\":\"7.5\",\"tpm_limit\":\"12\",\"rpm_limit\":3.0,\"blocked\":\"true\"}");
    expect_status(&c, 200);
    assert_true(json_object_get_double(jget(c.j, "max_budget")) == 7.5);
    assert_int_equal(json_object_get_int64(jget(c.j, "tpm_limit")), 12);
    assert_true(json_object_get_boolean(jget(c.j, "blocked")));
    call_free(&c);
    /* max_budget "" is None */
    do_call(st, &c, HTTP_POST, "/key/generate", NULL, "{\"max_budget\":\"\"}");
    expect_status(&c, 200);
    assert_null(jget(c.j, "max_budget"));
    call_free(&c);
    /* update without key */
    do_call(st, &c, HTTP_POST, "/key/update", NULL, "{\"max_budget\":1}");
    expect_status(&c, 422);
    assert_string_equal(jstr(json_object_array_get_idx(jget(c.j, "detail"), 0), "type"), "missing");
    call_free(&c);
}

/* ---- /key/info ----------------------------------------------------------------- */

static void test_info(void **state)
{
    struct sy_store *st = *state;
    struct call c;
    char t1[65], t2[65], q[256];
    const char *k1 = gen(st, "{\"user_id\":\"alice\",\"key_alias\":\"a1\",\"soft_budget\":1}", t1);
    char k1c[128];
    snprintf(k1c, sizeof k1c, "%s", k1);
    gen(st, "{\"user_id\":\"bob\"}", t2);

    snprintf(q, sizeof q, "key=%s", k1c);
    do_call(st, &c, HTTP_GET, "/key/info", q, NULL);
    expect_status(&c, 200);
    assert_string_equal(jstr(c.j, "key"), k1c);
    struct json_object *info = jget(c.j, "info");
    assert_null(jget(info, "token"));
    assert_string_equal(jstr(info, "key_alias"), "a1");
    assert_string_equal(jstr(info, "user_id"), "alice");
    assert_true(json_object_get_double(jget(jget(info, "litellm_budget_table"), "soft_budget")) == 1.0);
    call_free(&c);

    /* by hash */
    snprintf(q, sizeof q, "key=%s", t2);
    do_call(st, &c, HTTP_GET, "/key/info", q, NULL);
    expect_status(&c, 200);
    assert_string_equal(jstr(jget(c.j, "info"), "user_id"), "bob");
    assert_null(jget(jget(c.j, "info"), "litellm_budget_table"));
    call_free(&c);

    /* unknown */
    do_call(st, &c, HTTP_GET, "/key/info", "key=sk-nope", NULL);
    expect_status(&c, 404);
    assert_string_equal(jstr(jget(c.j, "error"), "message"), "Key not found in database");
    assert_string_equal(jstr(jget(c.j, "error"), "type"), "not_found_error");
    call_free(&c);

    /* a non-admin key: its own info without ?key=, not bob's */
    g_admin = 0;
    g_caller_token = t1;
    g_caller_user = "alice";
    do_call(st, &c, HTTP_GET, "/key/info", NULL, NULL);
    expect_status(&c, 200);
    assert_string_equal(jstr(jget(c.j, "info"), "user_id"), "alice");
    call_free(&c);
    snprintf(q, sizeof q, "key=%s", t2);
    do_call(st, &c, HTTP_GET, "/key/info", q, NULL);
    expect_status(&c, 403);
    assert_non_null(strstr(jstr(jget(c.j, "error"), "message"), "You are not allowed to access this key's info"));
    call_free(&c);
    /* a viewer sees everything */
    g_caller_token = NULL;
    g_caller_user = "viewer";
    g_viewer = 1;
    do_call(st, &c, HTTP_GET, "/key/info", q, NULL);
    expect_status(&c, 200);
    call_free(&c);
}

/* ---- /key/list ------------------------------------------------------------------ */

static void test_list(void **state)
{
    struct sy_store *st = *state;
    struct call c;
    char t[4][65];
    gen(st, "{\"user_id\":\"u-a\",\"key_alias\":\"k0\"}", t[0]);
    t_now += 1;
    gen(st, "{\"user_id\":\"u-a\",\"key_alias\":\"k1\"}", t[1]);
    t_now += 1;
    gen(st, "{\"user_id\":\"u-b\",\"team_id\":\"tm\"}", t[2]);
    t_now += 1;
    gen(st, "{\"team_id\":\"litellm-dashboard\"}", t[3]); /* UI session tokens are hidden */

    do_call(st, &c, HTTP_GET, "/key/list", "page=1&size=2", NULL);
    expect_status(&c, 200);
    assert_int_equal(json_object_get_int(jget(c.j, "total_count")), 3);
    assert_int_equal(json_object_get_int(jget(c.j, "current_page")), 1);
    assert_int_equal(json_object_get_int(jget(c.j, "total_pages")), 2);
    assert_int_equal(json_object_array_length(jget(c.j, "keys")), 2);
    /* newest first */
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(c.j, "keys"), 0)), t[2]);
    call_free(&c);

    do_call(st, &c, HTTP_GET, "/key/list", "user_id=u-a&return_full_object=true", NULL);
    expect_status(&c, 200);
    assert_int_equal(json_object_get_int(jget(c.j, "total_count")), 2);
    struct json_object *k0 = json_object_array_get_idx(jget(c.j, "keys"), 0);
    assert_true(json_object_is_type(k0, json_type_object));
    assert_string_equal(jstr(k0, "key_alias"), "k1");
    call_free(&c);

    do_call(st, &c, HTTP_GET, "/key/list", "team_id=tm", NULL);
    assert_int_equal(json_object_get_int(jget(c.j, "total_count")), 1);
    call_free(&c);
    do_call(st, &c, HTTP_GET, "/key/list", "key_alias=k0", NULL);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(c.j, "keys"), 0)), t[0]);
    call_free(&c);
    do_call(st, &c, HTTP_GET, "/key/list", "sort_by=key_alias&sort_order=asc&size=1", NULL);
    expect_status(&c, 200);
    call_free(&c);

    do_call(st, &c, HTTP_GET, "/key/list", "size=0", NULL);
    expect_status(&c, 422);
    assert_string_equal(jstr(json_object_array_get_idx(jget(c.j, "detail"), 0), "type"), "greater_than_equal");
    call_free(&c);
    do_call(st, &c, HTTP_GET, "/key/list", "size=101", NULL);
    expect_status(&c, 422);
    call_free(&c);
    do_call(st, &c, HTTP_GET, "/key/list", "page=x", NULL);
    expect_status(&c, 422);
    call_free(&c);
    do_call(st, &c, HTTP_GET, "/key/list", "sort_by=evil", NULL);
    expect_status(&c, 400);
    call_free(&c);

    /* a non-admin sees its own keys only */
    g_admin = 0;
    g_caller_user = "u-b";
    do_call(st, &c, HTTP_GET, "/key/list", NULL, NULL);
    expect_status(&c, 200);
    assert_int_equal(json_object_get_int(jget(c.j, "total_count")), 1);
    call_free(&c);
    do_call(st, &c, HTTP_GET, "/key/list", "user_id=u-a", NULL);
    expect_status(&c, 403);
    call_free(&c);

    /* aliases */
    g_admin = 1;
    g_caller_user = NULL;
    do_call(st, &c, HTTP_GET, "/key/aliases", "search=K", NULL);
    expect_status(&c, 200);
    assert_int_equal(json_object_array_length(jget(c.j, "aliases")), 2);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(c.j, "aliases"), 0)), "k0");
    assert_int_equal(json_object_get_int(jget(c.j, "size")), 50);
    call_free(&c);
}

/* ---- /key/update ------------------------------------------------------------------ */

static void test_update(void **state)
{
    struct sy_store *st = *state;
    struct call c;
    char tok[65], body[512];
    const char *k = gen(st,
                        "{\"key_alias\":\"old\",\"duration\":\"1d\",\"metadata\":{\"keep\":1},\"max_budget\":3,"
                        "\"tpm_limit\":5}",
                        tok);
    char key[128];
    snprintf(key, sizeof key, "%s", k);
    gen(st, "{\"key_alias\":\"taken\"}", NULL);

    t_now += 10;
    snprintf(body, sizeof body,
             "{\"key\":\"%s\",\"key_alias\":\"new\",\"max_budget\":20,\"duration\":null,\"tags\":[\"x\"],"
             "\"tpm_limit\":null,\"models\":[\"m1\"],\"budget_duration\":\"1h\",\"spend\":null}",
             key);
    do_call(st, &c, HTTP_POST, "/key/update", NULL, body);
    expect_status(&c, 200);
    assert_string_equal(jstr(c.j, "key"), key);
    assert_true(has_inval(&c, "token", tok));
    call_free(&c);
    struct json_object *r = row_of(st, "LiteLLM_VerificationToken", "token", tok);
    assert_string_equal(jstr(r, "key_alias"), "new");
    assert_true(json_object_get_double(jget(r, "max_budget")) == 20);
    assert_null(jget(r, "expires"));
    assert_null(jget(r, "tpm_limit"));
    assert_true(json_object_get_double(jget(r, "spend")) == 0); /* NOT NULL: kept */
    assert_int_equal(json_object_get_int(jget(jget(r, "metadata"), "keep")), 1);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(jget(r, "metadata"), "tags"), 0)), "x");
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(r, "models"), 0)), "m1");
    assert_string_equal(jstr(r, "budget_duration"), "1h");
    assert_true(fabs(sy_iso_parse(jstr(r, "updated_at")) - t_now) < 1);
    json_object_put(r);

    /* by hash; metadata replaced */
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"metadata\":{\"n\":2},\"blocked\":true}", tok);
    do_call(st, &c, HTTP_POST, "/key/update", NULL, body);
    expect_status(&c, 200);
    assert_true(json_object_get_boolean(jget(c.j, "blocked")));
    assert_null(jget(jget(c.j, "metadata"), "keep"));
    call_free(&c);

    /* alias of another key */
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"key_alias\":\"taken\"}", key);
    do_call(st, &c, HTTP_POST, "/key/update", NULL, body);
    expect_status(&c, 400);
    call_free(&c);
    /* its own alias again is fine */
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"key_alias\":\"new\"}", key);
    do_call(st, &c, HTTP_POST, "/key/update", NULL, body);
    expect_status(&c, 200);
    call_free(&c);
    /* unknown key */
    do_call(st, &c, HTTP_POST, "/key/update", NULL, "{\"key\":\"sk-unknown\"}");
    expect_status(&c, 404);
    call_free(&c);
    /* temp budget halves */
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"temp_budget_increase\":5}", key);
    do_call(st, &c, HTTP_POST, "/key/update", NULL, body);
    expect_status(&c, 422);
    call_free(&c);
    snprintf(body, sizeof body,
             "{\"key\":\"%s\",\"temp_budget_increase\":5,\"temp_budget_expiry\":\"2030-01-01T00:00:00\"}", key);
    do_call(st, &c, HTTP_POST, "/key/update", NULL, body);
    expect_status(&c, 200);
    assert_true(json_object_get_double(jget(jget(c.j, "metadata"), "temp_budget_increase")) == 5);
    call_free(&c);
}

/* ---- /key/delete -------------------------------------------------------------------- */

static void test_delete(void **state)
{
    struct sy_store *st = *state;
    struct call c;
    char t1[65], t2[65], t3[65], body[512];
    char k1[128];
    snprintf(k1, sizeof k1, "%s", gen(st, "{\"user_id\":\"alice\"}", t1));
    gen(st, "{\"key_alias\":\"del-me\",\"user_id\":\"bob\"}", t2);
    gen(st, "{\"user_id\":\"bob\"}", t3);

    snprintf(body, sizeof body, "{\"keys\":[\"%s\",\"sk-never-existed\"]}", k1);
    do_call(st, &c, HTTP_POST, "/key/delete", NULL, body);
    expect_status(&c, 200);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(c.j, "deleted_keys"), 0)), k1);
    assert_true(has_inval(&c, "token", t1));
    call_free(&c);
    assert_null(row_of(st, "LiteLLM_VerificationToken", "token", t1));
    struct json_object *d = row_of(st, "LiteLLM_DeletedVerificationToken", "token", t1);
    assert_non_null(d);
    assert_string_equal(jstr(d, "user_id"), "alice");
    assert_string_equal(jstr(d, "deleted_by"), "default_user_id");
    assert_non_null(jstr(d, "deleted_at"));
    assert_non_null(jstr(d, "id"));
    json_object_put(d);

    do_call(st, &c, HTTP_POST, "/key/delete", NULL, "{\"key_aliases\":[\"del-me\"]}");
    expect_status(&c, 200);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(c.j, "deleted_keys"), 0)), "del-me");
    assert_true(has_inval(&c, "token", t2));
    call_free(&c);
    assert_null(row_of(st, "LiteLLM_VerificationToken", "token", t2));

    do_call(st, &c, HTTP_POST, "/key/delete", NULL, "{\"keys\":[\"sk-gone\"]}");
    expect_status(&c, 404);
    assert_string_equal(jstr(jget(c.j, "error"), "message"), "{'error': 'No keys found'}");
    call_free(&c);
    do_call(st, &c, HTTP_POST, "/key/delete", NULL, "{}");
    expect_status(&c, 422);
    call_free(&c);

    /* a non-admin may not delete someone else's key, may delete its own */
    g_admin = 0;
    g_caller_user = "alice";
    snprintf(body, sizeof body, "{\"keys\":[\"%s\"]}", t3);
    do_call(st, &c, HTTP_POST, "/key/delete", NULL, body);
    expect_status(&c, 403);
    call_free(&c);
    assert_non_null(d = row_of(st, "LiteLLM_VerificationToken", "token", t3));
    json_object_put(d);
    g_caller_user = "bob";
    do_call(st, &c, HTTP_POST, "/key/delete", NULL, body);
    expect_status(&c, 200);
    call_free(&c);
}

/* ---- /key/regenerate, block, unblock, health ---------------------------------------------- */

static void test_regenerate(void **state)
{
    struct sy_store *st = *state;
    struct call c;
    char tok[65], path[256], body[256];
    char key[128];
    snprintf(key, sizeof key, "%s", gen(st, "{\"key_alias\":\"rot\",\"max_budget\":1,\"spend\":0.5}", tok));

    snprintf(path, sizeof path, "/key/%s/regenerate", key);
    do_call(st, &c, HTTP_POST, path, NULL, "{\"max_budget\":5}");
    expect_status(&c, 200);
    const char *nk = jstr(c.j, "key");
    assert_non_null(nk);
    assert_string_not_equal(nk, key);
    char ntok[65];
    sy_keys_hash(nk, strlen(nk), ntok);
    assert_string_equal(jstr(c.j, "token_id"), ntok);
    assert_true(json_object_get_double(jget(c.j, "max_budget")) == 5);
    assert_true(has_inval(&c, "token", tok));
    call_free(&c);
    assert_null(row_of(st, "LiteLLM_VerificationToken", "token", tok));
    struct json_object *r = row_of(st, "LiteLLM_VerificationToken", "token", ntok);
    assert_non_null(r);
    assert_string_equal(jstr(r, "key_alias"), "rot");
    assert_true(json_object_get_double(jget(r, "spend")) == 0.5);
    json_object_put(r);
    assert_non_null(r = row_of(st, "LiteLLM_DeletedVerificationToken", "token", tok));
    json_object_put(r);

    /* body form with a chosen new key */
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"new_key\":\"sk-chosen-0001\"}", ntok);
    do_call(st, &c, HTTP_POST, "/key/regenerate", NULL, body);
    expect_status(&c, 200);
    assert_string_equal(jstr(c.j, "key"), "sk-chosen-0001");
    assert_string_equal(jstr(c.j, "key_name"), "sk-...0001");
    call_free(&c);
    snprintf(body, sizeof body, "{\"key\":\"sk-chosen-0001\",\"new_key\":\"bad\"}");
    do_call(st, &c, HTTP_POST, "/key/regenerate", NULL, body);
    expect_status(&c, 400);
    call_free(&c);
    do_call(st, &c, HTTP_POST, "/key/regenerate", NULL, "{\"key\":\"sk-unknown\"}");
    expect_status(&c, 404);
    call_free(&c);
    do_call(st, &c, HTTP_POST, "/key/regenerate", NULL, "{}");
    expect_status(&c, 400);
    call_free(&c);
}

static void test_block(void **state)
{
    struct sy_store *st = *state;
    struct call c;
    char tok[65], body[256];
    char key[128];
    snprintf(key, sizeof key, "%s", gen(st, "{}", tok));
    snprintf(body, sizeof body, "{\"key\":\"%s\"}", key);
    do_call(st, &c, HTTP_POST, "/key/block", NULL, body);
    expect_status(&c, 200);
    assert_true(json_object_get_boolean(jget(c.j, "blocked")));
    assert_string_equal(jstr(c.j, "token"), tok);
    assert_true(has_inval(&c, "token", tok));
    call_free(&c);
    snprintf(body, sizeof body, "{\"key\":\"%s\"}", tok);
    do_call(st, &c, HTTP_POST, "/key/unblock", NULL, body);
    expect_status(&c, 200);
    assert_false(json_object_get_boolean(jget(c.j, "blocked")));
    call_free(&c);
    do_call(st, &c, HTTP_POST, "/key/block", NULL, "{\"key\":\"nope\"}");
    expect_status(&c, 400);
    assert_string_equal(jstr(jget(c.j, "error"), "message"), "Invalid key format.");
    call_free(&c);
    do_call(st, &c, HTTP_POST, "/key/block", NULL, "{\"key\":\"sk-nope\"}");
    expect_status(&c, 404);
    call_free(&c);
    do_call(st, &c, HTTP_POST, "/key/health", NULL, NULL);
    expect_status(&c, 200);
    assert_string_equal(c.a.out.p, "{\"key\":\"healthy\",\"logging_callbacks\":null}");
    call_free(&c);
}

/* ---- PostgreSQL with LiteLLM's schema --------------------------------------------------------- */

static void test_postgres(void **state)
{
    (void)state;
    const char *url = getenv("SY_TEST_PG_URL");
    if (!url || !*url)
        skip();
    char dbname[64], dburl[512], cmd[1024];
    snprintf(dbname, sizeof dbname, "sy_adminkeys_%d", (int)getpid());
    /* a fresh database next to the given one */
    struct sy_store_conf conf = {.url = url, .connect_timeout_s = 3};
    char err[256];
    struct sy_store *admin = sy_store_open(&conf, err, sizeof err);
    assert_non_null(admin);
    snprintf(cmd, sizeof cmd, "DROP DATABASE IF EXISTS %s", dbname);
    sy_store_exec(admin, cmd, 0, NULL, NULL, NULL);
    snprintf(cmd, sizeof cmd, "CREATE DATABASE %s", dbname);
    if (sy_store_exec(admin, cmd, 0, NULL, NULL, NULL) < 0)
        fail_msg("create database: %s", sy_store_errmsg(admin));
    const char *q = strchr(url, '?');
    const char *slash = url + strlen(url);
    for (const char *p = q ? q : url + strlen(url); p > url; p--)
        if (p[-1] == '/') {
            slash = p - 1;
            break;
        }
    snprintf(dburl, sizeof dburl, "%.*s/%s%s", (int)(slash - url), url, dbname, q ? q : "");
    snprintf(cmd, sizeof cmd, "psql -q -v ON_ERROR_STOP=1 -d '%s' -f %s >/dev/null 2>&1", dburl, LITELLM_SCHEMA);
    if (system(cmd) != 0)
        fail_msg("loading LiteLLM's schema failed: %s", cmd);

    struct sy_store *st = open_store(dburl); /* migrate on top of LiteLLM's schema */
    struct call c;
    char tok[65], body[512], key[128];
    do_call(st, &c, HTTP_POST, "/key/generate", NULL,
            "{\"key_alias\":\"pg\",\"models\":[\"gpt-4o\"],\"max_budget\":2.5,\"duration\":\"1h\","
            "\"budget_duration\":\"1d\",\"metadata\":{\"a\":1},\"tags\":[\"t\"],\"tpm_limit\":100,\"rpm_limit\":5,"
            "\"max_parallel_requests\":2,\"user_id\":\"u\",\"soft_budget\":1,\"blocked\":false,"
            "\"allowed_cache_controls\":[\"no-cache\"],\"aliases\":{\"x\":\"y\"}}");
    expect_status(&c, 200);
    snprintf(key, sizeof key, "%s", jstr(c.j, "key"));
    snprintf(tok, sizeof tok, "%s", jstr(c.j, "token"));
    assert_non_null(jget(jget(c.j, "metadata"), "tags"));
    call_free(&c);
    struct json_object *r = row_of(st, "LiteLLM_VerificationToken", "token", tok);
    assert_non_null(r);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(r, "models"), 0)), "gpt-4o");
    assert_int_equal(json_object_get_int64(jget(r, "tpm_limit")), 100);
    assert_true(fabs(sy_iso_parse(jstr(r, "expires")) - (t_now + 3600)) < 1.0);
    json_object_put(r);

    snprintf(body, sizeof body, "key=%s", key);
    do_call(st, &c, HTTP_GET, "/key/info", body, NULL);
    expect_status(&c, 200);
    assert_string_equal(jstr(jget(c.j, "info"), "key_alias"), "pg");
    assert_non_null(jget(jget(c.j, "info"), "litellm_budget_table"));
    call_free(&c);

    snprintf(body, sizeof body,
             "{\"key\":\"%s\",\"max_budget\":9,\"duration\":null,\"models\":[\"a\",\"b\"],\"tpm_limit\":null,"
             "\"metadata\":{\"b\":2},\"budget_duration\":\"1h\"}",
             key);
    do_call(st, &c, HTTP_POST, "/key/update", NULL, body);
    expect_status(&c, 200);
    assert_true(json_object_get_double(jget(c.j, "max_budget")) == 9);
    assert_null(jget(c.j, "expires"));
    call_free(&c);

    do_call(st, &c, HTTP_GET, "/key/list", "return_full_object=true", NULL);
    expect_status(&c, 200);
    assert_int_equal(json_object_get_int(jget(c.j, "total_count")), 1);
    call_free(&c);

    snprintf(body, sizeof body, "{\"keys\":[\"%s\"]}", key);
    do_call(st, &c, HTTP_POST, "/key/delete", NULL, body);
    expect_status(&c, 200);
    call_free(&c);
    assert_null(row_of(st, "LiteLLM_VerificationToken", "token", tok));
    assert_non_null(r = row_of(st, "LiteLLM_DeletedVerificationToken", "token", tok));
    json_object_put(r);
    sy_store_close(st);

    snprintf(cmd, sizeof cmd, "DROP DATABASE IF EXISTS %s", dbname);
    sy_store_exec(admin, cmd, 0, NULL, NULL, NULL);
    sy_store_close(admin);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(db_path, sizeof db_path, "%s/sy_test_admin_keys_%d.db", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    t_now = (double)time(NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_util),
        cmocka_unit_test_setup_teardown(test_generate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_object_permission, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generate_custom_and_conflicts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_bodies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_info, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_regenerate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_block, setup, teardown),
        cmocka_unit_test(test_postgres),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char p[300];
    unlink(db_path);
    snprintf(p, sizeof p, "%s-wal", db_path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", db_path);
    unlink(p);
    return rc;
}
