/* fuzz_tool_permission.c - libFuzzer harness for the tool_permission kind
 * (src/guardrails/local/tool_permission.c): the input, split at NUL bytes, is
 * litellm_params (JSON: rules, globs, regexes, templates), a tool name, its
 * arguments and a body. A config that loads is run pre_call and post_call on
 * the tool in every dialect; a rewritten body must be one JSON object (json-c
 * is the oracle), a block must carry a message. No crash, no hang (PCRE2 runs
 * with a match limit). */
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guardrails/guardrail.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    const char *part[4] = {"", "", "", ""};
    size_t k = 0, at = 0;
    for (size_t i = 0; i <= size && k < 4; i++)
        if (i == size || s[i] == 0) {
            part[k++] = s + at;
            at = i + 1;
        }
    json_object *p = json_tokener_parse(part[0]);
    struct sy_guard g = {.ops = sy_guard_kind("tool_permission"), .name = "fuzz", .modes = SY_GM_PRE | SY_GM_POST};
    char err[256];
    if (g.ops && p && json_object_is_type(p, json_type_object) && g.ops->open(&g, p, NULL, err, sizeof err) == 0) {
        struct sy_gtool t = {
            .name = part[1], .name_len = strlen(part[1]), .args = part[2], .args_len = strlen(part[2])};
        for (unsigned phase = SY_GM_PRE; phase <= SY_GM_POST; phase <<= 2)
            for (int d = SY_GD_CHAT; d <= SY_GD_RESPONSES; d++) {
                struct sy_ginput in = {.phase = phase,
                                       .dialect = (enum sy_gdialect)d,
                                       .tool = &t,
                                       .ntool = 1,
                                       .body = part[3],
                                       .body_len = strlen(part[3])};
                struct sy_gresult r = {0};
                g.ops->check(&g, &in, &r);
                if (r.verdict == SY_GV_BLOCK && !r.message)
                    abort();
                if (r.body) {
                    json_object *o = json_tokener_parse(r.body);
                    if (!o || !json_object_is_type(o, json_type_object))
                        abort();
                    json_object_put(o);
                }
                sy_gresult_free(&r);
            }
        g.ops->close(&g);
    }
    json_object_put(p);
    free(s);
    return 0;
}
