/* list.c - the response filters, in chain order: the only file that names
 * them (gateway/filter.h). A filter's hooks run in this order on each event.
 *
 * Adding one: its file in src/filters/ (a const struct sy_filter), a line
 * here, the file in src/filters/meson.build. A binary that links its own
 * definition of sy_filter_list (a test with a dummy filter) replaces this
 * file: the engine reads nothing else.
 */
#include "gateway/filter.h"

extern const struct sy_filter sy_filter_usage;           /* usage.c: stream usage, usage.cost */
extern const struct sy_filter sy_filter_cache_store;     /* cache_store.c: the response cache's store */
extern const struct sy_filter sy_filter_responses_store; /* responses_store.c: stored Responses */
extern const struct sy_filter sy_filter_log_capture;     /* log_capture.c: the answer, for the logging callbacks */

const struct sy_filter *const sy_filter_list[] = {
    &sy_filter_usage,
    &sy_filter_cache_store,
    &sy_filter_responses_store,
    &sy_filter_log_capture,
};
const size_t sy_filter_count = sizeof sy_filter_list / sizeof sy_filter_list[0];
