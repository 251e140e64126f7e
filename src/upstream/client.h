/* client.h - switchyard's own HTTP/1.1 upstream client on a worker's libuv loop.
 *
 * One sy_upool per worker thread (never shared): keep-alive connection pools per
 * origin (scheme, host, port), a short non-blocking DNS cache (uv_getaddrinfo,
 * 30 s TTL), TLS by OpenSSL memory BIOs (SNI, ALPN "http/1.1", certificate and
 * hostname verification against the system CA store or a configured bundle).
 * Responses are parsed by http-parser; bodies arrive de-chunked.
 *
 * Lifecycle of a request:
 *   sy_ureq_start() -> on_head() once -> on_body() 0..n times -> on_done() once.
 * on_done is always called exactly once unless sy_ureq_cancel() was called
 * first. After on_done or cancel the sy_ureq pointer is invalid.
 * Callbacks are never called from inside sy_ureq_start() (errors found there
 * are reported on the next loop iteration).
 *
 * A request sent on a reused keep-alive connection that closes before any
 * response byte is retried once on a fresh connection (the classic stale
 * keep-alive race); nothing else is retried here (retries are the router's).
 */
#ifndef SY_UPSTREAM_CLIENT_H
#define SY_UPSTREAM_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

struct sy_upool;
struct sy_ureq;

struct sy_upool_opts {
    int ssl_verify;               /* 1: verify certificates (default); 0: accept anything */
    const char *ca_file;          /* PEM bundle to trust instead of the system store; may be NULL */
    unsigned max_idle_per_origin; /* idle keep-alive connections kept per origin (default 64) */
    double idle_timeout_s;        /* close idle pooled connections after this (default 60) */
    /* Called after each socket read has been delivered to on_head/on_body/on_done
     * (may be NULL). The worker writes the client bytes those callbacks produced
     * here (sy_server_flush), as nginx does after each upstream read: left to the
     * loop's check phase they would wait for the whole poll phase, which libuv
     * extends up to 48 rounds of 1024 events when the loop is behind. */
    void (*after_read)(void *arg);
    void *after_read_arg;
};

/* Create the pool for this loop; NULL when out of memory. Its TLS context is
 * made at its first TLS connection, and shared by every pool with the same
 * ssl_verify and ca_file: loading the system's CA bundle costs tens of ms of
 * CPU, which a gateway whose upstreams are all plain HTTP never pays, and
 * which others pay once per process rather than once per worker. */
struct sy_upool *sy_upool_new(uv_loop_t *loop, const struct sy_upool_opts *opts);
/* Make the TLS context for opts on a short-lived thread now, so that the first
 * TLS connection of a worker does not load the CA bundle on its loop (main
 * calls it when the config names an https upstream). */
void sy_upool_tls_warm(const struct sy_upool_opts *opts);
/* Set (or clear, with NULL) the after_read hook of a pool already created. */
void sy_upool_after_read(struct sy_upool *p, void (*cb)(void *arg), void *arg);
/* Close every connection; in-flight requests get on_done(SY_ECANCELED).
 * The pool frees itself once its handles are closed (needs the loop to run). */
void sy_upool_close(struct sy_upool *p);

struct sy_uheader {
    const char *name, *value;
    size_t name_len, value_len;
};

struct sy_ureq_cbs {
    /* Status line and headers parsed. Header views are valid only during the call.
     * Return 0 to continue, nonzero to cancel (no on_done then). */
    int (*on_head)(void *ud, int status, const struct sy_uheader *h, size_t nh);
    /* De-chunked body bytes, valid only during the call. Return 0 to continue,
     * nonzero to cancel (no on_done then). */
    int (*on_body)(void *ud, const char *p, size_t n);
    /* Exactly once: 0 when the response completed, else a negative SY_E*
     * (SY_EUPCONNECT, SY_EDNS, SY_ETLS, SY_EUPTIMEOUT, SY_EUPRESET, SY_EUPPROTO). */
    void (*on_done)(void *ud, int err);
};

struct sy_ureq_opts {
    const char *url;     /* absolute: http[s]://host[:port]/path?query (copied) */
    const char *method;  /* "POST", "GET" */
    const char *headers; /* extra raw header lines "Name: v\r\n..." (copied); may be NULL.
                            Host, Content-Length and Connection are added by the client. */
    size_t headers_len;
    const uv_buf_t *body; /* body pieces, sent in order (NOT copied: must stay valid until on_done/cancel) */
    unsigned nbody;
    double connect_timeout_s;    /* DNS + TCP + TLS handshake (default 10 when 0) */
    double first_byte_timeout_s; /* from request sent to response head (0 = none) */
    double idle_timeout_s;       /* max gap between received bytes once the head arrived (0 = none) */
    double total_timeout_s;      /* whole request, from sy_ureq_start to the last body byte (0 = none):
                                    every other timer is capped by it, so a body trickling in
                                    below the idle gap still ends in SY_EUPTIMEOUT */
};

/* Start a request. Returns NULL only on invalid arguments (bad URL, missing
 * on_done, or a pool that sy_upool_close() already closed). The first-byte
 * timer starts when the request is handed to the socket. */
struct sy_ureq *sy_ureq_start(struct sy_upool *p, const struct sy_ureq_opts *o, const struct sy_ureq_cbs *cbs,
                              void *ud);
/* Backpressure: stop/restart reading the response (client write queue full/drained).
 * Pausing from inside on_body stops the socket; the rest of the bytes already
 * read (at most one 64 KiB read, plus what TLS decrypted from it) is still
 * delivered. The idle timeout does not run while paused. */
void sy_ureq_pause(struct sy_ureq *r);
void sy_ureq_resume(struct sy_ureq *r);
/* Abandon the request: the connection is closed (not pooled), no callback follows. */
void sy_ureq_cancel(struct sy_ureq *r);

/* Counters of one pool (monotonic except idle_conns), for tests and metrics. */
struct sy_upool_stats {
    uint64_t requests;    /* sy_ureq_start calls accepted */
    uint64_t connects;    /* TCP connections opened (attempted) */
    uint64_t reuses;      /* requests sent on a pooled keep-alive connection */
    uint64_t retries;     /* stale keep-alive retries */
    uint64_t dns_lookups; /* uv_getaddrinfo calls (cache misses) */
    uint64_t tls_resumed; /* TLS handshakes that resumed a session */
    uint64_t idle_conns;  /* connections parked idle right now */
};
/* Copy the pool's counters into *st. */
void sy_upool_stats(const struct sy_upool *p, struct sy_upool_stats *st);

#endif
