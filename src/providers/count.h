/* count.h - the providers' own input-token counters, for POST
 * /v1/messages/count_tokens (stages/messages_count.c): which counter serves a
 * deployment, the request to send it and the count in its answer. Pure
 * functions over buffers, as the adapters (adapter.h): the stage passes the
 * deployment's settings, the time and any OAuth token in.
 *
 *   counter          deployments                        request                                     answer
 *   ---------------  ---------------------------------  ------------------------------------------  -----------------
 *   ANTHROPIC        anthropic/                         POST {base}/v1/messages/count_tokens,        {"input_tokens":N}
 *                                                       x-api-key, anthropic-version, the client's
 *                                                       anthropic-beta; the body with the
 *                                                       deployment's model
 *   BEDROCK          bedrock/ Anthropic models          POST {base}/model/{id}/count-tokens, SigV4   {"inputTokens":N}
 *                                                       (or the bearer key);
 *                                                       {"input":{"invokeModel":{"body":B64}}},
 *                                                       B64 the InvokeModel body: the request
 *                                                       without model, with anthropic_version
 *                                                       "bedrock-2023-05-31" and max_tokens
 *   VERTEX_CLAUDE    vertex_ai/ claude models           POST {host}/v1/projects/{p}/locations/{l}/ {"input_tokens":N}
 *                                                       publishers/anthropic/models/count-tokens
 *                                                       :rawPredict, Bearer token; the body with
 *                                                       the deployment's model
 *   GEMINI           gemini/                            the adapter's generateContent URL with       {"totalTokens":N}
 *                                                       :countTokens, its headers; body
 *                                                       {"generateContentRequest":{"model":
 *                                                       "models/M",contents,systemInstruction,tools}}
 *   VERTEX_GEMINI    vertex_ai/ other models            the same URL rewrite;                        {"totalTokens":N}
 *                                                       {contents,systemInstruction,tools}
 *   EXACT            openai/, azure/, and any           none: the built-in tokenizer is that model's own
 *                    deployment of an OpenAI model
 *   ESTIMATE         everything else                    none: sy_count_estimate
 *
 * The Anthropic body sent to the Anthropic-format counters keeps every member
 * of the client's request but those that do not change the input and that
 * the counters refuse as extra inputs (max_tokens, stream, temperature,
 * top_p, top_k, stop_sequences, metadata, service_tier), and "model", which
 * becomes the deployment's model id.
 *
 * The estimate never understates (docs/tokenizer.md): the built-in tokenizer's
 * count times SY_COUNT_FACTOR, plus SY_COUNT_PER_MSG per message and, when
 * tools are declared, Anthropic's tool-use system prompt (SY_COUNT_TOOLS).
 */
#ifndef SY_COUNT_H
#define SY_COUNT_H

#include <stddef.h>
#include <stdint.h>

#include "providers/adapter.h"
#include "providers/jdom.h"

enum sy_count_kind {
    SY_COUNT_ESTIMATE = 0,
    SY_COUNT_EXACT,
    SY_COUNT_ANTHROPIC,
    SY_COUNT_BEDROCK,
    SY_COUNT_VERTEX_CLAUDE,
    SY_COUNT_GEMINI,
    SY_COUNT_VERTEX_GEMINI,
};

#define SY_COUNT_FACTOR  1.5  /* the estimate: tokenizer count x this (rounded up) */
#define SY_COUNT_PER_MSG 4    /* ... + this per message */
#define SY_COUNT_TOOLS   346  /* ... + Anthropic's tool-use system prompt when tools are declared */
#define SY_COUNT_MAX_OUT 4096 /* Bedrock: max_tokens of the InvokeModel body when the request has none */

/* The counter of a deployment of provider (litellm_params' prefix: "anthropic",
 * "bedrock", "vertex_ai" ...) serving upstream model `model`. */
enum sy_count_kind sy_count_kind_of(const char *provider, const char *model);
/* "provider" (a provider's counter), "exact" or "estimate": the value of the
 * x-switchyard-token-count response header for a count made by kind. */
const char *sy_count_label(enum sy_count_kind kind);

/* The Anthropic-format counters. req is the client's count_tokens body (node
 * 0 the object); model the deployment's model id. Appends to o->url,
 * o->headers, o->body. x supplies the deployment's settings (x->pc), the
 * model, the time (Bedrock's SigV4 date), the OAuth token (Vertex) and the
 * client's anthropic-* header lines (x->fwd_headers: anthropic-beta and
 * anthropic-version are forwarded to Anthropic). 0, or an SY_E* with o->err
 * filled (no credentials, a body past its cap). */
int sy_count_anthropic(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o);
int sy_count_bedrock(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o);
int sy_count_vertex_claude(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o);

/* The Gemini-format counters, from what the deployment's adapter encoded for
 * a non-streamed chat call (o holds its URL, headers and generateContent
 * body): the URL's ":generateContent" becomes ":countTokens" and the body
 * the countTokens request of kind (GEMINI or VERTEX_GEMINI). 0, or SY_EINVAL
 * (not a generateContent call) / SY_ENOSPC with o->err filled. */
int sy_count_gemini(const struct sy_xctx *x, enum sy_count_kind kind, struct sy_xout *o);

/* The count in a 2xx answer of kind's counter; -1 when the body is not such
 * an answer (not JSON, the member missing, negative, not an integer). */
int64_t sy_count_parse(enum sy_count_kind kind, const char *body, size_t n);

/* Bedrock's CountTokens wants the foundation model id: "converse/" or
 * "invoke/" and a cross-region inference profile prefix ("us.", "eu.",
 * "apac.", "global." ...) dropped. Returns a pointer into model. */
const char *sy_count_bedrock_model(const char *model);

/* The estimate for a request whose tokenizer count is tokens, with nmsgs
 * messages and tools declared or not (never below tokens). */
int64_t sy_count_estimate(int64_t tokens, size_t nmsgs, int has_tools);

#endif
