// sse.test.mjs - MCP's old HTTP+SSE transport served by switchyard
// (stages/mcp_sse.c): GET /sse or /mcp/sse opens the stream, whose first
// event names the message endpoint (/mcp/sse/messages?session_id=...); each
// POST there is answered 202 and its JSON-RPC answer comes on the stream.
//
//   - the SDK's SSEClientTransport: initialize, tools/list, tools/call, on
//     both paths, with Authorization or x-litellm-api-key, on two workers;
//   - raw: a batch's answers as one event each, a notification's none;
//   - refusals: no session_id, a malformed or forged one, another key's
//     session, a stream that ended, a stream another instance holds (404
//     that says so), a POST or a GET without auth, past the stream bound;
//   - HEAD answers without hanging; SIGTERM ends open streams at once.
//
// Every wait is bounded; no test asserts a duration.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MASTER_KEY, connect, startGatewayWithMcp, startMcpServer, textOf } from './lib.mjs';

let bed, gw, gw2;
const running = new Set();

before(async () => {
  bed = await startMcpServer('http', { tools: ['echo', 'add'] });
  gw = await startGatewayWithMcp({
    servers: { bed },
    keys: [{ key_alias: 'a', object_permission: { mcp_servers: ['bed'] } },
      { key_alias: 'b', object_permission: { mcp_servers: ['bed'] } }],
    workers: 2,
    general: '  switchyard_mcp_sse_max_streams: 40',
  });
  running.add(gw);
});
after(async () => {
  for (const g of running) await g.stop('SIGKILL');
  await bed?.stop();
});

/** Open a stream by hand: {status, headers, next(ms) -> {event, data} | null, endpoint, close()}. */
async function openStream(url, headers = {}) {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ac.signal });
  const st = { status: res.status, headers: res.headers, res, close: () => ac.abort() };
  if (res.status !== 200) {
    st.text = await res.text();
    return st;
  }
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let pending = null; // a read that outlived a timeout: the next call takes its bytes
  st.next = async (ms = 10000) => {
    const end = Date.now() + ms;
    for (;;) {
      const i = buf.search(/\r?\n\r?\n/);
      if (i >= 0) {
        const raw = buf.slice(0, i);
        buf = buf.slice(buf.slice(i).match(/^\r?\n\r?\n/)[0].length + i);
        const ev = { event: 'message', data: [], comment: false };
        for (const line of raw.split(/\r?\n/)) {
          if (line.startsWith(':')) ev.comment = true;
          else if (line.startsWith('event:')) ev.event = line.slice(6).trim();
          else if (line.startsWith('data:')) ev.data.push(line.slice(5).replace(/^ /, ''));
        }
        if (ev.comment && !ev.data.length) continue;
        return { event: ev.event, data: ev.data.join('\n') };
      }
      const left = end - Date.now();
      if (left <= 0) return null;
      pending ??= reader.read();
      let timer;
      const r = await Promise.race([pending, new Promise((res) => { timer = setTimeout(() => res({ timeout: true }), left); })]);
      clearTimeout(timer);
      if (r.timeout) return null;
      pending = null;
      if (r.done) return null;
      buf += dec.decode(r.value, { stream: true });
    }
  };
  const first = await st.next();
  assert.ok(first, 'the endpoint event comes first');
  assert.equal(first.event, 'endpoint');
  st.endpoint = new URL(first.data, url).href;
  return st;
}

const auth = (key) => ({ authorization: `Bearer ${key}` });
const post = (url, body, headers = {}) => fetch(url, {
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: typeof body === 'string' ? body : JSON.stringify(body),
  signal: AbortSignal.timeout(20000),
});
const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

test('the SDK SSEClientTransport: initialize, tools/list, tools/call on /mcp/sse and /sse', async () => {
  for (const p of ['/mcp/sse', '/sse']) {
    const client = await connect(`${gw.url}${p}`, { transport: 'sse', key: gw.key.a });
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['bed-add', 'bed-echo']);
      const r = await client.callTool({ name: 'bed-echo', arguments: { text: `over ${p}` } });
      assert.equal(textOf(r), `over ${p}`);
      const s = await client.callTool({ name: 'bed-add', arguments: { a: 2, b: 40 } });
      assert.equal(s.structuredContent?.sum ?? Number(textOf(s)), 42);
    } finally {
      await client.close();
    }
  }
});

test('x-litellm-api-key authenticates the stream and the posts; many clients over two workers', async () => {
  const clients = await Promise.all([0, 1, 2, 3, 4, 5].map(() =>
    connect(`${gw.url}/mcp/sse`, { transport: 'sse', key: gw.key.b, keyHeader: 'x-litellm-api-key' })));
  try {
    // each stream's POSTs land on whichever worker accepts them: the answers reach the stream's worker
    const texts = await Promise.all(clients.flatMap((c, i) => [0, 1, 2].map((k) =>
      c.callTool({ name: 'bed-echo', arguments: { text: `c${i}-${k}` } }).then(textOf))));
    assert.deepEqual(texts, clients.flatMap((c, i) => [0, 1, 2].map((k) => `c${i}-${k}`)));
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
});

test('raw: 202 Accepted, a batch answered one event per message, a notification answered by none', async () => {
  const st = await openStream(`${gw.url}/mcp/sse`, auth(gw.key.a));
  try {
    assert.equal(st.status, 200);
    assert.match(st.headers.get('content-type'), /^text\/event-stream/);
    assert.match(st.endpoint, /\/mcp\/sse\/messages\?session_id=sy1\./);
    let r = await post(st.endpoint, INIT, auth(gw.key.a));
    assert.equal(r.status, 202);
    assert.equal(await r.text(), 'Accepted');
    let ev = await st.next();
    assert.equal(ev.event, 'message');
    const init = JSON.parse(ev.data);
    assert.equal(init.id, 0);
    assert.equal(init.result.protocolVersion, '2024-11-05');
    r = await post(st.endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' }, auth(gw.key.a));
    assert.equal(r.status, 202);
    r = await post(st.endpoint, [
      { jsonrpc: '2.0', id: 'x', method: 'ping' },
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'bed-echo', arguments: { text: 'in a batch' } } },
    ], auth(gw.key.a));
    assert.equal(r.status, 202);
    const got = [await st.next(), await st.next()].map((e) => JSON.parse(e.data));
    assert.deepEqual(got.map((m) => m.id).sort(), [7, 'x'].sort());
    assert.equal(textOf(got.find((m) => m.id === 7).result), 'in a batch');
    assert.equal(await st.next(1000), null, 'the notification got no answer on the stream');
  } finally {
    st.close();
  }
});

test('refusals: no session_id, malformed or forged ids, another key, a body that is not JSON', async () => {
  const st = await openStream(`${gw.url}/mcp/sse`, auth(gw.key.a));
  try {
    const base = `${gw.url}/mcp/sse/messages`;
    const rpcErr = async (r, status) => {
      assert.equal(r.status, status);
      const j = await r.json();
      assert.equal(j.jsonrpc, '2.0');
      assert.equal(j.id, null);
      assert.equal(typeof j.error.message, 'string');
      return j.error.message;
    };
    assert.match(await rpcErr(await post(base, INIT, auth(gw.key.a)), 400), /session_id is required/);
    assert.match(await rpcErr(await post(`${base}?session_id=nope`, INIT, auth(gw.key.a)), 400), /Invalid session ID/);
    const sid = new URL(st.endpoint).searchParams.get('session_id');
    const forged = sid.slice(0, -4) + (sid.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    assert.match(await rpcErr(await post(`${base}?session_id=${forged}`, INIT, auth(gw.key.a)), 400), /Invalid session ID/);
    // the stream is key a's: key b (and the master key) may not post into it
    assert.match(await rpcErr(await post(st.endpoint, INIT, auth(gw.key.b)), 404), /Could not find session/);
    assert.match(await rpcErr(await post(st.endpoint, INIT, auth(MASTER_KEY)), 404), /Could not find session/);
    // no auth at all: the auth stage's 401, LiteLLM's shape
    const r = await post(st.endpoint, INIT);
    assert.equal(r.status, 401);
    assert.ok((await r.json()).error);
    // a body that is not JSON-RPC: a parse error for the POST, nothing on the stream
    assert.equal((await rpcErr(await post(st.endpoint, '{"jsonrpc":', auth(gw.key.a)), 400)).length > 0, true);
    assert.equal(await st.next(500), null);
    // the stream still serves its key
    assert.equal((await post(st.endpoint, INIT, auth(gw.key.a))).status, 202);
    assert.equal(JSON.parse((await st.next()).data).id, 0);
  } finally {
    st.close();
  }
});

test('a GET without auth is refused; HEAD answers the head without a stream', async () => {
  const r = await fetch(`${gw.url}/mcp/sse`, { headers: { accept: 'text/event-stream' }, signal: AbortSignal.timeout(10000) });
  assert.equal(r.status, 401);
  await r.text();
  const h = await fetch(`${gw.url}/sse`, { method: 'HEAD', headers: auth(gw.key.a), signal: AbortSignal.timeout(10000) });
  assert.equal(h.status, 200);
  assert.match(h.headers.get('content-type'), /^text\/event-stream/);
});

test('a stream that ended: its session is gone (404)', async () => {
  const st = await openStream(`${gw.url}/mcp/sse`, auth(gw.key.a));
  st.close();
  let status = 0;
  for (let i = 0; i < 100 && status !== 404; i++) { // the gateway sees the close within a moment
    const r = await post(st.endpoint, INIT, auth(gw.key.a));
    status = r.status;
    await r.text();
    if (status !== 404) await new Promise((res) => setTimeout(res, 50));
  }
  assert.equal(status, 404);
});

test('a stream another instance holds: 404 that names the SSE transport\'s limit', async () => {
  gw2 = await startGatewayWithMcp({ servers: { bed } }); // same master key: it reads gw's session ids
  running.add(gw2);
  const st = await openStream(`${gw.url}/mcp/sse`, auth(MASTER_KEY));
  try {
    const other = st.endpoint.replace(gw.url, gw2.url);
    const r = await post(other, INIT, auth(MASTER_KEY));
    assert.equal(r.status, 404);
    const j = await r.json();
    assert.match(j.error.message, /bound to the gateway instance that holds/);
    assert.match(j.error.message, /streamable HTTP endpoint \/mcp/);
    assert.equal((await post(st.endpoint, INIT, auth(MASTER_KEY))).status, 202, 'the holder still serves it');
    assert.equal(JSON.parse((await st.next()).data).id, 0);
  } finally {
    st.close();
  }
});

test('streams per worker are bounded (switchyard_mcp_sse_max_streams): 503 past it', async () => {
  const one = await startGatewayWithMcp({ servers: { bed }, general: '  switchyard_mcp_sse_max_streams: 2' });
  running.add(one);
  const a = await openStream(`${one.url}/sse`, auth(MASTER_KEY));
  const b = await openStream(`${one.url}/sse`, auth(MASTER_KEY));
  const c = await openStream(`${one.url}/sse`, auth(MASTER_KEY));
  assert.equal(c.status, 503);
  assert.match(JSON.parse(c.text).error.message, /Too many MCP SSE streams/);
  a.close();
  let d;
  for (let i = 0; i < 100; i++) { // a's slot frees once the gateway sees it close
    d = await openStream(`${one.url}/sse`, auth(MASTER_KEY));
    if (d.status === 200) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  assert.equal(d.status, 200);
  // SIGTERM with two streams open: they end at once, switchyard exits 0 (the harness SIGKILLs after 10 s)
  running.delete(one);
  assert.equal(await one.stop(), 0);
  assert.equal(await b.next(5000), null, 'the stream ended');
  b.close();
  d.close();
});
