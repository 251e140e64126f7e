/* fuzz_gevent.c - sy_gevent_read on arbitrary stream events, one struct
 * reused across inputs as the engine reuses it across a stream's events.
 *
 * The first byte picks the dialect (chat, /v1/messages, /v1/responses); the
 * rest is the event's JSON. Checks (gtexts_check.h): texts and spans; the
 * deltas spliced with a mark read back as such.
 */
#include <stdint.h>
#include <stdio.h>

#include "gtexts_check.h"

static struct sy_gtexts keep;

static int reread(struct sy_gtexts *t, const char *p, size_t n, void *ud)
{
    return sy_gevent_read(t, *(const enum sy_gdialect *)ud, p, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const enum sy_gdialect ds[] = {SY_GD_CHAT, SY_GD_MESSAGES, SY_GD_RESPONSES};
    if (size < 1)
        return 0;
    enum sy_gdialect d = ds[data[0] % 3];
    const char *ev = (const char *)data + 1;
    size_t n = size - 1;
    int rc = sy_gevent_read(&keep, d, ev, n);
    if (rc < -1 || rc > 1)
        abort();
    if (rc < 0 && (keep.nseg || keep.ntool))
        abort();
    if (rc < 0)
        return 0;
    check_read(&keep, ev, n);
    char **repl = calloc(keep.nseg + 1, sizeof *repl);
    if (!repl)
        abort();
    for (size_t i = 0; i < keep.nseg; i++)
        if (!memchr(keep.seg[i].text, 0, keep.seg[i].len) && asprintf(&repl[i], "<%s>", keep.seg[i].text) < 0)
            abort();
    /* the reread goes to a fresh struct; keep's texts stay valid for the check */
    check_splice(&keep, ev, n, repl, reread, &d);
    for (size_t i = 0; i < keep.nseg; i++)
        free(repl[i]);
    free(repl);
    if (data[0] & 0x80) { /* now and then start over, as a new stream does */
        sy_gtexts_free(&keep);
    }
    return 0;
}
