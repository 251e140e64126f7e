/* owners.c - who made a native response, a file or a batch (owners.h).
 *
 * MEMORY. A ring of the last `cap` puts under one mutex, searched linearly
 * (newest first): it only bridges the time between a put and its INSERT's
 * commit, and holds a few thousand small records, so a scan costs a few
 * microseconds and needs no index. Each slot is one allocation:
 *
 *   struct slot | kind \0 id \0 token \0 user_id \0 team_id \0
 *
 * DATABASE (store/dbpool.h; SQL in store/store.h's common subset):
 *
 *   call          DB job                                              when
 *   sy_own_put    INSERT ... ON CONFLICT ("kind", "id") DO NOTHING    nowait (the first owner stays)
 *   sy_own_get    SELECT by ("kind", "id")                            not in memory, database on
 *   sy_own_list   SELECT "id" WHERE "kind" AND ("token" = $ OR        database on; memory's records
 *                 "user_id" = $) ORDER BY "created_at" DESC LIMIT     are added on the loop
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "responses/owners.h"
#include "store/dbpool.h"
#include "store/store.h"

struct slot {
    struct sy_own_rec rec; /* strings point into data */
    char data[];
};

static struct {
    pthread_mutex_t mu;
    struct slot **ring;
    size_t cap, next, n;
} M = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int empty(const char *s)
{
    return !s || !*s;
}

int sy_own_allows(const struct sy_own_rec *rec, const char *token, const char *user_id)
{
    if (!rec)
        return 0;
    if (!empty(token) && !empty(rec->token) && strcmp(token, rec->token) == 0)
        return 1;
    return !empty(user_id) && !empty(rec->user_id) && strcmp(user_id, rec->user_id) == 0;
}

static struct slot *slot_new(const struct sy_own_rec *r)
{
    const char *f[5] = {r->kind, r->id, r->token, r->user_id, r->team_id};
    size_t len[5], total = 0;
    for (int i = 0; i < 5; i++)
        total += len[i] = f[i] ? strlen(f[i]) + 1 : 0;
    struct slot *s = malloc(sizeof *s + total);
    if (!s)
        return NULL;
    memset(s, 0, sizeof *s);
    const char **dst[5] = {&s->rec.kind, &s->rec.id, &s->rec.token, &s->rec.user_id, &s->rec.team_id};
    char *p = s->data;
    for (int i = 0; i < 5; i++) {
        if (!f[i])
            continue;
        memcpy(p, f[i], len[i]);
        *dst[i] = p;
        p += len[i];
    }
    s->rec.created_at = r->created_at;
    return s;
}

void sy_own_init(size_t cap)
{
    sy_own_shutdown();
    pthread_mutex_lock(&M.mu);
    M.ring = cap ? calloc(cap, sizeof *M.ring) : NULL;
    M.cap = M.ring ? cap : 0;
    M.next = M.n = 0;
    pthread_mutex_unlock(&M.mu);
}

void sy_own_shutdown(void)
{
    pthread_mutex_lock(&M.mu);
    for (size_t i = 0; i < M.cap; i++)
        free(M.ring[i]);
    free(M.ring);
    M.ring = NULL;
    M.cap = M.next = M.n = 0;
    pthread_mutex_unlock(&M.mu);
}

/* The memory slot of (kind, id), newest first; M.mu held. */
static struct slot *mem_find(const char *kind, const char *id)
{
    for (size_t k = 0; k < M.n; k++) {
        struct slot *s = M.ring[(M.next + M.cap - 1 - k) % M.cap];
        if (s && strcmp(s->rec.id, id) == 0 && strcmp(s->rec.kind, kind) == 0)
            return s;
    }
    return NULL;
}

/* ---- put -------------------------------------------------------------------- */

struct put_job {
    struct sy_db_job job; /* first */
    struct slot *s;       /* owned by the job */
};

static void run_put(struct sy_store *st, struct sy_db_job *j)
{
    struct put_job *pj = (struct put_job *)j;
    const struct sy_own_rec *r = &pj->s->rec;
    char ts[32];
    sy_iso_time(r->created_at, ts);
    struct sy_sval p[] = {sy_sv_text(r->kind),    sy_sv_text(r->id),      sy_sv_text(r->token),
                          sy_sv_text(r->user_id), sy_sv_text(r->team_id), sy_sv_ts(ts)};
    if (sy_store_exec(st,
                      "INSERT INTO \"SwitchyardObject\" (\"kind\", \"id\", \"token\", \"user_id\", \"team_id\", "
                      "\"created_at\") VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (\"kind\", \"id\") DO NOTHING",
                      6, p, NULL, NULL) < 0)
        sy_warn("owners: recording %s %s: %s", r->kind, r->id, sy_store_errmsg(st));
    free(pj->s);
    free(pj);
}

void sy_own_put(struct sy_db_port *port, const struct sy_own_rec *rec)
{
    if (!rec || empty(rec->kind) || empty(rec->id) || empty(rec->token))
        return;
    struct sy_own_rec r = *rec;
    if (r.created_at <= 0)
        r.created_at = (double)time(NULL);
    pthread_mutex_lock(&M.mu);
    if (M.cap && !mem_find(r.kind, r.id)) {
        struct slot *s = slot_new(&r);
        if (s) {
            free(M.ring[M.next]);
            M.ring[M.next] = s;
            M.next = (M.next + 1) % M.cap;
            if (M.n < M.cap)
                M.n++;
        }
    }
    pthread_mutex_unlock(&M.mu);
    if (!port || !sy_db_enabled())
        return;
    struct put_job *pj = calloc(1, sizeof *pj);
    if (!pj || !(pj->s = slot_new(&r))) {
        free(pj);
        sy_warn("owners: out of memory recording %s %s", r.kind, r.id);
        return;
    }
    pj->job.run = run_put;
    if (sy_db_submit_nowait(&pj->job) != 0) {
        free(pj->s);
        free(pj);
    }
}

/* ---- get -------------------------------------------------------------------- */

struct get_job {
    struct sy_db_job job; /* first */
    sy_own_cb cb;
    void *ud;
    int rc;
    struct slot *found;
    char kind[16];
    char id[];
};

static int read_row(void *ud, const struct sy_srow *r)
{
    struct get_job *g = ud;
    const char *ts = sy_srow_text(r, "created_at");
    double created = ts ? sy_iso_parse(ts) : 0;
    struct sy_own_rec rec = {g->kind,
                             g->id,
                             sy_srow_text(r, "token"),
                             sy_srow_text(r, "user_id"),
                             sy_srow_text(r, "team_id"),
                             created < 0 ? 0 : created};
    g->found = slot_new(&rec);
    return 1;
}

static void run_get(struct sy_store *st, struct sy_db_job *j)
{
    struct get_job *g = (struct get_job *)j;
    struct sy_sval p[] = {sy_sv_text(g->kind), sy_sv_text(g->id)};
    int rc = sy_store_exec(st,
                           "SELECT \"token\", \"user_id\", \"team_id\", \"created_at\" FROM \"SwitchyardObject\" "
                           "WHERE \"kind\" = $1 AND \"id\" = $2",
                           2, p, read_row, g);
    if (rc < 0) {
        sy_warn("owners: reading %s %s: %s", g->kind, g->id, sy_store_errmsg(st));
        g->rc = rc;
    } else {
        g->rc = g->found ? 0 : rc > 0 ? SY_STORE_EQUERY : 1;
    }
}

static void done_get(struct sy_db_job *j)
{
    struct get_job *g = (struct get_job *)j;
    g->cb(g->ud, g->rc, g->found ? &g->found->rec : NULL);
    free(g->found);
    free(g);
}

void sy_own_get(struct sy_db_port *port, const char *kind, const char *id, sy_own_cb cb, void *ud)
{
    if (empty(kind) || empty(id) || strlen(kind) >= 16) {
        cb(ud, 1, NULL);
        return;
    }
    pthread_mutex_lock(&M.mu);
    struct slot *s = M.cap ? mem_find(kind, id) : NULL;
    struct slot *copy = s ? slot_new(&s->rec) : NULL;
    pthread_mutex_unlock(&M.mu);
    if (copy) { /* called without the lock */
        cb(ud, 0, &copy->rec);
        free(copy);
        return;
    }
    if (port && sy_db_enabled()) {
        size_t n = strlen(id) + 1;
        struct get_job *g = calloc(1, sizeof *g + n);
        if (!g) {
            cb(ud, SY_STORE_EQUERY, NULL);
            return;
        }
        memcpy(g->id, id, n);
        memcpy(g->kind, kind, strlen(kind) + 1);
        g->job.run = run_get;
        g->job.done = done_get;
        g->cb = cb;
        g->ud = ud;
        if (sy_db_submit(port, &g->job) == 0)
            return;
        free(g);
    }
    cb(ud, 1, NULL);
}

/* ---- list ------------------------------------------------------------------- */

struct list_job {
    struct sy_db_job job; /* first */
    sy_own_list_cb cb;
    void *ud;
    int rc;
    char **ids;
    size_t n, cap, max;
    char *kind, *token, *user_id; /* copies */
};

static void list_add(struct list_job *l, const char *id)
{
    if (!id || l->n >= l->max)
        return;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 64;
        char **p = realloc(l->ids, nc * sizeof *p);
        if (!p)
            return;
        l->ids = p;
        l->cap = nc;
    }
    char *d = strdup(id);
    if (d)
        l->ids[l->n++] = d;
}

static int list_row(void *ud, const struct sy_srow *r)
{
    list_add(ud, sy_srow_text(r, "id"));
    return 0;
}

static void run_list(struct sy_store *st, struct sy_db_job *j)
{
    struct list_job *l = (struct list_job *)j;
    char lim[24];
    snprintf(lim, sizeof lim, "%zu", l->max);
    struct sy_sval p[] = {sy_sv_text(l->kind), sy_sv_text(l->token), sy_sv_text(empty(l->user_id) ? NULL : l->user_id)};
    char sql[400];
    snprintf(sql, sizeof sql,
             "SELECT \"id\" FROM \"SwitchyardObject\" WHERE \"kind\" = $1 AND (\"token\" = $2 OR "
             "(\"user_id\" IS NOT NULL AND \"user_id\" <> '' AND \"user_id\" = $3)) ORDER BY \"created_at\" DESC "
             "LIMIT %s",
             lim);
    l->rc = sy_store_exec(st, sql, 3, p, list_row, l);
    if (l->rc < 0)
        sy_warn("owners: listing %s: %s", l->kind, sy_store_errmsg(st));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sy_own_has(char *const *ids, size_t n, const char *id)
{
    return id && n && bsearch(&id, ids, n, sizeof *ids, cmp_str) != NULL;
}

static void list_finish(struct list_job *l)
{
    /* the records not yet committed: memory's */
    pthread_mutex_lock(&M.mu);
    for (size_t k = 0; k < M.n; k++) {
        struct slot *s = M.ring[(M.next + M.cap - 1 - k) % M.cap];
        if (s && strcmp(s->rec.kind, l->kind) == 0 && sy_own_allows(&s->rec, l->token, l->user_id))
            list_add(l, s->rec.id);
    }
    pthread_mutex_unlock(&M.mu);
    if (l->n)
        qsort(l->ids, l->n, sizeof *l->ids, cmp_str);
    l->cb(l->ud, l->rc < 0 ? l->rc : 0, l->ids, l->n);
    for (size_t i = 0; i < l->n; i++)
        free(l->ids[i]);
    free(l->ids);
    free(l->kind);
    free(l->token);
    free(l->user_id);
    free(l);
}

static void done_list(struct sy_db_job *j)
{
    list_finish((struct list_job *)j);
}

void sy_own_list(struct sy_db_port *port, const char *kind, const char *token, const char *user_id, size_t max,
                 sy_own_list_cb cb, void *ud)
{
    struct list_job *l = calloc(1, sizeof *l);
    if (!l || !(l->kind = strdup(kind ? kind : "")) || !(l->token = strdup(token ? token : "")) ||
        !(l->user_id = strdup(user_id ? user_id : ""))) {
        if (l) {
            free(l->kind);
            free(l->token);
            free(l);
        }
        cb(ud, SY_STORE_EQUERY, NULL, 0);
        return;
    }
    l->cb = cb;
    l->ud = ud;
    l->max = max ? max : 1;
    if (port && sy_db_enabled()) {
        l->job.run = run_list;
        l->job.done = done_list;
        if (sy_db_submit(port, &l->job) == 0)
            return;
    }
    list_finish(l);
}
