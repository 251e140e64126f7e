/* slot.c - per-request slots (see slot.h). */
#include "gateway/slot.h"

#include <string.h>

#include "core/arena.h"
#include "gateway/gateway.h"
#include "http/server.h"

int sy_nslots;

void sy_slot_register(int *slot)
{
    if (slot && *slot < 0)
        *slot = sy_nslots++;
}

void *sy_call_slot_new(struct sy_call *c, int slot, size_t size)
{
    void *p = sy_arena_alloc(&c->req->arena, size);
    if (p) {
        memset(p, 0, size);
        c->slots[slot] = p;
    }
    return p;
}
