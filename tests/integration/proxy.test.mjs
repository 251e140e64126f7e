// proxy.test.mjs - pass-through to the mock upstream: OpenAI, Azure, hosted_vllm,
// streaming, upstream faults and retries, auth, limits, reload and drain.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { assertErrorShape, chatBody, postJSON, rawRequest, startGateway, startMock } from '../lib/harness.mjs';

let mock, gw;
const KEY = 'sk-test-master-1234';

function config(mockBase) {
  return `
model_list:
  - model_name: gpt-4o
    litellm_params:
      model: openai/gpt-4o-2024-08-06
      api_base: os.environ/MOCK_BASE
      api_key: os.environ/UPSTREAM_KEY
  - model_name: azure-gpt
    litellm_params:
      model: azure/my-deployment
      api_base: ${mockBase.replace('/v1', '')}
      api_key: azure-key-1
      api_version: "2024-10-21"
  - model_name: vllm-llama
    litellm_params:
      model: hosted_vllm/meta-llama/Llama-3.1-8B-Instruct
      api_base: ${mockBase}
  - model_name: embed
    litellm_params:
      model: openai/text-embedding-3-small
      api_base: ${mockBase}
      api_key: sk-up
    model_info: {mode: embedding}
  - model_name: flaky
    litellm_params:
      model: openai/bad@status=503
      api_base: ${mockBase}
  - model_name: flaky
    litellm_params:
      model: openai/good
      api_base: ${mockBase}
  - model_name: always-429
    litellm_params:
      model: openai/x@status=429,retry_after=0
      api_base: ${mockBase}
  - model_name: dead
    litellm_params:
      model: openai/gpt-4o
      api_base: http://127.0.0.1:9/v1
  - model_name: slow
    litellm_params:
      model: openai/gpt-4o@delay_ms=3000
      api_base: ${mockBase}
      timeout: 0.3
  - model_name: canned
    litellm_params:
      model: openai/whatever
      mock_response: "canned answer"
  - model_name: claude
    litellm_params:
      model: sagemaker/claude-3-5-sonnet
      api_key: x
litellm_settings:
  num_retries: 1
  callbacks: ["prometheus"]
  require_auth_for_metrics_endpoint: true
general_settings:
  master_key: ${KEY}
  max_request_size_mb: 0.05
  switchyard_header_timeout_s: 1
`;
}

const auth = { authorization: `Bearer ${KEY}` };

before(async () => {
  mock = await startMock();
  gw = await startGateway(config(mock.base), { env: { MOCK_BASE: mock.base, UPSTREAM_KEY: 'sk-upstream-xyz' } });
});
after(async () => { await gw.stop(); await mock.stop(); });

test('auth: missing and wrong keys get 401; every LiteLLM header works', async () => {
  const none = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'));
  assertErrorShape(assert, none, 401);
  assert.equal(none.json.error.type, 'auth_error');
  assertErrorShape(assert, await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'), { authorization: 'Bearer sk-wrong' }), 401);
  for (const h of [{ authorization: `Bearer ${KEY}` }, { 'x-litellm-api-key': KEY }, { 'x-api-key': KEY }, { 'api-key': KEY }]) {
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'), h);
    assert.equal(r.status, 200, `${JSON.stringify(h)}: ${r.text}`);
  }
  assert.equal((await fetch(`${gw.url}/v1/models`)).status, 401);
  assert.equal((await fetch(`${gw.url}/health/liveliness`)).status, 200, 'public route');
  const m = await fetch(`${gw.url}/metrics`);
  assert.equal(m.status, 401, 'metrics auth stage is on');
  assert.equal((await fetch(`${gw.url}/metrics`, { headers: auth })).status, 200);
});

test('openai pass-through: model replaced, key sent, body unchanged, the answer names the requested model', async () => {
  await mock.reset();
  const body = chatBody('gpt-4o', { temperature: 0.2, user: 'u1', extra_field: { a: [1, 2] } });
  const r = await postJSON(`${gw.url}/v1/chat/completions`, body, auth);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.object, 'chat.completion');
  assert.equal(r.json.model, 'gpt-4o'); // LiteLLM restamps the answer's model to the one asked for
  assert.equal(r.headers.get('x-litellm-model-group'), 'gpt-4o');
  const [seen] = await mock.requests();
  assert.equal(seen.path, '/v1/chat/completions');
  assert.equal(seen.headers.authorization, 'Bearer sk-upstream-xyz');
  const sent = JSON.parse(seen.body);
  assert.deepEqual(sent, { ...body, model: 'gpt-4o-2024-08-06' });
});

test('azure: deployment URL, api-version and api-key header', async () => {
  await mock.reset();
  const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('azure-gpt'), auth);
  assert.equal(r.status, 200, r.text);
  const [seen] = await mock.requests();
  assert.equal(seen.path, '/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21');
  assert.equal(seen.headers['api-key'], 'azure-key-1');
});

test('azure-style client route /openai/deployments/{model}/chat/completions', async () => {
  await mock.reset();
  const r = await postJSON(`${gw.url}/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01`,
    { messages: [{ role: 'user', content: 'hi' }] }, auth);
  assert.equal(r.status, 200, r.text);
  const [seen] = await mock.requests();
  assert.equal(JSON.parse(seen.body).model, 'gpt-4o-2024-08-06');
});

test('hosted_vllm: default fake key, streaming pass-through with usage', async () => {
  await mock.reset();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify(chatBody('vllm-llama', { stream: true, stream_options: { include_usage: true }, mock: { chunks: 5 } })),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /text\/event-stream/);
  const text = await res.text();
  assert.match(text, /data: \[DONE\]\n\n$/);
  const chunks = text.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
  assert.ok(chunks.length >= 5);
  assert.ok(chunks.at(-1).usage.total_tokens > 0);
  const [seen] = await mock.requests();
  assert.equal(seen.headers.authorization, 'Bearer fake-api-key');
  assert.equal(JSON.parse(seen.body).model, 'meta-llama/Llama-3.1-8B-Instruct');
});

test('embeddings pass-through', async () => {
  const r = await postJSON(`${gw.url}/v1/embeddings`, { model: 'embed', input: 'hello world' }, auth);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.data[0].object, 'embedding');
  assert.ok(r.json.usage.prompt_tokens > 0);
});

test('a failing deployment is retried on the other one of its group', async () => {
  for (let i = 0; i < 6; i++) {
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('flaky'), auth);
    assert.equal(r.status, 200, r.text);
  }
});

test('upstream 429 keeps LiteLLM error shape, status and retry-after', async () => {
  const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('always-429'), auth);
  assertErrorShape(assert, r, 429);
  assert.match(r.json.error.message, /^litellm\.RateLimitError: RateLimitError: OpenAIException - /);
  assert.equal(r.headers.get('x-litellm-attempted-retries'), '1');
});

test('upstream status from a body directive: 400 is not retried', async () => {
  await mock.reset();
  const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o', { mock: { status: 400, error_message: 'bad thing' } }), auth);
  assertErrorShape(assert, r, 400);
  assert.match(r.json.error.message, /bad thing/);
  assert.equal((await mock.requests()).length, 1);
});

test('connection refused upstream -> 500 APIConnectionError', async () => {
  const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('dead'), auth);
  assertErrorShape(assert, r, 500);
  assert.match(r.json.error.message, /APIConnectionError/);
});

test('upstream reset mid-stream becomes an SSE error frame, then [DONE]', async () => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify(chatBody('gpt-4o', { stream: true, mock: { chunks: 10, reset_after_chunks: 3 } })),
  });
  assert.equal(res.status, 200);
  const text = await res.text();
  const events = text.split('\n\n').filter(Boolean);
  assert.equal(events.at(-1), 'data: [DONE]', text);
  const last = JSON.parse(events.at(-2).slice(6));
  assert.ok(last.error, text);
  assert.match(last.error.message, /APIConnectionError/);
});

test('upstream slower than the deployment timeout -> 408 Timeout', async () => {
  const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('slow'), auth);
  assertErrorShape(assert, r, 408);
  assert.match(r.json.error.message, /^litellm\.Timeout/);
});

test('mock_response deployment answers in-process', async () => {
  const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('canned'), auth);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.choices[0].message.content, 'canned answer');
});

test('unsupported provider is a clear 400, not a crash', async () => {
  const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('claude'), auth);
  assertErrorShape(assert, r, 400);
  assert.match(r.json.error.message, /sagemaker/);
});

test('body over max_request_size_mb gets 413', async () => {
  const big = chatBody('gpt-4o', { messages: [{ role: 'user', content: 'x'.repeat(100 * 1024) }] });
  assertErrorShape(assert, await postJSON(`${gw.url}/v1/chat/completions`, big, auth), 413);
});

test('slow headers get 408 and the connection closes', async () => {
  const r = await rawRequest(gw.port, null, { chunks: ['GET /v1/models HTTP/1.1\r\n', 'Host: x\r\n'], delayMs: 100, timeoutMs: 5000 });
  assert.match(r.data, /^HTTP\/1\.1 408/);
  assert.equal(r.timedOut, false);
});

test('a stream event reaches the client while the upstream is still sending', async () => {
  const stats = async () => (await fetch(`${mock.url}/__mock/stats`)).json();
  const before = await stats();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify(chatBody('gpt-4o', { stream: true, mock: { chunks: 4, chunk_delay_ms: 400 } })),
  });
  assert.equal(res.status, 200);
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let seen = '';
  while (!seen.includes('"delta":{"content"')) {
    const { value, done } = await reader.read();
    assert.equal(done, false, 'the stream ended before its first content event');
    seen += dec.decode(value, { stream: true });
  }
  // the first event was forwarded on its own: the mock has not finished this stream yet
  const mid = await stats();
  assert.equal(mid.streams_started, before.streams_started + 1);
  assert.equal(mid.streams_completed, before.streams_completed);
  while (!(await reader.read()).done);
  let end = mid;
  for (let i = 0; i < 40 && end.streams_completed === before.streams_completed; i++) {
    await new Promise((r) => setTimeout(r, 50));
    end = await stats();
  }
  assert.equal(end.streams_completed, before.streams_completed + 1);
});

test('a client that disconnects mid-stream does not hurt the gateway', async () => {
  const ac = new AbortController();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...auth }, signal: ac.signal,
    body: JSON.stringify(chatBody('gpt-4o', { stream: true, mock: { chunks: 200, chunk_delay_ms: 20 } })),
  });
  const reader = res.body.getReader();
  await reader.read();
  ac.abort();
  let m = '';
  for (let i = 0; i < 60 && !/litellm_in_flight_requests 0/.test(m); i++) {
    await new Promise((r) => setTimeout(r, 50));
    m = await (await fetch(`${gw.url}/metrics`, { headers: auth })).text();
  }
  assert.match(m, /litellm_in_flight_requests 0/);
  const ok = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'), auth);
  assert.equal(ok.status, 200);
});

test('stream without upstream usage: tokens counted by the tokenizer', async () => {
  const before = await (await fetch(`${gw.url}/metrics`, { headers: auth })).text();
  const read = (t) => Number((t.match(/litellm_output_tokens_metric_total\{[^}]*model="meta-llama\/Llama-3.1-8B-Instruct"[^}]*\} ([0-9.e+]+)/) || [0, 0])[1]);
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify(chatBody('vllm-llama', { stream: true, mock: { content: 'one two three four five' } })),
  });
  const text = await res.text();
  assert.ok(!text.includes('"usage":{'), 'upstream sent no usage');
  const after = await (await fetch(`${gw.url}/metrics`, { headers: auth })).text();
  assert.equal(read(after) - read(before), 5, 'five words, five tokens');
});

test('metrics label requests with the sha256 of the key, as LiteLLM', async () => {
  const { createHash } = await import('node:crypto');
  const h = createHash('sha256').update(KEY).digest('hex');
  const m = await (await fetch(`${gw.url}/metrics`, { headers: auth })).text();
  assert.ok(m.includes(`hashed_api_key="${h}"`));
});

test('token counter endpoint in LiteLLM shape', async () => {
  const r = await postJSON(`${gw.url}/utils/token_counter`, { model: 'gpt-4o', messages: [{ role: 'user', content: 'hello world' }] }, auth);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.total_tokens, 9);
  assert.equal(r.json.request_model, 'gpt-4o');
  assert.equal(r.json.model_used, 'gpt-4o-2024-08-06');
  assert.equal(r.json.tokenizer_type, 'openai_tokenizer');
  const ids = await postJSON(`${gw.url}/utils/token_counter`, { model: 'gpt-4o', prompt: 'hello world', return_token_ids: true }, auth);
  assert.deepEqual(ids.json.token_ids, [24912, 2375]);
  assertErrorShape(assert, await postJSON(`${gw.url}/utils/token_counter`, '{"model":', auth), 400);
});

test('SIGHUP reloads the config; a broken config keeps the old one', async () => {
  const orig = fs.readFileSync(gw.configPath, 'utf8');
  fs.writeFileSync(gw.configPath, orig.replace('model_name: canned', 'model_name: canned2'));
  gw.proc.kill('SIGHUP');
  let ids = [];
  for (let i = 0; i < 50 && !ids.includes('canned2'); i++) {
    await new Promise((r) => setTimeout(r, 50));
    ids = (await (await fetch(`${gw.url}/v1/models`, { headers: auth })).json()).data.map((m) => m.id);
  }
  assert.ok(ids.includes('canned2') && !ids.includes('canned'));
  fs.writeFileSync(gw.configPath, 'model_list: [ {model_name: x, litellm_params: {rpm: notanumber');
  gw.proc.kill('SIGHUP');
  for (let i = 0; i < 60 && !/reload failed/.test(gw.log()); i++) await new Promise((r) => setTimeout(r, 50));
  assert.match(gw.log(), /reload failed/);
  ids = (await (await fetch(`${gw.url}/v1/models`, { headers: auth })).json()).data.map((m) => m.id);
  assert.ok(ids.includes('canned2'));
  fs.writeFileSync(gw.configPath, orig);
});

test('SIGTERM lets an in-flight request finish, then exits 0', async () => {
  const slow = postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o', { mock: { delay_ms: 700 } }), auth);
  await new Promise((r) => setTimeout(r, 200));
  const code = gw.stop('SIGTERM');
  const r = await slow;
  assert.equal(r.status, 200, r.text);
  assert.equal(await code, 0);
});
