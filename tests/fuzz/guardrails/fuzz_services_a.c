/* fuzz_services_a.c - libFuzzer harness for the answers of the service kinds
 * generic_guardrail_api, openai_moderation, presidio and lakera_v2
 * (src/guardrails/services/): the first byte picks the kind, its settings and
 * the HTTP status; the rest, split at the first NUL, is the user's text and
 * the service's answer. Every request a kind builds must be one JSON object
 * (json-c is the oracle); every answer must end in a verdict whose parts are
 * consistent (a block has a message, a mask has its texts), and presidio's
 * steps must end within its bound, whatever bytes the text and the answer
 * hold. */
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "guardrails/guardrail.h"
#include "providers/jdom.h"

static const char *const KIND[] = {"generic_guardrail_api", "openai_moderation", "presidio", "lakera_v2"};
static const char *const CFG[] = {
    "{\"api_base\":\"http://g\",\"api_key\":\"k\",\"additional_provider_specific_params\":{\"a\":1}}",
    "{\"api_key\":\"k\"}",
    "{\"presidio_analyzer_api_base\":\"a\",\"presidio_anonymizer_api_base\":\"b\",\"pii_entities_config\":{"
    "\"US_SSN\":\"BLOCK\",\"PERSON\":\"MASK\"},\"presidio_score_thresholds\":{\"ALL\":0.5}}",
    "{\"api_key\":\"k\"}",
};
static const int STATUS[] = {200, 200, 200, 201, 500, 401, 0, 299};

static void check_json(const struct sy_buf *b)
{
    json_tokener *tok = json_tokener_new();
    json_object *o = json_tokener_parse_ex(tok, b->p ? b->p : "", (int)b->len);
    int ok = json_tokener_get_error(tok) == json_tokener_success && o && json_object_is_type(o, json_type_object);
    json_object_put(o);
    json_tokener_free(tok);
    if (!ok)
        abort();
}

static void check_result(const struct sy_gresult *r, size_t nseg)
{
    if (r->verdict == SY_GV_BLOCK && (!r->message || r->status != 400))
        abort();
    if (r->verdict == SY_GV_ERROR && !r->message)
        abort();
    if (r->verdict == SY_GV_MASKED) {
        int any = 0;
        for (size_t i = 0; r->repl && i < nseg; i++)
            any |= r->repl[i] != NULL;
        if (!any && !r->body)
            abort();
    }
    for (size_t i = 0; i < r->npairs; i++)
        if (!r->pairs[i].placeholder || !r->pairs[i].original)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned sel = data[0];
    data++;
    size--;
    const uint8_t *nul = memchr(data, 0, size);
    size_t tl = nul ? (size_t)(nul - data) : size;
    char *text = malloc(tl + 1);
    const char *ans = nul ? (const char *)nul + 1 : "";
    size_t al = nul ? size - tl - 1 : 0;
    if (!text)
        return 0;
    memcpy(text, data, tl);
    text[tl] = 0;

    struct sy_guard g;
    memset(&g, 0, sizeof g);
    g.ops = sy_guard_kind(KIND[sel & 3]);
    g.name = "fz";
    json_object *p = json_tokener_parse(CFG[sel & 3]);
    if (sel & 0x40) /* reversible tokens / monitor */
        json_object_object_add(p, (sel & 3) == 2 ? "output_parse_pii" : "on_flagged",
                               (sel & 3) == 2 ? json_object_new_boolean(1) : json_object_new_string("monitor"));
    char err[256];
    if (g.ops->open(&g, p, NULL, err, sizeof err) != 0)
        abort();
    json_object_put(p);

    /* {"messages":[{"role":"user","content":<text>}]}, the content's span known */
    struct sy_buf body;
    sy_buf_init(&body, (size_t)1 << 26);
    SY_BUF_LIT(&body, "{\"messages\":[{\"role\":\"user\",\"content\":");
    size_t off = body.len;
    struct sy_jw w;
    sy_jw_init(&w, &body);
    sy_jw_str(&w, text, tl);
    size_t raw = body.len - off;
    SY_BUF_LIT(&body, "}]}");
    struct sy_gseg seg = {.text = text, .len = tl, .off = off, .raw_len = raw, .role = SY_GR_USER, .msg = 0};
    struct sy_ginput in = {.phase = (sel & 0x80) ? SY_GM_POST : SY_GM_PRE,
                           .dialect = SY_GD_CHAT,
                           .model = "m",
                           .call_id = "c",
                           .seg = &seg,
                           .nseg = 1,
                           .body = body.p,
                           .body_len = body.len,
                           .extra_body = (sel & 0x20) ? "{\"x\":[1,{\"y\":null}]}" : NULL};
    void *st = NULL;
    for (int step = 0; step < 8; step++) {
        struct sy_ghttp req;
        if (g.ops->request(&g, &in, step, &st, &req) != 0)
            break;
        if (!req.url)
            break;
        check_json(&req.body);
        sy_ghttp_free(&req);
        struct sy_gresult r;
        memset(&r, 0, sizeof r);
        int status = STATUS[(sel >> 2) & 7];
        int rc = status ? g.ops->answer(&g, &in, step, &st, status, ans, al, &r) : SY_GSTEP_DONE;
        if (rc == SY_GSTEP_DONE)
            check_result(&r, in.nseg);
        sy_gresult_free(&r);
        if (rc == SY_GSTEP_DONE)
            break;
        if (step == 7 && (sel & 3) != 2)
            abort(); /* only presidio takes more than one step */
    }
    if (g.ops->free_state)
        g.ops->free_state(st);
    g.ops->close(&g);
    sy_buf_free(&body);
    free(text);
    return 0;
}
