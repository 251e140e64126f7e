// agents-compat.test.mjs - what coding agents (Claude Code, Codex, opencode)
// rely on, end to end against the mock upstream:
//
//   - the model the client asked for (the model_name, not the deployment's
//     model id) in every answer: client dialect (chat, messages, responses) x
//     deployment kind (anthropic, openai, gemini, bedrock, native Responses) x
//     (JSON, stream);
//   - a native same-format pass-through (/v1/messages on an anthropic
//     deployment, /v1/responses on an OpenAI one) returns the provider's error
//     status and body byte for byte once retries and fallbacks are done;
//     translated paths keep LiteLLM's mapped errors;
//   - anthropic-beta: as-is to Anthropic, filtered for Bedrock and Vertex,
//     dropped on other deployments; never a 400 from switchyard;
//   - thinking / reasoning.effort become reasoning_effort only where the
//     deployment's model reasons;
//   - Claude Code's request habits (?beta=true, metadata.user_id,
//     context_management, cache_control ttl 1h, signed thinking blocks,
//     redacted_thinking) reach a native upstream unchanged.
// No timings are asserted.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { postJSON, startGateway, startMock, tmpdir } from '../lib/harness.mjs';

const KEY = 'sk-agents-1';
const AUTH = { authorization: `Bearer ${KEY}` };
const AHDR = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' };

let mock, gw, dir;

before(async () => {
  mock = await startMock([]);
  dir = tmpdir();
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  fs.writeFileSync(path.join(dir, 'sa.json'), JSON.stringify({
    type: 'service_account', project_id: 'p1', private_key_id: 'k1', private_key: privateKey,
    client_email: 'sy-agents@p1.iam.gserviceaccount.com', client_id: '1', token_uri: `${mock.url}/token`,
  }));
  const aws = 'aws_access_key_id: AKIDEXAMPLE, aws_secret_access_key: secret, aws_region_name: us-east-1';
  const vtx = `vertex_project: p1, vertex_location: us-central1, vertex_credentials: "${dir}/sa.json"`;
  gw = await startGateway(`
model_list:
  - model_name: claude-sonnet-4-5
    litellm_params: {model: anthropic/claude-sonnet-4-5-20250929, api_base: "${mock.url}", api_key: sk-ant-test}
  - model_name: gpt-main
    litellm_params: {model: openai/gpt-4o-2024-08-06, api_base: "${mock.base}", api_key: sk-x}
  - model_name: gemini-main
    litellm_params: {model: gemini/gemini-2.5-flash, api_base: "${mock.url}", api_key: g-test}
  - model_name: bedrock-claude
    litellm_params: {model: "bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0", api_base: "${mock.url}", ${aws}}
  - model_name: vertex-claude
    litellm_params: {model: "vertex_ai/claude-sonnet-4-5@20250929", api_base: "${mock.url}", ${vtx}}
  - model_name: cohere-main
    litellm_params: {model: cohere/command-r-plus, api_base: "${mock.url}", api_key: co-test}
  - model_name: ollama-main
    litellm_params: {model: ollama_chat/llama3.1, api_base: "${mock.url}"}
  - model_name: claude-trickle
    litellm_params: {model: "anthropic/claude-sonnet-4-5-20250929@trickle_bytes_per_s=3000", api_base: "${mock.url}", api_key: sk-ant-test}
  - model_name: claude-400
    litellm_params: {model: "anthropic/claude-sonnet-4-5-20250929@status=400", api_base: "${mock.url}", api_key: sk-ant-test}
  - model_name: claude-429
    litellm_params: {model: "anthropic/claude-sonnet-4-5-20250929@status=429", api_base: "${mock.url}", api_key: sk-ant-test}
  - model_name: claude-529
    litellm_params: {model: "anthropic/claude-sonnet-4-5-20250929@status=529", api_base: "${mock.url}", api_key: sk-ant-test}
  - model_name: claude-529-fb
    litellm_params: {model: "anthropic/claude-sonnet-4-5-20250929@status=529", api_base: "${mock.url}", api_key: sk-ant-test}
  - model_name: gpt-429
    litellm_params: {model: "openai/gpt-4o@status=429", api_base: "${mock.base}", api_key: sk-x}
  - model_name: gpt-nonreasoning
    litellm_params: {model: openai/gpt-4o-mini, api_base: "${mock.base}", api_key: sk-x}
  - model_name: gpt-reasoning
    litellm_params: {model: openai/o3-mini, api_base: "${mock.base}", api_key: sk-x}
  - model_name: local-reasoner
    litellm_params: {model: hosted_vllm/my-local-model, api_base: "${mock.base}"}
    model_info: {supports_reasoning: true}
  - model_name: local-plain
    litellm_params: {model: hosted_vllm/my-plain-model, api_base: "${mock.base}"}
  - model_name: o3-not-reasoning
    litellm_params: {model: openai/o3-mini, api_base: "${mock.base}", api_key: sk-x}
    model_info: {supports_reasoning: false}
router_settings:
  num_retries: 2
  retry_after: 0
  fallbacks: [{"claude-529-fb": ["gpt-main"]}]
general_settings:
  master_key: ${KEY}
`);
});
after(async () => { await gw?.stop(); await mock?.stop(); });

/** SSE text -> [{event, data, json}]. */
function sse(text) {
  return text.split(/\r?\n\r?\n/).filter((b) => b.trim()).map((block) => {
    let event = null;
    let data = '';
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data += line.slice(6);
    }
    let json = null;
    try { json = JSON.parse(data); } catch {}
    return { event, data, json };
  });
}

const chat = (model, stream) => ({
  model, stream, max_tokens: 32, messages: [{ role: 'user', content: 'Say hello.' }],
  ...(stream ? { stream_options: { include_usage: true } } : {}),
});
const messages = (model, stream) => ({ model, stream, max_tokens: 32, messages: [{ role: 'user', content: 'Say hello.' }] });
const responses = (model, stream) => ({ model, stream, input: 'Say hello.', max_output_tokens: 32 });

/** Every `model` the client sees in an answer of dialect `kind`. */
function modelsSeen(kind, r, stream) {
  if (!stream) {
    assert.equal(r.status, 200, r.text);
    return [r.json.model];
  }
  assert.equal(r.status, 200, r.text);
  const ev = sse(r.text);
  const seen = [];
  for (const e of ev) {
    if (!e.json) continue;
    if (kind === 'chat' && e.json.object === 'chat.completion.chunk') seen.push(e.json.model);
    if (kind === 'messages' && e.json.type === 'message_start') seen.push(e.json.message.model);
    if (kind === 'responses' && e.json.response) seen.push(e.json.response.model);
  }
  assert.ok(seen.length > 0, `no ${kind} event names a model: ${r.text.slice(0, 400)}`);
  if (kind === 'messages') assert.equal(seen.length, 1);
  if (kind === 'responses') {
    const types = ev.filter((e) => e.json?.response).map((e) => e.json.type);
    assert.ok(types.includes('response.created') && types.includes('response.completed'), types.join(','));
  }
  return seen;
}

const ROUTES = { chat: '/v1/chat/completions', messages: '/v1/messages', responses: '/v1/responses' };
const BODIES = { chat, messages, responses };
const DEPLOYMENTS = ['claude-sonnet-4-5', 'gpt-main', 'gemini-main', 'bedrock-claude', 'vertex-claude', 'cohere-main',
  'ollama-main'];

for (const kind of ['chat', 'messages', 'responses']) {
  for (const model of DEPLOYMENTS) {
    for (const stream of [false, true]) {
      test(`model echoed: ${kind} -> ${model} (${stream ? 'stream' : 'JSON'})`, async () => {
        const h = kind === 'messages' ? AHDR : AUTH;
        const r = await postJSON(`${gw.url}${ROUTES[kind]}`, BODIES[kind](model, stream), h);
        const seen = modelsSeen(kind, r, stream);
        // chat on an OpenAI-compatible deployment is the byte pass-through: the upstream's model
        // (docs/litellm-differences.md; LiteLLM restamps it)
        const want = model;
        for (const m of seen) assert.equal(m, want, `${kind} -> ${model}: ${r.text.slice(0, 300)}`);
      });
    }
  }
}

test('model echoed: a native /v1/messages stream keeps every other byte of the upstream\'s', async () => {
  await mock.reset();
  const direct = await postJSON(`${mock.url}/v1/messages`, messages('claude-sonnet-4-5-20250929', true),
    { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' });
  const r = await postJSON(`${gw.url}/v1/messages`, messages('claude-sonnet-4-5', true), AHDR);
  assert.equal(r.status, 200, r.text);
  const norm = (t) => t.replace(/"id":"msg_[^"]*"/g, '"id":"X"');
  assert.equal(norm(r.text), norm(direct.text).replace('"model":"claude-sonnet-4-5-20250929"', '"model":"claude-sonnet-4-5"'));
});

test('model echoed: a native stream whose first event arrives in many pieces', async () => {
  const direct = await postJSON(`${mock.url}/v1/messages`, messages('claude-sonnet-4-5-20250929', true),
    { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' });
  const r = await postJSON(`${gw.url}/v1/messages`, messages('claude-trickle', true), AHDR);
  assert.equal(r.status, 200, r.text);
  const norm = (t) => t.replace(/"id":"msg_[^"]*"/g, '"id":"X"');
  assert.equal(norm(r.text), norm(direct.text).replace('"model":"claude-sonnet-4-5-20250929"', '"model":"claude-trickle"'));
});

// ---- native errors ----------------------------------------------------------

test('native /v1/messages: the provider\'s error status and body come back byte for byte', async () => {
  for (const [model, status] of [['claude-400', 400], ['claude-429', 429], ['claude-529', 529]]) {
    await mock.reset();
    const direct = await fetch(`${mock.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(messages(`claude-sonnet-4-5-20250929@status=${status}`, false)),
    });
    const want = await direct.text();
    await mock.reset();
    for (const stream of [false, true]) {
      const r = await postJSON(`${gw.url}/v1/messages`, messages(model, stream), AHDR);
      assert.equal(r.status, status, r.text);
      assert.equal(r.text, want);
      assert.match(r.headers.get('content-type'), /^application\/json/);
    }
    const calls = (await mock.requests()).filter((q) => q.path.startsWith('/v1/messages')).length;
    // 400 is not retried; 429 and 529 are (num_retries 2), before the error goes out
    assert.equal(calls, status === 400 ? 2 : 6, `${model}: ${calls} upstream calls`);
  }
});

test('native /v1/messages: a fallback still happens on a provider error, and the fallback\'s answer is Anthropic\'s shape', async () => {
  const r = await postJSON(`${gw.url}/v1/messages`, messages('claude-529-fb', false), AHDR);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.type, 'message');
  assert.equal(r.json.model, 'claude-529-fb');
  assert.equal(r.headers.get('x-litellm-attempted-fallbacks'), '1');
});

test('native /v1/responses: the provider\'s error comes back as it came; translated paths keep LiteLLM\'s errors', async () => {
  const direct = await fetch(`${mock.base}/responses`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-x' },
    body: JSON.stringify(responses('gpt-4o@status=429', false)),
  });
  const want = await direct.text();
  for (const stream of [false, true]) {
    const r = await postJSON(`${gw.url}/v1/responses`, responses('gpt-429', stream), AUTH);
    assert.equal(r.status, 429, r.text);
    assert.equal(r.text, want);
    assert.match(r.headers.get('content-type'), /^application\/json/);
    assert.ok(r.headers.get('x-litellm-call-id'), 'switchyard\'s own headers are still there');
  }
  // chat -> anthropic (translated): LiteLLM's mapped error, not Anthropic's body
  const t = await postJSON(`${gw.url}/v1/chat/completions`, chat('claude-400', false), AUTH);
  assert.equal(t.status, 400, t.text);
  assert.ok(t.json.error && typeof t.json.error.message === 'string', t.text);
  assert.match(t.json.error.message, /^litellm\.BadRequestError/);
  // messages -> openai (translated): an Anthropic-shaped error from switchyard
  const m = await postJSON(`${gw.url}/v1/messages`, messages('gpt-429', false), AHDR);
  assert.equal(m.status, 429, m.text);
  assert.equal(m.json.type, 'error');
});

// ---- anthropic-beta ------------------------------------------------------------

const BETAS = 'claude-code-20250219,interleaved-thinking-2025-05-14, fine-grained-tool-streaming-2025-05-14,'
  + 'context-1m-2025-08-07,advanced-tool-use-2025-11-20,no-such-beta-2099-01-01';

async function lastUpstream(pred) {
  const all = await mock.requests();
  const q = all.filter(pred).at(-1);
  assert.ok(q, `no such upstream request among ${all.map((x) => x.path).join(', ')}`);
  return q;
}

test('anthropic-beta: as-is to Anthropic (native /v1/messages with its ?beta=true query, and chat -> anthropic)', async () => {
  await mock.reset();
  const r = await fetch(`${gw.url}/v1/messages?beta=true`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...AHDR, 'anthropic-beta': BETAS },
    body: JSON.stringify(messages('claude-sonnet-4-5', false)),
  });
  assert.equal(r.status, 200, await r.text());
  const q = await lastUpstream((x) => x.path.startsWith('/v1/messages'));
  assert.equal(q.path, '/v1/messages?beta=true');
  assert.equal(q.headers['anthropic-beta'], BETAS);
  const c = await postJSON(`${gw.url}/v1/chat/completions`, chat('claude-sonnet-4-5', false), { ...AUTH, 'anthropic-beta': BETAS });
  assert.equal(c.status, 200, c.text);
  const q2 = await lastUpstream((x) => x.path === '/v1/messages');
  assert.equal(q2.headers['anthropic-beta'], BETAS.replace(', ', ','));
});

test('anthropic-beta: filtered to what Bedrock Converse takes, what Vertex takes; dropped elsewhere; never a 400', async () => {
  await mock.reset();
  const h = { ...AHDR, 'anthropic-beta': BETAS };
  const b = await postJSON(`${gw.url}/v1/messages`, messages('bedrock-claude', false), h);
  assert.equal(b.status, 200, b.text);
  const qb = await lastUpstream((x) => x.path.includes('/converse'));
  assert.deepEqual(JSON.parse(qb.body).additionalModelRequestFields.anthropic_beta,
    ['fine-grained-tool-streaming-2025-05-14', 'context-1m-2025-08-07']);
  const v = await postJSON(`${gw.url}/v1/messages`, messages('vertex-claude', true), h);
  assert.equal(v.status, 200, v.text);
  const qv = await lastUpstream((x) => x.path.includes(':streamRawPredict'));
  assert.deepEqual(JSON.parse(qv.body).anthropic_beta,
    ['interleaved-thinking-2025-05-14', 'context-1m-2025-08-07', 'tool-search-tool-2025-10-19']);
  // only betas nobody takes: no anthropic_beta member at all
  const only = { ...AHDR, 'anthropic-beta': 'claude-code-20250219,no-such-beta-2099-01-01' };
  const b2 = await postJSON(`${gw.url}/v1/chat/completions`, chat('bedrock-claude', true), { ...AUTH, 'anthropic-beta': only['anthropic-beta'] });
  assert.equal(b2.status, 200, b2.text);
  const qb2 = await lastUpstream((x) => x.path.includes('/converse'));
  assert.equal(JSON.parse(qb2.body).additionalModelRequestFields?.anthropic_beta, undefined);
  for (const m of ['gpt-main', 'gemini-main']) {
    const o = await postJSON(`${gw.url}/v1/messages`, messages(m, false), h);
    assert.equal(o.status, 200, o.text);
    const qo = (await mock.requests()).at(-1);
    assert.equal(qo.headers['anthropic-beta'], undefined, `${m}: ${qo.path}`);
    assert.ok(!qo.body.includes('anthropic_beta') && !qo.body.includes('context-1m'), qo.body);
  }
});

// ---- reasoning_effort only where the model reasons ------------------------------

test('thinking -> reasoning_effort only for a deployment whose model reasons (price map, or model_info override)', async () => {
  const cases = [
    ['gpt-nonreasoning', false], ['gpt-reasoning', true], ['local-reasoner', true], ['local-plain', false],
    ['o3-not-reasoning', false],
  ];
  for (const [model, kept] of cases) {
    for (const thinking of [{ type: 'enabled', budget_tokens: 5000 }, { type: 'adaptive' }]) {
      await mock.reset();
      const body = { ...messages(model, false), thinking, output_config: { effort: 'low' } };
      const r = await postJSON(`${gw.url}/v1/messages`, body, AHDR);
      assert.equal(r.status, 200, `${model}: ${r.text}`);
      const q = await lastUpstream((x) => x.path.includes('/chat/completions'));
      const sent = JSON.parse(q.body);
      assert.equal('reasoning_effort' in sent, kept, `${model}: ${q.body}`);
      if (kept) assert.equal(sent.reasoning_effort, thinking.type === 'adaptive' ? 'low' : 'high');
      assert.equal(sent.messages[0].content, 'Say hello.');
    }
  }
  // the Responses API's reasoning.effort, translated to chat (hosted_vllm has no Responses API)
  for (const [model, kept] of [['local-reasoner', true], ['local-plain', false]]) {
    await mock.reset();
    const r = await postJSON(`${gw.url}/v1/responses`, { ...responses(model, true), reasoning: { effort: 'medium' } }, AUTH);
    assert.equal(r.status, 200, r.text);
    const q = await lastUpstream((x) => x.path.includes('/chat/completions'));
    assert.equal('reasoning_effort' in JSON.parse(q.body), kept, q.body);
  }
});

// ---- Claude Code's request, recorded -------------------------------------------

test('a recorded Claude Code 2.1 request reaches a native upstream unchanged but for the model', async () => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const fx = JSON.parse(fs.readFileSync(path.join(here, 'fixtures/claude-code-2.1-messages.json'), 'utf8'));
  await mock.reset();
  const r = await fetch(`${gw.url}${fx.path}`, { method: 'POST', headers: { ...fx.headers, 'x-api-key': KEY }, body: fx.body });
  const text = await r.text();
  assert.equal(r.status, 200, text);
  const q = await lastUpstream((x) => x.path.startsWith('/v1/messages'));
  assert.equal(q.path, '/v1/messages?beta=true');
  assert.equal(q.body, fx.body.replace('"model":"claude-sonnet-4-5"', '"model":"claude-sonnet-4-5-20250929"'));
  for (const h of ['anthropic-beta', 'anthropic-version']) assert.equal(q.headers[h], fx.headers[h], h);
  assert.equal(q.headers['x-api-key'], 'sk-ant-test');
  const starts = sse(text).filter((e) => e.json?.type === 'message_start');
  assert.equal(starts.length, 1);
  assert.equal(starts[0].json.message.model, 'claude-sonnet-4-5');
});
