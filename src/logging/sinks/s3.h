/* s3.h - the S3 sink's pure parts, for its unit tests (the sink itself is
 * the const struct sy_sink_ops sy_sink_s3 / sy_sink_s3_v2 of s3.c, listed in
 * ../sinks.c).
 *
 *   sy_s3_object_key  the record's object key, as LiteLLM's get_s3_object_key
 *   sy_s3_encode_at   one record into one signed PUT, at a given time
 */
#ifndef SY_LOGGING_SINKS_S3_H
#define SY_LOGGING_SINKS_S3_H

#include <stdint.h>

#include "core/buf.h"
#include "logging/logging.h"

#define SY_S3_MAX_KEY 1024 /* S3's limit on an object key, in bytes */

/* The object key of rec for instance inst (an s3 / s3_v2 open() result),
 * appended to out (not percent-encoded). 0, or SY_ENOSPC. */
int sy_s3_object_key(const void *inst, const struct sy_logrec *rec, struct sy_buf *out);

/* rec as one PUT signed for unix time now (seconds) into *out (zeroed first;
 * the caller frees it with sy_sink_req_free). 0, or -1 (no payload, no memory:
 * nothing to free). */
int sy_s3_encode_at(void *inst, struct sy_logrec *rec, int64_t now, struct sy_sink_req *out);

#endif
