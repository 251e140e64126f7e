// PII masking, secret detection and tool permissions through the binary
// (guardrails/local/pii.c, secrets.c, tool_permission.c): corpus config 08's
// tool_permission guardrail blocks a Read tool call in an answer (JSON, and a
// stream whose call is split across many SSE events) and lets Bash through;
// pii_masking with output_parse_pii masks what the upstream gets and puts the
// originals back in the answer, JSON and streamed; hide_secrets redacts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, postJSON, MASTER_KEY } from '../lib/harness.mjs';

let mock, gw;

// corpus config 08's guardrail, verbatim (its model is pointed at the mock)
const config08 = `
  - guardrail_name: "tool-permission-guardrail"
    litellm_params:
      guardrail: tool_permission
      mode: "post_call"
      default_on: true  # Apply to all requests by default
      violation_message_template: "this violates our org policy, we don't support executing {tool_name} commands"
      rules:
        - id: "allow_bash"
          tool_name: "Bash"
          decision: "allow"
        - id: "allow_github_mcp"
          tool_name: "mcp__github_*"
          decision: "allow"
        - id: "allow_aws_documentation"
          tool_name: "mcp__aws-documentation_*_documentation"
          decision: "allow"
        - id: "deny_read_commands"
          tool_name: "Read"
          decision: "Deny"
      default_action: "deny"  # deny by default if no rule matches
      on_disallowed_action: "block"  # block by default if no rule matches
`;

const config = (base) => `
model_list:
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o, api_base: "${base}", api_key: sk-up}
  - model_name: claude
    litellm_params: {model: anthropic/claude-3-5-sonnet-20241022, api_base: "${base.replace(/\/v1$/, '')}", api_key: sk-up}
general_settings:
  master_key: ${MASTER_KEY}
guardrails:${config08}
  - guardrail_name: pii
    litellm_params:
      guardrail: pii_masking
      mode: pre_call
      output_parse_pii: true
  - guardrail_name: secrets
    litellm_params:
      guardrail: hide_secrets
      mode: pre_call
`;

before(async () => {
  mock = await startMock();
  gw = await startGateway(config(mock.base));
});
after(async () => { await gw?.stop(); await mock?.stop(); });

const H = { authorization: `Bearer ${MASTER_KEY}` };
const tool = (name) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: { file_path: { type: 'string' } } } } });
const chat = (body) => postJSON(`${gw.url}/v1/chat/completions`, { model: 'gpt', messages: [{ role: 'user', content: 'go' }], ...body }, H);
const lastBody = async () => JSON.parse((await mock.requests()).at(-1).body);
const READ_BLOCKED = "Guardrail raised an exception, Guardrail: tool-permission-guardrail, Message: this violates our org policy, we don't support executing Read commands";

async function raw(p, body) {
  const res = await fetch(`${gw.url}${p}`, { method: 'POST', headers: { ...H, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

// the content deltas of a chat stream, joined
const streamed = (text) => text.split('\n').filter((l) => l.startsWith('data: {'))
  .map((l) => JSON.parse(l.slice(6))).map((e) => e.choices?.[0]?.delta?.content ?? '').join('');

test('config 08: a Read tool call in a JSON answer is blocked with LiteLLM\'s message; Bash passes', async () => {
  const r = await chat({ tools: [tool('Read')] });
  assert.equal(r.status, 400, JSON.stringify(r.json));
  assert.equal(r.json.error.message, READ_BLOCKED);
  assert.equal(r.json.error.code, '400');
  const ok = await chat({ tools: [tool('Bash')] });
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
  assert.equal(ok.json.choices[0].message.tool_calls[0].function.name, 'Bash');
  const gh = await chat({ tools: [tool('mcp__github_create_issue')] });
  assert.equal(gh.status, 200, 'a glob rule of config 08');
  const other = await chat({ tools: [tool('Write')] });
  assert.equal(other.status, 400, 'default_action: deny');
  assert.match(other.json.error.message, /executing Write commands/);
  const plain = await chat({});
  assert.equal(plain.status, 200, 'no tool call: nothing to check');
});

test('config 08 on /v1/messages: a tool_use of Read is refused in the Anthropic shape', async () => {
  const r = await postJSON(`${gw.url}/v1/messages`, { model: 'claude', max_tokens: 50, messages: [{ role: 'user', content: 'go' }],
    tools: [{ name: 'Read', input_schema: { type: 'object', properties: { file_path: { type: 'string' } } } }] }, H);
  assert.equal(r.status, 400, JSON.stringify(r.json));
  assert.equal(r.json.type, 'error');
  assert.equal(r.json.error.message, READ_BLOCKED);
  const ok = await postJSON(`${gw.url}/v1/messages`, { model: 'claude', max_tokens: 50, messages: [{ role: 'user', content: 'go' }],
    tools: [{ name: 'Bash', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }] }, H);
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
  assert.ok(ok.json.content.some((b) => b.type === 'tool_use' && b.name === 'Bash'));
});

test('config 08 on a stream: a tool call split across many SSE events; Read ends the stream with an error event', async () => {
  const ok = await raw('/v1/chat/completions', { model: 'gpt', stream: true, messages: [{ role: 'user', content: 'go' }], tools: [tool('Bash')] });
  assert.equal(ok.status, 200);
  assert.doesNotMatch(ok.text, /"error"/);
  const events = ok.text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
  const pieces = events.map((e) => e.choices?.[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '').filter((a) => a);
  assert.ok(pieces.length > 2, 'the mock sends the arguments in 8-byte pieces');
  assert.deepEqual(JSON.parse(pieces.join('')), { file_path: 'mock' });
  assert.match(ok.text, /"name":"Bash"/);
  assert.match(ok.text, /data: \[DONE\]/);
  const s = await raw('/v1/chat/completions', { model: 'gpt', stream: true, messages: [{ role: 'user', content: 'go' }], tools: [tool('Read')] });
  assert.equal(s.status, 200);
  assert.match(s.text, /"error"/);
  assert.ok(s.text.includes(READ_BLOCKED), s.text);
  assert.doesNotMatch(s.text, /"name":"Read"/, 'the denied call never reaches the client');
  const m = await raw('/v1/messages', { model: 'claude', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'go' }],
    tools: [{ name: 'Read', input_schema: { type: 'object', properties: { file_path: { type: 'string' } } } }] });
  assert.match(m.text, /event: error/);
  assert.doesNotMatch(m.text, /"name":"Read"/);
});

test('pii_masking with output_parse_pii: the upstream gets placeholders, the JSON answer the originals', async () => {
  await mock.reset();
  const r = await chat({ guardrails: ['pii'], messages: [{ role: 'user', content: 'Email jane@corp.io or call 555-123-4567 today' }],
    mock: { content: 'I wrote to <EMAIL_ADDRESS_1> and will call <PHONE_NUMBER_2>.' } });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  const sent = await lastBody();
  assert.equal(sent.messages[0].content, 'Email <EMAIL_ADDRESS_1> or call <PHONE_NUMBER_2> today');
  assert.doesNotMatch(JSON.stringify(sent), /jane@corp\.io|555-123-4567/);
  assert.equal(r.json.choices[0].message.content, 'I wrote to jane@corp.io and will call 555-123-4567.');
  assert.match(r.headers.get('x-litellm-applied-guardrails') ?? '', /pii/);
});

test('pii_masking with output_parse_pii: placeholders in a stream are put back, event by event', async () => {
  // the mock cuts its reply at spaces, one word an event (a placeholder cut inside an
  // event's text is the unit tests' case: test_unmask.c splits at every byte)
  const content = 'Sure: <EMAIL_ADDRESS_1>, then <PHONE_NUMBER_2>, done.';
  for (const api of ['/v1/chat/completions', '/v1/responses']) {
    const body = api === '/v1/responses'
      ? { model: 'gpt', stream: true, guardrails: ['pii'], input: 'mail jane@corp.io, phone 555-123-4567', mock: { content } }
      : { model: 'gpt', stream: true, guardrails: ['pii'], messages: [{ role: 'user', content: 'mail jane@corp.io, phone 555-123-4567' }], mock: { content } };
    const s = await raw(api, body);
    assert.equal(s.status, 200);
    assert.doesNotMatch(s.text, /EMAIL_ADDRESS|PHONE_NUMBER/, api);
    assert.match(s.text, /jane@corp\.io/);
    assert.match(s.text, /555-123-4567/);
    if (api === '/v1/chat/completions')
      assert.equal(streamed(s.text), 'Sure: jane@corp.io, then 555-123-4567, done.');
  }
});

test('pii_masking on /v1/messages and /v1/responses; hide_secrets redacts what the upstream gets', async () => {
  await mock.reset();
  const m = await postJSON(`${gw.url}/v1/messages`, { model: 'claude', max_tokens: 50, guardrails: ['pii'],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'card 4111 1111 1111 1111 please' }] }],
    mock: { content: 'charged <CREDIT_CARD_1>' } }, H);
  assert.equal(m.status, 200, JSON.stringify(m.json));
  assert.equal((await lastBody()).messages[0].content[0].text, 'card <CREDIT_CARD_1> please');
  assert.equal(m.json.content[0].text, 'charged 4111 1111 1111 1111');
  const r = await postJSON(`${gw.url}/v1/responses`, { model: 'gpt', guardrails: ['pii'], input: 'my ip is 10.1.2.3',
    mock: { content: 'noted <IP_ADDRESS_1>' } }, H);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  assert.doesNotMatch(JSON.stringify(await lastBody()), /10\.1\.2\.3/);
  const s = await chat({ guardrails: ['secrets'], messages: [{ role: 'user', content: 'openai_api_key=sk-1234998222 and AKIAIOSFODNN7EXAMPLE' }] });
  assert.equal(s.status, 200, JSON.stringify(s.json));
  assert.equal((await lastBody()).messages[0].content, 'openai_api_key=[REDACTED] and [REDACTED]');
});

test('tool_permission rewrite: the denied call leaves the JSON answer, its error joins the text', async () => {
  const m2 = await startMock();
  const g2 = await startGateway(`
model_list:
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o, api_base: "${m2.base}", api_key: sk-up}
general_settings:
  master_key: ${MASTER_KEY}
guardrails:
  - guardrail_name: rewrite-calls
    litellm_params:
      guardrail: tool_permission
      mode: post_call
      default_on: true
      rules: [{id: deny_read, tool_name: Read, decision: deny}, {id: rest, tool_name: "*", decision: allow}]
      on_disallowed_action: rewrite
  - guardrail_name: rewrite-tools
    litellm_params:
      guardrail: tool_permission
      mode: pre_call
      rules: [{id: deny_read, tool_name: Read, decision: deny}, {id: rest, tool_name: "*", decision: allow}]
      on_disallowed_action: rewrite
litellm_settings:
  guardrails:
    - hide_secrets:
        callbacks: [hide_secrets]
        default_on: true
`);
  try {
    const r = await postJSON(`${g2.url}/v1/chat/completions`, { model: 'gpt', messages: [{ role: 'user', content: 'go' }],
      tools: [tool('Read')] }, H);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const msg = r.json.choices[0].message;
    assert.equal(msg.tool_calls, undefined, 'the Read call left the answer');
    assert.equal(msg.content, "Permission denied: Tool 'Read' denied by rule 'deny_read' (Rule: deny_read)");
    assert.equal(r.json.choices[0].finish_reason, 'stop');
    const b = await postJSON(`${g2.url}/v1/chat/completions`, { model: 'gpt', messages: [{ role: 'user', content: 'go' }],
      tools: [tool('Bash')] }, H);
    assert.equal(b.json.choices[0].message.tool_calls[0].function.name, 'Bash', 'an allowed call stays');
    // a stream has no whole answer to rewrite: its denied call ends it with an error event
    const res = await fetch(`${g2.url}/v1/chat/completions`, { method: 'POST', headers: { ...H, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt', stream: true, messages: [{ role: 'user', content: 'go' }], tools: [tool('Read')] }) });
    const st = await res.text();
    assert.match(st, /"error"/);
    assert.doesNotMatch(st, /"name":"Read"/);
    // pre_call rewrite: the denied tools leave the request; none left: tools goes
    const p = await postJSON(`${g2.url}/v1/chat/completions`, { model: 'gpt', guardrails: ['rewrite-tools'],
      messages: [{ role: 'user', content: 'go' }], tools: [tool('Bash'), tool('Read')] }, H);
    assert.equal(p.status, 200, JSON.stringify(p.json));
    assert.deepEqual(JSON.parse((await m2.requests()).at(-1).body).tools.map((t) => t.function.name), ['Bash']);
    const none = await postJSON(`${g2.url}/v1/chat/completions`, { model: 'gpt', guardrails: ['rewrite-tools'],
      messages: [{ role: 'user', content: 'go' }], tools: [tool('Read')], tool_choice: 'auto' }, H);
    assert.equal(none.status, 200, JSON.stringify(none.json));
    const sent = JSON.parse((await m2.requests()).at(-1).body);
    assert.equal('tools' in sent || 'tool_choice' in sent, false, 'no tool left: tools and tool_choice go');
    // legacy litellm_settings.guardrails (corpus config 13's form): hide_secrets on by default
    const s = await postJSON(`${g2.url}/v1/chat/completions`, { model: 'gpt', messages: [{ role: 'user', content: 'AKIAIOSFODNN7EXAMPLE' }] }, H);
    assert.equal(s.status, 200, JSON.stringify(s.json));
    assert.equal(JSON.parse((await m2.requests()).at(-1).body).messages[0].content, '[REDACTED]');
  } finally {
    await g2.stop();
    await m2.stop();
  }
});
