// lib.mjs - the MCP test bed: start the SDK-made MCP servers of servers/,
// start switchyard with them in its config, and talk MCP to either with the
// official SDK client or with raw JSON-RPC posts.
//
//   const up = await startMcpServer('http', {bearer: 'up-secret'}); // also 'sse', 'stdio'
//   up.url, up.config (an mcp_servers entry), await up.stats(), await up.stop()
//   const gw = await startGatewayWithMcp({servers: {bed: up}, keys: [{key_alias: 'a'}]});
//   const client = await connect(gw.mcpUrl, {key: gw.keys[0]});   // an SDK Client
//   await client.listTools(); await client.callTool({name: 'bed-echo', arguments: {text: 'hi'}});
//   const r = await rpc(gw.mcpUrl, {jsonrpc: '2.0', id: 1, method: 'ping'}, {key: MASTER_KEY});
//
// http and sse servers are child processes of the test (killed when it ends,
// every wait bounded); a stdio server is only a command line for switchyard
// to start (its starts and calls are counted in a file: stats()).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { api, MASTER_KEY, startGateway, tmpdir } from '../lib/harness.mjs';

export { api, MASTER_KEY };
const here = path.dirname(fileURLToPath(import.meta.url));
export const SERVERS = path.join(here, 'servers');

const children = new Set();
process.on('exit', () => { for (const c of children) try { c.kill('SIGKILL'); } catch {} });

/** The servers' command line for opts (see servers/tools.mjs). */
function serverArgs(o) {
  const a = [];
  const put = (k, v) => { if (v !== undefined && v !== null && v !== false) a.push(`--${k}`, String(v)); };
  put('port', o.port ?? 0);
  if (o.tools) put('tools', o.tools.join(','));
  put('server-name', o.serverName);
  put('bearer', o.bearer);
  put('api-key', o.apiKey);
  put('basic', o.basic);
  for (const h of o.headers || []) put('header', h);
  put('oauth', o.oauth);
  put('token-ttl', o.tokenTtl);
  if (o.json) a.push('--json');
  if (o.stateless) a.push('--stateless');
  return a;
}

/**
 * Start a bed server. kind: 'http' | 'sse' | 'stdio'. opts: {port, tools: [...],
 * serverName, bearer, apiKey, basic (base64), headers: ['N: v'], oauth: 'id:secret',
 * tokenTtl (s), json, stateless, env (stdio: the env switchyard gives it)}.
 * Returns {kind, url, port, config, stats(), stop(), ...} (see below).
 */
export async function startMcpServer(kind, opts = {}) {
  if (!['http', 'sse', 'stdio'].includes(kind)) throw new Error(`unknown MCP server kind ${kind}`);
  const script = path.join(SERVERS, `${kind}.mjs`);
  if (kind === 'stdio') {
    const statsFile = path.join(tmpdir(), 'stdio-stats');
    const args = [script, ...serverArgs(opts).slice(2), '--stats-file', statsFile]; // no --port
    const lines = () => (fs.existsSync(statsFile) ? fs.readFileSync(statsFile, 'utf8').split('\n').filter(Boolean) : []);
    return {
      kind, statsFile, command: process.execPath, args,
      /** An mcp_servers entry. */
      config: { transport: 'stdio', command: process.execPath, args, env: opts.env || {} },
      /** {starts, pids: [...], calls: {tool: n}} from the stats file. */
      async stats() {
        const st = { starts: 0, pids: [], calls: {} };
        for (const l of lines()) {
          const [what, arg] = l.split(' ');
          if (what === 'start') { st.starts++; st.pids.push(Number(arg)); } else if (what === 'call') st.calls[arg] = (st.calls[arg] || 0) + 1;
        }
        return st;
      },
      async resetStats() { fs.rmSync(statsFile, { force: true }); },
      async stop() {},
    };
  }
  let port = opts.port ?? 0;
  let proc = null;
  let log = '';
  const start = async () => {
    proc = spawn(process.execPath, [script, ...serverArgs({ ...opts, port })], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(proc);
    log = '';
    proc.stderr.on('data', (d) => { log += d; });
    port = await new Promise((resolve, reject) => {
      let out = '';
      const t = setTimeout(() => reject(new Error(`MCP ${kind} server: not listening after 10 s:\n${out}${log}`)), 10000);
      proc.stdout.on('data', (d) => {
        out += d;
        const m = /listening (\d+)/.exec(out);
        if (m) { clearTimeout(t); resolve(Number(m[1])); }
      });
      proc.on('exit', (code) => { clearTimeout(t); reject(new Error(`MCP ${kind} server exited (${code}):\n${out}${log}`)); });
    });
  };
  await start();
  const base = `http://127.0.0.1:${port}`;
  const url = `${base}${kind === 'http' ? '/mcp' : '/sse'}`;
  const jget = async (p, method = 'GET') => (await fetch(`${base}${p}`, { method, signal: AbortSignal.timeout(10000) })).json();
  const h = {
    kind, port, base, url, tokenUrl: `${base}/token`,
    get proc() { return proc; },
    log: () => log,
    /** An mcp_servers entry. */
    config: { url, transport: kind },
    /** {requests, unauthorized, methods: {m: n}, calls: {tool: n}, tokenFetches, sessions, lastHeaders, lastTokenRequest} */
    stats: () => jget('/stats'),
    resetStats: () => jget('/stats/reset', 'POST'),
    /** Forget every session (the next request with an old one gets 404). */
    dropSessions: () => jget('/sessions/drop', 'POST'),
    alive: () => proc.exitCode === null && proc.signalCode === null,
    /** Stop it (SIGKILL; bounded). */
    async stop() {
      children.delete(proc);
      if (!h.alive()) return;
      const done = once(proc, 'exit');
      proc.kill('SIGKILL');
      await Promise.race([done, new Promise((r) => setTimeout(r, 5000))]);
    },
    /** Start it again on the same port (after stop() or a crash). */
    async restart() { await h.stop(); await start(); },
  };
  return h;
}

const entryOf = (v) => (v && v.config && v.kind ? v.config : v && v.server ? { ...v.server.config, ...omit(v, 'server') } : v);
const omit = (o, k) => Object.fromEntries(Object.entries(o).filter(([x]) => x !== k));

/** The mcp_servers section (YAML; each entry a JSON flow mapping). servers: {name: handle | entry | {server: handle, ...overrides}}. */
export function mcpServersYaml(servers) {
  const lines = ['mcp_servers:'];
  for (const [name, v] of Object.entries(servers)) lines.push(`  ${name}: ${JSON.stringify(entryOf(v))}`);
  return lines.join('\n');
}

/**
 * Start switchyard with MCP servers. opts:
 *   servers   {name: handle | mcp_servers entry | {server: handle, ...overrides}}
 *   aliases   litellm_settings.mcp_aliases {alias: server name}
 *   keys      /key/generate bodies, made with the master key once it is up: gw.keys[i]
 *             (and gw.key[key_alias])
 *   db        a database URL (PostgreSQL, shared by instances); default: the instance's SQLite file
 *   models    model_list entries (YAML lines, indented 2); default: one mock model "m"
 *   general   general_settings lines (YAML, indented 2)
 *   litellm   litellm_settings lines (YAML, indented 2)
 *   extraConfig  top-level YAML appended
 *   env, workers, args   as startGateway
 * Returns startGateway's handle plus {mcpUrl, keys, key, config, url}.
 */
export async function startGatewayWithMcp(opts = {}) {
  const { servers = {}, aliases = null, keys = [], db = null, models = null, general = '', litellm = '', extraConfig = '' } = opts;
  const ls = [litellm, aliases ? `  mcp_aliases: ${JSON.stringify(aliases)}` : ''].filter(Boolean).join('\n');
  const config = [
    'model_list:',
    models ?? '  - model_name: m\n    litellm_params: {model: mock/m, mock_response: "ok"}',
    Object.keys(servers).length ? mcpServersYaml(servers) : '',
    ls ? `litellm_settings:\n${ls}` : '',
    'general_settings:',
    `  master_key: ${MASTER_KEY}`,
    '  proxy_batch_write_at: 0.1',
    db ? `  database_url: "${db}"` : '',
    general,
    extraConfig,
    '',
  ].filter((l) => l !== '').join('\n');
  const gw = await startGateway(config, { env: opts.env || {}, workers: opts.workers || 1, args: opts.args || [] });
  gw.config = config;
  gw.mcpUrl = `${gw.url}/mcp`;
  gw.keys = [];
  gw.key = {};
  for (const body of keys) {
    const r = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', body);
    if (r.status !== 200 || !r.json?.key) {
      await gw.stop();
      throw new Error(`/key/generate ${JSON.stringify(body)}: ${r.status} ${r.text}`);
    }
    gw.keys.push(r.json.key);
    if (body.key_alias) gw.key[body.key_alias] = r.json.key;
  }
  return gw;
}

/** The auth header for key: {authorization: Bearer} or, keyHeader 'x-litellm-api-key', that one. */
function authHeaders(key, keyHeader = 'authorization') {
  if (!key) return {};
  return keyHeader === 'authorization' ? { authorization: `Bearer ${key}` } : { [keyHeader]: keyHeader === 'x-litellm-api-key' ? `Bearer ${key}` : key };
}

/**
 * An SDK Client connected to url. opts: {key, keyHeader ('authorization' |
 * 'x-litellm-api-key' | 'x-api-key'), headers, transport: 'http' | 'sse',
 * name}. client.transport.sessionId is the session (http).
 */
export async function connect(url, opts = {}) {
  const headers = { ...authHeaders(opts.key, opts.keyHeader), ...(opts.headers || {}) };
  const requestInit = { headers };
  const transport = opts.transport === 'sse'
    ? new SSEClientTransport(new URL(url), { requestInit })
    : new StreamableHTTPClientTransport(new URL(url), { requestInit });
  const client = new Client({ name: opts.name || 'bed-client', version: '1.0.0' });
  await client.connect(transport, { timeout: opts.timeoutMs ?? 20000 });
  return client;
}

/** An SDK Client of a stdio bed server, started by the SDK itself (no switchyard). */
export async function connectStdio(handle, env = {}) {
  const transport = new StdioClientTransport({ command: handle.command, args: handle.args, env: { ...handle.config.env, ...env }, stderr: 'pipe' });
  const client = new Client({ name: 'bed-client', version: '1.0.0' });
  await client.connect(transport, { timeout: 20000 });
  return client;
}

/** The JSON-RPC messages of a response body: JSON (one or a batch) or an SSE stream's data events. */
export function rpcMessages(contentType, text) {
  if (!text) return [];
  if ((contentType || '').includes('text/event-stream')) {
    const out = [];
    for (const ev of text.split(/\r?\n\r?\n/)) {
      const data = ev.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
      if (data) try { out.push(JSON.parse(data)); } catch {}
    }
    return out;
  }
  try {
    const j = JSON.parse(text);
    return Array.isArray(j) ? j : [j];
  } catch { return []; }
}

/**
 * POST one JSON-RPC body (object, array or raw string) to url.
 * opts: {key, keyHeader, sessionId, protocolVersion, headers, timeoutMs}.
 * Returns {status, headers, sessionId, text, messages, json}: json the
 * response to the request (the message with an id), or the first message.
 */
export async function rpc(url, body, opts = {}) {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...authHeaders(opts.key, opts.keyHeader),
    ...(opts.sessionId ? { 'mcp-session-id': opts.sessionId } : {}),
    ...(opts.protocolVersion ? { 'mcp-protocol-version': opts.protocolVersion } : {}),
    ...(opts.headers || {}),
  };
  const res = await fetch(url, {
    method: opts.method || 'POST', headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(opts.timeoutMs ?? 30000),
  });
  const text = await res.text();
  const messages = rpcMessages(res.headers.get('content-type'), text);
  return {
    status: res.status, headers: res.headers, sessionId: res.headers.get('mcp-session-id'), text, messages,
    json: messages.find((m) => m && 'id' in m && ('result' in m || 'error' in m)) ?? messages[0] ?? null,
  };
}

/** initialize + notifications/initialized by hand; returns {sessionId, result, protocolVersion}. */
export async function initialize(url, opts = {}) {
  const r = await rpc(url, {
    jsonrpc: '2.0', id: 0, method: 'initialize',
    params: { protocolVersion: opts.version || '2025-11-25', capabilities: {}, clientInfo: { name: 'bed-raw', version: '1.0.0' } },
  }, opts);
  if (r.status !== 200 || !r.json?.result) throw new Error(`initialize: ${r.status} ${r.text}`);
  const n = await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { ...opts, sessionId: r.sessionId });
  if (n.status !== 202 && n.status !== 200) throw new Error(`notifications/initialized: ${n.status} ${n.text}`);
  return { sessionId: r.sessionId, result: r.json.result, protocolVersion: r.json.result.protocolVersion };
}

/**
 * A round-robin HTTP load balancer in front of several gateways: each request
 * (not each connection) goes to the next backend, bodies streamed both ways,
 * as a fleet behind a balancer sees a session's requests. Returns {url, port,
 * hits: [n per backend], stop()}.
 */
export async function startRoundRobin(backends) {
  const http = await import('node:http');
  const targets = backends.map((b) => new URL(typeof b === 'string' ? b : b.url));
  const hits = targets.map(() => 0);
  const agent = new http.Agent({ keepAlive: true });
  let next = 0;
  const srv = http.createServer((req, res) => {
    const i = next++ % targets.length;
    hits[i]++;
    const t = targets[i];
    const up = http.request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: req.headers, agent }, (ur) => {
      res.writeHead(ur.statusCode, ur.headers);
      ur.pipe(res);
    });
    up.on('error', (e) => { if (!res.headersSent) res.writeHead(502); res.end(String(e.message)); });
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address();
  return {
    port, url: `http://127.0.0.1:${port}`, hits,
    async stop() { agent.destroy(); srv.closeAllConnections?.(); srv.close(); },
  };
}

/** The error text of a JSON-RPC answer to tools/call: the error's message, or an
 * isError result's text; null when the call succeeded. */
export function callError(msg) {
  if (msg?.error) return msg.error.message ?? JSON.stringify(msg.error);
  if (msg?.result?.isError) return textOf(msg.result) ?? 'isError';
  return null;
}

/** VmHWM / VmRSS of a process, in bytes (Linux /proc). */
export function memOf(pid) {
  const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number((new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(st) || [])[1] || 0) * 1024;
  return { hwm: kb('VmHWM'), rss: kb('VmRSS') };
}

/** The text of a CallToolResult's first content item. */
export const textOf = (result) => result?.content?.find((c) => c.type === 'text')?.text;
