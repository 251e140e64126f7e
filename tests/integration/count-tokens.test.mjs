// count-tokens.test.mjs - POST /v1/messages/count_tokens asks the deployment's
// own counter (Anthropic, Bedrock CountTokens, Vertex Claude count-tokens,
// Gemini and Vertex countTokens), counts OpenAI models exactly with the
// built-in tokenizer, and otherwise (or when the counter fails, times out or
// answers without a count) answers an estimate biased up, saying which in
// x-switchyard-token-count. The mock's counters check auth (x-api-key, SigV4
// against the secret, an OAuth token the mock issued) and the body's shape,
// and answer the bytes of the body's text + a constant per counter
// (docs/testing-mock.md), so the exact number proves which counter answered
// and that the request's text reached it. No timings are asserted.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { api, postJSON, startGateway, startMock, tmpdir } from '../lib/harness.mjs';

const KEY = 'sk-count-master';
const AUTH = { authorization: `Bearer ${KEY}` };
const UPKEY = 'k-upstream';
const BEDROCK_ID = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
// what each mock counter adds to the text bytes (tests/mock/mock.h MOCK_COUNT_*)
const ADD = { anthropic: 3, vertexClaude: 5, bedrock: 7, gemini: 11, vertexGemini: 13 };
// SY_COUNT_FACTOR, SY_COUNT_PER_MSG, SY_COUNT_TOOLS (providers/count.h, docs/tokenizer.md)
const FACTOR = 1.5, PER_MSG = 4, TOOLS = 346;

const SYSTEM = 'You are terse.';
const ASK = 'Say hello.';
const body = (model, extra = {}) => ({ model, system: SYSTEM, messages: [{ role: 'user', content: ASK }], ...extra });
const TEXT = SYSTEM.length + ASK.length;

let mock, gw, dir;

before(async () => {
  mock = await startMock(['--aws-secret-key', 'secret', '--require-key', UPKEY]);
  dir = tmpdir();
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  fs.writeFileSync(path.join(dir, 'sa.json'), JSON.stringify({
    type: 'service_account', project_id: 'p1', private_key_id: 'k1', private_key: privateKey,
    client_email: 'sy-count@p1.iam.gserviceaccount.com', client_id: '1', token_uri: `${mock.url}/token`,
  }));
  const base = `api_base: "${mock.url}"`;
  const anth = (m, extra = '') => `{model: "anthropic/${m}", ${base}, api_key: ${UPKEY}${extra}}`;
  const bed = (m, secret = 'secret') =>
    `{model: "bedrock/${m}", ${base}, aws_access_key_id: AKIDEXAMPLE, aws_secret_access_key: ${secret}, aws_region_name: us-east-1}`;
  const vtx = (m) => `{model: "vertex_ai/${m}", ${base}, vertex_project: p1, vertex_location: us-central1, vertex_credentials: "${dir}/sa.json"}`;
  const deps = [
    ['claude-sonnet-4-5', anth('claude-sonnet-4-5-20250929')],
    ['claude-badkey', `{model: "anthropic/claude-sonnet-4-5-20250929", ${base}, api_key: wrong-key}`],
    ['claude-500', anth('claude-sonnet-4-5-20250929@status=500')],
    ['claude-400', anth('claude-sonnet-4-5-20250929@status=400')],
    ['claude-slow', anth('claude-sonnet-4-5-20250929@delay_ms=5000', ', timeout: 1')],
    ['bedrock-claude', bed(`us.${BEDROCK_ID}`)],
    ['bedrock-badsig', bed(BEDROCK_ID, 'not-the-secret')],
    ['vertex-claude', vtx('claude-sonnet-4-5@20250929')],
    ['gemini', `{model: "gemini/gemini-2.5-pro", ${base}, api_key: ${UPKEY}}`],
    ['vertex-gemini', vtx('gemini-2.5-pro')],
    ['gpt-4o', `{model: "openai/gpt-4o", api_base: "${mock.base}", api_key: ${UPKEY}}`],
    ['gpt-4', `{model: "openai/gpt-4", api_base: "${mock.base}", api_key: ${UPKEY}}`],
    ['cohere', `{model: "cohere/command-r-plus", ${base}, api_key: ${UPKEY}}`],
    ['claude-mocked', `{model: "anthropic/claude-sonnet-4-5", mock_response: "hi"}`],
    ['mock-gpt', '{model: "mock/gpt-4o"}'],
  ];
  let yaml = 'model_list:\n';
  for (const [n, p] of deps) yaml += `  - model_name: ${n}\n    litellm_params: ${p}\n`;
  yaml += `general_settings:\n  master_key: ${KEY}\n`;
  gw = await startGateway(yaml);
});

after(async () => {
  await gw?.stop();
  await mock?.stop();
});

const count = (b, headers = {}) => postJSON(`${gw.url}/v1/messages/count_tokens`, b, { ...AUTH, ...headers });
const lastRequest = async (re) => (await mock.requests()).filter((q) => re.test(q.path)).at(-1);

function provider(r, n) {
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(Object.keys(r.json), ['input_tokens']);
  assert.equal(r.headers.get('x-switchyard-token-count'), 'provider', r.text);
  assert.equal(r.json.input_tokens, n);
}

// the exact cl100k count of the same request (the tokenizer every non-OpenAI deployment estimates with)
async function cl100k(b) {
  const r = await count({ ...b, model: 'gpt-4' });
  assert.equal(r.headers.get('x-switchyard-token-count'), 'exact');
  return r.json.input_tokens;
}

test('anthropic: the provider counter gets the body with the deployment model, key, version and beta', async () => {
  const r = await count(body('claude-sonnet-4-5', { max_tokens: 100, stream: false, temperature: 0.2 }),
    { 'anthropic-beta': 'token-counting-2024-11-01', 'anthropic-version': '2023-06-01' });
  provider(r, TEXT + ADD.anthropic);
  const q = await lastRequest(/^\/v1\/messages\/count_tokens$/);
  const sent = JSON.parse(q.body);
  assert.equal(sent.model, 'claude-sonnet-4-5-20250929');
  assert.equal(sent.system, SYSTEM);
  for (const k of ['max_tokens', 'stream', 'temperature']) assert.ok(!(k in sent), `${k} forwarded`);
  assert.equal(q.headers['x-api-key'], UPKEY);
  assert.equal(q.headers['anthropic-version'], '2023-06-01');
  assert.equal(q.headers['anthropic-beta'], 'token-counting-2024-11-01');
});

test('anthropic: tools and content blocks reach the counter (their text counted)', async () => {
  const tools = [{ name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
  const b = {
    model: 'claude-sonnet-4-5',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] }],
    tools,
  };
  const r = await count(b);
  provider(r, 'Weather in Paris?'.length + 'Weather of a city'.length + ADD.anthropic);
  const sent = JSON.parse((await lastRequest(/count_tokens$/)).body);
  assert.deepEqual(sent.tools, tools);
});

test('bedrock: CountTokens with the foundation model id, SigV4 the mock verifies, the invoke body in base64', async () => {
  const r = await count(body('bedrock-claude'));
  provider(r, TEXT + ADD.bedrock);
  const q = await lastRequest(/count-tokens$/);
  assert.equal(q.path, `/model/${encodeURIComponent(BEDROCK_ID)}/count-tokens`); // "us." dropped
  assert.match(q.headers.authorization, /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
  const inv = JSON.parse(Buffer.from(JSON.parse(q.body).input.invokeModel.body, 'base64').toString());
  assert.equal(inv.anthropic_version, 'bedrock-2023-05-31');
  assert.ok(Number.isInteger(inv.max_tokens));
  assert.ok(!('model' in inv));
  assert.deepEqual(inv.messages, [{ role: 'user', content: ASK }]);
});

test('vertex_ai claude: count-tokens:rawPredict with the OAuth token', async () => {
  const r = await count(body('vertex-claude'));
  provider(r, TEXT + ADD.vertexClaude);
  const q = await lastRequest(/count-tokens:rawPredict$/);
  assert.equal(q.path, '/v1/projects/p1/locations/us-central1/publishers/anthropic/models/count-tokens:rawPredict');
  assert.match(q.headers.authorization, /^Bearer ya29\.mock-/);
  assert.equal(JSON.parse(q.body).model, 'claude-sonnet-4-5@20250929');
});

test('gemini and vertex_ai gemini: countTokens with the request translated to contents', async () => {
  let r = await count(body('gemini'));
  provider(r, TEXT + ADD.gemini);
  let q = await lastRequest(/:countTokens$/);
  assert.equal(q.path, '/v1beta/models/gemini-2.5-pro:countTokens');
  assert.equal(q.headers['x-goog-api-key'], UPKEY);
  const g = JSON.parse(q.body).generateContentRequest;
  assert.equal(g.model, 'models/gemini-2.5-pro');
  assert.equal(g.contents[0].parts[0].text, ASK);
  assert.equal(g.systemInstruction.parts[0].text, SYSTEM);

  r = await count(body('vertex-gemini'));
  provider(r, TEXT + ADD.vertexGemini);
  q = await lastRequest(/:countTokens$/);
  assert.equal(q.path, '/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-pro:countTokens');
  assert.match(q.headers.authorization, /^Bearer ya29\.mock-/);
  assert.equal(JSON.parse(q.body).contents[0].parts[0].text, ASK);
});

test('openai models: exact, from the built-in tokenizer, no upstream call', async () => {
  await mock.reset();
  const r = await count(body('gpt-4o'));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-switchyard-token-count'), 'exact');
  assert.ok(r.json.input_tokens > 0);
  assert.deepEqual(await mock.requests(), []);
  // the same count /utils/token_counter gives for the OpenAI form
  const t = await postJSON(`${gw.url}/utils/token_counter`, {
    model: 'gpt-4o', messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: ASK }],
  }, AUTH);
  assert.equal(r.json.input_tokens, t.json.total_tokens);
});

test('no counter (cohere): an estimate that says so and never understates', async () => {
  await mock.reset();
  const b = body('cohere');
  const r = await count(b);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-switchyard-token-count'), 'estimate');
  assert.deepEqual(await mock.requests(), []);
  const exact = await cl100k(b);
  assert.equal(r.json.input_tokens, Math.ceil(exact * FACTOR) + 2 * PER_MSG); // one message + system
  assert.ok(r.json.input_tokens >= exact * 1.15);
  // tools add Anthropic's tool-use system prompt
  const tools = [{ name: 'f', description: 'd', input_schema: { type: 'object' } }];
  const rt = await count({ ...b, tools });
  assert.equal(rt.json.input_tokens, Math.ceil((await cl100k({ ...b, tools })) * FACTOR) + 2 * PER_MSG + TOOLS);
});

test('a counter that fails (401 key, SigV4 refused, 500, 400, timeout): the estimate', async () => {
  const exact = await cl100k(body('x'));
  const est = Math.ceil(exact * FACTOR) + 2 * PER_MSG;
  for (const m of ['claude-badkey', 'bedrock-badsig', 'claude-500', 'claude-400', 'claude-slow']) {
    const r = await count(body(m));
    assert.equal(r.status, 200, `${m}: ${r.text}`);
    assert.equal(r.headers.get('x-switchyard-token-count'), 'estimate', m);
    assert.equal(r.json.input_tokens, est, m);
  }
});

test('model access: a key without the model gets 401 in Anthropic\'s shape, and no upstream call', async () => {
  const k = await api(gw.url, KEY, 'POST', '/key/generate', { models: ['gemini'] });
  assert.equal(k.status, 200, k.text);
  await mock.reset();
  const r = await postJSON(`${gw.url}/v1/messages/count_tokens`, body('claude-sonnet-4-5'), { 'x-api-key': k.json.key });
  assert.equal(r.status, 401, r.text);
  assert.equal(r.json.type, 'error');
  assert.match(r.json.error.message, /key not allowed to access model/);
  assert.deepEqual(await mock.requests(), []);
  const ok = await postJSON(`${gw.url}/v1/messages/count_tokens`, body('gemini'), { 'x-api-key': k.json.key });
  provider(ok, TEXT + ADD.gemini);
});

test('bad input: not JSON, not an object, no messages: 400 in Anthropic\'s shape', async () => {
  for (const b of ['{"model":', '[1,2]', JSON.stringify({ model: 'claude-sonnet-4-5' }),
    JSON.stringify({ model: 'claude-sonnet-4-5', messages: 'hi' })]) {
    const r = await count(b);
    assert.equal(r.status, 400, `${b}: ${r.text}`);
    assert.equal(r.json.type, 'error', r.text);
    assert.equal(r.json.error.type, 'invalid_request_error', r.text);
  }
  // a huge prompt still gets an answer (counted off the loop)
  const big = 'lorem ipsum dolor sit amet '.repeat(40000);
  const r = await count({ model: 'cohere', messages: [{ role: 'user', content: big }] });
  assert.equal(r.status, 200, r.text);
  assert.ok(r.json.input_tokens > 200000 * 1.15, String(r.json.input_tokens));
});

test('in-process deployments (mock_response, mock/): no upstream call; an OpenAI name counts exactly', async () => {
  await mock.reset();
  let r = await count(body('claude-mocked'));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-switchyard-token-count'), 'estimate');
  r = await count(body('mock-gpt'));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-switchyard-token-count'), 'exact');
  assert.deepEqual(await mock.requests(), []);
});

test('a model no group serves: estimated (an OpenAI model named directly: exact)', async () => {
  let r = await count(body('no-such-model'));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-switchyard-token-count'), 'estimate');
  r = await count(body('gpt-4.1-mini'));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-switchyard-token-count'), 'exact');
});

test('a client that leaves while the counter is slow: the gateway carries on', async () => {
  const ac = new AbortController();
  const p = fetch(`${gw.url}/v1/messages/count_tokens`, {
    method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' },
    body: JSON.stringify(body('claude-slow')), signal: ac.signal,
  }).catch((e) => e);
  setTimeout(() => ac.abort(), 100);
  assert.ok((await p) instanceof Error);
  const r = await count(body('claude-sonnet-4-5'));
  provider(r, TEXT + ADD.anthropic);
});
