/* bedrock.c - the `bedrock` guardrail: Amazon Bedrock's ApplyGuardrail, as
 * LiteLLM's guardrail_hooks/bedrock_guardrails.py calls it (pre_call,
 * during_call, post_call).
 *
 *   setting               from (litellm_params first, then the environment)
 *   --------------------  ---------------------------------------------------------------
 *   guardrailIdentifier   required (an id or an ARN)
 *   guardrailVersion      required ("DRAFT", "1", ...)
 *   region                aws_region_name, else AWS_REGION_NAME, AWS_REGION (which wins
 *                         over AWS_REGION_NAME, as LiteLLM reads them), else us-west-2
 *   SigV4 keys            aws_access_key_id / aws_secret_access_key / aws_session_token,
 *                         else AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN
 *   bearer key            AWS_BEARER_TOKEN_BEDROCK: sent instead of SigV4 when set
 *   endpoint              aws_bedrock_runtime_endpoint, AWS_BEDROCK_RUNTIME_ENDPOINT,
 *                         api_base (ours, for tests and proxies), else
 *                         https://bedrock-runtime.{region}.amazonaws.com
 *   experimental_use_latest_role_message_only   only the last user message is sent
 *
 * Refused at load (no STS, profile files or web identity here): aws_role_name,
 * aws_profile_name, aws_web_identity_token; `checks` (InvokeGuardrailChecks mode).
 * Missing credentials are an ERROR of the call (as boto3's NoCredentialsError), so
 * a config declaring the guardrail loads without them.
 *
 * Request: POST {endpoint}/guardrail/{guardrailIdentifier}/version/{guardrailVersion}/apply
 *
 *   Content-Type: application/json                                       (signed)
 *   X-Amz-Date, [X-Amz-Security-Token], Authorization: AWS4-HMAC-SHA256 ... service
 *   "bedrock", the region above (providers/sigv4.h); or Authorization: Bearer <key>
 *
 *   {"source": "INPUT", "content": [{"text": {"text": "..."}}, ...]}   pre/during_call:
 *        every message's text (string content, text parts, tool results), in order
 *   {"source": "OUTPUT", "content": [...]}                            post_call: the
 *        answer's texts; no text (a tool call only): nothing is sent
 *
 * then the request's extra_body for this guardrail merged in (never `content` or
 * `source`).
 *
 * Answer (HTTP 200 JSON object; anything else is an ERROR with AWS's message):
 *
 *   action GUARDRAIL_INTERVENED with any assessment's action BLOCKED (topicPolicy
 *   topics, contentPolicy filters, wordPolicy customWords / managedWordLists,
 *   sensitiveInformationPolicy piiEntities / regexes, contextualGroundingPolicy
 *   filters): BLOCK 400
 *     "{'error': 'Violated guardrail policy', 'bedrock_guardrail_response': '<outputs'
 *      texts>', 'guardrailIdentifier': '..', 'guardrailVersion': '..', 'assessments':
 *      [{'policy': 'topicPolicy', 'matches': [{'category': 'topics', 'name': ..,
 *      'type': .., 'action': 'BLOCKED'}]}, ...]}"
 *     (the blocked matches only, `match` and `regex` values '[REDACTED]')
 *   outputs (ANONYMIZED): MASKED, the texts sent replaced in order by outputs[].text
 *   anything else: PASS
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/errors.h"
#include "core/pyrepr.h"
#include "guardrails/guardrail.h"
#include "guardrails/services/svc_b.h"
#include "providers/sigv4.h"

struct bedrock {
    char *id, *version, *region, *endpoint;
    char *ak, *sk, *token, *bearer;
    int latest_only;
};

static void bd_free(struct bedrock *b)
{
    if (!b)
        return;
    free(b->id);
    free(b->version);
    free(b->region);
    free(b->endpoint);
    free(b->ak);
    free(b->sk);
    free(b->token);
    free(b->bearer);
    free(b);
}

/* A string or number setting as text ("1" for guardrailVersion: 1). */
static const char *str_or_num(struct json_object *p, const char *key)
{
    struct json_object *v = NULL;
    if (!json_object_object_get_ex(p, key, &v) || !v)
        return NULL;
    if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_string)) {
        const char *s = json_object_get_string(v);
        return s && *s ? s : NULL;
    }
    return NULL;
}

static const char *env_nonempty(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static int bd_open(struct sy_guard *g, struct json_object *params, const struct sy_genv *env, char *err, size_t errlen)
{
    (void)env;
    static const char *const refused[] = {"aws_role_name", "aws_profile_name", "aws_web_identity_token", "checks"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        if (sy_svcb_str(params, refused[i]) ||
            (!strcmp(refused[i], "checks") && json_object_is_type(params, json_type_object) &&
             json_object_object_get_ex(params, "checks", NULL))) {
            snprintf(err, errlen, "bedrock: %s is not supported (give aws_access_key_id / aws_secret_access_key)",
                     refused[i]);
            return -1;
        }
    const char *id = str_or_num(params, "guardrailIdentifier"), *ver = str_or_num(params, "guardrailVersion");
    if (!id || !ver) {
        snprintf(err, errlen, "bedrock: guardrailIdentifier and guardrailVersion are required");
        return -1;
    }
    if (!sy_svcb_url_safe(id) || !sy_svcb_url_safe(ver) || strpbrk(id, "?#") || strpbrk(ver, "?#/")) {
        snprintf(err, errlen, "bedrock: guardrailIdentifier / guardrailVersion hold characters a URL path cannot");
        return -1;
    }
    const char *region = sy_svcb_str(params, "aws_region_name");
    if (!region) {
        region = env_nonempty("AWS_REGION_NAME");
        if (env_nonempty("AWS_REGION"))
            region = env_nonempty("AWS_REGION");
        if (!region)
            region = "us-west-2";
    }
    const char *ep = sy_svcb_str(params, "aws_bedrock_runtime_endpoint");
    if (!ep)
        ep = env_nonempty("AWS_BEDROCK_RUNTIME_ENDPOINT");
    if (!ep)
        ep = sy_svcb_str(params, "api_base");
    char dflt[256];
    if (!ep) {
        if (!sy_svcb_url_safe(region) || strpbrk(region, "/?#@:")) {
            snprintf(err, errlen, "bedrock: aws_region_name is not a region name");
            return -1;
        }
        snprintf(dflt, sizeof dflt, "https://bedrock-runtime.%s.amazonaws.com", region);
        ep = dflt;
    }
    if ((strncmp(ep, "http://", 7) && strncmp(ep, "https://", 8)) || !sy_svcb_url_safe(ep) || strpbrk(ep, "?#")) {
        snprintf(err, errlen, "bedrock: the runtime endpoint must be an http(s) URL without query");
        return -1;
    }
    struct bedrock *b = calloc(1, sizeof *b);
    int oom = !b;
    if (b) {
        b->id = sy_svcb_dup(id, &oom);
        b->version = sy_svcb_dup(ver, &oom);
        b->region = sy_svcb_dup(region, &oom);
        b->endpoint = sy_svcb_dup(ep, &oom);
        const char *ak = sy_svcb_str(params, "aws_access_key_id"), *sk = sy_svcb_str(params, "aws_secret_access_key");
        const char *tok = sy_svcb_str(params, "aws_session_token");
        if (!ak)
            ak = env_nonempty("AWS_ACCESS_KEY_ID");
        if (!sk)
            sk = env_nonempty("AWS_SECRET_ACCESS_KEY");
        if (!tok)
            tok = env_nonempty("AWS_SESSION_TOKEN");
        b->ak = sy_svcb_dup(ak, &oom);
        b->sk = sy_svcb_dup(sk, &oom);
        b->token = sy_svcb_dup(tok, &oom);
        b->bearer = sy_svcb_dup(env_nonempty("AWS_BEARER_TOKEN_BEDROCK"), &oom);
        b->latest_only = sy_svcb_bool(params, "experimental_use_latest_role_message_only", 0);
        const char *creds[] = {b->ak, b->sk, b->token, b->bearer};
        for (int i = 0; !oom && i < 4; i++)
            if (creds[i] && strpbrk(creds[i], "\r\n")) {
                bd_free(b);
                snprintf(err, errlen, "bedrock: a credential holds a line break");
                return -1;
            }
    }
    if (oom) {
        bd_free(b);
        snprintf(err, errlen, "bedrock: out of memory");
        return -1;
    }
    g->impl = b;
    return 0;
}

static void bd_close(struct sy_guard *g)
{
    bd_free(g->impl);
    g->impl = NULL;
}

/* The segments sent, in order: 1 when segment i is one. */
static int sent(const struct bedrock *b, const struct sy_ginput *in, size_t i, int last_user_msg)
{
    const struct sy_gseg *s = &in->seg[i];
    if (in->phase == SY_GM_POST)
        return sy_svcb_is_answer_text(s);
    if (!sy_svcb_is_content(s))
        return 0;
    return !b->latest_only || (s->role == SY_GR_USER && s->msg == last_user_msg);
}

static int last_user(const struct sy_ginput *in)
{
    for (size_t i = in->nseg; i > 0; i--)
        if (in->seg[i - 1].role == SY_GR_USER)
            return in->seg[i - 1].msg;
    return -1;
}

int sy_guard_bedrock_request_at(const struct sy_guard *g, const struct sy_ginput *in, int64_t now, struct sy_ghttp *req)
{
    const struct bedrock *b = g->impl;
    if (!b)
        return -1;
    int lu = last_user(in);
    size_t count = 0;
    for (size_t i = 0; i < in->nseg; i++)
        count += sent(b, in, i, lu);
    if (!count) /* no text: LiteLLM skips the call */
        return 0;
    if (!b->bearer && (!b->ak || !b->sk))
        return -1; /* "Unable to locate credentials" */
    struct sy_buf url;
    sy_buf_init(&url, 16384);
    sy_buf_printf(&url, "%s/guardrail/%s/version/%s/apply", b->endpoint, b->id, b->version);
    if (sy_buf_failed(&url) || sy_svcb_post(req, url.p) != 0) {
        sy_buf_free(&url);
        return -1;
    }
    sy_buf_free(&url);
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_svcb_extra x;
    sy_svcb_extra_open(&x, in->extra_body, &a);
    struct sy_jw w;
    sy_jw_init(&w, &req->body);
    sy_jw_obj(&w);
    sy_jw_key(&w, "source");
    sy_jw_cstr(&w, in->phase == SY_GM_POST ? "OUTPUT" : "INPUT");
    sy_jw_key(&w, "content");
    sy_jw_arr(&w);
    for (size_t i = 0; i < in->nseg; i++) {
        if (!sent(b, in, i, lu))
            continue;
        sy_jw_obj(&w);
        sy_jw_key(&w, "text");
        sy_jw_obj(&w);
        sy_jw_key(&w, "text");
        sy_jw_str(&w, in->seg[i].text, in->seg[i].len);
        sy_jw_end(&w);
        sy_jw_end(&w);
    }
    sy_jw_end(&w);
    static const char *const deny[] = {"content", "source", NULL};
    sy_svcb_extra_rest(&w, &x, deny, NULL, &a);
    sy_jw_end(&w);
    sy_arena_free(&a);
    int rc = w.err || sy_buf_failed(&req->body);
    rc |= sy_svcb_header(req, "Content-Type", "application/json");
    if (rc)
        return -1;
    if (b->bearer) {
        char *v = NULL;
        if (asprintf(&v, "Bearer %s", b->bearer) < 0)
            return -1;
        rc = sy_svcb_header(req, "Authorization", v);
        free(v);
        return rc;
    }
    /* host and path of the URL as sent */
    const char *auth = strstr(req->url, "://") + 3;
    const char *path = strchr(auth, '/');
    char host[512];
    size_t hl = path ? (size_t)(path - auth) : strlen(auth);
    if (hl >= sizeof host)
        return -1;
    memcpy(host, auth, hl);
    host[hl] = 0;
    char date[17];
    sy_sigv4_amz_date(now, date);
    struct sy_sigv4_header h[] = {{"content-type", "application/json"}};
    struct sy_sigv4 s = {.method = "POST",
                         .host = host,
                         .path = path ? path : "/",
                         .headers = h,
                         .nheaders = 1,
                         .payload = req->body.p,
                         .payload_len = req->body.len,
                         .access_key = b->ak,
                         .secret_key = b->sk,
                         .session_token = b->token,
                         .region = b->region,
                         .service = "bedrock",
                         .amz_date = date};
    return sy_sigv4_sign(&s, &req->headers) == 0 ? 0 : -1;
}

static int bd_request(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state,
                      struct sy_ghttp *req)
{
    (void)state;
    if (step != 0)
        return -1;
    return sy_guard_bedrock_request_at(g, in, (int64_t)time(NULL), req);
}

/* ---- the answer ---- */

/* The policies LiteLLM reads, and the fields of each match it reports. */
struct list_spec {
    const char *list;          /* the assessment's list, also the match's category */
    const char *const *fields; /* NULL-terminated, after "category" */
};
struct policy_spec {
    const char *policy;
    struct list_spec lists[2];
};
static const char *const f_topics[] = {"name", "type", "action", NULL};
static const char *const f_filters[] = {"type", "confidence", "filterStrength", "action", NULL};
static const char *const f_custom[] = {"match", "action", NULL};
static const char *const f_managed[] = {"type", "match", "action", NULL};
static const char *const f_pii[] = {"type", "match", "action", NULL};
static const char *const f_regex[] = {"name", "regex", "match", "action", NULL};
static const char *const f_ground[] = {"type", "threshold", "score", "action", NULL};
static const struct policy_spec policies[] = {
    {"topicPolicy", {{"topics", f_topics}, {NULL, NULL}}},
    {"contentPolicy", {{"filters", f_filters}, {NULL, NULL}}},
    {"wordPolicy", {{"customWords", f_custom}, {"managedWordLists", f_managed}}},
    {"sensitiveInformationPolicy", {{"piiEntities", f_pii}, {"regexes", f_regex}}},
    {"contextualGroundingPolicy", {{"filters", f_ground}, {NULL, NULL}}},
};

static int blocked(const struct sy_jdoc *d, uint32_t item)
{
    return sy_jdom_kind(d, item) == 'o' && sy_jdom_str_eq(d, sy_jdom_get(d, item, "action"), "BLOCKED");
}

/* The blocked assessments as LiteLLM's _extract_blocked_assessments lists them, redacted, into b
 * ("[...]"); returns how many groups. */
static int blocked_assessments(struct sy_buf *b, const struct sy_jdoc *d, struct sy_arena *a)
{
    int groups = 0;
    uint32_t as = sy_jdom_get(d, 0, "assessments");
    SY_BUF_LIT(b, "[");
    for (uint32_t e = sy_jdom_kind(d, as) == 'a' ? sy_jdom_first(d, as) : 0; e; e = sy_jdom_next(d, e)) {
        if (d->n[e].type != 'o')
            continue;
        for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
            uint32_t pol = sy_jdom_get(d, e, policies[p].policy);
            if (sy_jdom_kind(d, pol) != 'o' || !d->n[pol].kids)
                continue;
            int matches = 0;
            for (int l = 0; l < 2 && policies[p].lists[l].list; l++) {
                uint32_t list = sy_jdom_get(d, pol, policies[p].lists[l].list);
                for (uint32_t m = sy_jdom_kind(d, list) == 'a' ? sy_jdom_first(d, list) : 0; m;
                     m = sy_jdom_next(d, m)) {
                    if (!blocked(d, m))
                        continue;
                    if (!matches) {
                        if (groups)
                            SY_BUF_LIT(b, ", ");
                        SY_BUF_LIT(b, "{'policy': ");
                        sy_py_str_repr(b, policies[p].policy, strlen(policies[p].policy));
                        SY_BUF_LIT(b, ", 'matches': [");
                        groups++;
                    } else
                        SY_BUF_LIT(b, ", ");
                    matches++;
                    SY_BUF_LIT(b, "{'category': ");
                    sy_py_str_repr(b, policies[p].lists[l].list, strlen(policies[p].lists[l].list));
                    for (const char *const *f = policies[p].lists[l].fields; *f; f++) {
                        SY_BUF_LIT(b, ", ");
                        sy_py_str_repr(b, *f, strlen(*f));
                        SY_BUF_LIT(b, ": ");
                        if (!strcmp(*f, "match") || !strcmp(*f, "regex"))
                            SY_BUF_LIT(b, "'[REDACTED]'");
                        else
                            sy_svcb_repr(b, d, sy_jdom_get(d, m, *f), a);
                    }
                    SY_BUF_LIT(b, "}");
                }
            }
            if (matches)
                SY_BUF_LIT(b, "]}");
        }
    }
    SY_BUF_LIT(b, "]");
    return groups;
}

/* AWS's error message (LiteLLM's _parse_bedrock_guardrail_error_response). */
static void aws_error(struct sy_gresult *r, int status, const char *body, size_t n, struct sy_arena *a)
{
    struct sy_jdoc d;
    const char *msg = NULL;
    size_t ml = 0;
    if (sy_svcb_parse(&d, body, n, a) == 0 && d.n[0].type == 'o') {
        uint32_t m = sy_jdom_get(&d, 0, "message"), e = sy_jdom_get(&d, 0, "error");
        if (sy_jdom_kind(&d, m) == 's')
            msg = sy_jdom_str(&d, m, a, &ml);
        else if (sy_jdom_kind(&d, e) == 'o' && sy_jdom_kind(&d, sy_jdom_get(&d, e, "message")) == 's')
            msg = sy_jdom_str(&d, sy_jdom_get(&d, e, "message"), a, &ml);
        else if (sy_jdom_kind(&d, e) == 's')
            msg = sy_jdom_str(&d, e, a, &ml);
    } else if (body && n) {
        size_t s0, s1;
        sy_svcb_strip(body, n, &s0, &s1);
        msg = body + s0;
        ml = s1 - s0;
    }
    if (!msg || !ml) {
        msg = "Bedrock guardrail request failed";
        ml = strlen(msg);
    }
    if (ml > 2048)
        ml = 2048;
    sy_gresult_error(r, "bedrock: HTTP %d: %.*s", status, (int)ml, msg);
}

static int bd_answer(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state, int status,
                     const char *body, size_t n, struct sy_gresult *r)
{
    (void)step;
    (void)state;
    const struct bedrock *bd = g->impl;
    struct sy_arena a;
    sy_arena_init(&a);
    if (status != 200) {
        aws_error(r, status, body, n, &a);
        sy_arena_free(&a);
        return SY_GSTEP_DONE;
    }
    struct sy_jdoc d;
    if (sy_svcb_parse(&d, body, n, &a) != 0 || d.n[0].type != 'o') {
        sy_gresult_error(r, "bedrock: the service's answer is not a JSON object");
        sy_arena_free(&a);
        return SY_GSTEP_DONE;
    }
    uint32_t outs = sy_jdom_get(&d, 0, "outputs");
    if (sy_jdom_kind(&d, outs) != 'a')
        outs = 0;
    if (sy_jdom_str_eq(&d, sy_jdom_get(&d, 0, "action"), "GUARDRAIL_INTERVENED")) {
        struct sy_buf as;
        sy_buf_init(&as, SY_SVCB_BODY_MAX);
        if (blocked_assessments(&as, &d, &a) > 0 || sy_buf_failed(&as)) {
            struct sy_buf m, text;
            sy_buf_init(&m, SY_SVCB_BODY_MAX);
            sy_buf_init(&text, SY_SVCB_BODY_MAX);
            for (uint32_t o = outs ? sy_jdom_first(&d, outs) : 0; o; o = sy_jdom_next(&d, o)) {
                uint32_t t = d.n[o].type == 'o' ? sy_jdom_get(&d, o, "text") : 0;
                size_t tl;
                const char *ts = sy_jdom_kind(&d, t) == 's' ? sy_jdom_str(&d, t, &a, &tl) : NULL;
                if (ts)
                    sy_buf_append(&text, ts, tl);
            }
            SY_BUF_LIT(&m, "{'error': 'Violated guardrail policy', 'bedrock_guardrail_response': ");
            sy_py_str_repr(&m, text.p ? text.p : "", text.len);
            SY_BUF_LIT(&m, ", 'guardrailIdentifier': ");
            sy_py_str_repr(&m, bd->id, strlen(bd->id));
            SY_BUF_LIT(&m, ", 'guardrailVersion': ");
            sy_py_str_repr(&m, bd->version, strlen(bd->version));
            if (as.len > 2) {
                SY_BUF_LIT(&m, ", 'assessments': ");
                sy_buf_append_buf(&m, &as);
            }
            SY_BUF_LIT(&m, "}");
            if (sy_buf_failed(&m) || sy_buf_failed(&as))
                sy_gresult_error(r, "bedrock: out of memory");
            else
                sy_gresult_block(r, 400, "%s", m.p);
            sy_buf_free(&m);
            sy_buf_free(&text);
            sy_buf_free(&as);
            sy_arena_free(&a);
            return SY_GSTEP_DONE;
        }
        sy_buf_free(&as);
    }
    /* masked outputs, in the order the texts were sent */
    int lu = last_user(in);
    uint32_t o = outs ? sy_jdom_first(&d, outs) : 0;
    for (size_t i = 0; o && i < in->nseg; i++) {
        if (!sent(bd, in, i, lu))
            continue;
        uint32_t t = d.n[o].type == 'o' ? sy_jdom_get(&d, o, "text") : 0;
        o = sy_jdom_next(&d, o);
        size_t tl;
        const char *ts = sy_jdom_kind(&d, t) == 's' ? sy_jdom_str(&d, t, &a, &tl) : NULL;
        if (!ts || (tl == in->seg[i].len && !memcmp(ts, in->seg[i].text, tl)))
            continue;
        if (sy_gresult_repl(r, in->nseg) != 0 || !(r->repl[i] = strndup(ts, tl))) {
            sy_gresult_error(r, "bedrock: out of memory");
            sy_arena_free(&a);
            return SY_GSTEP_DONE;
        }
        r->verdict = SY_GV_MASKED;
        r->masked++;
    }
    sy_arena_free(&a);
    return SY_GSTEP_DONE;
}

const struct sy_guard_ops sy_guard_bedrock = {
    .name = "bedrock",
    .modes = SY_GM_PRE | SY_GM_DURING | SY_GM_POST,
    .open = bd_open,
    .close = bd_close,
    .request = bd_request,
    .answer = bd_answer,
};
