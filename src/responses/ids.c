/* ids.c - LiteLLM's managed Responses ids (responses.h, "ids").
 *
 *   client sees   resp_<base64 of the text below, standard alphabet, '=' padded>
 *   text          litellm:custom_llm_provider:<provider>;model_id:<model id>;response_id:<inner id>
 *
 * Decoding follows ResponsesAPIRequestUtils._decode_responses_api_response_id:
 * strip "resp_", base64-decode; no ';' in the text (or not base64) means the
 * id is not ours and is used whole. The rewrite of native payloads touches
 * only string values of members named "id" that start with "resp_" (response
 * objects; items are msg_/fc_/rs_...), found where a member may start (after
 * '{' or ','), so text inside string values is never changed.
 */
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "responses/resp_impl.h"
#include "responses/responses.h"

static const char b64c[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t sy__resp_b64_encode(const unsigned char *in, size_t n, char *out)
{
    size_t o = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        out[o++] = b64c[in[i] >> 2];
        out[o++] = b64c[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
        out[o++] = b64c[((in[i + 1] & 15) << 2) | (in[i + 2] >> 6)];
        out[o++] = b64c[in[i + 2] & 63];
    }
    if (n - i == 1) {
        out[o++] = b64c[in[i] >> 2];
        out[o++] = b64c[(in[i] & 3) << 4];
        out[o++] = '=';
        out[o++] = '=';
    } else if (n - i == 2) {
        out[o++] = b64c[in[i] >> 2];
        out[o++] = b64c[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
        out[o++] = b64c[(in[i + 1] & 15) << 2];
        out[o++] = '=';
    }
    return o;
}

static int b64v(unsigned char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+' || ch == '-')
        return 62;
    if (ch == '/' || ch == '_')
        return 63;
    return -1;
}

/* Decode (padding optional); -1 on a bad character or when out is too small. */
long sy__resp_b64_decode(const char *in, size_t n, char *out, size_t cap)
{
    while (n && in[n - 1] == '=')
        n--;
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64v((unsigned char)in[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o >= cap)
                return -1;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    return (long)o;
}

int sy_resp_id_encode(const char *provider, const char *model_id, const char *inner, size_t inner_len, char *out,
                      size_t cap)
{
    char text[1024];
    int tl = snprintf(text, sizeof text, "litellm:custom_llm_provider:%s;model_id:%s;response_id:%.*s",
                      provider ? provider : "None", model_id ? model_id : "None", (int)inner_len, inner);
    if (tl < 0 || (size_t)tl >= sizeof text)
        return -1;
    size_t need = 5 + ((size_t)tl + 2) / 3 * 4 + 1;
    if (need > cap)
        return -1;
    memcpy(out, "resp_", 5);
    size_t o = 5 + sy__resp_b64_encode((const unsigned char *)text, (size_t)tl, out + 5);
    out[o] = 0;
    return 0;
}

static void copy_field(char *dst, size_t cap, const char *p, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, p, n);
    dst[n] = 0;
}

int sy_resp_id_decode(const char *id, size_t n, struct sy_resp_id *d)
{
    memset(d, 0, sizeof d[0]);
    int whole = n < sizeof d->inner ? 0 : -1; /* what a plain id gives: itself, or too long */
    if (!whole)
        copy_field(d->inner, sizeof d->inner, id, n);
    const char *p = id;
    size_t m = n;
    if (m >= 5 && memcmp(p, "resp_", 5) == 0) {
        p += 5;
        m -= 5;
    }
    char text[1200];
    long tl = m < 1600 ? sy__resp_b64_decode(p, m, text, sizeof text - 1) : -1;
    if (tl <= 0)
        return whole;
    text[tl] = 0;
    if ((size_t)tl != strlen(text) || !memchr(text, ';', (size_t)tl))
        return whole;
    static const char P1[] = "litellm:custom_llm_provider:", P2[] = "model_id:", P3[] = "response_id:";
    const char *a = text, *s1 = strchr(a, ';');
    if (!s1)
        return whole;
    const char *b = s1 + 1, *s2 = strchr(b, ';');
    if (!s2)
        return whole;
    const char *c = s2 + 1; /* response_id: the rest (it may itself contain ';') */
    if (strncmp(a, P1, sizeof P1 - 1) != 0 || strncmp(b, P2, sizeof P2 - 1) != 0 ||
        strncmp(c, P3, sizeof P3 - 1) != 0 || (size_t)(s1 - a) - (sizeof P1 - 1) >= sizeof d->provider ||
        (size_t)(s2 - b) - (sizeof P2 - 1) >= sizeof d->model_id)
        return whole;
    copy_field(d->provider, sizeof d->provider, a + sizeof P1 - 1, (size_t)(s1 - a) - (sizeof P1 - 1));
    copy_field(d->model_id, sizeof d->model_id, b + sizeof P2 - 1, (size_t)(s2 - b) - (sizeof P2 - 1));
    size_t rl = strlen(c + sizeof P3 - 1);
    if (rl >= sizeof d->inner)
        return whole;
    copy_field(d->inner, sizeof d->inner, c + sizeof P3 - 1, rl);
    d->encoded = 1;
    return 0;
}

/* The end of the JSON string opening at p[q] (the index of its closing
 * quote), or n when it does not close. memchr-driven: the scan costs little
 * more than the bytes' read. */
static size_t str_end(const char *p, size_t n, size_t q)
{
    size_t i = q + 1;
    for (;;) {
        const char *e = memchr(p + i, '"', n - i);
        if (!e)
            return n;
        size_t k = (size_t)(e - p), bs = 0;
        while (k - bs > q + 1 && p[k - bs - 1] == '\\')
            bs++;
        if (!(bs & 1))
            return k;
        i = k + 1;
        if (i >= n)
            return n;
    }
}

static int is_ws(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

int sy_resp_ids_rewrite(const char *p, size_t n, const char *provider, const char *model_id, struct sy_buf *out)
{
    int count = 0;
    size_t at = 0; /* bytes of p already copied */
    size_t i = 0;  /* outside any string */
    while (i < n) {
        const char *qp = memchr(p + i, '"', n - i);
        if (!qp)
            break;
        size_t q = (size_t)(qp - p);
        size_t b = q; /* the last non-space byte before the string: a member starts after '{' or ',' */
        while (b > i && is_ws(p[b - 1]))
            b--;
        char prev = b > 0 ? p[b - 1] : 0;
        size_t e = str_end(p, n, q);
        if (e >= n)
            break;
        i = e + 1;
        if ((prev != '{' && prev != ',') || e != q + 3 || p[q + 1] != 'i' || p[q + 2] != 'd')
            continue;
        /* the key "id": its value */
        size_t j = i;
        while (j < n && is_ws(p[j]))
            j++;
        if (j >= n || p[j] != ':')
            continue;
        j++;
        while (j < n && is_ws(p[j]))
            j++;
        if (n - j < 6 || memcmp(p + j, "\"resp_", 6) != 0)
            continue;
        size_t k = str_end(p, n, j);
        if (k >= n)
            break;
        i = k + 1;
        if (memchr(p + j + 1, '\\', k - j - 1) || k - (j + 1) >= 400)
            continue; /* escaped or absurd ids are left as they are */
        char enc[1600];
        if (sy_resp_id_encode(provider, model_id, p + j + 1, k - (j + 1), enc, sizeof enc) != 0)
            continue;
        sy_buf_append(out, p + at, j + 1 - at);
        sy_buf_puts(out, enc);
        at = k;
        count++;
    }
    sy_buf_append(out, p + at, n - at);
    return count;
}
