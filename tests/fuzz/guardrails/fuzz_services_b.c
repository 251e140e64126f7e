/* fuzz_services_b.c - the service kinds aporia, bedrock, azure/text_moderations,
 * azure/prompt_shield and ibm_guardrails on hostile texts, request bodies,
 * extra_body and service answers: no crash, every request body is JSON, every
 * header line is "Name: value\r\n" without CR or LF inside, a verdict is one of
 * the four with a message when it blocks or fails, and a multi-step exchange
 * ends within its steps.
 *
 * Input: byte 0 picks the kind (low 3 bits) and the phase / dialect (next bits);
 * bit 7 set: the rest is litellm_params JSON for every kind's open() instead.
 * Otherwise the rest is NUL-separated: the texts (one segment per line, its first
 * byte giving the role and kind), the request body, extra_body, then the
 * answers the service gives, one per step.
 */
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "guardrails/guardrail.h"
#include "providers/jdom.h"

static const char *const kinds[] = {"aporia", "bedrock", "azure/text_moderations", "azure/prompt_shield",
                                    "ibm_guardrails"};
static const char *const params[] = {
    "{\"api_key\":\"k\",\"api_base\":\"http://127.0.0.1:1/p\"}",
    "{\"guardrailIdentifier\":\"g\",\"guardrailVersion\":\"1\",\"aws_access_key_id\":\"A\","
    "\"aws_secret_access_key\":\"S\",\"aws_session_token\":\"T\"}",
    "{\"api_key\":\"k\",\"api_base\":\"http://127.0.0.1:1\",\"severity_threshold_by_category\":{\"Hate\":1}}",
    "{\"api_key\":\"k\",\"api_base\":\"http://127.0.0.1:1\"}",
    "{\"auth_token\":\"t\",\"base_url\":\"http://127.0.0.1:1\",\"detector_id\":\"d\",\"is_detector_server\":false,"
    "\"optional_params\":{\"score_threshold\":0.5}}",
};

static void check_request(const struct sy_ghttp *q)
{
    if (!q->url)
        return;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, q->body.p ? q->body.p : "", q->body.len, &a, 0) != 0)
        abort();
    sy_arena_free(&a);
    const char *p = q->headers.p, *end = p + q->headers.len;
    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl || nl == p || nl[-1] != '\r' || !memchr(p, ':', (size_t)(nl - p)) ||
            memchr(p, '\r', (size_t)(nl - 1 - p)))
            abort();
        p = nl + 1;
    }
}

static void fuzz_open(const uint8_t *data, size_t size)
{
    char *s = strndup((const char *)data, size);
    struct json_object *j = s ? json_tokener_parse(s) : NULL;
    free(s);
    if (!j)
        return;
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        struct sy_guard g = {.ops = sy_guard_kind(kinds[k])};
        char err[256];
        if (g.ops && g.ops->open(&g, j, NULL, err, sizeof err) == 0)
            g.ops->close(&g);
    }
    json_object_put(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsetenv("AWS_BEARER_TOKEN_BEDROCK");
    if (data[0] & 0x80) {
        fuzz_open(data + 1, size - 1);
        return 0;
    }
    size_t k = (data[0] & 7) % (sizeof kinds / sizeof *kinds);
    /* fields */
    char *buf = malloc(size);
    if (!buf)
        return 0;
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = 0;
    char *field[12] = {0};
    size_t flen[12] = {0}, nf = 0;
    for (char *p = buf, *end = buf + size - 1; nf < 12 && p <= end;) {
        char *z = memchr(p, 0, (size_t)(end - p) + 1);
        field[nf] = p;
        flen[nf++] = (size_t)(z - p);
        p = z + 1;
    }
    struct sy_gseg seg[64];
    size_t nseg = 0;
    for (char *p = field[0], *end = field[0] + flen[0]; p && p < end && nseg < 64;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (l) {
            seg[nseg] = (struct sy_gseg){.text = p + 1,
                                         .len = l - 1,
                                         .role = (unsigned char)(p[0] % 5),
                                         .kind = (unsigned char)((p[0] >> 3) % 3),
                                         .msg = (int)nseg / 2};
            nseg++;
        }
        p += l + 1;
    }
    struct sy_ginput in = {.phase = (data[0] & 8) ? SY_GM_POST : SY_GM_PRE,
                           .dialect = (data[0] >> 4) % 3,
                           .seg = seg,
                           .nseg = nseg,
                           .body = field[1] ? field[1] : "",
                           .body_len = field[1] ? flen[1] : 0,
                           .extra_body = field[2] && flen[2] ? field[2] : NULL};
    in.request = in.body;
    in.request_len = in.body_len;
    for (size_t i = 0; i < nseg; i++) /* segment texts must be NUL-terminated: copy them */
        seg[i].text = strndup(seg[i].text, seg[i].len);
    struct json_object *pj = json_tokener_parse(params[k]);
    struct sy_guard g = {.ops = sy_guard_kind(kinds[k])};
    char err[256];
    if (g.ops && pj && g.ops->open(&g, pj, NULL, err, sizeof err) == 0) {
        void *state = NULL;
        struct sy_gresult r = {0};
        for (int step = 0; step < 8; step++) {
            struct sy_ghttp q = {0};
            int rc = g.ops->request(&g, &in, step, &state, &q);
            check_request(&q);
            if (rc != 0 || !q.url) {
                sy_ghttp_free(&q);
                break;
            }
            sy_ghttp_free(&q);
            const char *ans = field[3 + step] ? field[3 + step] : "";
            size_t al = field[3 + step] ? flen[3 + step] : 0;
            int status = al && ans[0] == '5' ? 500 : 200;
            sy_gresult_free(&r);
            if (g.ops->answer(&g, &in, step, &state, status, ans, al, &r) != SY_GSTEP_MORE)
                break;
        }
        if ((r.verdict == SY_GV_BLOCK || r.verdict == SY_GV_ERROR) && !r.message)
            abort();
        if (r.verdict > SY_GV_ERROR)
            abort();
        sy_gresult_free(&r);
        if (state && g.ops->free_state)
            g.ops->free_state(state);
        g.ops->close(&g);
    }
    json_object_put(pj);
    for (size_t i = 0; i < nseg; i++)
        free((char *)seg[i].text);
    free(buf);
    return 0;
}
