/* otlp.c - OTLP trace export requests: the span batch, its protobuf and its
 * OTLP/JSON (see otlp.h).
 *
 * Protobuf by hand: a tag is (field << 3 | wire type) as a varint, a
 * submessage is its tag, its length and its fields. Each message has a size
 * function next to its writer (span_size / pb_span, ...), so the whole
 * request's length is known before the first byte is written and the bytes
 * go front to back into one allocation (sy_otlp_proto).
 *
 * Field numbers (opentelemetry-proto v1):
 *   ExportTraceServiceRequest  1 resource_spans
 *   ResourceSpans              1 resource  2 scope_spans
 *   Resource                   1 attributes
 *   ScopeSpans                 1 scope  2 spans
 *   InstrumentationScope       1 name  2 version
 *   Span                       1 trace_id  2 span_id  4 parent_span_id  5 name
 *                              6 kind  7 start_time_unix_nano (fixed64)
 *                              8 end_time_unix_nano (fixed64)  9 attributes
 *                              11 events  15 status  16 flags (fixed32)
 *   Span.Event                 1 time_unix_nano (fixed64)  2 name  3 attributes
 *   Status                     2 message  3 code
 *   KeyValue                   1 key  2 value
 *   AnyValue (oneof)           1 string_value  2 bool_value  3 int_value
 *                              4 double_value
 * A oneof member is written even when it holds its default ("" or 0 or
 * false): its presence is the value.
 */
#include "logging/sinks/otlp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/hex.h"
#include "core/pyrepr.h"
#include "core/utf8.h"

void sy_otlp_batch_init(struct sy_otlp_batch *b)
{
    memset(b, 0, sizeof *b);
    sy_arena_init(&b->arena);
    b->cur_event = -1;
}

void sy_otlp_batch_free(struct sy_otlp_batch *b)
{
    free(b->kv);
    free(b->ekv);
    free(b->ev);
    free(b->spans);
    sy_arena_free(&b->arena);
}

void sy_otlp_batch_reset(struct sy_otlp_batch *b)
{
    b->nkv = b->nekv = b->nev = b->nspans = 0;
    b->oom = 0;
    b->cur_event = -1;
    sy_arena_reset(&b->arena);
}

static int grow(void **p, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 16;
    void *q = realloc(*p, nc * sz);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

struct sy_otlp_span *sy_otlp_span(struct sy_otlp_batch *b, const char *name, int kind)
{
    if (b->oom || grow((void **)&b->spans, &b->spancap, b->nspans, sizeof *b->spans)) {
        b->oom = 1;
        return NULL;
    }
    struct sy_otlp_span *s = &b->spans[b->nspans++];
    memset(s, 0, sizeof *s);
    s->name = name;
    s->kind = kind;
    s->a0 = b->nkv;
    s->e0 = b->nev;
    b->cur_event = -1;
    return s;
}

const char *sy_otlp_dup(struct sy_otlp_batch *b, const char *s, size_t n)
{
    return sy_arena_strndup(&b->arena, s, n);
}

static struct sy_otlp_kv *add_kv(struct sy_otlp_batch *b, const char *key)
{
    if (b->oom || !b->nspans)
        return NULL;
    struct sy_otlp_kv *kv;
    if (b->cur_event >= 0) {
        if (grow((void **)&b->ekv, &b->ekvcap, b->nekv, sizeof *b->ekv)) {
            b->oom = 1;
            return NULL;
        }
        kv = &b->ekv[b->nekv++];
        b->ev[b->cur_event].na++;
    } else {
        if (grow((void **)&b->kv, &b->kvcap, b->nkv, sizeof *b->kv)) {
            b->oom = 1;
            return NULL;
        }
        kv = &b->kv[b->nkv++];
        b->spans[b->nspans - 1].na++;
    }
    memset(kv, 0, sizeof *kv);
    kv->key = key;
    return kv;
}

void sy_otlp_strn(struct sy_otlp_batch *b, const char *key, const char *s, size_t n)
{
    if (!s)
        return;
    struct sy_otlp_kv *kv = add_kv(b, key);
    if (kv) {
        kv->t = SY_OTLP_STR;
        kv->s = s;
        kv->slen = n;
    }
}

void sy_otlp_str(struct sy_otlp_batch *b, const char *key, const char *s)
{
    if (s)
        sy_otlp_strn(b, key, s, strlen(s));
}

void sy_otlp_int(struct sy_otlp_batch *b, const char *key, int64_t v)
{
    struct sy_otlp_kv *kv = add_kv(b, key);
    if (kv) {
        kv->t = SY_OTLP_INT;
        kv->i = v;
    }
}

void sy_otlp_dbl(struct sy_otlp_batch *b, const char *key, double v)
{
    if (!isfinite(v))
        return;
    struct sy_otlp_kv *kv = add_kv(b, key);
    if (kv) {
        kv->t = SY_OTLP_DBL;
        kv->d = v;
    }
}

void sy_otlp_bool(struct sy_otlp_batch *b, const char *key, int v)
{
    struct sy_otlp_kv *kv = add_kv(b, key);
    if (kv) {
        kv->t = SY_OTLP_BOOL;
        kv->i = v != 0;
    }
}

void sy_otlp_event(struct sy_otlp_batch *b, const char *name, uint64_t time_ns)
{
    if (b->oom || !b->nspans)
        return;
    if (grow((void **)&b->ev, &b->evcap, b->nev, sizeof *b->ev)) {
        b->oom = 1;
        return;
    }
    struct sy_otlp_event *e = &b->ev[b->nev];
    e->name = name;
    e->time_ns = time_ns;
    e->a0 = b->nekv;
    e->na = 0;
    b->cur_event = (long)b->nev++;
    b->spans[b->nspans - 1].ne++;
}

void sy_otlp_event_end(struct sy_otlp_batch *b)
{
    b->cur_event = -1;
}

uint64_t sy_otlp_ns(double s)
{
    if (!(s > 0) || s > 1.8e10) /* NaN, negative, or past year 2500 */
        return 0;
    /* whole seconds and the fraction apart (both exact), the fraction to the
     * microsecond: a double near 1.7e9 resolves ~240 ns, so finer digits
     * would be noise ("...124999936" for .125) */
    double sec = floor(s);
    return (uint64_t)sec * 1000000000u + (uint64_t)llround((s - sec) * 1e6) * 1000u;
}

/* ---- protobuf ------------------------------------------------------------ */

static size_t varint_len(uint64_t v)
{
    size_t k = 1;
    while (v >>= 7)
        k++;
    return k;
}

static void pb_varint(struct sy_buf *o, uint64_t v)
{
    uint8_t t[10];
    size_t k = 0;
    do {
        t[k] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            t[k] |= 0x80;
        k++;
    } while (v);
    sy_buf_append(o, t, k);
}

static void pb_tag(struct sy_buf *o, unsigned field, unsigned wt)
{
    pb_varint(o, (uint64_t)field << 3 | wt);
}

/* A length-delimited field's header: its tag and its length. */
static void pb_ld(struct sy_buf *o, unsigned field, size_t n)
{
    pb_tag(o, field, 2);
    pb_varint(o, n);
}

/* The bytes of a length-delimited field of n bytes, header included (tag < 16). */
static size_t ld_size(size_t n)
{
    return 1 + varint_len(n) + n;
}

/* The length of text once sanitised: valid UTF-8 as is, each byte that does
 * not start a valid sequence replaced by U+FFFD (3 bytes). */
static size_t text_len(const char *s, size_t n)
{
    size_t bad = sy_utf8_check(s, n);
    if (bad == n)
        return n;
    size_t len = bad, i = bad;
    while (i < n) {
        size_t k = sy_utf8_seq((const unsigned char *)s + i, n - i);
        len += k ? k : 3;
        i += k ? k : 1;
    }
    return len;
}

static void pb_text(struct sy_buf *o, unsigned field, const char *s, size_t n)
{
    pb_ld(o, field, text_len(s, n));
    size_t bad = sy_utf8_check(s, n);
    sy_buf_append(o, s, bad);
    for (size_t i = bad; i < n;) {
        size_t k = sy_utf8_seq((const unsigned char *)s + i, n - i);
        if (k) {
            sy_buf_append(o, s + i, k);
            i += k;
        } else {
            sy_buf_append(o, "\xef\xbf\xbd", 3);
            i++;
        }
    }
}

static size_t str_size(const char *s) /* an optional string field: left out when empty */
{
    return s && *s ? ld_size(text_len(s, strlen(s))) : 0;
}

static void pb_str(struct sy_buf *o, unsigned field, const char *s)
{
    if (s && *s)
        pb_text(o, field, s, strlen(s));
}

static void pb_fixed(struct sy_buf *o, unsigned field, unsigned wt, uint64_t v, int bytes)
{
    uint8_t t[8];
    for (int i = 0; i < bytes; i++)
        t[i] = (uint8_t)(v >> (8 * i));
    pb_tag(o, field, wt);
    sy_buf_append(o, t, (size_t)bytes);
}

/* AnyValue's contents. */
static size_t any_size(const struct sy_otlp_kv *kv)
{
    switch (kv->t) {
    case SY_OTLP_STR: return ld_size(text_len(kv->s, kv->slen));
    case SY_OTLP_BOOL: return 2;
    case SY_OTLP_INT: return 1 + varint_len((uint64_t)kv->i); /* int64: a negative one is 10 bytes */
    case SY_OTLP_DBL: return 9;
    }
    return 0;
}

/* KeyValue's contents. */
static size_t kv_size(const struct sy_otlp_kv *kv)
{
    return str_size(kv->key) + ld_size(any_size(kv));
}

static void pb_kv(struct sy_buf *o, unsigned field, const struct sy_otlp_kv *kv)
{
    pb_ld(o, field, kv_size(kv));
    pb_str(o, 1, kv->key);
    pb_ld(o, 2, any_size(kv));
    switch (kv->t) {
    case SY_OTLP_STR: pb_text(o, 1, kv->s, kv->slen); break;
    case SY_OTLP_BOOL:
        pb_tag(o, 2, 0);
        pb_varint(o, kv->i ? 1 : 0);
        break;
    case SY_OTLP_INT:
        pb_tag(o, 3, 0);
        pb_varint(o, (uint64_t)kv->i);
        break;
    case SY_OTLP_DBL: {
        uint64_t bits;
        memcpy(&bits, &kv->d, 8);
        pb_fixed(o, 4, 1, bits, 8);
        break;
    }
    }
}

static size_t kvs_size(const struct sy_otlp_kv *kv, size_t n)
{
    size_t z = 0;
    for (size_t i = 0; i < n; i++)
        z += ld_size(kv_size(&kv[i]));
    return z;
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

static size_t event_size(const struct sy_otlp_batch *b, const struct sy_otlp_event *e)
{
    return (e->time_ns ? 9 : 0) + str_size(e->name) + kvs_size(&b->ekv[e->a0], e->na);
}

static size_t status_size(const struct sy_otlp_span *s)
{
    return str_size(s->status_msg) + (s->status ? 1 + varint_len((uint64_t)s->status) : 0);
}

static int has_status(const struct sy_otlp_span *s)
{
    return s->status || (s->status_msg && *s->status_msg);
}

static int has_parent(const struct sy_otlp_span *s)
{
    return s->has_parent && !all_zero(s->parent_id, 8);
}

/* Span's contents, in field-number order as written by pb_span. */
static size_t span_size(const struct sy_otlp_batch *b, const struct sy_otlp_span *s)
{
    size_t z = ld_size(16) + ld_size(8) + (has_parent(s) ? ld_size(8) : 0) + str_size(s->name);
    if (s->kind)
        z += 1 + varint_len((uint64_t)s->kind);
    z += (s->start_ns ? 9 : 0) + (s->end_ns ? 9 : 0);
    z += kvs_size(&b->kv[s->a0], s->na);
    for (size_t i = 0; i < s->ne; i++)
        z += ld_size(event_size(b, &b->ev[s->e0 + i]));
    if (has_status(s))
        z += ld_size(status_size(s));
    if (s->flags)
        z += 2 + 4; /* field 16: a two-byte tag */
    return z;
}

static void pb_span(struct sy_buf *o, const struct sy_otlp_batch *b, const struct sy_otlp_span *s)
{
    pb_ld(o, 2, span_size(b, s)); /* ScopeSpans.spans */
    pb_ld(o, 1, 16);
    sy_buf_append(o, s->trace_id, 16);
    pb_ld(o, 2, 8);
    sy_buf_append(o, s->span_id, 8);
    if (has_parent(s)) {
        pb_ld(o, 4, 8);
        sy_buf_append(o, s->parent_id, 8);
    }
    pb_str(o, 5, s->name);
    if (s->kind) {
        pb_tag(o, 6, 0);
        pb_varint(o, (uint64_t)s->kind);
    }
    if (s->start_ns)
        pb_fixed(o, 7, 1, s->start_ns, 8);
    if (s->end_ns)
        pb_fixed(o, 8, 1, s->end_ns, 8);
    for (size_t i = 0; i < s->na; i++)
        pb_kv(o, 9, &b->kv[s->a0 + i]);
    for (size_t i = 0; i < s->ne; i++) {
        const struct sy_otlp_event *e = &b->ev[s->e0 + i];
        pb_ld(o, 11, event_size(b, e));
        if (e->time_ns)
            pb_fixed(o, 1, 1, e->time_ns, 8);
        pb_str(o, 2, e->name);
        for (size_t j = 0; j < e->na; j++)
            pb_kv(o, 3, &b->ekv[e->a0 + j]);
    }
    if (has_status(s)) {
        pb_ld(o, 15, status_size(s));
        pb_str(o, 2, s->status_msg);
        if (s->status) {
            pb_tag(o, 3, 0);
            pb_varint(o, (uint64_t)s->status);
        }
    }
    if (s->flags)
        pb_fixed(o, 16, 5, s->flags, 4);
}

/* Every length is computed before it is written (a size pass over the batch,
 * the way protobuf's own serializers do it), so the request is written front
 * to back into one allocation of its exact size: no moves, no growth. */
int sy_otlp_proto(const struct sy_otlp_batch *b, struct sy_buf *o)
{
    if (b->oom)
        return -1;
    size_t res = kvs_size(b->resource, b->nresource);
    size_t scope = str_size(b->scope_name) + str_size(b->scope_version);
    size_t ss = ld_size(scope);
    for (size_t i = 0; i < b->nspans; i++)
        ss += ld_size(span_size(b, &b->spans[i]));
    size_t rs = ld_size(res) + ld_size(ss);
    size_t start = o->len;
    if (sy_buf_reserve(o, ld_size(rs)))
        return -1;
    pb_ld(o, 1, rs);  /* ExportTraceServiceRequest.resource_spans */
    pb_ld(o, 1, res); /* ResourceSpans.resource */
    for (size_t i = 0; i < b->nresource; i++)
        pb_kv(o, 1, &b->resource[i]);
    pb_ld(o, 2, ss);    /* ResourceSpans.scope_spans */
    pb_ld(o, 1, scope); /* ScopeSpans.scope */
    pb_str(o, 1, b->scope_name);
    pb_str(o, 2, b->scope_version);
    for (size_t i = 0; i < b->nspans; i++)
        pb_span(o, b, &b->spans[i]);
    if (sy_buf_failed(o))
        return -1;
    return o->len - start == ld_size(rs) ? 0 : -1; /* the size pass and the writer agree */
}

/* ---- OTLP/JSON ----------------------------------------------------------- */

static void js_str(struct sy_buf *o, const char *s, size_t n)
{
    sy_buf_append(o, "\"", 1);
    sy_utf8_json_escape(o, s, n);
    sy_buf_append(o, "\"", 1);
}

static void js_kvs(struct sy_buf *o, const struct sy_otlp_kv *kv, size_t n)
{
    SY_BUF_LIT(o, "[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            SY_BUF_LIT(o, ",");
        SY_BUF_LIT(o, "{\"key\":");
        js_str(o, kv[i].key, strlen(kv[i].key));
        SY_BUF_LIT(o, ",\"value\":{");
        switch (kv[i].t) {
        case SY_OTLP_STR:
            SY_BUF_LIT(o, "\"stringValue\":");
            js_str(o, kv[i].s, kv[i].slen);
            break;
        case SY_OTLP_BOOL:
            if (kv[i].i)
                SY_BUF_LIT(o, "\"boolValue\":true");
            else
                SY_BUF_LIT(o, "\"boolValue\":false");
            break;
        case SY_OTLP_INT: sy_buf_printf(o, "\"intValue\":\"%lld\"", (long long)kv[i].i); break;
        case SY_OTLP_DBL: {
            char d[SY_PY_FLOAT_MAX];
            sy_py_float_str(d, kv[i].d);
            SY_BUF_LIT(o, "\"doubleValue\":");
            sy_buf_puts(o, d);
            break;
        }
        }
        SY_BUF_LIT(o, "}}");
    }
    SY_BUF_LIT(o, "]");
}

static void js_hex(struct sy_buf *o, const char *name, const uint8_t *p, size_t n)
{
    sy_buf_printf(o, ",\"%s\":\"", name);
    sy_buf_hex(o, p, n);
    SY_BUF_LIT(o, "\"");
}

static void js_span(struct sy_buf *o, const struct sy_otlp_batch *b, const struct sy_otlp_span *s)
{
    SY_BUF_LIT(o, "{\"traceId\":\"");
    sy_buf_hex(o, s->trace_id, 16);
    SY_BUF_LIT(o, "\"");
    js_hex(o, "spanId", s->span_id, 8);
    if (s->has_parent && !all_zero(s->parent_id, 8))
        js_hex(o, "parentSpanId", s->parent_id, 8);
    if (s->flags)
        sy_buf_printf(o, ",\"flags\":%u", s->flags);
    SY_BUF_LIT(o, ",\"name\":");
    js_str(o, s->name ? s->name : "", s->name ? strlen(s->name) : 0);
    if (s->kind)
        sy_buf_printf(o, ",\"kind\":%d", s->kind);
    sy_buf_printf(o, ",\"startTimeUnixNano\":\"%llu\",\"endTimeUnixNano\":\"%llu\"", (unsigned long long)s->start_ns,
                  (unsigned long long)s->end_ns);
    SY_BUF_LIT(o, ",\"attributes\":");
    js_kvs(o, &b->kv[s->a0], s->na);
    if (s->ne) {
        SY_BUF_LIT(o, ",\"events\":[");
        for (size_t i = 0; i < s->ne; i++) {
            const struct sy_otlp_event *e = &b->ev[s->e0 + i];
            if (i)
                SY_BUF_LIT(o, ",");
            sy_buf_printf(o, "{\"timeUnixNano\":\"%llu\",\"name\":", (unsigned long long)e->time_ns);
            js_str(o, e->name, strlen(e->name));
            SY_BUF_LIT(o, ",\"attributes\":");
            js_kvs(o, &b->ekv[e->a0], e->na);
            SY_BUF_LIT(o, "}");
        }
        SY_BUF_LIT(o, "]");
    }
    SY_BUF_LIT(o, ",\"status\":{");
    if (s->status_msg && *s->status_msg) {
        SY_BUF_LIT(o, "\"message\":");
        js_str(o, s->status_msg, strlen(s->status_msg));
        if (s->status)
            SY_BUF_LIT(o, ",");
    }
    if (s->status)
        sy_buf_printf(o, "\"code\":%d", s->status);
    SY_BUF_LIT(o, "}}");
}

int sy_otlp_json(const struct sy_otlp_batch *b, struct sy_buf *o)
{
    if (b->oom)
        return -1;
    SY_BUF_LIT(o, "{\"resourceSpans\":[{\"resource\":{\"attributes\":");
    js_kvs(o, b->resource, b->nresource);
    SY_BUF_LIT(o, "},\"scopeSpans\":[{\"scope\":{\"name\":");
    js_str(o, b->scope_name ? b->scope_name : "", b->scope_name ? strlen(b->scope_name) : 0);
    if (b->scope_version) {
        SY_BUF_LIT(o, ",\"version\":");
        js_str(o, b->scope_version, strlen(b->scope_version));
    }
    SY_BUF_LIT(o, "},\"spans\":[");
    for (size_t i = 0; i < b->nspans; i++) {
        if (i)
            SY_BUF_LIT(o, ",");
        js_span(o, b, &b->spans[i]);
    }
    SY_BUF_LIT(o, "]}]}]}");
    return sy_buf_failed(o) ? -1 : 0;
}
