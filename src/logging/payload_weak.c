/* payload_weak.c - PRE-MERGE FALLBACK, to be deleted (with its line in
 * meson.build) when payload.c (the StandardLoggingPayload, written in
 * parallel) is merged.
 *
 * The engine's branch needs sy_log_payload to link the binary before
 * payload.c exists. This weak definition builds a small JSON object of the
 * record's ids so a webhook receives something recognisable. Caution: a weak
 * definition in a static library keeps the linker from pulling payload.o in
 * for sy_log_payload, so it must not stay next to the real one.
 */
#include <stdlib.h>
#include <string.h>

#include "logging/logging.h"
#include "providers/jdom.h"

__attribute__((weak)) const char *sy_log_payload(struct sy_logrec *rec, size_t *len)
{
    if (!rec->payload) {
        struct sy_buf b;
        sy_buf_init(&b, 1 << 20);
        struct sy_jw w;
        sy_jw_init(&w, &b);
        sy_jw_obj(&w);
        sy_jw_key(&w, "id");
        sy_jw_cstr(&w, rec->id);
        sy_jw_key(&w, "call_type");
        sy_jw_cstr(&w, rec->call_type);
        sy_jw_key(&w, "model");
        sy_jw_cstr(&w, rec->model);
        sy_jw_key(&w, "status");
        sy_jw_cstr(&w, rec->flags & SY_LOGREC_FAILURE ? "failure" : "success");
        sy_jw_end(&w);
        if (w.err || sy_buf_failed(&b)) {
            sy_buf_free(&b);
            return NULL;
        }
        rec->payload = b.p;
        rec->payload_len = b.len;
    }
    if (len)
        *len = rec->payload_len;
    return rec->payload;
}
