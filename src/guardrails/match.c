/* match.c - compiled pattern sets for the guardrail kinds (guardrail.h's
 * sy_gpat, match.h).
 *
 * Two engines, one set:
 *   regexes   PCRE2 in UTF mode with Unicode properties (\d \w \b as Python's
 *             `re` reads them on str), JIT-compiled when the platform has it,
 *             the interpreter otherwise; invalid UTF-8 in a text never matches
 *             instead of failing (PCRE2_MATCH_INVALID_UTF). A match limit and
 *             a depth limit bound what one hostile text can cost: hitting one
 *             makes the scan return -1, and the caller fails closed. Python
 *             syntax LiteLLM configs use and PCRE2 reads otherwise is rewritten
 *             first: `\Z` (end of text only: PCRE2's `\z`) and `{,n}`.
 *   keywords  one Aho-Corasick automaton for all of them, so a thousand
 *             keywords cost one pass, not a thousand: a DFA over byte classes
 *             (the bytes the keywords use, every other byte one class) on the
 *             case-folded text, folded one code point at a time as it is read
 *             (no copy of the text). A ring of the last code points' offsets
 *             maps a match back to the original text; word boundaries are
 *             checked there, as Python's \b (alphanumeric or '_'). Keywords
 *             holding '*' (LiteLLM's wildcard, ".?") become regexes.
 *
 * Thread safety: a compiled set is read-only; match data is per call, the JIT
 * stack per thread (a callback hands each thread its own). */
#include "guardrails/match.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <locale.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "core/buf.h"

#define MATCH_LIMIT   2000000u /* backtracking steps per match attempt */
#define DEPTH_LIMIT   5000u
#define HEAP_LIMIT    20000u      /* KiB */
#define MAX_DFA_CELLS (48u << 20) /* states x classes: bounds a set's automaton (192 MB) */
#define OUT_BIT       0x80000000u /* in a delta cell: the state reached has an output */

struct gre {
    pcre2_code *code;
    pcre2_code *ascii; /* the same without UTF/UCP, for an all-ASCII text; NULL: none */
    int id;
};

struct gkw {
    char *fold; /* folded UTF-8 */
    size_t flen;
    int id;
    unsigned char word_l, word_r; /* check \b at that end */
};

struct sy_gpat {
    struct gre *re;
    size_t nre, capre;
    struct gkw *kw;
    size_t nkw, capkw;
    pcre2_match_context *mctx;
    /* the automaton */
    uint32_t *delta;   /* nstate * ncls: the next state's row (state * ncls), OUT_BIT when it reports */
    int32_t *out;      /* first keyword ending at the state, -1 */
    int32_t *dict;     /* next state on the failure chain with an output, -1 */
    int32_t *kwnext;   /* next keyword ending at the same state, -1 */
    uint8_t cls[256];  /* a folded byte's class */
    uint8_t acls[256]; /* an ASCII byte's class after folding (A-Z read as a-z) */
    uint8_t *pair;     /* 64K bits over raw byte pairs: a keyword may start at the first (skip filter) */
    unsigned ncls;
    size_t nstate;
    size_t ring; /* power of two > longest folded keyword */
    int compiled;
};

/* ---- case folding and word characters ---- */

static pthread_once_t loc_once = PTHREAD_ONCE_INIT;
static locale_t utf8_loc;

static void loc_init(void)
{
    utf8_loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

static unsigned fold_cp(unsigned cp)
{
    if (cp < 0x80)
        return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
    return utf8_loc ? (unsigned)towlower_l((wint_t)cp, utf8_loc) : cp;
}

unsigned sy_gfold_cp(unsigned cp)
{
    pthread_once(&loc_once, loc_init);
    return fold_cp(cp);
}

static int word_cp(unsigned cp)
{
    if (cp < 0x80)
        return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9') || cp == '_';
    return utf8_loc ? iswalnum_l((wint_t)cp, utf8_loc) != 0 : 0;
}

/* Decode the code point at s[i] (an invalid byte is one code point of its own,
 * 0xFFFD); *len gets its byte length. */
static unsigned dec(const unsigned char *s, size_t n, size_t i, size_t *len)
{
    unsigned c = s[i];
    if (c < 0x80) {
        *len = 1;
        return c;
    }
    size_t k = c >= 0xF0 && c < 0xF5 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
    if (!k || i + k > n)
        goto bad;
    unsigned cp = c & (0x7F >> k);
    for (size_t j = 1; j < k; j++) {
        if ((s[i + j] & 0xC0) != 0x80)
            goto bad;
        cp = cp << 6 | (s[i + j] & 0x3F);
    }
    if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp < 0xE000))
        goto bad;
    *len = k;
    return cp;
bad:
    *len = 1;
    return 0xFFFD;
}

/* The code point that ends just before s[i] (i > 0). */
static unsigned dec_prev(const unsigned char *s, size_t n, size_t i)
{
    size_t j = i - 1, stop = i >= 4 ? i - 4 : 0;
    while (j > stop && (s[j] & 0xC0) == 0x80)
        j--;
    size_t len;
    unsigned cp = dec(s, n, j, &len);
    return j + len == i ? cp : 0xFFFD;
}

static size_t enc(unsigned cp, unsigned char *o)
{
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | cp >> 6);
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The folded copy of s (malloc'd), or NULL. */
static char *fold_str(const char *s, size_t n, size_t *outlen)
{
    char *o = malloc(n * 4 + 1);
    if (!o)
        return NULL;
    size_t j = 0;
    for (size_t i = 0, k; i < n; i += k)
        j += enc(fold_cp(dec((const unsigned char *)s, n, i, &k)), (unsigned char *)o + j);
    o[j] = 0;
    *outlen = j;
    return o;
}

/* ---- the JIT stack: one per thread ---- */

static pthread_key_t jit_key;
static pthread_once_t jit_once = PTHREAD_ONCE_INIT;

static void jit_free(void *p)
{
    pcre2_jit_stack_free(p);
}

static void jit_init(void)
{
    pthread_key_create(&jit_key, jit_free);
}

static pcre2_jit_stack *jit_stack_cb(void *ud)
{
    (void)ud;
    pcre2_jit_stack *s = pthread_getspecific(jit_key);
    if (!s) {
        s = pcre2_jit_stack_create(32 * 1024, 1024 * 1024, NULL);
        if (s)
            pthread_setspecific(jit_key, s);
    }
    return s; /* NULL: PCRE2 uses its 32K machine-stack default */
}

/* ---- building ---- */

struct sy_gpat *sy_gpat_new(void)
{
    pthread_once(&loc_once, loc_init);
    pthread_once(&jit_once, jit_init);
    struct sy_gpat *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->mctx = pcre2_match_context_create(NULL);
    if (!p->mctx) {
        free(p);
        return NULL;
    }
    pcre2_set_match_limit(p->mctx, MATCH_LIMIT);
    pcre2_set_depth_limit(p->mctx, DEPTH_LIMIT);
    pcre2_set_heap_limit(p->mctx, HEAP_LIMIT);
    pcre2_jit_stack_assign(p->mctx, jit_stack_cb, NULL);
    return p;
}

/* Python `re` syntax into PCRE2's: \Z -> \z, {,n} -> {0,n}. */
static int translate(const char *re, struct sy_buf *b)
{
    int incls = 0;
    for (size_t i = 0; re[i]; i++) {
        char c = re[i];
        if (c == '\\' && re[i + 1]) {
            if (re[i + 1] == 'Z' && !incls)
                sy_buf_append(b, "\\z", 2);
            else
                sy_buf_append(b, re + i, 2);
            i++;
            continue;
        }
        if (incls) {
            if (c == ']')
                incls = 0;
        } else if (c == '[') {
            incls = 1;
            sy_buf_append(b, re + i, 1);
            if (re[i + 1] == '^')
                sy_buf_append(b, re + ++i, 1);
            if (re[i + 1] == ']') /* a leading ] is literal */
                sy_buf_append(b, re + ++i, 1);
            continue;
        } else if (c == '{' && re[i + 1] == ',') {
            size_t j = i + 2;
            while (re[j] >= '0' && re[j] <= '9')
                j++;
            if (j > i + 2 && re[j] == '}') {
                sy_buf_append(b, "{0", 2);
                continue;
            }
        }
        sy_buf_append(b, &c, 1);
    }
    return sy_buf_failed(b) ? -1 : 0;
}

/* On an all-ASCII text, Unicode mode reads a pattern as byte mode does:
 * \d \w \s \b and the POSIX classes hold the same ASCII characters, caseless
 * letters have no other ASCII case, '.' is one byte. Byte mode lets PCRE2 use
 * its start-of-match bitmap (Unicode \d \w have none), which is most of a
 * regex's cost on prose. Made only for a pattern of plain ASCII without the
 * constructs that name code points or properties (\x{ \p \P \X \N \o{ (*),
 * so nothing can mean otherwise; NULL when there is no such twin. */
static pcre2_code *ascii_twin(const char *re, size_t len, int caseless)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)re[i];
        if (c >= 0x80 || !c)
            return NULL;
        if (c == '(' && i + 1 < len && re[i + 1] == '*')
            return NULL;
        if (c == '\\' && i + 1 < len) {
            char e = re[i + 1];
            if (e == 'p' || e == 'P' || e == 'X' || e == 'N' || e == 'R' || e == 'C' || e == 'o' ||
                (e == 'x' && i + 2 < len && re[i + 2] == '{'))
                return NULL;
            i++;
        }
    }
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)re, len, caseless ? PCRE2_CASELESS : 0, &ec, &eo, NULL);
    if (code)
        pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    return code;
}

static int push_re(struct sy_gpat *p, pcre2_code *code, pcre2_code *ascii, int id)
{
    if (p->nre == p->capre) {
        size_t cap = p->capre ? p->capre * 2 : 8;
        struct gre *n = realloc(p->re, cap * sizeof *n);
        if (!n)
            return -1;
        p->re = n;
        p->capre = cap;
    }
    p->re[p->nre].code = code;
    p->re[p->nre].ascii = ascii;
    p->re[p->nre].id = id;
    p->nre++;
    return 0;
}

static int add_regex_raw(struct sy_gpat *p, const char *re, size_t len, int id, int caseless, char *err, size_t errlen)
{
    int ec;
    PCRE2_SIZE eo;
    uint32_t opt = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | (caseless ? PCRE2_CASELESS : 0);
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)re, len, opt, &ec, &eo, NULL);
    if (!code) {
        if (err && errlen) {
            PCRE2_UCHAR msg[160];
            pcre2_get_error_message(ec, msg, sizeof msg);
            snprintf(err, errlen, "bad regex at offset %zu: %s", (size_t)eo, (const char *)msg);
        }
        return -1;
    }
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); /* no JIT: the interpreter */
    pcre2_code *ascii = ascii_twin(re, len, caseless);
    if (push_re(p, code, ascii, id) < 0) {
        pcre2_code_free(code);
        pcre2_code_free(ascii);
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

int sy_gpat_add_regex(struct sy_gpat *p, const char *re, int id, int caseless, char *err, size_t errlen)
{
    if (!p || !re || p->compiled) {
        if (err && errlen)
            snprintf(err, errlen, "no pattern");
        return -1;
    }
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    int rc = translate(re, &b);
    if (rc == 0)
        rc = add_regex_raw(p, b.p ? b.p : "", b.len, id, caseless, err, errlen);
    else if (err && errlen)
        snprintf(err, errlen, "pattern too long");
    sy_buf_free(&b);
    return rc;
}

/* A keyword with '*' as a regex: escaped, '*' as ".?", \b at the ends in
 * word mode (LiteLLM builds the same). */
static int add_star_keyword(struct sy_gpat *p, const char *kw, int id, int word)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    if (word)
        SY_BUF_LIT(&b, "\\b");
    for (const char *s = kw; *s; s++) {
        if (*s == '*')
            SY_BUF_LIT(&b, ".?");
        else if (strchr("\\^$.|?+()[]{}#", *s) || *s == ' ' || *s == '-')
            sy_buf_printf(&b, "\\%c", *s);
        else
            sy_buf_append(&b, s, 1);
    }
    if (word)
        SY_BUF_LIT(&b, "\\b");
    int rc = sy_buf_failed(&b) ? -1 : add_regex_raw(p, b.p, b.len, id, 1, NULL, 0);
    sy_buf_free(&b);
    return rc;
}

int sy_gpat_add_keyword_mode(struct sy_gpat *p, const char *kw, int id, int mode)
{
    if (!p || !kw || !*kw || p->compiled)
        return -1;
    int phrase = strchr(kw, ' ') != NULL;
    int word = mode == SY_GKW_WORD && !phrase;
    if (mode != SY_GKW_PLAIN && strchr(kw, '*'))
        return add_star_keyword(p, kw, id, word);
    if (p->nkw == p->capkw) {
        size_t cap = p->capkw ? p->capkw * 2 : 16;
        struct gkw *n = realloc(p->kw, cap * sizeof *n);
        if (!n)
            return -1;
        p->kw = n;
        p->capkw = cap;
    }
    struct gkw *k = &p->kw[p->nkw];
    k->fold = fold_str(kw, strlen(kw), &k->flen);
    if (!k->fold)
        return -1;
    k->id = id;
    k->word_l = k->word_r = (unsigned char)word;
    p->nkw++;
    return 0;
}

int sy_gpat_add_keyword(struct sy_gpat *p, const char *kw, int id)
{
    return sy_gpat_add_keyword_mode(p, kw, id, SY_GKW_WORD);
}

/* The automaton: a trie of the folded keywords (children as sorted sibling
 * lists while building), then BFS for the failure links into a dense DFA. */
struct tnode {
    int32_t child, sib; /* first child, next sibling */
    uint8_t byte;
};

/* The skip filter: bit (a << 8 | b) is set when a keyword may start at a raw
 * byte a followed by b: either is not ASCII (folding decides: the automaton
 * reads it), a folded is a one-byte keyword, or a b folded are a keyword's
 * first two bytes. Where it is clear, the scan stays at the root without
 * reading the automaton (see scan_ac). */
static int build_pairs(struct sy_gpat *p, const struct tnode *t)
{
    p->pair = calloc(1, 65536 / 8);
    if (!p->pair)
        return -1;
    uint8_t first[128] = {0}; /* 1 a keyword starts with it, 2 a keyword is it */
    for (int32_t x = t[0].child; x >= 0; x = t[x].sib)
        if (t[x].byte < 0x80)
            first[t[x].byte] = p->out[x] >= 0 ? 2 : 1;
    for (unsigned a = 0; a < 256; a++)
        for (unsigned b = 0; b < 256; b++) {
            int set = a >= 0x80 || b >= 0x80;
            if (!set) {
                unsigned fa = a >= 'A' && a <= 'Z' ? a + 32 : a, fb = b >= 'A' && b <= 'Z' ? b + 32 : b;
                if (first[fa] == 2)
                    set = 1;
                else if (first[fa] == 1) {
                    int32_t x = t[0].child;
                    while (x >= 0 && t[x].byte != fa)
                        x = t[x].sib;
                    for (int32_t y = x >= 0 ? t[x].child : -1; y >= 0 && !set; y = t[y].sib)
                        set = t[y].byte == fb;
                }
            }
            if (set)
                p->pair[(a << 8 | b) >> 3] |= (uint8_t)(1u << (b & 7));
        }
    return 0;
}

/* Renumber the trie's states breadth first (perm, queue: ns scratch cells):
 * the shallow states, where a scan spends nearly all its steps, then share a
 * few cache lines instead of being spread over the whole automaton. */
static int bfs_order(struct tnode *t, int32_t *out, size_t ns, int32_t *perm, int32_t *queue)
{
    struct tnode *nt = malloc(ns * sizeof *nt);
    int32_t *nout = malloc(ns * sizeof *nout);
    if (!nt || !nout) {
        free(nt);
        free(nout);
        return -1;
    }
    size_t qh = 0, qt = 0;
    queue[qt++] = 0;
    while (qh < qt) {
        int32_t s = queue[qh];
        perm[s] = (int32_t)qh++;
        for (int32_t x = t[s].child; x >= 0; x = t[x].sib)
            queue[qt++] = x;
    }
    for (size_t o = 0; o < ns; o++) {
        int32_t n = perm[o];
        nt[n] = t[o];
        nt[n].child = t[o].child >= 0 ? perm[t[o].child] : -1;
        nt[n].sib = t[o].sib >= 0 ? perm[t[o].sib] : -1;
        nout[n] = out[o];
    }
    memcpy(t, nt, ns * sizeof *t);
    memcpy(out, nout, ns * sizeof *out);
    free(nt);
    free(nout);
    return 0;
}

static int build_ac(struct sy_gpat *p, char *err, size_t errlen)
{
    size_t total = 1;
    for (size_t i = 0; i < p->nkw; i++)
        total += p->kw[i].flen;
    memset(p->cls, 0, sizeof p->cls);
    unsigned ncls = 1;
    size_t maxlen = 0;
    for (size_t i = 0; i < p->nkw; i++) {
        for (size_t j = 0; j < p->kw[i].flen; j++) {
            uint8_t c = (uint8_t)p->kw[i].fold[j];
            if (!p->cls[c])
                p->cls[c] = (uint8_t)ncls++;
        }
        if (p->kw[i].flen > maxlen)
            maxlen = p->kw[i].flen;
    }
    if (total * ncls > MAX_DFA_CELLS) {
        if (err && errlen)
            snprintf(err, errlen, "too many keywords (%zu)", p->nkw);
        return -1;
    }
    struct tnode *t = calloc(total, sizeof *t);
    p->out = malloc(total * sizeof *p->out);
    p->dict = malloc(total * sizeof *p->dict);
    p->kwnext = malloc((p->nkw ? p->nkw : 1) * sizeof *p->kwnext);
    int32_t *fail = malloc(total * sizeof *fail), *queue = malloc(total * sizeof *queue);
    if (!t || !p->out || !p->dict || !p->kwnext || !fail || !queue)
        goto nomem;
    size_t ns = 1;
    t[0].child = t[0].sib = -1;
    p->out[0] = -1;
    for (size_t i = 0; i < p->nkw; i++) {
        int32_t s = 0;
        for (size_t j = 0; j < p->kw[i].flen; j++) {
            uint8_t c = (uint8_t)p->kw[i].fold[j];
            int32_t x = t[s].child;
            while (x >= 0 && t[x].byte != c)
                x = t[x].sib;
            if (x < 0) {
                x = (int32_t)ns++;
                t[x].byte = c;
                t[x].child = -1;
                t[x].sib = t[s].child;
                t[s].child = x;
                p->out[x] = -1;
            }
            s = x;
        }
        /* append at the end of the state's list: the first added stays first */
        p->kwnext[i] = -1;
        if (p->out[s] < 0)
            p->out[s] = (int32_t)i;
        else {
            int32_t k = p->out[s];
            while (p->kwnext[k] >= 0)
                k = p->kwnext[k];
            p->kwnext[k] = (int32_t)i;
        }
    }
    if (bfs_order(t, p->out, ns, fail, queue) < 0)
        goto nomem;
    p->delta = malloc(ns * ncls * sizeof *p->delta);
    if (!p->delta)
        goto nomem;
    for (size_t c = 0; c < ncls; c++)
        p->delta[c] = 0;
    for (int32_t x = t[0].child; x >= 0; x = t[x].sib)
        p->delta[p->cls[t[x].byte]] = x;
    size_t qh = 0, qt = 0;
    fail[0] = 0;
    p->dict[0] = -1;
    for (int32_t x = t[0].child; x >= 0; x = t[x].sib) {
        fail[x] = 0;
        p->dict[x] = -1;
        queue[qt++] = x;
    }
    while (qh < qt) {
        int32_t s = queue[qh++];
        uint32_t *row = p->delta + (size_t)s * ncls, *frow = p->delta + (size_t)fail[s] * ncls;
        memcpy(row, frow, ncls * sizeof *row);
        for (int32_t x = t[s].child; x >= 0; x = t[x].sib) {
            int32_t f = (int32_t)frow[p->cls[t[x].byte]];
            fail[x] = f;
            p->dict[x] = p->out[f] >= 0 ? f : p->dict[f];
            row[p->cls[t[x].byte]] = (uint32_t)x;
            queue[qt++] = x;
        }
    }
    /* the cells as the scan reads them: the next state's row, and whether it reports */
    for (size_t c = 0; c < ns * ncls; c++) {
        uint32_t x = p->delta[c];
        p->delta[c] = (uint32_t)(x * ncls) | (p->out[x] >= 0 || p->dict[x] >= 0 ? OUT_BIT : 0);
    }
    for (unsigned b = 0; b < 128; b++)
        p->acls[b] = p->cls[b >= 'A' && b <= 'Z' ? b + 32 : b];
    if (build_pairs(p, t) < 0)
        goto nomem;
    size_t ring = 1;
    while (ring <= maxlen)
        ring <<= 1;
    p->ring = ring;
    p->ncls = ncls;
    p->nstate = ns;
    free(t);
    free(fail);
    free(queue);
    return 0;
nomem:
    free(t);
    free(fail);
    free(queue);
    if (err && errlen)
        snprintf(err, errlen, "out of memory");
    return -1;
}

int sy_gpat_compile(struct sy_gpat *p, char *err, size_t errlen)
{
    if (!p || p->compiled) {
        if (err && errlen)
            snprintf(err, errlen, "no pattern set");
        return -1;
    }
    if (p->nkw && build_ac(p, err, errlen) < 0)
        return -1;
    p->compiled = 1;
    return 0;
}

void sy_gpat_free(struct sy_gpat *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nre; i++) {
        pcre2_code_free(p->re[i].code);
        pcre2_code_free(p->re[i].ascii);
    }
    free(p->re);
    for (size_t i = 0; i < p->nkw; i++)
        free(p->kw[i].fold);
    free(p->kw);
    free(p->delta);
    free(p->pair);
    free(p->out);
    free(p->dict);
    free(p->kwnext);
    pcre2_match_context_free(p->mctx);
    free(p);
}

size_t sy_gpat_count(const struct sy_gpat *p)
{
    return p ? p->nre + p->nkw : 0;
}

/* ---- matching ---- */

/* One regex's successive matches (Python's finditer: an empty match is
 * retried non-empty at the same place, then the scan moves on one code
 * point). Returns the count, -1 on a limit, or -2 when cb stopped. */
static long scan_re(const struct sy_gpat *p, const struct gre *g, const char *text, size_t n, int ascii,
                    pcre2_match_data *md, int (*cb)(void *, const struct sy_gmatch *), void *ud)
{
    const pcre2_code *code = ascii && g->ascii ? g->ascii : g->code;
    long count = 0;
    size_t start = 0;
    uint32_t flags = 0;
    for (;;) {
        int rc = pcre2_match(code, (PCRE2_SPTR)text, n, start, flags, md, p->mctx);
        if (rc == PCRE2_ERROR_NOMATCH) {
            if (!flags)
                break;
            /* no non-empty match here: one code point on */
            size_t k;
            if (start >= n)
                break;
            dec((const unsigned char *)text, n, start, &k);
            start += k;
            flags = 0;
            continue;
        }
        if (rc < 0) {
            count = -1;
            break;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (ov[1] < ov[0]) { /* \K tricks: a match that ends before it starts */
            count = -1;
            break;
        }
        struct sy_gmatch m = {.off = ov[0], .len = ov[1] - ov[0], .id = g->id};
        count++;
        if (cb && cb(ud, &m)) {
            count = -2;
            break;
        }
        start = ov[1];
        flags = ov[0] == ov[1] ? PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED : 0;
        if (flags && start >= n)
            break;
    }
    return count;
}

static int boundary_ok(const struct gkw *k, const unsigned char *s, size_t n, size_t off, size_t end)
{
    size_t len;
    if (k->word_l) {
        int prev = off > 0 && word_cp(dec_prev(s, n, off));
        if (prev == word_cp(dec(s, n, off, &len)))
            return 0;
    }
    if (k->word_r) {
        int next = end < n && word_cp(dec(s, n, end, &len));
        if (next == word_cp(dec_prev(s, n, end)))
            return 0;
    }
    return 1;
}

#define RING_STACK 256

/* The keywords ending at the state whose row is row, each a match ending at
 * end (original bytes; fpos folded bytes read so far). 0 go on, -2 stopped. */
static int report(const struct sy_gpat *p, uint32_t row, const unsigned char *s, size_t n, const size_t *ring,
                  size_t fpos, size_t end, int (*cb)(void *, const struct sy_gmatch *), void *ud, long *count)
{
    int32_t st = (int32_t)(row / p->ncls);
    for (int32_t x = p->out[st] >= 0 ? st : p->dict[st]; x >= 0; x = p->dict[x]) {
        for (int32_t w = p->out[x]; w >= 0; w = p->kwnext[w]) {
            const struct gkw *kw = &p->kw[w];
            size_t off = ring[(fpos - kw->flen) & (p->ring - 1)];
            if ((kw->word_l || kw->word_r) && !boundary_ok(kw, s, n, off, end))
                continue;
            struct sy_gmatch m = {.off = off, .len = end - off, .id = kw->id};
            (*count)++;
            if (cb && cb(ud, &m))
                return -2;
        }
    }
    return 0;
}

/* Every keyword occurrence (overlapping ones too). Count, or -2 stopped, -1 no
 * memory. At the root, the pair filter skips the bytes where no keyword can
 * start without reading the automaton (no dependent load); an ASCII byte is
 * folded and classed by one table read; a cell holds the next row itself and
 * whether it reports, so the inner loop is one load on the state's chain.
 * Bytes of 0x80 and above are decoded, folded and fed as their folded UTF-8.
 * The ring maps a folded position back to the original byte (only bytes the
 * automaton reads are written: no match starts in a skipped byte). */
static long scan_ac(const struct sy_gpat *p, const char *text, size_t n, int (*cb)(void *, const struct sy_gmatch *),
                    void *ud)
{
    size_t stackring[RING_STACK], *ring = stackring;
    if (p->ring > RING_STACK) {
        ring = malloc(p->ring * sizeof *ring);
        if (!ring)
            return -1;
    }
    const unsigned char *s = (const unsigned char *)text;
    const uint8_t *pair = p->pair, *acls = p->acls;
    const size_t mask = p->ring - 1;
    const uint32_t *delta = p->delta;
    long count = 0;
    size_t fpos = 0, i = 0;
    uint32_t row = 0;
    while (i < n) {
        if (row == 0) { /* the root: skip what cannot start a keyword */
            size_t j = i;
            while (j + 1 < n && !(pair[(s[j] << 8 | s[j + 1]) >> 3] & (1u << (s[j + 1] & 7))))
                j++;
            fpos += j - i;
            i = j;
        }
        uint32_t v;
        if (s[i] < 0x80) {
            v = delta[row + acls[s[i]]];
            ring[fpos++ & mask] = i;
            i++;
        } else {
            unsigned char fb[4];
            size_t k, fl = enc(fold_cp(dec(s, n, i, &k)), fb);
            v = row;
            for (size_t j = 0; j < fl; j++) {
                v = delta[(v & ~OUT_BIT) + p->cls[fb[j]]];
                ring[fpos++ & mask] = i;
            }
            i += k;
        }
        row = v & ~OUT_BIT;
        if ((v & OUT_BIT) && report(p, row, s, n, ring, fpos, i, cb, ud, &count) < 0) {
            count = -2;
            break;
        }
    }
    if (ring != stackring)
        free(ring);
    return count;
}

static int all_ascii(const unsigned char *s, size_t n)
{
    uint64_t acc = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        acc |= w;
    }
    for (; i < n; i++)
        acc |= s[i];
    return !(acc & 0x8080808080808080ull);
}

long sy_gpat_scan_all(const struct sy_gpat *p, const char *text, size_t n,
                      int (*cb)(void *ud, const struct sy_gmatch *m), void *ud)
{
    if (!p || !p->compiled || (!text && n))
        return -1;
    if (!text)
        text = "";
    long total = 0;
    if (p->nkw) {
        long c = scan_ac(p, text, n, cb, ud);
        if (c == -1)
            return -1;
        if (c == -2)
            return total + 1;
        total += c;
    }
    if (!p->nre)
        return total;
    /* one match block for every regex: only the whole match's offsets are read (a
     * match with more groups than it holds still reports them, rc 0) */
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md)
        return -1;
    int ascii = all_ascii((const unsigned char *)text, n);
    for (size_t i = 0; i < p->nre; i++) {
        long c = scan_re(p, &p->re[i], text, n, ascii, md, cb, ud);
        if (c < 0) {
            total = c == -1 ? -1 : total + 1;
            break;
        }
        total += c;
    }
    pcre2_match_data_free(md);
    return total;
}

/* sy_gpat_scan: all matches collected, then the leftmost (longest on a tie)
 * non-overlapping ones reported in text order. */
struct coll {
    struct sy_gmatch *m;
    size_t n, cap;
    int oom;
};

static int collect(void *ud, const struct sy_gmatch *m)
{
    struct coll *c = ud;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 32;
        struct sy_gmatch *x = realloc(c->m, cap * sizeof *x);
        if (!x) {
            c->oom = 1;
            return 1;
        }
        c->m = x;
        c->cap = cap;
    }
    c->m[c->n++] = *m;
    return 0;
}

static int by_place(const void *a, const void *b)
{
    const struct sy_gmatch *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    if (x->len != y->len)
        return x->len > y->len ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

long sy_gpat_scan(const struct sy_gpat *p, const char *text, size_t n, int (*cb)(void *ud, const struct sy_gmatch *m),
                  void *ud)
{
    struct coll c = {0};
    long rc = sy_gpat_scan_all(p, text, n, collect, &c);
    if (rc < 0 || c.oom) {
        free(c.m);
        return -1;
    }
    if (c.n > 1)
        qsort(c.m, c.n, sizeof *c.m, by_place);
    long reported = 0;
    size_t last_end = 0;
    int any = 0;
    for (size_t i = 0; i < c.n; i++) {
        const struct sy_gmatch *m = &c.m[i];
        if (any && (m->off < last_end || (m->len == 0 && m->off == last_end && c.m[i - 1].off == m->off)))
            continue;
        any = 1;
        last_end = m->off + m->len;
        reported++;
        if (cb && cb(ud, m))
            break;
    }
    free(c.m);
    return reported;
}
