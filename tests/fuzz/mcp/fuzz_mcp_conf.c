/* fuzz_mcp_conf.c - libFuzzer harness for the server set (src/mcp/conf.c)
 * and the permission rules over it (src/mcp/perm.c). The input, split at NUL
 * bytes, is mcp_servers (JSON), mcp_aliases (JSON), database rows (JSON) and
 * a tool permission object. A set that builds must be consistent: each
 * server is found by its prefix and id, a namespaced "<prefix>-t" splits to
 * a server whose prefix starts it, the fingerprint is 64 hex digits, the
 * GET /v1/mcp/server JSON is valid; an admin may use every server and an
 * empty key only allow_all_keys ones; the tool check never crashes on the
 * permission text. A refused one has an error. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/buf.h"
#include "mcp/mcp.h"
#include "providers/jdom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int once;
    if (!once) { /* DB credentials go through the decryption path too */
        sy_mcp_set_master_key("fuzz-master-key");
        once = 1;
    }
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    const char *part[4] = {NULL, NULL, NULL, NULL};
    size_t k = 0, at = 0;
    for (size_t i = 0; i <= size && k < 4; i++)
        if (i == size || s[i] == 0) {
            part[k++] = s + at;
            at = i + 1;
        }
    char err[256];
    struct sy_buf warn;
    sy_buf_init(&warn, 1 << 20);
    struct sy_mcp_set *set = sy_mcp_set_build(part[0], part[1], part[2], err, sizeof err, &warn);
    if (!set) {
        if (!err[0])
            abort();
    } else {
        unsigned char *ok = malloc(set->n + 1);
        struct sy_buf b;
        sy_buf_init(&b, 1 << 22);
        for (size_t i = 0; i < set->n; i++) {
            const struct sy_mcp_server *sv = &set->s[i];
            if (sv->idx != i || !sv->id || !sv->name || !sv->prefix || !sv->prefix[0] || strlen(sv->fingerprint) != 64)
                abort();
            if (sy_mcp_find(set, sv->id, strlen(sv->id)) == NULL)
                abort();
            const struct sy_mcp_server *f = sy_mcp_find(set, sv->prefix, strlen(sv->prefix));
            if (!f)
                abort();
            size_t pl = strlen(sv->prefix);
            char *tn = malloc(pl + 3);
            memcpy(tn, sv->prefix, pl);
            memcpy(tn + pl, "-t", 3);
            const char *tool;
            size_t tl;
            const struct sy_mcp_server *sp = sy_mcp_split_tool(set, tn, pl + 2, &tool, &tl);
            if (!sp || strncmp(tn, sp->prefix, strlen(sp->prefix)) != 0 || tool + tl != tn + pl + 2)
                abort();
            free(tn);
            sy_buf_reset(&b);
            sy_mcp_server_json(sv, &b);
            struct sy_arena a;
            sy_arena_init(&a);
            struct sy_jdoc d;
            if (sy_buf_failed(&b) || sy_jdom_parse(&d, b.p, b.len, &a, 0) != 0)
                abort();
            sy_arena_free(&a);
            struct sy_objperm p = {NULL, 0, NULL, 0, (char *)(part[3] ? part[3] : "")};
            sy_mcp_tool_allowed(sv, "t", 1, &p, &p);
        }
        sy_mcp_allowed(set, 1, NULL, NULL, NULL, ok);
        for (size_t i = 0; i < set->n; i++)
            if (ok[i] != 1)
                abort();
        sy_mcp_allowed(set, 0, NULL, NULL, NULL, ok);
        for (size_t i = 0; i < set->n; i++)
            if (ok[i] != (set->s[i].allow_all_keys ? 1 : 0))
                abort();
        sy_buf_free(&b);
        free(ok);
        sy_mcp_set_unref(set);
    }
    sy_buf_free(&warn);
    free(s);
    return 0;
}
