/* svc_b.h - what the service kinds aporia, bedrock, azure/... and ibm_guardrails
 * share (aporia.c, bedrock.c, azure.c, ibm.c): reading litellm_params, the texts
 * LiteLLM sends those services, the request skeleton, LiteLLM's dynamic
 * request-body params, and Python's repr of a service's JSON for the block
 * messages (str() of LiteLLM's HTTPException detail).
 *
 * "Nothing to check" (no text of the kind a service reads, as LiteLLM skips the
 * call): request() returns 0 and leaves req->url NULL; the stage sends nothing
 * and the check passes.
 */
#ifndef SY_GUARDRAILS_SERVICES_SVC_B_H
#define SY_GUARDRAILS_SERVICES_SVC_B_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/buf.h"
#include "guardrails/guardrail.h"
#include "providers/jdom.h"

struct json_object;

#define SY_SVCB_BODY_MAX ((size_t)64 << 20) /* a service request's body cap */
#define SY_SVCB_HDR_MAX  ((size_t)64 << 10)

/* ---- settings (litellm_params, a json-c object) ---- */

/* A non-empty string member, else NULL. */
const char *sy_svcb_str(struct json_object *p, const char *key);
/* A member as a boolean (true/false, "true"/"false" any case, a number != 0); dflt when absent or null. */
int sy_svcb_bool(struct json_object *p, const char *key, int dflt);
/* A number member: 1 and *out set, 0 absent / null, -1 present but not a number. *is_int: it was
 * written as an integer (may be NULL). */
int sy_svcb_num(struct json_object *p, const char *key, double *out, int *is_int);
/* An object member as JSON text (malloc'd), or NULL when absent / null; -1 in *bad when present but
 * not an object. */
char *sy_svcb_obj_json(struct json_object *p, const char *key, int *bad);
/* A copy of s, or NULL when s is NULL; sets *oom on allocation failure. */
char *sy_svcb_dup(const char *s, int *oom);
/* 1 when s has no byte a URL or a header line must not carry unescaped (controls, space, '"', '<', '>', '\\',
 * '^', '`', '{', '|', '}', DEL) */
int sy_svcb_url_safe(const char *s);

/* ---- the request ---- */

/* POST to url (copied): method set, headers and body initialised empty. 0 or -1 (no memory). */
int sy_svcb_post(struct sy_ghttp *req, const char *url);
/* One "Name: value\r\n" header line. */
int sy_svcb_header(struct sy_ghttp *req, const char *name, const char *value);

/* ---- texts ---- */

/* LiteLLM's get_last_user_message: the trailing run of user messages (none when the last message is
 * not the user's), each message's text parts concatenated, the messages joined with "\n", then
 * Python's str.strip(). malloc'd (*len), or NULL when there is none or it is empty (*oom on failure). */
char *sy_svcb_last_user(const struct sy_ginput *in, size_t *len, int *oom);
/* 1 when segment s is message text LiteLLM reads as a message's `content` string or text part (any
 * role's text and tool results; not tool-call arguments). */
int sy_svcb_is_content(const struct sy_gseg *s);
/* 1 when segment s is the answer's text (phase POST: the choices' message content). */
int sy_svcb_is_answer_text(const struct sy_gseg *s);
/* The answer's texts concatenated (convert_litellm_response_object_to_str), malloc'd. */
char *sy_svcb_answer_text(const struct sy_ginput *in, size_t *len);

/* Python's str.strip() bounds of s[0..n): *b and *e (s + *b .. s + *e). */
void sy_svcb_strip(const char *s, size_t n, size_t *b, size_t *e);
/* Code points in UTF-8 s[0..n) (Python's len()). */
size_t sy_svcb_cplen(const char *s, size_t n);
/* Azure Content Safety's split_text_by_words, one chunk at a time: the end of the chunk of text[0..n)
 * that starts at off (at most max code points; whitespace and word runs kept whole when they fit, a
 * longer word cut). Returns off when off >= n. */
size_t sy_svcb_chunk_end(const char *text, size_t n, size_t off, size_t max);

/* ---- JSON ---- */

/* Parse body[0..n) into d (nodes from a). 0, or -1 when it is not JSON. */
int sy_svcb_parse(struct sy_jdoc *d, const char *body, size_t n, struct sy_arena *a);
/* Python's repr() of member value node i of d as json.loads() gives it (None when i is 0, an absent
 * member): strings quoted. */
int sy_svcb_repr(struct sy_buf *b, const struct sy_jdoc *d, uint32_t i, struct sy_arena *a);
/* Python's str() of node i (a string as is, else as repr). */
int sy_svcb_str_node(struct sy_buf *b, const struct sy_jdoc *d, uint32_t i, struct sy_arena *a);

/* LiteLLM's get_guardrail_dynamic_request_body_params: the request's extra_body for this guardrail,
 * merged into the service's body with dict.update(). */
struct sy_svcb_extra {
    struct sy_jdoc d;
    int ok; /* extra_body is a JSON object */
};
void sy_svcb_extra_open(struct sy_svcb_extra *x, const char *extra_body, struct sy_arena *a);
/* Writes key: extra's value when extra_body has the key (update replaces in place), else the value
 * the callback writes. Returns 1 when extra's value was written (the caller skips its own). */
int sy_svcb_extra_key(struct sy_jw *w, const struct sy_svcb_extra *x, const char *key);
/* The extra_body members whose key is not one of known[] (NULL-terminated), in order; a repeated key
 * once, with its last value. skip[] (NULL-terminated, may be NULL): keys never taken from extra_body. */
void sy_svcb_extra_rest(struct sy_jw *w, const struct sy_svcb_extra *x, const char *const *known,
                        const char *const *skip, struct sy_arena *a);

/* ---- kinds' entry points for tests ---- */

/* bedrock's request() at a given time (Unix seconds) instead of the clock: a fixed time and fixed
 * credentials sign to fixed bytes. */
int sy_guard_bedrock_request_at(const struct sy_guard *g, const struct sy_ginput *in, int64_t now,
                                struct sy_ghttp *req);

#endif
