/* buf.h - growable byte buffers with a mandatory cap (after curl's dynbuf).
 *
 * A buffer never grows past `cap`; an append that would is refused with
 * SY_ENOSPC and leaves the buffer unchanged. Contents are always followed by a
 * NUL byte (not counted in len) so they can be handed to C string APIs.
 *
 * The error is sticky: the first refused append (SY_ENOSPC, or SY_ENOMEM when
 * realloc fails) is kept in `err`, and every later append, printf or reserve
 * is a no-op that returns it, until sy_buf_reset() or sy_buf_free() starts
 * new contents. So a writer may append a whole JSON document without checking
 * each call and test sy_buf_failed() once before sending it: the contents are
 * then a prefix that ends at the first refusal, never text with a hole in it,
 * and the sender answers with an error instead of truncated JSON. The check
 * costs the fast path nothing: a failed buffer's cap drops to 0, so the
 * inline test that an append fits already refuses it (sy_buf_reset restores
 * the cap). A caller that rolls len back to a mark after a refusal keeps the
 * error: the text is still incomplete.
 *
 *   struct sy_buf b; sy_buf_init(&b, 1 << 20);
 *   sy_buf_append(&b, "data: ", 6); sy_buf_printf(&b, "%d\n", 42);
 *   ... b.p, b.len ...
 *   sy_buf_free(&b);
 */
#ifndef SY_BUF_H
#define SY_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct sy_buf {
    char *p;     /* NULL until the first append */
    size_t len;  /* bytes used */
    size_t size; /* bytes allocated */
    size_t cap;  /* hard limit on len (0 while err is set) */
    size_t cap0; /* the cap given to sy_buf_init, while err is set */
    int err;     /* 0, or the first refusal (SY_ENOSPC / SY_ENOMEM): sticky */
};

void sy_buf_init(struct sy_buf *b, size_t cap);
void sy_buf_free(struct sy_buf *b);
/* Empty the buffer and clear a sticky error. */
void sy__buf_clear_err(struct sy_buf *b);
static inline void sy_buf_reset(struct sy_buf *b)
{
    b->len = 0;
    if (b->p)
        b->p[0] = 0;
    if (b->err)
        sy__buf_clear_err(b);
}
/* The sticky error: 0 while every append so far went in. */
static inline int sy_buf_failed(const struct sy_buf *b)
{
    return b->err;
}
/* Make room for n more bytes; returns 0 or SY_ENOSPC / SY_ENOMEM. */
int sy_buf_reserve(struct sy_buf *b, size_t n);
/* Append n bytes. Inline fast path when they fit the allocation (the common
 * case on the request path: SY_BUF_LIT of a constant becomes a few moves). */
int sy__buf_append_slow(struct sy_buf *b, const void *p, size_t n);
static inline int sy_buf_append(struct sy_buf *b, const void *p, size_t n);
static inline int sy_buf_puts(struct sy_buf *b, const char *s);
int sy_buf_printf(struct sy_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sy_buf_vprintf(struct sy_buf *b, const char *fmt, va_list ap);
/* Append s as the inside of a JSON string (escaped, without quotes). */
int sy_buf_json_escape(struct sy_buf *b, const char *s, size_t n);
/* Append src's contents; a src whose error is set sets b's too (a document
 * assembled from pieces fails as a whole). */
int sy_buf_append_buf(struct sy_buf *b, const struct sy_buf *src);
/* Append a decimal integer. */
int sy_buf_u64(struct sy_buf *b, uint64_t v);
/* Drop the first n bytes (a sticky error stays). */
void sy_buf_consume(struct sy_buf *b, size_t n);

#include <string.h>
static inline int sy_buf_append(struct sy_buf *b, const void *p, size_t n)
{
    if (b->size - b->len > n && b->cap - b->len >= n && b->len <= b->cap) { /* room incl. the NUL */
        memcpy(b->p + b->len, p, n);
        b->len += n;
        b->p[b->len] = 0;
        return 0;
    }
    return sy__buf_append_slow(b, p, n);
}
static inline int sy_buf_puts(struct sy_buf *b, const char *s)
{
    return sy_buf_append(b, s, strlen(s));
}
#define SY_BUF_LIT(b, lit) sy_buf_append((b), "" lit, sizeof(lit) - 1) /* literals only */

#endif
