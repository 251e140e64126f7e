/* fuzz_secrets.c - libFuzzer harness for the hide_secrets kind
 * (src/guardrails/local/secrets.c): the input is a text, checked with every
 * detector in mask and in block mode. A masked text is never longer than the
 * text plus "[REDACTED]" per byte, a block carries a message, and nothing
 * crashes or hangs (prefix runs are cached, every window is bounded). */
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guardrails/guardrail.h"

static struct sy_guard mask, block;
static int ready;

static void open_one(struct sy_guard *g, const char *params)
{
    char err[256];
    json_object *p = json_tokener_parse(params);
    g->ops = sy_guard_kind("hide_secrets");
    g->name = "fuzz";
    g->modes = SY_GM_PRE;
    if (!g->ops || g->ops->open(g, p, NULL, err, sizeof err) < 0)
        abort();
    json_object_put(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) {
        open_one(&mask, "{}");
        open_one(&block, "{\"action\": \"block\"}");
        ready = 1;
    }
    char *t = malloc(size + 1);
    if (!t)
        return 0;
    memcpy(t, data, size);
    t[size] = 0;
    struct sy_gseg s = {.text = t, .len = size, .off = 1, .raw_len = size + 2};
    struct sy_ginput in = {.phase = SY_GM_PRE, .seg = &s, .nseg = 1};
    struct sy_gresult r = {0};
    mask.ops->check(&mask, &in, &r);
    int masked = r.verdict == SY_GV_MASKED;
    if (masked && (!r.repl || !r.repl[0] || strlen(r.repl[0]) > size * 11 + 10))
        abort();
    sy_gresult_free(&r);
    block.ops->check(&block, &in, &r);
    if ((r.verdict == SY_GV_BLOCK) != masked || (masked && !r.message))
        abort();
    sy_gresult_free(&r);
    free(t);
    return 0;
}
