/* messages.c - Anthropic answers from the built-in mock model (POST
 * /v1/messages itself runs the chat pipeline: route, then proxy.c with the
 * translation modes of xlate.c; count_tokens is a stage of its own,
 * stages/messages_count.c).
 */
#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "gateway/xlate.h"
#include "http/reply.h"
#include "http/server.h"
#include "providers/messages.h"
#include "tokenizer/tokenizer.h"

/* The built-in mock's OpenAI answer (a chat.completion, or the whole SSE text)
 * -> the Anthropic answer, into out. */
void sy_messages_from_mock(struct sy_call *c, int stream, const struct sy_buf *oai, struct sy_buf *out)
{
    char id[64];
    snprintf(id, sizeof id, "msg_%.8s%.4s%.4s%.4s%.12s", c->call_id, c->call_id + 9, c->call_id + 14,
             c->call_id + 19, c->call_id + 24);
    if (!stream) {
        if (sy_msg_from_openai(oai->p, oai->len, c->model, id, NULL, &c->req->arena, out) != 0)
            sy_msg_error_json(500, "switchyard: mock answer could not be translated", 47, out);
        return;
    }
    struct sy_msgstream ms;
    sy_msg_stream_init(&ms, c->model ? c->model : "", id, NULL);
    const char *p = oai->p, *e = oai->p + oai->len;
    while (p < e) {
        const char *nl = memmem(p, (size_t)(e - p), "\n\n", 2);
        if (!nl)
            break;
        if (nl - p > 6 && memcmp(p, "data: ", 6) == 0)
            sy_msg_stream_chunk(&ms, p + 6, (size_t)(nl - p - 6), out);
        p = nl + 2;
    }
    sy_msg_stream_end(&ms, out);
}
