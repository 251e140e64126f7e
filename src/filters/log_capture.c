/* log_capture.c - the answer the client got, kept for the logging callbacks'
 * record (logging/logging.h; the log stage, stages/log.c, reads it through
 * sy_log_capture when the call is accounted).
 *
 * Linked only when message content is kept (no turn_off_message_logging)
 * and someone reads it: the config submits records (sy_log_enabled), or
 * SpendLogs keeps prompts (store_prompts_in_spend_logs, budget.c).
 * Otherwise the filter is in no route's chain and costs nothing. It
 * observes, never rewrites:
 *
 *   JSON answer   one piece, kept by reference (it lives until the call is
 *                 accounted, and the record copies it then): no copy
 *   stream        the SSE bytes written (before the usage.cost rewrite), or
 *                 a raw pass-through answer's pieces (their buffers do not
 *                 outlive the write), copied up to CAPTURE_MAX; past it the
 *                 rest is dropped and the capture marked cut
 *   other types   audio, images as bytes: not captured (the record's
 *                 response is left empty; a payload is JSON text)
 *
 * The buffer is malloc'd and freed with the request's arena.
 */
#include <string.h>
#include <strings.h>

#include "core/arena.h"
#include "core/buf.h"
#include "gateway/filter.h"
#include "gateway/slot.h"
#include "http/server.h"
#include "logging/logging.h"

#define CAPTURE_MAX (256u << 10)

static int capture_slot = -1;

struct capture {
    struct sy_buf buf; /* copied pieces (a stream, or an answer in several pieces) */
    const char *one;   /* the first piece, by reference, while it is the only one */
    size_t one_len;
    int sse, skip, cut, pieces;
};

static void capture_free(void *p)
{
    struct capture *s = p;
    sy_buf_free(&s->buf);
}

static int enabled(const struct sy_gwconf *g, enum sy_route_kind k)
{
    (void)k;
    const struct sy_config *cfg = g->cfg;
    return !cfg->turn_off_message_logging && (sy_log_enabled(cfg) || (cfg->store_prompts_in_spend_logs && g->db));
}

static int start(struct sy_call *c)
{
    struct capture *s = sy_call_slot_new(c, capture_slot, sizeof *s);
    if (!s)
        return 0;
    sy_buf_init(&s->buf, CAPTURE_MAX);
    sy_arena_defer(&c->req->arena, capture_free, s);
    return 1;
}

static void head(struct sy_call *c, int status, const char *ctype, const char *hdrs, size_t n)
{
    struct capture *s = sy_call_slot(c, capture_slot);
    const char *t = ctype ? ctype : "";
    s->sse = !strncasecmp(t, "text/event-stream", 17);
    s->skip = !s->sse && *t && strncasecmp(t, "application/json", 16) != 0 && strncasecmp(t, "text/", 5) != 0;
}

/* Copy p[0..n) in, up to the cap. */
static void keep(struct capture *s, const char *p, size_t n)
{
    size_t room = CAPTURE_MAX - s->buf.len;
    if (n > room) {
        s->cut = 1;
        n = room;
    }
    if (n && sy_buf_append(&s->buf, p, n) != 0)
        s->cut = 1;
}

static void data(struct sy_call *c, const char *p, size_t n)
{
    struct capture *s = sy_call_slot(c, capture_slot);
    if (s->skip || s->cut || !n)
        return;
    if (!s->sse && !c->pass.raw && !s->pieces++) { /* a whole JSON answer: one piece, by reference */
        s->one = p;
        s->one_len = n;
        return;
    }
    if (s->one) { /* a second piece: the first is copied now */
        keep(s, s->one, s->one_len);
        s->one = NULL;
    }
    keep(s, p, n);
}

const char *sy_log_capture(const struct sy_call *c, size_t *n, int *sse, int *cut)
{
    if (capture_slot < 0 || !c->slots)
        return NULL;
    const struct capture *s = sy_call_slot(c, capture_slot);
    if (!s || s->skip)
        return NULL;
    *sse = s->sse;
    if (s->one) {
        *cut = s->one_len > CAPTURE_MAX;
        *n = s->one_len > CAPTURE_MAX ? CAPTURE_MAX : s->one_len;
        return s->one;
    }
    *cut = s->cut;
    *n = s->buf.len;
    return s->buf.len ? s->buf.p : NULL;
}

const struct sy_filter sy_filter_log_capture = {
    .name = "log_capture",
    .routes = SY_FILTER_ROUTE(SY_RK_MESSAGES + 1) - 1u, /* every LLM route */
    .enabled = enabled,
    .start = start,
    .head = head,
    .data = data,
    .slot = &capture_slot,
};
