// settings-view.test.mjs - GET /switchyard/settings (admin/settings.c), the
// Settings page's data: what is in force, grouped, with no secret in it.
// The config carries secrets in every place one can hide (the master key, a
// deployment's api_key, a guardrail's api_key and headers, an os.environ/
// value, the database URL, alerting's webhook); the answer is searched for
// each. proxy_admin_viewer may read it; an internal user may not.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MASTER_KEY, api, startGateway, startMock } from '../lib/harness.mjs';

const SECRETS = ['sk-upstream-secret-1', 'sk-guard-secret-2', 'hdr-secret-3', 'env-secret-4', 'slack-secret-5',
  MASTER_KEY];
let mock, g;

before(async () => {
  mock = await startMock();
  g = await startGateway(`
model_list:
  - model_name: m1
    litellm_params: {model: openai/m1, api_base: "${mock.base}", api_key: sk-upstream-secret-1}
  - model_name: m2
    litellm_params: {model: openai/m2, api_base: "${mock.base}", api_key: os.environ/SETTINGS_TEST_KEY}
guardrails:
  - guardrail_name: g-check
    litellm_params:
      guardrail: generic_guardrail_api
      mode: [pre_call, post_call]
      api_base: "${mock.url}"
      api_key: sk-guard-secret-2
      headers: {x-extra: hdr-secret-3}
      default_on: true
router_settings:
  routing_strategy: least-busy
  num_retries: 2
  timeout: 30
  cooldown_time: 7
  allowed_fails: 3
  fallbacks: [{m1: [m2]}]
litellm_settings:
  success_callback: [prometheus]
  drop_params: true
  cache: true
  cache_params: {type: local, ttl: 120}
general_settings:
  master_key: ${MASTER_KEY}
  alerting: [slack]
  alerting_args: {webhook: "https://hooks.example/slack-secret-5"}
`, { env: { SETTINGS_TEST_KEY: 'env-secret-4', SLACK_WEBHOOK_URL: 'https://hooks.example/slack-secret-5' } });
});
after(async () => {
  await g?.stop();
  await mock?.stop();
});

const A = (method, p, body) => api(g.url, MASTER_KEY, method, p, body);

test('the settings in force, grouped', async () => {
  const r = await A('GET', '/switchyard/settings');
  assert.equal(r.status, 200, r.text);
  const s = r.json;
  assert.equal(s.router_settings.routing_strategy, 'least-busy');
  assert.equal(s.router_settings.num_retries, 2);
  assert.equal(s.router_settings.timeout, 30);
  assert.equal(s.router_settings.cooldown_time, 7);
  assert.equal(s.router_settings.allowed_fails, 3);
  assert.deepEqual(s.router_settings.fallbacks, [{ m1: ['m2'] }]);
  assert.ok(s.litellm_settings.callbacks.includes('prometheus'), r.text);
  assert.equal(s.litellm_settings.drop_params, true);
  assert.deepEqual([s.cache.type, s.cache.ttl], ['local', 120]);
  assert.deepEqual(s.guardrails, [{ guardrail_name: 'g-check', guardrail: 'generic_guardrail_api',
    mode: ['pre_call', 'post_call'], default_on: true }]);
  assert.equal(s.general_settings.master_key, '<redacted>');
  assert.deepEqual(s.general_settings.alerting, ['slack']);
  assert.equal(s.models, 2);
});

test('no secret appears anywhere in the answer', async () => {
  const r = await A('GET', '/switchyard/settings');
  assert.equal(r.status, 200);
  for (const secret of SECRETS) assert.ok(!r.text.includes(secret), `leaked ${secret}`);
  assert.ok(!/hooks\.example/.test(r.text), 'the webhook URL stays out');
});

test('proxy_admin_viewer may read; an internal user and a bad key may not; it is read-only', async () => {
  let u = await A('POST', '/user/new', { user_id: 'sv-viewer', user_role: 'proxy_admin_viewer' });
  assert.equal(u.status, 200, u.text);
  const viewer = (await A('POST', '/key/generate', { user_id: 'sv-viewer' })).json.key;
  u = await A('POST', '/user/new', { user_id: 'sv-user', user_role: 'internal_user' });
  assert.equal(u.status, 200, u.text);
  const internal = (await A('POST', '/key/generate', { user_id: 'sv-user' })).json.key;
  let r = await api(g.url, viewer, 'GET', '/switchyard/settings');
  assert.equal(r.status, 200, r.text);
  for (const secret of SECRETS) assert.ok(!r.text.includes(secret), `leaked ${secret} to the viewer`);
  r = await api(g.url, internal, 'GET', '/switchyard/settings');
  assert.ok(r.status === 401 || r.status === 403, `${r.status} ${r.text}`);
  assert.ok(r.json.error.message, r.text);
  assert.ok(!r.text.includes('least-busy'));
  r = await api(g.url, 'sk-nobody', 'GET', '/switchyard/settings');
  assert.equal(r.status, 401, r.text);
  r = await A('POST', '/switchyard/settings', {});
  assert.ok(r.status === 405 || r.status === 404, `${r.status} ${r.text}`);
});
