/* routes.h - a record's per-tenant routes (rec->route_json, from a key's
 * metadata.logging or a team's default_team_settings), parsed by the logging
 * thread (engine.c): internal to src/logging, and fuzzed. */
#ifndef SY_LOGGING_ROUTES_H
#define SY_LOGGING_ROUTES_H

#include <stddef.h>

#include "core/arena.h"

struct sy_log_route {
    const char *name;     /* callback_name, non-empty */
    const char *vars;     /* callback_vars as JSON object text, or NULL */
    int success, failure; /* callback_type: "success", "failure", else both */
};

/* [{"callback_name","callback_type","callback_vars"}, ...] into out[0..max)
 * (strings in a); entries that are not objects or have no name are skipped.
 * How many; 0 when json is not such an array. */
size_t sy__log_routes(const char *json, struct sy_log_route *out, size_t max, struct sy_arena *a);

#endif
