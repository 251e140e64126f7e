/* fuzz_framing.c - libFuzzer harness for the stream framing readers
 * (upstream/framing.h: sse.c, ndjson.c, eventstream.c).
 *
 *   input  = kind (1) | limit (1) | seed (2) | stream bytes
 *   kind   = byte % 3: SSE, NDJSON, AWS event stream
 *   limit  < 128: max_event 0 (the default), else (limit - 127) * 4 bytes
 *
 * The stream is fed once whole and once in pieces of pseudo-random sizes
 * (from seed: mostly 1..8 bytes, sometimes up to 4 KB); both runs must
 * deliver the same events in the same order and end with the same code. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/errors.h"
#include "upstream/framing.h"

struct rec {
    struct sy_buf b;
    int kind;
    size_t max;
};

static int on_event(void *ud, const char *type, size_t tl, const char *data, size_t dl)
{
    struct rec *r = ud;
    struct sy_buf *b = &r->b;
    uint64_t h[2] = {tl, dl};
    if ((r->kind == 0 && tl >= 128) || (r->kind == 1 && tl) || (r->max && dl > r->max))
        abort();
    sy_buf_append(b, h, sizeof h);
    sy_buf_append(b, type, tl);
    sy_buf_append(b, data, dl);
    return 0;
}

static int run(int kind, size_t max, const char *p, size_t n, uint32_t seed, struct rec *out)
{
    struct sy_framer f;
    sy_framer_init(&f, kind, max);
    int rc = 0;
    size_t at = 0;
    while (at < n && !rc) {
        size_t k = n - at;
        if (seed) {
            seed = seed * 1103515245u + 12345u;
            uint32_t r = seed >> 16;
            size_t want = (r & 7) ? 1 + (r >> 3) % 8 : 1 + (r >> 3) % 4096;
            if (want < k)
                k = want;
        }
        rc = sy_framer_feed(&f, p + at, k, on_event, out);
        at += k;
    }
    if (!rc)
        rc = sy_framer_finish(&f, on_event, out);
    sy_framer_free(&f);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (n < 4)
        return 0;
    int kind = d[0] % 3;
    size_t max = d[1] < 128 ? 0 : (size_t)(d[1] - 127) * 4;
    uint32_t seed = (uint32_t)d[2] | (uint32_t)d[3] << 8 | 1u << 16;
    const char *p = (const char *)d + 4;
    n -= 4;
    struct rec a = {.kind = kind, .max = max}, b = a;
    sy_buf_init(&a.b, (size_t)1 << 30);
    sy_buf_init(&b.b, (size_t)1 << 30);
    int ra = run(kind, max, p, n, 0, &a);
    int rb = run(kind, max, p, n, seed, &b);
    if (ra != rb || a.b.len != b.b.len || (a.b.len && memcmp(a.b.p, b.b.p, a.b.len)))
        abort();
    if (ra != 0 && ra != SY_EUPPROTO)
        abort();
    sy_buf_free(&a.b);
    sy_buf_free(&b.b);
    return 0;
}
