// providers.test.mjs - what the native providers' upstreams receive from
// switchyard, read from the mock upstream's request log, and how their faults
// reach the client: Anthropic defaults and headers (also anthropic-beta on the
// /v1/messages ingress), a Bedrock SigV4 signature checked here, Gemini's key
// header, drop_params, fallbacks across providers, a provider stream failing
// mid-way, and multi-byte UTF-8 split across the upstream's network writes.
// No timings are asserted.
import assert from 'node:assert/strict';
import { createHash, createHmac, generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { assertErrorShape, chatBody, postJSON, startGateway, startMock, tmpdir } from '../lib/harness.mjs';

const KEY = 'sk-int-master';
const AUTH = { authorization: `Bearer ${KEY}` };
const SENTENCE = 'Hello! This is a deterministic reply from the mock upstream server, used to test and benchmark the gateway.';
// the mock's reply with utf8 / split_utf8 (2-, 3- and 4-byte characters)
const UTF8_SENTENCE = 'Héllo! Thïs is a déterministic reply from the mock 上游 server, used to tëst and benchmark the gateway 🚀';
const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const BEDROCK_ID = 'anthropic.claude-3-5-sonnet-20240620-v1:0';

// chat providers under test, each with the upstream model string (directives appended after '@')
const PROVIDERS = {
  claude: 'anthropic/claude-3-5-sonnet-20241022',
  gemini: 'gemini/gemini-1.5-pro',
  vertex: 'vertex_ai/gemini-1.5-pro',
  bedrock: `bedrock/${BEDROCK_ID}`,
  cohere: 'cohere/command-r-plus',
  ollama: 'ollama_chat/llama3.1',
};
// each dialect's mid-stream error directive (docs/testing-mock.md): the error type, status or message it sends
const STREAM_ERROR = {
  claude: 'overloaded_error', gemini: 'INTERNAL', vertex: 'INTERNAL', bedrock: 'modelStreamErrorException',
  cohere: 'ERROR', ollama: 'model_runner_crashed',
};

let mock, gw, gwDrop, dir;

function params(model, extra = '') {
  const base = `api_base: "${mock.url}"`;
  if (model.startsWith('anthropic/')) return `{model: "${model}", ${base}, api_key: sk-ant-test${extra}}`;
  if (model.startsWith('gemini/')) return `{model: "${model}", ${base}, api_key: g-test${extra}}`;
  if (model.startsWith('vertex_ai/')) {
    return `{model: "${model}", ${base}, vertex_project: p1, vertex_location: us-central1, vertex_credentials: "${dir}/sa.json"${extra}}`;
  }
  if (model.startsWith('bedrock/')) {
    return `{model: "${model}", ${base}, aws_access_key_id: AKIDEXAMPLE, aws_secret_access_key: secret, aws_region_name: us-east-1${extra}}`;
  }
  if (model.startsWith('cohere/')) return `{model: "${model}", ${base}, api_key: co-test${extra}}`;
  return `{model: "${model}", ${base}${extra}}`;
}

before(async () => {
  // the mock verifies Bedrock's SigV4 signatures itself too (403 when wrong)
  mock = await startMock(['--aws-secret-key', 'secret']);
  dir = tmpdir();
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  fs.writeFileSync(path.join(dir, 'sa.json'), JSON.stringify({
    type: 'service_account', project_id: 'p1', private_key_id: 'k1', private_key: privateKey,
    client_email: 'sy-int@p1.iam.gserviceaccount.com', client_id: '1', token_uri: `${mock.url}/token`,
  }));
  let yaml = 'model_list:\n';
  const dep = (name, p) => { yaml += `  - model_name: ${name}\n    litellm_params: ${p}\n`; };
  const withDirs = (m, d) => `${m}@${d}`;
  for (const [p, m] of Object.entries(PROVIDERS)) {
    dep(p, params(m));
    dep(`${p}-midstream`, params(withDirs(m, `stream_error=${STREAM_ERROR[p]},stream_error_after=3`)));
    dep(`${p}-utf8`, params(withDirs(m, 'split_utf8=true')));
  }
  dep('claude-overloaded', params(withDirs(PROVIDERS.claude, 'status=529')));
  dep('claude-drop', params(PROVIDERS.claude, ', drop_params: true'));
  dep('gpt-4o', `{model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-x}`);
  dep('gpt-4o-utf8', `{model: "openai/gpt-4o@split_utf8=true", api_base: "${mock.base}", api_key: sk-x}`);
  yaml += `router_settings:
  num_retries: 0
  fallbacks: [{"claude-overloaded": ["gemini"]}]
general_settings:
  master_key: ${KEY}
`;
  gw = await startGateway(yaml);
  // the global switch: litellm_settings.drop_params
  gwDrop = await startGateway(`
model_list:
  - model_name: claude
    litellm_params: ${params(PROVIDERS.claude)}
  - model_name: bedrock
    litellm_params: ${params(PROVIDERS.bedrock)}
litellm_settings:
  drop_params: true
`);
});
after(async () => { await gw?.stop(); await gwDrop?.stop(); await mock?.stop(); });

/** Reset the log, POST to the gateway, return the response and the upstream requests (bodies parsed). */
async function call(route, body, headers = AUTH, g = gw) {
  await mock.reset();
  const r = await postJSON(`${g.url}${route}`, body, headers);
  const log = (await mock.requests()).filter((q) => !q.path.startsWith('/token'));
  for (const q of log) { try { q.json = JSON.parse(q.body); } catch { q.json = null; } }
  return { ...r, log };
}

/** Parse an SSE text into events {event, data} (data parsed when JSON). */
function sse(text) {
  return text.split(/\r?\n\r?\n/).filter((b) => b.trim()).map((block) => {
    let event = null;
    const data = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    const raw = data.join('\n');
    let json = null;
    try { json = JSON.parse(raw); } catch {}
    return { event, raw, json };
  });
}

/** Streamed OpenAI chunks' text. */
const chunkText = (events) => events.map((e) => e.json?.choices?.[0]?.delta?.content || '').join('');
/** Streamed Anthropic events' text. */
const msgText = (events) => events.filter((e) => e.event === 'content_block_delta').map((e) => e.json.delta.text || '').join('');

// ---- Anthropic --------------------------------------------------------------------

test('anthropic: default max_tokens 4096, system at the top level, x-api-key and anthropic-version', async () => {
  const r = await call('/v1/chat/completions', chatBody('claude'));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.choices[0].message.content, SENTENCE);
  assert.equal(r.log.length, 1);
  const q = r.log[0];
  assert.equal(q.method, 'POST');
  assert.equal(q.path, '/v1/messages');
  assert.equal(q.headers['x-api-key'], 'sk-ant-test');
  assert.equal(q.headers['anthropic-version'], '2023-06-01');
  assert.equal(q.headers.authorization, undefined, 'the client key must not reach the provider');
  assert.match(q.headers['content-type'], /^application\/json/);
  assert.equal(q.json.model, 'claude-3-5-sonnet-20241022');
  assert.equal(q.json.max_tokens, 4096);
  const sys = typeof q.json.system === 'string' ? q.json.system : q.json.system.map((b) => b.text).join('');
  assert.equal(sys, 'You are terse.');
  assert.ok(q.json.messages.every((m) => m.role !== 'system'), JSON.stringify(q.json.messages));
  assert.equal(q.json.messages.length, 1);
  assert.equal(q.json.messages[0].role, 'user');
  const c = q.json.messages[0].content;
  assert.equal(typeof c === 'string' ? c : c.map((b) => b.text).join(''), 'Say hello.');
  // a client max_tokens (or max_completion_tokens) is kept
  const r2 = await call('/v1/chat/completions', chatBody('claude', { max_completion_tokens: 50 }));
  assert.equal(r2.log[0].json.max_tokens, 50);
});

test('anthropic: an image data: URL becomes a base64 image block', async () => {
  const r = await call('/v1/chat/completions', { model: 'claude', messages: [{ role: 'user', content: [
    { type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_B64}` } }] }] });
  assert.equal(r.status, 200, r.text);
  const blocks = r.log[0].json.messages[0].content;
  const img = blocks.find((b) => b.type === 'image');
  assert.deepEqual(img?.source, { type: 'base64', media_type: 'image/png', data: PNG_B64 }, JSON.stringify(blocks));
});

test('anthropic: logit_bias is a 400 UnsupportedParamsError and the provider is not called', async () => {
  const r = await call('/v1/chat/completions', chatBody('claude', { logit_bias: { 1: 2 } }));
  assertErrorShape(assert, r, 400);
  assert.match(r.json.error.message, /UnsupportedParamsError/);
  assert.match(r.json.error.message, /logit_bias/);
  assert.equal(r.log.length, 0);
});

test('drop_params (deployment and litellm_settings): logit_bias is dropped before the provider', async () => {
  for (const [g, model] of [[gw, 'claude-drop'], [gwDrop, 'claude'], [gwDrop, 'bedrock']]) {
    const r = await call('/v1/chat/completions', chatBody(model, { logit_bias: { 1: 2 } }), AUTH, g);
    assert.equal(r.status, 200, `${model}: ${r.text}`);
    assert.equal(r.log.length, 1);
    assert.ok(!r.log[0].body.includes('logit_bias'), r.log[0].body);
  }
});

test('/v1/messages (native): the body passes through with the model replaced; anthropic-beta forwarded', async () => {
  const body = { model: 'claude', max_tokens: 64, system: [{ type: 'text', text: 'Be terse.', cache_control: { type: 'ephemeral' } }],
    messages: [{ role: 'user', content: 'Say hello.' }], metadata: { user_id: 'u1' } };
  const r = await call('/v1/messages', body, {
    'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'prompt-caching-2024-07-31,token-efficient-tools-2025-02-19',
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.type, 'message');
  assert.equal(r.json.content[0].text, SENTENCE);
  assert.equal(r.log.length, 1);
  const q = r.log[0];
  assert.equal(q.path, '/v1/messages');
  assert.equal(q.headers['anthropic-beta'], 'prompt-caching-2024-07-31,token-efficient-tools-2025-02-19');
  assert.equal(q.headers['anthropic-version'], '2023-06-01');
  assert.equal(q.headers['x-api-key'], 'sk-ant-test', 'the deployment key, not the client key');
  assert.deepEqual(q.json, { ...body, model: 'claude-3-5-sonnet-20241022' });
});

test('/v1/messages (translated): an OpenAI-compatible deployment gets an OpenAI chat body', async () => {
  const r = await call('/v1/messages', { model: 'gpt-4o', max_tokens: 64, system: 'Be terse.', messages: [{ role: 'user', content: 'Hi' }] },
    { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'prompt-caching-2024-07-31' });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.content[0].text, SENTENCE);
  const q = r.log[0];
  assert.equal(q.path, '/v1/chat/completions');
  assert.equal(q.headers.authorization, 'Bearer sk-x');
  assert.equal(q.headers['anthropic-beta'], undefined);
  assert.equal(q.json.model, 'gpt-4o');
  assert.equal(q.json.max_tokens, 64);
  assert.deepEqual(q.json.messages, [{ role: 'system', content: 'Be terse.' }, { role: 'user', content: 'Hi' }]);
});

test('/v1/messages (translated): tools and tool_choice become OpenAI tools', async () => {
  const tools = [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } }];
  const r = await call('/v1/messages', { model: 'gpt-4o', max_tokens: 64, tools, tool_choice: { type: 'any' },
    messages: [{ role: 'user', content: 'Weather in Paris?' }] }, { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' });
  assert.equal(r.status, 200, r.text);
  const q = r.log[0].json;
  assert.deepEqual(q.tools, [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: tools[0].input_schema } }]);
  assert.equal(q.tool_choice, 'required');
});

test('cohere and ollama: native paths, auth, bodies', async () => {
  const c = await call('/v1/chat/completions', chatBody('cohere'));
  assert.equal(c.status, 200, c.text);
  assert.equal(c.json.choices[0].message.content, SENTENCE);
  assert.equal(c.log[0].path, '/v2/chat');
  assert.equal(c.log[0].headers.authorization, 'Bearer co-test');
  assert.equal(c.log[0].json.model, 'command-r-plus');
  assert.deepEqual(c.log[0].json.messages.map((m) => m.role), ['system', 'user']);
  const o = await call('/v1/chat/completions', chatBody('ollama'));
  assert.equal(o.status, 200, o.text);
  assert.equal(o.json.choices[0].message.content, SENTENCE);
  assert.equal(o.log[0].path, '/api/chat');
  assert.equal(o.log[0].headers.authorization, undefined);
  assert.equal(o.log[0].json.model, 'llama3.1');
  assert.equal(o.log[0].json.stream, false);
  const os = await call('/v1/chat/completions', chatBody('ollama', { stream: true }));
  assert.equal(chunkText(sse(os.text)), SENTENCE);
  assert.equal(os.log[0].json.stream, true);
});

// ---- Bedrock ----------------------------------------------------------------------

const hmac = (k, s) => createHmac('sha256', k).update(s).digest();
const sha256 = (s) => createHash('sha256').update(s).digest('hex');

/** Check an AWS SigV4 signature of a logged request (secret "secret", us-east-1, bedrock). */
function checkSigV4(q) {
  const m = /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/(\d{8})\/us-east-1\/bedrock\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/
    .exec(q.headers.authorization || '');
  assert.ok(m, `Authorization: ${q.headers.authorization}`);
  const [, date, signed, sig] = m;
  const amzDate = q.headers['x-amz-date'];
  assert.match(amzDate || '', /^\d{8}T\d{6}Z$/);
  assert.equal(amzDate.slice(0, 8), date);
  const names = signed.split(';');
  assert.ok(names.includes('host') && names.includes('x-amz-date'), signed);
  const [p, query = ''] = q.path.split('?');
  // non-S3 services sign the path URI-encoded once more (botocore): %3A -> %253A
  const canonUri = p.split('/').map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)).join('/');
  const canonQuery = query.split('&').filter(Boolean).sort().join('&');
  const canonHeaders = names.map((n) => `${n}:${String(q.headers[n] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const payload = q.headers['x-amz-content-sha256'] || sha256(q.body);
  assert.equal(payload, sha256(q.body), 'x-amz-content-sha256 is the body hash');
  const creq = ['POST', canonUri, canonQuery, canonHeaders, signed, payload].join('\n');
  const sts = ['AWS4-HMAC-SHA256', amzDate, `${date}/us-east-1/bedrock/aws4_request`, sha256(creq)].join('\n');
  const key = hmac(hmac(hmac(hmac('AWS4secret', date), 'us-east-1'), 'bedrock'), 'aws4_request');
  assert.equal(hmac(key, sts).toString('hex'), sig, `signature mismatch; canonical request:\n${creq}`);
}

test('bedrock: Converse path with the model id %-encoded, SigV4 Authorization that verifies', async () => {
  const r = await call('/v1/chat/completions', chatBody('bedrock'));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.choices[0].message.content, SENTENCE);
  const q = r.log[0];
  assert.equal(q.path, `/model/${encodeURIComponent(BEDROCK_ID)}/converse`);
  assert.match(q.path, /%3A0\/converse$/);
  checkSigV4(q);
  assert.deepEqual(q.json.system, [{ text: 'You are terse.' }]);
  assert.equal(q.json.messages[0].role, 'user');
  assert.deepEqual(q.json.messages[0].content, [{ text: 'Say hello.' }]);
  // streams go to converse-stream
  const s = await call('/v1/chat/completions', chatBody('bedrock', { stream: true }));
  assert.equal(s.status, 200);
  assert.equal(chunkText(sse(s.text)), SENTENCE);
  assert.equal(s.log[0].path, `/model/${encodeURIComponent(BEDROCK_ID)}/converse-stream`);
  checkSigV4(s.log[0]);
});

// ---- Gemini -----------------------------------------------------------------------

test('gemini: x-goog-api-key header, no key in the URL, generateContent body', async () => {
  const r = await call('/v1/chat/completions', chatBody('gemini'));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.choices[0].message.content, SENTENCE);
  const q = r.log[0];
  assert.equal(q.headers['x-goog-api-key'], 'g-test');
  assert.equal(q.path, '/v1beta/models/gemini-1.5-pro:generateContent');
  assert.ok(!/[?&]key=/.test(q.path), q.path);
  assert.equal(q.headers.authorization, undefined);
  assert.equal(q.json.model, undefined);
  assert.deepEqual(q.json.systemInstruction?.parts, [{ text: 'You are terse.' }]);
  assert.equal(q.json.contents.length, 1);
  assert.equal(q.json.contents[0].role, 'user');
  assert.deepEqual(q.json.contents[0].parts, [{ text: 'Say hello.' }]);
  const s = await call('/v1/chat/completions', chatBody('gemini', { stream: true }));
  assert.equal(chunkText(sse(s.text)), SENTENCE);
  assert.equal(s.log[0].path, '/v1beta/models/gemini-1.5-pro:streamGenerateContent?alt=sse');
  assert.equal(s.log[0].headers['x-goog-api-key'], 'g-test');
});

test('vertex_ai: Bearer token from the service account, project/location path', async () => {
  const r = await call('/v1/chat/completions', chatBody('vertex'));
  assert.equal(r.status, 200, r.text);
  const q = r.log[0];
  assert.match(q.path, /\/projects\/p1\/locations\/us-central1\/publishers\/google\/models\/gemini-1\.5-pro:generateContent$/);
  assert.match(q.headers.authorization || '', /^Bearer \S+$/);
  assert.equal(q.headers['x-goog-api-key'], undefined);
});

// ---- fallbacks across providers ------------------------------------------------------

test('fallback: an overloaded anthropic deployment (529) falls back to the gemini group', async () => {
  const r = await call('/v1/chat/completions', chatBody('claude-overloaded'));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.choices[0].message.content, SENTENCE);
  assert.equal(r.headers.get('x-litellm-attempted-fallbacks'), '1');
  assert.deepEqual(r.log.map((q) => q.path), ['/v1/messages', '/v1beta/models/gemini-1.5-pro:generateContent']);
  // streaming too
  const s = await call('/v1/chat/completions', chatBody('claude-overloaded', { stream: true }));
  assert.equal(s.status, 200, s.text);
  const ev = sse(s.text);
  assert.equal(chunkText(ev), SENTENCE);
  assert.equal(ev.at(-1).raw, '[DONE]');
  assert.deepEqual(s.log.map((q) => q.path), ['/v1/messages', '/v1beta/models/gemini-1.5-pro:streamGenerateContent?alt=sse']);
});

test('fallback on /v1/messages: native anthropic (529) -> gemini through its adapter', async () => {
  const h = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' };
  const body = { model: 'claude-overloaded', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello.' }] };
  const r = await call('/v1/messages', body, h);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.type, 'message');
  assert.equal(r.json.content[0].text, SENTENCE);
  assert.deepEqual(r.log.map((q) => q.path), ['/v1/messages', '/v1beta/models/gemini-1.5-pro:generateContent']);
  assert.equal(r.log[1].json.contents[0].parts[0].text, 'Say hello.');
  const s = await call('/v1/messages', { ...body, stream: true }, h);
  assert.equal(s.status, 200, s.text);
  const ev = sse(s.text);
  assert.equal(msgText(ev), SENTENCE);
  assert.equal(ev[0].event, 'message_start');
  assert.equal(ev.at(-1).event, 'message_stop');
});

// ---- a provider stream failing mid-way -------------------------------------------

for (const p of Object.keys(PROVIDERS)) {
  test(`${p}: a provider error mid-stream -> content, an SSE error frame, [DONE]`, async () => {
    const r = await call('/v1/chat/completions', chatBody(`${p}-midstream`, { stream: true }));
    assert.equal(r.status, 200, r.text);
    const ev = sse(r.text);
    assert.equal(ev.at(-1).raw, '[DONE]', r.text);
    const err = ev.at(-2).json;
    assert.ok(err?.error, `no error frame before [DONE]:\n${r.text}`);
    assert.equal(typeof err.error.message, 'string');
    assert.ok(err.error.message.length > 0);
    const text = chunkText(ev.slice(0, -2));
    assert.ok(text.length > 0 && SENTENCE.startsWith(text), `text before the error: ${JSON.stringify(text)}`);
    assert.ok(!ev.slice(0, -2).some((e) => e.json?.choices?.[0]?.finish_reason), 'no finish chunk before the error');
    assert.equal(r.log.filter((q) => !q.path.startsWith('/token')).length, 1, 'not retried once the client got bytes');
  });
}

test('/v1/messages: a provider error mid-stream -> an Anthropic error event last', async () => {
  const h = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' };
  for (const m of ['claude-midstream', 'gemini-midstream']) {
    const r = await call('/v1/messages', { model: m, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Hi' }] }, h);
    assert.equal(r.status, 200, r.text);
    const ev = sse(r.text);
    assert.equal(ev[0].event, 'message_start', r.text);
    assert.equal(ev.at(-1).event, 'error', r.text);
    assert.equal(ev.at(-1).json.type, 'error');
    assert.equal(typeof ev.at(-1).json.error.type, 'string');
    assert.equal(typeof ev.at(-1).json.error.message, 'string');
    assert.ok(!ev.some((e) => e.event === 'message_stop'), `${m}: no message_stop after an error`);
  }
});

// ---- UTF-8 split across network writes ---------------------------------------------

for (const p of [...Object.keys(PROVIDERS), 'gpt-4o']) {
  test(`${p}: multi-byte UTF-8 split across upstream writes arrives intact`, async () => {
    const r = await call('/v1/chat/completions', chatBody(`${p}-utf8`));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.choices[0].message.content, UTF8_SENTENCE);
    const s = await call('/v1/chat/completions', chatBody(`${p}-utf8`, { stream: true }));
    assert.equal(s.status, 200, s.text);
    assert.ok(!s.text.includes('\uFFFD'), 'replacement character in the stream');
    assert.equal(chunkText(sse(s.text)), UTF8_SENTENCE);
  });
}

test('/v1/messages: multi-byte UTF-8 split across upstream writes arrives intact (native and translated)', async () => {
  const h = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' };
  for (const m of ['claude-utf8', 'gpt-4o-utf8', 'gemini-utf8', 'bedrock-utf8']) {
    const body = { model: m, max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }] };
    const r = await call('/v1/messages', body, h);
    assert.equal(r.status, 200, `${m}: ${r.text}`);
    assert.equal(r.json.content[0].text, UTF8_SENTENCE, m);
    const s = await call('/v1/messages', { ...body, stream: true }, h);
    assert.equal(s.status, 200, `${m}: ${s.text}`);
    assert.ok(!s.text.includes('\uFFFD'), `${m}: replacement character in the stream`);
    assert.equal(msgText(sse(s.text)), UTF8_SENTENCE, m);
  }
});

test('GET /health checks every native provider through its adapter (signed, keyed, with a token)', async () => {
  const r = await fetch(`${gwDrop.url}/health`);
  const j = await r.json();
  assert.equal(r.status, 200);
  const models = j.healthy_endpoints.map((e) => e.model).sort();
  assert.deepEqual(models, [PROVIDERS.bedrock, PROVIDERS.claude].sort(), JSON.stringify(j));
  assert.equal(j.unhealthy_count, 0, JSON.stringify(j.unhealthy_endpoints));
  // a deployment the provider refuses (wrong key) is unhealthy with the provider's error
  const bad = await startGateway(`
model_list:
  - model_name: claude-badkey
    litellm_params: {model: "${PROVIDERS.claude}@status=401", api_base: "${mock.url}", api_key: wrong}
`);
  try {
    const h = await (await fetch(`${bad.url}/health`)).json();
    assert.equal(h.healthy_count, 0);
    assert.equal(h.unhealthy_count, 1);
    assert.match(h.unhealthy_endpoints[0].error, /401|[Aa]uthentication/);
  } finally {
    await bad.stop();
  }
});

test('a large request is translated off the loop and answered (OpenAI -> anthropic, /v1/messages -> gpt-4o, stream too)', async () => {
  const big = 'word '.repeat(200 * 1024); // ~1 MB of text
  const r = await call('/v1/chat/completions', chatBody('claude', { messages: [{ role: 'user', content: big }] }));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.choices[0].message.content, SENTENCE);
  assert.equal(r.log.length, 1);
  assert.ok(JSON.stringify(r.log[0].json.messages).length > big.length - 10, 'the whole text reached the provider');
  const m = await call('/v1/messages', { model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: big }] });
  assert.equal(m.status, 200, m.text);
  assert.equal(m.json.content[0].text, SENTENCE);
  const s = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gemini', { stream: true, messages: [{ role: 'user', content: big }] }), AUTH);
  assert.equal(s.status, 200);
  assert.match(s.text, /data: \[DONE\]/);
  // a client that leaves while its large request is being translated: the gateway stays well
  const ac = new AbortController();
  const p = fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...AUTH }, signal: ac.signal,
    body: JSON.stringify(chatBody('bedrock', { messages: [{ role: 'user', content: big }] })),
  }).catch(() => null);
  ac.abort();
  await p;
  const ok = await call('/v1/chat/completions', chatBody('bedrock'));
  assert.equal(ok.status, 200, ok.text);
});
