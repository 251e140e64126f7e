/* utf8.h - UTF-8 validity, and JSON text that is always valid UTF-8.
 *
 * One copy of the sequence check (RFC 3629: no overlong forms, no UTF-16
 * surrogates, nothing above U+10FFFF), shared by the management API's input
 * gate (admin/validate.c) and the store's row-to-JSON writer (store/value.c).
 *
 * sy_buf_json_escape (core/buf.h) copies bytes >= 0x80 as they are: the
 * request path escapes text it built or already checked, and stays one pass
 * with no per-byte decoding. The writers here are for text that came from
 * outside and was never checked - rows written before the input gate
 * existed, or by another program into a shared database: each byte that does
 * not start a valid sequence becomes U+FFFD (the replacement a Python or
 * JavaScript decoder with errors="replace" would produce, one per bad byte),
 * so the response is valid JSON whatever the row holds. ASCII runs are
 * skipped a word at a time, so clean text costs little more than the plain
 * escape.
 */
#ifndef SY_UTF8_H
#define SY_UTF8_H

#include <stddef.h>

struct sy_buf;

/* Length of the valid UTF-8 sequence at p[0..n) (1..4), 0 when the bytes
 * there are not one (overlong forms, surrogates and > U+10FFFF included).
 * n must be at least 1. */
size_t sy_utf8_seq(const unsigned char *p, size_t n);
/* Offset of the first byte of s[0..n) that is not valid UTF-8, or n. */
size_t sy_utf8_check(const char *s, size_t n);

/* sy_buf_json_escape that never emits invalid UTF-8: a byte that does not
 * start a valid sequence is written as \ufffd. */
int sy_utf8_json_escape(struct sy_buf *b, const char *s, size_t n);
/* Append s, already JSON text, as is except that a byte that does not start
 * a valid sequence becomes the six characters \ufffd (such bytes can only
 * stand inside a string of otherwise valid JSON, where that is the escape of
 * U+FFFD). */
int sy_utf8_json_raw(struct sy_buf *b, const char *s, size_t n);

#endif
