/* reserve.c - budget reservations: part of a call's worst-case cost taken
 * from every budgeted entity's spend, all or nothing, before the call; and
 * the durable record of each reservation that lets a crash be undone.
 *
 * The admit rule (sy_reserve_fit): with cur = the entity's spend column
 * (recorded spend plus the reservations in flight, which are added to it),
 * admit while cur < max_budget and take min(worst case, max_budget - cur).
 * One transaction; for each present entity, in the fixed order of enum sy_ent
 * (key, user, team, member, end user, org):
 *
 *   SELECT "spend" FROM <table> WHERE <pk> = $1 [FOR UPDATE]   -- the row locked
 *   UPDATE <table> SET "spend" = "spend" + <taken> WHERE <pk> = $2
 *
 *   | entity   | table                         | primary key                    |
 *   |----------|-------------------------------|--------------------------------|
 *   | key      | LiteLLM_VerificationToken     | token                          |
 *   | user     | LiteLLM_UserTable             | user_id                        |
 *   | team     | LiteLLM_TeamTable             | team_id                        |
 *   | member   | LiteLLM_TeamMembership        | (team_id, user_id) id "team\nuser" |
 *   | end user | LiteLLM_EndUserTable          | user_id                        |
 *   | org      | LiteLLM_OrganizationTable     | organization_id                |
 *
 * spend is read less this instance's credit for it (ledger.c: what calls
 * that ended here will give back once the writer commits them). A missing
 * row is skipped (nothing to hold a budget against); a row with
 * nothing left refuses the reservation (current_spend read back, the
 * transaction - or the group commit's savepoint - rolled back).
 *
 * Why the overshoot is bounded: the SELECT ... FOR UPDATE (PostgreSQL; SQLite's
 * BEGIN IMMEDIATE holds the database write lock) serialises every reservation
 * of a row, from any number of instances, so the reservations in flight sum
 * to at most max_budget. A reservation cut short of its worst case (partial)
 * is taken only when no other call's row for the entity is marked partial
 * (SQL_OTHER_PARTIAL, read under the entity's row lock; less the marks of
 * calls that ended here, ledger.c), so at most one call
 * at a time can cost more than it reserved: recorded spend passes max_budget
 * by at most one call's cost. (Without that, calls ending under their
 * reservation free room for a second partial one while the first is in
 * flight, and the excesses add up.) Rows are always locked in the same order (entity kind, then
 * id - one per kind here, and the spend writer sorts the same way), so
 * reservations cannot deadlock one another or the writer.
 *
 * Durable reservations (a crash between the reservation and its settle must
 * not leave spend with no SpendLogs row behind it): with resv_id, the same
 * transaction writes one "SwitchyardReservation" row per entity taken
 * (upserted: a fallback's top-up adds to it); the spend writer deletes them in
 * the transaction that writes the call's SpendLogs row and spend delta
 * (sy_reserve_settle_in_tx). Every instance renews its row in
 * "SwitchyardInstance" (sy_reserve_heartbeat); any instance reclaims the rows
 * of an owner whose lease lapsed, or that this instance marked in doubt (the
 * reservation's COMMIT failed with an unknown outcome): rows older than the
 * lease, locked (SKIP LOCKED on PostgreSQL), deleted, their amounts
 * subtracted from the entities' spend, in one transaction. A settle that
 * finds its rows gone (reclaimed while the owner was cut off) adds the whole
 * cost instead of cost - reserved, so the sum stays exact either way.
 */
#include <string.h>

#include "spend/spend.h"
#include "store/store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static const struct {
    const char *name;
    const char *select; /* $1 id [, $2 user_id] */
    const char *update; /* $1 amount, $2 id [, $3 user_id] */
} ents[SY_ENT__COUNT] = {
    [SY_ENT_KEY] = {"key", "SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = $1",
                    "UPDATE \"LiteLLM_VerificationToken\" SET \"spend\" = \"spend\" + $1 WHERE \"token\" = $2"},
    [SY_ENT_USER] = {"user", "SELECT \"spend\" FROM \"LiteLLM_UserTable\" WHERE \"user_id\" = $1",
                     "UPDATE \"LiteLLM_UserTable\" SET \"spend\" = \"spend\" + $1 WHERE \"user_id\" = $2"},
    [SY_ENT_TEAM] = {"team", "SELECT \"spend\" FROM \"LiteLLM_TeamTable\" WHERE \"team_id\" = $1",
                     "UPDATE \"LiteLLM_TeamTable\" SET \"spend\" = \"spend\" + $1 WHERE \"team_id\" = $2"},
    [SY_ENT_MEMBER] = {"team_member",
                       "SELECT \"spend\" FROM \"LiteLLM_TeamMembership\" WHERE \"team_id\" = $1 AND \"user_id\" = $2",
                       "UPDATE \"LiteLLM_TeamMembership\" SET \"spend\" = \"spend\" + $1 "
                       "WHERE \"team_id\" = $2 AND \"user_id\" = $3"},
    [SY_ENT_END_USER] = {"end_user", "SELECT \"spend\" FROM \"LiteLLM_EndUserTable\" WHERE \"user_id\" = $1",
                         "UPDATE \"LiteLLM_EndUserTable\" SET \"spend\" = \"spend\" + $1 WHERE \"user_id\" = $2"},
    [SY_ENT_ORG] = {"organization",
                    "SELECT \"spend\" FROM \"LiteLLM_OrganizationTable\" WHERE \"organization_id\" = $1",
                    "UPDATE \"LiteLLM_OrganizationTable\" SET \"spend\" = \"spend\" + $1 "
                    "WHERE \"organization_id\" = $2"},
};

/* Less than this left is nothing left: ten calls of 0.1 sum to
 * 0.9999999999999999, which must fill a budget of 1.0. */
#define RESERVE_EPS 1e-9

double sy_reserve_fit(double cur, double max_budget, double amount)
{
    if (!(cur < max_budget - RESERVE_EPS))
        return -1;
    double left = max_budget - cur;
    return amount < left ? amount : left;
}

const char *sy_ent_name(enum sy_ent e)
{
    return (unsigned)e < SY_ENT__COUNT ? ents[e].name : "unknown";
}

struct spend_row {
    int found;
    double spend;
};

static int on_spend(void *ud, const struct sy_srow *row)
{
    struct spend_row *s = ud;
    s->found = 1;
    s->spend = sy_srow_num(row, "spend", 0);
    return 1;
}

/* Split a member id "team_id\nuser_id"; 0 or -1 when malformed. */
static int member_split(const char *id, struct sy_sval *team, struct sy_sval *user)
{
    const char *nl = strchr(id, '\n');
    if (!nl)
        return -1;
    *team = sy_sv_textn(id, (size_t)(nl - id));
    *user = sy_sv_text(nl + 1);
    return 0;
}

#define SQL_RESV_UPSERT                                                                                            \
    "INSERT INTO \"SwitchyardReservation\" (\"id\", \"kind\", \"ent_id\", \"amount\", \"owner\", \"created_at\", " \
    "\"partial\") VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (\"id\", \"kind\") DO UPDATE SET "               \
    "\"amount\" = \"SwitchyardReservation\".\"amount\" + EXCLUDED.\"amount\", \"partial\" = CASE WHEN "            \
    "EXCLUDED.\"partial\" > \"SwitchyardReservation\".\"partial\" THEN EXCLUDED.\"partial\" ELSE "                 \
    "\"SwitchyardReservation\".\"partial\" END"
/* Another call's partial reservation of the entity ($1 kind, $2 id, $3 this call) */
#define SQL_OTHER_PARTIAL                                                                              \
    "SELECT COUNT(*) AS \"n\" FROM \"SwitchyardReservation\" WHERE \"kind\" = $1 AND \"ent_id\" = $2 " \
    "AND \"partial\" = 1 AND \"id\" <> $3"

static int on_count(void *ud, const struct sy_srow *row)
{
    *(int64_t *)ud = sy_srow_int(row, "n", 0);
    return 1;
}

/* The statements of one reservation inside an open transaction: 0 (r->refused
 * set when an entity has nothing left; what ran is left for the caller to
 * undo), or a negative SY_STORE_E*. */
static int take_in_tx(struct sy_store *st, struct sy_reserve *r)
{
    int pg = sy_store_kind(st) == SY_STORE_POSTGRES;
    char sel[256], now_iso[32];
    int partial0[SY_ENT__COUNT];
    memcpy(partial0, r->partial, sizeof partial0); /* restored when refused (rolled back) */
    sy_iso_time((double)time(NULL), now_iso);
    for (int e = 0; e < SY_ENT__COUNT; e++) {
        if (!r->id[e])
            continue;
        struct sy_sval p[3], key[2];
        int nk;
        if (e == SY_ENT_MEMBER) {
            if (member_split(r->id[e], &key[0], &key[1]) < 0)
                continue; /* not an id we can look up: no row to hold a budget */
            nk = 2;
        } else {
            key[0] = sy_sv_text(r->id[e]);
            nk = 1;
        }
        snprintf(sel, sizeof sel, "%s%s", ents[e].select, pg ? " FOR UPDATE" : "");
        struct spend_row s = {0, 0};
        int rc = sy_store_exec(st, sel, nk, key, on_spend, &s);
        if (rc < 0)
            return rc;
        if (!s.found)
            continue; /* no row: nothing to reserve against */
        /* what this instance's ended calls will give back once written (ledger.c) */
        double cur = s.spend - sy_ledger_credit_of(e, r->id[e]);
        double take = sy_reserve_fit(cur, r->max_budget[e], r->amount);
        int mark = 0;
        if (take >= 0 && take < r->amount && !r->partial[e] && r->resv_id) {
            /* cut short: only while no other call holds the entity's partial reservation */
            int64_t other = 0;
            struct sy_sval q[3] = {sy_sv_int(e), sy_sv_text(r->id[e]), sy_sv_text(r->resv_id)};
            if ((rc = sy_store_exec(st, SQL_OTHER_PARTIAL, 3, q, on_count, &other)) < 0)
                return rc;
            /* marks of calls that ended here are not in flight (the writer deletes them) */
            if (other - sy_ledger_ended_partial(e, r->id[e]) > 0)
                take = -1;
            else
                mark = 1;
        }
        if (take < 0) {
            memcpy(r->partial, partial0, sizeof partial0);
            r->refused = 1;
            r->refused_ent = (enum sy_ent)e;
            r->current_spend = cur;
            memset(r->taken, 0, sizeof r->taken);
            return 0;
        }
        r->taken[e] = take;
        if (mark)
            r->partial[e] = 1;
        if (take == 0)
            continue;
        p[0] = sy_sv_num(take);
        for (int i = 0; i < nk; i++)
            p[1 + i] = key[i];
        if ((rc = sy_store_exec(st, ents[e].update, 1 + nk, p, NULL, NULL)) < 0)
            return rc;
        if (r->resv_id) {
            struct sy_sval q[7] = {
                sy_sv_text(r->resv_id),         sy_sv_int(e),      sy_sv_text(r->id[e]),    sy_sv_num(take),
                sy_sv_text(sy_reserve_owner()), sy_sv_ts(now_iso), sy_sv_int(r->partial[e])};
            if ((rc = sy_store_exec(st, SQL_RESV_UPSERT, 7, q, NULL, NULL)) < 0)
                return rc;
        }
    }
    return 0;
}

static int any_entity(struct sy_reserve *r)
{
    r->refused = 0;
    r->refused_ent = SY_ENT_KEY;
    r->current_spend = 0;
    memset(r->taken, 0, sizeof r->taken);
    int any = 0;
    for (int e = 0; e < SY_ENT__COUNT; e++)
        any |= r->id[e] != NULL;
    return any;
}

int sy_reserve_take(struct sy_store *st, struct sy_reserve *r)
{
    if (!any_entity(r))
        return 0;
    int rc = sy_store_begin(st);
    if (rc < 0)
        return rc;
    rc = take_in_tx(st, r);
    if (rc < 0 || r->refused) {
        sy_store_rollback(st);
        return rc < 0 ? rc : 0;
    }
    rc = sy_store_commit(st);
    if (rc < 0)
        sy_store_rollback(st);
    return rc < 0 ? rc : 0;
}

int sy_reserve_take_many(struct sy_store *st, struct sy_reserve *const *rs, size_t n)
{
    if (n == 1)
        return sy_reserve_take(st, rs[0]);
    int rc = sy_store_begin(st);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        struct sy_reserve *r = rs[i];
        if (!any_entity(r))
            continue;
        if ((rc = sy_store_exec(st, "SAVEPOINT sy_r", 0, NULL, NULL, NULL)) < 0)
            goto fail;
        if ((rc = take_in_tx(st, r)) < 0)
            goto fail;
        if (r->refused && (rc = sy_store_exec(st, "ROLLBACK TO SAVEPOINT sy_r", 0, NULL, NULL, NULL)) < 0)
            goto fail;
        if ((rc = sy_store_exec(st, "RELEASE SAVEPOINT sy_r", 0, NULL, NULL, NULL)) < 0)
            goto fail;
    }
    if ((rc = sy_store_commit(st)) >= 0)
        return 0;
fail:
    sy_store_rollback(st);
    return rc;
}

/* ---- durable reservations ---- */

static pthread_once_t owner_once = PTHREAD_ONCE_INIT;
static char owner_id[40];

static void make_owner(void)
{
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        for (size_t i = 0; i < sizeof b; i++)
            b[i] = (unsigned char)((unsigned long)ts.tv_nsec >> (i % 4 * 8) ^ (unsigned)getpid() >> (i % 3 * 8));
    }
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(owner_id + 2 * i, 3, "%02x", b[i]);
}

const char *sy_reserve_owner(void)
{
    pthread_once(&owner_once, make_owner);
    return owner_id;
}

int sy_reserve_heartbeat(struct sy_store *st, double now_unix, double lease_s)
{
    char until[32];
    sy_iso_time(now_unix + lease_s, until);
    struct sy_sval p[2] = {sy_sv_text(sy_reserve_owner()), sy_sv_ts(until)};
    int rc = sy_store_exec(st,
                           "INSERT INTO \"SwitchyardInstance\" (\"id\", \"lease_until\") VALUES ($1, $2) "
                           "ON CONFLICT (\"id\") DO UPDATE SET \"lease_until\" = EXCLUDED.\"lease_until\"",
                           2, p, NULL, NULL);
    return rc < 0 ? rc : 0;
}

/* Reservations whose COMMIT had an unknown outcome, to reclaim (bounded: past
 * it the oldest are forgotten, logged by the caller's count). */
#define DOUBT_MAX 4096
static struct {
    pthread_mutex_t mu;
    char *ids[DOUBT_MAX];
    size_t n;
} doubt = {PTHREAD_MUTEX_INITIALIZER, {0}, 0};

void sy_reserve_in_doubt(const char *resv_id)
{
    char *d = resv_id ? strdup(resv_id) : NULL;
    if (!d)
        return;
    pthread_mutex_lock(&doubt.mu);
    if (doubt.n == DOUBT_MAX) {
        free(doubt.ids[0]);
        memmove(doubt.ids, doubt.ids + 1, (DOUBT_MAX - 1) * sizeof doubt.ids[0]);
        doubt.n--;
    }
    doubt.ids[doubt.n++] = d;
    pthread_mutex_unlock(&doubt.mu);
}

struct resv_row {
    char *id, *ent_id;
    int kind;
    double amount;
};

struct resv_rows {
    struct resv_row *v;
    size_t n, cap;
};

static int on_resv(void *ud, const struct sy_srow *row)
{
    struct resv_rows *rs = ud;
    const char *id = sy_srow_text(row, "id"), *ent = sy_srow_text(row, "ent_id");
    int64_t kind = sy_srow_int(row, "kind", -1);
    if (!id || !ent || kind < 0 || kind >= SY_ENT__COUNT)
        return 0;
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? rs->cap * 2 : 64;
        struct resv_row *v = realloc(rs->v, cap * sizeof *v);
        if (!v)
            return 1;
        rs->v = v;
        rs->cap = cap;
    }
    struct resv_row *r = &rs->v[rs->n];
    r->id = strdup(id);
    r->ent_id = strdup(ent);
    r->kind = (int)kind;
    r->amount = sy_srow_num(row, "amount", 0);
    if (r->id && r->ent_id)
        rs->n++;
    else {
        free(r->id);
        free(r->ent_id);
    }
    return 0;
}

static void rows_free(struct resv_rows *rs)
{
    for (size_t i = 0; i < rs->n; i++) {
        free(rs->v[i].id);
        free(rs->v[i].ent_id);
    }
    free(rs->v);
    memset(rs, 0, sizeof *rs);
}

/* Delete one row and, when it was there, subtract its amount. */
static int give_back(struct sy_store *st, const struct resv_row *r)
{
    struct sy_sval d[2] = {sy_sv_text(r->id), sy_sv_int(r->kind)};
    int rc = sy_store_exec(st, "DELETE FROM \"SwitchyardReservation\" WHERE \"id\" = $1 AND \"kind\" = $2", 2, d, NULL,
                           NULL);
    if (rc <= 0)
        return rc;
    struct sy_sval p[3];
    int nk = 1;
    p[0] = sy_sv_num(-r->amount);
    if (r->kind == SY_ENT_MEMBER) {
        if (member_split(r->ent_id, &p[1], &p[2]) < 0)
            return 1;
        nk = 2;
    } else {
        p[1] = sy_sv_text(r->ent_id);
    }
    rc = sy_store_exec(st, ents[r->kind].update, 1 + nk, p, NULL, NULL);
    return rc < 0 ? rc : 1;
}

#define RECLAIM_BATCH 500

int sy_reserve_reclaim(struct sy_store *st, double now_unix, double lease_s)
{
    int pg = sy_store_kind(st) == SY_STORE_POSTGRES;
    char now_iso[32], old_iso[32];
    sy_iso_time(now_unix, now_iso);
    sy_iso_time(now_unix - lease_s, old_iso);
    /* this instance's in-doubt reservations first */
    char *ids[64];
    size_t nd = 0;
    pthread_mutex_lock(&doubt.mu);
    while (nd < 64 && doubt.n > 0)
        ids[nd++] = doubt.ids[--doubt.n];
    pthread_mutex_unlock(&doubt.mu);

    struct resv_rows rs = {0};
    int rc = sy_store_begin(st);
    if (rc < 0)
        goto requeue;
    for (size_t i = 0; i < nd && rc >= 0; i++) {
        struct sy_sval p = sy_sv_text(ids[i]);
        rc = sy_store_exec(st,
                           pg ? "SELECT \"id\", \"kind\", \"ent_id\", \"amount\" FROM \"SwitchyardReservation\" "
                                "WHERE \"id\" = $1 ORDER BY \"kind\" FOR UPDATE"
                              : "SELECT \"id\", \"kind\", \"ent_id\", \"amount\" FROM \"SwitchyardReservation\" "
                                "WHERE \"id\" = $1 ORDER BY \"kind\"",
                           1, &p, on_resv, &rs);
    }
    /* the orphans: owner's lease lapsed (or never written), and older than a
     * lease (an instance's first reservations may precede its first heartbeat) */
    if (rc >= 0) {
        struct sy_sval p[2] = {sy_sv_ts(now_iso), sy_sv_ts(old_iso)};
        char sql[640];
        snprintf(sql, sizeof sql,
                 "SELECT r.\"id\", r.\"kind\", r.\"ent_id\", r.\"amount\" FROM \"SwitchyardReservation\" r "
                 "WHERE r.\"created_at\" < $2 AND NOT EXISTS (SELECT 1 FROM \"SwitchyardInstance\" i "
                 "WHERE i.\"id\" = r.\"owner\" AND i.\"lease_until\" > $1) "
                 "ORDER BY r.\"kind\", r.\"ent_id\" LIMIT %d%s",
                 RECLAIM_BATCH, pg ? " FOR UPDATE OF r SKIP LOCKED" : "");
        rc = sy_store_exec(st, sql, 2, p, on_resv, &rs);
    }
    int n = 0;
    for (size_t i = 0; i < rs.n && rc >= 0; i++) {
        rc = give_back(st, &rs.v[i]);
        n += rc > 0;
    }
    if (rc >= 0) {
        /* leases long lapsed: their rows are gone or will be taken above */
        struct sy_sval p = sy_sv_ts(now_iso);
        rc = sy_store_exec(
            st,
            "DELETE FROM \"SwitchyardInstance\" WHERE \"lease_until\" < $1 AND NOT EXISTS "
            "(SELECT 1 FROM \"SwitchyardReservation\" r WHERE r.\"owner\" = \"SwitchyardInstance\".\"id\")",
            1, &p, NULL, NULL);
    }
    if (rc >= 0)
        rc = sy_store_commit(st);
    if (rc < 0) {
        sy_store_rollback(st);
        rows_free(&rs);
        goto requeue;
    }
    rows_free(&rs);
    for (size_t i = 0; i < nd; i++)
        free(ids[i]);
    return n;
requeue:
    for (size_t i = 0; i < nd; i++) {
        sy_reserve_in_doubt(ids[i]);
        free(ids[i]);
    }
    return rc;
}

int sy_reserve_settle_in_tx(struct sy_store *st, const char *resv_id)
{
    struct sy_sval p = sy_sv_text(resv_id);
    int rc = sy_store_exec(st, "DELETE FROM \"SwitchyardReservation\" WHERE \"id\" = $1", 1, &p, NULL, NULL);
    return rc < 0 ? rc : rc > 0;
}
