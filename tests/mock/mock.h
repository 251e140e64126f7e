/* mock.h - internals shared by the files of the mock upstream server.
 *
 * The mock is a standalone test/bench tool (not part of switchyard): an HTTP/1.1
 * server on libuv + http-parser that answers like OpenAI and Azure OpenAI, and
 * in each native provider wire format (Anthropic, Gemini / Vertex AI, Bedrock,
 * Cohere, Ollama), and misbehaves on request (docs/testing-mock.md lists the
 * endpoints and the fault directives).
 *
 * Files:  main.c       command line, listening sockets, worker threads
 *         conn.c       one client connection: parsing, TLS, writes, paced/faulty sends
 *         routes.c     dispatch by path, /__mock/ control, request log
 *         scan.c       request body scan (jsmn) and fault directives
 *         reply.c      what every dialect shares: reply words, tool-call arguments,
 *                      vectors, chunked/SSE framing, split_utf8 marks
 *         openai.c     OpenAI response bodies (chat, completions, embeddings, errors)
 *         anthropic.c  Anthropic Messages (also Claude on Vertex AI)
 *         gemini.c     Gemini and Vertex AI generateContent, embeddings, OAuth2 token
 *         bedrock.c    Bedrock Converse (AWS event stream), InvokeModel embeddings
 *         cohere.c     Cohere v2 chat and embed
 *         ollama.c     Ollama /api/chat (NDJSON stream) and /api/embed
 *         responses.c  OpenAI Responses API (create, stream, retrieve, delete, input items)
 *         media.c      images, audio speech / transcriptions / translations,
 *                      moderations, rerank (Cohere shape)
 *         files.c      files and batches
 *         multipart.c  multipart/form-data reader
 *
 * Threading: every worker thread runs its own loop; a connection never leaves
 * the thread that accepted it. Shared (each behind its own mutex): the request
 * log, gemini.c's issued tokens, and the remembered responses, files and batches.
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
#define MOCK_MAX_BODY    (64u << 20)  /* request bodies above this get 413 */
#define MOCK_MAX_OUT     (512u << 20) /* cap on one rendered response */

struct mock_opts {
    const char *host;
    int port;     /* main listener (TLS if tls_cert and no tls_port) */
    int tls_port; /* extra TLS listener, -1 = none */
    const char *tls_cert, *tls_key;
    int threads;
    const char *require_key; /* NULL = no auth check */
    int record;              /* keep the last 100 requests for GET /__mock/requests */
    long token_expires_in;   /* expires_in of POST /token answers (default 3599) */
    const char *aws_secret;  /* verify Bedrock SigV4 signatures with this secret; NULL = format only */
};
extern struct mock_opts mock_opts;
extern SSL_CTX *mock_ssl_ctx;

/* Scripted behaviour for one request. Numbers are -1 when unset, views are
 * raw JSON string contents (still escaped), ready to be emitted verbatim. */
struct mock_fault {
    long status;
    long retry_after;         /* seconds, sent as retry-after */
    long retry_after_ms;      /* sent as retry-after-ms */
    long delay_ms;            /* before the status line */
    long chunk_delay_ms;      /* between response segments (SSE events) */
    long reset_after_chunks;  /* RST after this many content chunks */
    long trickle_bytes_per_s; /* pace the body */
    long body_bytes;          /* pad the response body to at least this */
    long close_without_response;
    long chunks;                                  /* number of content chunks (words) */
    long stream_error_after;                      /* content chunks before a mid-stream error (default 1) */
    long split_utf8;                              /* cut a multi-byte character across two writes */
    long utf8;                                    /* default reply text with multi-byte characters */
    long tool_call;                               /* -1 auto, 0 never, 1 whenever tools are declared */
    long expires_in;                              /* POST /token: expires_in */
    long dimensions;                              /* embeddings dimension when the body gives none */
    long no_usage;                                /* OpenAI chat/completions: answer without any usage */
    long cache_read, cache_write, cache_write_1h; /* Anthropic usage: cache_read_input_tokens,
                                                     cache_creation_input_tokens (cache_write_1h of
                                                     them in cache_creation.ephemeral_1h_input_tokens) */
    long echo_tool_result;                        /* after a tool result: the reply is its text */
    struct sy_str error_message, error_type, error_code, content, finish_reason, stream_error;
    struct sy_str tool_name; /* the declared tool to call (default: the first) */
};

#define MOCK_MAX_PROPS 16

/* What a request body says. Views point into the request body (or the URL). */
struct mock_req {
    struct sy_str model; /* without "@directives"; raw JSON string contents */
    int stream, include_usage;
    int stream_set;      /* "stream" present (Ollama streams by default) */
    int has_model;       /* "model" present in the body */
    long max_tokens;     /* max_tokens, max_completion_tokens, generationConfig.
                            maxOutputTokens, inferenceConfig.maxTokens,
                            options.num_predict; -1 = unset */
    size_t prompt_chars; /* characters of the string values of the prompt fields */
    long dimensions;     /* -1 = default */
    int base64;
    struct sy_str *items; /* embeddings inputs (malloc'd, raw token text) */
    int n_items;
    int bad_item_model; /* batchEmbedContents: a request whose model is not "models/…" */
    struct sy_str anthropic_version, input_type;
    /* the conversation's last turn (messages[-1] or contents[-1]) */
    int n_msgs;
    struct sy_str last_role;
    int last_tool_result;         /* it carries a tool result */
    struct sy_str last_tool_text; /* a chat tool message's content / a function_call_output's output (raw) */
    /* the first declared tool (tools[0], or toolConfig.tools[0] on Bedrock) */
    struct sy_str tool;                  /* its name (raw); empty = no tools */
    struct sy_str props[MOCK_MAX_PROPS]; /* its parameters' property names (raw) */
    int n_props, has_schema;
    struct mock_fault fault;
    const char *body; /* the request body (valid while the request is handled) */
    size_t body_n;
};

/* Per worker thread. */
struct mock_thread {
    uv_loop_t loop;
    uv_tcp_t lis[2];
    int lis_fd[2], lis_tls[2], nlis;
    uv_thread_t tid;
    uint64_t rng;
    struct sy_buf scratch; /* one rendered body or SSE event */
    struct sy_buf aux;     /* a second one (tool-call arguments, event-stream payloads) */
    char rbuf[65536];      /* read buffer, consumed within the read callback */
    char plain[65536];     /* TLS plaintext */
};

/* The request being parsed/answered on a connection. */
struct mock_http_req {
    struct sy_buf url, hdrs, body; /* hdrs: "name\0value\0" pairs, names lower-cased */
    uint32_t name_off[MOCK_MAX_HEADERS], val_off[MOCK_MAX_HEADERS];
    int nh, in_value, too_big;
};

struct mock_conn {
    uv_tcp_t tcp;
    uv_timer_t timer;
    http_parser parser;
    struct mock_thread *th;
    SSL *ssl; /* NULL on plain connections */
    BIO *rbio, *wbio;
    struct mock_http_req req;
    struct sy_buf out;        /* plaintext waiting for flush() */
    struct sy_buf pending_in; /* input received while a response is in flight */
    int pending_writes, closing, close_after_flush, handles_open, reading;
    /* an asynchronous (delayed / paced / faulty) response in flight */
    int busy;
    struct sy_buf rbuf; /* the whole rendered response */
    uint32_t *segs;     /* segment end offsets into rbuf */
    size_t nsegs, segcap, seg_i, sent;
    uint32_t *splits; /* split_utf8: offsets to pause at (inside a segment) */
    size_t nsplits, splitcap, split_i;
    struct mock_fault fault;
    int stream, rst_pending;
    void (*on_drain)(struct mock_conn *c);
};

/* Which provider's conventions a response follows (headers, error shapes). */
enum mock_dialect { MOCK_OPENAI = 0, MOCK_ANTHROPIC, MOCK_GOOGLE, MOCK_BEDROCK, MOCK_COHERE, MOCK_OLLAMA };

/* A response being rendered: into c->out (immediate) or c->rbuf (async,
 * with segment marks). */
struct mock_resp {
    struct mock_conn *c;
    struct sy_buf *b;
    int track; /* record segment boundaries */
    int split; /* split_utf8: record a pause inside multi-byte characters */
    enum mock_dialect d;
    const char *amz_error; /* Bedrock errors: x-amzn-ErrorType */
    int bedrock_invoke;    /* InvokeModelWithResponseStream: mock_sse writes AWS "chunk" messages */
};

/* conn.c */
void mock_on_connection(uv_stream_t *server, int status);
/* Segment boundary at the current end of r->b (no-op unless tracking). */
void mock_mark(struct mock_resp *r);
/* split_utf8: pause the send at offset off of r->b (no-op unless tracking). */
void mock_split_at(struct mock_resp *r, size_t off);
/* Finish routing a request: start the async machinery if r was tracked. */
void mock_commit(struct mock_resp *r, const struct mock_fault *f, int stream);
const char *mock_header(struct mock_conn *c, const char *name);
/* Paced streams (GET /__mock/stats): started, sent whole, cut by the peer
 * (the client closed the connection before the last byte), and the last one
 * to end: its segment count and the segments sent whole. */
void mock_stream_stats(struct sy_buf *s);
void mock_stream_stats_reset(void);

/* routes.c */
/* Answer the request in c->req (complete). Writes to c->out or goes async. */
void mock_route(struct mock_conn *c);
int mock_record_init(void);
/* Start rendering: go async (render into c->rbuf with marks) if f needs time. */
void mock_begin(struct mock_resp *r, const struct mock_fault *f);

/* scan.c */
/* Fill q from a JSON body. Returns 0, or -1 if the body is not a JSON object.
 * path_model (NULL .p = none) is the model named by the URL: it becomes
 * q->model and its directives are applied before the body's "mock" object.
 * q->items must be released with free(). */
int mock_scan(const char *body, size_t n, struct sy_str path_model, struct mock_req *q);
void mock_fault_init(struct mock_fault *f);
/* Apply "k=v,k=v" directives (from a model name after '@'); sep is ',' or '&'. */
void mock_fault_parse_kv(struct mock_fault *f, const char *s, size_t n, char sep);
/* Split "name@directives": returns the name, applies directives to f. */
struct sy_str mock_model_split(struct sy_str model, struct mock_fault *f);
/* Decode %XX escapes in place; returns the new length. */
size_t mock_pct_decode(char *p, size_t n);
/* A top-level member of a JSON object: type 0 = absent, 's' string (v without
 * the quotes, still escaped), 'p' number/true/false/null, 'o' object, 'a' array
 * (v the raw JSON text). */
struct mock_jv {
    struct sy_str v;
    char type;
};
/* Fill out[i] with member keys[i] of the JSON object body. Returns 0, or -1
 * if body is not a JSON object. */
int mock_json_get(const char *body, size_t n, const char *const *keys, int nkeys, struct mock_jv *out);

/* reply.c */
/* The reply text: the default sentence (or its UTF-8 variant), or "content". */
struct mock_text {
    const struct sy_str *words;
    size_t nw;
    struct sy_str *own; /* malloc'd when split from "content" */
    long n;             /* words to send: chunks, capped by max_tokens */
    int truncated;      /* capped by max_tokens */
};
int mock_text_init(struct mock_text *t, const struct mock_req *q);
void mock_text_free(struct mock_text *t);
/* Word i (i > 0 with a leading space), repeating the text as needed. */
void mock_text_word(struct sy_buf *s, const struct mock_text *t, long i);
/* All words of a whole (non-stream) reply; more while s->len < body_bytes.
 * Returns the number of words written. */
long mock_text_all(struct sy_buf *s, const struct mock_text *t, const struct mock_fault *f);
/* Stream loop condition: one more content chunk after i chunks / payload bytes? */
int mock_text_more(const struct mock_text *t, const struct mock_fault *f, long i, size_t payload);
/* Content chunks sent before a stream_error (-1: none asked). */
long mock_stream_error_after(const struct mock_fault *f);
long mock_prompt_tokens(const struct mock_req *q);
/* The request declares a tool and the last turn asks for an answer, not a tool result. */
int mock_wants_tool(const struct mock_req *q);
/* The tool call's arguments as a JSON object (raw JSON text). */
void mock_tool_args(struct sy_buf *s, const struct mock_req *q);
/* Length of the piece of p[0..n) at off of about want bytes, not cutting a UTF-8 character. */
size_t mock_piece(const char *p, size_t n, size_t off, size_t want);
uint64_t mock_fnv1a(const char *p, size_t n);
void mock_put_float(struct sy_buf *b, float v);
/* A deterministic unit vector for item, as a JSON array. */
void mock_vector(struct sy_buf *s, struct sy_str item, long dims);
/* f->finish_reason if given, else dflt. */
void mock_reason(struct sy_buf *s, const struct mock_fault *f, const char *dflt);
/* Append p[0..n) as one HTTP chunk. */
void mock_chunk(struct mock_resp *r, const char *p, size_t n);
/* One SSE event in one HTTP chunk: ["event: NAME" EOL] "data: " s EOL EOL,
 * EOL = "\r\n" if crlf else "\n". mark: end a segment after it (with split_utf8 applied). */
void mock_sse(struct mock_resp *r, const char *name, const struct sy_buf *s, int crlf, int mark);
/* End a segment that began at offset start of r->b (split_utf8 applied first). */
void mock_seg_end(struct mock_resp *r, size_t start);
/* Last chunk of a chunked body, and a final mark. */
void mock_chunked_end(struct mock_resp *r);
/* UUID-shaped random id. */
void mock_uuid(struct mock_thread *th, struct sy_buf *b);

/* openai.c */
enum mock_kind { MOCK_CHAT, MOCK_TEXT };
/* Reason phrase and default OpenAI message for a status (NULL if unknown). */
const char *mock_status_reason(int status);
void mock_head(struct mock_resp *r, int status, const char *ctype, long clen, const struct mock_fault *f);
void mock_body_json(struct mock_resp *r, int status, const struct sy_buf *body, const struct mock_fault *f);
void mock_completion(struct mock_resp *r, const struct mock_req *q, enum mock_kind k);
void mock_embeddings(struct mock_resp *r, const struct mock_req *q);
void mock_models(struct mock_resp *r, struct sy_str one);
/* OpenAI-style error; message/type/code NULL = defaults for status. */
void mock_error(struct mock_resp *r, int status, const char *message, const char *type, const char *code,
                const struct mock_fault *f);
void mock_rand_id(struct mock_thread *th, struct sy_buf *b, const char *prefix, int n);

/* anthropic.c. vertex: Claude on Vertex AI (rawPredict / streamRawPredict). */
int mock_anthropic_auth(struct mock_resp *r);
void mock_anthropic_error(struct mock_resp *r, int status, const char *type, const char *message,
                          const struct mock_fault *f);
/* Returns 1 if a stream was rendered. */
int mock_anthropic(struct mock_resp *r, const struct mock_req *q, int vertex, int stream);
/* Token counting (POST /v1/messages/count_tokens; Vertex: .../anthropic/models/count-tokens:rawPredict):
 * {"input_tokens": mock_count_text(body) + MOCK_COUNT_ANTHROPIC | MOCK_COUNT_VERTEX_CLAUDE}. */
void mock_anthropic_count(struct mock_resp *r, const struct mock_req *q, const char *body, size_t n, int vertex);
/* The mock's token count of a request: the bytes (raw, as sent) of every string value of a
 * member named text, content, system or description, wherever it is; -1 if body is not JSON. */
long mock_count_text(const char *body, size_t n);
/* What each counter adds to it, so a test knows which counter answered. */
#define MOCK_COUNT_ANTHROPIC     3
#define MOCK_COUNT_VERTEX_CLAUDE 5
#define MOCK_COUNT_BEDROCK       7
#define MOCK_COUNT_GEMINI        11
#define MOCK_COUNT_VERTEX_GEMINI 13

/* gemini.c (Gemini API and Vertex AI) */
enum mock_gop { MOCK_G_GENERATE, MOCK_G_STREAM, MOCK_G_BATCH_EMBED, MOCK_G_EMBED, MOCK_G_PREDICT, MOCK_G_COUNT };
int mock_gemini_auth(struct mock_resp *r, struct sy_str query);
int mock_vertex_auth(struct mock_resp *r);
void mock_google_error(struct mock_resp *r, int status, const char *message, const struct mock_fault *f);
int mock_gemini(struct mock_resp *r, const struct mock_req *q, enum mock_gop op, struct sy_str query);
/* POST /token (OAuth2 JWT bearer grant); directives come from the query. */
void mock_token(struct mock_resp *r, struct sy_str query);
void mock_token_stats(struct sy_buf *s);
void mock_token_reset(void);

/* bedrock.c */
enum mock_bop { MOCK_B_CONVERSE, MOCK_B_STREAM, MOCK_B_INVOKE, MOCK_B_INVOKE_STREAM, MOCK_B_COUNT };
/* One Anthropic stream event s as Bedrock's InvokeModelWithResponseStream sends it: an
 * event-stream message ":event-type: chunk" with payload {"bytes":"<base64 of s>"}. */
void mock_bedrock_chunk(struct mock_resp *r, const struct sy_buf *s, int mark);
int mock_bedrock_auth(struct mock_resp *r, const char *method, struct sy_str path, struct sy_str query);
void mock_bedrock_error(struct mock_resp *r, int status, const char *type, const char *message,
                        const struct mock_fault *f);
int mock_bedrock(struct mock_resp *r, const struct mock_req *q, enum mock_bop op);

/* cohere.c */
int mock_cohere_auth(struct mock_resp *r);
void mock_cohere_error(struct mock_resp *r, int status, const char *message, const struct mock_fault *f);
int mock_cohere(struct mock_resp *r, const struct mock_req *q, int embed);

/* ollama.c */
void mock_ollama_error(struct mock_resp *r, int status, const char *message, const struct mock_fault *f);
int mock_ollama(struct mock_resp *r, const struct mock_req *q, int embed);

/* ---- the other OpenAI APIs (routes.c dispatches, after the key check) ---- */
enum mock_api {
    MOCK_A_NONE,
    MOCK_A_RESP_CREATE,
    MOCK_A_RESP_GET,
    MOCK_A_RESP_DELETE,
    MOCK_A_RESP_ITEMS,
    MOCK_A_IMG_GEN,
    MOCK_A_IMG_EDIT,
    MOCK_A_SPEECH,
    MOCK_A_TRANSCRIBE,
    MOCK_A_TRANSLATE,
    MOCK_A_MODERATE,
    MOCK_A_RERANK,
    MOCK_A_FILE_UPLOAD,
    MOCK_A_FILE_LIST,
    MOCK_A_FILE_GET,
    MOCK_A_FILE_DELETE,
    MOCK_A_FILE_CONTENT,
    MOCK_A_BATCH_CREATE,
    MOCK_A_BATCH_LIST,
    MOCK_A_BATCH_GET,
    MOCK_A_BATCH_CANCEL,
};
struct mock_call {
    enum mock_api api;
    struct sy_str id;    /* {id} of the path (response, file, batch) */
    struct sy_str dep;   /* Azure deployment (NULL .p = none) */
    struct sy_str query; /* the query string, without '?' */
    int azure;           /* 1 = /openai/… (api-version required), 2 = /openai/v1/… */
};

/* routes.c */
/* The value of query parameter name (NULL .p = absent), still percent-encoded. */
struct sy_str mock_query_param(struct sy_str query, const char *name);
/* The leading decimal number of s ('-' allowed) within s.n bytes, 0 when none. */
long mock_digits(struct sy_str s);
/* mock_begin(), then a status directive: the error is rendered and committed
 * (OpenAI-shaped, Cohere-shaped when r->d is MOCK_COHERE) and 1 returned. */
int mock_api_begin(struct mock_resp *r, const struct mock_fault *f);

/* responses.c. q: the scanned JSON body (create) or an empty one (others). */
void mock_responses(struct mock_resp *r, const struct mock_call *k, struct mock_req *q);
void mock_responses_reset(void);
/* prefix + n lowercase hex digits, the first 16 unique within the process. */
void mock_hex_id(struct mock_thread *th, struct sy_buf *b, const char *prefix, int n);
/* OpenAI error with a param (NULL = null) and code (NULL = null); message is plain text. */
void mock_error_param(struct mock_resp *r, int status, const char *message, const char *param, const char *code);

/* media.c: images, audio, moderations, rerank. */
void mock_media(struct mock_resp *r, const struct mock_call *k, struct mock_req *q);

/* files.c: files and batches. */
void mock_files(struct mock_resp *r, const struct mock_call *k, struct mock_req *q);
void mock_files_reset(void);

/* multipart.c */
#define MOCK_MAX_PARTS 32
struct mock_part {
    struct sy_str name, filename, ctype, data; /* views into the body; filename NULL .p = none */
};
/* Split a multipart/form-data body (ct: its Content-Type header) into at most
 * max parts. Returns the number of parts, or -1 (not multipart, no boundary,
 * malformed). */
int mock_multipart(const char *ct, const char *body, size_t n, struct mock_part *parts, int max);
/* The first part named name, or NULL. */
const struct mock_part *mock_part(const struct mock_part *parts, int n, const char *name);
/* Append ,"multipart":{"fields":[names],"files":[{name,filename,bytes}],"model":M|null}
 * for a request log entry (nothing if the body is not multipart). */
void mock_multipart_log(struct sy_buf *s, const char *ct, const char *body, size_t n);

#endif
