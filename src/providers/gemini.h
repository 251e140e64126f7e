/* gemini.h - the Gemini generateContent wire format, shared by the Google AI
 * Studio adapter (gemini.c, sy_adapter_gemini) and the Vertex AI adapter
 * (vertex.c, sy_adapter_vertex), which differ only in URLs, auth and a few
 * request fields. Everything here is a pure function over buffers.
 *
 *   encode (chat)    OpenAI chat request DOM -> generateContent body
 *   decode_response  GenerateContentResponse -> chat.completion
 *   decode_event     one SSE `data:` (a whole GenerateContentResponse) -> chunks
 *   map_error        Google's {"error":{code,message,status}} -> what the client
 *                    sees, as LiteLLM's _map_vertex_exception maps it
 *
 * The table of fields is at the top of gemini.c.
 */
#ifndef SY_GEMINI_H
#define SY_GEMINI_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "providers/adapter.h"
#include "providers/jdom.h"

/* Which API a body is for: Vertex accepts `labels`, AI Studio does not; the
 * provider name in LiteLLM's messages differs ("gemini" / "vertex_ai"). */
enum sy_gemini_api { SY_GEMINI_STUDIO = 0, SY_GEMINI_VERTEX = 1 };

/* The chat request (x->op == SY_OP_CHAT) as a generateContent body appended
 * to body (strings from x->arena). 0, or SY_EUNSUPPORTED / SY_EINVAL (a 400
 * with LiteLLM's complete text and class: unsupported parameter, bad message
 * shape) / SY_ENOSPC (413, body past its cap) with e filled; body then holds
 * garbage to discard. */
int sy_gemini_encode_body(const struct sy_xctx *x, const struct sy_jdoc *req, enum sy_gemini_api api,
                          struct sy_buf *body, struct sy_xerr *e);

/* The texts of an embeddings request (`input`: a string or a list of
 * strings), and `dimensions` (-1 when absent). 0, or SY_EINVAL with e filled
 * (token arrays, empty input, other types). texts[] are arena strings. */
struct sy_gemini_embed_in {
    const char **texts;
    size_t *lens;
    size_t n;
    int64_t dimensions;
    uint32_t task_type; /* node of `task_type` (a string), 0 when absent */
};
int sy_gemini_embed_input(const struct sy_xctx *x, const struct sy_jdoc *req, const char *provider,
                          struct sy_gemini_embed_in *in, struct sy_xerr *e);

/* generateContent response -> chat.completion in out, usage in st->u.
 * 0, or SY_EUPPROTO with st->err filled. */
int sy_gemini_decode_response(const struct sy_xctx *x, struct sy_xstate *st, const char *body, size_t n,
                              struct sy_buf *out);

/* One streamGenerateContent?alt=sse event -> chunks appended to out. Gemini
 * has no end-of-stream event (the body just ends), so this never returns
 * SY_DONE; an {"error":..} event is SY_EUPPROTO with st->err mapped. Uses
 * st->priv. */
int sy_gemini_decode_event(const struct sy_xctx *x, struct sy_xstate *st, const char *data, size_t dl,
                           struct sy_buf *out);

/* A >= 400 answer (or an error event) -> e, as LiteLLM's _map_vertex_exception:
 * e->status and e->cls the status and exception class the client sees (a
 * Vertex 403 is a 400 BadRequestError, RESOURCE_EXHAUSTED a 429 ...),
 * e->message the upstream body (what LiteLLM prints after
 * "<Provider>Exception - "). provider: "gemini", "vertex_ai" ... (kept for the
 * day a branch differs by provider). */
void sy_gemini_map_error(const char *provider, int status, const char *body, size_t n, struct sy_xerr *e);

/* Settings both adapters read the same way: drop_params (litellm_params, else
 * the global flag), additional_drop_params (a JSON list) and the default
 * output cap. 0, or -1 with err. */
int sy__gemini_conf_common(const struct sy_deployment *d, int global_drop_params, struct sy_pconf *pc, char *err,
                           size_t errlen);
/* A litellm_params value read as a boolean ("true", "True", "1", "yes"). */
int sy__gemini_truthy(const char *v);
/* Node arr (an embedding's values) as compact JSON text: an array of numbers
 * loses its whitespace (Google pretty-prints), anything else is copied raw. */
const char *sy__gemini_compact(const struct sy_jdoc *d, uint32_t arr, struct sy_arena *a, size_t *len);
/* 1 when url has a path after scheme://host (an api_base naming a full
 * resource path, as LiteLLM's custom-proxy URLs do), else 0. */
int sy__gemini_base_has_path(const char *url);

#endif
