#!/usr/bin/env python3
"""gen_keys.py - golden cache keys for test_key.c, computed the way LiteLLM's
Cache.get_cache_key does (litellm/caching/caching.py): for each kwarg in order
that is an LLM API param and not None, "name: str(value)"; sha256 hex; then
"namespace:" prefix. Kwargs order as the router passes them: model (the model
group), then messages/prompt/input, then the rest of the body in body order.
Run: python3 gen_keys.py  (prints C initialisers for test_key.c)."""
import hashlib, json

PARAMS = set("""audio best_of chunking_strategy dimensions documents echo encoding_format file
frequency_penalty function_call functions include input known_speaker_names known_speaker_references
language logit_bias logprobs max_chunks_per_doc max_completion_tokens max_tokens max_tokens_per_doc
messages modalities model n parallel_tool_calls prediction presence_penalty prompt prompt_cache_key
prompt_cache_retention query rank_fields reasoning_effort response_format return_documents
safety_identifier seed service_tier stop store stream stream_options suffix temperature thinking
timestamp_granularities tool_choice tools top_logprobs top_n top_p user verbosity web_search_options""".split())

def key(body, group, ns=None):
    d = json.loads(body)
    kw = {"model": d.get("model")}
    for p in ("messages", "prompt", "input"):
        if p in d:
            kw[p] = d[p]
            break
    for k, v in d.items():
        if k not in kw:
            kw[k] = v
    kw["metadata"] = {"model_group": group}
    s = ""
    for k in kw:
        if k in PARAMS:
            v = group if (k == "model" and group) else kw[k]
            if v is not None:
                s += f"{str(k)}: {str(v)}"
    h = hashlib.sha256(s.encode()).hexdigest()
    return f"{ns}:{h}" if ns else h

CASES = [
    ('{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}', "gpt-4o", None),
    ('{"messages":[{"role":"user","content":"hi"}],"model":"gpt-4o","temperature":0.7,"max_tokens":10}', "gpt-4o", None),
    ('{"model":"x","temperature":1.0,"top_p":1e-05,"seed":42,"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"it\'s \\"q\\" \\n \\u00e9 \\u00a0 \\u2028 \\ud83d\\ude00"}],"metadata":{"a":1},"cache":{"no-cache":true},"user":"u1","fallbacks":["y"]}', "grp", "ns1"),
    ('{"model":"m","messages":[],"stop":null,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{},"required":[]}}}],"tool_choice":"auto","logit_bias":{"50256":-100},"n":2,"presence_penalty":-0.5,"frequency_penalty":1e16}', "m", None),
    ('{"model":"e","input":["a","b"],"encoding_format":"float","dimensions":256}', "emb-group", None),
    ('{"model":"t","prompt":"Say \'hi\'","max_tokens":5,"echo":false,"logprobs":null,"suffix":"x\\ty"}', "t", None),
    ('{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a\\\\b\\u0007"}]}],"temperature":0,"response_format":{"type":"json_object"}}', "", None),    # characters only CPython's isprintable table gets right (unassigned, format), DEL, a float with zeros
    ('{"model":"m","messages":[{"role":"user","content":"\\u0378 \\ufff0 \\u0890 \\ud834\\udd73 \\u007f \\u061c"}],"temperature":1000.0}', "m", None),
]

if __name__ == "__main__":
    for body, group, ns in CASES:
        print("    {%s, %s, %s, \"%s\"}," % (json.dumps(body), json.dumps(group), json.dumps(ns) if ns else "NULL", key(body, group, ns)))
