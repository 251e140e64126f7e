/* anthropic.h - the Anthropic Messages API adapter (anthropic.c), and the
 * parts vertex_ai reuses for Claude on Vertex (rawPredict / streamRawPredict).
 *
 * vertex.c builds its own URL and headers (OAuth bearer, no x-api-key, no
 * anthropic-beta) and takes the body from sy_anthropic_encode_body(..., 1, ..);
 * the answer is the same Messages API format, so it calls
 * sy_adapter_anthropic.decode_response / decode_event / decode_error directly.
 *
 * Error messages (struct sy_xerr.message):
 *   encode                 the complete text the client sees, as LiteLLM's
 *                          ("litellm.BadRequestError: AnthropicException - ...",
 *                          "litellm.UnsupportedParamsError: ..."), like sy_oai_unsupported;
 *   decode_error, an       the upstream part only (what LiteLLM puts after
 *   `error` stream event,  "AnthropicException - "), with cls set to LiteLLM's class
 *   decode_response        (ContextWindowExceededError, InternalServerError ...), for the
 *                          gateway to prefix as it does for OpenAI upstream errors.
 */
#ifndef SY_ANTHROPIC_H
#define SY_ANTHROPIC_H

#include "core/buf.h"
#include "providers/adapter.h"
#include "providers/jdom.h"

/* The Messages API request body for the OpenAI chat request req (node 0 = the
 * object), appended to body. vertex=0: {"model":x->model,...}; vertex=1: no
 * "model" member, "anthropic_version":"vertex-2023-10-16" first,
 * response_format always as the forced `json_tool_call` tool, and the betas
 * the features need (prompt caching, computer use, files, MCP, effort, tool
 * search) as a body member "anthropic_beta":[..], as LiteLLM's
 * VertexAIAnthropicConfig does (Vertex gets no anthropic-beta header). Note:
 * decode_response / decode_event set st->model from the response, while
 * LiteLLM reports the deployment's model for Vertex Claude; vertex.c may set
 * it back. 0, or an SY_E*
 * (SY_EINVAL, SY_EUNSUPPORTED, SY_ENOSPC) with e filled; body then holds
 * garbage to be discarded. Strings come from x->arena. */
int sy_anthropic_encode_body(const struct sy_xctx *x, const struct sy_jdoc *req, int vertex, struct sy_buf *body,
                             struct sy_xerr *e);

/* LiteLLM's exception mapping for an Anthropic error (exception_mapping_utils.py,
 * the "anthropic" branch): upstream status and error text (the raw body, or an
 * error event's message) -> e (status the client sees, type, cls, message).
 * E.g. 529 + overloaded_error -> 500 InternalServerError; "prompt is too long"
 * -> 400 ContextWindowExceededError; 403 -> 500 APIConnectionError. */
void sy_anthropic_map_error(int status, const char *text, size_t n, struct sy_xerr *e);

#endif
