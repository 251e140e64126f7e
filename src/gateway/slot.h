/* slot.h - per-request state of a stage or filter (nginx's r->ctx[ctx_index]).
 *
 * A stage or filter that keeps state for one request declares a slot:
 *
 *     static int limits_slot = -1;          in its own file
 *     ... .slot = &limits_slot ...           in its descriptor
 *
 * At startup, before any worker runs, the engine gives every declared slot
 * an index (sy_slot_register, from the ordered list). Each call carries an
 * array of sy_nslots pointers in its arena, all NULL; a stage allocates its
 * state there only when it runs (sy_call_slot_new), so a stage a request does
 * not reach costs nothing but one NULL pointer. The state lives and dies with
 * the request's arena; non-memory resources register arena cleanups.
 */
#ifndef SY_GATEWAY_SLOT_H
#define SY_GATEWAY_SLOT_H

#include <stddef.h>

struct sy_call;

/* Number of registered slots (fixed once workers start). */
extern int sy_nslots;

/* Give *slot an index if it has none yet (-1). Startup only (one thread). */
void sy_slot_register(int *slot);

/* The call's state for slot (NULL until sy_call_slot_new). */
#define sy_call_slot(c, slot) ((c)->slots[(slot)])
/* Allocate size zeroed bytes in the call's arena as its state for slot. */
void *sy_call_slot_new(struct sy_call *c, int slot, size_t size);

#endif
