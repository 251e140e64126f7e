// basic.test.mjs - the built-in default config: mock model, health, models, metrics, limits.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertErrorShape, chatBody, postJSON, rawRequest, startGateway } from '../lib/harness.mjs';

let gw;
before(async () => { gw = await startGateway(null); });
after(async () => { assert.equal(await gw.stop(), 0, 'SIGTERM exits 0'); });

test('chat completion from the built-in mock model', async () => {
  const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('mock-gpt'));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.object, 'chat.completion');
  assert.equal(r.json.choices[0].message.role, 'assistant');
  assert.ok(r.json.choices[0].message.content.length > 0);
  assert.ok(r.json.usage.prompt_tokens > 0);
  assert.ok(r.json.usage.completion_tokens > 0);
  assert.equal(r.json.usage.total_tokens, r.json.usage.prompt_tokens + r.json.usage.completion_tokens);
  assert.match(r.headers.get('x-litellm-call-id'), /^[0-9a-f-]{36}$/);
  assert.equal(r.headers.get('x-litellm-model-group'), 'mock-gpt');
  assert.ok(r.headers.get('x-litellm-model-id'));
  assert.ok(Number(r.headers.get('x-litellm-response-duration-ms')) >= 0);
  assert.ok(Number(r.headers.get('x-litellm-overhead-duration-ms')) >= 0);
});

test('prompt tokens follow LiteLLM token_counter (3 per message + 3 priming)', async () => {
  const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] };
  const r = await postJSON(`${gw.url}/chat/completions`, body);
  assert.equal(r.status, 200, r.text);
  // "user" (1) + "hello" (1) + 3 per message + 3 priming = 8
  assert.equal(r.json.usage.prompt_tokens, 8);
});

test('streaming chat from the mock ends with [DONE] and carries usage when asked', async () => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chatBody('mock-gpt', { stream: true, stream_options: { include_usage: true } })),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /text\/event-stream/);
  const text = await res.text();
  const events = text.split('\n\n').filter(Boolean);
  assert.equal(events.at(-1), 'data: [DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)));
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  assert.ok(chunks.some((c) => c.choices[0]?.finish_reason === 'stop'));
  const u = chunks.at(-1);
  assert.deepEqual(u.choices, []);
  assert.ok(u.usage.completion_tokens > 0);
  const content = chunks.map((c) => c.choices[0]?.delta?.content || '').join('');
  assert.ok(content.length > 10);
});

test('embeddings and legacy completions from the mock', async () => {
  const e = await postJSON(`${gw.url}/v1/embeddings`, { model: 'text-embedding-3-small', input: ['a', 'b'], dimensions: 8 });
  assert.equal(e.status, 200, e.text);
  assert.equal(e.json.data.length, 2);
  assert.equal(e.json.data[0].embedding.length, 8);
  const c = await postJSON(`${gw.url}/v1/completions`, { model: 'mock-gpt', prompt: 'Once upon' });
  assert.equal(c.status, 200, c.text);
  assert.equal(c.json.object, 'text_completion');
  assert.ok(c.json.choices[0].text.length > 0);
});

test('models, health and metrics', async () => {
  const m = await (await fetch(`${gw.url}/v1/models`)).json();
  assert.equal(m.object, 'list');
  assert.ok(m.data.some((x) => x.id === 'mock-gpt' && x.object === 'model'));
  const one = await fetch(`${gw.url}/v1/models/mock-gpt`);
  assert.equal(one.status, 200);
  assert.equal((await one.json()).id, 'mock-gpt');
  assertErrorShape(assert, await (async () => { const r = await fetch(`${gw.url}/v1/models/nope`); return { status: r.status, text: '', json: await r.json() }; })(), 404);
  const live = await fetch(`${gw.url}/health/liveliness`);
  assert.equal(await live.json(), "I'm alive!");
  assert.equal((await fetch(`${gw.url}/health/liveness`)).status, 200);
  const ready = await (await fetch(`${gw.url}/health/readiness`)).json();
  assert.equal(ready.status, 'healthy');
  await postJSON(`${gw.url}/v1/chat/completions`, chatBody('mock-gpt', { user: 'alice' }));
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  assert.match(metrics, /litellm_proxy_total_requests_metric_total\{end_user="alice"/);
  for (const name of ['litellm_proxy_total_requests_metric', 'litellm_requests_metric', 'litellm_request_total_latency_metric',
    'litellm_llm_api_latency_metric', 'litellm_overhead_latency_metric', 'litellm_input_tokens_metric',
    'litellm_output_tokens_metric', 'litellm_total_tokens_metric', 'litellm_in_flight_requests']) {
    assert.ok(metrics.includes(name), `metrics lack ${name}`);
  }
  assert.match(metrics, /litellm_proxy_total_requests_metric_total\{[^}]*requested_model="mock-gpt"[^}]*\} [1-9]/);
});

test('bad input gets OpenAI-style errors', async () => {
  assertErrorShape(assert, await postJSON(`${gw.url}/v1/chat/completions`, '{"model": "mock-gpt", "messages": ['), 400);
  assertErrorShape(assert, await postJSON(`${gw.url}/v1/chat/completions`, ''), 400);
  assertErrorShape(assert, await postJSON(`${gw.url}/v1/chat/completions`, '[1,2]'), 400);
  const missing = await postJSON(`${gw.url}/v1/chat/completions`, { messages: [] });
  assertErrorShape(assert, missing, 400);
  assert.match(missing.json.error.message, /model=None/);
  const unknown = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('no-such-model'));
  assertErrorShape(assert, unknown, 400);
  assert.match(unknown.json.error.message, /Invalid model name passed in model=no-such-model/);
  const nf = await postJSON(`${gw.url}/v1/nothing-here`, {});
  assertErrorShape(assert, nf, 404);
  // a 404 says so plainly and names the nearest route served
  const typo = await postJSON(`${gw.url}/v1/chat/completion`, {});
  assertErrorShape(assert, typo, 404);
  assert.equal(typo.json.error.message,
    'Route not found: POST /v1/chat/completion. The nearest route switchyard serves is POST /v1/chat/completions');
  const adm = await postJSON(`${gw.url}/key/generat`, {});
  assert.match(adm.json.error.message, /nearest route switchyard serves is POST \/key\/generate$/);
  const long = await postJSON(`${gw.url}/${'x'.repeat(5000)}`, {});
  assertErrorShape(assert, long, 404);
  const r405 = await fetch(`${gw.url}/v1/chat/completions`);
  assertErrorShape(assert, { status: r405.status, text: '', json: await r405.json() }, 405);
  // invalid UTF-8 inside a JSON string
  const bad = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: Buffer.concat([Buffer.from('{"model":"mock-gpt","messages":[{"role":"user","content":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}]}')]) });
  assert.equal(bad.status, 400);
});

test('pipelined requests are answered in order on one connection', async () => {
  const body = JSON.stringify(chatBody('mock-gpt'));
  const one = (id) => `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Id: ${id}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const last = 'GET /health/liveliness HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
  const r = await rawRequest(gw.port, one(1) + one(2) + 'GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n' + last);
  const statuses = [...r.data.matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => m[1]);
  assert.deepEqual(statuses, ['200', '200', '200', '200']);
  const idx = [r.data.indexOf('chat.completion'), r.data.lastIndexOf('chat.completion'), r.data.indexOf('"object":"list"'), r.data.indexOf("I'm alive!")];
  assert.ok(idx[0] < idx[1] && idx[1] < idx[2] && idx[2] < idx[3], 'in order');
});

test('chunked request bodies are accepted', async () => {
  const body = JSON.stringify(chatBody('mock-gpt'));
  const half = Math.floor(body.length / 2);
  const chunk = (s) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
  const req = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n` +
    chunk(body.slice(0, half)) + chunk(body.slice(half)) + '0\r\n\r\n';
  const r = await rawRequest(gw.port, req);
  assert.match(r.data, /^HTTP\/1\.1 200/);
  assert.match(r.data, /chat\.completion/);
});

test('malformed HTTP gets 400 and the connection is closed', async () => {
  const r = await rawRequest(gw.port, 'THIS IS NOT HTTP\r\n\r\n');
  assert.match(r.data, /^HTTP\/1\.1 400/);
  assert.match(r.data, /"code":"400"/);
  assert.equal(r.timedOut, false);
});

test('oversized headers get 431', async () => {
  const big = 'x'.repeat(70 * 1024);
  const r = await rawRequest(gw.port, `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`);
  assert.match(r.data, /^HTTP\/1\.1 431/);
  assert.match(r.data, /"code":"431"/);
});
