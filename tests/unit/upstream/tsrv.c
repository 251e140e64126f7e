/* tsrv.c - the scriptable test server behind tsrv.h.
 *
 * One accept thread and one thread per connection, blocking I/O; every wait is
 * a poll() in short steps so tsrv_stop() ends all threads promptly. A peer that
 * closes also ends any scripted sleep (the client timed out or cancelled).
 */
#include "tsrv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct tsrv {
    int lfd;
    uint16_t port;
    SSL_CTX *ctx;
    atomic_int stop;
    atomic_uint conns, reqs;
    pthread_t acceptor;
    pthread_mutex_t mu;
    pthread_t *threads;
    size_t nthreads, cap;
    size_t last_len;
    uint64_t last_hash;
    char *last_head;
};

struct tconn {
    struct tsrv *s;
    int fd;
    SSL *ssl;
    char *buf; /* bytes read but not consumed */
    size_t len, cap;
    int close_next;
};

uint64_t tsrv_hash(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    if (!h)
        h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* 1 readable, 0 timed out, -1 stopping. ms < 0: until readable or stop. */
static int wait_in(struct tconn *c, int ms)
{
    if (c->ssl && SSL_pending(c->ssl) > 0)
        return 1;
    for (int waited = 0; ms < 0 || waited < ms; waited += 20) {
        if (atomic_load(&c->s->stop))
            return -1;
        struct pollfd pf = {.fd = c->fd, .events = POLLIN};
        int step = ms < 0 || ms - waited > 20 ? 20 : ms - waited;
        if (poll(&pf, 1, step) > 0)
            return 1;
    }
    return 0;
}

static ssize_t rd(struct tconn *c, char *p, size_t n)
{
    if (wait_in(c, -1) < 0)
        return -1;
    if (c->ssl) {
        int r = SSL_read(c->ssl, p, (int)n);
        return r > 0 ? r : (SSL_get_error(c->ssl, r) == SSL_ERROR_ZERO_RETURN ? 0 : -1);
    }
    return recv(c->fd, p, n, 0);
}

static int wr(struct tconn *c, const void *p, size_t n)
{
    const char *b = p;
    while (n) {
        ssize_t w = c->ssl ? SSL_write(c->ssl, b, (int)n) : send(c->fd, b, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

static int wrs(struct tconn *c, const char *s)
{
    return wr(c, s, strlen(s));
}

/* Sleep ms, waking early (returning -1) if the peer closed or we stop. */
static int nap(struct tconn *c, int ms)
{
    int r = wait_in(c, ms);
    if (r == 0)
        return 0;
    if (r < 0)
        return -1;
    char x;
    ssize_t n = c->ssl ? 1 : recv(c->fd, &x, 1, MSG_PEEK);
    return n > 0 ? 0 : -1;
}

static int fill(struct tconn *c, size_t want)
{
    while (c->len < want) {
        if (c->cap < want + 1) {
            c->cap = want + 65536;
            c->buf = realloc(c->buf, c->cap);
        }
        ssize_t n = rd(c, c->buf + c->len, c->cap - c->len - 1);
        if (n <= 0)
            return -1;
        c->len += (size_t)n;
    }
    return 0;
}

static long qparam(const char *path, const char *name, long def)
{
    const char *q = strchr(path, '?');
    size_t nl = strlen(name);
    while (q) {
        q++;
        if (!strncmp(q, name, nl) && q[nl] == '=')
            return strtol(q + nl + 1, NULL, 10);
        q = strchr(q, '&');
    }
    return def;
}

static void send_cl(struct tconn *c, const char *extra, size_t n)
{
    char h[256];
    snprintf(h, sizeof h, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n%sContent-Length: %zu\r\n\r\n", extra, n);
    wrs(c, h);
    char blk[16384];
    for (size_t i = 0; i < sizeof blk; i++)
        blk[i] = (char)('a' + i % 26);
    size_t off = 0;
    while (off < n) {                                 /* pattern byte i is 'a' + i % 26 */
        size_t k = n - off < 16380 ? n - off : 16380; /* 16380 is a multiple of 26 */
        if (wr(c, blk, k))
            return;
        off += k;
    }
}

static void hard_reset(struct tconn *c)
{
    struct linger lg = {1, 0};
    setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
}

/* Serve one request; returns 0 to keep the connection, -1 to close it. */
static int serve(struct tconn *c)
{
    char *end;
    for (;;) {
        if (c->len && (end = memmem(c->buf, c->len, "\r\n\r\n", 4)))
            break;
        if (fill(c, c->len + 1))
            return -1;
    }
    size_t hlen = (size_t)(end - c->buf) + 4;
    char *head = strndup(c->buf, hlen);
    char path[512] = "";
    sscanf(head, "%*s %511s", path);
    size_t cl = 0;
    for (char *l = strchr(head, '\n'); l; l = strchr(l + 1, '\n'))
        if (!strncasecmp(l + 1, "content-length:", 15))
            cl = strtoul(l + 16, NULL, 10);
    struct tsrv *s = c->s;
    pthread_mutex_lock(&s->mu);
    free(s->last_head);
    s->last_head = head;
    pthread_mutex_unlock(&s->mu);
    atomic_fetch_add(&s->reqs, 1);

    if (!strncmp(path, "/early", 6)) { /* answer before reading the body */
        wrs(c, "HTTP/1.1 413 Payload Too Large\r\nContent-Length: 7\r\nConnection: close\r\n\r\ntoo big");
        if (!c->ssl)
            shutdown(c->fd, SHUT_WR);
        char sink[65536];
        while (rd(c, sink, sizeof sink) > 0) /* drain so the close sends no RST */
            ;
        return -1;
    }
    if (fill(c, hlen + cl))
        return -1;
    char *body = c->buf + hlen;
    pthread_mutex_lock(&s->mu);
    s->last_len = cl;
    s->last_hash = tsrv_hash(body, cl, 0);
    pthread_mutex_unlock(&s->mu);
    int rc = 0;
    if (c->close_next) {
        rc = -1; /* a stale keep-alive: close without answering */
    } else if (!strncmp(path, "/cl?", 4)) {
        send_cl(c, "", (size_t)qparam(path, "n", 2));
    } else if (!strncmp(path, "/echo", 5)) {
        char h[128];
        snprintf(h, sizeof h, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", cl);
        rc = wrs(c, h) || wr(c, body, cl) ? -1 : 0;
    } else if (!strncmp(path, "/chunked", 8)) {
        wrs(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Test: yes\r\n\r\n5\r\nhel");
        nap(c, 10);
        wrs(c, "lo\r\n6\r\n world\r\n0\r\n\r\n");
    } else if (!strncmp(path, "/trickle", 8)) {
        long n = qparam(path, "n", 5), ms = qparam(path, "ms", 20);
        wrs(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
        for (long i = 0; i < n && rc == 0; i++) {
            char ev[64];
            int k = snprintf(ev + 8, sizeof ev - 8, "data: %ld\n\n", i);
            char sz[8];
            snprintf(sz, sizeof sz, "%x\r\n", k);
            rc = wrs(c, sz) || wr(c, ev + 8, (size_t)k) || wrs(c, "\r\n") || nap(c, (int)ms) ? -1 : 0;
        }
        if (!rc)
            wrs(c, "0\r\n\r\n");
    } else if (!strncmp(path, "/closedelim", 11)) {
        wrs(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nclose-");
        nap(c, 10);
        wrs(c, "delimited body");
        rc = -1;
    } else if (!strncmp(path, "/connclose", 10)) {
        wrs(c, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok");
        rc = -1;
    } else if (!strncmp(path, "/sleep", 6)) {
        if (nap(c, (int)qparam(path, "ms", 1000)))
            rc = -1;
        else
            wrs(c, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlate");
    } else if (!strncmp(path, "/stall", 6)) {
        wrs(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789");
        nap(c, 10000);
        rc = -1;
    } else if (!strncmp(path, "/reset", 6)) {
        wrs(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789");
        nap(c, 20);
        hard_reset(c);
        rc = -1;
    } else if (!strncmp(path, "/once", 5)) {
        wrs(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        c->close_next = 1;
    } else if (!strncmp(path, "/idleclose", 10)) {
        wrs(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        nap(c, 30);
        rc = -1;
    } else if (!strncmp(path, "/100", 4)) {
        wrs(c, "HTTP/1.1 100 Continue\r\n\r\n");
        nap(c, 5);
        wrs(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    } else if (!strncmp(path, "/bad", 4)) {
        wrs(c, "HTTP/1.1 2x0 OK\r\n\r\n");
        rc = -1;
    } else {
        wrs(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    }
    memmove(c->buf, c->buf + hlen + cl, c->len - hlen - cl);
    c->len -= hlen + cl;
    return rc;
}

static void *conn_main(void *arg)
{
    struct tconn *c = arg;
    if (c->ssl && SSL_accept(c->ssl) != 1)
        goto out;
    while (!atomic_load(&c->s->stop) && serve(c) == 0)
        ;
out:
    if (c->ssl) {
        SSL_shutdown(c->ssl);
        SSL_free(c->ssl);
    }
    close(c->fd);
    free(c->buf);
    free(c);
    return NULL;
}

static void *accept_main(void *arg)
{
    struct tsrv *s = arg;
    while (!atomic_load(&s->stop)) {
        struct pollfd pf = {.fd = s->lfd, .events = POLLIN};
        if (poll(&pf, 1, 20) <= 0)
            continue;
        int fd = accept(s->lfd, NULL, NULL);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        atomic_fetch_add(&s->conns, 1);
        struct tconn *c = calloc(1, sizeof *c);
        c->s = s;
        c->fd = fd;
        if (s->ctx) {
            c->ssl = SSL_new(s->ctx);
            SSL_set_fd(c->ssl, fd);
        }
        pthread_mutex_lock(&s->mu);
        if (s->nthreads == s->cap) {
            s->cap = s->cap ? s->cap * 2 : 16;
            s->threads = realloc(s->threads, s->cap * sizeof *s->threads);
        }
        pthread_create(&s->threads[s->nthreads++], NULL, conn_main, c);
        pthread_mutex_unlock(&s->mu);
    }
    return NULL;
}

struct tsrv *tsrv_start(SSL_CTX *ctx)
{
    struct tsrv *s = calloc(1, sizeof *s);
    s->ctx = ctx;
    pthread_mutex_init(&s->mu, NULL);
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (bind(s->lfd, (struct sockaddr *)&a, sizeof a) || listen(s->lfd, 512) ||
        getsockname(s->lfd, (struct sockaddr *)&a, &al)) {
        close(s->lfd);
        free(s);
        return NULL;
    }
    s->port = ntohs(a.sin_port);
    pthread_create(&s->acceptor, NULL, accept_main, s);
    return s;
}

uint16_t tsrv_port(struct tsrv *s)
{
    return s->port;
}
unsigned tsrv_conns(struct tsrv *s)
{
    return atomic_load(&s->conns);
}
unsigned tsrv_reqs(struct tsrv *s)
{
    return atomic_load(&s->reqs);
}

size_t tsrv_last_body_len(struct tsrv *s)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->last_len;
    pthread_mutex_unlock(&s->mu);
    return n;
}

uint64_t tsrv_last_body_hash(struct tsrv *s)
{
    pthread_mutex_lock(&s->mu);
    uint64_t h = s->last_hash;
    pthread_mutex_unlock(&s->mu);
    return h;
}

char *tsrv_last_head(struct tsrv *s)
{
    pthread_mutex_lock(&s->mu);
    char *h = strdup(s->last_head ? s->last_head : "");
    pthread_mutex_unlock(&s->mu);
    return h;
}

void tsrv_stop(struct tsrv *s)
{
    atomic_store(&s->stop, 1);
    pthread_join(s->acceptor, NULL);
    for (size_t i = 0; i < s->nthreads; i++)
        pthread_join(s->threads[i], NULL);
    close(s->lfd);
    free(s->threads);
    free(s->last_head);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
