// access.test.mjs - every model a request can reach passes the key's model
// access checks (issue 19): the requested model, the body's `fallbacks` in
// each LiteLLM form (refused 401 up front), config fallbacks,
// default_fallbacks and context_window_fallbacks (a group the key may not use
// is skipped, never called), the key's `aliases`, the team's model_aliases
// and model_group_alias (the alias or what it names), wildcard groups, and
// every ingress. The key is limited to "gpt-3.5-turbo"; each case asserts the
// mock upstream never saw the disallowed model. Also: a fallback to a
// wildcard group forwards the fallback's name, and /utils/token_counter,
// /v1/messages/count_tokens and /v1/models/{id} answer only for the key's models.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MASTER_KEY, api, chatBody, keysConfig, postJSON, startGateway, startMock } from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

let mock, gw;
const CW = 'status=400,error_code=context_length_exceeded,error_message=This model\'s maximum context length is 10 tokens';

const dep = (name, model, base) =>
  `  - model_name: "${name}"\n    litellm_params: {model: "${model}", api_base: "${base}", api_key: sk-up}\n`;

before(async () => {
  mock = await startMock();
  const b = mock.base;
  gw = await startGateway(`
model_list:
${dep('gpt-3.5-turbo', 'openai/gpt-3.5-turbo', b)}${dep('gpt-instruct', 'openai/gpt-instruct', b)}${dep('allowed-2', 'openai/allowed-2', b)}${dep('solo', 'openai/solo', b)}${dep('cw', `openai/cw@${CW}`, b)}${dep('openai/*', 'openai/*', b)}${dep('text-embedding-3-small', 'openai/text-embedding-3-small', b)}${dep('forbidden-embed', 'openai/forbidden-embed', b)}${dep('wfb', 'openai/wfb', b)}
router_settings:
  model_group_alias: {"mga": "gpt-instruct", "mga-ok": "gpt-3.5-turbo"}
  fallbacks: [{"gpt-3.5-turbo": ["gpt-instruct", "allowed-2"]}, {"wfb": ["openai/fb-wild"]}]
  default_fallbacks: ["gpt-instruct"]
  context_window_fallbacks: [{"cw": ["gpt-instruct"]}]
general_settings:
  master_key: ${MASTER_KEY}
`);
});
after(async () => {
  await gw?.stop();
  await mock?.stop();
});

const A = (method, p, body) => api(gw.url, MASTER_KEY, method, p, body);
async function keyFor(body) {
  const r = await A('POST', '/key/generate', body);
  assert.equal(r.status, 200, r.text);
  return r.json.key;
}
const auth = (key) => ({ authorization: `Bearer ${key}` });

/** The models the mock was asked for since the last reset (directives cut). */
async function upstreamModels() {
  const log = await mock.requests();
  const out = [];
  for (const q of log) {
    let m = null;
    try { m = JSON.parse(q.body).model; } catch { /* multipart or empty */ }
    if (typeof m !== 'string') {
      const mm = /name="model"\r\n\r\n([^\r]*)/.exec(q.body || '');
      m = mm ? mm[1] : q.path;
    }
    out.push(m.split('@')[0]);
  }
  return out;
}

function denied(r, model, allowed = "['gpt-3.5-turbo']") {
  assert.equal(r.status, 401, r.text);
  assert.equal(r.json.error.type, 'key_model_access_denied', r.text);
  assert.equal(r.json.error.param, 'model', r.text);
  assert.equal(r.json.error.code, '401', r.text);
  assert.equal(r.json.error.message,
    `key not allowed to access model. This key can only access models=${allowed}. Tried to access ${model}`);
}

async function chat(key, model, extra = {}) {
  await mock.reset();
  const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody(model, { max_tokens: 5, ...extra }), auth(key));
  return { ...r, models: await upstreamModels() };
}

describe('request fallbacks', () => {
  let key;
  before(async () => { key = await keyFor({ models: ['gpt-3.5-turbo'] }); });

  test('the requested model alone works and a disallowed model is refused', async () => {
    const ok = await chat(key, 'gpt-3.5-turbo');
    assert.equal(ok.status, 200, ok.text);
    const r = await chat(key, 'gpt-instruct');
    denied(r, 'gpt-instruct');
    assert.deepEqual(r.models, []);
  });

  const forms = {
    'list of strings': ['gpt-instruct'],
    'a string after an allowed one': ['gpt-3.5-turbo', 'gpt-instruct'],
    'dict with model and messages': [{ model: 'gpt-instruct', messages: [{ role: 'user', content: 'x' }] }],
    'dict mapping the requested group': [{ 'gpt-3.5-turbo': ['gpt-instruct'] }],
    'dict mapping "*"': [{ '*': ['gpt-instruct'] }],
    'a model_group_alias of it': ['mga'],
    'a wildcard group': ['openai/gpt-4o'],
  };
  for (const [name, fallbacks] of Object.entries(forms)) {
    test(`fallbacks as ${name}: 401 before any call`, async () => {
      const r = await chat(key, 'gpt-3.5-turbo', { fallbacks, mock_testing_fallbacks: true });
      const target = name === 'a model_group_alias of it' ? 'mga' : name === 'a wildcard group' ? 'openai/gpt-4o' : 'gpt-instruct';
      denied(r, target);
      assert.deepEqual(r.models, [], 'nothing was called');
    });
  }

  test('a dict keyed by another group is never reached, so not refused', async () => {
    const r = await chat(key, 'gpt-3.5-turbo', { fallbacks: [{ 'allowed-2': ['gpt-instruct'] }] });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.models, ['gpt-3.5-turbo']);
  });

  test('malformed fallbacks are a 400 naming the key, never a call', async () => {
    for (const fallbacks of ['gpt-instruct', [{ 'gpt-instruct': { messages: [] } }], [1], [{ 'gpt-3.5-turbo': [2] }], { a: 1 }]) {
      const r = await chat(key, 'gpt-3.5-turbo', { fallbacks });
      assert.equal(r.status, 400, `${JSON.stringify(fallbacks)}: ${r.text}`);
      assert.equal(r.json.error.param, 'fallbacks');
      assert.deepEqual(r.models, []);
    }
  });

  test('an allowed request fallback answers (string and dict forms)', async () => {
    const k2 = await keyFor({ models: ['gpt-3.5-turbo', 'allowed-2'] });
    for (const fallbacks of [['allowed-2'], [{ model: 'allowed-2', messages: [{ role: 'user', content: 'x' }] }],
      [{ 'gpt-3.5-turbo': ['allowed-2'] }]]) {
      const r = await chat(k2, 'gpt-3.5-turbo', { fallbacks, mock_testing_fallbacks: true });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.models, ['allowed-2']);
      assert.equal(r.headers.get('x-litellm-attempted-fallbacks'), '1');
    }
  });
});

describe('config fallbacks', () => {
  test('a config fallback group the key may not use is skipped, the next allowed one answers', async () => {
    const key = await keyFor({ models: ['gpt-3.5-turbo', 'allowed-2'] });
    const r = await chat(key, 'gpt-3.5-turbo', { mock_testing_fallbacks: true });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.models, ['allowed-2']);
  });

  test('no allowed config fallback: the original error, nothing called', async () => {
    const key = await keyFor({ models: ['gpt-3.5-turbo'] });
    const r = await chat(key, 'gpt-3.5-turbo', { mock_testing_fallbacks: true });
    assert.equal(r.status, 500, r.text);
    assert.match(r.json.error.message, /mock exception/);
    assert.deepEqual(r.models, []);
  });

  test('default_fallbacks: a disallowed group is skipped', async () => {
    const key = await keyFor({ models: ['solo'] });
    const r = await chat(key, 'solo', { mock_testing_fallbacks: true });
    assert.equal(r.status, 500, r.text);
    assert.deepEqual(r.models, []);
  });

  test('context_window_fallbacks: a disallowed group is skipped', async () => {
    const key = await keyFor({ models: ['cw'] });
    const r = await chat(key, 'cw');
    assert.equal(r.status, 400, r.text);
    assert.ok(!r.models.includes('gpt-instruct'), JSON.stringify(r.models));
    assert.ok(r.models.includes('cw'));
  });

  test('the master key still falls back through every configured group', async () => {
    const r = await chat(MASTER_KEY, 'gpt-3.5-turbo', { mock_testing_fallbacks: true });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.models, ['gpt-instruct']);
  });
});

describe('aliases and wildcard groups', () => {
  test('key aliases: routed to the target; allowed when the alias or its target is', async () => {
    const key = await keyFor({ models: ['gpt-3.5-turbo'], aliases: { fast: 'gpt-3.5-turbo', sneaky: 'gpt-instruct' } });
    let r = await chat(key, 'fast');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.models, ['gpt-3.5-turbo']);
    r = await chat(key, 'sneaky');
    denied(r, 'sneaky');
    assert.deepEqual(r.models, []);
    r = await chat(key, 'gpt-3.5-turbo', { fallbacks: ['sneaky'], mock_testing_fallbacks: true });
    denied(r, 'sneaky');
    assert.deepEqual(r.models, []);
  });

  test('a key\'s own alias cannot take it outside its team\'s models', async () => {
    const t = await A('POST', '/team/new', { models: ['gpt-3.5-turbo'] });
    assert.equal(t.status, 200, t.text);
    const key = await keyFor({ team_id: t.json.team_id, models: ['gpt-3.5-turbo'], aliases: { 'gpt-3.5-turbo': 'gpt-instruct' } });
    const r = await chat(key, 'gpt-3.5-turbo');
    assert.equal(r.status, 401, r.text);
    assert.equal(r.json.error.type, 'team_model_access_denied');
    assert.match(r.json.error.message, /Tried to access gpt-instruct$/);
    assert.deepEqual(r.models, []);
  });

  test('model_group_alias: the alias of a disallowed group is refused, of an allowed one served', async () => {
    const key = await keyFor({ models: ['gpt-3.5-turbo'] });
    let r = await chat(key, 'mga');
    denied(r, 'mga');
    assert.deepEqual(r.models, []);
    r = await chat(key, 'mga-ok');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.models, ['gpt-3.5-turbo']);
  });

  test('team model_aliases: routed to the target group; a disallowed target is refused', async () => {
    let t = await A('POST', '/team/new', { team_alias: 'aliased', models: ['gpt-3.5-turbo'], model_aliases: { a: 'gpt-3.5-turbo', b: 'gpt-instruct' } });
    assert.equal(t.status, 200, t.text);
    const key = await keyFor({ team_id: t.json.team_id });
    let r = await chat(key, 'a');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.models, ['gpt-3.5-turbo']);
    r = await chat(key, 'b');
    assert.equal(r.status, 401, r.text);
    assert.equal(r.json.error.type, 'team_model_access_denied');
    assert.deepEqual(r.models, []);
    // /team/update replaces them (the key's cached team is dropped)
    const u = await A('POST', '/team/update', { team_id: t.json.team_id, model_aliases: { c: 'gpt-3.5-turbo' } });
    assert.equal(u.status, 200, u.text);
    r = await chat(key, 'c');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.models, ['gpt-3.5-turbo']);
    r = await chat(key, 'a');
    assert.equal(r.status, 401, r.text);
    assert.deepEqual(r.models, []);
  });

  test('a key alias applies after the team alias, and the team alias wins the access check', async () => {
    const t = await A('POST', '/team/new', { models: ['gpt-3.5-turbo', 'allowed-2'], model_aliases: { x: 'y' } });
    assert.equal(t.status, 200, t.text);
    const key = await keyFor({ team_id: t.json.team_id, aliases: { y: 'allowed-2' } });
    const r = await chat(key, 'x'); // x -> y (team) -> allowed-2 (key): the team allows allowed-2
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.models, ['allowed-2']);
    const k2 = await keyFor({ team_id: t.json.team_id, aliases: { z: 'allowed-2' } });
    const r2 = await chat(k2, 'z');
    assert.equal(r2.status, 200, r2.text);
    assert.deepEqual(r2.models, ['allowed-2']);
  });

  test('a wildcard group: a key without it is refused; one with the pattern is served', async () => {
    const key = await keyFor({ models: ['gpt-3.5-turbo'] });
    let r = await chat(key, 'openai/gpt-4o');
    denied(r, 'openai/gpt-4o');
    assert.deepEqual(r.models, []);
    const k2 = await keyFor({ models: ['openai/*'] });
    r = await chat(k2, 'openai/gpt-4o');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.models, ['gpt-4o']);
  });

  test('a config fallback to a wildcard group: forwards its own name, and is checked by that name', async () => {
    let r = await chat(MASTER_KEY, 'wfb', { mock_testing_fallbacks: true });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.models, ['fb-wild']);
    const key = await keyFor({ models: ['wfb'] });
    r = await chat(key, 'wfb', { mock_testing_fallbacks: true });
    assert.equal(r.status, 500, r.text);
    assert.deepEqual(r.models, []);
    const k2 = await keyFor({ models: ['wfb', 'openai/fb-*'] });
    r = await chat(k2, 'wfb', { mock_testing_fallbacks: true });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.models, ['fb-wild']);
  });

  test('a fallback to a wildcard group forwards the fallback\'s name, not the requested one', async () => {
    const r = await chat(MASTER_KEY, 'gpt-3.5-turbo', { fallbacks: ['openai/gpt-4o-mini'], mock_testing_fallbacks: true });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.models, ['gpt-4o-mini']);
  });
});

describe('every ingress', () => {
  let key;
  before(async () => { key = await keyFor({ models: ['gpt-3.5-turbo', 'text-embedding-3-small'] }); });

  const multipart = (fields, boundary = 'AcCeSsBoUnDaRy') => {
    let s = '';
    for (const [k, v] of fields) {
      s += `--${boundary}\r\nContent-Disposition: form-data; name="${k}"${typeof v === 'object' ? `; filename="${v.filename}"` : ''}\r\n\r\n`;
      s += `${typeof v === 'object' ? v.data : v}\r\n`;
    }
    return { body: `${s}--${boundary}--\r\n`, type: `multipart/form-data; boundary=${boundary}` };
  };

  const json = (p, body) => ({ p, body: JSON.stringify(body), type: 'application/json' });
  const cases = {
    chat: json('/v1/chat/completions', chatBody('gpt-instruct')),
    completions: json('/v1/completions', { model: 'gpt-instruct', prompt: 'hi' }),
    embeddings: json('/v1/embeddings', { model: 'forbidden-embed', input: 'hi' }),
    messages: json('/v1/messages', { model: 'gpt-instruct', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    responses: json('/v1/responses', { model: 'gpt-instruct', input: 'hi' }),
    images: json('/v1/images/generations', { model: 'gpt-instruct', prompt: 'a cat' }),
    speech: json('/v1/audio/speech', { model: 'gpt-instruct', input: 'hi', voice: 'alloy' }),
    moderations: json('/v1/moderations', { model: 'gpt-instruct', input: 'hi' }),
    rerank: json('/v1/rerank', { model: 'gpt-instruct', query: 'q', documents: ['a'] }),
    azure: json('/openai/deployments/gpt-instruct/chat/completions', chatBody('x')),
    transcriptions: { p: '/v1/audio/transcriptions', ...multipart([['model', 'gpt-instruct'], ['file', { filename: 'a.wav', data: 'RIFF' }]]) },
    files: { p: '/v1/files?model=gpt-instruct', method: 'GET' },
    batches: { p: '/v1/batches?model=gpt-instruct', method: 'GET' },
  };
  for (const [name, c] of Object.entries(cases)) {
    test(`${name}: a model the key may not use is refused 401, never called`, async () => {
      await mock.reset();
      const res = await fetch(`${gw.url}${c.p}`, {
        method: c.method || 'POST',
        headers: { ...auth(key), ...(c.type ? { 'content-type': c.type } : {}) },
        body: c.body,
      });
      const text = await res.text();
      assert.equal(res.status, 401, `${name}: ${text}`);
      const j = JSON.parse(text);
      const err = j.error;
      assert.match(typeof err === 'object' ? err.message : text, /not allowed to access model/, text);
      const seen = await upstreamModels();
      assert.ok(!seen.some((m) => m === 'gpt-instruct' || m === 'forbidden-embed' || /files|batches/.test(m)),
        JSON.stringify(seen));
    });
  }

  test('request fallbacks are checked on every JSON ingress', async () => {
    const fb = { fallbacks: ['gpt-instruct'], mock_testing_fallbacks: true };
    for (const [p, body] of [
      ['/v1/completions', { model: 'gpt-3.5-turbo', prompt: 'hi', ...fb }],
      ['/v1/embeddings', { model: 'text-embedding-3-small', input: 'hi', ...fb }],
      ['/v1/messages', { model: 'gpt-3.5-turbo', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], ...fb }],
      ['/v1/responses', { model: 'gpt-3.5-turbo', input: 'hi', ...fb }],
      ['/v1/moderations', { model: 'gpt-3.5-turbo', input: 'hi', ...fb }],
      ['/openai/deployments/gpt-3.5-turbo/chat/completions', { messages: [{ role: 'user', content: 'hi' }], ...fb }],
    ]) {
      await mock.reset();
      const r = await postJSON(`${gw.url}${p}`, body, auth(key));
      assert.equal(r.status, 401, `${p}: ${r.text}`);
      assert.match(r.text, /Tried to access gpt-instruct/, p);
      assert.deepEqual(await upstreamModels(), [], p);
    }
  });

  test('the same ingresses serve the allowed model', async () => {
    await mock.reset();
    let r = await postJSON(`${gw.url}/v1/messages`, { model: 'gpt-3.5-turbo', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, auth(key));
    assert.equal(r.status, 200, r.text);
    r = await postJSON(`${gw.url}/v1/embeddings`, { model: 'text-embedding-3-small', input: 'hi' }, auth(key));
    assert.equal(r.status, 200, r.text);
  });
});

describe('routes that answer about a model', () => {
  let key;
  before(async () => { key = await keyFor({ models: ['gpt-3.5-turbo'], aliases: { fast: 'gpt-3.5-turbo' } }); });

  test('/utils/token_counter: 401 for a model the key may not use, 200 for its own', async () => {
    let r = await postJSON(`${gw.url}/utils/token_counter`, { model: 'gpt-instruct', messages: [{ role: 'user', content: 'hi' }] }, auth(key));
    denied(r, 'gpt-instruct');
    r = await postJSON(`${gw.url}/utils/token_counter`, { model: 'openai/gpt-4o', prompt: 'hi' }, auth(key));
    denied(r, 'openai/gpt-4o');
    r = await postJSON(`${gw.url}/utils/token_counter`, { model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'hi' }] }, auth(key));
    assert.equal(r.status, 200, r.text);
    assert.ok(r.json.total_tokens > 0);
    r = await postJSON(`${gw.url}/utils/token_counter`, { model: 'fast', messages: [{ role: 'user', content: 'hi' }] }, auth(key));
    assert.equal(r.status, 200, r.text);
  });

  test('/v1/messages/count_tokens: 401 in Anthropic\'s shape for a model the key may not use', async () => {
    const body = (model) => ({ model, messages: [{ role: 'user', content: 'hi there' }] });
    let r = await postJSON(`${gw.url}/v1/messages/count_tokens`, body('gpt-instruct'), auth(key));
    assert.equal(r.status, 401, r.text);
    assert.match(r.text, /key not allowed to access model/);
    r = await postJSON(`${gw.url}/v1/messages/count_tokens`, body('gpt-3.5-turbo'), auth(key));
    assert.equal(r.status, 200, r.text);
    assert.ok(r.json.input_tokens > 0);
  });

  test('/v1/models/{id}: a model the key cannot see does not exist for it (404, as an unknown one)', async () => {
    const get = async (id, k = key) => {
      const res = await fetch(`${gw.url}/v1/models/${id}`, { headers: auth(k) });
      return { status: res.status, json: await res.json() };
    };
    let r = await get('gpt-instruct');
    assert.equal(r.status, 404);
    const unknown = await get('no-such-model');
    assert.equal(unknown.status, 404);
    assert.equal(r.json.error.message, "The model 'gpt-instruct' does not exist");
    r = await get('openai%2Fgpt-4o');
    assert.equal(r.status, 404);
    r = await get('gpt-3.5-turbo');
    assert.equal(r.status, 200);
    assert.equal(r.json.id, 'gpt-3.5-turbo');
    r = await get('fast');
    assert.equal(r.status, 200);
    r = await get('gpt-instruct', MASTER_KEY);
    assert.equal(r.status, 200);
  });
});

describe('on PostgreSQL', () => {
  let pg, g2;
  before(async () => {
    pg = await startPostgres();
    g2 = await startGateway(keysConfig(mock.base, { databaseUrl: await pg.createDb('access_test') }));
  });
  after(async () => {
    await g2?.stop();
    await pg?.stop();
  });

  test('team model_aliases are stored in LiteLLM_ModelTable and route the team\'s keys', async () => {
    const B = (method, p, body) => api(g2.url, MASTER_KEY, method, p, body);
    const t = await B('POST', '/team/new', { models: ['priced'], model_aliases: { cheap: 'priced', dear: 'other' } });
    assert.equal(t.status, 200, t.text);
    const t2 = await B('POST', '/team/new', { model_aliases: { x: 'priced' } });
    assert.equal(t2.status, 200, t2.text);
    const rows = await pg.psql('SELECT t.team_id, m.aliases FROM "LiteLLM_TeamTable" t JOIN "LiteLLM_ModelTable" m ON m.id = t.model_id ORDER BY m.id',
      pg.url.replace(/\/[^/]*$/, '/access_test'));
    assert.deepEqual(rows.map((r) => r.aliases), [{ cheap: 'priced', dear: 'other' }, { x: 'priced' }]);
    const k = await B('POST', '/key/generate', { team_id: t.json.team_id });
    assert.equal(k.status, 200, k.text);
    await mock.reset();
    let r = await postJSON(`${g2.url}/v1/chat/completions`, chatBody('cheap', { max_tokens: 5 }), { authorization: `Bearer ${k.json.key}` });
    assert.equal(r.status, 200, r.text);
    r = await postJSON(`${g2.url}/v1/chat/completions`, chatBody('dear', { max_tokens: 5 }), { authorization: `Bearer ${k.json.key}` });
    assert.equal(r.status, 401, r.text);
    assert.deepEqual(await upstreamModels(), ['priced']);
  });
});
