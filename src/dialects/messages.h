/* messages.h - the Anthropic Messages ingress (POST /v1/messages) for models
 * served by a NON-Anthropic deployment: an Anthropic request becomes an OpenAI
 * chat request, and the OpenAI answer (a chat.completion, or its stream of
 * chunks) becomes an Anthropic message or Anthropic SSE events. (An Anthropic
 * deployment gets the client's body natively; nothing here is involved.)
 *
 *   client (Anthropic)        switchyard                          upstream (any)
 *   POST /v1/messages  --sy_msg_to_openai-->  OpenAI chat request  --> router, adapters
 *   Message JSON       <--sy_msg_from_openai--  chat.completion
 *   event: ... SSE     <--sy_msg_stream_chunk-- "data: {chunk}" payloads, [DONE]
 *   error JSON         <--sy_msg_error_*-------  OpenAI-shaped error
 *
 * The functions are pure (no I/O, no clock, no globals) and match LiteLLM's
 * adapter (llms/anthropic/experimental_pass_through/adapters) where it is
 * sensible; the wire format on the Anthropic side is the one the official SDKs
 * accept, including the streaming accumulator's strict event order. The full
 * mapping is drawn at the top of messages.c, which also holds the dialect's
 * table (sy_dialect_messages, dialects/dialect.h) over these functions: the
 * engine reaches them only through it (the native shortcut there is the
 * anthropic adapter).
 */
#ifndef SY_MESSAGES_H
#define SY_MESSAGES_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/buf.h"
#include "providers/adapter.h"
#include "providers/jdom.h"

/* Anthropic Messages request (DOM, node 0 the object) -> OpenAI
 * chat.completions request JSON appended to out. The model is kept as given;
 * stream is kept, with stream_options.include_usage:true added when streaming
 * so the usage comes back. Unknown top-level keys are ignored.
 *
 * Returns 0; or SY_EINVAL with e filled as a 400 (status 400, type
 * "invalid_request_error", an Anthropic-style message such as
 * "messages.0.content: Input should be a valid list"): a wrong shape, a server
 * or Anthropic-defined tool (web_search, bash, computer ...: they need an
 * Anthropic deployment); SY_ENOSPC when out's cap was reached (e filled, 413).
 * Scratch memory comes from a. */
int sy_msg_to_openai(const struct sy_jdoc *req, struct sy_arena *a, struct sy_buf *out, struct sy_xerr *e);

/* OpenAI chat.completion JSON body[0..n) -> Anthropic Message JSON appended to
 * out:
 *   {"id":ID,"type":"message","role":"assistant","model":MODEL,"content":[...],
 *    "stop_reason":R,"stop_sequence":null,"usage":{"input_tokens":I,
 *    "cache_creation_input_tokens":W,"cache_read_input_tokens":C,"output_tokens":O}}
 * model: what the client asked for (NULL: the upstream's "model"); msg_id: the
 * message id (NULL: the upstream's "id", as LiteLLM); req: the Anthropic request
 * the call came from, used to give back tool names longer than OpenAI's 64
 * characters (NULL: names are kept as the upstream sent them).
 * Returns 0, SY_EJSON (not JSON), SY_EUPPROTO (no choices[0].message) or
 * SY_ENOSPC (out's cap). */
int sy_msg_from_openai(const char *body, size_t n, const char *model, const char *msg_id, const struct sy_jdoc *req,
                       struct sy_arena *a, struct sy_buf *out);

/* Streaming: OpenAI chunks -> Anthropic SSE events, each written as
 * "event: <type>\ndata: <json>\n\n". Fixed-size state, no allocation kept
 * between calls (the caller owns it; no cleanup needed). */
struct sy_msgstream {
    char id[128];               /* message id */
    char model[192];            /* model reported to the client */
    const struct sy_jdoc *req;  /* Anthropic request (tool-name restoring); may be NULL */
    int started;                /* message_start written */
    int done;                   /* message_stop or an error event written: nothing follows */
    int finished;               /* the upstream's finish_reason was seen */
    int usage_final;            /* a usage object was seen with or after the finish_reason */
    int kind;                   /* open content block: 0 none, 1 text, 2 thinking, 3 tool_use */
    int index;                  /* index of the open block / of the next one when none is open */
    int ntools;                 /* tool_use blocks opened */
    int tool_idx;               /* OpenAI tool_calls index of the open tool_use block (-1: none given) */
    uint64_t tool_id_hash;      /* upstream id of the open tool call (0: none) */
    uint64_t tools_seen;        /* OpenAI tool_calls indexes 0..63 opened so far */
    char finish[16];            /* OpenAI finish_reason ("" before it is seen) */
    int refusal;                /* the upstream sent a refusal */
    int64_t prompt, completion; /* usage, OpenAI's meaning (prompt includes cache reads/writes) */
    int64_t cache_read, cache_write;
};

/* Start a stream. model: reported in message_start; msg_id: the message id
 * ("msg_..."), also the base of tool_use ids the upstream did not give; req: as
 * for sy_msg_from_openai (must outlive the stream), may be NULL. */
void sy_msg_stream_init(struct sy_msgstream *s, const char *model, const char *msg_id, const struct sy_jdoc *req);

/* One OpenAI SSE data payload (the text after "data: ": a chunk JSON or
 * "[DONE]") -> zero or more events appended to out. The first call writes
 * message_start. An {"error":{...}} payload writes an Anthropic `error` event.
 * Returns 0 (more may follow); SY_DONE when the Anthropic stream is complete
 * (message_stop or an error event written: later calls write nothing);
 * SY_EJSON / SY_EUPPROTO when data is not JSON / not a chunk (nothing
 * written: the caller ends the stream with sy_msg_stream_error); SY_ENOSPC
 * when out's cap was reached. */
int sy_msg_stream_chunk(struct sy_msgstream *s, const char *data, size_t n, struct sy_buf *out);

/* End of the upstream stream: message_start if not sent yet, close the open
 * block, message_delta and message_stop, unless the stream is already done. */
void sy_msg_stream_end(struct sy_msgstream *s, struct sy_buf *out);

/* End the stream with an error event (an upstream failure mid-stream), unless
 * it is already done. status picks the type as sy_msg_error_json. */
void sy_msg_stream_error(struct sy_msgstream *s, int status, const char *message, size_t n, struct sy_buf *out);

/* An error for an Anthropic client:
 *   {"type":"error","error":{"type":T,"message":M}}
 * T from the status: 400 invalid_request_error, 401 authentication_error,
 * 402 billing_error, 403 permission_error, 404 not_found_error, 413
 * request_too_large, 429 rate_limit_error, 504 timeout_error, 529
 * overloaded_error, others api_error. */
void sy_msg_error_json(int status, const char *message, size_t n, struct sy_buf *out);
/* Anthropic error.type for an HTTP status (as above). */
const char *sy_msg_error_type(int status);

/* The OpenAI-shaped error JSON the gateway produced ({"error":{"message",...}})
 * -> the same as sy_msg_error_json. A status of 0 is taken from the error's
 * "code" (LiteLLM writes the status there) or its "type"; a body that is not
 * such JSON is used as the message. */
void sy_msg_error_from_openai(int status, const char *body, size_t n, struct sy_buf *out);

#endif
