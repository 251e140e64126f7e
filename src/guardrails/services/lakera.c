/* lakera.c - `guardrail: lakera_v2`: Lakera Guard's v2 API as LiteLLM's
 * LakeraAIGuardrail calls it (guardrail_hooks/lakera_ai_v2.py).
 *
 * POST `api_base` (else LAKERA_API_BASE, else https://api.lakera.ai) +
 * "/v2/guard", Authorization: Bearer `api_key` (else LAKERA_API_KEY), body
 * {"messages": the request's messages as sent, "project_id", "payload",
 * "breakdown", "metadata", "dev_info"} (payload, breakdown and dev_info default
 * true; project_id and metadata null unless set), as LiteLLM's LakeraAIRequest.
 * Chat requests only, pre_call and during_call only, as LiteLLM (its docs: the
 * v2 integration supports /v1/chat/completions only): other bodies are not sent.
 *
 * The answer: `flagged` true and every detected breakdown item a "pii/"
 * detector -> MASKED: each `payload` item's span (message_id, start, end, in
 * code points) of a message whose content is a string becomes
 * "[MASKED <TYPE>]" (the detector_type's last part upper-cased); else
 * `on_flagged: monitor` -> PASS (the flag is in the detail), else BLOCK with
 * str() of LiteLLM's detail {'error': 'Violated guardrail policy',
 * 'lakera_guardrail_response': <the answer>}. LiteLLM applies the spans one by
 * one with the offsets of the original text, so a second span in one message
 * lands off target; here they are applied from the last to the first and an
 * overlapping one is skipped. A non-2xx status or an answer that is no JSON
 * object -> ERROR (LiteLLM reads an error body as "not flagged" and passes).
 */
#include <ctype.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guardrails/services/svc_a.h"

struct lk {
    char *url, *auth;
    char *project_id, *metadata;
    int payload, breakdown, dev_info;
    int monitor;
};

static void lk_close(struct sy_guard *g)
{
    struct lk *x = g->impl;
    if (!x)
        return;
    free(x->url);
    free(x->auth);
    free(x->project_id);
    free(x->metadata);
    free(x);
    g->impl = NULL;
}

static int lk_open(struct sy_guard *g, struct json_object *params, const struct sy_genv *env, char *err, size_t errlen)
{
    (void)env;
    struct lk *x = calloc(1, sizeof *x);
    if (!x)
        goto oom;
    g->impl = x;
    const char *key = sy_sva_str(params, "api_key");
    if (!key)
        key = getenv("LAKERA_API_KEY");
    if (!key)
        key = "";
    const char *base = sy_sva_str(params, "api_base");
    if (!base)
        base = getenv("LAKERA_API_BASE");
    if (!base || !*base)
        base = "https://api.lakera.ai";
    if (!sy_sva_line_safe(key) || !sy_sva_line_safe(base)) {
        snprintf(err, errlen, "Lakera AI: api_key or api_base has a control character");
        goto fail;
    }
    const char *of = sy_sva_str(params, "on_flagged");
    if (of && strcmp(of, "block") && strcmp(of, "monitor")) {
        snprintf(err, errlen, "Lakera AI: on_flagged must be \"block\" or \"monitor\", not \"%.64s\"", of);
        goto fail;
    }
    x->monitor = of && !strcmp(of, "monitor");
    char *b = sy_sva_base(base);
    if (!b || asprintf(&x->url, "%s/v2/guard", b) < 0)
        x->url = NULL;
    free(b);
    if (asprintf(&x->auth, "Authorization: Bearer %s\r\nContent-Type: application/json\r\n", key) < 0)
        x->auth = NULL;
    if (!x->url || !x->auth)
        goto oom;
    const char *pid = sy_sva_str(params, "project_id");
    if (pid && !(x->project_id = strdup(pid)))
        goto oom;
    int bad = 0;
    x->metadata = sy_sva_obj_json(params, "metadata", &bad);
    if (bad) {
        snprintf(err, errlen, "Lakera AI: metadata must be a mapping");
        goto fail;
    }
    x->payload = sy_sva_bool(params, "payload", 1);
    x->breakdown = sy_sva_bool(params, "breakdown", 1);
    x->dev_info = sy_sva_bool(params, "dev_info", 1);
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    lk_close(g);
    return -1;
}

/* The request's messages array node (0: none). */
static uint32_t messages_of(const struct sy_ginput *in, struct sy_jdoc *d, struct sy_arena *a)
{
    if (in->dialect != SY_GD_CHAT || in->phase == SY_GM_POST || !in->body ||
        sy_jdom_parse(d, in->body, in->body_len, a, 0) != 0 || sy_jdom_type(d, 0) != 'o')
        return 0;
    uint32_t m = sy_jdom_top(d, "messages");
    return sy_jdom_kind(d, m) == 'a' && d->n[m].kids ? m : 0;
}

static int lk_request(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state,
                      struct sy_ghttp *req)
{
    (void)step;
    (void)state;
    const struct lk *x = g->impl;
    memset(req, 0, sizeof *req);
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    uint32_t m = messages_of(in, &d, &a);
    if (!m) {
        sy_arena_free(&a);
        return 0;
    }
    if (sy_sva_post(req, x->url) < 0)
        goto oom;
    sy_buf_append(&req->headers, x->auth, strlen(x->auth));
    sy_buf_reserve(&req->body, in->body_len + 1024);
    struct sy_jw w;
    sy_jw_init(&w, &req->body);
    sy_jw_obj(&w);
    sy_jw_key(&w, "messages");
    sy_jw_node(&w, &d, m);
    sy_jw_key(&w, "project_id");
    sy_jw_cstr(&w, x->project_id);
    sy_jw_key(&w, "payload");
    sy_jw_bool(&w, x->payload);
    sy_jw_key(&w, "breakdown");
    sy_jw_bool(&w, x->breakdown);
    sy_jw_key(&w, "metadata");
    if (x->metadata)
        sy_jw_raw(&w, x->metadata, strlen(x->metadata));
    else
        sy_jw_null(&w);
    sy_jw_key(&w, "dev_info");
    sy_jw_bool(&w, x->dev_info);
    sy_jw_end(&w);
    if (w.err || sy_buf_failed(&req->body) || sy_buf_failed(&req->headers))
        goto oom;
    sy_arena_free(&a);
    return 0;
oom:
    sy_arena_free(&a);
    sy_ghttp_free(req);
    return -1;
}

/* LiteLLM's _is_only_pii_violation. */
static int only_pii(const struct sy_jdoc *d, struct sy_arena *a)
{
    uint32_t bd = sy_jdom_top(d, "breakdown");
    if (sy_jdom_kind(d, bd) != 'a')
        return 0;
    int any = 0;
    for (uint32_t it = sy_jdom_first(d, bd); it; it = sy_jdom_next(d, it)) {
        int det = 0;
        if (sy_jdom_type(d, it) != 'o' || !sy_jdom_bool(d, sy_jdom_member(d, it, "detected"), &det) || !det)
            continue;
        any = 1;
        uint32_t t = sy_jdom_member(d, it, "detector_type");
        size_t tl = 0;
        const char *ts = sy_jdom_kind(d, t) == 's' ? sy_jdom_str(d, t, a, &tl) : NULL;
        if (!ts || tl < 4 || memcmp(ts, "pii/", 4))
            return 0;
    }
    return any;
}

struct span {
    size_t start, end; /* code points, then bytes */
    uint32_t item;     /* the payload item */
};

static int span_cmp(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The mask of payload item it: "[MASKED <TYPE>]" into b; 0, or -1 when it has no detector_type. */
static int mask_of(const struct sy_jdoc *d, uint32_t it, struct sy_arena *a, struct sy_buf *b)
{
    size_t tl;
    const char *ts = sy_jdom_str(d, sy_jdom_member(d, it, "detector_type"), a, &tl);
    if (!ts || !tl)
        return -1;
    const char *slash = memrchr(ts, '/', tl);
    const char *p = slash ? slash + 1 : ts;
    size_t pl = tl - (size_t)(p - ts);
    SY_BUF_LIT(b, "[MASKED ");
    if (!pl)
        SY_BUF_LIT(b, "PII");
    for (size_t i = 0; i < pl; i++) {
        char c = (char)toupper((unsigned char)p[i]);
        sy_buf_append(b, &c, 1);
    }
    SY_BUF_LIT(b, "]");
    return 0;
}

/* Mask message mi's string content (segment si) with the payload items for it. */
static int mask_message(const struct sy_ginput *in, size_t si, const struct sy_jdoc *d, uint32_t payload, int64_t mi,
                        struct sy_arena *a, struct sy_gresult *r)
{
    const struct sy_gseg *s = &in->seg[si];
    size_t k = 0, cap = 0;
    struct span *sp = NULL;
    size_t cplen = sy_sva_cplen(s->text, s->len);
    for (uint32_t it = sy_jdom_first(d, payload); it; it = sy_jdom_next(d, it)) {
        int64_t id, st, en;
        if (sy_jdom_type(d, it) != 'o' || !sy_jdom_i64(d, sy_jdom_member(d, it, "message_id"), &id) || id != mi ||
            !sy_jdom_i64(d, sy_jdom_member(d, it, "start"), &st) || !sy_jdom_i64(d, sy_jdom_member(d, it, "end"), &en))
            continue;
        if (!(0 <= st && st < en && (uint64_t)en <= cplen)) /* mask_content_in_string's check */
            continue;
        if (k == cap) {
            cap = cap ? cap * 2 : 8;
            struct span *np = realloc(sp, cap * sizeof *np);
            if (!np) {
                free(sp);
                return -1;
            }
            sp = np;
        }
        sp[k++] = (struct span){(size_t)st, (size_t)en, it};
    }
    if (!k)
        return 0;
    qsort(sp, k, sizeof *sp, span_cmp);
    size_t *ix = malloc(2 * k * sizeof *ix);
    if (!ix) {
        free(sp);
        return -1;
    }
    for (size_t i = 0; i < k; i++) {
        ix[2 * i] = sp[i].start;
        ix[2 * i + 1] = sp[i].end;
    }
    int rc = sy_sva_cp2byte(s->text, s->len, ix, 2 * k);
    struct sy_buf out;
    sy_buf_init(&out, SY_SVA_BODY_MAX);
    size_t at = 0;
    unsigned n = 0;
    for (size_t i = 0; rc == 0 && i < k; i++) {
        size_t b0 = ix[2 * i], b1 = ix[2 * i + 1];
        if (b0 < at) /* overlaps the span before */
            continue;
        size_t mark = out.len;
        sy_buf_append(&out, s->text + at, b0 - at);
        if (mask_of(d, sp[i].item, a, &out) < 0) {
            out.len = mark;
            continue;
        }
        at = b1;
        n++;
    }
    sy_buf_append(&out, s->text + at, s->len - at);
    free(ix);
    free(sp);
    if (rc < 0 || sy_buf_failed(&out)) {
        sy_buf_free(&out);
        return -1;
    }
    if (n) {
        if (sy_gresult_repl(r, in->nseg) < 0) {
            sy_buf_free(&out);
            return -1;
        }
        free(r->repl[si]);
        r->repl[si] = out.p ? out.p : strdup("");
        r->masked += n;
    } else
        sy_buf_free(&out);
    return 0;
}

/* Mask the PII the payload points at (LiteLLM's _mask_pii_in_messages). */
static int mask_pii(const struct sy_ginput *in, const struct sy_jdoc *d, struct sy_arena *a, struct sy_gresult *r)
{
    uint32_t payload = sy_jdom_top(d, "payload");
    if (sy_jdom_kind(d, payload) != 'a' || !d->n[payload].kids)
        return 0;
    struct sy_jdoc q;
    uint32_t msgs = messages_of(in, &q, a);
    int64_t mi = 0;
    for (uint32_t m = msgs ? sy_jdom_first(&q, msgs) : 0; m; m = sy_jdom_next(&q, m), mi++) {
        uint32_t c = sy_jdom_at(&q, sy_jdom_type(&q, m) == 'o' ? m : 0, "content");
        if (sy_jdom_kind(&q, c) != 's')
            continue;
        for (size_t si = 0; si < in->nseg; si++)
            if (in->seg[si].raw_len && in->seg[si].off == q.n[c].off) {
                if (mask_message(in, si, d, payload, mi, a, r) < 0)
                    return -1;
                break;
            }
    }
    return 0;
}

/* The answer without its payload (PII), for the logs. */
static char *detail_of(const struct sy_jdoc *d, struct sy_arena *a)
{
    struct sy_buf b;
    sy_buf_init(&b, SY_SVA_BODY_MAX);
    struct sy_jw w;
    sy_jw_init(&w, &b);
    sy_jw_obj(&w);
    for (uint32_t k = sy_jdom_first(d, 0); k; k = sy_jdom_next_key(d, k)) {
        size_t kl;
        const char *ks = sy_jdom_str(d, k, a, &kl);
        if (kl == 7 && !memcmp(ks, "payload", 7))
            continue;
        sy_jw_keyn(&w, ks, kl);
        sy_jw_node(&w, d, sy_jdom_val(k));
    }
    sy_jw_end(&w);
    if (w.err || sy_buf_failed(&b)) {
        sy_buf_free(&b);
        return NULL;
    }
    return b.p;
}

static int lk_answer(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state, int status,
                     const char *body, size_t n, struct sy_gresult *r)
{
    (void)step;
    (void)state;
    const struct lk *x = g->impl;
    if (status < 200 || status > 299) {
        sy_gresult_error(r, "Lakera AI v2 guard failed: HTTP %d", status);
        return SY_GSTEP_DONE;
    }
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    if (sy_sva_parse(&d, body, n, &a) < 0 || sy_jdom_type(&d, 0) != 'o') {
        sy_gresult_error(r, "Lakera AI v2 guard failed: the answer is no JSON object");
        goto out;
    }
    r->detail = detail_of(&d, &a);
    uint32_t fl = sy_jdom_top(&d, "flagged");
    if (sy_jdom_kind(&d, fl) != 't') {
        r->verdict = SY_GV_PASS;
        goto out;
    }
    if (only_pii(&d, &a)) {
        if (mask_pii(in, &d, &a, r) < 0) {
            sy_gresult_error(r, "out of memory");
            goto out;
        }
        r->verdict = r->masked ? SY_GV_MASKED : SY_GV_PASS;
        goto out;
    }
    if (x->monitor) {
        r->verdict = SY_GV_PASS;
        goto out;
    }
    struct sy_buf det, msg;
    sy_buf_init(&det, SY_SVA_BODY_MAX);
    sy_buf_init(&msg, SY_SVA_BODY_MAX);
    SY_BUF_LIT(&det, "{\"error\":\"Violated guardrail policy\",\"lakera_guardrail_response\":");
    sy_buf_append(&det, body, n);
    SY_BUF_LIT(&det, "}");
    if (sy_buf_failed(&det) || sy_sva_pystr_json(&msg, det.p, det.len) < 0 || sy_buf_failed(&msg))
        sy_gresult_error(r, "out of memory");
    else
        sy_gresult_block(r, 400, "%s", msg.p);
    sy_buf_free(&det);
    sy_buf_free(&msg);
out:
    sy_arena_free(&a);
    return SY_GSTEP_DONE;
}

const struct sy_guard_ops sy_guard_lakera = {
    .name = "lakera_v2",
    .modes = SY_GM_PRE | SY_GM_DURING,
    .open = lk_open,
    .close = lk_close,
    .request = lk_request,
    .answer = lk_answer,
};

/* The legacy `litellm_settings.guardrails` callback lakera_prompt_injection
 * (set.c maps it to this name): the same v2 check. */
const struct sy_guard_ops sy_guard_lakera_ai = {
    .name = "lakera_ai",
    .modes = SY_GM_PRE | SY_GM_DURING,
    .open = lk_open,
    .close = lk_close,
    .request = lk_request,
    .answer = lk_answer,
};
