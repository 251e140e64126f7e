/* s3.c - the `s3` and `s3_v2` logging callbacks: one JSON object per record
 * in an S3 bucket (AWS, or any S3-compatible store: MinIO, Ceph, R2, s3rver),
 * as LiteLLM's integrations/s3.py and s3_v2.py write them.
 *
 * Settings (open): litellm_settings.s3_callback_params (os.environ/ already
 * resolved by the config loader), or a key's / team's callback_vars first:
 *
 *   s3_bucket_name            required
 *   s3_region_name            else AWS_REGION_NAME, AWS_REGION, "us-east-1"
 *   s3_endpoint_url           path-style {endpoint}/{bucket}/{key}; without it
 *                             https://{bucket}.s3.{region}.amazonaws.com[.cn]/{key}
 *                             (path-style on AWS too for a bucket name with a dot,
 *                             whose virtual host no certificate covers)
 *   s3_use_virtual_hosted_style  with an endpoint: {scheme}{bucket}.{endpoint host}
 *   s3_use_ssl                false: http:// for the AWS endpoint
 *   s3_aws_access_key_id / _secret_access_key / _session_token
 *                             else AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 *                             AWS_SESSION_TOKEN; no key: the sink does not open
 *   s3_path                   a prefix of every key
 *   s3_use_team_prefix        the team alias as a folder (s3 and s3_v2)
 *   s3_use_key_prefix         the key alias as a folder (s3_v2)
 *   s3_server_side_encryption, s3_sse_kms_key_id   x-amz-server-side-encryption(-aws-kms-key-id)
 *   s3_log_prompts_only       (s3) the payload's response written as null
 *   s3_strip_base64_files     (s3_v2) file parts and inline base64 data URIs
 *                             taken out of the payload's messages
 * Booleans are Python truth values, as LiteLLM's bool(params.get(...)).
 *
 * One record, one PUT, up to 32 on their way at once (max_batch 1, so each record is retried or dropped on
 * its own; a retried PUT rewrites the same key, so a duplicate is harmless):
 *
 *   PUT /{s3_path/}{team alias/}{key alias/}YYYY-MM-DD/time-HH-MM-SS-ffffff_{id}.json
 *   Content-Type: application/json
 *   Content-MD5: base64(md5(body))
 *   Content-Language: en
 *   Content-Disposition: inline; filename="time-YYYY-MM-DDTHH-MM-SS-ffffff_{id}.json"
 *   Cache-Control: private, immutable, max-age=31536000, s-maxage=0
 *   X-Amz-Date, X-Amz-Content-SHA256, [X-Amz-Security-Token], Authorization (SigV4, service s3)
 *
 *   body: the StandardLoggingPayload JSON (sy_log_payload)
 *
 * The time in the key is the request's start (UTC); the id is the payload's
 * ("chatcmpl-..." or the call id) with '/' made '_'. The key is percent-
 * encoded once in the URL ('/' kept) and signed as sent (sigv4.h, .s3). A key
 * over S3's 1024 bytes is shortened as LiteLLM does: the file name's head and
 * the SHA-256 of the whole name, then, if the prefix alone is too long, its
 * head and a digest folder. The download filename is kept to printable ASCII
 * (an id with CR/LF or quotes cannot break the header).
 *
 * Verdict: 2xx sent; no answer, 408, 429, 5xx and S3's 400 RequestTimeout
 * retry; anything else (403 SignatureDoesNotMatch, InvalidAccessKeyId,
 * RequestTimeTooSkewed, 404 NoSuchBucket, 301 to another region) drop.
 *
 * Everything here runs on the logging thread: hashing, signing and the key.
 */
#include "logging/sinks/s3.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "core/arena.h"
#include "core/errors.h"
#include "core/hex.h"
#include "providers/jdom.h"
#include "providers/sigv4.h"

#define HEAD_BYTES     200 /* a bounded file name keeps at most this much of its head */
#define MIN_FILE_BYTES 64  /* ... and is never shorter (the digest alone) */
#define DIGEST_DIR     16  /* hex digits of the prefix's digest folder */
#define FILENAME_MAX_B 255 /* the Content-Disposition filename */

struct s3 {
    int v2;
    char *bucket, *region, *ak, *sk, *token, *path, *sse, *kms;
    char *origin; /* "https://host[:port]": scheme and authority */
    char *host;   /* the authority: the Host header, signed */
    char *base;   /* the path before the key: "", "/bucket", "/prefix/bucket" */
    int team_prefix, key_prefix, prompts_only, strip_b64;
};

/* ---- settings --------------------------------------------------------------- */

struct params {
    struct sy_arena a;
    struct sy_jdoc d[2]; /* callback_vars, then s3_callback_params */
    int ok[2];
};

static void params_open(struct params *p, const char *vars, const char *s3p)
{
    memset(p, 0, sizeof *p);
    sy_arena_init(&p->a);
    const char *src[2] = {vars, s3p};
    for (int i = 0; i < 2; i++)
        p->ok[i] = src[i] && sy_jdom_parse(&p->d[i], src[i], strlen(src[i]), &p->a, 0) == 0 &&
                   sy_jdom_type(&p->d[i], 0) == 'o';
}

/* The member's node (null counting as absent) and its document. */
static uint32_t param(struct params *p, const char *key, const struct sy_jdoc **d)
{
    for (int i = 0; i < 2; i++) {
        if (!p->ok[i])
            continue;
        uint32_t v = sy_jdom_top(&p->d[i], key);
        if (v) {
            *d = &p->d[i];
            return v;
        }
    }
    return 0;
}

/* A string setting, copied; NULL when absent or empty. -1 when it is not a string. */
static int pstr(struct params *p, const char *key, char **out, char *err, size_t errlen)
{
    *out = NULL;
    const struct sy_jdoc *d;
    uint32_t v = param(p, key, &d);
    if (!v)
        return 0;
    size_t n;
    const char *s = sy_jdom_str(d, v, &p->a, &n);
    if (!s) {
        snprintf(err, errlen, "s3_callback_params.%s must be a string", key);
        return -1;
    }
    if (n == 0 || memchr(s, 0, n))
        return 0;
    *out = strdup(s);
    return *out ? 0 : -1;
}

/* Python's bool(value): false, null, 0, "", [] and {} are false. */
static int ptruth(struct params *p, const char *key, int dflt)
{
    const struct sy_jdoc *d;
    uint32_t v = param(p, key, &d);
    if (!v)
        return dflt;
    double x;
    switch (sy_jdom_type(d, v)) {
    case 't': return 1;
    case 'f': return 0;
    case 'n': return sy_jdom_num(d, v, &x) && x != 0;
    case 's': return d->n[v].len > 2;
    default: return d->n[v].kids > 0;
    }
}

static char *env_dup(const char *a, const char *b)
{
    const char *v = getenv(a);
    if ((!v || !*v) && b)
        v = getenv(b);
    return v && *v ? strdup(v) : NULL;
}

static void s3_close(void *inst)
{
    struct s3 *s = inst;
    if (!s)
        return;
    if (s->sk)
        OPENSSL_cleanse(s->sk, strlen(s->sk));
    char *f[] = {s->bucket, s->region, s->ak, s->sk, s->token, s->path, s->sse, s->kms, s->origin, s->host, s->base};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        free(f[i]);
    free(s);
}

static int bad_name_byte(unsigned char c)
{
    return c <= 0x20 || c >= 0x7f || c == '/' || c == '?' || c == '#' || c == '\\'; /* ASCII names only */
}

static char *join(const char *a, size_t an, const char *b, size_t bn, const char *c, size_t cn)
{
    char *r = malloc(an + bn + cn + 1);
    if (!r)
        return NULL;
    memcpy(r, a, an);
    memcpy(r + an, b, bn);
    memcpy(r + an + bn, c, cn);
    r[an + bn + cn] = 0;
    return r;
}

/* origin, host and base from the endpoint (or AWS's) and the bucket. */
static int s3_where(struct s3 *s, const char *endpoint, int vhost, int use_ssl, char *err, size_t errlen)
{
    const char *b = s->bucket;
    size_t bl = strlen(b);
    if (!endpoint) {
        const char *sfx = !strncmp(s->region, "cn-", 3) ? "amazonaws.com.cn" : "amazonaws.com";
        const char *scheme = use_ssl ? "https://" : "http://";
        char h[512];
        if (strchr(b, '.')) /* no certificate covers a dotted bucket's virtual host */
            snprintf(h, sizeof h, "s3.%s.%s", s->region, sfx);
        else
            snprintf(h, sizeof h, "%s.s3.%s.%s", b, s->region, sfx);
        s->host = strdup(h);
        s->origin = join(scheme, strlen(scheme), h, strlen(h), "", 0);
        s->base = strchr(b, '.') ? join("/", 1, b, bl, "", 0) : strdup("");
        return s->host && s->origin && s->base ? 0 : -1;
    }
    size_t sl = !strncmp(endpoint, "https://", 8) ? 8 : !strncmp(endpoint, "http://", 7) ? 7 : 0;
    if (!sl) {
        snprintf(err, errlen, "s3_endpoint_url must start with http:// or https:// (got \"%.64s\")", endpoint);
        return -1;
    }
    const char *auth = endpoint + sl, *e = auth;
    while (*e && *e != '/') {
        if (*e == '?' || *e == '#' || *e == '@' || (unsigned char)*e <= 0x20 || (unsigned char)*e >= 0x7f) {
            snprintf(err, errlen, "s3_endpoint_url: not a plain http(s)://host[:port][/path] URL");
            return -1;
        }
        e++;
    }
    size_t al = (size_t)(e - auth);
    if (al == 0) {
        snprintf(err, errlen, "s3_endpoint_url has no host");
        return -1;
    }
    /* the endpoint's own path, without trailing slashes */
    size_t pl = strlen(e);
    while (pl > 0 && e[pl - 1] == '/')
        pl--;
    for (size_t i = 0; i < pl; i++)
        if (e[i] == '?' || e[i] == '#' || (unsigned char)e[i] <= 0x20 || (unsigned char)e[i] >= 0x7f) {
            snprintf(err, errlen, "s3_endpoint_url: not a plain http(s)://host[:port][/path] URL");
            return -1;
        }
    if (vhost) { /* LiteLLM: {scheme}{bucket}.{endpoint without scheme}/{key} */
        s->host = join(b, bl, ".", 1, auth, al);
        s->origin = join(endpoint, sl, s->host ? s->host : "", s->host ? strlen(s->host) : 0, "", 0);
        s->base = join(e, pl, "", 0, "", 0);
    } else {
        s->host = join(auth, al, "", 0, "", 0);
        s->origin = join(endpoint, sl + al, "", 0, "", 0);
        s->base = join(e, pl, "/", 1, b, bl);
    }
    return s->host && s->origin && s->base ? 0 : -1;
}

static void *s3_open_common(const struct sy_logconf *lc, const char *vars, int v2, char *err, size_t errlen)
{
    struct s3 *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->v2 = v2;
    struct params p;
    params_open(&p, vars, lc ? lc->s3_params : NULL);
    char *endpoint = NULL;
    int rc = 0;
    rc |= pstr(&p, "s3_bucket_name", &s->bucket, err, errlen);
    rc |= pstr(&p, "s3_region_name", &s->region, err, errlen);
    rc |= pstr(&p, "s3_endpoint_url", &endpoint, err, errlen);
    rc |= pstr(&p, "s3_aws_access_key_id", &s->ak, err, errlen);
    rc |= pstr(&p, "s3_aws_secret_access_key", &s->sk, err, errlen);
    rc |= pstr(&p, "s3_aws_session_token", &s->token, err, errlen);
    rc |= pstr(&p, "s3_path", &s->path, err, errlen);
    rc |= pstr(&p, "s3_server_side_encryption", &s->sse, err, errlen);
    rc |= pstr(&p, "s3_sse_kms_key_id", &s->kms, err, errlen);
    s->team_prefix = ptruth(&p, "s3_use_team_prefix", 0);
    s->key_prefix = v2 && ptruth(&p, "s3_use_key_prefix", 0);
    s->prompts_only = !v2 && ptruth(&p, "s3_log_prompts_only", 0);
    s->strip_b64 = v2 && ptruth(&p, "s3_strip_base64_files", 0);
    int vhost = ptruth(&p, "s3_use_virtual_hosted_style", 0);
    int use_ssl = ptruth(&p, "s3_use_ssl", 1);
    sy_arena_free(&p.a);
    if (rc)
        goto fail;
    if (!s->bucket) {
        snprintf(err, errlen, "s3_callback_params.s3_bucket_name is not set");
        goto fail;
    }
    for (const char *c = s->bucket; *c; c++)
        if (bad_name_byte((unsigned char)*c)) {
            snprintf(err, errlen, "s3_bucket_name \"%.64s\" is not a bucket name", s->bucket);
            goto fail;
        }
    if (!s->region && !(s->region = env_dup("AWS_REGION_NAME", "AWS_REGION")) && !(s->region = strdup("us-east-1")))
        goto oom;
    for (const char *c = s->region; *c; c++)
        if (bad_name_byte((unsigned char)*c)) {
            snprintf(err, errlen, "s3_region_name \"%.64s\" is not a region", s->region);
            goto fail;
        }
    if (!s->ak && !s->sk) { /* the environment's credentials, as a pair */
        s->ak = env_dup("AWS_ACCESS_KEY_ID", NULL);
        s->sk = env_dup("AWS_SECRET_ACCESS_KEY", NULL);
        if (!s->token)
            s->token = env_dup("AWS_SESSION_TOKEN", NULL);
    }
    if (!s->ak || !s->sk) {
        snprintf(err, errlen,
                 "no AWS credentials (s3_callback_params.s3_aws_access_key_id and s3_aws_secret_access_key, or "
                 "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)");
        goto fail;
    }
    for (const char *c = s->ak; *c; c++) /* in the Authorization header's Credential= */
        if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f || *c == '/' || *c == ',') {
            snprintf(err, errlen, "s3_aws_access_key_id is not an access key id");
            goto fail;
        }
    for (const char *c = s->token ? s->token : ""; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) {
            snprintf(err, errlen, "s3_aws_session_token holds a control character");
            goto fail;
        }
    for (const char *c = s->sse ? s->sse : ""; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            goto badsse;
    for (const char *c = s->kms ? s->kms : ""; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            goto badsse;
    if (s->kms && !s->sse && !(s->sse = strdup("aws:kms"))) /* LiteLLM's resolve_sse_params */
        goto oom;
    if (s->kms && strncmp(s->sse, "aws:kms", 7) != 0) {
        free(s->kms);
        s->kms = NULL;
    }
    if (s3_where(s, endpoint, vhost, use_ssl, err, errlen) != 0) {
        if (!err[0])
            goto oom;
        goto fail;
    }
    free(endpoint);
    return s;
badsse:
    snprintf(err, errlen, "s3_server_side_encryption / s3_sse_kms_key_id hold a control character");
    goto fail;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    free(endpoint);
    s3_close(s);
    return NULL;
}

static void *s3_open_v1(const struct sy_logconf *lc, const char *vars, char *err, size_t errlen)
{
    if (errlen)
        err[0] = 0;
    return s3_open_common(lc, vars, 0, err, errlen);
}

static void *s3_open_v2(const struct sy_logconf *lc, const char *vars, char *err, size_t errlen)
{
    if (errlen)
        err[0] = 0;
    return s3_open_common(lc, vars, 1, err, errlen);
}

/* ---- the object key ------------------------------------------------------------- */

/* The record's start: UTC broken down, and its microseconds. */
static void start_time(const struct sy_logrec *rec, struct tm *tm, long *us)
{
    double t = rec->start_s > 0 && isfinite(rec->start_s) ? rec->start_s : 0;
    if (t > 253402300799.0) /* 9999-12-31T23:59:59Z */
        t = 253402300799.0;
    double sec = floor(t);
    *us = (long)((t - sec) * 1e6 + 0.5);
    if (*us > 999999)
        *us = 999999;
    time_t tt = (time_t)sec;
    if (!gmtime_r(&tt, tm))
        memset(tm, 0, sizeof *tm);
}

static const char *rec_id(const struct sy_logrec *rec)
{
    return rec->id && *rec->id ? rec->id : rec->call_id ? rec->call_id : "";
}

/* n cut back so that s[0..n) does not end inside a UTF-8 sequence. */
static size_t utf8_cut(const char *s, size_t n)
{
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

static void sha256_hex(const char *s, size_t n, char out[65])
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)s, n, d);
    sy_hex_encode(out, d, sizeof d);
}

/* LiteLLM's _bounded_s3_file_name: as much of the (sanitized) name as max
 * allows, then "_" and the SHA-256 of the whole (unsanitized) name. */
static int bounded_name(struct sy_buf *o, const char *raw, size_t rawn, const char *san, size_t sann, size_t max)
{
    char dg[65];
    sha256_hex(raw, rawn, dg);
    size_t hb = max > 65 ? max - 65 : 0;
    if (hb > HEAD_BYTES)
        hb = HEAD_BYTES;
    if (hb > sann)
        hb = sann;
    hb = hb < sann ? utf8_cut(san, hb) : hb;
    int rc = 0;
    if (hb) {
        rc |= sy_buf_append(o, san, hb);
        rc |= SY_BUF_LIT(o, "_");
    }
    rc |= sy_buf_append(o, dg, 64);
    return rc;
}

int sy_s3_object_key(const void *inst, const struct sy_logrec *rec, struct sy_buf *out)
{
    const struct s3 *s = inst;
    struct sy_buf pre, file, san;
    sy_buf_init(&pre, 1 << 16);
    sy_buf_init(&file, 1 << 16);
    sy_buf_init(&san, 1 << 16);
    int rc = 0;
    /* the configured prefix: s3_path with one '/', then the folders */
    if (s->path) {
        size_t n = strlen(s->path);
        while (n > 0 && s->path[n - 1] == '/')
            n--;
        rc |= sy_buf_append(&pre, s->path, n);
        rc |= SY_BUF_LIT(&pre, "/");
    }
    int redact = (rec->flags & SY_LOGREC_REDACT_KEY) != 0;
    if (s->team_prefix && !redact && rec->team_alias && *rec->team_alias) {
        rc |= sy_buf_puts(&pre, rec->team_alias);
        rc |= SY_BUF_LIT(&pre, "/");
    }
    if (s->key_prefix && !redact && rec->key_alias && *rec->key_alias) {
        rc |= sy_buf_puts(&pre, rec->key_alias);
        rc |= SY_BUF_LIT(&pre, "/");
    }
    struct tm tm;
    long us;
    start_time(rec, &tm, &us);
    char date[48], tpart[80];
    snprintf(date, sizeof date, "%04d-%02d-%02d/", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
    snprintf(tpart, sizeof tpart, "time-%02d-%02d-%02d-%06ld_", tm.tm_hour, tm.tm_min, tm.tm_sec, us);
    const char *id = rec_id(rec);
    rc |= sy_buf_puts(&file, tpart);
    rc |= sy_buf_puts(&file, id);
    rc |= sy_buf_puts(&san, tpart);
    for (const char *c = id; *c && !rc; c++)
        rc |= sy_buf_append(&san, *c == '/' ? "_" : c, 1);
    if (rc)
        goto done;
    size_t dl = strlen(date);
    size_t l0 = out->len;
    if (pre.len + dl + san.len + 5 <= SY_S3_MAX_KEY) {
        rc |= sy_buf_append(out, pre.p ? pre.p : "", pre.len);
        rc |= sy_buf_puts(out, date);
        rc |= sy_buf_append(out, san.p, san.len);
        rc |= SY_BUF_LIT(out, ".json");
    } else {
        size_t budget = SY_S3_MAX_KEY - dl - 5;
        if (pre.len + MIN_FILE_BYTES <= budget) {
            rc |= sy_buf_append(out, pre.p, pre.len);
            rc |= sy_buf_puts(out, date);
            rc |= bounded_name(out, file.p, file.len, san.p, san.len, budget - pre.len);
        } else {
            /* the digest alone as the name; the prefix cut to what is left, plus
             * a folder naming the whole prefix (_bounded_s3_prefix) */
            char dg[65];
            sha256_hex(pre.p, pre.len, dg);
            size_t max = budget - MIN_FILE_BYTES, seg = DIGEST_DIR + 1;
            size_t hb = max > seg + 1 ? utf8_cut(pre.p, max - seg - 1) : 0;
            while (hb > 0 && pre.p[hb - 1] == '/')
                hb--;
            if (hb) {
                rc |= sy_buf_append(out, pre.p, hb);
                rc |= SY_BUF_LIT(out, "/");
            }
            rc |= sy_buf_append(out, dg, DIGEST_DIR);
            rc |= SY_BUF_LIT(out, "/");
            rc |= sy_buf_puts(out, date);
            rc |= bounded_name(out, file.p, file.len, san.p, san.len, MIN_FILE_BYTES);
        }
        rc |= SY_BUF_LIT(out, ".json");
    }
    if (rc) {
        out->len = l0;
        if (out->p)
            out->p[l0] = 0;
    }
done:
    sy_buf_free(&pre);
    sy_buf_free(&file);
    sy_buf_free(&san);
    return rc ? SY_ENOSPC : 0;
}

/* "time-YYYY-MM-DDTHH-MM-SS-ffffff_{id}.json", printable ASCII only, '/', '"'
 * and '\' made '_', at most FILENAME_MAX_B bytes (else head + digest). */
static int download_name(const struct sy_logrec *rec, struct sy_buf *o)
{
    struct tm tm;
    long us;
    start_time(rec, &tm, &us);
    char t[96];
    snprintf(t, sizeof t, "time-%04d-%02d-%02dT%02d-%02d-%02d-%06ld_", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, us);
    struct sy_buf n;
    sy_buf_init(&n, 1 << 16);
    int rc = sy_buf_puts(&n, t);
    const char *id = rec_id(rec);
    size_t idn = strlen(id);
    for (size_t i = 0; i < idn && !rc; i++) {
        unsigned char c = (unsigned char)id[i];
        char ch = (c < 0x20 || c >= 0x7f || c == '/' || c == '"' || c == '\\') ? '_' : (char)c;
        rc |= sy_buf_append(&n, &ch, 1);
    }
    if (!rc) {
        if (n.len + 5 <= FILENAME_MAX_B) {
            rc |= sy_buf_append(o, n.p, n.len);
        } else {
            char dg[65];
            sha256_hex(id, idn, dg);
            rc |= sy_buf_append(o, n.p, FILENAME_MAX_B - 5 - 65);
            rc |= SY_BUF_LIT(o, "_");
            rc |= sy_buf_append(o, dg, 64);
        }
        rc |= SY_BUF_LIT(o, ".json");
    }
    sy_buf_free(&n);
    return rc;
}

/* ---- the request -------------------------------------------------------------- */

/* s3_log_prompts_only: the payload with its top-level "response" made null. */
static int body_prompts_only(const char *p, size_t n, struct sy_buf *o)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int rc;
    uint32_t v;
    if (sy_jdom_parse(&d, p, n, &a, 0) == 0 && (v = sy_jdom_get(&d, 0, "response")) != 0) {
        rc = sy_buf_append(o, p, d.n[v].off);
        rc |= SY_BUF_LIT(o, "null");
        rc |= sy_buf_append(o, p + d.n[v].off + d.n[v].len, n - d.n[v].off - d.n[v].len);
    } else {
        rc = sy_buf_append(o, p, n);
    }
    sy_arena_free(&a);
    return rc;
}

/* s3_strip_base64_files (s3_v2), LiteLLM's CustomLogger._strip_base64_from_messages:
 * in the payload's "messages", non-object messages are dropped; a list content
 * keeps the items that are not objects, or objects without a "file" member
 * whose "type" is absent, not a string, or "text"; every kept value (and every
 * other member of the message) has its inline data URIs
 *   data:(application|image|audio|video)/[a-zA-Z0-9.+-]+;base64,[A-Za-z0-9+/=\s]+
 * replaced by "[BASE64_REDACTED]", at most B64_MAX_DEPTH levels down (deeper:
 * "[MAX_DEPTH_REACHED]"); a message without content gets "content": null. */
#define B64_MAX_DEPTH 10

static int b64_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); /* Python's str \s, ASCII part */
}

static int alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The length of an inline data URI at s[i..n), 0 when none starts there. */
static size_t b64_match(const char *s, size_t n, size_t i)
{
    static const char *const types[] = {"application/", "image/", "audio/", "video/"};
    if (n - i < 5 || memcmp(s + i, "data:", 5) != 0)
        return 0;
    size_t j = i + 5, k;
    for (k = 0; k < 4; k++) {
        size_t l = strlen(types[k]);
        if (n - j >= l && !memcmp(s + j, types[k], l)) {
            j += l;
            break;
        }
    }
    if (k == 4)
        return 0;
    size_t st = j;
    while (j < n && (alnum((unsigned char)s[j]) || s[j] == '.' || s[j] == '+' || s[j] == '-'))
        j++;
    if (j == st || n - j < 8 || memcmp(s + j, ";base64,", 8) != 0)
        return 0;
    j += 8;
    st = j;
    while (j < n &&
           (alnum((unsigned char)s[j]) || s[j] == '+' || s[j] == '/' || s[j] == '=' || b64_space((unsigned char)s[j])))
        j++;
    return j > st ? j - i : 0;
}

static void b64_str(struct sy_jw *w, const struct sy_jdoc *d, uint32_t i, struct sy_arena *a)
{
    size_t n;
    const char *s = sy_jdom_str(d, i, a, &n);
    size_t first = n;
    for (size_t k = 0; s && k < n; k++)
        if (s[k] == 'd' && b64_match(s, n, k)) {
            first = k;
            break;
        }
    if (!s || first == n) {
        sy_jw_node(w, d, i);
        return;
    }
    struct sy_buf t;
    sy_buf_init(&t, n + 64);
    int rc = sy_buf_append(&t, s, first);
    for (size_t k = first; k < n && !rc;) {
        size_t m = s[k] == 'd' ? b64_match(s, n, k) : 0;
        if (m) {
            rc |= SY_BUF_LIT(&t, "[BASE64_REDACTED]");
            k += m;
        } else {
            rc |= sy_buf_append(&t, s + k, 1);
            k++;
        }
    }
    if (rc)
        w->err = SY_ENOSPC;
    else
        sy_jw_str(w, t.p, t.len);
    sy_buf_free(&t);
}

static void b64_value(struct sy_jw *w, const struct sy_jdoc *d, uint32_t i, int depth, struct sy_arena *a)
{
    if (depth > B64_MAX_DEPTH) {
        sy_jw_cstr(w, "[MAX_DEPTH_REACHED]");
        return;
    }
    switch (sy_jdom_type(d, i)) {
    case 's': b64_str(w, d, i, a); return;
    case 'a':
        sy_jw_arr(w);
        for (uint32_t e = sy_jdom_first(d, i); e; e = sy_jdom_next(d, e))
            b64_value(w, d, e, depth + 1, a);
        sy_jw_end(w);
        return;
    case 'o':
        sy_jw_obj(w);
        for (uint32_t k = sy_jdom_first(d, i); k; k = sy_jdom_next_key(d, k)) {
            size_t kn;
            const char *ks = sy_jdom_str(d, k, a, &kn);
            sy_jw_keyn(w, ks ? ks : "", ks ? kn : 0);
            b64_value(w, d, sy_jdom_val(k), depth + 1, a);
        }
        sy_jw_end(w);
        return;
    default: sy_jw_node(w, d, i);
    }
}

/* LiteLLM's _should_keep_content */
static int b64_keep(const struct sy_jdoc *d, uint32_t c)
{
    if (sy_jdom_type(d, c) != 'o')
        return 1;
    if (sy_jdom_get(d, c, "file"))
        return 0;
    uint32_t t = sy_jdom_get(d, c, "type");
    return !(sy_jdom_kind(d, t) == 's' && !sy_jdom_str_eq(d, t, "text"));
}

static int body_strip_b64(const char *p, size_t n, struct sy_buf *o)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    uint32_t m;
    int rc;
    if (sy_jdom_parse(&d, p, n, &a, 0) != 0 || sy_jdom_type(&d, 0) != 'o' || !(m = sy_jdom_get(&d, 0, "messages")) ||
        sy_jdom_type(&d, m) != 'a' || !d.n[m].kids) {
        rc = sy_buf_append(o, p, n);
        sy_arena_free(&a);
        return rc;
    }
    rc = sy_buf_append(o, p, d.n[m].off);
    struct sy_jw w;
    sy_jw_init(&w, o);
    sy_jw_arr(&w);
    for (uint32_t e = sy_jdom_first(&d, m); e; e = sy_jdom_next(&d, e)) {
        if (sy_jdom_type(&d, e) != 'o')
            continue;
        sy_jw_obj(&w);
        int content = 0;
        for (uint32_t k = sy_jdom_first(&d, e); k; k = sy_jdom_next_key(&d, k)) {
            size_t kn;
            const char *ks = sy_jdom_str(&d, k, &a, &kn);
            uint32_t v = sy_jdom_val(k);
            sy_jw_keyn(&w, ks ? ks : "", ks ? kn : 0);
            if (ks && kn == 7 && !memcmp(ks, "content", 7) && sy_jdom_type(&d, v) == 'a') {
                content = 1;
                sy_jw_arr(&w);
                for (uint32_t c = sy_jdom_first(&d, v); c; c = sy_jdom_next(&d, c))
                    if (b64_keep(&d, c))
                        b64_value(&w, &d, c, 0, &a);
                sy_jw_end(&w);
            } else {
                content |= ks && kn == 7 && !memcmp(ks, "content", 7);
                b64_value(&w, &d, v, 0, &a);
            }
        }
        if (!content) {
            sy_jw_key(&w, "content");
            sy_jw_null(&w);
        }
        sy_jw_end(&w);
    }
    sy_jw_end(&w);
    size_t end = d.n[m].off + d.n[m].len;
    rc |= w.err;
    rc |= sy_buf_append(o, p + end, n - end);
    sy_arena_free(&a);
    return rc ? SY_ENOSPC : 0;
}

int sy_s3_encode_at(void *inst, struct sy_logrec *rec, int64_t now, struct sy_sink_req *out)
{
    struct s3 *s = inst;
    memset(out, 0, sizeof *out);
    size_t plen = 0;
    const char *payload = sy_log_payload(rec, &plen);
    if (!payload)
        return -1;
    out->method = "PUT";
    sy_buf_init(&out->body, plen + (s->strip_b64 ? 6 * plen + 4096 : 64)); /* {} -> {"content":null} */
    sy_buf_init(&out->headers, 1 << 16);
    struct sy_buf key, path, cd;
    sy_buf_init(&key, 1 << 16);
    sy_buf_init(&path, 1 << 16);
    sy_buf_init(&cd, 1 << 16);
    int rc = s->prompts_only ? body_prompts_only(payload, plen, &out->body)
             : s->strip_b64  ? body_strip_b64(payload, plen, &out->body)
                             : sy_buf_append(&out->body, payload, plen);
    rc |= sy_s3_object_key(s, rec, &key);
    rc |= sy_buf_puts(&path, s->base);
    rc |= SY_BUF_LIT(&path, "/");
    if (!rc)
        rc |= sy_sigv4_uri_encode(&path, key.p, key.len, 1);
    rc |= SY_BUF_LIT(&cd, "inline; filename=\"");
    rc |= download_name(rec, &cd);
    rc |= SY_BUF_LIT(&cd, "\"");
    if (rc)
        goto fail;
    size_t ol = strlen(s->origin);
    if (!(out->url = malloc(ol + path.len + 1)))
        goto fail;
    memcpy(out->url, s->origin, ol);
    memcpy(out->url + ol, path.p, path.len + 1);

    /* Content-MD5: base64 of the body's MD5 */
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdl = 0;
    char md5b64[32];
    if (!EVP_Digest(out->body.p ? out->body.p : "", out->body.len, md, &mdl, EVP_md5(), NULL) || mdl != 16)
        goto fail;
    EVP_EncodeBlock((unsigned char *)md5b64, md, 16);

    struct sy_sigv4_header h[8];
    size_t nh = 0;
    h[nh++] = (struct sy_sigv4_header){"Content-Type", "application/json"};
    h[nh++] = (struct sy_sigv4_header){"Content-MD5", md5b64};
    h[nh++] = (struct sy_sigv4_header){"Content-Language", "en"};
    h[nh++] = (struct sy_sigv4_header){"Content-Disposition", cd.p};
    h[nh++] = (struct sy_sigv4_header){"Cache-Control", "private, immutable, max-age=31536000, s-maxage=0"};
    if (s->sse)
        h[nh++] = (struct sy_sigv4_header){"x-amz-server-side-encryption", s->sse};
    if (s->kms)
        h[nh++] = (struct sy_sigv4_header){"x-amz-server-side-encryption-aws-kms-key-id", s->kms};
    for (size_t i = 0; i < nh && !rc; i++)
        rc |= sy_buf_printf(&out->headers, "%s: %s\r\n", h[i].name, h[i].value);
    if (rc)
        goto fail;
    char date[17];
    sy_sigv4_amz_date(now, date);
    struct sy_sigv4 sig = {.method = "PUT",
                           .host = s->host,
                           .path = path.p,
                           .headers = h,
                           .nheaders = nh,
                           .payload = out->body.p,
                           .payload_len = out->body.len,
                           .access_key = s->ak,
                           .secret_key = s->sk,
                           .session_token = s->token,
                           .region = s->region,
                           .service = "s3",
                           .amz_date = date,
                           .s3 = 1};
    if (sy_sigv4_sign(&sig, &out->headers) != 0)
        goto fail;
    sy_buf_free(&key);
    sy_buf_free(&path);
    sy_buf_free(&cd);
    return 0;
fail:
    sy_buf_free(&key);
    sy_buf_free(&path);
    sy_buf_free(&cd);
    sy_sink_req_free(out);
    return -1;
}

static int s3_encode(void *inst, struct sy_logrec *const *recs, size_t n, struct sy_sink_req *out, size_t *nout)
{
    *nout = 0;
    int64_t now = (int64_t)time(NULL);
    for (size_t i = 0; i < n && *nout < SY_SINK_MAX_REQS; i++) {
        if (recs[i]->flags & SY_LOGREC_RAW) /* a message prepared for another sink */
            continue;
        if (sy_s3_encode_at(inst, recs[i], now, &out[*nout]) != 0) {
            while (*nout > 0)
                sy_sink_req_free(&out[--*nout]);
            return -1;
        }
        (*nout)++;
    }
    return 0;
}

/* S3's error document: <Error><Code>RequestTimeout</Code>... */
static int s3_verdict(void *inst, int status, const char *body, size_t n)
{
    (void)inst;
    if (status >= 200 && status < 300)
        return SY_SINK_SENT;
    if (status == 0 || status == 408 || status == 429 || status >= 500)
        return SY_SINK_RETRY;
    static const char rt[] = "<Code>RequestTimeout</Code>";
    if (status == 400 && body && n >= sizeof rt - 1 && memmem(body, n, rt, sizeof rt - 1))
        return SY_SINK_RETRY;
    return SY_SINK_DROP;
}

const struct sy_sink_ops sy_sink_s3 = {
    .name = "s3",
    .max_batch = 1,
    .max_inflight = 32, /* one PUT per record: 32 on their way (LiteLLM fires them all at once) */
    .open = s3_open_v1,
    .close = s3_close,
    .encode = s3_encode,
    .verdict = s3_verdict,
};

const struct sy_sink_ops sy_sink_s3_v2 = {
    .name = "s3_v2",
    .max_batch = 1,
    .max_inflight = 32, /* one PUT per record: 32 on their way (LiteLLM fires them all at once) */
    .open = s3_open_v2,
    .close = s3_close,
    .encode = s3_encode,
    .verdict = s3_verdict,
};
