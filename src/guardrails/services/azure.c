/* azure.c - Azure AI Content Safety guardrails, as LiteLLM's
 * guardrail_hooks/azure/ (base.py, text_moderation.py, prompt_shield.py) call
 * them: `azure/text_moderations` (text:analyze, severity thresholds) and
 * `azure/prompt_shield` (text:shieldPrompt, attack detection).
 *
 *   setting                         kind   default / meaning
 *   ------------------------------  -----  -------------------------------------------------
 *   api_base                        both   required: the resource's endpoint
 *   api_key                         both   required: Ocp-Apim-Subscription-Key (Entra tokens
 *                                          are not supported)
 *   api_version                     both   2024-09-01 (also when "v1")
 *   categories                      text   ["Hate", "Sexual", "SelfHarm", "Violence"]
 *   blocklistNames                  text   null
 *   haltOnBlocklistHit              text   false
 *   outputType                      text   "FourSeverityLevels"
 *   severity_threshold              text   block when a category's severity >= it (0: unset)
 *   severity_threshold_by_category  text   {category: threshold}, checked first
 *                                          (neither set: every category at 2)
 *
 * What is checked: on the request (pre_call, during_call) the last block of user
 * messages (LiteLLM's get_last_user_message: the trailing user messages' texts joined
 * with "\n", stripped); on the answer (text moderation's post_call) the first
 * choice's text. No text: nothing is sent. A text longer than 10,000 characters
 * (Azure's limit) is sent in chunks cut at word boundaries (base.py's
 * split_text_by_words), one request after the other; the first chunk that
 * violates blocks.
 *
 *   POST {api_base}/contentsafety/text:analyze?api-version={v}
 *        {"text": chunk, "categories": [...], "blocklistNames": null,
 *         "haltOnBlocklistHit": false, "outputType": "FourSeverityLevels"}
 *     -> categoriesAnalysis[{category, severity}]: BLOCK 400
 *        "{'error': 'Azure Content Safety Guardrail: Hate crossed severity 2, Got severity: 4'}"
 *   POST {api_base}/contentsafety/text:shieldPrompt?api-version={v}
 *        {"documents": [], "userPrompt": chunk}
 *     -> userPromptAnalysis.attackDetected: BLOCK 400 "{'error': 'Violated Azure Prompt Shield
 *        guardrail policy', 'detection_message': \"Attack detected: {'attackDetected': True}\"}"
 *
 * A non-200 answer, or one without categoriesAnalysis / userPromptAnalysis, is an
 * ERROR (LiteLLM raises on the missing key).
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pyrepr.h"
#include "guardrails/guardrail.h"
#include "guardrails/services/svc_b.h"

#define AZ_MAX_CHARS 10000 /* AZURE_CONTENT_SAFETY_MAX_TEXT_LENGTH */

struct bycat {
    char *name;
    double v;
    int is_int;
};

struct azure {
    int shield;
    char *key, *url; /* the whole URL: {api_base}/contentsafety/text:...?api-version=... */
    /* text moderation */
    char *categories, *blocklists; /* JSON texts */
    int halt;
    char *output_type;
    long sev; /* severity_threshold, 0: unset */
    struct bycat *bycat;
    size_t nbycat;
    int has_bycat; /* severity_threshold_by_category given (even empty) */
};

struct az_state {
    char *text;
    size_t len, off, end;
};

static void az_free(struct azure *z)
{
    if (!z)
        return;
    free(z->key);
    free(z->url);
    free(z->categories);
    free(z->blocklists);
    free(z->output_type);
    for (size_t i = 0; i < z->nbycat; i++)
        free(z->bycat[i].name);
    free(z->bycat);
    free(z);
}

static int fail(struct azure *z, char *err, size_t errlen, const char *msg)
{
    az_free(z);
    snprintf(err, errlen, "%s", msg);
    return -1;
}

/* A JSON array of strings setting as compact JSON text; dflt when absent, NULL on a bad value. */
static char *string_list(struct json_object *p, const char *key, const char *dflt, int *bad)
{
    struct json_object *v = NULL;
    if (!json_object_object_get_ex(p, key, &v) || !v || json_object_is_type(v, json_type_null) ||
        (json_object_is_type(v, json_type_array) && !json_object_array_length(v)))
        return dflt ? strdup(dflt) : NULL; /* LiteLLM: `kwargs.get(...) or <default>` */
    if (!json_object_is_type(v, json_type_array)) {
        *bad = 1;
        return NULL;
    }
    for (size_t i = 0; i < json_object_array_length(v); i++)
        if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string)) {
            *bad = 1;
            return NULL;
        }
    const char *s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    return s ? strdup(s) : NULL;
}

static int az_open_common(struct sy_guard *g, struct json_object *params, int shield, char *err, size_t errlen)
{
    struct azure *z = calloc(1, sizeof *z);
    if (!z)
        return fail(z, err, errlen, "Azure Content Safety: out of memory");
    z->shield = shield;
    const char *base = sy_svcb_str(params, "api_base"), *key = sy_svcb_str(params, "api_key");
    const char *ver = sy_svcb_str(params, "api_version");
    if (!base)
        return fail(z, err, errlen, "Azure Content Safety: api_base is required");
    if (!key)
        return fail(z, err, errlen, "Azure Content Safety: api_key is required (Entra ID tokens are not supported)");
    if (!ver || !strcmp(ver, "v1"))
        ver = "2024-09-01";
    if ((strncmp(base, "http://", 7) && strncmp(base, "https://", 8)) || !sy_svcb_url_safe(base) ||
        strpbrk(base, "?#") || !sy_svcb_url_safe(ver) || strpbrk(ver, "&#/?") || strpbrk(key, "\r\n"))
        return fail(z, err, errlen,
                    "Azure Content Safety: api_base, api_version or api_key is not usable in a request");
    if (asprintf(&z->url, "%s/contentsafety/%s?api-version=%s", base, shield ? "text:shieldPrompt" : "text:analyze",
                 ver) < 0) {
        z->url = NULL;
        return fail(z, err, errlen, "Azure Content Safety: out of memory");
    }
    int oom = 0, bad = 0;
    z->key = sy_svcb_dup(key, &oom);
    if (!shield) {
        z->categories = string_list(params, "categories", "[\"Hate\",\"Sexual\",\"SelfHarm\",\"Violence\"]", &bad);
        z->blocklists = string_list(params, "blocklistNames", NULL, &bad);
        if (bad)
            return fail(z, err, errlen, "Azure Content Safety: categories and blocklistNames must be lists of strings");
        z->halt = sy_svcb_bool(params, "haltOnBlocklistHit", 0);
        const char *ot = sy_svcb_str(params, "outputType");
        z->output_type = sy_svcb_dup(ot ? ot : "FourSeverityLevels", &oom);
        double d;
        int rc = sy_svcb_num(params, "severity_threshold", &d, NULL);
        if (rc < 0)
            return fail(z, err, errlen, "Azure Content Safety: severity_threshold must be a number");
        z->sev = rc ? (long)d : 0; /* int(x) if x else None */
        struct json_object *bc = NULL;
        if (json_object_object_get_ex(params, "severity_threshold_by_category", &bc) && bc &&
            !json_object_is_type(bc, json_type_null)) {
            if (!json_object_is_type(bc, json_type_object))
                return fail(z, err, errlen, "Azure Content Safety: severity_threshold_by_category must be a mapping");
            z->has_bycat = 1;
            size_t n = (size_t)json_object_object_length(bc);
            z->bycat = calloc(n ? n : 1, sizeof *z->bycat);
            oom |= !z->bycat;
            json_object_object_foreach(bc, k, v)
            {
                if (oom)
                    break;
                if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
                    return fail(z, err, errlen,
                                "Azure Content Safety: severity_threshold_by_category values must be numbers");
                struct bycat *c = &z->bycat[z->nbycat++];
                c->name = sy_svcb_dup(k, &oom);
                c->is_int = json_object_is_type(v, json_type_int);
                c->v = c->is_int ? (double)json_object_get_int64(v) : json_object_get_double(v);
            }
        }
    }
    if (oom)
        return fail(z, err, errlen, "Azure Content Safety: out of memory");
    g->impl = z;
    return 0;
}

static int az_open_text(struct sy_guard *g, struct json_object *params, const struct sy_genv *env, char *err,
                        size_t errlen)
{
    (void)env;
    return az_open_common(g, params, 0, err, errlen);
}

static int az_open_shield(struct sy_guard *g, struct json_object *params, const struct sy_genv *env, char *err,
                          size_t errlen)
{
    (void)env;
    return az_open_common(g, params, 1, err, errlen);
}

static void az_close(struct sy_guard *g)
{
    az_free(g->impl);
    g->impl = NULL;
}

static void az_free_state(void *state)
{
    struct az_state *s = state;
    if (s)
        free(s->text);
    free(s);
}

/* The first choice's text of an answer (text moderation's post_call). */
static char *first_choice(const struct sy_ginput *in, size_t *len)
{
    struct sy_buf b;
    sy_buf_init(&b, SY_SVCB_BODY_MAX);
    int msg = 0, have = 0;
    for (size_t i = 0; i < in->nseg; i++) {
        const struct sy_gseg *s = &in->seg[i];
        if (!sy_svcb_is_answer_text(s))
            continue;
        if (!have) {
            msg = s->msg;
            have = 1;
        }
        if (in->dialect != SY_GD_CHAT || s->msg == msg)
            sy_buf_append(&b, s->text, s->len);
    }
    if (sy_buf_failed(&b) || !b.len) {
        sy_buf_free(&b);
        return NULL;
    }
    *len = b.len;
    return b.p;
}

static int az_request(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state,
                      struct sy_ghttp *req)
{
    const struct azure *z = g->impl;
    struct az_state *st = *state;
    if (!z)
        return -1;
    if (!st) {
        if (step != 0)
            return -1;
        size_t len = 0;
        int oom = 0;
        char *text =
            in->phase == SY_GM_POST ? (z->shield ? NULL : first_choice(in, &len)) : sy_svcb_last_user(in, &len, &oom);
        if (!text) /* nothing to check */
            return oom ? -1 : 0;
        if (!(st = calloc(1, sizeof *st))) {
            free(text);
            return -1;
        }
        st->text = text;
        st->len = len;
        *state = st;
    }
    st->end = sy_svcb_chunk_end(st->text, st->len, st->off, AZ_MAX_CHARS);
    int rc = sy_svcb_post(req, z->url);
    rc |= sy_svcb_header(req, "Ocp-Apim-Subscription-Key", z->key);
    rc |= sy_svcb_header(req, "Content-Type", "application/json");
    struct sy_jw w;
    sy_jw_init(&w, &req->body);
    sy_jw_obj(&w);
    if (z->shield) {
        sy_jw_key(&w, "documents");
        sy_jw_raw(&w, "[]", 2);
        sy_jw_key(&w, "userPrompt");
        sy_jw_str(&w, st->text + st->off, st->end - st->off);
    } else {
        sy_jw_key(&w, "text");
        sy_jw_str(&w, st->text + st->off, st->end - st->off);
        sy_jw_key(&w, "categories");
        sy_jw_raw(&w, z->categories, strlen(z->categories));
        sy_jw_key(&w, "blocklistNames");
        if (z->blocklists)
            sy_jw_raw(&w, z->blocklists, strlen(z->blocklists));
        else
            sy_jw_null(&w);
        sy_jw_key(&w, "haltOnBlocklistHit");
        sy_jw_bool(&w, z->halt);
        sy_jw_key(&w, "outputType");
        sy_jw_cstr(&w, z->output_type);
    }
    sy_jw_end(&w);
    return rc || w.err ? -1 : 0;
}

/* The block message of a category over its threshold (thr as Python prints it). */
static void sev_block(struct sy_gresult *r, const struct sy_jdoc *d, uint32_t cat, uint32_t sev, const char *thr,
                      struct sy_arena *a)
{
    struct sy_buf t, m;
    sy_buf_init(&t, 1 << 20);
    sy_buf_init(&m, 1 << 20);
    SY_BUF_LIT(&t, "Azure Content Safety Guardrail: ");
    sy_svcb_str_node(&t, d, cat, a);
    SY_BUF_LIT(&t, " crossed severity ");
    sy_buf_puts(&t, thr);
    SY_BUF_LIT(&t, ", Got severity: ");
    sy_svcb_str_node(&t, d, sev, a);
    SY_BUF_LIT(&m, "{'error': ");
    sy_py_str_repr(&m, t.p ? t.p : "", t.len);
    SY_BUF_LIT(&m, "}");
    if (sy_buf_failed(&t) || sy_buf_failed(&m))
        sy_gresult_error(r, "Azure Content Safety: out of memory");
    else
        sy_gresult_block(r, 400, "%s", m.p);
    sy_buf_free(&t);
    sy_buf_free(&m);
}

/* check_severity_threshold over categoriesAnalysis: 1 when it blocked (r filled). */
static int check_severity(const struct azure *z, const struct sy_jdoc *d, uint32_t list, struct sy_gresult *r,
                          struct sy_arena *a)
{
    char thr[SY_PY_FLOAT_MAX + 8];
    if (z->nbycat)
        for (uint32_t e = sy_jdom_first(d, list); e; e = sy_jdom_next(d, e)) {
            uint32_t cat = sy_jdom_at(d, d->n[e].type == 'o' ? e : 0, "category");
            uint32_t sev = sy_jdom_at(d, d->n[e].type == 'o' ? e : 0, "severity");
            double s;
            if (sy_jdom_kind(d, cat) != 's' || !sy_jdom_num(d, sev, &s))
                continue;
            for (size_t i = 0; i < z->nbycat; i++)
                if (sy_jdom_str_eq(d, cat, z->bycat[i].name) && s >= z->bycat[i].v) {
                    if (z->bycat[i].is_int)
                        snprintf(thr, sizeof thr, "%lld", (long long)z->bycat[i].v);
                    else
                        sy_py_float_str(thr, z->bycat[i].v);
                    sev_block(r, d, cat, sev, thr, a);
                    return 1;
                }
        }
    long t = z->sev ? z->sev : (!z->has_bycat ? 2 : 0); /* default_severity_threshold */
    if (!t)
        return 0;
    for (uint32_t e = sy_jdom_first(d, list); e; e = sy_jdom_next(d, e)) {
        uint32_t cat = sy_jdom_at(d, d->n[e].type == 'o' ? e : 0, "category");
        uint32_t sev = sy_jdom_at(d, d->n[e].type == 'o' ? e : 0, "severity");
        double s;
        if (!sy_jdom_num(d, sev, &s) || s < (double)t)
            continue;
        snprintf(thr, sizeof thr, "%ld", t);
        sev_block(r, d, cat, sev, thr, a);
        return 1;
    }
    return 0;
}

static int truthy(const struct sy_jdoc *d, uint32_t v)
{
    double x;
    switch (sy_jdom_kind(d, v)) {
    case 't': return 1;
    case 'n': return sy_jdom_num(d, v, &x) && x != 0;
    case 's': return d->n[v].len > 2;
    case 'a':
    case 'o': return d->n[v].kids > 0;
    default: return 0;
    }
}

static int az_answer(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state, int status,
                     const char *body, size_t n, struct sy_gresult *r)
{
    (void)in;
    (void)step;
    const struct azure *z = g->impl;
    struct az_state *st = *state;
    const char *what = z->shield ? "Azure Prompt Shield" : "Azure Content Safety";
    if (status != 200) {
        sy_gresult_error(r, "%s: the service answered HTTP %d", what, status);
        return SY_GSTEP_DONE;
    }
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    uint32_t an = 0;
    if (sy_svcb_parse(&d, body, n, &a) == 0 && d.n[0].type == 'o')
        an = sy_jdom_get(&d, 0, z->shield ? "userPromptAnalysis" : "categoriesAnalysis");
    if (sy_jdom_kind(&d, an) != (z->shield ? 'o' : 'a')) {
        sy_gresult_error(r, "%s: the service's answer has no %s", what,
                         z->shield ? "userPromptAnalysis" : "categoriesAnalysis");
        sy_arena_free(&a);
        return SY_GSTEP_DONE;
    }
    free(r->detail);
    r->detail = n <= 65536 ? strndup(body, n) : NULL;
    int blocked = 0;
    if (z->shield && truthy(&d, sy_jdom_get(&d, an, "attackDetected"))) {
        struct sy_buf t, m;
        sy_buf_init(&t, 1 << 20);
        sy_buf_init(&m, 1 << 20);
        SY_BUF_LIT(&t, "Attack detected: ");
        sy_svcb_str_node(&t, &d, an, &a);
        SY_BUF_LIT(&m, "{'error': 'Violated Azure Prompt Shield guardrail policy', 'detection_message': ");
        sy_py_str_repr(&m, t.p ? t.p : "", t.len);
        SY_BUF_LIT(&m, "}");
        if (sy_buf_failed(&t) || sy_buf_failed(&m))
            sy_gresult_error(r, "Azure Prompt Shield: out of memory");
        else
            sy_gresult_block(r, 400, "%s", m.p);
        sy_buf_free(&t);
        sy_buf_free(&m);
        blocked = 1;
    } else if (!z->shield)
        blocked = check_severity(z, &d, an, r, &a);
    sy_arena_free(&a);
    if (blocked || !st || st->end >= st->len)
        return SY_GSTEP_DONE;
    st->off = st->end; /* the next chunk */
    return SY_GSTEP_MORE;
}

const struct sy_guard_ops sy_guard_azure_text_moderations = {
    .name = "azure/text_moderations",
    .modes = SY_GM_PRE | SY_GM_DURING | SY_GM_POST,
    .open = az_open_text,
    .close = az_close,
    .request = az_request,
    .answer = az_answer,
    .free_state = az_free_state,
};

const struct sy_guard_ops sy_guard_azure_prompt_shield = {
    .name = "azure/prompt_shield",
    .modes = SY_GM_PRE | SY_GM_DURING,
    .open = az_open_shield,
    .close = az_close,
    .request = az_request,
    .answer = az_answer,
    .free_state = az_free_state,
};
