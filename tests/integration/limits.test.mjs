// limits.test.mjs - rate limits on one instance (issue 10; LiteLLM's
// parallel_request_limiter_v3, reference §4.3): one switchyard with 2 workers
// on its embedded SQLite database, limits set through the admin API.
//
//   | test                         | limit                                   | expect                                  |
//   |------------------------------|-----------------------------------------|-----------------------------------------|
//   | exact rpm                    | key rpm_limit 50, 200 concurrent        | exactly 50 x 200, 150 x LiteLLM's 429   |
//   | user / team / customer / org | rpm_limit 3 on the entity               | the 4th refused, descriptor named       |
//   | model_per_key                | metadata.model_rpm_limit {priced: 2}    | 3rd "priced" refused, "other" untouched |
//   | tpm burst                    | key tpm_limit 1000, 20 x ~300-token     | sum of usage.total_tokens <= 1000       |
//   | tpm prompt too big           | key tpm_limit 100, a ~300-token prompt  | 429 Limit type: tokens                  |
//   | parallel                     | max_parallel_requests 2, 6 slow streams | exactly 2 served; slots freed after     |
//   | client abort                 | max_parallel_requests 1                 | aborting frees the slot                 |
//   | global parallel              | global_max_parallel_requests 2          | exactly 2 of 5 slow calls served        |
//   | success headers, key/info    | rpm 10 tpm 100000                       | x-ratelimit-*; info.limits_usage        |
//
// Windows are fixed Unix minutes: a burst whose count is asserted first makes
// sure it does not straddle a minute boundary (freshWindow). No timings are
// asserted; waits are bounded polls; every fetch has a timeout.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { keysConfig, sha256hex, sleep, startGateway, startMock, until } from '../lib/harness.mjs';
import {
  admin, assertRateLimited, bearer, chatCall, freshWindow, genKey, limitsUsage, readiness,
} from '../lib/limits.mjs';

let mock, gw;

before(async () => {
  mock = await startMock();
  gw = await startGateway(keysConfig(mock.base), { workers: 2 });
});
after(async () => {
  await gw?.stop();
  await mock?.stop();
});

const msgs = (text) => [{ role: 'user', content: text }];
const chat = (key, model = 'priced', extra = {}, headers = {}, opts = {}) =>
  chatCall(gw.url, key, { model, messages: msgs('Say hello.'), ...extra }, headers, opts);
const statuses = (rs) => rs.map((r) => r.status).join(',');

/** n sequential calls that must all pass. */
async function pass(n, fn) {
  for (let i = 0; i < n; i++) {
    const r = await fn();
    assert.equal(r.status, 200, `call ${i + 1} of ${n}: ${r.status} ${r.text}`);
  }
}

test('readiness says rate limits are local when no Redis is configured', async () => {
  const rd = await readiness(gw.url);
  assert.equal(rd?.rate_limits, 'local', JSON.stringify(rd));
});

test('key rpm_limit 50: exactly 50 of 200 concurrent requests pass, the rest get LiteLLM\'s 429', async () => {
  const k = await genKey(gw.url, { rpm_limit: 50 });
  const hash = await sha256hex(k.key);
  await freshWindow();
  const res = await Promise.all(Array.from({ length: 200 }, () => chat(k.key)));
  const ok = res.filter((r) => r.status === 200);
  assert.equal(ok.length, 50, statuses(res));
  for (const r of res.filter((x) => x.status !== 200))
    assertRateLimited(r, { descriptor: 'api_key', value: hash, type: 'requests', limit: 50 });
  // refusals are not counted: the window holds exactly the 50
  const u = await limitsUsage(gw.url, k.key);
  assert.equal(u?.requests, 50, JSON.stringify(u));
  // and the 51st, sequential, is refused too
  assertRateLimited(await chat(k.key), { descriptor: 'api_key', value: hash, type: 'requests', limit: 50 });
});

describe('entity rpm limits (3 per minute): the 4th request is refused naming the descriptor', () => {
  test('user', async () => {
    const uid = `lim-user-${Date.now()}`;
    const r = await admin(gw.url, 'POST', '/user/new', { user_id: uid, rpm_limit: 3 });
    assert.equal(r.status, 200, r.text);
    // (the key /user/new returns carries the same rpm_limit, as LiteLLM's does:
    // use keys of the user without their own limits)
    const k1 = await genKey(gw.url, { user_id: uid });
    const k2 = await genKey(gw.url, { user_id: uid });
    await freshWindow(10);
    await pass(2, () => chat(k1.key));
    await pass(1, () => chat(k2.key));
    // the user's 4th request, whichever of the user's keys sends it
    assertRateLimited(await chat(k1.key), { descriptor: 'user', value: uid, type: 'requests', limit: 3 });
    assertRateLimited(await chat(k2.key), { descriptor: 'user', value: uid, type: 'requests', limit: 3 });
    const info = await admin(gw.url, 'GET', `/user/info?user_id=${encodeURIComponent(uid)}`);
    assert.equal(info.status, 200, info.text);
    assert.equal(info.json.user_info.limits_usage.requests, 3, info.text);
  });

  test('team', async () => {
    const r = await admin(gw.url, 'POST', '/team/new', { team_alias: `lim-team-${Date.now()}`, rpm_limit: 3 });
    assert.equal(r.status, 200, r.text);
    const tid = r.json.team_id;
    const k1 = await genKey(gw.url, { team_id: tid });
    const k2 = await genKey(gw.url, { team_id: tid });
    await freshWindow(10);
    await pass(2, () => chat(k1.key));
    await pass(1, () => chat(k2.key));
    // the team's 4th request, whichever of its keys sends it
    assertRateLimited(await chat(k1.key), { descriptor: 'team', value: tid, type: 'requests', limit: 3 });
    assertRateLimited(await chat(k2.key), { descriptor: 'team', value: tid, type: 'requests', limit: 3 });
    const info = await admin(gw.url, 'GET', `/team/info?team_id=${encodeURIComponent(tid)}`);
    assert.equal(info.status, 200, info.text);
    assert.equal(info.json.team_info.limits_usage.requests, 3, info.text);
  });

  test('customer (the body\'s "user" is the end user)', async () => {
    const cid = `lim-cust-${Date.now()}`;
    const r = await admin(gw.url, 'POST', '/customer/new', { user_id: cid, rpm_limit: 3 });
    assert.equal(r.status, 200, r.text);
    const k = await genKey(gw.url, {});
    await freshWindow(10);
    await pass(3, () => chat(k.key, 'priced', { user: cid }));
    assertRateLimited(await chat(k.key, 'priced', { user: cid }), { descriptor: 'end_user', value: cid, type: 'requests', limit: 3 });
    // the same key for another end user, or with none, is not limited by this customer
    await pass(2, () => chat(k.key, 'priced', { user: `${cid}-other` }));
    await pass(2, () => chat(k.key));
  });

  test('organization', async () => {
    const r = await admin(gw.url, 'POST', '/organization/new', { organization_alias: `lim-org-${Date.now()}`, rpm_limit: 3 });
    assert.equal(r.status, 200, r.text);
    const oid = r.json.organization_id;
    assert.ok(oid, r.text);
    const k = await genKey(gw.url, { organization_id: oid });
    await freshWindow(10);
    await pass(3, () => chat(k.key));
    assertRateLimited(await chat(k.key), { descriptor: 'organization', value: oid, type: 'requests', limit: 3 });
  });
});

test('model_per_key: metadata.model_rpm_limit limits only that model', async () => {
  const k = await genKey(gw.url, { metadata: { model_rpm_limit: { priced: 2 } } });
  const hash = await sha256hex(k.key);
  await freshWindow(10);
  await pass(2, () => chat(k.key, 'priced'));
  assertRateLimited(await chat(k.key, 'priced'), { descriptor: 'model_per_key', value: `${hash}:priced`, type: 'requests', limit: 2 });
  await pass(5, () => chat(k.key, 'other'));
  assertRateLimited(await chat(k.key, 'priced'), { descriptor: 'model_per_key', value: `${hash}:priced`, type: 'requests', limit: 2 });
});

// " a" is one token per 2 characters for OpenAI's tokenizers while the mock
// counts characters / 4: the gateway's reservation (its exact prompt count)
// is at least the usage the mock then reports (prompt + 5 completion
// tokens), so with reservations the successes can never sum past the limit,
// and without them all 20 would pass (20 x ~150 tokens).
const bigPrompt = () => `a${' a'.repeat(289)}`;

test('tpm burst: 20 concurrent ~300-token prompts against tpm_limit 1000 never pass the limit', async () => {
  const k = await genKey(gw.url, { tpm_limit: 1000 });
  const hash = await sha256hex(k.key);
  await freshWindow();
  const res = await Promise.all(Array.from({ length: 20 }, () =>
    chatCall(gw.url, k.key, { model: 'priced', messages: msgs(bigPrompt()), max_tokens: 5, mock: { delay_ms: 200 } })));
  const ok = res.filter((r) => r.status === 200);
  assert.ok(ok.length >= 1, `at least one passes: ${statuses(res)} ${res[0].text}`);
  assert.ok(ok.length < 20, `the limit refused some: ${statuses(res)}`);
  const used = ok.reduce((a, r) => a + r.json.usage.total_tokens, 0);
  assert.ok(used <= 1000, `successes used ${used} tokens > tpm_limit 1000 (${ok.length} passed)`);
  for (const r of res.filter((x) => x.status !== 200))
    assertRateLimited(r, { descriptor: 'api_key', value: hash, type: 'tokens', limit: 1000 });
  // after settling, the window's tokens are the usage of the successes
  assert.ok(await until(async () => (await limitsUsage(gw.url, k.key))?.tokens === used, 5000),
    `limits_usage.tokens settles at ${used}: ${JSON.stringify(await limitsUsage(gw.url, k.key))}`);
});

test('tpm: a prompt larger than the remaining tokens is refused before the call', async () => {
  const k = await genKey(gw.url, { tpm_limit: 100 });
  const hash = await sha256hex(k.key);
  await freshWindow(10);
  await mock.reset();
  const r = await chatCall(gw.url, k.key, { model: 'priced', messages: msgs(bigPrompt()) });
  assertRateLimited(r, { descriptor: 'api_key', value: hash, type: 'tokens', limit: 100 });
  assert.equal((await mock.requests()).length, 0, 'the upstream was not called');
  // a small prompt still fits
  assert.equal((await chat(k.key)).status, 200);
});

describe('parallel requests', () => {
  const slowStream = { stream: true, mock: { chunks: 6, chunk_delay_ms: 250 } };

  test('max_parallel_requests 2: exactly 2 of 6 concurrent slow streams are served; slots free after', async () => {
    const k = await genKey(gw.url, { max_parallel_requests: 2 });
    const hash = await sha256hex(k.key);
    const res = await Promise.all(Array.from({ length: 6 }, () => chat(k.key, 'priced', slowStream)));
    const ok = res.filter((r) => r.status === 200);
    assert.equal(ok.length, 2, statuses(res));
    for (const r of ok) assert.match(r.text, /data: \[DONE\]/);
    for (const r of res.filter((x) => x.status !== 200))
      assertRateLimited(r, { descriptor: 'api_key', value: hash, type: 'max_parallel_requests', limit: 2 });
    // both finished: two more run together, and the key shows nothing in flight
    const again = await Promise.all([chat(k.key, 'priced', slowStream), chat(k.key, 'priced', slowStream)]);
    assert.deepEqual(again.map((r) => r.status), [200, 200], again.map((r) => r.text).join('\n'));
    assert.ok(await until(async () => (await limitsUsage(gw.url, k.key))?.max_parallel_requests === 0, 5000));
  });

  test('a client that aborts its stream frees its slot', async () => {
    const k = await genKey(gw.url, { max_parallel_requests: 1 });
    const ac = new AbortController();
    const t = setTimeout(() => ac.abort(), 30000);
    try {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(k.key) },
        body: JSON.stringify({ model: 'priced', messages: msgs('long'), stream: true, mock: { chunks: 200, chunk_delay_ms: 100 } }),
        signal: ac.signal,
      });
      assert.equal(res.status, 200);
      const reader = res.body.getReader();
      await reader.read(); // the stream is running
      const busy = await chat(k.key);
      assertRateLimited(busy, { descriptor: 'api_key', type: 'max_parallel_requests', limit: 1 });
      ac.abort();
      await reader.cancel().catch(() => {});
    } catch (e) {
      if (e.name !== 'AbortError') throw e;
    } finally { clearTimeout(t); ac.abort(); }
    // long before the 20 s stream would have ended, the slot is free again
    let last;
    assert.ok(await until(async () => (last = await chat(k.key)).status === 200, 8000),
      `slot freed after the abort: ${last?.status} ${last?.text}`);
  });

  test('general_settings.global_max_parallel_requests 2 limits all requests', async () => {
    const g2 = await startGateway(keysConfig(mock.base, { general: '  global_max_parallel_requests: 2\n' }), { workers: 2 });
    try {
      const k = await genKey(g2.url, {});
      const res = await Promise.all(Array.from({ length: 5 }, () =>
        chatCall(g2.url, k.key, { model: 'priced', messages: msgs('hi'), mock: { delay_ms: 1500 } })));
      assert.equal(res.filter((r) => r.status === 200).length, 2, statuses(res));
      for (const r of res.filter((x) => x.status !== 200))
        assertRateLimited(r, { descriptor: 'global', type: 'max_parallel_requests', limit: 2 });
      // finished ones free their slots
      const again = await Promise.all([1, 2].map(() => chatCall(g2.url, k.key, { model: 'priced', messages: msgs('hi') })));
      assert.deepEqual(again.map((r) => r.status), [200, 200]);
    } finally {
      await g2.stop();
    }
  });
});

test('success headers: x-ratelimit-remaining/limit, overall and per descriptor', async () => {
  const k = await genKey(gw.url, { rpm_limit: 10, tpm_limit: 100000 });
  await freshWindow(10);
  let r = await chat(k.key);
  assert.equal(r.status, 200, r.text);
  const h = r.headers;
  assert.equal(h.get('x-ratelimit-limit-requests'), '10');
  assert.equal(h.get('x-ratelimit-remaining-requests'), '9');
  assert.equal(h.get('x-ratelimit-api_key-limit-requests'), '10');
  assert.equal(h.get('x-ratelimit-api_key-remaining-requests'), '9');
  assert.equal(h.get('x-ratelimit-limit-tokens'), '100000');
  assert.equal(h.get('x-ratelimit-api_key-limit-tokens'), '100000');
  for (const n of ['x-ratelimit-remaining-tokens', 'x-ratelimit-api_key-remaining-tokens']) {
    const v = Number(h.get(n));
    assert.ok(Number.isInteger(v) && v < 100000 && v > 99000, `${n}: ${h.get(n)}`);
  }
  r = await chat(k.key);
  assert.equal(r.headers.get('x-ratelimit-remaining-requests'), '8');
  assert.equal(r.headers.get('x-ratelimit-api_key-remaining-requests'), '8');
  // streams carry them too
  r = await chat(k.key, 'priced', { stream: true });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-ratelimit-remaining-requests'), '7');
});

test('/key/info reports limits_usage for the current window', async () => {
  const k = await genKey(gw.url, { rpm_limit: 100, tpm_limit: 100000, max_parallel_requests: 5 });
  let u = await limitsUsage(gw.url, k.key);
  assert.deepEqual(u, { requests: 0, tokens: 0, max_parallel_requests: 0 }, 'a fresh key');
  await freshWindow(15);
  let used = 0;
  for (let i = 0; i < 3; i++) {
    const r = await chat(k.key);
    assert.equal(r.status, 200, r.text);
    used += r.json.usage.total_tokens;
  }
  assert.ok(await until(async () => {
    u = await limitsUsage(gw.url, k.key);
    return u?.requests === 3 && u.tokens === used && u.max_parallel_requests === 0;
  }, 5000), `limits_usage after 3 calls using ${used} tokens: ${JSON.stringify(u)}`);
  // one in flight
  const slow = chat(k.key, 'priced', { stream: true, mock: { chunks: 8, chunk_delay_ms: 250 } });
  assert.ok(await until(async () => (u = await limitsUsage(gw.url, k.key))?.max_parallel_requests === 1, 5000),
    `one in flight: ${JSON.stringify(u)}`);
  assert.equal(u.requests, 4);
  assert.equal((await slow).status, 200);
  assert.ok(await until(async () => (u = await limitsUsage(gw.url, k.key))?.max_parallel_requests === 0, 5000),
    JSON.stringify(u));
});

test('a refused request is not sent upstream and the gateway keeps serving', async () => {
  const k = await genKey(gw.url, { rpm_limit: 1 });
  await freshWindow(10);
  assert.equal((await chat(k.key)).status, 200);
  await mock.reset();
  const r = await chat(k.key);
  assert.equal(r.status, 429, r.text);
  assert.equal((await mock.requests()).length, 0);
  await sleep(10);
  const other = await genKey(gw.url, {});
  assert.equal((await chat(other.key)).status, 200);
});
