/* fuzz_betas.c - libFuzzer harness for the anthropic-beta header scan of
 * betas.h: any header lines in, for each platform. No crash; every name
 * handed out is one of the table's (non-empty, visible ASCII: it goes into a
 * JSON body) and none twice. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "providers/betas.h"

struct seen {
    const char *v[64];
    size_t n;
};

static void take(const char *name, void *ud)
{
    struct seen *s = ud;
    if (!name || !*name || s->n == 64)
        abort();
    for (const char *c = name; *c; c++)
        if (*c <= 0x20 || *c >= 0x7f)
            abort();
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], name))
            abort();
    s->v[s->n++] = name;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    for (int p = 0; p < SY_BETA__COUNT; p++) {
        struct seen s = {.n = 0};
        size_t n = sy_betas_each((enum sy_beta_platform)p, (const char *)data, size, take, &s);
        if (n != s.n)
            abort();
        const char *one = sy_beta_for((enum sy_beta_platform)p, (const char *)data, size);
        if (one && (strlen(one) == 0 || strchr(one, ',') || strchr(one, '"')))
            abort();
    }
    return 0;
}
