/* openai_moderation.c - `guardrail: openai_moderation`: OpenAI's moderation
 * endpoint as LiteLLM's OpenAIModerationGuardrail calls it
 * (guardrail_hooks/openai/moderations.py).
 *
 * Where the request goes:
 *   - OpenAI (or any compatible server): POST `api_base` (default
 *     https://api.openai.com/v1) + "/moderations", Authorization: Bearer
 *     `api_key` (else OPENAI_API_KEY; none: the config is refused with
 *     LiteLLM's message), body {"model": `model` (default
 *     omni-moderation-latest), "input": text};
 *   - a model group of this config: `model: <group>` names it (as the legacy
 *     `openai_moderations_model_name` did); the request goes to the group's
 *     deployment with its credentials (struct sy_genv.group_target). The body
 *     names the model only when the group is named after a moderation model
 *     (the deployment's own model name is not known here), else the server's
 *     default applies. A `model` that is neither OpenAI's moderation model
 *     nor a group refuses the config.
 *
 * What is checked (as LiteLLM): on the request, the last run of user messages
 * (each message's text parts concatenated, the messages joined by "\n", then
 * strip()), nothing when the last message is not the user's; on the answer,
 * the texts joined by "\n". LiteLLM reads only `messages`, so it never checks
 * /v1/responses; here the Responses input's user texts are checked the same way.
 *
 * The answer: results[0].flagged -> BLOCK with str() of LiteLLM's detail
 * {'error': 'Violated OpenAI moderation policy', 'moderation_result':
 * {'violated_categories': [...], 'category_scores': {...}}}; a non-200 status
 * or an answer without `results` -> ERROR.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

#include "guardrails/services/svc_a.h"

struct om {
    char *url;
    char *auth;  /* header lines */
    char *model; /* the body's model, or NULL (a group's server default) */
    int nokey;   /* no api_key at load: every check is an error */
};

static int known_model(const char *m)
{
    return !strcmp(m, "omni-moderation-latest") || !strcmp(m, "text-moderation-latest");
}

static void om_close(struct sy_guard *g)
{
    struct om *x = g->impl;
    if (!x)
        return;
    free(x->url);
    free(x->auth);
    free(x->model);
    free(x);
    g->impl = NULL;
}

static int om_open(struct sy_guard *g, struct json_object *params, const struct sy_genv *env, char *err, size_t errlen)
{
    const char *model = sy_sva_str(params, "model");
    struct om *x = calloc(1, sizeof *x);
    if (!x)
        goto oom;
    g->impl = x;
    char url[2048], auth[4096];
    if (model && env && env->group_target &&
        env->group_target(env->ud, model, url, sizeof url, auth, sizeof auth) == 0) {
        if (asprintf(&x->url, "%s/moderations", url) < 0)
            x->url = NULL;
        x->auth = strdup(auth);
        x->model = known_model(model) ? strdup(model) : NULL;
        if (!x->url || !x->auth || (known_model(model) && !x->model))
            goto oom;
        return 0;
    }
    if (model && !known_model(model)) {
        snprintf(err, errlen,
                 "OpenAI Moderation: model '%.200s' is neither an OpenAI moderation model (omni-moderation-latest, "
                 "text-moderation-latest) nor a model group of this config",
                 model);
        goto fail;
    }
    const char *key = sy_sva_str(params, "api_key");
    if (!key)
        key = getenv("OPENAI_API_KEY");
    if (!key || !*key) { /* as LiteLLM, a failure of the check, not of the config: it fails closed per call */
        char m[512];
        snprintf(m, sizeof m,
                 "guardrail %s: OpenAI Moderation: api_key is required. Set OPENAI_API_KEY environment variable or "
                 "pass it in configuration. Its checks fail until then.",
                 g->name);
        if (env && env->warn)
            env->warn(env->warn_ud, m);
        else
            sy_warn("%s", m);
        x->nokey = 1;
        return 0;
    }
    const char *base = sy_sva_str(params, "api_base");
    if (!base)
        base = "https://api.openai.com/v1";
    if (!sy_sva_line_safe(key) || !sy_sva_line_safe(base)) {
        snprintf(err, errlen, "OpenAI Moderation: api_key or api_base has a control character");
        goto fail;
    }
    char *b = sy_sva_base(base);
    if (!b || asprintf(&x->url, "%s/moderations", b) < 0)
        x->url = NULL;
    free(b);
    if (asprintf(&x->auth, "Authorization: Bearer %s\r\n", key) < 0)
        x->auth = NULL;
    x->model = strdup(model ? model : "omni-moderation-latest");
    if (!x->url || !x->auth || !x->model)
        goto oom;
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    om_close(g);
    return -1;
}

/* The text LiteLLM moderates (see the top), malloc'd, or NULL (none; *oom on failure). */
static char *om_text(const struct sy_ginput *in, size_t *len, int *oom)
{
    struct sy_buf b;
    sy_buf_init(&b, (size_t)1 << 30);
    *oom = 0;
    if (in->phase == SY_GM_POST) {
        int prev = -1, any = 0;
        for (size_t i = 0; i < in->nseg; i++) {
            const struct sy_gseg *s = &in->seg[i];
            if (s->kind != SY_GK_TEXT || !s->len)
                continue;
            if (any && s->msg != prev)
                SY_BUF_LIT(&b, "\n");
            sy_buf_append(&b, s->text, s->len);
            prev = s->msg;
            any = 1;
        }
    } else {
        size_t i = in->nseg;
        while (i > 0 && in->seg[i - 1].role == SY_GR_USER)
            i--;
        int prev = -1;
        for (; i < in->nseg; i++) {
            const struct sy_gseg *s = &in->seg[i];
            if (s->kind != SY_GK_TEXT)
                continue;
            if (prev != -1 && s->msg != prev)
                SY_BUF_LIT(&b, "\n");
            sy_buf_append(&b, s->text, s->len);
            prev = s->msg;
        }
    }
    if (sy_buf_failed(&b)) {
        *oom = 1;
        sy_buf_free(&b);
        return NULL;
    }
    size_t s0 = 0, s1 = 0;
    if (b.p)
        sy_sva_strip(b.p, b.len, &s0, &s1);
    if (s1 <= s0) {
        sy_buf_free(&b);
        return NULL;
    }
    char *t = strndup(b.p + s0, s1 - s0);
    sy_buf_free(&b);
    if (!t)
        *oom = 1;
    *len = s1 - s0;
    return t;
}

static int om_request(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state,
                      struct sy_ghttp *req)
{
    (void)step;
    (void)state;
    const struct om *x = g->impl;
    memset(req, 0, sizeof *req);
    if (x->nokey)
        return -1;
    size_t tl = 0;
    int oom;
    char *text = om_text(in, &tl, &oom);
    if (!text)
        return oom ? -1 : 0;
    if (sy_sva_post(req, x->url) < 0) {
        free(text);
        sy_ghttp_free(req);
        return -1;
    }
    sy_buf_append(&req->headers, x->auth, strlen(x->auth));
    SY_BUF_LIT(&req->headers, "Content-Type: application/json\r\n");
    sy_buf_reserve(&req->body, tl + tl / 8 + 256);
    struct sy_jw w;
    sy_jw_init(&w, &req->body);
    sy_jw_obj(&w);
    if (x->model) {
        sy_jw_key(&w, "model");
        sy_jw_cstr(&w, x->model);
    }
    sy_jw_key(&w, "input");
    sy_jw_str(&w, text, tl);
    sy_jw_end(&w);
    free(text);
    if (w.err || sy_buf_failed(&req->body) || sy_buf_failed(&req->headers)) {
        sy_ghttp_free(req);
        return -1;
    }
    return 0;
}

static int om_answer(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state, int status,
                     const char *body, size_t n, struct sy_gresult *r)
{
    (void)g;
    (void)in;
    (void)step;
    (void)state;
    if (status != 200) {
        sy_gresult_error(r, "OpenAI Moderation API request failed: HTTP %d", status);
        return SY_GSTEP_DONE;
    }
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    uint32_t res;
    if (sy_sva_parse(&d, body, n, &a) < 0 || sy_jdom_type(&d, 0) != 'o' ||
        sy_jdom_kind(&d, res = sy_jdom_top(&d, "results")) != 'a') {
        sy_gresult_error(r, "OpenAI Moderation API request failed: the answer has no results");
        goto out;
    }
    uint32_t r0 = sy_jdom_first(&d, res);
    int flagged = 0;
    if (!r0 || sy_jdom_type(&d, r0) != 'o' || !sy_jdom_bool(&d, sy_jdom_member(&d, r0, "flagged"), &flagged) ||
        !flagged) {
        r->verdict = SY_GV_PASS;
        r->detail = strdup("{\"flagged\":false}");
        goto out;
    }
    /* the violated categories (a true value), in the answer's order, and the scores */
    struct sy_buf mr;
    sy_buf_init(&mr, SY_SVA_BODY_MAX);
    struct sy_jw w;
    sy_jw_init(&w, &mr);
    sy_jw_obj(&w);
    sy_jw_key(&w, "violated_categories");
    sy_jw_arr(&w);
    uint32_t cats = sy_jdom_member(&d, r0, "categories");
    if (sy_jdom_kind(&d, cats) == 'o')
        for (uint32_t k = sy_jdom_first(&d, cats); k; k = sy_jdom_next_key(&d, k))
            if (sy_jdom_type(&d, sy_jdom_val(k)) == 't')
                sy_jw_node(&w, &d, k);
    sy_jw_end(&w);
    sy_jw_key(&w, "category_scores");
    uint32_t sc = sy_jdom_member(&d, r0, "category_scores");
    if (sy_jdom_kind(&d, sc) == 'o' && d.n[sc].kids)
        sy_jw_node(&w, &d, sc);
    else
        sy_jw_raw(&w, "{}", 2);
    sy_jw_end(&w);
    struct sy_buf det, msg;
    sy_buf_init(&det, SY_SVA_BODY_MAX);
    sy_buf_init(&msg, SY_SVA_BODY_MAX);
    sy_buf_printf(&det, "{\"error\":\"Violated OpenAI moderation policy\",\"moderation_result\":%s}",
                  mr.p ? mr.p : "{}");
    if (w.err || sy_buf_failed(&mr) || sy_buf_failed(&det) || sy_sva_pystr_json(&msg, det.p, det.len) < 0 ||
        sy_buf_failed(&msg))
        sy_gresult_error(r, "out of memory");
    else {
        sy_gresult_block(r, 400, "%s", msg.p);
        if (asprintf(&r->detail, "{\"flagged\":true,%s", mr.p + 1) < 0)
            r->detail = NULL;
    }
    sy_buf_free(&mr);
    sy_buf_free(&det);
    sy_buf_free(&msg);
out:
    sy_arena_free(&a);
    return SY_GSTEP_DONE;
}

const struct sy_guard_ops sy_guard_openai_moderation = {
    .name = "openai_moderation",
    .modes = SY_GM_PRE | SY_GM_DURING | SY_GM_POST,
    .open = om_open,
    .close = om_close,
    .request = om_request,
    .answer = om_answer,
};
