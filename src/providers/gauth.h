/* gauth.h - the pure parts of Google OAuth2 for Vertex AI: reading a
 * credentials file, the signed JWT assertion of a service account, the token
 * request body and the token answer. No I/O and no clock here: the gateway
 * POSTs the body to sa.token_uri, caches the token and refreshes it before
 * expires_in runs out.
 *
 * Service account (RFC 7523 JWT bearer grant):
 *
 *   assertion = b64url({"alg":"RS256","typ":"JWT"[,"kid":private_key_id]}) "."
 *               b64url({"iss":client_email,"scope":scope,"aud":token_uri,
 *                       "iat":now,"exp":now+3600}) "."
 *               b64url(RSASSA-PKCS1-v1_5 SHA-256 signature of the two parts)
 *   POST token_uri  Content-Type: application/x-www-form-urlencoded
 *     grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=<jwt>
 *
 * Authorized user (the gcloud application-default file):
 *
 *   POST token_uri  grant_type=refresh_token&client_id=..&client_secret=..&refresh_token=..
 *
 * Answer: {"access_token":"ya29...","expires_in":3599,"token_type":"Bearer"},
 * or {"error":"invalid_grant","error_description":"..."}.
 *
 *   struct sy_gauth_sa sa; char why[128];
 *   if (sy_gauth_parse_sa(json, len, &sa, why, sizeof why)) ... config error ...
 *   sy_gauth_request_body(&sa, now, SY_GAUTH_SCOPE, &body);   -> POST sa.token_uri
 *   sy_gauth_parse_token(resp, rlen, tok, sizeof tok, &ttl);  -> "Authorization: Bearer tok"
 *   sy_gauth_sa_free(&sa);
 */
#ifndef SY_GAUTH_H
#define SY_GAUTH_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

#define SY_GAUTH_SCOPE     "https://www.googleapis.com/auth/cloud-platform"
#define SY_GAUTH_TOKEN_URI "https://oauth2.googleapis.com/token"
#define SY_GAUTH_LIFETIME  3600 /* seconds a service-account assertion asks for */

enum sy_gauth_kind { SY_GAUTH_SERVICE_ACCOUNT = 1, SY_GAUTH_AUTHORIZED_USER = 2 };

/* Parsed credentials; strings malloc'd (sy_gauth_sa_free), NULL when absent. */
struct sy_gauth_sa {
    enum sy_gauth_kind kind;
    char *client_email;                              /* service account: the JWT issuer */
    char *private_key;                               /* service account: PEM (PKCS#8 or PKCS#1 RSA) */
    char *private_key_id;                            /* service account: JWT header "kid"; may be NULL */
    char *token_uri;                                 /* default SY_GAUTH_TOKEN_URI */
    char *project_id;                                /* project_id, else quota_project_id; may be NULL */
    char *client_id, *client_secret, *refresh_token; /* authorized user */
};

/* Parse a credentials JSON (type "service_account", or "authorized_user").
 * The private key is checked to load as an RSA key. 0, or -1 with a one-line
 * reason in err (sa then holds nothing to free). */
int sy_gauth_parse_sa(const char *json, size_t n, struct sy_gauth_sa *sa, char *err, size_t errlen);
void sy_gauth_sa_free(struct sy_gauth_sa *sa);

/* The RS256 assertion of a service account for scope (NULL: SY_GAUTH_SCOPE),
 * iat = now, exp = now + SY_GAUTH_LIFETIME, appended to out. 0, SY_EINVAL
 * (not a service account, key not usable) or SY_ENOSPC. */
int sy_gauth_jwt(const struct sy_gauth_sa *sa, int64_t now, const char *scope, struct sy_buf *out);

/* The form body of the JWT-bearer token request for assertion jwt, appended
 * to out. 0 or SY_ENOSPC. */
int sy_gauth_token_body(const char *jwt, struct sy_buf *out);

/* The whole token request body for either kind of credentials (a service
 * account's JWT-bearer grant, an authorized user's refresh_token grant). */
int sy_gauth_request_body(const struct sy_gauth_sa *sa, int64_t now, const char *scope, struct sy_buf *out);

/* The token endpoint's answer: access_token copied into token[cap] (NUL-
 * terminated), *expires_in set (3600 when absent). 0, SY_EAUTH (an OAuth
 * error answer), SY_EJSON (not a token answer) or SY_ENOSPC (token longer
 * than cap - 1). */
int sy_gauth_parse_token(const char *body, size_t n, char *token, size_t cap, int64_t *expires_in);

/* For logs: "error: error_description" of an OAuth error answer into msg.
 * 1 when body is one, else 0 (msg ""). */
int sy_gauth_token_error(const char *body, size_t n, char *msg, size_t cap);

#endif
