/* tcert.c - a throwaway PKI made at test time with the OpenSSL API: an EC P-256
 * CA (written to a PEM file for sy_upool_opts.ca_file) and server certificates
 * it signs for given subjectAltNames. Nothing is checked in. */
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tsrv.h"

struct tcert {
    EVP_PKEY *ca_key;
    X509 *ca;
    char ca_file[64];
    long serial;
};

static X509 *make_cert(struct tcert *t, EVP_PKEY *key, const char *cn, const char *san, int is_ca)
{
    X509 *x = X509_new();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), ++t->serial);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400);
    X509_set_pubkey(x, key);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, is_ca ? name : X509_get_subject_name(t->ca));
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, is_ca ? x : t->ca, x, NULL, NULL, 0);
    X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &ctx, NID_basic_constraints, is_ca ? "critical,CA:TRUE" : "CA:FALSE");
    X509_add_ext(x, e, -1);
    X509_EXTENSION_free(e);
    if (is_ca) {
        e = X509V3_EXT_conf_nid(NULL, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign");
    } else {
        e = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name, san);
        X509_add_ext(x, e, -1);
        X509_EXTENSION_free(e);
        e = X509V3_EXT_conf_nid(NULL, &ctx, NID_ext_key_usage, "serverAuth");
    }
    X509_add_ext(x, e, -1);
    X509_EXTENSION_free(e);
    X509_sign(x, is_ca ? key : t->ca_key, EVP_sha256());
    return x;
}

struct tcert *tcert_new(void)
{
    struct tcert *t = calloc(1, sizeof *t);
    t->ca_key = EVP_EC_gen("P-256");
    t->ca = make_cert(t, t->ca_key, "switchyard test CA", NULL, 1);
    strcpy(t->ca_file, "/tmp/sy-test-ca-XXXXXX");
    int fd = mkstemp(t->ca_file);
    FILE *f = fdopen(fd, "w");
    PEM_write_X509(f, t->ca);
    fclose(f);
    return t;
}

const char *tcert_ca_file(struct tcert *t)
{
    return t->ca_file;
}

SSL_CTX *tcert_server_ctx(struct tcert *t, const char *san)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *x = make_cert(t, key, "test server", san, 0);
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX_use_certificate(ctx, x);
    SSL_CTX_use_PrivateKey(ctx, key);
    X509_free(x);
    EVP_PKEY_free(key);
    return ctx;
}

void tcert_free(struct tcert *t)
{
    unlink(t->ca_file);
    X509_free(t->ca);
    EVP_PKEY_free(t->ca_key);
    free(t);
}
