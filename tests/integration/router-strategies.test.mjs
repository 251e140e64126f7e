// router-strategies.test.mjs - what each routing strategy and selection rule
// does, measured over many picks against the mock upstream (issue 7):
// weights, least-busy under load, latency preferring the fast deployment,
// usage-based skipping the full one, cost, order, wildcards, aliases,
// max_parallel_requests and pre-call context checks. Distributions are
// asserted with tolerances; no timings are asserted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertErrorShape, chatBody, postJSON, startGateway, startMock } from '../lib/harness.mjs';

let mock;
const gws = [];

before(async () => { mock = await startMock(); });
after(async () => {
  for (const g of gws) await g.stop();
  await mock?.stop();
});

async function gateway(body) {
  const g = await startGateway(body.replaceAll('BASE', `${mock.url}/v1`));
  gws.push(g);
  return g;
}

async function models(fn) {
  await mock.reset();
  await fn();
  const log = await mock.requests();
  return log.filter((q) => q.path.includes('/chat/completions')).map((q) => JSON.parse(q.body).model.split('@')[0]);
}

async function requestsAll(fn) { // the mock log keeps 100: count by page
  const seen = [];
  for (let done = 0; done < fn.length; done += 50) {
    seen.push(...await models(async () => { for (const f of fn.slice(done, done + 50)) await f(); }));
  }
  return seen;
}

const tally = (arr) => arr.reduce((m, x) => ((m[x] = (m[x] || 0) + 1), m), {});
const chat = (g, model, extra = {}) => postJSON(`${g.url}/v1/chat/completions`, chatBody(model, extra));

test('simple-shuffle: picks follow weight (1:3) within tolerance', async () => {
  const g = await gateway(`
model_list:
  - {model_name: w, litellm_params: {model: openai/w1, api_base: BASE, weight: 1}}
  - {model_name: w, litellm_params: {model: openai/w3, api_base: BASE, weight: 3}}
`);
  const calls = Array.from({ length: 400 }, () => () => chat(g, 'w'));
  const t = tally(await requestsAll(calls));
  const share = t.w3 / (t.w1 + t.w3);
  assert.ok(share > 0.66 && share < 0.84, `w3 share ${share} (${JSON.stringify(t)})`);
});

test('simple-shuffle: rpm is the weight when no weight is set', async () => {
  const g = await gateway(`
model_list:
  - {model_name: r, litellm_params: {model: openai/r100, api_base: BASE, rpm: 100}}
  - {model_name: r, litellm_params: {model: openai/r900, api_base: BASE, rpm: 900}}
`);
  const t = tally(await requestsAll(Array.from({ length: 200 }, () => () => chat(g, 'r'))));
  assert.ok(t.r900 / 200 > 0.8, JSON.stringify(t));
});

test('least-busy: under concurrent load the slow deployment gets fewer requests', async () => {
  const g = await gateway(`
model_list:
  - {model_name: lb, litellm_params: {model: "openai/slow@delay_ms=150", api_base: BASE}}
  - {model_name: lb, litellm_params: {model: openai/fast, api_base: BASE}}
router_settings: {routing_strategy: least-busy}
`);
  const seen = await models(async () => {
    const worker = async () => { for (let i = 0; i < 12; i++) await chat(g, 'lb'); };
    await Promise.all(Array.from({ length: 6 }, worker));
  });
  const t = tally(seen);
  assert.ok(t.fast > 2 * (t.slow || 0), JSON.stringify(t));
});

test('latency-based-routing: prefers the fast deployment once both were tried', async () => {
  const g = await gateway(`
model_list:
  - {model_name: lat, litellm_params: {model: "openai/slow@delay_ms=120", api_base: BASE}}
  - {model_name: lat, litellm_params: {model: openai/fast, api_base: BASE}}
router_settings: {routing_strategy: latency-based-routing}
`);
  const seen = await models(async () => { for (let i = 0; i < 30; i++) await chat(g, 'lat'); });
  const t = tally(seen);
  assert.ok(t.fast >= 25, JSON.stringify(t));
  assert.ok(t.slow >= 1, 'an untried deployment counts as 0 and gets tried');
});

test('usage-based-routing-v2: skips the deployment whose rpm is used up; none left -> 429', async () => {
  const g = await gateway(`
model_list:
  - {model_name: u, litellm_params: {model: openai/small, api_base: BASE, rpm: 3}}
  - {model_name: u, litellm_params: {model: openai/big, api_base: BASE, rpm: 7}}
router_settings: {routing_strategy: usage-based-routing-v2, num_retries: 0}
`);
  const res = await Promise.all(Array.from({ length: 16 }, () => chat(g, 'u')));
  const ok = res.filter((r) => r.status === 200).length;
  assert.equal(ok, 10, res.map((r) => r.status).join(','));
  const limited = res.filter((r) => r.status === 429);
  assert.equal(limited.length, 6);
  assertErrorShape(assert, limited[0], 429);
  assert.match(limited[0].json.error.message, /No deployments available/);
  assert.ok(limited[0].headers.get('retry-after'));
});

test('usage-based-routing-v2: picks the deployment with the lowest tpm used', async () => {
  const g = await gateway(`
model_list:
  - {model_name: t, litellm_params: {model: openai/t1, api_base: BASE, tpm: 1000000}}
  - {model_name: t, litellm_params: {model: openai/t2, api_base: BASE, tpm: 1000000}}
router_settings: {routing_strategy: usage-based-routing-v2}
`);
  const t = tally(await models(async () => { for (let i = 0; i < 20; i++) await chat(g, 't'); }));
  assert.ok(Math.abs(t.t1 - t.t2) <= 2, `alternates by tokens used: ${JSON.stringify(t)}`);
});

test('cost-based-routing: the cheapest deployment wins', async () => {
  const g = await gateway(`
model_list:
  - {model_name: c, litellm_params: {model: openai/dear, api_base: BASE, input_cost_per_token: 0.00001, output_cost_per_token: 0.00003}}
  - {model_name: c, litellm_params: {model: openai/cheap, api_base: BASE, input_cost_per_token: 0.0000001, output_cost_per_token: 0.0000004}}
router_settings: {routing_strategy: cost-based-routing}
`);
  const t = tally(await models(async () => { for (let i = 0; i < 10; i++) await chat(g, 'c'); }));
  assert.deepEqual(t, { cheap: 10 });
});

test('order: order 1 serves; when it cools down, order 2 takes over', async () => {
  const g = await gateway(`
model_list:
  - {model_name: o, litellm_params: {model: "openai/first", api_base: BASE, order: 1}}
  - {model_name: o, litellm_params: {model: openai/second, api_base: BASE, order: 2}}
  - {model_name: o2, litellm_params: {model: "openai/first2@status=429", api_base: BASE, order: 1}}
  - {model_name: o2, litellm_params: {model: openai/second2, api_base: BASE, order: 2}}
`);
  assert.deepEqual(tally(await models(async () => { for (let i = 0; i < 8; i++) await chat(g, 'o'); })), { first: 8 });
  const r = await chat(g, 'o2');
  assert.equal(r.status, 200);
  assert.deepEqual(tally(await models(async () => { for (let i = 0; i < 5; i++) await chat(g, 'o2'); })), { second2: 5 });
});

test('wildcard groups forward the requested model; aliases resolve and are listed', async () => {
  const g = await gateway(`
model_list:
  - {model_name: "openai/*", litellm_params: {model: "openai/*", api_base: BASE}}
  - {model_name: "*", litellm_params: {model: "openai/*", api_base: BASE}}
  - {model_name: real, litellm_params: {model: openai/real-upstream, api_base: BASE}}
router_settings:
  model_group_alias: {nick: real, secret: {model: real, hidden: true}}
`);
  let seen = await models(async () => {
    assert.equal((await chat(g, 'openai/gpt-4o-mini')).status, 200);
    assert.equal((await chat(g, 'some-other-model')).status, 200);
    assert.equal((await chat(g, 'nick')).status, 200);
    assert.equal((await chat(g, 'secret')).status, 200);
  });
  assert.deepEqual(seen, ['gpt-4o-mini', 'some-other-model', 'real-upstream', 'real-upstream']);
  const list = (await (await fetch(`${g.url}/v1/models`)).json()).data.map((m) => m.id);
  assert.ok(list.includes('nick') && !list.includes('secret'), list.join(','));
});

test('max_parallel_requests: a deployment at its cap is skipped; none left -> 429', async () => {
  const g = await gateway(`
model_list:
  - {model_name: p, litellm_params: {model: "openai/p@delay_ms=300", api_base: BASE, max_parallel_requests: 2}}
router_settings: {num_retries: 0}
`);
  const res = await Promise.all(Array.from({ length: 5 }, () => chat(g, 'p')));
  assert.equal(res.filter((r) => r.status === 200).length, 2, res.map((r) => r.status).join(','));
  assert.equal(res.filter((r) => r.status === 429).length, 3);
});

test('pre-call checks: a prompt over max_input_tokens goes to a deployment it fits; none fits -> context_window_fallbacks', async () => {
  const g = await gateway(`
model_list:
  - {model_name: cw, litellm_params: {model: openai/tiny, api_base: BASE}, model_info: {max_input_tokens: 20}}
  - {model_name: cw, litellm_params: {model: openai/huge, api_base: BASE}, model_info: {max_input_tokens: 100000}}
  - {model_name: tinyonly, litellm_params: {model: openai/tiny2, api_base: BASE}, model_info: {max_input_tokens: 20}}
  - {model_name: bigger, litellm_params: {model: openai/bigger, api_base: BASE}}
  - {model_name: nofb, litellm_params: {model: openai/tiny3, api_base: BASE}, model_info: {max_input_tokens: 20}}
router_settings:
  enable_pre_call_checks: true
  context_window_fallbacks: [{tinyonly: [bigger]}]
`);
  const long = { messages: [{ role: 'user', content: 'word '.repeat(200) }] };
  const seen = await models(async () => {
    for (let i = 0; i < 5; i++) assert.equal((await chat(g, 'cw', long)).status, 200);
    assert.equal((await chat(g, 'tinyonly', long)).status, 200);
  });
  assert.deepEqual(tally(seen), { huge: 5, bigger: 1 });
  const r = await chat(g, 'nofb', long);
  assertErrorShape(assert, r, 400);
  assert.match(r.json.error.message, /ContextWindowExceededError/);
});

test('cooldown policy: allowed_fails (legacy), a deployment cooldown_time of 0, disable_cooldowns', async () => {
  const g = await gateway(`
model_list:
  - {model_name: af, litellm_params: {model: "openai/af-bad@status=500", api_base: BASE}}
  - {model_name: af, litellm_params: {model: openai/af-good, api_base: BASE}}
  - {model_name: never, litellm_params: {model: "openai/nv-bad@status=429", api_base: BASE, cooldown_time: 0}}
  - {model_name: never, litellm_params: {model: openai/nv-good, api_base: BASE}}
router_settings: {allowed_fails: 2, num_retries: 1}
`);
  // legacy mode: the third failure this minute (> allowed_fails) cools af-bad down
  let bad = 0;
  for (let i = 0; i < 40 && bad < 3; i++) bad += (await models(() => chat(g, 'af'))).filter((m) => m === 'af-bad').length;
  assert.equal(bad, 3);
  assert.deepEqual(tally(await models(async () => { for (let i = 0; i < 10; i++) await chat(g, 'af'); })), { 'af-good': 10 });
  // cooldown_time: 0 on a deployment: its 429s never cool it down
  const seen = await models(async () => { for (let i = 0; i < 40; i++) await chat(g, 'never'); });
  assert.ok(tally(seen)['nv-bad'] >= 5, JSON.stringify(tally(seen)));
  const g2 = await gateway(`
model_list:
  - {model_name: dc, litellm_params: {model: "openai/dc-bad@status=429", api_base: BASE}}
  - {model_name: dc, litellm_params: {model: openai/dc-good, api_base: BASE}}
router_settings: {disable_cooldowns: true}
`);
  const s2 = await models(async () => { for (let i = 0; i < 40; i++) await chat(g2, 'dc'); });
  assert.ok(tally(s2)['dc-bad'] >= 5, JSON.stringify(tally(s2)));
});
