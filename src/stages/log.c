/* log.c - the logging callbacks' record of an LLM call (logging/logging.h).
 *
 * On when the config submits records (sy_log_enabled: a sink, the request
 * log or alerting); absent from every pipeline otherwise. Two hooks:
 *
 *   run     turns on the attempt machine's attempts list (c->att, proxy.c):
 *           one store per call
 *   finish  fills a struct sy_logrec on the stack from the call, with
 *           borrowed pointers, and hands it to sy_log_submit, which copies it
 *           under a short mutex; JSON, hashing and HTTP happen on the logging
 *           thread
 *
 * What the finish reads (as spend_finish in budget.c does for SpendLogs):
 * ids (response id, call id), call type, key / team / user / org / end user,
 * the key's and team's metadata (their tags are merged into the record's on
 * the logging thread, as LiteLLM merges them into the request's), the model
 * asked for, the group and deployment that answered, usage and cost
 * (sy_call_cost), cache hit and key, times (received, first attempt, first
 * byte, end), the request's metadata and tags, trace_id / session_id /
 * generation_name, traceparent, user agent, the attempts, the guardrails
 * that ran (c->out.guard_info / guard_status), and for a failure the
 * exception class and the message the client got. Content: the request
 * body and the captured answer (filters/log_capture.c), or neither when
 * messages are not logged: turn_off_message_logging, globally, in the
 * request (LiteLLM's dynamic param) or in the key's or team's metadata.
 *
 * Per-tenant sinks (route_json): the key's metadata.logging, else the team's
 * metadata.logging, else the team's entry of default_team_settings turned
 * into the same shape ([{"callback_name","callback_type","callback_vars"}]).
 * default_team_settings is parsed once per config per worker (a thread-local
 * table holding a reference to the config), never per request.
 *
 * Not kept: the requester's address when no X-Forwarded-For names it (the
 * server does not keep the peer's), the user's email (not loaded with the
 * key).
 */
#include "gateway/gateway.h"
#include "gateway/slot.h"
#include "gateway/stage.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/clock.h"
#include "core/errors.h"
#include "http/server.h"
#include "keys/keys.h"
#include "logging/logging.h"

_Static_assert(SY_GUARD_NOT_RUN == SY_LOGREC_GUARD_NOT_RUN && SY_GUARD_SUCCESS == SY_LOGREC_GUARD_SUCCESS &&
                   SY_GUARD_INTERVENED == SY_LOGREC_GUARD_INTERVENED && SY_GUARD_FAILED == SY_LOGREC_GUARD_FAILED,
               "guardrail status values");

static int log_on(const struct sy_gwconf *g, enum sy_route_kind k)
{
    (void)k;
    return sy_log_enabled(g->cfg);
}

static int log_run(struct sy_call *c)
{
    c->att.on = 1; /* proxy.c records each attempt */
    return SY_OK;
}

/* ---- small readers of the body and of metadata text ---- */

static char *dup_span(struct sy_call *c, const char *p, struct sy_jspan v)
{
    return sy_arena_strndup(&c->req->arena, p + v.off, v.len);
}

/* A string member of obj decoded into the arena; NULL when absent or not a string. */
static const char *member_str(struct sy_call *c, const char *p, struct sy_jspan obj, const char *key)
{
    if (obj.type != 'o')
        return NULL;
    struct sy_jspan v = sy_jscan_member(p, obj, key);
    if (v.type != 's' || v.len > 4096)
        return NULL;
    char *out = sy_arena_alloc(&c->req->arena, v.len + 8); /* sy_jstr_decode wants room to spare */
    if (!out || sy_jstr_decode(p + v.off, v.len, out, v.len + 8) < 0)
        return NULL;
    return out;
}

/* A header's value, NUL-terminated in the arena; NULL when absent. */
static const char *header(struct sy_call *c, const char *name)
{
    struct sy_str h = sy_req_header(c->req, name);
    return h.p ? sy_arena_strndup(&c->req->arena, h.p, h.n) : NULL;
}

/* `"key": true` in a JSON object text (metadata from the database): a text
 * scan, no parse; whitespace around the colon allowed. */
static int text_flag(const char *json, const char *key)
{
    if (!json)
        return 0;
    size_t kl = strlen(key);
    for (const char *p = strstr(json, key); p; p = strstr(p + 1, key)) {
        if (p == json || p[-1] != '"' || p[kl] != '"')
            continue;
        const char *q = p + kl + 1;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
            q++;
        if (*q++ != ':')
            continue;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
            q++;
        return !strncmp(q, "true", 4);
    }
    return 0;
}

/* The "logging" member of a metadata object text when it is a non-empty
 * array, copied into the arena; NULL otherwise. Only metadata that names
 * "logging" is scanned (validated first: sy_jscan_member needs valid JSON). */
static const char *metadata_logging(struct sy_call *c, const char *json)
{
    if (!json || !strstr(json, "\"logging\""))
        return NULL;
    size_t n = strlen(json);
    struct sy_jscan sc;
    if (sy_jscan(json, n, &sc) != 0 || !sc.top_is_object)
        return NULL;
    struct sy_jspan v = sy_jscan_member(json, (struct sy_jspan){0, n, 'o'}, "logging");
    if (v.type != 'a' || v.len <= 2)
        return NULL;
    return dup_span(c, json, v);
}

/* ---- default_team_settings: one table per config per worker ---- */

struct team_route {
    char *team_id;
    char *route; /* [{"callback_name","callback_type","callback_vars"}] */
};

static __thread struct {
    struct sy_config *cfg; /* referenced while cached */
    struct team_route *t;
    size_t n;
} teams;

static void teams_clear(void)
{
    for (size_t i = 0; i < teams.n; i++) {
        free(teams.t[i].team_id);
        free(teams.t[i].route);
    }
    free(teams.t);
    teams.t = NULL;
    teams.n = 0;
    if (teams.cfg)
        sy_config_unref(teams.cfg);
    teams.cfg = NULL;
}

static void add_callbacks(json_object *out, json_object *names, const char *type, json_object *vars)
{
    if (!names || !json_object_is_type(names, json_type_array))
        return;
    for (size_t i = 0; i < json_object_array_length(names); i++) {
        json_object *nm = json_object_array_get_idx(names, i);
        if (!json_object_is_type(nm, json_type_string))
            continue;
        json_object *e = json_object_new_object();
        json_object_object_add(e, "callback_name", json_object_get(nm));
        json_object_object_add(e, "callback_type", json_object_new_string(type));
        json_object_object_add(e, "callback_vars", json_object_get(vars));
        json_object_array_add(out, e);
    }
}

/* A team's entry as the per-key shape: each of success_callback, failure_callback
 * and callbacks names a sink; every other member (langfuse_public_key,
 * langfuse_secret, langfuse_host, ...) is its callback_vars. */
static char *team_entry_route(json_object *entry)
{
    json_object *vars = json_object_new_object(), *out = json_object_new_array();
    json_object_object_foreach(entry, k, v)
    {
        if (strcmp(k, "team_id") && strcmp(k, "success_callback") && strcmp(k, "failure_callback") &&
            strcmp(k, "callbacks"))
            json_object_object_add(vars, k, json_object_get(v));
    }
    json_object *sc = NULL, *fc = NULL, *cb = NULL;
    json_object_object_get_ex(entry, "success_callback", &sc);
    json_object_object_get_ex(entry, "failure_callback", &fc);
    json_object_object_get_ex(entry, "callbacks", &cb);
    add_callbacks(out, sc, "success", vars);
    add_callbacks(out, fc, "failure", vars);
    add_callbacks(out, cb, "success_and_failure", vars);
    char *s = json_object_array_length(out)
                  ? strdup(json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE))
                  : NULL;
    json_object_put(out);
    json_object_put(vars);
    return s;
}

static void teams_load(struct sy_config *cfg)
{
    teams_clear();
    sy_config_ref(cfg);
    teams.cfg = cfg;
    json_object *a = json_tokener_parse(cfg->default_team_settings);
    if (a && json_object_is_type(a, json_type_array)) {
        size_t n = json_object_array_length(a);
        teams.t = calloc(n ? n : 1, sizeof *teams.t);
        for (size_t i = 0; teams.t && i < n; i++) {
            json_object *e = json_object_array_get_idx(a, i), *id = NULL;
            if (!json_object_is_type(e, json_type_object) || !json_object_object_get_ex(e, "team_id", &id) ||
                !json_object_is_type(id, json_type_string))
                continue;
            char *route = team_entry_route(e);
            if (!route)
                continue;
            teams.t[teams.n].team_id = strdup(json_object_get_string(id));
            teams.t[teams.n++].route = route;
        }
    }
    json_object_put(a);
}

static const char *team_route(const struct sy_call *c, const char *team_id)
{
    struct sy_config *cfg = c->g->cfg;
    if (!cfg->default_team_settings || !team_id)
        return NULL;
    if (teams.cfg != cfg)
        teams_load(cfg);
    for (size_t i = 0; i < teams.n; i++)
        if (teams.t[i].team_id && !strcmp(teams.t[i].team_id, team_id))
            return teams.t[i].route;
    return NULL;
}

/* ---- the record ---- */

/* Request tags as JSON array text: the body's "tags" then metadata.tags (raw
 * array contents joined; the payload builder parses and de-duplicates). */
static const char *request_tags(struct sy_call *c, struct sy_jspan meta)
{
    const char *p = c->req->body.p;
    struct sy_jspan t1 = {0}, t2 = {0};
    if (c->in.scan.rk_mask & (1u << SY_JR_TAGS))
        t1 = c->in.scan.rk[SY_JR_TAGS];
    if (meta.type == 'o')
        t2 = sy_jscan_member(p, meta, "tags");
    int a1 = t1.type == 'a' && t1.len > 2, a2 = t2.type == 'a' && t2.len > 2;
    if (!a1 && !a2)
        return NULL;
    size_t n1 = a1 ? t1.len - 2 : 0, n2 = a2 ? t2.len - 2 : 0;
    char *out = sy_arena_alloc(&c->req->arena, n1 + n2 + 4);
    if (!out)
        return NULL;
    size_t o = 0;
    out[o++] = '[';
    if (a1) {
        memcpy(out + o, p + t1.off + 1, n1);
        o += n1;
    }
    if (a1 && a2)
        out[o++] = ',';
    if (a2) {
        memcpy(out + o, p + t2.off + 1, n2);
        o += n2;
    }
    out[o++] = ']';
    out[o] = 0;
    return out;
}

static const char *end_user(struct sy_call *c)
{
    if (c->auth.eu)
        return c->auth.eu->b.id;
    if (c->in.scan.user.type == 's' && c->in.scan.user.len < 256) {
        char *eu = sy_arena_alloc(&c->req->arena, 256);
        if (eu && sy_jstr_decode(c->req->body.p + c->in.scan.user.off, c->in.scan.user.len, eu, 256) > 0)
            return eu;
    }
    return header(c, "x-litellm-end-user-id");
}

/* The first address of X-Forwarded-For (LiteLLM's use_x_forwarded_for); NULL when none. */
static const char *requester_ip(struct sy_call *c)
{
    struct sy_str h = sy_req_header(c->req, "x-forwarded-for");
    if (!h.p || !h.n)
        return NULL;
    size_t n = 0;
    while (n < h.n && h.p[n] != ',')
        n++;
    while (n && h.p[n - 1] == ' ')
        n--;
    return n && n < 64 ? sy_arena_strndup(&c->req->arena, h.p, n) : NULL;
}

static double mono_to_wall(const struct sy_call *c, double start_wall, uint64_t t)
{
    return start_wall + (double)((int64_t)(t - c->req->t_start_ns)) / 1e9;
}

static void log_finish(struct sy_call *c, int status)
{
    if (!c->in.model && !c->req_group)
        return; /* refused before its body was read (auth): LiteLLM logs no call either */
    const struct sy_config *cfg = c->g->cfg;
    const struct sy_keyinfo *k = c->auth.key;
    const char *body = c->req->body.p;
    size_t blen = c->req->body.len;
    struct sy_jspan top = {0, blen, c->in.scan.top_is_object ? 'o' : 0}, meta = {0};
    if (top.type == 'o' && body && memmem(body, blen, "metadata", 8)) {
        meta = sy_jscan_member(body, top, "metadata");
        if (meta.type != 'o')
            meta = sy_jscan_member(body, top, "litellm_metadata");
    }
    struct sy_logrec r;
    memset(&r, 0, sizeof r);
    sy_call_cost(c);
    int fail = status >= 400;
    int cut = c->in.stream && c->out.client_started && status == 499; /* the client left mid-stream */
    if (cut)
        fail = 0;
    r.id = !fail && c->cache != SY_CACHE_HIT ? sy_call_response_id(c) : NULL;
    if (!r.id && c->out.hit_body) { /* a hit: the stored answer's id (the payload marks it _cache_hit) */
        size_t n = c->out.hit_len < 4096 ? c->out.hit_len : 4096;
        const char *q = memmem(c->out.hit_body, n, "\"id\":\"", 6);
        const char *e = q ? memchr(q + 6, '"', (size_t)(c->out.hit_body + n - q - 6)) : NULL;
        if (e && e - q - 6 < 200 && !memchr(q + 6, '\\', (size_t)(e - q - 6)))
            r.id = sy_arena_strndup(&c->req->arena, q + 6, (size_t)(e - q - 6));
    }
    if (!r.id)
        r.id = c->call_id;
    r.call_id = c->call_id;
    if (top.type == 'o' && memmem(body, blen, "\"litellm_", 9)) { /* each lookup is a pass over the body */
        r.trace_id = member_str(c, body, top, "litellm_session_id");
        if (!r.trace_id)
            r.trace_id = member_str(c, body, top, "litellm_trace_id");
    }
    if (!r.trace_id)
        r.trace_id = member_str(c, body, meta, "session_id");
    if (!r.trace_id)
        r.trace_id = member_str(c, body, meta, "trace_id");
    r.generation_name = member_str(c, body, meta, "generation_name");
    r.traceparent = header(c, "traceparent");
    r.call_type = sy_call_type(c);
    r.route = c->in.route_is_literal ? c->in.route_path.p
                                     : sy_arena_strndup(&c->req->arena, c->in.route_path.p, c->in.route_path.n);
    r.http_status = status;
    /* model */
    r.model = c->in.model;
    const struct sy_group *gr = c->group ? c->group : c->req_group;
    r.model_group = gr ? gr->name : NULL;
    const struct sy_drt *d = c->drt;
    if (d) {
        r.model_id = d->d->id;
        r.upstream_model = d->d->model;
        r.provider = d->d->provider;
        r.api_base = d->d->api_base;
    }
    /* who */
    r.hashed_key = c->auth.hashed_key;
    if (k) {
        r.key_alias = k->key_alias;
        r.user_id = k->user_id;
        r.team_id = k->team_id;
        r.team_alias = k->team_alias;
        r.org_id = k->org_id;
        r.key_metadata = k->key.metadata;
        r.team_metadata = k->team ? k->team->metadata : NULL;
    }
    r.end_user = end_user(c);
    r.requester_ip = requester_ip(c);
    r.user_agent = header(c, "user-agent");
    if (meta.type == 'o')
        r.request_metadata = dup_span(c, body, meta);
    r.tags = request_tags(c, meta);
    /* usage and cost */
    r.prompt_tokens = c->usage.prompt_tokens;
    r.completion_tokens = c->usage.completion_tokens;
    r.cached_tokens = c->usage.cached_tokens;
    r.cache_creation_tokens = c->usage.cache_write_tokens;
    r.reasoning_tokens = c->usage.reasoning_tokens;
    r.cost = c->usage.cost;
    if (c->cache)
        r.cache_key = sy_cache_key_of(c);
    /* times */
    double now = sy_wall_now();
    r.start_s = now - (double)(sy_now_ns() - c->req->t_start_ns) / 1e9;
    r.end_s = now;
    r.api_start_s = c->att.n           ? mono_to_wall(c, r.start_s, c->att.a[0].t_start)
                    : c->up.t_up_start ? mono_to_wall(c, r.start_s, c->up.t_up_start)
                                       : r.start_s;
    r.completion_start_s = c->up.t_up_first ? mono_to_wall(c, r.start_s, c->up.t_up_first) : now;
    /* flags */
    int no_messages = cfg->turn_off_message_logging ||
                      text_flag(k ? k->key.metadata : NULL, "turn_off_message_logging") ||
                      text_flag(k && k->team ? k->team->metadata : NULL, "turn_off_message_logging");
    if (!no_messages && top.type == 'o' && memmem(body, blen, "turn_off_message_logging", 24))
        no_messages = sy_jscan_member(body, top, "turn_off_message_logging").type == 't';
    r.flags = (c->in.stream ? SY_LOGREC_STREAM : 0) | (c->cache == SY_CACHE_HIT ? SY_LOGREC_CACHE_HIT : 0) |
              (fail ? SY_LOGREC_FAILURE : 0) | (no_messages ? SY_LOGREC_NO_MESSAGES : 0) |
              (cfg->redact_user_api_key_info ? SY_LOGREC_REDACT_KEY : 0) |
              (c->usage.cost_known ? SY_LOGREC_COST_KNOWN : 0) | (cut ? SY_LOGREC_STREAM_CUT : 0);
    /* content */
    if (!no_messages) {
        r.request = c->out.log_request ? c->out.log_request : body; /* a logging_only guardrail's mask */
        r.request_len = c->out.log_request ? c->out.log_request_len : blen;
        int sse = 0, capcut = 0;
        size_t n = 0;
        const char *cap = sy_log_capture(c, &n, &sse, &capcut);
        if (cap) {
            r.response = cap;
            r.response_len = n;
            if (sse)
                r.flags |= SY_LOGREC_RESP_SSE;
        } else if (c->out.hit_body) { /* a hit is served without the response filters: the stored JSON */
            r.response = c->out.hit_body;
            r.response_len = c->out.hit_len;
        }
    }
    /* failure */
    if (fail) {
        r.error_class = c->out.exception_class ? c->out.exception_class : sy_status_exception_class(status);
        r.error_message = c->out.err_msg ? c->out.err_msg : c->up.up_body.len ? c->up.up_body.p : NULL;
    }
    /* attempts */
    struct sy_logattempt at[SY_CALL_MAX_ATTEMPTS];
    for (unsigned i = 0; i < c->att.n; i++) {
        const struct sy_call_attempt *a = &c->att.a[i];
        at[i] = (struct sy_logattempt){a->drt->d->id,
                                       a->drt->d->model,
                                       a->drt->d->provider,
                                       a->drt->d->api_base,
                                       mono_to_wall(c, r.start_s, a->t_start),
                                       a->t_end ? mono_to_wall(c, r.start_s, a->t_end) : now,
                                       a->t_end ? a->status : status,
                                       a->t_end ? a->error
                                       : fail   ? r.error_class
                                                : NULL};
    }
    r.attempts = at;
    r.nattempts = c->att.n;
    /* per-tenant sinks */
    r.route_json = metadata_logging(c, k ? k->key.metadata : NULL);
    if (!r.route_json && k && k->team)
        r.route_json = metadata_logging(c, k->team->metadata);
    if (!r.route_json && k)
        r.route_json = team_route(c, k->team_id);
    /* guardrails (stages/guardrails.c ran before this finish) */
    r.guard_info = c->out.guard_info;
    r.guard_status = c->out.guard_status;
    sy_log_submit(&r);
}

const struct sy_stage sy_stage_log = {
    .name = "log",
    .routes = SY_RKB_LLM,
    .enabled = log_on,
    .run = log_run,
    .finish = log_finish,
};
