/* test_postgres.c - store.h against PostgreSQL (skipped when SY_TEST_PG_URL
 * is unset).
 *
 *   SY_TEST_PG_URL=$(bash tests/lib/pg.sh start /tmp/sy-pg 55432) meson test ...
 *
 * - the suite of test_sqlite.c (included below) on the server at SY_TEST_PG_URL;
 * - PostgreSQL kinds: other array types, timestamptz, numeric, a failed
 *   transaction's COMMIT;
 * - an existing LiteLLM database: litellm-schema.sql + sample-rows.sql
 *   (dir: env SY_TEST_LITELLM_SCHEMA, default
 *   tests/config/litellm-schema; loaded with psql) into a fresh
 *   database; sy_store_migrate changes none of LiteLLM's columns or indexes;
 *   the sample key row reads back with the right kinds; an "older LiteLLM"
 *   (a column and a table dropped) gets them back; instances migrating a fresh
 *   database at once all succeed (advisory lock);
 * - a server that goes away: a private cluster (tests/lib/pg.sh, or env
 *   SY_TEST_PG_SH) stopped under a running query -> SY_STORE_EDOWN, no crash;
 *   calls while down -> EDOWN; a lost transaction; started again -> works.
 */
#define STORE_SUITE_NO_MAIN 1
#include "test_sqlite.c"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

static const char *pg_url;

#define NEED_PG()      \
    do {               \
        if (!pg_url) { \
            skip();    \
            return;    \
        }              \
    } while (0)

/* base URL with its database name replaced */
static void url_with_db(const char *base, const char *db, char *out, size_t n)
{
    const char *q = strchr(base, '?');
    size_t end = q ? (size_t)(q - base) : strlen(base);
    const char *scheme = strstr(base, "://");
    const char *slash = NULL;
    for (const char *p = scheme ? scheme + 3 : base; p < base + end; p++)
        if (*p == '/')
            slash = p;
    size_t keep = slash ? (size_t)(slash - base) : end;
    snprintf(out, n, "%.*s/%s%s", (int)keep, base, db, q ? q : "");
}

static struct sy_store *open_url(const char *u)
{
    struct sy_store_conf conf = {.url = u, .connect_timeout_s = 2};
    char err[256];
    struct sy_store *st = sy_store_open(&conf, err, sizeof err);
    if (!st)
        fail_msg("open %s: %s", u, err);
    return st;
}

static int cat_rows(void *ud, const struct sy_srow *r)
{
    struct sy_buf *b = ud;
    sy_srow_json(b, r);
    SY_BUF_LIT(b, "\n");
    return 0;
}

/* ---- PostgreSQL kinds ---------------------------------------------------- */

static void pg_kinds(void **state)
{
    NEED_PG();
    struct sy_store *st = open_url(pg_url);
    struct got g = {0};
    int rc = sy_store_exec(st,
                           "SELECT ARRAY[1,2,NULL]::int8[] AS a, ARRAY[true,false]::bool[] AS b, "
                           "'{}'::text[] AS e, ARRAY[ARRAY['a','b'],ARRAY['c','d']]::text[] AS m, "
                           "'2026-01-01 05:30:00.25+05:30'::timestamptz AS tz, 12.50::numeric AS num, "
                           "'{\"a\": [1, 2]}'::json AS j, ARRAY['x,y','{\"q\"}']::varchar[] AS v, "
                           "'infinity'::timestamp AS inf, 42::int2 AS s, '2026-01-02'::date AS d",
                           0, NULL, grab, &g);
    assert_int_equal(rc, 1);
    assert_int_equal(g.k[0], SY_SV_JSON);
    assert_string_equal(g.s[0], "[1,2,null]");
    assert_string_equal(g.s[1], "[true,false]");
    assert_string_equal(g.s[2], "[]");
    assert_string_equal(g.s[3], "[[\"a\",\"b\"],[\"c\",\"d\"]]");
    assert_int_equal(g.k[4], SY_SV_TS);
    assert_string_equal(g.s[4], "2026-01-01T00:00:00.250Z");
    assert_int_equal(g.k[5], SY_SV_NUM);
    assert_true(g.d[5] == 12.5);
    assert_int_equal(g.k[6], SY_SV_JSON);
    assert_true(json_same(g.s[6], "{\"a\":[1,2]}"));
    assert_string_equal(g.s[7], "[\"x,y\",\"{\\\"q\\\"}\"]");
    assert_int_equal(g.k[8], SY_SV_TEXT); /* not an ISO time: kept as text */
    assert_string_equal(g.s[8], "infinity");
    assert_int_equal(g.k[9], SY_SV_INT);
    assert_int_equal(g.i[9], 42);
    assert_int_equal(g.k[10], SY_SV_TEXT);
    assert_string_equal(g.s[10], "2026-01-02");

    /* a failed transaction's COMMIT is an error, and the connection goes on */
    assert_int_equal(sy_store_begin(st), 0);
    assert_int_equal(sy_store_exec(st, "SELECT 1/0", 0, NULL, NULL, NULL), SY_STORE_EQUERY);
    assert_int_equal(sy_store_commit(st), SY_STORE_EQUERY);
    assert_int_equal(sy_store_exec(st, "SELECT 1", 0, NULL, NULL, NULL), 1);
    /* a bad TEXTARR parameter */
    struct sy_sval bad = sy_sv_textarr("{\"not\":\"an array\"}");
    assert_int_equal(sy_store_exec(st, "SELECT CAST($1 AS TEXT[])", 1, &bad, NULL, NULL), SY_STORE_EQUERY);
    /* a bad URL is refused at open */
    struct sy_store_conf c = {.url = "postgresql://u@h:notaport:/x?bogus=1"};
    char err[256];
    assert_null(sy_store_open(&c, err, sizeof err));
    sy_store_close(st);
}

/* ---- an existing LiteLLM database ------------------------------------------ */

static char litellm_db[64], litellm_url[512];

static const char *schema_dir(void)
{
    const char *d = getenv("SY_TEST_LITELLM_SCHEMA");
    return d && *d ? d : SY_LITELLM_SCHEMA_DIR;
}

static int psql_file(const char *u, const char *file)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "psql -X -q -v ON_ERROR_STOP=1 -d '%s' -f '%s' >/dev/null", u, file);
    return system(cmd);
}

static void columns_snapshot(struct sy_store *st, struct sy_buf *b)
{
    sy_buf_reset(b);
    assert_true(sy_store_exec(st,
                              "SELECT CAST(table_name AS TEXT) AS t, CAST(column_name AS TEXT) AS c, "
                              "CAST(data_type AS TEXT) AS ty, CAST(udt_name AS TEXT) AS u, "
                              "CAST(column_default AS TEXT) AS d, CAST(is_nullable AS TEXT) AS n, "
                              "CAST(ordinal_position AS BIGINT) AS o FROM information_schema.columns "
                              "WHERE table_schema = 'public' AND table_name LIKE 'LiteLLM%' ORDER BY 1, 7",
                              0, NULL, cat_rows, b) > 100);
    assert_true(sy_store_exec(st,
                              "SELECT CAST(indexname AS TEXT) AS i, indexdef FROM pg_indexes WHERE schemaname = "
                              "'public' AND tablename LIKE 'LiteLLM%' ORDER BY 1",
                              0, NULL, cat_rows, b) > 100);
}

struct sample {
    int rows;
    struct sy_buf json;
    enum sy_sv_kind models, metadata, created, spend, max_budget, blocked;
    char models_s[64], metadata_s[64], created_s[64];
    double mb;
};

static int read_sample(void *ud, const struct sy_srow *r)
{
    struct sample *s = ud;
    s->rows++;
    sy_srow_json(&s->json, r);
    s->models = sy_srow_get(r, "models")->k;
    s->metadata = sy_srow_get(r, "metadata")->k;
    s->created = sy_srow_get(r, "created_at")->k;
    s->spend = sy_srow_get(r, "spend")->k;
    s->max_budget = sy_srow_get(r, "max_budget")->k;
    s->blocked = sy_srow_get(r, "blocked")->k;
    snprintf(s->models_s, sizeof s->models_s, "%s", sy_srow_text(r, "models"));
    snprintf(s->metadata_s, sizeof s->metadata_s, "%s", sy_srow_text(r, "metadata"));
    snprintf(s->created_s, sizeof s->created_s, "%s", sy_srow_text(r, "created_at"));
    s->mb = sy_srow_num(r, "max_budget", -1);
    return 0;
}

static void litellm_existing(void **state)
{
    NEED_PG();
    char schema[600], rows[600];
    snprintf(schema, sizeof schema, "%s/litellm-schema.sql", schema_dir());
    snprintf(rows, sizeof rows, "%s/sample-rows.sql", schema_dir());
    if (access(schema, R_OK) || access(rows, R_OK) || system("psql --version >/dev/null 2>&1")) {
        skip(); /* fixtures or psql missing */
        return;
    }
    struct sy_store *admin = open_url(pg_url);
    snprintf(litellm_db, sizeof litellm_db, "sy_litellm_%d", (int)getpid());
    char sql[256];
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s", litellm_db);
    ok_exec(admin, sql);
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", litellm_db);
    ok_exec(admin, sql);
    url_with_db(pg_url, litellm_db, litellm_url, sizeof litellm_url);
    assert_int_equal(psql_file(litellm_url, schema), 0);
    assert_int_equal(psql_file(litellm_url, rows), 0);

    struct sy_store *st = open_url(litellm_url);
    struct sy_buf before, after;
    sy_buf_init(&before, 1 << 24);
    sy_buf_init(&after, 1 << 24);
    columns_snapshot(st, &before);
    assert_int_equal(sy_store_migrate(st), 0);
    columns_snapshot(st, &after);
    assert_string_equal(before.p, after.p); /* nothing of LiteLLM's changed */
    char out[256];
    (void)out;
    struct got g = {0};
    assert_int_equal(sy_store_exec(st, "SELECT \"value\" FROM \"Switchyard_Meta\" WHERE \"key\" = 'schema_version'", 0,
                                   NULL, grab, &g),
                     1);
    assert_string_equal(g.s[0], "1");

    /* the sample key, read the way the keys module does */
    struct sample s = {0};
    sy_buf_init(&s.json, 1 << 16);
    struct sy_sval tok = sy_sv_text("eceadfbb53b79c09477666aa69fb6ac5994e1e25f7f0fe2f3c270c29717de213");
    assert_int_equal(
        sy_store_exec(st, "SELECT * FROM \"LiteLLM_VerificationToken\" WHERE token = $1", 1, &tok, read_sample, &s), 1);
    assert_int_equal(s.models, SY_SV_JSON);
    assert_string_equal(s.models_s, "[]");
    assert_int_equal(s.metadata, SY_SV_JSON);
    assert_string_equal(s.metadata_s, "{}");
    assert_int_equal(s.created, SY_SV_TS);
    assert_int_equal(strlen(s.created_s), 24);
    assert_true(s.created_s[10] == 'T' && s.created_s[23] == 'Z');
    assert_int_equal(s.spend, SY_SV_NUM);
    assert_int_equal(s.max_budget, SY_SV_NUM);
    assert_true(s.mb == 1.0);
    assert_int_equal(s.blocked, SY_SV_NULL);
    assert_non_null(strstr(s.json.p, "\"key_alias\":\"test-key\""));
    sy_buf_free(&s.json);

    /* team members (text[]) and spend log times */
    memset(&g, 0, sizeof g);
    assert_int_equal(sy_store_exec(st,
                                   "SELECT members, members_with_roles, blocked FROM \"LiteLLM_TeamTable\" WHERE "
                                   "team_id = 'team-test-1'",
                                   0, NULL, grab, &g),
                     1);
    assert_string_equal(g.s[0], "[\"user-test-1\"]");
    assert_int_equal(g.k[1], SY_SV_JSON);
    assert_int_equal(g.k[2], SY_SV_BOOL);
    assert_int_equal(g.i[2], 0);
    memset(&g, 0, sizeof g);
    assert_int_equal(sy_store_exec(st,
                                   "SELECT \"startTime\", \"endTime\", spend, total_tokens, request_tags FROM "
                                   "\"LiteLLM_SpendLogs\" WHERE request_id = 'chatcmpl-test-0001'",
                                   0, NULL, grab, &g),
                     1);
    assert_string_equal(g.s[0], "2026-01-01T00:00:00.000Z");
    assert_string_equal(g.s[1], "2026-01-01T00:00:01.250Z");
    assert_true(g.d[2] == 0.000123);
    assert_int_equal(g.k[3], SY_SV_INT);
    assert_int_equal(g.i[3], 30);
    assert_string_equal(g.s[4], "[]");

    /* writing LiteLLM's way: a key with TEXTARR models and an ISO time */
    struct sy_sval kp[] = {sy_sv_text("tok-2"), sy_sv_textarr("[\"gpt-4o\",\"a \\\"b\\\"\"]"),
                           sy_sv_ts("2026-02-03T04:05:06.789Z"), sy_sv_json("{\"x\":1}")};
    assert_int_equal(sy_store_exec(st,
                                   "INSERT INTO \"LiteLLM_VerificationToken\" (token, models, created_at, updated_at, "
                                   "metadata) VALUES ($1, $2, $3, $3, $4)",
                                   4, kp, NULL, NULL),
                     1);
    memset(&g, 0, sizeof g);
    assert_int_equal(sy_store_exec(st,
                                   "SELECT models, created_at FROM \"LiteLLM_VerificationToken\" WHERE token = $1 AND "
                                   "expires IS NULL AND created_at < $2",
                                   2, (struct sy_sval[]){kp[0], sy_sv_ts("2026-02-03T04:05:07.000Z")}, grab, &g),
                     1);
    assert_string_equal(g.s[0], "[\"gpt-4o\",\"a \\\"b\\\"\"]");
    assert_string_equal(g.s[1], "2026-02-03T04:05:06.789Z");

    /* an older LiteLLM: a column and a table missing */
    ok_exec(st, "ALTER TABLE \"LiteLLM_VerificationToken\" DROP COLUMN key_type");
    ok_exec(st, "DROP TABLE \"LiteLLM_DailyTagSpend\"");
    assert_int_equal(sy_store_migrate(st), 0);
    columns_snapshot(st, &after);
    assert_non_null(strstr(after.p, "\"t\":\"LiteLLM_VerificationToken\",\"c\":\"key_type\""));
    assert_non_null(strstr(after.p, "LiteLLM_DailyTagSpend_tag_date_api_key_model_custom_llm_pro_key"));
    assert_int_equal(sy_store_migrate(st), 0);
    sy_buf_free(&before);
    sy_buf_free(&after);
    sy_store_close(st);
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", litellm_db);
    ok_exec(admin, sql);
    sy_store_close(admin);
}

struct mig {
    const char *url;
    int rc;
};

static void *mig_thread(void *arg)
{
    struct mig *m = arg;
    struct sy_store *st = open_url(m->url);
    m->rc = sy_store_migrate(st);
    sy_store_close(st);
    return NULL;
}

static void fresh_concurrent_migrate(void **state)
{
    NEED_PG();
    struct sy_store *admin = open_url(pg_url);
    char db[64], u[512], sql[256];
    snprintf(db, sizeof db, "sy_fresh_%d", (int)getpid());
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s", db);
    ok_exec(admin, sql);
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", db);
    ok_exec(admin, sql);
    url_with_db(pg_url, db, u, sizeof u);
    pthread_t t[4];
    struct mig m[4];
    for (int i = 0; i < 4; i++) {
        m[i].url = u;
        pthread_create(&t[i], NULL, mig_thread, &m[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(m[i].rc, 0);
    }
    /* a switchyard-made database takes the daily upsert on its unique key */
    struct sy_store *st = open_url(u);
    const char *up = "INSERT INTO \"LiteLLM_DailyTeamSpend\" (id, team_id, date, api_key, model, custom_llm_provider, "
                     "mcp_namespaced_tool_name, endpoint, spend, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
                     "$9, $10) ON CONFLICT (team_id, date, api_key, model, custom_llm_provider, "
                     "mcp_namespaced_tool_name, endpoint) DO UPDATE SET spend = \"LiteLLM_DailyTeamSpend\".spend + "
                     "EXCLUDED.spend";
    for (int i = 0; i < 3; i++) {
        char id[16];
        snprintf(id, sizeof id, "d%d", i);
        struct sy_sval p[] = {sy_sv_text(id),           sy_sv_text("t1"),
                              sy_sv_text("2026-01-01"), sy_sv_text("k"),
                              sy_sv_text("m"),          sy_sv_text("openai"),
                              sy_sv_text(""),           sy_sv_text("/chat"),
                              sy_sv_num(0.25),          sy_sv_ts("2026-01-01T00:00:00.000Z")};
        assert_int_equal(sy_store_exec(st, up, 10, p, NULL, NULL), 1);
    }
    struct got g = {0};
    assert_int_equal(sy_store_exec(st, "SELECT spend FROM \"LiteLLM_DailyTeamSpend\"", 0, NULL, grab, &g), 1);
    assert_true(g.d[0] == 0.75);
    sy_store_close(st);
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", db);
    ok_exec(admin, sql);
    sy_store_close(admin);
}

/* A database switchyard creates has LiteLLM's tables exactly: columns (name,
 * type, default, nullability, order), indexes and primary keys. */
static const char *our_tables =
    "('LiteLLM_VerificationToken','LiteLLM_UserTable','LiteLLM_TeamTable','LiteLLM_TeamMembership',"
    "'LiteLLM_OrganizationTable','LiteLLM_OrganizationMembership','LiteLLM_BudgetTable','LiteLLM_EndUserTable',"
    "'LiteLLM_SpendLogs','LiteLLM_DailyUserSpend','LiteLLM_DailyTeamSpend','LiteLLM_DailyOrganizationSpend',"
    "'LiteLLM_DailyEndUserSpend','LiteLLM_DailyTagSpend','LiteLLM_DeletedVerificationToken','LiteLLM_Config',"
    "'LiteLLM_ErrorLogs')";

static void ddl_snapshot(const char *u, struct sy_buf *b)
{
    struct sy_store *st = open_url(u);
    char sql[2048];
    sy_buf_reset(b);
    snprintf(sql, sizeof sql,
             "SELECT CAST(table_name AS TEXT) AS t, CAST(column_name AS TEXT) AS c, CAST(data_type AS TEXT) AS ty, "
             "CAST(udt_name AS TEXT) AS u, CAST(column_default AS TEXT) AS d, CAST(is_nullable AS TEXT) AS n, "
             "CAST(ordinal_position AS BIGINT) AS o FROM information_schema.columns WHERE table_schema = 'public' "
             "AND table_name IN %s ORDER BY 1, 7",
             our_tables);
    assert_true(sy_store_exec(st, sql, 0, NULL, cat_rows, b) > 300);
    snprintf(sql, sizeof sql,
             "SELECT CAST(indexname AS TEXT) AS i, indexdef FROM pg_indexes WHERE schemaname = 'public' AND "
             "tablename IN %s ORDER BY 1",
             our_tables);
    assert_true(sy_store_exec(st, sql, 0, NULL, cat_rows, b) > 50);
    sy_store_close(st);
}

static void same_as_litellm(void **state)
{
    NEED_PG();
    char schema[600];
    snprintf(schema, sizeof schema, "%s/litellm-schema.sql", schema_dir());
    if (access(schema, R_OK) || system("psql --version >/dev/null 2>&1")) {
        skip();
        return;
    }
    struct sy_store *admin = open_url(pg_url);
    char a[64], b[64], ua[512], ub[512], sql[256];
    snprintf(a, sizeof a, "sy_ref_%d", (int)getpid());
    snprintf(b, sizeof b, "sy_ours_%d", (int)getpid());
    const char *dbs[] = {a, b};
    for (int i = 0; i < 2; i++) {
        snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s", dbs[i]);
        ok_exec(admin, sql);
        snprintf(sql, sizeof sql, "CREATE DATABASE %s", dbs[i]);
        ok_exec(admin, sql);
    }
    url_with_db(pg_url, a, ua, sizeof ua);
    url_with_db(pg_url, b, ub, sizeof ub);
    assert_int_equal(psql_file(ua, schema), 0);
    struct sy_store *st = open_url(ub);
    assert_int_equal(sy_store_migrate(st), 0);
    sy_store_close(st);
    struct sy_buf ra, rb;
    sy_buf_init(&ra, 1 << 24);
    sy_buf_init(&rb, 1 << 24);
    ddl_snapshot(ua, &ra);
    ddl_snapshot(ub, &rb);
    assert_string_equal(ra.p, rb.p);
    sy_buf_free(&ra);
    sy_buf_free(&rb);
    for (int i = 0; i < 2; i++) {
        snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", dbs[i]);
        ok_exec(admin, sql);
    }
    sy_store_close(admin);
}

/* ---- a server that goes away ---------------------------------------------- */

static char pgsh[PATH_MAX];

static int find_pgsh(void)
{
    const char *e = getenv("SY_TEST_PG_SH");
    if (e && *e) {
        snprintf(pgsh, sizeof pgsh, "%s", e);
        return access(pgsh, R_OK) == 0;
    }
    /* __FILE__ is tests/unit/store/test_postgres.c, maybe relative to the build dir */
    char f[PATH_MAX - 64];
    snprintf(f, sizeof f, "%s", __FILE__);
    char *slash = strrchr(f, '/');
    if (!slash)
        return 0;
    *slash = 0;
    snprintf(pgsh, sizeof pgsh, "%s/../../lib/pg.sh", f);
    if (access(pgsh, R_OK) == 0)
        return 1;
    snprintf(pgsh, sizeof pgsh, "%s/tests/lib/pg.sh", SY_SOURCE_ROOT);
    return access(pgsh, R_OK) == 0;
}

static char down_dir[256], down_url[256];
static int down_port;

static int pg_start(void)
{
    char cmd[PATH_MAX + 600];
    snprintf(cmd, sizeof cmd, "bash '%s' start '%s' %d", pgsh, down_dir, down_port);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    down_url[0] = 0;
    if (!fgets(down_url, sizeof down_url, f))
        down_url[0] = 0;
    int rc = pclose(f);
    down_url[strcspn(down_url, "\n")] = 0;
    return rc == 0 && down_url[0] ? 0 : -1;
}

static void pg_stop(void)
{
    char cmd[PATH_MAX + 600];
    snprintf(cmd, sizeof cmd, "bash '%s' stop '%s'", pgsh, down_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "pg.sh stop failed\n");
}

struct slow {
    struct sy_store *st;
    int rc;
};

static void *slow_query(void *arg)
{
    struct slow *s = arg;
    s->rc = sy_store_exec(s->st, "SELECT pg_sleep(30)", 0, NULL, NULL, NULL);
    return NULL;
}

static int wait_up(struct sy_store *st)
{
    for (int i = 0; i < 100; i++) {
        if (sy_store_exec(st, "SELECT 1", 0, NULL, NULL, NULL) == 1)
            return 1;
        usleep(100000);
    }
    return 0;
}

static void server_goes_away(void **state)
{
    NEED_PG();
    if (!find_pgsh()) {
        skip();
        return;
    }
    snprintf(down_dir, sizeof down_dir, "/tmp/sy-pgdown-%d", (int)getpid());
    down_port = 20000 + (int)(getpid() % 20000);
    if (pg_start() != 0) {
        pg_stop();
        fail_msg("pg.sh start failed");
    }
    struct sy_store *st = open_url(down_url);
    assert_int_equal(sy_store_exec(st, "SELECT 1", 0, NULL, NULL, NULL), 1);
    assert_int_equal(sy_store_up(st), 1);

    /* stopped under a running query */
    struct slow s = {st, 0};
    pthread_t t;
    pthread_create(&t, NULL, slow_query, &s);
    usleep(500000);
    pg_stop();
    pthread_join(t, NULL);
    assert_int_equal(s.rc, SY_STORE_EDOWN);
    assert_int_equal(sy_store_up(st), 0);
    assert_true(strlen(sy_store_errmsg(st)) > 0);
    /* while down */
    assert_int_equal(sy_store_exec(st, "SELECT 1", 0, NULL, NULL, NULL), SY_STORE_EDOWN);
    assert_int_equal(sy_store_begin(st), SY_STORE_EDOWN);
    /* a store opened while the server is down is returned DOWN */
    struct sy_store *late = open_url(down_url);
    assert_int_equal(sy_store_up(late), 0);

    /* back */
    assert_int_equal(pg_start(), 0);
    assert_true(wait_up(st));
    assert_int_equal(sy_store_up(st), 1);
    assert_true(wait_up(late));
    sy_store_close(late);

    /* a transaction lost with the server */
    assert_int_equal(sy_store_begin(st), 0);
    assert_int_equal(sy_store_exec(st, "SELECT 1", 0, NULL, NULL, NULL), 1);
    pg_stop();
    assert_int_equal(sy_store_exec(st, "SELECT 2", 0, NULL, NULL, NULL), SY_STORE_EDOWN);
    assert_int_equal(sy_store_exec(st, "SELECT 3", 0, NULL, NULL, NULL), SY_STORE_EDOWN); /* still in it */
    assert_true(sy_store_rollback(st) <= 0);
    assert_int_equal(pg_start(), 0);
    assert_true(wait_up(st));
    /* a connection killed between calls is reconnected transparently */
    struct sy_store *killer = open_url(down_url);
    assert_int_equal(sy_store_exec(killer,
                                   "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = "
                                   "'switchyard' AND pid <> pg_backend_pid()",
                                   0, NULL, NULL, NULL),
                     1);
    assert_int_equal(sy_store_exec(st, "SELECT 1", 0, NULL, NULL, NULL), 1);
    sy_store_close(killer);
    sy_store_close(st);
    pg_stop();
}

int main(void)
{
    pg_url = getenv("SY_TEST_PG_URL");
    if (pg_url && !*pg_url)
        pg_url = NULL;
    suite_url = pg_url;
    if (!pg_url) {
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(pg_kinds),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        SUITE_TESTS,
        cmocka_unit_test(pg_kinds),
        cmocka_unit_test(litellm_existing),
        cmocka_unit_test(fresh_concurrent_migrate),
        cmocka_unit_test(same_as_litellm),
        cmocka_unit_test(server_goes_away),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
