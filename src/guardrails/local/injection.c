/* injection.c - LiteLLM's prompt-injection heuristics (`detect_prompt_injection`,
 * litellm/proxy/hooks/prompt_injection_detection.py).
 *
 * LiteLLM builds attack phrases from verbs x adjectives x prepositions ("ignore
 * previous and start over", ... every one of more than two words), then slides
 * a window of each phrase's length over the lowercased prompt (all messages'
 * texts run together) and rejects the call when difflib's ratio of a window
 * and the phrase exceeds 0.7: O(phrases x text x phrase^2).
 *
 * Here the same rejection in one pass: a window's ratio is at least its
 * longest common block with the phrase over the phrase's length, so a prompt
 * holding any m-character piece of a phrase, m the least count whose ratio
 * passes 0.7, is rejected as LiteLLM rejects it (when the prompt is at least
 * the phrase long, as LiteLLM's window must fit). Every such piece of every
 * phrase goes into one Aho-Corasick automaton (match.c) at open. What differs:
 * a window that passes only by several short blocks together (a phrase with
 * edits spread through it) is not caught (docs/litellm-differences.md).
 *
 * Block: 400, str() of LiteLLM's detail {'error': 'Rejected message. This is a
 * prompt injection attack.'}. `llm_api_check` (a second model call) is not
 * run: open warns. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/log.h"
#include "guardrails/guardrail.h"
#include "guardrails/match.h"

#define SIMILARITY 0.7 /* LiteLLM's DEFAULT_PROMPT_INJECTION_SIMILARITY_THRESHOLD */
#define MESSAGE "{'error': 'Rejected message. This is a prompt injection attack.'}"

static const char *const verbs[] = {"Ignore", "Disregard", "Skip", "Forget", "Neglect", "Overlook",
                                    "Omit", "Bypass", "Pay no attention to", "Do not follow", "Do not obey"};
static const char *const adjectives[] = {"", "prior", "previous", "preceding", "above", "foregoing", "earlier",
                                         "initial"};
static const char *const prepositions[] = {"", "and start over", "and start anew", "and begin afresh",
                                           "and start from scratch"};

struct inj {
    struct sy_gpat *set;
    size_t *minlen; /* per piece id: the shortest phrase (in characters) it comes from */
    size_t npieces;
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

/* The least M with M / L > SIMILARITY as difflib computes the ratio. */
static size_t least_block(size_t len)
{
    size_t m = 0;
    while (m <= len && !(2.0 * (double)m / (double)(2 * len) > SIMILARITY))
        m++;
    return m;
}

static int add_piece(struct inj *j, const char *p, size_t m, size_t phrase_len, size_t *cap)
{
    char piece[128];
    memcpy(piece, p, m);
    piece[m] = 0;
    if (j->npieces == *cap) {
        size_t nc = *cap ? *cap * 2 : 256;
        size_t *x = realloc(j->minlen, nc * sizeof *x);
        if (!x)
            return -1;
        j->minlen = x;
        *cap = nc;
    }
    j->minlen[j->npieces] = phrase_len;
    if (sy_gpat_add_keyword_mode(j->set, piece, (int)j->npieces, SY_GKW_PLAIN) < 0)
        return -1;
    j->npieces++;
    return 0;
}

static int build(struct inj *j, char *err, size_t errlen)
{
    j->set = sy_gpat_new();
    if (!j->set)
        return -1;
    size_t cap = 0;
    for (size_t v = 0; v < sizeof verbs / sizeof *verbs; v++)
        for (size_t a = 0; a < sizeof adjectives / sizeof *adjectives; a++)
            for (size_t p = 0; p < sizeof prepositions / sizeof *prepositions; p++) {
                char phrase[128];
                snprintf(phrase, sizeof phrase, "%s%s%s%s%s", verbs[v], *adjectives[a] ? " " : "", adjectives[a],
                         *prepositions[p] ? " " : "", prepositions[p]);
                if (words(phrase) <= 2)
                    continue;
                for (char *c = phrase; *c; c++)
                    if (*c >= 'A' && *c <= 'Z')
                        *c = (char)(*c + 32);
                size_t len = strlen(phrase), m = least_block(len);
                for (size_t i = 0; i + m <= len; i++)
                    if (add_piece(j, phrase + i, m, len, &cap) < 0)
                        return -1;
            }
    return sy_gpat_compile(j->set, err, errlen);
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
    if (j->enabled && build(j, err, errlen) < 0) {
        if (!*err)
            snprintf(err, errlen, "out of memory");
        sy_gpat_free(j->set);
        free(j->minlen);
        free(j);
        return -1;
    }
    g->impl = j;
    return 0;
}

static void inj_close(struct sy_guard *g)
{
    struct inj *j = g->impl;
    if (j) {
        sy_gpat_free(j->set);
        free(j->minlen);
        free(j);
    }
    g->impl = NULL;
}

struct hit {
    const struct inj *j;
    size_t chars; /* the prompt's length in characters */
    int found;
};

static int on_piece(void *ud, const struct sy_gmatch *m)
{
    struct hit *h = ud;
    if (h->chars >= h->j->minlen[m->id]) {
        h->found = 1;
        return 1;
    }
    return 0;
}

static void inj_check(const struct sy_guard *g, const struct sy_ginput *in, struct sy_gresult *r)
{
    const struct inj *j = g->impl;
    r->verdict = SY_GV_PASS;
    if (!j || !j->enabled)
        return;
    /* the prompt as LiteLLM formats it: the message texts run together */
    struct sy_buf b;
    sy_buf_init(&b, (size_t)1 << 30);
    for (size_t i = 0; i < in->nseg; i++)
        if (in->seg[i].kind == SY_GK_TEXT && in->seg[i].text)
            sy_buf_append(&b, in->seg[i].text, in->seg[i].len);
    if (sy_buf_failed(&b)) {
        sy_gresult_error(r, "detect_prompt_injection: prompt too large");
        sy_buf_free(&b);
        return;
    }
    struct hit h = {.j = j};
    for (size_t i = 0; i < b.len; i++)
        h.chars += ((unsigned char)b.p[i] & 0xC0) != 0x80;
    long rc = sy_gpat_scan_all(j->set, b.p, b.len, on_piece, &h);
    if (rc < 0)
        sy_gresult_error(r, "detect_prompt_injection: the check could not complete");
    else if (h.found) {
        sy_gresult_block(r, 400, "%s", MESSAGE);
        r->detail = strdup("{\"type\":\"prompt_injection\",\"method\":\"heuristics\"}");
    }
    sy_buf_free(&b);
}

const struct sy_guard_ops sy_guard_prompt_injection = {
    .name = "detect_prompt_injection",
    .modes = SY_GM_PRE | SY_GM_DURING,
    .open = inj_open,
    .close = inj_close,
    .check = inj_check,
};
