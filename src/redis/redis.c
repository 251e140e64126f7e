/* redis.c - the asynchronous Redis client of redis.h: one hiredis (0.14) async
 * context at a time per sy_redis, driven by a uv_poll on the worker's loop.
 *
 *   BACKOFF ──timer──▶ RESOLVING ──▶ CONNECTING ──handshake replies OK──▶ UP
 *      ▲   (uv_getaddrinfo, skipped     (TCP connect, then               │
 *      │    for an IP literal)           [AUTH] [SELECT] or PING)        │
 *      └──────────── any failure: connect deadline, refused/lost ────────┘
 *                    connection, error reply in the handshake,
 *                    overdue reply (command timeout)
 *   any state ──sy_redis_free──▶ CLOSED ──both timers closed, no lookup──▶ freed
 *
 * Every command accepted by hiredis carries a `struct pcmd` as its privdata and
 * sits on our FIFO (oldest first; Redis answers in order), so the command
 * timeout is one lazy timer: it is armed for the oldest command, and when it
 * fires early it re-arms for the new oldest one. The handshake commands ride on
 * the same FIFO, so a server that accepts but never answers is caught both by
 * the connect deadline and by the command timeout.
 *
 * hiredis 0.14 ownership rules this file keeps:
 *   - a context is freed with redisAsyncFree only by us and only while it is
 *     r->ac; r->ac is cleared first, so every later callback of that context
 *     (NULL replies, onDisconnect) sees ac != r->ac and changes nothing;
 *   - never from onConnect/onDisconnect (hiredis frees the context itself right
 *     after a failed connect and around onDisconnect); from a reply callback it
 *     is deferred by hiredis until the callback returns, which is allowed;
 *   - every callback runs exactly once: with the reply, or with NULL from
 *     __redisAsyncFree (whether we or hiredis tear the connection down), before
 *     the call that freed the context returns. So the FIFO is empty whenever a
 *     new connection starts.
 * User callbacks may call sy_redis_cmd / sy_redis_free: the state is set to
 * BACKOFF/CLOSED before any NULL reply is delivered, and the struct is only
 * released from uv_close callbacks, i.e. after the current call stack unwound.
 *
 * The libuv glue is ours, not hiredis' adapters/libuv.h: in 0.14 that adapter
 * drops a poll error (libuv reports a refused connect or a reset socket as
 * status < 0 and stops the handle), so a refused connect was never reported.
 * Ours passes the error on as the events we were waiting for (upstream hiredis
 * fix 9ce15c4) and skips uv_poll_start when the event set did not change.
 */
#include <netinet/in.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <hiredis/async.h>

#include "core/hex.h"
#include "core/log.h"
#include "redis/redis.h"

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 2000
#define ARGV_INLINE    16 /* argv entries built on the stack; more are malloc'ed */

enum rstate { R_BACKOFF, R_RESOLVING, R_CONNECTING, R_UP, R_CLOSED };

/* What a pending command is, i.e. what its reply callback does. */
enum pkind {
    K_USER,    /* deliver the reply to cb */
    K_EVALSHA, /* NOSCRIPT: resend as EVAL from the copied arguments, else deliver */
    K_EVAL,    /* the EVAL retry of a K_EVALSHA: deliver */
    K_AUTH,    /* handshake: OK, or the client fails this connection */
    K_SELECT,
    K_PING,
};

/* One command accepted by hiredis, from send to callback. */
struct pcmd {
    struct pcmd *next; /* FIFO of r, oldest first */
    struct sy_redis *r;
    sy_redis_cb cb;
    void *ud;
    uint64_t sent; /* uv_now() when sent: the command timeout counts from here */
    enum pkind kind;
    const struct sy_redis_script *script; /* K_EVALSHA */
    int nrest;                            /* K_EVALSHA: numkeys, keys and args copied ... */
    size_t rest[];                        /* ... as nrest lengths followed by the bytes */
};

struct sy_redis {
    uv_loop_t *loop;
    enum rstate state;
    redisAsyncContext *ac;    /* current connection or NULL; ac->data == this */
    struct pcmd *head, *tail; /* commands pending on ac, oldest first */
    int hs_left;              /* handshake replies still expected */
    uv_timer_t timer;         /* connect deadline (RESOLVING, CONNECTING) or back-off (BACKOFF) */
    uv_timer_t cmd_timer;     /* reply deadline of the oldest pending command (lazy) */
    uv_getaddrinfo_t gai;
    unsigned gai_pending : 1; /* gai is outstanding (it outlives a failed attempt) */
    unsigned host_is_ip : 1;
    unsigned outage_logged : 1; /* this outage (or the failed start) was logged */
    int nhandles;               /* open uv handles; freed at 0 when no lookup is pending */
    uint64_t backoff_ms;        /* next back-off delay */
    unsigned attempt;           /* connection attempts: rotates over resolved addresses */
    uint64_t cmd_to_ms, conn_to_ms;
    int port, db;
    char *host, *username, *password; /* copies, in the same allocation */
    char addr[64];                    /* the numeric address being connected to */
};

/* Process-wide: (clients << 32) | clients up. One word, so a reader never sees
 * the two counts from different moments. */
static uint64_t g_clients;
#define G_CLIENT (UINT64_C(1) << 32)

static void conn_start(struct sy_redis *r);

static uint64_t to_ms(double s, double dflt)
{
    if (s <= 0)
        s = dflt;
    return (uint64_t)(s * 1000.0 + 0.999);
}

/* ---- hiredis event hooks on a uv_poll ------------------------------------ */

struct evp {
    redisAsyncContext *ac; /* NULL once hiredis cleaned up (the context is gone) */
    uv_poll_t poll;
    int events; /* UV_READABLE | UV_WRITABLE hiredis waits for (0 when the handle is stopped) */
};

static void ev_on_poll(uv_poll_t *h, int status, int events)
{
    struct evp *e = h->data;
    if (status < 0) { /* libuv stopped the handle: let hiredis find the socket error */
        events = e->events;
        e->events = 0;
    }
    if (e->ac && (events & UV_READABLE))
        redisAsyncHandleRead(e->ac);
    if (e->ac && (events & UV_WRITABLE))
        redisAsyncHandleWrite(e->ac);
}

static void ev_set(struct evp *e, int events)
{
    if (events == e->events)
        return;
    e->events = events;
    if (events)
        uv_poll_start(&e->poll, events, ev_on_poll);
    else
        uv_poll_stop(&e->poll);
}

static void ev_add_read(void *p)
{
    ev_set(p, ((struct evp *)p)->events | UV_READABLE);
}
static void ev_del_read(void *p)
{
    ev_set(p, ((struct evp *)p)->events & ~UV_READABLE);
}
static void ev_add_write(void *p)
{
    ev_set(p, ((struct evp *)p)->events | UV_WRITABLE);
}
static void ev_del_write(void *p)
{
    ev_set(p, ((struct evp *)p)->events & ~UV_WRITABLE);
}
static void ev_on_closed(uv_handle_t *h)
{
    free(h->data);
}

/* Called by hiredis just before it closes the socket: stop polling it now,
 * release the memory once libuv is done with the handle. */
static void ev_cleanup(void *p)
{
    struct evp *e = p;
    e->ac = NULL;
    uv_close((uv_handle_t *)&e->poll, ev_on_closed);
}

/* Attach ac to loop. 0, or -1 (ac untouched: the caller frees it). */
static int ev_attach(redisAsyncContext *ac, uv_loop_t *loop)
{
    struct evp *e = calloc(1, sizeof *e);
    if (!e)
        return -1;
    if (uv_poll_init(loop, &e->poll, ac->c.fd) < 0) {
        free(e);
        return -1;
    }
    e->ac = ac;
    e->poll.data = e;
    ac->ev.data = e;
    ac->ev.addRead = ev_add_read;
    ac->ev.delRead = ev_del_read;
    ac->ev.addWrite = ev_add_write;
    ac->ev.delWrite = ev_del_write;
    ac->ev.cleanup = ev_cleanup;
    return 0;
}

/* ---- state, logging, back-off -------------------------------------------- */

static void set_up(struct sy_redis *r)
{
    uv_timer_stop(&r->timer);
    r->state = R_UP;
    r->backoff_ms = BACKOFF_MIN_MS;
    r->outage_logged = 0;
    __atomic_fetch_add(&g_clients, 1, __ATOMIC_RELAXED);
    if (r->db > 0)
        sy_info("redis %s:%d: connected (db %d)", r->host, r->port, r->db);
    else
        sy_info("redis %s:%d: connected", r->host, r->port);
}

static void on_backoff(uv_timer_t *t)
{
    conn_start(t->data);
}

/* The current attempt or connection failed (r->ac is already cleared): go to
 * BACKOFF, log once per outage, schedule the next attempt. */
static void went_down(struct sy_redis *r, const char *reason)
{
    if (r->state == R_CLOSED || r->state == R_BACKOFF)
        return;
    if (r->state == R_UP)
        __atomic_fetch_sub(&g_clients, 1, __ATOMIC_RELAXED);
    r->state = R_BACKOFF;
    if (!r->outage_logged) {
        sy_warn("redis %s:%d: down: %s (reconnecting in the background)", r->host, r->port, reason);
        r->outage_logged = 1;
    } else {
        sy_debug("redis %s:%d: attempt failed: %s", r->host, r->port, reason);
    }
    uv_timer_stop(&r->cmd_timer);
    uv_timer_start(&r->timer, on_backoff, r->backoff_ms, 0);
    r->backoff_ms = r->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : r->backoff_ms * 2;
}

/* We give up on the current attempt or connection: every pending callback
 * runs with NULL before this returns (or, from inside a reply callback, right
 * after that callback returns). */
static void conn_fail(struct sy_redis *r, const char *reason)
{
    redisAsyncContext *ac = r->ac;
    r->ac = NULL;
    went_down(r, reason);
    if (ac)
        redisAsyncFree(ac);
}

/* hiredis is tearing ac down itself (connect failed, connection lost): note
 * it unless ac is a context we already let go of. */
static void conn_lost(struct sy_redis *r, const redisAsyncContext *ac, const char *reason)
{
    if (ac != r->ac)
        return;
    r->ac = NULL;
    went_down(r, reason && *reason ? reason : "connection lost");
}

/* ---- pending commands ---------------------------------------------------- */

static void fifo_push(struct sy_redis *r, struct pcmd *p)
{
    p->next = NULL;
    if (r->tail)
        r->tail->next = p;
    else
        r->head = p;
    r->tail = p;
}

/* Unlink p, which hiredis answers in order, so it is the head. */
static void fifo_remove(struct sy_redis *r, struct pcmd *p)
{
    struct pcmd **pp = &r->head, *prev = NULL;
    while (*pp && *pp != p) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (!*pp)
        return;
    *pp = p->next;
    if (r->tail == p)
        r->tail = prev;
}

static void on_cmd_timer(uv_timer_t *t)
{
    struct sy_redis *r = t->data;
    if (!r->head || !r->ac)
        return;
    uint64_t now = uv_now(r->loop), due = r->head->sent + r->cmd_to_ms;
    if (now >= due && (r->ac->c.flags & REDIS_CONNECTED)) {
        /* Timers run before I/O in a loop turn: after a stall longer than the
         * timeout the replies may be waiting in the socket. Read them first. */
        redisAsyncHandleRead(r->ac);
        if (!r->head || !r->ac)
            return;
        due = r->head->sent + r->cmd_to_ms;
    }
    if (now < due) {
        uv_timer_start(&r->cmd_timer, on_cmd_timer, due - now, 0);
        return;
    }
    char reason[64];
    snprintf(reason, sizeof reason, "no reply within %.3g s", (double)r->cmd_to_ms / 1000.0);
    conn_fail(r, reason);
}

static void on_reply(redisAsyncContext *ac, void *reply, void *privdata);

/* Hand argv to hiredis with p as its callback data. 0, or -1 (p not queued). */
static int pcmd_send(struct sy_redis *r, struct pcmd *p, int argc, const char **argv, const size_t *argvlen)
{
    if (redisAsyncCommandArgv(r->ac, on_reply, p, argc, argv, argvlen) != REDIS_OK)
        return -1;
    p->sent = uv_now(r->loop);
    fifo_push(r, p);
    if (!uv_is_active((uv_handle_t *)&r->cmd_timer))
        uv_timer_start(&r->cmd_timer, on_cmd_timer, r->cmd_to_ms, 0);
    return 0;
}

static struct pcmd *pcmd_new(struct sy_redis *r, enum pkind kind, sy_redis_cb cb, void *ud, size_t extra)
{
    struct pcmd *p = malloc(sizeof *p + extra);
    if (!p)
        return NULL;
    p->r = r;
    p->cb = cb;
    p->ud = ud;
    p->kind = kind;
    p->script = NULL;
    p->nrest = 0;
    return p;
}

/* Send an internal (handshake) command. */
static int send_internal(struct sy_redis *r, enum pkind kind, int argc, const char **argv)
{
    size_t lens[3];
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    struct pcmd *p = pcmd_new(r, kind, NULL, NULL, 0);
    if (!p)
        return -1;
    if (pcmd_send(r, p, argc, argv, lens) < 0) {
        free(p);
        return -1;
    }
    r->hs_left++;
    return 0;
}

static void handshake_reply(struct sy_redis *r, redisAsyncContext *ac, struct pcmd *p, const redisReply *reply)
{
    if (!reply || ac != r->ac) /* teardown: already accounted for */
        return;
    if (reply->type == REDIS_REPLY_ERROR) {
        static const char *what[] = {[K_AUTH] = "AUTH", [K_SELECT] = "SELECT", [K_PING] = "PING"};
        char reason[256];
        snprintf(reason, sizeof reason, "%s failed: %.*s", what[p->kind], (int)reply->len, reply->str);
        conn_fail(r, reason);
        return;
    }
    if (--r->hs_left == 0)
        set_up(r);
}

/* The EVAL retry of an EVALSHA that got NOSCRIPT; p is reused. 0 when queued. */
static int resend_eval(struct sy_redis *r, struct pcmd *p)
{
    int argc = 2 + p->nrest;
    const char *sv[ARGV_INLINE], **argv = sv;
    size_t sl[ARGV_INLINE], *lens = sl;
    if (argc > ARGV_INLINE) {
        argv = malloc((size_t)argc * sizeof *argv);
        lens = malloc((size_t)argc * sizeof *lens);
    }
    int rc = -1;
    if (argv && lens) {
        argv[0] = "EVAL";
        lens[0] = 4;
        argv[1] = p->script->src;
        lens[1] = strlen(p->script->src);
        const char *b = (const char *)(p->rest + p->nrest);
        for (int i = 0; i < p->nrest; i++) {
            argv[2 + i] = b;
            lens[2 + i] = p->rest[i];
            b += p->rest[i];
        }
        p->kind = K_EVAL;
        rc = pcmd_send(r, p, argc, argv, lens);
        if (rc < 0)
            p->kind = K_EVALSHA;
    }
    if (argv != sv)
        free(argv);
    if (lens != sl)
        free(lens);
    return rc;
}

static int is_noscript(const redisReply *reply)
{
    return reply->type == REDIS_REPLY_ERROR && reply->len >= 8 && !memcmp(reply->str, "NOSCRIPT", 8);
}

/* The one hiredis callback: every accepted command comes back here exactly once. */
static void on_reply(redisAsyncContext *ac, void *reply_, void *privdata)
{
    struct pcmd *p = privdata;
    struct sy_redis *r = p->r;
    const redisReply *reply = reply_;
    fifo_remove(r, p);
    if (!reply) /* hiredis is tearing ac down (no-op when we are) */
        conn_lost(r, ac, ac->errstr);
    switch (p->kind) {
    case K_AUTH:
    case K_SELECT:
    case K_PING:
        handshake_reply(r, ac, p, reply);
        free(p);
        return;
    case K_EVALSHA:
        if (reply && is_noscript(reply)) {
            if (ac == r->ac && r->state == R_UP && resend_eval(r, p) == 0)
                return;
            if (r->state != R_UP) /* freed or down before the final reply: as for any lost reply */
                reply = NULL;
        }
        break;
    case K_USER:
    case K_EVAL: break;
    }
    if (p->cb)
        p->cb(p->ud, reply);
    free(p);
}

/* ---- connecting ----------------------------------------------------------- */

static void on_connect(const redisAsyncContext *ac, int status)
{
    struct sy_redis *r = ac->data;
    if (status != REDIS_OK) { /* hiredis frees ac when this returns */
        char reason[160];
        snprintf(reason, sizeof reason, "connect to %s: %s", r->addr, ac->errstr);
        conn_lost(r, ac, reason);
    }
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
    conn_lost(ac->data, ac, status == REDIS_OK ? "connection closed" : ac->errstr);
}

/* Connect to the numeric address r->addr and queue the handshake. */
static void conn_open(struct sy_redis *r)
{
    redisAsyncContext *ac = redisAsyncConnect(r->addr, r->port);
    if (!ac) {
        conn_fail(r, "out of memory");
        return;
    }
    if (ac->err) {
        char reason[160];
        snprintf(reason, sizeof reason, "connect to %s: %s", r->addr, ac->errstr);
        redisAsyncFree(ac);
        conn_fail(r, reason);
        return;
    }
    if (ev_attach(ac, r->loop) < 0) {
        redisAsyncFree(ac);
        conn_fail(r, "cannot poll the socket");
        return;
    }
    ac->data = r;
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    r->ac = ac;
    r->state = R_CONNECTING;
    r->hs_left = 0;
    /* Queued now, written as soon as the socket connects; UP after the last reply. */
    int rc = 0;
    if (r->password) {
        const char *a[] = {"AUTH", r->username ? r->username : r->password, r->password};
        rc |= r->username ? send_internal(r, K_AUTH, 3, a) : send_internal(r, K_AUTH, 2, a);
    }
    if (r->db > 0) {
        char db[16];
        snprintf(db, sizeof db, "%d", r->db);
        const char *a[] = {"SELECT", db};
        rc |= send_internal(r, K_SELECT, 2, a);
    }
    if (!r->password && r->db <= 0) { /* a PING proves the peer speaks Redis before we call it UP */
        const char *a[] = {"PING"};
        rc |= send_internal(r, K_PING, 1, a);
    }
    if (rc)
        conn_fail(r, "out of memory");
}

static void conn_resolve(struct sy_redis *r);

static void on_gai(uv_getaddrinfo_t *g, int status, struct addrinfo *res)
{
    struct sy_redis *r = g->data;
    r->gai_pending = 0;
    if (r->state != R_RESOLVING) { /* closed, or the attempt timed out and its successor is not resolving */
        uv_freeaddrinfo(res);
        if (r->state == R_CLOSED && r->nhandles == 0)
            free(r);
        return;
    }
    if (status == UV_EAI_CANCELED) { /* the lookup of an attempt that timed out, canceled late: ask again */
        uv_freeaddrinfo(res);
        conn_resolve(r);
        return;
    }
    struct addrinfo *pick[8];
    unsigned n = 0;
    for (struct addrinfo *a = status == 0 ? res : NULL; a && n < 8; a = a->ai_next)
        if (a->ai_family == AF_INET || a->ai_family == AF_INET6)
            pick[n++] = a;
    if (!n) {
        char reason[160];
        snprintf(reason, sizeof reason, "resolve %s: %s", r->host, status < 0 ? uv_strerror(status) : "no address");
        uv_freeaddrinfo(res);
        conn_fail(r, reason);
        return;
    }
    struct addrinfo *a = pick[r->attempt % n]; /* a dead first address does not block the others */
    if (a->ai_family == AF_INET)
        uv_ip4_name((const struct sockaddr_in *)a->ai_addr, r->addr, sizeof r->addr);
    else
        uv_ip6_name((const struct sockaddr_in6 *)a->ai_addr, r->addr, sizeof r->addr);
    uv_freeaddrinfo(res);
    conn_open(r);
}

static void on_conn_timer(uv_timer_t *t)
{
    struct sy_redis *r = t->data;
    char reason[96];
    snprintf(reason, sizeof reason, "not ready within %.3g s (%s)", (double)r->conn_to_ms / 1000.0,
             r->state == R_RESOLVING                       ? "resolving"
             : r->ac && (r->ac->c.flags & REDIS_CONNECTED) ? "handshake"
                                                           : "connecting");
    if (r->gai_pending)
        uv_cancel((uv_req_t *)&r->gai);
    conn_fail(r, reason);
}

/* One connection attempt: resolve (unless an IP literal), connect, handshake,
 * all within the connect timeout. */
static void conn_start(struct sy_redis *r)
{
    r->attempt++;
    r->state = R_RESOLVING;
    uv_timer_start(&r->timer, on_conn_timer, r->conn_to_ms, 0);
    if (r->host_is_ip) {
        snprintf(r->addr, sizeof r->addr, "%s", r->host);
        conn_open(r);
        return;
    }
    conn_resolve(r);
}

static void conn_resolve(struct sy_redis *r)
{
    if (r->gai_pending) /* the previous attempt's lookup is still running: its answer serves this one */
        return;
    static const struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    r->gai.data = r;
    int rc = uv_getaddrinfo(r->loop, &r->gai, on_gai, r->host, NULL, &hints);
    if (rc < 0) {
        char reason[160];
        snprintf(reason, sizeof reason, "resolve %s: %s", r->host, uv_strerror(rc));
        conn_fail(r, reason);
        return;
    }
    r->gai_pending = 1;
}

/* ---- public API ----------------------------------------------------------- */

static char *dup_into(char **at, const char *s)
{
    if (!s)
        return NULL;
    char *d = *at;
    size_t n = strlen(s) + 1;
    memcpy(d, s, n);
    *at += n;
    return d;
}

struct sy_redis *sy_redis_new(uv_loop_t *loop, const struct sy_redis_opts *o)
{
    if (!loop || !o || !o->host || !*o->host || o->port < 0 || o->port > 65535)
        return NULL;
    size_t sz = sizeof(struct sy_redis) + strlen(o->host) + 1;
    if (o->username)
        sz += strlen(o->username) + 1;
    if (o->password)
        sz += strlen(o->password) + 1;
    struct sy_redis *r = calloc(1, sz);
    if (!r)
        return NULL;
    char *at = (char *)(r + 1);
    r->host = dup_into(&at, o->host);
    r->username = dup_into(&at, o->username);
    r->password = dup_into(&at, o->password);
    r->loop = loop;
    r->port = o->port ? o->port : 6379;
    r->db = o->db;
    r->cmd_to_ms = to_ms(o->cmd_timeout_s, 1.0);
    r->conn_to_ms = to_ms(o->connect_timeout_s, 1.0);
    r->backoff_ms = BACKOFF_MIN_MS;
    unsigned char tmp[sizeof(struct in6_addr)];
    r->host_is_ip = uv_inet_pton(AF_INET, r->host, tmp) == 0 || uv_inet_pton(AF_INET6, r->host, tmp) == 0;
    uv_timer_init(loop, &r->timer);
    uv_timer_init(loop, &r->cmd_timer);
    r->timer.data = r->cmd_timer.data = r;
    r->nhandles = 2;
    __atomic_fetch_add(&g_clients, G_CLIENT, __ATOMIC_RELAXED);
    /* The loop's clock may be stale (created long before its first run): the
     * connect deadline must count from now. */
    uv_update_time(loop);
    conn_start(r);
    return r;
}

static void on_handle_closed(uv_handle_t *h)
{
    struct sy_redis *r = h->data;
    if (--r->nhandles == 0 && !r->gai_pending)
        free(r);
}

void sy_redis_free(struct sy_redis *r)
{
    if (!r || r->state == R_CLOSED)
        return;
    __atomic_fetch_sub(&g_clients, G_CLIENT + (r->state == R_UP), __ATOMIC_RELAXED);
    r->state = R_CLOSED;
    if (r->gai_pending)
        uv_cancel((uv_req_t *)&r->gai);
    uv_close((uv_handle_t *)&r->timer, on_handle_closed);
    uv_close((uv_handle_t *)&r->cmd_timer, on_handle_closed);
    redisAsyncContext *ac = r->ac;
    r->ac = NULL;
    if (ac)
        redisAsyncFree(ac); /* pending callbacks run with NULL */
}

int sy_redis_up(const struct sy_redis *r)
{
    return r && r->state == R_UP;
}

/* Commands that would break the one-reply-per-command pairing (pub/sub,
 * MONITOR) or silently undo what the client set up on connect. */
static int refused(const char *name, size_t len)
{
    static const char *const bad[] = {"subscribe",    "psubscribe",   "ssubscribe", "unsubscribe",
                                      "punsubscribe", "sunsubscribe", "monitor",    "select",
                                      "auth",         "hello",        "reset"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (strlen(bad[i]) == len && !strncasecmp(name, bad[i], len))
            return 1;
    return 0;
}

int sy_redis_cmd(struct sy_redis *r, sy_redis_cb cb, void *ud, int argc, const char **argv, const size_t *argvlen)
{
    if (!r || r->state != R_UP || argc < 1 || !argv || !argv[0])
        return -1;
    if (refused(argv[0], argvlen ? argvlen[0] : strlen(argv[0])))
        return -1;
    struct pcmd *p = pcmd_new(r, K_USER, cb, ud, 0);
    if (!p)
        return -1;
    if (pcmd_send(r, p, argc, argv, argvlen) < 0) {
        free(p);
        return -1;
    }
    return 0;
}

/* The script's SHA-1 in hex, computed on first use. Scripts are often static
 * and shared by every worker: the first byte is published with release
 * semantics after the rest, and written under a lock, so readers that see it
 * set read a complete, never again written hash. */
static const char *script_sha(struct sy_redis_script *s)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    if (__atomic_load_n(&s->sha[0], __ATOMIC_ACQUIRE))
        return s->sha;
    unsigned char md[SHA_DIGEST_LENGTH];
    SHA1((const unsigned char *)s->src, strlen(s->src), md);
    char hex[41];
    sy_hex_encode(hex, md, SHA_DIGEST_LENGTH);
    pthread_mutex_lock(&lock);
    if (!s->sha[0]) {
        memcpy(s->sha + 1, hex + 1, 40);
        __atomic_store_n(&s->sha[0], hex[0], __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return s->sha;
}

int sy_redis_eval(struct sy_redis *r, struct sy_redis_script *s, sy_redis_cb cb, void *ud, int nkeys, const char **keys,
                  const size_t *keylens, int nargs, const char **args, const size_t *arglens)
{
    if (!r || r->state != R_UP || !s || !s->src || nkeys < 0 || nargs < 0 || (nkeys && !keys) || (nargs && !args))
        return -1;
    const char *sha = script_sha(s);
    char nk[16];
    int nklen = snprintf(nk, sizeof nk, "%d", nkeys);
    int nrest = 1 + nkeys + nargs, argc = 2 + nrest;
    const char *sv[ARGV_INLINE], **argv = sv;
    size_t sl[ARGV_INLINE], *lens = sl;
    if (argc > ARGV_INLINE) {
        argv = malloc((size_t)argc * sizeof *argv);
        lens = malloc((size_t)argc * sizeof *lens);
    }
    int rc = -1;
    struct pcmd *p = NULL;
    if (!argv || !lens)
        goto out;
    argv[0] = "EVALSHA";
    lens[0] = 7;
    argv[1] = sha;
    lens[1] = 40;
    argv[2] = nk;
    lens[2] = (size_t)nklen;
    for (int i = 0; i < nkeys; i++) {
        argv[3 + i] = keys[i];
        lens[3 + i] = keylens ? keylens[i] : strlen(keys[i]);
    }
    for (int i = 0; i < nargs; i++) {
        argv[3 + nkeys + i] = args[i];
        lens[3 + nkeys + i] = arglens ? arglens[i] : strlen(args[i]);
    }
    /* The EVAL retry needs numkeys, keys and args after the caller's arrays are gone: copy them. */
    size_t bytes = 0;
    for (int i = 2; i < argc; i++)
        bytes += lens[i];
    p = pcmd_new(r, K_EVALSHA, cb, ud, (size_t)nrest * sizeof(size_t) + bytes);
    if (!p)
        goto out;
    p->script = s;
    p->nrest = nrest;
    char *b = (char *)(p->rest + nrest);
    for (int i = 0; i < nrest; i++) {
        p->rest[i] = lens[2 + i];
        memcpy(b, argv[2 + i], lens[2 + i]);
        b += lens[2 + i];
    }
    rc = pcmd_send(r, p, argc, argv, lens);
out:
    if (rc < 0)
        free(p);
    if (argv != sv)
        free(argv);
    if (lens != sl)
        free(lens);
    return rc;
}

enum sy_redis_state sy_redis_global_state(void)
{
    uint64_t v = __atomic_load_n(&g_clients, __ATOMIC_RELAXED);
    uint64_t n = v >> 32, up = v & 0xffffffffu;
    if (!n)
        return SY_REDIS_NOT_CONFIGURED;
    return up == n ? SY_REDIS_CONNECTED : SY_REDIS_DISCONNECTED;
}

const char *sy_redis_state_name(enum sy_redis_state s)
{
    switch (s) {
    case SY_REDIS_NOT_CONFIGURED: return "not configured";
    case SY_REDIS_CONNECTED: return "connected";
    case SY_REDIS_DISCONNECTED: return "disconnected";
    }
    return "unknown";
}
