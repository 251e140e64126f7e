/* svc_a.h - what the service kinds generic_guardrail_api, openai_moderation,
 * presidio and lakera_v2 share (generic_api.c, openai_moderation.c,
 * presidio.c, lakera.c): reading litellm_params, the request skeleton,
 * parsing a service's JSON answer, Python's str() of a JSON value for the
 * block messages (str() of LiteLLM's HTTPException detail), and Python string
 * indices (code points) turned into byte offsets.
 *
 * "Nothing to check" (no text of the kind a service reads, as LiteLLM skips
 * the call): request() returns 0 and leaves req->url NULL; the stage sends
 * nothing and the check passes.
 */
#ifndef SY_GUARDRAILS_SERVICES_SVC_A_H
#define SY_GUARDRAILS_SERVICES_SVC_A_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/buf.h"
#include "guardrails/guardrail.h"
#include "providers/jdom.h"

struct json_object;

#define SY_SVA_BODY_MAX     ((size_t)64 << 20) /* a service request's body cap */
#define SY_SVA_HDR_MAX      ((size_t)64 << 10)
#define SY_SVA_ANSWER_NODES 1000000u /* a service answer's JSON nodes at most */

/* ---- settings (litellm_params) ---- */

/* A non-empty string member, else NULL. */
const char *sy_sva_str(struct json_object *p, const char *key);
/* A member as a boolean (true/false, "true"/"false", a number != 0); dflt when absent or null. */
int sy_sva_bool(struct json_object *p, const char *key, int dflt);
/* An object member as JSON text (malloc'd); NULL when absent or null, and *bad = 1 when present but
 * not an object. */
char *sy_sva_obj_json(struct json_object *p, const char *key, int *bad);
/* 1 when s may go in a URL or a header line as is (no control byte, no CR/LF). */
int sy_sva_line_safe(const char *s);
/* A base URL: s without its trailing slashes (malloc'd), or NULL. */
char *sy_sva_base(const char *s);

/* ---- the request ---- */

/* POST to url (copied): method set, headers and body initialised empty. 0 or -1 (no memory). */
int sy_sva_post(struct sy_ghttp *req, const char *url);
/* One "Name: value\r\n" header line. */
int sy_sva_header(struct sy_ghttp *req, const char *name, const char *value);

/* ---- the answer ---- */

/* Parse body[0..n) into d (nodes from a). 0, or -1 when it is not JSON. */
int sy_sva_parse(struct sy_jdoc *d, const char *body, size_t n, struct sy_arena *a);
/* Python's str() of the JSON value json[0..n) (a dict prints {'k': v}), appended to b. 0 or -1. */
int sy_sva_pystr_json(struct sy_buf *b, const char *json, size_t n);

/* ---- texts ---- */

/* 1 when segment s is text LiteLLM reads as a message's `content` (string or text part) or an
 * answer's text: any role's text and tool results, not tool-call arguments. */
int sy_sva_is_content(const struct sy_gseg *s);
/* Python's str.strip() bounds of s[0..n). */
void sy_sva_strip(const char *s, size_t n, size_t *b, size_t *e);
/* Code points in UTF-8 s[0..n) (Python's len()). */
size_t sy_sva_cplen(const char *s, size_t n);
/* Python string indices into text[0..n) (code points) turned into byte offsets, in place: idx[0..k)
 * in any order; an index past the end becomes n. O(n + k log k). 0, or -1 (no memory). */
int sy_sva_cp2byte(const char *text, size_t n, size_t *idx, size_t k);

#endif
