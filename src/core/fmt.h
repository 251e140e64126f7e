/* fmt.h - number formatting without printf for the request path.
 *
 * glibc's printf reads a double through multi-precision arithmetic: one
 * "%.12g" costs about 2,500 instructions, more than the rest of an answer's
 * head. sy_fmt_g12 writes exactly what snprintf(out, cap, "%.12g", v) writes,
 * from one multiplication by an exact power of ten; the few values whose
 * 13th significant digit cannot be decided in double precision (and those
 * outside 1e-10 <= |v| < 1e15, NaN and infinities) go to snprintf. The unit
 * test compares both on millions of doubles.
 */
#ifndef SY_FMT_H
#define SY_FMT_H

#include <stddef.h>

/* Longest output of sy_fmt_g12, NUL included ("-1.23456789012e-308"). */
#define SY_FMT_G12_MAX 24

/* Write v as "%.12g" into out[SY_FMT_G12_MAX], NUL-terminated; returns the
 * length. */
size_t sy_fmt_g12(char *out, double v);

#endif
