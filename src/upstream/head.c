/* head.c - a fast reader for the common shape of an upstream response head.
 *
 * http-parser reads a response head one byte at a time through a state
 * machine (~18 instructions per byte here); a typical provider head is 300 to
 * 600 bytes, a sixth of the gateway's whole per-request cost. Most heads have
 * one simple shape, which this file reads with memchr and short loops:
 *
 *   HTTP/1.1 SP 3DIGIT SP reason CRLF
 *   ( name ":" OWS value OWS CRLF )*      name: tchar+, value: no CTL but HTAB
 *   CRLF
 *
 * Anything else (an incomplete head, HTTP/1.0, bare LF, obs-fold, 1xx, 101,
 * Upgrade, a Transfer-Encoding other than exactly "chunked", a Content-Length
 * that is not plain digits or appears twice, Content-Length with chunked, a
 * header past SY__UP_MAXHDR) returns 0 and the caller hands the bytes to
 * http-parser as before. When it succeeds the caller gives http-parser a
 * synthetic head with the same status line and framing (sy__head_synth), so
 * bodies, chunked decoding and keep-alive stay http-parser's: the two paths
 * cannot disagree on where a response ends. tests/fuzz/upstream/fuzz_head.c
 * checks that whatever this accepts, http-parser reads the same way.
 */
#include <string.h>

#include "upstream/up_int.h"

static const unsigned char tchar[256] = {
    ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1, ['*'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1,
    ['^'] = 1, ['_'] = 1, ['`'] = 1, ['|'] = 1, ['~'] = 1, ['0'] = 1,  ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1,
    ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1, ['a'] = 1,  ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1,
    ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1,  ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1,
    ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1,  ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1,
    ['z'] = 1, ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1,  ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1,
    ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1,  ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1,
    ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1,  ['Z'] = 1,
};

static int ieq(const char *a, size_t n, const char *lit, size_t ln)
{
    return n == ln && strncasecmp(a, lit, n) == 0;
}

/* http-parser recognises its special headers by prefix ("Transfer-Encodingx"
 * sets its Transfer-Encoding flag): a name that starts with one of them and
 * goes on, or Proxy-Connection, goes the slow way so both readers always
 * agree. */
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

/* Validate a field value or reason phrase from p[i] up to its CR: HTAB, SP,
 * VCHAR, obs-text. Returns the CR's index, or n when the line is cut short
 * (incomplete) or has a CTL (then *bad is set). */
static size_t line_end(const char *p, size_t i, size_t n, int *bad)
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
        if (ch != '\r' || i + 1 >= n || p[i + 1] != '\n') {
            *bad = ch != '\r' || i + 1 < n; /* a CR at the very end: incomplete, not bad */
            return n;
        }
        return i;
    }
    return n;
}

size_t sy__head_parse(const char *p, size_t n, struct sy__rhead *h)
{
    if (n < 19 || memcmp(p, "HTTP/1.1 ", 9) != 0)
        return 0;
    if (p[9] < '1' || p[9] > '9' || p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9' || p[12] != ' ')
        return 0;
    h->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
    if (h->status < 200)
        return 0; /* 1xx: interim responses and 101 stay with http-parser */
    int bad = 0;
    size_t i = line_end(p, 13, n, &bad);
    if (i >= n)
        return 0;
    i += 2;
    h->nh = 0;
    h->chunked = 0;
    h->clen = -1;
    h->conn = NULL;
    h->conn_len = 0;
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
        i = line_end(p, i, n, &bad);
        if (i >= n)
            return 0;
        size_t ve = i, vraw = i;
        while (ve > vs && (p[ve - 1] == ' ' || p[ve - 1] == '\t'))
            ve--;
        i += 2;
        if (h->nh == SY__UP_MAXHDR)
            return 0;
        const char *nm = p + ns, *v = p + vs;
        size_t vl = ve - vs;
        char c0 = (char)(nm[0] | 0x20);
        if (nl >= 7 && (c0 == 'c' || c0 == 't' || c0 == 'u' || c0 == 'p')) {
            if (special_prefix(nm, nl))
                return 0;
            if ((nl == 10 || nl == 14 || nl == 17) && ve != vraw &&
                (ieq(nm, nl, "connection", 10) || ieq(nm, nl, "content-length", 14) ||
                 ieq(nm, nl, "transfer-encoding", 17)))
                return 0; /* trailing whitespace in a framing value: http-parser's own rules apply */
            switch (nl) {
            case 7:
                if (ieq(nm, nl, "upgrade", 7))
                    return 0;
                break;
            case 10:
                if (ieq(nm, nl, "connection", 10)) {
                    if (h->conn)
                        return 0;
                    h->conn = v;
                    h->conn_len = vl;
                }
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
                if (ieq(nm, nl, "transfer-encoding", 17)) {
                    if (h->chunked || !ieq(v, vl, "chunked", 7))
                        return 0;
                    h->chunked = 1;
                }
                break;
            }
        }
        uint32_t *o = h->hoff[h->nh++];
        o[0] = (uint32_t)ns;
        o[1] = (uint32_t)nl;
        o[2] = (uint32_t)vs;
        o[3] = (uint32_t)vl;
    }
    size_t hl = i + 2;
    if (h->chunked && h->clen >= 0)
        return 0;
    if (h->conn) { /* only the plain tokens: anything else (lists, upgrade) goes the slow way */
        if (!ieq(h->conn, h->conn_len, "close", 5) && !ieq(h->conn, h->conn_len, "keep-alive", 10))
            return 0;
    }
    return hl;
}

size_t sy__head_synth(const struct sy__rhead *h, char *out, size_t cap)
{
    if (cap < 128)
        return 0;
    size_t o = 0;
    memcpy(out, "HTTP/1.1 000 X\r\n", 16);
    out[9] = (char)('0' + h->status / 100);
    out[10] = (char)('0' + h->status / 10 % 10);
    out[11] = (char)('0' + h->status % 10);
    o = 16;
    if (h->chunked) {
        memcpy(out + o, "Transfer-Encoding: chunked\r\n", 28);
        o += 28;
    } else if (h->clen >= 0) {
        memcpy(out + o, "Content-Length: ", 16);
        o += 16;
        char d[20];
        int k = 0;
        int64_t v = h->clen;
        do {
            d[k++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        while (k)
            out[o++] = d[--k];
        out[o++] = '\r';
        out[o++] = '\n';
    }
    if (h->conn) {
        memcpy(out + o, "Connection: ", 12);
        o += 12;
        memcpy(out + o, h->conn, h->conn_len); /* "close" or "keep-alive" */
        o += h->conn_len;
        out[o++] = '\r';
        out[o++] = '\n';
    }
    out[o++] = '\r';
    out[o++] = '\n';
    return o;
}
