/* filter.c - the response filter chain (see filter.h).
 *
 * Per config, sy_filters_build flattens the ordered list into one array
 * partitioned by route (off[] as a CSR index): sized by count, no bound. Per
 * call, sy_filter_start_ offers the call to the route's filters and keeps
 * those that link in an array of the call's arena; the hooks walk it.
 */
#include "gateway/filter.h"

#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "gateway/slot.h"
#include "http/server.h"

static int applies(const struct sy_filter *f, const struct sy_gwconf *g, enum sy_route_kind k)
{
    return (f->routes & SY_FILTER_ROUTE(k)) && (!f->enabled || f->enabled(g, k));
}

int sy_filters_build(struct sy_gwconf *g)
{
    size_t total = 0;
    for (size_t i = 0; i < sy_filter_count; i++)
        if (sy_filter_list[i]->slot)
            sy_slot_register(sy_filter_list[i]->slot);
    for (int k = 0; k < SY_RK__COUNT; k++)
        for (size_t i = 0; i < sy_filter_count; i++)
            total += (size_t)applies(sy_filter_list[i], g, (enum sy_route_kind)k);
    struct sy_filter_routes *fr = calloc(1, sizeof *fr);
    if (!fr)
        return -1;
    fr->f = total ? calloc(total, sizeof *fr->f) : NULL;
    if (total && !fr->f) {
        free(fr);
        return -1;
    }
    uint32_t n = 0;
    for (int k = 0; k < SY_RK__COUNT; k++) {
        fr->off[k] = n;
        for (size_t i = 0; i < sy_filter_count; i++)
            if (applies(sy_filter_list[i], g, (enum sy_route_kind)k))
                fr->f[n++] = sy_filter_list[i];
    }
    fr->off[SY_RK__COUNT] = n;
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

void sy_filters_names(const struct sy_gwconf *g, enum sy_route_kind k, char *out, size_t cap)
{
    size_t o = 0;
    if (cap)
        out[0] = 0;
    const struct sy_filter_routes *fr = g->filters;
    if (!fr)
        return;
    for (uint32_t i = fr->off[k]; i < fr->off[k + 1]; i++) {
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

void sy_filter_start_(struct sy_call *c)
{
    const struct sy_filter_routes *fr = c->g->filters;
    uint32_t a = fr->off[c->kind], b = fr->off[c->kind + 1];
    struct sy_fchain *ch = NULL;
    c->fl_started = 1;
    for (uint32_t i = a; i < b; i++) {
        const struct sy_filter *f = fr->f[i];
        if (!f->start(c))
            continue;
        if (!ch) {
            ch = sy_arena_alloc(&c->req->arena, sizeof *ch + (size_t)(b - i) * sizeof ch->f[0]);
            if (!ch)
                return; /* out of memory: the response goes out unobserved */
            ch->n = 0;
        }
        ch->f[ch->n++] = f;
    }
    c->fl = ch;
}

void sy_filter_head_(struct sy_call *c, int status, const char *ctype, const char *hdrs, size_t n)
{
    const struct sy_fchain *ch = c->fl;
    for (unsigned i = 0; i < ch->n; i++)
        if (ch->f[i]->head)
            ch->f[i]->head(c, status, ctype, hdrs, n);
}

void sy_filter_data_(struct sy_call *c, const char *p, size_t n)
{
    const struct sy_fchain *ch = c->fl;
    for (unsigned i = 0; i < ch->n; i++)
        if (ch->f[i]->data)
            ch->f[i]->data(c, p, n);
}

void sy_filter_end_(struct sy_call *c, int status)
{
    const struct sy_fchain *ch = c->fl;
    int err = status < 200 || status >= 300 || c->aborted || c->llm_failed;
    c->fl = NULL; /* once */
    for (unsigned i = 0; i < ch->n; i++)
        if (ch->f[i]->end)
            ch->f[i]->end(c, status, err);
}
