/* unicode_tables.h - Unicode 16.0 character classes used by the pre-tokeniser.
 * The ranges are generated (unicode_tables.c); sy__uc_build() expands them
 * into a flat per-code-point byte table at init. */
#ifndef SY_UNICODE_TABLES_H
#define SY_UNICODE_TABLES_H

#include <stddef.h>
#include <stdint.h>

#define SY_UC_L  1u  /* \p{L} */
#define SY_UC_N  2u  /* \p{N} */
#define SY_UC_M  4u  /* \p{M} */
#define SY_UC_UP 8u  /* [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] */
#define SY_UC_LO 16u /* [\p{Ll}\p{Lm}\p{Lo}\p{M}] */
#define SY_UC_WS 32u /* \s (White_Space) */

extern const uint32_t sy__uc_ranges[][3];
extern const size_t sy__uc_nranges;

#endif
