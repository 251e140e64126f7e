/* fuzz_mcp_sse.c - libFuzzer harness for the SSE transport's event writer
 * (stages/mcp_sse.c, sy_mcp_sse_events). The input is an answer body.
 * Oracles: the output is a run of events, each "event: message" then
 * "data: " lines then a blank line, with no CR anywhere (SSE splits lines at
 * CR too); an answer that is not an array is one event whose data lines,
 * joined by LF, are the answer with its CR LF, CR and LF as LF; a valid JSON
 * array (providers/jdom.c, an independent parser) gives one event per
 * element, its data the element's own text the same way. No crash, no read
 * past the input (ASan). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/buf.h"
#include "providers/jdom.h"
#include "stages/mcp.h"

/* s with CR LF, CR and LF as LF, into out (cap >= n); its length. */
static size_t norm(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\r') {
            out[o++] = '\n';
            if (i + 1 < n && s[i + 1] == '\n')
                i++;
        } else {
            out[o++] = s[i];
        }
    }
    return o;
}

/* The next event of b at *pos: its data joined by LF into out; 0 at the end,
 * -1 when b is not made of events. */
static int next_event(const struct sy_buf *b, size_t *pos, char *out, size_t *olen)
{
    static const char head[] = "event: message\n";
    size_t p = *pos, o = 0;
    if (p == b->len)
        return 0;
    if (b->len - p < sizeof head - 1 || memcmp(b->p + p, head, sizeof head - 1) != 0)
        return -1;
    p += sizeof head - 1;
    int lines = 0;
    for (;;) {
        if (p < b->len && b->p[p] == '\n') { /* the blank line */
            *pos = p + 1;
            *olen = o;
            return lines ? 1 : -1;
        }
        if (b->len - p < 6 || memcmp(b->p + p, "data: ", 6) != 0)
            return -1;
        p += 6;
        const char *nl = memchr(b->p + p, '\n', b->len - p);
        if (!nl)
            return -1;
        if (lines++)
            out[o++] = '\n';
        size_t l = (size_t)(nl - (b->p + p));
        memcpy(out + o, b->p + p, l);
        o += l;
        p += l + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size ? size : 1); /* exactly size bytes: ASan sees a read past the end */
    char *want = malloc(size + 1), *got = malloc(8 * size + 64);
    if (!in || !want || !got)
        abort();
    memcpy(in, data, size);
    struct sy_buf b;
    sy_buf_init(&b, 8 * size + 4096);
    sy_mcp_sse_events(&b, in, size);
    if (sy_buf_failed(&b) || (b.len && memchr(b.p, '\r', b.len)))
        abort();
    size_t i = 0;
    while (i < size && (in[i] == ' ' || in[i] == '\t' || in[i] == '\r' || in[i] == '\n'))
        i++;
    size_t pos = 0, gl = 0;
    if (i == size || in[i] != '[') {
        if (next_event(&b, &pos, got, &gl) != 1 || pos != b.len)
            abort();
        size_t wl = norm(in, size, want);
        if (gl != wl || memcmp(got, want, wl) != 0)
            abort();
    } else {
        struct sy_arena a;
        sy_arena_init(&a);
        struct sy_jdoc d;
        if (sy_jdom_parse(&d, in, size, &a, 0) == 0 && sy_jdom_type(&d, 0) == 'a') {
            for (uint32_t it = sy_jdom_first(&d, 0); it; it = sy_jdom_next(&d, it)) {
                size_t rl;
                const char *raw = sy_jdom_raw(&d, it, &rl);
                if (next_event(&b, &pos, got, &gl) != 1)
                    abort();
                size_t wl = norm(raw, rl, want);
                if (gl != wl || memcmp(got, want, wl) != 0)
                    abort();
            }
            if (pos != b.len) /* no event more than the elements */
                abort();
        } else { /* not JSON: still events, whatever they hold */
            int rc;
            while ((rc = next_event(&b, &pos, got, &gl)) == 1)
                ;
            if (rc != 0)
                abort();
        }
        sy_arena_free(&a);
    }
    sy_buf_free(&b);
    free(in);
    free(want);
    free(got);
    return 0;
}
