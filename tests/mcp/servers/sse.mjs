#!/usr/bin/env node
// sse.mjs - a test-bed MCP server over the old HTTP+SSE transport (protocol
// 2024-11-05; the SDK's SSEServerTransport): GET /sse opens the stream, whose
// first event ("endpoint") names /messages?sessionId=<id>; the client POSTs
// its messages there (202) and the answers come on the stream. An unknown
// sessionId gets 404. Tools and options: tools.mjs.
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { makeServer, newStats, options, send, serveHttp } from './tools.mjs';

const opts = options();
const stats = newStats();
const sessions = new Map(); // sessionId -> transport

const http = await serveHttp(opts, stats, async (req, res, url, body) => {
  if (url.pathname === '/sse' && req.method === 'GET') {
    const transport = new SSEServerTransport('/messages', res);
    const server = makeServer(opts, {
      transport: 'sse',
      sessionId: () => transport.sessionId,
      headers: (extra) => extra?.requestInfo?.headers ?? null,
      onCall: (t) => { stats.calls[t] = (stats.calls[t] || 0) + 1; },
      crash: () => http.crash(),
    });
    sessions.set(transport.sessionId, transport);
    stats.sessions = sessions.size;
    res.on('close', () => { sessions.delete(transport.sessionId); stats.sessions = sessions.size; });
    return server.connect(transport);
  }
  if (url.pathname === '/messages' && req.method === 'POST') {
    const t = sessions.get(url.searchParams.get('sessionId') || '');
    if (!t) return send(res, 404, { error: 'Session not found' });
    return t.handlePostMessage(req, res, body);
  }
  send(res, 404, { error: 'not found' });
}, () => {
  for (const t of sessions.values()) t.close().catch(() => {});
  sessions.clear();
  stats.sessions = 0;
});
