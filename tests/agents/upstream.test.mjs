// upstream.test.mjs - the agents tier's oracle checked on its own (no CLI, no
// gateway): the scripted upstream answers each API's script (a write call,
// then DONE after its result) as JSON and as SSE, and refuses what the real
// APIs refuse - a virtual key, an unsigned or forged thinking block on the
// last tool turn, unpaired tool calls and results, fields the API does not
// take, reasoning_effort to a chat model that does not reason, a Vertex call
// without the token it minted for a JWT signed by the service account.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startUpstream } from './upstream.mjs';

let up;
before(async () => { up = await startUpstream(); });
after(async () => { await up?.close(); });

const W = '[[write:/w/out.txt|hello-agents]]';
const ant = (body, key = up.anthropicKey, path = '/v1/messages') => call(path, body, { 'x-api-key': key, 'anthropic-version': '2023-06-01' });
const oai = (path, body, key = up.openaiKey) => call(path, body, { authorization: `Bearer ${key}` });

async function call(path, body, headers) {
  const r = await fetch(`${up.url}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal: AbortSignal.timeout(10000),
  });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch {}
  return { status: r.status, text, json, events: sseEvents(text) };
}

function sseEvents(text) {
  const out = [];
  for (const block of text.split('\n\n')) {
    const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    if (data && data !== '[DONE]') out.push(JSON.parse(data));
  }
  return out;
}

const writeTool = { name: 'Write', description: 'write a file', input_schema: { type: 'object', properties: { file_path: { type: 'string' }, content: { type: 'string' } }, required: ['file_path', 'content'] } };
const antBody = (messages, extra = {}) => ({ model: 'claude-x', max_tokens: 1024, tools: [writeTool], messages, ...extra });
const thinkingOn = { thinking: { type: 'enabled', budget_tokens: 1024 } };

describe('Anthropic Messages', () => {
  test('the script: a signed thinking block and a Write call, then DONE after its result', async () => {
    const first = [{ role: 'user', content: `do it ${W}` }];
    const r1 = await ant(antBody(first, thinkingOn));
    assert.equal(r1.status, 200, r1.text);
    const [th, use] = r1.json.content;
    assert.equal(th.type, 'thinking');
    assert.ok(th.signature.length > 20);
    assert.deepEqual(use.input, { file_path: '/w/out.txt', content: 'hello-agents' });
    assert.ok(r1.json.usage.input_tokens > 0 && r1.json.usage.output_tokens > 0);
    const next = [...first, { role: 'assistant', content: r1.json.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'ok' }] }];
    const r2 = await ant(antBody(next, thinkingOn));
    assert.equal(r2.status, 200, r2.text);
    assert.equal(r2.json.content.at(-1).text, 'DONE');

    // the last tool turn without its thinking block, or with a forged one: Anthropic's 400s
    const noThinking = [...first, { role: 'assistant', content: [use] }, next[2]];
    const r3 = await ant(antBody(noThinking, thinkingOn));
    assert.equal(r3.status, 400);
    assert.equal(r3.json.type, 'error');
    assert.match(r3.json.error.message, /Expected `thinking` or `redacted_thinking`, but found `tool_use`/);
    const forged = [...first, { role: 'assistant', content: [{ ...th, thinking: 'something else' }, use] }, next[2]];
    const r4 = await ant(antBody(forged, thinkingOn));
    assert.equal(r4.status, 400);
    assert.match(r4.json.error.message, /Invalid `signature` in `thinking` block/);
    // thinking off: no block required
    const r5 = await ant(antBody(noThinking));
    assert.equal(r5.status, 200, r5.text);
  });

  test('streamed: message_start, the blocks, signature_delta, input_json_delta, message_stop', async () => {
    const r = await ant(antBody([{ role: 'user', content: `do it ${W}` }], { ...thinkingOn, stream: true }));
    assert.equal(r.status, 200);
    const types = r.events.map((e) => e.type);
    assert.equal(types[0], 'message_start');
    assert.equal(types.at(-1), 'message_stop');
    assert.ok(r.events.some((e) => e.delta?.type === 'signature_delta'));
    const json = r.events.filter((e) => e.delta?.type === 'input_json_delta').map((e) => e.delta.partial_json).join('');
    assert.deepEqual(JSON.parse(json), { file_path: '/w/out.txt', content: 'hello-agents' });
    assert.equal(r.events.find((e) => e.type === 'message_delta').delta.stop_reason, 'tool_use');
  });

  test('refusals: a virtual key, an unpaired tool_use or tool_result, an unknown field, no max_tokens', async () => {
    assert.equal((await ant(antBody([{ role: 'user', content: 'hi' }]), 'sk-virtual-key')).status, 401);
    const use = { type: 'tool_use', id: 'toolu_1', name: 'Write', input: {} };
    let r = await ant(antBody([{ role: 'user', content: 'hi' }, { role: 'assistant', content: [use] }, { role: 'user', content: 'go on' }]));
    assert.equal(r.status, 400);
    assert.match(r.json.error.message, /without `tool_result` blocks immediately after: toolu_1/);
    r = await ant(antBody([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'x' }] }]));
    assert.equal(r.status, 400);
    assert.match(r.json.error.message, /unexpected `tool_use_id`/);
    r = await ant(antBody([{ role: 'user', content: 'hi' }], { reasoning_effort: 'high' }));
    assert.equal(r.status, 400);
    assert.match(r.json.error.message, /reasoning_effort: Extra inputs are not permitted/);
    r = await ant({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(r.status, 400);
  });

  test('count_tokens and a side call without tools', async () => {
    const r = await ant({ model: 'm', messages: [{ role: 'user', content: 'hello there' }] }, up.anthropicKey, '/v1/messages/count_tokens');
    assert.equal(r.status, 200);
    assert.ok(r.json.input_tokens > 0);
    const t = await ant({ model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'a title please' }] });
    assert.equal(t.json.content[0].type, 'text');
  });
});

describe('OpenAI Chat Completions', () => {
  const fn = { type: 'function', function: { name: 'write', parameters: { type: 'object', properties: { filePath: { type: 'string' }, content: { type: 'string' } } } } };
  test('the script, streamed with usage; then DONE; refusals', async () => {
    const msgs = [{ role: 'user', content: `go ${W}` }];
    const r = await oai('/v1/chat/completions', { model: 'gpt-4.1', messages: msgs, tools: [fn], stream: true, stream_options: { include_usage: true } });
    assert.equal(r.status, 200, r.text);
    const calls = r.events.flatMap((e) => e.choices[0]?.delta?.tool_calls || []);
    const args = calls.map((c) => c.function.arguments || '').join('');
    assert.deepEqual(JSON.parse(args), { filePath: '/w/out.txt', content: 'hello-agents' });
    assert.ok(r.events.at(-1).usage.total_tokens > 0);
    const tc = { id: calls[0].id, type: 'function', function: { name: 'write', arguments: args } };
    const done = await oai('/v1/chat/completions', { model: 'gpt-4.1', messages: [...msgs, { role: 'assistant', content: null, tool_calls: [tc] }, { role: 'tool', tool_call_id: tc.id, content: 'ok' }], tools: [fn] });
    assert.equal(done.json.choices[0].message.content, 'DONE');

    let x = await oai('/v1/chat/completions', { model: 'gpt-4.1', messages: [...msgs, { role: 'assistant', content: null, tool_calls: [tc] }], tools: [fn] });
    assert.equal(x.status, 400);
    assert.match(x.json.error.message, /must be followed by tool messages/);
    x = await oai('/v1/chat/completions', { model: 'gpt-4.1', messages: [...msgs, { role: 'tool', tool_call_id: 'call_x', content: 'ok' }] });
    assert.equal(x.status, 400);
    x = await oai('/v1/chat/completions', { model: 'gpt-4.1', messages: msgs, reasoning_effort: 'high' });
    assert.equal(x.status, 400);
    assert.match(x.json.error.message, /reasoning_effort/);
    assert.equal((await oai('/v1/chat/completions', { model: 'gpt-5.5', messages: msgs, reasoning_effort: 'high' })).status, 200);
    assert.equal((await oai('/v1/chat/completions', { model: 'gpt-4.1', messages: msgs, thinking: {} })).status, 400);
    assert.equal((await oai('/v1/chat/completions', { model: 'gpt-4.1', messages: msgs }, 'sk-virtual')).status, 401);
  });

  test('a freeform tool flattened into a function gets the patch in its one string parameter', async () => {
    const ap = { type: 'function', function: { name: 'apply_patch', parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] } } };
    const r = await oai('/v1/chat/completions', { model: 'q', messages: [{ role: 'user', content: `go ${W}` }], tools: [ap] });
    const args = JSON.parse(r.json.choices[0].message.tool_calls[0].function.arguments);
    assert.match(args.input, /^\*\*\* Begin Patch\n\*\*\* Add File: \/w\/out.txt\n\+hello-agents\n\*\*\* End Patch/);
  });
});

describe('OpenAI Responses', () => {
  const tools = [{ type: 'custom', name: 'apply_patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' } },
    { type: 'web_search' }, { type: 'namespace', name: 'multi_agent_v1', tools: [{ type: 'function', name: 'spawn_agent', parameters: {} }] }];
  test('a custom_tool_call streamed with custom_tool_call_input events, then DONE; pairing refusals', async () => {
    const input = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: `go ${W}` }] }];
    const r = await oai('/v1/responses', { model: 'gpt-5.5', input, tools, stream: true, store: false });
    assert.equal(r.status, 200, r.text);
    const types = r.events.map((e) => e.type);
    assert.equal(types[0], 'response.created');
    assert.ok(types.includes('response.custom_tool_call_input.delta'));
    const done = r.events.find((e) => e.type === 'response.completed').response;
    const item = done.output[0];
    assert.equal(item.type, 'custom_tool_call');
    assert.match(item.input, /Add File: \/w\/out.txt/);
    assert.ok(done.usage.total_tokens > 0);
    assert.deepEqual(r.events.map((e) => e.sequence_number), r.events.map((_, i) => i));
    const next = [...input, item, { type: 'custom_tool_call_output', call_id: item.call_id, output: 'ok' }];
    const r2 = await oai('/v1/responses', { model: 'gpt-5.5', input: next, tools });
    assert.equal(r2.json.output[0].content[0].text, 'DONE');
    let x = await oai('/v1/responses', { model: 'gpt-5.5', input: [...input, item], tools });
    assert.equal(x.status, 400);
    assert.match(x.json.error.message, /No tool output found/);
    x = await oai('/v1/responses', { model: 'gpt-5.5', input: [...input, { type: 'function_call_output', call_id: item.call_id, output: 'ok' }] });
    assert.equal(x.status, 400);
    x = await oai('/v1/responses', { model: 'gpt-5.5', input, messages: [] });
    assert.equal(x.status, 400);
  });
});

describe('Vertex AI', () => {
  const path = `/v1/projects/sy-agents-project/locations/us-east5/publishers/anthropic/models/claude-x@1:rawPredict`;
  const vbody = { anthropic_version: 'vertex-2023-10-16', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };
  test('a token only for a JWT the service account signed; rawPredict only with it', async () => {
    const sa = JSON.parse(up.serviceAccount);
    const jwt = (key, aud = sa.token_uri) => {
      const h = Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT' })).toString('base64url');
      const now = Math.floor(Date.now() / 1000);
      const c = Buffer.from(JSON.stringify({ iss: sa.client_email, scope: 'https://www.googleapis.com/auth/cloud-platform', aud, iat: now, exp: now + 3600 })).toString('base64url');
      return `${h}.${c}.${crypto.sign('RSA-SHA256', Buffer.from(`${h}.${c}`), key).toString('base64url')}`;
    };
    const token = async (assertion) => fetch(sa.token_uri, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }) });
    const other = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    assert.equal((await token(jwt(other))).status, 401);
    assert.equal((await token(jwt(sa.private_key, 'https://elsewhere/token'))).status, 401);
    const ok = await token(jwt(sa.private_key));
    assert.equal(ok.status, 200);
    const { access_token } = await ok.json();
    assert.equal((await call(path, vbody, { authorization: 'Bearer ya29.made-up' })).status, 401);
    const r = await call(path, vbody, { authorization: `Bearer ${access_token}` });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.type, 'message');
    assert.equal((await call(path, { ...vbody, model: 'claude-x' }, { authorization: `Bearer ${access_token}` })).status, 400);
    assert.equal((await call(path.replace('sy-agents-project', 'other-project'), vbody, { authorization: `Bearer ${access_token}` })).status, 403);
  });
});
