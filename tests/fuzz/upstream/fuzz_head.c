/* fuzz_head.c - libFuzzer harness for the fast response-head reader
 * (upstream/head.c), differential against http-parser: whatever
 * sy__head_parse accepts, http-parser reads the same bytes as a complete head
 * with the same status, the same header names and values (OWS trimmed), and
 * the synthetic head the client substitutes gives http-parser the same
 * framing (chunked or not, Content-Length, body expected, keep-alive). */
#include <http_parser.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "upstream/up_int.h"

struct got {
    char names[SY__UP_MAXHDR][256], values[SY__UP_MAXHDR][512];
    size_t nl[SY__UP_MAXHDR], vl[SY__UP_MAXHDR];
    int n, last_value, done, overflow;
};

static int on_field(http_parser *hp, const char *at, size_t n)
{
    struct got *g = hp->data;
    if (g->n == 0 || g->last_value) {
        if (g->n == SY__UP_MAXHDR) {
            g->overflow = 1;
            return 0;
        }
        g->nl[g->n] = g->vl[g->n] = 0;
        g->n++;
        g->last_value = 0;
    }
    size_t *l = &g->nl[g->n - 1];
    if (*l + n <= sizeof g->names[0]) {
        memcpy(g->names[g->n - 1] + *l, at, n);
        *l += n;
    } else {
        g->overflow = 1;
    }
    return 0;
}

static int on_value(http_parser *hp, const char *at, size_t n)
{
    struct got *g = hp->data;
    if (!g->n)
        return 0;
    g->last_value = 1;
    size_t *l = &g->vl[g->n - 1];
    if (*l + n <= sizeof g->values[0]) {
        memcpy(g->values[g->n - 1] + *l, at, n);
        *l += n;
    } else {
        g->overflow = 1;
    }
    return 0;
}

static int on_headers(http_parser *hp)
{
    ((struct got *)hp->data)->done = 1;
    return 0;
}

static const http_parser_settings cbs = {
    .on_header_field = on_field, .on_header_value = on_value, .on_headers_complete = on_headers};

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
    static struct sy__rhead h;
    size_t hl = sy__head_parse(p, size, &h);
    if (!hl)
        return 0;
    if (hl > size)
        abort();
    static struct got g;
    memset(&g, 0, sizeof g);
    http_parser a;
    http_parser_init(&a, HTTP_RESPONSE);
    a.data = &g;
    size_t np = http_parser_execute(&a, &cbs, p, hl);
    if (HTTP_PARSER_ERRNO(&a) != HPE_OK || np != hl || !g.done)
        abort(); /* we accepted what http-parser refuses */
    if ((int)a.status_code != h.status)
        abort();
    if (!g.overflow) {
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
    }
    char syn[160];
    size_t sl = sy__head_synth(&h, syn, sizeof syn);
    http_parser b;
    http_parser_init(&b, HTTP_RESPONSE);
    static struct got g2;
    memset(&g2, 0, sizeof g2);
    b.data = &g2;
    if (http_parser_execute(&b, &cbs, syn, sl) != sl || HTTP_PARSER_ERRNO(&b) != HPE_OK || !g2.done)
        abort();
    if (b.status_code != a.status_code || (b.flags & F_CHUNKED) != (a.flags & F_CHUNKED) ||
        b.content_length != a.content_length || http_should_keep_alive(&a) != http_should_keep_alive(&b) ||
        http_body_is_final(&a) != http_body_is_final(&b))
        abort();
    return 0;
}
