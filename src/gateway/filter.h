/* filter.h - the response filter chain (h2o's on_setup_ostream, HAProxy's
 * data filters; DESIGN.md §1 and §6).
 *
 * A filter is a const descriptor. Each route gets, once per config, the list
 * of the filters that apply to it (route bit set, enabled() true), in the
 * order of src/filters/list.c, the only file that names them. At the start of
 * a response the engine offers the call to each of them: start() returns 1 to
 * link itself into this call's chain, 0 for "not for me" (it is not called
 * again for this call). A linked filter then sees, in chain order:
 *
 *   head  once: the status, the Content-Type (text/event-stream for a stream)
 *         and the header lines (may be NULL)
 *   data  every body piece as the client gets it (a whole JSON answer is one
 *         piece; a stream's pieces are the SSE bytes written, before the
 *         usage.cost rewrite that the usage filter applies to the writes)
 *   end   once, when the call is accounted: its final status and err (not a
 *         2xx, the client left, or an error frame ended a stream); an error
 *         mid-stream reaches every linked filter's end
 *
 * The chain observes; it does not rewrite. The two transforms of the response
 * path (format translation, gateway/xlate.c, and the usage.cost rewrite,
 * gateway/ustream.c) produce the client's bytes in one pass where they are
 * written: a transform stage in the chain would add a copy per piece on every
 * stream, and neither needs to be ordered against other filters. A filter
 * that must rewrite later (a guardrail) gets a write hook then.
 *
 * Cost: with no filter linked c->out.fl is NULL and every hook site is one test
 * (the inline wrappers below). The lists are kept apart for JSON answers and
 * streams (a filter's .answers): a route whose JSON answers no filter wants
 * (chat without the cache) does not even build a chain for them. The chain is an array of the linked
 * descriptors in the call's arena, allocated at start only when a filter
 * links. A filter's per-call state is its slot (gateway/slot.h).
 *
 * Adding a filter: one file in src/filters/ with its descriptor, one line in
 * src/filters/list.c, its file in src/filters/meson.build.
 */
#ifndef SY_GATEWAY_FILTER_H
#define SY_GATEWAY_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "gateway/gateway.h"

#define SY_FILTER_ROUTE(k) (1u << (k))
/* .answers: which answers a filter is offered (0: both) */
#define SY_FILTER_JSON   1u /* a whole answer (one piece) */
#define SY_FILTER_STREAM 2u /* a stream (SSE, or a raw pass-through answer written as it arrives) */

struct sy_filter {
    const char *name;
    uint32_t routes;  /* SY_FILTER_ROUTE(kind) bits */
    unsigned answers; /* SY_FILTER_JSON | SY_FILTER_STREAM; 0: both */
    /* Whether the config turns the filter on for route k; NULL: always. */
    int (*enabled)(const struct sy_gwconf *g, enum sy_route_kind k);
    /* At response start: 1 links the filter into c's chain, 0 declines. */
    int (*start)(struct sy_call *c);
    /* The hooks; any may be NULL. */
    void (*head)(struct sy_call *c, int status, const char *ctype, const char *hdrs, size_t n);
    void (*data)(struct sy_call *c, const char *p, size_t n);
    void (*end)(struct sy_call *c, int status, int err);
    int *slot; /* its per-call state (gateway/slot.h); NULL: none */
};

/* The ordered list (src/filters/list.c). A binary may link its own list in
 * place of that file (a test's dummy filter): the engine reads only these. */
extern const struct sy_filter *const sy_filter_list[];
extern const size_t sy_filter_count;

/* A config's per-route filters: route k's for a JSON answer (s 0) or a stream
 * (s 1) are f[off[s][k] .. off[s][k + 1]). */
struct sy_filter_routes {
    const struct sy_filter **f;
    uint32_t off[2][SY_RK__COUNT + 1];
};

typedef void (*sy_filter_data_fn)(struct sy_call *c, const char *p, size_t n);

/* The chain linked for one call (its arena): the linked filters, and their
 * data hooks alone (the per-piece loop has no test); heads / ends: some linked
 * filter has that hook (else the hook site calls nothing). */
struct sy_fchain {
    unsigned n, ndata;
    unsigned char heads, ends;
    sy_filter_data_fn *data;
    const struct sy_filter *f[];
};

/* Per config: flatten the list into g->filters (registers the filters' slots
 * the first time; startup builds the first config before workers run). 0, or
 * -1 out of memory. */
int sy_filters_build(struct sy_gwconf *g);
void sy_filters_free(struct sy_gwconf *g);
/* Route k's filter names for a stream (1) or a JSON answer (0), comma-separated, into out. */
void sy_filters_names(const struct sy_gwconf *g, enum sy_route_kind k, int stream, char *out, size_t cap);

void sy_filter_start_(struct sy_call *c, int stream);
void sy_filter_head_(struct sy_call *c, int status, const char *ctype, const char *hdrs, size_t n);
void sy_filter_end_(struct sy_call *c, int status);

/* The response starts, a stream or a JSON answer: build c's chain (once;
 * later calls do nothing). */
static inline void sy_filter_start(struct sy_call *c, int stream)
{
    const struct sy_filter_routes *fr = c->g->filters;
    if (!c->out.fl_started && fr && fr->off[stream][c->kind + 1] != fr->off[stream][c->kind])
        sy_filter_start_(c, stream);
}
static inline void sy_filter_head(struct sy_call *c, int status, const char *ctype, const char *hdrs, size_t n)
{
    if (c->out.fl && c->out.fl->heads)
        sy_filter_head_(c, status, ctype, hdrs, n);
}
static inline void sy_filter_data(struct sy_call *c, const char *p, size_t n)
{
    const struct sy_fchain *ch = c->out.fl;
    if (ch)
        for (unsigned i = 0; i < ch->ndata; i++)
            ch->data[i](c, p, n);
}
/* From sy_call_account: every linked filter's end, once. */
static inline void sy_filter_end(struct sy_call *c, int status)
{
    if (c->out.fl && c->out.fl->ends)
        sy_filter_end_(c, status);
}

#endif
