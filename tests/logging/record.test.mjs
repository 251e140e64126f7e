// record.test.mjs - the record of a call end to end (stages/log.c,
// filters/log_capture.c, logging/payload.c): switchyard with the generic_api
// webhook (lib/webhook.mjs) in front of the mock upstream, every member of
// LiteLLM's StandardLoggingPayload checked against the call that was made:
// ids, model, deployment, tokens, cost, times, tags, trace ids, messages and
// the response (JSON and streams, OpenAI and Anthropic), failures, cache
// hits, both redactions, virtual keys' metadata, per-key routing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, startMock, chatBody, postJSON, api, MASTER_KEY, sleep, until } from '../lib/harness.mjs';
import { startWebhook } from './lib/webhook.mjs';

let mock;
before(async () => { mock = await startMock(); });
after(async () => { await mock?.stop(); });

const models = (m) => `
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${m.base}/", api_key: sk-up, input_cost_per_token: 0.000001, output_cost_per_token: 0.000002}
    model_info: {id: dep-gpt4o}
  - model_name: claude
    litellm_params: {model: anthropic/claude-sonnet-4-5-20250929, api_base: "${m.url}", api_key: sk-ant-test, input_cost_per_token: 0.000003, output_cost_per_token: 0.000015}
  - model_name: flaky
    litellm_params: {model: "openai/gpt-4o@status=429", api_base: "${m.base}", api_key: sk-up}
`;

function config(m, { litellm = '', general = '' } = {}) {
  return `${models(m)}
litellm_settings:
  success_callback: ["generic_api"]
  failure_callback: ["generic_api"]
  switchyard_callback_batch_interval: 0.1
${litellm}
${general ? `general_settings:\n${general}` : ''}`;
}

async function withGateway(cfg, fn, opts = {}) {
  const hook = await startWebhook();
  const gw = await startGateway(cfg, { ...opts, env: { GENERIC_LOGGER_ENDPOINT: hook.url, ...(opts.env || {}) } });
  try {
    await fn(gw, hook);
  } finally {
    assert.equal(await gw.stop(), 0);
    await hook.stop();
  }
}

async function one(hook, n = 1) {
  assert.ok(await hook.waitRecords(n, 15000), `${n} record(s), got ${hook.records().length}`);
  return hook.records()[n - 1];
}

// Every member LiteLLM's StandardLoggingPayload TypedDict declares.
const MEMBERS = ['id', 'trace_id', 'call_type', 'stream', 'response_cost', 'cost_breakdown',
  'response_cost_failure_debug_info', 'status', 'status_fields', 'custom_llm_provider', 'total_tokens',
  'prompt_tokens', 'completion_tokens', 'startTime', 'endTime', 'completionStartTime', 'response_time',
  'model_map_information', 'model', 'model_id', 'model_group', 'api_base', 'metadata', 'cache_hit', 'cache_key',
  'saved_cache_cost', 'request_tags', 'end_user', 'requester_ip_address', 'messages', 'response', 'error_str',
  'error_information', 'model_parameters', 'hidden_params', 'guardrail_information', 'standard_built_in_tools_params'];

test('a chat call: ids, model, deployment, tokens, cost, times, tags, trace ids, messages and response', async () => {
  await withGateway(config(mock), async (gw, hook) => {
    const body = chatBody('gpt-4o', {
      temperature: 0.3, user: 'end-user-7', tags: ['body-tag'],
      metadata: { tags: ['meta-tag'], trace_id: 'trace-abc', generation_name: 'gen-1', spend_logs_metadata: { job: 'j9' } },
    });
    const r = await postJSON(`${gw.url}/v1/chat/completions`, body,
      { 'user-agent': 'record-test/1.2', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        'x-forwarded-for': '203.0.113.9, 10.0.0.1' });
    assert.equal(r.status, 200, r.text);
    const p = await one(hook);
    for (const k of MEMBERS) assert.ok(k in p, `member ${k}`);
    assert.equal(p.id, r.json.id);
    assert.equal(p.trace_id, 'trace-abc');
    assert.equal(p.call_type, 'acompletion');
    assert.equal(p.status, 'success');
    assert.deepEqual(p.status_fields, { llm_api_status: 'success', guardrail_status: 'not_run' });
    assert.equal(p.stream, null);
    assert.equal(p.model, 'gpt-4o');
    assert.equal(p.model_group, 'gpt-4o');
    assert.equal(p.model_id, 'dep-gpt4o');
    assert.equal(p.custom_llm_provider, 'openai');
    assert.equal(p.api_base, mock.base, 'the trailing slash dropped');
    assert.equal(p.prompt_tokens, r.json.usage.prompt_tokens);
    assert.equal(p.completion_tokens, r.json.usage.completion_tokens);
    assert.equal(p.total_tokens, p.prompt_tokens + p.completion_tokens);
    const cost = p.prompt_tokens * 0.000001 + p.completion_tokens * 0.000002;
    assert.ok(Math.abs(p.response_cost - cost) < 1e-12, `cost ${p.response_cost} vs ${cost}`);
    assert.ok(p.startTime > 1.6e9 && p.startTime <= p.completionStartTime && p.completionStartTime <= p.endTime);
    assert.ok(Math.abs(p.response_time - (p.endTime - p.startTime)) < 1e-6, 'a JSON answer: end - start');
    assert.deepEqual(p.request_tags, ['body-tag', 'meta-tag', 'User-Agent: record-test', 'User-Agent: record-test/1.2']);
    assert.equal(p.end_user, 'end-user-7');
    assert.equal(p.requester_ip_address, '203.0.113.9');
    assert.equal(p.metadata.requester_ip_address, '203.0.113.9');
    assert.equal(p.metadata.user_agent, 'record-test/1.2');
    assert.deepEqual(p.metadata.spend_logs_metadata, { job: 'j9' });
    assert.equal(p.metadata.requester_metadata.generation_name, 'gen-1');
    assert.equal(p.metadata.user_api_key_request_route, '/v1/chat/completions');
    assert.equal(p.metadata.usage_object.total_tokens, p.total_tokens);
    assert.deepEqual(p.messages, body.messages);
    assert.equal(p.response.id, r.json.id);
    assert.equal(p.response.choices[0].message.content, r.json.choices[0].message.content);
    assert.equal(p.model_parameters.temperature, 0.3);
    assert.ok(!('messages' in p.model_parameters) && !('metadata' in p.model_parameters));
    assert.equal(p.hidden_params.model_id, 'dep-gpt4o');
    assert.equal(p.hidden_params.litellm_model_name, 'openai/gpt-4o');
    assert.equal(p.error_str, null);
    assert.deepEqual(p.error_information,
      { error_code: '', error_class: '', llm_provider: '', traceback: '', error_message: '' });
    assert.equal(p.cache_hit, false);
  });
});

test('a stream: the chunks assembled into the answer, first-token time, full usage', async () => {
  await withGateway(config(mock), async (gw, hook) => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('gpt-4o', { stream: true, stream_options: { include_usage: true } })),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    let content = '', id = null, usage = null;
    for (const line of text.split('\n')) {
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const j = JSON.parse(line.slice(6));
      id = j.id;
      if (j.usage) usage = j.usage;
      for (const ch of j.choices || []) content += ch.delta?.content || '';
    }
    const p = await one(hook);
    assert.equal(p.stream, true);
    assert.equal(p.id, id);
    assert.equal(p.response.object, 'chat.completion');
    assert.equal(p.response.choices[0].message.content, content);
    assert.equal(p.prompt_tokens, usage.prompt_tokens);
    assert.equal(p.completion_tokens, usage.completion_tokens);
    assert.ok(p.completionStartTime >= p.startTime && p.completionStartTime <= p.endTime);
    assert.ok(Math.abs(p.response_time - (p.completionStartTime - p.startTime)) < 1e-6, 'a stream: first token - start');
  });
});

test('an Anthropic /v1/messages stream: the events assembled into the message', async () => {
  await withGateway(config(mock), async (gw, hook) => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude', stream: true, max_tokens: 32, system: 'Be brief.',
        messages: [{ role: 'user', content: 'Say hello.' }] }),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    let streamed = '';
    for (const line of text.split('\n')) {
      if (!line.startsWith('data: ')) continue;
      const j = JSON.parse(line.slice(6));
      if (j.type === 'content_block_delta' && j.delta.type === 'text_delta') streamed += j.delta.text;
    }
    const p = await one(hook);
    assert.equal(p.call_type, 'anthropic_messages');
    assert.equal(p.stream, true);
    assert.equal(p.response.type, 'message');
    assert.equal(p.response.content[0].text, streamed);
    assert.deepEqual(p.messages[0], { role: 'system', content: 'Be brief.' });
    assert.equal(p.messages[1].content, 'Say hello.');
    assert.equal(p.custom_llm_provider, 'anthropic');
    assert.ok(p.prompt_tokens > 0 && p.completion_tokens > 0);
  });
});

test('a failed call arrives as a failure with its error information', async () => {
  await withGateway(config(mock), async (gw, hook) => {
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('flaky', { num_retries: 0 }));
    assert.equal(r.status, 429, r.text);
    const p = await one(hook);
    assert.equal(p.status, 'failure');
    assert.equal(p.status_fields.llm_api_status, 'failure');
    assert.equal(p.error_information.error_code, '429');
    assert.equal(p.error_information.error_class, 'RateLimitError');
    assert.equal(p.error_information.llm_provider, 'openai');
    assert.equal(p.error_str, r.json.error.message);
    assert.equal(p.error_information.error_message, r.json.error.message);
    assert.deepEqual(p.response, {});
    assert.equal(p.model_group, 'flaky');
  });
});

test('turn_off_message_logging: neither prompt nor answer leaves; LiteLLM\'s redacted values', async () => {
  await withGateway(config(mock, { litellm: '  turn_off_message_logging: true' }), async (gw, hook) => {
    const r = await postJSON(`${gw.url}/v1/chat/completions`,
      chatBody('gpt-4o', { messages: [{ role: 'user', content: 'my secret prompt 4242' }] }));
    assert.equal(r.status, 200);
    const p = await one(hook);
    assert.deepEqual(p.messages, [{ role: 'user', content: 'redacted-by-litellm' }]);
    assert.deepEqual(p.response, { text: 'redacted-by-litellm' });
    const raw = hook.posts.map((x) => x.body).join('');
    assert.ok(!raw.includes('4242'), 'the prompt text is nowhere in what was sent');
    assert.ok(!raw.includes(r.json.choices[0].message.content), 'nor the answer');
    assert.ok(p.prompt_tokens > 0, 'the rest of the record is kept');
  });
});

test('a request can turn message logging off for itself (LiteLLM\'s dynamic param)', async () => {
  await withGateway(config(mock), async (gw, hook) => {
    const r = await postJSON(`${gw.url}/v1/chat/completions`,
      chatBody('gpt-4o', { turn_off_message_logging: true, messages: [{ role: 'user', content: 'private 777' }] }));
    assert.equal(r.status, 200);
    const p = await one(hook);
    assert.deepEqual(p.messages, [{ role: 'user', content: 'redacted-by-litellm' }]);
    assert.ok(!hook.posts[0].body.includes('private 777'));
  });
});

test('virtual keys: key, team and user in the metadata; redact_user_api_key_info drops them', async () => {
  for (const redact of [false, true]) {
    await withGateway(config(mock, {
      litellm: redact ? '  redact_user_api_key_info: true' : '',
      general: `  master_key: ${MASTER_KEY}\n  proxy_batch_write_at: 0.1`,
    }), async (gw, hook) => {
      const t = await api(gw.url, MASTER_KEY, 'POST', '/team/new', { team_alias: 'blue-team', metadata: { tags: ['team-tag'] } });
      assert.equal(t.status, 200, t.text);
      const k = await api(gw.url, MASTER_KEY, 'POST', '/key/generate',
        { key_alias: 'ci-key', team_id: t.json.team_id, user_id: 'user-9', metadata: { owner: 'qa', tags: ['key-tag'] } });
      assert.equal(k.status, 200, k.text);
      const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'), { authorization: `Bearer ${k.json.key}` });
      assert.equal(r.status, 200, r.text);
      const p = await one(hook);
      const md = p.metadata;
      if (!redact) {
        assert.equal(md.user_api_key_hash, k.json.token);
        assert.equal(md.user_api_key_alias, 'ci-key');
        assert.equal(md.user_api_key_team_id, t.json.team_id);
        assert.equal(md.user_api_key_team_alias, 'blue-team');
        assert.equal(md.user_api_key_user_id, 'user-9');
        assert.equal(md.user_api_key_auth_metadata.owner, 'qa');
        assert.ok(p.request_tags.includes('key-tag') && p.request_tags.includes('team-tag'),
          `key and team tags merged: ${JSON.stringify(p.request_tags)}`);
      } else {
        assert.deepEqual(Object.keys(md).filter((x) => x.startsWith('user_api_key')), []);
        assert.ok(!hook.posts[0].body.includes(k.json.token), 'the key hash is nowhere');
        assert.ok(!hook.posts[0].body.includes('ci-key'), 'nor its alias');
      }
    });
  }
});

test('a cache hit: LiteLLM\'s id, cache_hit and cache_key', async () => {
  await withGateway(config(mock, { litellm: '  cache: true' }), async (gw, hook) => {
    const body = chatBody('gpt-4o', { messages: [{ role: 'user', content: 'cache me' }] });
    const a = await postJSON(`${gw.url}/v1/chat/completions`, body);
    assert.equal(a.status, 200);
    let b = null; /* the store follows the answer: ask until it is a hit (bounded) */
    assert.ok(await until(async () => {
      b = await postJSON(`${gw.url}/v1/chat/completions`, body);
      return b.headers.get('x-litellm-cache-hit') === 'True';
    }, 10000), 'a hit');
    assert.ok(await until(() => hook.records().some((x) => x.cache_hit), 15000));
    const hit = hook.records().find((x) => x.cache_hit);
    assert.ok(hit.id.startsWith(`${a.json.id}_cache_hit`), hit.id);
    assert.equal(hit.response.choices[0].message.content, b.json.choices[0].message.content);
    assert.equal(typeof hit.cache_key, 'string');
    assert.equal(hit.hidden_params.cache_key, hit.cache_key);
  });
});

test('a key\'s metadata.logging sends its calls to its own sink (per-key callbacks)', async () => {
  const own = await startWebhook({ path: '/tenant' });
  try {
    await withGateway(config(mock, { general: `  master_key: ${MASTER_KEY}\n  proxy_batch_write_at: 0.1` }),
      async (gw, hook) => {
        const k = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', {
          metadata: { logging: [{ callback_name: 'generic_api', callback_type: 'success',
            callback_vars: { endpoint: own.url } }] },
        });
        assert.equal(k.status, 200, k.text);
        const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'), { authorization: `Bearer ${k.json.key}` });
        assert.equal(r.status, 200);
        assert.ok(await own.waitRecords(1, 15000), 'the tenant\'s sink got the call');
        assert.equal(own.records()[0].id, r.json.id);
        assert.equal(own.records()[0].metadata.user_api_key_auth_metadata.logging,
          'scrubbed_by_litellm_for_sensitive_keys', 'its credentials are not logged');
        await sleep(400);
        assert.equal(hook.records().length, 0, 'the config\'s sink did not');
      });
  } finally {
    await own.stop();
  }
});

test('store_prompts_in_spend_logs: the request and the answer in LiteLLM_SpendLogs, long strings cut', async () => {
  const { keysConfig, sha256hex, until } = await import('../lib/harness.mjs');
  for (const store of [true, false]) {
    const gw = await startGateway(keysConfig(mock.base, { general: store ? '  store_prompts_in_spend_logs: true' : '' }));
    try {
      const k = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', {});
      assert.equal(k.status, 200, k.text);
      const long = 'x'.repeat(1000) + 'MIDDLE' + 'y'.repeat(3000);
      const r = await postJSON(`${gw.url}/v1/chat/completions`,
        chatBody('gpt-4o', { messages: [{ role: 'user', content: 'remember 5150' }, { role: 'user', content: long }] }),
        { authorization: `Bearer ${k.json.key}` });
      assert.equal(r.status, 200, r.text);
      const hash = await sha256hex(k.json.key);
      let row = null;
      assert.ok(await until(async () => {
        const s = await api(gw.url, MASTER_KEY, 'GET', `/spend/logs?api_key=${hash}`);
        row = Array.isArray(s.json) && s.json[0];
        return !!row;
      }, 10000), 'a SpendLogs row');
      const j = (v) => (typeof v === 'string' ? JSON.parse(v) : v);
      assert.deepEqual(j(row.messages), {}, 'LiteLLM keeps the prompt in proxy_server_request');
      if (!store) {
        assert.deepEqual(j(row.proxy_server_request), {});
        assert.deepEqual(j(row.response), {});
        continue;
      }
      const req = j(row.proxy_server_request);
      assert.equal(req.model, 'gpt-4o');
      assert.equal(req.messages[0].content, 'remember 5150');
      const cut = req.messages[1].content;
      assert.ok(!cut.includes('MIDDLE'), 'the middle of a long string is cut');
      assert.match(cut, /^x{716}\.\.\. \(litellm_truncated skipped 1959 chars\) \.\.\.y{1331}$/);
      assert.equal(j(row.response).choices[0].message.content, r.json.choices[0].message.content);
    } finally {
      assert.equal(await gw.stop(), 0);
    }
  }
});

test('default_team_settings: a team\'s calls go to the team\'s own sink', async () => {
  const teamHook = await startWebhook({ path: '/team' });
  try {
    await withGateway(config(mock, {
      litellm: `  default_team_settings:\n    - team_id: team-logs\n      success_callback: ["generic_api"]\n      endpoint: ${teamHook.url}`,
      general: `  master_key: ${MASTER_KEY}\n  proxy_batch_write_at: 0.1`,
    }), async (gw, hook) => {
      const t = await api(gw.url, MASTER_KEY, 'POST', '/team/new', { team_id: 'team-logs', team_alias: 'logs' });
      assert.equal(t.status, 200, t.text);
      const k = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { team_id: 'team-logs' });
      assert.equal(k.status, 200, k.text);
      const other = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', {});
      const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'), { authorization: `Bearer ${k.json.key}` });
      assert.equal(r.status, 200);
      const r2 = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'), { authorization: `Bearer ${other.json.key}` });
      assert.equal(r2.status, 200);
      assert.ok(await teamHook.waitRecords(1, 15000), 'the team\'s sink got its call');
      assert.ok(await hook.waitRecords(1, 15000), 'the config\'s sink got the other');
      await sleep(400);
      assert.deepEqual(teamHook.records().map((x) => x.id), [r.json.id]);
      assert.deepEqual(hook.records().map((x) => x.id), [r2.json.id]);
      assert.equal(teamHook.records()[0].metadata.user_api_key_team_id, 'team-logs');
    });
  } finally {
    await teamHook.stop();
  }
});

test('each upstream attempt is recorded: a retried call reports two attempts', async () => {
  await withGateway(config(mock), async (gw, hook) => {
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('flaky', { num_retries: 1 }));
    assert.equal(r.status, 429);
    const p = await one(hook);
    assert.equal(p.status, 'failure');
    const { until } = await import('../lib/harness.mjs');
    assert.ok(await until(() => / request id=\S+ .*attempts=2/.test(gw.log()), 10000), gw.log());
  }, { args: ['--detailed_debug'] });
});

test('off costs nothing: without a callback the log stage is in no pipeline', async () => {
  const { SWITCHYARD, tmpdir } = await import('../lib/harness.mjs');
  const { spawnSync } = await import('node:child_process');
  const fs = await import('node:fs');
  const path = await import('node:path');
  const dir = tmpdir();
  const check = (yaml) => {
    const f = path.join(dir, 'c.yaml');
    fs.writeFileSync(f, yaml);
    const r = spawnSync(SWITCHYARD, ['--check-config', '--config', f], { encoding: 'utf8', timeout: 20000 });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    return r.stdout.split('\n').find((l) => /^\s+chat\s/.test(l));
  };
  assert.doesNotMatch(check(models(mock)), /\blog\b/);
  assert.match(check(config(mock)), /route -> log -> upstream/);
});

test('a key whose metadata turns message logging off: no content for its calls only', async () => {
  await withGateway(config(mock, { general: `  master_key: ${MASTER_KEY}\n  proxy_batch_write_at: 0.1` }),
    async (gw, hook) => {
      const quiet = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { metadata: { turn_off_message_logging: true } });
      const loud = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', {});
      const body = chatBody('gpt-4o', { messages: [{ role: 'user', content: 'key-secret 9191' }] });
      const a = await postJSON(`${gw.url}/v1/chat/completions`, body, { authorization: `Bearer ${quiet.json.key}` });
      const b = await postJSON(`${gw.url}/v1/chat/completions`, body, { authorization: `Bearer ${loud.json.key}` });
      assert.equal(a.status, 200);
      assert.equal(b.status, 200);
      await one(hook, 2);
      const byId = Object.fromEntries(hook.records().map((x) => [x.id, x]));
      assert.deepEqual(byId[a.json.id].messages, [{ role: 'user', content: 'redacted-by-litellm' }]);
      assert.equal(byId[b.json.id].messages[0].content, 'key-secret 9191');
    });
});

test('a pass-through call (images, speech): its call type; a JSON answer kept, audio bytes not', async () => {
  await withGateway(config(mock), async (gw, hook) => {
    const img = await postJSON(`${gw.url}/v1/images/generations`, { model: 'gpt-4o', prompt: 'a red cat' });
    assert.equal(img.status, 200, img.text);
    const p = await one(hook);
    assert.equal(p.call_type, 'aimage_generation');
    assert.deepEqual(p.messages, [{ role: 'user', content: 'a red cat' }]);
    assert.deepEqual(p.response.data, img.json.data);
    const sp = await fetch(`${gw.url}/v1/audio/speech`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', input: 'hello there', voice: 'alloy' }),
    });
    assert.equal(sp.status, 200);
    await sp.arrayBuffer();
    const q = await one(hook, 2);
    assert.equal(q.call_type, 'aspeech');
    assert.deepEqual(q.response, {}, 'audio is not text: no response kept');
  });
});
