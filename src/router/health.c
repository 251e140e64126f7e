/* health.c - the pure parts of LiteLLM's deep health check (router/health.h):
 * what a check calls with and how its result is shown, without a worker, a
 * call or a socket. The check itself - the GET /health stage, rounds of
 * upstream calls, background checks on worker 0 - is stages/health.c.
 *
 *   sy_health_mode_of, sy_health_timeout     which call, and its time bound
 *   sy_health_unsupported_reason             why a deployment is not called
 *   sy_health_endpoint_json                  one endpoint object, secrets redacted
 *   sy_health_filter_keys                    ?model= / ?model_id= selection
 *   sy_health_store_*                        the latest background results, process-wide
 */
#include "router/health.h"

#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "providers/adapter.h"
#include "providers/provider.h"

/* ---- process-wide store of the latest background results ------------------ */

static pthread_mutex_t store_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sy_health_entry *store_e;
static size_t store_n;
static int store_have;

void sy_health_entries_free(struct sy_health_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(e[i].id);
        free(e[i].name);
        free(e[i].model);
        free(e[i].json);
    }
    free(e);
}

void sy_health_store_replace(struct sy_health_entry *e, size_t n)
{
    pthread_mutex_lock(&store_mu);
    struct sy_health_entry *old = store_e;
    size_t on = store_n;
    store_e = e;
    store_n = n;
    store_have = 1;
    pthread_mutex_unlock(&store_mu);
    sy_health_entries_free(old, on);
}

void sy_health_store_clear(void)
{
    pthread_mutex_lock(&store_mu);
    struct sy_health_entry *old = store_e;
    size_t on = store_n;
    store_e = NULL;
    store_n = 0;
    store_have = 0;
    pthread_mutex_unlock(&store_mu);
    sy_health_entries_free(old, on);
}

int sy_health_stored_json(const struct sy_health_filter *f, struct sy_buf *b, int *notfound)
{
    int rc = 0;
    *notfound = 0;
    pthread_mutex_lock(&store_mu);
    if (!store_have) {
        pthread_mutex_unlock(&store_mu);
        return -1;
    }
    struct sy_health_key *k = calloc(store_n ? store_n : 1, sizeof *k);
    unsigned char *sel = calloc(store_n ? store_n : 1, 1);
    if (!k || !sel) {
        rc = 1;
    } else {
        for (size_t i = 0; i < store_n; i++)
            k[i] = (struct sy_health_key){store_e[i].id, store_e[i].name, store_e[i].model};
        size_t n = sy_health_filter_keys(f, k, store_n, sel);
        *notfound = f->model_id && n == 0;
        size_t cnt[2] = {0, 0};
        rc |= SY_BUF_LIT(b, "{\"healthy_endpoints\":[");
        for (int want = 1; want >= 0; want--) {
            if (want == 0)
                rc |= SY_BUF_LIT(b, "],\"unhealthy_endpoints\":[");
            for (size_t i = 0; i < store_n; i++) {
                if (!sel[i] || store_e[i].ok != want)
                    continue;
                if (cnt[want]++)
                    rc |= SY_BUF_LIT(b, ",");
                rc |= sy_buf_append(b, store_e[i].json, store_e[i].json_len);
            }
        }
        rc |= sy_buf_printf(b, "],\"healthy_count\":%zu,\"unhealthy_count\":%zu}", cnt[1], cnt[0]);
    }
    pthread_mutex_unlock(&store_mu);
    free(k);
    free(sel);
    return rc ? 1 : 0;
}

/* ---- small helpers --------------------------------------------------------- */

static int str_has(const char *hay, const char *needle)
{
    return strstr(hay, needle) != NULL;
}

/* Copy s[0..n) to a new string with every byte that is not part of valid
 * UTF-8 replaced by '?' (error texts quote upstream bytes, possibly cut). */
static char *utf8_clean(const char *s, size_t n)
{
    char *o = malloc(n + 1);
    if (!o)
        return NULL;
    size_t i = 0, k = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        int good = len > 0 && i + len <= n && !(len == 2 && c < 0xc2) && !(len == 4 && c > 0xf4);
        for (size_t j = 1; good && j < len; j++)
            good = ((unsigned char)s[i + j] & 0xc0) == 0x80;
        if (good && len == 3) {
            unsigned char c1 = (unsigned char)s[i + 1];
            good = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);
        } else if (good && len == 4) {
            unsigned char c1 = (unsigned char)s[i + 1];
            good = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
        }
        if (!good) {
            o[k++] = '?';
            i++;
            continue;
        }
        memcpy(o + k, s + i, len);
        k += len;
        i += len;
    }
    o[k] = 0;
    return o;
}

char *sy_health_fmt_error(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *out = NULL;
    if (vasprintf(&out, f, ap) < 0)
        out = NULL;
    va_end(ap);
    if (!out)
        return NULL;
    char *clean = utf8_clean(out, strlen(out));
    free(out);
    return clean;
}

enum sy_health_mode sy_health_mode_of(const struct sy_deployment *d)
{
    const char *m = d->mode;
    if (!m || !*m || strcmp(m, "chat") == 0)
        return SY_HM_CHAT;
    if (strcmp(m, "completion") == 0)
        return SY_HM_COMPLETION;
    if (strcmp(m, "embedding") == 0)
        return SY_HM_EMBEDDING;
    return SY_HM_NONE;
}

double sy_health_timeout(const struct sy_drt *d)
{
    double t = d->timeout_s;
    return t > 0 && t < SY_HEALTH_TIMEOUT_CAP_S ? t : SY_HEALTH_TIMEOUT_CAP_S;
}

char *sy_health_unsupported_reason(const struct sy_drt *drt)
{
    const struct sy_deployment *d = drt->d;
    if (!d->model)
        return sy_health_fmt_error(
            "switchyard: deployment of '%s' has no litellm_params.model; no health check call was made",
            d->model_name ? d->model_name : "?");
    if (d->upstream_model && strchr(d->upstream_model, '*'))
        return sy_health_fmt_error(
            "switchyard: wildcard model '%s' is not supported yet; no health check call was made", d->model);
    if (d->provider && sy_adapter_find(d->provider))
        return sy_health_fmt_error(
            "switchyard: deployment '%s' (model '%s') is not usable: its %s settings are incomplete "
            "(see the startup warning); no health check call was made",
            d->model_name ? d->model_name : "?", d->model, d->provider);
    if (d->provider && sy_provider_find(d->provider))
        return sy_health_fmt_error(
            "switchyard: provider '%s' (model '%s') needs api_base; no health check call was made", d->provider,
            d->model);
    return sy_health_fmt_error(
        "switchyard: provider '%s' (model '%s') is %s; no health check call was made", d->provider ? d->provider : "?",
        d->model, d->provider && sy_provider_known_unsupported(d->provider) ? "not supported yet" : "unknown");
}

/* ---- redaction ------------------------------------------------------------- */

/* A litellm_params key that is (or may carry) a secret, or that LiteLLM never
 * displays: LiteLLM's ILLEGAL_DISPLAY_PARAMS (messages, api_key, prompt, input,
 * vertex_credentials, aws_access_key_id, aws_secret_access_key) and, beyond
 * them, any name containing key, secret, password, passwd, credential, auth,
 * header, cookie, signature or private, or containing "token" but not
 * "tokens" (azure_ad_token, aws_session_token; max_tokens stays). Case-insensitive. */
static int secret_key(const char *k, size_t n)
{
    static const char *const exact[] = {"messages", "prompt", "input"};
    static const char *const parts[] = {"key",  "secret", "password", "passwd",    "credential",
                                        "auth", "header", "cookie",   "signature", "private"};
    char low[128];
    if (n >= sizeof low)
        return 1; /* absurdly long: not shown */
    for (size_t i = 0; i < n; i++)
        low[i] = (char)((k[i] >= 'A' && k[i] <= 'Z') ? k[i] + 32 : k[i]);
    low[n] = 0;
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strcmp(low, exact[i]) == 0)
            return 1;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (str_has(low, parts[i]))
            return 1;
    return str_has(low, "token") && !str_has(low, "tokens");
}

/* Drop secret keys at any depth; 0, or -1 when the value holds a number JSON
 * cannot carry (NaN, Infinity: then the caller shows the text as a string). */
static int redact_json(json_object *o, int depth)
{
    if (depth > 64)
        return -1;
    switch (json_object_get_type(o)) {
    case json_type_double: return isfinite(json_object_get_double(o)) ? 0 : -1;
    case json_type_array:
        for (size_t i = 0, n = json_object_array_length(o); i < n; i++)
            if (redact_json(json_object_array_get_idx(o, i), depth + 1))
                return -1;
        return 0;
    case json_type_object: {
        size_t n = (size_t)json_object_object_length(o), nd = 0;
        const char **del = calloc(n ? n : 1, sizeof *del);
        if (!del)
            return -1;
        json_object_object_foreach(o, key, val)
        {
            if (secret_key(key, strlen(key)))
                del[nd++] = key;
            else if (redact_json(val, depth + 1)) {
                free(del);
                return -1;
            }
        }
        /* keys point into the object: delete one by one, copying the name first */
        for (size_t i = 0; i < nd; i++) {
            char *name = strdup(del[i]);
            if (name) {
                json_object_object_del(o, name);
                free(name);
            }
        }
        free(del);
        return 0;
    }
    default: return 0;
    }
}

/* v with a URL's "user:password@" replaced by "****@" (an api_base may carry
 * credentials); malloc'd, NULL when out of memory. */
static char *mask_userinfo(const char *v)
{
    const char *s = strstr(v, "://");
    if (!s)
        return strdup(v);
    const char *h = s + 3;
    size_t hl = strcspn(h, "/?#");
    const char *at = memrchr(h, '@', hl);
    if (!at)
        return strdup(v);
    char *out = NULL;
    if (asprintf(&out, "%.*s****%s", (int)(h - v), v, at) < 0)
        out = NULL;
    return out;
}

/* Append the value text v of a litellm_params key as JSON into b: a value the
 * loader wrote as JSON (numbers, booleans, lists, maps) stays JSON, with
 * secret keys removed inside; anything else is a JSON string, a URL's
 * credentials masked. (The loader keeps YAML strings as written, so a quoted
 * "5" shows as 5.) */
static int append_param_value(struct sy_buf *b, const char *v)
{
    size_t n = strlen(v);
    int rc = 0;
    struct json_tokener *tok = json_tokener_new_ex(64);
    json_object *o = NULL;
    if (tok && n) {
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        o = json_tokener_parse_ex(tok, v, (int)n + 1); /* the NUL ends a bare number */
        if (o && (json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != n ||
                  json_object_get_type(o) == json_type_string || redact_json(o, 0) != 0)) {
            json_object_put(o);
            o = NULL;
        }
    }
    if (o) {
        rc = sy_buf_puts(b, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
    } else {
        char *masked = mask_userinfo(v);
        char *clean = masked ? utf8_clean(masked, strlen(masked)) : NULL;
        free(masked);
        rc = SY_BUF_LIT(b, "\"");
        if (clean)
            rc |= sy_buf_json_escape(b, clean, strlen(clean));
        rc |= SY_BUF_LIT(b, "\"");
        free(clean);
    }
    if (tok)
        json_tokener_free(tok);
    return rc;
}

int sy_health_endpoint_json(struct sy_buf *b, const struct sy_deployment *d, const struct sy_health_seen *p)
{
    const char *key = d->api_key && strlen(d->api_key) >= 4 ? d->api_key : NULL;
    int rc = SY_BUF_LIT(b, "{");
    int first = 1, have_model = 0;
    for (size_t i = 0; i < d->n_params; i++) {
        const struct sy_kv *kv = &d->params[i];
        if (!kv->key || !kv->value || secret_key(kv->key, strlen(kv->key)))
            continue;
        int is_model = strcmp(kv->key, "model") == 0;
        const char *val = is_model && d->health_check_model ? d->health_check_model : kv->value;
        size_t mark = b->len;
        rc |= first ? 0 : SY_BUF_LIT(b, ",");
        rc |= SY_BUF_LIT(b, "\"");
        rc |= sy_buf_json_escape(b, kv->key, strlen(kv->key));
        rc |= SY_BUF_LIT(b, "\":");
        size_t vstart = b->len;
        if (is_model) { /* always a string, even "5" */
            rc |= SY_BUF_LIT(b, "\"");
            rc |= sy_buf_json_escape(b, val, strlen(val));
            rc |= SY_BUF_LIT(b, "\"");
        } else {
            rc |= append_param_value(b, val);
        }
        if (key && b->len >= vstart && memmem(b->p + vstart, b->len - vstart, key, strlen(key))) {
            b->len = mark; /* a value that carries the api key (a URL with ?key=...) is not shown */
            b->p[b->len] = 0;
            continue;
        }
        first = 0;
        have_model |= is_model;
    }
    if (!have_model && (d->health_check_model || d->model)) {
        const char *m = d->health_check_model ? d->health_check_model : d->model;
        rc |= first ? 0 : SY_BUF_LIT(b, ",");
        rc |= SY_BUF_LIT(b, "\"model\":\"");
        rc |= sy_buf_json_escape(b, m, strlen(m));
        rc |= SY_BUF_LIT(b, "\"");
        first = 0;
    }
    if (p->ok) {
        static const char *const names[3] = {"x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens",
                                             "x-ms-region"};
        const char *vals[3] = {p->rl_req, p->rl_tok, p->region};
        for (int i = 0; i < 3; i++) {
            if (!vals[i][0])
                continue;
            rc |= first ? 0 : SY_BUF_LIT(b, ",");
            rc |= sy_buf_printf(b, "\"%s\":\"", names[i]);
            rc |= sy_buf_json_escape(b, vals[i], strlen(vals[i]));
            rc |= SY_BUF_LIT(b, "\"");
            first = 0;
        }
    } else {
        const char *e = p->error ? p->error : "unknown error";
        rc |= first ? 0 : SY_BUF_LIT(b, ",");
        rc |= SY_BUF_LIT(b, "\"error\":\"");
        rc |= sy_buf_json_escape(b, e, strlen(e));
        rc |= SY_BUF_LIT(b, "\"");
        first = 0;
    }
    if (d->id) {
        rc |= first ? 0 : SY_BUF_LIT(b, ",");
        rc |= SY_BUF_LIT(b, "\"model_id\":\"");
        rc |= sy_buf_json_escape(b, d->id, strlen(d->id));
        rc |= SY_BUF_LIT(b, "\"");
    }
    rc |= SY_BUF_LIT(b, "}");
    return rc;
}

/* ---- selection ------------------------------------------------------------- */

size_t sy_health_filter_keys(const struct sy_health_filter *f, const struct sy_health_key *k, size_t n,
                             unsigned char *sel)
{
    size_t cnt = 0;
    for (size_t i = 0; i < n; i++) {
        if (f->model_id)
            sel[i] = k[i].id && strcmp(k[i].id, f->model_id) == 0;
        else if (f->model)
            sel[i] = k[i].model && strcmp(k[i].model, f->model) == 0;
        else
            sel[i] = 1;
        cnt += sel[i];
    }
    if (!cnt && f->model && !f->model_id)
        for (size_t i = 0; i < n; i++)
            sel[i] = k[i].name && strcmp(k[i].name, f->model) == 0;
    cnt = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; sel[i] && k[i].id && j < i; j++)
            if (sel[j] && k[j].id && strcmp(k[i].id, k[j].id) == 0)
                sel[i] = 0;
        cnt += sel[i];
    }
    return cnt;
}
