// responses-tools.test.mjs - Codex's tools on a translated /v1/responses (issue 21, item 2):
// namespace tools, custom (freeform) tools and hosted tools through deployments that only
// speak chat (hosted_vllm/, anthropic/), against the real binary and the mock upstream.
//
//   section             what is checked
//   Codex request       a Codex-shaped request (namespace + custom apply_patch + function +
//                       web_search / tool_search / image_generation) is answered, not refused:
//                       the upstream sees flat function tools and no hosted tool, the client
//                       gets x-switchyard-dropped-tools
//   each kind streamed  a namespaced call (function_call with namespace), a custom call
//                       (custom_tool_call_input.delta / .done, custom_tool_call item) and a
//                       plain function call, as event streams and as JSON
//   second turn         the calls carried back (as input items, and through
//                       previous_response_id) become chat tool calls and tool messages
//   web search          web_search_options where the price map says supports_web_search
//                       (chat deployment, and anthropic's web_search tool), dropped elsewhere
//   native              an OpenAI deployment gets the tools byte for byte
//   attacker            header injection through a tool type, malformed namespaces and
//                       custom calls (400 in OpenAI's shape), the gateway keeps serving
//
// The mock calls the first declared tool when the last turn is the user's, and answers text
// after a tool result (docs/testing-mock.md), so each case orders its tools to pick the call.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startGateway, startMock, tmpdir } from '../lib/harness.mjs';

let mock, gw;

const PRICES = {
  'hosted_vllm/searcher': {
    litellm_provider: 'hosted_vllm', mode: 'chat', input_cost_per_token: 1e-6, output_cost_per_token: 2e-6,
    supports_function_calling: true, supports_web_search: true,
  },
  'anthropic/claude-search': {
    litellm_provider: 'anthropic', mode: 'chat', input_cost_per_token: 3e-6, output_cost_per_token: 1.5e-5,
    supports_function_calling: true, supports_web_search: true,
  },
};

before(async () => {
  mock = await startMock();
  const dir = tmpdir();
  const prices = path.join(dir, 'prices.json');
  fs.writeFileSync(prices, JSON.stringify(PRICES));
  gw = await startGateway(`
model_list:
  - model_name: codex-chat
    litellm_params: {model: hosted_vllm/qwen, api_base: "${mock.base}", api_key: sk-up}
  - model_name: codex-search
    litellm_params: {model: hosted_vllm/searcher, api_base: "${mock.base}", api_key: sk-up}
  - model_name: codex-claude
    litellm_params: {model: anthropic/claude-search, api_base: "${mock.url}", api_key: sk-up}
  - model_name: codex-native
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-up}
general_settings:
  switchyard_model_prices: "${prices}"
`);
});
after(async () => {
  if (gw) assert.equal(await gw.stop(), 0, 'SIGTERM exits 0');
  await mock?.stop();
});

// ---- Codex's tools -----------------------------------------------------------------
const NS = {
  type: 'namespace', name: 'multi_agent_v1', description: 'Tools in the multi_agent_v1 namespace.',
  tools: [{ type: 'function', name: 'spawn_agent', description: 'Spawn a sub-agent.', strict: false,
    parameters: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] } }],
};
const GRAMMAR = 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF';
const PATCH = { type: 'custom', name: 'apply_patch', description: 'Use the `apply_patch` tool to edit files.',
  format: { type: 'grammar', syntax: 'lark', definition: GRAMMAR } };
const SHELL = { type: 'function', name: 'shell', description: 'Runs a shell command.', strict: false,
  parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } };
const DEFAULT_NS = { type: 'namespace', name: 'functions', description: 'Top-level tools.',
  tools: [{ type: 'function', name: 'update_plan', parameters: { type: 'object', properties: { plan: { type: 'string' } } } }] };
const HOSTED = [
  { type: 'web_search', external_web_access: false, search_context_size: 'low',
    user_location: { type: 'approximate', country: 'FR', city: 'Paris' } },
  { type: 'tool_search', execution: 'client', description: 'Search the deferred tools.',
    parameters: { type: 'object', properties: { query: { type: 'string' } } } },
  { type: 'image_generation', output_format: 'png' },
];
const USER = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'fix the failing test' }] };

/** A request as Codex 0.171 sends it; `first` is the tool the mock will call. */
function codex(model, first, extra = {}) {
  const rest = [NS, PATCH, SHELL, DEFAULT_NS].filter((t) => t !== first);
  return {
    model, instructions: 'You are Codex, a coding agent.', input: [USER],
    tools: [first, ...rest, ...HOSTED], tool_choice: 'auto', parallel_tool_calls: false,
    reasoning: { effort: 'medium', summary: 'auto' }, store: false, stream: true,
    include: ['reasoning.encrypted_content'], prompt_cache_key: 'codex-session-1', ...extra,
  };
}

async function post(body, headers = {}) {
  const res = await fetch(`${gw.url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(30000),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch {}
  return { status: res.status, headers: res.headers, text, json };
}

/** The events of a Responses stream ("event: T\ndata: {...}" frames). */
function events(text) {
  const out = [];
  for (const frame of text.split('\n\n')) {
    const data = frame.split('\n').find((l) => l.startsWith('data: '));
    if (!data) continue;
    const e = JSON.parse(data.slice(6));
    const ev = frame.split('\n').find((l) => l.startsWith('event: '));
    assert.equal(ev?.slice(7), e.type, `event line names the type: ${frame}`);
    out.push(e);
  }
  out.forEach((e, i) => assert.equal(e.sequence_number, i, 'consecutive sequence_number'));
  return out;
}

/** The upstream request bodies (parsed) on a path since `since` requests. */
async function upstreamBodies(part, since) {
  const all = await mock.requests();
  return all.slice(since).filter((q) => q.path.split('?')[0].endsWith(part)).map((q) => JSON.parse(q.body));
}
const mark = async () => (await mock.requests()).length;

const toolNames = (body) => (body.tools || []).map((t) => t.function?.name ?? t.name ?? t.type);

describe('Codex tools on translated /v1/responses', () => {
  test('a Codex request to a chat deployment is answered; the upstream gets flat function tools only', async () => {
    const m0 = await mark();
    const r = await post({ ...codex('codex-chat', NS), stream: false });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-switchyard-dropped-tools'), 'web_search,tool_search,image_generation');
    const [up] = await upstreamBodies('/chat/completions', m0);
    assert.ok(up, 'one upstream chat call');
    assert.deepEqual(toolNames(up), ['multi_agent_v1__spawn_agent', 'apply_patch', 'shell', 'update_plan']);
    assert.ok(up.tools.every((t) => t.type === 'function'), JSON.stringify(up.tools));
    assert.equal(up.web_search_options, undefined, 'the deployment does not search: no web_search_options');
    const patch = up.tools.find((t) => t.function.name === 'apply_patch').function;
    assert.deepEqual(patch.parameters.required, ['input']);
    assert.equal(patch.parameters.properties.input.type, 'string');
    assert.ok(patch.description.startsWith(PATCH.description), patch.description);
    assert.ok(patch.description.includes(`\`\`\`lark\n${GRAMMAR}\n\`\`\``), patch.description);
    assert.equal(up.tool_choice, 'auto');
    assert.equal(up.parallel_tool_calls, false);
    // the answer: the namespaced call comes back with its own name and namespace
    const calls = r.json.output.filter((o) => o.type === 'function_call');
    assert.equal(calls.length, 1, r.text);
    assert.equal(calls[0].name, 'spawn_agent');
    assert.equal(calls[0].namespace, 'multi_agent_v1');
    assert.deepEqual(JSON.parse(calls[0].arguments), { task: 'mock' });
    // the response echoes the client's tools as sent
    assert.deepEqual(r.json.tools, codex('codex-chat', NS).tools);
    // and the operator's log says what was dropped, for which call
    const callId = r.headers.get('x-litellm-call-id');
    assert.ok(gw.log().split('\n').some((l) => l.includes(callId) && l.includes('web_search,tool_search,image_generation')),
      gw.log().slice(-2000));
  });

  test('streamed namespaced call: function_call with name and namespace', async () => {
    const r = await post(codex('codex-chat', NS));
    assert.equal(r.status, 200, r.text);
    assert.match(r.headers.get('content-type'), /text\/event-stream/);
    assert.equal(r.headers.get('x-switchyard-dropped-tools'), 'web_search,tool_search,image_generation');
    const ev = events(r.text);
    const added = ev.find((e) => e.type === 'response.output_item.added' && e.item.type === 'function_call');
    assert.ok(added, r.text);
    assert.equal(added.item.name, 'spawn_agent');
    assert.equal(added.item.namespace, 'multi_agent_v1');
    const args = ev.filter((e) => e.type === 'response.function_call_arguments.delta' && e.item_id === added.item.id)
      .map((e) => e.delta).join('');
    const done = ev.find((e) => e.type === 'response.function_call_arguments.done');
    assert.equal(done.arguments, args);
    assert.equal(done.name, 'spawn_agent');
    const item = ev.find((e) => e.type === 'response.output_item.done' && e.item.id === added.item.id).item;
    assert.deepEqual({ name: item.name, namespace: item.namespace, status: item.status },
      { name: 'spawn_agent', namespace: 'multi_agent_v1', status: 'completed' });
    const fin = ev.at(-1);
    assert.equal(fin.type, 'response.completed');
    assert.deepEqual(fin.response.output.find((o) => o.type === 'function_call'), item);
  });

  test('streamed custom tool call: custom_tool_call_input.delta / .done and a custom_tool_call item', async () => {
    const r = await post(codex('codex-chat', PATCH));
    assert.equal(r.status, 200, r.text);
    const ev = events(r.text);
    const added = ev.find((e) => e.type === 'response.output_item.added' && e.item.type === 'custom_tool_call');
    assert.ok(added, r.text);
    assert.match(added.item.id, /^ctc_/);
    assert.equal(added.item.name, 'apply_patch');
    assert.equal(added.item.input, '');
    assert.equal(added.item.namespace, undefined);
    const deltas = ev.filter((e) => e.type === 'response.custom_tool_call_input.delta');
    assert.ok(deltas.length >= 1, r.text);
    assert.ok(deltas.every((e) => e.item_id === added.item.id && e.output_index === added.output_index));
    const done = ev.find((e) => e.type === 'response.custom_tool_call_input.done');
    assert.equal(done.input, 'mock', 'the raw input, unwrapped from {"input": ...}');
    assert.equal(deltas.map((e) => e.delta).join(''), done.input);
    assert.equal(ev.filter((e) => e.type.startsWith('response.function_call_arguments')).length, 0);
    const item = ev.find((e) => e.type === 'response.output_item.done' && e.item.id === added.item.id).item;
    assert.deepEqual(item, { type: 'custom_tool_call', id: added.item.id, call_id: added.item.call_id,
      name: 'apply_patch', input: 'mock', status: 'completed' });
    const fin = ev.at(-1);
    assert.equal(fin.type, 'response.completed');
    assert.deepEqual(fin.response.output.filter((o) => o.type === 'custom_tool_call'), [item]);
    // the same as JSON
    const j = await post({ ...codex('codex-chat', PATCH), stream: false });
    assert.equal(j.status, 200, j.text);
    const c = j.json.output.find((o) => o.type === 'custom_tool_call');
    assert.equal(c.input, 'mock', j.text);
    assert.equal(c.name, 'apply_patch');
    assert.match(c.id, /^ctc_/);
  });

  test('streamed function call: a plain function_call without a namespace; default namespace keeps bare names', async () => {
    for (const [first, name] of [[SHELL, 'shell'], [DEFAULT_NS, 'update_plan']]) {
      const r = await post(codex('codex-chat', first));
      assert.equal(r.status, 200, r.text);
      const ev = events(r.text);
      const item = ev.find((e) => e.type === 'response.output_item.done' && e.item.type === 'function_call')?.item;
      assert.ok(item, r.text);
      assert.equal(item.name, name);
      assert.equal('namespace' in item, false, JSON.stringify(item));
      assert.equal(ev.at(-1).type, 'response.completed');
    }
  });

  test('second turn: calls and outputs of each kind carried back as chat tool calls and tool messages', async () => {
    const m0 = await mark();
    const patch = '*** Begin Patch\n*** Add File: hello.txt\n+hé "quoted" \\ back\n*** End Patch\n';
    const input = [
      USER,
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'opaque' },
      { type: 'function_call', id: 'fc_1', call_id: 'call_ns', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{"task":"look"}' },
      { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_patch', name: 'apply_patch', input: patch },
      { type: 'function_call', id: 'fc_2', call_id: 'call_plan', name: 'update_plan', namespace: 'functions', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_ns', output: 'agent started' },
      { type: 'custom_tool_call_output', call_id: 'call_patch', output: 'Success. Updated the following files:\nA hello.txt\n' },
      { type: 'function_call_output', call_id: 'call_plan', output: 'Plan updated' },
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } },
    ];
    const r = await post({ ...codex('codex-chat', PATCH), input });
    assert.equal(r.status, 200, r.text);
    const ev = events(r.text);
    assert.equal(ev.at(-1).type, 'response.completed', r.text);
    assert.ok(ev.some((e) => e.type === 'response.output_text.delta'), 'a text answer after the tool results');
    const [up] = await upstreamBodies('/chat/completions', m0);
    const asst = up.messages.find((m) => m.role === 'assistant');
    assert.deepEqual(asst.tool_calls.map((c) => [c.id, c.function.name]),
      [['call_ns', 'multi_agent_v1__spawn_agent'], ['call_patch', 'apply_patch'], ['call_plan', 'update_plan']]);
    assert.deepEqual(JSON.parse(asst.tool_calls[1].function.arguments), { input: patch });
    assert.deepEqual(up.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]), [
      ['call_ns', 'agent started'], ['call_patch', 'Success. Updated the following files:\nA hello.txt\n'], ['call_plan', 'Plan updated']]);
    assert.equal(JSON.stringify(up.messages).includes('web_search_call'), false);
  });

  test('previous_response_id: a stored custom_tool_call is replayed as the tool call it was', async () => {
    const first = await post({ ...codex('codex-chat', PATCH), store: true, stream: false });
    assert.equal(first.status, 200, first.text);
    const call = first.json.output.find((o) => o.type === 'custom_tool_call');
    assert.ok(call, first.text);
    const m0 = await mark();
    const second = await post({
      ...codex('codex-chat', PATCH), store: true, previous_response_id: first.json.id,
      input: [{ type: 'custom_tool_call_output', call_id: call.call_id, output: 'Done!' }],
    });
    assert.equal(second.status, 200, second.text);
    assert.equal(events(second.text).at(-1).type, 'response.completed');
    const [up] = await upstreamBodies('/chat/completions', m0);
    const asst = up.messages.find((m) => m.role === 'assistant' && m.tool_calls);
    assert.equal(asst.tool_calls[0].id, call.call_id);
    assert.equal(asst.tool_calls[0].function.name, 'apply_patch');
    assert.deepEqual(JSON.parse(asst.tool_calls[0].function.arguments), { input: 'mock' });
    assert.deepEqual(up.messages.at(-1), { role: 'tool', tool_call_id: call.call_id, content: 'Done!' });
  });

  test('web search: web_search_options where the price map says the model searches', async () => {
    let m0 = await mark();
    const r = await post({ ...codex('codex-search', SHELL), stream: false });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-switchyard-dropped-tools'), 'tool_search,image_generation');
    const [up] = await upstreamBodies('/chat/completions', m0);
    assert.deepEqual(up.web_search_options, {
      search_context_size: 'low', user_location: { type: 'approximate', approximate: { city: 'Paris', country: 'FR' } },
    });
    assert.ok(!toolNames(up).includes('web_search'));
    // through the anthropic adapter: its hosted web_search tool, and a custom call decoded twice
    m0 = await mark();
    const a = await post(codex('codex-claude', PATCH));
    assert.equal(a.status, 200, a.text);
    assert.equal(a.headers.get('x-switchyard-dropped-tools'), 'tool_search,image_generation');
    const [aup] = await upstreamBodies('/messages', m0);
    assert.ok(aup, 'one anthropic call');
    assert.ok(aup.tools.some((t) => t.type === 'web_search_20250305'), JSON.stringify(aup.tools));
    assert.deepEqual(aup.tools.filter((t) => t.input_schema).map((t) => t.name),
      ['apply_patch', 'multi_agent_v1__spawn_agent', 'shell', 'update_plan']);
    const ev = events(a.text);
    const item = ev.find((e) => e.type === 'response.output_item.done' && e.item.type === 'custom_tool_call')?.item;
    assert.ok(item, a.text);
    assert.equal(item.input, 'mock');
    assert.equal(ev.at(-1).type, 'response.completed');
    // a model the price map does not say searches: dropped, named in the header
    m0 = await mark();
    const c = await post({ ...codex('codex-chat', SHELL), stream: false, tools: [SHELL, HOSTED[0]] });
    assert.equal(c.status, 200, c.text);
    assert.equal(c.headers.get('x-switchyard-dropped-tools'), 'web_search');
    const [cup] = await upstreamBodies('/chat/completions', m0);
    assert.equal(cup.web_search_options, undefined);
  });

  test('tool_choice: a hosted tool becomes auto, a custom tool a function choice; no drops, no header', async () => {
    let m0 = await mark();
    let r = await post({ ...codex('codex-chat', SHELL), stream: false, tool_choice: { type: 'image_generation' } });
    assert.equal(r.status, 200, r.text);
    let [up] = await upstreamBodies('/chat/completions', m0);
    assert.equal(up.tool_choice, 'auto');
    m0 = await mark();
    r = await post({ model: 'codex-chat', input: 'patch it', tools: [SHELL, PATCH], tool_choice: { type: 'custom', name: 'apply_patch' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-switchyard-dropped-tools'), null, 'nothing dropped: no header');
    [up] = await upstreamBodies('/chat/completions', m0);
    assert.deepEqual(up.tool_choice, { type: 'function', function: { name: 'apply_patch' } });
  });

  test('native OpenAI deployment: the tools go up untouched', async () => {
    const m0 = await mark();
    const body = { ...codex('codex-native', NS), stream: false };
    const r = await post(body);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-switchyard-dropped-tools'), null);
    const all = (await mock.requests()).slice(m0).filter((q) => q.path.split('?')[0].endsWith('/responses'));
    assert.equal(all.length, 1);
    assert.ok(all[0].body.includes(JSON.stringify(body.tools)), 'the tools array byte for byte');
  });

  test('attacker: no header injection, malformed tools are 400s in OpenAI shape, the gateway keeps serving', async () => {
    // a hosted tool type with CR/LF or odd bytes is dropped but never written into a header
    let r = await post({ model: 'codex-chat', input: 'x', tools: [SHELL, { type: 'evil\r\nx-injected: 1' }, { type: 'a b' }, { type: 'ok_type' }] });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-injected'), null);
    assert.equal(r.headers.get('x-switchyard-dropped-tools'), 'ok_type');
    // hundreds of hosted tools: the header stays bounded
    const many = Array.from({ length: 300 }, (_, i) => ({ type: `hosted_tool_number_${i}` }));
    r = await post({ model: 'codex-chat', input: 'x', tools: [SHELL, ...many] });
    assert.equal(r.status, 200, r.text);
    const h = r.headers.get('x-switchyard-dropped-tools');
    assert.ok(h && h.length < 200 && h.startsWith('hosted_tool_number_0,'), h);
    const bad = [
      ['namespace without tools', { type: 'namespace', name: 'ns' }],
      ['namespace tools an object', { type: 'namespace', name: 'ns', tools: {} }],
      ['namespace without a name', { type: 'namespace', tools: [] }],
      ['namespace with a hosted tool inside', { type: 'namespace', name: 'ns', tools: [{ type: 'web_search' }] }],
      ['namespace tool without a name', { type: 'namespace', name: 'ns', tools: [{ type: 'function' }] }],
      ['custom tool without a name', { type: 'custom' }],
      ['custom tool with a string format', { type: 'custom', name: 'p', format: 'lark' }],
    ];
    for (const [what, tool] of bad) {
      r = await post({ model: 'codex-chat', input: 'x', tools: [tool] });
      assert.equal(r.status, 400, `${what}: ${r.text}`);
      assert.equal(r.json?.error?.param, 'tools', `${what}: ${r.text}`);
      assert.equal(r.json.error.type, 'invalid_request_error', what);
    }
    for (const [what, item] of [
      ['custom_tool_call input a number', { type: 'custom_tool_call', call_id: 'c', name: 'apply_patch', input: 5 }],
      ['function_call namespace a number', { type: 'function_call', call_id: 'c', name: 'f', namespace: 7, arguments: '{}' }],
    ]) {
      r = await post({ model: 'codex-chat', input: [USER, item] });
      assert.equal(r.status, 400, `${what}: ${r.text}`);
      assert.equal(r.json?.error?.param, 'input', `${what}: ${r.text}`);
    }
    // still serving
    r = await post({ model: 'codex-chat', input: 'still there?' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status, 'completed');
  });
});

// ---- signed thinking through the Responses -> chat bridge --------------------------------
// The mock's Anthropic turns thinking on answers into a signed thinking block and, as the real
// API, refuses a tool loop whose last assistant turn does not start with one (or whose signature
// it did not issue). The blocks ride in the reasoning item's encrypted_content.
describe('signed thinking (codex -> anthropic with a reasoning effort)', () => {
  const PREFIX = 'swy-thinking-1:';
  const blocksOf = (enc) => {
    assert.ok(typeof enc === 'string' && enc.startsWith(PREFIX), `encrypted_content: ${enc}`);
    return JSON.parse(Buffer.from(enc.slice(PREFIX.length), 'base64').toString('utf8'));
  };
  const lastAssistant = (body) => body.messages.filter((m) => m.role === 'assistant').at(-1);
  const RESULT = (id) => ({ type: 'function_call_output', call_id: id, output: 'exit code 0' });
  const turn1 = (extra = {}) => codex('codex-claude', SHELL, { reasoning: { effort: 'high', summary: 'auto' }, ...extra });

  test('streamed: the reasoning item carries the signed block; the next turn replays it before tool_use', async () => {
    let since = await mark();
    let r = await post(turn1());
    assert.equal(r.status, 200, r.text);
    const ev = events(r.text);
    const rsDone = ev.find((e) => e.type === 'response.output_item.done' && e.item.type === 'reasoning');
    assert.ok(rsDone, 'a reasoning item');
    assert.deepEqual(rsDone.item.summary, [{ type: 'summary_text', text: 'Mock thinking.' }]);
    const blocks = blocksOf(rsDone.item.encrypted_content);
    assert.equal(blocks.length, 1);
    assert.equal(blocks[0].type, 'thinking');
    assert.equal(blocks[0].thinking, 'Mock thinking.');
    assert.match(blocks[0].signature, /^mocksig_/);
    const added = ev.find((e) => e.type === 'response.output_item.added' && e.item.type === 'reasoning');
    assert.equal(added.item.encrypted_content, undefined, 'only the finished item has it');
    const fin = ev.at(-1).response;
    assert.equal(fin.output.find((i) => i.type === 'reasoning').encrypted_content, rsDone.item.encrypted_content);
    const call = fin.output.find((i) => i.type === 'function_call');
    assert.ok(call, r.text);
    let up = await upstreamBodies('/v1/messages', since);
    assert.equal(up.length, 1);
    assert.equal(up[0].thinking?.type, 'enabled');

    // turn 2, as Codex sends it (store: false, the whole history)
    since = await mark();
    r = await post({ ...turn1(), input: [USER, rsDone.item, call, RESULT(call.call_id)] });
    assert.equal(r.status, 200, r.text);
    up = await upstreamBodies('/v1/messages', since);
    assert.equal(up.length, 1);
    const asst = lastAssistant(up[0]);
    assert.deepEqual(asst.content[0], { type: 'thinking', thinking: 'Mock thinking.', signature: blocks[0].signature });
    assert.equal(asst.content.at(-1).type, 'tool_use');
    assert.equal(up[0].thinking?.type, 'enabled', 'thinking stays on');
    assert.equal(events(r.text).at(-1).type, 'response.completed', r.text);
  });

  test('JSON answers: encrypted_content on the reasoning item, replayed the same way', async () => {
    let r = await post(turn1({ stream: false }));
    assert.equal(r.status, 200, r.text);
    const rs = r.json.output.find((i) => i.type === 'reasoning');
    const call = r.json.output.find((i) => i.type === 'function_call');
    const sig = blocksOf(rs.encrypted_content)[0].signature;
    const since = await mark();
    r = await post({ ...turn1({ stream: false }), input: [USER, rs, call, RESULT(call.call_id)] });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status, 'completed');
    const [up] = await upstreamBodies('/v1/messages', since);
    assert.equal(lastAssistant(up).content[0].signature, sig);
  });

  test('a reasoning item without our encrypted_content: thinking is dropped for the turn, never a 400', async () => {
    const r1 = await post(turn1({ stream: false }));
    const rs = r1.json.output.find((i) => i.type === 'reasoning');
    const call = r1.json.output.find((i) => i.type === 'function_call');
    for (const enc of [null, 'gAAAAABfernet-token-from-openai==', PREFIX + 'bm90IGpzb24=']) {
      const since = await mark();
      const r = await post({ ...turn1({ stream: false }),
        input: [USER, { ...rs, encrypted_content: enc }, call, RESULT(call.call_id)] });
      assert.equal(r.status, 200, `${enc}: ${r.text}`);
      const [up] = await upstreamBodies('/v1/messages', since);
      assert.equal(up.thinking, undefined, 'thinking off for this request');
      assert.equal(lastAssistant(up).content[0].type, 'tool_use');
    }
  });

  test('store: true and previous_response_id: the stored turn keeps the signature', async () => {
    let r = await post(turn1({ stream: false, store: true }));
    assert.equal(r.status, 200, r.text);
    const sig = blocksOf(r.json.output.find((i) => i.type === 'reasoning').encrypted_content)[0].signature;
    const call = r.json.output.find((i) => i.type === 'function_call');
    const since = await mark();
    r = await post({ ...turn1({ stream: false, store: true }), previous_response_id: r.json.id,
      input: [RESULT(call.call_id)] });
    assert.equal(r.status, 200, r.text);
    const [up] = await upstreamBodies('/v1/messages', since);
    const asst = lastAssistant(up);
    assert.equal(asst.content[0].type, 'thinking');
    assert.equal(asst.content[0].signature, sig);
    assert.equal(up.thinking?.type, 'enabled');
  });
});
