// router-headers.test.mjs - the router's response headers and LiteLLM's test
// flags (issue 19, item 6): x-litellm-attempted-retries / -max-retries /
// -timeout / -model-region on JSON, stream and error answers; per-deployment
// litellm_params.num_retries counted at the mock; mock_timeout (408 after the
// attempt's timeout, no upstream call); mock_testing_rate_limit_error (a 429 as
// if from the deployment: the retry or the fallback serves). No timings asserted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertErrorShape, chatBody, postJSON, startGateway, startMock } from '../lib/harness.mjs';

let mock, gw;

function dep(name, model, base, extra = '') {
  return `  - model_name: ${name}\n    litellm_params: {model: "openai/${model}", api_base: "${base}", api_key: sk-x${extra}}\n`;
}

before(async () => {
  mock = await startMock();
  const base = `${mock.url}/v1`;
  let yaml = 'model_list:\n';
  yaml += dep('ok', 'ok-model', base, ', region_name: eu-west, timeout: 42');
  yaml += dep('info-region', 'ir-model', base) + '    model_info: {region_name: us-east}\n';
  yaml += dep('down', 'down@status=500', base);
  yaml += dep('dep-retries', 'dr@status=500', base, ', num_retries: 3');
  yaml += dep('rl', 'rl-model', base, ', num_retries: 2');
  yaml += dep('rl-src', 'rl-src-model', base, ', num_retries: 0');
  yaml += dep('rl-dst', 'rl-dst-model', base);
  yaml += dep('slow', 'slow-model', base, ', timeout: 0.3');
  yaml += dep('dep-mock-timeout', 'dmt-bad', base, ', mock_timeout: true, timeout: 0.2') + dep('dep-mock-timeout', 'dmt-good', base);
  yaml += dep('pair', 'pair-1', base, ', cooldown_time: 60') + dep('pair', 'pair-2', base, ', cooldown_time: 60');
  yaml += `router_settings:
  num_retries: 1
  fallbacks: [{"rl-src": ["rl-dst"]}]
`;
  gw = await startGateway(yaml);
});

after(async () => {
  await gw?.stop();
  await mock?.stop();
});

async function call(model, extra = {}, headers = {}) {
  await mock.reset();
  const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody(model, extra), headers);
  const log = await mock.requests();
  const models = log.filter((q) => q.path.includes('/chat/completions')).map((q) => JSON.parse(q.body).model.split('@')[0]);
  return { ...r, models };
}

test('JSON success on the first attempt: attempted-retries 0, no max-retries, timeout and region', async () => {
  const r = await call('ok');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-litellm-attempted-retries'), '0');
  assert.equal(r.headers.get('x-litellm-max-retries'), null);
  assert.equal(r.headers.get('x-litellm-timeout'), '42.0');
  assert.equal(r.headers.get('x-litellm-model-region'), 'eu-west');
  assert.deepEqual(r.models, ['ok-model']);
});

test('model_info.region_name is the region when litellm_params has none', async () => {
  const r = await call('info-region');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-litellm-model-region'), 'us-east');
});

test('the request timeout (body or x-litellm-timeout) is echoed', async () => {
  let r = await call('ok', { timeout: 7.5 });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-litellm-timeout'), '7.5');
  r = await call('ok', {}, { 'x-litellm-timeout': '9' });
  assert.equal(r.headers.get('x-litellm-timeout'), '9.0');
});

test('stream answers carry the router headers', async () => {
  const r = await call('ok', { stream: true });
  assert.equal(r.status, 200, r.text);
  assert.match(r.text, /data: \[DONE\]/);
  assert.equal(r.headers.get('x-litellm-attempted-retries'), '0');
  assert.equal(r.headers.get('x-litellm-timeout'), '42.0');
  assert.equal(r.headers.get('x-litellm-model-region'), 'eu-west');
});

test('an error after retries: attempted-retries and max-retries on the error answer', async () => {
  const r = await call('down');
  assertErrorShape(assert, r, 500);
  assert.deepEqual(r.models, ['down', 'down']);
  assert.equal(r.headers.get('x-litellm-attempted-retries'), '1');
  assert.equal(r.headers.get('x-litellm-max-retries'), '1');
});

test('a stream that fails before its first byte carries them too', async () => {
  const r = await call('down', { stream: true });
  assertErrorShape(assert, r, 500);
  assert.equal(r.headers.get('x-litellm-attempted-retries'), '1');
  assert.equal(r.headers.get('x-litellm-max-retries'), '1');
});

test('litellm_params.num_retries replaces the router count for that deployment', async () => {
  const r = await call('dep-retries');
  assertErrorShape(assert, r, 500);
  assert.equal(r.models.length, 4, `upstream calls: ${r.models}`);
  assert.equal(r.headers.get('x-litellm-attempted-retries'), '3');
  assert.equal(r.headers.get('x-litellm-max-retries'), '3');
  // the request's num_retries still wins
  const q = await call('dep-retries', { num_retries: 0 });
  assertErrorShape(assert, q, 500);
  assert.equal(q.models.length, 1);
  assert.equal(q.headers.get('x-litellm-max-retries'), '0');
});

test('mock_timeout: 408 Timeout after the request timeout, no upstream call, timeout echoed', async () => {
  const r = await call('ok', { mock_timeout: true, timeout: 0.2, num_retries: 0 });
  assertErrorShape(assert, r, 408);
  assert.equal(r.json.error.message, 'litellm.Timeout: This is a mock timeout error');
  assert.deepEqual(r.models, []);
  assert.equal(r.headers.get('x-litellm-timeout'), '0.2');
  assert.equal(r.headers.get('x-litellm-attempted-retries'), '0');
  assert.equal(r.headers.get('x-litellm-max-retries'), '0');
});

test('mock_timeout uses the deployment timeout and is retried like a real timeout', async () => {
  const r = await call('slow', { mock_timeout: true });
  assertErrorShape(assert, r, 408);
  assert.deepEqual(r.models, []);
  assert.equal(r.headers.get('x-litellm-timeout'), '0.3');
  assert.equal(r.headers.get('x-litellm-attempted-retries'), '1');
  // mock_timeout: false is a normal call, and the flag never reaches the upstream
  const q = await call('slow', { mock_timeout: false });
  assert.equal(q.status, 200, q.text);
  const log = await mock.requests();
  assert.ok(!log.some((x) => x.body.includes('mock_timeout')));
});

test('litellm_params.mock_timeout: that deployment times out, the retry goes to the other', async () => {
  for (let i = 0; i < 4; i++) {
    const r = await call('dep-mock-timeout');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.models, ['dmt-good']); // the mock one is never called upstream
  }
});

test('mock_testing_rate_limit_error: the first attempt is a 429, the retry serves', async () => {
  const r = await call('rl', { mock_testing_rate_limit_error: true });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.models, ['rl-model']);
  assert.equal(r.headers.get('x-litellm-attempted-retries'), '1');
  assert.equal(r.headers.get('x-litellm-max-retries'), '2');
  const log = await mock.requests();
  assert.ok(!log.some((x) => x.body.includes('mock_testing_rate_limit_error')));
});

test('mock_testing_rate_limit_error with no retries runs the fallback', async () => {
  const r = await call('rl-src', { mock_testing_rate_limit_error: true });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.models, ['rl-dst-model']);
  assert.equal(r.headers.get('x-litellm-attempted-fallbacks'), '1');
  assert.equal(r.headers.get('x-litellm-model-group'), 'rl-dst');
  // without fallbacks the client gets LiteLLM's RateLimitError
  const q = await call('rl-src', { mock_testing_rate_limit_error: true, disable_fallbacks: true });
  assertErrorShape(assert, q, 429);
  assert.match(q.json.error.message, /^litellm\.RateLimitError: This is a mock exception for model=rl-src, to trigger a rate limit error\./);
  assert.deepEqual(q.models, []);
});

test('mock_testing_rate_limit_error cools the deployment down in a group of several', async () => {
  const r = await call('pair', { mock_testing_rate_limit_error: true });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.models.length, 1);
  const other = r.models[0];
  assert.equal(r.headers.get('x-litellm-attempted-retries'), '1');
  // the deployment that "answered" 429 is in cooldown: every later request goes to the other one
  for (let i = 0; i < 6; i++) {
    const q = await call('pair');
    assert.equal(q.status, 200, q.text);
    assert.deepEqual(q.models, [other]);
  }
});

test('the flags must be booleans', async () => {
  for (const k of ['mock_timeout', 'mock_testing_rate_limit_error']) {
    const r = await call('ok', { [k]: 'yes' });
    assertErrorShape(assert, r, 400);
    assert.equal(r.json.error.param, k);
    assert.deepEqual(r.models, []);
  }
});
