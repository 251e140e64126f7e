// The guardrail stages end to end (stages/guardrails*.c): which guardrails a call
// runs, pre_call blocks and masks on the three dialects, post_call on JSON answers
// and streams, /guardrails/list, the header, the metrics, a 1 MB prompt, and bad
// configs. The in-process content filter is the guardrail under test here; the
// kinds have their own files.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startMock, startGateway, postJSON, api, MASTER_KEY, SWITCHYARD, tmpdir } from '../lib/harness.mjs';

let mock, gw;

const config = (base) => `
model_list:
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o, api_base: "${base}", api_key: sk-up}
  - model_name: claude
    litellm_params: {model: anthropic/claude-sonnet-4-5, api_base: "${base.replace(/\/v1$/, '')}", api_key: sk-up}
general_settings:
  master_key: ${MASTER_KEY}
guardrails:
  - guardrail_name: words
    litellm_params:
      guardrail: litellm_content_filter
      mode: pre_call
      default_on: true
      blocked_words:
        - {keyword: forbidden, action: BLOCK}
        - {keyword: codename, action: MASK}
  - guardrail_name: asked
    litellm_params:
      guardrail: litellm_content_filter
      mode: pre_call
      blocked_words:
        - {keyword: onlyifasked, action: BLOCK}
  - guardrail_name: out
    litellm_params:
      guardrail: litellm_content_filter
      mode: post_call
      api_key: sk-secret-value-1234
      blocked_words:
        - {keyword: zebra, action: BLOCK}
        - {keyword: giraffe, action: MASK}
    guardrail_info: {owner: safety-team}
`;

before(async () => {
  mock = await startMock();
  gw = await startGateway(config(mock.base));
});
after(async () => { await gw?.stop(); await mock?.stop(); });

const H = { authorization: `Bearer ${MASTER_KEY}` };
const chat = (content, extra = {}) => postJSON(`${gw.url}/v1/chat/completions`,
  { model: 'gpt', messages: [{ role: 'user', content }], ...extra }, H);
const messages = (content, extra = {}) => postJSON(`${gw.url}/v1/messages`,
  { model: 'claude', max_tokens: 50, messages: [{ role: 'user', content }], ...extra }, H);
const responses = (input, extra = {}) => postJSON(`${gw.url}/v1/responses`, { model: 'gpt', input, ...extra }, H);
const lastBody = async () => JSON.parse((await mock.requests()).at(-1).body);

async function raw(p, body) {
  const res = await fetch(`${gw.url}${p}`, { method: 'POST', headers: { ...H, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

test('pre_call block: LiteLLM error on chat and responses, Anthropic shape on /v1/messages; nothing sent upstream', async () => {
  await mock.reset();
  const c = await chat('this is forbidden text');
  assert.equal(c.status, 400);
  assert.equal(c.json.error.type, 'None');
  assert.equal(c.json.error.param, 'None');
  assert.equal(c.json.error.code, '400');
  assert.match(c.json.error.message, /forbidden/);
  assert.equal(c.headers.get('x-litellm-applied-guardrails'), 'words');
  const m = await messages([{ type: 'text', text: 'FORBIDDEN!' }]);
  assert.equal(m.status, 400);
  assert.equal(m.json.type, 'error');
  assert.match(m.json.error.message, /forbidden/i);
  const r = await responses([{ role: 'user', content: [{ type: 'input_text', text: 'so forbidden' }] }]);
  assert.equal(r.status, 400);
  assert.match(r.json.error.message, /forbidden/);
  assert.equal((await mock.requests()).length, 0, 'a blocked request never reaches the upstream');
});

test('pre_call mask: the upstream gets the masked text on every dialect', async () => {
  await mock.reset();
  const c = await chat('the codename is blue');
  assert.equal(c.status, 200);
  assert.equal(c.headers.get('x-litellm-applied-guardrails'), 'words');
  let b = await lastBody();
  assert.doesNotMatch(JSON.stringify(b), /codename/);
  assert.match(b.messages[0].content, /REDACTED/);
  const m = await messages('my codename');
  assert.equal(m.status, 200);
  b = await lastBody();
  assert.doesNotMatch(JSON.stringify(b), /codename/);
  const r = await responses('a codename "quoted" \\ here');
  assert.equal(r.status, 200);
  b = await lastBody();
  assert.doesNotMatch(JSON.stringify(b), /codename/);
  assert.match(JSON.stringify(b), /quoted/);
});

test('selection: an on-request guardrail runs when the body, metadata, key or team names it; `guardrails` is not forwarded', async () => {
  assert.equal((await chat('onlyifasked')).status, 200, 'not default_on: not run');
  await mock.reset();
  const a = await chat('onlyifasked', { guardrails: ['asked'] });
  assert.equal(a.status, 400);
  assert.match(a.headers.get('x-litellm-applied-guardrails'), /asked/);
  assert.equal((await chat('onlyifasked', { metadata: { guardrails: ['asked'] } })).status, 400);
  assert.equal((await chat('onlyifasked', { metadata: { guardrails: { asked: true } } })).status, 400, 'legacy map');
  assert.equal((await chat('onlyifasked', { guardrails: { asked: { extra_body: { x: 1 } } } })).status, 400);
  assert.equal((await chat('hello', { guardrails: ['asked', 'no-such-guardrail'] })).status, 200);
  assert.equal('guardrails' in (await lastBody()), false, 'the router key is stripped');
  assert.equal((await chat('forbidden', { metadata: { guardrails: { words: false } } })).status, 400,
    'a request cannot turn off a default_on guardrail');
  // a key whose metadata names it, and a team's
  const k = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { guardrails: ['asked'] });
  assert.equal(k.status, 200, k.text);
  let r = await postJSON(`${gw.url}/v1/chat/completions`, { model: 'gpt', messages: [{ role: 'user', content: 'onlyifasked' }] },
    { authorization: `Bearer ${k.json.key}` });
  assert.equal(r.status, 400);
  const t = await api(gw.url, MASTER_KEY, 'POST', '/team/new', { team_alias: 'g', guardrails: ['asked'] });
  assert.equal(t.status, 200, t.text);
  const k2 = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { team_id: t.json.team_id });
  r = await postJSON(`${gw.url}/v1/chat/completions`, { model: 'gpt', messages: [{ role: 'user', content: 'onlyifasked' }] },
    { authorization: `Bearer ${k2.json.key}` });
  assert.equal(r.status, 400);
  const k3 = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', {});
  r = await postJSON(`${gw.url}/v1/chat/completions`, { model: 'gpt', messages: [{ role: 'user', content: 'onlyifasked' }] },
    { authorization: `Bearer ${k3.json.key}` });
  assert.equal(r.status, 200, 'another key is not affected');
});

test('post_call on a JSON answer: block and mask, on chat, /v1/messages and /v1/responses', async () => {
  const asked = { guardrails: ['out'] };
  let r = await chat('hi', { ...asked, mock: { content: 'a zebra appears' } });
  assert.equal(r.status, 400);
  assert.match(r.json.error.message, /zebra/);
  assert.match(r.headers.get('x-litellm-applied-guardrails'), /out/);
  r = await chat('hi', { ...asked, mock: { content: 'a giraffe appears' } });
  assert.equal(r.status, 200);
  assert.doesNotMatch(r.json.choices[0].message.content, /giraffe/);
  assert.match(r.json.choices[0].message.content, /REDACTED/);
  r = await messages('hi', { ...asked, mock: { content: 'zebra' } });
  assert.equal(r.status, 400);
  assert.equal(r.json.type, 'error');
  r = await messages('hi', { ...asked, mock: { content: 'one giraffe' } });
  assert.equal(r.status, 200);
  assert.doesNotMatch(JSON.stringify(r.json.content), /giraffe/);
  r = await responses('hi', { ...asked, mock: { content: 'zebra' } });
  assert.equal(r.status, 400);
  r = await responses('hi', { ...asked, mock: { content: 'tall giraffe' } });
  assert.equal(r.status, 200);
  assert.doesNotMatch(JSON.stringify(r.json.output), /giraffe/);
  r = await chat('hi', { ...asked, mock: { content: 'nothing to see' } });
  assert.equal(r.status, 200);
  assert.equal(r.json.choices[0].message.content, 'nothing to see');
});

test('post_call on a stream: a word split across events ends the stream with an error event', async () => {
  // chunks=N splits the reply into N pieces: "zeb" "ra" lands in two events
  const s = await raw('/v1/chat/completions', { model: 'gpt', stream: true, guardrails: ['out'], messages: [{ role: 'user', content: 'hi' }],
    mock: { content: 'the zeb' + 'ra runs', chunks: 12 } });
  assert.equal(s.status, 200);
  assert.match(s.text, /"error"/);
  assert.match(s.text, /zebra/);
  assert.match(s.text, /data: \[DONE\]/);
  const ok = await raw('/v1/chat/completions', { model: 'gpt', stream: true, guardrails: ['out'], messages: [{ role: 'user', content: 'hi' }],
    mock: { content: 'all calm here', chunks: 3 } });
  assert.doesNotMatch(ok.text, /"error"/);
  assert.match(ok.text, /calm/);
  const m = await raw('/v1/messages', { model: 'claude', max_tokens: 50, stream: true, guardrails: ['out'],
    messages: [{ role: 'user', content: 'hi' }], mock: { content: 'a zebra', chunks: 4 } });
  assert.match(m.text, /event: error/);
  const r = await raw('/v1/responses', { model: 'gpt', stream: true, guardrails: ['out'], input: 'hi', mock: { content: 'a zebra', chunks: 4 } });
  assert.match(r.text, /error/);
  assert.doesNotMatch(r.text, /response\.completed/);
  // masking inside one event rewrites it
  const g = await raw('/v1/chat/completions', { model: 'gpt', stream: true, guardrails: ['out'], messages: [{ role: 'user', content: 'hi' }],
    mock: { content: 'giraffe', chunks: 1 } });
  assert.doesNotMatch(g.text, /giraffe/);
});

test('GET /guardrails/list: names, settings with secrets masked, guardrail_info', async () => {
  const r = await api(gw.url, MASTER_KEY, 'GET', '/guardrails/list');
  assert.equal(r.status, 200);
  const names = r.json.guardrails.map((g) => g.guardrail_name);
  assert.deepEqual(names, ['words', 'asked', 'out']);
  const out = r.json.guardrails[2];
  assert.equal(out.litellm_params.guardrail, 'litellm_content_filter');
  assert.equal(out.litellm_params.api_key, 'sk-s****');
  assert.deepEqual(out.guardrail_info, { owner: 'safety-team' });
  assert.equal(out.litellm_params.blocked_words[0].keyword, 'zebra', 'a keyword is not a secret');
  assert.equal((await fetch(`${gw.url}/guardrails/list`)).status, 401, 'needs a key');
});

test('metrics: LiteLLM guardrail series per guardrail and status', async () => {
  const t = await (await fetch(`${gw.url}/metrics`)).text();
  assert.match(t, /litellm_guardrail_requests_total\{[^}]*guardrail_name="words"[^}]*\} \d+/);
  assert.match(t, /status="blocked"/);
  assert.match(t, /litellm_guardrail_latency_seconds_bucket\{/);
});

test('a 1 MB prompt is checked off the loop: the answer is right and other calls are served meanwhile', async () => {
  const big = 'lorem ipsum '.repeat(90000);
  const [a, b, c] = await Promise.all([
    chat(big + ' forbidden'),
    chat(big + ' codename'),
    chat('small and quick'),
  ]);
  assert.equal(a.status, 400);
  assert.equal(b.status, 200);
  assert.doesNotMatch(JSON.stringify(await lastBody()).slice(-200), /codename/);
  assert.equal(c.status, 200);
});

test('hostile bodies: escaped keys and text, duplicate keys, non-string content, deep arrays', async () => {
  let r = await raw('/v1/chat/completions', JSON.parse('{"model":"gpt","messages":[{"role":"user","con\\u0074ent":"forb\\u0069dden"}]}'));
  assert.equal(r.status, 400, r.text);
  const dup = '{"model":"gpt","messages":[{"role":"user","content":"fine","content":"forbidden"}]}';
  const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...H, 'content-type': 'application/json' }, body: dup });
  assert.equal(res.status, 400, 'the last duplicate is the one checked, as upstreams read it');
  r = await raw('/v1/chat/completions', { model: 'gpt', messages: [{ role: 'user', content: 42 }] });
  assert.notEqual(r.status, 500);
  r = await raw('/v1/chat/completions', { model: 'gpt', messages: [{ role: 'user', content: [{ type: 'text', text: 'forbidden' }, { type: 'image_url', image_url: { url: 'data:x' } }] }] });
  assert.equal(r.status, 400);
});

test('bad configs fail the load naming the guardrail', () => {
  const dir = tmpdir();
  const bad = [
    ['guardrails:\n  - guardrail_name: x\n    litellm_params: {guardrail: litellm_content_filter, mode: sometimes}\n', /guardrail x: mode 'sometimes'/],
    ['guardrails:\n  - litellm_params: {guardrail: litellm_content_filter}\n', /guardrail_name/],
    ['guardrails:\n  - guardrail_name: y\n    litellm_params: {mode: pre_call}\n', /guardrail y: litellm_params.guardrail/],
  ];
  for (const [yaml, re] of bad) {
    const f = path.join(dir, 'c.yaml');
    fs.writeFileSync(f, 'model_list:\n  - model_name: m\n    litellm_params: {model: mock/m}\n' + yaml);
    const p = spawnSync(SWITCHYARD, ['--check-config', '--config', f], { encoding: 'utf8' });
    assert.notEqual(p.status, 0, yaml);
    assert.match(p.stdout + p.stderr, re);
  }
  const f = path.join(dir, 'py.yaml');
  fs.writeFileSync(f, 'model_list:\n  - model_name: m\n    litellm_params: {model: mock/m}\nguardrails:\n  - guardrail_name: py\n    litellm_params: {guardrail: custom_guardrail.MyGuard, mode: pre_call}\n');
  const p = spawnSync(SWITCHYARD, ['--check-config', '--config', f], { encoding: 'utf8' });
  assert.equal(p.status, 0);
  assert.match(p.stdout + p.stderr, /Python code.*generic_guardrail_api/);
});

test('logging_only masks what the logs record, not what the upstream gets; the payload names the guardrails', async () => {
  const { startWebhook } = await import('../logging/lib/webhook.mjs');
  const hook = await startWebhook();
  const g2 = await startGateway(`
model_list:
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-up}
litellm_settings:
  success_callback: ["generic_api"]
  failure_callback: ["generic_api"]
  switchyard_callback_batch_interval: 0.2
guardrails:
  - guardrail_name: logmask
    litellm_params:
      guardrail: litellm_content_filter
      mode: logging_only
      default_on: true
      blocked_words: [{keyword: codename, action: MASK}]
  - guardrail_name: words
    litellm_params:
      guardrail: litellm_content_filter
      mode: pre_call
      default_on: true
      blocked_words: [{keyword: forbidden, action: BLOCK}]
`, { env: { GENERIC_LOGGER_ENDPOINT: hook.url } });
  try {
    await mock.reset();
    const r = await postJSON(`${g2.url}/v1/chat/completions`, { model: 'gpt', messages: [{ role: 'user', content: 'the codename is blue' }] });
    assert.equal(r.status, 200);
    assert.match((await lastBody()).messages[0].content, /codename/, 'the upstream gets the text as sent');
    const b = await postJSON(`${g2.url}/v1/chat/completions`, { model: 'gpt', messages: [{ role: 'user', content: 'forbidden' }] });
    assert.equal(b.status, 400);
    assert.ok(await hook.waitRecords(2, 15000), `2 records, got ${hook.records().length}`);
    const recs = hook.records();
    const ok = recs.find((x) => x.status === 'success');
    assert.doesNotMatch(JSON.stringify(ok.messages), /codename/);
    assert.match(JSON.stringify(ok.messages), /REDACTED/);
    const info = ok.guardrail_information;
    assert.ok(Array.isArray(info) && info.some((i) => i.guardrail_name === 'logmask' && i.guardrail_mode === 'logging_only'));
    const bad = recs.find((x) => x.status === 'failure');
    assert.equal(bad.status_fields?.guardrail_status ?? 'guardrail_intervened', 'guardrail_intervened');
  } finally { await g2.stop(); await hook.stop?.(); }
});
