/* test_session.c - the gateway's signed session ids (src/mcp/session.c):
 * a round trip, what another secret, a flipped character, a cut or padded
 * token, a swapped payload, an old or future session, overlong fields and
 * random garbage do (all refused, never a crash). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp/mcp.h"

static const char K[] = "sk-salt-0123456789";

static struct sy_mcp_session sess(void)
{
    struct sy_mcp_session s;
    memset(&s, 0, sizeof s);
    strcpy(s.key_hash, "0123456789abcdef");
    strcpy(s.version, "2025-11-25");
    strcpy(s.scope, "github");
    return s;
}

static int mint(const struct sy_mcp_session *s, char *out)
{
    return sy_mcp_session_mint(K, strlen(K), s, out, 512);
}

static int rd(const char *tok, size_t n, double max_age, struct sy_mcp_session *out)
{
    return sy_mcp_session_read(K, strlen(K), tok, n, max_age, out);
}

static void test_roundtrip(void **state)
{
    (void)state;
    struct sy_mcp_session s = sess(), r;
    char tok[512];
    int n = mint(&s, tok);
    assert_true(n > 0);
    assert_int_equal((size_t)n, strlen(tok));
    assert_memory_equal(tok, "sy1.", 4);
    for (int i = 0; i < n; i++) /* a header value: base64url and dots only */
        assert_non_null(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.", tok[i]));
    assert_int_equal(rd(tok, (size_t)n, 3600, &r), 0);
    assert_string_equal(r.key_hash, s.key_hash);
    assert_string_equal(r.version, "2025-11-25");
    assert_string_equal(r.scope, "github");
    assert_int_equal(strlen(r.nonce), 22);
    int64_t now = (int64_t)time(NULL);
    assert_true(r.issued >= now - 5 && r.issued <= now + 5);
    /* two mints differ (the nonce) and both read */
    char tok2[512];
    int n2 = mint(&s, tok2);
    assert_true(n2 > 0);
    assert_true(n != n2 || memcmp(tok, tok2, (size_t)n) != 0);
    struct sy_mcp_session r2;
    assert_int_equal(rd(tok2, (size_t)n2, 0, &r2), 0);
    assert_string_not_equal(r.nonce, r2.nonce);
    /* empty fields (the master key, /mcp scope) */
    struct sy_mcp_session e;
    memset(&e, 0, sizeof e);
    n = mint(&e, tok);
    assert_true(n > 0);
    assert_int_equal(rd(tok, (size_t)n, 0, &r), 0);
    assert_string_equal(r.key_hash, "");
    assert_string_equal(r.scope, "");
    /* the longest fields fit */
    memset(s.scope, 'x', sizeof s.scope - 1);
    s.scope[sizeof s.scope - 1] = 0;
    memset(s.version, 'v', sizeof s.version - 1);
    s.version[sizeof s.version - 1] = 0;
    n = mint(&s, tok);
    assert_true(n > 0 && n < 512);
    assert_int_equal(rd(tok, (size_t)n, 0, &r), 0);
    assert_string_equal(r.scope, s.scope);
}

static void test_forgery(void **state)
{
    (void)state;
    struct sy_mcp_session s = sess(), r;
    char tok[512], t2[600];
    int n = mint(&s, tok);
    assert_true(n > 0);
    /* another instance fleet's secret */
    assert_int_equal(sy_mcp_session_read("other", 5, tok, (size_t)n, 0, &r), -1);
    /* no secret at all: never mint, never read */
    assert_int_equal(sy_mcp_session_mint("", 0, &s, t2, sizeof t2), -1);
    assert_int_equal(sy_mcp_session_read("", 0, tok, (size_t)n, 0, &r), -1);
    /* every single-character change is refused */
    const char *alpha = "Aa0-_.x";
    for (int i = 0; i < n; i++)
        for (const char *c = alpha; *c; c++) {
            if (tok[i] == *c)
                continue;
            memcpy(t2, tok, (size_t)n);
            t2[i] = *c;
            if (rd(t2, (size_t)n, 0, &r) == 0) {
                fprintf(stderr, "accepted with byte %d = %c\n", i, *c);
                fail();
            }
        }
    /* cut, extended, padded */
    for (int k = 0; k < n; k++)
        assert_int_equal(rd(tok, (size_t)k, 0, &r), -1);
    memcpy(t2, tok, (size_t)n);
    t2[n] = 'A';
    assert_int_equal(rd(t2, (size_t)n + 1, 0, &r), -1);
    t2[n] = '=';
    assert_int_equal(rd(t2, (size_t)n + 1, 0, &r), -1);
    /* another key's payload under this mac */
    struct sy_mcp_session o = sess();
    strcpy(o.key_hash, "ffffffffffffffff");
    char tok3[512];
    int n3 = mint(&o, tok3);
    const char *d1 = strrchr(tok, '.'), *d3 = strrchr(tok3, '.');
    size_t l = (size_t)(d3 - tok3);
    memcpy(t2, tok3, l);
    memcpy(t2 + l, d1, strlen(d1));
    assert_int_equal(rd(t2, l + strlen(d1), 0, &r), -1);
    (void)n3;
    /* garbage */
    assert_int_equal(rd("", 0, 0, &r), -1);
    assert_int_equal(rd("sy1.", 4, 0, &r), -1);
    assert_int_equal(rd("sy1..", 5, 0, &r), -1);
    assert_int_equal(rd(NULL, 10, 0, &r), -1);
    char huge[4096];
    memset(huge, 'A', sizeof huge);
    memcpy(huge, "sy1.", 4);
    assert_int_equal(rd(huge, sizeof huge, 0, &r), -1);
    srand(7);
    for (int it = 0; it < 20000; it++) {
        size_t k = (size_t)(rand() % 120);
        for (size_t i = 0; i < k; i++)
            t2[i] = (char)(rand() & 0xff);
        if (k > 4 && (it & 1))
            memcpy(t2, "sy1.", 4);
        assert_int_equal(rd(t2, k, 0, &r), -1);
    }
}

static void test_expiry(void **state)
{
    (void)state;
    struct sy_mcp_session s = sess(), r;
    char tok[512];
    int64_t now = (int64_t)time(NULL);
    s.issued = now - 7200;
    int n = mint(&s, tok);
    assert_int_equal(rd(tok, (size_t)n, 3600, &r), -1); /* too old */
    assert_int_equal(rd(tok, (size_t)n, 10800, &r), 0);
    assert_int_equal(rd(tok, (size_t)n, 0, &r), 0); /* no bound */
    assert_true(r.issued == now - 7200);
    s.issued = now + 3600; /* from a clock far ahead */
    n = mint(&s, tok);
    assert_int_equal(rd(tok, (size_t)n, 0, &r), -1);
    s.issued = now + 60; /* a little skew is fine */
    n = mint(&s, tok);
    assert_int_equal(rd(tok, (size_t)n, 0, &r), 0);
}

static void test_bad_mint(void **state)
{
    (void)state;
    struct sy_mcp_session s = sess();
    char tok[512];
    assert_int_equal(sy_mcp_session_mint(K, strlen(K), &s, tok, 100), -1); /* cap < 512 */
    assert_int_equal(sy_mcp_session_mint(K, strlen(K), NULL, tok, 512), -1);
    /* unterminated fields never overrun */
    memset(s.key_hash, 'k', sizeof s.key_hash);
    assert_int_equal(mint(&s, tok), -1);
    s = sess();
    memset(s.nonce, 'n', sizeof s.nonce);
    assert_int_equal(mint(&s, tok), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_forgery),
        cmocka_unit_test(test_expiry),
        cmocka_unit_test(test_bad_mint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
