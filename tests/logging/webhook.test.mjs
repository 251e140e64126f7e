// webhook.test.mjs - the generic_api sink end to end: switchyard with
// success_callback / failure_callback ["generic_api"] (LiteLLM's
// GenericAPILogger) posts batches of StandardLoggingPayload to a receiver
// (lib/webhook.mjs); the operator's request log (--detailed_debug, json_logs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startGateway, startMock, chatBody, postJSON, until, sleep, sha256hex, api, keysConfig, MASTER_KEY } from '../lib/harness.mjs';
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

test('a stream arrives with its first-token time and usage; redaction keeps message text and key facts out', async () => {
  const hook = await startWebhook();
  const gw = await startGateway(hookConfig(mock.base, `  turn_off_message_logging: true
  redact_user_api_key_info: true
general_settings:
  master_key: sk-master-wh
`), { env: { GENERIC_LOGGER_ENDPOINT: hook.url } });
  try {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-master-wh' },
      body: JSON.stringify(chatBody('gpt-4o', { stream: true, stream_options: { include_usage: true },
        mock: { chunks: 5, chunk_delay_ms: 30 } })),
    });
    assert.equal(res.status, 200);
    const sse = await res.text();
    const id = JSON.parse(sse.split('\n').find((l) => l.startsWith('data: {')).slice(6)).id;
    assert.ok(await hook.waitRecords(1, 15000), gw.log());
    const [r] = hook.records();
    assert.equal(r.id, id);
    assert.equal(r.status, 'success');
    assert.equal(r.stream, true);
    assert.ok(r.completionStartTime > r.startTime && r.completionStartTime < r.endTime,
      `first token ${r.completionStartTime} within ${r.startTime}..${r.endTime}`);
    assert.ok(r.prompt_tokens > 0 && r.completion_tokens > 0, 'full usage');
    const body = hook.posts[0].body;
    assert.ok(!body.includes('Say hello') && !body.includes('You are terse'), 'no message text');
    assert.ok(!body.includes('sk-master-wh'), 'never the key');
    assert.ok(!body.includes(await sha256hex('sk-master-wh')), 'redact_user_api_key_info: not even its hash');
    for (const k of Object.keys(r.metadata || {})) assert.ok(!k.startsWith('user_api_key_') || r.metadata[k] == null,
      `redacted ${k}`);
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

test("a key's own metadata.logging sends its records to its own endpoint, the others to the config's", async () => {
  const hook = await startWebhook();
  const own = await startWebhook({ path: '/tenant' });
  const gw = await startGateway(keysConfig(mock.base) + `
litellm_settings:
  success_callback: ["generic_api"]
  switchyard_callback_batch_interval: 0.2
`, { env: { GENERIC_LOGGER_ENDPOINT: hook.url } });
  try {
    const k = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', {
      key_alias: 'tenant-key',
      metadata: { logging: [{ callback_name: 'generic_api', callback_type: 'success', callback_vars: { endpoint: own.url } }] },
    });
    assert.equal(k.status, 200, k.text);
    const mine = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'), { authorization: `Bearer ${k.json.key}` });
    assert.equal(mine.status, 200);
    const other = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'), { authorization: `Bearer ${MASTER_KEY}` });
    assert.equal(other.status, 200);
    assert.ok(await own.waitRecords(1, 15000) && await hook.waitRecords(1, 15000), gw.log());
    await sleep(500);
    assert.deepEqual(own.records().map((r) => r.id), [mine.json.id]);
    assert.deepEqual(hook.records().map((r) => r.id), [other.json.id]);
    const rd = await (await fetch(`${gw.url}/health/readiness`)).json();
    assert.equal(rd.logging.sinks['generic_api:tenant-key'].sent, 1, JSON.stringify(rd.logging));
  } finally {
    assert.equal(await gw.stop(), 0);
    await hook.stop();
    await own.stop();
  }
});

test('SIGHUP: a new endpoint takes the records that follow; none is lost or sent twice', async () => {
  const a = await startWebhook({ path: '/a' });
  const b = await startWebhook({ path: '/b' });
  const cfg = (url) => hookConfig(mock.base, `
callback_settings:
  generic_api:
    endpoint: ${url}
`);
  const gw = await startGateway(cfg(a.url));
  try {
    const r1 = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'));
    assert.ok(await a.waitRecords(1, 15000));
    fs.writeFileSync(gw.configPath, cfg(b.url));
    gw.proc.kill('SIGHUP');
    assert.ok(await until(() => /config reloaded/.test(gw.log()), 10000), gw.log());
    const r2 = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'));
    assert.ok(await b.waitRecords(1, 15000), gw.log());
    await sleep(400);
    assert.deepEqual(a.records().map((r) => r.id), [r1.json.id]);
    assert.deepEqual(b.records().map((r) => r.id), [r2.json.id]);
  } finally {
    assert.equal(await gw.stop(), 0);
    await a.stop();
    await b.stop();
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
