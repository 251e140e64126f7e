// metrics-bounds.test.mjs - client-chosen label values cannot grow /metrics without bound:
// unknown model names create no series, and distinct `user` bodies / end-user headers /
// path models beyond the per-label cap share "__overflow__" (docs/metrics.md).
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { startGateway } from '../lib/harness.mjs';

let gw;
before(async () => { gw = await startGateway(null); });
after(async () => { assert.equal(await gw.stop(), 0); });

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
function post(path, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(`${gw.url}${path}`, { method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers } },
    (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
    req.on('error', reject);
    req.end(data);
  });
}
async function many(n, f) {
  for (let i = 0; i < n; i += 50) await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, k) => f(i + k)));
}
const metricsSize = async () => (await (await fetch(`${gw.url}/metrics`)).text()).length;
const msg = [{ role: 'user', content: 'hi' }];

test('3,000 unknown model names create no series', async () => {
  const before = await metricsSize();
  await many(3000, (i) => post('/v1/chat/completions', { model: `no-such-model-${i}`, messages: msg }));
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  assert.ok(!text.includes('no-such-model-'), 'an unknown model name labels a series');
  assert.ok(text.length < before + 20000, `metrics grew from ${before} to ${text.length} bytes`);
});

test('distinct users, end-user headers and path models are capped per label', async () => {
  await many(1500, (i) => post('/v1/chat/completions', { model: 'mock-gpt', messages: msg, user: `user-${i}` }));
  await many(1500, (i) => post('/v1/chat/completions', { model: 'mock-gpt', messages: msg },
    { 'x-litellm-end-user-id': `eu-${i}` }));
  await many(1500, (i) => post(`/openai/deployments/dep-${i}/chat/completions`, { messages: msg }));
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  assert.match(text, /end_user="__overflow__"/);
  const users = new Set([...text.matchAll(/end_user="([^"]*)"/g)].map((m) => m[1]));
  assert.ok(users.size <= 100 + 2, `${users.size} distinct end_user values`);
  const routes = new Set([...text.matchAll(/route="([^"]*)"/g)].map((m) => m[1]));
  assert.ok(routes.size <= 100 + 2, `${routes.size} distinct route values`);
  // 4,500 distinct client values: the page stays a few MB at most (was ~60 KB per series)
  assert.ok(text.length < 8 << 20, `metrics is ${text.length} bytes`);
  // requests past the caps are still counted
  const total = [...text.matchAll(/^litellm_proxy_total_requests_metric_total\{[^}]*\} ([0-9.e+]+)$/gm)]
    .reduce((s, m) => s + Number(m[1]), 0);
  assert.ok(total >= 7500, `total requests counted ${total}`);
});
