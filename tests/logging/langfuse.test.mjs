// langfuse.test.mjs - the langfuse sink end to end: switchyard with
// success_callback / failure_callback ["langfuse"] posts trace-create and
// generation-create events to a receiver (lib/langfuse.mjs) that validates
// them with Langfuse's own ingestion schemas; per-team (default_team_settings)
// and per-key (metadata.logging) Langfuse projects go to their own receivers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, startMock, chatBody, postJSON, until, sleep, api, MASTER_KEY } from '../lib/harness.mjs';
import { startLangfuse } from './lib/langfuse.mjs';

let mock;
before(async () => { mock = await startMock(); });
after(async () => { await mock?.stop(); });

const IN = 0.000001, OUT = 0.000002;
const models = (base) => `
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${base}", api_key: sk-up, input_cost_per_token: ${IN}, output_cost_per_token: ${OUT}}
`;

function config(base, extra = '', settings = '') {
  return `${models(base)}
litellm_settings:
  success_callback: ["langfuse"]
  failure_callback: ["langfuse"]
  switchyard_callback_batch_interval: 0.2
${settings}
${extra}`;
}

const envFor = (lf, pk = 'pk-lf-test', sk = 'sk-lf-test') =>
  ({ LANGFUSE_PUBLIC_KEY: pk, LANGFUSE_SECRET_KEY: sk, LANGFUSE_HOST: lf.url });

const iso = (s) => Date.parse(s);

function assertValid(lf) {
  assert.deepEqual(lf.invalid.map((i) => i.issues), [], 'every event passes Langfuse\'s schemas');
}

test('a call becomes a trace and a generation with its ids, model, usage, cost, timings and tags', async () => {
  const lf = await startLangfuse();
  const gw = await startGateway(config(mock.base), { env: envFor(lf) });
  try {
    const t0 = Date.now();
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o', {
      temperature: 0.3, stop: ['\n\n'], user: 'end-user-1',
      metadata: { tags: ['team:blue'], session_id: 'sess-1', generation_name: 'greet', trace_user_id: 'alice' },
    }));
    assert.equal(r.status, 200, r.text);
    const callId = r.headers.get('x-litellm-call-id');
    assert.ok(callId, 'x-litellm-call-id');
    assert.ok(await until(() => lf.byTrace(callId).generation, 15000), `events: ${JSON.stringify(lf.requests)}\n${gw.log()}`);
    assertValid(lf);
    const { trace, generation } = lf.byTrace(callId);
    assert.ok(trace, 'the trace');
    assert.equal(lf.requests[0].headers['content-type'], 'application/json');
    assert.equal(trace.publicKey, 'pk-lf-test');
    assert.equal(trace.batchMetadata.sdk_integration, 'litellm');

    // the trace
    assert.equal(trace.body.name, 'litellm-acompletion');
    assert.equal(trace.body.sessionId, 'sess-1');
    assert.equal(trace.body.userId, 'alice');
    assert.ok(trace.body.tags.includes('team:blue'), JSON.stringify(trace.body.tags));
    assert.equal(trace.body.input.messages.at(-1).content, 'Say hello.');
    assert.equal(trace.body.output.content, r.json.choices[0].message.content);

    // the generation
    const g = generation.body;
    assert.equal(g.name, 'greet');
    assert.equal(g.level, 'DEFAULT');
    assert.match(g.id, new RegExp(`^time-\\d\\d-\\d\\d-\\d\\d-\\d{6}_${r.json.id}$`));
    assert.match(g.model, /gpt-4o/);
    assert.equal(g.modelParameters.temperature, 0.3);
    assert.equal(g.modelParameters.stop, "['\\n\\n']", 'a list as Python prints it');
    assert.equal(g.usage.input, r.json.usage.prompt_tokens);
    assert.equal(g.usage.output, r.json.usage.completion_tokens);
    assert.equal(g.usage.unit, 'TOKENS');
    assert.equal(g.usageDetails.total, r.json.usage.total_tokens);
    const cost = r.json.usage.prompt_tokens * IN + r.json.usage.completion_tokens * OUT;
    assert.ok(Math.abs(g.usage.totalCost - cost) < 1e-12, `cost ${g.usage.totalCost} vs ${cost}`);
    assert.ok(Math.abs(g.metadata.litellm_response_cost - cost) < 1e-12);
    const start = iso(g.startTime), cst = iso(g.completionStartTime), end = iso(g.endTime);
    assert.ok(start >= t0 - 2000 && start <= cst && cst <= end && end <= Date.now(), `${g.startTime} ${g.completionStartTime} ${g.endTime}`);
    assert.equal(g.metadata.model_group, 'gpt-4o');
    assert.equal(g.metadata.cache_hit, false);
    assert.equal(g.metadata.requester_metadata.session_id, 'sess-1');
    assert.equal(g.input.messages.length, 2);
    assert.equal(g.output.content, r.json.choices[0].message.content);
  } finally {
    assert.equal(await gw.stop(), 0);
    await lf.stop();
  }
});

test('a stream: completionStartTime at the first token, the usage of the whole answer', async () => {
  const lf = await startLangfuse();
  const gw = await startGateway(config(mock.base), { env: envFor(lf) });
  try {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('gpt-4o', { stream: true, stream_options: { include_usage: true },
        mock: { chunk_delay_ms: 30 } })),
    });
    assert.equal(res.status, 200);
    const callId = res.headers.get('x-litellm-call-id');
    const text = await res.text();
    const usage = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)))
      .find((c) => c.usage)?.usage;
    assert.ok(usage, 'the stream carried usage');
    const content = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)))
      .map((c) => c.choices?.[0]?.delta?.content || '').join('');
    assert.ok(await until(() => lf.byTrace(callId).generation, 15000), gw.log());
    assertValid(lf);
    const g = lf.byTrace(callId).generation.body;
    assert.equal(g.usage.input, usage.prompt_tokens);
    assert.equal(g.usage.output, usage.completion_tokens);
    assert.equal(g.modelParameters.stream, true);
    const start = iso(g.startTime), cst = iso(g.completionStartTime), end = iso(g.endTime);
    assert.ok(start <= cst && cst < end, `first token before the end: ${g.startTime} ${g.completionStartTime} ${g.endTime}`);
    assert.equal(g.output.content, content, 'the assembled answer');
  } finally {
    assert.equal(await gw.stop(), 0);
    await lf.stop();
  }
});

test('a failed call: level ERROR, the error as statusMessage and output, no usage', async () => {
  const lf = await startLangfuse();
  const gw = await startGateway(config(mock.base), { env: envFor(lf) });
  try {
    const r = await postJSON(`${gw.url}/v1/chat/completions`,
      chatBody('gpt-4o', { mock: { status: 400, error_message: 'bad things' }, num_retries: 0 }));
    assert.equal(r.status, 400);
    const callId = r.headers.get('x-litellm-call-id');
    assert.ok(await until(() => lf.byTrace(callId).generation, 15000), gw.log());
    assertValid(lf);
    const { trace, generation } = lf.byTrace(callId);
    const g = generation.body;
    assert.equal(g.level, 'ERROR');
    assert.match(g.statusMessage, /bad things/);
    assert.equal(g.output, g.statusMessage);
    assert.equal(g.usage, undefined);
    assert.equal(trace.body.output, undefined);
    assert.equal(trace.body.input.messages.at(-1).content, 'Say hello.');
  } finally {
    assert.equal(await gw.stop(), 0);
    await lf.stop();
  }
});

test('turn_off_message_logging and redact_user_api_key_info: no text, no key fields', async () => {
  const lf = await startLangfuse();
  const gw = await startGateway(config(mock.base, '', '  turn_off_message_logging: true\n  redact_user_api_key_info: true'),
    { env: envFor(lf) });
  try {
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'));
    assert.equal(r.status, 200);
    const callId = r.headers.get('x-litellm-call-id');
    assert.ok(await until(() => lf.byTrace(callId).generation, 15000), gw.log());
    assertValid(lf);
    for (const q of lf.requests) {
      assert.ok(!q.body.includes('Say hello'), 'no prompt');
      assert.ok(!q.body.includes(r.json.choices[0].message.content), 'no answer');
      assert.ok(!q.body.includes('user_api_key'), 'no key fields');
    }
    const g = lf.byTrace(callId).generation.body;
    assert.equal(g.input.messages[0].content, 'redacted-by-litellm');
    assert.equal(g.output.content, 'redacted-by-litellm');
    assert.equal(g.usage.input, r.json.usage.prompt_tokens, 'usage still there');
  } finally {
    assert.equal(await gw.stop(), 0);
    await lf.stop();
  }
});

test('a team with its own Langfuse project, a key with its own: each call goes to its tenant only', async () => {
  const main = await startLangfuse();
  const teamLf = await startLangfuse([{ publicKey: 'pk-team', secretKey: 'sk-team' }]);
  const keyLf = await startLangfuse([{ publicKey: 'pk-key', secretKey: 'sk-key' }]);
  const gw = await startGateway(`${models(mock.base)}
general_settings:
  master_key: ${MASTER_KEY}
litellm_settings:
  success_callback: ["langfuse"]
  switchyard_callback_batch_interval: 0.2
  default_team_settings:
    - team_id: team-lf
      success_callback: ["langfuse"]
      langfuse_public_key: os.environ/TEAM_LF_PK
      langfuse_secret: os.environ/TEAM_LF_SK
      langfuse_host: ${teamLf.url}
`, { env: { ...envFor(main), TEAM_LF_PK: 'pk-team', TEAM_LF_SK: 'sk-team' } });
  try {
    let t = await api(gw.url, MASTER_KEY, 'POST', '/team/new', { team_id: 'team-lf', team_alias: 'lf-team' });
    assert.equal(t.status, 200, t.text);
    const teamKey = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { team_id: 'team-lf' });
    assert.equal(teamKey.status, 200, teamKey.text);
    const ownKey = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', {
      metadata: { logging: [{ callback_name: 'langfuse', callback_type: 'success',
        callback_vars: { langfuse_public_key: 'pk-key', langfuse_secret_key: 'sk-key', langfuse_host: keyLf.url } }] },
    });
    assert.equal(ownKey.status, 200, ownKey.text);
    const plainKey = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', {});

    const call = async (key) => {
      const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'), { authorization: `Bearer ${key}` });
      assert.equal(r.status, 200, r.text);
      return r.headers.get('x-litellm-call-id');
    };
    const viaTeam = await call(teamKey.json.key);
    const viaKey = await call(ownKey.json.key);
    const viaPlain = await call(plainKey.json.key);
    assert.ok(await until(() => teamLf.byTrace(viaTeam).generation && keyLf.byTrace(viaKey).generation
      && main.byTrace(viaPlain).generation, 15000),
    `team ${teamLf.events.length} key ${keyLf.events.length} main ${main.events.length}\n${gw.log()}`);
    await sleep(600);
    for (const lf of [main, teamLf, keyLf]) assertValid(lf);
    assert.equal(teamLf.byTrace(viaTeam).trace.publicKey, 'pk-team');
    assert.equal(teamLf.byTrace(viaTeam).generation.body.metadata.user_api_key_team_id, 'team-lf');
    assert.equal(keyLf.byTrace(viaKey).trace.publicKey, 'pk-key');
    // each call in its own project only
    assert.equal(main.byTrace(viaTeam).trace, undefined);
    assert.equal(main.byTrace(viaKey).trace, undefined);
    assert.equal(teamLf.byTrace(viaKey).trace, undefined);
    assert.equal(keyLf.byTrace(viaTeam).trace, undefined);
    assert.equal(teamLf.events.length + keyLf.events.length, 4);
  } finally {
    assert.equal(await gw.stop(), 0);
    await Promise.all([main.stop(), teamLf.stop(), keyLf.stop()]);
  }
});

test('Langfuse down, refusing, or with wrong keys: requests are unaffected; a 5xx is retried until it lands', async () => {
  const lf = await startLangfuse();
  const gw = await startGateway(config(mock.base), { env: envFor(lf) });
  try {
    lf.fail(503, 2);
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'));
    assert.equal(r.status, 200);
    const callId = r.headers.get('x-litellm-call-id');
    assert.ok(await until(() => lf.byTrace(callId).generation, 20000), gw.log());
    assert.ok(lf.requests.filter((q) => q.status === 503).length >= 2, 'retried after the 503s');
    assert.equal(lf.events.filter((e) => e.body.id === callId).length, 1, 'the trace once');

    // a 207 refusing one event of two: said, the other kept, the batch not sent again
    const before = lf.requests.length;
    lf.rejectNext(1);
    const r2 = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'));
    assert.equal(r2.status, 200);
    const call2 = r2.headers.get('x-litellm-call-id');
    assert.ok(await until(() => lf.byTrace(call2).generation, 15000), gw.log());
    assert.ok(await until(() => /langfuse: .*refused 1 of 2 events \(Invalid request data\)/.test(gw.log()), 5000), gw.log());
    await sleep(600);
    assert.equal(lf.requests.length, before + 1, 'not retried');
  } finally {
    assert.equal(await gw.stop(), 0);
    await lf.stop();
  }
  const wrong = await startLangfuse();
  const gw2 = await startGateway(config(mock.base), { env: envFor(wrong, 'pk-lf-test', 'not-the-secret') });
  try {
    const r = await postJSON(`${gw2.url}/v1/chat/completions`, chatBody('gpt-4o'));
    assert.equal(r.status, 200);
    assert.ok(await until(() => wrong.requests.some((q) => q.status === 401), 15000), gw2.log());
    assert.ok(await until(() => /langfuse: .*refused the keys \(HTTP 401\)/.test(gw2.log()), 5000), gw2.log());
    assert.equal(wrong.events.length, 0);
  } finally {
    assert.equal(await gw2.stop(), 0);
    await wrong.stop();
  }
});

test('without keys the sink is off, said once at start', async () => {
  const gw = await startGateway(config(mock.base), { env: { LANGFUSE_PUBLIC_KEY: '', LANGFUSE_SECRET_KEY: '' } });
  try {
    assert.match(gw.log(), /langfuse.*LANGFUSE_PUBLIC_KEY not set/);
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'));
    assert.equal(r.status, 200);
  } finally {
    assert.equal(await gw.stop(), 0);
  }
});
