/* test_vertex.c - the Vertex AI adapter (Gemini on Vertex URLs, Claude through
 * rawPredict, :predict embeddings) against golden/vertex/, with the golden
 * runner of test_gemini.c; plus configure(): project, location and
 * credentials from litellm_params, the environment and credential files.
 *
 * Golden config values may name credentials made here: @SA_FILE@ (a service
 * account file path) and @SA_JSON@ (its JSON text); the key is generated at
 * start, so no key material lives in the tree. */
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char sa_path[256];
static char *sa_json;

static const char *file_value(const char *v)
{
    if (strcmp(v, "@SA_FILE@") == 0)
        return sa_path;
    if (strcmp(v, "@SA_JSON@") == 0)
        return sa_json;
    return v;
}

#define GOLDEN_ADAPTER       sy_adapter_vertex
#define GOLDEN_SUBDIR        "vertex"
#define GOLDEN_FILE_VALUE(v) file_value(v)
#include "test_gemini.c"

#include "providers/gauth.h"

/* A service-account JSON with a fresh RSA key, written to a temporary file. */
static void make_sa(void)
{
    EVP_PKEY *pk = EVP_RSA_gen(2048);
    assert_non_null(pk);
    BIO *b = BIO_new(BIO_s_mem());
    assert_true(PEM_write_bio_PrivateKey(b, pk, NULL, NULL, 0, NULL, NULL) == 1);
    char *pem;
    long pl = BIO_get_mem_data(b, &pem);
    struct sy_buf j;
    sy_buf_init(&j, 1 << 16);
    SY_BUF_LIT(&j, "{\"type\":\"service_account\",\"project_id\":\"proj-from-creds\",\"private_key_id\":\"kid1\","
                   "\"private_key\":\"");
    sy_buf_json_escape(&j, pem, (size_t)pl);
    SY_BUF_LIT(&j, "\",\"client_email\":\"sa@proj-from-creds.iam.gserviceaccount.com\","
                   "\"token_uri\":\"https://oauth2.googleapis.com/token\"}");
    sa_json = strdup(j.p);
    sy_buf_free(&j);
    BIO_free(b);
    EVP_PKEY_free(pk);
    const char *tmp = getenv("TMPDIR");
    snprintf(sa_path, sizeof sa_path, "%s/sy-test-vertex-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(sa_path);
    assert_true(fd >= 0);
    assert_true(write(fd, sa_json, strlen(sa_json)) == (ssize_t)strlen(sa_json));
    close(fd);
}

static int configure(struct sy_kv *kv, size_t n, const char *api_base, struct sy_pconf *pc, char *err, size_t el)
{
    struct sy_deployment d = {
        .provider = "vertex_ai", .params = kv, .n_params = n, .api_base = api_base, .max_tokens = -1};
    memset(pc, 0, sizeof *pc);
    return sy_adapter_vertex.configure(&d, 0, pc, err, el);
}

static void configure_sources(void **state)
{
    (void)state;
    char err[256];
    struct sy_pconf pc;
    for (size_t i = 0; i < sizeof cleared_env / sizeof cleared_env[0]; i++)
        unsetenv(cleared_env[i]);
    /* nothing: no project is a config error */
    assert_int_equal(configure(NULL, 0, NULL, &pc, err, sizeof err), -1);
    assert_non_null(strstr(err, "project"));
    sy_pconf_free(&pc);
    /* environment: project, location; the default host for the location */
    setenv("VERTEXAI_PROJECT", "env-proj", 1);
    setenv("VERTEXAI_LOCATION", "asia-northeast1", 1);
    assert_int_equal(configure(NULL, 0, NULL, &pc, err, sizeof err), 0);
    assert_string_equal(pc.project, "env-proj");
    assert_string_equal(pc.region, "asia-northeast1");
    assert_string_equal(pc.base, "https://asia-northeast1-aiplatform.googleapis.com");
    assert_null(pc.credentials);
    sy_pconf_free(&pc);
    /* litellm_params win; credentials as JSON text; "global" */
    struct sy_kv kv[] = {{"vertex_project", "p1"}, {"vertex_location", "global"}, {"vertex_credentials", sa_json}};
    assert_int_equal(configure(kv, 3, NULL, &pc, err, sizeof err), 0);
    assert_string_equal(pc.project, "p1");
    assert_string_equal(pc.base, "https://aiplatform.googleapis.com");
    assert_string_equal(pc.credentials, sa_json);
    sy_pconf_free(&pc);
    unsetenv("VERTEXAI_PROJECT");
    unsetenv("VERTEXAI_LOCATION");
    /* GOOGLE_APPLICATION_CREDENTIALS: the file's text, its project_id */
    setenv("GOOGLE_APPLICATION_CREDENTIALS", sa_path, 1);
    assert_int_equal(configure(NULL, 0, NULL, &pc, err, sizeof err), 0);
    assert_string_equal(pc.project, "proj-from-creds");
    assert_string_equal(pc.region, "us-central1");
    assert_string_equal(pc.credentials, sa_json);
    sy_pconf_free(&pc);
    unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
    /* a credentials path that does not exist, broken JSON, a bad location */
    struct sy_kv missing[] = {{"vertex_project", "p"}, {"vertex_credentials", "/nonexistent/sa.json"}};
    assert_int_equal(configure(missing, 2, NULL, &pc, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot open"));
    sy_pconf_free(&pc);
    struct sy_kv broken[] = {{"vertex_project", "p"}, {"vertex_credentials", "{\"type\":\"service_account\"}"}};
    assert_int_equal(configure(broken, 2, NULL, &pc, err, sizeof err), -1);
    assert_non_null(strstr(err, "client_email"));
    sy_pconf_free(&pc);
    struct sy_kv badloc[] = {{"vertex_project", "p"}, {"vertex_location", "us-central1.evil.com/x"}};
    assert_int_equal(configure(badloc, 2, NULL, &pc, err, sizeof err), -1);
    sy_pconf_free(&pc);
    /* an api_base naming a full path needs no project */
    assert_int_equal(configure(NULL, 0, "https://proxy.example/v1/projects/p/locations/l/publishers/google/models/m",
                               &pc, err, sizeof err),
                     0);
    sy_pconf_free(&pc);
}

/* The credentials the tests make are usable by gauth (the gateway mints tokens from pc->credentials). */
static void credentials_sign(void **state)
{
    (void)state;
    struct sy_gauth_sa sa;
    char err[128];
    assert_int_equal(sy_gauth_parse_sa(sa_json, strlen(sa_json), &sa, err, sizeof err), 0);
    struct sy_buf b;
    sy_buf_init(&b, 1 << 16);
    assert_int_equal(sy_gauth_request_body(&sa, 1700000000, NULL, &b), 0);
    assert_memory_equal(b.p, "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=", 75);
    sy_buf_free(&b);
    sy_gauth_sa_free(&sa);
}

int main(void)
{
    make_sa();
    static const struct CMUnitTest extra[] = {
        cmocka_unit_test(configure_sources),
        cmocka_unit_test(credentials_sign),
    };
    int rc = run_golden("vertex", extra, sizeof extra / sizeof extra[0]);
    unlink(sa_path);
    free(sa_json);
    return rc;
}
