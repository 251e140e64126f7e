/* test_framing.c - the stream framing readers (upstream/framing.h): sample
 * SSE, NDJSON and AWS event streams give the same events whatever the split
 * (every split in two and three pieces, and one byte at a time), and the edge
 * cases of each framing: line ends, BOM, comments, limits, unterminated last
 * events, the callback stopping the feed.
 *
 * Events are recorded as "type|data;" so an expected stream reads as text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/buf.h"
#include "core/errors.h"
#include "upstream/framing.h"

enum { SSE = 0, NDJSON = 1, AWS = 2 };

struct rec {
    struct sy_buf b;
    int stop_after; /* return 7 from the callback on this event (1-based); 0 never */
    int n;
};

static int on_event(void *ud, const char *type, size_t tl, const char *data, size_t dl)
{
    struct rec *r = ud;
    sy_buf_append(&r->b, type, tl);
    sy_buf_append(&r->b, "|", 1);
    sy_buf_append(&r->b, data, dl);
    sy_buf_append(&r->b, ";", 1);
    r->n++;
    return r->stop_after && r->n == r->stop_after ? 7 : 0;
}

/* Feed s in pieces ending at cuts[0..nc) then finish; the events recorded in
 * out (NUL-terminated, caller frees); returns the first nonzero rc or 0. */
static int run(int kind, size_t max, const char *s, size_t n, const size_t *cuts, size_t nc, char **out)
{
    struct sy_framer f;
    struct rec r = {0};
    sy_buf_init(&r.b, 1 << 24);
    sy_buf_append(&r.b, "", 0);
    sy_framer_init(&f, kind, max);
    size_t at = 0;
    int rc = 0;
    for (size_t k = 0; k <= nc && !rc; k++) {
        size_t end = k < nc ? cuts[k] : n;
        rc = sy_framer_feed(&f, s + at, end - at, on_event, &r);
        at = end;
    }
    if (!rc)
        rc = sy_framer_finish(&f, on_event, &r);
    sy_framer_free(&f);
    *out = r.b.p;
    return rc;
}

/* The events of s fed whole must be `want` (rc want_rc), and so must every
 * split in two, every split in three (inputs up to 200 bytes) and feeding
 * one byte at a time. */
static void same_all_splits(int kind, size_t max, const char *s, size_t n, const char *want, int want_rc)
{
    char *got;
    int rc = run(kind, max, s, n, NULL, 0, &got);
    assert_string_equal(got, want);
    assert_int_equal(rc, want_rc);
    free(got);
    for (size_t i = 0; i <= n; i++) {
        size_t c1[1] = {i};
        rc = run(kind, max, s, n, c1, 1, &got);
        if (strcmp(got, want) || rc != want_rc)
            fail_msg("split at %zu: got [%s] rc %d, want [%s] rc %d", i, got, rc, want, want_rc);
        free(got);
        if (n > 200)
            continue;
        for (size_t j = i; j <= n; j++) {
            size_t c2[2] = {i, j};
            rc = run(kind, max, s, n, c2, 2, &got);
            if (strcmp(got, want) || rc != want_rc)
                fail_msg("split at %zu,%zu: got [%s] rc %d, want [%s]", i, j, got, rc, want);
            free(got);
        }
    }
    size_t *c = malloc((n + 1) * sizeof *c);
    for (size_t i = 0; i < n; i++)
        c[i] = i + 1;
    rc = run(kind, max, s, n, c, n ? n - 1 : 0, &got);
    assert_string_equal(got, want);
    assert_int_equal(rc, want_rc);
    free(got);
    free(c);
}

#define CHECK(kind, max, lit, want, rc) same_all_splits((kind), (max), "" lit, sizeof(lit) - 1, (want), (rc))

/* ---- SSE ---------------------------------------------------------------- */

static void sse_anthropic_like(void **st)
{
    CHECK(SSE, 0,
          "event: message_start\ndata: {\"type\":\"message_start\"}\n\n"
          "event: ping\ndata: {\"type\": \"ping\"}\n\n"
          "event: content_block_delta\ndata: {\"text\":\"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80\"}\n\n"
          "event: message_stop\ndata: {}\n\n",
          "message_start|{\"type\":\"message_start\"};ping|{\"type\": \"ping\"};"
          "content_block_delta|{\"text\":\"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80\"};message_stop|{};",
          0);
}

static void sse_openai_like(void **st)
{
    CHECK(SSE, 0, "data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n", "|{\"a\":1};|{\"b\":2};|[DONE];", 0);
}

static void sse_line_ends(void **st)
{
    /* CRLF, CR alone and LF alone, mixed */
    CHECK(SSE, 0, "event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\rdata: 3\n\n", "a|1;b|2;|3;", 0);
    /* a CR ending one feed and an LF starting the next are one line end: no
     * blank line in between (every split of this is checked) */
    CHECK(SSE, 0, "data: a\r\ndata: b\r\n\r\n", "|a\nb;", 0);
    CHECK(SSE, 0, "data: a\r\r\ndata: b\r\n", "|a;|b;", 0);
}

static void sse_cr_lf_across_feeds(void **st)
{
    char *got;
    const char *s = "data: a\r\ndata: b\r\n\r\n";
    size_t cuts[] = {8, 18}; /* "data: a\r" | "\ndata: b\r\n\r" | "\n" */
    assert_int_equal(run(SSE, 0, s, strlen(s), cuts, 2, &got), 0);
    assert_string_equal(got, "|a\nb;");
    free(got);
}

static void sse_fields(void **st)
{
    CHECK(SSE, 0,
          ": comment\n"
          "data:no space\n"
          "data:  two spaces\n"
          "data\n"
          "data:\n"
          "id: 7\nretry: 100\nunknown: x\nDATA: upper\n\n",
          "|no space\n two spaces\n\n;", 0);
    /* an event with no data line is skipped, and its type does not leak */
    CHECK(SSE, 0, "event: lone\n\ndata: x\n\n", "|x;", 0);
    /* data: with an empty value is an event with empty data */
    CHECK(SSE, 0, "event: e\ndata:\n\n", "e|;", 0);
    /* the last event line wins; "event" without colon clears */
    CHECK(SSE, 0, "event: a\nevent: b\ndata: 1\n\nevent: c\nevent\ndata: 2\n\n", "b|1;|2;", 0);
    /* data after event, event after data */
    CHECK(SSE, 0, "data: 1\nevent: late\n\n", "late|1;", 0);
    /* a colon in the value is kept */
    CHECK(SSE, 0, "data: a: b:c\n\n", "|a: b:c;", 0);
    /* comment lines between data lines */
    CHECK(SSE, 0, "data: a\n:keep-alive\ndata: b\n\n", "|a\nb;", 0);
}

static void sse_bom(void **st)
{
    CHECK(SSE, 0,
          "\xEF\xBB\xBF"
          "data: x\n\n",
          "|x;", 0);
    /* only at the start: a second BOM makes the field name unknown */
    CHECK(SSE, 0,
          "\xEF\xBB\xBF\xEF\xBB\xBF"
          "data: x\n\ndata: y\n\n",
          "|y;", 0);
    /* a BOM prefix that is not a BOM stays in the line */
    CHECK(SSE, 0,
          "\xEF\xBB"
          "data: x\n\ndata: y\n\n",
          "|y;", 0);
    CHECK(SSE, 0, "\xEF", "", 0);
    CHECK(SSE, 0, "\xEF\xBB\xBF", "", 0);
}

static void sse_unterminated(void **st)
{
    CHECK(SSE, 0, "data: a\n\ndata: last", "|a;|last;", 0);
    CHECK(SSE, 0, "event: e\ndata: x\n", "e|x;", 0);
    CHECK(SSE, 0, "event: e\ndata: x\r", "e|x;", 0);
    CHECK(SSE, 0, "event: e\ndata: x\ndata: y", "e|x\ny;", 0);
    CHECK(SSE, 0, "data: x\n: tail comment", "|x;", 0);
    CHECK(SSE, 0, "", "", 0);
    CHECK(SSE, 0, "\n\n\r\n", "", 0);
}

static void sse_limits(void **st)
{
    /* max_event 8: a data value of 8 bytes in a line of 14 is too long */
    CHECK(SSE, 14, "data: 12345678\n\n", "|12345678;", 0);
    CHECK(SSE, 13, "data: 12345678\n\n", "", SY_EUPPROTO);
    /* data lines joined count (lines of 8 and 10 bytes): 3 + 1 + 5 = 9 fits, 3 + 1 + 3 + 1 + 3 = 11 does not */
    CHECK(SSE, 10, "data:123\ndata:12345\n\n", "|123\n12345;", 0);
    CHECK(SSE, 10, "data:123\ndata:123\ndata:123\n\n", "", SY_EUPPROTO);
    /* comments are never buffered, whatever their size */
    CHECK(SSE, 8, ": a very long comment line that passes the limit\ndata: x\n\n", "|x;", 0);
    /* an event name longer than the type field */
    char big[400];
    int n = snprintf(big, sizeof big, "event: %0200d\ndata: x\n\n", 0);
    same_all_splits(SSE, 0, big, (size_t)n, "", SY_EUPPROTO);
    n = snprintf(big, sizeof big, "event: %0127d\ndata: x\n\n", 0);
    char want[300];
    snprintf(want, sizeof want, "%0127d|x;", 0);
    same_all_splits(SSE, 0, big, (size_t)n, want, 0);
    /* an unterminated over-long line at the end */
    CHECK(SSE, 8, "data: x\n\ndata: 123456789", "|x;", SY_EUPPROTO);
}

static void sse_stop(void **st)
{
    struct sy_framer f;
    struct rec r = {.stop_after = 2};
    sy_buf_init(&r.b, 1024);
    sy_framer_init(&f, SSE, 0);
    const char *s = "data: 1\n\ndata: 2\n\ndata: 3\n\n";
    assert_int_equal(sy_framer_feed(&f, s, strlen(s), on_event, &r), 7);
    assert_string_equal(r.b.p, "|1;|2;");
    sy_framer_free(&f);
    sy_buf_free(&r.b);
}

static void sse_large_event(void **st)
{
    /* a 100 KB data line and a 1000-line event, in 7-byte pieces */
    size_t n = 100000;
    char *s = malloc(n + 64), *want = malloc(n + 64);
    memcpy(s, "data: ", 6);
    for (size_t i = 0; i < n; i++)
        s[6 + i] = want[1 + i] = (char)('a' + i % 26);
    memcpy(s + 6 + n, "\n\n", 2);
    want[0] = '|';
    memcpy(want + 1 + n, ";", 2);
    size_t cuts[20000], nc = 0;
    for (size_t c = 7; c < n + 8; c += 7)
        cuts[nc++] = c;
    char *got;
    assert_int_equal(run(SSE, 0, s, n + 8, cuts, nc, &got), 0);
    assert_string_equal(got, want);
    free(got);
    assert_int_equal(run(SSE, n + 5, s, n + 8, cuts, nc, &got), SY_EUPPROTO);
    free(got);
    free(s);
    free(want);
}

/* ---- NDJSON ------------------------------------------------------------- */

static void ndjson_lines(void **st)
{
    CHECK(NDJSON, 0,
          "{\"message\":{\"content\":\"h\xc3\xa9\"},\"done\":false}\n"
          "{\"message\":{\"content\":\"\xf0\x9f\x98\x80\"},\"done\":false}\r\n"
          "\n  \r\n\t\n"
          "{\"done\":true}\n",
          "|{\"message\":{\"content\":\"h\xc3\xa9\"},\"done\":false};|{\"message\":{\"content\":\"\xf0\x9f\x98\x80\"},"
          "\"done\":false};|{\"done\":true};",
          0);
    CHECK(NDJSON, 0, "{\"a\":1}\n{\"b\":2}", "|{\"a\":1};|{\"b\":2};", 0);
    CHECK(NDJSON, 0, "{\"a\":1}\r", "|{\"a\":1};", 0);
    CHECK(NDJSON, 0, "", "", 0);
    CHECK(NDJSON, 0, "\n\n", "", 0);
    /* only the final CR goes; a CR inside a line is kept */
    CHECK(NDJSON, 0, "a\rb\r\r\n", "|a\rb\r;", 0);
    /* SSE syntax means nothing here */
    CHECK(NDJSON, 0, ": x\ndata: y\n", "|: x;|data: y;", 0);
}

static void ndjson_limits(void **st)
{
    CHECK(NDJSON, 5, "12345\n123\n", "|12345;|123;", 0);
    CHECK(NDJSON, 5, "123\n123456\n", "|123;", SY_EUPPROTO);
    CHECK(NDJSON, 5, "123\n123456", "|123;", SY_EUPPROTO);
    CHECK(NDJSON, 5, "1234\r\n", "|1234;", 0);
}

static void ndjson_stop(void **st)
{
    struct sy_framer f;
    struct rec r = {.stop_after = 1};
    sy_buf_init(&r.b, 1024);
    sy_framer_init(&f, NDJSON, 0);
    assert_int_equal(sy_framer_feed(&f, "1\n2\n", 4, on_event, &r), 7);
    assert_string_equal(r.b.p, "|1;");
    sy_framer_free(&f);
    sy_buf_free(&r.b);
}

/* ---- AWS event stream --------------------------------------------------- */

static size_t aws_msg(char *out, const char *type, const char *payload, int exception)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    const char *names[3] = {":event-type", ":content-type", ":message-type"};
    const char *values[3] = {type, "application/json", "event"};
    if (exception) {
        names[0] = ":exception-type";
        values[2] = "exception";
    }
    assert_int_equal(sy_awses_encode(&b, names, values, 3, payload, strlen(payload)), 0);
    memcpy(out, b.p, b.len);
    size_t n = b.len;
    sy_buf_free(&b);
    return n;
}

static void aws_stream(void **st)
{
    char s[1024];
    size_t n = aws_msg(s, "messageStart", "{\"role\":\"assistant\"}", 0);
    n += aws_msg(s + n, "contentBlockDelta", "{\"delta\":{\"text\":\"h\xc3\xa9\"}}", 0);
    n += aws_msg(s + n, "throttlingException", "{\"message\":\"slow down\"}", 1);
    same_all_splits(AWS, 0, s, n,
                    "messageStart|{\"role\":\"assistant\"};contentBlockDelta|{\"delta\":{\"text\":\"h\xc3\xa9\"}};"
                    "!throttlingException|{\"message\":\"slow down\"};",
                    0);
    /* a truncated message at the end */
    same_all_splits(AWS, 0, s, n - 3,
                    "messageStart|{\"role\":\"assistant\"};contentBlockDelta|{\"delta\":{\"text\":\"h\xc3\xa9\"}};",
                    SY_EUPPROTO);
    /* a flipped payload byte fails the message CRC */
    s[n - 10] ^= 1;
    char *got;
    assert_int_equal(run(AWS, 0, s, n, NULL, 0, &got), SY_EUPPROTO);
    free(got);
}

/* ---- dispatch ----------------------------------------------------------- */

static void unknown_kind(void **st)
{
    struct sy_framer f;
    struct rec r = {0};
    sy_framer_init(&f, 9, 0);
    assert_int_equal(sy_framer_feed(&f, "x\n", 2, on_event, &r), SY_EINTERNAL);
    assert_int_equal(sy_framer_finish(&f, on_event, &r), SY_EINTERNAL);
    sy_framer_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sse_anthropic_like), cmocka_unit_test(sse_openai_like),
        cmocka_unit_test(sse_line_ends),      cmocka_unit_test(sse_cr_lf_across_feeds),
        cmocka_unit_test(sse_fields),         cmocka_unit_test(sse_bom),
        cmocka_unit_test(sse_unterminated),   cmocka_unit_test(sse_limits),
        cmocka_unit_test(sse_stop),           cmocka_unit_test(sse_large_event),
        cmocka_unit_test(ndjson_lines),       cmocka_unit_test(ndjson_limits),
        cmocka_unit_test(ndjson_stop),        cmocka_unit_test(aws_stream),
        cmocka_unit_test(unknown_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
