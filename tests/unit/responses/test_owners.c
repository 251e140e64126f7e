/* test_owners.c - src/responses/owners.c: the access rule (same key, or same
 * non-empty user_id; nothing else), the memory ring (put / get / first owner
 * stays / the oldest dropped / list), and the "SwitchyardObject" table behind
 * it on a SQLite file, and on PostgreSQL when SY_TEST_PG_URL is set: a put
 * reaches the table, a get after memory was cleared finds it there on the
 * port's loop, a second owner does not replace the first, a list returns the
 * caller's ids of one kind only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "responses/owners.h"
#include "store/dbpool.h"
#include "store/store.h"

#define TOK_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define TOK_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define TOK_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

struct seen {
    int calls, rc;
    char token[80], user_id[80], team_id[80];
    int have_user, have_team;
    char **ids;
    size_t n;
};

static void on_rec(void *ud, int rc, const struct sy_own_rec *rec)
{
    struct seen *s = ud;
    s->calls++;
    s->rc = rc;
    s->token[0] = s->user_id[0] = s->team_id[0] = 0;
    s->have_user = s->have_team = 0;
    if (rec) {
        snprintf(s->token, sizeof s->token, "%s", rec->token ? rec->token : "");
        if ((s->have_user = rec->user_id != NULL))
            snprintf(s->user_id, sizeof s->user_id, "%s", rec->user_id);
        if ((s->have_team = rec->team_id != NULL))
            snprintf(s->team_id, sizeof s->team_id, "%s", rec->team_id);
    }
}

static void seen_free(struct seen *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->ids[i]);
    free(s->ids);
    memset(s, 0, sizeof *s);
}

static void on_list(void *ud, int rc, char *const *ids, size_t n)
{
    struct seen *s = ud;
    s->calls++;
    s->rc = rc;
    s->ids = calloc(n + 1, sizeof *s->ids);
    for (size_t i = 0; i < n; i++)
        s->ids[i] = strdup(ids[i]);
    s->n = n;
}

static void rule(void **state)
{
    (void)state;
    struct sy_own_rec r = {"file", "file-1", TOK_A, "u1", "t1", 0};
    assert_true(sy_own_allows(&r, TOK_A, NULL));
    assert_true(sy_own_allows(&r, TOK_A, "someone-else"));
    assert_true(sy_own_allows(&r, TOK_B, "u1")); /* another key of the same user */
    assert_false(sy_own_allows(&r, TOK_B, "u2"));
    assert_false(sy_own_allows(&r, TOK_B, NULL));
    assert_false(sy_own_allows(&r, TOK_B, ""));
    assert_false(sy_own_allows(&r, "", ""));
    assert_false(sy_own_allows(&r, NULL, NULL));
    assert_false(sy_own_allows(NULL, TOK_A, "u1"));
    /* the team does not grant access */
    assert_false(sy_own_allows(&r, TOK_B, "t1"));
    /* two keys without a user do not share (LiteLLM's None == None would) */
    struct sy_own_rec nouser = {"file", "file-2", TOK_A, NULL, "t1", 0};
    assert_false(sy_own_allows(&nouser, TOK_B, NULL));
    assert_false(sy_own_allows(&nouser, TOK_B, ""));
    struct sy_own_rec emptyuser = {"file", "file-3", TOK_A, "", NULL, 0};
    assert_false(sy_own_allows(&emptyuser, TOK_B, ""));
    assert_true(sy_own_allows(&emptyuser, TOK_A, ""));
}

static void memory(void **state)
{
    (void)state;
    sy_own_init(4);
    struct seen s = {0};
    sy_own_get(NULL, "file", "file-x", on_rec, &s);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.rc, 1);
    /* required fields */
    struct sy_own_rec bad = {"file", "file-x", NULL, "u", NULL, 0};
    sy_own_put(NULL, &bad);
    bad.token = "";
    sy_own_put(NULL, &bad);
    sy_own_get(NULL, "file", "file-x", on_rec, &s);
    assert_int_equal(s.rc, 1);
    struct sy_own_rec r = {"file", "file-1", TOK_A, "u1", "t1", 0};
    sy_own_put(NULL, &r);
    sy_own_get(NULL, "file", "file-1", on_rec, &s);
    assert_int_equal(s.rc, 0);
    assert_string_equal(s.token, TOK_A);
    assert_string_equal(s.user_id, "u1");
    assert_string_equal(s.team_id, "t1");
    /* the kind is part of the name */
    sy_own_get(NULL, "batch", "file-1", on_rec, &s);
    assert_int_equal(s.rc, 1);
    /* the first owner stays */
    struct sy_own_rec r2 = {"file", "file-1", TOK_B, NULL, NULL, 0};
    sy_own_put(NULL, &r2);
    sy_own_get(NULL, "file", "file-1", on_rec, &s);
    assert_string_equal(s.token, TOK_A);
    /* a list: the caller's of one kind, sorted */
    struct sy_own_rec more[] = {{"file", "file-3", TOK_B, "u1", NULL, 0},
                                {"batch", "batch-1", TOK_A, NULL, NULL, 0},
                                {"file", "file-2", TOK_C, NULL, NULL, 0}};
    for (int i = 0; i < 3; i++)
        sy_own_put(NULL, &more[i]);
    struct seen l = {0};
    sy_own_list(NULL, "file", TOK_A, "u1", 100, on_list, &l);
    assert_int_equal(l.calls, 1);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.ids[0], "file-1");
    assert_string_equal(l.ids[1], "file-3");
    assert_true(sy_own_has(l.ids, l.n, "file-3"));
    assert_false(sy_own_has(l.ids, l.n, "file-2"));
    assert_false(sy_own_has(l.ids, l.n, NULL));
    seen_free(&l);
    sy_own_list(NULL, "file", TOK_C, NULL, 100, on_list, &l);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.ids[0], "file-2");
    seen_free(&l);
    /* max bounds the list */
    sy_own_list(NULL, "file", TOK_A, "u1", 1, on_list, &l);
    assert_int_equal(l.n, 1);
    seen_free(&l);
    /* a fifth put drops the oldest (file-1) from the ring of 4 */
    struct sy_own_rec r5 = {"file", "file-5", TOK_A, NULL, NULL, 0};
    sy_own_put(NULL, &r5);
    sy_own_get(NULL, "file", "file-1", on_rec, &s);
    assert_int_equal(s.rc, 1);
    sy_own_get(NULL, "file", "file-5", on_rec, &s);
    assert_int_equal(s.rc, 0);
    sy_own_shutdown();
    sy_own_get(NULL, "file", "file-5", on_rec, &s);
    assert_int_equal(s.rc, 1);
    sy_own_put(NULL, &r5); /* after shutdown: dropped, no crash */
}

/* ---- the database ------------------------------------------------------------ */

static const char *db_url;
static char sqlite_path[512];
static uv_loop_t loop;
static struct sy_db_port *port;
static int timed_out;

static void on_timeout(uv_timer_t *t)
{
    (void)t;
    timed_out = 1;
}

static void wait_calls(struct seen *s, int want)
{
    uv_timer_t t;
    uv_timer_init(&loop, &t);
    timed_out = 0;
    uv_timer_start(&t, on_timeout, 10000, 0);
    while (s->calls < want && !timed_out)
        uv_run(&loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(s->calls, want);
}

static void rm_sqlite(void)
{
    char f[600];
    unlink(sqlite_path);
    snprintf(f, sizeof f, "%s-wal", sqlite_path);
    unlink(f);
    snprintf(f, sizeof f, "%s-shm", sqlite_path);
    unlink(f);
}

static int clear_table(struct sy_store *st, void *arg)
{
    (void)arg;
    return sy_store_exec(st, "DELETE FROM \"SwitchyardObject\"", 0, NULL, NULL, NULL) < 0 ? -1 : 0;
}

static int db_setup(void **state)
{
    (void)state;
    if (sy_store_url_kind(db_url) == SY_STORE_SQLITE)
        rm_sqlite();
    struct sy_store_conf conf = {.url = db_url, .busy_timeout_s = 10};
    char err[256];
    if (sy_db_start(&conf, 2, 1, err, sizeof err) != 0) {
        print_error("start: %s\n", err);
        return -1;
    }
    if (sy_db_run_sync(clear_table, NULL) != 0)
        return -1;
    uv_loop_init(&loop);
    port = sy_db_port_new(&loop);
    return 0;
}

static int db_teardown(void **state)
{
    (void)state;
    sy_db_port_free(port);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    sy_db_stop();
    if (sy_store_url_kind(db_url) == SY_STORE_SQLITE)
        rm_sqlite();
    return 0;
}

struct count_arg {
    const char *id;
    int64_t n;
};

static int count_cb(void *ud, const struct sy_srow *r)
{
    *(int64_t *)ud = sy_srow_int(r, "c", -1);
    return 0;
}

static int count_fn(struct sy_store *st, void *arg)
{
    struct count_arg *a = arg;
    struct sy_sval p = sy_sv_text(a->id);
    a->n = -1;
    return sy_store_exec(st, "SELECT COUNT(*) AS c FROM \"SwitchyardObject\" WHERE \"id\" = $1", 1, &p, count_cb,
                         &a->n) < 0
               ? -1
               : 0;
}

static void wait_written(const char *id)
{
    struct count_arg a = {id, -1};
    for (int i = 0; i < 500; i++) {
        assert_int_equal(sy_db_run_sync(count_fn, &a), 0);
        if (a.n == 1)
            return;
        usleep(10000);
    }
    fail_msg("%s never reached the database", id);
}

static void db_roundtrip(void **state)
{
    (void)state;
    sy_own_init(16);
    struct sy_own_rec r = {"file", "file-db1", TOK_A, "u1", "t1", 1700000000.5};
    sy_own_put(port, &r);
    struct sy_own_rec r2 = {"response", "resp-db2", TOK_B, NULL, NULL, 0};
    sy_own_put(port, &r2);
    wait_written("file-db1");
    wait_written("resp-db2");
    /* a second owner of the same (kind, id) does not replace the first */
    struct sy_own_rec thief = {"file", "file-db1", TOK_C, "u9", "t9", 0};
    sy_own_put(port, &thief);
    sy_own_init(16); /* memory cleared: the database answers */
    struct seen s = {0};
    /* the thief's write is a nowait job: give it time to land (or not) */
    usleep(200000);
    sy_own_get(port, "file", "file-db1", on_rec, &s);
    wait_calls(&s, 1);
    assert_int_equal(s.rc, 0);
    assert_string_equal(s.token, TOK_A);
    assert_string_equal(s.user_id, "u1");
    assert_string_equal(s.team_id, "t1");
    s.calls = 0;
    sy_own_get(port, "response", "resp-db2", on_rec, &s);
    wait_calls(&s, 1);
    assert_int_equal(s.rc, 0);
    assert_string_equal(s.token, TOK_B);
    assert_false(s.have_user);
    assert_false(s.have_team);
    s.calls = 0;
    sy_own_get(port, "batch", "file-db1", on_rec, &s);
    wait_calls(&s, 1);
    assert_int_equal(s.rc, 1);
    /* a list: the database's rows plus memory's not yet written */
    struct sy_own_rec fresh = {"file", "file-mem", TOK_B, "u1", NULL, 0};
    sy_own_put(NULL, &fresh); /* memory only */
    struct seen l = {0};
    sy_own_list(port, "file", TOK_A, "u1", 100, on_list, &l);
    wait_calls(&l, 1);
    assert_int_equal(l.rc, 0);
    assert_int_equal(l.n, 2);
    assert_true(sy_own_has(l.ids, l.n, "file-db1"));
    assert_true(sy_own_has(l.ids, l.n, "file-mem"));
    seen_free(&l);
    sy_own_list(port, "file", TOK_C, "u9", 100, on_list, &l);
    wait_calls(&l, 1);
    assert_int_equal(l.n, 0);
    seen_free(&l);
    sy_own_list(port, "response", TOK_B, NULL, 100, on_list, &l);
    wait_calls(&l, 1);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.ids[0], "resp-db2");
    seen_free(&l);
    sy_own_shutdown();
}

static void pg_skipped(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest mem[] = {
        cmocka_unit_test(rule),
        cmocka_unit_test(memory),
    };
    const struct CMUnitTest db[] = {
        cmocka_unit_test(db_roundtrip),
    };
    int fails = cmocka_run_group_tests_name("responses_owners_memory", mem, NULL, NULL);
    const char *tmp = getenv("TMPDIR");
    snprintf(sqlite_path, sizeof sqlite_path, "%s/sy_test_owners_%d.db", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    db_url = sqlite_path;
    fails += cmocka_run_group_tests_name("responses_owners_sqlite", db, db_setup, db_teardown);
    const char *pg = getenv("SY_TEST_PG_URL");
    if (pg && *pg) {
        db_url = pg;
        fails += cmocka_run_group_tests_name("responses_owners_postgres", db, db_setup, db_teardown);
    } else {
        const struct CMUnitTest skipped[] = {cmocka_unit_test(pg_skipped)};
        fails += cmocka_run_group_tests_name("responses_owners_postgres", skipped, NULL, NULL);
    }
    return fails;
}
