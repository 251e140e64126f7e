/* reserve.c - budget reservations: the worst-case cost of a call taken from
 * every budgeted entity's spend, all or nothing, before the call.
 *
 * One transaction; for each present entity, in the fixed order of enum sy_ent
 * (key, user, team, member, end user, org):
 *
 *   UPDATE <table> SET "spend" = "spend" + $1
 *    WHERE <pk> = $2 [AND <pk2> = $3] AND "spend" + $1 <= $max
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
 * An UPDATE that changes no row is either a refusal (the row exists: its
 * spend is read back into current_spend, the transaction is rolled back) or
 * a missing row (nothing to hold a budget against: the entity is skipped;
 * creating rows is not this file's business).
 *
 * Why it is exact: the conditional UPDATE reads and writes spend under the
 * row's write lock (PostgreSQL: a concurrent UPDATE of the same row waits,
 * then re-evaluates the WHERE on the new version; SQLite: BEGIN IMMEDIATE
 * holds the database write lock), so no number of concurrent reservations,
 * from any number of instances, can push spend past max_budget. Rows are
 * always locked in the same order (entity kind, then id - one per kind here,
 * and the spend writer sorts the same way), so reservations cannot deadlock
 * one another or the writer.
 *
 * Tolerance: the comparison allows max_budget + 1e-9 so sums of decimal
 * amounts (0.1 + 0.2 ...) that are "equal" to the budget are not refused for
 * a rounding error.
 */
#include <string.h>

#include "spend/spend.h"
#include "store/store.h"

#define RESERVE_EPS 1e-9

static const struct {
    const char *name;
    const char *update; /* $1 amount, $2 id [, $3 user_id], last: max */
    const char *select; /* $1 id [, $2 user_id] */
} ents[SY_ENT__COUNT] = {
    [SY_ENT_KEY] = {"key",
                    "UPDATE \"LiteLLM_VerificationToken\" SET \"spend\" = \"spend\" + $1 "
                    "WHERE \"token\" = $2 AND \"spend\" + $1 <= $3",
                    "SELECT \"spend\" FROM \"LiteLLM_VerificationToken\" WHERE \"token\" = $1"},
    [SY_ENT_USER] = {"user",
                     "UPDATE \"LiteLLM_UserTable\" SET \"spend\" = \"spend\" + $1 "
                     "WHERE \"user_id\" = $2 AND \"spend\" + $1 <= $3",
                     "SELECT \"spend\" FROM \"LiteLLM_UserTable\" WHERE \"user_id\" = $1"},
    [SY_ENT_TEAM] = {"team",
                     "UPDATE \"LiteLLM_TeamTable\" SET \"spend\" = \"spend\" + $1 "
                     "WHERE \"team_id\" = $2 AND \"spend\" + $1 <= $3",
                     "SELECT \"spend\" FROM \"LiteLLM_TeamTable\" WHERE \"team_id\" = $1"},
    [SY_ENT_MEMBER] = {"team_member",
                       "UPDATE \"LiteLLM_TeamMembership\" SET \"spend\" = \"spend\" + $1 "
                       "WHERE \"team_id\" = $2 AND \"user_id\" = $3 AND \"spend\" + $1 <= $4",
                       "SELECT \"spend\" FROM \"LiteLLM_TeamMembership\" WHERE \"team_id\" = $1 AND \"user_id\" = $2"},
    [SY_ENT_END_USER] = {"end_user",
                         "UPDATE \"LiteLLM_EndUserTable\" SET \"spend\" = \"spend\" + $1 "
                         "WHERE \"user_id\" = $2 AND \"spend\" + $1 <= $3",
                         "SELECT \"spend\" FROM \"LiteLLM_EndUserTable\" WHERE \"user_id\" = $1"},
    [SY_ENT_ORG] = {"organization",
                    "UPDATE \"LiteLLM_OrganizationTable\" SET \"spend\" = \"spend\" + $1 "
                    "WHERE \"organization_id\" = $2 AND \"spend\" + $1 <= $3",
                    "SELECT \"spend\" FROM \"LiteLLM_OrganizationTable\" WHERE \"organization_id\" = $1"},
};

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

/* The updates of one reservation inside an open transaction: 0 (r->refused
 * set when an entity would pass its budget; what ran is left for the caller
 * to undo), or a negative SY_STORE_E*. */
static int take_in_tx(struct sy_store *st, struct sy_reserve *r)
{
    for (int e = 0; e < SY_ENT__COUNT; e++) {
        if (!r->id[e])
            continue;
        struct sy_sval p[4], key[2];
        int nk;
        if (e == SY_ENT_MEMBER) {
            if (member_split(r->id[e], &key[0], &key[1]) < 0)
                continue; /* not an id we can look up: no row to hold a budget */
            nk = 2;
        } else {
            key[0] = sy_sv_text(r->id[e]);
            nk = 1;
        }
        p[0] = sy_sv_num(r->amount);
        for (int i = 0; i < nk; i++)
            p[1 + i] = key[i];
        p[1 + nk] = sy_sv_num(r->max_budget[e] + RESERVE_EPS);
        int rc = sy_store_exec(st, ents[e].update, 2 + nk, p, NULL, NULL);
        if (rc < 0)
            return rc;
        if (rc > 0)
            continue;
        struct spend_row s = {0, 0};
        rc = sy_store_exec(st, ents[e].select, nk, key, on_spend, &s);
        if (rc < 0)
            return rc;
        if (!s.found)
            continue; /* no row: nothing to reserve against */
        r->refused = 1;
        r->refused_ent = (enum sy_ent)e;
        r->current_spend = s.spend;
        return 0;
    }
    return 0;
}

static int any_entity(struct sy_reserve *r)
{
    r->refused = 0;
    r->refused_ent = SY_ENT_KEY;
    r->current_spend = 0;
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
