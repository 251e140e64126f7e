/* presets.c - the table of OpenAI-compatible providers (see provider.h).
 *
 *  name          default base URL                         key env              auth      quirks
 *  ------------  ---------------------------------------  -------------------  --------  -------------------
 *  openai        https://api.openai.com/v1                OPENAI_API_KEY       Bearer
 *  azure         (api_base or AZURE_API_BASE)             AZURE_API_KEY        api-key   deployment path, api-version
 *  hosted_vllm   (api_base or HOSTED_VLLM_API_BASE)       HOSTED_VLLM_API_KEY  Bearer    key defaults to "fake-api-key"
 *  groq          https://api.groq.com/openai/v1           GROQ_API_KEY         Bearer
 *  mistral       https://api.mistral.ai/v1                MISTRAL_API_KEY      Bearer    /v1 appended if missing
 *  deepseek      https://api.deepseek.com/beta            DEEPSEEK_API_KEY     Bearer
 *  together_ai   https://api.together.xyz/v1              TOGETHERAI_API_KEY   Bearer
 *  fireworks_ai  https://api.fireworks.ai/inference/v1    FIREWORKS_AI_API_KEY Bearer
 *  openrouter    https://openrouter.ai/api/v1             OPENROUTER_API_KEY   Bearer
 *  xai           https://api.x.ai/v1                      XAI_API_KEY          Bearer
 *  lm_studio     http://localhost:1234/v1                 LM_STUDIO_API_KEY    Bearer
 *  mock          (in-process)                             -                    -         built-in mock model
 */
#include "providers/provider.h"

#include <string.h>

static const struct sy_provider table[] = {
    {.name = "openai",
     .default_base = "https://api.openai.com/v1",
     .base_env = {"OPENAI_API_BASE", "OPENAI_BASE_URL"},
     .key_env = {"OPENAI_API_KEY"},
     .auth = SY_AUTH_BEARER},
    {.name = "text-completion-openai",
     .default_base = "https://api.openai.com/v1",
     .base_env = {"OPENAI_API_BASE", "OPENAI_BASE_URL"},
     .key_env = {"OPENAI_API_KEY"},
     .auth = SY_AUTH_BEARER},
    {.name = "azure",
     .base_env = {"AZURE_API_BASE"},
     .key_env = {"AZURE_API_KEY", "AZURE_OPENAI_API_KEY"},
     .auth = SY_AUTH_API_KEY_HEADER,
     .flags = SY_PRESET_AZURE | SY_PRESET_NEEDS_BASE},
    {.name = "hosted_vllm",
     .base_env = {"HOSTED_VLLM_API_BASE"},
     .key_env = {"HOSTED_VLLM_API_KEY"},
     .default_key = "fake-api-key",
     .auth = SY_AUTH_BEARER,
     .flags = SY_PRESET_NEEDS_BASE},
    {.name = "groq",
     .default_base = "https://api.groq.com/openai/v1",
     .base_env = {"GROQ_API_BASE"},
     .key_env = {"GROQ_API_KEY"},
     .auth = SY_AUTH_BEARER},
    {.name = "mistral",
     .default_base = "https://api.mistral.ai/v1",
     .base_env = {"MISTRAL_API_BASE"},
     .key_env = {"MISTRAL_API_KEY"},
     .auth = SY_AUTH_BEARER,
     .flags = SY_PRESET_APPEND_V1},
    {.name = "deepseek",
     .default_base = "https://api.deepseek.com/beta",
     .base_env = {"DEEPSEEK_API_BASE"},
     .key_env = {"DEEPSEEK_API_KEY"},
     .auth = SY_AUTH_BEARER},
    {.name = "together_ai",
     .default_base = "https://api.together.xyz/v1",
     .base_env = {"TOGETHER_AI_API_BASE"},
     .key_env = {"TOGETHERAI_API_KEY", "TOGETHER_AI_API_KEY"},
     .auth = SY_AUTH_BEARER},
    {.name = "fireworks_ai",
     .default_base = "https://api.fireworks.ai/inference/v1",
     .base_env = {"FIREWORKS_API_BASE"},
     .key_env = {"FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"},
     .auth = SY_AUTH_BEARER},
    {.name = "openrouter",
     .default_base = "https://openrouter.ai/api/v1",
     .base_env = {"OPENROUTER_API_BASE"},
     .key_env = {"OPENROUTER_API_KEY", "OR_API_KEY"},
     .auth = SY_AUTH_BEARER},
    {.name = "xai",
     .default_base = "https://api.x.ai/v1",
     .base_env = {"XAI_API_BASE"},
     .key_env = {"XAI_API_KEY"},
     .auth = SY_AUTH_BEARER},
    {.name = "lm_studio",
     .default_base = "http://localhost:1234/v1",
     .base_env = {"LM_STUDIO_API_BASE"},
     .key_env = {"LM_STUDIO_API_KEY"},
     .auth = SY_AUTH_BEARER},
    {.name = "mock", .auth = SY_AUTH_NONE, .flags = SY_PRESET_MOCK},
};

const struct sy_provider *sy_provider_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

int sy_provider_known_unsupported(const char *name)
{
    static const char *const names[] = {
        "bedrock_converse", "sagemaker", "huggingface",   "predibase",   "replicate",  "perplexity",
        "nvidia_nim",       "cerebras",  "sambanova",     "deepinfra",   "ai21",       "watsonx",
        "databricks",       "voyage",    "nebius",        "moonshot",    "github",     "text-completion-codestral",
        "codestral",        "azure_ai",  "litellm_proxy", "openai_like", "cloudflare", NULL};
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}
