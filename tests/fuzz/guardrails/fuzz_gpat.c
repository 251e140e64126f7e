/* fuzz_gpat.c - libFuzzer harness for the guardrails' pattern sets
 * (src/guardrails/match.c). The input is: one byte choosing what the lines
 * are (regexes, caseless regexes, word keywords, substring keywords, plain
 * keywords, or each line its own by its first byte), the lines up to a NUL,
 * then the text. Patterns that do not compile are fine; a compiled set must
 * scan any bytes without crashing or hanging (the match limit turns runaway
 * backtracking into -1), report matches inside the text, and sy_gpat_scan's in
 * text order without overlaps. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guardrails/guardrail.h"
#include "guardrails/match.h"

struct state {
    size_t n, last_end, count;
    int ordered;
};

static int check_all(void *ud, const struct sy_gmatch *m)
{
    struct state *s = ud;
    if (m->off > s->n || m->len > s->n - m->off)
        abort();
    s->count++;
    return 0;
}

static int check_ordered(void *ud, const struct sy_gmatch *m)
{
    struct state *s = ud;
    check_all(ud, m);
    if (s->count > 1 && m->off < s->last_end)
        abort();
    s->last_end = m->off + m->len;
    return 0;
}

static void add_line(struct sy_gpat *p, int how, const char *line, int id)
{
    char err[128];
    switch (how) {
    case 0:
    case 1: sy_gpat_add_regex(p, line, id, how, err, sizeof err); break;
    case 2: sy_gpat_add_keyword(p, line, id); break;
    default: sy_gpat_add_keyword_mode(p, line, id, how - 2); break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int mode = data[0] % 6;
    const uint8_t *nul = memchr(data + 1, 0, size - 1);
    size_t plen = nul ? (size_t)(nul - data - 1) : size - 1;
    if (plen > 4096)
        return 0;
    char *pats = malloc(plen + 1);
    memcpy(pats, data + 1, plen);
    pats[plen] = 0;
    const char *text = nul ? (const char *)nul + 1 : "";
    size_t tlen = nul ? size - plen - 2 : 0;

    struct sy_gpat *p = sy_gpat_new();
    if (!p) {
        free(pats);
        return 0;
    }
    int id = 0;
    char *save = NULL;
    for (char *line = strtok_r(pats, "\n", &save); line && id < 64; line = strtok_r(NULL, "\n", &save), id++) {
        int how = mode;
        if (mode == 5) {
            how = (unsigned char)line[0] % 5;
            line++;
        }
        add_line(p, how, line, id);
    }
    char err[128];
    if (sy_gpat_compile(p, err, sizeof err) == 0) {
        struct state s = {.n = tlen};
        long c = sy_gpat_scan_all(p, text, tlen, check_all, &s);
        if (c >= 0 && (size_t)c != s.count)
            abort();
        struct state o = {.n = tlen};
        c = sy_gpat_scan(p, text, tlen, check_ordered, &o);
        if (c >= 0 && (size_t)c != o.count)
            abort();
    }
    sy_gpat_free(p);
    free(pats);
    return 0;
}
