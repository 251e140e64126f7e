/* ptroute.h - the provider pass-through routes as LiteLLM serves them
 * (proxy/pass_through_endpoints/llm_passthrough_endpoints.py): which prefix
 * is which provider, whether a forwarded sub-path is safe, whether a key's
 * allowed_passthrough_routes covers a route, and what a provider path names
 * (its model, Vertex's project and location). Pure functions over bytes: no
 * I/O, no config, no clock (fuzzed: tests/fuzz/providers/fuzz_ptroute.c).
 *
 *   prefix                  provider (deployments matched)   credentials injected
 *   /anthropic              anthropic                        x-api-key
 *   /vertex_ai, /vertex-ai  vertex_ai                        Authorization: Bearer <OAuth token>
 *   /gemini                 gemini                           ?key=
 *   /bedrock                bedrock                          SigV4 (service bedrock)
 *   /openai                 openai                           Authorization: Bearer
 *   /azure                  azure                            api-key
 *   /cohere                 cohere                           Authorization: Bearer
 *   /mistral                mistral                          Authorization: Bearer
 *   /vllm                   hosted_vllm                      Authorization: Bearer (when a key is set)
 *   /langfuse               -                                Authorization: Basic public:secret
 *
 * A route is the prefix alone or the prefix followed by '/'; what follows the
 * prefix is the sub-path sent to the provider's base URL. A sub-path is safe
 * when, percent-decoded once, none of its segments (split on '/' and '\')
 * is "." or "..", and it has no control byte, no NUL, no '#': so
 * "/anthropic/../key/generate" and "/anthropic/%2e%2e/key/generate" never
 * leave the provider's base.
 */
#ifndef SY_PTROUTE_H
#define SY_PTROUTE_H

#include <stddef.h>

enum sy_pt_kind {
    SY_PT_ANTHROPIC,
    SY_PT_VERTEX,
    SY_PT_GEMINI,
    SY_PT_BEDROCK,
    SY_PT_OPENAI,
    SY_PT_AZURE,
    SY_PT_COHERE,
    SY_PT_MISTRAL,
    SY_PT_VLLM,
    SY_PT_LANGFUSE,
};

struct sy_ptprov {
    const char *prefix;   /* "/anthropic" */
    enum sy_pt_kind kind; /* what is injected, how usage is read */
    const char *provider; /* the deployments' provider name ("vertex_ai", "hosted_vllm"); NULL: none */
};

/* The provider route path[0..n) is under; *sub is the offset of its sub-path
 * (n when the path is the prefix alone). NULL when none. */
const struct sy_ptprov *sy_pt_find(const char *path, size_t n, size_t *sub);

/* The i-th provider route (GET /routes lists them); NULL past the last. */
const struct sy_ptprov *sy_pt_at(size_t i);

/* 1 when the sub-path p[0..n) is safe to append to a base URL (above). */
int sy_pt_subpath_safe(const char *p, size_t n);

/* 1 when allowed[0..an) covers route[0..rn): equal, or a prefix followed by
 * '/' (LiteLLM's RouteChecks._route_matches_allowed_route). */
int sy_pt_route_covers(const char *allowed, size_t an, const char *route, size_t rn);

/* The model a provider sub-path names, percent-decoded into out[cap]:
 * Bedrock "/model/{id}/op", Vertex and Gemini ".../models/{m}:op" (also
 * "/models/{m}" without an op). Its length, 0 when the path names none or it
 * does not fit. */
size_t sy_pt_path_model(enum sy_pt_kind kind, const char *sub, size_t n, char *out, size_t cap);

/* Vertex: project and location of ".../projects/{p}/locations/{l}/...",
 * decoded into p[pcap] and l[lcap]. 1 when both are there and fit. */
int sy_pt_vertex_where(const char *sub, size_t n, char *p, size_t pcap, char *l, size_t lcap);

/* The operation after the model (":streamRawPredict", "/converse-stream",
 * "/invoke-with-response-stream", ":streamGenerateContent"): 1 when the
 * sub-path asks for a stream. */
int sy_pt_path_streams(const char *sub, size_t n);

#endif
