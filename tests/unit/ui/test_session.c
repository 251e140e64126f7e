/* test_session.c - src/ui/session.c and the pure parts of assets.c: session
 * tokens (round trip, forgery, expiry, another salt, one spelling only), the
 * CSRF token, the Cookie header (several cookies, quotes, duplicates,
 * whitespace), POST /login's bodies (form and JSON, duplicates, escapes,
 * limits), Accept-Encoding q-values, gunzip bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "ui/ui.h"

static const char SALT[] = "sk-master-1234";
static const char ID32[] = "0123456789abcdef0123456789abcdef";

static struct sy_ui_sess master(long long exp)
{
    struct sy_ui_sess s = {.kind = SY_UI_MASTER, .exp = exp};
    memcpy(s.id, ID32, 33);
    return s;
}

static void token_round_trip(void **st)
{
    (void)st;
    struct sy_ui_sess s = master(2000000000), out;
    char tok[SY_UI_TOKEN_MAX + 1];
    int n = sy_ui_token_make(SALT, &s, tok, sizeof tok);
    assert_true(n > 0 && n <= SY_UI_TOKEN_MAX);
    assert_int_equal(sy_ui_token_verify(SALT, tok, (size_t)n, 1000, &out), 0);
    assert_int_equal(out.kind, SY_UI_MASTER);
    assert_string_equal(out.id, ID32);
    assert_int_equal(out.exp, 2000000000);
    /* a user session: 64 hex */
    struct sy_ui_sess u = {.kind = SY_UI_USER, .exp = 1500};
    memset(u.id, 'a', 64);
    u.id[64] = 0;
    n = sy_ui_token_make(SALT, &u, tok, sizeof tok);
    assert_true(n > 0);
    assert_int_equal(sy_ui_token_verify(SALT, tok, (size_t)n, 1000, &out), 0);
    assert_int_equal(out.kind, SY_UI_USER);
    /* expired, and exactly at expiry */
    assert_int_equal(sy_ui_token_verify(SALT, tok, (size_t)n, 1500, &out), -2);
    assert_int_equal(sy_ui_token_verify(SALT, tok, (size_t)n, 9999, &out), -2);
}

static void token_forgery(void **st)
{
    (void)st;
    struct sy_ui_sess s = master(2000000000), out;
    char tok[SY_UI_TOKEN_MAX + 1];
    int n = sy_ui_token_make(SALT, &s, tok, sizeof tok);
    assert_int_equal(sy_ui_token_verify("sk-other", tok, (size_t)n, 1000, &out), -1);
    assert_int_equal(sy_ui_token_verify(NULL, tok, (size_t)n, 1000, &out), -1);
    assert_int_equal(sy_ui_token_verify("", tok, (size_t)n, 1000, &out), -1);
    for (int i = 0; i < n; i++) { /* every single-byte change is refused */
        char t[SY_UI_TOKEN_MAX + 1];
        memcpy(t, tok, (size_t)n);
        t[i] = t[i] == '1' ? '2' : '1';
        assert_int_not_equal(sy_ui_token_verify(SALT, t, (size_t)n, 1000, &out), 0);
    }
    for (int k = 0; k < n; k++) /* every truncation */
        assert_int_equal(sy_ui_token_verify(SALT, tok, (size_t)k, 1000, &out), -1);
    /* uppercase hex, a leading zero, a sign: other spellings of the same token */
    char t2[256];
    snprintf(t2, sizeof t2, "m.%s.0%s", ID32, tok + 2 + 32 + 1);
    assert_int_equal(sy_ui_token_verify(SALT, t2, strlen(t2), 1000, &out), -1);
    memcpy(t2, tok, (size_t)n + 1);
    t2[n - 1] = t2[n - 1] >= 'a' ? (char)(t2[n - 1] - 32) : t2[n - 1];
    if (strcmp(t2, tok) != 0)
        assert_int_equal(sy_ui_token_verify(SALT, t2, (size_t)n, 1000, &out), -1);
    /* bad sessions are not signed */
    struct sy_ui_sess b = master(2000000000);
    b.kind = 'x';
    assert_int_equal(sy_ui_token_make(SALT, &b, tok, sizeof tok), -1);
    b = master(0);
    assert_int_equal(sy_ui_token_make(SALT, &b, tok, sizeof tok), -1);
    b = master(5);
    b.id[3] = 'G';
    assert_int_equal(sy_ui_token_make(SALT, &b, tok, sizeof tok), -1);
    b = master(5);
    assert_int_equal(sy_ui_token_make(SALT, &b, tok, 20), -1);
}

static void csrf_tokens(void **st)
{
    (void)st;
    struct sy_ui_sess a = master(2000000000), b = master(2000000001);
    char ca[65], cb[65], cc[65], tok[SY_UI_TOKEN_MAX + 1];
    assert_int_equal(sy_ui_csrf(SALT, &a, ca), 0);
    assert_int_equal(sy_ui_csrf(SALT, &b, cb), 0);
    assert_int_equal(sy_ui_csrf("other", &a, cc), 0);
    assert_int_equal(strlen(ca), 64);
    assert_string_not_equal(ca, cb);
    assert_string_not_equal(ca, cc);
    /* the CSRF token is not the session token's MAC (another key) */
    int n = sy_ui_token_make(SALT, &a, tok, sizeof tok);
    assert_string_not_equal(tok + n - 64, ca);
    assert_int_equal(sy_ui_csrf(NULL, &a, cc), -1);
    assert_true(sy_ui_ct_eq("abc", 3, "abc", 3));
    assert_false(sy_ui_ct_eq("abc", 3, "abd", 3));
    assert_false(sy_ui_ct_eq("abc", 3, "ab", 2));
}

static int cookie(const char *h, const char **v, size_t *vn)
{
    return sy_ui_cookie_get(h, strlen(h), SY_UI_COOKIE, v, vn);
}

static void cookie_header(void **st)
{
    (void)st;
    const char *v;
    size_t vn;
    assert_int_equal(cookie("sy_session=abc", &v, &vn), 1);
    assert_int_equal(vn, 3);
    assert_memory_equal(v, "abc", 3);
    assert_int_equal(cookie("a=1; sy_session=x.y ; b=2", &v, &vn), 1);
    assert_int_equal(vn, 3);
    assert_int_equal(cookie("a=1;sy_session=\"q\";b", &v, &vn), 1);
    assert_int_equal(vn, 1);
    assert_int_equal(*v, 'q');
    assert_int_equal(cookie("  sy_session = z  ", &v, &vn), 1);
    assert_int_equal(vn, 1);
    assert_int_equal(cookie("xsy_session=1; sy_sessionx=2; SY_SESSION=3", &v, &vn), 0);
    assert_int_equal(cookie("", &v, &vn), 0);
    assert_int_equal(cookie(";;;", &v, &vn), 0);
    assert_int_equal(cookie("sy_session", &v, &vn), 0);
    assert_int_equal(cookie("sy_session=a; sy_session=a", &v, &vn), -1);
    assert_int_equal(cookie("sy_session=a\"b", &v, &vn), -1);
    assert_int_equal(cookie("sy_session=\"", &v, &vn), -1);
    assert_int_equal(cookie("sy_session=", &v, &vn), 1);
    assert_int_equal(vn, 0);
}

static int parse(const char *ct, const char *body, char *u, char *p, const char **why)
{
    return sy_ui_login_parse(ct, ct ? strlen(ct) : 0, body, strlen(body), u, 32, p, 32, why);
}

static void login_bodies(void **st)
{
    (void)st;
    char u[32], p[32];
    const char *why;
    const char *form = "application/x-www-form-urlencoded";
    assert_int_equal(parse(form, "username=ad+min&password=p%40ss%2B", u, p, &why), 0);
    assert_string_equal(u, "ad min");
    assert_string_equal(p, "p@ss+");
    assert_int_equal(parse("application/x-www-form-urlencoded; charset=utf-8", "password=x&x=1&username=y", u, p, &why),
                     0);
    assert_string_equal(u, "y");
    assert_int_equal(parse(form, "username=a&password=b&username=c", u, p, &why), -1);
    assert_int_equal(parse(form, "username=a", u, p, &why), -1);
    assert_int_equal(parse(form, "username=a&password=%zz", u, p, &why), -1);
    assert_int_equal(parse(form, "username=a&password=%4", u, p, &why), -1);
    assert_int_equal(parse(form, "username=a&password=%00", u, p, &why), -1);
    assert_int_equal(parse(form, "username=a&password=0123456789012345678901234567890123", u, p, &why), -1);
    assert_int_equal(parse(form, "username=a&password=", u, p, &why), 0);
    assert_string_equal(p, "");
    const char *json = "application/json";
    assert_int_equal(parse(json, "{\"username\":\"a\\u00e9\",\"password\":\"p\\\"q\"}", u, p, &why), 0);
    assert_string_equal(u, "a\xc3\xa9");
    assert_string_equal(p, "p\"q");
    assert_int_equal(parse(NULL, "{\"username\":\"a\",\"password\":\"b\"}", u, p, &why), 0);
    assert_int_equal(parse(json, "{\"username\":\"a\",\"user\\u006eame\":\"b\",\"password\":\"c\"}", u, p, &why), -1);
    assert_int_equal(parse(json, "{\"username\":\"a\",\"password\":1}", u, p, &why), -1);
    assert_int_equal(parse(json, "{\"username\":\"a\",\"password\":\"b\\u0000c\"}", u, p, &why), -1);
    assert_int_equal(parse(json, "[\"username\",\"password\"]", u, p, &why), -1);
    assert_int_equal(parse(json, "{\"username\":\"a\",\"password\":\"b\"", u, p, &why), -1);
    assert_int_equal(parse(json, "", u, p, &why), -1);
    assert_int_equal(parse("text/plain", "username=a&password=b", u, p, &why), -1);
    assert_non_null(why);
}

static int gz(const char *a)
{
    return sy_ui_accepts_gzip(a, strlen(a));
}

static void accept_encoding(void **st)
{
    (void)st;
    assert_true(gz("gzip"));
    assert_true(gz("gzip, deflate, br"));
    assert_true(gz("br;q=1.0, GZIP;q=0.5"));
    assert_true(gz("x-gzip"));
    assert_true(gz("*"));
    assert_true(gz("gzip;q=0.001"));
    assert_false(gz("gzip;q=0"));
    assert_false(gz("gzip;q=0.000"));
    assert_false(gz("gzip;q=0, *"));
    assert_false(gz("*;q=0"));
    assert_false(gz("identity"));
    assert_false(gz("deflate, br"));
    assert_false(gz(""));
    assert_false(gz("gzipx"));
    assert_true(gz("identity;q=0.5, gzip ; q=1"));
}

static void gunzip_bounds(void **st)
{
    (void)st;
    const char raw[] = "hello hello hello hello";
    unsigned char z[128];
    z_stream s;
    memset(&s, 0, sizeof s);
    assert_int_equal(deflateInit2(&s, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    s.next_in = (unsigned char *)raw;
    s.avail_in = sizeof raw - 1;
    s.next_out = z;
    s.avail_out = sizeof z;
    assert_int_equal(deflate(&s, Z_FINISH), Z_STREAM_END);
    size_t zn = s.total_out;
    deflateEnd(&s);
    char out[64];
    assert_int_equal(sy_ui_gunzip(z, zn, out, sizeof out), (long)sizeof raw - 1);
    assert_memory_equal(out, raw, sizeof raw - 1);
    assert_int_equal(sy_ui_gunzip(z, zn, out, 5), -1);     /* does not fit */
    assert_int_equal(sy_ui_gunzip(z, zn - 4, out, 64), -1); /* truncated */
    assert_int_equal(sy_ui_gunzip((const unsigned char *)"nope", 4, out, 64), -1);
}

static void embedded_table(void **st)
{
    (void)st;
    assert_int_equal(strlen(sy_ui_hash), 12);
    for (size_t i = 0; i < sy_ui_nfiles; i++) {
        const struct sy_ui_file *f = &sy_ui_files[i];
        assert_ptr_equal(sy_ui_file_find(f->path, strlen(f->path)), f);
        if (i)
            assert_true(strcmp(sy_ui_files[i - 1].path, f->path) < 0);
        char *raw = test_malloc(f->raw_len + 1);
        assert_int_equal(sy_ui_gunzip(f->gz, f->gz_len, raw, f->raw_len + 1), (long)f->raw_len);
        if (strcmp(f->path, "index.html") == 0) {
            raw[f->raw_len] = 0;
            assert_null(strstr(raw, "%ASSETS%"));
        }
        test_free(raw);
    }
    assert_null(sy_ui_file_find("no-such", 7));
    assert_null(sy_ui_file_find("", 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(token_round_trip), cmocka_unit_test(token_forgery),   cmocka_unit_test(csrf_tokens),
        cmocka_unit_test(cookie_header),    cmocka_unit_test(login_bodies),    cmocka_unit_test(accept_encoding),
        cmocka_unit_test(gunzip_bounds),    cmocka_unit_test(embedded_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
