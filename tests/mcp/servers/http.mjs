#!/usr/bin/env node
// http.mjs - a test-bed MCP server over streamable HTTP (the SDK's
// StreamableHTTPServerTransport) at /mcp: stateful, one McpServer per session
// (Mcp-Session-Id), POST answered with an SSE stream or, with --json, JSON;
// GET opens the session's stream, DELETE ends it. A request naming a session
// this process does not know gets 404 (-32001 "Session not found"), one
// without a session that is not an initialize gets 400, as the SDK's examples.
// Tools and options: tools.mjs.
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { makeServer, newStats, options, send, serveHttp } from './tools.mjs';

const opts = options();
const stats = newStats();
const sessions = new Map(); // session id -> transport

const headersOf = (extra) => extra?.requestInfo?.headers ?? null;

async function newSession() {
  let transport;
  const server = makeServer(opts, {
    transport: 'http',
    sessionId: () => transport.sessionId ?? null,
    headers: headersOf,
    onCall: (t) => { stats.calls[t] = (stats.calls[t] || 0) + 1; },
    crash: () => http.crash(),
  });
  transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: opts.stateless ? undefined : () => randomUUID(),
    enableJsonResponse: !!opts.json,
    onsessioninitialized: (id) => { sessions.set(id, transport); stats.sessions = sessions.size; },
  });
  transport.onclose = () => {
    if (transport.sessionId) sessions.delete(transport.sessionId);
    stats.sessions = sessions.size;
  };
  await server.connect(transport);
  return transport;
}

const http = await serveHttp(opts, stats, async (req, res, url, body) => {
  if (url.pathname !== '/mcp') return send(res, 404, { error: 'not found' });
  if (opts.stateless) { // a fresh server per request, as the SDK's stateless example
    const t = await newSession();
    res.on('close', () => t.close());
    return t.handleRequest(req, res, body);
  }
  const sid = req.headers['mcp-session-id'];
  if (sid) {
    const t = sessions.get(sid);
    if (!t) return send(res, 404, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
    return t.handleRequest(req, res, body);
  }
  if (req.method === 'POST' && body && !Array.isArray(body) && isInitializeRequest(body)) {
    return (await newSession()).handleRequest(req, res, body);
  }
  send(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: No valid session ID provided' } });
}, () => {
  for (const t of sessions.values()) { t.onclose = undefined; t.close().catch(() => {}); }
  sessions.clear();
  stats.sessions = 0;
});
