/* test_match.c - the guardrails' pattern sets (src/guardrails/match.c):
 * regexes with Python's syntax and Unicode classes, keywords in one automaton
 * (word boundaries as Python's \b, Unicode case, '*' wildcards), the order and
 * overlap rules of sy_gpat_scan, the match limit on a hostile pattern, invalid
 * UTF-8, and the cost per KB of a thousand keywords (printed, never asserted). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "guardrails/guardrail.h"
#include "guardrails/match.h"

struct got {
    struct sy_gmatch m[64];
    size_t n;
};

static int keep(void *ud, const struct sy_gmatch *m)
{
    struct got *g = ud;
    if (g->n < 64)
        g->m[g->n++] = *m;
    return 0;
}

static struct sy_gpat *regex1(const char *re, int caseless)
{
    struct sy_gpat *p = sy_gpat_new();
    char err[256];
    assert_non_null(p);
    assert_int_equal(sy_gpat_add_regex(p, re, 7, caseless, err, sizeof err), 0);
    assert_int_equal(sy_gpat_compile(p, err, sizeof err), 0);
    return p;
}

static long scan_str(const struct sy_gpat *p, const char *t, struct got *g)
{
    memset(g, 0, sizeof *g);
    return sy_gpat_scan(p, t, strlen(t), keep, g);
}

static void test_regex_basics(void **state)
{
    (void)state;
    struct got g;
    struct sy_gpat *p = regex1("\\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Z|a-z]{2,}\\b", 0);
    assert_int_equal(scan_str(p, "mail a@b.io and c.d@e.org now", &g), 2);
    assert_int_equal(g.m[0].off, 5);
    assert_int_equal(g.m[0].len, 6);
    assert_int_equal(g.m[0].id, 7);
    assert_int_equal(g.m[1].off, 16);
    assert_int_equal(scan_str(p, "nothing here", &g), 0);
    sy_gpat_free(p);

    /* caseless, as LiteLLM compiles its regexes (re.IGNORECASE) */
    p = regex1("secret", 1);
    assert_int_equal(scan_str(p, "A SeCrEt", &g), 1);
    assert_int_equal(g.m[0].off, 2);
    sy_gpat_free(p);
    p = regex1("secret", 0);
    assert_int_equal(scan_str(p, "A SeCrEt", &g), 0);
    sy_gpat_free(p);
}

static void test_python_syntax(void **state)
{
    (void)state;
    struct got g;
    /* named groups, \Z (end of text only, not before a final newline), {,n} */
    struct sy_gpat *p = regex1("(?P<word>abc)(?P=word)", 0);
    assert_int_equal(scan_str(p, "xabcabcx", &g), 1);
    sy_gpat_free(p);
    p = regex1("end\\Z", 0);
    assert_int_equal(scan_str(p, "the end", &g), 1);
    assert_int_equal(scan_str(p, "the end\n", &g), 0);
    sy_gpat_free(p);
    p = regex1("^a{,2}$", 0);
    assert_int_equal(scan_str(p, "aa", &g), 1);
    assert_int_equal(scan_str(p, "aaa", &g), 0);
    sy_gpat_free(p);
    p = regex1("(?i)token", 0);
    assert_int_equal(scan_str(p, "TOKEN", &g), 1);
    sy_gpat_free(p);
    /* \d and \w are Unicode, as Python's on str: Arabic-Indic digits, e-acute */
    p = regex1("^\\d{3}$", 0);
    assert_int_equal(scan_str(p, "\xd9\xa1\xd9\xa2\xd9\xa3", &g), 1);
    sy_gpat_free(p);
    p = regex1("\\bcaf\\w\\b", 0);
    assert_int_equal(scan_str(p, "un caf\xc3\xa9 noir", &g), 1);
    assert_int_equal(g.m[0].len, 5);
    sy_gpat_free(p);

    char err[256];
    p = sy_gpat_new();
    assert_int_equal(sy_gpat_add_regex(p, "(unclosed", 1, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "bad regex"));
    sy_gpat_free(p);
}

static void test_empty_matches_end(void **state)
{
    (void)state;
    struct got g;
    /* an empty-matching regex advances (Python's finditer): n+1 matches, no loop */
    struct sy_gpat *p = regex1("x*", 0);
    long n = scan_str(p, "ab\xc3\xa9", &g);
    assert_true(n >= 1 && n <= 4);
    sy_gpat_free(p);
}

static void test_match_limit(void **state)
{
    (void)state;
    /* exponential backtracking: the limit stops it and the scan fails closed */
    struct sy_gpat *p = regex1("^(\\w+\\s?)*$", 0);
    char text[4096];
    memset(text, 'a', sizeof text - 2);
    text[sizeof text - 2] = '!';
    text[sizeof text - 1] = 0;
    struct got g;
    assert_int_equal(scan_str(p, text, &g), -1);
    sy_gpat_free(p);
}

static void test_invalid_utf8(void **state)
{
    (void)state;
    struct got g;
    struct sy_gpat *p = regex1("bomb", 1);
    const char t[] = "\xff\xfe bomb \xc3\x28 BOMB \xed\xa0\x80";
    memset(&g, 0, sizeof g);
    assert_int_equal(sy_gpat_scan(p, t, sizeof t - 1, keep, &g), 2);
    sy_gpat_free(p);

    p = sy_gpat_new();
    sy_gpat_add_keyword(p, "bomb", 1);
    assert_int_equal(sy_gpat_compile(p, NULL, 0), 0);
    memset(&g, 0, sizeof g);
    assert_int_equal(sy_gpat_scan(p, t, sizeof t - 1, keep, &g), 2);
    assert_int_equal(g.m[0].off, 3);
    sy_gpat_free(p);
}

static struct sy_gpat *kwset(const char *const *kw, size_t n, int mode)
{
    struct sy_gpat *p = sy_gpat_new();
    for (size_t i = 0; i < n; i++)
        assert_int_equal(sy_gpat_add_keyword_mode(p, kw[i], (int)i, mode), 0);
    char err[128];
    assert_int_equal(sy_gpat_compile(p, err, sizeof err), 0);
    return p;
}

static void test_keyword_boundaries(void **state)
{
    (void)state;
    struct got g;
    const char *const kw[] = {"kill", "end life", "pro-ana"};
    struct sy_gpat *p = kwset(kw, 3, SY_GKW_WORD);
    /* a word: not inside another word; a phrase: a substring */
    assert_int_equal(scan_str(p, "skills killer", &g), 0);
    assert_int_equal(scan_str(p, "Kill! now", &g), 1);
    assert_int_equal(g.m[0].off, 0);
    assert_int_equal(g.m[0].len, 4);
    assert_int_equal(scan_str(p, "wend lifetime", &g), 1);
    assert_int_equal(g.m[0].id, 1);
    assert_int_equal(scan_str(p, "PRO-ANA tips", &g), 1);
    assert_int_equal(scan_str(p, "_kill_", &g), 0);       /* '_' is a word character */
    assert_int_equal(scan_str(p, "kill\xc3\xa9", &g), 0); /* so is e-acute */
    /* a combining accent is no word character for Python: \b before it */
    assert_int_equal(scan_str(p, "kill\xcc\x81", &g), 1);
    sy_gpat_free(p);

    /* substring mode (blocked_words) matches inside words */
    const char *const bw[] = {"blue"};
    p = kwset(bw, 1, SY_GKW_SUBSTR);
    assert_int_equal(scan_str(p, "BLUEtooth", &g), 1);
    sy_gpat_free(p);
}

static void test_keyword_unicode_case(void **state)
{
    (void)state;
    struct got g;
    const char *const kw[] = {"caf\xc3\xa9", "\xd0\xb1\xd0\xbe\xd0\xbc\xd0\xb1\xd0\xb0"}; /* café, бомба */
    struct sy_gpat *p = kwset(kw, 2, SY_GKW_WORD);
    assert_int_equal(scan_str(p, "Un CAF\xc3\x89 et une \xd0\x91\xd0\x9e\xd0\x9c\xd0\x91\xd0\x90.", &g), 2);
    assert_int_equal(g.m[0].off, 3);
    assert_int_equal(g.m[0].len, 5);
    assert_int_equal(g.m[1].id, 1);
    assert_int_equal(g.m[1].len, 10);
    sy_gpat_free(p);
}

static void test_keyword_star(void **state)
{
    (void)state;
    struct got g;
    const char *const kw[] = {"f*ggot"};
    struct sy_gpat *p = kwset(kw, 1, SY_GKW_WORD);
    assert_int_equal(scan_str(p, "fggot", &g), 1);
    assert_int_equal(scan_str(p, "F@GGOT", &g), 1);
    assert_int_equal(scan_str(p, "faaggot", &g), 0);
    assert_int_equal(scan_str(p, "xfaggot", &g), 0);
    sy_gpat_free(p);
    /* plain mode: '*' is itself */
    p = kwset(kw, 1, SY_GKW_PLAIN);
    assert_int_equal(scan_str(p, "fxggot", &g), 0);
    assert_int_equal(scan_str(p, "f*ggot", &g), 1);
    sy_gpat_free(p);
}

static void test_overlaps(void **state)
{
    (void)state;
    struct got g;
    const char *const kw[] = {"he", "she", "hers", "his"};
    struct sy_gpat *p = kwset(kw, 4, SY_GKW_SUBSTR);
    /* scan: leftmost, longest, non-overlapping; scan_all: every occurrence */
    assert_int_equal(scan_str(p, "ushers", &g), 1);
    assert_int_equal(g.m[0].off, 1);
    assert_int_equal(g.m[0].id, 1);
    memset(&g, 0, sizeof g);
    assert_int_equal(sy_gpat_scan_all(p, "ushers", 6, keep, &g), 3);
    sy_gpat_free(p);

    /* regexes and keywords in one set, reported in text order */
    p = sy_gpat_new();
    char err[128];
    sy_gpat_add_keyword(p, "alpha", 1);
    sy_gpat_add_regex(p, "\\d+", 2, 0, err, sizeof err);
    assert_int_equal(sy_gpat_compile(p, err, sizeof err), 0);
    assert_int_equal(scan_str(p, "12 alpha 345", &g), 3);
    assert_int_equal(g.m[0].id, 2);
    assert_int_equal(g.m[1].id, 1);
    assert_int_equal(g.m[2].off, 9);
    assert_int_equal(sy_gpat_count(p), 2);
    sy_gpat_free(p);
}

static void test_misuse(void **state)
{
    (void)state;
    struct sy_gpat *p = sy_gpat_new();
    assert_int_equal(sy_gpat_add_keyword(p, "", 1), -1);
    assert_int_equal(sy_gpat_compile(p, NULL, 0), 0);
    assert_int_equal(sy_gpat_scan(p, "text", 4, NULL, NULL), 0); /* an empty set */
    assert_int_equal(sy_gpat_add_keyword(p, "late", 1), -1);     /* after compile */
    assert_int_equal(sy_gpat_compile(p, NULL, 0), -1);
    sy_gpat_free(p);
    sy_gpat_free(NULL);
    assert_int_equal(sy_gpat_scan(NULL, "x", 1, NULL, NULL), -1);
}

static int stop_first(void *ud, const struct sy_gmatch *m)
{
    (void)m;
    (*(int *)ud)++;
    return 1;
}

/* A thousand keywords over 1 MB: one pass; the cost is printed. */
static void test_many_keywords_1mb(void **state)
{
    (void)state;
    struct sy_gpat *p = sy_gpat_new();
    char kw[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(kw, sizeof kw, "word%dx", i);
        assert_int_equal(sy_gpat_add_keyword(p, kw, i), 0);
    }
    assert_int_equal(sy_gpat_compile(p, NULL, 0), 0);
    size_t n = 1 << 20;
    char *t = malloc(n + 16);
    const char *fill = "the quick brown fox jumps over the lazy dog, word12 word999 ";
    for (size_t i = 0; i < n; i++)
        t[i] = fill[i % strlen(fill)];
    memcpy(t + n - 9, " word42x", 8);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    struct got g;
    memset(&g, 0, sizeof g);
    long c = sy_gpat_scan(p, t, n - 1, keep, &g);
    clock_gettime(CLOCK_MONOTONIC, &b);
    assert_int_equal(c, 1);
    assert_int_equal(g.m[0].id, 42);
    double us = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
    printf("# 1000 keywords: %.2f us/KB\n", us / 1024.0);
    int calls = 0;
    memcpy(t, "word1x word2x ", 14);
    assert_int_equal(sy_gpat_scan_all(p, t, n - 1, stop_first, &calls), 1);
    assert_int_equal(calls, 1);
    free(t);
    sy_gpat_free(p);
}

/* ---- the automaton against a plain search ---- */

/* pieces texts and keywords are made of: ASCII in both cases, a space, and
 * code points whose folded form differs in length or is ASCII (U+212A KELVIN
 * SIGN folds to 'k', U+0130 to "i̇" in three bytes), plus a stray byte */
static const char *const PIECE[] = {"a",        "b", "k",   "A", "B", "K", " ", "\xc3\xa9", "\xc3\x89", "\xe2\x84\xaa",
                                    "\xc4\xb0", "i", "\xff"};
#define NPIECE (sizeof PIECE / sizeof *PIECE)

struct hit {
    size_t off, len;
    int id;
};
struct hits {
    struct hit v[4096];
    size_t n;
};

static int take(void *ud, const struct sy_gmatch *m)
{
    struct hits *h = ud;
    assert_true(h->n < 4096);
    h->v[h->n++] = (struct hit){m->off, m->len, m->id};
    return 0;
}

static int hit_cmp(const void *a, const void *b)
{
    const struct hit *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* the folded text, and for each folded byte the original code point's start and end */
static size_t fold_map(const char *t, size_t n, char *f, size_t *cs, size_t *ce)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        const unsigned char *u = (const unsigned char *)t + i;
        size_t k = u[0] < 0x80 ? 1 : (u[0] & 0xE0) == 0xC0 ? 2 : (u[0] & 0xF0) == 0xE0 ? 3 : 1;
        unsigned cp = u[0];
        if (k == 2)
            cp = (u[0] & 0x1Fu) << 6 | (u[1] & 0x3Fu);
        else if (k == 3)
            cp = (u[0] & 0x0Fu) << 12 | (u[1] & 0x3Fu) << 6 | (u[2] & 0x3Fu);
        else if (u[0] >= 0x80)
            cp = 0xFFFD;
        unsigned fc = sy_gfold_cp(cp);
        char e[4];
        size_t el;
        if (fc < 0x80) {
            e[0] = (char)fc;
            el = 1;
        } else if (fc < 0x800) {
            e[0] = (char)(0xC0 | fc >> 6);
            e[1] = (char)(0x80 | (fc & 0x3F));
            el = 2;
        } else {
            e[0] = (char)(0xE0 | fc >> 12);
            e[1] = (char)(0x80 | ((fc >> 6) & 0x3F));
            e[2] = (char)(0x80 | (fc & 0x3F));
            el = 3;
        }
        for (size_t j = 0; j < el; j++) {
            f[o] = e[j];
            cs[o] = i;
            ce[o] = i + k;
            o++;
        }
        i += k;
    }
    return o;
}

/* Random keyword sets (plain and substring mode) and texts: every match the
 * automaton (with its pair filter) reports is the plain search's, and none is
 * missed. A match is a folded keyword occurring in the folded text and ending
 * where a code point's folded bytes end, reported over the original bytes. */
static void test_automaton_vs_plain_search(void **state)
{
    (void)state;
    srand(23);
    for (int round = 0; round < 300; round++) {
        struct sy_gpat *p = sy_gpat_new();
        char kw[12][32], fk[12][128];
        size_t fkl[12], nkw = 1 + (size_t)rand() % 12;
        size_t cs[4096], ce[4096];
        for (size_t k = 0; k < nkw; k++) {
            kw[k][0] = 0;
            size_t len = 1 + (size_t)rand() % 4;
            for (size_t j = 0; j < len; j++)
                strcat(kw[k], PIECE[(size_t)rand() % (NPIECE - 1)]); /* no stray byte in a keyword */
            assert_int_equal(sy_gpat_add_keyword_mode(p, kw[k], (int)k, round & 1 ? SY_GKW_PLAIN : SY_GKW_SUBSTR), 0);
            fkl[k] = fold_map(kw[k], strlen(kw[k]), fk[k], cs, ce);
        }
        assert_int_equal(sy_gpat_compile(p, NULL, 0), 0);
        for (int tr = 0; tr < 20; tr++) {
            char text[1024] = "";
            size_t np = (size_t)rand() % 200;
            for (size_t j = 0; j < np; j++)
                strcat(text, PIECE[(size_t)rand() % NPIECE]);
            size_t n = strlen(text);
            char f[4096];
            size_t fl = fold_map(text, n, f, cs, ce);
            static struct hits want, got;
            want.n = got.n = 0;
            for (size_t k = 0; k < nkw; k++)
                for (size_t a = 0; a + fkl[k] <= fl; a++) {
                    size_t z = a + fkl[k];
                    if (memcmp(f + a, fk[k], fkl[k]) || (z < fl && cs[z] == cs[z - 1]))
                        continue; /* not there, or ends inside a code point's folded bytes */
                    want.v[want.n++] = (struct hit){cs[a], ce[z - 1] - cs[a], (int)k};
                }
            assert_true(sy_gpat_scan_all(p, text, n, take, &got) >= 0);
            qsort(want.v, want.n, sizeof *want.v, hit_cmp);
            qsort(got.v, got.n, sizeof *got.v, hit_cmp);
            assert_int_equal(got.n, want.n);
            for (size_t j = 0; j < got.n; j++) {
                assert_int_equal(got.v[j].off, want.v[j].off);
                assert_int_equal(got.v[j].len, want.v[j].len);
                assert_int_equal(got.v[j].id, want.v[j].id);
            }
        }
        sy_gpat_free(p);
    }
}

/* A regex reads an all-ASCII text through its byte-mode twin: the matches are
 * the ones the Unicode-mode pattern finds in the same text once a non-ASCII
 * code point follows it (which sends the scan through the Unicode pattern). */
static void test_regex_ascii_twin(void **state)
{
    (void)state;
    static const char *const RE[] = {"\\b\\d{3}-\\d{2}-\\d{4}\\b",
                                     "\\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Z|a-z]{2,}\\b",
                                     "\\w+\\s\\w+",
                                     "[[:alpha:]]{3}\\b",
                                     "(?i)key",
                                     "x*"};
    static const char *const TEXT[] = {"mail bob.smith@example.com or 123-45-6789 now\t ok",
                                       "KEY key Key kEy 12 a_b __ x xx", "no match here at all 000-00-0000x"};
    for (size_t r = 0; r < sizeof RE / sizeof *RE; r++)
        for (size_t t = 0; t < sizeof TEXT / sizeof *TEXT; t++) {
            struct sy_gpat *p = sy_gpat_new();
            char err[128];
            assert_int_equal(sy_gpat_add_regex(p, RE[r], 0, 1, err, sizeof err), 0);
            assert_int_equal(sy_gpat_compile(p, err, sizeof err), 0);
            static struct hits a, u;
            a.n = u.n = 0;
            char wide[256];
            size_t n = strlen(TEXT[t]);
            snprintf(wide, sizeof wide, "%s\n\n\xc3\xa9", TEXT[t]);
            assert_true(sy_gpat_scan_all(p, TEXT[t], n, take, &a) >= 0);
            assert_true(sy_gpat_scan_all(p, wide, strlen(wide), take, &u) >= 0);
            size_t k = 0;
            for (size_t j = 0; j < u.n; j++)
                if (u.v[j].off + u.v[j].len < n || (u.v[j].off + u.v[j].len == n && u.v[j].len))
                    u.v[k++] = u.v[j];
            u.n = k;
            k = 0;
            for (size_t j = 0; j < a.n; j++)
                if (a.v[j].off < n)
                    a.v[k++] = a.v[j];
            a.n = k;
            assert_int_equal(a.n, u.n);
            for (size_t j = 0; j < a.n; j++) {
                assert_int_equal(a.v[j].off, u.v[j].off);
                assert_int_equal(a.v[j].len, u.v[j].len);
            }
            sy_gpat_free(p);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regex_basics),
        cmocka_unit_test(test_python_syntax),
        cmocka_unit_test(test_empty_matches_end),
        cmocka_unit_test(test_match_limit),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_keyword_boundaries),
        cmocka_unit_test(test_keyword_unicode_case),
        cmocka_unit_test(test_keyword_star),
        cmocka_unit_test(test_overlaps),
        cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_many_keywords_1mb),
        cmocka_unit_test(test_automaton_vs_plain_search),
        cmocka_unit_test(test_regex_ascii_twin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
