/* route.c - the route stage: which model group serves the request, and the
 * request-level router parameters (LiteLLM reference §3.5, §3.6, §3.8).
 *
 *   1. the requested model -> group: the team's model_aliases, then the
 *      key's aliases (keycheck.c, sy_call_aliased), then exact name,
 *      model_group_alias, the most specific wildcard group (router/compile.c);
 *      a wildcard group forwards the name it was resolved from (its '*' part,
 *      c->group_model) as the upstream model;
 *   2. LiteLLM's request keys, read and then removed from the forwarded body
 *      (they are not OpenAI parameters):
 *        | body key                 | header                     | meaning                  |
 *        | num_retries              | x-litellm-num-retries      | retries in a group       |
 *        | timeout                  | x-litellm-timeout          | seconds, whole request   |
 *        | stream_timeout           | x-litellm-stream-timeout   | seconds to first chunk   |
 *        | fallbacks                |                            | list of groups           |
 *        | disable_fallbacks        | x-litellm-disable-fallbacks| true: no fallbacks       |
 *        | mock_testing_fallbacks   |                            | true: the requested group  |
 *        |                          |                            | fails (500) untried, so the|
 *        |                          |                            | fallbacks run (LiteLLM's   |
 *        |                          |                            | test hook)                 |
 *        | mock_testing_rate_limit_error |                       | true: the first attempt  |
 *        |                          |                            | fails with a 429         |
 *        | mock_timeout             |                            | true: attempts time out  |
 *        | tags                     | x-litellm-tags (a,b)       | tag routing (with        |
 *        |                          |                            | metadata.tags)           |
 *        | context_window_fallbacks, content_policy_fallbacks: removed                          |
 *      A wrong type is a 400 naming the key;
 *   3. the prompt's exact token count when it can decide the pick (pre-call
 *      context checks, tpm limits; see sy_route_needs_count), on the thread
 *      pool above SY_OFFLOAD_MIN_BYTES.
 * The deployment itself is picked per attempt by the upstream stage
 * (proxy.c), since retries and fallbacks pick again.
 */
#include "gateway/gateway.h"
#include "gateway/stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "gateway/offload.h"
#include "http/server.h"
#include "keys/keys.h"
#include "providers/jdom.h"
#include "tokenizer/tokenizer.h"

static int bad_key(struct sy_call *c, const char *key, const char *want)
{
    char msg[256];
    snprintf(msg, sizeof msg, "Invalid type for '%s': expected %s.", key, want);
    sy_call_error(c, 400, "invalid_request_error", key, msg, NULL, 0);
    return SY_DONE;
}

static int num_value(const char *p, size_t n, double *out)
{
    char t[64];
    if (!n || n >= sizeof t)
        return -1;
    memcpy(t, p, n);
    t[n] = 0;
    char *e;
    double d = strtod(t, &e);
    if (*e || d < 0)
        return -1;
    *out = d;
    return 0;
}

/* A body span (number, or a numeric string as LiteLLM's pydantic accepts). */
static int span_num(struct sy_call *c, struct sy_jspan v, double *out)
{
    const char *b = c->req->body.p + v.off;
    if (v.type == 'n')
        return num_value(b, v.len, out);
    if (v.type == 's' && v.len >= 2)
        return num_value(b + 1, v.len - 2, out);
    return -1;
}

static int header_num(struct sy_call *c, const char *name, double *out)
{
    struct sy_str h = sy_req_header(c->req, name);
    if (!h.p)
        return 0;
    return num_value(h.p, h.n, out) == 0 ? 1 : -1;
}

/* Append a string node's value to the call's request fallbacks. -1: not a string. */
static int fb_push(struct sy_call *c, const struct sy_jdoc *d, uint32_t i, size_t *cap)
{
    size_t n;
    const char *name = sy_jdom_kind(d, i) == 's' ? sy_jdom_str(d, i, &c->req->arena, &n) : NULL;
    if (!name || strlen(name) != n)
        return -1;
    if (c->opt.nfb_req == *cap) {
        const char **nl = sy_arena_alloc(&c->req->arena, 2 * *cap * sizeof *nl);
        if (c->opt.nfb_req)
            memcpy(nl, c->opt.fb_req, c->opt.nfb_req * sizeof *nl);
        c->opt.fb_req = nl;
        *cap *= 2;
    }
    c->opt.fb_req[c->opt.nfb_req++] = name;
    return 0;
}

/* body `fallbacks`, in LiteLLM's per-request forms (router_utils/
 * fallback_event_handlers.py); null = the config's:
 *   ["g1", "g2"]                          the groups, in order;
 *   [{"model": "g1", "messages": [..]}]   a group per item, named by "model"
 *                                         (its other keys are not applied:
 *                                         the fallback gets the request's body);
 *   [{"g0": ["g1", "g2"]}]                the list of the requested group g0,
 *                                         else of "*" (the config's shape).
 * Every name read is access-checked up front (sy_stage_route). */
static int read_fallbacks(struct sy_call *c, struct sy_jspan v)
{
    if (v.type == 'z')
        return 0;
    struct sy_jdoc d;
    if (v.type != 'a' || sy_jdom_parse(&d, c->req->body.p + v.off, v.len, &c->req->arena, 0) != 0)
        return -1;
    size_t cap = 8;
    c->opt.nfb_req = 0;
    c->opt.fb_req = sy_arena_alloc(&c->req->arena, cap * sizeof *c->opt.fb_req);
    uint32_t mine = 0, star = 0; /* the [{"g0": [..]}] lists that apply */
    for (uint32_t it = sy_jdom_first(&d, 0); it; it = sy_jdom_next(&d, it)) {
        char t = sy_jdom_type(&d, it);
        if (t == 's') {
            if (fb_push(c, &d, it, &cap) != 0)
                return -1;
            continue;
        }
        if (t != 'o')
            return -1;
        uint32_t m = sy_jdom_get(&d, it, "model");
        if (sy_jdom_kind(&d, m) == 's') {
            if (fb_push(c, &d, m, &cap) != 0)
                return -1;
            continue;
        }
        for (uint32_t k = sy_jdom_first(&d, it); k; k = sy_jdom_next_key(&d, k)) {
            uint32_t l = sy_jdom_val(k);
            if (sy_jdom_type(&d, l) != 'a')
                return -1;
            for (uint32_t e = sy_jdom_first(&d, l); e; e = sy_jdom_next(&d, e))
                if (sy_jdom_type(&d, e) != 's')
                    return -1;
            if (sy_jdom_str_eq(&d, k, "*"))
                star = star ? star : l;
            else if ((sy_jdom_str_eq(&d, k, c->in.model) || sy_jdom_str_eq(&d, k, c->req_group->name)) && !mine)
                mine = l;
        }
    }
    uint32_t l = mine ? mine : star;
    for (uint32_t e = l ? sy_jdom_first(&d, l) : 0; e; e = sy_jdom_next(&d, e))
        if (fb_push(c, &d, e, &cap) != 0)
            return -1;
    return 0;
}

/* Every request fallback must pass the key's model access, as LiteLLM's
 * user_api_key_auth checks each before the call: 401 naming the first that
 * does not. */
static int check_fallbacks(struct sy_call *c)
{
    for (size_t i = 0; c->auth.key && i < c->opt.nfb_req; i++)
        if (sy_call_check_model(c, c->opt.fb_req[i]) != SY_OK)
            return SY_DONE;
    return SY_OK;
}

/* Forward a copy of the body without the router keys, the model span moved
 * with it (one copy, no second scan: the body may be 32 MB). */
static void strip_router_keys(struct sy_call *c)
{
    char *o = sy_arena_alloc(&c->req->arena, c->req->body.len + 1);
    struct sy_jspan model = c->in.scan.model;
    size_t len = sy_jscan_strip(c->req->body.p, c->req->body.len, &c->in.scan, o, &model);
    o[len] = 0;
    c->opt.fwd_body = o;
    c->opt.fwd_len = len;
    c->opt.fwd_model = model;
}

/* Append one tag (decoded JSON string span, or raw header bytes) to c->opt.rf. */
static void add_tag(struct sy_call *c, const char *p, size_t n, int json, size_t *cap)
{
    char *t = sy_arena_alloc(&c->req->arena, n + 8);
    if (json) {
        if (sy_jstr_decode(p, n, t, n + 8) < 0)
            return;
    } else {
        while (n && (*p == ' ' || *p == '\t'))
            p++, n--;
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (!n)
            return;
        memcpy(t, p, n);
        t[n] = 0;
    }
    if (c->opt.rf.ntags == *cap) {
        size_t nc = *cap ? 2 * *cap : 8;
        const char **l = sy_arena_alloc(&c->req->arena, nc * sizeof *l);
        if (c->opt.rf.ntags)
            memcpy(l, c->opt.rf.tags, c->opt.rf.ntags * sizeof *l);
        c->opt.rf.tags = l;
        *cap = nc;
    }
    c->opt.rf.tags[c->opt.rf.ntags++] = t;
}

static int tag_list(struct sy_call *c, struct sy_jspan v, const char *key, size_t *cap)
{
    if (v.type == 'z' || !v.type)
        return SY_OK;
    size_t pos = 0;
    struct sy_jspan it;
    int rc;
    if (v.type != 'a')
        return bad_key(c, key, "a list of strings");
    while ((rc = sy_jscan_list_next(c->req->body.p, v, &pos, &it)) == 1)
        add_tag(c, c->req->body.p + it.off, it.len, 1, cap);
    return rc < 0 ? bad_key(c, key, "a list of strings") : SY_OK;
}

/* Request tags for tag routing (LiteLLM: body `tags`, `metadata.tags`, the
 * x-litellm-tags header, comma-separated), read only when tag filtering is
 * on; general_settings.reject_clientside_metadata_tags refuses a body whose
 * metadata carries tags, as LiteLLM's auth check does. The end user's
 * allowed_model_region (loaded by the key checks) is the region filter. */
static int read_tags(struct sy_call *c)
{
    const struct sy_gwconf *g = c->g;
    if (c->auth.eu && c->auth.eu->allowed_model_region)
        c->opt.rf.region = !strcmp(c->auth.eu->allowed_model_region, "eu")   ? 'e'
                           : !strcmp(c->auth.eu->allowed_model_region, "us") ? 'u'
                                                                             : 0;
    int reject = g->cfg->reject_clientside_metadata_tags;
    if (!g->rc.tag_filtering && !reject)
        return SY_OK;
    const char *b = c->req->body.p;
    struct sy_jspan meta = {0}, mtags = {0};
    if (c->in.scan.top_is_object && memmem(b, c->req->body.len, "metadata", 8)) {
        meta = sy_jscan_member(b, (struct sy_jspan){0, c->req->body.len, 'o'}, "metadata");
        if (meta.type == 'o')
            mtags = sy_jscan_member(b, meta, "tags");
    }
    if (reject && mtags.type) {
        sy_call_error(c, 400, "bad_request_error", "metadata.tags",
                      "Client-side 'metadata.tags' not allowed in request. 'reject_clientside_metadata_tags'=True. "
                      "Tags can only be set via API key metadata.",
                      NULL, 0);
        return SY_DONE;
    }
    if (!g->rc.tag_filtering)
        return SY_OK;
    size_t cap = 0;
    if ((c->in.scan.rk_mask & (1u << SY_JR_TAGS)) && tag_list(c, c->in.scan.rk[SY_JR_TAGS], "tags", &cap) != SY_OK)
        return SY_DONE;
    if (tag_list(c, mtags, "metadata.tags", &cap) != SY_OK)
        return SY_DONE;
    struct sy_str h = sy_req_header(c->req, "x-litellm-tags");
    for (size_t i = 0, st = 0; h.p && i <= h.n; i++)
        if (i == h.n || h.p[i] == ',') {
            add_tag(c, h.p + st, i - st, 0, &cap);
            st = i + 1;
        }
    return SY_OK;
}

static int read_router_keys(struct sy_call *c)
{
    const struct sy_jscan *s = &c->in.scan;
    double d;
    int h;
    if (s->rk_mask & (1u << SY_JR_NUM_RETRIES)) {
        if (span_num(c, s->rk[SY_JR_NUM_RETRIES], &d) != 0)
            return bad_key(c, "num_retries", "a non-negative integer");
        c->opt.num_retries_req = (int)d;
    }
    if ((h = header_num(c, "x-litellm-num-retries", &d)) != 0) {
        if (h < 0)
            return bad_key(c, "x-litellm-num-retries", "a non-negative integer");
        c->opt.num_retries_req = (int)d;
    }
    if (s->rk_mask & (1u << SY_JR_TIMEOUT)) {
        if (span_num(c, s->rk[SY_JR_TIMEOUT], &d) != 0 || d <= 0)
            return bad_key(c, "timeout", "a positive number of seconds");
        c->opt.timeout_req = d;
    }
    if ((h = header_num(c, "x-litellm-timeout", &d)) != 0) {
        if (h < 0 || d <= 0)
            return bad_key(c, "x-litellm-timeout", "a positive number of seconds");
        c->opt.timeout_req = d;
    }
    if (s->rk_mask & (1u << SY_JR_STREAM_TIMEOUT)) {
        if (span_num(c, s->rk[SY_JR_STREAM_TIMEOUT], &d) != 0 || d <= 0)
            return bad_key(c, "stream_timeout", "a positive number of seconds");
        c->opt.stream_timeout_req = d;
    }
    if ((h = header_num(c, "x-litellm-stream-timeout", &d)) != 0) {
        if (h < 0 || d <= 0)
            return bad_key(c, "x-litellm-stream-timeout", "a positive number of seconds");
        c->opt.stream_timeout_req = d;
    }
    if (s->rk_mask & (1u << SY_JR_DISABLE_FALLBACKS)) {
        char t = s->rk[SY_JR_DISABLE_FALLBACKS].type;
        if (t != 't' && t != 'f' && t != 'z')
            return bad_key(c, "disable_fallbacks", "a boolean");
        c->opt.disable_fallbacks = t == 't';
    }
    if (s->rk_mask & (1u << SY_JR_MOCK_TESTING_FALLBACKS)) {
        char t = s->rk[SY_JR_MOCK_TESTING_FALLBACKS].type;
        if (t != 't' && t != 'f' && t != 'z')
            return bad_key(c, "mock_testing_fallbacks", "a boolean");
        c->opt.mock_testing_fallbacks = t == 't';
    }
    static const struct {
        int k;
        const char *name;
    } flags[] = {{SY_JR_MOCK_RATE_LIMIT, "mock_testing_rate_limit_error"}, {SY_JR_MOCK_TIMEOUT, "mock_timeout"}};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        if (!(s->rk_mask & (1u << flags[i].k)))
            continue;
        char t = s->rk[flags[i].k].type;
        if (t != 't' && t != 'f' && t != 'z')
            return bad_key(c, flags[i].name, "a boolean");
        *(flags[i].k == SY_JR_MOCK_TIMEOUT ? &c->opt.mock_timeout : &c->opt.mock_rate_limit) = t == 't';
    }
    if (read_tags(c) != SY_OK)
        return SY_DONE;
    struct sy_str hd = sy_req_header(c->req, "x-litellm-disable-fallbacks");
    if (hd.p && hd.n == 4 && strncasecmp(hd.p, "true", 4) == 0)
        c->opt.disable_fallbacks = 1;
    if ((s->rk_mask & (1u << SY_JR_FALLBACKS)) && read_fallbacks(c, s->rk[SY_JR_FALLBACKS]) != 0)
        return bad_key(c, "fallbacks", "a list of model group names");
    if (check_fallbacks(c) != SY_OK)
        return SY_DONE;
    if (s->rk_mask)
        strip_router_keys(c);
    return SY_OK;
}

static void count_done(struct sy_call *c, void *arg)
{
    if (arg) /* resumed from the pool */
        sy_call_resume(c);
}

static int route_run(struct sy_call *c)
{
    c->rt.input_tokens = -1;
    c->opt.num_retries_req = -1;
    c->opt.timeout_req = c->opt.stream_timeout_req = -1;
    c->rt.fb_kind = -1;
    c->group_model = sy_call_aliased(c, c->in.model);
    c->group = sy_router_resolve(&c->g->table, c->group_model, strlen(c->group_model));
    if (!c->group)
        return sy_call_invalid_model(c, c->in.model);
    c->req_group = c->group;
    if (read_router_keys(c) != SY_OK)
        return SY_DONE;
    if (!sy_route_needs_count(c, c->group))
        return SY_OK;
    if (c->req->body.len < SY_OFFLOAD_MIN_BYTES) {
        sy_route_count_work(c, NULL);
        return SY_OK;
    }
    sy_call_run_work(c, c->req->body.len, sy_route_count_work, count_done, (void *)1);
    return SY_AGAIN;
}

const struct sy_stage sy_stage_route = {
    .name = "route",
    .routes = SY_RKB_LLM,
    .run = route_run,
};
