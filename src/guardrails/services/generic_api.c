/* generic_api.c - `guardrail: generic_guardrail_api`: LiteLLM's generic
 * guardrail contract (generic_guardrail_api.py, "[BETA] Generic Guardrail API").
 *
 * One POST per check to `api_base` + "/beta/litellm_basic_guardrail_api"
 * (api_base, else GENERIC_GUARDRAIL_API_BASE; the path is appended unless the
 * base already ends with it). Headers: Content-Type: application/json, the
 * configured `headers`, and `api_key` as x-api-key. The body is LiteLLM's
 * GenericGuardrailAPIRequest with every field present, in its order:
 *
 *   input_type           "request" (pre_call / during_call) or "response" (post_call)
 *   litellm_call_id      the call's id; litellm_trace_id the same (one trace per call here)
 *   structured_messages  chat requests: `messages` as sent; else null
 *   images               null (image parts are not read here)
 *   tools                the request's tools (as sent), null when none
 *   texts                every message content string / text part (any role, tool results),
 *                        or the answer's texts; not tool-call arguments
 *   request_data         user_api_key_alias / _user_id / _team_id when known
 *   request_headers, litellm_version   null
 *   additional_provider_specific_params  the configured dict, updated with the request's
 *                        `guardrails: [{<name>: {extra_body: {...}}}]`
 *   tool_calls           chat requests: the assistant messages' tool_calls; answers: the model's
 *                        tool calls; null when none
 *   model                the request's model (answers: the answer's model)
 *
 * The answer {"action", "blocked_reason", "texts"}: BLOCKED -> BLOCK with
 * blocked_reason (default "Content violates policy") as the whole message, as
 * LiteLLM's GuardrailRaisedException(should_wrap_with_default_message=False);
 * `texts` (whatever the action, as LiteLLM applies them) replace the texts
 * sent, position by position -> MASKED when one differs; else PASS. A non-2xx
 * status or an answer that is no JSON object -> ERROR (the guardrail's
 * fail-open / fail-closed setting decides).
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guardrails/services/svc_a.h"

#define GEN_PATH "/beta/litellm_basic_guardrail_api"

struct gen {
    char *url;
    struct sy_buf hdr;  /* the header lines, ready */
    char *extra_params; /* additional_provider_specific_params (JSON object text) or NULL */
};

static void gen_close(struct sy_guard *g)
{
    struct gen *x = g->impl;
    if (!x)
        return;
    free(x->url);
    sy_buf_free(&x->hdr);
    free(x->extra_params);
    free(x);
    g->impl = NULL;
}

static int header_value(struct json_object *v, const char **out)
{
    switch (json_object_get_type(v)) {
    case json_type_string:
    case json_type_int:
    case json_type_double:
    case json_type_boolean: *out = json_object_get_string(v); return 0;
    default: return -1;
    }
}

static int gen_open(struct sy_guard *g, struct json_object *params, const struct sy_genv *env, char *err, size_t errlen)
{
    (void)env;
    const char *base = sy_sva_str(params, "api_base");
    if (!base)
        base = getenv("GENERIC_GUARDRAIL_API_BASE");
    if (!base || !*base) {
        snprintf(err, errlen,
                 "api_base is required for Generic Guardrail API. Set GENERIC_GUARDRAIL_API_BASE environment "
                 "variable or pass it in litellm_params");
        return -1;
    }
    if (!sy_sva_line_safe(base)) {
        snprintf(err, errlen, "api_base has a control character");
        return -1;
    }
    struct gen *x = calloc(1, sizeof *x);
    if (!x)
        goto oom;
    g->impl = x;
    sy_buf_init(&x->hdr, SY_SVA_HDR_MAX);
    size_t bl = strlen(base), pl = strlen(GEN_PATH);
    if (bl >= pl && !strcmp(base + bl - pl, GEN_PATH))
        x->url = strdup(base);
    else {
        char *b = sy_sva_base(base);
        if (b && asprintf(&x->url, "%s%s", b, GEN_PATH) < 0)
            x->url = NULL;
        free(b);
    }
    if (!x->url)
        goto oom;

    const char *api_key = sy_sva_str(params, "api_key");
    struct json_object *h = NULL;
    if (json_object_object_get_ex(params, "headers", &h) && h && !json_object_is_type(h, json_type_object)) {
        snprintf(err, errlen, "headers must be a mapping of header names to values");
        goto fail;
    }
    /* {"Content-Type": ...}.update(headers): a configured Content-Type replaces the default */
    struct json_object *ct = NULL;
    const char *ctv = "application/json";
    if (h && json_object_object_get_ex(h, "Content-Type", &ct) && header_value(ct, &ctv) < 0) {
        snprintf(err, errlen, "headers: the value of Content-Type must be a string");
        goto fail;
    }
    sy_buf_printf(&x->hdr, "Content-Type: %s\r\n", ctv);
    if (h) {
        json_object_object_foreach(h, k, v)
        {
            const char *val;
            if (!strcmp(k, "Content-Type") || (api_key && !strcmp(k, "x-api-key")))
                continue;
            if (!v || header_value(v, &val) < 0) {
                snprintf(err, errlen, "headers: the value of %.64s must be a string", k);
                goto fail;
            }
            if (!*k || strpbrk(k, ": \t") || !sy_sva_line_safe(k) || !sy_sva_line_safe(val)) {
                snprintf(err, errlen, "headers: %.64s is no valid header", k);
                goto fail;
            }
            sy_buf_printf(&x->hdr, "%s: %s\r\n", k, val);
        }
    }
    if (api_key) {
        if (!sy_sva_line_safe(api_key)) {
            snprintf(err, errlen, "api_key has a control character");
            goto fail;
        }
        sy_buf_printf(&x->hdr, "x-api-key: %s\r\n", api_key);
    }
    if (sy_buf_failed(&x->hdr))
        goto oom;
    int bad = 0;
    x->extra_params = sy_sva_obj_json(params, "additional_provider_specific_params", &bad);
    if (bad) {
        snprintf(err, errlen, "additional_provider_specific_params must be a mapping");
        goto fail;
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    gen_close(g);
    return -1;
}

/* The texts sent, in order: their segment indices (malloc'd, *k). */
static size_t *sent_texts(const struct sy_ginput *in, size_t *k)
{
    size_t *ix = malloc((in->nseg ? in->nseg : 1) * sizeof *ix);
    *k = 0;
    if (!ix)
        return NULL;
    for (size_t i = 0; i < in->nseg; i++)
        if (sy_sva_is_content(&in->seg[i]))
            ix[(*k)++] = i;
    return ix;
}

/* additional_provider_specific_params: the configured dict .update(extra_body). */
static void write_params(struct sy_jw *w, const struct gen *x, const char *extra, struct sy_arena *a)
{
    struct sy_jdoc c, e;
    int hc = x->extra_params && sy_jdom_parse(&c, x->extra_params, strlen(x->extra_params), a, 0) == 0 &&
             sy_jdom_type(&c, 0) == 'o';
    int he = extra && sy_jdom_parse(&e, extra, strlen(extra), a, 0) == 0 && sy_jdom_type(&e, 0) == 'o';
    sy_jw_obj(w);
    if (hc)
        for (uint32_t k = sy_jdom_first(&c, 0); k; k = sy_jdom_next_key(&c, k)) {
            size_t kl;
            const char *ks = sy_jdom_str(&c, k, a, &kl);
            if (he && sy_jdom_get(&e, 0, ks))
                continue;
            sy_jw_keyn(w, ks, kl);
            sy_jw_node(w, &c, sy_jdom_val(k));
        }
    if (he)
        for (uint32_t k = sy_jdom_first(&e, 0); k; k = sy_jdom_next_key(&e, k)) {
            size_t kl;
            const char *ks = sy_jdom_str(&e, k, a, &kl);
            if (sy_jdom_get(&e, 0, ks) != sy_jdom_val(k)) /* a repeated key: its last value only */
                continue;
            sy_jw_keyn(w, ks, kl);
            sy_jw_node(w, &e, sy_jdom_val(k));
        }
    sy_jw_end(w);
}

/* The tool objects of in->tool as sent (raw spans of in->body), or null. */
static void write_tools(struct sy_jw *w, const struct sy_ginput *in)
{
    size_t n = 0;
    for (size_t i = 0; i < in->ntool; i++)
        n += in->tool[i].raw_len && in->tool[i].off + in->tool[i].raw_len <= in->body_len;
    if (!n) {
        sy_jw_null(w);
        return;
    }
    sy_jw_arr(w);
    for (size_t i = 0; i < in->ntool; i++)
        if (in->tool[i].raw_len && in->tool[i].off + in->tool[i].raw_len <= in->body_len)
            sy_jw_raw(w, in->body + in->tool[i].off, in->tool[i].raw_len);
    sy_jw_end(w);
}

static int gen_request(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state,
                       struct sy_ghttp *req)
{
    (void)step;
    (void)state;
    const struct gen *x = g->impl;
    size_t k;
    size_t *ix = sent_texts(in, &k);
    if (!ix)
        return -1;
    memset(req, 0, sizeof *req);
    if (!k && !in->ntool) { /* nothing LiteLLM would send */
        free(ix);
        return 0;
    }
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int chat = in->dialect == SY_GD_CHAT && in->body && sy_jdom_parse(&d, in->body, in->body_len, &a, 0) == 0 &&
               sy_jdom_type(&d, 0) == 'o';
    if (sy_sva_post(req, x->url) < 0)
        goto oom;
    sy_buf_append_buf(&req->headers, &x->hdr);
    sy_buf_reserve(&req->body, 2 * in->body_len + 4096); /* messages and texts: one copy each */
    int pre = in->phase != SY_GM_POST;
    struct sy_jw w;
    sy_jw_init(&w, &req->body);
    sy_jw_obj(&w);
    sy_jw_key(&w, "input_type");
    sy_jw_cstr(&w, pre ? "request" : "response");
    sy_jw_key(&w, "litellm_call_id");
    sy_jw_cstr(&w, in->call_id);
    sy_jw_key(&w, "litellm_trace_id");
    sy_jw_cstr(&w, in->call_id);
    uint32_t msgs = chat && pre ? sy_jdom_top(&d, "messages") : 0;
    sy_jw_key(&w, "structured_messages");
    if (sy_jdom_kind(&d, msgs) == 'a')
        sy_jw_node(&w, &d, msgs);
    else
        sy_jw_null(&w);
    sy_jw_key(&w, "images");
    sy_jw_null(&w);
    sy_jw_key(&w, "tools");
    if (pre)
        write_tools(&w, in);
    else
        sy_jw_null(&w);
    sy_jw_key(&w, "texts");
    sy_jw_arr(&w);
    for (size_t i = 0; i < k; i++)
        sy_jw_str(&w, in->seg[ix[i]].text, in->seg[ix[i]].len);
    sy_jw_end(&w);
    sy_jw_key(&w, "request_data");
    sy_jw_obj(&w);
    if (in->user_key_alias) {
        sy_jw_key(&w, "user_api_key_alias");
        sy_jw_cstr(&w, in->user_key_alias);
    }
    if (in->user_id) {
        sy_jw_key(&w, "user_api_key_user_id");
        sy_jw_cstr(&w, in->user_id);
    }
    if (in->team_id) {
        sy_jw_key(&w, "user_api_key_team_id");
        sy_jw_cstr(&w, in->team_id);
    }
    sy_jw_end(&w);
    sy_jw_key(&w, "request_headers");
    sy_jw_null(&w);
    sy_jw_key(&w, "litellm_version");
    sy_jw_null(&w);
    sy_jw_key(&w, "additional_provider_specific_params");
    write_params(&w, x, in->extra_body, &a);
    sy_jw_key(&w, "tool_calls");
    if (!pre)
        write_tools(&w, in);
    else if (msgs) {
        /* the assistant messages' tool_calls, as sent */
        int any = 0;
        for (uint32_t m = sy_jdom_first(&d, msgs); m; m = sy_jdom_next(&d, m)) {
            uint32_t tc = sy_jdom_at(&d, sy_jdom_type(&d, m) == 'o' ? m : 0, "tool_calls");
            if (sy_jdom_kind(&d, tc) != 'a')
                continue;
            for (uint32_t c = sy_jdom_first(&d, tc); c; c = sy_jdom_next(&d, c)) {
                if (sy_jdom_type(&d, c) != 'o')
                    continue;
                if (!any++)
                    sy_jw_arr(&w);
                sy_jw_node(&w, &d, c);
            }
        }
        if (any)
            sy_jw_end(&w);
        else
            sy_jw_null(&w);
    } else
        sy_jw_null(&w);
    sy_jw_key(&w, "model");
    uint32_t mn = 0;
    if (!pre && in->body && sy_jdom_parse(&d, in->body, in->body_len, &a, 0) == 0 && sy_jdom_type(&d, 0) == 'o')
        mn = sy_jdom_top(&d, "model");
    if (sy_jdom_kind(&d, mn) == 's')
        sy_jw_node(&w, &d, mn);
    else
        sy_jw_cstr(&w, in->model);
    sy_jw_end(&w);
    if (w.err || sy_buf_failed(&req->body) || sy_buf_failed(&req->headers))
        goto oom;
    sy_arena_free(&a);
    free(ix);
    return 0;
oom:
    sy_arena_free(&a);
    free(ix);
    sy_ghttp_free(req);
    return -1;
}

/* Python's truthiness of node i (0: absent). */
static int truthy(const struct sy_jdoc *d, uint32_t i)
{
    double v;
    switch (sy_jdom_kind(d, i)) {
    case 's': return d->n[i].len > 2;
    case 'a':
    case 'o': return d->n[i].kids > 0;
    case 'n': return sy_jdom_num(d, i, &v) && v != 0;
    case 't': return 1;
    default: return 0;
    }
}

static int gen_answer(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state, int status,
                      const char *body, size_t n, struct sy_gresult *r)
{
    (void)g;
    (void)step;
    (void)state;
    if (status < 200 || status > 299) {
        sy_gresult_error(r, "Generic Guardrail API failed: HTTP %d", status);
        return SY_GSTEP_DONE;
    }
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    if (sy_sva_parse(&d, body, n, &a) < 0 || sy_jdom_type(&d, 0) != 'o') {
        sy_gresult_error(r, "Generic Guardrail API failed: the answer is no JSON object");
        goto out;
    }
    uint32_t act = sy_jdom_top(&d, "action");
    if (act && sy_jdom_str_eq(&d, act, "BLOCKED")) {
        uint32_t why = sy_jdom_top(&d, "blocked_reason");
        if (!truthy(&d, why))
            sy_gresult_block(r, 400, "Content violates policy");
        else {
            struct sy_buf b; /* str(blocked_reason): a string as is, anything else as Python prints it */
            sy_buf_init(&b, 1 << 20);
            size_t rl;
            const char *raw = sy_jdom_raw(&d, why, &rl);
            if (sy_sva_pystr_json(&b, raw, rl) < 0 || sy_buf_failed(&b))
                sy_gresult_error(r, "out of memory");
            else
                sy_gresult_block(r, 400, "%s", b.p);
            sy_buf_free(&b);
        }
        r->detail = strdup("{\"action\":\"BLOCKED\"}");
        goto out;
    }
    uint32_t texts = sy_jdom_top(&d, "texts");
    if (sy_jdom_kind(&d, texts) == 'a' && d.n[texts].kids) {
        size_t k;
        size_t *ix = sent_texts(in, &k);
        if (!ix) {
            sy_gresult_error(r, "out of memory");
            goto out;
        }
        size_t i = 0;
        for (uint32_t t = sy_jdom_first(&d, texts); t && i < k; t = sy_jdom_next(&d, t), i++) {
            if (sy_jdom_type(&d, t) != 's') {
                sy_gresult_error(r, "Generic Guardrail API failed: texts[%zu] is not a string", i);
                free(ix);
                goto out;
            }
            size_t tl;
            const char *ts = sy_jdom_str(&d, t, &a, &tl);
            const struct sy_gseg *s = &in->seg[ix[i]];
            if (tl == s->len && !memcmp(ts, s->text, tl))
                continue;
            if (sy_gresult_repl(r, in->nseg) < 0 || !(r->repl[ix[i]] = strndup(ts, tl))) {
                sy_gresult_error(r, "out of memory");
                free(ix);
                goto out;
            }
            r->masked++;
        }
        free(ix);
    }
    r->verdict = r->masked ? SY_GV_MASKED : SY_GV_PASS;
    if (asprintf(&r->detail, "{\"action\":\"%s\",\"texts_changed\":%u}",
                 act && sy_jdom_str_eq(&d, act, "GUARDRAIL_INTERVENED") ? "GUARDRAIL_INTERVENED" : "NONE",
                 r->masked) < 0)
        r->detail = NULL;
out:
    sy_arena_free(&a);
    return SY_GSTEP_DONE;
}

const struct sy_guard_ops sy_guard_generic_api = {
    .name = "generic_guardrail_api",
    .modes = SY_GM_PRE | SY_GM_DURING | SY_GM_POST,
    .open = gen_open,
    .close = gen_close,
    .request = gen_request,
    .answer = gen_answer,
};
