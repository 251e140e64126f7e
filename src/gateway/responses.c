/* responses.c - the Responses API routes outside the upstream stage.
 *
 * POST /v1/responses runs the chat pipeline (parse -> responses_prev -> route
 * -> limits -> reserve -> upstream) in the Responses dialect
 * (dialects/responses.c), which xlate.c composes with the deployment:
 *
 *   deployment provider                 request                          answer
 *   openai, azure, xai, litellm_proxy   native: client body, model (and  bytes, the response id
 *                                       previous_response_id) replaced   encoded (responses/ids.c)
 *   other OpenAI-compatible             sy_resp_to_openai -> chat        chat -> response / events
 *   translating adapter (anthropic..)   sy_resp_to_openai -> encode      decode -> chat -> response
 *
 * This file: the previous_response_id stage (decode it; pin the deployment it
 * names; for a translated conversation load it from the store, so the request
 * can be translated with the turns before it), the by-id routes (GET, DELETE,
 * input_items, cancel: to the deployment for native ids, from the store for
 * translated ones), and saving a translated response (store.h).
 *
 * What a stored response may be read by: the virtual key that made it, or an
 * admin; others get 404, as for an id that does not exist.
 *
 * Native responses live at the provider, in an account every key shares: the
 * id the upstream hands out is recorded with its maker (responses/owners.h,
 * kind "response") as the answer passes (sy_responses_native_made), and a
 * non-admin may read, delete, cancel or continue (previous_response_id) only
 * a native response that is its own (same key, or same user_id). An id that
 * is neither a readable stored conversation nor the caller's native response
 * is "not found" (404 by id, 400 for previous_response_id), also when it was
 * made before switchyard recorded owners or outside the gateway.
 */
#include "gateway/gateway.h"
#include "gateway/stage.h"

#include <http_parser.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/errors.h"
#include "gateway/offload.h"
#include "gateway/xlate.h"
#include "http/reply.h"
#include "http/server.h"
#include "keys/keys.h"
#include "store/dbpool.h"
#include "responses/owners.h"
#include "responses/responses.h"
#include "responses/store.h"

int sy_resp_native(const struct sy_drt *d)
{
    return sy_xlate_native(d, &sy_dialect_responses);
}

static struct sy_drt *drt_by_id(const struct sy_gwconf *g, const char *id)
{
    if (!id[0])
        return NULL;
    for (size_t i = 0; i < g->ndrts; i++)
        if (g->drts[i].d->id && strcmp(g->drts[i].d->id, id) == 0)
            return &g->drts[i];
    return NULL;
}

/* An id that may go into an upstream URL or be looked up: 1..256 of
 * [A-Za-z0-9_-] (OpenAI's and ours are "resp_<hex>"). Anything else ('/', '.',
 * '?', '#', '%' ...) could leave /responses/ on the upstream. */
static int safe_id(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++) {
        char ch = s[n];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
              ch == '-') ||
            n >= 256)
            return 0;
    }
    return n > 0;
}

static void rcall_free(void *p)
{
    sy_buf_free(&((struct sy_rcall *)p)->items);
}

/* The worker's database port when the database is on (NULL: memory only). */
static struct sy_db_port *port(struct sy_call *c)
{
    return sy_db_enabled() ? c->w->dbport : NULL;
}

static struct sy_rcall *rcall(struct sy_call *c)
{
    if (c->rsp)
        return c->rsp;
    struct sy_rcall *rc = sy_arena_alloc(&c->req->arena, sizeof *rc);
    memset(rc, 0, sizeof *rc);
    int o = 0;
    for (int i = 0; c->call_id[i]; i++)
        if (c->call_id[i] != '-')
            rc->seed[o++] = c->call_id[i];
    rc->seed[o] = 0;
    snprintf(rc->inner, sizeof rc->inner, "resp_%s", rc->seed);
    rc->store = 1;
    sy_buf_init(&rc->items, 256u << 20);
    sy_arena_defer(&c->req->arena, rcall_free, rc);
    c->rsp = rc;
    return rc;
}

/* "[a,b]" + "[c]" -> "[a,b,c]" appended to out (arrays of JSON values as text). */
static void arr_append(struct sy_buf *out, const char *a, size_t n, int *first)
{
    while (n && (*a == ' ' || *a == '\n' || *a == '\r' || *a == '\t'))
        a++, n--;
    while (n && (a[n - 1] == ' ' || a[n - 1] == '\n' || a[n - 1] == '\r' || a[n - 1] == '\t'))
        n--;
    if (n < 2 || a[0] != '[' || a[n - 1] != ']')
        return;
    a++;
    n -= 2;
    size_t k = 0;
    while (k < n && (a[k] == ' ' || a[k] == '\n' || a[k] == '\r' || a[k] == '\t'))
        k++;
    if (k == n)
        return; /* empty */
    if (!*first)
        SY_BUF_LIT(out, ",");
    sy_buf_append(out, a, n);
    *first = 0;
}

/* The conversation a record continues: its history, its input, its output. */
static char *conversation(struct sy_call *c, const struct sy_rs_rec *rec, size_t *len)
{
    struct sy_buf b, outitems;
    sy_buf_init(&b, 256u << 20);
    sy_buf_init(&outitems, 256u << 20);
    int first = 1;
    SY_BUF_LIT(&b, "[");
    if (rec->history)
        arr_append(&b, rec->history, strlen(rec->history), &first);
    if (rec->input_items)
        arr_append(&b, rec->input_items, strlen(rec->input_items), &first);
    if (rec->response && sy_resp_output_items(rec->response, strlen(rec->response), &c->req->arena, &outitems) == 0)
        arr_append(&b, outitems.p ? outitems.p : "[]", outitems.len, &first);
    SY_BUF_LIT(&b, "]");
    char *p = sy_arena_strndup(&c->req->arena, b.p ? b.p : "[]", b.len);
    *len = b.len;
    sy_buf_free(&b);
    sy_buf_free(&outitems);
    return p;
}

/* The record may be read by this caller. */
static int may_read(const struct sy_call *c, const struct sy_rs_rec *rec)
{
    if (c->auth.is_admin || !rec->owner || !rec->owner[0])
        return 1; /* admins read everything; "" was made with auth off */
    return c->auth.hashed_key && strcmp(c->auth.hashed_key, rec->owner) == 0;
}

/* ---- POST /v1/responses: previous_response_id ------------------------------ */

static void db_down(struct sy_call *c)
{
    sy_call_error(c, 503, "api_error", NULL, "switchyard: the database holding stored responses is unreachable", NULL,
                  0);
}

static void prev_not_found(struct sy_call *c)
{
    struct sy_rcall *r = c->rsp;
    char m[800];
    snprintf(m, sizeof m, "Previous response with id '%.600s' not found.", r->prev_full ? r->prev_full : "");
    sy_call_error(c, 400, "invalid_request_error", "previous_response_id", m, NULL, 0);
}

/* A conversation is sent whole with every turn and stored with each: it is
 * bounded like a request body (max_request_size_mb), which also bounds what a
 * turn costs the loop and the database. */
static void too_large(struct sy_call *c)
{
    char m[300];
    snprintf(m, sizeof m,
             "The conversation before previous_response_id and this request (%zu bytes) exceed "
             "max_request_size_mb (%zu bytes); start a new conversation",
             c->rsp->prior_len + c->req->body.len, c->g->max_body);
    sy_call_error(c, 413, "invalid_request_error", "previous_response_id", m, NULL, 0);
}

/* The previous_response_id lookups are over: go on (or, inside the stage, let
 * it go on) or answer. */
static void prev_next(struct sy_call *c)
{
    struct sy_rcall *r = c->rsp;
    if (r->in_stage) {
        r->answered_sync = 1; /* answered before the lookup returned: the stage goes on */
        return;
    }
    if (r->too_large) {
        too_large(c);
        return;
    }
    if (r->prev_down) {
        db_down(c);
        return;
    }
    if (r->prev_denied) {
        prev_not_found(c);
        return;
    }
    sy_call_resume(c);
}

/* A lookup came back: 1 when the client went away meanwhile (the call is ended). */
static int rs_wake(struct sy_call *c)
{
    return sy_call_wait_done(c, &c->rsp->waiting);
}

/* Who the caller is, for owners.h. */
static const char *who_user(const struct sy_call *c)
{
    return c->auth.key ? c->auth.key->user_id : NULL;
}

static int owner_checked(const struct sy_call *c)
{
    return !c->auth.is_admin && c->auth.hashed_key; /* admins (and auth off) use every id */
}

static void start_wait(struct sy_call *c)
{
    struct sy_rcall *r = c->rsp;
    r->waiting = port(c) != NULL;
    if (r->waiting)
        c->req->on_abort = sy_call_wait_abort;
}

/* The native response previous_response_id names: the caller's? */
static void prev_owner(void *ud, int rc, const struct sy_own_rec *rec)
{
    struct sy_call *c = ud;
    struct sy_rcall *r = c->rsp;
    if (rs_wake(c))
        return;
    if (rc < 0)
        r->prev_down = 1; /* cannot tell: not sent anywhere */
    else
        r->prev_denied = !(rc == 0 && rec && sy_own_allows(rec, c->auth.hashed_key, who_user(c)));
    prev_next(c);
}

static void prev_loaded(void *ud, int rc, const struct sy_rs_rec *rec)
{
    struct sy_call *c = ud;
    struct sy_rcall *r = c->rsp;
    if (rs_wake(c))
        return;
    if (rc == 0 && rec && may_read(c, rec)) {
        r->prior = conversation(c, rec, &r->prior_len);
        r->prior_loaded = 1;
        if (r->prior_len + c->req->body.len > c->g->max_body)
            r->too_large = 1;
    } else if (rc < 0) {
        r->prior_error = 1;
    } else {
        r->prior_missing = 1;
        if (owner_checked(c)) { /* not a conversation of ours: a native response, if it is the caller's */
            start_wait(c);
            sy_own_get(port(c), "response", r->prev.inner, prev_owner, c);
            return;
        }
    }
    prev_next(c);
}

static int responses_prev_run(struct sy_call *c)
{
    struct sy_rcall *r = rcall(c);
    const char *b = c->req->body.p;
    r->store = c->in.scan.store.type != 'f'; /* both recorded by the parse stage's one pass (jscan.c) */
    struct sy_jspan pv = c->in.scan.previous_response_id;
    if (!pv.type || pv.type == 'z')
        return SY_OK;
    char id[600];
    if (pv.type != 's' || sy_jstr_decode(b + pv.off, pv.len, id, sizeof id) <= 0 ||
        sy_resp_id_decode(id, strlen(id), &r->prev) != 0) {
        sy_call_error(c, 400, "invalid_request_error", "previous_response_id",
                      "Invalid 'previous_response_id': expected a response id string", NULL, 0);
        return SY_DONE;
    }
    if (!safe_id(r->prev.inner)) {
        char m[700];
        snprintf(m, sizeof m, "Previous response with id '%.600s' not found.", id);
        sy_call_error(c, 400, "invalid_request_error", "previous_response_id", m, NULL, 0);
        return SY_DONE;
    }
    r->has_prev = 1;
    r->prev_full = sy_arena_strndup(&c->req->arena, id, strlen(id));
    struct sy_drt *d = r->prev.encoded ? drt_by_id(c->g, r->prev.model_id) : NULL;
    r->in_stage = 1;
    r->answered_sync = 0;
    if (d && sy_resp_native(d)) {
        c->pin = d; /* the deployment keeps the conversation itself; used when the group holds it (proxy.c) */
        if (!owner_checked(c)) {
            r->in_stage = 0;
            return SY_OK;
        }
        start_wait(c); /* ... and may be asked only for the caller's own */
        sy_own_get(port(c), "response", r->prev.inner, prev_owner, c);
    } else {
        /* a translated conversation is in the shared store: any deployment of the group continues it, so
         * the router picks as usual (a forged id cannot steer past cooldowns and limits) */
        start_wait(c);
        sy_rs_get(port(c), r->prev.inner, prev_loaded, c);
    }
    r->in_stage = 0;
    if (!r->answered_sync)
        return SY_AGAIN; /* prev_loaded / prev_owner resume the pipeline */
    if (r->too_large) {
        too_large(c);
        return SY_DONE;
    }
    if (r->prev_down) {
        db_down(c);
        return SY_DONE;
    }
    if (r->prev_denied) {
        prev_not_found(c);
        return SY_DONE;
    }
    return SY_OK; /* answered at once (memory hit, or no database) */
}

/* A native response the upstream just made (its JSON; event: a stream event's
 * data, with the response under "response"): record its id as the caller's,
 * once per call. */
void sy_responses_native_made(struct sy_call *c, const char *json, size_t n, int event)
{
    struct sy_rcall *r = c->rsp;
    if (c->kind != SY_RK_RESPONSES || !r || r->native_recorded || !c->auth.hashed_key || !json || !n)
        return;
    struct sy_jspan top = {0, n, 'o'};
    while (top.len && (json[top.off] == ' ' || json[top.off] == '\n' || json[top.off] == '\r' || json[top.off] == '\t'))
        top.off++, top.len--;
    if (!top.len || json[top.off] != '{')
        return;
    struct sy_jscan sc;
    if (sy_jscan(json + top.off, top.len, &sc) != 0 || !sc.top_is_object)
        return;
    struct sy_jspan in = event ? sy_jscan_member(json, top, "response") : top;
    if (in.type != 'o')
        return; /* an event without the response object (deltas ...) */
    struct sy_jspan id = sy_jscan_member(json, in, "id");
    char inner[300];
    if (id.type != 's' || sy_jstr_decode(json + id.off, id.len, inner, sizeof inner) <= 0 || !safe_id(inner))
        return;
    struct sy_own_rec rec = {.kind = "response",
                             .id = inner,
                             .token = c->auth.hashed_key,
                             .user_id = who_user(c),
                             .team_id = c->auth.key ? c->auth.key->team_id : NULL};
    sy_own_put(port(c), &rec);
    r->native_recorded = 1;
}

/* ---- saving (the responses_store filter calls this with the response the
 * client gets) -------------------------------------------------------------- */

int sy_responses_storing(const struct sy_call *c)
{
    return c->rsp && c->rsp->store && c->drt;
}

void sy_responses_save(struct sy_call *c, const char *resp, size_t n)
{
    struct sy_rcall *r = c->rsp;
    if (!r || !r->store || !c->drt)
        return;
    struct sy_rs_rec rec = {0};
    rec.id = r->inner;
    rec.model_id = (char *)(c->drt->d->id ? c->drt->d->id : "");
    rec.model = c->in.model ? c->in.model : (char *)"";
    /* the virtual key's hash; "admin" for the master key (then only admins read it); "" when auth is off */
    rec.owner = (char *)(c->auth.hashed_key ? c->auth.hashed_key : c->g->master_key ? "admin" : "");
    rec.response = sy_arena_strndup(&c->req->arena, resp, n);
    rec.input_items = r->items.p ? r->items.p : (char *)"[]";
    rec.history = r->prior ? r->prior : (char *)"[]";
    rec.created_at = (double)r->created_at;
    sy_rs_put(port(c), &rec);
}

/* ---- GET / DELETE /v1/responses/{id}, input_items, cancel ------------------ */

enum { OP_GET, OP_DELETE, OP_ITEMS, OP_CANCEL };

static void reply_json(struct sy_call *c, int status, const char *body, size_t n)
{
    struct sy_buf h;
    sy_buf_init(&h, 16384);
    sy_call_headers(c, &h, 0);
    sy_call_account(c, status);
    sy_resp_simple(c->req, status, h.p, h.len, "application/json", body, n);
    sy_buf_free(&h);
}

static void not_found(struct sy_call *c)
{
    char msg[700];
    snprintf(msg, sizeof msg, "Response with id '%.500s' not found.", c->rsp->full_id);
    sy_call_error(c, 404, "invalid_request_error", NULL, msg, NULL, 0);
}

/* The "id" of the first and of the last item of a JSON array (items). */
static void edge_ids(struct sy_call *c, const char *items, char *first, char *last, size_t cap)
{
    struct sy_jdoc d;
    first[0] = last[0] = 0;
    if (sy_jdom_parse(&d, items, strlen(items), &c->req->arena, 0) != 0 || sy_jdom_type(&d, 0) != 'a')
        return;
    for (uint32_t it = sy_jdom_first(&d, 0); it; it = sy_jdom_next(&d, it)) {
        uint32_t id = sy_jdom_get(&d, it, "id");
        size_t l = 0;
        const char *s = id ? sy_jdom_str(&d, id, &c->req->arena, &l) : NULL;
        if (!s || l >= cap)
            continue;
        if (!first[0])
            memcpy(first, s, l + 1);
        memcpy(last, s, l + 1);
    }
}

static void id_loaded(void *ud, int rc, const struct sy_rs_rec *rec)
{
    struct sy_call *c = ud;
    struct sy_rcall *r = c->rsp;
    if (r->waiting) {
        r->waiting = 0;
        c->req->on_abort = NULL;
        if (c->aborted) {
            sy_call_account(c, 499);
            sy_resp_end(c->req);
            return;
        }
    }
    if (rc < 0) {
        sy_call_error(c, 503, "api_error", NULL, "switchyard: the database holding stored responses is unreachable",
                      NULL, 0);
        return;
    }
    if (r->id_op == OP_DELETE + 100) { /* sy_rs_del's answer */
        if (rc != 0) {
            not_found(c);
            return;
        }
        struct sy_buf b;
        sy_buf_init(&b, 1 << 20);
        SY_BUF_LIT(&b, "{\"id\":\"");
        sy_buf_json_escape(&b, r->full_id, strlen(r->full_id));
        SY_BUF_LIT(&b, "\",\"object\":\"response\",\"deleted\":true}");
        reply_json(c, 200, b.p, b.len);
        sy_buf_free(&b);
        return;
    }
    if (rc != 0 || !rec || !may_read(c, rec)) {
        not_found(c);
        return;
    }
    if (r->id_op == OP_GET) {
        reply_json(c, 200, rec->response, strlen(rec->response));
        return;
    }
    if (r->id_op == OP_CANCEL) {
        sy_call_error(c, 400, "invalid_request_error", NULL,
                      "Cannot cancel a response that was not created with background=true.", NULL, 0);
        return;
    }
    if (r->id_op == OP_DELETE) { /* the owner was checked: now remove it */
        r->waiting = port(c) != NULL;
        if (r->waiting)
            c->req->on_abort = sy_call_wait_abort;
        r->id_op = OP_DELETE + 100;
        sy_rs_del(port(c), r->rid.inner, id_loaded, c);
        return;
    }
    /* input_items */
    const char *items = rec->input_items ? rec->input_items : "[]";
    char first[256], last[256];
    edge_ids(c, items, first, last, sizeof first);
    struct sy_buf b;
    sy_buf_init(&b, 256u << 20);
    SY_BUF_LIT(&b, "{\"object\":\"list\",\"data\":");
    sy_buf_puts(&b, items);
    SY_BUF_LIT(&b, ",\"first_id\":");
    if (first[0]) {
        SY_BUF_LIT(&b, "\"");
        sy_buf_json_escape(&b, first, strlen(first));
        SY_BUF_LIT(&b, "\",\"last_id\":\"");
        sy_buf_json_escape(&b, last, strlen(last));
        SY_BUF_LIT(&b, "\"");
    } else {
        SY_BUF_LIT(&b, "null,\"last_id\":null");
    }
    SY_BUF_LIT(&b, ",\"has_more\":false}");
    reply_json(c, 200, b.p, b.len);
    sy_buf_free(&b);
}

/* The owner of a native response asked for by id (prev_down / prev_denied
 * serve as the by-id route's flags too). */
static void id_owner(void *ud, int rc, const struct sy_own_rec *rec)
{
    struct sy_call *c = ud;
    struct sy_rcall *r = c->rsp;
    if (rs_wake(c))
        return;
    r->prev_down = rc < 0;
    r->prev_denied = rc >= 0 && !(rc == 0 && rec && sy_own_allows(rec, c->auth.hashed_key, who_user(c)));
    if (r->in_stage) {
        r->answered_sync = 1;
        return;
    }
    if (r->prev_down)
        db_down(c);
    else if (r->prev_denied)
        not_found(c);
    else
        sy_call_resume(c);
}

static int responses_id_run(struct sy_call *c)
{
    struct sy_rcall *r = rcall(c);
    struct sy_req *req = c->req;
    struct sy_str p = req->path;
    r->id_op = req->method == HTTP_DELETE                                    ? OP_DELETE
               : p.n > 12 && memcmp(p.p + p.n - 12, "/input_items", 12) == 0 ? OP_ITEMS
               : p.n > 7 && memcmp(p.p + p.n - 7, "/cancel", 7) == 0         ? OP_CANCEL
                                                                             : OP_GET;
    struct sy_str raw = c->in.path_model;
    char dec[sizeof r->full_id]; /* percent-decoded ('=' arrives as %3D) */
    size_t dn = sy_pct_decode(raw.p ? raw.p : "", raw.n, dec, sizeof dec, 0);
    struct sy_str id = {dec, dn};
    if (!id.n || raw.n >= sizeof r->full_id || memchr(dec, 0, dn) || sy_resp_id_decode(id.p, id.n, &r->rid) != 0 ||
        !safe_id(r->rid.inner)) {
        sy_call_error(c, 404, "invalid_request_error", NULL, "Response not found.", NULL, 0);
        return SY_DONE;
    }
    if (req->query.n > 800 || memchr(req->query.p ? req->query.p : "", '#', req->query.n)) {
        sy_call_error(c, 400, "invalid_request_error", NULL, "Invalid query string", NULL, 0);
        return SY_DONE;
    }
    memcpy(r->full_id, id.p, id.n);
    r->full_id[id.n] = 0;
    c->in.path_model = SY_STR_NULL; /* not a model name */
    struct sy_drt *d = r->rid.encoded ? drt_by_id(c->g, r->rid.model_id) : NULL;
    if (!d && !r->rid.encoded) { /* an OpenAI id we did not encode: the first native deployment, if any */
        for (size_t i = 0; i < c->g->ndrts && !d; i++)
            if (sy_resp_native(&c->g->drts[i]))
                d = &c->g->drts[i];
    }
    if (d && sy_resp_native(d)) {
        const struct sy_group *gr = sy_gwconf_group_of(c->g, d);
        if (c->auth.key && gr) { /* a virtual key reads only what its models allow */
            struct sy_check_err e;
            if (sy_keys_check_model(c->auth.key, gr->name, sy_group_access_groups, c->g, &e) != 0) {
                not_found(c);
                return SY_DONE;
            }
        }
        c->pin = d;
        c->group = c->req_group = gr;
        c->in.model = gr ? (char *)gr->name : (char *)"";
        c->rt.input_tokens = -1;
        c->opt.num_retries_req = -1;
        c->opt.timeout_req = c->opt.stream_timeout_req = -1;
        c->rt.fb_kind = -1;
        c->opt.disable_fallbacks = 1;
        if (!owner_checked(c))
            return SY_OK; /* the upstream stage, the native shortcut */
        /* a native response in the account every key shares: only the caller's own */
        r->in_stage = 1;
        r->answered_sync = 0;
        start_wait(c);
        sy_own_get(port(c), "response", r->rid.inner, id_owner, c);
        r->in_stage = 0;
        if (!r->answered_sync)
            return SY_AGAIN;
        if (r->prev_down || r->prev_denied) {
            r->prev_down ? db_down(c) : not_found(c);
            return SY_DONE;
        }
        return SY_OK;
    }
    r->waiting = port(c) != NULL;
    if (r->waiting)
        req->on_abort = sy_call_wait_abort;
    sy_rs_get(port(c), r->rid.inner, id_loaded, c);
    return SY_DONE; /* id_loaded answers */
}

/* ---- the built-in mock model (mock.c) ---------------------------------------- */

int sy_responses_mock_chat(struct sy_call *c, const char **body, size_t *n)
{
    struct sy_rcall *r = rcall(c);
    if (r->has_prev && !r->prior_loaded) {
        char m[800];
        snprintf(m, sizeof m, "Previous response with id '%.600s' not found.", r->prev_full ? r->prev_full : "");
        sy_call_error(c, r->prior_error ? 503 : 400, "invalid_request_error", "previous_response_id", m, NULL, 0);
        return SY_DONE;
    }
    if (!r->chat) {
        struct sy_xerr e = {0};
        struct sy_buf chat;
        sy_buf_init(&chat, 256u << 20);
        r->have_req = sy_jdom_parse(&r->req, c->req->body.p, c->req->body.len, &c->req->arena, 0) == 0;
        sy_buf_reset(&r->items);
        struct sy_resp_tx tx = {0}; /* the built-in mock searches nothing */
        if (!r->have_req ||
            sy_resp_to_chat(&r->req, r->prior, r->prior_len, r->seed, &tx, &c->req->arena, &chat, &r->items, &e) != 0) {
            sy_buf_free(&chat);
            sy_call_error(c, e.status ? e.status : 400, "invalid_request_error", e.param[0] ? e.param : NULL,
                          e.message[0] ? e.message : "Invalid JSON payload", NULL, 0);
            return SY_DONE;
        }
        memcpy(r->rep.dropped, tx.dropped, sizeof r->rep.dropped);
        r->chat = sy_arena_strndup(&c->req->arena, chat.p ? chat.p : "{}", chat.len);
        r->chat_len = chat.len;
        sy_buf_free(&chat);
    }
    *body = r->chat;
    *n = r->chat_len;
    return 0;
}

void sy_responses_from_mock(struct sy_call *c, int stream, const struct sy_buf *oai, struct sy_buf *out)
{
    struct sy_rcall *r = rcall(c);
    int have_req = r->have_req;
    struct sy_jdoc req = r->req;
    r->created_at = (int64_t)time(NULL);
    const struct sy_deployment *d = c->drt->d;
    if (sy_resp_id_encode(d->provider ? d->provider : "mock", d->id, r->inner, strlen(r->inner), r->id, sizeof r->id) !=
        0)
        snprintf(r->id, sizeof r->id, "%s", r->inner);
    struct sy_resp_meta m = {.id = r->id,
                             .model = c->in.model ? c->in.model : "",
                             .created_at = r->created_at,
                             .id_seed = r->seed,
                             .req = have_req ? &req : NULL,
                             .previous_response_id = r->has_prev ? r->prev_full : NULL};
    if (!stream) {
        sy_resp_from_openai(oai->p, oai->len, &m, &c->req->arena, out);
        return;
    }
    struct sy_respstream s;
    sy_resp_stream_init(&s, &m);
    const char *p = oai->p, *e2 = oai->p + oai->len;
    while (p < e2) {
        const char *nl = memmem(p, (size_t)(e2 - p), "\n\n", 2);
        if (!nl)
            break;
        if (nl - p > 6 && memcmp(p, "data: ", 6) == 0)
            sy_resp_stream_chunk(&s, p + 6, (size_t)(nl - p - 6), out);
        p = nl + 2;
    }
    sy_resp_stream_end(&s, out);
    sy_resp_stream_free(&s);
}

/* Hosted tools the translated deployment could not run and the request went
 * without (request.c drops them rather than failing the turn). */
static void responses_headers(const struct sy_call *c, struct sy_buf *b)
{
    if (!c->rsp || !c->rsp->rep.dropped[0])
        return;
    SY_BUF_LIT(b, "x-switchyard-dropped-tools: ");
    sy_buf_puts(b, c->rsp->rep.dropped);
    SY_BUF_LIT(b, "\r\n");
}

const struct sy_stage sy_stage_responses_prev = {
    .name = "responses_prev",
    .routes = SY_RKB(SY_RK_RESPONSES),
    .run = responses_prev_run,
    .headers = responses_headers,
};

const struct sy_stage sy_stage_responses_id = {
    .name = "responses_id",
    .routes = SY_RKB(SY_RK_RESPONSES_ID),
    .run = responses_id_run,
};
