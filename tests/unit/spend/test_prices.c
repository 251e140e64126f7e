/* test_prices.c - unit tests for src/spend/prices.c: the built-in table, every
 * lookup rule of sy_price_find (provider prefix, stripping, Azure, Bedrock
 * region prefixes and ":0" versions, dates), user files that override and add
 * entries, and files that must be refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "spend/spend.h"

int sy_prices_load_buffer(const char *json, size_t n, char *err, size_t errlen);

static char tmpdir[256];

static const char *write_tmp(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static int setup(void **st)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/sy_prices_XXXXXX", t && *t ? t : "/tmp");
    assert_non_null(mkdtemp(tmpdir));
    char err[256];
    assert_int_equal(sy_prices_load(NULL, err, sizeof err), 0);
    return 0;
}

static int teardown(void **st)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    (void)!system(cmd);
    return 0;
}

#define KEY(prov, model) (sy_price_find((prov), (model)) ? sy_price_find((prov), (model))->key : "(null)")

static void builtin_table(void **st)
{
    size_t n = sy_prices_count();
    assert_true(n >= 2900); /* LiteLLM's whole map */
    assert_null(sy_price_at(n));
    for (size_t i = 0; i < n; i++) {
        const struct sy_price *p = sy_price_at(i);
        assert_non_null(p);
        assert_ptr_equal(sy_price_find(NULL, p->key), p); /* every key finds itself */
        assert_true(p->litellm_provider[0]);
    }
    /* LiteLLM's file metadata is not a model */
    assert_null(sy_price_exact("sample_spec"));
    assert_null(sy_price_exact("last_updated"));
    assert_null(sy_price_exact("fallback_generalizations"));
    const struct sy_price *p = sy_price_find(NULL, "gpt-4o");
    assert_non_null(p);
    assert_string_equal(p->litellm_provider, "openai");
    assert_string_equal(p->mode, "chat");
    assert_true(p->input_cost_per_token == 2.5e-6);
    assert_true(p->output_cost_per_token == 1e-5);
    assert_true(p->cache_read_input_token_cost == 1.25e-6);
    assert_true(p->cache_creation_input_token_cost < 0); /* not in the table */
    assert_true(p->output_cost_per_reasoning_token < 0);
    assert_int_equal(p->max_input_tokens, 128000);
    assert_int_equal(p->max_output_tokens, 16384);
    assert_int_equal(p->tier_threshold, 0);
    assert_true(p->supports & SY_SUPPORTS_FUNCTION_CALLING);
    assert_true(p->supports & SY_SUPPORTS_VISION);
    assert_true(p->supports & SY_SUPPORTS_PARALLEL_FUNCTION_CALLING);
    assert_false(p->supports & SY_SUPPORTS_REASONING);
    /* the entry's JSON text, for /model/info */
    struct json_object *o = json_tokener_parse(p->json);
    assert_non_null(o);
    struct json_object *v;
    assert_true(json_object_object_get_ex(o, "max_input_tokens", &v));
    assert_int_equal(json_object_get_int(v), 128000);
    json_object_put(o);

    p = sy_price_find(NULL, "claude-sonnet-4-5-20250929");
    assert_non_null(p);
    assert_true(p->cache_creation_input_token_cost == 3.75e-6);
    assert_true(p->cache_read_input_token_cost == 3e-7);
    assert_true(p->supports & SY_SUPPORTS_PROMPT_CACHING);
    assert_true(p->supports & SY_SUPPORTS_REASONING);

    p = sy_price_find(NULL, "gemini/gemini-2.5-pro");
    assert_non_null(p);
    assert_int_equal(p->tier_threshold, 200000);
    assert_true(p->tier_input == 2.5e-6);
    assert_true(p->tier_output == 1.5e-5);
    assert_true(p->tier_cache_read == 2.5e-7);
    assert_true(p->tier_cache_write < 0);
    /* 1-hour cache writes */
    p = sy_price_find("anthropic", "claude-sonnet-4-5");
    assert_true(p->cache_creation_input_token_cost_above_1hr == 6e-6);
    p = sy_price_find(NULL, "gpt-4o");
    assert_true(p->cache_creation_input_token_cost_above_1hr < 0);

    p = sy_price_find(NULL, "text-embedding-3-small");
    assert_string_equal(p->mode, "embedding");
    assert_true(p->input_cost_per_token == 2e-8);

    p = sy_price_find("ollama", "llama3.1");
    assert_non_null(p);
    assert_true(p->input_cost_per_token == 0 && p->output_cost_per_token == 0);
}

static void lookup_order(void **st)
{
    /* 1. <provider>/<model> first */
    assert_string_equal(KEY("gemini", "gemini-2.5-pro"), "gemini/gemini-2.5-pro");
    assert_string_equal(KEY("vertex_ai", "gemini-2.5-pro"), "gemini-2.5-pro"); /* LiteLLM's Vertex key is bare */
    assert_string_equal(KEY(NULL, "vertex_ai/gemini-2.5-pro"), "gemini-2.5-pro");
    assert_string_equal(KEY("azure", "gpt-4o-mini"), "azure/gpt-4o-mini");
    assert_true(sy_price_find("azure", "gpt-4o-mini")->input_cost_per_token == 1.65e-7);
    /* the model already carries the provider: not doubled */
    assert_string_equal(KEY("gemini", "gemini/gemini-2.5-flash"), "gemini/gemini-2.5-flash");
    /* 2. <model> */
    assert_string_equal(KEY(NULL, "gpt-4o"), "gpt-4o");
    assert_string_equal(KEY("openai", "gpt-4o"), "gpt-4o");
    assert_string_equal(KEY(NULL, "gemini-2.5-pro"), "gemini-2.5-pro"); /* vertex's bare key */
    assert_string_equal(KEY("anthropic", "claude-sonnet-4-5-20250929"), "claude-sonnet-4-5-20250929");
    assert_string_equal(KEY("together_ai", "meta-llama/Llama-3.3-70B-Instruct-Turbo"),
                        "together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo");
    /* 3. provider prefix stripped */
    assert_string_equal(KEY(NULL, "openai/gpt-4o"), "gpt-4o");
    assert_string_equal(KEY("openai", "openai/gpt-4.1-mini"), "gpt-4.1-mini");
    assert_string_equal(KEY(NULL, "anthropic/claude-3-haiku-20240307"), "claude-3-haiku-20240307");
    assert_string_equal(KEY("cohere", "command-r-plus"), "command-r-plus");
    /* 4. date suffix stripped */
    assert_string_equal(KEY(NULL, "gpt-4o-mini-2099-01-01"), "gpt-4o-mini");
    assert_string_equal(KEY("openai", "openai/gpt-4.1-2030-12-31"), "gpt-4.1");
    assert_string_equal(KEY(NULL, "claude-opus-4-5-20991231"), "claude-opus-4-5");
    /* an exact dated key wins over the stripped one */
    assert_string_equal(KEY(NULL, "gpt-4o-2024-05-13"), "gpt-4o-2024-05-13");
    assert_true(sy_price_find(NULL, "gpt-4o-2024-05-13")->input_cost_per_token == 5e-6);
    /* vertex's "@date" */
    assert_string_equal(KEY("vertex_ai", "claude-sonnet-4@20250514"), "vertex_ai/claude-sonnet-4@20250514");
    assert_string_equal(KEY(NULL, "vertex_ai/claude-opus-4-5@20991231"), "vertex_ai/claude-opus-4-5");
    /* unknown */
    assert_null(sy_price_find(NULL, "no-such-model"));
    assert_null(sy_price_find("openai", "gpt-99"));
    assert_null(sy_price_find(NULL, ""));
    assert_null(sy_price_find(NULL, NULL));
    assert_null(sy_price_find("azure", "my-deployment-name"));
}

static void lookup_azure_bedrock(void **st)
{
    /* Azure deployments: azure/<model> */
    assert_string_equal(KEY(NULL, "azure/gpt-4o"), "azure/gpt-4o");
    assert_string_equal(KEY("azure", "azure/o3-mini"), "azure/o3-mini");
    assert_string_equal(KEY("azure", "gpt-35-turbo"), "azure/gpt-35-turbo");
    assert_string_equal(KEY("azure", "gpt-4o-2024-05-13"), "azure/gpt-4o-2024-05-13");
    /* an Azure model the table lacks under azure/ falls back to OpenAI's */
    assert_string_equal(KEY("azure", "chatgpt-4o-latest"), "chatgpt-4o-latest");

    /* Bedrock ids, with or without bedrock/ */
    assert_string_equal(KEY("bedrock", "anthropic.claude-3-haiku-20240307-v1:0"),
                        "anthropic.claude-3-haiku-20240307-v1:0");
    assert_string_equal(KEY(NULL, "bedrock/anthropic.claude-3-7-sonnet-20250219-v1:0"),
                        "anthropic.claude-3-7-sonnet-20250219-v1:0");
    /* region prefixes stripped when the map has no entry for the profile */
    assert_string_equal(KEY("bedrock", "ca.anthropic.claude-opus-4-6-v1"), "anthropic.claude-opus-4-6-v1");
    assert_string_equal(KEY(NULL, "bedrock/us-gov.anthropic.claude-opus-4-6-v1"), "anthropic.claude-opus-4-6-v1");
    /* the map's own region entries */
    assert_string_equal(KEY("bedrock", "us.anthropic.claude-3-7-sonnet-20250219-v1:0"),
                        "us.anthropic.claude-3-7-sonnet-20250219-v1:0");
    assert_string_equal(KEY(NULL, "bedrock/eu.anthropic.claude-sonnet-4-20250514-v1:0"),
                        "eu.anthropic.claude-sonnet-4-20250514-v1:0");
    /* ... but a region entry of its own wins (geo profiles cost 10% more) */
    assert_string_equal(KEY("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
                        "us.anthropic.claude-sonnet-4-5-20250929-v1:0");
    assert_true(sy_price_find("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0")->input_cost_per_token ==
                3.3e-6);
    /* ":0" kept first, then tried without */
    assert_string_equal(KEY("bedrock", "amazon.titan-embed-text-v2:0"), "amazon.titan-embed-text-v2:0");
    assert_string_equal(KEY("bedrock", "amazon.titan-embed-text-v1:0"), "amazon.titan-embed-text-v1");
    assert_string_equal(KEY(NULL, "bedrock/us.amazon.titan-embed-text-v1:0"), "amazon.titan-embed-text-v1");
    assert_string_equal(KEY("bedrock", "cohere.embed-english-v3"), "cohere.embed-english-v3");
    assert_string_equal(KEY("bedrock", "meta.llama3-3-70b-instruct-v1:0"), "meta.llama3-3-70b-instruct-v1:0");
    /* ollama tags */
    assert_string_equal(KEY(NULL, "ollama/llama3.1:8b"), "ollama/llama3.1");
    assert_string_equal(KEY("ollama", "llama3:latest"), "ollama/llama3");
    assert_string_equal(KEY("ollama", "llama3:70b"), "ollama/llama3:70b");
}

/* The names coding agents and LiteLLM configs use (get_model_info's forms). */
static void lookup_agent_forms(void **st)
{
    /* dated and undated Anthropic ids, with and without anthropic/ */
    assert_string_equal(KEY("anthropic", "claude-sonnet-4-5-20250929"), "claude-sonnet-4-5-20250929");
    assert_string_equal(KEY(NULL, "anthropic/claude-sonnet-4-5"), "claude-sonnet-4-5");
    assert_string_equal(KEY("anthropic", "anthropic/claude-opus-4-6"), "claude-opus-4-6");
    assert_true(sy_price_find(NULL, "anthropic/claude-sonnet-4-5")->input_cost_per_token == 3e-6);
    /* Bedrock: a region profile priced on its own wins; the bare id otherwise */
    assert_string_equal(KEY(NULL, "bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
                        "us.anthropic.claude-sonnet-4-5-20250929-v1:0");
    assert_true(sy_price_find(NULL, "bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0")->input_cost_per_token ==
                3.3e-6);
    assert_string_equal(KEY("bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0"),
                        "anthropic.claude-sonnet-4-5-20250929-v1:0");
    /* Vertex partner models: "@<date>" */
    assert_string_equal(KEY("vertex_ai", "claude-sonnet-4-5@20250929"), "vertex_ai/claude-sonnet-4-5@20250929");
    assert_string_equal(KEY(NULL, "vertex_ai/claude-sonnet-4-5@20250929"), "vertex_ai/claude-sonnet-4-5@20250929");
    assert_string_equal(KEY(NULL, "vertex_ai/claude-sonnet-4-5"), "vertex_ai/claude-sonnet-4-5");
    /* Gemini API */
    assert_string_equal(KEY(NULL, "gemini/gemini-2.5-pro"), "gemini/gemini-2.5-pro");
    assert_string_equal(KEY("gemini", "gemini-2.5-flash"), "gemini/gemini-2.5-flash");
    /* OpenRouter keys carry the upstream's org */
    assert_string_equal(KEY(NULL, "openrouter/anthropic/claude-sonnet-4.5"), "openrouter/anthropic/claude-sonnet-4.5");
    assert_string_equal(KEY("openrouter", "openai/gpt-4o"), "openrouter/openai/gpt-4o");
    /* today's OpenAI models, dated and prefixed */
    assert_string_equal(KEY("openai", "gpt-5.5"), "gpt-5.5");
    assert_string_equal(KEY(NULL, "openai/gpt-5.1-codex"), "gpt-5.1-codex");
    assert_string_equal(KEY(NULL, "gpt-5-mini-2099-12-31"), "gpt-5-mini");
    /* Azure: a deployment name is unknown; its base_model is what prices it
     * (router/table.c looks base_model up first) */
    assert_null(sy_price_find("azure", "my-gpt-deployment"));
    assert_string_equal(KEY("azure", "azure/gpt-4.1"), "azure/gpt-4.1");
    /* capability bits */
    assert_int_equal(sy_price_supports("anthropic", "claude-sonnet-4-5-20250929", SY_SUPPORTS_REASONING), 1);
    assert_int_equal(sy_price_supports("openai", "gpt-4o", SY_SUPPORTS_REASONING), 0);
    assert_int_equal(sy_price_supports("openai", "gpt-5.5", SY_SUPPORTS_REASONING), 1);
    assert_int_equal(sy_price_supports("openai", "no-such-model-x", SY_SUPPORTS_REASONING), -1);
    /* hostile names: no crash, no false hit */
    char longname[2048];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    assert_null(sy_price_find("openai", longname));
    assert_null(sy_price_find(NULL, "/"));
    assert_null(sy_price_find(NULL, "us."));
    assert_null(sy_price_find(NULL, "claude-sonnet-4-5@"));
    assert_null(sy_price_find(NULL, ":0"));
}

/* LITELLM_MODEL_COST_MAP_URL: a file (path or file://) replaces the
 * built-in map; an http(s) URL is not fetched. */
static void env_map(void **st)
{
    char note[512], err[256];
    unsetenv("LITELLM_LOCAL_MODEL_COST_MAP");
    unsetenv("LITELLM_MODEL_COST_MAP_URL");
    assert_null(sy_prices_env_map(note, sizeof note));
    assert_string_equal(note, "");
    setenv("LITELLM_MODEL_COST_MAP_URL", "https://raw.githubusercontent.com/BerriAI/litellm/main/x.json", 1);
    assert_null(sy_prices_env_map(note, sizeof note));
    assert_non_null(strstr(note, "not fetched"));
    setenv("LITELLM_MODEL_COST_MAP_URL", "file:///etc/prices.json", 1);
    assert_string_equal(sy_prices_env_map(note, sizeof note), "/etc/prices.json");
    setenv("LITELLM_MODEL_COST_MAP_URL", "file://localhost/etc/p.json", 1);
    assert_string_equal(sy_prices_env_map(note, sizeof note), "/etc/p.json");
    setenv("LITELLM_MODEL_COST_MAP_URL", "file://relative.json", 1);
    assert_null(sy_prices_env_map(note, sizeof note));
    assert_true(note[0]);
    setenv("LITELLM_MODEL_COST_MAP_URL", "/srv/prices.json", 1);
    assert_string_equal(sy_prices_env_map(note, sizeof note), "/srv/prices.json");
    setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True", 1);
    assert_null(sy_prices_env_map(note, sizeof note));
    unsetenv("LITELLM_LOCAL_MODEL_COST_MAP");
    unsetenv("LITELLM_MODEL_COST_MAP_URL");

    /* a map of its own replaces the built-in one; the overlay merges over it */
    const char *map =
        write_tmp("map.json", "{\"mine-1\": {\"litellm_provider\": \"openai\", \"input_cost_per_token\": 1e-6,"
                              " \"output_cost_per_token\": 2e-6},"
                              " \"gpt-4o\": {\"input_cost_per_token\": 7e-6}}");
    char mapcopy[512];
    snprintf(mapcopy, sizeof mapcopy, "%s", map);
    const char *over = write_tmp("over.json", "{\"mine-1\": {\"output_cost_per_token\": 3e-6}}");
    assert_int_equal(sy_prices_load_map(mapcopy, over, err, sizeof err), 0);
    assert_int_equal(sy_prices_count(), 2);
    assert_null(sy_price_find(NULL, "claude-sonnet-4-5")); /* not in this map */
    assert_true(sy_price_find(NULL, "gpt-4o")->input_cost_per_token == 7e-6);
    assert_true(sy_price_find(NULL, "gpt-4o")->output_cost_per_token < 0); /* not merged with the built-in */
    assert_true(sy_price_find(NULL, "mine-1")->input_cost_per_token == 1e-6);
    assert_true(sy_price_find(NULL, "mine-1")->output_cost_per_token == 3e-6);
    /* a broken map: -1, the table in use stays */
    const char *bad = write_tmp("badmap.json", "{\"x\": ");
    assert_int_equal(sy_prices_load_map(bad, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "badmap.json"));
    assert_int_equal(sy_prices_count(), 2);
    /* map alone */
    assert_int_equal(sy_prices_load_map(mapcopy, NULL, err, sizeof err), 0);
    assert_true(sy_price_find(NULL, "mine-1")->output_cost_per_token == 2e-6);
    /* back to the built-in map */
    assert_int_equal(sy_prices_load_map(NULL, NULL, err, sizeof err), 0);
    assert_true(sy_prices_count() > 2900);
    assert_true(sy_price_find(NULL, "gpt-4o")->input_cost_per_token == 2.5e-6);
}

static void user_file_overrides_and_adds(void **st)
{
    char err[256] = "";
    size_t base = sy_prices_count();
    const struct sy_price *before = sy_price_find(NULL, "gpt-4o");
    const char *path =
        write_tmp("prices.json", "{\n"
                                 "  \"sample_spec\": {\"input_cost_per_token\": 1},\n"
                                 "  \"gpt-4o\": {\"input_cost_per_token\": 1e-6},\n"
                                 "  \"my-model\": {\"litellm_provider\": \"openai\", \"mode\": \"chat\",\n"
                                 "     \"input_cost_per_token\": \"3e-7\", \"output_cost_per_token\": 6e-7,\n"
                                 "     \"max_output_tokens\": 1000, \"supports_vision\": true},\n"
                                 "  \"broken\": 5,\n"
                                 "  \"also-broken\": [1, 2]\n"
                                 "}\n");
    assert_int_equal(sy_prices_load(path, err, sizeof err), 0);
    assert_int_equal(sy_prices_count(), base + 1);
    assert_null(sy_price_find(NULL, "sample_spec"));
    assert_null(sy_price_find(NULL, "broken"));
    const struct sy_price *p = sy_price_find(NULL, "gpt-4o");
    assert_ptr_not_equal(p, before);
    assert_true(p->input_cost_per_token == 1e-6);  /* overridden */
    assert_true(p->output_cost_per_token == 1e-5); /* merged from the built-in entry */
    assert_int_equal(p->max_output_tokens, 16384);
    assert_string_equal(p->litellm_provider, "openai");
    assert_non_null(strstr(p->json, "\"input_cost_per_token\":1e-6"));
    assert_non_null(strstr(p->json, "\"max_output_tokens\":16384"));
    /* the pointer handed out before the reload is still valid and unchanged */
    assert_true(before->input_cost_per_token == 2.5e-6);
    assert_string_equal(before->key, "gpt-4o");
    p = sy_price_find("openai", "my-model");
    assert_non_null(p);
    assert_true(p->input_cost_per_token == 3e-7); /* numeric strings accepted, as LiteLLM */
    assert_true(p->output_cost_per_token == 6e-7);
    assert_int_equal(p->max_output_tokens, 1000);
    assert_int_equal(p->supports, SY_SUPPORTS_VISION);
    /* other entries untouched, iteration sees the override in place */
    assert_true(sy_price_find(NULL, "gpt-4o-mini")->input_cost_per_token == 1.5e-7);
    int seen = 0;
    for (size_t i = 0; i < sy_prices_count(); i++)
        if (!strcmp(sy_price_at(i)->key, "gpt-4o")) {
            seen++;
            assert_true(sy_price_at(i)->input_cost_per_token == 1e-6);
        }
    assert_int_equal(seen, 1);

    /* a bad reload keeps the last good table */
    const char *bad = write_tmp("bad.json", "{\"gpt-4o\": {\"input_cost_per_token\": 2e-6},");
    assert_int_equal(sy_prices_load(bad, err, sizeof err), -1);
    assert_non_null(strstr(err, "bad.json"));
    assert_true(sy_price_find(NULL, "gpt-4o")->input_cost_per_token == 1e-6);

    /* back to the built-in table */
    assert_int_equal(sy_prices_load(NULL, err, sizeof err), 0);
    assert_int_equal(sy_prices_count(), base);
    assert_null(sy_price_find(NULL, "my-model"));
    assert_ptr_equal(sy_price_find(NULL, "gpt-4o"), before);
}

static void bad_files(void **st)
{
    char err[256];
    size_t base = sy_prices_count();
    struct {
        const char *name, *text;
    } cases[] = {
        {"trunc.json", "{\"a\": {\"input_cost_per_token\": 1"},
        {"array.json", "[{\"input_cost_per_token\": 1}]"},
        {"string.json", "\"hello\""},
        {"empty.json", ""},
        {"trailing.json", "{} x"},
        {"garbage.json", "not json at all"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        err[0] = 0;
        const char *path = write_tmp(cases[i].name, cases[i].text);
        assert_int_equal(sy_prices_load(path, err, sizeof err), -1);
        assert_non_null(strstr(err, cases[i].name));
        assert_int_equal(sy_prices_count(), base);
        assert_non_null(sy_price_find(NULL, "gpt-4o"));
    }
    char missing[600];
    snprintf(missing, sizeof missing, "%s/does-not-exist.json", tmpdir);
    assert_int_equal(sy_prices_load(missing, err, sizeof err), -1);
    assert_non_null(strstr(err, "does-not-exist.json"));
    /* an empty object is fine: the built-in table alone */
    assert_int_equal(sy_prices_load(write_tmp("empty-obj.json", "{ }\n"), err, sizeof err), 0);
    assert_int_equal(sy_prices_count(), base);
    assert_int_equal(sy_prices_load(NULL, err, sizeof err), 0);
}

static void load_buffer(void **st)
{
    char err[256];
    const char *j =
        "{\"x/y\": {\"input_cost_per_token\": 1e-6, \"output_cost_per_token\": 2e-6,"
        " \"input_cost_per_token_above_128k_tokens\": 2e-6, \"input_cost_per_token_above_200k_tokens\": 4e-6,"
        " \"input_cost_per_token_above_64k_tokens_priority\": 9, \"max_tokens\": 77}}";
    assert_int_equal(sy_prices_load_buffer(j, strlen(j), err, sizeof err), 0);
    const struct sy_price *p = sy_price_find("x", "y");
    assert_non_null(p);
    assert_string_equal(p->litellm_provider, "");
    assert_int_equal(p->tier_threshold, 128000); /* the lowest tier; service-tier keys ignored */
    assert_true(p->tier_input == 2e-6);
    assert_true(p->tier_output < 0);
    assert_int_equal(p->max_tokens, 77);
    assert_int_equal(sy_prices_load_buffer("{", 1, err, sizeof err), -1);
    assert_non_null(sy_price_find("x", "y"));
    assert_int_equal(sy_prices_load(NULL, err, sizeof err), 0);
    assert_null(sy_price_find("x", "y"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(builtin_table),
        cmocka_unit_test(lookup_order),
        cmocka_unit_test(lookup_azure_bedrock),
        cmocka_unit_test(lookup_agent_forms),
        cmocka_unit_test(env_map),
        cmocka_unit_test(user_file_overrides_and_adds),
        cmocka_unit_test(bad_files),
        cmocka_unit_test(load_buffer),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
