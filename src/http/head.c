/* head.c - a fast reader for the common shape of a client's request head.
 *
 * http-parser reads a request one byte at a time through a state machine and
 * calls back for every piece (~4k instructions for a 200-byte head, a tenth
 * of the gateway's whole per-request cost). Nearly every request has one
 * simple shape, which this file reads with short loops:
 *
 *   method SP "/" target SP "HTTP/1.1" CRLF    method: GET HEAD POST PUT PATCH DELETE OPTIONS
 *   ( name ":" OWS value OWS CRLF )*           name: tchar+, value: no CTL but HTAB
 *   CRLF                                       target: unreserved, sub-delims, ":@/?%"
 *
 * Anything else returns 0 and the server hands the bytes to http-parser as
 * before: an incomplete head, HTTP/1.0, bare LF, obs-fold, a target with
 * other bytes, Transfer-Encoding (chunked bodies), Upgrade, Expect,
 * "Connection" other than exactly "keep-alive", a Content-Length that is not
 * plain digits or appears twice, trailing whitespace in a framing value, a
 * name that only starts like one of http-parser's special headers, more than
 * SY_HTTP_FAST_MAXHDR headers. So an accepted request is keep-alive and its
 * body is exactly Content-Length bytes (none without one), which is how
 * http-parser frames it too: tests/fuzz/http/fuzz_head.c checks that
 * whatever this accepts, http-parser reads with the same method, target,
 * headers, body length and keep-alive.
 */
#include "http/head.h"

#include <http_parser.h>
#include <string.h>
#include <strings.h>

/* clang-format off */
static const unsigned char tchar[256] = {
    ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1, ['*'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1,
    ['^'] = 1, ['_'] = 1, ['`'] = 1, ['|'] = 1, ['~'] = 1,
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1,
    ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1,
    ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1,
    ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1,
    ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1,
};

/* request-target bytes read here: ALPHA DIGIT "-._~" "!$&'()*+,;=" ":@/?%" */
static const unsigned char uchar[256] = {
    ['-'] = 1, ['.'] = 1, ['_'] = 1, ['~'] = 1, ['!'] = 1, ['$'] = 1, ['&'] = 1, ['\''] = 1, ['('] = 1, [')'] = 1,
    ['*'] = 1, ['+'] = 1, [','] = 1, [';'] = 1, ['='] = 1, [':'] = 1, ['@'] = 1, ['/'] = 1, ['?'] = 1, ['%'] = 1,
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1,
    ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1,
    ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1,
    ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1,
    ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1,
};
/* clang-format on */

static int ieq(const char *a, size_t n, const char *lit, size_t ln)
{
    return n == ln && strncasecmp(a, lit, n) == 0;
}

/* The method and its SP; returns the target's offset or 0. */
static size_t method(const char *p, size_t n, int *m)
{
    static const struct {
        const char *s;
        size_t n;
        int m;
    } ms[] = {{"POST ", 5, HTTP_POST},      {"GET ", 4, HTTP_GET},       {"PUT ", 4, HTTP_PUT},
              {"PATCH ", 6, HTTP_PATCH},    {"DELETE ", 7, HTTP_DELETE}, {"HEAD ", 5, HTTP_HEAD},
              {"OPTIONS ", 8, HTTP_OPTIONS}};
    for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) {
        if (n > ms[k].n && p[0] == ms[k].s[0] && memcmp(p, ms[k].s, ms[k].n) == 0) {
            *m = ms[k].m;
            return ms[k].n;
        }
    }
    return 0;
}

/* http-parser recognises its special headers by prefix ("Content-Lengthx"
 * sets its flag): a name that starts with one of them and goes on, or
 * Proxy-Connection, goes the slow way so both readers always agree. */
static int special_prefix(const char *nm, size_t nl)
{
    static const struct {
        const char *s;
        size_t n;
    } sp[] = {{"content-length", 14},
              {"transfer-encoding", 17},
              {"connection", 10},
              {"upgrade", 7},
              {"proxy-connection", 16}};
    for (size_t k = 0; k < sizeof sp / sizeof sp[0]; k++) {
        if (nl >= sp[k].n && (nm[0] | 0x20) == sp[k].s[0] && strncasecmp(nm, sp[k].s, sp[k].n) == 0 &&
            (nl != sp[k].n || k == 4))
            return 1;
    }
    return 0;
}

/* Validate a field value from p[i] up to its CR: HTAB, SP, VCHAR, obs-text.
 * Returns the CR's index, or n when the line is cut short or has a CTL. */
static size_t line_end(const char *p, size_t i, size_t n)
{
    /* eight bytes at a time while none is a CTL (a byte < 0x20 or 0x7f):
     * the middle of every value; the word that holds the CR goes byte-wise */
    while (n - i >= 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        uint64_t x = w ^ 0x7f7f7f7f7f7f7f7full;
        if (((w - 0x2020202020202020ull) & ~w & 0x8080808080808080ull) |
            ((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull))
            break;
        i += 8;
    }
    for (; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch >= 0x20 && ch != 0x7f)
            continue;
        if (ch == '\t')
            continue;
        if (ch != '\r' || i + 1 >= n || p[i + 1] != '\n')
            return n;
        return i;
    }
    return n;
}

size_t sy_http_head_read(const char *p, size_t n, struct sy_http_head *h)
{
    size_t i = method(p, n, &h->method);
    if (!i || p[i] != '/')
        return 0;
    size_t us = i;
    while (i < n && uchar[(unsigned char)p[i]])
        i++;
    if (n - i < 11 || memcmp(p + i, " HTTP/1.1\r\n", 11) != 0)
        return 0;
    h->url_off = (uint32_t)us;
    h->url_len = (uint32_t)(i - us);
    i += 11;
    h->nh = 0;
    h->clen = -1;
    for (;;) {
        if (i + 1 >= n)
            return 0; /* incomplete */
        if (p[i] == '\r') {
            if (p[i + 1] != '\n')
                return 0;
            break; /* the blank line */
        }
        size_t ns = i;
        while (n - i >= 4 && (tchar[(unsigned char)p[i]] & tchar[(unsigned char)p[i + 1]] &
                              tchar[(unsigned char)p[i + 2]] & tchar[(unsigned char)p[i + 3]]))
            i += 4; /* names are long ("x-ratelimit-remaining-requests"): four bytes a step */
        while (i < n && tchar[(unsigned char)p[i]])
            i++;
        if (i >= n || i == ns || p[i] != ':')
            return 0;
        size_t nl = i - ns;
        i++;
        while (i < n && (p[i] == ' ' || p[i] == '\t'))
            i++;
        size_t vs = i;
        i = line_end(p, i, n);
        if (i >= n)
            return 0;
        size_t ve = i;
        while (ve > vs && (p[ve - 1] == ' ' || p[ve - 1] == '\t'))
            ve--;
        if (h->nh == SY_HTTP_FAST_MAXHDR)
            return 0;
        const char *nm = p + ns, *v = p + vs;
        size_t vl = ve - vs;
        char c0 = (char)(nm[0] | 0x20);
        if (nl >= 6 && (c0 == 'c' || c0 == 't' || c0 == 'u' || c0 == 'p' || c0 == 'e')) {
            if (nl >= 7 && special_prefix(nm, nl))
                return 0;
            if ((nl == 10 || nl == 14 || nl == 17) && ve != i &&
                (ieq(nm, nl, "connection", 10) || ieq(nm, nl, "content-length", 14) ||
                 ieq(nm, nl, "transfer-encoding", 17)))
                return 0; /* trailing whitespace in a framing value: http-parser's own rules apply */
            switch (nl) {
            case 6:
                if (ieq(nm, nl, "expect", 6))
                    return 0; /* 100-continue is answered on the slow path */
                break;
            case 7:
                if (ieq(nm, nl, "upgrade", 7))
                    return 0;
                break;
            case 10:
                if (ieq(nm, nl, "connection", 10) && !ieq(v, vl, "keep-alive", 10))
                    return 0;
                break;
            case 14:
                if (ieq(nm, nl, "content-length", 14)) {
                    if (h->clen >= 0 || vl == 0 || vl > 15)
                        return 0;
                    int64_t cl = 0;
                    for (size_t k = 0; k < vl; k++) {
                        if (v[k] < '0' || v[k] > '9')
                            return 0;
                        cl = cl * 10 + (v[k] - '0');
                    }
                    h->clen = cl;
                }
                break;
            case 17:
                if (ieq(nm, nl, "transfer-encoding", 17))
                    return 0;
                break;
            }
        }
        i += 2;
        uint32_t *o = h->hoff[h->nh++];
        o[0] = (uint32_t)ns;
        o[1] = (uint32_t)nl;
        o[2] = (uint32_t)vs;
        o[3] = (uint32_t)vl;
    }
    return i + 2;
}
