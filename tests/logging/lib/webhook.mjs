// webhook.mjs - a receiver for the generic_api webhook sink (LiteLLM's
// GenericAPILogger): it keeps every POST (headers, raw body, the records it
// holds) and can be told to answer 500, to hang, or to refuse connections.
//
//   const hook = await startWebhook();
//   hook.url                      http://127.0.0.1:<port>/hook
//   hook.records()                every StandardLoggingPayload received, in order
//   hook.posts                    [{headers, body, records, status}] (status: what we answered)
//   await hook.setMode('500')     'ok' | '500' | 'hang' | 'refuse' ('refuse' closes the
//                                 listening socket; any other mode listens again on the same port)
//   await hook.waitRecords(n, ms) true when n records arrived within ms
//   await hook.stop()
//
// A body is parsed as the sink's log_format: a JSON array (json_array), one
// object (single), or one object per line (ndjson).
import http from 'node:http';
import { once } from 'node:events';

export function parseBody(text) {
  const t = text.trim();
  if (!t) return [];
  try {
    const j = JSON.parse(t);
    return Array.isArray(j) ? j : [j];
  } catch {
    return t.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  }
}

export async function startWebhook({ path: urlPath = '/hook', mode = 'ok' } = {}) {
  const posts = [];
  const hung = new Set();
  let current = mode;
  let requests = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      requests++;
      const body = Buffer.concat(chunks).toString('utf8');
      if (current === 'hang') { hung.add(res); return; }
      if (current === '500') {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('receiver told to fail');
        return;
      }
      let records = null;
      try { records = parseBody(body); } catch { records = null; }
      posts.push({ method: req.method, url: req.url, headers: req.headers, body, records, status: records ? 200 : 400 });
      res.writeHead(records ? 200 : 400, { 'content-type': 'application/json' });
      res.end(records ? '{"ok":true}' : '{"error":"not JSON"}');
    });
  });
  server.keepAliveTimeout = 60000;
  const sockets = new Set();
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  let listening = true;

  async function listen() {
    if (listening) return;
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    listening = true;
  }
  async function unlisten() {
    if (!listening) return;
    const closed = new Promise((r) => server.close(r));
    for (const s of sockets) s.destroy(); // pooled keep-alive connections too: the sink sees a refused connect next
    await closed;
    listening = false;
  }

  return {
    port,
    url: `http://127.0.0.1:${port}${urlPath}`,
    posts,
    get requests() { return requests; },
    records() { return posts.flatMap((p) => p.records || []); },
    async setMode(m) {
      current = m;
      if (m === 'refuse') await unlisten();
      else await listen();
      if (m !== 'hang') {
        for (const res of hung) try { res.destroy(); } catch {}
        hung.clear();
      }
    },
    async waitRecords(n, ms = 15000) {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        if (this.records().length >= n) return true;
        await new Promise((r) => setTimeout(r, 50));
      }
      return this.records().length >= n;
    },
    async stop() {
      for (const res of hung) try { res.destroy(); } catch {}
      hung.clear();
      if (listening) await unlisten();
    },
  };
}
