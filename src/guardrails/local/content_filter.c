/* content_filter.c - LiteLLM's built-in content filter (`guardrail:
 * litellm_content_filter`, litellm_content_filter/content_filter.py).
 *
 * Settings, as LiteLLM reads them:
 *   categories        [{category, enabled, action, severity_threshold,
 *                      category_file}]: LiteLLM's keyword lists (data/, compiled
 *                     in) or a file of the same YAML shape (or its JSON
 *                     `match`/`severity` list); a category's keywords at or
 *                     above its threshold (low < medium < high; default the
 *                     guardrail's `severity_threshold`, "medium") are checked,
 *                     `always_block_keywords` too; its `exceptions` anywhere
 *                     in a text turn the category check off for that text.
 *   patterns          [{pattern_type: prebuilt, pattern_name} | {pattern_type:
 *                      regex, pattern, name}, action]: prebuilt ones from
 *                     data/patterns.json (with their keyword_pattern context);
 *                     regexes case-insensitive.
 *   blocked_words     [{keyword, action, description}], blocked_words_file
 *                     (YAML {blocked_words: [...]}): substrings, '*' any one
 *                     character or none.
 *   pattern_redaction_format ("[{pattern_name}_REDACTED]"), keyword_redaction_tag
 *                     ("[KEYWORD_REDACTED]").
 *
 * Each text (request or answer alike: LiteLLM applies the same filter to both)
 * goes through the three stages in LiteLLM's order, each one scan over the
 * text as the previous stage left it: category keywords (one automaton for all
 * of them), each pattern, blocked words (one automaton). BLOCK ends the check
 * with LiteLLM's HTTPException detail printed as Python prints it; MASK puts
 * the redaction tag over every match. Where LiteLLM stops early or masks a
 * substring its match did not find, this does the thorough thing: see
 * docs/litellm-differences.md. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/buf.h"
#include "core/log.h"
#include "core/pyrepr.h"
#include "guardrails/guardrail.h"
#include "guardrails/match.h"

enum { ACT_BLOCK = 0, ACT_MASK = 1 };

/* the data compiled in (meson.build) */
#define CF_DATA(x)                 \
    extern const char sy_cf_##x[]; \
    extern const size_t sy_cf_##x##_len;
CF_DATA(patterns)
CF_DATA(cat_harmful_self_harm)
CF_DATA(cat_harmful_violence)
CF_DATA(cat_harmful_illegal_weapons)
CF_DATA(cat_bias_gender)
CF_DATA(cat_bias_sexual_orientation)
CF_DATA(cat_denied_medical_advice)
CF_DATA(cat_denied_legal_advice)
CF_DATA(cat_denied_financial_advice)
#undef CF_DATA

static const struct {
    const char *name;
    const char *data;
    const size_t *len;
} builtin_cats[] = {
#define C(x)                                    \
    {                                           \
#x, sy_cf_cat_##x, &sy_cf_cat_##x##_len \
    }
    C(harmful_self_harm),       C(harmful_violence),      C(harmful_illegal_weapons), C(bias_gender),
    C(bias_sexual_orientation), C(denied_medical_advice), C(denied_legal_advice),     C(denied_financial_advice),
#undef C
};

struct ckw { /* a category keyword: LiteLLM's dict entry (first place, last value) */
    char *kw, *category, *severity;
    int action;
};
struct cpat {
    char *name;
    int action;
    int luhn;                     /* a card number pattern: a match counts when its digits pass Luhn's check */
    struct sy_gpat *re, *context; /* context: keyword_pattern, or NULL */
};
struct bword {
    char *kw, *desc;
    int action;
};

/* keyword -> index while the lists are built (LiteLLM's dicts: a repeated
 * keyword keeps its place), so a list of 100,000 keywords loads in linear time */
struct kwindex {
    int32_t *slot; /* index + 1, 0 empty */
    size_t cap, n;
};

struct cf {
    struct ckw *ckw;
    size_t nckw, capckw;
    struct kwindex ckix, bwix;
    struct sy_gpat *cat, *exc;
    size_t nexc;
    struct cpat *pat;
    size_t npat;
    struct bword *bw;
    size_t nbw, capbw;
    struct sy_gpat *bwp;
    struct sy_gpat *any; /* the category keywords and blocked words in one set: the prefilter */
    char *pattern_fmt, *kw_tag;
};

/* ---- YAML into json-c (libyaml events; PyYAML's safe_load for what these
 * files hold: maps, lists, strings, booleans, integers) ---- */

static json_object *yscalar(const yaml_event_t *ev)
{
    const char *v = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        static const char *const t[] = {"true", "True", "TRUE", "yes", "Yes", "on", "On"};
        static const char *const f[] = {"false", "False", "FALSE", "no", "No", "off", "Off"};
        for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
            if (!strcmp(v, t[i]))
                return json_object_new_boolean(1);
            if (!strcmp(v, f[i]))
                return json_object_new_boolean(0);
        }
        if (!strcmp(v, "null") || !strcmp(v, "~") || n == 0)
            return NULL;
        char *end;
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (*v && !*end && !errno)
            return json_object_new_int64(x);
    }
    return json_object_new_string_len(v, (int)n);
}

#define YDEPTH 32

static int ynode(yaml_parser_t *ps, yaml_event_t *ev, json_object **out, int depth);

static int ynext(yaml_parser_t *ps, json_object **out, int depth)
{
    yaml_event_t ev;
    if (!yaml_parser_parse(ps, &ev))
        return -1;
    int rc = ynode(ps, &ev, out, depth);
    yaml_event_delete(&ev);
    return rc;
}

/* 0 with *out, 1 at a collection's end, -1 on an error. */
static int ynode(yaml_parser_t *ps, yaml_event_t *ev, json_object **out, int depth)
{
    *out = NULL;
    if (depth > YDEPTH)
        return -1;
    switch (ev->type) {
    case YAML_SCALAR_EVENT: *out = yscalar(ev); return 0;
    case YAML_SEQUENCE_START_EVENT: {
        json_object *a = json_object_new_array();
        for (;;) {
            json_object *v;
            int rc = ynext(ps, &v, depth + 1);
            if (rc == 1)
                break;
            if (rc < 0) {
                json_object_put(a);
                return -1;
            }
            json_object_array_add(a, v);
        }
        *out = a;
        return 0;
    }
    case YAML_MAPPING_START_EVENT: {
        json_object *o = json_object_new_object();
        for (;;) {
            json_object *k, *v;
            int rc = ynext(ps, &k, depth + 1);
            if (rc == 1)
                break;
            if (rc < 0 || ynext(ps, &v, depth + 1) != 0) {
                json_object_put(k);
                json_object_put(o);
                return -1;
            }
            const char *ks = k ? json_object_get_string(k) : "null";
            json_object_object_add(o, ks, v);
            json_object_put(k);
        }
        *out = o;
        return 0;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: return 1;
    case YAML_ALIAS_EVENT: /* anchors are not followed */ return 0;
    default: return -1;
    }
}

/* The first document of yaml[0..n), or NULL with err. */
static json_object *yaml_to_json(const char *yaml, size_t n, char *err, size_t errlen)
{
    yaml_parser_t ps;
    if (!yaml_parser_initialize(&ps)) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&ps, (const unsigned char *)yaml, n);
    json_object *root = NULL;
    int rc = -1;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&ps, &ev))
            break;
        yaml_event_type_t t = ev.type;
        if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_START_EVENT) {
            yaml_event_delete(&ev);
            continue;
        }
        if (t == YAML_STREAM_END_EVENT || t == YAML_DOCUMENT_END_EVENT) {
            yaml_event_delete(&ev);
            rc = 0;
            break;
        }
        rc = ynode(&ps, &ev, &root, 0);
        yaml_event_delete(&ev);
        break;
    }
    if (rc != 0) {
        snprintf(err, errlen, "bad YAML (line %zu): %s", ps.problem_mark.line + 1,
                 ps.problem ? ps.problem : "nesting too deep");
        json_object_put(root);
        root = NULL;
    } else if (!root)
        snprintf(err, errlen, "empty file");
    yaml_parser_delete(&ps);
    return root;
}

static char *read_file(const char *path, size_t *n, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    struct sy_buf b;
    sy_buf_init(&b, 64u << 20);
    char chunk[8192];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        sy_buf_append(&b, chunk, k);
    fclose(f);
    if (sy_buf_failed(&b)) {
        snprintf(err, errlen, "%s: too large", path);
        sy_buf_free(&b);
        return NULL;
    }
    *n = b.len;
    return b.p ? b.p : strdup("");
}

/* ---- settings ---- */

static const char *jstr(json_object *o, const char *key)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

/* "BLOCK" / "MASK" (case-insensitive); dflt when absent; -1 otherwise. */
static int parse_action(const char *s, int dflt)
{
    if (!s)
        return dflt;
    if (!strcasecmp(s, "BLOCK"))
        return ACT_BLOCK;
    if (!strcasecmp(s, "MASK"))
        return ACT_MASK;
    return -1;
}

static int sev_rank(const char *s, int dflt)
{
    if (!s)
        return dflt;
    if (!strcmp(s, "low"))
        return 0;
    if (!strcmp(s, "medium"))
        return 1;
    if (!strcmp(s, "high"))
        return 2;
    return dflt;
}

static char *lower_dup(const char *s)
{
    char *d = strdup(s);
    for (char *p = d; p && *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p + 32);
    return d;
}

static uint64_t kwhash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The index of kw (get: key(ud, i) gives entry i's keyword), or -1. */
static long kwindex_find(const struct kwindex *x, const char *kw, const char *(*key)(const void *, size_t),
                         const void *ud)
{
    if (!x->cap)
        return -1;
    for (size_t h = kwhash(kw) & (x->cap - 1);; h = (h + 1) & (x->cap - 1)) {
        if (!x->slot[h])
            return -1;
        if (!strcmp(key(ud, (size_t)x->slot[h] - 1), kw))
            return x->slot[h] - 1;
    }
}

static int kwindex_put(struct kwindex *x, const char *kw, size_t idx, const char *(*key)(const void *, size_t),
                       const void *ud)
{
    if ((x->n + 1) * 2 > x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 256;
        int32_t *slot = calloc(cap, sizeof *slot);
        if (!slot)
            return -1;
        for (size_t i = 0; i < x->cap; i++)
            if (x->slot[i]) {
                size_t h = kwhash(key(ud, (size_t)x->slot[i] - 1)) & (cap - 1);
                while (slot[h])
                    h = (h + 1) & (cap - 1);
                slot[h] = x->slot[i];
            }
        free(x->slot);
        x->slot = slot;
        x->cap = cap;
    }
    size_t h = kwhash(kw) & (x->cap - 1);
    while (x->slot[h])
        h = (h + 1) & (x->cap - 1);
    x->slot[h] = (int32_t)idx + 1;
    x->n++;
    return 0;
}

static const char *ckw_key(const void *ud, size_t i)
{
    return ((const struct cf *)ud)->ckw[i].kw;
}

static const char *bw_key(const void *ud, size_t i)
{
    return ((const struct cf *)ud)->bw[i].kw;
}

/* Put a category keyword in LiteLLM's dict: a new one at the end, a known one
 * keeps its place and takes the new value. */
static int put_ckw(struct cf *c, const char *kw, const char *cat, const char *sev, int action)
{
    char *lk = lower_dup(kw);
    if (!lk)
        return -1;
    long found = kwindex_find(&c->ckix, lk, ckw_key, c);
    if (found >= 0) {
        size_t i = (size_t)found;
        free(lk);
        char *nc = strdup(cat), *ns = strdup(sev);
        if (!nc || !ns) {
            free(nc);
            free(ns);
            return -1;
        }
        free(c->ckw[i].category);
        free(c->ckw[i].severity);
        c->ckw[i].category = nc;
        c->ckw[i].severity = ns;
        c->ckw[i].action = action;
        return 0;
    }
    if (c->nckw == c->capckw) {
        size_t cap = c->capckw ? c->capckw * 2 : 64;
        struct ckw *n = realloc(c->ckw, cap * sizeof *n);
        if (!n) {
            free(lk);
            return -1;
        }
        c->ckw = n;
        c->capckw = cap;
    }
    struct ckw *e = &c->ckw[c->nckw];
    e->kw = lk;
    e->category = strdup(cat);
    e->severity = strdup(sev);
    e->action = action;
    c->nckw++;
    if (kwindex_put(&c->ckix, lk, c->nckw - 1, ckw_key, c) < 0)
        return -1;
    return e->category && e->severity ? 0 : -1;
}

static int put_bword(struct cf *c, const char *kw, int action, const char *desc)
{
    char *lk = lower_dup(kw);
    if (!lk)
        return -1;
    long found = kwindex_find(&c->bwix, lk, bw_key, c);
    if (found >= 0) {
        size_t i = (size_t)found;
        free(lk);
        free(c->bw[i].desc);
        c->bw[i].desc = desc ? strdup(desc) : NULL;
        c->bw[i].action = action;
        return 0;
    }
    if (c->nbw == c->capbw) {
        size_t cap = c->capbw ? c->capbw * 2 : 16;
        struct bword *n = realloc(c->bw, cap * sizeof *n);
        if (!n) {
            free(lk);
            return -1;
        }
        c->bw = n;
        c->capbw = cap;
    }
    c->bw[c->nbw].kw = lk;
    c->bw[c->nbw].desc = desc ? strdup(desc) : NULL;
    c->bw[c->nbw].action = action;
    c->nbw++;
    return kwindex_put(&c->bwix, lk, c->nbw - 1, bw_key, c);
}

/* A category file's keywords (YAML {keywords: [{keyword, severity}],
 * always_block_keywords, exceptions, default_action}, or LiteLLM's JSON list
 * of {match: "a|b", severity: 1-4}). */
static int load_category(struct cf *c, const char *name, json_object *doc, int is_json, const char *action_cfg,
                         int threshold, struct sy_buf *exc, char *err, size_t errlen)
{
    if (is_json) {
        if (!json_object_is_type(doc, json_type_array)) {
            snprintf(err, errlen, "category %s: not a list", name);
            return -1;
        }
        int act = parse_action(action_cfg, ACT_BLOCK);
        for (size_t i = 0; i < json_object_array_length(doc); i++) {
            json_object *e = json_object_array_get_idx(doc, i), *sv;
            const char *m = jstr(e, "match");
            if (!m)
                continue;
            int s = 2;
            if (json_object_object_get_ex(e, "severity", &sv) && json_object_is_type(sv, json_type_int))
                s = json_object_get_int(sv);
            const char *sev = s >= 3 ? "high" : s == 1 ? "low" : "medium";
            if (sev_rank(sev, 0) < threshold)
                continue;
            char *dup = strdup(m), *save = NULL;
            for (char *ph = dup ? strtok_r(dup, "|", &save) : NULL; ph; ph = strtok_r(NULL, "|", &save)) {
                while (*ph == ' ' || *ph == '\t')
                    ph++;
                size_t l = strlen(ph);
                while (l && (ph[l - 1] == ' ' || ph[l - 1] == '\t'))
                    ph[--l] = 0;
                if (l && put_ckw(c, ph, name, sev, act) < 0) {
                    free(dup);
                    return -1;
                }
            }
            free(dup);
        }
        return 0;
    }
    if (!json_object_is_type(doc, json_type_object)) {
        snprintf(err, errlen, "category %s: not a mapping", name);
        return -1;
    }
    int act = parse_action(action_cfg ? action_cfg : jstr(doc, "default_action"), ACT_BLOCK);
    if (act < 0) {
        snprintf(err, errlen, "category %s: action must be BLOCK or MASK", name);
        return -1;
    }
    json_object *v;
    if (json_object_object_get_ex(doc, "identifier_words", &v))
        sy_warn("guardrails: content filter category %s: identifier_words (conditional matches) are not "
                "supported; its plain keywords are checked",
                name);
    static const char *const lists[] = {"always_block_keywords", "keywords"};
    for (int l = 0; l < 2; l++) {
        if (!json_object_object_get_ex(doc, lists[l], &v) || !json_object_is_type(v, json_type_array))
            continue;
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *e = json_object_array_get_idx(v, i);
            const char *kw = jstr(e, "keyword"), *sev = jstr(e, "severity");
            if (!kw || !*kw)
                continue;
            if (!sev)
                sev = l == 0 ? "high" : "low";
            if (sev_rank(sev, 0) >= threshold && put_ckw(c, kw, name, sev, act) < 0)
                return -1;
        }
    }
    if (json_object_object_get_ex(doc, "exceptions", &v) && json_object_is_type(v, json_type_array))
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *e = json_object_array_get_idx(v, i);
            if (!json_object_is_type(e, json_type_string) || !json_object_get_string_len(e))
                continue;
            char *lk = lower_dup(json_object_get_string(e));
            if (!lk)
                return -1;
            sy_buf_append(exc, lk, strlen(lk) + 1);
            free(lk);
        }
    return 0;
}

/* A settings file (a category file, blocked_words_file) as a json-c document:
 * JSON when is_json, else YAML. NULL with err. */
static json_object *load_file(const char *path, int is_json, char *err, size_t errlen)
{
    size_t n;
    char *text = read_file(path, &n, err, errlen);
    if (!text)
        return NULL;
    json_object *doc;
    if (is_json) {
        doc = json_tokener_parse(text);
        if (!doc)
            snprintf(err, errlen, "%s: bad JSON", path);
    } else
        doc = yaml_to_json(text, n, err, errlen);
    free(text);
    return doc;
}

static int open_categories(struct cf *c, json_object *cats, const char *dflt_threshold, struct sy_buf *exc, char *err,
                           size_t errlen)
{
    for (size_t i = 0; i < json_object_array_length(cats); i++) {
        json_object *cc = json_object_array_get_idx(cats, i), *v;
        const char *name = jstr(cc, "category");
        if (!name || !*name) {
            sy_warn("guardrails: content filter: a category without a name is skipped");
            continue;
        }
        if (json_object_object_get_ex(cc, "enabled", &v) && json_object_is_type(v, json_type_boolean) &&
            !json_object_get_boolean(v))
            continue;
        const char *thr = jstr(cc, "severity_threshold");
        int threshold = sev_rank(thr && *thr ? thr : dflt_threshold, 1);
        const char *action = jstr(cc, "action"), *file = jstr(cc, "category_file");
        if (action && parse_action(action, 0) < 0) {
            snprintf(err, errlen, "category %s: action must be BLOCK or MASK", name);
            return -1;
        }
        json_object *doc = NULL;
        int is_json = 0;
        if (file) {
            size_t fl = strlen(file);
            is_json = fl > 5 && !strcasecmp(file + fl - 5, ".json");
            if (!(doc = load_file(file, is_json, err, errlen)))
                return -1;
        } else {
            size_t k = 0;
            while (k < sizeof builtin_cats / sizeof *builtin_cats && strcmp(builtin_cats[k].name, name))
                k++;
            if (k == sizeof builtin_cats / sizeof *builtin_cats) {
                sy_warn("guardrails: content filter: category %s is not built in (give category_file); skipped", name);
                continue;
            }
            doc = yaml_to_json(builtin_cats[k].data, *builtin_cats[k].len, err, errlen);
            if (!doc)
                return -1;
        }
        int rc = load_category(c, name, doc, is_json, action, threshold, exc, err, errlen);
        json_object_put(doc);
        if (rc < 0) {
            if (!*err)
                snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

/* A prebuilt pattern's regex and keyword_pattern from data/patterns.json. */
static int prebuilt(const char *name, const char **re, const char **ctx, json_object **keep)
{
    json_object *doc = json_tokener_parse(sy_cf_patterns); /* the caller frees it (*keep) */
    json_object *list;
    if (!doc || !json_object_object_get_ex(doc, "patterns", &list)) {
        json_object_put(doc);
        return -1;
    }
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *e = json_object_array_get_idx(list, i);
        const char *n = jstr(e, "name");
        if (n && !strcmp(n, name)) {
            *re = jstr(e, "pattern");
            *ctx = jstr(e, "keyword_pattern");
            *keep = doc;
            return 0;
        }
    }
    json_object_put(doc);
    return -1;
}

static struct sy_gpat *one_regex(const char *re, char *err, size_t errlen)
{
    struct sy_gpat *p = sy_gpat_new();
    if (!p || sy_gpat_add_regex(p, re, 0, 1, err, errlen) < 0 || sy_gpat_compile(p, err, errlen) < 0) {
        sy_gpat_free(p);
        return NULL;
    }
    return p;
}

static int open_patterns(struct cf *c, json_object *pats, char *err, size_t errlen)
{
    size_t n = json_object_array_length(pats);
    c->pat = calloc(n ? n : 1, sizeof *c->pat);
    if (!c->pat)
        return -1;
    for (size_t i = 0; i < n; i++) {
        json_object *pc = json_object_array_get_idx(pats, i);
        const char *type = jstr(pc, "pattern_type"), *pname = jstr(pc, "pattern_name");
        const char *re = jstr(pc, "pattern");
        if (!type)
            type = pname ? "prebuilt" : "regex";
        int action = parse_action(jstr(pc, "action"), ACT_BLOCK);
        if (action < 0) {
            snprintf(err, errlen, "patterns[%zu]: action must be BLOCK or MASK", i);
            return -1;
        }
        struct cpat *cp = &c->pat[c->npat];
        const char *ctx = NULL;
        json_object *keep = NULL;
        if (!strcmp(type, "prebuilt")) {
            if (!pname) {
                snprintf(err, errlen, "pattern_name is required for prebuilt patterns");
                return -1;
            }
            if (prebuilt(pname, &re, &ctx, &keep) < 0) {
                snprintf(err, errlen, "Unknown pattern name: '%s'", pname);
                return -1;
            }
            cp->name = strdup(pname);
            static const char *const cards[] = {"credit_card", "visa", "mastercard", "amex", "discover"};
            for (size_t k = 0; k < sizeof cards / sizeof *cards; k++)
                cp->luhn |= !strcmp(pname, cards[k]);
        } else if (!strcmp(type, "regex")) {
            if (!re) {
                snprintf(err, errlen, "pattern is required for regex patterns");
                return -1;
            }
            const char *nm = jstr(pc, "name");
            cp->name = strdup(nm ? nm : "custom_regex");
        } else {
            snprintf(err, errlen, "Unknown pattern_type: %s", type);
            return -1;
        }
        cp->action = action;
        c->npat++;
        cp->re = one_regex(re, err, errlen);
        if (cp->re && ctx)
            cp->context = one_regex(ctx, err, errlen);
        json_object_put(keep);
        if (!cp->name || !cp->re || (ctx && !cp->context)) {
            if (!*err)
                snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

static int open_bwords(struct cf *c, json_object *list, char *err, size_t errlen, int from_file)
{
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *w = json_object_array_get_idx(list, i);
        const char *kw = jstr(w, "keyword"), *a = jstr(w, "action");
        if (!kw || (from_file && !a)) {
            if (from_file)
                continue; /* LiteLLM skips an entry without keyword and action */
            snprintf(err, errlen, "blocked_words[%zu]: keyword is required", i);
            return -1;
        }
        int act = parse_action(a, ACT_BLOCK);
        if (act < 0) {
            snprintf(err, errlen, "blocked word '%s': action must be BLOCK or MASK", kw);
            return -1;
        }
        if (*kw && put_bword(c, kw, act, jstr(w, "description")) < 0)
            return -1;
    }
    return 0;
}

static void cf_free(struct cf *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nckw; i++) {
        free(c->ckw[i].kw);
        free(c->ckw[i].category);
        free(c->ckw[i].severity);
    }
    free(c->ckw);
    sy_gpat_free(c->cat);
    sy_gpat_free(c->exc);
    for (size_t i = 0; i < c->npat; i++) {
        free(c->pat[i].name);
        sy_gpat_free(c->pat[i].re);
        sy_gpat_free(c->pat[i].context);
    }
    free(c->pat);
    for (size_t i = 0; i < c->nbw; i++) {
        free(c->bw[i].kw);
        free(c->bw[i].desc);
    }
    free(c->bw);
    sy_gpat_free(c->bwp);
    sy_gpat_free(c->any);
    free(c->ckix.slot);
    free(c->bwix.slot);
    free(c->pattern_fmt);
    free(c->kw_tag);
    free(c);
}

static int compile_sets(struct cf *c, const struct sy_buf *exc, char *err, size_t errlen)
{
    c->cat = sy_gpat_new();
    c->exc = sy_gpat_new();
    c->bwp = sy_gpat_new();
    c->any = sy_gpat_new();
    if (!c->cat || !c->exc || !c->bwp || !c->any)
        return -1;
    for (size_t i = 0; i < c->nckw; i++)
        if (sy_gpat_add_keyword_mode(c->cat, c->ckw[i].kw, (int)i, SY_GKW_WORD) < 0 ||
            sy_gpat_add_keyword_mode(c->any, c->ckw[i].kw, 0, SY_GKW_WORD) < 0)
            return -1;
    for (size_t o = 0; o < exc->len; o += strlen(exc->p + o) + 1, c->nexc++)
        if (sy_gpat_add_keyword_mode(c->exc, exc->p + o, 0, SY_GKW_PLAIN) < 0)
            return -1;
    for (size_t i = 0; i < c->nbw; i++)
        if (sy_gpat_add_keyword_mode(c->bwp, c->bw[i].kw, (int)i, SY_GKW_SUBSTR) < 0 ||
            sy_gpat_add_keyword_mode(c->any, c->bw[i].kw, 0, SY_GKW_SUBSTR) < 0)
            return -1;
    if (sy_gpat_compile(c->cat, err, errlen) < 0 || sy_gpat_compile(c->exc, err, errlen) < 0 ||
        sy_gpat_compile(c->bwp, err, errlen) < 0 || sy_gpat_compile(c->any, err, errlen) < 0)
        return -1;
    return 0;
}

static int cf_open(struct sy_guard *g, json_object *params, const struct sy_genv *env, char *err, size_t errlen)
{
    (void)env;
    struct cf *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    err[0] = 0;
    struct sy_buf exc;
    sy_buf_init(&exc, 16u << 20);
    const char *fmt = jstr(params, "pattern_redaction_format"), *tag = jstr(params, "keyword_redaction_tag");
    c->pattern_fmt = strdup(fmt && *fmt ? fmt : "[{pattern_name}_REDACTED]");
    c->kw_tag = strdup(tag && *tag ? tag : "[KEYWORD_REDACTED]");
    const char *thr = jstr(params, "severity_threshold");
    json_object *v;
    int rc = c->pattern_fmt && c->kw_tag ? 0 : -1;
    if (!rc && json_object_object_get_ex(params, "categories", &v) && json_object_is_type(v, json_type_array))
        rc = open_categories(c, v, thr && *thr ? thr : "medium", &exc, err, errlen);
    if (!rc && json_object_object_get_ex(params, "patterns", &v) && json_object_is_type(v, json_type_array))
        rc = open_patterns(c, v, err, errlen);
    if (!rc && json_object_object_get_ex(params, "blocked_words", &v) && json_object_is_type(v, json_type_array))
        rc = open_bwords(c, v, err, errlen, 0);
    const char *bwf = jstr(params, "blocked_words_file");
    if (!rc && bwf) {
        json_object *doc = load_file(bwf, 0, err, errlen), *list;
        if (!doc || !json_object_object_get_ex(doc, "blocked_words", &list) ||
            !json_object_is_type(list, json_type_array)) {
            if (doc || !*err)
                snprintf(err, errlen,
                         "Error loading blocked words file %s: Invalid format: file must contain 'blocked_words' "
                         "key with list of words",
                         bwf);
            rc = -1;
        } else
            rc = open_bwords(c, list, err, errlen, 1);
        json_object_put(doc);
    }
    if (!rc)
        rc = compile_sets(c, &exc, err, errlen);
    if (!rc && sy_buf_failed(&exc))
        rc = -1;
    sy_buf_free(&exc);
    if (rc) {
        if (!*err)
            snprintf(err, errlen, "out of memory");
        cf_free(c);
        return -1;
    }
    if (json_object_object_get_ex(params, "image_model", &v))
        sy_info("guardrails: %s: image_model is not used (images are not described and checked)",
                g->name ? g->name : "content filter");
    g->impl = c;
    return 0;
}

static void cf_close(struct sy_guard *g)
{
    cf_free(g->impl);
    g->impl = NULL;
}

/* ---- checking ---- */

struct span {
    size_t off, end;
};
struct spans {
    struct span *s;
    size_t n, cap;
    int oom;
};

static void span_add(struct spans *v, size_t off, size_t len)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        struct span *n = realloc(v->s, cap * sizeof *n);
        if (!n) {
            v->oom = 1;
            return;
        }
        v->s = n;
        v->cap = cap;
    }
    v->s[v->n].off = off;
    v->s[v->n].end = off + len;
    v->n++;
}

static int span_cmp(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* text with the merged spans replaced by tag, into out (reset first). */
static int apply_mask(const char *text, size_t n, struct spans *v, const char *tag, struct sy_buf *out)
{
    qsort(v->s, v->n, sizeof *v->s, span_cmp);
    sy_buf_reset(out);
    size_t prev = 0;
    for (size_t i = 0; i < v->n;) {
        size_t off = v->s[i].off, end = v->s[i].end;
        for (i++; i < v->n && v->s[i].off <= end; i++)
            if (v->s[i].end > end)
                end = v->s[i].end;
        if (off < prev)
            off = prev;
        sy_buf_append(out, text + prev, off - prev);
        sy_buf_puts(out, tag);
        prev = end;
    }
    sy_buf_append(out, text + prev, n - prev);
    return sy_buf_failed(out) ? -1 : 0;
}

/* The block message: str() of LiteLLM's detail dict. */
static void block_dict(struct sy_gresult *r, const char *const *kv, size_t nkv)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    SY_BUF_LIT(&b, "{");
    for (size_t i = 0; i < nkv; i += 2) {
        if (i)
            SY_BUF_LIT(&b, ", ");
        sy_py_str_repr(&b, kv[i], strlen(kv[i]));
        SY_BUF_LIT(&b, ": ");
        if (kv[i + 1])
            sy_py_str_repr(&b, kv[i + 1], strlen(kv[i + 1]));
        else
            SY_BUF_LIT(&b, "None");
    }
    SY_BUF_LIT(&b, "}");
    if (sy_buf_failed(&b))
        sy_gresult_block(r, 400, "Content blocked");
    else
        sy_gresult_block(r, 400, "%s", b.p);
    sy_buf_free(&b);
}

static void detail_json(struct sy_gresult *r, const char *type, const char *const *kv, size_t nkv)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    sy_buf_printf(&b, "{\"type\":\"%s\"", type);
    for (size_t i = 0; i < nkv; i += 2) {
        SY_BUF_LIT(&b, ",\"");
        sy_buf_json_escape(&b, kv[i], strlen(kv[i]));
        SY_BUF_LIT(&b, "\":");
        if (kv[i + 1]) {
            SY_BUF_LIT(&b, "\"");
            sy_buf_json_escape(&b, kv[i + 1], strlen(kv[i + 1]));
            SY_BUF_LIT(&b, "\"");
        } else
            SY_BUF_LIT(&b, "null");
    }
    SY_BUF_LIT(&b, "}");
    free(r->detail);
    r->detail = sy_buf_failed(&b) ? NULL : strdup(b.p);
    sy_buf_free(&b);
}

struct catscan {
    const struct cf *c;
    long first_block; /* smallest keyword index with BLOCK, -1 */
    struct spans mask;
};

static int on_cat(void *ud, const struct sy_gmatch *m)
{
    struct catscan *s = ud;
    if (s->c->ckw[m->id].action == ACT_BLOCK) {
        if (s->first_block < 0 || m->id < s->first_block)
            s->first_block = m->id;
    } else
        span_add(&s->mask, m->off, m->len);
    return 0;
}

static int on_any(void *ud, const struct sy_gmatch *m)
{
    (void)m;
    *(int *)ud = 1;
    return 1;
}

static int on_span(void *ud, const struct sy_gmatch *m)
{
    span_add(ud, m->off, m->len);
    return 0;
}

/* Stage 1: category keywords. 1 blocked, 0 go on (text maybe masked into cur), -1 error. */
static int stage_categories(const struct cf *c, struct sy_buf *cur, struct sy_buf *tmp, struct sy_gresult *r)
{
    if (!c->nckw)
        return 0;
    if (c->nexc) {
        int hit = 0;
        if (sy_gpat_scan_all(c->exc, cur->p, cur->len, on_any, &hit) < 0)
            return -1;
        if (hit)
            return 0; /* an exception phrase: LiteLLM skips the category check */
    }
    struct catscan s = {.c = c, .first_block = -1};
    long rc = sy_gpat_scan_all(c->cat, cur->p, cur->len, on_cat, &s);
    int out = 0;
    if (rc < 0 || s.mask.oom)
        out = -1;
    else if (s.first_block >= 0) {
        const struct ckw *k = &c->ckw[s.first_block];
        char msg[1024];
        snprintf(msg, sizeof msg, "Content blocked: %s category keyword '%s' detected (severity: %s)", k->category,
                 k->kw, k->severity);
        const char *kv[] = {"error", msg, "category", k->category, "keyword", k->kw, "severity", k->severity};
        block_dict(r, kv, 8);
        const char *dv[] = {"category", k->category, "keyword", k->kw, "severity", k->severity, "action", "BLOCK"};
        detail_json(r, "category_keyword", dv, 8);
        out = 1;
    } else if (s.mask.n) {
        r->masked += (unsigned)s.mask.n;
        out = apply_mask(cur->p, cur->len, &s.mask, c->kw_tag, tmp) < 0 ? -1 : 2;
    }
    free(s.mask.s);
    return out;
}

/* Is the value [off,end) near a context keyword (LiteLLM's _match_near_keyword:
 * overlapping, or separated by at most one word and no digit)? ctx: the
 * keyword spans, sorted. */
static int gap_ok(const char *t, size_t a, size_t b)
{
    int words = 0, inword = 0;
    for (size_t i = a; i < b; i++) {
        unsigned char ch = (unsigned char)t[i];
        if (ch >= '0' && ch <= '9')
            return 0;
        int w = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || ch >= 0x80;
        if (w && !inword)
            words++;
        inword = w;
    }
    return words <= 1;
}

static int near_keyword(const char *t, const struct spans *ctx, size_t *cursor, size_t off, size_t end)
{
    /* ctx sorted by off; advance to the last keyword starting before end */
    while (*cursor + 1 < ctx->n && ctx->s[*cursor + 1].off < end)
        (*cursor)++;
    for (size_t k = *cursor > 0 ? *cursor - 1 : 0; k < ctx->n && k <= *cursor + 1; k++) {
        const struct span *kw = &ctx->s[k];
        if (off >= kw->end ? gap_ok(t, kw->end, off) : kw->off >= end ? gap_ok(t, end, kw->off) : 1)
            return 1;
    }
    return 0;
}

/* Luhn's check over the digits of t[off, end) (separators skipped). A
 * static copy: the pii kind's validators are not shared yet. */
static int luhn_ok(const char *t, size_t off, size_t end)
{
    unsigned sum = 0, n = 0;
    for (size_t i = end; i > off; i--) {
        char ch = t[i - 1];
        if (ch < '0' || ch > '9')
            continue;
        unsigned d = (unsigned)(ch - '0');
        if (n++ & 1) {
            d *= 2;
            if (d > 9)
                d -= 9;
        }
        sum += d;
    }
    return n >= 12 && sum % 10 == 0;
}

/* Stage 2: one pattern. */
static int stage_pattern(const struct cf *c, const struct cpat *p, struct sy_buf *cur, struct sy_buf *tmp,
                         struct sy_gresult *r)
{
    struct spans v = {0}, ctx = {0};
    int out = 0;
    if (p->context) {
        if (sy_gpat_scan(p->context, cur->p, cur->len, on_span, &ctx) < 0 || ctx.oom) {
            free(ctx.s);
            return -1;
        }
        if (!ctx.n)
            return 0;
    }
    struct spans all = {0};
    if (sy_gpat_scan(p->re, cur->p, cur->len, on_span, &all) < 0 || all.oom)
        out = -1;
    else if (p->context) {
        size_t cursor = 0;
        for (size_t i = 0; i < all.n; i++)
            if (near_keyword(cur->p, &ctx, &cursor, all.s[i].off, all.s[i].end))
                span_add(&v, all.s[i].off, all.s[i].end - all.s[i].off);
        free(all.s);
        all = (struct spans){0};
    } else {
        v = all;
        all = (struct spans){0};
    }
    if (p->luhn && !out) {
        size_t k = 0;
        for (size_t i = 0; i < v.n; i++)
            if (luhn_ok(cur->p, v.s[i].off, v.s[i].end))
                v.s[k++] = v.s[i];
        v.n = k;
    }
    if (!out && v.oom)
        out = -1;
    if (!out && v.n) {
        if (p->action == ACT_BLOCK) {
            char msg[512];
            snprintf(msg, sizeof msg, "Content blocked: %s pattern detected", p->name);
            const char *kv[] = {"error", msg, "pattern", p->name};
            block_dict(r, kv, 4);
            const char *dv[] = {"pattern_name", p->name, "action", "BLOCK"};
            detail_json(r, "pattern", dv, 4);
            out = 1;
        } else {
            /* the tag: pattern_redaction_format with {pattern_name} = NAME */
            struct sy_buf tag;
            sy_buf_init(&tag, 1 << 16);
            for (const char *f = c->pattern_fmt; *f; f++) {
                if (!strncmp(f, "{pattern_name}", 14)) {
                    for (const char *q = p->name; *q; q++) {
                        char u = *q >= 'a' && *q <= 'z' ? (char)(*q - 32) : *q;
                        sy_buf_append(&tag, &u, 1);
                    }
                    f += 13;
                } else if ((f[0] == '{' && f[1] == '{') || (f[0] == '}' && f[1] == '}')) {
                    sy_buf_append(&tag, f, 1);
                    f++;
                } else
                    sy_buf_append(&tag, f, 1);
            }
            r->masked += (unsigned)v.n;
            out = sy_buf_failed(&tag) || apply_mask(cur->p, cur->len, &v, tag.p ? tag.p : "", tmp) < 0 ? -1 : 2;
            sy_buf_free(&tag);
        }
    }
    free(v.s);
    free(all.s);
    free(ctx.s);
    return out;
}

struct bwscan {
    const struct cf *c;
    long first_block;
    struct spans mask;
};

static int on_bw(void *ud, const struct sy_gmatch *m)
{
    struct bwscan *s = ud;
    if (s->c->bw[m->id].action == ACT_BLOCK) {
        if (s->first_block < 0 || m->id < s->first_block)
            s->first_block = m->id;
    } else
        span_add(&s->mask, m->off, m->len);
    return 0;
}

/* Stage 3: blocked words. */
static int stage_bwords(const struct cf *c, struct sy_buf *cur, struct sy_buf *tmp, struct sy_gresult *r)
{
    if (!c->nbw)
        return 0;
    struct bwscan s = {.c = c, .first_block = -1};
    int out = 0;
    if (sy_gpat_scan_all(c->bwp, cur->p, cur->len, on_bw, &s) < 0 || s.mask.oom)
        out = -1;
    else if (s.first_block >= 0) {
        const struct bword *w = &c->bw[s.first_block];
        char msg[1024];
        if (w->desc)
            snprintf(msg, sizeof msg, "Content blocked: keyword '%s' detected (%s)", w->kw, w->desc);
        else
            snprintf(msg, sizeof msg, "Content blocked: keyword '%s' detected", w->kw);
        const char *kv[] = {"error", msg, "keyword", w->kw, "description", w->desc};
        block_dict(r, kv, 6);
        const char *dv[] = {"keyword", w->kw, "description", w->desc, "action", "BLOCK"};
        detail_json(r, "blocked_word", dv, 6);
        out = 1;
    } else if (s.mask.n) {
        r->masked += (unsigned)s.mask.n;
        out = apply_mask(cur->p, cur->len, &s.mask, c->kw_tag, tmp) < 0 ? -1 : 2;
    }
    free(s.mask.s);
    return out;
}

/* One text through the stages: 1 blocked, 0 unchanged, 2 masked (cur holds
 * the new text), -1 error. The prefilter first: one scan for every category
 * keyword and blocked word (the common text holds none); while the text is
 * the one it cleared, the keyword stages have nothing to find and are
 * skipped (the exceptions only matter once a category keyword matched). */
static int filter_text(const struct cf *c, struct sy_buf *cur, struct sy_buf *tmp, struct sy_gresult *r)
{
    int changed = 0, clear = 0;
    if (c->nckw || c->nbw) {
        int hit = 0;
        if (sy_gpat_scan_all(c->any, cur->p, cur->len, on_any, &hit) < 0)
            return -1;
        clear = !hit;
    }
    for (size_t st = 0; st < c->npat + 2; st++) {
        int rc = st == 0             ? (clear ? 0 : stage_categories(c, cur, tmp, r))
                 : st <= c->npat     ? stage_pattern(c, &c->pat[st - 1], cur, tmp, r)
                 : changed || !clear ? stage_bwords(c, cur, tmp, r)
                                     : 0;
        if (rc < 0 || rc == 1)
            return rc;
        if (rc == 2) { /* the masked text becomes the current one */
            struct sy_buf t = *cur;
            *cur = *tmp;
            *tmp = t;
            changed = 1;
        }
    }
    return changed ? 2 : 0;
}

static void cf_check(const struct sy_guard *g, const struct sy_ginput *in, struct sy_gresult *r)
{
    const struct cf *c = g->impl;
    struct sy_buf cur, tmp;
    sy_buf_init(&cur, (size_t)1 << 30);
    sy_buf_init(&tmp, (size_t)1 << 30);
    r->verdict = SY_GV_PASS;
    unsigned masked0 = r->masked;
    for (size_t i = 0; c && i < in->nseg; i++) {
        sy_buf_reset(&cur);
        sy_buf_append(&cur, in->seg[i].text ? in->seg[i].text : "", in->seg[i].len);
        if (sy_buf_failed(&cur)) {
            sy_gresult_error(r, "content filter: out of memory");
            break;
        }
        int rc = filter_text(c, &cur, &tmp, r);
        if (rc < 0) {
            sy_gresult_error(r, "content filter: the check could not complete (match limit or memory)");
            break;
        }
        if (rc == 1)
            break;
        if (rc == 2) {
            if (sy_gresult_repl(r, in->nseg) < 0 || !(r->repl[i] = strndup(cur.p, cur.len))) {
                sy_gresult_error(r, "content filter: out of memory");
                break;
            }
            r->verdict = SY_GV_MASKED;
        }
    }
    if (r->verdict == SY_GV_MASKED && !r->detail) {
        char d[64];
        snprintf(d, sizeof d, "{\"type\":\"mask\",\"masked\":%u}", r->masked - masked0);
        r->detail = strdup(d);
    }
    sy_buf_free(&cur);
    sy_buf_free(&tmp);
}

const struct sy_guard_ops sy_guard_content_filter = {
    .name = "litellm_content_filter",
    .modes = SY_GM_PRE | SY_GM_DURING | SY_GM_POST | SY_GM_LOGGING_ONLY,
    .open = cf_open,
    .close = cf_close,
    .check = cf_check,
};
