/* xlate.h - translation glue between the upstream stage (proxy.c), the
 * client's dialect (dialects/dialect.h) and the provider adapters
 * (providers/adapter.h).
 *
 * The pass-through path (an OpenAI client, an OpenAI-compatible deployment)
 * never comes here: c->x stays NULL and proxy.c forwards bytes. Otherwise an
 * attempt is (client dialect) x (deployment), composed through the chat form:
 *
 *   deployment            request                                answer
 *   --------------------  -------------------------------------  ------------------------------------------
 *   adapter (anthropic..) dl->to_chat, then the adapter's encode  the adapter's decode, then dl->from_chat /
 *                                                                  dl->stream_chunk
 *   OpenAI-compatible     dl->to_chat, model replaced             dl->from_chat / dl->stream_chunk
 *   native (dl->native)   the client's body, model replaced       bytes as they come (dl->native_rewrite:
 *                                                                  ids rewritten per event)
 *
 * with the chat dialect's members absent (identity). The client's dialect is
 * the route kind's (sy_xlate_dialect); the request is translated to chat once
 * per call and kept across retries and fallbacks, the encode runs per attempt.
 *
 * Errors from an adapter's decode_error (or the dialect's shape) go through
 * proxy.c's error path, so retries, cooldowns and fallbacks work the same for
 * every provider.
 */
#ifndef SY_GATEWAY_XLATE_H
#define SY_GATEWAY_XLATE_H

#include "gateway/gateway.h"
#include "providers/adapter.h"
#include "dialects/dialect.h"
#include "responses/responses.h"
#include "upstream/client.h"
#include "upstream/framing.h"

/* The Responses API state of a call (gateway/responses.c). */
struct sy_rcall {
    char seed[40];  /* the call id without dashes: generated item ids */
    char inner[48]; /* "resp_<seed>": the id a translated response is stored under */
    char id[1600];  /* the encoded id the client sees (per attempt) */
    int64_t created_at;
    int store;              /* store != false */
    int has_prev;           /* previous_response_id given */
    struct sy_resp_id prev; /* it, decoded */
    char *prev_full;        /* it, as the client sent it (decoded JSON string) */
    char *prior;            /* translated conversations: the items before this request (JSON array) */
    size_t prior_len;
    int prior_loaded, prior_missing, prior_error;
    int in_stage, answered_sync, waiting;
    int too_large;       /* prior + this request over max_request_size_mb */
    int prev_denied;     /* previous_response_id is neither a readable conversation nor the caller's native one */
    int prev_down;       /* ... could not be checked (the database is down) */
    int native_recorded; /* the native response's id was recorded as the caller's (owners.h) */
    struct sy_buf items; /* this request's input items (sy_resp_to_openai) */
    struct sy_jdoc req;  /* the request parsed, and translated (the built-in mock's path) */
    int have_req;
    char *chat;
    size_t chat_len;
    /* by-id routes */
    int id_op;
    struct sy_resp_id rid;
    char full_id[600];
    /* what the translation left out (x-switchyard-dropped-tools) */
    struct sy_dl_report rep;
};
/* 1 when d serves the Responses API itself (openai, azure, xai, litellm_proxy). */
int sy_resp_native(const struct sy_drt *d);
/* Save a translated response the client got (responses.c). */
void sy_responses_save(struct sy_call *c, const char *resp, size_t n);
/* 1 when the call's Response is to be saved (store, a deployment): the
 * responses_store filter (filters/responses_store.c) links then. */
int sy_responses_storing(const struct sy_call *c);
/* Record the id of a native response the upstream made as the caller's
 * (responses.c): json is the response (event 0) or a stream event's data (1). */
void sy_responses_native_made(struct sy_call *c, const char *json, size_t n, int event);
/* The built-in mock's view of a Responses request: the chat request it stands
 * for (0), or SY_DONE when an error was sent (previous response not found,
 * a request that cannot be translated). */
int sy_responses_mock_chat(struct sy_call *c, const char **body, size_t *n);
/* The URL of a raw / native call: the deployment's OpenAI base + path (passthru.c). */
int sy_passthru_url(struct sy_call *c, const struct sy_drt *d, const char *path, struct sy_buf *out, char *msg,
                    size_t cap);

struct sy_xcall {
    /* the attempt: the client's dialect (NULL before the first prepare), the deployment's
     * adapter (NULL: OpenAI-compatible), or the native shortcut */
    const struct sy_dialect *dl;
    const struct sy_adapter *ad;
    int native;
    /* the chat request adapters read: the client's body, or the dialect's translation */
    const char *oai_body;
    size_t oai_len;
    struct sy_jdoc oreq; /* oai_body parsed (when have_oreq) */
    int have_oreq;
    struct sy_jdoc areq; /* the client's request in its dialect, parsed once */
    int have_areq;
    char *model; /* upstream model of the attempt (NUL-terminated, arena) */
    struct sy_xctx ctx;
    struct sy_xout out;   /* url, headers, body of the attempt */
    struct sy_xstate st;  /* adapter decoding state */
    struct sy_framer fr;  /* the adapter's stream framing */
    struct sy_framer ofr; /* OpenAI SSE (an OpenAI-compatible or native upstream) */
    void *ds;             /* the dialect's stream state (dl->stream_size bytes, arena) */
    int ds_on;            /* ds initialized */
    struct sy_dl_meta dm; /* the dialect's answer: id, model, echoed request */
    struct sy_buf emit;   /* bytes decoded from one upstream read, for the client */
    struct sy_buf mid;    /* the adapter's chat chunks before the dialect's stream_chunk */
    struct sy_xerr err;   /* upstream error / failed decode, as the client sees it */
    int have_err;
    int fwd_passing;        /* a forwarded stream: its first event (the model echoed) is out */
    int native_status;      /* a native attempt's error: the upstream's own status (0: none) */
    char fwd_headers[8192]; /* anthropic-beta / anthropic-version lines from the client */
    char msg_id[64];
    int b64; /* embeddings: the client asked encoding_format base64 (providers get "float") */
    /* a large request is translated on the thread pool (proxy.c): the OAuth token is
     * taken on the loop first, the results wait here for the loop */
    char tok[4096];
    int tok_ready;
    int prepared; /* prepare ran on the pool: p_* hold its results */
    int p_rc;
    unsigned p_nbody;
    const char *p_url, *p_headers;
    size_t p_headers_len;
    /* Responses: oai_body was made with web search on; the request has a web search tool */
    int oai_ws, oai_had_ws;
};

/* The client dialect of a route kind (enum sy_rkind): chat for the OpenAI
 * routes. sy_xlate_dialects (xlate.c) is the one table that names the
 * dialects' route kinds (NULL: chat). */
extern const struct sy_dialect *const sy_xlate_dialects[SY_RK__COUNT];
static inline const struct sy_dialect *sy_xlate_dialect(int kind)
{
    const struct sy_dialect *dl = (unsigned)kind < SY_RK__COUNT ? sy_xlate_dialects[kind] : NULL;
    return dl ? dl : &sy_dialect_chat;
}
/* 1 when an attempt of c on d goes through this file (a translating adapter,
 * or a client dialect other than chat). */
static inline int sy_xlate_wanted(const struct sy_call *c, const struct sy_drt *d)
{
    return d->ad || sy_xlate_dialect(c->kind) != &sy_dialect_chat;
}
/* 1 when d's model reasons: model_info.supports_reasoning, else the price
 * map's supports_reasoning for its base_model or model. A translated request
 * (Anthropic thinking, Responses reasoning.effort) keeps its reasoning_effort
 * on an OpenAI-compatible deployment only then. */
int sy_xlate_reasons(const struct sy_drt *d);
/* 1 when d speaks dialect dl itself (the native shortcut). */
int sy_xlate_native(const struct sy_drt *d, const struct sy_dialect *dl);
/* 1 when the bytes of an attempt of c on d pass as they are: native, with
 * nothing to rewrite (an Anthropic client on an Anthropic deployment). */
static inline int sy_xlate_forwards(const struct sy_call *c, const struct sy_drt *d)
{
    const struct sy_dialect *dl = sy_xlate_dialect(c->kind);
    return !dl->native_rewrite && sy_xlate_native(d, dl);
}

/* An attempt that does not go through this file (a pass-through fallback
 * after a translated attempt): the call's translation is off again, so its
 * answer is read as the pass-through path reads it. */
static inline void sy_xlate_off(struct sy_call *c)
{
    if (c->x)
        c->x->dl = NULL;
}

/* The prepared attempt, for proxy.c: */
/* a translation is in place (the call went through sy_xlate_prepare) */
static inline int sy_xlate_active(const struct sy_call *c)
{
    return c->x && c->x->dl;
}
/* ... and the client gets OpenAI chat from a translating adapter */
static inline int sy_xlate_chat_adapter(const struct sy_call *c)
{
    return c->x && c->x->dl == &sy_dialect_chat;
}
/* ... the bytes pass as they are (see sy_xlate_forwards) */
static inline int sy_xlate_forwarded(const struct sy_call *c)
{
    return c->x && c->x->native && c->x->dl && !c->x->dl->native_rewrite;
}
/* 1 when the call's responses are decoded (not forwarded as they come). */
static inline int sy_xlate_decodes(const struct sy_call *c)
{
    return sy_xlate_active(c) && !sy_xlate_forwarded(c);
}
/* ... the upstream answers in OpenAI form (an OpenAI-compatible or a native
 * Responses deployment: its usage is the upstream's own) */
static inline int sy_xlate_upstream_oai(const struct sy_call *c)
{
    return c->x && !c->x->ad;
}

/* Prepare the attempt on c->drt: fills o->url, o->headers and either the
 * body pieces (c->up.body_parts, *nbody) or, for a forwarded one, leaves the body to
 * the pass-through code (*nbody = 0). Returns 0; SY_AGAIN when an OAuth token
 * is being fetched (the attempt is relaunched by a timer); or a negative
 * SY_E* with c->x->err filled (the request cannot be sent: a 400 for an
 * unsupported parameter, say). */
int sy_xlate_prepare(struct sy_call *c, struct sy_ureq_opts *o, unsigned *nbody);
/* The loop's part of a prepare that will run on the thread pool: the OAuth
 * token of the attempt's deployment, if it needs one. 0, SY_AGAIN (being
 * fetched), or an SY_E* with c->x->err filled. sy_xlate_prepare itself only
 * reads the request and allocates from its arena, which the loop does not
 * touch while pool work runs (gateway/offload.h). */
int sy_xlate_oauth(struct sy_call *c);
/* Stream bytes from the upstream -> *out, *outn (client bytes, maybe none).
 * 0, or a negative SY_E* with c->x->err set (a provider error event, a broken
 * framing). */
int sy_xlate_feed(struct sy_call *c, const char *p, size_t n, const char **out, size_t *outn);
/* The upstream stream ended: what the framer still held (an unterminated last
 * event), decoded. 0 or a negative SY_E* with c->x->err set. */
int sy_xlate_stream_flush(struct sy_call *c, const char **out, size_t *outn);
/* Then the last client bytes: the usage chunk (from c->x->st.u, which the
 * caller fills first when the provider reported none) and [DONE], or the
 * dialect's closing events. */
int sy_xlate_stream_end(struct sy_call *c, const char **out, size_t *outn);
/* The model the client sees: the name it asked for (c->in.model), on every
 * path and dialect, as LiteLLM's proxy stamps it; NULL when there is none. */
static inline const char *sy_xlate_echo_name(const struct sy_call *c)
{
    return c->in.model && c->in.model[0] ? c->in.model : NULL;
}
/* p[0..n) (a JSON object: a native answer, or one event's data) appended to
 * out with the string value of its "model" member replaced by model: the
 * top-level one, and the one inside a top-level "message" or "response"
 * object (Anthropic's message_start, the Responses API's response.* events).
 * Every other byte is copied as it is. Returns how many values it replaced
 * (0: out got p unchanged, also for text that is not a JSON object). */
int sy_xlate_echo_model(const char *p, size_t n, const char *model, struct sy_buf *out);
/* The same for OpenAI's answers and chunks (a top-level "model" only, found
 * in the object's first bytes when it is there, as OpenAI puts it): 1 with
 * the object appended to out with the value replaced; 0, out untouched, when
 * there is none or it already is `model`. */
int sy_xlate_echo_top(const char *p, size_t n, const char *model, struct sy_buf *out);
/* The span (quotes included) of the string value of that top-level "model"
 * in the object p[0..n): 1, or 0 when there is none. */
int sy_xlate_model_span(const char *p, size_t n, size_t *off, size_t *len);
/* A forwarded answer (sy_xlate_forwarded: Anthropic on Anthropic) keeps its
 * bytes, except the model the client sees. Whole: c->up.up_body with its
 * model replaced. Streamed: the bytes before the end of the first event
 * (message_start) are held; then *p, *n become that event with its model
 * replaced and the bytes after it, and later pieces pass as they are.
 * Returns 1 while bytes are held (nothing to write yet). A first event over
 * 1 MB is passed on unchanged. */
void sy_xlate_fwd_body(struct sy_call *c);
int sy_xlate_fwd_stream(struct sy_call *c, const char **p, size_t *n);
/* The stream ended while bytes were held: them, unchanged (*n 0: none). */
void sy_xlate_fwd_held(struct sy_call *c, const char **p, size_t *n);
/* A native answer's usage (Anthropic's or the Responses API's) read from p[0..n) into c's token counts. */
void sy_xlate_native_usage(struct sy_call *c, const char *p, size_t n);
/* A 2xx non-stream body in c->up.up_body -> replaced by the client's body. 0, or
 * a negative SY_E* with c->x->err set. Usage, when reported, in c->x->st.u. */
int sy_xlate_response(struct sy_call *c);
/* A >= 400 body in c->up.up_body -> c->x->err (status as the client sees it). */
void sy_xlate_error(struct sy_call *c);
/* 1 when the failed attempt was a native same-format one (POST /v1/messages
 * on Anthropic, POST /v1/responses on a Responses deployment; the by-id
 * Responses routes keep LiteLLM's errors) whose error the client gets
 * as the provider sent it: status c->x->native_status, body c->up.up_body,
 * content type c->up.up_ctype. The error was still classified as LiteLLM maps
 * it (retries, cooldowns, fallbacks); only what the client reads differs. */
static inline int sy_xlate_native_error(const struct sy_call *c)
{
    return c->x && c->x->dl && c->x->native && c->x->native_status >= 400 && !c->up.up_body_over &&
           (c->kind == SY_RK_MESSAGES || c->kind == SY_RK_RESPONSES);
}
/* An error the gateway sends a client of route kind `kind`, when its dialect
 * has an error shape of its own: the JSON body into out, and 1. 0: the
 * OpenAI error object (the caller writes it). */
int sy_xlate_client_error(int kind, int status, const char *message, struct sy_buf *out);
/* An error in the middle of a translated stream, as the client's dialect
 * writes it (an Anthropic `error` event, Responses' response.failed) into
 * out, and 1. 0: the caller writes an OpenAI error frame and [DONE]. */
int sy_xlate_stream_error(struct sy_call *c, int status, const char *message, struct sy_buf *out);

/* A health-check request for translated deployment d (router/health.c):
 * the OpenAI probe body[0..n) encoded by d's adapter into malloc'd url,
 * header lines and body. 0, or a negative SY_E* with err filled. */
int sy_xlate_probe(struct sy_worker *w, const struct sy_drt *d, int embed, const char *body, size_t n, char **url,
                   char **hdrs, size_t *hlen, char **obody, size_t *olen, char *err, size_t errlen);

/* The call's request was replaced (sy_call_redo): what was translated or
 * parsed from the old one is dropped, so the next attempt starts from the
 * new body (xlate.c). */
void sy_xlate_redo(struct sy_call *c);

/* Relaunch an attempt whose OAuth token arrived (proxy.c). */
void sy_proxy_relaunch(struct sy_call *c);

/* OAuth2 tokens for SY_CAP_OAUTH deployments (oauth.c): copies the current
 * token of pc's service account into tok and returns 1; 0 while a fetch runs
 * (ask again shortly); -1 with err filled when fetching failed. A token near
 * its expiry is refreshed in the background while still being served. */
int sy_oauth_token(struct sy_worker *w, const struct sy_pconf *pc, char *tok, size_t cap, char *err, size_t errlen);

#endif
