/* test_entities.c - the user, team, customer, organization and budget
 * management handlers (admin/users.c, teams.c, customers.c, orgs.c,
 * budgets.c) called directly on a store, as a DB thread calls them.
 *
 * Each test runs on SQLite (a fresh temp file, sy_store_migrate). When
 * SY_TEST_PG_URL is set, the round trips run again on PostgreSQL in a fresh
 * database holding LiteLLM's own schema (litellm-schema.sql from
 * $SY_TEST_LITELLM_SCHEMA, default tests/config/litellm-schema, loaded
 * with psql; dropped afterwards), so the SQL is checked against LiteLLM's
 * real tables.
 *
 *   SY_TEST_PG_URL=$(bash tests/lib/pg.sh start /tmp/sy-pg 55432) meson test ...
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <http_parser.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin/admin.h"
#include "core/buf.h"
#include "store/store.h"

static char db_url[512];

/* ---- plumbing ------------------------------------------------------------ */

struct call {
    int status;
    struct json_object *j; /* parsed answer */
    char *text;
    char *inval[SY_ADMIN_MAX_INVAL];
    int ninval;
};

static const struct sy_admin_route *find_route(int method, const char *path)
{
    const struct sy_admin_route *const tabs[] = {sy_admin_user_routes, sy_admin_team_routes, sy_admin_customer_routes,
                                                 sy_admin_org_routes, sy_admin_budget_routes};
    for (size_t t = 0; t < sizeof tabs / sizeof tabs[0]; t++)
        for (const struct sy_admin_route *r = tabs[t]; r->path; r++)
            if (strcmp(r->path, path) == 0 &&
                (r->method == method || (r->method == 0 && (method == HTTP_GET || method == HTTP_POST))))
                return r;
    return NULL;
}

/* Call method path?query with body as the master key (admin) unless user is set. */
static struct call call_as(struct sy_store *st, int method, const char *path, const char *query, const char *body,
                           const char *user, const char *team)
{
    struct sy_admin_ctx a;
    struct call c = {0};
    memset(&a, 0, sizeof a);
    const struct sy_admin_route *r = find_route(method, path);
    if (!r)
        fail_msg("no route %s", path);
    a.method = method;
    a.path = path;
    a.query = query ? query : "";
    a.body = body ? body : "";
    a.body_len = strlen(a.body);
    a.is_admin = user == NULL;
    a.caller_user_id = user;
    a.caller_team_id = team;
    a.now = 1780000000.0;
    a.status = 200;
    sy_buf_init(&a.out, 64 << 20);
    r->fn(st, &a);
    c.status = a.status;
    c.text = strndup(a.out.p ? a.out.p : "", a.out.len);
    c.j = json_tokener_parse(c.text);
    for (int i = 0; i < a.ninval; i++)
        c.inval[c.ninval++] = a.inval[i];
    sy_buf_free(&a.out);
    return c;
}

static struct call call(struct sy_store *st, int method, const char *path, const char *query, const char *body)
{
    return call_as(st, method, path, query, body, NULL, NULL);
}

static void call_free(struct call *c)
{
    json_object_put(c->j);
    free(c->text);
    for (int i = 0; i < c->ninval; i++)
        free(c->inval[i]);
    memset(c, 0, sizeof *c);
}

static int has_inval(const struct call *c, const char *s)
{
    for (int i = 0; i < c->ninval; i++)
        if (strcmp(c->inval[i], s) == 0 || strcmp(c->inval[i], "all") == 0)
            return 1;
    return 0;
}

/* Member at a dotted path ("a.b.0.c") of c's JSON, or NULL. */
static struct json_object *jget(struct json_object *o, const char *path)
{
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = strtok_r(buf, ".", &save); p && o; p = strtok_r(NULL, ".", &save)) {
        if (json_object_is_type(o, json_type_array))
            o = json_object_array_get_idx(o, (size_t)atoi(p));
        else if (!json_object_object_get_ex(o, p, &o))
            return NULL;
    }
    return o;
}
static const char *jstr(struct json_object *o, const char *path)
{
    struct json_object *v = jget(o, path);
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}
static double jnum(struct json_object *o, const char *path)
{
    struct json_object *v = jget(o, path);
    return v ? json_object_get_double(v) : -12345;
}
static size_t jlen(struct json_object *o, const char *path)
{
    struct json_object *v = jget(o, path);
    return v && json_object_is_type(v, json_type_array) ? json_object_array_length(v) : (size_t)-1;
}

#define expect_status(c, s)                                                                            \
    do {                                                                                               \
        if ((c).status != (s))                                                                         \
            fail_msg("%s:%d: status %d (want %d): %s", __FILE__, __LINE__, (c).status, (s), (c).text); \
    } while (0)

/* one value from SQL as text ("" for NULL) */
struct one {
    char s[4096];
    int rows;
};
static int one_cb(void *ud, const struct sy_srow *r)
{
    struct one *o = ud;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    sy_sval_json(&b, &r->v[0]);
    snprintf(o->s, sizeof o->s, "%.*s", (int)b.len, b.p ? b.p : "");
    sy_buf_free(&b);
    o->rows++;
    return 0;
}
static struct one sql1(struct sy_store *st, const char *sql, const char *arg)
{
    struct one o = {{0}, 0};
    struct sy_sval p = sy_sv_text(arg);
    int rc = sy_store_exec(st, sql, arg ? 1 : 0, &p, one_cb, &o);
    if (rc < 0)
        fail_msg("%s: %s", sql, sy_store_errmsg(st));
    return o;
}

/* ---- fixture ------------------------------------------------------------- */

static int setup(void **state)
{
    struct sy_store_conf conf = {.url = db_url, .connect_timeout_s = 3, .busy_timeout_s = 3};
    char err[256];
    struct sy_store *st = sy_store_open(&conf, err, sizeof err);
    if (!st)
        fail_msg("open %s: %s", db_url, err);
    if (sy_store_migrate(st) < 0)
        fail_msg("migrate: %s", sy_store_errmsg(st));
    static const char *const T[] = {
        "LiteLLM_VerificationToken", "LiteLLM_TeamMembership", "LiteLLM_OrganizationMembership", "LiteLLM_UserTable",
        "LiteLLM_TeamTable",         "LiteLLM_EndUserTable",   "LiteLLM_OrganizationTable",      "LiteLLM_BudgetTable"};
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "DELETE FROM \"%s\"", T[i]);
        if (sy_store_exec(st, sql, 0, NULL, NULL, NULL) < 0)
            fail_msg("%s: %s", sql, sy_store_errmsg(st));
    }
    *state = st;
    return 0;
}

static int teardown(void **state)
{
    sy_store_close(*state);
    return 0;
}

/* ---- users --------------------------------------------------------------- */

static void test_user_new_info_list_delete(void **state)
{
    struct sy_store *st = *state;
    struct call c = call(st, HTTP_POST, "/user/new", NULL,
                         "{\"user_id\":\"u1\",\"user_email\":\"u1@x.io\",\"max_budget\":5,\"models\":[\"gpt-4o\"],"
                         "\"user_role\":\"internal_user\",\"metadata\":{\"k\":1}}");
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "user_id"), "u1");
    assert_true(strncmp(jstr(c.j, "key"), "sk-", 3) == 0);
    assert_string_equal(jstr(c.j, "user_role"), "internal_user");
    assert_true(jnum(c.j, "max_budget") == 5);
    assert_true(has_inval(&c, "user:u1"));
    call_free(&c);
    /* the key row exists for the user, with the user's models */
    assert_int_equal(sql1(st, "SELECT COUNT(*) FROM \"LiteLLM_VerificationToken\" WHERE \"user_id\" = $1", "u1").s[0],
                     '1');
    assert_string_equal(sql1(st, "SELECT \"models\" FROM \"LiteLLM_VerificationToken\" WHERE \"user_id\" = $1", "u1").s,
                        "[\"gpt-4o\"]");
    assert_string_equal(sql1(st, "SELECT \"spend\" FROM \"LiteLLM_UserTable\" WHERE \"user_id\" = $1", "u1").s, "0.0");

    /* duplicates: id, email (case-insensitive) */
    c = call(st, HTTP_POST, "/user/new", NULL, "{\"user_id\":\"u1\"}");
    expect_status(c, 409);
    assert_string_equal(jstr(c.j, "error.message"), "{'error': 'User with id u1 already exists'}");
    call_free(&c);
    c = call(st, HTTP_POST, "/user/new", NULL, "{\"user_email\":\"U1@x.io\",\"auto_create_key\":false}");
    expect_status(c, 409);
    call_free(&c);

    /* no key, generated id, role left NULL as LiteLLM does */
    c = call(st, HTTP_POST, "/user/new", NULL, "{\"auto_create_key\":false,\"user_alias\":\"two\"}");
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "key"), "");
    assert_int_equal(strlen(jstr(c.j, "user_id")), 36);
    assert_null(jstr(c.j, "user_role"));
    call_free(&c);

    c = call(st, HTTP_POST, "/user/new", NULL, "{\"user_role\":\"boss\"}");
    expect_status(c, 422);
    call_free(&c);
    c = call(st, HTTP_POST, "/user/new", NULL, "{\"max_budget\":\"lots\"}");
    expect_status(c, 422);
    call_free(&c);

    /* info: row (no password) + keys + teams */
    c = call(st, HTTP_GET, "/user/info", "user_id=u1", NULL);
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "user_info.user_email"), "u1@x.io");
    assert_null(jget(c.j, "user_info.password"));
    assert_int_equal(jlen(c.j, "keys"), 1);
    assert_string_equal(jstr(c.j, "keys.0.team_alias"), "None");
    assert_int_equal(jlen(c.j, "teams"), 0);
    call_free(&c);
    c = call(st, HTTP_GET, "/user/info", "user_id=nobody", NULL);
    expect_status(c, 404);
    assert_string_equal(jstr(c.j, "error.message"), "User nobody not found");
    call_free(&c);
    /* a user key: its own info, not another's */
    c = call_as(st, HTTP_GET, "/user/info", NULL, NULL, "u1", NULL);
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "user_id"), "u1");
    call_free(&c);
    c = call_as(st, HTTP_GET, "/user/info", "user_id=other", NULL, "u1", NULL);
    expect_status(c, 403);
    call_free(&c);

    /* list */
    c = call(st, HTTP_GET, "/user/list", "page=1&page_size=10", NULL);
    expect_status(c, 200);
    assert_int_equal((int)jnum(c.j, "total"), 2);
    assert_int_equal(jlen(c.j, "users"), 2);
    call_free(&c);
    c = call(st, HTTP_GET, "/user/list", "role=internal_user", NULL);
    expect_status(c, 200);
    assert_int_equal((int)jnum(c.j, "total"), 1);
    assert_int_equal((int)jnum(c.j, "users.0.key_count"), 1);
    call_free(&c);
    c = call(st, HTTP_GET, "/user/list", "page_size=1000", NULL);
    expect_status(c, 422);
    call_free(&c);

    /* update */
    c = call(st, HTTP_POST, "/user/update", NULL, "{\"user_id\":\"u1\",\"max_budget\":9,\"user_alias\":\"one\"}");
    expect_status(c, 200);
    assert_true(jnum(c.j, "data.max_budget") == 9);
    assert_string_equal(jstr(c.j, "data.user_alias"), "one");
    assert_string_equal(jstr(c.j, "data.user_email"), "u1@x.io");
    call_free(&c);
    c = call(st, HTTP_POST, "/user/update", NULL, "{\"max_budget\":9}");
    expect_status(c, 422);
    call_free(&c);

    /* delete: unknown id, then the user with its keys */
    c = call(st, HTTP_POST, "/user/delete", NULL, "{\"user_ids\":[\"nope\"]}");
    expect_status(c, 404);
    assert_string_equal(jstr(c.j, "detail.error"), "User not found, passed user_id=nope");
    call_free(&c);
    c = call(st, HTTP_POST, "/user/delete", NULL, "{}");
    expect_status(c, 422);
    call_free(&c);
    c = call(st, HTTP_POST, "/user/delete", NULL, "{\"user_ids\":[\"u1\"]}");
    expect_status(c, 200);
    assert_string_equal(c.text, "1");
    assert_true(has_inval(&c, "user:u1"));
    call_free(&c);
    assert_string_equal(sql1(st, "SELECT COUNT(*) FROM \"LiteLLM_VerificationToken\" WHERE \"user_id\" = $1", "u1").s,
                        "0");
}

/* ---- teams --------------------------------------------------------------- */

static void test_team_round_trip(void **state)
{
    struct sy_store *st = *state;
    struct call c = call(st, HTTP_POST, "/team/new", NULL,
                         "{\"team_id\":\"t1\",\"team_alias\":\"T one\",\"max_budget\":10,\"budget_duration\":\"30d\","
                         "\"models\":[\"gpt-4o\"],\"tags\":[\"a\"],\"members_with_roles\":[{\"role\":\"admin\","
                         "\"user_id\":\"alice\"}]}");
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "team_id"), "t1");
    assert_string_equal(jstr(c.j, "members_with_roles.0.user_id"), "alice");
    assert_string_equal(jstr(c.j, "members_with_roles.0.role"), "admin");
    assert_int_equal(jlen(c.j, "admins"), 0);
    assert_string_equal(jstr(c.j, "metadata.tags.0"), "a");
    assert_non_null(jstr(c.j, "budget_reset_at"));
    assert_true(has_inval(&c, "team:t1"));
    call_free(&c);
    /* alice was created as an internal user with the team */
    assert_string_equal(sql1(st, "SELECT \"teams\" FROM \"LiteLLM_UserTable\" WHERE \"user_id\" = $1", "alice").s,
                        "[\"t1\"]");
    assert_string_equal(sql1(st, "SELECT \"user_role\" FROM \"LiteLLM_UserTable\" WHERE \"user_id\" = $1", "alice").s,
                        "\"internal_user\"");

    c = call(st, HTTP_POST, "/team/new", NULL, "{\"team_id\":\"t1\"}");
    expect_status(c, 400);
    assert_string_equal(jstr(c.j, "error.message"),
                        "{'error': 'Team id = t1 already exists. Please use a different team id.'}");
    call_free(&c);

    /* member_add with a budget: membership row + budget row */
    c = call(st, HTTP_POST, "/team/member_add", NULL,
             "{\"team_id\":\"t1\",\"member\":{\"role\":\"user\",\"user_id\":\"bob\"},\"max_budget_in_team\":2.5}");
    expect_status(c, 200);
    assert_int_equal(jlen(c.j, "members_with_roles"), 2);
    assert_string_equal(jstr(c.j, "updated_users.0.user_id"), "bob");
    assert_string_equal(jstr(c.j, "updated_team_memberships.0.user_id"), "bob");
    assert_true(jnum(c.j, "updated_team_memberships.0.litellm_budget_table.max_budget") == 2.5);
    call_free(&c);
    assert_string_equal(
        sql1(st,
             "SELECT b.\"max_budget\" FROM \"LiteLLM_TeamMembership\" m JOIN \"LiteLLM_BudgetTable\" b ON "
             "b.\"budget_id\" = m.\"budget_id\" WHERE m.\"user_id\" = $1",
             "bob")
            .s,
        "2.5");
    /* again: already in team */
    c = call(st, HTTP_POST, "/team/member_add", NULL,
             "{\"team_id\":\"t1\",\"member\":{\"role\":\"user\",\"user_id\":\"bob\"}}");
    expect_status(c, 400);
    assert_string_equal(jstr(c.j, "error.type"), "team_member_already_in_team");
    call_free(&c);
    c = call(st, HTTP_POST, "/team/member_add", NULL,
             "{\"team_id\":\"nope\",\"member\":{\"role\":\"user\",\"user_id\":\"x\"}}");
    expect_status(c, 404);
    call_free(&c);
    c = call(st, HTTP_POST, "/team/member_add", NULL, "{\"team_id\":\"t1\",\"member\":{\"role\":\"user\"}}");
    expect_status(c, 422);
    call_free(&c);
    /* by email, in a list: a user created with a generated id */
    c = call(st, HTTP_POST, "/team/member_add", NULL,
             "{\"team_id\":\"t1\",\"member\":[{\"role\":\"user\",\"user_email\":\"carol@x.io\"}]}");
    expect_status(c, 200);
    assert_int_equal(jlen(c.j, "members_with_roles"), 3);
    assert_int_equal(strlen(jstr(c.j, "members_with_roles.2.user_id")), 36);
    call_free(&c);

    /* member_update: budget and role */
    c = call(st, HTTP_POST, "/team/member_update", NULL,
             "{\"team_id\":\"t1\",\"user_id\":\"bob\",\"max_budget_in_team\":7,\"role\":\"admin\"}");
    expect_status(c, 200);
    assert_true(jnum(c.j, "max_budget_in_team") == 7);
    call_free(&c);
    assert_string_equal(
        sql1(st,
             "SELECT b.\"max_budget\" FROM \"LiteLLM_TeamMembership\" m JOIN \"LiteLLM_BudgetTable\" b ON "
             "b.\"budget_id\" = m.\"budget_id\" WHERE m.\"user_id\" = $1",
             "bob")
            .s,
        "7.0");

    /* info: team_info, keys, memberships */
    c = call(st, HTTP_GET, "/team/info", "team_id=t1", NULL);
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "team_info.team_alias"), "T one");
    assert_string_equal(jstr(c.j, "team_info.members_with_roles.1.role"), "admin");
    assert_int_equal(jlen(c.j, "team_memberships"), 1);
    call_free(&c);
    c = call(st, HTTP_GET, "/team/info", "team_id=zzz", NULL);
    expect_status(c, 404);
    call_free(&c);
    c = call_as(st, HTTP_GET, "/team/info", "team_id=t1", NULL, "bob", NULL);
    expect_status(c, 200);
    call_free(&c);
    c = call_as(st, HTTP_GET, "/team/info", "team_id=t1", NULL, "mallory", NULL);
    expect_status(c, 403);
    call_free(&c);

    /* list, filtered by member */
    c = call(st, HTTP_GET, "/team/list", "user_id=bob", NULL);
    expect_status(c, 200);
    assert_int_equal(jlen(c.j, ""), 1);
    call_free(&c);

    /* update, block */
    c = call(st, HTTP_POST, "/team/update", NULL, "{\"team_id\":\"t1\",\"rpm_limit\":60}");
    expect_status(c, 200);
    assert_int_equal((int)jnum(c.j, "data.rpm_limit"), 60);
    assert_true(jnum(c.j, "data.max_budget") == 10);
    call_free(&c);
    c = call(st, HTTP_POST, "/team/update", NULL, "{\"team_id\":\"zzz\"}");
    expect_status(c, 404);
    call_free(&c);
    c = call(st, HTTP_POST, "/team/block", NULL, "{\"team_id\":\"t1\"}");
    expect_status(c, 200);
    assert_true(json_object_get_boolean(jget(c.j, "blocked")));
    call_free(&c);
    c = call(st, HTTP_POST, "/team/unblock", NULL, "{\"team_id\":\"zzz\"}");
    expect_status(c, 404);
    call_free(&c);

    /* member_delete: out of the team, the user's teams, the membership */
    c = call(st, HTTP_POST, "/team/member_delete", NULL, "{\"team_id\":\"t1\",\"user_id\":\"bob\"}");
    expect_status(c, 200);
    assert_int_equal(jlen(c.j, "members_with_roles"), 2);
    call_free(&c);
    assert_string_equal(sql1(st, "SELECT \"teams\" FROM \"LiteLLM_UserTable\" WHERE \"user_id\" = $1", "bob").s, "[]");
    assert_string_equal(sql1(st, "SELECT COUNT(*) FROM \"LiteLLM_TeamMembership\" WHERE \"user_id\" = $1", "bob").s,
                        "0");
    c = call(st, HTTP_POST, "/team/member_delete", NULL, "{\"team_id\":\"t1\",\"user_id\":\"bob\"}");
    expect_status(c, 400);
    assert_string_equal(jstr(c.j, "detail.error"), "User not found in team");
    call_free(&c);

    /* delete: keys of the team go too */
    sql1(st,
         "INSERT INTO \"LiteLLM_VerificationToken\" (\"token\", \"team_id\", \"spend\") VALUES ('tok-t1', $1, 0) "
         "RETURNING \"token\"",
         "t1");
    c = call(st, HTTP_POST, "/team/delete", NULL, "{\"team_ids\":[\"zzz\"]}");
    expect_status(c, 404);
    call_free(&c);
    c = call(st, HTTP_POST, "/team/delete", NULL, "{\"team_ids\":[\"t1\"]}");
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "deleted_teams.0"), "t1");
    call_free(&c);
    assert_string_equal(sql1(st, "SELECT COUNT(*) FROM \"LiteLLM_VerificationToken\" WHERE \"team_id\" = $1", "t1").s,
                        "0");
    assert_string_equal(sql1(st, "SELECT \"teams\" FROM \"LiteLLM_UserTable\" WHERE \"user_id\" = $1", "alice").s,
                        "[]");
}

/* ---- customers ----------------------------------------------------------- */

static void test_customer_round_trip(void **state)
{
    struct sy_store *st = *state;
    struct call c = call(st, HTTP_POST, "/customer/new", NULL,
                         "{\"user_id\":\"c1\",\"alias\":\"C\",\"max_budget\":3,\"budget_duration\":\"1d\","
                         "\"allowed_model_region\":\"eu\"}");
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "user_id"), "c1");
    assert_true(jnum(c.j, "litellm_budget_table.max_budget") == 3);
    assert_string_equal(jstr(c.j, "litellm_budget_table.budget_duration"), "1d");
    assert_non_null(jstr(c.j, "budget_id"));
    assert_true(has_inval(&c, "end_user:c1"));
    call_free(&c);
    assert_string_equal(
        sql1(
            st,
            "SELECT b.\"max_budget\" FROM \"LiteLLM_EndUserTable\" e JOIN \"LiteLLM_BudgetTable\" b ON b.\"budget_id\" "
            "= e.\"budget_id\" WHERE e.\"user_id\" = $1",
            "c1")
            .s,
        "3.0");
    c = call(st, HTTP_POST, "/customer/new", NULL, "{\"user_id\":\"c1\"}");
    expect_status(c, 400);
    assert_string_equal(jstr(c.j, "error.message"),
                        "Customer already exists, passed user_id=c1. Please pass a new user_id.");
    call_free(&c);
    c = call(st, HTTP_POST, "/end_user/new", NULL, "{\"alias\":\"x\"}");
    expect_status(c, 422);
    call_free(&c);
    c = call(st, HTTP_POST, "/customer/new", NULL, "{\"user_id\":\"c9\",\"max_budget\":1,\"budget_id\":\"b\"}");
    expect_status(c, 422);
    call_free(&c);

    c = call(st, HTTP_POST, "/customer/update", NULL, "{\"user_id\":\"c1\",\"max_budget\":4,\"alias\":\"CC\"}");
    expect_status(c, 200);
    assert_true(jnum(c.j, "litellm_budget_table.max_budget") == 4);
    assert_string_equal(jstr(c.j, "alias"), "CC");
    call_free(&c);
    c = call(st, HTTP_POST, "/customer/update", NULL, "{\"user_id\":\"nope\"}");
    expect_status(c, 404);
    call_free(&c);

    c = call(st, HTTP_GET, "/customer/info", "end_user_id=c1", NULL);
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "alias"), "CC");
    assert_null(jget(c.j, "default_model")); /* exclude_none */
    call_free(&c);
    c = call(st, HTTP_GET, "/customer/info", "end_user_id=zz", NULL);
    expect_status(c, 404);
    assert_string_equal(jstr(c.j, "error.type"), "not_found");
    call_free(&c);

    c = call(st, HTTP_POST, "/customer/block", NULL, "{\"user_ids\":[\"c1\",\"c2\"]}");
    expect_status(c, 200);
    assert_int_equal(jlen(c.j, "blocked_users"), 2);
    call_free(&c);
    assert_string_equal(sql1(st, "SELECT \"blocked\" FROM \"LiteLLM_EndUserTable\" WHERE \"user_id\" = $1", "c2").s,
                        "true");
    c = call(st, HTTP_POST, "/customer/unblock", NULL, "{\"user_ids\":[\"c1\"]}");
    expect_status(c, 200);
    call_free(&c);
    assert_string_equal(sql1(st, "SELECT \"blocked\" FROM \"LiteLLM_EndUserTable\" WHERE \"user_id\" = $1", "c1").s,
                        "false");

    c = call(st, HTTP_GET, "/customer/list", NULL, NULL);
    expect_status(c, 200);
    assert_int_equal(jlen(c.j, ""), 2);
    call_free(&c);

    c = call(st, HTTP_POST, "/customer/delete", NULL, "{\"user_ids\":[\"c1\",\"zz\"]}");
    expect_status(c, 404);
    assert_string_equal(jstr(c.j, "error.message"), "End User Id(s)=zz do not exist in db");
    call_free(&c);
    c = call(st, HTTP_POST, "/customer/delete", NULL, "{\"user_ids\":[\"c1\",\"c2\"]}");
    expect_status(c, 200);
    assert_int_equal((int)jnum(c.j, "deleted_customers"), 2);
    assert_string_equal(jstr(c.j, "message"), "Successfully deleted customers with ids: ['c1', 'c2']");
    call_free(&c);
}

/* ---- organizations and budgets ------------------------------------------- */

static void test_org_round_trip(void **state)
{
    struct sy_store *st = *state;
    struct call c = call(st, HTTP_POST, "/organization/new", NULL,
                         "{\"organization_alias\":\"acme\",\"models\":[\"m1\"],\"max_budget\":100,\"tpm_limit\":1000}");
    expect_status(c, 200);
    const char *oid = jstr(c.j, "organization_id");
    char id[64];
    snprintf(id, sizeof id, "%s", oid);
    assert_string_equal(jstr(c.j, "created_by"), "default_user_id");
    assert_non_null(jstr(c.j, "budget_id"));
    call_free(&c);
    c = call(st, HTTP_POST, "/organization/new", NULL, "{\"models\":[]}");
    expect_status(c, 422);
    call_free(&c);

    char q[128];
    snprintf(q, sizeof q, "organization_id=%s", id);
    c = call(st, HTTP_GET, "/organization/info", q, NULL);
    expect_status(c, 200);
    assert_true(jnum(c.j, "litellm_budget_table.max_budget") == 100);
    assert_int_equal((int)jnum(c.j, "litellm_budget_table.tpm_limit"), 1000);
    call_free(&c);
    c = call(st, HTTP_GET, "/organization/info", "organization_id=none", NULL);
    expect_status(c, 404);
    call_free(&c);

    char body[256];
    snprintf(body, sizeof body, "{\"organization_id\":\"%s\",\"member\":{\"role\":\"org_admin\",\"user_id\":\"ou\"}}",
             id);
    c = call(st, HTTP_POST, "/organization/member_add", NULL, body);
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "updated_organization_memberships.0.user_role"), "org_admin");
    call_free(&c);

    snprintf(body, sizeof body, "{\"organization_id\":\"%s\",\"max_budget\":50,\"organization_alias\":\"acme2\"}", id);
    c = call(st, HTTP_PATCH, "/organization/update", NULL, body);
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "organization_alias"), "acme2");
    assert_true(jnum(c.j, "litellm_budget_table.max_budget") == 50);
    assert_int_equal(jlen(c.j, "members"), 1);
    call_free(&c);

    c = call(st, HTTP_GET, "/organization/list", NULL, NULL);
    expect_status(c, 200);
    assert_int_equal(jlen(c.j, ""), 1);
    call_free(&c);

    snprintf(body, sizeof body, "{\"organization_ids\":[\"%s\"]}", id);
    c = call(st, HTTP_DELETE, "/organization/delete", NULL, body);
    expect_status(c, 200);
    assert_int_equal(jlen(c.j, ""), 1);
    call_free(&c);
    c = call(st, HTTP_DELETE, "/organization/delete", NULL, body);
    expect_status(c, 404);
    call_free(&c);
}

static void test_budget_round_trip(void **state)
{
    struct sy_store *st = *state;
    struct call c = call(st, HTTP_POST, "/budget/new", NULL,
                         "{\"budget_id\":\"gold\",\"max_budget\":10,\"rpm_limit\":5,\"budget_duration\":\"30d\"}");
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "budget_id"), "gold");
    assert_non_null(jstr(c.j, "budget_reset_at"));
    assert_string_equal(jstr(c.j, "created_by"), "default_user_id");
    call_free(&c);
    c = call(st, HTTP_POST, "/budget/new", NULL, "{\"budget_id\":\"gold\"}");
    expect_status(c, 400);
    assert_string_equal(jstr(c.j, "detail.error"), "Budget with id 'gold' already exists.");
    call_free(&c);
    c = call(st, HTTP_POST, "/budget/new", NULL, "{\"max_budget\":-1}");
    expect_status(c, 400);
    call_free(&c);

    c = call(st, HTTP_POST, "/budget/update", NULL, "{\"budget_id\":\"gold\",\"max_budget\":20}");
    expect_status(c, 200);
    assert_true(jnum(c.j, "max_budget") == 20);
    assert_int_equal((int)jnum(c.j, "rpm_limit"), 5);
    call_free(&c);
    c = call(st, HTTP_POST, "/budget/update", NULL, "{\"max_budget\":20}");
    expect_status(c, 400);
    call_free(&c);

    c = call(st, HTTP_POST, "/budget/info", NULL, "{\"budgets\":[\"gold\",\"x\"]}");
    expect_status(c, 200);
    assert_int_equal(jlen(c.j, ""), 1);
    call_free(&c);
    c = call(st, HTTP_POST, "/budget/info", NULL, "{\"budgets\":[]}");
    expect_status(c, 400);
    call_free(&c);
    c = call(st, HTTP_GET, "/budget/list", NULL, NULL);
    expect_status(c, 200);
    assert_int_equal(jlen(c.j, ""), 1);
    call_free(&c);
    c = call(st, HTTP_GET, "/budget/settings", "budget_id=gold", NULL);
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "0.field_name"), "max_budget");
    assert_true(jnum(c.j, "0.field_value") == 20);
    call_free(&c);
    c = call(st, HTTP_POST, "/budget/delete", NULL, "{\"id\":\"gold\"}");
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "budget_id"), "gold");
    assert_true(has_inval(&c, "all"));
    call_free(&c);
    c = call(st, HTTP_POST, "/budget/delete", NULL, "{\"id\":\"gold\"}");
    expect_status(c, 200);
    assert_string_equal(c.text, "null");
    call_free(&c);
}

/* /user/new with teams joins them; /user/delete takes the user out of them */
static void test_user_teams(void **state)
{
    struct sy_store *st = *state;
    struct call c = call(st, HTTP_POST, "/team/new", NULL, "{\"team_id\":\"tt\"}");
    expect_status(c, 200);
    call_free(&c);
    c = call(st, HTTP_POST, "/user/new", NULL,
             "{\"user_id\":\"m\",\"teams\":[\"tt\",{\"team_id\":\"missing\"}],\"auto_create_key\":false}");
    expect_status(c, 200);
    call_free(&c);
    c = call(st, HTTP_GET, "/user/info", "user_id=m", NULL);
    expect_status(c, 200);
    assert_int_equal(jlen(c.j, "teams"), 1);
    assert_string_equal(jstr(c.j, "teams.0.team_id"), "tt");
    call_free(&c);
    c = call(st, HTTP_POST, "/user/delete", NULL, "{\"user_ids\":[\"m\"]}");
    expect_status(c, 200);
    assert_true(has_inval(&c, "team:tt"));
    call_free(&c);
    c = call(st, HTTP_GET, "/team/info", "team_id=tt", NULL);
    expect_status(c, 200);
    assert_int_equal(jlen(c.j, "team_info.members_with_roles"), 0);
    call_free(&c);
}

/* object_permission on teams and organizations: made on new, the fields
 * given changed on update (an entity without one gets one), shown by info. */
static void test_object_permissions(void **state)
{
    struct sy_store *st = *state;
    struct call c = call(st, HTTP_POST, "/team/new", NULL,
                         "{\"team_id\":\"tp\",\"object_permission\":{\"mcp_servers\":[\"github\"],"
                         "\"mcp_tool_permissions\":{\"github\":[\"search\"]}}}");
    expect_status(c, 200);
    char opid[128];
    snprintf(opid, sizeof opid, "%s", jstr(c.j, "object_permission_id") ? jstr(c.j, "object_permission_id") : "");
    assert_true(opid[0]);
    assert_string_equal(jstr(c.j, "object_permission.object_permission_id"), opid);
    assert_string_equal(jstr(c.j, "object_permission.mcp_servers.0"), "github");
    call_free(&c);
    c = call(st, HTTP_POST, "/team/update", NULL,
             "{\"team_id\":\"tp\",\"object_permission\":{\"mcp_access_groups\":[\"dev\"]}}");
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "data.object_permission.object_permission_id"), opid);
    assert_string_equal(jstr(c.j, "data.object_permission.mcp_servers.0"), "github");
    assert_string_equal(jstr(c.j, "data.object_permission.mcp_access_groups.0"), "dev");
    assert_true(has_inval(&c, "team:tp"));
    call_free(&c);
    c = call(st, HTTP_GET, "/team/info", "team_id=tp", NULL);
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "team_info.object_permission.mcp_access_groups.0"), "dev");
    assert_string_equal(jstr(c.j, "team_info.object_permission.mcp_tool_permissions.github.0"), "search");
    call_free(&c);
    c = call(st, HTTP_POST, "/team/new", NULL, "{\"team_id\":\"tq\",\"object_permission\":{\"mcp_servers\":[1]}}");
    expect_status(c, 422);
    call_free(&c);

    /* organizations: none at first, one given by update */
    c = call(st, HTTP_POST, "/organization/new", NULL, "{\"organization_alias\":\"o1\",\"organization_id\":\"o1\"}");
    expect_status(c, 200);
    assert_true(json_object_object_get_ex(c.j, "object_permission", NULL)); /* there, and null */
    assert_null(jget(c.j, "object_permission"));
    call_free(&c);
    c = call(st, HTTP_PATCH, "/organization/update", NULL,
             "{\"organization_id\":\"o1\",\"object_permission\":{\"mcp_servers\":[\"jira\"]}}");
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "object_permission.mcp_servers.0"), "jira");
    assert_non_null(jstr(c.j, "object_permission_id"));
    call_free(&c);
    c = call(st, HTTP_GET, "/organization/info", "organization_id=o1", NULL);
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "object_permission.mcp_servers.0"), "jira");
    call_free(&c);
    c = call(st, HTTP_POST, "/organization/new", NULL,
             "{\"organization_alias\":\"o2\",\"object_permission\":{\"mcp_access_groups\":[\"ops\"]}}");
    expect_status(c, 200);
    assert_string_equal(jstr(c.j, "object_permission.mcp_access_groups.0"), "ops");
    call_free(&c);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_user_new_info_list_delete, setup, teardown),
    cmocka_unit_test_setup_teardown(test_team_round_trip, setup, teardown),
    cmocka_unit_test_setup_teardown(test_customer_round_trip, setup, teardown),
    cmocka_unit_test_setup_teardown(test_org_round_trip, setup, teardown),
    cmocka_unit_test_setup_teardown(test_budget_round_trip, setup, teardown),
    cmocka_unit_test_setup_teardown(test_user_teams, setup, teardown),
    cmocka_unit_test_setup_teardown(test_object_permissions, setup, teardown),
};

static char pg_name[64];

static void pg_drop(const char *base)
{
    struct sy_store_conf conf = {.url = base, .connect_timeout_s = 3};
    char err[256], sql[128];
    struct sy_store *st = sy_store_open(&conf, err, sizeof err);
    if (!st)
        return;
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s", pg_name);
    sy_store_exec(st, sql, 0, NULL, NULL, NULL);
    sy_store_close(st);
}

/* A fresh PostgreSQL database with LiteLLM's schema: 0, or -1. */
static int pg_fresh(const char *base)
{
    char *name = pg_name, cmd[2048];
    snprintf(name, sizeof pg_name, "sy_ent_%d", (int)getpid());
    struct sy_store_conf conf = {.url = base, .connect_timeout_s = 3};
    char err[256];
    struct sy_store *st = sy_store_open(&conf, err, sizeof err);
    if (!st)
        return -1;
    snprintf(cmd, sizeof cmd, "DROP DATABASE IF EXISTS %s", name);
    sy_store_exec(st, cmd, 0, NULL, NULL, NULL);
    snprintf(cmd, sizeof cmd, "CREATE DATABASE %s", name);
    int rc = sy_store_exec(st, cmd, 0, NULL, NULL, NULL);
    sy_store_close(st);
    if (rc < 0)
        return -1;
    const char *slash = strrchr(base, '/');
    if (!slash || slash - base < 12)
        return -1;
    snprintf(db_url, sizeof db_url, "%.*s/%s", (int)(slash - base), base, name);
    const char *dir = getenv("SY_TEST_LITELLM_SCHEMA");
    const char *psql =
        access("/usr/lib/postgresql/15/bin/psql", X_OK) == 0 ? "/usr/lib/postgresql/15/bin/psql" : "psql";
    snprintf(cmd, sizeof cmd, "%s -X -q -v ON_ERROR_STOP=1 -d '%s' -f '%s/litellm-schema.sql' >/dev/null", psql, db_url,
             dir && *dir ? dir : SY_LITELLM_SCHEMA_DIR);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    char path[] = "/tmp/sy-entities-XXXXXX";
    const char *tmp = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/sy-entities-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(dir);
    if (fd < 0)
        fd = mkstemp(path), snprintf(dir, sizeof dir, "%s", path);
    close(fd);
    unlink(dir);
    snprintf(db_url, sizeof db_url, "%s", dir);
    int failed = cmocka_run_group_tests_name("entities_sqlite", tests, NULL, NULL);
    unlink(dir);
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", dir);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", dir);
    unlink(wal);

    const char *pg = getenv("SY_TEST_PG_URL");
    if (pg && *pg) {
        if (pg_fresh(pg) == 0) {
            failed += cmocka_run_group_tests_name("entities_postgres", tests, NULL, NULL);
            pg_drop(pg);
        } else {
            fprintf(stderr, "could not make a PostgreSQL database with LiteLLM's schema at %s\n", pg);
            failed++;
        }
    }
    return failed;
}
