/* usage.h - read `usage` token counts out of OpenAI response bytes without a DOM. */
#ifndef SY_USAGE_H
#define SY_USAGE_H

#include <stddef.h>
#include <stdint.h>

/* Find the last top-level-looking "usage":{...} object in p[0..n) and read
 * prompt_tokens / completion_tokens from it. Returns 1 when found. */
int sy_usage_scan(const char *p, size_t n, uint64_t *prompt, uint64_t *completion);

#endif
