// stream-echo.test.mjs - the model echo on a pass-through chat stream (gateway/ustream.c): every
// chunk the client sees names the model it asked for, and every other byte is the upstream's,
// whether the chunks arrive one per read, many per read (past the span list: the joining path),
// split mid-line, or with a usage chunk.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { chatBody, startGateway, startMock } from '../lib/harness.mjs';

let mock, gw;
before(async () => {
  mock = await startMock();
  gw = await startGateway(`
model_list:
  - model_name: echo-alias
    litellm_params: {model: openai/gpt-4o-mini, api_base: "${mock.base}", api_key: sk-x}
`);
});
after(async () => { await gw.stop(); await mock.stop(); });

const post = async (url, body) => {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-x' },
    body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
};
const norm = (t) => t.replace(/"id":"[^"]*"/g, '"id":"X"').replace(/"created":\d+/g, '"created":0');

for (const [name, extra] of [
  ['one chunk per read', {}],
  ['many chunks per read', { mock: { chunks: 200 } }],
  ['chunks split mid-line', { mock: { chunks: 12, trickle_bytes_per_s: 40000 } }],
  ['with a usage chunk', { stream_options: { include_usage: true }, mock: { chunks: 40 } }],
]) {
  test(`model echoed byte for byte: ${name}`, async () => {
    const direct = await post(`${mock.url}/v1/chat/completions`, chatBody('gpt-4o-mini', { stream: true, ...extra }));
    const r = await post(`${gw.url}/v1/chat/completions`, chatBody('echo-alias', { stream: true, ...extra }));
    assert.equal(direct.status, 200, direct.text);
    assert.equal(r.status, 200, r.text);
    const want = norm(direct.text).replaceAll('"model":"gpt-4o-mini"', '"model":"echo-alias"');
    assert.ok(want.includes('"model":"echo-alias"') && want.includes('data: [DONE]'), want.slice(0, 300));
    assert.equal(norm(r.text), want);
  });
}
