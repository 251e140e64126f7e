/* responses.h - the OpenAI Responses API (POST /v1/responses) for models
 * served by deployments that do not speak it: a Responses request becomes an
 * OpenAI chat request, and the chat answer (a chat.completion, or its stream
 * of chunks) becomes a `response` object or the Responses event stream.
 * (OpenAI, Azure, xAI and litellm_proxy deployments get the client's body
 * natively, as in LiteLLM; nothing here is involved then, except ids.c.)
 *
 *   client (Responses)          switchyard                            upstream (any)
 *   POST /v1/responses  --sy_resp_to_openai-->   chat request   --> router, adapters
 *   response JSON       <--sy_resp_from_openai-- chat.completion
 *   event: ... SSE      <--sy_resp_stream_chunk-- "data: {chunk}" payloads, [DONE]
 *
 * The functions are pure (no I/O, no clock, no globals) and follow LiteLLM's
 * litellm/responses/litellm_completion_transformation/ (transformation.py,
 * streaming_iterator.py), with the event sequence and field set the official
 * openai SDK's stream accumulator and the Vercel AI SDK accept. The mapping
 * is drawn as tables at the top of request.c, answer.c and stream.c.
 *
 * Files: request.c (request -> chat), answer.c (chat.completion -> response),
 *        stream.c (chunks -> events), ids.c (LiteLLM's encoded response ids),
 *        store.c (stored conversations, store.h).
 */
#ifndef SY_RESPONSES_H
#define SY_RESPONSES_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/buf.h"
#include "providers/adapter.h"
#include "providers/jdom.h"

/* ---- request (request.c) ---------------------------------------------------
 *
 * Responses request (DOM, node 0 the object) -> OpenAI chat.completions
 * request JSON appended to out. Handled members:
 *   model (kept as given), input (string, or a list of items: messages with
 *   string or input_text / input_image / input_file / output_text / refusal
 *   parts; function_call; function_call_output; custom_tool_call[_output];
 *   reasoning and hosted tools' items (dropped: chat has no place for them);
 *   item_reference (400)), instructions (a first system message), tools
 *   (function, namespace and custom tools -> chat tools; hosted tools dropped,
 *   web search maybe mapped: sy_resp_to_chat below), tool_choice
 *   ("auto"|"none"|"required"|{type:function|custom,name}; a hosted tool: auto),
 *   parallel_tool_calls, text.format (json_schema -> response_format
 *   {type:json_schema,json_schema:{name,schema,strict}}; json_object; text),
 *   reasoning.effort -> reasoning_effort, max_output_tokens -> max_tokens,
 *   temperature, top_p, user, metadata (kept as metadata), stream (kept, with
 *   stream_options.include_usage:true added), top_logprobs, seed (kept),
 *   store / previous_response_id / truncation / include / background /
 *   service_tier (not forwarded).
 * prior[0..pn): the conversation before this request, a JSON array of
 *   Responses items (earlier turns' input items and output items, in order;
 *   store.h), converted to chat messages placed after the instructions and
 *   before this request's input. NULL/0: none.
 * items (may be NULL): receives this request's input as a JSON array of
 *   Responses input items (a string input becomes one
 *   {"type":"message","role":"user","content":[{"type":"input_text","text":...}]}),
 *   each item given an "id" when it has none ("msg_<hex>" from id_seed):
 *   what GET /v1/responses/{id}/input_items lists and what a later
 *   previous_response_id continues from.
 * id_seed: 32 hex digits (the call id without dashes) for generated ids.
 *
 * Returns 0; SY_EINVAL with e filled as a 400 (type "invalid_request_error",
 * param naming the member, e.g. "input" / "tools"); SY_ENOSPC when a cap was
 * reached (e filled, 413). Scratch memory comes from a. */
int sy_resp_to_openai(const struct sy_jdoc *req, const char *prior, size_t pn, const char *id_seed, struct sy_arena *a,
                      struct sy_buf *out, struct sy_buf *items, struct sy_xerr *e);

/* The same, with what depends on the deployment and what was left out:
 *   namespace tools -> function tools "<namespace>__<name>" ("functions":
 *     the bare name); custom tools -> function tools with one required
 *     string parameter "input" (the grammar appended to the description);
 *   web_search / web_search_preview[_*] -> web_search_options when
 *     tx->web_search, else dropped; every other hosted tool type
 *     (tool_search, image_generation, file_search, mcp, ...) dropped; a
 *     tool_choice naming one becomes "auto";
 *   function_call items with a namespace -> "<namespace>__<name>";
 *     custom_tool_call -> a tool call with arguments {"input":...};
 *     custom_tool_call_output -> a tool message; hosted tool call items
 *     (web_search_call, tool_search_call / _output, image_generation_call,
 *     file_search_call, code_interpreter_call) dropped.
 * tx may be NULL (web search off, drops not reported). sy_resp_to_openai is
 * this with tx NULL. */
struct sy_resp_tx {
    int web_search;     /* in: the deployment's model searches the web (price map supports_web_search) */
    int had_web_search; /* out: the request has a web_search tool (the translation depends on web_search) */
    char dropped[160];  /* out: the dropped hosted tool types, comma-separated, each once ("": none) */
};
/* 1 when req has a web search tool: the one part of the translation that
 * depends on the deployment (sy_resp_tx.web_search). */
int sy_resp_wants_web_search(const struct sy_jdoc *req);
int sy_resp_to_chat(const struct sy_jdoc *req, const char *prior, size_t pn, const char *id_seed, struct sy_resp_tx *tx,
                    struct sy_arena *a, struct sy_buf *out, struct sy_buf *items, struct sy_xerr *e);

/* What the response object echoes and how it is named. */
struct sy_resp_meta {
    const char *id;                   /* the response id the client sees ("resp_..."; ids.c) */
    const char *model;                /* model reported (the client's model group) */
    int64_t created_at;               /* unix seconds */
    const char *id_seed;              /* 32 hex digits: output item ids "msg_<seed>", "fc_<seed>_<n>", "rs_<seed>" */
    const struct sy_jdoc *req;        /* the Responses request: instructions, tools, tool_choice, temperature,
                                       * top_p, max_output_tokens, metadata, parallel_tool_calls, reasoning,
                                       * text, store, user, previous_response_id are echoed from it (LiteLLM's
                                       * defaults when absent); may be NULL */
    const char *previous_response_id; /* as the client sent it (may be NULL) */
};

/* ---- whole answers (answer.c) ------------------------------------------------
 *
 * OpenAI chat.completion JSON body[0..n) -> a Responses `response` object
 * appended to out:
 *   {"id","object":"response","created_at","status":"completed"|"incomplete",
 *    "error":null,"incomplete_details":null|{"reason":"max_output_tokens"|"content_filter"},
 *    "instructions","max_output_tokens","model","output":[...],"parallel_tool_calls",
 *    "previous_response_id","reasoning":{"effort","summary":null},"store","temperature",
 *    "text":{"format":...},"tool_choice","tools":[...],"top_p","truncation":"disabled",
 *    "usage":{"input_tokens","input_tokens_details":{"cached_tokens"},"output_tokens",
 *             "output_tokens_details":{"reasoning_tokens"},"total_tokens"},
 *    "user","metadata":{}}
 * output items, in order: a `reasoning` item when the message has
 * reasoning_content ({"type":"reasoning","id","summary":[{"type":"summary_text","text"}]}) or
 * signed thinking_blocks (then with "encrypted_content" carrying them, thinking.c),
 * a `message` item when it has content or a refusal
 * ({"type":"message","id","status":"completed","role":"assistant",
 *   "content":[{"type":"output_text","text","annotations":[]}|{"type":"refusal","refusal"}]}),
 * one `function_call` item per tool call
 * ({"type":"function_call","id","call_id","name","arguments","status":"completed"};
 * "namespace" after the name for a namespaced tool's call), or a
 * `custom_tool_call` item for a custom tool's
 * ({"type":"custom_tool_call","id":"ctc_...","call_id","name","input","status"}).
 * Returns 0, SY_EJSON (not JSON), SY_EUPPROTO (no choices[0].message) or
 * SY_ENOSPC. */
int sy_resp_from_openai(const char *body, size_t n, const struct sy_resp_meta *m, struct sy_arena *a,
                        struct sy_buf *out);

/* The output items of a response object (body[0..n)) as a JSON array appended
 * to out ("[]" when none): what the stored conversation keeps after the
 * input items. 0, or SY_EJSON. */
int sy_resp_output_items(const char *body, size_t n, struct sy_arena *a, struct sy_buf *out);

/* ---- streams (stream.c) -----------------------------------------------------
 *
 * OpenAI chunks -> Responses events, each written as
 *   "event: <type>\ndata: <json with \"type\" and \"sequence_number\">\n\n"
 * sequence_number counts from 0 across the stream. The order:
 *   response.created, response.in_progress (both with the response, status
 *   "in_progress", output []);
 *   per output item, in the order the upstream opens them:
 *     reasoning: response.output_item.added, response.reasoning_summary_part.added,
 *       response.reasoning_summary_text.delta..., response.reasoning_summary_text.done,
 *       response.reasoning_summary_part.done, response.output_item.done;
 *     message: response.output_item.added, response.content_part.added,
 *       response.output_text.delta (with "item_id","output_index","content_index",
 *       "delta","logprobs":[]) ..., response.output_text.done, response.content_part.done,
 *       response.output_item.done;
 *     function_call (per tool_calls index): response.output_item.added (arguments ""),
 *       response.function_call_arguments.delta ..., response.function_call_arguments.done,
 *       response.output_item.done;
 *     custom_tool_call (a call of a custom tool): response.output_item.added (input ""),
 *       response.custom_tool_call_input.delta ..., response.custom_tool_call_input.done,
 *       response.output_item.done;
 *   an item is closed when the next one opens or at the finish;
 *   response.completed (or response.incomplete when finish_reason is "length"
 *   / "content_filter") with the whole response as sy_resp_from_openai would
 *   write it, usage included (from the chunk that carries it).
 * Text is passed through as the upstream split it; a multi-byte UTF-8
 * character split across chunks is never split inside a delta's JSON string
 * (the JSON parser of the chunk already holds whole characters).
 *
 * The state grows with the answer (the accumulated text and arguments are
 * needed for the .done events and response.completed): free it with
 * sy_resp_stream_free. */
/* Streamed unwrapping of a custom tool's {"input":"..."} (tools.c). */
struct sy_resp_cin {
    int state; /* 0 before the string, 1 in it, 2 after it, 3 another shape */
    size_t at; /* offset of the arguments text scanned up to */
};

struct sy_respstream {
    struct sy_resp_meta m; /* copied at init; strings must outlive the stream */
    char id[256], model[256], seed[40], prev[256];
    int64_t seq;     /* next sequence_number */
    int started;     /* response.created written */
    int done;        /* response.completed / .incomplete / .failed written */
    int open;        /* open item: 0 none, 1 message, 2 function_call, 3 reasoning, 4 custom_tool_call */
    int nout;        /* output items opened so far (output_index of the next) */
    int tool_idx;    /* chat tool_calls index of the open function_call (-1 none) */
    char finish[16]; /* chat finish_reason ("" before it is seen) */
    int64_t prompt, completion, cached, reasoning_tokens; /* usage (-1: not seen) */
    int have_usage;
    struct sy_buf text;           /* the open item's accumulated text / arguments */
    struct sy_buf items;          /* the closed items' JSON, comma-separated, for response.completed */
    char call_id[128], name[256]; /* the open function_call's */
    const struct sy_jdoc *req;    /* m.req */
    /* (stream.c's bookkeeping) */
    char item_id[128];     /* the open item's id */
    int has_prev;          /* m.previous_response_id was given (prev holds it) */
    int finished;          /* the finish_reason was seen */
    int usage_final;       /* a usage object was seen with or after the finish_reason */
    int failed;            /* the stream ended with response.failed */
    int nmsg, nrs, ntools; /* message / reasoning / function_call items opened */
    int refusal;           /* the open message's content part is a refusal */
    int call_up;           /* the open function_call's call_id came from the upstream */
    uint64_t tools_seen;   /* chat tool_calls indexes 0..63 opened so far */
    int64_t total_tokens;  /* usage.total_tokens (or the sum) */
    /* the open call's client tool (a namespaced function, a custom tool) */
    char ns[256];           /* its namespace ("": none) */
    struct sy_resp_cin cin; /* custom tool: the input decoded so far from the arguments (text) */
    struct sy_buf input;    /* custom tool: that input (deltas sent), then the final one */
    /* the open reasoning item's thinking blocks (thinking.c): the finished
     * ones, and the text / signature of the one still arriving */
    struct sy_buf think, tk_text, tk_sig;
};

/* Start a stream (nothing written yet). */
void sy_resp_stream_init(struct sy_respstream *s, const struct sy_resp_meta *m);
void sy_resp_stream_free(struct sy_respstream *s);

/* One OpenAI SSE data payload (the text after "data: ": a chunk JSON or
 * "[DONE]") -> zero or more events appended to out. The first call writes
 * response.created and response.in_progress. An {"error":{...}} payload
 * writes response.failed (with the error's code and message). Returns 0 (more
 * may follow); SY_DONE when the stream is complete (later calls write
 * nothing); SY_EJSON / SY_EUPPROTO when data is not JSON / not a chunk
 * (nothing written: the caller ends the stream with sy_resp_stream_error);
 * SY_ENOSPC when out's cap was reached. */
int sy_resp_stream_chunk(struct sy_respstream *s, const char *data, size_t n, struct sy_buf *out);

/* End of the upstream stream: created/in_progress if not sent yet, close the
 * open item, response.completed (or .incomplete), unless already done. */
void sy_resp_stream_end(struct sy_respstream *s, struct sy_buf *out);

/* End the stream with an `error` event and response.failed ({"code","message"}),
 * unless it is already done. */
void sy_resp_stream_error(struct sy_respstream *s, int status, const char *message, size_t n, struct sy_buf *out);

/* After the stream is done: the final response object (what response.completed
 * carried) appended to out, for the conversation store. 0, or -1 when the
 * stream did not complete. */
int sy_resp_stream_final(const struct sy_respstream *s, struct sy_buf *out);

/* ---- ids (ids.c) ---------------------------------------------------------------
 *
 * LiteLLM's managed response ids (litellm/responses/utils.py,
 * ResponsesAPIRequestUtils._build_responses_api_response_id):
 *   "resp_" + base64("litellm:custom_llm_provider:{provider};model_id:{model_id};response_id:{id}")
 * so that GET/DELETE and previous_response_id reach the deployment that made
 * the response. Translated responses use the same form with the inner id
 * "resp_<32 hex>" (the key of the stored conversation). */

/* Encode into out (NUL-terminated). 0, or -1 when cap is too small. */
int sy_resp_id_encode(const char *provider, const char *model_id, const char *inner, size_t inner_len, char *out,
                      size_t cap);

struct sy_resp_id {
    char provider[64];
    char model_id[256];
    char inner[512]; /* the upstream's / store's id; the whole input when not an encoded id */
    int encoded;     /* 1 when the input was one of our (LiteLLM's) encoded ids */
};
/* Decode id[0..n). Always fills d (an id that is not encoded is returned
 * whole in inner, encoded = 0, as LiteLLM). 0, or -1 when id is not ours and
 * too long for inner. */
int sy_resp_id_decode(const char *id, size_t n, struct sy_resp_id *d);

/* Rewrite every response id in a native Responses payload p[0..n) (a
 * response object, or one SSE event's data: the "id" member of the object
 * whose "object" is "response", i.e. the top level or the "response" member)
 * from the upstream's id to its encoded form; everything else byte for byte.
 * Appends to out. Returns the number of ids rewritten (0: out holds p as is). */
int sy_resp_ids_rewrite(const char *p, size_t n, const char *provider, const char *model_id, struct sy_buf *out);

/* ---- replay (replay.c) -----------------------------------------------------
 *
 * A whole `response` object resp[0..n) appended to out as the Responses event
 * stream OpenAI sends for it ("event: T\ndata: {...}\n\n" frames, sequence
 * numbers from 0; the events per item type are listed at the top of
 * replay.c). For a stage that held the answer whole and owes the client a
 * stream. 0, SY_EJSON (not a response object), SY_ENOSPC (out's cap). */
int sy_resp_sse_replay(const char *resp, size_t n, struct sy_arena *a, struct sy_buf *out);

/* ---- MCP tool loop items (mcpitems.c) ----------------------------------------
 *
 * For stages/mcp_tools.c: the ids of mcp_approval_request items, which carry
 * the call they ask about ("mcpr_" + base64 of {call_id, tool, arguments,
 * server_label}), and a CallToolResult as the text the model gets. */
struct sy_resp_mcp_call {
    const char *call_id, *name, *args, *label;
    size_t call_id_len, name_len, args_len, label_len;
};
/* k's approval request id appended to out (NUL-terminated). 0 or SY_ENOSPC. */
int sy_resp_mcp_approval_id(const struct sy_resp_mcp_call *k, struct sy_buf *out);
/* An approval request id back into its call (strings decoded, NUL-terminated,
 * in a). 0, or SY_EINVAL: not an id sy_resp_mcp_approval_id made. */
int sy_resp_mcp_approval_decode(const char *id, size_t n, struct sy_arena *a, struct sy_resp_mcp_call *k);
/* CallToolResult json[0..n) as the model's text appended to out (LiteLLM's
 * _parse_mcp_result: text parts joined by a space, other parts named,
 * "Tool executed successfully" when nothing is left); *is_error its isError.
 * 0 or SY_ENOSPC. */
int sy_resp_mcp_result_text(const char *json, size_t n, struct sy_arena *a, struct sy_buf *out, int *is_error);

#endif
