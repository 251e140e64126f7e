/* ndjson.c - incremental newline-delimited JSON reader, behind framing.h.
 *
 *   stream = *line
 *   line   = *byte LF          one event per line: cb(ud, "", 0, bytes, len) with a
 *                              final CR removed ("\r\n" line ends)
 *   blank  = *(SP / HT / CR) LF  skipped (keep-alive newlines)
 *
 * The bytes are not checked to be JSON (the adapter parses them). A line
 * that has not ended when the stream does is delivered by
 * sy_ndjson_finish(). A line longer than max_event bytes before its LF is
 * SY_EUPPROTO, whatever the split. A line complete inside one feed is passed
 * straight from the caller's bytes; only a line spanning feeds is copied
 * (into f->acc). f->data, f->type and f->saw_cr are not used.
 */
#include <string.h>

#include "core/errors.h"
#include "upstream/framing.h"

static int emit(const char *s, size_t n, sy_frame_cb cb, void *ud)
{
    if (n && s[n - 1] == '\r')
        n--;
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
        i++;
    return i == n ? 0 : cb(ud, "", 0, s, n);
}

static int acc_add(struct sy_framer *f, const char *s, size_t n)
{
    if (f->acc.len > f->max_event || n > f->max_event - f->acc.len)
        return SY_EUPPROTO;
    int rc = sy_buf_append(&f->acc, s, n);
    return rc == SY_ENOSPC ? SY_EUPPROTO : rc;
}

int sy_ndjson_feed(struct sy_framer *f, const char *p, size_t n, sy_frame_cb cb, void *ud)
{
    size_t i = 0;
    while (i < n) {
        const char *q = memchr(p + i, '\n', n - i);
        if (!q)
            return acc_add(f, p + i, n - i);
        size_t e = (size_t)(q - p);
        int rc;
        if (!f->acc.len) {
            rc = e - i > f->max_event ? SY_EUPPROTO : emit(p + i, e - i, cb, ud);
        } else {
            rc = acc_add(f, p + i, e - i);
            if (!rc)
                rc = emit(f->acc.p, f->acc.len, cb, ud);
            sy_buf_reset(&f->acc);
        }
        if (rc)
            return rc;
        i = e + 1;
    }
    return 0;
}

int sy_ndjson_finish(struct sy_framer *f, sy_frame_cb cb, void *ud)
{
    int rc = f->acc.len ? emit(f->acc.p, f->acc.len, cb, ud) : 0;
    sy_buf_reset(&f->acc);
    return rc;
}
