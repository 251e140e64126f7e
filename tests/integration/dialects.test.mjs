// dialects.test.mjs - a call's client dialect composed with a different kind of
// deployment on each attempt (gateway/xlate.c): a fallback from a translated or
// native attempt lands on an OpenAI-compatible deployment, and the answer must
// be in the client's dialect, read the way that deployment answers.
//
//   client      first attempt (529)            fallback
//   chat        anthropic/ (adapter)           openai/ (pass-through)
//   messages    anthropic/ (native)            openai/ (chat, translated back)
//   responses   anthropic/ (adapter)           openai/ (native Responses)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { startMock, startGateway, postJSON, chatBody } from '../lib/harness.mjs';

const KEY = 'sk-dialects-1';
const AUTH = { authorization: `Bearer ${KEY}` };
const SENTENCE = 'Hello! This is a deterministic reply from the mock upstream server, used to test and benchmark the gateway.';

let mock, gw;

before(async () => {
  mock = await startMock([]);
  gw = await startGateway(`
model_list:
  - model_name: claude-overloaded
    litellm_params: {model: "anthropic/claude-3-5-sonnet-20241022@status=529", api_base: "${mock.url}", api_key: sk-ant-test}
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-x}
router_settings:
  num_retries: 0
  fallbacks: [{"claude-overloaded": ["gpt-4o"]}]
general_settings:
  master_key: ${KEY}
`);
});
after(async () => { await gw?.stop(); await mock?.stop(); });

/** SSE text -> [{event, json}] (json null for [DONE]). */
function sse(text) {
  return text.split(/\n\n/).filter((b) => b.trim()).map((block) => {
    let event = null;
    let data = '';
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data += line.slice(6);
    }
    let json = null;
    try { json = JSON.parse(data); } catch {}
    return { event, data, json };
  });
}

async function logPaths() {
  return (await mock.requests()).map((q) => q.path);
}

test('chat: an adapter attempt, then a pass-through fallback answers as OpenAI (JSON and stream)', async () => {
  await mock.reset();
  const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('claude-overloaded'), AUTH);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.choices[0].message.content, SENTENCE);
  assert.equal(r.headers.get('x-litellm-attempted-fallbacks'), '1');
  assert.deepEqual(await logPaths(), ['/v1/messages', '/v1/chat/completions']);
  const s = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('claude-overloaded', { stream: true }), AUTH);
  assert.equal(s.status, 200, s.text);
  const ev = sse(s.text);
  assert.equal(ev.at(-1).data, '[DONE]');
  assert.equal(ev.filter((e) => e.json?.choices?.length).map((e) => e.json.choices[0].delta.content || '').join(''),
    SENTENCE);
});

test('messages: a native attempt, then an OpenAI-compatible fallback answers as Anthropic (JSON and stream)', async () => {
  const h = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' };
  const body = { model: 'claude-overloaded', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello.' }] };
  await mock.reset();
  const r = await postJSON(`${gw.url}/v1/messages`, body, h);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.type, 'message');
  assert.equal(r.json.model, 'claude-overloaded');
  assert.equal(r.json.content[0].text, SENTENCE);
  assert.deepEqual(await logPaths(), ['/v1/messages', '/v1/chat/completions']);
  const s = await postJSON(`${gw.url}/v1/messages`, { ...body, stream: true }, h);
  assert.equal(s.status, 200, s.text);
  const ev = sse(s.text);
  assert.equal(ev[0].event, 'message_start');
  assert.equal(ev.at(-1).event, 'message_stop');
  assert.equal(ev.filter((e) => e.event === 'content_block_delta').map((e) => e.json.delta.text).join(''), SENTENCE);
});

test('responses: an adapter attempt, then a native Responses fallback (ids encoded for the deployment)', async () => {
  await mock.reset();
  const body = { model: 'claude-overloaded', input: 'Say hello.', store: false };
  const r = await postJSON(`${gw.url}/v1/responses`, body, AUTH);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.object, 'response');
  assert.match(r.json.id, /^resp_/);
  const paths = await logPaths();
  assert.equal(paths[0], '/v1/messages');
  assert.equal(paths.at(-1), '/v1/responses');
  const s = await postJSON(`${gw.url}/v1/responses`, { ...body, stream: true }, AUTH);
  assert.equal(s.status, 200, s.text);
  const ev = sse(s.text);
  assert.ok(ev.some((e) => e.event === 'response.completed'), s.text.slice(0, 500));
});
