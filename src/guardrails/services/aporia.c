/* aporia.c - the `aporia` guardrail: Aporia Guardrails' REST API, as LiteLLM's
 * guardrail_hooks/aporia_ai/aporia_ai.py calls it (during_call on the request,
 * post_call on the answer).
 *
 *   setting    from
 *   ---------  ------------------------------------------------------------
 *   api_key    litellm_params.api_key, else APORIO_API_KEY (LiteLLM's spelling)
 *   api_base   litellm_params.api_base, else APORIO_API_BASE (the project's URL,
 *              e.g. https://gr-prd.aporia.com/<project id>)
 *
 * Request: POST {api_base}/validate, X-APORIA-API-KEY: <api_key>,
 * Content-Type: application/json, body members in LiteLLM's order:
 *
 *   during_call  {"messages": [...], "validation_target": "prompt"}: the request's
 *                messages as sent, a role other than system/user/assistant
 *                rewritten "other" (put first); on /v1/responses (no `messages`)
 *                one {"role", "content"} per input text
 *   post_call    {"messages": <the request's messages as sent>, "response": <the
 *                answer's texts concatenated>, "validation_target": "both" (or
 *                "prompt" when the answer has no text, "response" when the request
 *                has no messages)}
 *
 * then the request's `guardrails: {<name>: {extra_body: {...}}}` merged in
 * (dict.update: a key it repeats is replaced in place, new keys follow).
 *
 * Answer (HTTP 200 JSON object; anything else is an ERROR: LiteLLM lets a non-200
 * pass silently, the stage's fail_open does that here):
 *
 *   action                 verdict
 *   ---------------------  --------------------------------------------------------
 *   block                  BLOCK 400 "{'error': 'Violated guardrail policy',
 *                          'aporia_ai_response': <the answer as a Python dict>}"
 *   modify / rephrase      post_call: MASKED, the answer's text replaced by
 *                          revised_response (the first text gets it, the others
 *                          are emptied); during_call: PASS (the request is already
 *                          on its way, as in LiteLLM)
 *   passthrough, other     PASS
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guardrails/guardrail.h"
#include "guardrails/services/svc_b.h"

struct aporia {
    char *key, *base;
};

static int ap_open(struct sy_guard *g, struct json_object *params, const struct sy_genv *env, char *err, size_t errlen)
{
    (void)env;
    const char *key = sy_svcb_str(params, "api_key"), *base = sy_svcb_str(params, "api_base");
    if (!key)
        key = getenv("APORIO_API_KEY");
    if (!base)
        base = getenv("APORIO_API_BASE");
    if (!key || !*key) {
        snprintf(err, errlen, "aporia: api_key is required (litellm_params.api_key or APORIO_API_KEY)");
        return -1;
    }
    if (!base || !*base) {
        snprintf(err, errlen, "aporia: api_base is required (litellm_params.api_base or APORIO_API_BASE)");
        return -1;
    }
    if (strncmp(base, "http://", 7) && strncmp(base, "https://", 8)) {
        snprintf(err, errlen, "aporia: api_base must be an http(s) URL");
        return -1;
    }
    if (!sy_svcb_url_safe(base) || strpbrk(key, "\r\n")) {
        snprintf(err, errlen, "aporia: api_base or api_key holds characters a request cannot carry");
        return -1;
    }
    struct aporia *a = calloc(1, sizeof *a);
    int oom = 0;
    if (a) {
        a->key = sy_svcb_dup(key, &oom);
        a->base = sy_svcb_dup(base, &oom);
    }
    if (!a || oom) {
        if (a) {
            free(a->key);
            free(a->base);
        }
        free(a);
        snprintf(err, errlen, "aporia: out of memory");
        return -1;
    }
    g->impl = a;
    return 0;
}

static void ap_close(struct sy_guard *g)
{
    struct aporia *a = g->impl;
    if (a) {
        free(a->key);
        free(a->base);
        free(a);
    }
    g->impl = NULL;
}

static const char *role_name(unsigned char r)
{
    switch (r) {
    case SY_GR_SYSTEM: return "system";
    case SY_GR_USER: return "user";
    case SY_GR_ASSISTANT: return "assistant";
    default: return "other";
    }
}

/* The request's messages array (node), or 0. */
static uint32_t messages_of(struct sy_jdoc *d, const char *body, size_t n, struct sy_arena *a)
{
    if (!body || sy_svcb_parse(d, body, n, a) != 0 || d->n[0].type != 'o')
        return 0;
    uint32_t m = sy_jdom_get(d, 0, "messages");
    return sy_jdom_kind(d, m) == 'a' ? m : 0;
}

/* during_call's messages: roles LiteLLM does not know become "other" (first member). */
static void write_transformed(struct sy_jw *w, const struct sy_jdoc *d, uint32_t msgs, struct sy_arena *a)
{
    sy_jw_arr(w);
    for (uint32_t e = sy_jdom_first(d, msgs); e; e = sy_jdom_next(d, e)) {
        uint32_t role = d->n[e].type == 'o' ? sy_jdom_get(d, e, "role") : 0;
        int known = !role || sy_jdom_str_eq(d, role, "system") || sy_jdom_str_eq(d, role, "user") ||
                    sy_jdom_str_eq(d, role, "assistant");
        if (d->n[e].type != 'o' || known) {
            sy_jw_node(w, d, e);
            continue;
        }
        sy_jw_obj(w);
        sy_jw_key(w, "role");
        sy_jw_cstr(w, "other");
        for (uint32_t k = sy_jdom_first(d, e); k; k = sy_jdom_next_key(d, k)) {
            size_t n;
            const char *ks = sy_jdom_str(d, k, a, &n);
            if (!ks || sy_jdom_str_eq(d, k, "role"))
                continue;
            sy_jw_keyn(w, ks, n);
            sy_jw_node(w, d, sy_jdom_val(k));
        }
        sy_jw_end(w);
    }
    sy_jw_end(w);
}

/* /v1/responses has no messages: one {"role", "content"} per text. */
static void write_from_segments(struct sy_jw *w, const struct sy_ginput *in)
{
    sy_jw_arr(w);
    for (size_t i = 0; i < in->nseg; i++) {
        const struct sy_gseg *s = &in->seg[i];
        if (s->kind != SY_GK_TEXT)
            continue;
        sy_jw_obj(w);
        sy_jw_key(w, "role");
        sy_jw_cstr(w, role_name(s->role));
        sy_jw_key(w, "content");
        sy_jw_str(w, s->text, s->len);
        sy_jw_end(w);
    }
    sy_jw_end(w);
}

static int ap_request(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state,
                      struct sy_ghttp *req)
{
    (void)state;
    const struct aporia *ap = g->impl;
    if (step != 0 || !ap)
        return -1;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    memset(&d, 0, sizeof d);
    int post = in->phase == SY_GM_POST;
    uint32_t msgs =
        post ? messages_of(&d, in->request, in->request_len, &a) : messages_of(&d, in->body, in->body_len, &a);
    int synth = !msgs && in->dialect == SY_GD_RESPONSES && !post;
    int nmsgs = msgs ? (int)d.n[msgs].kids : 0;
    if (synth)
        for (size_t i = 0; i < in->nseg; i++)
            nmsgs += in->seg[i].kind == SY_GK_TEXT;
    if (!post && !msgs && !synth) { /* LiteLLM: "not running guardrail. No messages in data" */
        sy_arena_free(&a);
        return 0;
    }
    size_t rlen = 0;
    char *resp = post ? sy_svcb_answer_text(in, &rlen) : NULL;
    if (post && !resp) {
        sy_arena_free(&a);
        return -1;
    }
    char url[8192];
    int rc = snprintf(url, sizeof url, "%s/validate", ap->base) >= (int)sizeof url ? -1 : 0;
    rc |= sy_svcb_post(req, url);
    rc |= sy_svcb_header(req, "X-APORIA-API-KEY", ap->key);
    rc |= sy_svcb_header(req, "Content-Type", "application/json");
    struct sy_svcb_extra x;
    sy_svcb_extra_open(&x, in->extra_body, &a);
    struct sy_jw w;
    sy_jw_init(&w, &req->body);
    sy_jw_obj(&w);
    if (!sy_svcb_extra_key(&w, &x, "messages")) {
        if (synth)
            write_from_segments(&w, in);
        else if (!msgs)
            sy_jw_raw(&w, "[]", 2);
        else if (post)
            sy_jw_node(&w, &d, msgs);
        else
            write_transformed(&w, &d, msgs, &a);
    }
    if (post && !sy_svcb_extra_key(&w, &x, "response"))
        sy_jw_str(&w, resp, rlen);
    const char *target = nmsgs && rlen ? "both" : nmsgs ? "prompt" : rlen ? "response" : NULL;
    if (target && !sy_svcb_extra_key(&w, &x, "validation_target"))
        sy_jw_cstr(&w, target);
    static const char *const known[] = {"messages", "response", "validation_target", NULL};
    sy_svcb_extra_rest(&w, &x, target ? known : (const char *const[]){"messages", "response", NULL}, NULL, &a);
    sy_jw_end(&w);
    free(resp);
    sy_arena_free(&a);
    return rc || w.err || sy_buf_failed(&req->headers) ? -1 : 0;
}

static int ap_answer(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state, int status,
                     const char *body, size_t n, struct sy_gresult *r)
{
    (void)g;
    (void)step;
    (void)state;
    if (status != 200) {
        sy_gresult_error(r, "aporia: the service answered HTTP %d", status);
        return SY_GSTEP_DONE;
    }
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    if (sy_svcb_parse(&d, body, n, &a) != 0 || d.n[0].type != 'o') {
        sy_gresult_error(r, "aporia: the service's answer is not a JSON object");
        sy_arena_free(&a);
        return SY_GSTEP_DONE;
    }
    if (n <= 65536)
        r->detail = strndup(body, n);
    uint32_t action = sy_jdom_get(&d, 0, "action");
    if (sy_jdom_str_eq(&d, action, "block")) {
        struct sy_buf b;
        sy_buf_init(&b, SY_SVCB_BODY_MAX);
        SY_BUF_LIT(&b, "{'error': 'Violated guardrail policy', 'aporia_ai_response': ");
        sy_svcb_str_node(&b, &d, 0, &a);
        SY_BUF_LIT(&b, "}");
        if (sy_buf_failed(&b))
            sy_gresult_error(r, "aporia: out of memory");
        else
            sy_gresult_block(r, 400, "%s", b.p);
        sy_buf_free(&b);
        sy_arena_free(&a);
        return SY_GSTEP_DONE;
    }
    uint32_t rev = sy_jdom_get(&d, 0, "revised_response");
    if (in->phase == SY_GM_POST && (sy_jdom_str_eq(&d, action, "modify") || sy_jdom_str_eq(&d, action, "rephrase")) &&
        sy_jdom_kind(&d, rev) == 's') {
        size_t rl;
        const char *rs = sy_jdom_str(&d, rev, &a, &rl);
        int first = 1, fail = !rs || sy_gresult_repl(r, in->nseg) != 0;
        for (size_t i = 0; !fail && i < in->nseg; i++) {
            if (!sy_svcb_is_answer_text(&in->seg[i]))
                continue;
            r->repl[i] = first ? strndup(rs, rl) : strdup("");
            fail = !r->repl[i];
            first = 0;
        }
        if (fail)
            sy_gresult_error(r, "aporia: out of memory");
        else if (!first) {
            r->verdict = SY_GV_MASKED;
            r->masked = 1;
        }
    }
    sy_arena_free(&a);
    return SY_GSTEP_DONE;
}

const struct sy_guard_ops sy_guard_aporia = {
    .name = "aporia",
    .modes = SY_GM_DURING | SY_GM_POST,
    .open = ap_open,
    .close = ap_close,
    .request = ap_request,
    .answer = ap_answer,
};
