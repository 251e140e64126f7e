// client.test.mjs - switchyard's client to MCP servers (src/mcp/client.c,
// http.c, sse.c, auth.c) seen from the SDK-made servers behind it: one
// upstream session per server reused across calls (initialize counted by the
// server), a new one after the server forgets it, JSON and SSE answers, the
// old SSE transport, each auth_type's header, static headers, OAuth2 client
// credentials with the token cached, and a timeout.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../lib/harness.mjs';
import { MASTER_KEY, startGatewayWithMcp, startMcpServer, textOf } from './lib.mjs';

const started = [];
let gw;
let srv = {};

before(async () => {
  srv = {
    sse: await startMcpServer('http'), // streamable HTTP, SSE answers
    json: await startMcpServer('http', { json: true }),
    old: await startMcpServer('sse'),
    bearer: await startMcpServer('http', { bearer: 'up-bearer' }),
    apikey: await startMcpServer('http', { apiKey: 'up-key' }),
    basic: await startMcpServer('http', { basic: Buffer.from('ann:pw').toString('base64') }),
    hdr: await startMcpServer('http', { headers: ['X-Team: blue'] }),
    oauth: await startMcpServer('http', { oauth: 'cid:s3cret' }),
    oldauth: await startMcpServer('sse', { bearer: 'old-bearer' }),
  };
  started.push(...Object.values(srv));
  gw = await startGatewayWithMcp({
    servers: {
      sse: srv.sse,
      json: srv.json,
      old: srv.old,
      bearer: { server: srv.bearer, auth_type: 'bearer_token', auth_value: 'up-bearer' },
      apikey: { server: srv.apikey, auth_type: 'api_key', auth_value: 'up-key' },
      basic: { server: srv.basic, auth_type: 'basic', auth_value: 'ann:pw' },
      hdr: { server: srv.hdr, static_headers: { 'X-Team': 'blue' } },
      oauth: { server: srv.oauth, auth_type: 'oauth2', token_url: srv.oauth.tokenUrl, client_id: 'cid', client_secret: 's3cret', scopes: ['a', 'b'] },
      oldauth: { server: srv.oldauth, auth_type: 'bearer_token', auth_value: 'old-bearer' },
      slowpoke: { server: srv.json, timeout: 1 },
    },
  });
});

after(async () => {
  if (gw) await gw.stop();
  for (const s of started) await s.stop();
});

const callTool = (server, name, args = {}) =>
  api(gw.url, MASTER_KEY, 'POST', '/mcp-rest/tools/call', { server_id: server, name, arguments: args });

async function echoN(server, n) {
  const rs = await Promise.all(Array.from({ length: n }, (_, i) => callTool(server, 'echo', { text: `${server}-${i}` })));
  rs.forEach((r, i) => {
    assert.equal(r.status, 200, `${server}: ${r.status} ${r.text}`);
    assert.equal(textOf(r.json), `${server}-${i}`);
  });
}

test('one upstream session per server, reused by every call (SSE and JSON answers)', async () => {
  for (const name of ['sse', 'json']) {
    await srv[name].resetStats();
    await echoN(name, 3);
    await echoN(name, 2);
    const st = await srv[name].stats();
    assert.equal(st.methods.initialize, 1, `${name}: one initialize for five calls, three of them at once`);
    assert.equal(st.calls.echo, 5);
    assert.equal(st.sessions, 1, `${name}: one session`);
    assert.equal(st.lastHeaders['mcp-protocol-version'], '2025-11-25');
    assert.ok(st.lastHeaders['mcp-session-id'], 'the session id is sent');
  }
});

test('a server that forgot the session: initialized again once, the call goes through', async () => {
  for (const name of ['sse', 'json']) {
    await echoN(name, 1);
    await srv[name].dropSessions();
    await srv[name].resetStats();
    await echoN(name, 3);
    const st = await srv[name].stats();
    assert.equal(st.methods.initialize, 1, `${name}: one new session for three calls`);
    assert.equal(st.calls.echo, 3);
  }
});

test('the old SSE transport', async () => {
  await srv.old.resetStats();
  await echoN('old', 4);
  const st = await srv.old.stats();
  assert.equal(st.calls.echo, 4);
  assert.equal(st.methods.initialize, 1, 'the session made by the first call is kept');
  const withAuth = await callTool('oldauth', 'echo', { text: 'x' });
  assert.equal(withAuth.status, 200, withAuth.text);
  assert.equal((await srv.oldauth.stats()).unauthorized, 0);
});

test('auth_type headers and static headers, as the server sees them', async () => {
  for (const name of ['bearer', 'apikey', 'basic', 'hdr']) {
    const r = await callTool(name, 'echo', { text: name });
    assert.equal(r.status, 200, `${name}: ${r.text}`);
    assert.equal(textOf(r.json), name);
    const st = await srv[name].stats();
    assert.equal(st.unauthorized, 0, `${name}: every request carried the credential`);
  }
  const h = (await srv.bearer.stats()).lastHeaders;
  assert.equal(h.authorization, 'Bearer up-bearer');
  assert.equal((await srv.apikey.stats()).lastHeaders['x-api-key'], 'up-key');
  assert.equal((await srv.basic.stats()).lastHeaders.authorization, `Basic ${Buffer.from('ann:pw').toString('base64')}`);
  assert.equal((await srv.hdr.stats()).lastHeaders['x-team'], 'blue');
});

test('OAuth2 client credentials: one token for many calls', async () => {
  await echoN('oauth', 4);
  await echoN('oauth', 2);
  const st = await srv.oauth.stats();
  assert.equal(st.tokenFetches, 1);
  assert.equal(st.unauthorized, 0);
  assert.deepEqual(st.lastTokenRequest, { grant_type: 'client_credentials', client_id: 'cid', scope: 'a b' });
  assert.match(st.lastHeaders.authorization, /^Bearer bed-token-/);
});

test('a call past the server\'s timeout fails, the session serves the next one', async () => {
  const r = await callTool('slowpoke', 'slow', { ms: 5000 });
  assert.ok(r.status >= 400, `${r.status} ${r.text}`);
  assert.match(r.text, /time/i);
  const ok = await callTool('slowpoke', 'echo', { text: 'after' });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(textOf(ok.json), 'after');
});
