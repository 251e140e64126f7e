/* assets.c - the admin UI's files, embedded at build time (src/ui/embed.py
 * writes the table ui/ui.h declares), served from memory.
 *
 *   /ui/_/<hash>/<path>  the file: Cache-Control: public, max-age=31536000,
 *                        immutable. Another hash (an old build's) is a 404:
 *                        the page that named it is gone, and a reload
 *                        fetches index.html, which names the current one.
 *   /ui, /ui/, /ui/<route> whose last segment has no '.': index.html
 *                        (Cache-Control: no-cache): the single-page app
 *                        routes by location.pathname.
 *   anything else        404 in LiteLLM's error shape.
 *
 * Paths are looked up verbatim in the table, never decoded or joined to a
 * directory: "..", "%2e%2e", "%2f" and doubled slashes name no row (the
 * generator refuses names with '%', '\\' or '"'), so there is nothing to
 * traverse. Every answer carries a strong ETag (the raw bytes' sha256 prefix;
 * "-gz" appended for the gzip representation, RFC 9110 §8.8.3) and If-None-Match
 * gives 304. The bytes are gzip -9: sent as they are when Accept-Encoding
 * allows gzip (q-values honoured: "gzip;q=0" refuses it), else inflated with
 * zlib into the request's arena (bounded by the largest file, tens of KB).
 * Security headers on every answer: a CSP without inline script,
 * X-Frame-Options DENY, nosniff, Referrer-Policy same-origin.
 */
#include "ui/ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "http/reply.h"
#include "http/server.h"

#define SEC_HEADERS                                                                                                  \
    "content-security-policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src "    \
    "'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors "     \
    "'none'\r\n"                                                                                                     \
    "x-frame-options: DENY\r\n"                                                                                      \
    "x-content-type-options: nosniff\r\n"                                                                            \
    "referrer-policy: same-origin\r\n"                                                                               \
    "vary: Accept-Encoding\r\n"

const struct sy_ui_file *sy_ui_file_find(const char *path, size_t n)
{
    size_t lo = 0, hi = sy_ui_nfiles;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *p = sy_ui_files[mid].path;
        size_t pl = strlen(p);
        int c = memcmp(p, path, pl < n ? pl : n);
        if (c == 0)
            c = pl < n ? -1 : pl > n ? 1 : 0;
        if (c == 0)
            return &sy_ui_files[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int ows(char c)
{
    return c == ' ' || c == '\t';
}

/* q of one "coding;q=x" element: 1000ths, 1000 without a q parameter. */
static int qvalue(const char *p, size_t n)
{
    const char *semi = memchr(p, ';', n);
    while (semi) {
        const char *s = semi + 1, *e = p + n;
        const char *next = memchr(s, ';', (size_t)(e - s));
        const char *pe = next ? next : e;
        while (s < pe && ows(*s))
            s++;
        if (pe - s >= 2 && (s[0] == 'q' || s[0] == 'Q') && s[1] == '=') {
            s += 2;
            if (s >= pe || (*s != '0' && *s != '1'))
                return 0;
            int q = (*s - '0') * 1000, scale = 100;
            s++;
            if (s < pe && *s == '.')
                for (s++; s < pe && *s >= '0' && *s <= '9' && scale; s++, scale /= 10)
                    q += (*s - '0') * scale;
            return q > 1000 ? 1000 : q;
        }
        semi = next;
    }
    return 1000;
}

int sy_ui_accepts_gzip(const char *a, size_t n)
{
    int gz = -1, star = -1;
    size_t i = 0;
    while (i < n) {
        size_t s = i;
        while (i < n && a[i] != ',')
            i++;
        size_t e = i++;
        while (s < e && ows(a[s]))
            s++;
        size_t te = s;
        while (te < e && a[te] != ';' && !ows(a[te]))
            te++;
        int q = qvalue(a + s, e - s);
        if ((te - s == 4 && strncasecmp(a + s, "gzip", 4) == 0) ||
            (te - s == 6 && strncasecmp(a + s, "x-gzip", 6) == 0))
            gz = q > gz ? q : gz;
        else if (te - s == 1 && a[s] == '*')
            star = q;
    }
    return gz >= 0 ? gz > 0 : star > 0;
}

long sy_ui_gunzip(const unsigned char *gz, size_t n, char *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        return -1;
    z.next_in = (unsigned char *)gz;
    z.avail_in = (uInt)n;
    z.next_out = (unsigned char *)out;
    z.avail_out = (uInt)cap;
    int rc = inflate(&z, Z_FINISH);
    long len = rc == Z_STREAM_END ? (long)z.total_out : -1;
    inflateEnd(&z);
    return len;
}

/* Does If-None-Match inm[0..n) name etag (compared weakly, RFC 9110 §13.1.2)? */
static int etag_match(struct sy_str inm, const char *etag)
{
    size_t el = strlen(etag);
    size_t i = 0;
    while (i < inm.n) {
        size_t s = i;
        while (i < inm.n && inm.p[i] != ',')
            i++;
        size_t e = i++;
        while (s < e && ows(inm.p[s]))
            s++;
        while (e > s && ows(inm.p[e - 1]))
            e--;
        if (e - s == 1 && inm.p[s] == '*')
            return 1;
        if (e - s >= 2 && inm.p[s] == 'W' && inm.p[s + 1] == '/')
            s += 2;
        /* etag is "<hex>"; a tag "<hex>-gz" names the same bytes compressed */
        if (e - s == el && memcmp(inm.p + s, etag, el) == 0)
            return 1;
        if (e - s == el + 3 && memcmp(inm.p + s, etag, el - 1) == 0 && memcmp(inm.p + s + el - 1, "-gz\"", 4) == 0)
            return 1;
    }
    return 0;
}

static void not_found(struct sy_req *r)
{
    sy_reply_error(r, 404, "not_found_error", NULL, "Not Found: no such file in the admin UI");
}

static void send_file(struct sy_req *r, const struct sy_ui_file *f, int immutable)
{
    struct sy_str ae = sy_req_header(r, "accept-encoding");
    int gz = ae.p && sy_ui_accepts_gzip(ae.p, ae.n);
    char etag[48];
    size_t el = strlen(f->etag);
    if (gz)
        snprintf(etag, sizeof etag, "%.*s-gz\"", (int)(el - 1), f->etag);
    else
        snprintf(etag, sizeof etag, "%s", f->etag);
    char h[1024];
    int hl = snprintf(h, sizeof h, "%s%setag: %s\r\ncache-control: %s\r\n", SEC_HEADERS,
                      gz ? "content-encoding: gzip\r\n" : "", etag,
                      immutable ? "public, max-age=31536000, immutable" : "no-cache");
    struct sy_str inm = sy_req_header(r, "if-none-match");
    if (inm.p && etag_match(inm, f->etag)) {
        sy_resp_simple(r, 304, h, (size_t)hl, f->mime, NULL, 0);
        return;
    }
    if (gz) {
        sy_resp_simple(r, 200, h, (size_t)hl, f->mime, (const char *)f->gz, f->gz_len);
        return;
    }
    char *raw = sy_arena_alloc(&r->arena, f->raw_len + 1);
    long n = raw ? sy_ui_gunzip(f->gz, f->gz_len, raw, f->raw_len + 1) : -1;
    if (n != (long)f->raw_len) {
        sy_reply_error(r, 500, "internal_server_error", NULL, "an embedded UI file did not inflate");
        return;
    }
    sy_resp_simple(r, 200, h, (size_t)hl, f->mime, raw, f->raw_len);
}

void sy_ui_serve(struct sy_req *r)
{
    const char *p = r->path.p;
    size_t n = r->path.n;
    static const char pfx[] = "/ui/_/";
    size_t hl = strlen(sy_ui_hash);
    if (n > sizeof pfx - 1 && memcmp(p, pfx, sizeof pfx - 1) == 0) {
        const char *h = p + sizeof pfx - 1;
        size_t rest = n - (sizeof pfx - 1);
        const struct sy_ui_file *f = NULL;
        if (rest > hl + 1 && memcmp(h, sy_ui_hash, hl) == 0 && h[hl] == '/')
            f = sy_ui_file_find(h + hl + 1, rest - hl - 1);
        if (f)
            send_file(r, f, 1);
        else
            not_found(r);
        return;
    }
    /* a route of the app: no '.' in the last segment */
    const char *last = p + n;
    while (last > p && last[-1] != '/')
        last--;
    const struct sy_ui_file *idx = sy_ui_file_find("index.html", 10);
    if (memchr(last, '.', (size_t)(p + n - last)) || !idx) {
        not_found(r);
        return;
    }
    send_file(r, idx, 0);
}
