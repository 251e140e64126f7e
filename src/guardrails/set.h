/* set.h - a config's guardrails (set.c): LiteLLM's `guardrails:` list and the
 * legacy `litellm_settings.guardrails` form compiled once per load, and which
 * of them a call runs.
 *
 * A call runs a guardrail when it is default_on, or when the request asks for
 * it by name (`guardrails` in the body or in `metadata`: a list of names, a
 * {name: {extra_body}} map, or the legacy {name: true|false} map), or when the
 * calling key's or team's metadata.guardrails names it (LiteLLM's
 * should_run_guardrail after move_guardrails_to_metadata). A name the request
 * asks for that the config does not define is ignored, as LiteLLM does; a
 * legacy {name: false} turns a default_on group off for the request.
 */
#ifndef SY_GUARDRAILS_SET_H
#define SY_GUARDRAILS_SET_H

#include <stddef.h>

#include "guardrails/guardrail.h"

struct sy_guardset {
    struct sy_guard *g; /* n, in config order (legacy groups after the list) */
    size_t n;
    unsigned modes;  /* union of their modes */
    char *list_json; /* GET /guardrails/list */
    size_t list_len;
};

/* Compile the config's lists (JSON array texts, either may be NULL). A
 * guardrail whose kind this build lacks, or that names Python code
 * (`custom_guardrail.MyClass`), is left out with a warning through warn.
 * Returns 0 with *out (NULL when there are none), or -1 with err (a setting
 * a kind refuses, a malformed entry). */
int sy_guardset_build(const char *list_json, const char *legacy_json, int skip_system, int skip_tool,
                      const struct sy_genv *env, void (*warn)(void *ud, const char *msg), void *ud,
                      struct sy_guardset **out, char *err, size_t errlen);
void sy_guardset_free(struct sy_guardset *s);

/* Index of the guardrail named name[0..len) (the first of that name), or -1. */
int sy_guardset_find(const struct sy_guardset *s, const char *name, size_t len);

/* Which guardrails run: on[i] set for guardrail i (on has s->n bytes).
 * request / metadata / key_meta / team_meta: the request's `guardrails`
 * value, its metadata.guardrails value, and the key's and team's metadata
 * objects (JSON texts with their lengths; NULL: none). extra[i] gets the
 * request's extra_body object for guardrail i (JSON text, malloc'd) or NULL;
 * extra may be NULL. Returns how many run. */
size_t sy_guardset_select(const struct sy_guardset *s, const char *request, size_t rlen, const char *metadata,
                          size_t mlen, const char *key_meta, const char *team_meta, unsigned char *on, char **extra);

/* The name a mode bit prints as ("pre_call", ...). */
const char *sy_guard_mode_name(unsigned mode);

#endif
