/* sse.c - incremental server-sent events reader (WHATWG HTML, "Interpreting
 * an event stream"), behind framing.h.
 *
 *   stream  = [BOM] *line                 BOM: EF BB BF, first bytes of the stream only
 *   line    = *byte ( CRLF | LF | CR )    a CR ending one feed and an LF starting the
 *                                         next are one line end (f->saw_cr)
 *   ""                    dispatch: cb(event, data) when at least one data line was
 *                         seen, then event and data are cleared (also when none was)
 *   ":" *byte             comment, ignored (never buffered past its ':')
 *   name ":" [" "] value  one optional space after the colon is stripped
 *   name                  the whole line is the name, value ""
 *
 *   name     effect
 *   -------  -----------------------------------------------------------------
 *   data     value appended to the data buffer; lines are joined by "\n"
 *   event    value becomes the event type ("" when no event line; never
 *            "message": the caller sees what the server sent)
 *   id retry ignored (no reconnection here), as is any other name
 *
 * Unlike a browser, sy_sse_finish() dispatches an event that the stream ended
 * without its blank line (providers close right after the last data line).
 *
 * Limits, identical whatever the split: a non-comment line longer than
 * max_event bytes (terminator excluded), data lines joining to more than
 * max_event bytes, or an event name over sizeof f->type - 1 bytes is
 * SY_EUPPROTO.
 *
 * Buffers: f->acc holds the current line when it spans feeds (or a BOM
 * prefix still undecided); f->data holds the data lines, each followed by
 * "\n" (the last one is not passed). A data line complete inside one feed and
 * directly followed by the blank line is handed to the callback straight from
 * the caller's bytes, without a copy (the usual `data: {...}\n\n`).
 */
#include <string.h>

#include "core/errors.h"
#include "upstream/framing.h"

/* A data line of the current feed not yet copied into f->data. */
struct pend {
    const char *p;
    size_t n;
    int set;
};

static int put_data(struct sy_framer *f, const char *s, size_t n)
{
    if (f->data.len > f->max_event || n > f->max_event - f->data.len)
        return SY_EUPPROTO; /* the data joined would pass max_event */
    int rc = sy_buf_append(&f->data, s, n);
    if (!rc)
        rc = sy_buf_append(&f->data, "\n", 1);
    return rc == SY_ENOSPC ? SY_EUPPROTO : rc;
}

static int flush_pend(struct sy_framer *f, struct pend *pd)
{
    if (!pd || !pd->set)
        return 0;
    pd->set = 0;
    return put_data(f, pd->p, pd->n);
}

static int dispatch(struct sy_framer *f, struct pend *pd, sy_frame_cb cb, void *ud)
{
    int rc = 0;
    if (pd && pd->set) {
        pd->set = 0;
        rc = cb(ud, f->type, f->type_len, pd->p, pd->n);
    } else if (f->data.len) {
        rc = cb(ud, f->type, f->type_len, f->data.p, f->data.len - 1);
    }
    sy_buf_reset(&f->data);
    f->type_len = 0;
    f->type[0] = 0;
    return rc;
}

/* One complete line (terminator excluded). direct: s points into the
 * caller's bytes for this feed (a data line may then stay pending). */
static int line(struct sy_framer *f, const char *s, size_t n, struct pend *pd, int direct, sy_frame_cb cb, void *ud)
{
    if (!n)
        return dispatch(f, pd, cb, ud);
    if (s[0] == ':')
        return 0;
    if (n > f->max_event)
        return SY_EUPPROTO;
    const char *c = memchr(s, ':', n);
    size_t nl = c ? (size_t)(c - s) : n;
    const char *v = c ? c + 1 : s + n;
    size_t vl = (size_t)(s + n - v);
    if (vl && v[0] == ' ')
        v++, vl--;
    if (nl == 4 && !memcmp(s, "data", 4)) {
        if (direct && pd && !pd->set && !f->data.len) {
            pd->p = v;
            pd->n = vl;
            pd->set = 1;
            return 0;
        }
        int rc = flush_pend(f, pd);
        return rc ? rc : put_data(f, v, vl);
    }
    if (nl == 5 && !memcmp(s, "event", 5)) {
        if (vl >= sizeof f->type)
            return SY_EUPPROTO;
        memcpy(f->type, v, vl);
        f->type[vl] = 0;
        f->type_len = vl;
    }
    return 0; /* id, retry, anything else */
}

/* Append a piece of a line that continues in a later feed. A comment keeps
 * only its ':'; other lines are checked against max_event as they grow. */
static int acc_add(struct sy_framer *f, const char *s, size_t n)
{
    if (!n || (f->acc.len && f->acc.p[0] == ':'))
        return 0;
    if (!f->acc.len && s[0] == ':')
        n = 1;
    else if (f->acc.len > f->max_event || n > f->max_event - f->acc.len)
        return SY_EUPPROTO;
    int rc = sy_buf_append(&f->acc, s, n);
    return rc == SY_ENOSPC ? SY_EUPPROTO : rc;
}

int sy_sse_feed(struct sy_framer *f, const char *p, size_t n, sy_frame_cb cb, void *ud)
{
    static const unsigned char bom[3] = {0xEF, 0xBB, 0xBF};
    size_t i = 0;
    int rc = 0;
    while (!f->bom_checked && i < n) { /* f->acc holds the BOM bytes matched so far */
        if ((unsigned char)p[i] != bom[f->acc.len]) {
            f->bom_checked = 1; /* the matched prefix stays as the line's start */
            break;
        }
        if ((rc = sy_buf_append(&f->acc, p + i++, 1)))
            return rc == SY_ENOSPC ? SY_EUPPROTO : rc;
        if (f->acc.len == 3) {
            sy_buf_reset(&f->acc);
            f->bom_checked = 1;
        }
    }
    if (f->saw_cr && i < n) {
        f->saw_cr = 0;
        if (p[i] == '\n')
            i++;
    }
    struct pend pd = {0};
    size_t cr = 0; /* offset of the next '\r' at or after i (n: none), valid while >= i */
    int cr_known = 0;
    while (i < n) {
        if (!cr_known || cr < i) {
            const char *q = memchr(p + i, '\r', n - i);
            cr = q ? (size_t)(q - p) : n;
            cr_known = 1;
        }
        const char *q = memchr(p + i, '\n', (cr < n ? cr : n) - i);
        size_t e = q ? (size_t)(q - p) : cr; /* end of the line, n when it goes on */
        if (e == n) {
            rc = acc_add(f, p + i, n - i);
            break;
        }
        if (!f->acc.len) {
            rc = line(f, p + i, e - i, &pd, 1, cb, ud);
        } else {
            rc = acc_add(f, p + i, e - i);
            if (!rc)
                rc = line(f, f->acc.p, f->acc.len, &pd, 0, cb, ud);
            sy_buf_reset(&f->acc);
        }
        if (rc)
            return rc;
        i = e + 1;
        if (p[e] == '\r') {
            if (i == n)
                f->saw_cr = 1;
            else if (p[i] == '\n')
                i++;
        }
    }
    int rc2 = flush_pend(f, &pd);
    return rc ? rc : rc2;
}

int sy_sse_finish(struct sy_framer *f, sy_frame_cb cb, void *ud)
{
    int rc = 0;
    if (f->acc.len)
        rc = line(f, f->acc.p, f->acc.len, NULL, 0, cb, ud);
    sy_buf_reset(&f->acc);
    if (!rc)
        rc = dispatch(f, NULL, cb, ud);
    sy_buf_reset(&f->data);
    f->type_len = 0;
    f->saw_cr = 0;
    f->bom_checked = 0;
    return rc;
}
