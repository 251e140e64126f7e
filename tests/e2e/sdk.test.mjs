// sdk.test.mjs - the official OpenAI Node SDK against switchyard, which proxies
// to an OpenAI-compatible upstream (our mock). Chat (plain and streaming),
// embeddings, models, and the errors a client must see.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { chatBody, postJSON, startGateway, startMock } from '../lib/harness.mjs';

const KEY = 'sk-e2e-master';
let mock, gw, client;

before(async () => {
  mock = await startMock();
  gw = await startGateway(`
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-upstream}
  - model_name: text-embedding-3-small
    litellm_params: {model: openai/text-embedding-3-small, api_base: "${mock.base}", api_key: sk-upstream}
general_settings:
  master_key: ${KEY}
  max_request_size_mb: 1
`);
  client = new OpenAI({ apiKey: KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
});
after(async () => { await gw.stop(); await mock.stop(); });

test('chat completion', async () => {
  const r = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello!' }] });
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.ok(r.choices[0].message.content.length > 0);
  assert.ok(r.usage.total_tokens > 0);
});

test('chat completion with raw response headers', async () => {
  const { data, response } = await client.chat.completions
    .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
  assert.equal(data.object, 'chat.completion');
  assert.equal(response.headers.get('x-litellm-model-group'), 'gpt-4o');
  assert.ok(response.headers.get('x-litellm-call-id'));
});

test('streaming chat completion', async () => {
  const stream = await client.chat.completions.create({
    model: 'gpt-4o', stream: true, stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'Count to five.' }],
  });
  let text = '', chunks = 0, usage = null, finish = null;
  for await (const ch of stream) {
    chunks++;
    if (ch.usage) usage = ch.usage;
    const c = ch.choices[0];
    if (c?.delta?.content) text += c.delta.content;
    if (c?.finish_reason) finish = c.finish_reason;
  }
  assert.ok(chunks >= 3);
  assert.ok(text.length > 0);
  assert.equal(finish, 'stop');
  assert.ok(usage && usage.total_tokens > 0);
});

test('embeddings (float and base64)', async () => {
  const r = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['one', 'two'] });
  assert.equal(r.data.length, 2);
  assert.ok(r.data[0].embedding.length > 0);
  assert.equal(typeof r.data[0].embedding[0], 'number');
  const b = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'three', encoding_format: 'base64' });
  assert.equal(typeof b.data[0].embedding, 'string');
});

test('models list and retrieve', async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.deepEqual(ids.sort(), ['gpt-4o', 'text-embedding-3-small']);
  const m = await client.models.retrieve('gpt-4o');
  assert.equal(m.id, 'gpt-4o');
});

test('401 with a wrong key is an AuthenticationError', async () => {
  const bad = new OpenAI({ apiKey: 'sk-wrong', baseURL: `${gw.url}/v1`, maxRetries: 0 });
  await assert.rejects(bad.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
    (e) => e instanceof OpenAI.AuthenticationError && e.status === 401 && /Authentication Error/.test(e.message));
});

test('unknown model is a 400 BadRequestError', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && /Invalid model name/.test(e.message));
});

test('malformed JSON is a 400 with an OpenAI-style error', async () => {
  const r = await postJSON(`${gw.url}/v1/chat/completions`, '{"model":"gpt-4o",', { authorization: `Bearer ${KEY}` });
  assert.equal(r.status, 400);
  assert.equal(r.json.error.code, '400');
  assert.match(r.json.error.message, /Invalid JSON/);
});

test('a body over max_request_size_mb is a 413', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(2 * 1024 * 1024) }] }),
    (e) => e instanceof OpenAI.APIError && e.status === 413);
});

test('upstream rate limit surfaces as RateLimitError', async () => {
  await assert.rejects(client.chat.completions.create({
    model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }],
    // forwarded unchanged to the mock upstream, which answers 429
    mock: { status: 429, retry_after: 0 },
  }), (e) => e instanceof OpenAI.RateLimitError && e.status === 429);
});

test('provider headers come back as LiteLLM sends them; the SDK sees the request id', async () => {
  const { data, response } = await client.chat.completions
    .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
  assert.ok(data._request_id, 'the SDK found no x-request-id');
  assert.equal(response.headers.get('x-request-id'), data._request_id);
  assert.equal(response.headers.get('llm_provider-x-request-id'), data._request_id);
  assert.equal(response.headers.get('x-ratelimit-remaining-requests'), '9999');
  assert.equal(response.headers.get('llm_provider-x-ratelimit-limit-tokens'), '30000000');
  assert.equal(response.headers.get('llm_provider-openai-processing-ms'), '1');
  assert.equal(response.headers.get('llm_provider-content-length'), null);
  // streams carry them too
  const s = await client.chat.completions
    .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }], stream: true }).withResponse();
  assert.ok(s.response.headers.get('x-request-id'));
  for await (const _ of s.data) { /* drain */ }
});
