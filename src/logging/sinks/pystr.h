/* pystr.h - Python's str() of a JSON value, for sinks that print what LiteLLM prints.
 *
 * Two of LiteLLM's loggers turn parsed JSON back into Python text:
 *   - the Langfuse logger sends every model parameter that is not a str, int,
 *     bool or float as str(value) ("['\\n']" for stop=["\n"]);
 *   - the Datadog logger (CustomLogger.truncate_standard_logging_payload_content)
 *     measures str(messages) / str(response) / str(error_str) and, past 10,000
 *     characters, replaces the field by the first 10,000 characters of it.
 * Both see the value as json.loads() gave it, so:
 *   string   its text as is (str of a str)
 *   number   an integer as written ("-0" is 0), anything with a fraction or an
 *            exponent as repr(float) (core/pyrepr.h)
 *   true/false/null  True / False / None
 *   array    "[a, b]"; object "{'k': v}", members by repr() (strings quoted)
 * Duplicate keys keep the last value, as a dict does (jdom keeps them all: the
 * writer skips a key that appears again later in the same object).
 */
#ifndef SY_LOGGING_SINKS_PYSTR_H
#define SY_LOGGING_SINKS_PYSTR_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/buf.h"
#include "providers/jdom.h"

/* str(value of node i) appended to b. 0 or -1 (buffer failed). */
int sy_pystr_node(struct sy_buf *b, const struct sy_jdoc *d, uint32_t i, struct sy_arena *a);
/* Number of code points in UTF-8 text s[0..n) (invalid bytes count one each). */
size_t sy_pystr_len(const char *s, size_t n);
/* The byte length of the prefix of s[0..n) holding at most max code points. */
size_t sy_pystr_prefix(const char *s, size_t n, size_t max);

#endif
