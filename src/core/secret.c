/* secret.c - LiteLLM's encrypted database values; see secret.h.
 *
 * LiteLLM (litellm/proxy/common_utils/encrypt_decrypt_utils.py) knows three
 * stored forms, told apart by a prefix that base64 never contains:
 *   - no prefix: NaCl's SecretBox (XSalsa20-Poly1305) under sha256(salt key),
 *     base64 (url-safe when written, either alphabet read) of
 *     nonce(24) || tag(16) || ciphertext. libsodium's crypto_secretbox_easy
 *     lays out tag then ciphertext exactly as PyNaCl does.
 *   - "v3:gcm:" AES-256-GCM under HKDF-SHA256(ikm = salt key, no salt,
 *     info "litellm-at-rest-v3", 32 bytes), url-safe base64 of
 *     nonce(12) || ciphertext || tag(16). LiteLLM's current default for new
 *     writes (general_settings.encryption_algorithm, default "aes-256-gcm").
 *   - "v2:gcm:" the same layout under sha256(salt key) (read only, as LiteLLM).
 * sy_secret_encrypt writes the secretbox form, which every LiteLLM version
 * reads (with PyNaCl installed, as its images have it); sy_secret_encrypt_gcm
 * writes v3:gcm for a reader that wants LiteLLM's newer form.
 *
 * Base64 is read leniently: either alphabet, padding optional. The tag is
 * what authenticates, so accepting more spellings than Python lets nothing
 * forged through. A plaintext with a NUL byte or invalid UTF-8 is refused
 * (LiteLLM decodes it as UTF-8 and the callers hold C strings).
 */
#include "core/secret.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"

_Static_assert(SY_SECRETBOX_NONCE == crypto_secretbox_NONCEBYTES, "NaCl's nonce");
_Static_assert(SY_SECRETBOX_TAG == crypto_secretbox_MACBYTES, "NaCl's tag");

#define GCM_NONCE 12
#define GCM_TAG   16
#define V3_PREFIX "v3:gcm:"
#define V2_PREFIX "v2:gcm:"
#define HKDF_INFO "litellm-at-rest-v3"

static int sodium_ready(void)
{
    return sodium_init() >= 0; /* idempotent and thread-safe */
}

/* ---- NaCl secretbox ---- */

int sy__secretbox_open(unsigned char *out, const unsigned char *box, size_t n,
                       const unsigned char nonce[SY_SECRETBOX_NONCE], const unsigned char key[32])
{
    if (n < SY_SECRETBOX_TAG || !sodium_ready())
        return -1;
    if (crypto_secretbox_open_easy(out, box, n, nonce, key) != 0) {
        memset(out, 0, n - SY_SECRETBOX_TAG);
        return -1;
    }
    return 0;
}

int sy__secretbox_seal(unsigned char *box, const unsigned char *msg, size_t n,
                       const unsigned char nonce[SY_SECRETBOX_NONCE], const unsigned char key[32])
{
    if (!sodium_ready())
        return -1;
    static const unsigned char none[1];
    return crypto_secretbox_easy(box, msg ? msg : none, n, nonce, key) == 0 ? 0 : -1;
}

/* ---- base64 ---- */

static int b64v(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

/* s (n chars), either alphabet, padding optional, into out (cap bytes).
 * Bytes, or -1. */
static long b64dec(unsigned char *out, size_t cap, const char *s, size_t n)
{
    size_t o = 0;
    int pad = 0;
    while (n && s[n - 1] == '=' && pad < 2) {
        n--;
        pad++;
    }
    if (n % 4 == 1 || (pad && (n + (size_t)pad) % 4))
        return -1;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64v((unsigned char)s[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6 | (uint32_t)v) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o >= cap)
                return -1;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    return (long)o;
}

static size_t b64len(size_t n)
{
    return (n + 2) / 3 * 4;
}

/* Url-safe base64 with padding (Python's urlsafe_b64encode). */
static void b64enc_url(char *out, const unsigned char *p, size_t n)
{
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        out[o++] = A[v >> 18];
        out[o++] = A[v >> 12 & 63];
        out[o++] = A[v >> 6 & 63];
        out[o++] = A[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        out[o++] = A[v >> 18];
        out[o++] = A[v >> 12 & 63];
        out[o++] = '=';
        out[o++] = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        out[o++] = A[v >> 18];
        out[o++] = A[v >> 12 & 63];
        out[o++] = A[v >> 6 & 63];
        out[o++] = '=';
    }
    out[o] = 0;
}

/* ---- keys ---- */

static int key_sha256(const char *salt, unsigned char key[32])
{
    unsigned int kl = 0;
    return EVP_Digest(salt, strlen(salt), key, &kl, EVP_sha256(), NULL) && kl == 32 ? 0 : -1;
}

/* HKDF-SHA256 as cryptography's HKDF(salt=None, info=HKDF_INFO, length=32):
 * no salt is HMAC under a zero-length key, the same as RFC 5869's zeros. */
static int key_hkdf(const char *salt, unsigned char key[32])
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
    size_t kl = 32;
    int ok = c && EVP_PKEY_derive_init(c) > 0 && EVP_PKEY_CTX_set_hkdf_md(c, EVP_sha256()) > 0 &&
             EVP_PKEY_CTX_set1_hkdf_key(c, (const unsigned char *)salt, (int)strlen(salt)) > 0 &&
             EVP_PKEY_CTX_add1_hkdf_info(c, (const unsigned char *)HKDF_INFO, (int)sizeof HKDF_INFO - 1) > 0 &&
             EVP_PKEY_derive(c, key, &kl) > 0 && kl == 32;
    EVP_PKEY_CTX_free(c);
    return ok ? 0 : -1;
}

/* ---- AES-256-GCM ---- */

static int gcm(int enc, const unsigned char key[32], const unsigned char nonce[GCM_NONCE], const unsigned char *in,
               size_t n, unsigned char *out, unsigned char tag[GCM_TAG])
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int l = 0, ok = c && n <= INT32_MAX && EVP_CipherInit_ex(c, EVP_aes_256_gcm(), NULL, NULL, NULL, enc) &&
                    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, GCM_NONCE, NULL) &&
                    EVP_CipherInit_ex(c, NULL, NULL, key, nonce, enc);
    if (ok && n)
        ok = EVP_CipherUpdate(c, out, &l, in, (int)n) && (size_t)l == n;
    if (ok && !enc)
        ok = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, GCM_TAG, tag);
    if (ok)
        ok = EVP_CipherFinal_ex(c, out + n, &l) > 0;
    if (ok && enc)
        ok = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, GCM_TAG, tag);
    EVP_CIPHER_CTX_free(c);
    return ok ? 0 : -1;
}

/* ---- the stored forms ---- */

size_t sy_secret_encrypted_len(size_t n)
{
    return b64len(SY_SECRETBOX_NONCE + SY_SECRETBOX_TAG + n);
}

size_t sy_secret_encrypted_gcm_len(size_t n)
{
    return sizeof V3_PREFIX - 1 + b64len(GCM_NONCE + n + GCM_TAG);
}

long sy_secret_encrypt(const char *plain, size_t n, const char *salt, char *out, size_t cap)
{
    if (!salt || !*salt || !out || (n && !plain) || n > SIZE_MAX / 2 || cap < sy_secret_encrypted_len(n) + 1)
        return -1;
    size_t rl = SY_SECRETBOX_NONCE + SY_SECRETBOX_TAG + n;
    unsigned char *raw = malloc(rl), key[32];
    if (!raw)
        return -1;
    int rc = -1;
    if (sodium_ready() && key_sha256(salt, key) == 0) {
        randombytes_buf(raw, SY_SECRETBOX_NONCE);
        rc = sy__secretbox_seal(raw + SY_SECRETBOX_NONCE, (const unsigned char *)plain, n, raw, key);
    }
    OPENSSL_cleanse(key, sizeof key);
    if (rc == 0)
        b64enc_url(out, raw, rl);
    free(raw);
    return rc == 0 ? (long)strlen(out) : -1;
}

long sy_secret_encrypt_gcm(const char *plain, size_t n, const char *salt, char *out, size_t cap)
{
    if (!salt || !*salt || !out || (n && !plain) || n > SIZE_MAX / 2 || cap < sy_secret_encrypted_gcm_len(n) + 1)
        return -1;
    size_t rl = GCM_NONCE + n + GCM_TAG;
    unsigned char *raw = malloc(rl), key[32];
    if (!raw)
        return -1;
    int rc = -1;
    if (key_hkdf(salt, key) == 0 && RAND_bytes(raw, GCM_NONCE) == 1)
        rc = gcm(1, key, raw, (const unsigned char *)plain, n, raw + GCM_NONCE, raw + GCM_NONCE + n);
    OPENSSL_cleanse(key, sizeof key);
    if (rc == 0) {
        memcpy(out, V3_PREFIX, sizeof V3_PREFIX - 1);
        b64enc_url(out + sizeof V3_PREFIX - 1, raw, rl);
    }
    free(raw);
    return rc == 0 ? (long)strlen(out) : -1;
}

/* A plaintext in out[0..ml) is handed back only when it is text. */
static long finish(char *out, size_t ml)
{
    if (memchr(out, 0, ml) || sy_utf8_check(out, ml) != ml) {
        OPENSSL_cleanse(out, ml);
        return -1;
    }
    out[ml] = 0;
    return (long)ml;
}

static long open_gcm(const unsigned char *raw, size_t n, const unsigned char key[32], char *out, size_t cap)
{
    if (n < GCM_NONCE + GCM_TAG || n - GCM_NONCE - GCM_TAG >= cap)
        return -1;
    size_t ml = n - GCM_NONCE - GCM_TAG;
    unsigned char tag[GCM_TAG];
    memcpy(tag, raw + n - GCM_TAG, GCM_TAG);
    if (gcm(0, key, raw, raw + GCM_NONCE, ml, (unsigned char *)out, tag) != 0) {
        OPENSSL_cleanse(out, ml);
        return -1;
    }
    return finish(out, ml);
}

static long open_box(const unsigned char *raw, size_t n, const unsigned char key[32], char *out, size_t cap)
{
    if (n < SY_SECRETBOX_NONCE + SY_SECRETBOX_TAG || n - SY_SECRETBOX_NONCE - SY_SECRETBOX_TAG >= cap)
        return -1;
    size_t ml = n - SY_SECRETBOX_NONCE - SY_SECRETBOX_TAG;
    if (sy__secretbox_open((unsigned char *)out, raw + SY_SECRETBOX_NONCE, n - SY_SECRETBOX_NONCE, raw, key) != 0)
        return -1;
    return finish(out, ml);
}

long sy_secret_decrypt(const char *v, const char *salt, char *out, size_t cap)
{
    if (!v || !salt || !*salt || !out || !cap)
        return -1;
    int v3 = strncmp(v, V3_PREFIX, sizeof V3_PREFIX - 1) == 0, v2 = strncmp(v, V2_PREFIX, sizeof V2_PREFIX - 1) == 0;
    const char *b = v3 || v2 ? v + sizeof V3_PREFIX - 1 : v;
    size_t bl = strlen(b);
    if (!bl)
        return -1;
    size_t rcap = bl / 4 * 3 + 3;
    unsigned char *raw = malloc(rcap), key[32];
    if (!raw)
        return -1;
    long n = b64dec(raw, rcap, b, bl), r = -1;
    if (n > 0 && (v3 ? key_hkdf(salt, key) : key_sha256(salt, key)) == 0)
        r = v3 || v2 ? open_gcm(raw, (size_t)n, key, out, cap) : open_box(raw, (size_t)n, key, out, cap);
    OPENSSL_cleanse(key, sizeof key);
    free(raw);
    return r;
}

const char *sy_secret_salt(const char *master_key)
{
    const char *s = getenv("LITELLM_SALT_KEY");
    if (s && *s)
        return s;
    return master_key && *master_key ? master_key : NULL;
}
