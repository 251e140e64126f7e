/* cache.h - the response cache (LiteLLM's litellm/caching, reference §7): its
 * key, the per-request controls, the in-memory LRU, the stored value's
 * format, and streams assembled into / replayed from a cached response.
 *
 * Pure functions over buffers plus one process-wide LRU; no I/O. The gateway
 * (stages/cache.c) runs the stage, talks to Redis and stores responses.
 *
 * Cache key (key.c): LiteLLM's Cache.get_cache_key over the request body,
 * in the order LiteLLM's router passes the kwargs (model first, then the
 * first of messages / prompt / input, then the rest in body order): for each
 * top-level member whose name is one of
 * LiteLLM's LLM API params (ModelParamHelper._get_all_llm_api_params), the
 * text "<name>: <str(value)>" where str() is Python's (dicts and lists as
 * Python repr, True/False/None, floats as Python prints them), `model`'s
 * value replaced by the model group; the SHA-256 hex of the concatenation;
 * then "<namespace>:<hex>" when a namespace applies. The same request through
 * LiteLLM and through switchyard gives the same key.
 *
 * Stored value (value.c), in memory and in Redis alike (LiteLLM's format):
 *   {"timestamp": <unix seconds, float>, "response": "<the response JSON as a string>"}
 */
#ifndef SY_CACHE_H
#define SY_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct sy_buf;

#define SY_CACHE_KEY_MAX 384 /* "<namespace>:<64 hex>" NUL-terminated; namespaces longer than 300 bytes are refused */

/* The cache key of a request body (a JSON object). model_group replaces the
 * body's model; ns (may be NULL or "") prefixes it. 0, or -1 when the body is
 * not a JSON object or ns is too long. Members named "cache", "metadata",
 * "stream", "stream_options" and LiteLLM's router keys are not part of the
 * key unless LiteLLM includes them (key.c documents the list). */
int sy_cache_key(const char *body, size_t n, const char *model_group, const char *ns, char out[SY_CACHE_KEY_MAX]);
/* The same with a tenant scope (cache_params.switchyard_scope: "team:<id>" or
 * "key:<hash>"; NULL or "" = global, LiteLLM's key): hashed after the params,
 * so entries of two scopes never share a key, whatever the namespace. */
int sy_cache_key_scoped(const char *body, size_t n, const char *model_group, const char *ns, const char *scope,
                        char out[SY_CACHE_KEY_MAX]);

/* Per-request controls: the body's "cache" object (LiteLLM's keys) and the
 * Cache-Control request header. */
struct sy_cache_ctl {
    int no_cache;    /* "no-cache": true / Cache-Control: no-cache: skip the lookup */
    int no_store;    /* "no-store": true / Cache-Control: no-store: do not write */
    int use_cache;   /* "use-cache": true: opt in under mode: default_off */
    double ttl;      /* "ttl": N (seconds); < 0 when absent */
    double s_maxage; /* "s-maxage": N / Cache-Control: s-maxage=N or max-age=N: only entries younger; < 0 absent */
    char ns[304];    /* "namespace": "..." ("" when absent) */
};
/* Fill c from the "cache" member's value span (obj, len; may be NULL/0) and
 * the Cache-Control header value (cc, cclen; may be NULL/0). 0, or -1 with a
 * reason in err (a wrong type, e.g. "ttl" not a number): the gateway answers
 * 400 naming it. Unknown keys are ignored (as LiteLLM). */
int sy_cache_ctl_parse(const char *obj, size_t len, const char *cc, size_t cclen, struct sy_cache_ctl *c, char *err,
                       size_t errcap);

/* ---- stored values (value.c) --------------------------------------------- */
/* Encode response (JSON text) stored at unix time now into out. 0 / -1 (no memory). */
int sy_cache_value_encode(const char *response, size_t n, double now, struct sy_buf *out);
/* Decode a stored value: the response JSON text (unescaped) into out and its
 * timestamp. 0, or -1 when v is not a value of this format. */
int sy_cache_value_decode(const char *v, size_t n, struct sy_buf *out, double *timestamp);

/* ---- the in-memory cache (lru.c) ------------------------------------------ */
/* Process-wide, thread-safe (sharded, a lock per shard), bounded by bytes
 * (keys + values + overhead) and by items; least recently used entries go
 * first; an entry past its TTL is never returned and is dropped when met. */
void sy_cache_local_init(size_t max_bytes, size_t max_items);
void sy_cache_local_shutdown(void);
/* Copy the value for key into out (sy_buf_append) when present and not
 * expired: 1 found, 0 not. */
int sy_cache_local_get(const char *key, double now, struct sy_buf *out);
/* Insert or replace (ttl seconds > 0). A value larger than max_bytes / 8 is
 * not stored (returns -1). */
int sy_cache_local_put(const char *key, const char *v, size_t n, double ttl, double now);
int sy_cache_local_delete(const char *key); /* 1 removed, 0 absent */
void sy_cache_local_flush(void);
struct sy_cache_stats {
    uint64_t items, bytes, evictions, expired;
};
void sy_cache_local_stats(struct sy_cache_stats *s);

/* ---- streams (sse.c) ------------------------------------------------------- */
/* Assemble an OpenAI SSE stream (the bytes the client received: "data: {...}"
 * chunks, "data: [DONE]") into the non-streamed response it stands for: a
 * chat.completion (chat chunks: content, role, tool_calls by index with
 * arguments concatenated, refusal, finish_reason per choice, usage when a
 * chunk carried it, id/created/model/system_fingerprint of the first chunk)
 * or a text_completion (text chunks). 0, or -1 when the stream is not a
 * complete OpenAI stream (no [DONE], an error event, unparseable chunk):
 * such a stream is not cached. */
int sy_cache_sse_assemble(const char *sse, size_t n, struct sy_buf *out);

/* Replay a cached response (chat.completion or text_completion JSON) as an
 * OpenAI stream: a first chunk with the role, one chunk with each choice's
 * content / tool calls, a chunk with each finish_reason, then (when
 * include_usage) a chunk with empty choices and the usage, then
 * "data: [DONE]\n\n". Chunks use "chat.completion.chunk" (or
 * "text_completion") objects with the response's id, created and model. 0, or
 * -1 when response is not such an object. */
int sy_cache_sse_replay(const char *response, size_t n, int include_usage, struct sy_buf *out);

#endif
