// router-faults.test.mjs - the router's fault matrix (issue 7): one case per
// upstream fault, for a single deployment and for a group with fallbacks,
// asserting the status and body the client gets, how many upstream attempts
// were made and to which deployments, and the cooldown state after.
// Faults are pinned per deployment with the mock's model-name directives
// ("m@status=429"); each case has its own groups so cooldowns do not leak.
// No timings are asserted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertErrorShape, chatBody, postJSON, startGateway, startMock } from '../lib/harness.mjs';

let mock, gw;

const FAULTS = {
  r429: 'status=429',
  r429ra: 'status=429,retry_after=1',
  r500: 'status=500',
  r503: 'status=503',
  r408: 'delay_ms=3000',
  refused: null, // api_base points at a closed port
  reset: 'close_without_response=true',
  ctx: 'status=400,error_code=context_length_exceeded,error_message=This model\'s maximum context length is 10 tokens',
  policy: 'status=400,error_code=content_policy_violation,error_message=Your request was rejected by our content management policy',
  r401: 'status=401',
};

function dep(name, model, base, extra = '') {
  return `  - model_name: ${name}\n    litellm_params: {model: "openai/${model}", api_base: "${base}", api_key: sk-x${extra}}\n`;
}

before(async () => {
  mock = await startMock();
  const base = `${mock.url}/v1`;
  let yaml = 'model_list:\n';
  const fallbacks = [];
  for (const [k, f] of Object.entries(FAULTS)) {
    const model = f ? `bad-${k}@${f}` : `bad-${k}`;
    const b = f ? base : 'http://127.0.0.1:9/v1';
    const extra = k === 'r408' ? ', timeout: 0.5' : '';
    yaml += dep(`single-${k}`, model, b, extra);
    yaml += dep(`fb-${k}`, model, b, extra);
    yaml += dep(`good-${k}`, `good-${k}`, base);
    fallbacks.push(`{"fb-${k}": ["good-${k}"]}`);
  }
  // context-window / content-policy fallbacks take their own lists
  yaml += dep('cw-src', `bad-cw@${FAULTS.ctx}`, base) + dep('cw-big', 'cw-big', base);
  yaml += dep('cp-src', `bad-cp@${FAULTS.policy}`, base) + dep('cp-alt', 'cp-alt', base);
  // a group of two where one deployment rate-limits: it cools down, the retry goes to the other
  yaml += dep('pair', 'pair-bad@status=429', base) + dep('pair', 'pair-good', base);
  // litellm_params.max_retries: the SDK's own retries on the same deployment
  yaml += dep('sdkretry', 'sdk-bad@status=500', base, ', max_retries: 2');
  // one slot only: any leaked in-flight count would make it refuse later requests
  yaml += dep('slot', 'slot', base, ', max_parallel_requests: 1, timeout: 0.5');
  // a group of two where one deployment is down
  yaml += dep('pair500', 'p5-bad@status=500', base) + dep('pair500', 'p5-good', base);
  yaml += `router_settings:
  num_retries: 1
  cooldown_time: 30
  fallbacks: [${fallbacks.join(', ')}]
  context_window_fallbacks: [{"cw-src": ["cw-big"]}]
  content_policy_fallbacks: [{"cp-src": ["cp-alt"]}]
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

const count = (arr, m) => arr.filter((x) => x === m).length;

// ---- single deployment, no fallbacks -----------------------------------------

test('single: 429 without retry-after -> retried once (back-off), then 429', async () => {
  const r = await call('single-r429');
  assertErrorShape(assert, r, 429);
  assert.match(r.json.error.message, /RateLimitError/);
  assert.equal(count(r.models, 'bad-r429'), 2);
  assert.equal(r.headers.get('x-litellm-attempted-retries'), '1');
});

test('single: 429 with retry-after -> retried after it, retry-after passed on', async () => {
  const r = await call('single-r429ra');
  assertErrorShape(assert, r, 429);
  assert.equal(count(r.models, 'bad-r429ra'), 2);
  assert.equal(r.headers.get('retry-after'), '1');
});

test('single: 500 and 503 -> retried, status kept', async () => {
  for (const [k, st] of [['r500', 500], ['r503', 503]]) {
    const r = await call(`single-${k}`);
    assertErrorShape(assert, r, st);
    assert.equal(count(r.models, `bad-${k}`), 2, k);
  }
});

test('single: timeout -> 408 Timeout, retried', async () => {
  const r = await call('single-r408');
  assertErrorShape(assert, r, 408);
  assert.match(r.json.error.message, /Timeout/);
  assert.equal(count(r.models, 'bad-r408'), 2);
});

test('single: connection refused -> 500 APIConnectionError', async () => {
  const r = await call('single-refused');
  assertErrorShape(assert, r, 500);
  assert.match(r.json.error.message, /APIConnectionError/);
  assert.equal(r.headers.get('x-litellm-attempted-retries'), '1');
});

test('single: reset before the first byte -> 500, retried', async () => {
  const r = await call('single-reset');
  assertErrorShape(assert, r, 500);
  assert.equal(count(r.models, 'bad-reset'), 2);
});

test('single: reset mid-stream -> 200, SSE error frame, [DONE]; no retry', async () => {
  await mock.reset();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chatBody('single-r500', { stream: true, mock: { status: 200, chunks: 10, reset_after_chunks: 3 } })),
  });
  assert.equal(res.status, 200);
  const events = (await res.text()).split('\n\n').filter(Boolean);
  assert.equal(events.at(-1), 'data: [DONE]');
  assert.ok(JSON.parse(events.at(-2).slice(6)).error);
  const log = await mock.requests();
  assert.equal(log.filter((q) => q.path.includes('/chat/completions')).length, 1);
});

test('single: context-window error -> 400 ContextWindowExceededError, not retried', async () => {
  const r = await call('single-ctx');
  assertErrorShape(assert, r, 400);
  assert.match(r.json.error.message, /ContextWindowExceededError/);
  assert.equal(r.json.error.openai_code, 'context_length_exceeded');
  assert.equal(count(r.models, 'bad-ctx'), 1);
});

test('single: content-policy error -> 400 ContentPolicyViolationError, not retried', async () => {
  const r = await call('single-policy');
  assertErrorShape(assert, r, 400);
  assert.match(r.json.error.message, /ContentPolicyViolationError/);
  assert.equal(count(r.models, 'bad-policy'), 1);
});

test('single: 401 -> 401, not retried, deployment cooled down -> next call 429 No deployments available', async () => {
  const r = await call('single-r401');
  assertErrorShape(assert, r, 401);
  assert.equal(count(r.models, 'bad-r401'), 1);
  const r2 = await call('single-r401');
  assertErrorShape(assert, r2, 429);
  assert.match(r2.json.error.message, /No deployments available for selected model/);
  assert.match(r2.json.error.message, /cooldown_list=\['/);
  assert.ok(Number(r2.headers.get('retry-after')) >= 1);
  assert.equal(r2.models.length, 0);
});

// ---- with fallbacks -------------------------------------------------------------

for (const k of ['r429', 'r429ra', 'r500', 'r503', 'r408', 'refused', 'reset', 'r401']) {
  test(`fallback: ${k} -> the fallback group answers 200`, async () => {
    const r = await call(`fb-${k}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-litellm-attempted-fallbacks'), '1');
    assert.equal(r.headers.get('x-litellm-model-group'), `good-${k}`);
    assert.equal(count(r.models, `good-${k}`), 1);
    if (k !== 'refused') {
      const expect = k === 'r401' ? 1 : 2; // 401 in a group of one is not retried
      const n = count(r.models, `bad-${k}`);
      // a keep-alive connection closed without a response is re-sent once on a fresh one by the
      // upstream client (the stale keep-alive race), so a reset may show one more request
      if (k === 'reset') assert.ok(n >= expect && n <= 2 * expect, `attempts to bad-${k}: ${r.models}`);
      else assert.equal(n, expect, `attempts to bad-${k}: ${r.models}`);
    }
  });
}

test('fallback: context-window error goes straight to context_window_fallbacks (no retry)', async () => {
  const r = await call('cw-src');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.models, ['bad-cw', 'cw-big']);
  assert.equal(r.headers.get('x-litellm-attempted-fallbacks'), '1');
});

test('fallback: content-policy error goes straight to content_policy_fallbacks', async () => {
  const r = await call('cp-src');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.models, ['bad-cp', 'cp-alt']);
});

test('fallback: disable_fallbacks in the body turns them off (and is not forwarded)', async () => {
  const r = await call('fb-r500', { disable_fallbacks: true });
  assertErrorShape(assert, r, 500);
  assert.equal(count(r.models, 'good-r500'), 0);
  const log = await mock.requests();
  assert.ok(!log.some((q) => q.body.includes('disable_fallbacks')));
});

test('fallback: request fallbacks replace the configured ones', async () => {
  const r = await call('single-r500', { fallbacks: ['good-r503'], num_retries: 0 });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.models, ['bad-r500', 'good-r503']);
  const log = await mock.requests();
  assert.ok(!log.some((q) => /"fallbacks"|"num_retries"/.test(q.body)));
});

test('request num_retries and x-litellm-num-retries override the config', async () => {
  let r = await call('single-r503', { num_retries: 0 });
  assert.equal(count(r.models, 'bad-r503'), 1);
  r = await call('single-r503', {}, { 'x-litellm-num-retries': '2' });
  assert.equal(count(r.models, 'bad-r503'), 3);
});

test('litellm_params.max_retries: retried on the same deployment before the router sees the error', async () => {
  const r = await call('sdkretry', { num_retries: 0 });
  assertErrorShape(assert, r, 500);
  assert.equal(count(r.models, 'sdk-bad'), 3);
  assert.equal(r.headers.get('x-litellm-attempted-retries'), '0'); // SDK retries are not router retries
});

test('in-flight slots are given back on every ending: errors, resets, timeouts, vanished clients', async () => {
  const faults = [{ status: 500 }, { status: 429 }, { close_without_response: true }, { delay_ms: 2000 },
    { chunks: 10, reset_after_chunks: 2 }];
  for (const mockf of faults) {
    await postJSON(`${gw.url}/v1/chat/completions`, chatBody('slot', { mock: mockf, num_retries: 0, disable_fallbacks: true }));
    await postJSON(`${gw.url}/v1/chat/completions`,
      chatBody('slot', { stream: true, mock: mockf, num_retries: 0, disable_fallbacks: true }));
  }
  for (const when of [0, 30]) { // a client that goes away before the head, and mid-stream
    const ac = new AbortController();
    const p = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, signal: ac.signal,
      body: JSON.stringify(chatBody('slot', { stream: true, mock: { chunks: 50, chunk_delay_ms: 20, delay_ms: when ? 0 : 100 } })),
    }).then((r) => r.body?.getReader().read()).catch(() => {});
    await new Promise((r) => setTimeout(r, 50 + when));
    ac.abort();
    await p;
  }
  let ok = false;
  for (let i = 0; i < 40 && !ok; i++) { // the aborted ones end asynchronously: poll
    ok = (await postJSON(`${gw.url}/v1/chat/completions`, chatBody('slot'))).status === 200;
    if (!ok) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(ok, 'the single slot is free again');
  const res = await Promise.all([1, 2].map(() => postJSON(`${gw.url}/v1/chat/completions`, chatBody('slot', { mock: { delay_ms: 200 } }))));
  assert.deepEqual(res.map((r) => r.status).sort(), [200, 429], 'and still exactly one');
});

// ---- groups of several deployments ---------------------------------------------

test('group: 429 cools the deployment down at once; the retry (no wait) and later calls go to the other', async () => {
  let r;
  for (let i = 0; i < 20 && !(r && r.models.includes('pair-bad')); i++) r = await call('pair');
  assert.equal(r.status, 200);
  assert.deepEqual(r.models, ['pair-bad', 'pair-good']);
  assert.equal(r.headers.get('x-litellm-attempted-retries'), '1');
  for (let i = 0; i < 10; i++) {
    const q = await call('pair');
    assert.equal(q.status, 200);
    assert.deepEqual(q.models, ['pair-good']);
  }
  const m = await (await fetch(`${gw.url}/metrics`)).text();
  assert.match(m, /litellm_deployment_cooled_down_total\{[^}]*exception_status="429"[^}]*\} 1/);
});

test('group: a failing deployment is retried on the healthy one; > 50% failures cool it down', async () => {
  for (let i = 0; i < 30; i++) {
    const r = await call('pair500');
    assert.equal(r.status, 200, r.text);
  }
  // after the failure-rate rule fires, the bad one gets no traffic
  let bad = 0;
  for (let i = 0; i < 10; i++) bad += count((await call('pair500')).models, 'p5-bad');
  assert.equal(bad, 0);
});

test('mock_testing_fallbacks: the requested group fails untried and its fallbacks answer', async () => {
  const r = await call('fb-r500', { mock_testing_fallbacks: true });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.models, ['good-r500']);
  assert.equal(r.headers.get('x-litellm-attempted-fallbacks'), '1');
  const r2 = await call('single-r500', { mock_testing_fallbacks: true });
  assertErrorShape(assert, r2, 500);
  assert.match(r2.json.error.message, /mock exception for model=single-r500/);
  assert.equal(r2.models.length, 0);
});

test('x-litellm-timeout and x-litellm-stream-timeout bound the attempt (408)', async () => {
  let r = await call('good-r500', { mock: { delay_ms: 3000 }, num_retries: 0, disable_fallbacks: true }, { 'x-litellm-timeout': '0.3' });
  assertErrorShape(assert, r, 408);
  assert.match(r.json.error.message, /timed out after 0\.3 seconds/);
  r = await call('good-r503', { stream: true, mock: { delay_ms: 3000 }, num_retries: 0 }, { 'x-litellm-stream-timeout': '0.3' });
  assertErrorShape(assert, r, 408);
});
