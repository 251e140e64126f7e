// router-tags-regions.test.mjs - routing filters (issue 19): tag routing
// (router_settings.enable_tag_filtering: body tags, metadata.tags,
// x-litellm-tags; the "default" tag; no match), general_settings.
// reject_clientside_metadata_tags, end users' allowed_model_region (an end user
// made through /customer/new, on SQLite and on PostgreSQL) and
// router_settings.provider_budget_config. Which deployment served is read at
// the mock; no timings are asserted.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MASTER_KEY, api, assertErrorShape, chatBody, postJSON, startGateway, startMock, until } from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

let mock;

function dep(name, model, base, extra = '') {
  return `  - model_name: ${name}\n    litellm_params: {model: "${model.includes('/') ? model : `openai/${model}`}", api_base: "${base}", api_key: sk-x${extra}}\n`;
}

before(async () => { mock = await startMock(); });
after(async () => { await mock?.stop(); });

async function call(gw, model, extra = {}, headers = {}) {
  await mock.reset();
  const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody(model, extra), { authorization: `Bearer ${MASTER_KEY}`, ...headers });
  const log = await mock.requests();
  const models = log.filter((q) => q.path.includes('/chat/completions')).map((q) => JSON.parse(q.body).model);
  return { ...r, models };
}

/* Serve `model` n times; the set of upstream models that answered. */
async function served(gw, model, n, extra = {}, headers = {}) {
  const seen = new Set();
  for (let i = 0; i < n; i++) {
    const r = await call(gw, model, extra, headers);
    assert.equal(r.status, 200, r.text);
    r.models.forEach((m) => seen.add(m));
  }
  return [...seen].sort();
}

describe('tag routing', () => {
  let gw;
  before(async () => {
    const b = mock.base;
    let yaml = 'model_list:\n';
    yaml += dep('tagged', 'team-a', b, ', tags: [teamA]') + dep('tagged', 'team-b', b, ', tags: [teamB, paid]');
    yaml += dep('tagged', 'fallback-default', b, ', tags: [default]');
    yaml += dep('strict', 'strict-x', b, ', tags: [x]') + dep('strict', 'strict-untagged', b);
    yaml += `router_settings:\n  enable_tag_filtering: true\ngeneral_settings:\n  master_key: ${MASTER_KEY}\n`;
    gw = await startGateway(yaml);
  });
  after(async () => { await gw?.stop(); });

  test('body tags pick the deployments that share a tag', async () => {
    assert.deepEqual(await served(gw, 'tagged', 4, { tags: ['teamA'] }), ['openai/team-a'].map((m) => m.split('/')[1]));
    assert.deepEqual(await served(gw, 'tagged', 4, { tags: ['paid', 'nope'] }), ['team-b']);
  });

  test('metadata.tags and the x-litellm-tags header count too; tags are not forwarded', async () => {
    assert.deepEqual(await served(gw, 'tagged', 3, { metadata: { tags: ['teamB'] } }), ['team-b']);
    assert.deepEqual(await served(gw, 'tagged', 3, {}, { 'x-litellm-tags': ' teamA , other' }), ['team-a']);
    const r = await call(gw, 'tagged', { tags: ['teamA'] });
    const log = await mock.requests();
    assert.equal(r.status, 200);
    assert.ok(!('tags' in JSON.parse(log[0].body)), log[0].body);
  });

  test('untagged requests and unknown tags go to the "default" deployment', async () => {
    assert.deepEqual(await served(gw, 'tagged', 4), ['fallback-default']);
    assert.deepEqual(await served(gw, 'tagged', 3, { tags: ['unknown'] }), ['fallback-default']);
  });

  test('no tag match and no default deployment: LiteLLM\'s tag routing error, no upstream call', async () => {
    const r = await call(gw, 'strict', { tags: ['zzz'] });
    assertErrorShape(assert, r, 400);
    assert.equal(r.json.error.message, "Not allowed to access model due to tags configuration. Passed model=strict and tags=['zzz']");
    assert.deepEqual(r.models, []);
    // without tags every deployment of a group without a default one serves
    assert.deepEqual(await served(gw, 'strict', 12), ['strict-untagged', 'strict-x']);
  });

  test('tags must be a list of strings', async () => {
    const r = await call(gw, 'tagged', { tags: 'teamA' });
    assertErrorShape(assert, r, 400);
    assert.equal(r.json.error.param, 'tags');
    const m = await call(gw, 'tagged', { metadata: { tags: 5 } });
    assertErrorShape(assert, m, 400);
    assert.equal(m.json.error.param, 'metadata.tags');
  });
});

test('reject_clientside_metadata_tags refuses metadata.tags (only those)', async () => {
  const yaml = 'model_list:\n' + dep('m', 'm-model', mock.base) +
    `general_settings:\n  master_key: ${MASTER_KEY}\n  reject_clientside_metadata_tags: true\n`;
  const gw = await startGateway(yaml);
  try {
    const r = await call(gw, 'm', { metadata: { tags: ['x'] } });
    assertErrorShape(assert, r, 400);
    assert.equal(r.json.error.type, 'bad_request_error');
    assert.equal(r.json.error.param, 'metadata.tags');
    assert.match(r.json.error.message, /^Client-side 'metadata.tags' not allowed in request\. 'reject_clientside_metadata_tags'=True\. Tags can only be set via API key metadata\.$/);
    assert.deepEqual(r.models, []);
    assert.equal((await call(gw, 'm', { metadata: { other: 1 } })).status, 200);
    assert.equal((await call(gw, 'm', { tags: ['x'] })).status, 200);
  } finally {
    await gw.stop();
  }
});

function regionConfig(databaseUrl) {
  const b = mock.base;
  let yaml = 'model_list:\n';
  yaml += dep('regional', 'eu-dep', b, ', region_name: eu') + dep('regional', 'us-dep', b, ', region_name: us');
  yaml += dep('regional', 'azure/az-eu', mock.url, ', region_name: swedencentral, api_version: "2024-02-01"');
  yaml += dep('us-only', 'only-us', b, ', region_name: us');
  yaml += `general_settings:\n  master_key: ${MASTER_KEY}\n  proxy_batch_write_at: 0.1\n`;
  if (databaseUrl) yaml += `  database_url: "${databaseUrl}"\n`;
  return yaml;
}

async function regionCases(gw) {
  for (const [id, region] of [['cust-eu', 'eu'], ['cust-us', 'us'], ['cust-any', null]]) {
    const body = { user_id: id, ...(region ? { allowed_model_region: region } : {}) };
    const r = await api(gw.url, MASTER_KEY, 'POST', '/customer/new', body);
    assert.equal(r.status, 200, r.text);
  }
  const bad = await api(gw.url, MASTER_KEY, 'POST', '/customer/new', { user_id: 'cust-bad', allowed_model_region: 'mars' });
  assert.equal(bad.status, 422, bad.text);

  const eu = await served(gw, 'regional', 10, { user: 'cust-eu' });
  assert.ok(eu.every((m) => m === 'eu-dep' || m === 'az-eu'), eu.join());
  assert.ok(eu.length >= 1);
  assert.deepEqual(await served(gw, 'regional', 6, { user: 'cust-us' }), ['us-dep']);
  // the header form of the end user, and the region header
  const h = await call(gw, 'regional', {}, { 'x-litellm-end-user-id': 'cust-us' });
  assert.equal(h.status, 200, h.text);
  assert.equal(h.headers.get('x-litellm-model-region'), 'us');
  // no region: every deployment
  assert.ok((await served(gw, 'regional', 20, { user: 'cust-any' })).length >= 2);
  // an eu user and a group with no eu deployment: no upstream call
  const none = await call(gw, 'us-only', { user: 'cust-eu' });
  assertErrorShape(assert, none, 429);
  assert.match(none.json.error.message, /No deployments available for selected model.*Passed model=us-only\. pre-call-checks=True, allowed_model_region=eu/);
  assert.deepEqual(none.models, []);
  assert.equal(none.headers.get('x-litellm-model-region'), 'eu');
  assert.equal((await call(gw, 'us-only', { user: 'cust-us' })).status, 200);
}

test('allowed_model_region of an end user (SQLite)', async () => {
  const gw = await startGateway(regionConfig(null));
  try {
    await regionCases(gw);
  } finally {
    await gw.stop();
  }
});

test('allowed_model_region of an end user (PostgreSQL)', async () => {
  const pg = await startPostgres();
  let gw;
  try {
    const url = await pg.createDb('regions');
    gw = await startGateway(regionConfig(url));
    await regionCases(gw);
    const rows = await pg.psql(`SELECT user_id, allowed_model_region FROM "LiteLLM_EndUserTable" ORDER BY user_id`, url);
    assert.deepEqual(rows.map((x) => [x.user_id, x.allowed_model_region]),
      [['cust-any', null], ['cust-eu', 'eu'], ['cust-us', 'us']]);
  } finally {
    await gw?.stop();
    await pg.stop();
  }
});

describe('provider budgets', () => {
  let gw;
  before(async () => {
    const b = mock.base;
    let yaml = 'model_list:\n';
    // groq deployments at the mock (OpenAI-compatible); each call costs 10 * 0.001 + completion tokens * 0.001
    yaml += dep('capped', 'groq/capped-groq', b, ', input_cost_per_token: 0.001, output_cost_per_token: 0.001');
    yaml += dep('mixed', 'groq/mixed-groq', b, ', input_cost_per_token: 0.001, output_cost_per_token: 0.001, order: 1');
    yaml += dep('mixed', 'mixed-openai', b, ', input_cost_per_token: 0, output_cost_per_token: 0, order: 2');
    yaml += dep('capped2', 'groq/capped2-groq', b) + dep('rescue', 'rescue-openai', b);
    yaml += `router_settings:
  fallbacks: [{"capped2": ["rescue"]}]
  provider_budget_config:
    groq: {budget_limit: 0.005, time_period: 1d}
    openai: {budget_limit: 100, time_period: 30d}
general_settings:
  master_key: ${MASTER_KEY}
`;
    gw = await startGateway(yaml);
  });
  after(async () => { await gw?.stop(); });

  test('a provider over its budget is skipped; a group of only that provider gets LiteLLM\'s error', async () => {
    const first = await call(gw, 'capped');
    assert.equal(first.status, 200, first.text);
    assert.ok(Number(first.headers.get('x-litellm-response-cost')) >= 0.005, first.headers.get('x-litellm-response-cost'));
    const r = await call(gw, 'capped');
    assertErrorShape(assert, r, 429);
    assert.match(r.json.error.message, /^No deployments available - crossed budget: Exceeded budget for provider groq: [0-9.e-]+ >= 0\.005/);
    assert.deepEqual(r.models, []);
    // the other provider of a mixed group serves, even though groq has the better order
    assert.deepEqual(await served(gw, 'mixed', 3), ['mixed-openai']);
    // a group whose provider is over budget falls back
    const f = await call(gw, 'capped2');
    assert.equal(f.status, 200, f.text);
    assert.deepEqual(f.models, ['rescue-openai']);
    assert.equal(f.headers.get('x-litellm-attempted-fallbacks'), '1');
  });
});

test('provider_budget_config with a bad shape is refused at load', async () => {
  const yaml = 'model_list:\n' + dep('m', 'm-model', mock.base) +
    'router_settings:\n  provider_budget_config:\n    openai: {budget_limit: 1, time_period: soon}\n';
  await assert.rejects(startGateway(yaml), /time_period: expected a duration/);
});

test('provider budgets are shared by instances through Redis', async () => {
  const { startRedis } = await import('../lib/harness.mjs');
  const redis = await startRedis();
  const yaml = 'model_list:\n' +
    dep('shared', 'groq/shared-groq', mock.base, ', input_cost_per_token: 0.001, output_cost_per_token: 0.001') +
    dep('free', 'groq/free-groq', mock.base, ', input_cost_per_token: 0, output_cost_per_token: 0, order: 1') +
    dep('free', 'free-openai', mock.base, ', input_cost_per_token: 0, output_cost_per_token: 0, order: 2') +
    `router_settings:
  redis_host: 127.0.0.1
  redis_port: ${redis.port}
  provider_budget_config:
    groq: {budget_limit: 0.005, time_period: 1h}
general_settings:
  master_key: ${MASTER_KEY}
`;
  const a = await startGateway(yaml);
  const b = await startGateway(yaml);
  try {
    assert.equal((await call(a, 'shared')).status, 200);
    // LiteLLM's key holds the fleet's spend, with the period as its expiry
    const { execFileSync } = await import('node:child_process');
    const cli = (...args) => execFileSync('redis-cli', ['-p', String(redis.port), ...args]).toString().trim();
    assert.ok(await until(() => Number(cli('GET', 'provider_spend:groq:1h')) >= 0.005, 10000), 'spend pushed to Redis');
    const ttl = Number(cli('TTL', 'provider_spend:groq:1h'));
    assert.ok(ttl > 0 && ttl <= 3600, `ttl ${ttl}`);
    // b spends nothing on groq itself (its groq deployment is free): it stops routing to groq
    // once it read the fleet's spend
    assert.ok(await until(async () => {
      const q = await call(b, 'free');
      assert.equal(q.status, 200, q.text);
      return q.models[0] === 'free-openai';
    }, 10000), 'the second instance kept routing to a provider over its shared budget');
    const r = await call(b, 'shared');
    assertErrorShape(assert, r, 429);
    assert.match(r.json.error.message, /crossed budget: Exceeded budget for provider groq/);
    assert.deepEqual(r.models, []);
  } finally {
    await a.stop();
    await b.stop();
    await redis.stop();
  }
});
