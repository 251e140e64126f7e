/* image.c - image token costs, LiteLLM's calculate_img_tokens.
 *
 * detail "low"/"auto" cost 85. "high" needs the pixel size: we read it from
 * the header of an inline data: URL (PNG, GIF, JPEG, WebP), never from the
 * network. Unreadable images use LiteLLM's defaults (300x300). The size is
 * scaled so the short side is 768 (long side capped at 2000), then
 * 85 + 170 per 512x512 tile.
 */
#include <stdlib.h>
#include <string.h>

#include "tokenizer/tok_internal.h"

#define DEFAULT_W 300
#define DEFAULT_H 300

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

/* Decode up to cap bytes of base64 (skipping whitespace); returns count. */
static size_t b64_prefix(const char *p, size_t n, uint8_t *out, size_t cap)
{
    uint32_t acc = 0;
    int bits = 0;
    size_t o = 0;
    for (size_t i = 0; i < n && o < cap; i++) {
        int v = b64v((unsigned char)p[i]);
        if (v < 0) {
            if (p[i] == '=')
                break;
            continue;
        }
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (uint8_t)(acc >> bits);
        }
    }
    return o;
}

static unsigned be16(const uint8_t *p)
{
    return (unsigned)p[0] << 8 | p[1];
}
static unsigned le16(const uint8_t *p)
{
    return (unsigned)p[1] << 8 | p[0];
}

/* JPEG: walk the markers to the first SOFn frame header. */
static int jpeg_size(const uint8_t *d, size_t n, unsigned *w, unsigned *h)
{
    size_t i = 2;
    while (i + 9 < n) {
        if (d[i] != 0xFF) {
            i++;
            continue;
        }
        while (i < n && d[i] == 0xFF)
            i++;
        if (i + 8 >= n)
            break;
        unsigned m = d[i];
        if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
            *h = be16(d + i + 4);
            *w = be16(d + i + 6);
            return 0;
        }
        i += 1 + be16(d + i + 1);
    }
    return -1;
}

int sy__tok_image_size(const char *url, size_t len, unsigned *w, unsigned *h)
{
    const char *comma = memchr(url, ',', len);
    if (len < 5 || memcmp(url, "data:", 5) != 0 || !comma)
        return -1;
    /* 64 KB of header is enough to reach a JPEG frame header in practice. */
    size_t cap = 65536;
    uint8_t *d = malloc(cap);
    if (!d)
        return -1;
    size_t n = b64_prefix(comma + 1, len - (size_t)(comma + 1 - url), d, cap);
    int rc = -1;
    if (n >= 24 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0) {
        *w = (unsigned)d[16] << 24 | (unsigned)d[17] << 16 | (unsigned)d[18] << 8 | d[19];
        *h = (unsigned)d[20] << 24 | (unsigned)d[21] << 16 | (unsigned)d[22] << 8 | d[23];
        rc = 0;
    } else if (n >= 10 && memcmp(d, "GIF8", 4) == 0 && d[5] == 'a') {
        *w = le16(d + 6);
        *h = le16(d + 8);
        rc = 0;
    } else if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) {
        rc = jpeg_size(d, n, w, h);
    } else if (n >= 30 && memcmp(d, "RIFF", 4) == 0 && memcmp(d + 8, "WEBP", 4) == 0) {
        if (memcmp(d + 12, "VP8X", 4) == 0) {
            *w = ((unsigned)d[24] | (unsigned)d[25] << 8 | (unsigned)d[26] << 16) + 1;
            *h = ((unsigned)d[27] | (unsigned)d[28] << 8 | (unsigned)d[29] << 16) + 1;
            rc = 0;
        } else if (memcmp(d + 12, "VP8 ", 4) == 0) {
            *w = le16(d + 26) & 0x3FFF;
            *h = le16(d + 28) & 0x3FFF;
            rc = 0;
        } else if (memcmp(d + 12, "VP8L", 4) == 0 && n >= 25) {
            uint32_t b = (uint32_t)d[21] | (uint32_t)d[22] << 8 | (uint32_t)d[23] << 16 | (uint32_t)d[24] << 24;
            *w = (b & 0x3FFF) + 1;
            *h = ((b >> 14) & 0x3FFF) + 1;
            rc = 0;
        }
    }
    free(d);
    return rc;
}

long sy__tok_image_high_tokens(unsigned w, unsigned h)
{
    long rw = w, rh = h;
    if (w > 768 || h > 768) {
        if (w == 0 || h == 0)
            return 85;
        double longer = w > h ? w : h, shorter = w > h ? h : w, ar = longer / shorter;
        if (w <= h) {
            rw = 768;
            rh = (long)(rw * ar);
            if (rh > 2000) {
                rh = 2000;
                rw = (long)(rh / ar);
            }
        } else {
            rh = 768;
            rw = (long)(rh * ar);
            if (rw > 2000) {
                rw = 2000;
                rh = (long)(rw / ar);
            }
        }
    }
    long tiles = ((rw + 511) / 512) * ((rh + 511) / 512);
    return 85 + 170 * tiles;
}
