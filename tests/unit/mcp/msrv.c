/* msrv.c - the scripted MCP server behind msrv.h. Its JSON reading is a
 * test's: it finds the members it needs by their quoted names. */
#include "msrv.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

struct rec {
    char *method, *head, *body;
};

struct stream {
    int fd, sid, open;
};

struct msrv {
    struct msrv_opts o;
    int lfd;
    uint16_t port;
    atomic_int stop;
    pthread_t acceptor;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t *th;
    size_t nth, cth;
    struct rec *recs;
    size_t nrecs, crecs;
    int sessions, expired_below, tokens, token_fetches, sids;
    struct stream streams[16];
    size_t nstreams;
};

struct conn {
    struct msrv *s;
    int fd;
    char *buf;
    size_t len, cap;
};

/* ---- records ---- */

static void record(struct msrv *s, const char *method, const char *head, const char *body)
{
    pthread_mutex_lock(&s->mu);
    if (s->nrecs == s->crecs) {
        s->crecs = s->crecs ? s->crecs * 2 : 64;
        s->recs = realloc(s->recs, s->crecs * sizeof *s->recs);
    }
    s->recs[s->nrecs++] = (struct rec){strdup(method), strdup(head), strdup(body ? body : "")};
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

int msrv_count(struct msrv *s, const char *method)
{
    int n = 0;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nrecs; i++)
        n += !strcmp(s->recs[i].method, method);
    pthread_mutex_unlock(&s->mu);
    return n;
}

static char *last(struct msrv *s, const char *method, int body)
{
    char *r = NULL;
    pthread_mutex_lock(&s->mu);
    for (size_t i = s->nrecs; i-- > 0;)
        if (!strcmp(s->recs[i].method, method)) {
            r = strdup(body ? s->recs[i].body : s->recs[i].head);
            break;
        }
    pthread_mutex_unlock(&s->mu);
    return r;
}

char *msrv_head(struct msrv *s, const char *method)
{
    return last(s, method, 0);
}

char *msrv_body(struct msrv *s, const char *method)
{
    return last(s, method, 1);
}

int msrv_token_fetches(struct msrv *s)
{
    pthread_mutex_lock(&s->mu);
    int n = s->token_fetches;
    pthread_mutex_unlock(&s->mu);
    return n;
}

void msrv_expire(struct msrv *s)
{
    pthread_mutex_lock(&s->mu);
    s->expired_below = s->sessions + 1;
    pthread_mutex_unlock(&s->mu);
}

void msrv_rotate(struct msrv *s)
{
    pthread_mutex_lock(&s->mu);
    s->tokens++;
    pthread_mutex_unlock(&s->mu);
}

void msrv_drop_streams(struct msrv *s)
{
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nstreams; i++)
        if (s->streams[i].open) {
            shutdown(s->streams[i].fd, SHUT_RDWR);
            s->streams[i].open = 0;
        }
    pthread_mutex_unlock(&s->mu);
}

uint16_t msrv_port(struct msrv *s)
{
    return s->port;
}

/* ---- I/O ---- */

static int wr(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int readable(struct conn *c, int ms)
{
    for (int waited = 0; ms < 0 || waited < ms; waited += 20) {
        if (atomic_load(&c->s->stop))
            return -1;
        struct pollfd pf = {.fd = c->fd, .events = POLLIN};
        if (poll(&pf, 1, 20) > 0)
            return 1;
    }
    return 0;
}

static int fill(struct conn *c, size_t want)
{
    while (c->len < want) {
        if (c->cap < want + 1) {
            c->cap = want + 65536;
            c->buf = realloc(c->buf, c->cap);
        }
        if (readable(c, -1) < 0)
            return -1;
        ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len - 1, 0);
        if (n <= 0)
            return -1;
        c->len += (size_t)n;
    }
    return 0;
}

/* Sleep ms; -1 early when the peer closed. */
static int nap(struct conn *c, int ms)
{
    int r = readable(c, ms);
    if (r == 0)
        return 0;
    char x;
    return r > 0 && recv(c->fd, &x, 1, MSG_PEEK) > 0 ? 0 : -1;
}

static void reply(int fd, int status, const char *ctype, const char *extra, const char *body)
{
    char h[512];
    size_t n = body ? strlen(body) : 0;
    snprintf(h, sizeof h, "HTTP/1.1 %d X\r\n%s%s%s%sContent-Length: %zu\r\n\r\n", status, ctype ? "Content-Type: " : "",
             ctype ? ctype : "", ctype ? "\r\n" : "", extra ? extra : "", n);
    wr(fd, h, strlen(h));
    if (n)
        wr(fd, body, n);
}

static void chunk(int fd, const char *p, size_t n)
{
    char h[32];
    snprintf(h, sizeof h, "%zx\r\n", n);
    wr(fd, h, strlen(h));
    wr(fd, p, n);
    wr(fd, "\r\n", 2);
}

/* ---- JSON bits ---- */

/* The string value of "name" (first one), malloc'd; NULL. */
static char *jstr(const char *b, const char *name)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":\"", name);
    const char *p = strstr(b, k);
    if (!p)
        return NULL;
    p += strlen(k);
    const char *e = strchr(p, '"');
    return e ? strndup(p, (size_t)(e - p)) : NULL;
}

/* The raw value of "name" up to , or }, malloc'd; NULL. */
static char *jraw(const char *b, const char *name)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", name);
    const char *p = strstr(b, k);
    if (!p)
        return NULL;
    p += strlen(k);
    size_t n = strcspn(p, ",}");
    return strndup(p, n);
}

static long jnum(const char *b, const char *name, long def)
{
    char *r = jraw(b, name);
    long v = r ? strtol(r, NULL, 10) : def;
    free(r);
    return v;
}

static char *hdr(const char *head, const char *name)
{
    size_t nl = strlen(name);
    for (const char *l = strstr(head, "\r\n"); l; l = strstr(l + 2, "\r\n"))
        if (!strncasecmp(l + 2, name, nl) && l[2 + nl] == ':') {
            const char *v = l + 3 + nl;
            while (*v == ' ')
                v++;
            return strndup(v, strcspn(v, "\r\n"));
        }
    return NULL;
}

/* ---- /mcp ---- */

static void answer(struct conn *c, const char *id, const char *result, const char *extra)
{
    struct msrv *s = c->s;
    size_t n = strlen(result) + strlen(id) + 64;
    char *m = malloc(n);
    snprintf(m, n, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}", id, result);
    if (!s->o.sse) {
        reply(c->fd, 200, "application/json", extra, m);
    } else {
        char h[512];
        snprintf(h, sizeof h,
                 "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n%sTransfer-Encoding: chunked\r\n\r\n",
                 extra ? extra : "");
        wr(c->fd, h, strlen(h));
        size_t en = strlen(m) + 64;
        char *ev = malloc(en);
        int k = snprintf(ev, en, "event: message\ndata: %s\n\n", m);
        chunk(c->fd, ev, (size_t)k);
        wr(c->fd, "0\r\n\r\n", 5);
        free(ev);
    }
    free(m);
}

static char *tool_result(struct conn *c, const char *body, int *status)
{
    char *name = jstr(body, "name");
    char *out = NULL;
    if (name && !strcmp(name, "slow")) {
        if (nap(c, (int)jnum(body, "ms", 1000)) != 0) {
            free(name);
            return NULL;
        }
    }
    if (name && !strcmp(name, "fail")) {
        *status = 500;
    } else if (name && !strcmp(name, "big")) {
        long n = jnum(body, "n", 1000);
        out = malloc((size_t)n + 128);
        int k = snprintf(out, 128, "{\"content\":[{\"type\":\"text\",\"text\":\"");
        memset(out + k, 'x', (size_t)n);
        snprintf(out + k + n, 64, "\"}],\"isError\":false}");
    } else {
        char *t = jstr(body, "text");
        size_t n = (t ? strlen(t) : 0) + 128;
        out = malloc(n);
        snprintf(out, n, "{\"content\":[{\"type\":\"text\",\"text\":\"%s\"}],\"isError\":false}", t ? t : "ok");
        free(t);
    }
    free(name);
    return out;
}

static void pinger(struct conn *c, const char *id)
{
    struct msrv *s = c->s;
    const char *h = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
    wr(c->fd, h, strlen(h));
    const char *ping = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n\n"
                       "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n";
    chunk(c->fd, ping, strlen(ping));
    int before = msrv_count(s, "response") + 1;
    for (int i = 0; i < 100 && msrv_count(s, "response") < before; i++)
        usleep(20000);
    char m[256];
    int k = snprintf(m, sizeof m,
                     "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":"
                     "\"text\",\"text\":\"pong seen %d\"}]}}\n\n",
                     id, msrv_count(s, "response") >= before);
    chunk(c->fd, m, (size_t)k);
    wr(c->fd, "0\r\n\r\n", 5);
}

static int check_auth(struct conn *c, const char *head)
{
    struct msrv *s = c->s;
    if (s->o.require) {
        const char *colon = strchr(s->o.require, ':');
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(colon - s->o.require), s->o.require);
        char *v = hdr(head, name);
        int ok = v && !strcmp(v, colon + 2);
        free(v);
        if (!ok) {
            reply(c->fd, 401, "text/plain", NULL, "who are you");
            return -1;
        }
    }
    if (s->o.oauth) {
        char *v = hdr(head, "Authorization");
        char want[64];
        pthread_mutex_lock(&s->mu);
        snprintf(want, sizeof want, "Bearer tok-%d", s->tokens);
        pthread_mutex_unlock(&s->mu);
        int ok = v && !strcmp(v, want);
        free(v);
        if (!ok) {
            reply(c->fd, 401, "application/json", NULL, "{\"error\":\"invalid_token\"}");
            return -1;
        }
    }
    return 0;
}

static void serve_mcp(struct conn *c, const char *head, const char *body)
{
    struct msrv *s = c->s;
    char *method = jstr(body, "method");
    char *id = jraw(body, "id");
    int is_answer = !method && (strstr(body, "\"result\"") || strstr(body, "\"error\""));
    record(s, method ? method : is_answer ? "response" : "?", head, body);
    if (check_auth(c, head)) {
        free(method);
        free(id);
        return;
    }
    if (method && !strcmp(method, "initialize")) {
        char *asked = jstr(body, "protocolVersion");
        pthread_mutex_lock(&s->mu);
        int sn = ++s->sessions;
        pthread_mutex_unlock(&s->mu);
        char res[512], extra[64];
        snprintf(res, sizeof res,
                 "{\"protocolVersion\":\"%s\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"msrv\","
                 "\"version\":\"1\"}}",
                 s->o.version ? s->o.version
                 : asked      ? asked
                              : "?");
        snprintf(extra, sizeof extra, "Mcp-Session-Id: sess-%d\r\n", sn);
        answer(c, id, res, extra);
        free(asked);
        goto out;
    }
    char *sid = hdr(head, "Mcp-Session-Id");
    int sn = sid && !strncmp(sid, "sess-", 5) ? atoi(sid + 5) : 0;
    free(sid);
    pthread_mutex_lock(&s->mu);
    int valid = sn > 0 && sn <= s->sessions && sn >= s->expired_below;
    pthread_mutex_unlock(&s->mu);
    if (!valid) {
        reply(c->fd, 404, "application/json", NULL,
              "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32001,\"message\":\"Session not found\"},\"id\":null}");
        goto out;
    }
    if (!id || !method) { /* a notification or an answer */
        reply(c->fd, 202, NULL, NULL, NULL);
        goto out;
    }
    if (!strcmp(method, "tools/list")) {
        answer(c, id, "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}]}", NULL);
    } else if (!strcmp(method, "tools/call")) {
        char *name = jstr(body, "name");
        int pingit = name && !strcmp(name, "pinger") && s->o.sse;
        free(name);
        if (pingit) {
            pinger(c, id);
            goto out;
        }
        int status = 200;
        char *r = tool_result(c, body, &status);
        if (status != 200)
            reply(c->fd, status, "text/plain", NULL, "internal\nboom");
        else if (r)
            answer(c, id, r, NULL);
        free(r);
    } else {
        answer(c, id, "{}", NULL);
    }
out:
    free(method);
    free(id);
}

/* ---- the old SSE transport ---- */

static void serve_sse_get(struct conn *c)
{
    struct msrv *s = c->s;
    pthread_mutex_lock(&s->mu);
    int sid = ++s->sids;
    struct stream *st = s->nstreams < 16 ? &s->streams[s->nstreams++] : NULL;
    if (st)
        *st = (struct stream){c->fd, sid, 1};
    pthread_mutex_unlock(&s->mu);
    if (!st)
        return;
    char m[512];
    if (s->o.endpoint_abs)
        snprintf(m, sizeof m,
                 "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n: hello\n\nevent: endpoint\ndata: %s\n\n",
                 s->o.endpoint_abs);
    else
        snprintf(m, sizeof m,
                 "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nevent: endpoint\ndata: "
                 "messages?sid=%d\n\n",
                 sid);
    pthread_mutex_lock(&s->mu);
    wr(c->fd, m, strlen(m));
    pthread_mutex_unlock(&s->mu);
    while (!atomic_load(&s->stop)) { /* until the client goes or the test drops it */
        pthread_mutex_lock(&s->mu);
        int open = st->open;
        pthread_mutex_unlock(&s->mu);
        if (!open || nap(c, 50) != 0)
            break;
    }
    pthread_mutex_lock(&s->mu);
    st->open = 0;
    pthread_mutex_unlock(&s->mu);
}

static void serve_sse_post(struct conn *c, const char *path, const char *head, const char *body)
{
    struct msrv *s = c->s;
    const char *q = strstr(path, "sid=");
    int sid = q ? atoi(q + 4) : 0;
    char *method = jstr(body, "method");
    char *id = jraw(body, "id");
    record(s, method ? method : "response", head, body);
    pthread_mutex_lock(&s->mu);
    struct stream *st = NULL;
    for (size_t i = 0; i < s->nstreams; i++)
        if (s->streams[i].sid == sid && s->streams[i].open)
            st = &s->streams[i];
    pthread_mutex_unlock(&s->mu);
    if (!st) {
        reply(c->fd, 404, "text/plain", NULL, "no such session");
        goto out;
    }
    if (check_auth(c, head))
        goto out;
    reply(c->fd, 202, "text/plain", NULL, "Accepted");
    if (method && id) {
        char *r = NULL;
        int status = 200;
        if (!strcmp(method, "initialize")) {
            char *asked = jstr(body, "protocolVersion");
            r = malloc(256);
            snprintf(r, 256, "{\"protocolVersion\":\"%s\",\"capabilities\":{},\"serverInfo\":{\"name\":\"m\"}}",
                     s->o.version ? s->o.version
                     : asked      ? asked
                                  : "?");
            free(asked);
        } else if (!strcmp(method, "tools/call")) {
            r = tool_result(c, body, &status);
        } else {
            r = strdup("{}");
        }
        if (r) {
            size_t n = strlen(r) + strlen(id) + 96;
            char *ev = malloc(n);
            int k = snprintf(ev, n, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", id, r);
            pthread_mutex_lock(&s->mu);
            if (st->open)
                wr(st->fd, ev, (size_t)k);
            pthread_mutex_unlock(&s->mu);
            free(ev);
            free(r);
        }
    }
out:
    free(method);
    free(id);
}

/* ---- connections ---- */

static int serve(struct conn *c)
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
    char meth[16] = "", path[512] = "";
    sscanf(head, "%15s %511s", meth, path);
    char *cls = hdr(head, "Content-Length");
    size_t cl = cls ? strtoul(cls, NULL, 10) : 0;
    free(cls);
    if (fill(c, hlen + cl)) {
        free(head);
        return -1;
    }
    char *body = strndup(c->buf + hlen, cl);
    memmove(c->buf, c->buf + hlen + cl, c->len - hlen - cl);
    c->len -= hlen + cl;
    struct msrv *s = c->s;
    int keep = 0;
    if (!strcmp(meth, "POST") && !strcmp(path, "/mcp")) {
        serve_mcp(c, head, body);
        keep = 1;
    } else if (!strcmp(meth, "DELETE") && !strcmp(path, "/mcp")) {
        record(s, "DELETE", head, "");
        reply(c->fd, 200, NULL, NULL, NULL);
        keep = 1;
    } else if (!strcmp(meth, "POST") && !strcmp(path, "/token")) {
        record(s, "token", head, body);
        pthread_mutex_lock(&s->mu);
        s->token_fetches++;
        int t = s->tokens;
        pthread_mutex_unlock(&s->mu);
        char r[128];
        if (s->o.token_ttl)
            snprintf(r, sizeof r, "{\"access_token\":\"tok-%d\",\"token_type\":\"Bearer\",\"expires_in\":%d}", t,
                     s->o.token_ttl);
        else
            snprintf(r, sizeof r, "{\"access_token\":\"tok-%d\",\"token_type\":\"Bearer\"}", t);
        if (!strstr(body, "grant_type=client_credentials") || !strstr(body, "client_id=cid") ||
            !strstr(body, "client_secret=s%26cret"))
            reply(c->fd, 400, "application/json", NULL, "{\"error\":\"invalid_client\"}");
        else
            reply(c->fd, 200, "application/json", NULL, r);
        keep = 1;
    } else if (!strcmp(meth, "GET") && !strcmp(path, "/sse")) {
        serve_sse_get(c);
    } else if (!strcmp(meth, "POST") && !strncmp(path, "/messages", 9)) {
        serve_sse_post(c, path, head, body);
        keep = 1;
    } else {
        reply(c->fd, 404, "text/plain", NULL, "no route");
        keep = 1;
    }
    free(head);
    free(body);
    return keep ? 0 : -1;
}

static void *conn_main(void *arg)
{
    struct conn *c = arg;
    while (!atomic_load(&c->s->stop) && serve(c) == 0)
        ;
    close(c->fd);
    free(c->buf);
    free(c);
    return NULL;
}

static void *accept_main(void *arg)
{
    struct msrv *s = arg;
    while (!atomic_load(&s->stop)) {
        struct pollfd pf = {.fd = s->lfd, .events = POLLIN};
        if (poll(&pf, 1, 20) <= 0)
            continue;
        int fd = accept(s->lfd, NULL, NULL);
        if (fd < 0)
            continue;
        struct conn *c = calloc(1, sizeof *c);
        c->s = s;
        c->fd = fd;
        pthread_t t;
        pthread_create(&t, NULL, conn_main, c);
        pthread_mutex_lock(&s->mu);
        if (s->nth == s->cth) {
            s->cth = s->cth ? s->cth * 2 : 16;
            s->th = realloc(s->th, s->cth * sizeof *s->th);
        }
        s->th[s->nth++] = t;
        pthread_mutex_unlock(&s->mu);
    }
    return NULL;
}

struct msrv *msrv_start(const struct msrv_opts *o)
{
    struct msrv *s = calloc(1, sizeof *s);
    if (o)
        s->o = *o;
    s->expired_below = 1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (bind(s->lfd, (struct sockaddr *)&a, sizeof a) || listen(s->lfd, 64) ||
        getsockname(s->lfd, (struct sockaddr *)&a, &al)) {
        close(s->lfd);
        free(s);
        return NULL;
    }
    s->port = ntohs(a.sin_port);
    pthread_create(&s->acceptor, NULL, accept_main, s);
    return s;
}

void msrv_stop(struct msrv *s)
{
    atomic_store(&s->stop, 1);
    pthread_join(s->acceptor, NULL);
    for (size_t i = 0; i < s->nth; i++)
        pthread_join(s->th[i], NULL);
    close(s->lfd);
    for (size_t i = 0; i < s->nrecs; i++) {
        free(s->recs[i].method);
        free(s->recs[i].head);
        free(s->recs[i].body);
    }
    free(s->recs);
    free(s->th);
    free(s);
}
