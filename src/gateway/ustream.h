/* ustream.h - the usage filter's side for the upstream stage (gateway/ustream.c).
 *
 * The filter links on every stream the upstream stage starts and keeps, in
 * its slot, what the end of the call needs: the stream's last bytes (the
 * provider's usage), the text streamed so far for counting, and the
 * include_cost_in_streaming_usage hold. These read it; on a call where it did
 * not link they see an empty stream.
 */
#ifndef SY_GATEWAY_USTREAM_H
#define SY_GATEWAY_USTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

struct sy_call;
struct sy_tok;

/* The text a completion's tokens are counted on (content, tool-call
 * arguments, completion text; Anthropic and Responses deltas once the stream
 * started) from the JSON or SSE p[0..n), appended to out. */
void sy_ustream_collect(const struct sy_call *c, const char *p, size_t n, struct sy_buf *out);
/* The tokens of the text streamed so far (the pool: may decode and count a
 * large text; the call is suspended meanwhile). */
uint64_t sy_ustream_tokens(struct sy_call *c, const struct sy_tok *t);
/* Bytes of streamed text, or of stream not yet decoded, not yet counted (the size of that job). */
size_t sy_ustream_pending(const struct sy_call *c);
/* The stream's last bytes; NULL (*n 0) when none. */
const char *sy_ustream_tail(const struct sy_call *c, size_t *n);

/* Write pass-through stream bytes to the client, in whole lines with
 * usage.cost added (only when c->out.fl_hold: else sy_resp_chunk directly);
 * returns the write queue's size. */
/* 1 when a pass-through chat answer gets the client's model name (its
 * stream goes through the hold, line by line; proxy.c rewrites a JSON body). */
int sy_ustream_echoes(const struct sy_call *c);
size_t sy_ustream_write(struct sy_call *c, const char *p, size_t n);
/* The stream ended: write a last line held without its line end. 1 when
 * something was written. */
int sy_ustream_drain(struct sy_call *c);
/* A translated stream's bytes for the client: *o itself, or (usage.cost on)
 * *o rewritten into b (free b after the write). */
void sy_ustream_costed(struct sy_call *c, const char **o, size_t *on, struct sy_buf *b);

#endif
