/* test_eventstream.c - the AWS event-stream reader and writer (upstream/eventstream.c).
 *
 *   vectors                      from                                   checks
 *   ---------------------------  -------------------------------------  ------------------------------
 *   empty, int8..int64, payload,  botocore tests/unit/test_eventstream   decoded type/payload, every
 *   one string header, all       (positive cases; the 3 AWS C ones are  split down to one byte,
 *   header types, error event    the same bytes)                        all in one buffer
 *   corrupted length/payload/    botocore negative cases                SY_EUPPROTO
 *   headers/header length,
 *   invalid headers length,
 *   oversized payload
 *   CRC-32                       zlib's crc32() values                  table, chaining
 *
 * plus messages written by sy_awses_encode (Bedrock-shaped events and
 * exceptions), truncation, max_event, a header running past its block, an
 * unknown header type, and the callback's stop code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/errors.h"
#include "upstream/framing.h"

#define S(lit) lit, sizeof(lit) - 1

/* ---- botocore's vectors ---------------------------------------------------- */

static const char EMPTY_MESSAGE[] = "\x00\x00\x00\x10\x00\x00\x00\x00\x05\xc2H\xeb}\x98\xc8\xff";
static const char INT8_HEADER[] = "\x00\x00\x00\x17\x00\x00\x00\x07)\x86\x01X\x04"
                                  "byte\x02\xff\xc2\xf8i\xdc";
static const char INT16_HEADER[] = "\x00\x00\x00\x19\x00\x00\x00\tq\x0e\x92>\x05"
                                   "short\x03\xff\xff\xb2|\xb6\xcc";
static const char INT32_HEADER[] = "\x00\x00\x00\x1d\x00\x00\x00\r\x83\xe3\xf0\xe7\x07"
                                   "integer\x04\xff\xff\xff\xff\x8b\x8e\x12\xeb";
static const char INT64_HEADER[] = "\x00\x00\x00\x1e\x00\x00\x00\x0e]J\xdb\x8d\x04"
                                   "long\x05\xff\xff\xff\xff\xff\xff\xff\xffK\xc2\x32\xda";
static const char PAYLOAD_NO_HEADERS[] = "\x00\x00\x00\x1d\x00\x00\x00\x00\xfdR\x8cZ{'foo':'bar'}\xc3"
                                         "e96";
static const char PAYLOAD_ONE_STR_HEADER[] = "\x00\x00\x00=\x00\x00\x00 \x07\xfd\x83\x96\x0c"
                                             "content-type\x07\x00\x10"
                                             "application/json{'foo':'bar'}\x8d\x9c\x08\xb1";
static const char ALL_HEADERS_TYPES[] = "\x00\x00\x00\x62\x00\x00\x00\x52\x03\xb5\xcb\x9c"
                                        "\x01"
                                        "0\x00\x01"
                                        "1\x01\x01"
                                        "2\x02\x02\x01"
                                        "3\x03\x00\x03"
                                        "\x01"
                                        "4\x04\x00\x00\x00\x04\x01"
                                        "5\x05\x00\x00\x00\x00\x00\x00\x00\x05"
                                        "\x01"
                                        "6\x06\x00\x05"
                                        "bytes\x01"
                                        "7\x07\x00\x04"
                                        "utf8"
                                        "\x01"
                                        "8\x08\x00\x00\x00\x00\x00\x00\x00\x08\x01"
                                        "9\x09"
                                        "0123456789abcdef"
                                        "\x63\x35\x36\x71";
static const char ERROR_EVENT_MESSAGE[] = "\x00\x00\x00\x52\x00\x00\x00\x42\xbf\x23\x63\x7e"
                                          "\x0d:message-type\x07\x00\x05"
                                          "error"
                                          "\x0b:error-code\x07\x00\x04"
                                          "code"
                                          "\x0e:error-message\x07\x00\x07"
                                          "message"
                                          "\x6b\x6c\xea\x3d";

static const char CORRUPTED_HEADER_LENGTH[] = "\x00\x00\x00=\xff\x00\x01\x02\x07\xfd\x83\x96\x0c"
                                              "content-type\x07\x00\x10"
                                              "application/json{'foo':'bar'}\x8d\x9c\x08\xb1";
static const char CORRUPTED_HEADERS[] = "\x00\x00\x00=\x00\x00\x00 \x07\xfd\x83\x96\x0c"
                                        "content+type\x07\x00\x10"
                                        "application/json{'foo':'bar'}\x8d\x9c\x08\xb1";
static const char CORRUPTED_LENGTH[] = "\x01\x00\x00\x1d\x00\x00\x00\x00\xfdR\x8cZ{'foo':'bar'}\xc3"
                                       "e96";
static const char CORRUPTED_PAYLOAD[] = "\x00\x00\x00\x1d\x00\x00\x00\x00\xfdR\x8cZ{'foo':'bar'\x8d\xc3"
                                        "e96";
static const char INVALID_HEADERS_LENGTH[] = "\x00\x00\x00\x3d\xff\x00\x01\x02\x15\x83\xf5\xc2\x0c"
                                             "content-type\x07\x00\x10"
                                             "application/json{'foo':'bar'}\x2f\x37\x7f\x5d";
static const char DUPLICATE_HEADER[] = "\x00\x00\x00\x24\x00\x00\x00\x14\x4b\xb9\x82\xd0"
                                       "\x04test\x04"
                                       "asdf\x04test\x04"
                                       "asdf\xf3\xf4\x75\x63";
/* the prelude of botocore's INVALID_PAYLOAD_LENGTH: 24 MiB + 1 of payload */
static const char BIG_PRELUDE[] = "\x01\x80\x00\x21\x00\x00\x00\x00\xdd\x3f\x33\xb1";

/* ---- a recording callback -------------------------------------------------- */

struct rec {
    struct sy_buf log; /* "type|data\n" per message */
    int n;
    int stop_at; /* return 7 on this message (1-based), 0 never */
};

static int on_msg(void *ud, const char *type, size_t tl, const char *data, size_t dl)
{
    struct rec *r = ud;
    r->n++;
    sy_buf_append(&r->log, type, tl);
    sy_buf_append(&r->log, "|", 1);
    sy_buf_append(&r->log, data, dl);
    sy_buf_append(&r->log, "\n", 1);
    return r->n == r->stop_at ? 7 : 0;
}

static void rec_init(struct rec *r)
{
    memset(r, 0, sizeof *r);
    sy_buf_init(&r->log, 64 << 20);
}

static void framer(struct sy_framer *f, size_t max_event)
{
    memset(f, 0, sizeof *f);
    f->kind = 2;
    f->max_event = max_event;
    sy_buf_init(&f->acc, max_event + 1);
}

/* Feed p[0..n) in pieces of `step` (0: random pieces from seed), then finish. */
static int feed_split(const char *p, size_t n, size_t step, unsigned seed, struct rec *r, size_t max_event)
{
    struct sy_framer f;
    framer(&f, max_event);
    int rc = 0;
    size_t off = 0;
    while (off < n && !rc) {
        size_t k = step;
        if (!k) {
            seed = seed * 1103515245u + 12345u;
            k = 1 + (seed >> 16) % 97;
        }
        if (k > n - off)
            k = n - off;
        rc = sy_awses_feed(&f, p + off, k, on_msg, r);
        off += k;
    }
    if (!rc)
        rc = sy_awses_finish(&f, on_msg, r);
    sy_buf_free(&f.acc);
    return rc;
}

static void expect_one(const char *msg, size_t n, const char *want)
{
    size_t steps[] = {0, 1, 2, 3, 5, 11, 12, 13, 4096};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        struct rec r;
        rec_init(&r);
        assert_int_equal(feed_split(msg, n, steps[i], 42, &r, 1 << 20), 0);
        assert_int_equal(r.n, 1);
        assert_int_equal(r.log.len, strlen(want));
        assert_memory_equal(r.log.p, want, strlen(want));
        sy_buf_free(&r.log);
    }
}

static void t_positive(void **st)
{
    expect_one(S(EMPTY_MESSAGE), "|\n");
    expect_one(S(INT8_HEADER), "|\n");
    expect_one(S(INT16_HEADER), "|\n");
    expect_one(S(INT32_HEADER), "|\n");
    expect_one(S(INT64_HEADER), "|\n");
    expect_one(S(PAYLOAD_NO_HEADERS), "|{'foo':'bar'}\n");
    expect_one(S(PAYLOAD_ONE_STR_HEADER), "|{'foo':'bar'}\n");
    expect_one(S(ALL_HEADERS_TYPES), "|\n");
    /* an error message with no payload: its :error-message */
    expect_one(S(ERROR_EVENT_MESSAGE), "!code|message\n");
    /* botocore refuses repeated header names; they are harmless here */
    expect_one(S(DUPLICATE_HEADER), "|\n");
}

static void t_all_in_one_buffer(void **st)
{
    struct sy_buf all;
    sy_buf_init(&all, 1 << 20);
    const struct {
        const char *p;
        size_t n;
    } v[] = {{S(EMPTY_MESSAGE)},          {S(INT8_HEADER)},       {S(INT16_HEADER)},
             {S(INT32_HEADER)},           {S(INT64_HEADER)},      {S(PAYLOAD_NO_HEADERS)},
             {S(PAYLOAD_ONE_STR_HEADER)}, {S(ALL_HEADERS_TYPES)}, {S(ERROR_EVENT_MESSAGE)}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        sy_buf_append(&all, v[i].p, v[i].n);
    const char *want = "|\n|\n|\n|\n|\n|{'foo':'bar'}\n|{'foo':'bar'}\n|\n!code|message\n";
    for (unsigned seed = 0; seed < 50; seed++) {
        for (size_t step = 0; step < 3; step++) {
            struct rec r;
            rec_init(&r);
            assert_int_equal(feed_split(all.p, all.len, step, seed, &r, 1 << 20), 0);
            assert_int_equal(r.n, 9);
            assert_string_equal(r.log.p, want);
            sy_buf_free(&r.log);
        }
    }
    sy_buf_free(&all);
}

static void expect_proto(const char *p, size_t n, size_t max_event)
{
    for (size_t step = 0; step < 4; step++) {
        struct rec r;
        rec_init(&r);
        assert_int_equal(feed_split(p, n, step, 7, &r, max_event), SY_EUPPROTO);
        assert_int_equal(r.n, 0);
        sy_buf_free(&r.log);
    }
}

static void t_negative(void **st)
{
    expect_proto(S(CORRUPTED_LENGTH), 1 << 20);
    expect_proto(S(CORRUPTED_PAYLOAD), 1 << 20);
    expect_proto(S(CORRUPTED_HEADERS), 1 << 20);
    expect_proto(S(CORRUPTED_HEADER_LENGTH), 1 << 20);
    expect_proto(S(INVALID_HEADERS_LENGTH), 1 << 20);
    /* 24 MiB over a 16 MiB cap: refused on the prelude, without waiting for the body */
    struct sy_framer f;
    framer(&f, 16 << 20);
    struct rec r;
    rec_init(&r);
    assert_int_equal(sy_awses_feed(&f, S(BIG_PRELUDE), on_msg, &r), SY_EUPPROTO);
    sy_buf_free(&f.acc);
    framer(&f, 16 << 20);
    for (size_t i = 0; i < 11; i++)
        assert_int_equal(sy_awses_feed(&f, BIG_PRELUDE + i, 1, on_msg, &r), 0);
    assert_int_equal(sy_awses_feed(&f, BIG_PRELUDE + 11, 1, on_msg, &r), SY_EUPPROTO);
    assert_int_equal(r.n, 0);
    sy_buf_free(&f.acc);
    sy_buf_free(&r.log);
}

static void t_crc32(void **st)
{
    assert_int_equal(sy_crc32(0, "", 0), 0);
    assert_int_equal(sy_crc32(0, "123456789", 9), 0xcbf43926u);
    assert_int_equal(sy_crc32(0, "a", 1), 0xe8b7be43u);
    assert_int_equal(sy_crc32(0, S("The quick brown fox jumps over the lazy dog")), 0x414fa339u);
    unsigned char b[1024];
    for (int i = 0; i < 1024; i++)
        b[i] = (unsigned char)i;
    assert_int_equal(sy_crc32(0, b, sizeof b), 0xb70b4c26u);
    /* chaining, as zlib's crc32(crc, ...) */
    assert_int_equal(sy_crc32(sy_crc32(0, b, 100), b + 100, sizeof b - 100), 0xb70b4c26u);
    /* the AWS C library's vectors: prelude and message CRCs */
    assert_int_equal(sy_crc32(0, EMPTY_MESSAGE, 8), 0x05c248ebu);
    assert_int_equal(sy_crc32(0, EMPTY_MESSAGE, 12), 0x7d98c8ffu);
    assert_int_equal(sy_crc32(0, PAYLOAD_ONE_STR_HEADER, 8), 0x07fd8396u);
    assert_int_equal(sy_crc32(0, PAYLOAD_ONE_STR_HEADER, sizeof PAYLOAD_ONE_STR_HEADER - 1 - 4), 0x8d9c08b1u);
}

static void t_encode_vectors(void **st)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    const char *n1[] = {"content-type"}, *v1[] = {"application/json"};
    assert_int_equal(sy_awses_encode(&b, n1, v1, 1, S("{'foo':'bar'}")), 0);
    assert_int_equal(b.len, sizeof PAYLOAD_ONE_STR_HEADER - 1);
    assert_memory_equal(b.p, PAYLOAD_ONE_STR_HEADER, b.len);
    sy_buf_reset(&b);
    assert_int_equal(sy_awses_encode(&b, NULL, NULL, 0, NULL, 0), 0);
    assert_int_equal(b.len, 16);
    assert_memory_equal(b.p, EMPTY_MESSAGE, 16);
    sy_buf_reset(&b);
    assert_int_equal(sy_awses_encode(&b, NULL, NULL, 0, S("{'foo':'bar'}")), 0);
    assert_memory_equal(b.p, PAYLOAD_NO_HEADERS, sizeof PAYLOAD_NO_HEADERS - 1);
    const char *n3[] = {":message-type", ":error-code", ":error-message"}, *v3[] = {"error", "code", "message"};
    sy_buf_reset(&b);
    assert_int_equal(sy_awses_encode(&b, n3, v3, 3, NULL, 0), 0);
    assert_int_equal(b.len, sizeof ERROR_EVENT_MESSAGE - 1);
    assert_memory_equal(b.p, ERROR_EVENT_MESSAGE, b.len);
    /* appends; refuses what does not fit, leaving the buffer as it was */
    size_t l = b.len;
    assert_int_equal(sy_awses_encode(&b, n1, v1, 1, "x", 1), 0);
    assert_int_equal(b.len, l + 16 + 1 + 12 + 1 + 2 + 16 + 1);
    struct sy_buf s;
    sy_buf_init(&s, 20);
    assert_int_equal(sy_awses_encode(&s, n1, v1, 1, "x", 1), SY_ENOSPC);
    assert_int_equal(s.len, 0);
    char longname[300];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    const char *nl[] = {longname};
    assert_int_equal(sy_awses_encode(&b, nl, v1, 1, NULL, 0), SY_EINVAL);
    sy_buf_free(&s);
    sy_buf_free(&b);
}

/* Bedrock-shaped events and exceptions through encode -> feed. */
static void enc_event(struct sy_buf *b, const char *type, const char *json)
{
    const char *n[] = {":event-type", ":content-type", ":message-type"};
    const char *v[] = {type, "application/json", "event"};
    assert_int_equal(sy_awses_encode(b, n, v, 3, json, strlen(json)), 0);
}

static void enc_exception(struct sy_buf *b, const char *type, const char *json)
{
    const char *n[] = {":exception-type", ":content-type", ":message-type"};
    const char *v[] = {type, "application/json", "exception"};
    assert_int_equal(sy_awses_encode(b, n, v, 3, json, strlen(json)), 0);
}

static void t_bedrock_sequence(void **st)
{
    struct sy_buf b;
    sy_buf_init(&b, 8 << 20);
    enc_event(&b, "messageStart", "{\"p\":\"abcd\",\"role\":\"assistant\"}");
    enc_event(&b, "contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"h\xc3\xa9llo\"},\"p\":\"ab\"}");
    enc_event(&b, "contentBlockStop", "{\"contentBlockIndex\":0}");
    enc_exception(&b, "throttlingException", "{\"message\":\"Too many requests\"}");
    /* a 1 MiB payload among the small ones */
    size_t big = 1 << 20;
    char *bp = malloc(big + 1);
    memset(bp, 'x', big);
    bp[big] = 0;
    enc_event(&b, "metadata", bp);
    const char *want_head =
        "messageStart|{\"p\":\"abcd\",\"role\":\"assistant\"}\n"
        "contentBlockDelta|{\"contentBlockIndex\":0,\"delta\":{\"text\":\"h\xc3\xa9llo\"},\"p\":\"ab\"}\n"
        "contentBlockStop|{\"contentBlockIndex\":0}\n"
        "!throttlingException|{\"message\":\"Too many requests\"}\n"
        "metadata|";
    for (unsigned seed = 1; seed < 20; seed++) {
        struct rec r;
        rec_init(&r);
        assert_int_equal(feed_split(b.p, b.len, seed == 1 ? 1 : 0, seed, &r, 2 << 20), 0);
        assert_int_equal(r.n, 5);
        assert_int_equal(r.log.len, strlen(want_head) + big + 1);
        assert_memory_equal(r.log.p, want_head, strlen(want_head));
        assert_int_equal(r.log.p[r.log.len - 2], 'x');
        sy_buf_free(&r.log);
    }
    /* the 1 MiB event over a 512 KiB cap */
    struct rec r;
    rec_init(&r);
    assert_int_equal(feed_split(b.p, b.len, 0, 3, &r, 512 << 10), SY_EUPPROTO);
    assert_int_equal(r.n, 4);
    sy_buf_free(&r.log);
    free(bp);
    sy_buf_free(&b);
}

static void t_truncated(void **st)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    enc_event(&b, "messageStart", "{\"role\":\"assistant\"}");
    size_t l1 = b.len;
    enc_event(&b, "messageStop", "{\"stopReason\":\"end_turn\"}");
    for (size_t cut = 1; cut < b.len; cut++) {
        struct rec r;
        rec_init(&r);
        int rc = feed_split(b.p, cut, 0, (unsigned)cut, &r, 1 << 20);
        /* only a cut at the message boundary ends cleanly; the whole first message is delivered either way */
        assert_int_equal(rc, cut == l1 ? 0 : SY_EUPPROTO);
        assert_int_equal(r.n, cut >= l1 ? 1 : 0);
        sy_buf_free(&r.log);
    }
    struct rec r;
    rec_init(&r);
    assert_int_equal(feed_split(b.p, b.len, 0, 1, &r, 1 << 20), 0);
    assert_int_equal(r.n, 2);
    sy_buf_free(&r.log);
    sy_buf_free(&b);
}

/* A raw message from header bytes and a payload, with correct CRCs. */
static size_t raw_msg(unsigned char *m, const void *hdr, size_t hl, const void *pl, size_t pn)
{
    uint32_t t = (uint32_t)(16 + hl + pn);
    m[0] = (unsigned char)(t >> 24), m[1] = (unsigned char)(t >> 16), m[2] = (unsigned char)(t >> 8),
    m[3] = (unsigned char)t;
    m[4] = (unsigned char)(hl >> 24), m[5] = (unsigned char)(hl >> 16), m[6] = (unsigned char)(hl >> 8),
    m[7] = (unsigned char)hl;
    uint32_t c = sy_crc32(0, m, 8);
    m[8] = (unsigned char)(c >> 24), m[9] = (unsigned char)(c >> 16), m[10] = (unsigned char)(c >> 8),
    m[11] = (unsigned char)c;
    memcpy(m + 12, hdr, hl);
    memcpy(m + 12 + hl, pl, pn);
    c = sy_crc32(0, m, t - 4);
    m[t - 4] = (unsigned char)(c >> 24), m[t - 3] = (unsigned char)(c >> 16), m[t - 2] = (unsigned char)(c >> 8),
          m[t - 1] = (unsigned char)c;
    return t;
}

static void t_bad_headers(void **st)
{
    unsigned char m[256];
    /* a string value whose length runs past the header block */
    size_t n = raw_msg(m,
                       "\x01"
                       "a\x07\x00\x09"
                       "abc",
                       8, "{}", 2);
    expect_proto((const char *)m, n, 1 << 20);
    /* a name longer than the block */
    n = raw_msg(m,
                "\x09"
                "ab",
                3, "", 0);
    expect_proto((const char *)m, n, 1 << 20);
    /* unknown value type 10 */
    n = raw_msg(m,
                "\x01"
                "a\x0a",
                3, "", 0);
    expect_proto((const char *)m, n, 1 << 20);
    /* a fixed-size value cut short (int32 with 2 bytes) */
    n = raw_msg(m,
                "\x01"
                "a\x04\x00\x00",
                5, "", 0);
    expect_proto((const char *)m, n, 1 << 20);
    /* a uuid value (16 bytes) that fits exactly is fine; :event-type after it is read */
    unsigned char h[64];
    size_t hl = 0;
    memcpy(h + hl, "\x01u\x09", 3);
    hl += 3;
    memset(h + hl, 0xab, 16);
    hl += 16;
    memcpy(h + hl, "\x0b:event-type\x07\x00\x02xy", 17);
    hl += 17;
    n = raw_msg(m, h, hl, "pp", 2);
    expect_one((const char *)m, n, "xy|pp\n");
    /* an exception without :exception-type: type "!" */
    n = raw_msg(m,
                "\x0d:message-type\x07\x00\x09"
                "exception",
                26, "{}", 2);
    expect_one((const char *)m, n, "!|{}\n");
    /* a total length under 16 (CRC right) */
    unsigned char tiny[12] = {0, 0, 0, 15, 0, 0, 0, 0};
    uint32_t c = sy_crc32(0, tiny, 8);
    tiny[8] = (unsigned char)(c >> 24), tiny[9] = (unsigned char)(c >> 16), tiny[10] = (unsigned char)(c >> 8),
    tiny[11] = (unsigned char)c;
    expect_proto((const char *)tiny, 12, 1 << 20);
}

static void t_stop_code(void **st)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    enc_event(&b, "a", "1");
    enc_event(&b, "b", "2");
    enc_event(&b, "c", "3");
    for (size_t step = 0; step < 3; step++) {
        struct rec r;
        rec_init(&r);
        r.stop_at = 2;
        struct sy_framer f;
        framer(&f, 1 << 20);
        int rc = 0;
        for (size_t off = 0; off < b.len && !rc;) {
            size_t k = step ? step : b.len;
            if (k > b.len - off)
                k = b.len - off;
            rc = sy_awses_feed(&f, b.p + off, k, on_msg, &r);
            off += k;
        }
        assert_int_equal(rc, 7);
        assert_int_equal(r.n, 2);
        assert_string_equal(r.log.p, "a|1\nb|2\n");
        sy_buf_free(&f.acc);
        sy_buf_free(&r.log);
    }
    sy_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_positive),  cmocka_unit_test(t_all_in_one_buffer), cmocka_unit_test(t_negative),
        cmocka_unit_test(t_crc32),     cmocka_unit_test(t_encode_vectors),    cmocka_unit_test(t_bedrock_sequence),
        cmocka_unit_test(t_truncated), cmocka_unit_test(t_bad_headers),       cmocka_unit_test(t_stop_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
