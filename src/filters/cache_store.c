/* cache_store.c - the response cache's store, a response filter.
 *
 * The lookup stage (stages/cache.c) decides whether a call's response is to
 * be stored (a miss, no no-store); this filter links only then, on the routes
 * the cache serves (chat, text completions, embeddings) with
 * litellm_settings.cache on. It sees the answer as the client gets it:
 *
 *   JSON answer   one piece: kept by reference (it lives until the call is
 *                 accounted), no copy
 *   stream        the SSE bytes written, captured up to CAPTURE_MAX (without
 *                 usage.cost: a hit costs 0), then given up
 *   end           200, the client still there: the response (a stream's
 *                 chunks assembled into one JSON answer) is put under the
 *                 call's key (sy_cache_put: local LRU or Redis)
 */
#include <string.h>

#include "cache/cache.h"
#include "config/config.h"
#include "core/arena.h"
#include "core/buf.h"
#include "gateway/filter.h"
#include "gateway/slot.h"
#include "http/server.h"

/* Responses larger than this are not stored (LiteLLM's in-memory cache has the
 * same per-item cap): assembling a stream and encoding a value run on the
 * loop, and must stay short. */
#define CAPTURE_MAX (1u << 20)

static int store_slot = -1;

struct store {
    struct sy_buf cap; /* stream bytes sent to the client */
    int cap_over;
    int sse;          /* the answer is an SSE stream */
    const char *body; /* a whole answer (one piece) */
    size_t body_len;
};

static void store_free(void *p)
{
    struct store *s = p;
    sy_buf_free(&s->cap);
}

static int enabled(const struct sy_gwconf *g, enum sy_route_kind k)
{
    (void)k;
    return g->cfg->cache;
}

static int start(struct sy_call *c)
{
    if (!sy_cache_will_store(c))
        return 0;
    struct store *s = sy_call_slot_new(c, store_slot, sizeof *s);
    if (!s)
        return 0;
    if (c->in.stream) {
        sy_buf_init(&s->cap, CAPTURE_MAX);
        sy_arena_defer(&c->req->arena, store_free, s);
    }
    return 1;
}

static void head(struct sy_call *c, int status, const char *ctype, const char *hdrs, size_t n)
{
    struct store *s = sy_call_slot(c, store_slot);
    s->sse = !strcmp(ctype, "text/event-stream");
}

static void data(struct sy_call *c, const char *p, size_t n)
{
    struct store *s = sy_call_slot(c, store_slot);
    if (!s->sse) {
        s->body = p;
        s->body_len = n;
        return;
    }
    if (s->cap_over)
        return;
    if (sy_buf_append(&s->cap, p, n) != 0) {
        s->cap_over = 1;
        sy_buf_free(&s->cap);
    }
}

static void end(struct sy_call *c, int status, int err)
{
    struct store *s = sy_call_slot(c, store_slot);
    if (err || status != 200)
        return;
    struct sy_buf resp;
    sy_buf_init(&resp, 64u << 20);
    const char *p = s->body;
    size_t n = s->body_len;
    if (c->in.stream) { /* a stream answered with JSON is not stored */
        if (!s->sse || s->cap_over || !s->cap.len || sy_cache_sse_assemble(s->cap.p, s->cap.len, &resp) != 0) {
            sy_buf_free(&resp);
            return;
        }
        p = resp.p;
        n = resp.len;
    }
    if (p && n && n <= CAPTURE_MAX)
        sy_cache_put(c, p, n);
    sy_buf_free(&resp);
}

const struct sy_filter sy_filter_cache_store = {
    .name = "cache_store",
    .routes = SY_FILTER_ROUTE(SY_RK_CHAT) | SY_FILTER_ROUTE(SY_RK_COMPLETIONS) | SY_FILTER_ROUTE(SY_RK_EMBEDDINGS),
    .enabled = enabled,
    .start = start,
    .head = head,
    .data = data,
    .end = end,
    .slot = &store_slot,
};
