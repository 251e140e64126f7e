// prices.test.mjs - the price map on the request path (issue 21, items 5 and 10):
//   - every token kind billed at its own rate: Anthropic cache reads, 5-minute and
//     1-hour cache writes (usage.cache_creation.ephemeral_1h_input_tokens), on the
//     native /v1/messages path and translated to /v1/chat/completions, JSON and
//     streamed; the expected cost is computed by hand from the map's prices;
//   - a wildcard deployment ("anthropic/*") priced by the model requested;
//   - the unpriced-model policy (general_settings.switchyard_unpriced_models):
//     reject (default; 400 in the client's dialect naming the model), allow,
//     zero_cost_warn; keys without a budget, priced, self-hosted and mock models
//     unaffected;
//   - a user price file reloaded on SIGHUP bills the next request at the new
//     price; LITELLM_MODEL_COST_MAP_URL (a file:// URL) replaces the built-in map;
//     an http(s) URL is refused by --check-config;
//   - /v1/models and /model/info carry the map's context window and output limit.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  MASTER_KEY, SWITCHYARD, api, postJSON, startGateway, startMock, tmpdir, until,
} from '../lib/harness.mjs';

// claude-sonnet-4-5 in LiteLLM's map (data/model_prices.json)
const S45 = { in: 3e-6, out: 1.5e-5, read: 3e-7, w5m: 3.75e-6, w1h: 6e-6 };
const CACHE = 'cache_read=2000,cache_write=1000,cache_write_1h=600';

let mock;
const gws = [];
before(async () => { mock = await startMock(); });
after(async () => {
  for (const g of gws) await g.stop();
  await mock?.stop();
});

async function gateway(yaml, opts) {
  const g = await startGateway(yaml, opts);
  gws.push(g);
  return g;
}
const near = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} != ${b}`);

async function genKey(g, body = {}) {
  const r = await api(g.url, MASTER_KEY, 'POST', '/key/generate', body);
  assert.equal(r.status, 200, r.text);
  return r.json.key;
}
async function keySpend(g, key) {
  const r = await api(g.url, MASTER_KEY, 'GET', `/key/info?key=${key}`);
  assert.equal(r.status, 200, r.text);
  return r.json.info.spend;
}
async function spendReaches(g, key, want) {
  const ok = await until(async () => Math.abs((await keySpend(g, key)) - want) <= 1e-9 * Math.max(1, want), 10000);
  assert.ok(ok, `key spend ${await keySpend(g, key)} != ${want}`);
}
const chat = (g, key, model, extra = {}) => postJSON(`${g.url}/v1/chat/completions`,
  { model, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 50, ...extra },
  key ? { authorization: `Bearer ${key}` } : {});
const messages = (g, key, model, extra = {}) => postJSON(`${g.url}/v1/messages`,
  { model, max_tokens: 50, messages: [{ role: 'user', content: 'Say hello.' }], ...extra },
  { 'x-api-key': key, 'anthropic-version': '2023-06-01' });
async function sse(g, p, key, body, headers = {}) {
  const res = await fetch(`${g.url}${p}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  const text = await res.text();
  return text.split('\n').filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]').map((l) => JSON.parse(l.slice(6)));
}
// Anthropic usage: input_tokens exclude the cache reads and writes
const anthCost = (input, output) =>
  input * S45.in + 2000 * S45.read + 400 * S45.w5m + 600 * S45.w1h + output * S45.out;

describe('every token kind priced (claude-sonnet-4-5 from the map)', () => {
  let gw;
  before(async () => {
    gw = await gateway(`
model_list:
  - model_name: claude-sonnet-4-5
    litellm_params: {model: "anthropic/claude-sonnet-4-5@${CACHE}", api_base: "${mock.url}", api_key: sk-ant}
    model_info: {base_model: claude-sonnet-4-5}
  - model_name: "claude-*"
    litellm_params: {model: "anthropic/claude-*", api_base: "${mock.url}", api_key: sk-ant}
  - model_name: claude-own
    litellm_params: {model: "anthropic/claude-private-1@${CACHE}", api_base: "${mock.url}", api_key: sk-ant,
      input_cost_per_token: 0.000001, output_cost_per_token: 0.000002, cache_read_input_token_cost: 0.0000001,
      cache_creation_input_token_cost: 0.00000125, cache_creation_input_token_cost_above_1hr: 0.000002}
general_settings:
  master_key: ${MASTER_KEY}
  proxy_batch_write_at: 0.1
`);
  });

  test('native /v1/messages, JSON: cache reads, 5-minute and 1-hour writes at their rates', async () => {
    const key = await genKey(gw, { max_budget: 10 });
    const r = await messages(gw, key, 'claude-sonnet-4-5');
    assert.equal(r.status, 200, r.text);
    const u = r.json.usage;
    assert.equal(u.cache_read_input_tokens, 2000);
    assert.equal(u.cache_creation.ephemeral_1h_input_tokens, 600);
    const want = anthCost(u.input_tokens, u.output_tokens);
    near(Number(r.headers.get('x-litellm-response-cost')), want, 'response cost');
    await spendReaches(gw, key, want);
  });

  test('native /v1/messages, streamed', async () => {
    const key = await genKey(gw, { max_budget: 10 });
    const ev = await sse(gw, '/v1/messages', key, { model: 'claude-sonnet-4-5', max_tokens: 50, stream: true,
      messages: [{ role: 'user', content: 'Say hello.' }] }, { 'anthropic-version': '2023-06-01' });
    const start = ev.find((e) => e.type === 'message_start').message.usage;
    const delta = ev.find((e) => e.type === 'message_delta').usage;
    await spendReaches(gw, key, anthCost(start.input_tokens, delta.output_tokens));
  });

  test('translated /v1/chat/completions, JSON: the usage carries the 1-hour part, billed at its rate', async () => {
    const key = await genKey(gw, { max_budget: 10 });
    const r = await chat(gw, key, 'claude-sonnet-4-5');
    assert.equal(r.status, 200, r.text);
    const u = r.json.usage;
    assert.equal(u.prompt_tokens_details.cached_tokens, 2000);
    assert.equal(u.prompt_tokens_details.cache_creation_token_details.ephemeral_1h_input_tokens, 600);
    const want = anthCost(u.prompt_tokens - 3000, u.completion_tokens);
    near(Number(r.headers.get('x-litellm-response-cost')), want, 'response cost');
    await spendReaches(gw, key, want);
  });

  test('translated /v1/chat/completions, streamed with include_usage', async () => {
    const key = await genKey(gw, { max_budget: 10 });
    const ev = await sse(gw, '/v1/chat/completions', key, { model: 'claude-sonnet-4-5', max_tokens: 50, stream: true,
      stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Say hello.' }] });
    const u = ev.filter((e) => e.usage).pop().usage;
    assert.equal(u.prompt_tokens_details.cache_creation_token_details.ephemeral_1h_input_tokens, 600);
    await spendReaches(gw, key, anthCost(u.prompt_tokens - 3000, u.completion_tokens));
  });

  test('a deployment\'s own prices, the 1-hour write rate included', async () => {
    const key = await genKey(gw, { max_budget: 10 });
    const r = await messages(gw, key, 'claude-own');
    assert.equal(r.status, 200, r.text);
    const u = r.json.usage;
    const want = u.input_tokens * 1e-6 + 2000 * 1e-7 + 400 * 1.25e-6 + 600 * 2e-6 + u.output_tokens * 2e-6;
    near(Number(r.headers.get('x-litellm-response-cost')), want, 'response cost');
    await spendReaches(gw, key, want);
    const info = await api(gw.url, MASTER_KEY, 'GET', '/model/info');
    const mi = info.json.data.find((d) => d.model_name === 'claude-own').model_info;
    assert.equal(mi.cache_creation_input_token_cost_above_1hr, 2e-6);
  });

  test('a wildcard deployment is priced by the model requested', async () => {
    const key = await genKey(gw, { max_budget: 10 });
    const r = await chat(gw, key, 'claude-haiku-4-5');
    assert.equal(r.status, 200, r.text);
    const u = r.json.usage; // claude-haiku-4-5: $1 / $5 per million
    const want = u.prompt_tokens * 1e-6 + u.completion_tokens * 5e-6;
    assert.ok(want > 0);
    near(Number(r.headers.get('x-litellm-response-cost')), want, 'response cost');
    await spendReaches(gw, key, want);
  });
});

describe('unpriced models (general_settings.switchyard_unpriced_models)', () => {
  const models = () => `
model_list:
  - model_name: mystery
    litellm_params: {model: openai/mystery-model-9000, api_base: "${mock.base}", api_key: sk-up}
  - model_name: mystery-claude
    litellm_params: {model: anthropic/claude-mystery-1, api_base: "${mock.url}", api_key: sk-ant}
  - model_name: priced-by-info
    litellm_params: {model: openai/mystery-model-9000, api_base: "${mock.base}", api_key: sk-up}
    model_info: {input_cost_per_token: 0.000001, output_cost_per_token: 0.000002}
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-up}
  - model_name: local
    litellm_params: {model: hosted_vllm/my-finetune, api_base: "${mock.base}"}
  - model_name: mocked
    litellm_params: {model: mock/anything-at-all, mock_response: "ok"}
  - model_name: dall-e-3
    litellm_params: {model: openai/dall-e-3, api_base: "${mock.base}", api_key: sk-up}
  - model_name: mixed
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-up}
  - model_name: mixed
    litellm_params: {model: openai/mystery-model-9000, api_base: "${mock.base}", api_key: sk-up}
`;
  const general = (line = '') => `general_settings:\n  master_key: ${MASTER_KEY}\n  proxy_batch_write_at: 0.1\n${line}\n`;

  test('reject (the default): a budgeted key is refused, in the client\'s dialect, naming the model', async () => {
    const gw = await gateway(models() + general());
    const key = await genKey(gw, { max_budget: 5 });
    const r = await chat(gw, key, 'mystery');
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.type, 'invalid_request_error');
    assert.match(r.json.error.message, /'mystery'.*openai\/mystery-model-9000.*no known price/);
    assert.match(r.json.error.message, /input_cost_per_token/);
    assert.match(r.json.error.message, /switchyard_model_prices/);
    // Anthropic's shape on /v1/messages
    const m = await messages(gw, key, 'mystery-claude');
    assert.equal(m.status, 400, m.text);
    assert.equal(m.json.type, 'error');
    assert.equal(m.json.error.type, 'invalid_request_error');
    assert.match(m.json.error.message, /anthropic\/claude-mystery-1/);
    // a group that may route to an unpriced deployment is refused too
    assert.equal((await chat(gw, key, 'mixed')).status, 400);
    // nothing was called upstream, nothing billed
    assert.equal(await keySpend(gw, key), 0);
    // priced ones pass: the map, model_info prices, self-hosted, the mock model
    for (const model of ['gpt-4o', 'priced-by-info', 'local', 'mocked']) {
      const ok = await chat(gw, key, model);
      assert.equal(ok.status, 200, `${model}: ${ok.text}`);
    }
    // priced per image, not per token: priced
    const img = await postJSON(`${gw.url}/v1/images/generations`, { model: 'dall-e-3', prompt: 'a cat' },
      { authorization: `Bearer ${key}` });
    assert.equal(img.status, 200, img.text);
    // a key without a budget, a team without one, and the master key are not affected
    const free = await genKey(gw, {});
    assert.equal((await chat(gw, free, 'mystery')).status, 200);
    assert.equal((await chat(gw, MASTER_KEY, 'mystery')).status, 200);
    // a budget on the team counts
    const t = await api(gw.url, MASTER_KEY, 'POST', '/team/new', { team_alias: 'unpriced-team', max_budget: 3 });
    assert.equal(t.status, 200, t.text);
    const tk = await genKey(gw, { team_id: t.json.team_id });
    assert.equal((await chat(gw, tk, 'mystery')).status, 400);
  });

  test('allow: the call goes through at cost 0', async () => {
    const gw = await gateway(models() + general('  switchyard_unpriced_models: allow'));
    const key = await genKey(gw, { max_budget: 5 });
    const r = await chat(gw, key, 'mystery');
    assert.equal(r.status, 200, r.text);
    assert.equal(Number(r.headers.get('x-litellm-response-cost')), 0);
  });

  test('zero_cost_warn: through at cost 0, with a warning in the log', async () => {
    const gw = await gateway(models() + general('  switchyard_unpriced_models: zero_cost_warn'));
    const key = await genKey(gw, { max_budget: 5 });
    assert.equal((await chat(gw, key, 'mystery')).status, 200);
    assert.ok(await until(async () => /mystery.*has no price/.test(gw.log()), 5000), gw.log());
  });

  test('an unknown policy fails the config check', () => {
    const dir = tmpdir();
    const cfg = path.join(dir, 'c.yaml');
    fs.writeFileSync(cfg, models() + general('  switchyard_unpriced_models: maybe'));
    const r = spawnSync(SWITCHYARD, ['--config', cfg, '--check-config'], { encoding: 'utf8', timeout: 20000 });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout + r.stderr, /switchyard_unpriced_models: expected reject, allow or zero_cost_warn, found 'maybe'/);
  });
});

describe('user price maps', () => {
  test('general_settings.switchyard_model_prices is reloaded on SIGHUP: the next request bills the new price', async () => {
    const dir = tmpdir();
    const file = path.join(dir, 'prices.json');
    const price = (i, o) => JSON.stringify({ 'house-model': { litellm_provider: 'openai', mode: 'chat',
      input_cost_per_token: i, output_cost_per_token: o, max_input_tokens: 32000, max_output_tokens: 1234 } });
    fs.writeFileSync(file, price(1e-6, 2e-6));
    const gw = await gateway(`
model_list:
  - model_name: house
    litellm_params: {model: openai/house-model, api_base: "${mock.base}", api_key: sk-up}
general_settings:
  master_key: ${MASTER_KEY}
  proxy_batch_write_at: 0.1
  switchyard_model_prices: ${file}
`);
    const key = await genKey(gw, { max_budget: 10 });
    let r = await chat(gw, key, 'house');
    assert.equal(r.status, 200, r.text);
    const u1 = r.json.usage;
    near(Number(r.headers.get('x-litellm-response-cost')), u1.prompt_tokens * 1e-6 + u1.completion_tokens * 2e-6, 'before');
    // the map's limits reach model discovery
    const mi = await api(gw.url, MASTER_KEY, 'GET', '/v1/models/house');
    assert.equal(mi.status, 200, mi.text);
    assert.equal(mi.json.max_output_tokens, 1234);
    assert.equal(mi.json.context_window, 32000);

    fs.writeFileSync(file, price(5e-6, 7e-6));
    const reloads = (gw.log().match(/config reloaded/g) || []).length;
    gw.proc.kill('SIGHUP');
    assert.ok(await until(async () => (gw.log().match(/config reloaded/g) || []).length > reloads, 10000), gw.log());
    r = await chat(gw, key, 'house');
    assert.equal(r.status, 200, r.text);
    const u2 = r.json.usage;
    const second = u2.prompt_tokens * 5e-6 + u2.completion_tokens * 7e-6;
    near(Number(r.headers.get('x-litellm-response-cost')), second, 'after SIGHUP');
    await spendReaches(gw, key, u1.prompt_tokens * 1e-6 + u1.completion_tokens * 2e-6 + second);

    // a broken file on SIGHUP: the prices in use stay
    fs.writeFileSync(file, '{"house-model": ');
    gw.proc.kill('SIGHUP');
    assert.ok(await until(async () => /prices: .*prices\.json/.test(gw.log()), 10000), gw.log());
    r = await chat(gw, key, 'house');
    near(Number(r.headers.get('x-litellm-response-cost')), r.json.usage.prompt_tokens * 5e-6 + r.json.usage.completion_tokens * 7e-6, 'kept');
  });

  test('LITELLM_MODEL_COST_MAP_URL (file://) replaces the built-in map; an http URL fails --check-config', async () => {
    const dir = tmpdir();
    const file = path.join(dir, 'map.json');
    fs.writeFileSync(file, JSON.stringify({ 'gpt-4o': { litellm_provider: 'openai', mode: 'chat',
      input_cost_per_token: 9e-6, output_cost_per_token: 9e-6 } }));
    const yaml = `
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-up}
  - model_name: gpt-4o-mini
    litellm_params: {model: openai/gpt-4o-mini, api_base: "${mock.base}", api_key: sk-up}
general_settings:
  master_key: ${MASTER_KEY}
`;
    const gw = await gateway(yaml, { env: { LITELLM_MODEL_COST_MAP_URL: `file://${file}` } });
    const key = await genKey(gw, { max_budget: 10 });
    const r = await chat(gw, key, 'gpt-4o');
    assert.equal(r.status, 200, r.text);
    near(Number(r.headers.get('x-litellm-response-cost')), (r.json.usage.prompt_tokens + r.json.usage.completion_tokens) * 9e-6, 'map price');
    // gpt-4o-mini is not in that map: unpriced
    assert.equal((await chat(gw, key, 'gpt-4o-mini')).status, 400);

    const cfg = path.join(dir, 'c.yaml');
    fs.writeFileSync(cfg, yaml);
    const env = { ...process.env, LITELLM_MODEL_COST_MAP_URL: 'https://example.invalid/prices.json' };
    let c = spawnSync(SWITCHYARD, ['--config', cfg, '--check-config'], { encoding: 'utf8', env, timeout: 20000 });
    assert.equal(c.status, 1, c.stdout + c.stderr);
    assert.match(c.stdout, /is not fetched: download it/);
    env.LITELLM_LOCAL_MODEL_COST_MAP = 'True';
    c = spawnSync(SWITCHYARD, ['--config', cfg, '--check-config'], { encoding: 'utf8', env, timeout: 20000 });
    assert.equal(c.status, 0, c.stdout + c.stderr);
    assert.match(c.stdout, /prices: \d{4,} models in the price map/);
  });
});

describe('model discovery', () => {
  test('/v1/models, /v1/models/{id} and /model/info carry the context window and output limit', async () => {
    const gw = await gateway(`
model_list:
  - model_name: sonnet
    litellm_params: {model: anthropic/claude-sonnet-4-5-20250929, api_base: "${mock.url}", api_key: sk-ant}
  - model_name: small
    litellm_params: {model: openai/gpt-4o-mini, api_base: "${mock.base}", api_key: sk-up}
    model_info: {max_output_tokens: 777, max_input_tokens: 9000}
  - model_name: unknown
    litellm_params: {model: openai/never-heard-of-it, api_base: "${mock.base}", api_key: sk-up}
general_settings:
  master_key: ${MASTER_KEY}
`);
    const list = await api(gw.url, MASTER_KEY, 'GET', '/v1/models');
    assert.equal(list.status, 200, list.text);
    const by = Object.fromEntries(list.json.data.map((m) => [m.id, m]));
    for (const m of list.json.data) { // LiteLLM's members as they were
      assert.equal(m.object, 'model');
      assert.equal(typeof m.created, 'number');
      assert.equal(typeof m.owned_by, 'string');
    }
    assert.equal(by.sonnet.context_window, 200000);
    assert.equal(by.sonnet.max_input_tokens, 200000);
    assert.equal(by.sonnet.max_output_tokens, 64000);
    assert.equal(by.small.max_output_tokens, 777); // model_info wins
    assert.equal(by.small.context_window, 9000);
    assert.equal(by.unknown.context_window, undefined);
    const one = await api(gw.url, MASTER_KEY, 'GET', '/v1/models/sonnet');
    assert.equal(one.json.id, 'sonnet');
    assert.equal(one.json.max_output_tokens, 64000);
    const info = await api(gw.url, MASTER_KEY, 'GET', '/model/info');
    assert.equal(info.status, 200, info.text);
    const s = info.json.data.find((d) => d.model_name === 'sonnet').model_info;
    assert.equal(s.max_input_tokens, 200000);
    assert.equal(s.max_output_tokens, 64000);
    assert.equal(s.input_cost_per_token, 3e-6);
    assert.equal(s.cache_creation_input_token_cost_above_1hr, 6e-6);
  });
});
