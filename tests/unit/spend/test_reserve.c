/* test_reserve.c - budget reservations (src/spend/reserve.c) on SQLite, and on
 * PostgreSQL when SY_TEST_PG_URL is set.
 *
 * Covered: the admit rule (sy_reserve_fit: admit while spend < max_budget,
 * take min(amount, what is left)); bounded under concurrency (8 threads x 50
 * reservations of 1.0 against max_budget 100: exactly 100 succeed, spend ends
 * at exactly 100, on the key and on the team reserved alongside it; of 0.7
 * against 10: 15 succeed, the last cut to 0.2, spend exactly 10); a refusal
 * names the entity and its spend and rolls back what was taken from the
 * entities before it; a missing row (membership) is skipped; team membership
 * ids "team\nuser"; nothing to reserve; sy_ent_name; durable reservation rows
 * (one per entity, a top-up adds to them, the settle deletes them, a lapsed
 * owner's rows are reclaimed and their amounts given back, a live owner's
 * are not, an in-doubt id is); the in-memory ledger's same rule.
 */
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
#include <time.h>
#include <unistd.h>

#include "spend/spend.h"
#include "store/store.h"

static const char *url;
static char sqlite_path[256];

static struct sy_store *open_st(void)
{
    struct sy_store_conf conf = {.url = url, .connect_timeout_s = 3, .busy_timeout_s = 10};
    char err[256];
    struct sy_store *st = sy_store_open(&conf, err, sizeof err);
    if (!st)
        fail_msg("open %s: %s", url, err);
    return st;
}

static void exec_ok(struct sy_store *st, const char *sql, int n, const struct sy_sval *p)
{
    int rc = sy_store_exec(st, sql, n, p, NULL, NULL);
    if (rc < 0)
        fail_msg("%s: %s", sql, sy_store_errmsg(st));
}

static int num_cb(void *ud, const struct sy_srow *r)
{
    *(double *)ud = r->ncols > 0 && r->v[0].k == SY_SV_NUM ? r->v[0].d
                    : r->v[0].k == SY_SV_INT               ? (double)r->v[0].i
                                                           : NAN;
    return 1;
}

static double num1(struct sy_store *st, const char *sql, const char *arg)
{
    double d = NAN;
    struct sy_sval p = sy_sv_text(arg);
    int rc = sy_store_exec(st, sql, arg ? 1 : 0, &p, num_cb, &d);
    if (rc < 0)
        fail_msg("%s: %s", sql, sy_store_errmsg(st));
    return d;
}

static void seed(struct sy_store *st)
{
    static const char *const tables[] = {"LiteLLM_VerificationToken", "LiteLLM_UserTable",
                                         "LiteLLM_TeamTable",         "LiteLLM_TeamMembership",
                                         "LiteLLM_EndUserTable",      "LiteLLM_OrganizationTable"};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "DELETE FROM \"%s\"", tables[i]);
        exec_ok(st, sql, 0, NULL);
    }
    exec_ok(st,
            "INSERT INTO \"LiteLLM_VerificationToken\" (\"token\", \"spend\", \"max_budget\") VALUES ('k1', 0, 100)", 0,
            NULL);
    exec_ok(st, "INSERT INTO \"LiteLLM_UserTable\" (\"user_id\", \"spend\", \"max_budget\") VALUES ('u1', 0, 1000)", 0,
            NULL);
    exec_ok(st, "INSERT INTO \"LiteLLM_TeamTable\" (\"team_id\", \"spend\", \"max_budget\") VALUES ('t1', 0, 1000)", 0,
            NULL);
    exec_ok(st, "INSERT INTO \"LiteLLM_TeamMembership\" (\"team_id\", \"user_id\", \"spend\") VALUES ('t1', 'u1', 0)",
            0, NULL);
    exec_ok(st, "INSERT INTO \"LiteLLM_EndUserTable\" (\"user_id\", \"spend\") VALUES ('eu1', 0)", 0, NULL);
    exec_ok(st,
            "INSERT INTO \"LiteLLM_OrganizationTable\" (\"organization_id\", \"organization_alias\", \"budget_id\", "
            "\"spend\", \"created_by\", \"updated_by\") VALUES ('o1', 'org', 'b1', 0, 'x', 'x')",
            0, NULL);
}

static int setup(void **state)
{
    struct sy_store *st = open_st();
    if (sy_store_migrate(st) < 0)
        fail_msg("migrate: %s", sy_store_errmsg(st));
    seed(st);
    *state = st;
    return 0;
}

static int teardown(void **state)
{
    sy_store_close(*state);
    return 0;
}

/* ---- concurrency ---- */

struct worker {
    int ok, refused, errors;
};

static double loop_amount = 1.0, loop_budget = 100;

static void *reserve_loop(void *arg)
{
    struct worker *w = arg;
    struct sy_store *st = open_st();
    for (int i = 0; i < 50; i++) {
        struct sy_reserve r;
        memset(&r, 0, sizeof r);
        r.id[SY_ENT_KEY] = "k1";
        r.max_budget[SY_ENT_KEY] = loop_budget;
        r.id[SY_ENT_TEAM] = "t1";
        r.max_budget[SY_ENT_TEAM] = 1000;
        r.amount = loop_amount;
        int rc = sy_reserve_take(st, &r);
        if (rc < 0)
            w->errors++;
        else if (r.refused)
            w->refused++;
        else
            w->ok++;
    }
    sy_store_close(st);
    return NULL;
}

static void test_exact_concurrent(void **state)
{
    struct sy_store *st = *state;
    pthread_t t[8];
    struct worker w[8];
    memset(w, 0, sizeof w);
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, reserve_loop, &w[i]);
    int ok = 0, refused = 0, errors = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        ok += w[i].ok;
        refused += w[i].refused;
        errors += w[i].errors;
    }
    assert_int_equal(errors, 0);
    assert_int_equal(ok, 100);
    assert_int_equal(refused, 300);
    assert_true(num1(st, "SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = $1", "k1") == 100.0);
    /* refused reservations took nothing from the team either */
    assert_true(num1(st, "SELECT \"spend\" FROM \"LiteLLM_TeamTable\" WHERE \"team_id\" = $1", "t1") == 100.0);
}

/* 0.7 against 10: 14 whole reservations (9.8), a 15th cut to 0.2, then none */
static void test_bounded_concurrent(void **state)
{
    struct sy_store *st = *state;
    seed(st);
    loop_amount = 0.7;
    loop_budget = 10;
    pthread_t t[8];
    struct worker w[8];
    memset(w, 0, sizeof w);
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, reserve_loop, &w[i]);
    int ok = 0, errors = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        ok += w[i].ok;
        errors += w[i].errors;
    }
    loop_amount = 1.0;
    loop_budget = 100;
    assert_int_equal(errors, 0);
    assert_int_equal(ok, 15);
    assert_true(
        fabs(num1(st, "SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = $1", "k1") - 10.0) < 1e-9);
}

static void test_fit(void **state)
{
    (void)state;
    assert_true(sy_reserve_fit(0, 0.001, 0.5) == 0.001); /* a budget below one call's worst case: admitted */
    assert_true(sy_reserve_fit(0.2, 1, 0.5) == 0.5);
    assert_true(fabs(sy_reserve_fit(0.7, 1, 0.5) - 0.3) < 1e-15);
    assert_true(sy_reserve_fit(1, 1, 0.5) < 0);   /* nothing left */
    assert_true(sy_reserve_fit(1.2, 1, 0.5) < 0); /* past it */
    assert_true(sy_reserve_fit(0, 0, 0.5) < 0);   /* a budget of 0 */
    assert_true(sy_reserve_fit(0.5, 1, 0) == 0);  /* a free call */
}

/* ---- refusal ---- */

static void test_refusal_reports_entity(void **state)
{
    struct sy_store *st = *state;
    seed(st);
    exec_ok(st, "UPDATE \"LiteLLM_VerificationToken\" SET \"spend\" = 9.5 WHERE \"token\" = 'k1'", 0, NULL);
    exec_ok(st, "UPDATE \"LiteLLM_TeamTable\" SET \"spend\" = 5 WHERE \"team_id\" = 't1'", 0, NULL);
    struct sy_reserve r;
    memset(&r, 0, sizeof r);
    r.id[SY_ENT_KEY] = "k1";
    r.max_budget[SY_ENT_KEY] = 10;
    r.id[SY_ENT_USER] = "u1";
    r.max_budget[SY_ENT_USER] = 1000;
    r.id[SY_ENT_TEAM] = "t1";
    r.max_budget[SY_ENT_TEAM] = 5;
    r.amount = 0.8;
    assert_int_equal(sy_reserve_take(st, &r), 0);
    assert_int_equal(r.refused, 1);
    assert_int_equal(r.refused_ent, SY_ENT_TEAM);
    assert_true(r.current_spend == 5);
    assert_string_equal(sy_ent_name(r.refused_ent), "team");
    /* rolled back: key and user unchanged */
    assert_true(num1(st, "SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = $1", "k1") == 9.5);
    assert_true(num1(st, "SELECT \"spend\" FROM \"LiteLLM_UserTable\" WHERE \"user_id\" = $1", "u1") == 0);

    /* something left everywhere: admitted, each entity gives what it has */
    r.max_budget[SY_ENT_TEAM] = 5.3;
    assert_int_equal(sy_reserve_take(st, &r), 0);
    assert_int_equal(r.refused, 0);
    assert_true(r.taken[SY_ENT_KEY] == 0.5);
    assert_true(r.taken[SY_ENT_USER] == 0.8);
    assert_true(fabs(r.taken[SY_ENT_TEAM] - 0.3) < 1e-9);
    assert_true(num1(st, "SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = $1", "k1") == 10.0);
    assert_true(num1(st, "SELECT \"spend\" FROM \"LiteLLM_UserTable\" WHERE \"user_id\" = $1", "u1") == 0.8);
    assert_true(fabs(num1(st, "SELECT \"spend\" FROM \"LiteLLM_TeamTable\" WHERE \"team_id\" = $1", "t1") - 5.3) <
                1e-9);
    /* the key is full now */
    r.max_budget[SY_ENT_TEAM] = 100;
    assert_int_equal(sy_reserve_take(st, &r), 0);
    assert_int_equal(r.refused, 1);
    assert_int_equal(r.refused_ent, SY_ENT_KEY);
    assert_true(r.current_spend == 10.0);
}

static void test_all_entities_and_member(void **state)
{
    struct sy_store *st = *state;
    seed(st);
    struct sy_reserve r;
    memset(&r, 0, sizeof r);
    const char *ids[SY_ENT__COUNT] = {"k1", "u1", "t1", "t1\nu1", "eu1", "o1"};
    for (int e = 0; e < SY_ENT__COUNT; e++) {
        r.id[e] = ids[e];
        r.max_budget[e] = 2;
    }
    r.amount = 1.5;
    assert_int_equal(sy_reserve_take(st, &r), 0);
    assert_int_equal(r.refused, 0);
    assert_true(num1(st,
                     "SELECT \"spend\" FROM \"LiteLLM_TeamMembership\" WHERE \"team_id\" = 't1' AND \"user_id\" = $1",
                     "u1") == 1.5);
    assert_true(num1(st, "SELECT \"spend\" FROM \"LiteLLM_EndUserTable\" WHERE \"user_id\" = $1", "eu1") == 1.5);
    assert_true(num1(st, "SELECT \"spend\" FROM \"LiteLLM_OrganizationTable\" WHERE \"organization_id\" = $1", "o1") ==
                1.5);
    /* the member has 0.5 left: admitted for it, then full */
    r.max_budget[SY_ENT_KEY] = r.max_budget[SY_ENT_USER] = r.max_budget[SY_ENT_TEAM] = 100;
    r.max_budget[SY_ENT_END_USER] = r.max_budget[SY_ENT_ORG] = 100;
    r.amount = 1.0;
    assert_int_equal(sy_reserve_take(st, &r), 0);
    assert_int_equal(r.refused, 0);
    assert_true(r.taken[SY_ENT_MEMBER] == 0.5);
    assert_true(r.taken[SY_ENT_KEY] == 1.0);
    assert_int_equal(sy_reserve_take(st, &r), 0);
    assert_int_equal(r.refused, 1);
    assert_int_equal(r.refused_ent, SY_ENT_MEMBER);
    assert_string_equal(sy_ent_name(SY_ENT_MEMBER), "team_member");
    assert_true(r.current_spend == 2.0);
    assert_true(num1(st, "SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = $1", "k1") == 2.5);
}

/* ---- durable reservations ---- */

static double resv_sum(struct sy_store *st, const char *id)
{
    double d = num1(st, "SELECT SUM(\"amount\") FROM \"SwitchyardReservation\" WHERE \"id\" = $1", id);
    return isnan(d) ? 0 : d;
}

static void test_durable_rows(void **state)
{
    struct sy_store *st = *state;
    seed(st);
    exec_ok(st, "DELETE FROM \"SwitchyardReservation\"", 0, NULL);
    exec_ok(st, "DELETE FROM \"SwitchyardInstance\"", 0, NULL);
    struct sy_reserve r;
    memset(&r, 0, sizeof r);
    r.id[SY_ENT_KEY] = "k1";
    r.max_budget[SY_ENT_KEY] = 10;
    r.id[SY_ENT_TEAM] = "t1";
    r.max_budget[SY_ENT_TEAM] = 10;
    r.resv_id = "call-1";
    r.amount = 2;
    assert_int_equal(sy_reserve_take(st, &r), 0);
    assert_int_equal(r.refused, 0);
    assert_true(resv_sum(st, "call-1") == 4); /* one row per entity */
    r.amount = 1;                             /* a fallback's top-up adds to the rows */
    assert_int_equal(sy_reserve_take(st, &r), 0);
    assert_true(resv_sum(st, "call-1") == 6);
    assert_true(num1(st, "SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = $1", "k1") == 3);
    /* the settle deletes them: 1 the first time, 0 after */
    assert_int_equal(sy_store_begin(st), 0);
    assert_int_equal(sy_reserve_settle_in_tx(st, "call-1"), 1);
    assert_int_equal(sy_reserve_settle_in_tx(st, "call-1"), 0);
    assert_int_equal(sy_store_commit(st), 0);
    assert_true(resv_sum(st, "call-1") == 0);

    /* a live owner's rows stay; a lapsed owner's are given back */
    r.resv_id = "call-2";
    r.amount = 2;
    assert_int_equal(sy_reserve_take(st, &r), 0);
    assert_true(num1(st, "SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = $1", "k1") == 5);
    double now = (double)time(NULL);
    assert_int_equal(sy_reserve_heartbeat(st, now, 15), 0);
    assert_int_equal(sy_reserve_reclaim(st, now + 14, 1), 0); /* our lease holds until now + 15 */
    assert_true(resv_sum(st, "call-2") == 4);
    assert_true(sy_reserve_reclaim(st, now + 16, 15) == 2); /* lapsed: both rows back */
    assert_true(resv_sum(st, "call-2") == 0);
    assert_true(num1(st, "SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = $1", "k1") == 3);
    assert_true(num1(st, "SELECT \"spend\" FROM \"LiteLLM_TeamTable\" WHERE \"team_id\" = $1", "t1") == 3);
    /* its settle finds nothing: the writer then adds the whole cost */
    assert_int_equal(sy_store_begin(st), 0);
    assert_int_equal(sy_reserve_settle_in_tx(st, "call-2"), 0);
    assert_int_equal(sy_store_commit(st), 0);

    /* in doubt: given back at once, even with a live lease */
    assert_int_equal(sy_reserve_heartbeat(st, now, 15), 0);
    r.resv_id = "call-3";
    r.amount = 1;
    assert_int_equal(sy_reserve_take(st, &r), 0);
    sy_reserve_in_doubt("call-3");
    sy_reserve_in_doubt("call-never-committed");
    assert_true(sy_reserve_reclaim(st, now, 15) == 2);
    assert_true(num1(st, "SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = $1", "k1") == 3);
}

/* The database's one-partial rule: as the ledger's, across connections. */
static void test_db_one_partial(void **state)
{
    struct sy_store *st = *state;
    seed(st);
    exec_ok(st, "DELETE FROM \"SwitchyardReservation\"", 0, NULL);
    exec_ok(st, "UPDATE \"LiteLLM_VerificationToken\" SET \"spend\" = 0, \"max_budget\" = 1 WHERE \"token\" = 'k1'", 0,
            NULL);
    struct sy_reserve a, b, c;
    memset(&a, 0, sizeof a);
    a.id[SY_ENT_KEY] = "k1";
    a.max_budget[SY_ENT_KEY] = 1;
    a.amount = 0.6;
    b = c = a;
    a.resv_id = "pa";
    b.resv_id = "pb";
    c.resv_id = "pc";
    assert_int_equal(sy_reserve_take(st, &a), 0);
    assert_int_equal(a.refused, 0);
    assert_int_equal(a.partial[SY_ENT_KEY], 0);
    assert_int_equal(sy_reserve_take(st, &b), 0);
    assert_int_equal(b.refused, 0);
    assert_int_equal(b.partial[SY_ENT_KEY], 1);
    assert_true(fabs(b.taken[SY_ENT_KEY] - 0.4) < 1e-12);
    /* a ends costing 0.1: the writer's settle */
    assert_int_equal(sy_store_begin(st), 0);
    assert_int_equal(sy_reserve_settle_in_tx(st, "pa"), 1);
    exec_ok(st, "UPDATE \"LiteLLM_VerificationToken\" SET \"spend\" = \"spend\" - 0.5 WHERE \"token\" = 'k1'", 0, NULL);
    assert_int_equal(sy_store_commit(st), 0);
    assert_int_equal(sy_reserve_take(st, &c), 0); /* 0.6 would be cut short while b is: refused */
    assert_int_equal(c.refused, 1);
    c.amount = 0.5;
    assert_int_equal(sy_reserve_take(st, &c), 0); /* whole: admitted */
    assert_int_equal(c.refused, 0);
    assert_int_equal(c.partial[SY_ENT_KEY], 0);
    /* b's own top-up may be cut short again (it already holds the mark) */
    exec_ok(st, "UPDATE \"LiteLLM_VerificationToken\" SET \"spend\" = \"spend\" - 0.05 WHERE \"token\" = 'k1'", 0,
            NULL);
    b.amount = 0.2;
    assert_int_equal(sy_reserve_take(st, &b), 0);
    assert_int_equal(b.refused, 0);
    assert_true(fabs(b.taken[SY_ENT_KEY] - 0.05) < 1e-9);
}

/* ---- the in-memory ledger (SQLite's path) ---- */

static void test_ledger_contract(void **state)
{
    (void)state;
    sy_ledger_forget(-1, NULL);
    double spend[SY_ENT__COUNT] = {0};
    struct sy_reserve r, r2;
    memset(&r, 0, sizeof r);
    r.id[SY_ENT_KEY] = "ledger-k";
    r.max_budget[SY_ENT_KEY] = 0.001; /* below one call's worst case */
    r.amount = 0.5;
    sy_ledger_reserve(&r, spend);
    assert_int_equal(r.refused, 0); /* the first call is admitted ... */
    assert_true(r.taken[SY_ENT_KEY] == 0.001);
    assert_int_equal(r.partial[SY_ENT_KEY], 1);
    r2 = r;
    memset(r2.partial, 0, sizeof r2.partial);
    sy_ledger_reserve(&r2, spend); /* ... a concurrent second is not: nothing is left */
    assert_int_equal(r2.refused, 1);
    assert_true(r2.current_spend == 0.001);
    double res[SY_ENT__COUNT] = {0.001};
    sy_ledger_settle(r.id, res, r.partial, 0.0004); /* it cost less than what was left */
    sy_ledger_reserve(&r2, spend);
    assert_int_equal(r2.refused, 0);
    assert_true(fabs(r2.taken[SY_ENT_KEY] - 0.0006) < 1e-15);
    res[0] = r2.taken[SY_ENT_KEY];
    sy_ledger_settle(r2.id, res, r2.partial, 0.002); /* the one call that overshoots */
    memset(r2.partial, 0, sizeof r2.partial);
    sy_ledger_reserve(&r2, spend);
    assert_int_equal(r2.refused, 1);
    assert_true(fabs(r2.current_spend - 0.0024) < 1e-12);
    /* a raised budget admits at once */
    r2.max_budget[SY_ENT_KEY] = 1;
    sy_ledger_reserve(&r2, spend);
    assert_int_equal(r2.refused, 0);
    res[0] = r2.taken[SY_ENT_KEY];
    sy_ledger_settle(r2.id, res, r2.partial, 0);
    sy_ledger_forget(-1, NULL);
}

/* One partial reservation at a time: room freed by a call that cost less than
 * it reserved does not admit a second call cut short while the first is out. */
static void test_ledger_one_partial(void **state)
{
    (void)state;
    sy_ledger_forget(-1, NULL);
    double spend[SY_ENT__COUNT] = {0};
    struct sy_reserve a, b, c;
    memset(&a, 0, sizeof a);
    a.id[SY_ENT_KEY] = "ledger-p";
    a.max_budget[SY_ENT_KEY] = 1;
    a.amount = 0.6;
    b = c = a;
    sy_ledger_reserve(&a, spend); /* 0.6 whole */
    assert_int_equal(a.refused, 0);
    assert_int_equal(a.partial[SY_ENT_KEY], 0);
    sy_ledger_reserve(&b, spend); /* 0.4 of 0.6: the partial one */
    assert_int_equal(b.refused, 0);
    assert_int_equal(b.partial[SY_ENT_KEY], 1);
    double res[SY_ENT__COUNT] = {0.6};
    sy_ledger_settle(a.id, res, a.partial, 0.1); /* a cost 0.1: 0.5 freed */
    sy_ledger_reserve(&c, spend);                /* 0.6 does not fit in 0.5, and b is out: refused */
    assert_int_equal(c.refused, 1);
    c.amount = 0.5; /* whole: fits */
    sy_ledger_reserve(&c, spend);
    assert_int_equal(c.refused, 0);
    assert_int_equal(c.partial[SY_ENT_KEY], 0);
    res[0] = b.taken[SY_ENT_KEY];
    sy_ledger_settle(b.id, res, b.partial, 0.6); /* b's excess: the one overshoot */
    res[0] = c.taken[SY_ENT_KEY];
    sy_ledger_settle(c.id, res, c.partial, 0.5);
    /* spend 0.1 + 0.6 + 0.5 = 1.2: over 1 by b's excess (0.2), less than one call */
    struct sy_reserve d = a;
    memset(d.partial, 0, sizeof d.partial);
    sy_ledger_reserve(&d, spend);
    assert_int_equal(d.refused, 1);
    assert_true(fabs(d.current_spend - 1.2) < 1e-12);
    sy_ledger_forget(-1, NULL);
}

static void test_missing_row_skipped(void **state)
{
    struct sy_store *st = *state;
    seed(st);
    struct sy_reserve r;
    memset(&r, 0, sizeof r);
    r.id[SY_ENT_KEY] = "k1";
    r.max_budget[SY_ENT_KEY] = 100;
    r.id[SY_ENT_MEMBER] = "t1\nnobody";
    r.max_budget[SY_ENT_MEMBER] = 0.1;
    r.id[SY_ENT_END_USER] = "ghost";
    r.max_budget[SY_ENT_END_USER] = 0.1;
    r.amount = 1;
    assert_int_equal(sy_reserve_take(st, &r), 0);
    assert_int_equal(r.refused, 0);
    assert_true(num1(st, "SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = $1", "k1") == 1);
    /* nothing at all: no transaction */
    memset(&r, 0, sizeof r);
    r.amount = 5;
    assert_int_equal(sy_reserve_take(st, &r), 0);
    assert_int_equal(r.refused, 0);
    assert_string_equal(sy_ent_name(SY_ENT_KEY), "key");
    assert_string_equal(sy_ent_name(SY_ENT_ORG), "organization");
    assert_string_equal(sy_ent_name(SY_ENT_END_USER), "end_user");
}

static void test_pg_skipped(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_concurrent),
        cmocka_unit_test(test_bounded_concurrent),
        cmocka_unit_test(test_fit),
        cmocka_unit_test(test_refusal_reports_entity),
        cmocka_unit_test(test_all_entities_and_member),
        cmocka_unit_test(test_missing_row_skipped),
        cmocka_unit_test(test_durable_rows),
        cmocka_unit_test(test_db_one_partial),
        cmocka_unit_test(test_ledger_contract),
        cmocka_unit_test(test_ledger_one_partial),
    };
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(sqlite_path, sizeof sqlite_path, "%s/sy_test_reserve_%d.db", tmp, (int)getpid());
    url = sqlite_path;
    int fails = cmocka_run_group_tests_name("reserve_sqlite", tests, setup, teardown);
    char side[300];
    unlink(sqlite_path);
    snprintf(side, sizeof side, "%s-wal", sqlite_path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", sqlite_path);
    unlink(side);
    const char *pg = getenv("SY_TEST_PG_URL");
    if (pg && *pg) {
        url = pg;
        fails += cmocka_run_group_tests_name("reserve_postgres", tests, setup, teardown);
    } else {
        const struct CMUnitTest skipped[] = {cmocka_unit_test(test_pg_skipped)};
        fails += cmocka_run_group_tests_name("reserve_postgres", skipped, NULL, NULL);
    }
    return fails;
}
