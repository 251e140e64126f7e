/* guardrail.h - guardrails: checks on what a call sends and what it gets back
 * (LiteLLM's `guardrails:` list; DESIGN §6: a feature at the engine's extension
 * points, its logic pure functions).
 *
 * Three parts, each on its side of this contract:
 *
 *   kinds      one const struct sy_guard_ops per `litellm_params.guardrail`
 *              value, listed once in kinds.c. A kind is pure: it parses its
 *              settings (open), and either decides in process (check) or says
 *              which HTTP request to make and reads the answer (request /
 *              answer). It never does I/O, never touches a loop, and may run
 *              on any thread (the engine moves a check of a large body to the
 *              offload pool). In-process kinds live in guardrails/local/,
 *              service kinds in guardrails/services/.
 *   texts      what a check reads (struct sy_ginput): the texts of a request
 *              or an answer in any of the three dialects (chat, /v1/messages,
 *              /v1/responses), each with the JSON span it came from, so a
 *              masking verdict is spliced back into the body (texts.c).
 *   the stage  stages/guardrails.c: picks the guardrails of a call (default_on,
 *              the request's `guardrails`, the key's and the team's), runs
 *              pre_call ones before routing, during_call ones beside the
 *              upstream call, post_call ones on the answer (JSON) or on the
 *              stream (stream.c), and sends LiteLLM's block error.
 *
 * Memory: everything a kind returns in a struct sy_gresult is malloc'd and
 * freed by sy_gresult_free. Texts in a struct sy_ginput are borrowed.
 */
#ifndef SY_GUARDRAILS_GUARDRAIL_H
#define SY_GUARDRAILS_GUARDRAIL_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

struct json_object;

/* Event hooks (litellm_params.mode; one guardrail may have several). */
enum {
    SY_GM_PRE = 1u,          /* pre_call: before the upstream call, on the request */
    SY_GM_DURING = 2u,       /* during_call: on the request, beside the upstream call; the answer waits */
    SY_GM_POST = 4u,         /* post_call: on the answer (and LiteLLM passes the request too) */
    SY_GM_LOGGING_ONLY = 8u, /* logging_only: masks what the logging callbacks see only */
};

/* Which body a check reads. */
enum sy_gdialect { SY_GD_CHAT, SY_GD_MESSAGES, SY_GD_RESPONSES, SY_GD_COMPLETIONS, SY_GD_EMBEDDINGS };

/* Who said a text. */
enum sy_grole { SY_GR_SYSTEM, SY_GR_USER, SY_GR_ASSISTANT, SY_GR_TOOL, SY_GR_OTHER };

/* What a text is. */
enum sy_gkind {
    SY_GK_TEXT,      /* message / output text */
    SY_GK_TOOL_ARGS, /* a tool call's arguments (JSON text as the model wrote it) */
    SY_GK_TOOL_OUT,  /* a tool result the client sends back */
};

/* One text a guardrail reads: decoded UTF-8 (NUL-terminated), and where its
 * JSON string value is in the body (off/raw_len, quotes included), so that a
 * replacement is spliced there (sy_gtext_splice). raw_len 0: the text has no
 * span of its own (a stream's assembled text): it cannot be replaced. */
struct sy_gseg {
    const char *text;
    size_t len;
    size_t off, raw_len;
    unsigned char role;  /* enum sy_grole */
    unsigned char kind;  /* enum sy_gkind */
    unsigned char delta; /* a stream event's piece of a longer text: appended to the earlier pieces of the same
                          * msg (sy_gevent_read); 0: a whole text */
    int msg;             /* index of the message / output item it belongs to (a stream: the choice, content
                          * block or output item the piece extends) */
};

/* A tool: one the request offers (phase PRE: tools[]) or a call the model
 * made (phase POST: tool_calls / tool_use / function_call). name is decoded;
 * name_off/name_raw_len: its JSON string span in the body (0: none). */
struct sy_gtool {
    const char *name;
    size_t name_len;
    const char *args; /* POST: the call's arguments (JSON text), else NULL */
    size_t args_len;
    size_t off, raw_len; /* the whole tool / tool-call object's span in the body (0: none) */
    int index;           /* its position among the calls or tools */
};

/* What a check reads. */
struct sy_ginput {
    unsigned phase;           /* SY_GM_PRE (pre_call and during_call read the request) or SY_GM_POST */
    enum sy_gdialect dialect; /* of the body below */
    const char *model;        /* the model the client asked for */
    const char *call_id;
    const struct sy_gseg *seg; /* the texts, in body order */
    size_t nseg;
    const struct sy_gtool *tool;
    size_t ntool;
    const char *body; /* the JSON the texts come from (the request, or the answer as the client gets it) */
    size_t body_len;
    const char *request; /* phase POST: the request body too (LiteLLM's post_call hooks get `data`); else NULL */
    size_t request_len;
    const char
        *extra_body; /* the request's {"<name>": {"extra_body": {...}}} for this guardrail: JSON object text, or NULL */
    const char *user_key_alias, *team_id, *user_id; /* who calls (may be NULL) */
};

/* A kind's decision. */
enum sy_gverdict {
    SY_GV_PASS,   /* nothing to do */
    SY_GV_MASKED, /* texts replaced (repl[] / body): the call goes on with them */
    SY_GV_BLOCK,  /* refused: the client gets status + message */
    SY_GV_ERROR,  /* the check could not run (service down, bad answer): fail open or closed per guardrail */
};

/* A placeholder and the text it hides (reversible masking: presidio's
 * output_parse_pii, the local pii kind's `output_parse_pii: true`): the answer
 * gets the original back (sy_gunmask). */
struct sy_gpair {
    char *placeholder, *original;
};

struct sy_gresult {
    enum sy_gverdict verdict;
    int status;    /* BLOCK: HTTP status for the client (0: 400, LiteLLM's) */
    char *message; /* BLOCK: the error message as LiteLLM words it (str(detail)); ERROR: why */
    char *detail;  /* JSON object text for guardrail_information / logs (what matched), or NULL */
    char **repl;   /* MASKED: nseg entries (calloc'd by the kind), NULL = unchanged, else the new text */
    size_t nrepl;
    char *body; /* MASKED: a whole new body instead (a tool removed, a request rewritten), or NULL */
    size_t body_len;
    struct sy_gpair *pairs; /* reversible masking: what to put back in the answer */
    size_t npairs;
    unsigned masked; /* how many entities were masked (metrics) */
};
void sy_gresult_free(struct sy_gresult *r);
/* Helpers for kinds: r->repl sized for n segments (0, or -1 out of memory);
 * a printf-style message; add a pair. */
int sy_gresult_repl(struct sy_gresult *r, size_t n);
void sy_gresult_block(struct sy_gresult *r, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void sy_gresult_error(struct sy_gresult *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sy_gresult_pair(struct sy_gresult *r, const char *placeholder, const char *original, size_t olen);

/* An HTTP request a service kind wants made (the stage sends it on the
 * worker's loop with the guardrail's timeout). */
struct sy_ghttp {
    const char *method;    /* static: "POST", "GET" */
    char *url;             /* malloc'd, absolute */
    struct sy_buf headers; /* "Name: value\r\n" lines, Content-Type included */
    struct sy_buf body;
};
void sy_ghttp_free(struct sy_ghttp *h);

/* One configured guardrail. */
struct sy_guard {
    const struct sy_guard_ops *ops;
    char *name;     /* guardrail_name */
    unsigned modes; /* SY_GM_* */
    int default_on;
    int fail_open;              /* a service error lets the call through (default: 0, closed, as LiteLLM raises) */
    double timeout_s;           /* a service's whole exchange (default 10) */
    int skip_system, skip_tool; /* skip_system_message_in_guardrail / skip_tool_message_in_guardrail */
    char *params_json;          /* litellm_params as given (JSON), for /guardrails/list */
    char *info_json;            /* guardrail_info, or NULL */
    void *impl;                 /* the kind's parsed settings (open / close) */
    int index;                  /* position in the set */
    int post_pass;              /* its check passes every answer without reading it (set by open): post_call
                                   records the pass and reads no text */
};

/* What a kind's open() may ask of the config it is built in: the model
 * groups (openai_moderation through a model group). Returns 0 and fills url
 * (the deployment's api_base, no trailing slash) and auth ("Authorization:
 * Bearer ...\r\n" or "api-key: ...\r\n" lines), or -1 when model is no group
 * with an OpenAI-compatible deployment. NULL: no lookup. */
struct sy_genv {
    int (*group_target)(void *ud, const char *model, char *url, size_t urlcap, char *auth, size_t authcap);
    void *ud;
    /* A warning about a setting that does not stop the load (counted in the
     * config's warnings); NULL: none. */
    void (*warn)(void *ud, const char *msg);
    void *warn_ud;
};

/* Steps of a service exchange: request() may be called again after answer()
 * returns SY_GSTEP_MORE (presidio: analyze, then anonymize). */
enum { SY_GSTEP_DONE = 0, SY_GSTEP_MORE = 1 };

struct sy_guard_ops {
    const char *name; /* litellm_params.guardrail: "litellm_content_filter", "presidio", ... */
    unsigned modes;   /* hooks it supports (SY_GM_*); a config asking for another is refused at load */
    /* Parse litellm_params (a json-c object; os.environ/ already resolved) and
     * the environment into g->impl. 0, or -1 with err ("missing api_key"...):
     * the config load fails naming the guardrail. May be NULL (no settings). */
    int (*open)(struct sy_guard *g, struct json_object *params, const struct sy_genv *env, char *err, size_t errlen);
    void (*close)(struct sy_guard *g);
    /* In process: decide on in now. Any thread; linear in the texts. */
    void (*check)(const struct sy_guard *g, const struct sy_ginput *in, struct sy_gresult *r);
    /* A service: step 0's request for in (or step k's, after answer() said MORE).
     * *state is the kind's own between steps (NULL at step 0; freed by
     * free_state). 0, or -1 with r filled (ERROR: nothing to send). 0 with req->url
     * left NULL at step 0: nothing for the service to check (as LiteLLM skips the
     * call when there is no text): the check passes. */
    int (*request)(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state, struct sy_ghttp *req);
    /* ... and the answer to it (status 0: none: timeout or transport error,
     * which the stage reports as ERROR without calling this). SY_GSTEP_DONE
     * with r filled, or SY_GSTEP_MORE (request(step + 1) follows). */
    int (*answer)(const struct sy_guard *g, const struct sy_ginput *in, int step, void **state, int status,
                  const char *body, size_t n, struct sy_gresult *r);
    void (*free_state)(void *state);
    /* In process: a body of this many bytes or more is checked on the offload
     * pool (0: SY_OFFLOAD_MIN_BYTES, 32 KB): a kind that costs more than a few
     * microseconds per KB sets less, so no check holds a worker's loop. */
    size_t offload_min;
};

/* The kinds this build has (kinds.c), and the one named name (NULL: none). */
extern const struct sy_guard_ops *const sy_guard_kinds[];
const struct sy_guard_ops *sy_guard_kind(const char *name);

/* ---- Texts (texts.c): what a check reads, and writing verdicts back ---- */

/* The texts and tools of a body (a request when phase is SY_GM_PRE, an answer
 * as the client gets it when SY_GM_POST) into in->seg / in->tool, decoded
 * copies in the arena-like buffer owned by t. skip_system / skip_tool leave
 * those roles out. 0, or -1 when the body is not the dialect's JSON (nothing
 * to check: the stage lets the upstream answer it). */
struct sy_gtexts {
    struct sy_gseg *seg;
    size_t nseg, segcap;
    struct sy_gtool *tool;
    size_t ntool, toolcap;
    char **strs; /* decoded texts (freed with it) */
    size_t nstrs, strcap;
};
int sy_gtexts_read(struct sy_gtexts *t, enum sy_gdialect d, unsigned phase, const char *body, size_t n, int skip_system,
                   int skip_tool);
void sy_gtexts_free(struct sy_gtexts *t);

/* One event of a stream as the client gets it: ev[0..n) is the JSON of its
 * `data:` line(s) (the stage splits the SSE framing). Its texts into t: the
 * deltas (chat choices[].delta.content, Anthropic content_block_delta
 * text_delta, Responses response.output_text.delta) as segments with delta 1,
 * the whole texts some events repeat (Responses' *.done and response.completed,
 * Anthropic has none) with delta 0; a tool call starting (chat delta.tool_calls[]
 * with a function.name, Anthropic content_block_start tool_use, Responses
 * response.output_item.added function_call) as a tool with its name, and the
 * argument pieces as SY_GK_TOOL_ARGS deltas. Spans are offsets in ev, so
 * sy_gtext_splice rewrites the event. Returns 0, 1 for the stream's end
 * (chat `[DONE]`, message_stop, response.completed: its texts are still read),
 * or -1 when ev is no JSON object of the dialect (the stage passes it as is). */
int sy_gevent_read(struct sy_gtexts *t, enum sy_gdialect d, const char *ev, size_t n);

/* A new body: body with each segment i whose repl[i] is not NULL replaced by
 * that text as a JSON string. 0 and *out (malloc'd, *outlen), or -1. */
int sy_gtext_splice(const char *body, size_t n, const struct sy_gseg *seg, size_t nseg, char *const *repl, char **out,
                    size_t *outlen);

/* Reversible masking: every placeholder of pairs in p[0..n) replaced by its
 * original, into b. Returns how many were replaced. */
size_t sy_gunmask(const struct sy_gpair *pairs, size_t npairs, const char *p, size_t n, struct sy_buf *b);
/* The length of the longest suffix of p[0..n) that is a proper prefix of some
 * placeholder (a placeholder a stream's next piece may complete). */
size_t sy_gunmask_hold(const struct sy_gpair *pairs, size_t npairs, const char *p, size_t n);

/* ---- Matching (match.c): compiled patterns any kind uses ---- */

/* A set of patterns compiled once (PCRE2 with JIT, UTF mode, match and depth
 * limits so a hostile text cannot make it super-linear), matched over a text
 * in one left-to-right pass per pattern. Keywords are matched case-
 * insensitively on word boundaries, as LiteLLM's content filter. */
struct sy_gpat;
struct sy_gmatch {
    size_t off, len; /* in the text */
    int id;          /* the pattern's id as given to sy_gpat_add */
};
struct sy_gpat *sy_gpat_new(void);
/* A regular expression (Python `re` syntax, as LiteLLM's configs write them:
 * PCRE2 reads it) or a literal keyword. 0, or -1 with err (bad pattern). */
int sy_gpat_add_regex(struct sy_gpat *p, const char *re, int id, int caseless, char *err, size_t errlen);
int sy_gpat_add_keyword(struct sy_gpat *p, const char *kw, int id);
/* Compile (after the adds). 0, or -1 with err. */
int sy_gpat_compile(struct sy_gpat *p, char *err, size_t errlen);
void sy_gpat_free(struct sy_gpat *p);
/* Every non-overlapping match in text[0..n) in text order, to cb (return
 * nonzero to stop). Returns the number of matches reported, or -1 when the
 * match limit was hit (the caller treats it as a match: fail closed). Thread
 * safe (per-call match data). */
long sy_gpat_scan(const struct sy_gpat *p, const char *text, size_t n, int (*cb)(void *ud, const struct sy_gmatch *m),
                  void *ud);

#endif
