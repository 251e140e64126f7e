// ratelimit.test.mjs - the official OpenAI Node SDK against a virtual key's
// rpm limit (issue 10): the call over the limit is the SDK's RateLimitError
// (429, with LiteLLM's message and a retry-after header), and an SDK allowed
// one retry waits retry-after and tries again. The retry test first waits
// until the current minute window is nearly over, so retry-after (and the
// SDK's sleep) is a few seconds and the retry lands in the next window.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { keysConfig, startGateway, startMock } from '../lib/harness.mjs';
import { freshWindow, genKey, limitsUsage, nearWindowEnd } from '../lib/limits.mjs';

let mock, gw;

before(async () => {
  mock = await startMock();
  gw = await startGateway(keysConfig(mock.base));
});
after(async () => { await gw?.stop(); await mock?.stop(); });

const ask = (client) => client.chat.completions.create({ model: 'priced', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] });
const header = (h, n) => (typeof h?.get === 'function' ? h.get(n) : h?.[n]);

test('the third call on an rpm_limit 2 key is the SDK\'s RateLimitError with retry-after', async () => {
  const { key } = await genKey(gw.url, { rpm_limit: 2 });
  const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 20000 });
  await freshWindow(10);
  for (let i = 0; i < 2; i++) assert.equal((await ask(client)).object, 'chat.completion');
  await assert.rejects(ask(client), (e) => {
    assert.ok(e instanceof OpenAI.RateLimitError, `RateLimitError: ${e?.constructor?.name} ${e?.message}`);
    assert.equal(e.status, 429);
    assert.match(e.message, /Rate limit exceeded for api_key: [0-9a-f]{64}\. Limit type: requests\. Current limit: 2/);
    const ra = header(e.headers, 'retry-after');
    assert.match(ra ?? '', /^\d+$/, `retry-after: ${ra}`);
    assert.ok(Number(ra) >= 1 && Number(ra) <= 60);
    return true;
  });
});

test('with maxRetries 1 the SDK waits retry-after and retries (the retry lands in the next window)', { timeout: 120000 }, async () => {
  const { key } = await genKey(gw.url, { rpm_limit: 2 });
  let attempts = 0;
  const counting = (url, init) => { attempts++; return fetch(url, init); };
  const plain = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 20000 });
  const retrying = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 1, timeout: 20000, fetch: counting });
  await nearWindowEnd(3, 7);
  for (let i = 0; i < 2; i++) await ask(plain);
  const t0 = Date.now();
  let result, error;
  try { result = await ask(retrying); } catch (e) { error = e; }
  assert.equal(attempts, 2, `the SDK retried once (${attempts} attempts; ${error?.message ?? 'succeeded'})`);
  assert.ok(Date.now() - t0 >= 500, 'it waited before retrying');
  if (error) {
    // a retry that still fell in the old window is refused the same way
    assert.ok(error instanceof OpenAI.RateLimitError, `${error.constructor?.name}: ${error.message}`);
  } else {
    assert.equal(result.object, 'chat.completion');
    // the retry was counted in the new window
    const u = await limitsUsage(gw.url, key);
    assert.ok(u.requests >= 1 && u.requests <= 2, JSON.stringify(u));
  }
});
