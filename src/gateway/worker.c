/* worker.c - worker threads: one libuv loop, listener, upstream pool and
 * metrics shard each; nothing on the request path is shared between them.
 *
 * The main thread talks to workers only through each worker's uv_async
 * handle: a new config is published in `pending` (the worker swaps it in at
 * its next wake-up and drops its reference to the old one; in-flight requests
 * hold their own), and `drain_requested` starts a graceful stop.
 */
#include "gateway/gateway.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/log.h"
#include "http/server.h"
#include "metrics/metrics.h"
#include "upstream/client.h"
#include "redis/redis.h"
#include "store/dbpool.h"
#include "gateway/stage.h"

struct sy_gateway sy_gw;
static double drain_timeout_s = 30;

static void limits_cb(struct sy_server_limits *out, void *ud)
{
    struct sy_worker *w = ud;
    const struct sy_config *cfg = w->conf->cfg;
    out->max_header_bytes = cfg->max_header_bytes ? cfg->max_header_bytes : 65536;
    out->max_body_bytes = w->conf->max_body;
    out->header_timeout_ms = (uint64_t)(cfg->header_timeout_s * 1000);
    out->body_timeout_ms = (uint64_t)(cfg->body_timeout_s * 1000);
    out->keepalive_timeout_ms = (uint64_t)(cfg->keepalive_timeout_s * 1000);
    out->body_total_timeout_ms = (uint64_t)(cfg->body_total_timeout_s * 1000);
    out->cors_origins = w->conf->cors_origins;
}

/* The model table of the worker's current config (router/sync.h: the
 * periodic sync reads it on this worker's loop, where w->conf is swapped). */
static const struct sy_table *current_table(void *ud)
{
    return &((struct sy_worker *)ud)->conf->table;
}

static void on_drained(void *arg)
{
    struct sy_worker *w = arg;
    uv_timer_stop(&w->drain_timer);
    uv_close((uv_handle_t *)&w->drain_timer, NULL);
    uv_close((uv_handle_t *)&w->wake, NULL);
    sy_server_close_handles(w->server);
    sy_rsync_stop(&w->rsync);
    for (size_t i = 0; i < sy_nstages; i++)
        if (sy_stages[i]->worker_stop)
            sy_stages[i]->worker_stop(w);
    if (w->redis) {
        sy_redis_free(w->redis);
        w->redis = NULL;
        w->rsync.redis = NULL;
    }
    if (w->dbport) {
        sy_db_port_free(w->dbport);
        w->dbport = NULL;
    }
    if (w->upool) {
        sy_upool_close(w->upool);
        w->upool = NULL;
    }
}

static void on_drain_timeout(uv_timer_t *t)
{
    struct sy_worker *w = t->data;
    sy_warn("worker %d: drain timeout, closing %zu connection(s)", w->id, sy_server_nconns(w->server));
    sy_server_close_all(w->server);
}

/* The upstream pool's after_read hook: a streamed answer's bytes leave with the
 * read that brought them (see "writing" in http/server.c). */
static void flush_server(void *server)
{
    sy_server_flush(server);
}

static void on_wake(uv_async_t *a)
{
    struct sy_worker *w = a->data;
    struct sy_gwconf *nc = atomic_exchange(&w->pending, NULL);
    if (nc) {
        struct sy_gwconf *old = w->conf;
        w->conf = nc;
        sy_gwconf_unref(old);
    }
    if (atomic_load(&w->drain_requested) && !w->draining) {
        w->draining = 1;
        uv_timer_init(&w->loop, &w->drain_timer);
        w->drain_timer.data = w;
        uv_timer_start(&w->drain_timer, on_drain_timeout, (uint64_t)(drain_timeout_s * 1000), 0);
        uv_unref((uv_handle_t *)&w->drain_timer);
        sy_server_drain(w->server, on_drained, w);
    }
}

static void worker_main(void *arg)
{
    struct sy_worker *w = arg;
    w->listen_rc = sy_server_listen(w->server, w->host, w->port);
    uv_sem_post(&w->ready);
    if (w->listen_rc != 0)
        return;
    if (w->id == 0 && w->redis) /* one worker runs the router's periodic Redis sync */
        sy_rsync_start(&w->rsync, &w->loop, sy_rand(w));
    for (size_t i = 0; i < sy_nstages; i++) /* stages' per-worker work (background health checks) */
        if (sy_stages[i]->worker_start)
            sy_stages[i]->worker_start(w);
    uv_run(&w->loop, UV_RUN_DEFAULT);
}

int sy_workers_start(int n, const char *host, int port, struct sy_gwconf *g)
{
    sy_gw.nworkers = n;
    sy_gw.workers = calloc((size_t)n, sizeof *sy_gw.workers);
    if (!sy_gw.workers)
        return -1;
    atomic_store(&sy_gw.conf, g);
    const struct sy_config *cfg = g->cfg;
    for (int i = 0; i < n; i++) {
        struct sy_worker *w = &sy_gw.workers[i];
        w->id = i;
        w->host = host;
        w->port = port;
        sy_rng_seed(&w->rng, ((uint64_t)time(NULL) << 20) ^ (sy_now_ns() * 0x9E3779B97F4A7C15ULL) ^ (uint64_t)(i + 1));
        uv_loop_init(&w->loop);
        uv_async_init(&w->loop, &w->wake, on_wake);
        w->wake.data = w;
        sy_gwconf_ref(g);
        w->conf = g;
        w->metrics = sy_metrics_shard(i);
        struct sy_upool_opts uo = {.ssl_verify = cfg->ssl_verify,
                                   .ca_file = cfg->ssl_ca_file,
                                   .max_idle_per_origin = 256,
                                   .idle_timeout_s = 60};
        w->upool = sy_upool_new(&w->loop, &uo);
        if (!w->upool) {
            sy_error("worker %d: cannot create the upstream pool (TLS setup failed)", i);
            return -1;
        }
        w->server = sy_server_new(&w->loop, sy_handle_request, limits_cb, w);
        sy_upool_after_read(w->upool, flush_server, w->server);
        const struct sy_router_config *rc = &cfg->router;
        if (rc->redis_host) { /* Redis settings are read at start; a reload keeps the connection */
            struct sy_redis_opts ro = {.host = rc->redis_host,
                                       .port = rc->redis_port,
                                       .username = rc->redis_username,
                                       .password = rc->redis_password,
                                       .db = rc->redis_db};
            w->redis = sy_redis_new(&w->loop, &ro);
        }
        w->rsync = (struct sy_rsync){.redis = w->redis, .metrics = w->metrics, .table = current_table, .ud = w};
        if (sy_gw.db) /* created before the loop's thread runs: no race on the loop */
            w->dbport = sy_db_port_new(&w->loop);
        uv_sem_init(&w->ready, 0);
        if (uv_thread_create(&w->thread, worker_main, w) != 0)
            return -1;
        uv_sem_wait(&w->ready);
        if (w->listen_rc != 0) {
            sy_error("cannot listen on %s:%d: %s", host, port, uv_strerror(w->listen_rc));
            return -1;
        }
    }
    return 0;
}

void sy_workers_swap_conf(struct sy_gwconf *g)
{
    for (int i = 0; i < sy_gw.nworkers; i++) {
        struct sy_worker *w = &sy_gw.workers[i];
        sy_gwconf_ref(g);
        struct sy_gwconf *prev = atomic_exchange(&w->pending, g);
        if (prev)
            sy_gwconf_unref(prev);
        uv_async_send(&w->wake);
    }
    struct sy_gwconf *old = atomic_exchange(&sy_gw.conf, g);
    sy_gwconf_unref(old);
}

void sy_workers_drain(double timeout_s)
{
    drain_timeout_s = timeout_s;
    for (int i = 0; i < sy_gw.nworkers; i++) {
        atomic_store(&sy_gw.workers[i].drain_requested, 1);
        uv_async_send(&sy_gw.workers[i].wake);
    }
}

void sy_workers_join(void)
{
    for (int i = 0; i < sy_gw.nworkers; i++) {
        struct sy_worker *w = &sy_gw.workers[i];
        uv_thread_join(&w->thread);
        free(w->server);
        struct sy_gwconf *p = atomic_exchange(&w->pending, NULL);
        if (p)
            sy_gwconf_unref(p);
        sy_gwconf_unref(w->conf);
        uv_loop_close(&w->loop);
    }
    free(sy_gw.workers);
    sy_gw.workers = NULL;
    sy_gwconf_unref(atomic_exchange(&sy_gw.conf, NULL));
}
