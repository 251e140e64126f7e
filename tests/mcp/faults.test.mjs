// faults.test.mjs - what the MCP gateway does when its servers misbehave (issue
// 24, "Faults"). One switchyard, the master key, six servers:
//
//   st     stdio bed server (echo, whoami, big, crash), timeout 10 s: a crash is
//          followed by a restart
//   bed    streamable HTTP bed server, timeout 2 s: slow, echo
//   huge   streamable HTTP bed server: big
//   flaky  streamable HTTP bed server, stopped and started again on its port
//   hang   a TCP server that accepts and never answers, timeout 1 s
//   down   a port where nothing listens
//
// Every answer must be a clear JSON-RPC error (or an isError result) within a
// bound; the other servers' tools stay listed and callable; switchyard exits 0.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { freePort, until } from '../lib/harness.mjs';
import { MASTER_KEY, callError, initialize, memOf, rpc, startGatewayWithMcp, startMcpServer, textOf } from './lib.mjs';

let gw, st, bed, huge, flaky, hang, sid;
const held = new Set();

before(async () => {
  st = await startMcpServer('stdio', { tools: ['echo', 'whoami', 'big', 'crash'] });
  bed = await startMcpServer('http', { tools: ['echo', 'slow'] });
  huge = await startMcpServer('http', { tools: ['echo', 'big'] });
  flaky = await startMcpServer('http', { tools: ['echo'] });
  hang = net.createServer((s) => { held.add(s); s.on('error', () => {}); s.on('close', () => held.delete(s)); });
  hang.listen(0, '127.0.0.1');
  await new Promise((r) => hang.once('listening', r));
  const downPort = await freePort();
  gw = await startGatewayWithMcp({
    servers: {
      st: { server: st, timeout: 10 },
      bed: { server: bed, timeout: 2 },
      huge,
      flaky,
      hang: { url: `http://127.0.0.1:${hang.address().port}/mcp`, transport: 'http', timeout: 1 },
      down: { url: `http://127.0.0.1:${downPort}/mcp`, transport: 'http', timeout: 1 },
    },
  });
  ({ sessionId: sid } = await initialize(gw.mcpUrl, { key: MASTER_KEY }));
});
after(async () => {
  if (gw) assert.equal(await gw.stop(), 0, 'switchyard exits 0 after the faults');
  for (const s of held) s.destroy();
  hang?.close();
  await bed?.stop();
  await huge?.stop();
  await flaky?.stop();
});

const call = (name, args = {}, timeoutMs = 20000) =>
  rpc(gw.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
    { key: MASTER_KEY, sessionId: sid, timeoutMs });
const ok = async (name, args) => {
  const r = await call(name, args);
  assert.equal(r.status, 200, r.text);
  assert.equal(callError(r.json), null, r.text);
  return r.json.result;
};

test('a server that hangs or is down leaves the other servers listed and callable', async () => {
  const r = await rpc(gw.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { key: MASTER_KEY, sessionId: sid, timeoutMs: 20000 });
  assert.equal(r.status, 200, r.text);
  const names = r.json.result.tools.map((t) => t.name);
  for (const n of ['st-echo', 'bed-echo', 'bed-slow', 'huge-big', 'flaky-echo']) assert.ok(names.includes(n), `${n} in ${names}`);
  assert.ok(!names.some((n) => n.startsWith('hang-') || n.startsWith('down-')), names.join(','));
  assert.equal(textOf(await ok('bed-echo', { text: 'still here' })), 'still here');

  for (const name of ['hang-echo', 'down-echo']) {
    const e = await call(name, { text: 'x' });
    assert.ok(callError(e.json), `${name} answers an error: ${e.text}`);
  }
});

test('an upstream call that hangs hits the server timeout with a clear error', async () => {
  const r = await call('bed-slow', { ms: 120000 });
  assert.equal(r.status, 200, r.text);
  const err = callError(r.json);
  assert.ok(err, r.text);
  assert.match(err, /time/i);
  // the same server still answers on its session
  assert.equal(textOf(await ok('bed-echo', { text: 'after the timeout' })), 'after the timeout');
  // a hang at the transport level (accepted, never answered) is bounded too
  const h = await call('hang-echo', { text: 'x' });
  assert.ok(callError(h.json), h.text);
});

test('a huge tool result is capped: a clear error, no memory blowup, the server still usable', async () => {
  const size = 48 << 20;
  const m0 = memOf(gw.proc.pid);
  const r = await call('huge-big', { bytes: size }, 60000);
  const err = callError(r.json);
  assert.ok(err, `an error, not ${r.text.length} bytes`);
  assert.match(err, /larger than \d+ bytes/, 'the error says why');
  assert.ok(r.text.length < 1 << 20, 'the answer is not the result');
  const m1 = memOf(gw.proc.pid);
  assert.ok(m1.hwm - m0.hwm < size / 2, `peak RSS grew by ${((m1.hwm - m0.hwm) / 1048576).toFixed(1)} MiB for a ${size >> 20} MiB result`);
  assert.equal(textOf(await ok('huge-big', { bytes: 1000 })).length, 1000);
  assert.equal(textOf(await ok('huge-echo', { text: 'after the big one' })), 'after the big one');
});

test('a huge result over stdio: the line is dropped, the call fails within the server timeout, the process goes on', async () => {
  const size = 48 << 20;
  const pid = JSON.parse(textOf(await ok('st-whoami'))).pid;
  const m0 = memOf(gw.proc.pid);
  const r = await call('st-big', { bytes: size }, 60000);
  assert.ok(callError(r.json), `an error, not ${r.text.length} bytes`);
  assert.ok(r.text.length < 1 << 20, 'the answer is not the result');
  const m1 = memOf(gw.proc.pid);
  assert.ok(m1.hwm - m0.hwm < size / 2, `peak RSS grew by ${((m1.hwm - m0.hwm) / 1048576).toFixed(1)} MiB for a ${size >> 20} MiB line`);
  assert.equal(textOf(await ok('st-echo', { text: 'after the big line' })), 'after the big line');
  assert.equal(JSON.parse(textOf(await ok('st-whoami'))).pid, pid, 'the same process');
});

test('a stdio server that crashes is restarted; the next call works in a new process', async () => {
  const who1 = JSON.parse(textOf(await ok('st-whoami')));
  const c = await call('st-crash');
  assert.ok(callError(c.json) || c.status >= 400, `the crashing call fails: ${c.status} ${c.text}`);
  let who2 = null;
  const back = await until(async () => {
    const r = await call('st-whoami', {}, 10000).catch(() => null);
    if (r?.status === 200 && !callError(r.json)) who2 = JSON.parse(textOf(r.json.result));
    return who2;
  }, 30000);
  assert.ok(back, 'a call worked again within 30 s');
  assert.notEqual(who2.pid, who1.pid, 'a new process');
  const stats = await st.stats();
  assert.ok(stats.starts >= 2, `started ${stats.starts} times`);
  assert.ok(stats.pids.includes(who2.pid));
  assert.equal(textOf(await ok('st-echo', { text: 'restarted' })), 'restarted');
});

test('an HTTP server that goes away and comes back on its port is used again', async () => {
  assert.equal(textOf(await ok('flaky-echo', { text: 'one' })), 'one');
  await flaky.stop();
  const e = await call('flaky-echo', { text: 'gone' });
  assert.ok(callError(e.json), `a clear error while it is down: ${e.text}`);
  await flaky.restart(); // a new process: the old upstream session is unknown there (404)
  let text = null;
  assert.ok(await until(async () => {
    const r = await call('flaky-echo', { text: 'two' }, 10000).catch(() => null);
    text = r && !callError(r.json) ? textOf(r.json?.result) : null;
    return text;
  }, 20000), 'the server is used again');
  assert.equal(text, 'two');
  assert.ok(((await flaky.stats()).methods.initialize || 0) >= 1, 'the gateway initialized the new process');
});
