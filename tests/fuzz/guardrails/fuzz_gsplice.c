/* fuzz_gsplice.c - sy_gtext_splice with arbitrary replacements.
 *
 * The input is a body and replacement texts separated by NUL bytes: the
 * first byte picks the dialect and phase as in fuzz_gtexts.c, then the body
 * up to the first NUL, then the replacements (any bytes: quotes, controls,
 * invalid UTF-8), given to the segments in turn (an empty one leaves its
 * segment unchanged). Checks (gtexts_check.h): the spliced body parses when
 * the input did and reads back with each replacement as its text (invalid
 * bytes as U+FFFD); a replacement of a text with no span is refused.
 */
#include <stdint.h>

#include "gtexts_check.h"

struct how {
    enum sy_gdialect d;
    unsigned phase;
};

static int reread(struct sy_gtexts *t, const char *p, size_t n, void *ud)
{
    const struct how *h = ud;
    return sy_gtexts_read(t, h->d, h->phase, p, n, 0, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct how h = {.d = (enum sy_gdialect)((data[0] & 7) % 5), .phase = data[0] & 8 ? SY_GM_POST : SY_GM_PRE};
    /* a NUL-terminated copy: the body, then the replacements */
    char *in = malloc(size + 1);
    if (!in)
        abort();
    memcpy(in, data + 1, size - 1);
    in[size - 1] = 0;
    size_t n = strlen(in);
    struct sy_gtexts t = {0};
    if (sy_gtexts_read(&t, h.d, h.phase, in, n, 0, 0) == 0) {
        check_read(&t, in, n);
        char **repl = calloc(t.nseg + 1, sizeof *repl);
        if (!repl)
            abort();
        char *p = in + n + (n < size - 1), *e = in + size - 1;
        for (size_t i = 0; i < t.nseg && p < e; i++) {
            size_t l = strlen(p);
            if (l)
                repl[i] = p;
            p += l + 1;
        }
        check_splice(&t, in, n, repl, reread, &h);
        free(repl);
    }
    sy_gtexts_free(&t);
    free(in);
    return 0;
}
