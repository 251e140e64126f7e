/* jscan.h - zero-allocation JSON validation and top-level key scan.
 *
 * The pass-through path never builds a JSON tree: it validates the request
 * body strictly (RFC 8259) in one pass and reports where the top-level keys
 * it cares about ("model", "stream", "stream_options", ...) and their values
 * are. Key names are compared after decoding their escapes ("mod\u0065l" is
 * "model", as every JSON upstream reads it). A key of interest that occurs
 * twice is reported in `dup` (the spans are those of the last occurrence, the
 * one json-c and Python keep); the gateway refuses such bodies because
 * upstreams differ on which occurrence wins. Nesting depth is capped
 * (SY_JSCAN_MAX_DEPTH) so hostile input cannot recurse the stack. Why not
 * jsmn: jsmn needs a token array proportional to the body (16 bytes per token;
 * a 32 MB body needs hundreds of MB) and is lax about syntax in its default
 * mode; this scanner needs no memory at all.
 */
#ifndef SY_JSCAN_H
#define SY_JSCAN_H

#include <stddef.h>

#define SY_JSCAN_MAX_DEPTH 128

struct sy_jspan {
    size_t off, len; /* byte range of the value (strings include their quotes) */
    char type;       /* 's' string, 'n' number, 'o' object, 'a' array, 't' true, 'f' false, 'z' null; 0 absent */
};

/* Router keys (request-level LiteLLM parameters). */
enum sy_jrkey {
    SY_JR_FALLBACKS,                /* "fallbacks" */
    SY_JR_DISABLE_FALLBACKS,        /* "disable_fallbacks" */
    SY_JR_NUM_RETRIES,              /* "num_retries" */
    SY_JR_TIMEOUT,                  /* "timeout" */
    SY_JR_STREAM_TIMEOUT,           /* "stream_timeout" */
    SY_JR_CONTEXT_WINDOW_FALLBACKS, /* "context_window_fallbacks" */
    SY_JR_CONTENT_POLICY_FALLBACKS, /* "content_policy_fallbacks" */
    SY_JR_MOCK_TESTING_FALLBACKS,   /* "mock_testing_fallbacks" */
    SY_JR_CACHE,                    /* "cache": per-request cache controls (cache/cache.h) */
    SY_JR_MOCK_TIMEOUT,             /* "mock_timeout" */
    SY_JR_MOCK_RATE_LIMIT,          /* "mock_testing_rate_limit_error" */
    SY_JR_TAGS,                     /* "tags": request tags (tag routing) */
    SY_JR_GUARDRAILS,               /* "guardrails": the guardrails a request asks for (stages/guardrails.c) */
    SY_JR__COUNT
};

/* Top-level keys of interest to the gateway. Each span is the value of the
 * last member whose decoded name is the field's name. */
struct sy_jscan {
    struct sy_jspan model, stream, stream_options, input, messages, prompt, user, n;
    struct sy_jspan store, previous_response_id; /* the Responses API's (gateway/responses.c) */
    int top_is_object;
    size_t err_off;  /* where parsing failed */
    const char *err; /* static reason, NULL on success */
    /* "include_usage" inside the last top-level "stream_options" object (type 0
     * when absent or when stream_options is not an object). */
    struct sy_jspan include_usage;
    /* Name of the first key of interest seen twice in one object: "model",
     * "stream", "stream_options", "messages", "prompt", "input", "user", "n",
     * "store", "previous_response_id" at the top level, "stream_options.include_usage" inside stream_options.
     * NULL when none is; static storage. */
    const char *dup;
    /* LiteLLM router keys read by the gateway and never forwarded (they are
     * not OpenAI parameters): value spans, and where each member's key
     * starts (for stripping). Type 0 when absent. */
    struct sy_jspan rk[SY_JR__COUNT];
    size_t rk_key_off[SY_JR__COUNT];
    unsigned rk_mask; /* bit i set when rk[i] is present */
};

/* Validate p[0..n) as one JSON value and fill s. 0 on success (a duplicate key
 * of interest is not a syntax error: see s->dup), SY_EJSON on error (s->err
 * and s->err_off describe it). */
int sy_jscan(const char *p, size_t n, struct sy_jscan *s);

/* Decode a JSON string value span (with quotes) into out (NUL-terminated,
 * at most cap-1 bytes). Returns the decoded length or -1 if it does not fit or
 * contains \u0000. Handles all escapes including surrogate pairs; a lone
 * surrogate becomes U+FFFD. */
long sy_jstr_decode(const char *p, size_t len, char *out, size_t cap);

/* Find the member named key (compared after decoding escapes; keys up to 200
 * bytes) in a JSON object span and return its value span (type 0 if absent).
 * Only direct members of the object are matched; with duplicates, the last. */
struct sy_jspan sy_jscan_member(const char *p, struct sy_jspan obj, const char *key);

/* Iterate a list of group names (LiteLLM's per-request `fallbacks`): each
 * item is a string, or an object whose first key names the group. *pos
 * starts at 0. Returns 1 with *name the item's (or key's) string span, 0 at
 * the end, -1 when an item is neither (or arr is not an array). arr must come
 * from a successful sy_jscan of p. */
int sy_jscan_list_next(const char *p, struct sy_jspan arr, size_t *pos, struct sy_jspan *name);

/* Copy p[0..n) to out (n bytes of room) without the router-key members
 * recorded in sc (each with one neighbouring comma), so the result is the
 * same object minus those keys. Returns its length. sc must come from a
 * successful sy_jscan of p with a top-level object. model (may be NULL): a
 * span of p, moved to where it lands in out (one pass, no rescan). */
size_t sy_jscan_strip(const char *p, size_t n, const struct sy_jscan *sc, char *out, struct sy_jspan *model);

#endif
