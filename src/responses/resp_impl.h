/* resp_impl.h - helpers shared by the files of src/responses (private to it).
 *
 * answer.c: the `response` object envelope, written by answer.c for a whole
 * answer and by stream.c for the response.created / in_progress / completed /
 * incomplete / failed events and sy_resp_stream_final. The caller writes the
 * "output" array between the two halves:
 *
 *   sy__resp_head(&w, m, &st);   {"id",...,"model":..,"output":
 *   ... the output array ...      [item, item ...]
 *   sy__resp_tail(&w, m, &st);    ,"parallel_tool_calls",...,"metadata":{}}
 *
 * Member order (what OpenAI sends, minus members it no longer documents):
 *   id, object, created_at, status, background, error, incomplete_details,
 *   instructions, max_output_tokens, model, output, parallel_tool_calls,
 *   previous_response_id, reasoning, service_tier, store, temperature, text,
 *   tool_choice, tools, top_p, truncation, usage, user, metadata
 */
#ifndef SY_RESP_IMPL_H
#define SY_RESP_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "providers/jdom.h"
#include "responses/responses.h"

/* ---- answer.c: the response envelope ------------------------------------ */

/* Responses usage (from an OpenAI chat usage object). */
struct sy__resp_usage {
    int64_t input, cached, output, reasoning, total;
};

/* What varies between the response objects of one call. */
struct sy__resp_state {
    const char *status;     /* "in_progress" | "completed" | "incomplete" | "failed" */
    const char *incomplete; /* incomplete_details.reason, NULL: null */
    const char *err_code;   /* error {"code","message"}; NULL: error null */
    const char *err_msg;
    size_t err_len;
    const struct sy__resp_usage *usage; /* NULL: usage null */
};

void sy__resp_head(struct sy_jw *w, const struct sy_resp_meta *m, const struct sy__resp_state *st);
void sy__resp_tail(struct sy_jw *w, const struct sy_resp_meta *m, const struct sy__resp_state *st);

/* An OpenAI chat usage object (node u of d; 0: none) -> Responses usage:
 * prompt_tokens, prompt_tokens_details.cached_tokens (else
 * cache_read_input_tokens), completion_tokens,
 * completion_tokens_details.reasoning_tokens, total_tokens (else the sum). */
void sy__resp_usage_read(const struct sy_jdoc *d, uint32_t u, struct sy__resp_usage *o);

/* incomplete_details.reason for a chat finish_reason f[0..n) ("length" ->
 * "max_output_tokens", "content_filter" -> "content_filter"), else NULL. */
const char *sy__resp_incomplete_reason(const char *f, size_t n);

/* Output item ids: "<prefix>_<seed>" when k < 0, else "<prefix>_<seed>_<k>". */
void sy__resp_item_id(char *out, size_t cap, const char *prefix, const char *seed, int k);

#endif
