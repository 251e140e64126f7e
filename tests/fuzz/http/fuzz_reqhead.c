/* fuzz_reqhead.c - libFuzzer harness for the fast request-head reader
 * (http/head.c), differential against http-parser: whatever
 * sy_http_head_read accepts, http-parser reads the same bytes (head and
 * Content-Length body) as one complete request with the same method, target,
 * header names and values (OWS trimmed), body length and keep-alive, and
 * without Upgrade. */
#include <http_parser.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/head.h"

struct got {
    char url[4096], names[SY_HTTP_FAST_MAXHDR][256], values[SY_HTTP_FAST_MAXHDR][512];
    size_t ul, nl[SY_HTTP_FAST_MAXHDR], vl[SY_HTTP_FAST_MAXHDR], body;
    int n, last_value, done, overflow, has_clen, chunked;
    uint64_t clen; /* http-parser counts content_length down while reading the body */
};

static void add(char *dst, size_t *l, size_t cap, const char *at, size_t n, int *overflow)
{
    if (*l + n <= cap) {
        memcpy(dst + *l, at, n);
        *l += n;
    } else {
        *overflow = 1;
    }
}

static int on_url(http_parser *hp, const char *at, size_t n)
{
    struct got *g = hp->data;
    add(g->url, &g->ul, sizeof g->url, at, n, &g->overflow);
    return 0;
}

static int on_field(http_parser *hp, const char *at, size_t n)
{
    struct got *g = hp->data;
    if (g->n == 0 || g->last_value) {
        if (g->n == SY_HTTP_FAST_MAXHDR) {
            g->overflow = 1;
            return 0;
        }
        g->nl[g->n] = g->vl[g->n] = 0;
        g->n++;
        g->last_value = 0;
    }
    add(g->names[g->n - 1], &g->nl[g->n - 1], sizeof g->names[0], at, n, &g->overflow);
    return 0;
}

static int on_value(http_parser *hp, const char *at, size_t n)
{
    struct got *g = hp->data;
    if (!g->n)
        return 0;
    g->last_value = 1;
    add(g->values[g->n - 1], &g->vl[g->n - 1], sizeof g->values[0], at, n, &g->overflow);
    return 0;
}

static int on_headers(http_parser *hp)
{
    struct got *g = hp->data;
    g->has_clen = (hp->flags & F_CONTENTLENGTH) != 0;
    g->chunked = (hp->flags & F_CHUNKED) != 0;
    g->clen = hp->content_length;
    return 0;
}

static int on_body(http_parser *hp, const char *at, size_t n)
{
    (void)at;
    ((struct got *)hp->data)->body += n;
    return 0;
}

static int on_complete(http_parser *hp)
{
    ((struct got *)hp->data)->done = 1;
    http_parser_pause(hp, 1);
    return 0;
}

static const http_parser_settings cbs = {.on_url = on_url,
                                         .on_header_field = on_field,
                                         .on_header_value = on_value,
                                         .on_headers_complete = on_headers,
                                         .on_body = on_body,
                                         .on_message_complete = on_complete};

static void trim(const char **p, size_t *n)
{
    while (*n && ((*p)[0] == ' ' || (*p)[0] == '\t'))
        (*p)++, (*n)--;
    while (*n && ((*p)[*n - 1] == ' ' || (*p)[*n - 1] == '\t'))
        (*n)--;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    static struct sy_http_head h;
    size_t hl = sy_http_head_read(p, size, &h);
    if (!hl)
        return 0;
    if (hl > size || h.nh > SY_HTTP_FAST_MAXHDR)
        abort();
    size_t blen = h.clen > 0 ? (size_t)h.clen : 0;
    if (size - hl < blen)
        return 0; /* the server waits for the body on http-parser's path */
    static struct got g;
    memset(&g, 0, sizeof g);
    http_parser a;
    http_parser_init(&a, HTTP_REQUEST);
    a.data = &g;
    size_t np = http_parser_execute(&a, &cbs, p, hl + blen);
    enum http_errno e = HTTP_PARSER_ERRNO(&a);
    if ((e != HPE_OK && e != HPE_PAUSED) || np != hl + blen || !g.done)
        abort(); /* we accepted what http-parser refuses, or framed it differently */
    if ((int)a.method != h.method || a.http_major != 1 || a.http_minor != 1 || a.upgrade ||
        !http_should_keep_alive(&a) || g.body != blen)
        abort();
    if (g.chunked || (h.clen >= 0 ? !g.has_clen || g.clen != (uint64_t)h.clen : g.has_clen))
        abort();
    if (g.overflow)
        return 0;
    if (g.ul != h.url_len || memcmp(g.url, p + h.url_off, g.ul) != 0)
        abort();
    if ((unsigned)g.n != h.nh)
        abort();
    for (unsigned i = 0; i < h.nh; i++) {
        const char *nm = p + h.hoff[i][0], *v = p + h.hoff[i][2];
        size_t nl = h.hoff[i][1], vl = h.hoff[i][3];
        const char *gv = g.values[i];
        size_t gvl = g.vl[i];
        trim(&gv, &gvl);
        if (nl != g.nl[i] || memcmp(nm, g.names[i], nl) != 0 || vl != gvl || memcmp(v, gv, vl) != 0)
            abort();
    }
    return 0;
}
