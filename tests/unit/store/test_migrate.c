/* test_migrate.c - sy_store_migrate on SQLite: a fresh file gets LiteLLM's
 * tables with the declared types of store.h; running it again changes
 * nothing; an older database (a table missing columns) gets them added
 * without losing rows; the daily tables' unique keys take ON CONFLICT
 * upserts; two connections migrating at once both succeed. (PostgreSQL:
 * test_postgres.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "store/store.h"

static char path[512], url[600];

static void rm_db(void)
{
    char f[600];
    unlink(path);
    snprintf(f, sizeof f, "%s-wal", path);
    unlink(f);
    snprintf(f, sizeof f, "%s-shm", path);
    unlink(f);
}

static struct sy_store *open_db(void)
{
    struct sy_store_conf conf = {.url = url, .busy_timeout_s = 10};
    char err[256];
    struct sy_store *st = sy_store_open(&conf, err, sizeof err);
    if (!st)
        fail_msg("open: %s", err);
    return st;
}

static int fresh(void **state)
{
    rm_db();
    *state = open_db();
    return 0;
}

static int done(void **state)
{
    sy_store_close(*state);
    rm_db();
    return 0;
}

static int cat_rows(void *ud, const struct sy_srow *r)
{
    struct sy_buf *b = ud;
    sy_srow_json(b, r);
    SY_BUF_LIT(b, "\n");
    return 0;
}

static void snapshot(struct sy_store *st, struct sy_buf *b)
{
    sy_buf_reset(b);
    int rc = sy_store_exec(st,
                           "SELECT m.name AS t, p.name AS c, p.type AS ty, p.dflt_value AS d, p.\"notnull\" AS nn, "
                           "p.pk AS pk FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' "
                           "ORDER BY m.name, p.cid",
                           0, NULL, cat_rows, b);
    assert_true(rc > 0);
    rc = sy_store_exec(st, "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name", 0, NULL,
                       cat_rows, b);
    assert_true(rc > 0);
}

static int grab_text(void *ud, const struct sy_srow *r)
{
    snprintf(ud, 256, "%s", r->v[0].s ? r->v[0].s : "(null)");
    return 0;
}

static const char *one(struct sy_store *st, const char *sql, char out[256])
{
    strcpy(out, "(none)");
    if (sy_store_exec(st, sql, 0, NULL, grab_text, out) < 0)
        fail_msg("%s: %s", sql, sy_store_errmsg(st));
    return out;
}

static void fresh_and_idempotent(void **state)
{
    struct sy_store *st = *state;
    assert_int_equal(sy_store_migrate(st), 0);
    const char *tables[] = {"LiteLLM_VerificationToken",
                            "LiteLLM_UserTable",
                            "LiteLLM_TeamTable",
                            "LiteLLM_TeamMembership",
                            "LiteLLM_OrganizationTable",
                            "LiteLLM_OrganizationMembership",
                            "LiteLLM_BudgetTable",
                            "LiteLLM_EndUserTable",
                            "LiteLLM_SpendLogs",
                            "LiteLLM_DailyUserSpend",
                            "LiteLLM_DailyTeamSpend",
                            "LiteLLM_DailyOrganizationSpend",
                            "LiteLLM_DailyEndUserSpend",
                            "LiteLLM_DailyTagSpend",
                            "LiteLLM_DeletedVerificationToken",
                            "LiteLLM_Config",
                            "LiteLLM_ErrorLogs",
                            "LiteLLM_MCPServerTable",
                            "LiteLLM_ObjectPermissionTable",
                            "Switchyard_Meta",
                            NULL};
    char out[256];
    for (int i = 0; tables[i]; i++) {
        struct sy_sval p = sy_sv_text(tables[i]);
        int n =
            sy_store_exec(st, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = $1", 1, &p, NULL, NULL);
        if (n != 1)
            fail_msg("table %s missing", tables[i]);
    }
    assert_string_equal(one(st, "SELECT \"value\" FROM \"Switchyard_Meta\" WHERE \"key\" = 'schema_version'", out),
                        "1");
    /* declared types as store.h's table says */
    struct {
        const char *t, *c, *ty;
    } want[] = {
        {"LiteLLM_VerificationToken", "models", "JSONTEXT"},
        {"LiteLLM_VerificationToken", "metadata", "JSONTEXT"},
        {"LiteLLM_VerificationToken", "spend", "DOUBLE PRECISION"},
        {"LiteLLM_VerificationToken", "expires", "TIMESTAMP"},
        {"LiteLLM_VerificationToken", "blocked", "BOOLEAN"},
        {"LiteLLM_VerificationToken", "tpm_limit", "BIGINT"},
        {"LiteLLM_VerificationToken", "max_parallel_requests", "INTEGER"},
        {"LiteLLM_SpendLogs", "startTime", "TIMESTAMP"},
        {"LiteLLM_SpendLogs", "request_tags", "JSONTEXT"},
        {"LiteLLM_MCPServerTable", "args", "JSONTEXT"},
        {"LiteLLM_MCPServerTable", "allow_all_keys", "BOOLEAN"},
        {"LiteLLM_MCPServerTable", "timeout", "DOUBLE PRECISION"},
        {"LiteLLM_ObjectPermissionTable", "mcp_servers", "JSONTEXT"},
        {"LiteLLM_ObjectPermissionTable", "mcp_tool_permissions", "JSONTEXT"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char sql[300];
        snprintf(sql, sizeof sql, "SELECT type FROM pragma_table_info('%s') WHERE name = '%s'", want[i].t, want[i].c);
        assert_string_equal(one(st, sql, out), want[i].ty);
    }
    assert_string_equal(one(st,
                            "SELECT sql FROM sqlite_master WHERE name = "
                            "'LiteLLM_DailyUserSpend_user_id_date_api_key_model_custom_ll_key'",
                            out),
                        "CREATE UNIQUE INDEX \"LiteLLM_DailyUserSpend_user_id_date_api_key_model_custom_ll_key\" ON "
                        "\"LiteLLM_DailyUserSpend\" (user_id, date, api_key, model, custom_llm_provider, "
                        "mcp_namespaced_tool_name, endpoint)");
    /* LiteLLM's text defaults reach SQLite too: a server row made with its id alone */
    assert_int_equal(
        sy_store_exec(st, "INSERT INTO \"LiteLLM_MCPServerTable\" (server_id) VALUES ('s1')", 0, NULL, NULL, NULL), 1);
    assert_string_equal(one(st,
                            "SELECT transport || '/' || status || '/' || "
                            "CAST(allow_all_keys AS TEXT) || '/' || args FROM \"LiteLLM_MCPServerTable\"",
                            out),
                        "sse/unknown/0/[]");

    struct sy_buf a, b;
    sy_buf_init(&a, 1 << 22);
    sy_buf_init(&b, 1 << 22);
    snapshot(st, &a);
    assert_int_equal(sy_store_migrate(st), 0);
    snapshot(st, &b);
    assert_string_equal(a.p, b.p);
    /* and from another connection */
    struct sy_store *st2 = open_db();
    assert_int_equal(sy_store_migrate(st2), 0);
    sy_store_close(st2);
    snapshot(st, &b);
    assert_string_equal(a.p, b.p);
    sy_buf_free(&a);
    sy_buf_free(&b);
}

struct keyrow {
    int rows;
    char models[128], metadata[128], created[64], team[64];
    enum sy_sv_kind mk, tk, ck, sk, bk;
    double spend;
    int64_t cooldown;
};

static int read_key(void *ud, const struct sy_srow *r)
{
    struct keyrow *k = ud;
    k->rows++;
    const struct sy_sval *m = sy_srow_get(r, "models"), *md = sy_srow_get(r, "metadata"),
                         *c = sy_srow_get(r, "created_at"), *s = sy_srow_get(r, "spend"),
                         *b = sy_srow_get(r, "soft_budget_cooldown");
    k->mk = m->k, k->tk = md->k, k->ck = c->k, k->sk = s->k, k->bk = b->k;
    snprintf(k->models, sizeof k->models, "%s", m->s ? m->s : "(null)");
    snprintf(k->metadata, sizeof k->metadata, "%s", md->s ? md->s : "(null)");
    snprintf(k->created, sizeof k->created, "%s", c->s ? c->s : "(null)");
    snprintf(k->team, sizeof k->team, "%s", sy_srow_text(r, "team_id") ? sy_srow_text(r, "team_id") : "(null)");
    k->spend = sy_srow_num(r, "spend", -1);
    k->cooldown = sy_srow_int(r, "soft_budget_cooldown", -1);
    return 0;
}

static void litellm_rows(void **state)
{
    struct sy_store *st = *state;
    assert_int_equal(sy_store_migrate(st), 0);
    /* a key as the keys module writes it: times passed explicitly */
    struct sy_sval p[] = {sy_sv_text("abc123"), sy_sv_textarr("[\"gpt-4o\",\"claude\"]"), sy_sv_json("{\"k\":\"v\"}"),
                          sy_sv_ts("2026-01-01T00:00:00.000Z"), sy_sv_text("team-1")};
    assert_int_equal(sy_store_exec(st,
                                   "INSERT INTO \"LiteLLM_VerificationToken\" (token, models, metadata, created_at, "
                                   "updated_at, team_id) VALUES ($1, $2, $3, $4, $4, $5)",
                                   5, p, NULL, NULL),
                     1);
    struct keyrow k = {0};
    assert_int_equal(
        sy_store_exec(st, "SELECT * FROM \"LiteLLM_VerificationToken\" WHERE token = $1", 1, p, read_key, &k), 1);
    assert_int_equal(k.mk, SY_SV_JSON);
    assert_string_equal(k.models, "[\"gpt-4o\",\"claude\"]");
    assert_int_equal(k.tk, SY_SV_JSON);
    assert_int_equal(k.ck, SY_SV_TS);
    assert_string_equal(k.created, "2026-01-01T00:00:00.000Z");
    assert_int_equal(k.sk, SY_SV_NUM); /* DEFAULT 0.0 */
    assert_true(k.spend == 0);
    assert_int_equal(k.bk, SY_SV_BOOL); /* DEFAULT false */
    assert_int_equal(k.cooldown, 0);
    /* defaults that are times: ISO text */
    struct sy_sval q = sy_sv_text("def");
    assert_int_equal(
        sy_store_exec(st, "INSERT INTO \"LiteLLM_VerificationToken\" (token) VALUES ($1)", 1, &q, NULL, NULL), 1);
    memset(&k, 0, sizeof k);
    sy_store_exec(st, "SELECT * FROM \"LiteLLM_VerificationToken\" WHERE token = $1", 1, &q, read_key, &k);
    assert_int_equal(k.ck, SY_SV_TS);
    assert_int_equal(strlen(k.created), 24);
    assert_string_equal(k.metadata, "{}");
    assert_int_equal(k.mk, SY_SV_NULL); /* LiteLLM's models has no default */
    /* duplicate key -> conflict */
    assert_int_equal(
        sy_store_exec(st, "INSERT INTO \"LiteLLM_VerificationToken\" (token) VALUES ($1)", 1, &q, NULL, NULL),
        SY_STORE_ECONFLICT);

    /* the daily upsert the spend writer runs */
    const char *up =
        "INSERT INTO \"LiteLLM_DailyUserSpend\" (id, user_id, date, api_key, model, model_group, custom_llm_provider, "
        "mcp_namespaced_tool_name, endpoint, prompt_tokens, completion_tokens, spend, api_requests, "
        "successful_requests, failed_requests, created_at, updated_at) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 1, 1, 0, $13, $13) "
        "ON CONFLICT (user_id, date, api_key, model, custom_llm_provider, mcp_namespaced_tool_name, endpoint) "
        "DO UPDATE SET prompt_tokens = \"LiteLLM_DailyUserSpend\".prompt_tokens + EXCLUDED.prompt_tokens, "
        "completion_tokens = \"LiteLLM_DailyUserSpend\".completion_tokens + EXCLUDED.completion_tokens, "
        "spend = \"LiteLLM_DailyUserSpend\".spend + EXCLUDED.spend, "
        "api_requests = \"LiteLLM_DailyUserSpend\".api_requests + EXCLUDED.api_requests, "
        "updated_at = EXCLUDED.updated_at";
    for (int i = 0; i < 3; i++) {
        char id[32];
        snprintf(id, sizeof id, "id-%d", i);
        struct sy_sval d[] = {sy_sv_text(id),
                              sy_sv_text("u1"),
                              sy_sv_text("2026-01-01"),
                              sy_sv_text("abc123"),
                              sy_sv_text("gpt-4o"),
                              sy_sv_text("gpt-4o"),
                              sy_sv_text("openai"),
                              sy_sv_text(""),
                              sy_sv_text("/chat/completions"),
                              sy_sv_int(10),
                              sy_sv_int(5),
                              sy_sv_num(0.001),
                              sy_sv_ts("2026-01-01T00:00:01.000Z")};
        assert_int_equal(sy_store_exec(st, up, 13, d, NULL, NULL), 1);
    }
    char out[256];
    assert_string_equal(one(st, "SELECT CAST(COUNT(*) AS TEXT) FROM \"LiteLLM_DailyUserSpend\"", out), "1");
    assert_string_equal(
        one(st,
            "SELECT CAST(prompt_tokens AS TEXT) || '/' || CAST(api_requests AS TEXT) FROM \"LiteLLM_DailyUserSpend\"",
            out),
        "30/3");
}

static void older_database(void **state)
{
    struct sy_store *st = *state;
    /* an old key table with two columns and a row */
    assert_true(sy_store_exec(st,
                              "CREATE TABLE \"LiteLLM_VerificationToken\" (token TEXT PRIMARY KEY, spend DOUBLE "
                              "PRECISION NOT NULL DEFAULT 0.0)",
                              0, NULL, NULL, NULL) >= 0);
    assert_int_equal(sy_store_exec(st, "INSERT INTO \"LiteLLM_VerificationToken\" (token, spend) VALUES ('old', 2.5)",
                                   0, NULL, NULL, NULL),
                     1);
    assert_int_equal(sy_store_migrate(st), 0);
    struct keyrow k = {0};
    struct sy_sval q = sy_sv_text("old");
    assert_int_equal(
        sy_store_exec(st, "SELECT * FROM \"LiteLLM_VerificationToken\" WHERE token = $1", 1, &q, read_key, &k), 1);
    assert_true(k.spend == 2.5);
    assert_string_equal(k.metadata, "{}"); /* added NOT NULL DEFAULT '{}' */
    assert_int_equal(k.bk, SY_SV_BOOL);
    assert_int_equal(k.ck, SY_SV_NULL); /* created_at: a time default cannot be added to old rows */
    char out[256];
    assert_string_equal(
        one(st, "SELECT CAST(COUNT(*) AS TEXT) FROM pragma_table_info('LiteLLM_VerificationToken')", out), "44");
    assert_int_equal(sy_store_migrate(st), 0);
}

struct mig {
    int rc;
};

static void *mig_thread(void *arg)
{
    struct mig *m = arg;
    struct sy_store *st = open_db();
    m->rc = sy_store_migrate(st);
    sy_store_close(st);
    return NULL;
}

static void concurrent(void **state)
{
    pthread_t t[3];
    struct mig m[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, mig_thread, &m[i]);
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(m[i].rc, 0);
    }
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/sy-test-migrate-%d.db", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    snprintf(url, sizeof url, "sqlite:///%s", path[0] == '/' ? path + 1 : path);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(fresh_and_idempotent, fresh, done),
        cmocka_unit_test_setup_teardown(litellm_rows, fresh, done),
        cmocka_unit_test_setup_teardown(older_database, fresh, done),
        cmocka_unit_test_setup_teardown(concurrent, fresh, done),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
