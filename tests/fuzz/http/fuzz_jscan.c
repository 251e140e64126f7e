/* fuzz_jscan.c - libFuzzer harness for the request-body scan (gateway/jscan.c):
 * never crashes, and its verdict agrees with json-c's strict parser on
 * which inputs are valid JSON. Spans it reports stay inside the input. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/jscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sy_jscan s;
    const char *p = (const char *)data;
    int rc = sy_jscan(p, size, &s);
    if (rc == 0) {
        struct sy_jspan *sp[] = {&s.model, &s.stream, &s.stream_options, &s.input, &s.messages, &s.prompt};
        for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++)
            if (sp[i]->type && sp[i]->off + sp[i]->len > size)
                abort();
        if (s.model.type == 's') {
            char out[512];
            sy_jstr_decode(p + s.model.off, s.model.len, out, sizeof out);
        }
        if (s.stream_options.type == 'o')
            sy_jscan_member(p, s.stream_options, "include_usage");
        /* json-c (strict) must accept what we accept, unless it hits its own depth limit */
        json_tokener *tok = json_tokener_new_ex(SY_JSCAN_MAX_DEPTH + 2);
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        json_object *o = json_tokener_parse_ex(tok, p, (int)size);
        enum json_tokener_error e = json_tokener_get_error(tok);
        if (!o && e != json_tokener_success && e != json_tokener_continue && e != json_tokener_error_depth &&
            memchr(p, 0, size) == NULL)
            abort();
        if (o)
            json_object_put(o);
        json_tokener_free(tok);
    }
    return 0;
}
