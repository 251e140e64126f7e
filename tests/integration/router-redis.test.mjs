// router-redis.test.mjs - two switchyard instances sharing router state
// through a real Redis (Debian's redis-server, started here) (issue 7):
// a cooldown set by one is honoured by the other, usage-based rpm limits hold
// for the pair, and killing Redis mid-load loses no request (both serve on
// local state and /health/readiness says so). No timings are asserted;
// waits are bounded polls.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { chatBody, postJSON, startGateway, startMock, startRedis } from '../lib/harness.mjs';

let mock, redis, a, b;

before(async () => {
  mock = await startMock();
  redis = await startRedis();
  const cfg = `
model_list:
  - {model_name: pair, litellm_params: {model: "openai/pair-bad@status=429", api_base: ${mock.url}/v1}}
  - {model_name: pair, litellm_params: {model: openai/pair-good, api_base: ${mock.url}/v1}}
  - {model_name: pair2, litellm_params: {model: "openai/pair2-bad@status=429", api_base: ${mock.url}/v1}}
  - {model_name: pair2, litellm_params: {model: openai/pair2-good, api_base: ${mock.url}/v1}}
  - {model_name: lim, litellm_params: {model: openai/lim, api_base: ${mock.url}/v1, rpm: 10}}
  - {model_name: ok, litellm_params: {model: openai/ok, api_base: ${mock.url}/v1}}
router_settings:
  routing_strategy: usage-based-routing-v2
  num_retries: 0
  cooldown_time: 60
  redis_host: 127.0.0.1
  redis_port: ${redis.port}
`;
  a = await startGateway(cfg, { workers: 2 });
  b = await startGateway(cfg, { workers: 2 });
});

after(async () => {
  await a?.stop();
  await b?.stop();
  await redis?.stop();
  await mock?.stop();
});

const chat = (g, model) => postJSON(`${g.url}/v1/chat/completions`, chatBody(model));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(fn, ms = 10000) {
  const end = Date.now() + ms;
  while (Date.now() < end) { if (await fn()) return true; await sleep(50); }
  return false;
}

async function sent(fn) {
  await mock.reset();
  await fn();
  return (await mock.requests()).filter((q) => q.path.includes('/chat/completions')).map((q) => JSON.parse(q.body).model.split('@')[0]);
}

test('readiness reports Redis connected on both instances', async () => {
  for (const g of [a, b]) {
    assert.ok(await until(async () => (await (await fetch(`${g.url}/health/readiness`)).json()).redis === 'connected'));
  }
});

async function redisCooldownShared(group = 'pair', bad = 'pair-bad') {
  // drive instance a until the bad deployment has been tried (429 in a group of two: cooled down at once)
  let tried = false;
  for (let i = 0; i < 30 && !tried; i++) tried = (await sent(() => chat(a, group))).includes(bad);
  assert.ok(tried);
  // instance b learns it through Redis: after one sync interval it never sends to it
  assert.ok(await until(async () => {
    const s = await sent(async () => { for (let i = 0; i < 10; i++) await chat(b, group); });
    return !s.includes(bad);
  }));
}

test('a cooldown set by one instance is honoured by the other', async () => {
  await redisCooldownShared();
});

test('usage-based rpm holds for the pair: 40 concurrent requests over two instances, exactly 10 pass', async () => {
  const res = await Promise.all(Array.from({ length: 40 }, (_, i) => chat(i % 2 ? a : b, 'lim')));
  const ok = res.filter((r) => r.status === 200).length;
  assert.equal(ok, 10, res.map((r) => r.status).join(','));
  assert.ok(res.every((r) => r.status === 200 || r.status === 429));
});

test('killing Redis mid-load loses no request; readiness says disconnected; both keep serving', async () => {
  let stop = false;
  const statuses = [];
  const load = async (g) => { while (!stop) statuses.push((await chat(g, 'ok')).status); };
  const runs = [load(a), load(b), load(a), load(b)];
  await sleep(300);
  await redis.stop();
  await sleep(700);
  stop = true;
  await Promise.all(runs);
  assert.ok(statuses.length > 20);
  assert.ok(statuses.every((s) => s === 200), `statuses: ${[...new Set(statuses)]}`);
  const rd = await (await fetch(`${a.url}/health/readiness`)).json();
  assert.equal(rd.redis, 'disconnected');
  assert.equal((await chat(b, 'ok')).status, 200);
});

test('when Redis returns, both instances reconnect and share again', async () => {
  redis = await startRedis(redis.port);
  for (const g of [a, b]) {
    assert.ok(await until(async () => (await (await fetch(`${g.url}/health/readiness`)).json()).redis === 'connected'));
  }
  // a cooldown set on a now reaches b again (a group neither instance has cooled down yet)
  await redisCooldownShared('pair2', 'pair2-bad');
});
