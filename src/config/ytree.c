/* ytree.c - libyaml events -> node tree with PyYAML safe_load semantics; see ytree.h.
 *
 * The parser is a recursive descent over libyaml's event stream (depth capped).
 * Plain scalars are resolved with PyYAML's YAML 1.1 implicit resolvers, written
 * as POSIX EREs that mirror PyYAML's regular expressions one for one. Anchors are
 * registered when their node is complete; aliases share the anchored node.
 */
#include "config/ytree.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/errors.h"

#define MAX_DEPTH  200
#define MAX_WEIGHT 1000000u

/* ---- YAML 1.1 implicit resolvers (PyYAML resolver.py) ---- */

enum { R_BOOL, R_FLOAT, R_INT, R_NULL, R_TIMESTAMP, R_N };
static const char *const resolver_re[R_N] = {
    [R_BOOL] = "^(yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$",
    [R_FLOAT] = "^([-+]?[0-9][0-9_]*\\.[0-9_]*([eE][-+][0-9]+)?|\\.[0-9][0-9_]*([eE][-+][0-9]+)?"
                "|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\\.[0-9_]*|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN))$",
    [R_INT] = "^([-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
              "|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+)$",
    [R_NULL] = "^(~|null|Null|NULL|)$",
    [R_TIMESTAMP] = "^([0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"
                    "|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?([Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9]"
                    "(\\.[0-9]*)?([ \t]*(Z|[-+][0-9][0-9]?(:[0-9][0-9])?))?)$",
};
static regex_t resolver[R_N];
static pthread_once_t resolver_once = PTHREAD_ONCE_INIT;

static void resolver_init(void)
{
    for (int i = 0; i < R_N; i++)
        if (regcomp(&resolver[i], resolver_re[i], REG_EXTENDED | REG_NOSUB) != 0)
            abort(); /* a bug in the table above */
}

static int matches(int r, const char *s)
{
    return regexec(&resolver[r], s, 0, NULL, 0) == 0;
}

/* ---- node helpers ---- */

struct sy_ynode *sy__ynode_new(struct sy_arena *a, enum sy_ykind k, int line, const char *file)
{
    struct sy_ynode *n = sy_arena_alloc(a, sizeof *n);
    memset(n, 0, sizeof *n);
    n->kind = k;
    n->line = line;
    n->file = file;
    n->weight = 1;
    n->s = "";
    return n;
}

struct sy_ynode *sy__ystr_new(struct sy_arena *a, const char *s, size_t len, int line, const char *file)
{
    struct sy_ynode *n = sy__ynode_new(a, SY_Y_STR, line, file);
    n->s = sy_arena_strndup(a, s, len);
    n->len = len;
    return n;
}

const char *sy__ykind_name(enum sy_ykind k)
{
    static const char *const names[] = {"null", "a boolean", "an integer", "a number", "a string", "a map", "a list"};
    return names[k];
}

static void *grow(struct sy_arena *a, void *old, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return old;
    size_t nc = *cap ? *cap * 2 : 4;
    void *p = sy_arena_alloc(a, nc * elem);
    if (old)
        memcpy(p, old, n * elem);
    *cap = nc;
    return p;
}

static uint64_t wadd(uint64_t a, uint64_t b)
{
    uint64_t s = a + b;
    return (s < a || s > (uint64_t)MAX_WEIGHT * 4) ? (uint64_t)MAX_WEIGHT * 4 : s;
}

void sy__yseq_push(struct sy_arena *a, struct sy_ynode *seq, struct sy_ynode *item)
{
    seq->items = grow(a, seq->items, &seq->cap, seq->n, sizeof *seq->items);
    seq->items[seq->n++] = item;
    seq->weight = wadd(seq->weight, item->weight);
}

/* Python dict key equality for scalar keys: str by bytes, numbers (bool, int,
 * float) by value, None with None. */
static int key_eq(const struct sy_ynode *x, const struct sy_ynode *y)
{
    if (x->kind == SY_Y_STR || y->kind == SY_Y_STR)
        return x->kind == y->kind && x->len == y->len && memcmp(x->s, y->s, x->len) == 0;
    if (x->kind == SY_Y_NULL || y->kind == SY_Y_NULL)
        return x->kind == y->kind;
    if (x->kind == SY_Y_FLOAT || y->kind == SY_Y_FLOAT || x->big || y->big)
        return x->d == y->d;
    return x->i == y->i;
}

static struct sy_ypair *find_key(const struct sy_ynode *map, const struct sy_ynode *key)
{
    for (size_t i = 0; i < map->n; i++)
        if (key_eq(map->pairs[i].key, key))
            return &map->pairs[i];
    return NULL;
}

/* Insert with dict semantics; returns the previous pair if the key existed. */
static struct sy_ypair *map_put(struct sy_arena *a, struct sy_ynode *map, struct sy_ynode *key, struct sy_ynode *val,
                                int own, int *was_own)
{
    struct sy_ypair *p = find_key(map, key);
    if (p) {
        *was_own = p->own;
        map->weight = wadd(map->weight, val->weight); /* an upper bound is enough */
        p->val = val;
        p->own |= own;
        return p;
    }
    map->pairs = grow(a, map->pairs, &map->cap, map->n, sizeof *map->pairs);
    map->pairs[map->n++] = (struct sy_ypair){key, val, own};
    map->weight = wadd(wadd(map->weight, key->weight), val->weight);
    *was_own = 0;
    return NULL;
}

void sy__ymap_set(struct sy_arena *a, struct sy_ynode *map, struct sy_ynode *key, struct sy_ynode *val)
{
    int was;
    map_put(a, map, key, val, 1, &was);
}

struct sy_ypair *sy__ymap_pair(const struct sy_ynode *map, const char *key)
{
    if (!map || map->kind != SY_Y_MAP)
        return NULL;
    size_t kl = strlen(key);
    for (size_t i = 0; i < map->n; i++) {
        const struct sy_ynode *k = map->pairs[i].key;
        if (k->kind == SY_Y_STR && k->len == kl && memcmp(k->s, key, kl) == 0)
            return &map->pairs[i];
    }
    return NULL;
}

struct sy_ynode *sy__ymap_get(const struct sy_ynode *map, const char *key)
{
    struct sy_ypair *p = sy__ymap_pair(map, key);
    return p ? p->val : NULL;
}

/* ---- parser ---- */

struct anchor {
    struct anchor *prev;
    const char *name;
    struct sy_ynode *node;
};

struct yb {
    yaml_parser_t p;
    struct sy_arena *a;
    const char *file;
    struct anchor *anchors;
    sy_ywarn_fn warn;
    void *ud;
    char *err;
    size_t errlen;
    int failed;
};

__attribute__((format(printf, 3, 4))) static int fail(struct yb *b, int line, const char *fmt, ...)
{
    if (!b->failed) {
        int n = snprintf(b->err, b->errlen, "%s:%d: ", b->file, line);
        if (n < 0 || (size_t)n >= b->errlen)
            n = 0;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(b->err + n, b->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    b->failed = 1;
    return SY_ECONFIG;
}

static int next(struct yb *b, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&b->p, ev)) {
        int line = (int)(b->p.problem_mark.line + 1);
        if (b->p.context)
            return fail(b, line, "YAML syntax error: %s %s", b->p.context, b->p.problem ? b->p.problem : "");
        return fail(b, line, "YAML syntax error: %s", b->p.problem ? b->p.problem : "unknown");
    }
    return 0;
}

static int remember(struct yb *b, const yaml_char_t *anchor, struct sy_ynode *n)
{
    if (!anchor)
        return 0;
    struct anchor *an = sy_arena_alloc(b->a, sizeof *an);
    an->name = sy_arena_strndup(b->a, (const char *)anchor, strlen((const char *)anchor));
    an->node = n;
    an->prev = b->anchors;
    b->anchors = an;
    return 0;
}

static int digits_value(const char *s, int base, int64_t *out, double *d)
{
    /* s has no sign and no underscores */
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, base);
    if (*s == 0 || *end)
        return -1;
    *d = (double)v;
    if (errno == ERANGE || v > (unsigned long long)INT64_MAX) {
        /* too big for int64: keep an approximation */
        double acc = 0;
        for (const char *q = s; *q; q++) {
            int dv = *q <= '9' ? *q - '0' : (*q | 32) - 'a' + 10;
            acc = acc * base + dv;
        }
        *d = acc;
        return 1;
    }
    *out = (int64_t)v;
    return 0;
}

/* PyYAML construct_yaml_int. Returns 0, or -1 when Python would raise. */
static int make_int(struct sy_ynode *n, const char *text)
{
    size_t L = strlen(text);
    char *v = malloc(L + 1), *w = v;
    if (!v)
        return -1;
    for (const char *q = text; *q; q++)
        if (*q != '_')
            *w++ = *q;
    *w = 0;
    int neg = 0;
    char *s = v;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    int rc = 0, big = 0;
    int64_t iv = 0;
    double dv = 0;
    if (strcmp(s, "0") == 0) {
        iv = 0;
    } else if (strncmp(s, "0b", 2) == 0) {
        big = digits_value(s + 2, 2, &iv, &dv);
    } else if (strncmp(s, "0x", 2) == 0) {
        big = digits_value(s + 2, 16, &iv, &dv);
    } else if (s[0] == '0') {
        big = digits_value(s + 1, 8, &iv, &dv);
    } else if (strchr(s, ':')) {
        /* sexagesimal: base 60 digits, most significant first */
        double acc = 0;
        int64_t iacc = 0;
        int ovf = 0;
        for (char *tok = s; tok;) {
            char *colon = strchr(tok, ':');
            if (colon)
                *colon = 0;
            long part = strtol(tok, NULL, 10);
            acc = acc * 60 + (double)part;
            if (iacc > (INT64_MAX - part) / 60)
                ovf = 1;
            else
                iacc = iacc * 60 + part;
            tok = colon ? colon + 1 : NULL;
        }
        iv = iacc;
        dv = acc;
        big = ovf;
    } else {
        big = digits_value(s, 10, &iv, &dv);
    }
    if (big < 0)
        rc = -1;
    if (!big)
        dv = (double)iv;
    n->kind = SY_Y_INT;
    n->big = big > 0;
    n->i = neg ? -iv : iv;
    n->d = neg ? -dv : dv;
    free(v);
    return rc;
}

/* PyYAML construct_yaml_float. */
static int make_float(struct sy_ynode *n, const char *text)
{
    size_t L = strlen(text);
    char *v = malloc(L + 1), *w = v;
    if (!v)
        return -1;
    for (const char *q = text; *q; q++)
        if (*q != '_')
            *w++ = (char)(*q >= 'A' && *q <= 'Z' ? *q + 32 : *q);
    *w = 0;
    char *s = v;
    double sign = 1;
    if (*s == '-' || *s == '+')
        sign = *s++ == '-' ? -1 : 1;
    double d;
    int rc = 0;
    if (strcmp(s, ".inf") == 0) {
        d = INFINITY;
    } else if (strcmp(s, ".nan") == 0) {
        d = NAN;
    } else if (strchr(s, ':')) {
        double acc = 0;
        for (char *tok = s; tok;) {
            char *colon = strchr(tok, ':');
            if (colon)
                *colon = 0;
            acc = acc * 60 + strtod(tok, NULL);
            tok = colon ? colon + 1 : NULL;
        }
        d = acc;
    } else {
        char *end;
        d = strtod(s, &end);
        if (end == s || *end)
            rc = -1;
    }
    n->kind = SY_Y_FLOAT;
    n->d = sign * d;
    free(v);
    return rc;
}

static int make_bool(struct sy_ynode *n, const char *s)
{
    n->kind = SY_Y_BOOL;
    n->i = (s[0] == 'y' || s[0] == 'Y' || s[0] == 't' || s[0] == 'T' ||
            ((s[0] == 'o' || s[0] == 'O') && (s[1] == 'n' || s[1] == 'N')));
    n->d = (double)n->i;
    return 0;
}

#define TAG_PREFIX "tag:yaml.org,2002:"

static struct sy_ynode *scalar(struct yb *b, yaml_event_t *ev, int line)
{
    const char *val = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    struct sy_ynode *n = sy__ystr_new(b->a, val, len, line, b->file);
    int plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    const char *kind = NULL; /* resolved tag suffix */
    if (tag && strcmp(tag, "!") != 0) {
        if (strncmp(tag, TAG_PREFIX, sizeof TAG_PREFIX - 1) != 0) {
            fail(b, line, "could not determine a constructor for the tag '%s'", tag);
            return NULL;
        }
        kind = tag + sizeof TAG_PREFIX - 1;
    } else if (tag || !plain) {
        kind = "str";
    } else if (memchr(val, 0, len)) {
        kind = "str";
    } else if (strcmp(val, "<<") == 0) {
        kind = "merge";
    } else if (strcmp(val, "=") == 0) {
        kind = "value";
    } else if (matches(R_BOOL, val)) {
        kind = "bool";
    } else if (matches(R_FLOAT, val)) {
        kind = "float";
    } else if (matches(R_INT, val)) {
        kind = "int";
    } else if (matches(R_NULL, val)) {
        kind = "null";
    } else if (matches(R_TIMESTAMP, val)) {
        kind = "timestamp";
    } else {
        kind = "str";
    }
    int rc = 0;
    if (strcmp(kind, "str") == 0 || strcmp(kind, "timestamp") == 0) {
        /* timestamps stay text: str(date) prints the same digits */
    } else if (strcmp(kind, "merge") == 0) {
        n->kind = SY_Y_STR;
        n->big = -1; /* marks the merge key */
    } else if (strcmp(kind, "bool") == 0) {
        if (matches(R_BOOL, val))
            rc = make_bool(n, val);
        else
            rc = -1;
    } else if (strcmp(kind, "int") == 0) {
        rc = matches(R_INT, val) ? make_int(n, val) : -1;
    } else if (strcmp(kind, "float") == 0) {
        rc = (matches(R_FLOAT, val) || matches(R_INT, val)) ? make_float(n, val) : -1;
    } else if (strcmp(kind, "null") == 0) {
        n->kind = SY_Y_NULL;
    } else {
        fail(b, line, "could not determine a constructor for the tag '%s%s'", TAG_PREFIX, kind);
        return NULL;
    }
    if (rc < 0) {
        fail(b, line, "invalid %s value '%.40s'", kind, val);
        return NULL;
    }
    return n;
}

static struct sy_ynode *node(struct yb *b, yaml_event_t *ev, int depth);

static int is_merge(const struct sy_ynode *n)
{
    return n->kind == SY_Y_STR && n->big == -1;
}

/* The value of a merge key: a map, or a list of maps (PyYAML flatten_mapping). */
static int collect_merge(struct yb *b, struct sy_ynode *v, struct sy_ynode ***srcs, size_t *n, size_t *cap, int line)
{
    if (v->kind == SY_Y_MAP) {
        *srcs = grow(b->a, *srcs, cap, *n, sizeof **srcs);
        (*srcs)[(*n)++] = v;
        return 0;
    }
    if (v->kind != SY_Y_SEQ)
        return fail(b, line, "expected a mapping or list of mappings for merging, but found %s",
                    sy__ykind_name(v->kind));
    /* PyYAML reverses the list: later maps first, so earlier maps win */
    for (size_t i = v->n; i-- > 0;) {
        if (v->items[i]->kind != SY_Y_MAP)
            return fail(b, v->items[i]->line, "expected a mapping for merging, but found %s",
                        sy__ykind_name(v->items[i]->kind));
        *srcs = grow(b->a, *srcs, cap, *n, sizeof **srcs);
        (*srcs)[(*n)++] = v->items[i];
    }
    return 0;
}

static struct sy_ynode *mapping(struct yb *b, yaml_event_t *start, int line, int depth)
{
    struct sy_ynode *m = sy__ynode_new(b->a, SY_Y_MAP, line, b->file);
    struct sy_ynode **merges = NULL;
    size_t n_merges = 0, cap_merges = 0;
    struct sy_ypair *own = NULL;
    size_t n_own = 0, cap_own = 0;
    for (;;) {
        yaml_event_t ev;
        if (next(b, &ev))
            return NULL;
        if (ev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        int kline = (int)ev.start_mark.line + 1;
        struct sy_ynode *k = node(b, &ev, depth + 1);
        yaml_event_delete(&ev);
        if (!k)
            return NULL;
        if (next(b, &ev))
            return NULL;
        struct sy_ynode *v = node(b, &ev, depth + 1);
        yaml_event_delete(&ev);
        if (!v)
            return NULL;
        if (is_merge(v)) {
            fail(b, v->line, "could not determine a constructor for the tag '" TAG_PREFIX "merge'");
            return NULL;
        }
        if (is_merge(k)) {
            if (collect_merge(b, v, &merges, &n_merges, &cap_merges, kline))
                return NULL;
            continue;
        }
        if (k->kind == SY_Y_MAP || k->kind == SY_Y_SEQ) {
            fail(b, kline, "found unhashable key (%s)", sy__ykind_name(k->kind));
            return NULL;
        }
        own = grow(b->a, own, &cap_own, n_own, sizeof *own);
        own[n_own++] = (struct sy_ypair){k, v, 1};
    }
    int was;
    for (size_t i = 0; i < n_merges; i++)
        for (size_t j = 0; j < merges[i]->n; j++)
            map_put(b->a, m, merges[i]->pairs[j].key, merges[i]->pairs[j].val, 0, &was);
    for (size_t i = 0; i < n_own; i++) {
        int first_line = 0;
        struct sy_ypair *prev = find_key(m, own[i].key);
        if (prev)
            first_line = prev->key->line;
        if (map_put(b->a, m, own[i].key, own[i].val, 1, &was) && was && b->warn) {
            const struct sy_ynode *k = own[i].key;
            b->warn(b->ud, b->file, k->line, "duplicate key '%.*s' (first at line %d): the last value is kept",
                    (int)(k->len > 80 ? 80 : k->len), k->s, first_line);
        }
    }
    if (m->weight > MAX_WEIGHT) {
        fail(b, line, "document too large after alias expansion");
        return NULL;
    }
    (void)start;
    return m;
}

static struct sy_ynode *node(struct yb *b, yaml_event_t *ev, int depth)
{
    int line = (int)ev->start_mark.line + 1;
    if (depth > MAX_DEPTH) {
        fail(b, line, "nesting deeper than %d levels", MAX_DEPTH);
        return NULL;
    }
    struct sy_ynode *n = NULL;
    switch (ev->type) {
    case YAML_ALIAS_EVENT: {
        const char *name = (const char *)ev->data.alias.anchor;
        for (struct anchor *an = b->anchors; an; an = an->prev)
            if (strcmp(an->name, name) == 0)
                return an->node;
        fail(b, line, "found undefined alias '%.60s'", name);
        return NULL;
    }
    case YAML_SCALAR_EVENT:
        n = scalar(b, ev, line);
        if (n)
            remember(b, ev->data.scalar.anchor, n);
        return n;
    case YAML_SEQUENCE_START_EVENT: {
        const char *tag = (const char *)ev->data.sequence_start.tag;
        if (tag && strcmp(tag, TAG_PREFIX "seq") != 0 && strcmp(tag, "!") != 0) {
            fail(b, line, "could not determine a constructor for the tag '%s'", tag);
            return NULL;
        }
        n = sy__ynode_new(b->a, SY_Y_SEQ, line, b->file);
        for (;;) {
            yaml_event_t e;
            if (next(b, &e))
                return NULL;
            if (e.type == YAML_SEQUENCE_END_EVENT) {
                yaml_event_delete(&e);
                break;
            }
            struct sy_ynode *it = node(b, &e, depth + 1);
            yaml_event_delete(&e);
            if (!it)
                return NULL;
            if (is_merge(it)) {
                fail(b, it->line, "could not determine a constructor for the tag '" TAG_PREFIX "merge'");
                return NULL;
            }
            sy__yseq_push(b->a, n, it);
            if (n->weight > MAX_WEIGHT) {
                fail(b, line, "document too large after alias expansion");
                return NULL;
            }
        }
        remember(b, ev->data.sequence_start.anchor, n);
        return n;
    }
    case YAML_MAPPING_START_EVENT: {
        const char *tag = (const char *)ev->data.mapping_start.tag;
        if (tag && strcmp(tag, TAG_PREFIX "map") != 0 && strcmp(tag, "!") != 0) {
            fail(b, line, "could not determine a constructor for the tag '%s'", tag);
            return NULL;
        }
        n = mapping(b, ev, line, depth);
        if (n)
            remember(b, ev->data.mapping_start.anchor, n);
        return n;
    }
    default: fail(b, line, "unexpected YAML event %d", (int)ev->type); return NULL;
    }
}

int sy__ytree_parse(struct sy_arena *a, const char *yaml, size_t len, const char *file, struct sy_ynode **root,
                    sy_ywarn_fn warn, void *ud, char *err, size_t errlen)
{
    pthread_once(&resolver_once, resolver_init);
    struct yb b = {.a = a, .file = file ? file : "<config>", .warn = warn, .ud = ud, .err = err, .errlen = errlen};
    *root = NULL;
    if (errlen)
        err[0] = 0;
    if (!yaml_parser_initialize(&b.p)) {
        snprintf(err, errlen, "%s: cannot initialise the YAML parser", b.file);
        return SY_ENOMEM;
    }
    yaml_parser_set_input_string(&b.p, (const unsigned char *)yaml, len);
    yaml_event_t ev;
    int docs = 0;
    struct sy_ynode *r = NULL;
    for (;;) {
        if (next(&b, &ev))
            break;
        yaml_event_type_t t = ev.type;
        if (t == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_END_EVENT) {
            yaml_event_delete(&ev);
            continue;
        }
        if (t == YAML_DOCUMENT_START_EVENT) {
            int line = (int)ev.start_mark.line + 1;
            yaml_event_delete(&ev);
            if (++docs > 1) {
                fail(&b, line, "expected a single document in the stream");
                break;
            }
            continue;
        }
        r = node(&b, &ev, 0);
        yaml_event_delete(&ev);
        if (!r)
            break;
        if (is_merge(r)) {
            fail(&b, r->line, "could not determine a constructor for the tag '" TAG_PREFIX "merge'");
            break;
        }
    }
    yaml_parser_delete(&b.p);
    if (b.failed)
        return SY_ECONFIG;
    *root = r;
    return 0;
}
