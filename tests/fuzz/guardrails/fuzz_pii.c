/* fuzz_pii.c - libFuzzer harness for the PII detectors and reversible masking
 * (src/guardrails/local/pii.c, src/guardrails/unmask.c): the input is a text.
 * Every hit lies inside the text, in order, without overlap; the kind's
 * numbered masking unmasks back to the text byte for byte (when the text has
 * no '<' of its own, which a placeholder could collide with, and no NUL: a
 * replacement is a C string); and the text
 * cut in two at any point, held back with sy_gunmask_hold, unmasks as the
 * whole does. No crash, no hang (every detector reads a bounded window). */
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "guardrails/guardrail.h"
#include "guardrails/local/pii.h"

struct chk {
    size_t n, end;
    int bad;
};

static int on_hit(void *ud, const struct sy_pii_hit *h)
{
    struct chk *c = ud;
    if (h->off < c->end || h->len == 0 || h->off + h->len > c->n || h->entity < 0 || h->entity >= SY_PII_N)
        c->bad = 1;
    c->end = h->off + h->len;
    return 0;
}

static struct sy_guard guard;
static int ready;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) {
        char err[256];
        json_object *p = json_tokener_parse("{\"output_parse_pii\": true}");
        guard.ops = sy_guard_kind("pii_masking");
        guard.name = "fuzz";
        guard.modes = SY_GM_PRE;
        if (!guard.ops || guard.ops->open(&guard, p, NULL, err, sizeof err) < 0)
            abort();
        json_object_put(p);
        ready = 1;
    }
    char *t = malloc(size + 1);
    if (!t)
        return 0;
    memcpy(t, data, size);
    t[size] = 0;
    struct chk c = {.n = size};
    sy_pii_scan(t, size, SY_PII_ALL, on_hit, &c);
    if (c.bad)
        abort();
    struct sy_gseg s = {.text = t, .len = size, .off = 1, .raw_len = size + 2};
    struct sy_ginput in = {.phase = SY_GM_PRE, .seg = &s, .nseg = 1};
    struct sy_gresult r = {0};
    guard.ops->check(&guard, &in, &r);
    if (r.verdict == SY_GV_MASKED && !memchr(t, '<', size) && !memchr(t, 0, size)) {
        const char *m = r.repl[0];
        size_t ml = strlen(m);
        struct sy_buf b;
        sy_buf_init(&b, (size_t)1 << 30);
        sy_gunmask(r.pairs, r.npairs, m, ml, &b);
        if (b.len != size || memcmp(b.p, t, size))
            abort();
        /* two pieces, cut in the middle */
        struct sy_buf o, carry;
        sy_buf_init(&o, (size_t)1 << 30);
        sy_buf_init(&carry, (size_t)1 << 30);
        size_t cut = ml / 2;
        const char *pc[2] = {m, m + cut};
        size_t pl[2] = {cut, ml - cut};
        for (int i = 0; i < 2; i++) {
            sy_buf_append(&carry, pc[i], pl[i]);
            size_t h = sy_gunmask_hold(r.pairs, r.npairs, carry.p ? carry.p : "", carry.len);
            if (h > carry.len)
                abort();
            sy_gunmask(r.pairs, r.npairs, carry.p ? carry.p : "", carry.len - h, &o);
            sy_buf_consume(&carry, carry.len - h);
        }
        sy_gunmask(r.pairs, r.npairs, carry.p ? carry.p : "", carry.len, &o);
        if (o.len != b.len || memcmp(o.p, b.p, b.len))
            abort();
        sy_buf_free(&o);
        sy_buf_free(&carry);
        sy_buf_free(&b);
    }
    sy_gresult_free(&r);
    free(t);
    return 0;
}
