/* mock.h - internals shared by the files of the mock upstream server.
 *
 * The mock is a standalone test/bench tool (not part of switchyard): an HTTP/1.1
 * server on libuv + http-parser that answers like OpenAI and Azure OpenAI and
 * misbehaves on request (docs/testing-mock.md lists the fault directives).
 *
 * Files:  main.c    command line, listening sockets, worker threads
 *         conn.c    one client connection: parsing, TLS, writes, paced/faulty sends
 *         routes.c  dispatch by path, auth, /__mock/ control, request log
 *         scan.c    request body scan (jsmn) and fault directives
 *         openai.c  OpenAI response bodies (chat, completions, embeddings, errors)
 *
 * Threading: every worker thread runs its own loop; a connection never leaves
 * the thread that accepted it. Only the request log is shared (mutex).
 */
#ifndef MOCK_H
#define MOCK_H

#include <stddef.h>
#include <stdint.h>

#include <http_parser.h>
#include <openssl/ssl.h>
#include <uv.h>

#include "core/buf.h"
#include "core/str.h"

#define MOCK_MAX_HEADERS 100
#define MOCK_MAX_BODY (64u << 20)   /* request bodies above this get 413 */
#define MOCK_MAX_OUT (512u << 20)   /* cap on one rendered response */

struct mock_opts {
    const char *host;
    int port;            /* main listener (TLS if tls_cert and no tls_port) */
    int tls_port;        /* extra TLS listener, -1 = none */
    const char *tls_cert, *tls_key;
    int threads;
    const char *require_key; /* NULL = no auth check */
    int record;          /* keep the last 100 requests for GET /__mock/requests */
};
extern struct mock_opts mock_opts;
extern SSL_CTX *mock_ssl_ctx;

/* Scripted behaviour for one request. Numbers are -1 when unset, views are
 * raw JSON string contents (still escaped), ready to be emitted verbatim. */
struct mock_fault {
    long status;
    long retry_after;          /* seconds, sent as retry-after */
    long retry_after_ms;       /* sent as retry-after-ms */
    long delay_ms;             /* before the status line */
    long chunk_delay_ms;       /* between response segments (SSE events) */
    long reset_after_chunks;   /* RST after this many content chunks */
    long trickle_bytes_per_s;  /* pace the body */
    long body_bytes;           /* pad the response body to at least this */
    long close_without_response;
    long chunks;               /* number of content chunks (words) */
    struct sy_str error_message, error_type, error_code, content, finish_reason;
};

/* What a request body says. Views point into the request body. */
struct mock_req {
    struct sy_str model;       /* without "@directives"; raw JSON string contents */
    int stream, include_usage;
    long max_tokens;           /* -1 = unset */
    size_t prompt_chars;       /* characters of messages / prompt / input */
    long dimensions;           /* -1 = default */
    int base64;
    struct sy_str *items;      /* embeddings inputs (malloc'd, raw token text) */
    int n_items;
    struct mock_fault fault;
};

/* Per worker thread. */
struct mock_thread {
    uv_loop_t loop;
    uv_tcp_t lis[2];
    int lis_fd[2], lis_tls[2], nlis;
    uv_thread_t tid;
    uint64_t rng;
    struct sy_buf scratch;     /* one rendered body or SSE event */
    char rbuf[65536];          /* read buffer, consumed within the read callback */
    char plain[65536];         /* TLS plaintext */
};

/* The request being parsed/answered on a connection. */
struct mock_http_req {
    struct sy_buf url, hdrs, body;  /* hdrs: "name\0value\0" pairs, names lower-cased */
    uint32_t name_off[MOCK_MAX_HEADERS], val_off[MOCK_MAX_HEADERS];
    int nh, in_value, too_big;
};

struct mock_conn {
    uv_tcp_t tcp;
    uv_timer_t timer;
    http_parser parser;
    struct mock_thread *th;
    SSL *ssl;                  /* NULL on plain connections */
    BIO *rbio, *wbio;
    struct mock_http_req req;
    struct sy_buf out;         /* plaintext waiting for flush() */
    struct sy_buf pending_in;  /* input received while a response is in flight */
    int pending_writes, closing, close_after_flush, handles_open, reading;
    /* an asynchronous (delayed / paced / faulty) response in flight */
    int busy;
    struct sy_buf rbuf;        /* the whole rendered response */
    uint32_t *segs;            /* segment end offsets into rbuf */
    size_t nsegs, segcap, seg_i, sent;
    struct mock_fault fault;
    int stream, rst_pending;
    void (*on_drain)(struct mock_conn *c);
};

/* A response being rendered: into c->out (immediate) or c->rbuf (async,
 * with segment marks). */
struct mock_resp {
    struct mock_conn *c;
    struct sy_buf *b;
    int track;                 /* record segment boundaries */
};

/* conn.c */
void mock_on_connection(uv_stream_t *server, int status);
/* Segment boundary at the current end of r->b (no-op unless tracking). */
void mock_mark(struct mock_resp *r);
/* Finish routing a request: start the async machinery if r was tracked. */
void mock_commit(struct mock_resp *r, const struct mock_fault *f, int stream);
const char *mock_header(struct mock_conn *c, const char *name);

/* routes.c */
/* Answer the request in c->req (complete). Writes to c->out or goes async. */
void mock_route(struct mock_conn *c);
int mock_record_init(void);

/* scan.c */
/* Fill q from a JSON body. Returns 0, or -1 if the body is not a JSON object.
 * q->items must be released with free(). */
int mock_scan(const char *body, size_t n, struct mock_req *q);
void mock_fault_init(struct mock_fault *f);
/* Apply "k=v,k=v" directives (from a model name after '@'). */
void mock_fault_parse_kv(struct mock_fault *f, const char *s, size_t n);
/* Split "name@directives": returns the name, applies directives to f. */
struct sy_str mock_model_split(struct sy_str model, struct mock_fault *f);

/* openai.c */
enum mock_kind { MOCK_CHAT, MOCK_TEXT };
void mock_head(struct mock_resp *r, int status, const char *ctype, long clen,
               const struct mock_fault *f);
void mock_body_json(struct mock_resp *r, int status, const struct sy_buf *body,
                    const struct mock_fault *f);
void mock_completion(struct mock_resp *r, const struct mock_req *q, enum mock_kind k);
void mock_embeddings(struct mock_resp *r, const struct mock_req *q);
void mock_models(struct mock_resp *r, struct sy_str one);
/* OpenAI-style error; message/type/code NULL = defaults for status. */
void mock_error(struct mock_resp *r, int status, const char *message, const char *type,
                const char *code, const struct mock_fault *f);
void mock_rand_id(struct mock_thread *th, struct sy_buf *b, const char *prefix, int n);

#endif
