/* fuzz_resp_stream.c - arbitrary bytes read as an SSE stream of OpenAI chat
 * chunks ("data: <payload>" lines) through the Responses stream state machine
 * (responses/stream.c: chunk, end, final, free), and the whole input and
 * every payload through sy_resp_from_openai (answer.c).
 *
 * Checked: every event is "event: T\ndata: <valid JSON>\n\n" with
 * sequence_number 0, 1, 2 ... and nothing follows the terminal event; the
 * final response and every converted answer are valid JSON. The first input
 * byte picks whether a Responses request is echoed (bit 1) and which: bit 4
 * a Codex-shaped one (namespace and custom tools, so that tool calls named
 * after them become namespaced function_call / custom_tool_call items, with
 * the custom input unwrapped as it streams). */
#include <stdint.h>
#include <string.h>

#include "core/errors.h"
#include "responses/responses.h"

static const char REQ[] =
    "{\"model\":\"x\",\"input\":\"hi\",\"instructions\":\"be brief\",\"tools\":[{\"type\":\"function\","
    "\"name\":\"f\",\"parameters\":{}}],\"temperature\":0.5,\"text\":{\"format\":{\"type\":"
    "\"json_object\"},\"verbosity\":\"low\"},\"reasoning\":{\"effort\":\"low\"},\"metadata\":{}}";

static const char CODEX[] =
    "{\"model\":\"x\",\"input\":\"hi\",\"tools\":[{\"type\":\"custom\",\"name\":\"f\",\"format\":{\"type\":"
    "\"grammar\",\"syntax\":\"lark\",\"definition\":\"start: x\"}},{\"type\":\"namespace\",\"name\":\"n\","
    "\"tools\":[{\"type\":\"function\",\"name\":\"g\"},{\"type\":\"custom\",\"name\":\"h\"}]},{\"type\":"
    "\"namespace\",\"name\":\"functions\",\"tools\":[{\"type\":\"function\",\"name\":\"k\"}]},"
    "{\"type\":\"web_search\"}]}";

static void check_json(const char *p, size_t n)
{
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc d;
    if (sy_jdom_parse(&d, p, n, &a, 0) != 0)
        __builtin_trap();
    sy_arena_free(&a);
}

static void check_events(const char *p, size_t n)
{
    const char *e = p + n;
    int64_t seq = 0;
    int terminal = 0;
    struct sy_arena a;
    sy_arena_init(&a);
    while (p < e) {
        if ((size_t)(e - p) < 7 || memcmp(p, "event: ", 7))
            __builtin_trap();
        if (terminal)
            __builtin_trap(); /* nothing after response.completed / incomplete / failed */
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t tl = nl ? (size_t)(nl - p - 7) : 0;
        terminal = (tl == 18 && !memcmp(p + 7, "response.completed", 18)) ||
                   (tl == 19 && !memcmp(p + 7, "response.incomplete", 19)) ||
                   (tl == 15 && !memcmp(p + 7, "response.failed", 15));
        if (!nl || (size_t)(e - nl) < 7 || memcmp(nl + 1, "data: ", 6))
            __builtin_trap();
        const char *data = nl + 7;
        const char *end = NULL;
        for (const char *q = data; q + 1 < e; q++)
            if (q[0] == '\n' && q[1] == '\n') {
                end = q;
                break;
            }
        if (!end)
            __builtin_trap();
        struct sy_jdoc d;
        int64_t v = -1;
        if (sy_jdom_parse(&d, data, (size_t)(end - data), &a, 0) != 0 ||
            !sy_jdom_i64(&d, sy_jdom_get(&d, 0, "sequence_number"), &v) || v != seq)
            __builtin_trap();
        seq++;
        p = end + 2;
    }
    sy_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    struct sy_arena a;
    sy_arena_init(&a);
    struct sy_jdoc req;
    struct sy_resp_meta m = {
        .id = "resp_fuzz", .model = "m", .created_at = 1, .id_seed = "00112233445566778899aabbccddeeff"};
    const char *rq = size && (data[0] & 4) ? CODEX : REQ;
    if (size && (data[0] & 1) && sy_jdom_parse(&req, rq, strlen(rq), &a, 0) == 0) {
        m.req = &req;
        m.previous_response_id = "resp_prev";
    }

    struct sy_buf out, fin, ans;
    sy_buf_init(&out, 1 << 24);
    sy_buf_init(&fin, 1 << 24);
    sy_buf_init(&ans, 1 << 24);
    struct sy_respstream s;
    sy_resp_stream_init(&s, &m);
    int failed = 0;
    for (size_t i = 0; i < size;) {
        const char *nl = memchr(in + i, '\n', size - i);
        size_t l = nl ? (size_t)(nl - (in + i)) : size - i;
        if (l >= 5 && !memcmp(in + i, "data:", 5)) {
            const char *p = in + i + 5;
            size_t pl = l - 5;
            int rc = sy_resp_stream_chunk(&s, p, pl, &out);
            if (rc == SY_EJSON || rc == SY_EUPPROTO) {
                if (data[0] & 2) { /* the caller's way out: end with an error */
                    sy_resp_stream_error(&s, 502, "bad chunk", 9, &out);
                    failed = 1;
                }
            }
            sy_buf_reset(&ans);
            struct sy_arena a2;
            sy_arena_init(&a2);
            if (sy_resp_from_openai(p, pl, &m, &a2, &ans) == 0)
                check_json(ans.p, ans.len);
            sy_arena_free(&a2);
        }
        i += l + 1;
    }
    sy_resp_stream_end(&s, &out);
    check_events(out.p, out.len);
    int rc = sy_resp_stream_final(&s, &fin);
    if (rc == 0)
        check_json(fin.p, fin.len);
    else if (!failed && !s.failed)
        __builtin_trap(); /* ended without an error: it must have completed */

    sy_buf_reset(&ans);
    if (sy_resp_from_openai(in, size, &m, &a, &ans) == 0) {
        check_json(ans.p, ans.len);
        struct sy_buf items;
        sy_buf_init(&items, 1 << 24);
        if (sy_resp_output_items(ans.p, ans.len, &a, &items) != 0)
            __builtin_trap();
        check_json(items.p, items.len);
        sy_buf_free(&items);
    }
    sy_resp_stream_free(&s);
    sy_buf_free(&out);
    sy_buf_free(&fin);
    sy_buf_free(&ans);
    sy_arena_free(&a);
    return 0;
}
