/* session.c - the gateway's Mcp-Session-Id: stateless, signed, readable by
 * every instance that shares the secret.
 *
 *   sy1.<payload>.<mac>
 *
 *   payload  base64url (no padding) of
 *              1 byte   format (1)
 *              8 bytes  issue time, unix seconds, big-endian (signed)
 *              then four fields, each 1 length byte and the bytes:
 *              key_hash, version, scope, nonce
 *   mac      base64url of HMAC-SHA256(secret, "sy1." payload), 43 characters
 *
 * Nothing is stored: an instance that never saw the session checks the mac
 * and reads who it belongs to (the caller's hashed key: a token stolen from
 * one key is refused for another by the stage that compares them), which
 * protocol revision was negotiated and the scope (one server's prefix, or ""
 * for /mcp). The nonce (16 random bytes) makes two sessions of one key at the
 * same second distinct.
 *
 * Reading is bounded and allocation-free: the token's length is capped
 * before anything is decoded, the mac is compared in constant time
 * (CRYPTO_memcmp) before the payload is trusted, and every field's length is
 * checked against its slot in struct sy_mcp_session. A session issued more
 * than SKEW seconds in the future is refused, as is one older than max_age.
 */
#include "mcp/mcp.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <string.h>
#include <time.h>

#define PREFIX     "sy1."
#define PREFIX_LEN 4
#define MAC_B64    43  /* 32 bytes */
#define MAX_TOKEN  480 /* mint never makes more; read refuses more */
#define SKEW       300 /* seconds a peer's clock may run ahead */

static const char b64u[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static size_t b64u_encode(char *out, const unsigned char *in, size_t n)
{
    size_t o = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
        out[o++] = b64u[v >> 18];
        out[o++] = b64u[(v >> 12) & 63];
        out[o++] = b64u[(v >> 6) & 63];
        out[o++] = b64u[v & 63];
    }
    if (n - i == 1) {
        unsigned v = (unsigned)in[i] << 16;
        out[o++] = b64u[v >> 18];
        out[o++] = b64u[(v >> 12) & 63];
    } else if (n - i == 2) {
        unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8;
        out[o++] = b64u[v >> 18];
        out[o++] = b64u[(v >> 12) & 63];
        out[o++] = b64u[(v >> 6) & 63];
    }
    out[o] = 0;
    return o;
}

static int b64u_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '-')
        return 62;
    if (c == '_')
        return 63;
    return -1;
}

/* Canonical base64url only (no padding, unused bits zero, a length that is
 * not 1 mod 4): one token has one spelling. Bytes written, or -1. */
static long b64u_decode(unsigned char *out, size_t cap, const char *in, size_t n)
{
    if (n % 4 == 1)
        return -1;
    size_t need = n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
    if (need > cap)
        return -1;
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64u_val((unsigned char)in[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6 | (unsigned)v) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    if (bits && (acc & ((1u << bits) - 1)))
        return -1; /* non-canonical trailing bits */
    return (long)o;
}

static int mac(const char *secret, size_t slen, const char *msg, size_t n, unsigned char out[32])
{
    unsigned int ol = 0;
    return HMAC(EVP_sha256(), secret, (int)slen, (const unsigned char *)msg, n, out, &ol) && ol == 32 ? 0 : -1;
}

static int put_field(unsigned char *p, size_t *o, size_t cap, const char *s, size_t maxlen)
{
    size_t l = strnlen(s, maxlen + 1);
    if (l > maxlen || l > 255 || *o + 1 + l > cap)
        return -1;
    p[(*o)++] = (unsigned char)l;
    memcpy(p + *o, s, l);
    *o += l;
    return 0;
}

int sy_mcp_session_mint(const char *secret, size_t slen, const struct sy_mcp_session *s, char *out, size_t cap)
{
    if (!secret || !slen || !s || !out || cap < 512)
        return -1;
    struct sy_mcp_session tmp = *s;
    if (!tmp.nonce[0]) {
        unsigned char rnd[16];
        if (RAND_bytes(rnd, sizeof rnd) != 1)
            return -1;
        b64u_encode(tmp.nonce, rnd, sizeof rnd);
    }
    int64_t issued = tmp.issued ? tmp.issued : (int64_t)time(NULL);
    unsigned char pl[1 + 8 + 4 + sizeof tmp.key_hash + sizeof tmp.version + sizeof tmp.scope + sizeof tmp.nonce];
    size_t o = 0;
    pl[o++] = 1;
    for (int i = 7; i >= 0; i--)
        pl[o++] = (unsigned char)((uint64_t)issued >> (i * 8));
    if (put_field(pl, &o, sizeof pl, tmp.key_hash, sizeof tmp.key_hash - 1) < 0 ||
        put_field(pl, &o, sizeof pl, tmp.version, sizeof tmp.version - 1) < 0 ||
        put_field(pl, &o, sizeof pl, tmp.scope, sizeof tmp.scope - 1) < 0 ||
        put_field(pl, &o, sizeof pl, tmp.nonce, sizeof tmp.nonce - 1) < 0)
        return -1;
    size_t n = PREFIX_LEN;
    memcpy(out, PREFIX, PREFIX_LEN);
    n += b64u_encode(out + n, pl, o);
    unsigned char m[32];
    if (mac(secret, slen, out, n, m) < 0)
        return -1;
    out[n++] = '.';
    n += b64u_encode(out + n, m, sizeof m);
    return n <= MAX_TOKEN ? (int)n : -1;
}

static int get_field(const unsigned char *p, size_t n, size_t *o, char *dst, size_t dcap)
{
    if (*o >= n)
        return -1;
    size_t l = p[(*o)++];
    if (l >= dcap || *o + l > n || memchr(p + *o, 0, l))
        return -1;
    memcpy(dst, p + *o, l);
    dst[l] = 0;
    *o += l;
    return 0;
}

int sy_mcp_session_read(const char *secret, size_t slen, const char *tok, size_t n, double max_age_s,
                        struct sy_mcp_session *out)
{
    if (!secret || !slen || !tok || !out || n > MAX_TOKEN || n < PREFIX_LEN + 1 + MAC_B64 + 1)
        return -1;
    if (memcmp(tok, PREFIX, PREFIX_LEN) != 0)
        return -1;
    const char *dot = memchr(tok + PREFIX_LEN, '.', n - PREFIX_LEN);
    if (!dot || (size_t)(tok + n - dot - 1) != MAC_B64)
        return -1;
    unsigned char want[32], got[32];
    if (b64u_decode(got, sizeof got, dot + 1, MAC_B64) != 32)
        return -1;
    if (mac(secret, slen, tok, (size_t)(dot - tok), want) < 0 || CRYPTO_memcmp(want, got, 32) != 0)
        return -1;
    unsigned char pl[MAX_TOKEN];
    long pn = b64u_decode(pl, sizeof pl, tok + PREFIX_LEN, (size_t)(dot - tok - PREFIX_LEN));
    if (pn < 9 || pl[0] != 1)
        return -1;
    struct sy_mcp_session s;
    memset(&s, 0, sizeof s);
    uint64_t t = 0;
    for (int i = 1; i <= 8; i++)
        t = t << 8 | pl[i];
    s.issued = (int64_t)t;
    size_t o = 9;
    if (get_field(pl, (size_t)pn, &o, s.key_hash, sizeof s.key_hash) < 0 ||
        get_field(pl, (size_t)pn, &o, s.version, sizeof s.version) < 0 ||
        get_field(pl, (size_t)pn, &o, s.scope, sizeof s.scope) < 0 ||
        get_field(pl, (size_t)pn, &o, s.nonce, sizeof s.nonce) < 0 || o != (size_t)pn)
        return -1;
    int64_t now = (int64_t)time(NULL);
    if (s.issued > now + SKEW)
        return -1;
    if (max_age_s > 0 && (double)(now - s.issued) > max_age_s)
        return -1;
    *out = s;
    return 0;
}
