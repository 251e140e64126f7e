/* ledger.c - budget reservations in memory, for the embedded (SQLite) store.
 *
 * With SQLite there is one switchyard process per database file (PostgreSQL
 * is the scale-out path), so this process sees every change to spend and can
 * keep the budget arithmetic itself: one entry per budgeted entity,
 *
 *   | key (entity kind, id) | spend (as loaded, plus what settled here) | reserved (in flight) |
 *
 * Reserving applies the admit rule of reserve.c (sy_reserve_fit: admit while
 * spend + reserved < max_budget, take min(worst case, what is left)) to every
 * entity of the request under one lock, all or nothing, exactly as the
 * database statements of reserve.c do on PostgreSQL, for ~100 ns instead of a
 * write transaction. Nothing of it is in the database, so a crash leaves no
 * reservation behind. The spend writer still writes every cost to the
 * database; an entry is dropped (and re-read from the database on the next
 * load) when the management API changes its entity or budgets are reset (one
 * with requests in flight is kept and takes the freshly loaded spend at its
 * next reservation).
 *
 * With PostgreSQL the same table holds each entity's `credit`: for calls of
 * this instance that have ended but whose spend the writer has not committed
 * yet, the sum of (reserved - cost) - what the spend column will lose when
 * it does. reserve.c reads it after locking the row, so a caller's next call
 * is judged by the spend it will be, not by its last call's reservation
 * (sequential callers see LiteLLM's contract on PostgreSQL too). The writer
 * takes it back before its COMMIT, while it holds the rows' locks, so a
 * reservation never sees the new spend with the old credit.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spend/spend.h"

#define NBUCKETS 4096

struct lent {
    struct lent *next;
    int e;
    int stale; /* forgotten with requests in flight: re-read spend at the next reservation */
    double spend, reserved;
    double credit;     /* PostgreSQL: reserved - cost of ended calls the writer has not committed */
    int partial;       /* calls in flight holding a partial reservation (0 or 1) */
    int ended_partial; /* PostgreSQL: ended calls whose partial mark the writer has not deleted */
    char id[];
};

static struct lent *tab[NBUCKETS];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static unsigned hash(int e, const char *id)
{
    unsigned h = 2166136261u ^ (unsigned)e;
    for (; *id; id++)
        h = (h ^ (unsigned char)*id) * 16777619u;
    return h % NBUCKETS;
}

static struct lent *find(int e, const char *id, double init, int create)
{
    unsigned b = hash(e, id);
    for (struct lent *l = tab[b]; l; l = l->next)
        if (l->e == e && strcmp(l->id, id) == 0)
            return l;
    if (!create)
        return NULL;
    size_t n = strlen(id);
    struct lent *l = malloc(sizeof *l + n + 1);
    if (!l)
        return NULL;
    l->e = e;
    l->stale = 0;
    l->spend = init;
    l->reserved = 0;
    l->credit = 0;
    l->partial = 0;
    l->ended_partial = 0;
    memcpy(l->id, id, n + 1);
    l->next = tab[b];
    tab[b] = l;
    return l;
}

int sy_ledger_reserve(struct sy_reserve *r, const double spend[SY_ENT__COUNT])
{
    struct lent *got[SY_ENT__COUNT] = {0};
    int mark[SY_ENT__COUNT] = {0};
    r->refused = 0;
    memset(r->taken, 0, sizeof r->taken);
    pthread_mutex_lock(&mu);
    for (int e = 0; e < SY_ENT__COUNT; e++) {
        if (!r->id[e])
            continue;
        struct lent *l = find(e, r->id[e], spend[e], 1);
        if (!l)
            continue;
        if (l->stale) {
            l->spend = spend[e];
            l->stale = 0;
        }
        double cur = l->spend + l->reserved;
        double take = sy_reserve_fit(cur, r->max_budget[e], r->amount);
        if (take >= 0 && take < r->amount && !r->partial[e]) {
            if (l->partial > 0) /* another call holds the one partial reservation */
                take = -1;
            else
                mark[e] = 1;
        }
        if (take < 0) {
            r->refused = 1;
            r->refused_ent = (enum sy_ent)e;
            r->current_spend = cur;
            memset(r->taken, 0, sizeof r->taken);
            pthread_mutex_unlock(&mu);
            return 0;
        }
        r->taken[e] = take;
        got[e] = l;
    }
    for (int e = 0; e < SY_ENT__COUNT; e++)
        if (got[e]) {
            got[e]->reserved += r->taken[e];
            if (mark[e]) {
                got[e]->partial++;
                r->partial[e] = 1;
            }
        }
    pthread_mutex_unlock(&mu);
    return 0;
}

void sy_ledger_settle(const char *const id[SY_ENT__COUNT], const double reserved[SY_ENT__COUNT],
                      const int partial[SY_ENT__COUNT], double cost)
{
    pthread_mutex_lock(&mu);
    for (int e = 0; e < SY_ENT__COUNT; e++) {
        if (!id[e])
            continue;
        struct lent *l = find(e, id[e], 0, 0);
        if (!l)
            continue;
        l->spend += cost;
        l->reserved -= reserved[e];
        if (l->reserved < 1e-12)
            l->reserved = 0;
        if (partial && partial[e] && l->partial > 0)
            l->partial--;
    }
    pthread_mutex_unlock(&mu);
}

void sy_ledger_forget(int e, const char *id)
{
    pthread_mutex_lock(&mu);
    for (unsigned b = 0; b < NBUCKETS; b++) {
        for (struct lent **pp = &tab[b]; *pp;) {
            struct lent *l = *pp;
            if (e >= 0 && (l->e != e || (id && strcmp(l->id, id) != 0))) {
                pp = &l->next;
            } else if (l->reserved == 0 && l->credit == 0 && l->partial == 0 && l->ended_partial == 0) {
                *pp = l->next;
                free(l);
            } else { /* requests in flight settle here: keep it, re-read its spend */
                l->stale = 1;
                pp = &l->next;
            }
        }
    }
    pthread_mutex_unlock(&mu);
}

/* d[e] added to the credit; marks[e] (may be NULL) to ended_partial. */
static void credit_add(const char *const id[SY_ENT__COUNT], const double d[SY_ENT__COUNT], const int *marks)
{
    pthread_mutex_lock(&mu);
    for (int e = 0; e < SY_ENT__COUNT; e++) {
        if (!id[e] || (d[e] == 0 && (!marks || !marks[e])))
            continue;
        struct lent *l = find(e, id[e], 0, 1);
        if (!l)
            continue;
        l->credit += d[e];
        if (l->credit > -1e-12 && l->credit < 1e-12)
            l->credit = 0;
        if (marks)
            l->ended_partial += marks[e];
    }
    pthread_mutex_unlock(&mu);
}

void sy_ledger_credit(const char *const id[SY_ENT__COUNT], const double d[SY_ENT__COUNT])
{
    credit_add(id, d, NULL);
}

int sy_ledger_ended_partial(int e, const char *id)
{
    pthread_mutex_lock(&mu);
    struct lent *l = find(e, id, 0, 0);
    int n = l ? l->ended_partial : 0;
    pthread_mutex_unlock(&mu);
    return n;
}

double sy_ledger_credit_of(int e, const char *id)
{
    pthread_mutex_lock(&mu);
    struct lent *l = find(e, id, 0, 0);
    double c = l ? l->credit : 0;
    pthread_mutex_unlock(&mu);
    return c;
}

void sy_spend_rec_credit(const struct sy_spend_rec *r, double sign)
{
    if (!r->resv_id)
        return;
    char member[512];
    const char *id[SY_ENT__COUNT] = {r->api_key, r->user_id, r->team_id, NULL, r->end_user, r->org_id};
    if (r->team_id && r->user_id &&
        (size_t)snprintf(member, sizeof member, "%s\n%s", r->team_id, r->user_id) < sizeof member)
        id[SY_ENT_MEMBER] = member;
    double d[SY_ENT__COUNT] = {0};
    int marks[SY_ENT__COUNT] = {0};
    for (int e = 0; e < SY_ENT__COUNT; e++) {
        if (r->reserved[e] > 0)
            d[e] = sign * (r->reserved[e] - r->spend);
        if (r->partial_mask & (1u << e))
            marks[e] = sign > 0 ? 1 : -1;
    }
    credit_add(id, d, marks);
}
