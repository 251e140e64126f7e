// metrics-bounds.test.mjs - client-chosen label values cannot grow /metrics without bound
// (docs/metrics.md, "Bounded cardinality"): unknown model names create no series; distinct
// `user` bodies, end-user headers and path models beyond the per-label cap share
// "__overflow__", across workers; the series cap bounds combinations; and a large page is
// rendered off the loop, so other requests are answered while it renders.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, test } from 'node:test';
import { startGateway } from '../lib/harness.mjs';

const gateways = [];
after(async () => { for (const g of gateways) assert.equal(await g.stop(), 0); });
async function gateway(opts) {
  const g = await startGateway(null, opts);
  gateways.push(g);
  return g;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
function post(gw, path, body, headers = {}) {
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
const metrics = async (gw) => (await fetch(`${gw.url}/metrics`)).text();
const msg = [{ role: 'user', content: 'hi' }];
const values = (text, label) => new Set([...text.matchAll(new RegExp(`[{,]${label}="([^"]*)"`, 'g'))].map((m) => m[1]));
const totalRequests = (text) =>
  [...text.matchAll(/^litellm_proxy_total_requests_metric_total\{[^}]*\} ([0-9.e+]+)$/gm)]
    .reduce((s, m) => s + Number(m[1]), 0);

test('3,000 unknown model names create no series', async () => {
  const gw = await gateway();
  const before = (await metrics(gw)).length;
  await many(3000, (i) => post(gw, '/v1/chat/completions', { model: `no-such-model-${i}`, messages: msg }));
  const text = await metrics(gw);
  assert.ok(!text.includes('no-such-model-'), 'an unknown model name labels a series');
  // before: 2.3 MB; now the 3,000 requests share one series per family
  assert.ok(text.length < before + 20000, `metrics grew from ${before} to ${text.length} bytes`);
  assert.equal(totalRequests(text), 3000);
});

test('distinct users, end-user headers and path models are capped per label, across workers', async () => {
  const gw = await gateway({ workers: 2 });
  await many(1500, (i) => post(gw, '/v1/chat/completions', { model: 'mock-gpt', messages: msg, user: `user-${i}` }));
  await many(1500, (i) => post(gw, '/v1/chat/completions', { model: 'mock-gpt', messages: msg },
    { 'x-litellm-end-user-id': `eu-${i}` }));
  await many(1500, (i) => post(gw, `/openai/deployments/dep-${i}/chat/completions`, { messages: msg }));
  const text = await metrics(gw);
  assert.match(text, /end_user="__overflow__"/);
  assert.match(text, /route="__overflow__"/);
  // at most 100 admitted values (default cap, shared by the workers) + None + __overflow__
  const users = values(text, 'end_user');
  assert.ok(users.size <= 100 + 2, `${users.size} distinct end_user values`);
  const routes = values(text, 'route');
  assert.ok(routes.size <= 100 + 2, `${routes.size} distinct route values`);
  // 4,500 distinct client values: the page stays a few MB (was ~33 KB per series, 183 MB after 22,000)
  assert.ok(text.length < 8 << 20, `metrics is ${text.length} bytes`);
  // requests past the caps are still counted
  assert.equal(totalRequests(text), 4500);
});

test('the series cap bounds combinations of capped values', async () => {
  // 30 end users x 30 path models: 900 tuples, each value under its cap; 60 series allowed
  const gw = await gateway({ workers: 2, env: { SWITCHYARD_METRICS_MAX_SERIES: '60' } });
  await many(900, (i) => post(gw, `/openai/deployments/dep-${i % 30}/chat/completions`, { messages: msg },
    { 'x-litellm-end-user-id': `eu-${Math.floor(i / 30)}` }));
  const text = await metrics(gw);
  const series = [...text.matchAll(/^litellm_proxy_total_requests_metric_total\{/gm)].length;
  // 60 series plus the all-"__overflow__" one (per worker; they merge on the page)
  assert.ok(series <= 60 + 2, `${series} series`);
  assert.match(text, /end_user="__overflow__",hashed_api_key="__overflow__"/);
  assert.equal(totalRequests(text), 900);
  assert.ok(text.length < 61 * 40000, `metrics is ${text.length} bytes`);
});

test('another request is answered while a large /metrics renders', async () => {
  // 3,000 series (caps raised) make a ~100 MB page; one worker, so an inline render would
  // hold the liveliness probe until the page is written
  const env = { SWITCHYARD_METRICS_MAX_SERIES: '5000', SWITCHYARD_METRICS_MAX_LABEL_VALUES: '5000' };
  const gw = await gateway({ workers: 1, env });
  await many(3000, (i) => post(gw, '/v1/chat/completions', { model: 'mock-gpt', messages: msg, user: `u-${i}` }));
  const order = [];
  const page = new Promise((resolve, reject) => {
    const req = http.get(`${gw.url}/metrics`, { agent: false }, (res) => {
      order.push('metrics');
      let n = 0;
      res.on('data', (d) => { n += d.length; });
      res.on('end', () => resolve({ status: res.statusCode, n }));
    });
    req.on('error', reject);
  });
  // let the scrape reach the worker first
  await new Promise((r) => setTimeout(r, 20));
  const probe = await fetch(`${gw.url}/health/liveliness`);
  order.push('liveliness');
  assert.equal(probe.status, 200);
  const { status, n } = await page;
  assert.equal(status, 200);
  assert.ok(n > 10 << 20, `page is ${n} bytes`);
  assert.deepEqual(order, ['liveliness', 'metrics']);
});
