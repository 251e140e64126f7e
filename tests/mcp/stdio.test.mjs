// stdio.test.mjs - stdio MCP servers as switchyard's supervised children
// (src/mcp/stdio.c, issue 24 "stdio servers"), through the real binary with
// the SDK-made stdio bed server (servers/stdio.mjs):
//
//   - a tools/call reaches the child and comes back; the child's environment
//     is the config's env plus PATH, HOME and LANG, none of the gateway's;
//     its stderr is logged with the server's name, at a bounded rate;
//   - a child killed from outside is restarted and the next call works;
//   - a server whose command does not exist is left out, the others work;
//   - a reload without the server stops its child;
//   - switchyard's exit leaves no child, with several workers (a pool each).
//
// Every wait is bounded; no test asserts a duration.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { until } from '../lib/harness.mjs';
import { MASTER_KEY, callError, connect, mcpServersYaml, startGatewayWithMcp, startMcpServer, textOf } from './lib.mjs';

const running = new Set();
after(async () => { for (const g of running) await g.stop('SIGKILL'); });

async function gateway(opts) {
  const gw = await startGatewayWithMcp(opts);
  running.add(gw);
  return gw;
}
async function stop(gw) {
  running.delete(gw);
  return gw.stop();
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return e.code !== 'ESRCH'; // EPERM: it exists
  }
  // a zombie is gone for our purpose only once reaped: read its state
  try {
    const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return st.slice(st.lastIndexOf(')') + 2, st.lastIndexOf(')') + 3) !== 'Z';
  } catch { return false; }
};

const call = async (client, name, args = {}) => {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 20000 });
  assert.equal(callError({ result: r }), null, JSON.stringify(r));
  return r;
};

test('a tools/call reaches the stdio child; its env is the config\'s plus PATH, HOME, LANG only', async () => {
  const st = await startMcpServer('stdio', { tools: ['echo', 'whoami', 'log'], env: { BED_TOKEN: 'from-config' } });
  const gw = await gateway({ servers: { st }, env: { SY_GATEWAY_SECRET: 'must-not-leak', LANG: 'C.UTF-8' } });
  const client = await connect(gw.mcpUrl, { key: MASTER_KEY });
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['st-echo', 'st-log', 'st-whoami']);
    assert.equal(textOf(await call(client, 'st-echo', { text: 'through a pipe' })), 'through a pipe');
    const who = JSON.parse(textOf(await call(client, 'st-whoami')));
    assert.equal(who.transport, 'stdio');
    const env = who.env;
    assert.equal(env.BED_TOKEN, 'from-config');
    assert.equal(env.LANG, 'C.UTF-8');
    assert.ok(env.PATH, 'PATH is passed');
    assert.equal(env.SY_GATEWAY_SECRET, undefined, 'the gateway\'s environment is not the child\'s');
    assert.equal(env.LITELLM_MASTER_KEY, undefined);
    assert.equal(env.SWITCHYARD_DB, undefined);
    assert.deepEqual(Object.keys(env).filter((k) => !['BED_TOKEN', 'PATH', 'HOME', 'LANG'].includes(k)), []);
    const stats = await st.stats();
    assert.equal(stats.starts, 1);
    assert.equal(stats.calls.echo, 1);
    // 5000 stderr lines: logged with the server's name, 20 per 10 s window at most
    assert.equal(textOf(await call(client, 'st-log', { lines: 5000 })), 'logged 5000');
    assert.ok(await until(() => /mcp server st: stderr: /.test(gw.log()), 10000), 'stderr is logged');
    const logged = gw.log().split('\n').filter((l) => l.includes('mcp server st: stderr: ')).length;
    assert.ok(logged >= 1 && logged <= 20, `${logged} stderr lines logged`);
  } finally {
    await client.close();
  }
  assert.equal(await stop(gw), 0);
});

test('a child killed from outside is restarted and the next call works in the new process', async () => {
  const st = await startMcpServer('stdio', { tools: ['echo', 'whoami'] });
  const gw = await gateway({ servers: { st } });
  const client = await connect(gw.mcpUrl, { key: MASTER_KEY });
  try {
    const who1 = JSON.parse(textOf(await call(client, 'st-whoami')));
    assert.ok(alive(who1.pid));
    process.kill(who1.pid, 'SIGKILL');
    let who2 = null;
    const back = await until(async () => {
      const r = await client.callTool({ name: 'st-whoami', arguments: {} }, undefined, { timeout: 10000 }).catch(() => null);
      if (r && !r.isError) who2 = JSON.parse(textOf(r));
      return who2;
    }, 30000);
    assert.ok(back, 'a call worked again within 30 s');
    assert.notEqual(who2.pid, who1.pid);
    assert.ok(!alive(who1.pid), 'the killed child was reaped');
    assert.equal(textOf(await call(client, 'st-echo', { text: 'again' })), 'again');
    const stats = await st.stats();
    assert.ok(stats.starts >= 2, `started ${stats.starts} times`);
  } finally {
    await client.close();
  }
  assert.equal(await stop(gw), 0);
});

test('a stdio server whose command does not exist is left out; the others work', async () => {
  const st = await startMcpServer('stdio', { tools: ['echo'] });
  const gw = await gateway({
    // the pool waits for a child that is not running (a crashed one is back within a second) until the
    // server's timeout: a short one keeps the missing server from holding tools/list
    servers: { st, ghost: { transport: 'stdio', command: '/nonexistent/mcp-server', args: ['--x'], timeout: 2 } },
  });
  const client = await connect(gw.mcpUrl, { key: MASTER_KEY });
  try {
    const { tools } = await client.listTools(undefined, { timeout: 30000 });
    assert.deepEqual(tools.map((t) => t.name), ['st-echo']);
    assert.equal(textOf(await call(client, 'st-echo', { text: 'fine' })), 'fine');
    const r = await client.callTool({ name: 'ghost-anything', arguments: {} }, undefined, { timeout: 30000 })
      .then((x) => ({ result: x }), (e) => ({ error: { message: String(e.message || e) } }));
    assert.ok(callError(r), 'a call to the missing server fails clearly');
  } finally {
    await client.close();
  }
  assert.match(gw.log(), /mcp server ghost: cannot start \/nonexistent\/mcp-server/);
  assert.equal(await stop(gw), 0);
});

test('a reload without the server stops its child', async () => {
  const st = await startMcpServer('stdio', { tools: ['echo', 'whoami'] });
  const other = await startMcpServer('stdio', { tools: ['echo'] });
  const gw = await gateway({ servers: { st, other } });
  let client = await connect(gw.mcpUrl, { key: MASTER_KEY });
  const who = JSON.parse(textOf(await call(client, 'st-whoami')));
  await client.close();
  assert.ok(alive(who.pid));
  fs.writeFileSync(gw.configPath, gw.config.replace(mcpServersYaml({ st, other }), mcpServersYaml({ other })));
  gw.proc.kill('SIGHUP');
  assert.ok(await until(() => !alive(who.pid), 20000), 'the removed server\'s child is gone after the reload');
  client = await connect(gw.mcpUrl, { key: MASTER_KEY });
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['other-echo']);
    assert.equal(textOf(await call(client, 'other-echo', { text: 'still here' })), 'still here');
  } finally {
    await client.close();
  }
  assert.equal(await stop(gw), 0);
});

test('switchyard\'s exit leaves no child, with a pool per worker', async () => {
  const st = await startMcpServer('stdio', { tools: ['echo', 'whoami'] });
  const gw = await gateway({ servers: { st }, workers: 2 });
  const pids = new Set();
  // connections spread over the workers (SO_REUSEPORT): a few clients start a child in each pool that serves one
  for (let i = 0; i < 6; i++) {
    const client = await connect(gw.mcpUrl, { key: MASTER_KEY });
    pids.add(JSON.parse(textOf(await call(client, 'st-whoami'))).pid);
    await client.close();
  }
  for (const pid of (await st.stats()).pids) pids.add(pid);
  assert.ok(pids.size >= 1);
  for (const pid of pids) assert.ok(alive(pid), `child ${pid} runs`);
  assert.equal(await stop(gw), 0);
  assert.ok(await until(() => [...pids].every((p) => !alive(p)), 10000), `children left: ${[...pids].filter(alive)}`);
});
