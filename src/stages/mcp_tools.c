/* mcp_tools.c - the `mcp_tools` stage: tools of type "mcp" inside
 * /v1/responses and /v1/chat/completions (LiteLLM's
 * litellm/responses/mcp/: litellm_proxy_mcp_handler.py,
 * mcp_streaming_iterator.py, chat_completions_handler.py).
 *
 *   tools: [{"type":"mcp","server_label":L,"server_url":"litellm_proxy" |
 *            "litellm_proxy/mcp/<alias>[,<alias>...]","require_approval":"never" |
 *            "always" | {"never":{"tool_names":[..]},"always":{..}},
 *            "allowed_tools":[..]?}]
 *
 * A request with such a tool (found by a byte search for "mcp" first, so no
 * other request pays more than one memmem) goes through three steps:
 *
 *   run       the tools the caller may use are listed (sy_mcp_list_tools, one
 *             call per named server, or one for all), narrowed by
 *             allowed_tools, and replace the mcp entries as function tools in
 *             the client's dialect ("<prefix>-<tool>", parameters = the MCP
 *             inputSchema); "stream" becomes false (every round is held
 *             whole) and stream_options goes. A Responses input carrying
 *             mcp_approval_response items has its approved calls run here
 *             first; those items, and the mcp_list_tools / mcp_call /
 *             mcp_approval_request items a stateless client echoes back,
 *             become function_call + function_call_output items.
 *   answer    (the answer hook) a whole answer that calls MCP tools:
 *             - every call auto-approved (require_approval "never", or a
 *               "never" filter naming it): the calls run in parallel
 *               (sy_mcp_call_tool: permissions, spend row and metrics per
 *               call), and the model gets the conversation again with the
 *               calls and their results (sy_call_redo: the engine's
 *               another-round primitive). After max rounds
 *               (general_settings.switchyard_mcp_max_tool_rounds, default 5,
 *               LiteLLM's MAX_MCP_TOOL_CALL_ROUNDS) the follow-up goes
 *               without tools, so the model must answer in text.
 *             - else (Responses) the MCP calls become mcp_approval_request
 *               items and the answer goes out; their ids carry the call
 *               (base64 of {call_id, name, arguments, server_label}), so the
 *               request answering them needs nothing stored. Chat has no
 *               approval items: the tool calls go out as they are (LiteLLM).
 *             - an answer that also calls a tool of the client's own goes out
 *               as it is: the client must run that one.
 *   final     the last answer gets what ran: Responses output starts with an
 *             mcp_list_tools item per mcp entry and an mcp_call item per call
 *             (OpenAI's hosted-MCP items); a chat message gets LiteLLM's
 *             provider_specific_fields {mcp_list_tools, mcp_tool_calls,
 *             mcp_call_results}. A client that asked to stream gets it as
 *             the dialect's stream: chat through the response cache's
 *             replay (cache/sse.c, the MCP fields in the first and the
 *             finishing chunk, as LiteLLM), Responses through
 *             sy_resp_sse_replay (responses/replay.c).
 *
 * State lives in the stage's slot (arena); MCP results are copied there. A
 * client that leaves while tools run or list is accounted 499 once they are
 * done (gateway/offload.h's wait pattern), never while an op is in flight.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "core/errors.h"
#include "core/log.h"
#include "gateway/filter.h"
#include "gateway/jscan.h"
#include "gateway/offload.h"
#include "gateway/slot.h"
#include "gateway/stage.h"
#include "http/server.h"
#include "keys/keys.h"
#include "providers/jdom.h"
#include "responses/responses.h"
#include "stages/mcp.h"

#define MT_MAX_ENTRIES 16 /* mcp tools in one request */
#define MT_MAX_LISTS   32 /* tools/list calls (entries x named servers) */
#define MT_MAX_CALLS   64 /* tool calls in one round */
#define MT_BODY_MAX    (256u << 20)
#define MT_PREFIX      "litellm_proxy"
#define MT_PREFIX_MCP  "litellm_proxy/mcp/"

static int mt_slot = -1;

enum { AP_NEVER, AP_ALWAYS, AP_FILTER };

struct mentry {
    char *label; /* server_label, "" when absent */
    int approval;
    const char *never, *always, *allowed; /* raw JSON arrays (tool_names / allowed_tools); NULL none */
    size_t never_len, always_len, allowed_len;
};

struct mt;

struct mlist {
    struct mt *m;
    unsigned entry;
    const struct sy_mcp_server *one; /* NULL: every server the caller may use */
    char *json;                      /* the tools (JSON array) or the reason */
    size_t len;
    int err;
};

struct mtool {
    const char *name; /* namespaced, decoded */
    size_t nlen;
    unsigned entry;
};

struct mcall {
    struct mt *m;
    const char *call_id, *name, *args; /* decoded (arena) */
    size_t call_id_len, nlen, alen;
    unsigned entry;
    const char *approval_id; /* the approval request it answers, NULL */
    int denied;              /* approval refused: not run */
    char *output, *error;    /* the result as text (arena); error NULL when it succeeded */
};

struct mt {
    struct sy_call *c;
    struct sy_mcp_set *set;
    int chat;                  /* the client speaks chat (else Responses) */
    int stream, include_usage; /* what the client asked */
    struct mentry e[MT_MAX_ENTRIES];
    unsigned ne;
    struct mlist l[MT_MAX_LISTS];
    unsigned nl;
    struct mtool *t; /* the tools given to the model */
    unsigned nt;
    struct mcall k[MT_MAX_CALLS]; /* this round's calls */
    unsigned nk, pending;
    int in_start, waiting, phase; /* phase 1 listing, 2 approved calls (run), 3 a round's calls (answer) */
    unsigned rounds;
    struct sy_buf fntools;   /* the function tools for the model: elements, comma-separated */
    struct sy_buf listitems; /* Responses: mcp_list_tools items; chat: the chat tools (mcp_list_tools) */
    struct sy_buf callitems; /* Responses: mcp_call items; chat: the tool calls that ran */
    struct sy_buf results;   /* chat: {"tool_call_id","result"} objects */
    struct sy_buf input;     /* run: the rewritten Responses input (approvals answered) */
    char seed[40];
};

static struct mt *mt_of(struct sy_call *c)
{
    return sy_call_slot(c, mt_slot);
}

static void mt_free(void *p)
{
    struct mt *m = p;
    sy_buf_free(&m->fntools);
    sy_buf_free(&m->listitems);
    sy_buf_free(&m->callitems);
    sy_buf_free(&m->results);
    sy_buf_free(&m->input);
    if (m->set)
        sy_mcp_set_unref(m->set);
}

static int mt_enabled(const struct sy_gwconf *g, enum sy_route_kind k)
{
    (void)k;
    return g->cfg->mcp_servers != NULL || g->db;
}

static int refuse(struct sy_call *c, int status, const char *type, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int refuse(struct sy_call *c, int status, const char *type, const char *param, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sy_call_error(c, status, type, param, msg, NULL, 0);
    return SY_DONE;
}

/* ---- JSON helpers ---------------------------------------------------------- */

static int str_in_array(const struct sy_jdoc *d, uint32_t arr, const char *s, size_t n, struct sy_arena *a)
{
    for (uint32_t e = sy_jdom_kind(d, arr) == 'a' ? sy_jdom_first(d, arr) : 0; e; e = sy_jdom_next(d, e)) {
        size_t l;
        const char *v = sy_jdom_view(d, e, a, &l);
        if (v && l == n && !memcmp(v, s, n))
            return 1;
    }
    return 0;
}

/* Is a raw JSON array of names (parsed on demand) holding name or its bare part? */
static int names_hold(struct mt *m, const char *raw, size_t rn, const char *name, size_t nlen)
{
    struct sy_jdoc d;
    struct sy_arena *a = &m->c->req->arena;
    if (!raw || sy_jdom_parse(&d, raw, rn, a, 0) != 0)
        return 0;
    if (str_in_array(&d, 0, name, nlen, a))
        return 1;
    const char *bare;
    size_t bl;
    if (m->set && sy_mcp_split_tool(m->set, name, nlen, &bare, &bl))
        return str_in_array(&d, 0, bare, bl, a);
    return 0;
}

/* One top-level member to replace (val), drop (val NULL) or add. */
struct edit {
    const char *key;
    const char *val;
    size_t vlen;
    int done;
};

/* The object p[0..n) rewritten into out with the edits: each member named by
 * an edit replaced (its first occurrence; later ones dropped) or removed,
 * edits whose member was absent added at the end. 0, or -1 (not a JSON object). */
static int rebuild(const char *p, size_t n, struct edit *ed, size_t ne, struct sy_arena *a, struct sy_buf *out)
{
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, p, n, a, 0) != 0 || sy_jdom_type(&d, 0) != 'o')
        return -1;
    struct sy_jw w;
    sy_jw_init(&w, out);
    sy_jw_obj(&w);
    for (uint32_t k = sy_jdom_first(&d, 0); k; k = sy_jdom_next_key(&d, k)) {
        size_t i;
        for (i = 0; i < ne; i++)
            if (sy_jdom_str_eq(&d, k, ed[i].key))
                break;
        if (i < ne && (ed[i].done || !ed[i].val)) {
            ed[i].done = 1;
            continue;
        }
        size_t kl;
        const char *kv = sy_jdom_view(&d, k, a, &kl);
        sy_jw_keyn(&w, kv ? kv : "", kv ? kl : 0);
        if (i < ne) {
            sy_jw_raw(&w, ed[i].val, ed[i].vlen);
            ed[i].done = 1;
        } else {
            sy_jw_node(&w, &d, sy_jdom_val(k));
        }
    }
    for (size_t i = 0; i < ne; i++)
        if (!ed[i].done && ed[i].val) {
            sy_jw_key(&w, ed[i].key);
            sy_jw_raw(&w, ed[i].val, ed[i].vlen);
        }
    sy_jw_end(&w);
    return w.err ? -1 : 0;
}

/* ---- approval ids (responses/mcpitems.c) ---------------------------------- */

static const char *approval_id(struct mt *m, const struct mcall *k)
{
    const struct mentry *e = &m->e[k->entry];
    struct sy_resp_mcp_call rc = {k->call_id,     k->name, k->args, e->label,
                                  k->call_id_len, k->nlen, k->alen, strlen(e->label)};
    struct sy_buf b;
    sy_buf_init(&b, MT_BODY_MAX);
    const char *id = NULL;
    if (sy_resp_mcp_approval_id(&rc, &b) == 0)
        id = sy_arena_strndup(&m->c->req->arena, b.p, b.len);
    sy_buf_free(&b);
    return id;
}

static int approval_decode(struct mt *m, const char *id, size_t n, struct mcall *k)
{
    struct sy_resp_mcp_call rc;
    if (sy_resp_mcp_approval_decode(id, n, &m->c->req->arena, &rc) != 0)
        return -1;
    k->call_id = rc.call_id;
    k->call_id_len = rc.call_id_len;
    k->name = rc.name;
    k->nlen = rc.name_len;
    k->args = rc.args;
    k->alen = rc.args_len;
    return 0;
}

/* ---- the tools ------------------------------------------------------------ */

static const struct mtool *tool_find(const struct mt *m, const char *name, size_t n)
{
    for (unsigned i = 0; i < m->nt; i++)
        if (m->t[i].nlen == n && !memcmp(m->t[i].name, name, n))
            return &m->t[i];
    return NULL;
}

static int needs_approval(struct mt *m, const struct mcall *k)
{
    const struct mentry *e = &m->e[k->entry];
    if (e->approval == AP_NEVER)
        return 0;
    if (e->approval == AP_ALWAYS)
        return 1;
    if (names_hold(m, e->always, e->always_len, k->name, k->nlen))
        return 1;
    return !names_hold(m, e->never, e->never_len, k->name, k->nlen);
}

/* The listed tools into m->t, the function tools and the list items. */
static int tools_build(struct mt *m)
{
    struct sy_arena *a = &m->c->req->arena;
    size_t cap = 0;
    for (unsigned i = 0; i < m->nl; i++)
        cap += m->l[i].len / 8 + 1; /* an element takes at least {"name":"x"} and a comma */
    m->t = sy_arena_alloc(a, (cap + 1) * sizeof *m->t);
    if (!m->t)
        return -1;
    struct sy_jw fw, lw;
    sy_jw_init(&fw, &m->fntools);
    sy_jw_arr(&fw);
    sy_jw_init(&lw, &m->listitems);
    if (m->chat)
        sy_jw_arr(&lw);
    unsigned cur_entry = (unsigned)-1;
    for (unsigned i = 0; i < m->nl; i++) {
        const struct mlist *l = &m->l[i];
        const struct mentry *e = &m->e[l->entry];
        struct sy_jdoc d;
        if (sy_jdom_parse(&d, l->json, l->len, a, 0) != 0 || sy_jdom_type(&d, 0) != 'a')
            continue;
        if (!m->chat && l->entry != cur_entry) { /* one mcp_list_tools item per mcp entry */
            if (cur_entry != (unsigned)-1) {
                sy_jw_end(&lw); /* tools */
                sy_jw_key(&lw, "error");
                sy_jw_null(&lw);
                sy_jw_end(&lw);
            }
            cur_entry = l->entry;
            sy_jw_obj(&lw);
            sy_jw_key(&lw, "id");
            char id[64];
            snprintf(id, sizeof id, "mcpl_%s%u", m->seed, l->entry);
            sy_jw_cstr(&lw, id);
            sy_jw_key(&lw, "type");
            sy_jw_cstr(&lw, "mcp_list_tools");
            sy_jw_key(&lw, "server_label");
            sy_jw_cstr(&lw, e->label);
            sy_jw_key(&lw, "tools");
            sy_jw_arr(&lw);
        }
        for (uint32_t t = sy_jdom_first(&d, 0); t && m->nt < cap; t = sy_jdom_next(&d, t)) {
            size_t nl;
            const char *name = sy_jdom_str(&d, sy_jdom_member(&d, t, "name"), a, &nl);
            if (!name || !nl || tool_find(m, name, nl))
                continue;
            if (e->allowed && !names_hold(m, e->allowed, e->allowed_len, name, nl))
                continue;
            m->t[m->nt++] = (struct mtool){name, nl, l->entry};
            uint32_t desc = sy_jdom_member(&d, t, "description"), schema = sy_jdom_member(&d, t, "inputSchema");
            if (sy_jdom_kind(&d, desc) != 's')
                desc = 0;
            if (sy_jdom_kind(&d, schema) != 'o')
                schema = 0;
            for (int pass = 0; pass < (m->chat ? 2 : 1); pass++) {
                struct sy_jw *w = pass ? &lw : &fw; /* chat: the same tool again for mcp_list_tools */
                sy_jw_obj(w);
                sy_jw_key(w, "type");
                sy_jw_cstr(w, "function");
                if (m->chat) {
                    sy_jw_key(w, "function");
                    sy_jw_obj(w);
                }
                sy_jw_key(w, "name");
                sy_jw_str(w, name, nl);
                if (desc) {
                    sy_jw_key(w, "description");
                    sy_jw_node(w, &d, desc);
                }
                sy_jw_key(w, "parameters");
                if (schema)
                    sy_jw_node(w, &d, schema);
                else
                    sy_jw_raw(w, "{\"type\":\"object\",\"properties\":{}}", 33);
                if (m->chat)
                    sy_jw_end(w);
                else {
                    sy_jw_key(w, "strict");
                    sy_jw_bool(w, 0);
                }
                sy_jw_end(w);
            }
            if (!m->chat) {
                sy_jw_obj(&lw);
                sy_jw_key(&lw, "name");
                sy_jw_str(&lw, name, nl);
                sy_jw_key(&lw, "description");
                desc ? sy_jw_node(&lw, &d, desc) : sy_jw_null(&lw);
                sy_jw_key(&lw, "input_schema");
                schema ? sy_jw_node(&lw, &d, schema) : sy_jw_raw(&lw, "{}", 2);
                sy_jw_key(&lw, "annotations");
                uint32_t an = sy_jdom_member(&d, t, "annotations");
                sy_jw_node(&lw, &d, sy_jdom_kind(&d, an) == 'o' ? an : 0);
                sy_jw_end(&lw);
            }
        }
    }
    if (!m->chat && cur_entry != (unsigned)-1) {
        sy_jw_end(&lw);
        sy_jw_key(&lw, "error");
        sy_jw_null(&lw);
        sy_jw_end(&lw);
    }
    if (m->chat)
        sy_jw_end(&lw);
    sy_jw_end(&fw);
    return fw.err || lw.err ? -1 : 0;
}

/* ---- tool calls --------------------------------------------------------------- */

/* A CallToolResult as the model's text (responses/mcpitems.c). */
static void result_text(struct mt *m, struct mcall *k, const char *json, size_t n)
{
    struct sy_buf t;
    sy_buf_init(&t, MT_BODY_MAX);
    int is_error = 0;
    sy_resp_mcp_result_text(json, n, &m->c->req->arena, &t, &is_error);
    k->output = sy_arena_strndup(&m->c->req->arena, t.p ? t.p : "", t.len);
    k->error = is_error ? k->output : NULL;
    sy_buf_free(&t);
}

static void round_done(struct sy_call *c, struct mt *m);
static int approvals_done(struct sy_call *c, struct mt *m);

static void call_done(struct sy_call *c, int err, const char *json, size_t n, void *arg)
{
    struct mcall *k = arg;
    struct mt *m = k->m;
    if (err) {
        char *msg = sy_arena_alloc(&c->req->arena, n + 64);
        if (msg)
            snprintf(msg, n + 64, "Error executing tool: %.*s", (int)n, json ? json : "");
        k->output = k->error = msg ? msg : (char *)"Error executing tool";
    } else {
        result_text(m, k, json ? json : "", n);
    }
    if (--m->pending || m->in_start)
        return;
    if (sy_call_wait_done(c, &m->waiting))
        return; /* the client left: accounted */
    if (m->phase == 2) {
        if (approvals_done(c, m) == SY_OK)
            sy_call_resume(c);
        return;
    }
    round_done(c, m);
}

/* Start the calls m->k[0..nk) that are to run. */
static void calls_start(struct sy_call *c, struct mt *m)
{
    m->in_start = 1;
    m->pending = 1; /* held while starting */
    for (unsigned i = 0; i < m->nk; i++) {
        struct mcall *k = &m->k[i];
        if (k->denied) {
            if (!k->output)
                k->output = (char *)"The user did not approve this tool call.";
            k->error = k->output;
            continue;
        }
        m->pending++;
        sy_mcp_call_tool(c, k->name, k->nlen, k->alen ? k->args : NULL, k->alen, call_done, k);
    }
    m->in_start = 0;
    m->pending--;
}

/* ---- the items of what ran -------------------------------------------------- */

/* One chat tool_calls entry: {"id","type":"function","function":{"name","arguments"}}. */
static void chat_tool_call(struct sy_jw *w, const struct mcall *k)
{
    sy_jw_obj(w);
    sy_jw_key(w, "id");
    sy_jw_str(w, k->call_id, k->call_id_len);
    sy_jw_key(w, "type");
    sy_jw_cstr(w, "function");
    sy_jw_key(w, "function");
    sy_jw_obj(w);
    sy_jw_key(w, "name");
    sy_jw_str(w, k->name, k->nlen);
    sy_jw_key(w, "arguments");
    sy_jw_str(w, k->args, k->alen);
    sy_jw_end(w);
    sy_jw_end(w);
}

static void note_calls(struct mt *m)
{
    for (unsigned i = 0; i < m->nk; i++) {
        const struct mcall *k = &m->k[i];
        const struct mentry *e = &m->e[k->entry];
        if (m->chat) {
            struct sy_jw w;
            sy_jw_init(&w, &m->callitems);
            if (m->callitems.len)
                SY_BUF_LIT(&m->callitems, ",");
            chat_tool_call(&w, k);
            sy_jw_init(&w, &m->results);
            if (m->results.len)
                SY_BUF_LIT(&m->results, ",");
            sy_jw_obj(&w);
            sy_jw_key(&w, "tool_call_id");
            sy_jw_str(&w, k->call_id, k->call_id_len);
            sy_jw_key(&w, "result");
            sy_jw_cstr(&w, k->output);
            sy_jw_end(&w);
            continue;
        }
        struct sy_jw w;
        sy_jw_init(&w, &m->callitems);
        if (m->callitems.len)
            SY_BUF_LIT(&m->callitems, ",");
        sy_jw_obj(&w);
        sy_jw_key(&w, "id");
        char id[80];
        snprintf(id, sizeof id, "mcp_%s%u_%u", m->seed, m->rounds, i);
        sy_jw_cstr(&w, id);
        sy_jw_key(&w, "type");
        sy_jw_cstr(&w, "mcp_call");
        sy_jw_key(&w, "approval_request_id");
        sy_jw_cstr(&w, k->approval_id);
        sy_jw_key(&w, "arguments");
        sy_jw_str(&w, k->args, k->alen);
        sy_jw_key(&w, "error");
        sy_jw_cstr(&w, k->error);
        sy_jw_key(&w, "name");
        sy_jw_str(&w, k->name, k->nlen);
        sy_jw_key(&w, "output");
        sy_jw_cstr(&w, k->error ? NULL : k->output);
        sy_jw_key(&w, "server_label");
        sy_jw_cstr(&w, e->label);
        sy_jw_key(&w, "status");
        sy_jw_cstr(&w, k->error ? "failed" : "completed");
        sy_jw_end(&w);
    }
}

/* function_call + function_call_output items (Responses) of the calls. */
static void w_call_pair(struct sy_jw *w, const struct mcall *k)
{
    sy_jw_obj(w);
    sy_jw_key(w, "type");
    sy_jw_cstr(w, "function_call");
    sy_jw_key(w, "call_id");
    sy_jw_str(w, k->call_id, k->call_id_len);
    sy_jw_key(w, "name");
    sy_jw_str(w, k->name, k->nlen);
    sy_jw_key(w, "arguments");
    sy_jw_str(w, k->args, k->alen);
    sy_jw_end(w);
    sy_jw_obj(w);
    sy_jw_key(w, "type");
    sy_jw_cstr(w, "function_call_output");
    sy_jw_key(w, "call_id");
    sy_jw_str(w, k->call_id, k->call_id_len);
    sy_jw_key(w, "output");
    sy_jw_cstr(w, k->output);
    sy_jw_end(w);
}

/* ---- run: list, answer approvals, rewrite the request --------------------------- */

/* The request with the mcp tools replaced, no stream, the new input. */
static int request_rewrite(struct sy_call *c, struct mt *m)
{
    struct sy_arena *a = &c->req->arena;
    struct sy_jdoc d;
    struct sy_buf *body = &c->req->body;
    if (sy_jdom_parse(&d, body->p, body->len, a, 0) != 0)
        return refuse(c, 400, "invalid_request_error", NULL, "Invalid JSON payload");
    /* the tools: every entry that is not ours kept, ours replaced by the function tools */
    struct sy_buf tools;
    sy_buf_init(&tools, MT_BODY_MAX);
    struct sy_jw w;
    sy_jw_init(&w, &tools);
    sy_jw_arr(&w);
    uint32_t tn = sy_jdom_top(&d, "tools");
    for (uint32_t e = sy_jdom_kind(&d, tn) == 'a' ? sy_jdom_first(&d, tn) : 0; e; e = sy_jdom_next(&d, e)) {
        uint32_t ty = sy_jdom_member(&d, e, "type"), url = sy_jdom_member(&d, e, "server_url");
        size_t ul;
        const char *u = sy_jdom_view(&d, url, a, &ul);
        if (sy_jdom_str_eq(&d, ty, "mcp") && u && ul >= sizeof MT_PREFIX - 1 &&
            !memcmp(u, MT_PREFIX, sizeof MT_PREFIX - 1))
            continue;
        sy_jw_node(&w, &d, e);
    }
    struct sy_jdoc fd;
    if (sy_jdom_parse(&fd, m->fntools.p, m->fntools.len, a, 0) == 0 && sy_jdom_type(&fd, 0) == 'a')
        for (uint32_t e = sy_jdom_first(&fd, 0); e; e = sy_jdom_next(&fd, e))
            sy_jw_node(&w, &fd, e);
    sy_jw_end(&w);
    int none = tools.len == 2; /* "[]": OpenAI refuses an empty tools array */
    struct edit ed[7];
    size_t ne = 0;
    ed[ne++] = (struct edit){"tools", none ? NULL : tools.p, tools.len, 0};
    if (none) {
        ed[ne++] = (struct edit){"tool_choice", NULL, 0, 0};
        ed[ne++] = (struct edit){"parallel_tool_calls", NULL, 0, 0};
    }
    ed[ne++] = (struct edit){"stream", "false", 5, 0};
    ed[ne++] = (struct edit){"stream_options", NULL, 0, 0};
    if (m->input.len)
        ed[ne++] = (struct edit){"input", m->input.p, m->input.len, 0};
    uint32_t tc = sy_jdom_top(&d, "tool_choice");
    if (!none && sy_jdom_kind(&d, tc) == 'o' && sy_jdom_str_eq(&d, sy_jdom_member(&d, tc, "type"), "mcp"))
        ed[ne++] = (struct edit){"tool_choice", "\"auto\"", 6, 0}; /* naming the mcp tool: any of its tools */
    struct sy_buf nb;
    sy_buf_init(&nb, MT_BODY_MAX);
    int rc = w.err ? -1 : rebuild(body->p, body->len, ed, ne, a, &nb);
    sy_buf_free(&tools);
    struct sy_jscan sc;
    if (rc != 0 || sy_buf_failed(&nb) || sy_jscan(nb.p, nb.len, &sc) != 0) {
        sy_buf_free(&nb);
        return refuse(c, 500, "internal_server_error", NULL, "switchyard: the request with MCP tools cannot be built");
    }
    sy_buf_free(body);
    *body = nb;
    c->in.scan = sc;
    c->in.stream = 0; /* every round is held whole; the final answer is streamed here (final_stream) */
    c->in.include_usage = 0;
    m->phase = 0;
    return SY_OK;
}

/* The Responses input with the MCP items a client sends back turned into
 * function calls and outputs, the approved calls queued (m->k). 0 when the
 * input has none (m->input stays empty), 1 rewritten, -1 a bad approval. */
static int input_scan(struct sy_call *c, struct mt *m, const struct sy_jdoc *d)
{
    struct sy_arena *a = &c->req->arena;
    uint32_t in = sy_jdom_top(d, "input");
    if (sy_jdom_kind(d, in) != 'a')
        return 0;
    int any = 0;
    for (uint32_t e = sy_jdom_first(d, in); e && !any; e = sy_jdom_next(d, e)) {
        size_t l;
        const char *ty = sy_jdom_view(d, sy_jdom_member(d, e, "type"), a, &l);
        any = ty && l > 4 && !memcmp(ty, "mcp_", 4);
    }
    if (!any)
        return 0;
    struct sy_jw w;
    sy_jw_init(&w, &m->input);
    sy_jw_arr(&w);
    for (uint32_t e = sy_jdom_first(d, in); e; e = sy_jdom_next(d, e)) {
        uint32_t ty = sy_jdom_member(d, e, "type");
        if (sy_jdom_str_eq(d, ty, "mcp_list_tools") || sy_jdom_str_eq(d, ty, "mcp_approval_request"))
            continue;                            /* the tools are listed again; a request is answered by its response */
        if (sy_jdom_str_eq(d, ty, "mcp_call")) { /* a call that ran: its call and output for the model */
            struct mcall k = {0};
            k.call_id = sy_jdom_str(d, sy_jdom_member(d, e, "id"), a, &k.call_id_len);
            k.name = sy_jdom_str(d, sy_jdom_member(d, e, "name"), a, &k.nlen);
            k.args = sy_jdom_str(d, sy_jdom_member(d, e, "arguments"), a, &k.alen);
            const char *out = sy_jdom_str(d, sy_jdom_member(d, e, "output"), a, NULL);
            const char *err = sy_jdom_str(d, sy_jdom_member(d, e, "error"), a, NULL);
            if (!k.call_id || !k.name)
                continue;
            if (!k.args)
                k.args = "{}", k.alen = 2;
            k.output = (char *)(out ? out : err ? err : "");
            w_call_pair(&w, &k);
            continue;
        }
        if (sy_jdom_str_eq(d, ty, "mcp_approval_response")) {
            size_t il;
            const char *id = sy_jdom_str(d, sy_jdom_member(d, e, "approval_request_id"), a, &il);
            int approve = 0;
            sy_jdom_bool(d, sy_jdom_member(d, e, "approve"), &approve);
            if (m->nk >= MT_MAX_CALLS)
                return -1;
            struct mcall *k = &m->k[m->nk];
            memset(k, 0, sizeof *k);
            k->m = m;
            if (!id || approval_decode(m, id, il, k) != 0)
                return -1;
            const struct mtool *t = tool_find(m, k->name, k->nlen);
            k->approval_id = id;
            k->entry = t ? t->entry : 0;
            k->denied = !approve;
            if (approve && !t) { /* not among the tools this request gives the model */
                k->denied = 1;
                k->output = (char *)"Tool call failed: the tool is not available to this request.";
            }
            m->nk++;
            continue;
        }
        sy_jw_node(&w, d, e);
    }
    /* the answered calls follow the items, once they ran (approvals_done closes the array) */
    return w.err ? -1 : 1;
}

/* The approved calls ran: their pairs end the input, the request is rewritten. */
static int approvals_done(struct sy_call *c, struct mt *m)
{
    struct sy_buf pairs;
    sy_buf_init(&pairs, MT_BODY_MAX);
    struct sy_jw w;
    sy_jw_init(&w, &pairs);
    for (unsigned i = 0; i < m->nk; i++) {
        struct mcall *k = &m->k[i];
        if (k->denied)
            k->error = k->output;
        w_call_pair(&w, k);
    }
    if (pairs.len) {
        if (m->input.len > 1)
            SY_BUF_LIT(&m->input, ",");
        sy_buf_append(&m->input, pairs.p, pairs.len);
    }
    SY_BUF_LIT(&m->input, "]");
    sy_buf_free(&pairs);
    note_calls(m); /* they show as mcp_call items of this answer */
    m->nk = 0;
    m->phase = 0;
    if (w.err || sy_buf_failed(&m->input))
        return refuse(c, 500, "internal_server_error", NULL, "switchyard: the request with MCP tools cannot be built");
    return request_rewrite(c, m);
}

/* Every list arrived: errors answered, tools built, approvals run, the
 * request rewritten. SY_OK, SY_AGAIN (approved calls run), SY_DONE. */
static int lists_done(struct sy_call *c, struct mt *m)
{
    for (unsigned i = 0; i < m->nl; i++) {
        const struct mlist *l = &m->l[i];
        if (!l->err)
            continue;
        const char *who = l->one ? l->one->prefix : "the MCP servers";
        if (l->err == SY_EAUTH)
            return refuse(c, 403, "permission_error", "tools", "MCP server '%s' is not allowed for this key: %.*s", who,
                          (int)l->len, l->json);
        return refuse(c, 502, "api_error", "tools", "MCP tools/list on %s failed: %.*s", who, (int)l->len, l->json);
    }
    if (tools_build(m) != 0)
        return refuse(c, 500, "internal_server_error", NULL, "switchyard: the MCP tools cannot be listed");
    if (!m->chat) {
        struct sy_jdoc d;
        if (sy_jdom_parse(&d, c->req->body.p, c->req->body.len, &c->req->arena, 0) != 0)
            return refuse(c, 400, "invalid_request_error", NULL, "Invalid JSON payload");
        int rc = input_scan(c, m, &d);
        if (rc < 0)
            return refuse(c, 400, "invalid_request_error", "input",
                          "mcp_approval_response: approval_request_id is not an approval request switchyard made");
        if (rc > 0) {
            if (!m->nk)
                return approvals_done(c, m);
            m->phase = 2;
            calls_start(c, m);
            if (!m->pending)
                return approvals_done(c, m);
            m->waiting = 1;
            c->req->on_abort = sy_call_wait_abort;
            return SY_AGAIN;
        }
    }
    return request_rewrite(c, m);
}

static void list_done(struct sy_call *c, int err, const char *json, size_t n, void *arg)
{
    struct mlist *l = arg;
    struct mt *m = l->m;
    l->err = err;
    l->json = sy_arena_strndup(&c->req->arena, json ? json : "", n);
    l->len = l->json ? n : 0;
    if (--m->pending || m->in_start)
        return;
    if (sy_call_wait_done(c, &m->waiting))
        return;
    if (lists_done(c, m) == SY_OK)
        sy_call_resume(c);
}

/* May the caller use server s? (stages/mcp.c decides the same way; a server
 * named in server_url that the key may not use is refused, not listed empty.) */
static int allowed(struct sy_call *c, struct mt *m, const struct sy_mcp_server *s)
{
    size_t n = m->set->n;
    unsigned char *ok = sy_arena_alloc(&c->req->arena, n ? n : 1);
    if (!ok)
        return 0;
    const struct sy_keyinfo *k = c->auth.key;
    int admin = c->auth.is_admin || !c->g->master_key; /* no master key: the proxy is open, as LiteLLM */
    sy_mcp_allowed(m->set, admin, k ? k->perm : NULL, k ? k->team_perm : NULL, k ? k->org_perm : NULL, ok);
    return s->idx < n && ok[s->idx];
}

/* The mcp entry e of the request into m (and its lists). SY_OK or SY_DONE. */
static int entry_add(struct sy_call *c, struct mt *m, const struct sy_jdoc *d, uint32_t e, const char *u, size_t ul)
{
    struct sy_arena *a = &c->req->arena;
    if (m->ne >= MT_MAX_ENTRIES)
        return refuse(c, 400, "invalid_request_error", "tools", "at most %d tools of type mcp in one request",
                      MT_MAX_ENTRIES);
    unsigned ei = m->ne++;
    struct mentry *me = &m->e[ei];
    const char *label = sy_jdom_str(d, sy_jdom_member(d, e, "server_label"), a, NULL);
    me->label = (char *)(label ? label : "");
    uint32_t ra = sy_jdom_member(d, e, "require_approval");
    me->approval = AP_ALWAYS; /* OpenAI's default */
    if (sy_jdom_str_eq(d, ra, "never"))
        me->approval = AP_NEVER;
    else if (sy_jdom_kind(d, ra) == 'o') {
        me->approval = AP_FILTER;
        uint32_t nv = sy_jdom_member(d, sy_jdom_member(d, ra, "never"), "tool_names");
        uint32_t al = sy_jdom_member(d, sy_jdom_member(d, ra, "always"), "tool_names");
        if (sy_jdom_kind(d, nv) == 'a')
            me->never = sy_jdom_raw(d, nv, &me->never_len);
        if (sy_jdom_kind(d, al) == 'a')
            me->always = sy_jdom_raw(d, al, &me->always_len);
    }
    uint32_t at = sy_jdom_member(d, e, "allowed_tools");
    if (sy_jdom_kind(d, at) == 'o') /* OpenAI's filter form {"tool_names": [...]} */
        at = sy_jdom_member(d, at, "tool_names");
    if (sy_jdom_kind(d, at) == 'a')
        me->allowed = sy_jdom_raw(d, at, &me->allowed_len);
    if (ul == sizeof MT_PREFIX - 1) { /* "litellm_proxy": every server the caller may use */
        if (m->nl >= MT_MAX_LISTS)
            return refuse(c, 400, "invalid_request_error", "tools", "too many MCP servers in one request");
        m->l[m->nl++] = (struct mlist){.m = m, .entry = ei};
        return SY_OK;
    }
    if (ul <= sizeof MT_PREFIX_MCP - 1 || memcmp(u, MT_PREFIX_MCP, sizeof MT_PREFIX_MCP - 1))
        return refuse(c, 400, "invalid_request_error", "tools",
                      "server_url '%.*s': expected \"litellm_proxy\" or \"litellm_proxy/mcp/<server>\"",
                      (int)(ul > 200 ? 200 : ul), u);
    const char *p = u + sizeof MT_PREFIX_MCP - 1, *end = u + ul;
    while (p < end) { /* "a,b": several servers */
        const char *q = memchr(p, ',', (size_t)(end - p));
        size_t n = (size_t)((q ? q : end) - p);
        while (n && p[n - 1] == '/')
            n--;
        if (n) {
            const struct sy_mcp_server *s = sy_mcp_find(m->set, p, n);
            if (!s)
                return refuse(c, 400, "invalid_request_error", "tools", "MCP server '%.*s' not found",
                              (int)(n > 200 ? 200 : n), p);
            if (!allowed(c, m, s))
                return refuse(c, 403, "permission_error", "tools",
                              "MCP server '%s' is not allowed for this key (object_permission.mcp_servers)", s->prefix);
            if (m->nl >= MT_MAX_LISTS)
                return refuse(c, 400, "invalid_request_error", "tools", "too many MCP servers in one request");
            m->l[m->nl++] = (struct mlist){.m = m, .entry = ei, .one = s};
        }
        p = q ? q + 1 : end;
    }
    return SY_OK;
}

static int mt_run(struct sy_call *c)
{
    const struct sy_buf *b = &c->req->body;
    if (!b->len || !memmem(b->p, b->len, "\"mcp\"", 5))
        return SY_OK; /* the one cost for every other request */
    struct sy_arena *a = &c->req->arena;
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, b->p, b->len, a, 0) != 0)
        return SY_OK; /* parse answered malformed bodies already */
    uint32_t tools = sy_jdom_top(&d, "tools");
    if (sy_jdom_kind(&d, tools) != 'a')
        return SY_OK;
    struct mt *m = NULL;
    for (uint32_t e = sy_jdom_first(&d, tools); e; e = sy_jdom_next(&d, e)) {
        size_t ul;
        const char *u = sy_jdom_view(&d, sy_jdom_member(&d, e, "server_url"), a, &ul);
        if (!sy_jdom_str_eq(&d, sy_jdom_member(&d, e, "type"), "mcp") || !u || ul < sizeof MT_PREFIX - 1 ||
            memcmp(u, MT_PREFIX, sizeof MT_PREFIX - 1))
            continue; /* another MCP server (a URL): the upstream's business, as LiteLLM */
        if (!m) {
            m = sy_call_slot_new(c, mt_slot, sizeof *m);
            if (!m)
                return refuse(c, 500, "internal_server_error", NULL, "out of memory");
            m->c = c;
            m->chat = c->kind == SY_RK_CHAT;
            m->stream = c->in.stream;
            m->include_usage = c->in.include_usage;
            sy_buf_init(&m->fntools, MT_BODY_MAX);
            sy_buf_init(&m->listitems, MT_BODY_MAX);
            sy_buf_init(&m->callitems, MT_BODY_MAX);
            sy_buf_init(&m->results, MT_BODY_MAX);
            sy_buf_init(&m->input, MT_BODY_MAX);
            size_t s = 0;
            for (const char *p = c->call_id; *p && s + 1 < sizeof m->seed; p++)
                if (*p != '-')
                    m->seed[s++] = *p;
            sy_arena_defer(a, mt_free, m);
            m->set = sy_mcp_current(c->g);
            if (!m->set)
                return refuse(c, 400, "invalid_request_error", "tools", "no MCP servers are configured");
        }
        if (entry_add(c, m, &d, e, u, ul) != SY_OK)
            return SY_DONE;
    }
    if (!m)
        return SY_OK;
    m->phase = 1;
    m->in_start = 1;
    m->pending = 1;
    for (unsigned i = 0; i < m->nl; i++) {
        m->pending++;
        sy_mcp_list_tools(c, m->l[i].one, list_done, &m->l[i]);
    }
    m->in_start = 0;
    if (--m->pending == 0)
        return lists_done(c, m);
    m->waiting = 1;
    c->req->on_abort = sy_call_wait_abort;
    return SY_AGAIN;
}

/* ---- the answer ------------------------------------------------------------ */

/* The client's stream of the final answer (final JSON in body): sent here,
 * the call accounted. */
static int final_stream(struct sy_call *c, struct mt *m, struct sy_buf *body)
{
    struct sy_buf sse;
    sy_buf_init(&sse, MT_BODY_MAX);
    int rc;
    if (m->chat) {
        rc = sy_cache_sse_replay(body->p, body->len, m->include_usage, &sse);
    } else {
        rc = sy_resp_sse_replay(body->p, body->len, &c->req->arena, &sse);
    }
    if (rc != 0 || sy_buf_failed(&sse)) {
        sy_buf_free(&sse);
        return refuse(c, 500, "internal_server_error", NULL, "switchyard: the answer cannot be streamed");
    }
    if (m->chat && (m->listitems.len || m->callitems.len)) { /* LiteLLM's MCP fields in the first and last chunk */
        struct sy_buf out;
        sy_buf_init(&out, MT_BODY_MAX);
        static const char dl[] = "\"delta\":{";
        const char *p = sse.p, *e = sse.p + sse.len;
        int first = 1;
        while (p < e) {
            const char *nl = memmem(p, (size_t)(e - p), "\n\n", 2);
            const char *end = nl ? nl + 2 : e;
            const char *dp = memmem(p, (size_t)(end - p), dl, sizeof dl - 1);
            int finishing = memmem(p, (size_t)(end - p), "\"finish_reason\":\"", 17) != NULL;
            if (dp && (first || finishing)) {
                const char *ins = dp + sizeof dl - 1;
                sy_buf_append(&out, p, (size_t)(ins - p));
                SY_BUF_LIT(&out, "\"provider_specific_fields\":{");
                if (first) {
                    SY_BUF_LIT(&out, "\"mcp_list_tools\":");
                    sy_buf_append(&out, m->listitems.p, m->listitems.len);
                } else {
                    SY_BUF_LIT(&out, "\"mcp_tool_calls\":[");
                    sy_buf_append(&out, m->callitems.p, m->callitems.len);
                    SY_BUF_LIT(&out, "],\"mcp_call_results\":[");
                    sy_buf_append(&out, m->results.p, m->results.len);
                    SY_BUF_LIT(&out, "]");
                }
                SY_BUF_LIT(&out, "}");
                if (*ins != '}')
                    SY_BUF_LIT(&out, ",");
                sy_buf_append(&out, ins, (size_t)(end - ins));
                first = 0;
            } else {
                sy_buf_append(&out, p, (size_t)(end - p));
            }
            p = end;
        }
        sy_buf_free(&sse);
        sse = out;
    }
    c->in.stream = 1; /* what the client asked, for the logs and metrics */
    c->in.include_usage = m->include_usage;
    struct sy_buf h;
    sy_buf_init(&h, 16384);
    sy_call_headers(c, &h, 1);
    SY_BUF_LIT(&h, "cache-control: no-cache\r\nx-accel-buffering: no\r\n");
    sy_filter_start(c, 1);
    sy_filter_head(c, 200, "text/event-stream", h.p, h.len);
    sy_resp_start(c->req, 200, h.p, h.len, "text/event-stream");
    c->out.client_started = 1;
    sy_resp_chunk(c->req, sse.p, sse.len);
    sy_filter_data(c, sse.p, sse.len);
    sy_call_account(c, 200);
    sy_resp_end(c->req);
    sy_buf_free(&h);
    sy_buf_free(&sse);
    return SY_DONE;
}

/* The final answer with what ran added (then streamed if asked). */
static int final_answer(struct sy_call *c, struct mt *m, struct sy_buf *body, const struct sy_jdoc *d,
                        const char *const *approvals)
{
    struct sy_arena *a = &c->req->arena;
    struct sy_buf nb;
    sy_buf_init(&nb, MT_BODY_MAX);
    if (!m->chat) {
        struct sy_buf out;
        sy_buf_init(&out, MT_BODY_MAX);
        struct sy_jw w;
        sy_jw_init(&w, &out);
        sy_jw_arr(&w);
        if (m->listitems.len)
            sy_jw_raw(&w, m->listitems.p, m->listitems.len);
        if (m->callitems.len) { /* comma-separated items: written as one raw run */
            sy_jw_raw(&w, m->callitems.p, m->callitems.len);
        }
        uint32_t output = sy_jdom_top(d, "output");
        unsigned ai = 0;
        for (uint32_t it = sy_jdom_kind(d, output) == 'a' ? sy_jdom_first(d, output) : 0; it;
             it = sy_jdom_next(d, it)) {
            uint32_t ty = sy_jdom_member(d, it, "type");
            size_t nl;
            const char *nm = sy_jdom_str(d, sy_jdom_member(d, it, "name"), a, &nl);
            const struct mtool *t = sy_jdom_str_eq(d, ty, "function_call") && nm ? tool_find(m, nm, nl) : NULL;
            if (approvals && t) { /* an MCP call that waits for the client's approval */
                const char *args = sy_jdom_str(d, sy_jdom_member(d, it, "arguments"), a, NULL);
                sy_jw_obj(&w);
                sy_jw_key(&w, "id");
                sy_jw_cstr(&w, approvals[ai++]);
                sy_jw_key(&w, "type");
                sy_jw_cstr(&w, "mcp_approval_request");
                sy_jw_key(&w, "arguments");
                sy_jw_cstr(&w, args ? args : "{}");
                sy_jw_key(&w, "name");
                sy_jw_str(&w, nm, nl);
                sy_jw_key(&w, "server_label");
                sy_jw_cstr(&w, m->e[t->entry].label);
                sy_jw_end(&w);
                continue;
            }
            sy_jw_node(&w, d, it);
        }
        sy_jw_end(&w);
        struct edit ed[1] = {{"output", out.p, out.len, 0}};
        if (w.err || rebuild(body->p, body->len, ed, 1, a, &nb) != 0) {
            sy_buf_free(&out);
            sy_buf_free(&nb);
            return refuse(c, 500, "internal_server_error", NULL, "switchyard: the answer cannot be built");
        }
        sy_buf_free(&out);
    } else {
        /* provider_specific_fields on each choice's message, spliced before its closing brace */
        uint32_t ch = sy_jdom_top(d, "choices");
        size_t from = 0;
        for (uint32_t e = sy_jdom_kind(d, ch) == 'a' ? sy_jdom_first(d, ch) : 0; e; e = sy_jdom_next(d, e)) {
            uint32_t msg = sy_jdom_member(d, e, "message");
            if (sy_jdom_kind(d, msg) != 'o')
                continue;
            size_t close = d->n[msg].off + d->n[msg].len - 1;
            sy_buf_append(&nb, body->p + from, close - from);
            if (d->n[msg].kids)
                SY_BUF_LIT(&nb, ",");
            SY_BUF_LIT(&nb, "\"provider_specific_fields\":{\"mcp_list_tools\":");
            sy_buf_append(&nb, m->listitems.p, m->listitems.len);
            if (m->callitems.len) {
                SY_BUF_LIT(&nb, ",\"mcp_tool_calls\":[");
                sy_buf_append(&nb, m->callitems.p, m->callitems.len);
                SY_BUF_LIT(&nb, "],\"mcp_call_results\":[");
                sy_buf_append(&nb, m->results.p, m->results.len);
                SY_BUF_LIT(&nb, "]");
            }
            SY_BUF_LIT(&nb, "}");
            from = close;
        }
        sy_buf_append(&nb, body->p + from, body->len - from);
    }
    if (sy_buf_failed(&nb)) {
        sy_buf_free(&nb);
        return refuse(c, 500, "internal_server_error", NULL, "switchyard: the answer cannot be built");
    }
    sy_buf_free(body);
    *body = nb;
    if (m->stream)
        return final_stream(c, m, body);
    return SY_OK;
}

/* The follow-up request: the conversation so far, the model's calls and their results. */
static int follow_up(struct sy_call *c, struct mt *m)
{
    struct sy_arena *a = &c->req->arena;
    const char *base = c->opt.fwd_body ? c->opt.fwd_body : c->req->body.p;
    size_t bn = c->opt.fwd_body ? c->opt.fwd_len : c->req->body.len;
    struct sy_jdoc req, ans;
    const struct sy_buf *up = &c->up.up_body;
    if (sy_jdom_parse(&req, base, bn, a, 0) != 0 || sy_jdom_parse(&ans, up->p, up->len, a, 0) != 0)
        return -1;
    struct sy_buf conv;
    sy_buf_init(&conv, MT_BODY_MAX);
    struct sy_jw w;
    sy_jw_init(&w, &conv);
    sy_jw_arr(&w);
    if (!m->chat) {
        uint32_t in = sy_jdom_top(&req, "input");
        if (sy_jdom_kind(&req, in) == 'a') {
            for (uint32_t e = sy_jdom_first(&req, in); e; e = sy_jdom_next(&req, e))
                sy_jw_node(&w, &req, e);
        } else if (sy_jdom_kind(&req, in) == 's') {
            sy_jw_obj(&w);
            sy_jw_key(&w, "type");
            sy_jw_cstr(&w, "message");
            sy_jw_key(&w, "role");
            sy_jw_cstr(&w, "user");
            sy_jw_key(&w, "content");
            sy_jw_node(&w, &req, in);
            sy_jw_end(&w);
        }
        uint32_t out = sy_jdom_top(&ans, "output"); /* every output item goes back (reasoning items too) */
        for (uint32_t e = sy_jdom_kind(&ans, out) == 'a' ? sy_jdom_first(&ans, out) : 0; e; e = sy_jdom_next(&ans, e))
            sy_jw_node(&w, &ans, e);
        for (unsigned i = 0; i < m->nk; i++) {
            const struct mcall *k = &m->k[i];
            sy_jw_obj(&w);
            sy_jw_key(&w, "type");
            sy_jw_cstr(&w, "function_call_output");
            sy_jw_key(&w, "call_id");
            sy_jw_str(&w, k->call_id, k->call_id_len);
            sy_jw_key(&w, "output");
            sy_jw_cstr(&w, k->output);
            sy_jw_end(&w);
        }
    } else {
        uint32_t msgs = sy_jdom_top(&req, "messages");
        for (uint32_t e = sy_jdom_kind(&req, msgs) == 'a' ? sy_jdom_first(&req, msgs) : 0; e; e = sy_jdom_next(&req, e))
            sy_jw_node(&w, &req, e);
        uint32_t msg = sy_jdom_member(&ans, sy_jdom_first(&ans, sy_jdom_top(&ans, "choices")), "message");
        sy_jw_obj(&w);
        sy_jw_key(&w, "role");
        sy_jw_cstr(&w, "assistant");
        sy_jw_key(&w, "content");
        uint32_t content = sy_jdom_member(&ans, msg, "content");
        sy_jw_node(&w, &ans, content);
        sy_jw_key(&w, "tool_calls");
        sy_jw_arr(&w);
        for (unsigned i = 0; i < m->nk; i++) {
            const struct mcall *k = &m->k[i];
            chat_tool_call(&w, k);
        }
        sy_jw_end(&w);
        sy_jw_end(&w);
        for (unsigned i = 0; i < m->nk; i++) {
            const struct mcall *k = &m->k[i];
            sy_jw_obj(&w);
            sy_jw_key(&w, "role");
            sy_jw_cstr(&w, "tool");
            sy_jw_key(&w, "tool_call_id");
            sy_jw_str(&w, k->call_id, k->call_id_len);
            sy_jw_key(&w, "content");
            sy_jw_cstr(&w, k->output);
            sy_jw_end(&w);
        }
    }
    sy_jw_end(&w);
    /* the last round goes without tools: the model must answer in text (LiteLLM) */
    int last = m->rounds + 1 >= (unsigned)c->g->cfg->mcp_max_rounds;
    struct edit ed[4] = {{m->chat ? "messages" : "input", conv.p, conv.len, 0},
                         {"tool_choice", NULL, 0, 0},
                         {"tools", NULL, 0, 0},
                         {"parallel_tool_calls", NULL, 0, 0}};
    struct sy_buf nb;
    sy_buf_init(&nb, MT_BODY_MAX);
    int rc = w.err ? -1 : rebuild(base, bn, ed, last ? 4 : 2, a, &nb);
    sy_buf_free(&conv);
    if (rc == 0 && !sy_buf_failed(&nb)) {
        m->rounds++;
        m->nk = 0;
        m->phase = 0;
        rc = sy_call_redo(c, nb.p, nb.len); /* may answer before it returns: c is not touched after */
    } else {
        rc = -1;
    }
    sy_buf_free(&nb);
    return rc;
}

/* A round's calls ran: the model is asked again. */
static void round_done(struct sy_call *c, struct mt *m)
{
    note_calls(m);
    if (follow_up(c, m) != 0)
        refuse(c, 500, "internal_server_error", NULL, "switchyard: the MCP tool results cannot be sent to the model");
}

static int mt_answer(struct sy_call *c, struct sy_buf *body)
{
    struct mt *m = mt_of(c);
    if (!m || m->phase)
        return SY_OK;
    struct sy_arena *a = &c->req->arena;
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, body->p ? body->p : "", body->len, a, 0) != 0 || sy_jdom_type(&d, 0) != 'o')
        return SY_OK; /* not JSON: as it is */
    /* the model's calls of MCP tools (m->k) and of the client's own tools */
    unsigned other = 0;
    m->nk = 0;
    if (!m->chat) {
        uint32_t out = sy_jdom_top(&d, "output");
        for (uint32_t it = sy_jdom_kind(&d, out) == 'a' ? sy_jdom_first(&d, out) : 0; it; it = sy_jdom_next(&d, it)) {
            uint32_t ty = sy_jdom_member(&d, it, "type");
            if (!sy_jdom_str_eq(&d, ty, "function_call")) {
                other += sy_jdom_str_eq(&d, ty, "custom_tool_call");
                continue;
            }
            struct mcall k = {.m = m};
            k.name = sy_jdom_str(&d, sy_jdom_member(&d, it, "name"), a, &k.nlen);
            k.call_id = sy_jdom_str(&d, sy_jdom_member(&d, it, "call_id"), a, &k.call_id_len);
            k.args = sy_jdom_str(&d, sy_jdom_member(&d, it, "arguments"), a, &k.alen);
            const struct mtool *t = k.name ? tool_find(m, k.name, k.nlen) : NULL;
            if (!t || !k.call_id || m->nk >= MT_MAX_CALLS) {
                other++;
                continue;
            }
            if (!k.args)
                k.args = "{}", k.alen = 2;
            k.entry = t->entry;
            m->k[m->nk++] = k;
        }
    } else {
        uint32_t ch = sy_jdom_top(&d, "choices");
        uint32_t msg = sy_jdom_member(&d, sy_jdom_kind(&d, ch) == 'a' ? sy_jdom_first(&d, ch) : 0, "message");
        uint32_t tcs = sy_jdom_member(&d, msg, "tool_calls");
        for (uint32_t tc = sy_jdom_kind(&d, tcs) == 'a' ? sy_jdom_first(&d, tcs) : 0; tc; tc = sy_jdom_next(&d, tc)) {
            uint32_t fn = sy_jdom_member(&d, tc, "function");
            struct mcall k = {.m = m};
            k.name = sy_jdom_str(&d, sy_jdom_member(&d, fn, "name"), a, &k.nlen);
            k.call_id = sy_jdom_str(&d, sy_jdom_member(&d, tc, "id"), a, &k.call_id_len);
            k.args = sy_jdom_str(&d, sy_jdom_member(&d, fn, "arguments"), a, &k.alen);
            const struct mtool *t = k.name ? tool_find(m, k.name, k.nlen) : NULL;
            if (!t || !k.call_id || m->nk >= MT_MAX_CALLS) {
                other++;
                continue;
            }
            if (!k.args)
                k.args = "{}", k.alen = 2;
            k.entry = t->entry;
            m->k[m->nk++] = k;
        }
    }
    if (!m->nk || other)
        return final_answer(c, m, body, &d, NULL);
    int approve = 0;
    for (unsigned i = 0; i < m->nk; i++)
        approve |= needs_approval(m, &m->k[i]);
    if (approve) {
        if (m->chat) /* chat has no approval items: the calls go to the client (LiteLLM) */
            return final_answer(c, m, body, &d, NULL);
        const char **ids = sy_arena_alloc(a, m->nk * sizeof *ids);
        for (unsigned i = 0; ids && i < m->nk; i++)
            if (!(ids[i] = approval_id(m, &m->k[i])))
                ids = NULL;
        if (!ids)
            return refuse(c, 500, "internal_server_error", NULL, "switchyard: the approval request cannot be built");
        return final_answer(c, m, body, &d, ids);
    }
    /* run them all, then ask again */
    m->phase = 3;
    m->waiting = 1;
    c->req->on_abort = sy_call_wait_abort;
    calls_start(c, m);
    if (!m->pending) {
        m->waiting = 0;
        c->req->on_abort = NULL;
        round_done(c, m);
    }
    return SY_AGAIN;
}

static void mt_conf_print(const struct sy_gwconf *g, FILE *out)
{
    if (g->cfg->mcp_servers || g->db)
        fprintf(out, "mcp tools in chat and responses: on (at most %d tool rounds per call)\n", g->cfg->mcp_max_rounds);
}

const struct sy_stage sy_stage_mcp_tools = {
    .name = "mcp_tools",
    .routes = SY_RKB(SY_RK_CHAT) | SY_RKB(SY_RK_RESPONSES),
    .enabled = mt_enabled,
    .run = mt_run,
    .answer = mt_answer,
    .slot = &mt_slot,
    .conf_print = mt_conf_print,
};
