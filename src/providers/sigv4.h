/* sigv4.h - AWS Signature Version 4 request signing (header form).
 *
 * The signer is a pure function: the caller passes the request as it will be
 * sent (method, Host value, path, query, the headers to sign, the body), the
 * credentials and the time; it gets the header lines to add. Nothing is read
 * from the environment or the clock, so a fixed input signs to fixed bytes
 * (the official aws4_testsuite vectors are the unit tests).
 *
 *   canonical request                    string to sign
 *   ---------------------------------    --------------------------------------------
 *   METHOD\n                             AWS4-HMAC-SHA256\n
 *   canonical URI\n                      YYYYMMDDTHHMMSSZ\n
 *   canonical query\n                    YYYYMMDD/region/service/aws4_request\n
 *   name:value\n  (one per signed        hex(SHA256(canonical request))
 *   ...            header, sorted)
 *   \n                                   signing key = HMAC(HMAC(HMAC(HMAC("AWS4" secret,
 *   name;name;...\n                        date), region), service), "aws4_request")
 *   hex(SHA256(payload))                 signature = hex(HMAC(signing key, string to sign))
 *
 *   canonical URI    the path with dot segments and empty segments removed, then
 *                    every byte but A-Z a-z 0-9 - _ . ~ / percent-encoded (%XX upper
 *                    case) - so an already encoded path is encoded twice ("%3A" ->
 *                    "%253A"), as botocore does for every service but S3
 *   canonical query  pairs split on '&' and the first '=', percent-decoded, encoded
 *                    again with the same unreserved set ('/' encoded too), sorted by
 *                    name then value, joined with '&'
 *   headers          names lower-cased; values trimmed, inner whitespace runs (incl.
 *                    line folds) collapsed to one space; repeated names joined with ','
 *                    in the order given; host, x-amz-date, (when a session token is
 *                    set) x-amz-security-token and (S3) x-amz-content-sha256 are
 *                    always signed
 *
 * S3 (.s3 = 1, botocore's S3SigV4Auth): the canonical URI is the path exactly
 * as sent (already percent-encoded once by the caller, sy_sigv4_uri_encode with
 * keep_slash; no dot-segment removal, no second encoding), and the payload hash
 * is also sent and signed as x-amz-content-sha256 (the payload is signed, never
 * UNSIGNED-PAYLOAD).
 *
 * Output (appended to headers_out, in this order):
 *
 *   X-Amz-Date: 20150830T123600Z\r\n
 *   X-Amz-Content-SHA256: <64 hex>\r\n             (only with .s3)
 *   X-Amz-Security-Token: <token>\r\n            (only with a session token)
 *   Authorization: AWS4-HMAC-SHA256 Credential=AK/20150830/us-east-1/service/aws4_request,
 *                  SignedHeaders=host;x-amz-date, Signature=<64 hex>\r\n   (one line)
 *
 * Usage:
 *   struct sy_sigv4_header h[] = {{"content-type", "application/json"}};
 *   char date[17]; sy_sigv4_amz_date(now, date);
 *   struct sy_sigv4 s = {.method = "POST", .host = "bedrock-runtime.us-east-1.amazonaws.com",
 *                        .path = "/model/m%3A0/converse", .headers = h, .nheaders = 1,
 *                        .payload = body, .payload_len = n, .access_key = ak, .secret_key = sk,
 *                        .region = "us-east-1", .service = "bedrock", .amz_date = date};
 *   rc = sy_sigv4_sign(&s, &headers);
 */
#ifndef SY_SIGV4_H
#define SY_SIGV4_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

#define SY_SIGV4_MAX_HEADERS 32 /* signed headers per request, the implicit ones included */

/* One header to sign: name in any case, value as sent (NUL-terminated). */
struct sy_sigv4_header {
    const char *name;
    const char *value;
};

struct sy_sigv4 {
    const char *method;                    /* "POST" */
    const char *host;                      /* the Host header value as sent ("host" or "host:port") */
    const char *path;                      /* the request path as sent (percent-encoded), without the query; "" = "/" */
    const char *query;                     /* the query as sent, without '?'; NULL or "" for none */
    const struct sy_sigv4_header *headers; /* more headers to sign (not host, x-amz-date, x-amz- */
    size_t nheaders;                       /* security-token, x-amz-content-sha256: the signer adds those) */
    const void *payload;                   /* the exact body bytes; may be NULL when payload_len is 0 */
    size_t payload_len;
    const char *access_key, *secret_key;
    const char *session_token; /* NULL or "" when the credentials have none */
    const char *region, *service;
    const char *amz_date; /* "YYYYMMDDTHHMMSSZ" (sy_sigv4_amz_date) */
    int s3;               /* S3's rules (botocore's S3SigV4Auth), see above */
};

/* Sign in and append the header lines above to headers_out. 0, SY_EINVAL
 * (a missing field, a malformed amz_date, too many headers) or SY_ENOSPC /
 * SY_ENOMEM (headers_out left as it was). */
int sy_sigv4_sign(const struct sy_sigv4 *in, struct sy_buf *headers_out);

/* The intermediate texts, for tests and debugging: the canonical request and
 * the string to sign (exactly the bytes that are hashed), appended to out. */
int sy_sigv4_canonical_request(const struct sy_sigv4 *in, struct sy_buf *out);
int sy_sigv4_string_to_sign(const struct sy_sigv4 *in, struct sy_buf *out);

/* Unix seconds -> "YYYYMMDDTHHMMSSZ" (UTC) in out[17]. */
void sy_sigv4_amz_date(int64_t unix_seconds, char out[17]);

/* A Bedrock runtime POST of a JSON body (content-type application/json),
 * signed for service "bedrock" in region (NULL: us-west-2); the Authorization,
 * X-Amz-Date, X-Amz-Content-Sha256 and token headers appended to headers_out.
 * The one place Bedrock calls and token counts are signed. 0, SY_ENOSPC, or
 * another SY_E* as sy_sigv4_sign. */
int sy_sigv4_bedrock_post(const char *host, const char *path, const char *body, size_t n, const char *access_key,
                          const char *secret_key, const char *session_token, const char *region, int64_t now,
                          struct sy_buf *headers_out);
/* Append s[0..n) percent-encoded: every byte but A-Z a-z 0-9 - _ . ~ (and '/'
 * when keep_slash) as %XX. Bedrock model ids go in the URL path this way
 * (Python's urllib.parse.quote(id, safe="")). 0 or SY_ENOSPC. */
int sy_sigv4_uri_encode(struct sy_buf *out, const char *s, size_t n, int keep_slash);

#endif
