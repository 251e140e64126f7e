/* oai.h - writing the OpenAI side of a translation (every adapter uses these).
 *
 * One writer for every provider keeps the client-facing shape identical
 * whichever upstream answered: field order, ids, `usage` details, the
 * finish_reason vocabulary, and LiteLLM's UnsupportedParamsError text.
 *
 * Stream chunks (each written as "data: <json>\n\n"):
 *
 *   first chunk of a choice   {"id":ID,"object":"chat.completion.chunk","created":T,"model":M,
 *                              "choices":[{"index":0,"delta":{"role":"assistant","content":""},
 *                              "finish_reason":null}]}          (written once, before anything else)
 *   text                      ...,"delta":{"content":"..."},"finish_reason":null}]}
 *   reasoning                 ...,"delta":{"reasoning_content":"..."},...
 *   tool call opens           ...,"delta":{"tool_calls":[{"index":I,"id":"..","type":"function",
 *                                "function":{"name":"..","arguments":""}}]},...
 *   tool arguments piece      ...,"delta":{"tool_calls":[{"index":I,"function":{"arguments":".."}}]},...
 *   finish                    ...,"delta":{},"finish_reason":"stop"}]}
 *   usage (include_usage)     {"id":..,...,"choices":[],"usage":{USAGE}}
 *
 * USAGE = "prompt_tokens":P,"completion_tokens":C,"total_tokens":P+C
 *         [,"prompt_tokens_details":{"cached_tokens":R}]            when cache_read or cache_write
 *         [,"completion_tokens_details":{"reasoning_tokens":Z}]     when reasoning
 *         [,"cache_read_input_tokens":R,"cache_creation_input_tokens":W] (Anthropic-origin
 *                                                                   fields LiteLLM also reports)
 */
#ifndef SY_OAI_H
#define SY_OAI_H

#include <stddef.h>

#include "core/buf.h"
#include "providers/adapter.h"

/* Stream chunks; text arguments are plain decoded UTF-8 bytes (escaped here). */
void sy_oai_chunk_text(struct sy_xstate *st, struct sy_buf *out, const char *s, size_t n);
/* The same from a JSON string literal (quotes included) already validated
 * (sy_jdom_string_len): copied as it is, never decoded and escaped again. */
void sy_oai_chunk_text_json(struct sy_xstate *st, struct sy_buf *out, const char *jstr, size_t n);
void sy_oai_chunk_reasoning(struct sy_xstate *st, struct sy_buf *out, const char *s, size_t n);
/* Opens tool call number st->ntools (returns its index) with id and name. */
int sy_oai_chunk_tool_start(struct sy_xstate *st, struct sy_buf *out, const char *id, size_t idl, const char *name,
                            size_t nl);
void sy_oai_chunk_tool_args(struct sy_xstate *st, struct sy_buf *out, int index, const char *args, size_t n);
/* finish_reason is an OpenAI value ("stop", "length", "tool_calls", "content_filter"). Once only. */
void sy_oai_chunk_finish(struct sy_xstate *st, struct sy_buf *out, const char *finish_reason);
/* The usage chunk (choices: []) from st->u. */
void sy_oai_chunk_usage(struct sy_xstate *st, struct sy_buf *out);
/* The role chunk alone (written automatically by the functions above). */
void sy_oai_chunk_role(struct sy_xstate *st, struct sy_buf *out);

/* A whole non-stream chat.completion. */
struct sy_xtool {
    const char *id, *name, *args; /* args: a JSON text (the function's arguments as a string's contents) */
    size_t idl, nl, al;
};
struct sy_xmsg {
    const char *content; /* NULL: "content":null */
    size_t content_len;
    const char *reasoning; /* NULL: no reasoning_content */
    size_t reasoning_len;
    const char *thinking_blocks_json; /* raw JSON array for "thinking_blocks" (Anthropic); may be NULL */
    size_t thinking_blocks_len;
    const struct sy_xtool *tools;
    size_t ntools;
    const char *finish_reason; /* OpenAI value */
};
/*   {"id":ID,"object":"chat.completion","created":T,"model":M,"choices":[{"index":0,
 *    "message":{"role":"assistant","content":..[,"reasoning_content":..][,"thinking_blocks":..]
 *    [,"tool_calls":[{"id":..,"type":"function","function":{"name":..,"arguments":..}}]]},
 *    "finish_reason":..}],"usage":{USAGE}} */
void sy_oai_write_response(const struct sy_xstate *st, const struct sy_xmsg *m, struct sy_buf *out);

/* An embeddings list: vec[i] is the raw JSON array text of vector i.
 *   {"object":"list","data":[{"object":"embedding","index":i,"embedding":[..]}],"model":M,
 *    "usage":{"prompt_tokens":P,"total_tokens":P}} */
void sy_oai_write_embeddings(const struct sy_xstate *st, const char *const *vec, const size_t *vec_len, size_t n,
                             struct sy_buf *out);

/* `"prompt_tokens":..` members (USAGE above) from u, without braces. */
void sy_oai_usage_members(const struct sy_xusage *u, struct sy_buf *out);

/* LiteLLM's map_finish_reason: provider value -> OpenAI value (unknown values
 * pass through lower-cased as LiteLLM does... e.g. "end_turn"->"stop",
 * "max_tokens"/"MAX_TOKENS"->"length", "tool_use"->"tool_calls",
 * "SAFETY"/"RECITATION"/...->"content_filter", "COMPLETE"->"stop"). */
const char *sy_oai_finish_reason(const char *provider_reason, size_t n);

/* The OpenAI parameter `param` (its raw JSON value) cannot be sent to this
 * provider: 1 when it is to be dropped (pc->drop_params or listed in
 * additional_drop_params), else 0 with e filled as LiteLLM's 400:
 *   "litellm.UnsupportedParamsError: <provider> does not support parameters:
 *    ['<param>'], for model=<model>. To drop these, set `litellm.drop_params=True`
 *    or for proxy:\n\n`litellm_settings:\n drop_params: true`\n" */
int sy_oai_unsupported(const struct sy_xctx *x, const char *provider, const char *param, struct sy_xerr *e);
/* 1 when param is in additional_drop_params (always dropped, even if supported). */
int sy_oai_drop_extra(const struct sy_xctx *x, const char *param);

/* Fill e (status, type from the status as LiteLLM: 400 invalid_request_error,
 * 401 authentication_error, 403 permission_denied, 404 not_found, 408 timeout,
 * 429 rate_limit_error, 5xx api_error ...) and message. */
void sy_oai_err(struct sy_xerr *e, int status, const char *message, size_t n);

#endif
