/* sigv4.c - AWS Signature Version 4 (see sigv4.h for the contract and the
 * canonical forms).
 *
 *   step                 input                                  output
 *   -------------------  -------------------------------------  ---------------------------
 *   canonical request    method, path, query, headers, body     text (sigv4.h)
 *   string to sign       amz_date, scope, SHA256(creq)          4 lines
 *   signing key          "AWS4"+secret, date, region, service   32 bytes (4 chained HMACs)
 *   signature            HMAC(key, string to sign)              64 lower-case hex
 *
 * S3 (in->s3) differs in two places only: canonical_uri() keeps the path as
 * sent, and canonical_headers() signs x-amz-content-sha256 (the payload hash,
 * computed once in creq_build and sent by sy_sigv4_sign).
 *
 * Invariants: no I/O, no clock, no globals; every intermediate is built in a
 * scratch buffer freed before returning; headers_out changes only on success.
 * Hashes come from OpenSSL (SHA256(), HMAC() with EVP_sha256()).
 */
#include "providers/sigv4.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "core/errors.h"
#include "core/hex.h"

#define SCRATCH_CAP ((size_t)256 << 20) /* bodies are hashed in place; only texts go here */

static int unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.' || c == '~';
}

int sy_sigv4_uri_encode(struct sy_buf *out, const char *s, size_t n, int keep_slash)
{
    size_t start = out->len;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int rc;
        if (unreserved(c) || (keep_slash && c == '/')) {
            rc = sy_buf_append(out, &s[i], 1);
        } else {
            char e[3] = {'%', sy_hex_uc[c >> 4], sy_hex_uc[c & 15]};
            rc = sy_buf_append(out, e, 3);
        }
        if (rc) {
            out->len = start;
            if (out->p)
                out->p[start] = 0;
            return rc;
        }
    }
    return 0;
}

void sy_sigv4_amz_date(int64_t unix_seconds, char out[17])
{
    time_t t = (time_t)unix_seconds;
    struct tm tm;
    if (!gmtime_r(&t, &tm))
        memset(&tm, 0, sizeof tm);
    strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

static int valid_date(const char *d)
{
    if (!d || strlen(d) != 16 || d[8] != 'T' || d[15] != 'Z')
        return 0;
    for (int i = 0; i < 15; i++)
        if (i != 8 && (d[i] < '0' || d[i] > '9'))
            return 0;
    return 1;
}

static int valid_input(const struct sy_sigv4 *in)
{
    return in && in->method && in->method[0] && in->host && in->access_key && in->secret_key && in->region &&
           in->service && valid_date(in->amz_date) && (in->payload || in->payload_len == 0) &&
           in->nheaders + 3 + (in->s3 != 0) <= SY_SIGV4_MAX_HEADERS && (in->headers || in->nheaders == 0);
}

/* ---- canonical URI: botocore's remove_dot_segments, then encode ----------- */

static int canonical_uri(struct sy_buf *o, const char *path, int s3)
{
    size_t n = path ? strlen(path) : 0;
    if (n == 0)
        return SY_BUF_LIT(o, "/");
    if (s3) /* S3: the path as sent, encoded once by the caller */
        return sy_buf_append(o, path, n) ? SY_ENOSPC : 0;
    /* segments kept, as (offset, length) pairs into path; ".." pops */
    size_t cap = n / 2 + 2, k = 0;
    size_t(*seg)[2] = malloc(cap * sizeof *seg);
    if (!seg)
        return SY_ENOMEM;
    for (size_t i = 0; i <= n;) {
        size_t j = i;
        while (j < n && path[j] != '/')
            j++;
        size_t l = j - i;
        if (l == 0 || (l == 1 && path[i] == '.')) {
            /* empty or "." : dropped */
        } else if (l == 2 && path[i] == '.' && path[i + 1] == '.') {
            if (k)
                k--;
        } else {
            seg[k][0] = i;
            seg[k][1] = l;
            k++;
        }
        i = j + 1;
    }
    int rc = 0;
    if (path[0] == '/')
        rc |= SY_BUF_LIT(o, "/");
    for (size_t s = 0; s < k && !rc; s++) {
        if (s)
            rc |= SY_BUF_LIT(o, "/");
        rc |= sy_sigv4_uri_encode(o, path + seg[s][0], seg[s][1], 0);
    }
    if (!rc && path[n - 1] == '/' && k)
        rc |= SY_BUF_LIT(o, "/");
    free(seg);
    return rc ? SY_ENOSPC : 0;
}

/* ---- canonical query ----------------------------------------------------- */

/* Percent-decode s[0..n) then encode it canonically into o. */
static int requote(struct sy_buf *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%' && i + 2 < n && sy_hex_val(s[i + 1]) >= 0 && sy_hex_val(s[i + 2]) >= 0) {
            c = (unsigned char)(sy_hex_val(s[i + 1]) << 4 | sy_hex_val(s[i + 2]));
            i += 2;
        }
        char ch = (char)c;
        int rc = sy_sigv4_uri_encode(o, &ch, 1, 0);
        if (rc)
            return rc;
    }
    return 0;
}

struct qpair {
    size_t koff, klen, voff, vlen; /* into the scratch buffer */
};

static int qcmp_buf(const char *base, const struct qpair *a, const struct qpair *b)
{
    size_t m = a->klen < b->klen ? a->klen : b->klen;
    int c = memcmp(base + a->koff, base + b->koff, m);
    if (c)
        return c;
    if (a->klen != b->klen)
        return a->klen < b->klen ? -1 : 1;
    m = a->vlen < b->vlen ? a->vlen : b->vlen;
    c = memcmp(base + a->voff, base + b->voff, m);
    if (c)
        return c;
    return a->vlen < b->vlen ? -1 : a->vlen > b->vlen ? 1 : 0;
}

static int canonical_query(struct sy_buf *o, const char *q)
{
    size_t n = q ? strlen(q) : 0;
    if (n == 0)
        return 0;
    size_t np = 1;
    for (size_t i = 0; i < n; i++)
        np += q[i] == '&';
    struct qpair *pv = malloc(np * sizeof *pv);
    if (!pv)
        return SY_ENOMEM;
    struct sy_buf t;
    sy_buf_init(&t, SCRATCH_CAP);
    size_t k = 0;
    int rc = 0;
    for (size_t i = 0; i <= n && !rc;) {
        size_t j = i;
        while (j < n && q[j] != '&')
            j++;
        if (j > i) {
            const char *eq = memchr(q + i, '=', j - i);
            size_t kl = eq ? (size_t)(eq - (q + i)) : j - i;
            struct qpair *p = &pv[k++];
            p->koff = t.len;
            rc |= requote(&t, q + i, kl);
            p->klen = t.len - p->koff;
            p->voff = t.len;
            if (eq)
                rc |= requote(&t, eq + 1, (size_t)(q + j - eq - 1));
            p->vlen = t.len - p->voff;
        }
        i = j + 1;
    }
    if (!rc) {
        /* insertion sort: queries are short */
        for (size_t i = 1; i < k; i++) {
            struct qpair x = pv[i];
            size_t j = i;
            while (j > 0 && qcmp_buf(t.p, &pv[j - 1], &x) > 0) {
                pv[j] = pv[j - 1];
                j--;
            }
            pv[j] = x;
        }
        for (size_t i = 0; i < k && !rc; i++) {
            if (i)
                rc |= SY_BUF_LIT(o, "&");
            rc |= sy_buf_append(o, t.p + pv[i].koff, pv[i].klen);
            rc |= SY_BUF_LIT(o, "=");
            rc |= sy_buf_append(o, t.p + pv[i].voff, pv[i].vlen);
        }
    }
    sy_buf_free(&t);
    free(pv);
    return rc ? SY_ENOSPC : 0;
}

/* ---- canonical headers --------------------------------------------------- */

struct hent {
    size_t noff, nlen, voff, vlen; /* lower-cased name and canonical value, in scratch */
};

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static int push_header(struct sy_buf *t, struct hent *h, const char *name, const char *value)
{
    int rc = 0;
    h->noff = t->len;
    for (const char *s = name; *s && !rc; s++) {
        char c = (*s >= 'A' && *s <= 'Z') ? (char)(*s + 32) : *s;
        rc |= sy_buf_append(t, &c, 1);
    }
    h->nlen = t->len - h->noff;
    h->voff = t->len;
    const char *s = value ? value : "";
    int pending = 0;
    while (*s && !rc) {
        if (is_ws(*s)) {
            pending = t->len > h->voff;
            s++;
            continue;
        }
        if (pending) {
            rc |= SY_BUF_LIT(t, " ");
            pending = 0;
        }
        rc |= sy_buf_append(t, s, 1);
        s++;
    }
    h->vlen = t->len - h->voff;
    return rc;
}

static int hname_cmp(const char *base, const struct hent *a, const struct hent *b)
{
    size_t m = a->nlen < b->nlen ? a->nlen : b->nlen;
    int c = memcmp(base + a->noff, base + b->noff, m);
    if (c)
        return c;
    return a->nlen < b->nlen ? -1 : a->nlen > b->nlen ? 1 : 0;
}

/* Appends "name:value\n"... then "\n" then the signed-headers list to o, and
 * the list alone to signed_out (may be NULL). phash: the payload's hash (S3
 * signs it as x-amz-content-sha256). */
static int canonical_headers(struct sy_buf *o, struct sy_buf *signed_out, const struct sy_sigv4 *in, const char *phash)
{
    struct hent hv[SY_SIGV4_MAX_HEADERS];
    size_t k = 0;
    struct sy_buf t;
    sy_buf_init(&t, SCRATCH_CAP);
    int rc = push_header(&t, &hv[k++], "host", in->host);
    rc |= push_header(&t, &hv[k++], "x-amz-date", in->amz_date);
    if (in->session_token && in->session_token[0])
        rc |= push_header(&t, &hv[k++], "x-amz-security-token", in->session_token);
    if (in->s3)
        rc |= push_header(&t, &hv[k++], "x-amz-content-sha256", phash);
    for (size_t i = 0; i < in->nheaders && !rc; i++)
        rc |= push_header(&t, &hv[k++], in->headers[i].name ? in->headers[i].name : "", in->headers[i].value);
    if (!rc) {
        for (size_t i = 1; i < k; i++) { /* stable: repeated names keep their order */
            struct hent x = hv[i];
            size_t j = i;
            while (j > 0 && hname_cmp(t.p, &hv[j - 1], &x) > 0) {
                hv[j] = hv[j - 1];
                j--;
            }
            hv[j] = x;
        }
        for (size_t i = 0; i < k && !rc; i++) {
            int same = i > 0 && hname_cmp(t.p, &hv[i - 1], &hv[i]) == 0;
            if (same) {
                rc |= SY_BUF_LIT(o, ",");
            } else {
                if (i)
                    rc |= SY_BUF_LIT(o, "\n");
                rc |= sy_buf_append(o, t.p + hv[i].noff, hv[i].nlen);
                rc |= SY_BUF_LIT(o, ":");
            }
            rc |= sy_buf_append(o, t.p + hv[i].voff, hv[i].vlen);
        }
        rc |= SY_BUF_LIT(o, "\n\n");
        struct sy_buf *lists[2] = {o, signed_out};
        for (int l = 0; l < 2 && !rc; l++) {
            if (!lists[l])
                continue;
            for (size_t i = 0; i < k && !rc; i++) {
                if (i > 0 && hname_cmp(t.p, &hv[i - 1], &hv[i]) == 0)
                    continue;
                if (i)
                    rc |= SY_BUF_LIT(lists[l], ";");
                rc |= sy_buf_append(lists[l], t.p + hv[i].noff, hv[i].nlen);
            }
        }
    }
    sy_buf_free(&t);
    return rc ? SY_ENOSPC : 0;
}

/* The canonical request into o; the signed-headers list into signed_out (may
 * be NULL) and the payload's hex SHA-256 into phash. */
static int creq_build(const struct sy_sigv4 *in, struct sy_buf *o, struct sy_buf *signed_out,
                      char phash[2 * SHA256_DIGEST_LENGTH + 1])
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)(in->payload ? in->payload : ""), in->payload_len, d);
    sy_hex_encode(phash, d, sizeof d);
    int rc = sy_buf_puts(o, in->method);
    rc |= SY_BUF_LIT(o, "\n");
    if (rc)
        return SY_ENOSPC;
    if ((rc = canonical_uri(o, in->path, in->s3)))
        return rc;
    if (SY_BUF_LIT(o, "\n"))
        return SY_ENOSPC;
    if ((rc = canonical_query(o, in->query)))
        return rc;
    if (SY_BUF_LIT(o, "\n"))
        return SY_ENOSPC;
    if ((rc = canonical_headers(o, signed_out, in, phash)))
        return rc;
    rc = SY_BUF_LIT(o, "\n");
    rc |= sy_buf_append(o, phash, 2 * SHA256_DIGEST_LENGTH);
    return rc ? SY_ENOSPC : 0;
}

static int sts_build(const struct sy_sigv4 *in, const struct sy_buf *creq, struct sy_buf *o)
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)(creq->p ? creq->p : ""), creq->len, d);
    char h[2 * SHA256_DIGEST_LENGTH + 1];
    sy_hex_encode(h, d, sizeof d);
    int rc = SY_BUF_LIT(o, "AWS4-HMAC-SHA256\n");
    rc |= sy_buf_puts(o, in->amz_date);
    rc |= SY_BUF_LIT(o, "\n");
    rc |= sy_buf_append(o, in->amz_date, 8);
    rc |= SY_BUF_LIT(o, "/");
    rc |= sy_buf_puts(o, in->region);
    rc |= SY_BUF_LIT(o, "/");
    rc |= sy_buf_puts(o, in->service);
    rc |= SY_BUF_LIT(o, "/aws4_request\n");
    rc |= sy_buf_append(o, h, 2 * SHA256_DIGEST_LENGTH);
    return rc ? SY_ENOSPC : 0;
}

int sy_sigv4_canonical_request(const struct sy_sigv4 *in, struct sy_buf *out)
{
    if (!valid_input(in))
        return SY_EINVAL;
    size_t l0 = out->len;
    char ph[2 * SHA256_DIGEST_LENGTH + 1];
    int rc = creq_build(in, out, NULL, ph);
    if (rc) {
        out->len = l0;
        if (out->p)
            out->p[l0] = 0;
    }
    return rc;
}

int sy_sigv4_string_to_sign(const struct sy_sigv4 *in, struct sy_buf *out)
{
    if (!valid_input(in))
        return SY_EINVAL;
    struct sy_buf c;
    sy_buf_init(&c, SCRATCH_CAP);
    size_t l0 = out->len;
    char ph[2 * SHA256_DIGEST_LENGTH + 1];
    int rc = creq_build(in, &c, NULL, ph);
    if (!rc)
        rc = sts_build(in, &c, out);
    if (rc) {
        out->len = l0;
        if (out->p)
            out->p[l0] = 0;
    }
    sy_buf_free(&c);
    return rc;
}

static int hmac(const void *key, size_t kl, const void *msg, size_t ml, unsigned char out[32])
{
    unsigned int ol = 32;
    return HMAC(EVP_sha256(), key, (int)kl, msg, ml, out, &ol) && ol == 32 ? 0 : SY_EINTERNAL;
}

int sy_sigv4_sign(const struct sy_sigv4 *in, struct sy_buf *headers_out)
{
    if (!valid_input(in))
        return SY_EINVAL;
    struct sy_buf c, s, sh;
    sy_buf_init(&c, SCRATCH_CAP);
    sy_buf_init(&s, SCRATCH_CAP);
    sy_buf_init(&sh, SCRATCH_CAP);
    char ph[2 * SHA256_DIGEST_LENGTH + 1];
    int rc = creq_build(in, &c, &sh, ph);
    if (!rc)
        rc = sts_build(in, &c, &s);
    unsigned char k[32], sig[32];
    if (!rc) {
        /* signing key: kSecret = "AWS4" + secret -> date -> region -> service -> "aws4_request" */
        size_t sl = strlen(in->secret_key);
        char *ks = malloc(sl + 5);
        if (!ks) {
            rc = SY_ENOMEM;
        } else {
            memcpy(ks, "AWS4", 4);
            memcpy(ks + 4, in->secret_key, sl);
            rc = hmac(ks, sl + 4, in->amz_date, 8, k);
            OPENSSL_cleanse(ks, sl + 4);
            free(ks);
        }
        if (!rc)
            rc = hmac(k, 32, in->region, strlen(in->region), k);
        if (!rc)
            rc = hmac(k, 32, in->service, strlen(in->service), k);
        if (!rc)
            rc = hmac(k, 32, "aws4_request", 12, k);
        if (!rc)
            rc = hmac(k, 32, s.p, s.len, sig);
        OPENSSL_cleanse(k, sizeof k);
    }
    if (!rc) {
        char h[2 * sizeof sig + 1];
        sy_hex_encode(h, sig, sizeof sig);
        size_t l0 = headers_out->len;
        int w = SY_BUF_LIT(headers_out, "X-Amz-Date: ");
        w |= sy_buf_puts(headers_out, in->amz_date);
        w |= SY_BUF_LIT(headers_out, "\r\n");
        if (in->s3) {
            w |= SY_BUF_LIT(headers_out, "X-Amz-Content-SHA256: ");
            w |= sy_buf_append(headers_out, ph, sizeof ph - 1);
            w |= SY_BUF_LIT(headers_out, "\r\n");
        }
        if (in->session_token && in->session_token[0]) {
            w |= SY_BUF_LIT(headers_out, "X-Amz-Security-Token: ");
            w |= sy_buf_puts(headers_out, in->session_token);
            w |= SY_BUF_LIT(headers_out, "\r\n");
        }
        w |= SY_BUF_LIT(headers_out, "Authorization: AWS4-HMAC-SHA256 Credential=");
        w |= sy_buf_puts(headers_out, in->access_key);
        w |= SY_BUF_LIT(headers_out, "/");
        w |= sy_buf_append(headers_out, in->amz_date, 8);
        w |= SY_BUF_LIT(headers_out, "/");
        w |= sy_buf_puts(headers_out, in->region);
        w |= SY_BUF_LIT(headers_out, "/");
        w |= sy_buf_puts(headers_out, in->service);
        w |= SY_BUF_LIT(headers_out, "/aws4_request, SignedHeaders=");
        w |= sy_buf_append(headers_out, sh.p, sh.len);
        w |= SY_BUF_LIT(headers_out, ", Signature=");
        w |= sy_buf_append(headers_out, h, sizeof h - 1);
        w |= SY_BUF_LIT(headers_out, "\r\n");
        if (w) {
            headers_out->len = l0;
            if (headers_out->p)
                headers_out->p[l0] = 0;
            rc = SY_ENOSPC;
        }
    }
    sy_buf_free(&c);
    sy_buf_free(&s);
    sy_buf_free(&sh);
    return rc;
}

int sy_sigv4_bedrock_post(const char *host, const char *path, const char *body, size_t n, const char *access_key,
                          const char *secret_key, const char *session_token, const char *region, int64_t now,
                          struct sy_buf *headers_out)
{
    char date[17];
    sy_sigv4_amz_date(now, date);
    struct sy_sigv4_header h[] = {{"content-type", "application/json"}};
    struct sy_sigv4 s = {.method = "POST",
                         .host = host,
                         .path = path,
                         .headers = h,
                         .nheaders = 1,
                         .payload = body,
                         .payload_len = n,
                         .access_key = access_key,
                         .secret_key = secret_key,
                         .session_token = session_token,
                         .region = region ? region : "us-west-2",
                         .service = "bedrock",
                         .amz_date = date};
    return sy_sigv4_sign(&s, headers_out);
}
