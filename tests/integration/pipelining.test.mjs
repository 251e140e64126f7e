// pipelining.test.mjs - pipelined proxied requests on one connection: large bodies behind one
// in flight are answered in order (read-side backpressure, never a reset), and a client that
// pipelines without reading its answers cannot make the gateway buffer without bound
// (write-side backpressure). No test asserts a timing: only outcomes, with bounded waits.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { chatBody, rawRequest, sleep, startGateway, startMock, until } from '../lib/harness.mjs';

let mock, gw;

before(async () => {
  mock = await startMock();
  gw = await startGateway(`
model_list:
  - model_name: fast
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-x}
  - model_name: mini
    litellm_params: {model: openai/gpt-4o-mini, api_base: "${mock.base}", api_key: sk-x}
  - model_name: slow
    litellm_params: {model: "openai/gpt-4o@delay_ms=50", api_base: "${mock.base}", api_key: sk-x}
`);
});
after(async () => { await gw.stop(); await mock.stop(); });

const rssKB = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${gw.proc.pid}/status`, 'utf8'))[1]);

function post(body, last) {
  const b = JSON.stringify(body);
  return `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(b)}\r\n${last ? 'Connection: close\r\n' : ''}\r\n${b}`;
}

/** Split a raw HTTP/1.1 response stream (Content-Length bodies) into [{status, json}]. */
function responses(raw) {
  const out = [];
  let i = 0;
  while (i < raw.length) {
    const he = raw.indexOf('\r\n\r\n', i);
    if (he < 0) break;
    const head = raw.slice(i, he);
    const st = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
    const cl = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
    assert.ok(Number.isFinite(cl), `a Content-Length in ${head.slice(0, 200)}`);
    const body = raw.slice(he + 4, he + 4 + cl);
    let json = null;
    try { json = JSON.parse(Buffer.from(body, 'latin1').toString()); } catch {}
    out.push({ status: st, json });
    i = he + 4 + cl;
  }
  return out;
}

async function pipelined(n, padBytes, modelOf) {
  let data = '';
  for (let i = 0; i < n; i++)
    data += post(chatBody(modelOf(i), { user: `u${i}`, metadata: { pad: 'x'.repeat(padBytes) } }), i === n - 1);
  const r = await rawRequest(gw.port, data, { timeoutMs: 120000 });
  assert.equal(r.timedOut, false, 'the server closes after the last answer');
  const rs = responses(r.data);
  assert.equal(rs.length, n, `answers received: ${rs.length} of ${n}`);
  for (let i = 0; i < n; i++) {
    assert.equal(rs[i].status, 200, `answer ${i}`);
    // the two model groups alternate: each answer names the model its request asked for
    assert.equal(rs[i].json?.model, modelOf(i), `answer ${i} in order`);
  }
}

test('50 pipelined 20 KB chat requests (1 MB) through a proxied model: all answered, in order', async () => {
  await pipelined(50, 20000, (i) => (i % 2 ? 'mini' : 'fast'));
  await pipelined(50, 20000, (i) => (i % 2 ? 'mini' : 'slow'));
  assert.equal(gw.proc.exitCode, null);
});

test('5 pipelined 1 MB chat requests on one connection: all answered, in order', async () => {
  await pipelined(5, 1 << 20, (i) => (i % 2 ? 'mini' : 'fast'));
  await pipelined(5, 1 << 20, (i) => (i % 2 ? 'mini' : 'slow'));
});

test('a client that pipelines and never reads its answers: the gateway holds, buffers a bounded amount, then serves all', async () => {
  await mock.reset();
  const N = 90; // 90 answers of ~250 KB: 22 MB the gateway must not queue (the mock lists the last 100 requests)
  let data = '';
  for (let i = 0; i < N; i++)
    data += post(chatBody(i % 2 ? 'mini' : 'fast', { mock: { body_bytes: 250000 } }), i === N - 1);
  const rss0 = rssKB();
  const sock = net.connect(gw.port, '127.0.0.1');
  sock.on('error', () => {});
  sock.pause(); // read nothing yet
  await new Promise((res) => sock.once('connect', res));
  sock.write(data);
  // wait until the upstream stops seeing new requests (the gateway holds), bounded
  let seen = -1, stable = 0;
  for (let k = 0; k < 200 && stable < 5; k++) {
    await sleep(100);
    const n = (await mock.requests()).length;
    stable = n === seen ? stable + 1 : 0;
    seen = n;
  }
  const peak = rssKB();
  assert.ok(seen < N, `upstream saw ${seen} of ${N} requests while the client read nothing`);
  assert.ok(peak - rss0 < 32 * 1024, `RSS grew by ${peak - rss0} KB while answers were unread`);
  // now read: every answer arrives, in order
  const parts = [];
  sock.on('data', (d) => { parts.push(d); });
  const closed = new Promise((res) => sock.once('close', res));
  sock.resume();
  assert.ok(await until(() => sock.destroyed || sock.readableEnded, 120000), 'the server closes after the last answer');
  await closed;
  const rs = responses(Buffer.concat(parts).toString('latin1'));
  assert.equal(rs.length, N);
  rs.forEach((r, i) => {
    assert.equal(r.status, 200);
    assert.equal(r.json.model, i % 2 ? 'mini' : 'fast', `answer ${i} in order`);
  });
  assert.equal((await mock.requests()).length, N);
});

test('a client that pipelines requests and never reads cannot grow the read buffer either', async () => {
  // one request whose 12 MB answer is never read (the gateway holds after it), then 60 MB of
  // pipelined requests: reading stops at the bound, the rest waits in the client
  const rss0 = rssKB();
  const sock = net.connect(gw.port, '127.0.0.1');
  sock.on('error', () => {});
  sock.pause();
  await new Promise((res) => sock.once('connect', res));
  sock.write(post(chatBody('fast', { mock: { body_bytes: 12 << 20 } })));
  const get = `GET /health/liveliness HTTP/1.1\r\nHost: x\r\nX-Pad: ${'p'.repeat(8000)}\r\n\r\n`;
  const chunk = get.repeat(128); // ~1 MB
  for (let i = 0; i < 60; i++) sock.write(chunk);
  // bounded wait until the gateway stops taking bytes: the client's pending output stays put
  let pending = -1, stable = 0;
  for (let k = 0; k < 200 && stable < 5; k++) {
    await sleep(100);
    stable = sock.writableLength === pending ? stable + 1 : 0;
    pending = sock.writableLength;
  }
  const peak = rssKB();
  assert.ok(pending > 30 << 20, `the client is held back (${pending} bytes still pending)`);
  assert.ok(peak - rss0 < 64 * 1024, `RSS grew by ${peak - rss0} KB`);
  sock.destroy();
  assert.ok(await until(async () => (await fetch(`${gw.url}/health/liveliness`)).status === 200, 10000));
  assert.equal(gw.proc.exitCode, null);
});
