/* fuzz_admin_json.c - libFuzzer harness: arbitrary request bodies into the
 * /key/... handlers (admin/keys.c) on an in-memory SQLite store.
 *
 * Input: the first byte picks the handler (generate, update, delete,
 * regenerate, block, info query, list query), the rest is the body (or the
 * query string). Must never crash or leak, and every answer must be a JSON
 * document with a status the handler set. A key "sk-fuzz-key-0001" exists so
 * bodies that name it reach the update paths; the tables are emptied every
 * 256 inputs to keep the store small.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>
#include <json-c/json.h>

#include "admin/admin.h"
#include "core/log.h"
#include "store/store.h"

static struct sy_store *st;
static unsigned runs;

static void run(int method, const char *path, const char *query, const char *body, size_t n, int admin)
{
    struct sy_admin_ctx a;
    int known;
    memset(&a, 0, sizeof a);
    a.method = method;
    a.path = path;
    a.query = query;
    a.body = body;
    a.body_len = n;
    a.is_admin = admin;
    a.caller_user_id = admin ? NULL : "fuzz-user";
    a.now = 1.8e9;
    a.status = 200;
    sy_buf_init(&a.out, 1 << 22);
    const struct sy_admin_route *r = sy_admin_match(method, path, strlen(path), &known);
    if (!r)
        abort();
    r->fn(st, &a);
    struct json_object *j = a.out.p ? json_tokener_parse(a.out.p) : NULL;
    if (!j || a.status < 200 || a.status > 599) {
        fprintf(stderr, "bad answer %d: %s\n", a.status, a.out.p ? a.out.p : "(none)");
        abort();
    }
    json_object_put(j);
    for (int i = 0; i < a.ninval; i++)
        free(a.inval[i]);
    sy_buf_free(&a.out);
}

static void reset_db(void)
{
    static const char *const t[] = {"LiteLLM_VerificationToken", "LiteLLM_DeletedVerificationToken",
                                    "LiteLLM_BudgetTable"};
    char sql[128];
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        snprintf(sql, sizeof sql, "DELETE FROM \"%s\"", t[i]);
        sy_store_exec(st, sql, 0, NULL, NULL, NULL);
    }
    static const char seed[] = "{\"key\":\"sk-fuzz-key-0001\",\"key_alias\":\"fuzz\",\"user_id\":\"fuzz-user\"}";
    run(HTTP_POST, "/key/generate", "", seed, sizeof seed - 1, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!st) {
        struct sy_store_conf conf = {.url = ":memory:"};
        char err[256];
        sy_log_level = SY_LOG_ERROR;
        /* a strong reference: routes.c names the tables weakly, which alone
         * does not pull admin/keys.o out of the static library */
        if (!sy_admin_key_routes[0].path)
            abort();
        st = sy_store_open(&conf, err, sizeof err);
        if (!st || sy_store_migrate(st) < 0)
            abort();
        reset_db();
    }
    if (size < 1)
        return 0;
    if (++runs % 256 == 0)
        reset_db();
    /* a NUL-terminated copy (handlers get NUL-terminated bodies) */
    char *body = malloc(size);
    if (!body)
        return 0;
    memcpy(body, data + 1, size - 1);
    body[size - 1] = 0;
    size_t n = size - 1;
    int admin = !(data[0] & 0x80);
    switch (data[0] & 7) {
    case 0: run(HTTP_POST, "/key/generate", "", body, n, admin); break;
    case 1: run(HTTP_POST, "/key/update", "", body, n, admin); break;
    case 2: run(HTTP_POST, "/key/delete", "", body, n, admin); break;
    case 3: run(HTTP_POST, "/key/regenerate", "", body, n, admin); break;
    case 4: run(HTTP_POST, "/key/block", "", body, n, admin); break;
    case 5:
        if (!memchr(body, 0, n)) /* query strings are C strings */
            run(HTTP_GET, "/key/info", body, "", 0, admin);
        break;
    case 6:
        if (!memchr(body, 0, n))
            run(HTTP_GET, "/key/list", body, "", 0, admin);
        break;
    default: run(HTTP_POST, "/key/update", "", body, n, admin); break;
    }
    free(body);
    return 0;
}
