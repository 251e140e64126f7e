// head-root.test.mjs - HEAD on every kind of route answers what GET would
// (status, headers, the GET body's content-length) without a body byte, and
// the connection stays in step for the next pipelined request (RFC 9110
// §9.3.2; Claude Code probes HEAD / at start); GET / is an index page, HTML or
// JSON by Accept, with no auth. No timings are asserted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { rawRequest, startGateway, startMock } from '../lib/harness.mjs';

const KEY = 'sk-head-master';
const AUTH = { authorization: `Bearer ${KEY}` };
let mock, gw;

before(async () => {
  mock = await startMock();
  gw = await startGateway(`
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-x}
general_settings:
  master_key: ${KEY}
`);
});

after(async () => {
  await gw?.stop();
  await mock?.stop();
});

async function both(path, headers = {}) {
  const g = await fetch(`${gw.url}${path}`, { headers });
  const gbody = Buffer.from(await g.arrayBuffer());
  const h = await fetch(`${gw.url}${path}`, { method: 'HEAD', headers });
  const hbody = Buffer.from(await h.arrayBuffer());
  return { g, gbody, h, hbody };
}

function sameAsGet({ g, gbody, h, hbody }, status) {
  assert.equal(h.status, status);
  assert.equal(g.status, status);
  assert.equal(hbody.length, 0);
  assert.equal(h.headers.get('content-type'), g.headers.get('content-type'));
  assert.equal(h.headers.get('content-length'), String(gbody.length));
}

test('HEAD / is 200 with the index page\'s length and no body; GET / is HTML naming switchyard and its endpoints', async () => {
  const r = await both('/');
  sameAsGet(r, 200);
  assert.match(r.g.headers.get('content-type'), /^text\/html/);
  const html = r.gbody.toString();
  assert.match(html, /<title>switchyard<\/title>/);
  assert.match(html, /\d+\.\d+\.\d+/); // the version
  for (const p of ['/v1/models', '/health/liveliness', '/metrics', '/routes']) assert.ok(html.includes(`href="${p}"`), p);
  assert.ok(html.includes('/key/generate'));
  assert.ok(!/<script|src=|https?:\/\/[^"]*\.(css|js)/.test(html), 'no script or external asset');
  assert.ok(!html.includes(KEY));
});

test('GET / with Accept: application/json: the same as JSON; a browser\'s Accept goes to the admin UI', async () => {
  const r = await fetch(`${gw.url}/`, { headers: { accept: 'application/json' } });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'application/json');
  const j = await r.json();
  assert.equal(j.name, 'switchyard');
  assert.match(j.version, /^\d+\.\d+\.\d+/);
  assert.ok(j.endpoints.some((e) => e.path === '/v1/messages/count_tokens' && e.method === 'POST'));
  assert.ok(j.endpoints.some((e) => e.path === '/health/liveliness' && e.auth === 'none'));
  const b = await fetch(`${gw.url}/`, { redirect: 'manual', headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
  assert.equal(b.status, 302);
  assert.equal(b.headers.get('location'), '/ui/');
  const q = await fetch(`${gw.url}/`, { headers: { accept: 'text/html;q=0.1, application/json;q=0.5' } });
  assert.equal(q.headers.get('content-type'), 'application/json');
  const n = await fetch(`${gw.url}/`, { headers: { accept: 'application/json;q=0' } });
  assert.match(n.headers.get('content-type'), /^text\/html/);
});

test('HEAD on other routes: liveness, /v1/models (with and without the key), unknown path, a POST-only route', async () => {
  sameAsGet(await both('/health/liveliness'), 200);
  sameAsGet(await both('/v1/models', AUTH), 200);
  sameAsGet(await both('/v1/models'), 401);
  sameAsGet(await both('/no/such/path'), 404);
  sameAsGet(await both('/v1/chat/completions', AUTH), 405);
  sameAsGet(await both('/routes'), 200);
  const m = await both('/metrics'); // its text may change between the two: status and no body
  assert.equal(m.h.status, 200);
  assert.equal(m.hbody.length, 0);
});

test('pipelined: HEAD then GET on one connection, both answered, the GET body intact', async () => {
  const req = (m, p, last) => `${m} ${p} HTTP/1.1\r\nHost: x\r\n${last ? 'Connection: close\r\n' : ''}\r\n`;
  const r = await rawRequest(gw.port, req('HEAD', '/', false) + req('HEAD', '/nope', false) + req('GET', '/health/liveliness', true));
  assert.equal(r.timedOut, false);
  const parts = r.data.split(/(?=HTTP\/1\.1 )/);
  assert.equal(parts.length, 3, r.data);
  assert.match(parts[0], /^HTTP\/1\.1 200 OK\r\n[\s\S]*content-length: \d+\r\n[\s\S]*\r\n\r\n$/);
  assert.match(parts[1], /^HTTP\/1\.1 404 Not Found\r\n[\s\S]*\r\n\r\n$/);
  assert.match(parts[2], /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n"I'm alive!"$/);
});

test('HEAD over HTTP/1.0 with keep-alive, then a GET: the connection is kept', async () => {
  const r = await rawRequest(gw.port,
    'HEAD /health/liveliness HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /health/liveliness HTTP/1.0\r\n\r\n');
  assert.equal(r.timedOut, false);
  const parts = r.data.split(/(?=HTTP\/1\.1 )/);
  assert.equal(parts.length, 2, r.data);
  assert.match(parts[0], /\r\n\r\n$/);
  assert.match(parts[1], /"I'm alive!"$/);
});
