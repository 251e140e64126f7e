// s3.test.mjs - the s3 / s3_v2 callbacks end to end: switchyard -> an
// S3-compatible server (s3rver from npm, every SigV4 signature re-checked by
// AWS's own signer: lib/s3.mjs). Objects are listed and read back through the
// S3 API and checked against LiteLLM's key layout and StandardLoggingPayload.
import test from 'node:test';
import assert from 'node:assert/strict';

import { startGateway, startMock, api, chatBody, until, freePort, MASTER_KEY } from '../lib/harness.mjs';
import { startS3 } from './lib/s3.mjs';

const KEY_RE = /^(.*)(\d{4}-\d{2}-\d{2})\/time-(\d{2})-(\d{2})-(\d{2})-(\d{6})_(.+)\.json$/;

function config(mock, s3params, { callbacks = 'success_callback: ["s3_v2"]\n  failure_callback: ["s3_v2"]', extra = '' } = {}) {
  return `
model_list:
  - model_name: chat
    litellm_params: {model: openai/chat, api_base: "${mock.base}", api_key: sk-up, input_cost_per_token: 0.000001, output_cost_per_token: 0.000002}
  - model_name: broken
    litellm_params: {model: "openai/broken@status=400", api_base: "${mock.base}", api_key: sk-up}
litellm_settings:
  ${callbacks}
  s3_callback_params: ${JSON.stringify(s3params)}
  switchyard_callback_batch_interval: 0.1
${extra}
general_settings:
  master_key: ${MASTER_KEY}
`;
}

const params = (s3, more = {}) => ({
  s3_bucket_name: s3.bucket,
  s3_region_name: s3.region,
  s3_endpoint_url: s3.endpoint,
  s3_aws_access_key_id: 'S3RVER',
  s3_aws_secret_access_key: 'S3RVER',
  ...more,
});

async function chat(gw, key, body) {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, text: await r.text() };
}

async function objects(s3, prefix, n) {
  let keys = [];
  const ok = await until(async () => (keys = await s3.list(prefix)).length >= n, 15000);
  assert.ok(ok, `${n} objects under "${prefix}" (got ${keys.length}: ${keys.join(', ')})`);
  const out = [];
  for (const k of keys) {
    const o = await s3.get(k);
    out.push({ key: k, headers: o.headers, json: JSON.parse(o.body) });
  }
  return out;
}

async function metric(gw, name, cb) {
  const t = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${MASTER_KEY}` } })).text();
  const re = new RegExp(`^${name}\\{[^}]*callback_name="${cb}"[^}]*\\} ([0-9.e+]+)$`, 'm');
  const m = re.exec(t);
  return m ? Number(m[1]) : 0;
}

// The key's date and time are the request's start, UTC.
function checkKey(key, payload, prefix) {
  const m = KEY_RE.exec(key);
  assert.ok(m, `key layout: ${key}`);
  assert.equal(m[1], prefix);
  assert.equal(m[7], String(payload.id).replaceAll('/', '_'));
  const d = new Date(Math.floor(payload.startTime * 1000));
  assert.equal(m[2], d.toISOString().slice(0, 10));
  assert.equal(`${m[3]}:${m[4]}:${m[5]}`, d.toISOString().slice(11, 19));
}

test('s3_v2: a success, a stream and a failure land as signed objects, LiteLLM key layout with team and key folders', async () => {
  const s3 = await startS3();
  const mock = await startMock();
  const gw = await startGateway(config(mock, params(s3, { s3_path: 'switchyard/', s3_use_team_prefix: true, s3_use_key_prefix: true })));
  try {
    const team = await api(gw.url, MASTER_KEY, 'POST', '/team/new', { team_alias: 'team-x' });
    assert.equal(team.status, 200, team.text);
    const key = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { key_alias: 'key-y', team_id: team.json.team_id });
    assert.equal(key.status, 200, key.text);
    const vk = key.json.key;

    const ok = await chat(gw, vk, chatBody('chat', { metadata: { tags: ['t1'] } }));
    assert.equal(ok.status, 200, ok.text);
    const okId = JSON.parse(ok.text).id;
    const st = await chat(gw, vk, chatBody('chat', { stream: true, stream_options: { include_usage: true } }));
    assert.equal(st.status, 200);
    const bad = await chat(gw, vk, chatBody('broken'));
    assert.equal(bad.status, 400, bad.text);

    const objs = await objects(s3, 'switchyard/', 3);
    assert.equal(objs.length, 3);
    for (const o of objs) {
      checkKey(o.key, o.json, 'switchyard/team-x/key-y/');
      assert.equal(o.headers['content-type'], 'application/json');
      assert.equal(o.headers['content-language'], 'en');
      assert.equal(o.headers['cache-control'], 'private, immutable, max-age=31536000, s-maxage=0');
      assert.match(o.headers['content-disposition'], /^inline; filename="time-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{6}_.+\.json"$/);
      assert.equal(o.json.metadata.user_api_key_alias, 'key-y');
      assert.equal(o.json.metadata.user_api_key_team_alias, 'team-x');
    }
    const success = objs.find((o) => o.json.id === okId);
    assert.ok(success, `the success's object (id ${okId})`);
    assert.equal(success.json.status, 'success');
    assert.equal(success.json.model_group, 'chat');
    assert.ok(success.json.prompt_tokens > 0 && success.json.completion_tokens > 0);
    assert.ok(success.json.response_cost > 0);
    assert.ok(JSON.stringify(success.json.messages).includes('Say hello.'));
    assert.ok(success.json.request_tags.includes('t1'));

    const stream = objs.find((o) => o !== success && o.json.status === 'success');
    assert.ok(stream, 'the stream has an object');
    assert.ok(stream.json.completion_tokens > 0, 'a stream has its full usage');
    assert.ok(stream.json.completionStartTime >= stream.json.startTime && stream.json.completionStartTime <= stream.json.endTime);

    const failure = objs.find((o) => o.json.status === 'failure');
    assert.ok(failure, 'the failure has an object');
    assert.equal(failure.json.model_group, 'broken');
    assert.ok(failure.json.error_str || failure.json.error_information);

    // every PUT passed AWS's signer, one per record (no retries), none refused
    assert.equal(s3.puts.length, 3);
    for (const p of s3.puts) {
      assert.equal(p.status, 200, `${p.url}: ${p.code}`);
      assert.match(p.headers.authorization, /^AWS4-HMAC-SHA256 Credential=S3RVER\/\d{8}\/us-east-1\/s3\/aws4_request, /);
    }
    assert.ok(await until(async () => (await metric(gw, 'switchyard_callback_sent_total', 's3_v2')) === 3, 5000));
  } finally {
    await gw.stop();
    await mock.stop();
    await s3.close();
  }
});

test('s3: turn_off_message_logging and redact_user_api_key_info: no message text, no alias folders; s3_log_prompts_only', async () => {
  const s3 = await startS3();
  const mock = await startMock();
  const gw = await startGateway(config(mock, params(s3, { s3_use_team_prefix: true, s3_log_prompts_only: true }), {
    callbacks: 'success_callback: ["s3"]',
    extra: '  turn_off_message_logging: true\n  redact_user_api_key_info: true\n',
  }));
  try {
    const team = await api(gw.url, MASTER_KEY, 'POST', '/team/new', { team_alias: 'team-secret' });
    const key = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { key_alias: 'alias-secret', team_id: team.json.team_id });
    const r = await chat(gw, key.json.key, chatBody('chat', { messages: [{ role: 'user', content: 'the launch code is 4242' }] }));
    assert.equal(r.status, 200);
    const [o] = await objects(s3, '', 1);
    checkKey(o.key, o.json, '');
    const body = JSON.stringify(o.json);
    assert.ok(!body.includes('4242'), 'no message text');
    assert.ok(!body.includes('alias-secret') && !body.includes('team-secret'), 'no key or team alias');
    assert.equal(o.json.response, null); // s3_log_prompts_only
    assert.equal(o.json.status, 'success');
  } finally {
    await gw.stop();
    await mock.stop();
    await s3.close();
  }
});

test('s3: a wrong secret is refused by the server (403 SignatureDoesNotMatch), dropped without retry and counted; requests unaffected', async () => {
  const s3 = await startS3();
  const mock = await startMock();
  const gw = await startGateway(config(mock, params(s3, { s3_aws_secret_access_key: 'not-the-secret' }), { callbacks: 'success_callback: ["s3"]' }));
  try {
    for (let i = 0; i < 2; i++) {
      const r = await chat(gw, MASTER_KEY, chatBody('chat'));
      assert.equal(r.status, 200);
    }
    assert.ok(await until(async () => (await metric(gw, 'litellm_callback_logging_failures_metric_total', 's3')) >= 2, 10000),
      'both records counted as failures');
    assert.equal(await metric(gw, 'switchyard_callback_dropped_total', 's3'), 2);
    assert.equal(await metric(gw, 'switchyard_callback_retried_total', 's3'), 0, 'a 403 is not retried');
    assert.equal(s3.puts.length, 2);
    for (const p of s3.puts) {
      assert.equal(p.status, 403);
      assert.equal(p.code, 'SignatureDoesNotMatch');
    }
    assert.deepEqual(await s3.list(''), []);
    // the drops are logged, once for the interval
    assert.ok(await until(() => /callback 's3': \d+ record\(s\) dropped/.test(gw.log()), 5000));
    assert.equal(gw.log().match(/callback 's3': \d+ record\(s\) dropped/g).length, 1);
  } finally {
    await gw.stop();
    await mock.stop();
    await s3.close();
  }
});

test('s3: an unknown access key is refused by s3rver itself (InvalidAccessKeyId) and counted', async () => {
  const s3 = await startS3();
  const mock = await startMock();
  const gw = await startGateway(config(mock, params(s3, { s3_aws_access_key_id: 'AKIDUNKNOWN' }), { callbacks: 'success_callback: ["s3"]' }));
  try {
    assert.equal((await chat(gw, MASTER_KEY, chatBody('chat'))).status, 200);
    assert.ok(await until(async () => (await metric(gw, 'switchyard_callback_dropped_total', 's3')) === 1, 10000));
    assert.equal(s3.puts[0].status, 403);
    assert.equal(s3.puts[0].code, 'InvalidAccessKeyId');
  } finally {
    await gw.stop();
    await mock.stop();
    await s3.close();
  }
});

test('s3: the bucket unreachable: retried and counted, every request answered', async () => {
  const mock = await startMock();
  const dead = await freePort(); // nothing listens there
  const gw = await startGateway(config(mock, {
    s3_bucket_name: 'logs', s3_endpoint_url: `http://127.0.0.1:${dead}`,
    s3_aws_access_key_id: 'S3RVER', s3_aws_secret_access_key: 'S3RVER',
  }, { callbacks: 'success_callback: ["s3"]' }));
  try {
    for (let i = 0; i < 3; i++) {
      const r = await chat(gw, MASTER_KEY, chatBody('chat'));
      assert.equal(r.status, 200);
      assert.ok(JSON.parse(r.text).choices.length > 0);
    }
    assert.ok(await until(async () => (await metric(gw, 'switchyard_callback_retried_total', 's3')) >= 1, 10000),
      'the sink retries');
    assert.equal(await metric(gw, 'switchyard_callback_sent_total', 's3'), 0);
  } finally {
    await gw.stop();
    await mock.stop();
  }
});

test('s3: settings it cannot run with are a warning at start, the gateway serves', async () => {
  const mock = await startMock();
  const gw = await startGateway(config(mock, { s3_region_name: 'us-east-1' }, { callbacks: 'success_callback: ["s3"]' }), {
    env: { AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' },
  });
  try {
    assert.equal((await chat(gw, MASTER_KEY, chatBody('chat'))).status, 200);
    assert.match(gw.log(), /s3_bucket_name is not set/);
  } finally {
    await gw.stop();
    await mock.stop();
  }
});

test('s3_v2: credentials from the environment with a session token, and SSE: signed, and accepted by AWS\'s signer', async () => {
  const s3 = await startS3();
  const mock = await startMock();
  const gw = await startGateway(config(mock, {
    s3_bucket_name: s3.bucket, s3_endpoint_url: s3.endpoint, s3_server_side_encryption: 'AES256',
  }), { env: { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_SESSION_TOKEN: 'session/tok+en=', AWS_REGION: s3.region } });
  try {
    assert.equal((await chat(gw, MASTER_KEY, chatBody('chat'))).status, 200);
    const [o] = await objects(s3, '', 1);
    assert.equal(o.json.status, 'success');
    const p = s3.puts[0];
    assert.equal(p.status, 200, p.code);
    assert.equal(p.headers['x-amz-security-token'], 'session/tok+en=');
    assert.equal(p.headers['x-amz-server-side-encryption'], 'AES256');
    assert.match(p.headers.authorization, /SignedHeaders=[a-z0-9;-]*;x-amz-security-token;x-amz-server-side-encryption, /);
  } finally {
    await gw.stop();
    await mock.stop();
    await s3.close();
  }
});

test('s3: SIGTERM right after the requests: every record lands before the exit', async () => {
  const s3 = await startS3();
  const mock = await startMock();
  const gw = await startGateway(config(mock, params(s3), { callbacks: 'success_callback: ["s3"]' })
    .replace('switchyard_callback_batch_interval: 0.1', 'switchyard_callback_batch_interval: 5'));
  try {
    for (let i = 0; i < 3; i++) assert.equal((await chat(gw, MASTER_KEY, chatBody('chat'))).status, 200);
    assert.equal(await gw.stop(), 0);
    assert.equal((await s3.list('')).length, 3);
  } finally {
    await gw.stop();
    await mock.stop();
    await s3.close();
  }
});
