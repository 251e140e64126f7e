// bed.test.mjs - the test bed itself, without switchyard: each SDK-made server
// (streamable HTTP with SSE or JSON answers, the old SSE transport, stdio)
// answers the SDK client with the same tools, prompt and resource; its auth
// options refuse what they should; its counters, session drop and crash do
// what the gateway's tests rely on.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { connect, connectStdio, initialize, rpc, startMcpServer, textOf } from './lib.mjs';

const started = [];
after(async () => { for (const s of started) await s.stop(); });
const start = async (kind, opts) => { const s = await startMcpServer(kind, opts); started.push(s); return s; };

async function exercise(client, kind) {
  const tools = (await client.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(tools, ['add', 'big', 'crash', 'echo', 'fail', 'log', 'notify', 'slow', 'whoami']);
  assert.equal(textOf(await client.callTool({ name: 'echo', arguments: { text: 'héllo' } })), 'héllo');
  const sum = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
  assert.equal(textOf(sum), '42');
  assert.deepEqual(sum.structuredContent, { sum: 42 });
  const fail = await client.callTool({ name: 'fail', arguments: {} });
  assert.equal(fail.isError, true);
  assert.equal(textOf(fail), 'this tool failed');
  assert.equal(textOf(await client.callTool({ name: 'big', arguments: { bytes: 100000 } })).length, 100000);
  assert.equal(textOf(await client.callTool({ name: 'slow', arguments: { ms: 20 } })), 'slept 20');
  const bad = await client.callTool({ name: 'add', arguments: { a: 'x' } }).catch((e) => ({ thrown: e }));
  assert.ok(bad.thrown || bad.isError, 'invalid arguments are refused');
  const notes = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { notes.push(n.params.data); });
  assert.equal(textOf(await client.callTool({ name: 'notify', arguments: { count: 3 } })), 'notified 3');
  assert.deepEqual(notes, ['note 0', 'note 1', 'note 2']);
  assert.equal(textOf(await client.callTool({ name: 'log', arguments: { lines: 2 } })), 'logged 2');
  const who = JSON.parse(textOf(await client.callTool({ name: 'whoami', arguments: {} })));
  assert.equal(who.transport, kind);
  assert.equal(typeof who.pid, 'number');
  const p = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
  assert.equal(p.messages[0].content.text, 'Hello, Ada!');
  assert.deepEqual((await client.listResources()).resources.map((r) => r.uri), ['bed://readme']);
  assert.equal((await client.readResource({ uri: 'bed://readme' })).contents[0].text, 'switchyard MCP test bed');
  await client.ping();
  return who;
}

test('streamable HTTP server (SSE answers): tools, prompt, resource, whoami headers, counters', async () => {
  const s = await start('http');
  const c = await connect(s.url, { headers: { 'x-probe': 'p1' } });
  const who = await exercise(c, 'http');
  assert.equal(who.headers['x-probe'], 'p1');
  assert.ok(c.transport.sessionId, 'a stateful session');
  assert.equal(who.sessionId, c.transport.sessionId);
  const st = await s.stats();
  assert.equal(st.methods.initialize, 1);
  assert.equal(st.methods['tools/call'], 9);
  assert.equal(st.calls.echo, 1);
  assert.equal(st.sessions, 1);
  await c.close();
});

test('streamable HTTP server with JSON answers; a dropped session gets 404, no session 400', async () => {
  const s = await start('http', { json: true });
  const { sessionId } = await initialize(s.url);
  const r = await rpc(s.url, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: { text: 'j' } } }, { sessionId });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /application\/json/);
  assert.equal(r.json.id, 5);
  assert.equal(textOf(r.json.result), 'j');
  await s.dropSessions();
  const gone = await rpc(s.url, { jsonrpc: '2.0', id: 6, method: 'tools/list' }, { sessionId });
  assert.equal(gone.status, 404);
  assert.equal(gone.json.error.code, -32001);
  const none = await rpc(s.url, { jsonrpc: '2.0', id: 7, method: 'tools/list' });
  assert.equal(none.status, 400);
  const empty = await rpc(s.url, '', { sessionId });
  assert.equal(empty.status, 400);
});

test('old SSE transport server', async () => {
  const s = await start('sse', { headers: ['x-tenant: t1'] });
  const c = await connect(s.url, { transport: 'sse', headers: { 'x-tenant': 't1' } });
  const who = await exercise(c, 'sse');
  assert.equal(who.headers['x-tenant'], 't1');
  assert.equal((await s.stats()).calls.whoami, 1);
  await c.close();
  await assert.rejects(connect(s.url, { transport: 'sse' }), 'the required header is missing');
});

test('stdio server: the env it got, starts and calls counted', async () => {
  const s = await start('stdio', { env: { BED_SECRET: 's3' } });
  const c = await connectStdio(s);
  const who = await exercise(c, 'stdio');
  assert.equal(who.env.BED_SECRET, 's3');
  const st = await s.stats();
  assert.equal(st.starts, 1);
  assert.equal(st.pids[0], who.pid);
  assert.equal(st.calls.echo, 1);
  await c.close();
});

test('auth options: bearer, api key, basic refuse a request without them (401)', async () => {
  const cases = [
    [{ bearer: 'tok' }, { authorization: 'Bearer tok' }],
    [{ apiKey: 'k1' }, { 'x-api-key': 'k1' }],
    [{ basic: 'dTpw' }, { authorization: 'Basic dTpw' }],
  ];
  for (const [opts, good] of cases) {
    const s = await start('http', opts);
    const bad = await rpc(s.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, { headers: { authorization: 'Bearer wrong' } });
    assert.equal(bad.status, 401, JSON.stringify(opts));
    const c = await connect(s.url, { headers: good });
    assert.equal(textOf(await c.callTool({ name: 'echo', arguments: { text: 'ok' } })), 'ok');
    await c.close();
    assert.ok((await s.stats()).unauthorized >= 1);
  }
});

test('OAuth2 client credentials: /token issues a bearer the server then accepts; fetches counted', async () => {
  const s = await start('http', { oauth: 'cid:csecret', tokenTtl: 60 });
  const refused = await fetch(s.tokenUrl, { method: 'POST', body: 'grant_type=client_credentials&client_id=cid&client_secret=nope',
    headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  assert.equal(refused.status, 401);
  const tr = await fetch(s.tokenUrl, { method: 'POST', body: 'grant_type=client_credentials&client_id=cid&client_secret=csecret&scope=a%20b',
    headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  assert.equal(tr.status, 200);
  const tok = await tr.json();
  assert.equal(tok.token_type, 'Bearer');
  assert.equal(tok.expires_in, 60);
  const basic = await fetch(s.tokenUrl, { method: 'POST', body: 'grant_type=client_credentials',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('cid:csecret').toString('base64')}` } });
  assert.equal(basic.status, 200);
  await assert.rejects(connect(s.url, { headers: { authorization: 'Bearer forged' } }));
  const c = await connect(s.url, { headers: { authorization: `Bearer ${tok.access_token}` } });
  assert.equal(textOf(await c.callTool({ name: 'add', arguments: { a: 1, b: 1 } })), '2');
  await c.close();
  const st = await s.stats();
  assert.equal(st.tokenFetches, 3);
  assert.deepEqual(st.lastTokenRequest, { grant_type: 'client_credentials', client_id: 'cid', scope: null });
});

test('--tools narrows the list; crash takes an HTTP server down, restart brings it back', async () => {
  const s = await start('http', { tools: ['echo', 'crash'] });
  const c = await connect(s.url);
  assert.deepEqual((await c.listTools()).tools.map((t) => t.name).sort(), ['crash', 'echo']);
  await assert.rejects(c.callTool({ name: 'crash', arguments: {} }, undefined, { timeout: 5000 }));
  for (let i = 0; i < 100 && s.alive(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(s.alive(), false);
  assert.equal(s.proc.exitCode, 3);
  await assert.rejects(fetch(s.url, { method: 'POST', signal: AbortSignal.timeout(5000) }));
  await s.restart();
  const c2 = await connect(s.url);
  assert.equal(textOf(await c2.callTool({ name: 'echo', arguments: { text: 'back' } })), 'back');
  await c2.close();
});

test('crash over stdio exits with status 3', async () => {
  const s = await start('stdio', { tools: ['crash', 'echo'] });
  const c = await connectStdio(s);
  let closed = false;
  c.onclose = () => { closed = true; };
  await assert.rejects(c.callTool({ name: 'crash', arguments: {} }, undefined, { timeout: 5000 }));
  for (let i = 0; i < 100 && !closed; i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(closed, 'the client saw the process go');
});
