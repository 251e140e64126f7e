/* model_registry.c - general_settings.store_model_in_db: the models of
 * LiteLLM_ProxyModelTable served beside the config file's, changed without a
 * restart and without dropping a request.
 *
 *   start (main thread)        sy_model_registry_with_db: every row read at
 *                              once (sy_db_run_sync), so the first config
 *                              built already serves them
 *   worker 0, every 5 s        a DB job: SELECT count(*), max(updated_at); on a
 *                              change (or when forced) every row, decrypted
 *                              (admin/modeldb.h), each checked alone by the
 *                              config loader (a bad row is skipped with a
 *                              warning naming its model_id), then all loaded
 *                              as one model_list snapshot; their
 *                              litellm_credential_name resolves against
 *                              LiteLLM_CredentialsTable (admin/credentials.h)
 *   "models" invalidation      the admin routes' change on this instance, or
 *                              another's through Redis (keys/invalidate.c):
 *                              worker 0 reads at once
 *
 * On a change the DB thread builds a new sy_gwconf from the config file's
 * snapshot (the base main hands over at start and at each SIGHUP) plus the
 * database snapshot (sy_config_with_models: the config's models first; a
 * database model with a config model's id is skipped with a warning) and
 * swaps it in with sy_workers_swap_conf, as SIGHUP does: a request in flight
 * keeps the config it started with. Builds and swaps hold one mutex, so a
 * SIGHUP and a database change never cross (the later build wins with both).
 *
 * Off (store_model_in_db false, or no database): nothing runs, no row is
 * read; the timer is never armed.
 */
#include "stages/model_registry.h"

#include "gateway/gateway.h"
#include "gateway/stage.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "admin/credentials.h"
#include "admin/modeldb.h"
#include "config/config.h"
#include "core/buf.h"
#include "core/log.h"
#include "core/secret.h"
#include "keys/keys.h"
#include "store/dbpool.h"
#include "store/store.h"

#define REFRESH_MS 5000
#define ROWS_MAX   (256u << 20)

static struct {
    pthread_mutex_t build_mu; /* builds and swaps */
    pthread_mutex_t mu;       /* base, dbcfg, rows */
    struct sy_config *base;   /* the config file's snapshot in force (a reference) */
    struct sy_config *dbcfg;  /* the database's models (a reference); NULL: none */
    char *rows;               /* the rows last read, as text (change detection) */
    int on;                   /* store_model_in_db with a database */
    /* the last change check (one job at a time) */
    int64_t last_n;
    char last_u[40];
    int have_last;
    /* worker 0's refresher */
    pthread_mutex_t kick_mu;
    uv_async_t *kick;
    uv_timer_t *timer;
    struct sy_worker *w;
    int busy;
    atomic_int force;
} M = {.build_mu = PTHREAD_MUTEX_INITIALIZER, .mu = PTHREAD_MUTEX_INITIALIZER, .kick_mu = PTHREAD_MUTEX_INITIALIZER};

void sy_model_registry_lock(void)
{
    pthread_mutex_lock(&M.build_mu);
}

void sy_model_registry_unlock(void)
{
    pthread_mutex_unlock(&M.build_mu);
}

/* ---- reading the table (a DB thread, or main at start) ------------------ */

struct rows_acc {
    struct sy_buf raw;     /* every row as JSON: change detection */
    struct sy_buf entries; /* the good rows as model_list entries */
    int n, nbad;
    const char *salt;
    const char *creds; /* LiteLLM_CredentialsTable as a credential_list, or NULL */
};

static int row_cb(void *ud, const struct sy_srow *r)
{
    struct rows_acc *acc = ud;
    sy_srow_json(&acc->raw, r);
    const char *id = sy_srow_text(r, "model_id");
    struct sy_buf e;
    char err[512] = "";
    sy_buf_init(&e, 4u << 20);
    int rc = sy_modeldb_entry(id, sy_srow_text(r, "model_name"), sy_srow_text(r, "litellm_params"),
                              sy_srow_text(r, "model_info"), acc->salt, &e, err, sizeof err);
    if (rc == 0 && sy_buf_failed(&e)) {
        snprintf(err, sizeof err, "out of memory");
        rc = -1;
    }
    if (rc == 0)
        rc = sy_modeldb_check(e.p, e.len, acc->creds, err, sizeof err);
    if (rc != 0) {
        sy_warn("models: database model %s skipped: %s", id ? id : "(no model_id)", err);
        acc->nbad++;
    } else {
        if (acc->n++)
            SY_BUF_LIT(&acc->entries, ",");
        sy_buf_append(&acc->entries, e.p, e.len);
    }
    sy_buf_free(&e);
    return 0;
}

/* Read every row; when they differ from the last read, make the new database
 * snapshot. 1 changed, 0 unchanged, -1 not read. */
static int read_rows(struct sy_store *st)
{
    pthread_mutex_lock(&M.mu);
    const char *mk = M.base ? M.base->master_key : NULL;
    char *mkc = mk ? strdup(mk) : NULL;
    pthread_mutex_unlock(&M.mu);
    struct rows_acc acc = {.salt = sy_secret_salt(mkc)};
    json_object *co = NULL;
    char *creds = NULL;
    if (sy_credentials_load(st, acc.salt, &co) == 0) /* litellm_credential_name resolves against them */
        creds = sy_modeldb_credential_list(co);
    json_object_put(co);
    acc.creds = creds;
    sy_buf_init(&acc.raw, ROWS_MAX);
    sy_buf_init(&acc.entries, ROWS_MAX);
    SY_BUF_LIT(&acc.entries, "[");
    int rc = sy_store_exec(st, "SELECT * FROM \"LiteLLM_ProxyModelTable\" ORDER BY \"created_at\", \"model_id\"", 0,
                           NULL, row_cb, &acc);
    SY_BUF_LIT(&acc.entries, "]");
    if (creds) /* a credential's change is a change too */
        sy_buf_puts(&acc.raw, creds);
    int ret = -1;
    if (rc < 0) {
        sy_warn("models: LiteLLM_ProxyModelTable not read: %s", sy_store_errmsg(st));
    } else if (sy_buf_failed(&acc.raw) || sy_buf_failed(&acc.entries)) {
        sy_warn("models: LiteLLM_ProxyModelTable not read: more than %u bytes of rows", ROWS_MAX);
    } else {
        pthread_mutex_lock(&M.mu);
        int same = M.rows && strcmp(M.rows, acc.raw.p ? acc.raw.p : "") == 0;
        pthread_mutex_unlock(&M.mu);
        ret = 0;
        if (!same) {
            char err[512] = "";
            struct sy_config *c =
                acc.n ? sy_modeldb_config(acc.entries.p, acc.entries.len, creds, err, sizeof err) : NULL;
            if (acc.n && !c) {
                sy_warn("models: database models not applied: %s", err);
                ret = -1;
            } else {
                pthread_mutex_lock(&M.mu);
                struct sy_config *old = M.dbcfg;
                M.dbcfg = c;
                free(M.rows);
                M.rows = strdup(acc.raw.p ? acc.raw.p : "");
                pthread_mutex_unlock(&M.mu);
                sy_config_unref(old);
                sy_info("models: %d model(s) from the database%s", acc.n, acc.nbad ? " (some skipped)" : "");
                ret = 1;
            }
        }
    }
    free(mkc);
    free(creds);
    sy_buf_free(&acc.raw);
    sy_buf_free(&acc.entries);
    return ret;
}

static int count_cb(void *ud, const struct sy_srow *r)
{
    (void)ud;
    const char *u = sy_srow_text(r, "u");
    M.last_n = sy_srow_int(r, "n", 0);
    snprintf(M.last_u, sizeof M.last_u, "%s", u ? u : "");
    M.have_last = 1;
    return 1;
}

/* The merged snapshot of base and the database models (references base). */
static struct sy_config *merged(struct sy_config *base)
{
    pthread_mutex_lock(&M.mu);
    struct sy_config *db = M.dbcfg;
    if (db)
        sy_config_ref(db);
    pthread_mutex_unlock(&M.mu);
    struct sy_config *c = sy_config_with_models(base, db);
    sy_config_unref(db);
    return c;
}

static int sync_read(struct sy_store *st, void *arg)
{
    (void)arg;
    return read_rows(st);
}

struct sy_config *sy_model_registry_with_db(struct sy_config *file_cfg)
{
    sy_admin_store_model_in_db = file_cfg->store_model_in_db != 0;
    int on = file_cfg->store_model_in_db && sy_db_enabled();
    pthread_mutex_lock(&M.mu);
    struct sy_config *old = M.base;
    sy_config_ref(file_cfg);
    M.base = file_cfg;
    int first = on && !M.on && !M.rows;
    M.on = on;
    pthread_mutex_unlock(&M.mu);
    sy_config_unref(old);
    if (!on)
        return file_cfg;
    if (first && sy_db_run_sync(sync_read, NULL) < 0)
        sy_warn("models: the database's models are not served until the table can be read");
    struct sy_config *c = merged(file_cfg);
    if (!c) {
        sy_warn("models: out of memory: the database's models are not served");
        return file_cfg;
    }
    sy_config_unref(file_cfg);
    return c;
}

/* On the DB thread after a change: the new config, built and put in force. */
static void rebuild(void)
{
    sy_model_registry_lock();
    pthread_mutex_lock(&M.mu);
    struct sy_config *base = M.base;
    if (base)
        sy_config_ref(base);
    int on = M.on;
    pthread_mutex_unlock(&M.mu);
    if (base && on) {
        struct sy_config *c = merged(base);
        char err[1024] = "";
        struct sy_gwconf *g = c ? sy_gwconf_build(c, err, sizeof err) : NULL;
        if (g) {
            size_t n = g->ndrts;
            sy_workers_swap_conf(g);
            sy_info("models: config rebuilt with the database's models: %zu deployment(s)", n);
        } else {
            sy_warn("models: the database's models are not applied: %s", c ? err : "out of memory");
        }
    }
    sy_config_unref(base);
    sy_model_registry_unlock();
}

/* ---- the refresher (worker 0 -> a DB thread -> worker 0) ---------------- */

struct rjob {
    struct sy_db_job job;
    int force;
};

static void refresh_run(struct sy_store *st, struct sy_db_job *job)
{
    struct rjob *j = (struct rjob *)job;
    int64_t prev_n = M.last_n;
    char prev_u[40];
    snprintf(prev_u, sizeof prev_u, "%s", M.last_u);
    int had = M.have_last;
    int rc = sy_store_exec(st, "SELECT COUNT(*) AS n, MAX(\"updated_at\") AS u FROM \"LiteLLM_ProxyModelTable\"", 0,
                           NULL, count_cb, NULL);
    if (rc < 0) {
        sy_debug("models: LiteLLM_ProxyModelTable not read: %s", sy_store_errmsg(st));
        return;
    }
    int changed = !had || M.last_n != prev_n || strcmp(M.last_u, prev_u) != 0;
    if (!changed && !j->force)
        return;
    rc = read_rows(st);
    if (rc < 0)
        M.have_last = 0; /* read again next time */
    else if (rc > 0)
        rebuild();
}

static void refresh_arm(uint64_t ms);

static void refresh_done(struct sy_db_job *job)
{
    free(job);
    M.busy = 0;
    if (M.timer && atomic_load(&M.force))
        refresh_arm(0);
}

static void refresh_tick(uv_timer_t *t)
{
    struct sy_worker *w = t->data;
    if (w->draining || !w->dbport)
        return;
    if (!M.busy) {
        struct rjob *j = calloc(1, sizeof *j);
        if (j) {
            j->job.run = refresh_run;
            j->job.done = refresh_done;
            j->force = atomic_exchange(&M.force, 0);
            if (sy_db_submit(w->dbport, &j->job) != 0)
                free(j);
            else
                M.busy = 1;
        }
    }
    refresh_arm(REFRESH_MS);
}

static void refresh_arm(uint64_t ms)
{
    if (M.timer)
        uv_timer_start(M.timer, refresh_tick, ms, 0);
}

static void on_kick(uv_async_t *a)
{
    (void)a;
    if (!M.busy)
        refresh_arm(0);
}

static void on_invalidate(const char *kind, const char *id)
{
    (void)id;
    if (strcmp(kind, "models") != 0) /* "models:db", "models:credentials" */
        return;
    atomic_store(&M.force, 1);
    pthread_mutex_lock(&M.kick_mu);
    if (M.kick)
        uv_async_send(M.kick);
    pthread_mutex_unlock(&M.kick_mu);
}

static void handle_free(uv_handle_t *h)
{
    free(h);
}

static void reg_worker_start(struct sy_worker *w)
{
    pthread_mutex_lock(&M.mu);
    int on = M.on;
    pthread_mutex_unlock(&M.mu);
    if (w->id != 0 || !w->dbport || M.timer || !on)
        return;
    uv_timer_t *t = malloc(sizeof *t);
    uv_async_t *k = malloc(sizeof *k);
    if (!t || !k || uv_async_init(&w->loop, k, on_kick) != 0) {
        free(t);
        free(k);
        sy_warn("models: the database's models are not refreshed (out of memory)");
        return;
    }
    uv_timer_init(&w->loop, t);
    t->data = w;
    uv_unref((uv_handle_t *)t);
    uv_unref((uv_handle_t *)k);
    M.w = w;
    M.timer = t;
    pthread_mutex_lock(&M.kick_mu);
    M.kick = k;
    pthread_mutex_unlock(&M.kick_mu);
    sy_keys_add_invalidate_hook(on_invalidate);
    uv_timer_start(t, refresh_tick, REFRESH_MS, 0);
}

static void reg_worker_stop(struct sy_worker *w)
{
    if (M.w != w || !M.timer)
        return;
    pthread_mutex_lock(&M.kick_mu);
    uv_async_t *k = M.kick;
    M.kick = NULL;
    pthread_mutex_unlock(&M.kick_mu);
    if (k)
        uv_close((uv_handle_t *)k, handle_free);
    uv_timer_stop(M.timer);
    uv_close((uv_handle_t *)M.timer, handle_free);
    M.timer = NULL;
    M.w = NULL;
}

const struct sy_stage sy_stage_model_registry = {
    .name = "model_registry",
    .routes = 0, /* no request runs it */
    .worker_start = reg_worker_start,
    .worker_stop = reg_worker_stop,
};
