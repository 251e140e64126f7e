// faults.test.mjs - delivery that never hurts the request path (issue 22):
// the webhook sink down ~30 s then back loses nothing within the queue bound;
// a sink answering 500 is retried and then delivered once; overflow is
// counted in /metrics; a sink that never answers changes no
// request's status; SIGTERM delivers what is queued before exit.
//
// Never asserts timings: every wait is bounded, and "no effect on requests"
// is checked as statuses and completion of every request.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, startMock, chatBody, postJSON, until, sleep } from '../lib/harness.mjs';
import { startWebhook } from './lib/webhook.mjs';

let mock;
before(async () => { mock = await startMock(); });
after(async () => { await mock?.stop(); });

function config(base, settings = '') {
  return `
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${base}", api_key: sk-up}
litellm_settings:
  success_callback: ["generic_api"]
  failure_callback: ["generic_api"]
${settings}`;
}

async function chats(url, n, extra = {}) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await postJSON(`${url}/v1/chat/completions`, chatBody('gpt-4o', extra)));
  return out;
}

async function metric(url, name) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = text.match(new RegExp(`^${name}\\{callback_name="generic_api"\\} ([0-9.e+]+)$`, 'm'));
  return m ? Number(m[1]) : null;
}

test('the sink refusing connections for ~30 s, then back: every record arrives', { timeout: 150000 }, async () => {
  const hook = await startWebhook();
  const gw = await startGateway(config(mock.base, '  switchyard_callback_batch_interval: 0.2\n'),
    { env: { GENERIC_LOGGER_ENDPOINT: hook.url } });
  try {
    await hook.setMode('refuse');
    const ids = [];
    const t0 = Date.now();
    while (Date.now() - t0 < 30000) { // requests keep coming while the sink is down
      const [r] = await chats(gw.url, 1);
      assert.equal(r.status, 200, 'a dead sink changes no status');
      ids.push(r.json.id);
      await sleep(1500);
    }
    assert.ok((await metric(gw.url, 'switchyard_callback_retried_total')) >= 1, 'retried while down');
    assert.equal(await metric(gw.url, 'switchyard_callback_dropped_total'), 0);
    await hook.setMode('ok');
    // back-off is capped at 60 s (with jitter); the next retry comes within it
    assert.ok(await hook.waitRecords(ids.length, 90000), `${hook.records().length} of ${ids.length} arrived`);
    await sleep(500);
    const got = hook.records().map((r) => r.id);
    assert.deepEqual([...new Set(got)].sort(), [...ids].sort(), 'nothing lost');
    assert.equal(got.length, ids.length, 'nothing twice');
    assert.equal(await metric(gw.url, 'litellm_callback_logging_failures_metric_total'), 0);
  } finally {
    assert.equal(await gw.stop(), 0);
    await hook.stop();
  }
});

test('a sink answering 500: requests unaffected, the batch retried and then delivered once', { timeout: 60000 }, async () => {
  const hook = await startWebhook({ mode: '500' });
  const gw = await startGateway(config(mock.base, '  switchyard_callback_batch_interval: 0.1\n'),
    { env: { GENERIC_LOGGER_ENDPOINT: hook.url } });
  try {
    const rs = await chats(gw.url, 3);
    assert.ok(rs.every((r) => r.status === 200), 'a failing sink changes no status');
    assert.ok(await until(() => hook.requests >= 2, 15000), 'the sink was asked again');
    assert.ok((await metric(gw.url, 'switchyard_callback_retried_total')) >= 1);
    await hook.setMode('ok');
    assert.ok(await hook.waitRecords(3, 30000), `${hook.records().length} of 3`);
    await sleep(300);
    assert.deepEqual(hook.records().map((r) => r.id).sort(), rs.map((r) => r.json.id).sort(), 'each once');
    assert.equal(await metric(gw.url, 'switchyard_callback_dropped_total'), 0);
  } finally {
    assert.equal(await gw.stop(), 0);
    await hook.stop();
  }
});

test('a sink that never answers: requests unaffected, overflow counted in /metrics', { timeout: 90000 }, async () => {
  const hook = await startWebhook({ mode: 'hang' });
  const gw = await startGateway(config(mock.base, `  switchyard_callback_batch_interval: 0.05
  switchyard_callback_queue_max: 5
`), { env: { GENERIC_LOGGER_ENDPOINT: hook.url } });
  try {
    const first = await chats(gw.url, 1);
    assert.equal(first[0].status, 200);
    assert.ok(await until(() => hook.requests >= 1, 10000), 'the first batch reached the sink (and hangs there)');
    const N = 40;
    const rs = await Promise.all(Array.from({ length: N }, () =>
      postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'))));
    assert.equal(rs.length, N, 'every request completed');
    assert.ok(rs.every((r) => r.status === 200), `statuses ${[...new Set(rs.map((r) => r.status))]}`);
    // 40 behind a hung batch, 5 held: 35 dropped, counted under LiteLLM's metric
    assert.ok(await until(async () => (await metric(gw.url, 'litellm_callback_logging_failures_metric_total')) === 35,
      10000), `failures ${await metric(gw.url, 'litellm_callback_logging_failures_metric_total')}`);
    assert.equal(await metric(gw.url, 'switchyard_callback_dropped_total'), 35);
    assert.equal(await metric(gw.url, 'switchyard_callback_queue_depth'), 6);
    const rd = await (await fetch(`${gw.url}/health/readiness`)).json();
    assert.equal(rd.logging.sinks.generic_api.queue_depth, 6);
    assert.equal(rd.logging.sinks.generic_api.dropped, 35);
    assert.match(gw.log(), /callback 'generic_api': \d+ record\(s\) dropped \(queue full\)/);
    const lines = gw.log().split('\n').filter((l) => /dropped \(queue full\)/.test(l));
    assert.equal(lines.length, 1, 'the drops are logged once per interval');
  } finally {
    assert.equal(await gw.stop(), 0, 'SIGTERM with a hung sink still exits 0 (within the bound)');
    await hook.stop();
  }
});

test('SIGTERM delivers what is queued before the process exits', { timeout: 60000 }, async () => {
  const hook = await startWebhook();
  const gw = await startGateway(config(mock.base, '  switchyard_callback_batch_interval: 3600\n'),
    { env: { GENERIC_LOGGER_ENDPOINT: hook.url } });
  const rs = await chats(gw.url, 5);
  assert.ok(rs.every((r) => r.status === 200));
  await sleep(300);
  assert.equal(hook.records().length, 0, 'held: the batch is not old enough');
  assert.equal(await gw.stop('SIGTERM'), 0);
  assert.deepEqual(hook.records().map((r) => r.id).sort(), rs.map((r) => r.json.id).sort());
  await hook.stop();
});
