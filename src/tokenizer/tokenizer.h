/* tokenizer.h - exact tiktoken-compatible BPE token counting (cl100k_base, o200k_base).
 *
 * Ids are identical to OpenAI's tiktoken for every input byte string, including
 * invalid UTF-8. Special tokens (<|endoftext|> ...) are encoded as ordinary text,
 * as LiteLLM's token_counter does. The vocabularies are compiled into the
 * binary (no files, network or npm at run time) and parsed by sy_tok_init().
 * After init every function is thread-safe and allocation-light.
 */
#ifndef SY_TOKENIZER_H
#define SY_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

enum sy_tok_encoding { SY_TOK_CL100K = 0, SY_TOK_O200K = 1, SY_TOK__COUNT };

struct sy_tok; /* one loaded encoding */
struct sy_buf;

/* Load both vocabularies. Idempotent, thread-safe. 0 or a negative SY_E*. */
int sy_tok_init(void);
/* The loaded encoding (sy_tok_init must have succeeded). */
const struct sy_tok *sy_tok_get(enum sy_tok_encoding e);
/* "cl100k_base" / "o200k_base" -> encoding; -1 when unknown. */
int sy_tok_encoding_by_name(const char *name, size_t len);
const char *sy_tok_encoding_name(enum sy_tok_encoding e);
/* LiteLLM/tiktoken model -> encoding map: o200k for gpt-4o*, gpt-4.1*, gpt-4.5*,
 * gpt-5*, o1*, o3*, o4*, chatgpt-4o*; cl100k otherwise (gpt-4, gpt-3.5,
 * text-embedding-3-*, ada-002, every non-OpenAI model). Provider prefixes
 * ("openai/", "azure/") are ignored. */
enum sy_tok_encoding sy_tok_encoding_for_model(const char *model, size_t len);

/* Number of tokens in text. */
size_t sy_tok_count(const struct sy_tok *t, const char *text, size_t len);
/* Append the token ids of text to *ids (realloc'd; *n used, *cap allocated).
 * 0 or SY_ENOMEM. */
int sy_tok_encode(const struct sy_tok *t, const char *text, size_t len, uint32_t **ids, size_t *n, size_t *cap);
/* Append the bytes of ids to out. 0, SY_EINVAL (unknown id) or SY_ENOSPC. */
int sy_tok_decode(const struct sy_tok *t, const uint32_t *ids, size_t n, struct sy_buf *out);

/* Count the prompt tokens of an OpenAI request body (JSON) with LiteLLM's
 * token_counter rules: chat `messages` (+ tools, tool_choice), or `prompt`
 * (string or list), or embeddings `input`. Returns the count, or a negative
 * SY_E* (SY_EJSON when the body is not JSON). */
long sy_tok_count_request(const struct sy_tok *t, const char *json, size_t len);

/* POST /utils/token_counter, LiteLLM's shape. `body` is the request JSON
 * ({"model", "messages"|"prompt", optional "return_token_ids": true});
 * `model_used` is the upstream model of the deployment the group resolves to
 * (NULL when the model is not a configured group: then the request model is
 * used), `encoding_override` a deployment's model_info.tokenizer (may be NULL).
 * Writes the response JSON to out and returns the HTTP status (200, or 400
 * with an OpenAI-style error body). */
int sy_tok_counter_response(const char *body, size_t len, const char *model_used, const char *encoding_override,
                            struct sy_buf *out);
/* The same, with the deployment looked up from the request's own parse (one
 * pass over the body): resolve(ud, model, len, &model_used, &encoding_override)
 * is called once with the decoded request model and sets both (NULL when
 * unknown). Thread-safe if resolve is. */
typedef void (*sy_tok_model_resolver)(void *ud, const char *model, size_t len, const char **model_used,
                                      const char **encoding_override);
int sy_tok_counter_response_r(const char *body, size_t len, sy_tok_model_resolver resolve, void *ud,
                              struct sy_buf *out);

#endif
