// webhook.test.mjs - the generic_api sink end to end: switchyard with
// success_callback / failure_callback ["generic_api"] (LiteLLM's
// GenericAPILogger) posts batches of StandardLoggingPayload to a receiver
// (lib/webhook.mjs); the operator's request log (--detailed_debug, json_logs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, startMock, chatBody, postJSON, until, sleep } from '../lib/harness.mjs';
import { startWebhook } from './lib/webhook.mjs';

let mock;
before(async () => { mock = await startMock(); });
after(async () => { await mock?.stop(); });

const models = (base) => `
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${base}", api_key: sk-up, input_cost_per_token: 0.000001, output_cost_per_token: 0.000002}
`;

function hookConfig(base, extra = '') {
  return `${models(base)}
litellm_settings:
  success_callback: ["generic_api"]
  failure_callback: ["generic_api"]
  switchyard_callback_batch_interval: 0.2
${extra}`;
}

test('each call arrives once, batched, with its ids, model, tokens, cost, timings and tags', async () => {
  const hook = await startWebhook();
  const gw = await startGateway(hookConfig(mock.base), {
    env: { GENERIC_LOGGER_ENDPOINT: hook.url, GENERIC_LOGGER_HEADERS: 'X-Hook-Token=abc, X-Env=prod' },
  });
  try {
    const ids = [];
    for (let i = 0; i < 3; i++) {
      const r = await postJSON(`${gw.url}/v1/chat/completions`,
        chatBody('gpt-4o', { metadata: { tags: ['team:blue', `n:${i}`] } }));
      assert.equal(r.status, 200);
      ids.push(r.json.id);
    }
    assert.ok(await hook.waitRecords(3, 15000), `3 records, got ${hook.records().length}`);
    await sleep(500);
    const recs = hook.records();
    assert.equal(recs.length, 3, 'each call once');
    assert.deepEqual(recs.map((r) => r.id).sort(), [...ids].sort());
    for (const p of hook.posts) {
      assert.equal(p.method, 'POST');
      assert.equal(p.url, '/hook');
      assert.equal(p.headers['content-type'], 'application/json');
      assert.equal(p.headers['x-hook-token'], 'abc');
      assert.equal(p.headers['x-env'], 'prod');
      assert.ok(Array.isArray(JSON.parse(p.body)), 'json_array: a JSON array per POST');
    }
    for (const [i, r] of recs.entries()) {
      assert.equal(r.status, 'success');
      assert.equal(r.model_group, 'gpt-4o');
      assert.ok(r.prompt_tokens > 0 && r.completion_tokens > 0);
      assert.equal(r.total_tokens, r.prompt_tokens + r.completion_tokens);
      assert.ok(Math.abs(r.response_cost - (r.prompt_tokens * 0.000001 + r.completion_tokens * 0.000002)) < 1e-12,
        `cost ${r.response_cost}`);
      assert.ok(r.startTime > 1.6e9 && r.startTime <= r.endTime, 'unix seconds, start before end');
      assert.ok(r.completionStartTime >= r.startTime && r.completionStartTime <= r.endTime);
      assert.ok(r.request_tags.includes('team:blue'), `tags ${JSON.stringify(r.request_tags)} (${i})`);
    }
    const m = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(m, /switchyard_callback_sent_total\{callback_name="generic_api"\} 3\.0/);
    const rd = await (await fetch(`${gw.url}/health/readiness`)).json();
    assert.equal(rd.logging.sinks.generic_api.sent, 3);
    assert.equal(rd.logging.sinks.generic_api.dropped, 0);
  } finally {
    assert.equal(await gw.stop(), 0);
    await hook.stop();
  }
});

test('a failed call arrives as a failure; event_types and log_format from callback_settings', async () => {
  const hook = await startWebhook();
  const gw = await startGateway(hookConfig(mock.base, `
callback_settings:
  generic_api:
    log_format: ndjson
    event_types: ["llm_api_failure"]
    headers: {Authorization: "Bearer hook-secret"}
`), { env: { GENERIC_LOGGER_ENDPOINT: hook.url } });
  try {
    const ok = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'));
    assert.equal(ok.status, 200);
    const bad = await postJSON(`${gw.url}/v1/chat/completions`,
      chatBody('gpt-4o', { mock: { status: 400 }, num_retries: 0 }));
    assert.equal(bad.status, 400);
    assert.ok(await hook.waitRecords(1, 15000));
    await sleep(600);
    const recs = hook.records();
    assert.equal(recs.length, 1, 'only the failure (event_types)');
    assert.equal(recs[0].status, 'failure');
    assert.equal(hook.posts[0].headers.authorization, 'Bearer hook-secret');
    assert.ok(!hook.posts[0].body.trim().startsWith('['), 'ndjson, not an array');
  } finally {
    assert.equal(await gw.stop(), 0);
    await hook.stop();
  }
});

test('a named callback with callback_type generic_api posts to its own endpoint', async () => {
  const hook = await startWebhook({ path: '/named' });
  const gw = await startGateway(`${models(mock.base)}
litellm_settings:
  callbacks: ["my_hook"]
  switchyard_callback_batch_interval: 0.2
callback_settings:
  my_hook:
    callback_type: generic_api
    endpoint: ${hook.url}
`);
  try {
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'));
    assert.equal(r.status, 200);
    assert.ok(await hook.waitRecords(1, 15000), gw.log());
    assert.equal(hook.records()[0].id, r.json.id);
    assert.equal(hook.posts[0].url, '/named');
  } finally {
    assert.equal(await gw.stop(), 0);
    await hook.stop();
  }
});

test('a sink that cannot open is said once at start and changes nothing else', async () => {
  const gw = await startGateway(hookConfig(mock.base), { env: { GENERIC_LOGGER_ENDPOINT: '' } });
  try {
    assert.match(gw.log(), /callback 'generic_api' is off: endpoint not set for GenericAPILogger/);
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'));
    assert.equal(r.status, 200);
  } finally {
    assert.equal(await gw.stop(), 0);
  }
});

test('--detailed_debug: one request line per call, no key, no message text; json_logs: JSON lines', async () => {
  const gw = await startGateway(`${models(mock.base)}
general_settings:
  master_key: sk-master-rl
`, { args: ['--detailed_debug'] });
  try {
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'), { authorization: 'Bearer sk-master-rl' });
    assert.equal(r.status, 200);
    const bad = await postJSON(`${gw.url}/v1/chat/completions`,
      chatBody('gpt-4o', { mock: { status: 429 }, num_retries: 0 }), { authorization: 'Bearer sk-master-rl' });
    assert.equal(bad.status, 429);
    assert.ok(await until(() => /request id=\S+ .*status=429/.test(gw.log()), 10000), gw.log());
    const lines = gw.log().split('\n').filter((l) => / request id=/.test(l));
    const okLine = lines.find((l) => l.includes(`id=${r.json.id}`));
    assert.ok(okLine, lines.join('\n'));
    assert.match(okLine, /model_group=gpt-4o .*status=200 attempts=1 latency_ms=\d+ .*prompt_tokens=\d+ completion_tokens=\d+/);
    const errLine = lines.find((l) => /status=429/.test(l));
    assert.match(errLine, /error_class=RateLimitError/);
    assert.ok(!gw.log().includes('sk-master-rl'), 'never the key');
    assert.ok(!gw.log().includes('Say hello'), 'never message text');
  } finally {
    assert.equal(await gw.stop(), 0);
  }
  const gj = await startGateway(`${models(mock.base)}
litellm_settings:
  json_logs: true
`);
  try {
    const r = await postJSON(`${gj.url}/v1/chat/completions`, chatBody('gpt-4o'));
    assert.equal(r.status, 200);
    assert.ok(await until(() => gj.log().includes(`request id=${r.json.id}`), 10000), gj.log());
    const line = gj.log().split('\n').find((l) => l.includes(`request id=${r.json.id}`));
    const j = JSON.parse(line);
    assert.equal(j.level, 'INFO');
    assert.match(j.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);
    assert.equal(j.status, 200);
    assert.equal(j.id, r.json.id);
  } finally {
    assert.equal(await gj.stop(), 0);
  }
});
