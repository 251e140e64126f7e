// admin.test.mjs - MCP servers in the database and who may use them (issue 24,
// "Config and management"): LiteLLM's /v1/mcp/server routes, object_permission
// on keys, teams and organizations, and the registry that serves what the
// routes add.
//
//   routes        list, one, create, update, delete, access groups: shapes,
//                 credentials never answered, LiteLLM's errors ({"detail":
//                 {"error": ...}}, 422s), the refusals switchyard adds (bad
//                 names, transports, urls, header maps, names taken, stdio)
//   roles         only admins write; a key lists and reads only the servers
//                 it may use, without their url, headers or env
//   served        a server added through the API is on /mcp within seconds,
//                 for the keys it is granted to; changed and deleted ones too
//   SQLite / PG   the same on the instance's SQLite file and on PostgreSQL
//   two instances one PostgreSQL: a server added on A is served on B (its
//                 periodic read; no Redis)
//   stdio         refused from the API unless
//                 general_settings.switchyard_mcp_stdio_from_api is true
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { api, root, until } from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';
import { MASTER_KEY, connect, initialize, rpc, startGatewayWithMcp, startMcpServer, textOf } from './lib.mjs';

const SERVED_MS = 20000; // the registry reads on a change at once, and every 10 s in any case

const run = promisify(execFile);

/** The tool names key sees on gw's /mcp (a session of its own, then tools/list). */
async function toolNames(gw, key) {
  const { sessionId } = await initialize(gw.mcpUrl, { key });
  const r = await rpc(gw.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { key, sessionId });
  if (r.status !== 200 || !r.json?.result) return [];
  return r.json.result.tools.map((t) => t.name);
}

function detailError(r) {
  return r.json?.detail?.error;
}

async function suite(label, mkdb) {
  describe(label, () => {
    let up1, up2, gw, db, pgh;
    before(async () => {
      ({ db, pg: pgh } = await mkdb());
      up1 = await startMcpServer('http');
      up2 = await startMcpServer('http', { tools: ['echo', 'add'] });
      gw = await startGatewayWithMcp({ servers: { cfg: up1 }, db });
    });
    after(async () => {
      if (gw) assert.equal(await gw.stop(), 0);
      await up1?.stop();
      await up2?.stop();
      await pgh?.stop();
    });

    test('create, read, update, list, access groups, delete: LiteLLM shapes, credentials never answered', async () => {
      const body = {
        server_name: 'dbsrv', url: up2.url, transport: 'http', description: 'from the API',
        auth_type: 'bearer_token', credentials: { auth_value: 'not-needed' },
        mcp_access_groups: ['grp_b', 'grp_a'], allowed_tools: [], extra_headers: ['x-trace'],
      };
      const c = await api(gw.url, MASTER_KEY, 'POST', '/v1/mcp/server', body);
      assert.equal(c.status, 201, c.text);
      const id = c.json.server_id;
      assert.match(id, /^[0-9a-f-]{36}$/);
      assert.equal(c.json.server_name, 'dbsrv');
      assert.equal(c.json.alias, 'dbsrv', 'alias defaults to server_name');
      assert.equal(c.json.transport, 'http');
      assert.equal(c.json.url, up2.url);
      assert.equal(c.json.credentials, null);
      assert.equal(c.json.created_by, 'default_user_id');
      assert.deepEqual(c.json.mcp_access_groups, ['grp_b', 'grp_a']);
      assert.ok(!c.text.includes('not-needed'), 'the secret is never answered');

      const one = await api(gw.url, MASTER_KEY, 'GET', `/v1/mcp/server/${id}`);
      assert.equal(one.status, 200, one.text);
      assert.equal(one.json.server_id, id);
      assert.equal(one.json.credentials, null);

      const u = await api(gw.url, MASTER_KEY, 'PUT', '/v1/mcp/server', { server_id: id, description: 'changed' });
      assert.equal(u.status, 200, u.text);
      assert.equal(u.json.description, 'changed');
      assert.equal(u.json.url, up2.url, 'fields not given are kept');

      const list = await api(gw.url, MASTER_KEY, 'GET', '/v1/mcp/server');
      assert.equal(list.status, 200, list.text);
      assert.ok(Array.isArray(list.json));
      const ids = list.json.map((s) => s.server_id);
      assert.ok(ids.includes(id), ids.join(','));
      assert.ok(list.json.some((s) => s.server_name === 'cfg'), 'config servers are listed too');
      assert.ok(!list.text.includes('not-needed'));

      const g = await api(gw.url, MASTER_KEY, 'GET', '/v1/mcp/access_groups');
      assert.equal(g.status, 200, g.text);
      assert.deepEqual(g.json.access_groups.filter((x) => x.startsWith('grp_')), ['grp_a', 'grp_b']);

      const d = await api(gw.url, MASTER_KEY, 'DELETE', `/v1/mcp/server/${id}`);
      assert.equal(d.status, 202, d.text);
      const d2 = await api(gw.url, MASTER_KEY, 'DELETE', `/v1/mcp/server/${id}`);
      assert.equal(d2.status, 404);
      assert.equal(detailError(d2), `MCP Server not found, passed server_id=${id}`);
      const gone = await api(gw.url, MASTER_KEY, 'GET', `/v1/mcp/server/${id}`);
      assert.equal(gone.status, 404);
      assert.equal(detailError(gone), `MCP Server with id ${id} not found`);
    });

    test('bad input: LiteLLM\'s errors, and what switchyard refuses before it breaks at use', async () => {
      const post = (b) => api(gw.url, MASTER_KEY, 'POST', '/v1/mcp/server', b);
      let r = await post({ server_name: 'has-dash', url: up2.url, transport: 'http' });
      assert.equal(r.status, 400);
      assert.equal(detailError(r), "Server name cannot contain '-'. Use an alternative character instead Found: has-dash");
      r = await post({ server_name: 'ok', alias: 'a-b', url: up2.url, transport: 'http' });
      assert.equal(r.status, 400);
      r = await post({ server_name: 'sp ace', url: up2.url, transport: 'http' });
      assert.equal(r.status, 400, 'a prefix must be usable in a tool name and a path');
      r = await post({ server_name: 'x1', url: up2.url, transport: 'websocket' });
      assert.equal(r.status, 422);
      assert.equal(r.json.detail[0].loc.join('.'), 'body.transport');
      r = await post({ server_name: 'x2', url: up2.url, transport: 'http', auth_type: 'magic' });
      assert.equal(r.status, 422);
      r = await post({ server_name: 'x3', transport: 'http' });
      assert.equal(r.status, 400, 'an http server needs a url');
      r = await post({ server_name: 'x4', url: 'file:///etc/passwd', transport: 'sse' });
      assert.equal(r.status, 400);
      r = await post({ server_name: 'x5', url: 'http://h/\r\nX: y', transport: 'http' });
      assert.equal(r.status, 400);
      r = await post({ server_name: 'x6', url: up2.url, transport: 'http', static_headers: { 'x-a': 1 } });
      assert.equal(r.status, 400);
      r = await post({ server_name: 'x7', url: up2.url, transport: 'http', mcp_access_groups: 'g' });
      assert.equal(r.status, 422);
      r = await post({ server_name: 'cfg', url: up2.url, transport: 'http' });
      assert.equal(r.status, 400, 'the config\'s server owns that name');
      assert.match(detailError(r), /already used/);
      r = await post({ server_id: 'all-proxy-mcpservers', server_name: 'x8', url: up2.url, transport: 'http' });
      assert.equal(r.status, 400);
      r = await post({ server_id: 'fixed-id', server_name: 'x9', url: up2.url, transport: 'http' });
      assert.equal(r.status, 201, r.text);
      r = await post({ server_id: 'fixed-id', server_name: 'x10', url: up2.url, transport: 'http' });
      assert.equal(r.status, 400);
      assert.equal(detailError(r), 'MCP Server with id fixed-id already exists. Cannot create another.');
      r = await post({ server_name: 'x9', url: up2.url, transport: 'http' });
      assert.equal(r.status, 400, 'two rows never share a name');
      r = await post({ server_name: 'x11', transport: 'stdio', command: '/bin/sh', args: ['-c', 'id'] });
      assert.equal(r.status, 400);
      assert.match(detailError(r), /config\.yaml/);
      r = await api(gw.url, MASTER_KEY, 'POST', '/v1/mcp/server', '{not json');
      assert.equal(r.status, 422);
      r = await api(gw.url, MASTER_KEY, 'PUT', '/v1/mcp/server', { description: 'no id' });
      assert.equal(r.status, 422);
      r = await api(gw.url, MASTER_KEY, 'PUT', '/v1/mcp/server', { server_id: 'nope', description: 'x' });
      assert.equal(r.status, 404);
      r = await api(gw.url, MASTER_KEY, 'PUT', '/v1/mcp/server', { server_id: 'fixed-id', transport: 'stdio' });
      assert.equal(r.status, 400, 'an update cannot turn a server into a process either');
      assert.equal((await api(gw.url, MASTER_KEY, 'DELETE', '/v1/mcp/server/fixed-id')).status, 202);
    });

    test('a server added through the API is served on /mcp within seconds, to the keys granted it', async () => {
      const k = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { object_permission: { mcp_servers: ['live'] } });
      assert.equal(k.status, 200, k.text);
      const granted = k.json.key;
      assert.deepEqual(k.json.object_permission.mcp_servers, ['live']);
      const other = (await api(gw.url, MASTER_KEY, 'POST', '/key/generate', {})).json.key;

      const c = await api(gw.url, MASTER_KEY, 'POST', '/v1/mcp/server', { server_name: 'live', url: up2.url, transport: 'http' });
      assert.equal(c.status, 201, c.text);
      assert.ok(await until(async () => (await toolNames(gw, granted)).includes('live-echo'), SERVED_MS),
        'the new server\'s tools are listed');
      assert.ok(!(await toolNames(gw, other)).includes('live-echo'), 'a key without the grant does not see them');

      const client = await connect(gw.mcpUrl, { key: granted });
      const res = await client.callTool({ name: 'live-add', arguments: { a: 2, b: 3 } });
      assert.equal(textOf(res), '5');
      await client.close();

      // renamed by its alias: served under the new prefix
      const u = await api(gw.url, MASTER_KEY, 'PUT', '/v1/mcp/server', { server_id: c.json.server_id, alias: 'live2' });
      assert.equal(u.status, 200, u.text);
      assert.ok(await until(async () => (await toolNames(gw, MASTER_KEY)).includes('live2-echo'), SERVED_MS));
      // deleted: gone
      assert.equal((await api(gw.url, MASTER_KEY, 'DELETE', `/v1/mcp/server/${c.json.server_id}`)).status, 202);
      assert.ok(await until(async () => !(await toolNames(gw, MASTER_KEY)).some((n) => n.startsWith('live2-')), SERVED_MS));
    });

    test('credentials written through the API are stored encrypted as LiteLLM stores them, and used', async () => {
      const secret = 'mcp-bearer-secret-42';
      const up = await startMcpServer('http', { tools: ['echo'], bearer: secret });
      try {
        const c = await api(gw.url, MASTER_KEY, 'POST', '/v1/mcp/server', { server_name: 'locked', url: up.url,
          transport: 'http', auth_type: 'bearer_token', credentials: { auth_value: secret, region: 'eu' } });
        assert.equal(c.status, 201, c.text);
        assert.equal(c.json.credentials, null);
        const sql = `SELECT credentials FROM "LiteLLM_MCPServerTable" WHERE server_id = '${c.json.server_id}'`;
        let cred;
        if (pgh) cred = (await pgh.psql(sql, db))[0].credentials;
        else {
          const { stdout } = await run('sqlite3', [path.join(gw.dir, 'switchyard.db'), sql], { timeout: 20000 });
          cred = JSON.parse(stdout);
        }
        assert.equal(cred.region, 'eu', 'a member that is not a secret is kept as given');
        assert.notEqual(cred.auth_value, secret, 'auth_value is not stored in clear');
        const { stdout } = await run(path.join(root, 'tests/integration/fixtures/litellm_encrypt.py'),
          ['--salt', MASTER_KEY, '--decrypt', cred.auth_value], { timeout: 20000 });
        assert.equal(stdout.trim(), secret, 'LiteLLM\'s own scheme decrypts it under the master key');
        assert.ok(await until(async () => (await toolNames(gw, MASTER_KEY)).includes('locked-echo'), SERVED_MS),
          'the server is reached with the decrypted token');
        // a PUT that changes one member keeps the others (stored encrypted), as LiteLLM merges them
        let u = await api(gw.url, MASTER_KEY, 'PUT', '/v1/mcp/server', { server_id: c.json.server_id, credentials: { region: 'us' } });
        assert.equal(u.status, 200, u.text);
        const now = pgh ? (await pgh.psql(sql, db))[0].credentials
          : JSON.parse((await run('sqlite3', [path.join(gw.dir, 'switchyard.db'), sql], { timeout: 20000 })).stdout);
        assert.equal(now.region, 'us');
        assert.equal(now.auth_value, cred.auth_value, 'auth_value kept as stored');
        // a new auth_type without credentials clears them
        u = await api(gw.url, MASTER_KEY, 'PUT', '/v1/mcp/server', { server_id: c.json.server_id, auth_type: 'none' });
        assert.equal(u.status, 200, u.text);
        const cleared = pgh ? (await pgh.psql(sql, db))[0].credentials
          : (await run('sqlite3', [path.join(gw.dir, 'switchyard.db'), sql], { timeout: 20000 })).stdout.trim();
        assert.ok(cleared === null || cleared === '', `credentials cleared: ${JSON.stringify(cleared)}`);
        assert.equal((await api(gw.url, MASTER_KEY, 'DELETE', `/v1/mcp/server/${c.json.server_id}`)).status, 202);
      } finally {
        await up.stop();
      }
    });

    test('roles: only admins write; a key reads only its servers, without url, headers or env', async () => {
      const c = await api(gw.url, MASTER_KEY, 'POST', '/v1/mcp/server', {
        server_name: 'mine', url: `${up2.url}?token=secret`, transport: 'http', static_headers: { 'x-up': 'hidden' },
      });
      assert.equal(c.status, 201, c.text);
      const id = c.json.server_id;
      const k = (await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { object_permission: { mcp_servers: ['mine'] } })).json.key;
      const none = (await api(gw.url, MASTER_KEY, 'POST', '/key/generate', {})).json.key;

      let r = await api(gw.url, k, 'POST', '/v1/mcp/server', { server_name: 'evil', url: up2.url, transport: 'http' });
      assert.equal(r.status, 403);
      assert.equal(detailError(r),
        'User does not have permission to create mcp servers. You can only create mcp servers if you are a PROXY_ADMIN.');
      r = await api(gw.url, k, 'PUT', '/v1/mcp/server', { server_id: id, url: 'http://evil.example/mcp' });
      assert.equal(r.status, 403);
      r = await api(gw.url, k, 'DELETE', `/v1/mcp/server/${id}`);
      assert.equal(r.status, 403);
      assert.match(detailError(r), /not a proxy admin/);

      r = await api(gw.url, k, 'GET', '/v1/mcp/server');
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.map((s) => s.server_name), ['mine']);
      assert.equal(r.json[0].url, null);
      assert.equal(r.json[0].static_headers, null);
      assert.ok(!r.text.includes('secret') && !r.text.includes('hidden'));
      r = await api(gw.url, k, 'GET', `/v1/mcp/server/${id}`);
      assert.equal(r.status, 200);
      r = await api(gw.url, none, 'GET', `/v1/mcp/server/${id}`);
      assert.equal(r.status, 403);
      assert.match(detailError(r), /does not have permission to view mcp server/);
      r = await api(gw.url, none, 'GET', '/v1/mcp/server');
      assert.deepEqual(r.json, []);
      // a key cannot grant itself servers
      r = await api(gw.url, k, 'POST', '/key/generate', { object_permission: { mcp_servers: ['cfg'] } });
      assert.ok(r.status === 401 || r.status === 403, r.text);
      assert.equal((await api(gw.url, MASTER_KEY, 'DELETE', `/v1/mcp/server/${id}`)).status, 202);
    });

    test('object_permission round trip on keys, teams and organizations', async () => {
      const team = await api(gw.url, MASTER_KEY, 'POST', '/team/new', {
        team_alias: 'mcp-team', object_permission: { mcp_servers: ['cfg'], mcp_tool_permissions: { cfg: ['echo'] } },
      });
      assert.equal(team.status, 200, team.text);
      assert.deepEqual(team.json.object_permission.mcp_servers, ['cfg']);
      const tid = team.json.team_id;
      const ti = await api(gw.url, MASTER_KEY, 'GET', `/team/info?team_id=${tid}`);
      assert.deepEqual(ti.json.team_info.object_permission.mcp_tool_permissions, { cfg: ['echo'] });
      const tu = await api(gw.url, MASTER_KEY, 'POST', '/team/update', { team_id: tid, object_permission: { mcp_access_groups: ['g1'] } });
      assert.equal(tu.status, 200, tu.text);
      assert.deepEqual(tu.json.data.object_permission.mcp_servers, ['cfg']);
      assert.deepEqual(tu.json.data.object_permission.mcp_access_groups, ['g1']);

      // a team key: the team's grant, its tool allow-list
      const k = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { team_id: tid });
      assert.equal(k.status, 200, k.text);
      const names = await toolNames(gw, k.json.key);
      assert.deepEqual(names.filter((n) => n.startsWith('cfg-')), ['cfg-echo']);

      const ki = await api(gw.url, MASTER_KEY, 'GET', `/key/info?key=${k.json.key}`);
      assert.equal(ki.json.info.object_permission, null);
      const ku = await api(gw.url, MASTER_KEY, 'POST', '/key/update', { key: k.json.key, object_permission: { mcp_servers: ['cfg'] } });
      assert.equal(ku.status, 200, ku.text);
      assert.deepEqual(ku.json.object_permission.mcp_servers, ['cfg']);

      const org = await api(gw.url, MASTER_KEY, 'POST', '/organization/new', {
        organization_alias: 'mcp-org', object_permission: { mcp_servers: ['cfg'] },
      });
      assert.equal(org.status, 200, org.text);
      const oi = await api(gw.url, MASTER_KEY, 'GET', `/organization/info?organization_id=${org.json.organization_id}`);
      assert.deepEqual(oi.json.object_permission.mcp_servers, ['cfg']);
      const bad = await api(gw.url, MASTER_KEY, 'POST', '/organization/new', {
        organization_alias: 'bad-org', object_permission: { mcp_servers: 'cfg' },
      });
      assert.equal(bad.status, 422);
      assert.deepEqual(bad.json.detail[0].loc, ['body', 'object_permission', 'mcp_servers']);
    });
  });
}

await suite('SQLite', async () => ({ db: null, pg: null }));
await suite('PostgreSQL', async () => {
  const pg = await startPostgres();
  return { db: await pg.createDb('mcp_admin'), pg };
});

describe('two instances on one PostgreSQL', () => {
  let pg, db, up, A, B;
  before(async () => {
    pg = await startPostgres();
    db = await pg.createDb('mcp_admin_two');
    up = await startMcpServer('http', { tools: ['echo'] });
    A = await startGatewayWithMcp({ db });
    B = await startGatewayWithMcp({ db });
  });
  after(async () => {
    for (const g of [A, B]) if (g) assert.equal(await g.stop(), 0);
    await up?.stop();
    await pg?.stop();
  });

  test('a server added on A is served on B; deleted on A, gone on B', async () => {
    assert.deepEqual(await toolNames(B, MASTER_KEY), []);
    const c = await api(A.url, MASTER_KEY, 'POST', '/v1/mcp/server', { server_name: 'shared', url: up.url, transport: 'http' });
    assert.equal(c.status, 201, c.text);
    assert.ok(await until(async () => (await toolNames(B, MASTER_KEY)).includes('shared-echo'), SERVED_MS),
      'B reads the new row');
    const one = await api(B.url, MASTER_KEY, 'GET', `/v1/mcp/server/${c.json.server_id}`);
    assert.equal(one.status, 200, one.text);
    assert.equal((await api(A.url, MASTER_KEY, 'DELETE', `/v1/mcp/server/${c.json.server_id}`)).status, 202);
    assert.ok(await until(async () => !(await toolNames(B, MASTER_KEY)).includes('shared-echo'), SERVED_MS));
  });
});

describe('stdio servers from the API, when the config allows it', () => {
  let gw, std;
  before(async () => {
    std = await startMcpServer('stdio', { tools: ['echo'] });
    gw = await startGatewayWithMcp({ general: '  switchyard_mcp_stdio_from_api: true' });
  });
  after(async () => { if (gw) assert.equal(await gw.stop(), 0); });

  test('added, started on use, and served', async () => {
    const c = await api(gw.url, MASTER_KEY, 'POST', '/v1/mcp/server', {
      server_name: 'proc', transport: 'stdio', command: std.command, args: std.args,
    });
    assert.equal(c.status, 201, c.text);
    assert.ok(await until(async () => (await toolNames(gw, MASTER_KEY)).includes('proc-echo'), SERVED_MS));
    const client = await connect(gw.mcpUrl, { key: MASTER_KEY });
    const res = await client.callTool({ name: 'proc-echo', arguments: { text: 'hi' } });
    assert.equal(textOf(res), 'hi');
    await client.close();
  });
});
