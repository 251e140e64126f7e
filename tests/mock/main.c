/* main.c - mock_upstream: command line, listening sockets and worker threads.
 *
 *   mock_upstream --port P [--host 127.0.0.1] [--threads N]
 *                 [--tls-cert F --tls-key K [--tls-port P2]]
 *                 [--require-key K] [--no-record]
 *                 [--token-expires-in S] [--aws-secret-key SECRET]
 *
 * With --tls-cert and no --tls-port, the --port listener speaks TLS; with
 * --tls-port, --port stays plain and P2 speaks TLS. Port 0 picks a free port.
 * All sockets are bound before any thread starts; each thread gets its own
 * SO_REUSEPORT socket per listener (the kernel spreads connections). When
 * everything listens, stdout gets "listening on P2 (tls)" (if any) and then
 * "listening on P" as the last line; tests wait for that line.
 */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <openssl/err.h>

#include "mock.h"

struct mock_opts mock_opts = {
    .host = "127.0.0.1", .port = -1, .tls_port = -1, .threads = 1, .record = 1, .token_expires_in = 3599};
SSL_CTX *mock_ssl_ctx;

static void usage(void)
{
    fputs("usage: mock_upstream --port P [--host H] [--threads N] [--tls-cert F --tls-key K]\n"
          "                     [--tls-port P2] [--require-key K] [--no-record]\n"
          "                     [--token-expires-in S] [--aws-secret-key SECRET]\n",
          stderr);
    exit(2);
}

/* A bound, listening SO_REUSEPORT socket; port 0 is replaced by the real one. */
static int listen_fd(const char *host, int *port)
{
    struct sockaddr_in6 a6;
    struct sockaddr_in a4;
    struct sockaddr *sa;
    socklen_t len;
    int fam;
    memset(&a4, 0, sizeof a4);
    memset(&a6, 0, sizeof a6);
    if (inet_pton(AF_INET, host, &a4.sin_addr) == 1) {
        a4.sin_family = AF_INET;
        a4.sin_port = htons((uint16_t)*port);
        sa = (struct sockaddr *)&a4, len = sizeof a4, fam = AF_INET;
    } else if (inet_pton(AF_INET6, host, &a6.sin6_addr) == 1) {
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons((uint16_t)*port);
        sa = (struct sockaddr *)&a6, len = sizeof a6, fam = AF_INET6;
    } else {
        fprintf(stderr, "mock_upstream: --host must be a numeric address: %s\n", host);
        exit(2);
    }
    int fd = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) || bind(fd, sa, len) || listen(fd, 4096)) {
        fprintf(stderr, "mock_upstream: cannot listen on %s:%d: %s\n", host, *port, strerror(errno));
        exit(1);
    }
    if (*port == 0) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        getsockname(fd, (struct sockaddr *)&ss, &sl);
        *port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                              : ((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    return fd;
}

static void run(void *arg)
{
    struct mock_thread *th = arg;
    for (int i = 0; i < th->nlis; i++) {
        uv_tcp_init(&th->loop, &th->lis[i]);
        th->lis[i].data = th;
        if (uv_tcp_open(&th->lis[i], th->lis_fd[i]) ||
            uv_listen((uv_stream_t *)&th->lis[i], 4096, mock_on_connection)) {
            fprintf(stderr, "mock_upstream: listen failed\n");
            exit(1);
        }
    }
    uv_run(&th->loop, UV_RUN_DEFAULT);
}

static long num_arg(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == 0 || *end != 0 || v < 0)
        usage();
    return v;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-record")) {
            mock_opts.record = 0;
            continue;
        }
        if (!v)
            usage();
        if (!strcmp(a, "--port"))
            mock_opts.port = (int)num_arg(v);
        else if (!strcmp(a, "--host"))
            mock_opts.host = v;
        else if (!strcmp(a, "--threads"))
            mock_opts.threads = (int)num_arg(v);
        else if (!strcmp(a, "--tls-cert"))
            mock_opts.tls_cert = v;
        else if (!strcmp(a, "--tls-key"))
            mock_opts.tls_key = v;
        else if (!strcmp(a, "--tls-port"))
            mock_opts.tls_port = (int)num_arg(v);
        else if (!strcmp(a, "--require-key"))
            mock_opts.require_key = v;
        else if (!strcmp(a, "--token-expires-in"))
            mock_opts.token_expires_in = num_arg(v);
        else if (!strcmp(a, "--aws-secret-key"))
            mock_opts.aws_secret = v;
        else
            usage();
        i++;
    }
    if (mock_opts.port < 0 || mock_opts.threads < 1 || mock_opts.threads > 256 ||
        (mock_opts.tls_port >= 0 && !mock_opts.tls_cert) || (!mock_opts.tls_cert != !mock_opts.tls_key))
        usage();
    signal(SIGPIPE, SIG_IGN);

    if (mock_opts.tls_cert) {
        mock_ssl_ctx = SSL_CTX_new(TLS_server_method());
        if (!mock_ssl_ctx || SSL_CTX_use_certificate_chain_file(mock_ssl_ctx, mock_opts.tls_cert) != 1 ||
            SSL_CTX_use_PrivateKey_file(mock_ssl_ctx, mock_opts.tls_key, SSL_FILETYPE_PEM) != 1) {
            fprintf(stderr, "mock_upstream: cannot load TLS cert/key\n");
            ERR_print_errors_fp(stderr);
            return 1;
        }
        SSL_CTX_set_mode(mock_ssl_ctx, SSL_MODE_RELEASE_BUFFERS);
    }
    /* listener 0: --port (TLS when there is a cert and no --tls-port); 1: --tls-port */
    int nlis = mock_opts.tls_port >= 0 ? 2 : 1;
    int ports[2] = {mock_opts.port, mock_opts.tls_port};
    int tls[2] = {mock_opts.tls_cert && nlis == 1, 1};
    struct mock_thread *ths = calloc((size_t)mock_opts.threads, sizeof *ths);
    if (!ths)
        return 1;
    for (int t = 0; t < mock_opts.threads; t++) {
        struct mock_thread *th = &ths[t];
        uv_loop_init(&th->loop);
        th->rng = 0x9E3779B97F4A7C15ull ^ ((uint64_t)getpid() << 20) ^ (uint64_t)(t + 1);
        sy_buf_init(&th->scratch, MOCK_MAX_OUT);
        sy_buf_init(&th->aux, MOCK_MAX_OUT);
        th->nlis = nlis;
        for (int l = 0; l < nlis; l++) {
            th->lis_fd[l] = listen_fd(mock_opts.host, &ports[l]);
            th->lis_tls[l] = tls[l];
        }
    }
    if (nlis == 2)
        printf("listening on %d (tls)\n", ports[1]);
    printf("listening on %d%s\n", ports[0], tls[0] ? " (tls)" : "");
    fflush(stdout);
    for (int t = 1; t < mock_opts.threads; t++)
        uv_thread_create(&ths[t].tid, run, &ths[t]);
    run(&ths[0]);
    return 0;
}
