/* test_engine.c - the logging engine (src/logging/engine.c), the generic_api
 * webhook sink and the operator's request log, against a small HTTP receiver
 * run by the test on its own threads.
 *
 * Covered: batches leave by size and by age, in order; a sink answering 500
 * is retried with back-off and the batch then delivered once; a sink that
 * does not answer holds one batch, the queue overflows at queue_max and the
 * drops are counted (dropped, failures, /metrics); sy_log_stop flushes what is
 * queued without waiting for batch age; a tenant's callback_vars reach their
 * own endpoint; the webhook's headers (env, settings, injection refused),
 * log formats and event types; the request log's text and JSON lines (no key,
 * no message text, error cut at 512 bytes).
 *
 * The StandardLoggingPayload is payload.c's; this test defines its own
 * sy_log_payload ({"id": ...}) so the engine is tested on its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "core/buf.h"
#include "logging/logging.h"
#include "logging/reqlog.h"

/* ---- the payload, here ------------------------------------------------------------ */

const char *sy_log_payload(struct sy_logrec *rec, size_t *len)
{
    if (!rec->payload) {
        char tmp[512];
        int n = snprintf(tmp, sizeof tmp, "{\"id\":\"%s\",\"status\":\"%s\"}", rec->id ? rec->id : "",
                         rec->flags & SY_LOGREC_FAILURE ? "failure" : "success");
        rec->payload = strndup(tmp, (size_t)n);
        rec->payload_len = (size_t)n;
    }
    if (len)
        *len = rec->payload_len;
    return rec->payload;
}

/* ---- the receiver ------------------------------------------------------------------ */

#define MAX_POSTS 256

struct receiver {
    int fd, port;
    pthread_t th;
    pthread_mutex_t mu;
    int fail_next;     /* answer this many requests 500 */
    int hang;          /* never answer */
    volatile int stop; /* written by the test, read by the threads */
    char *bodies[MAX_POSTS];
    char *heads[MAX_POSTS];
    int nposts;
    int nrequests; /* answered or not */
};

static struct receiver rx, rx2;

struct conn {
    struct receiver *r;
    int fd;
};

static void *conn_main(void *arg)
{
    struct conn *c = arg;
    struct receiver *r = c->r;
    char *buf = malloc(1 << 20);
    size_t have = 0;
    while (!r->stop) {
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0)
            continue;
        ssize_t n = read(c->fd, buf + have, (1 << 20) - have - 1);
        if (n <= 0)
            break;
        have += (size_t)n;
        buf[have] = 0;
        for (;;) {
            char *eoh = strstr(buf, "\r\n\r\n");
            if (!eoh)
                break;
            size_t hl = (size_t)(eoh + 4 - buf);
            const char *cl = strcasestr(buf, "content-length:");
            size_t blen = cl && cl < eoh ? strtoul(cl + 15, NULL, 10) : 0;
            if (have < hl + blen)
                break;
            pthread_mutex_lock(&r->mu);
            r->nrequests++;
            int hang = r->hang, fail = 0;
            if (!hang && r->fail_next > 0) {
                r->fail_next--;
                fail = 1;
            }
            if (!hang && !fail && r->nposts < MAX_POSTS) {
                r->heads[r->nposts] = strndup(buf, hl);
                r->bodies[r->nposts] = strndup(buf + hl, blen);
                r->nposts++;
            }
            pthread_mutex_unlock(&r->mu);
            if (hang) {
                while (!r->stop)
                    usleep(20000);
                break;
            }
            const char *ans = fail ? "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nfail"
                                   : "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            ssize_t w = write(c->fd, ans, strlen(ans));
            (void)w;
            memmove(buf, buf + hl + blen, have - hl - blen);
            have -= hl + blen;
            buf[have] = 0;
        }
    }
    close(c->fd);
    free(buf);
    free(c);
    return NULL;
}

static void *accept_main(void *arg)
{
    struct receiver *r = arg;
    while (!r->stop) {
        struct pollfd p = {.fd = r->fd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int fd = accept(r->fd, NULL, NULL);
        if (fd < 0)
            continue;
        struct conn *c = malloc(sizeof *c);
        c->r = r;
        c->fd = fd;
        pthread_t t;
        pthread_create(&t, NULL, conn_main, c);
        pthread_detach(t);
    }
    return NULL;
}

static void rx_start(struct receiver *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    r->fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(r->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(r->fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t al = sizeof a;
    getsockname(r->fd, (struct sockaddr *)&a, &al);
    r->port = ntohs(a.sin_port);
    assert_int_equal(listen(r->fd, 64), 0);
    pthread_create(&r->th, NULL, accept_main, r);
}

static void rx_stop(struct receiver *r)
{
    r->stop = 1;
    pthread_join(r->th, NULL);
    close(r->fd);
    usleep(100000); /* connection threads see stop */
    for (int i = 0; i < r->nposts; i++) {
        free(r->bodies[i]);
        free(r->heads[i]);
    }
    pthread_mutex_destroy(&r->mu);
}

static int rx_posts(struct receiver *r)
{
    pthread_mutex_lock(&r->mu);
    int n = r->nposts;
    pthread_mutex_unlock(&r->mu);
    return n;
}

/* Wait (bounded) until cond holds. */
#define WAIT_FOR(cond, secs)                                      \
    do {                                                          \
        for (int w_ = 0; w_ < (int)((secs)*100) && !(cond); w_++) \
            usleep(10000);                                        \
    } while (0)

/* ---- helpers ----------------------------------------------------------------------- */

static const char *gen_only[] = {"generic_api"};

static void base_cfg(struct sy_config *c, const char *settings)
{
    memset(c, 0, sizeof *c);
    c->success_callbacks = gen_only;
    c->n_success_callbacks = 1;
    c->failure_callbacks = gen_only;
    c->n_failure_callbacks = 1;
    c->callback_batch_interval_s = 0.3;
    c->callback_queue_max = 1000;
    c->ssl_verify = 1;
    c->callback_settings = settings;
}

static void set_endpoint(struct receiver *r)
{
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/log", r->port);
    setenv("GENERIC_LOGGER_ENDPOINT", url, 1);
}

static void submit(const char *id, unsigned flags)
{
    struct sy_logrec r = {.id = id, .call_type = "acompletion", .model = "gpt-4o", .flags = flags};
    assert_int_equal(sy_log_submit(&r), 0);
}

static struct sy_log_sink_stats stats_of(const char *name)
{
    struct sy_log_sink_stats s[SY_LOG_MAX_INSTANCES], z = {0};
    size_t n = sy_log_stats(s, SY_LOG_MAX_INSTANCES);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s[i].name, name))
            return s[i];
    return z;
}

/* The ids of a JSON array body, in order, into out ("a,b,c"). */
static void ids_of(const char *body, char *out, size_t outlen)
{
    out[0] = 0;
    json_object *j = json_tokener_parse(body);
    assert_non_null(j);
    assert_true(json_object_is_type(j, json_type_array));
    for (size_t i = 0; i < json_object_array_length(j); i++) {
        json_object *id;
        assert_true(json_object_object_get_ex(json_object_array_get_idx(j, i), "id", &id));
        if (i)
            strncat(out, ",", outlen - strlen(out) - 1);
        strncat(out, json_object_get_string(id), outlen - strlen(out) - 1);
    }
    json_object_put(j);
}

/* ---- engine ---------------------------------------------------------------------------- */

static void test_batches_by_size_and_age(void **state)
{
    (void)state;
    rx_start(&rx);
    set_endpoint(&rx);
    struct sy_config c;
    base_cfg(&c, "{\"generic_api\":{\"batch_size\":3}}");
    assert_int_equal(sy_log_start(&c), 0);
    const char *ids[] = {"r1", "r2", "r3", "r4", "r5", "r6", "r7"};
    for (int i = 0; i < 7; i++)
        submit(ids[i], i == 6 ? SY_LOGREC_FAILURE : 0);
    WAIT_FOR(rx_posts(&rx) >= 3, 10);
    assert_int_equal(rx_posts(&rx), 3);
    char got[256];
    ids_of(rx.bodies[0], got, sizeof got);
    assert_string_equal(got, "r1,r2,r3");
    ids_of(rx.bodies[1], got, sizeof got);
    assert_string_equal(got, "r4,r5,r6");
    ids_of(rx.bodies[2], got, sizeof got);
    assert_string_equal(got, "r7"); /* left by age, not size */
    assert_non_null(strcasestr(rx.heads[0], "content-type: application/json"));
    assert_non_null(strstr(rx.heads[0], "POST /log HTTP/1.1"));
    WAIT_FOR(stats_of("generic_api").sent == 7, 5);
    struct sy_log_sink_stats s = stats_of("generic_api");
    assert_int_equal(s.queued, 7);
    assert_int_equal(s.sent, 7);
    assert_int_equal(s.dropped, 0);
    assert_int_equal(s.depth, 0);
    sy_log_stop(2);
    rx_stop(&rx);
}

static void test_retry_then_delivered(void **state)
{
    (void)state;
    rx_start(&rx);
    set_endpoint(&rx);
    rx.fail_next = 2;
    struct sy_config c;
    base_cfg(&c, NULL);
    assert_int_equal(sy_log_start(&c), 0);
    submit("a", 0);
    submit("b", 0);
    WAIT_FOR(rx_posts(&rx) >= 1, 15);
    assert_int_equal(rx_posts(&rx), 1);
    char got[64];
    ids_of(rx.bodies[0], got, sizeof got);
    assert_string_equal(got, "a,b");
    WAIT_FOR(stats_of("generic_api").sent == 2, 5);
    struct sy_log_sink_stats s = stats_of("generic_api");
    assert_int_equal(s.retried, 2);
    assert_int_equal(s.sent, 2);
    assert_int_equal(s.dropped, 0);
    pthread_mutex_lock(&rx.mu);
    assert_int_equal(rx.nrequests, 3);
    pthread_mutex_unlock(&rx.mu);
    sy_log_stop(2);
    rx_stop(&rx);
}

static void test_overflow_counted(void **state)
{
    (void)state;
    rx_start(&rx);
    set_endpoint(&rx);
    rx.hang = 1; /* takes the first batch and never answers */
    struct sy_config c;
    base_cfg(&c, "{\"generic_api\":{\"batch_size\":2}}");
    c.callback_queue_max = 5;
    c.callback_batch_interval_s = 0.05;
    assert_int_equal(sy_log_start(&c), 0);
    submit("first", 0);
    WAIT_FOR(stats_of("generic_api").depth == 1 && rx.nrequests == 1, 5); /* in flight */
    char id[16][8];
    for (int i = 0; i < 16; i++) {
        snprintf(id[i], sizeof id[i], "x%d", i);
        submit(id[i], 0);
    }
    WAIT_FOR(stats_of("generic_api").queued == 17, 5);
    struct sy_log_sink_stats s = stats_of("generic_api");
    assert_int_equal(s.queued, 17);
    assert_int_equal(s.dropped, 11); /* 16 arrived behind the hung batch, 5 kept */
    assert_int_equal(s.failures, 11);
    assert_int_equal(s.depth, 6);
    struct sy_buf m;
    sy_buf_init(&m, 1 << 20);
    sy_log_render_metrics(&m);
    assert_non_null(strstr(m.p, "# TYPE litellm_callback_logging_failures_metric_total counter\n"));
    assert_non_null(
        strstr(m.p, "litellm_callback_logging_failures_metric_total{callback_name=\"generic_api\"} 11.0\n"));
    assert_non_null(strstr(m.p, "switchyard_callback_queue_depth{callback_name=\"generic_api\"} 6.0\n"));
    assert_non_null(strstr(m.p, "switchyard_callback_dropped_total{callback_name=\"generic_api\"} 11.0\n"));
    sy_buf_reset(&m);
    SY_BUF_LIT(&m, "{\"status\":\"healthy\"");
    sy_log_render_readiness(&m);
    SY_BUF_LIT(&m, "}");
    json_object *j = json_tokener_parse(m.p);
    assert_non_null(j);
    json_object *lg, *sinks, *g, *d;
    assert_true(json_object_object_get_ex(j, "logging", &lg));
    assert_true(json_object_object_get_ex(lg, "sinks", &sinks));
    assert_true(json_object_object_get_ex(sinks, "generic_api", &g));
    assert_true(json_object_object_get_ex(g, "dropped", &d));
    assert_int_equal(json_object_get_int(d), 11);
    json_object_put(j);
    sy_buf_free(&m);
    sy_log_stop(0.3); /* the hung batch is given up at the deadline */
    rx_stop(&rx);
}

static void test_queue_bytes_bounded(void **state)
{
    (void)state;
    rx_start(&rx);
    set_endpoint(&rx);
    rx.hang = 1;
    struct sy_config c;
    base_cfg(&c, "{\"generic_api\":{\"batch_size\":1}}");
    c.callback_batch_interval_s = 0.05;
    assert_int_equal(sy_log_start(&c), 0);
    size_t big = (size_t)1 << 20;
    char *body = malloc(big);
    memset(body, 'x', big);
    for (int i = 0; i < 80; i++) { /* 80 MiB of records behind a sink that never answers */
        struct sy_logrec r = {.id = "big", .request = body, .request_len = big};
        assert_int_equal(sy_log_submit(&r), 0);
    }
    free(body);
    WAIT_FOR(stats_of("generic_api").queued == 80, 10);
    struct sy_log_sink_stats s = stats_of("generic_api");
    assert_int_equal(s.queued, 80);
    assert_true(s.depth <= 65); /* 64 MiB held, plus the batch in flight */
    assert_true(s.dropped >= 15);
    assert_int_equal(s.dropped + s.depth, 80);
    sy_log_stop(0.2);
    rx_stop(&rx);
}

static void test_stop_flushes(void **state)
{
    (void)state;
    rx_start(&rx);
    set_endpoint(&rx);
    struct sy_config c;
    base_cfg(&c, NULL);
    c.callback_batch_interval_s = 3600; /* never by age */
    assert_int_equal(sy_log_start(&c), 0);
    for (int i = 0; i < 5; i++)
        submit("s", 0);
    usleep(300000);
    assert_int_equal(rx_posts(&rx), 0);
    sy_log_stop(5);
    assert_int_equal(rx_posts(&rx), 1); /* delivered before stop returned */
    char got[64];
    ids_of(rx.bodies[0], got, sizeof got);
    assert_string_equal(got, "s,s,s,s,s");
    struct sy_logrec r = {.id = "late"};
    assert_int_equal(sy_log_submit(&r), -1); /* stopped: refused */
    rx_stop(&rx);
}

static void test_tenant_endpoint(void **state)
{
    (void)state;
    rx_start(&rx);
    rx_start(&rx2);
    set_endpoint(&rx);
    struct sy_config c;
    base_cfg(&c, NULL);
    assert_int_equal(sy_log_start(&c), 0);
    char route[256];
    snprintf(route, sizeof route,
             "[{\"callback_name\":\"generic_api\",\"callback_type\":\"success\",\"callback_vars\":"
             "{\"endpoint\":\"http://127.0.0.1:%d/tenant\"}}]",
             rx2.port);
    struct sy_logrec r = {.id = "t1", .team_id = "team-a", .route_json = route};
    assert_int_equal(sy_log_submit(&r), 0);
    submit("global", 0);
    struct sy_logrec f = {.id = "t2", .team_id = "team-a", .route_json = route, .flags = SY_LOGREC_FAILURE};
    assert_int_equal(sy_log_submit(&f), 0); /* a success-only route: the failure goes nowhere for this sink */
    WAIT_FOR(rx_posts(&rx2) >= 1 && rx_posts(&rx) >= 1, 10);
    usleep(500000);
    assert_int_equal(rx_posts(&rx2), 1);
    char got[64];
    ids_of(rx2.bodies[0], got, sizeof got);
    assert_string_equal(got, "t1");
    assert_non_null(strstr(rx2.heads[0], "POST /tenant "));
    assert_int_equal(rx_posts(&rx), 1);
    ids_of(rx.bodies[0], got, sizeof got);
    assert_string_equal(got, "global"); /* the tenant's own settings replace the config's for that sink */
    assert_int_equal(stats_of("generic_api:team-a").sent, 1);
    sy_log_stop(2);
    rx_stop(&rx);
    rx_stop(&rx2);
}

static void test_reload_keeps_queue(void **state)
{
    (void)state;
    rx_start(&rx);
    rx_start(&rx2);
    set_endpoint(&rx);
    struct sy_config c;
    base_cfg(&c, NULL);
    c.callback_batch_interval_s = 3600;
    assert_int_equal(sy_log_start(&c), 0);
    submit("k1", 0);
    submit("k2", 0);
    WAIT_FOR(stats_of("generic_api").depth == 2, 5);
    assert_int_equal(sy_log_configure(&c), 0); /* the same settings: the queue stays */
    submit("k3", 0);
    WAIT_FOR(stats_of("generic_api").depth == 3, 5);
    assert_int_equal(stats_of("generic_api").depth, 3);
    assert_int_equal(rx_posts(&rx), 0);
    char settings[128];
    snprintf(settings, sizeof settings, "{\"generic_api\":{\"endpoint\":\"http://127.0.0.1:%d/new\"}}", rx2.port);
    struct sy_config c2;
    base_cfg(&c2, settings);
    c2.callback_batch_interval_s = 3600;
    assert_int_equal(sy_log_configure(&c2), 0); /* new settings: the old instance delivers what it holds */
    WAIT_FOR(rx_posts(&rx) >= 1, 10);
    assert_int_equal(rx_posts(&rx), 1);
    char got[64];
    ids_of(rx.bodies[0], got, sizeof got);
    assert_string_equal(got, "k1,k2,k3");
    submit("k4", 0);
    sy_log_stop(5);
    assert_int_equal(rx_posts(&rx2), 1);
    ids_of(rx2.bodies[0], got, sizeof got);
    assert_string_equal(got, "k4");
    rx_stop(&rx);
    rx_stop(&rx2);
}

static int unrouted(void)
{
    struct sy_buf m;
    sy_buf_init(&m, 1 << 20);
    sy_log_render_metrics(&m);
    const char *u = strstr(m.p, "\nswitchyard_callback_unrouted_total ");
    int n = u ? atoi(u + strlen("\nswitchyard_callback_unrouted_total ")) : -1;
    sy_buf_free(&m);
    return n;
}

static void test_tenant_cap(void **state)
{
    (void)state;
    rx_start(&rx);
    set_endpoint(&rx);
    struct sy_config c;
    base_cfg(&c, NULL);
    c.callback_batch_interval_s = 0.2;
    assert_int_equal(sy_log_start(&c), 0);
    enum { T = 80 };
    static char routes[T][160], ids[T][16];
    for (int i = 0; i < T; i++) {
        snprintf(routes[i], sizeof routes[i],
                 "[{\"callback_name\":\"generic_api\",\"callback_vars\":{\"headers\":{\"X-T\":\"%d\"}}}]", i);
        snprintf(ids[i], sizeof ids[i], "t%d", i);
        struct sy_logrec r = {.id = ids[i], .route_json = routes[i]};
        assert_int_equal(sy_log_submit(&r), 0);
    }
    struct sy_log_sink_stats s[SY_LOG_MAX_INSTANCES + 8];
    WAIT_FOR(sy_log_stats(s, SY_LOG_MAX_INSTANCES + 8) > 1, 5);
    /* every record either reaches its tenant's endpoint (one POST each) or is counted */
    WAIT_FOR(rx_posts(&rx) + unrouted() >= T, 60);
    assert_true(sy_log_stats(s, SY_LOG_MAX_INSTANCES + 8) <= SY_LOG_MAX_INSTANCES);
    int u = unrouted();
    assert_true(u >= T - (SY_LOG_MAX_INSTANCES - 1));
    assert_int_equal(rx_posts(&rx) + u, T);
    sy_log_stop(5);
    for (int i = 0; i < rx.nposts; i++) {
        char got[64];
        ids_of(rx.bodies[i], got, sizeof got);
        assert_int_equal(got[0], 't');
    }
    rx_stop(&rx);
}

static void test_tenant_refused(void **state)
{
    (void)state;
    rx_start(&rx);
    set_endpoint(&rx);
    struct sy_config c;
    base_cfg(&c, NULL);
    assert_int_equal(sy_log_start(&c), 0);
    int before = unrouted();
    const char *route = "[{\"callback_name\":\"generic_api\",\"callback_vars\":{\"endpoint\":\"ftp://nope\"}}]";
    for (int i = 0; i < 5; i++) {
        struct sy_logrec r = {.id = "bad", .key_alias = "k\n1", .route_json = route};
        assert_int_equal(sy_log_submit(&r), 0);
    }
    submit("good", 0);
    WAIT_FOR(unrouted() - before == 5 && rx_posts(&rx) == 1, 10);
    assert_int_equal(unrouted() - before, 5); /* counted, and the sink is not opened again for each */
    struct sy_log_sink_stats s[8];
    assert_int_equal(sy_log_stats(s, 8), 1); /* only the config's instance */
    sy_log_stop(2);
    assert_int_equal(rx_posts(&rx), 1);
    rx_stop(&rx);
}

static void test_raw_to_sink(void **state)
{
    (void)state;
    rx_start(&rx);
    set_endpoint(&rx);
    struct sy_config c;
    base_cfg(&c, NULL);
    assert_int_equal(sy_log_start(&c), 0);
    assert_int_equal(sy_log_submit_to("nosuch", "{}", 2), -1);
    assert_int_equal(sy_log_submit_to("generic_api", "{\"id\":\"raw\"}", 12), 0);
    WAIT_FOR(rx_posts(&rx) >= 1, 10);
    assert_int_equal(rx_posts(&rx), 1);
    assert_string_equal(rx.bodies[0], "[{\"id\":\"raw\"}]");
    sy_log_stop(2);
    rx_stop(&rx);
}

static void test_no_thread_when_off(void **state)
{
    (void)state;
    struct sy_config c;
    memset(&c, 0, sizeof c);
    assert_int_equal(sy_log_enabled(&c), 0);
    assert_int_equal(sy_log_start(&c), 0);
    struct sy_logrec r = {.id = "x"};
    assert_int_equal(sy_log_submit(&r), -1);
    sy_log_stop(1);
}

/* ---- generic_api --------------------------------------------------------------------------- */

/* A sink with max_inflight > 1 (s3: one PUT per record) keeps that many
 * requests on their way at once, and no more: behind a receiver that never
 * answers, 32 requests arrive and the rest wait in the queue. */
static void test_inflight_bounded(void **state)
{
    (void)state;
    rx_start(&rx);
    rx.hang = 1;
    static const char *s3_only[] = {"s3"};
    struct sy_config c;
    base_cfg(&c, NULL);
    c.success_callbacks = s3_only;
    c.failure_callbacks = s3_only;
    c.callback_batch_interval_s = 0.05;
    char params[256];
    snprintf(params, sizeof params,
             "{\"s3_bucket_name\":\"logs\",\"s3_region_name\":\"us-east-1\",\"s3_endpoint_url\":"
             "\"http://127.0.0.1:%d\",\"s3_aws_access_key_id\":\"AKID\",\"s3_aws_secret_access_key\":\"s\"}",
             rx.port);
    c.s3_callback_params = params;
    assert_int_equal(sy_log_start(&c), 0);
    char id[40][8];
    for (int i = 0; i < 40; i++) {
        snprintf(id[i], sizeof id[i], "r%d", i);
        submit(id[i], 0);
    }
    WAIT_FOR(rx.nrequests >= 32 && stats_of("s3").queued == 40, 10);
    usleep(300000); /* batches are due every 50 ms: more would have left by now */
    pthread_mutex_lock(&rx.mu);
    int n = rx.nrequests;
    pthread_mutex_unlock(&rx.mu);
    assert_int_equal(n, 32);
    assert_int_equal(stats_of("s3").depth, 40);
    assert_int_equal(stats_of("s3").dropped, 0);
    sy_log_stop(0.2);
    rx_stop(&rx);
}

static void *gopen(const char *vars, char *err, size_t errlen)
{
    struct sy_logconf lc = {0};
    const struct sy_sink_ops *ops = sy_sink_find("generic_api");
    assert_non_null(ops);
    return ops->open(&lc, vars, err, errlen);
}

static void test_generic_headers(void **state)
{
    (void)state;
    const struct sy_sink_ops *ops = sy_sink_find("generic_api");
    char err[256] = "";
    unsetenv("GENERIC_LOGGER_ENDPOINT");
    assert_null(gopen(NULL, err, sizeof err));
    assert_non_null(strstr(err, "GENERIC_LOGGER_ENDPOINT"));
    assert_null(gopen("{\"endpoint\":\"ftp://x\"}", err, sizeof err));
    assert_null(gopen("[1]", err, sizeof err));
    setenv("GENERIC_LOGGER_ENDPOINT", "http://env.example/logs", 1);
    setenv("GENERIC_LOGGER_HEADERS", " X-A = 1 ,X-B=two=2,junk,X-Bad Name=3", 1);
    void *h = gopen("{\"headers\":{\"X-B\":\"over\",\"Authorization\":\"Bearer k\",\"X-Inj\":\"a\\r\\nEvil: 1\","
                    "\"X-N\":5}}",
                    err, sizeof err);
    assert_non_null(h);
    struct sy_logrec r1 = {.id = "1"}, r2 = {.id = "2", .flags = SY_LOGREC_FAILURE};
    struct sy_logrec *recs[] = {&r1, &r2};
    struct sy_sink_req out[SY_SINK_MAX_REQS];
    memset(out, 0, sizeof out);
    size_t n = 0;
    assert_int_equal(ops->encode(h, recs, 2, out, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(out[0].url, "http://env.example/logs");
    assert_string_equal(out[0].method, "POST");
    assert_string_equal(
        out[0].headers.p,
        "Content-Type: application/json\r\nX-A: 1\r\nX-B: over\r\nAuthorization: Bearer k\r\nX-N: 5\r\n");
    assert_string_equal(out[0].body.p, "[{\"id\":\"1\",\"status\":\"success\"},{\"id\":\"2\",\"status\":\"failure\"}]");
    sy_sink_req_free(&out[0]);
    ops->close(h);
    free(r1.payload);
    free(r2.payload);
    unsetenv("GENERIC_LOGGER_HEADERS");
}

static void test_generic_formats(void **state)
{
    (void)state;
    const struct sy_sink_ops *ops = sy_sink_find("generic_api");
    char err[256] = "";
    setenv("GENERIC_LOGGER_ENDPOINT", "http://env.example/logs", 1);
    assert_null(gopen("{\"log_format\":\"xml\"}", err, sizeof err));
    assert_non_null(strstr(err, "Invalid log_format"));
    struct sy_logrec r1 = {.id = "1"}, r2 = {.id = "2", .flags = SY_LOGREC_FAILURE}, r3 = {.id = "3"};
    struct sy_logrec *recs[] = {&r1, &r2, &r3};
    struct sy_sink_req out[SY_SINK_MAX_REQS];
    size_t n = 0;
    /* ndjson, successes only */
    void *h = gopen("{\"log_format\":\"ndjson\",\"event_types\":[\"llm_api_success\"],\"endpoint\":\"https://x.example/"
                    "n\"}",
                    err, sizeof err);
    assert_non_null(h);
    memset(out, 0, sizeof out);
    assert_int_equal(ops->encode(h, recs, 3, out, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(out[0].url, "https://x.example/n");
    assert_string_equal(out[0].body.p, "{\"id\":\"1\",\"status\":\"success\"}\n{\"id\":\"3\",\"status\":\"success\"}");
    sy_sink_req_free(&out[0]);
    ops->close(h);
    /* single: one request each; failures only: nothing for successes */
    h = gopen("{\"log_format\":\"single\",\"batch_size\":100}", err, sizeof err);
    assert_non_null(h);
    assert_int_equal(ops->inst_max_batch(h), SY_SINK_MAX_REQS);
    memset(out, 0, sizeof out);
    assert_int_equal(ops->encode(h, recs, 3, out, &n), 0);
    assert_int_equal(n, 3);
    assert_string_equal(out[1].body.p, "{\"id\":\"2\",\"status\":\"failure\"}");
    for (size_t i = 0; i < n; i++)
        sy_sink_req_free(&out[i]);
    ops->close(h);
    h = gopen("{\"event_types\":[\"llm_api_failure\"]}", err, sizeof err);
    struct sy_logrec *succ[] = {&r1, &r3};
    memset(out, 0, sizeof out);
    assert_int_equal(ops->encode(h, succ, 2, out, &n), 0);
    assert_int_equal(n, 0);
    ops->close(h);
    free(r1.payload);
    free(r2.payload);
    free(r3.payload);
}

/* ---- the request log ------------------------------------------------------------------------- */

static void test_reqlog(void **state)
{
    (void)state;
    char longerr[2000];
    memset(longerr, 'e', sizeof longerr - 1);
    longerr[sizeof longerr - 1] = 0;
    memcpy(longerr + 511, "\xc3\xa9", 2); /* é across the 512-byte cut */
    struct sy_logattempt at[2] = {{.status = 429, .error = "RateLimitError"}, {.status = 500}};
    struct sy_logrec r = {
        .id = "chatcmpl-9",
        .hashed_key = "88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b",
        .key_alias = "ci key",
        .team_id = "t1",
        .model = "gpt",
        .model_group = "gpt-4o",
        .model_id = "dep-1",
        .http_status = 500,
        .flags = SY_LOGREC_FAILURE | SY_LOGREC_COST_KNOWN,
        .start_s = 1000.0,
        .completion_start_s = 1000.25,
        .end_s = 1001.5,
        .prompt_tokens = 12,
        .completion_tokens = 30,
        .cost = 0.00042,
        .request = "{\"messages\":[{\"role\":\"user\",\"content\":\"SECRET TEXT\"}]}",
        .request_len = 53,
        .error_class = "InternalServerError",
        .error_message = longerr,
        .attempts = at,
        .nattempts = 2,
    };
    struct sy_logconf lc = {0};
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    sy__reqlog_format(&lc, &r, 1700000000.5, &b);
    assert_non_null(strstr(b.p, "2023-11-14T22:13:20.500Z WARN  request id=chatcmpl-9 key_alias=\"ci key\" team=t1 "
                                "model_group=gpt-4o deployment=dep-1 status=500 attempts=2 latency_ms=1500 "
                                "ttft_ms=250 prompt_tokens=12 completion_tokens=30 cost=0.00042 "
                                "error_class=InternalServerError error="));
    assert_null(strstr(b.p, "88dc28d0"));
    assert_null(strstr(b.p, "SECRET"));
    assert_null(strstr(b.p, "\xc3"));                      /* the split character is left out whole */
    assert_true(strlen(strstr(b.p, "error=")) < 512 + 16); /* cut */
    sy_buf_reset(&b);
    lc.json_logs = 1;
    lc.redact_user_api_key_info = 1;
    sy__reqlog_format(&lc, &r, 1700000000.5, &b);
    json_object *j = json_tokener_parse(b.p);
    assert_non_null(j);
    json_object *v;
    assert_true(json_object_object_get_ex(j, "message", &v));
    assert_non_null(strstr(json_object_get_string(v), "request id=chatcmpl-9"));
    assert_null(strstr(json_object_get_string(v), "ci key")); /* redacted */
    assert_true(json_object_object_get_ex(j, "level", &v));
    assert_string_equal(json_object_get_string(v), "WARNING");
    assert_true(json_object_object_get_ex(j, "timestamp", &v));
    assert_string_equal(json_object_get_string(v), "2023-11-14T22:13:20.500000");
    assert_true(json_object_object_get_ex(j, "status", &v));
    assert_int_equal(json_object_get_int(v), 500);
    assert_false(json_object_object_get_ex(j, "key_alias", &v));
    assert_true(json_object_object_get_ex(j, "error", &v));
    assert_true(strlen(json_object_get_string(v)) <= 512);
    json_object_put(j);
    sy_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches_by_size_and_age),
        cmocka_unit_test(test_retry_then_delivered),
        cmocka_unit_test(test_overflow_counted),
        cmocka_unit_test(test_queue_bytes_bounded),
        cmocka_unit_test(test_stop_flushes),
        cmocka_unit_test(test_tenant_endpoint),
        cmocka_unit_test(test_reload_keeps_queue),
        cmocka_unit_test(test_tenant_cap),
        cmocka_unit_test(test_tenant_refused),
        cmocka_unit_test(test_raw_to_sink),
        cmocka_unit_test(test_inflight_bounded),
        cmocka_unit_test(test_no_thread_when_off),
        cmocka_unit_test(test_generic_headers),
        cmocka_unit_test(test_generic_formats),
        cmocka_unit_test(test_reqlog),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
