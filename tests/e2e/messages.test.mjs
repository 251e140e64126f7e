// messages.test.mjs - the official Anthropic TypeScript SDK against switchyard's
// Anthropic-format ingress (POST /v1/messages, /v1/messages/count_tokens):
// an anthropic deployment (native pass-through), an OpenAI-compatible one and a
// gemini one (both translated), and the built-in mock model. Plain messages,
// streams through client.messages.stream(), tools with a tool_result round trip,
// token counting, and errors as the SDK's classes with Anthropic's error body.
// No timings are asserted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { startGateway, startMock } from '../lib/harness.mjs';

const KEY = 'sk-e2e-master';
const SENTENCE = 'Hello! This is a deterministic reply from the mock upstream server, used to test and benchmark the gateway.';

let mock, gw, client;

before(async () => {
  mock = await startMock();
  const anth = (m) => `{model: "anthropic/${m}", api_base: "${mock.url}", api_key: sk-ant-test}`;
  const oai = (m) => `{model: "openai/${m}", api_base: "${mock.base}", api_key: sk-x}`;
  const gem = (m) => `{model: "gemini/${m}", api_base: "${mock.url}", api_key: g-test}`;
  gw = await startGateway(`
model_list:
  - model_name: claude
    litellm_params: ${anth('claude-3-5-sonnet-20241022')}
  - model_name: gpt-4o
    litellm_params: ${oai('gpt-4o')}
  - model_name: gemini
    litellm_params: ${gem('gemini-1.5-pro')}
  - model_name: mock-gpt
    litellm_params: {model: mock/mock-gpt}
  - model_name: claude-429
    litellm_params: ${anth('claude-3-5-sonnet-20241022@status=429')}
  - model_name: gpt-4o-429
    litellm_params: ${oai('gpt-4o@status=429')}
  - model_name: gemini-429
    litellm_params: ${gem('gemini-1.5-pro@status=429')}
  - model_name: claude-midstream
    litellm_params: ${anth('claude-3-5-sonnet-20241022@stream_error=overloaded_error,stream_error_after=3')}
  - model_name: gpt-4o-midstream
    litellm_params: ${oai('gpt-4o@stream_error=server_error,stream_error_after=3')}
  - model_name: gemini-midstream
    litellm_params: ${gem('gemini-1.5-pro@stream_error=INTERNAL,stream_error_after=3')}
router_settings:
  num_retries: 0
general_settings:
  master_key: ${KEY}
`);
  client = new Anthropic({ apiKey: KEY, baseURL: gw.url, maxRetries: 0, timeout: 15000 });
});
after(async () => { await gw?.stop(); await mock?.stop(); });

const T = { timeout: 20000 };
const TARGETS = ['claude', 'gpt-4o', 'gemini']; // native, OpenAI-compatible, adapter
const TOOLS = [{
  name: 'get_weather',
  description: 'Current weather in a city',
  input_schema: {
    type: 'object',
    properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['location'],
  },
}];
const ask = (text) => [{ role: 'user', content: text }];

function assertMessage(r, { text = SENTENCE, stop = 'end_turn' } = {}) {
  assert.equal(r.type, 'message', JSON.stringify(r));
  assert.equal(r.role, 'assistant');
  assert.match(r.id, /^msg_/);
  assert.equal(typeof r.model, 'string');
  const texts = r.content.filter((b) => b.type === 'text');
  assert.equal(texts.length, 1, JSON.stringify(r.content));
  if (text === null) assert.ok(texts[0].text.length > 0);
  else assert.equal(texts[0].text, text);
  assert.equal(r.stop_reason, stop);
  assert.ok(r.usage.input_tokens > 0, JSON.stringify(r.usage));
  assert.ok(r.usage.output_tokens > 0, JSON.stringify(r.usage));
}

/** The Anthropic error body as the SDK kept it. */
function assertErrorBody(e, type) {
  assert.ok(e.error && e.error.type === 'error', `body: ${JSON.stringify(e.error)}`);
  assert.equal(typeof e.error.error?.message, 'string');
  assert.ok(e.error.error.message.length > 0);
  if (type) assert.equal(e.error.error.type, type, JSON.stringify(e.error));
}

// ---- plain and streaming --------------------------------------------------------

for (const m of TARGETS) {
  test(`${m}: messages.create`, T, async () => {
    const r = await client.messages.create({ model: m, max_tokens: 256, system: 'You are terse.', messages: ask('Say hello.') });
    assertMessage(r);
  });

  test(`${m}: messages.stream -> finalMessage`, T, async () => {
    let deltas = '';
    const stream = client.messages.stream({ model: m, max_tokens: 256, system: 'You are terse.', messages: ask('Say hello.') });
    stream.on('text', (t) => { deltas += t; });
    const r = await stream.finalMessage();
    assertMessage(r);
    assert.equal(deltas, SENTENCE);
  });

  test(`${m}: max_tokens caps the answer (stop_reason max_tokens)`, T, async () => {
    const r = await client.messages.create({ model: m, max_tokens: 3, messages: ask('Say hello.') });
    assert.equal(r.stop_reason, 'max_tokens', JSON.stringify(r));
    assert.equal(r.content[0].text, 'Hello! This is');
  });

  test(`${m}: tool_use, then a tool_result round trip`, T, async () => {
    const msgs = ask('What is the weather in Paris?');
    const r = await client.messages.create({ model: m, max_tokens: 256, messages: msgs, tools: TOOLS });
    assert.equal(r.stop_reason, 'tool_use', JSON.stringify(r));
    const uses = r.content.filter((b) => b.type === 'tool_use');
    assert.equal(uses.length, 1, JSON.stringify(r.content));
    assert.equal(uses[0].name, 'get_weather');
    assert.match(uses[0].id, /^[A-Za-z0-9_-]+$/);
    assert.equal(typeof uses[0].input, 'object');
    assert.equal(uses[0].input.location, 'Paris');
    const r2 = await client.messages.create({
      model: m, max_tokens: 256, tools: TOOLS,
      messages: [...msgs, { role: 'assistant', content: r.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: uses[0].id, content: '18 degrees celsius' }] }],
    });
    assertMessage(r2);
  });

  test(`${m}: streamed tool_use input assembles into an object`, T, async () => {
    const stream = client.messages.stream({ model: m, max_tokens: 256, messages: ask('What is the weather in Paris?'), tools: TOOLS });
    const r = await stream.finalMessage();
    assert.equal(r.stop_reason, 'tool_use', JSON.stringify(r));
    const use = r.content.find((b) => b.type === 'tool_use');
    assert.ok(use, JSON.stringify(r.content));
    assert.equal(use.name, 'get_weather');
    assert.equal(use.input.location, 'Paris');
  });

  test(`${m}: count_tokens`, T, async () => {
    const a = await client.messages.countTokens({ model: m, messages: ask('Say hello.') });
    assert.ok(a.input_tokens > 0, JSON.stringify(a));
    const b = await client.messages.countTokens({ model: m, system: 'You are a very terse assistant.', messages: ask('Say hello.'), tools: TOOLS });
    assert.ok(b.input_tokens > a.input_tokens, `${b.input_tokens} <= ${a.input_tokens}`);
  });

  test(`${m}: an upstream 429 is the SDK's RateLimitError`, T, async () => {
    await assert.rejects(client.messages.create({ model: `${m}-429`, max_tokens: 16, messages: ask('x') }), (e) => {
      assert.ok(e instanceof Anthropic.RateLimitError, `${e.constructor.name}: ${e.message}`);
      assert.equal(e.status, 429);
      assertErrorBody(e, 'rate_limit_error');
      return true;
    });
    // the same before a stream starts
    await assert.rejects(client.messages.stream({ model: `${m}-429`, max_tokens: 16, messages: ask('x') }).finalMessage(),
      (e) => e instanceof Anthropic.RateLimitError && e.status === 429);
  });

  test(`${m}: a provider error mid-stream ends the SDK stream with an error event`, T, async () => {
    let deltas = '';
    const stream = client.messages.stream({ model: `${m}-midstream`, max_tokens: 256, messages: ask('Say hello.') });
    stream.on('text', (t) => { deltas += t; });
    await assert.rejects(stream.finalMessage(), (e) => {
      assert.ok(e instanceof Anthropic.APIError, `${e.constructor.name}: ${e.message}`);
      assert.equal(e.error?.type, 'error', JSON.stringify(e.error));
      assert.equal(typeof e.error.error?.type, 'string');
      return true;
    });
    assert.ok(SENTENCE.startsWith(deltas), deltas);
  });
}

// ---- the built-in mock model -----------------------------------------------------

test('mock-gpt (built-in): messages.create', T, async () => {
  const r = await client.messages.create({ model: 'mock-gpt', max_tokens: 256, messages: ask('Say hello.') });
  assertMessage(r, { text: null });
});

test('mock-gpt (built-in): messages.stream', T, async () => {
  let deltas = '';
  const stream = client.messages.stream({ model: 'mock-gpt', max_tokens: 256, messages: ask('Say hello.') });
  stream.on('text', (t) => { deltas += t; });
  const r = await stream.finalMessage();
  assertMessage(r, { text: deltas });
  assert.ok(deltas.length > 0);
});

test('mock-gpt (built-in): count_tokens', T, async () => {
  const r = await client.messages.countTokens({ model: 'mock-gpt', messages: ask('Say hello.') });
  assert.ok(r.input_tokens > 0);
});

// ---- errors -----------------------------------------------------------------------

test('unknown model: BadRequestError or NotFoundError with the Anthropic error body', T, async () => {
  await assert.rejects(client.messages.create({ model: 'no-such-model', max_tokens: 16, messages: ask('x') }), (e) => {
    assert.ok(e instanceof Anthropic.BadRequestError || e instanceof Anthropic.NotFoundError, `${e.constructor.name}: ${e.message}`);
    assertErrorBody(e, e.status === 400 ? 'invalid_request_error' : 'not_found_error');
    assert.match(e.error.error.message, /no-such-model/);
    return true;
  });
});

test('the master key as a bearer token (authToken) works too', T, async () => {
  const c = new Anthropic({ apiKey: null, authToken: KEY, baseURL: gw.url, maxRetries: 0, timeout: 15000 });
  const r = await c.messages.create({ model: 'claude', max_tokens: 64, messages: ask('Say hello.') });
  assertMessage(r);
});

test('a wrong key is an AuthenticationError with the Anthropic error body', T, async () => {
  const bad = new Anthropic({ apiKey: 'sk-wrong', baseURL: gw.url, maxRetries: 0, timeout: 15000 });
  await assert.rejects(bad.messages.create({ model: 'claude', max_tokens: 16, messages: ask('x') }), (e) => {
    assert.ok(e instanceof Anthropic.AuthenticationError, `${e.constructor.name}: ${e.message}`);
    assertErrorBody(e, 'authentication_error');
    return true;
  });
});

