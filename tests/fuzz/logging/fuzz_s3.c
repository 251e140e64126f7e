/* fuzz_s3.c - the s3 / s3_v2 sink on hostile settings, ids, aliases and
 * payloads: open() must refuse or accept without a crash; an accepted
 * instance must produce a request whose URL is printable ASCII, whose header
 * block is "Name: value\r\n" lines with no CR or LF inside a value (an id or an
 * alias cannot inject a header), and whose object key fits S3's 1024 bytes.
 *
 * Input: byte 0 picks s3 / s3_v2 and the flags; then NUL-separated fields:
 * s3_callback_params JSON, id, team alias, key alias, payload; 8 bytes of
 * start time come from the first field's tail when there are enough bytes.
 * A payload that is JSON must still be JSON once rewritten.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/buf.h"
#include "logging/logging.h"
#include "logging/sinks/s3.h"
#include "providers/jdom.h"

extern const struct sy_sink_ops sy_sink_s3, sy_sink_s3_v2;

static int json_ok(const char *p, size_t n)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    int ok = sy_jdom_parse(&d, p, n, &a, 0) == 0;
    sy_arena_free(&a);
    return ok;
}

static void check_req(const struct sy_sink_req *q)
{
    for (const char *c = q->url; *c; c++)
        if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f)
            abort();
    const char *p = q->headers.p, *end = p + q->headers.len;
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e || e == p || e[-1] != '\r')
            abort();
        const char *colon = memchr(p, ':', (size_t)(e - p));
        if (!colon || colon == p || colon[1] != ' ')
            abort();
        for (const char *c = p; c < e - 1; c++)
            if (*c == '\r' || *c == '\n')
                abort();
        p = e + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned sel = data[0];
    char *s = malloc(size);
    memcpy(s, data + 1, size - 1);
    s[size - 1] = 0;
    char *f[5] = {s, "", "", "", ""};
    char *end = s + size - 1;
    for (int i = 1; i < 5; i++) {
        char *z = memchr(f[i - 1], 0, (size_t)(end - f[i - 1]));
        if (!z || z == end)
            break;
        f[i] = z + 1;
    }
    const struct sy_sink_ops *ops = sel & 1 ? &sy_sink_s3_v2 : &sy_sink_s3;
    struct sy_logconf lc = {.s3_params = f[0]};
    char err[256];
    void *inst = ops->open(&lc, (sel & 2) ? f[0] : NULL, err, sizeof err);
    if (inst) {
        struct sy_logrec r;
        memset(&r, 0, sizeof r);
        r.id = f[1];
        r.call_id = "call";
        r.team_alias = f[2];
        r.key_alias = f[3];
        r.flags = (sel & 4) ? SY_LOGREC_REDACT_KEY : 0;
        double t = 0;
        size_t l0 = strlen(f[0]);
        if (l0 >= sizeof t)
            memcpy(&t, f[0] + l0 - sizeof t, sizeof t);
        r.start_s = t;
        r.payload = f[4];
        r.payload_len = strlen(f[4]);
        struct sy_buf k;
        sy_buf_init(&k, 1 << 16);
        if (sy_s3_object_key(inst, &r, &k) == 0 && k.len > SY_S3_MAX_KEY)
            abort();
        sy_buf_free(&k);
        struct sy_sink_req q;
        if (sy_s3_encode_at(inst, &r, (int64_t)(sel >> 3) * 86400 * 365, &q) == 0) {
            check_req(&q);
            /* a rewritten payload (prompts only, base64 stripped) stays JSON */
            if (json_ok(r.payload, r.payload_len) && !json_ok(q.body.p ? q.body.p : "", q.body.len))
                abort();
            sy_sink_req_free(&q);
        }
        ops->verdict(inst, 400, f[4], strlen(f[4]));
        ops->close(inst);
    }
    free(s);
    return 0;
}
