/* secretbox.c - XSalsa20-Poly1305 (NaCl crypto_secretbox) for the
 * credentials LiteLLM encrypts in its database; see secretbox.h.
 *
 * OpenSSL has Poly1305 (EVP_MAC "POLY1305") but no Salsa20, so the Salsa20
 * core is here, after the reference (D. J. Bernstein, "Salsa20
 * specification"): XSalsa20 derives a subkey with HSalsa20 over the first 16
 * nonce bytes and runs Salsa20 with the last 8; the first 32 keystream bytes
 * are the one-time Poly1305 key and the message is XORed with the keystream
 * from byte 32 on. The tag is checked in constant time before anything is
 * decrypted. Only credentials (tens of bytes, at a reload) go through it.
 */
#include "mcp/secretbox.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdint.h>
#include <string.h>

static uint32_t ld32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void st32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

#define ROTL(a, b) (((a) << (b)) | ((a) >> (32 - (b))))

/* 20 rounds over x (in place). */
static void rounds(uint32_t x[16])
{
    for (int i = 0; i < 10; i++) {
        x[4] ^= ROTL(x[0] + x[12], 7);
        x[8] ^= ROTL(x[4] + x[0], 9);
        x[12] ^= ROTL(x[8] + x[4], 13);
        x[0] ^= ROTL(x[12] + x[8], 18);
        x[9] ^= ROTL(x[5] + x[1], 7);
        x[13] ^= ROTL(x[9] + x[5], 9);
        x[1] ^= ROTL(x[13] + x[9], 13);
        x[5] ^= ROTL(x[1] + x[13], 18);
        x[14] ^= ROTL(x[10] + x[6], 7);
        x[2] ^= ROTL(x[14] + x[10], 9);
        x[6] ^= ROTL(x[2] + x[14], 13);
        x[10] ^= ROTL(x[6] + x[2], 18);
        x[3] ^= ROTL(x[15] + x[11], 7);
        x[7] ^= ROTL(x[3] + x[15], 9);
        x[11] ^= ROTL(x[7] + x[3], 13);
        x[15] ^= ROTL(x[11] + x[7], 18);
        x[1] ^= ROTL(x[0] + x[3], 7);
        x[2] ^= ROTL(x[1] + x[0], 9);
        x[3] ^= ROTL(x[2] + x[1], 13);
        x[0] ^= ROTL(x[3] + x[2], 18);
        x[6] ^= ROTL(x[5] + x[4], 7);
        x[7] ^= ROTL(x[6] + x[5], 9);
        x[4] ^= ROTL(x[7] + x[6], 13);
        x[5] ^= ROTL(x[4] + x[7], 18);
        x[11] ^= ROTL(x[10] + x[9], 7);
        x[8] ^= ROTL(x[11] + x[10], 9);
        x[9] ^= ROTL(x[8] + x[11], 13);
        x[10] ^= ROTL(x[9] + x[8], 18);
        x[12] ^= ROTL(x[15] + x[14], 7);
        x[13] ^= ROTL(x[12] + x[15], 9);
        x[14] ^= ROTL(x[13] + x[12], 13);
        x[15] ^= ROTL(x[14] + x[13], 18);
    }
}

/* The input block: "expand 32-byte k", the key, 16 bytes of input. */
static void setup(uint32_t s[16], const unsigned char in[16], const unsigned char k[32])
{
    s[0] = 0x61707865;
    s[5] = 0x3320646e;
    s[10] = 0x79622d32;
    s[15] = 0x6b206574;
    for (int i = 0; i < 4; i++) {
        s[1 + i] = ld32(k + 4 * i);
        s[11 + i] = ld32(k + 16 + 4 * i);
        s[6 + i] = ld32(in + 4 * i);
    }
}

void sy__mcp_hsalsa20(unsigned char out[32], const unsigned char in[16], const unsigned char key[32])
{
    uint32_t x[16];
    setup(x, in, key);
    rounds(x);
    static const int pick[8] = {0, 5, 10, 15, 6, 7, 8, 9};
    for (int i = 0; i < 8; i++)
        st32(out + 4 * i, x[pick[i]]);
}

/* XSalsa20 keystream XORed into buf[0..n), starting at keystream byte skip (< 64). */
static void xsalsa20_xor(unsigned char *buf, size_t n, size_t skip, const unsigned char nonce[24],
                         const unsigned char key[32])
{
    unsigned char sub[32], in[16], blk[64];
    sy__mcp_hsalsa20(sub, nonce, key);
    memcpy(in, nonce + 16, 8);
    uint64_t ctr = 0;
    size_t off = skip;
    while (n) {
        for (int i = 0; i < 8; i++)
            in[8 + i] = (unsigned char)(ctr >> (8 * i));
        uint32_t s[16], x[16];
        setup(s, in, sub);
        memcpy(x, s, sizeof x);
        rounds(x);
        for (int i = 0; i < 16; i++)
            st32(blk + 4 * i, x[i] + s[i]);
        size_t take = 64 - off < n ? 64 - off : n;
        for (size_t i = 0; i < take; i++)
            *buf++ ^= blk[off + i];
        n -= take;
        off = 0;
        ctr++;
    }
    OPENSSL_cleanse(sub, sizeof sub);
    OPENSSL_cleanse(blk, sizeof blk);
}

static int poly1305(unsigned char tag[16], const unsigned char *m, size_t n, const unsigned char key[32])
{
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "POLY1305", NULL);
    EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
    size_t tl = 0;
    int ok = ctx && EVP_MAC_init(ctx, key, 32, NULL) && EVP_MAC_update(ctx, m, n) && EVP_MAC_final(ctx, tag, &tl, 16) &&
             tl == 16;
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
    return ok ? 0 : -1;
}

int sy__mcp_secretbox_open(unsigned char *out, const unsigned char *box, size_t n,
                           const unsigned char nonce[SY_SECRETBOX_NONCE], const unsigned char key[32])
{
    if (n < SY_SECRETBOX_TAG)
        return -1;
    unsigned char pk[32] = {0}, tag[16];
    xsalsa20_xor(pk, sizeof pk, 0, nonce, key);
    int ok = poly1305(tag, box + SY_SECRETBOX_TAG, n - SY_SECRETBOX_TAG, pk) == 0 &&
             CRYPTO_memcmp(tag, box, SY_SECRETBOX_TAG) == 0;
    OPENSSL_cleanse(pk, sizeof pk);
    if (!ok) {
        memset(out, 0, n - SY_SECRETBOX_TAG);
        return -1;
    }
    memmove(out, box + SY_SECRETBOX_TAG, n - SY_SECRETBOX_TAG);
    xsalsa20_xor(out, n - SY_SECRETBOX_TAG, 32, nonce, key);
    return 0;
}

int sy__mcp_secretbox_seal(unsigned char *box, const unsigned char *msg, size_t n,
                           const unsigned char nonce[SY_SECRETBOX_NONCE], const unsigned char key[32])
{
    unsigned char pk[32] = {0};
    memmove(box + SY_SECRETBOX_TAG, msg, n);
    xsalsa20_xor(box + SY_SECRETBOX_TAG, n, 32, nonce, key);
    xsalsa20_xor(pk, sizeof pk, 0, nonce, key);
    int r = poly1305(box, box + SY_SECRETBOX_TAG, n, pk);
    OPENSSL_cleanse(pk, sizeof pk);
    return r;
}

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

/* Base64, either alphabet, padding optional. Bytes, or -1. */
static long b64dec(unsigned char *out, size_t cap, const char *s)
{
    size_t n = strlen(s), o = 0;
    while (n && s[n - 1] == '=')
        n--;
    if (n % 4 == 1)
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

long sy__mcp_litellm_decrypt(const char *v, const char *salt, char *out, size_t cap)
{
    unsigned char raw[4096], key[32];
    unsigned int kl = 0;
    if (!v || !salt || !*salt || strlen(v) > 4 * sizeof raw / 3)
        return -1;
    long n = b64dec(raw, sizeof raw, v);
    if (n < SY_SECRETBOX_NONCE + SY_SECRETBOX_TAG || (size_t)n - SY_SECRETBOX_NONCE - SY_SECRETBOX_TAG >= cap)
        return -1;
    if (!EVP_Digest(salt, strlen(salt), key, &kl, EVP_sha256(), NULL) || kl != 32)
        return -1;
    size_t ml = (size_t)n - SY_SECRETBOX_NONCE - SY_SECRETBOX_TAG;
    int r = sy__mcp_secretbox_open((unsigned char *)out, raw + SY_SECRETBOX_NONCE, (size_t)n - SY_SECRETBOX_NONCE, raw,
                                   key);
    OPENSSL_cleanse(key, sizeof key);
    if (r < 0 || memchr(out, 0, ml))
        return -1;
    out[ml] = 0;
    return (long)ml;
}
