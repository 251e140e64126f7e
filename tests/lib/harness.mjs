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
  const proc = spawn(SWITCHYARD, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
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
      if (proc.exitCode !== null) return proc.exitCode;
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
