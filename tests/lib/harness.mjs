// harness.mjs - start the real switchyard binary and the mock upstream for tests.
//
// Binaries come from env SWITCHYARD_BIN and MOCK_UPSTREAM_BIN (set by
// scripts/test.sh; default: build/). Every process started here is killed when
// the test file ends, and every wait is bounded.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '../..');
export const SWITCHYARD = process.env.SWITCHYARD_BIN || path.join(root, 'build/switchyard');
export const MOCK = process.env.MOCK_UPSTREAM_BIN || path.join(root, 'build/tests/mock/mock_upstream');

const children = new Set();
process.on('exit', () => { for (const c of children) try { c.kill('SIGKILL'); } catch {} });

export async function freePort() {
  const srv = net.createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address();
  srv.close();
  await once(srv, 'close');
  return port;
}

export function tmpdir() { return fs.mkdtempSync(path.join(os.tmpdir(), 'sy-test-')); }

function waitFor(child, re, what, ms = 10000) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const t = setTimeout(() => reject(new Error(`${what}: not ready after ${ms} ms; output:\n${buf}`)), ms);
    const on = (d) => {
      buf += d.toString();
      if (re.test(buf)) { clearTimeout(t); resolve(buf); }
    };
    child.stdout?.on('data', on);
    child.stderr?.on('data', on);
    child.on('exit', (code) => { clearTimeout(t); reject(new Error(`${what} exited (${code}) before ready:\n${buf}`)); });
  });
}

/** Start the mock upstream; returns {port, url, base, proc, requests(), reset(), stop()}. */
export async function startMock(extraArgs = []) {
  const port = await freePort();
  const proc = spawn(MOCK, ['--port', String(port), '--host', '127.0.0.1', ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(proc);
  await waitFor(proc, /listening on/, 'mock_upstream');
  const url = `http://127.0.0.1:${port}`;
  return {
    port, url, base: `${url}/v1`, proc,
    async requests() { return (await fetch(`${url}/__mock/requests`)).json(); },
    async reset() { await fetch(`${url}/__mock/reset`, { method: 'POST' }); },
    async stop() { children.delete(proc); proc.kill('SIGKILL'); },
  };
}

/** Start switchyard with a config (YAML text, or null for the built-in default). */
export async function startGateway(configYaml, { args = [], env = {}, workers = 1 } = {}) {
  const port = await freePort();
  const dir = tmpdir();
  const argv = ['--port', String(port), '--host', '127.0.0.1', '--workers', String(workers), ...args];
  let configPath = null;
  if (configYaml != null) {
    configPath = path.join(dir, 'config.yaml');
    fs.writeFileSync(configPath, configYaml);
    argv.unshift('--config', configPath);
  }
  // each instance gets its own embedded SQLite file unless the test names a database
  const dbenv = env.SWITCHYARD_DB || env.DATABASE_URL ? {} : { SWITCHYARD_DB: path.join(dir, 'switchyard.db') };
  const proc = spawn(SWITCHYARD, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...dbenv, ...env } });
  children.add(proc);
  let log = '';
  proc.stdout.on('data', (d) => { log += d; });
  proc.stderr.on('data', (d) => { log += d; });
  await waitFor(proc, /listening on/, 'switchyard');
  const url = `http://127.0.0.1:${port}`;
  return {
    port, url, proc, dir, configPath,
    log: () => log,
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode !== null || proc.signalCode !== null) { // already gone (a crash counts as a failure)
        if (proc.signalCode !== null) process.stderr.write(`switchyard died of ${proc.signalCode}; its log:\n${log}\n`);
        return proc.exitCode ?? 128;
      }
      const done = once(proc, 'exit');
      proc.kill(signal);
      const t = setTimeout(() => proc.kill('SIGKILL'), 10000);
      const [code] = await done;
      clearTimeout(t);
      children.delete(proc);
      if (code !== 0) process.stderr.write(`switchyard exited with ${code}; its log:\n${log}\n`);
      return code;
    },
  };
}

/** Send raw bytes on a fresh TCP connection; resolve with everything read until close or timeout. */
export function rawRequest(port, data, { timeoutMs = 5000, chunks = null, delayMs = 0 } = {}) {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let out = Buffer.alloc(0);
    const t = setTimeout(() => { sock.destroy(); resolve({ data: out.toString('latin1'), timedOut: true }); }, timeoutMs);
    sock.on('data', (d) => { out = Buffer.concat([out, d]); });
    sock.on('close', () => { clearTimeout(t); resolve({ data: out.toString('latin1'), timedOut: false }); });
    sock.on('error', () => {});
    sock.on('connect', async () => {
      const parts = chunks || [data];
      for (const p of parts) {
        if (sock.destroyed) break;
        sock.write(p);
        if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      }
    });
  });
}

export const chatBody = (model, extra = {}) => ({
  model,
  messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Say hello.' }],
  ...extra,
});

export async function postJSON(url, body, headers = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch {}
  return { status: res.status, headers: res.headers, text, json };
}

/** Assert the LiteLLM/OpenAI error shape. */
export function assertErrorShape(assert, r, status) {
  assert.equal(r.status, status, `status ${r.status}: ${r.text}`);
  assert.ok(r.json && r.json.error, `error object: ${r.text}`);
  const e = r.json.error;
  assert.equal(typeof e.message, 'string');
  assert.ok('type' in e && 'param' in e && 'code' in e, r.text);
  assert.equal(e.code, String(status));
}

/** Start a throwaway redis-server (Debian's package) on a free port (or the one given, to restart it); returns {port, url, proc, stop()}. */
export async function startRedis(fixedPort = 0) {
  const port = fixedPort || await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(proc);
  await waitFor(proc, /Ready to accept connections/, 'redis-server');
  return {
    port, proc,
    async stop() {
      children.delete(proc);
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const done = once(proc, 'exit').catch(() => {});
      proc.kill('SIGKILL');
      await done;
    },
  };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Poll fn (async, truthy when done) every 50 ms for at most ms; true when it became truthy. */
export async function until(fn, ms = 10000) {
  const end = Date.now() + ms;
  for (;;) {
    if (await fn()) return true;
    if (Date.now() >= end) return false;
    await sleep(50);
  }
}

/** sha256 hex of a plaintext key (what LiteLLM stores as "token" / SpendLogs.api_key). */
export async function sha256hex(s) {
  const { createHash } = await import('node:crypto');
  return createHash('sha256').update(s).digest('hex');
}

/** Call a JSON API with a bearer key: api(url, key, 'GET', '/key/info?key=..') or ('POST', path, body).
 * Returns {status, headers, text, json}. */
export async function api(baseUrl, key, method, p, body) {
  const res = await fetch(`${baseUrl}${p}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch {}
  return { status: res.status, headers: res.headers, text, json };
}

export const MASTER_KEY = 'sk-master-1234';

/** A config for the virtual-key / spend tests (issue 9): models priced by the
 * deployment ("priced", "other": input 0, output 0.001 per token), by the
 * built-in price table ("gpt-4o" -> openai/gpt-4o at the mock), the built-in
 * mock model ("builtin": input 0.0001, output 0), an embedding model; the
 * master key; spend rows written every 0.1 s. databaseUrl null = the
 * instance's SQLite file. `general` adds general_settings lines (YAML text). */
export function keysConfig(mockBase, { databaseUrl = null, general = '', extraModels = '' } = {}) {
  return `
model_list:
  - model_name: priced
    litellm_params: {model: openai/priced, api_base: "${mockBase}", api_key: sk-up, input_cost_per_token: 0, output_cost_per_token: 0.001}
  - model_name: other
    litellm_params: {model: openai/other, api_base: "${mockBase}", api_key: sk-up, input_cost_per_token: 0, output_cost_per_token: 0.001}
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${mockBase}", api_key: sk-up}
  - model_name: builtin
    litellm_params: {model: mock/builtin, mock_response: "ok", input_cost_per_token: 0.0001, output_cost_per_token: 0}
  - model_name: text-embedding-3-small
    litellm_params: {model: openai/text-embedding-3-small, api_base: "${mockBase}", api_key: sk-up}
${extraModels}
general_settings:
  master_key: ${MASTER_KEY}
  proxy_batch_write_at: 0.1
${databaseUrl ? `  database_url: "${databaseUrl}"\n` : ''}${general}
`;
}
