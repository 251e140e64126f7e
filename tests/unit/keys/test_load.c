/* test_load.c - keys/load.c against a real database: a key with its team,
 * user, membership (+ budget row) and organization (+ budget row), a key
 * whose budget row fills its NULL limits, a temporary budget increase (live
 * and expired), model_max_budget / model_spend,
 * expires, a personal key, a missing key (found 0), a team that is gone, the
 * team's default member budget, end users with and without a budget row,
 * a database error (no tables) as a negative SY_STORE_E*.
 *
 * Runs on SQLite (a temp file, tables made by sy_store_migrate). With
 * SY_TEST_PG_URL set the same fixtures run on PostgreSQL (a fresh database
 * migrated by switchyard), and LiteLLM's own schema + sample rows
 * (shared/compat/litellm-schema) are loaded with psql into another fresh
 * database and the sample key (sha256 of "sk-test-1234") is loaded with its
 * team and user.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keys/keys.h"
#include "keys/keys_impl.h"
#include "store/store.h"

#define SCHEMA_DIR SY_LITELLM_SCHEMA_DIR

static char suite_url[512];

static struct sy_store *open_url(const char *url)
{
    struct sy_store_conf conf = {.url = url, .connect_timeout_s = 3, .busy_timeout_s = 3};
    char err[256];
    struct sy_store *st = sy_store_open(&conf, err, sizeof err);
    if (!st)
        fail_msg("open %s: %s", url, err);
    return st;
}

static void exec_p(struct sy_store *st, const char *sql, int n, const struct sy_sval *p)
{
    if (sy_store_exec(st, sql, n, p, NULL, NULL) < 0)
        fail_msg("%s: %s", sql, sy_store_errmsg(st));
}

static void budget_row(struct sy_store *st, const char *id, double max, const char *mmb, const char *allowed)
{
    struct sy_sval p[] = {sy_sv_text(id),    max >= 0 ? sy_sv_num(max) : sy_sv_null(),
                          sy_sv_num(0.5),    sy_sv_int(1000),
                          sy_sv_int(10),     sy_sv_json(mmb),
                          sy_sv_text("30d"), sy_sv_textarr(allowed ? allowed : "[]"),
                          sy_sv_int(3)};
    exec_p(st,
           "INSERT INTO \"LiteLLM_BudgetTable\" (budget_id, max_budget, soft_budget, tpm_limit, rpm_limit, "
           "model_max_budget, budget_duration, allowed_models, max_parallel_requests, created_by, updated_by) "
           "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'test', 'test')",
           9, p);
}

/* The fixture: org-1 (budget b-org, 50) > team-1 (100, models [gpt-4o, beta]) > user-1 (internal_user),
 * membership (budget b-mem, 5, allowed_models [gpt-4o]); keys:
 *   K1 team key of user-1, models [], model_max_budget gpt-4o 1.0/1d, model_spend gpt-4o 0.25, expires 2030
 *   K2 key with budget_id b-key (max 7, tpm 1000, rpm 10) and its own max_budget NULL
 *   K3 personal key of user-2 (no team), allowed_routes
 *   K4 key of a team that no longer exists
 *   K5 team-2 key of user-1 (team-2 has metadata.team_member_budget_id = b-def) */
static void fixture(struct sy_store *st)
{
    budget_row(st, "b-org", 50, NULL, NULL);
    budget_row(st, "b-mem", 5, NULL, "[\"gpt-4o\"]");
    budget_row(st, "b-key", 7, "{\"gpt-4o-mini\": {\"budget_limit\": 2, \"time_period\": \"7d\"}}", NULL);
    budget_row(st, "b-def", 3, NULL, NULL);
    budget_row(st, "b-eu", 0.5, NULL, NULL);
    {
        struct sy_sval p[] = {sy_sv_text("org-1"), sy_sv_textarr("[\"gpt-4o\"]"), sy_sv_num(12.5)};
        exec_p(st,
               "INSERT INTO \"LiteLLM_OrganizationTable\" (organization_id, organization_alias, budget_id, models, "
               "spend, metadata, created_by, updated_by) VALUES ($1, 'Org One', 'b-org', $2, $3, '{}', 't', 't')",
               3, p);
    }
    {
        struct sy_sval p[] = {sy_sv_text("team-1"),
                              sy_sv_text("red team"),
                              sy_sv_text("org-1"),
                              sy_sv_json("{\"k\": \"v\"}"),
                              sy_sv_num(100),
                              sy_sv_num(42.5),
                              sy_sv_textarr("[\"gpt-4o\", \"beta\"]"),
                              sy_sv_int(5000),
                              sy_sv_int(50),
                              sy_sv_bool(0),
                              sy_sv_text("1mo"),
                              sy_sv_ts("2031-02-03T04:05:06.000Z")};
        exec_p(st,
               "INSERT INTO \"LiteLLM_TeamTable\" (team_id, team_alias, organization_id, metadata, max_budget, spend, "
               "models, tpm_limit, rpm_limit, blocked, budget_duration, budget_reset_at) "
               "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
               12, p);
    }
    {
        struct sy_sval p[] = {sy_sv_text("team-2"), sy_sv_json("{\"team_member_budget_id\": \"b-def\"}"),
                              sy_sv_bool(1)};
        exec_p(st, "INSERT INTO \"LiteLLM_TeamTable\" (team_id, metadata, spend, blocked) VALUES ($1, $2, 0, $3)", 3,
               p);
    }
    {
        struct sy_sval p[] = {sy_sv_text("user-1"), sy_sv_text("internal_user"), sy_sv_num(20), sy_sv_num(1.5),
                              sy_sv_textarr("[\"gpt-3.5\"]")};
        exec_p(st,
               "INSERT INTO \"LiteLLM_UserTable\" (user_id, user_role, max_budget, spend, models) "
               "VALUES ($1, $2, $3, $4, $5)",
               5, p);
        struct sy_sval q[] = {sy_sv_text("user-2"), sy_sv_text("proxy_admin")};
        exec_p(st, "INSERT INTO \"LiteLLM_UserTable\" (user_id, user_role, spend) VALUES ($1, $2, 0)", 2, q);
    }
    {
        struct sy_sval p[] = {sy_sv_text("user-1"), sy_sv_text("team-1"), sy_sv_num(0.75), sy_sv_text("b-mem")};
        exec_p(st,
               "INSERT INTO \"LiteLLM_TeamMembership\" (user_id, team_id, spend, budget_id) VALUES ($1, $2, $3, $4)", 4,
               p);
    }
    char k[65];
    sy_keys_hash("sk-K1", 5, k);
    {
        struct sy_sval p[] = {sy_sv_text(k),
                              sy_sv_text("sk-...K1"),
                              sy_sv_text("k-one"),
                              sy_sv_num(0.5),
                              sy_sv_ts("2030-01-01T00:00:00.000Z"),
                              sy_sv_textarr("[]"),
                              sy_sv_text("user-1"),
                              sy_sv_text("team-1"),
                              sy_sv_json("{\"tags\": [\"a\"], \"temp_budget_increase\": 3, "
                                         "\"temp_budget_expiry\": \"2099-01-01T00:00:00\"}"),
                              sy_sv_num(2),
                              sy_sv_json("{\"gpt-4o\": {\"budget_limit\": 1.0, \"time_period\": \"1d\"}}"),
                              sy_sv_json("{\"gpt-4o\": 0.25}"),
                              sy_sv_int(7)};
        exec_p(st,
               "INSERT INTO \"LiteLLM_VerificationToken\" (token, key_name, key_alias, spend, expires, models, "
               "user_id, team_id, metadata, max_budget, model_max_budget, model_spend, tpm_limit) "
               "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
               13, p);
    }
    sy_keys_hash("sk-K2", 5, k);
    {
        struct sy_sval p[] = {sy_sv_text(k), sy_sv_text("b-key"), sy_sv_int(99),
                              sy_sv_json("{\"temp_budget_increase\": 3, \"temp_budget_expiry\": \"2001-01-01\"}")};
        exec_p(st,
               "INSERT INTO \"LiteLLM_VerificationToken\" (token, budget_id, rpm_limit, spend, metadata) "
               "VALUES ($1, $2, $3, 0, $4)",
               4, p);
    }
    sy_keys_hash("sk-K3", 5, k);
    {
        struct sy_sval p[] = {sy_sv_text(k), sy_sv_text("user-2"),
                              sy_sv_textarr("[\"/chat/completions\", \"llm_api_routes\"]"), sy_sv_bool(1)};
        exec_p(st,
               "INSERT INTO \"LiteLLM_VerificationToken\" (token, user_id, allowed_routes, blocked, spend) "
               "VALUES ($1, $2, $3, $4, 0)",
               4, p);
    }
    sy_keys_hash("sk-K4", 5, k);
    {
        struct sy_sval p[] = {sy_sv_text(k), sy_sv_text("team-gone")};
        exec_p(st, "INSERT INTO \"LiteLLM_VerificationToken\" (token, team_id, spend) VALUES ($1, $2, 0)", 2, p);
    }
    sy_keys_hash("sk-K5", 5, k);
    {
        struct sy_sval p[] = {sy_sv_text(k), sy_sv_text("team-2"), sy_sv_text("user-1")};
        exec_p(st, "INSERT INTO \"LiteLLM_VerificationToken\" (token, team_id, user_id, spend) VALUES ($1, $2, $3, 0)",
               3, p);
    }
    {
        struct sy_sval p[] = {sy_sv_text("cust-1"), sy_sv_text("Customer"), sy_sv_num(0.1),
                              sy_sv_text("b-eu"),   sy_sv_text("eu"),       sy_sv_text("gpt-4o")};
        exec_p(st,
               "INSERT INTO \"LiteLLM_EndUserTable\" (user_id, alias, spend, budget_id, allowed_model_region, "
               "default_model, blocked) VALUES ($1, $2, $3, $4, $5, $6, false)",
               6, p);
        struct sy_sval q[] = {sy_sv_text("cust-2"), sy_sv_bool(1)};
        exec_p(st, "INSERT INTO \"LiteLLM_EndUserTable\" (user_id, spend, blocked) VALUES ($1, 0, $2)", 2, q);
    }
}

static struct sy_keyinfo *load(struct sy_store *st, const char *key)
{
    char t[65];
    sy_keys_hash(key, strlen(key), t);
    struct sy_keyinfo *ki = NULL;
    int rc = sy_keys_load(st, t, &ki);
    if (rc != 0)
        fail_msg("load %s: %d %s", key, rc, sy_store_errmsg(st));
    assert_non_null(ki);
    assert_string_equal(ki->token, t);
    assert_int_equal(atomic_load(&ki->refs), 1);
    return ki;
}

static int setup(void **state)
{
    struct sy_store *st = open_url(suite_url);
    if (sy_store_migrate(st) != 0)
        fail_msg("migrate: %s", sy_store_errmsg(st));
    static const char *const tables[] = {
        "LiteLLM_VerificationToken", "LiteLLM_TeamTable",   "LiteLLM_UserTable",   "LiteLLM_TeamMembership",
        "LiteLLM_OrganizationTable", "LiteLLM_BudgetTable", "LiteLLM_EndUserTable"};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "DELETE FROM \"%s\"", tables[i]);
        exec_p(st, sql, 0, NULL);
    }
    fixture(st);
    *state = st;
    return 0;
}

static int teardown(void **state)
{
    sy_store_close(*state);
    return 0;
}

static void test_team_key(void **state)
{
    struct sy_store *st = *state;
    struct sy_keyinfo *ki = load(st, "sk-K1");
    assert_int_equal(ki->found, 1);
    assert_true(ki->loaded_at > 0 && ki->loaded_at <= sy_keys_now());
    assert_string_equal(ki->key_name, "sk-...K1");
    assert_string_equal(ki->key_alias, "k-one");
    assert_string_equal(ki->user_id, "user-1");
    assert_string_equal(ki->team_id, "team-1");
    assert_string_equal(ki->org_id, "org-1"); /* from the team */
    assert_int_equal(ki->role, SY_ROLE_INTERNAL_USER);
    assert_int_equal(ki->blocked, 0);
    assert_true(fabs(ki->expires - 1893456000.0) < 0.001);
    assert_int_equal(ki->nmodels, 0);
    assert_null(ki->models);
    assert_int_equal(ki->nallowed_routes, 0);
    assert_string_equal(ki->key.id, ki->token);
    assert_true(atomic_load(&ki->key.spend) == 0.5);
    assert_true(ki->key.max_budget == 5); /* 2 + a live temp_budget_increase of 3 */
    assert_int_equal(ki->key.tpm_limit, 7);
    assert_int_equal(ki->key.rpm_limit, -1);
    assert_non_null(ki->key.metadata);
    assert_non_null(strstr(ki->key.metadata, "tags"));
    assert_int_equal(ki->nmmb, 1);
    assert_string_equal(ki->mmb[0].model, "gpt-4o");
    assert_true(ki->mmb[0].max_budget == 1.0);
    assert_string_equal(ki->mmb[0].budget_duration, "1d");
    assert_true(ki->mmb[0].spend == 0.25);

    assert_non_null(ki->team);
    assert_string_equal(ki->team->id, "team-1");
    assert_string_equal(ki->team_alias, "red team");
    assert_true(ki->team->max_budget == 100);
    assert_true(atomic_load(&ki->team->spend) == 42.5);
    assert_int_equal(ki->team->nmodels, 2);
    assert_string_equal(ki->team->models[0], "gpt-4o");
    assert_string_equal(ki->team->models[1], "beta");
    assert_int_equal(ki->team->tpm_limit, 5000);
    assert_int_equal(ki->team->rpm_limit, 50);
    assert_int_equal(ki->team->blocked, 0);
    assert_string_equal(ki->team->budget_duration, "1mo");
    assert_true(fabs(ki->team->budget_reset_at - 1927857906.0) < 0.001);
    assert_non_null(strstr(ki->team->metadata, "\"k\""));

    assert_non_null(ki->user);
    assert_string_equal(ki->user->id, "user-1");
    assert_true(ki->user->max_budget == 20);
    assert_true(atomic_load(&ki->user->spend) == 1.5);
    assert_int_equal(ki->user->nmodels, 1);

    assert_non_null(ki->member);
    assert_string_equal(ki->member->id, "team-1:user-1");
    assert_true(atomic_load(&ki->member->spend) == 0.75);
    assert_true(ki->member->max_budget == 5);
    assert_int_equal(ki->member->nmodels, 1);
    assert_string_equal(ki->member->models[0], "gpt-4o");
    assert_int_equal(ki->member->tpm_limit, 1000);

    assert_non_null(ki->org);
    assert_string_equal(ki->org->id, "org-1");
    assert_true(ki->org->max_budget == 50);
    assert_true(atomic_load(&ki->org->spend) == 12.5);
    assert_int_equal(ki->org->nmodels, 1);
    assert_int_equal(ki->org->max_parallel, 3);

    /* and the checks read it */
    struct sy_check_err e;
    assert_int_equal(sy_keys_check_key(ki, "/chat/completions", 1.8e9, &e), 0);
    assert_int_equal(sy_keys_check_key(ki, "/chat/completions", 1.9e9, &e), 400);
    assert_int_equal(sy_keys_check_model(ki, "gpt-4o", NULL, NULL, &e), 0);
    assert_int_equal(sy_keys_check_model(ki, "beta", NULL, NULL, &e), 401); /* member scope: gpt-4o only */
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "gpt-4o", &e), 0);
    sy_keys_add_spend(ki, NULL, "gpt-4o", 0.75);
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "gpt-4o", &e), 400);
    char want[256];
    snprintf(want, sizeof want, "LiteLLM Virtual Key: %s, key_alias: k-one, exceeded budget for model=gpt-4o",
             ki->token);
    assert_string_equal(e.message, want);
    sy_keyinfo_unref(ki);
}

static void test_budget_fill_and_personal(void **state)
{
    struct sy_store *st = *state;
    struct sy_keyinfo *ki = load(st, "sk-K2");
    assert_int_equal(ki->found, 1);
    assert_true(ki->key.max_budget == 7); /* from b-key: the key's own is NULL; the temp increase expired */
    assert_true(ki->key.soft_budget == 0.5);
    assert_int_equal(ki->key.tpm_limit, 1000);
    assert_int_equal(ki->key.rpm_limit, 99); /* the key's own wins */
    assert_int_equal(ki->nmmb, 1);
    assert_string_equal(ki->mmb[0].model, "gpt-4o-mini");
    assert_true(ki->mmb[0].max_budget == 2);
    assert_true(ki->mmb[0].spend == 0);
    assert_null(ki->team);
    assert_null(ki->user);
    assert_null(ki->member);
    assert_null(ki->org);
    assert_int_equal(ki->role, SY_ROLE_NONE);
    assert_true(ki->expires == 0);
    sy_keyinfo_unref(ki);

    ki = load(st, "sk-K3");
    assert_int_equal(ki->blocked, 1);
    assert_int_equal(ki->role, SY_ROLE_PROXY_ADMIN);
    assert_non_null(ki->user);
    assert_true(ki->user->max_budget < 0);
    assert_null(ki->team);
    assert_null(ki->member);
    assert_int_equal(ki->nallowed_routes, 2);
    assert_string_equal(ki->allowed_routes[1], "llm_api_routes");
    sy_keyinfo_unref(ki);

    ki = load(st, "sk-K4");
    assert_int_equal(ki->found, 1);
    assert_string_equal(ki->team_id, "team-gone");
    assert_null(ki->team);
    sy_keyinfo_unref(ki);

    ki = load(st, "sk-K5"); /* team-2's default member budget */
    assert_non_null(ki->team);
    assert_int_equal(ki->team->blocked, 1);
    assert_non_null(ki->member);
    assert_true(ki->member->max_budget == 3);
    assert_true(atomic_load(&ki->member->spend) == 0);
    assert_null(ki->org);
    sy_keyinfo_unref(ki);
}

/* The key's, its team's and its org's object permissions come with their
 * rows; none (NULL) when the id is NULL or names no row. */
static void test_object_permissions(void **state)
{
    struct sy_store *st = *state;
    struct sy_sval p[] = {sy_sv_text("op-k"), sy_sv_textarr("[\"github\", \"no-mcp-servers\"]"),
                          sy_sv_textarr("[\"dev\"]"), sy_sv_json("{\"github\": [\"search\"]}")};
    exec_p(st,
           "INSERT INTO \"LiteLLM_ObjectPermissionTable\" (object_permission_id, mcp_servers, mcp_access_groups, "
           "mcp_tool_permissions) VALUES ($1, $2, $3, $4)",
           4, p);
    struct sy_sval q[] = {sy_sv_text("op-t"), sy_sv_textarr("[\"jira\"]")};
    exec_p(st, "INSERT INTO \"LiteLLM_ObjectPermissionTable\" (object_permission_id, mcp_servers) VALUES ($1, $2)", 2,
           q);
    exec_p(st, "INSERT INTO \"LiteLLM_ObjectPermissionTable\" (object_permission_id) VALUES ('op-o')", 0, NULL);
    exec_p(st, "UPDATE \"LiteLLM_TeamTable\" SET object_permission_id = 'op-t' WHERE team_id = 'team-1'", 0, NULL);
    exec_p(st, "UPDATE \"LiteLLM_OrganizationTable\" SET object_permission_id = 'op-o' WHERE organization_id = 'org-1'",
           0, NULL);
    char tok[65];
    sy_keys_hash("sk-K1", 5, tok);
    struct sy_sval t = sy_sv_text(tok);
    exec_p(st, "UPDATE \"LiteLLM_VerificationToken\" SET object_permission_id = 'op-k' WHERE token = $1", 1, &t);

    struct sy_keyinfo *ki = load(st, "sk-K1");
    assert_non_null(ki->perm);
    assert_int_equal(ki->perm->nmcp_servers, 2);
    assert_string_equal(ki->perm->mcp_servers[0], "github");
    assert_string_equal(ki->perm->mcp_servers[1], "no-mcp-servers");
    assert_int_equal(ki->perm->nmcp_access_groups, 1);
    assert_string_equal(ki->perm->mcp_access_groups[0], "dev");
    assert_non_null(ki->perm->mcp_tool_permissions);
    assert_non_null(strstr(ki->perm->mcp_tool_permissions, "search"));
    assert_non_null(ki->team_perm);
    assert_int_equal(ki->team_perm->nmcp_servers, 1);
    assert_string_equal(ki->team_perm->mcp_servers[0], "jira");
    assert_null(ki->team_perm->mcp_tool_permissions);
    assert_non_null(ki->org_perm); /* a row with nothing in it */
    assert_int_equal(ki->org_perm->nmcp_servers, 0);
    assert_null(ki->org_perm->mcp_servers);
    /* the team's models are still the team's, not the permission row's */
    assert_int_equal(ki->team->nmodels, 2);
    sy_keyinfo_unref(ki);

    /* an id that names no row: no permission, the key still loads */
    exec_p(st, "UPDATE \"LiteLLM_VerificationToken\" SET object_permission_id = 'gone' WHERE token = $1", 1, &t);
    exec_p(st, "UPDATE \"LiteLLM_TeamTable\" SET object_permission_id = NULL WHERE team_id = 'team-1'", 0, NULL);
    ki = load(st, "sk-K1");
    assert_int_equal(ki->found, 1);
    assert_null(ki->perm);
    assert_null(ki->team_perm);
    assert_non_null(ki->org_perm);
    sy_keyinfo_unref(ki);
}

static void test_missing(void **state)
{
    struct sy_store *st = *state;
    struct sy_keyinfo *ki = load(st, "sk-nope");
    assert_int_equal(ki->found, 0);
    assert_null(ki->user_id);
    assert_true(ki->loaded_at > 0);
    sy_keys_put(ki); /* a negative entry */
    struct sy_keyinfo *g = sy_keys_get(ki->token);
    assert_ptr_equal(g, ki);
    assert_int_equal(g->found, 0);
    sy_keyinfo_unref(g);
    sy_keys_invalidate("all", NULL);
}

static void test_endusers(void **state)
{
    struct sy_store *st = *state;
    struct sy_enduser *eu = NULL;
    assert_int_equal(sy_endusers_load(st, "cust-1", &eu), 0);
    assert_int_equal(eu->found, 1);
    assert_string_equal(eu->b.id, "cust-1");
    assert_string_equal(eu->alias, "Customer");
    assert_string_equal(eu->allowed_model_region, "eu");
    assert_string_equal(eu->default_model, "gpt-4o");
    assert_true(atomic_load(&eu->b.spend) == 0.1);
    assert_true(eu->b.max_budget == 0.5);
    assert_int_equal(eu->b.rpm_limit, 10);
    assert_int_equal(eu->b.blocked, 0);
    sy_enduser_unref(eu);

    assert_int_equal(sy_endusers_load(st, "cust-2", &eu), 0);
    assert_int_equal(eu->found, 1);
    assert_int_equal(eu->b.blocked, 1);
    assert_true(eu->b.max_budget < 0);
    sy_enduser_unref(eu);

    assert_int_equal(sy_endusers_load(st, "nobody", &eu), 0);
    assert_int_equal(eu->found, 0);
    assert_string_equal(eu->b.id, "nobody");
    sy_endusers_put(eu);
    struct sy_enduser *g = sy_endusers_get("nobody");
    assert_ptr_equal(g, eu);
    sy_enduser_unref(g);
    sy_keys_invalidate("all", NULL);
}

static void test_db_error(void **state)
{
    (void)state;
    /* a database without the tables */
    char path[256];
    snprintf(path, sizeof path, "%s/sy_keys_empty_%d.db", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    struct sy_store *st = open_url(path);
    struct sy_keyinfo *ki = (struct sy_keyinfo *)1;
    char t[65];
    sy_keys_hash("sk-x", 4, t);
    int rc = sy_keys_load(st, t, &ki);
    assert_true(rc < 0);
    assert_null(ki);
    struct sy_enduser *eu = (struct sy_enduser *)1;
    assert_true(sy_endusers_load(st, "x", &eu) < 0);
    assert_null(eu);
    sy_store_close(st);
    unlink(path);
}

/* ---- PostgreSQL: LiteLLM's own schema and sample rows ---- */

static int pg_fresh_db(const char *url, const char *name, char *dburl, size_t cap)
{
    struct sy_store *admin = open_url(url);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "DROP DATABASE IF EXISTS %s", name);
    sy_store_exec(admin, cmd, 0, NULL, NULL, NULL);
    snprintf(cmd, sizeof cmd, "CREATE DATABASE %s", name);
    int rc = sy_store_exec(admin, cmd, 0, NULL, NULL, NULL);
    if (rc < 0)
        fail_msg("create database: %s", sy_store_errmsg(admin));
    sy_store_close(admin);
    const char *q = strchr(url, '?');
    const char *end = q ? q : url + strlen(url), *slash = end;
    for (const char *p = end; p > url; p--)
        if (p[-1] == '/') {
            slash = p - 1;
            break;
        }
    snprintf(dburl, cap, "%.*s/%s%s", (int)(slash - url), url, name, q ? q : "");
    return 0;
}

static void pg_drop_db(const char *url, const char *name)
{
    struct sy_store *admin = open_url(url);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "DROP DATABASE IF EXISTS %s", name);
    sy_store_exec(admin, cmd, 0, NULL, NULL, NULL);
    sy_store_close(admin);
}

static void test_pg_litellm_sample(void **state)
{
    (void)state;
    const char *url = getenv("SY_TEST_PG_URL");
    if (!url || !*url)
        skip();
    char name[64], dburl[512], cmd[2048];
    snprintf(name, sizeof name, "sy_keys_sample_%d", (int)getpid());
    pg_fresh_db(url, name, dburl, sizeof dburl);
    /* two runs: the dump leaves search_path empty for the rest of its session */
    static const char *const files[] = {"litellm-schema.sql", "sample-rows.sql"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "psql -q -v ON_ERROR_STOP=1 -d '%s' -f %s/%s >/dev/null 2>&1", dburl, SCHEMA_DIR,
                 files[i]);
        if (system(cmd) != 0)
            fail_msg("loading LiteLLM's schema failed: %s", cmd);
    }
    struct sy_store *st = open_url(dburl);
    struct sy_keyinfo *ki = load(st, "sk-test-1234");
    assert_string_equal(ki->token, "eceadfbb53b79c09477666aa69fb6ac5994e1e25f7f0fe2f3c270c29717de213");
    assert_int_equal(ki->found, 1);
    assert_string_equal(ki->key_name, "sk-...1234");
    assert_string_equal(ki->key_alias, "test-key");
    assert_true(ki->key.max_budget == 1.0);
    assert_int_equal(ki->nmodels, 0);
    assert_int_equal(ki->blocked, 0);
    assert_non_null(ki->team);
    assert_string_equal(ki->team->id, "team-test-1");
    assert_string_equal(ki->team_alias, "test-team");
    assert_true(ki->team->max_budget == 100.0);
    assert_int_equal(ki->team->nmodels, 0);
    assert_non_null(ki->user);
    assert_string_equal(ki->user->id, "user-test-1");
    assert_int_equal(ki->role, SY_ROLE_INTERNAL_USER);
    assert_null(ki->member);
    assert_null(ki->org);
    struct sy_check_err e;
    assert_int_equal(sy_keys_check_key(ki, "/chat/completions", 1.8e9, &e), 0);
    assert_int_equal(sy_keys_check_model(ki, "gpt-4o", NULL, NULL, &e), 0);
    assert_int_equal(sy_keys_check_budgets(ki, NULL, "gpt-4o", &e), 0);
    sy_keyinfo_unref(ki);
    sy_store_close(st);
    pg_drop_db(url, name);
}

static int run_suite(const char *label)
{
    (void)label;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_team_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_budget_fill_and_personal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_object_permissions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_endusers, setup, teardown),
    };
    return cmocka_run_group_tests_name(label, tests, NULL, NULL);
}

int main(void)
{
    int rc = 0;
    char path[256];
    snprintf(path, sizeof path, "%s/sy_keys_load_%d.db", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    unlink(path);
    snprintf(suite_url, sizeof suite_url, "%s", path);
    rc |= run_suite("sqlite");
    unlink(path);
    char wal[300];
    snprintf(wal, sizeof wal, "%s-wal", path);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", path);
    unlink(wal);

    const char *pg = getenv("SY_TEST_PG_URL");
    char name[64];
    snprintf(name, sizeof name, "sy_keys_load_%d", (int)getpid());
    if (pg && *pg) {
        pg_fresh_db(pg, name, suite_url, sizeof suite_url);
        rc |= run_suite("postgres");
        pg_drop_db(pg, name);
    }
    const struct CMUnitTest more[] = {
        cmocka_unit_test(test_db_error),
        cmocka_unit_test(test_pg_litellm_sample),
    };
    rc |= cmocka_run_group_tests_name("other", more, NULL, NULL);
    sy_keys_shutdown();
    return rc;
}
