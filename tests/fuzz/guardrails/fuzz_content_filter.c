/* fuzz_content_filter.c - libFuzzer harness for the litellm_content_filter
 * kind (src/guardrails/local/content_filter.c): its settings (JSON, as the
 * config gives litellm_params) up to the first NUL, then the texts to check,
 * split at further NULs (one segment each). Settings that do not parse or that
 * open refuses are fine (file paths are dropped: a harness reads no files).
 * An opened filter must check any bytes without crashing or hanging, on a
 * request and on an answer: a BLOCK has LiteLLM's status and a message, a
 * MASKED verdict a replacement, and every verdict frees cleanly. */
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guardrails/guardrail.h"

static void drop_files(json_object *o)
{
    json_object *cats;
    json_object_object_del(o, "blocked_words_file");
    if (json_object_object_get_ex(o, "categories", &cats) && json_object_is_type(cats, json_type_array))
        for (size_t i = 0; i < json_object_array_length(cats); i++) {
            json_object *c = json_object_array_get_idx(cats, i);
            if (json_object_is_type(c, json_type_object))
                json_object_object_del(c, "category_file");
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t plen = nul ? (size_t)(nul - data) : size;
    json_tokener *tok = json_tokener_new();
    json_object *params = json_tokener_parse_ex(tok, (const char *)data, (int)plen);
    json_tokener_free(tok);
    if (!params || !json_object_is_type(params, json_type_object)) {
        json_object_put(params);
        return 0;
    }
    drop_files(params);
    struct sy_guard g;
    memset(&g, 0, sizeof g);
    g.ops = sy_guard_kind("litellm_content_filter");
    g.name = "fuzz";
    char err[256];
    if (!g.ops || g.ops->open(&g, params, NULL, err, sizeof err) != 0) {
        json_object_put(params);
        return 0;
    }
    json_object_put(params);

    struct sy_gseg seg[8];
    size_t nseg = 0;
    const uint8_t *p = nul ? nul + 1 : data + size, *end = data + size;
    while (p <= end && nseg < 8 && nul) {
        const uint8_t *q = memchr(p, 0, (size_t)(end - p));
        size_t len = q ? (size_t)(q - p) : (size_t)(end - p);
        memset(&seg[nseg], 0, sizeof seg[nseg]);
        seg[nseg].text = (const char *)p;
        seg[nseg].len = len;
        seg[nseg].kind = SY_GK_TEXT;
        nseg++;
        if (!q)
            break;
        p = q + 1;
    }
    for (unsigned phase = SY_GM_PRE; phase <= SY_GM_POST; phase <<= 2) {
        struct sy_ginput in = {.phase = phase, .seg = seg, .nseg = nseg};
        struct sy_gresult r;
        memset(&r, 0, sizeof r);
        g.ops->check(&g, &in, &r);
        if (r.verdict == SY_GV_BLOCK && (r.status != 400 || !r.message))
            abort();
        if (r.verdict == SY_GV_MASKED) {
            int any = 0;
            for (size_t i = 0; r.repl && i < r.nrepl; i++)
                any |= r.repl[i] != NULL;
            if (!any)
                abort();
        }
        sy_gresult_free(&r);
    }
    g.ops->close(&g);
    return 0;
}
