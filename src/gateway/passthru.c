/* passthru.c - the OpenAI endpoints switchyard forwards without translating:
 * images, audio, moderations, rerank (SY_RK_PASSTHRU: routed by model like
 * chat, with retries, fallbacks, limits and spend), files and batches
 * (SY_RK_FILES: to one OpenAI/Azure deployment). proxy.c sends them in raw
 * mode: the body goes out with only its model replaced, the answer comes back
 * byte for byte with the upstream's Content-Type, streamed as it arrives (an
 * audio file is never held whole).
 *
 *   client route (also without /v1)   body        upstream path (OpenAI-compatible)    Azure
 *   POST /v1/images/generations       JSON        {base}/images/generations deployments/{m}/images/generations POST
 * /v1/images/edits             multipart   {base}/images/edits                  deployments/{m}/images/edits POST
 * /v1/audio/speech             JSON        {base}/audio/speech  (binary answer) deployments/{m}/audio/speech POST
 * /v1/audio/transcriptions     multipart   {base}/audio/transcriptions          deployments/{m}/audio/transcriptions
 *   POST /v1/audio/translations       multipart   {base}/audio/translations deployments/{m}/audio/translations POST
 * /v1/moderations              JSON        {base}/moderations                   (not on Azure: 400) POST /v1/rerank,
 * /rerank          JSON        {base}/rerank; cohere: {cohere base}/v1/rerank POST /v2/rerank                   JSON
 * {base}/rerank; cohere: {cohere base}/v2/rerank /v1/files[/{id}[/content]]        multipart / none   {base}/files...
 * openai/files...?api-version= /v1/batches[/{id}[/cancel]]       JSON / none        {base}/batches...
 * openai/batches...?api-version=
 *
 * {base} is the deployment's OpenAI base ("https://api.openai.com/v1"). The
 * model of a multipart body is its "model" field, replaced in place by
 * splicing (http/multipart.h). /v1/moderations without a model goes to the
 * first group whose model_info.mode is "moderation", else the first OpenAI
 * deployment's group. Files and batches go to the group named by the `model`
 * query parameter or the x-litellm-model header, else to the first OpenAI or
 * Azure deployment of the config; their ids pass through unchanged (one
 * OpenAI account per gateway, as LiteLLM's default files_settings). A
 * virtual key uses them only on a group it may call, under its budgets and
 * limits; a key limited to some models cannot create batches (their
 * requests name their own models in a file switchyard does not read).
 *
 * OWNERSHIP of files and batches (responses/owners.h: same key, or same
 * user_id as LiteLLM's managed files; admins everything). The provider account
 * is shared by every key, so the gateway records who created what and checks
 * it on each call:
 *
 *   call                         before the upstream                 after a 2xx (held whole: raw_whole)
 *   POST /files                  -                                   record "id" (file)
 *   POST /batches                input_file_id must be the caller's  record "id" (batch), output/error files
 *   GET|DELETE /files/{id}[...]  the caller's, else 404              -
 *   GET /batches/{id}, cancel    the caller's, else 404              record output/error files (the batch's owner)
 *   GET /files, GET /batches     the caller's ids (one DB read)      "data" filtered to them
 *   chat, Responses with file_id every "file_id" the caller's, else 400 (sy_stage_file_refs)
 *
 * An id not recorded (made before, or outside the gateway) is a 404 for
 * everyone but admins: the same answer as a foreign one, never a 403.
 */
#include "gateway/gateway.h"
#include "gateway/slot.h"
#include "gateway/stage.h"

#include <http_parser.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "gateway/offload.h"
#include "http/multipart.h"
#include "http/reply.h"
#include "http/server.h"
#include "keys/keys.h"
#include "gateway/xlate.h"
#include "providers/adapter.h"
#include "providers/jdom.h"
#include "responses/owners.h"
#include "store/dbpool.h"

enum sy_pass_op {
    PASS_IMAGES_GEN = 1,
    PASS_IMAGES_EDIT,
    PASS_SPEECH,
    PASS_TRANSCRIBE,
    PASS_TRANSLATE,
    PASS_MODERATION,
    PASS_RERANK_V1,
    PASS_RERANK_V2,
    PASS_FILES,
    PASS_BATCHES,
};

struct op {
    const char *route; /* after "/v1" (or "/v2") */
    int op;
    int multipart;         /* the body is multipart/form-data */
    int azure_dep;         /* Azure: under /openai/deployments/{m}/ */
    const char *mode;      /* model_info.mode of its groups (for the default pick) */
    const char *call_type; /* LiteLLM's call_type (spend logs) */
};

static const struct op ops[] = {
    {"/images/generations", PASS_IMAGES_GEN, 0, 1, "image_generation", "aimage_generation"},
    {"/images/edits", PASS_IMAGES_EDIT, 1, 1, "image_edit", "aimage_edit"},
    {"/audio/speech", PASS_SPEECH, 0, 1, "audio_speech", "aspeech"},
    {"/audio/transcriptions", PASS_TRANSCRIBE, 1, 1, "audio_transcription", "atranscription"},
    {"/audio/translations", PASS_TRANSLATE, 1, 1, "audio_transcription", "atranscription"},
    {"/moderations", PASS_MODERATION, 0, 0, "moderation", "amoderation"},
    {"/rerank", PASS_RERANK_V1, 0, 0, "rerank", "arerank"},
};

static const struct op *find_op(struct sy_str path, int *v2)
{
    const char *p = path.p;
    size_t n = path.n;
    *v2 = 0;
    if (n >= 3 && (memcmp(p, "/v1", 3) == 0 || memcmp(p, "/v2", 3) == 0)) {
        *v2 = p[2] == '2';
        p += 3;
        n -= 3;
    }
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strlen(ops[i].route) == n && memcmp(ops[i].route, p, n) == 0)
            return &ops[i];
    return NULL;
}

const char *sy_passthru_call_type(const struct sy_call *c)
{
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (ops[i].op == c->pass.pass_op || (c->pass.pass_op == PASS_RERANK_V2 && ops[i].op == PASS_RERANK_V1))
            return ops[i].call_type;
    return c->pass.pass_op == PASS_FILES ? "afile" : c->pass.pass_op == PASS_BATCHES ? "abatch" : "pass_through";
}

static char *dupn(struct sy_call *c, const char *p, size_t n)
{
    return sy_arena_strndup(&c->req->arena, p, n);
}

/* 1 when d speaks OpenAI's API itself (no adapter, not the built-in mock). */
static int openai_compatible(const struct sy_drt *d)
{
    return d->prov && !d->ad && !(d->prov->flags & (SY_PRESET_MOCK | SY_PRESET_XLATE)) && d->url[0];
}

static int is_openai_or_azure(const struct sy_drt *d)
{
    return openai_compatible(d) && d->d->provider &&
           (strcmp(d->d->provider, "openai") == 0 || strcmp(d->d->provider, "azure") == 0);
}

/* The default group of an op without a model: model_info.mode first, else the
 * first OpenAI deployment's. */
static const struct sy_group *default_group(const struct sy_gwconf *g, const char *mode)
{
    for (size_t i = 0; i < g->ngroups; i++) {
        const struct sy_group *gr = &g->groups[i];
        if (gr->n && gr->d[0]->d->mode && strcmp(gr->d[0]->d->mode, mode) == 0)
            return gr;
    }
    for (size_t i = 0; i < g->ndrts; i++)
        if (is_openai_or_azure(&g->drts[i]))
            return sy_gwconf_group_of(g, &g->drts[i]);
    return NULL;
}

static int passthru_run(struct sy_call *c)
{
    struct sy_req *r = c->req;
    int v2;
    const struct op *op = find_op(c->in.route_path, &v2);
    if (!op) {
        sy_call_error(c, 404, "invalid_request_error", NULL, "Route not found", NULL, 0);
        return SY_DONE;
    }
    c->pass.pass_op = op->op == PASS_RERANK_V1 && v2 ? PASS_RERANK_V2 : op->op;
    c->pass.raw = 1;
    c->pass.raw_method = "POST";
    c->pass.raw_path = op->route;
    struct sy_str ct = sy_req_header(r, "content-type");
    if (ct.p)
        c->pass.raw_ctype = dupn(c, ct.p, ct.n);
    char msg[512];
    if (op->multipart) {
        const char *b;
        size_t bn, off = 0, len = 0;
        if (!ct.p || sy_multipart_boundary(ct.p, ct.n, &b, &bn) != 0) {
            snprintf(msg, sizeof msg, "%s expects a multipart/form-data body", op->route);
            sy_call_error(c, 400, "invalid_request_error", NULL, msg, NULL, 0);
            return SY_DONE;
        }
        int f = sy_multipart_field(r->body.p, r->body.len, b, bn, "model", &off, &len);
        if (f == -2) {
            sy_call_error(c, 400, "invalid_request_error", "model", "The form field 'model' is given more than once",
                          NULL, 0);
            return SY_DONE;
        }
        if (f < 0) {
            sy_call_error(c, 400, "invalid_request_error", NULL, "Invalid multipart/form-data body", NULL, 0);
            return SY_DONE;
        }
        if (f == 0 || len == 0 || len > 512)
            return sy_call_invalid_model(c, "None");
        c->pass.raw_model_off = off;
        c->pass.raw_model_len = len;
        c->in.model = dupn(c, r->body.p + off, len);
        return SY_OK;
    }
    /* JSON: the same checks as every LLM route (parse.c), the model may be absent for moderations */
    if (sy_jscan(r->body.p, r->body.len, &c->in.scan) != 0 || !c->in.scan.top_is_object) {
        sy_call_error(c, 400, "invalid_request_error", NULL, "Invalid JSON payload: expected a JSON object", NULL, 0);
        return SY_DONE;
    }
    if (c->in.scan.dup) {
        snprintf(msg, sizeof msg, "Invalid request body: duplicate key '%s'", c->in.scan.dup);
        sy_call_error(c, 400, "invalid_request_error", c->in.scan.dup, msg, NULL, 0);
        return SY_DONE;
    }
    c->pass.raw_model_json = 1;
    if (c->in.scan.model.type == 's') {
        char *m = sy_arena_alloc(&r->arena, c->in.scan.model.len + 8);
        if (sy_jstr_decode(r->body.p + c->in.scan.model.off, c->in.scan.model.len, m, c->in.scan.model.len + 8) < 0) {
            sy_call_error(c, 400, "invalid_request_error", "model", "Invalid model name", NULL, 0);
            return SY_DONE;
        }
        c->in.model = m;
        return SY_OK;
    }
    if (c->in.scan.model.type && c->in.scan.model.type != 'z')
        return sy_call_invalid_model(c, "None");
    const struct sy_group *gr = op->op == PASS_MODERATION ? default_group(c->g, op->mode) : NULL;
    if (!gr)
        return sy_call_invalid_model(c, "None");
    c->in.model = (char *)gr->name;
    return SY_OK;
}

/* ---- who may use a file or a batch ------------------------------------------- */

enum { POWN_BYID = 1, POWN_CREATE, POWN_LIST, POWN_REFS };

#define MAX_REFS 64 /* file ids one chat / Responses request may name */

struct sy_pown {
    int what;         /* POWN_* */
    const char *kind; /* "file" | "batch" */
    char id[256];     /* by id: the object's; batch create: its input_file_id */
    char **ids;       /* list: the caller's ids (sorted), filter on; NULL: no filter (admins) */
    size_t n;
    int filter;
    struct sy_own_rec owner;    /* by id: the record found (strings in the arena) */
    const char *refs[MAX_REFS]; /* POWN_REFS: the "file_id" strings of the request (arena) */
    size_t nrefs;
    int too_many;
    int have_owner;
    int in_stage, answered_sync, waiting, denied, failed;
};

/* The ownership state of a files / batches call or of a request naming file
 * ids: the files and file_refs stages' slot (never both in one pipeline). */
static int pown_slot = -1;

static struct sy_pown *pown(const struct sy_call *c)
{
    return sy_call_slot(c, pown_slot);
}

static struct sy_db_port *db_port(struct sy_call *c)
{
    return sy_db_enabled() ? c->w->dbport : NULL;
}

/* Admins (the master key, proxy_admin keys) and auth off use every object. */
static int own_admin(const struct sy_call *c)
{
    return c->auth.is_admin || !c->auth.hashed_key;
}

static const char *who_user(const struct sy_call *c)
{
    return c->auth.key ? c->auth.key->user_id : NULL;
}

static void own_deny(struct sy_call *c)
{
    struct sy_pown *o = pown(c);
    char m[400];
    if (o->what == POWN_REFS) {
        if (o->too_many)
            snprintf(m, sizeof m, "A request may name at most %d file ids", MAX_REFS);
        else
            snprintf(m, sizeof m, "No such File object: %.255s", o->id);
        sy_call_error(c, 400, "invalid_request_error", "file_id", m, NULL, 0);
    } else if (o->what == POWN_CREATE) {
        snprintf(m, sizeof m, "No such File object: %.255s", o->id);
        sy_call_error(c, 400, "invalid_request_error", "input_file_id", m, NULL, 0);
    } else if (!strcmp(o->kind, "file")) {
        snprintf(m, sizeof m, "No such File object: %.255s", o->id);
        sy_call_error(c, 404, "invalid_request_error", "id", m, NULL, 0);
    } else {
        snprintf(m, sizeof m, "No batch found with id '%.255s'.", o->id);
        sy_call_error(c, 404, "invalid_request_error", NULL, m, NULL, 0);
    }
}

static void own_failed(struct sy_call *c)
{
    sy_call_error(c, 503, "api_error", NULL,
                  "switchyard: the database recording who owns files and batches is unreachable", NULL, 0);
}

/* A lookup answered: go on, or answer. 1 when the client went away meanwhile
 * (the call is ended). */
static int own_wake(struct sy_call *c)
{
    return sy_call_wait_done(c, &pown(c)->waiting);
}

static void own_next(struct sy_call *c)
{
    struct sy_pown *o = pown(c);
    if (o->in_stage) {
        o->answered_sync = 1; /* before the lookup returned: the stage answers */
        return;
    }
    if (o->failed)
        own_failed(c);
    else if (o->denied)
        own_deny(c);
    else
        sy_call_resume(c);
}

static void own_loaded(void *ud, int rc, const struct sy_own_rec *rec)
{
    struct sy_call *c = ud;
    struct sy_pown *o = pown(c);
    if (own_wake(c))
        return;
    if (rc < 0 && !own_admin(c)) {
        o->failed = 1;
    } else if (rc == 0 && rec) {
        struct sy_arena *a = &c->req->arena;
        o->owner.kind = o->kind;
        o->owner.id = o->id;
        o->owner.token = rec->token ? sy_arena_strndup(a, rec->token, strlen(rec->token)) : NULL;
        o->owner.user_id = rec->user_id ? sy_arena_strndup(a, rec->user_id, strlen(rec->user_id)) : NULL;
        o->owner.team_id = rec->team_id ? sy_arena_strndup(a, rec->team_id, strlen(rec->team_id)) : NULL;
        o->have_owner = 1;
        o->denied = !own_admin(c) && !sy_own_allows(rec, c->auth.hashed_key, who_user(c));
    } else {
        o->denied = !own_admin(c);
    }
    own_next(c);
}

static void own_listed(void *ud, int rc, char *const *ids, size_t n)
{
    struct sy_call *c = ud;
    struct sy_pown *o = pown(c);
    if (own_wake(c))
        return;
    if (rc < 0) {
        o->failed = 1;
    } else if (n) {
        o->ids = sy_arena_alloc(&c->req->arena, n * sizeof *o->ids);
        for (size_t i = 0; i < n; i++)
            o->ids[i] = sy_arena_strndup(&c->req->arena, ids[i], strlen(ids[i]));
        o->n = n;
    }
    for (size_t i = 0; o->what == POWN_REFS && rc >= 0 && i < o->nrefs && !o->denied; i++)
        if (!sy_own_has(o->ids, o->n, o->refs[i])) {
            snprintf(o->id, sizeof o->id, "%s", o->refs[i]);
            o->denied = 1;
        }
    own_next(c);
}

/* SY_OK, SY_DONE (answered) or SY_AGAIN (a lookup resumes the call). */
static int own_wait(struct sy_call *c)
{
    struct sy_pown *o = pown(c);
    o->in_stage = 0;
    if (!o->answered_sync)
        return SY_AGAIN;
    if (o->failed) {
        own_failed(c);
        return SY_DONE;
    }
    if (o->denied) {
        own_deny(c);
        return SY_DONE;
    }
    return SY_OK;
}

static void own_begin(struct sy_call *c)
{
    struct sy_pown *o = pown(c);
    o->in_stage = 1;
    o->answered_sync = 0;
    o->waiting = db_port(c) != NULL;
    if (o->waiting)
        c->req->on_abort = sy_call_wait_abort;
}

/* The ownership step of files and batches (p: the path without /v1). */
static int own_stage(struct sy_call *c, struct sy_str p)
{
    struct sy_req *r = c->req;
    struct sy_pown *o = sy_arena_alloc(&r->arena, sizeof *o);
    memset(o, 0, sizeof *o);
    sy_call_slot(c, pown_slot) = o;
    o->kind = c->pass.pass_op == PASS_FILES ? "file" : "batch";
    /* "/files[/{id}[/content]]", "/batches[/{id}[/cancel]]" */
    const char *s1 = memchr(p.p + 1, '/', p.n - 1);
    int admin = own_admin(c);
    if (s1) {
        const char *id = s1 + 1, *end = memchr(id, '/', (size_t)(p.p + p.n - id));
        size_t n = (size_t)((end ? end : p.p + p.n) - id);
        if (n >= sizeof o->id) {
            o->what = POWN_BYID;
            memcpy(o->id, id, sizeof o->id - 1);
            own_deny(c);
            return SY_DONE;
        }
        memcpy(o->id, id, n);
        o->id[n] = 0;
        o->what = POWN_BYID;
        /* a batch's answer names its output files: they become its owner's */
        c->pass.raw_whole = c->pass.pass_op == PASS_BATCHES && r->method != HTTP_DELETE;
        own_begin(c);
        sy_own_get(db_port(c), o->kind, o->id, own_loaded, c);
        return own_wait(c);
    }
    if (r->method == HTTP_POST) {
        o->what = POWN_CREATE;
        c->pass.raw_whole = 1;
        if (admin || c->pass.pass_op != PASS_BATCHES)
            return SY_OK;
        /* a batch reads its input file: it must be the caller's */
        struct sy_jscan sc;
        if (sy_jscan(r->body.p, r->body.len, &sc) != 0 || !sc.top_is_object) {
            sy_call_error(c, 400, "invalid_request_error", NULL, "Invalid JSON payload: expected a JSON object", NULL,
                          0);
            return SY_DONE;
        }
        struct sy_jspan top = {0, r->body.len, 'o'};
        struct sy_jspan f = sy_jscan_member(r->body.p, top, "input_file_id");
        if (f.type != 's')
            return SY_OK; /* the upstream's 400 */
        if (sy_jstr_decode(r->body.p + f.off, f.len, o->id, sizeof o->id) <= 0) {
            snprintf(o->id, sizeof o->id, "%s", "?");
            own_deny(c);
            return SY_DONE;
        }
        own_begin(c);
        sy_own_get(db_port(c), "file", o->id, own_loaded, c);
        return own_wait(c);
    }
    if (r->method != HTTP_GET)
        return SY_OK;
    o->what = POWN_LIST;
    if (admin)
        return SY_OK; /* admins list everything */
    o->filter = 1;
    c->pass.raw_whole = 1;
    own_begin(c);
    sy_own_list(db_port(c), o->kind, c->auth.hashed_key, who_user(c), 100000, own_listed, c);
    return own_wait(c);
}

/* ---- file ids inside chat and Responses requests ------------------------------ */

/* Collect the string values of members named "file_id" (the key compared
 * decoded: "file\u005fid" is one too) anywhere in node i. */
static void refs_walk(struct sy_call *c, const struct sy_jdoc *d, uint32_t i, int depth)
{
    struct sy_pown *o = pown(c);
    char t = sy_jdom_type(d, i);
    if (depth > SY_JDOM_MAX_DEPTH || (t != 'o' && t != 'a'))
        return;
    if (t == 'a') {
        for (uint32_t e = sy_jdom_first(d, i); e; e = sy_jdom_next(d, e))
            refs_walk(c, d, e, depth + 1);
        return;
    }
    for (uint32_t k = sy_jdom_first(d, i); k; k = sy_jdom_next_key(d, k)) {
        uint32_t v = sy_jdom_val(k);
        if (sy_jdom_str_eq(d, k, "file_id") && sy_jdom_type(d, v) == 's') {
            size_t n = 0;
            const char *id = sy_jdom_str(d, v, &c->req->arena, &n);
            if (o->nrefs == MAX_REFS)
                o->too_many = 1;
            else if (id)
                o->refs[o->nrefs++] = id;
            continue;
        }
        refs_walk(c, d, v, depth + 1);
    }
}

static void refs_work(struct sy_call *c, void *arg)
{
    (void)arg;
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, c->req->body.p, c->req->body.len, &c->req->arena, 0) == 0)
        refs_walk(c, &d, 0, 0);
}

/* After the walk: SY_OK (nothing to check), SY_DONE, or SY_AGAIN (the caller's
 * files are being read). */
static int refs_check(struct sy_call *c)
{
    struct sy_pown *o = pown(c);
    if (o->too_many) {
        own_deny(c);
        return SY_DONE;
    }
    if (!o->nrefs)
        return SY_OK;
    own_begin(c);
    sy_own_list(db_port(c), "file", c->auth.hashed_key, who_user(c), 100000, own_listed, c);
    return own_wait(c);
}

static void refs_done(struct sy_call *c, void *arg)
{
    (void)arg;
    int rc = refs_check(c);
    if (rc == SY_OK)
        sy_call_resume(c);
    else if (rc == SY_DONE)
        return; /* answered */
    /* SY_AGAIN: own_listed resumes or answers */
}

static int file_refs_run(struct sy_call *c)
{
    struct sy_req *r = c->req;
    if (own_admin(c) || !r->body.len)
        return SY_OK;
    /* a member named file_id, or an escape that could spell one */
    if (!memmem(r->body.p, r->body.len, "file_id", 7) && !memmem(r->body.p, r->body.len, "\\u", 2))
        return SY_OK;
    struct sy_pown *o = sy_arena_alloc(&r->arena, sizeof *o);
    memset(o, 0, sizeof *o);
    o->what = POWN_REFS;
    o->kind = "file";
    sy_call_slot(c, pown_slot) = o;
    if (r->body.len >= SY_OFFLOAD_MIN_BYTES) {
        sy_call_run_work(c, r->body.len, refs_work, refs_done, NULL);
        return SY_AGAIN;
    }
    refs_work(c, NULL);
    return refs_check(c);
}

/* Record a batch object's output and error files as owner's. */
static void own_batch_files(struct sy_call *c, const struct sy_jdoc *d, uint32_t obj, const struct sy_own_rec *owner)
{
    static const char *const f[] = {"output_file_id", "error_file_id"};
    for (int i = 0; i < 2; i++) {
        uint32_t v = sy_jdom_member(d, obj, f[i]);
        size_t n = 0;
        const char *id = v ? sy_jdom_str(d, v, &c->req->arena, &n) : NULL;
        if (!id || !n || n > 255 || memchr(id, 0, n))
            continue;
        struct sy_own_rec r = *owner;
        r.kind = "file";
        r.id = id;
        r.created_at = 0;
        sy_own_put(db_port(c), &r);
    }
}

void sy_passthru_answer(struct sy_call *c)
{
    struct sy_pown *o = pown(c);
    if (!o || c->up.up_status < 200 || c->up.up_status >= 300 || !c->up.up_body.len)
        return;
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, c->up.up_body.p, c->up.up_body.len, &c->req->arena, 0) != 0 || sy_jdom_type(&d, 0) != 'o') {
        if (o->filter) { /* a list we cannot read is not shown to a tenant */
            sy_buf_reset(&c->up.up_body);
            SY_BUF_LIT(&c->up.up_body, "{\"object\":\"list\",\"data\":[],\"first_id\":null,\"last_id\":null,"
                                       "\"has_more\":false}");
        }
        return;
    }
    struct sy_own_rec me = {
        .token = c->auth.hashed_key, .user_id = who_user(c), .team_id = c->auth.key ? c->auth.key->team_id : NULL};
    if (o->what == POWN_CREATE) {
        uint32_t v = sy_jdom_top(&d, "id");
        size_t n = 0;
        const char *id = v ? sy_jdom_str(&d, v, &c->req->arena, &n) : NULL;
        if (id && n && n < 256 && !memchr(id, 0, n)) {
            struct sy_own_rec r = me;
            r.kind = o->kind;
            r.id = id;
            sy_own_put(db_port(c), &r);
        }
        if (!strcmp(o->kind, "batch"))
            own_batch_files(c, &d, 0, &me);
        return;
    }
    if (o->what == POWN_BYID) {
        if (o->have_owner)
            own_batch_files(c, &d, 0, &o->owner);
        return;
    }
    if (!o->filter)
        return;
    /* a list: only the caller's items */
    uint32_t data = sy_jdom_top(&d, "data");
    struct sy_buf b, first, last;
    sy_buf_init(&b, 256u << 20);
    sy_buf_init(&first, 4096);
    sy_buf_init(&last, 4096);
    SY_BUF_LIT(&b, "{\"object\":\"list\",\"data\":[");
    int k = 0;
    for (uint32_t it = sy_jdom_type(&d, data) == 'a' ? sy_jdom_first(&d, data) : 0; it; it = sy_jdom_next(&d, it)) {
        uint32_t v = sy_jdom_member(&d, it, "id");
        size_t n = 0;
        const char *id = v ? sy_jdom_str(&d, v, &c->req->arena, &n) : NULL;
        if (!id || !sy_own_has(o->ids, o->n, id))
            continue;
        size_t rl;
        const char *raw = sy_jdom_raw(&d, it, &rl);
        if (k++)
            SY_BUF_LIT(&b, ",");
        sy_buf_append(&b, raw, rl);
        size_t vl;
        const char *vr = sy_jdom_raw(&d, v, &vl);
        if (k == 1)
            sy_buf_append(&first, vr, vl);
        sy_buf_reset(&last);
        sy_buf_append(&last, vr, vl);
        if (!strcmp(o->kind, "batch"))
            own_batch_files(c, &d, it, &me);
    }
    SY_BUF_LIT(&b, "],\"first_id\":");
    if (k) {
        sy_buf_append(&b, first.p, first.len);
        SY_BUF_LIT(&b, ",\"last_id\":");
        sy_buf_append(&b, last.p, last.len);
    } else {
        SY_BUF_LIT(&b, "null,\"last_id\":null");
    }
    uint32_t hm = sy_jdom_top(&d, "has_more");
    int more = 0;
    if (hm)
        sy_jdom_bool(&d, hm, &more);
    sy_buf_printf(&b, ",\"has_more\":%s}", more ? "true" : "false");
    sy_buf_free(&first);
    sy_buf_free(&last);
    sy_buf_free(&c->up.up_body);
    c->up.up_body = b;
}

static int files_run(struct sy_call *c)
{
    struct sy_req *r = c->req;
    struct sy_str p = r->path;
    if (p.n >= 3 && memcmp(p.p, "/v1", 3) == 0) {
        p.p += 3;
        p.n -= 3;
    }
    c->pass.pass_op = p.n >= 6 && memcmp(p.p, "/files", 6) == 0 ? PASS_FILES : PASS_BATCHES;
    /* the id segment goes into the upstream URL: [A-Za-z0-9_.-] only, never "." or ".."
     * (a '/', '%', '?' or '#' in it could leave /files/ on the upstream) */
    for (size_t i = 1, seg = 1; i <= p.n; i++) {
        if (i == p.n || p.p[i] == '/') {
            size_t sl = i - seg;
            if (sl == 0 || (sl == 1 && p.p[seg] == '.') || (sl == 2 && p.p[seg] == '.' && p.p[seg + 1] == '.')) {
                sy_call_error(c, 404, "invalid_request_error", NULL, "Not found", NULL, 0);
                return SY_DONE;
            }
            seg = i + 1;
            continue;
        }
        char ch = p.p[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
              ch == '-' || ch == '.')) {
            sy_call_error(c, 404, "invalid_request_error", NULL, "Not found", NULL, 0);
            return SY_DONE;
        }
    }
    if (memchr(r->query.p ? r->query.p : "", '#', r->query.n)) {
        sy_call_error(c, 400, "invalid_request_error", NULL, "Invalid query string", NULL, 0);
        return SY_DONE;
    }
    c->pass.raw = 1;
    c->pass.raw_method = r->method == HTTP_GET ? "GET" : r->method == HTTP_DELETE ? "DELETE" : "POST";
    struct sy_buf path;
    sy_buf_init(&path, 1 << 16);
    sy_buf_append(&path, p.p, p.n);
    if (r->query.n) {
        SY_BUF_LIT(&path, "?");
        sy_buf_append(&path, r->query.p, r->query.n);
    }
    c->pass.raw_path = dupn(c, path.p ? path.p : "", path.len);
    sy_buf_free(&path);
    struct sy_str ct = sy_req_header(r, "content-type");
    if (ct.p && r->body.len)
        c->pass.raw_ctype = dupn(c, ct.p, ct.n);
    /* which deployment: ?model= / x-litellm-model, else the first OpenAI or Azure one */
    char name[256] = "";
    struct sy_str h = sy_req_header(r, "x-litellm-model");
    if (h.p && h.n && h.n < sizeof name) {
        memcpy(name, h.p, h.n);
        name[h.n] = 0;
    } else {
        sy_query_get(r->query.p, r->query.n, "model", name, sizeof name);
    }
    const struct sy_drt *d = NULL;
    if (name[0]) {
        const struct sy_group *gr = sy_router_resolve(&c->g->table, name, strlen(name));
        for (size_t i = 0; gr && i < gr->n && !d; i++)
            if (is_openai_or_azure(gr->d[i]))
                d = gr->d[i];
        if (!d) {
            char msg[512];
            snprintf(msg, sizeof msg,
                     "model=%.200s has no OpenAI or Azure deployment to serve %s (files and batches go to OpenAI "
                     "and Azure deployments)",
                     name, c->pass.pass_op == PASS_FILES ? "/v1/files" : "/v1/batches");
            sy_call_error(c, 400, "invalid_request_error", "model", msg, NULL, 0);
            return SY_DONE;
        }
    }
    for (size_t i = 0; i < c->g->ndrts && !d; i++)
        if (is_openai_or_azure(&c->g->drts[i]))
            d = &c->g->drts[i];
    if (!d) {
        sy_call_error(c, 400, "invalid_request_error", NULL,
                      "switchyard: /v1/files and /v1/batches need an OpenAI or Azure deployment in model_list", NULL,
                      0);
        return SY_DONE;
    }
    c->pin = (struct sy_drt *)d;
    c->group = c->req_group = sy_gwconf_group_of(c->g, d);
    c->in.model = (char *)c->group->name;
    const struct sy_keyinfo *k = c->auth.key;
    if (k && c->pass.pass_op == PASS_BATCHES && r->method == HTTP_POST &&
        !(p.n > 7 && !memcmp(p.p + p.n - 7, "/cancel", 7)) && (k->nmodels || (k->team && k->team->nmodels))) {
        /* the requests of a batch name their own models, in a file switchyard does not read */
        sy_call_error(c, 401, "auth_error", NULL,
                      "switchyard: a key limited to some models cannot create batches (each request of a batch "
                      "names its own model); use a key without a model list",
                      NULL, 0);
        return SY_DONE;
    }
    struct sy_check_err e;
    if (k && sy_call_model_denied(c, name[0] ? name : c->in.model, &e) != 0) {
        /* a key reaches files and batches only on a deployment of a group it may call */
        sy_call_error(c, e.status, e.type, e.param[0] ? e.param : NULL, e.message, NULL, 0);
        return SY_DONE;
    }
    c->rt.input_tokens = -1;
    c->opt.num_retries_req = 0; /* a POST that creates a file or a batch is not repeated */
    c->opt.timeout_req = c->opt.stream_timeout_req = -1;
    c->rt.fb_kind = -1;
    c->opt.disable_fallbacks = 1;
    return own_stage(c, p);
}

/* ---- the upstream request (proxy.c) ------------------------------------------ */

/* The deployment's URL for a raw call into out. 0, or -1 with msg filled when
 * the deployment cannot serve it. */
int sy_passthru_url(struct sy_call *c, const struct sy_drt *d, const char *path, struct sy_buf *out, char *msg,
                    size_t cap)
{
    if (d->ad) { /* translated providers: only Cohere-style rerank is forwarded */
        if ((c->pass.pass_op == PASS_RERANK_V1 || c->pass.pass_op == PASS_RERANK_V2) && d->pc && d->pc->base &&
            d->d->provider && strcmp(d->d->provider, "cohere") == 0) {
            const char *b = d->pc->base;
            size_t bl = strlen(b);
            while (bl && b[bl - 1] == '/')
                bl--;
            if (bl >= 3 && (memcmp(b + bl - 3, "/v1", 3) == 0 || memcmp(b + bl - 3, "/v2", 3) == 0))
                bl -= 3;
            sy_buf_append(out, b, bl);
            sy_buf_puts(out, c->pass.pass_op == PASS_RERANK_V2 ? "/v2/rerank" : "/v1/rerank");
            return 0;
        }
        snprintf(msg, cap, "switchyard: %s needs an OpenAI-compatible deployment; model group '%s' is served by %s",
                 path, c->group ? c->group->name : "?", d->d->provider ? d->d->provider : "?");
        return -1;
    }
    const char *u = d->url[0];
    if (!openai_compatible(d) || !u) {
        snprintf(msg, cap, "switchyard: model group '%s' cannot serve %s", c->group ? c->group->name : "?", path);
        return -1;
    }
    const char *cc = strstr(u, "/chat/completions");
    if (!cc) {
        snprintf(msg, cap, "switchyard: model group '%s' cannot serve %s", c->group ? c->group->name : "?", path);
        return -1;
    }
    if (d->prov->flags & SY_PRESET_AZURE) {
        /* {base}/openai/deployments/{m}/chat/completions?api-version=V */
        const char *dep = strstr(u, "/openai/deployments/");
        const char *q = strchr(cc, '?');
        if (!dep || !q) {
            snprintf(msg, cap, "switchyard: bad Azure URL for %s", path);
            return -1;
        }
        int azure_dep = c->pass.pass_op != PASS_FILES && c->pass.pass_op != PASS_BATCHES &&
                        c->pass.pass_op != PASS_MODERATION && c->kind != SY_RK_RESPONSES &&
                        c->kind != SY_RK_RESPONSES_ID;
        if (azure_dep)
            sy_buf_append(out, u, (size_t)(cc - u)); /* through /openai/deployments/{m} */
        else
            sy_buf_append(out, u, (size_t)(dep - u) + 7); /* through /openai */
        const char *pq = strchr(path, '?');
        sy_buf_append(out, path, pq ? (size_t)(pq - path) : strlen(path));
        sy_buf_puts(out, q); /* ?api-version=V */
        if (pq) {
            SY_BUF_LIT(out, "&");
            sy_buf_puts(out, pq + 1);
        }
        return 0;
    }
    sy_buf_append(out, u, (size_t)(cc - u));
    sy_buf_puts(out, path);
    return 0;
}

/* Header lines: the deployment's auth, the client's Content-Type. */
static const char *raw_headers(struct sy_call *c, const struct sy_drt *d, size_t *len)
{
    struct sy_buf h;
    sy_buf_init(&h, 1 << 16);
    if (d->ad) {
        SY_BUF_LIT(&h, "User-Agent: switchyard/" SY_VERSION "\r\n");
        if (d->pc && d->pc->key)
            sy_buf_printf(&h, "Authorization: Bearer %s\r\n", d->pc->key);
    } else {
        const char *p = d->headers, *e = d->headers + d->headers_len;
        while (p < e) { /* every line but Content-Type */
            const char *nl = memchr(p, '\n', (size_t)(e - p));
            const char *le = nl ? nl + 1 : e;
            if (!((size_t)(le - p) >= 13 && strncasecmp(p, "content-type:", 13) == 0))
                sy_buf_append(&h, p, (size_t)(le - p));
            p = le;
        }
    }
    if (c->pass.raw_ctype && !memchr(c->pass.raw_ctype, '\r', strlen(c->pass.raw_ctype)) &&
        !memchr(c->pass.raw_ctype, '\n', strlen(c->pass.raw_ctype)))
        sy_buf_printf(&h, "Content-Type: %s\r\n", c->pass.raw_ctype);
    else if (c->pass.raw_model_json && c->req->body.len)
        SY_BUF_LIT(&h, "Content-Type: application/json\r\n");
    char *o = dupn(c, h.p ? h.p : "", h.len);
    *len = h.len;
    sy_buf_free(&h);
    return o;
}

int sy_passthru_prepare(struct sy_call *c, struct sy_ureq_opts *o, unsigned *nbody, struct sy_xerr *err)
{
    const struct sy_drt *d = c->drt;
    struct sy_buf url;
    char msg[600];
    sy_buf_init(&url, 1 << 16);
    if (sy_passthru_url(c, d, c->pass.raw_path, &url, msg, sizeof msg) != 0) {
        sy_buf_free(&url);
        memset(err, 0, sizeof *err);
        err->status = 400;
        snprintf(err->type, sizeof err->type, "invalid_request_error");
        snprintf(err->message, sizeof err->message, "%s", msg);
        return SY_EINVAL;
    }
    o->url = dupn(c, url.p, url.len);
    sy_buf_free(&url);
    o->headers = raw_headers(c, d, &o->headers_len);
    o->method = c->pass.raw_method;
    *nbody = 0;
    if (!c->req->body.len || c->pass.raw_model_json)
        return 0; /* no body, or JSON: proxy.c replaces the model as for chat */
    const char *b = c->req->body.p;
    size_t n = c->req->body.len;
    if (!c->pass.raw_model_len) {
        c->up.body_parts[0] = uv_buf_init((char *)b, (unsigned)n);
        *nbody = 1;
        return 0;
    }
    /* multipart: splice the upstream model into the "model" field */
    const char *um = d->d->upstream_model ? d->d->upstream_model : "";
    c->up.body_parts[0] = uv_buf_init((char *)b, (unsigned)c->pass.raw_model_off);
    c->up.body_parts[1] = uv_buf_init((char *)um, (unsigned)strlen(um));
    c->up.body_parts[2] = uv_buf_init((char *)b + c->pass.raw_model_off + c->pass.raw_model_len,
                                      (unsigned)(n - c->pass.raw_model_off - c->pass.raw_model_len));
    *nbody = 3;
    return 0;
}

const struct sy_stage sy_stage_passthru = {
    .name = "passthru",
    .routes = SY_RKB(SY_RK_PASSTHRU),
    .run = passthru_run,
};

const struct sy_stage sy_stage_files = {
    .name = "files",
    .routes = SY_RKB(SY_RK_FILES),
    .run = files_run,
    .slot = &pown_slot,
};

static int file_refs_on(const struct sy_gwconf *g, enum sy_route_kind k)
{
    (void)k;
    return g->master_key != NULL && g->db; /* auth and a database */
}

const struct sy_stage sy_stage_file_refs = {
    .name = "file_refs",
    .routes = SY_RKB(SY_RK_CHAT) | SY_RKB(SY_RK_RESPONSES),
    .enabled = file_refs_on,
    .run = file_refs_run,
    .slot = &pown_slot,
};
