// providers.test.mjs - the official OpenAI Node SDK against switchyard, which
// translates to each native provider wire format (anthropic, gemini, vertex_ai
// with Gemini and Claude, bedrock Converse, cohere v2, ollama) served by the
// mock upstream: chat (plain, streaming, tools, images), provider errors as the
// SDK's error classes with LiteLLM's messages, unsupported parameters and
// drop_params, embeddings, and one OAuth2 token fetch for many Vertex calls.
// No timings are asserted.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { startGateway, startMock, tmpdir } from '../lib/harness.mjs';

const KEY = 'sk-e2e-master';
// the mock's reply text (docs/testing-mock.md)
const SENTENCE = 'Hello! This is a deterministic reply from the mock upstream server, used to test and benchmark the gateway.';
// a 1x1 PNG
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

// chat groups: the provider label LiteLLM puts in its messages ("<Label>Exception"),
// whether the provider takes image parts, and what an upstream 429 becomes.
// (LiteLLM turns cohere's 429 and every ollama status into a 500 APIConnectionError;
// switchyard keeps the provider's status, so a rate limit stays a RateLimitError.)
const RL = { status: 429, cls: 'RateLimitError', sdk: OpenAI.RateLimitError };
const CHAT = [
  { group: 'claude', model: 'anthropic/claude-3-5-sonnet-20241022', label: 'Anthropic', vision: true, on429: RL },
  { group: 'gemini', model: 'gemini/gemini-1.5-pro', label: 'Gemini', vision: true, on429: RL },
  { group: 'vertex-gemini', model: 'vertex_ai/gemini-1.5-pro', label: 'VertexAI', vision: true, on429: RL },
  { group: 'vertex-claude', model: 'vertex_ai/claude-3-5-sonnet-v2@20241022', label: 'VertexAI', vision: true, on429: RL },
  { group: 'bedrock', model: 'bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0', label: 'Bedrock', vision: true, on429: RL },
  { group: 'cohere', model: 'cohere/command-r-plus', label: 'Cohere', vision: false, on429: RL },
  { group: 'ollama', model: 'ollama_chat/llama3.1', label: 'Ollama', vision: true, on429: RL },
];
const EMBED = [
  { group: 'gemini-embed', model: 'gemini/text-embedding-004', inputs: ['one', 'two'] },
  { group: 'vertex-embed', model: 'vertex_ai/text-embedding-004', inputs: ['one', 'two'] },
  { group: 'cohere-embed', model: 'cohere/embed-english-v3.0', inputs: ['one', 'two'] },
  { group: 'ollama-embed', model: 'ollama/nomic-embed-text', inputs: ['one', 'two'] },
  // Titan takes one text per request
  { group: 'bedrock-titan-embed', model: 'bedrock/amazon.titan-embed-text-v2:0', inputs: ['one'] },
];

const TOOLS = [{
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: {
      type: 'object',
      properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
      required: ['location'],
    },
  },
}];

let mock, gw, client, dir;

function serviceAccount(file, tokenUri, email) {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  fs.writeFileSync(file, JSON.stringify({
    type: 'service_account', project_id: 'p1', private_key_id: 'k1', private_key: privateKey,
    client_email: email, client_id: '1', token_uri: tokenUri,
  }));
  return file;
}

/** litellm_params for a provider model string. */
function params(model, extra = '') {
  const base = `api_base: "${mock.url}"`;
  if (model.startsWith('anthropic/')) return `{model: "${model}", ${base}, api_key: sk-ant-test${extra}}`;
  if (model.startsWith('gemini/')) return `{model: "${model}", ${base}, api_key: g-test${extra}}`;
  if (model.startsWith('vertex_ai/')) {
    const sa = model.includes('#conc') ? `${dir}/sa-conc.json` : `${dir}/sa.json`;
    return `{model: "${model.replace('#conc', '')}", ${base}, vertex_project: p1, vertex_location: us-central1, vertex_credentials: "${sa}"${extra}}`;
  }
  if (model.startsWith('bedrock/')) {
    return `{model: "${model}", ${base}, aws_access_key_id: AKIDEXAMPLE, aws_secret_access_key: secret, aws_region_name: us-east-1${extra}}`;
  }
  if (model.startsWith('cohere/')) return `{model: "${model}", ${base}, api_key: co-test${extra}}`;
  return `{model: "${model}", ${base}${extra}}`; // ollama
}

before(async () => {
  mock = await startMock();
  dir = tmpdir();
  serviceAccount(path.join(dir, 'sa.json'), `${mock.url}/token`, 'sy-e2e@p1.iam.gserviceaccount.com');
  serviceAccount(path.join(dir, 'sa-conc.json'), `${mock.url}/token`, 'sy-e2e-conc@p1.iam.gserviceaccount.com');
  let yaml = 'model_list:\n';
  const dep = (name, p) => { yaml += `  - model_name: ${name}\n    litellm_params: ${p}\n`; };
  for (const c of CHAT) {
    dep(c.group, params(c.model));
    // a deployment the mock always answers 429 (model-name directive)
    dep(`${c.group}-429`, params(`${c.model}@status=429`));
  }
  dep('claude-drop', params('anthropic/claude-3-5-sonnet-20241022', ', drop_params: true'));
  dep('vertex-conc', params('vertex_ai/gemini-1.5-pro#conc'));
  for (const e of EMBED) dep(e.group, params(e.model));
  yaml += `router_settings:\n  num_retries: 0\ngeneral_settings:\n  master_key: ${KEY}\n`;
  gw = await startGateway(yaml);
  client = new OpenAI({ apiKey: KEY, baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 15000 });
});
after(async () => { await gw?.stop(); await mock?.stop(); });

const T = { timeout: 20000 };
const user = (text) => [{ role: 'user', content: text }];

/** Consume an SDK chat stream: text, tool calls assembled by index, last finish_reason, usage. */
async function drain(stream) {
  let text = '', finish = null, usage = null, chunks = 0;
  const tools = [];
  for await (const ch of stream) {
    chunks++;
    if (ch.usage) usage = ch.usage;
    const c = ch.choices?.[0];
    if (!c) continue;
    if (c.delta?.content) text += c.delta.content;
    for (const tc of c.delta?.tool_calls || []) {
      const t = (tools[tc.index] ??= { id: null, name: '', arguments: '' });
      if (tc.id) t.id = tc.id;
      if (tc.function?.name) t.name += tc.function.name;
      if (tc.function?.arguments) t.arguments += tc.function.arguments;
    }
    if (c.finish_reason) finish = c.finish_reason;
  }
  return { text, finish, usage, chunks, tools };
}

// ---- chat per provider --------------------------------------------------------

for (const c of CHAT) {
  test(`${c.group}: chat completion`, T, async () => {
    const { data: r, response } = await client.chat.completions.create({
      model: c.group,
      messages: [{ role: 'system', content: 'You are terse.' }, ...user('Say hello.')],
    }).withResponse();
    assert.equal(r.object, 'chat.completion');
    assert.equal(r.choices.length, 1);
    assert.equal(r.choices[0].message.role, 'assistant');
    assert.equal(r.choices[0].message.content, SENTENCE);
    assert.equal(r.choices[0].finish_reason, 'stop');
    assert.ok(r.usage.prompt_tokens > 0, JSON.stringify(r.usage));
    assert.ok(r.usage.completion_tokens > 0, JSON.stringify(r.usage));
    assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
    assert.equal(response.headers.get('x-litellm-model-group'), c.group);
  });

  test(`${c.group}: streaming chat completion with usage`, T, async () => {
    const s = await client.chat.completions.create({
      model: c.group, stream: true, stream_options: { include_usage: true }, messages: user('Say hello.'),
    });
    const r = await drain(s);
    assert.ok(r.chunks >= 3, `${r.chunks} chunks`);
    assert.equal(r.text, SENTENCE);
    assert.equal(r.finish, 'stop');
    assert.ok(r.usage, 'no usage chunk');
    assert.ok(r.usage.prompt_tokens > 0 && r.usage.completion_tokens > 0, JSON.stringify(r.usage));
    // without include_usage: no usage chunk
    const s2 = await client.chat.completions.create({ model: c.group, stream: true, messages: user('Hi') });
    const r2 = await drain(s2);
    assert.equal(r2.text, SENTENCE);
    assert.equal(r2.usage, null);
  });

  test(`${c.group}: tool call and tool result round trip`, T, async () => {
    const msgs = user('What is the weather in Paris?');
    const r = await client.chat.completions.create({ model: c.group, messages: msgs, tools: TOOLS });
    const m = r.choices[0].message;
    assert.equal(r.choices[0].finish_reason, 'tool_calls', JSON.stringify(r));
    assert.equal(m.tool_calls?.length, 1, JSON.stringify(m));
    const tc = m.tool_calls[0];
    assert.equal(tc.type, 'function');
    assert.equal(tc.function.name, 'get_weather');
    assert.ok(typeof tc.id === 'string' && tc.id.length > 0);
    const args = JSON.parse(tc.function.arguments);
    assert.equal(args.location, 'Paris');
    // the tool's answer goes back; the model answers in text
    const r2 = await client.chat.completions.create({
      model: c.group, tools: TOOLS,
      messages: [...msgs, m, { role: 'tool', tool_call_id: tc.id, content: '{"temperature": 18, "unit": "celsius"}' }],
    });
    assert.equal(r2.choices[0].finish_reason, 'stop', JSON.stringify(r2));
    assert.equal(r2.choices[0].message.content, SENTENCE);
    assert.ok(!r2.choices[0].message.tool_calls?.length);
  });

  test(`${c.group}: streaming tool call`, T, async () => {
    const s = await client.chat.completions.create({
      model: c.group, stream: true, messages: user('What is the weather in Paris?'), tools: TOOLS,
    });
    const r = await drain(s);
    assert.equal(r.finish, 'tool_calls');
    assert.equal(r.tools.length, 1, JSON.stringify(r.tools));
    assert.equal(r.tools[0].name, 'get_weather');
    assert.ok(r.tools[0].id);
    const args = JSON.parse(r.tools[0].arguments);
    assert.equal(args.location, 'Paris');
  });

  if (c.vision) {
    test(`${c.group}: an image part (data: URL) is accepted`, T, async () => {
      const r = await client.chat.completions.create({
        model: c.group,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this image?' }, { type: 'image_url', image_url: { url: PNG } }] }],
      });
      assert.equal(r.choices[0].message.content, SENTENCE);
    });
  }

  test(`${c.group}: an upstream 429 is the SDK's ${c.on429.sdk.name} with LiteLLM's message`, T, async () => {
    const { status, cls, sdk } = c.on429;
    for (const stream of [false, true]) {
      await assert.rejects(
        client.chat.completions.create({ model: `${c.group}-429`, messages: user('x'), stream }),
        (e) => {
          assert.ok(e instanceof sdk, `${e.constructor.name}: ${e.message}`);
          assert.equal(e.status, status);
          assert.match(e.message, new RegExp(`^${status} litellm\\.${cls}: ${cls}: ${c.label}Exception - `));
          assert.equal(e.code, String(status));
          return true;
        });
    }
  });

  test(`${c.group}: logit_bias is an UnsupportedParamsError (400)`, T, async () => {
    await assert.rejects(
      client.chat.completions.create({ model: c.group, messages: user('x'), logit_bias: { 50256: -100 } }),
      (e) => {
        assert.ok(e instanceof OpenAI.BadRequestError, `${e.constructor.name}: ${e.message}`);
        assert.equal(e.status, 400);
        assert.match(e.message, /UnsupportedParamsError/);
        assert.match(e.message, /logit_bias/);
        assert.match(e.message, /drop_params/);
        return true;
      });
  });
}

test('drop_params: true on the deployment drops logit_bias and the call succeeds', T, async () => {
  const r = await client.chat.completions.create({ model: 'claude-drop', messages: user('x'), logit_bias: { 50256: -100 } });
  assert.equal(r.choices[0].message.content, SENTENCE);
  const s = await client.chat.completions.create({ model: 'claude-drop', stream: true, messages: user('x'), logit_bias: { 50256: -100 } });
  assert.equal((await drain(s)).text, SENTENCE);
});

// ---- embeddings -----------------------------------------------------------------

for (const e of EMBED) {
  test(`${e.group}: embeddings (float)`, T, async () => {
    const { data: r, response } = await client.embeddings
      .create({ model: e.group, input: e.inputs, encoding_format: 'float' }).withResponse();
    assert.equal(r.object, 'list');
    assert.equal(r.data.length, e.inputs.length);
    r.data.forEach((d, i) => {
      assert.equal(d.object, 'embedding');
      assert.equal(d.index, i);
      assert.ok(Array.isArray(d.embedding) && d.embedding.length > 0, JSON.stringify(d).slice(0, 200));
      assert.ok(d.embedding.every((x) => typeof x === 'number' && Number.isFinite(x)));
    });
    if (e.inputs.length > 1) assert.notDeepEqual(r.data[0].embedding, r.data[1].embedding);
    assert.ok(r.usage && r.usage.prompt_tokens > 0, `usage ${JSON.stringify(r.usage)}`);
    assert.equal(r.usage.total_tokens, r.usage.prompt_tokens);
    assert.equal(response.headers.get('x-litellm-model-group'), e.group);
  });

  // the SDK asks for encoding_format "base64" unless told otherwise, and decodes
  // data[i].embedding as base64 of little-endian float32s
  test(`${e.group}: embeddings with the SDK's default encoding (base64)`, T, async () => {
    const f = await client.embeddings.create({ model: e.group, input: 'hello world', encoding_format: 'float' });
    const b = await client.embeddings.create({ model: e.group, input: 'hello world' });
    assert.equal(b.data.length, 1);
    const want = f.data[0].embedding, got = b.data[0].embedding;
    assert.equal(got.length, want.length, `decoded ${got.length} floats, want ${want.length}`);
    got.forEach((x, i) => assert.ok(Math.abs(x - want[i]) < 1e-6, `[${i}] ${x} != ${want[i]}`));
  });
}

// ---- Vertex AI: one token for many calls -----------------------------------------

test('vertex_ai: concurrent calls share one OAuth2 token fetch', T, async () => {
  await mock.reset();
  const N = 10;
  const rs = await Promise.all(Array.from({ length: N }, (_, i) =>
    client.chat.completions.create({ model: 'vertex-conc', messages: user(`call ${i}`) })));
  for (const r of rs) assert.equal(r.choices[0].message.content, SENTENCE);
  // and later calls reuse it
  await client.chat.completions.create({ model: 'vertex-conc', messages: user('again') });
  const stats = await (await fetch(`${mock.url}/__mock/stats`)).json();
  assert.equal(stats.token_fetches, 1, JSON.stringify(stats));
  const log = await mock.requests();
  const calls = log.filter((q) => q.path.includes(':generateContent'));
  assert.equal(calls.length, N + 1);
  for (const q of calls) assert.match(q.headers.authorization || '', /^Bearer \S+/);
});
