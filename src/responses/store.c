/* store.c - stored Responses conversations (store.h): a process-wide bounded
 * in-memory table in front of the "SwitchyardResponse" table.
 *
 * MEMORY. One mutex guards a chained hash table (FNV-1a of the id, buckets
 * doubling when items > buckets) and a recency list (head = most recent).
 * The table is touched once or twice per Responses request, so one lock is
 * enough. A record is one allocation, immutable once made, shared by
 * reference count:
 *
 *   struct ent | id \0 model_id \0 model \0 owner \0 response \0 input_items \0 history \0
 *
 * (a field put as NULL stays NULL and takes no bytes). Its size - the header
 * plus the strings - counts against max_bytes; a put evicts from the tail
 * until the new record fits. A record larger than max_bytes is not kept in
 * memory (the database still gets it). A get takes a reference under the
 * lock and calls cb without it, so callbacks never run under the lock and a
 * record evicted or replaced meanwhile stays valid until cb returns.
 *
 * DATABASE (when the pool runs, store/dbpool.h; SQL in the common subset of
 * store/store.h):
 *
 *   call        DB job                                       when
 *   sy_rs_put   INSERT ... ON CONFLICT ("id") DO UPDATE SET   nowait: the job holds a reference on
 *               every column = EXCLUDED.column                the record and drops it in run
 *   sy_rs_get   SELECT the row by "id"                        memory miss, port != NULL; done()
 *                                                             puts the row into memory (unless the
 *                                                             id is there by now, or a delete ran
 *                                                             meanwhile) and calls cb
 *   sy_rs_del   DELETE by "id"                                port != NULL; done() calls cb: 0 when
 *                                                             memory or the database had it, 1 when
 *                                                             neither, the error when the DELETE failed
 *
 * created_at crosses as TIMESTAMP(3) (ISO-8601 text, millisecond precision).
 * JSON columns are JSONB on PostgreSQL: a record read back from there has the
 * same JSON values, written the way jsonb writes them (keys reordered, ", "
 * and ": " spacing); SQLite gives the text back as it was put.
 *
 * Not ordered: a put's nowait INSERT and a later delete's DELETE may run on
 * two DB threads at once; a DELETE that commits first leaves the row written.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "responses/store.h"
#include "store/dbpool.h"
#include "store/store.h"

#define NFIELDS 7

struct ent {
    struct ent *hnext;       /* hash chain */
    struct ent *prev, *next; /* recency list */
    uint64_t hash;
    size_t size; /* bytes counted against the bound */
    atomic_int refs;
    int in_table;         /* under M.mu */
    struct sy_rs_rec rec; /* strings point into data */
    char data[];
};

static struct {
    pthread_mutex_t mu;
    struct ent **buckets;
    size_t nbuckets; /* power of two; 0 = not initialised */
    struct ent *head, *tail;
    size_t items, bytes, max_bytes;
    atomic_uint_fast64_t deletes; /* bumped by every sy_rs_del: a DB read that raced one is not cached */
    atomic_int del_pending;       /* database DELETEs not finished: a read meanwhile may see a row being
                                   * deleted, so it is not cached either */
} M = {.mu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    return h ^ (h >> 29);
}

/* The record's fields in declaration order, as pointers into rec. */
static void fields(const struct sy_rs_rec *r, const char *f[NFIELDS])
{
    f[0] = r->id, f[1] = r->model_id, f[2] = r->model, f[3] = r->owner;
    f[4] = r->response, f[5] = r->input_items, f[6] = r->history;
}

/* A packed copy of the fields f[] (refs 1), or NULL when out of memory. */
static struct ent *ent_new(const char *const f[NFIELDS], double created_at)
{
    size_t len[NFIELDS], total = 0;
    for (int i = 0; i < NFIELDS; i++) {
        len[i] = f[i] ? strlen(f[i]) + 1 : 0;
        total += len[i];
    }
    struct ent *e = malloc(sizeof *e + total);
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    char *p = e->data, **dst[NFIELDS] = {&e->rec.id,       &e->rec.model_id,    &e->rec.model,  &e->rec.owner,
                                         &e->rec.response, &e->rec.input_items, &e->rec.history};
    for (int i = 0; i < NFIELDS; i++) {
        if (!f[i])
            continue;
        memcpy(p, f[i], len[i]);
        *dst[i] = p;
        p += len[i];
    }
    e->rec.created_at = created_at;
    e->size = sizeof *e + total;
    e->hash = fnv1a(e->rec.id ? e->rec.id : "");
    atomic_init(&e->refs, 1);
    return e;
}

static void ent_ref(struct ent *e)
{
    atomic_fetch_add(&e->refs, 1);
}

static void ent_unref(struct ent *e)
{
    if (e && atomic_fetch_sub(&e->refs, 1) == 1)
        free(e);
}

/* ---- the table (callers hold M.mu) ----------------------------------------- */

static void list_unlink(struct ent *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        M.head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        M.tail = e->prev;
    e->prev = e->next = NULL;
}

static void list_push_front(struct ent *e)
{
    e->prev = NULL;
    e->next = M.head;
    if (M.head)
        M.head->prev = e;
    M.head = e;
    if (!M.tail)
        M.tail = e;
}

/* The chain link pointing at id's record, or at the chain's NULL end. */
static struct ent **find(uint64_t h, const char *id)
{
    struct ent **pp = &M.buckets[h & (M.nbuckets - 1)];
    for (; *pp; pp = &(*pp)->hnext)
        if ((*pp)->hash == h && !strcmp((*pp)->rec.id, id))
            break;
    return pp;
}

/* Take e out of the table and drop the table's reference. */
static void drop(struct ent *e)
{
    struct ent **pp = &M.buckets[e->hash & (M.nbuckets - 1)];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    e->hnext = NULL;
    list_unlink(e);
    e->in_table = 0;
    M.items--;
    M.bytes -= e->size;
    ent_unref(e);
}

static void grow(void)
{
    size_t nb = M.nbuckets * 2;
    struct ent **b = calloc(nb, sizeof *b);
    if (!b)
        return; /* keep the longer chains */
    for (size_t i = 0; i < M.nbuckets; i++) {
        struct ent *e = M.buckets[i], *next;
        for (; e; e = next) {
            next = e->hnext;
            e->hnext = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    }
    free(M.buckets);
    M.buckets = b;
    M.nbuckets = nb;
}

/* Insert e (the table takes a reference): replacing a record with the same id
 * when replace, else leaving an existing one alone. */
static void insert(struct ent *e, int replace)
{
    if (!M.nbuckets || !e->rec.id || e->size > M.max_bytes)
        return;
    struct ent **pp = find(e->hash, e->rec.id);
    if (*pp) {
        if (!replace) {
            list_unlink(*pp); /* still the most recently used */
            list_push_front(*pp);
            return;
        }
        drop(*pp);
    }
    while (M.tail && M.bytes + e->size > M.max_bytes)
        drop(M.tail);
    ent_ref(e);
    pp = find(e->hash, e->rec.id); /* the chain may have changed */
    e->hnext = *pp;
    *pp = e;
    list_push_front(e);
    e->in_table = 1;
    M.items++;
    M.bytes += e->size;
    if (M.items > M.nbuckets)
        grow();
}

void sy_rs_init(size_t max_bytes)
{
    sy_rs_shutdown();
    pthread_mutex_lock(&M.mu);
    M.nbuckets = 256;
    M.buckets = calloc(M.nbuckets, sizeof *M.buckets);
    if (!M.buckets)
        M.nbuckets = 0;
    M.max_bytes = max_bytes;
    M.items = M.bytes = 0;
    M.head = M.tail = NULL;
    pthread_mutex_unlock(&M.mu);
}

void sy_rs_shutdown(void)
{
    pthread_mutex_lock(&M.mu);
    struct ent *e = M.head, *next;
    for (; e; e = next) {
        next = e->next;
        e->prev = e->next = e->hnext = NULL;
        e->in_table = 0;
        ent_unref(e);
    }
    free(M.buckets);
    M.buckets = NULL;
    M.nbuckets = 0;
    M.head = M.tail = NULL;
    M.items = M.bytes = 0;
    pthread_mutex_unlock(&M.mu);
}

/* ---- put -------------------------------------------------------------------- */

struct put_job {
    struct sy_db_job job; /* first */
    struct ent *e;        /* a reference */
};

static void run_put(struct sy_store *st, struct sy_db_job *j)
{
    struct put_job *pj = (struct put_job *)j;
    const struct sy_rs_rec *r = &pj->e->rec;
    char ts[32];
    sy_iso_time(r->created_at, ts);
    struct sy_sval p[] = {
        sy_sv_text(r->id),       sy_sv_text(r->model_id),    sy_sv_text(r->model),   sy_sv_text(r->owner),
        sy_sv_json(r->response), sy_sv_json(r->input_items), sy_sv_json(r->history), sy_sv_ts(ts)};
    int rc = sy_store_exec(st,
                           "INSERT INTO \"SwitchyardResponse\" (\"id\", \"model_id\", \"model\", \"owner\", "
                           "\"response\", \"input_items\", \"history\", \"created_at\") "
                           "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (\"id\") DO UPDATE SET "
                           "\"model_id\" = EXCLUDED.\"model_id\", \"model\" = EXCLUDED.\"model\", "
                           "\"owner\" = EXCLUDED.\"owner\", \"response\" = EXCLUDED.\"response\", "
                           "\"input_items\" = EXCLUDED.\"input_items\", \"history\" = EXCLUDED.\"history\", "
                           "\"created_at\" = EXCLUDED.\"created_at\"",
                           8, p, NULL, NULL);
    if (rc < 0)
        sy_warn("responses store: saving %s: %s", r->id, sy_store_errmsg(st));
    ent_unref(pj->e);
    free(pj);
}

void sy_rs_put(struct sy_db_port *port, const struct sy_rs_rec *rec)
{
    if (!rec || !rec->id)
        return;
    const char *f[NFIELDS];
    fields(rec, f);
    struct ent *e = ent_new(f, rec->created_at);
    if (!e) {
        sy_warn("responses store: out of memory saving %s", rec->id);
        return;
    }
    pthread_mutex_lock(&M.mu);
    insert(e, 1);
    pthread_mutex_unlock(&M.mu);
    if (port && sy_db_enabled()) {
        struct put_job *pj = calloc(1, sizeof *pj);
        if (pj) {
            pj->job.run = run_put;
            pj->e = e; /* our reference passes to the job */
            if (sy_db_submit_nowait(&pj->job) == 0)
                return;
            free(pj);
        }
    }
    ent_unref(e);
}

/* ---- get -------------------------------------------------------------------- */

struct get_job {
    struct sy_db_job job; /* first */
    sy_rs_cb cb;
    void *ud;
    uint_fast64_t deletes; /* M.deletes when submitted */
    int rc;
    struct ent *e; /* the row read, or NULL */
    char id[];
};

static int read_row(void *ud, const struct sy_srow *r)
{
    struct get_job *g = ud;
    const char *f[NFIELDS] = {sy_srow_text(r, "id"),     sy_srow_text(r, "model_id"), sy_srow_text(r, "model"),
                              sy_srow_text(r, "owner"),  sy_srow_text(r, "response"), sy_srow_text(r, "input_items"),
                              sy_srow_text(r, "history")};
    const char *ts = sy_srow_text(r, "created_at");
    double created = ts ? sy_iso_parse(ts) : 0;
    if (!f[0])
        f[0] = g->id;
    g->e = ent_new(f, created < 0 ? 0 : created);
    return 1;
}

static void run_get(struct sy_store *st, struct sy_db_job *j)
{
    struct get_job *g = (struct get_job *)j;
    struct sy_sval p = sy_sv_text(g->id);
    int rc = sy_store_exec(st,
                           "SELECT \"id\", \"model_id\", \"model\", \"owner\", \"response\", \"input_items\", "
                           "\"history\", \"created_at\" FROM \"SwitchyardResponse\" WHERE \"id\" = $1",
                           1, &p, read_row, g);
    if (rc < 0) {
        sy_warn("responses store: reading %s: %s", g->id, sy_store_errmsg(st));
        g->rc = rc;
    } else if (g->e) {
        g->rc = 0;
    } else {
        g->rc = rc > 0 ? SY_STORE_EQUERY : 1; /* a row we could not copy: out of memory */
    }
}

static void done_get(struct sy_db_job *j)
{
    struct get_job *g = (struct get_job *)j;
    if (g->e) {
        pthread_mutex_lock(&M.mu);
        if (atomic_load(&M.deletes) == g->deletes && atomic_load(&M.del_pending) == 0)
            insert(g->e, 0);
        pthread_mutex_unlock(&M.mu);
    }
    g->cb(g->ud, g->rc, g->e ? &g->e->rec : NULL);
    ent_unref(g->e);
    free(g);
}

void sy_rs_get(struct sy_db_port *port, const char *id, sy_rs_cb cb, void *ud)
{
    if (!id) {
        cb(ud, 1, NULL);
        return;
    }
    struct ent *e = NULL;
    uint64_t h = fnv1a(id);
    pthread_mutex_lock(&M.mu);
    if (M.nbuckets && (e = *find(h, id)) != NULL) {
        ent_ref(e);
        list_unlink(e);
        list_push_front(e);
    }
    pthread_mutex_unlock(&M.mu);
    if (e) {
        cb(ud, 0, &e->rec);
        ent_unref(e);
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
        g->job.run = run_get;
        g->job.done = done_get;
        g->cb = cb;
        g->ud = ud;
        g->deletes = atomic_load(&M.deletes);
        if (sy_db_submit(port, &g->job) == 0)
            return;
        free(g); /* the pool stopped: as if there were no database */
    }
    cb(ud, 1, NULL);
}

/* ---- delete ------------------------------------------------------------------ */

struct del_job {
    struct sy_db_job job; /* first */
    sy_rs_cb cb;
    void *ud;
    int in_memory; /* memory had it */
    int rc;        /* the DELETE's: rows removed, or negative */
    char id[];
};

static void run_del(struct sy_store *st, struct sy_db_job *j)
{
    struct del_job *d = (struct del_job *)j;
    struct sy_sval p = sy_sv_text(d->id);
    d->rc = sy_store_exec(st, "DELETE FROM \"SwitchyardResponse\" WHERE \"id\" = $1", 1, &p, NULL, NULL);
    if (d->rc < 0)
        sy_warn("responses store: deleting %s: %s", d->id, sy_store_errmsg(st));
}

static void done_del(struct sy_db_job *j)
{
    struct del_job *d = (struct del_job *)j;
    int rc = d->rc < 0 ? d->rc : (d->rc > 0 || d->in_memory) ? 0 : 1;
    atomic_fetch_sub(&M.del_pending, 1);
    d->cb(d->ud, rc, NULL);
    free(d);
}

void sy_rs_del(struct sy_db_port *port, const char *id, sy_rs_cb cb, void *ud)
{
    if (!id) {
        cb(ud, 1, NULL);
        return;
    }
    int had = 0;
    uint64_t h = fnv1a(id);
    pthread_mutex_lock(&M.mu);
    atomic_fetch_add(&M.deletes, 1);
    struct ent *e = M.nbuckets ? *find(h, id) : NULL;
    if (e) {
        drop(e);
        had = 1;
    }
    pthread_mutex_unlock(&M.mu);
    if (port && sy_db_enabled()) {
        size_t n = strlen(id) + 1;
        struct del_job *d = calloc(1, sizeof *d + n);
        if (d) {
            memcpy(d->id, id, n);
            d->job.run = run_del;
            d->job.done = done_del;
            d->cb = cb;
            d->ud = ud;
            d->in_memory = had;
            atomic_fetch_add(&M.del_pending, 1);
            if (sy_db_submit(port, &d->job) == 0)
                return;
            atomic_fetch_sub(&M.del_pending, 1);
            free(d);
        } else {
            cb(ud, SY_STORE_EQUERY, NULL);
            return;
        }
    }
    cb(ud, had ? 0 : 1, NULL);
}

void sy_rs_rec_free(struct sy_rs_rec *rec)
{
    if (!rec)
        return;
    free(rec->id);
    free(rec->model_id);
    free(rec->model);
    free(rec->owner);
    free(rec->response);
    free(rec->input_items);
    free(rec->history);
    memset(rec, 0, sizeof *rec);
}
