/* betas.c - the per-platform anthropic-beta table (betas.h). One row per
 * beta, one column per platform: the name the platform takes, or NULL. The
 * header scan is linear in the header lines and allocates nothing.
 */
#include "providers/betas.h"

#include <string.h>
#include <strings.h>

#define TS "tool-search-tool-2025-10-19"

static const struct {
    const char *name;
    const char *to[SY_BETA__COUNT]; /* converse, invoke, vertex */
} rows[] = {
    {"advanced-tool-use-2025-11-20", {NULL, TS, TS}},
    {"compact-2026-01-12", {NULL, "compact-2026-01-12", "compact-2026-01-12"}},
    {"compact-2026-09-04", {NULL, NULL, "compact-2026-09-04"}},
    {"computer-use-2025-01-24", {"computer-use-2025-01-24", "computer-use-2025-01-24", "computer-use-2025-01-24"}},
    {"computer-use-2025-11-24", {"computer-use-2025-11-24", "computer-use-2025-11-24", "computer-use-2025-11-24"}},
    {"context-1m-2025-08-07", {"context-1m-2025-08-07", "context-1m-2025-08-07", "context-1m-2025-08-07"}},
    {"context-management-2025-06-27", {NULL, "context-management-2025-06-27", "context-management-2025-06-27"}},
    {"dangerous-tool-use-2026-09-03", {NULL, "dangerous-tool-use-2026-09-03", "dangerous-tool-use-2026-09-03"}},
    {"effort-2025-11-24", {"effort-2025-11-24", "effort-2025-11-24", NULL}},
    {"fine-grained-tool-streaming-2025-05-14",
     {"fine-grained-tool-streaming-2025-05-14", "fine-grained-tool-streaming-2025-05-14", NULL}},
    {"interleaved-thinking-2025-05-14", {NULL, NULL, "interleaved-thinking-2025-05-14"}},
    {"mid-conversation-output-config-2026-07-01", {NULL, "mid-conversation-output-config-2026-07-01", NULL}},
    {"mid-conversation-tool-changes-2026-07-01", {NULL, "mid-conversation-tool-changes-2026-07-01", NULL}},
    {"per-turn-control-2026-07-01", {NULL, NULL, "per-turn-control-2026-07-01"}},
    {"structured-outputs-2025-11-13", {"structured-outputs-2025-11-13", NULL, NULL}},
    {"thinking-binding-controls-2026-08-01",
     {"thinking-binding-controls-2026-08-01", "thinking-binding-controls-2026-08-01",
      "thinking-binding-controls-2026-08-01"}},
    {"thinking-display-updates-2026-08-18",
     {"thinking-display-updates-2026-08-18", "thinking-display-updates-2026-08-18",
      "thinking-display-updates-2026-08-18"}},
    {TS, {NULL, TS, TS}},
    {"web-search-2025-03-05", {NULL, NULL, "web-search-2025-03-05"}},
};

const char *sy_beta_for(enum sy_beta_platform p, const char *b, size_t n)
{
    if ((unsigned)p >= SY_BETA__COUNT || !b)
        return NULL;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strlen(rows[i].name) == n && memcmp(rows[i].name, b, n) == 0)
            return rows[i].to[p];
    return NULL;
}

size_t sy_betas_each(enum sy_beta_platform p, const char *hdrs, size_t len, void (*fn)(const char *name, void *ud),
                     void *ud)
{
    const char *seen[sizeof rows / sizeof rows[0]];
    size_t ns = 0;
    const char *h = hdrs, *end = hdrs ? hdrs + len : NULL;
    while (h && h < end) {
        const char *le = memchr(h, '\n', (size_t)(end - h));
        if (!le)
            le = end;
        if ((size_t)(le - h) > 15 && strncasecmp(h, "anthropic-beta:", 15) == 0) {
            const char *v = h + 15, *ve = le;
            while (v < ve) {
                while (v < ve && (*v == ' ' || *v == '\t' || *v == ',' || *v == '\r'))
                    v++;
                const char *s = v;
                while (v < ve && *v != ',')
                    v++;
                const char *se = v;
                while (se > s && (se[-1] == ' ' || se[-1] == '\t' || se[-1] == '\r'))
                    se--;
                const char *to = se > s ? sy_beta_for(p, s, (size_t)(se - s)) : NULL;
                int dup = 0;
                for (size_t i = 0; to && i < ns; i++)
                    dup |= seen[i] == to;
                if (to && !dup && ns < sizeof seen / sizeof seen[0]) {
                    seen[ns++] = to;
                    fn(to, ud);
                }
            }
        }
        h = le + 1;
    }
    return ns;
}
