// tools.test.mjs - tools of type "mcp" inside /v1/responses and
// /v1/chat/completions (stages/mcp_tools.c): switchyard lists the MCP tools,
// gives them to the model as function tools, runs the calls the model makes
// against an SDK-made MCP server, sends the model the results (another round
// of the same call, gateway/proxy.c sy_call_redo) and returns the final answer
// with the MCP items, as JSON or as the dialect's stream.
//
// The model is the C mock upstream: `tool_name=bed-echo` makes it call that
// tool (its one string argument "text" = "mock"), `echo_tool_result` makes it
// answer a tool result with the result's text, `tool_call=1` makes it call the
// tool on every round (the rounds bound).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MASTER_KEY, startGatewayWithMcp, startMcpServer } from './lib.mjs';
import { api, startMock, until } from '../lib/harness.mjs';

let bed, mock, gw;

const MCP_TOOL = { type: 'mcp', server_label: 'bed', server_url: 'litellm_proxy/mcp/bed', require_approval: 'never' };

before(async () => {
  bed = await startMcpServer('http', { tools: ['echo', 'add'] });
  mock = await startMock();
  const model = (name, directives) =>
    `  - model_name: ${name}\n    litellm_params: {model: "openai/gpt-4o@${directives}", api_base: "${mock.base}", api_key: sk-up, input_cost_per_token: 0.000001, output_cost_per_token: 0.000002}`;
  gw = await startGatewayWithMcp({
    servers: { bed },
    keys: [{ key_alias: 'plain' }],
    models: [
      model('m', 'tool_name=bed-echo,echo_tool_result'),
      model('loop', 'tool_name=bed-echo,tool_call=1,echo_tool_result'),
      // a Responses request translated to chat for this one (hosted_vllm has no Responses API)
      `  - model_name: vllm\n    litellm_params: {model: "hosted_vllm/gpt-4o@tool_name=bed-echo,echo_tool_result", api_base: "${mock.base}", api_key: sk-up}`,
    ].join('\n'),
    general: '  switchyard_mcp_max_tool_rounds: 3',
  });
});

after(async () => {
  if (gw) await gw.stop();
  if (mock) await mock.stop();
  if (bed) await bed.stop();
});

async function post(path, body, key = MASTER_KEY) {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30000),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch {}
  return { status: res.status, headers: res.headers, text, json };
}

/** The mock's requests to path since the last reset, bodies parsed. */
async function upstream(path) {
  return (await mock.requests()).filter((r) => r.path.startsWith(path)).map((r) => JSON.parse(r.body));
}

/** SSE text -> [{event, data}] (data parsed; "[DONE]" kept as a string). */
function sse(text) {
  const out = [];
  for (const ev of text.split('\n\n')) {
    if (!ev.trim()) continue;
    const lines = ev.split('\n');
    const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? null;
    const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    out.push({ event, data: data === '[DONE]' ? data : JSON.parse(data) });
  }
  return out;
}

test('Responses, JSON: the tools listed, the model\'s call run against the MCP server, the result fed back', async () => {
  await mock.reset();
  await bed.resetStats();
  const r = await post('/v1/responses', { model: 'm', input: 'say it', tools: [MCP_TOOL, { type: 'function', name: 'mine', parameters: {} }] });
  assert.equal(r.status, 200, r.text);
  const out = r.json.output;
  assert.equal(out[0].type, 'mcp_list_tools');
  assert.equal(out[0].server_label, 'bed');
  assert.deepEqual(out[0].tools.map((t) => t.name).sort(), ['bed-add', 'bed-echo']);
  assert.ok(out[0].tools.every((t) => t.input_schema && typeof t.input_schema === 'object'));
  assert.equal(out[1].type, 'mcp_call');
  assert.equal(out[1].name, 'bed-echo');
  assert.deepEqual(JSON.parse(out[1].arguments), { text: 'mock' });
  assert.equal(out[1].output, 'mock');
  assert.equal(out[1].error, null);
  assert.equal(out[1].server_label, 'bed');
  const msg = out.find((o) => o.type === 'message');
  assert.equal(msg.content[0].text, 'mock', 'the model answered with what the tool returned');
  assert.equal((await bed.stats()).calls.echo, 1);
  // what the model got: round 1 the function tools (no mcp entry, the client's own tool kept), not streamed;
  // round 2 the conversation with the call and its output
  const ups = await upstream('/v1/responses');
  assert.equal(ups.length, 2);
  assert.ok(!ups[0].tools.some((t) => t.type === 'mcp'));
  assert.deepEqual(ups[0].tools.map((t) => t.name).sort(), ['bed-add', 'bed-echo', 'mine']);
  assert.equal(ups[0].tools.find((t) => t.name === 'bed-echo').parameters.type, 'object');
  assert.equal(ups[0].stream, false);
  const items = ups[1].input;
  assert.deepEqual(items[0], { type: 'message', role: 'user', content: 'say it' });
  const call = items.find((i) => i.type === 'function_call');
  const res = items.find((i) => i.type === 'function_call_output');
  assert.equal(call.name, 'bed-echo');
  assert.equal(res.call_id, call.call_id);
  assert.equal(res.output, 'mock');
});

test('Responses on a translated deployment (chat upstream): the same loop through the chat form', async () => {
  await mock.reset();
  const r = await post('/v1/responses', { model: 'vllm', input: [{ role: 'user', content: 'go' }], tools: [MCP_TOOL] });
  assert.equal(r.status, 200, r.text);
  const types = r.json.output.map((o) => o.type);
  assert.deepEqual(types, ['mcp_list_tools', 'mcp_call', 'message']);
  assert.equal(r.json.output[2].content[0].text, 'mock');
  const ups = await upstream('/v1/chat/completions');
  assert.equal(ups.length, 2);
  const last = ups[1].messages.at(-1);
  assert.equal(last.role, 'tool');
  assert.equal(last.content, 'mock');
});

test('Responses, translated: a stored answer with MCP items continues with previous_response_id', async () => {
  await mock.reset();
  const r = await post('/v1/responses', { model: 'vllm', input: 'first', tools: [MCP_TOOL] });
  assert.equal(r.status, 200, r.text);
  let n = null;
  assert.ok(await until(async () => {
    n = await post('/v1/responses', { model: 'vllm', input: 'and then?', previous_response_id: r.json.id });
    return n.status !== 400 || !/not found/.test(n.text);
  }, 10000));
  assert.equal(n.status, 200, n.text);
  const last = (await upstream('/v1/chat/completions')).at(-1);
  assert.equal(last.messages.at(-1).content, 'and then?');
  assert.ok(last.messages.some((m) => m.role === 'assistant' && m.content === 'mock'), 'the earlier answer is in the history');
});

test('Responses, streamed: the MCP events, then the answer, as OpenAI streams them', async () => {
  await mock.reset();
  const r = await post('/v1/responses', { model: 'm', input: 'say it', stream: true, tools: [MCP_TOOL] });
  assert.equal(r.status, 200, r.text);
  assert.match(r.headers.get('content-type'), /text\/event-stream/);
  const ev = sse(r.text);
  ev.forEach((e, i) => { assert.equal(e.data.sequence_number, i); assert.equal(e.data.type, e.event); });
  const types = ev.map((e) => e.event);
  assert.equal(types[0], 'response.created');
  assert.equal(types.at(-1), 'response.completed');
  for (const t of ['response.mcp_list_tools.completed', 'response.mcp_call.completed', 'response.mcp_call_arguments.done',
    'response.output_text.delta']) assert.ok(types.includes(t), t);
  assert.equal(ev.find((e) => e.event === 'response.output_text.delta').data.delta, 'mock');
  const final = ev.at(-1).data.response;
  assert.deepEqual(final.output.map((o) => o.type), ['mcp_list_tools', 'mcp_call', 'message']);
  // every round upstream was held whole
  for (const b of await upstream('/v1/responses')) assert.equal(b.stream, false);
});

test('chat, JSON: the final message with LiteLLM\'s provider_specific_fields', async () => {
  await mock.reset();
  const r = await post('/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'go' }], tools: [MCP_TOOL] });
  assert.equal(r.status, 200, r.text);
  const m = r.json.choices[0].message;
  assert.equal(m.content, 'mock');
  const psf = m.provider_specific_fields;
  assert.deepEqual(psf.mcp_list_tools.map((t) => t.function.name).sort(), ['bed-add', 'bed-echo']);
  assert.equal(psf.mcp_tool_calls.length, 1);
  assert.equal(psf.mcp_tool_calls[0].function.name, 'bed-echo');
  assert.deepEqual(psf.mcp_call_results, [{ tool_call_id: psf.mcp_tool_calls[0].id, result: 'mock' }]);
  const ups = await upstream('/v1/chat/completions');
  assert.equal(ups.length, 2);
  assert.equal(ups[0].tools[0].type, 'function');
  const asst = ups[1].messages[1];
  assert.equal(asst.role, 'assistant');
  assert.equal(asst.tool_calls[0].function.name, 'bed-echo');
  assert.deepEqual(ups[1].messages[2], { role: 'tool', tool_call_id: asst.tool_calls[0].id, content: 'mock' });
});

test('chat, streamed: chunks with the MCP fields in the first and the finishing one, usage when asked, [DONE]', async () => {
  await mock.reset();
  const r = await post('/v1/chat/completions', {
    model: 'm', messages: [{ role: 'user', content: 'go' }], tools: [MCP_TOOL], stream: true, stream_options: { include_usage: true },
  });
  assert.equal(r.status, 200, r.text);
  assert.match(r.headers.get('content-type'), /text\/event-stream/);
  const ev = sse(r.text);
  assert.equal(ev.at(-1).data, '[DONE]');
  const chunks = ev.slice(0, -1).map((e) => e.data);
  assert.ok(chunks[0].choices[0].delta.provider_specific_fields.mcp_list_tools.length >= 2);
  const fin = chunks.find((c) => c.choices[0]?.finish_reason);
  assert.equal(fin.choices[0].delta.provider_specific_fields.mcp_call_results[0].result, 'mock');
  const text = chunks.map((c) => c.choices[0]?.delta?.content || '').join('');
  assert.equal(text, 'mock');
  assert.ok(chunks.at(-1).usage && chunks.at(-1).usage.prompt_tokens > 0, 'the usage chunk');
  for (const b of await upstream('/v1/chat/completions')) {
    assert.notEqual(b.stream, true);
    assert.equal(b.stream_options, undefined);
  }
});

test('approval: the call waits for mcp_approval_response; approved it runs, denied it does not, forged ids are refused', async () => {
  await mock.reset();
  await bed.resetStats();
  const tool = { ...MCP_TOOL, require_approval: 'always' };
  const r = await post('/v1/responses', { model: 'm', input: 'say it', tools: [tool] });
  assert.equal(r.status, 200, r.text);
  const req = r.json.output.find((o) => o.type === 'mcp_approval_request');
  assert.ok(req, JSON.stringify(r.json.output));
  assert.equal(req.name, 'bed-echo');
  assert.equal(req.server_label, 'bed');
  assert.deepEqual(JSON.parse(req.arguments), { text: 'mock' });
  assert.ok(!r.json.output.some((o) => o.type === 'function_call' || o.type === 'mcp_call'));
  assert.equal((await bed.stats()).calls.echo ?? 0, 0, 'nothing ran');
  // approved (the stateless way: the items sent back with the answer)
  const input = [{ role: 'user', content: 'say it' }, req, { type: 'mcp_approval_response', approval_request_id: req.id, approve: true }];
  const a = await post('/v1/responses', { model: 'm', input, tools: [tool] });
  assert.equal(a.status, 200, a.text);
  const call = a.json.output.find((o) => o.type === 'mcp_call');
  assert.equal(call.approval_request_id, req.id);
  assert.equal(call.output, 'mock');
  assert.equal(a.json.output.find((o) => o.type === 'message').content[0].text, 'mock');
  assert.equal((await bed.stats()).calls.echo, 1);
  const up = (await upstream('/v1/responses')).at(-1);
  assert.ok(!up.input.some((i) => (i.type || '').startsWith('mcp_')), 'no MCP item reaches the model');
  assert.equal(up.input.find((i) => i.type === 'function_call_output').output, 'mock');
  // denied: not run, the model is told
  const d = await post('/v1/responses', { model: 'm', input: [{ role: 'user', content: 'x' }, { type: 'mcp_approval_response', approval_request_id: req.id, approve: false }], tools: [tool] });
  assert.equal(d.status, 200, d.text);
  assert.equal((await bed.stats()).calls.echo, 1, 'a denied call does not run');
  assert.match(d.json.output.find((o) => o.type === 'mcp_call').error, /not approve/);
  // an id switchyard did not make
  for (const id of ['mcpr_nope', 'mcpr_' + Buffer.from('{"c":1}').toString('base64'), 'x'.repeat(40)]) {
    const f = await post('/v1/responses', { model: 'm', input: [{ type: 'mcp_approval_response', approval_request_id: id, approve: true }], tools: [tool] });
    assert.equal(f.status, 400, f.text);
    assert.match(f.json.error.message, /approval_request_id/);
  }
  assert.equal((await bed.stats()).calls.echo, 1);
});

test('the rounds are bounded: after switchyard_mcp_max_tool_rounds the model goes without tools', async () => {
  await mock.reset();
  await bed.resetStats();
  const r = await post('/v1/responses', { model: 'loop', input: 'again and again', tools: [MCP_TOOL] });
  assert.equal(r.status, 200, r.text);
  const ups = await upstream('/v1/responses');
  assert.equal(ups.length, 4, 'the first call and three follow-ups');
  assert.ok(ups.slice(0, 3).every((b) => b.tools?.length));
  assert.equal(ups[3].tools, undefined, 'the last round has no tools');
  assert.equal(r.json.output.filter((o) => o.type === 'mcp_call').length, 3);
  assert.equal((await bed.stats()).calls.echo, 3);
  assert.equal(r.json.output.at(-1).type, 'message');
});

test('a key that may not use the server gets a clear error; unknown servers and bad urls too', async () => {
  await mock.reset();
  const r = await post('/v1/responses', { model: 'm', input: 'x', tools: [MCP_TOOL] }, gw.key.plain);
  assert.equal(r.status, 403, r.text);
  assert.match(r.json.error.message, /MCP server 'bed' is not allowed for this key/);
  const c = await post('/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [MCP_TOOL] }, gw.key.plain);
  assert.equal(c.status, 403, c.text);
  const u = await post('/v1/responses', { model: 'm', input: 'x', tools: [{ ...MCP_TOOL, server_url: 'litellm_proxy/mcp/nosuch' }] });
  assert.equal(u.status, 400, u.text);
  assert.match(u.json.error.message, /MCP server 'nosuch' not found/);
  const b = await post('/v1/responses', { model: 'm', input: 'x', tools: [{ ...MCP_TOOL, server_url: 'litellm_proxyX' }] });
  assert.equal(b.status, 400, b.text);
  assert.equal((await upstream('/v1/')).length, 0, 'nothing reached the model');
  // a plain key with every server: the listing is its (empty) share, the call still goes through
  const all = await post('/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [{ ...MCP_TOOL, server_url: 'litellm_proxy' }] }, gw.key.plain);
  assert.equal(all.status, 200, all.text);
  assert.deepEqual(all.json.choices[0].message.provider_specific_fields.mcp_list_tools, []);
});

test('spend: one LLM row with every round\'s tokens and cost summed, one tool-call row per MCP call', async () => {
  await mock.reset();
  const r = await post('/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'count me' }], tools: [MCP_TOOL] });
  assert.equal(r.status, 200, r.text);
  const rowId = r.json.id; // SpendLogs.request_id: the answer's id, as LiteLLM
  // what each round cost, asked of the mock directly with the bodies switchyard sent
  let pt = 0, ct = 0;
  for (const b of await upstream('/v1/chat/completions')) {
    const u = await (await fetch(`${mock.base}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) })).json();
    pt += u.usage.prompt_tokens;
    ct += u.usage.completion_tokens;
  }
  let rows = [];
  assert.ok(await until(async () => {
    const l = await api(gw.url, MASTER_KEY, 'GET', '/spend/logs');
    rows = Array.isArray(l.json) ? l.json : l.json?.data ?? [];
    return rows.some((x) => x.request_id === rowId);
  }, 10000), 'the spend row is written');
  const row = rows.find((x) => x.request_id === rowId);
  assert.equal(row.prompt_tokens, pt);
  assert.equal(row.completion_tokens, ct);
  assert.ok(Math.abs(row.spend - (pt * 0.000001 + ct * 0.000002)) < 1e-9, `${row.spend} vs ${pt}/${ct}`);
  const t0 = Date.parse(row.startTime);
  const tools = rows.filter((x) => x.call_type === 'call_mcp_tool' && Date.parse(x.startTime) >= t0 - 1000);
  assert.ok(tools.length >= 1, 'a row for the tool call');
  assert.equal(tools[0].mcp_namespaced_tool_name ?? tools[0].model, 'bed-echo');
});

test('requests without an mcp tool are untouched', async () => {
  await mock.reset();
  const r = await post('/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'plain mcp words' }], stream: true });
  assert.equal(r.status, 200);
  const ups = await upstream('/v1/chat/completions');
  assert.equal(ups.length, 1);
  assert.equal(ups[0].stream, true);
  // an mcp tool for another server URL goes to the model as it is (LiteLLM)
  await mock.reset();
  const o = await post('/v1/responses', { model: 'm', input: 'x', tools: [{ type: 'mcp', server_label: 'x', server_url: 'https://example.invalid/mcp' }] });
  assert.equal(o.status, 200, o.text);
  assert.equal((await upstream('/v1/responses'))[0].tools[0].type, 'mcp');
});

test('a client that leaves at any point of the loop (a round upstream, the tools, the next round) is let go; the gateway goes on', async () => {
  await mock.reset();
  for (const after of [50, 150, 250, 350, 450]) {
    const ac = new AbortController();
    const t = setTimeout(() => ac.abort(), after);
    await fetch(`${gw.url}/v1/responses`, {
      method: 'POST', signal: ac.signal,
      headers: { authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', input: 'slow', tools: [MCP_TOOL], mock: { delay_ms: 150 } }),
    }).then((r) => r.text()).catch(() => null);
    clearTimeout(t);
  }
  const r = await post('/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'still there?' }], tools: [MCP_TOOL] });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.choices[0].message.content, 'mock');
});
