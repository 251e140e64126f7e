/* test_rpc.c - JSON-RPC messages as src/mcp/rpc.c reads them: requests,
 * notifications, responses, batches; the strictness rules (jsonrpc "2.0",
 * ids, methods, params, duplicate keys decoded, depth, size), the writers,
 * sy_mcp_member and version negotiation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "mcp/mcp.h"

static int parse(const char *body, size_t max, struct sy_mcp_batch *b, int *code, char *err)
{
    return sy_mcp_rpc_parse(body, strlen(body), max, b, code, err, 256);
}

/* The body is refused with this JSON-RPC code. */
static void refused(const char *body, int want)
{
    struct sy_mcp_batch b;
    int code = 0;
    char err[256];
    if (parse(body, 8, &b, &code, err) == 0) {
        fprintf(stderr, "accepted: %s\n", body);
        fail();
    }
    if (code != want)
        fprintf(stderr, "%s: code %d (%s), want %d\n", body, code, err, want);
    assert_int_equal(code, want);
    assert_true(err[0] != 0);
    assert_null(b.m);
    assert_null(b.mem);
}

static void span_is(const char *p, size_t n, const char *want)
{
    assert_non_null(p);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(p, want, n);
}

static void test_request(void **state)
{
    (void)state;
    struct sy_mcp_batch b;
    int code;
    char err[256];
    const char *body = " {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                       "\"params\":{\"name\":\"gh-search\",\"arguments\":{\"q\":\"x\"}}} ";
    assert_int_equal(parse(body, 8, &b, &code, err), 0);
    assert_int_equal(b.n, 1);
    assert_false(b.is_batch);
    assert_int_equal(b.m[0].kind, SY_MCP_REQUEST);
    assert_string_equal(b.m[0].method, "tools/call");
    span_is(b.m[0].id, b.m[0].id_len, "7");
    span_is(b.m[0].params, b.m[0].params_len, "{\"name\":\"gh-search\",\"arguments\":{\"q\":\"x\"}}");
    sy_mcp_batch_free(&b);
    assert_null(b.mem);

    /* string ids, escaped method names, no params, negative id */
    assert_int_equal(parse("{\"id\":\"a\\\"b\",\"method\":\"tools\\/list\",\"jsonrpc\":\"2.0\"}", 8, &b, &code, err),
                     0);
    span_is(b.m[0].id, b.m[0].id_len, "\"a\\\"b\"");
    assert_string_equal(b.m[0].method, "tools/list");
    assert_null(b.m[0].params);
    sy_mcp_batch_free(&b);
    assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":-3,\"method\":\"ping\"}", 8, &b, &code, err), 0);
    span_is(b.m[0].id, b.m[0].id_len, "-3");
    sy_mcp_batch_free(&b);
    /* keys spelled with escapes are the same keys */
    assert_int_equal(parse("{\"json\\u0072pc\":\"2.0\",\"\\u0069d\":1,\"method\":\"p\\u00e9\"}", 8, &b, &code, err), 0);
    assert_string_equal(b.m[0].method, "p\xc3\xa9");
    sy_mcp_batch_free(&b);
}

static void test_notification_and_response(void **state)
{
    (void)state;
    struct sy_mcp_batch b;
    int code;
    char err[256];
    assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", 8, &b, &code, err), 0);
    assert_int_equal(b.m[0].kind, SY_MCP_NOTIFICATION);
    assert_null(b.m[0].id);
    sy_mcp_batch_free(&b);

    assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{\"roots\":[]}}", 8, &b, &code, err), 0);
    assert_int_equal(b.m[0].kind, SY_MCP_RESPONSE);
    assert_false(b.m[0].is_error);
    span_is(b.m[0].result, b.m[0].result_len, "{\"roots\":[]}");
    sy_mcp_batch_free(&b);

    /* an error response may carry a null id (the request could not be read) */
    assert_int_equal(
        parse("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"x\"}}", 8, &b, &code, err), 0);
    assert_true(b.m[0].is_error);
    assert_null(b.m[0].id);
    span_is(b.m[0].result, b.m[0].result_len, "{\"code\":-32600,\"message\":\"x\"}");
    sy_mcp_batch_free(&b);
}

static void test_batch(void **state)
{
    (void)state;
    struct sy_mcp_batch b;
    int code;
    char err[256];
    const char *body = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} , "
                       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}},"
                       "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}]";
    assert_int_equal(parse(body, 3, &b, &code, err), 0);
    assert_true(b.is_batch);
    assert_int_equal(b.n, 3);
    assert_int_equal(b.m[0].kind, SY_MCP_REQUEST);
    assert_string_equal(b.m[0].method, "ping");
    assert_int_equal(b.m[1].kind, SY_MCP_NOTIFICATION);
    assert_string_equal(b.m[1].method, "notifications/cancelled");
    assert_int_equal(b.m[2].kind, SY_MCP_RESPONSE);
    sy_mcp_batch_free(&b);
    /* more than max */
    assert_int_equal(parse(body, 2, &b, &code, err), -1);
    assert_int_equal(code, -32600);
    refused("[]", -32600);
    refused("[1,2]", -32600);
    refused("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"1.0\",\"id\":2,\"method\":\"ping\"}]",
            -32600);
    refused("[[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]]", -32600);
}

static void test_parse_errors(void **state)
{
    (void)state;
    refused("", -32700);
    refused("   ", -32700);
    refused("{", -32700);
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} x", -32700);
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",}", -32700);
    refused("{\"jsonrpc\":\"2.0\",\"id\":01,\"method\":\"ping\"}", -32700);
    refused("{'jsonrpc':'2.0'}", -32700);
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\x01\"}", -32700);    /* control character */
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc3\x28\"}", -32700); /* bad UTF-8 */
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\\x\"}", -32700);      /* bad escape */
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":tru}}", -32700);
}

static void test_invalid_requests(void **state)
{
    (void)state;
    refused("7", -32600);
    refused("\"x\"", -32600);
    refused("null", -32600);
    refused("{\"id\":1,\"method\":\"ping\"}", -32600);                          /* no jsonrpc */
    refused("{\"jsonrpc\":2.0,\"id\":1,\"method\":\"ping\"}", -32600);          /* a number */
    refused("{\"jsonrpc\":\"2.0 \",\"id\":1,\"method\":\"ping\"}", -32600);     /* not exactly */
    refused("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", -32600);   /* null request id */
    refused("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", -32600);    /* fraction */
    refused("{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"ping\"}", -32600);    /* exponent */
    refused("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", -32600);   /* bool */
    refused("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", -32600);     /* object */
    refused("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", -32600);    /* array */
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", -32600);             /* method not a string */
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}", -32600);          /* empty method */
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\\u0000b\"}", -32600); /* NUL in the method */
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[1]}", -32600);
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":\"x\"}", -32600);
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"result\":{}}", -32600);
    refused("{\"jsonrpc\":\"2.0\",\"id\":1}", -32600);                           /* neither */
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"error\":{}}", -32600); /* both */
    refused("{\"jsonrpc\":\"2.0\",\"result\":{}}", -32600);                      /* no id */
    refused("{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}", -32600);          /* a result needs an id */
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"bad\"}", -32600);         /* error not an object */
    /* an overlong id or method */
    char big[2048];
    snprintf(big, sizeof big, "{\"jsonrpc\":\"2.0\",\"id\":\"%0300d\",\"method\":\"ping\"}", 0);
    refused(big, -32600);
    snprintf(big, sizeof big, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%0300d\"}", 0);
    refused(big, -32600);
}

static void test_duplicate_keys(void **state)
{
    (void)state;
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}", -32600);
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"method\":\"tools/call\"}", -32600);
    /* the same key once escaped */
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"m\\u0065thod\":\"tools/call\"}", -32600);
    /* unknown keys twice in the message object too */
    refused("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":1,\"x\":2}", -32600);
    /* params: the name a permission check reads must be the one the server reads */
    refused(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a-ok\",\"name\":\"b-evil\"}}",
        -32600);
    refused(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a-ok\",\"na\\u006de\":\"b\"}}",
        -32600);
    /* many keys (the sorted path), one repeated at the end */
    struct sy_buf b;
    sy_buf_init(&b, 1 << 20);
    sy_buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{");
    for (int i = 0; i < 500; i++)
        sy_buf_printf(&b, "\"k%d\":%d,", i, i);
    sy_buf_puts(&b, "\"k\\u0031\":0}}");
    refused(b.p, -32600);
    /* and without the repeat it is fine */
    sy_buf_reset(&b);
    sy_buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{");
    for (int i = 0; i < 500; i++)
        sy_buf_printf(&b, "%s\"k%d\":%d", i ? "," : "", i, i);
    sy_buf_puts(&b, "}}");
    struct sy_mcp_batch bt;
    int code;
    char err[256];
    assert_int_equal(sy_mcp_rpc_parse(b.p, b.len, 1, &bt, &code, err, sizeof err), 0);
    sy_mcp_batch_free(&bt);
    /* duplicates deeper down (a tool's arguments) pass through untouched */
    assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\","
                           "\"arguments\":{\"a\":1,\"a\":2}}}",
                           1, &bt, &code, err),
                     0);
    sy_mcp_batch_free(&bt);
    sy_buf_free(&b);
}

static void test_depth_and_size(void **state)
{
    (void)state;
    struct sy_buf b;
    sy_buf_init(&b, 1 << 22);
    /* nesting beyond the bound is a parse error, never a stack overflow */
    sy_buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"a\":");
    for (int i = 0; i < 100000; i++)
        SY_BUF_LIT(&b, "[");
    for (int i = 0; i < 100000; i++)
        SY_BUF_LIT(&b, "]");
    sy_buf_puts(&b, "}}");
    struct sy_mcp_batch bt;
    int code;
    char err[256];
    assert_int_equal(sy_mcp_rpc_parse(b.p, b.len, 1, &bt, &code, err, sizeof err), -1);
    assert_int_equal(code, -32700);
    /* 40 levels are fine */
    sy_buf_reset(&b);
    sy_buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"a\":");
    for (int i = 0; i < 40; i++)
        SY_BUF_LIT(&b, "[");
    for (int i = 0; i < 40; i++)
        SY_BUF_LIT(&b, "]");
    sy_buf_puts(&b, "}}");
    assert_int_equal(sy_mcp_rpc_parse(b.p, b.len, 1, &bt, &code, err, sizeof err), 0);
    sy_mcp_batch_free(&bt);
    /* a body cut anywhere is refused, never read past its end */
    const char *full =
        "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"tools/call\",\"params\":{\"name\":\"a\\u00e9\"}}";
    for (size_t n = 0; n < strlen(full); n++) {
        char *cut = malloc(n ? n : 1);
        memcpy(cut, full, n);
        assert_int_equal(sy_mcp_rpc_parse(cut, n, 1, &bt, &code, err, sizeof err), -1);
        free(cut);
    }
    /* NULL body */
    assert_int_equal(sy_mcp_rpc_parse(NULL, 0, 1, &bt, &code, err, sizeof err), -1);
    assert_int_equal(code, -32700);
    sy_buf_free(&b);
}

static void test_writers(void **state)
{
    (void)state;
    struct sy_buf b;
    sy_buf_init(&b, 4096);
    sy_mcp_rpc_result(&b, "\"a\\\"b\"", 6, "{\"tools\":[]}", 12);
    assert_string_equal(b.p, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"result\":{\"tools\":[]}}");
    sy_buf_reset(&b);
    sy_mcp_rpc_result(&b, NULL, 0, NULL, 0);
    assert_string_equal(b.p, "{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}");
    sy_buf_reset(&b);
    sy_mcp_rpc_error(&b, "12", 2, -32601, "Method not found: \"x\"\n\xff");
    assert_string_equal(b.p, "{\"jsonrpc\":\"2.0\",\"id\":12,\"error\":{\"code\":-32601,\"message\":"
                             "\"Method not found: \\\"x\\\"\\n\\ufffd\"}}");
    sy_buf_reset(&b);
    sy_mcp_rpc_error(&b, NULL, 0, -32700, "Parse error");
    assert_string_equal(b.p,
                        "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}");
    sy_buf_free(&b);
}

static void test_member(void **state)
{
    (void)state;
    const char *o = "{ \"name\" : \"t\", \"arguments\":{\"x\":[1,{\"name\":2}]}, \"n\\u0061me\":\"last\" }";
    size_t n;
    const char *v = sy_mcp_member(o, strlen(o), "name", &n);
    span_is(v, n, "\"last\""); /* the last occurrence, as Python and JSON.parse read it */
    v = sy_mcp_member(o, strlen(o), "arguments", &n);
    span_is(v, n, "{\"x\":[1,{\"name\":2}]}");
    assert_null(sy_mcp_member(o, strlen(o), "x", &n)); /* only direct members */
    assert_int_equal(n, 0);
    assert_null(sy_mcp_member("[1]", 3, "a", &n));
    assert_null(sy_mcp_member("{\"a\":", 5, "a", &n)); /* truncated */
    assert_null(sy_mcp_member("{\"a\":1 \"b\":2}", 13, "b", &n));
    assert_null(sy_mcp_member(NULL, 0, "a", &n));
    v = sy_mcp_member("{}", 2, "a", &n);
    assert_null(v);
}

static void test_versions(void **state)
{
    (void)state;
    assert_string_equal(sy_mcp_versions[0], "2025-11-25");
    assert_string_equal(sy_mcp_versions[3], "2024-11-05");
    assert_null(sy_mcp_versions[4]);
    assert_string_equal(sy_mcp_negotiate("2025-03-26", 10), "2025-03-26");
    assert_string_equal(sy_mcp_negotiate("2024-11-05", 10), "2024-11-05");
    assert_string_equal(sy_mcp_negotiate("2099-01-01", 10), "2025-11-25");
    assert_string_equal(sy_mcp_negotiate("2025-03-2", 9), "2025-11-25");
    assert_string_equal(sy_mcp_negotiate(NULL, 0), "2025-11-25");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request),
        cmocka_unit_test(test_notification_and_response),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_invalid_requests),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_depth_and_size),
        cmocka_unit_test(test_writers),
        cmocka_unit_test(test_member),
        cmocka_unit_test(test_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
