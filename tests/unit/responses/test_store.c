/* test_store.c - src/responses/store.c: the in-memory table (put / get /
 * delete, replacing, NULL fields, LRU eviction by bytes, a record too big to
 * keep, threads hammering it) and the "SwitchyardResponse" table behind it on
 * a SQLite file, and on PostgreSQL when SY_TEST_PG_URL is set: a put reaches
 * the database (upsert on id), a get after memory was cleared finds it there
 * (asynchronously, on the port's loop) and puts it back into memory, delete
 * answers 0 / 1 from memory or the database. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "responses/store.h"
#include "store/dbpool.h"
#include "store/store.h"

/* JSON written the way PostgreSQL's jsonb writes it back (shorter keys
 * first, ", " and ": "), so both backends return the same text. */
#define RESP_JSON  "{\"id\": \"%s\", \"model\": \"gpt-4o\", \"object\": \"response\"}"
#define ITEMS_JSON "[{\"role\": \"user\", \"type\": \"message\", \"content\": \"hi\"}]"
#define HIST_JSON  "[{\"role\": \"user\", \"type\": \"message\", \"content\": \"before\"}]"

/* What a callback saw. */
struct seen {
    int calls, rc;
    struct sy_rs_rec rec; /* copies */
};

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void on_rec(void *ud, int rc, const struct sy_rs_rec *rec)
{
    struct seen *s = ud;
    s->calls++;
    s->rc = rc;
    sy_rs_rec_free(&s->rec);
    if (rec) {
        s->rec.id = dup_or_null(rec->id);
        s->rec.model_id = dup_or_null(rec->model_id);
        s->rec.model = dup_or_null(rec->model);
        s->rec.owner = dup_or_null(rec->owner);
        s->rec.response = dup_or_null(rec->response);
        s->rec.input_items = dup_or_null(rec->input_items);
        s->rec.history = dup_or_null(rec->history);
        s->rec.created_at = rec->created_at;
    }
}

static void seen_reset(struct seen *s)
{
    sy_rs_rec_free(&s->rec);
    memset(s, 0, sizeof *s);
}

/* A record of ours (malloc'd strings) for id. */
static void make_rec(struct sy_rs_rec *r, const char *id, double created)
{
    char resp[256];
    snprintf(resp, sizeof resp, RESP_JSON, id);
    r->id = strdup(id);
    r->model_id = strdup("deploy-1");
    r->model = strdup("gpt-4o");
    r->owner = strdup("88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b");
    r->response = strdup(resp);
    r->input_items = strdup(ITEMS_JSON);
    r->history = strdup(HIST_JSON);
    r->created_at = created;
}

static void assert_same(const struct sy_rs_rec *a, const struct sy_rs_rec *b)
{
    assert_string_equal(a->id, b->id);
    assert_string_equal(a->model_id, b->model_id);
    assert_string_equal(a->model, b->model);
    assert_string_equal(a->owner, b->owner);
    assert_string_equal(a->response, b->response);
    assert_string_equal(a->input_items, b->input_items);
    assert_string_equal(a->history, b->history);
    assert_true(fabs(a->created_at - b->created_at) < 0.002); /* the database keeps milliseconds */
}

/* ---- memory only ----------------------------------------------------------- */

static void mem_put_get_del(void **state)
{
    (void)state;
    sy_rs_init(1 << 20);
    struct seen s = {0};
    struct sy_rs_rec r = {0};
    make_rec(&r, "resp_mem1", 1765000000.25);

    sy_rs_get(NULL, "resp_mem1", on_rec, &s);
    assert_int_equal(s.calls, 1); /* synchronous without a database */
    assert_int_equal(s.rc, 1);
    assert_null(s.rec.id);

    sy_rs_put(NULL, &r);
    r.response[2] = 'X'; /* the store keeps its own copy */
    seen_reset(&s);
    sy_rs_get(NULL, "resp_mem1", on_rec, &s);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.rc, 0);
    r.response[2] = 'i';
    assert_same(&s.rec, &r);
    assert_true(s.rec.created_at == r.created_at);

    /* replacing */
    free(r.history);
    r.history = strdup("[]");
    sy_rs_put(NULL, &r);
    seen_reset(&s);
    sy_rs_get(NULL, "resp_mem1", on_rec, &s);
    assert_int_equal(s.rc, 0);
    assert_string_equal(s.rec.history, "[]");

    /* NULL fields stay NULL; a record without an id is ignored */
    struct sy_rs_rec n = {.id = "resp_nulls", .response = "{}"};
    sy_rs_put(NULL, &n);
    seen_reset(&s);
    sy_rs_get(NULL, "resp_nulls", on_rec, &s);
    assert_int_equal(s.rc, 0);
    assert_string_equal(s.rec.response, "{}");
    assert_null(s.rec.owner);
    assert_null(s.rec.history);
    struct sy_rs_rec noid = {.response = "{}"};
    sy_rs_put(NULL, &noid);

    /* delete */
    seen_reset(&s);
    sy_rs_del(NULL, "resp_mem1", on_rec, &s);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.rc, 0);
    seen_reset(&s);
    sy_rs_get(NULL, "resp_mem1", on_rec, &s);
    assert_int_equal(s.rc, 1);
    seen_reset(&s);
    sy_rs_del(NULL, "resp_mem1", on_rec, &s);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.rc, 1);
    seen_reset(&s);
    sy_rs_get(NULL, NULL, on_rec, &s);
    assert_int_equal(s.rc, 1);

    /* after shutdown (or before init) everything is a miss, nothing crashes */
    sy_rs_shutdown();
    sy_rs_put(NULL, &r);
    seen_reset(&s);
    sy_rs_get(NULL, "resp_nulls", on_rec, &s);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.rc, 1);
    seen_reset(&s);
    sy_rs_del(NULL, "resp_nulls", on_rec, &s);
    assert_int_equal(s.rc, 1);
    sy_rs_shutdown(); /* twice is fine */
    seen_reset(&s);
    sy_rs_rec_free(&r);
    sy_rs_rec_free(&r); /* zeroed: a no-op */
}

/* A record whose response is `size` bytes. */
static void big_rec(struct sy_rs_rec *r, const char *id, size_t size)
{
    memset(r, 0, sizeof *r);
    r->id = strdup(id);
    r->response = malloc(size + 1);
    memset(r->response, 'a', size);
    r->response[0] = '"', r->response[size - 1] = '"', r->response[size] = 0;
}

static int present(const char *id)
{
    struct seen s = {0};
    sy_rs_get(NULL, id, on_rec, &s);
    int rc = s.rc;
    seen_reset(&s);
    return rc == 0;
}

static void eviction(void **state)
{
    (void)state;
    /* each record ~1000 bytes of JSON plus its header (< 200): three fit in 3600, four do not */
    sy_rs_init(3600);
    struct sy_rs_rec r[6];
    const char *ids[6] = {"resp_a", "resp_b", "resp_c", "resp_d", "resp_e", "resp_f"};
    for (int i = 0; i < 6; i++)
        big_rec(&r[i], ids[i], 1000);
    sy_rs_put(NULL, &r[0]);
    sy_rs_put(NULL, &r[1]);
    sy_rs_put(NULL, &r[2]);
    assert_true(present("resp_a") && present("resp_b") && present("resp_c"));
    /* order now (most recent first): c b a; touch a -> a c b */
    assert_true(present("resp_a"));
    sy_rs_put(NULL, &r[3]); /* evicts b, the least recently used */
    assert_false(present("resp_b"));
    assert_true(present("resp_a"));
    assert_true(present("resp_c"));
    assert_true(present("resp_d"));
    sy_rs_put(NULL, &r[4]); /* order was d c a -> evicts a */
    sy_rs_put(NULL, &r[5]); /* evicts c */
    assert_false(present("resp_a"));
    assert_false(present("resp_c"));
    assert_true(present("resp_d") && present("resp_e") && present("resp_f"));

    /* a record larger than the whole bound is not kept, and evicts nothing */
    struct sy_rs_rec huge;
    big_rec(&huge, "resp_huge", 5000);
    sy_rs_put(NULL, &huge);
    assert_false(present("resp_huge"));
    assert_true(present("resp_d") && present("resp_e") && present("resp_f"));

    /* a bigger record replacing a small one still respects the bound */
    struct sy_rs_rec d2;
    big_rec(&d2, "resp_d", 2000);
    sy_rs_put(NULL, &d2); /* 2000 + e + f > 3600: the LRU of e, f goes */
    assert_true(present("resp_d"));
    assert_int_equal(present("resp_e") + present("resp_f"), 1);

    sy_rs_rec_free(&huge);
    sy_rs_rec_free(&d2);
    for (int i = 0; i < 6; i++)
        sy_rs_rec_free(&r[i]);
    sy_rs_shutdown();
}

/* ---- threads --------------------------------------------------------------- */

#define NTHREADS 4
#define NOPS     20000
#define NIDS     300

struct hammer {
    unsigned seed;
    int bad;
    int hits;
};

static void check_rec(void *ud, int rc, const struct sy_rs_rec *rec)
{
    struct hammer *h = ((struct hammer **)ud)[0];
    const char *want = ((const char **)ud)[1];
    if (rc == 0) {
        char resp[256];
        snprintf(resp, sizeof resp, RESP_JSON, want);
        if (!rec || strcmp(rec->id, want) || strcmp(rec->response, resp) || strcmp(rec->history, HIST_JSON))
            h->bad++;
        h->hits++;
    } else if (rc != 1 || rec) {
        h->bad++;
    }
}

static void check_del(void *ud, int rc, const struct sy_rs_rec *rec)
{
    struct hammer *h = ((struct hammer **)ud)[0];
    if ((rc != 0 && rc != 1) || rec)
        h->bad++;
}

static void *hammer_thread(void *arg)
{
    struct hammer *h = arg;
    for (int i = 0; i < NOPS; i++) {
        char id[32];
        int n = (int)(rand_r(&h->seed) % NIDS), op = (int)(rand_r(&h->seed) % 10);
        snprintf(id, sizeof id, "resp_t%03d", n);
        void *ud[2] = {h, id};
        if (op < 4) {
            struct sy_rs_rec r;
            make_rec(&r, id, 1.0 * i);
            sy_rs_put(NULL, &r);
            sy_rs_rec_free(&r);
        } else if (op < 9) {
            sy_rs_get(NULL, id, check_rec, ud);
        } else {
            sy_rs_del(NULL, id, check_del, ud);
        }
    }
    return NULL;
}

static void threads(void **state)
{
    (void)state;
    sy_rs_init(64 * 1024); /* ~150 records of the 300 ids: eviction all the time */
    pthread_t t[NTHREADS];
    struct hammer h[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        h[i] = (struct hammer){.seed = 1234u + (unsigned)i};
        pthread_create(&t[i], NULL, hammer_thread, &h[i]);
    }
    int hits = 0;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(h[i].bad, 0);
        hits += h[i].hits;
    }
    assert_true(hits > 0);
    sy_rs_shutdown();
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

/* Run the loop until s->calls reaches want (or 10 s pass). */
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
    return sy_store_exec(st, "DELETE FROM \"SwitchyardResponse\"", 0, NULL, NULL, NULL) < 0 ? -1 : 0;
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
    const char *id, *response; /* response NULL: any */
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
    struct sy_sval p[] = {sy_sv_text(a->id), sy_sv_text(a->response)};
    a->n = -1;
    int rc = a->response ? sy_store_exec(st,
                                         "SELECT COUNT(*) AS c FROM \"SwitchyardResponse\" WHERE \"id\" = $1 AND "
                                         "CAST(\"response\" AS TEXT) = $2",
                                         2, p, count_cb, &a->n)
                         : sy_store_exec(st, "SELECT COUNT(*) AS c FROM \"SwitchyardResponse\" WHERE \"id\" = $1", 1, p,
                                         count_cb, &a->n);
    return rc < 0 ? -1 : 0;
}

/* Wait until the background write of id (with that response text, when given) is in the database. */
static void wait_written(const char *id, const char *response)
{
    struct count_arg a = {id, response, -1};
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
    char id[64];
    snprintf(id, sizeof id, "resp_db%d", (int)getpid());
    sy_rs_init(1 << 20);
    struct sy_rs_rec r = {0};
    make_rec(&r, id, 1765000000.123);
    struct seen s = {0};

    sy_rs_put(port, &r);
    wait_written(id, NULL);

    /* an upsert: the second put replaces the row */
    free(r.response);
    r.response = strdup("{\"id\": \"second\", \"object\": \"response\"}");
    sy_rs_put(port, &r);
    wait_written(id, r.response);

    /* memory cleared: found in the database, on the loop, then in memory again */
    sy_rs_shutdown();
    sy_rs_init(1 << 20);
    sy_rs_get(port, id, on_rec, &s);
    assert_int_equal(s.calls, 0); /* not before sy_rs_get returns */
    wait_calls(&s, 1);
    assert_int_equal(s.rc, 0);
    assert_same(&s.rec, &r);
    seen_reset(&s);
    sy_rs_get(port, id, on_rec, &s);
    assert_int_equal(s.calls, 1); /* a memory hit: synchronous */
    assert_int_equal(s.rc, 0);
    assert_same(&s.rec, &r);

    /* a miss in both */
    seen_reset(&s);
    sy_rs_get(port, "resp_nosuch", on_rec, &s);
    wait_calls(&s, 1);
    assert_int_equal(s.rc, 1);
    assert_null(s.rec.id);

    /* delete: in both, then in neither */
    seen_reset(&s);
    sy_rs_del(port, id, on_rec, &s);
    assert_int_equal(s.calls, 0);
    wait_calls(&s, 1);
    assert_int_equal(s.rc, 0);
    struct count_arg a = {id, NULL, -1};
    assert_int_equal(sy_db_run_sync(count_fn, &a), 0);
    assert_int_equal(a.n, 0);
    seen_reset(&s);
    sy_rs_get(port, id, on_rec, &s);
    wait_calls(&s, 1);
    assert_int_equal(s.rc, 1);
    seen_reset(&s);
    sy_rs_del(port, id, on_rec, &s);
    wait_calls(&s, 1);
    assert_int_equal(s.rc, 1);

    /* delete of a record only the database has (another instance wrote it) */
    sy_rs_put(port, &r);
    wait_written(id, r.response);
    sy_rs_shutdown();
    sy_rs_init(1 << 20);
    seen_reset(&s);
    sy_rs_del(port, id, on_rec, &s);
    wait_calls(&s, 1);
    assert_int_equal(s.rc, 0);
    assert_int_equal(sy_db_run_sync(count_fn, &a), 0);
    assert_int_equal(a.n, 0);

    /* NULL fields round-trip as NULL */
    char nid[64];
    snprintf(nid, sizeof nid, "resp_dbnull%d", (int)getpid());
    struct sy_rs_rec n = {.id = nid, .response = "{}", .created_at = 1765000000};
    sy_rs_put(port, &n);
    wait_written(nid, NULL);
    sy_rs_shutdown();
    sy_rs_init(1 << 20);
    seen_reset(&s);
    sy_rs_get(port, nid, on_rec, &s);
    wait_calls(&s, 1);
    assert_int_equal(s.rc, 0);
    assert_string_equal(s.rec.response, "{}");
    assert_null(s.rec.owner);
    assert_null(s.rec.history);
    assert_true(s.rec.created_at == 1765000000);

    /* port NULL: memory only, even with the database on */
    sy_rs_shutdown();
    sy_rs_init(1 << 20);
    seen_reset(&s);
    sy_rs_get(NULL, nid, on_rec, &s);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.rc, 1);

    seen_reset(&s);
    sy_rs_rec_free(&r);
    sy_rs_shutdown();
}

/* The migration made the table with the declared types of store.h. */
static int types_cb(void *ud, const struct sy_srow *r)
{
    char *out = ud;
    const char *c = sy_srow_text(r, "c"), *t = sy_srow_text(r, "t");
    size_t n = strlen(out);
    snprintf(out + n, 1024 - n, "%s %s,", c ? c : "?", t ? t : "?");
    return 0;
}

static int types_fn(struct sy_store *st, void *arg)
{
    const char *sql = sy_store_kind(st) == SY_STORE_SQLITE
                          ? "SELECT name AS c, type AS t FROM pragma_table_info('SwitchyardResponse') ORDER BY cid"
                          : "SELECT CAST(column_name AS TEXT) AS c, CAST(udt_name AS TEXT) AS t FROM "
                            "information_schema.columns WHERE table_schema = current_schema() AND table_name = "
                            "'SwitchyardResponse' ORDER BY ordinal_position";
    return sy_store_exec(st, sql, 0, NULL, types_cb, arg) < 0 ? -1 : 0;
}

static void db_table(void **state)
{
    (void)state;
    char out[1024] = "";
    assert_int_equal(sy_db_run_sync(types_fn, out), 0);
    if (sy_db_kind() == SY_STORE_SQLITE)
        assert_string_equal(out, "id TEXT,model_id TEXT,model TEXT,owner TEXT,response JSONTEXT,input_items JSONTEXT,"
                                 "history JSONTEXT,created_at TIMESTAMP,");
    else
        assert_string_equal(out, "id text,model_id text,model text,owner text,response jsonb,input_items jsonb,"
                                 "history jsonb,created_at timestamp,");
}

static void pg_skipped(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest mem[] = {
        cmocka_unit_test(mem_put_get_del),
        cmocka_unit_test(eviction),
        cmocka_unit_test(threads),
    };
    const struct CMUnitTest db[] = {
        cmocka_unit_test(db_table),
        cmocka_unit_test(db_roundtrip),
    };
    int fails = cmocka_run_group_tests_name("responses_store_memory", mem, NULL, NULL);
    const char *tmp = getenv("TMPDIR");
    snprintf(sqlite_path, sizeof sqlite_path, "%s/sy_test_rstore_%d.db", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    db_url = sqlite_path;
    fails += cmocka_run_group_tests_name("responses_store_sqlite", db, db_setup, db_teardown);
    const char *pg = getenv("SY_TEST_PG_URL");
    if (pg && *pg) {
        db_url = pg;
        fails += cmocka_run_group_tests_name("responses_store_postgres", db, db_setup, db_teardown);
    } else {
        const struct CMUnitTest skipped[] = {cmocka_unit_test(pg_skipped)};
        fails += cmocka_run_group_tests_name("responses_store_postgres", skipped, NULL, NULL);
    }
    return fails;
}
