/* reset.c - budget_duration resets, as LiteLLM's ResetBudgetJob
 * (litellm/proxy/common_utils/reset_budget_job.py), run by the spend writer.
 *
 *   | what                       | rows                                         | change |
 *   |----------------------------|----------------------------------------------|--------------------------------------|
 *   | keys                       | budget_duration set, budget_reset_at <= now, | spend 0, budget_reset_at next | | |
 * not expired (expires NULL or > now)          |                                      | | users, teams               |
 * budget_duration set, budget_reset_at <= now  | spend 0, budget_reset_at next        | | LiteLLM_BudgetTable rows   |
 * budget_duration set, budget_reset_at <= now  | budget_reset_at next; end users and  | |                            |
 * | team memberships with that budget_id:| |                            | | spend 0                              | |
 * any of the above           | budget_duration set, budget_reset_at NULL    | budget_reset_at next (spend kept)    |
 *
 * "next" is sy_duration_next(budget_duration, now) (LiteLLM's standardized
 * reset time); a duration that does not parse leaves the row alone.
 * Organizations are not reset (LiteLLM does not reset them either).
 *
 * Everything runs in one transaction. Rows are selected, then filtered in C
 * (timestamps parsed with sy_iso_parse, so the text form a backend stores
 * does not matter), then updated one by one. On PostgreSQL each UPDATE
 * repeats the "still due" condition, so two instances running the job at
 * once reset a row only once; on SQLite the transaction holds the write lock
 * from its start (BEGIN IMMEDIATE), so the rows read are the rows updated.
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "spend/spend.h"
#include "store/store.h"

struct due {
    char *id, *dur;
    double reset_at; /* -1: NULL */
    double expires;  /* -1: NULL */
};

struct dues {
    struct due *v;
    size_t n, cap;
    int oom;
};

static void dues_free(struct dues *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].id);
        free(d->v[i].dur);
    }
    free(d->v);
    memset(d, 0, sizeof *d);
}

static double ts_or_null(const struct sy_srow *row, const char *name)
{
    const char *s = sy_srow_text(row, name);
    return s ? sy_iso_parse(s) : -1;
}

static int on_row(void *ud, const struct sy_srow *row)
{
    struct dues *d = ud;
    const char *id = sy_srow_text(row, "id");
    const char *dur = sy_srow_text(row, "budget_duration");
    if (!id || !dur)
        return 0;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        struct due *v = realloc(d->v, cap * sizeof *v);
        if (!v) {
            d->oom = 1;
            return 1;
        }
        d->v = v;
        d->cap = cap;
    }
    struct due *x = &d->v[d->n];
    x->id = strdup(id);
    x->dur = strdup(dur);
    if (!x->id || !x->dur) {
        free(x->id);
        free(x->dur);
        d->oom = 1;
        return 1;
    }
    x->reset_at = ts_or_null(row, "budget_reset_at");
    x->expires = sy_srow_get(row, "expires") ? ts_or_null(row, "expires") : -1;
    d->n++;
    return 0;
}

/* The tables with their own spend (keys, users, teams). */
static const struct {
    const char *select_sqlite, *select_pg; /* pg: $1 now */
    const char *reset_sqlite, *reset_pg;   /* $1 next, $2 id [, $3 now] */
    const char *set_next;                  /* $1 next, $2 id */
} own[] = {
    {"SELECT \"token\" AS id, \"budget_duration\", \"budget_reset_at\", \"expires\" FROM \"LiteLLM_VerificationToken\" "
     "WHERE \"budget_duration\" IS NOT NULL",
     "SELECT \"token\" AS id, \"budget_duration\", \"budget_reset_at\", \"expires\" FROM \"LiteLLM_VerificationToken\" "
     "WHERE \"budget_duration\" IS NOT NULL AND (\"budget_reset_at\" IS NULL OR \"budget_reset_at\" <= $1)",
     "UPDATE \"LiteLLM_VerificationToken\" SET \"spend\" = 0, \"budget_reset_at\" = $1 WHERE \"token\" = $2",
     "UPDATE \"LiteLLM_VerificationToken\" SET \"spend\" = 0, \"budget_reset_at\" = $1 WHERE \"token\" = $2 "
     "AND \"budget_reset_at\" <= $3",
     "UPDATE \"LiteLLM_VerificationToken\" SET \"budget_reset_at\" = $1 WHERE \"token\" = $2 "
     "AND \"budget_reset_at\" IS NULL"},
    {"SELECT \"user_id\" AS id, \"budget_duration\", \"budget_reset_at\" FROM \"LiteLLM_UserTable\" "
     "WHERE \"budget_duration\" IS NOT NULL",
     "SELECT \"user_id\" AS id, \"budget_duration\", \"budget_reset_at\" FROM \"LiteLLM_UserTable\" "
     "WHERE \"budget_duration\" IS NOT NULL AND (\"budget_reset_at\" IS NULL OR \"budget_reset_at\" <= $1)",
     "UPDATE \"LiteLLM_UserTable\" SET \"spend\" = 0, \"budget_reset_at\" = $1 WHERE \"user_id\" = $2",
     "UPDATE \"LiteLLM_UserTable\" SET \"spend\" = 0, \"budget_reset_at\" = $1 WHERE \"user_id\" = $2 "
     "AND \"budget_reset_at\" <= $3",
     "UPDATE \"LiteLLM_UserTable\" SET \"budget_reset_at\" = $1 WHERE \"user_id\" = $2 "
     "AND \"budget_reset_at\" IS NULL"},
    {"SELECT \"team_id\" AS id, \"budget_duration\", \"budget_reset_at\" FROM \"LiteLLM_TeamTable\" "
     "WHERE \"budget_duration\" IS NOT NULL",
     "SELECT \"team_id\" AS id, \"budget_duration\", \"budget_reset_at\" FROM \"LiteLLM_TeamTable\" "
     "WHERE \"budget_duration\" IS NOT NULL AND (\"budget_reset_at\" IS NULL OR \"budget_reset_at\" <= $1)",
     "UPDATE \"LiteLLM_TeamTable\" SET \"spend\" = 0, \"budget_reset_at\" = $1 WHERE \"team_id\" = $2",
     "UPDATE \"LiteLLM_TeamTable\" SET \"spend\" = 0, \"budget_reset_at\" = $1 WHERE \"team_id\" = $2 "
     "AND \"budget_reset_at\" <= $3",
     "UPDATE \"LiteLLM_TeamTable\" SET \"budget_reset_at\" = $1 WHERE \"team_id\" = $2 "
     "AND \"budget_reset_at\" IS NULL"},
};

static const char *const budget_select_sqlite =
    "SELECT \"budget_id\" AS id, \"budget_duration\", \"budget_reset_at\" FROM \"LiteLLM_BudgetTable\" "
    "WHERE \"budget_duration\" IS NOT NULL";
static const char *const budget_select_pg =
    "SELECT \"budget_id\" AS id, \"budget_duration\", \"budget_reset_at\" FROM \"LiteLLM_BudgetTable\" "
    "WHERE \"budget_duration\" IS NOT NULL AND (\"budget_reset_at\" IS NULL OR \"budget_reset_at\" <= $1)";
static const char *const budget_next_sqlite =
    "UPDATE \"LiteLLM_BudgetTable\" SET \"budget_reset_at\" = $1 WHERE \"budget_id\" = $2";
static const char *const budget_next_pg = "UPDATE \"LiteLLM_BudgetTable\" SET \"budget_reset_at\" = $1 WHERE "
                                          "\"budget_id\" = $2 AND \"budget_reset_at\" <= $3";
static const char *const budget_set_next =
    "UPDATE \"LiteLLM_BudgetTable\" SET \"budget_reset_at\" = $1 WHERE \"budget_id\" = $2 "
    "AND \"budget_reset_at\" IS NULL";
static const char *const enduser_zero = "UPDATE \"LiteLLM_EndUserTable\" SET \"spend\" = 0 WHERE \"budget_id\" = $1";
static const char *const member_zero = "UPDATE \"LiteLLM_TeamMembership\" SET \"spend\" = 0 WHERE \"budget_id\" = $1";

/* Select the candidate rows. 0 or negative. */
static int collect(struct sy_store *st, const char *sql_sqlite, const char *sql_pg, const char *now_iso, struct dues *d)
{
    int pg = sy_store_kind(st) == SY_STORE_POSTGRES;
    struct sy_sval p = sy_sv_ts(now_iso);
    int rc = sy_store_exec(st, pg ? sql_pg : sql_sqlite, pg ? 1 : 0, &p, on_row, d);
    if (rc >= 0 && d->oom)
        rc = SY_STORE_EQUERY;
    return rc < 0 ? rc : 0;
}

/* One row whose reset time has come (or is unset): update it. Returns 1 when
 * the reset UPDATE changed the row (spend zeroed), 0 when nothing was due or
 * only the next time was set, negative on error. */
static int apply(struct sy_store *st, const struct due *x, double now, const char *now_iso, const char *reset_sqlite,
                 const char *reset_pg, const char *set_next)
{
    double next = sy_duration_next(x->dur, now);
    if (next < 0)
        return 0;
    char next_iso[32];
    sy_iso_time(next, next_iso);
    int pg = sy_store_kind(st) == SY_STORE_POSTGRES;
    struct sy_sval p[3] = {sy_sv_ts(next_iso), sy_sv_text(x->id), sy_sv_ts(now_iso)};
    if (x->reset_at < 0) {
        int rc = sy_store_exec(st, set_next, 2, p, NULL, NULL);
        return rc < 0 ? rc : 0;
    }
    if (x->reset_at > now)
        return 0;
    int rc = sy_store_exec(st, pg ? reset_pg : reset_sqlite, pg ? 3 : 2, p, NULL, NULL);
    return rc < 0 ? rc : rc > 0;
}

int sy_budget_reset_due(struct sy_store *st, double now_unix)
{
    char now_iso[32];
    sy_iso_time(now_unix, now_iso);
    int total = 0, rc = sy_store_begin(st);
    if (rc < 0)
        return rc;
    struct dues d = {0};
    for (size_t t = 0; t < sizeof own / sizeof own[0]; t++) {
        rc = collect(st, own[t].select_sqlite, own[t].select_pg, now_iso, &d);
        if (rc < 0)
            goto fail;
        for (size_t i = 0; i < d.n; i++) {
            if (t == 0 && d.v[i].expires >= 0 && d.v[i].expires <= now_unix)
                continue; /* expired keys are left alone (LiteLLM: expires >= now) */
            rc = apply(st, &d.v[i], now_unix, now_iso, own[t].reset_sqlite, own[t].reset_pg, own[t].set_next);
            if (rc < 0)
                goto fail;
            total += rc;
        }
        dues_free(&d);
    }
    /* budget table: end users and team members share their budget row's clock */
    rc = collect(st, budget_select_sqlite, budget_select_pg, now_iso, &d);
    if (rc < 0)
        goto fail;
    for (size_t i = 0; i < d.n; i++) {
        rc = apply(st, &d.v[i], now_unix, now_iso, budget_next_sqlite, budget_next_pg, budget_set_next);
        if (rc < 0)
            goto fail;
        if (rc == 0)
            continue;
        struct sy_sval id = sy_sv_text(d.v[i].id);
        rc = sy_store_exec(st, enduser_zero, 1, &id, NULL, NULL);
        if (rc < 0)
            goto fail;
        total += rc;
        rc = sy_store_exec(st, member_zero, 1, &id, NULL, NULL);
        if (rc < 0)
            goto fail;
        total += rc;
    }
    dues_free(&d);
    rc = sy_store_commit(st);
    if (rc < 0)
        goto fail;
    if (total > 0)
        sy_info("budget reset: %d rows reset to spend 0", total);
    return total;
fail:
    sy_warn("budget reset: %s", sy_store_errmsg(st));
    dues_free(&d);
    sy_store_rollback(st);
    return rc;
}
