/* test_secret.c - core/secret.c against values LiteLLM's own code wrote.
 *
 * The vectors were made with tests/integration/fixtures/litellm_encrypt.py
 * (LiteLLM's encrypt_decrypt_utils.py logic on PyNaCl and cryptography) under
 * the salt key "sk-1234-salt" with fixed nonces, e.g.
 *   litellm_encrypt.py --salt sk-1234-salt --format v3 --nonce a0a1...ab sk-upstream-123
 * They are read in every spelling LiteLLM's reader accepts (url-safe and
 * standard alphabet, padded or not) and refused under another key, truncated,
 * tampered, as a plain value, or when they do not fit. Our own writes
 * round-trip in both formats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/secret.h"

#define SALT "sk-1234-salt"

static const struct {
    const char *enc, *plain;
} vectors[] = {
    /* nacl secretbox, nonce 00..17 */
    {"AAECAwQFBgcICQoLDA0ODxAREhMUFRYX0b2iFJrUB_YjxuP6czjggp5qI9dFPhiXijNEj2-8sQ==", "sk-upstream-123"},
    {"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXL7lzRm04GykGBNf-yhfCxY5tzQsVr_B2z6K2ON4=",
     "cl\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80"},
    {"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGuFRdm8Ebfhn-SZ-xvgz9w==", ""},
    /* nacl, nonce 20..37: a JSON object, as LiteLLM's credential_values hold */
    {"ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3V2d2S7v87k7v3nX1rgqqzRF9kKtqhzcAjO7i0oo9fMhHX_GJeCd3wIFxpp7czmSNUY8kc-"
     "SOEp0RN8dXTAU"
     "=",
     "{\"api_key\":\"sk-abc\",\"api_base\":\"https://x/v1\"}"},
    /* v3:gcm (HKDF-SHA256), nonce a0..ab */
    {"v3:gcm:oKGio6Slpqeoqaqrm35kfkqeA7zquUWU5ufCNuRXjZuJYR2m49syKCNi4A==", "sk-upstream-123"},
    {"v3:gcm:oKGio6Slpqeoqaqri3mKohoP612vKLcjV5fpLY7FRf63qnpiN-rPS8M=", "cl\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80"},
    {"v3:gcm:oKGio6SlpqeoqaqrrUqI0CZCJpoQrSMYA5X3og==", ""},
    /* v2:gcm (sha256 key), nonce b0..bb */
    {"v2:gcm:sLGys7S1tre4ubq7Xp5z4cKsbI2hEnOzWFcFj9VI4UIVdyxYXqyQcregfQ==", "sk-upstream-123"},
};
#define NV (sizeof vectors / sizeof vectors[0])

static long dec(const char *v, const char *salt, char *out, size_t cap)
{
    memset(out, 'X', cap);
    return sy_secret_decrypt(v, salt, out, cap);
}

static void test_litellm_vectors(void **state)
{
    (void)state;
    char out[512], v[512];
    for (size_t i = 0; i < NV; i++) {
        const char *p = vectors[i].plain;
        assert_int_equal(dec(vectors[i].enc, SALT, out, sizeof out), (long)strlen(p));
        assert_string_equal(out, p);
        /* the standard alphabet (LiteLLM's older writes) */
        snprintf(v, sizeof v, "%s", vectors[i].enc);
        for (char *c = v + (strncmp(v, "v", 1) == 0 ? 7 : 0); *c; c++)
            *c = *c == '-' ? '+' : *c == '_' ? '/' : *c;
        assert_int_equal(dec(v, SALT, out, sizeof out), (long)strlen(p));
        assert_string_equal(out, p);
        /* without its padding */
        size_t l = strlen(v);
        while (l && v[l - 1] == '=')
            v[--l] = 0;
        assert_int_equal(dec(v, SALT, out, sizeof out), (long)strlen(p));
        assert_string_equal(out, p);
        /* another key */
        assert_int_equal(dec(vectors[i].enc, "sk-1234-salT", out, sizeof out), -1);
        assert_int_equal(dec(vectors[i].enc, "", out, sizeof out), -1);
        assert_int_equal(dec(vectors[i].enc, NULL, out, sizeof out), -1);
        /* truncated: by a byte's worth, and by a whole quantum */
        snprintf(v, sizeof v, "%s", vectors[i].enc);
        l = strlen(v);
        while (v[l - 1] == '=')
            l--;
        v[l - 2] = 0;
        assert_int_equal(dec(v, SALT, out, sizeof out), -1);
        v[l - 4] = 0;
        assert_int_equal(dec(v, SALT, out, sizeof out), -1);
        /* any changed character */
        size_t start = strncmp(vectors[i].enc, "v", 1) == 0 ? 7 : 0;
        for (size_t k = start; k + 1 < l; k += 3) { /* the last one may hold only padding bits */
            snprintf(v, sizeof v, "%s", vectors[i].enc);
            v[k] = v[k] == 'A' ? 'B' : 'A';
            assert_int_equal(dec(v, SALT, out, sizeof out), -1);
        }
        /* too small an output */
        if (*p)
            assert_int_equal(dec(vectors[i].enc, SALT, out, strlen(p)), -1);
        assert_int_equal(dec(vectors[i].enc, SALT, out, strlen(p) + 1), (long)strlen(p));
    }
}

static void test_not_encrypted(void **state)
{
    (void)state;
    char out[256];
    static const char *plain[] = {
        "sk-plain-api-key",
        "",
        "not base64 !",
        "https://api.openai.com/v1",
        "os.environ/OPENAI_API_KEY",
        "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0", /* base64, no box */
        "v3:gcm:",
        "v3:gcm:AAAA",
        "v2:gcm:oKGio6Slpqeoqaqrm35kfkqeA7zquUWU5ufCNuRXjZuJYR2m49syKCNi4A==", /* v3's bytes, v2's key */
        "v3:gcm:sLGys7S1tre4ubq7Xp5z4cKsbI2hEnOzWFcFj9VI4UIVdyxYXqyQcregfQ==", /* v2's bytes, v3's key */
        "v4:gcm:oKGio6Slpqeoqaqrm35kfkqeA7zquUWU5ufCNuRXjZuJYR2m49syKCNi4A==",
        "AAECAwQFBgcICQoLDA0ODxAREhMUFRYX0b2iFJrUB_YjxuP6czjggp5qI9dFPhiXijNEj2-8sQ===", /* a third '=' */
        "AAECAwQFBgcICQoLDA0ODxAREhMUFRYX0b2iFJrUB_YjxuP6czjggp5qI9dFPhiXijNEj2-8s=Q=",  /* '=' inside */
        " AAECAwQFBgcICQoLDA0ODxAREhMUFRYX0b2iFJrUB_YjxuP6czjggp5qI9dFPhiXijNEj2-8sQ==",
        "AAECAwQFBgcICQoLDA0ODxAREhMUFRYX0b2iFJrUB_YjxuP6czjggp5qI9dFPhiXijNEj2-8sQ==\n",
    };
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        assert_int_equal(dec(plain[i], SALT, out, sizeof out), -1);
    assert_int_equal(sy_secret_decrypt(NULL, SALT, out, sizeof out), -1);
    assert_int_equal(sy_secret_decrypt("x", SALT, out, 0), -1);
}

static void test_round_trip(void **state)
{
    (void)state;
    char big[3000];
    for (size_t i = 0; i < sizeof big - 1; i++)
        big[i] = (char)('a' + i % 26);
    big[sizeof big - 1] = 0;
    const char *values[] = {"sk-upstream-123", "", "cl\xc3\xa9 \xe2\x9c\x93", "{\"a\":\"b\\\"c\"}", big};
    for (int gcm = 0; gcm < 2; gcm++)
        for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
            size_t n = strlen(values[i]);
            size_t cap = (gcm ? sy_secret_encrypted_gcm_len(n) : sy_secret_encrypted_len(n)) + 1;
            char *a = malloc(cap), *b = malloc(cap), *out = malloc(n + 1);
            long la =
                gcm ? sy_secret_encrypt_gcm(values[i], n, SALT, a, cap) : sy_secret_encrypt(values[i], n, SALT, a, cap);
            long lb =
                gcm ? sy_secret_encrypt_gcm(values[i], n, SALT, b, cap) : sy_secret_encrypt(values[i], n, SALT, b, cap);
            assert_int_equal(la, (long)cap - 1);
            assert_int_equal(lb, la);
            assert_int_equal(strlen(a), (size_t)la);
            assert_string_not_equal(a, b); /* a fresh nonce each time */
            assert_int_equal(strncmp(a, "v3:gcm:", 7) == 0, gcm);
            assert_null(strpbrk(a + (gcm ? 7 : 0), "+/:")); /* url-safe, as LiteLLM writes */
            assert_int_equal(sy_secret_decrypt(a, SALT, out, n + 1), (long)n);
            assert_string_equal(out, values[i]);
            assert_int_equal(sy_secret_decrypt(a, "other", out, n + 1), -1);
            /* a buffer one byte short */
            long r = gcm ? sy_secret_encrypt_gcm(values[i], n, SALT, a, cap - 1)
                         : sy_secret_encrypt(values[i], n, SALT, a, cap - 1);
            assert_int_equal(r, -1);
            free(a);
            free(b);
            free(out);
        }
    char out[256];
    assert_int_equal(sy_secret_encrypt("x", 1, NULL, out, sizeof out), -1);
    assert_int_equal(sy_secret_encrypt("x", 1, "", out, sizeof out), -1);
    assert_int_equal(sy_secret_encrypt_gcm("x", 1, "", out, sizeof out), -1);
    /* a plaintext that is not text (a NUL, invalid UTF-8) never comes back */
    char enc[256];
    assert_true(sy_secret_encrypt("a\0b", 3, SALT, enc, sizeof enc) > 0);
    assert_int_equal(sy_secret_decrypt(enc, SALT, out, sizeof out), -1);
    assert_true(sy_secret_encrypt_gcm("\xff\xfe", 2, SALT, enc, sizeof enc) > 0);
    assert_int_equal(sy_secret_decrypt(enc, SALT, out, sizeof out), -1);
}

static void test_salt(void **state)
{
    (void)state;
    unsetenv("LITELLM_SALT_KEY");
    assert_null(sy_secret_salt(NULL));
    assert_null(sy_secret_salt(""));
    assert_string_equal(sy_secret_salt("sk-master"), "sk-master");
    setenv("LITELLM_SALT_KEY", "", 1);
    assert_string_equal(sy_secret_salt("sk-master"), "sk-master");
    setenv("LITELLM_SALT_KEY", "salty", 1);
    assert_string_equal(sy_secret_salt("sk-master"), "salty");
    assert_string_equal(sy_secret_salt(NULL), "salty");
    unsetenv("LITELLM_SALT_KEY");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_litellm_vectors),
        cmocka_unit_test(test_not_encrypted),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_salt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
