// endpoints.test.mjs - the pass-through endpoints of issue 11 with the official
// OpenAI Node SDK (and fetch for rerank, which the SDK lacks): images
// (generate, edit), audio (speech, transcriptions, translations),
// moderations, files, batches, rerank (Cohere shape, /v1 and /v2) and
// /v1/models. Each answer is checked as a client sees it, and the mock's
// request log shows what the gateway sent upstream: the path, and the
// UPSTREAM model name (in the JSON body, or in the multipart `model` field,
// which must be the only part of a multipart body that changes).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { postJSON, startGateway, startMock } from '../lib/harness.mjs';

const KEY = 'sk-e2e-master';
let mock, gw, client;

const GROUPS = ['gpt-native', 'chat-only', 'claude', 'dall-e-3', 'whisper', 'tts', 'omni-moderation-latest', 'rerank-english'];

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
  - model_name: dall-e-3
    litellm_params: {model: openai/dall-e-3, api_base: "${mock.base}", api_key: sk-up}
    model_info: {mode: image_generation}
  - model_name: whisper
    litellm_params: {model: openai/whisper-1, api_base: "${mock.base}", api_key: sk-up}
    model_info: {mode: audio_transcription}
  - model_name: tts
    litellm_params: {model: openai/tts-1, api_base: "${mock.base}", api_key: sk-up}
    model_info: {mode: audio_speech}
  - model_name: omni-moderation-latest
    litellm_params: {model: openai/omni-moderation-latest, api_base: "${mock.base}", api_key: sk-up}
    model_info: {mode: moderation}
  - model_name: rerank-english
    litellm_params: {model: cohere/rerank-english-v3.0, api_base: "${mock.url}", api_key: sk-up}
    model_info: {mode: rerank}
general_settings:
  master_key: ${KEY}
`);
  client = new OpenAI({ apiKey: KEY, baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 30000 });
});
after(async () => { await gw.stop(); await mock.stop(); });

/** The last upstream request of the mock log with this method whose path
 * (query stripped) is `p`; asserts there is one. */
async function lastUpstream(method, p) {
  const all = await mock.requests();
  const hits = all.filter((q) => q.method === method && q.path.split('?')[0] === p);
  assert.ok(hits.length > 0, `no upstream ${method} ${p}; saw: ${all.map((q) => `${q.method} ${q.path}`).join(', ')}`);
  const q = hits.at(-1);
  let json = null;
  try { json = JSON.parse(q.body); } catch {}
  return { ...q, json };
}

const header = (q, name) => {
  const k = Object.keys(q.headers).find((h) => h.toLowerCase() === name);
  return k === undefined ? undefined : q.headers[k];
};

/** Parse a logged multipart/form-data body: {name: {filename, value}}. */
function multipart(q) {
  const ct = header(q, 'content-type') || '';
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(ct);
  assert.ok(m, `multipart content-type upstream: ${ct}`);
  const boundary = m[1] || m[2];
  const out = {};
  for (const part of q.body.split(`--${boundary}`).slice(1)) {
    if (part.startsWith('--')) break;
    const sep = part.indexOf('\r\n\r\n');
    if (sep < 0) continue;
    const head = part.slice(0, sep);
    const value = part.slice(sep + 4).replace(/\r\n$/, '');
    const name = /name="([^"]*)"/i.exec(head)?.[1];
    const filename = /filename="([^"]*)"/i.exec(head)?.[1];
    if (name) out[name] = { filename, value };
  }
  return out;
}

// ASCII payloads so the mock's (JSON-string) log holds them exactly
const AUDIO = Buffer.from('RIFF0000WAVEfmt mock audio payload for the e2e tests\n'.repeat(20));
const PNG = Buffer.from('not really a png, but the mock only checks that an image part exists\n'.repeat(5));

test('images.generate with b64_json and url', async () => {
  const b = await client.images.generate({ model: 'dall-e-3', prompt: 'a red square', response_format: 'b64_json' });
  assert.ok(b.created > 0);
  assert.equal(b.data.length, 1);
  assert.ok(b.data[0].b64_json.length > 0);
  assert.ok(Buffer.from(b.data[0].b64_json, 'base64').length > 0);
  let up = await lastUpstream('POST', '/v1/images/generations');
  assert.equal(up.json.model, 'dall-e-3');
  assert.equal(up.json.prompt, 'a red square');
  assert.equal(header(up, 'authorization'), 'Bearer sk-up');

  const u = await client.images.generate({ model: 'dall-e-3', prompt: 'a blue circle', response_format: 'url', n: 2 });
  assert.equal(u.data.length, 2);
  for (const d of u.data) assert.match(d.url, /^https?:\/\//);
  up = await lastUpstream('POST', '/v1/images/generations');
  assert.equal(up.json.n, 2);
  assert.equal(up.json.response_format, 'url');
});

test('images.edit (multipart) forwards the file and swaps only the model', async () => {
  const r = await client.images.edit({
    model: 'dall-e-3', prompt: 'make it green', response_format: 'b64_json',
    image: await toFile(PNG, 'square.png', { type: 'image/png' }),
  });
  assert.equal(r.data.length, 1);
  assert.ok(r.data[0].b64_json.length > 0);
  const up = await lastUpstream('POST', '/v1/images/edits');
  assert.match(header(up, 'content-type'), /^multipart\/form-data/);
  const f = multipart(up);
  assert.equal(f.model.value, 'dall-e-3');
  assert.equal(f.prompt.value, 'make it green');
  const img = f.image || f['image[]'];
  assert.ok(img, `image part: ${Object.keys(f)}`);
  assert.equal(img.filename, 'square.png');
  assert.equal(img.value, PNG.toString());
});

test('audio.speech.create streams binary audio back', async () => {
  const res = await client.audio.speech.create({ model: 'tts', voice: 'alloy', input: 'Hello there.' });
  assert.match(res.headers.get('content-type'), /^audio\/mpeg/);
  const buf = Buffer.from(await res.arrayBuffer());
  assert.ok(buf.length > 0);
  assert.equal(buf.subarray(0, 3).toString('latin1'), 'ID3');
  const up = await lastUpstream('POST', '/v1/audio/speech');
  assert.equal(up.json.model, 'tts-1');
  assert.equal(up.json.voice, 'alloy');
  assert.equal(up.json.input, 'Hello there.');
});

test('audio.speech.create: the body is streamed (read incrementally)', async () => {
  const res = await client.audio.speech.create({ model: 'tts', voice: 'alloy', input: 'More audio.', response_format: 'mp3' });
  let total = 0, reads = 0;
  for await (const chunk of res.body) { total += chunk.length; reads++; }
  assert.ok(total > 0 && reads >= 1);
});

test('audio.transcriptions.create (json and text)', async () => {
  const r = await client.audio.transcriptions.create({ model: 'whisper', file: await toFile(AUDIO, 'hello.wav', { type: 'audio/wav' }) });
  assert.match(r.text, /^mock transcription of \d+ bytes/);
  let up = await lastUpstream('POST', '/v1/audio/transcriptions');
  let f = multipart(up);
  assert.equal(f.model.value, 'whisper-1', 'the upstream model name in the multipart field');
  assert.equal(f.file.filename, 'hello.wav');
  assert.equal(f.file.value, AUDIO.toString(), 'the file part byte for byte');

  const t = await client.audio.transcriptions.create({
    model: 'whisper', response_format: 'text', language: 'en',
    file: await toFile(AUDIO, 'hello.wav', { type: 'audio/wav' }),
  });
  assert.equal(typeof t, 'string');
  assert.match(t, /mock transcription of \d+ bytes/);
  up = await lastUpstream('POST', '/v1/audio/transcriptions');
  f = multipart(up);
  assert.equal(f.response_format.value, 'text');
  assert.equal(f.language.value, 'en');
  assert.equal(f.model.value, 'whisper-1');
});

test('audio.translations.create', async () => {
  const r = await client.audio.translations.create({ model: 'whisper', file: await toFile(AUDIO, 'bonjour.wav', { type: 'audio/wav' }) });
  assert.match(r.text, /^mock transcription of \d+ bytes/);
  const up = await lastUpstream('POST', '/v1/audio/translations');
  const f = multipart(up);
  assert.equal(f.model.value, 'whisper-1');
  assert.equal(f.file.filename, 'bonjour.wav');
  assert.equal(f.file.value, AUDIO.toString());
});

test('moderations.create (with and without a model)', async () => {
  const r = await client.moderations.create({ model: 'omni-moderation-latest', input: ['hello', 'world'] });
  assert.match(r.id, /^modr-/);
  assert.equal(r.results.length, 2);
  assert.equal(r.results[0].flagged, false);
  assert.equal(typeof r.results[0].categories, 'object');
  let up = await lastUpstream('POST', '/v1/moderations');
  assert.equal(up.json.model, 'omni-moderation-latest');

  const d = await client.moderations.create({ input: 'just text' });
  assert.equal(d.results.length, 1);
  up = await lastUpstream('POST', '/v1/moderations');
  assert.deepEqual(up.json.input, 'just text');
});

const JSONL = '{"custom_id":"r1","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}}\n';

test('files: create, list, retrieve, content, delete', async () => {
  const f = await client.files.create({ file: await toFile(Buffer.from(JSONL), 'batch.jsonl'), purpose: 'batch' });
  assert.match(f.id, /^file-/);
  assert.equal(f.object, 'file');
  assert.equal(f.bytes, Buffer.byteLength(JSONL));
  assert.equal(f.filename, 'batch.jsonl');
  assert.equal(f.purpose, 'batch');
  const up = await lastUpstream('POST', '/v1/files');
  const parts = multipart(up);
  assert.equal(parts.purpose.value, 'batch');
  assert.equal(parts.file.value, JSONL);
  assert.equal(header(up, 'authorization'), 'Bearer sk-up');

  const ids = [];
  for await (const x of client.files.list()) ids.push(x.id);
  assert.ok(ids.includes(f.id), ids.join(','));
  await lastUpstream('GET', '/v1/files');

  const got = await client.files.retrieve(f.id);
  assert.equal(got.id, f.id);
  assert.equal(got.bytes, f.bytes);
  await lastUpstream('GET', `/v1/files/${f.id}`);

  const content = await client.files.content(f.id);
  assert.equal(await content.text(), JSONL);
  await lastUpstream('GET', `/v1/files/${f.id}/content`);

  const del = await client.files.delete(f.id);
  assert.equal(del.id, f.id);
  assert.equal(del.deleted, true);
  await lastUpstream('DELETE', `/v1/files/${f.id}`);
  await assert.rejects(client.files.retrieve(f.id), (e) => e instanceof OpenAI.NotFoundError && e.status === 404);
});

test('batches: create, retrieve, list, cancel', async () => {
  const f = await client.files.create({ file: await toFile(Buffer.from(JSONL), 'b.jsonl'), purpose: 'batch' });
  const b = await client.batches.create({
    input_file_id: f.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { tag: 'e2e' },
  });
  assert.match(b.id, /^batch_/);
  assert.equal(b.object, 'batch');
  assert.equal(b.input_file_id, f.id);
  assert.equal(b.endpoint, '/v1/chat/completions');
  assert.equal(b.status, 'validating');
  const up = await lastUpstream('POST', '/v1/batches');
  assert.equal(up.json.input_file_id, f.id);
  assert.equal(up.json.completion_window, '24h');

  const got = await client.batches.retrieve(b.id);
  assert.equal(got.id, b.id);
  await lastUpstream('GET', `/v1/batches/${b.id}`);

  const ids = [];
  for await (const x of client.batches.list()) ids.push(x.id);
  assert.ok(ids.includes(b.id), ids.join(','));

  const c = await client.batches.cancel(b.id);
  assert.equal(c.id, b.id);
  assert.ok(['cancelling', 'cancelled'].includes(c.status), c.status);
  await lastUpstream('POST', `/v1/batches/${b.id}/cancel`);

  await assert.rejects(client.batches.create({ input_file_id: 'file-doesnotexist', endpoint: '/v1/chat/completions', completion_window: '24h' }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400);
});

const DOCS = [
  'Paris is the capital of France.',
  'Bananas are yellow.',
  'The capital of Germany is Berlin.',
  'France is a country in Europe and its capital city is Paris.',
];

for (const [route, upPath] of [['/v1/rerank', '/v1/rerank'], ['/v2/rerank', '/v2/rerank'], ['/rerank', '/v1/rerank']]) {
  test(`rerank via POST ${route}`, async () => {
    const r = await postJSON(`${gw.url}${route}`,
      { model: 'rerank-english', query: 'What is the capital of France?', documents: DOCS, top_n: 2 },
      { authorization: `Bearer ${KEY}` });
    assert.equal(r.status, 200, r.text);
    assert.equal(typeof r.json.id, 'string');
    assert.equal(r.json.results.length, 2, 'top_n honoured');
    for (const x of r.json.results) {
      assert.ok(Number.isInteger(x.index) && x.index >= 0 && x.index < DOCS.length);
      assert.equal(typeof x.relevance_score, 'number');
    }
    assert.ok(r.json.results[0].relevance_score >= r.json.results[1].relevance_score, 'sorted by relevance_score');
    assert.ok(r.json.meta);
    const up = await lastUpstream('POST', upPath);
    assert.equal(up.json.model, 'rerank-english-v3.0');
    assert.equal(up.json.query, 'What is the capital of France?');
    assert.equal(up.json.top_n, 2);
  });
}

test('rerank without top_n returns every document, sorted', async () => {
  const r = await postJSON(`${gw.url}/v1/rerank`, { model: 'rerank-english', query: 'capital of France', documents: DOCS },
    { authorization: `Bearer ${KEY}` });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.results.length, DOCS.length);
  const scores = r.json.results.map((x) => x.relevance_score);
  assert.deepEqual(scores, [...scores].sort((a, b) => b - a));
  assert.deepEqual(r.json.results.map((x) => x.index).sort(), [0, 1, 2, 3]);
});

test('the routes without /v1 work too', async () => {
  const r = await postJSON(`${gw.url}/images/generations`, { model: 'dall-e-3', prompt: 'x', response_format: 'url' },
    { authorization: `Bearer ${KEY}` });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.data.length, 1);
  const m = await postJSON(`${gw.url}/moderations`, { input: 'x' }, { authorization: `Bearer ${KEY}` });
  assert.equal(m.status, 200, m.text);
});

test('errors are OpenAI-shaped: unknown model on images, wrong key on files', async () => {
  await assert.rejects(client.images.generate({ model: 'nope', prompt: 'x' }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400);
  const bad = new OpenAI({ apiKey: 'sk-wrong', baseURL: `${gw.url}/v1`, maxRetries: 0 });
  await assert.rejects(bad.files.list(), (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
});

test('/v1/models lists the groups', async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.deepEqual(ids.sort(), [...GROUPS].sort());
});
