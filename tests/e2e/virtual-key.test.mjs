// virtual-key.test.mjs - the official OpenAI Node SDK through a virtual key
// made with /key/generate (issue 9): chat (plain and streaming) and
// embeddings work with it, each call's cost comes back in
// x-litellm-response-cost, a model outside the key's list is the SDK's
// AuthenticationError, and a key over its budget is the SDK's BadRequestError
// (400, LiteLLM's "Budget has been exceeded!").
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { MASTER_KEY, api, keysConfig, startGateway, startMock } from '../lib/harness.mjs';

let mock, gw, key, client;

before(async () => {
  mock = await startMock();
  gw = await startGateway(keysConfig(mock.base));
  const r = await api(gw.url, MASTER_KEY, 'POST', '/key/generate',
    { models: ['priced', 'gpt-4o', 'text-embedding-3-small'], key_alias: 'sdk' });
  assert.equal(r.status, 200, r.text);
  key = r.json.key;
  client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
});
after(async () => { await gw?.stop(); await mock?.stop(); });

test('chat completion with a virtual key; the cost header is usage x price', async () => {
  const { data, response } = await client.chat.completions
    .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello!' }] }).withResponse();
  assert.equal(data.object, 'chat.completion');
  assert.ok(data.choices[0].message.content.length > 0);
  const want = data.usage.prompt_tokens * 2.5e-6 + data.usage.completion_tokens * 1e-5;
  const got = Number(response.headers.get('x-litellm-response-cost'));
  assert.ok(Math.abs(got - want) < 1e-12, `cost ${got} != ${want}`);
});

test('streaming chat completion with a virtual key', async () => {
  const stream = await client.chat.completions.create({
    model: 'priced', stream: true, stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'Count to five.' }],
  });
  let text = '', usage = null;
  for await (const ch of stream) {
    if (ch.usage) usage = ch.usage;
    text += ch.choices[0]?.delta?.content || '';
  }
  assert.ok(text.length > 0);
  assert.ok(usage && usage.completion_tokens > 0);
});

test('embeddings with a virtual key', async () => {
  const r = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['one', 'two'] });
  assert.equal(r.data.length, 2);
  assert.ok(r.data[0].embedding.length > 0);
});

test('a model outside the key\'s models is an AuthenticationError (401)', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'other', messages: [{ role: 'user', content: 'x' }] }),
    (e) => e instanceof OpenAI.AuthenticationError && e.status === 401 && /key not allowed to access model/.test(e.message));
});

test('a key over its budget is a BadRequestError (400 budget_exceeded)', async () => {
  const r = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { max_budget: 0.01 });
  assert.equal(r.status, 200, r.text);
  const c = new OpenAI({ apiKey: r.json.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  // 10 output tokens at 0.001: the whole budget
  const first = await c.chat.completions.create({ model: 'priced', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
  assert.equal(first.usage.completion_tokens, 10);
  await assert.rejects(c.chat.completions.create({ model: 'priced', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.type === 'budget_exceeded'
      && /Budget has been exceeded!/.test(e.message));
});

test('an unknown virtual key is an AuthenticationError (401)', async () => {
  const bad = new OpenAI({ apiKey: 'sk-no-such-key', baseURL: `${gw.url}/v1`, maxRetries: 0 });
  await assert.rejects(bad.chat.completions.create({ model: 'priced', messages: [{ role: 'user', content: 'x' }] }),
    (e) => e instanceof OpenAI.AuthenticationError && /Authentication Error, Invalid proxy server token passed/.test(e.message));
});
