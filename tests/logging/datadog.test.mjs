// datadog.test.mjs - the datadog sink end to end: switchyard with
// success_callback / failure_callback ["datadog"] posts LiteLLM's
// DatadogPayload entries to a logs-intake receiver (lib/datadog.mjs, via
// DD_BASE_URL) that checks the key, the entry shape and that each message
// is a StandardLoggingPayload.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, startMock, chatBody, postJSON, until, sleep, api, MASTER_KEY } from '../lib/harness.mjs';
import { startDatadog } from './lib/datadog.mjs';

let mock;
before(async () => { mock = await startMock(); });
after(async () => { await mock?.stop(); });

const IN = 0.000001, OUT = 0.000002;
const config = (base, settings = '') => `
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${base}", api_key: sk-up, input_cost_per_token: ${IN}, output_cost_per_token: ${OUT}}
litellm_settings:
  success_callback: ["datadog"]
  failure_callback: ["datadog"]
  switchyard_callback_batch_interval: 0.2
${settings}`;

const envFor = (dd, extra = {}) => ({
  DD_API_KEY: 'dd-api-key-test', DD_SITE: 'us5.datadoghq.com', DD_BASE_URL: dd.url,
  DD_ENV: 'ci', DD_SERVICE: 'gw', DD_VERSION: '9', HOSTNAME: 'host-1', POD_NAME: '', ...extra,
});

const byCall = (dd, callId) => dd.logs.find((l) => l.payload.id === callId || l.payload.trace_id === callId
  || l.payload.metadata?.litellm_call_id === callId);

test('each call is one log: LiteLLM\'s entry, tags, and the StandardLoggingPayload as message', async () => {
  const dd = await startDatadog();
  const gw = await startGateway(config(mock.base), { env: envFor(dd) });
  try {
    const ids = [];
    for (let i = 0; i < 3; i++) {
      const r = await postJSON(`${gw.url}/v1/chat/completions`,
        chatBody('gpt-4o', { metadata: { tags: ['team:blue', `n:${i}`] } }));
      assert.equal(r.status, 200);
      ids.push(r.json.id);
    }
    assert.ok(await until(() => dd.logs.length + dd.invalid.length >= 3, 15000), gw.log());
    await sleep(500);
    assert.deepEqual(dd.invalid.map((i) => i.issues), [], 'entries and payloads valid');
    assert.equal(dd.logs.length, 3, 'each call once');
    assert.deepEqual(dd.logs.map((l) => l.payload.id).sort(), [...ids].sort());
    for (const q of dd.requests) {
      assert.equal(q.status, 202);
      assert.equal(q.headers['dd-api-key'], 'dd-api-key-test');
    }
    for (const l of dd.logs) {
      assert.equal(l.ddsource, 'litellm');
      assert.equal(l.service, 'gw');
      assert.equal(l.hostname, 'host-1');
      assert.equal(l.status, 'info');
      assert.match(l.ddtags, /^env:ci,service:gw,version:9,HOSTNAME:host-1,POD_NAME:,request_tag:team:blue,request_tag:n:\d/);
      const p = l.payload;
      assert.equal(p.status, 'success');
      assert.equal(p.model_group, 'gpt-4o');
      assert.ok(p.prompt_tokens > 0 && p.completion_tokens > 0);
      assert.ok(Math.abs(p.response_cost - (p.prompt_tokens * IN + p.completion_tokens * OUT)) < 1e-12);
      assert.ok(p.startTime <= p.completionStartTime && p.completionStartTime <= p.endTime);
    }
  } finally {
    assert.equal(await gw.stop(), 0);
    await dd.stop();
  }
});

test('a stream and a failure: first-token time and full usage; status error', async () => {
  const dd = await startDatadog();
  const gw = await startGateway(config(mock.base), { env: envFor(dd) });
  try {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('gpt-4o', { stream: true, stream_options: { include_usage: true },
        mock: { chunk_delay_ms: 30 } })),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    const usage = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)))
      .find((c) => c.usage)?.usage;
    const bad = await postJSON(`${gw.url}/v1/chat/completions`,
      chatBody('gpt-4o', { mock: { status: 400, error_message: 'nope' }, num_retries: 0 }));
    assert.equal(bad.status, 400);
    assert.ok(await until(() => dd.logs.length + dd.invalid.length >= 2, 15000), gw.log());
    assert.deepEqual(dd.invalid.map((i) => i.issues), []);
    const ok = dd.logs.find((l) => l.status === 'info'), err = dd.logs.find((l) => l.status === 'error');
    assert.ok(ok && err, JSON.stringify(dd.logs.map((l) => l.status)));
    assert.equal(ok.payload.prompt_tokens, usage.prompt_tokens);
    assert.equal(ok.payload.completion_tokens, usage.completion_tokens);
    assert.ok(ok.payload.startTime < ok.payload.completionStartTime
      && ok.payload.completionStartTime < ok.payload.endTime, 'first token before the end');
    assert.equal(err.payload.status, 'failure');
    assert.match(err.payload.error_str, /nope/);
  } finally {
    assert.equal(await gw.stop(), 0);
    await dd.stop();
  }
});

test('turn_off_message_logging: no text in the logs', async () => {
  const dd = await startDatadog();
  const gw = await startGateway(config(mock.base, '  turn_off_message_logging: true'), { env: envFor(dd) });
  try {
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'));
    assert.equal(r.status, 200);
    assert.ok(await until(() => dd.logs.length >= 1, 15000), gw.log());
    const msg = dd.logs[0].message;
    assert.ok(!msg.includes('Say hello'), 'no prompt');
    assert.ok(!msg.includes(r.json.choices[0].message.content), 'no answer');
  } finally {
    assert.equal(await gw.stop(), 0);
    await dd.stop();
  }
});

test('a wrong key is refused and said; the intake down changes no request; a 5xx is retried', async () => {
  const dd = await startDatadog(['the-right-key']);
  const gw = await startGateway(config(mock.base), { env: envFor(dd) });
  try {
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'));
    assert.equal(r.status, 200);
    assert.ok(await until(() => dd.requests.some((q) => q.status === 403), 15000), gw.log());
    assert.ok(await until(() => /datadog: .*answered 403/.test(gw.log()), 5000), gw.log());
    assert.equal(dd.logs.length, 0);
  } finally {
    assert.equal(await gw.stop(), 0);
    await dd.stop();
  }
  const dd2 = await startDatadog();
  const gw2 = await startGateway(config(mock.base), { env: envFor(dd2) });
  try {
    dd2.fail(500, 2);
    const r = await postJSON(`${gw2.url}/v1/chat/completions`, chatBody('gpt-4o'));
    assert.equal(r.status, 200);
    assert.ok(await until(() => dd2.logs.length >= 1, 20000), gw2.log());
    assert.ok(dd2.requests.filter((q) => q.status === 500).length >= 2);
    await sleep(300);
    assert.equal(dd2.logs.length, 1, 'delivered once');
  } finally {
    assert.equal(await gw2.stop(), 0);
    await dd2.stop();
  }
});

test('without DD_API_KEY / DD_SITE the sink is off, said once at start', async () => {
  const gw = await startGateway(config(mock.base), { env: { DD_API_KEY: '', DD_SITE: '', DD_BASE_URL: '' } });
  try {
    assert.match(gw.log(), /datadog.*DD_API_KEY is not set/);
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'));
    assert.equal(r.status, 200);
  } finally {
    assert.equal(await gw.stop(), 0);
  }
});

test('a key with its own Datadog account (metadata.logging): its calls go there, with its key only', async () => {
  const main = await startDatadog();
  const own = await startDatadog(['dd-key-of-tenant']);
  const gw = await startGateway(`${config(mock.base)}
general_settings:
  master_key: ${MASTER_KEY}
`, { env: { ...envFor(main), DD_BASE_URL: '', LITELLM_DD_AGENT_HOST: '127.0.0.1', LITELLM_DD_AGENT_PORT: String(main.port) } });
  try {
    // the config's sink: an agent at main; the tenant's: its own agent and key
    const k = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', {
      metadata: { logging: [{ callback_name: 'datadog', callback_type: 'success',
        callback_vars: { dd_api_key: 'dd-key-of-tenant', dd_agent_host: '127.0.0.1', dd_agent_port: String(own.port) } }] },
    });
    assert.equal(k.status, 200, k.text);
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'), { authorization: `Bearer ${k.json.key}` });
    assert.equal(r.status, 200);
    assert.ok(await until(() => own.logs.length >= 1, 15000), gw.log());
    assert.deepEqual(own.invalid.map((i) => i.issues), []);
    assert.equal(own.logs[0].apiKey, 'dd-key-of-tenant');
    assert.equal(own.logs[0].payload.id, r.json.id);
    assert.ok(own.requests.every((q) => q.apiKey === 'dd-key-of-tenant'), 'never the proxy\'s key');
    const plain = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'), { authorization: `Bearer ${MASTER_KEY}` });
    assert.equal(plain.status, 200);
    assert.ok(await until(() => main.logs.length >= 1, 15000), gw.log());
    await sleep(300);
    assert.deepEqual(main.logs.map((l) => l.payload.id), [plain.json.id], 'the tenant\'s call only at its own');
    assert.equal(main.logs[0].apiKey, 'dd-api-key-test');
    assert.equal(own.logs.length, 1);
  } finally {
    assert.equal(await gw.stop(), 0);
    await Promise.all([main.stop(), own.stop()]);
  }
});
