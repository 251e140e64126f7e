// slack.test.mjs - Slack alerting end to end: switchyard with
// general_settings.alerting: ["slack"] posts LiteLLM's alert messages to a
// Slack incoming-webhook receiver (lib/slack.mjs: content type, {"text"}
// shape, hook path) - failed calls (de-duplicated), slow calls, budgets,
// cooled-down deployments, the database unreachable; alert_types honoured;
// a Slack that is down or missing changes no request.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, startMock, chatBody, postJSON, api, freePort, MASTER_KEY, sleep } from '../lib/harness.mjs';
import { startSlack } from './lib/slack.mjs';

let mock;
before(async () => { mock = await startMock(); });
after(async () => { await mock?.stop(); });

const auth = { authorization: `Bearer ${MASTER_KEY}` };

function config(base, { general = '', extraModels = '' } = {}) {
  return `
model_list:
  - model_name: ok-model
    litellm_params: {model: openai/ok, api_base: "${base}", api_key: sk-up, input_cost_per_token: 0.001, output_cost_per_token: 0.001}
  - model_name: bad-model
    litellm_params: {model: "openai/bad@status=500", api_base: "${base}", api_key: sk-up}
    model_info: {id: bad-dep}
  - model_name: slow-model
    litellm_params: {model: "openai/slow@delay_ms=700", api_base: "${base}", api_key: sk-up}
    model_info: {id: slow-dep}
  - model_name: cg
    litellm_params: {model: "openai/c1@status=429", api_base: "${base}", api_key: sk-up}
    model_info: {id: cg-429}
  - model_name: cg
    litellm_params: {model: openai/c2, api_base: "${base}", api_key: sk-up}
    model_info: {id: cg-ok}
${extraModels}
litellm_settings:
  num_retries: 0
  switchyard_callback_batch_interval: 0.2
router_settings:
  num_retries: 0
general_settings:
  master_key: ${MASTER_KEY}
  proxy_batch_write_at: 0.1
  alerting: ["slack"]
  alerting_threshold: 0.3
${general}`;
}

/** Every alert's text: never a secret (the master key, a virtual key). */
function assertNoSecrets(slack, secrets) {
  for (const m of slack.messages)
    for (const s of secrets) assert.ok(!m.text.includes(s), `a secret in an alert: ${m.text}`);
}

test('a failing upstream: one llm_exceptions alert for five identical failures; a slow call: llm_too_slow', async () => {
  const slack = await startSlack();
  const gw = await startGateway(config(mock.base), { env: { SLACK_WEBHOOK_URL: slack.url } });
  try {
    for (let i = 0; i < 5; i++) {
      const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('bad-model'), auth);
      assert.equal(r.status, 500, JSON.stringify(r.json));
    }
    const a = await slack.waitFor((m) => m.type === 'llm_exceptions');
    assert.equal(a.level, 'High');
    assert.match(a.text, /Message: LLM API call failed: `litellm\.\w+Error: /);
    assert.equal(a.fields['Model Group'], 'bad-model');
    assert.equal(a.fields.Deployment, 'bad-dep');
    assert.equal(a.fields['API Base'], mock.base);
    assert.equal(a.fields.Status, '500');
    assert.match(a.text, /^Level: `High`\nTimestamp: `\d\d:\d\d:\d\d`\n\nMessage: /);

    // a slow call, after the failures: its alert arrives after theirs were handled
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('slow-model'), auth);
    assert.equal(r.status, 200);
    const s = await slack.waitFor((m) => m.type === 'llm_too_slow');
    assert.equal(s.level, 'Low');
    assert.match(s.text, /`Responses are slow - \d+\.\d\ds response time > Alerting threshold: 0\.3s`/);
    assert.equal(s.fields['Request Model'], 'slow-model');
    assert.equal(s.fields.Deployment, 'slow-dep');
    assert.equal(slack.of('llm_exceptions').length, 1, 'five identical failures, one alert');
    // a fast call raises nothing
    const fast = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('ok-model'), auth);
    assert.equal(fast.status, 200);
    assert.equal(slack.rejected.length, 0, JSON.stringify(slack.rejected));
    assertNoSecrets(slack, [MASTER_KEY]);
  } finally {
    assert.equal(await gw.stop(), 0);
    await slack.close();
  }
});

test('a key over its budget: a budget alert naming its alias, never the key', async () => {
  const slack = await startSlack();
  const gw = await startGateway(config(mock.base), { env: { SLACK_WEBHOOK_URL: slack.url } });
  try {
    const k = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { key_alias: 'tiny-budget', max_budget: 0.000001 });
    assert.equal(k.status, 200, JSON.stringify(k.json));
    const key = k.json.key;
    let refused = null;
    for (let i = 0; i < 5 && !refused; i++) {
      const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('ok-model'), { authorization: `Bearer ${key}` });
      if (r.status === 400) refused = r;
      else { assert.equal(r.status, 200, JSON.stringify(r.json)); await sleep(300); }
    }
    assert.ok(refused, 'the key is refused once over its budget');
    assert.equal(refused.json.error.type, 'budget_exceeded');
    const b = await slack.waitFor((m) => m.type === 'budget_alerts');
    assert.equal(b.level, 'High');
    assert.match(b.text, /Key Budget: Budget Crossed/);
    assert.equal(b.fields['Key Alias'], 'tiny-budget');
    // refused again: the same crossing is not alerted twice (budget_alert_ttl)
    const again = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('ok-model'), { authorization: `Bearer ${key}` });
    assert.equal(again.status, 400);
    await postJSON(`${gw.url}/v1/chat/completions`, chatBody('slow-model'), auth);
    await slack.waitFor((m) => m.type === 'llm_too_slow');
    assert.equal(slack.of('budget_alerts').length, 1);
    assertNoSecrets(slack, [key, MASTER_KEY, key.slice(3)]);
  } finally {
    assert.equal(await gw.stop(), 0);
    await slack.close();
  }
});

test('a key past its soft_budget: a soft budget alert, the calls go on', async () => {
  const slack = await startSlack();
  const gw = await startGateway(config(mock.base), { env: { SLACK_WEBHOOK_URL: slack.url } });
  try {
    const k = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { key_alias: 'soft', soft_budget: 0.000001, max_budget: 100 });
    assert.equal(k.status, 200, JSON.stringify(k.json));
    for (let i = 0; i < 4 && !slack.of('budget_alerts').length; i++) {
      const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('ok-model'), { authorization: `Bearer ${k.json.key}` });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      await sleep(300);
    }
    const b = await slack.waitFor((m) => m.type === 'budget_alerts');
    assert.match(b.text, /Key Budget: Soft Budget Crossed/);
    assert.equal(b.fields['Soft Budget'], '1e-06');
    assert.equal(b.fields['Key Alias'], 'soft');
    assertNoSecrets(slack, [k.json.key, MASTER_KEY]);
  } finally {
    assert.equal(await gw.stop(), 0);
    await slack.close();
  }
});

test('a deployment cooled down: a cooldown_deployment alert', async () => {
  const slack = await startSlack();
  const gw = await startGateway(config(mock.base), { env: { SLACK_WEBHOOK_URL: slack.url } });
  try {
    for (let i = 0; i < 20 && !slack.of('cooldown_deployment').length; i++) {
      const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('cg'), auth);
      assert.ok(r.status === 200 || r.status === 429, `status ${r.status}`);
      if (r.status === 429) break;
    }
    const c = await slack.waitFor((m) => m.type === 'cooldown_deployment');
    assert.equal(c.level, 'Medium');
    assert.match(c.text, /Deployment cooled down for \d+(\.\d)?s after status 429/);
    assert.equal(c.fields.Deployment, 'cg-429');
    assert.equal(c.fields['Model Group'], 'cg');
  } finally {
    assert.equal(await gw.stop(), 0);
    await slack.close();
  }
});

test('alert_types is honoured: only the types asked for are sent', async () => {
  const slack = await startSlack();
  const gw = await startGateway(config(mock.base, { general: '  alert_types: ["llm_too_slow"]\n' }),
    { env: { SLACK_WEBHOOK_URL: slack.url } });
  try {
    for (let i = 0; i < 3; i++)
      assert.equal((await postJSON(`${gw.url}/v1/chat/completions`, chatBody('bad-model'), auth)).status, 500);
    for (let i = 0; i < 4; i++) await postJSON(`${gw.url}/v1/chat/completions`, chatBody('cg'), auth);
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('slow-model'), auth);
    assert.equal(r.status, 200);
    await slack.waitFor((m) => m.type === 'llm_too_slow');
    await sleep(500);
    assert.deepEqual([...new Set(slack.messages.map((m) => m.type))], ['llm_too_slow']);
  } finally {
    assert.equal(await gw.stop(), 0);
    await slack.close();
  }
});

test('the database unreachable: a db_exceptions alert', async () => {
  const slack = await startSlack();
  const dead = await freePort(); // nothing listens there
  const gw = await startGateway(config(mock.base, {
    general: `  database_url: "postgresql://postgres@127.0.0.1:${dead}/postgres?connect_timeout=1"\n  allow_requests_on_db_unavailable: true\n  alerting_args: {switchyard_health_check_interval: 0.3}\n`,
  }), { env: { SLACK_WEBHOOK_URL: slack.url } });
  try {
    const d = await slack.waitFor((m) => m.type === 'db_exceptions', 20000);
    assert.equal(d.level, 'High');
    assert.match(d.text, /DB read\/write call failed: the PostgreSQL database is unreachable/);
    await sleep(1000); // several health checks: still one alert (switchyard_alert_dedup_ttl)
    assert.equal(slack.of('db_exceptions').length, 1);
  } finally {
    await gw.stop();
    await slack.close();
  }
});

test('Slack down: requests are unaffected, the alert is retried and counted', async () => {
  const slack = await startSlack();
  slack.mode = 'down';
  const gw = await startGateway(config(mock.base), { env: { SLACK_WEBHOOK_URL: slack.url } });
  try {
    for (let i = 0; i < 3; i++) {
      const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('bad-model'), auth);
      assert.equal(r.status, 500);
      const ok = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('ok-model'), auth);
      assert.equal(ok.status, 200);
    }
    const t0 = Date.now();
    while (slack.hits === 0 && Date.now() - t0 < 15000) await sleep(100);
    assert.ok(slack.hits > 0, 'the alert was attempted');
    slack.mode = 'ok';
    // retried with back-off until Slack answers
    await slack.waitFor((m) => m.type === 'llm_exceptions', 30000);
    const rd = await (await fetch(`${gw.url}/health/readiness`)).json();
    assert.ok(rd.logging.sinks.slack.retried >= 1, JSON.stringify(rd.logging));
  } finally {
    assert.equal(await gw.stop(), 0);
    await slack.close();
  }
});

test('no SLACK_WEBHOOK_URL: a warning at start, alerting off, requests fine', async () => {
  const env = { SLACK_WEBHOOK_URL: '' };
  const gw = await startGateway(config(mock.base), { env });
  try {
    assert.match(gw.log(), /SLACK_WEBHOOK_URL is not set/);
    assert.equal((await postJSON(`${gw.url}/v1/chat/completions`, chatBody('bad-model'), auth)).status, 500);
    assert.equal((await postJSON(`${gw.url}/v1/chat/completions`, chatBody('ok-model'), auth)).status, 200);
  } finally {
    assert.equal(await gw.stop(), 0);
  }
});
