/* models.c - LiteLLM's model-info routes: GET /model/info, /v1/model/info,
 * /v2/model/info and /model_group/info (proxy_server.py model_info_v1,
 * model_info_v2, model_group_info).
 *
 * They read only the model table (a->table, router/table.h) and the price
 * table, never the database (SY_ADMIN_NODB). Secrets never leave: litellm_params loses
 * api_key, client_secret, vertex_credentials, aws_access_key_id and
 * aws_secret_access_key, and every other parameter whose name has a
 * sensitive segment (LiteLLM's SensitiveDataMasker: "key", "secret",
 * "token", "password", "auth", "credential(s)", "access", "private", ...;
 * a "cost" segment exempts it) is masked to its first and last 4
 * characters ("sk-1****cdef"; 8 characters or fewer: all '*').
 *
 *   GET /model/info[?litellm_model_id=<id>]
 *     {"data":[{"model_name":"gpt-4o",
 *               "litellm_params":{"model":"openai/gpt-4o", ...},
 *               "model_info":{"id":"<id>","db_model":false,
 *                             <the deployment's own model_info fields>,
 *                             "key":"gpt-4o", <price-table fields it lacks>}}]}
 *     unknown id -> 400 {"detail":{"error":"Model id = X not found on litellm proxy"}}
 *   GET /v2/model/info[?model=<group>]   the same items, filtered by model_name
 *   GET /model_group/info[?model_group=<group>]
 *     {"data":[{"model_group","providers":[..],"max_input_tokens","max_output_tokens",
 *               "input_cost_per_token","output_cost_per_token","mode","tpm","rpm",
 *               "supports_parallel_function_calling","supports_vision",
 *               "supports_function_calling","supports_reasoning",
 *               "supports_response_schema","supports_tool_choice",
 *               "supported_openai_params":null,"configurable_clientside_auth_params":null}]}
 *     per group: token limits and prices are the maximum over its deployments,
 *     tpm/rpm their sum, supports_* true when any deployment has it.
 *
 * Only deployments switchyard can serve are listed (a supported provider:
 * sy_drt.prov or .ad set): LiteLLM lists every deployment, but one whose
 * provider switchyard does not support (warned at load) can never answer a
 * request, so it is left out here (also for ?litellm_model_id=, which then
 * answers "not found"), and /model_group/info leaves out a group without a
 * servable deployment and sums only its servable ones - the same groups
 * GET /v1/models lists.
 *
 * Every key may call them (LiteLLM's info_routes); a key that is not an
 * admin's sees only the deployments of the models it may use (a->model_allowed:
 * the key's models, all-team-models / its team's models, access groups and
 * wildcard patterns, as GET /v1/models), and ?litellm_model_id= of another
 * model answers "not found" as an unknown id does.
 */
#include <http_parser.h>
#include <json-c/json.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "admin/admin.h"
#include "admin/admin_impl.h"
#include "admin/credentials.h"
#include "admin/modeldb.h"
#include "config/config.h"
#include "core/secret.h"
#include "store/store.h"
#include "router/table.h"
#include "spend/spend.h"

/* The price-table entry LiteLLM's get_litellm_model_info finds: base_model,
 * then the provider's model, then litellm_params.model as written. */
static const struct sy_price *dep_price(const struct sy_deployment *d)
{
    const struct sy_price *p = NULL;
    if (d->base_model)
        p = sy_price_find(d->provider, d->base_model);
    if (!p && d->upstream_model)
        p = sy_price_find(d->provider, d->upstream_model);
    if (!p && d->model)
        p = sy_price_find(NULL, d->model);
    return p;
}

/* ---- secrets ------------------------------------------------------------------ */

static int dropped(const char *k)
{
    static const char *const drop[] = {"api_key", "client_secret", "vertex_credentials", "aws_access_key_id",
                                       "aws_secret_access_key"};
    for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
        if (strcmp(k, drop[i]) == 0)
            return 1;
    return 0;
}

/* SensitiveDataMasker.is_sensitive_key: a '_'/'-' separated segment names a secret. */
static int sensitive(const char *k)
{
    static const char *const pat[] = {
        "password", "secret",    "key",    "token",   "auth",        "authorization", "credential",  "credentials",
        "secrets",  "passwords", "access", "private", "certificate", "certificates",  "fingerprint", "tenancy"};
    int hit = 0;
    for (const char *p = k; *p;) {
        size_t n = strcspn(p, "_-");
        if (n == 4 && strncasecmp(p, "cost", 4) == 0)
            return 0;
        for (size_t i = 0; i < sizeof pat / sizeof pat[0] && !hit; i++)
            hit = strlen(pat[i]) == n && strncasecmp(p, pat[i], n) == 0;
        p += n;
        if (*p)
            p++;
    }
    return hit;
}

/* "sk-1****cdef" (values of 8 characters or fewer: all '*'). */
static void masked(struct sy_buf *b, const char *v)
{
    size_t n = strlen(v);
    SY_BUF_LIT(b, "\"");
    if (n <= 8) {
        for (size_t i = 0; i < n; i++)
            SY_BUF_LIT(b, "*");
    } else {
        sy_buf_json_escape(b, v, 4);
        for (size_t i = 0; i < n - 8; i++)
            SY_BUF_LIT(b, "*");
        sy_buf_json_escape(b, v + n - 4, 4);
    }
    SY_BUF_LIT(b, "\"");
}

/* A litellm_params value: JSON when the text is a non-string JSON value
 * (numbers, booleans, lists, maps as the loader wrote them), else a string. */
static void param_value(struct sy_buf *b, const char *v)
{
    json_object *o = NULL;
    struct json_tokener *tok = json_tokener_new();
    size_t n = strlen(v);
    if (tok && n) {
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        o = json_tokener_parse_ex(tok, v, (int)n + 1);
        if (o && (json_tokener_get_error(tok) != json_tokener_success || json_object_is_type(o, json_type_string))) {
            json_object_put(o);
            o = NULL;
        }
    }
    if (o)
        sy_buf_puts(b, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    else
        sy_admin_jstr(b, v);
    json_object_put(o);
    if (tok)
        json_tokener_free(tok);
}

static void litellm_params(struct sy_buf *b, const struct sy_deployment *d)
{
    int first = 1, have_model = 0;
    SY_BUF_LIT(b, "{");
    for (size_t i = 0; i < d->n_params; i++) {
        const struct sy_kv *kv = &d->params[i];
        if (!kv->key || !kv->value || dropped(kv->key))
            continue;
        sy_admin_jkey(b, &first, kv->key);
        if (strcmp(kv->key, "model") == 0) {
            have_model = 1;
            sy_admin_jstr(b, kv->value);
        } else if (sensitive(kv->key)) {
            masked(b, kv->value);
        } else {
            param_value(b, kv->value);
        }
    }
    if (!have_model && d->model) {
        sy_admin_jkey(b, &first, "model");
        sy_admin_jstr(b, d->model);
    }
    SY_BUF_LIT(b, "}");
}

/* ---- one deployment ------------------------------------------------------------ */

/* model_info: the deployment's own fields first (they win), then the price
 * entry's fields it lacks, as LiteLLM's `if k not in model_info` merge. */
static void model_info(struct sy_buf *b, const struct sy_deployment *d)
{
    const struct sy_price *p = dep_price(d);
    json_object *mine = json_object_new_object();
    json_object_object_add(mine, "id", json_object_new_string(d->id ? d->id : ""));
    json_object_object_add(mine, "db_model", json_object_new_boolean(d->file && strcmp(d->file, SY_MODELDB_FILE) == 0));
    if (d->mode && (!p || !p->mode || strcmp(p->mode, d->mode) != 0))
        json_object_object_add(mine, "mode", json_object_new_string(d->mode));
    if (d->max_tokens >= 0)
        json_object_object_add(mine, "max_tokens", json_object_new_int64(d->max_tokens));
    if (d->max_input_tokens >= 0)
        json_object_object_add(mine, "max_input_tokens", json_object_new_int64(d->max_input_tokens));
    if (d->max_output_tokens >= 0)
        json_object_object_add(mine, "max_output_tokens", json_object_new_int64(d->max_output_tokens));
    static const char *const cn[] = {"input_cost_per_token",
                                     "output_cost_per_token",
                                     "cache_read_input_token_cost",
                                     "cache_creation_input_token_cost",
                                     "output_cost_per_reasoning_token",
                                     "cache_creation_input_token_cost_above_1hr"};
    const double cv[] = {d->input_cost_per_token,
                         d->output_cost_per_token,
                         d->cache_read_input_token_cost,
                         d->cache_creation_input_token_cost,
                         d->output_cost_per_reasoning_token,
                         d->cache_creation_input_token_cost_above_1hr};
    for (size_t i = 0; i < sizeof cv / sizeof cv[0]; i++)
        if (cv[i] >= 0)
            json_object_object_add(mine, cn[i], json_object_new_double(cv[i]));
    if (d->base_model)
        json_object_object_add(mine, "base_model", json_object_new_string(d->base_model));
    if (d->tokenizer)
        json_object_object_add(mine, "tokenizer", json_object_new_string(d->tokenizer));
    if (d->health_check_model)
        json_object_object_add(mine, "health_check_model", json_object_new_string(d->health_check_model));
    if (d->n_access_groups) {
        json_object *ag = json_object_new_array();
        for (size_t i = 0; i < d->n_access_groups; i++)
            json_object_array_add(ag, json_object_new_string(d->access_groups[i]));
        json_object_object_add(mine, "access_groups", ag);
    }
    if (p) {
        if (!json_object_object_get_ex(mine, "key", NULL))
            json_object_object_add(mine, "key", json_object_new_string(p->key));
        json_object *pe = p->json ? json_tokener_parse(p->json) : NULL;
        if (pe && json_object_is_type(pe, json_type_object)) {
            json_object_object_foreach(pe, k, v)
            {
                if (!json_object_object_get_ex(mine, k, NULL))
                    json_object_object_add(mine, k, json_object_get(v));
            }
        }
        json_object_put(pe);
    }
    /* numbers as Python prints them: write members by hand */
    SY_BUF_LIT(b, "{");
    int first = 1;
    json_object_object_foreach(mine, k, v)
    {
        sy_admin_jkey(b, &first, k);
        if (json_object_is_type(v, json_type_double))
            sy_admin_jnum(b, json_object_get_double(v));
        else
            sy_buf_puts(b, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    }
    SY_BUF_LIT(b, "}");
    json_object_put(mine);
}

/* model_info.switchyard_state: the router's live view of the deployment on
 * this instance (router/router.h sy_dstate), for the Models page:
 *   {"healthy": false after a failed health check,
 *    "in_cooldown", "cooldown_until": ISO time or null, "cooldown_status": the
 *    status that caused it or null,
 *    "successes", "failures": this minute's calls, "in_flight",
 *    "rpm_used", "tpm_used": this minute (the fleet's with Redis)} */
static void live_state(struct sy_buf *b, struct sy_dstate *st, double now)
{
    int64_t now_ms = (int64_t)(now * 1000);
    int64_t until = atomic_load_explicit(&st->cooldown_until_ms, memory_order_relaxed);
    int cool = until > now_ms;
    sy_buf_printf(b, "{\"healthy\":%s,\"in_cooldown\":%s,\"cooldown_until\":",
                  atomic_load_explicit(&st->unhealthy, memory_order_relaxed) ? "false" : "true",
                  cool ? "true" : "false");
    if (cool) {
        char iso[32];
        sy_iso_time((double)until / 1000.0, iso);
        sy_admin_jstr(b, iso);
        sy_buf_printf(b, ",\"cooldown_status\":%d", atomic_load_explicit(&st->cooldown_status, memory_order_relaxed));
    } else {
        SY_BUF_LIT(b, "null,\"cooldown_status\":null");
    }
    sy_buf_printf(
        b, ",\"successes\":%llu,\"failures\":%llu,\"in_flight\":%d,\"rpm_used\":%llu,\"tpm_used\":%llu}",
        (unsigned long long)sy_win_get(&st->w_ok, now_ms), (unsigned long long)sy_win_get(&st->w_fail, now_ms),
        atomic_load_explicit(&st->inflight, memory_order_relaxed), (unsigned long long)sy_router_rpm_used(st, now_ms),
        (unsigned long long)sy_router_tpm_used(st, now_ms));
}

static void deployment(struct sy_buf *b, const struct sy_drt *r, double now)
{
    const struct sy_deployment *d = r->d;
    SY_BUF_LIT(b, "{\"model_name\":");
    sy_admin_jstr(b, d->model_name);
    SY_BUF_LIT(b, ",\"litellm_params\":");
    litellm_params(b, d);
    SY_BUF_LIT(b, ",\"model_info\":");
    model_info(b, d);
    if (r->st && !sy_buf_failed(b) && b->len && b->p[b->len - 1] == '}') { /* one more member of model_info */
        b->len--;
        SY_BUF_LIT(b, ",\"switchyard_state\":");
        live_state(b, r->st, now);
        SY_BUF_LIT(b, "}");
    }
    SY_BUF_LIT(b, "}");
}

/* ---- handlers ------------------------------------------------------------------ */

/* Can the deployment be served (a provider switchyard supports)? */
static int servable(const struct sy_drt *r)
{
    return r->prov != NULL || r->ad != NULL;
}

/* Deployment i is listed for this caller (servable and, for a key with a
 * model list, a model it may use). */
static int visible(const struct sy_admin_ctx *a, size_t i)
{
    const struct sy_drt *r = &a->table->drts[i];
    if (!servable(r))
        return 0;
    return !a->model_allowed || (r->d->model_name && a->model_allowed(a->model_ud, r->d->model_name));
}

static void model_info_list(struct sy_admin_ctx *a, const char *only_group, const char *only_id)
{
    const struct sy_table *g = a->table;
    if (!g) {
        sy_admin_error(a, 500, "None", "None", "LLM Model List not loaded in");
        return;
    }
    if (only_id) {
        for (size_t i = 0; i < g->ndrts; i++) {
            const struct sy_deployment *d = g->drts[i].d;
            if (visible(a, i) && d->id && strcmp(d->id, only_id) == 0) {
                SY_BUF_LIT(&a->out, "{\"data\":[");
                deployment(&a->out, &g->drts[i], a->now);
                SY_BUF_LIT(&a->out, "]}");
                return;
            }
        }
        a->status = 400;
        sy_buf_reset(&a->out);
        SY_BUF_LIT(&a->out, "{\"detail\":{\"error\":\"Model id = ");
        sy_buf_json_escape(&a->out, only_id, strlen(only_id));
        SY_BUF_LIT(&a->out, " not found on litellm proxy\"}}");
        return;
    }
    SY_BUF_LIT(&a->out, "{\"data\":[");
    int n = 0;
    for (size_t i = 0; i < g->ndrts; i++) {
        const struct sy_deployment *d = g->drts[i].d;
        if (!visible(a, i) || (only_group && (!d->model_name || strcmp(d->model_name, only_group) != 0)))
            continue;
        if (n++)
            SY_BUF_LIT(&a->out, ",");
        deployment(&a->out, &g->drts[i], a->now);
    }
    SY_BUF_LIT(&a->out, "]}");
}

static void model_info_v1(struct sy_store *st, struct sy_admin_ctx *a)
{
    (void)st;
    char id[512];
    model_info_list(a, NULL, sy_admin_query(a, "litellm_model_id", id, sizeof id));
}

static void model_info_v2(struct sy_store *st, struct sy_admin_ctx *a)
{
    (void)st;
    char m[512];
    model_info_list(a, sy_admin_query(a, "model", m, sizeof m), NULL);
}

/* One model group's summary over its deployments; shown (a wildcard group's
 * model, NULL: name) is the group named in the answer, and its price-table
 * entry comes before the deployments' own (the pattern has none). */
static void group_info(struct sy_buf *b, const struct sy_table *g, const char *name, const char *shown)
{
    const struct sy_price *sp = shown ? sy_price_find(NULL, shown) : NULL;
    double in = -1, out = -1, tpm = -1, rpm = -1;
    int64_t max_in = -1, max_out = -1;
    unsigned sup = 0;
    const char *mode = NULL;
    const char *prov[64];
    size_t nprov = 0;
    for (size_t i = 0; i < g->ndrts; i++) {
        const struct sy_deployment *d = g->drts[i].d;
        if (!servable(&g->drts[i]) || !d->model_name || strcmp(d->model_name, name) != 0)
            continue;
        const struct sy_price *p = sp ? sp : dep_price(d);
        const char *pv = p && p->litellm_provider ? p->litellm_provider : d->provider;
        int seen = 0;
        for (size_t j = 0; j < nprov && !seen; j++)
            seen = pv && strcmp(prov[j], pv) == 0;
        if (pv && !seen && nprov < 64)
            prov[nprov++] = pv;
        int64_t mi = d->max_input_tokens >= 0   ? d->max_input_tokens
                     : p && p->max_input_tokens ? p->max_input_tokens
                                                : -1;
        int64_t mo = d->max_output_tokens >= 0   ? d->max_output_tokens
                     : p && p->max_output_tokens ? p->max_output_tokens
                     : p && p->max_tokens        ? p->max_tokens
                                                 : -1;
        double ci = d->input_cost_per_token >= 0 ? d->input_cost_per_token : p ? p->input_cost_per_token : -1;
        double co = d->output_cost_per_token >= 0 ? d->output_cost_per_token : p ? p->output_cost_per_token : -1;
        if (mi > max_in)
            max_in = mi;
        if (mo > max_out)
            max_out = mo;
        if (ci > in)
            in = ci;
        if (co > out)
            out = co;
        if (d->tpm >= 0)
            tpm = (tpm < 0 ? 0 : tpm) + d->tpm;
        if (d->rpm >= 0)
            rpm = (rpm < 0 ? 0 : rpm) + d->rpm;
        if (p)
            sup |= p->supports;
        if (!mode)
            mode = d->mode ? d->mode : p ? p->mode : NULL;
    }
    SY_BUF_LIT(b, "{\"model_group\":");
    sy_admin_jstr(b, shown ? shown : name);
    SY_BUF_LIT(b, ",\"providers\":[");
    for (size_t j = 0; j < nprov; j++) {
        if (j)
            SY_BUF_LIT(b, ",");
        sy_admin_jstr(b, prov[j]);
    }
    SY_BUF_LIT(b, "],\"max_input_tokens\":");
    if (max_in >= 0)
        sy_admin_jnum(b, (double)max_in);
    else
        SY_BUF_LIT(b, "null");
    SY_BUF_LIT(b, ",\"max_output_tokens\":");
    if (max_out >= 0)
        sy_admin_jnum(b, (double)max_out);
    else
        SY_BUF_LIT(b, "null");
    SY_BUF_LIT(b, ",\"input_cost_per_token\":");
    sy_admin_jnum(b, in >= 0 ? in : 0.0);
    SY_BUF_LIT(b, ",\"output_cost_per_token\":");
    sy_admin_jnum(b, out >= 0 ? out : 0.0);
    SY_BUF_LIT(b, ",\"mode\":");
    sy_admin_jstr(b, mode ? mode : "chat");
    SY_BUF_LIT(b, ",\"tpm\":");
    if (tpm >= 0)
        sy_buf_printf(b, "%lld", (long long)tpm);
    else
        SY_BUF_LIT(b, "null");
    SY_BUF_LIT(b, ",\"rpm\":");
    if (rpm >= 0)
        sy_buf_printf(b, "%lld", (long long)rpm);
    else
        SY_BUF_LIT(b, "null");
    static const struct {
        unsigned bit;
        const char *name;
    } flags[] = {
        {SY_SUPPORTS_PARALLEL_FUNCTION_CALLING, "supports_parallel_function_calling"},
        {SY_SUPPORTS_VISION, "supports_vision"},
        {SY_SUPPORTS_FUNCTION_CALLING, "supports_function_calling"},
        {SY_SUPPORTS_REASONING, "supports_reasoning"},
        {SY_SUPPORTS_RESPONSE_SCHEMA, "supports_response_schema"},
        {SY_SUPPORTS_TOOL_CHOICE, "supports_tool_choice"},
    };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        sy_buf_printf(b, ",\"%s\":%s", flags[i].name, (sup & flags[i].bit) ? "true" : "false");
    SY_BUF_LIT(b, ",\"supported_openai_params\":null,\"configurable_clientside_auth_params\":null}");
}

/* 1 when a servable deployment is named exactly name. */
static int concrete(const struct sy_table *g, const char *name)
{
    for (size_t i = 0; i < g->ndrts; i++)
        if (servable(&g->drts[i]) && g->drts[i].d->model_name && strcmp(g->drts[i].d->model_name, name) == 0)
            return 1;
    return 0;
}

/* A wildcard group's known models, each as a model group of its own (as
 * LiteLLM's get_complete_model_list expands them for /model_group/info): the
 * names GET /v1/models lists for this caller that are not a configured
 * group and resolve to a wildcard group. */
static void wildcard_groups(struct sy_admin_ctx *a, const char *only, int *n)
{
    const struct sy_table *g = a->table;
    int any = 0;
    for (size_t i = 0; i < g->ngroups && !any; i++)
        any = g->groups[i].wildcard && g->groups[i].usable;
    if (!any)
        return;
    struct sy_buf list;
    sy_buf_init(&list, 64u << 20);
    sy_models_list_json(g, 0, 0, a->model_allowed, a->model_ud, &list);
    struct json_object *o = list.p ? json_tokener_parse(list.p) : NULL, *data;
    if (o && json_object_object_get_ex(o, "data", &data) && json_object_is_type(data, json_type_array))
        for (size_t i = 0, nd = json_object_array_length(data); i < nd; i++) {
            struct json_object *id;
            if (!json_object_object_get_ex(json_object_array_get_idx(data, i), "id", &id))
                continue;
            const char *name = json_object_get_string(id);
            if (!name || (only && strcmp(only, name) != 0) || concrete(g, name))
                continue;
            const struct sy_group *gr = sy_router_resolve(g, name, strlen(name));
            if (!gr || !gr->wildcard || !gr->usable)
                continue;
            if ((*n)++)
                SY_BUF_LIT(&a->out, ",");
            group_info(&a->out, g, gr->name, name);
        }
    json_object_put(o);
    sy_buf_free(&list);
}

static void model_group_info(struct sy_store *st, struct sy_admin_ctx *a)
{
    (void)st;
    const struct sy_table *g = a->table;
    char want[512];
    const char *only = sy_admin_query(a, "model_group", want, sizeof want);
    if (!g) {
        sy_admin_error(a, 500, "None", "None", "LLM Model List not loaded in");
        return;
    }
    SY_BUF_LIT(&a->out, "{\"data\":[");
    int n = 0;
    /* groups in the order their first deployment appears (router.get_model_names) */
    for (size_t i = 0; i < g->ndrts; i++) {
        const char *name = g->drts[i].d->model_name;
        if (!name || !visible(a, i) || (only && strcmp(only, name) != 0))
            continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = servable(&g->drts[j]) && g->drts[j].d->model_name && strcmp(g->drts[j].d->model_name, name) == 0;
        if (seen)
            continue;
        if (n++)
            SY_BUF_LIT(&a->out, ",");
        group_info(&a->out, g, name, NULL);
    }
    wildcard_groups(a, only, &n);
    SY_BUF_LIT(&a->out, "]}");
}

/* ---- database models (general_settings.store_model_in_db) ------------------------
 *
 * POST /model/new, POST /model/update, PATCH /model/{id}/update, POST
 * /model/delete write LiteLLM_ProxyModelTable as LiteLLM's
 * model_management_endpoints.py does: every string value of litellm_params
 * encrypted (admin/modeldb.h), model_info stored with its id, created_by /
 * updated_by the caller. Each change publishes a "models" invalidation:
 * stages/model_registry.c re-reads the table at once here, and on the other
 * instances through Redis (else within its 5 s poll). Proxy admins only. */

#define T_PM "\"LiteLLM_ProxyModelTable\""

_Atomic int sy_admin_store_model_in_db;

/* LiteLLM's HTTPException(detail={"error": msg}) re-raised as a
 * ProxyException: the message is the dict's Python repr. */
static void detail_error(struct sy_admin_ctx *a, int status, const char *msg)
{
    int dq = strchr(msg, '\'') != NULL;
    sy_admin_error(a, status, "auth_error", "None", "{'error': %s%s%s}", dq ? "\"" : "'", msg, dq ? "\"" : "'");
}

static int enabled(struct sy_admin_ctx *a)
{
    if (atomic_load(&sy_admin_store_model_in_db))
        return 1;
    detail_error(a, 500, "Set `'STORE_MODEL_IN_DB='True'` in your env to enable this feature.");
    return 0;
}

/* A config-file deployment has this id (it cannot be changed through the API). */
static int config_model(const struct sy_admin_ctx *a, const char *id)
{
    for (size_t i = 0; a->table && i < a->table->ndrts; i++) {
        const struct sy_deployment *d = a->table->drts[i].d;
        if (d->id && strcmp(d->id, id) == 0 && !(d->file && strcmp(d->file, SY_MODELDB_FILE) == 0))
            return 1;
    }
    return 0;
}

static int read_row(struct sy_store *st, const char *id, struct sy_admin_row *row)
{
    struct sy_sval p = sy_sv_text(id);
    memset(row, 0, sizeof *row);
    return sy_store_exec(st, "SELECT * FROM " T_PM " WHERE \"model_id\" = $1", 1, &p, sy_admin_row_cb, row);
}

/* Answer with the stored row (LiteLLM returns the LiteLLM_ProxyModelTable row). */
static void answer_row(struct sy_store *st, struct sy_admin_ctx *a, const char *id)
{
    struct sy_admin_row row;
    int rc = read_row(st, id, &row);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
    } else if (row.found) {
        sy_buf_reset(&a->out);
        sy_srow_json(&a->out, &row.r);
    }
    sy_admin_row_free(&row);
}

/* The entry the stored (encrypted) params make, checked as the config loader
 * would take it: 0, or -1 with a 400 written. */
static int check_entry(struct sy_store *st, struct sy_admin_ctx *a, const char *id, const char *name,
                       const char *enc_params, const char *info, const char *salt)
{
    json_object *co = NULL;
    char *creds = NULL;
    if (sy_credentials_load(st, salt, &co) == 0) /* litellm_credential_name resolves against them */
        creds = sy_modeldb_credential_list(co);
    json_object_put(co);
    struct sy_buf e;
    char err[512] = "";
    sy_buf_init(&e, 4u << 20);
    int rc = sy_modeldb_entry(id, name, enc_params, info, salt, &e, err, sizeof err);
    if (rc == 0 && sy_buf_failed(&e)) {
        snprintf(err, sizeof err, "out of memory");
        rc = -1;
    }
    if (rc == 0)
        rc = sy_modeldb_check(e.p, e.len, creds, err, sizeof err);
    sy_buf_free(&e);
    free(creds);
    if (rc != 0)
        sy_admin_error(a, 400, "auth_error", "None", "Authentication Error, invalid model: %s", err);
    return rc;
}

/* Stored params (encrypted) with the request's non-null values, encrypted, over them. */
static char *merge_params(const char *stored, json_object *upd, const char *salt)
{
    json_object *cur = stored ? json_tokener_parse(stored) : NULL;
    if (cur && json_object_is_type(cur, json_type_string)) {
        json_object *in = json_tokener_parse(json_object_get_string(cur));
        json_object_put(cur);
        cur = in;
    }
    if (!cur || !json_object_is_type(cur, json_type_object)) {
        json_object_put(cur);
        cur = json_object_new_object();
    }
    char *enc = upd ? sy_modeldb_encrypt_params(sy_admin_jtext(upd), salt) : strdup("{}");
    json_object *eo = enc ? json_tokener_parse(enc) : NULL;
    free(enc);
    char *out = NULL;
    if (eo) {
        json_object_object_foreach(eo, k, v) json_object_object_add(cur, k, json_object_get(v));
        out = strdup(sy_admin_jtext(cur));
    }
    json_object_put(eo);
    json_object_put(cur);
    return out;
}

static const char *salt_or_error(struct sy_admin_ctx *a)
{
    const char *salt = sy_secret_salt(a->master_key);
    if (!salt || !*salt)
        sy_admin_error(a, 500, "auth_error", "None",
                       "Authentication Error, no LITELLM_SALT_KEY or master key to encrypt litellm_params with");
    return salt && *salt ? salt : NULL;
}

static void model_new(struct sy_store *st, struct sy_admin_ctx *a)
{
    json_object *body = sy_admin_body(a);
    if (!body)
        return;
    const char *name = NULL, *model = NULL, *id = NULL;
    json_object *lp = NULL, *mi = NULL;
    if (sy_admin_get_str(a, body, "model_name", &name) == SY_AF_ERR ||
        sy_admin_get_obj(a, body, "litellm_params", &lp) == SY_AF_ERR ||
        sy_admin_get_obj(a, body, "model_info", &mi) == SY_AF_ERR)
        goto out;
    if (!name) {
        sy_admin_422(a, "model_name", "missing", "Field required", NULL);
        goto out;
    }
    if (!lp) {
        sy_admin_422(a, "litellm_params", "missing", "Field required", NULL);
        goto out;
    }
    if (sy_admin_get_str(a, lp, "model", &model) == SY_AF_ERR)
        goto out;
    if (!model) {
        sy_admin_422(a, "litellm_params.model", "missing", "Field required", NULL);
        goto out;
    }
    if (!enabled(a))
        goto out;
    const char *salt = salt_or_error(a);
    if (!salt)
        goto out;
    json_object *info = mi ? json_object_get(mi) : json_object_new_object();
    char uuid[37];
    json_object *idv;
    if (json_object_object_get_ex(info, "id", &idv) && json_object_is_type(idv, json_type_string) &&
        json_object_get_string_len(idv) > 0) {
        id = json_object_get_string(idv);
    } else {
        sy_admin_uuid(uuid);
        json_object_object_add(info, "id", json_object_new_string(uuid));
        id = uuid;
    }
    char *enc = sy_modeldb_encrypt_params(sy_admin_jtext(lp), salt);
    const char *info_text = sy_admin_jtext(info);
    if (!enc) {
        sy_admin_error(a, 500, "auth_error", "None", "Authentication Error, litellm_params could not be encrypted");
    } else if (config_model(a, id)) {
        detail_error(a, 400, "Model id already in the config: a database model must have its own id");
    } else if (check_entry(st, a, id, name, enc, info_text, salt) == 0) {
        char actor[256];
        snprintf(actor, sizeof actor, "%s", sy_admin_actor(a));
        char now[32];
        sy_admin_iso_now(a, now);
        struct sy_sval p[7] = {sy_sv_text(id),    sy_sv_text(name), sy_sv_json(enc),  sy_sv_json(info_text),
                               sy_sv_text(actor), sy_sv_ts(now),    sy_sv_text(actor)};
        int rc =
            sy_store_exec(st,
                          "INSERT INTO " T_PM " (\"model_id\", \"model_name\", \"litellm_params\", \"model_info\", "
                          "\"created_by\", \"created_at\", \"updated_by\", \"updated_at\") "
                          "VALUES ($1, $2, $3, $4, $5, $6, $7, $6)",
                          7, p, NULL, NULL);
        if (rc == SY_STORE_ECONFLICT) {
            detail_error(a, 400, "Model with this id already exists in db");
        } else if (rc < 0) {
            sy_admin_db_error(a, st, rc);
        } else {
            answer_row(st, a, id);
            sy_admin_invalidate(a, "models", "db");
        }
    }
    free(enc);
    json_object_put(info);
out:
    json_object_put(body);
}

/* Update model_id's row: name (NULL: keep), litellm_params merged, model_info
 * merged (NULL: keep). */
static void update_row(struct sy_store *st, struct sy_admin_ctx *a, const char *id, const char *name, json_object *lp,
                       json_object *mi, int patch)
{
    struct sy_admin_row row;
    int rc = read_row(st, id, &row);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
        sy_admin_row_free(&row);
        return;
    }
    if (!row.found) {
        if (config_model(a, id))
            detail_error(a, 400, "Can't edit model. Model in config. Store model in db via `/model/new`. to edit.");
        else if (patch)
            sy_admin_error(a, 404, "not_found", "model_id", "Model %s not found on proxy.", id);
        else
            sy_admin_error(a, 400, "auth_error", "None", "Authentication Error, model not found");
        sy_admin_row_free(&row);
        return;
    }
    const char *salt = salt_or_error(a);
    const char *cur_name = sy_srow_text(&row.r, "model_name");
    const char *cur_info = sy_srow_text(&row.r, "model_info");
    char *params = salt ? merge_params(sy_srow_text(&row.r, "litellm_params"), lp ? lp : NULL, salt) : NULL;
    json_object *info = cur_info ? json_tokener_parse(cur_info) : NULL;
    if (!info || !json_object_is_type(info, json_type_object)) {
        json_object_put(info);
        info = json_object_new_object();
    }
    if (mi) {
        json_object_object_foreach(mi, k, v)
        {
            if (strcmp(k, "id") != 0)
                json_object_object_add(info, k, json_object_get(v));
        }
    }
    json_object_object_add(info, "id", json_object_new_string(id));
    const char *new_name = name ? name : cur_name;
    if (salt && !params)
        sy_admin_error(a, 500, "auth_error", "None", "Authentication Error, litellm_params could not be encrypted");
    if (params && check_entry(st, a, id, new_name, params, sy_admin_jtext(info), salt) == 0) {
        char actor[256], now[32];
        snprintf(actor, sizeof actor, "%s", sy_admin_actor(a));
        sy_admin_iso_now(a, now);
        struct sy_sval p[6] = {sy_sv_text(id),     sy_sv_text(new_name),
                               sy_sv_json(params), sy_sv_json(sy_admin_jtext(info)),
                               sy_sv_text(actor),  sy_sv_ts(now)};
        rc = sy_store_exec(st,
                           "UPDATE " T_PM " SET \"model_name\" = $2, \"litellm_params\" = $3, \"model_info\" = $4, "
                           "\"updated_by\" = $5, \"updated_at\" = $6 WHERE \"model_id\" = $1",
                           6, p, NULL, NULL);
        if (rc < 0) {
            sy_admin_db_error(a, st, rc);
        } else {
            answer_row(st, a, id);
            sy_admin_invalidate(a, "models", "db");
        }
    }
    free(params);
    json_object_put(info);
    sy_admin_row_free(&row);
}

static void model_update(struct sy_store *st, struct sy_admin_ctx *a)
{
    json_object *body = sy_admin_body(a);
    if (!body)
        return;
    json_object *lp = NULL, *mi = NULL;
    const char *id = NULL;
    if (sy_admin_get_obj(a, body, "litellm_params", &lp) == SY_AF_ERR ||
        sy_admin_get_obj(a, body, "model_info", &mi) == SY_AF_ERR)
        goto out;
    if (!enabled(a))
        goto out;
    if (!mi) {
        sy_admin_error(a, 400, "auth_error", "None", "Authentication Error, model_info not provided");
        goto out;
    }
    if (sy_admin_get_str(a, mi, "id", &id) == SY_AF_ERR)
        goto out;
    if (!id) {
        sy_admin_error(a, 400, "auth_error", "None", "Authentication Error, model_info.id not provided");
        goto out;
    }
    if (!lp) { /* LiteLLM: "litellm_params not provided" once the row is found */
        struct sy_admin_row row;
        int rc = read_row(st, id, &row);
        int found = rc >= 0 && row.found;
        sy_admin_row_free(&row);
        if (found) {
            sy_admin_error(a, 400, "auth_error", "None", "Authentication Error, litellm_params not provided");
            goto out;
        }
    }
    /* the old endpoint changes litellm_params only (LiteLLM's update_model) */
    update_row(st, a, id, NULL, lp, NULL, 0);
out:
    json_object_put(body);
}

static void model_patch(struct sy_store *st, struct sy_admin_ctx *a)
{
    char id[256];
    const char *p = a->path + strlen("/model/");
    size_t n = strcspn(p, "/");
    if (n == 0 || n >= sizeof id) {
        sy_admin_error(a, 404, "not_found", "model_id", "Model not found on proxy.");
        return;
    }
    memcpy(id, p, n);
    id[n] = 0;
    json_object *body = sy_admin_body(a);
    if (!body)
        return;
    const char *name = NULL;
    json_object *lp = NULL, *mi = NULL;
    if (sy_admin_get_str(a, body, "model_name", &name) == SY_AF_ERR ||
        sy_admin_get_obj(a, body, "litellm_params", &lp) == SY_AF_ERR ||
        sy_admin_get_obj(a, body, "model_info", &mi) == SY_AF_ERR)
        goto out;
    if (enabled(a))
        update_row(st, a, id, name, lp, mi, 1);
out:
    json_object_put(body);
}

static void model_delete(struct sy_store *st, struct sy_admin_ctx *a)
{
    json_object *body = sy_admin_body(a);
    if (!body)
        return;
    const char *id = NULL;
    if (sy_admin_get_str(a, body, "id", &id) == SY_AF_ERR)
        goto out;
    if (!id) {
        sy_admin_422(a, "id", "missing", "Field required", NULL);
        goto out;
    }
    if (!enabled(a))
        goto out;
    struct sy_sval pv = sy_sv_text(id);
    int rc = sy_store_exec(st, "DELETE FROM " T_PM " WHERE \"model_id\" = $1", 1, &pv, NULL, NULL);
    if (rc < 0) {
        sy_admin_db_error(a, st, rc);
    } else if (rc == 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "Model with id=%s not found in db", id);
        detail_error(a, 400, msg);
    } else {
        sy_buf_reset(&a->out);
        SY_BUF_LIT(&a->out, "{\"message\":\"Model: ");
        sy_buf_json_escape(&a->out, id, strlen(id));
        SY_BUF_LIT(&a->out, " deleted successfully\"}");
        sy_admin_invalidate(a, "models", "db");
    }
out:
    json_object_put(body);
}

#define NR (SY_ADMIN_NODB | SY_ADMIN_READONLY | SY_ADMIN_SELF) /* any key: narrowed to its models */
const struct sy_admin_route sy_admin_model_routes[] = {
    {HTTP_GET, "/model/info", model_info_v1, NR},
    {HTTP_GET, "/v1/model/info", model_info_v1, NR},
    {HTTP_GET, "/v2/model/info", model_info_v2, NR},
    {HTTP_GET, "/model_group/info", model_group_info, NR},
    {HTTP_POST, "/model/new", model_new, 0},
    {HTTP_POST, "/model/update", model_update, 0},
    {HTTP_PATCH, "/model/*/update", model_patch, 0},
    {HTTP_POST, "/model/delete", model_delete, 0},
    {0, NULL, NULL, 0},
};
