/* test_corpus.c - loads every entry point of the LiteLLM config corpus
 * (tests/config/litellm-configs, a copy of real config.yaml files) and checks
 * deployment counts against the corpus README plus LiteLLM quirks per file.
 *
 * argv[1] is the corpus directory. Every os.environ/VAR named in an entry's
 * files is set to "dummy-VAR" first, so loads see no unset variables; a VAR
 * ending in _PORT gets "6379" instead (router_settings.redis_port must be a
 * number: a non-numeric port is a load error, LiteLLM's Redis client fails too)
 * and REDIS_URL gets "redis://dummy-REDIS_URL" (a URL that parses).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "config/config.h"
#include "core/log.h"

static const char *corpus_dir;

struct entry {
    const char *path;   /* relative to the corpus dir */
    size_t deployments; /* README table */
};

static const struct entry entries[] = {
    {"01-proxy-server-config.yaml", 28},
    {"02-new-secret-config-content-filter.yaml", 4},
    {"03-super-secret-config.yaml", 12},
    {"04-otel-guardrails-tags.yaml", 7},
    {"05-pass-through-endpoints.yaml", 7},
    {"06-oai-misc-batch-files.yaml", 5},
    {"07-azure-underscore-ints.yaml", 2},
    {"08-tool-permission-guardrail.yaml", 1},
    {"09-langfuse-bare-model.yaml", 1},
    {"10-reject-clientside-tags-db.yaml", 1},
    {"11-env-vars-fireworks-s3-logging.yaml", 4},
    {"12-s3-cache-cloudflare-azure.yaml", 1},
    {"13-legacy-guardrails-in-litellm-settings.yaml", 3},
    {"14-custom-logger-string-callback.yaml", 2},
    {"15-many-deployments-model-info.yaml", 21},
    {"16-include-multiple/config_with_multiple_includes.yaml", 2},
    {"17-ibm-guardrails-only.yaml", 0},
    {"18-custom-secret-manager.yaml", 2},
    {"19-helm-chart-proxy-config.yaml", 2},
    {"20-docs-fallbacks-router.yaml", 5},
    {"21-docs-provider-budget-routing.yaml", 1},
    {"22-docs-mcp-servers.yaml", 1},
    {"23-docs-qdrant-semantic-cache.yaml", 2},
    {"24-docs-prod-settings.yaml", 1},
    {"25-docs-k8s-configmap.yaml", 1},
    {"26-docs-hosted-vllm.yaml", 2},
    {"27-aws-multi-provider-gateway.yaml", 111},
    {"28-onestack-include/config.yml", 195},
    {"29-clickhouse-bedrock.yaml", 3},
    {"30-balatrollm-openrouter-defaults.yaml", 6},
    {"31-gapminder-provider-wildcards.yaml", 3},
    {"32-issue-8332-openai-vertex.yaml", 3},
    {"33-cirisproxy-fallbacks-retry-policy.yaml", 17},
    {"34-llm-root-vllm-shell-vars.yaml", 3},
    {"35-observable-vllm-stack.yaml", 2},
    {"36-litellm-gke-vertex-safety.yaml", 3},
    {"37-dry-agent-env-model.yaml", 2},
    {"38-oss-llmops-no-model-list.yaml", 0},
    {"39-ollama-openwebui-redis-cache.yaml", 2},
};

/* setenv every os.environ/NAME found in the file's text */
static void set_env_refs_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    for (char *p = strstr(text, "os.environ/"); p; p = strstr(p + 1, "os.environ/")) {
        char *s = p + 11, *e = s;
        while ((*e >= 'A' && *e <= 'Z') || (*e >= 'a' && *e <= 'z') || (*e >= '0' && *e <= '9') || *e == '_')
            e++;
        if (e == s)
            continue;
        char name[256], val[300];
        snprintf(name, sizeof name, "%.*s", (int)(e - s), s);
        size_t nl = strlen(name);
        if (nl >= 5 && strcmp(name + nl - 5, "_PORT") == 0)
            snprintf(val, sizeof val, "6379");
        else if (strcmp(name, "REDIS_URL") == 0)
            snprintf(val, sizeof val, "redis://dummy-%s", name);
        else
            snprintf(val, sizeof val, "dummy-%s", name);
        setenv(name, val, 1);
    }
}

static void set_env_refs(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return;
    if (S_ISREG(st.st_mode)) {
        set_env_refs_file(path);
        return;
    }
    DIR *d = opendir(path);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
        set_env_refs(sub);
    }
    closedir(d);
}

static struct sy_config *load(const char *rel)
{
    char path[4096], dir[4096];
    snprintf(path, sizeof path, "%s/%s", corpus_dir, rel);
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strchr(rel, '/');
    if (slash) /* a directory entry: every file in it */
        snprintf(dir, sizeof dir, "%s/%.*s", corpus_dir, (int)(slash - rel), rel);
    set_env_refs(dir);
    struct sy_config *c = NULL;
    char err[512] = "";
    int rc = sy_config_load(path, &c, err, sizeof err);
    if (rc != 0)
        fail_msg("%s: %s", rel, err);
    assert_non_null(c);
    return c;
}

static const struct sy_deployment *find(const struct sy_config *c, const char *name, size_t nth)
{
    for (size_t i = 0; i < c->n_deployments; i++)
        if (strcmp(c->deployments[i].model_name, name) == 0 && nth-- == 0)
            return &c->deployments[i];
    return NULL;
}

static void test_all_entries(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof entries / sizeof *entries; i++) {
        struct sy_config *c = load(entries[i].path);
        if (c->n_deployments != entries[i].deployments)
            fail_msg("%s: %zu deployments, README says %zu", entries[i].path, c->n_deployments, entries[i].deployments);
        for (size_t j = 0; j < c->n_deployments; j++) {
            const struct sy_deployment *d = &c->deployments[j];
            assert_non_null(d->model_name);
            assert_non_null(d->id);
            assert_non_null(d->provider);
            assert_non_null(d->mode);
            assert_true(d->line > 0);
        }
        FILE *devnull = fopen("/dev/null", "w");
        sy_config_print(c, devnull);
        fclose(devnull);
        sy_config_unref(c);
    }
}

static void test_07_underscore_ints(void **state)
{
    (void)state;
    struct sy_config *c = load("07-azure-underscore-ints.yaml");
    assert_true(c->deployments[0].tpm == 20000);
    assert_true(c->deployments[1].tpm == 100000);
    assert_true(c->deployments[0].stream_timeout_s == 0.5);
    assert_true(c->deployments[0].timeout_s == 5);
    assert_int_equal(c->deployments[0].max_retries, 4);
    assert_string_equal(c->deployments[0].api_version, "2023-05-15");
    assert_string_equal(c->deployments[0].api_key, "dummy-AZURE_API_KEY");
    assert_string_equal(c->deployments[0].provider, "azure");
    assert_string_equal(c->deployments[0].upstream_model, "chatgpt-v-2");
    assert_true(c->deployments[0].rpm < 0);
    sy_config_unref(c);
}

static void test_11_duplicate_key_keeps_last(void **state)
{
    (void)state;
    struct sy_config *c = load("11-env-vars-fireworks-s3-logging.yaml");
    /* success_callback: ["prometheus"] is overridden by the later ["s3"] */
    assert_int_equal(c->prometheus, 0);
    assert_int_equal(c->n_callbacks, 1);
    assert_string_equal(c->callbacks[0], "s3");
    assert_true(c->n_warnings > 0);
    int dup = 0;
    for (int i = 0; sy_config_warning(c, i); i++)
        dup |= strstr(sy_config_warning(c, i), "duplicate key 'success_callback'") != NULL;
    assert_true(dup);
    assert_string_equal(c->deployments[0].api_key, "dummy-AZURE_GPT_4O");
    assert_string_equal(sy_deployment_param(&c->deployments[0], "deployment_id"), "gpt-4o-mini");
    sy_config_unref(c);
}

static void test_28_include_anchors(void **state)
{
    (void)state;
    struct sy_config *c = load("28-onestack-include/config.yml");
    assert_int_equal(c->n_deployments, 195);
    /* only models/glm.yml's router_settings (fallbacks only) is left */
    assert_int_equal(c->router_num_retries, -1);
    assert_string_equal(c->routing_strategy, "simple-shuffle");
    /* glm-4.5 entries are <<: *anchor merges */
    const struct sy_deployment *d = find(c, "glm-4.5", 0);
    assert_non_null(d);
    assert_string_equal(d->provider, "deepinfra");
    assert_string_equal(d->upstream_model, "zai-org/GLM-4.5");
    assert_true(d->weight == 1);
    assert_string_equal(d->credential_name, "deepinfra_credential");
    assert_string_equal(d->api_key, "dummy-DEEPINFRA_API_KEY"); /* from credential_list */
    d = find(c, "glm-4.5", 1);
    assert_non_null(d);
    assert_string_equal(d->model, "openai/glm-4.5");
    assert_string_equal(d->api_base, "https://api.z.ai/api/paas/v4");
    assert_true(d->weight == 1000);
    /* same params as glm-4.5-zai but another group: another id */
    const struct sy_deployment *z = find(c, "glm-4.5-zai", 0);
    assert_non_null(z);
    assert_string_not_equal(z->id, d->id);
    assert_string_equal(c->master_key, "dummy-LITELLM_MASTER_KEY");
    assert_int_equal(c->drop_params, 1);
    assert_true(c->request_timeout_s == 300);
    assert_int_equal(c->prometheus, 0);
    sy_config_unref(c);
}

static void test_14_string_callback(void **state)
{
    (void)state;
    struct sy_config *c = load("14-custom-logger-string-callback.yaml");
    assert_int_equal(c->n_callbacks, 1);
    assert_string_equal(c->callbacks[0], "custom_callbacks.my_custom_logger");
    assert_int_equal(c->prometheus, 0);
    assert_string_equal(c->deployments[0].id, "gm");
    assert_string_equal(c->deployments[0].model_name, "Azure OpenAI GPT-4 Canada");
    assert_string_equal(c->deployments[0].provider, "openai");
    assert_string_equal(c->deployments[0].upstream_model, "gpt-4.1-nano");
    assert_true(c->deployments[0].input_cost_per_token == 0.0002);
    assert_string_equal(c->deployments[1].mode, "embedding");
    sy_config_unref(c);
}

static void test_03_unquoted_api_version(void **state)
{
    (void)state;
    struct sy_config *c = load("03-super-secret-config.yaml");
    int seen = 0;
    for (size_t i = 0; i < c->n_deployments; i++)
        if (c->deployments[i].api_version) {
            assert_string_equal(c->deployments[i].api_version, "2024-02-15-preview");
            seen++;
        }
    assert_true(seen >= 3);
    sy_config_unref(c);
}

static void test_misc_entries(void **state)
{
    (void)state;
    struct sy_config *c = load("16-include-multiple/config_with_multiple_includes.yaml");
    assert_string_equal(c->deployments[0].model_name, "included-model-1");
    assert_string_equal(c->deployments[1].model_name, "included-model-2");
    assert_string_equal(c->deployments[1].upstream_model, "gpt-3.5-turbo");
    assert_int_equal(c->prometheus, 1);
    sy_config_unref(c);

    c = load("09-langfuse-bare-model.yaml");
    assert_null(c->deployments[0].model);
    assert_string_equal(c->deployments[0].provider, "openai");
    assert_int_equal(c->drop_params, 1);
    sy_config_unref(c);

    c = load("01-proxy-server-config.yaml");
    assert_int_equal(c->prometheus, 1);
    sy_config_unref(c);

    c = load("37-dry-agent-env-model.yaml");
    assert_string_equal(c->deployments[0].model, "dummy-OPENAI_MODEL_ASSISTANT");
    assert_string_equal(c->deployments[0].provider, "openai");
    assert_true(c->deployments[0].rpm == 6);
    sy_config_unref(c);

    c = load("39-ollama-openwebui-redis-cache.yaml");
    assert_string_equal(c->deployments[0].provider, "ollama");
    assert_string_equal(c->deployments[0].upstream_model, "llama3.2:latest");
    assert_string_equal(c->deployments[0].api_base, "http://ollama:11434");
    sy_config_unref(c);

    c = load("30-balatrollm-openrouter-defaults.yaml");
    assert_string_equal(c->deployments[0].api_key, "dummy-OPENROUTER_API_KEY");
    assert_string_equal(sy_deployment_param(&c->deployments[0], "reasoning"), "{\"effort\": \"medium\"}");
    /* two identical deployments share LiteLLM's generated id */
    assert_string_equal(c->deployments[4].id, c->deployments[5].id);
    assert_int_equal(strlen(c->deployments[4].id), 64);
    sy_config_unref(c);

    c = load("31-gapminder-provider-wildcards.yaml");
    assert_true(c->n_deployments == 3);
    sy_config_unref(c);

    c = load("34-llm-root-vllm-shell-vars.yaml");
    assert_string_equal(c->deployments[0].upstream_model, "${VLLM_MODEL:-Qwen/Qwen2.5-3B-Instruct}");
    assert_string_equal(c->routing_strategy, "least-busy");
    assert_int_equal(c->router_num_retries, 2);
    assert_true(c->router_timeout_s == 120);
    assert_int_equal(c->num_retries, 3);
    sy_config_unref(c);

    c = load("35-observable-vllm-stack.yaml");
    assert_int_equal(c->prometheus, 1);
    assert_int_equal(c->require_auth_for_metrics_endpoint, 0);
    assert_true(c->request_timeout_s == 600);
    sy_config_unref(c);
}

static int has_warning(const struct sy_config *c, const char *frag)
{
    for (int i = 0; sy_config_warning(c, i); i++)
        if (strstr(sy_config_warning(c, i), frag))
            return 1;
    return 0;
}

/* Router settings read from the corpus (retry/allowed-fails policies,
 * fallbacks, aliases, Redis from os.environ/, health checks). */
static void test_router_settings(void **state)
{
    (void)state;
    struct sy_config *c = load("33-cirisproxy-fallbacks-retry-policy.yaml");
    const struct sy_router_config *r = &c->router;
    assert_string_equal(c->routing_strategy, "simple-shuffle");
    assert_int_equal(c->router_num_retries, 2);
    assert_true(r->retry_after_s == 1);
    assert_int_equal(r->has_retry_policy, 1);
    assert_int_equal(r->retry_policy[SY_EXC_TIMEOUT], 1);
    assert_int_equal(r->retry_policy[SY_EXC_RATE_LIMIT], 2);
    assert_int_equal(r->retry_policy[SY_EXC_INTERNAL_SERVER], 1);
    assert_int_equal(r->retry_policy[SY_EXC_BAD_REQUEST], -1);
    assert_int_equal(r->has_allowed_fails_policy, 1);
    assert_int_equal(r->allowed_fails_policy[SY_EXC_TIMEOUT], 3);
    assert_int_equal(r->allowed_fails_policy[SY_EXC_RATE_LIMIT], 5);
    assert_int_equal(r->allowed_fails_policy[SY_EXC_INTERNAL_SERVER], 3);
    assert_true(r->cooldown_time_s == 60);
    assert_int_equal(r->n_fallbacks, 6);
    assert_string_equal(r->fallbacks[0].group, "default");
    assert_int_equal(r->fallbacks[0].n, 2);
    assert_string_equal(r->fallbacks[0].to[0], "groq/llama-4-maverick");
    assert_string_equal(r->fallbacks[5].group, "groq/llama-3.3-70b");
    assert_string_equal(r->fallbacks[5].to[1], "openai/gpt-4o-mini");
    /* 8 warnings before the router settings were read; the 5 "router_settings.*: not
     * supported yet" ones are gone and every fallback group exists: 3 left */
    assert_int_equal(c->n_warnings, 3);
    assert_false(has_warning(c, "router_settings"));
    assert_true(has_warning(c, "callback 'billing_callback.billing_callback_instance' is a Python object"));
    assert_true(has_warning(c, "general_settings.custom_auth: 'custom_auth.user_api_key_auth' is a Python hook"));
    assert_true(has_warning(c, "switchyard cannot run Python, ignored"));
    assert_true(has_warning(c, "master_key does not start with 'sk-'"));
    sy_config_unref(c);

    c = load("01-proxy-server-config.yaml");
    r = &c->router;
    assert_string_equal(c->routing_strategy, "usage-based-routing-v2");
    assert_int_equal(r->enable_pre_call_checks, 1);
    assert_int_equal(r->n_aliases, 1);
    assert_string_equal(r->aliases[0].alias, "my-special-fake-model-alias-name");
    assert_string_equal(r->aliases[0].group, "fake-openai-endpoint-3");
    assert_int_equal(r->n_context_window_fallbacks, 1);
    assert_string_equal(r->context_window_fallbacks[0].group, "gpt-3.5-turbo");
    assert_string_equal(r->redis_host, "dummy-REDIS_HOST");
    assert_int_equal(r->redis_port, 6379);
    assert_string_equal(r->redis_password, "dummy-REDIS_PASSWORD");
    assert_false(has_warning(c, "router_settings"));
    sy_config_unref(c);

    c = load("20-docs-fallbacks-router.yaml");
    r = &c->router;
    assert_int_equal(r->n_fallbacks, 1); /* litellm_settings */
    assert_string_equal(r->fallbacks[0].group, "zephyr-beta");
    assert_string_equal(r->fallbacks[0].to[0], "gpt-4o");
    assert_int_equal(r->n_context_window_fallbacks, 2);
    assert_int_equal(r->allowed_fails, 3);
    assert_int_equal(r->n_aliases, 1);
    assert_string_equal(r->aliases[0].group, "gpt-4o");
    assert_string_equal(r->redis_host, "<your redis host>");
    assert_int_equal(r->redis_port, 1992);
    sy_config_unref(c);

    c = load("28-onestack-include/config.yml");
    r = &c->router;
    /* models/glm.yml's router_settings replaced config.yml's; its fallbacks win over litellm_settings' */
    assert_int_equal(r->n_fallbacks, 2);
    assert_string_equal(r->fallbacks[0].group, "glm-4.5");
    assert_int_equal(r->fallbacks[1].n, 4);
    assert_int_equal(r->allowed_fails, -1);
    assert_true(r->cooldown_time_s < 0);
    const struct sy_deployment *d = NULL;
    for (size_t i = 0; i < c->n_deployments && !d; i++)
        if (c->deployments[i].max_parallel_requests >= 0)
            d = &c->deployments[i];
    assert_non_null(d); /* models/glm.yml sets litellm_params.max_parallel_requests */
    sy_config_unref(c);

    c = load("29-clickhouse-bedrock.yaml");
    assert_true(c->router.cooldown_time_s == 0);
    assert_false(has_warning(c, "cooldown_time"));
    sy_config_unref(c);

    c = load("35-observable-vllm-stack.yaml");
    assert_true(c->router.health_check_interval_s == 30);
    assert_int_equal(c->router.background_health_checks, 0);
    assert_int_equal(c->router.enable_pre_call_checks, 1);
    sy_config_unref(c);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    corpus_dir = argv[1];
    sy_log_level = SY_LOG_ERROR; /* the corpus warns a lot; keep the test log short */
    unsetenv("LITELLM_MASTER_KEY");
    unsetenv("REDIS_URL"); /* the loader falls back to them when a config names no Redis */
    unsetenv("REDIS_HOST");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_entries),
        cmocka_unit_test(test_07_underscore_ints),
        cmocka_unit_test(test_11_duplicate_key_keeps_last),
        cmocka_unit_test(test_28_include_anchors),
        cmocka_unit_test(test_14_string_callback),
        cmocka_unit_test(test_03_unquoted_api_version),
        cmocka_unit_test(test_misc_entries),
        cmocka_unit_test(test_router_settings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
