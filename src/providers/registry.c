/* registry.c - the translating adapters by config prefix (adapter.h).
 *
 *   prefix                       adapter               wire format
 *   ---------------------------  --------------------  ------------------------------------
 *   anthropic                    sy_adapter_anthropic  Messages API (/v1/messages, SSE)
 *   gemini                       sy_adapter_gemini     generateContent (SSE), batchEmbedContents
 *   vertex_ai, vertex_ai_beta    sy_adapter_vertex     Gemini on Vertex, Claude rawPredict, :predict
 *   bedrock                      sy_adapter_bedrock    Converse / ConverseStream (AWS event stream)
 *   cohere, cohere_chat          sy_adapter_cohere     v2 chat (SSE), v2 embed
 *   ollama, ollama_chat          sy_adapter_ollama     /api/chat (NDJSON), /api/embed
 */
#include <string.h>

#include "providers/adapter.h"
#include "providers/provider.h"

const struct sy_adapter *sy_adapter_find(const char *provider)
{
    static const struct {
        const char *prefix;
        const struct sy_adapter *a;
    } table[] = {
        {"anthropic", &sy_adapter_anthropic},   {"gemini", &sy_adapter_gemini},   {"vertex_ai", &sy_adapter_vertex},
        {"vertex_ai_beta", &sy_adapter_vertex}, {"bedrock", &sy_adapter_bedrock}, {"cohere", &sy_adapter_cohere},
        {"cohere_chat", &sy_adapter_cohere},    {"ollama", &sy_adapter_ollama},   {"ollama_chat", &sy_adapter_ollama},
    };
    if (!provider)
        return NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].prefix, provider) == 0)
            return table[i].a;
    return NULL;
}

const struct sy_provider *sy_adapter_provider(const struct sy_adapter *a)
{
    static const struct sy_provider rows[] = {
        {.name = "anthropic", .flags = SY_PRESET_XLATE}, {.name = "gemini", .flags = SY_PRESET_XLATE},
        {.name = "vertex_ai", .flags = SY_PRESET_XLATE}, {.name = "bedrock", .flags = SY_PRESET_XLATE},
        {.name = "cohere", .flags = SY_PRESET_XLATE},    {.name = "ollama", .flags = SY_PRESET_XLATE},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strcmp(rows[i].name, a->name) == 0)
            return &rows[i];
    return &rows[0];
}
