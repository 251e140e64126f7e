/* betas.h - the anthropic-beta values each Claude platform accepts: the one
 * table (betas.c) the adapters filter a client's anthropic-beta header with.
 *
 *   platform                 what the client's betas become
 *   -----------------------  ------------------------------------------------
 *   Anthropic                forwarded as they are (not filtered)
 *   Bedrock Converse         additionalModelRequestFields.anthropic_beta, only the
 *                            betas listed for it (bedrock.c)
 *   Bedrock InvokeModel      body anthropic_beta, only those listed (some renamed)
 *   Vertex AI (Claude)       body anthropic_beta, only those listed (anthropic.c)
 *   any other deployment     dropped (no Anthropic there)
 *
 * The lists are LiteLLM's (litellm/anthropic_beta_headers_config.json):
 * a beta not listed for a platform, unknown ones included, is left out
 * rather than sent, so a client's beta never turns into the platform's 400.
 */
#ifndef SY_PROVIDERS_BETAS_H
#define SY_PROVIDERS_BETAS_H

#include <stddef.h>

enum sy_beta_platform { SY_BETA_BEDROCK_CONVERSE, SY_BETA_BEDROCK_INVOKE, SY_BETA_VERTEX, SY_BETA__COUNT };

/* The name platform p takes for beta b[0..n) (the same name, or the
 * platform's own for it), NUL-terminated and static; NULL when p does not
 * take it. */
const char *sy_beta_for(enum sy_beta_platform p, const char *b, size_t n);

/* Every value of the anthropic-beta lines among hdrs[0..len) ("Name: v\r\n"
 * header lines, names compared without case; values comma-separated) that
 * platform p takes, as p names it, once each, in the order given: fn(name)
 * for each. Returns how many. */
size_t sy_betas_each(enum sy_beta_platform p, const char *hdrs, size_t len, void (*fn)(const char *name, void *ud),
                     void *ud);

#endif
