// tools.mjs - what every test-bed MCP server offers, whatever its transport,
// and the command line they share.
//
// Tools:  echo {text}       -> the text
//         add {a, b}        -> a + b (text, and structuredContent {sum})
//         whoami            -> JSON text: the transport, the pid, the session id,
//                              the headers of the HTTP request that carried the
//                              call (http, sse) or the process env (stdio)
//         slow {ms}         -> waits ms (at most 10 min; cancellable), "slept <ms>"
//         big {bytes}       -> a text of that many "x"
//         fail              -> an isError result
//         notify {count}    -> sends count notifications/message (logging) on the
//                              call's stream first (SSE answers: before the result)
//         log {lines}       -> writes that many lines to stderr, "logged <lines>"
//         crash             -> the server dies: the process exits with status 3
//                              without answering (http, sse: its sockets are
//                              destroyed first, so the port stops listening)
// Prompt: greet {name}; resource: bed://readme (text).
//
// Options, "--name value" on the command line or MCP_BED_<NAME> in the env
// (the command line wins):
//   --port N         listen port (http, sse; 0: any, printed as "listening <port>")
//   --tools a,b      only these tools (default: all)
//   --server-name s  serverInfo.name (default "bed-<transport>")
//   --bearer T       require "Authorization: Bearer T"           (http, sse)
//   --api-key K      require "X-API-Key: K"                      (http, sse)
//   --basic B        require "Authorization: Basic B"            (http, sse)
//   --header "N: v"  require header N with value v                (http, sse)
//   --oauth id:secret  serve POST /token (client credentials) and require a
//                    bearer token it issued and that has not expired (http, sse)
//   --token-ttl S    lifetime of those tokens (default 3600)
//   --json           answer POSTs with JSON instead of an SSE stream (http)
//   --stateless      no Mcp-Session-Id (http)
//   --stats-file F   append "start <pid>" on start, "call <tool>" per call (stdio)
// GET /stats (http, sse) answers the counters as JSON; POST /stats/reset zeroes
// them; POST /sessions/drop forgets every session (the next request with an
// old Mcp-Session-Id gets 404, as after a server restart).
import fs from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

export const ALL_TOOLS = ['echo', 'add', 'whoami', 'slow', 'big', 'fail', 'notify', 'log', 'crash'];

/** Parse argv ("--k v", "--flag") over MCP_BED_* env defaults. */
export function options(argv = process.argv.slice(2), env = process.env) {
  const o = {};
  for (const [k, v] of Object.entries(env)) {
    if (k.startsWith('MCP_BED_')) o[k.slice(8).toLowerCase().replace(/_/g, '-')] = v;
  }
  const flags = new Set(['json', 'stateless']);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const k = a.slice(2);
    if (flags.has(k)) o[k] = '1';
    else if (k === 'header') (o.headers ??= []).push(argv[++i]);
    else o[k] = argv[++i];
  }
  if (typeof o.header === 'string') o.headers = [o.header]; // from the env
  o.port = Number(o.port ?? 0);
  o.tools = o.tools ? o.tools.split(',') : ALL_TOOLS;
  o['token-ttl'] = Number(o['token-ttl'] ?? 3600);
  return o;
}

const text = (t) => ({ content: [{ type: 'text', text: String(t) }] });

/**
 * A new McpServer with the bed's tools. ctx: {transport, sessionId(), onCall(tool),
 * headers(extra) -> object|null, crash()}.
 */
export function makeServer(opts, ctx) {
  const server = new McpServer({ name: opts['server-name'] || `bed-${ctx.transport}`, version: '1.0.0' },
    { capabilities: { logging: {} } });
  const want = new Set(opts.tools);
  const tool = (name, config, fn) => {
    if (!want.has(name)) return;
    server.registerTool(name, config, async (...a) => { ctx.onCall?.(name); return fn(...a); });
  };
  tool('echo', { description: 'Echo the text back', inputSchema: { text: z.string() } }, ({ text: t }) => text(t));
  tool('add', {
    description: 'Add two numbers',
    inputSchema: { a: z.number(), b: z.number() },
    outputSchema: { sum: z.number() },
  }, ({ a, b }) => ({ ...text(a + b), structuredContent: { sum: a + b } }));
  tool('whoami', { description: 'What the server saw of this call' }, (extra) => text(JSON.stringify({
    transport: ctx.transport,
    pid: process.pid,
    sessionId: ctx.sessionId?.() ?? extra.sessionId ?? null,
    headers: ctx.headers ? ctx.headers(extra) : null,
    env: ctx.transport === 'stdio' ? process.env : null,
  })));
  tool('slow', { description: 'Wait ms milliseconds', inputSchema: { ms: z.number().int().min(0).max(600000) } },
    ({ ms }, extra) => new Promise((resolve) => {
      const t = setTimeout(() => resolve(text(`slept ${ms}`)), ms);
      extra.signal?.addEventListener('abort', () => { clearTimeout(t); resolve(text('cancelled')); });
    }));
  tool('big', { description: 'A text result of that many bytes', inputSchema: { bytes: z.number().int().min(0).max(1 << 30) } },
    ({ bytes }) => text('x'.repeat(bytes)));
  tool('fail', { description: 'Always fails' }, () => ({ isError: true, content: [{ type: 'text', text: 'this tool failed' }] }));
  tool('notify', { description: 'Send notifications before the result', inputSchema: { count: z.number().int().min(0).max(1000) } },
    async ({ count }, extra) => {
      for (let i = 0; i < count; i++) {
        await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: `note ${i}` } });
      }
      return text(`notified ${count}`);
    });
  tool('log', { description: 'Write lines to stderr', inputSchema: { lines: z.number().int().min(0).max(1000000) } },
    ({ lines }) => {
      process.stderr.write(`bed log line ${'.'.repeat(40)}\n`.repeat(lines));
      return text(`logged ${lines}`);
    });
  tool('crash', { description: 'Kill the server' }, () => { ctx.crash(); return new Promise(() => {}); });

  server.registerPrompt('greet', { description: 'Greet someone', argsSchema: { name: z.string() } }, ({ name }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${name}!` } }],
  }));
  server.registerResource('readme', 'bed://readme', { description: 'About the bed', mimeType: 'text/plain' },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'switchyard MCP test bed' }] }));
  return server;
}

/** Header checks and the OAuth2 client-credentials token endpoint of the HTTP transports. */
export function makeAuth(opts, stats) {
  const tokens = new Map(); // token -> expiry (ms)
  let seq = 0;
  const want = [];
  if (opts.bearer) want.push(['authorization', `Bearer ${opts.bearer}`]);
  if (opts.basic) want.push(['authorization', `Basic ${opts.basic}`]);
  if (opts['api-key']) want.push(['x-api-key', opts['api-key']]);
  for (const h of opts.headers || []) {
    const i = h.indexOf(':');
    want.push([h.slice(0, i).trim().toLowerCase(), h.slice(i + 1).trim()]);
  }
  return {
    /** true when req may pass. */
    check(req) {
      for (const [k, v] of want) if (req.headers[k] !== v) return false;
      if (opts.oauth) {
        const m = /^Bearer (.+)$/.exec(req.headers.authorization || '');
        const exp = m && tokens.get(m[1]);
        if (!exp || exp < Date.now()) return false;
      }
      return true;
    },
    /** POST /token: grant_type=client_credentials, the client's id and secret in
     * the form (or JSON) body or in Basic auth. */
    token(req, body, res) {
      stats.tokenFetches++;
      let f = {};
      const ct = req.headers['content-type'] || '';
      try { f = ct.includes('json') ? JSON.parse(body) : Object.fromEntries(new URLSearchParams(body)); } catch {}
      const basic = /^Basic (.+)$/.exec(req.headers.authorization || '');
      if (basic) {
        const [id, secret] = Buffer.from(basic[1], 'base64').toString().split(':');
        f.client_id ??= decodeURIComponent(id); f.client_secret ??= decodeURIComponent(secret ?? '');
      }
      stats.lastTokenRequest = { grant_type: f.grant_type, client_id: f.client_id, scope: f.scope ?? null };
      if (f.grant_type !== 'client_credentials' || `${f.client_id}:${f.client_secret}` !== opts.oauth) {
        return send(res, 401, { error: 'invalid_client' });
      }
      const tok = `bed-token-${++seq}`;
      tokens.set(tok, Date.now() + opts['token-ttl'] * 1000);
      send(res, 200, { access_token: tok, token_type: 'Bearer', expires_in: opts['token-ttl'] });
    },
  };
}

export function send(res, status, obj, headers = {}) {
  const b = JSON.stringify(obj);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(b), ...headers });
  res.end(b);
}

export function readBody(req, max = 64 << 20) {
  return new Promise((resolve, reject) => {
    const parts = [];
    let n = 0;
    req.on('data', (d) => { n += d.length; if (n > max) { req.destroy(); reject(new Error('body too large')); } else parts.push(d); });
    req.on('end', () => resolve(Buffer.concat(parts).toString()));
    req.on('error', reject);
  });
}

export function newStats() {
  return { requests: 0, unauthorized: 0, methods: {}, calls: {}, tokenFetches: 0, sessions: 0, lastTokenRequest: null, lastHeaders: null };
}

/** Count the JSON-RPC methods of a parsed body (a message or a batch). */
export function countMethods(stats, body) {
  for (const m of Array.isArray(body) ? body : [body]) {
    if (m && typeof m.method === 'string') stats.methods[m.method] = (stats.methods[m.method] || 0) + 1;
  }
}

/**
 * The HTTP plumbing both HTTP transports share: auth, /token, /stats, crash.
 * route(req, res, url, body) handles the transport's own paths.
 */
export async function serveHttp(opts, stats, route, onDrop) {
  const http = await import('node:http');
  const auth = makeAuth(opts, stats);
  const sockets = new Set();
  const srv = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    try {
      const body = req.method === 'POST' ? await readBody(req) : '';
      if (url.pathname === '/stats' && req.method === 'GET') return send(res, 200, stats);
      if (url.pathname === '/stats/reset' && req.method === 'POST') {
        Object.assign(stats, newStats(), { sessions: stats.sessions });
        return send(res, 200, { ok: true });
      }
      if (url.pathname === '/sessions/drop' && req.method === 'POST') { onDrop(); return send(res, 200, { ok: true }); }
      if (url.pathname === '/token' && opts.oauth && req.method === 'POST') return auth.token(req, body, res);
      stats.requests++;
      stats.lastHeaders = req.headers;
      if (!auth.check(req)) {
        stats.unauthorized++;
        return send(res, 401, { error: 'unauthorized' }, { 'www-authenticate': 'Bearer' });
      }
      let parsed;
      if (req.method === 'POST' && !body) {
        return send(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: empty body' } });
      }
      if (body) {
        try { parsed = JSON.parse(body); } catch {
          return send(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
        }
        countMethods(stats, parsed);
      }
      await route(req, res, url, parsed);
    } catch (e) {
      if (!res.headersSent) send(res, 500, { error: String(e?.message || e) });
      else res.destroy();
    }
  });
  srv.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  srv.listen(opts.port, opts.host || '127.0.0.1', () => {
    process.stdout.write(`listening ${srv.address().port}\n`);
  });
  const crash = () => {
    srv.close();
    for (const s of sockets) s.destroy();
    setImmediate(() => process.exit(3));
  };
  process.on('SIGTERM', () => { srv.close(); for (const s of sockets) s.destroy(); process.exit(0); });
  return { srv, crash };
}

/** stdio servers: append a line to the stats file, if one was named. */
export function statsLine(opts, line) {
  if (opts['stats-file']) fs.appendFileSync(opts['stats-file'], `${line}\n`);
}
