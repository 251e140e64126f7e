/* test_s3.c - the s3 / s3_v2 logging sink without a network: settings,
 * LiteLLM's object key (prefixes, date, time, id, the 1024-byte bound), the
 * URL (path-style with an endpoint, virtual-hosted on AWS), the headers, and
 * the SigV4 signature recomputed here from a canonical request written out by
 * hand (OpenSSL's HMAC, not the signer under test).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "core/buf.h"
#include "core/hex.h"
#include "logging/logging.h"
#include "logging/sinks/s3.h"

extern const struct sy_sink_ops sy_sink_s3, sy_sink_s3_v2;

/* The records here carry their payload already (rec->payload): sy_log_payload
 * returns it as it is. */

#define AK  "AKIDEXAMPLE"
#define SK  "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define T0  1717243323.012345 /* 2024-06-01T12:02:03.012345Z */
#define NOW 1717243500        /* 2024-06-01T12:05:00Z */

static const char *PAYLOAD = "{\"id\":\"chatcmpl-1\",\"status\":\"success\",\"response\":{\"choices\":[]},\"x\":1}";

static void clear_env(void)
{
    const char *v[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                       "AWS_REGION_NAME"};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        unsetenv(v[i]);
}

static void *open_with(const struct sy_sink_ops *ops, const char *params, char *err)
{
    struct sy_logconf lc = {.s3_params = params};
    err[0] = 0;
    return ops->open(&lc, NULL, err, 256);
}

static void rec_init(struct sy_logrec *r)
{
    memset(r, 0, sizeof *r);
    r->id = "chatcmpl-1";
    r->call_id = "call-1";
    r->start_s = T0;
    r->team_alias = "team-a";
    r->key_alias = "key-b";
    r->payload = (char *)PAYLOAD;
    r->payload_len = strlen(PAYLOAD);
}

static char *key_of(void *inst, const struct sy_logrec *r)
{
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    assert_int_equal(sy_s3_object_key(inst, r, &b), 0);
    char *k = strdup(b.p ? b.p : "");
    sy_buf_free(&b);
    return k;
}

#define BASE "{\"s3_bucket_name\":\"logs\",\"s3_aws_access_key_id\":\"" AK "\",\"s3_aws_secret_access_key\":\"" SK "\""

/* ---- the key ------------------------------------------------------------------ */

static void t_key_prefixes(void **st)
{
    (void)st;
    clear_env();
    char err[256];
    struct sy_logrec r;
    rec_init(&r);
    void *v2 =
        open_with(&sy_sink_s3_v2,
                  BASE ",\"s3_path\":\"logs/x//\",\"s3_use_team_prefix\":true,\"s3_use_key_prefix\":\"yes\"}", err);
    assert_non_null(v2);
    char *k = key_of(v2, &r);
    assert_string_equal(k, "logs/x/team-a/key-b/2024-06-01/time-12-02-03-012345_chatcmpl-1.json");
    free(k);
    /* redact_user_api_key_info: the aliases are not in the payload, so no folders */
    r.flags = SY_LOGREC_REDACT_KEY;
    k = key_of(v2, &r);
    assert_string_equal(k, "logs/x/2024-06-01/time-12-02-03-012345_chatcmpl-1.json");
    free(k);
    sy_sink_s3_v2.close(v2);

    /* s3 (v1) has the team folder but no key folder; no s3_path: no prefix */
    rec_init(&r);
    void *v1 = open_with(&sy_sink_s3, BASE ",\"s3_use_team_prefix\":1,\"s3_use_key_prefix\":true}", err);
    assert_non_null(v1);
    k = key_of(v1, &r);
    assert_string_equal(k, "team-a/2024-06-01/time-12-02-03-012345_chatcmpl-1.json");
    free(k);
    sy_sink_s3.close(v1);

    /* Python truth: "" and 0 and false are false */
    void *off = open_with(&sy_sink_s3_v2, BASE ",\"s3_use_team_prefix\":\"\",\"s3_use_key_prefix\":0}", err);
    assert_non_null(off);
    k = key_of(off, &r);
    assert_string_equal(k, "2024-06-01/time-12-02-03-012345_chatcmpl-1.json");
    free(k);
    /* no response id: the call id; a '/' in it becomes '_' */
    r.id = NULL;
    r.call_id = "a/b/c";
    k = key_of(off, &r);
    assert_string_equal(k, "2024-06-01/time-12-02-03-012345_a_b_c.json");
    free(k);
    sy_sink_s3_v2.close(off);
}

static int valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2 : (*p & 0xF8) == 0xF0 ? 3 : -1;
        if (n < 0)
            return 0;
        p++;
        for (int i = 0; i < n; i++, p++)
            if ((*p & 0xC0) != 0x80)
                return 0;
    }
    return 1;
}

static int is_hex64(const char *s)
{
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

/* A key over 1024 bytes: the name's head and its digest; a prefix too long for
 * even that: the prefix's head and a digest folder. Never a split character. */
static void t_key_bound(void **st)
{
    (void)st;
    clear_env();
    char err[256];
    struct sy_logrec r;
    rec_init(&r);
    char *id = malloc(3001);
    for (int i = 0; i < 1000; i++)
        memcpy(id + 3 * i, "\xe2\x82\xac", 3); /* U+20AC, 3 bytes */
    id[3000] = 0;
    r.id = id;
    void *s = open_with(&sy_sink_s3_v2, BASE ",\"s3_path\":\"p\"}", err);
    assert_non_null(s);
    char *k = key_of(s, &r);
    size_t n = strlen(k);
    assert_true(n <= SY_S3_MAX_KEY);
    assert_true(valid_utf8(k));
    assert_int_equal(strncmp(k, "p/2024-06-01/time-12-02-03-012345_\xe2\x82\xac", 37), 0);
    assert_string_equal(k + n - 5, ".json");
    assert_int_equal(k[n - 5 - 65], '_');
    assert_true(is_hex64(k + n - 5 - 64));
    /* another id with the same head gets another key */
    id[2999] = 'x';
    id[2998] = 'x';
    id[2997] = 'x';
    char *k2 = key_of(s, &r);
    assert_string_not_equal(k, k2);
    free(k);
    free(k2);
    sy_sink_s3_v2.close(s);

    /* a 1100-byte s3_path */
    char params[2048];
    char *longp = malloc(1101);
    memset(longp, 'd', 1100);
    longp[1100] = 0;
    for (int i = 100; i < 1100; i += 100)
        longp[i] = '/';
    snprintf(params, sizeof params, BASE ",\"s3_path\":\"%s\"}", longp);
    s = open_with(&sy_sink_s3_v2, params, err);
    assert_non_null(s);
    r.id = "chatcmpl-1";
    k = key_of(s, &r);
    n = strlen(k);
    assert_true(n <= SY_S3_MAX_KEY);
    assert_int_equal(strncmp(k, "dddd", 4), 0);
    assert_null(strstr(k, "//"));
    /* .../<16 hex>/2024-06-01/<64 hex>.json */
    assert_string_equal(k + n - 5, ".json");
    assert_true(is_hex64(k + n - 5 - 64));
    assert_int_equal(strncmp(k + n - 5 - 64 - 11, "2024-06-01/", 11), 0);
    assert_int_equal(k[n - 5 - 64 - 11 - 1], '/');
    assert_int_equal(k[n - 5 - 64 - 11 - 18], '/');
    free(k);
    free(longp);
    free(id);
    sy_sink_s3_v2.close(s);
}

/* ---- the request -------------------------------------------------------------- */

static const char *header(const struct sy_buf *h, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    const char *p = h->p;
    while (p && *p) {
        const char *e = strstr(p, "\r\n");
        assert_non_null(e);
        if (!strncmp(p, name, nl) && p[nl] == ':' && p[nl + 1] == ' ') {
            size_t l = (size_t)(e - p - nl - 2);
            assert_true(l < cap);
            memcpy(out, p + nl + 2, l);
            out[l] = 0;
            return out;
        }
        p = e + 2;
    }
    return NULL;
}

static void hmac(const void *k, size_t kl, const char *m, unsigned char out[32])
{
    unsigned int ol = 32;
    assert_non_null(HMAC(EVP_sha256(), k, (int)kl, (const unsigned char *)m, strlen(m), out, &ol));
}

/* The signature of a canonical request, computed here from scratch. */
static void sign_creq(const char *creq, const char *date, const char *region, char sig[65])
{
    unsigned char d[32], k[32];
    char hx[65], sts[512], day[9];
    SHA256((const unsigned char *)creq, strlen(creq), d);
    sy_hex_encode(hx, d, 32);
    memcpy(day, date, 8);
    day[8] = 0;
    snprintf(sts, sizeof sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/s3/aws4_request\n%s", date, day, region, hx);
    hmac("AWS4" SK, strlen("AWS4" SK), day, k);
    hmac(k, 32, region, k);
    hmac(k, 32, "s3", k);
    hmac(k, 32, "aws4_request", k);
    hmac(k, 32, sts, d);
    sy_hex_encode(sig, d, 32);
}

static void t_encode_path_style(void **st)
{
    (void)st;
    clear_env();
    char err[256];
    void *s = open_with(&sy_sink_s3_v2,
                        BASE ",\"s3_endpoint_url\":\"http://127.0.0.1:4568/\",\"s3_region_name\":\"us-west-2\","
                             "\"s3_path\":\"a b+c\"}",
                        err);
    assert_non_null(s);
    struct sy_logrec r;
    rec_init(&r);
    r.id = "chatcmpl-1 x=y";
    struct sy_sink_req q;
    assert_int_equal(sy_s3_encode_at(s, &r, NOW, &q), 0);
    assert_string_equal(q.method, "PUT");
    const char *path = "/logs/a%20b%2Bc/2024-06-01/time-12-02-03-012345_chatcmpl-1%20x%3Dy.json";
    char url[512];
    snprintf(url, sizeof url, "http://127.0.0.1:4568%s", path);
    assert_string_equal(q.url, url);
    assert_int_equal(q.body.len, strlen(PAYLOAD));
    assert_memory_equal(q.body.p, PAYLOAD, q.body.len);

    unsigned char d[32];
    char sha[65], md5b64[32], v[512];
    SHA256((const unsigned char *)PAYLOAD, strlen(PAYLOAD), d);
    sy_hex_encode(sha, d, 32);
    unsigned char m[16];
    unsigned int ml = 16;
    EVP_Digest(PAYLOAD, strlen(PAYLOAD), m, &ml, EVP_md5(), NULL);
    EVP_EncodeBlock((unsigned char *)md5b64, m, 16);

    assert_string_equal(header(&q.headers, "Content-Type", v, sizeof v), "application/json");
    assert_string_equal(header(&q.headers, "Content-MD5", v, sizeof v), md5b64);
    assert_string_equal(header(&q.headers, "Content-Language", v, sizeof v), "en");
    assert_string_equal(header(&q.headers, "Content-Disposition", v, sizeof v),
                        "inline; filename=\"time-2024-06-01T12-02-03-012345_chatcmpl-1 x=y.json\"");
    assert_string_equal(header(&q.headers, "Cache-Control", v, sizeof v),
                        "private, immutable, max-age=31536000, s-maxage=0");
    assert_string_equal(header(&q.headers, "X-Amz-Date", v, sizeof v), "20240601T120500Z");
    assert_string_equal(header(&q.headers, "X-Amz-Content-SHA256", v, sizeof v), sha);
    assert_null(header(&q.headers, "X-Amz-Security-Token", v, sizeof v));
    assert_null(header(&q.headers, "Host", v, sizeof v)); /* the client adds it from the URL */

    char creq[4096], sig[65], want[1024];
    snprintf(creq, sizeof creq,
             "PUT\n%s\n\n"
             "cache-control:private, immutable, max-age=31536000, s-maxage=0\n"
             "content-disposition:inline; filename=\"time-2024-06-01T12-02-03-012345_chatcmpl-1 x=y.json\"\n"
             "content-language:en\ncontent-md5:%s\ncontent-type:application/json\nhost:127.0.0.1:4568\n"
             "x-amz-content-sha256:%s\nx-amz-date:20240601T120500Z\n\n"
             "cache-control;content-disposition;content-language;content-md5;content-type;host;"
             "x-amz-content-sha256;x-amz-date\n%s",
             path, md5b64, sha, sha);
    sign_creq(creq, "20240601T120500Z", "us-west-2", sig);
    snprintf(want, sizeof want,
             "AWS4-HMAC-SHA256 Credential=" AK "/20240601/us-west-2/s3/aws4_request, "
             "SignedHeaders=cache-control;content-disposition;content-language;content-md5;content-type;host;"
             "x-amz-content-sha256;x-amz-date, Signature=%s",
             sig);
    assert_string_equal(header(&q.headers, "Authorization", v, sizeof v), want);
    sy_sink_req_free(&q);
    sy_sink_s3_v2.close(s);
}

static void expect_url(const char *params, const char *prefix)
{
    char err[256];
    void *s = open_with(&sy_sink_s3_v2, params, err);
    if (!s)
        fail_msg("open: %s", err);
    struct sy_logrec r;
    rec_init(&r);
    struct sy_sink_req q;
    assert_int_equal(sy_s3_encode_at(s, &r, NOW, &q), 0);
    char want[512];
    snprintf(want, sizeof want, "%s/2024-06-01/time-12-02-03-012345_chatcmpl-1.json", prefix);
    assert_string_equal(q.url, want);
    sy_sink_req_free(&q);
    sy_sink_s3_v2.close(s);
}

static void t_addressing(void **st)
{
    (void)st;
    clear_env();
    /* AWS: virtual-hosted, the region's endpoint */
    expect_url(BASE ",\"s3_region_name\":\"eu-west-1\"}", "https://logs.s3.eu-west-1.amazonaws.com");
    expect_url(BASE ",\"s3_region_name\":\"cn-north-1\"}", "https://logs.s3.cn-north-1.amazonaws.com.cn");
    expect_url(BASE ",\"s3_use_ssl\":false}", "http://logs.s3.us-east-1.amazonaws.com");
    /* a dotted bucket: path-style (no certificate covers its virtual host) */
    expect_url("{\"s3_bucket_name\":\"my.logs\",\"s3_aws_access_key_id\":\"a\",\"s3_aws_secret_access_key\":\"b\"}",
               "https://s3.us-east-1.amazonaws.com/my.logs");
    /* the region from the environment */
    setenv("AWS_REGION", "ap-south-1", 1);
    expect_url(BASE "}", "https://logs.s3.ap-south-1.amazonaws.com");
    setenv("AWS_REGION_NAME", "sa-east-1", 1);
    expect_url(BASE "}", "https://logs.s3.sa-east-1.amazonaws.com");
    clear_env();
    /* an endpoint: path-style, its own path kept */
    expect_url(BASE ",\"s3_endpoint_url\":\"https://minio.local:9000/s3/\"}", "https://minio.local:9000/s3/logs");
    expect_url(BASE ",\"s3_endpoint_url\":\"https://minio.local:9000\",\"s3_use_virtual_hosted_style\":true}",
               "https://logs.minio.local:9000");
}

static void t_credentials(void **st)
{
    (void)st;
    clear_env();
    char err[256];
    /* the environment's keys and session token */
    setenv("AWS_ACCESS_KEY_ID", "ENVAK", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "ENVSK", 1);
    setenv("AWS_SESSION_TOKEN", "TOKEN/xyz==", 1);
    void *s = open_with(&sy_sink_s3, "{\"s3_bucket_name\":\"b\"}", err);
    assert_non_null(s);
    struct sy_logrec r;
    rec_init(&r);
    struct sy_sink_req q;
    assert_int_equal(sy_s3_encode_at(s, &r, NOW, &q), 0);
    char v[1024];
    assert_string_equal(header(&q.headers, "X-Amz-Security-Token", v, sizeof v), "TOKEN/xyz==");
    assert_non_null(header(&q.headers, "Authorization", v, sizeof v));
    assert_int_equal(strncmp(v, "AWS4-HMAC-SHA256 Credential=ENVAK/20240601/us-east-1/s3/aws4_request, ", 70), 0);
    assert_non_null(strstr(v, ";x-amz-date;x-amz-security-token, Signature="));
    sy_sink_req_free(&q);
    sy_sink_s3.close(s);
    /* the config's keys win over the environment's, as a pair */
    s = open_with(&sy_sink_s3, BASE "}", err);
    assert_non_null(s);
    assert_int_equal(sy_s3_encode_at(s, &r, NOW, &q), 0);
    assert_non_null(strstr(header(&q.headers, "Authorization", v, sizeof v), "Credential=" AK "/"));
    sy_sink_req_free(&q);
    sy_sink_s3.close(s);
    clear_env();
}

static void expect_open_error(const char *params, const char *needle)
{
    char err[256];
    void *s = open_with(&sy_sink_s3_v2, params, err);
    assert_null(s);
    if (!strstr(err, needle))
        fail_msg("error \"%s\" lacks \"%s\"", err, needle);
}

static void t_open_errors(void **st)
{
    (void)st;
    clear_env();
    expect_open_error(NULL, "s3_bucket_name is not set");
    expect_open_error("{\"s3_bucket_name\":\"\"}", "s3_bucket_name is not set");
    expect_open_error("not json", "s3_bucket_name is not set");
    expect_open_error("{\"s3_bucket_name\":7}", "must be a string");
    expect_open_error("{\"s3_bucket_name\":\"b\"}", "no AWS credentials");
    expect_open_error("{\"s3_bucket_name\":\"b\",\"s3_aws_access_key_id\":\"a\"}", "no AWS credentials");
    expect_open_error("{\"s3_bucket_name\":\"a/b\",\"s3_aws_access_key_id\":\"a\",\"s3_aws_secret_access_key\":\"b\"}",
                      "not a bucket name");
    expect_open_error(
        "{\"s3_bucket_name\":\"a\\r\\nb\",\"s3_aws_access_key_id\":\"a\",\"s3_aws_secret_access_key\":\"b\"}",
        "not a bucket name");
    expect_open_error(BASE ",\"s3_endpoint_url\":\"ftp://x\"}", "http:// or https://");
    expect_open_error(BASE ",\"s3_endpoint_url\":\"http://\"}", "no host");
    expect_open_error(BASE ",\"s3_endpoint_url\":\"http://u@h\"}", "not a plain");
    expect_open_error(BASE ",\"s3_endpoint_url\":\"http://h/a?b\"}", "not a plain");
    expect_open_error(BASE ",\"s3_region_name\":\"us east\"}", "not a region");
    expect_open_error(BASE ",\"s3_aws_session_token\":\"a\\nb\"}", "control character");
    /* a key's callback_vars come first */
    struct sy_logconf lc = {.s3_params = "{\"s3_bucket_name\":\"b\"}"};
    char err[256];
    void *s =
        sy_sink_s3_v2.open(&lc, "{\"s3_aws_access_key_id\":\"x\",\"s3_aws_secret_access_key\":\"y\"}", err, sizeof err);
    assert_non_null(s);
    sy_sink_s3_v2.close(s);
}

/* An id from the upstream with CR LF, quotes and non-ASCII: the header stays
 * one line of printable ASCII; the key keeps the bytes, percent-encoded. */
static void t_hostile_id(void **st)
{
    (void)st;
    clear_env();
    char err[256];
    void *s = open_with(&sy_sink_s3_v2, BASE ",\"s3_endpoint_url\":\"http://h:1\"}", err);
    assert_non_null(s);
    struct sy_logrec r;
    rec_init(&r);
    r.id = "x\r\nX-Evil: 1\"\\\xc3\xa9";
    struct sy_sink_req q;
    assert_int_equal(sy_s3_encode_at(s, &r, NOW, &q), 0);
    assert_null(strstr(q.headers.p, "\r\nX-Evil"));
    char v[512];
    assert_string_equal(header(&q.headers, "Content-Disposition", v, sizeof v),
                        "inline; filename=\"time-2024-06-01T12-02-03-012345_x__X-Evil: 1____.json\"");
    assert_non_null(strstr(q.url, "_x%0D%0AX-Evil%3A%201%22%5C%C3%A9.json"));
    for (const char *c = q.url; *c; c++)
        assert_true(*c > 0x20 && *c < 0x7f);
    sy_sink_req_free(&q);
    sy_sink_s3_v2.close(s);
}

static void t_sse_and_prompts_only(void **st)
{
    (void)st;
    clear_env();
    char err[256];
    void *s = open_with(&sy_sink_s3, BASE ",\"s3_sse_kms_key_id\":\"arn:k\",\"s3_log_prompts_only\":true}", err);
    assert_non_null(s);
    struct sy_logrec r;
    rec_init(&r);
    struct sy_sink_req q;
    assert_int_equal(sy_s3_encode_at(s, &r, NOW, &q), 0);
    char v[1024];
    assert_string_equal(header(&q.headers, "x-amz-server-side-encryption", v, sizeof v), "aws:kms");
    assert_string_equal(header(&q.headers, "x-amz-server-side-encryption-aws-kms-key-id", v, sizeof v), "arn:k");
    assert_non_null(strstr(header(&q.headers, "Authorization", v, sizeof v),
                           ";x-amz-server-side-encryption;x-amz-server-side-encryption-aws-kms-key-id, "));
    const char *want = "{\"id\":\"chatcmpl-1\",\"status\":\"success\",\"response\":null,\"x\":1}";
    assert_int_equal(q.body.len, strlen(want));
    assert_memory_equal(q.body.p, want, q.body.len);
    /* the hash signed is the body's as sent */
    unsigned char d[32];
    char sha[65];
    SHA256((const unsigned char *)want, strlen(want), d);
    sy_hex_encode(sha, d, 32);
    assert_string_equal(header(&q.headers, "X-Amz-Content-SHA256", v, sizeof v), sha);
    sy_sink_req_free(&q);
    sy_sink_s3.close(s);
    /* s3_v2 does not read s3_log_prompts_only; a KMS key with AES256 is ignored */
    s = open_with(&sy_sink_s3_v2,
                  BASE
                  ",\"s3_server_side_encryption\":\"AES256\",\"s3_sse_kms_key_id\":\"k\",\"s3_log_prompts_only\":true}",
                  err);
    assert_non_null(s);
    assert_int_equal(sy_s3_encode_at(s, &r, NOW, &q), 0);
    assert_string_equal(header(&q.headers, "x-amz-server-side-encryption", v, sizeof v), "AES256");
    assert_null(header(&q.headers, "x-amz-server-side-encryption-aws-kms-key-id", v, sizeof v));
    assert_memory_equal(q.body.p, PAYLOAD, strlen(PAYLOAD));
    sy_sink_req_free(&q);
    sy_sink_s3_v2.close(s);
}

static void t_encode_batch_and_verdict(void **st)
{
    (void)st;
    clear_env();
    assert_int_equal(sy_sink_s3.max_batch, 1);
    assert_string_equal(sy_sink_s3.name, "s3");
    assert_string_equal(sy_sink_s3_v2.name, "s3_v2");
    char err[256];
    void *s = open_with(&sy_sink_s3_v2, BASE "}", err);
    assert_non_null(s);
    struct sy_logrec a, raw;
    rec_init(&a);
    rec_init(&raw);
    raw.flags = SY_LOGREC_RAW;
    struct sy_logrec *recs[2] = {&raw, &a};
    struct sy_sink_req out[SY_SINK_MAX_REQS];
    size_t n = 99;
    assert_int_equal(sy_sink_s3_v2.encode(s, recs, 1, out, &n), 0);
    assert_int_equal(n, 0); /* a message prepared for another sink */
    assert_int_equal(sy_sink_s3_v2.encode(s, recs + 1, 1, out, &n), 0);
    assert_int_equal(n, 1);
    assert_non_null(strstr(out[0].url, "time-12-02-03-012345_chatcmpl-1.json"));
    sy_sink_req_free(&out[0]);
    /* two records: two PUTs, two keys */
    struct sy_logrec b;
    rec_init(&b);
    b.id = "chatcmpl-2";
    struct sy_logrec *two[2] = {&a, &b};
    assert_int_equal(sy_sink_s3_v2.encode(s, two, 2, out, &n), 0);
    assert_int_equal(n, 2);
    assert_non_null(strstr(out[0].url, "_chatcmpl-1.json"));
    assert_non_null(strstr(out[1].url, "_chatcmpl-2.json"));
    sy_sink_req_free(&out[0]);
    sy_sink_req_free(&out[1]);

    const char *rt = "<?xml version=\"1.0\"?><Error><Code>RequestTimeout</Code></Error>";
    const char *sd = "<Error><Code>SignatureDoesNotMatch</Code></Error>";
    assert_int_equal(sy_sink_s3_v2.verdict(s, 200, "", 0), SY_SINK_SENT);
    assert_int_equal(sy_sink_s3_v2.verdict(s, 0, NULL, 0), SY_SINK_RETRY);
    assert_int_equal(sy_sink_s3_v2.verdict(s, 503, "", 0), SY_SINK_RETRY);
    assert_int_equal(sy_sink_s3_v2.verdict(s, 429, "", 0), SY_SINK_RETRY);
    assert_int_equal(sy_sink_s3_v2.verdict(s, 400, rt, strlen(rt)), SY_SINK_RETRY);
    assert_int_equal(sy_sink_s3_v2.verdict(s, 400, "", 0), SY_SINK_DROP);
    assert_int_equal(sy_sink_s3_v2.verdict(s, 403, sd, strlen(sd)), SY_SINK_DROP);
    assert_int_equal(sy_sink_s3_v2.verdict(s, 404, NULL, 0), SY_SINK_DROP);
    assert_int_equal(sy_sink_s3_v2.verdict(s, 301, NULL, 0), SY_SINK_DROP);
    sy_sink_s3_v2.close(s);
}

/* s3_strip_base64_files (s3_v2): LiteLLM's _strip_base64_from_messages. */
static void strip_case(const char *payload, const char *want)
{
    char err[256];
    void *s = open_with(&sy_sink_s3_v2, BASE ",\"s3_strip_base64_files\":true}", err);
    assert_non_null(s);
    struct sy_logrec r;
    rec_init(&r);
    r.payload = (char *)payload;
    r.payload_len = strlen(payload);
    struct sy_sink_req q;
    assert_int_equal(sy_s3_encode_at(s, &r, NOW, &q), 0);
    char *got = strndup(q.body.p ? q.body.p : "", q.body.len);
    assert_string_equal(got, want);
    free(got);
    sy_sink_req_free(&q);
    sy_sink_s3_v2.close(s);
}

static void t_strip_base64(void **st)
{
    (void)st;
    clear_env();
    /* file parts and non-text typed parts dropped; text kept; an inline data URI
     * in any string redacted (its class takes blanks and what follows them, as
     * Python's [A-Za-z0-9+/=\s]+ does); other members too; non-object messages dropped;
     * a message without content gets content null */
    strip_case("{\"id\":\"x\",\"messages\":[{\"role\":\"user\",\"content\":["
               "{\"type\":\"text\",\"text\":\"see data:image/png;base64,iVBORw0KGgo= ok\"},"
               "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,AAAA\"}},"
               "{\"type\":\"file\",\"file\":{\"file_data\":\"data:application/pdf;base64,JVBER\"}},"
               "{\"file\":1},\"plain\",{\"text\":\"untyped\"}]},"
               "7,"
               "{\"role\":\"assistant\",\"name\":\"data:audio/wav;base64,UklG\\nRg==\"},"
               "{\"role\":\"user\",\"content\":\"a data:text/plain;base64,AAAA b data:video/mp4;base64,AAAA\"}],"
               "\"response\":{\"x\":\"data:image/png;base64,AAAA\"}}",
               "{\"id\":\"x\",\"messages\":[{\"role\":\"user\",\"content\":["
               "{\"type\":\"text\",\"text\":\"see [BASE64_REDACTED]\"},"
               "\"plain\",{\"text\":\"untyped\"}]},"
               "{\"role\":\"assistant\",\"name\":\"[BASE64_REDACTED]\",\"content\":null},"
               "{\"role\":\"user\",\"content\":\"a data:text/plain;base64,AAAA b [BASE64_REDACTED]\"}],"
               "\"response\":{\"x\":\"data:image/png;base64,AAAA\"}}");
    /* a value deeper than 10 levels below a content item: LiteLLM's marker */
    strip_case("{\"messages\":[{\"content\":[[[[[[[[[[[[1]]]]]]]]]]]]}]}",
               "{\"messages\":[{\"content\":[[[[[[[[[[[[\"[MAX_DEPTH_REACHED]\"]]]]]]]]]]]]}]}");
    /* nothing to do: the payload as it was */
    strip_case("{\"messages\":\"not a list\",\"a\":1}", "{\"messages\":\"not a list\",\"a\":1}");
    strip_case("{\"messages\":[]}", "{\"messages\":[]}");
    strip_case("not json", "not json");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_key_prefixes),
        cmocka_unit_test(t_key_bound),
        cmocka_unit_test(t_encode_path_style),
        cmocka_unit_test(t_addressing),
        cmocka_unit_test(t_credentials),
        cmocka_unit_test(t_open_errors),
        cmocka_unit_test(t_hostile_id),
        cmocka_unit_test(t_sse_and_prompts_only),
        cmocka_unit_test(t_encode_batch_and_verdict),
        cmocka_unit_test(t_strip_base64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
