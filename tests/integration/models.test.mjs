// models.test.mjs - GET /v1/models and /model/info list only what switchyard
// can serve: a group whose provider is not supported is left out, wildcard
// groups list their provider's known models (LiteLLM's
// get_known_models_from_wildcard over the price table) and their own pattern
// only with ?return_wildcard_routes=true; a virtual key's model list still
// filters. No upstream is called.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MASTER_KEY, api, startGateway } from '../lib/harness.mjs';

const BASE = 'http://127.0.0.1:9/v1'; // never called
let gw;

before(async () => {
  gw = await startGateway(`
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${BASE}", api_key: sk-up}
    model_info: {id: dep-gpt, access_groups: [beta]}
  - model_name: sage
    litellm_params: {model: sagemaker/x, api_key: sk-up}
    model_info: {id: dep-sage}
  - model_name: "openai/*"
    litellm_params: {model: "openai/*", api_base: "${BASE}", api_key: sk-up}
    model_info: {id: dep-wild}
  - model_name: "anthropic/claude-sonnet-4*"
    litellm_params: {model: "anthropic/claude-sonnet-4*", api_key: sk-ant}
  - model_name: "sm/*"
    litellm_params: {model: "sagemaker/*", api_key: sk-up}
  - model_name: "*"
    litellm_params: {model: "openai/*", api_base: "${BASE}", api_key: sk-up}
router_settings:
  model_group_alias: {nick: gpt-4o, sagenick: sage}
general_settings:
  master_key: ${MASTER_KEY}
`);
});
after(async () => { await gw.stop(); });

const ids = async (p, key = MASTER_KEY) => {
  const r = await api(gw.url, key, 'GET', p);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.object, 'list');
  // LiteLLM's members first; the map's limits (context_window, max_input_tokens, max_output_tokens) when known
  for (const m of r.json.data) {
    assert.deepEqual(Object.keys(m).slice(0, 4), ['id', 'object', 'created', 'owned_by']);
    for (const k of Object.keys(m).slice(4)) assert.ok(['context_window', 'max_input_tokens', 'max_output_tokens'].includes(k), k);
  }
  return r.json.data.map((m) => m.id);
};

test('/v1/models: servable groups and aliases; wildcard groups as their known models', async () => {
  for (const p of ['/v1/models', '/models']) {
    const list = await ids(p);
    assert.equal(new Set(list).size, list.length, 'no duplicates');
    assert.ok(list.includes('gpt-4o') && list.includes('nick'), list.join(','));
    // unsupported provider: not listed, nor its alias, nor its wildcard
    assert.ok(!list.includes('sage') && !list.includes('sagenick') && !list.some((m) => m.startsWith('sm/')), list.join(','));
    // openai/*: the price table's openai models, provider-prefixed; no pattern
    for (const m of ['openai/gpt-4o', 'openai/gpt-4o-mini', 'openai/text-embedding-3-small']) assert.ok(list.includes(m), m);
    assert.ok(!list.some((m) => m.includes('*')), list.join(','));
    assert.ok(!list.includes('gpt-4o-mini') && !list.includes('claude-sonnet-4-5'));
    // a partial pattern filters: anthropic/claude-sonnet-4* -> only claude-sonnet-4-...
    const ant = list.filter((m) => m.startsWith('anthropic/'));
    assert.ok(ant.includes('anthropic/claude-sonnet-4-5'), ant.join(','));
    assert.ok(ant.length > 0 && ant.every((m) => m.startsWith('anthropic/claude-sonnet-4')), ant.join(','));
    assert.ok(!list.includes('beta'), 'access groups only when asked');
  }
});

test('/v1/models?return_wildcard_routes=true adds the patterns of servable groups', async () => {
  const list = await ids('/v1/models?return_wildcard_routes=true');
  assert.ok(list.includes('openai/*') && list.includes('*') && list.includes('anthropic/claude-sonnet-4*'), list.join(','));
  assert.ok(!list.includes('sm/*'), 'unsupported provider');
  assert.ok(list.includes('openai/gpt-4o') && list.includes('gpt-4o'));
  assert.equal(new Set(list).size, list.length, 'no duplicates');
  const plain = await ids('/v1/models?return_wildcard_routes=false');
  assert.ok(!plain.includes('openai/*'));
});

test('/v1/models?include_model_access_groups=true adds access group names', async () => {
  const list = await ids('/v1/models?include_model_access_groups=true');
  assert.ok(list.includes('beta') && list.includes('gpt-4o'), list.join(','));
});

test('/v1/models/{id}: a servable name answers with the id asked; an unsupported one is 404', async () => {
  let r = await api(gw.url, MASTER_KEY, 'GET', '/v1/models/nick');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.id, 'nick');
  r = await api(gw.url, MASTER_KEY, 'GET', '/v1/models/sage');
  assert.equal(r.status, 404, r.text);
});

test('a virtual key with a model list sees only what it may call', async () => {
  const g = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { models: ['gpt-4o', 'openai/gpt-4o-mini', 'sage'] });
  assert.equal(g.status, 200, g.text);
  const list = await ids('/v1/models', g.json.key);
  assert.deepEqual(list.sort(), ['gpt-4o', 'openai/gpt-4o-mini']);
  const w = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { models: ['openai/*'] });
  assert.equal(w.status, 200, w.text);
  const wl = await ids('/v1/models', w.json.key);
  // (gpt-4o too: an OpenAI model, which the key's openai/* lets it call, as LiteLLM)
  assert.ok(wl.includes('openai/gpt-4o') && !wl.includes('openai/*') && !wl.includes('nick'), wl.join(','));
  assert.ok((await ids('/v1/models?return_wildcard_routes=true', w.json.key)).includes('openai/*'));
});

test('/model/info and /v2/model/info leave out deployments that cannot be served', async () => {
  for (const p of ['/model/info', '/v1/model/info', '/v2/model/info']) {
    const r = await api(gw.url, MASTER_KEY, 'GET', p);
    assert.equal(r.status, 200, r.text);
    const names = r.json.data.map((d) => d.model_name);
    assert.ok(names.includes('gpt-4o') && names.includes('openai/*') && names.includes('*'), `${p}: ${names}`);
    assert.ok(!names.includes('sage') && !names.includes('sm/*'), `${p}: ${names}`);
  }
  let r = await api(gw.url, MASTER_KEY, 'GET', '/model/info?litellm_model_id=dep-gpt');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.data[0].model_info.id, 'dep-gpt');
  r = await api(gw.url, MASTER_KEY, 'GET', '/model/info?litellm_model_id=dep-sage');
  assert.equal(r.status, 400, r.text);
  r = await api(gw.url, MASTER_KEY, 'GET', '/v2/model/info?model=sage');
  assert.deepEqual(r.json.data, []);
  r = await api(gw.url, MASTER_KEY, 'GET', '/model_group/info');
  const groups = r.json.data.map((d) => d.model_group);
  assert.ok(groups.includes('gpt-4o') && !groups.includes('sage'), groups.join(','));
});
