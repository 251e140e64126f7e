// filter-probe.test.mjs - a dummy response filter added from one file (tests/unit/filters/probe.c,
// whose filter list replaces src/filters/list.c in the switchyard_probe binary) runs in the real
// gateway: on every chat answer it sees the head once, every byte the client gets exactly once,
// and the end once; an upstream reset mid-stream and a client that leaves reach its end as errors.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const mainBin = process.env.SWITCHYARD_BIN || path.join(root, 'build/switchyard');
process.env.SWITCHYARD_BIN = path.join(path.dirname(mainBin), 'tests/unit/filters/switchyard_probe');
const { chatBody, startGateway, startMock } = await import('../lib/harness.mjs');

let mock, gw;
before(async () => {
  mock = await startMock();
  gw = await startGateway(`
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-x}
  - model_name: built-in
    litellm_params: {model: openai/gpt-4o, mock_response: "Hi from the mock."}
`);
});
after(async () => { await gw.stop(); await mock.stop(); });

const probes = () => [...gw.log().matchAll(/^filter-probe: call=(\S+) heads=(\d+) pieces=(\d+) bytes=(\d+) status=(\d+) err=(\d)$/gm)]
  .map((m) => ({ id: m[1], heads: +m[2], pieces: +m[3], bytes: +m[4], status: +m[5], err: +m[6] }));

/** The probe's line for the call that came after the first n lines (bounded wait). */
async function probeAfter(n) {
  for (let i = 0; i < 100; i++) {
    const p = probes();
    if (p.length > n) {
      assert.equal(p.length, n + 1, 'one end per call');
      return p[n];
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`no probe line after ${n}; log:\n${gw.log()}`);
}

async function post(body, { signal } = {}) {
  return fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body), signal });
}

test('a JSON answer is one piece: head, the body, end 200', async () => {
  const n = probes().length;
  const res = await post(chatBody('gpt-4o'));
  const body = Buffer.from(await res.arrayBuffer());
  assert.equal(res.status, 200);
  const p = await probeAfter(n);
  assert.deepEqual({ heads: p.heads, pieces: p.pieces, bytes: p.bytes, status: p.status, err: p.err },
    { heads: 1, pieces: 1, bytes: body.length, status: 200, err: 0 });
});

test('a stream: every byte the client gets, exactly once, then end 200', async () => {
  const n = probes().length;
  const res = await post(chatBody('gpt-4o', { stream: true, stream_options: { include_usage: true }, mock: { chunks: 12 } }));
  const body = Buffer.from(await res.arrayBuffer());
  assert.equal(res.status, 200);
  assert.match(body.toString(), /data: \[DONE\]/);
  const p = await probeAfter(n);
  assert.equal(p.heads, 1);
  assert.ok(p.pieces >= 1);
  assert.equal(p.bytes, body.length);
  assert.equal(p.status, 200);
  assert.equal(p.err, 0);
});

test('the built-in mock answers through the chain too', async () => {
  const n = probes().length;
  const res = await post(chatBody('built-in', { stream: true }));
  const body = Buffer.from(await res.arrayBuffer());
  assert.equal(res.status, 200);
  const p = await probeAfter(n);
  assert.deepEqual({ heads: p.heads, bytes: p.bytes, err: p.err }, { heads: 1, bytes: body.length, err: 0 });
});

test('an upstream reset mid-stream reaches the end as an error', async () => {
  const n = probes().length;
  const res = await post(chatBody('gpt-4o', { stream: true, mock: { chunks: 20, reset_after_chunks: 3 } }));
  const body = Buffer.from(await res.arrayBuffer());
  assert.equal(res.status, 200);
  assert.match(body.toString(), /"error"/);
  const p = await probeAfter(n);
  assert.equal(p.heads, 1);
  assert.equal(p.bytes, body.length, 'the error frame is a piece the client gets');
  assert.equal(p.err, 1);
  assert.ok(p.status >= 500, `status ${p.status}`);
});

test('a client that leaves mid-stream reaches the end as an error (499)', async () => {
  const n = probes().length;
  const ac = new AbortController();
  const res = await post(chatBody('gpt-4o', { stream: true, mock: { chunks: 40, chunk_delay_ms: 50 } }), { signal: ac.signal });
  const reader = res.body.getReader();
  await reader.read();
  ac.abort();
  await reader.read().catch(() => {});
  const p = await probeAfter(n);
  assert.equal(p.heads, 1);
  assert.equal(p.status, 499);
  assert.equal(p.err, 1);
});

test('a route without the probe does not run it', async () => {
  const n = probes().length;
  const res = await fetch(`${gw.url}/v1/models`);
  assert.equal(res.status, 200);
  await res.arrayBuffer();
  const res2 = await post(chatBody('gpt-4o'));
  await res2.arrayBuffer();
  const p = await probeAfter(n); // only the chat call ends with a probe line
  assert.equal(p.status, 200);
});
