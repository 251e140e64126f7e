/* test_spend.c - the spend-reporting and model-info routes (admin/spend.c,
 * admin/models.c) against a SQLite store filled with known
 * "LiteLLM_SpendLogs" rows: sums, grouping, date windows, pagination; model
 * info from a config (prices merged, secrets stripped).
 *
 * With SY_TEST_PG_URL set, the summaries also run on PostgreSQL over
 * LiteLLM's own schema (reference fixture litellm-schema.sql + sample-rows.sql,
 * loaded with psql into a fresh database): the fixture's SpendLogs row must
 * show up in /spend/logs.
 *
 * Rows (now = 2026-03-15 12:00 UTC; "last 30 days" starts 2026-02-13):
 *   id  startTime             key  user team model        spend tags      end_user
 *   r1  2026-03-01 10:00      k1   u1   t1   gpt-4o       1.0   [a,b]     e1
 *   r2  2026-03-01 11:00      k1   u1   t1   gpt-4o-mini  0.5   [a]       e1
 *   r3  2026-03-02 09:00      k2   u2   -    gpt-4o       2.0   []        e2
 *   r4  2026-03-03 00:00      k2   u2   -    gpt-4o       4.0   []        e2
 *   r5  2026-03-03 05:00      k1   u1   -    gpt-4o       8.0   []        e1
 *   r6  2026-01-01 00:00      k1   u1   -    gpt-4o      16.0   []        e1
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <http_parser.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin/admin.h"
#include "config/config.h"
#include "gateway/gateway.h"
#include "spend/spend.h"
#include "store/store.h"
#include "tokenizer/tokenizer.h"

#define NOW 1773576000.0 /* 2026-03-15T12:00:00Z */

static struct sy_store *g_st;
static char g_path[256];
static struct sy_gwconf *g_conf;

/* ---- helpers --------------------------------------------------------------- */

static int exec(struct sy_store *st, const char *sql, int n, const struct sy_sval *p)
{
    int rc = sy_store_exec(st, sql, n, p, NULL, NULL);
    if (rc < 0)
        fprintf(stderr, "SQL failed (%d): %s\n  %s\n", rc, sy_store_errmsg(st), sql);
    return rc;
}

static void add_log(struct sy_store *st, const char *id, const char *start, const char *key, const char *user,
                    const char *team, const char *model, double spend, const char *tags, const char *eu)
{
    struct sy_sval p[] = {sy_sv_text(id),    sy_sv_text(key),  sy_sv_num(spend),     sy_sv_int(30),
                          sy_sv_int(10),     sy_sv_int(20),    sy_sv_ts(start),      sy_sv_ts(start),
                          sy_sv_text(model), sy_sv_text(user), sy_sv_json(tags),     sy_sv_text(team),
                          sy_sv_text(eu),    sy_sv_json("{}"), sy_sv_text("success")};
    assert_true(exec(st,
                     "INSERT INTO \"LiteLLM_SpendLogs\" (request_id, call_type, api_key, spend, total_tokens,"
                     " prompt_tokens, completion_tokens, \"startTime\", \"endTime\", model, \"user\", request_tags,"
                     " team_id, end_user, metadata, status)"
                     " VALUES ($1, 'acompletion', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
                     15, p) == 1);
}

static void fill(struct sy_store *st)
{
    add_log(st, "r1", "2026-03-01T10:00:00.000Z", "k1", "u1", "t1", "gpt-4o", 1.0, "[\"a\",\"b\"]", "e1");
    add_log(st, "r2", "2026-03-01T11:00:00.000Z", "k1", "u1", "t1", "gpt-4o-mini", 0.5, "[\"a\"]", "e1");
    add_log(st, "r3", "2026-03-02T09:00:00.000Z", "k2", "u2", NULL, "gpt-4o", 2.0, "[]", "e2");
    add_log(st, "r4", "2026-03-03T00:00:00.000Z", "k2", "u2", NULL, "gpt-4o", 4.0, "[]", "e2");
    add_log(st, "r5", "2026-03-03T05:00:00.000Z", "k1", "u1", NULL, "gpt-4o", 8.0, "[]", "e1");
    add_log(st, "r6", "2026-01-01T00:00:00.000Z", "k1", "u1", NULL, "gpt-4o", 16.0, "[]", "e1");
    struct sy_sval ts[] = {sy_sv_ts("2026-01-01T00:00:00.000Z")};
    assert_true(exec(st,
                     "INSERT INTO \"LiteLLM_TeamTable\" (team_id, team_alias, created_at, updated_at)"
                     " VALUES ('t1', 'team-one', $1, $1)",
                     1, ts) == 1);
    assert_true(exec(st,
                     "INSERT INTO \"LiteLLM_VerificationToken\" (token, key_alias, key_name, spend)"
                     " VALUES ('k1', 'alias-one', 'sk-...k1', 9.5)",
                     0, NULL) == 1);
    assert_true(exec(st, "INSERT INTO \"LiteLLM_UserTable\" (user_id, spend, password) VALUES ('u1', 3.0, 'hash')", 0,
                     NULL) == 1);
}

static const struct sy_admin_route *find(const struct sy_admin_route *t, int method, const char *path)
{
    for (; t->path; t++)
        if (t->method == method && strcmp(t->path, path) == 0)
            return t;
    return NULL;
}

/* Run one route; returns the parsed JSON body (caller puts it), status in *status. */
static json_object *call_as(struct sy_store *st, int method, const char *path, const char *query, const char *body,
                            int *status, int admin)
{
    const struct sy_admin_route *r = find(sy_admin_spend_routes, method, path);
    if (!r)
        r = find(sy_admin_model_routes, method, path);
    assert_non_null(r);
    struct sy_admin_ctx a;
    memset(&a, 0, sizeof a);
    a.method = method;
    a.path = path;
    a.query = query ? query : "";
    a.body = body ? body : "";
    a.body_len = strlen(a.body);
    a.is_admin = admin;
    a.now = NOW;
    a.table = &g_conf->table;
    a.status = 200;
    sy_buf_init(&a.out, 64u << 20);
    r->fn((r->flags & SY_ADMIN_NODB) ? NULL : st, &a);
    json_object *o = json_tokener_parse(a.out.p ? a.out.p : "");
    if (!o)
        fprintf(stderr, "not JSON: %s\n", a.out.p ? a.out.p : "(empty)");
    if (getenv("SY_TEST_VERBOSE"))
        fprintf(stderr, "%s?%s -> %d %s\n", path, a.query, a.status, a.out.p ? a.out.p : "");
    *status = a.status;
    sy_buf_free(&a.out);
    for (int i = 0; i < a.ninval; i++)
        free(a.inval[i]);
    return o;
}

static json_object *call(struct sy_store *st, int method, const char *path, const char *query, const char *body,
                         int *status)
{
    return call_as(st, method, path, query, body, status, 1);
}

static json_object *get(const char *path, const char *query)
{
    int status;
    json_object *o = call(g_st, HTTP_GET, path, query, NULL, &status);
    assert_int_equal(status, 200);
    assert_non_null(o);
    return o;
}

static double num(json_object *o, const char *k)
{
    json_object *v;
    assert_true(json_object_object_get_ex(o, k, &v));
    return json_object_get_double(v);
}

static const char *str(json_object *o, const char *k)
{
    json_object *v;
    if (!json_object_object_get_ex(o, k, &v) || !v)
        return NULL;
    return json_object_get_string(v);
}

static json_object *member(json_object *o, const char *k)
{
    json_object *v = NULL;
    json_object_object_get_ex(o, k, &v);
    return v;
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* ---- fixtures --------------------------------------------------------------- */

static const char *yaml = "model_list:\n"
                          "  - model_name: gpt-4o\n"
                          "    litellm_params:\n"
                          "      model: openai/gpt-4o\n"
                          "      api_key: sk-secret-upstream-key\n"
                          "      api_base: https://api.openai.com/v1\n"
                          "      azure_ad_token: abcdefghijklmnop\n"
                          "      aws_secret_access_key: zzz\n"
                          "      temperature: 0.5\n"
                          "      rpm: 10\n"
                          "    model_info:\n"
                          "      id: dep-1\n"
                          "      input_cost_per_token: 0.000001\n"
                          "  - model_name: gpt-4o\n"
                          "    litellm_params:\n"
                          "      model: openai/gpt-4o-mini\n"
                          "      rpm: 5\n"
                          "    model_info:\n"
                          "      id: dep-2\n"
                          "  - model_name: embed\n"
                          "    litellm_params:\n"
                          "      model: openai/unknown-embedder\n"
                          "    model_info:\n"
                          "      id: dep-3\n"
                          "      mode: embedding\n";

/* Known prices for the models the tests use (a LiteLLM-format file loaded
 * over the built-in table, so the tests do not depend on its contents). */
static const char *prices =
    "{\"gpt-4o\":{\"input_cost_per_token\":2.5e-06,\"output_cost_per_token\":1e-05,"
    "\"litellm_provider\":\"openai\",\"max_input_tokens\":128000,\"max_output_tokens\":16384,"
    "\"max_tokens\":16384,\"mode\":\"chat\",\"supports_function_calling\":true,\"supports_vision\":true},"
    "\"gpt-4o-mini\":{\"input_cost_per_token\":1.5e-07,\"output_cost_per_token\":6e-07,"
    "\"litellm_provider\":\"openai\",\"max_input_tokens\":128000,\"max_output_tokens\":16384,"
    "\"max_tokens\":16384,\"mode\":\"chat\",\"supports_function_calling\":true}}";

static int setup(void **state)
{
    (void)state;
    char ppath[300];
    snprintf(ppath, sizeof ppath, "%s/sy_test_spend_prices_%d.json", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    FILE *pf = fopen(ppath, "w");
    if (!pf)
        return -1;
    fputs(prices, pf);
    fclose(pf);
    char perr[512] = "";
    int prc = sy_prices_load(ppath, perr, sizeof perr);
    unlink(ppath);
    if (prc != 0 && !sy_price_find(NULL, "gpt-4o-mini")) {
        fprintf(stderr, "prices: %s\n", perr);
        return -1;
    }
    snprintf(g_path, sizeof g_path, "%s/sy_test_spend_%d.db", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    unlink(g_path);
    char err[512] = "";
    struct sy_store_conf sc = {.url = g_path};
    g_st = sy_store_open(&sc, err, sizeof err);
    if (!g_st) {
        fprintf(stderr, "open: %s\n", err);
        return -1;
    }
    if (sy_store_migrate(g_st) != 0)
        return -1;
    fill(g_st);
    struct sy_config *cfg = NULL;
    if (sy_config_load_string_ex(yaml, strlen(yaml), "test.yaml", NULL, SY_CONFIG_NO_SETENV | SY_CONFIG_QUIET, &cfg,
                                 err, sizeof err) != 0) {
        fprintf(stderr, "config: %s\n", err);
        return -1;
    }
    g_conf = sy_gwconf_build(cfg, err, sizeof err);
    if (!g_conf) {
        fprintf(stderr, "gwconf: %s\n", err);
        return -1;
    }
    return sy_tok_init() == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    sy_store_close(g_st);
    unlink(g_path);
    char p[300];
    snprintf(p, sizeof p, "%s-wal", g_path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", g_path);
    unlink(p);
    if (g_conf)
        sy_gwconf_unref(g_conf);
    return 0;
}

/* ---- /spend/logs -------------------------------------------------------------- */

static void test_logs_summarized(void **state)
{
    (void)state;
    /* end_date is midnight, inclusive: r4 (00:00) is in, r5 (05:00) is out */
    json_object *o = get("/spend/logs", "start_date=2026-03-01&end_date=2026-03-03");
    assert_true(json_object_is_type(o, json_type_array));
    assert_int_equal(json_object_array_length(o), 3);
    json_object *d1 = json_object_array_get_idx(o, 0);
    assert_string_equal(str(d1, "startTime"), "2026-03-01");
    NEAR(num(d1, "spend"), 1.5);
    NEAR(num(d1, "k1"), 1.5);
    NEAR(num(member(d1, "users"), "u1"), 1.5);
    NEAR(num(member(d1, "models"), "gpt-4o"), 1.0);
    NEAR(num(member(d1, "models"), "gpt-4o-mini"), 0.5);
    json_object *d3 = json_object_array_get_idx(o, 2);
    assert_string_equal(str(d3, "startTime"), "2026-03-03");
    NEAR(num(d3, "spend"), 4.0);
    NEAR(num(d3, "k2"), 4.0);
    json_object_put(o);

    /* days after the last one with rows are padded up to end_date */
    o = get("/spend/logs", "start_date=2026-03-01&end_date=2026-03-05");
    assert_int_equal(json_object_array_length(o), 5);
    NEAR(num(json_object_array_get_idx(o, 2), "spend"), 12.0);
    json_object *pad = json_object_array_get_idx(o, 4);
    assert_string_equal(str(pad, "startTime"), "2026-03-05");
    NEAR(num(pad, "spend"), 0);
    assert_int_equal(json_object_object_length(member(pad, "users")), 0);
    json_object_put(o);

    /* a filter narrows the summary; no rows -> [] */
    o = get("/spend/logs", "start_date=2026-03-01&end_date=2026-03-05&user_id=u2");
    assert_int_equal(json_object_array_length(o), 4); /* 02, 03, then padding 04, 05 */
    json_object_put(o);
    o = get("/spend/logs", "start_date=2025-01-01&end_date=2025-01-05");
    assert_int_equal(json_object_array_length(o), 0);
    json_object_put(o);
}

static void test_logs_rows(void **state)
{
    (void)state;
    json_object *o = get("/spend/logs", "start_date=2026-03-01&end_date=2026-03-04&summarize=false");
    assert_int_equal(json_object_array_length(o), 5);
    assert_string_equal(str(json_object_array_get_idx(o, 0), "request_id"), "r5"); /* newest first */
    json_object *row = json_object_array_get_idx(o, 4);
    assert_string_equal(str(row, "request_id"), "r1");
    assert_true(json_object_is_type(member(row, "request_tags"), json_type_array));
    assert_true(json_object_is_type(member(row, "metadata"), json_type_object));
    json_object_put(o);

    o = get("/spend/logs", "request_id=r3");
    assert_int_equal(json_object_array_length(o), 1);
    NEAR(num(json_object_array_get_idx(o, 0), "spend"), 2.0);
    json_object_put(o);
    o = get("/spend/logs", "request_id=nope");
    assert_int_equal(json_object_array_length(o), 1);
    assert_null(json_object_array_get_idx(o, 0));
    json_object_put(o);
    o = get("/spend/logs", "api_key=k1");
    assert_int_equal(json_object_array_length(o), 4);
    json_object_put(o);
    o = get("/spend/logs", "");
    assert_int_equal(json_object_array_length(o), 6);
    json_object_put(o);

    int status;
    o = call(g_st, HTTP_GET, "/spend/logs", "start_date=2026-3-1&end_date=2026-03-04", NULL, &status);
    assert_int_equal(status, 500);
    assert_non_null(member(o, "error"));
    json_object_put(o);
}

static void test_logs_paginated(void **state)
{
    (void)state;
    json_object *o =
        get("/spend/logs/v2", "start_date=2026-03-01%2000:00:00&end_date=2026-03-31%2000:00:00&page_size=2");
    NEAR(num(o, "total"), 5);
    NEAR(num(o, "total_pages"), 3);
    NEAR(num(o, "page"), 1);
    NEAR(num(o, "page_size"), 2);
    json_object *data = member(o, "data");
    assert_int_equal(json_object_array_length(data), 2);
    assert_string_equal(str(json_object_array_get_idx(data, 0), "request_id"), "r5");
    json_object_put(o);
    o = get("/spend/logs/ui", "start_date=2026-03-01+00:00:00&end_date=2026-03-31+00:00:00&page=3&page_size=2"
                              "&api_key=k1");
    NEAR(num(o, "total"), 3);
    assert_int_equal(json_object_array_length(member(o, "data")), 0);
    json_object_put(o);
    int status;
    o = call(g_st, HTTP_GET, "/spend/logs/v2", "page=1", NULL, &status);
    assert_int_equal(status, 400);
    json_object_put(o);
    o = call(g_st, HTTP_GET, "/spend/logs/v2", "start_date=2026-03-01&end_date=2026-03-02&page_size=500", NULL,
             &status);
    assert_int_equal(status, 422);
    json_object_put(o);
}

/* ---- /spend/keys, /spend/users, tags ------------------------------------------- */

static void test_keys_users_tags(void **state)
{
    (void)state;
    json_object *o = get("/spend/keys", "");
    assert_int_equal(json_object_array_length(o), 1);
    assert_string_equal(str(json_object_array_get_idx(o, 0), "token"), "k1");
    json_object_put(o);
    o = get("/spend/users", "user_id=u1");
    assert_int_equal(json_object_array_length(o), 1);
    json_object *u = json_object_array_get_idx(o, 0);
    NEAR(num(u, "spend"), 3.0);
    assert_null(member(u, "password"));
    json_object_put(o);
    o = get("/spend/users", "user_id=ghost");
    assert_null(json_object_array_get_idx(o, 0));
    json_object_put(o);

    o = get("/spend/tags", "");
    assert_int_equal(json_object_array_length(o), 2);
    for (int i = 0; i < 2; i++) {
        json_object *t = json_object_array_get_idx(o, i);
        if (strcmp(str(t, "individual_request_tag"), "a") == 0) {
            NEAR(num(t, "log_count"), 2);
            NEAR(num(t, "total_spend"), 1.5);
        } else {
            NEAR(num(t, "log_count"), 1);
            NEAR(num(t, "total_spend"), 1.0);
        }
    }
    json_object_put(o);
    o = get("/global/spend/tags", "start_date=2026-03-01&end_date=2026-03-01&tags=b");
    json_object *spt = member(o, "spend_per_tag");
    assert_int_equal(json_object_array_length(spt), 1);
    assert_string_equal(str(json_object_array_get_idx(spt, 0), "name"), "b");
    json_object_put(o);
    o = get("/global/spend/all_tag_names", "");
    assert_int_equal(json_object_array_length(member(o, "tag_names")), 2);
    json_object_put(o);
}

/* ---- /global/spend* ------------------------------------------------------------- */

static void test_global(void **state)
{
    (void)state;
    json_object *o = get("/global/spend", "");
    NEAR(num(o, "spend"), 15.5); /* r6 is older than 30 days */
    NEAR(num(o, "max_budget"), 0.0);
    json_object_put(o);

    o = get("/global/spend/keys", "");
    assert_int_equal(json_object_array_length(o), 2);
    json_object *k = json_object_array_get_idx(o, 0);
    assert_string_equal(str(k, "api_key"), "k1");
    NEAR(num(k, "total_spend"), 9.5);
    assert_string_equal(str(k, "key_alias"), "alias-one");
    json_object_put(o);
    o = get("/global/spend/keys", "limit=1");
    assert_int_equal(json_object_array_length(o), 1);
    json_object_put(o);
    int status;
    o = call(g_st, HTTP_GET, "/global/spend/keys", "limit=0", NULL, &status);
    assert_int_equal(status, 422);
    json_object_put(o);

    o = get("/global/spend/models", "");
    assert_int_equal(json_object_array_length(o), 2);
    assert_string_equal(str(json_object_array_get_idx(o, 0), "model"), "gpt-4o");
    NEAR(num(json_object_array_get_idx(o, 0), "total_spend"), 15.0);
    json_object_put(o);

    o = get("/global/spend/logs", "");
    assert_int_equal(json_object_array_length(o), 3);
    assert_string_equal(str(json_object_array_get_idx(o, 2), "date"), "2026-03-03");
    NEAR(num(json_object_array_get_idx(o, 2), "spend"), 12.0);
    json_object_put(o);
    o = get("/global/spend/logs", "api_key=k2");
    assert_int_equal(json_object_array_length(o), 2);
    assert_string_equal(str(json_object_array_get_idx(o, 0), "api_key"), "k2");
    json_object_put(o);

    o = get("/global/spend/teams", "");
    json_object *days = member(o, "daily_spend");
    assert_int_equal(json_object_array_length(days), 3);
    NEAR(num(json_object_array_get_idx(days, 0), "team-one"), 1.5);
    json_object *tot = member(o, "total_spend_per_team");
    assert_string_equal(str(json_object_array_get_idx(tot, 0), "team_id"), "Unassigned");
    NEAR(num(json_object_array_get_idx(tot, 0), "total_spend"), 14.0);
    assert_int_equal(json_object_array_length(member(o, "teams")), 2);
    json_object_put(o);

    o = call(g_st, HTTP_POST, "/global/spend/end_users", "",
             "{\"startTime\":\"2026-03-01T00:00:00\",\"endTime\":\"2026-03-04T00:00:00\"}", &status);
    assert_int_equal(status, 200);
    assert_int_equal(json_object_array_length(o), 2);
    assert_string_equal(str(json_object_array_get_idx(o, 0), "end_user"), "e1"); /* 1.5 + 8.0 */
    NEAR(num(json_object_array_get_idx(o, 0), "total_spend"), 9.5);
    NEAR(num(json_object_array_get_idx(o, 0), "total_count"), 3);
    json_object_put(o);

    o = get("/global/all_end_users", "");
    assert_int_equal(json_object_array_length(member(o, "end_users")), 2);
    json_object_put(o);
}

static void test_report(void **state)
{
    (void)state;
    json_object *o = get("/global/spend/report", "start_date=2026-03-01&end_date=2026-03-03");
    assert_int_equal(json_object_array_length(o), 3);
    json_object *d1 = json_object_array_get_idx(o, 0);
    assert_string_equal(str(d1, "group_by_day"), "2026-03-01T00:00:00+00:00");
    json_object *teams = member(d1, "teams");
    assert_int_equal(json_object_array_length(teams), 1);
    json_object *t = json_object_array_get_idx(teams, 0);
    assert_string_equal(str(t, "team_name"), "team-one");
    NEAR(num(t, "total_spend"), 1.5);
    assert_int_equal(json_object_array_length(member(t, "metadata")), 2);
    json_object *d2 = json_object_array_get_idx(o, 1);
    assert_string_equal(str(json_object_array_get_idx(member(d2, "teams"), 0), "team_name"), "Unassigned Team");
    json_object_put(o);

    o = get("/global/spend/report", "start_date=2026-03-01&end_date=2026-03-03&group_by=customer");
    json_object *c = json_object_array_get_idx(member(json_object_array_get_idx(o, 1), "customers"), 0);
    assert_string_equal(str(c, "customer"), "e2");
    json_object_put(o);

    o = get("/global/spend/report", "start_date=2026-03-01&end_date=2026-03-03&group_by=api_key");
    assert_int_equal(json_object_array_length(o), 2);
    json_object *k = json_object_array_get_idx(o, 0);
    assert_string_equal(str(k, "api_key"), "k2");
    NEAR(num(k, "total_cost"), 6.0);
    NEAR(num(k, "total_input_tokens"), 20);
    NEAR(num(k, "total_output_tokens"), 40);
    assert_int_equal(json_object_array_length(member(k, "model_details")), 1);
    json_object_put(o);

    int status;
    o = call(g_st, HTTP_GET, "/global/spend/report", "start_date=2026-03-01", NULL, &status);
    assert_int_equal(status, 400);
    json_object_put(o);
}

static void test_calculate(void **state)
{
    (void)state;
    int status;
    json_object *o = call(g_st, HTTP_POST, "/spend/calculate", "",
                          "{\"completion_response\":{\"model\":\"gpt-4o-mini\",\"usage\":{\"prompt_tokens\":1000,"
                          "\"completion_tokens\":2000,\"total_tokens\":3000}}}",
                          &status);
    assert_int_equal(status, 200);
    NEAR(num(o, "cost"), 1000 * 1.5e-7 + 2000 * 6e-7);
    json_object_put(o);
    /* a configured group: the last deployment named gpt-4o (gpt-4o-mini prices) */
    o = call(g_st, HTTP_POST, "/spend/calculate", "",
             "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello there, how are you?\"}]}",
             &status);
    assert_int_equal(status, 200);
    double cost = num(o, "cost");
    assert_true(cost > 0 && fmod(cost / 1.5e-7, 1.0) < 1e-6); /* a whole number of input tokens */
    json_object_put(o);
    o = call(g_st, HTTP_POST, "/spend/calculate", "", "{\"model\":\"gpt-4o\"}", &status);
    assert_int_equal(status, 400);
    json_object_put(o);
    o = call(g_st, HTTP_POST, "/spend/calculate", "", "{}", &status);
    assert_int_equal(status, 400);
    json_object_put(o);
    o = call(g_st, HTTP_POST, "/spend/calculate", "",
             "{\"completion_response\":{\"model\":\"no-such-model-xyz\",\"usage\":{\"prompt_tokens\":1}}}", &status);
    assert_int_equal(status, 500);
    json_object_put(o);
}

/* ---- model info ------------------------------------------------------------------ */

static void test_model_info(void **state)
{
    (void)state;
    json_object *o = get("/model/info", "");
    json_object *data = member(o, "data");
    assert_int_equal(json_object_array_length(data), 3);
    json_object *d = json_object_array_get_idx(data, 0);
    assert_string_equal(str(d, "model_name"), "gpt-4o");
    json_object *lp = member(d, "litellm_params");
    assert_string_equal(str(lp, "model"), "openai/gpt-4o");
    assert_null(member(lp, "api_key"));
    assert_null(member(lp, "aws_secret_access_key"));
    assert_string_equal(str(lp, "azure_ad_token"), "abcd********mnop");
    assert_string_equal(str(lp, "api_base"), "https://api.openai.com/v1");
    NEAR(num(lp, "temperature"), 0.5);
    json_object *mi = member(d, "model_info");
    assert_string_equal(str(mi, "id"), "dep-1");
    NEAR(num(mi, "input_cost_per_token"), 1e-6);  /* the deployment's own wins */
    NEAR(num(mi, "output_cost_per_token"), 1e-5); /* from the price table */
    NEAR(num(mi, "max_input_tokens"), 128000);
    assert_string_equal(str(mi, "litellm_provider"), "openai");
    assert_true(json_object_get_boolean(member(mi, "supports_vision")));
    json_object *e = member(json_object_array_get_idx(data, 2), "model_info");
    assert_string_equal(str(e, "mode"), "embedding");
    assert_null(member(e, "litellm_provider")); /* no price entry */
    json_object_put(o);
    /* nothing secret anywhere in the text */
    int status;
    o = call(g_st, HTTP_GET, "/v1/model/info", "", NULL, &status);
    assert_null(strstr(json_object_to_json_string(o), "sk-secret-upstream-key"));
    json_object_put(o);

    o = get("/model/info", "litellm_model_id=dep-2");
    data = member(o, "data");
    assert_int_equal(json_object_array_length(data), 1);
    assert_string_equal(str(member(json_object_array_get_idx(data, 0), "model_info"), "id"), "dep-2");
    json_object_put(o);
    o = call(g_st, HTTP_GET, "/model/info", "litellm_model_id=nope", NULL, &status);
    assert_int_equal(status, 400);
    assert_string_equal(str(member(o, "detail"), "error"), "Model id = nope not found on litellm proxy");
    json_object_put(o);
    o = get("/v2/model/info", "model=embed");
    assert_int_equal(json_object_array_length(member(o, "data")), 1);
    json_object_put(o);
}

static void test_model_group_info(void **state)
{
    (void)state;
    json_object *o = get("/model_group/info", "");
    json_object *data = member(o, "data");
    assert_int_equal(json_object_array_length(data), 2);
    json_object *g = json_object_array_get_idx(data, 0);
    assert_string_equal(str(g, "model_group"), "gpt-4o");
    assert_int_equal(json_object_array_length(member(g, "providers")), 1);
    NEAR(num(g, "input_cost_per_token"), 1e-6); /* max over deployments */
    NEAR(num(g, "output_cost_per_token"), 1e-5);
    NEAR(num(g, "max_input_tokens"), 128000);
    /* as the text Python writes for a float field (ModelGroupInfo.max_input_tokens: float): not 1.28e+05 */
    assert_string_equal(json_object_to_json_string(member(g, "max_input_tokens")), "128000.0");
    NEAR(num(g, "rpm"), 15);
    assert_true(json_object_get_boolean(member(g, "supports_function_calling")));
    assert_string_equal(str(json_object_array_get_idx(data, 1), "mode"), "embedding");
    json_object_put(o);
    o = get("/model_group/info", "model_group=embed");
    assert_int_equal(json_object_array_length(member(o, "data")), 1);
    json_object_put(o);
}

/* ---- PostgreSQL with LiteLLM's schema --------------------------------------------- */

static const char *fixture_dir(void)
{
    const char *d = getenv("SY_LITELLM_SCHEMA_DIR");
    return d ? d : SY_LITELLM_SCHEMA_DIR;
}

static void test_postgres(void **state)
{
    (void)state;
    const char *url = getenv("SY_TEST_PG_URL");
    if (!url || !*url)
        skip();
    char schema[512], sample[512];
    snprintf(schema, sizeof schema, "%s/litellm-schema.sql", fixture_dir());
    snprintf(sample, sizeof sample, "%s/sample-rows.sql", fixture_dir());
    if (access(schema, R_OK) != 0 || access(sample, R_OK) != 0)
        skip();
    /* a fresh database beside the given one, loaded with psql */
    char db[64], cmd[4096], dburl[1024];
    snprintf(db, sizeof db, "sy_adminspend_%d", (int)getpid());
    snprintf(cmd, sizeof cmd,
             "PGOPTIONS=--client-min-messages=warning PATH=$PATH:$(ls -d /usr/lib/postgresql/*/bin | tail -1) && psql "
             "-q -v ON_ERROR_STOP=1 '%s' -c "
             "'DROP DATABASE IF EXISTS %s' -c 'CREATE DATABASE %s' >/dev/null 2>&1",
             url, db, db);
    assert_int_equal(system(cmd), 0);
    const char *slash = strrchr(url, '/');
    const char *q = strchr(url, '?');
    assert_non_null(slash);
    snprintf(dburl, sizeof dburl, "%.*s/%s%s", (int)(slash - url), url, db, q ? q : "");
    snprintf(cmd, sizeof cmd,
             "PGOPTIONS=--client-min-messages=warning PATH=$PATH:$(ls -d /usr/lib/postgresql/*/bin | tail -1) && psql "
             "-q -v ON_ERROR_STOP=1 '%s' -f '%s' "
             ">/dev/null && psql -q -v ON_ERROR_STOP=1 '%s' -f '%s' >/dev/null",
             dburl, schema, dburl, sample);
    assert_int_equal(system(cmd), 0);

    char err[512] = "";
    struct sy_store_conf sc = {.url = dburl};
    struct sy_store *st = sy_store_open(&sc, err, sizeof err);
    assert_non_null(st);
    assert_int_equal(sy_store_migrate(st), 0);
    int status;
    /* LiteLLM's own row is served as it is */
    json_object *o = call(st, HTTP_GET, "/spend/logs", "request_id=chatcmpl-test-0001", NULL, &status);
    assert_int_equal(status, 200);
    json_object *row = json_object_array_get_idx(o, 0);
    assert_non_null(row);
    NEAR(num(row, "spend"), 0.000123);
    assert_string_equal(str(row, "user"), "user-test-1");
    json_object_put(o);
    o = call(st, HTTP_GET, "/spend/logs", "start_date=2026-01-01&end_date=2026-01-01", NULL, &status);
    assert_int_equal(status, 200);
    assert_int_equal(json_object_array_length(o), 1);
    assert_string_equal(str(json_object_array_get_idx(o, 0), "startTime"), "2026-01-01");
    json_object_put(o);

    /* the same summaries as on SQLite */
    fill(st);
    o = call(st, HTTP_GET, "/spend/logs", "start_date=2026-03-01&end_date=2026-03-03", NULL, &status);
    assert_int_equal(status, 200);
    assert_int_equal(json_object_array_length(o), 3);
    NEAR(num(json_object_array_get_idx(o, 0), "spend"), 1.5);
    NEAR(num(json_object_array_get_idx(o, 2), "spend"), 4.0);
    json_object_put(o);
    o = call(st, HTTP_GET, "/global/spend", "", NULL, &status);
    NEAR(num(o, "spend"), 15.5);
    json_object_put(o);
    o = call(st, HTTP_GET, "/global/spend/teams", "", NULL, &status);
    assert_int_equal(status, 200);
    NEAR(num(json_object_array_get_idx(member(o, "daily_spend"), 0), "team-one"), 1.5);
    json_object_put(o);
    o = call(st, HTTP_GET, "/global/spend/report", "start_date=2026-03-01&end_date=2026-03-03", NULL, &status);
    assert_int_equal(status, 200);
    assert_int_equal(json_object_array_length(o), 3);
    json_object_put(o);
    o = call(st, HTTP_GET, "/spend/tags", "", NULL, &status);
    assert_int_equal(status, 200);
    assert_int_equal(json_object_array_length(o), 2);
    json_object_put(o);
    o = call(st, HTTP_GET, "/spend/logs/v2", "start_date=2026-03-01%2000:00:00&end_date=2026-03-31%2000:00:00", NULL,
             &status);
    assert_int_equal(status, 200);
    NEAR(num(o, "total"), 5);
    json_object_put(o);
    sy_store_close(st);
    snprintf(cmd, sizeof cmd,
             "PGOPTIONS=--client-min-messages=warning PATH=$PATH:$(ls -d /usr/lib/postgresql/*/bin | tail -1) && psql "
             "-q '%s' -c 'DROP DATABASE IF EXISTS "
             "%s' >/dev/null 2>&1",
             url, db);
    (void)!system(cmd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_logs_summarized),  cmocka_unit_test(test_logs_rows),
        cmocka_unit_test(test_logs_paginated),   cmocka_unit_test(test_keys_users_tags),
        cmocka_unit_test(test_global),           cmocka_unit_test(test_report),
        cmocka_unit_test(test_calculate),        cmocka_unit_test(test_model_info),
        cmocka_unit_test(test_model_group_info), cmocka_unit_test(test_postgres),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
