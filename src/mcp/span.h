/* span.h - internal to src/mcp/: the span scanner rpc.c is built on, shared
 * with perm.c (mcp_tool_permissions) and conf.c.
 *
 * JSON is never turned into a tree here: a value is "skipped" (validated
 * strictly, RFC 8259 as providers/jdom.c: grammar, escapes, control
 * characters, UTF-8) and known members are found by walking an object's keys.
 * Nesting is bounded by SY_MCP_MAX_DEPTH so hostile input cannot recurse the
 * stack.
 */
#ifndef SY_MCP_SPAN_H
#define SY_MCP_SPAN_H

#include <stddef.h>

#define SY_MCP_MAX_DEPTH 64

/* Index just past the JSON value starting at p[i] (leading whitespace
 * skipped), or 0 when it is not one valid value within p[0..n) or nests
 * deeper than SY_MCP_MAX_DEPTH. */
size_t sy__mcp_skip(const char *p, size_t n, size_t i);
/* Index of the first non-whitespace byte at or after i (n at the end). */
size_t sy__mcp_ws(const char *p, size_t n, size_t i);

/* Walking the members of the object p[0..n) (a valid JSON object):
 *   struct sy__mcp_it it; sy__mcp_it_init(&it, p, n);
 *   while (sy__mcp_it_next(&it) > 0) ... it.k, it.klen (raw key with quotes),
 *       it.kesc, it.v, it.vlen (raw value) ...
 * next: 1 a member, 0 the end, -1 malformed (or p not an object). */
struct sy__mcp_it {
    const char *p;
    size_t n, i;
    const char *k, *v;
    size_t klen, vlen;
    int kesc;
};
int sy__mcp_it_init(struct sy__mcp_it *it, const char *p, size_t n);
int sy__mcp_it_next(struct sy__mcp_it *it);

/* Decode the JSON string literal s[0..len) (quotes included, already valid)
 * into out (at most cap-1 bytes and a NUL). Its length, or -1 when it does
 * not fit or holds \u0000. */
long sy__mcp_unescape(const char *s, size_t len, char *out, size_t cap);
/* 1 when the JSON string literal s[0..len) decodes to lit[0..ln). */
int sy__mcp_str_eq(const char *s, size_t len, int esc, const char *lit, size_t ln);

#endif
