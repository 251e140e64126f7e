/* multipart.c - the boundary of a multipart/form-data Content-Type and the
 * value of one named part, as views into the caller's bytes (see multipart.h).
 *
 * What is read, strictly as RFC 2046 / 7578 frame it (upstreams parse the
 * forwarded body the same way, so a lenient reading here could pick a value
 * the upstream does not see):
 *
 *   | piece             | bytes                                               |
 *   |-------------------|-----------------------------------------------------|
 *   | preamble          | anything before the first delimiter (ignored)       |
 *   | opening delimiter | "--" B at offset 0, or CRLF "--" B                  |
 *   | delimiter         | CRLF "--" B, then SP/HT* CRLF (a part follows)      |
 *   | close delimiter   | CRLF "--" B "--" (the epilogue after it is ignored) |
 *   | part headers      | lines ending in CRLF, up to an empty line; at most  |
 *   |                   | SY_MP_HDR_MAX bytes                                 |
 *   | part value        | from after the empty line to the CRLF of the next   |
 *   |                   | delimiter                                           |
 *
 * "CRLF--B" followed by anything else ("--Bx", a lone LF, the end of the body)
 * is content, not a delimiter. A bare LF never ends a line. The part matched
 * is the first whose Content-Disposition is form-data with a name parameter
 * (quoted with backslash escapes, or a bare token; parameter names are
 * case-insensitive, "filename" is not "name") equal to the name asked for.
 */
#include "http/multipart.h"

#include <string.h>

#define SY_MP_HDR_MAX 8192 /* bytes of one part's header block, empty line excluded */

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static int ieq(const char *a, size_t an, const char *lit)
{
    size_t ln = strlen(lit);
    if (an != ln)
        return 0;
    for (size_t i = 0; i < an; i++)
        if (lower((unsigned char)a[i]) != lit[i])
            return 0;
    return 1;
}

static int ows(char c)
{
    return c == ' ' || c == '\t';
}

/* One `; name = value` parameter of a header value s[*i..n). On return
 * [*nm, *nm+*nmn) is the name and [*v, *v+*vn) the raw value (quotes included
 * when quoted); *i is past it. 1 read, 0 at the end, -1 malformed. */
static int next_param(const char *s, size_t n, size_t *i, const char **nm, size_t *nmn, const char **v, size_t *vn)
{
    size_t k = *i;
    while (k < n && ows(s[k]))
        k++;
    if (k == n)
        return 0;
    if (s[k] != ';')
        return -1;
    k++;
    while (k < n && ows(s[k]))
        k++;
    size_t a = k;
    while (k < n && s[k] != '=' && s[k] != ';' && !ows(s[k]))
        k++;
    *nm = s + a;
    *nmn = k - a;
    while (k < n && ows(s[k]))
        k++;
    if (*nmn == 0 || k == n || s[k] != '=')
        return -1;
    k++;
    while (k < n && ows(s[k]))
        k++;
    a = k;
    if (k < n && s[k] == '"') {
        for (k++; k < n && s[k] != '"'; k++)
            if (s[k] == '\\' && ++k == n)
                return -1;
        if (k == n)
            return -1;
        k++;
    } else {
        while (k < n && s[k] != ';' && !ows(s[k]))
            k++;
    }
    *v = s + a;
    *vn = k - a;
    *i = k;
    return 1;
}

int sy_multipart_boundary(const char *ct, size_t n, const char **b, size_t *bn)
{
    if (!ct)
        return -1;
    size_t i = 0;
    while (i < n && ows(ct[i]))
        i++;
    size_t a = i;
    while (i < n && ct[i] != ';' && !ows(ct[i]))
        i++;
    if (!ieq(ct + a, i - a, "multipart/form-data"))
        return -1;
    const char *nm, *v;
    size_t nmn, vn;
    int r;
    while ((r = next_param(ct, n, &i, &nm, &nmn, &v, &vn)) == 1) {
        if (!ieq(nm, nmn, "boundary"))
            continue;
        if (vn && v[0] == '"') {
            v++;
            vn -= 2;
        }
        if (vn < 1 || vn > 70 || v[vn - 1] == ' ')
            return -1;
        for (size_t k = 0; k < vn; k++) {
            unsigned char c = (unsigned char)v[k];
            if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
                return -1;
        }
        *b = v;
        *bn = vn;
        return 0;
    }
    return -1;
}

/* Is there a delimiter "--" B at p[i..n) (the CRLF before it already
 * checked)? Sets *next to the first byte after it: the part headers after
 * SP/HT* CRLF (returns 1) or the epilogue after "--" (returns 2). 0 when the
 * bytes are content. */
static int delim_at(const char *p, size_t n, size_t i, const char *b, size_t bn, size_t *next)
{
    if (n - i < 2 + bn || p[i] != '-' || p[i + 1] != '-' || memcmp(p + i + 2, b, bn) != 0)
        return 0;
    i += 2 + bn;
    if (n - i >= 2 && p[i] == '-' && p[i + 1] == '-') {
        *next = i + 2;
        return 2;
    }
    while (i < n && ows(p[i]))
        i++;
    if (n - i >= 2 && p[i] == '\r' && p[i + 1] == '\n') {
        *next = i + 2;
        return 1;
    }
    return 0;
}

/* The next CRLF "--" B delimiter at or after p[i]: *at is where its CRLF
 * starts. Returns what delim_at does (1 or 2), 0 when there is none. */
static int find_delim(const char *p, size_t n, size_t i, const char *b, size_t bn, size_t *at, size_t *next)
{
    while (i + 4 + bn <= n) {
        const char *cr = memchr(p + i, '\r', n - i - 3 - bn);
        if (!cr)
            return 0;
        size_t k = (size_t)(cr - p);
        int d;
        if (p[k + 1] == '\n' && (d = delim_at(p, n, k + 2, b, bn, next)) != 0) {
            *at = k;
            return d;
        }
        i = k + 1;
    }
    return 0;
}

/* Does the Content-Disposition value v[0..n) say form-data with name `name`?
 * 1 yes, 0 no. */
static int disposition_names(const char *v, size_t n, const char *name)
{
    size_t i = 0;
    while (i < n && ows(v[i]))
        i++;
    size_t a = i;
    while (i < n && v[i] != ';' && !ows(v[i]))
        i++;
    if (!ieq(v + a, i - a, "form-data"))
        return 0;
    const char *nm, *pv;
    size_t nmn, pvn;
    while (next_param(v, n, &i, &nm, &nmn, &pv, &pvn) == 1) {
        if (!ieq(nm, nmn, "name"))
            continue;
        size_t want = strlen(name), k = 0, j = 0;
        if (pvn && pv[0] == '"') {
            if (memchr(pv, '\\', pvn))
                return -1; /* an escaped name: readers disagree on it */
            for (k = 1; k + 1 < pvn; k++, j++) {
                if (pv[k] == '\\')
                    k++;
                if (j == want || pv[k] != name[j])
                    return 0;
            }
            return j == want;
        }
        return pvn == want && memcmp(pv, name, want) == 0;
    }
    return 0;
}

int sy_multipart_field(const char *p, size_t n, const char *b, size_t bn, const char *name, size_t *off, size_t *len)
{
    if (!p || !b || bn == 0 || !name)
        return -1;
    size_t at, i, next;
    int found = 0;
    int d = delim_at(p, n, 0, b, bn, &i);
    if (d == 0)
        d = find_delim(p, n, 0, b, bn, &at, &i);
    if (d == 0)
        return -1;
    while (d == 1) {
        /* the header block: lines up to an empty one */
        size_t h0 = i, hit = 0;
        for (;;) {
            if (n - i >= 2 && p[i] == '\r' && p[i + 1] == '\n')
                break;
            size_t end = n - h0 > SY_MP_HDR_MAX ? h0 + SY_MP_HDR_MAX : n, e = i;
            while (e + 1 < end && !(p[e] == '\r' && p[e + 1] == '\n'))
                e++;
            if (e + 1 >= end)
                return -1; /* truncated, or a header block over the limit */
            const char *colon = memchr(p + i, ':', e - i);
            if (colon && !hit) {
                size_t hn = (size_t)(colon - (p + i));
                while (hn && ows(p[i + hn - 1]))
                    hn--;
                if (ieq(p + i, hn, "content-disposition")) {
                    size_t v = (size_t)(colon - p) + 1;
                    int dn = disposition_names(p + v, e - v, name);
                    if (dn < 0)
                        return -1;
                    hit = dn ? 1 : 2;
                }
            }
            i = e + 2;
        }
        /* "[headers] CRLF CRLF--B": the part has no body at all (the last
         * CRLF is the delimiter's): nothing to splice a value into when it
         * is the part asked for (-1), else skipped */
        int nb = delim_at(p, n, i + 2, b, bn, &next);
        if (nb && hit == 1)
            return -1;
        if (nb) {
            d = nb;
            i = next;
            continue;
        }
        size_t v0 = i + 2;
        /* the value ends at the CRLF of the next delimiter; an empty value
         * is followed by that CRLF at once, so the search starts at v0 */
        int nd = find_delim(p, n, v0, b, bn, &at, &next);
        if (nd == 0)
            return -1;
        if (hit == 1) {
            if (found)
                return -2; /* the field twice: which one an upstream reads is its choice */
            *off = v0;
            *len = at - v0;
            found = 1;
        }
        d = nd;
        i = next;
    }
    return found;
}
