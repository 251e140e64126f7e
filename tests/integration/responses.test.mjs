// responses.test.mjs - the Responses API and the pass-through endpoints of
// issue 11 from the attacker's and the operator's side (the SDK happy paths
// are tests/e2e/responses.test.mjs and endpoints.test.mjs):
//
//   section                what is checked
//   bad input              malformed / duplicate-key / wrong-typed bodies, item_reference
//                          on translated groups, bad previous_response_id:
//                          OpenAI-shaped 400s, and the gateway keeps serving
//   escaped keys / size    "mod\u0065l" is `model`; a 4 MB input translated and native;
//                          a body over max_request_size_mb is 413
//   streaming              deltas arrive as the upstream sends them (timed), consecutive
//                          sequence_numbers, UTF-8 cut across upstream writes reassembled,
//                          a client that vanishes, an upstream error mid-stream
//   stored conversations   SQLite across a restart; PostgreSQL shared by two instances
//                          ("SwitchyardResponse" row); ownership between virtual keys
//   pass-through           multipart checks, unknown model, adapter providers, files
//                          routing, speech client gone, upstream 4xx not a cooldown
//   built-in mock          /v1/responses against mock/ deployments and the default config
//
// Groups (the mock's directives ride on the upstream model name, docs/testing-mock.md):
//   gpt-native  openai/gpt-4o      NATIVE     chat-only  hosted_vllm/qwen  TRANSLATED
//   *-slow      chunks=6, chunk_delay_ms=80   chat-utf8  split_utf8=1      chat-err  stream_error
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  MASTER_KEY, api, assertErrorShape, keysConfig, postJSON, rawRequest, sleep, startGateway, startMock, tmpdir, until,
} from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';
import { genKey, parseSSE } from '../lib/limits.mjs';

let mock;
before(async () => { mock = await startMock(); });
after(async () => { await mock?.stop(); });

const UTF8_TEXT = 'Héllo! Thïs is a déterministic reply from the mock 上游 server, used to tëst and benchmark the gateway 🚀';

/** The model_list lines of the main config (mockBase = <mock>/v1, mockUrl = <mock>). */
function modelList(mockBase, mockUrl) {
  return `
model_list:
  - model_name: gpt-native
    litellm_params: {model: openai/gpt-4o, api_base: "${mockBase}", api_key: sk-up}
  - model_name: chat-only
    litellm_params: {model: hosted_vllm/qwen, api_base: "${mockBase}", api_key: sk-up}
  - model_name: claude
    litellm_params: {model: anthropic/claude-3-5-sonnet, api_base: "${mockUrl}", api_key: sk-up}
  - model_name: native-slow
    litellm_params: {model: "openai/gpt-4o@chunks=6,chunk_delay_ms=80", api_base: "${mockBase}", api_key: sk-up}
  - model_name: chat-slow
    litellm_params: {model: "hosted_vllm/qwen@chunks=6,chunk_delay_ms=80", api_base: "${mockBase}", api_key: sk-up}
  - model_name: native-long
    litellm_params: {model: "openai/gpt-4o@chunks=40,chunk_delay_ms=50", api_base: "${mockBase}", api_key: sk-up}
  - model_name: chat-long
    litellm_params: {model: "hosted_vllm/qwen@chunks=40,chunk_delay_ms=50", api_base: "${mockBase}", api_key: sk-up}
  - model_name: chat-utf8
    litellm_params: {model: "hosted_vllm/qwen@split_utf8=1", api_base: "${mockBase}", api_key: sk-up}
  - model_name: chat-err
    litellm_params: {model: "hosted_vllm/qwen@stream_error=server_error,stream_error_after=2", api_base: "${mockBase}", api_key: sk-up}
  - model_name: dall-e-3
    litellm_params: {model: openai/dall-e-3, api_base: "${mockBase}", api_key: sk-up}
    model_info: {mode: image_generation}
  - model_name: whisper
    litellm_params: {model: openai/whisper-1, api_base: "${mockBase}", api_key: sk-up}
    model_info: {mode: audio_transcription}
  - model_name: tts
    litellm_params: {model: openai/tts-1, api_base: "${mockBase}", api_key: sk-up}
    model_info: {mode: audio_speech}
  - model_name: tts-slow
    litellm_params: {model: "openai/tts-1@chunk_delay_ms=100", api_base: "${mockBase}", api_key: sk-up}
  - model_name: files-b
    litellm_params: {model: openai/gpt-4o-mini, api_base: "${mockBase}", api_key: sk-files-b}
`;
}

/** Decode LiteLLM's encoded response id -> {provider, modelId, responseId}. */
function decodeId(id) {
  assert.equal(typeof id, 'string', `id ${id}`);
  assert.ok(id.startsWith('resp_'), `id ${id}`);
  const s = Buffer.from(id.slice(5), 'base64').toString('utf8');
  const m = /^litellm:custom_llm_provider:([^;]+);model_id:([^;]*);response_id:(.+)$/.exec(s);
  assert.ok(m, `not an encoded id: ${id} -> ${JSON.stringify(s)}`);
  return { provider: m[1], modelId: m[2], responseId: m[3] };
}

/** The output text of a response object. */
const outText = (r) => (r.output || []).filter((i) => i.type === 'message')
  .flatMap((i) => i.content || []).filter((c) => c.type === 'output_text').map((c) => c.text).join('');

/** POST /v1/responses with a timeout; {status, text, json, headers}. */
async function resp(url, body, headers = {}, p = '/v1/responses') {
  const res = await fetch(`${url}${p}`, {
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

async function get(url, p, headers = {}, method = 'GET') {
  const res = await fetch(`${url}${p}`, { method, headers, signal: AbortSignal.timeout(30000) });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch {}
  return { status: res.status, headers: res.headers, text, json };
}

/** Read an SSE body incrementally; every parsed data JSON gets `_t` (ms since
 * the request was sent). abortAfter(ev) true -> the fetch is aborted right
 * there. Bounded by timeoutMs. Returns {status, events, aborted, timedOut, raw}. */
async function streamTimed(url, body, { headers = {}, abortAfter = null, timeoutMs = 30000 } = {}) {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  const t0 = Date.now();
  const events = [];
  let raw = '';
  let aborted = false;
  let timedOut = false;
  let status = 0;
  try {
    const res = await fetch(`${url}/v1/responses`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body), signal: ac.signal,
    });
    status = res.status;
    const dec = new TextDecoder('utf-8', { fatal: false });
    let buf = '';
    const reader = res.body.getReader();
    outer: for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const s = dec.decode(value, { stream: true });
      raw += s;
      buf += s;
      let k;
      while ((k = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, k);
        buf = buf.slice(k + 2);
        for (const line of block.split('\n')) {
          if (!line.startsWith('data:')) continue;
          const d = line.slice(5).trim();
          if (d === '[DONE]') continue;
          let ev;
          try { ev = JSON.parse(d); } catch { ev = { _unparsed: d }; }
          ev._t = Date.now() - t0;
          events.push(ev);
          if (abortAfter && abortAfter(ev)) { aborted = true; ac.abort(); break outer; }
        }
      }
    }
  } catch (e) {
    if (!aborted) timedOut = true;
  } finally {
    clearTimeout(timer);
  }
  return { status, events, aborted, timedOut, raw };
}

/** The checks every Responses stream passes: sequence_number 0..N-1, a terminal event. */
function assertSeq(events, what) {
  assert.ok(events.length > 0, `${what}: no events`);
  events.forEach((e, i) => assert.equal(e.sequence_number, i, `${what}: event ${i} (${e.type}) has sequence_number ${e.sequence_number}`));
}

/** Upstream requests whose path ends with part and whose body contains needle. */
async function upstream(part, needle = '') {
  return (await mock.requests()).filter((q) => q.path.split('?')[0].endsWith(part) && (q.body || '').includes(needle));
}

let nonceN = 0;
const nonce = (tag = 'n') => `${tag}${process.pid}x${Date.now().toString(36)}x${++nonceN}`;

// ---------------------------------------------------------------------------
describe('main config (no auth)', () => {
  let gw;
  before(async () => {
    gw = await startGateway(`${modelList(mock.base, mock.url)}
general_settings:
  max_request_size_mb: 8
`);
  });
  after(async () => { assert.equal(await gw?.stop(), 0, 'SIGTERM exits 0'); });

  const alive = async () => {
    const r = await resp(gw.url, { model: 'chat-only', input: 'still there?' });
    assert.equal(r.status, 200, `gateway still serves: ${r.text}`);
    assert.equal(r.json.object, 'response');
    assert.equal(r.json.status, 'completed');
  };

  // ---------------- 1. bad input
  test('bad input on POST /v1/responses: OpenAI-shaped 400s, the gateway keeps serving', async () => {
    const cases = [
      ['invalid JSON', '{"model":"chat-only","input":"hi"', null],
      ['not an object', '[1,2,3]', null],
      ['duplicate "model" key', '{"model":"chat-only","model":"gpt-native","input":"hi"}', null],
      ['input missing (translated)', { model: 'chat-only' }, 'input'],
      ['input a number (translated)', { model: 'chat-only', input: 42 }, 'input'],
      ['input an object (translated)', { model: 'chat-only', input: { role: 'user', content: 'hi' } }, 'input'],
      ['input item without type/role', { model: 'chat-only', input: [{ foo: 1 }] }, null],
      ['item_reference item (translated)', { model: 'chat-only', input: [{ type: 'item_reference', id: 'msg_123' }] }, null],
      ['previous_response_id a number', { model: 'chat-only', input: 'hi', previous_response_id: 12 }, 'previous_response_id'],
      ['previous_response_id an object', { model: 'gpt-native', input: 'hi', previous_response_id: { id: 'x' } }, 'previous_response_id'],
      ['model missing', { input: 'hi' }, 'model'],
      ['model a number', { model: 7, input: 'hi' }, 'model'],
    ];
    for (const [what, body, param] of cases) {
      const r = await resp(gw.url, body);
      assert.equal(r.status, 400, `${what}: want 400, got ${r.status}: ${r.text}`);
      assert.ok(r.json?.error, `${what}: error object: ${r.text}`);
      const e = r.json.error;
      assert.equal(typeof e.message, 'string', `${what}: ${r.text}`);
      assert.ok(e.message.length > 0, `${what}: ${r.text}`);
      assert.ok('type' in e && 'param' in e && 'code' in e, `${what}: ${r.text}`);
      if (param) assert.equal(e.param, param, `${what}: param: ${r.text}`);
    }
    // the item_reference refusal names what was refused (hosted tools are dropped, not refused:
    // responses-tools.test.mjs)
    let r = await resp(gw.url, { model: 'chat-only', input: [{ type: 'item_reference', id: 'msg_1' }] });
    assert.match(r.json.error.message, /item_reference/, r.text);
    // none of the translated refusals reached the upstream
    assert.equal((await upstream('/chat/completions', 'item_reference')).length, 0, 'item_reference never sent upstream');
    await alive();
  });

  test('unknown previous_response_id on a translated group: 400 param previous_response_id', async () => {
    const fake = `resp_${Buffer.from('litellm:custom_llm_provider:hosted_vllm;model_id:nope;response_id:resp_0123456789abcdef0123456789abcdef').toString('base64')}`;
    for (const id of ['resp_doesnotexist', fake, 'not-even-resp']) {
      const r = await resp(gw.url, { model: 'chat-only', input: 'hi', previous_response_id: id });
      assertErrorShape(assert, r, 400);
      assert.equal(r.json.error.param, 'previous_response_id', r.text);
      assert.match(r.json.error.message, /Previous response with id '.*' not found\./, r.text);
    }
    // GET / DELETE / input_items of an unknown translated id: 404
    for (const [m, p] of [['GET', `/v1/responses/${fake}`], ['DELETE', `/v1/responses/${fake}`], ['GET', `/v1/responses/${fake}/input_items`], ['GET', '/v1/responses/resp_nope']]) {
      const r = await get(gw.url, p, {}, m);
      assertErrorShape(assert, r, 404);
    }
    await alive();
  });

  // An encoded id pins its deployment only when that deployment belongs to the
  // requested group (docs/responses.md "Ids and previous_response_id"); an id
  // of another group must not carry the request to that group's deployment.
  test('a gpt-native id as previous_response_id on chat-only: not served by gpt-native\'s deployment, 400', async () => {
    const n = await resp(gw.url, { model: 'gpt-native', input: 'native turn' });
    assert.equal(n.status, 200, n.text);
    const w = nonce('crossA');
    const r = await resp(gw.url, { model: 'chat-only', input: w, previous_response_id: n.json.id });
    assert.equal((await upstream('/v1/responses', w)).length, 0,
      `a chat-only request went to gpt-native's deployment (answered ${r.status}, id ${r.json?.id && JSON.stringify(decodeId(r.json.id))})`);
    assertErrorShape(assert, r, 400);
    assert.equal(r.json.error.param, 'previous_response_id', r.text);
  });

  test('a chat-only id as previous_response_id on gpt-native: not served by chat-only\'s deployment, 400', async () => {
    const t = await resp(gw.url, { model: 'chat-only', input: 'translated turn' });
    assert.equal(t.status, 200, t.text);
    const w = nonce('crossB');
    const r = await resp(gw.url, { model: 'gpt-native', input: w, previous_response_id: t.json.id });
    assert.equal((await upstream('/chat/completions', w)).length, 0,
      `a gpt-native request went to chat-only's deployment (answered ${r.status}, id ${r.json?.id && JSON.stringify(decodeId(r.json.id))})`);
    // gpt-native's own error, as the upstream sent it (a native same-format path: docs/responses.md)
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.param, 'previous_response_id', r.text);
  });

  test('unknown model and wrong method', async () => {
    const r = await resp(gw.url, { model: 'no-such-group', input: 'hi' });
    assertErrorShape(assert, r, 400);
    assert.match(r.json.error.message, /no-such-group/, r.text);
    await alive();
  });

  test('raw garbage on the Responses route: truncated body, lying Content-Length', async () => {
    const body = '{"model":"chat-only","input":"hello there"}';
    // Content-Length larger than what is sent, then the client goes away
    let out = await rawRequest(gw.port, `POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 50}\r\n\r\n${body}`,
      { timeoutMs: 1500 });
    assert.ok(!/HTTP\/1\.1 200/.test(out.data), `no 200 for a short body: ${out.data.slice(0, 200)}`);
    // chunked body with a bad chunk size
    out = await rawRequest(gw.port, 'POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n');
    assert.match(out.data, /^HTTP\/1\.1 400/, out.data.slice(0, 200));
    await alive();
  });

  // ---------------- 2. escaped keys, big bodies
  test('escaped keys "mod\\u0065l" and "in\\u0070ut" are model and input (translated)', async () => {
    const word = nonce('esc');
    const r = await resp(gw.url, `{"mod\\u0065l":"chat-only","in\\u0070ut":"say ${word}"}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.object, 'response');
    assert.equal(r.json.model, 'chat-only', r.text);
    assert.equal(decodeId(r.json.id).provider, 'hosted_vllm');
    const up = await upstream('/chat/completions', word);
    assert.equal(up.length, 1, 'the escaped input reached the chat upstream');
    const j = JSON.parse(up[0].body);
    assert.equal(j.model, 'qwen');
    assert.equal(j.messages.at(-1).role, 'user');
    assert.match(JSON.stringify(j.messages.at(-1).content), new RegExp(word));
    // a group name spelled with escapes routes to that group
    const r2 = await resp(gw.url, `{"model":"chat\\u002donly","input":"x"}`);
    assert.equal(r2.status, 200, r2.text);
  });

  test('escaped "mod\\u0065l" on the native route is routed too (the upstream gets the upstream model)', async () => {
    // the mock's own JSON reader does not decode escaped KEYS, so only what the
    // gateway sends is checked here (as a JSON parser reads it), not the answer
    const word = nonce('escn');
    await resp(gw.url, `{"mod\\u0065l":"gpt-native","input":"say ${word}"}`);
    const up = await upstream('/v1/responses', word);
    assert.equal(up.length, 1, 'routed to the native group');
    const j = JSON.parse(up[0].body);
    assert.equal(j.model, 'gpt-4o', `upstream model: ${up[0].body.slice(0, 200)}`);
    assert.ok(!up[0].body.includes('gpt-native'), `the group name is not left upstream: ${up[0].body.slice(0, 200)}`);
  });

  test('a 4 MB input works translated and native; over max_request_size_mb is 413', async () => {
    const big = 'lorem ipsum '.repeat(Math.ceil((4 << 20) / 12)).slice(0, 4 << 20);
    for (const model of ['chat-only', 'gpt-native']) {
      const word = nonce('big');
      const r = await resp(gw.url, { model, input: `${word} ${big}` });
      assert.equal(r.status, 200, `${model}: ${r.text.slice(0, 300)}`);
      assert.equal(r.json.status, 'completed');
      assert.ok(r.json.usage.input_tokens > 100000, `${model}: input_tokens ${r.json.usage.input_tokens}`);
      const up = await upstream(model === 'chat-only' ? '/chat/completions' : '/v1/responses', word);
      assert.equal(up.length, 1, `${model}: one upstream call`);
      assert.ok(up[0].body.length > (4 << 20), `${model}: the whole input went upstream (${up[0].body.length})`);
    }
    await mock.reset(); // the log holds 8 MB of bodies otherwise
    const huge = 'x'.repeat(9 << 20);
    for (const model of ['chat-only', 'gpt-native']) {
      const r = await resp(gw.url, { model, input: huge });
      assertErrorShape(assert, r, 413);
    }
    await alive();
  });

  // ---------------- 3. streaming
  for (const [model, native] of [['native-slow', true], ['chat-slow', false]]) {
    test(`stream is incremental and sequence_numbers are consecutive (${native ? 'native' : 'translated'})`, async () => {
      const s = await streamTimed(gw.url, { model, input: 'count', stream: true });
      assert.equal(s.status, 200, s.raw.slice(0, 300));
      assert.ok(!s.timedOut, 'stream ended');
      assertSeq(s.events, model);
      const deltas = s.events.filter((e) => e.type === 'response.output_text.delta');
      assert.equal(deltas.length, 6, `6 deltas: ${s.events.map((e) => e.type).join(',')}`);
      const spread = deltas.at(-1)._t - deltas[0]._t;
      assert.ok(spread >= 300, `first delta at ${deltas[0]._t} ms, last at ${deltas.at(-1)._t} ms: the deltas were buffered (spread ${spread} ms)`);
      // and not in one or two bursts (timer jitter on a loaded machine may close one gap)
      const gaps = deltas.slice(1).map((d, i) => d._t - deltas[i]._t);
      assert.ok(gaps.filter((g) => g >= 40).length >= 3, `gaps between deltas (ms): ${gaps.join(', ')}`);
      assert.equal(s.events[0].type, 'response.created');
      const last = s.events.at(-1);
      assert.equal(last.type, 'response.completed');
      assert.equal(outText(last.response), deltas.map((d) => d.delta).join(''));
      assert.equal(decodeId(last.response.id).provider, native ? 'openai' : 'hosted_vllm');
      for (const e of s.events) if (e.response) assert.equal(e.response.id, last.response.id, `${e.type}: same id`);
    });
  }

  test('multi-byte UTF-8 cut across upstream writes arrives intact (translated stream and JSON)', async () => {
    const s = await streamTimed(gw.url, { model: 'chat-utf8', input: 'hi', stream: true });
    assert.equal(s.status, 200, s.raw.slice(0, 300));
    assertSeq(s.events, 'chat-utf8');
    assert.ok(!s.raw.includes('\uFFFD'), `no replacement character in the raw stream: ${s.raw.slice(0, 500)}`);
    const text = s.events.filter((e) => e.type === 'response.output_text.delta').map((d) => d.delta).join('');
    assert.equal(text.trim(), UTF8_TEXT);
    const done = s.events.find((e) => e.type === 'response.output_text.done');
    assert.equal(done?.text?.trim(), UTF8_TEXT);
    const r = await resp(gw.url, { model: 'chat-utf8', input: 'hi' });
    assert.equal(r.status, 200, r.text);
    assert.equal(outText(r.json).trim(), UTF8_TEXT);
  });

  for (const [model, native] of [['native-long', true], ['chat-long', false]]) {
    test(`a client that vanishes mid-stream (${native ? 'native' : 'translated'}): the gateway keeps serving`, async () => {
      for (let i = 0; i < 3; i++) {
        const s = await streamTimed(gw.url, { model, input: 'go', stream: true },
          { abortAfter: (e) => e.type === 'response.output_text.delta' });
        assert.equal(s.status, 200);
        assert.ok(s.aborted, `aborted after the first delta: ${s.events.map((e) => e.type).join(',')}`);
      }
      await sleep(200);
      await alive();
      const n = await resp(gw.url, { model: native ? 'gpt-native' : 'chat-only', input: 'again' });
      assert.equal(n.status, 200, n.text);
      // the stream after the vanished ones completes
      const s = await streamTimed(gw.url, { model: native ? 'gpt-native' : 'chat-only', input: 'full', stream: true });
      assert.equal(s.events.at(-1)?.type, 'response.completed');
    });
  }

  test('an upstream error mid-stream (translated) ends the client stream with error / response.failed, no hang', async () => {
    const t0 = Date.now();
    const s = await streamTimed(gw.url, { model: 'chat-err', input: 'hi', stream: true }, { timeoutMs: 15000 });
    assert.ok(!s.timedOut, `the stream ended (after ${Date.now() - t0} ms): ${s.raw.slice(-500)}`);
    assert.ok(Date.now() - t0 < 10000, 'ended promptly');
    if (s.status === 200) {
      const types = s.events.map((e) => e.type);
      assert.ok(types.includes('error') || types.includes('response.failed'), `error or response.failed event: ${types.join(',')}`);
      assert.ok(!types.includes('response.completed'), `not completed: ${types.join(',')}`);
      assertSeq(s.events, 'chat-err');
      const err = s.events.find((e) => e.type === 'error' || e.type === 'response.failed');
      if (err.type === 'error') assert.equal(typeof err.message, 'string', JSON.stringify(err));
      else assert.equal(err.response.status, 'failed');
      assert.ok(s.events.filter((e) => e.type === 'response.output_text.delta').length >= 1, 'the deltas before the error got through');
    } else {
      assert.fail(`a stream that started upstream answered ${s.status}: ${s.raw.slice(0, 300)}`);
    }
    await alive();
  });

  // ---------------- 8. pass-through edge cases
  const multipart = (fields, boundary = 'XyZbOuNdArY') => {
    let s = '';
    for (const [name, v] of fields) {
      if (typeof v === 'object') {
        s += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${v.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n${v.data}\r\n`;
      } else {
        s += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${v}\r\n`;
      }
    }
    return { body: `${s}--${boundary}--\r\n`, type: `multipart/form-data; boundary=${boundary}` };
  };
  const postRaw = async (p, body, type, headers = {}) => {
    const res = await fetch(`${gw.url}${p}`, { method: 'POST', headers: { 'content-type': type, ...headers }, body, signal: AbortSignal.timeout(30000) });
    const text = await res.text();
    let json = null;
    try { json = JSON.parse(text); } catch {}
    return { status: res.status, headers: res.headers, text, json };
  };

  test('a form field given twice (or a part name with an escape) is refused: the checked model is the one sent', async () => {
    const before = (await upstream('/audio/transcriptions')).length;
    let m = multipart([['model', 'whisper'], ['model', 'gpt-4-expensive'], ['file', { filename: 'a.wav', data: 'RIFF' }]]);
    let r = await postRaw('/v1/audio/transcriptions', m.body, m.type);
    assertErrorShape(assert, r, 400);
    assert.equal(r.json.error.param, 'model', r.text);
    m = multipart([['mod\\el', 'gpt-4-expensive'], ['model', 'whisper'], ['file', { filename: 'a.wav', data: 'RIFF' }]]);
    r = await postRaw('/v1/audio/transcriptions', m.body, m.type);
    assertErrorShape(assert, r, 400);
    assert.equal((await upstream('/audio/transcriptions')).length, before, 'nothing went upstream');
  });

  test('ids cannot leave /responses/ or /files/ on the upstream (path traversal, query, fragment)', async () => {
    await mock.reset();
    const bad = ['..%2F..%2Fv1%2Fmodels%3Fx%3D1', '..%2Ffiles%2Ffile-abc', 'resp_x%23frag', 'resp_x%3Fa%3Db', '%2E%2E'];
    for (const id of bad) {
      for (const method of ['GET', 'DELETE']) {
        const g = await get(gw.url, `/v1/responses/${id}`, {}, method);
        assertErrorShape(assert, g, 404);
      }
      const it = await get(gw.url, `/v1/responses/${id}/input_items`);
      assertErrorShape(assert, it, 404);
      const p = await resp(gw.url, { model: 'gpt-native', input: 'x', previous_response_id: decodeURIComponent(id) });
      assertErrorShape(assert, p, 400);
    }
    // an encoded id whose inner id is a path
    const forged = `resp_${Buffer.from('litellm:custom_llm_provider:openai;model_id:x;response_id:../../v1/models').toString('base64')}`;
    assertErrorShape(assert, await get(gw.url, `/v1/responses/${encodeURIComponent(forged)}`), 404);
    for (const f of ['..%2Fmodels', 'file-a%2F..', 'file.%2e', '%2e%2e']) {
      assertErrorShape(assert, await get(gw.url, `/v1/files/${f}`), 404);
      assertErrorShape(assert, await get(gw.url, `/v1/files/${f}/content`), 404);
      assertErrorShape(assert, await get(gw.url, `/v1/batches/${f}`), 404);
    }
    const paths = (await mock.requests()).map((q) => q.path);
    assert.ok(!paths.some((q) => q.includes('..') || q.includes('%2') || q.includes('#')), paths.join('\n'));
  });

  test('a conversation larger than max_request_size_mb is a 413, not a growing copy per turn', async () => {
    const big = 'word '.repeat(1_000_000); // 5 MB, under the 8 MB cap
    const a = await resp(gw.url, { model: 'chat-only', input: big });
    assert.equal(a.status, 200, a.text.slice(0, 300));
    const b = await resp(gw.url, { model: 'chat-only', input: big, previous_response_id: a.json.id });
    assertErrorShape(assert, b, 413);
    assert.equal(b.json.error.param, 'previous_response_id', b.text);
    const c = await resp(gw.url, { model: 'chat-only', input: 'short', previous_response_id: a.json.id });
    assert.equal(c.status, 200, c.text.slice(0, 300));
  });

  test('transcriptions: no model field -> 400; not multipart -> 400; a good one passes', async () => {
    const before = (await upstream('/audio/transcriptions')).length;
    let m = multipart([['file', { filename: 'a.wav', data: 'RIFFxxxxWAVE' }]]);
    let r = await postRaw('/v1/audio/transcriptions', m.body, m.type);
    assertErrorShape(assert, r, 400);
    r = await postRaw('/v1/audio/transcriptions', JSON.stringify({ model: 'whisper', file: 'abc' }), 'application/json');
    assertErrorShape(assert, r, 400);
    r = await postRaw('/v1/audio/transcriptions', 'model=whisper', 'application/x-www-form-urlencoded');
    assertErrorShape(assert, r, 400);
    // multipart without a boundary
    r = await postRaw('/v1/audio/transcriptions', m.body, 'multipart/form-data');
    assertErrorShape(assert, r, 400);
    assert.equal((await upstream('/audio/transcriptions')).length, before, 'nothing went upstream');
    m = multipart([['model', 'whisper'], ['file', { filename: 'a.wav', data: 'RIFFxxxxWAVE' }]]);
    r = await postRaw('/v1/audio/transcriptions', m.body, m.type);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.text, 'mock transcription of 12 bytes');
  });

  test('images: unknown model -> 400 invalid model; a group served by anthropic/ -> 400 naming the provider', async () => {
    let r = await postJSON(`${gw.url}/v1/images/generations`, { model: 'no-such-image-model', prompt: 'a cat' });
    assertErrorShape(assert, r, 400);
    assert.match(r.json.error.message, /no-such-image-model|[Ii]nvalid model/, r.text);
    r = await postJSON(`${gw.url}/v1/images/generations`, { model: 'claude', prompt: 'a cat' });
    assertErrorShape(assert, r, 400);
    assert.match(r.json.error.message, /anthropic/i, r.text);
    r = await postJSON(`${gw.url}/v1/images/generations`, '{"model":"dall-e-3","prompt":');
    assertErrorShape(assert, r, 400);
    r = await postJSON(`${gw.url}/v1/images/generations`, { model: 'dall-e-3', prompt: 'a cat' });
    assert.equal(r.status, 200, r.text);
    assert.ok(Array.isArray(r.json.data) && r.json.data.length === 1, r.text);
  });

  test('files: ?model=<group> picks that group\'s deployment (its key upstream), default the first openai one', async () => {
    const m = multipart([['purpose', 'batch'], ['file', { filename: 'b.jsonl', data: '{"a":1}\n' }]]);
    await mock.reset();
    let r = await postRaw('/v1/files?model=files-b', m.body, m.type);
    assert.equal(r.status, 200, r.text);
    assert.match(r.json.id, /^file-/);
    let up = (await mock.requests()).filter((q) => q.path.split('?')[0].endsWith('/files'));
    assert.equal(up.length, 1, JSON.stringify((await mock.requests()).map((q) => q.path)));
    const auth = (q) => q.headers[Object.keys(q.headers).find((h) => h.toLowerCase() === 'authorization')];
    assert.equal(auth(up[0]), 'Bearer sk-files-b', 'the files-b deployment\'s key');
    // x-litellm-model header the same
    r = await get(gw.url, `/v1/files/${r.json.id}`, { 'x-litellm-model': 'files-b' });
    assert.equal(r.status, 200, r.text);
    up = (await mock.requests()).filter((q) => /\/files\/file-/.test(q.path));
    assert.equal(auth(up.at(-1)), 'Bearer sk-files-b');
    // no model: the first openai deployment (gpt-native, key sk-up)
    r = await get(gw.url, '/v1/files');
    assert.equal(r.status, 200, r.text);
    up = (await mock.requests()).filter((q) => q.method === 'GET' && q.path.split('?')[0].endsWith('/files'));
    assert.equal(auth(up.at(-1)), 'Bearer sk-up');
    // ?model= naming a group that does not exist, or one behind anthropic/
    r = await get(gw.url, '/v1/files?model=no-such-group');
    assert.ok(r.status === 400 || r.status === 404, `unknown group: ${r.status} ${r.text}`);
    assert.ok(r.json?.error, r.text);
    r = await get(gw.url, '/v1/files?model=claude');
    assertErrorShape(assert, r, 400);
  });

  test('a 4xx from the upstream on GET /v1/files/{unknown} passes through as 404 and does not cool the deployment down', async () => {
    for (let i = 0; i < 6; i++) {
      const r = await get(gw.url, '/v1/files/file-doesnotexist000?model=files-b');
      assert.equal(r.status, 404, `try ${i}: ${r.status} ${r.text}`);
      assert.ok(r.json?.error, r.text);
      assert.match(r.json.error.message, /file-doesnotexist000/, r.text);
    }
    const c = await postJSON(`${gw.url}/v1/chat/completions`, { model: 'files-b', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(c.status, 200, `chat to the same group after the 404s: ${c.text}`);
    // a deleted response on the native group: 404 passed on, the group still serves
    const mk = await resp(gw.url, { model: 'gpt-native', input: 'to delete' });
    assert.equal(mk.status, 200, mk.text);
    let d = await get(gw.url, `/v1/responses/${mk.json.id}`, {}, 'DELETE');
    assert.equal(d.status, 200, d.text);
    for (let i = 0; i < 4; i++) {
      d = await get(gw.url, `/v1/responses/${mk.json.id}`);
      assert.equal(d.status, 404, d.text);
      assert.ok(d.json?.error, d.text);
    }
    const again = await resp(gw.url, { model: 'gpt-native', input: 'after 404s' });
    assert.equal(again.status, 200, again.text);
  });

  test('/v1/audio/speech: a client that vanishes mid-body (request and answer) leaves the gateway serving', async () => {
    // the client goes away while reading the audio
    for (let i = 0; i < 3; i++) {
      const ac = new AbortController();
      const res = await fetch(`${gw.url}/v1/audio/speech`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'tts-slow', input: 'a fairly long text to speak', voice: 'alloy' }), signal: ac.signal,
      });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') || '', /audio\/mpeg/);
      const reader = res.body.getReader();
      const first = await reader.read();
      assert.ok(first.value && first.value.length > 0);
      assert.equal(Buffer.from(first.value.slice(0, 3)).toString('latin1'), 'ID3');
      ac.abort();
    }
    // the client goes away in the middle of sending its request body
    const body = JSON.stringify({ model: 'tts', input: 'hello', voice: 'alloy' });
    const out = await rawRequest(gw.port,
      `POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
      { timeoutMs: 500 });
    assert.ok(!/HTTP\/1\.1 200/.test(out.data), out.data.slice(0, 200));
    await sleep(300);
    const res = await fetch(`${gw.url}/v1/audio/speech`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(30000),
    });
    assert.equal(res.status, 200);
    const buf = Buffer.from(await res.arrayBuffer());
    assert.equal(buf.length, 2048 + 32 * 5, 'whole audio');
    assert.equal(buf.slice(0, 3).toString('latin1'), 'ID3');
    await alive();
  });
});

// ---------------------------------------------------------------------------
test('/v1/files and /v1/batches on a config with no openai/azure deployment: 400', async () => {
  const gw = await startGateway(`
model_list:
  - model_name: chat-only
    litellm_params: {model: hosted_vllm/qwen, api_base: "${mock.base}", api_key: sk-up}
  - model_name: claude
    litellm_params: {model: anthropic/claude-3-5-sonnet, api_base: "${mock.url}", api_key: sk-up}
`);
  try {
    let r = await get(gw.url, '/v1/files');
    assertErrorShape(assert, r, 400);
    r = await get(gw.url, '/v1/batches');
    assertErrorShape(assert, r, 400);
    const b = 'XyZ';
    const res = await fetch(`${gw.url}/v1/files`, {
      method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${b}` },
      body: `--${b}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${b}\r\nContent-Disposition: form-data; name="file"; filename="x.jsonl"\r\n\r\n{}\r\n--${b}--\r\n`,
    });
    r = { status: res.status, text: await res.text() };
    try { r.json = JSON.parse(r.text); } catch {}
    assertErrorShape(assert, r, 400);
    r = await postJSON(`${gw.url}/v1/responses`, { model: 'chat-only', input: 'still fine' });
    assert.equal(r.status, 200, r.text);
  } finally {
    assert.equal(await gw.stop(), 0);
  }
});

// ---------------------------------------------------------------------------
// 6. stored conversations
const storeConfig = (databaseUrl = null) => `
model_list:
  - model_name: chat-only
    litellm_params: {model: hosted_vllm/qwen, api_base: "${mock.base}", api_key: sk-up}
general_settings:
  master_key: ${MASTER_KEY}
${databaseUrl ? `  database_url: "${databaseUrl}"\n` : ''}`;

/** Make turn 1 on gwA with a unique word, continue on gwB; asserts the upstream
 * chat request of turn 2 carried turn 1's input and its answer's text. */
async function continueAcross(gwA, gwB, headers = { authorization: `Bearer ${MASTER_KEY}` }) {
  const w1 = nonce('turnone');
  const r1 = await resp(gwA.url, { model: 'chat-only', input: `remember ${w1}` }, headers);
  assert.equal(r1.status, 200, r1.text);
  const id = r1.json.id;
  const inner = decodeId(id).responseId;
  assert.match(inner, /^resp_[0-9a-f]{32}$/);
  const text1 = outText(r1.json);
  assert.ok(text1.length > 0);
  return {
    id, inner, w1, text1,
    async check(gwC = gwB) {
      gwB = gwC;
      const g = await get(gwB.url, `/v1/responses/${id}`, headers);
      assert.equal(g.status, 200, `GET on the other instance: ${g.text}`);
      assert.equal(g.json.id, id);
      assert.equal(outText(g.json), text1);
      const ii = await get(gwB.url, `/v1/responses/${id}/input_items`, headers);
      assert.equal(ii.status, 200, ii.text);
      assert.equal(ii.json.object, 'list');
      assert.ok(JSON.stringify(ii.json.data).includes(w1), ii.text);
      const w2 = nonce('turntwo');
      const r2 = await resp(gwB.url, { model: 'chat-only', input: `and ${w2}`, previous_response_id: id }, headers);
      assert.equal(r2.status, 200, `continue on the other instance: ${r2.text}`);
      assert.equal(r2.json.previous_response_id, id, r2.text);
      const up = await upstream('/chat/completions', w2);
      assert.equal(up.length, 1);
      const msgs = JSON.parse(up[0].body).messages;
      const flat = JSON.stringify(msgs);
      assert.ok(flat.includes(w1), `turn 2's chat request has turn 1's input: ${flat}`);
      assert.ok(flat.includes(text1.slice(0, 30)), `turn 2's chat request has turn 1's answer: ${flat}`);
      assert.deepEqual(msgs.map((m) => m.role), ['user', 'assistant', 'user'], flat);
      return r2.json;
    },
  };
}

test('SQLite: a stored response survives a restart (GET and previous_response_id)', async () => {
  const dir = tmpdir();
  const db = path.join(dir, 'resp.db');
  let gw = await startGateway(storeConfig(), { env: { SWITCHYARD_DB: db } });
  let c;
  try {
    c = await continueAcross(gw, gw);
    // a store:false response is never found
    const nf = await resp(gw.url, { model: 'chat-only', input: 'forget me', store: false }, { authorization: `Bearer ${MASTER_KEY}` });
    assert.equal(nf.status, 200, nf.text);
    c.noStore = nf.json.id;
    const g = await get(gw.url, `/v1/responses/${nf.json.id}`, { authorization: `Bearer ${MASTER_KEY}` });
    assertErrorShape(assert, g, 404);
  } finally {
    assert.equal(await gw.stop(), 0);
  }
  assert.ok(fs.existsSync(db), 'the SQLite file exists');
  gw = await startGateway(storeConfig(), { env: { SWITCHYARD_DB: db } });
  try {
    const t2 = await c.check(gw);
    // the second turn is itself continuable, carrying both turns
    const w3 = nonce('turnthree');
    const r3 = await resp(gw.url, { model: 'chat-only', input: `then ${w3}`, previous_response_id: t2.id }, { authorization: `Bearer ${MASTER_KEY}` });
    assert.equal(r3.status, 200, r3.text);
    const msgs = JSON.parse((await upstream('/chat/completions', w3))[0].body).messages;
    assert.equal(msgs.length, 5, JSON.stringify(msgs));
    assert.ok(JSON.stringify(msgs).includes(c.w1));
    const g = await get(gw.url, `/v1/responses/${c.noStore}`, { authorization: `Bearer ${MASTER_KEY}` });
    assertErrorShape(assert, g, 404);
    // DELETE, then it is gone (also after another restart)
    const d = await get(gw.url, `/v1/responses/${c.id}`, { authorization: `Bearer ${MASTER_KEY}` }, 'DELETE');
    assert.equal(d.status, 200, d.text);
    assert.deepEqual(d.json, { id: c.id, object: 'response', deleted: true });
  } finally {
    assert.equal(await gw.stop(), 0);
  }
  gw = await startGateway(storeConfig(), { env: { SWITCHYARD_DB: db } });
  try {
    const g = await get(gw.url, `/v1/responses/${c.id}`, { authorization: `Bearer ${MASTER_KEY}` });
    assertErrorShape(assert, g, 404);
  } finally {
    assert.equal(await gw.stop(), 0);
  }
});

describe('PostgreSQL shared by two instances', () => {
  let pg, dbUrl, gwA, gwB;
  before(async () => {
    pg = await startPostgres();
    dbUrl = await pg.createDb('responses_test');
    gwA = await startGateway(storeConfig(dbUrl));
    gwB = await startGateway(storeConfig(dbUrl));
  });
  after(async () => {
    if (gwA) assert.equal(await gwA.stop(), 0);
    if (gwB) assert.equal(await gwB.stop(), 0);
    await pg?.stop();
  });

  test('a response made on A is readable and continuable on B; the row is in "SwitchyardResponse"', async () => {
    const c = await continueAcross(gwA, gwB);
    assert.ok(await until(async () => (await pg.psql(`SELECT id FROM "SwitchyardResponse" WHERE id = '${c.inner}'`, dbUrl)).length === 1, 10000),
      'the row reaches the database');
    const [row] = await pg.psql(`SELECT id, model, model_id, owner, response, input_items, history FROM "SwitchyardResponse" WHERE id = '${c.inner}'`, dbUrl);
    assert.equal(row.model, 'chat-only');
    assert.equal(row.model_id, decodeId(c.id).modelId);
    assert.equal(row.response.id, c.id, 'the response as the client got it');
    assert.ok(JSON.stringify(row.input_items).includes(c.w1));
    const t2 = await c.check();
    // turn 2 (made on B) continues on A
    assert.ok(await until(async () => (await pg.psql(`SELECT id FROM "SwitchyardResponse" WHERE id = '${decodeId(t2.id).responseId}'`, dbUrl)).length === 1, 10000));
    const w3 = nonce('pgthree');
    const r3 = await resp(gwA.url, { model: 'chat-only', input: `then ${w3}`, previous_response_id: t2.id }, { authorization: `Bearer ${MASTER_KEY}` });
    assert.equal(r3.status, 200, r3.text);
    const msgs = JSON.parse((await upstream('/chat/completions', w3))[0].body).messages;
    assert.equal(msgs.length, 5, JSON.stringify(msgs));
    // a delete on B is seen by A (its memory copy may linger: a GET on A must not resurrect it in the DB)
    const d = await get(gwB.url, `/v1/responses/${c.id}`, { authorization: `Bearer ${MASTER_KEY}` }, 'DELETE');
    assert.equal(d.status, 200, d.text);
    assert.equal((await pg.psql(`SELECT id FROM "SwitchyardResponse" WHERE id = '${c.inner}'`, dbUrl)).length, 0);
  });
});

// ---------------------------------------------------------------------------
// 7. ownership
test('ownership: a response made with key A is 404 for key B (GET, input_items, DELETE) and 400 as its previous_response_id', async () => {
  const gw = await startGateway(keysConfig(mock.base, {
    extraModels: `  - model_name: chat-only
    litellm_params: {model: hosted_vllm/qwen, api_base: "${mock.base}", api_key: sk-up}`,
  }));
  try {
    const A = (await genKey(gw.url, {})).key;
    const B = (await genKey(gw.url, {})).key;
    const hA = { authorization: `Bearer ${A}` };
    const hB = { authorization: `Bearer ${B}` };
    const r = await resp(gw.url, { model: 'chat-only', input: 'mine' }, hA);
    assert.equal(r.status, 200, r.text);
    const id = r.json.id;
    let g = await get(gw.url, `/v1/responses/${id}`, hB);
    assertErrorShape(assert, g, 404);
    const d0 = decodeId(id);
    const other = `resp_${Buffer.from(`litellm:custom_llm_provider:${d0.provider};model_id:${d0.modelId};response_id:resp_${'0'.repeat(32)}`).toString('base64')}`;
    const unknown = await get(gw.url, `/v1/responses/${other}`, hB);
    assertErrorShape(assert, unknown, 404);
    assert.equal(g.json.error.message.replace(id, 'X'), unknown.json.error.message.replace(other, 'X'),
      'the same answer as for an id that does not exist');
    const garbled = await get(gw.url, `/v1/responses/${id.slice(0, -6)}`, hB);
    assertErrorShape(assert, garbled, 404);
    g = await get(gw.url, `/v1/responses/${id}/input_items`, hB);
    assertErrorShape(assert, g, 404);
    const p = await resp(gw.url, { model: 'chat-only', input: 'steal', previous_response_id: id }, hB);
    assertErrorShape(assert, p, 400);
    assert.equal(p.json.error.param, 'previous_response_id', p.text);
    assert.match(p.json.error.message, /not found/, p.text);
    let d = await get(gw.url, `/v1/responses/${id}`, hB, 'DELETE');
    assertErrorShape(assert, d, 404);
    // no key at all: 401
    g = await get(gw.url, `/v1/responses/${id}`);
    assertErrorShape(assert, g, 401);
    // the owner and the master key read it
    g = await get(gw.url, `/v1/responses/${id}`, hA);
    assert.equal(g.status, 200, g.text);
    assert.equal(g.json.id, id);
    g = await get(gw.url, `/v1/responses/${id}`, { authorization: `Bearer ${MASTER_KEY}` });
    assert.equal(g.status, 200, g.text);
    const c = await resp(gw.url, { model: 'chat-only', input: 'more', previous_response_id: id }, hA);
    assert.equal(c.status, 200, c.text);
    // B's failed DELETE did not remove it; A's does
    d = await get(gw.url, `/v1/responses/${id}`, hA, 'DELETE');
    assert.equal(d.status, 200, d.text);
    g = await get(gw.url, `/v1/responses/${id}`, hA);
    assertErrorShape(assert, g, 404);
    // a key limited to other models cannot use chat-only through /v1/responses
    const C = (await genKey(gw.url, { models: ['priced'] })).key;
    const x = await resp(gw.url, { model: 'chat-only', input: 'no' }, { authorization: `Bearer ${C}` });
    assert.ok(x.status === 401 || x.status === 403, `model access refused: ${x.status} ${x.text}`);
    assert.ok(x.json?.error, x.text);
  } finally {
    assert.equal(await gw.stop(), 0);
  }
});

test('keys: a master-key response is not readable by a virtual key; files and batches run the key checks', async () => {
  const gw = await startGateway(keysConfig(mock.base, {
    extraModels: `  - model_name: chat-only
    litellm_params: {model: hosted_vllm/qwen, api_base: "${mock.base}", api_key: sk-up}`,
  }));
  try {
    const M = { authorization: `Bearer ${MASTER_KEY}` };
    const r = await resp(gw.url, { model: 'chat-only', input: 'the admin prompt' }, M);
    assert.equal(r.status, 200, r.text);
    const K = (await genKey(gw.url, {})).key;
    const hK = { authorization: `Bearer ${K}` };
    assertErrorShape(assert, await get(gw.url, `/v1/responses/${r.json.id}`, hK), 404);
    assertErrorShape(assert, await get(gw.url, `/v1/responses/${r.json.id}/input_items`, hK), 404);
    assertErrorShape(assert, await get(gw.url, `/v1/responses/${r.json.id}`, hK, 'DELETE'), 404);
    const p = await resp(gw.url, { model: 'chat-only', input: 'x', previous_response_id: r.json.id }, hK);
    assertErrorShape(assert, p, 400);
    assert.equal((await get(gw.url, `/v1/responses/${r.json.id}`, M)).status, 200);
    // a key over its budget is refused on batches and files as on chat
    const Z = (await genKey(gw.url, { max_budget: 0 })).key;
    const hZ = { authorization: `Bearer ${Z}`, 'content-type': 'application/json' };
    const chat = await postJSON(`${gw.url}/v1/chat/completions`, { model: 'priced', messages: [{ role: 'user', content: 'x' }] }, { authorization: `Bearer ${Z}` });
    assert.ok(chat.status >= 400, `${chat.status}`);
    const before = (await upstream('/batches')).length;
    const bz = await fetch(`${gw.url}/v1/batches`, { method: 'POST', headers: hZ,
      body: JSON.stringify({ input_file_id: 'file-x', endpoint: '/v1/chat/completions', completion_window: '24h' }) });
    assert.equal(bz.status, chat.status, await bz.text());
    // a key limited to some models cannot create batches (their requests name their own models)
    const L = (await genKey(gw.url, { models: ['priced'] })).key;
    const bl = await fetch(`${gw.url}/v1/batches`, { method: 'POST', headers: { authorization: `Bearer ${L}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input_file_id: 'file-x', endpoint: '/v1/chat/completions', completion_window: '24h' }) });
    assert.equal(bl.status, 401, await bl.text());
    assert.equal((await upstream('/batches')).length, before, 'nothing went upstream');
  } finally {
    assert.equal(await gw.stop(), 0);
  }
});

test('a previous_response_id cannot take a key to a deployment of a group it may not use', async () => {
  const gw = await startGateway(keysConfig(mock.base));
  try {
    const M = { authorization: `Bearer ${MASTER_KEY}` };
    const o = await resp(gw.url, { model: 'other', input: 'made on other' }, M);
    assert.equal(o.status, 200, o.text);
    assert.equal(decodeId(o.json.id).provider, 'openai');
    const C = (await genKey(gw.url, { models: ['priced'] })).key;
    const hC = { authorization: `Bearer ${C}` };
    // the group it asks for is allowed; the id names the "other" deployment
    const w = nonce('pin');
    const r = await resp(gw.url, { model: 'priced', input: w, previous_response_id: o.json.id }, hC);
    const up = await upstream('/v1/responses', w);
    assert.ok(up.length <= 1, `upstream calls: ${up.length}`);
    if (up.length === 1) {
      assert.equal(JSON.parse(up[0].body).model, 'priced',
        `a key limited to "priced" reached the "other" deployment through previous_response_id (answered ${r.status}): ${up[0].body.slice(0, 300)}`);
    }
    // asking for "other" directly is refused
    const d = await resp(gw.url, { model: 'other', input: 'x' }, hC);
    assert.ok(d.status === 401 || d.status === 403, `${d.status} ${d.text}`);
    // files and batches: only on a group the key may call ("priced" is the first openai
    // deployment of keysConfig, so the default works; ?model=other is refused)
    const f0 = await fetch(`${gw.url}/v1/files`, { headers: hC });
    assert.equal(f0.status, 200, await f0.text());
    const f1 = await fetch(`${gw.url}/v1/files?model=other`, { headers: hC });
    assert.ok(f1.status === 401 || f1.status === 403, `${f1.status}`);
    assert.ok((await f1.json()).error, 'an OpenAI-shaped error');
    const f2 = await fetch(`${gw.url}/v1/batches`, { headers: { ...hC, 'x-litellm-model': 'other' } });
    assert.ok(f2.status === 401 || f2.status === 403, `${f2.status}`);
  } finally {
    assert.equal(await gw.stop(), 0);
  }
});

// ---------------------------------------------------------------------------
// 9. the built-in mock model
async function mockChain(gw, model) {
  const r1 = await resp(gw.url, { model, input: 'hello mock' });
  assert.equal(r1.status, 200, r1.text);
  assert.equal(r1.json.object, 'response');
  assert.equal(r1.json.status, 'completed');
  assert.ok(outText(r1.json).length > 0, r1.text);
  assert.ok(r1.json.usage.input_tokens > 0 && r1.json.usage.output_tokens > 0, r1.text);
  decodeId(r1.json.id);
  const s = await streamTimed(gw.url, { model, input: 'stream please', stream: true });
  assert.equal(s.status, 200, s.raw.slice(0, 300));
  assertSeq(s.events, model);
  assert.equal(s.events[0].type, 'response.created');
  assert.equal(s.events.at(-1).type, 'response.completed');
  const deltas = s.events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
  assert.ok(deltas.length > 0);
  assert.equal(outText(s.events.at(-1).response), deltas);
  const r2 = await resp(gw.url, { model, input: 'and again', previous_response_id: r1.json.id });
  assert.equal(r2.status, 200, r2.text);
  assert.equal(r2.json.previous_response_id, r1.json.id);
  const r3 = await resp(gw.url, { model, input: 'third', previous_response_id: s.events.at(-1).response.id });
  assert.equal(r3.status, 200, r3.text);
  const g = await get(gw.url, `/v1/responses/${r2.json.id}`);
  assert.equal(g.status, 200, g.text);
  const ii = await get(gw.url, `/v1/responses/${r2.json.id}/input_items`);
  assert.equal(ii.status, 200, ii.text);
  assert.ok(JSON.stringify(ii.json.data).includes('and again'), ii.text);
  const bad = await resp(gw.url, { model, input: 'x', previous_response_id: 'resp_unknown' });
  assertErrorShape(assert, bad, 400);
  // the pass-through routes are not served by the built-in mock
  const im = await postJSON(`${gw.url}/v1/images/generations`, { model, prompt: 'a cat' });
  assertErrorShape(assert, im, 400);
}

test('built-in mock: a config with model mock/anything serves /v1/responses (JSON, stream, chain)', async () => {
  const gw = await startGateway(`
model_list:
  - model_name: m1
    litellm_params: {model: mock/anything}
`);
  try { await mockChain(gw, 'm1'); } finally { assert.equal(await gw.stop(), 0); }
});

test('built-in mock: no config at all serves /v1/responses (JSON, stream, chain)', async () => {
  const gw = await startGateway(null);
  try { await mockChain(gw, 'mock-gpt'); } finally { assert.equal(await gw.stop(), 0); }
});
