/* sinks.c - the one list of logging sinks this build has.
 *
 * Each sink file under sinks/ defines one const struct sy_sink_ops; adding a
 * sink is one extern and one line in sy_sinks[] below. A config names a sink
 * by its callback name ("generic_api", "langfuse", ...); a name LiteLLM
 * accepts as an alias of another is a sink entry of its own that shares the
 * ops (or is resolved by the engine through callback_settings'
 * callback_type), so the lookup stays a plain name comparison.
 */
#include <stdlib.h>
#include <string.h>

#include "logging/logging.h"

extern const struct sy_sink_ops sy_sink_generic_api;
extern const struct sy_sink_ops sy_sink_otel;
extern const struct sy_sink_ops sy_sink_langfuse;
extern const struct sy_sink_ops sy_sink_datadog;
extern const struct sy_sink_ops sy_sink_s3, sy_sink_s3_v2;
extern const struct sy_sink_ops sy_sink_slack;

const struct sy_sink_ops *const sy_sinks[] = {
    &sy_sink_generic_api, &sy_sink_otel,  &sy_sink_langfuse, &sy_sink_datadog,
    &sy_sink_s3,          &sy_sink_s3_v2, &sy_sink_slack,
};
const size_t sy_nsinks = sizeof sy_sinks / sizeof sy_sinks[0];

const struct sy_sink_ops *sy_sink_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sy_nsinks; i++)
        if (!strcmp(sy_sinks[i]->name, name))
            return sy_sinks[i];
    return NULL;
}

void sy_sink_req_free(struct sy_sink_req *r)
{
    if (!r)
        return;
    free(r->url);
    r->url = NULL;
    sy_buf_free(&r->headers);
    sy_buf_free(&r->body);
}
