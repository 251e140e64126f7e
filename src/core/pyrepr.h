/* pyrepr.h - Python's repr(float), repr(str) and json.dumps(str), byte for byte.
 *
 * LiteLLM compatibility needs the exact text CPython prints in many places:
 * error messages ("... 1000.0 ..." and "{'error': '...'}"), the /spend endpoints and
 * /metrics numbers, cache keys and cached values, deployment ids. This is
 * the one implementation; every caller appends to a struct sy_buf and gets
 * sy_buf's 0 / -1 (allocation failure) result.
 *
 *   sy_py_float_repr      float.__repr__ (== str(float)): the shortest digits
 *                         that read back to the same double (ties broken as
 *                         CPython's dtoa mode 0), fixed notation when the
 *                         decimal point position is in (-4, 16], else
 *                         "1e-05" / "1.5e+16" style; "inf", "-inf", "nan",
 *                         "-0.0".
 *   sy_py_str_repr        str.__repr__: single quotes unless the text holds '
 *                         and no "; \\ and the quote escaped; \t \n \r; other
 *                         C0 and DEL as \xHH; non-ASCII kept when
 *                         str.isprintable() (Unicode table of CPython 3.11,
 *                         core/pyprintable.h) is true, else \xHH, \uHHHH or
 *                         \UHHHHHHHH.
 *   sy_py_json_dumps_str  json.dumps(str) with ensure_ascii=True: \" \\ \n \r
 *                         \t \b \f, every other byte outside ' '..'~' as
 *                         \u00HH, non-ASCII as \uHHHH, above U+FFFF as a
 *                         surrogate pair; lowercase hex.
 *   sy_py_json_escape     the same without the enclosing quotes.
 *
 * Input is UTF-8. Bytes that are not valid UTF-8 (overlong forms, encoded
 * surrogates, > U+10FFFF, truncated sequences) are read as CPython's
 * bytes.decode("utf-8", errors="replace") reads them: each maximal invalid
 * subpart becomes one U+FFFD. So the output is always valid UTF-8 (repr) or
 * ASCII (json), whatever the input.
 */
#ifndef SY_PYREPR_H
#define SY_PYREPR_H

#include <stddef.h>

struct sy_buf;

int sy_py_float_repr(struct sy_buf *b, double d);
/* The same into out (NUL-terminated; 32 bytes hold every double's repr),
 * for text put together with snprintf. Returns its length. */
#define SY_PY_FLOAT_MAX 32
size_t sy_py_float_str(char out[SY_PY_FLOAT_MAX], double d);
int sy_py_str_repr(struct sy_buf *b, const char *s, size_t n);
int sy_py_json_dumps_str(struct sy_buf *b, const char *s, size_t n);
int sy_py_json_escape(struct sy_buf *b, const char *s, size_t n);

/* Decode the code point at s[*i] (n > *i) and advance *i; an invalid
 * maximal subpart decodes as U+FFFD. */
unsigned sy_py_utf8_next(const unsigned char *s, size_t n, size_t *i);
/* CPython's str.isprintable() of one code point. */
int sy_py_isprintable(unsigned cp);

#endif
