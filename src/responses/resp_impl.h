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

/* ---- tools.c: chat tool calls back to the client's tools ------------------ */

/* What a chat function name stands for among the request's tools. */
struct sy__resp_tool {
    int custom;     /* a custom (freeform) tool: a custom_tool_call item */
    const char *ns; /* its namespace; NULL: none (or the default "functions") */
    size_t nsl;
    const char *name; /* the tool's own name (the chat name when not found) */
    size_t nl;
};
/* 1 when fname[0..fl) is one of req's tools as request.c flattened them, o
 * filled (strings in req or a); 0 otherwise (o names fname, no namespace). */
int sy__resp_tool_find(const struct sy_jdoc *req, const char *fname, size_t fl, struct sy_arena *a,
                       struct sy__resp_tool *o);
/* The chat function name of tool name[0..nl) of namespace ns (NULL: top
 * level): "<ns>__<name>" ("functions", "": the name), past
 * SY__RESP_MAX_TOOL_NAME characters its first 55, "_" and 8 hex digits of
 * its sha256. A string from a; *outn its length. */
#define SY__RESP_MAX_TOOL_NAME 64
const char *sy__resp_chat_name(const char *ns, size_t nsl, const char *name, size_t nl, struct sy_arena *a,
                               size_t *outn);
/* 1 for the namespace a tool keeps its bare name in: "" or "functions". */
int sy__resp_default_ns(const char *ns, size_t n);
/* A custom tool call's raw input from its chat arguments args[0..n): the
 * "input" string of the object, else the arguments as they are. */
const char *sy__resp_custom_input(const char *args, size_t n, struct sy_arena *a, size_t *outn);

/* Streamed unwrapping of {"input":"..."} (struct sy_resp_cin, zeroed to
 * start): fed the whole arguments text so far each time (p[0..n), growing),
 * it appends the newly decoded input to out. In another shape (state 3)
 * nothing more is decoded: the item's final input says what it was. 0 or
 * SY_ENOSPC. */
int sy__resp_cin_feed(struct sy_resp_cin *c, const char *p, size_t n, struct sy_buf *out);

/* ---- ids.c: base64 ------------------------------------------------------- */

/* Standard alphabet, '=' padded; out holds (n + 2) / 3 * 4 bytes. */
size_t sy__resp_b64_encode(const unsigned char *in, size_t n, char *out);
/* Either alphabet, padding optional; the length, or -1 on a bad character or
 * when out[cap] is too small. */
long sy__resp_b64_decode(const char *in, size_t n, char *out, size_t cap);

/* ---- thinking.c: thinking blocks <-> a reasoning item's encrypted_content --
 *
 *   encrypted_content = "swy-thinking-1:" base64(JSON array of the blocks)
 *   block             = {"type":"thinking","thinking":T,"signature":S}
 *                     | {"type":"redacted_thinking","data":D}
 *
 * arr is the inside of the array being built (blocks comma-separated). */
#define SY__RESP_THINK_PREFIX "swy-thinking-1:"

/* Appends chat thinking block b of d (other shapes, and a thinking block
 * without a signature, are skipped). */
void sy__resp_think_add(struct sy_buf *arr, const struct sy_jdoc *d, uint32_t b);
/* Appends one block from its parts: redacted (data[0..n)) or thinking
 * (text[0..n) decoded, sig[0..sl)). */
void sy__resp_think_add_raw(struct sy_buf *arr, int redacted, const char *text, size_t n, const char *sig, size_t sl);
/* Writes "encrypted_content":"<prefix><base64 [arr]>" when arr holds a block. */
void sy__resp_think_write(struct sy_jw *w, const struct sy_buf *arr);
/* The blocks of an encrypted_content string s[0..n) that this file wrote, as
 * the inside of a JSON array (canonical, in a); NULL when s is not ours or
 * does not decode to well-formed blocks. text (may be NULL): the thinking
 * texts appended, decoded. */
const char *sy__resp_think_read(const char *s, size_t n, struct sy_arena *a, size_t *outn, struct sy_buf *text);

#endif
