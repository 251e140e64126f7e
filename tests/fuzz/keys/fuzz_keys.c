/* fuzz_keys.c - libFuzzer harness for the parsing and matching in src/keys.
 *
 * Input: up to six parts separated by NUL bytes (missing parts are empty):
 *   model \0 models (JSON array) \0 model_max_budget (JSON) \0 model_spend
 *   (JSON) \0 metadata (JSON) \0 route
 * The model lists become a key's, its team's and its member's lists; the
 * JSON is parsed as the loader parses it; every check runs, messages are
 * rendered (Python floats from the input's bytes too). Must never crash, and
 * every message must be NUL-terminated inside its buffer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/pyrepr.h"
#include "keys/keys.h"
#include "keys/keys_impl.h"

static const char *groups(void *ud, const char *model)
{
    (void)ud;
    return model[0] && (model[0] & 1) ? "g1\0beta-models\0" : NULL;
}

static struct sy_budget *bud(const char *id)
{
    struct sy_budget *b = malloc(sizeof *b);
    if (!b)
        return NULL;
    sy__budget_init(b);
    b->id = strdup(id);
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    const char *part[6] = {"", "", "", "", "", ""};
    char *p = buf, *end = buf + size;
    for (int i = 0; i < 6 && p <= end; i++) {
        part[i] = p;
        p += strlen(p) + 1;
    }
    const char *model = part[0];

    struct sy_keyinfo *ki = calloc(1, sizeof *ki);
    if (!ki) {
        free(buf);
        return 0;
    }
    atomic_init(&ki->refs, 1);
    memset(ki->token, 'f', 64);
    ki->found = 1;
    sy__budget_init(&ki->key);
    ki->key.max_budget = size % 3 ? 1.0 : -1;
    ki->user_id = strdup("u");
    ki->team_id = strdup("t");
    ki->team = bud("t");
    ki->user = bud("u");
    ki->member = bud("t:u");
    if (size % 2) {
        ki->key_alias = strdup(part[1]);
        ki->team->blocked = 1;
    }
    sy__strv_from_json(part[1], &ki->models, &ki->nmodels);
    if (ki->team)
        sy__strv_from_json(part[1], &ki->team->models, &ki->team->nmodels);
    if (ki->member && size % 5 == 0)
        sy__strv_from_json(part[1], &ki->member->models, &ki->member->nmodels);
    sy__strv_from_json(part[1], &ki->allowed_routes, &ki->nallowed_routes);
    sy__mmb_parse(part[2], part[3], &ki->mmb, &ki->nmmb);
    char *s = sy__json_get_string(part[4], "team_member_budget_id");
    free(s);
    if (ki->team)
        ki->team->metadata = strdup(part[4]);

    struct sy_check_err e;
    memset(&e, 0, sizeof e);
    if (sy_keys_check_model(ki, model, groups, NULL, &e))
        if (!memchr(e.message, 0, sizeof e.message))
            abort();
    sy_keys_add_spend(ki, NULL, model, 0.5);
    if (sy_keys_check_budgets(ki, NULL, model, &e))
        if (!memchr(e.message, 0, sizeof e.message))
            abort();
    if (sy_keys_check_key(ki, part[5], (double)size * 1e7, &e))
        if (!memchr(e.message, 0, sizeof e.message))
            abort();
    for (size_t i = 0; i < ki->nmodels; i++)
        (void)sy__wild_match(ki->models[i], model);

    if (size >= 8) {
        double d;
        memcpy(&d, data, sizeof d);
        struct sy_buf out;
        sy_buf_init(&out, 64);
        if (sy_py_float_repr(&out, d) != 0 || !out.p)
            abort();
        sy_buf_free(&out);
    }
    sy_keyinfo_unref(ki);
    free(buf);
    return 0;
}
