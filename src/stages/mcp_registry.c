/* mcp_registry.c - the MCP servers in force and each worker's client pool
 * (stages/mcp.h): the config's mcp_servers merged with the rows of
 * "LiteLLM_MCPServerTable", kept current without ever blocking a loop.
 *
 *   config load (main thread)  conf_build: sy_mcp_set_build(config, aliases,
 *                              the last DB rows read) - a bad config server
 *                              fails the load, naming it
 *   worker 0, every 10 s       a DB job: SELECT count(*), max(updated_at); on a
 *   (and at once on start)     change (or when forced) every active row, as a
 *                              JSON array; the merged set for the config in
 *                              force is built there, on the DB thread
 *   "mcp:servers" invalidation the admin routes' change on this instance, or
 *                              another's through Redis (keys/invalidate.c):
 *                              sy_keys_invalidate's hook wakes worker 0 at
 *                              once with a forced read
 *
 * Publication: each config's state (struct regconf) holds its current set
 * under a mutex and a generation counter. Readers (sy_mcp_current) keep the
 * set they last took in a thread-local cache with its (config serial,
 * generation): while both match, a read is two loads and an atomic
 * increment; the mutex is taken once per worker per change. A DB change
 * bumps the process-wide rows generation; a config built later starts from
 * the newest rows, and worker 0 rebuilds the set of the config in force when
 * its generation lags.
 *
 * Pools: a worker's pool (sy_mcp_pool over its upstream pool) is made on its
 * first MCP request, so a worker that never serves MCP has none. A worker
 * with a pool checks once a second (two atomic loads) whether the set in
 * force changed, and syncs the pool to it: stdio children of removed or
 * changed servers are stopped within a second of a reload or a DB change.
 *
 * Without mcp_servers in the config and without a database MCP is off:
 * sy_mcp_current is NULL, nothing runs. The stage has no routes: requests
 * that are not MCP never see it.
 */
#include "gateway/gateway.h"
#include "gateway/stage.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/log.h"
#include "keys/keys.h"
#include "stages/mcp.h"
#include "store/dbpool.h"
#include "store/store.h"

#define REFRESH_MS   10000 /* worker 0's change check */
#define POOLCHECK_MS 1000  /* a pool's check of the set in force */
#define ROWS_MAX     (64u << 20)

/* ---- per config --------------------------------------------------------- */

struct regconf {
    uint64_t serial;                         /* unique per config build (never reused, unlike addresses) */
    const char *servers_json, *aliases_json; /* the config's (lives as long as g->cfg) */
    pthread_mutex_t mu;
    struct sy_mcp_set *set; /* under mu */
    _Atomic uint64_t gen;   /* the rows generation set was built from */
};

static int conf_slot = -1;

/* ---- process-wide ------------------------------------------------------- */

static struct {
    pthread_mutex_t mu; /* rows, rows_gen */
    char *rows;         /* the DB's active rows as a JSON array; NULL: none read yet */
    uint64_t rows_gen;
    _Atomic uint64_t serials;
    /* the refresher (worker 0's loop) */
    pthread_mutex_t kick_mu; /* kick's lifetime against other threads' sends */
    uv_async_t *kick;        /* under kick_mu */
    struct sy_worker *w;
    uv_timer_t *timer;
    int busy;
    atomic_int force;
    /* the last change check (the refresh job's; one job at a time) */
    int64_t last_n;
    char last_u[40];
    int have_last;
} R = {.mu = PTHREAD_MUTEX_INITIALIZER, .kick_mu = PTHREAD_MUTEX_INITIALIZER};

static struct regconf *regconf_of(const struct sy_gwconf *g)
{
    return g ? sy_stage_conf(g, conf_slot) : NULL;
}

static uint64_t rows_gen_now(void)
{
    pthread_mutex_lock(&R.mu);
    uint64_t gen = R.rows_gen;
    pthread_mutex_unlock(&R.mu);
    return gen;
}

/* A copy of the newest rows and their generation. */
static char *rows_snapshot(uint64_t *gen)
{
    pthread_mutex_lock(&R.mu);
    char *rows = R.rows ? strdup(R.rows) : NULL;
    *gen = R.rows_gen;
    pthread_mutex_unlock(&R.mu);
    return rows;
}

static void log_warnings(struct sy_buf *warn)
{
    if (!warn->len || !warn->p)
        return;
    char *save = NULL;
    for (char *line = strtok_r(warn->p, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        sy_warn("mcp: %s", line);
}

/* Build rc's set from rows (generation gen) and put it in force, unless a
 * newer one is there already. 0, or -1 (out of memory: the old set stays). */
static int regconf_rebuild(struct regconf *rc, const char *rows, uint64_t gen)
{
    char err[256] = "";
    struct sy_buf warn;
    sy_buf_init(&warn, 64u << 10);
    struct sy_mcp_set *set = sy_mcp_set_build(rc->servers_json, rc->aliases_json, rows, err, sizeof err, &warn);
    log_warnings(&warn);
    sy_buf_free(&warn);
    if (!set) {
        sy_warn("mcp: servers from the database not applied: %s", err[0] ? err : "out of memory");
        return -1;
    }
    pthread_mutex_lock(&rc->mu);
    struct sy_mcp_set *old = NULL;
    if (gen >= atomic_load(&rc->gen) || !rc->set) {
        old = rc->set;
        rc->set = set;
        atomic_store_explicit(&rc->gen, gen, memory_order_release);
        set = NULL;
    }
    pthread_mutex_unlock(&rc->mu);
    if (old)
        sy_mcp_set_unref(old);
    if (set)
        sy_mcp_set_unref(set);
    return 0;
}

/* ---- readers ------------------------------------------------------------- */

static _Thread_local struct {
    uint64_t serial, gen;
    struct sy_mcp_set *set; /* one reference of ours */
} tl;

struct sy_mcp_set *sy_mcp_current(const struct sy_gwconf *g)
{
    struct regconf *rc = regconf_of(g);
    if (!rc)
        return NULL;
    uint64_t gen = atomic_load_explicit(&rc->gen, memory_order_acquire);
    if (tl.set && tl.serial == rc->serial && tl.gen == gen) {
        sy_mcp_set_ref(tl.set);
        return tl.set;
    }
    pthread_mutex_lock(&rc->mu);
    struct sy_mcp_set *set = rc->set;
    gen = atomic_load_explicit(&rc->gen, memory_order_relaxed);
    sy_mcp_set_ref(set); /* the cache's */
    sy_mcp_set_ref(set); /* the caller's */
    pthread_mutex_unlock(&rc->mu);
    struct sy_mcp_set *old = tl.set;
    tl.set = set;
    tl.serial = rc->serial;
    tl.gen = gen;
    if (old)
        sy_mcp_set_unref(old);
    return set;
}

static void tl_release(void)
{
    if (tl.set)
        sy_mcp_set_unref(tl.set);
    memset(&tl, 0, sizeof tl);
}

/* ---- the refresh job (worker 0 -> a DB thread -> worker 0) ---------------- */

struct rjob {
    struct sy_db_job job;
    struct sy_gwconf *g; /* the config in force when submitted (a reference) */
    int force;
};

/* The change check's row: kept in R.last_* (only the one job in flight
 * touches them). */
static int count_cb(void *ud, const struct sy_srow *r)
{
    (void)ud;
    const char *u = sy_srow_text(r, "u");
    R.last_n = sy_srow_int(r, "n", 0);
    snprintf(R.last_u, sizeof R.last_u, "%s", u ? u : "");
    R.have_last = 1;
    return 1;
}

struct rows_acc {
    struct sy_buf b;
    int n;
};

static int rows_cb(void *ud, const struct sy_srow *r)
{
    struct rows_acc *acc = ud;
    const char *ap = sy_srow_text(r, "approval_status"); /* newer LiteLLM: a submission under review */
    if (ap && strcmp(ap, "active") != 0)
        return 0;
    if (acc->n++)
        SY_BUF_LIT(&acc->b, ",");
    sy_srow_json(&acc->b, r);
    return 0;
}

/* On the DB thread: read what changed, publish it, and bring the set of the
 * job's config up to date. */
static void refresh_run(struct sy_store *st, struct sy_db_job *job)
{
    struct rjob *j = (struct rjob *)job;
    int64_t prev_n = R.last_n;
    char prev_u[40];
    snprintf(prev_u, sizeof prev_u, "%s", R.last_u);
    int had = R.have_last;
    int rc = sy_store_exec(st, "SELECT COUNT(*) AS n, MAX(\"updated_at\") AS u FROM \"LiteLLM_MCPServerTable\"", 0,
                           NULL, count_cb, NULL);
    if (rc < 0) {
        sy_debug("mcp: server table not read: %s", sy_store_errmsg(st));
        return;
    }
    int changed = !had || R.last_n != prev_n || strcmp(R.last_u, prev_u) != 0;
    if (changed || j->force) {
        struct rows_acc acc = {.n = 0};
        sy_buf_init(&acc.b, ROWS_MAX);
        SY_BUF_LIT(&acc.b, "[");
        rc = sy_store_exec(st, "SELECT * FROM \"LiteLLM_MCPServerTable\" ORDER BY \"created_at\", \"server_id\"", 0,
                           NULL, rows_cb, &acc);
        SY_BUF_LIT(&acc.b, "]");
        if (rc < 0 || sy_buf_failed(&acc.b)) {
            if (rc < 0)
                sy_warn("mcp: server table not read: %s", sy_store_errmsg(st));
            else
                sy_warn("mcp: server table not read: more than %u bytes of rows", ROWS_MAX);
            R.have_last = 0; /* read again next time */
            sy_buf_free(&acc.b);
            return;
        }
        pthread_mutex_lock(&R.mu);
        if (!R.rows || strcmp(R.rows, acc.b.p) != 0) {
            free(R.rows);
            R.rows = strdup(acc.b.p);
            R.rows_gen++;
            sy_info("mcp: %d server(s) in the database", acc.n);
        }
        pthread_mutex_unlock(&R.mu);
        sy_buf_free(&acc.b);
    }
    struct regconf *cf = regconf_of(j->g);
    uint64_t gen;
    if (cf && atomic_load(&cf->gen) != rows_gen_now()) {
        char *rows = rows_snapshot(&gen);
        regconf_rebuild(cf, rows, gen);
        free(rows);
    }
}

static void refresh_arm(uint64_t ms);

static void refresh_done(struct sy_db_job *job)
{
    struct rjob *j = (struct rjob *)job;
    sy_gwconf_unref(j->g);
    free(j);
    R.busy = 0;
    if (!R.w || !R.timer)
        return;
    /* a forced read asked for meanwhile, or a config that came in force
     * meanwhile and lags the rows: once more at once */
    struct regconf *cf = regconf_of(R.w->conf);
    if (atomic_load(&R.force) || (cf && atomic_load(&cf->gen) != rows_gen_now()))
        refresh_arm(0);
}

static void refresh_tick(uv_timer_t *t)
{
    struct sy_worker *w = t->data;
    if (w->draining || !w->dbport)
        return;
    if (R.busy) {
        refresh_arm(REFRESH_MS);
        return;
    }
    struct rjob *j = calloc(1, sizeof *j);
    if (!j) {
        refresh_arm(REFRESH_MS);
        return;
    }
    j->job.run = refresh_run;
    j->job.done = refresh_done;
    j->force = atomic_exchange(&R.force, 0);
    j->g = w->conf;
    sy_gwconf_ref(j->g);
    if (sy_db_submit(w->dbport, &j->job) != 0) {
        sy_gwconf_unref(j->g);
        free(j);
    } else {
        R.busy = 1;
    }
    refresh_arm(REFRESH_MS);
}

static void refresh_arm(uint64_t ms)
{
    if (R.timer)
        uv_timer_start(R.timer, refresh_tick, ms, 0);
}

static void on_kick(uv_async_t *a)
{
    (void)a;
    if (!R.busy)
        refresh_arm(0);
    /* else refresh_done re-arms: R.force is set */
}

/* keys/cache.c's hook: kinds it does not know, from any thread. */
static void on_invalidate(const char *kind, const char *id)
{
    (void)id;
    if (strcmp(kind, "mcp") != 0 && strcmp(kind, "all") != 0)
        return;
    atomic_store(&R.force, 1);
    pthread_mutex_lock(&R.kick_mu);
    if (R.kick)
        uv_async_send(R.kick);
    pthread_mutex_unlock(&R.kick_mu);
}

void sy_mcp_registry_changed(struct sy_worker *w)
{
    /* here at once (the hook), and on the other instances through Redis */
    sy_gateway_invalidate(w, "mcp:servers");
}

static void refresher_start(struct sy_worker *w)
{
    if (w->id != 0 || !w->dbport || R.timer || !sy_db_enabled())
        return;
    uv_timer_t *t = malloc(sizeof *t);
    uv_async_t *k = malloc(sizeof *k);
    if (!t || !k || uv_async_init(&w->loop, k, on_kick) != 0) {
        free(t);
        free(k);
        sy_warn("mcp: servers in the database are not read (out of memory)");
        return;
    }
    uv_timer_init(&w->loop, t);
    t->data = w;
    uv_unref((uv_handle_t *)t);
    uv_unref((uv_handle_t *)k);
    R.w = w;
    R.timer = t;
    pthread_mutex_lock(&R.kick_mu);
    R.kick = k;
    pthread_mutex_unlock(&R.kick_mu);
    sy_keys_set_invalidate_hook(on_invalidate);
    uv_timer_start(t, refresh_tick, 0, 0);
}

static void handle_free(uv_handle_t *h)
{
    free(h);
}

static void refresher_stop(struct sy_worker *w)
{
    if (R.w != w || !R.timer)
        return;
    pthread_mutex_lock(&R.kick_mu);
    uv_async_t *k = R.kick;
    R.kick = NULL;
    pthread_mutex_unlock(&R.kick_mu);
    if (k)
        uv_close((uv_handle_t *)k, handle_free);
    uv_timer_stop(R.timer);
    uv_close((uv_handle_t *)R.timer, handle_free);
    R.timer = NULL;
    R.w = NULL;
    /* a job in flight completes through the port, which the worker frees
     * after its stages stop: its done never runs then; its memory is lost
     * with the process */
}

/* ---- each worker's pool -------------------------------------------------- */

static _Thread_local struct {
    struct sy_worker *w;
    struct sy_mcp_pool *p;
    uv_timer_t *t;
    uint64_t serial, gen;   /* what p was synced to */
    struct sy_mcp_set *set; /* held while p may point into it */
} tp;

/* Sync the pool to the set in force on its worker: 1 when the pool is
 * still wanted, 0 when MCP went off (the pool is closed). */
static int pool_sync(void)
{
    struct regconf *rc = regconf_of(tp.w->conf);
    if (!rc) {
        if (tp.t) {
            uv_timer_stop(tp.t);
            uv_close((uv_handle_t *)tp.t, handle_free);
            tp.t = NULL;
        }
        sy_mcp_pool_close(tp.p);
        tp.p = NULL;
        if (tp.set)
            sy_mcp_set_unref(tp.set);
        tp.set = NULL;
        return 0;
    }
    if (tp.set && tp.serial == rc->serial && tp.gen == atomic_load_explicit(&rc->gen, memory_order_acquire))
        return 1;
    struct sy_mcp_set *set = sy_mcp_current(tp.w->conf);
    if (!set)
        return 1;
    sy_mcp_pool_sync(tp.p, set);
    if (tp.set)
        sy_mcp_set_unref(tp.set);
    tp.set = set;
    tp.serial = tl.serial;
    tp.gen = tl.gen;
    return 1;
}

static void pool_check(uv_timer_t *t)
{
    (void)t;
    if (tp.p)
        pool_sync();
}

struct sy_mcp_pool *sy_mcp_worker_pool(struct sy_worker *w)
{
    if (tp.p && tp.w == w) {
        pool_sync();
        return tp.p;
    }
    if (tp.p || !w->upool || !regconf_of(w->conf))
        return NULL; /* another worker on this thread cannot happen; MCP off */
    struct sy_mcp_pool *p = sy_mcp_pool_new(&w->loop, w->upool);
    if (!p)
        return NULL;
    uv_timer_t *t = malloc(sizeof *t);
    if (t) {
        uv_timer_init(&w->loop, t);
        uv_unref((uv_handle_t *)t);
        uv_timer_start(t, pool_check, POOLCHECK_MS, POOLCHECK_MS);
    }
    tp.w = w;
    tp.p = p;
    tp.t = t;
    tp.set = NULL;
    if (!pool_sync())
        return NULL;
    return tp.p;
}

static void pool_stop(struct sy_worker *w)
{
    if (tp.w != w)
        return;
    if (tp.t) {
        uv_timer_stop(tp.t);
        uv_close((uv_handle_t *)tp.t, handle_free);
    }
    if (tp.p)
        sy_mcp_pool_close(tp.p);
    if (tp.set)
        sy_mcp_set_unref(tp.set);
    memset(&tp, 0, sizeof tp);
}

/* ---- the stage ------------------------------------------------------------ */

static void reg_worker_start(struct sy_worker *w)
{
    refresher_start(w);
}

static void reg_worker_stop(struct sy_worker *w)
{
    pool_stop(w);
    refresher_stop(w);
    tl_release();
}

static int reg_conf_build(struct sy_gwconf *g, void **conf, char *err, size_t errlen)
{
    const struct sy_config *cfg = g->cfg;
    *conf = NULL;
    sy_mcp_stdio_allow_db(cfg->mcp_stdio_from_api); /* stdio rows of the database run only when allowed */
    if (!cfg->mcp_servers && !g->db)
        return 0; /* MCP off */
    struct regconf *rc = calloc(1, sizeof *rc);
    if (!rc) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    rc->serial = atomic_fetch_add(&R.serials, 1) + 1;
    rc->servers_json = cfg->mcp_servers;
    rc->aliases_json = cfg->mcp_aliases;
    pthread_mutex_init(&rc->mu, NULL);
    sy_mcp_set_master_key(g->master_key); /* LiteLLM's salt for stored credentials when LITELLM_SALT_KEY is unset */
    /* the config alone first: its errors fail the load, whatever the DB holds */
    char e[256] = "";
    struct sy_buf warn;
    sy_buf_init(&warn, 64u << 10);
    struct sy_mcp_set *set = sy_mcp_set_build(rc->servers_json, rc->aliases_json, NULL, e, sizeof e, &warn);
    log_warnings(&warn);
    sy_buf_free(&warn);
    if (!set) {
        snprintf(err, errlen, "mcp_servers: %s", e[0] ? e : "out of memory");
        pthread_mutex_destroy(&rc->mu);
        free(rc);
        return -1;
    }
    rc->set = set;
    uint64_t gen;
    char *rows = g->db ? rows_snapshot(&gen) : NULL;
    if (rows) /* the newest DB rows known: a reload does not wait for the next read */
        regconf_rebuild(rc, rows, gen);
    free(rows);
    *conf = rc;
    return 0;
}

static void reg_conf_free(void *conf)
{
    struct regconf *rc = conf;
    if (!rc)
        return;
    if (rc->set)
        sy_mcp_set_unref(rc->set);
    pthread_mutex_destroy(&rc->mu);
    free(rc);
}

static const char *transport_name(enum sy_mcp_transport t)
{
    return t == SY_MCP_STDIO ? "stdio" : t == SY_MCP_SSE ? "sse" : "http";
}

static const char *auth_name(enum sy_mcp_auth a)
{
    switch (a) {
    case SY_MCP_AUTH_API_KEY: return "api_key";
    case SY_MCP_AUTH_BEARER: return "bearer_token";
    case SY_MCP_AUTH_BASIC: return "basic";
    case SY_MCP_AUTH_AUTHORIZATION: return "authorization";
    case SY_MCP_AUTH_OAUTH2: return "oauth2";
    default: return "none";
    }
}

/* A url without what may carry a secret: userinfo and the query. */
static void print_url(FILE *out, const char *url)
{
    const char *p = url, *scheme = strstr(url, "://");
    if (scheme) {
        fwrite(url, 1, (size_t)(scheme + 3 - url), out);
        p = scheme + 3;
        const char *end = p + strcspn(p, "/?#");
        const char *at = memchr(p, '@', (size_t)(end - p));
        if (at)
            p = at + 1;
    }
    fwrite(p, 1, strcspn(p, "?#"), out);
}

static void reg_conf_print(const struct sy_gwconf *g, FILE *out)
{
    struct regconf *rc = regconf_of(g);
    if (!rc)
        return;
    pthread_mutex_lock(&rc->mu);
    const struct sy_mcp_set *set = rc->set;
    for (size_t i = 0; set && i < set->n; i++) {
        const struct sy_mcp_server *s = &set->s[i];
        fprintf(out, "mcp server %s%s%s: transport=%s ", s->name, s->alias ? " alias=" : "", s->alias ? s->alias : "",
                transport_name(s->transport));
        if (s->transport == SY_MCP_STDIO) {
            fprintf(out, "command=%s", s->command ? s->command : "");
            for (size_t k = 0; k < s->nargs; k++)
                fprintf(out, " %s", s->args[k]);
        } else {
            fputs("url=", out);
            print_url(out, s->url ? s->url : "");
        }
        fprintf(out, " auth=%s%s\n", auth_name(s->auth_type), s->from_db ? " (database)" : "");
    }
    if (g->db)
        fputs("mcp servers: also the database's LiteLLM_MCPServerTable (read every 10 s)\n", out);
    pthread_mutex_unlock(&rc->mu);
}

const struct sy_stage sy_stage_mcp_registry = {
    .name = "mcp_registry",
    .routes = 0, /* no request runs it */
    .worker_start = reg_worker_start,
    .worker_stop = reg_worker_stop,
    .conf_build = reg_conf_build,
    .conf_free = reg_conf_free,
    .conf_print = reg_conf_print,
    .conf_slot = &conf_slot,
};
