/* filter.c - the response filter chain (see filter.h).
 *
 * Per config, sy_filters_build flattens the ordered list into one array
 * partitioned by answer kind (JSON, stream) and route (off[][] as a CSR
 * index): sized by count, no bound. Per
 * call, sy_filter_start_ offers the call to the route's filters and keeps
 * those that link in an array of the call's arena; the hooks walk it.
 */
#include "gateway/filter.h"

#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "gateway/slot.h"
#include "http/server.h"

static int applies(const struct sy_filter *f, const struct sy_gwconf *g, enum sy_route_kind k, int stream)
{
    unsigned a = stream ? SY_FILTER_STREAM : SY_FILTER_JSON;
    return (f->routes & SY_FILTER_ROUTE(k)) && (!f->answers || (f->answers & a)) && (!f->enabled || f->enabled(g, k));
}

int sy_filters_build(struct sy_gwconf *g)
{
    size_t total = 0;
    for (size_t i = 0; i < sy_filter_count; i++)
        if (sy_filter_list[i]->slot)
            sy_slot_register(sy_filter_list[i]->slot);
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < SY_RK__COUNT; k++)
            for (size_t i = 0; i < sy_filter_count; i++)
                total += (size_t)applies(sy_filter_list[i], g, (enum sy_route_kind)k, s);
    struct sy_filter_routes *fr = calloc(1, sizeof *fr);
    if (!fr)
        return -1;
    fr->f = total ? calloc(total, sizeof *fr->f) : NULL;
    if (total && !fr->f) {
        free(fr);
        return -1;
    }
    uint32_t n = 0;
    for (int s = 0; s < 2; s++) {
        for (int k = 0; k < SY_RK__COUNT; k++) {
            fr->off[s][k] = n;
            for (size_t i = 0; i < sy_filter_count; i++)
                if (applies(sy_filter_list[i], g, (enum sy_route_kind)k, s))
                    fr->f[n++] = sy_filter_list[i];
        }
        fr->off[s][SY_RK__COUNT] = n;
    }
    g->filters = fr;
    return 0;
}

void sy_filters_free(struct sy_gwconf *g)
{
    if (!g->filters)
        return;
    free(g->filters->f);
    free(g->filters);
    g->filters = NULL;
}

void sy_filters_names(const struct sy_gwconf *g, enum sy_route_kind k, int stream, char *out, size_t cap)
{
    size_t o = 0;
    if (cap)
        out[0] = 0;
    const struct sy_filter_routes *fr = g->filters;
    if (!fr)
        return;
    for (uint32_t i = fr->off[stream][k]; i < fr->off[stream][k + 1]; i++) {
        size_t l = strlen(fr->f[i]->name);
        if (o + l + 2 >= cap)
            break;
        if (o)
            out[o++] = ',';
        memcpy(out + o, fr->f[i]->name, l);
        o += l;
        out[o] = 0;
    }
}

void sy_filter_start_(struct sy_call *c, int stream)
{
    const struct sy_filter_routes *fr = c->g->filters;
    uint32_t a = fr->off[stream][c->kind], b = fr->off[stream][c->kind + 1];
    struct sy_fchain *ch = NULL;
    c->out.fl_started = 1;
    for (uint32_t i = a; i < b; i++) {
        const struct sy_filter *f = fr->f[i];
        if (!f->start(c))
            continue;
        if (!ch) {
            size_t cap = b - i;
            ch = sy_arena_alloc(&c->req->arena, sizeof *ch + cap * (sizeof ch->f[0] + sizeof ch->data[0]));
            if (!ch)
                return; /* out of memory: the response goes out unobserved */
            ch->n = ch->ndata = 0;
            ch->heads = ch->ends = 0;
            ch->data = (sy_filter_data_fn *)(void *)&ch->f[cap];
        }
        ch->f[ch->n++] = f;
        if (f->data)
            ch->data[ch->ndata++] = f->data;
        ch->heads |= f->head != NULL;
        ch->ends |= f->end != NULL;
    }
    c->out.fl = ch;
}

void sy_filter_head_(struct sy_call *c, int status, const char *ctype, const char *hdrs, size_t n)
{
    const struct sy_fchain *ch = c->out.fl;
    for (unsigned i = 0; i < ch->n; i++)
        if (ch->f[i]->head)
            ch->f[i]->head(c, status, ctype, hdrs, n);
}

void sy_filter_end_(struct sy_call *c, int status)
{
    const struct sy_fchain *ch = c->out.fl;
    int err = status < 200 || status >= 300 || c->aborted || c->out.llm_failed;
    c->out.fl = NULL; /* once */
    for (unsigned i = 0; i < ch->n; i++)
        if (ch->f[i]->end)
            ch->f[i]->end(c, status, err);
}
