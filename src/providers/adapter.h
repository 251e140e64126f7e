/* adapter.h - the translating provider adapters (DESIGN §3).
 *
 * A provider whose wire format is not OpenAI's (anthropic, gemini, vertex_ai,
 * bedrock, cohere, ollama) is one file src/providers/<name>.c exposing one
 * const struct sy_adapter. Adapters are pure functions over buffers: no I/O,
 * no clock, no globals (the gateway passes the time, the credentials and any
 * OAuth token in), so each is unit-tested with golden files and fuzzed.
 *
 *   config load:  configure(deployment) -> struct sy_pconf (base URL, keys, region ...)
 *   per attempt:  encode(ctx, OpenAI request DOM) -> URL, header lines, body
 *   response:     decode_response(ctx, body) -> OpenAI chat.completion / embedding list JSON
 *   stream:       framer (upstream/framing.h) -> decode_event(ctx, type, data)* -> OpenAI
 *                 chunks "data: {...}\n\n"; the gateway adds the usage chunk and [DONE]
 *   errors:       decode_error(status, body) -> status, type, message the client sees
 *
 * The OpenAI side is written with the helpers of providers/oai.h so every
 * adapter's output has the same shape (field order, ids, usage).
 */
#ifndef SY_ADAPTER_H
#define SY_ADAPTER_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "core/arena.h"
#include "core/buf.h"
#include "providers/jdom.h"

enum sy_op { SY_OP_CHAT = 0, SY_OP_EMBED = 1 };

/* How a provider frames its stream (upstream/framing.h). */
enum sy_framing { SY_FRAME_SSE = 0, SY_FRAME_NDJSON = 1, SY_FRAME_AWS_EVENTSTREAM = 2 };

#define SY_CAP_STREAM    0x01
#define SY_CAP_TOOLS     0x02
#define SY_CAP_VISION    0x04
#define SY_CAP_EMBED     0x08
#define SY_CAP_REASONING 0x10
#define SY_CAP_OAUTH     0x20 /* needs ctx->access_token (vertex_ai: the gateway fetches it) */

/* A deployment's provider settings, resolved once at config load by
 * configure() (litellm_params, then the provider's environment variables,
 * then defaults). Strings are malloc'd and owned here (sy_pconf_free). */
struct sy_pconf {
    char *base;          /* base URL without a trailing '/', e.g. "https://api.anthropic.com" */
    char *key;           /* API key (anthropic, gemini, cohere, ollama bearer); may be NULL */
    char *region;        /* bedrock: aws_region_name; vertex_ai: vertex_location */
    char *project;       /* vertex_ai: vertex_project */
    char *access_key;    /* bedrock: aws_access_key_id */
    char *secret_key;    /* bedrock: aws_secret_access_key */
    char *session_token; /* bedrock: aws_session_token; may be NULL */
    char *credentials;   /* vertex_ai: service-account JSON text (vertex_credentials as JSON or a
                            file path, else GOOGLE_APPLICATION_CREDENTIALS' file) */
    char *version;       /* anthropic: anthropic-version header (default "2023-06-01") */
    int drop_params;     /* litellm_params.drop_params, else litellm_settings.drop_params */
    char **drop_extra;   /* additional_drop_params */
    size_t n_drop_extra;
    int64_t max_tokens; /* default output cap: model_info.max_tokens / max_output_tokens, else -1 */
    void *priv;         /* adapter-owned, free()d by sy_pconf_free */
};
void sy_pconf_free(struct sy_pconf *pc);
/* additional_drop_params (a JSON list of names, as the config gives it) into
 * pc->drop_extra. 0, or -1 with a reason in err. */
/* Cut a configured api_base back to the server's root: trailing '/'s, then
 * the first of tails[0..n) it ends with (a full endpoint URL, as LiteLLM's docs
 * write some), then '/'s again. In place. */
void sy_pconf_trim_base(char *b, const char *const *tails, size_t n);
int sy_pconf_drop_list(const char *v, struct sy_pconf *pc, char *err, size_t errlen);
/* 1 when s has a control character (a key must not break a header line). */
int sy_pconf_has_ctl(const char *s);

/* One call, as the adapter sees it. */
struct sy_xctx {
    const struct sy_deployment *d; /* litellm_params: sy_deployment_param(d, "...") */
    const struct sy_pconf *pc;
    const char *model; /* upstream model id (NUL-terminated), e.g. "claude-3-5-sonnet-20241022" */
    enum sy_op op;
    int stream;               /* the client asked stream: true */
    int64_t now;              /* unix time, seconds (SigV4 date, "created") */
    const char *access_token; /* SY_CAP_OAUTH adapters: a valid OAuth2 bearer token; else NULL */
    struct sy_arena *arena;   /* scratch for the call (freed with the request) */
    /* client headers to forward (anthropic-beta ...): "Name: v\r\n" lines; may be NULL */
    const char *fwd_headers;
    size_t fwd_headers_len;
};

/* An error the client sees (mapped as LiteLLM maps it). */
struct sy_xerr {
    int status;     /* HTTP status for the client */
    char type[64];  /* OpenAI error.type, e.g. "invalid_request_error" */
    char param[64]; /* may be "" */
    char message[1024];
    char cls[48]; /* LiteLLM exception class when not the status's default
                     (e.g. "ContextWindowExceededError"); may be "" */
};

/* Output of encode(). The gateway initializes the buffers with caps. */
struct sy_xout {
    struct sy_buf url;     /* absolute URL */
    struct sy_buf headers; /* complete header lines "Name: v\r\n" incl. Content-Type and auth
                              (Host and Content-Length are added by the HTTP client) */
    struct sy_buf body;
    struct sy_xerr err; /* when encode fails */
};

struct sy_xusage {
    int64_t prompt, completion; /* OpenAI's meaning: prompt includes cache reads/writes */
    int64_t cache_read, cache_write, reasoning;
    int64_t
        cache_write_1h; /* the 1-hour TTL part of cache_write (Anthropic's cache_creation.ephemeral_1h_input_tokens) */
    int have;           /* the upstream reported usage */
};

/* Per-call response state, zeroed by the gateway, then id/model/created/
 * include_usage set before the first decode call. */
struct sy_xstate {
    char id[128];    /* chunk/response id; an adapter may replace it with the provider's */
    char model[192]; /* model reported to the client */
    int model_fixed; /* 1: model is the name the client asked for; an adapter keeps it (else it may
                        report the provider's, as LiteLLM's transformations do) */
    int64_t created;
    int include_usage; /* stream_options.include_usage */
    int role_sent;     /* first chunk (with role) written (oai.h) */
    int finished;      /* a finish_reason chunk was written */
    int ntools;        /* tool calls opened so far (OpenAI tool_calls indexes 0..ntools-1) */
    int done;          /* the provider said the stream ended */
    struct sy_xusage u;
    struct sy_xerr err; /* decode_event returned an error: what to send */
    /* oai.h: the chunk prefix 'data: {"id":..,"object":..,"created":..,"model":..' built at
     * the first chunk (id and model must not change after it) */
    char pre[448];
    size_t pre_len;
    _Alignas(16) unsigned char priv[1024]; /* adapter's own stream state */
};

struct sy_adapter {
    const char *name; /* config prefix and metric label */
    unsigned caps;
    enum sy_framing framing;
    /* Resolve d's settings into pc (zeroed by the caller). 0, or -1 with a
     * one-line reason in err (missing key is NOT an error: requests then get
     * the provider's 401, as LiteLLM). */
    int (*configure)(const struct sy_deployment *d, int global_drop_params, struct sy_pconf *pc, char *err,
                     size_t errlen);
    /* OpenAI request (chat or embeddings per x->op; node 0 = the object) ->
     * upstream request. 0, or an SY_E* with o->err filled (unsupported
     * parameter, bad message shape: 400s as LiteLLM's). */
    int (*encode)(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o);
    /* A 2xx non-stream body -> the OpenAI response JSON in out; usage in
     * st->u. 0, or SY_EUPPROTO with st->err filled (body not understood). */
    int (*decode_response)(const struct sy_xctx *x, struct sy_xstate *st, const char *body, size_t n,
                           struct sy_buf *out);
    /* One stream event (type: SSE `event:` / AWS `:event-type`, "" for NDJSON
     * lines; data: the payload) -> zero or more "data: {chunk}\n\n" frames
     * appended to out. 0; SY_DONE when the provider ended the stream; else an
     * SY_E* with st->err filled (a provider error event, an exception frame). */
    int (*decode_event)(const struct sy_xctx *x, struct sy_xstate *st, const char *type, size_t tl, const char *data,
                        size_t dl, struct sy_buf *out);
    /* A >= 400 answer -> what the client sees (statuses as LiteLLM maps them). */
    void (*decode_error)(const struct sy_xctx *x, int status, const char *body, size_t n, struct sy_xerr *e);
};

/* Adapters (one per file). NULL-terminated lookup by config prefix. */
extern const struct sy_adapter sy_adapter_anthropic; /* anthropic.c */
extern const struct sy_adapter sy_adapter_gemini;    /* gemini.c */
extern const struct sy_adapter sy_adapter_vertex;    /* vertex.c (gemini format on Vertex, and Claude) */
extern const struct sy_adapter sy_adapter_bedrock;   /* bedrock.c (Converse) */
extern const struct sy_adapter sy_adapter_cohere;    /* cohere.c (v2) */
extern const struct sy_adapter sy_adapter_ollama;    /* ollama.c (native /api/chat, /api/embed) */
const struct sy_adapter *sy_adapter_find(const char *provider);

#endif
