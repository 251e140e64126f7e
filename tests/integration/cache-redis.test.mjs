// cache-redis.test.mjs - the response cache in a real Redis shared by two
// switchyard instances (issue 10; LiteLLM's RedisCache, reference §7):
// /cache/ping reports Redis, a response stored through instance a is a hit
// on instance b (same body, no upstream call), /cache/delete through b makes
// a miss, /cache/flushall empties it for both, and with Redis killed both
// instances still answer every request (as misses) without hanging; when
// Redis returns, sharing resumes. Waits are bounded polls; every fetch has
// a timeout.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MASTER_KEY, keysConfig, startGateway, startMock, startRedis, until } from '../lib/harness.mjs';
import { admin, bearer, call, mockCalls, nonce } from '../lib/limits.mjs';

let mock, redis, a, b;

before(async () => {
  mock = await startMock();
  redis = await startRedis();
  const cfg = `${keysConfig(mock.base)}
litellm_settings:
  cache: true
  cache_params: {type: redis, host: 127.0.0.1, port: ${redis.port}}
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

const body = (tag) => ({ model: 'priced', messages: [{ role: 'user', content: nonce(tag) }], max_tokens: 5 });
const chat = (g, bd, opts = { timeoutMs: 15000 }) => call(g.url, '/v1/chat/completions', bd, bearer(MASTER_KEY), opts);
const isHit = (r) => r.headers.get('x-litellm-cache-hit') === 'True';
const ckey = (r) => r.headers.get('x-litellm-cache-key');
/** Look bd up on g without storing (so a hit can only be another instance's entry). */
const peek = (g, bd) => chat(g, { ...bd, cache: { 'no-store': true } });

/** Store bd through g (a miss) and wait until the other instance h sees it. */
async function storeShared(g, h, bd) {
  const r = await chat(g, bd);
  assert.equal(r.status, 200, r.text);
  assert.ok(!isHit(r), 'first is a miss');
  let p;
  assert.ok(await until(async () => isHit(p = await peek(h, bd)), 5000),
    `stored through one instance, a hit on the other: ${p?.status} ${p?.headers.get('x-litellm-cache-hit')}`);
  return { stored: r, seen: p };
}

test('/cache/ping reports Redis', async () => {
  for (const g of [a, b]) {
    const r = await admin(g.url, 'GET', '/cache/ping');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status, 'healthy');
    assert.equal(r.json.cache_type, 'redis');
    assert.equal(r.json.ping_response, true);
    assert.equal(r.json.set_cache_response, 'success');
  }
});

test('a response stored through instance a is a hit on instance b, with the same body and no upstream call', async () => {
  const bd = body('shared');
  const { stored } = await storeShared(a, b, bd);
  await mock.reset();
  const r = await chat(b, bd);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-litellm-cache-hit'), 'True');
  assert.equal(ckey(r), ckey(stored));
  assert.match(ckey(r) ?? '', /^[0-9a-f]{64}$/);
  assert.deepEqual(r.json, stored.json);
  assert.equal((await mockCalls(mock, '')).length, 0, 'no upstream call');
});

test('/cache/delete through b makes a miss on a; /cache/flushall through a empties it for b', async () => {
  const b1 = body('del'), b2 = body('flush');
  const { stored } = await storeShared(a, b, b1);
  await storeShared(a, b, b2);
  let r = await admin(b.url, 'POST', '/cache/delete', { keys: [ckey(stored)] });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.status, 'success');
  await mock.reset();
  r = await peek(a, b1);
  assert.equal(r.status, 200, r.text);
  assert.ok(!isHit(r), 'deleted through b: a misses');
  assert.equal((await mockCalls(mock)).length, 1);
  assert.ok(isHit(await peek(a, b2)), 'the other entry is still there');

  r = await admin(a.url, 'POST', '/cache/flushall');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.status, 'success');
  assert.ok(!isHit(await peek(b, b2)), 'flushed through a: b misses');
});

test('Redis killed: both instances answer every request (as misses), nothing hangs', async () => {
  const old = body('before-kill');
  await storeShared(a, b, old);
  await redis.stop();
  const seen = [];
  for (let i = 0; i < 6; i++) {
    for (const g of [a, b]) seen.push(await chat(g, body('down'), { timeoutMs: 10000 }));
  }
  // an entry b only ever peeked at (never stored itself) is out of reach now
  const r = await peek(b, old);
  seen.push(r);
  const bad = seen.filter((x) => x.status !== 200);
  assert.equal(bad.length, 0, `all served: ${bad.map((x) => x.status)} ${bad[0]?.error ?? bad[0]?.text ?? ''}`);
  assert.ok(!isHit(r), 'no hit from a dead Redis');
  // concurrent load too
  const res = await Promise.all(Array.from({ length: 20 }, (_, i) => chat(i % 2 ? a : b, body('down-burst'), { timeoutMs: 10000 })));
  assert.ok(res.every((x) => x.status === 200), res.map((x) => x.status).join(','));
  // /cache/ping answers (not healthy, but it answers)
  const p = await call(a.url, '/cache/ping', undefined, bearer(MASTER_KEY), { timeoutMs: 10000 });
  assert.notEqual(p.status, 0, `cache/ping answered: ${p.error}`);
  assert.notEqual(p.status, 200, `cache/ping is not healthy with Redis down: ${p.text}`);
});

test('Redis back: sharing resumes', async () => {
  redis = await startRedis(redis.port);
  // the clients reconnect on their own: poll (bounded) with fresh bodies
  // until one stored through b is a hit on a
  let ok = false;
  const end = Date.now() + 20000;
  while (!ok && Date.now() < end) {
    const bd = body('back');
    const r = await chat(b, bd);
    assert.equal(r.status, 200, r.text);
    ok = await until(async () => isHit(await peek(a, bd)), 1000);
  }
  assert.ok(ok, 'an entry stored through b became a hit on a after Redis returned');
});
