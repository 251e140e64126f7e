/* gtest.h - what the guardrail kinds' unit tests share: a guard of a kind
 * opened from its litellm_params as JSON, the input of a check built from a
 * body, its text segments and tool calls, and a segment found in its body.
 * Include after cmocka.h (the helpers assert). */
#ifndef SY_TEST_GUARDRAILS_GTEST_H
#define SY_TEST_GUARDRAILS_GTEST_H

#include <json-c/json.h>
#include <string.h>

#include "guardrails/guardrail.h"

/* Open g as a guard of kind named name with modes (SY_GM_*): the kind's open's result (err on failure). */
static inline int gt_open(struct sy_guard *g, const char *kind, const char *name, unsigned modes, const char *params,
                          char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    g->ops = sy_guard_kind(kind);
    assert_non_null(g->ops);
    g->name = (char *)name;
    g->modes = modes;
    json_object *p = json_tokener_parse(params);
    assert_non_null(p);
    int rc = g->ops->open(g, p, NULL, err, errlen);
    json_object_put(p);
    return rc;
}

/* The segment of text where it stands in body as a JSON string (its span the quotes
 * included), a user's, of message msg; body NULL: a segment at offset 1 of its own. */
static inline struct sy_gseg gt_seg(const char *body, const char *text, int msg)
{
    size_t off = 1;
    if (body) {
        const char *at = strstr(body, text);
        assert_non_null(at);
        off = (size_t)(at - body) - 1;
    }
    return (struct sy_gseg){
        .text = text, .len = strlen(text), .off = off, .raw_len = strlen(text) + 2, .role = SY_GR_USER, .msg = msg};
}

/* A check's input in phase and dialect d over body (may be NULL), its segments and tool calls. */
static inline struct sy_ginput gt_input(unsigned phase, enum sy_gdialect d, const char *body, const struct sy_gseg *seg,
                                        size_t nseg, const struct sy_gtool *tool, size_t ntool)
{
    return (struct sy_ginput){.phase = phase,
                              .dialect = d,
                              .seg = seg,
                              .nseg = nseg,
                              .tool = tool,
                              .ntool = ntool,
                              .body = body,
                              .body_len = body ? strlen(body) : 0};
}

#endif
