/* gtexts_check.h - the invariants the guardrail texts harnesses check
 * (fuzz_gtexts.c, fuzz_gevent.c, fuzz_gsplice.c): every segment's text is
 * NUL-terminated valid UTF-8 and its span is a JSON string literal of the
 * body, in body order; every tool's span is an object; splicing replacements
 * in gives a body that still parses (when the input did) and reads back the
 * same segments with the replacements as their texts.
 */
#ifndef GTEXTS_CHECK_H
#define GTEXTS_CHECK_H

#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/utf8.h"
#include "guardrails/guardrail.h"
#include "providers/jdom.h"

static void check_read(const struct sy_gtexts *t, const char *body, size_t n)
{
    size_t last = 0;
    for (size_t i = 0; i < t->nseg; i++) {
        const struct sy_gseg *g = &t->seg[i];
        if (!g->text || g->text[g->len] != 0 || sy_utf8_check(g->text, g->len) != g->len)
            abort();
        if (!g->raw_len)
            continue;
        if (g->raw_len < 2 || g->off + g->raw_len > n || body[g->off] != '"' || body[g->off + g->raw_len - 1] != '"')
            abort();
        if (g->off < last)
            abort(); /* body order, no overlap */
        last = g->off + g->raw_len;
    }
    for (size_t i = 0; i < t->ntool; i++) {
        const struct sy_gtool *x = &t->tool[i];
        if (!x->name || x->name[x->name_len] != 0 || (x->args && x->args[x->args_len] != 0))
            abort();
        if (x->raw_len && (x->off + x->raw_len > n || body[x->off] != '{' || body[x->off + x->raw_len - 1] != '}'))
            abort();
    }
}

/* 1 when p[0..n) is JSON by the gateway's strict DOM parser. */
static int strict_json(const char *p, size_t n)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int ok = sy_jdom_parse(&d, p, n, &a, 0) == 0;
    sy_arena_free(&a);
    return ok;
}

/* s as a splice writes and a read gives it back: each byte that does not
 * start valid UTF-8 becomes U+FFFD. */
static void normalize(struct sy_buf *b, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t l = sy_utf8_seq((const unsigned char *)s + i, n - i);
        if (l) {
            sy_buf_append(b, s + i, l);
            i += l;
        } else {
            sy_buf_append(b, "\xef\xbf\xbd", 3);
            i++;
        }
    }
}

/* Splice repl[] (NULL entries kept) into body and read it again with read():
 * the same segments, the replaced ones with the replacement's text. */
static void check_splice(const struct sy_gtexts *t, const char *body, size_t n, char *const *repl,
                         int (*read)(struct sy_gtexts *, const char *, size_t, void *), void *ud)
{
    char *o = NULL;
    size_t on = 0;
    int spanless = 0;
    for (size_t i = 0; i < t->nseg; i++)
        if (repl[i] && !t->seg[i].raw_len)
            spanless = 1;
    int rc = sy_gtext_splice(body, n, t->seg, t->nseg, repl, &o, &on);
    if (spanless) { /* refused, never a mask dropped */
        if (rc != -1)
            abort();
        return;
    }
    if (rc != 0 || !o)
        abort();
    if (strict_json(body, n) && !strict_json(o, on))
        abort();
    struct sy_gtexts u = {0};
    if (read(&u, o, on, ud) < 0 || u.nseg != t->nseg)
        abort();
    struct sy_buf want;
    sy_buf_init(&want, (size_t)1 << 30);
    for (size_t i = 0; i < t->nseg; i++) {
        const char *w = t->seg[i].text;
        size_t wl = t->seg[i].len;
        if (repl[i]) {
            sy_buf_reset(&want);
            normalize(&want, repl[i]);
            w = want.p ? want.p : "";
            wl = want.len;
        }
        if (u.seg[i].len != wl || memcmp(u.seg[i].text, w, wl) || u.seg[i].role != t->seg[i].role ||
            u.seg[i].kind != t->seg[i].kind || u.seg[i].msg != t->seg[i].msg)
            abort();
    }
    if (u.ntool != t->ntool)
        abort();
    sy_buf_free(&want);
    sy_gtexts_free(&u);
    free(o);
}

#endif
