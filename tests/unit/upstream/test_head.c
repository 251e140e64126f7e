/* test_head.c - the fast response-head reader (upstream/head.c): the shapes
 * it reads, the ones it leaves to http-parser, and the synthetic head. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "upstream/up_int.h"

static size_t parse(const char *s, struct sy__rhead *h)
{
    return sy__head_parse(s, strlen(s), h);
}

static void t_typical(void **st)
{
    struct sy__rhead h;
    const char *r = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 42\r\n"
                    "x-request-id:  req_1 \r\n\r\n{\"body\"";
    size_t hl = parse(r, &h);
    assert_int_equal(hl, strstr(r, "\r\n\r\n") + 4 - r);
    assert_int_equal(h.status, 200);
    assert_int_equal(h.nh, 3);
    assert_int_equal(h.clen, 42);
    assert_false(h.chunked);
    assert_memory_equal(r + h.hoff[2][0], "x-request-id", 12);
    assert_int_equal(h.hoff[2][3], 5); /* OWS trimmed */
    assert_memory_equal(r + h.hoff[2][2], "req_1", 5);
    char syn[160];
    size_t sl = sy__head_synth(&h, syn, sizeof syn);
    syn[sl] = 0;
    assert_string_equal(syn, "HTTP/1.1 200 X\r\nContent-Length: 42\r\n\r\n");
}

static void t_chunked_close(void **st)
{
    struct sy__rhead h;
    assert_true(parse("HTTP/1.1 429 Too Many\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n", &h));
    assert_true(h.chunked);
    char syn[160];
    size_t sl = sy__head_synth(&h, syn, sizeof syn);
    syn[sl] = 0;
    assert_string_equal(syn, "HTTP/1.1 429 X\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
}

static void t_slow_way(void **st)
{
    struct sy__rhead h;
    static const char *const no[] = {
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n",                    /* incomplete */
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r",                  /* incomplete */
        "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\n",                /* 1.0 */
        "HTTP/1.1 100 Continue\r\n\r\n",                               /* 1xx */
        "HTTP/1.1 200 OK\nContent-Length: 5\n\n",                      /* bare LF */
        "HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n",                       /* obs-fold */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", /* TE list */
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\t\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encodingx: chunked\r\n\r\n", /* prefix of a special name */
        "HTTP/1.1 200 OK\r\nProxy-Connection: close\r\n\r\n",
        "HTTP/1.1 200 OK\r\nUpgrade: h2c\r\n\r\n",
        "HTTP/1.1 200 OK\r\nConnection: upgrade, close\r\n\r\n",
        "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
        "HTTP/1.1 200 OK\r\nA: b\x01\r\n\r\n", /* CTL in a value */
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_int_equal(parse(no[i], &h), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(t_typical), cmocka_unit_test(t_chunked_close),
                                       cmocka_unit_test(t_slow_way)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
