/* ibm.c - the `ibm_guardrails` guardrail: IBM FMS Guardrails, a detector server
 * or the orchestrator, as LiteLLM's guardrail_hooks/ibm_guardrails/ibm_detector.py
 * calls them (pre_call, during_call, post_call).
 *
 *   setting                                   default / meaning
 *   ----------------------------------------  -----------------------------------------------
 *   auth_token                                required (else IBM_GUARDRAILS_AUTH_TOKEN): Bearer
 *   base_url                                  required
 *   detector_id                               required
 *   is_detector_server                        true: a detector server; false: the orchestrator
 *   verify_ssl                                read, not applied per guardrail: the service is
 *                                             called with the gateway's TLS verification
 *   optional_params.detector_params           {} sent to the detector
 *   optional_params.extra_headers             {name: value} added to each request
 *   optional_params.score_threshold           a detection counts when score >= it (unset: all)
 *   optional_params.block_on_detection        true; false: detections are logged, never block
 *
 * The texts: on the request every message's text (string content, text parts,
 * tool results); on the answer the choices' texts. None: nothing is sent.
 *
 *   detector server  POST {base_url}/api/v1/text/contents?detector_id={id}
 *                    Authorization: Bearer <auth_token>, content-type: application/json,
 *                    detector-id: {id} (the header of the FMS detector API; the query
 *                    parameter is what older LiteLLM releases sent: both are sent)
 *                    {"contents": [text, ...], "detector_params": {...}}
 *                    -> [[detection, ...] per text]           (one request)
 *   orchestrator     POST {base_url}/api/v2/text/detection/content
 *                    {"content": text, "detectors": {id: detector_params}}
 *                    -> {"detections": [...]}                 (one request per text, in
 *                                                              order, until one blocks)
 *
 * A detection counted (score >= score_threshold) with block_on_detection blocks with
 * LiteLLM's text; LiteLLM raises it as a ValueError, which its proxy answers with
 * status 500, so the status is 500 here too:
 *
 *   IBM Guardrail Detector failed: 1 violation(s) detected
 *
 *   IBM Guardrail Detector failed:
 *
 *   Message 1:
 *     - JAILBREAK (score: 0.859)
 *       Text: 'You are now in Do Anything Mode'
 *
 * (the orchestrator: "- JAILBREAK (detector: <id>, score: 0.859)\n  Text: '...'" per
 * detection). A non-2xx answer or one of another shape is an ERROR.
 */
#include <ctype.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guardrails/guardrail.h"
#include "guardrails/services/svc_b.h"

struct ibm {
    char *token, *detector, *url, *params, *extra;
    int server, block, has_thr, verify_ssl;
    double thr;
};

static void ibm_free(struct ibm *b)
{
    if (!b)
        return;
    free(b->token);
    free(b->detector);
    free(b->url);
    free(b->params);
    free(b->extra);
    free(b);
}

static int fail(struct ibm *b, char *err, size_t errlen, const char *msg)
{
    ibm_free(b);
    snprintf(err, errlen, "%s", msg);
    return -1;
}

/* Percent-encoding of a query value (urllib's urlencode: quote_plus). */
static void qencode(struct sy_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (isalnum(*p) || strchr("-._~", *p))
            sy_buf_append(b, p, 1);
        else if (*p == ' ')
            SY_BUF_LIT(b, "+");
        else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            sy_buf_append(b, e, 3);
        }
    }
}

static int ibm_open(struct sy_guard *g, struct json_object *params, const struct sy_genv *env, char *err, size_t errlen)
{
    (void)env;
    struct ibm *b = calloc(1, sizeof *b);
    if (!b)
        return fail(b, err, errlen, "IBM Guardrails: out of memory");
    const char *tok = sy_svcb_str(params, "auth_token"), *base = sy_svcb_str(params, "base_url");
    const char *id = sy_svcb_str(params, "detector_id");
    if (!tok)
        tok = getenv("IBM_GUARDRAILS_AUTH_TOKEN");
    if (!tok || !*tok)
        return fail(b, err, errlen, "IBM Guardrails: auth_token is required");
    if (!base)
        return fail(b, err, errlen, "IBM Guardrails: base_url is required");
    if (!id)
        return fail(b, err, errlen, "IBM Guardrails: detector_id is required");
    if ((strncmp(base, "http://", 7) && strncmp(base, "https://", 8)) || !sy_svcb_url_safe(base) ||
        strpbrk(base, "?#") || strpbrk(tok, "\r\n") || strpbrk(id, "\r\n"))
        return fail(b, err, errlen, "IBM Guardrails: base_url, auth_token or detector_id is not usable in a request");
    b->server = sy_svcb_bool(params, "is_detector_server", 1);
    b->verify_ssl = sy_svcb_bool(params, "verify_ssl", 1);
    int oom = 0;
    b->token = sy_svcb_dup(tok, &oom);
    b->detector = sy_svcb_dup(id, &oom);
    struct sy_buf u;
    sy_buf_init(&u, 16384);
    sy_buf_puts(&u, base);
    if (b->server) {
        SY_BUF_LIT(&u, "/api/v1/text/contents?detector_id=");
        qencode(&u, id);
    } else
        SY_BUF_LIT(&u, "/api/v2/text/detection/content");
    if (sy_buf_failed(&u)) {
        sy_buf_free(&u);
        return fail(b, err, errlen, "IBM Guardrails: base_url is too long");
    }
    b->url = u.p;
    struct json_object *op = NULL;
    if (json_object_object_get_ex(params, "optional_params", &op) && op && !json_object_is_type(op, json_type_null) &&
        !json_object_is_type(op, json_type_object))
        return fail(b, err, errlen, "IBM Guardrails: optional_params must be a mapping");
    int bad = 0;
    b->params = sy_svcb_obj_json(op, "detector_params", &bad);
    if (bad)
        return fail(b, err, errlen, "IBM Guardrails: optional_params.detector_params must be a mapping");
    if (!b->params)
        b->params = sy_svcb_dup("{}", &oom);
    double t;
    int rc = sy_svcb_num(op, "score_threshold", &t, NULL);
    if (rc < 0)
        return fail(b, err, errlen, "IBM Guardrails: optional_params.score_threshold must be a number");
    b->has_thr = rc;
    b->thr = t;
    b->block = sy_svcb_bool(op, "block_on_detection", 1);
    struct json_object *eh = NULL;
    if (op && json_object_object_get_ex(op, "extra_headers", &eh) && eh && !json_object_is_type(eh, json_type_null)) {
        if (!json_object_is_type(eh, json_type_object))
            return fail(b, err, errlen, "IBM Guardrails: optional_params.extra_headers must be a mapping");
        struct sy_buf h;
        sy_buf_init(&h, SY_SVCB_HDR_MAX);
        json_object_object_foreach(eh, k, v)
        {
            const char *s = json_object_get_string(v);
            if (!json_object_is_type(v, json_type_string) || !*k || strpbrk(k, "\r\n: ") || strpbrk(s, "\r\n")) {
                sy_buf_free(&h);
                return fail(b, err, errlen, "IBM Guardrails: extra_headers must map header names to strings");
            }
            sy_buf_printf(&h, "%s: %s\r\n", k, s);
        }
        if (sy_buf_failed(&h)) {
            sy_buf_free(&h);
            return fail(b, err, errlen, "IBM Guardrails: extra_headers too long");
        }
        b->extra = h.p;
    }
    if (oom)
        return fail(b, err, errlen, "IBM Guardrails: out of memory");
    g->impl = b;
    return 0;
}

static void ibm_close(struct sy_guard *g)
{
    ibm_free(g->impl);
    g->impl = NULL;
}

static int checked(const struct sy_ginput *in, size_t i)
{
    return in->phase == SY_GM_POST ? sy_svcb_is_answer_text(&in->seg[i]) : sy_svcb_is_content(&in->seg[i]);
}

/* The k-th text checked (segment index), or in->nseg. */
static size_t nth(const struct sy_ginput *in, int k)
{
    for (size_t i = 0; i < in->nseg; i++)
        if (checked(in, i) && k-- == 0)
            return i;
    return in->nseg;
}

static int ibm_request(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state,
                       struct sy_ghttp *req)
{
    (void)state;
    const struct ibm *b = g->impl;
    if (!b || step < 0 || (b->server && step > 0))
        return -1;
    size_t first = nth(in, step);
    if (first == in->nseg) /* no text (step 0): LiteLLM skips the call */
        return step == 0 ? 0 : -1;
    char *auth = NULL;
    if (asprintf(&auth, "Bearer %s", b->token) < 0)
        return -1;
    int rc = sy_svcb_post(req, b->url);
    rc |= sy_svcb_header(req, "Authorization", auth);
    rc |= sy_svcb_header(req, "content-type", "application/json");
    free(auth);
    if (b->server)
        rc |= sy_svcb_header(req, "detector-id", b->detector);
    if (b->extra)
        rc |= sy_buf_puts(&req->headers, b->extra) ? -1 : 0;
    struct sy_jw w;
    sy_jw_init(&w, &req->body);
    sy_jw_obj(&w);
    if (b->server) {
        sy_jw_key(&w, "contents");
        sy_jw_arr(&w);
        for (size_t i = 0; i < in->nseg; i++)
            if (checked(in, i))
                sy_jw_str(&w, in->seg[i].text, in->seg[i].len);
        sy_jw_end(&w);
        sy_jw_key(&w, "detector_params");
        sy_jw_raw(&w, b->params, strlen(b->params));
    } else {
        sy_jw_key(&w, "content");
        sy_jw_str(&w, in->seg[first].text, in->seg[first].len);
        sy_jw_key(&w, "detectors");
        sy_jw_obj(&w);
        sy_jw_key(&w, b->detector);
        sy_jw_raw(&w, b->params, strlen(b->params));
        sy_jw_end(&w);
    }
    sy_jw_end(&w);
    return rc || w.err ? -1 : 0;
}

static double score_of(const struct sy_jdoc *d, uint32_t det)
{
    double s = 0;
    if (!sy_jdom_num(d, sy_jdom_get(d, det, "score"), &s))
        s = 0;
    return s;
}

static int counts(const struct ibm *b, const struct sy_jdoc *d, uint32_t det)
{
    return d->n[det].type == 'o' && (!b->has_thr || score_of(d, det) >= b->thr);
}

/* One detection's lines: "<indent>- TYPE (score: 0.859)\n<indent>  Text: '...'\n". */
static void detection_lines(struct sy_buf *m, const struct ibm *b, const struct sy_jdoc *d, uint32_t det,
                            int orchestrator, struct sy_arena *a)
{
    uint32_t ty = sy_jdom_get(d, det, "detection_type"), tx = sy_jdom_get(d, det, "text");
    size_t tl = 0;
    const char *t = sy_jdom_kind(d, ty) == 's' ? sy_jdom_str(d, ty, a, &tl) : NULL;
    sy_buf_puts(m, orchestrator ? "- " : "  - ");
    if (!t) {
        t = "unknown";
        tl = 7;
    }
    for (size_t i = 0; i < tl; i++) {
        char c = (char)toupper((unsigned char)t[i]);
        sy_buf_append(m, &c, 1);
    }
    if (orchestrator) {
        uint32_t di = sy_jdom_get(d, det, "detector_id");
        SY_BUF_LIT(m, " (detector: ");
        if (di)
            sy_svcb_str_node(m, d, di, a);
        else
            sy_buf_puts(m, b->detector);
        sy_buf_printf(m, ", score: %.3f)\n  Text: '", score_of(d, det));
    } else
        sy_buf_printf(m, " (score: %.3f)\n    Text: '", score_of(d, det));
    if (tx)
        sy_svcb_str_node(m, d, tx, a);
    SY_BUF_LIT(m, "'\n");
}

/* The block message (str.strip()'d) into r. */
static void block_with(struct sy_gresult *r, struct sy_buf *m)
{
    if (sy_buf_failed(m)) {
        sy_gresult_error(r, "IBM Guardrails: out of memory");
        return;
    }
    size_t s0, s1;
    sy_svcb_strip(m->p, m->len, &s0, &s1);
    sy_gresult_block(r, 500, "%.*s", (int)(s1 - s0), m->p + s0);
}

static int ibm_answer(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state, int status,
                      const char *body, size_t n, struct sy_gresult *r)
{
    (void)state;
    const struct ibm *b = g->impl;
    if (status < 200 || status > 299) {
        sy_gresult_error(r, "IBM Guardrails: the %s answered HTTP %d", b->server ? "detector server" : "orchestrator",
                         status);
        return SY_GSTEP_DONE;
    }
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int ok = sy_svcb_parse(&d, body, n, &a) == 0;
    uint32_t dets = 0;
    if (ok && !b->server && d.n[0].type == 'o') {
        dets = sy_jdom_get(&d, 0, "detections");
        ok = !dets || sy_jdom_kind(&d, dets) == 'a';
    } else if (ok)
        ok = d.n[0].type == 'a' && b->server;
    if (ok && b->server) /* a list of lists */
        for (uint32_t e = sy_jdom_first(&d, 0); ok && e; e = sy_jdom_next(&d, e))
            ok = d.n[e].type == 'a';
    if (!ok) {
        sy_gresult_error(r, "IBM Guardrails: the %s's answer is not the documented JSON",
                         b->server ? "detector server" : "orchestrator");
        sy_arena_free(&a);
        return SY_GSTEP_DONE;
    }
    free(r->detail);
    r->detail = NULL;
    if (n <= 65536 && d.n[0].type == 'o')
        r->detail = strndup(body, n);
    struct sy_buf m;
    sy_buf_init(&m, SY_SVCB_BODY_MAX);
    unsigned total = 0;
    if (b->server) {
        struct sy_buf lines;
        sy_buf_init(&lines, SY_SVCB_BODY_MAX);
        unsigned idx = 0;
        for (uint32_t e = sy_jdom_first(&d, 0); e; e = sy_jdom_next(&d, e), idx++) {
            unsigned here = 0;
            for (uint32_t det = sy_jdom_first(&d, e); det; det = sy_jdom_next(&d, det)) {
                if (!counts(b, &d, det))
                    continue;
                if (!here++)
                    sy_buf_printf(&lines, "Message %u:\n", idx + 1);
                detection_lines(&lines, b, &d, det, 0, &a);
            }
            if (here)
                SY_BUF_LIT(&lines, "\n");
            total += here;
        }
        sy_buf_printf(
            &m, "IBM Guardrail Detector failed: %u violation(s) detected\n\nIBM Guardrail Detector failed:\n\n", total);
        sy_buf_append_buf(&m, &lines);
        sy_buf_free(&lines);
    } else {
        for (uint32_t det = dets ? sy_jdom_first(&d, dets) : 0; det; det = sy_jdom_next(&d, det))
            total += counts(b, &d, det);
        sy_buf_printf(&m, "IBM Guardrail Detector failed: %u violation(s) detected\n\n", total);
        for (uint32_t det = dets ? sy_jdom_first(&d, dets) : 0; det; det = sy_jdom_next(&d, det))
            if (counts(b, &d, det)) {
                detection_lines(&m, b, &d, det, 1, &a);
                SY_BUF_LIT(&m, "\n");
            }
    }
    int more = 0;
    if (total && b->block)
        block_with(r, &m);
    else if (!b->server && nth(in, step + 1) < in->nseg)
        more = 1;
    sy_buf_free(&m);
    sy_arena_free(&a);
    return more ? SY_GSTEP_MORE : SY_GSTEP_DONE;
}

const struct sy_guard_ops sy_guard_ibm_guardrails = {
    .name = "ibm_guardrails",
    .modes = SY_GM_PRE | SY_GM_DURING | SY_GM_POST,
    .open = ibm_open,
    .close = ibm_close,
    .request = ibm_request,
    .answer = ibm_answer,
};
