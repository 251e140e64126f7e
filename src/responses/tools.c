/* tools.c - the Responses tools chat has no word for, seen from the answer
 * side (resp_impl.h): request.c flattens them into chat function tools, and
 * answer.c / stream.c map a chat tool call back to what the client declared.
 * After LiteLLM's responses bridge (litellm_completion_transformation/
 * custom_tools.py) and Codex's tool specs.
 *
 *   Responses tool (request)                       chat function name     call item (answer)
 *   {type:function, name:N}                        N                      function_call {name:N}
 *   {type:custom, name:N, format}                  N                      custom_tool_call {name:N, input}
 *   {type:namespace, name:S, tools:[             S__N                   function_call {name:N, namespace:S}
 *      {type:function, name:N} | {type:custom ..}]}                        (custom_tool_call for a custom one)
 *   namespace "functions" (Codex's default one)    N                      as a top-level tool
 *
 * A chat name that matches none of them is passed as it came (a function_call
 * named so). The first match in the request's order wins. A chat name over 64
 * characters (OpenAI's and Anthropic's limit; Codex's MCP namespaces get
 * there) is cut as LiteLLM cuts tool names: its first 55 characters, "_" and
 * 8 hex digits of its sha256, and mapped back by the same rule.
 *
 * Custom tools take one required string parameter, "input": the model answers
 * {"input":"<raw text>"}, and the client gets the raw text. Whole answers
 * unwrap the arguments once (sy__resp_custom_input); streams unwrap them as
 * they arrive (sy__resp_cin_feed), so each custom_tool_call_input.delta holds
 * the decoded text of the piece, never half an escape.
 */
#include <string.h>

#include <openssl/evp.h>

#include "core/errors.h"
#include "responses/resp_impl.h"

int sy__resp_default_ns(const char *ns, size_t n)
{
    return n == 0 || (n == 9 && !memcmp(ns, "functions", 9));
}

/* Code points of s[0..n), and the byte length of its first k ones. */
static size_t cp_count(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

static size_t cp_prefix(const char *s, size_t n, size_t k)
{
    size_t i = 0;
    for (size_t c = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80 && c++ == k)
            break;
    return i;
}

const char *sy__resp_chat_name(const char *ns, size_t nsl, const char *name, size_t nl, struct sy_arena *a,
                               size_t *outn)
{
    int q = ns && !sy__resp_default_ns(ns, nsl);
    size_t n = q ? nsl + 2 + nl : nl;
    char *s = sy_arena_alloc(a, n + 1);
    if (q) {
        memcpy(s, ns, nsl);
        memcpy(s + nsl, "__", 2);
        memcpy(s + nsl + 2, name, nl);
    } else {
        memcpy(s, name, nl);
    }
    s[n] = 0;
    if (cp_count(s, n) > SY__RESP_MAX_TOOL_NAME) { /* LiteLLM's truncate_tool_name */
        static const char hex[] = "0123456789abcdef";
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned mdlen = 0;
        EVP_Digest(s, n, md, &mdlen, EVP_sha256(), NULL);
        size_t p = cp_prefix(s, n, 55);
        s[p++] = '_';
        for (int i = 0; i < 4; i++) {
            s[p++] = hex[md[i] >> 4];
            s[p++] = hex[md[i] & 15];
        }
        s[p] = 0;
        n = p;
    }
    *outn = n;
    return s;
}

/* Tool x of d named fname[0..fl) (with namespace ns[0..nsl), NULL: top level)? */
static int tool_match(const struct sy_jdoc *d, uint32_t x, const char *ns, size_t nsl, const char *fname, size_t fl,
                      struct sy_arena *a, struct sy__resp_tool *o)
{
    uint32_t type = sy_jdom_member(d, x, "type");
    int custom = sy_jdom_str_eq(d, type, "custom");
    if (!custom && !sy_jdom_str_eq(d, type, "function"))
        return 0;
    size_t nl;
    const char *nm = sy_jdom_kind(d, sy_jdom_member(d, x, "name")) == 's'
                         ? sy_jdom_view(d, sy_jdom_member(d, x, "name"), a, &nl)
                         : NULL;
    if (!nm)
        return 0;
    size_t cl;
    const char *cn = sy__resp_chat_name(ns, nsl, nm, nl, a, &cl);
    if (cl != fl || memcmp(cn, fname, fl))
        return 0;
    o->custom = custom;
    o->ns = ns && !sy__resp_default_ns(ns, nsl) ? ns : NULL;
    o->nsl = o->ns ? nsl : 0;
    o->name = nm;
    o->nl = nl;
    return 1;
}

int sy__resp_tool_find(const struct sy_jdoc *req, const char *fname, size_t fl, struct sy_arena *a,
                       struct sy__resp_tool *o)
{
    memset(o, 0, sizeof *o);
    o->name = fname;
    o->nl = fl;
    if (!req || !req->count || req->n[0].type != 'o')
        return 0;
    uint32_t tl = sy_jdom_top(req, "tools");
    if (sy_jdom_kind(req, tl) != 'a')
        return 0;
    for (uint32_t x = sy_jdom_first(req, tl); x; x = sy_jdom_next(req, x)) {
        if (sy_jdom_kind(req, x) != 'o')
            continue;
        if (!sy_jdom_str_eq(req, sy_jdom_member(req, x, "type"), "namespace")) {
            if (tool_match(req, x, NULL, 0, fname, fl, a, o))
                return 1;
            continue;
        }
        uint32_t nn = sy_jdom_member(req, x, "name"), inner = sy_jdom_member(req, x, "tools");
        if (sy_jdom_kind(req, nn) != 's' || sy_jdom_kind(req, inner) != 'a')
            continue;
        size_t nsl;
        const char *ns = sy_jdom_view(req, nn, a, &nsl);
        for (uint32_t y = sy_jdom_first(req, inner); y; y = sy_jdom_next(req, y))
            if (sy_jdom_kind(req, y) == 'o' && tool_match(req, y, ns, nsl, fname, fl, a, o))
                return 1;
    }
    memset(o, 0, sizeof *o);
    o->name = fname;
    o->nl = fl;
    return 0;
}

const char *sy__resp_custom_input(const char *args, size_t n, struct sy_arena *a, size_t *outn)
{
    struct sy_jdoc d;
    *outn = n;
    if (!n || sy_jdom_parse(&d, args, n, a, 0) || d.n[0].type != 'o')
        return args;
    uint32_t in = sy_jdom_get(&d, 0, "input");
    if (sy_jdom_kind(&d, in) != 's')
        return args;
    return sy_jdom_str(&d, in, a, outn);
}

/* ---- streamed custom input --------------------------------------------------- */

static size_t skip_ws(const char *p, size_t i, size_t n)
{
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
        i++;
    return i;
}

static int hex4(const char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (d > 15)
            return 0;
        *v = *v << 4 | d;
    }
    return 1;
}

static int put_utf8(struct sy_buf *b, unsigned cp)
{
    char u[4];
    size_t k;
    if (cp < 0x80) {
        u[0] = (char)cp;
        k = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3F));
        k = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12);
        u[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        k = 3;
    } else {
        u[0] = (char)(0xF0 | cp >> 18);
        u[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        u[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        k = 4;
    }
    return sy_buf_append(b, u, k);
}

/* The opening `{ "input" : "` at the start of p[0..n): 1 matched (*at after
 * the quote), 0 not yet known (more text needed), -1 another shape. */
static int open_match(const char *p, size_t n, size_t *at)
{
    static const char key[] = "\"input\"";
    size_t i = skip_ws(p, 0, n);
    if (i == n)
        return 0;
    if (p[i++] != '{')
        return -1;
    i = skip_ws(p, i, n);
    for (size_t k = 0; k < sizeof key - 1; k++, i++) {
        if (i == n)
            return 0;
        if (p[i] != key[k])
            return -1;
    }
    i = skip_ws(p, i, n);
    if (i == n)
        return 0;
    if (p[i++] != ':')
        return -1;
    i = skip_ws(p, i, n);
    if (i == n)
        return 0;
    if (p[i++] != '"')
        return -1;
    *at = i;
    return 1;
}

int sy__resp_cin_feed(struct sy_resp_cin *c, const char *p, size_t n, struct sy_buf *out)
{
    if (c->state == 0) {
        int m = open_match(p, n, &c->at);
        if (m <= 0) {
            if (m < 0)
                c->state = 3;
            return 0;
        }
        c->state = 1;
    }
    size_t i = c->at;
    while (c->state == 1 && i < n) {
        size_t j = i;
        while (j < n && p[j] != '"' && p[j] != '\\')
            j++;
        if (j > i && sy_buf_append(out, p + i, j - i))
            return SY_ENOSPC;
        i = j;
        if (i == n)
            break;
        if (p[i] == '"') {
            c->state = 2;
            i++;
            break;
        }
        /* an escape: decoded only once it is whole */
        if (i + 1 >= n)
            break;
        char e = p[i + 1];
        const char *lit = e == 'n'   ? "\n"
                          : e == 't' ? "\t"
                          : e == 'r' ? "\r"
                          : e == 'b' ? "\b"
                          : e == 'f' ? "\f"
                                     : NULL;
        int rc = 0;
        if (lit) {
            rc = sy_buf_append(out, lit, 1);
            i += 2;
        } else if (e == '"' || e == '\\' || e == '/') {
            rc = sy_buf_append(out, &e, 1);
            i += 2;
        } else if (e == 'u') {
            unsigned cp, lo;
            if (i + 6 > n)
                break;
            if (!hex4(p + i + 2, &cp)) {
                c->state = 3;
                break;
            }
            if (cp >= 0xD800 && cp < 0xDC00) { /* a high surrogate: its pair decides */
                if (i + 12 > n)
                    break;
                if (p[i + 6] == '\\' && p[i + 7] == 'u' && hex4(p + i + 8, &lo) && lo >= 0xDC00 && lo < 0xE000) {
                    rc = put_utf8(out, 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00));
                    i += 12;
                } else {
                    rc = put_utf8(out, 0xFFFD);
                    i += 6;
                }
            } else {
                rc = put_utf8(out, cp >= 0xDC00 && cp < 0xE000 ? 0xFFFD : cp);
                i += 6;
            }
        } else {
            c->state = 3;
            break;
        }
        if (rc)
            return SY_ENOSPC;
    }
    c->at = i;
    return 0;
}
