/* chat.c - the OpenAI chat dialect: the internal form itself, so every
 * translation member is absent (identity), and sy_dialect_answer, which runs
 * a recorded chat answer through any dialect.
 *
 * An OpenAI client on an OpenAI-compatible deployment is the pass-through
 * path: proxy.c forwards the bytes and never reads this table. With a
 * translating adapter the adapter's chunks go to the client as they come;
 * only the stream's end comes from here ([DONE]).
 */
#include "dialects/dialect.h"

#include <string.h>

static void chat_stream_end(void *s, struct sy_buf *out)
{
    SY_BUF_LIT(out, "data: [DONE]\n\n");
}

const struct sy_dialect sy_dialect_chat = {
    .name = "chat",
    .id = SY_DL_CHAT,
    .stream_end = chat_stream_end,
};

int sy_dialect_answer(const struct sy_dialect *dl, const struct sy_dl_meta *m, int stream, const char *body, size_t n,
                      struct sy_arena *a, struct sy_buf *out, struct sy_buf *final)
{
    if (!stream) {
        if (!dl->from_chat) {
            sy_buf_append(out, body, n);
            return 0;
        }
        return dl->from_chat(m, body, n, a, out);
    }
    void *s = dl->stream_size ? sy_arena_alloc(a, dl->stream_size) : NULL;
    if (dl->stream_init)
        dl->stream_init(s, m);
    const char *p = body, *e = body + n;
    while (p < e) {
        const char *nl = memmem(p, (size_t)(e - p), "\n\n", 2);
        if (!nl)
            break;
        if (dl->stream_chunk && nl - p > 6 && memcmp(p, "data: ", 6) == 0)
            dl->stream_chunk(s, p + 6, (size_t)(nl - p - 6), out);
        else if (!dl->stream_chunk && !(nl - p == 12 && memcmp(p, "data: [DONE]", 12) == 0))
            sy_buf_append(out, p, (size_t)(nl - p + 2));
        p = nl + 2;
    }
    dl->stream_end(s, out);
    int rc = final && dl->stream_final ? dl->stream_final(s, final) : 0;
    if (dl->stream_free)
        dl->stream_free(s);
    return rc;
}
