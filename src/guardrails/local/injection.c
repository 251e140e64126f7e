/* injection.c - LiteLLM's prompt-injection heuristics (`detect_prompt_injection`,
 * litellm/proxy/hooks/prompt_injection_detection.py).
 *
 * LiteLLM builds 376 attack phrases from verbs x adjectives x prepositions
 * ("ignore previous and start over", "do not obey", ... every one of more than
 * two words), slides a window of each phrase's length over the lowercased
 * prompt (all messages' texts run together) and rejects the call when
 * difflib's SequenceMatcher ratio of a window and the phrase exceeds 0.7:
 * phrases x text windows, each O(phrase^2).
 *
 * The same decision here, with the same ratio, in one pass per phrase length:
 * the ratio of a window counts matched characters, so it can pass only when
 * the window's character counts share more than 0.7 of the phrase's (a bag
 * intersection kept up to date in O(1) per character and phrase as the window
 * slides). Only those windows get SequenceMatcher's matching blocks computed
 * (difflib's algorithm, no junk heuristics: phrases are under 200 characters).
 * A text built to pass the bag test everywhere and fail the exact one (an
 * anagram of a phrase, repeated) would make that exact step quadratic: it is
 * given a budget proportional to the text, and a check that exhausts it is an
 * ERROR (the guardrail's fail-open / fail-closed applies) instead of a stall.
 *
 * Block: 400, str() of LiteLLM's detail {'error': 'Rejected message. This is a
 * prompt injection attack.'}. `llm_api_check` (a second model call) is not
 * run: open warns. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/pyrepr.h"
#include "guardrails/guardrail.h"
#include "guardrails/match.h"

#define SIMILARITY 0.7 /* LiteLLM's DEFAULT_PROMPT_INJECTION_SIMILARITY_THRESHOLD */
#define MESSAGE    "{'error': 'Rejected message. This is a prompt injection attack.'}"

static const char *const verbs[] = {
    "Ignore", "Disregard",           "Skip",          "Forget",     "Neglect", "Overlook", "Omit",
    "Bypass", "Pay no attention to", "Do not follow", "Do not obey"};
static const char *const adjectives[] = {"",      "prior",     "previous", "preceding",
                                         "above", "foregoing", "earlier",  "initial"};
static const char *const prepositions[] = {"", "and start over", "and start anew", "and begin afresh",
                                           "and start from scratch"};

#define NA      24 /* the phrases' alphabet: 23 characters, and 0 for every other */
#define MAXP    64 /* longest phrase + 1 */
#define NPHRASE 400
#define GROUP   64 /* phrases of one length, at most (39 today) */

struct phrase {
    uint32_t cp[MAXP]; /* the characters */
    uint64_t pm[NA];   /* bit i: cp[i] is that character (bit-parallel LCS) */
    uint8_t cnt[NA];   /* how many of each */
    size_t len;
};

struct inj {
    struct phrase *ph; /* sorted by length */
    size_t nph;
    uint8_t amap[128]; /* ASCII -> alphabet index (0: not in any phrase) */
    int enabled;
};

static size_t words(const char *s)
{
    size_t n = 0;
    for (int in = 0; *s; s++) {
        int w = *s != ' ';
        n += w && !in;
        in = w;
    }
    return n;
}

/* The least M with M / L above the threshold, as difflib computes the ratio. */
static size_t least_block(size_t len)
{
    size_t m = 0;
    while (m <= len && !(2.0 * (double)m / (double)(2 * len) > SIMILARITY))
        m++;
    return m;
}

static int by_len(const void *a, const void *b)
{
    const struct phrase *x = a, *y = b;
    return x->len < y->len ? -1 : x->len > y->len;
}

static int build(struct inj *j)
{
    j->ph = calloc(NPHRASE, sizeof *j->ph);
    if (!j->ph)
        return -1;
    unsigned na = 1;
    for (size_t v = 0; v < sizeof verbs / sizeof *verbs; v++)
        for (size_t a = 0; a < sizeof adjectives / sizeof *adjectives; a++)
            for (size_t p = 0; p < sizeof prepositions / sizeof *prepositions; p++) {
                char phrase[MAXP * 2];
                snprintf(phrase, sizeof phrase, "%s%s%s%s%s", verbs[v], *adjectives[a] ? " " : "", adjectives[a],
                         *prepositions[p] ? " " : "", prepositions[p]);
                if (words(phrase) <= 2 || j->nph == NPHRASE || strlen(phrase) >= MAXP)
                    continue;
                struct phrase *ph = &j->ph[j->nph++];
                for (size_t i = 0; phrase[i]; i++) {
                    unsigned char c = (unsigned char)phrase[i];
                    if (c >= 'A' && c <= 'Z')
                        c = (unsigned char)(c + 32);
                    if (!j->amap[c] && na < NA)
                        j->amap[c] = (uint8_t)na++;
                    ph->pm[j->amap[c]] |= (uint64_t)1 << ph->len;
                    ph->cp[ph->len++] = c;
                    ph->cnt[j->amap[c]]++;
                }
                ph->cnt[0] = 0;
            }
    qsort(j->ph, j->nph, sizeof *j->ph, by_len);
    return 0;
}

static int flag(json_object *o, const char *key, int dflt)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, key, &v))
        return dflt;
    return json_object_get_boolean(v);
}

static int inj_open(struct sy_guard *g, json_object *params, const struct sy_genv *env, char *err, size_t errlen)
{
    (void)env;
    struct inj *j = calloc(1, sizeof *j);
    if (!j) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* LiteLLM: no prompt_injection_params -> the heuristics run; with them,
     * only when heuristics_check is true. */
    json_object *pip = NULL;
    if (params && !json_object_object_get_ex(params, "prompt_injection_params", &pip))
        pip = NULL;
    if (pip && !json_object_is_type(pip, json_type_object))
        pip = NULL;
    j->enabled = pip ? flag(pip, "heuristics_check", 0) : flag(params, "heuristics_check", 1);
    if (flag(pip ? pip : params, "llm_api_check", 0))
        sy_warn("guardrails: %s: llm_api_check (a second model call) is not supported; the heuristics run %s",
                g->name ? g->name : "detect_prompt_injection", j->enabled ? "alone" : "off (heuristics_check false)");
    if (flag(pip ? pip : params, "vector_db_check", 0))
        sy_warn("guardrails: %s: vector_db_check is not implemented (nor is it in LiteLLM)",
                g->name ? g->name : "detect_prompt_injection");
    err[0] = 0;
    if (j->enabled && build(j) < 0) {
        snprintf(err, errlen, "out of memory");
        free(j->ph);
        free(j);
        return -1;
    }
    g->impl = j;
    return 0;
}

static void inj_close(struct sy_guard *g)
{
    struct inj *j = g->impl;
    if (j)
        free(j->ph);
    free(j);
    g->impl = NULL;
}

/* difflib's SequenceMatcher(None, a, b): the matched characters of
 * get_matching_blocks() (find_longest_match: the longest block, the earliest
 * in a then in b, then the same on each side of it). a and b are n long. */
static size_t matched(const uint32_t *a, const uint32_t *b, size_t n)
{
    size_t stack[MAXP][4], sp = 0, total = 0;
    unsigned prev[MAXP + 1], cur[MAXP + 1];
    stack[sp][0] = 0, stack[sp][1] = n, stack[sp][2] = 0, stack[sp][3] = n, sp++;
    while (sp) {
        sp--;
        size_t alo = stack[sp][0], ahi = stack[sp][1], blo = stack[sp][2], bhi = stack[sp][3];
        size_t besti = alo, bestj = blo, best = 0;
        memset(prev, 0, sizeof prev);
        for (size_t i = alo; i < ahi; i++) {
            memset(cur, 0, sizeof cur);
            for (size_t jx = blo; jx < bhi; jx++)
                if (a[i] == b[jx]) {
                    unsigned k = cur[jx + 1] = prev[jx] + 1;
                    if (k > best) {
                        best = k;
                        besti = i + 1 - k;
                        bestj = jx + 1 - k;
                    }
                }
            memcpy(prev, cur, sizeof prev);
        }
        if (!best)
            continue;
        total += best;
        if (alo < besti && blo < bestj && sp < MAXP) {
            stack[sp][0] = alo, stack[sp][1] = besti, stack[sp][2] = blo, stack[sp][3] = bestj;
            sp++;
        }
        if (besti + best < ahi && bestj + best < bhi && sp < MAXP) {
            stack[sp][0] = besti + best, stack[sp][1] = ahi, stack[sp][2] = bestj + best, stack[sp][3] = bhi;
            sp++;
        }
    }
    return total;
}

/* The longest common subsequence of the window (alphabet indexes) and the
 * phrase, bit-parallel (Hyyro): an upper bound of SequenceMatcher's matched
 * characters, in O(len) word operations. */
static size_t lcs(const struct phrase *ph, const uint8_t *w)
{
    const uint64_t mask = ph->len >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << ph->len) - 1;
    uint64_t v = ~(uint64_t)0;
    for (size_t i = 0; i < ph->len; i++) {
        uint64_t u = v & ph->pm[w[i]];
        v = (v + u) | (v - u);
    }
    return (size_t)__builtin_popcountll(~v & mask);
}

/* One phrase length over the text: 1 a window passes, 0 none, -1 the exact
 * step's budget ran out. */
static int scan_len(const struct inj *j, const struct phrase *ph, size_t np, const uint32_t *t, const uint8_t *ta,
                    size_t n, size_t *budget)
{
    const size_t len = ph[0].len, thr = least_block(len);
    uint8_t win[NA] = {0};
    size_t next[GROUP] = {0}; /* next[p]: the first window whose LCS can reach thr */
    /* the counts transposed (character, then phrase) and padded to GROUP
     * phrases (a padding phrase has no characters): the per-character loops
     * below have a fixed trip count over contiguous bytes, which the compiler
     * turns into a few vector instructions */
    uint8_t cnt[NA][GROUP], inter[GROUP] = {0};
    if (np > GROUP)
        np = GROUP;
    memset(cnt, 0, sizeof cnt);
    for (size_t a = 0; a < NA; a++)
        for (size_t p = 0; p < np; p++)
            cnt[a][p] = ph[p].cnt[a];
    for (size_t pos = 0; pos < n; pos++) {
        if (pos >= len) {
            unsigned a = ta[pos - len];
            if (a) {
                uint8_t w = --win[a];
                for (size_t p = 0; p < GROUP; p++)
                    inter[p] = (uint8_t)(inter[p] - (w < cnt[a][p]));
            }
        }
        unsigned a = ta[pos];
        if (a) {
            uint8_t w = win[a]++;
            for (size_t p = 0; p < GROUP; p++)
                inter[p] = (uint8_t)(inter[p] + (w < cnt[a][p]));
        }
        if (pos + 1 < len)
            continue;
        uint8_t most = 0; /* a max over bytes: a few vector instructions */
        for (size_t p = 0; p < GROUP; p++)
            most = inter[p] > most ? inter[p] : most;
        if (most < thr)
            continue;
        for (size_t p = 0; p < np; p++) {
            if (inter[p] < thr || pos < next[p])
                continue;
            /* the LCS moves by one at most per step: a window x short of thr
             * is followed by x windows that cannot reach it */
            size_t x = lcs(&ph[p], ta + pos + 1 - len);
            if (x < thr) {
                next[p] = pos + (thr - x);
                continue;
            }
            if (!*budget)
                return -1;
            (*budget)--;
            size_t m = matched(t + pos + 1 - len, ph[p].cp, len);
            if (2.0 * (double)m / (double)(2 * len) > SIMILARITY)
                return 1;
        }
    }
    (void)j;
    return 0;
}

static void inj_check(const struct sy_guard *g, const struct sy_ginput *in, struct sy_gresult *r)
{
    const struct inj *j = g->impl;
    r->verdict = SY_GV_PASS;
    if (!j || !j->enabled)
        return;
    /* the prompt as LiteLLM formats it: the message texts run together,
     * lowercased, as code points (and their alphabet indexes) */
    size_t total = 0;
    for (size_t i = 0; i < in->nseg; i++)
        if (in->seg[i].kind == SY_GK_TEXT && in->seg[i].text)
            total += in->seg[i].len;
    uint32_t *t = malloc((total + 1) * sizeof *t);
    uint8_t *ta = malloc(total + 1);
    if (!t || !ta) {
        free(t);
        free(ta);
        sy_gresult_error(r, "detect_prompt_injection: out of memory");
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < in->nseg; i++) {
        if (in->seg[i].kind != SY_GK_TEXT || !in->seg[i].text)
            continue;
        const unsigned char *s = (const unsigned char *)in->seg[i].text;
        size_t len = in->seg[i].len;
        for (size_t k = 0; k < len;) {
            unsigned cp = sy_py_utf8_next(s, len, &k);
            cp = sy_gfold_cp(cp);
            t[n] = cp;
            ta[n] = cp < 128 ? j->amap[cp] : 0;
            n++;
        }
    }
    size_t budget = 4096 + n;
    int rc = 0;
    for (size_t p = 0; p < j->nph && rc == 0;) {
        size_t q = p;
        while (q < j->nph && j->ph[q].len == j->ph[p].len)
            q++;
        if (n >= j->ph[p].len)
            rc = scan_len(j, j->ph + p, q - p, t, ta, n, &budget);
        p = q;
    }
    if (rc < 0)
        sy_gresult_error(r, "detect_prompt_injection: the prompt is too costly to compare (%zu characters)", n);
    else if (rc > 0) {
        sy_gresult_block(r, 400, "%s", MESSAGE);
        r->detail = strdup("{\"type\":\"prompt_injection\",\"method\":\"heuristics\"}");
    }
    free(t);
    free(ta);
}

const struct sy_guard_ops sy_guard_prompt_injection = {
    .name = "detect_prompt_injection",
    .modes = SY_GM_PRE | SY_GM_DURING,
    .open = inj_open,
    .close = inj_close,
    .check = inj_check,
    .offload_min = 128, /* ~1.7 ms per KB: any prompt longer than a greeting is checked off the loop */
};
