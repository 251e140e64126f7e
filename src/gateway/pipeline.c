/* pipeline.c - route matching and the stage run loop (after nginx's phase engine).
 *
 * A request is matched against the route table once; its pipeline is the
 * config's flat arrays for that route (gwconf.c, from the stage list of
 * gateway/stage.h). The loop runs run[] until a stage suspends (SY_AGAIN: an
 * async completion calls sy_call_resume) or answers (SY_DONE). Every answer's
 * x-litellm headers end with the stages' headers[] lines; sy_call_account runs
 * finish[] once, then records metrics and the access log. Stages a config does
 * not enable are absent, never skipped. No stage is named here.
 */
#include "gateway/gateway.h"

#include <http_parser.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin.h"
#include "core/clock.h"
#include "core/errors.h"
#include "core/fmt.h"
#include "core/log.h"
#include "core/pyrepr.h"
#include "gateway/filter.h"
#include "gateway/slot.h"
#include "gateway/xlate.h"
#include "http/reply.h"
#include "http/server.h"
#include "providers/ptroute.h"
#include "metrics/metrics.h"

struct route {
    const char *path;
    size_t len;
    int method;
    enum sy_route_kind kind;
};

#define R(p, m, k)             \
    {                          \
        p, sizeof(p) - 1, m, k \
    }
static const struct route routes[] = {
    R("/v1/chat/completions", HTTP_POST, SY_RK_CHAT),
    R("/chat/completions", HTTP_POST, SY_RK_CHAT),
    R("/v1/completions", HTTP_POST, SY_RK_COMPLETIONS),
    R("/completions", HTTP_POST, SY_RK_COMPLETIONS),
    R("/v1/embeddings", HTTP_POST, SY_RK_EMBEDDINGS),
    R("/embeddings", HTTP_POST, SY_RK_EMBEDDINGS),
    R("/v1/responses", HTTP_POST, SY_RK_RESPONSES),
    R("/responses", HTTP_POST, SY_RK_RESPONSES),
    R("/v1/images/generations", HTTP_POST, SY_RK_PASSTHRU),
    R("/images/generations", HTTP_POST, SY_RK_PASSTHRU),
    R("/v1/images/edits", HTTP_POST, SY_RK_PASSTHRU),
    R("/images/edits", HTTP_POST, SY_RK_PASSTHRU),
    R("/v1/audio/speech", HTTP_POST, SY_RK_PASSTHRU),
    R("/audio/speech", HTTP_POST, SY_RK_PASSTHRU),
    R("/v1/audio/transcriptions", HTTP_POST, SY_RK_PASSTHRU),
    R("/audio/transcriptions", HTTP_POST, SY_RK_PASSTHRU),
    R("/v1/audio/translations", HTTP_POST, SY_RK_PASSTHRU),
    R("/audio/translations", HTTP_POST, SY_RK_PASSTHRU),
    R("/v1/moderations", HTTP_POST, SY_RK_PASSTHRU),
    R("/moderations", HTTP_POST, SY_RK_PASSTHRU),
    R("/v1/rerank", HTTP_POST, SY_RK_PASSTHRU),
    R("/v2/rerank", HTTP_POST, SY_RK_PASSTHRU),
    R("/rerank", HTTP_POST, SY_RK_PASSTHRU),
    R("/v1/files", HTTP_POST, SY_RK_FILES),
    R("/v1/files", HTTP_GET, SY_RK_FILES),
    R("/files", HTTP_POST, SY_RK_FILES),
    R("/files", HTTP_GET, SY_RK_FILES),
    R("/v1/batches", HTTP_POST, SY_RK_FILES),
    R("/v1/batches", HTTP_GET, SY_RK_FILES),
    R("/batches", HTTP_POST, SY_RK_FILES),
    R("/batches", HTTP_GET, SY_RK_FILES),
    R("/v1/messages", HTTP_POST, SY_RK_MESSAGES),
    R("/v1/messages/count_tokens", HTTP_POST, SY_RK_MESSAGES_COUNT),
    R("/v1/models", HTTP_GET, SY_RK_MODELS),
    R("/models", HTTP_GET, SY_RK_MODELS),
    R("/health/liveliness", HTTP_GET, SY_RK_LIVENESS),
    R("/health/liveness", HTTP_GET, SY_RK_LIVENESS),
    R("/health/readiness", HTTP_GET, SY_RK_READINESS),
    R("/metrics", HTTP_GET, SY_RK_METRICS),
    R("/metrics/", HTTP_GET, SY_RK_METRICS),
    R("/utils/token_counter", HTTP_POST, SY_RK_TOKEN_COUNTER),
    R("/health", HTTP_GET, SY_RK_HEALTH),
    R("/cache/ping", HTTP_GET, SY_RK_CACHE_ADMIN),
    R("/cache/delete", HTTP_POST, SY_RK_CACHE_ADMIN),
    R("/cache/flushall", HTTP_POST, SY_RK_CACHE_ADMIN),
    R("/routes", HTTP_GET, SY_RK_ROUTES),
    R("/guardrails/list", HTTP_GET, SY_RK_GUARDRAILS),
    /* MCP's old HTTP+SSE transport (stages/mcp_sse.c): the stream, its message endpoint */
    R("/sse", HTTP_GET, SY_RK_MCP_SSE),
    R("/mcp/sse", HTTP_GET, SY_RK_MCP_SSE),
    R("/mcp/sse/messages", HTTP_POST, SY_RK_MCP_SSE),
    R("/", HTTP_GET, SY_RK_ROOT),
    /* MCP (stages/mcp.c): streamable HTTP at /mcp (LiteLLM mounts it at /mcp/ too), LiteLLM's REST mirror */
    R("/mcp", HTTP_POST, SY_RK_MCP),
    R("/mcp", HTTP_GET, SY_RK_MCP),
    R("/mcp", HTTP_DELETE, SY_RK_MCP),
    R("/mcp/", HTTP_POST, SY_RK_MCP),
    R("/mcp/", HTTP_GET, SY_RK_MCP),
    R("/mcp/", HTTP_DELETE, SY_RK_MCP),
    R("/mcp-rest/tools/list", HTTP_GET, SY_RK_MCP_REST),
    R("/mcp-rest/tools/call", HTTP_POST, SY_RK_MCP_REST),
    /* the admin UI (stages/ui.c): its pages and files are GET /ui/... (below) */
    R("/ui", HTTP_GET, SY_RK_UI),
    R("/login", HTTP_POST, SY_RK_UI),
    R("/logout", HTTP_POST, SY_RK_UI),
};
#undef R

/* Prefix routes with a path parameter. */
struct proute {
    const char *prefix, *suffix;
    int method;
    enum sy_route_kind kind;
    const char *param; /* the parameter's name in GET /routes */
};
static const struct proute proutes[] = {
    {"/openai/deployments/", "/chat/completions", HTTP_POST, SY_RK_CHAT, "model"},
    {"/engines/", "/chat/completions", HTTP_POST, SY_RK_CHAT, "model"},
    {"/openai/deployments/", "/completions", HTTP_POST, SY_RK_COMPLETIONS, "model"},
    {"/engines/", "/completions", HTTP_POST, SY_RK_COMPLETIONS, "model"},
    {"/openai/deployments/", "/embeddings", HTTP_POST, SY_RK_EMBEDDINGS, "model"},
    {"/engines/", "/embeddings", HTTP_POST, SY_RK_EMBEDDINGS, "model"},
    {"/v1/responses/", "/input_items", HTTP_GET, SY_RK_RESPONSES_ID, "response_id"},
    {"/responses/", "/input_items", HTTP_GET, SY_RK_RESPONSES_ID, "response_id"},
    {"/v1/responses/", "/cancel", HTTP_POST, SY_RK_RESPONSES_ID, "response_id"},
    {"/responses/", "/cancel", HTTP_POST, SY_RK_RESPONSES_ID, "response_id"},
    {"/v1/responses/", "", HTTP_GET, SY_RK_RESPONSES_ID, "response_id"},
    {"/v1/responses/", "", HTTP_DELETE, SY_RK_RESPONSES_ID, "response_id"},
    {"/responses/", "", HTTP_GET, SY_RK_RESPONSES_ID, "response_id"},
    {"/responses/", "", HTTP_DELETE, SY_RK_RESPONSES_ID, "response_id"},
    {"/v1/files/", "/content", HTTP_GET, SY_RK_FILES, "file_id"},
    {"/files/", "/content", HTTP_GET, SY_RK_FILES, "file_id"},
    {"/v1/files/", "", HTTP_GET, SY_RK_FILES, "file_id"},
    {"/v1/files/", "", HTTP_DELETE, SY_RK_FILES, "file_id"},
    {"/files/", "", HTTP_GET, SY_RK_FILES, "file_id"},
    {"/files/", "", HTTP_DELETE, SY_RK_FILES, "file_id"},
    {"/v1/batches/", "/cancel", HTTP_POST, SY_RK_FILES, "batch_id"},
    {"/batches/", "/cancel", HTTP_POST, SY_RK_FILES, "batch_id"},
    {"/v1/batches/", "", HTTP_GET, SY_RK_FILES, "batch_id"},
    {"/batches/", "", HTTP_GET, SY_RK_FILES, "batch_id"},
    {"/v1/models/", "", HTTP_GET, SY_RK_MODEL_ONE, "model_id"},
    {"/models/", "", HTTP_GET, SY_RK_MODEL_ONE, "model_id"},
    /* MCP, one server (or a comma list): /mcp/{name} as LiteLLM's mount, /{name}/mcp as its dynamic route */
    {"/mcp/", "", HTTP_POST, SY_RK_MCP, "server_name"},
    {"/mcp/", "", HTTP_GET, SY_RK_MCP, "server_name"},
    {"/mcp/", "", HTTP_DELETE, SY_RK_MCP, "server_name"},
    {"/", "/mcp", HTTP_POST, SY_RK_MCP, "server_name"},
    {"/", "/mcp", HTTP_GET, SY_RK_MCP, "server_name"},
    {"/", "/mcp", HTTP_DELETE, SY_RK_MCP, "server_name"},
};

/* The served route nearest to path (edit distance): the route table's literal
 * paths, the prefix routes written with "{model}", the management API's. */
static const char *nearest_route(struct sy_str p, int *method)
{
    const char *best = NULL;
    size_t bd = (size_t)-1;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        size_t d = sy_route_distance(p.p, p.n, routes[i].path, routes[i].len);
        if (d < bd) {
            bd = d;
            best = routes[i].path;
            *method = routes[i].method;
        }
    }
    static const char *const pnames[] = {"/openai/deployments/{model}/chat/completions", "/v1/models/{model}"};
    for (size_t i = 0; i < sizeof pnames / sizeof pnames[0]; i++) {
        size_t d = sy_route_distance(p.p, p.n, pnames[i], strlen(pnames[i]));
        if (d < bd) {
            bd = d;
            best = pnames[i];
            *method = i == 0 ? HTTP_POST : HTTP_GET;
        }
    }
    size_t ad;
    int am = 0;
    const char *a = sy_admin_nearest(p.p, p.n, &ad, &am);
    if (a && ad < bd) {
        best = a;
        *method = am;
    }
    return best;
}

/* Returns the route kind, -1 unknown path, -2 known path with another method. */
static int match(struct sy_req *r, struct sy_str *param, struct sy_str *route_path)
{
    struct sy_str p = r->path;
    int path_known = 0;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (p.n == routes[i].len && memcmp(p.p, routes[i].path, p.n) == 0) {
            path_known = 1;
            if (r->method == routes[i].method) {
                *route_path = (struct sy_str){routes[i].path, routes[i].len}; /* NUL-terminated literal */
                return routes[i].kind;
            }
        }
    }
    for (size_t i = 0; i < sizeof proutes / sizeof proutes[0]; i++) {
        size_t pl = strlen(proutes[i].prefix), sl = strlen(proutes[i].suffix);
        if (p.n <= pl + sl || memcmp(p.p, proutes[i].prefix, pl) != 0 ||
            memcmp(p.p + p.n - sl, proutes[i].suffix, sl) != 0)
            continue;
        struct sy_str prm = {p.p + pl, p.n - pl - sl};
        if (!prm.n)
            continue;
        if (!sl && memchr(prm.p, '/', prm.n) && proutes[i].kind != SY_RK_MODEL_ONE)
            continue;
        if (sl && memchr(prm.p, '/', prm.n))
            continue;
        path_known = 1;
        if (r->method == proutes[i].method) {
            *param = prm;
            *route_path = p;
            return proutes[i].kind;
        }
    }
    if (p.n > 4 && memcmp(p.p, "/ui/", 4) == 0) { /* the admin UI's pages and files (stages/ui.c) */
        if (r->method == HTTP_GET) {
            *route_path = p;
            return SY_RK_UI;
        }
        path_known = 1;
    }
    int known = 0; /* the management API (admin/routes.c) */
    if (p.n < 512) {
        if (sy_admin_match(r->method, p.p, p.n, &known)) {
            *route_path = p;
            return SY_RK_ADMIN;
        }
    }
    return path_known || known ? -2 : -1;
}

/* ---- GET /routes ----------------------------------------------------------
 * LiteLLM's shape (proxy_server.py get_routes, common_utils/get_routes.py):
 *   {"routes": [{"path": "/v1/chat/completions", "methods": ["POST"],
 *                "name": ..., "endpoint": ...}, ...]}
 * built from the tables the router matches with (routes, proutes above, the
 * management API's via sy_admin_each), so it lists exactly what is served.
 * A path served under several methods is one entry with all of them; path
 * parameters are written as FastAPI does ("/v1/models/{model_id}", a
 * management pattern's '*' as "{<segment before it>}"). name and endpoint
 * are the path as an identifier ("v1_chat_completions"): LiteLLM's are its
 * Python function names, which switchyard does not have. */
struct route_list {
    struct {
        char path[128];
        uint64_t methods; /* bit per http_method */
    } e[256];
    size_t n;
};

static void route_add(struct route_list *l, uint64_t methods, const char *path)
{
    size_t i = 0;
    while (i < l->n && strcmp(l->e[i].path, path) != 0)
        i++;
    if (i == l->n) {
        if (l->n == sizeof l->e / sizeof l->e[0] || strlen(path) >= sizeof l->e[0].path)
            return;
        snprintf(l->e[i].path, sizeof l->e[i].path, "%s", path);
        l->e[i].methods = 0;
        l->n++;
    }
    l->e[i].methods |= methods;
}

#define METHOD_BIT(m) ((m) >= 0 && (m) < 64 ? 1ull << (m) : 0)

static void admin_route_add(void *ud, int method, const char *pat)
{
    char path[128];
    size_t o = 0;
    for (const char *p = pat; *p && o + 1 < sizeof path; p++) {
        if (*p != '*') {
            path[o++] = *p;
            continue;
        }
        const char *seg = p - 1; /* the segment before "/<star>" */
        while (seg > pat && seg[-1] != '/')
            seg--;
        int w = snprintf(path + o, sizeof path - o, "{%.*s}", (int)(p - 1 - seg), seg);
        if (w < 0 || (size_t)w >= sizeof path - o)
            return;
        o += (size_t)w;
    }
    path[o] = 0;
    /* the management API's method 0 is "GET or POST" (HTTP_DELETE is 0 elsewhere) */
    route_add(ud, method ? METHOD_BIT(method) : METHOD_BIT(HTTP_GET) | METHOD_BIT(HTTP_POST), path);
}

void sy_routes_json(struct sy_buf *b)
{
    struct route_list *l = malloc(sizeof *l);
    if (!l) {
        SY_BUF_LIT(b, "{\"routes\":[]}");
        return;
    }
    l->n = 0;
    size_t i_pt = 0;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        route_add(l, METHOD_BIT(routes[i].method), routes[i].path);
    for (size_t i = 0; i < sizeof proutes / sizeof proutes[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s{%s}%s", proutes[i].prefix, proutes[i].param, proutes[i].suffix);
        route_add(l, METHOD_BIT(proutes[i].method), path);
    }
    for (const struct sy_ptprov *pt; (pt = sy_pt_at(i_pt)) != NULL; i_pt++) { /* provider pass-through: any method */
        char path[128];
        snprintf(path, sizeof path, "%s/{endpoint}", pt->prefix);
        route_add(l,
                  METHOD_BIT(HTTP_GET) | METHOD_BIT(HTTP_POST) | METHOD_BIT(HTTP_PUT) | METHOD_BIT(HTTP_PATCH) |
                      METHOD_BIT(HTTP_DELETE),
                  path);
    }
    sy_admin_each(admin_route_add, l);
    SY_BUF_LIT(b, "{\"routes\":[");
    for (size_t i = 0; i < l->n; i++) {
        char name[128];
        size_t o = 0;
        for (const char *p = l->e[i].path + 1; *p && o + 1 < sizeof name; p++)
            if (*p != '{' && *p != '}')
                name[o++] = (*p == '/' || *p == '.') ? '_' : *p;
        while (o && name[o - 1] == '_')
            o--;
        name[o] = 0;
        sy_buf_printf(b, "%s{\"path\":\"%s\",\"methods\":[", i ? "," : "", l->e[i].path);
        int first = 1;
        for (int m = 0; m < 64; m++)
            if (l->e[i].methods & (1ull << m)) {
                sy_buf_printf(b, "%s\"%s\"", first ? "" : ",", http_method_str((enum http_method)m));
                first = 0;
            }
        sy_buf_printf(b, "],\"name\":\"%s\",\"endpoint\":\"%s\"}", name, name);
    }
    SY_BUF_LIT(b, "]}");
    free(l);
}

static void run(struct sy_call *c)
{
    while (c->stage < c->pl->n) {
        int rc = c->pl->run[c->stage](c);
        if (rc == SY_OK) {
            c->stage++;
            continue;
        }
        return; /* SY_AGAIN or SY_DONE */
    }
}

static int fallback_from(struct sy_call *c);

static void fallback_resume(struct sy_call *c)
{
    if (fallback_from(c) == SY_OK)
        c->rt.fb_then(c);
}

static int fallback_from(struct sy_call *c)
{
    while (c->rt.fb_hook < c->pl->nfallback) {
        int rc = c->pl->fallback[c->rt.fb_hook++](c, fallback_resume);
        if (rc != SY_OK)
            return rc; /* SY_AGAIN: fallback_resume goes on; SY_DONE: refused */
    }
    return SY_OK;
}

int sy_call_fallback(struct sy_call *c, void (*then)(struct sy_call *))
{
    c->rt.fb_then = then;
    c->rt.fb_hook = 0;
    return fallback_from(c);
}

static int answer_from(struct sy_call *c)
{
    while (c->out.ans_hook < c->pl->nanswer) {
        int rc = c->pl->answer[c->out.ans_hook++](c, c->out.ans_body);
        if (rc != SY_OK)
            return rc; /* SY_AGAIN: sy_call_answer_resume goes on; SY_DONE: answered */
    }
    return SY_OK;
}

int sy_call_answer(struct sy_call *c, struct sy_buf *body, void (*then)(struct sy_call *))
{
    if (!c->pl->nanswer)
        return SY_OK;
    c->out.ans_hook = 0;
    c->out.ans_then = then;
    c->out.ans_body = body;
    return answer_from(c);
}

void sy_call_answer_resume(struct sy_call *c)
{
    if (answer_from(c) == SY_OK)
        c->out.ans_then(c);
}

void sy_call_resume(struct sy_call *c)
{
    c->stage++;
    run(c);
}

static void call_cleanup(void *p)
{
    struct sy_call *c = p;
    sy_buf_free(&c->up.up_body);
    sy_buf_free(&c->out.gate_buf);
    sy_gwconf_unref(c->g);
}

uint64_t sy_rand(struct sy_worker *w)
{
    return sy_rng_next(&w->rng); /* per worker, seeded at start (worker.c) */
}

static void make_call_id(struct sy_worker *w, char out[37])
{
    static const char hex[] = "0123456789abcdef";
    uint64_t a = sy_rand(w), b = sy_rand(w);
    unsigned char u[16];
    memcpy(u, &a, 8);
    memcpy(u + 8, &b, 8);
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40);
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);
    int o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[u[i] >> 4];
        out[o++] = hex[u[i] & 15];
    }
    out[o] = 0;
}

void sy_handle_request(struct sy_req *r, void *ud)
{
    struct sy_worker *w = ud;
    struct sy_str param = SY_STR_NULL, rpath = SY_STR_NULL;
    int k = match(r, &param, &rpath), pk;
    if (k < 0 && (pk = sy_ptfwd_route(w->conf, r)) >= 0) { /* /anthropic/..., ..., pass_through_endpoints: any method */
        k = pk;
        rpath = r->path;
    }
    if (k == -1) {
        char msg[512];
        int method = 0;
        const char *near = nearest_route(r->path, &method);
        snprintf(msg, sizeof msg, "Route not found: %s %.*s. The nearest route switchyard serves is %s %s",
                 http_method_str((enum http_method)r->method), (int)(r->path.n > 200 ? 200 : r->path.n), r->path.p,
                 method ? http_method_str((enum http_method)method) : "GET|POST", near);
        sy_reply_error(r, 404, "invalid_request_error", NULL, msg);
        return;
    }
    if (k == -2) {
        char msg[256];
        snprintf(msg, sizeof msg, "Method %s not allowed on %.*s", http_method_str((enum http_method)r->method),
                 (int)(r->path.n > 200 ? 200 : r->path.n), r->path.p);
        sy_reply_error_h(r, 405, "invalid_request_error", NULL, msg, "allow: POST, GET\r\n", 18);
        return;
    }
    struct sy_call *c = sy_arena_alloc(&r->arena, sizeof *c);
    memset(c, 0, sizeof *c);
    c->req = r;
    if (sy_nslots) {
        c->slots = sy_arena_alloc(&r->arena, (size_t)sy_nslots * sizeof *c->slots);
        memset(c->slots, 0, (size_t)sy_nslots * sizeof *c->slots);
    }
    c->w = w;
    c->g = w->conf;
    sy_gwconf_ref(c->g);
    c->kind = (enum sy_route_kind)k;
    c->pl = &c->g->routes[k];
    c->in.path_model = param;
    c->in.route_path = rpath;
    c->in.route_is_literal = param.p == NULL;
    c->out.final_status = 0;
    c->rt.max_retries = -1;
    sy_buf_init(&c->up.up_body, 0);
    make_call_id(w, c->call_id);
    r->handler_data = c;
    sy_arena_defer(&r->arena, call_cleanup, c);
    if (SY_RK_IS_LLM(c->kind)) {
        sy_metrics_inflight(w->metrics, 1);
        c->counted_inflight = 1;
    }
    run(c);
}

/* "<ms>.<3 decimals>" of a nanosecond duration, without printf. */
static void put_ms3(struct sy_buf *b, uint64_t ns)
{
    uint64_t us = ns / 1000;
    char t[8] = {'.', (char)('0' + (us / 100) % 10), (char)('0' + (us / 10) % 10), (char)('0' + us % 10)};
    sy_buf_u64(b, us / 1000);
    sy_buf_append(b, t, 4);
}

/* The router's headers on every answer of a routed call (LiteLLM's
 * add_retry_headers_to_response and get_custom_headers):
 *   x-litellm-attempted-retries  retries made (0 when the first attempt served);
 *   x-litellm-max-retries        retries the group allowed, once an attempt failed;
 *   x-litellm-timeout            the timeout of the last attempt (the request's, else the deployment's);
 *   x-litellm-model-region       the deployment's region_name, else the end user's allowed_model_region. */
static void router_headers(struct sy_call *c, struct sy_buf *b)
{
    SY_BUF_LIT(b, "x-litellm-attempted-retries: ");
    sy_buf_u64(b, (uint64_t)c->rt.retries_total);
    SY_BUF_LIT(b, "\r\n");
    if (c->rt.max_retries >= 0) {
        SY_BUF_LIT(b, "x-litellm-max-retries: ");
        sy_buf_u64(b, (uint64_t)c->rt.max_retries);
        SY_BUF_LIT(b, "\r\n");
    }
    double t = c->rt.eff_timeout_s > 0  ? c->rt.eff_timeout_s
               : c->opt.timeout_req > 0 ? c->opt.timeout_req
               : c->drt                 ? c->drt->timeout_s
                                        : -1;
    if (t > 0) {
        SY_BUF_LIT(b, "x-litellm-timeout: ");
        sy_py_float_repr(b, t); /* str(float) */
        SY_BUF_LIT(b, "\r\n");
    }
    const char *region = c->drt && c->drt->d->region_name ? c->drt->d->region_name
                         : c->opt.rf.region == 'e'        ? "eu"
                         : c->opt.rf.region == 'u'        ? "us"
                                                          : NULL;
    if (region && !strpbrk(region, "\r\n")) {
        SY_BUF_LIT(b, "x-litellm-model-region: ");
        sy_buf_append(b, region, strlen(region));
        SY_BUF_LIT(b, "\r\n");
    }
}

void sy_call_headers(struct sy_call *c, struct sy_buf *b, int durations)
{
    /* Hot path (every response): constant pieces are literals, the ones that
     * name the deployment and group are prebuilt at load (gwconf.c). */
    /* one allocation: the prebuilt and upstream pieces plus room for the
     * rest (ids, limits, router, cost, durations), so appends never grow it */
    size_t room = 512 + c->up.up_headers_len + (c->drt ? c->drt->resp_headers_len : 0) +
                  (c->group ? c->group->resp_header_len : 0);
    if (sy_buf_reserve(b, room) != 0 && sy_buf_reserve(b, 160) != 0)
        return;
    SY_BUF_LIT(b, "x-litellm-call-id: ");
    sy_buf_append(b, c->call_id, 36);
    SY_BUF_LIT(b, "\r\n");
    if (c->drt)
        sy_buf_append(b, c->drt->resp_headers, c->drt->resp_headers_len);
    if (c->group)
        sy_buf_append(b, c->group->resp_header, c->group->resp_header_len);
    SY_BUF_LIT(b, "x-litellm-version: " SY_VERSION "\r\n");
    if (c->up.up_headers_len)
        sy_buf_append(b, c->up.up_headers, c->up.up_headers_len);
    for (unsigned i = 0; i < c->pl->nheaders; i++) /* the stages' own (rate limits, cache key) */
        c->pl->headers[i](c, b);
    if (c->req_group)
        router_headers(c, b);
    if (c->rt.fallbacks_done) {
        SY_BUF_LIT(b, "x-litellm-attempted-fallbacks: ");
        sy_buf_u64(b, (uint64_t)c->rt.fallbacks_done);
        SY_BUF_LIT(b, "\r\nx-litellm-max-fallbacks: ");
        sy_buf_u64(b, (uint64_t)c->g->rc.max_fallbacks);
        SY_BUF_LIT(b, "\r\n");
    }
    if (durations && c->drt) {
        sy_call_cost(c);
        if (c->usage.cost_known) {
            char t[SY_FMT_G12_MAX];
            size_t n = sy_fmt_g12(t, c->usage.cost); /* "%.12g" without printf's bignums */
            SY_BUF_LIT(b, "x-litellm-response-cost: ");
            sy_buf_append(b, t, n);
            SY_BUF_LIT(b, "\r\n");
        }
    }
    if (durations) {
        uint64_t now = sy_now_ns();
        uint64_t total = now - c->req->t_start_ns;
        uint64_t llm = c->up.t_up_start ? (c->up.t_up_first ? c->up.t_up_first : now) - c->up.t_up_start : 0;
        SY_BUF_LIT(b, "x-litellm-response-duration-ms: ");
        put_ms3(b, total);
        SY_BUF_LIT(b, "\r\nx-litellm-overhead-duration-ms: ");
        put_ms3(b, total > llm ? total - llm : 0);
        SY_BUF_LIT(b, "\r\n");
    }
}

/* The rounds sy_call_redo carried, added to the last round's usage and cost
 * (that one priced at its own deployment first). */
static void usage_fold(struct sy_call *c)
{
    struct sy_call_usage *u = &c->usage;
    sy_call_cost(c);
    u->prompt_tokens += u->carry_prompt;
    u->completion_tokens += u->carry_completion;
    u->cached_tokens += u->carry_cached;
    u->cache_write_tokens += u->carry_cache_write;
    u->cache_write_1h_tokens += u->carry_cache_write_1h;
    u->reasoning_tokens += u->carry_reasoning;
    u->have_usage = 1;
    if (u->carry_cost_known) {
        u->cost = (u->cost_known ? u->cost : 0) + u->carry_cost;
        u->cost_known = 1;
    }
    u->rounds = 0;
}

void sy_call_account(struct sy_call *c, int status)
{
    if (c->finished)
        return;
    c->finished = 1;
    if (c->counted_inflight)
        sy_metrics_inflight(c->w->metrics, -1);
    sy_filter_end(c, status); /* the response filters (gateway/filter.h): their final usage first */
    if (c->usage.rounds)
        usage_fold(c);                            /* a call sent again (sy_call_redo): every round counts */
    for (unsigned i = 0; i < c->pl->nfinish; i++) /* limits settle, spend row (list order) */
        c->pl->finish[i](c, status);
    if (!SY_RK_IS_LLM(c->kind))
        return; /* only LLM routes are counted, as in LiteLLM */
    uint64_t now = sy_now_ns();
    struct sy_metric_req m = {0};
    char route[128];
    if (c->in.route_is_literal) {
        m.route = c->in.route_path.p;
    } else {
        size_t rn = c->in.route_path.n < sizeof route ? c->in.route_path.n : sizeof route - 1;
        memcpy(route, c->in.route_path.p, rn);
        route[rn] = 0;
        m.route = route;
    }
    /* Only configured groups label series: a client must not be able to
     * create series by inventing model names (unknown ones are counted
     * under requested_model=""). */
    m.requested_model = c->in.model && c->req_group ? c->in.model : "";
    m.model = c->drt && c->drt->d->upstream_model ? c->drt->d->upstream_model : "";
    m.model_id = c->drt && c->drt->d->id ? c->drt->d->id : "";
    m.api_provider = c->drt && c->drt->prov ? c->drt->prov->name : "";
    m.api_base = c->drt && c->drt->d->api_base ? c->drt->d->api_base : "";
    m.hashed_api_key = c->auth.hashed_key ? c->auth.hashed_key : "";
    /* end user, as LiteLLM: the body's `user`, else x-litellm-end-user-id / x-litellm-customer-id */
    char end_user[128] = "";
    if (c->in.scan.user.type == 's' && c->in.scan.user.len < sizeof end_user)
        sy_jstr_decode(c->req->body.p + c->in.scan.user.off, c->in.scan.user.len, end_user, sizeof end_user);
    if (!end_user[0]) {
        struct sy_str h = sy_req_header(c->req, "x-litellm-end-user-id");
        if (!h.p)
            h = sy_req_header(c->req, "x-litellm-customer-id");
        if (h.p && h.n < sizeof end_user) {
            memcpy(end_user, h.p, h.n);
            end_user[h.n] = 0;
        }
    }
    if (end_user[0])
        m.end_user = end_user;
    m.status = status;
    m.llm_called = c->up.t_up_start != 0;
    m.llm_failed = c->out.llm_failed;
    m.exception_class =
        status >= 400 ? (c->out.exception_class ? c->out.exception_class : sy_status_exception_class(status)) : NULL;
    m.total_s = (double)(now - c->req->t_start_ns) / 1e9;
    m.llm_s = c->up.t_up_start ? (double)((c->up.t_up_end ? c->up.t_up_end : now) - c->up.t_up_start) / 1e9 : 0;
    m.ttft_s = c->in.stream && c->up.t_up_first ? (double)(c->up.t_up_first - c->up.t_up_start) / 1e9 : -1;
    m.overhead_s = m.total_s - m.llm_s > 0 ? m.total_s - m.llm_s : 0;
    m.prompt_tokens = c->usage.prompt_tokens;
    m.completion_tokens = c->usage.completion_tokens;
    sy_call_cost(c);
    m.spend = c->usage.cost_known ? c->usage.cost : 0;
    if (c->drt && c->drt->pb && c->usage.cost_known && c->cache != SY_CACHE_HIT)
        sy_pbudget_add(c->drt->pb, c->usage.cost, sy_wall_ms()); /* provider_budget_config (router/budget.c) */
    m.cache = c->cache;                                          /* 0 not cached, 1 hit, 2 miss */
    sy_metrics_record(c->w->metrics, &m);
    if (c->g->cfg->access_log)
        sy_accesslog_write(&m, c->call_id, m.model_id);
}

void sy_call_error(struct sy_call *c, int status, const char *type, const char *param, const char *msg,
                   const char *extra, size_t extra_len)
{
    struct sy_buf h;
    sy_buf_init(&h, 16384);
    sy_call_headers(c, &h, 1);
    if (extra_len)
        sy_buf_append(&h, extra, extra_len);
    c->out.err_msg = msg; /* for the logging callbacks' record (stages/log.c) */
    sy_call_account(c, status);
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    if (sy_xlate_client_error(c->kind, status, msg, &b)) /* the client's dialect has its own error shape */
        sy_resp_simple(c->req, status, h.p, h.len, "application/json", b.p, b.len);
    else
        sy_reply_error_h(c->req, status, type, param, msg, h.p, h.len);
    sy_buf_free(&b);
    sy_buf_free(&h);
}
