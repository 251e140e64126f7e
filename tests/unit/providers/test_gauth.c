/* test_gauth.c - Google OAuth2 pure parts (providers/gauth.h): credentials
 * parsing, the RS256 assertion checked with the public half of a key made
 * here (signature, header, claims), the token request bodies and the token
 * endpoint's answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "core/buf.h"
#include "core/errors.h"
#include "providers/gauth.h"

static EVP_PKEY *key;   /* RSA 2048, made once */
static char *pem_pkcs8; /* its PEM, PKCS#8 */
static char *pem_pkcs1; /* the same key, "BEGIN RSA PRIVATE KEY" */

static char *pem_of(EVP_PKEY *pk, int traditional)
{
    BIO *b = BIO_new(BIO_s_mem());
    int ok = traditional ? PEM_write_bio_PrivateKey_traditional(b, pk, NULL, NULL, 0, NULL, NULL)
                         : PEM_write_bio_PrivateKey(b, pk, NULL, NULL, 0, NULL, NULL);
    assert_int_equal(ok, 1);
    char *p;
    long n = BIO_get_mem_data(b, &p);
    char *r = strndup(p, (size_t)n);
    BIO_free(b);
    return r;
}

/* A credentials JSON; members given as "key", value pairs (value NULL: left out). */
static char *creds(const char *type, const char *email, const char *pem, const char *kid, const char *token_uri)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    SY_BUF_LIT(&b, "{");
    int first = 1;
    const char *k[] = {"type", "client_email", "private_key", "private_key_id", "token_uri", "project_id"};
    const char *v[] = {type, email, pem, kid, token_uri, "proj-1"};
    for (int i = 0; i < 6; i++) {
        if (!v[i])
            continue;
        if (!first)
            SY_BUF_LIT(&b, ",");
        first = 0;
        sy_buf_printf(&b, "\"%s\":\"", k[i]);
        sy_buf_json_escape(&b, v[i], strlen(v[i]));
        SY_BUF_LIT(&b, "\"");
    }
    SY_BUF_LIT(&b, "}");
    char *r = strdup(b.p);
    sy_buf_free(&b);
    return r;
}

static int setup(void **state)
{
    (void)state;
    key = EVP_RSA_gen(2048);
    assert_non_null(key);
    pem_pkcs8 = pem_of(key, 0);
    pem_pkcs1 = pem_of(key, 1);
    assert_non_null(strstr(pem_pkcs1, "BEGIN RSA PRIVATE KEY"));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    EVP_PKEY_free(key);
    free(pem_pkcs8);
    free(pem_pkcs1);
    return 0;
}

static size_t b64url_decode(const char *s, size_t n, unsigned char *out)
{
    size_t k = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        const char *p = strchr(t, s[i]);
        assert_non_null(p);
        acc = acc << 6 | (uint32_t)(p - t);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[k++] = (unsigned char)(acc >> bits);
        }
    }
    return k;
}

static json_object *part_json(const char *s, size_t n)
{
    unsigned char buf[4096];
    assert_true(n * 3 / 4 < sizeof buf);
    size_t k = b64url_decode(s, n, buf);
    buf[k] = 0;
    json_object *o = json_tokener_parse((char *)buf);
    assert_non_null(o);
    return o;
}

static const char *jstr(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : NULL;
}

static void parse_service_account(void **state)
{
    (void)state;
    struct sy_gauth_sa sa;
    char err[160];
    char *j = creds("service_account", "sa@p.iam.gserviceaccount.com", pem_pkcs8, "kid-123", NULL);
    assert_int_equal(sy_gauth_parse_sa(j, strlen(j), &sa, err, sizeof err), 0);
    assert_int_equal(sa.kind, SY_GAUTH_SERVICE_ACCOUNT);
    assert_string_equal(sa.client_email, "sa@p.iam.gserviceaccount.com");
    assert_string_equal(sa.private_key, pem_pkcs8);
    assert_string_equal(sa.private_key_id, "kid-123");
    assert_string_equal(sa.token_uri, SY_GAUTH_TOKEN_URI); /* the default */
    assert_string_equal(sa.project_id, "proj-1");
    sy_gauth_sa_free(&sa);
    sy_gauth_sa_free(&sa); /* freeing twice is harmless */
    free(j);
    /* a PKCS#1 key, no type, no kid, an explicit token_uri */
    j = creds(NULL, "a@b", pem_pkcs1, NULL, "https://oauth2.example/token");
    assert_int_equal(sy_gauth_parse_sa(j, strlen(j), &sa, err, sizeof err), 0);
    assert_null(sa.private_key_id);
    assert_string_equal(sa.token_uri, "https://oauth2.example/token");
    sy_gauth_sa_free(&sa);
    free(j);
}

static void parse_errors(void **state)
{
    (void)state;
    struct sy_gauth_sa sa;
    char err[160];
    static const struct {
        const char *json, *why;
    } bad[] = {
        {"not json", "not a JSON object"},
        {"[1,2]", "not a JSON object"},
        {"{\"type\":\"external_account\",\"audience\":\"x\"}", "unsupported credentials type"},
        {"{\"type\":\"service_account\",\"private_key\":\"x\"}", "client_email"},
        {"{\"type\":\"service_account\",\"client_email\":\"a@b\"}", "private_key"},
        {"{\"type\":\"service_account\",\"client_email\":\"a@b\",\"private_key\":\"-----BEGIN PRIVATE "
         "KEY-----\\nAAAA\\n-----END PRIVATE KEY-----\\n\"}",
         "not an unencrypted RSA key"},
        {"{\"type\":\"authorized_user\",\"client_id\":\"c\"}", "refresh_token"},
        {"{\"type\":\"service_account\",\"client_email\":\"\",\"private_key\":\"k\"}", "client_email"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&sa, 0x55, sizeof sa);
        assert_int_equal(sy_gauth_parse_sa(bad[i].json, strlen(bad[i].json), &sa, err, sizeof err), -1);
        if (!strstr(err, bad[i].why))
            fail_msg("case %zu: '%s' lacks '%s'", i, err, bad[i].why);
        assert_null(sa.client_email); /* nothing to free after a failure */
        sy_gauth_sa_free(&sa);
    }
    /* an EC key is not RSA; an encrypted RSA key is refused without prompting */
    EVP_PKEY *ec = EVP_EC_gen("P-256");
    char *ecpem = pem_of(ec, 0);
    char *j = creds("service_account", "a@b", ecpem, NULL, NULL);
    assert_int_equal(sy_gauth_parse_sa(j, strlen(j), &sa, err, sizeof err), -1);
    free(j);
    free(ecpem);
    EVP_PKEY_free(ec);
    BIO *b = BIO_new(BIO_s_mem());
    assert_int_equal(PEM_write_bio_PKCS8PrivateKey(b, key, EVP_aes_128_cbc(), "pw", 2, NULL, NULL), 1);
    char *p;
    long n = BIO_get_mem_data(b, &p);
    char *enc = strndup(p, (size_t)n);
    BIO_free(b);
    j = creds("service_account", "a@b", enc, NULL, NULL);
    assert_int_equal(sy_gauth_parse_sa(j, strlen(j), &sa, err, sizeof err), -1);
    free(j);
    free(enc);
}

static void jwt_verifies(void **state)
{
    (void)state;
    struct sy_gauth_sa sa;
    char err[160];
    char *j = creds("service_account", "sa@p.iam.gserviceaccount.com", pem_pkcs8, "kid-123", NULL);
    assert_int_equal(sy_gauth_parse_sa(j, strlen(j), &sa, err, sizeof err), 0);
    free(j);
    struct sy_buf out;
    sy_buf_init(&out, 1 << 16);
    SY_BUF_LIT(&out, "prefix:"); /* appended, not overwritten */
    assert_int_equal(sy_gauth_jwt(&sa, 1700000000, NULL, &out), 0);
    assert_memory_equal(out.p, "prefix:", 7);
    const char *jwt = out.p + 7;
    const char *d1 = strchr(jwt, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
    assert_non_null(d2);
    assert_null(strchr(d2 + 1, '.'));
    assert_null(strpbrk(jwt, "=+/ \n")); /* base64url without padding */
    json_object *h = part_json(jwt, (size_t)(d1 - jwt));
    assert_string_equal(jstr(h, "alg"), "RS256");
    assert_string_equal(jstr(h, "typ"), "JWT");
    assert_string_equal(jstr(h, "kid"), "kid-123");
    json_object_put(h);
    json_object *c = part_json(d1 + 1, (size_t)(d2 - d1 - 1));
    assert_string_equal(jstr(c, "iss"), "sa@p.iam.gserviceaccount.com");
    assert_string_equal(jstr(c, "scope"), SY_GAUTH_SCOPE);
    assert_string_equal(jstr(c, "aud"), SY_GAUTH_TOKEN_URI);
    json_object *v;
    assert_true(json_object_object_get_ex(c, "iat", &v));
    assert_int_equal(json_object_get_int64(v), 1700000000);
    assert_true(json_object_object_get_ex(c, "exp", &v));
    assert_int_equal(json_object_get_int64(v), 1700000000 + 3600);
    json_object_put(c);
    /* the signature, with the public key */
    unsigned char sig[1024];
    size_t sl = b64url_decode(d2 + 1, strlen(d2 + 1), sig);
    assert_int_equal(sl, 256);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    assert_int_equal(EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, key), 1);
    assert_int_equal(EVP_DigestVerify(ctx, sig, sl, (const unsigned char *)jwt, (size_t)(d2 - jwt)), 1);
    /* one byte changed in the claims: the signature no longer holds */
    char *tampered = strndup(jwt, (size_t)(d2 - jwt));
    tampered[d1 - jwt + 3] ^= 1;
    EVP_MD_CTX_reset(ctx);
    assert_int_equal(EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, key), 1);
    assert_int_not_equal(EVP_DigestVerify(ctx, sig, sl, (const unsigned char *)tampered, strlen(tampered)), 1);
    free(tampered);
    EVP_MD_CTX_free(ctx);
    /* another scope; no kid without private_key_id */
    free(sa.private_key_id);
    sa.private_key_id = NULL;
    sy_buf_reset(&out);
    assert_int_equal(sy_gauth_jwt(&sa, 5, "https://www.googleapis.com/auth/generative-language", &out), 0);
    d1 = strchr(out.p, '.');
    h = part_json(out.p, (size_t)(d1 - out.p));
    assert_null(jstr(h, "kid"));
    json_object_put(h);
    d2 = strchr(d1 + 1, '.');
    c = part_json(d1 + 1, (size_t)(d2 - d1 - 1));
    assert_string_equal(jstr(c, "scope"), "https://www.googleapis.com/auth/generative-language");
    json_object_put(c);
    /* a full buffer: SY_ENOSPC and nothing appended */
    struct sy_buf small;
    sy_buf_init(&small, 100);
    assert_int_equal(sy_gauth_jwt(&sa, 5, NULL, &small), SY_ENOSPC);
    assert_int_equal(small.len, 0);
    sy_buf_free(&small);
    sy_buf_free(&out);
    sy_gauth_sa_free(&sa);
    /* not a service account */
    struct sy_gauth_sa none = {0};
    sy_buf_init(&out, 1024);
    assert_int_equal(sy_gauth_jwt(&none, 0, NULL, &out), SY_EINVAL);
    sy_buf_free(&out);
}

static void request_bodies(void **state)
{
    (void)state;
    struct sy_buf b;
    sy_buf_init(&b, 4096);
    assert_int_equal(sy_gauth_token_body("aaa.bbb.c-_", &b), 0);
    assert_string_equal(b.p, "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=aaa.bbb.c-_");
    sy_buf_reset(&b);
    const char *au = "{\"type\":\"authorized_user\",\"client_id\":\"123.apps.googleusercontent.com\","
                     "\"client_secret\":\"s e/c+r=t\",\"refresh_token\":\"1//0g-x\",\"quota_project_id\":\"qp\"}";
    struct sy_gauth_sa sa;
    char err[100];
    assert_int_equal(sy_gauth_parse_sa(au, strlen(au), &sa, err, sizeof err), 0);
    assert_int_equal(sa.kind, SY_GAUTH_AUTHORIZED_USER);
    assert_string_equal(sa.project_id, "qp");
    assert_int_equal(sy_gauth_request_body(&sa, 0, NULL, &b), 0);
    assert_string_equal(b.p, "grant_type=refresh_token&client_id=123.apps.googleusercontent.com"
                             "&client_secret=s%20e%2Fc%2Br%3Dt&refresh_token=1%2F%2F0g-x");
    assert_int_equal(sy_gauth_jwt(&sa, 0, NULL, &b), SY_EINVAL); /* no JWT for a user */
    sy_gauth_sa_free(&sa);
    struct sy_buf tiny;
    sy_buf_init(&tiny, 10);
    assert_int_equal(sy_gauth_token_body("x", &tiny), SY_ENOSPC);
    assert_int_equal(tiny.len, 0);
    sy_buf_free(&tiny);
    sy_buf_free(&b);
}

static void token_answers(void **state)
{
    (void)state;
    char tok[64];
    int64_t ttl = -1;
    const char *ok = "{\n  \"access_token\": \"ya29.c.abc-DEF_123\",\n  \"expires_in\": 3599,\n  \"token_type\": "
                     "\"Bearer\"\n}";
    assert_int_equal(sy_gauth_parse_token(ok, strlen(ok), tok, sizeof tok, &ttl), 0);
    assert_string_equal(tok, "ya29.c.abc-DEF_123");
    assert_int_equal(ttl, 3599);
    const char *nottl = "{\"access_token\":\"t\",\"token_type\":\"Bearer\"}";
    assert_int_equal(sy_gauth_parse_token(nottl, strlen(nottl), tok, sizeof tok, &ttl), 0);
    assert_int_equal(ttl, 3600);
    const char *fl = "{\"access_token\":\"t\",\"expires_in\":1799.5}";
    assert_int_equal(sy_gauth_parse_token(fl, strlen(fl), tok, sizeof tok, &ttl), 0);
    assert_int_equal(ttl, 1799);
    const char *oerr = "{\"error\":\"invalid_grant\",\"error_description\":\"Invalid JWT Signature.\"}";
    assert_int_equal(sy_gauth_parse_token(oerr, strlen(oerr), tok, sizeof tok, &ttl), SY_EAUTH);
    assert_string_equal(tok, "");
    char msg[128];
    assert_int_equal(sy_gauth_token_error(oerr, strlen(oerr), msg, sizeof msg), 1);
    assert_string_equal(msg, "invalid_grant: Invalid JWT Signature.");
    const char *gerr = "{\"error\":{\"code\":400,\"message\":\"bad\",\"status\":\"INVALID_ARGUMENT\"}}";
    assert_int_equal(sy_gauth_token_error(gerr, strlen(gerr), msg, sizeof msg), 1);
    assert_string_equal(msg, "INVALID_ARGUMENT: bad");
    assert_int_equal(sy_gauth_token_error(ok, strlen(ok), msg, sizeof msg), 0);
    assert_string_equal(msg, "");
    static const char *const junk[] = {"",
                                       "[]",
                                       "{\"access_token\":1}",
                                       "{\"access_token\":\"a b\"}",
                                       "{\"access_token\":\"a\\u0000b\"}",
                                       "{\"access_token\":\"\"}",
                                       "nope"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        assert_int_equal(sy_gauth_parse_token(junk[i], strlen(junk[i]), tok, sizeof tok, &ttl), SY_EJSON);
    char small[4];
    assert_int_equal(sy_gauth_parse_token(ok, strlen(ok), small, sizeof small, &ttl), SY_ENOSPC);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_service_account), cmocka_unit_test(parse_errors),  cmocka_unit_test(jwt_verifies),
        cmocka_unit_test(request_bodies),        cmocka_unit_test(token_answers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
