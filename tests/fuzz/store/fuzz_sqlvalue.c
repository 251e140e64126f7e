/* fuzz_sqlvalue.c - the store's text converters on arbitrary input: the
 * PostgreSQL array literal -> JSON converter (all three element styles), the
 * $N -> ?N rewriter, JSON -> array literal, and sy_iso_parse.
 *
 * Properties checked besides "no crash":
 *   - an array literal that converts gives valid JSON (json-c parses it);
 *   - JSON -> literal -> JSON gives back an array with the same elements;
 *   - the rewriter keeps the length up to the '$' -> '?' swaps;
 *   - a time that parses formats and parses back to the same millisecond.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "store/store.h"
#include "store/store_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    char *z = malloc(size + 1); /* the input as a C string */
    if (!z)
        return 0;
    memcpy(z, data, size);
    z[size] = 0;
    struct sy_buf b, c;
    sy_buf_init(&b, (size_t)1 << 24);
    sy_buf_init(&c, (size_t)1 << 24);

    for (int style = 0; style < 3; style++) {
        sy_buf_reset(&b);
        if (sy__pg_array_to_json(s, size, style, &b) == 0) {
            struct json_object *o = json_tokener_parse(b.p);
            if (!o || !json_object_is_type(o, json_type_array))
                abort();
            json_object_put(o);
        }
    }

    sy_buf_reset(&b);
    if (sy__sql_rewrite(s, size, &b) == 0 && b.len != size)
        abort();

    sy_buf_reset(&b);
    if (sy__json_to_pg_array(s, size, &b) == 0) {
        sy_buf_reset(&c);
        if (sy__pg_array_to_json(b.p, b.len, 0, &c) != 0)
            abort();
        struct json_object *in = strlen(z) == size ? json_tokener_parse(z) : NULL;
        struct json_object *out = json_tokener_parse(c.p);
        if (!out || !json_object_is_type(out, json_type_array))
            abort();
        if (in && json_object_is_type(in, json_type_array)) {
            size_t n = json_object_array_length(in);
            if (n != json_object_array_length(out))
                abort();
            for (size_t i = 0; i < n; i++) {
                struct json_object *x = json_object_array_get_idx(in, i), *y = json_object_array_get_idx(out, i);
                if (json_object_is_type(x, json_type_string) &&
                    (!json_object_is_type(y, json_type_string) ||
                     json_object_get_string_len(x) != json_object_get_string_len(y) ||
                     memcmp(json_object_get_string(x), json_object_get_string(y),
                            (size_t)json_object_get_string_len(x)) != 0))
                    abort();
                if (!x && y)
                    abort();
            }
        }
        json_object_put(in);
        json_object_put(out);
    }

    {
        double t = sy_iso_parse(z);
        if (t != -1) {
            char iso[32], norm[32];
            sy_iso_time(t, iso);
            double back = sy_iso_parse(iso);
            if (t > -62135596800.0 && t < 253402300799.0 && fabs(back - round(t * 1000) / 1000) > 1e-3)
                abort();
            if (sy__ts_normalise(z, norm) != 0)
                abort();
        }
    }
    free(z);
    sy_buf_free(&b);
    sy_buf_free(&c);
    return 0;
}
