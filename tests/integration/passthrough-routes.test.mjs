// passthrough-routes.test.mjs - the provider pass-through routes (/anthropic/...,
// /vertex_ai/..., /gemini/..., /bedrock/..., /openai/...) and
// general_settings.pass_through_endpoints, against the real binary and the C
// mock upstream. The mock checks what switchyard injects: the Anthropic
// x-api-key and Gemini's ?key= against --require-key, Bedrock's SigV4
// signature recomputed with --aws-secret-key, Vertex's OAuth token against
// the tokens its /token endpoint issued for a signed JWT. Also: auth
// failures, allowed_passthrough_routes, streams byte for byte, spend rows and
// key spend, methods, path traversal. No timings are asserted.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { MASTER_KEY, api, rawRequest, sha256hex, startGateway, startMock, tmpdir, until } from '../lib/harness.mjs';

const UP = 'up-secret-key'; // the provider key the mock requires
const BEDROCK_ID = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
let mock, gw, dir;

before(async () => {
  mock = await startMock(['--require-key', UP, '--aws-secret-key', 'aws-secret']);
  dir = tmpdir();
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  fs.writeFileSync(path.join(dir, 'sa.json'), JSON.stringify({
    type: 'service_account', project_id: 'p1', private_key_id: 'k1', private_key: privateKey,
    client_email: 'sy-pt@p1.iam.gserviceaccount.com', client_id: '1', token_uri: `${mock.url}/token`,
  }));
  gw = await startGateway(`
model_list:
  - model_name: claude
    litellm_params: {model: anthropic/claude-3-5-sonnet-20241022, api_base: "${mock.url}", api_key: ${UP}, input_cost_per_token: 0.001, output_cost_per_token: 0.002}
  - model_name: vclaude
    litellm_params: {model: vertex_ai/claude-sonnet-4@20250514, api_base: "${mock.url}", vertex_project: p1, vertex_location: us-east5, vertex_credentials: "${dir}/sa.json", input_cost_per_token: 0.001, output_cost_per_token: 0.002}
  - model_name: gem
    litellm_params: {model: gemini/gemini-1.5-pro, api_base: "${mock.url}", api_key: ${UP}, input_cost_per_token: 0.001, output_cost_per_token: 0.002}
  - model_name: bed
    litellm_params: {model: "bedrock/${BEDROCK_ID}", api_base: "${mock.url}", aws_access_key_id: AKIDPT, aws_secret_access_key: aws-secret, aws_region_name: us-east-1, input_cost_per_token: 0.001, output_cost_per_token: 0.002}
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: ${UP}}
general_settings:
  master_key: ${MASTER_KEY}
  proxy_batch_write_at: 0.1
  pass_through_endpoints:
    - path: /my-models
      target: "${mock.base}/models"
      headers: {Authorization: "Bearer os.environ/PT_UPSTREAM_KEY", x-extra: fixed}
    - path: /open-models
      target: "${mock.base}/models"
      auth: false
      headers: {Authorization: "os.environ/PT_UPSTREAM_BEARER"}
    - path: /sub
      target: "${mock.base}"
      include_subpath: true
      forward_headers: true
      headers: {Authorization: "Bearer os.environ/PT_UPSTREAM_KEY"}
`, { env: { PT_UPSTREAM_KEY: UP, PT_UPSTREAM_BEARER: `Bearer ${UP}`, ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '' } });
});
after(async () => { await gw?.stop(); await mock?.stop(); });

const M = (method, p, body) => api(gw.url, MASTER_KEY, method, p, body);
async function newKey(extra = {}) {
  const r = await M('POST', '/key/generate', extra);
  assert.equal(r.status, 200, r.text);
  return r.json.key;
}
async function send(p, { method = 'POST', headers = {}, body } = {}) {
  await mock.reset();
  const res = await fetch(`${gw.url}${p}`, {
    method, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const buf = Buffer.from(await res.arrayBuffer());
  const log = (await mock.requests()).filter((q) => !q.path.startsWith('/token'));
  return { status: res.status, headers: res.headers, buf, text: buf.toString('utf8'), log };
}
const msgBody = (extra = {}) => ({
  model: 'claude-3-5-sonnet-20241022', max_tokens: 50, messages: [{ role: 'user', content: 'Say hello.' }], ...extra,
});
const lower = (h) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
async function keySpend(key) {
  return (await M('GET', `/key/info?key=${key}`)).json.info.spend;
}

test('anthropic: x-api-key injected, the client key never forwarded; spend row and key spend', async () => {
  const key = await newKey();
  const r = await send('/anthropic/v1/messages', {
    headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'b1' }, body: msgBody(),
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.log.length, 1);
  const q = r.log[0];
  assert.equal(q.path, '/v1/messages');
  const h = lower(q.headers);
  assert.equal(h['x-api-key'], UP);
  assert.equal(h['anthropic-beta'], 'b1');
  assert.ok(!JSON.stringify(q.headers).includes(key), 'the virtual key reached the provider');
  assert.equal(q.body, JSON.stringify(msgBody()), 'the body is forwarded as is');
  const j = JSON.parse(r.text);
  assert.equal(j.type, 'message');
  const want = (j.usage.input_tokens * 0.001) + (j.usage.output_tokens * 0.002);
  await until(async () => Math.abs((await keySpend(key)) - want) < 1e-9, 10000);
  const hash = await sha256hex(key);
  const logs = (await M('GET', `/spend/logs?api_key=${hash}`)).json;
  assert.ok(logs.some((l) => l.call_type === 'pass_through_endpoint' && Math.abs(l.spend - want) < 1e-9 &&
    l.prompt_tokens === j.usage.input_tokens), JSON.stringify(logs));
});

test('anthropic: a streamed answer is byte-identical to the provider\'s, and billed', async () => {
  const key = await newKey();
  const body = msgBody({ stream: true });
  const r = await send('/anthropic/v1/messages', { headers: { authorization: `Bearer ${key}`, 'anthropic-version': '2023-06-01' }, body });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /text\/event-stream/);
  // the same request straight to the provider
  const direct = await fetch(`${mock.url}/v1/messages`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': UP, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
  const dbuf = Buffer.from(await direct.arrayBuffer());
  const norm = (b) => b.toString('utf8').replace(/msg_[A-Za-z0-9]+/g, 'msg_X');
  assert.equal(norm(r.buf), norm(dbuf));
  assert.match(r.text, /event: message_stop/);
  await until(async () => (await keySpend(key)) > 0, 10000);
});

test('vertex_ai (Claude Code\'s Vertex mode): OAuth token injected, rawPredict and streamRawPredict', async () => {
  const key = await newKey();
  const base = '/vertex_ai/v1/projects/p1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514';
  const body = { anthropic_version: 'vertex-2023-10-16', max_tokens: 40, messages: [{ role: 'user', content: 'hi' }] };
  let r = await send(`${base}:rawPredict`, { headers: { 'x-litellm-api-key': key }, body });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.log[0].path, '/v1/projects/p1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict');
  assert.match(lower(r.log[0].headers).authorization, /^Bearer ya29\.mock-\d+$/);
  assert.equal(JSON.parse(r.text).type, 'message');
  r = await send(`${base.replace('/vertex_ai/', '/vertex-ai/')}:streamRawPredict`, { headers: { 'x-litellm-api-key': key }, body: { ...body, stream: true } });
  assert.equal(r.status, 200, r.text);
  assert.match(r.text, /event: message_stop/);
  await until(async () => (await keySpend(key)) > 0, 10000);
});

test('gemini: ?key= is the virtual key; the provider gets its own key', async () => {
  const key = await newKey();
  const body = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
  const r = await send(`/gemini/v1beta/models/gemini-1.5-pro:generateContent?key=${key}`, { body });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.log[0].path, `/v1beta/models/gemini-1.5-pro:generateContent?key=${UP}`);
  assert.ok(!r.log[0].path.includes(key));
  const j = JSON.parse(r.text);
  const um = j.usageMetadata;
  const want = um.promptTokenCount * 0.001 + um.candidatesTokenCount * 0.002;
  await until(async () => Math.abs((await keySpend(key)) - want) < 1e-9, 10000);
});

test('bedrock: SigV4 over the exact body (the mock recomputes it); converse and converse-stream', async () => {
  const key = await newKey();
  const id = encodeURIComponent(BEDROCK_ID);
  const body = { messages: [{ role: 'user', content: [{ text: 'hi' }] }], inferenceConfig: { maxTokens: 30 } };
  let r = await send(`/bedrock/model/${id}/converse`, { headers: { authorization: `Bearer ${key}` }, body });
  assert.equal(r.status, 200, r.text);
  assert.match(lower(r.log[0].headers).authorization, /^AWS4-HMAC-SHA256 Credential=AKIDPT\//);
  const u = JSON.parse(r.text).usage;
  const want = u.inputTokens * 0.001 + u.outputTokens * 0.002;
  await until(async () => Math.abs((await keySpend(key)) - want) < 1e-9, 10000);
  r = await send(`/bedrock/model/${id}/converse-stream`, { headers: { authorization: `Bearer ${key}` }, body });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('content-type'), 'application/vnd.amazon.eventstream');
  const direct = r.buf;
  assert.ok(direct.includes(Buffer.from('messageStop')));
  await until(async () => (await keySpend(key)) > want + 1e-12, 10000);
});

test('bedrock (Claude Code\'s Bedrock mode): invoke and invoke-with-response-stream, signed, billed from the chunks', async () => {
  const key = await newKey();
  const id = encodeURIComponent(BEDROCK_ID);
  const body = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 30, messages: [{ role: 'user', content: 'hi' }] };
  let r = await send(`/bedrock/model/${id}/invoke`, { headers: { authorization: `Bearer ${key}` }, body });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.log[0].path, `/model/${id}/invoke`);
  assert.match(lower(r.log[0].headers).authorization, /^AWS4-HMAC-SHA256 /);
  const u = JSON.parse(r.text).usage;
  const want = u.input_tokens * 0.001 + u.output_tokens * 0.002;
  await until(async () => Math.abs((await keySpend(key)) - want) < 1e-9, 10000);
  r = await send(`/bedrock/model/${id}/invoke-with-response-stream`, { headers: { authorization: `Bearer ${key}` }, body });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('content-type'), 'application/vnd.amazon.eventstream');
  assert.ok(r.buf.includes(Buffer.from(':event-type')) && r.buf.includes(Buffer.from('"bytes":"')));
  const events = [...r.buf.toString('latin1').matchAll(/"bytes":"([A-Za-z0-9+/=]+)"/g)].map((m) => JSON.parse(Buffer.from(m[1], 'base64').toString('utf8')));
  assert.equal(events[0].type, 'message_start');
  assert.equal(events.at(-1).type, 'message_stop');
  const delta = events.find((e) => e.type === 'message_delta');
  const want2 = want + events[0].message.usage.input_tokens * 0.001 + delta.usage.output_tokens * 0.002;
  await until(async () => Math.abs((await keySpend(key)) - want2) < 1e-9, 10000);
});

test('a client that leaves mid-stream cancels the upstream call', async () => {
  const key = await newKey();
  await mock.reset();
  const ac = new AbortController();
  const res = await fetch(`${gw.url}/anthropic/v1/messages`, {
    method: 'POST', signal: ac.signal,
    headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(msgBody({ model: 'claude-3-5-sonnet-20241022@chunk_delay_ms=200', stream: true })),
  });
  assert.equal(res.status, 200);
  const reader = res.body.getReader();
  await reader.read();
  ac.abort();
  await until(async () => {
    const st = await (await fetch(`${mock.url}/__mock/stats`)).json();
    return st.streams_cut >= 1;
  }, 15000);
});

test('openai: GET, DELETE and HEAD pass with the injected Bearer; the status is the provider\'s', async () => {
  const key = await newKey();
  let r = await send('/openai/v1/models', { method: 'GET', headers: { authorization: `Bearer ${key}` } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.log[0].method, 'GET');
  assert.equal(lower(r.log[0].headers).authorization, `Bearer ${UP}`);
  assert.ok(JSON.parse(r.text).data);
  r = await send('/openai/v1/files/file-nope', { method: 'DELETE', headers: { authorization: `Bearer ${key}` } });
  assert.equal(r.log[0].method, 'DELETE');
  assert.equal(r.log[0].path, '/v1/files/file-nope');
  assert.equal(r.status, 404);
  r = await send('/openai/v1/models', { method: 'HEAD', headers: { authorization: `Bearer ${key}` } });
  assert.equal(r.log[0].method, 'HEAD');
  assert.equal(r.buf.length, 0);
  // the gateway still answers on the same instance afterwards
  r = await send('/openai/v1/models?limit=2', { method: 'GET', headers: { authorization: `Bearer ${key}` } });
  assert.equal(r.status, 200);
  assert.equal(r.log[0].path, '/v1/models?limit=2');
});

test('auth: no key, a wrong key, a blocked key, a key whose allowed_passthrough_routes lack the route', async () => {
  let r = await send('/anthropic/v1/messages', { body: msgBody() });
  assert.equal(r.status, 401);
  assert.equal(r.log.length, 0);
  r = await send('/anthropic/v1/messages', { headers: { 'x-api-key': 'sk-wrong' }, body: msgBody() });
  assert.equal(r.status, 401);
  assert.equal(r.log.length, 0);
  const blocked = await newKey();
  assert.equal((await M('POST', '/key/block', { key: blocked })).status, 200);
  r = await send('/anthropic/v1/messages', { headers: { 'x-api-key': blocked }, body: msgBody() });
  assert.equal(r.status, 401);
  assert.equal(r.log.length, 0);
  const limited = await newKey({ metadata: { allowed_passthrough_routes: ['/gemini', '/anthropic/v1/messages/count_tokens'] } });
  r = await send('/anthropic/v1/messages', { headers: { 'x-api-key': limited, 'anthropic-version': '2023-06-01' }, body: msgBody() });
  assert.equal(r.status, 403, r.text);
  assert.match(JSON.parse(r.text).error.message, /not allowed to call this route/);
  assert.equal(r.log.length, 0);
  // '/gemini' covers /gemini/... (a prefix followed by '/'), not /geminix
  r = await send(`/gemini/v1beta/models/gemini-1.5-pro:generateContent`, {
    headers: { 'x-goog-api-key': limited }, body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(lower(r.log[0].headers)['x-goog-api-key'], undefined);
  // the field at the top level of /key/generate is stored in metadata, as LiteLLM does; an empty list is no list
  const top = await newKey({ allowed_passthrough_routes: ['/vertex_ai'] });
  r = await send('/anthropic/v1/messages', { headers: { 'x-api-key': top, 'anthropic-version': '2023-06-01' }, body: msgBody() });
  assert.equal(r.status, 403, r.text);
  const empty = await newKey({ metadata: { allowed_passthrough_routes: [] } });
  r = await send('/anthropic/v1/messages', { headers: { 'x-api-key': empty, 'anthropic-version': '2023-06-01' }, body: msgBody() });
  assert.equal(r.status, 200, r.text);
  // the master key passes everywhere
  r = await send('/anthropic/v1/messages', { headers: { 'x-api-key': MASTER_KEY, 'anthropic-version': '2023-06-01' }, body: msgBody() });
  assert.equal(r.status, 200);
});

test('a budget spent refuses the route as on other routes', async () => {
  const key = await newKey({ max_budget: 0.000001 });
  let r = await send('/anthropic/v1/messages', { headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' }, body: msgBody() });
  assert.equal(r.status, 200);
  await until(async () => (await keySpend(key)) > 0.000001, 10000);
  await until(async () => {
    r = await send('/anthropic/v1/messages', { headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' }, body: msgBody() });
    return r.status === 400;
  }, 15000);
  assert.match(r.text, /budget/i);
});

test('pass_through_endpoints: env headers, auth default true, auth false, include_subpath', async () => {
  let r = await send('/my-models', { method: 'GET' });
  assert.equal(r.status, 401);
  const key = await newKey();
  r = await send('/my-models', { method: 'GET', headers: { authorization: `Bearer ${key}` } });
  assert.equal(r.status, 403, 'a key must list a config route');
  const listed = await newKey({ metadata: { allowed_passthrough_routes: ['/my-models'] } });
  r = await send('/my-models', { method: 'GET', headers: { authorization: `Bearer ${listed}` } });
  assert.equal(r.status, 200, r.text);
  const h = lower(r.log[0].headers);
  assert.equal(h.authorization, `Bearer ${UP}`);
  assert.equal(h['x-extra'], 'fixed');
  assert.equal(r.log[0].path, '/v1/models');
  r = await send('/my-models/x', { method: 'GET', headers: { authorization: `Bearer ${MASTER_KEY}` } });
  assert.equal(r.status, 404, 'no sub-path without include_subpath');
  r = await send('/open-models', { method: 'GET' });
  assert.equal(r.status, 200, r.text);
  assert.equal(lower(r.log[0].headers).authorization, `Bearer ${UP}`);
  r = await send('/sub/models?x=1', { method: 'GET', headers: { authorization: `Bearer ${MASTER_KEY}`, 'x-client': 'c1' } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.log[0].path, '/v1/models?x=1');
  assert.equal(lower(r.log[0].headers)['x-client'], 'c1');
  assert.equal(lower(r.log[0].headers).authorization, `Bearer ${UP}`);
});

test('path traversal never leaves the route prefix', async () => {
  const before = (await M('GET', '/key/list')).json;
  for (const p of ['/anthropic/../key/generate', '/anthropic/%2e%2e/key/generate', '/anthropic/v1/%2E%2E%2Fkey%2Fgenerate',
    '/anthropic/./v1/messages', '/bedrock/model/..%5c..%5ckey/generate', '/sub/../key/generate']) {
    await mock.reset();
    const body = '{"models":[]}';
    const raw = `POST ${p} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${MASTER_KEY}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
    const { data } = await rawRequest(gw.port, raw);
    const status = Number(data.split(' ')[1]);
    assert.ok(status === 400 || status === 404, `${p}: ${data.slice(0, 200)}`);
    assert.equal((await mock.requests()).length, 0, p);
  }
  const afterKeys = (await M('GET', '/key/list')).json;
  assert.deepEqual(afterKeys.keys.length, before.keys.length);
});

test('GET /routes lists the provider routes with their methods', async () => {
  const r = await (await fetch(`${gw.url}/routes`)).json();
  const by = new Map(r.routes.map((e) => [e.path, e.methods]));
  for (const p of ['/anthropic', '/vertex_ai', '/vertex-ai', '/gemini', '/bedrock', '/openai', '/azure', '/cohere', '/mistral', '/vllm', '/langfuse']) {
    assert.deepEqual(by.get(`${p}/{endpoint}`)?.slice().sort(), ['DELETE', 'GET', 'PATCH', 'POST', 'PUT'], p);
  }
});

test('credentials from the environment when no deployment serves the provider', async () => {
  const g2 = await startGateway(`
general_settings:
  master_key: ${MASTER_KEY}
`, {
    env: {
      ANTHROPIC_API_KEY: UP, ANTHROPIC_API_BASE: mock.url, GEMINI_API_KEY: UP, GEMINI_API_BASE: mock.url,
      AWS_ACCESS_KEY_ID: 'AKIDENV', AWS_SECRET_ACCESS_KEY: 'aws-secret', AWS_REGION_NAME: 'eu-west-1',
      AWS_BEDROCK_RUNTIME_ENDPOINT: mock.url, GOOGLE_APPLICATION_CREDENTIALS: path.join(dir, 'sa.json'),
      VERTEXAI_API_BASE: mock.url, OPENAI_API_KEY: UP, OPENAI_API_BASE: mock.url, COHERE_API_BASE: mock.url,
      COHERE_API_KEY: '', CO_API_KEY: '',
    },
  });
  try {
    const go = async (p, body, method = 'POST') => {
      await mock.reset();
      const res = await fetch(`${g2.url}${p}`, {
        method, headers: { 'x-litellm-api-key': MASTER_KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      const log = (await mock.requests()).filter((q) => !q.path.startsWith('/token'));
      return { status: res.status, text, log };
    };
    let r = await go('/anthropic/v1/messages', msgBody());
    assert.equal(r.status, 200, r.text);
    assert.equal(lower(r.log[0].headers)['x-api-key'], UP);
    r = await go('/gemini/v1beta/models/gemini-1.5-flash:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.log[0].path, `/v1beta/models/gemini-1.5-flash:generateContent?key=${UP}`);
    r = await go(`/bedrock/model/${encodeURIComponent(BEDROCK_ID)}/converse`, { messages: [{ role: 'user', content: [{ text: 'hi' }] }] });
    assert.equal(r.status, 200, r.text);
    assert.match(lower(r.log[0].headers).authorization, /Credential=AKIDENV\/\d{8}\/eu-west-1\/bedrock\/aws4_request/);
    r = await go('/vertex_ai/v1/projects/p1/locations/global/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict',
      { anthropic_version: 'vertex-2023-10-16', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(r.status, 200, r.text);
    assert.match(lower(r.log[0].headers).authorization, /^Bearer ya29\.mock-\d+$/);
    r = await go('/openai/v1/models', undefined, 'GET');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.log[0].path, '/v1/models');
    // a provider without a key anywhere: nothing is injected, the provider's own 401 comes back as it is
    r = await go('/cohere/v2/chat', { model: 'command-r', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(r.status, 401, r.text);
    assert.equal(lower(r.log[0].headers).authorization, undefined);
  } finally {
    await g2.stop();
  }
});
