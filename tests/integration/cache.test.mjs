// cache.test.mjs - the response cache with the local (in-memory) backend
// (issue 10; LiteLLM's litellm/caching, reference §7): hits and misses with
// x-litellm-cache-key / x-litellm-cache-hit, hits served without calling the
// upstream (the mock's request log) with the stored body, TTLs, the
// per-request controls (body "cache" object and Cache-Control header),
// namespaces and mode: default_off, streams replayed from / assembled into
// the cache, embeddings cached and /v1/messages not, the byte bound (LRU
// eviction), /cache/ping, /cache/delete, /cache/flushall, the spend row of a
// hit and the Prometheus counters.
//
//   | gateway | litellm_settings.cache_params                                  |
//   |---------|----------------------------------------------------------------|
//   | gw      | type local (defaults), SQLite DB for spend rows                |
//   | gwTtl   | type local, ttl 1, supported_call_types [acompletion]          |
//   | gwOff   | type local, namespace ns, mode default_off                     |
//   | gwSmall | type local, switchyard_max_bytes 65536                         |
//   | gwNone  | no cache                                                       |
//
// Every request body carries a unique text (nonce) so tests never hit each
// other's entries. No timings asserted beyond TTLs; every fetch has a timeout.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MASTER_KEY, keysConfig, sha256hex, sleep, startGateway, startMock, until } from '../lib/harness.mjs';
import {
  admin, bearer, call, genKey, metricSum, metrics, mockCalls, nonce, parseSSE,
} from '../lib/limits.mjs';

let mock, gw, gwTtl, gwOff, gwSmall, gwNone;

const claude = (m) => `  - model_name: claude
    litellm_params: {model: anthropic/claude-3-5-sonnet-20240620, api_base: "${m.url}", api_key: sk-ant}
`;
const withCache = (m, params) => `${keysConfig(m.base, { extraModels: claude(m) })}
litellm_settings:
  cache: true
  cache_params: ${params}
`;

before(async () => {
  mock = await startMock();
  gw = await startGateway(withCache(mock, '{type: local}'), { workers: 2 });
  gwTtl = await startGateway(withCache(mock, '{type: local, ttl: 1, supported_call_types: [acompletion]}'), { workers: 2 });
  gwOff = await startGateway(withCache(mock, '{type: local, namespace: ns, mode: default_off}'), { workers: 2 });
  gwSmall = await startGateway(withCache(mock, '{type: local, switchyard_max_bytes: 65536}'), { workers: 2 });
  gwNone = await startGateway(keysConfig(mock.base));
});
after(async () => {
  for (const g of [gw, gwTtl, gwOff, gwSmall, gwNone]) await g?.stop();
  await mock?.stop();
});

const HEX = /^[0-9a-f]{64}$/;
const body = (tag, extra = {}) => ({ model: 'priced', messages: [{ role: 'user', content: nonce(tag) }], max_tokens: 5, ...extra });
const chat = (g, b, headers = {}, key = MASTER_KEY) => call(g.url, '/v1/chat/completions', b, { ...bearer(key), ...headers });
const isHit = (r) => r.headers.get('x-litellm-cache-hit') === 'True';
const ckey = (r) => r.headers.get('x-litellm-cache-key');

/** A stored entry: the first (miss) response. */
async function store(g, b, headers = {}) {
  const r = await chat(g, b, headers);
  assert.equal(r.status, 200, r.text);
  assert.ok(!isHit(r), `first request is a miss: ${r.headers.get('x-litellm-cache-hit')}`);
  return r;
}
/** r must be a hit that did not reach the upstream (mock reset before). */
async function assertHit(r, stored, what = 'hit') {
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-litellm-cache-hit'), 'True', `${what}: x-litellm-cache-hit`);
  assert.equal((await mockCalls(mock, '')).length, 0, `${what}: served without calling the upstream`);
  if (stored) {
    assert.equal(ckey(r), ckey(stored), `${what}: same cache key`);
    assert.deepEqual(r.json, stored.json, `${what}: the stored body`);
  }
}
/** r must be a miss that reached the upstream once (mock reset before). */
async function assertMiss(r, what = 'miss', part = '/chat/completions') {
  assert.equal(r.status, 200, r.text);
  assert.ok(!isHit(r), `${what}: not a hit`);
  assert.equal((await mockCalls(mock, part)).length, 1, `${what}: the upstream was called`);
}

describe('local cache', () => {
  test('identical bodies: the same x-litellm-cache-key; the second is a hit with the stored body, no upstream call', async () => {
    const b = body('hit');
    const r1 = await store(gw, b);
    assert.match(ckey(r1) ?? '', HEX, 'x-litellm-cache-key on a cacheable response');
    await mock.reset();
    await assertHit(await chat(gw, b), r1);
    await assertHit(await chat(gw, b), r1, 'third');
    // another body: another key, a miss
    await mock.reset();
    const r3 = await chat(gw, body('hit-other'));
    await assertMiss(r3);
    assert.match(ckey(r3) ?? '', HEX);
    assert.notEqual(ckey(r3), ckey(r1));
    // a parameter that is part of the key makes another key
    await mock.reset();
    const r4 = await chat(gw, { ...b, temperature: 0.5 });
    await assertMiss(r4, 'temperature changes the key');
    assert.notEqual(ckey(r4), ckey(r1));
  });

  test('per-request ttl: {"cache": {"ttl": 1}} expires after 1 s', async () => {
    const b = body('ttl', { cache: { ttl: 1 } });
    const r1 = await store(gw, b);
    await mock.reset();
    await assertHit(await chat(gw, b), r1);
    await sleep(1500);
    await mock.reset();
    await assertMiss(await chat(gw, b), 'after the ttl');
  });

  test('cache_params.ttl 1: entries expire after 1 s', async () => {
    const b = body('cfg-ttl');
    const r1 = await store(gwTtl, b);
    await mock.reset();
    await assertHit(await chat(gwTtl, b), r1);
    await sleep(1500);
    await mock.reset();
    await assertMiss(await chat(gwTtl, b), 'after the configured ttl');
  });

  test('supported_call_types [acompletion]: embeddings are not cached there', async () => {
    const e = { model: 'text-embedding-3-small', input: nonce('emb-nc') };
    await mock.reset();
    for (let i = 0; i < 2; i++) {
      const r = await call(gwTtl.url, '/v1/embeddings', e, bearer(MASTER_KEY));
      assert.equal(r.status, 200, r.text);
      assert.ok(!isHit(r));
    }
    assert.equal((await mockCalls(mock, '/embeddings')).length, 2);
  });

  test('{"no-cache": true} skips the lookup; {"no-store": true} does not write', async () => {
    const b = body('nocache');
    await store(gw, b);
    await mock.reset();
    await assertMiss(await chat(gw, { ...b, cache: { 'no-cache': true } }), 'no-cache');

    const b2 = body('nostore');
    await mock.reset();
    await assertMiss(await chat(gw, { ...b2, cache: { 'no-store': true } }), 'no-store (first)');
    await mock.reset();
    const r = await chat(gw, b2);
    await assertMiss(r, 'nothing was stored by the no-store request');
    await mock.reset();
    await assertHit(await chat(gw, b2), r, 'stored by the plain request');
  });

  test('{"s-maxage": N} accepts only entries younger than N s', async () => {
    const b = body('smaxage');
    const r1 = await store(gw, b);
    await sleep(1200);
    await mock.reset();
    await assertHit(await chat(gw, { ...b, cache: { 's-maxage': 60 } }), r1, 's-maxage 60');
    await mock.reset();
    await assertMiss(await chat(gw, { ...b, cache: { 's-maxage': 1 } }), 's-maxage 1 on a 1.2 s old entry');
  });

  test('{"namespace": "x"} prefixes the key and separates entries', async () => {
    const b = body('ns');
    const n1 = await store(gw, { ...b, cache: { namespace: 'x' } });
    const k = ckey(n1) ?? '';
    assert.match(k, /^x:[0-9a-f]{64}$/);
    await mock.reset();
    await assertHit(await chat(gw, { ...b, cache: { namespace: 'x' } }), n1, 'same namespace');
    await mock.reset();
    const plain = await chat(gw, b);
    await assertMiss(plain, 'no namespace: another entry');
    assert.equal(ckey(plain), k.slice(2), 'the same hash without the prefix');
    await mock.reset();
    await assertMiss(await chat(gw, { ...b, cache: { namespace: 'y' } }), 'another namespace');
  });

  test('Cache-Control request header: no-cache, no-store, max-age=N', async () => {
    const b = body('cc');
    const r1 = await store(gw, b);
    await mock.reset();
    await assertMiss(await chat(gw, b, { 'cache-control': 'no-cache' }), 'Cache-Control: no-cache');

    const b2 = body('cc-nostore');
    await mock.reset();
    await assertMiss(await chat(gw, b2, { 'cache-control': 'no-store' }), 'Cache-Control: no-store');
    await mock.reset();
    await assertMiss(await chat(gw, b2), 'not stored under no-store');

    await sleep(1200);
    await mock.reset();
    const h = await chat(gw, b, { 'cache-control': 'max-age=60' });
    await assertHit(h, null, 'max-age=60');
    assert.equal(ckey(h), ckey(r1));
    await mock.reset();
    await assertMiss(await chat(gw, b, { 'cache-control': 'max-age=1' }), 'max-age=1 on an older entry');
  });

  test('a streamed miss is stored (assembled) and the same stream request is replayed from the cache as SSE', async () => {
    const b = { ...body('stream-from'), stream: true, stream_options: { include_usage: true } };
    await mock.reset();
    const s1 = await chat(gw, b);
    assert.equal(s1.status, 200, s1.text);
    assert.ok(!isHit(s1));
    const p1 = parseSSE(s1.text);
    assert.ok(p1.done && p1.content.length > 0, s1.text);
    await sleep(300);
    await mock.reset();
    const s = await chat(gw, b);
    assert.equal(s.status, 200, s.text);
    assert.match(s.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(s.headers.get('x-litellm-cache-hit'), 'True');
    assert.equal(ckey(s), ckey(s1));
    assert.equal((await mockCalls(mock, '')).length, 0, 'served without the upstream');
    const p = parseSSE(s.text);
    assert.ok(p.done, `ends with data: [DONE]: ${s.text.slice(-200)}`);
    assert.ok(p.events.length >= 2, s.text);
    for (const e of p.events) assert.equal(e.object, 'chat.completion.chunk', JSON.stringify(e));
    assert.equal(p.content, p1.content);
    assert.ok(p.events.some((e) => e.choices?.[0]?.finish_reason), 'a chunk carries the finish_reason');
    assert.ok(p.events.some((e) => e.usage && e.usage.total_tokens > 0), 'include_usage: a usage chunk');
  });

  test('stream is part of the cache key, as in LiteLLM: a non-stream entry does not answer a stream request', async () => {
    const b = body('stream-key');
    const r1 = await store(gw, b);
    await mock.reset();
    const s = await chat(gw, { ...b, stream: true });
    assert.equal(s.status, 200, s.text);
    assert.ok(!isHit(s));
    assert.notEqual(ckey(s), ckey(r1));
    assert.equal((await mockCalls(mock, '')).length, 1, 'the stream went upstream');
  });

  test('a 64 KB prompt (its key computed on the thread pool) is cached like any other', async () => {
    const b = body('big', { messages: [{ role: 'user', content: nonce('big') + ' lorem ipsum'.repeat(6000) }] });
    const r1 = await store(gw, b);
    assert.match(ckey(r1) ?? '', HEX);
    await mock.reset();
    await assertHit(await chat(gw, b), r1, 'big prompt');
  });

  test('a response over 1 MB is served but not stored', async () => {
    const b = body('huge', { mock: { body_bytes: 1200000 } });
    const r1 = await store(gw, b);
    assert.ok(r1.text.length > 1000000, `${r1.text.length} bytes`);
    await mock.reset();
    await assertMiss(await chat(gw, b), 'over 1 MB');
  });

  test('embeddings are cached', async () => {
    const e = { model: 'text-embedding-3-small', input: [nonce('emb'), 'two'] };
    await mock.reset();
    const r1 = await call(gw.url, '/v1/embeddings', e, bearer(MASTER_KEY));
    await assertMiss(r1, 'first embedding', '/embeddings');
    assert.match(ckey(r1) ?? '', HEX);
    await mock.reset();
    await assertHit(await call(gw.url, '/v1/embeddings', e, bearer(MASTER_KEY)), r1, 'embedding hit');
  });

  test('/v1/messages is not cached', async () => {
    const m = { model: 'claude', max_tokens: 5, messages: [{ role: 'user', content: nonce('msg') }] };
    await mock.reset();
    for (let i = 0; i < 2; i++) {
      const r = await call(gw.url, '/v1/messages', m, { ...bearer(MASTER_KEY), 'anthropic-version': '2023-06-01' });
      assert.equal(r.status, 200, r.text);
      assert.ok(!isHit(r), 'no hit on /v1/messages');
    }
    assert.equal((await mockCalls(mock, '/v1/messages')).length, 2, 'both reached the upstream');
  });

  test('/cache/ping, /cache/delete, /cache/flushall', async () => {
    let r = await admin(gw.url, 'GET', '/cache/ping');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status, 'healthy');
    assert.equal(r.json.cache_type, 'local');

    const b1 = body('del'), b2 = body('flush1'), b3 = body('flush2');
    const s1 = await store(gw, b1);
    await store(gw, b2);
    await store(gw, b3);
    r = await admin(gw.url, 'POST', '/cache/delete', { keys: [ckey(s1)] });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status, 'success');
    await mock.reset();
    await assertMiss(await chat(gw, b1), 'deleted key');
    await mock.reset();
    assert.ok(isHit(await chat(gw, b2)), 'another entry survives the delete');

    // a virtual key may ping but not drop entries every caller shares
    const k = (await genKey(gw.url, {})).key;
    r = await call(gw.url, '/cache/ping', undefined, bearer(k));
    assert.equal(r.status, 200, r.text);
    r = await call(gw.url, '/cache/flushall', {}, bearer(k));
    assert.equal(r.status, 403, r.text);
    await mock.reset();
    assert.ok(isHit(await chat(gw, b2)), 'a refused flushall drops nothing');

    r = await admin(gw.url, 'POST', '/cache/flushall');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status, 'success');
    for (const b of [b1, b2, b3]) {
      await mock.reset();
      await assertMiss(await chat(gw, b), 'after flushall');
    }
  });

  test('/cache/ping is 503 when caching is off', async () => {
    const r = await admin(gwNone.url, 'GET', '/cache/ping');
    assert.equal(r.status, 503, r.text);
    // and nothing is cached there
    const b = body('none');
    await mock.reset();
    for (let i = 0; i < 2; i++) assert.ok(!isHit(await chat(gwNone, b)));
    assert.equal((await mockCalls(mock)).length, 2);
  });

  test('a hit\'s spend row has cache_hit "True" and spend 0; /metrics counts hits and misses', async () => {
    const m0 = await metrics(gw.url);
    const hits0 = metricSum(m0, 'litellm_cache_hits_metric_total');
    const miss0 = metricSum(m0, 'litellm_cache_misses_metric_total');
    const k = await genKey(gw.url, {});
    const hash = await sha256hex(k.key);
    const b = body('spend');
    const r1 = await chat(gw, b, {}, k.key);
    assert.equal(r1.status, 200, r1.text);
    assert.ok(!isHit(r1));
    const r2 = await chat(gw, b, {}, k.key);
    assert.ok(isHit(r2), 'second is a hit');
    let rows = [];
    assert.ok(await until(async () => {
      const r = await admin(gw.url, 'GET', `/spend/logs?api_key=${hash}`);
      rows = Array.isArray(r.json) ? r.json : [];
      return rows.length >= 2;
    }, 10000), `two spend rows: ${JSON.stringify(rows)}`);
    const hitRows = rows.filter((x) => x.cache_hit === 'True');
    assert.equal(hitRows.length, 1, JSON.stringify(rows.map((x) => [x.cache_hit, x.spend])));
    assert.equal(hitRows[0].spend, 0);
    const missRows = rows.filter((x) => x.cache_hit !== 'True');
    assert.equal(missRows.length, 1);
    assert.ok(missRows[0].spend > 0, `the miss cost something: ${missRows[0].spend}`);
    const m1 = await metrics(gw.url);
    assert.ok(metricSum(m1, 'litellm_cache_hits_metric_total') >= hits0 + 1,
      `hits ${hits0} -> ${metricSum(m1, 'litellm_cache_hits_metric_total')}`);
    assert.ok(metricSum(m1, 'litellm_cache_misses_metric_total') >= miss0 + 1,
      `misses ${miss0} -> ${metricSum(m1, 'litellm_cache_misses_metric_total')}`);
    assert.match(m1, /^# TYPE litellm_cache_hits_metric_total counter/m);
  });
});

test('mode default_off: only {"use-cache": true} requests are cached; cache_params.namespace prefixes keys', async () => {
  const b = body('off');
  await mock.reset();
  for (let i = 0; i < 2; i++) {
    const r = await chat(gwOff, b);
    assert.equal(r.status, 200, r.text);
    assert.ok(!isHit(r), 'not cached without use-cache');
  }
  assert.equal((await mockCalls(mock)).length, 2);
  const on = { ...b, cache: { 'use-cache': true } };
  const r1 = await store(gwOff, on);
  assert.match(ckey(r1) ?? '', /^ns:[0-9a-f]{64}$/);
  await mock.reset();
  await assertHit(await chat(gwOff, on), r1, 'use-cache');
});

test('switchyard_max_bytes bounds the local cache: the earliest entries are evicted, the latest still hit', async () => {
  const bodies = Array.from({ length: 50 }, (_, i) => ({
    model: 'priced', messages: [{ role: 'user', content: nonce(`evict${i}`) }], mock: { body_bytes: 4096 },
  }));
  const stored = [];
  for (const b of bodies) {
    const r = await store(gwSmall, b);
    assert.ok(r.text.length >= 4096, `a ~4 KB response: ${r.text.length}`);
    stored.push(r);
  }
  await mock.reset();
  await assertHit(await chat(gwSmall, bodies[49]), stored[49], 'the latest');
  await mock.reset();
  await assertHit(await chat(gwSmall, bodies[48]), stored[48], 'the one before');
  await mock.reset();
  await assertMiss(await chat(gwSmall, bodies[0]), 'the earliest was evicted');
  await mock.reset();
  await assertMiss(await chat(gwSmall, bodies[1]), 'the second was evicted');
});
