// visible.test.mjs - what a guardrail check leaves behind, through the real
// binary: the litellm_guardrail_* Prometheus series (exact counts per
// guardrail, status and hook), the logging payload (guardrail_information,
// status_fields.guardrail_status, metadata.applied_guardrails; the generic_api
// webhook sink) and the spend row's metadata (LiteLLM_SpendLogs on the
// embedded database), for calls that pass, are masked and are blocked before
// and after the upstream call; and a call without guardrails that carries none
// of it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, postJSON, api, MASTER_KEY, sha256hex, until } from '../lib/harness.mjs';
import { startWebhook } from '../logging/lib/webhook.mjs';

let mock, gw, hook, key, plainKey;

const config = (base) => `
model_list:
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o, api_base: "${base}", api_key: sk-up}
general_settings:
  master_key: ${MASTER_KEY}
  proxy_batch_write_at: 0.1
litellm_settings:
  success_callback: ["generic_api"]
  failure_callback: ["generic_api"]
  switchyard_callback_batch_interval: 0.1
guardrails:
  - guardrail_name: words
    litellm_params:
      guardrail: litellm_content_filter
      mode: pre_call
      blocked_words:
        - {keyword: forbidden, action: BLOCK}
        - {keyword: codename, action: MASK}
  - guardrail_name: out
    litellm_params:
      guardrail: litellm_content_filter
      mode: post_call
      blocked_words:
        - {keyword: zebra, action: BLOCK}
        - {keyword: giraffe, action: MASK}
`;

// The cases, each tagged so its log record and spend row can be found.
const CASES = [
  { tag: 'pass', content: 'hello there', status: 200, gs: 'success', checks: [['words', 'pre_call', 'success'], ['out', 'post_call', 'success']] },
  { tag: 'mask-in', content: 'my codename is kestrel', status: 200, gs: 'guardrail_intervened', checks: [['words', 'pre_call', 'guardrail_intervened'], ['out', 'post_call', 'success']] },
  { tag: 'block-in', content: 'this is forbidden', status: 400, gs: 'guardrail_intervened', checks: [['words', 'pre_call', 'guardrail_intervened']] },
  { tag: 'block-out', content: 'hi', reply: 'a zebra appears', status: 400, gs: 'guardrail_intervened', checks: [['words', 'pre_call', 'success'], ['out', 'post_call', 'guardrail_intervened']] },
  { tag: 'mask-out', content: 'hi', reply: 'one giraffe here', status: 200, gs: 'guardrail_intervened', checks: [['words', 'pre_call', 'success'], ['out', 'post_call', 'guardrail_intervened']] },
];
const results = {};

before(async () => {
  mock = await startMock();
  hook = await startWebhook();
  gw = await startGateway(config(mock.base), { workers: 2, env: { GENERIC_LOGGER_ENDPOINT: hook.url } });
  const k = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { guardrails: ['words', 'out'] });
  assert.equal(k.status, 200, k.text);
  key = k.json.key;
  const p = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', {});
  assert.equal(p.status, 200, p.text);
  plainKey = p.json.key;
  for (const c of CASES) {
    const body = { model: 'gpt', messages: [{ role: 'user', content: c.content }], metadata: { tags: [c.tag] } };
    if (c.reply) body.mock = { content: c.reply };
    const r = await postJSON(`${gw.url}/v1/chat/completions`, body, { authorization: `Bearer ${key}` });
    assert.equal(r.status, c.status, `${c.tag}: ${r.text}`);
    results[c.tag] = r;
  }
  const r = await postJSON(`${gw.url}/v1/chat/completions`,
    { model: 'gpt', messages: [{ role: 'user', content: 'forbidden zebra' }], metadata: { tags: ['none'] } },
    { authorization: `Bearer ${plainKey}` });
  assert.equal(r.status, 200, 'a key without guardrails runs none');
  results.none = r;
});
after(async () => { await gw?.stop(); await hook?.stop(); await mock?.stop(); });

// The value of the one sample line `name{labels}` in the exposition text (0 when absent).
function sample(text, name, labels) {
  const want = `${name}{${Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',')}} `;
  const line = text.split('\n').find((l) => l.startsWith(want));
  return line ? Number(line.slice(want.length)) : 0;
}

test('metrics: every check counted per guardrail, status and hook, with its latency; no errors', async () => {
  const t = await (await fetch(`${gw.url}/metrics`)).text();
  const req = (g, status, hook_type) => sample(t, 'litellm_guardrail_requests_total', { guardrail_name: g, status, hook_type });
  assert.equal(req('words', 'success', 'pre_call'), 3);
  assert.equal(req('words', 'masked', 'pre_call'), 1);
  assert.equal(req('words', 'blocked', 'pre_call'), 1);
  assert.equal(req('out', 'success', 'post_call'), 2);
  assert.equal(req('out', 'blocked', 'post_call'), 1);
  assert.equal(req('out', 'masked', 'post_call'), 1);
  const total = t.split('\n').filter((l) => l.startsWith('litellm_guardrail_requests_total{'))
    .reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  assert.equal(total, 9, 'nine checks in all (the call without guardrails ran none)');
  const lat = (g, status, hook_type, suffix, extra = {}) => sample(t, `litellm_guardrail_latency_seconds${suffix}`,
    { guardrail_name: g, status, error_type: 'none', hook_type, ...extra });
  assert.equal(lat('words', 'success', 'pre_call', '_count'), 3);
  assert.equal(lat('words', 'success', 'pre_call', '_bucket', { le: '+Inf' }), 3);
  assert.equal(lat('out', 'blocked', 'post_call', '_count'), 1);
  assert.ok(lat('words', 'success', 'pre_call', '_sum') >= 0);
  assert.match(t, /# HELP litellm_guardrail_errors_total Total number of errors encountered during guardrail execution\n# TYPE litellm_guardrail_errors_total counter\n/);
  assert.doesNotMatch(t, /litellm_guardrail_errors_total\{/, 'an in-process block or mask is no error');
});

test('logging payload: guardrail_information, guardrail_status and applied_guardrails of each call', async () => {
  assert.ok(await hook.waitRecords(CASES.length + 1, 15000), `got ${hook.records().length} records`);
  const recs = hook.records();
  const byTag = (tag) => recs.find((r) => Array.isArray(r.request_tags) && r.request_tags.includes(tag));
  for (const c of CASES) {
    const r = byTag(c.tag);
    assert.ok(r, `a record tagged ${c.tag}`);
    assert.equal(r.status, c.status === 200 ? 'success' : 'failure', c.tag);
    assert.equal(r.status_fields.guardrail_status, c.gs, c.tag);
    assert.equal(r.status_fields.llm_api_status, r.status, c.tag);
    const gi = r.guardrail_information;
    assert.ok(Array.isArray(gi), `${c.tag}: ${JSON.stringify(gi)}`);
    assert.deepEqual(gi.map((e) => [e.guardrail_name, e.guardrail_mode, e.guardrail_status]), c.checks, c.tag);
    for (const e of gi) {
      assert.equal(e.guardrail_provider, 'litellm_content_filter');
      assert.equal(typeof e.duration, 'number');
      assert.ok(e.end_time >= e.start_time && Math.abs(e.start_time - r.startTime) < 60, `${c.tag}: times ${JSON.stringify(e)}`);
    }
    assert.deepEqual(r.metadata.applied_guardrails, [...new Set(c.checks.map((x) => x[0]))], c.tag);
  }
  // what the upstream and the logs saw of a masked prompt: the masked text
  assert.doesNotMatch(JSON.stringify(byTag('mask-in').messages), /codename/);
  const none = byTag('none');
  assert.ok(none, 'the call without guardrails is logged');
  assert.equal(none.guardrail_information, null);
  assert.equal(none.metadata.applied_guardrails, null);
  assert.equal(none.status_fields.guardrail_status, 'not_run');
});

test('spend row: the metadata carries guardrail_information and applied_guardrails', async () => {
  const hash = await sha256hex(key);
  // every routed call has a row: a pre_call block is refused before routing, and has none
  let rows = [];
  assert.ok(await until(async () => {
    const r = await api(gw.url, MASTER_KEY, 'GET', `/spend/logs?api_key=${hash}`);
    rows = r.status === 200 && Array.isArray(r.json) ? r.json : [];
    return rows.length >= CASES.length - 1;
  }, 15000), `spend rows: ${JSON.stringify(rows.map((x) => x.request_id))}`);
  assert.equal(rows.length, CASES.length - 1);
  const meta = (row) => (typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata);
  // a row's request_id: the response's id, or the call id for a failure
  const idOf = (r) => (r.status === 200 ? r.json.id : r.headers.get('x-litellm-call-id'));
  for (const c of CASES.filter((x) => x.tag !== 'block-in')) {
    const row = rows.find((x) => x.request_id === idOf(results[c.tag]));
    assert.ok(row, `a spend row for ${c.tag}: ${JSON.stringify(rows.map((x) => x.request_id))}`);
    assert.equal(row.status, c.status === 200 ? 'success' : 'failure', c.tag);
    const m = meta(row);
    assert.deepEqual(m.guardrail_information.map((e) => [e.guardrail_name, e.guardrail_mode, e.guardrail_status]), c.checks, c.tag);
    assert.deepEqual(m.applied_guardrails, [...new Set(c.checks.map((x) => x[0]))], c.tag);
  }
  const ph = await sha256hex(plainKey);
  const r = await api(gw.url, MASTER_KEY, 'GET', `/spend/logs?api_key=${ph}`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.length, 1);
  const m = meta(r.json[0]);
  assert.equal(m.guardrail_information, null);
  assert.deepEqual(m.applied_guardrails, []);
});
