/* messages.c - Anthropic answers from the built-in mock model (POST
 * /v1/messages itself runs the chat pipeline: route, then proxy.c, with
 * xlate.c composing the messages dialect, dialects/messages.c, with the
 * deployment; count_tokens is a stage of its own, stages/messages_count.c).
 */
#include <stdio.h>
#include <string.h>

#include "core/errors.h"
#include "gateway/xlate.h"
#include "http/reply.h"
#include "http/server.h"
#include "dialects/dialect.h"
#include "dialects/messages.h"
#include "tokenizer/tokenizer.h"

/* The built-in mock's OpenAI answer (a chat.completion, or the whole SSE text)
 * -> the Anthropic answer, into out. */
void sy_messages_from_mock(struct sy_call *c, int stream, const struct sy_buf *oai, struct sy_buf *out)
{
    static const char fail[] = "switchyard: mock answer could not be translated";
    const struct sy_dialect *dl = &sy_dialect_messages;
    char id[64];
    snprintf(id, sizeof id, "msg_%.8s%.4s%.4s%.4s%.12s", c->call_id, c->call_id + 9, c->call_id + 14, c->call_id + 19,
             c->call_id + 24);
    struct sy_dl_meta m = {.id = id, .model = c->in.model};
    if (sy_dialect_answer(dl, &m, stream, oai->p ? oai->p : "", oai->len, &c->req->arena, out, NULL) != 0)
        dl->error(500, fail, sizeof fail - 1, out);
}
