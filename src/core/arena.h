/* arena.h - per-request memory (after h2o's h2o_mem_pool_t and nginx pools).
 *
 * Everything a request allocates comes from its arena and is released at once
 * by sy_arena_reset()/sy_arena_free(). Non-memory resources register a cleanup
 * that runs (last registered first) before the memory goes. The first chunk is
 * embedded in the arena so small requests never call malloc.
 */
#ifndef SY_ARENA_H
#define SY_ARENA_H

#include <stddef.h>

struct sy_arena_chunk;
struct sy_arena_cleanup;

struct sy_arena {
    struct sy_arena_chunk *chunks; /* extra chunks, newest first */
    struct sy_arena_cleanup *cleanups;
    char *cur, *end; /* free space in the current chunk */
    char first[4096];
};

void sy_arena_init(struct sy_arena *a);
/* Aligned (16) allocation; never NULL (aborts on OOM like h2o). */
void *sy_arena_alloc(struct sy_arena *a, size_t n);
char *sy_arena_strndup(struct sy_arena *a, const char *s, size_t n);
/* Run fn(data) when the arena is reset or freed. */
void sy_arena_defer(struct sy_arena *a, void (*fn)(void *), void *data);
/* Run cleanups, free extra chunks, keep the embedded one for reuse. */
void sy_arena_reset(struct sy_arena *a);
#define sy_arena_free sy_arena_reset

#endif
