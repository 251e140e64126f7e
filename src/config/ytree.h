/* ytree.h - the YAML node tree the config loader works on (internal to src/config).
 *
 * sy__ytree_parse() turns one YAML document into nodes the way PyYAML's
 * safe_load sees it (YAML 1.1 resolution): plain scalars become null, bool,
 * int, float or str by PyYAML's implicit resolvers (`20_000` int, `yes`/`off`
 * bool, `~`/empty null, `0o17`-less octal `017`, sexagesimal `1:30`); quoted
 * and block scalars are strings; anchors/aliases share nodes; `<<:` merge keys
 * are flattened; a duplicate key keeps the first position and the last value
 * (PyYAML builds a dict) and is reported as a warning. Every node keeps its
 * 1-based line and file name for messages. All memory comes from the arena.
 *
 * Limits that keep hostile input cheap: nesting depth 200, alias expansion
 * weight 1,000,000 nodes (billion-laughs), anchors must be complete before
 * they are referenced (a recursive alias is an "undefined alias" error).
 */
#ifndef SY_CONFIG_YTREE_H
#define SY_CONFIG_YTREE_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"

enum sy_ykind { SY_Y_NULL, SY_Y_BOOL, SY_Y_INT, SY_Y_FLOAT, SY_Y_STR, SY_Y_MAP, SY_Y_SEQ };

struct sy_ynode;

struct sy_ypair {
    struct sy_ynode *key, *val;
    int own; /* set by the map itself, not by a merge key (for duplicate warnings) */
};

struct sy_ynode {
    enum sy_ykind kind;
    int line; /* 1-based */
    const char *file;
    const char *s; /* STR: the value; other scalars: the source text */
    size_t len;
    int64_t i;               /* INT (BOOL: 0/1) */
    double d;                /* FLOAT, and INT as a double */
    int big;                 /* INT that does not fit int64 (d and s still hold it) */
    struct sy_ypair *pairs;  /* MAP */
    struct sy_ynode **items; /* SEQ */
    size_t n, cap;
    uint64_t weight; /* nodes in the subtree with aliases expanded */
};

/* Callback for warnings found while building (duplicate keys). */
typedef void (*sy_ywarn_fn)(void *ud, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Parse one document. Returns 0 and *root (NULL for an empty stream or an
 * empty document), or SY_ECONFIG with "file:line: reason" in err. */
int sy__ytree_parse(struct sy_arena *a, const char *yaml, size_t len, const char *file, struct sy_ynode **root,
                    sy_ywarn_fn warn, void *ud, char *err, size_t errlen);

/* Map lookup of a string key; NULL when absent. */
struct sy_ynode *sy__ymap_get(const struct sy_ynode *map, const char *key);
struct sy_ypair *sy__ymap_pair(const struct sy_ynode *map, const char *key);
/* Append or replace (keeping position) a string-keyed pair. */
void sy__ymap_set(struct sy_arena *a, struct sy_ynode *map, struct sy_ynode *key, struct sy_ynode *val);
void sy__yseq_push(struct sy_arena *a, struct sy_ynode *seq, struct sy_ynode *item);
struct sy_ynode *sy__ynode_new(struct sy_arena *a, enum sy_ykind k, int line, const char *file);
struct sy_ynode *sy__ystr_new(struct sy_arena *a, const char *s, size_t len, int line, const char *file);
/* Name of a kind for messages: "a string", "a list", ... */
const char *sy__ykind_name(enum sy_ykind k);

/* Python renderings used for LiteLLM compatibility (see pyrepr.c).
 * str(): what Python's str(value) prints; json: json.dumps(value) with default
 * arguments. Results are appended to b (growable arena-free sy_buf). */
struct sy_buf;
int sy__py_str(struct sy_buf *b, const struct sy_ynode *n);
int sy__py_json(struct sy_buf *b, const struct sy_ynode *n);

#endif
