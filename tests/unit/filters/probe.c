/* probe.c - a dummy response filter added from this one file, seen running
 * in the real gateway (tests/integration/filter-probe.test.mjs).
 *
 * This file's sy_filter_list is src/filters/list.c's plus the probe; linked
 * with src/main.c ahead of the gateway library it replaces list.c in the
 * switchyard_probe binary. No engine file knows the probe. At each call's end
 * it writes one line to stderr:
 *   filter-probe: call=<id> heads=<n> pieces=<n> bytes=<n> status=<s> err=<0|1>
 */
#include <stdio.h>

#include "gateway/filter.h"
#include "gateway/slot.h"

static int probe_slot = -1;

struct probe {
    int heads;
    unsigned pieces;
    size_t bytes;
};

static int start(struct sy_call *c)
{
    return sy_call_slot_new(c, probe_slot, sizeof(struct probe)) != NULL;
}

static void head(struct sy_call *c, int status, const char *ctype, const char *hdrs, size_t n)
{
    struct probe *p = sy_call_slot(c, probe_slot);
    p->heads++;
}

static void data(struct sy_call *c, const char *b, size_t n)
{
    struct probe *p = sy_call_slot(c, probe_slot);
    p->pieces++;
    p->bytes += n;
}

static void end(struct sy_call *c, int status, int err)
{
    const struct probe *p = sy_call_slot(c, probe_slot);
    fprintf(stderr, "filter-probe: call=%s heads=%d pieces=%u bytes=%zu status=%d err=%d\n", c->call_id, p->heads,
            p->pieces, p->bytes, status, err);
}

static const struct sy_filter probe = {
    .name = "probe",
    .routes = SY_FILTER_ROUTE(SY_RK_CHAT) | SY_FILTER_ROUTE(SY_RK_COMPLETIONS),
    .start = start,
    .head = head,
    .data = data,
    .end = end,
    .slot = &probe_slot,
};

extern const struct sy_filter sy_filter_usage, sy_filter_cache_store, sy_filter_responses_store;

const struct sy_filter *const sy_filter_list[] = {&sy_filter_usage, &sy_filter_cache_store, &sy_filter_responses_store,
                                                  &probe};
const size_t sy_filter_count = sizeof sy_filter_list / sizeof sy_filter_list[0];
