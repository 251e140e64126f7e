/* jdom.h - a flat, read-only JSON DOM and a JSON writer, for the translating adapters.
 *
 * Translating a request (OpenAI -> Anthropic, Gemini, Bedrock ...) or a
 * response back needs random access to a parsed document. json-c builds a
 * malloc'd hash table per object (5.8 us for a 1 KB chat request here); this
 * DOM parses into one array of nodes taken from the request arena, with no
 * per-node allocation and no string decoding until a string is asked for
 * (about 1 us for the same request). Strings and numbers stay as spans of the
 * source text, so a value that passes through untouched (a tool's JSON
 * schema, a metadata object) is copied as raw bytes, never re-serialized.
 *
 * Node layout (document order, node 0 is the root):
 *
 *   index  type  off,len           kids  next
 *   0      'o'   whole object      2     0       {"a":1,"b":[true]}
 *   1      's'   "a" (key)         0     2       an object member is a key node
 *   2      'n'   1                 0     3         followed by its value node;
 *   3      's'   "b"               0     4         `next` of the value = next key
 *   4      'a'   [true]            1     0
 *   5      't'   true              0     0
 *
 *   `next` is the index of the following sibling (0: none; the root is never a
 *   sibling). For object members, sibling links go key -> value -> next key.
 *   Container spans cover the brackets; string spans include the quotes.
 *
 * Parsing is strict RFC 8259 (as jscan.c): no trailing commas, no comments,
 * no leading zeros, control characters refused in strings, UTF-8 checked;
 * nesting is capped at SY_JDOM_MAX_DEPTH. Duplicate keys are kept;
 * sy_jdom_get() returns the last one (what Python's json and json-c keep).
 */
#ifndef SY_JDOM_H
#define SY_JDOM_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/buf.h"

#define SY_JDOM_MAX_DEPTH 128

struct sy_jnode {
    uint32_t off, len; /* span in the source */
    uint32_t next;     /* next sibling, 0 none */
    uint32_t kids;     /* direct children (objects: members, i.e. key+value pairs count once) */
    char type;         /* 'o' object 'a' array 's' string 'n' number 't' true 'f' false 'z' null */
    char esc;          /* strings: 1 when the raw text contains a backslash */
};

struct sy_jdoc {
    const char *src;
    size_t src_len;
    struct sy_jnode *n; /* nodes (arena) */
    uint32_t count;
    const char *err; /* static reason when parsing failed */
    size_t err_off;
    /* the root object's keys hashed (adapters look up dozens of parameter names,
     * most of them absent): slots of key node indices, 0 empty; NULL when the
     * root is not an object, is small, or has an escaped key */
    uint32_t *root_idx;
    uint32_t root_mask;
};

/* Parse p[0..len) into d with nodes from arena a. p must outlive d. Returns
 * 0, or SY_EJSON (d->err, d->err_off set) / SY_ENOSPC (more than max_nodes
 * nodes; 0 = no limit beyond the input size). */
int sy_jdom_parse(struct sy_jdoc *d, const char *p, size_t len, struct sy_arena *a, uint32_t max_nodes);

/* Value of member `key` (decoded key compared to key[0..strlen)) of object
 * node obj, the last when repeated; 0 when obj is not an object or has none. */
uint32_t sy_jdom_get(const struct sy_jdoc *d, uint32_t obj, const char *key);

/* Member key of object obj; 0 when obj is 0 (absent) or has no such member. */
static inline uint32_t sy_jdom_at(const struct sy_jdoc *d, uint32_t obj, const char *key)
{
    return obj ? sy_jdom_get(d, obj, key) : 0;
}

/* First child of a container (arrays: first element; objects: first KEY node),
 * 0 when empty; and the following sibling. Iteration:
 *   for (uint32_t e = sy_jdom_first(d, arr); e; e = sy_jdom_next(d, e)) ...
 *   for (uint32_t k = sy_jdom_first(d, obj); k; k = sy_jdom_next_key(d, k))
 *       ... key node k, value node sy_jdom_val(k) ... */
static inline uint32_t sy_jdom_first(const struct sy_jdoc *d, uint32_t i)
{
    return d->n[i].kids ? i + 1 : 0;
}
static inline uint32_t sy_jdom_next(const struct sy_jdoc *d, uint32_t i)
{
    return d->n[i].next;
}
/* The value node of key node k (always k + 1). */
static inline uint32_t sy_jdom_val(uint32_t k)
{
    return k + 1;
}
/* Next key of an object after key node k (skips k's value), 0 at the end. */
static inline uint32_t sy_jdom_next_key(const struct sy_jdoc *d, uint32_t k)
{
    return d->n[k + 1].next;
}
static inline char sy_jdom_type(const struct sy_jdoc *d, uint32_t i)
{
    return i < d->count ? d->n[i].type : 0;
}
/* Node 0 is the root, but member lookups also return 0 for "absent": these
 * treat 0 as absent, for walking members of members safely. */
static inline char sy_jdom_kind(const struct sy_jdoc *d, uint32_t i)
{
    return i ? sy_jdom_type(d, i) : 0;
}
static inline uint32_t sy_jdom_at(const struct sy_jdoc *d, uint32_t obj, const char *key);
/* The same, a null value counting as absent (LiteLLM drops None values). */
static inline uint32_t sy_jdom_member(const struct sy_jdoc *d, uint32_t obj, const char *key)
{
    uint32_t v = sy_jdom_at(d, obj, key);
    return sy_jdom_kind(d, v) == 'z' ? 0 : v;
}
/* Member key of the root object (node 0), null counting as absent. */
static inline uint32_t sy_jdom_top(const struct sy_jdoc *d, const char *key)
{
    uint32_t v = sy_jdom_get(d, 0, key);
    return sy_jdom_kind(d, v) == 'z' ? 0 : v;
}
/* String node i as bytes: a span of the source when it has no escapes (not
 * NUL-terminated), else decoded into a. NULL (and *n 0) when not a string. */
const char *sy_jdom_view(const struct sy_jdoc *d, uint32_t i, struct sy_arena *a, size_t *n);

/* Raw text of node i (strings with quotes, containers with brackets). */
static inline const char *sy_jdom_raw(const struct sy_jdoc *d, uint32_t i, size_t *len)
{
    *len = d->n[i].len;
    return d->src + d->n[i].off;
}

/* Decoded string value of node i (NUL-terminated, in arena a; a \u0000 stays a
 * 0 byte inside *len bytes). NULL when i is 0 or not a string. Unescaped
 * strings are copied once; len may be NULL. */
const char *sy_jdom_str(const struct sy_jdoc *d, uint32_t i, struct sy_arena *a, size_t *len);
/* 1 when node i is a string equal (decoded) to lit. */
int sy_jdom_str_eq(const struct sy_jdoc *d, uint32_t i, const char *lit);
/* Length of the valid JSON string literal at p[0..n) (quotes included), 0 when
 * p does not start with one (bad escape, control character, invalid UTF-8,
 * unterminated). *esc (may be NULL): it contains a backslash. For fast paths
 * that copy a provider's string into OpenAI output without a DOM. */
size_t sy_jdom_string_len(const char *p, size_t n, int *esc);
/* Numbers: 1 and *out set when node i is a number (ints up to 2^63 exact). */
int sy_jdom_num(const struct sy_jdoc *d, uint32_t i, double *out);
int sy_jdom_i64(const struct sy_jdoc *d, uint32_t i, int64_t *out); /* integral numbers only */
/* true/false: 1 and *out set. */
int sy_jdom_bool(const struct sy_jdoc *d, uint32_t i, int *out);

/* ---- writer -------------------------------------------------------------
 *
 * Appends JSON to a sy_buf, inserting commas itself. Keys and string values
 * are escaped from plain bytes (invalid UTF-8 is replaced by U+FFFD so the
 * output is always valid JSON); raw values are copied as they are (they must
 * be valid JSON: a DOM node's raw text, a literal).
 *
 *   struct sy_jw w; sy_jw_init(&w, &buf);
 *   sy_jw_obj(&w); sy_jw_key(&w, "model"); sy_jw_str(&w, m, ml);
 *   sy_jw_key(&w, "n"); sy_jw_int(&w, 1); sy_jw_end(&w);   ->  {"model":"..","n":1}
 *
 * Errors (buffer cap reached) are sticky: check w.err (0 or SY_ENOSPC) once
 * at the end. Depth up to SY_JDOM_MAX_DEPTH. */
struct sy_jw {
    struct sy_buf *b;
    int err;
    int depth;
    unsigned char first[SY_JDOM_MAX_DEPTH + 1]; /* no member written yet at this depth */
    unsigned char after_key;
};

void sy_jw_init(struct sy_jw *w, struct sy_buf *b);
void sy_jw_obj(struct sy_jw *w);                /* { */
void sy_jw_arr(struct sy_jw *w);                /* [ */
void sy_jw_end(struct sy_jw *w);                /* } or ] (whichever is open) */
void sy_jw_key(struct sy_jw *w, const char *k); /* "k": (k is a C string, escaped) */
void sy_jw_keyn(struct sy_jw *w, const char *k, size_t n);
void sy_jw_str(struct sy_jw *w, const char *s, size_t n); /* "s" escaped */
void sy_jw_cstr(struct sy_jw *w, const char *s);          /* NULL writes null */
void sy_jw_int(struct sy_jw *w, int64_t v);
void sy_jw_double(struct sy_jw *w, double v); /* Python's repr (core/pyrepr.h): "1000.0"; null if not finite */
void sy_jw_bool(struct sy_jw *w, int v);
void sy_jw_null(struct sy_jw *w);
void sy_jw_raw(struct sy_jw *w, const char *json, size_t n); /* a complete JSON value */
/* Node i of d copied as raw JSON text (0 writes null). */
void sy_jw_node(struct sy_jw *w, const struct sy_jdoc *d, uint32_t i);
/* One JSON string made of the string nodes nodes[0..k) joined by sep (a JSON
 * string body, e.g. "\\n"): the raw insides are concatenated, nothing is
 * decoded; k 0 writes "". Scratch from a. */
void sy_jw_join(struct sy_jw *w, const struct sy_jdoc *d, const uint32_t *nodes, size_t k, const char *sep,
                struct sy_arena *a);
/* Node i as a JSON string value: a string node is copied raw; any other
 * node's raw JSON text is written as a string (OpenAI tool-call `arguments`
 * from an Anthropic/Gemini/Bedrock input object). */
void sy_jw_node_as_str(struct sy_jw *w, const struct sy_jdoc *d, uint32_t i);

#endif
