/* bench_client.c - micro benchmark of the upstream client (not a test).
 *
 * Runs N sequential and N concurrent keep-alive requests against the
 * in-process test server (tsrv.c, its own threads) and prints the CPU time of
 * the client thread alone (getrusage RUSAGE_THREAD) per request.
 *
 *   bench_upstream_client [N] [concurrency] [--tls]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core/clock.h"
#include "tsrv.h"
#include "upstream/client.h"

struct bench {
    uv_loop_t *loop;
    struct sy_upool *pool;
    char url[128];
    const char *method;
    uv_buf_t body[2];
    unsigned nbody;
    long started, done, total, errors;
    size_t bytes;
};

static int on_body(void *ud, const char *p, size_t n)
{
    ((struct bench *)ud)->bytes += n;
    return 0;
}

static void on_done(void *ud, int err);
static const struct sy_ureq_cbs cbs = {NULL, on_body, on_done};

static void issue(struct bench *b)
{
    struct sy_ureq_opts o = {.url = b->url,
                             .method = b->method,
                             .body = b->body,
                             .nbody = b->nbody,
                             .headers = "Content-Type: application/json\r\n",
                             .headers_len = 32};
    b->started++;
    if (!sy_ureq_start(b->pool, &o, &cbs, b)) {
        fprintf(stderr, "start failed\n");
        exit(1);
    }
}

static void on_done(void *ud, int err)
{
    struct bench *b = ud;
    b->done++;
    if (err)
        b->errors++;
    if (b->started < b->total)
        issue(b);
}

/* CPU of this thread in us: user part in *user, user + system returned. */
static double cpu_us(double *user)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    *user = ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec;
    return *user + ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec;
}

static void run(struct bench *b, const char *name, long n, int conc)
{
    b->started = b->done = b->errors = 0;
    b->total = n;
    double u0, u1;
    double c0 = cpu_us(&u0);
    uint64_t t0 = sy_now_us();
    for (int i = 0; i < conc && b->started < n; i++)
        issue(b);
    while (b->done < n)
        uv_run(b->loop, UV_RUN_ONCE);
    double cpu = cpu_us(&u1) - c0;
    double wall = (double)(sy_now_us() - t0);
    printf("%-26s c=%-3d n=%-6ld client CPU %6.2f us/req (user %5.2f)  wall %6.0f req/s  errors %ld\n", name, conc, n,
           cpu / (double)n, (u1 - u0) / (double)n, (double)n / wall * 1e6, b->errors);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    int conc = argc > 2 ? atoi(argv[2]) : 32;
    int tls = argc > 3 && !strcmp(argv[3], "--tls");
    signal(SIGPIPE, SIG_IGN);
    struct tcert *pki = tls ? tcert_new() : NULL;
    SSL_CTX *sctx = tls ? tcert_server_ctx(pki, "DNS:localhost,IP:127.0.0.1") : NULL;
    struct tsrv *srv = tsrv_start(sctx);
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct sy_upool_opts po = {.ssl_verify = 1, .ca_file = tls ? tcert_ca_file(pki) : NULL};
    struct bench b = {.loop = &loop, .pool = sy_upool_new(&loop, &po)};
    static char json[1024];
    memset(json, ' ', sizeof json);
    memcpy(json, "{\"model\":\"gpt-4o\",\"messages\":[", 30);
    json[sizeof json - 1] = '}';

    snprintf(b.url, sizeof b.url, "%s://127.0.0.1:%u/cl?n=200", tls ? "https" : "http", tsrv_port(srv));
    b.method = "GET";
    run(&b, "warm-up", 2000, conc);
    run(&b, "GET 200B sequential", n, 1);
    run(&b, "GET 200B concurrent", n, conc);
    snprintf(b.url, sizeof b.url, "%s://127.0.0.1:%u/cl?n=600", tls ? "https" : "http", tsrv_port(srv));
    b.method = "POST";
    b.body[0] = uv_buf_init(json, 30);
    b.body[1] = uv_buf_init(json + 30, sizeof json - 30);
    b.nbody = 2;
    run(&b, "POST 1KB/600B sequential", n, 1);
    run(&b, "POST 1KB/600B concurrent", n, conc);
    struct sy_upool_stats st;
    sy_upool_stats(b.pool, &st);
    printf("connections opened %llu, reused %llu of %llu requests\n", (unsigned long long)st.connects,
           (unsigned long long)st.reuses, (unsigned long long)st.requests);

    sy_upool_close(b.pool);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    tsrv_stop(srv);
    if (tls) {
        SSL_CTX_free(sctx);
        tcert_free(pki);
    }
    return 0;
}
