/* arena.c - bump allocator with cleanups; see arena.h. */
#include "core/arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sy_arena_chunk {
    struct sy_arena_chunk *next;
    size_t size;
    _Alignas(16) char data[];
};

struct sy_arena_cleanup {
    struct sy_arena_cleanup *next;
    void (*fn)(void *);
    void *data;
};

void sy_arena_init(struct sy_arena *a)
{
    a->chunks = NULL;
    a->cleanups = NULL;
    a->cur = a->first;
    a->end = a->first + sizeof a->first;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fputs("switchyard: out of memory\n", stderr);
        abort();
    }
    return p;
}

void *sy_arena_alloc(struct sy_arena *a, size_t n)
{
    uintptr_t c = ((uintptr_t)a->cur + 15) & ~(uintptr_t)15;
    if (c + n <= (uintptr_t)a->end && c + n >= c) {
        a->cur = (char *)(c + n);
        return (void *)c;
    }
    size_t sz = n > 8192 ? n : 16384;
    struct sy_arena_chunk *ch = xmalloc(sizeof *ch + sz);
    ch->size = sz;
    ch->next = a->chunks;
    a->chunks = ch;
    if (n > 8192) /* big block: keep the current chunk's free space for small ones */
        return ch->data;
    a->cur = ch->data + n;
    a->end = ch->data + sz;
    return ch->data;
}

char *sy_arena_strndup(struct sy_arena *a, const char *s, size_t n)
{
    char *p = sy_arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

void sy_arena_defer(struct sy_arena *a, void (*fn)(void *), void *data)
{
    struct sy_arena_cleanup *c = sy_arena_alloc(a, sizeof *c);
    c->fn = fn;
    c->data = data;
    c->next = a->cleanups;
    a->cleanups = c;
}

void sy_arena_reset(struct sy_arena *a)
{
    while (a->cleanups) {
        struct sy_arena_cleanup *c = a->cleanups;
        a->cleanups = c->next;
        c->fn(c->data);
    }
    while (a->chunks) {
        struct sy_arena_chunk *ch = a->chunks;
        a->chunks = ch->next;
        free(ch);
    }
    a->cur = a->first;
    a->end = a->first + sizeof a->first;
}
