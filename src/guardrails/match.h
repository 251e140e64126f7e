/* match.h - the matching of guardrail.h's sy_gpat, the parts only the kinds
 * of this folder use: keyword modes and a scan that reports every match.
 *
 * A keyword is one of three modes, after LiteLLM's content filter:
 *   SY_GKW_WORD    its category keywords: a keyword without a space matches on
 *                  word boundaries (\bkw\b), a phrase with one as a substring;
 *                  '*' stands for any one character or none (".?"). This is
 *                  what sy_gpat_add_keyword adds.
 *   SY_GKW_SUBSTR  its blocked_words: a substring, '*' as above.
 *   SY_GKW_PLAIN   a substring, '*' a literal (generated phrase lists).
 * Every mode is case-insensitive (Unicode simple lowercase on both sides). */
#ifndef SY_GUARDRAILS_MATCH_H
#define SY_GUARDRAILS_MATCH_H

#include "guardrails/guardrail.h"

enum { SY_GKW_WORD = 0, SY_GKW_SUBSTR = 1, SY_GKW_PLAIN = 2 };

int sy_gpat_add_keyword_mode(struct sy_gpat *p, const char *kw, int id, int mode);

/* Every match, overlapping ones too (each keyword where it occurs, each
 * regex's successive matches), in no particular order across patterns.
 * Returns the count reported, or -1 (match limit hit: fail closed). */
long sy_gpat_scan_all(const struct sy_gpat *p, const char *text, size_t n,
                      int (*cb)(void *ud, const struct sy_gmatch *m), void *ud);

/* A code point's simple lowercase, as keywords are folded (Unicode). */
unsigned sy_gfold_cp(unsigned cp);

/* How many patterns (regexes and keywords) the set holds. */
size_t sy_gpat_count(const struct sy_gpat *p);

#endif
