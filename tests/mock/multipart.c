/* multipart.c - the mock's own reader of multipart/form-data request bodies
 * (images/edits, audio transcriptions and translations, file uploads), and
 * the summary of such a body in the request log.
 *
 * Wire format (RFC 7578 / RFC 2046), as curl -F and the OpenAI SDKs send it:
 *
 *   Content-Type: multipart/form-data; boundary=B        (B may be "quoted")
 *
 *   [preamble] "--B" CRLF
 *   "Content-Disposition: form-data; name=\"N\"[; filename=\"F\"]" CRLF
 *   ["Content-Type: T" CRLF]
 *   CRLF
 *   data CRLF "--B" CRLF          (next part)
 *   ...      CRLF "--B--" [epilogue]
 *
 * Parts are views into the body (nothing is copied or decoded; names and
 * filenames stay as sent, without the quotes). A bare LF after the delimiter
 * and the header lines is accepted too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <string.h>
#include <strings.h>

#include "mock.h"

/* The boundary parameter of a multipart/form-data content type. */
static int boundary(const char *ct, struct sy_str *b)
{
    if (!ct || strncasecmp(ct, "multipart/form-data", 19) != 0)
        return -1;
    for (const char *p = ct + 19; (p = strchr(p, ';'));) {
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncasecmp(p, "boundary=", 9) != 0)
            continue;
        p += 9;
        const char *e;
        if (*p == '"') {
            e = strchr(++p, '"');
            if (!e)
                return -1;
        } else {
            e = p + strcspn(p, "; \t");
        }
        if (e == p || e - p > 200)
            return -1;
        *b = (struct sy_str){p, (size_t)(e - p)};
        return 0;
    }
    return -1;
}

/* Parameter key ("name" / "filename") of a Content-Disposition value h[0..n). */
static struct sy_str disp_param(const char *h, size_t n, const char *key)
{
    size_t kn = strlen(key);
    for (size_t i = 0; i + kn + 1 < n; i++) {
        if ((i > 0 && h[i - 1] != ';' && h[i - 1] != ' ' && h[i - 1] != '\t') || strncasecmp(h + i, key, kn) != 0 ||
            h[i + kn] != '=')
            continue;
        const char *v = h + i + kn + 1, *end = h + n;
        if (v < end && *v == '"') {
            v++;
            const char *q = memchr(v, '"', (size_t)(end - v));
            return (struct sy_str){v, (size_t)((q ? q : end) - v)};
        }
        const char *e = v;
        while (e < end && *e != ';' && *e != ' ')
            e++;
        return (struct sy_str){v, (size_t)(e - v)};
    }
    return SY_STR_NULL;
}

/* Parse the header lines h[0..n) of one part into p. */
static void part_headers(const char *h, size_t n, struct mock_part *p)
{
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(h + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - h) : n, le = e;
        if (le > i && h[le - 1] == '\r')
            le--;
        const char *line = h + i;
        size_t ln = le - i;
        if (ln > 20 && strncasecmp(line, "content-disposition:", 20) == 0) {
            p->name = disp_param(line + 20, ln - 20, "name");
            p->filename = disp_param(line + 20, ln - 20, "filename");
        } else if (ln > 13 && strncasecmp(line, "content-type:", 13) == 0) {
            size_t k = 13;
            while (k < ln && (line[k] == ' ' || line[k] == '\t'))
                k++;
            p->ctype = (struct sy_str){line + k, ln - k};
        }
        i = e + 1;
    }
}

int mock_multipart(const char *ct, const char *body, size_t n, struct mock_part *parts, int max)
{
    struct sy_str b;
    char delim[210];
    if (boundary(ct, &b) < 0 || !body)
        return -1;
    delim[0] = delim[1] = '-';
    memcpy(delim + 2, b.p, b.n);
    size_t dn = b.n + 2;
    /* the first delimiter: at the start or after a preamble line */
    const char *p = body, *end = body + n;
    if (!(n >= dn && memcmp(body, delim, dn) == 0)) {
        delim[dn] = 0;
        const char *f = memmem(body, n, "\n--", 3);
        while (f && !((size_t)(end - f - 1) >= dn && memcmp(f + 1, delim, dn) == 0))
            f = memmem(f + 1, (size_t)(end - f - 1), "\n--", 3);
        if (!f)
            return -1;
        p = f + 1;
    }
    int np = 0;
    for (;;) {
        p += dn; /* at the end of a delimiter */
        if (end - p >= 2 && p[0] == '-' && p[1] == '-')
            return np; /* close delimiter */
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (end - p >= 2 && p[0] == '\r' && p[1] == '\n')
            p += 2;
        else if (p < end && *p == '\n')
            p++;
        else
            return -1;
        /* headers end at an empty line */
        const char *hend = NULL, *data = NULL;
        for (const char *x = p; x < end;) {
            const char *nl = memchr(x, '\n', (size_t)(end - x));
            if (!nl)
                break;
            if (nl == x || (nl == x + 1 && *x == '\r')) {
                hend = x;
                data = nl + 1;
                break;
            }
            x = nl + 1;
        }
        if (!hend)
            return -1;
        /* data ends at CRLF (or LF) + delimiter */
        const char *x = data, *dend = NULL;
        while ((x = memmem(x, (size_t)(end - x), delim, dn))) {
            if (x > data && x[-1] == '\n') {
                dend = x - 1;
                if (dend > data && dend[-1] == '\r')
                    dend--;
                break;
            }
            x++;
        }
        if (!dend)
            return -1;
        if (np < max) {
            struct mock_part *pt = &parts[np];
            memset(pt, 0, sizeof *pt);
            part_headers(p, (size_t)(hend - p), pt);
            pt->data = (struct sy_str){data, (size_t)(dend - data)};
            if (!pt->name.p)
                pt->name = (struct sy_str){"", 0};
            np++;
        }
        p = x;
    }
}

const struct mock_part *mock_part(const struct mock_part *parts, int n, const char *name)
{
    size_t ln = strlen(name);
    for (int i = 0; i < n; i++)
        if (parts[i].name.n == ln && memcmp(parts[i].name.p, name, ln) == 0)
            return &parts[i];
    return NULL;
}

void mock_multipart_log(struct sy_buf *s, const char *ct, const char *body, size_t n)
{
    struct mock_part parts[MOCK_MAX_PARTS];
    int np = mock_multipart(ct, body, n, parts, MOCK_MAX_PARTS);
    if (np < 0)
        return;
    const struct mock_part *m = mock_part(parts, np, "model");
    SY_BUF_LIT(s, ",\"multipart\":{\"fields\":[");
    for (int i = 0; i < np; i++) {
        SY_BUF_LIT(s, "\"");
        sy_buf_json_escape(s, parts[i].name.p, parts[i].name.n);
        sy_buf_puts(s, i + 1 < np ? "\"," : "\"");
    }
    SY_BUF_LIT(s, "],\"files\":[");
    for (int i = 0, k = 0; i < np; i++) {
        if (!parts[i].filename.p)
            continue;
        sy_buf_puts(s, k++ ? ",{\"name\":\"" : "{\"name\":\"");
        sy_buf_json_escape(s, parts[i].name.p, parts[i].name.n);
        SY_BUF_LIT(s, "\",\"filename\":\"");
        sy_buf_json_escape(s, parts[i].filename.p, parts[i].filename.n);
        sy_buf_printf(s, "\",\"bytes\":%zu}", parts[i].data.n);
    }
    SY_BUF_LIT(s, "],\"model\":");
    if (m) {
        SY_BUF_LIT(s, "\"");
        sy_buf_json_escape(s, m->data.p, m->data.n);
        SY_BUF_LIT(s, "\"}");
    } else {
        SY_BUF_LIT(s, "null}");
    }
}
