// upstream-hardening.test.mjs - limits of the upstream path (issue 6, item 5/6):
// a non-stream response trickling in is cut by `timeout` (a total deadline),
// an upstream error body over 1 MB is truncated into valid LiteLLM error JSON,
// and a stream failing mid-way ends with the SSE error frame and [DONE].
// No timings are asserted: only outcomes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertErrorShape, chatBody, postJSON, startGateway, startMock } from '../lib/harness.mjs';

let mock, gw;

before(async () => {
  mock = await startMock();
  const base = `${mock.url}/v1`;
  gw = await startGateway(`
model_list:
  - model_name: trickle
    litellm_params:
      model: openai/gpt-4o@trickle_bytes_per_s=20
      api_base: ${base}
      timeout: 1
  - model_name: gpt-4o
    litellm_params:
      model: openai/gpt-4o
      api_base: ${base}
router_settings: {num_retries: 0}
`);
});

after(async () => {
  await gw?.stop();
  await mock?.stop();
});

test('a non-stream body trickling at 20 B/s is cut by timeout (408)', async () => {
  const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('trickle', { mock: { body_bytes: 4000 } }));
  assertErrorShape(assert, r, 408);
  assert.match(r.json.error.message, /Timeout/);
});

test('a 2 MB upstream error body reaches the client as valid, truncated error JSON', async () => {
  const big = 'x'.repeat(2 * 1024 * 1024);
  const r = await postJSON(`${gw.url}/v1/chat/completions`,
    chatBody('gpt-4o', { mock: { status: 400, error_message: big } }));
  assertErrorShape(assert, r, 400); // r.json parsed: the body is valid JSON
  assert.match(r.json.error.message, /truncated/);
  assert.ok(r.text.length < 64 * 1024, `body is ${r.text.length} bytes`);
});

test('a stream failing mid-way sends the error frame, then [DONE]', async () => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chatBody('gpt-4o', { stream: true, mock: { chunks: 10, reset_after_chunks: 3 } })),
  });
  assert.equal(res.status, 200);
  const events = (await res.text()).split('\n\n').filter(Boolean);
  assert.equal(events.at(-1), 'data: [DONE]');
  assert.ok(JSON.parse(events.at(-2).slice(6)).error);
});

test("an upstream error's code is kept as openai_code; code stays the status as LiteLLM", async () => {
  const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o', {
    mock: { status: 400, error_code: 'context_length_exceeded',
      error_message: "This model's maximum context length is 128000 tokens." },
  }));
  assertErrorShape(assert, r, 400);
  assert.equal(r.json.error.code, '400');
  assert.equal(r.json.error.openai_code, 'context_length_exceeded');
  assert.match(r.json.error.message, /ContextWindowExceededError/);
});
