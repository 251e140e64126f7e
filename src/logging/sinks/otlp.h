/* otlp.h - OTLP trace export requests, in protobuf and in OTLP/JSON.
 *
 * A batch of spans is built in memory (sy_otlp_span with its attributes and
 * events, strings in the batch's arena) and written as one
 * ExportTraceServiceRequest (opentelemetry-proto,
 * collector/trace/v1/trace_service.proto) with one ResourceSpans, one
 * ScopeSpans and every span of the batch:
 *   - sy_otlp_proto: the protobuf wire format, written by hand (varints,
 *     fixed64 times, length-delimited submessages whose length is put in
 *     front once the submessage is written). Fields in field-number order,
 *     proto3 defaults (0, "", empty) left out, as every protobuf encoder does.
 *   - sy_otlp_json: the OTLP/JSON mapping (protobuf's JSON mapping with the
 *     OTLP exceptions): lowerCamelCase names, trace and span ids as hex
 *     strings, enums as integers, 64-bit integers (times, intValue) as decimal
 *     strings.
 * Both are pure functions of the batch: the unit tests decode the bytes, and
 * the receiver in the tests decodes them with the official definitions.
 */
#ifndef SY_LOGGING_SINKS_OTLP_H
#define SY_LOGGING_SINKS_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/buf.h"

/* opentelemetry-proto trace/v1/trace.proto */
enum { SY_OTLP_KIND_INTERNAL = 1, SY_OTLP_KIND_SERVER = 2, SY_OTLP_KIND_CLIENT = 3 };
enum { SY_OTLP_STATUS_UNSET = 0, SY_OTLP_STATUS_OK = 1, SY_OTLP_STATUS_ERROR = 2 };
/* Span.flags: W3C trace flags in bits 0-7, then "is_remote is known" and "parent is remote". */
#define SY_OTLP_FLAG_SAMPLED       0x01u
#define SY_OTLP_FLAG_HAS_IS_REMOTE 0x100u
#define SY_OTLP_FLAG_IS_REMOTE     0x200u

enum sy_otlp_vt { SY_OTLP_STR, SY_OTLP_INT, SY_OTLP_DBL, SY_OTLP_BOOL };

struct sy_otlp_kv {
    const char *key;
    enum sy_otlp_vt t;
    const char *s; /* SY_OTLP_STR: slen bytes (UTF-8) */
    size_t slen;
    int64_t i; /* SY_OTLP_INT, SY_OTLP_BOOL (0/1) */
    double d;  /* SY_OTLP_DBL (finite) */
};

struct sy_otlp_event {
    const char *name;
    uint64_t time_ns;
    size_t a0, na; /* attributes: batch kv[a0 .. a0+na) */
};

struct sy_otlp_span {
    uint8_t trace_id[16], span_id[8], parent_id[8];
    int has_parent;
    uint32_t flags;
    const char *name;
    int kind;
    uint64_t start_ns, end_ns;
    size_t a0, na; /* attributes */
    size_t e0, ne; /* events */
    int status;
    const char *status_msg; /* NULL: none */
};

struct sy_otlp_batch {
    struct sy_arena arena; /* strings the batch owns */
    struct sy_otlp_kv *kv;
    size_t nkv, kvcap;
    struct sy_otlp_kv *ekv; /* the events' attributes */
    size_t nekv, ekvcap;
    struct sy_otlp_event *ev;
    size_t nev, evcap;
    long cur_event; /* attributes go to this event; -1: to the last span */
    struct sy_otlp_span *spans;
    size_t nspans, spancap;
    int oom; /* an allocation failed: the batch is not encoded */
    /* resource and scope */
    const struct sy_otlp_kv *resource;
    size_t nresource;
    const char *scope_name, *scope_version;
};

void sy_otlp_batch_init(struct sy_otlp_batch *b);
void sy_otlp_batch_free(struct sy_otlp_batch *b);
/* Empty it for the next batch, keeping its arrays (a sink reuses one batch). */
void sy_otlp_batch_reset(struct sy_otlp_batch *b);

/* A new span (zeroed, its attribute and event ranges start at the current
 * end); NULL when out of memory. Attributes and events added next belong to
 * the span returned last (after sy_otlp_event, to that event until
 * sy_otlp_event_end or the next span). */
struct sy_otlp_span *sy_otlp_span(struct sy_otlp_batch *b, const char *name, int kind);
/* Attributes of the current span (or event). key and s are borrowed: they must
 * live as long as the batch (literals, the records, or sy_otlp_dup). NULL s
 * adds nothing. Text that is not valid UTF-8 is written with U+FFFD for each
 * invalid sequence (protobuf strings must be UTF-8: collectors reject others). */
void sy_otlp_str(struct sy_otlp_batch *b, const char *key, const char *s);
void sy_otlp_strn(struct sy_otlp_batch *b, const char *key, const char *s, size_t n);
void sy_otlp_int(struct sy_otlp_batch *b, const char *key, int64_t v);
void sy_otlp_dbl(struct sy_otlp_batch *b, const char *key, double v); /* non-finite: left out */
void sy_otlp_bool(struct sy_otlp_batch *b, const char *key, int v);
/* Copy text into the batch's arena (for keys and values built in a scratch buffer). */
const char *sy_otlp_dup(struct sy_otlp_batch *b, const char *s, size_t n);
/* An event on the current span; its attributes follow until sy_otlp_event_end. */
void sy_otlp_event(struct sy_otlp_batch *b, const char *name, uint64_t time_ns);
void sy_otlp_event_end(struct sy_otlp_batch *b);

/* The ExportTraceServiceRequest, appended to out. 0, or -1 (out of memory, out's cap). */
int sy_otlp_proto(const struct sy_otlp_batch *b, struct sy_buf *out);
int sy_otlp_json(const struct sy_otlp_batch *b, struct sy_buf *out);

/* unix seconds -> unix nanoseconds, to the microsecond (0 for a time before 1970 or not a number) */
uint64_t sy_otlp_ns(double s);

#endif
