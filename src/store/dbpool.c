/* dbpool.c - the DB threads of dbpool.h.
 *
 *   sy_db_submit ──▶ queue (mutex + cond, FIFO) ──▶ thread i: job->run(st_i, job)
 *                                                     │
 *   port->async cb ◀── uv_async_send ◀── port->done list (MPSC, under port->mu)
 *     └─ job->done(job), on the port's loop thread
 *
 * Invariants:
 *   - A DB thread touches a loop only through uv_async_send, and only while
 *     holding port->mu with port->freed == 0 (sy_db_port_free sets freed under
 *     the same mutex before it closes the handle, so the handle is alive for
 *     every send).
 *   - Port memory is reference counted: one reference for the handle (dropped
 *     in its close callback) and one per job in flight (dropped when done runs
 *     or the job is dropped because the port was freed). The last reference
 *     frees it, so a thread finishing a job for a freed port never touches
 *     freed memory.
 *   - The async handle is referenced (keeps its loop alive) only while the
 *     port has jobs in flight: `inflight` is counted on the loop thread
 *     (sy_db_submit is called on the port's loop thread).
 *   - sy_db_stop lets the threads empty the queue before they exit (queued
 *     jobs run; their completions are delivered if the ports still exist).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "store/dbpool.h"
#include "store/store.h"

struct sy_db_port {
    uv_async_t async;
    uv_loop_t *loop;
    pthread_mutex_t mu;
    struct sy_db_job *done; /* LIFO of completed jobs (under mu) */
    int refs;               /* under mu */
    int freed;              /* under mu */
    int inflight;           /* loop thread only */
};

static struct {
    atomic_int running;
    struct sy_store_conf conf;
    char *url;
    int nthreads;
    pthread_t *tids;
    struct sy_store **st;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    struct sy_db_job *head, *tail;
    int stopping;
    atomic_int up;
    atomic_int migrate_pending;
    pthread_mutex_t migrate_mu;
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER, .migrate_mu = PTHREAD_MUTEX_INITIALIZER};

/* ---- ports ------------------------------------------------------------- */

static void port_unref(struct sy_db_port *p, int n)
{
    pthread_mutex_lock(&p->mu);
    p->refs -= n;
    int last = p->refs == 0;
    pthread_mutex_unlock(&p->mu);
    if (last) {
        pthread_mutex_destroy(&p->mu);
        free(p);
    }
}

static void on_async(uv_async_t *h)
{
    struct sy_db_port *p = h->data;
    pthread_mutex_lock(&p->mu);
    struct sy_db_job *list = p->done;
    p->done = NULL;
    pthread_mutex_unlock(&p->mu);
    struct sy_db_job *fifo = NULL; /* reverse into completion order */
    while (list) {
        struct sy_db_job *next = list->next;
        list->next = fifo;
        fifo = list;
        list = next;
    }
    int n = 0;
    while (fifo) {
        struct sy_db_job *next = fifo->next;
        fifo->next = NULL;
        fifo->port = NULL;
        n++;
        p->inflight--;
        if (fifo->done && !p->freed) /* a done() may have freed the port: then no more */
            fifo->done(fifo);        /* may free the job, or submit more */
        fifo = next;
    }
    if (n) {
        if (p->inflight <= 0 && !p->freed) {
            p->inflight = 0;
            uv_unref((uv_handle_t *)&p->async);
        }
        port_unref(p, n); /* the handle's reference keeps p alive here */
    }
}

static void on_close(uv_handle_t *h)
{
    port_unref(h->data, 1);
}

struct sy_db_port *sy_db_port_new(uv_loop_t *loop)
{
    struct sy_db_port *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    if (uv_async_init(loop, &p->async, on_async) != 0) {
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    p->async.data = p;
    p->loop = loop;
    p->refs = 1;
    uv_unref((uv_handle_t *)&p->async);
    return p;
}

void sy_db_port_free(struct sy_db_port *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->freed = 1;
    int dropped = 0;
    for (struct sy_db_job *j = p->done, *next; j; j = next) { /* completed, never delivered */
        next = j->next;
        j->next = NULL;
        dropped++;
    }
    p->done = NULL;
    p->refs -= dropped; /* the handle's reference remains */
    pthread_mutex_unlock(&p->mu);
    uv_close((uv_handle_t *)&p->async, on_close);
}

/* ---- threads ----------------------------------------------------------- */

static void finish(struct sy_db_job *job)
{
    struct sy_db_port *p = job->port;
    if (!p)
        return; /* nowait: the job may be gone already */
    pthread_mutex_lock(&p->mu);
    if (p->freed) {
        p->refs--;
        int last = p->refs == 0;
        pthread_mutex_unlock(&p->mu);
        if (last) {
            pthread_mutex_destroy(&p->mu);
            free(p);
        }
        return;
    }
    job->next = p->done;
    p->done = job;
    uv_async_send(&p->async);
    pthread_mutex_unlock(&p->mu);
}

static void *thread_main(void *arg)
{
    struct sy_store *st = arg;
    for (;;) {
        pthread_mutex_lock(&pool.mu);
        while (!pool.head && !pool.stopping)
            pthread_cond_wait(&pool.cond, &pool.mu);
        struct sy_db_job *job = pool.head;
        if (!job) { /* stopping and drained */
            pthread_mutex_unlock(&pool.mu);
            break;
        }
        pool.head = job->next;
        if (!pool.head)
            pool.tail = NULL;
        pthread_mutex_unlock(&pool.mu);
        job->next = NULL;

        if (atomic_load(&pool.migrate_pending)) { /* the database was down at start */
            pthread_mutex_lock(&pool.migrate_mu);
            if (atomic_load(&pool.migrate_pending) && sy_store_migrate(st) == 0)
                atomic_store(&pool.migrate_pending, 0);
            pthread_mutex_unlock(&pool.migrate_mu);
        }
        struct sy_db_port *port = job->port; /* read before run: a nowait job may be freed by run */
        job->run(st, job);
        atomic_store(&pool.up, sy_store_up(st));
        if (port)
            finish(job);
    }
    return NULL;
}

static int enqueue(struct sy_db_job *job)
{
    job->next = NULL;
    pthread_mutex_lock(&pool.mu);
    if (!pool.running || pool.stopping) {
        pthread_mutex_unlock(&pool.mu);
        return -1;
    }
    if (pool.tail)
        pool.tail->next = job;
    else
        pool.head = job;
    pool.tail = job;
    pthread_cond_signal(&pool.cond);
    pthread_mutex_unlock(&pool.mu);
    return 0;
}

int sy_db_submit(struct sy_db_port *p, struct sy_db_job *job)
{
    if (!p || !job || !job->run)
        return -1;
    job->port = p;
    pthread_mutex_lock(&p->mu);
    p->refs++;
    pthread_mutex_unlock(&p->mu);
    if (enqueue(job)) {
        port_unref(p, 1);
        job->port = NULL;
        return -1;
    }
    if (p->inflight++ == 0)
        uv_ref((uv_handle_t *)&p->async);
    return 0;
}

int sy_db_submit_nowait(struct sy_db_job *job)
{
    if (!job || !job->run)
        return -1;
    job->port = NULL;
    return enqueue(job);
}

/* ---- pool -------------------------------------------------------------- */

static void close_all(int n)
{
    for (int i = 0; i < n; i++)
        sy_store_close(pool.st[i]);
    free(pool.st);
    free(pool.tids);
    free(pool.url);
    pool.st = NULL;
    pool.tids = NULL;
    pool.url = NULL;
}

int sy_db_start(const struct sy_store_conf *conf, int threads, int migrate, char *err, size_t errlen)
{
    if (errlen)
        err[0] = 0;
    if (pool.running) {
        snprintf(err, errlen, "db pool already running");
        return -1;
    }
    if (!conf || !conf->url) {
        snprintf(err, errlen, "no database url");
        return -1;
    }
    if (threads < 1)
        threads = 1;
    pool.url = strdup(conf->url);
    pool.conf = *conf;
    pool.conf.url = pool.url;
    pool.nthreads = threads;
    pool.st = calloc((size_t)threads, sizeof *pool.st);
    pool.tids = calloc((size_t)threads, sizeof *pool.tids);
    if (!pool.url || !pool.st || !pool.tids) {
        snprintf(err, errlen, "out of memory");
        close_all(0);
        return -1;
    }
    for (int i = 0; i < threads; i++) {
        pool.st[i] = sy_store_open(&pool.conf, err, errlen);
        if (!pool.st[i]) {
            close_all(i);
            return -1;
        }
    }
    atomic_store(&pool.up, sy_store_up(pool.st[0]));
    atomic_store(&pool.migrate_pending, 0);
    if (migrate) {
        int rc = sy_store_migrate(pool.st[0]);
        if (rc == SY_STORE_EDOWN) {
            sy_warn("database down at start (%s); migrating when it comes up", sy_store_errmsg(pool.st[0]));
            atomic_store(&pool.migrate_pending, 1);
        } else if (rc < 0) {
            snprintf(err, errlen, "database migration failed: %s", sy_store_errmsg(pool.st[0]));
            close_all(threads);
            return -1;
        }
        atomic_store(&pool.up, sy_store_up(pool.st[0]));
    }
    pool.stopping = 0;
    pool.head = pool.tail = NULL;
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&pool.tids[i], NULL, thread_main, pool.st[i]) != 0) {
            pthread_mutex_lock(&pool.mu);
            pool.stopping = 1;
            pthread_cond_broadcast(&pool.cond);
            pthread_mutex_unlock(&pool.mu);
            for (int j = 0; j < i; j++)
                pthread_join(pool.tids[j], NULL);
            snprintf(err, errlen, "cannot start DB threads");
            close_all(threads);
            return -1;
        }
    }
    pthread_mutex_lock(&pool.mu);
    pool.running = 1;
    pthread_mutex_unlock(&pool.mu);
    return 0;
}

int sy_db_enabled(void)
{
    return pool.running;
}

enum sy_store_kind sy_db_kind(void)
{
    return pool.running ? sy_store_url_kind(pool.url) : SY_STORE_SQLITE;
}

void sy_db_stop(void)
{
    pthread_mutex_lock(&pool.mu);
    if (!pool.running || pool.stopping) {
        pthread_mutex_unlock(&pool.mu);
        return;
    }
    pool.stopping = 1;
    pthread_cond_broadcast(&pool.cond);
    pthread_mutex_unlock(&pool.mu);
    for (int i = 0; i < pool.nthreads; i++)
        pthread_join(pool.tids[i], NULL);
    close_all(pool.nthreads);
    pthread_mutex_lock(&pool.mu);
    pool.running = 0;
    pool.stopping = 0;
    pool.head = pool.tail = NULL;
    pthread_mutex_unlock(&pool.mu);
    atomic_store(&pool.up, 0);
}

int sy_db_up(void)
{
    return pool.running && atomic_load(&pool.up);
}

int sy_db_run_sync(int (*fn)(struct sy_store *st, void *arg), void *arg)
{
    if (!pool.running || !fn)
        return -1;
    char err[256];
    struct sy_store *st = sy_store_open(&pool.conf, err, sizeof err);
    if (!st) {
        sy_warn("database: %s", err);
        return -1;
    }
    int rc = fn(st, arg);
    sy_store_close(st);
    return rc;
}

const struct sy_store_conf *sy_db_conf(void)
{
    return pool.running ? &pool.conf : NULL;
}
