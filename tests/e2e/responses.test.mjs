// responses.test.mjs - the OpenAI Responses API through switchyard with the
// official OpenAI Node SDK (issue 11), for the three ways a group is served:
//
//   group        upstream                         how
//   gpt-native   openai/gpt-4o  -> mock /v1/responses      NATIVE pass-through (ids encoded/decoded)
//   chat-only    hosted_vllm    -> mock /v1/chat/completions  TRANSLATED (responses <-> chat)
//   claude       anthropic      -> mock /v1/messages          TRANSLATED through the Anthropic adapter
//
// For each group: a plain call, instructions + structured input, the SDK's
// stream accumulator (event order, sequence_number), a function tool round
// trip through previous_response_id, text turns chained with
// previous_response_id (checked in the mock's request log: the translated
// groups replay the history, the native one forwards the DECODED id),
// retrieve / input_items / delete, store:false, and the errors a client sees.
// Response ids are LiteLLM's: "resp_" + base64("litellm:custom_llm_provider:
// <p>;model_id:<deployment id>;response_id:<inner id>").
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { assertErrorShape, postJSON, startGateway, startMock } from '../lib/harness.mjs';

const KEY = 'sk-e2e-master';
let mock, gw, client;

// path: where the upstream request of each group lands in the mock's log
const GROUPS = [
  { name: 'gpt-native', native: true, path: '/v1/responses' },
  { name: 'chat-only', native: false, path: '/chat/completions' },
  { name: 'claude', native: false, path: '/v1/messages' },
];

const WEATHER_TOOL = {
  type: 'function', name: 'get_weather', description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

before(async () => {
  mock = await startMock();
  gw = await startGateway(`
model_list:
  - model_name: gpt-native
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-up}
  - model_name: chat-only
    litellm_params: {model: hosted_vllm/qwen, api_base: "${mock.base}", api_key: sk-up}
  - model_name: claude
    litellm_params: {model: anthropic/claude-3-5-sonnet, api_base: "${mock.url}", api_key: sk-up}
general_settings:
  master_key: ${KEY}
`);
  client = new OpenAI({ apiKey: KEY, baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 30000 });
});
after(async () => { await gw.stop(); await mock.stop(); });

let nonceN = 0;
const nonce = (tag) => `${tag}${process.pid}x${++nonceN}`;

/** Decode LiteLLM's encoded response id; asserts its form. */
function decodeId(id) {
  assert.equal(typeof id, 'string');
  assert.ok(id.startsWith('resp_'), `id ${id}`);
  const s = Buffer.from(id.slice(5), 'base64').toString('utf8');
  const m = /^litellm:custom_llm_provider:([^;]+);model_id:([^;]*);response_id:(.+)$/.exec(s);
  assert.ok(m, `not a LiteLLM encoded response id: ${id} -> ${JSON.stringify(s)}`);
  return { provider: m[1], modelId: m[2], responseId: m[3] };
}

/** Upstream requests (oldest first) whose path ends with `part` (query
 * ignored) and whose raw body contains `needle`; each with `json` = parsed body. */
async function upstream(part, needle = '') {
  const all = await mock.requests();
  return all
    .filter((q) => q.path.split('?')[0].endsWith(part) && (q.body || '').includes(needle))
    .map((q) => { let json = null; try { json = JSON.parse(q.body); } catch {} return { ...q, json }; });
}

/** The one upstream request of `g` carrying `needle` (asserts exactly one... or the last of several retries). */
async function upstreamOne(g, needle) {
  const qs = await upstream(g.path, needle);
  assert.ok(qs.length >= 1, `no upstream ${g.path} request with ${needle}: ${JSON.stringify((await mock.requests()).map((q) => q.path))}`);
  assert.ok(qs.at(-1).json, `upstream body is JSON: ${qs.at(-1).body}`);
  return qs.at(-1).json;
}

const outputText = (r) => r.output.filter((o) => o.type === 'message')
  .flatMap((o) => o.content).filter((c) => c.type === 'output_text').map((c) => c.text).join('');

function assertCompleted(r) {
  assert.equal(r.object, 'response');
  assert.equal(r.status, 'completed');
  assert.ok(r.id.startsWith('resp_'), r.id);
  assert.ok(r.usage && r.usage.input_tokens > 0 && r.usage.output_tokens > 0, JSON.stringify(r.usage));
  assert.equal(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens);
}

for (const g of GROUPS) {
  test(`${g.name}: plain responses.create`, async () => {
    const r = await client.responses.create({ model: g.name, input: 'Hello' });
    assertCompleted(r);
    assert.ok(r.output_text.length > 0);
    assert.equal(r.output_text, outputText(r));
    const msg = r.output.find((o) => o.type === 'message');
    assert.equal(msg.role, 'assistant');
    const d = decodeId(r.id);
    if (g.native) {
      assert.equal(d.provider, 'openai');
      assert.match(d.responseId, /^resp_/); // the mock's own id
    } else {
      assert.match(d.responseId, /^resp_[0-9a-f]{32}$/);
    }
  });

  test(`${g.name}: instructions and structured input`, async () => {
    const n = nonce('instr');
    const instructions = `You are terse. ${n}`;
    const r = await client.responses.create({
      model: g.name, instructions,
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
    });
    assertCompleted(r);
    assert.ok(r.output_text.length > 0);
    const up = await upstreamOne(g, n);
    if (g.native) {
      assert.equal(up.model, 'gpt-4o');
      assert.equal(up.instructions, instructions);
      assert.deepEqual(up.input, [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }]);
    } else if (g.name === 'chat-only') {
      assert.equal(up.model, 'qwen');
      assert.equal(up.messages[0].role, 'system');
      assert.ok(JSON.stringify(up.messages[0].content).includes(n));
      const user = up.messages.find((m) => m.role === 'user');
      assert.ok(JSON.stringify(user.content).includes('hi'));
    } else {
      assert.equal(up.model, 'claude-3-5-sonnet');
      assert.ok(JSON.stringify(up.system).includes(n), JSON.stringify(up));
      assert.equal(up.messages[0].role, 'user');
    }
  });

  test(`${g.name}: streaming with the SDK accumulator`, async () => {
    const stream = client.responses.stream({ model: g.name, input: 'Stream a reply, please.' });
    const events = [];
    let deltas = '';
    for await (const ev of stream) {
      events.push(ev);
      if (ev.type === 'response.output_text.delta') deltas += ev.delta;
    }
    const final = await stream.finalResponse();
    const types = events.map((e) => e.type);
    assert.equal(types[0], 'response.created', types.join(','));
    assert.equal(types[1], 'response.in_progress', types.join(','));
    assert.equal(types.at(-1), 'response.completed', types.join(','));
    for (const t of ['response.output_item.added', 'response.content_part.added', 'response.output_text.done',
      'response.content_part.done', 'response.output_item.done']) assert.ok(types.includes(t), `${t} in ${types.join(',')}`);
    assert.ok(types.filter((t) => t === 'response.output_text.delta').length >= 2, types.join(','));
    assert.equal(events[0].sequence_number, 0);
    for (let i = 1; i < events.length; i++) {
      assert.ok(events[i].sequence_number > events[i - 1].sequence_number,
        `sequence_number not increasing at ${i}: ${events.map((e) => e.sequence_number).join(',')}`);
    }
    assert.ok(deltas.length > 0);
    assert.equal(final.output_text, deltas);
    const done = events.find((e) => e.type === 'response.output_text.done');
    assert.equal(done.text, deltas);
    // every lifecycle event carries the same (encoded) id as the final response
    const completed = events.at(-1).response;
    assert.equal(completed.status, 'completed');
    assert.ok(completed.usage && completed.usage.output_tokens > 0 && completed.usage.input_tokens > 0);
    decodeId(final.id);
    for (const e of events.filter((e) => e.response)) assert.equal(e.response.id, final.id, e.type);
  });

  test(`${g.name}: function tool round trip via previous_response_id`, async () => {
    const first = await client.responses.create({
      model: g.name, tools: [WEATHER_TOOL], input: 'What is the weather in Paris? use get_weather',
    });
    assert.equal(first.status, 'completed');
    const fc = first.output.find((o) => o.type === 'function_call');
    assert.ok(fc, `a function_call item: ${JSON.stringify(first.output)}`);
    assert.equal(fc.name, 'get_weather');
    assert.equal(typeof fc.call_id, 'string');
    assert.ok(fc.call_id.length > 0);
    const args = JSON.parse(fc.arguments);
    assert.equal(typeof args, 'object');
    assert.equal(typeof args.city, 'string');

    const n = nonce('tool');
    const second = await client.responses.create({
      model: g.name, tools: [WEATHER_TOOL], previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: fc.call_id, output: '{"temp":20}' }],
      metadata: { tag: n }, // only to find the upstream request (native); translated checked by call id below
    });
    assertCompleted(second);
    assert.ok(second.output.some((o) => o.type === 'message'), JSON.stringify(second.output));
    assert.ok(!second.output.some((o) => o.type === 'function_call'));
    assert.ok(second.output_text.length > 0);

    if (g.native) {
      const up = await upstreamOne(g, n);
      assert.equal(up.previous_response_id, decodeId(first.id).responseId);
      assert.equal(up.input[0].call_id, fc.call_id);
    } else {
      // the replayed history: user question, the assistant's call, the tool's result
      const qs = await upstream(g.path, '{\\"temp\\":20}');
      assert.ok(qs.length >= 1, 'turn 2 upstream request');
      const up = qs.at(-1).json;
      const flat = JSON.stringify(up.messages);
      assert.ok(flat.includes('What is the weather in Paris?'), flat);
      if (g.name === 'chat-only') {
        const asst = up.messages.find((m) => m.role === 'assistant' && m.tool_calls);
        assert.ok(asst, flat);
        assert.equal(asst.tool_calls[0].id, fc.call_id);
        assert.equal(asst.tool_calls[0].function.name, 'get_weather');
        const tool = up.messages.at(-1);
        assert.equal(tool.role, 'tool');
        assert.equal(tool.tool_call_id, fc.call_id);
        assert.ok(JSON.stringify(tool.content).includes('temp'));
      } else {
        const blocks = up.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
        const use = blocks.find((b) => b.type === 'tool_use');
        const res = blocks.find((b) => b.type === 'tool_result');
        assert.ok(use && res, flat);
        assert.equal(use.id, fc.call_id);
        assert.equal(use.name, 'get_weather');
        assert.equal(res.tool_use_id, fc.call_id);
      }
    }
  });

  test(`${g.name}: text turns chained with previous_response_id`, async () => {
    const n1 = nonce('turnone'), n2 = nonce('turntwo');
    const t1 = await client.responses.create({ model: g.name, input: `Remember the word ${n1}.` });
    assertCompleted(t1);
    const t2 = await client.responses.create({ model: g.name, previous_response_id: t1.id, input: `Which word? ${n2}` });
    assertCompleted(t2);
    assert.ok(t2.output_text.length > 0);
    assert.notEqual(t2.id, t1.id);
    const up = await upstreamOne(g, n2);
    if (g.native) {
      const inner = decodeId(t1.id).responseId;
      assert.equal(up.previous_response_id, inner, 'the upstream gets the decoded id');
      assert.notEqual(up.previous_response_id, t1.id);
      assert.match(up.previous_response_id, /^resp_/);
    } else {
      const flat = JSON.stringify(up.messages);
      assert.ok(flat.includes(n1), `turn 1 user text replayed: ${flat}`);
      assert.ok(flat.includes(t1.output_text), `turn 1 answer replayed: ${flat}`);
      const roles = up.messages.map((m) => m.role).filter((r) => r !== 'system');
      assert.deepEqual(roles, ['user', 'assistant', 'user']);
      assert.ok(JSON.stringify(up.messages.at(-1).content).includes(n2));
    }
  });

  test(`${g.name}: retrieve, input_items, delete`, async () => {
    const n = nonce('keep');
    const r = await client.responses.create({ model: g.name, input: `Keep this ${n}` });
    assertCompleted(r);
    const got = await client.responses.retrieve(r.id);
    assert.equal(got.id, r.id);
    assert.equal(got.status, 'completed');
    assert.equal(got.output_text, r.output_text);
    assert.deepEqual(got.output.map((o) => o.type), r.output.map((o) => o.type));

    const items = [];
    for await (const it of client.responses.inputItems.list(r.id)) items.push(it);
    assert.ok(items.length >= 1, JSON.stringify(items));
    const user = items.find((it) => it.role === 'user');
    assert.ok(user, JSON.stringify(items));
    assert.ok(JSON.stringify(user.content).includes(n), JSON.stringify(items));
    assert.ok(typeof user.id === 'string' && user.id.length > 0, 'input items have ids');

    const del = await fetch(`${gw.url}/v1/responses/${encodeURIComponent(r.id)}`, {
      method: 'DELETE', headers: { authorization: `Bearer ${KEY}` },
    });
    assert.equal(del.status, 200);
    const dj = await del.json();
    assert.equal(dj.id, r.id);
    assert.equal(dj.object, 'response');
    assert.equal(dj.deleted, true);
    await assert.rejects(client.responses.retrieve(r.id),
      (e) => e instanceof OpenAI.NotFoundError && e.status === 404);

    if (g.native) { // forwarded with the decoded id
      const inner = decodeId(r.id).responseId;
      const paths = (await mock.requests()).map((q) => `${q.method} ${q.path.split('?')[0]}`);
      assert.ok(paths.includes(`GET /v1/responses/${inner}`), paths.join('\n'));
      assert.ok(paths.includes(`GET /v1/responses/${inner}/input_items`), paths.join('\n'));
      assert.ok(paths.includes(`DELETE /v1/responses/${inner}`), paths.join('\n'));
    }
  });

  test(`${g.name}: client.responses.delete through the SDK`, async () => {
    const r = await client.responses.create({ model: g.name, input: 'Delete me' });
    await client.responses.delete(r.id);
    await assert.rejects(client.responses.retrieve(r.id),
      (e) => e instanceof OpenAI.NotFoundError && e.status === 404 && e.error && typeof e.error.message === 'string');
  });

  if (!g.native) {
    test(`${g.name}: store:false is not retrievable`, async () => {
      const r = await client.responses.create({ model: g.name, input: 'Do not keep this', store: false });
      assertCompleted(r);
      await assert.rejects(client.responses.retrieve(r.id),
        (e) => e instanceof OpenAI.NotFoundError && e.status === 404);
    });
  }
}

test('the route without /v1 works too', async () => {
  const r = await postJSON(`${gw.url}/responses`, { model: 'chat-only', input: 'Hello' }, { authorization: `Bearer ${KEY}` });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.object, 'response');
  assert.ok(r.json.id.startsWith('resp_'));
});

test('an unknown (well-formed) response id is a 404 with an OpenAI error', async () => {
  const r = await client.responses.create({ model: 'chat-only', input: 'Hello' });
  const d = decodeId(r.id);
  const other = `resp_${Buffer.from(`litellm:custom_llm_provider:${d.provider};model_id:${d.modelId};response_id:resp_${'0'.repeat(32)}`).toString('base64')}`;
  await assert.rejects(client.responses.retrieve(other), (e) => e instanceof OpenAI.NotFoundError && e.status === 404);
  const raw = await fetch(`${gw.url}/v1/responses/${encodeURIComponent(other)}`, { headers: { authorization: `Bearer ${KEY}` } });
  assert.equal(raw.status, 404);
  const j = await raw.json();
  assert.ok(j.error && typeof j.error.message === 'string' && 'type' in j.error && 'code' in j.error, JSON.stringify(j));
});

test('unknown model is a 400 BadRequestError with the OpenAI error shape', async () => {
  await assert.rejects(client.responses.create({ model: 'nope', input: 'x' }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && typeof e.message === 'string');
  const r = await postJSON(`${gw.url}/v1/responses`, { model: 'nope', input: 'x' }, { authorization: `Bearer ${KEY}` });
  assertErrorShape(assert, r, 400);
});

test('a web_search tool on a chat-only group without web search is dropped, named in a header, not a 400', async () => {
  const { data, response } = await client.responses
    .create({ model: 'chat-only', input: 'Search the web', tools: [{ type: 'web_search' }] })
    .withResponse();
  assert.equal(data.object, 'response');
  assert.equal(data.status, 'completed');
  assert.equal(response.headers.get('x-switchyard-dropped-tools'), 'web_search');
});

test('a wrong key is a 401', async () => {
  const bad = new OpenAI({ apiKey: 'sk-wrong', baseURL: `${gw.url}/v1`, maxRetries: 0 });
  await assert.rejects(bad.responses.create({ model: 'chat-only', input: 'x' }),
    (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
});
