/* dialect.h - the client-side formats (ingress dialects) over the internal
 * chat form.
 *
 * A client speaks one dialect; a deployment either speaks OpenAI chat
 * (OpenAI-compatible), its own format through a provider adapter
 * (providers/adapter.h), or, for some dialects, the client's dialect itself.
 * Every translated request goes through the chat form in the middle:
 *
 *   client dialect --to_chat--> chat request --adapter encode (or none)--> upstream
 *   client dialect <-from_chat-- chat answer <--adapter decode (or none)--- upstream
 *                  <-stream_chunk-- chat chunks ("data: {chunk}" payloads)
 *
 * so an attempt is (client dialect) x (deployment adapter, or none, or the
 * native shortcut), composed by gateway/xlate.c. The native shortcut: when
 * native() says the deployment speaks the dialect itself, the client's bytes
 * go up with only the model replaced, and the answer comes back as it is
 * (native_rewrite NULL) or with its ids rewritten event by event.
 *
 * A dialect is a const table of pure functions over buffers, like an adapter:
 * no I/O, no clock, no globals, no struct sy_call. Absent members mean
 * "identity": the chat dialect (chat.c) has no to_chat, from_chat or
 * stream_chunk, and the pass-through path (an OpenAI client, an
 * OpenAI-compatible deployment) never reaches the table at all.
 *
 *   dialect       file          route kinds                     native when
 *   chat          chat.c        chat, completions, embeddings   (pass-through: never consulted)
 *   messages      messages.c    /v1/messages, count_tokens      the anthropic adapter
 *   responses     responses.c   /v1/responses[/{id}]            openai, azure, xai, litellm_proxy
 *
 * Floor: this folder is a translation library at the providers' floor (it
 * includes providers/ and responses/, never gateway/); the engine reaches it
 * only through these tables, picked per route kind in gateway/xlate.c.
 * Adding a dialect: a file here with its table, a line in meson.build, an
 * extern below, and its route kinds in xlate.c's dialect table.
 */
#ifndef SY_DIALECTS_DIALECT_H
#define SY_DIALECTS_DIALECT_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/buf.h"
#include "providers/adapter.h"
#include "providers/jdom.h"

enum sy_dialect_id { SY_DL_CHAT, SY_DL_MESSAGES, SY_DL_RESPONSES, SY_DL__COUNT };

/* What a translation left out of the request, for the engine to tell. */
struct sy_dl_report {
    int had_web_search; /* the request has a web search tool: the translation depends on web_search */
    char dropped[160];  /* hosted tool types dropped, comma-separated ("": none) */
};

/* The client's request and what its translation needs besides. */
struct sy_dl_in {
    const struct sy_jdoc *req; /* the client's request, parsed (node 0 the object) */
    const char *prior;         /* responses: the stored conversation before it (JSON array), or NULL */
    size_t prior_len;
    const char *id_seed;  /* responses: 32 hex digits for generated item ids */
    struct sy_buf *items; /* responses: receives this request's input items (may be NULL) */
    int web_search;       /* responses: the deployment's model searches the web (price map supports_web_search) */
    struct sy_dl_report *report; /* responses: receives what was left out (may be NULL) */
};

/* How a translated answer is named and what it echoes (whole or streamed). */
struct sy_dl_meta {
    const char *id;                   /* messages: "msg_..."; responses: the id the client sees */
    const char *model;                /* the model the client asked for */
    int64_t created_at;               /* responses: unix seconds */
    const char *id_seed;              /* responses: 32 hex digits for output item ids */
    const struct sy_jdoc *req;        /* the client's request (echoed members, long tool names); may be NULL */
    const char *previous_response_id; /* responses: as the client sent it; may be NULL */
};

struct sy_dialect {
    const char *name;
    enum sy_dialect_id id;

    /* The native shortcut: 1 when a deployment with adapter ad (NULL: an
     * OpenAI-compatible one) of the given provider (may be NULL) speaks this
     * dialect itself. NULL: never. */
    int (*native)(const struct sy_adapter *ad, const char *provider);
    /* A native answer's payload (a whole body, or one event's data) p[0..n)
     * as the client sees it, appended to out: its ids rewritten for the
     * deployment (provider, model_id). NULL: native bytes pass untouched. */
    int (*native_rewrite)(const char *p, size_t n, const char *provider, const char *model_id, struct sy_buf *out);
    /* 1: a native stream still keeps the stream state, so that an error in
     * the middle of it is written in this dialect (stream_error). */
    int native_keeps_stream;

    /* Request -> chat request JSON appended to out. 0; or SY_EINVAL (e filled
     * as a 400), SY_ENOSPC (413). NULL: the request is chat already. */
    int (*to_chat)(const struct sy_dl_in *in, struct sy_arena *a, struct sy_buf *out, struct sy_xerr *e);
    /* A chat.completion body[0..n) -> the dialect's answer appended to out.
     * 0, SY_EJSON, SY_EUPPROTO or SY_ENOSPC. NULL: the chat answer as it is. */
    int (*from_chat)(const struct sy_dl_meta *m, const char *body, size_t n, struct sy_arena *a, struct sy_buf *out);

    /* Streams: state of stream_size bytes, owned by the caller. */
    size_t stream_size;
    void (*stream_init)(void *s, const struct sy_dl_meta *m);
    /* One chat SSE data payload (a chunk JSON or "[DONE]") -> events appended
     * to out. 0 (more may follow), SY_DONE (the stream is complete), SY_EJSON /
     * SY_EUPPROTO (not a chunk: nothing written, end with stream_error),
     * SY_ENOSPC. NULL: chunks go to the client as they are. */
    int (*stream_chunk)(void *s, const char *data, size_t n, struct sy_buf *out);
    /* The upstream stream ended: the closing events. */
    void (*stream_end)(void *s, struct sy_buf *out);
    /* End the stream with an error event, unless it is already done. NULL:
     * the engine writes an OpenAI error frame and [DONE]. */
    void (*stream_error)(void *s, int status, const char *msg, size_t n, struct sy_buf *out);
    /* The whole answer a completed stream made (what a store keeps): 0, or -1
     * when it did not complete. NULL: none kept. */
    int (*stream_final)(const void *s, struct sy_buf *out);
    void (*stream_free)(void *s); /* NULL: nothing to free */

    /* An error the gateway sends this dialect's client: the JSON body for
     * status and message. NULL: the OpenAI error object the engine writes
     * (with its type, param and code). */
    void (*error)(int status, const char *msg, size_t n, struct sy_buf *out);
};

extern const struct sy_dialect sy_dialect_chat;      /* chat.c */
extern const struct sy_dialect sy_dialect_messages;  /* messages.c */
extern const struct sy_dialect sy_dialect_responses; /* responses.c */

/* A whole recorded chat answer through dialect dl: body[0..n) is a
 * chat.completion (stream 0) or the SSE text of a chat stream (stream 1,
 * "data: {chunk}\n\n" frames, [DONE]), the dialect's answer appended to out.
 * For the built-in mock model and the golden tests. The whole answer a
 * stream made is appended to final when final is not NULL and the dialect
 * keeps one (stream_final). 0; the from_chat error; or -1 when final was
 * asked for and the stream did not complete. */
int sy_dialect_answer(const struct sy_dialect *dl, const struct sy_dl_meta *m, int stream, const char *body, size_t n,
                      struct sy_arena *a, struct sy_buf *out, struct sy_buf *final);

#endif
