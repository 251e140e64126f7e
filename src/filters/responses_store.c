/* responses_store.c - stored Responses (store: true on /v1/responses), a
 * response filter.
 *
 * Links on a /v1/responses call whose answer is built here (a chat
 * deployment translated, or the built-in mock; a deployment with the
 * Responses API stores its own) when the request asked for store and the
 * call has a deployment (gateway/responses.c decides: sy_responses_storing).
 * It saves the Response object the client gets (sy_responses_save):
 *
 *   JSON answer   the one piece is the Response object
 *   stream        the final event, response.completed or response.incomplete,
 *                 carries the whole Response (responses/stream.c writes it as
 *                 sy_resp_stream_final gives it again): its "response" member
 *                 is saved when the event is complete; response.failed is not
 *                 saved
 *
 * The save is queued when the object is seen, before the response ends, so a
 * request with previous_response_id sent after it finds it.
 */
#include <string.h>

#include "core/arena.h"
#include "core/buf.h"
#include "gateway/filter.h"
#include "gateway/slot.h"
#include "gateway/xlate.h"
#include "http/server.h"

#define EVENT_MAX (256u << 20)

static int rstore_slot = -1;

struct rstore {
    struct sy_buf ev; /* the final event's data so far, when split across pieces */
    int in_ev;
    int saved;
    int sse; /* the answer is an SSE stream */
};

static void rstore_free(void *p)
{
    struct rstore *s = p;
    sy_buf_free(&s->ev);
}

static int start(struct sy_call *c)
{
    if (!sy_responses_storing(c) ||
        (c->x && c->x->native && c->x->dl && c->x->dl->native_rewrite) /* a native Responses deployment */)
        return 0;
    struct rstore *s = sy_call_slot_new(c, rstore_slot, sizeof *s);
    if (!s)
        return 0;
    sy_buf_init(&s->ev, EVENT_MAX);
    sy_arena_defer(&c->req->arena, rstore_free, s);
    return 1;
}

/* The data of a final event d[0..n) (its JSON, without the blank line): save its "response". */
static void save_event(struct sy_call *c, struct rstore *s, const char *d, size_t n)
{
    const char *k = memmem(d, n, "\"response\":", 11);
    s->saved = 1;
    if (!k || n < 2 || d[n - 1] != '}')
        return;
    const char *o = k + 11;
    sy_responses_save(c, o, (size_t)(d + n - 1 - o));
}

static const char *final_event(const char *p, size_t n, size_t *skip)
{
    static const char *const names[] = {"event: response.completed\ndata: ", "event: response.incomplete\ndata: "};
    for (int i = 0; i < 2; i++) {
        const char *e = memmem(p, n, names[i], strlen(names[i]));
        if (e) {
            *skip = strlen(names[i]);
            return e;
        }
    }
    return NULL;
}

static void head(struct sy_call *c, int status, const char *ctype, const char *hdrs, size_t n)
{
    struct rstore *s = sy_call_slot(c, rstore_slot);
    s->sse = !strcmp(ctype, "text/event-stream");
}

static void data(struct sy_call *c, const char *p, size_t n)
{
    struct rstore *s = sy_call_slot(c, rstore_slot);
    if (s->saved)
        return;
    if (!s->sse) {
        s->saved = 1;
        sy_responses_save(c, p, n);
        return;
    }
    if (!s->in_ev) {
        size_t skip;
        const char *e = final_event(p, n, &skip);
        if (!e)
            return;
        e += skip;
        n -= (size_t)(e - p);
        p = e;
        s->in_ev = 1;
    }
    const char *end = memmem(p, n, "\n\n", 2);
    size_t take = end ? (size_t)(end - p) : n;
    if (!end || s->ev.len) {
        if (sy_buf_append(&s->ev, p, take) != 0) {
            s->saved = 1; /* over EVENT_MAX: not saved */
            return;
        }
        if (!end)
            return;
        p = s->ev.p;
        take = s->ev.len;
    }
    save_event(c, s, p, take);
}

const struct sy_filter sy_filter_responses_store = {
    .name = "responses_store",
    .routes = SY_FILTER_ROUTE(SY_RK_RESPONSES),
    .start = start,
    .head = head,
    .data = data,
    .slot = &rstore_slot,
};
