/* ptroute.c - provider pass-through routes: the prefix table, sub-path
 * safety, allowed_passthrough_routes matching and what a provider path names
 * (see ptroute.h). Every function reads bytes it is given and writes only
 * its output buffer.
 */
#include "providers/ptroute.h"

#include <string.h>

static const struct sy_ptprov provs[] = {
    {"/anthropic", SY_PT_ANTHROPIC, "anthropic"},
    {"/vertex_ai", SY_PT_VERTEX, "vertex_ai"},
    {"/vertex-ai", SY_PT_VERTEX, "vertex_ai"},
    {"/gemini", SY_PT_GEMINI, "gemini"},
    {"/bedrock", SY_PT_BEDROCK, "bedrock"},
    {"/openai", SY_PT_OPENAI, "openai"},
    {"/azure", SY_PT_AZURE, "azure"},
    {"/cohere", SY_PT_COHERE, "cohere"},
    {"/mistral", SY_PT_MISTRAL, "mistral"},
    {"/vllm", SY_PT_VLLM, "hosted_vllm"},
    {"/langfuse", SY_PT_LANGFUSE, NULL},
};

const struct sy_ptprov *sy_pt_find(const char *path, size_t n, size_t *sub)
{
    for (size_t i = 0; i < sizeof provs / sizeof provs[0]; i++) {
        size_t pl = strlen(provs[i].prefix);
        if (n >= pl && memcmp(path, provs[i].prefix, pl) == 0 && (n == pl || path[pl] == '/')) {
            *sub = pl;
            return &provs[i];
        }
    }
    return NULL;
}

const struct sy_ptprov *sy_pt_at(size_t i)
{
    return i < sizeof provs / sizeof provs[0] ? &provs[i] : NULL;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The byte at p[*i] percent-decoded (advancing *i past it). */
static unsigned char dec(const char *p, size_t n, size_t *i)
{
    if (p[*i] == '%' && *i + 2 < n && hexval(p[*i + 1]) >= 0 && hexval(p[*i + 2]) >= 0) {
        unsigned char c = (unsigned char)(hexval(p[*i + 1]) << 4 | hexval(p[*i + 2]));
        *i += 3;
        return c;
    }
    return (unsigned char)p[(*i)++];
}

int sy_pt_subpath_safe(const char *p, size_t n)
{
    size_t i = 0, seg = 0; /* bytes of the current decoded segment */
    int dots = 0;          /* ... all of them '.' */
    for (;;) {
        int end = i >= n;
        unsigned char c = end ? '/' : dec(p, n, &i);
        if (c == '/' || c == '\\') {
            if (seg && seg == (size_t)dots && dots <= 2)
                return 0; /* "." or ".." */
            seg = 0;
            dots = 0;
            if (end)
                return 1;
            continue;
        }
        if (c < 0x20 || c == 0x7f || c == '#')
            return 0;
        seg++;
        if (c == '.')
            dots++;
    }
}

int sy_pt_route_covers(const char *allowed, size_t an, const char *route, size_t rn)
{
    if (!an)
        return 0;
    if (an == rn && memcmp(allowed, route, an) == 0)
        return 1;
    return rn > an && memcmp(allowed, route, an) == 0 && route[an] == '/';
}

/* Decode s[0..n) into out[cap]; its length, 0 when it does not fit. */
static size_t decode_into(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0, i = 0;
    while (i < n) {
        unsigned char c = dec(s, n, &i);
        if (!c || o + 1 >= cap)
            return 0;
        out[o++] = (char)c;
    }
    if (cap)
        out[o] = 0;
    return o;
}

size_t sy_pt_path_model(enum sy_pt_kind kind, const char *sub, size_t n, char *out, size_t cap)
{
    const char *e = sub + n;
    if (kind == SY_PT_BEDROCK) {
        /* "/model/{id}/op" (the id percent-encoded: an ARN's '/' is %2F) */
        const char *m = NULL;
        for (const char *q = sub; q + 7 <= e; q++)
            if (memcmp(q, "/model/", 7) == 0) {
                m = q + 7;
                break;
            }
        if (!m)
            return 0;
        const char *s = memchr(m, '/', (size_t)(e - m));
        return decode_into(m, (size_t)((s ? s : e) - m), out, cap);
    }
    if (kind != SY_PT_VERTEX && kind != SY_PT_GEMINI)
        return 0;
    const char *m = NULL;
    for (const char *q = sub; q + 8 <= e; q++)
        if (memcmp(q, "/models/", 8) == 0)
            m = q + 8; /* the last one */
    if (!m)
        return 0;
    const char *s = m;
    while (s < e && *s != ':' && *s != '/')
        s++;
    return decode_into(m, (size_t)(s - m), out, cap);
}

/* The segment after "/<name>/" in sub, as a view; 0 when absent. */
static int segment_after(const char *sub, size_t n, const char *name, const char **v, size_t *vn)
{
    size_t nl = strlen(name);
    const char *e = sub + n;
    for (const char *q = sub; q + nl + 2 <= e; q++) {
        if (q[0] == '/' && memcmp(q + 1, name, nl) == 0 && q[nl + 1] == '/') {
            const char *s = q + nl + 2, *t = s;
            while (t < e && *t != '/')
                t++;
            *v = s;
            *vn = (size_t)(t - s);
            return t > s;
        }
    }
    return 0;
}

int sy_pt_vertex_where(const char *sub, size_t n, char *p, size_t pcap, char *l, size_t lcap)
{
    const char *a, *b;
    size_t an, bn;
    if (!segment_after(sub, n, "projects", &a, &an) || !segment_after(sub, n, "locations", &b, &bn))
        return 0;
    return decode_into(a, an, p, pcap) && decode_into(b, bn, l, lcap);
}

int sy_pt_path_streams(const char *sub, size_t n)
{
    static const char *const ops[] = {":streamRawPredict", ":streamGenerateContent", "/converse-stream",
                                      "/invoke-with-response-stream"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        size_t ol = strlen(ops[i]);
        if (n >= ol && memcmp(sub + n - ol, ops[i], ol) == 0)
            return 1;
    }
    return 0;
}
