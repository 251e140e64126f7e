// gateway.test.mjs - switchyard's MCP endpoint (stages/mcp.c) seen by the
// official SDK client and by raw JSON-RPC posts: /mcp (every server),
// /{alias}/mcp and /mcp/{name} (one server), the streamable HTTP rules
// (initialize, sessions, the protocol version header, batches, notifications,
// bad bodies), prompts and resources passed through, x-mcp-servers, the
// headers forwarded to one server, the REST mirror and the metrics.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, initialize, MASTER_KEY, rpc, startGatewayWithMcp, startMcpServer, textOf } from './lib.mjs';
import { api } from '../lib/harness.mjs';

let bed, two, gw;
const started = [];

before(async () => {
  bed = await startMcpServer('http');                              // SSE answers, stateful
  two = await startMcpServer('http', { json: true, tools: ['add', 'echo', 'whoami'], serverName: 'two' });
  started.push(bed, two);
  gw = await startGatewayWithMcp({
    servers: {
      bed,
      two: { server: two, extra_headers: ['x-forward-me'], access_groups: ['team-two'] },
      gone: { url: 'http://127.0.0.1:9/mcp', transport: 'http' }, // nothing listens: left out of lists
    },
    keys: [{ key_alias: 'k1' }, { key_alias: 'k2' }],
    general: '  max_request_size_mb: 1',
  });
});

after(async () => {
  if (gw) await gw.stop();
  for (const s of started) await s.stop();
});

const names = (tools) => tools.map((t) => t.name).sort();
const url = (p) => `${gw.url}${p}`;

test('the SDK client on /mcp: every server\'s tools namespaced, calls routed by prefix', async () => {
  const c = await connect(gw.mcpUrl, { key: MASTER_KEY, keyHeader: 'x-litellm-api-key' });
  assert.ok(c.transport.sessionId?.startsWith('sy1.'), 'a switchyard session id');
  assert.equal(c.getServerVersion().name, 'litellm-mcp-server');
  const tools = names((await c.listTools()).tools);
  for (const t of ['bed-echo', 'bed-add', 'bed-slow', 'two-add', 'two-echo', 'two-whoami']) assert.ok(tools.includes(t), t);
  assert.ok(!tools.some((t) => t.startsWith('gone-')), 'the dead server is left out, not a failure');
  assert.ok(!tools.includes('two-slow'), 'only what the server has');
  assert.equal(textOf(await c.callTool({ name: 'bed-echo', arguments: { text: 'héllo "q"' } })), 'héllo "q"');
  const sum = await c.callTool({ name: 'two-add', arguments: { a: 2, b: 40 } });
  assert.equal(textOf(sum), '42');
  assert.deepEqual(sum.structuredContent, { sum: 42 });
  const fail = await c.callTool({ name: 'bed-fail', arguments: {} });
  assert.equal(fail.isError, true);
  const unknown = await c.callTool({ name: 'nosuch-tool', arguments: {} }).catch((e) => e);
  assert.match(String(unknown.message), /Unknown tool: nosuch-tool/);
  await c.ping();
  assert.equal((await bed.stats()).calls.echo >= 1, true);
  await c.close();
});

test('prompts and resources pass through; prompt names are namespaced', async () => {
  const c = await connect(gw.mcpUrl, { key: MASTER_KEY });
  const prompts = (await c.listPrompts()).prompts.map((p) => p.name).sort();
  assert.deepEqual(prompts, ['bed-greet', 'two-greet']);
  const p = await c.getPrompt({ name: 'bed-greet', arguments: { name: 'Ada' } });
  assert.equal(p.messages[0].content.text, 'Hello, Ada!');
  const res = (await c.listResources()).resources.map((r) => r.uri);
  assert.deepEqual(res, ['bed://readme', 'bed://readme']); // both servers have one
  const rd = await c.readResource({ uri: 'bed://readme' });
  assert.equal(rd.contents[0].text, 'switchyard MCP test bed');
  const missing = await c.readResource({ uri: 'bed://nothing' }).catch((e) => e);
  assert.ok(missing instanceof Error, 'a resource no server has is an error');
  await c.close();
});

test('/{alias}/mcp and /mcp/{name}: one server; bare names accepted; an unknown server is 404', async () => {
  for (const p of ['/two/mcp', '/mcp/two']) {
    const c = await connect(url(p), { key: MASTER_KEY });
    assert.deepEqual(names((await c.listTools()).tools), ['two-add', 'two-echo', 'two-whoami'], p);
    assert.equal(textOf(await c.callTool({ name: 'echo', arguments: { text: 'bare' } })), 'bare', p);
    assert.equal(textOf(await c.callTool({ name: 'two-echo', arguments: { text: 'full' } })), 'full', p);
    assert.deepEqual((await c.listPrompts()).prompts.map((x) => x.name), ['two-greet']);
    await c.close();
  }
  const c = await connect(url('/mcp/bed,two'), { key: MASTER_KEY });
  const t = names((await c.listTools()).tools);
  assert.ok(t.includes('bed-echo') && t.includes('two-add') && !t.some((x) => x.startsWith('gone-')));
  await c.close();
  const r = await rpc(url('/nosuch/mcp'), { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, { key: MASTER_KEY });
  assert.equal(r.status, 404);
  assert.match(r.json.error.message, /MCP server not found: nosuch/);
});

test('mcp_aliases: the alias is the tool prefix and a path; the name still finds the server', async () => {
  const g = await startGatewayWithMcp({ servers: { two }, aliases: { zwei: 'two' } });
  try {
    for (const p of ['/mcp', '/zwei/mcp', '/two/mcp']) {
      const c = await connect(`${g.url}${p}`, { key: MASTER_KEY });
      assert.deepEqual(names((await c.listTools()).tools), ['zwei-add', 'zwei-echo', 'zwei-whoami'], p);
      assert.equal(textOf(await c.callTool({ name: 'zwei-echo', arguments: { text: 'z' } })), 'z', p);
      await c.close();
    }
  } finally {
    await g.stop();
  }
});

test('initialize: the negotiated revision; a session is bound to its scope', async () => {
  const s = await initialize(gw.mcpUrl, { key: MASTER_KEY, version: '2024-11-05' });
  assert.equal(s.protocolVersion, '2024-11-05');
  assert.deepEqual(Object.keys(s.result.capabilities).sort(), ['prompts', 'resources', 'tools']);
  const newest = await initialize(gw.mcpUrl, { key: MASTER_KEY, version: '1999-01-01' });
  assert.equal(newest.protocolVersion, '2025-11-25');
  // a session made on /mcp is not one of /two/mcp
  const r = await rpc(url('/two/mcp'), { jsonrpc: '2.0', id: 2, method: 'ping' }, { key: MASTER_KEY, sessionId: s.sessionId });
  assert.equal(r.status, 404);
  assert.equal(r.json.error.code, -32001);
});

test('session rules: missing 400, forged or another key\'s 404, DELETE ends it', async () => {
  const k1 = gw.key.k1, k2 = gw.key.k2;
  const s = await initialize(gw.mcpUrl, { key: k1 });
  const ping = (opts) => rpc(gw.mcpUrl, { jsonrpc: '2.0', id: 9, method: 'ping' }, opts);
  assert.equal((await ping({ key: k1, sessionId: s.sessionId })).status, 200);
  const none = await ping({ key: k1 });
  assert.equal(none.status, 400);
  assert.match(none.json.error.message, /Mcp-Session-Id header is required/);
  const parts = s.sessionId.split('.');
  const forged = [parts[0], parts[1], parts[2].slice(0, -2) + (parts[2].endsWith('AA') ? 'BB' : 'AA')].join('.');
  assert.equal((await ping({ key: k1, sessionId: forged })).status, 404);
  assert.equal((await ping({ key: k1, sessionId: 'garbage' })).status, 404);
  assert.equal((await ping({ key: k2, sessionId: s.sessionId })).status, 404, 'another key may not use it');
  const del = await fetch(gw.mcpUrl, { method: 'DELETE', headers: { authorization: `Bearer ${k1}`, 'mcp-session-id': s.sessionId } });
  assert.equal(del.status, 200);
  assert.equal((await ping({ key: k1, sessionId: s.sessionId })).status, 404, 'refused after DELETE');
  const del2 = await fetch(gw.mcpUrl, { method: 'DELETE', headers: { authorization: `Bearer ${k1}` } });
  assert.equal(del2.status, 400);
});

test('MCP-Protocol-Version: a revision we speak passes, another is 400', async () => {
  const s = await initialize(gw.mcpUrl, { key: MASTER_KEY });
  const ok = await rpc(gw.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, { key: MASTER_KEY, sessionId: s.sessionId, protocolVersion: '2025-06-18' });
  assert.equal(ok.status, 200);
  const bad = await rpc(gw.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, { key: MASTER_KEY, sessionId: s.sessionId, protocolVersion: '2099-01-01' });
  assert.equal(bad.status, 400);
  assert.match(bad.json.error.message, /Unsupported protocol version: 2099-01-01/);
});

test('batches keep ids and order; notifications alone are 202; unknown methods -32601', async () => {
  const s = await initialize(gw.mcpUrl, { key: MASTER_KEY });
  const o = { key: MASTER_KEY, sessionId: s.sessionId };
  const r = await rpc(gw.mcpUrl, [
    { jsonrpc: '2.0', id: 'a', method: 'ping' },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'zz' } },
    { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'two-add', arguments: { a: 1, b: 2 } } },
    { jsonrpc: '2.0', id: 'z', method: 'nope/nope' },
  ], o);
  assert.equal(r.status, 200);
  const arr = JSON.parse(r.text);
  assert.ok(Array.isArray(arr));
  assert.deepEqual(arr.map((m) => m.id), ['a', 7, 'z']);
  assert.deepEqual(arr[0].result, {});
  assert.equal(arr[1].result.structuredContent.sum, 3);
  assert.equal(arr[2].error.code, -32601);
  const n = await rpc(gw.mcpUrl, [{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 5, result: {} }], o);
  assert.equal(n.status, 202);
  assert.equal(n.text, '');
  const two2 = await rpc(gw.mcpUrl, [{ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, { jsonrpc: '2.0', id: 2, method: 'ping' }], { key: MASTER_KEY });
  assert.equal(two2.status, 400);
  const objId = await rpc(gw.mcpUrl, { jsonrpc: '2.0', id: { x: 1 }, method: 'ping' }, o);
  assert.equal(objId.status, 400, 'an id must be a string or a number');
});

test('bad bodies: not JSON, duplicate keys, not JSON-RPC, wrong media type, over the size cap', async () => {
  const s = await initialize(gw.mcpUrl, { key: MASTER_KEY });
  const o = { key: MASTER_KEY, sessionId: s.sessionId };
  const notJson = await rpc(gw.mcpUrl, '{"jsonrpc":"2.0", id: 1', o);
  assert.equal(notJson.status, 400);
  assert.equal(notJson.json.error.code, -32700);
  const dup = await rpc(gw.mcpUrl, '{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}', o);
  assert.equal(dup.status, 400);
  const notRpc = await rpc(gw.mcpUrl, { hello: 'world' }, o);
  assert.equal(notRpc.status, 400);
  const empty = await rpc(gw.mcpUrl, '[]', o);
  assert.equal(empty.status, 400);
  const deep = await rpc(gw.mcpUrl, `{"jsonrpc":"2.0","id":1,"method":"ping","params":${'['.repeat(5000)}${']'.repeat(5000)}}`, o);
  assert.equal(deep.status, 400);
  const media = await rpc(gw.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, { ...o, headers: { 'content-type': 'text/plain' } });
  assert.equal(media.status, 415);
  const accept = await rpc(gw.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, { ...o, headers: { accept: 'text/html' } });
  assert.equal(accept.status, 406);
  const big = await rpc(gw.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bed-echo', arguments: { text: 'x'.repeat(2 << 20) } } }, o);
  assert.equal(big.status, 413);
  const batch = await rpc(gw.mcpUrl, Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })), o);
  assert.equal(batch.status, 400, 'more than 100 messages in a batch');
});

test('GET /mcp is 405 with Allow (no server-initiated stream)', async () => {
  const r = await fetch(gw.mcpUrl, { headers: { authorization: `Bearer ${MASTER_KEY}`, accept: 'text/event-stream' } });
  assert.equal(r.status, 405);
  assert.match(r.headers.get('allow'), /POST/);
  await r.text();
});

test('auth: no key 401 in LiteLLM\'s shape; x-litellm-api-key leaves Authorization to the server', async () => {
  const r = await rpc(gw.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, {});
  assert.equal(r.status, 401);
  const j = JSON.parse(r.text);
  assert.equal(j.error.type, 'auth_error');
  const bad = await rpc(gw.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, { key: 'sk-nope' });
  assert.equal(bad.status, 401);
  const c = await connect(gw.mcpUrl, { key: MASTER_KEY, keyHeader: 'x-litellm-api-key', headers: { authorization: 'Bearer for-the-server' } });
  assert.ok((await c.listTools()).tools.length > 0);
  const who = JSON.parse(textOf(await c.callTool({ name: 'two-whoami', arguments: {} })));
  assert.equal(who.headers.authorization, undefined, 'the client\'s Authorization goes only to oauth2 servers without credentials');
  await c.close();
  const k1 = await connect(gw.mcpUrl, { key: gw.key.k1 });
  assert.deepEqual((await k1.listTools()).tools, [], 'a key without MCP permissions sees no server');
  await k1.close();
});

test('x-mcp-servers narrows the servers; x-mcp-<alias>-<header> and extra_headers reach one server only', async () => {
  for (const h of ['two', ' two , nosuch', 'team-two']) { // a name, unknown names ignored, an access group
    const c = await connect(gw.mcpUrl, { key: MASTER_KEY, headers: { 'x-mcp-servers': h } });
    assert.deepEqual(names((await c.listTools()).tools), ['two-add', 'two-echo', 'two-whoami'], h);
    await c.close();
  }
  const h = { 'x-mcp-two-x-secret': 's2', 'x-mcp-bed-x-secret': 'sb', 'x-forward-me': 'fw', 'x-not-forwarded': 'no' };
  const c2 = await connect(gw.mcpUrl, { key: MASTER_KEY, keyHeader: 'x-litellm-api-key', headers: h });
  const who2 = JSON.parse(textOf(await c2.callTool({ name: 'two-whoami', arguments: {} })));
  assert.equal(who2.headers['x-secret'], 's2');
  assert.equal(who2.headers['x-forward-me'], 'fw', 'extra_headers of two');
  assert.equal(who2.headers['x-not-forwarded'], undefined);
  assert.equal(who2.headers['x-litellm-api-key'], undefined, 'the gateway key never goes upstream');
  const whoB = JSON.parse(textOf(await c2.callTool({ name: 'bed-whoami', arguments: {} })));
  assert.equal(whoB.headers['x-secret'], 'sb');
  assert.equal(whoB.headers['x-forward-me'], undefined, 'not an extra_header of bed');
  await c2.close();
});

test('/mcp-rest/tools/list and /mcp-rest/tools/call (LiteLLM\'s REST shapes)', async () => {
  const all = await api(gw.url, MASTER_KEY, 'GET', '/mcp-rest/tools/list');
  assert.equal(all.status, 200);
  assert.equal(all.json.error, null);
  assert.equal(all.json.message, 'Successfully retrieved tools');
  const echo = all.json.tools.find((t) => t.name === 'echo' && t.mcp_info.server_name === 'two');
  assert.ok(echo, 'bare names, the server in mcp_info');
  assert.ok(echo.inputSchema);
  const one = await api(gw.url, MASTER_KEY, 'GET', '/mcp-rest/tools/list?server_id=two');
  assert.deepEqual(one.json.tools.map((t) => t.name).sort(), ['add', 'echo', 'whoami']);
  const none = await api(gw.url, MASTER_KEY, 'GET', '/mcp-rest/tools/list?server_id=nosuch');
  assert.equal(none.json.error, 'server_not_found');
  const down = await api(gw.url, MASTER_KEY, 'GET', '/mcp-rest/tools/list?server_id=gone');
  assert.equal(down.json.error, 'server_error');
  assert.match(down.json.message, /Failed to get tools from server gone/);
  const call = await api(gw.url, MASTER_KEY, 'POST', '/mcp-rest/tools/call', { server_id: 'two', name: 'add', arguments: { a: 3, b: 4 } });
  assert.equal(call.status, 200);
  assert.equal(call.json.structuredContent.sum, 7);
  const ns = await api(gw.url, MASTER_KEY, 'POST', '/mcp-rest/tools/call', { name: 'bed-echo', arguments: { text: 'r' } });
  assert.equal(textOf(ns.json), 'r');
  const noName = await api(gw.url, MASTER_KEY, 'POST', '/mcp-rest/tools/call', { server_id: 'two' });
  assert.equal(noName.status, 400);
  assert.equal(noName.json.detail.error, 'missing_parameter');
  const noServer = await api(gw.url, MASTER_KEY, 'POST', '/mcp-rest/tools/call', { name: 'echo' });
  assert.equal(noServer.status, 400);
  const badArgs = await api(gw.url, MASTER_KEY, 'POST', '/mcp-rest/tools/call', { server_id: 'two', name: 'echo', arguments: [1] });
  assert.equal(badArgs.status, 400);
  const dead = await api(gw.url, MASTER_KEY, 'POST', '/mcp-rest/tools/call', { server_id: 'gone', name: 'echo', arguments: {} });
  assert.ok(dead.status >= 500, `a dead server: ${dead.status}`);
});

test('tool calls are counted in /metrics', async () => {
  const c = await connect(gw.mcpUrl, { key: MASTER_KEY });
  await c.callTool({ name: 'two-echo', arguments: { text: 'm' } });
  await c.callTool({ name: 'bed-fail', arguments: {} });
  await c.close();
  const m = await (await fetch(url('/metrics'))).text();
  assert.match(m, /litellm_mcp_tool_calls_total\{server_name="two",tool_name="echo",status="success"\} [1-9]/);
  assert.match(m, /litellm_mcp_tool_calls_total\{server_name="bed",tool_name="fail",status="error"\} [1-9]/);
  assert.match(m, /litellm_mcp_tool_call_latency_seconds_bucket\{server_name="two",tool_name="echo",status="success",le="\+Inf"\} [1-9]/);
});

test('DELETE on one instance ends the session on another (Redis)', async () => {
  const { startRedis, until } = await import('../lib/harness.mjs');
  const redis = await startRedis();
  const extraConfig = `router_settings:\n  redis_host: 127.0.0.1\n  redis_port: ${redis.port}`;
  const A = await startGatewayWithMcp({ servers: { two }, extraConfig, env: { LITELLM_SALT_KEY: 'sk-salt-gw-test' } });
  const B = await startGatewayWithMcp({ servers: { two }, extraConfig, env: { LITELLM_SALT_KEY: 'sk-salt-gw-test' } });
  try {
    const ping = (g, sid) => rpc(g.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, { key: MASTER_KEY, sessionId: sid });
    // the workers' Redis clients connect in the background: a session ended before that is ended locally only
    let s;
    assert.ok(await until(async () => {
      s = await initialize(A.mcpUrl, { key: MASTER_KEY });
      const del = await fetch(A.mcpUrl, { method: 'DELETE', headers: { authorization: `Bearer ${MASTER_KEY}`, 'mcp-session-id': s.sessionId } });
      assert.equal(del.status, 200);
      return (await ping(B, s.sessionId)).status === 404;
    }, 15000), 'a session ended on A is refused by B');
    assert.equal((await ping(A, s.sessionId)).status, 404);
    const live = await initialize(A.mcpUrl, { key: MASTER_KEY });
    assert.equal((await ping(B, live.sessionId)).status, 200, 'another session still works on B');
    const tl = await rpc(B.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'two-echo', arguments: { text: 'b' } } },
      { key: MASTER_KEY, sessionId: live.sessionId });
    assert.equal(textOf(tl.json.result), 'b');
  } finally {
    await A.stop();
    await B.stop();
    await redis.stop();
  }
});
