// permissions.test.mjs - who may use which MCP server and tool through the
// gateway (stages/mcp.c on mcp/perm.c): keys with an object_permission see and
// call only their servers and tools, other servers' tools are not listed and
// their calls are refused with a clear error (JSON-RPC on /mcp, LiteLLM's 403
// on /mcp-rest), a server's allowed / disallowed tools hold for everyone, and
// each tool call writes a spend row with the server's per-call cost.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, MASTER_KEY, rpc, startGatewayWithMcp, startMcpServer, textOf } from './lib.mjs';
import { api, until } from '../lib/harness.mjs';

let a, b, gw;

before(async () => {
  a = await startMcpServer('http', { tools: ['echo', 'add', 'whoami'], serverName: 'a' });
  b = await startMcpServer('http', { json: true, tools: ['echo', 'add'], serverName: 'b' });
  gw = await startGatewayWithMcp({
    servers: {
      a: {
        server: a,
        disallowed_tools: ['whoami'],
        mcp_info: { mcp_server_cost_info: { default_cost_per_query: 0.01, tool_name_to_cost_per_query: { add: 0.25 } } },
      },
      b,
    },
    keys: [
      { key_alias: 'only_a', object_permission: { mcp_servers: ['a'] } },
      { key_alias: 'b_echo', object_permission: { mcp_servers: ['a', 'b'], mcp_tool_permissions: { b: ['echo'] } } },
      { key_alias: 'plain' },
    ],
  });
});

after(async () => {
  if (gw) await gw.stop();
  for (const s of [a, b]) if (s) await s.stop();
});

const names = (tools) => tools.map((t) => t.name).sort();

test('the master key sees every server; a server\'s disallowed_tools hold for everyone', async () => {
  const c = await connect(gw.mcpUrl, { key: MASTER_KEY });
  assert.deepEqual(names((await c.listTools()).tools), ['a-add', 'a-echo', 'b-add', 'b-echo']);
  const r = await c.callTool({ name: 'a-whoami', arguments: {} }).catch((e) => e);
  assert.match(String(r.message), /may not call tool whoami of MCP server a/);
  await c.close();
  assert.equal((await a.stats()).calls.whoami, undefined, 'the refused call never reached the server');
});

test('a key limited to server a: b\'s tools are not listed, their calls refused, /b/mcp forbidden', async () => {
  const k = gw.key.only_a;
  const c = await connect(gw.mcpUrl, { key: k });
  assert.deepEqual(names((await c.listTools()).tools), ['a-add', 'a-echo']);
  assert.equal(textOf(await c.callTool({ name: 'a-echo', arguments: { text: 'mine' } })), 'mine');
  const before = (await b.stats()).calls.echo || 0;
  const r = await c.callTool({ name: 'b-echo', arguments: { text: 'theirs' } }).catch((e) => e);
  assert.match(String(r.message), /Access denied: the key may not use MCP server b/);
  assert.equal((await b.stats()).calls.echo || 0, before, 'never forwarded');
  // x-mcp-servers cannot widen what the key may use
  const c2 = await connect(gw.mcpUrl, { key: k, headers: { 'x-mcp-servers': 'a,b' } });
  assert.deepEqual(names((await c2.listTools()).tools), ['a-add', 'a-echo']);
  await c2.close();
  await c.close();
  const one = await rpc(`${gw.url}/b/mcp`, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, { key: k });
  assert.equal(one.status, 403);
  assert.match(one.json.error.message, /may not use MCP server b/);
  const rl = await api(gw.url, k, 'GET', '/mcp-rest/tools/list?server_id=b');
  assert.equal(rl.status, 403);
  assert.equal(rl.json.detail.error, 'access_denied');
  const rc = await api(gw.url, k, 'POST', '/mcp-rest/tools/call', { server_id: 'b', name: 'echo', arguments: { text: 'x' } });
  assert.equal(rc.status, 403);
  const mine = await api(gw.url, k, 'GET', '/mcp-rest/tools/list');
  assert.deepEqual(mine.json.tools.map((t) => `${t.mcp_info.server_name}:${t.name}`).sort(), ['a:add', 'a:echo']);
});

test('mcp_tool_permissions: only the listed tools of b', async () => {
  const c = await connect(gw.mcpUrl, { key: gw.key.b_echo });
  assert.deepEqual(names((await c.listTools()).tools), ['a-add', 'a-echo', 'b-echo']);
  assert.equal(textOf(await c.callTool({ name: 'b-echo', arguments: { text: 'ok' } })), 'ok');
  const r = await c.callTool({ name: 'b-add', arguments: { a: 1, b: 2 } }).catch((e) => e);
  assert.match(String(r.message), /may not call tool add of MCP server b/);
  await c.close();
  const rest = await api(gw.url, gw.key.b_echo, 'POST', '/mcp-rest/tools/call', { server_id: 'b', name: 'add', arguments: { a: 1, b: 2 } });
  assert.equal(rest.status, 403);
});

test('a key without MCP permissions sees no server', async () => {
  const c = await connect(gw.mcpUrl, { key: gw.key.plain });
  assert.deepEqual((await c.listTools()).tools, []);
  const r = await c.callTool({ name: 'a-echo', arguments: { text: 'x' } }).catch((e) => e);
  assert.match(String(r.message), /Access denied/);
  await c.close();
  const rl = await api(gw.url, gw.key.plain, 'GET', '/mcp-rest/tools/list');
  assert.equal(rl.status, 403);
  assert.match(rl.json.detail.message, /not allowed to access any MCP servers/);
});

test('each tool call writes a spend row with the server\'s cost; the key\'s spend grows', async () => {
  const k = gw.key.only_a;
  const c = await connect(gw.mcpUrl, { key: k });
  await c.callTool({ name: 'a-add', arguments: { a: 1, b: 1 } });
  await c.callTool({ name: 'a-add', arguments: { a: 2, b: 2 } });
  await c.callTool({ name: 'a-echo', arguments: { text: 'e' } });
  await c.close();
  let rows = [];
  const got = await until(async () => {
    const r = await api(gw.url, MASTER_KEY, 'GET', `/spend/logs?api_key=${encodeURIComponent(k)}`);
    rows = (r.json || []).filter((x) => x && x.call_type === 'call_mcp_tool');
    return rows.filter((x) => x.mcp_namespaced_tool_name === 'a-add').length === 2 &&
      rows.filter((x) => x.mcp_namespaced_tool_name === 'a-echo').length === 2; // one in the test before
  }, 10000);
  assert.ok(got, `spend rows: ${JSON.stringify(rows)}`);
  const add = rows.filter((x) => x.mcp_namespaced_tool_name === 'a-add');
  for (const r of add) {
    assert.equal(Number(r.spend), 0.25);
    assert.equal(r.status, 'success');
  }
  const echo = rows.filter((x) => x.mcp_namespaced_tool_name === 'a-echo');
  assert.equal(echo.length, 2);
  assert.equal(Number(echo[0].spend), 0.01, 'default_cost_per_query');
  assert.equal(new Set(rows.map((x) => x.request_id)).size, rows.length, 'one row per call');
  let spend = null;
  const grew = await until(async () => {
    const info = await api(gw.url, MASTER_KEY, 'GET', `/key/info?key=${encodeURIComponent(k)}`);
    spend = info.json?.info?.spend;
    return Math.abs((spend ?? 0) - (0.5 + 0.01 * echo.length)) < 1e-9;
  }, 10000);
  assert.ok(grew, `key spend ${spend}`);
});
