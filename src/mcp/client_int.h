/* client_int.h - internal to src/mcp/: the client pool's types, shared by
 * client.c (the pool, ops, deadlines, the initialize handshake, message
 * matching), http.c (streamable HTTP), sse.c (the old SSE transport) and
 * auth.c (auth headers, OAuth2 client credentials).
 *
 *   sy_mcp_request ─▶ op ─▶ conn (one per server fingerprint)
 *                            │ state IDLE ─▶ INIT (initialize, then
 *                            │ notifications/initialized) ─▶ READY
 *                            ▼
 *        waiting (ops until READY) ─▶ parked (until a token / the SSE
 *        endpoint) ─▶ flight (sent; HTTP ops own their request, SSE and
 *        stdio ops wait for a message with their wire id)
 *
 * Every op is on the pool's deadline list (sorted; one uv timer for the
 * earliest) and on at most one of its conn's lists or the pool's kick list
 * (completions deferred to the next loop turn, so done is never called from
 * inside sy_mcp_request).
 */
#ifndef SY_MCP_CLIENT_INT_H
#define SY_MCP_CLIENT_INT_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "core/buf.h"
#include "mcp/mcp.h"
#include "upstream/framing.h"

struct sy_ureq;
struct sy_mcp_stdio;

/* An intrusive circular list. */
struct mlink {
    struct mlink *prev, *next;
};
static inline void ml_init(struct mlink *h)
{
    h->prev = h->next = h;
}
static inline int ml_empty(const struct mlink *h)
{
    return h->next == h;
}
static inline void ml_push(struct mlink *h, struct mlink *e)
{
    e->prev = h->prev;
    e->next = h;
    h->prev->next = e;
    h->prev = e;
}
static inline void ml_del(struct mlink *e)
{
    if (e->next && e->next != e) {
        e->prev->next = e->next;
        e->next->prev = e->prev;
    }
    e->prev = e->next = e;
}
/* Move every element of from to the tail of to (from becomes empty). */
static inline void ml_move(struct mlink *to, struct mlink *from)
{
    if (ml_empty(from))
        return;
    from->next->prev = to->prev;
    from->prev->next = to;
    to->prev->next = from->next;
    to->prev = from->prev;
    ml_init(from);
}
#define ml_entry(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

enum op_kind {
    OPK_USER,        /* a caller's request or notification */
    OPK_INIT,        /* the handshake's initialize */
    OPK_INITIALIZED, /* notifications/initialized */
    OPK_REPLY,       /* our answer to a server's request (ping): nobody waits */
};
enum op_where { OPW_NONE, OPW_WAIT, OPW_PARK, OPW_FLIGHT, OPW_KICK, OPW_DRAIN };

struct mconn;

struct sy_mcp_op {
    struct sy_mcp_pool *p;
    struct mconn *c;
    struct mlink q;  /* on c->waiting / parked / flight, or p->kick */
    struct mlink tl; /* on p->deadlines */
    enum op_where where;
    enum op_kind kind;
    int notify;
    uint64_t wid;      /* the JSON-RPC id on the wire (0 for notifications) */
    uint64_t deadline; /* uv_now ms */
    size_t max_result;
    sy_mcp_done_fn done;
    void *ud;
    struct sy_buf body; /* the message sent */
    struct sy_buf xhdr; /* the caller's header lines (checked) */
    char *cid;          /* the caller's id (raw JSON) restored in the answer; NULL: ours */
    size_t cid_len;
    int kerr;                /* kicked: the error to deliver */
    struct sy_mcp_op **post; /* SSE: the post in flight points at us through this */
    const char *sname;       /* the name of the server the caller named (a conn may serve several) */
    /* HTTP (http.c): the attempt in flight */
    struct sy_ureq *ureq;
    struct sy_buf hdr;  /* header lines of the attempt */
    struct sy_buf resp; /* the answer's body (JSON), or an error excerpt; kicked: the reason */
    uv_buf_t bodyv;     /* the request body as the upstream client takes it */
    struct sy_framer *fr;
    int status, is_sse, delivered;
    unsigned gen;                                            /* the session generation the attempt used */
    unsigned token_gen;                                      /* the OAuth2 token it carried (0: none) */
    unsigned retried_404 : 1, retried_401 : 1, sent_sid : 1; /* sent_sid: the attempt carried a session id */
};

enum conn_state { CS_IDLE, CS_INIT, CS_READY };

struct mconn {
    struct sy_mcp_pool *p;
    struct mlink link;      /* p->conns */
    struct sy_mcp_server s; /* our own copy: outlives the sets */
    void *smem;             /* its strings */
    enum conn_state state;
    struct mlink waiting; /* ops until READY */
    struct mlink parked;  /* ops until a token (OAuth2) or the SSE endpoint */
    struct mlink flight;  /* ops sent */
    char *session;        /* the server's Mcp-Session-Id; NULL */
    char version[16];     /* the negotiated protocol revision ("" before) */
    unsigned gen;         /* session generation: bumped by each initialize */
    int had_session;      /* an initialize of this conn already succeeded (a new one is a re-initialize) */
    struct sy_mcp_op *init_op;
    /* OAuth2 client credentials (auth.c) */
    char *token;
    uint64_t token_exp; /* uv_now ms */
    unsigned token_gen;
    struct sy_ureq *tok_req;
    struct sy_buf tok_body, tok_resp;
    uv_buf_t tok_bv;
    int tok_status;
    char tok_err[160];
    /* the old SSE transport (sse.c) */
    struct sy_ureq *stream;
    struct sy_framer sfr;
    int stream_status, stream_ok;
    char *endpoint; /* the POST url the stream named; NULL until then */
    /* stdio (H3's stdio.c) */
    struct sy_mcp_stdio *stdio;
};

struct sy_mcp_pool {
    uv_loop_t *loop;
    struct sy_upool *up;
    struct mlink conns;
    struct mlink deadlines;
    struct mlink kick;    /* decided ops, callbacks due */
    struct mlink kicking; /* the kick being run */
    struct mlink drains;  /* answered HTTP requests still reading their SSE stream */
    uv_timer_t dl_timer, kick_timer;
    uint64_t dl_armed; /* the deadline dl_timer is set for (0: none) */
    uint64_t next_id;
    int closing, handles;
    struct sy_mcp_pool_stats st;
};

/* The server name an op's messages give. */
static inline const char *mcp_op_name(const struct sy_mcp_op *op)
{
    return op->sname ? op->sname : op->c && op->c->s.name ? op->c->s.name : "?";
}

/* ---- client.c: what the transports call back ---- */
/* Finish op: detached from everything, done called (user ops), freed. msg
 * is a message (err 0) or a reason. */
void mcp_op_finish(struct sy_mcp_op *op, int err, const char *msg, size_t n);
/* The same with a formatted reason. */
void mcp_op_failf(struct sy_mcp_op *op, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Hand op to its transport now (c is READY, or op is part of the handshake). */
void mcp_conn_send(struct sy_mcp_op *op);
/* Put op back to wait for a fresh session (after a 404 on its session). */
void mcp_conn_resubmit(struct sy_mcp_op *op);
/* The session of c is gone (404, stream lost, child exited): the next
 * request initializes again. */
void mcp_conn_lost(struct mconn *c);
/* One message from the server on an SSE stream or a stdio line: an answer
 * is delivered to the op in c->flight with its id (or to want when not
 * NULL: an HTTP op's own stream), a request (ping) is answered. Returns 1
 * when want got its answer. */
int mcp_conn_message(struct mconn *c, struct sy_mcp_op *want, const char *p, size_t n);
/* An answered HTTP request finished draining its stream: free the op. */
void mcp_op_drained(struct sy_mcp_op *op);
/* Fail every op of list l (detached first) with err and msg. */
void mcp_fail_list(struct mlink *l, int err, const char *msg);
/* A fire-and-forget message to c (our answer to a server's request). */
void mcp_conn_reply(struct mconn *c, const char *msg, size_t n);

/* ---- message scanning (client.c; fuzzed) ---- */
struct mcp_scan {
    const char *id; /* raw JSON of the id member; NULL absent */
    size_t id_len;
    const char *method; /* raw JSON string (quotes included); NULL absent */
    size_t method_len;
    int has_result, has_error;
};
/* Check that p[0..n) is one JSON object (strict RFC 8259, depth bounded)
 * and find its top-level id, method, result and error. 0, or -1. */
int mcp_msg_scan(const char *p, size_t n, struct mcp_scan *out);
/* id as an unsigned integer (our wire ids); 0 when it is not one. */
uint64_t mcp_id_u64(const char *p, size_t n);
/* Resolve the SSE transport's endpoint (relative or absolute) against the
 * stream's url into out; -1 when it is malformed or names another origin. */
int mcp_url_resolve(const char *base, const char *ref, size_t n, struct sy_buf *out);

/* ---- http.c ---- */
/* Start op's POST (a new attempt). 0, or a negative SY_E* (bad url). */
int mcp_http_send(struct sy_mcp_op *op);
/* Tell the server a session ends (DELETE with its id), nobody waits. */
void mcp_http_delete(struct sy_mcp_pool *p, struct mconn *c);

/* ---- sse.c ---- */
/* POST op to the endpoint (opening the stream first when none: op waits
 * parked for the endpoint). 0, or a negative SY_E*. */
int mcp_sse_send(struct sy_mcp_op *op);
/* Close the stream (no callbacks). */
void mcp_sse_close(struct mconn *c);

/* ---- auth.c ---- */
/* 1 when c needs an OAuth2 token it lacks (or that expired): op is parked
 * and a fetch started (one per conn). 0: go on. */
int mcp_auth_wait(struct sy_mcp_op *op);
/* Append the header lines every request to c carries (static headers, the
 * auth header) to h; xhdr (the caller's lines, may be NULL) win over both
 * by name. */
void mcp_auth_headers(struct mconn *c, const struct sy_buf *xhdr, struct sy_buf *h);
/* Check and copy the caller's header lines into out (lines the transport
 * owns are dropped: Host, Content-Length, Mcp-Session-Id, ...). 0, or
 * SY_EINVAL when they are not "Name: value\r\n" lines. */
int mcp_headers_take(const char *p, size_t n, struct sy_buf *out);
/* A 401 answered a request carrying token generation gen: drop the token
 * (when still that one). 1 when op may be retried (OAuth2). */
int mcp_auth_rejected(struct mconn *c, unsigned gen);
/* Drop c's OAuth2 state (conn closing). */
void mcp_auth_close(struct mconn *c);
/* Basic auth value: base64 of "user:pass", or the value as it is when it
 * holds no ':' (already encoded). */
void mcp_basic_value(const char *v, struct sy_buf *out);
/* Parse an OAuth2 token answer: 0 with the token (malloc'd) and its
 * lifetime in seconds, or -1 with a reason. */
int mcp_token_parse(const char *p, size_t n, char **token, double *expires_in, char *err, size_t errlen);

#endif
