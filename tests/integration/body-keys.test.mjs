// body-keys.test.mjs - one meaning for every body key (issue 6 item 2): the
// upstream must read `model` and `stream` as the gateway did. Escaped key names
// are decoded; a key the gateway reads twice, or a non-boolean `stream`, is
// refused with 400 and nothing reaches the upstream.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertErrorShape, postJSON, startGateway, startMock } from '../lib/harness.mjs';

let mock, gw;
const msgs = '"messages":[{"role":"user","content":"hi"}]';

before(async () => {
  mock = await startMock();
  gw = await startGateway(`
model_list:
  - model_name: gpt-4o
    litellm_params:
      model: openai/gpt-4o-2024-08-06
      api_base: ${mock.base}
      api_key: sk-up
  - model_name: other
    litellm_params:
      model: openai/secret-model
      api_base: ${mock.base}
      api_key: sk-up
`);
});
after(async () => { await gw?.stop(); await mock?.stop(); });

const chat = (body) => postJSON(`${gw.url}/v1/chat/completions`, body);

async function refused(body, param) {
  await mock.reset();
  const r = await chat(body);
  assertErrorShape(assert, r, 400);
  assert.equal(r.json.error.type, 'invalid_request_error');
  assert.equal(r.json.error.param, param, r.text);
  assert.equal((await mock.requests()).length, 0, 'nothing forwarded');
}

test('an escaped but single model key is routed and rewritten', async () => {
  await mock.reset();
  // The mock upstream's own scan does not decode key escapes (it answers 400
  // "you must provide a model parameter"), so only the forwarded bytes are
  // checked: a JSON reader sees the deployment's model, not the client's.
  const r = await chat(`{"mod\\u0065l":"gpt-4o",${msgs}}`);
  assert.notEqual(r.json?.error?.param, 'model', r.text);
  const reqs = await mock.requests();
  assert.equal(reqs.length, 1);
  assert.equal(JSON.parse(reqs[0].body).model, 'gpt-4o-2024-08-06');
});

test('a model key escaped to duplicate another is refused', async () => {
  await refused(`{"model":"gpt-4o",${msgs},"mod\\u0065l":"other"}`, 'model');
});

test('a plain duplicate model key is refused', async () => {
  await refused(`{"model":"gpt-4o",${msgs},"model":"other"}`, 'model');
});

test('a duplicate stream key is refused', async () => {
  await refused(`{"model":"gpt-4o",${msgs},"stream":false,"stream":true}`, 'stream');
});

test('stream as a string is refused', async () => {
  await refused(`{"model":"gpt-4o",${msgs},"stream":"true"}`, 'stream');
});

test('stream as a number is refused', async () => {
  await refused(`{"model":"gpt-4o",${msgs},"stream":1}`, 'stream');
});

test('stream null and false still work', async () => {
  for (const v of ['null', 'false']) {
    const r = await chat(`{"model":"gpt-4o",${msgs},"stream":${v}}`);
    assert.equal(r.status, 200, r.text);
  }
});
