// instances.test.mjs - MCP sessions that survive more than one instance (issue
// 24, "Sessions across instances"): two switchyard instances with the same
// master key and LITELLM_SALT_KEY on one PostgreSQL database and one Redis,
// one bed server (streamable HTTP) behind both.
//
//   alternating        initialize on A; notifications/initialized, tools/list and
//                      tools/call on B with A's Mcp-Session-Id; and back to A
//   round robin        the SDK client through a balancer that sends each request
//                      to the other instance; the upstream is initialized once per
//                      instance, not once per client session
//   instance gone      A stopped: B keeps serving A's session
//   refused            a forged id (payload or mac changed, truncated, garbage),
//                      a session of another key, of another fleet (other salt),
//                      of one server's endpoint used on /mcp: no tool is called
//   DELETE             a session ended on one instance is refused on the other
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRedis, until } from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';
import {
  MASTER_KEY, callError, connect, initialize, rpc, startGatewayWithMcp, startMcpServer, startRoundRobin, textOf,
} from './lib.mjs';

const SALT = 'sk-salt-instances-0123456789';
let pg, db, redis, up, A, B, lb;
const grant = (alias) => ({ key_alias: alias, object_permission: { mcp_servers: ['bed'] } });

before(async () => {
  pg = await startPostgres();
  db = await pg.createDb('mcp_instances');
  redis = await startRedis();
  up = await startMcpServer('http');
  const servers = { bed: up };
  const extraConfig = `router_settings:\n  redis_host: 127.0.0.1\n  redis_port: ${redis.port}`;
  const env = { LITELLM_SALT_KEY: SALT };
  A = await startGatewayWithMcp({ servers, db, env, extraConfig, keys: [grant('k1'), grant('k2')] });
  B = await startGatewayWithMcp({ servers, db, env, extraConfig });
});
after(async () => {
  await lb?.stop();
  for (const g of [A, B]) if (g) assert.equal(await g.stop(), 0);
  await up?.stop();
  await redis?.stop();
  await pg?.stop();
});

const call = (id, name, args) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

test('a session made on A serves tools/list and tools/call on B, and back on A', async () => {
  const key = A.key.k1;
  const r0 = await rpc(A.mcpUrl, {
    jsonrpc: '2.0', id: 0, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'alt', version: '1' } },
  }, { key });
  assert.equal(r0.status, 200, r0.text);
  const sid = r0.sessionId;
  assert.ok(sid, 'initialize answers an Mcp-Session-Id');
  assert.equal(r0.json.result.protocolVersion, '2025-11-25');

  const n = await rpc(B.mcpUrl, { jsonrpc: '2.0', method: 'notifications/initialized' }, { key, sessionId: sid });
  assert.equal(n.status, 202, n.text);

  const list = await rpc(B.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { key, sessionId: sid });
  assert.equal(list.status, 200, list.text);
  const names = list.json.result.tools.map((t) => t.name);
  assert.ok(names.includes('bed-echo'), names.join(','));

  const before = (await up.stats()).calls.echo || 0;
  for (let i = 0; i < 6; i++) {
    const gw = i % 2 ? A : B;
    const r = await rpc(gw.mcpUrl, call(10 + i, 'bed-echo', { text: `turn ${i}` }), { key, sessionId: sid });
    assert.equal(r.status, 200, `${i}: ${r.text}`);
    assert.equal(r.json.id, 10 + i);
    assert.equal(textOf(r.json.result), `turn ${i}`);
  }
  assert.equal((await up.stats()).calls.echo - before, 6);

  const ping = await rpc(A.mcpUrl, { jsonrpc: '2.0', id: 'p', method: 'ping' }, { key, sessionId: sid });
  assert.equal(ping.status, 200);
  assert.deepEqual(ping.json, { jsonrpc: '2.0', id: 'p', result: {} });
});

test('the SDK client through a round-robin balancer; one upstream session per instance', async () => {
  lb = await startRoundRobin([A, B]);
  await up.resetStats();
  const clients = [];
  for (let i = 0; i < 3; i++) clients.push(await connect(`${lb.url}/mcp`, { key: A.key.k2, keyHeader: 'x-litellm-api-key' }));
  for (const [i, c] of clients.entries()) {
    const tools = (await c.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes('bed-add'));
    for (let j = 0; j < 4; j++) {
      const r = await c.callTool({ name: 'bed-add', arguments: { a: i, b: j } });
      assert.equal(textOf(r), String(i + j));
    }
  }
  assert.ok(lb.hits[0] >= 5 && lb.hits[1] >= 5, `both instances served: ${lb.hits}`);
  const st = await up.stats();
  assert.equal(st.calls.add, 12);
  assert.ok((st.methods.initialize || 0) <= 2, `the upstream was initialized ${st.methods.initialize} times for 3 client sessions on 2 instances`);
  for (const c of clients) await c.close();
});

test('refused: forged ids, another key, another fleet, another scope; no tool runs', async () => {
  const key = A.key.k1;
  const { sessionId: sid } = await initialize(A.mcpUrl, { key });
  const ok = await rpc(B.mcpUrl, call(1, 'bed-echo', { text: 'ok' }), { key, sessionId: sid });
  assert.equal(textOf(ok.json?.result), 'ok', ok.text);

  const flip = (s, i) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  const dot = sid.lastIndexOf('.');
  const forged = [
    flip(sid, dot + 3),          // the mac
    flip(sid, dot - 3),          // the payload
    sid.slice(0, dot),           // no mac
    sid.slice(0, -4),            // truncated
    `${sid}x`,
    'sy1.e30.AAAA',
    'not-a-session',
    'x'.repeat(4000),
  ];
  const before = (await up.stats()).calls.echo || 0;
  for (const f of forged) {
    for (const gw of [A, B]) {
      const r = await rpc(gw.mcpUrl, call(2, 'bed-echo', { text: 'forged' }), { key, sessionId: f });
      assert.equal(r.status, 404, `${f.slice(0, 40)}: ${r.status} ${r.text}`);
      assert.ok(r.json?.error, `a JSON-RPC error: ${r.text}`);
    }
  }

  // k2 may use bed too, but not k1's session
  const other = await rpc(B.mcpUrl, call(3, 'bed-echo', { text: 'stolen' }), { key: A.key.k2, sessionId: sid });
  assert.ok([401, 403, 404].includes(other.status), `another key's session: ${other.status} ${other.text}`);
  assert.ok(other.json?.error || other.status === 401, other.text);

  // one server's session (/bed/mcp) is not a session of /mcp
  const one = await initialize(`${A.url}/bed/mcp`, { key });
  const echo1 = await rpc(`${B.url}/bed/mcp`, call(4, 'echo', { text: 'scoped' }), { key, sessionId: one.sessionId });
  assert.equal(textOf(echo1.json?.result), 'scoped', echo1.text);
  const cross = await rpc(B.mcpUrl, call(5, 'bed-echo', { text: 'cross' }), { key, sessionId: one.sessionId });
  assert.equal(cross.status, 404, cross.text);

  assert.equal((await up.stats()).calls.echo - before, 1, 'only the scoped call ran');
});

test('a session of another fleet (other salt, same master key) is refused', async () => {
  const C = await startGatewayWithMcp({ servers: { bed: up }, env: { LITELLM_SALT_KEY: 'sk-salt-another-fleet' } });
  try {
    const { sessionId } = await initialize(C.mcpUrl, { key: MASTER_KEY });
    const here = await rpc(C.mcpUrl, call(1, 'bed-echo', { text: 'c' }), { key: MASTER_KEY, sessionId });
    assert.equal(textOf(here.json?.result), 'c', here.text);
    const there = await rpc(A.mcpUrl, call(2, 'bed-echo', { text: 'c' }), { key: MASTER_KEY, sessionId });
    assert.equal(there.status, 404, there.text);
    assert.ok(callError(there.json), there.text);
  } finally {
    assert.equal(await C.stop(), 0);
  }
});

test('a session DELETEd on one instance is refused on the other', async () => {
  const key = A.key.k1;
  const { sessionId } = await initialize(A.mcpUrl, { key });
  const on = await rpc(B.mcpUrl, call(1, 'bed-echo', { text: 'before' }), { key, sessionId });
  assert.equal(textOf(on.json?.result), 'before', on.text);
  const del = await fetch(B.mcpUrl, { method: 'DELETE', headers: { authorization: `Bearer ${key}`, 'mcp-session-id': sessionId } });
  assert.equal(del.status, 200);
  const here = await rpc(B.mcpUrl, call(2, 'bed-echo', { text: 'after' }), { key, sessionId });
  assert.equal(here.status, 404, here.text);
  // B's revocation reaches A through Redis (B sends it as it answers the DELETE)
  let last = null;
  const gone = await until(async () => {
    last = await rpc(A.mcpUrl, { jsonrpc: '2.0', id: 3, method: 'ping' }, { key, sessionId });
    return last.status === 404;
  }, 5000);
  assert.ok(gone, `A still serves the ended session: ${last?.status} ${last?.text}`);
  // another session of the same key is untouched
  const s2 = await initialize(B.mcpUrl, { key });
  const ok = await rpc(A.mcpUrl, call(4, 'bed-echo', { text: 'fresh' }), { key, sessionId: s2.sessionId });
  assert.equal(textOf(ok.json?.result), 'fresh', ok.text);
});

test('A stopped: B keeps serving the session A made', async () => {
  const key = A.key.k1;
  const { sessionId: sid } = await initialize(A.mcpUrl, { key });
  const onA = await rpc(A.mcpUrl, call(6, 'bed-echo', { text: 'on A' }), { key, sessionId: sid });
  assert.equal(textOf(onA.json?.result), 'on A', onA.text);
  assert.equal(await A.stop(), 0);
  A = null;
  const r = await rpc(B.mcpUrl, call(7, 'bed-echo', { text: 'on B' }), { key, sessionId: sid });
  assert.equal(r.status, 200, r.text);
  assert.equal(textOf(r.json.result), 'on B');
  const list = await rpc(B.mcpUrl, { jsonrpc: '2.0', id: 8, method: 'tools/list' }, { key, sessionId: sid });
  assert.ok(list.json.result.tools.some((t) => t.name === 'bed-whoami'));
});
