/* up_int.h - internals shared by the files of src/upstream (not a public API).
 *
 * Objects and who owns them:
 *   sy_upool    one per worker loop; owns origins, connections, freelists, SSL_CTX.
 *   sy__origin  (scheme, host, port): LIFO stack of idle connections, DNS cache
 *               entry, last TLS session. Lives as long as the pool.
 *   sy__conn    one TCP (+TLS) connection. Freed only after both of its handles'
 *               close callbacks ran and no getaddrinfo is outstanding.
 *   sy_ureq     one request; recycled through the pool's freelist (it owns no
 *               handles, so it can be recycled the moment it is finished).
 *
 * Invariants:
 *   - a conn is on exactly one list while open: its origin's idle stack (C_IDLE)
 *     or the pool's busy list (every other state but C_CLOSING);
 *   - conn->req and req->conn point at each other or are both NULL;
 *   - errors reach on_done through the pool's deferral queue (next loop turn),
 *     success is reported directly from the read callback.
 */
#ifndef SY_UPSTREAM_UP_INT_H
#define SY_UPSTREAM_UP_INT_H

#include <http_parser.h>
#include <openssl/ssl.h>
#include <stdint.h>
#include <uv.h>

#include "core/buf.h"
#include "upstream/client.h"

#define SY__UP_RBUF       (64 * 1024) /* shared read buffer (one per pool) */
#define SY__UP_MAXHDR     128         /* response headers kept */
#define SY__UP_MAXADDR    4           /* addresses tried per origin */
#define SY__UP_IBUFS      8           /* uv_buf_t kept inline in a request */
#define SY__UP_HEAD_CAP   (1u << 20)  /* request head (line + headers) */
#define SY__UP_RHEAD_CAP  (64u << 10) /* response header bytes */
#define SY__UP_DNS_TTL_MS 30000
#define SY__UP_FREE_MAX   1024 /* request structs kept on the freelist */

enum sy__cstate { C_RESOLVING, C_CONNECTING, C_HANDSHAKE, C_ACTIVE, C_IDLE, C_CLOSING };
enum sy__ctimer { T_NONE, T_CONNECT, T_FIRSTBYTE, T_IDLE, T_POOLIDLE };

struct sy__origin {
    struct sy__origin *next;
    char *host; /* NUL-terminated, without brackets */
    size_t host_len;
    uint16_t port;
    unsigned tls : 1, is_ip : 1;
    struct sy__conn *idle; /* most recently used first */
    unsigned nidle;
    struct sockaddr_storage addrs[SY__UP_MAXADDR];
    unsigned naddr;
    uint64_t dns_expire; /* uv_now() ms; UINT64_MAX for IP literals */
    SSL_SESSION *sess;   /* last session ticket for resumption, or NULL */
};

struct sy__conn {
    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_getaddrinfo_t gai;
    uv_connect_t creq;
    uv_write_t wreq;
    http_parser parser;
    struct sy_upool *pool;
    struct sy__origin *origin;
    struct sy_ureq *req;
    struct sy__conn *prev, *next;
    SSL *ssl;
    BIO *rbio, *wbio; /* network -> SSL, SSL -> network */
    enum sy__cstate state;
    enum sy__ctimer tkind;
    uint64_t deadline;  /* the current timeout's deadline in uv_now() ms (lazy: see timer_arm) */
    uint64_t timer_due; /* uv_now() ms the uv timer is set to fire at; 0 = not set */
    unsigned addr_i;
    unsigned wpending; /* uv_write requests in flight */
    int nhandles;      /* open handles (tcp, timer) */
    unsigned gai_pending : 1, tcp_reopening : 1, reused : 1, msg_done : 1;
};

struct sy_ureq {
    struct sy_upool *pool;
    struct sy__origin *origin;
    struct sy__conn *conn;
    struct sy_ureq *next; /* freelist / deferral queue */
    struct sy_ureq_cbs cbs;
    void *ud;
    struct sy_buf head;              /* request line + headers, kept across recycling */
    struct sy_buf rh;                /* response header names and values */
    uint32_t hoff[SY__UP_MAXHDR][4]; /* name off, name len, value off, value len */
    unsigned nh;
    uv_buf_t *bufs; /* head + body pieces */
    uv_buf_t ibufs[SY__UP_IBUFS];
    unsigned nbufs;
    uint64_t ct_ms, fbt_ms, it_ms;
    uint64_t total_at; /* uv_now() ms the whole request must end by; 0 = no total deadline */
    int err;
    unsigned queued : 1, canceled : 1, retried : 1, paused : 1, got_byte : 1, head_done : 1, sent : 1, last_value : 1,
        fast : 1, head_req : 1; /* head_req: a HEAD request (its answer has no body whatever its framing) */
};

/* A response head read by head.c (offsets relative to the head's start). */
struct sy__rhead {
    int status;
    unsigned nh;
    uint32_t hoff[SY__UP_MAXHDR][4];
    int chunked;
    int64_t clen;     /* -1: no Content-Length */
    const char *conn; /* Connection value ("close" / "keep-alive"), or NULL */
    size_t conn_len;
};
/* The length of a complete response head of the simple shape at p[0..n),
 * filling *h; 0 when the head is incomplete or not of that shape (then
 * http-parser reads it). */
size_t sy__head_parse(const char *p, size_t n, struct sy__rhead *h);
/* A minimal head with the same status and framing as h, for http-parser
 * (at least 128 bytes of room). Its length. */
size_t sy__head_synth(const struct sy__rhead *h, char *out, size_t cap);

/* url.c */
struct sy__url {
    const char *host, *auth, *path;
    size_t host_len, auth_len, path_len;
    uint16_t port;
    unsigned tls : 1, v6 : 1;
};
/* Parse an absolute http(s) URL into views of `url`; 0 or SY_EINVAL. */
int sy__url_parse(const char *url, struct sy__url *u);
/* A parsed URL kept with a copy of its text: a deployment's URL is one fixed
 * string, so sy_ureq_start compares it instead of parsing it again. */
#define SY__UP_URLC 4
struct sy__urlc {
    char s[200];
    size_t n;         /* 0: empty slot */
    struct sy__url u; /* views of s */
};

struct sy_upool {
    uv_loop_t *loop;
    struct sy_upool_opts opts;
    SSL_CTX *ssl_ctx;
    struct sy__origin *origins;
    struct sy__conn *busy;
    struct sy_ureq *free_reqs;
    unsigned nfree;
    struct sy_ureq *dq_head, *dq_tail; /* requests waiting for on_done(err) */
    uv_timer_t defer;
    unsigned nconns;
    unsigned closing : 1, defer_closed : 1;
    struct sy_upool_stats stats;
    struct sy__urlc urlc[SY__UP_URLC]; /* parsed URLs by their text (sy_ureq_start) */
    char rbuf[SY__UP_RBUF];            /* socket reads land here (one loop thread) */
    char tbuf[SY__UP_RBUF];            /* decrypted TLS bytes */
};

/* pool.c */
struct sy__origin *sy__origin_get(struct sy_upool *p, const struct sy__url *u);
/* Pop the most recently idled connection of o, or NULL. */
struct sy__conn *sy__idle_pop(struct sy__origin *o);
/* Park c on its origin's idle stack (or close it when the stack is full). */
void sy__idle_push(struct sy__conn *c);
void sy__busy_add(struct sy_upool *p, struct sy__conn *c);
/* Unlink c from whichever list holds it. */
void sy__conn_unlink(struct sy__conn *c);
/* Report err to r on the next loop iteration. */
void sy__req_defer(struct sy_ureq *r, int err);
void sy__req_recycle(struct sy_ureq *r);
void sy__pool_maybe_free(struct sy_upool *p);

/* client.c */
void sy__conn_close(struct sy__conn *c);
/* A uv_write of this connection finished (plain or TLS). */
void sy__conn_wrote(struct sy__conn *c, int status);

/* tls.c */
SSL_CTX *sy__tls_ctx_new(const struct sy_upool_opts *o);
/* The process's context for o's ssl_verify and ca_file (made once, a new
 * reference each call); NULL when it cannot be made (logged). */
SSL_CTX *sy__tls_ctx_shared(const struct sy_upool_opts *o);
int sy__tls_conn_init(struct sy__conn *c);
/* Drive the handshake: 1 done, 0 needs more input, <0 SY_ETLS. Flushes output. */
int sy__tls_handshake(struct sy__conn *c);
/* Encrypt the pieces and queue them on the socket; 0 or negative. */
int sy__tls_write(struct sy__conn *c, const uv_buf_t *b, unsigned n);
/* Send whatever SSL produced (handshake, alerts, tickets); 0 or negative uv error. */
int sy__tls_flush(struct sy__conn *c);

#endif
