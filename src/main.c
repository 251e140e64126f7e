/* main.c - switchyard's entry point: command line, config load, workers,
 * signals (SIGTERM/SIGINT drain and exit 0; SIGHUP reloads the config).
 *
 * Without --config (or CONFIG_FILE_PATH) switchyard starts on a built-in
 * config whose model groups are served by the in-process mock model, so it
 * answers at once with no API keys.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "config/config.h"
#include "core/log.h"
#include "gateway/gateway.h"
#include "keys/keys.h"
#include "metrics/metrics.h"
#include "spend/spend.h"
#include "limits/limits.h"
#include "logging/logging.h"
#include "cache/cache.h"
#include "responses/owners.h"
#include "responses/store.h"
#include "store/dbpool.h"
#include "stages/model_registry.h"
#include "tokenizer/tokenizer.h"
#include "upstream/client.h"

static const char default_config[] =
    "# switchyard's built-in default: model groups served by the in-process mock model.\n"
    "model_list:\n"
    "  - model_name: mock-gpt\n"
    "    litellm_params: {model: mock/gpt-4o-mini}\n"
    "  - model_name: gpt-4o-mini\n"
    "    litellm_params: {model: mock/gpt-4o-mini}\n"
    "  - model_name: gpt-4o\n"
    "    litellm_params: {model: mock/gpt-4o}\n"
    "  - model_name: text-embedding-3-small\n"
    "    litellm_params: {model: mock/text-embedding-3-small}\n"
    "    model_info: {mode: embedding}\n"
    "litellm_settings:\n"
    "  callbacks: [\"prometheus\"]\n";

static const char *config_path;
static uv_signal_t sig_term, sig_int, sig_hup;
static int stopping;

static void usage(FILE *o)
{
    fprintf(
        o, "usage: switchyard [options]\n"
           "  --config FILE      LiteLLM-compatible config.yaml (env CONFIG_FILE_PATH); default: built-in mock models\n"
           "  --host HOST        listen address (default 0.0.0.0)\n"
           "  --port PORT        listen port (default 4000)\n"
           "  --workers N        worker threads (default: CPU count); alias --num_workers\n"
           "  --check-config     validate the config, print model groups (secrets redacted), exit 0 or 1\n"
           "  --log-level L      debug, info, warn, error (default info; env SWITCHYARD_LOG)\n"
           "  --db URL|PATH      database when the config names none (general_settings.database_url /\n"
           "                     DATABASE_URL win): postgresql://... or a SQLite file (env SWITCHYARD_DB;\n"
           "                     default ./switchyard.db; 'none' runs without keys and spend)\n"
           "  --detailed_debug   one log line per request (as LITELLM_LOG=DEBUG)\n"
           "  --version          print the version\n");
}

/* The config names a callback some sink implements (logging/sinks.c): its
 * "not supported" warning is only for the others. */
static int sink_known(const char *name)
{
    return sy_sink_find(name) != NULL;
}

static struct sy_config *load_cfg(const char *path, char *err, size_t errlen)
{
    struct sy_config *cfg = NULL;
    int rc = path ? sy_config_load(path, &cfg, err, errlen)
                  : sy_config_load_string(default_config, sizeof default_config - 1, "<built-in default>", NULL, &cfg,
                                          err, errlen);
    return rc == 0 ? cfg : NULL;
}

/* The price map (docs/prices.md): LITELLM_MODEL_COST_MAP_URL's file (else
 * the built-in one), then general_settings.switchyard_model_prices over it.
 * A map that cannot be used falls back to the built-in one, as LiteLLM falls
 * back to its local copy. prices_problem: the last load's complaint (for
 * --check-config), "" when none. */
static char prices_problem[1024];

static void load_prices(const struct sy_config *cfg)
{
    char note[512] = "", perr[512] = "";
    prices_problem[0] = 0;
    const char *map = sy_prices_env_map(note, sizeof note);
    if (note[0]) {
        sy_warn("prices: %s", note);
        snprintf(prices_problem, sizeof prices_problem, "%s", note);
    }
    if (sy_prices_load_map(map, cfg->model_prices_path, perr, sizeof perr) == 0)
        return;
    sy_warn("prices: %s", perr);
    snprintf(prices_problem, sizeof prices_problem, "%s", perr);
    if (map && sy_prices_load_map(NULL, cfg->model_prices_path, perr, sizeof perr) == 0) {
        sy_warn("prices: using the built-in map instead of %s", map);
        return;
    }
    if (map)
        sy_warn("prices: %s", perr);
}

static struct sy_gwconf *build(struct sy_config *cfg, char *err, size_t errlen)
{
    load_prices(cfg);
    return sy_gwconf_build(cfg, err, errlen);
}

/* The database: the config's database_url (or DATABASE_URL), else --db, else
 * SWITCHYARD_DB, else ./switchyard.db; NULL for "none". */
static const char *db_url(const struct sy_config *cfg, const char *cli)
{
    const char *u = cfg->database_url;
    if (!u || !*u)
        u = cli;
    if (!u || !*u)
        u = getenv("SWITCHYARD_DB");
    if (!u || !*u)
        u = "switchyard.db";
    if (!strcmp(u, "none") || !strcmp(u, "off"))
        return NULL;
    return u;
}

static void on_budget_reset(void)
{
    sy_keys_invalidate("all", "");
    sy_ledger_forget(-1, NULL);
}

/* Start the database pool, key cache, spend writer and (with Redis) the key
 * invalidation listener. 0, or -1 when a configured database cannot be used. */
static int start_db(const struct sy_config *cfg, const char *cli)
{
    const char *url = db_url(cfg, cli);
    sy_keys_init(cfg->user_api_key_cache_ttl_s, 0);
    if (!url)
        return 0;
    static struct sy_store_conf sc;
    sc.url = strdup(url);
    char err[512] = "";
    int threads = cfg->database_connection_pool_limit > 0 ? cfg->database_connection_pool_limit : SY_DB_THREADS_DEFAULT;
    if (sy_db_start(&sc, threads, 1, err, sizeof err) != 0) {
        fprintf(stderr, "switchyard: database %s: %s\n",
                sy_store_url_kind(url) == SY_STORE_POSTGRES ? "(PostgreSQL)" : url, err);
        return -1;
    }
    sy_gw.db = 1;
    sy_spend_on_reset = on_budget_reset;
    struct sy_spend_conf spc = {
        .batch_interval_s = cfg->proxy_batch_write_at_s,
        .max_queue = cfg->spend_queue_max,
        .disable_spend_logs = cfg->disable_spend_logs,
        .disable_error_logs = cfg->disable_error_logs,
        .reset_interval_s = 60,
    };
    if (cfg->budget_resched_max_s > 0) { /* proxy_budget_rescheduler_{min,max}_time: once, at random, as LiteLLM */
        unsigned r = 0;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
            r = (unsigned)time(NULL);
        spc.reset_interval_s =
            cfg->budget_resched_min_s + (cfg->budget_resched_max_s - cfg->budget_resched_min_s) * (r / 4294967295.0);
    }
    if (sy_spend_start(&spc) != 0) {
        fprintf(stderr, "switchyard: cannot start the spend writer\n");
        return -1;
    }
    struct sy_retention_conf rtc = {
        .period_s = cfg->spend_logs_retention_s, .interval_s = cfg->spend_logs_retention_interval_s, .pause_s = 0.1};
    if (sy_retention_start(&rtc) != 0)
        sy_warn("spend-log retention: not started; old spend logs are kept");
    const struct sy_router_config *r = &cfg->router;
    if (r->redis_host)
        sy_keys_invalidate_start(r->redis_host, r->redis_port, r->redis_username, r->redis_password, r->redis_db);
    sy_info("database: %s (%s)", sy_store_url_kind(url) == SY_STORE_POSTGRES ? "PostgreSQL" : "SQLite",
            sy_store_url_kind(url) == SY_STORE_POSTGRES ? "database_url" : url);
    return 0;
}

static void on_stop_signal(uv_signal_t *s, int signum)
{
    if (stopping++) {
        sy_warn("second signal: exiting now");
        _exit(1);
    }
    sy_info("%s: draining in-flight requests", signum == SIGTERM ? "SIGTERM" : "SIGINT");
    sy_workers_drain(30);
    uv_close((uv_handle_t *)&sig_term, NULL);
    uv_close((uv_handle_t *)&sig_int, NULL);
    uv_close((uv_handle_t *)&sig_hup, NULL);
}

static void on_hup(uv_signal_t *s, int signum)
{
    char err[1024] = "";
    sy_info("SIGHUP: reloading %s", config_path ? config_path : "the built-in config");
    sy_model_registry_lock(); /* a database model change builds and swaps under it too */
    struct sy_config *cfg = load_cfg(config_path, err, sizeof err);
    struct sy_gwconf *g = cfg ? build(sy_model_registry_with_db(cfg), err, sizeof err) : NULL;
    if (!g) {
        sy_model_registry_unlock();
        sy_error("config reload failed, keeping the old config: %s", err);
        return;
    }
    size_t ngroups = g->ngroups;
    if (sy_log_configure(g->cfg) != 0) /* the logging thread copies what it needs */
        sy_warn("logging: the new callback settings could not be applied");
    sy_workers_swap_conf(g); /* takes over our reference as the global one */
    sy_model_registry_unlock();
    sy_info("config reloaded: %zu model group(s)", ngroups);
}

/* The config names an upstream that is likely reached over TLS: a deployment
 * with an https api_base, or a remote provider's default one. A gateway whose
 * deployments are all in-process or plain http makes its TLS context only if
 * something (an MCP server, a callback) connects over TLS. */
static int wants_tls(const struct sy_config *cfg)
{
    for (size_t i = 0; i < cfg->n_deployments; i++) {
        const struct sy_deployment *d = &cfg->deployments[i];
        if (d->mock_response || (d->provider && !strcmp(d->provider, "mock")))
            continue;
        if (!d->api_base || !strncasecmp(d->api_base, "https:", 6))
            return 1;
    }
    return 0;
}

/* A whole decimal number in [lo, hi] (no trailing junk, no overflow), else -1. */
static int int_arg(const char *s, int lo, int hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    return (int)v;
}

int main(int argc, char **argv)
{
    const char *host = "0.0.0.0";
    int port = 4000, workers = 0, check = 0;
    const char *db_cli = NULL;
    const char *lvl = getenv("SWITCHYARD_LOG");
    static const struct option opts[] = {{"config", required_argument, 0, 'c'},
                                         {"host", required_argument, 0, 'H'},
                                         {"port", required_argument, 0, 'p'},
                                         {"workers", required_argument, 0, 'w'},
                                         {"num_workers", required_argument, 0, 'w'},
                                         {"check-config", no_argument, 0, 'k'},
                                         {"log-level", required_argument, 0, 'l'},
                                         {"db", required_argument, 0, 'd'},
                                         {"detailed_debug", no_argument, 0, 'D'},
                                         {"version", no_argument, 0, 'v'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "c:H:p:w:l:vh", opts, NULL)) != -1) {
        switch (o) {
        case 'c': config_path = optarg; break;
        case 'H': host = optarg; break;
        case 'p': port = int_arg(optarg, 1, 65535); break;
        case 'w':
            if ((workers = int_arg(optarg, 0, 4096)) < 0) {
                fprintf(stderr, "switchyard: invalid --workers\n");
                return 2;
            }
            break;
        case 'k': check = 1; break;
        case 'l': lvl = optarg; break;
        case 'd': db_cli = optarg; break;
        case 'D': sy_config_detailed_debug = 1; break; /* one log line per request (logging/reqlog.c) */
        case 'v': printf("switchyard %s\n", SY_VERSION); return 0;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (lvl) {
        if (!strcmp(lvl, "debug"))
            sy_log_level = SY_LOG_DEBUG;
        else if (!strcmp(lvl, "warn"))
            sy_log_level = SY_LOG_WARN;
        else if (!strcmp(lvl, "error"))
            sy_log_level = SY_LOG_ERROR;
    }
    if (!config_path && getenv("CONFIG_FILE_PATH") && *getenv("CONFIG_FILE_PATH"))
        config_path = getenv("CONFIG_FILE_PATH");
    if (port <= 0 || port > 65535) {
        fprintf(stderr, "switchyard: invalid --port\n");
        return 2;
    }
    if (workers <= 0)
        workers = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (workers <= 0)
        workers = 1;
    if (sy_tok_init() != 0) {
        fprintf(stderr, "switchyard: cannot load the tokenizer vocabularies\n");
        return 1;
    }
    sy_config_sink_known = sink_known;
    char err[1024] = "";
    struct sy_config *cfg = load_cfg(config_path, err, sizeof err);
    if (!cfg) {
        fprintf(stderr, "switchyard: config error: %s\n", err);
        return 1;
    }
    if (!check && start_db(cfg, db_cli) != 0) {
        sy_config_unref(cfg);
        return 1;
    }
    if (!check) /* store_model_in_db: the database's models join the config's before the first request */
        cfg = sy_model_registry_with_db(cfg);
    struct sy_gwconf *g = build(cfg, err, sizeof err);
    if (!g) {
        fprintf(stderr, "switchyard: config error: %s\n", err);
        return 1;
    }
    if (check) {
        sy_config_print(g->cfg, stdout);
        sy_gwconf_print(g, stdout);
        printf("prices: %zu models in the price map\n", sy_prices_count());
        sy_gwconf_unref(g);
        if (prices_problem[0]) {
            printf("prices: %s\n", prices_problem);
            return 1;
        }
        printf("config OK\n");
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    if (sy_metrics_init(workers) != 0)
        return 1;
    sy_lim_init();
    /* sized at start (a reload that turns the cache on uses these sizes); memory is taken as entries come */
    sy_cache_local_init(g->cfg->cache_max_bytes, g->cfg->cache_max_items);
    sy_rs_init((size_t)64 << 20); /* stored Responses conversations: 64 MB in memory, the rest in the database */
    sy_own_init(4096);            /* owners of native responses, files, batches: the last puts, until committed */
    if (g->cfg->access_log && sy_accesslog_open(g->cfg->access_log) != 0)
        sy_warn("cannot open access log %s", g->cfg->access_log);
    uv_loop_t *loop = uv_default_loop();
    uv_signal_init(loop, &sig_term);
    uv_signal_init(loop, &sig_int);
    uv_signal_init(loop, &sig_hup);
    uv_signal_start(&sig_term, on_stop_signal, SIGTERM);
    uv_signal_start(&sig_int, on_stop_signal, SIGINT);
    uv_signal_start(&sig_hup, on_hup, SIGHUP);
    if (sy_log_start(g->cfg) != 0) /* the logging callbacks' thread (when any is on) */
        sy_warn("logging: cannot start the logging thread; callbacks are off");
    if (wants_tls(g->cfg)) { /* the CA bundle loaded off the loops, once (upstream/client.h) */
        struct sy_upool_opts uo = {.ssl_verify = g->cfg->ssl_verify, .ca_file = g->cfg->ssl_ca_file};
        sy_upool_tls_warm(&uo);
    }
    if (sy_workers_start(workers, host, port, g) != 0)
        return 1;
    sy_info("switchyard %s listening on %s:%d with %d worker(s), %zu model group(s)%s", SY_VERSION, host, port, workers,
            g->ngroups, config_path ? "" : " (built-in mock config)");
    uv_run(loop, UV_RUN_DEFAULT);
    sy_workers_join();
    if (sy_gw.db) { /* every request has ended: write what they spent, then close */
        sy_keys_invalidate_stop();
        sy_retention_stop();
        sy_spend_stop(10);
        sy_db_stop();
    }
    sy_log_stop(5); /* every record is in: deliver what the sinks hold, for 5 s at most */
    sy_rs_shutdown();
    sy_accesslog_close();
    uv_loop_close(loop);
    sy_info("stopped");
    return 0;
}
