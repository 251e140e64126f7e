/* arena.c - bump allocator with cleanups; see arena.h. */
#include "core/arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Under AddressSanitizer every allocation is a chunk of its own, so an
 * overflow from one arena object into the next is reported (a bump allocator
 * would hide it inside one malloc'd block). */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_ASAN 1
#endif
#endif

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
#ifdef ARENA_ASAN
    if (0) {
#else
    if (c + n <= (uintptr_t)a->end && c + n >= c) {
#endif
        a->cur = (char *)(c + n);
        return (void *)c;
    }
#ifdef ARENA_ASAN
    size_t sz = n ? n : 1;
#else
    size_t sz = n > 8192 ? n : 16384;
#endif
    struct sy_arena_chunk *ch = xmalloc(sizeof *ch + sz);
    ch->size = sz;
    ch->next = a->chunks;
    a->chunks = ch;
#ifdef ARENA_ASAN
    return ch->data;
#endif
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
