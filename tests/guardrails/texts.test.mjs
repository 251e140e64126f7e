// What a guardrail reads, through the binary (guardrails/texts.c): every place a
// text lives in each dialect's request and answer is checked (blocked) and masked
// in place, with the rest of the body sent upstream unchanged; skip_system /
// skip_tool leave exactly those roles out; hostile spellings are read as the
// upstream reads them. The in-process content filter is the probe.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, postJSON, MASTER_KEY } from '../lib/harness.mjs';

let mock, gw;

const config = (base) => `
model_list:
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o, api_base: "${base}", api_key: sk-up}
  - model_name: emb
    litellm_params: {model: openai/text-embedding-3-small, api_base: "${base}", api_key: sk-up}
  - model_name: claude
    litellm_params: {model: anthropic/claude-sonnet-4-5, api_base: "${base.replace(/\/v1$/, '')}", api_key: sk-up}
general_settings:
  master_key: ${MASTER_KEY}
guardrails:
  - guardrail_name: words
    litellm_params:
      guardrail: litellm_content_filter
      mode: pre_call
      default_on: true
      blocked_words:
        - {keyword: forbidden, action: BLOCK}
        - {keyword: codename, action: MASK}
  - guardrail_name: nosys
    litellm_params:
      guardrail: litellm_content_filter
      mode: pre_call
      skip_system_message_in_guardrail: true
      blocked_words: [{keyword: sysword, action: BLOCK}]
  - guardrail_name: notool
    litellm_params:
      guardrail: litellm_content_filter
      mode: pre_call
      skip_tool_message_in_guardrail: true
      blocked_words: [{keyword: toolword, action: BLOCK}]
  - guardrail_name: out
    litellm_params:
      guardrail: litellm_content_filter
      mode: post_call
      blocked_words: [{keyword: zebra, action: BLOCK}]
`;

before(async () => {
  mock = await startMock();
  gw = await startGateway(config(mock.base));
});
after(async () => { await gw?.stop(); await mock?.stop(); });

const H = { authorization: `Bearer ${MASTER_KEY}` };
const post = (p, body) => postJSON(`${gw.url}${p}`, body, H);
const lastBody = async () => JSON.parse((await mock.requests()).at(-1).body);
const noCodename = (v) => assert.doesNotMatch(JSON.stringify(v), /codename/);

test('chat request: content parts, tool results, tool-call arguments are masked; everything else goes upstream as sent', async () => {
  await mock.reset();
  const sent = {
    model: 'gpt',
    messages: [
      { role: 'system', content: 'system codename' },
      { role: 'user', content: [{ type: 'text', text: 'part codename' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,codename' } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"codename \\"x\\""}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'tool codename é' },
    ],
    tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
    tool_choice: 'none',
  };
  const r = await post('/v1/chat/completions', sent);
  assert.equal(r.status, 200, r.text);
  const b = await lastBody();
  assert.match(b.messages[0].content, /^system \[KEYWORD_REDACTED\]$/);
  assert.equal(b.messages[1].content[0].text, 'part [KEYWORD_REDACTED]');
  assert.equal(b.messages[1].content[1].image_url.url, 'data:image/png;base64,codename', 'an image part is not text');
  assert.equal(b.messages[2].tool_calls[0].function.arguments, '{"q":"[KEYWORD_REDACTED] \\"x\\""}');
  assert.equal(b.messages[2].tool_calls[0].id, 'call_1');
  assert.equal(b.messages[3].content, 'tool [KEYWORD_REDACTED] é');
  assert.deepEqual(b.tools, sent.tools);
  assert.equal(b.tool_choice, 'none');
});

test('chat request: a blocked word anywhere a text lives refuses the call', async () => {
  const bodies = [
    [{ role: 'user', content: [{ type: 'text', text: 'ok' }, { type: 'text', text: 'forbidden' }] }],
    [{ role: 'developer', content: 'forbidden' }, { role: 'user', content: 'hi' }],
    [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"a":"forbidden"}' } }] }],
    [{ role: 'user', content: 'hi' }, { role: 'function', name: 'f', content: 'forbidden' }],
  ];
  await mock.reset();
  for (const messages of bodies) {
    const r = await post('/v1/chat/completions', { model: 'gpt', messages });
    assert.equal(r.status, 400, JSON.stringify(messages));
    assert.match(r.json.error.message, /forbidden/);
  }
  assert.equal((await mock.requests()).length, 0);
});

test('skip_system_message_in_guardrail / skip_tool_message_in_guardrail leave out exactly those roles', async () => {
  const chat = (messages, g) => post('/v1/chat/completions', { model: 'gpt', messages, guardrails: [g] });
  assert.equal((await chat([{ role: 'system', content: 'sysword' }, { role: 'user', content: 'hi' }], 'nosys')).status, 200);
  assert.equal((await chat([{ role: 'developer', content: 'sysword' }, { role: 'user', content: 'hi' }], 'nosys')).status, 200);
  assert.equal((await chat([{ role: 'user', content: 'sysword' }], 'nosys')).status, 400);
  assert.equal((await chat([{ role: 'tool', tool_call_id: 'c', content: 'sysword' }], 'nosys')).status, 400);
  const call = { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"x":"toolword"}' } }] };
  assert.equal((await chat([{ role: 'user', content: 'hi' }, { ...call, tool_calls: [{ ...call.tool_calls[0], function: { name: 'f', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c', content: 'toolword' }], 'notool')).status, 200);
  assert.equal((await chat([{ role: 'user', content: 'hi' }, call], 'notool')).status, 400, 'an assistant tool call is not a tool message');
  // /v1/messages: the top-level system is skipped; a "system" entry inside messages[] is the client's text
  const msgs = (extra, g) => post('/v1/messages', { model: 'claude', max_tokens: 20, guardrails: [g], ...extra });
  assert.equal((await msgs({ system: 'sysword', messages: [{ role: 'user', content: 'hi' }] }, 'nosys')).status, 200);
  assert.equal((await msgs({ system: [{ type: 'text', text: 'sysword' }], messages: [{ role: 'user', content: 'hi' }] }, 'nosys')).status, 200);
  assert.equal((await msgs({ messages: [{ role: 'user', content: 'hi' }, { role: 'system', content: 'sysword' }] }, 'nosys')).status, 400);
  assert.equal((await msgs({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'toolword' }] }] }, 'notool')).status, 200);
  // /v1/responses: instructions and system items skipped, tool outputs skipped
  const resp = (extra, g) => post('/v1/responses', { model: 'gpt', guardrails: [g], ...extra });
  assert.equal((await resp({ instructions: 'sysword', input: 'hi' }, 'nosys')).status, 200);
  assert.equal((await resp({ input: 'sysword' }, 'nosys')).status, 400);
  assert.equal((await resp({ input: [{ role: 'user', content: 'hi' }, { type: 'function_call_output', call_id: 'c', output: 'toolword' }] }, 'notool')).status, 200);
  assert.equal((await resp({ input: [{ role: 'user', content: 'toolword' }] }, 'notool')).status, 400);
});

test('/v1/messages request: system, text blocks, tool_use input (keys and values), tool_result content', async () => {
  const m = (extra) => post('/v1/messages', { model: 'claude', max_tokens: 20, ...extra });
  const user = [{ role: 'user', content: 'hi' }];
  assert.equal((await m({ system: 'forbidden', messages: user })).status, 400);
  assert.equal((await m({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'forbidden' }] }] })).status, 400);
  const use = { role: 'assistant', content: [{ type: 'tool_use', id: 'tu', name: 'f', input: { q: 'forbidden' } }] };
  assert.equal((await m({ messages: [...user, use, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu', content: 'ok' }] }] })).status, 400);
  const result = (content) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu', content }] });
  const clean = { role: 'assistant', content: [{ type: 'tool_use', id: 'tu', name: 'f', input: {} }] };
  assert.equal((await m({ messages: [...user, clean, result('forbidden')] })).status, 400);
  assert.equal((await m({ messages: [...user, clean, result([{ type: 'text', text: 'forbidden' }])] })).status, 400);
  // masks land in place, the rest of the body as sent
  await mock.reset();
  const masked = { role: 'assistant', content: [{ type: 'tool_use', id: 'tu', name: 'f', input: { codename: 'codename', n: 3, list: ['codename'] } }] };
  const r = await m({ system: 'codename', messages: [...user, masked, result([{ type: 'text', text: 'codename' }])] });
  assert.equal(r.status, 200, r.text);
  const b = await lastBody();
  noCodename(b);
  assert.deepEqual(b.messages[1].content[0].input, { '[KEYWORD_REDACTED]': '[KEYWORD_REDACTED]', n: 3, list: ['[KEYWORD_REDACTED]'] });
  assert.equal(b.messages[1].content[0].id, 'tu');
});

test('/v1/responses request: instructions, input items, function calls and their outputs', async () => {
  const r = (extra) => post('/v1/responses', { model: 'gpt', ...extra });
  assert.equal((await r({ instructions: 'forbidden', input: 'hi' })).status, 400);
  assert.equal((await r({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'forbidden' }] }] })).status, 400);
  const call = { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"q":"forbidden"}' };
  assert.equal((await r({ input: [{ role: 'user', content: 'hi' }, call] })).status, 400);
  const out = { type: 'function_call_output', call_id: 'c1', output: 'forbidden' };
  assert.equal((await r({ input: [{ role: 'user', content: 'hi' }, { ...call, arguments: '{}' }, out] })).status, 400);
  await mock.reset();
  const ok = await r({ instructions: 'be codename', input: [{ role: 'user', content: 'hi' }, { ...call, arguments: '{"q":"codename"}' }, { ...out, output: 'codename' }] });
  assert.equal(ok.status, 200, ok.text);
  noCodename(await lastBody());
});

test('completions and embeddings: each prompt / input string', async () => {
  await mock.reset();
  let r = await post('/v1/completions', { model: 'gpt', prompt: ['fine', 'a codename'] });
  assert.equal(r.status, 200, r.text);
  const b = await lastBody();
  assert.deepEqual(b.prompt, ['fine', 'a [KEYWORD_REDACTED]']);
  r = await post('/v1/completions', { model: 'gpt', prompt: 'forbidden' });
  assert.equal(r.status, 400);
  r = await post('/v1/embeddings', { model: 'emb', input: ['ok', 'forbidden'] });
  assert.equal(r.status, 400);
  r = await post('/v1/embeddings', { model: 'emb', input: [[1, 2, 3]] });
  assert.equal(r.status, 200, 'token lists are not text');
});

test('post_call reads tool calls: chat arguments, /v1/messages tool_use input, Responses function_call', async () => {
  // the mock's tool call arguments name the schema's properties: a property named zebra
  const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { zebra: { type: 'string' } } } } }];
  let r = await post('/v1/chat/completions', { model: 'gpt', guardrails: ['out'], messages: [{ role: 'user', content: 'hi' }], tools, mock: { tool_call: true } });
  assert.equal(r.status, 400, r.text);
  assert.match(r.json.error.message, /zebra/);
  r = await post('/v1/messages', { model: 'claude', max_tokens: 50, guardrails: ['out'], messages: [{ role: 'user', content: 'hi' }],
    tools: [{ name: 'f', input_schema: { type: 'object', properties: { zebra: { type: 'string' } } } }], mock: { tool_call: true } });
  assert.equal(r.status, 400, r.text);
  assert.equal(r.json.type, 'error');
  assert.match(r.json.error.message, /zebra/);
  r = await post('/v1/responses', { model: 'gpt', guardrails: ['out'], input: 'hi',
    tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: { zebra: { type: 'string' } } } }], mock: { tool_call: true } });
  assert.equal(r.status, 400, r.text);
  assert.match(r.json.error.message, /zebra/);
  // without the word, the same calls pass
  const calm = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { horse: { type: 'string' } } } } }];
  r = await post('/v1/chat/completions', { model: 'gpt', guardrails: ['out'], messages: [{ role: 'user', content: 'hi' }], tools: calm, mock: { tool_call: true } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.choices[0].message.tool_calls[0].function.name, 'f');
});

test('hostile spellings are read as the upstream reads them', async () => {
  const raw = async (s) => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...H, 'content-type': 'application/json' }, body: s });
    return { status: res.status, text: await res.text() };
  };
  // an escaped key inside a content part, an escaped role, escaped text
  let r = await raw('{"model":"gpt","messages":[{"role":"user","content":[{"type":"text","te\\u0078t":"forb\\u0069dden"}]}]}');
  assert.equal(r.status, 400, r.text);
  r = await raw('{"model":"gpt","messages":[{"r\\u006fle":"user","content":"\\u0066orbidden"}]}');
  assert.equal(r.status, 400, r.text);
  // a repeated member inside a part: the last one is the one the upstream reads
  r = await raw('{"model":"gpt","messages":[{"role":"user","content":[{"type":"text","text":"fine","text":"forbidden"}]}]}');
  assert.equal(r.status, 400, r.text);
  // nulls and numbers where texts belong are skipped, never a 500
  r = await raw('{"model":"gpt","messages":[{"role":"user","content":[{"type":"text","text":null},{"type":"text","text":5}]},{"role":"user","content":"hi"}]}');
  assert.notEqual(r.status, 500, r.text);
  // nesting deeper than the readers go is refused before any guardrail, with a client error
  r = await raw(`{"model":"gpt","x":${'['.repeat(200)}${']'.repeat(200)},"messages":[{"role":"user","content":"hi"}]}`);
  assert.equal(r.status, 400, r.text);
  // a mask inside a 2 MB message: the upstream gets the same bytes but the word
  await mock.reset();
  const big = 'x'.repeat(2 << 20);
  const ok = await post('/v1/chat/completions', { model: 'gpt', messages: [{ role: 'user', content: `${big} codename ${big}` }] });
  assert.equal(ok.status, 200, ok.text);
  const b = await lastBody();
  assert.equal(b.messages[0].content, `${big} [KEYWORD_REDACTED] ${big}`);
});

test('post_call on streams reads tool-call argument pieces and texts of every dialect', async () => {
  const stream = async (p, body) => {
    const res = await fetch(`${gw.url}${p}`, { method: 'POST', headers: { ...H, 'content-type': 'application/json' }, body: JSON.stringify({ ...body, stream: true }) });
    return { status: res.status, text: await res.text() };
  };
  const props = { type: 'object', properties: { zebra: { type: 'string' } } };
  let s = await stream('/v1/chat/completions', { model: 'gpt', guardrails: ['out'], messages: [{ role: 'user', content: 'hi' }],
    tools: [{ type: 'function', function: { name: 'f', parameters: props } }], mock: { tool_call: true } });
  assert.equal(s.status, 200);
  assert.match(s.text, /"error"/, s.text);
  s = await stream('/v1/messages', { model: 'claude', max_tokens: 50, guardrails: ['out'], messages: [{ role: 'user', content: 'hi' }],
    tools: [{ name: 'f', input_schema: props }], mock: { tool_call: true } });
  assert.match(s.text, /event: error/, s.text);
  s = await stream('/v1/responses', { model: 'gpt', guardrails: ['out'], input: 'hi',
    tools: [{ type: 'function', name: 'f', parameters: props }], mock: { tool_call: true } });
  assert.match(s.text, /error/, s.text);
  assert.doesNotMatch(s.text, /response\.completed/);
  // the same streams without the word end normally
  s = await stream('/v1/chat/completions', { model: 'gpt', guardrails: ['out'], messages: [{ role: 'user', content: 'hi' }],
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { horse: { type: 'string' } } } } }], mock: { tool_call: true } });
  assert.doesNotMatch(s.text, /"error"/);
  assert.match(s.text, /data: \[DONE\]/);
});
