/* fuzz_routes.c - libFuzzer harness: a record's per-tenant routes
 * (rec->route_json: a key's metadata.logging or a team's settings), parsed by
 * the logging thread (src/logging/engine.c sy__log_routes). Must never crash;
 * every route has a non-empty name, takes successes or failures (or both),
 * and its vars, when present, are one JSON object's text. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "logging/routes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_log_route r[16];
    size_t n = sy__log_routes(s, r, 16, &a);
    if (n > 16)
        abort();
    for (size_t i = 0; i < n; i++) {
        if (!r[i].name || !r[i].name[0] || !(r[i].success || r[i].failure))
            abort();
        if (r[i].vars && (r[i].vars[0] != '{' || r[i].vars[strlen(r[i].vars) - 1] != '}'))
            abort();
    }
    sy_arena_free(&a);
    free(s);
    return 0;
}
