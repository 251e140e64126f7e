/* fuzz_model_limits.c - libFuzzer harness: arbitrary metadata JSON and model
 * names into sy_lim_build (src/limits/build.c).
 *
 * Input: the first byte picks which entity's metadata gets the text (bit 0
 * key, bit 1 team, bit 2 org) and whether the key has a model_max_budget
 * (bit 3); the rest is "<model>\n<metadata>" (no newline: the model is
 * "gpt-4o"). Must never crash or leak; every descriptor must be well formed
 * (NUL-terminated value, at least one limit, limits >= -1, at most
 * SY_LIM_MAX), and the counters' take/settle on them must not crash.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keys/keys.h"
#include "limits/limits.h"

#define TOKEN "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned sel = data[0];
    char *in = malloc(size);
    if (!in)
        return 0;
    memcpy(in, data + 1, size - 1);
    in[size - 1] = 0;
    const char *model = "gpt-4o";
    char *meta = in;
    char *nl = memchr(in, '\n', size - 1);
    if (nl) {
        *nl = 0;
        model = in;
        meta = nl + 1;
    }

    struct sy_budget team, org, user, member;
    memset(&team, 0, sizeof team);
    memset(&org, 0, sizeof org);
    memset(&user, 0, sizeof user);
    memset(&member, 0, sizeof member);
    team.id = "t1";
    org.id = "o1";
    user.id = "u1";
    member.id = NULL; /* composed from team_id:user_id */
    team.rpm_limit = org.rpm_limit = user.rpm_limit = member.rpm_limit = -1;
    team.tpm_limit = org.tpm_limit = user.tpm_limit = member.tpm_limit = 1000;
    team.max_parallel = org.max_parallel = user.max_parallel = member.max_parallel = -1;
    team.metadata = sel & 2 ? meta : NULL;
    org.metadata = sel & 4 ? meta : NULL;

    struct sy_keyinfo ki;
    memset(&ki, 0, sizeof ki);
    ki.found = 1;
    memcpy(ki.token, TOKEN, 65);
    ki.key.id = ki.token;
    ki.key.rpm_limit = 5;
    ki.key.tpm_limit = -1;
    ki.key.max_parallel = 2;
    ki.key.metadata = sel & 1 ? meta : NULL;
    ki.team_id = "t1";
    ki.user_id = "u1";
    ki.org_id = "o1";
    ki.team = &team;
    ki.org = &org;
    ki.user = &user;
    ki.member = &member;
    struct sy_model_budget mb = {.model = "gpt-4o", .max_budget = 1};
    if (sel & 8) {
        ki.mmb = &mb;
        ki.nmmb = 1;
    }
    struct sy_enduser eu;
    memset(&eu, 0, sizeof eu);
    eu.found = 1;
    eu.b.id = "cust";
    eu.b.rpm_limit = 3;
    eu.b.tpm_limit = eu.b.max_parallel = -1;

    struct sy_lim_req lr;
    memset(&lr, 0, sizeof lr);
    unsigned n = sy_lim_build(&lr, &ki, &eu, model, sel & 16 ? 10 : -1);
    if (n != lr.n || n > SY_LIM_MAX || lr.over != -1)
        abort();
    for (unsigned i = 0; i < n; i++) {
        const struct sy_lim_desc *d = &lr.d[i];
        if (memchr(d->value, 0, sizeof d->value) == NULL || (unsigned)d->kind >= SY_LIM__COUNT)
            abort();
        if (d->rpm < -1 || d->tpm < -1 || d->par < -1 || (d->rpm < 0 && d->tpm < 0 && d->par < 0))
            abort();
        if (d->ctr)
            abort();
    }
    (void)sy_lim_needs_tokens(&lr);
    if (sy_lim_take(&lr, 7, 1.8e9) == 0)
        sy_lim_settle(&lr, NULL, 3, 1.8e9);
    free(in);
    static unsigned runs;
    if (++runs % 4096 == 0)
        sy_lim_sweep(1.8e9 + 1000); /* keep the counter table small */
    return 0;
}
