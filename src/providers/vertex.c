/* vertex.c - the Vertex AI adapter (sy_adapter_vertex): Gemini models in the
 * generateContent format of gemini.h on Vertex URLs, Anthropic Claude models
 * (a model id containing "claude") through rawPredict with anthropic.c's
 * body and decoders, and text embeddings through :predict. As LiteLLM's
 * llms/vertex_ai/ (vertex_llm_base.py, gemini/, vertex_ai_partner_models/
 * anthropic/, vertex_embeddings/).
 *
 * Upstream:
 *
 *   host      https://{location}-aiplatform.googleapis.com (https://aiplatform.googleapis.com
 *             when location is "global"), or api_base
 *   gemini    POST {host}/v1/projects/{project}/locations/{location}/publishers/google/models/{m}
 *             :generateContent | :streamGenerateContent?alt=sse
 *             (m all digits, or "gemini/<digits>": .../endpoints/{m}:... a tuned model endpoint)
 *   claude    POST {host}/v1/projects/{p}/locations/{l}/publishers/anthropic/models/{m}
 *             :rawPredict | :streamRawPredict   body: Anthropic Messages without "model",
 *             "anthropic_version":"vertex-2023-10-16", "stream":true when streaming
 *   embed     POST {host}/v1/projects/{p}/locations/{l}/publishers/google/models/{m}:predict
 *   api_base  with a path (a proxy URL naming the model, as LiteLLM's custom proxies):
 *             {api_base}:{method} for all of the above
 *   headers   Content-Type: application/json, Authorization: Bearer {access token}
 *             (SY_CAP_OAUTH: the gateway mints it from pc->credentials, gauth.h); no client
 *             header is forwarded (anthropic-beta included)
 *
 * Settings (configure):
 *
 *   litellm_params                        else                               pc field
 *   ------------------------------------  ---------------------------------  -----------
 *   vertex_project | vertex_ai_project    VERTEXAI_PROJECT, GOOGLE_CLOUD_PROJECT,
 *                                         the credentials' project_id        project
 *   vertex_location | vertex_ai_location  VERTEXAI_LOCATION, VERTEX_LOCATION,
 *                                         "us-central1"                      region
 *   vertex_credentials (JSON text or a    VERTEXAI_CREDENTIALS, else the file
 *   path to a JSON file)                  GOOGLE_APPLICATION_CREDENTIALS     credentials (JSON text)
 *   api_base                              the host above                     base
 *
 * Embeddings (OpenAI -> :predict -> OpenAI):
 *
 *   input (string | [string])             instances[{content[, task_type]}]
 *   dimensions                            parameters.outputDimensionality
 *   predictions[i].embeddings.values      data[i].embedding
 *   sum of predictions[i].embeddings.statistics.token_count   usage.prompt_tokens
 *
 * Errors (Gemini and Claude alike, as LiteLLM maps every vertex_ai error):
 * sy_gemini_map_error("vertex_ai", ...).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "providers/anthropic.h"
#include "providers/gauth.h"
#include "providers/gemini.h"
#include "providers/oai.h"

#define MAX_CRED_FILE (1 << 20)

/* Node 0 is the root, and 0 also means "absent" in jdom's answers: these
 * read an absent node as absent (jdom's own would read the root). */
static inline char jt(const struct sy_jdoc *d, uint32_t i)
{
    return i ? sy_jdom_type(d, i) : 0;
}
static inline uint32_t jget(const struct sy_jdoc *d, uint32_t obj, const char *key)
{
    return obj ? sy_jdom_get(d, obj, key) : 0;
}
static inline uint32_t rget(const struct sy_jdoc *d, const char *key)
{
    return sy_jdom_get(d, 0, key);
}

static int is_claude(const char *model)
{
    return model && strcasestr(model, "claude") != NULL;
}

/* "vertex_ai" or "vertex_ai_beta": the name LiteLLM puts in messages. */
static const char *provider_of(const struct sy_xctx *x)
{
    return x && x->d && x->d->provider && strncmp(x->d->provider, "vertex_ai", 9) == 0 ? x->d->provider : "vertex_ai";
}

/* ---- configure ------------------------------------------------------------ */

static const char *first_of(const struct sy_deployment *d, const char *p1, const char *p2, const char *e1,
                            const char *e2)
{
    const char *v = p1 ? sy_deployment_param(d, p1) : NULL;
    if ((!v || !*v) && p2)
        v = sy_deployment_param(d, p2);
    if ((!v || !*v) && e1)
        v = getenv(e1);
    if ((!v || !*v) && e2)
        v = getenv(e2);
    return v && *v ? v : NULL;
}

/* Characters a project id or location may hold in a URL path / host name. */
static int url_safe(const char *s, const char *extra)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr(extra, *s))
            return 0;
    return 1;
}

/* Read a credentials file (at config load, not on the request path). */
static char *read_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "vertex_ai: cannot open credentials file %s", path);
        return NULL;
    }
    char *buf = malloc(MAX_CRED_FILE + 1);
    size_t n = buf ? fread(buf, 1, MAX_CRED_FILE + 1, f) : 0;
    fclose(f);
    if (!buf || n > MAX_CRED_FILE) {
        free(buf);
        snprintf(err, errlen, "vertex_ai: credentials file %s is larger than 1 MB", path);
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

static int v_configure(const struct sy_deployment *d, int global_drop_params, struct sy_pconf *pc, char *err,
                       size_t errlen)
{
    const char *project =
        first_of(d, "vertex_project", "vertex_ai_project", "VERTEXAI_PROJECT", "GOOGLE_CLOUD_PROJECT");
    const char *loc = first_of(d, "vertex_location", "vertex_ai_location", "VERTEXAI_LOCATION", "VERTEX_LOCATION");
    const char *cred = first_of(d, "vertex_credentials", "vertex_ai_credentials", "VERTEXAI_CREDENTIALS", NULL);
    if (!loc)
        loc = "us-central1";
    if (!url_safe(loc, "-_")) {
        snprintf(err, errlen, "vertex_ai: vertex_location '%s' is not a location name", loc);
        return -1;
    }
    if (!(pc->region = strdup(loc)))
        goto oom;
    /* credentials: JSON text, or a file path */
    if (cred) {
        const char *p = cred;
        while (isspace((unsigned char)*p))
            p++;
        pc->credentials = *p == '{' ? strdup(p) : read_file(cred, err, errlen);
    } else if ((cred = getenv("GOOGLE_APPLICATION_CREDENTIALS")) && *cred) {
        pc->credentials = read_file(cred, err, errlen);
    } else {
        cred = NULL;
    }
    if (cred && !pc->credentials)
        return -1;
    if (pc->credentials) {
        struct sy_gauth_sa sa;
        char why[160];
        if (sy_gauth_parse_sa(pc->credentials, strlen(pc->credentials), &sa, why, sizeof why)) {
            snprintf(err, errlen, "vertex_ai: vertex_credentials: %s", why);
            return -1;
        }
        if (!project && sa.project_id && *sa.project_id)
            project = sa.project_id;
        if (project && !(pc->project = strdup(project))) {
            sy_gauth_sa_free(&sa);
            goto oom;
        }
        sy_gauth_sa_free(&sa);
    } else if (project && !(pc->project = strdup(project))) {
        goto oom;
    }
    if (pc->project && !url_safe(pc->project, "-_.:")) {
        snprintf(err, errlen, "vertex_ai: vertex_project '%s' is not a project id", pc->project);
        return -1;
    }
    const char *base = d->api_base && *d->api_base ? d->api_base : NULL;
    if (base) {
        size_t bl = strlen(base);
        while (bl && base[bl - 1] == '/')
            bl--;
        pc->base = strndup(base, bl);
    } else if (strcmp(loc, "global") == 0) {
        pc->base = strdup("https://aiplatform.googleapis.com");
    } else {
        size_t n = strlen(loc) + 40;
        if ((pc->base = malloc(n)))
            snprintf(pc->base, n, "https://%s-aiplatform.googleapis.com", loc);
    }
    if (!pc->base)
        goto oom;
    if (!pc->project && !sy__gemini_base_has_path(pc->base)) {
        snprintf(err, errlen,
                 "vertex_ai: no project: set vertex_project, VERTEXAI_PROJECT or credentials with a project_id");
        return -1;
    }
    return sy__gemini_conf_common(d, global_drop_params, pc, err, errlen);
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* ---- encode --------------------------------------------------------------- */

/* version: "v1", or "v1beta1" (context caching, as LiteLLM's is_using_v1beta1_features) */
static void v_url(const struct sy_xctx *x, const char *version, const char *publisher, const char *method,
                  struct sy_buf *url)
{
    const struct sy_pconf *pc = x->pc;
    const char *model = x->model ? x->model : "";
    sy_buf_puts(url, pc->base);
    if (!sy__gemini_base_has_path(pc->base)) {
        if (strncmp(model, "gemini/", 7) == 0) /* vertex_ai/gemini/<endpoint id>: a model in Gemini format */
            model += 7;
        int digits = *model != 0;
        for (const char *p = model; *p; p++)
            digits &= isdigit((unsigned char)*p) != 0;
        SY_BUF_LIT(url, "/");
        sy_buf_puts(url, version);
        SY_BUF_LIT(url, "/projects/");
        sy_buf_puts(url, pc->project ? pc->project : "");
        SY_BUF_LIT(url, "/locations/");
        sy_buf_puts(url, pc->region ? pc->region : "us-central1");
        if (digits && strcmp(publisher, "google") == 0) {
            SY_BUF_LIT(url, "/endpoints/");
        } else {
            SY_BUF_LIT(url, "/publishers/");
            sy_buf_puts(url, publisher);
            SY_BUF_LIT(url, "/models/");
        }
        sy_buf_puts(url, model);
    }
    SY_BUF_LIT(url, ":");
    sy_buf_puts(url, method);
}

static int v_encode(const struct sy_xctx *x, const struct sy_jdoc *req, struct sy_xout *o)
{
    int rc;
    if (x->op == SY_OP_EMBED) {
        struct sy_gemini_embed_in in;
        if ((rc = sy_gemini_embed_input(x, req, provider_of(x), &in, &o->err)))
            return rc;
        v_url(x, "v1", "google", "predict", &o->url);
        struct sy_jw w;
        sy_jw_init(&w, &o->body);
        sy_jw_obj(&w);
        sy_jw_key(&w, "instances");
        sy_jw_arr(&w);
        for (size_t i = 0; i < in.n; i++) {
            sy_jw_obj(&w);
            sy_jw_key(&w, "content");
            sy_jw_str(&w, in.texts[i], in.lens[i]);
            if (in.task_type) {
                sy_jw_key(&w, "task_type");
                sy_jw_node(&w, req, in.task_type);
            }
            sy_jw_end(&w);
        }
        sy_jw_end(&w);
        if (in.dimensions >= 0) {
            sy_jw_key(&w, "parameters");
            sy_jw_obj(&w);
            sy_jw_key(&w, "outputDimensionality");
            sy_jw_int(&w, in.dimensions);
            sy_jw_end(&w);
        }
        sy_jw_end(&w);
        if (w.err) {
            sy_oai_err(&o->err, 413, "request too large for the upstream body buffer", 46);
            return SY_ENOSPC;
        }
    } else if (is_claude(x->model)) {
        v_url(x, "v1", "anthropic", x->stream ? "streamRawPredict" : "rawPredict", &o->url);
        if ((rc = sy_anthropic_encode_body(x, req, 1, &o->body, &o->err))) /* "stream":true included */
            return rc;
    } else {
        uint32_t cc = rget(req, "cached_content"), cc2 = rget(req, "cachedContent");
        int beta = (cc && jt(req, cc) != 'z') || (cc2 && jt(req, cc2) != 'z');
        v_url(x, beta ? "v1beta1" : "v1", "google", x->stream ? "streamGenerateContent?alt=sse" : "generateContent",
              &o->url);
        if ((rc = sy_gemini_encode_body(x, req, SY_GEMINI_VERTEX, &o->body, &o->err)))
            return rc;
    }
    SY_BUF_LIT(&o->headers, "Content-Type: application/json\r\n");
    if (x->access_token && *x->access_token) {
        SY_BUF_LIT(&o->headers, "Authorization: Bearer ");
        sy_buf_puts(&o->headers, x->access_token);
        SY_BUF_LIT(&o->headers, "\r\n");
    }
    return 0;
}

/* ---- decode --------------------------------------------------------------- */

static int bad(struct sy_xstate *st, const char *what)
{
    char m[256];
    int n = snprintf(m, sizeof m, "litellm.APIError: Received an unexpected response from the provider: %s", what);
    sy_oai_err(&st->err, 502, m, (size_t)n);
    return SY_EUPPROTO;
}

/* {"predictions":[{"embeddings":{"values":[..],"statistics":{"token_count":N}}}]} */
static int embed_response(const struct sy_xctx *x, struct sy_xstate *st, const char *body, size_t n, struct sy_buf *out)
{
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, body, n, x->arena, 0) || sy_jdom_type(&d, 0) != 'o')
        return bad(st, "the body is not a JSON object");
    uint32_t preds = rget(&d, "predictions");
    if (jt(&d, preds) != 'a')
        return bad(st, "no predictions in the answer");
    size_t cnt = d.n[preds].kids, i = 0;
    const char **vec = sy_arena_alloc(x->arena, (cnt ? cnt : 1) * sizeof *vec);
    size_t *vl = sy_arena_alloc(x->arena, (cnt ? cnt : 1) * sizeof *vl);
    int64_t tokens = 0;
    for (uint32_t p = sy_jdom_first(&d, preds); p; p = sy_jdom_next(&d, p), i++) {
        uint32_t emb = jget(&d, p, "embeddings");
        uint32_t v = jget(&d, emb, "values");
        if (jt(&d, v) != 'a')
            return bad(st, "a prediction without embeddings.values");
        vec[i] = sy__gemini_compact(&d, v, x->arena, &vl[i]);
        double tc;
        if (sy_jdom_num(&d, jget(&d, jget(&d, emb, "statistics"), "token_count"), &tc) && tc > 0 && tc < 9e15)
            tokens += (int64_t)tc;
    }
    memset(&st->u, 0, sizeof st->u);
    st->u.prompt = tokens;
    st->u.have = 1;
    sy_oai_write_embeddings(st, vec, vl, cnt, out);
    return 0;
}

static int v_decode_response(const struct sy_xctx *x, struct sy_xstate *st, const char *body, size_t n,
                             struct sy_buf *out)
{
    if (x->op == SY_OP_EMBED)
        return embed_response(x, st, body, n, out);
    if (is_claude(x->model))
        return sy_adapter_anthropic.decode_response(x, st, body, n, out);
    return sy_gemini_decode_response(x, st, body, n, out);
}

static int v_decode_event(const struct sy_xctx *x, struct sy_xstate *st, const char *type, size_t tl, const char *data,
                          size_t dl, struct sy_buf *out)
{
    if (is_claude(x->model))
        return sy_adapter_anthropic.decode_event(x, st, type, tl, data, dl, out);
    return sy_gemini_decode_event(x, st, data, dl, out);
}

static void v_decode_error(const struct sy_xctx *x, int status, const char *body, size_t n, struct sy_xerr *e)
{
    sy_gemini_map_error(provider_of(x), status, body, n, e);
}

const struct sy_adapter sy_adapter_vertex = {
    .name = "vertex_ai",
    .caps = SY_CAP_STREAM | SY_CAP_TOOLS | SY_CAP_VISION | SY_CAP_EMBED | SY_CAP_REASONING | SY_CAP_OAUTH,
    .framing = SY_FRAME_SSE,              /* ?alt=sse for Gemini, Anthropic's SSE for Claude */
    .configure = v_configure,             /* project, location, credentials, base */
    .encode = v_encode,                   /* generateContent | rawPredict | predict */
    .decode_response = v_decode_response, /* Gemini, Claude (anthropic.c), embeddings */
    .decode_event = v_decode_event,       /* Gemini events, Claude events (anthropic.c) */
    .decode_error = v_decode_error,       /* LiteLLM's _map_vertex_exception, "vertex_ai" */
};
