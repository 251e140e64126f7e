/* otlp.c - OTLP trace export requests: the span batch, its protobuf and its
 * OTLP/JSON (see otlp.h).
 *
 * Protobuf by hand: a tag is (field << 3 | wire type) as a varint; a
 * submessage is written in place and its length inserted in front when it is
 * closed (pb_open returns the mark, pb_close moves the bytes up by the
 * length's varint size), so nothing is built twice and no size pass is
 * needed. A batch is at most a few hundred spans: the moves cost less than a
 * size-estimating pass would.
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

static void pb_bytes(struct sy_buf *o, unsigned field, const void *p, size_t n)
{
    pb_tag(o, field, 2);
    pb_varint(o, n);
    sy_buf_append(o, p, n);
}

static size_t pb_open(struct sy_buf *o, unsigned field);
static void pb_close(struct sy_buf *o, size_t mark);

/* A string field: valid UTF-8 as is; otherwise each byte that does not start
 * a valid sequence becomes U+FFFD (written in place, the length put in front). */
static void pb_text(struct sy_buf *o, unsigned field, const char *s, size_t n)
{
    size_t bad = sy_utf8_check(s, n);
    if (bad == n) {
        pb_bytes(o, field, s, n);
        return;
    }
    size_t m = pb_open(o, field);
    size_t i = 0;
    while (i < n) {
        size_t k = sy_utf8_seq((const unsigned char *)s + i, n - i);
        if (k) {
            sy_buf_append(o, s + i, k);
            i += k;
        } else {
            sy_buf_append(o, "\xef\xbf\xbd", 3);
            i++;
        }
    }
    pb_close(o, m);
}

static void pb_str(struct sy_buf *o, unsigned field, const char *s) /* left out when empty */
{
    if (s && *s)
        pb_text(o, field, s, strlen(s));
}

static void pb_fixed64(struct sy_buf *o, unsigned field, uint64_t v)
{
    uint8_t t[8];
    for (int i = 0; i < 8; i++)
        t[i] = (uint8_t)(v >> (8 * i));
    pb_tag(o, field, 1);
    sy_buf_append(o, t, 8);
}

static void pb_fixed32(struct sy_buf *o, unsigned field, uint32_t v)
{
    uint8_t t[4];
    for (int i = 0; i < 4; i++)
        t[i] = (uint8_t)(v >> (8 * i));
    pb_tag(o, field, 5);
    sy_buf_append(o, t, 4);
}

/* Start a length-delimited submessage: its tag now, its length at pb_close. */
static size_t pb_open(struct sy_buf *o, unsigned field)
{
    pb_tag(o, field, 2);
    return o->len;
}

static void pb_close(struct sy_buf *o, size_t mark)
{
    if (sy_buf_failed(o))
        return;
    size_t n = o->len - mark;
    uint8_t t[10];
    size_t k = 0;
    uint64_t v = n;
    do {
        t[k] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            t[k] |= 0x80;
        k++;
    } while (v);
    if (sy_buf_append(o, t, k)) /* room for the length; its bytes are placed below */
        return;
    memmove(o->p + mark + k, o->p + mark, n);
    memcpy(o->p + mark, t, k);
}

static void pb_kv(struct sy_buf *o, unsigned field, const struct sy_otlp_kv *kv)
{
    size_t m = pb_open(o, field);
    pb_str(o, 1, kv->key);
    size_t v = pb_open(o, 2);
    switch (kv->t) {
    case SY_OTLP_STR: pb_text(o, 1, kv->s, kv->slen); break;
    case SY_OTLP_BOOL:
        pb_tag(o, 2, 0);
        pb_varint(o, kv->i ? 1 : 0);
        break;
    case SY_OTLP_INT:
        pb_tag(o, 3, 0);
        pb_varint(o, (uint64_t)kv->i); /* int64: two's complement, 10 bytes when negative */
        break;
    case SY_OTLP_DBL: {
        uint64_t bits;
        memcpy(&bits, &kv->d, 8);
        pb_fixed64(o, 4, bits);
        break;
    }
    }
    pb_close(o, v);
    pb_close(o, m);
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

static void pb_span(struct sy_buf *o, const struct sy_otlp_batch *b, const struct sy_otlp_span *s)
{
    size_t m = pb_open(o, 2);
    pb_bytes(o, 1, s->trace_id, 16);
    pb_bytes(o, 2, s->span_id, 8);
    if (s->has_parent && !all_zero(s->parent_id, 8))
        pb_bytes(o, 4, s->parent_id, 8);
    pb_str(o, 5, s->name);
    if (s->kind) {
        pb_tag(o, 6, 0);
        pb_varint(o, (uint64_t)s->kind);
    }
    if (s->start_ns)
        pb_fixed64(o, 7, s->start_ns);
    if (s->end_ns)
        pb_fixed64(o, 8, s->end_ns);
    for (size_t i = 0; i < s->na; i++)
        pb_kv(o, 9, &b->kv[s->a0 + i]);
    for (size_t i = 0; i < s->ne; i++) {
        const struct sy_otlp_event *e = &b->ev[s->e0 + i];
        size_t em = pb_open(o, 11);
        if (e->time_ns)
            pb_fixed64(o, 1, e->time_ns);
        pb_str(o, 2, e->name);
        for (size_t j = 0; j < e->na; j++)
            pb_kv(o, 3, &b->ekv[e->a0 + j]);
        pb_close(o, em);
    }
    if (s->status || (s->status_msg && *s->status_msg)) {
        size_t sm = pb_open(o, 15);
        pb_str(o, 2, s->status_msg);
        if (s->status) {
            pb_tag(o, 3, 0);
            pb_varint(o, (uint64_t)s->status);
        }
        pb_close(o, sm);
    }
    if (s->flags)
        pb_fixed32(o, 16, s->flags);
    pb_close(o, m);
}

int sy_otlp_proto(const struct sy_otlp_batch *b, struct sy_buf *o)
{
    if (b->oom)
        return -1;
    size_t rs = pb_open(o, 1);
    size_t r = pb_open(o, 1);
    for (size_t i = 0; i < b->nresource; i++)
        pb_kv(o, 1, &b->resource[i]);
    pb_close(o, r);
    size_t ss = pb_open(o, 2);
    size_t sc = pb_open(o, 1);
    pb_str(o, 1, b->scope_name);
    pb_str(o, 2, b->scope_version);
    pb_close(o, sc);
    for (size_t i = 0; i < b->nspans; i++)
        pb_span(o, b, &b->spans[i]);
    pb_close(o, ss);
    pb_close(o, rs);
    return sy_buf_failed(o) ? -1 : 0;
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
