/* fuzz_gtexts.c - sy_gtexts_read on arbitrary bodies, and splicing back.
 *
 * The first byte picks the dialect (low 3 bits), the phase (bit 3: an
 * answer) and skip_system / skip_tool (bits 4, 5); the rest is the body.
 * Checks (gtexts_check.h): the segments' texts and spans; each text spliced
 * back with a mark added reads back as such, and the body still parses.
 */
#include <stdint.h>
#include <stdio.h>

#include "gtexts_check.h"

struct how {
    enum sy_gdialect d;
    unsigned phase;
    int ss, st;
};

static int reread(struct sy_gtexts *t, const char *p, size_t n, void *ud)
{
    const struct how *h = ud;
    return sy_gtexts_read(t, h->d, h->phase, p, n, h->ss, h->st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct how h = {.d = (enum sy_gdialect)((data[0] & 7) % 5),
                    .phase = data[0] & 8 ? SY_GM_POST : SY_GM_PRE,
                    .ss = !!(data[0] & 16),
                    .st = !!(data[0] & 32)};
    const char *body = (const char *)data + 1;
    size_t n = size - 1;
    struct sy_gtexts t = {0};
    if (sy_gtexts_read(&t, h.d, h.phase, body, n, h.ss, h.st) == 0) {
        check_read(&t, body, n);
        char **repl = calloc(t.nseg + 1, sizeof *repl);
        if (!repl)
            abort();
        for (size_t i = 0; i < t.nseg; i++) {
            if (memchr(t.seg[i].text, 0, t.seg[i].len) || !t.seg[i].raw_len)
                continue; /* a C string cannot carry a \u0000; span-less texts are tested in fuzz_gsplice */
            if (asprintf(&repl[i], "[%zu\"\\\n%s\x01]", i, t.seg[i].text) < 0)
                abort();
        }
        check_splice(&t, body, n, repl, reread, &h);
        for (size_t i = 0; i < t.nseg; i++)
            free(repl[i]);
        free(repl);
    } else if (t.nseg || t.ntool) {
        abort(); /* a refused body reads as nothing */
    }
    sy_gtexts_free(&t);
    return 0;
}
