/* test_texts.c - the texts a guardrail reads (src/guardrails/texts.c):
 * golden cases for every dialect's requests, answers and stream events, the
 * span invariant (each segment's span decodes to its text; splicing every
 * text back in reads the same), splicing masks, and hostile bodies.
 *
 * Golden cases are golden/texts/<dialect>.<req|ans|ev>.<name>.json with the
 * printed segments and tools in <...>.out. A name containing "skipsys" /
 * "skiptool" reads with skip_system / skip_tool. An `ev` case holds one
 * event per line (a `data:` line's JSON, or [DONE]).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/buf.h"
#include "core/utf8.h"
#include "golden.h"
#include "guardrails/guardrail.h"

static const char *const role_name[] = {"system", "user", "assistant", "tool", "other"};
static const char *const kind_name[] = {"text", "tool_args", "tool_out"};

static int dialect_of(const char *name, enum sy_gdialect *d)
{
    static const struct {
        const char *p;
        enum sy_gdialect d;
    } m[] = {{"chat.", SY_GD_CHAT},
             {"messages.", SY_GD_MESSAGES},
             {"responses.", SY_GD_RESPONSES},
             {"completions.", SY_GD_COMPLETIONS},
             {"embeddings.", SY_GD_EMBEDDINGS}};
    for (size_t i = 0; i < sizeof m / sizeof *m; i++)
        if (!strncmp(name, m[i].p, strlen(m[i].p))) {
            *d = m[i].d;
            return 0;
        }
    return -1;
}

static void print_str(struct sy_buf *out, const char *s, size_t n)
{
    if (!s) {
        SY_BUF_LIT(out, "null");
        return;
    }
    SY_BUF_LIT(out, "\"");
    sy_utf8_json_escape(out, s, n);
    SY_BUF_LIT(out, "\"");
}

static void print_texts(struct sy_buf *out, const struct sy_gtexts *t)
{
    for (size_t i = 0; i < t->nseg; i++) {
        const struct sy_gseg *g = &t->seg[i];
        sy_buf_printf(out, "seg %zu %s %s msg=%d%s @%zu+%zu ", i, role_name[g->role], kind_name[g->kind], g->msg,
                      g->delta ? " delta" : "", g->off, g->raw_len);
        print_str(out, g->text, g->len);
        SY_BUF_LIT(out, "\n");
    }
    for (size_t i = 0; i < t->ntool; i++) {
        const struct sy_gtool *x = &t->tool[i];
        sy_buf_printf(out, "tool %zu index=%d @%zu+%zu ", i, x->index, x->off, x->raw_len);
        print_str(out, x->name, x->name_len);
        SY_BUF_LIT(out, " args=");
        print_str(out, x->args, x->args_len);
        SY_BUF_LIT(out, "\n");
    }
}

/* The invariants every read must keep: texts NUL-terminated, spans inside
 * the body on string literals, tools' spans on objects; splicing each text
 * back over its own span reads the same texts again. 0 or -1 (printed). */
static int check_spans(const char *what, enum sy_gdialect d, unsigned phase, int ev, const char *body, size_t n,
                       const struct sy_gtexts *t)
{
    char **repl = calloc(t->nseg + 1, sizeof *repl);
    size_t spanned = 0;
    for (size_t i = 0; i < t->nseg; i++) {
        const struct sy_gseg *g = &t->seg[i];
        if (g->text[g->len] != 0 ||
            (g->raw_len && (g->off + g->raw_len > n || body[g->off] != '"' || body[g->off + g->raw_len - 1] != '"'))) {
            fprintf(stderr, "%s: segment %zu: bad span or text\n", what, i);
            free(repl);
            return -1;
        }
        if (i && g->raw_len && t->seg[i - 1].raw_len && t->seg[i - 1].off >= g->off) {
            fprintf(stderr, "%s: segment %zu: not in body order\n", what, i);
            free(repl);
            return -1;
        }
        if (g->raw_len && !memchr(g->text, 0, g->len)) { /* a \u0000 cannot go through a C string */
            repl[i] = (char *)g->text;
            spanned++;
        }
    }
    for (size_t i = 0; i < t->ntool; i++) {
        const struct sy_gtool *x = &t->tool[i];
        if (x->raw_len && (x->off + x->raw_len > n || body[x->off] != '{' || body[x->off + x->raw_len - 1] != '}')) {
            fprintf(stderr, "%s: tool %zu: bad span\n", what, i);
            free(repl);
            return -1;
        }
    }
    char *o = NULL;
    size_t on = 0;
    int rc = sy_gtext_splice(body, n, t->seg, t->nseg, repl, &o, &on);
    free(repl);
    if (rc) {
        fprintf(stderr, "%s: splice failed\n", what);
        return -1;
    }
    struct sy_gtexts u = {0};
    rc = ev ? sy_gevent_read(&u, d, o, on) : sy_gtexts_read(&u, d, phase, o, on, 0, 0);
    int bad = rc < 0;
    /* a reread without skips may see more: compare the segments both have by
     * position in the spliced body (the read with skips is a subsequence) */
    size_t j = 0;
    for (size_t i = 0; !bad && i < t->nseg; i++) {
        while (j < u.nseg &&
               !(u.seg[j].msg == t->seg[i].msg && u.seg[j].kind == t->seg[i].kind && u.seg[j].role == t->seg[i].role))
            j++;
        if (j == u.nseg || u.seg[j].len != t->seg[i].len || memcmp(u.seg[j].text, t->seg[i].text, t->seg[i].len))
            bad = 1;
        j++;
    }
    if (bad)
        fprintf(stderr, "%s: the spliced body (%zu spans) reads differently\n", what, spanned);
    sy_gtexts_free(&u);
    free(o);
    return bad ? -1 : 0;
}

static int run_case(void *ud, const char *dir, const char *name, const char *in, size_t n, struct sy_buf *out)
{
    (void)ud;
    (void)dir;
    enum sy_gdialect d;
    if (dialect_of(name, &d))
        return SY_GOLDEN_SKIP;
    const char *ph = strchr(name, '.') + 1;
    int ev = !strncmp(ph, "ev.", 3);
    unsigned phase = !strncmp(ph, "ans.", 4) ? SY_GM_POST : SY_GM_PRE;
    int skip_sys = strstr(name, "skipsys") != NULL, skip_tool = strstr(name, "skiptool") != NULL;
    struct sy_gtexts t = {0};
    int fail = 0;
    if (!ev) {
        int rc = sy_gtexts_read(&t, d, phase, in, n, skip_sys, skip_tool);
        sy_buf_printf(out, "rc %d\n", rc);
        print_texts(out, &t);
        if (rc == 0 && check_spans(name, d, phase, 0, in, n, &t))
            fail = 1;
    } else {
        const char *p = in, *e = in + n;
        int k = 0;
        while (p < e) {
            const char *nl = memchr(p, '\n', (size_t)(e - p));
            size_t l = nl ? (size_t)(nl - p) : (size_t)(e - p);
            if (l) {
                int rc = sy_gevent_read(&t, d, p, l);
                sy_buf_printf(out, "event %d rc %d\n", k++, rc);
                print_texts(out, &t);
                if (rc >= 0 && check_spans(name, d, phase, 1, p, l, &t))
                    fail = 1;
            }
            p += l + 1;
        }
    }
    sy_gtexts_free(&t);
    return fail;
}

static void test_golden(void **state)
{
    (void)state;
    int n = 0;
    assert_int_equal(sy_golden_run(GOLDEN_DIR "/texts", ".json", ".out", run_case, NULL, &n), 0);
    assert_true(n > 20);
}

/* ---- splice ------------------------------------------------------------- */

static void test_splice_masks(void **state)
{
    (void)state;
    const char *body = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"my mail is a@b.c\"},"
                       "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"call 555\"}]}]}";
    struct sy_gtexts t = {0};
    assert_int_equal(sy_gtexts_read(&t, SY_GD_CHAT, SY_GM_PRE, body, strlen(body), 0, 0), 0);
    assert_int_equal(t.nseg, 2);
    char *repl[2] = {"my mail is <EMAIL>", "quote \" back\\slash \n\x01 é \xff"};
    char *o;
    size_t on;
    assert_int_equal(sy_gtext_splice(body, strlen(body), t.seg, t.nseg, repl, &o, &on), 0);
    assert_string_equal(o, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"my mail is <EMAIL>\"},"
                           "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"quote \\\" back\\\\slash "
                           "\\n\\u0001 é \\ufffd\"}]}]}");
    assert_int_equal(on, strlen(o));
    /* reads back as the replacement (the bad byte as U+FFFD) */
    struct sy_gtexts u = {0};
    assert_int_equal(sy_gtexts_read(&u, SY_GD_CHAT, SY_GM_PRE, o, on, 0, 0), 0);
    assert_int_equal(u.nseg, 2);
    assert_string_equal(u.seg[0].text, "my mail is <EMAIL>");
    assert_string_equal(u.seg[1].text, "quote \" back\\slash \n\x01 é \xef\xbf\xbd");
    free(o);
    /* only the second replaced, given out of order */
    char *one[2] = {NULL, "x"};
    assert_int_equal(sy_gtext_splice(body, strlen(body), t.seg, t.nseg, one, &o, &on), 0);
    assert_non_null(strstr(o, "\"text\":\"x\"}"));
    assert_non_null(strstr(o, "a@b.c"));
    free(o);
    /* nothing replaced: the same bytes */
    assert_int_equal(sy_gtext_splice(body, strlen(body), t.seg, t.nseg, NULL, &o, &on), 0);
    assert_int_equal(on, strlen(body));
    assert_memory_equal(o, body, on);
    free(o);
    sy_gtexts_free(&u);
    sy_gtexts_free(&t);
}

static void test_splice_refuses(void **state)
{
    (void)state;
    const char *body = "{\"prompt\":\"abc\"}";
    char *o = NULL;
    size_t on;
    char *r1[1] = {"x"};
    /* a span that is not a string of the body */
    struct sy_gseg g = {.text = "abc", .len = 3, .off = 1, .raw_len = 9};
    assert_int_equal(sy_gtext_splice(body, strlen(body), &g, 1, r1, &o, &on), -1);
    g.off = 10;
    g.raw_len = 100;
    assert_int_equal(sy_gtext_splice(body, strlen(body), &g, 1, r1, &o, &on), -1);
    /* a text without a span cannot be replaced: refused, not dropped */
    g.raw_len = 0;
    assert_int_equal(sy_gtext_splice(body, strlen(body), &g, 1, r1, &o, &on), -1);
    /* overlapping spans */
    struct sy_gseg two[2] = {{.off = 10, .raw_len = 5}, {.off = 10, .raw_len = 5}};
    char *r2[2] = {"a", "b"};
    assert_int_equal(sy_gtext_splice(body, strlen(body), two, 2, r2, &o, &on), -1);
    assert_null(o);
}

/* ---- hostile bodies ----------------------------------------------------- */

static void test_hostile(void **state)
{
    (void)state;
    struct sy_gtexts t = {0};
    const char *bad[] = {
        "",
        "[]",
        "\"x\"",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]",     /* unterminated */
        "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],}",   /* trailing comma */
        "{\"messages\":[{\"role\":\"user\",\"content\":\"a\\x\"}]}", /* bad escape */
        "{\"messages\":[{\"role\":\"user\",\"content\":\"a\nb\"}]}", /* raw control character */
        "{\"messages\":[]} x",
        "{\"messages\":[01]}",
        "{\"a\":tru}",
        "{\"a\":\"\\u12\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        for (int d = SY_GD_CHAT; d <= SY_GD_EMBEDDINGS; d++) {
            assert_int_equal(sy_gtexts_read(&t, (enum sy_gdialect)d, SY_GM_PRE, bad[i], strlen(bad[i]), 0, 0), -1);
            assert_int_equal(sy_gtexts_read(&t, (enum sy_gdialect)d, SY_GM_POST, bad[i], strlen(bad[i]), 0, 0), -1);
            assert_int_equal(t.nseg, 0);
        }
    /* nesting: 127 levels read, 10000 refused without recursing */
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    SY_BUF_LIT(&b, "{\"x\":");
    for (int i = 0; i < 126; i++)
        SY_BUF_LIT(&b, "[");
    for (int i = 0; i < 126; i++)
        SY_BUF_LIT(&b, "]");
    SY_BUF_LIT(&b, ",\"messages\":[{\"role\":\"user\",\"content\":\"deep\"}]}");
    assert_int_equal(sy_gtexts_read(&t, SY_GD_CHAT, SY_GM_PRE, b.p, b.len, 0, 0), 0);
    assert_int_equal(t.nseg, 1);
    sy_buf_reset(&b);
    SY_BUF_LIT(&b, "{\"messages\":");
    for (int i = 0; i < 10000; i++)
        SY_BUF_LIT(&b, "[");
    for (int i = 0; i < 10000; i++)
        SY_BUF_LIT(&b, "]");
    SY_BUF_LIT(&b, "}");
    assert_int_equal(sy_gtexts_read(&t, SY_GD_CHAT, SY_GM_PRE, b.p, b.len, 0, 0), -1);
    sy_buf_free(&b);
    /* NULL body */
    assert_int_equal(sy_gtexts_read(&t, SY_GD_CHAT, SY_GM_PRE, NULL, 0, 0, 0), -1);
    /* an embedded \u0000 stays inside len */
    const char *z = "{\"prompt\":\"a\\u0000b\"}";
    assert_int_equal(sy_gtexts_read(&t, SY_GD_COMPLETIONS, SY_GM_PRE, z, strlen(z), 0, 0), 0);
    assert_int_equal(t.nseg, 1);
    assert_int_equal(t.seg[0].len, 3);
    assert_memory_equal(t.seg[0].text, "a\0b", 4);
    sy_gtexts_free(&t);
}

/* The fastest of reps reads of body (the machine may be shared: the best
 * run is the cost). */
static double best_us(struct sy_gtexts *t, const char *body, size_t n, int reps)
{
    double best = 1e30;
    for (int i = 0; i < reps; i++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        sy_gtexts_read(t, SY_GD_CHAT, SY_GM_PRE, body, n, 0, 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double us = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
        if (us < best)
            best = us;
    }
    return best;
}

/* A large body: linear, every text found, reuse of one struct. Also prints
 * the cost per KB (informational, never asserted). */
static void test_large(void **state)
{
    (void)state;
    struct sy_buf b;
    sy_buf_init(&b, 64u << 20);
    SY_BUF_LIT(&b, "{\"model\":\"gpt-4o\",\"messages\":[");
    size_t msgs = 0;
    while (b.len < (1u << 20)) {
        if (msgs)
            SY_BUF_LIT(&b, ",");
        sy_buf_printf(&b,
                      "{\"role\":\"%s\",\"content\":\"Message %zu: the quick brown fox jumps over the lazy dog, "
                      "caf\\u00e9 and na\\u00efve text with some length to it. Contact me at someone@example.com "
                      "or +1 555 0100.\"}",
                      msgs % 2 ? "assistant" : "user", msgs);
        msgs++;
    }
    SY_BUF_LIT(&b, "]}");
    struct sy_gtexts t = {0};
    assert_int_equal(sy_gtexts_read(&t, SY_GD_CHAT, SY_GM_PRE, b.p, b.len, 0, 0), 0);
    assert_int_equal(t.nseg, msgs);
    assert_int_equal(t.seg[msgs - 1].msg, (int)msgs - 1);

    const char *small = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"system\",\"content\":\"You are a helpful "
                        "assistant.\"},{\"role\":\"user\",\"content\":\"What is the weather like in Paris today? "
                        "Please answer briefly and mention the temperature in Celsius.\"}],\"temperature\":0.2,"
                        "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":"
                        "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}}]}";
    double us = best_us(&t, small, strlen(small), 20000);
    print_message("sy_gtexts_read: %zu-byte chat body %.2f us (%.2f us/KB, best of 20000)\n", strlen(small), us,
                  us / ((double)strlen(small) / 1024));
    us = best_us(&t, b.p, b.len, 30);
    print_message("sy_gtexts_read: %zu-byte chat body (%zu messages) %.0f us (%.2f us/KB, best of 30)\n", b.len, msgs,
                  us, us / ((double)b.len / 1024));
    sy_gtexts_free(&t);
    sy_buf_free(&b);
}

/* 32 MB, the largest body the gateway takes: a 16 MB text, 8 M numbers in
 * an unrelated array, a text of invalid bytes. Read whole, linear, and the
 * texts come out exact. */
static void test_32mb(void **state)
{
    (void)state;
    size_t big = 16u << 20, nums = 4u << 20, bad = 1u << 20;
    struct sy_buf b;
    sy_buf_init(&b, 40u << 20);
    SY_BUF_LIT(&b, "{\"x\":[");
    for (size_t i = 0; i < nums; i++)
        SY_BUF_LIT(&b, "0,");
    SY_BUF_LIT(&b, "1],\"messages\":[{\"role\":\"user\",\"content\":\"");
    size_t at = b.len;
    assert_int_equal(sy_buf_reserve(&b, big + bad + 64), 0);
    memset(b.p + at, 'a', big);
    b.len += big;
    SY_BUF_LIT(&b, "\"},{\"role\":\"user\",\"content\":\"");
    memset(b.p + b.len, 0xff, bad);
    b.len += bad;
    SY_BUF_LIT(&b, "\"}]}");
    struct sy_gtexts t = {0};
    assert_int_equal(sy_gtexts_read(&t, SY_GD_CHAT, SY_GM_PRE, b.p, b.len, 0, 0), 0);
    assert_int_equal(t.nseg, 2);
    assert_int_equal(t.seg[0].len, big);
    assert_int_equal(t.seg[0].off, at - 1);
    assert_int_equal(t.seg[1].len, 3 * bad); /* each bad byte one U+FFFD */
    assert_memory_equal(t.seg[1].text, "\xef\xbf\xbd\xef\xbf\xbd", 6);
    /* an unterminated 32 MB string: refused, not read past the end */
    b.len -= 3;
    assert_int_equal(sy_gtexts_read(&t, SY_GD_CHAT, SY_GM_PRE, b.p, b.len, 0, 0), -1);
    assert_int_equal(t.nseg, 0);
    sy_gtexts_free(&t);
    sy_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),  cmocka_unit_test(test_splice_masks), cmocka_unit_test(test_splice_refuses),
        cmocka_unit_test(test_hostile), cmocka_unit_test(test_large),        cmocka_unit_test(test_32mb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
