// token-counter.test.mjs - POST /utils/token_counter on the real binary:
// a large count does not stall the worker's loop (another connection is
// answered while it runs, asserted as an ordering, never as a timing), a
// client leaving mid-count does not hurt the gateway, tools and tool_choice
// are counted as LiteLLM's token_counter counts them, and bad input gets a
// 400 in OpenAI's error shape. One worker, so every request shares one loop.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { assertErrorShape, postJSON, startGateway } from '../lib/harness.mjs';

let gw;
before(async () => { gw = await startGateway(null, { workers: 1 }); });
after(async () => { assert.equal(await gw.stop(), 0, 'SIGTERM exits 0'); });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* Deterministic varied Han/kana text of about `bytes` UTF-8 bytes: random
 * characters, so most pieces go through full BPE (slow on purpose). */
function cjk(bytes) {
  let s = 0x2545f491;
  const out = [];
  for (let n = 0; n < bytes; n += 3) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const k = s >>> 8;
    out.push(String.fromCharCode(k % 7 === 0 ? 0x3041 + (k % 86) : 0x4e00 + (k % 20992)));
  }
  return out.join('');
}

function countRequestBytes(body) {
  const b = Buffer.from(JSON.stringify(body));
  return Buffer.concat([
    Buffer.from(`POST /utils/token_counter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${b.length}\r\n\r\n`),
    b,
  ]);
}

/* Open a connection, write all of req but its last byte, let the gateway read
 * it (idle pause), then send the last byte: the count starts at a known point.
 * Resolves { sock, response } where response settles with the raw reply. */
async function startCount(req) {
  const sock = net.connect(gw.port, '127.0.0.1');
  await new Promise((r, j) => { sock.once('connect', r); sock.once('error', j); });
  let data = Buffer.alloc(0);
  const response = new Promise((resolve) => {
    sock.on('data', (d) => {
      data = Buffer.concat([data, d]);
      const m = /content-length: *(\d+)/i.exec(data.toString('latin1'));
      const head = data.indexOf('\r\n\r\n');
      if (m && head >= 0 && data.length >= head + 4 + Number(m[1])) resolve(data.toString('utf8'));
    });
    sock.on('close', () => resolve(data.toString('utf8')));
    sock.on('error', () => {});
  });
  await new Promise((r) => sock.write(req.subarray(0, req.length - 1), r));
  await sleep(300); // sequencing aid only: the gateway drains the socket buffers meanwhile
  await new Promise((r) => sock.write(req.subarray(req.length - 1), r));
  return { sock, response };
}

test('a large count does not stall the loop: liveliness on another connection is answered first', async () => {
  const req = countRequestBytes({ model: 'gpt-4', messages: [{ role: 'user', content: cjk(8 << 20) }] });
  const order = [];
  const { response } = await startCount(req);
  const counted = response.then((t) => { order.push('count'); return t; });
  await sleep(20); // let the last byte reach the gateway before the probe
  const probe = fetch(`${gw.url}/health/liveliness`).then(async (r) => {
    order.push('liveliness');
    assert.equal(r.status, 200);
    assert.equal(await r.json(), "I'm alive!");
  });
  const [text] = await Promise.all([counted, probe]);
  assert.match(text, /^HTTP\/1\.1 200/);
  const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
  assert.ok(body.total_tokens > 1_000_000, text.slice(0, 300));
  assert.deepEqual(order, ['liveliness', 'count'], 'the probe must be answered while the count runs');
});

test('a client that disconnects mid-count leaves the gateway serving', async () => {
  const req = countRequestBytes({ model: 'gpt-4o', messages: [{ role: 'user', content: cjk(1 << 20) }] }); // above the offload threshold; small so ASan drains fast
  for (let i = 0; i < 3; i++) {
    const { sock } = await startCount(req);
    await sleep(10);
    sock.destroy();
  }
  const live = await fetch(`${gw.url}/health/liveliness`);
  assert.equal(live.status, 200);
  const r = await postJSON(`${gw.url}/utils/token_counter`, { model: 'gpt-4o', messages: [{ role: 'user', content: 'hello world' }] });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.total_tokens, 9);
  // and a large one still completes after the aborted ones
  const big = await postJSON(`${gw.url}/utils/token_counter`, { model: 'gpt-4o', prompt: 'hello' + ' hello'.repeat(19999) });
  assert.equal(big.status, 200, big.text);
  assert.equal(big.json.total_tokens, 20000);
});

const weatherTools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Get the current weather in a city — °C or °F',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', description: 'City name, e.g. Zürich' },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
          days: { type: 'integer' },
          opts: { type: 'object', properties: { hourly: { type: 'boolean' }, tags: { type: 'array', items: { type: 'string' } } } },
        },
        required: ['city'],
      },
    },
  },
  { type: 'function', function: { name: 'ping' } },
];

test('tools and tool_choice are counted as LiteLLM token_counter counts them', async () => {
  const messages = [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Weather in Paris?' }];
  const base = await postJSON(`${gw.url}/utils/token_counter`, { model: 'gpt-4o', messages });
  assert.equal(base.status, 200, base.text);
  const withTools = await postJSON(`${gw.url}/utils/token_counter`, { model: 'gpt-4o', messages, tools: weatherTools });
  assert.equal(withTools.status, 200, withTools.text);
  // Reference (tests/tokenizer/litellm-ref.mjs, o200k_base): the rendering
  // of weatherTools is 80 tokens; + 9, - 4 with a system message.
  assert.equal(withTools.json.total_tokens - base.json.total_tokens, 80 + 9 - 4);
  const named = await postJSON(`${gw.url}/utils/token_counter`, {
    model: 'gpt-4o', messages, tools: weatherTools, tool_choice: { type: 'function', function: { name: 'get_weather' } },
  });
  assert.equal(named.json.total_tokens - withTools.json.total_tokens, 7 + 2); // "get_weather" is 2 tokens
  const none = await postJSON(`${gw.url}/utils/token_counter`, { model: 'gpt-4o', messages, tools: weatherTools, tool_choice: 'none' });
  assert.equal(none.json.total_tokens - withTools.json.total_tokens, 1);
  const auto = await postJSON(`${gw.url}/utils/token_counter`, { model: 'gpt-4o', messages, tools: weatherTools, tool_choice: 'auto' });
  assert.equal(auto.json.total_tokens, withTools.json.total_tokens);
  const empty = await postJSON(`${gw.url}/utils/token_counter`, { model: 'gpt-4o', messages, tools: [] });
  assert.equal(empty.json.total_tokens, base.json.total_tokens);
});

test('bad input gets 400 in OpenAI error shape', async () => {
  const url = `${gw.url}/utils/token_counter`;
  for (const body of [
    '{"model":',
    '[1,2]',
    '"just a string"',
    '{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],}',
    { model: 5, messages: [{ role: 'user', content: 'hi' }] },
    { model: 'gpt-4o' },
    { model: 'gpt-4o', messages: 'hello' },
    { model: 'gpt-4o', messages: [5] },
    { model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'bogus' }] }] },
    { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], tools: 'x' },
    { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], tool_choice: { type: 'function' } },
    { model: 'gpt-4o', prompt: 5 },
  ]) {
    const r = await postJSON(url, body);
    assertErrorShape(assert, r, 400);
    assert.equal(r.json.error.type, 'invalid_request_error', r.text);
  }
  const live = await fetch(`${gw.url}/health/liveliness`);
  assert.equal(live.status, 200);
});
