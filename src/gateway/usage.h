/* usage.h - read `usage` token counts out of OpenAI response bytes without a DOM. */
#ifndef SY_USAGE_H
#define SY_USAGE_H

#include <stddef.h>
#include <stdint.h>

/* Find the last top-level-looking "usage":{...} object in p[0..n) and read
 * prompt_tokens / completion_tokens from it. Returns 1 when found. */
int sy_usage_scan(const char *p, size_t n, uint64_t *prompt, uint64_t *completion);
/* The same, with the parts priced apart (cached, cache-write, reasoning tokens;
 * 0 when absent, each capped at its total) into *u. */
struct sy_usage;
int sy_usage_read(const char *p, size_t n, struct sy_usage *u);
/* Offset of the closing '}' of that usage object, -1 when none (or unclosed). */
long sy_usage_close(const char *p, size_t n);
/* Offsets of that object's '{' and '}'; 1 when found and closed. */
int sy_usage_span(const char *p, size_t n, size_t *open, size_t *close);

/* The number after the last occurrence of key (a quoted name, kl bytes) in
 * p[0..n), skipping spaces and the colon; -1 when no occurrence is followed by
 * a number. Anthropic and Responses usage counts in native bytes (xlate.c,
 * ptfwd.c). */
int64_t sy_usage_last_num(const char *p, size_t n, const char *key, size_t kl);
#define SY_USAGE_LAST_NUM(p, n, lit) sy_usage_last_num((p), (n), lit, sizeof(lit) - 1) /* literals only */

#endif
