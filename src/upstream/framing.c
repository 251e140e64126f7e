/* framing.c - one feed interface over the three stream framings (framing.h).
 *
 *   kind                       feed / finish
 *   -------------------------  ------------------------------------
 *   SY_FRAME_SSE            0  sy_sse_feed / sy_sse_finish        (sse.c)
 *   SY_FRAME_NDJSON         1  sy_ndjson_feed / sy_ndjson_finish  (ndjson.c)
 *   SY_FRAME_AWS_EVENTSTREAM 2 sy_awses_feed / sy_awses_finish    (eventstream.c)
 *
 * Invariants: both buffers are capped one byte over max_event (SSE keeps a
 * '\n' after each data line); each reader enforces max_event itself, so a
 * limit hit is SY_EUPPROTO whatever the split. An unknown kind is
 * SY_EINTERNAL on every call. max_event 0 means SY_FRAMING_DEFAULT_MAX.
 */
#include "upstream/framing.h"

#include <string.h>

#include "core/errors.h"

#define SY_FRAMING_DEFAULT_MAX ((size_t)16 << 20)

void sy_framer_init(struct sy_framer *f, int kind, size_t max_event)
{
    memset(f, 0, sizeof *f);
    if (!max_event)
        max_event = SY_FRAMING_DEFAULT_MAX;
    f->kind = kind;
    f->max_event = max_event;
    size_t cap = max_event < SIZE_MAX ? max_event + 1 : SIZE_MAX;
    sy_buf_init(&f->acc, cap);
    sy_buf_init(&f->data, cap);
}

void sy_framer_free(struct sy_framer *f)
{
    sy_buf_free(&f->acc);
    sy_buf_free(&f->data);
    f->type_len = 0;
    f->saw_cr = 0;
    f->bom_checked = 0;
}

int sy_framer_feed(struct sy_framer *f, const char *p, size_t n, sy_frame_cb cb, void *ud)
{
    switch (f->kind) {
    case 0: return sy_sse_feed(f, p, n, cb, ud);
    case 1: return sy_ndjson_feed(f, p, n, cb, ud);
    case 2: return sy_awses_feed(f, p, n, cb, ud);
    default: return SY_EINTERNAL;
    }
}

int sy_framer_finish(struct sy_framer *f, sy_frame_cb cb, void *ud)
{
    switch (f->kind) {
    case 0: return sy_sse_finish(f, cb, ud);
    case 1: return sy_ndjson_finish(f, cb, ud);
    case 2: return sy_awses_finish(f, cb, ud);
    default: return SY_EINTERNAL;
    }
}
