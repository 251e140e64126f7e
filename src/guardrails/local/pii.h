/* pii.h - in-process PII detectors (local/pii.c): what the pii_masking kind
 * masks, for any kind that wants them.
 *
 * Hand-written scanners, one left-to-right pass, linear in the text (every
 * attempt starts at a token boundary and reads a bounded window): e-mail
 * addresses, phone numbers (international "+" forms and NANP), payment card
 * numbers (13-19 digits, Luhn), IBANs (country length and mod-97), IPv4 and
 * IPv6 addresses, US social security numbers (SSA area/group/serial rules).
 * Entity names are presidio's, so a presidio config's pii_entities_config
 * reads the same.
 */
#ifndef SY_GUARDRAILS_LOCAL_PII_H
#define SY_GUARDRAILS_LOCAL_PII_H

#include <stddef.h>

enum sy_pii_entity {
    SY_PII_EMAIL,
    SY_PII_PHONE,
    SY_PII_CARD,
    SY_PII_IBAN,
    SY_PII_IP,
    SY_PII_SSN,
    SY_PII_N,
};
#define SY_PII_ALL ((1u << SY_PII_N) - 1)

/* presidio's name ("EMAIL_ADDRESS", ...) and back (-1: not one of ours). */
const char *sy_pii_entity_name(int e);
int sy_pii_entity_by_name(const char *name);
/* The score presidio's recognizer gives such a match (for presidio_score_thresholds). */
double sy_pii_entity_score(int e);

struct sy_pii_hit {
    size_t off, len;
    int entity;
};
/* Every entity of mask (bits 1 << enum sy_pii_entity) in t[0..n), in text
 * order, never overlapping (an earlier start wins, then a longer match), to
 * cb (nonzero stops). Returns how many were reported. */
size_t sy_pii_scan(const char *t, size_t n, unsigned mask, int (*cb)(void *ud, const struct sy_pii_hit *h), void *ud);

/* The checks, for other kinds and tests: Luhn over ASCII digits d[0..n) (1:
 * valid); a compact IBAN s[0..n) (letters upper case, no spaces): country
 * length and mod 97 == 1; a US SSN's three parts as digits ("078", "05",
 * "1120"): 1 when the SSA could have issued it. */
int sy_pii_luhn(const char *d, size_t n);
int sy_pii_iban_ok(const char *s, size_t n);
int sy_pii_ssn_ok(const char *area, const char *group, const char *serial);

#endif
