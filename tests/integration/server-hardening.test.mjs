// server-hardening.test.mjs - the HTTP server under hostile clients: deep pipelining behind a
// slow request, oversized heads (431), trickled heads and bodies (total deadlines, 408), CORS.
// No test asserts a timing: only outcomes, with generous timeouts.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { chatBody, postJSON, rawRequest, startGateway, startMock } from '../lib/harness.mjs';

let mock, gw;

before(async () => {
  mock = await startMock();
  gw = await startGateway(`
model_list:
  - model_name: slow
    litellm_params: {model: "openai/gpt-4o@delay_ms=800", api_base: "${mock.base}", api_key: sk-x}
  - model_name: fast
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-x}
general_settings:
  switchyard_header_timeout_s: 1
  switchyard_body_timeout_s: 1
  switchyard_body_total_timeout_s: 2
`);
});
after(async () => { await gw.stop(); await mock.stop(); });

/** Count HTTP/1.1 status lines in a raw response stream, in order. */
function statuses(raw) {
  return [...raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
}

/** True when the gateway still answers. */
async function alive() {
  const r = await fetch(`${gw.url}/health/liveliness`);
  return r.status === 200;
}

test('20,000 pipelined GETs behind a slow chat request: all answered, in order, process survives', async () => {
  const body = JSON.stringify(chatBody('slow'));
  const N = 20000;
  const get = 'GET /health/liveliness HTTP/1.1\r\nHost: x\r\n\r\n';
  const last = 'GET /health/liveliness HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
  const data = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}` + get.repeat(N - 1) + last;
  const r = await rawRequest(gw.port, data, { timeoutMs: 120000 });
  assert.equal(r.timedOut, false, 'connection closed by the server after the last response');
  const st = statuses(r.data);
  assert.equal(st.length, N + 1, `responses received: ${st.length}`);
  assert.ok(st.every((s) => s === 200), 'every response is 200');
  // the chat answer comes first, before any liveliness answer
  const firstLive = r.data.indexOf('I\'m alive');
  const chat = r.data.indexOf('chat.completion');
  assert.ok(chat > 0 && (firstLive < 0 || chat < firstLive), 'the slow chat response comes first');
  assert.equal(gw.proc.exitCode, null, 'gateway still running');
  assert.ok(await alive());
});

test('many pipelined requests answered at once (no slow one first)', async () => {
  const N = 20000;
  const get = 'GET /health/liveliness HTTP/1.1\r\nHost: x\r\n\r\n';
  const data = get.repeat(N - 1) + 'GET /health/liveliness HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
  const r = await rawRequest(gw.port, data, { timeoutMs: 120000 });
  assert.equal(r.timedOut, false);
  assert.equal(statuses(r.data).length, N);
  assert.ok(await alive());
});

test('a request head over the limit gets 431 with the LiteLLM error shape (also far over 80 KB)', async () => {
  for (const size of [70000, 100000, 300000]) {
    const data = `GET /health/liveliness HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(size)}\r\n\r\n`;
    const r = await rawRequest(gw.port, data, { timeoutMs: 30000 });
    assert.match(r.data, /^HTTP\/1\.1 431 /, `size ${size}: ${r.data.slice(0, 200)}`);
    const json = JSON.parse(r.data.slice(r.data.indexOf('\r\n\r\n') + 4));
    assert.equal(json.error.code, '431');
    assert.equal(typeof json.error.message, 'string');
  }
  // many headers whose bytes add up over the limit, padded with whitespace http-parser skips
  const pad = `X-Pad:${' '.repeat(4000)}v\r\n`.repeat(40);
  const r = await rawRequest(gw.port, `GET /health/liveliness HTTP/1.1\r\nHost: x\r\n${pad}\r\n`, { timeoutMs: 30000 });
  assert.match(r.data, /^HTTP\/1\.1 431 /, r.data.slice(0, 200));
  assert.ok(await alive());
});

/** Open a socket, send head, then trickle `trickle` one byte every stepMs; resolve with what was read. */
function trickle(head, trickleBytes, stepMs, maxMs) {
  return new Promise((resolve) => {
    const sock = net.connect(gw.port, '127.0.0.1');
    let out = '';
    let i = 0;
    let timer = null;
    const done = (timedOut) => { clearInterval(timer); clearTimeout(guard); sock.destroy(); resolve({ data: out, timedOut }); };
    const guard = setTimeout(() => done(true), maxMs);
    sock.on('data', (d) => { out += d.toString('latin1'); });
    sock.on('close', () => done(false));
    sock.on('error', () => {});
    sock.on('connect', () => {
      sock.write(head);
      timer = setInterval(() => {
        if (i < trickleBytes.length && !sock.destroyed) sock.write(trickleBytes[i++]);
      }, stepMs);
    });
  });
}

test('a body trickled faster than the idle timeout is cut off by the total body deadline: 408', async () => {
  const body = JSON.stringify(chatBody('fast')).padEnd(5000, ' ');
  const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  // one byte every 200 ms never trips the 1 s idle timer; the 2 s total deadline must
  const r = await trickle(head, body, 200, 60000);
  assert.equal(r.timedOut, false, 'server closed the connection');
  assert.match(r.data, /^HTTP\/1\.1 408 /, r.data.slice(0, 200));
  assert.match(r.data, /"code":"408"/);
  assert.ok(await alive());
});

test('a head trickled byte by byte is cut off by the head deadline: 408', async () => {
  const head = 'GET /health/liveliness HTTP/1.1\r\nHost: x\r\n' + 'X-A: b\r\n'.repeat(500);
  const r = await trickle('G', head.slice(1), 100, 60000);
  assert.equal(r.timedOut, false, 'server closed the connection');
  assert.match(r.data, /^HTTP\/1\.1 408 /, r.data.slice(0, 200));
  assert.ok(await alive());
});

test('CORS preflight on any path is answered 200 with Access-Control-Allow-*', async () => {
  for (const p of ['/v1/chat/completions', '/chat/completions', '/v1/models', '/no/such/route']) {
    const r = await fetch(`${gw.url}${p}`, { method: 'OPTIONS', headers: {
      origin: 'https://app.example', 'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, x-stainless-os' } });
    assert.equal(r.status, 200, p);
    assert.equal(r.headers.get('access-control-allow-origin'), 'https://app.example');
    assert.equal(r.headers.get('access-control-allow-credentials'), 'true');
    assert.match(r.headers.get('access-control-allow-methods'), /POST/);
    assert.equal(r.headers.get('access-control-allow-headers'), 'authorization, content-type, x-stainless-os');
    assert.ok(r.headers.get('access-control-max-age'));
    assert.match(r.headers.get('vary') || '', /Origin/);
  }
});

test('CORS headers on simple, error and streamed responses; none without Origin', async () => {
  const h = { origin: 'https://app.example' };
  const ok = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('fast'), h);
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get('access-control-allow-origin'), 'https://app.example');
  assert.equal(ok.headers.get('access-control-allow-credentials'), 'true');
  assert.match(ok.headers.get('vary') || '', /Origin/);
  const bad = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('nope'), h);
  assert.ok(bad.status >= 400);
  assert.equal(bad.headers.get('access-control-allow-origin'), 'https://app.example');
  const s = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST',
    headers: { 'content-type': 'application/json', ...h }, body: JSON.stringify(chatBody('fast', { stream: true })) });
  assert.equal(s.headers.get('access-control-allow-origin'), 'https://app.example');
  assert.match(await s.text(), /data: \[DONE\]/);
  const plain = await fetch(`${gw.url}/health/liveliness`);
  assert.equal(plain.headers.get('access-control-allow-origin'), null);
  // an OpenAI-SDK-shaped request (no Origin, bearer auth, x-stainless headers) is unaffected
  const sdk = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('fast'),
    { authorization: 'Bearer sk-anything', 'x-stainless-lang': 'js', 'user-agent': 'OpenAI/JS 4.0' });
  assert.equal(sdk.status, 200);
  assert.equal(sdk.json.object, 'chat.completion');
});

test('CORS allowed origins are configurable: a disallowed origin gets no CORS headers', async () => {
  const g2 = await startGateway(`
model_list:
  - model_name: fast
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-x}
general_settings:
  switchyard_cors_allowed_origins: ["https://good.example"]
`);
  try {
    const pre = (origin) => fetch(`${g2.url}/v1/chat/completions`, { method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST' } });
    const good = await pre('https://good.example');
    assert.equal(good.status, 200);
    assert.equal(good.headers.get('access-control-allow-origin'), 'https://good.example');
    const evil = await pre('https://evil.example');
    assert.equal(evil.status, 400);
    assert.equal(evil.headers.get('access-control-allow-origin'), null);
    const r = await postJSON(`${g2.url}/v1/chat/completions`, chatBody('fast'), { origin: 'https://evil.example' });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('access-control-allow-origin'), null);
  } finally { await g2.stop(); }
});
