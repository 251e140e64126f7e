// tls-limits.test.mjs - HTTPS upstream (test CA, verification on and off),
// server timeouts (slow body, idle keep-alive), the JSON access log, --check-config.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { SWITCHYARD, chatBody, postJSON, rawRequest, root, startGateway, startMock, tmpdir } from '../lib/harness.mjs';

let certs, mockTls, gw;

before(async () => {
  certs = tmpdir();
  execFileSync('bash', [path.join(root, 'tests/mock/gen-certs.sh'), certs], { stdio: 'ignore' });
  mockTls = await startMock(['--tls-cert', path.join(certs, 'server.pem'), '--tls-key', path.join(certs, 'server.key')]);
  gw = await startGateway(`
model_list:
  - model_name: secure
    litellm_params: {model: openai/gpt-4o, api_base: "https://localhost:${mockTls.port}/v1", api_key: sk-tls}
litellm_settings:
  ssl_verify: ${path.join(certs, 'ca.pem')}
  switchyard_access_log: ${path.join(certs, 'access.log')}
general_settings:
  switchyard_body_timeout_s: 0.5
  switchyard_keepalive_timeout_s: 0.5
`);
});
after(async () => { await gw.stop(); await mockTls.stop(); });

test('HTTPS upstream verified against the configured CA bundle', async () => {
  const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('secure'));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.object, 'chat.completion');
  const s = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chatBody('secure', { stream: true })) });
  assert.match(await s.text(), /data: \[DONE\]/);
});

test('HTTPS upstream with an unknown CA fails with a connection error, not a hang', async () => {
  const g2 = await startGateway(`
model_list:
  - model_name: secure
    litellm_params: {model: openai/gpt-4o, api_base: "https://localhost:${mockTls.port}/v1", api_key: sk-tls}
litellm_settings: {num_retries: 0}
`);
  try {
    const r = await postJSON(`${g2.url}/v1/chat/completions`, chatBody('secure'));
    assert.equal(r.status, 500, r.text);
    assert.match(r.json.error.message, /APIConnectionError/);
  } finally { await g2.stop(); }
  const g3 = await startGateway(`
model_list:
  - model_name: secure
    litellm_params: {model: openai/gpt-4o, api_base: "https://localhost:${mockTls.port}/v1", api_key: sk-tls}
litellm_settings: {ssl_verify: false}
`);
  try {
    assert.equal((await postJSON(`${g3.url}/v1/chat/completions`, chatBody('secure'))).status, 200);
    assert.match(g3.log(), /NOT verified/);
  } finally { await g3.stop(); }
});

test('a body that stops arriving gets 408', async () => {
  const r = await rawRequest(gw.port, null, {
    chunks: ['POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":'],
    timeoutMs: 4000,
  });
  assert.match(r.data, /^HTTP\/1\.1 408/);
  assert.equal(r.timedOut, false);
});

test('an idle keep-alive connection is closed after the timeout', async () => {
  const r = await rawRequest(gw.port, 'GET /health/liveliness HTTP/1.1\r\nHost: x\r\n\r\n', { timeoutMs: 4000 });
  assert.match(r.data, /^HTTP\/1\.1 200/);
  assert.equal(r.timedOut, false, 'server closed the idle connection');
});

test('the access log has one JSON line per LLM request', async () => {
  await postJSON(`${gw.url}/v1/chat/completions`, chatBody('secure'));
  await postJSON(`${gw.url}/v1/chat/completions`, chatBody('nope'));
  const file = path.join(certs, 'access.log');
  let lines = [];
  for (let i = 0; i < 40 && lines.length < 2; i++) {
    await new Promise((r) => setTimeout(r, 50));
    lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : [];
  }
  assert.ok(lines.length >= 2, `access log lines: ${lines.length}`);
  const recs = lines.map((l) => JSON.parse(l));
  assert.ok(recs.some((x) => JSON.stringify(x).includes('secure')));
  assert.ok(recs.some((x) => JSON.stringify(x).includes('400')));
});

test('--check-config: 0 on a good config (secrets redacted), 1 on a type error with its line', () => {
  const dir = tmpdir();
  const good = path.join(dir, 'good.yaml');
  fs.writeFileSync(good, 'model_list:\n  - model_name: a\n    litellm_params: {model: openai/gpt-4o, api_key: sk-supersecret-abcd}\ngeneral_settings: {master_key: sk-master-9999}\nfoo_unknown: 1\n');
  const ok = spawnSync(SWITCHYARD, ['--check-config', '--config', good], { encoding: 'utf8' });
  assert.equal(ok.status, 0, ok.stderr);
  assert.ok(!ok.stdout.includes('supersecret') && !ok.stdout.includes('sk-master-9999'), 'secrets redacted');
  assert.match(ok.stdout + ok.stderr, /foo_unknown/);
  const bad = path.join(dir, 'bad.yaml');
  fs.writeFileSync(bad, 'model_list:\n  - model_name: a\n    litellm_params:\n      model: openai/x\n      rpm: lots\n');
  const ko = spawnSync(SWITCHYARD, ['--check-config', '--config', bad], { encoding: 'utf8' });
  assert.equal(ko.status, 1);
  assert.match(ko.stderr, /bad\.yaml:5/);
  const v = spawnSync(SWITCHYARD, ['--version'], { encoding: 'utf8' });
  assert.match(v.stdout, /^switchyard \d+\.\d+\.\d+/);
});

test('a client that stops reading a stream applies backpressure (memory stays bounded)', async () => {
  const m = await startMock();
  const g = await startGateway(`
model_list:
  - model_name: big
    litellm_params: {model: openai/gpt-4o, api_base: "${m.base}", api_key: sk-x}
`);
  const rss = () => Number(fs.readFileSync(`/proc/${g.proc.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]);
  try {
    const before = rss();
    const body = JSON.stringify(chatBody('big', { stream: true, mock: { body_bytes: 96 * 1024 * 1024 } }));
    const net = await import('node:net');
    const sock = net.connect(g.port, '127.0.0.1');
    await new Promise((r) => sock.on('connect', r));
    sock.pause(); // read nothing
    sock.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    await new Promise((r) => setTimeout(r, 1500));
    const during = rss();
    sock.destroy();
    assert.ok(during - before < 32 * 1024, `RSS grew by ${during - before} kB while the client was not reading`);
    await new Promise((r) => setTimeout(r, 300));
    const ok = await postJSON(`${g.url}/v1/chat/completions`, chatBody('big'));
    assert.equal(ok.status, 200);
  } finally { await g.stop(); await m.stop(); }
});

test('a large request pipelined behind a slow one is served, not dropped', async () => {
  const m = await startMock();
  const g = await startGateway(`
model_list:
  - model_name: m
    litellm_params: {model: openai/gpt-4o, api_base: "${m.base}", api_key: sk-x}
`);
  try {
    const slow = JSON.stringify(chatBody('m', { mock: { delay_ms: 400 } }));
    const big = JSON.stringify(chatBody('m', { messages: [{ role: 'user', content: 'y'.repeat(900 * 1024) }] }));
    const req = (b, last) => `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${last ? 'Connection: close\r\n' : ''}Content-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`;
    const r = await rawRequest(g.port, req(slow, false) + req(big, true), { timeoutMs: 10000 });
    const statuses = [...r.data.matchAll(/HTTP\/1\.1 (\d+)/g)].map((x) => x[1]);
    assert.deepEqual(statuses, ['200', '200']);
  } finally { await g.stop(); await m.stop(); }
});
