/* fuzz_ptroute.c - libFuzzer harness for the pass-through route parsers of
 * ptroute.c (providers/ptroute.h):
 *
 *   input = path | 0x00 | allowed route
 *
 * No crash, no read outside the input. Properties checked:
 *   - a sub-path judged safe has no "." / ".." segment once percent-decoded
 *     (checked here by an independent decode) and no control byte;
 *   - a route covers itself, and never covers what it is not a prefix of;
 *   - a model or Vertex location read from a path fits its buffer,
 *     NUL-terminated, with no NUL inside. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "providers/ptroute.h"

static int hx(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The independent check: decode once, split on '/' and '\\'. */
static int safe_ref(const uint8_t *p, size_t n)
{
    uint8_t *d = malloc(n + 1);
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        if (p[i] == '%' && i + 2 < n && hx(p[i + 1]) >= 0 && hx(p[i + 2]) >= 0) {
            d[m++] = (uint8_t)(hx(p[i + 1]) << 4 | hx(p[i + 2]));
            i += 3;
        } else {
            d[m++] = p[i++];
        }
    }
    int ok = 1;
    size_t s = 0;
    for (size_t i = 0; i <= m; i++) {
        if (i == m || d[i] == '/' || d[i] == '\\') {
            size_t l = i - s;
            if ((l == 1 && d[s] == '.') || (l == 2 && d[s] == '.' && d[s + 1] == '.'))
                ok = 0;
            s = i + 1;
        } else if (d[i] < 0x20 || d[i] == 0x7f || d[i] == '#') {
            ok = 0;
        }
    }
    free(d);
    return ok;
}

static void must_str(const char *s, size_t n, size_t cap)
{
    if (n >= cap || s[n] != 0 || strlen(s) != n)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 14)
        return 0;
    const uint8_t *z = memchr(data, 0, size);
    size_t pn = z ? (size_t)(z - data) : size;
    char *path = malloc(pn + 1), *allowed = NULL;
    memcpy(path, data, pn);
    path[pn] = 0;
    size_t an = z ? size - pn - 1 : 0;
    allowed = malloc(an + 1);
    if (an)
        memcpy(allowed, z + 1, an);
    allowed[an] = 0;

    if (sy_pt_subpath_safe(path, pn) != safe_ref(data, pn))
        abort();
    if (pn && !sy_pt_route_covers(path, pn, path, pn))
        abort();
    if (sy_pt_route_covers(allowed, an, path, pn) && (an > pn || memcmp(allowed, path, an) != 0))
        abort();
    size_t sub;
    const struct sy_ptprov *pv = sy_pt_find(path, pn, &sub);
    if (pv && (sub > pn || (sub < pn && path[sub] != '/')))
        abort();
    char m[64], pr[32], loc[16];
    for (int k = SY_PT_ANTHROPIC; k <= SY_PT_LANGFUSE; k++) {
        size_t ml = sy_pt_path_model((enum sy_pt_kind)k, path, pn, m, sizeof m);
        if (ml)
            must_str(m, ml, sizeof m);
    }
    if (sy_pt_vertex_where(path, pn, pr, sizeof pr, loc, sizeof loc)) {
        must_str(pr, strlen(pr), sizeof pr);
        must_str(loc, strlen(loc), sizeof loc);
    }
    (void)sy_pt_path_streams(path, pn);
    free(path);
    free(allowed);
    return 0;
}
