/* presidio.c - `guardrail: presidio`: Microsoft Presidio's analyzer and
 * anonymizer REST APIs as LiteLLM's _OPTIONAL_PresidioPIIMasking calls them
 * (guardrail_hooks/presidio.py).
 *
 * Settings: presidio_analyzer_api_base / presidio_anonymizer_api_base (else
 * PRESIDIO_ANALYZER_API_BASE / PRESIDIO_ANONYMIZER_API_BASE; "http://" is
 * prefixed when there is no scheme, "/" appended), presidio_language ("en"),
 * pii_entities_config ({ENTITY: MASK|BLOCK}: the entities asked for),
 * presidio_score_thresholds ({ENTITY: min score}, "ALL" for the rest),
 * presidio_entities_deny_list (entities dropped), output_parse_pii (reversible
 * tokens), apply_to_output (mask the answer too), presidio_ad_hoc_recognizers
 * (a JSON file read once at load, sent with each analyze), and
 * unreachable_fallback, whose default for presidio is fail_open (LiteLLM's).
 *
 * The texts (every message content string / text part of the request; the
 * answer's texts when apply_to_output; blank ones left out) are checked
 * together: LiteLLM sends one analyze + anonymize pair per text, all at once;
 * the engine runs a service's steps one after the other, so here the texts are
 * joined with a separator line holding a random part no text contains, and a
 * check is at most two requests whatever the number of texts:
 *
 *   analyze    POST <analyzer>analyze {"text", "language" (the request's
 *              metadata.guardrail_config.language, else presidio_language),
 *              ["ad_hoc_recognizers"], ["entities": the configured ones]}
 *              updated with the request's extra_body; earlier tokens
 *              (<PERSON_1>) blanked out. Results filtered by the deny list and
 *              the thresholds; a finding across a separator is dropped; one
 *              whose entity is configured BLOCK -> BLOCK "Blocked entity
 *              detected: <ENTITY> by Guardrail: <name>. This entity is not
 *              allowed to be used in this request." (LiteLLM's
 *              BlockedPiiEntityError). No finding: the texts stay.
 *   anonymize  POST <anonymizer>anonymize {"text", "analyzer_results"}: its
 *              `text` (Presidio's <ENTITY> tags), cut at the separators again,
 *              replaces the texts.
 *              With output_parse_pii the texts are instead rewritten here with
 *              numbered tokens <ENTITY_n> (n counts through the request) from
 *              the analyzer's spans, as LiteLLM does, and each token and its
 *              original go to r->pairs so the answer gets the originals back;
 *              the anonymizer is not called (LiteLLM calls it and ignores it).
 *
 * Overlapping spans: LiteLLM splices them in reverse and garbles the text; here
 * a span that overlaps an earlier one is left out. A non-2xx analyzer answer,
 * a non-JSON one or {"error": ...} -> ERROR when the guardrail protects
 * anything (pii_entities_config, output_parse_pii or apply_to_output), else
 * the texts pass (LiteLLM's _fail_on_invalid_response); any anonymizer failure
 * (one that does not give back as many texts as were sent included) -> ERROR.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "guardrails/services/svc_a.h"

struct pr_ent {
    char *name;
    int block; /* PiiAction BLOCK, else MASK */
};
struct pr_thr {
    char *name;
    double min;
};

struct pr {
    char *analyze_url, *anonymize_url;
    char *language;
    char *ad_hoc; /* JSON text of the recognizers file, or NULL */
    struct pr_ent *ent;
    size_t nent;
    struct pr_thr *thr;
    size_t nthr;
    char **deny;
    size_t ndeny;
    int output_parse_pii, apply_to_output;
};

static void pr_close(struct sy_guard *g)
{
    struct pr *x = g->impl;
    if (!x)
        return;
    free(x->analyze_url);
    free(x->anonymize_url);
    free(x->language);
    free(x->ad_hoc);
    for (size_t i = 0; i < x->nent; i++)
        free(x->ent[i].name);
    free(x->ent);
    for (size_t i = 0; i < x->nthr; i++)
        free(x->thr[i].name);
    free(x->thr);
    for (size_t i = 0; i < x->ndeny; i++)
        free(x->deny[i]);
    free(x->deny);
    free(x);
    g->impl = NULL;
}

/* <base>/<path> with LiteLLM's fix-ups (a scheme added, a slash between). */
static char *endpoint(const char *base, const char *path)
{
    int scheme = !strncmp(base, "http://", 7) || !strncmp(base, "https://", 8);
    size_t n = strlen(base);
    char *u = NULL;
    if (asprintf(&u, "%s%s%s%s", scheme ? "" : "http://", base, n && base[n - 1] == '/' ? "" : "/", path) < 0)
        return NULL;
    return u;
}

static char *read_json_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT)
            snprintf(err, errlen, "File not found. file_path=%s", path);
        else
            snprintf(err, errlen, "An error occurred: %s, file_path=%s", strerror(errno), path);
        return NULL;
    }
    struct sy_buf b;
    sy_buf_init(&b, (size_t)16 << 20);
    char chunk[8192];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        sy_buf_append(&b, chunk, k);
    fclose(f);
    struct json_object *o = b.p && !sy_buf_failed(&b) ? json_tokener_parse(b.p) : NULL;
    if (!o) {
        snprintf(err, errlen, "Error decoding JSON file: not JSON, file_path=%s", path);
        sy_buf_free(&b);
        return NULL;
    }
    char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    sy_buf_free(&b);
    return s;
}

static int pr_open(struct sy_guard *g, struct json_object *params, const struct sy_genv *env, char *err, size_t errlen)
{
    (void)env;
    struct pr *x = calloc(1, sizeof *x);
    if (!x)
        goto oom;
    g->impl = x;
    const char *an = sy_sva_str(params, "presidio_analyzer_api_base");
    if (!an)
        an = getenv("PRESIDIO_ANALYZER_API_BASE");
    const char *anon = sy_sva_str(params, "presidio_anonymizer_api_base");
    if (!anon)
        anon = getenv("PRESIDIO_ANONYMIZER_API_BASE");
    if (!an || !*an) {
        snprintf(err, errlen, "Missing `PRESIDIO_ANALYZER_API_BASE` from environment");
        goto fail;
    }
    if (!anon || !*anon) {
        snprintf(err, errlen, "Missing `PRESIDIO_ANONYMIZER_API_BASE` from environment");
        goto fail;
    }
    if (!sy_sva_line_safe(an) || !sy_sva_line_safe(anon)) {
        snprintf(err, errlen, "presidio: an api base has a control character");
        goto fail;
    }
    x->analyze_url = endpoint(an, "analyze");
    x->anonymize_url = endpoint(anon, "anonymize");
    const char *lang = sy_sva_str(params, "presidio_language");
    x->language = strdup(lang ? lang : "en");
    if (!x->analyze_url || !x->anonymize_url || !x->language)
        goto oom;

    struct json_object *o;
    if (json_object_object_get_ex(params, "pii_entities_config", &o) && o) {
        if (!json_object_is_type(o, json_type_object)) {
            snprintf(err, errlen, "presidio: pii_entities_config must map entity types to MASK or BLOCK");
            goto fail;
        }
        x->ent = calloc((size_t)json_object_object_length(o) + 1, sizeof *x->ent);
        if (!x->ent)
            goto oom;
        json_object_object_foreach(o, k, v)
        {
            const char *a = v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
            if (strcmp(a, "MASK") && strcmp(a, "BLOCK")) {
                snprintf(err, errlen, "presidio: pii_entities_config.%.64s must be MASK or BLOCK", k);
                goto fail;
            }
            if (!(x->ent[x->nent].name = strdup(k)))
                goto oom;
            x->ent[x->nent++].block = !strcmp(a, "BLOCK");
        }
    }
    if (json_object_object_get_ex(params, "presidio_score_thresholds", &o) && o) {
        if (!json_object_is_type(o, json_type_object)) {
            snprintf(err, errlen, "presidio: presidio_score_thresholds must map entity types to scores");
            goto fail;
        }
        x->thr = calloc((size_t)json_object_object_length(o) + 1, sizeof *x->thr);
        if (!x->thr)
            goto oom;
        json_object_object_foreach(o, k, v)
        {
            if (!v || !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))) {
                snprintf(err, errlen, "presidio: presidio_score_thresholds.%.64s must be a number", k);
                goto fail;
            }
            if (!(x->thr[x->nthr].name = strdup(k)))
                goto oom;
            x->thr[x->nthr++].min = json_object_get_double(v);
        }
    }
    if (json_object_object_get_ex(params, "presidio_entities_deny_list", &o) && o) {
        if (!json_object_is_type(o, json_type_array)) {
            snprintf(err, errlen, "presidio: presidio_entities_deny_list must be a list of entity types");
            goto fail;
        }
        size_t n = json_object_array_length(o);
        x->deny = calloc(n + 1, sizeof *x->deny);
        if (!x->deny)
            goto oom;
        for (size_t i = 0; i < n; i++) {
            struct json_object *v = json_object_array_get_idx(o, i);
            if (!v || !json_object_is_type(v, json_type_string)) {
                snprintf(err, errlen, "presidio: presidio_entities_deny_list[%zu] must be a string", i);
                goto fail;
            }
            if (!(x->deny[x->ndeny++] = strdup(json_object_get_string(v))))
                goto oom;
        }
    }
    x->output_parse_pii = sy_sva_bool(params, "output_parse_pii", 0);
    x->apply_to_output = sy_sva_bool(params, "apply_to_output", 0);
    const char *adhoc = sy_sva_str(params, "presidio_ad_hoc_recognizers");
    if (adhoc && !(x->ad_hoc = read_json_file(adhoc, err, errlen)))
        goto fail;
    /* LiteLLM's presidio defaults to unreachable_fallback: fail_open */
    if (!json_object_object_get_ex(params, "unreachable_fallback", &o) &&
        !json_object_object_get_ex(params, "fail_open", &o))
        g->fail_open = 1;
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    pr_close(g);
    return -1;
}

/* ---- entity types ---- */

/* LiteLLM's _entity_type_matches: equal, or configured + digits / + "_" digits. */
static int ent_matches(const char *det, size_t dl, const char *conf)
{
    size_t cl = strlen(conf);
    if (dl < cl || memcmp(det, conf, cl))
        return 0;
    if (dl == cl)
        return 1;
    const char *s = det + cl, *e = det + dl;
    if (*s == '_')
        s++;
    if (s == e)
        return 0;
    for (; s < e; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

/* _resolve_configured_entity_type over names[0..n) (stride apart): the index, or -1. */
static long ent_resolve(const char *det, size_t dl, char *const *names, size_t n, size_t stride)
{
    for (size_t i = 0; i < n; i++) {
        const char *c = *(char *const *)((const char *)names + i * stride);
        if (strlen(c) == dl && !memcmp(c, det, dl))
            return (long)i;
    }
    for (size_t i = 0; i < n; i++)
        if (ent_matches(det, dl, *(char *const *)((const char *)names + i * stride)))
            return (long)i;
    return -1;
}

/* ---- the state of a check ---- */

struct pr_count {
    char *name;
    unsigned n;
};

/* A check: every text is analyzed in one call, the texts joined by a
 * separator line with a random part no text contains, and anonymized in one
 * more call; the anonymizer's text is cut at the separators again. */
struct pr_state {
    size_t k;          /* texts checked */
    size_t *seg;       /* their segments */
    size_t *cp0, *cpn; /* each text's first code point in the joined text, and its length */
    char sep[64];      /* the separator (ASCII: bytes = code points) */
    size_t seplen;
    int anonymizing; /* the analyze is done, the anonymize is next */
    char *results;   /* the analyzer results kept (JSON array) for the anonymize */
    char **repl;     /* per segment */
    size_t nseg;
    char *language; /* the request's metadata.guardrail_config.language, or NULL */
    struct sy_gpair *pairs;
    size_t npairs;
    struct pr_count *count;
    size_t ncount;
};

static void pr_free_state(void *p)
{
    struct pr_state *st = p;
    if (!st)
        return;
    free(st->seg);
    free(st->cp0);
    free(st->cpn);
    free(st->results);
    free(st->language);
    for (size_t i = 0; st->repl && i < st->nseg; i++) /* those not moved to the result */
        free(st->repl[i]);
    free(st->repl);
    for (size_t i = 0; i < st->npairs; i++) {
        free(st->pairs[i].placeholder);
        free(st->pairs[i].original);
    }
    free(st->pairs);
    for (size_t i = 0; i < st->ncount; i++)
        free(st->count[i].name);
    free(st->count);
    free(st);
}

static int count_add(struct pr_state *st, const char *name, size_t nl)
{
    for (size_t i = 0; i < st->ncount; i++)
        if (strlen(st->count[i].name) == nl && !memcmp(st->count[i].name, name, nl)) {
            st->count[i].n++;
            return 0;
        }
    struct pr_count *nc = realloc(st->count, (st->ncount + 1) * sizeof *nc);
    if (!nc)
        return -1;
    st->count = nc;
    if (!(nc[st->ncount].name = strndup(name, nl)))
        return -1;
    nc[st->ncount++].n = 1;
    return 0;
}

/* ---- texts ---- */

/* A text this check reads: content of the request, or of the answer with apply_to_output. */
static int eligible(const struct pr *x, const struct sy_ginput *in, size_t i)
{
    const struct sy_gseg *s = &in->seg[i];
    if (in->phase == SY_GM_POST && (!x->apply_to_output || s->kind != SY_GK_TEXT))
        return 0;
    if (!sy_sva_is_content(s))
        return 0;
    size_t b, e;
    sy_sva_strip(s->text, s->len, &b, &e);
    return e > b;
}

/* The length of a token <[A-Z][A-Z0-9_]*_[0-9]+> at p[0..n), 0 when none. */
static size_t token_at(const char *p, size_t n)
{
    if (n < 5 || p[0] != '<' || p[1] < 'A' || p[1] > 'Z')
        return 0;
    size_t i = 2, us = 0;
    while (i < n && ((p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= '0' && p[i] <= '9') || p[i] == '_')) {
        if (p[i] == '_')
            us = i;
        i++;
    }
    if (i >= n || p[i] != '>' || !us || us + 1 == i)
        return 0;
    for (size_t j = us + 1; j < i; j++)
        if (p[j] < '0' || p[j] > '9')
            return 0;
    return i + 1;
}

/* _text_for_pii_analysis: tokens of an earlier masking blanked out (malloc'd). */
static char *analysis_text(const char *s, size_t n)
{
    char *t = malloc(n + 1);
    if (!t)
        return NULL;
    memcpy(t, s, n);
    t[n] = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i] == '<') {
            size_t k = token_at(t + i, n - i);
            if (k) {
                memset(t + i, ' ', k);
                i += k - 1;
            }
        }
    return t;
}

/* ---- requests ---- */

/* PresidioPerRequestConfig: the request's metadata.guardrail_config.language (malloc'd), or NULL. */
static char *request_language(const struct sy_ginput *in)
{
    const char *b = in->phase == SY_GM_POST ? in->request : in->body;
    size_t n = in->phase == SY_GM_POST ? in->request_len : in->body_len;
    if (!b || !n || !memmem(b, n, "guardrail_config", 16))
        return NULL;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    char *out = NULL;
    if (sy_jdom_parse(&d, b, n, &a, 0) == 0 && sy_jdom_type(&d, 0) == 'o') {
        uint32_t gc = sy_jdom_member(&d, sy_jdom_top(&d, "metadata"), "guardrail_config");
        size_t ll;
        const char *l = sy_jdom_str(&d, sy_jdom_member(&d, gc, "language"), &a, &ll);
        if (l && ll)
            out = strndup(l, ll);
    }
    sy_arena_free(&a);
    return out;
}

static void write_analyze(struct sy_jw *w, const struct pr *x, const char *lang, const char *text, size_t n,
                          const char *extra, struct sy_arena *a)
{
    struct sy_jdoc e;
    int he = extra && sy_jdom_parse(&e, extra, strlen(extra), a, 0) == 0 && sy_jdom_type(&e, 0) == 'o';
    sy_jw_obj(w);
#define OWN(k) (!he || !sy_jdom_get(&e, 0, k))
    if (OWN("text")) {
        sy_jw_key(w, "text");
        sy_jw_str(w, text, n);
    }
    if (OWN("language")) {
        sy_jw_key(w, "language");
        sy_jw_cstr(w, lang ? lang : x->language);
    }
    if (x->ad_hoc && OWN("ad_hoc_recognizers")) {
        sy_jw_key(w, "ad_hoc_recognizers");
        sy_jw_raw(w, x->ad_hoc, strlen(x->ad_hoc));
    }
    if (x->nent && OWN("entities")) {
        sy_jw_key(w, "entities");
        sy_jw_arr(w);
        for (size_t i = 0; i < x->nent; i++)
            sy_jw_cstr(w, x->ent[i].name);
        sy_jw_end(w);
    }
#undef OWN
    if (he) /* dict.update(extra_body) */
        for (uint32_t k = sy_jdom_first(&e, 0); k; k = sy_jdom_next_key(&e, k)) {
            size_t kl;
            const char *ks = sy_jdom_str(&e, k, a, &kl);
            if (sy_jdom_get(&e, 0, ks) != sy_jdom_val(k))
                continue;
            sy_jw_keyn(w, ks, kl);
            sy_jw_node(w, &e, sy_jdom_val(k));
        }
    sy_jw_end(w);
}

/* A separator no text of the check contains: 0, or -1. */
static int make_sep(struct pr_state *st, const struct sy_ginput *in)
{
    for (int tries = 0; tries < 8; tries++) {
        unsigned char rnd[12];
        if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
            uint64_t v = (uint64_t)(uintptr_t)st ^ ((uint64_t)tries << 56) ^ (uint64_t)time(NULL);
            for (size_t i = 0; i < sizeof rnd; i++)
                rnd[i] = (unsigned char)(v >> (8 * (i % 8)));
        }
        int n = snprintf(st->sep, sizeof st->sep, "\n\n----- ");
        for (size_t i = 0; i < sizeof rnd; i++)
            n += snprintf(st->sep + n, sizeof st->sep - (size_t)n, "%02x", rnd[i]);
        n += snprintf(st->sep + n, sizeof st->sep - (size_t)n, " -----\n\n");
        st->seplen = (size_t)n;
        size_t i = 0;
        for (; i < st->k; i++) {
            const struct sy_gseg *s = &in->seg[st->seg[i]];
            if (memmem(s->text, s->len, st->sep, st->seplen))
                break;
        }
        if (i == st->k)
            return 0;
    }
    return -1;
}

static struct pr_state *state_new(const struct pr *x, const struct sy_ginput *in)
{
    size_t k = 0;
    for (size_t i = 0; i < in->nseg; i++)
        k += eligible(x, in, i);
    if (!k)
        return NULL;
    struct pr_state *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->seg = malloc(k * sizeof *st->seg);
    st->cp0 = malloc(k * sizeof *st->cp0);
    st->cpn = malloc(k * sizeof *st->cpn);
    st->repl = calloc(in->nseg, sizeof *st->repl);
    st->nseg = in->nseg;
    if (!st->seg || !st->cp0 || !st->cpn || !st->repl) {
        pr_free_state(st);
        return NULL;
    }
    for (size_t i = 0; i < in->nseg; i++)
        if (eligible(x, in, i))
            st->seg[st->k++] = i;
    if (make_sep(st, in) < 0) {
        pr_free_state(st);
        return NULL;
    }
    size_t at = 0;
    for (size_t t = 0; t < st->k; t++) {
        const struct sy_gseg *s = &in->seg[st->seg[t]];
        st->cp0[t] = at;
        st->cpn[t] = sy_sva_cplen(s->text, s->len);
        at += st->cpn[t] + st->seplen;
    }
    st->language = request_language(in);
    return st;
}

/* The texts joined by the separator into b; blanked: earlier tokens blanked out (the analyze). */
static int joined(const struct sy_ginput *in, const struct pr_state *st, int blanked, struct sy_buf *b)
{
    for (size_t t = 0; t < st->k; t++) {
        const struct sy_gseg *s = &in->seg[st->seg[t]];
        if (t)
            sy_buf_append(b, st->sep, st->seplen);
        if (blanked) {
            char *a = analysis_text(s->text, s->len);
            if (!a)
                return -1;
            sy_buf_append(b, a, s->len);
            free(a);
        } else
            sy_buf_append(b, s->text, s->len);
    }
    return sy_buf_failed(b) ? -1 : 0;
}

static int pr_request(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state,
                      struct sy_ghttp *req)
{
    (void)step;
    const struct pr *x = g->impl;
    struct pr_state *st = *state;
    memset(req, 0, sizeof *req);
    if (!st) {
        size_t k = 0;
        for (size_t i = 0; i < in->nseg; i++)
            k += eligible(x, in, i);
        if (!k)
            return 0; /* nothing to check */
        if (!(st = state_new(x, in)))
            return -1;
        *state = st;
    }
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_buf j;
    sy_buf_init(&j, SY_SVA_BODY_MAX);
    struct sy_jw w;
    if (sy_sva_post(req, st->anonymizing ? x->anonymize_url : x->analyze_url) < 0 ||
        joined(in, st, !st->anonymizing, &j) < 0)
        goto oom;
    SY_BUF_LIT(&req->headers, "Content-Type: application/json\r\nAccept: application/json\r\n");
    sy_buf_reserve(&req->body, j.len + j.len / 8 + (st->results ? strlen(st->results) : 0) + 1024);
    sy_jw_init(&w, &req->body);
    if (st->anonymizing) {
        sy_jw_obj(&w);
        sy_jw_key(&w, "text");
        sy_jw_str(&w, j.p, j.len);
        sy_jw_key(&w, "analyzer_results");
        sy_jw_raw(&w, st->results, strlen(st->results));
        sy_jw_end(&w);
    } else
        write_analyze(&w, x, st->language, j.p, j.len, in->extra_body, &a);
    if (w.err || sy_buf_failed(&req->body) || sy_buf_failed(&req->headers))
        goto oom;
    sy_buf_free(&j);
    sy_arena_free(&a);
    return 0;
oom:
    sy_buf_free(&j);
    sy_arena_free(&a);
    sy_ghttp_free(req);
    return -1;
}

/* ---- answers ---- */

/* Member key of object node it (the root included), null as absent. */
static uint32_t mem(const struct sy_jdoc *d, uint32_t it, const char *key)
{
    uint32_t v = sy_jdom_type(d, it) == 'o' ? sy_jdom_get(d, it, key) : 0;
    return sy_jdom_kind(d, v) == 'z' ? 0 : v;
}

#define ENT_NAMES(x) ((x)->nent ? &(x)->ent[0].name : NULL)
#define THR_NAMES(x) ((x)->nthr ? &(x)->thr[0].name : NULL)

static int protects(const struct pr *x)
{
    return x->nent || x->output_parse_pii || x->apply_to_output;
}

struct hit {
    size_t t;          /* the text */
    size_t start, end; /* code points in it, then bytes */
    uint32_t node;
};

static int hit_cmp(const void *a, const void *b)
{
    const struct hit *p = a, *q = b;
    if (p->t != q->t)
        return p->t < q->t ? -1 : 1;
    return p->start < q->start ? -1 : p->start > q->start;
}

/* filter_analyze_results_by_score: 1 when result node it is kept. */
static int keep(const struct pr *x, const struct sy_jdoc *d, uint32_t it, struct sy_arena *a)
{
    size_t tl;
    const char *t = sy_jdom_str(d, mem(d, it, "entity_type"), a, &tl);
    if (t && ent_resolve(t, tl, x->deny, x->ndeny, sizeof *x->deny) >= 0)
        return 0;
    if (!x->nthr)
        return 1;
    long ti = t ? ent_resolve(t, tl, THR_NAMES(x), x->nthr, sizeof *x->thr) : -1;
    const double *min = NULL;
    if (ti >= 0)
        min = &x->thr[ti].min;
    else
        for (size_t i = 0; i < x->nthr; i++)
            if (!strcmp(x->thr[i].name, "ALL"))
                min = &x->thr[i].min;
    if (!min)
        return 1;
    double score;
    return sy_jdom_num(d, mem(d, it, "score"), &score) && score >= *min;
}

/* The check's result into r (SY_GSTEP_DONE). */
static int finish(const struct sy_ginput *in, struct pr_state *st, struct sy_gresult *r)
{
    unsigned masked = 0;
    for (size_t i = 0; i < st->ncount; i++)
        masked += st->count[i].n;
    int changed = 0;
    for (size_t i = 0; i < in->nseg; i++)
        changed |= st->repl[i] != NULL;
    if (changed) {
        if (sy_gresult_repl(r, in->nseg) < 0) {
            sy_gresult_error(r, "out of memory");
            return SY_GSTEP_DONE;
        }
        for (size_t i = 0; i < in->nseg; i++) {
            r->repl[i] = st->repl[i];
            st->repl[i] = NULL;
        }
    }
    r->pairs = st->pairs;
    r->npairs = st->npairs;
    st->pairs = NULL;
    st->npairs = 0;
    r->masked = masked;
    r->verdict = changed ? SY_GV_MASKED : SY_GV_PASS;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    struct sy_jw w;
    sy_jw_init(&w, &b);
    sy_jw_obj(&w);
    sy_jw_key(&w, "masked_entity_count");
    sy_jw_obj(&w);
    for (size_t i = 0; i < st->ncount; i++) {
        sy_jw_key(&w, st->count[i].name);
        sy_jw_int(&w, st->count[i].n);
    }
    sy_jw_end(&w);
    sy_jw_end(&w);
    if (w.err || sy_buf_failed(&b))
        sy_buf_free(&b);
    else
        r->detail = b.p;
    return SY_GSTEP_DONE;
}

/* output_parse_pii: numbered tokens from the analyzer's spans in text h[0].t
 * (LiteLLM's _finalize_presidio_anonymize_numbered_tokens); h sorted by start. */
static int number_tokens(const struct pr *x, const struct sy_ginput *in, struct pr_state *st, const struct sy_jdoc *d,
                         struct hit *h, size_t k, struct sy_arena *a)
{
    size_t si = st->seg[h[0].t];
    const struct sy_gseg *s = &in->seg[si];
    size_t *ix = malloc(2 * k * sizeof *ix);
    if (!ix)
        return -1;
    for (size_t i = 0; i < k; i++) {
        ix[2 * i] = h[i].start;
        ix[2 * i + 1] = h[i].end;
    }
    if (sy_sva_cp2byte(s->text, s->len, ix, 2 * k) < 0) {
        free(ix);
        return -1;
    }
    struct sy_buf out;
    sy_buf_init(&out, SY_SVA_BODY_MAX);
    size_t at = 0;
    int rc = 0;
    for (size_t i = 0; i < k && rc == 0; i++) {
        size_t b0 = ix[2 * i], b1 = ix[2 * i + 1];
        if (b0 < at) /* overlaps the span before: left out */
            continue;
        size_t tl;
        const char *t = sy_jdom_str(d, mem(d, h[i].node, "entity_type"), a, &tl);
        long ci = ent_resolve(t, tl, ENT_NAMES(x), x->nent, sizeof *x->ent);
        const char *name = ci >= 0 ? x->ent[ci].name : t;
        size_t nl = ci >= 0 ? strlen(name) : tl;
        char tok[320];
        int tn = snprintf(tok, sizeof tok, "<%.*s_%zu>", (int)(nl > 256 ? 256 : nl), name, st->npairs + 1);
        struct sy_gpair *np = realloc(st->pairs, (st->npairs + 1) * sizeof *np);
        if (!np) {
            rc = -1;
            break;
        }
        st->pairs = np;
        np[st->npairs].placeholder = strndup(tok, (size_t)tn);
        np[st->npairs].original = strndup(s->text + b0, b1 - b0);
        st->npairs++;
        if (!np[st->npairs - 1].placeholder || !np[st->npairs - 1].original || count_add(st, name, nl) < 0)
            rc = -1;
        sy_buf_append(&out, s->text + at, b0 - at);
        sy_buf_append(&out, tok, (size_t)tn);
        at = b1;
    }
    sy_buf_append(&out, s->text + at, s->len - at);
    free(ix);
    if (rc < 0 || sy_buf_failed(&out)) {
        sy_buf_free(&out);
        return -1;
    }
    free(st->repl[si]);
    st->repl[si] = out.p ? out.p : strdup("");
    return 0;
}

/* The text a span [s0, s1) of the joined text lies in (*t), or -1 (a separator, or across two). */
static int locate(const struct pr_state *st, int64_t s0, int64_t s1, size_t *t)
{
    if (s0 < 0 || s1 <= s0)
        return -1;
    size_t lo = 0, hi = st->k;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (st->cp0[mid] <= (uint64_t)s0)
            lo = mid;
        else
            hi = mid;
    }
    if ((uint64_t)s0 < st->cp0[lo] || (uint64_t)s1 > st->cp0[lo] + st->cpn[lo])
        return -1;
    *t = lo;
    return 0;
}

static int analyzed(const struct sy_guard *g, const struct sy_ginput *in, struct pr_state *st, int status,
                    const char *body, size_t n, struct sy_gresult *r)
{
    const struct pr *x = g->impl;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int rc = SY_GSTEP_DONE;
    int bad = status < 200 || status > 299;
    int parsed = !bad && sy_sva_parse(&d, body, n, &a) == 0;
    struct hit *h = NULL;
    if (!bad && !parsed) {
        sy_gresult_error(r, "Presidio PII analysis failed: the analyzer's answer is not JSON");
        goto out;
    }
    if (parsed && (sy_jdom_type(&d, 0) == 'o' ? sy_jdom_get(&d, 0, "error") != 0 : sy_jdom_type(&d, 0) != 'a'))
        bad = 1;
    if (bad) {
        if (protects(x))
            sy_gresult_error(r, "Presidio analyzer returned invalid response: %s %d",
                             status < 200 || status > 299 ? "HTTP" : "status", status);
        else
            rc = finish(in, st, r); /* an empty list: the texts stay */
        goto out;
    }
    /* the results: a list of objects, or one object */
    int list = sy_jdom_type(&d, 0) == 'a';
    size_t cap = list ? d.n[0].kids : 1, k = 0;
    h = calloc(cap ? cap : 1, sizeof *h);
    if (!h) {
        sy_gresult_error(r, "out of memory");
        goto out;
    }
    for (uint32_t it = list ? sy_jdom_first(&d, 0) : 0; list ? it != 0 : k == 0 && cap--; it = sy_jdom_next(&d, it)) {
        size_t tl;
        const char *t = sy_jdom_str(&d, mem(&d, it, "entity_type"), &a, &tl);
        if (sy_jdom_type(&d, it) != 'o' || !t || !keep(x, &d, it, &a)) {
            if (!list)
                break;
            continue;
        }
        int64_t s0 = -1, s1 = -1;
        int spans = sy_jdom_i64(&d, mem(&d, it, "start"), &s0) && sy_jdom_i64(&d, mem(&d, it, "end"), &s1);
        size_t ti = 0;
        int in_text = spans && locate(st, s0, s1, &ti) == 0;
        /* BLOCK first, as LiteLLM raises before any masking (a span inside a separator is none of the texts') */
        long ci = ent_resolve(t, tl, ENT_NAMES(x), x->nent, sizeof *x->ent);
        if (ci >= 0 && x->ent[ci].block && (in_text || !spans)) {
            sy_gresult_block(r, 400,
                             "Blocked entity detected: %.*s by Guardrail: %s. This entity is not allowed to be used in "
                             "this request.",
                             (int)tl, t, g->name ? g->name : "None");
            if (asprintf(&r->detail, "{\"blocked_entity\":\"%.*s\"}",
                         (int)strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789"), t) < 0)
                r->detail = NULL;
            goto out;
        }
        if (in_text)
            h[k++] = (struct hit){ti, (size_t)s0 - st->cp0[ti], (size_t)s1 - st->cp0[ti], it};
        if (!list)
            break;
    }
    if (!k) {
        rc = finish(in, st, r);
        goto out;
    }
    qsort(h, k, sizeof *h, hit_cmp);
    if (x->output_parse_pii && in->phase != SY_GM_POST) {
        for (size_t i = 0, j; i < k; i = j) {
            for (j = i; j < k && h[j].t == h[i].t;)
                j++;
            if (number_tokens(x, in, st, &d, h + i, j - i, &a) < 0) {
                sy_gresult_error(r, "out of memory");
                goto out;
            }
        }
        rc = finish(in, st, r);
        goto out;
    }
    /* the kept results, as the analyzer wrote them (offsets in the joined text), for the anonymizer */
    struct sy_buf b;
    sy_buf_init(&b, SY_SVA_BODY_MAX);
    SY_BUF_LIT(&b, "[");
    for (size_t i = 0; i < k; i++) {
        size_t rl;
        const char *raw = sy_jdom_raw(&d, h[i].node, &rl);
        if (i)
            SY_BUF_LIT(&b, ",");
        sy_buf_append(&b, raw, rl);
    }
    SY_BUF_LIT(&b, "]");
    if (sy_buf_failed(&b)) {
        sy_buf_free(&b);
        sy_gresult_error(r, "out of memory");
        goto out;
    }
    st->results = b.p;
    st->anonymizing = 1;
    rc = SY_GSTEP_MORE;
out:
    free(h);
    sy_arena_free(&a);
    return rc;
}

static int anonymized(const struct sy_ginput *in, struct pr_state *st, int status, const char *body, size_t n,
                      struct sy_gresult *r)
{
    if (status < 200 || status > 299) {
        sy_gresult_error(r, "Presidio anonymizer returned HTTP %d", status);
        return SY_GSTEP_DONE;
    }
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int rc = SY_GSTEP_DONE;
    uint32_t t;
    if (sy_sva_parse(&d, body, n, &a) < 0 || sy_jdom_type(&d, 0) != 'o' ||
        sy_jdom_kind(&d, t = sy_jdom_top(&d, "text")) != 's') {
        sy_gresult_error(r, "Invalid anonymizer response");
        goto out;
    }
    size_t tl;
    const char *ts = sy_jdom_str(&d, t, &a, &tl);
    /* cut at the separators: exactly one text per text sent */
    const char *p = ts, *e = ts + tl;
    for (size_t i = 0; i < st->k; i++) {
        const char *q = i + 1 < st->k ? memmem(p, (size_t)(e - p), st->sep, st->seplen) : e;
        if (!q || (i + 1 == st->k && memmem(p, (size_t)(e - p), st->sep, st->seplen))) {
            sy_gresult_error(r, "Invalid anonymizer response: its text does not hold the %zu texts sent", st->k);
            goto out;
        }
        size_t si = st->seg[i];
        const struct sy_gseg *s = &in->seg[si];
        if ((size_t)(q - p) != s->len || memcmp(p, s->text, s->len)) {
            free(st->repl[si]);
            if (!(st->repl[si] = strndup(p, (size_t)(q - p)))) {
                sy_gresult_error(r, "out of memory");
                goto out;
            }
        }
        p = q + (i + 1 < st->k ? st->seplen : 0);
    }
    uint32_t items = sy_jdom_top(&d, "items");
    for (uint32_t it = sy_jdom_kind(&d, items) == 'a' ? sy_jdom_first(&d, items) : 0; it; it = sy_jdom_next(&d, it)) {
        size_t el;
        const char *en = sy_jdom_str(&d, mem(&d, it, "entity_type"), &a, &el);
        if (en && count_add(st, en, el) < 0) {
            sy_gresult_error(r, "out of memory");
            goto out;
        }
    }
    rc = finish(in, st, r);
out:
    sy_arena_free(&a);
    return rc;
}

static int pr_answer(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state, int status,
                     const char *body, size_t n, struct sy_gresult *r)
{
    (void)step;
    struct pr_state *st = *state;
    if (!st) {
        sy_gresult_error(r, "presidio: an answer without a request");
        return SY_GSTEP_DONE;
    }
    int rc = st->anonymizing ? anonymized(in, st, status, body, n, r) : analyzed(g, in, st, status, body, n, r);
    if (rc == SY_GSTEP_DONE && r->verdict != SY_GV_MASKED)
        for (size_t i = 0; i < in->nseg; i++) { /* a block or an error: the masked texts go */
            free(st->repl[i]);
            st->repl[i] = NULL;
        }
    return rc;
}

const struct sy_guard_ops sy_guard_presidio = {
    .name = "presidio",
    .modes = SY_GM_PRE | SY_GM_DURING | SY_GM_POST | SY_GM_LOGGING_ONLY,
    .open = pr_open,
    .close = pr_close,
    .request = pr_request,
    .answer = pr_answer,
    .free_state = pr_free_state,
};
