/* ptfwd.h - forwarding of a provider pass-through route (gateway/ptfwd.c).
 *
 * The stage (stages/provider_pt.c) decides where the call goes and with which
 * credentials; this sends it and streams the answer back byte for byte, and
 * reads the answer's usage where the provider reports one.
 */
#ifndef SY_GATEWAY_PTFWD_H
#define SY_GATEWAY_PTFWD_H

#include <stddef.h>

#include "core/buf.h"
#include "spend/spend.h"

struct sy_call;

/* How the answer's usage is read (by bytes, no DOM; usage.c's rules). */
enum sy_ptu {
    SY_PTU_NONE,
    SY_PTU_ANTHROPIC, /* Messages JSON and SSE: input_tokens, output_tokens, cache_* (xlate.c's reader) */
    SY_PTU_GEMINI,    /* usageMetadata: promptTokenCount, candidatesTokenCount, thoughtsTokenCount ... */
    SY_PTU_BEDROCK,   /* Converse usage: inputTokens, outputTokens, cacheRead/WriteInputTokens;
                       * InvokeModel streams: the base64 chunks' Anthropic events */
};

struct sy_ptfwd {
    const char *url;     /* absolute, query included */
    const char *method;  /* "POST", "GET", "HEAD", "DELETE", ... */
    const char *headers; /* "Name: v\r\n" lines (credentials included) */
    size_t headers_len;
    const char *body; /* the client's body, as is (may be empty) */
    size_t body_len;
    enum sy_ptu usage;
    double timeout_s; /* per gap between bytes and to the first byte (0: 600) */
};

/* What the call was, for its spend row (set by the stage, read at finish). */
struct sy_ptfwd_state {
    struct sy_call *c;
    enum sy_ptu usage;
    int is_head;
    int bedrock_invoke_stream; /* the answer's events carry base64 chunks */
    struct sy_buf tail;        /* the answer's last bytes (usage sits at the end) */
    int scanned_head;          /* the first bytes were scanned (Anthropic's message_start) */
    const char *route;         /* "/anthropic/v1/messages": the spend row's call route */
    const char *provider;      /* "anthropic", "vertex_ai", ...: custom_llm_provider */
    const char *model;         /* the model priced ("" when unknown) */
    const char *api_base;
    struct sy_dprice price;
    int priced; /* price holds the model's rates */
};

/* Start the call: the answer is streamed to the client, the call accounted
 * (sy_call_account) when it ends or the client leaves. Returns SY_AGAIN, or
 * SY_DONE when it was answered at once (a URL that cannot be parsed). */
int sy_ptfwd_start(struct sy_call *c, struct sy_ptfwd_state *st, const struct sy_ptfwd *f);

#endif
