/* test_langfuse.c - the langfuse sink's open / encode / verdict (src/logging/sinks/langfuse.c).
 *
 * Records are built by hand with a StandardLoggingPayload already in
 * rec->payload (what the logging thread's sy_log_payload keeps), encoded, and
 * the ingestion request is read back with json-c: the events LiteLLM's
 * Langfuse logger would send through the Python SDK, field for field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logging/logging.h"

extern const struct sy_sink_ops sy_sink_langfuse;

/* The engine's and payload's functions, for a build where they are not linked
 * (a linked strong definition wins over these). */
__attribute__((weak)) const char *sy_log_payload(struct sy_logrec *rec, size_t *len)
{
    *len = rec->payload_len;
    return rec->payload;
}
__attribute__((weak)) void sy_sink_req_free(struct sy_sink_req *r)
{
    free(r->url);
    r->url = NULL;
    sy_buf_free(&r->headers);
    sy_buf_free(&r->body);
}

static const char *PAYLOAD_OK =
    "{\"id\":\"chatcmpl-abc\",\"trace_id\":\"t-1\",\"call_type\":\"acompletion\",\"status\":\"success\","
    "\"model\":\"gpt-4o\",\"model_group\":\"gpt-4o\",\"api_base\":\"https://api.openai.com/v1\","
    "\"messages\":[{\"role\":\"user\",\"content\":\"hi there\"}],"
    "\"response\":{\"id\":\"chatcmpl-abc\",\"object\":\"chat.completion\",\"system_fingerprint\":\"fp_1\","
    "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hello!\"},\"finish_reason\":"
    "\"stop\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5,\"total_tokens\":15}},"
    "\"model_parameters\":{\"temperature\":0.2,\"stop\":[\"\\n\"],\"stream\":false,\"tools\":[{\"type\":"
    "\"function\",\"function\":{\"name\":\"f\"}}],\"logit_bias\":{\"1\":2}},"
    "\"hidden_params\":{\"model_id\":\"dep-1\",\"cache_key\":null,\"api_base\":\"https://api.openai.com/v1\"},"
    "\"metadata\":{\"user_api_key_hash\":\"88dc28\",\"user_api_key_alias\":\"ci-key\",\"user_api_key_team_id\":"
    "\"team-a\",\"user_api_key_user_id\":\"u-1\",\"user_api_key_end_user_id\":\"end-7\",\"requester_ip_address\":"
    "\"10.0.0.1\",\"requester_metadata\":{\"session_id\":\"s-9\",\"tags\":[\"prod\"],\"foo\":\"bar\"},"
    "\"spend_logs_metadata\":null},"
    "\"request_tags\":[\"prod\",\"blue\"],\"error_str\":null}";

static const char *REQ_META_OK = "{\"session_id\":\"s-9\",\"tags\":[\"prod\"],\"foo\":\"bar\"}";

static void rec_init(struct sy_logrec *r, const char *payload)
{
    memset(r, 0, sizeof *r);
    r->id = "chatcmpl-abc";
    r->call_id = "c0ffee00-1111-2222-3333-444455556666";
    r->call_type = "acompletion";
    r->model = "gpt-4o";
    r->model_group = "gpt-4o";
    r->model_id = "dep-1";
    r->upstream_model = "openai/gpt-4o";
    r->provider = "openai";
    r->api_base = "https://api.openai.com/v1";
    r->end_user = "end-7";
    r->key_alias = "ci-key";
    r->http_status = 200;
    r->prompt_tokens = 10;
    r->completion_tokens = 5;
    r->cached_tokens = 3;
    r->cost = 0.00015;
    r->flags = SY_LOGREC_COST_KNOWN;
    r->start_s = 1700000000.25;
    r->api_start_s = 1700000000.26;
    r->completion_start_s = 1700000000.5;
    r->end_s = 1700000001.75;
    r->request_metadata = REQ_META_OK;
    r->tags = "[\"prod\",\"blue\"]";
    r->payload = (char *)payload;
    r->payload_len = strlen(payload);
}

static void set_env(void)
{
    setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-1", 1);
    setenv("LANGFUSE_SECRET_KEY", "sk-lf-1", 1);
    setenv("LANGFUSE_HOST", "http://127.0.0.1:3000/", 1);
    unsetenv("LANGFUSE_RELEASE");
    unsetenv("LANGFUSE_TRACING_ENVIRONMENT");
}

static void *open_ok(const char *vars)
{
    char err[256] = "";
    struct sy_logconf lc = {0};
    void *inst = sy_sink_langfuse.open(&lc, vars, err, sizeof err);
    assert_non_null(inst);
    return inst;
}

/* Encode recs into exactly one request and parse its body. */
static json_object *encode_one(void *inst, struct sy_logrec **recs, size_t n, struct sy_sink_req *q)
{
    struct sy_sink_req out[SY_SINK_MAX_REQS];
    memset(out, 0, sizeof out);
    size_t nout = 99;
    assert_int_equal(sy_sink_langfuse.encode(inst, recs, n, out, &nout), 0);
    assert_int_equal(nout, 1);
    *q = out[0];
    json_object *j = json_tokener_parse(q->body.p);
    assert_non_null(j);
    return j;
}

static json_object *get(json_object *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    json_object *cur = o;
    for (char *tok = strtok(buf, "."); tok && cur; tok = strtok(NULL, ".")) {
        if (json_object_is_type(cur, json_type_array))
            cur = json_object_array_get_idx(cur, (size_t)atoi(tok));
        else if (!json_object_object_get_ex(cur, tok, &cur))
            return NULL;
    }
    return cur;
}

static const char *gs(json_object *o, const char *path)
{
    json_object *v = get(o, path);
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static void assert_iso(const char *s)
{
    assert_non_null(s);
    /* 2023-11-14T22:13:20.250Z */
    assert_int_equal(strlen(s), 24);
    assert_int_equal(s[10], 'T');
    assert_int_equal(s[19], '.');
    assert_int_equal(s[23], 'Z');
}

static void success_record(void **st)
{
    (void)st;
    set_env();
    void *inst = open_ok(NULL);
    struct sy_logrec r;
    rec_init(&r, PAYLOAD_OK);
    struct sy_logrec *recs[1] = {&r};
    struct sy_sink_req q;
    json_object *j = encode_one(inst, recs, 1, &q);

    assert_string_equal(q.method, "POST");
    assert_string_equal(q.url, "http://127.0.0.1:3000/api/public/ingestion");
    /* base64("pk-lf-1:sk-lf-1") */
    assert_non_null(strstr(q.headers.p, "Authorization: Basic cGstbGYtMTpzay1sZi0x\r\n"));
    assert_non_null(strstr(q.headers.p, "Content-Type: application/json\r\n"));

    assert_int_equal(json_object_array_length(get(j, "batch")), 2);
    assert_string_equal(gs(j, "batch.0.type"), "trace-create");
    assert_string_equal(gs(j, "batch.1.type"), "generation-create");
    assert_int_equal(strlen(gs(j, "batch.0.id")), 36);
    assert_string_not_equal(gs(j, "batch.0.id"), gs(j, "batch.1.id"));
    assert_iso(gs(j, "batch.0.timestamp"));
    assert_int_equal(json_object_get_int(get(j, "metadata.batch_size")), 2);
    assert_string_equal(gs(j, "metadata.sdk_integration"), "litellm");
    assert_string_equal(gs(j, "metadata.public_key"), "pk-lf-1");

    /* the trace */
    assert_string_equal(gs(j, "batch.0.body.id"), r.call_id);
    assert_string_equal(gs(j, "batch.0.body.name"), "litellm-acompletion");
    assert_string_equal(gs(j, "batch.0.body.userId"), "end-7");
    assert_string_equal(gs(j, "batch.0.body.sessionId"), "s-9");
    assert_string_equal(gs(j, "batch.0.body.tags.0"), "prod");
    assert_string_equal(gs(j, "batch.0.body.tags.1"), "blue");
    assert_string_equal(gs(j, "batch.0.body.input.messages.0.content"), "hi there");
    assert_string_equal(gs(j, "batch.0.body.output.content"), "hello!");
    assert_null(get(j, "batch.0.body.metadata"));

    /* the generation */
    assert_string_equal(gs(j, "batch.1.body.traceId"), r.call_id);
    const char *gid = gs(j, "batch.1.body.id");
    assert_non_null(gid);
    assert_int_equal(strncmp(gid, "time-", 5), 0);
    assert_non_null(strstr(gid, "-250000_chatcmpl-abc"));
    assert_string_equal(gs(j, "batch.1.body.name"), "litellm:ci-key");
    assert_string_equal(gs(j, "batch.1.body.startTime"), "2023-11-14T22:13:20.250Z");
    assert_string_equal(gs(j, "batch.1.body.completionStartTime"), "2023-11-14T22:13:20.500Z");
    assert_string_equal(gs(j, "batch.1.body.endTime"), "2023-11-14T22:13:21.750Z");
    assert_string_equal(gs(j, "batch.1.body.model"), "gpt-4o");
    assert_string_equal(gs(j, "batch.1.body.level"), "DEFAULT");
    assert_null(get(j, "batch.1.body.statusMessage"));
    /* model parameters: scalars kept, the rest as Python's str(), tools moved to the input */
    assert_true(json_object_get_double(get(j, "batch.1.body.modelParameters.temperature")) == 0.2);
    assert_string_equal(gs(j, "batch.1.body.modelParameters.stop"), "['\\n']");
    assert_string_equal(gs(j, "batch.1.body.modelParameters.logit_bias"), "{'1': 2}");
    assert_false(json_object_get_boolean(get(j, "batch.1.body.modelParameters.stream")));
    assert_string_equal(gs(j, "batch.1.body.modelParameters.system_fingerprint"), "fp_1");
    assert_null(get(j, "batch.1.body.modelParameters.tools"));
    assert_string_equal(gs(j, "batch.1.body.input.tools.0.function.name"), "f");
    assert_string_equal(gs(j, "batch.1.body.output.role"), "assistant");
    /* usage as the SDK converts LiteLLM's {prompt_tokens, completion_tokens, total_cost} */
    assert_int_equal(json_object_get_int(get(j, "batch.1.body.usage.input")), 10);
    assert_int_equal(json_object_get_int(get(j, "batch.1.body.usage.output")), 5);
    assert_string_equal(gs(j, "batch.1.body.usage.unit"), "TOKENS");
    assert_true(json_object_get_double(get(j, "batch.1.body.usage.totalCost")) == 0.00015);
    assert_int_equal(json_object_get_int(get(j, "batch.1.body.usageDetails.total")), 15);
    assert_int_equal(json_object_get_int(get(j, "batch.1.body.usageDetails.cache_read_input_tokens")), 3);
    /* metadata: the proxy's fields, the request's own under requester_metadata */
    assert_string_equal(gs(j, "batch.1.body.metadata.user_api_key_hash"), "88dc28");
    assert_string_equal(gs(j, "batch.1.body.metadata.user_api_key_team_id"), "team-a");
    assert_string_equal(gs(j, "batch.1.body.metadata.requester_metadata.foo"), "bar");
    assert_null(get(j, "batch.1.body.metadata.session_id"));
    assert_null(get(j, "batch.1.body.metadata.foo"));
    assert_string_equal(gs(j, "batch.1.body.metadata.model_group"), "gpt-4o");
    assert_string_equal(gs(j, "batch.1.body.metadata.deployment"), "openai/gpt-4o");
    assert_string_equal(gs(j, "batch.1.body.metadata.api_base"), "https://api.openai.com/v1");
    assert_string_equal(gs(j, "batch.1.body.metadata.hidden_params.model_id"), "dep-1");
    assert_false(json_object_get_boolean(get(j, "batch.1.body.metadata.cache_hit")));
    assert_true(json_object_get_double(get(j, "batch.1.body.metadata.litellm_response_cost")) == 0.00015);

    json_object_put(j);
    sy_sink_req_free(&q);
    sy_sink_langfuse.close(inst);
}

static void same_record_same_bytes(void **st)
{
    (void)st;
    set_env();
    void *inst = open_ok(NULL);
    struct sy_logrec r;
    rec_init(&r, PAYLOAD_OK);
    struct sy_logrec *recs[1] = {&r};
    struct sy_sink_req a, b;
    json_object *ja = encode_one(inst, recs, 1, &a), *jb = encode_one(inst, recs, 1, &b);
    assert_string_equal(a.body.p, b.body.p); /* a retry carries the same event ids */
    r.seq = 1;
    r.call_id = "another";
    struct sy_sink_req c;
    json_object *jc = encode_one(inst, recs, 1, &c);
    assert_string_not_equal(gs(ja, "batch.0.id"), gs(jc, "batch.0.id"));
    json_object_put(ja);
    json_object_put(jb);
    json_object_put(jc);
    sy_sink_req_free(&a);
    sy_sink_req_free(&b);
    sy_sink_req_free(&c);
    sy_sink_langfuse.close(inst);
}

static const char *PAYLOAD_FAIL =
    "{\"id\":\"c0ffee\",\"call_type\":\"acompletion\",\"status\":\"failure\",\"model\":\"gpt-4o\","
    "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"response\":{},"
    "\"model_parameters\":{},\"metadata\":{\"user_api_key_alias\":null},"
    "\"error_str\":\"litellm.RateLimitError: RateLimitError: OpenAIException - slow down\","
    "\"request_tags\":[]}";

static void failure_record(void **st)
{
    (void)st;
    set_env();
    void *inst = open_ok(NULL);
    struct sy_logrec r;
    rec_init(&r, PAYLOAD_FAIL);
    r.flags = SY_LOGREC_FAILURE;
    r.http_status = 429;
    r.error_class = "RateLimitError";
    r.error_message = "slow down";
    r.request_metadata = NULL;
    struct sy_logrec *recs[1] = {&r};
    struct sy_sink_req q;
    json_object *j = encode_one(inst, recs, 1, &q);
    const char *msg = "litellm.RateLimitError: RateLimitError: OpenAIException - slow down";
    assert_string_equal(gs(j, "batch.1.body.level"), "ERROR");
    assert_string_equal(gs(j, "batch.1.body.statusMessage"), msg);
    assert_string_equal(gs(j, "batch.1.body.output"), msg);
    assert_null(get(j, "batch.1.body.usage"));
    assert_null(get(j, "batch.1.body.usageDetails"));
    assert_string_equal(gs(j, "batch.1.body.name"), "litellm-acompletion");
    assert_int_equal(strlen(gs(j, "batch.1.body.id")), 36); /* no response id: a uuid */
    assert_null(get(j, "batch.0.body.output"));             /* the trace keeps only the input */
    assert_string_equal(gs(j, "batch.0.body.input.messages.0.content"), "hi");
    assert_non_null(get(j, "batch.1.body.metadata.requester_metadata"));
    assert_null(get(j, "batch.1.body.metadata.litellm_response_cost"));
    json_object_put(j);
    sy_sink_req_free(&q);
    sy_sink_langfuse.close(inst);
}

static void redacted_record(void **st)
{
    (void)st;
    set_env();
    void *inst = open_ok(NULL);
    struct sy_logrec r;
    rec_init(&r, PAYLOAD_OK);
    r.flags |= SY_LOGREC_NO_MESSAGES | SY_LOGREC_REDACT_KEY;
    struct sy_logrec *recs[1] = {&r};
    struct sy_sink_req q;
    json_object *j = encode_one(inst, recs, 1, &q);
    assert_null(strstr(q.body.p, "hi there"));
    assert_null(strstr(q.body.p, "hello!"));
    assert_null(strstr(q.body.p, "user_api_key"));
    assert_string_equal(gs(j, "batch.1.body.input.messages.0.content"), "redacted-by-litellm");
    assert_string_equal(gs(j, "batch.1.body.output.content"), "redacted-by-litellm");
    assert_string_equal(gs(j, "batch.0.body.output.content"), "redacted-by-litellm");
    assert_string_equal(gs(j, "batch.1.body.name"), "litellm-acompletion"); /* no alias to name it after */
    json_object_put(j);
    sy_sink_req_free(&q);
    sy_sink_langfuse.close(inst);
}

static void metadata_controls(void **st)
{
    (void)st;
    set_env();
    void *inst = open_ok(NULL);
    struct sy_logrec r;
    rec_init(&r, PAYLOAD_OK);
    r.request_metadata = "{\"trace_id\":\"my-trace\",\"trace_name\":\"my-app\",\"generation_name\":\"gen-x\","
                         "\"generation_id\":\"gen-42\",\"trace_user_id\":\"alice\",\"mask_input\":true,"
                         "\"version\":\"v3\",\"parent_observation_id\":\"obs-1\","
                         "\"prompt\":{\"name\":\"p\",\"version\":2}}";
    struct sy_logrec *recs[1] = {&r};
    struct sy_sink_req q;
    json_object *j = encode_one(inst, recs, 1, &q);
    assert_string_equal(gs(j, "batch.0.body.id"), "my-trace");
    assert_string_equal(gs(j, "batch.0.body.name"), "my-app");
    assert_string_equal(gs(j, "batch.0.body.userId"), "alice");
    assert_string_equal(gs(j, "batch.0.body.version"), "v3");
    assert_string_equal(gs(j, "batch.0.body.input"), "redacted-by-litellm");
    assert_string_equal(gs(j, "batch.1.body.id"), "gen-42");
    assert_string_equal(gs(j, "batch.1.body.traceId"), "my-trace");
    assert_string_equal(gs(j, "batch.1.body.name"), "gen-x");
    assert_string_equal(gs(j, "batch.1.body.version"), "v3");
    assert_string_equal(gs(j, "batch.1.body.parentObservationId"), "obs-1");
    assert_string_equal(gs(j, "batch.1.body.promptName"), "p");
    assert_int_equal(json_object_get_int(get(j, "batch.1.body.promptVersion")), 2);
    assert_string_equal(gs(j, "batch.1.body.input"), "redacted-by-litellm");
    assert_string_equal(gs(j, "batch.1.body.output.content"), "hello!");
    json_object_put(j);
    sy_sink_req_free(&q);

    /* an existing trace is only referenced: no name, no tags, no input */
    r.request_metadata = "{\"existing_trace_id\":\"old-trace\",\"trace_name\":\"ignored\"}";
    j = encode_one(inst, recs, 1, &q);
    assert_string_equal(gs(j, "batch.0.body.id"), "old-trace");
    assert_null(get(j, "batch.0.body.name"));
    assert_null(get(j, "batch.0.body.tags"));
    assert_null(get(j, "batch.0.body.input"));
    assert_string_equal(gs(j, "batch.1.body.traceId"), "old-trace");
    json_object_put(j);
    sy_sink_req_free(&q);

    /* metadata that is not an object, or fields of the wrong type, are ignored */
    r.request_metadata = "[1,2]";
    j = encode_one(inst, recs, 1, &q);
    assert_string_equal(gs(j, "batch.0.body.id"), r.call_id);
    json_object_put(j);
    sy_sink_req_free(&q);
    r.request_metadata = "{\"trace_id\":{\"x\":1},\"session_id\":[1],\"trace_user_id\":5}";
    j = encode_one(inst, recs, 1, &q);
    assert_string_equal(gs(j, "batch.0.body.id"), r.call_id);
    assert_null(get(j, "batch.0.body.sessionId"));
    assert_string_equal(gs(j, "batch.0.body.userId"), "end-7");
    json_object_put(j);
    sy_sink_req_free(&q);
    sy_sink_langfuse.close(inst);
}

static void other_call_types(void **st)
{
    (void)st;
    set_env();
    void *inst = open_ok(NULL);
    /* an Anthropic /v1/messages answer: the answer as the client got it */
    const char *anth = "{\"call_type\":\"anthropic_messages\",\"model\":\"claude-sonnet-4\",\"messages\":[{\"role\":"
                       "\"user\",\"content\":\"Weather?\"}],\"response\":{\"id\":\"msg_01\",\"type\":\"message\","
                       "\"content\":[{\"type\":\"text\",\"text\":\"Sunny.\"}]},\"model_parameters\":{\"max_tokens\":"
                       "100,\"tools\":[{\"name\":\"w\"}]},\"metadata\":{}}";
    struct sy_logrec r;
    rec_init(&r, anth);
    r.call_type = "anthropic_messages";
    struct sy_logrec *recs[1] = {&r};
    struct sy_sink_req q;
    json_object *j = encode_one(inst, recs, 1, &q);
    assert_string_equal(gs(j, "batch.0.body.name"), "litellm-anthropic_messages");
    assert_string_equal(gs(j, "batch.1.body.output.content.0.text"), "Sunny.");
    assert_string_equal(gs(j, "batch.1.body.input.tools.0.name"), "w");
    assert_int_equal(json_object_get_int(get(j, "batch.1.body.modelParameters.max_tokens")), 100);
    assert_non_null(strstr(gs(j, "batch.1.body.id"), "_msg_01"));
    json_object_put(j);
    sy_sink_req_free(&q);
    /* embeddings: no output (LiteLLM logs none), usage still there */
    const char *emb = "{\"call_type\":\"aembedding\",\"model\":\"e\",\"messages\":[\"a\",\"b\"],\"response\":{"
                      "\"object\":\"list\",\"data\":[{\"embedding\":[0.1]}]},\"metadata\":{}}";
    rec_init(&r, emb);
    r.call_type = "aembedding";
    j = encode_one(inst, recs, 1, &q);
    assert_null(get(j, "batch.1.body.output"));
    assert_null(get(j, "batch.0.body.output"));
    assert_string_equal(gs(j, "batch.1.body.input.messages.1"), "b");
    assert_int_equal(json_object_get_int(get(j, "batch.1.body.usage.input")), 10);
    json_object_put(j);
    sy_sink_req_free(&q);
    /* a text completion: the first choice's text */
    const char *txt = "{\"call_type\":\"atext_completion\",\"model\":\"t\",\"response\":{\"id\":\"cmpl-1\","
                      "\"choices\":[{\"text\":\"done\",\"index\":0}]},\"metadata\":{}}";
    rec_init(&r, txt);
    r.call_type = "atext_completion";
    j = encode_one(inst, recs, 1, &q);
    assert_string_equal(gs(j, "batch.1.body.output"), "done");
    json_object_put(j);
    sy_sink_req_free(&q);
    sy_sink_langfuse.close(inst);
}

static void tenant_keys(void **st)
{
    (void)st;
    set_env();
    void *inst = open_ok("{\"langfuse_public_key\":\"pk-team\",\"langfuse_secret_key\":\"sk-team\","
                         "\"langfuse_host\":\"langfuse.team.internal:3000/\"}");
    struct sy_logrec r;
    rec_init(&r, PAYLOAD_OK);
    struct sy_logrec *recs[1] = {&r};
    struct sy_sink_req q;
    json_object *j = encode_one(inst, recs, 1, &q);
    assert_string_equal(q.url, "http://langfuse.team.internal:3000/api/public/ingestion");
    /* base64("pk-team:sk-team") */
    assert_non_null(strstr(q.headers.p, "Authorization: Basic cGstdGVhbTpzay10ZWFt\r\n"));
    assert_string_equal(gs(j, "metadata.public_key"), "pk-team");
    json_object_put(j);
    sy_sink_req_free(&q);
    sy_sink_langfuse.close(inst);

    /* keys without a host: the environment's host, "langfuse_secret" accepted too */
    inst = open_ok("{\"langfuse_public_key\":\"pk-b\",\"langfuse_secret\":\"sk-b\"}");
    j = encode_one(inst, recs, 1, &q);
    assert_string_equal(q.url, "http://127.0.0.1:3000/api/public/ingestion");
    assert_non_null(strstr(q.headers.p, "Authorization: Basic cGstYjpzay1i\r\n"));
    json_object_put(j);
    sy_sink_req_free(&q);
    sy_sink_langfuse.close(inst);

    /* a tenant's own host never receives the environment's secret */
    char err[256] = "";
    struct sy_logconf lc = {0};
    assert_null(sy_sink_langfuse.open(&lc, "{\"langfuse_host\":\"https://evil.example\"}", err, sizeof err));
    assert_non_null(strstr(err, "langfuse_public_key"));
    assert_null(sy_sink_langfuse.open(
        &lc, "{\"langfuse_public_key\":\"pk\",\"langfuse_host\":\"https://evil.example\"}", err, sizeof err));
    assert_non_null(strstr(err, "langfuse_secret_key"));
}

static void open_refusals(void **st)
{
    (void)st;
    char err[256];
    struct sy_logconf lc = {0};
    unsetenv("LANGFUSE_PUBLIC_KEY");
    setenv("LANGFUSE_SECRET_KEY", "sk", 1);
    unsetenv("LANGFUSE_HOST");
    err[0] = 0;
    assert_null(sy_sink_langfuse.open(&lc, NULL, err, sizeof err));
    assert_non_null(strstr(err, "LANGFUSE_PUBLIC_KEY"));
    /* header injection through a key */
    setenv("LANGFUSE_PUBLIC_KEY", "pk\r\nX-Evil: 1", 1);
    assert_null(sy_sink_langfuse.open(&lc, NULL, err, sizeof err));
    /* the default host */
    setenv("LANGFUSE_PUBLIC_KEY", "pk", 1);
    void *inst = open_ok(NULL);
    struct sy_logrec r;
    rec_init(&r, PAYLOAD_OK);
    struct sy_logrec *recs[1] = {&r};
    struct sy_sink_req q;
    json_object *j = encode_one(inst, recs, 1, &q);
    assert_string_equal(q.url, "https://cloud.langfuse.com/api/public/ingestion");
    json_object_put(j);
    sy_sink_req_free(&q);
    sy_sink_langfuse.close(inst);
    /* release and environment */
    setenv("LANGFUSE_RELEASE", "r-1", 1);
    setenv("LANGFUSE_TRACING_ENVIRONMENT", "staging", 1);
    inst = open_ok(NULL);
    j = encode_one(inst, recs, 1, &q);
    assert_string_equal(gs(j, "batch.0.body.release"), "r-1");
    assert_string_equal(gs(j, "batch.0.body.environment"), "staging");
    assert_string_equal(gs(j, "batch.1.body.environment"), "staging");
    json_object_put(j);
    sy_sink_req_free(&q);
    sy_sink_langfuse.close(inst);
    setenv("LANGFUSE_TRACING_ENVIRONMENT", "langfuse-internal", 1); /* refused by the SDK's pattern */
    inst = open_ok(NULL);
    j = encode_one(inst, recs, 1, &q);
    assert_null(get(j, "batch.0.body.environment"));
    json_object_put(j);
    sy_sink_req_free(&q);
    sy_sink_langfuse.close(inst);
    unsetenv("LANGFUSE_RELEASE");
    unsetenv("LANGFUSE_TRACING_ENVIRONMENT");
}

/* A payload whose messages hold one text of n bytes. */
static char *big_payload(size_t n)
{
    char *p = malloc(n + 512);
    int o =
        sprintf(p, "{\"call_type\":\"acompletion\",\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"");
    memset(p + o, 'x', n);
    o += (int)n;
    sprintf(p + o, "\"}],\"response\":{\"id\":\"r\",\"choices\":[{\"message\":{\"role\":\"assistant\","
                   "\"content\":\"ok\"}}]},\"metadata\":{}}");
    return p;
}

static void size_limits(void **st)
{
    (void)st;
    set_env();
    void *inst = open_ok(NULL);
    /* one event above 1 MB: its input is replaced by the SDK's marker */
    char *p = big_payload(1200000);
    struct sy_logrec r;
    rec_init(&r, p);
    struct sy_logrec *recs[8] = {&r};
    struct sy_sink_req q;
    json_object *j = encode_one(inst, recs, 1, &q);
    assert_string_equal(gs(j, "batch.1.body.input"), "<truncated due to size exceeding limit>");
    assert_string_equal(gs(j, "batch.1.body.output.content"), "ok");
    assert_true(q.body.len < 2100000);
    json_object_put(j);
    sy_sink_req_free(&q);
    free(p);

    /* eight records of ~600 kB each: several requests, none above 2.5 MB, every event once */
    p = big_payload(300000);
    struct sy_logrec rs[8];
    for (int i = 0; i < 8; i++) {
        rec_init(&rs[i], p);
        rs[i].seq = (uint64_t)i;
        recs[i] = &rs[i];
    }
    struct sy_sink_req out[SY_SINK_MAX_REQS];
    memset(out, 0, sizeof out);
    size_t nout = 0, events = 0;
    assert_int_equal(sy_sink_langfuse.encode(inst, recs, 8, out, &nout), 0);
    assert_true(nout > 1 && nout <= SY_SINK_MAX_REQS);
    for (size_t i = 0; i < nout; i++) {
        assert_true(out[i].body.len <= 2500000 + 4096);
        json_object *b = json_tokener_parse(out[i].body.p);
        assert_non_null(b);
        size_t k = json_object_array_length(get(b, "batch"));
        assert_int_equal(json_object_get_int(get(b, "metadata.batch_size")), (int)k);
        events += k;
        json_object_put(b);
        sy_sink_req_free(&out[i]);
    }
    assert_int_equal(events, 16);
    free(p);

    /* a record without a payload still becomes its two events (from the record) */
    struct sy_logrec e;
    rec_init(&e, "");
    e.payload = NULL;
    e.payload_len = 0;
    recs[0] = &e;
    j = encode_one(inst, recs, 1, &q);
    assert_string_equal(gs(j, "batch.1.body.model"), "gpt-4o");
    assert_string_equal(gs(j, "batch.1.body.name"), "litellm:ci-key");
    json_object_put(j);
    sy_sink_req_free(&q);

    /* a prepared message for another sink is not ours: nothing to send */
    struct sy_logrec raw;
    memset(&raw, 0, sizeof raw);
    raw.flags = SY_LOGREC_RAW;
    recs[0] = &raw;
    nout = 7;
    assert_int_equal(sy_sink_langfuse.encode(inst, recs, 1, out, &nout), 0);
    assert_int_equal(nout, 0);
    sy_sink_langfuse.close(inst);
}

static void verdicts(void **st)
{
    (void)st;
    set_env();
    void *inst = open_ok(NULL);
    int (*v)(void *, int, const char *, size_t) = sy_sink_langfuse.verdict;
#define V(status, body) v(inst, (status), (body), strlen(body))
    assert_int_equal(V(200, ""), SY_SINK_SENT);
    assert_int_equal(V(207, "{\"successes\":[{\"id\":\"a\",\"status\":201}],\"errors\":[]}"), SY_SINK_SENT);
    /* some refused: the others are stored, the batch is done */
    assert_int_equal(V(207, "{\"successes\":[{\"id\":\"a\",\"status\":201}],\"errors\":[{\"id\":\"b\",\"status\":"
                            "400,\"message\":\"Invalid request data\"}]}"),
                     SY_SINK_SENT);
    /* all refused: dropped (4xx) or retried (5xx) */
    assert_int_equal(V(207, "{\"successes\":[],\"errors\":[{\"id\":\"b\",\"status\":400}]}"), SY_SINK_DROP);
    assert_int_equal(V(207, "{\"successes\":[],\"errors\":[{\"id\":\"b\",\"status\":500}]}"), SY_SINK_RETRY);
    assert_int_equal(V(207, "not json"), SY_SINK_SENT);
    assert_int_equal(V(207, "{\"errors\":{\"x\":1}}"), SY_SINK_SENT);
    assert_int_equal(V(401, "{\"message\":\"Invalid credentials\"}"), SY_SINK_DROP);
    assert_int_equal(V(403, ""), SY_SINK_DROP);
    assert_int_equal(V(400, ""), SY_SINK_DROP);
    assert_int_equal(V(429, ""), SY_SINK_RETRY);
    assert_int_equal(V(503, ""), SY_SINK_RETRY);
    assert_int_equal(V(0, ""), SY_SINK_RETRY);
    assert_int_equal(v(inst, 207, NULL, 0), SY_SINK_SENT);
    /* an answer cut by the engine's cap: not JSON, still sent */
    assert_int_equal(V(207, "{\"successes\":[],\"errors\":[{\"id\":\"b\",\"status\":400,\"message\":\"In"),
                     SY_SINK_SENT);
    /* a message with control characters does not reach the log raw */
    assert_int_equal(V(207, "{\"successes\":[{\"id\":\"a\"}],\"errors\":[{\"message\":\"x\\ny\"}]}"), SY_SINK_SENT);
#undef V
    sy_sink_langfuse.close(inst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(success_record),  cmocka_unit_test(same_record_same_bytes), cmocka_unit_test(failure_record),
        cmocka_unit_test(redacted_record), cmocka_unit_test(metadata_controls),      cmocka_unit_test(other_call_types),
        cmocka_unit_test(tenant_keys),     cmocka_unit_test(open_refusals),          cmocka_unit_test(size_limits),
        cmocka_unit_test(verdicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
