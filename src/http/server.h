/* server.h - the client-facing HTTP/1.1 server of one worker (libuv + http-parser).
 *
 * Each worker thread owns one sy_server: a listening socket bound with
 * SO_REUSEPORT (the kernel spreads connections over workers), its connections,
 * and their requests. Keep-alive and pipelining are supported: requests on one
 * connection are parsed and answered strictly in order, one at a time (bytes of
 * the next request are buffered, capped, while the current one is served, so a
 * client disconnect is still noticed). Request bodies may use Content-Length
 * or chunked encoding.
 *
 * Limits (all from the config snapshot in effect when the request began):
 *   request head > max_header_bytes      -> 431, connection closed
 *   body > max_body_bytes                -> 413, connection closed
 *   head not complete in header_timeout  -> 408, connection closed
 *   no body byte for body_timeout        -> 408, connection closed
 *   idle keep-alive > keepalive_timeout  -> connection closed silently
 *   body not complete in body_total_timeout -> 408, connection closed
 *
 * CORS, as LiteLLM's Starlette CORSMiddleware (any origin, credentials, any
 * method and header) or a configured origin list: an OPTIONS preflight is
 * answered by the server itself on every path; every other response to an
 * allowed Origin carries Access-Control-Allow-Origin (echoed), -Credentials
 * and Vary: Origin.
 *
 * HEAD (RFC 9110 §9.3.2): the handler is given the request as a GET (r->head
 * set, r->method HTTP_GET) and answers as it would a GET; the server sends the
 * status line and every header that answer has (content-length of the body it
 * would have sent, or transfer-encoding: chunked for a streamed one) and drops
 * the body, so every route answers HEAD and the connection stays in step for
 * the next pipelined request.
 *
 * Responses: sy_resp_simple() for a whole response in one write, or
 * sy_resp_start() + sy_resp_chunk()* + sy_resp_end() for a streamed
 * (chunked) one. Every request ends with exactly one of sy_resp_simple() or
 * sy_resp_end(); the server then frees the request (its arena) and moves on.
 */
#ifndef SY_HTTP_SERVER_H
#define SY_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/str.h"

struct sy_server;
struct sy_conn;
struct sy_req;

struct sy_header {
    struct sy_str name, value;
};

struct sy_server_limits {
    size_t max_header_bytes;
    size_t max_body_bytes;
    uint64_t header_timeout_ms, body_timeout_ms, keepalive_timeout_ms;
    uint64_t body_total_timeout_ms; /* whole body must arrive in this time; 0 = none */
    /* CORS (see server.c "CORS"): NULL = any origin; else "origin\norigin\n..."
     * (exact matches). The string must live as long as the process. */
    const char *cors_origins;
};

/* Largest accepted switchyard_max_header_bytes (http-parser's own limit is
 * raised to this at startup). */
#define SY_MAX_HEADER_BYTES_MAX (1024u * 1024u)

/* Called when a request's head and whole body have arrived. The handler owns
 * the request until it calls sy_resp_simple() or sy_resp_end(). */
typedef void (*sy_req_handler)(struct sy_req *req, void *ud);
/* Called when the client went away while the handler owns the request. The
 * handler must stop all work for it (cancel upstream I/O) and then call
 * sy_resp_end() (no bytes are sent) - now or later. */
typedef void (*sy_req_abort_cb)(struct sy_req *req);
/* Limits for a new request (config may change between requests on SIGHUP). */
typedef void (*sy_limits_cb)(struct sy_server_limits *out, void *ud);

struct sy_req {
    struct sy_conn *conn;
    int method;          /* http_parser enum http_method */
    struct sy_str path;  /* without query */
    struct sy_str query; /* after '?', may be empty */
    struct sy_header *headers;
    size_t nheaders;
    struct sy_buf body;
    int http_minor;
    int head;                  /* the client sent HEAD: served as GET (method reads HTTP_GET once
                                  dispatched), the same status and headers, never a body byte */
    int keep_alive;            /* client allows it */
    uint64_t t_start_ns;       /* first byte of the request seen */
    uint64_t t_ready_ns;       /* head+body complete */
    struct sy_str cors_origin; /* the request's Origin when CORS allows it: echoed on the response */
    /* response state (owned by the server) */
    int status;
    int resp_started, resp_chunked, resp_done;
    size_t bytes_out;
    sy_req_abort_cb on_abort; /* set by the handler if it does async work */
    void *handler_data;       /* the handler's per-request state */
    struct sy_arena arena;    /* freed when the response ends; keep last (not zeroed) */
};

struct sy_server *sy_server_new(uv_loop_t *loop, sy_req_handler h, sy_limits_cb lim, void *ud);
/* Bind and listen (SO_REUSEPORT, TCP_NODELAY on accepted sockets). 0 or -errno. */
int sy_server_listen(struct sy_server *s, const char *host, int port);
/* Graceful stop: close the listener and idle connections; busy connections
 * close after their current response. done() runs when none are left. */
void sy_server_drain(struct sy_server *s, void (*done)(void *), void *arg);
/* Force-close everything (after a drain timeout). */
void sy_server_close_all(struct sy_server *s);
size_t sy_server_nconns(const struct sy_server *s);
/* Write every connection's collected output now (see "writing" in server.c).
 * Runs once per loop iteration by itself; the worker also calls it after each
 * upstream read, so streamed bytes never wait for the end of libuv's poll phase. */
void sy_server_flush(struct sy_server *s);
/* Close the server's own handles (after drain); free it after the loop ran. */
void sy_server_close_handles(struct sy_server *s);
/* Serve an already connected stream socket (tests, fuzzing, socket activation). */
int sy_server_adopt(struct sy_server *s, int fd);

/* Look up a request header (case-insensitive); NULL view when absent. */
struct sy_str sy_req_header(const struct sy_req *r, const char *name);
/* The client's address (the TCP peer, as text) into out; 0, or -1 (unknown). */
int sy_req_peer(const struct sy_req *r, char *out, size_t cap);
/* Percent-decode s[0..n) into out (cap >= 1, NUL-terminated, truncated to
 * fit); plus_space: '+' is a space (query strings), else kept (paths).
 * Returns the decoded length. */
size_t sy_pct_decode(const char *s, size_t n, char *out, size_t cap, int plus_space);
/* The value of query parameter `name` in the raw query q[0..qn) (names and
 * values percent-decoded, '+' as space; the first occurrence) into out; out,
 * or NULL when absent ("" for a name without '='). */
const char *sy_query_get(const char *q, size_t qn, const char *name, char *out, size_t cap);
/* Content negotiation (RFC 9110 §12.5.1): the index into types[ntypes] ("text/html",
 * "application/json" ...) of the type the Accept header accept[0..n) prefers;
 * ties go to a type the client named (the first it listed), else to the lower
 * index; 0 without a header or when none is acceptable. */
int sy_accept_pick(const char *accept, size_t n, const char *const *types, int ntypes);

/* One-shot response: status, extra header lines ("Name: v\r\n"..., may be
 * NULL), content type and body. Ends the request. */
void sy_resp_simple(struct sy_req *r, int status, const char *extra_headers, size_t extra_len, const char *content_type,
                    const char *body, size_t body_len);
/* Streamed response: head now, body as chunks. */
void sy_resp_start(struct sy_req *r, int status, const char *extra_headers, size_t extra_len, const char *content_type);
/* Queue one chunk (copied). Returns the bytes queued on the socket so far, so
 * callers can apply backpressure (see sy_resp_set_drain_cb). */
size_t sy_resp_chunk(struct sy_req *r, const char *p, size_t n);
/* Called once the queued bytes drop below low water after exceeding high water. */
void sy_resp_set_drain_cb(struct sy_req *r, void (*cb)(struct sy_req *), size_t high_water);
void sy_resp_end(struct sy_req *r);
/* Bytes written by the kernel not yet acknowledged by uv (write queue size). */
size_t sy_resp_queued(const struct sy_req *r);

#endif
