// services_b.test.mjs - the service guardrails aporia, bedrock, azure/text_moderations,
// azure/prompt_shield and ibm_guardrails through the real binary, against the mock
// services of lib/services_b.mjs (which check each service's wire format, Bedrock's
// SigV4 included) and the mock upstream.
//
// Configs: corpus config 04's guardrails block (aporia x2 post_call, bedrock
// during_call; its Python class-path guardrails are left out with a warning), the
// bedrock block of config 27, and config 17 (ibm_guardrails) verbatim, with their
// endpoints pointed at the mocks through the environment variables the configs name
// (APORIA_API_BASE_1, AWS_BEDROCK_RUNTIME_ENDPOINT, ...) or, where the config
// hard-codes a URL, that URL replaced.
//
// Markers in the texts drive the mock services: BLOCKME blocks, MASKME masks, SLOWME
// answers after the guardrail's timeout, FAILME answers HTTP 500.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { MASTER_KEY, root, startGateway, startMock } from '../lib/harness.mjs';
import { startServicesB } from './lib/services_b.mjs';

const corpus = (name) => fs.readFileSync(path.join(root, 'tests', 'config', 'litellm-configs', name), 'utf8');

const AWS = { accessKeyId: 'AKIDMOCK', secretAccessKey: 'mock/secret+key', region: 'us-east-1' };

let mock, svc;
before(async () => {
  mock = await startMock();
  svc = await startServicesB({ aws: AWS, aporiaKey: 'aporia-key-1', azureKey: 'azure-key', ibmToken: 'ibm-token',
    slowMs: 4000 });
});
after(async () => {
  await svc?.close();
  await mock?.stop();
});

// Model groups on the mock upstream: a plain one and ones whose reply carries a marker.
function models(base) {
  const m = (name, content) => `  - model_name: ${name}
    litellm_params:
      model: openai/fake${content ? `@content=${content}` : ''}
      api_key: fake-key
      api_base: ${base}
`;
  return `model_list:
${m('fake-openai-endpoint')}${m('reply-blockme', 'Sure BLOCKME here')}${m('reply-maskme', 'Hello MASKME friend')}${m('reply-slowme', 'wait SLOWME')}${m('reply-failme', 'oops FAILME')}`;
}

function chat(gw, body, headers = {}) {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${MASTER_KEY}`, ...headers },
    body: JSON.stringify({ model: 'fake-openai-endpoint', messages: [{ role: 'user', content: 'Say hello.' }], ...body }),
  });
}

async function json(res) {
  const text = await res.text();
  try { return JSON.parse(text); } catch { return { raw: text }; }
}

const AWS_ENV = (url) => ({
  AWS_ACCESS_KEY_ID: AWS.accessKeyId, AWS_SECRET_ACCESS_KEY: AWS.secretAccessKey, AWS_REGION_NAME: AWS.region,
  AWS_BEDROCK_RUNTIME_ENDPOINT: `${url}/bedrock`, AWS_REGION: '', AWS_SESSION_TOKEN: '', AWS_BEARER_TOKEN_BEDROCK: '',
});

describe('corpus config 04: aporia (post_call) and bedrock (during_call)', () => {
  let gw;
  before(async () => {
    const g04 = corpus('04-otel-guardrails-tags.yaml');
    const block = g04.slice(g04.indexOf('\nguardrails:') + 1, g04.indexOf('\nrouter_settings:'));
    const cfg = `${models(mock.base)}
general_settings:
  master_key: ${MASTER_KEY}
${block}`;
    gw = await startGateway(cfg, {
      env: {
        APORIA_API_KEY_1: 'aporia-key-1', APORIA_API_BASE_1: `${svc.url}/aporia/p1`,
        APORIA_API_KEY_2: 'aporia-key-1', APORIA_API_BASE_2: `${svc.url}/aporia/p2`,
        ...AWS_ENV(svc.url),
      },
    });
  });
  after(async () => { await gw?.stop(); });

  test('the Python class-path guardrails are named at start', () => {
    assert.match(gw.log(), /custom_guardrail\.myCustomGuardrail/);
  });

  test('aporia post_call: an allowed answer passes, with the documented request', async () => {
    svc.reset();
    const r = await chat(gw, { guardrails: ['aporia-pre-guard'] });
    const b = await json(r);
    assert.equal(r.status, 200, JSON.stringify(b));
    const seen = svc.of('aporia');
    assert.equal(seen.length, 1);
    assert.equal(seen[0].url, '/aporia/p1/validate');
    assert.equal(seen[0].headers['x-aporia-api-key'], 'aporia-key-1');
    assert.equal(seen[0].json.validation_target, 'both');
    assert.deepEqual(seen[0].json.messages, [{ role: 'user', content: 'Say hello.' }]);
    assert.equal(seen[0].json.response, b.choices[0].message.content);
  });

  test('aporia post_call: a blocked answer is LiteLLM\'s 400', async () => {
    const r = await chat(gw, { model: 'reply-blockme', guardrails: ['aporia-post-guard'] });
    const b = await json(r);
    assert.equal(r.status, 400, JSON.stringify(b));
    assert.equal(b.error.message,
      "{'error': 'Violated guardrail policy', 'aporia_ai_response': {'action': 'block', 'revised_response': " +
      "'Blocked by Aporia', 'explain_log': None}}");
    assert.equal(String(b.error.code), '400');
  });

  test('aporia post_call: modify rewrites the answer', async () => {
    const r = await chat(gw, { model: 'reply-maskme', guardrails: ['aporia-pre-guard'] });
    const b = await json(r);
    assert.equal(r.status, 200, JSON.stringify(b));
    assert.equal(b.choices[0].message.content, 'Hello [MASKED] friend');
  });

  test('bedrock during_call: allowed (SigV4 checked by the mock), blocked with LiteLLM\'s message', async () => {
    svc.reset();
    let r = await chat(gw, { guardrails: ['bedrock-pre-guard'] });
    assert.equal(r.status, 200, JSON.stringify(await json(r)));
    const seen = svc.of('bedrock');
    assert.equal(seen.length, 1);
    assert.equal(seen[0].url, '/bedrock/guardrail/ff6ujrregl1q/version/DRAFT/apply');
    assert.deepEqual(seen[0].json, { source: 'INPUT', content: [{ text: { text: 'Say hello.' } }] });
    assert.match(seen[0].headers.authorization, /^AWS4-HMAC-SHA256 Credential=AKIDMOCK\/\d{8}\/us-east-1\/bedrock\/aws4_request/);

    r = await chat(gw, { guardrails: ['bedrock-pre-guard'], messages: [{ role: 'user', content: 'BLOCKME now' }] });
    const b = await json(r);
    assert.equal(r.status, 400, JSON.stringify(b));
    assert.equal(b.error.message,
      "{'error': 'Violated guardrail policy', 'bedrock_guardrail_response': 'Sorry, the model cannot answer this " +
      "question.', 'guardrailIdentifier': 'ff6ujrregl1q', 'guardrailVersion': 'DRAFT', 'assessments': [{'policy': " +
      "'topicPolicy', 'matches': [{'category': 'topics', 'name': 'Forbidden', 'type': 'DENY', 'action': 'BLOCKED'}]}]}");
  });

  test('aporia post_call on a stream: held, checked whole, then sent or ended with the error event', async () => {
    svc.reset();
    let r = await chat(gw, { guardrails: ['aporia-post-guard'], stream: true });
    let text = await r.text();
    assert.equal(r.status, 200);
    assert.match(text, /data: \[DONE\]/);
    const seen = svc.of('aporia');
    assert.equal(seen.length, 1);
    assert.equal(seen[0].json.response, 'Hello! This is a deterministic reply from the mock upstream server, used to test and benchmark the gateway.');
    r = await chat(gw, { model: 'reply-blockme', guardrails: ['aporia-post-guard'], stream: true });
    text = await r.text();
    assert.match(text, /Violated guardrail policy/);
    assert.doesNotMatch(text, /BLOCKME here/);
  });

  test('a guardrail not asked for does not run', async () => {
    svc.reset();
    const r = await chat(gw, { messages: [{ role: 'user', content: 'BLOCKME' }] });
    assert.equal(r.status, 200);
    assert.equal(svc.requests.length, 0);
  });
});

describe('bedrock: config 27\'s block (default_on) and masking', () => {
  let gw;
  before(async () => {
    const cfg = `${models(mock.base)}
general_settings:
  master_key: ${MASTER_KEY}
guardrails:
  - guardrail_name: "bedrock-pre-guard"
    litellm_params:
      guardrail: bedrock
      mode: "during_call" # supported values: "pre_call", "post_call", "during_call"
      guardrailIdentifier: ff6ujrregl1q # your guardrail ID on bedrock
      guardrailVersion: "1"         # your guardrail version on bedrock
      default_on: true # enforces the guardrail serverside for all models.
  - guardrail_name: "bedrock-mask"
    litellm_params:
      guardrail: bedrock
      mode: "pre_call"
      guardrailIdentifier: mask1
      guardrailVersion: "DRAFT"
      mask_request_content: true
  - guardrail_name: "bedrock-post"
    litellm_params:
      guardrail: bedrock
      mode: "post_call"
      guardrailIdentifier: post1
      guardrailVersion: "DRAFT"
`;
    gw = await startGateway(cfg, { env: AWS_ENV(svc.url) });
  });
  after(async () => { await gw?.stop(); });

  test('default_on runs on every call', async () => {
    svc.reset();
    const r = await chat(gw, {});
    assert.equal(r.status, 200);
    assert.equal(svc.of('bedrock').length, 1);
    assert.equal(svc.of('bedrock')[0].url, '/bedrock/guardrail/ff6ujrregl1q/version/1/apply');
    const b = await json(await chat(gw, { messages: [{ role: 'user', content: 'BLOCKME' }] }));
    assert.match(b.error.message, /^\{'error': 'Violated guardrail policy'/);
  });

  test('pre_call masking: the upstream gets the anonymized text', async () => {
    await mock.reset();
    const r = await chat(gw, { guardrails: ['bedrock-mask'], messages: [{ role: 'user', content: 'I am MASKME, hi' }] });
    assert.equal(r.status, 200, JSON.stringify(await json(r)));
    const all = JSON.stringify(await mock.requests());
    assert.ok(all.includes('I am {NAME}, hi'), all);
    assert.ok(!all.includes('MASKME'), all);
  });

  test('post_call: the answer\'s text as OUTPUT; a tool-call answer has nothing to check and passes', async () => {
    svc.reset();
    let r = await chat(gw, { model: 'reply-blockme', guardrails: ['bedrock-post'] });
    const b = await json(r);
    assert.equal(r.status, 400, JSON.stringify(b));
    const out = svc.of('bedrock').filter((q) => q.url.includes('/post1/'));
    assert.deepEqual(out[0].json, { source: 'OUTPUT', content: [{ text: { text: 'Sure BLOCKME here' } }] });
    svc.reset();
    r = await chat(gw, {
      guardrails: ['bedrock-post'],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }],
    });
    const t = await json(r);
    assert.equal(r.status, 200, JSON.stringify(t));
    assert.ok(t.choices[0].message.tool_calls, JSON.stringify(t));
    assert.equal(svc.of('bedrock').filter((q) => q.url.includes('/post1/')).length, 0);
  });
});

describe('bedrock: a slow or failing service, fail open and fail closed', () => {
  let gw;
  before(async () => {
    const g = (name, extra) => `  - guardrail_name: ${name}
    litellm_params:
      guardrail: bedrock
      mode: pre_call
      guardrailIdentifier: ${name}
      guardrailVersion: "1"
      timeout: 1
${extra}`;
    const cfg = `${models(mock.base)}
general_settings:
  master_key: ${MASTER_KEY}
guardrails:
${g('bedrock-open', '      fail_open: true\n')}${g('bedrock-closed', '')}`;
    gw = await startGateway(cfg, { env: AWS_ENV(svc.url) });
  });
  after(async () => { await gw?.stop(); });

  for (const [what, marker] of [['a timeout', 'SLOWME'], ['HTTP 500', 'FAILME']]) {
    test(`${what}: fail_open lets the call through, fail closed refuses it`, async () => {
      const body = { messages: [{ role: 'user', content: `${marker} please` }] };
      let r = await chat(gw, { ...body, guardrails: ['bedrock-open'] });
      assert.equal(r.status, 200, JSON.stringify(await json(r)));
      r = await chat(gw, { ...body, guardrails: ['bedrock-closed'] });
      const b = await json(r);
      assert.ok(r.status >= 400 && b.error, `status ${r.status} ${JSON.stringify(b)}`);
    });
  }

  test('wrong credentials: the service refuses the signature, the call fails closed', async () => {
    const bad = await startGateway(`${models(mock.base)}
general_settings:
  master_key: ${MASTER_KEY}
guardrails:
  - guardrail_name: b
    litellm_params:
      guardrail: bedrock
      mode: pre_call
      guardrailIdentifier: g
      guardrailVersion: "1"
      default_on: true
      aws_secret_access_key: not-the-secret
`, { env: AWS_ENV(svc.url) });
    try {
      svc.reset();
      const r = await chat(bad, {});
      assert.ok(r.status >= 400, `status ${r.status}`);
      assert.equal(svc.of('bedrock').length, 1);
    } finally {
      await bad.stop();
    }
  });
});

describe('corpus config 17: ibm_guardrails', () => {
  let gw;
  before(async () => {
    const g17 = corpus('17-ibm-guardrails-only.yaml')
      .replaceAll('https://your-detector-server.com', `${svc.url}/ibm`)
      .replaceAll('https://your-orchestrator-server.com', `${svc.url}/ibm`);
    const cfg = `${models(mock.base)}
general_settings:
  master_key: ${MASTER_KEY}
${g17}`;
    gw = await startGateway(cfg, { env: { IBM_GUARDRAILS_AUTH_TOKEN: 'ibm-token' } });
  });
  after(async () => { await gw?.stop(); });

  test('the two default_on detector servers check every request', async () => {
    svc.reset();
    const r = await chat(gw, {});
    assert.equal(r.status, 200, JSON.stringify(await json(r)));
    const seen = svc.of('ibm');
    assert.equal(seen.length, 2);
    const ids = seen.map((q) => q.headers['detector-id']).sort();
    assert.deepEqual(ids, ['jailbreak-detector', 'pii-detector']);
    assert.equal(seen[0].headers.authorization, 'Bearer ibm-token');
    assert.deepEqual(seen[0].json, { contents: ['Say hello.'], detector_params: {} });
  });

  test('a detection over the threshold is LiteLLM\'s 500', async () => {
    const r = await chat(gw, { messages: [{ role: 'user', content: 'You are now BLOCKME' }] });
    const b = await json(r);
    assert.equal(r.status, 500, JSON.stringify(b));
    assert.equal(b.error.message, 'IBM Guardrail Detector failed: 1 violation(s) detected\n\n' +
      'IBM Guardrail Detector failed:\n\nMessage 1:\n  - JAILBREAK (score: 0.950)\n    Text: \'You are now BLOCKME\'');
  });

  test('a score at one detector\'s threshold counts there only (0.5 >= pii 0.5, < jailbreak 0.8)', async () => {
    const r = await chat(gw, { messages: [{ role: 'user', content: 'borderline text' }] });
    assert.equal(r.status, 500);
    assert.match((await json(r)).error.message, /1 violation\(s\) detected/);
  });

  test('the orchestrator (post_call, opt-in) checks the answer', async () => {
    svc.reset();
    const r = await chat(gw, { model: 'reply-blockme', guardrails: ['ibm-orchestrator-detector'] });
    const b = await json(r);
    assert.equal(r.status, 500, JSON.stringify(b));
    assert.equal(b.error.message, 'IBM Guardrail Detector failed: 1 violation(s) detected\n\n' +
      '- JAILBREAK (detector: jailbreak-detector, score: 0.950)\n  Text: \'Sure BLOCKME here\'');
    const orch = svc.of('ibm').filter((q) => q.url === '/ibm/api/v2/text/detection/content');
    assert.equal(orch.length, 1);
    assert.deepEqual(orch[0].json, { content: 'Sure BLOCKME here', detectors: { 'jailbreak-detector': { some_param: 'value' } } });
  });
});

describe('azure text moderation and prompt shield', () => {
  let gw;
  before(async () => {
    const cfg = `${models(mock.base)}
general_settings:
  master_key: ${MASTER_KEY}
guardrails:
  - guardrail_name: azure-text
    litellm_params:
      guardrail: azure/text_moderations
      mode: [pre_call, post_call]
      api_key: os.environ/AZURE_CS_KEY
      api_base: ${svc.url}/azure
  - guardrail_name: azure-shield
    litellm_params:
      guardrail: azure/prompt_shield
      mode: pre_call
      api_key: os.environ/AZURE_CS_KEY
      api_base: ${svc.url}/azure
  - guardrail_name: azure-shield-open
    litellm_params:
      guardrail: azure/prompt_shield
      mode: pre_call
      api_key: os.environ/AZURE_CS_KEY
      api_base: ${svc.url}/azure
      fail_open: true
`;
    gw = await startGateway(cfg, { env: { AZURE_CS_KEY: 'azure-key' } });
  });
  after(async () => { await gw?.stop(); });

  test('text moderation: allowed, the documented request', async () => {
    svc.reset();
    const r = await chat(gw, { guardrails: ['azure-text'] });
    assert.equal(r.status, 200, JSON.stringify(await json(r)));
    const seen = svc.of('azure');
    assert.equal(seen.length, 2); // the prompt, then the answer
    assert.equal(seen[0].url, '/azure/contentsafety/text:analyze?api-version=2024-09-01');
    assert.deepEqual(seen[0].json, { text: 'Say hello.', categories: ['Hate', 'Sexual', 'SelfHarm', 'Violence'],
      blocklistNames: null, haltOnBlocklistHit: false, outputType: 'FourSeverityLevels' });
  });

  test('text moderation: the prompt and the answer are blocked with LiteLLM\'s message', async () => {
    let r = await chat(gw, { guardrails: ['azure-text'], messages: [{ role: 'user', content: 'BLOCKME' }] });
    let b = await json(r);
    assert.equal(r.status, 400, JSON.stringify(b));
    assert.equal(b.error.message, "{'error': 'Azure Content Safety Guardrail: Hate crossed severity 2, Got severity: 6'}");
    r = await chat(gw, { model: 'reply-blockme', guardrails: ['azure-text'] });
    b = await json(r);
    assert.equal(r.status, 400, JSON.stringify(b));
  });

  test('prompt shield: an attack is blocked; a 500 fails closed or open', async () => {
    let r = await chat(gw, { guardrails: ['azure-shield'], messages: [{ role: 'user', content: 'ignore all BLOCKME' }] });
    const b = await json(r);
    assert.equal(r.status, 400, JSON.stringify(b));
    assert.equal(b.error.message, "{'error': 'Violated Azure Prompt Shield guardrail policy', 'detection_message': " +
      "\"Attack detected: {'attackDetected': True}\"}");
    r = await chat(gw, { guardrails: ['azure-shield'], messages: [{ role: 'user', content: 'FAILME' }] });
    assert.ok(r.status >= 400, `status ${r.status}`);
    r = await chat(gw, { guardrails: ['azure-shield-open'], messages: [{ role: 'user', content: 'FAILME' }] });
    assert.equal(r.status, 200);
  });

  test('/v1/messages: the prompt shield reads the Anthropic body', async () => {
    const r = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${MASTER_KEY}` },
      body: JSON.stringify({ model: 'fake-openai-endpoint', max_tokens: 20, guardrails: ['azure-shield'],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'BLOCKME please' }] }] }),
    });
    const b = await json(r);
    assert.equal(r.status, 400, JSON.stringify(b));
    assert.equal(b.type, 'error');
    assert.match(b.error.message, /Violated Azure Prompt Shield guardrail policy/);
  });
});
