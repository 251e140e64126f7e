/* test_conf.c - MCP servers compiled from config, aliases and DB rows
 * (src/mcp/conf.c): the documented corpus config, every field, transport
 * inference, auth types, os.environ/, LiteLLM's stable ids, errors (each
 * names the server and the field), DB rows (bad or clashing ones skipped with
 * a warning), sy_mcp_find, split_tool's longest prefix, fingerprints, and
 * sy_mcp_server_json never showing a secret. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/hex.h"
#include "mcp/mcp.h"

static struct sy_mcp_set *build(const char *servers, const char *aliases, const char *rows, struct sy_buf *warn)
{
    char err[512];
    struct sy_mcp_set *s = sy_mcp_set_build(servers, aliases, rows, err, sizeof err, warn);
    if (!s)
        fprintf(stderr, "unexpected error: %s\n", err);
    assert_non_null(s);
    return s;
}

/* The config is refused with an error containing each of the words. */
static void refused(const char *servers, const char *aliases, const char *w1, const char *w2)
{
    char err[512];
    struct sy_mcp_set *s = sy_mcp_set_build(servers, aliases, NULL, err, sizeof err, NULL);
    if (s) {
        fprintf(stderr, "accepted: %s\n", servers);
        sy_mcp_set_unref(s);
        fail();
    }
    if (!strstr(err, w1) || (w2 && !strstr(err, w2)))
        fprintf(stderr, "error \"%s\" lacks \"%s\" / \"%s\"\n", err, w1, w2 ? w2 : "");
    assert_non_null(strstr(err, w1));
    if (w2)
        assert_non_null(strstr(err, w2));
}

static const struct sy_mcp_server *by(const struct sy_mcp_set *s, const char *name)
{
    const struct sy_mcp_server *r = sy_mcp_find(s, name, strlen(name));
    assert_non_null(r);
    return r;
}

/* LiteLLM's _generate_stable_server_id, recomputed here. */
static void stable(const char *text, char out[33])
{
    unsigned char h[32];
    unsigned int hl;
    char hex[65];
    EVP_Digest(text, strlen(text), h, &hl, EVP_sha256(), NULL);
    sy_hex_encode(hex, h, 32);
    memcpy(out, hex, 32);
    out[32] = 0;
}

/* compat/litellm-configs/22-docs-mcp-servers.yaml as config.c hands it over */
static const char *DOCS =
    "{"
    "\"deepwiki_mcp\":{\"url\":\"https://mcp.deepwiki.com/mcp\"},"
    "\"zapier_mcp\":{\"url\":\"https://actions.zapier.com/mcp/sk-akxxxxx/sse\"},"
    "\"circleci_mcp\":{\"transport\":\"stdio\",\"command\":\"npx\",\"args\":[\"-y\","
    "\"@circleci/mcp-server-circleci\"],\"env\":{\"CIRCLECI_TOKEN\":\"your-circleci-token\","
    "\"CIRCLECI_BASE_URL\":\"https://circleci.com\"}},"
    "\"my_http_server\":{\"url\":\"https://my-mcp-server.com/mcp\",\"transport\":\"http\","
    "\"description\":\"My custom MCP server\",\"auth_type\":\"api_key\",\"auth_value\":\"abc123\"}"
    "}";
static const char *DOCS_ALIASES =
    "{\"github\":\"github_mcp_server\",\"zapier\":\"zapier_mcp_server\",\"deepwiki\":\"deepwiki_mcp_server\"}";

static void test_docs_config(void **state)
{
    (void)state;
    struct sy_buf warn;
    sy_buf_init(&warn, 4096);
    struct sy_mcp_set *s = build(DOCS, DOCS_ALIASES, NULL, &warn);
    assert_int_equal(warn.len, 0); /* starts without a warning */
    assert_int_equal(s->n, 4);
    const struct sy_mcp_server *d = &s->s[0], *z = &s->s[1], *c = &s->s[2], *m = &s->s[3];
    assert_string_equal(d->name, "deepwiki_mcp");
    assert_null(d->alias); /* the aliases name servers this config does not have */
    assert_string_equal(d->prefix, "deepwiki_mcp");
    assert_int_equal(d->transport, SY_MCP_HTTP);
    assert_int_equal(d->auth_type, SY_MCP_AUTH_NONE);
    assert_true(d->timeout_s == 60);
    assert_int_equal(z->transport, SY_MCP_SSE); /* a url ending in /sse */
    assert_int_equal(c->transport, SY_MCP_STDIO);
    assert_string_equal(c->command, "npx");
    assert_int_equal(c->nargs, 2);
    assert_string_equal(c->args[1], "@circleci/mcp-server-circleci");
    assert_int_equal(c->nenv, 2);
    assert_string_equal(c->env[0], "CIRCLECI_TOKEN=your-circleci-token");
    assert_string_equal(c->env[1], "CIRCLECI_BASE_URL=https://circleci.com");
    assert_int_equal(m->auth_type, SY_MCP_AUTH_API_KEY);
    assert_string_equal(m->auth_value, "abc123");
    assert_string_equal(m->description, "My custom MCP server");
    for (size_t i = 0; i < s->n; i++) {
        assert_int_equal(s->s[i].idx, i);
        assert_int_equal(strlen(s->s[i].fingerprint), 64);
        assert_false(s->s[i].from_db);
    }
    /* LiteLLM's ids: an explicit transport as written, a missing one as Python formats the enum */
    char want[33];
    stable("my_http_server|https://my-mcp-server.com/mcp|http|api_key|", want);
    assert_string_equal(m->id, want);
    stable("deepwiki_mcp|https://mcp.deepwiki.com/mcp|MCPTransport.http||", want);
    assert_string_equal(d->id, want);
    stable("circleci_mcp||stdio||", want);
    assert_string_equal(c->id, want);
    sy_mcp_set_unref(s);
    sy_buf_free(&warn);
}

static void test_aliases(void **state)
{
    (void)state;
    const char *cfg = "{\"github_mcp\":{\"url\":\"https://a/mcp\"},\"other\":{\"url\":\"https://b/mcp\"},"
                      "\"third\":{\"url\":\"https://c/mcp\",\"alias\":\"mine\"}}";
    /* the first alias naming a server wins; a later one naming it is left */
    struct sy_mcp_set *s = build(cfg, "{\"gh\":\"github_mcp\",\"gh2\":\"github_mcp\",\"t\":\"third\"}", NULL, NULL);
    assert_string_equal(s->s[0].alias, "gh");
    assert_string_equal(s->s[0].prefix, "gh");
    assert_null(s->s[1].alias);
    assert_string_equal(s->s[1].prefix, "other");
    assert_string_equal(s->s[2].alias, "mine"); /* its own alias wins over mcp_aliases */
    char want[33];
    stable("github_mcp|https://a/mcp|MCPTransport.http||gh", want);
    assert_string_equal(s->s[0].id, want);
    assert_ptr_equal(sy_mcp_find(s, "gh", 2), &s->s[0]);
    assert_ptr_equal(sy_mcp_find(s, "github_mcp", 10), &s->s[0]);
    assert_ptr_equal(sy_mcp_find(s, want, 32), &s->s[0]);
    assert_null(sy_mcp_find(s, "gh2", 3));
    assert_null(sy_mcp_find(s, "g", 1));
    assert_null(sy_mcp_find(NULL, "g", 1));
    sy_mcp_set_unref(s);
    /* spaces in an alias become "_" in the prefix */
    s = build("{\"x\":{\"url\":\"https://a/mcp\"}}", "{\"my tools\":\"x\"}", NULL, NULL);
    assert_string_equal(s->s[0].alias, "my tools");
    assert_string_equal(s->s[0].prefix, "my_tools");
    assert_ptr_equal(sy_mcp_find(s, "my_tools", 8), &s->s[0]);
    sy_mcp_set_unref(s);
    /* an alias clashing with another server's name */
    refused("{\"a\":{\"url\":\"https://a/mcp\"},\"b\":{\"url\":\"https://b/mcp\"}}", "{\"a\":\"b\"}", "mcp_servers.b",
            "also names server a");
    refused("{\"a\":{\"url\":\"https://a/mcp\"}}", "{\"bad-alias\":\"a\"}", "mcp_servers.a", "'-'");
    refused("{\"a\":{\"url\":\"https://a/mcp\"}}", "{\"x\":7}", "mcp_aliases", "string");
    refused("{\"a\":{\"url\":\"https://a/mcp\"}}", "[1]", "mcp_aliases", NULL);
}

static void test_fields(void **state)
{
    (void)state;
    setenv("SY_T_MCP_KEY", "secret-from-env", 1);
    setenv("SY_T_MCP_URL", "https://env.example/mcp", 1);
    const char *cfg =
        "{\"full\":{\"url\":\"os.environ/"
        "SY_T_MCP_URL\",\"transport\":\"streamable_http\",\"spec_version\":\"2025-03-26\","
        "\"auth_type\":\"bearer_token\",\"auth_value\":\"os.environ/SY_T_MCP_KEY\",\"description\":\"d\","
        "\"static_headers\":{\"X-Team\":\"blue\",\"X-Key\":\"os.environ/SY_T_MCP_KEY\"},"
        "\"extra_headers\":[\"x-trace-id\"],\"allowed_tools\":[\"a\",\"b\"],\"disallowed_tools\":\"c\","
        "\"access_groups\":[\"g1\"],\"allow_all_keys\":true,\"timeout\":12.5,"
        "\"mcp_info\":{\"server_name\":\"Full\",\"description\":\"ignored: description wins\","
        "\"mcp_server_cost_info\":{\"default_cost_per_query\":0.01,\"tool_name_to_cost_per_query\":{\"a\":0.5}}}},"
        "\"oa\":{\"url\":\"https://oa/mcp\",\"auth_type\":\"oauth2\",\"token_url\":\"https://idp/token\","
        "\"client_id\":\"cid\",\"client_secret\":\"os.environ/SY_T_MCP_KEY\",\"scopes\":[\"read\",\"write\"]},"
        "\"bas\":{\"url\":\"https://b/mcp\",\"auth_type\":\"basic\",\"auth_value\":\"user:pass\"},"
        "\"bas2\":{\"url\":\"https://b2/mcp\",\"auth_type\":\"basic\",\"auth_value\":\"dXNlcjpwYXNz\"},"
        "\"tok\":{\"url\":\"https://t/mcp\",\"auth_type\":\"token\",\"authentication_token\":\"ghp_x\"},"
        "\"au\":{\"url\":\"https://au/mcp\",\"auth_type\":\"authorization\",\"auth_value\":\"Custom abc\"},"
        "\"user_oauth\":{\"url\":\"https://uo/mcp\",\"auth_type\":\"oauth2\"},"
        "\"cmd\":{\"command\":\"/bin/srv\",\"args\":[\"--port\",8080]}"
        "}";
    struct sy_mcp_set *s = build(cfg, NULL, NULL, NULL);
    const struct sy_mcp_server *f = by(s, "full");
    assert_string_equal(f->url, "https://env.example/mcp");
    assert_int_equal(f->transport, SY_MCP_HTTP);
    assert_string_equal(f->spec_version, "2025-03-26");
    assert_int_equal(f->auth_type, SY_MCP_AUTH_BEARER);
    assert_string_equal(f->auth_value, "secret-from-env");
    assert_string_equal(f->description, "d");
    assert_string_equal(f->static_headers, "X-Team: blue\r\nX-Key: secret-from-env\r\n");
    assert_int_equal(f->nextra_headers, 1);
    assert_string_equal(f->extra_headers[0], "x-trace-id");
    assert_int_equal(f->nallowed_tools, 2);
    assert_int_equal(f->ndisallowed_tools, 1);
    assert_string_equal(f->disallowed_tools[0], "c");
    assert_int_equal(f->naccess_groups, 1);
    assert_true(f->allow_all_keys);
    assert_true(f->timeout_s == 12.5);
    assert_true(f->default_cost == 0.01);
    assert_int_equal(f->ntool_costs, 1);
    assert_string_equal(f->tool_costs[0].tool, "a");
    assert_true(f->tool_costs[0].cost == 0.5);
    const struct sy_mcp_server *o = by(s, "oa");
    assert_int_equal(o->auth_type, SY_MCP_AUTH_OAUTH2);
    assert_string_equal(o->token_url, "https://idp/token");
    assert_string_equal(o->client_id, "cid");
    assert_string_equal(o->client_secret, "secret-from-env");
    assert_string_equal(o->scopes, "read write");
    assert_string_equal(by(s, "bas")->auth_value, "dXNlcjpwYXNz");  /* encoded as LiteLLM's client does */
    assert_string_equal(by(s, "bas2")->auth_value, "dXNlcjpwYXNz"); /* already encoded: as is */
    assert_int_equal(by(s, "tok")->auth_type, SY_MCP_AUTH_AUTHORIZATION);
    assert_string_equal(by(s, "tok")->auth_value, "token ghp_x");
    assert_string_equal(by(s, "au")->auth_value, "Custom abc");
    assert_int_equal(by(s, "user_oauth")->auth_type, SY_MCP_AUTH_NONE); /* the caller's token, forwarded */
    const struct sy_mcp_server *c = by(s, "cmd");
    assert_int_equal(c->transport, SY_MCP_STDIO); /* a command without a url */
    assert_string_equal(c->args[1], "8080");
    sy_mcp_set_unref(s);
    /* empty and null inputs: an empty set */
    s = build(NULL, NULL, NULL, NULL);
    assert_int_equal(s->n, 0);
    sy_mcp_set_unref(s);
    s = build("{}", "{}", "[]", NULL);
    assert_int_equal(s->n, 0);
    sy_mcp_set_unref(s);
    s = build("null", "null", NULL, NULL);
    assert_int_equal(s->n, 0);
    sy_mcp_set_unref(s);
}

static void test_errors(void **state)
{
    (void)state;
    unsetenv("SY_T_MCP_UNSET");
    refused("{\"a\":{\"url\":\"os.environ/SY_T_MCP_UNSET\"}}", NULL, "mcp_servers.a", "SY_T_MCP_UNSET");
    refused("{\"a\":{\"url\":\"https://x/mcp\",\"auth_value\":\"os.environ/SY_T_MCP_UNSET\"}}", NULL, "auth_value",
            "SY_T_MCP_UNSET");
    refused("{\"my-server\":{\"url\":\"https://x/mcp\"}}", NULL, "mcp_servers.my-server", "'-'");
    refused("{\"a/b\":{\"url\":\"https://x/mcp\"}}", NULL, "mcp_servers.a/b", "character");
    refused("{\"\":{\"url\":\"https://x/mcp\"}}", NULL, "empty", NULL);
    refused("{\"a\":{\"url\":\"https://x/mcp\",\"alias\":\"x-y\"}}", NULL, "alias", "'-'");
    refused("{\"a\":{}}", NULL, "mcp_servers.a", "needs a url");
    refused("{\"a\":{\"transport\":\"stdio\"}}", NULL, "mcp_servers.a", "needs a command");
    refused("{\"a\":{\"transport\":\"websocket\",\"url\":\"https://x\"}}", NULL, "transport", "websocket");
    refused("{\"a\":{\"url\":\"ftp://x/mcp\"}}", NULL, "url", "http(s)");
    refused("{\"a\":{\"url\":\"https://x/m cp\"}}", NULL, "url", "space");
    refused("{\"a\":{\"url\":\"https://x/mcp\",\"auth_type\":\"aws_sigv4\"}}", NULL, "auth_type", "aws_sigv4");
    refused("{\"a\":{\"url\":\"https://x/mcp\",\"auth_type\":\"oauth2\",\"client_id\":\"c\"}}", NULL, "oauth2",
            "token_url");
    refused("{\"a\":{\"url\":\"https://x/mcp\",\"spec_version\":\"2023-01-01\"}}", NULL, "spec_version", NULL);
    refused("{\"a\":{\"url\":\"https://x/mcp\",\"timeout\":-1}}", NULL, "timeout", NULL);
    refused("{\"a\":{\"url\":\"https://x/mcp\",\"timeout\":\"soon\"}}", NULL, "timeout", NULL);
    refused("{\"a\":{\"url\":\"https://x/mcp\",\"allow_all_keys\":\"maybe\"}}", NULL, "allow_all_keys", NULL);
    refused("{\"a\":{\"url\":\"https://x/mcp\",\"args\":{\"x\":1}}}", NULL, "args", NULL);
    refused("{\"a\":{\"url\":\"https://x/mcp\",\"static_headers\":{\"Bad Name\":\"v\"}}}", NULL, "static_headers",
            NULL);
    refused("{\"a\":{\"url\":\"https://x/mcp\",\"static_headers\":{\"X\":\"v\\r\\nInjected: 1\"}}}", NULL,
            "static_headers", "line break");
    refused("{\"a\":{\"url\":\"https://x/mcp\",\"auth_value\":\"k\\nX: y\"}}", NULL, "auth_value", "line break");
    refused("{\"a\":{\"url\":\"https://x/mcp\",\"extra_headers\":[\"ok\",\"no:colon\"]}}", NULL, "extra_headers", NULL);
    refused("{\"a\":{\"command\":\"x\",\"env\":{\"A=B\":\"c\"}}}", NULL, "env", NULL);
    refused("{\"a\":{\"url\":\"https://x/mcp\",\"mcp_info\":{\"mcp_server_cost_info\":{\"default_cost_per_query\":"
            "-1}}}}",
            NULL, "default_cost_per_query", NULL);
    refused("{\"a\":{\"url\":\"https://x/mcp\",\"url\":7}}", NULL, "url", "string");
    refused("{\"a\":7}", NULL, "mcp_servers.a", "mapping");
    refused("[1]", NULL, "mcp_servers", "mapping");
    refused("{\"a\":", NULL, "mcp_servers", "JSON");
    refused("{\"a\":{\"url\":\"https://x/mcp\"},\"b\":{\"url\":\"https://y/mcp\",\"alias\":\"a\"}}", NULL,
            "mcp_servers.b", "also names server a");
    char long_name[300];
    memset(long_name, 'n', 200);
    long_name[200] = 0;
    char cfg[600];
    snprintf(cfg, sizeof cfg, "{\"%s\":{\"url\":\"https://x/mcp\"}}", long_name);
    refused(cfg, NULL, "longer than", NULL);
    /* a short error buffer is never overrun */
    char tiny[8];
    assert_null(sy_mcp_set_build("{\"a\":{}}", NULL, NULL, tiny, sizeof tiny, NULL));
    assert_true(strlen(tiny) < sizeof tiny);
    assert_null(sy_mcp_set_build("{\"a\":{}}", NULL, NULL, NULL, 0, NULL));
}

static void test_db_rows(void **state)
{
    (void)state;
    const char *rows =
        "["
        "{\"server_id\":\"11111111-aaaa\",\"server_name\":\"jira\",\"alias\":\"tickets\",\"url\":\"https://jira/mcp\","
        "\"transport\":\"http\",\"auth_type\":\"api_key\",\"credentials\":{\"auth_value\":\"k1\"},"
        "\"mcp_access_groups\":[\"dev\"],\"allowed_tools\":[\"get\"],\"extra_headers\":[],"
        "\"static_headers\":\"{\\\"X-A\\\":\\\"1\\\"}\",\"mcp_info\":{\"description\":\"Jira\"},\"allow_all_keys\":"
        "false,"
        "\"timeout\":null,\"env\":{},\"args\":[],\"command\":null},"
        "{\"server_id\":\"22222222-bbbb\",\"server_name\":\"idp\",\"url\":\"https://idp/mcp\",\"transport\":\"http\","
        "\"auth_type\":\"oauth2\",\"token_url\":\"https://idp/token\","
        "\"credentials\":\"{\\\"client_id\\\":\\\"c\\\",\\\"client_secret\\\":\\\"s\\\",\\\"scopes\\\":[\\\"a\\\","
        "\\\"b\\\"]}\"},"
        "{\"server_id\":\"33333333-cccc\",\"url\":\"https://noname/sse\"},"
        "{\"server_id\":\"44444444-dddd\",\"server_name\":\"gh\",\"url\":\"https://other/mcp\"},"
        "{\"server_id\":\"55555555-eeee\",\"server_name\":\"bad\",\"transport\":\"http\"},"
        "{\"server_name\":\"noid\",\"url\":\"https://x/mcp\"},"
        "{\"server_id\":\"66666666-ffff\",\"server_name\":\"dup\",\"alias\":\"tickets\",\"url\":\"https://d/mcp\"},"
        "{\"server_id\":\"77777777-0000\",\"server_name\":\"has-dash\",\"url\":\"https://d/mcp\"},"
        "7"
        "]";
    struct sy_buf warn;
    sy_buf_init(&warn, 1 << 16);
    struct sy_mcp_set *s = build("{\"gh\":{\"url\":\"https://gh/mcp\"}}", NULL, rows, &warn);
    assert_int_equal(s->n, 4); /* gh (config), jira, idp, the nameless one */
    const struct sy_mcp_server *j = by(s, "tickets");
    assert_true(j->from_db);
    assert_string_equal(j->id, "11111111-aaaa");
    assert_string_equal(j->name, "jira");
    assert_string_equal(j->prefix, "tickets");
    assert_string_equal(j->auth_value, "k1");
    assert_string_equal(j->static_headers, "X-A: 1\r\n");
    assert_string_equal(j->description, "Jira");
    assert_true(j->timeout_s == 60);
    assert_ptr_equal(by(s, "11111111-aaaa"), j);
    const struct sy_mcp_server *i = by(s, "idp");
    assert_int_equal(i->auth_type, SY_MCP_AUTH_OAUTH2);
    assert_string_equal(i->client_secret, "s");
    assert_string_equal(i->scopes, "a b");
    const struct sy_mcp_server *n = by(s, "33333333-cccc");
    assert_string_equal(n->prefix, "33333333-cccc"); /* no name or alias: the id */
    assert_int_equal(n->transport, SY_MCP_SSE);
    assert_int_equal(s->s[3].idx, 3);
    /* each skipped row says why */
    assert_non_null(strstr(warn.p, "44444444-dddd"));
    assert_non_null(strstr(warn.p, "config wins"));
    assert_non_null(strstr(warn.p, "55555555-eeee"));
    assert_non_null(strstr(warn.p, "no server_id"));
    assert_non_null(strstr(warn.p, "66666666-ffff"));
    assert_non_null(strstr(warn.p, "77777777-0000"));
    assert_non_null(strstr(warn.p, "not an object"));
    sy_mcp_set_unref(s);
    /* rows that are not an array: a warning, the config's servers stay */
    sy_buf_reset(&warn);
    s = build("{\"gh\":{\"url\":\"https://gh/mcp\"}}", NULL, "{\"x\":1}", &warn);
    assert_int_equal(s->n, 1);
    assert_true(warn.len > 0);
    sy_mcp_set_unref(s);
    sy_buf_free(&warn);
}

static void test_split_tool(void **state)
{
    (void)state;
    const char *rows = "[{\"server_id\":\"abc-def\",\"url\":\"https://u/mcp\"}]";
    struct sy_mcp_set *s =
        build("{\"abc\":{\"url\":\"https://a/mcp\"},\"ab\":{\"url\":\"https://b/mcp\"}}", NULL, rows, NULL);
    const char *tool;
    size_t tl;
    const char *name = "abc-search-all";
    const struct sy_mcp_server *r = sy_mcp_split_tool(s, name, strlen(name), &tool, &tl);
    assert_string_equal(r->name, "abc");
    assert_int_equal(tl, strlen("search-all"));
    assert_memory_equal(tool, "search-all", tl);
    name = "ab-x";
    r = sy_mcp_split_tool(s, name, strlen(name), &tool, &tl);
    assert_string_equal(r->name, "ab");
    assert_memory_equal(tool, "x", 1);
    /* the longest prefix: the nameless DB server "abc-def" over "abc" */
    name = "abc-def-run";
    r = sy_mcp_split_tool(s, name, strlen(name), &tool, &tl);
    assert_string_equal(r->id, "abc-def");
    assert_int_equal(tl, 3);
    assert_memory_equal(tool, "run", 3);
    /* no tool after the separator, no separator, no such prefix */
    assert_null(sy_mcp_split_tool(s, "abc-", 4, &tool, &tl));
    assert_null(sy_mcp_split_tool(s, "abc", 3, &tool, &tl));
    assert_null(sy_mcp_split_tool(s, "abcd-x", 6, &tool, &tl));
    assert_null(sy_mcp_split_tool(s, "a-x", 3, &tool, &tl));
    assert_null(sy_mcp_split_tool(s, "", 0, &tool, &tl));
    assert_null(sy_mcp_split_tool(NULL, "ab-x", 4, &tool, &tl));
    /* len bounds the name: a longer buffer is not read past len */
    r = sy_mcp_split_tool(s, "ab-xyz", 4, &tool, &tl);
    assert_string_equal(r->name, "ab");
    assert_int_equal(tl, 1);
    sy_mcp_set_unref(s);
}

static void test_fingerprint(void **state)
{
    (void)state;
    struct sy_mcp_set *a = build("{\"x\":{\"url\":\"https://a/mcp\",\"auth_type\":\"api_key\",\"auth_value\":\"1\","
                                 "\"allowed_tools\":[\"t\"],\"timeout\":5}}",
                                 NULL, NULL, NULL);
    struct sy_mcp_set *b =
        build("{\"x\":{\"url\":\"https://a/mcp\",\"auth_type\":\"api_key\",\"auth_value\":\"1\"}}", NULL, NULL, NULL);
    struct sy_mcp_set *c =
        build("{\"x\":{\"url\":\"https://a/mcp\",\"auth_type\":\"api_key\",\"auth_value\":\"2\"}}", NULL, NULL, NULL);
    struct sy_mcp_set *d = build("{\"x\":{\"command\":\"a\",\"args\":[\"b c\"]}}", NULL, NULL, NULL);
    struct sy_mcp_set *e = build("{\"x\":{\"command\":\"a\",\"args\":[\"b\",\"c\"]}}", NULL, NULL, NULL);
    /* tool lists and timeouts do not shape the connection; credentials and args do */
    assert_string_equal(a->s[0].fingerprint, b->s[0].fingerprint);
    assert_string_not_equal(b->s[0].fingerprint, c->s[0].fingerprint);
    assert_string_not_equal(d->s[0].fingerprint, e->s[0].fingerprint);
    /* references: a set lives until its last unref */
    sy_mcp_set_ref(a);
    sy_mcp_set_unref(a);
    assert_string_equal(a->s[0].name, "x");
    sy_mcp_set_unref(a);
    sy_mcp_set_unref(b);
    sy_mcp_set_unref(c);
    sy_mcp_set_unref(d);
    sy_mcp_set_unref(e);
    sy_mcp_set_unref(NULL);
}

static void test_server_json(void **state)
{
    (void)state;
    setenv("SY_T_MCP_KEY", "secret-from-env", 1);
    struct sy_mcp_set *s =
        build("{\"full\":{\"url\":\"https://f/mcp\",\"auth_type\":\"bearer_token\",\"auth_value\":\"os.environ/"
              "SY_T_MCP_KEY\","
              "\"static_headers\":{\"X-Key\":\"hdr-secret\"},\"description\":\"D\",\"alias\":\"ff\",\"access_groups\":["
              "\"g\"],"
              "\"mcp_info\":{\"mcp_server_cost_info\":{\"default_cost_per_query\":0.25}}},"
              "\"st\":{\"command\":\"srv\",\"env\":{\"TOKEN\":\"env-secret\"}},"
              "\"oa\":{\"url\":\"https://oa/mcp\",\"auth_type\":\"oauth2\",\"token_url\":\"https://idp/t\","
              "\"client_id\":\"cid\",\"client_secret\":\"client-secret\"}}",
              NULL, NULL, NULL);
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    for (size_t i = 0; i < s->n; i++) {
        sy_buf_reset(&b);
        sy_mcp_server_json(&s->s[i], &b);
        assert_false(sy_buf_failed(&b));
        assert_null(strstr(b.p, "secret"));
        assert_true(b.p[0] == '{' && b.p[b.len - 1] == '}');
    }
    sy_buf_reset(&b);
    sy_mcp_server_json(&s->s[0], &b);
    assert_non_null(strstr(b.p, "\"server_name\":\"full\""));
    assert_non_null(strstr(b.p, "\"alias\":\"ff\""));
    assert_non_null(strstr(b.p, "\"transport\":\"http\""));
    assert_non_null(strstr(b.p, "\"auth_type\":\"bearer_token\""));
    assert_non_null(strstr(b.p, "\"mcp_access_groups\":[\"g\"]"));
    assert_non_null(strstr(b.p, "\"X-Key\":\"********\""));
    assert_non_null(strstr(b.p, "\"default_cost_per_query\":0.25"));
    assert_non_null(strstr(b.p, "\"credentials\":null"));
    sy_buf_reset(&b);
    sy_mcp_server_json(&s->s[1], &b);
    assert_non_null(strstr(b.p, "\"transport\":\"stdio\""));
    assert_non_null(strstr(b.p, "\"TOKEN\":\"********\""));
    assert_non_null(strstr(b.p, "\"auth_type\":null"));
    sy_mcp_set_unref(s);
    sy_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_docs_config), cmocka_unit_test(test_aliases),     cmocka_unit_test(test_fields),
        cmocka_unit_test(test_errors),      cmocka_unit_test(test_db_rows),     cmocka_unit_test(test_split_tool),
        cmocka_unit_test(test_fingerprint), cmocka_unit_test(test_server_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
