// otel.test.mjs - the otel sink end to end: switchyard with
// success_callback / failure_callback ["otel"] exports spans over OTLP/HTTP to
// a receiver (lib/otlp.mjs) that decodes them with opentelemetry-proto's
// definitions, and each request's spans are serialised again with
// @opentelemetry/otlp-transformer's own serializers and compared.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ProtobufTraceSerializer, JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { startGateway, startMock, chatBody, postJSON, sleep } from '../lib/harness.mjs';
import { startOtlp, decodeProto, decodeJson, toReadableSpans } from './lib/otlp.mjs';

let mock;
before(async () => { mock = await startMock(); });
after(async () => { await mock?.stop(); });

const SERVER = 'Received Proxy Server Request';
const RAW = 'raw_gen_ai_request';

function config(base, extra = '') {
  return `
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${base}", api_key: sk-up, input_cost_per_token: 0.000001, output_cost_per_token: 0.000002}
  - model_name: flaky
    litellm_params: {model: "openai/gpt-4o@status=429", api_base: "${base}", api_key: sk-up}
litellm_settings:
  success_callback: ["otel"]
  failure_callback: ["otel"]
  switchyard_callback_batch_interval: 0.2
  num_retries: 0
  fallbacks: [{"flaky": ["gpt-4o"]}]
${extra}`;
}

// The spans of one call: the server span whose gen_ai.response.id (or error) matches, and its children.
function callSpans(rx, pred) {
  const all = rx.spans();
  const top = all.find((s) => s.name === SERVER && pred(s));
  if (!top) return null;
  const kids = all.filter((s) => s.traceId === top.traceId && s.parentSpanId === top.spanId);
  return { top, kids };
}

// Our spans, serialised by the official SDK serializer and decoded again, equal ours.
function sameAsOfficial(rx) {
  for (const p of rx.posts.filter((q) => q.status === 200)) {
    const official = p.contentType === 'application/json'
      ? decodeJson(Buffer.from(JsonTraceSerializer.serializeRequest(toReadableSpans(p.spans))).toString('utf8'))
      : decodeProto(Buffer.from(ProtobufTraceSerializer.serializeRequest(toReadableSpans(p.spans))));
    assert.deepEqual(official, p.spans);
  }
}

test('the receiver reads otlp-transformer\'s own bytes and refuses what is not OTLP', async () => {
  const span = {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', parentSpanId: '',
    name: 'n', kind: 3, flags: 0x101, start: 1700000000125000000n, end: 1700000001000000000n,
    attributes: { s: 'x', i: 5, d: 0.5, b: false, e: '' },
    events: [{ name: 'exception', time: 1700000001000000000n, attributes: { 'exception.type': 'E' } }],
    links: 0, status: { code: 2, message: 'boom' }, resource: { 'service.name': 'litellm' }, scope: { name: 'litellm', version: '' },
  };
  const pb = Buffer.from(ProtobufTraceSerializer.serializeRequest(toReadableSpans([span])));
  assert.deepEqual(decodeProto(pb), [span]);
  assert.deepEqual(decodeJson(Buffer.from(JsonTraceSerializer.serializeRequest(toReadableSpans([span]))).toString()), [span]);
  assert.throws(() => decodeProto(Buffer.concat([pb, Buffer.from([0x10, 0x01])])), /unknown field 2/);
  assert.throws(() => decodeProto(Buffer.concat([pb, Buffer.from([0x09, 1, 2, 3, 4, 5, 6, 7, 8])])), /wire type 1/);
  assert.throws(() => decodeJson('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"AB","spanId":"00f067aa0ba902b7"}]}]}]}'), /hex/);
  assert.throws(() => decodeJson('{"resourceSpans":[],"extra":1}'), /unknown member/);
  const rx = await startOtlp();
  try {
    const r = await fetch(`${rx.base}/v1/traces`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    assert.equal(r.status, 415);
    const r2 = await fetch(`${rx.base}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: Buffer.from([0xff]) });
    assert.equal(r2.status, 400);
  } finally { await rx.stop(); }
});

test('a chat call: a SERVER span with LiteLLM\'s and GenAI attributes and a CLIENT child, in protobuf', async () => {
  const rx = await startOtlp();
  const gw = await startGateway(config(mock.base), {
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: rx.base, OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=k%3D1,x-team=ml' },
  });
  try {
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o', { max_tokens: 20, temperature: 0.3, metadata: { tags: ['t1'] } }));
    assert.equal(r.status, 200);
    const id = r.json.id;
    assert.ok(await rx.waitSpans((s) => s.name === SERVER, 1, 15000), gw.log());
    await sleep(300);
    const p = rx.posts[0];
    assert.equal(p.status, 200, p.error);
    assert.equal(p.contentType, 'application/x-protobuf');
    assert.equal(p.headers['x-api-key'], 'k=1');
    assert.equal(p.headers['x-team'], 'ml');
    const { top, kids } = callSpans(rx, (s) => s.attributes['gen_ai.response.id'] === id);
    assert.equal(top.kind, 2);
    assert.equal(top.parentSpanId, '');
    assert.equal(top.status.code, 1);
    assert.equal(top.resource['service.name'], 'litellm');
    assert.equal(top.scope.name, 'litellm');
    assert.equal(top.attributes['gen_ai.system'], 'openai');
    assert.equal(top.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(top.attributes['gen_ai.request.model'], 'gpt-4o');
    assert.equal(top.attributes['gen_ai.request.max_tokens'], 20);
    assert.equal(top.attributes['gen_ai.request.temperature'], 0.3);
    assert.equal(top.attributes['llm.is_streaming'], 'False');
    assert.equal(top.attributes['gen_ai.usage.input_tokens'], r.json.usage.prompt_tokens);
    assert.equal(top.attributes['gen_ai.usage.output_tokens'], r.json.usage.completion_tokens);
    assert.equal(top.attributes['gen_ai.response.model'], r.json.model);
    assert.ok('metadata.user_api_key_hash' in top.attributes, Object.keys(top.attributes).join(','));
    const input = JSON.parse(top.attributes['gen_ai.input.messages']);
    assert.deepEqual(input[1], { role: 'user', parts: [{ type: 'text', content: 'Say hello.' }] });
    const output = JSON.parse(top.attributes['gen_ai.output.messages']);
    assert.equal(output[0].role, 'assistant');
    assert.equal(output[0].parts[0].content, r.json.choices[0].message.content);
    assert.ok(top.start > 1600000000000000000n && top.start <= top.end);
    assert.equal(kids.length, 1);
    assert.equal(kids[0].name, RAW);
    assert.equal(kids[0].kind, 3);
    assert.equal(kids[0].status.code, 1);
    assert.equal(kids[0].attributes['http.response.status_code'], 200);
    assert.ok(kids[0].start >= top.start && kids[0].end <= top.end);
    assert.equal(kids[0].attributes['metadata.user_api_key_hash'], undefined, 'LiteLLM\'s metadata on the call span only');
    sameAsOfficial(rx);
  } finally {
    assert.equal(await gw.stop(), 0);
    await rx.stop();
  }
});

test('a stream: time to first token and the full usage', async () => {
  const rx = await startOtlp();
  const gw = await startGateway(config(mock.base), { env: { OTEL_EXPORTER_OTLP_ENDPOINT: rx.base } });
  try {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('gpt-4o', { stream: true, stream_options: { include_usage: true } })),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    const usage = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6))).find((c) => c.usage)?.usage;
    assert.ok(usage, 'the stream carried usage');
    assert.ok(await rx.waitSpans((s) => s.name === SERVER, 1, 15000), gw.log());
    const top = rx.spans().find((s) => s.name === SERVER);
    assert.equal(top.attributes['llm.is_streaming'], 'True');
    assert.equal(top.attributes['gen_ai.usage.input_tokens'], usage.prompt_tokens);
    assert.equal(top.attributes['gen_ai.usage.output_tokens'], usage.completion_tokens);
    const ttft = top.attributes['gen_ai.response.time_to_first_token'];
    assert.equal(typeof ttft, 'number');
    assert.ok(ttft >= 0 && ttft <= Number(top.end - top.start) / 1e9, `ttft ${ttft}`);
    sameAsOfficial(rx);
  } finally {
    assert.equal(await gw.stop(), 0);
    await rx.stop();
  }
});

test('a failure: status ERROR, an exception event, error attributes; a fallback: two CLIENT children', async () => {
  const rx = await startOtlp();
  const gw = await startGateway(config(mock.base), { env: { OTEL_EXPORTER_OTLP_ENDPOINT: rx.base } });
  try {
    const bad = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o', { mock: { status: 400 } }));
    assert.equal(bad.status, 400);
    const fb = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('flaky'));
    assert.equal(fb.status, 200);
    assert.ok(await rx.waitSpans((s) => s.name === SERVER, 2, 15000), gw.log());
    await sleep(300);
    const failed = callSpans(rx, (s) => s.status.code === 2);
    assert.ok(failed, 'a span with status ERROR');
    assert.equal(failed.top.events.length, 1);
    assert.equal(failed.top.events[0].name, 'exception');
    assert.match(failed.top.events[0].attributes['exception.type'], /^litellm\.exceptions\.\w+Error$/);
    assert.equal(failed.top.attributes['error.type'], 'BadRequestError');
    assert.equal(failed.top.attributes['error.code'], '400');
    assert.equal(failed.top.attributes['gen_ai.usage.input_tokens'], undefined);
    assert.equal(failed.kids.length, 1);
    assert.equal(failed.kids[0].status.code, 2);
    assert.equal(failed.kids[0].attributes['http.response.status_code'], 400);

    const ok = callSpans(rx, (s) => s.attributes['gen_ai.response.id'] === fb.json.id);
    assert.ok(ok, 'the fallback call');
    assert.equal(ok.top.status.code, 1);
    assert.equal(ok.kids.length, 2, 'one child per attempt');
    const [first, second] = [...ok.kids].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    assert.equal(first.status.code, 2);
    assert.equal(first.status.message, 'RateLimitError');
    assert.equal(first.attributes['http.response.status_code'], 429);
    assert.equal(second.status.code, 1);
    assert.notEqual(first.spanId, second.spanId);
    sameAsOfficial(rx);
  } finally {
    assert.equal(await gw.stop(), 0);
    await rx.stop();
  }
});

test('the incoming traceparent is the parent; an invalid one starts a trace of our own', async () => {
  const rx = await startOtlp();
  const gw = await startGateway(config(mock.base), { env: { OTEL_EXPORTER_OTLP_ENDPOINT: rx.base } });
  try {
    const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const a = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'), { traceparent: tp });
    assert.equal(a.status, 200);
    const b = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'),
      { traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' });
    assert.equal(b.status, 200);
    assert.ok(await rx.waitSpans((s) => s.name === SERVER, 2, 15000), gw.log());
    const sa = callSpans(rx, (s) => s.attributes['gen_ai.response.id'] === a.json.id);
    assert.equal(sa.top.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.equal(sa.top.parentSpanId, '00f067aa0ba902b7');
    assert.equal(sa.top.flags & 0x301, 0x301, 'sampled, parent remote');
    for (const k of sa.kids) assert.equal(k.traceId, sa.top.traceId);
    const sb = callSpans(rx, (s) => s.attributes['gen_ai.response.id'] === b.json.id);
    assert.notEqual(sb.top.traceId, '00000000000000000000000000000000');
    assert.notEqual(sb.top.traceId, sa.top.traceId);
    assert.equal(sb.top.parentSpanId, '');
  } finally {
    assert.equal(await gw.stop(), 0);
    await rx.stop();
  }
});

test('turn_off_message_logging: no prompt or completion on any span; http/json, the service name and the nested layout', async () => {
  const rx = await startOtlp();
  const gw = await startGateway(config(mock.base, '  turn_off_message_logging: true'), {
    env: {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${rx.base}/v1/traces`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'gw-test', OTEL_RESOURCE_ATTRIBUTES: 'team=ml%20ops', USE_OTEL_LITELLM_REQUEST_SPAN: 'true',
    },
  });
  try {
    const secret = 'the-secret-prompt-4242';
    const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o', { messages: [{ role: 'user', content: secret }] }));
    assert.equal(r.status, 200);
    assert.ok(await rx.waitSpans((s) => s.name === 'litellm_request', 1, 15000), gw.log());
    await sleep(300);
    const p = rx.posts[0];
    assert.equal(p.status, 200, p.error);
    assert.equal(p.contentType, 'application/json');
    for (const q of rx.posts) assert.ok(!q.body.toString('utf8').includes(secret), 'the prompt is nowhere in the export');
    const spans = rx.spans();
    const top = spans.find((s) => s.name === SERVER), req = spans.find((s) => s.name === 'litellm_request');
    assert.equal(top.resource['service.name'], 'gw-test');
    assert.equal(top.resource.team, 'ml ops');
    assert.equal(req.kind, 1);
    assert.equal(req.parentSpanId, top.spanId);
    assert.equal(req.attributes['gen_ai.response.id'], r.json.id);
    assert.equal(top.attributes['gen_ai.response.id'], undefined, 'the attributes on litellm_request');
    for (const s of spans) {
      for (const k of Object.keys(s.attributes)) assert.doesNotMatch(k, /messages|completion\.|functions|system_instructions/, k);
    }
    const raw = spans.find((s) => s.name === RAW);
    assert.equal(raw.parentSpanId, req.spanId);
    sameAsOfficial(rx);
  } finally {
    assert.equal(await gw.stop(), 0);
    await rx.stop();
  }
});

test('a collector that answers 400 drops the batch and no request sees it', async () => {
  const rx = await startOtlp();
  const gw = await startGateway(config(mock.base), {
    env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${rx.base}/wrong/path` },
  });
  try {
    for (let i = 0; i < 2; i++) {
      const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('gpt-4o'));
      assert.equal(r.status, 200);
    }
    const end = Date.now() + 15000;
    let m = '';
    while (Date.now() < end) {
      m = await (await fetch(`${gw.url}/metrics`)).text();
      if (/litellm_callback_logging_failures_metric(_total)?\{callback_name="otel"\} [1-9]/.test(m)) break;
      await sleep(200);
    }
    assert.match(m, /litellm_callback_logging_failures_metric(_total)?\{callback_name="otel"\} [1-9]/);
    assert.ok(rx.posts.every((p) => p.status === 404));
  } finally {
    assert.equal(await gw.stop(), 0);
    await rx.stop();
  }
});
