/* kinds.c - every guardrail kind this build has: the one list (guardrail.h).
 *
 * Adding a kind: its file in local/ or services/ with one const struct
 * sy_guard_ops, one extern and one line here, its file in that folder's
 * meson.build. */
#include <string.h>

#include "guardrails/guardrail.h"

/* in process (local/) */
extern const struct sy_guard_ops sy_guard_content_filter;
extern const struct sy_guard_ops sy_guard_prompt_injection;
extern const struct sy_guard_ops sy_guard_pii_masking;
extern const struct sy_guard_ops sy_guard_hide_secrets;
extern const struct sy_guard_ops sy_guard_tool_permission;

/* services (services/) */
extern const struct sy_guard_ops sy_guard_generic_api, sy_guard_openai_moderation, sy_guard_presidio, sy_guard_lakera,
    sy_guard_lakera_ai;
extern const struct sy_guard_ops sy_guard_aporia;
extern const struct sy_guard_ops sy_guard_bedrock;
extern const struct sy_guard_ops sy_guard_azure_text_moderations;
extern const struct sy_guard_ops sy_guard_azure_prompt_shield;
extern const struct sy_guard_ops sy_guard_ibm_guardrails;

/* one kind a line */
/* clang-format off */
const struct sy_guard_ops *const sy_guard_kinds[] = {
    &sy_guard_generic_api,
    &sy_guard_openai_moderation,
    &sy_guard_presidio,
    &sy_guard_lakera,
    &sy_guard_lakera_ai,
    &sy_guard_content_filter,
    &sy_guard_prompt_injection,
    &sy_guard_aporia,
    &sy_guard_bedrock,
    &sy_guard_azure_text_moderations,
    &sy_guard_azure_prompt_shield,
    &sy_guard_ibm_guardrails,
    &sy_guard_pii_masking,
    &sy_guard_hide_secrets,
    &sy_guard_tool_permission,
    NULL,
};
/* clang-format on */

const struct sy_guard_ops *sy_guard_kind(const char *name)
{
    for (size_t i = 0; name && sy_guard_kinds[i]; i++)
        if (!strcmp(sy_guard_kinds[i]->name, name))
            return sy_guard_kinds[i];
    return NULL;
}
