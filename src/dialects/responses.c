/* responses.c - the OpenAI Responses dialect (POST /v1/responses): the table
 * over the Responses <-> chat translation in src/responses/ (request.c,
 * answer.c, stream.c; the mapping is drawn there) and LiteLLM's encoded
 * response ids (ids.c), which a native answer gets in place of the
 * upstream's.
 *
 * The translation stays in src/responses/ beside the stored conversations
 * and the owner records it shares its types with (responses.h); this file
 * only adapts it to dialect.h. The native shortcut: deployments that serve
 * the Responses API themselves, as LiteLLM (openai, azure, xai,
 * litellm_proxy, on the OpenAI-compatible path).
 */
#include "dialects/dialect.h"

#include <string.h>

#include "responses/responses.h"

static int resp_native(const struct sy_adapter *ad, const char *provider)
{
    if (ad || !provider)
        return 0;
    return strcmp(provider, "openai") == 0 || strcmp(provider, "azure") == 0 || strcmp(provider, "xai") == 0 ||
           strcmp(provider, "litellm_proxy") == 0;
}

_Static_assert(sizeof(((struct sy_dl_report *)0)->dropped) == sizeof(((struct sy_resp_tx *)0)->dropped),
               "the report holds the translation's list of dropped tools");

static int resp_to_chat(const struct sy_dl_in *in, struct sy_arena *a, struct sy_buf *out, struct sy_xerr *e)
{
    struct sy_resp_tx tx = {.web_search = in->web_search};
    int rc = sy_resp_to_chat(in->req, in->prior, in->prior_len, in->id_seed, &tx, a, out, in->items, e);
    if (in->report) {
        in->report->had_web_search = tx.had_web_search;
        memcpy(in->report->dropped, tx.dropped, sizeof in->report->dropped);
    }
    return rc;
}

static void resp_meta(struct sy_resp_meta *rm, const struct sy_dl_meta *m)
{
    *rm = (struct sy_resp_meta){.id = m->id,
                                .model = m->model,
                                .created_at = m->created_at,
                                .id_seed = m->id_seed,
                                .req = m->req,
                                .previous_response_id = m->previous_response_id};
}

static int resp_from_chat(const struct sy_dl_meta *m, const char *body, size_t n, struct sy_arena *a,
                          struct sy_buf *out)
{
    struct sy_resp_meta rm;
    resp_meta(&rm, m);
    return sy_resp_from_openai(body, n, &rm, a, out);
}

static void resp_stream_init(void *s, const struct sy_dl_meta *m)
{
    struct sy_resp_meta rm;
    resp_meta(&rm, m); /* copied by the stream */
    sy_resp_stream_init(s, &rm);
}

static int resp_stream_chunk(void *s, const char *data, size_t n, struct sy_buf *out)
{
    return sy_resp_stream_chunk(s, data, n, out);
}

static void resp_stream_end(void *s, struct sy_buf *out)
{
    sy_resp_stream_end(s, out);
}

static void resp_stream_error(void *s, int status, const char *msg, size_t n, struct sy_buf *out)
{
    sy_resp_stream_error(s, status, msg, n, out);
}

static int resp_stream_final(const void *s, struct sy_buf *out)
{
    return sy_resp_stream_final(s, out);
}

static void resp_stream_free(void *s)
{
    sy_resp_stream_free(s);
}

const struct sy_dialect sy_dialect_responses = {
    .name = "responses",
    .id = SY_DL_RESPONSES,
    .native = resp_native,
    .native_rewrite = sy_resp_ids_rewrite,
    .to_chat = resp_to_chat,
    .from_chat = resp_from_chat,
    .stream_size = sizeof(struct sy_respstream),
    .stream_init = resp_stream_init,
    .stream_chunk = resp_stream_chunk,
    .stream_end = resp_stream_end,
    .stream_error = resp_stream_error,
    .stream_final = resp_stream_final,
    .stream_free = resp_stream_free,
};
