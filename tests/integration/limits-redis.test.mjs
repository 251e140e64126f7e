// limits-redis.test.mjs - rate limits shared by instances through a real
// Redis (issue 10; LiteLLM's parallel_request_limiter_v3 with its Redis
// counters, reference §4.3). Two switchyard instances (a, b; 2 workers each)
// and a third (c) configured to fail closed, all on one PostgreSQL database
// (so every instance sees the keys; a shared SQLite file is not allowed) and
// one redis-server (router_settings.redis_host / redis_port):
//
//   | test                         | expect                                                     |
//   |------------------------------|------------------------------------------------------------|
//   | readiness                    | "rate_limits": "redis" on every instance                   |
//   | rpm across instances         | rpm_limit 50, 200 concurrent over a and b: exactly 50      |
//   | parallel across instances    | max_parallel_requests 2, 6 slow streams over a, b: 2       |
//   | Redis killed mid-load        | no request hangs, a and b serve (fail open) on local       |
//   |                              | counters, readiness "local, redis unreachable"; c: 503     |
//   | Redis back                   | readiness "redis" again, c serves, counts shared again     |
//
// No timings asserted; waits are bounded polls; every fetch has a timeout.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { keysConfig, sha256hex, sleep, startGateway, startMock, startRedis, until } from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';
import { assertRateLimited, chatCall, freshWindow, genKey, readiness } from '../lib/limits.mjs';

let mock, pg, redis, a, b, c;

const config = (dbUrl, general = '') => `${keysConfig(mock.base, { databaseUrl: dbUrl, general })}
router_settings:
  redis_host: 127.0.0.1
  redis_port: ${redis.port}
`;

before(async () => {
  mock = await startMock();
  pg = await startPostgres();
  redis = await startRedis();
  const dbUrl = await pg.createDb('limits_redis');
  a = await startGateway(config(dbUrl), { workers: 2 });
  b = await startGateway(config(dbUrl), { workers: 2 });
  c = await startGateway(config(dbUrl, '  switchyard_rate_limit_redis_failure: closed\n'), { workers: 1 });
});
after(async () => {
  for (const g of [a, b, c]) await g?.stop();
  await redis?.stop();
  await mock?.stop();
  await pg?.stop();
});

const chat = (g, key, extra = {}, opts = { timeoutMs: 15000 }) =>
  chatCall(g.url, key, { model: 'priced', messages: [{ role: 'user', content: 'Say hello.' }], ...extra }, {}, opts);
const statuses = (rs) => rs.map((r) => r.status).join(',');
const rateLimitsOf = async (g) => (await readiness(g.url))?.rate_limits;

test('readiness says rate limits are in Redis on every instance', async () => {
  for (const g of [a, b, c]) {
    let v;
    assert.ok(await until(async () => (v = await rateLimitsOf(g)) === 'redis', 10000), `rate_limits: ${v}`);
  }
});

test('rpm_limit 50: exactly 50 of 200 concurrent requests split over two instances pass', async () => {
  const k = await genKey(a.url, { rpm_limit: 50 });
  const hash = await sha256hex(k.key);
  await freshWindow();
  // b knows the key (same database) before the burst; this call counts
  assert.equal((await chat(b, k.key)).status, 200);
  const res = await Promise.all(Array.from({ length: 200 }, (_, i) => chat(i % 2 ? a : b, k.key)));
  const ok = res.filter((r) => r.status === 200);
  assert.equal(ok.length, 49, `49 + the warm-up call = 50: ${statuses(res)}`);
  for (const r of res.filter((x) => x.status !== 200))
    assertRateLimited(r, { descriptor: 'api_key', value: hash, type: 'requests', limit: 50 });
  // each instance passed some (the pair shares one count, not one instance alone)
  assert.ok(res.some((r, i) => i % 2 === 1 && r.status === 200) && res.some((r, i) => i % 2 === 0 && r.status === 200),
    statuses(res));
});

test('max_parallel_requests 2 holds for the pair: 6 slow streams over a and b, exactly 2 served', async () => {
  const k = await genKey(a.url, { max_parallel_requests: 2 });
  const hash = await sha256hex(k.key);
  assert.equal((await chat(b, k.key)).status, 200);
  const slow = { stream: true, mock: { chunks: 6, chunk_delay_ms: 300 } };
  const res = await Promise.all(Array.from({ length: 6 }, (_, i) => chat(i % 2 ? a : b, k.key, slow)));
  assert.equal(res.filter((r) => r.status === 200).length, 2, statuses(res));
  for (const r of res.filter((x) => x.status !== 200))
    assertRateLimited(r, { descriptor: 'api_key', value: hash, type: 'max_parallel_requests', limit: 2 });
  // settled on both: two more run together
  let again;
  assert.ok(await until(async () => {
    again = await Promise.all([chat(a, k.key, slow), chat(b, k.key, slow)]);
    return again.every((r) => r.status === 200);
  }, 10000), statuses(again));
});

test('Redis killed mid-load: nothing hangs, a and b fail open on local counters, c fails closed with 503', async () => {
  const k = await genKey(a.url, { rpm_limit: 100000 });
  assert.equal((await chat(b, k.key)).status, 200);
  let stop = false;
  const seen = [];
  const load = async (g) => { while (!stop) seen.push(await chat(g, k.key, {}, { timeoutMs: 10000 })); };
  const runs = [load(a), load(b), load(a), load(b)];
  await sleep(300);
  await redis.stop();
  await sleep(1500);
  stop = true;
  await Promise.all(runs);
  assert.ok(seen.length > 20, `${seen.length} requests`);
  const bad = seen.filter((r) => r.status !== 200);
  assert.equal(bad.length, 0, `fail open: every request served; got ${[...new Set(bad.map((r) => r.status))]} ` +
    `${bad[0]?.error ?? bad[0]?.text ?? ''}`);

  for (const g of [a, b]) {
    let v;
    assert.ok(await until(async () => (v = await rateLimitsOf(g)) === 'local, redis unreachable', 10000), `rate_limits: ${v}`);
    assert.equal((await chat(g, k.key)).status, 200, 'still serving');
  }

  // the fail-open instances still enforce limits, on their local counters
  const small = await genKey(a.url, { rpm_limit: 3 });
  await freshWindow(10);
  for (let i = 0; i < 3; i++) assert.equal((await chat(a, small.key)).status, 200);
  assertRateLimited(await chat(a, small.key), { descriptor: 'api_key', type: 'requests', limit: 3 });

  // c refuses while Redis is unreachable, at once (bounded fetches: a hang is status 0)
  let r;
  assert.ok(await until(async () => (r = await chat(c, k.key, {}, { timeoutMs: 10000 })).status === 503, 15000),
    `fail closed: ${r?.status} ${r?.error ?? r?.text}`);
  assert.ok(r.json?.error, r.text);
  assert.equal(r.json.error.code, '503', r.text);
  const rs = await Promise.all(Array.from({ length: 5 }, () => chat(c, k.key, {}, { timeoutMs: 10000 })));
  assert.ok(rs.every((x) => x.status === 503), statuses(rs));
});

test('Redis back: readiness "redis" again, c serves again, the pair shares counts again', async () => {
  redis = await startRedis(redis.port);
  for (const g of [a, b, c]) {
    let v;
    assert.ok(await until(async () => (v = await rateLimitsOf(g)) === 'redis', 20000), `rate_limits: ${v}`);
  }
  const k = await genKey(a.url, { rpm_limit: 10 });
  await freshWindow();
  // c serves again (only its one successful call counts: a 503 is not counted)
  let r;
  assert.ok(await until(async () => (r = await chat(c, k.key)).status === 200, 10000), `c serves: ${r?.status} ${r?.text}`);
  const res = await Promise.all(Array.from({ length: 40 }, (_, i) => chat(i % 2 ? a : b, k.key)));
  assert.equal(res.filter((x) => x.status === 200).length, 9, `shared again: 1 on c + 9 on a and b: ${statuses(res)}`);
});
