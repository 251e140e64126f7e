/* root.c - GET / (and HEAD /, which the server answers as GET without the
 * body): what this server is and where its main endpoints are.
 *
 * LiteLLM serves its Swagger UI at /; switchyard has no OpenAPI document, so
 * it serves a small page of its own instead: its name, version and the main
 * endpoints, one table (kEndpoints) written two ways by content negotiation
 * (http/server.h sy_accept_pick):
 *
 *   Accept prefers        Content-Type                 body
 *   text/html (default)   text/html; charset=utf-8     a self-contained page: inline CSS, no
 *                                                      script, image or external asset; GET
 *                                                      endpoints are links
 *   application/json      application/json             {"name","version","description",
 *                                                       "endpoints":[{"method","path","auth",
 *                                                       "description"}...],"docs":{...}}
 *
 * A browser (an Accept header that names text/html and prefers it) is sent
 * to the admin UI instead: 302 to /ui/, HEAD alike (HEAD answers as GET).
 * A client without an Accept header, or with only * / *, gets the page above:
 * Claude Code's HEAD / probe stays a 200.
 *
 * No auth (as LiteLLM's docs page) and nothing from the config: the page is
 * the same for every caller and says nothing a caller could not learn from
 * /routes. Clients that probe the gateway at start (Claude Code's HEAD /) get
 * a 200.
 */
#include <string.h>

#include "core/buf.h"
#include "core/errors.h"
#include "gateway/stage.h"
#include "http/reply.h"
#include "http/server.h"

#ifndef SY_VERSION
#define SY_VERSION "unknown"
#endif

#define KEY_DOCS "https://docs.litellm.ai/docs/proxy/virtual_keys"

struct endpoint {
    const char *method, *path;
    const char *auth; /* "none", "key" (a virtual key or the master key), "master" */
    const char *what;
};

static const struct endpoint kEndpoints[] = {
    {"POST", "/v1/chat/completions", "key", "OpenAI chat completions, to any configured deployment"},
    {"POST", "/v1/responses", "key", "OpenAI Responses API (Codex)"},
    {"POST", "/v1/messages", "key", "Anthropic Messages API (Claude Code)"},
    {"POST", "/v1/messages/count_tokens", "key", "Anthropic token counting, by the provider's own counter"},
    {"POST", "/v1/embeddings", "key", "OpenAI embeddings"},
    {"GET", "/v1/models", "key", "the model groups the key may use"},
    {"GET", "/health/liveliness", "none", "liveness probe"},
    {"GET", "/health/readiness", "none", "readiness: database and cache state"},
    {"GET", "/health", "key", "a cheap call to every deployment"},
    {"GET", "/metrics", "none", "Prometheus metrics (LiteLLM's names)"},
    {"GET", "/routes", "none", "every route served and its methods"},
    {"POST", "/key/generate", "master", "create a virtual key (LiteLLM's key management API)"},
    {"GET", "/key/info", "key", "a key's spend, budget and limits"},
    {"GET", "/key/list", "master", "list virtual keys"},
};
#define NENDPOINTS (sizeof kEndpoints / sizeof kEndpoints[0])

static const char kDescription[] = "An LLM gateway: a drop-in for the LiteLLM proxy (same config.yaml, "
                                   "endpoints, key management API, error shapes and metrics).";

static int root_json(struct sy_buf *b)
{
    int rc = SY_BUF_LIT(b, "{\"name\":\"switchyard\",\"version\":\"");
    rc |= sy_buf_json_escape(b, SY_VERSION, strlen(SY_VERSION));
    rc |= SY_BUF_LIT(b, "\",\"description\":\"");
    rc |= sy_buf_json_escape(b, kDescription, sizeof kDescription - 1);
    rc |= SY_BUF_LIT(b, "\",\"endpoints\":[");
    for (size_t i = 0; i < NENDPOINTS; i++) {
        const struct endpoint *e = &kEndpoints[i];
        rc |= sy_buf_printf(b, "%s{\"method\":\"%s\",\"path\":\"%s\",\"auth\":\"%s\",\"description\":\"", i ? "," : "",
                            e->method, e->path, e->auth);
        rc |= sy_buf_json_escape(b, e->what, strlen(e->what));
        rc |= SY_BUF_LIT(b, "\"}");
    }
    rc |= SY_BUF_LIT(b, "],\"docs\":{\"key_management\":\"" KEY_DOCS "\",\"routes\":\"/routes\"}}");
    return rc;
}

/* The table's texts are constants without <, > or &: written as they are. */
static int root_html(struct sy_buf *b)
{
    int rc = SY_BUF_LIT(b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                           "<title>switchyard</title><style>"
                           "body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;"
                           "color:#222}code{font-family:ui-monospace,monospace}table{border-collapse:collapse;"
                           "width:100%}td,th{text-align:left;padding:.3rem .6rem;border-bottom:1px solid #ddd}"
                           "th{background:#f4f4f4}.m{font-weight:600}</style></head><body>\n");
    rc |= sy_buf_printf(b, "<h1>switchyard <small>%s</small></h1>\n<p>%s</p>\n", SY_VERSION, kDescription);
    rc |= SY_BUF_LIT(b, "<table><tr><th>Method</th><th>Path</th><th>Auth</th><th>What</th></tr>\n");
    for (size_t i = 0; i < NENDPOINTS; i++) {
        const struct endpoint *e = &kEndpoints[i];
        if (strcmp(e->method, "GET") == 0)
            rc |= sy_buf_printf(b, "<tr><td class=\"m\">GET</td><td><a href=\"%s\"><code>%s</code></a></td>", e->path,
                                e->path);
        else
            rc |= sy_buf_printf(b, "<tr><td class=\"m\">%s</td><td><code>%s</code></td>", e->method, e->path);
        rc |= sy_buf_printf(b, "<td>%s</td><td>%s</td></tr>\n", e->auth, e->what);
    }
    rc |= SY_BUF_LIT(b, "</table>\n<p>Auth: <code>key</code> is a virtual key or the master key "
                        "(<code>Authorization: Bearer sk-...</code> or <code>x-api-key</code>), "
                        "<code>master</code> the master key. The key management API is LiteLLM's: "
                        "<a href=\"" KEY_DOCS "\">its documentation</a>. "
                        "Every route: <a href=\"/routes\"><code>/routes</code></a>. "
                        "<code>Accept: application/json</code> gets this page as JSON.</p>\n</body></html>\n");
    return rc;
}

static int root_run(struct sy_call *c)
{
    static const char *const types[] = {"text/html", "application/json"};
    struct sy_str acc = sy_req_header(c->req, "accept");
    int json = sy_accept_pick(acc.p, acc.n, types, 2) == 1;
    if (!json && acc.p && memmem(acc.p, acc.n, "text/html", 9)) {
        static const char loc[] = "location: /ui/\r\nvary: Accept\r\n";
        sy_resp_simple(c->req, 302, loc, sizeof loc - 1, "text/plain; charset=utf-8", "", 0);
        return SY_DONE;
    }
    struct sy_buf b;
    sy_buf_init(&b, 64u << 10);
    int rc = json ? root_json(&b) : root_html(&b);
    if (rc || sy_buf_failed(&b))
        sy_reply_error(c->req, 500, "internal_server_error", NULL, "index page too large");
    else
        sy_resp_simple(c->req, 200, "vary: Accept\r\n", 14, json ? "application/json" : "text/html; charset=utf-8", b.p,
                       b.len);
    sy_buf_free(&b);
    return SY_DONE;
}

const struct sy_stage sy_stage_root = {
    .name = "root",
    .routes = SY_RKB(SY_RK_ROOT),
    .run = root_run,
};
