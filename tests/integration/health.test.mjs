// health.test.mjs - GET /health (LiteLLM's deep health check) against the mock upstream:
// healthy/unhealthy endpoints and their errors, secrets never shown, ?model= / ?model_id=
// filters, auth, a client leaving mid-check, router state, background checks (stored
// results served without calls, rounds on the current config after SIGHUP) and the
// redis field of /health/readiness.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { freePort, postJSON, rawRequest, startGateway, startMock } from '../lib/harness.mjs';

const KEY = 'sk-test-master-1234';
const UPSTREAM_KEY = 'sk-upstream-VERY-SECRET-98765';
const NESTED_SECRET = 'nested-secret-value-4242';
const auth = { authorization: `Bearer ${KEY}` };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function getJSON(url, headers = {}) {
  const res = await fetch(url, { headers });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch {}
  return { status: res.status, headers: res.headers, text, json };
}

function assertShape(r) {
  assert.equal(r.status, 200, r.text);
  const j = r.json;
  assert.ok(Array.isArray(j.healthy_endpoints) && Array.isArray(j.unhealthy_endpoints), r.text);
  assert.equal(j.healthy_count, j.healthy_endpoints.length);
  assert.equal(j.unhealthy_count, j.unhealthy_endpoints.length);
  for (const e of j.unhealthy_endpoints) assert.equal(typeof e.error, 'string', r.text);
  for (const e of j.healthy_endpoints) assert.ok(!('error' in e), r.text);
  return j;
}

const byModel = (list, model) => list.find((e) => e.model === model);

describe('GET /health (on demand)', () => {
  let mock, gw;

  before(async () => {
    mock = await startMock();
    const b = mock.base;
    gw = await startGateway(`
model_list:
  - model_name: gpt-4o
    litellm_params:
      model: openai/gpt-4o
      api_base: ${b}
      api_key: ${UPSTREAM_KEY}
      rpm: 100
      extra_headers: {Authorization: "Bearer header-secret"}
      extra_body: {foo: 1, api_key: ${NESTED_SECRET}, inner: {password: p, keep: [1, 2]}}
  - model_name: gpt-4o
    litellm_params:
      model: openai/gpt-4o@status=500
      api_base: ${b}
      api_key: ${UPSTREAM_KEY}
  - model_name: dead
    litellm_params:
      model: openai/gpt-4o
      api_base: http://127.0.0.1:9/v1
  - model_name: embed
    litellm_params:
      model: openai/text-embedding-3-small
      api_base: ${b}
    model_info: {mode: embedding, id: embed-dep-1}
  - model_name: instruct
    litellm_params:
      model: openai/gpt-3.5-turbo-instruct
      api_base: ${b}
    model_info: {mode: completion}
  - model_name: slow
    litellm_params:
      model: openai/gpt-4o@delay_ms=3000
      api_base: ${b}
      timeout: 0.5
  - model_name: mock-gpt
    litellm_params:
      model: mock/gpt
  - model_name: canned
    litellm_params:
      model: openai/whatever
      mock_response: "canned answer"
  - model_name: gemini
    litellm_params:
      model: sagemaker/gemini-pro
  - model_name: flaky
    litellm_params:
      model: openai/flaky-bad@status=503
      api_base: ${b}
  - model_name: flaky
    litellm_params:
      model: openai/flaky-good
      api_base: ${b}
general_settings:
  master_key: ${KEY}
`);
  });

  after(async () => {
    assert.equal(await gw.stop(), 0);
    await mock.stop();
  });

  test('auth is required when a master key is set', async () => {
    const none = await getJSON(`${gw.url}/health`);
    assert.equal(none.status, 401, none.text);
    const wrong = await getJSON(`${gw.url}/health`, { authorization: 'Bearer sk-wrong' });
    assert.equal(wrong.status, 401, wrong.text);
    const ok = await getJSON(`${gw.url}/health?model=mock-gpt`, auth);
    assert.equal(ok.status, 200, ok.text);
  });

  test('every deployment is checked once, concurrently; failures land in unhealthy_endpoints', async () => {
    await mock.reset();
    const t0 = Date.now();
    const r = await getJSON(`${gw.url}/health`, auth);
    const ms = Date.now() - t0;
    const j = assertShape(r);
    assert.equal(j.healthy_count + j.unhealthy_count, 11, r.text);
    // concurrently: the 0.5 s timeout and the other calls overlap (sequential would be >= 0.5 s + the rest)
    assert.ok(ms < 2500, `took ${ms} ms`);

    const good = byModel(j.healthy_endpoints, 'openai/gpt-4o');
    assert.ok(good, r.text);
    assert.equal(good.api_base, mock.base);
    assert.equal(good.rpm, 100);
    assert.equal(typeof good.model_id, 'string');
    assert.equal(good['x-ratelimit-remaining-requests'] !== undefined, true, r.text);
    for (const m of ['openai/text-embedding-3-small', 'openai/gpt-3.5-turbo-instruct', 'mock/gpt', 'openai/whatever', 'openai/flaky-good'])
      assert.ok(byModel(j.healthy_endpoints, m), `${m} healthy: ${r.text}`);

    const e500 = byModel(j.unhealthy_endpoints, 'openai/gpt-4o@status=500');
    assert.ok(e500, r.text);
    assert.match(e500.error, /^litellm\.InternalServerError: InternalServerError: OpenAIException - /);
    const dead = j.unhealthy_endpoints.find((e) => e.api_base === 'http://127.0.0.1:9/v1');
    assert.ok(dead, r.text);
    assert.match(dead.error, /APIConnectionError/);
    const slow = byModel(j.unhealthy_endpoints, 'openai/gpt-4o@delay_ms=3000');
    assert.ok(slow, r.text);
    assert.match(slow.error, /^litellm\.Timeout: .*timed out after 0\.5 seconds/);
    const gem = byModel(j.unhealthy_endpoints, "sagemaker/gemini-pro");
    assert.ok(gem, r.text);
    assert.match(gem.error, /sagemaker.*not supported/);
    assert.ok(byModel(j.unhealthy_endpoints, 'openai/flaky-bad@status=503'), r.text);

    // one call per deployment that needs one (not mock/canned/gemini), with LiteLLM's cheap bodies
    const reqs = await mock.requests();
    assert.equal(reqs.length, 7, JSON.stringify(reqs.map((q) => q.body)));
    const bodies = reqs.map((q) => ({ path: q.path, body: JSON.parse(q.body), headers: q.headers }));
    const chat = bodies.find((q) => q.body.model === 'gpt-4o');
    assert.equal(chat.path, '/v1/chat/completions');
    assert.equal(chat.body.max_tokens, 1);
    assert.equal(chat.body.messages.length, 1);
    assert.equal(chat.body.messages[0].role, 'user');
    assert.ok(["Hey how's it going?", "What's 1 + 1?"].includes(chat.body.messages[0].content));
    assert.equal(chat.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
    const emb = bodies.find((q) => q.body.model === 'text-embedding-3-small');
    assert.equal(emb.path, '/v1/embeddings');
    assert.deepEqual(emb.body.input, ['test from litellm']);
    assert.ok(!('max_tokens' in emb.body));
    const comp = bodies.find((q) => q.body.model === 'gpt-3.5-turbo-instruct');
    assert.equal(comp.path, '/v1/completions');
    assert.equal(comp.body.prompt, 'test from litellm');
    assert.equal(comp.body.max_tokens, 1);
  });

  test('api_key and other secrets never appear in the output', async () => {
    const r = await getJSON(`${gw.url}/health`, auth);
    const j = assertShape(r);
    for (const s of [UPSTREAM_KEY, NESTED_SECRET, 'header-secret', '"api_key"', '"extra_headers"', '"password"', '"messages"'])
      assert.ok(!r.text.includes(s), `${s} leaked: ${r.text}`);
    const good = byModel(j.healthy_endpoints, 'openai/gpt-4o');
    assert.deepEqual(good.extra_body, { foo: 1, inner: { keep: [1, 2] } });
  });

  test('?model= selects by litellm model, else by model group; ?model_id= by id', async () => {
    let j = assertShape(await getJSON(`${gw.url}/health?model=embed`, auth));
    assert.equal(j.healthy_count, 1);
    assert.equal(j.unhealthy_count, 0);
    assert.equal(j.healthy_endpoints[0].model, 'openai/text-embedding-3-small');

    j = assertShape(await getJSON(`${gw.url}/health?model=gpt-4o`, auth));
    assert.equal(j.healthy_count, 1);
    assert.equal(j.unhealthy_count, 1);

    await mock.reset();
    j = assertShape(await getJSON(`${gw.url}/health?model=${encodeURIComponent('openai/gpt-4o@status=500')}`, auth));
    assert.equal(j.healthy_count + j.unhealthy_count, 1);
    assert.equal(j.unhealthy_endpoints[0].model, 'openai/gpt-4o@status=500');
    assert.equal((await mock.requests()).length, 1);

    j = assertShape(await getJSON(`${gw.url}/health?model=no-such-model`, auth));
    assert.equal(j.healthy_count + j.unhealthy_count, 0);

    j = assertShape(await getJSON(`${gw.url}/health?model_id=embed-dep-1`, auth));
    assert.equal(j.healthy_count, 1);
    assert.equal(j.healthy_endpoints[0].model_id, 'embed-dep-1');

    const nf = await getJSON(`${gw.url}/health?model_id=nope`, auth);
    assert.equal(nf.status, 404, nf.text);
    assert.equal(nf.json.error.code, '404');
  });

  test('unhealthy deployments are skipped by the router', async () => {
    await getJSON(`${gw.url}/health?model=flaky`, auth);
    await mock.reset();
    for (let i = 0; i < 12; i++) {
      const r = await postJSON(`${gw.url}/v1/chat/completions`,
        { model: 'flaky', messages: [{ role: 'user', content: 'hi' }] }, auth);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers.get('x-litellm-attempted-retries'), '0');
    }
    const reqs = await mock.requests();
    assert.equal(reqs.length, 12);
    assert.ok(reqs.every((q) => JSON.parse(q.body).model === 'flaky-good'), JSON.stringify(reqs.map((q) => q.body)));
  });

  test('a client that leaves mid-check breaks nothing', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await rawRequest(gw.port,
        `GET /health HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${KEY}\r\n\r\n`, { timeoutMs: 100 + i * 40 });
      assert.equal(r.timedOut, true); // left while the slow deployment was still being checked
    }
    await sleep(800); // the abandoned rounds' calls would have finished by now
    const live = await getJSON(`${gw.url}/health/liveliness`);
    assert.equal(live.status, 200);
    const j = assertShape(await getJSON(`${gw.url}/health?model=embed`, auth));
    assert.equal(j.healthy_count, 1);
    assert.equal(gw.proc.exitCode, null);
  });

  test('readiness reports redis as not configured and stays healthy', async () => {
    const r = await getJSON(`${gw.url}/health/readiness`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status, 'healthy');
    assert.equal(r.json.redis, 'not configured');
    assert.equal(r.json.cache, null);
    assert.equal(r.json.db, 'connected'); // the test's SQLite database, pinged
    assert.ok(Array.isArray(r.json.success_callbacks));
  });
});

describe('GET /health without a master key', () => {
  test('is public and all healthy when every deployment answers', async () => {
    const mock = await startMock();
    const gw = await startGateway(`
model_list:
  - model_name: a
    litellm_params: {model: openai/gpt-4o-mini, api_base: ${mock.base}}
  - model_name: b
    litellm_params: {model: hosted_vllm/meta-llama/Llama-3.1-8B-Instruct, api_base: ${mock.base}}
  - model_name: c
    litellm_params: {model: mock/c}
`);
    try {
      const j = assertShape(await getJSON(`${gw.url}/health`));
      assert.equal(j.healthy_count, 3);
      assert.equal(j.unhealthy_count, 0);
      const models = (await mock.requests()).map((q) => JSON.parse(q.body).model).sort();
      assert.deepEqual(models, ['gpt-4o-mini', 'meta-llama/Llama-3.1-8B-Instruct']);
    } finally {
      assert.equal(await gw.stop(), 0);
      await mock.stop();
    }
  });
});

describe('GET /health: health_check_model and reasoning models', () => {
  test('model_info.health_check_model is the model called and shown; o-series get max_completion_tokens', async () => {
    const mock = await startMock();
    const gw = await startGateway(`
model_list:
  - model_name: wild
    litellm_params: {model: openai/broken@status=500, api_base: ${mock.base}}
    model_info: {health_check_model: openai/gpt-4o-mini}
  - model_name: reasoning
    litellm_params: {model: openai/o3-mini, api_base: ${mock.base}}
`);
    try {
      const j = assertShape(await getJSON(`${gw.url}/health`));
      assert.equal(j.healthy_count, 2, JSON.stringify(j));
      assert.ok(byModel(j.healthy_endpoints, 'openai/gpt-4o-mini'), JSON.stringify(j));
      const bodies = (await mock.requests()).map((q) => JSON.parse(q.body));
      const hc = bodies.find((b) => b.model === 'gpt-4o-mini');
      assert.equal(hc.max_tokens, 1);
      const o3 = bodies.find((b) => b.model === 'o3-mini');
      assert.equal(o3.max_completion_tokens, 1);
      assert.ok(!('max_tokens' in o3));
    } finally {
      assert.equal(await gw.stop(), 0);
      await mock.stop();
    }
  });
});

describe('background health checks', () => {
  let mock, gw;
  const cfg = (b, extra = '') => `
model_list:
  - model_name: good
    litellm_params: {model: openai/gpt-4o, api_base: ${b}, api_key: ${UPSTREAM_KEY}}
  - model_name: bad
    litellm_params: {model: openai/gpt-4o@status=500, api_base: ${b}}
${extra}
general_settings:
  master_key: ${KEY}
  background_health_checks: true
  health_check_interval: 2
`;

  before(async () => {
    mock = await startMock();
    gw = await startGateway(cfg(mock.base), { workers: 2 });
  });

  after(async () => {
    assert.equal(await gw.stop(), 0);
    await mock.stop();
  });

  async function waitForResults(pred, ms = 8000) {
    const end = Date.now() + ms;
    let last = null;
    while (Date.now() < end) {
      last = await getJSON(`${gw.url}/health`, auth);
      if (last.status === 200 && pred(last.json)) return last.json;
      await sleep(100);
    }
    assert.fail(`no matching background results: ${last && last.text}`);
  }

  test('GET /health serves the stored results without calling the upstream', async () => {
    const j = await waitForResults((x) => x.healthy_count + x.unhealthy_count === 2);
    assert.equal(j.healthy_endpoints[0].model, 'openai/gpt-4o');
    assert.match(j.unhealthy_endpoints[0].error, /InternalServerError/);
    assert.ok(!JSON.stringify(j).includes(UPSTREAM_KEY));

    await mock.reset();
    const t0 = Date.now();
    for (let i = 0; i < 20; i++) assertShape(await getJSON(`${gw.url}/health`, auth)); // spread over both workers
    const f = assertShape(await getJSON(`${gw.url}/health?model=bad`, auth));
    assert.equal(f.unhealthy_count, 1);
    assert.equal(f.healthy_count, 0);
    const elapsed = Date.now() - t0;
    // 21 GETs made no call of their own: at most the background rounds that fell in the window (2 calls each)
    const n = (await mock.requests()).length;
    assert.ok(n <= 2 * (Math.floor(elapsed / 2000) + 1), `${n} upstream calls in ${elapsed} ms`);
  });

  test('rounds repeat every health_check_interval', async () => {
    await mock.reset();
    await sleep(4500);
    const n = (await mock.requests()).length;
    assert.ok(n >= 2 && n <= 6, `${n} calls in 4.5 s with a 2 s interval`);
  });

  test('a SIGHUP reload is checked at the next round', async () => {
    fs.writeFileSync(gw.configPath, cfg(mock.base, `  - model_name: added
    litellm_params: {model: openai/added-model, api_base: ${mock.base}}`));
    gw.proc.kill('SIGHUP');
    const j = await waitForResults((x) => !!byModel(x.healthy_endpoints, 'openai/added-model'), 10000);
    assert.equal(j.healthy_count + j.unhealthy_count, 3);
  });

  test('readiness: Redis configured but unreachable is reported, status stays healthy', async () => {
    const port = await freePort(); // nothing listens there
    const g2 = await startGateway(`
model_list:
  - model_name: m
    litellm_params: {model: mock/m}
router_settings:
  redis_host: 127.0.0.1
  redis_port: ${port}
`);
    try {
      await sleep(300);
      const r = await getJSON(`${g2.url}/health/readiness`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.status, 'healthy');
      assert.equal(r.json.redis, 'disconnected');
    } finally {
      assert.equal(await g2.stop(), 0);
    }
  });
});
