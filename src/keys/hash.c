/* hash.c - what a presented key becomes: its token and its display name, and
 * the user roles by name.
 *
 *   presented key "sk-AbCd...wxyz"
 *     token    = lowercase hex SHA-256 of the key's bytes (64 chars): the
 *                primary key of "LiteLLM_VerificationToken" (LiteLLM's
 *                hash_token)
 *     key_name = "sk-...wxyz": "sk-..." and the key's last 4 characters
 *                (LiteLLM's abbreviate_api_key / key_name at /key/generate)
 *
 * Roles are LiteLLM's LitellmUserRoles values; an unknown non-empty role reads
 * as internal_user, as LiteLLM's _get_user_role does.
 */
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>

#include "core/hex.h"
#include "keys/keys.h"

void sy_keys_hash(const char *key, size_t n, char out[65])
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)key, n, d);
    sy_hex_encode(out, d, SHA256_DIGEST_LENGTH);
}

void sy_keys_abbrev(const char *key, size_t n, char *out, size_t cap)
{
    if (!cap)
        return;
    size_t tail = n < 4 ? n : 4; /* Python's key[-4:] */
    snprintf(out, cap, "sk-...%.*s", (int)tail, key + n - tail);
}

static const struct {
    enum sy_role r;
    const char *name;
} roles[] = {
    {SY_ROLE_PROXY_ADMIN, "proxy_admin"},
    {SY_ROLE_PROXY_ADMIN_VIEWER, "proxy_admin_viewer"},
    {SY_ROLE_INTERNAL_USER, "internal_user"},
    {SY_ROLE_INTERNAL_USER_VIEWER, "internal_user_viewer"},
    {SY_ROLE_TEAM, "team"},
    {SY_ROLE_CUSTOMER, "customer"},
};

enum sy_role sy_role_parse(const char *s)
{
    if (!s || !*s)
        return SY_ROLE_NONE;
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
        if (strcmp(s, roles[i].name) == 0)
            return roles[i].r;
    return SY_ROLE_INTERNAL_USER;
}

const char *sy_role_name(enum sy_role r)
{
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
        if (roles[i].r == r)
            return roles[i].name;
    return NULL;
}
