// model-info-access.test.mjs - model info for every key (issue 19): the
// model info routes answer any virtual key, narrowed to the models it may
// use (its models, access groups, all-team-models, wildcard patterns);
// /model_group/info lists a wildcard group's known models as groups of
// their own; GET /v1/models?only_model_access_groups=true lists access group
// names only. SQLite (the model info routes read no database; keys do).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MASTER_KEY, api, startGateway } from '../lib/harness.mjs';

const BASE = 'http://127.0.0.1:9/v1'; // never called
let gw;
const ok = (r) => { assert.equal(r.status, 200, r.text); return r.json; };
const A = (method, p, body) => api(gw.url, MASTER_KEY, method, p, body);

before(async () => {
  gw = await startGateway(`
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${BASE}", api_key: sk-up}
    model_info: {id: dep-gpt, access_groups: [beta]}
  - model_name: mini
    litellm_params: {model: openai/gpt-4o-mini, api_base: "${BASE}", api_key: sk-up}
    model_info: {id: dep-mini, access_groups: [beta, cheap]}
  - model_name: plain
    litellm_params: {model: openai/gpt-4o-mini, api_base: "${BASE}", api_key: sk-up}
    model_info: {id: dep-plain}
  - model_name: "anthropic/claude-sonnet-4*"
    litellm_params: {model: "anthropic/claude-sonnet-4*", api_key: sk-ant}
    model_info: {id: dep-wild}
general_settings:
  master_key: ${MASTER_KEY}
`);
});
after(async () => { await gw?.stop(); });

const names = (r) => [...new Set(r.data.map((d) => d.model_name))].sort();

test('every key may call the model info routes, narrowed to its models', async () => {
  const beta = ok(await A('POST', '/key/generate', { models: ['beta'] })).key;
  for (const p of ['/model/info', '/v1/model/info', '/v2/model/info'])
    assert.deepEqual(names(ok(await api(gw.url, beta, 'GET', p))), ['gpt-4o', 'mini'], p);
  const groups = ok(await api(gw.url, beta, 'GET', '/model_group/info'));
  assert.deepEqual(groups.data.map((g) => g.model_group).sort(), ['gpt-4o', 'mini']);
  let r = await api(gw.url, beta, 'GET', '/model/info?litellm_model_id=dep-plain');
  assert.equal(r.status, 400, r.text);
  assert.match(r.text, /Model id = dep-plain not found/);
  assert.equal(ok(await api(gw.url, beta, 'GET', '/model/info?litellm_model_id=dep-mini')).data[0].model_name, 'mini');
  // the caller's own models only, whatever ?model= asks
  assert.deepEqual(ok(await api(gw.url, beta, 'GET', '/v2/model/info?model=plain')).data, []);
  // a key with no model list sees everything; a wildcard key its pattern's group
  const free = ok(await A('POST', '/key/generate', {})).key;
  assert.deepEqual(names(ok(await api(gw.url, free, 'GET', '/model/info'))),
    ['anthropic/claude-sonnet-4*', 'gpt-4o', 'mini', 'plain']);
  const wild = ok(await A('POST', '/key/generate', { models: ['anthropic/claude-sonnet-4*'] })).key;
  assert.deepEqual(names(ok(await api(gw.url, wild, 'GET', '/model/info'))), ['anthropic/claude-sonnet-4*']);
  // no key at all is still refused
  r = await api(gw.url, 'sk-nope', 'GET', '/model/info');
  assert.equal(r.status, 401, r.text);
});

test('/model_group/info lists a wildcard group\'s known models', async () => {
  const all = ok(await A('GET', '/model_group/info'));
  const groups = all.data.map((g) => g.model_group);
  assert.ok(groups.includes('anthropic/claude-sonnet-4*'), groups.join());
  const expanded = all.data.filter((g) => g.model_group.startsWith('anthropic/claude-sonnet-4') && !g.model_group.endsWith('*'));
  assert.ok(expanded.length >= 1, groups.join());
  for (const g of expanded) {
    assert.deepEqual(g.providers, ['anthropic']);
    assert.ok(g.input_cost_per_token > 0, JSON.stringify(g));
  }
  const one = ok(await A('GET', `/model_group/info?model_group=${encodeURIComponent(expanded[0].model_group)}`));
  assert.deepEqual(one.data.map((g) => g.model_group), [expanded[0].model_group]);
  // a key limited to gpt-4o sees none of them
  const k = ok(await A('POST', '/key/generate', { models: ['gpt-4o'] })).key;
  assert.deepEqual(ok(await api(gw.url, k, 'GET', '/model_group/info')).data.map((g) => g.model_group), ['gpt-4o']);
});

test('/v1/models?only_model_access_groups=true', async () => {
  const ids = async (p, key = MASTER_KEY) => ok(await api(gw.url, key, 'GET', p)).data.map((d) => d.id);
  assert.deepEqual(await ids('/v1/models?only_model_access_groups=true&include_model_access_groups=true'),
    ['beta', 'cheap']);
  assert.deepEqual(await ids('/models?only_model_access_groups=True'), []);
  const k = ok(await A('POST', '/key/generate', { models: ['cheap', 'plain'] })).key;
  assert.deepEqual(await ids('/v1/models?only_model_access_groups=true&include_model_access_groups=true', k), ['cheap']);
  assert.deepEqual((await ids('/v1/models', k)).sort(), ['mini', 'plain']);
});
