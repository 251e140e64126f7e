/* test_secretbox.c - XSalsa20-Poly1305 (src/core/secret.c) against NaCl's
 * published vectors (the crypto_box / crypto_secretbox test: "firstkey",
 * its nonce, the 131-byte message and its box; HSalsa20's "secondkey"), a
 * tampered box, and LiteLLM's stored form: a DB row whose credentials LiteLLM
 * encrypted under LITELLM_SALT_KEY (or the master key) is read in clear by
 * sy_mcp_set_build, a plain value stays as it is, another salt leaves the
 * ciphertext untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp.h"
#include "core/secret.h"

static const unsigned char firstkey[32] = {0x1b, 0x27, 0x55, 0x64, 0x73, 0xe9, 0x85, 0xd4, 0x62, 0xcd, 0x51,
                                           0x19, 0x7a, 0x9a, 0x46, 0xc7, 0x60, 0x09, 0x54, 0x9e, 0xac, 0x64,
                                           0x74, 0xf2, 0x06, 0xc4, 0xee, 0x08, 0x44, 0xf6, 0x83, 0x89};
static const unsigned char nonce[24] = {0x69, 0x69, 0x6e, 0xe9, 0x55, 0xb6, 0x2b, 0x73, 0xcd, 0x62, 0xbd, 0xa8,
                                        0x75, 0xfc, 0x73, 0xd6, 0x82, 0x19, 0xe0, 0x03, 0x6b, 0x7a, 0x0b, 0x37};
static const unsigned char msg[131] = {
    0xbe, 0x07, 0x5f, 0xc5, 0x3c, 0x81, 0xf2, 0xd5, 0xcf, 0x14, 0x13, 0x16, 0xeb, 0xeb, 0x0c, 0x7b, 0x52, 0x28, 0xc5,
    0x2a, 0x4c, 0x62, 0xcb, 0xd4, 0x4b, 0x66, 0x84, 0x9b, 0x64, 0x24, 0x4f, 0xfc, 0xe5, 0xec, 0xba, 0xaf, 0x33, 0xbd,
    0x75, 0x1a, 0x1a, 0xc7, 0x28, 0xd4, 0x5e, 0x6c, 0x61, 0x29, 0x6c, 0xdc, 0x3c, 0x01, 0x23, 0x35, 0x61, 0xf4, 0x1d,
    0xb6, 0x6c, 0xce, 0x31, 0x4a, 0xdb, 0x31, 0x0e, 0x3b, 0xe8, 0x25, 0x0c, 0x46, 0xf0, 0x6d, 0xce, 0xea, 0x3a, 0x7f,
    0xa1, 0x34, 0x80, 0x57, 0xe2, 0xf6, 0x55, 0x6a, 0xd6, 0xb1, 0x31, 0x8a, 0x02, 0x4a, 0x83, 0x8f, 0x21, 0xaf, 0x1f,
    0xde, 0x04, 0x89, 0x77, 0xeb, 0x48, 0xf5, 0x9f, 0xfd, 0x49, 0x24, 0xca, 0x1c, 0x60, 0x90, 0x2e, 0x52, 0xf0, 0xa0,
    0x89, 0xbc, 0x76, 0x89, 0x70, 0x40, 0xe0, 0x82, 0xf9, 0x37, 0x76, 0x38, 0x48, 0x64, 0x5e, 0x07, 0x05};
static const unsigned char box[147] = {
    0xf3, 0xff, 0xc7, 0x70, 0x3f, 0x94, 0x00, 0xe5, 0x2a, 0x7d, 0xfb, 0x4b, 0x3d, 0x33, 0x05, 0xd9, 0x8e, 0x99, 0x3b,
    0x9f, 0x48, 0x68, 0x12, 0x73, 0xc2, 0x96, 0x50, 0xba, 0x32, 0xfc, 0x76, 0xce, 0x48, 0x33, 0x2e, 0xa7, 0x16, 0x4d,
    0x96, 0xa4, 0x47, 0x6f, 0xb8, 0xc5, 0x31, 0xa1, 0x18, 0x6a, 0xc0, 0xdf, 0xc1, 0x7c, 0x98, 0xdc, 0xe8, 0x7b, 0x4d,
    0xa7, 0xf0, 0x11, 0xec, 0x48, 0xc9, 0x72, 0x71, 0xd2, 0xc2, 0x0f, 0x9b, 0x92, 0x8f, 0xe2, 0x27, 0x0d, 0x6f, 0xb8,
    0x63, 0xd5, 0x17, 0x38, 0xb4, 0x8e, 0xee, 0xe3, 0x14, 0xa7, 0xcc, 0x8a, 0xb9, 0x32, 0x16, 0x45, 0x48, 0xe5, 0x26,
    0xae, 0x90, 0x22, 0x43, 0x68, 0x51, 0x7a, 0xcf, 0xea, 0xbd, 0x6b, 0xb3, 0x73, 0x2b, 0xc0, 0xe9, 0xda, 0x99, 0x83,
    0x2b, 0x61, 0xca, 0x01, 0xb6, 0xde, 0x56, 0x24, 0x4a, 0x9e, 0x88, 0xd5, 0xf9, 0xb3, 0x79, 0x73, 0xf6, 0x22, 0xa4,
    0x3d, 0x14, 0xa6, 0x59, 0x9b, 0x1f, 0x65, 0x4c, 0xb4, 0x5a, 0x74, 0xe3, 0x55, 0xa5};

static void test_vectors(void **state)
{
    (void)state;
    unsigned char out[sizeof box];
    assert_int_equal(sy__secretbox_open(out, box, sizeof box, nonce, firstkey), 0);
    assert_memory_equal(out, msg, sizeof msg);
    unsigned char sealed[sizeof box];
    assert_int_equal(sy__secretbox_seal(sealed, msg, sizeof msg, nonce, firstkey), 0);
    assert_memory_equal(sealed, box, sizeof box);
    /* any changed byte (tag or ciphertext), a wrong key or nonce: refused, output zeroed */
    unsigned char bad[sizeof box];
    for (size_t i = 0; i < sizeof box; i += 7) {
        memcpy(bad, box, sizeof box);
        bad[i] ^= 0x01;
        assert_int_equal(sy__secretbox_open(out, bad, sizeof bad, nonce, firstkey), -1);
        for (size_t j = 0; j < sizeof msg; j++)
            assert_int_equal(out[j], 0);
    }
    unsigned char k2[32];
    memcpy(k2, firstkey, 32);
    k2[31] ^= 0x80;
    assert_int_equal(sy__secretbox_open(out, box, sizeof box, nonce, k2), -1);
    unsigned char n2[24];
    memcpy(n2, nonce, 24);
    n2[23] ^= 1;
    assert_int_equal(sy__secretbox_open(out, box, sizeof box, n2, firstkey), -1);
    assert_int_equal(sy__secretbox_open(out, box, 15, nonce, firstkey), -1);
    /* an empty message round-trips (the tag alone) */
    unsigned char t[16], o[1];
    assert_int_equal(sy__secretbox_seal(t, NULL, 0, nonce, firstkey), 0);
    assert_int_equal(sy__secretbox_open(o, t, 16, nonce, firstkey), 0);
}

/* LiteLLM's encrypt_value_helper: base64(nonce || box) under sha256(salt). */
static void litellm_encrypt(const char *plain, const char *salt, int urlsafe, char *out)
{
    unsigned char key[32], raw[24 + 16 + 256];
    unsigned int kl;
    EVP_Digest(salt, strlen(salt), key, &kl, EVP_sha256(), NULL);
    memcpy(raw, nonce, 24);
    size_t n = strlen(plain);
    assert_int_equal(sy__secretbox_seal(raw + 24, (const unsigned char *)plain, n, nonce, key), 0);
    int l = EVP_EncodeBlock((unsigned char *)out, raw, (int)(24 + 16 + n));
    if (urlsafe)
        for (int i = 0; i < l; i++)
            out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
}

static void test_litellm_rows(void **state)
{
    (void)state;
    char enc_key[512], enc_sec[512], other[512], row[4096], plainbuf[64];
    litellm_encrypt("sk-upstream-123", "salty", 0, enc_key);
    litellm_encrypt("s3cr3t/with+chars", "salty", 1, enc_sec);
    litellm_encrypt("never", "another-salt", 0, other);
    snprintf(row, sizeof row,
             "[{\"server_id\":\"a\",\"server_name\":\"a\",\"url\":\"https://a/mcp\",\"auth_type\":\"api_key\","
             "\"credentials\":{\"auth_value\":\"%s\"}},"
             "{\"server_id\":\"b\",\"server_name\":\"b\",\"url\":\"https://b/mcp\",\"auth_type\":\"oauth2\","
             "\"token_url\":\"https://idp/t\",\"credentials\":{\"client_id\":\"plain-id\",\"client_secret\":\"%s\"}},"
             "{\"server_id\":\"c\",\"server_name\":\"c\",\"url\":\"https://c/mcp\",\"auth_type\":\"bearer_token\","
             "\"credentials\":{\"auth_value\":\"%s\"}}]",
             enc_key, enc_sec, other);
    char err[256];
    setenv("LITELLM_SALT_KEY", "salty", 1);
    struct sy_mcp_set *s = sy_mcp_set_build(NULL, NULL, row, err, sizeof err, NULL);
    assert_non_null(s);
    assert_int_equal(s->n, 3);
    assert_string_equal(s->s[0].auth_value, "sk-upstream-123");
    assert_string_equal(s->s[1].client_id, "plain-id"); /* a plain value stays */
    assert_string_equal(s->s[1].client_secret, "s3cr3t/with+chars");
    assert_string_equal(s->s[2].auth_value, other); /* another salt: kept as stored */
    sy_mcp_set_unref(s);
    /* no salt key: the master key */
    unsetenv("LITELLM_SALT_KEY");
    s = sy_mcp_set_build(NULL, NULL, row, err, sizeof err, NULL);
    assert_string_equal(s->s[0].auth_value, enc_key);
    sy_mcp_set_unref(s);
    sy_mcp_set_master_key("salty");
    s = sy_mcp_set_build(NULL, NULL, row, err, sizeof err, NULL);
    assert_string_equal(s->s[0].auth_value, "sk-upstream-123");
    sy_mcp_set_unref(s);
    sy_mcp_set_master_key(NULL);
    /* garbage that base64-decodes is never mistaken for a credential */
    char buf[128];
    assert_int_equal(sy_secret_decrypt("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0",
                                       "salty", buf, sizeof buf),
                     -1);
    assert_int_equal(sy_secret_decrypt("not base64 !", "salty", buf, sizeof buf), -1);
    assert_int_equal(sy_secret_decrypt("", "salty", buf, sizeof buf), -1);
    assert_int_equal(sy_secret_decrypt(enc_key, "", buf, sizeof buf), -1);
    assert_int_equal(sy_secret_decrypt(enc_key, "salty", plainbuf, 8), -1); /* does not fit */
    assert_int_equal(sy_secret_decrypt(enc_key, "salty", plainbuf, sizeof plainbuf), 15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_litellm_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
