/* otel.h - the OpenTelemetry sink's parts that tests and the fuzzer reach
 * (the sink itself is sy_sink_otel, listed in ../sinks.c; see otel.c). */
#ifndef SY_LOGGING_SINKS_OTEL_H
#define SY_LOGGING_SINKS_OTEL_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

struct otel;
struct sy_logconf;
struct sy_logrec;
struct sy_otlp_batch;

extern const struct sy_sink_ops sy_sink_otel;

/* A W3C traceparent header (trace-context level 1). */
struct sy_traceparent {
    uint8_t trace_id[16], span_id[8];
    uint8_t flags;
};
/* 0 when s[0..n) is a valid traceparent (surrounding blanks allowed), else -1. */
int sy_otel_traceparent(const char *s, size_t n, struct sy_traceparent *tp);
/* LiteLLM's _normalize_otel_endpoint(base, "traces"), malloc'd; NULL when out of memory. */
char *sy_otel_traces_url(const char *base);

/* Tests: an instance from the environment, its URL and header lines, one
 * record's spans into a batch, and the batch's body in the instance's protocol. */
void *sy_otel_open(const struct sy_logconf *lc, char *err, size_t errlen);
void sy_otel_close(void *inst);
const char *sy_otel_url(const struct otel *o);
const char *sy_otel_headers(const struct otel *o);
void sy_otel_batch_init(const struct otel *o, struct sy_otlp_batch *b);
int sy_otel_record(const struct otel *o, struct sy_otlp_batch *b, struct sy_logrec *r);
int sy_otel_body(const struct otel *o, struct sy_otlp_batch *b, struct sy_buf *body);

#endif
