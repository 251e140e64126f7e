/* provider.h - provider presets: how to reach an OpenAI-compatible upstream.
 *
 * Every provider in this table speaks OpenAI's wire format, so requests are
 * forwarded with only `model` replaced (SY_CAP_PASSTHRU in DESIGN §3); what
 * differs is a table row: default base URL, where the key comes from, which
 * header carries it, and URL quirks (Azure's deployment path and api-version).
 * Translating providers (anthropic, gemini, bedrock, ...) have their own
 * adapter files (adapter.h); sy_provider_find() returns NULL for them and
 * sy_adapter_provider() gives their row (name, SY_PRESET_XLATE).
 */
#ifndef SY_PROVIDER_H
#define SY_PROVIDER_H

#include <stddef.h>

enum sy_auth_style { SY_AUTH_BEARER, SY_AUTH_API_KEY_HEADER, SY_AUTH_NONE };

#define SY_PRESET_AZURE      0x1  /* {base}/openai/deployments/{model}/{op}?api-version=V */
#define SY_PRESET_APPEND_V1  0x2  /* append /v1 to api_base when missing (mistral, ollama) */
#define SY_PRESET_MOCK       0x4  /* answered in-process (gateway/mock.c) */
#define SY_PRESET_NEEDS_BASE 0x8  /* no default base URL: api_base or env required */
#define SY_PRESET_XLATE      0x10 /* a translating adapter (adapter.h) serves it */

struct sy_provider {
    const char *name;         /* config prefix and metric label, e.g. "groq" */
    const char *default_base; /* may be NULL with SY_PRESET_NEEDS_BASE */
    const char *base_env[2];  /* env vars consulted when api_base is absent */
    const char *key_env[2];   /* env vars consulted when api_key is absent */
    const char *default_key;  /* key used when none is configured (may be NULL) */
    enum sy_auth_style auth;
    unsigned flags;
    const char *extra_headers; /* constant header lines (may be NULL) */
};

/* Look up a provider by its config prefix; NULL when not supported (yet). */
const struct sy_provider *sy_provider_find(const char *name);
/* Names of all LiteLLM providers we know of but cannot serve yet (for messages). */
int sy_provider_known_unsupported(const char *name);

struct sy_adapter;
/* The provider row of a translating adapter (name = the adapter's, flags SY_PRESET_XLATE). */
const struct sy_provider *sy_adapter_provider(const struct sy_adapter *a);

#endif
