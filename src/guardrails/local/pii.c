/* pii.c - the pii_masking guardrail kind: PII found in process and masked
 * (reversibly with output_parse_pii), configured as LiteLLM's presidio
 * guardrail is, so a config moves over by changing `guardrail: presidio` to
 * `guardrail: pii_masking` (switchyard's own kind; LiteLLM has none in
 * process).
 *
 * Detectors (pii.h): one pass over each text. A digit, '+' or '(' at a token
 * boundary starts a "digit groups" token (groups of digits split by one of
 * " -." or a parenthesised area code), read once and classified from its
 * longest prefix of whole groups down: a card number (13-19 digits, groups of
 * 3+ with one separator kind, IIN 2-6, Luhn), an SSN (3-2-4, one separator,
 * SSA rules), an IPv4 address (four dot-separated octets <= 255, no leading
 * zeros), a phone number ("+" and 8-15 digits, or NANP 3-3-4 with an optional
 * 1 and a parenthesised area code). An '@' reads an e-mail address both ways
 * (local part <= 64, domain labels, a letter TLD). An upper-case letter pair
 * and two digits at a boundary read an IBAN of its country's length (spaces
 * between groups allowed, mod 97). A run of hex digits, ':' and '.' with two
 * colons or more is an IPv6 candidate (inet_pton decides). Each attempt reads
 * a bounded window and the next one starts after it, so a text costs O(n).
 *
 * Settings (litellm_params, presidio's names):
 *   pii_entities_config  {ENTITY: MASK | BLOCK}; absent: every entity, MASK
 *                        (presidio analyzes all its recognizers then). An
 *                        entity we do not detect in process (PERSON, ...) is
 *                        refused at load: it would silently pass.
 *   output_parse_pii     placeholders numbered across the request
 *                        (<EMAIL_ADDRESS_1>, <PHONE_NUMBER_2>) and kept as
 *                        pairs: the answer gets the originals back
 *                        (sy_gunmask in the stage). Without it: <EMAIL_ADDRESS>.
 *   apply_to_output      the answer's texts are masked too (post_call).
 *   presidio_score_thresholds  {ENTITY | ALL: score}: a detection whose
 *                        presidio score (sy_pii_entity_score) is lower is
 *                        dropped.
 *   presidio_entities_deny_list  entities never reported.
 * BLOCK answers LiteLLM's BlockedPiiEntityError: "Blocked entity detected:
 * EMAIL_ADDRESS by Guardrail: <name>. This entity is not allowed to be used in
 * this request." (400).
 */
#include <arpa/inet.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "guardrails/guardrail.h"
#include "guardrails/local/pii.h"

/* ---- detectors ---- */

static const char *const entity_names[SY_PII_N] = {
    [SY_PII_EMAIL] = "EMAIL_ADDRESS", [SY_PII_PHONE] = "PHONE_NUMBER", [SY_PII_CARD] = "CREDIT_CARD",
    [SY_PII_IBAN] = "IBAN_CODE",      [SY_PII_IP] = "IP_ADDRESS",      [SY_PII_SSN] = "US_SSN",
};
/* presidio's recognizers: validated e-mail, card and IBAN 1.0, IP 0.6, SSN 0.5, phone 0.4 */
static const double entity_scores[SY_PII_N] = {
    [SY_PII_EMAIL] = 1.0, [SY_PII_PHONE] = 0.4, [SY_PII_CARD] = 1.0,
    [SY_PII_IBAN] = 1.0,  [SY_PII_IP] = 0.6,    [SY_PII_SSN] = 0.5,
};

const char *sy_pii_entity_name(int e)
{
    return e >= 0 && e < SY_PII_N ? entity_names[e] : NULL;
}

int sy_pii_entity_by_name(const char *name)
{
    for (int e = 0; name && e < SY_PII_N; e++)
        if (!strcmp(entity_names[e], name))
            return e;
    return -1;
}

double sy_pii_entity_score(int e)
{
    return e >= 0 && e < SY_PII_N ? entity_scores[e] : 0;
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}
static int is_upper(unsigned char c)
{
    return c >= 'A' && c <= 'Z';
}
static int is_alpha(unsigned char c)
{
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}
static int is_alnum(unsigned char c)
{
    return is_digit(c) || is_alpha(c);
}
static int is_hex(unsigned char c)
{
    return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

int sy_pii_luhn(const char *d, size_t n)
{
    unsigned sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit((unsigned char)d[n - 1 - i]))
            return 0;
        unsigned v = (unsigned)(d[n - 1 - i] - '0');
        if (i & 1) {
            v *= 2;
            if (v > 9)
                v -= 9;
        }
        sum += v;
    }
    return n > 0 && sum % 10 == 0;
}

/* IBAN lengths by country (the SWIFT IBAN registry). */
static const struct {
    char cc[3];
    unsigned char len;
} iban_len[] = {
    {"AD", 24}, {"AE", 23}, {"AL", 28}, {"AT", 20}, {"AZ", 28}, {"BA", 20}, {"BE", 16}, {"BG", 22}, {"BH", 22},
    {"BI", 27}, {"BR", 29}, {"BY", 28}, {"CH", 21}, {"CR", 22}, {"CY", 28}, {"CZ", 24}, {"DE", 22}, {"DJ", 27},
    {"DK", 18}, {"DO", 28}, {"EE", 20}, {"EG", 29}, {"ES", 24}, {"FI", 18}, {"FK", 18}, {"FO", 18}, {"FR", 27},
    {"GB", 22}, {"GE", 22}, {"GI", 23}, {"GL", 18}, {"GR", 27}, {"GT", 28}, {"HR", 21}, {"HU", 28}, {"IE", 22},
    {"IL", 23}, {"IQ", 23}, {"IS", 26}, {"IT", 27}, {"JO", 30}, {"KW", 30}, {"KZ", 20}, {"LB", 28}, {"LC", 32},
    {"LI", 21}, {"LT", 20}, {"LU", 20}, {"LV", 21}, {"LY", 25}, {"MC", 27}, {"MD", 24}, {"ME", 22}, {"MK", 19},
    {"MN", 20}, {"MR", 27}, {"MT", 31}, {"MU", 30}, {"NI", 28}, {"NL", 18}, {"NO", 15}, {"OM", 23}, {"PK", 24},
    {"PL", 28}, {"PS", 29}, {"PT", 25}, {"QA", 29}, {"RO", 24}, {"RS", 22}, {"RU", 33}, {"SA", 24}, {"SC", 31},
    {"SD", 18}, {"SE", 24}, {"SI", 19}, {"SK", 24}, {"SM", 27}, {"SO", 23}, {"ST", 25}, {"SV", 28}, {"TL", 23},
    {"TN", 24}, {"TR", 26}, {"UA", 29}, {"VA", 22}, {"VG", 24}, {"XK", 20}, {"YE", 30},
};

static unsigned iban_country_len(const char *s)
{
    for (size_t i = 0; i < sizeof iban_len / sizeof iban_len[0]; i++)
        if (iban_len[i].cc[0] == s[0] && iban_len[i].cc[1] == s[1])
            return iban_len[i].len;
    return 0;
}

int sy_pii_iban_ok(const char *s, size_t n)
{
    if (n < 15 || n > 34 || !is_upper((unsigned char)s[0]) || !is_upper((unsigned char)s[1]) ||
        !is_digit((unsigned char)s[2]) || !is_digit((unsigned char)s[3]) || iban_country_len(s) != n)
        return 0;
    unsigned rem = 0;
    for (size_t k = 0; k < n; k++) {
        unsigned char c = (unsigned char)s[(k + 4) % n]; /* the first four moved to the end */
        if (is_digit(c))
            rem = (rem * 10 + (unsigned)(c - '0')) % 97;
        else if (is_upper(c))
            rem = (rem * 100 + (unsigned)(c - 'A' + 10)) % 97;
        else
            return 0;
    }
    return rem == 1;
}

int sy_pii_ssn_ok(const char *a, const char *g, const char *s)
{
    char all[10];
    if (strlen(a) != 3 || strlen(g) != 2 || strlen(s) != 4)
        return 0;
    snprintf(all, sizeof all, "%s%s%s", a, g, s);
    for (int i = 0; i < 9; i++)
        if (!is_digit((unsigned char)all[i]))
            return 0;
    int same = 1;
    for (int i = 1; i < 9; i++)
        same &= all[i] == all[0];
    if (same || !strcmp(a, "000") || !strcmp(a, "666") || a[0] == '9' || !strcmp(g, "00") || !strcmp(s, "0000"))
        return 0;
    /* numbers published as examples, never valid (presidio's list) */
    return strcmp(all, "123456789") && strcmp(all, "078051120") && strcmp(all, "219099999");
}

/* A match may end at e: the text ends, or neither a letter/digit nor a
 * '.'/'-' that continues a number follows. */
static int end_ok(const char *t, size_t n, size_t e)
{
    if (e >= n)
        return 1;
    unsigned char c = (unsigned char)t[e];
    if (is_alnum(c) || c == '_')
        return 0;
    return !((c == '.' || c == '-') && e + 1 < n && is_digit((unsigned char)t[e + 1]));
}

static int start_ok(const char *t, size_t i)
{
    if (!i)
        return 1;
    unsigned char c = (unsigned char)t[i - 1];
    if (is_alnum(c) || c == '_' || c == '+')
        return 0;
    return !((c == '.' || c == '-') && i >= 2 && is_digit((unsigned char)t[i - 2]));
}

#define MAXG 12
struct dgroups {
    int plus;
    size_t ng;
    size_t gstart[MAXG], gend[MAXG]; /* digit spans (inside parentheses for a bracketed group) */
    size_t tend[MAXG];               /* where the token ends after group k (closing ')' included) */
    char sep[MAXG];                  /* separator before group k (0: none; '(' marks a bracketed group) */
    int paren[MAXG];
    size_t digits[MAXG]; /* total digits up to group k */
};

/* Read the digit-group token at i ('+', '(' or a digit). */
static void read_groups(const char *t, size_t n, size_t i, struct dgroups *g)
{
    memset(g, 0, sizeof *g);
    if (t[i] == '+') {
        g->plus = 1;
        i++;
    }
    size_t total = 0;
    char sep = 0;
    while (i < n && g->ng < MAXG) {
        int paren = 0;
        size_t j = i;
        if (t[j] == '(') {
            paren = 1;
            j++;
        }
        size_t s = j;
        while (j < n && is_digit((unsigned char)t[j]) && j - s < 20)
            j++;
        if (j == s || (paren && (j >= n || t[j] != ')')))
            break;
        size_t k = g->ng++;
        g->gstart[k] = s;
        g->gend[k] = j;
        g->paren[k] = paren;
        g->sep[k] = sep;
        total += j - s;
        g->digits[k] = total;
        g->tend[k] = paren ? j + 1 : j;
        i = g->tend[k];
        if (total > 24 || i >= n)
            break;
        sep = 0;
        unsigned char c = (unsigned char)t[i];
        if (paren && is_digit(c))
            continue; /* "(555)123-4567" */
        if (c == ' ' || c == '-' || c == '.') {
            sep = (char)c;
            i++;
        } else if (c != '(') {
            break;
        }
        if (i < n && t[i] == ' ' && sep == 0) /* ") " after a bracketed group counts as one separator */
            i++;
    }
}

static size_t glen(const struct dgroups *g, size_t k)
{
    return g->gend[k] - g->gstart[k];
}

static int classify(const char *t, const struct dgroups *g, size_t k)
{
    /* groups 0..k-1 */
    size_t nd = g->digits[k - 1];
    int anyparen = 0;
    char seps = 0;
    int mixed = 0;
    for (size_t i = 0; i < k; i++) {
        anyparen |= g->paren[i];
        if (i && g->sep[i]) {
            if (seps && seps != g->sep[i])
                mixed = 1;
            seps = g->sep[i];
        }
    }
    if (!g->plus && !anyparen && !mixed) {
        /* card */
        int groups_ok = 1;
        for (size_t i = 0; i < k && k > 1; i++)
            groups_ok &= glen(g, i) >= 3;
        if (nd >= 13 && nd <= 19 && groups_ok && seps != '.' && t[g->gstart[0]] >= '2' && t[g->gstart[0]] <= '6') {
            char d[24];
            size_t m = 0;
            for (size_t i = 0; i < k; i++)
                for (size_t j = g->gstart[i]; j < g->gend[i]; j++)
                    d[m++] = t[j];
            if (sy_pii_luhn(d, m))
                return SY_PII_CARD;
        }
        /* SSN */
        if (k == 3 && glen(g, 0) == 3 && glen(g, 1) == 2 && glen(g, 2) == 4 && seps) {
            char a[4], b[3], c[5];
            memcpy(a, t + g->gstart[0], 3), a[3] = 0;
            memcpy(b, t + g->gstart[1], 2), b[2] = 0;
            memcpy(c, t + g->gstart[2], 4), c[4] = 0;
            if (sy_pii_ssn_ok(a, b, c))
                return SY_PII_SSN;
        }
        /* IPv4 */
        if (k == 4 && seps == '.') {
            int ok = 1;
            for (size_t i = 0; i < 4 && ok; i++) {
                size_t l = glen(g, i);
                const char *p = t + g->gstart[i];
                ok = l >= 1 && l <= 3 && !(l > 1 && p[0] == '0');
                if (ok) {
                    unsigned v = 0;
                    for (size_t j = 0; j < l; j++)
                        v = v * 10 + (unsigned)(p[j] - '0');
                    ok = v <= 255;
                }
            }
            if (ok)
                return SY_PII_IP;
        }
    }
    /* phone */
    if (g->plus)
        return nd >= 8 && nd <= 15 && !(k == 1 && nd > 15) ? SY_PII_PHONE : -1;
    size_t f = 0;
    if (k == 4 && glen(g, 0) == 1 && t[g->gstart[0]] == '1' && !g->paren[0])
        f = 1;
    if (k - f == 3 && glen(g, f) == 3 && glen(g, f + 1) == 3 && glen(g, f + 2) == 4 && !g->paren[f + 1] &&
        !g->paren[f + 2] && t[g->gstart[f]] >= '2' && (g->paren[f] || g->sep[f + 1]) && g->sep[f + 2] &&
        g->sep[f + 2] != '(')
        return SY_PII_PHONE;
    return -1;
}

struct hits {
    struct sy_pii_hit *v;
    size_t n, cap;
    int oom;
};

static void add_hit(struct hits *h, size_t off, size_t len, int e)
{
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 16;
        struct sy_pii_hit *nv = realloc(h->v, nc * sizeof *nv);
        if (!nv) {
            h->oom = 1;
            return;
        }
        h->v = nv;
        h->cap = nc;
    }
    h->v[h->n++] = (struct sy_pii_hit){off, len, e};
}

/* Returns the end of what was read (the next scan position). */
static size_t try_digits(const char *t, size_t n, size_t i, unsigned mask, struct hits *h)
{
    struct dgroups g;
    read_groups(t, n, i, &g);
    if (!g.ng)
        return i + 1;
    for (size_t k = g.ng; k >= 1; k--) {
        size_t e = g.tend[k - 1];
        if (!end_ok(t, n, e))
            continue;
        int ent = classify(t, &g, k);
        if (ent >= 0 && (mask & (1u << ent))) {
            add_hit(h, i, e - i, ent);
            return e;
        }
    }
    return g.tend[0] > i ? g.tend[0] : i + 1;
}

static int email_local(unsigned char c)
{
    return is_alnum(c) || (c && strchr("._%+-!#$&'*/=?^`{|}~", c));
}

static size_t try_email(const char *t, size_t n, size_t at, size_t floor, struct hits *h)
{
    size_t s = at;
    while (s > floor && at - s < 64 && email_local((unsigned char)t[s - 1]))
        s--;
    while (s < at && (t[s] == '.' || t[s] == '\'' || t[s] == '`' || t[s] == '{' || t[s] == '|'))
        s++; /* a local part starts with none of these (quotes around an address) */
    if (s == at || t[at - 1] == '.')
        return at + 1;
    size_t j = at + 1, label = 0, dots = 0, last_dot = 0;
    int label_alpha = 1;
    while (j < n && j - at <= 253) {
        unsigned char c = (unsigned char)t[j];
        if (is_alnum(c) || (c == '-' && label)) {
            if (!label)
                label_alpha = 1;
            label_alpha &= is_alpha(c);
            label++;
            j++;
        } else if (c == '.' && label && t[j - 1] != '-' && j + 1 < n && is_alnum((unsigned char)t[j + 1])) {
            dots++;
            last_dot = j;
            label = 0;
            j++;
        } else {
            break;
        }
    }
    /* the TLD: the last label, letters only, two or more */
    if (!dots || j - last_dot - 1 < 2 || !label_alpha || t[j - 1] == '-')
        return at + 1;
    if (j < n && (t[j] == '@' || t[j] == '_'))
        return at + 1;
    add_hit(h, s, j - s, SY_PII_EMAIL);
    return j;
}

static size_t try_iban(const char *t, size_t n, size_t i, struct hits *h)
{
    if (i + 4 > n || !is_upper((unsigned char)t[i + 1]) || !is_digit((unsigned char)t[i + 2]) ||
        !is_digit((unsigned char)t[i + 3]))
        return i + 1;
    unsigned len = iban_country_len(t + i);
    if (!len)
        return i + 1;
    char c[40];
    size_t m = 0, j = i;
    while (j < n && m < len) {
        unsigned char x = (unsigned char)t[j];
        if (is_digit(x) || is_upper(x)) {
            c[m++] = (char)x;
            j++;
        } else if (x == ' ' && m % 4 == 0 && m && j + 1 < n && is_alnum((unsigned char)t[j + 1])) {
            j++;
        } else {
            break;
        }
    }
    if (m != len || !end_ok(t, n, j) || !sy_pii_iban_ok(c, m))
        return i + 1;
    add_hit(h, i, j - i, SY_PII_IBAN);
    return j;
}

static int v6_char(unsigned char c)
{
    return is_hex(c) || c == ':' || c == '.';
}

static size_t try_ipv6(const char *t, size_t n, size_t i, struct hits *h)
{
    size_t j = i, colons = 0;
    while (j < n && v6_char((unsigned char)t[j]) && j - i <= 45)
        colons += t[j++] == ':';
    size_t run_end = j;
    while (j > i && (t[j - 1] == '.' || (t[j - 1] == ':' && !(j - i >= 2 && t[j - 2] == ':'))))
        j--; /* a sentence's '.' or ':' after the address */
    if (colons < 2 || j - i > 45 || j - i < 3 || (run_end < n && is_alnum((unsigned char)t[run_end])) ||
        (run_end < n && t[run_end] == '_'))
        return run_end > i ? run_end : i + 1;
    char buf[48];
    memcpy(buf, t + i, j - i);
    buf[j - i] = 0;
    /* three groups at least: "a::b" reads too much prose and code (std::x) */
    size_t groups = 0;
    for (size_t k = 0; k < j - i; k++)
        if (is_hex((unsigned char)buf[k]) && (k == 0 || !is_hex((unsigned char)buf[k - 1])))
            groups++;
    unsigned char addr[16];
    if (groups >= 3 && inet_pton(AF_INET6, buf, addr) == 1)
        add_hit(h, i, j - i, SY_PII_IP);
    return run_end;
}

static int hit_cmp(const void *a, const void *b)
{
    const struct sy_pii_hit *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->len > y->len ? -1 : x->len < y->len;
}

/* The skip filter's byte classes: what may start a candidate (an '@'; a
 * digit, '+' or '('; a hex digit or ':' and an uppercase letter, these two
 * only after a byte that is not alphanumeric), and the alphanumerics. */
enum { PC_AT = 1, PC_NUM = 2, PC_HEX = 4, PC_UP = 8, PC_ALNUM = 16 };

static uint8_t pclass[256];
static pthread_once_t pclass_once = PTHREAD_ONCE_INIT;

static void pclass_init(void)
{
    for (unsigned c = 0; c < 256; c++)
        pclass[c] =
            (uint8_t)((c == '@' ? PC_AT : 0) | (is_digit((unsigned char)c) || c == '+' || c == '(' ? PC_NUM : 0) |
                      (is_hex((unsigned char)c) || c == ':' ? PC_HEX : 0) | (is_upper((unsigned char)c) ? PC_UP : 0) |
                      (is_alnum((unsigned char)c) ? PC_ALNUM : 0));
}

size_t sy_pii_scan(const char *t, size_t n, unsigned mask, int (*cb)(void *ud, const struct sy_pii_hit *h), void *ud)
{
    struct hits h = {0};
    unsigned num = mask & ((1u << SY_PII_CARD) | (1u << SY_PII_SSN) | (1u << SY_PII_PHONE) | (1u << SY_PII_IP));
    size_t i = 0, digits_next = 0, v6_next = 0, email_floor = 0;
    pthread_once(&pclass_once, pclass_init);
    /* the classes that can start something under this mask; a byte of none of
     * them (or a HEX/UP one inside a word) is passed over without the checks below */
    unsigned want = (mask & (1u << SY_PII_EMAIL) ? PC_AT : 0) | (num ? PC_NUM : 0) |
                    (mask & (1u << SY_PII_IP) ? PC_HEX : 0) | (mask & (1u << SY_PII_IBAN) ? PC_UP : 0);
    while (i < n) {
        for (;;) {
            unsigned k = pclass[(unsigned char)t[i]] & want;
            if (k & (PC_AT | PC_NUM))
                break;
            if (k && (i == 0 || !(pclass[(unsigned char)t[i - 1]] & PC_ALNUM)))
                break;
            if (++i == n)
                goto done;
        }
        unsigned char c = (unsigned char)t[i];
        if (c == '@' && (mask & (1u << SY_PII_EMAIL))) {
            size_t e = try_email(t, n, i, email_floor, &h);
            email_floor = i + 1;
            if (e > i + 1) {
                email_floor = e;
                digits_next = v6_next = e;
            }
            i++;
            continue;
        }
        if (i >= digits_next && num && (is_digit(c) || c == '+' || c == '(') && start_ok(t, i)) {
            size_t e = try_digits(t, n, i, num, &h);
            digits_next = e > i ? e : i + 1;
        }
        if (i >= v6_next && (mask & (1u << SY_PII_IP)) && (is_hex(c) || c == ':') &&
            (i == 0 || !(is_alnum((unsigned char)t[i - 1]) || t[i - 1] == ':' || t[i - 1] == '.' || t[i - 1] == '_'))) {
            size_t e = try_ipv6(t, n, i, &h);
            v6_next = e > i ? e : i + 1;
        }
        if (is_upper(c) && (mask & (1u << SY_PII_IBAN)) && (i == 0 || !is_alnum((unsigned char)t[i - 1]))) {
            size_t e = try_iban(t, n, i, &h);
            if (e > i + 1) {
                i = e;
                digits_next = v6_next = e;
                continue;
            }
        }
        i++;
    }
done:;
    size_t reported = 0;
    if (h.n > 1)
        qsort(h.v, h.n, sizeof *h.v, hit_cmp);
    size_t end = 0;
    for (size_t k = 0; k < h.n; k++) {
        if (h.v[k].off < end && k)
            continue; /* overlaps the one reported before */
        reported++;
        end = h.v[k].off + h.v[k].len;
        if (cb && cb(ud, &h.v[k]))
            break;
    }
    free(h.v);
    return reported;
}

/* ---- the kind ---- */

enum { ACT_NONE, ACT_MASK, ACT_BLOCK };

struct pii_cfg {
    unsigned char action[SY_PII_N];
    unsigned mask;
    double threshold[SY_PII_N]; /* < 0: none */
    int output_parse_pii, apply_to_output;
};

static int pii_open(struct sy_guard *g, struct json_object *params, const struct sy_genv *env, char *err, size_t errlen)
{
    (void)env;
    struct pii_cfg *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int e = 0; e < SY_PII_N; e++)
        c->threshold[e] = -1;
    json_object *v;
    if (params && json_object_object_get_ex(params, "pii_entities_config", &v) && v &&
        json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, key, val)
        {
            int e = sy_pii_entity_by_name(key);
            if (e < 0) {
                snprintf(err, errlen,
                         "pii_entities_config: %s is not detected in process (EMAIL_ADDRESS, PHONE_NUMBER, "
                         "CREDIT_CARD, IBAN_CODE, IP_ADDRESS, US_SSN); use the presidio guardrail for it",
                         key);
                free(c);
                return -1;
            }
            const char *a = val && json_object_is_type(val, json_type_string) ? json_object_get_string(val) : "";
            if (!strcasecmp(a, "MASK"))
                c->action[e] = ACT_MASK;
            else if (!strcasecmp(a, "BLOCK"))
                c->action[e] = ACT_BLOCK;
            else {
                snprintf(err, errlen, "pii_entities_config.%s: action must be MASK or BLOCK", key);
                free(c);
                return -1;
            }
        }
    } else {
        for (int e = 0; e < SY_PII_N; e++)
            c->action[e] = ACT_MASK;
    }
    if (params && json_object_object_get_ex(params, "presidio_entities_deny_list", &v) && v &&
        json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            int e = sy_pii_entity_by_name(json_object_get_string(json_object_array_get_idx(v, i)));
            if (e >= 0)
                c->action[e] = ACT_NONE;
        }
    }
    if (params && json_object_object_get_ex(params, "presidio_score_thresholds", &v) && v &&
        json_object_is_type(v, json_type_object)) {
        double all = -1;
        json_object_object_foreach(v, key, val)
        {
            if (!val || !(json_object_is_type(val, json_type_double) || json_object_is_type(val, json_type_int))) {
                snprintf(err, errlen, "presidio_score_thresholds.%s: a number is needed", key);
                free(c);
                return -1;
            }
            double d = json_object_get_double(val);
            int e = sy_pii_entity_by_name(key);
            if (!strcmp(key, "ALL"))
                all = d;
            else if (e >= 0)
                c->threshold[e] = d;
        }
        for (int e = 0; e < SY_PII_N; e++)
            if (c->threshold[e] < 0)
                c->threshold[e] = all;
    }
    for (int e = 0; e < SY_PII_N; e++)
        if (c->action[e] != ACT_NONE && !(c->threshold[e] >= 0 && entity_scores[e] < c->threshold[e]))
            c->mask |= 1u << e;
    c->output_parse_pii =
        params && json_object_object_get_ex(params, "output_parse_pii", &v) && v && json_object_get_boolean(v);
    c->apply_to_output =
        params && json_object_object_get_ex(params, "apply_to_output", &v) && v && json_object_get_boolean(v);
    g->post_pass = !c->apply_to_output && (g->modes & (SY_GM_PRE | SY_GM_DURING)); /* see pii_check */
    g->impl = c;
    return 0;
}

static void pii_close(struct sy_guard *g)
{
    free(g->impl);
    g->impl = NULL;
}

struct seg_scan {
    const struct pii_cfg *c;
    const char *t;
    struct sy_buf out;
    size_t done;
    unsigned count[SY_PII_N];
    unsigned *seq; /* numbered placeholders: the request-wide counter */
    struct sy_gresult *r;
    int blocked; /* entity + 1 */
    int failed;
    struct sy_buf *detail;
    size_t seg;
    unsigned ndetail;
};

static int on_hit(void *ud, const struct sy_pii_hit *h)
{
    struct seg_scan *s = ud;
    if (s->c->action[h->entity] == ACT_BLOCK) {
        s->blocked = h->entity + 1;
        return 1;
    }
    const char *name = entity_names[h->entity];
    sy_buf_append(&s->out, s->t + s->done, h->off - s->done);
    if (s->seq) {
        char ph[64];
        snprintf(ph, sizeof ph, "<%s_%u>", name, ++*s->seq);
        sy_buf_puts(&s->out, ph);
        if (sy_gresult_pair(s->r, ph, s->t + h->off, h->len) < 0)
            s->failed = 1;
    } else {
        sy_buf_printf(&s->out, "<%s>", name);
    }
    s->done = h->off + h->len;
    s->count[h->entity]++;
    if (s->ndetail++ < 100)
        sy_buf_printf(s->detail, "%s{\"entity_type\":\"%s\",\"segment\":%zu,\"start\":%zu,\"end\":%zu,\"score\":%.1f}",
                      s->ndetail > 1 ? "," : "", name, s->seg, h->off, h->off + h->len, entity_scores[h->entity]);
    return 0;
}

static void pii_check(const struct sy_guard *g, const struct sy_ginput *in, struct sy_gresult *r)
{
    const struct pii_cfg *c = g->impl;
    r->verdict = SY_GV_PASS;
    if (!c || !c->mask)
        return;
    /* the answer: masked only when asked (apply_to_output, or a post_call-only guardrail); the
     * originals of a reversible mask are put back by the stage (sy_gunmask) */
    if (in->phase == SY_GM_POST && !c->apply_to_output && (g->modes & (SY_GM_PRE | SY_GM_DURING)))
        return;
    int numbered = c->output_parse_pii && in->phase != SY_GM_POST;
    unsigned seq = 0, counts[SY_PII_N] = {0};
    struct sy_buf detail;
    sy_buf_init(&detail, 1 << 16);
    sy_buf_puts(&detail, "{\"results\":[");
    unsigned ndetail = 0;
    for (size_t i = 0; i < in->nseg; i++) {
        const struct sy_gseg *sg = &in->seg[i];
        if (!sg->text || !sg->len)
            continue;
        struct seg_scan s = {.c = c,
                             .t = sg->text,
                             .seq = numbered ? &seq : NULL,
                             .r = r,
                             .detail = &detail,
                             .seg = i,
                             .ndetail = ndetail};
        sy_buf_init(&s.out, (size_t)1 << 31);
        size_t found = sy_pii_scan(sg->text, sg->len, c->mask, on_hit, &s);
        ndetail = s.ndetail;
        if (s.blocked) {
            sy_buf_free(&s.out);
            sy_buf_free(&detail);
            sy_gresult_block(r, 400,
                             "Blocked entity detected: %s by Guardrail: %s. This entity is not allowed to be used in "
                             "this request.",
                             entity_names[s.blocked - 1], g->name ? g->name : "None");
            char d[128];
            snprintf(d, sizeof d, "{\"blocked_entity\":\"%s\"}", entity_names[s.blocked - 1]);
            r->detail = strdup(d);
            return;
        }
        if (!found || s.done == 0) {
            sy_buf_free(&s.out);
            continue;
        }
        sy_buf_append(&s.out, sg->text + s.done, sg->len - s.done);
        for (int e = 0; e < SY_PII_N; e++)
            counts[e] += s.count[e];
        if (s.failed || sy_buf_failed(&s.out) || sy_gresult_repl(r, in->nseg) < 0) {
            sy_buf_free(&s.out);
            sy_buf_free(&detail);
            sy_gresult_error(r, "pii_masking: out of memory");
            return;
        }
        if (sg->raw_len) { /* a text with no span of its own cannot be replaced */
            r->repl[i] = s.out.p ? s.out.p : strdup("");
            s.out.p = NULL;
        }
        sy_buf_free(&s.out);
    }
    unsigned total = 0;
    for (int e = 0; e < SY_PII_N; e++)
        total += counts[e];
    if (!total) {
        sy_buf_free(&detail);
        return;
    }
    r->verdict = SY_GV_MASKED;
    r->masked = total;
    sy_buf_puts(&detail, "],\"masked_entity_count\":{");
    int first = 1;
    for (int e = 0; e < SY_PII_N; e++)
        if (counts[e]) {
            sy_buf_printf(&detail, "%s\"%s\":%u", first ? "" : ",", entity_names[e], counts[e]);
            first = 0;
        }
    sy_buf_puts(&detail, "}}");
    if (!sy_buf_failed(&detail)) {
        r->detail = detail.p;
        detail.p = NULL;
    }
    sy_buf_free(&detail);
}

const struct sy_guard_ops sy_guard_pii_masking = {
    .name = "pii_masking",
    .modes = SY_GM_PRE | SY_GM_DURING | SY_GM_POST | SY_GM_LOGGING_ONLY,
    .open = pii_open,
    .close = pii_close,
    .check = pii_check,
};
