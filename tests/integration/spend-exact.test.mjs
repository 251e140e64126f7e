// spend-exact.test.mjs - every request priced on what it really used (issue 19,
// items 7, 8, 9): the key's recorded spend and its LiteLLM_SpendLogs rows equal
// the deployment's prices applied to the tokens the mock upstream really served:
//   - JSON answers with the provider's usage, and without any usage (counted:
//     the prompt by the tokenizer, the completion from the returned text);
//   - streams with stream_options.include_usage and without (counted);
//   - a client that leaves mid-stream, or just before the usage chunk or
//     [DONE]: billed for the prompt plus the output streamed so far, the
//     upstream connection closed (the mock sees the stream cut), the row marked;
//   - translated providers (anthropic/, gemini/), JSON, stream and a cut stream;
//   - image generation priced per image and size;
//   - include_cost_in_streaming_usage: the usage chunk carries usage.cost.
// Expected counts come from the mock's own usage where it reports one, and
// otherwise from /utils/token_counter (LiteLLM's token_counter) on the prompt
// and on the text the client received. Runs on SQLite; the cut stream's budget
// settlement also on PostgreSQL (reservations in the database).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  MASTER_KEY, api, postJSON, sha256hex, startGateway, startMock, until,
} from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

const IN = 0.000001, OUT = 0.00002;           // "counted" and the OpenAI-shaped models
const AIN = 0.000003, AOUT = 0.000015;        // anthropic
const GIN = 0.00000125, GOUT = 0.000005;      // gemini
const MESSAGES = [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Say hello, twice.' }];

let mock, gw, gwCost;
// translated deployments take the mock's directives from the model name (the body's "mock" is not forwarded)
const SLOW = 'content=hello,chunks=200,chunk_delay_ms=100';

function config(extraGeneral = '', litellm = '') {
  const p = `input_cost_per_token: ${IN}, output_cost_per_token: ${OUT}`;
  return `
model_list:
  - model_name: counted
    litellm_params: {model: openai/counted, api_base: "${mock.base}", api_key: sk-up, ${p}}
  - model_name: claude
    litellm_params: {model: anthropic/claude-3-5-sonnet-20241022, api_base: "${mock.url}", api_key: sk-ant, input_cost_per_token: ${AIN}, output_cost_per_token: ${AOUT}}
  - model_name: gemini
    litellm_params: {model: gemini/gemini-1.5-pro, api_base: "${mock.url}", api_key: g-test, input_cost_per_token: ${GIN}, output_cost_per_token: ${GOUT}}
  - model_name: ollama-nousage
    litellm_params: {model: "ollama_chat/llama3.1@no_usage", api_base: "${mock.url}", ${p}}
  - model_name: counted-slow
    litellm_params: {model: "openai/counted@${SLOW}", api_base: "${mock.base}", api_key: sk-up, ${p}}
  - model_name: claude-slow
    litellm_params: {model: "anthropic/claude-3-5-sonnet-20241022@${SLOW}", api_base: "${mock.url}", api_key: sk-ant, input_cost_per_token: ${AIN}, output_cost_per_token: ${AOUT}}
  - model_name: gemini-slow
    litellm_params: {model: "gemini/gemini-1.5-pro@${SLOW}", api_base: "${mock.url}", api_key: g-test, input_cost_per_token: ${GIN}, output_cost_per_token: ${GOUT}}
  - model_name: dall-e-3
    litellm_params: {model: openai/dall-e-3, api_base: "${mock.base}", api_key: sk-up}
  - model_name: dall-e-2
    litellm_params: {model: openai/dall-e-2, api_base: "${mock.base}", api_key: sk-up}
general_settings:
  master_key: ${MASTER_KEY}
  proxy_batch_write_at: 0.1
${extraGeneral}
${litellm}
`;
}

before(async () => {
  mock = await startMock();
  gw = await startGateway(config(), { workers: 2 });
  gwCost = await startGateway(config('', 'litellm_settings:\n  include_cost_in_streaming_usage: true'));
});
after(async () => {
  await gw?.stop();
  await gwCost?.stop();
  await mock?.stop();
});

const near = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} != ${b}`);

async function genKey(g = gw, body = {}) {
  const r = await api(g.url, MASTER_KEY, 'POST', '/key/generate', body);
  assert.equal(r.status, 200, r.text);
  return r.json.key;
}
async function keySpend(key, g = gw) {
  const r = await api(g.url, MASTER_KEY, 'GET', `/key/info?key=${key}`);
  assert.equal(r.status, 200, r.text);
  return r.json.info.spend;
}
/** The key's spend rows once there are n of them (bounded wait). */
async function rows(key, n, g = gw) {
  const hash = await sha256hex(key);
  let got = [];
  const ok = await until(async () => {
    const r = await api(g.url, MASTER_KEY, 'GET', `/spend/logs?api_key=${hash}`);
    got = Array.isArray(r.json) ? r.json : [];
    return got.length >= n;
  }, 10000);
  assert.ok(ok, `expected ${n} spend rows, got ${JSON.stringify(got)}`);
  return got;
}
const meta = (row) => (typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata);
async function countPrompt(model, messages = MESSAGES) {
  const r = await postJSON(`${gw.url}/utils/token_counter`, { model, messages }, { authorization: `Bearer ${MASTER_KEY}` });
  assert.equal(r.status, 200, r.text);
  return r.json.total_tokens;
}
async function countText(model, text) {
  const r = await postJSON(`${gw.url}/utils/token_counter`, { model, prompt: text }, { authorization: `Bearer ${MASTER_KEY}` });
  assert.equal(r.status, 200, r.text);
  return r.json.total_tokens;
}
async function mockStats() {
  return (await fetch(`${mock.url}/__mock/stats`)).json();
}
/** The key's spend and its one row equal the expected tokens x prices. */
async function assertBilled(key, { prompt, completion, inRate, outRate, source, cut = false, g = gw }) {
  const want = prompt * inRate + completion * outRate;
  const [row] = await rows(key, 1, g);
  assert.equal(row.prompt_tokens, prompt, JSON.stringify(row));
  assert.equal(row.completion_tokens, completion, JSON.stringify(row));
  near(row.spend, want, 'row spend');
  const m = meta(row);
  assert.equal(m.usage_source, source, JSON.stringify(m));
  assert.equal(m.stream_cut === true, cut, JSON.stringify(m));
  assert.ok(await until(async () => Math.abs((await keySpend(key, g)) - want) < 1e-12, 10000),
    `key spend ${await keySpend(key, g)} != ${want}`);
  return row;
}

/** Stream a chat; stop (abort) when stopAt(events, text) says so. Returns {events, text, usage}. */
async function streamChat(key, body, { stopAt = null, g = gw } = {}) {
  const ac = new AbortController();
  const res = await fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST', signal: ac.signal,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ messages: MESSAGES, stream: true, ...body }),
  });
  assert.equal(res.status, 200);
  const out = { events: [], text: '', usage: null, done: false, cut: false };
  const dec = new TextDecoder();
  let buf = '';
  try {
    for await (const piece of res.body) {
      buf += dec.decode(piece, { stream: true });
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const ev = buf.slice(0, i); buf = buf.slice(i + 2);
        const data = ev.split('\n').find((l) => l.startsWith('data: '))?.slice(6);
        if (!data) continue;
        if (data === '[DONE]') { out.done = true; continue; }
        const j = JSON.parse(data);
        out.events.push(j);
        for (const ch of j.choices || []) out.text += ch.delta?.content || '';
        if (j.usage) out.usage = j.usage;
        if (stopAt && stopAt(out, j)) { out.cut = true; ac.abort(); return out; }
      }
    }
  } catch (e) {
    if (!out.cut) throw e;
  }
  return out;
}
const contentEvents = (out) => out.events.filter((e) => e.choices?.[0]?.delta?.content).length;

describe('OpenAI-compatible deployment', () => {
  test('JSON with the provider\'s usage: priced from it, usage_source "provider"', async () => {
    const key = await genKey();
    const r = await postJSON(`${gw.url}/v1/chat/completions`, { model: 'counted', messages: MESSAGES },
      { authorization: `Bearer ${key}` });
    assert.equal(r.status, 200, r.text);
    const u = r.json.usage;
    near(Number(r.headers.get('x-litellm-response-cost')), u.prompt_tokens * IN + u.completion_tokens * OUT, 'header');
    await assertBilled(key, { prompt: u.prompt_tokens, completion: u.completion_tokens, inRate: IN, outRate: OUT, source: 'provider' });
  });

  test('JSON without usage: the prompt and the returned text are counted and priced', async () => {
    const key = await genKey();
    const r = await postJSON(`${gw.url}/v1/chat/completions`,
      { model: 'counted', messages: MESSAGES, mock: { no_usage: true } }, { authorization: `Bearer ${key}` });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.usage, undefined, 'the mock sent no usage');
    const prompt = await countPrompt('counted');
    const completion = await countText('counted', r.json.choices[0].message.content);
    assert.ok(prompt > 5 && completion >= 18, `${prompt} ${completion}`);
    near(Number(r.headers.get('x-litellm-response-cost')), prompt * IN + completion * OUT, 'header');
    await assertBilled(key, { prompt, completion, inRate: IN, outRate: OUT, source: 'counted' });
  });

  test('stream with include_usage: priced from the usage chunk', async () => {
    const key = await genKey();
    const out = await streamChat(key, { model: 'counted', stream_options: { include_usage: true } });
    assert.ok(out.done && out.usage, JSON.stringify(out.events.at(-1)));
    assert.equal(out.usage.cost, undefined, 'no cost unless include_cost_in_streaming_usage');
    await assertBilled(key, { prompt: out.usage.prompt_tokens, completion: out.usage.completion_tokens,
      inRate: IN, outRate: OUT, source: 'provider' });
  });

  test('stream without include_usage (the openai SDK default): counted and priced', async () => {
    const key = await genKey();
    const out = await streamChat(key, { model: 'counted', mock: { content: 'hello', chunks: 30 } });
    assert.ok(out.done && !out.usage);
    const completion = await countText('counted', out.text);
    assert.equal(completion, 30, out.text);
    await assertBilled(key, { prompt: await countPrompt('counted'), completion, inRate: IN, outRate: OUT, source: 'counted' });
  });

  test('include_usage asked but the upstream sends none: counted', async () => {
    const key = await genKey();
    const out = await streamChat(key, { model: 'counted', stream_options: { include_usage: true },
      mock: { content: 'hello', chunks: 7, no_usage: true } });
    assert.ok(out.done);
    await assertBilled(key, { prompt: await countPrompt('counted'), completion: 7, inRate: IN, outRate: OUT, source: 'counted' });
  });

  test('a client that leaves mid-stream pays the prompt and what was streamed; the upstream is closed', async () => {
    await mock.reset();
    // a budget: the reservation taken before the call settles to the cost of what was streamed
    const key = await genKey(gw, { max_budget: 5 });
    const out = await streamChat(key, { model: 'counted', stream_options: { include_usage: true },
      mock: { content: 'hello', chunks: 200, chunk_delay_ms: 100 } }, { stopAt: (o) => contentEvents(o) >= 5 });
    assert.ok(out.cut && !out.done);
    // the mock sees its reader leave and stops: not all 200 content chunks were generated
    assert.ok(await until(async () => (await mockStats()).streams_cut === 1, 10000), JSON.stringify(await mockStats()));
    const st = await mockStats();
    assert.equal(st.streams_completed, 0, JSON.stringify(st));
    const generated = st.last_stream_segments_sent - 1; // segment 0: head + role chunk
    assert.ok(generated >= 5 && generated < 200, JSON.stringify(st));
    const [row] = await rows(key, 1);
    assert.equal(row.status, 'failure');
    assert.ok(row.completion_tokens >= 5 && row.completion_tokens <= generated,
      `billed ${row.completion_tokens} output tokens; client saw 5, upstream made ${generated}`);
    await assertBilled(key, { prompt: await countPrompt('counted'), completion: row.completion_tokens,
      inRate: IN, outRate: OUT, source: 'counted', cut: true });
    // nothing is left reserved: the key's next call is billed on top of exactly that
    const r = await postJSON(`${gw.url}/v1/chat/completions`, { model: 'counted', messages: MESSAGES },
      { authorization: `Bearer ${key}` });
    assert.equal(r.status, 200, r.text);
    const want = row.spend + r.json.usage.prompt_tokens * IN + r.json.usage.completion_tokens * OUT;
    assert.ok(await until(async () => Math.abs((await keySpend(key)) - want) < 1e-12, 10000),
      `key spend ${await keySpend(key)} != ${want}`);
  });

  for (const usage of [true, false]) {
    test(`a client that leaves just before ${usage ? 'the usage chunk' : '[DONE]'} pays for the whole answer`, async () => {
      const key = await genKey();
      const out = await streamChat(key, { model: 'counted', ...(usage ? { stream_options: { include_usage: true } } : {}),
        mock: { content: 'hello', chunks: 6, chunk_delay_ms: 150 } },
      { stopAt: (o, ev) => ev.choices?.[0]?.finish_reason });
      assert.ok(out.cut && !out.usage && !out.done);
      await assertBilled(key, { prompt: await countPrompt('counted'), completion: 6, inRate: IN, outRate: OUT,
        source: 'counted', cut: true });
    });
  }
});

describe('translated providers', () => {
  for (const [model, inRate, outRate] of [['claude', AIN, AOUT], ['gemini', GIN, GOUT]]) {
    test(`${model}: JSON priced from the provider's usage`, async () => {
      const key = await genKey();
      const r = await postJSON(`${gw.url}/v1/chat/completions`, { model, messages: MESSAGES }, { authorization: `Bearer ${key}` });
      assert.equal(r.status, 200, r.text);
      const u = r.json.usage;
      assert.equal(u.completion_tokens, 18);
      assert.ok(u.prompt_tokens > 0);
      near(Number(r.headers.get('x-litellm-response-cost')), u.prompt_tokens * inRate + 18 * outRate, 'header');
      await assertBilled(key, { prompt: u.prompt_tokens, completion: 18, inRate, outRate, source: 'provider' });
    });

    test(`${model}: a stream without include_usage is priced from the provider's usage`, async () => {
      const key = await genKey();
      const ref = await postJSON(`${gw.url}/v1/chat/completions`, { model, messages: MESSAGES },
        { authorization: `Bearer ${await genKey()}` });
      const out = await streamChat(key, { model });
      assert.ok(out.done && !out.usage);
      await assertBilled(key, { prompt: ref.json.usage.prompt_tokens, completion: 18, inRate, outRate, source: 'provider' });
    });

    test(`${model}: a client that leaves mid-stream pays the prompt and what was streamed`, async () => {
      await mock.reset();
      const key = await genKey();
      const out = await streamChat(key, { model: `${model}-slow` }, { stopAt: (o) => contentEvents(o) >= 4 });
      assert.ok(out.cut);
      assert.ok(await until(async () => (await mockStats()).streams_cut === 1, 10000), JSON.stringify(await mockStats()));
      const st = await mockStats();
      assert.equal(st.streams_completed, 0);
      const [row] = await rows(key, 1);
      assert.ok(row.completion_tokens >= 4 && row.completion_tokens < 200, JSON.stringify(row));
      // the prompt: the provider's count when it gave one before the end (Anthropic's message_start), else ours
      const prompt = model === 'claude'
        ? (await postJSON(`${gw.url}/v1/chat/completions`, { model, messages: MESSAGES },
          { authorization: `Bearer ${await genKey()}` })).json.usage.prompt_tokens
        : await countPrompt(model);
      await assertBilled(key, { prompt, completion: row.completion_tokens, inRate, outRate, source: 'counted', cut: true });
    });
  }
});

describe('image generation', () => {
  // LiteLLM's price map: DALL-E priced per pixel by size (and quality for dall-e-3)
  const cases = [
    ['dall-e-3', {}, 1024 * 1024 * 3.81469e-08],                                   // standard, 1024x1024: $0.04
    ['dall-e-3', { n: 2, size: '1024x1792', quality: 'hd' }, 2 * 1024 * 1792 * 6.539e-08],
    ['dall-e-3', { size: '1792x1024', quality: 'standard' }, 1792 * 1024 * 4.359e-08],
    ['dall-e-2', { n: 3, size: '512x512' }, 3 * 512 * 512 * 6.86e-08],
    ['dall-e-2', { size: '256x256' }, 256 * 256 * 2.4414e-07],
  ];
  for (const [model, extra, want] of cases) {
    test(`${model} ${JSON.stringify(extra)}: $${want.toFixed(4)}`, async () => {
      const key = await genKey();
      const r = await postJSON(`${gw.url}/v1/images/generations`, { model, prompt: 'a lighthouse', ...extra },
        { authorization: `Bearer ${key}` });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.data.length, extra.n ?? 1);
      const [row] = await rows(key, 1);
      assert.equal(row.call_type, 'aimage_generation');
      near(row.spend, want, 'row spend');
      assert.ok(await until(async () => Math.abs((await keySpend(key)) - want) < 1e-12, 10000),
        `key spend ${await keySpend(key)} != ${want}`);
    });
  }
});

describe('include_cost_in_streaming_usage', () => {
  const withCost = (key, body) => streamChat(key, { stream_options: { include_usage: true }, ...body }, { g: gwCost });
  test('the usage chunk carries usage.cost = the billed cost (pass-through)', async () => {
    const key = await genKey(gwCost);
    const out = await withCost(key, { model: 'counted' });
    assert.ok(out.done && out.usage, JSON.stringify(out.events.at(-1)));
    const u = out.usage;
    near(u.cost, u.prompt_tokens * IN + u.completion_tokens * OUT, 'usage.cost');
    const row = await assertBilled(key, { prompt: u.prompt_tokens, completion: u.completion_tokens, inRate: IN, outRate: OUT,
      source: 'provider', g: gwCost });
    near(row.spend, u.cost, 'row spend = usage.cost');
    // only the usage chunk has it
    for (const ev of out.events.slice(0, -1)) assert.equal(ev.usage ?? null, null, JSON.stringify(ev));
  });

  test('a usage chunk split across reads (trickled) still gets its cost, the stream intact', async () => {
    const key = await genKey(gwCost);
    const out = await withCost(key, { model: 'counted', mock: { chunks: 3, trickle_bytes_per_s: 4000 } });
    assert.ok(out.done && out.usage);
    assert.equal(out.text, 'Hello! This is');
    near(out.usage.cost, out.usage.prompt_tokens * IN + out.usage.completion_tokens * OUT, 'usage.cost');
  });

  test('without include_usage no usage chunk is added; a translated stream\'s usage chunk has the cost', async () => {
    const key = await genKey(gwCost);
    const plain = await streamChat(key, { model: 'counted' }, { g: gwCost });
    assert.ok(plain.done && !plain.usage);
    const out = await withCost(key, { model: 'claude' });
    assert.ok(out.done && out.usage);
    near(out.usage.cost, out.usage.prompt_tokens * AIN + out.usage.completion_tokens * AOUT, 'usage.cost');
  });

  for (const [model, inRate, outRate] of [['claude', AIN, AOUT], ['counted', IN, OUT]]) {
    test(`/v1/messages to ${model}: message_delta's usage carries the billed cost`, async () => {
      const key = await genKey(gwCost);
      const res = await fetch(`${gwCost.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model, max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Say hello, twice.' }] }),
      });
      assert.equal(res.status, 200);
      const events = (await res.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
      const delta = events.find((e) => e.type === 'message_delta');
      assert.ok(delta?.usage, JSON.stringify(events.map((e) => e.type)));
      assert.equal(typeof delta.usage.cost, 'number', JSON.stringify(delta));
      for (const e of events.filter((x) => x.type !== 'message_delta')) assert.equal(e.usage?.cost, undefined);
      const [row] = await rows(key, 1, gwCost);
      near(delta.usage.cost, row.spend, 'message_delta usage.cost = row spend');
      near(row.spend, row.prompt_tokens * inRate + row.completion_tokens * outRate, 'row spend');
      assert.equal(row.completion_tokens, 18);
    });
  }

  test('off by default: no cost in the usage chunk', async () => {
    const key = await genKey();
    const out = await streamChat(key, { model: 'claude', stream_options: { include_usage: true } });
    assert.ok(out.usage);
    assert.equal(out.usage.cost, undefined);
  });
});

describe('a translated provider that reports no usage (Ollama without its counts)', () => {
  test('JSON: counted, priced, and the answer\'s usage carries the counts', async () => {
    const key = await genKey();
    const r = await postJSON(`${gw.url}/v1/chat/completions`, { model: 'ollama-nousage', messages: MESSAGES },
      { authorization: `Bearer ${key}` });
    assert.equal(r.status, 200, r.text);
    const prompt = await countPrompt('ollama-nousage');
    const completion = await countText('ollama-nousage', r.json.choices[0].message.content);
    assert.ok(prompt > 0 && completion > 0);
    assert.deepEqual(r.json.usage, { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });
    near(Number(r.headers.get('x-litellm-response-cost')), prompt * IN + completion * OUT, 'header');
    await assertBilled(key, { prompt, completion, inRate: IN, outRate: OUT, source: 'counted' });
  });

  test('stream: counted; the usage chunk carries the counts', async () => {
    const key = await genKey();
    const out = await streamChat(key, { model: 'ollama-nousage', stream_options: { include_usage: true } });
    assert.ok(out.done && out.usage);
    const prompt = await countPrompt('ollama-nousage');
    const completion = await countText('ollama-nousage', out.text);
    assert.equal(out.usage.prompt_tokens, prompt);
    assert.equal(out.usage.completion_tokens, completion);
    await assertBilled(key, { prompt, completion, inRate: IN, outRate: OUT, source: 'counted' });
  });
});

describe('ingress APIs', () => {
  const H = (key) => ({ authorization: `Bearer ${key}`, 'anthropic-version': '2023-06-01' });
  const cases = [
    ['/v1/messages', 'claude', AIN, AOUT, false], ['/v1/messages', 'claude', AIN, AOUT, true],
    ['/v1/messages', 'counted', IN, OUT, false], ['/v1/messages', 'counted', IN, OUT, true],
    ['/v1/responses', 'counted', IN, OUT, false], ['/v1/responses', 'counted', IN, OUT, true],
    ['/v1/responses', 'claude', AIN, AOUT, false], ['/v1/responses', 'claude', AIN, AOUT, true],
  ];
  for (const [path, model, inRate, outRate, stream] of cases) {
    test(`${path} to ${model}${stream ? ', streamed' : ''}: priced from the whole answer's usage`, async () => {
      const key = await genKey();
      const body = path === '/v1/messages'
        ? { model, max_tokens: 100, messages: [{ role: 'user', content: 'Say hello, twice.' }], stream }
        : { model, input: 'Say hello, twice.', stream };
      const r = await postJSON(`${gw.url}${path}`, body, H(key));
      assert.equal(r.status, 200, r.text);
      // the stream's head carries no cost: the usage seen by then (message_start) is not the call's
      if (stream) assert.equal(r.headers.get('x-litellm-response-cost'), null);
      const [row] = await rows(key, 1);
      assert.equal(row.completion_tokens, 18, JSON.stringify(row));
      assert.ok(row.prompt_tokens > 0);
      await assertBilled(key, { prompt: row.prompt_tokens, completion: 18, inRate, outRate, source: 'provider' });
    });
  }
});

describe('ingress APIs: a client that leaves mid-stream', () => {
  /** Stream path with body; abort after n text deltas (Anthropic content_block_delta, Responses output_text.delta). */
  async function cutAfter(key, path, body, n) {
    const ac = new AbortController();
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST', signal: ac.signal, body: JSON.stringify({ ...body, stream: true }),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'anthropic-version': '2023-06-01' },
    });
    assert.equal(res.status, 200);
    let seen = 0, buf = '';
    const dec = new TextDecoder();
    try {
      for await (const piece of res.body) {
        buf += dec.decode(piece, { stream: true });
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const ev = buf.slice(0, i); buf = buf.slice(i + 2);
          const data = ev.split('\n').find((l) => l.startsWith('data: '))?.slice(6);
          if (!data) continue;
          const t = JSON.parse(data).type;
          if (t === 'content_block_delta' || t === 'response.output_text.delta') seen++;
          if (seen >= n) { ac.abort(); return seen; }
        }
      }
    } catch (e) {
      if (seen < n) throw e;
    }
    return seen;
  }
  const cases = [
    ['/v1/messages', 'claude-slow', AIN, AOUT], ['/v1/messages', 'counted-slow', IN, OUT],
    ['/v1/responses', 'counted-slow', IN, OUT], ['/v1/responses', 'claude-slow', AIN, AOUT],
  ];
  for (const [path, model, inRate, outRate] of cases) {
    test(`${path} to ${model}: billed for the prompt and the output streamed so far`, async () => {
      await mock.reset();
      const key = await genKey();
      const body = path === '/v1/messages'
        ? { model, max_tokens: 100, messages: [{ role: 'user', content: 'Say hello, twice.' }] }
        : { model, input: 'Say hello, twice.' };
      assert.equal(await cutAfter(key, path, body, 4), 4);
      assert.ok(await until(async () => (await mockStats()).streams_cut === 1, 10000), JSON.stringify(await mockStats()));
      const [row] = await rows(key, 1);
      assert.ok(row.prompt_tokens > 0, JSON.stringify(row));
      assert.ok(row.completion_tokens >= 4 && row.completion_tokens < 200, JSON.stringify(row));
      await assertBilled(key, { prompt: row.prompt_tokens, completion: row.completion_tokens, inRate, outRate,
        source: 'counted', cut: true });
    });
  }
});

describe('on PostgreSQL', () => {
  let pg, gwPg;
  before(async () => {
    pg = await startPostgres();
    gwPg = await startGateway(config(`  database_url: "${await pg.createDb('spend_exact')}"`));
  });
  after(async () => {
    await gwPg?.stop();
    await pg?.stop();
  });

  test('a cut stream settles the budget reservation to what was streamed', async () => {
    const key = await genKey(gwPg, { max_budget: 5 });
    const out = await streamChat(key, { model: 'counted', mock: { content: 'hello', chunks: 200, chunk_delay_ms: 100 } },
      { stopAt: (o) => contentEvents(o) >= 3, g: gwPg });
    assert.ok(out.cut);
    const [row] = await rows(key, 1, gwPg);
    assert.ok(row.completion_tokens >= 3 && row.completion_tokens < 200, JSON.stringify(row));
    await assertBilled(key, { prompt: await countPrompt('counted'), completion: row.completion_tokens,
      inRate: IN, outRate: OUT, source: 'counted', cut: true, g: gwPg });
  });
});
