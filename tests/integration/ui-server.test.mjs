// ui-server.test.mjs - the admin UI's server side (docs/ui.md): the embedded
// files (gzip and identity, ETag/304, the hashed immutable prefix, the SPA
// fallback, traversal refused, HEAD, security headers), GET / for browsers,
// POST /login (UI_PASSWORD, the master key, failures, the rate limit), the
// sy_session cookie (flags, /ui/session, accepted by the API, forged /
// expired / tampered / another instance's refused), CSRF, logout. The tests
// hold for any asset set: they read the index.html the binary serves.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { after, before, test } from 'node:test';
import { MASTER_KEY, api, keysConfig, rawRequest, startGateway, startMock } from '../lib/harness.mjs';

const UI_PASSWORD = 'ui-pass-7';
let mock, gw;

before(async () => {
  mock = await startMock();
  gw = await startGateway(keysConfig(mock.base), { env: { UI_PASSWORD, UI_USERNAME: 'boss' } });
});

after(async () => {
  await gw?.stop();
  await mock?.stop();
});

const get = (p, headers = {}, extra = {}) => fetch(`${gw.url}${p}`, { headers, redirect: 'manual', ...extra });

async function login(body, headers = {}) {
  return fetch(`${gw.url}/login`, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
  });
}

function cookieOf(res) {
  const sc = res.headers.get('set-cookie');
  assert.ok(sc, 'a Set-Cookie');
  const m = /^sy_session=([^;]*)/.exec(sc);
  assert.ok(m, sc);
  return m[1];
}

async function adminSession() {
  const r = await login({ username: 'boss', password: UI_PASSWORD });
  assert.equal(r.status, 200);
  const cookie = cookieOf(r);
  const s = await get('/ui/session', { cookie: `sy_session=${cookie}` });
  assert.equal(s.status, 200);
  return { cookie, csrf: (await s.json()).csrf_token };
}

// The token format of docs/ui.md, signed as the server does: lets a test make
// an expired token, or one for another salt, that differs only where it says.
function sign(salt, body) {
  const k = createHmac('sha256', salt).update('switchyard ui session v1').digest();
  return `${body}.${createHmac('sha256', k).update(body).digest('hex')}`;
}

async function servedFiles() {
  const r = await get('/ui/', { 'accept-encoding': 'identity' });
  assert.equal(r.status, 200);
  const html = await r.text();
  const refs = [...html.matchAll(/(?:src|href)="(\/ui\/_\/[0-9a-f]{12}\/[^"]+)"/g)].map((m) => m[1]);
  assert.ok(refs.length > 0, 'index.html names hashed assets');
  assert.ok(!html.includes('%ASSETS%'));
  return { html, refs, prefix: refs[0].split('/').slice(0, 4).join('/') };
}

test('assets: every file index.html names is served gzip and identity, the same bytes, immutable, with a strong ETag and 304', async () => {
  const { refs } = await servedFiles();
  for (const ref of refs) {
    const z = await get(ref, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(z.status, 200, ref);
    assert.equal(z.headers.get('content-encoding'), 'gzip');
    assert.equal(z.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(z.headers.get('vary'), 'Accept-Encoding');
    assert.equal(z.headers.get('x-content-type-options'), 'nosniff');
    const zb = Buffer.from(await z.arrayBuffer());
    const raw = await get(ref, { 'accept-encoding': 'gzip;q=0, identity' });
    assert.equal(raw.headers.get('content-encoding'), null);
    const rb = Buffer.from(await raw.arrayBuffer());
    // fetch() would inflate on its own: compare with node's gunzip of the wire bytes
    const wire = await rawGet(ref, 'gzip');
    assert.deepEqual(gunzipSync(wire), rb, ref);
    assert.ok(zb.length > 0);
    const etag = raw.headers.get('etag');
    assert.match(etag, /^"[0-9a-f]{16}"$/);
    assert.match(z.headers.get('etag'), /^"[0-9a-f]{16}-gz"$/);
    const nm = await get(ref, { 'if-none-match': etag });
    assert.equal(nm.status, 304);
    assert.equal((await nm.arrayBuffer()).byteLength, 0);
    const nm2 = await get(ref, { 'if-none-match': `"nope", W/${etag}` });
    assert.equal(nm2.status, 304);
    assert.equal((await get(ref, { 'if-none-match': '"0000000000000000"' })).status, 200);
  }
});

async function rawGet(p, enc) {
  const out = await rawRequest(gw.port, `GET ${p} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: ${enc}\r\nConnection: close\r\n\r\n`);
  const buf = Buffer.from(out.data, 'latin1');
  const i = buf.indexOf('\r\n\r\n');
  const head = buf.subarray(0, i).toString();
  let body = buf.subarray(i + 4);
  if (/transfer-encoding: chunked/i.test(head)) {
    const parts = [];
    let o = 0;
    for (;;) {
      const e = body.indexOf('\r\n', o);
      const n = parseInt(body.subarray(o, e).toString(), 16);
      if (!n) break;
      parts.push(body.subarray(e + 2, e + 2 + n));
      o = e + 2 + n + 2;
    }
    body = Buffer.concat(parts);
  }
  return body;
}

test('index.html: /ui, /ui/ and app routes; no-cache, ETag, CSP without inline script, frame and referrer policies', async () => {
  const { html } = await servedFiles();
  for (const p of ['/ui', '/ui/', '/ui/keys', '/ui/login', '/ui/a/b/c']) {
    const r = await get(p);
    assert.equal(r.status, 200, p);
    assert.match(r.headers.get('content-type'), /^text\/html/);
    assert.equal(r.headers.get('cache-control'), 'no-cache');
    assert.equal(await r.text(), html, p);
    const csp = r.headers.get('content-security-policy');
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.ok(!/script-src[^;]*unsafe-inline/.test(csp));
    assert.equal(r.headers.get('x-frame-options'), 'DENY');
    assert.equal(r.headers.get('referrer-policy'), 'same-origin');
    const etag = r.headers.get('etag');
    assert.equal((await get(p, { 'if-none-match': etag })).status, 304);
  }
  assert.ok(!/<script(?![^>]*\bsrc=)[^>]*>/.test(html), 'no inline script in index.html');
});

test('assets: unknown file, old hash, traversal and encoded slashes are 404; HEAD is GET without a body', async () => {
  const { refs, prefix } = await servedFiles();
  const file = refs[0].slice(prefix.length + 1);
  for (const p of [`${prefix}/no-such.js`, `/ui/_/000000000000/${file}`, `${prefix}/../../${file}`,
    `${prefix}/%2e%2e/%2e%2e/etc/passwd`, `${prefix}/..%2f..%2fREADME.md`, `${prefix}//${file}`,
    `${prefix}/./${file}`, `/ui/_/${file}`, '/ui/app.js', '/ui/../README.md', `${prefix}/%2F${file}`]) {
    const r = await rawRequest(gw.port, `GET ${p} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    assert.match(r.data, /^HTTP\/1\.1 404/, p);
  }
  const g = await get(refs[0], { 'accept-encoding': 'gzip' });
  const gb = await g.arrayBuffer();
  const h = await fetch(`${gw.url}${refs[0]}`, { method: 'HEAD', headers: { 'accept-encoding': 'gzip' } });
  assert.equal(h.status, 200);
  assert.equal(h.headers.get('etag'), g.headers.get('etag'));
  assert.equal((await h.arrayBuffer()).byteLength, 0);
  assert.ok(gb.byteLength > 0);
  assert.equal((await fetch(`${gw.url}/ui/keys`, { method: 'POST' })).status, 405);
});

test('GET /: a browser goes to /ui/, an API client keeps the JSON answer, HEAD without Accept stays 200', async () => {
  const b = await get('/', { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
  assert.equal(b.status, 302);
  assert.equal(b.headers.get('location'), '/ui/');
  const j = await get('/', { accept: 'application/json' });
  assert.equal(j.status, 200);
  assert.equal((await j.json()).name, 'switchyard');
  const h = await fetch(`${gw.url}/`, { method: 'HEAD' });
  assert.equal(h.status, 200);
});

test('login: UI_USERNAME with UI_PASSWORD or the master key; JSON and form; cookie flags; Secure behind https', async () => {
  const a = await login({ username: 'boss', password: UI_PASSWORD });
  assert.equal(a.status, 200);
  const j = await a.json();
  assert.equal(j.user_id, 'default_user_id');
  assert.equal(j.user_role, 'proxy_admin');
  assert.ok(Date.parse(j.expires_at) > Date.now());
  const sc = a.headers.get('set-cookie');
  assert.match(sc, /^sy_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
  assert.ok(!sc.includes(MASTER_KEY) && !sc.includes(UI_PASSWORD));
  const m = await login({ username: 'boss', password: MASTER_KEY }, { 'x-forwarded-proto': 'https' });
  assert.equal(m.status, 200);
  assert.match(m.headers.get('set-cookie'), /; Secure$/);
  const f = await fetch(`${gw.url}/login`, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `username=boss&password=${encodeURIComponent(UI_PASSWORD)}`,
  });
  assert.equal(f.status, 303);
  assert.equal(f.headers.get('location'), '/ui/');
  cookieOf(f);
});

test('login failures: one 401 message for a wrong password and an unknown user; bad bodies are 400', async () => {
  const w = await login({ username: 'boss', password: 'wrong' });
  const u = await login({ username: 'nobody', password: UI_PASSWORD });
  assert.equal(w.status, 401);
  assert.equal(u.status, 401);
  const wj = await w.json(), uj = await u.json();
  assert.equal(wj.error.message, uj.error.message);
  assert.equal(w.headers.get('set-cookie'), null);
  for (const body of ['{"username":"boss","username":"boss","password":"x"}', '{"username":"boss"}', '[1]',
    '{"username":1,"password":"x"}', 'not json']) {
    const r = await fetch(`${gw.url}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    assert.equal(r.status, 400, body);
    assert.ok((await r.json()).error.message);
  }
  const dup = await fetch(`${gw.url}/login`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'username=boss&password=a&password=b',
  });
  assert.equal(dup.status, 400);
  // escaped keys are the same keys
  const esc = await fetch(`${gw.url}/login`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: `{"user\\u006eame":"boss","password":"${UI_PASSWORD}"}`,
  });
  assert.equal(esc.status, 200);
});

test('the session cookie: /ui/session, accepted on /key/list and /v1/chat/completions; a key header wins', async () => {
  const { cookie, csrf } = await adminSession();
  const s = await (await get('/ui/session', { cookie: `a=1; sy_session="${cookie}"; b=2` })).json();
  assert.equal(s.user_role, 'proxy_admin');
  assert.equal(s.is_admin, true);
  assert.match(s.csrf_token, /^[0-9a-f]{64}$/);
  assert.equal(s.csrf_token, csrf);
  assert.equal((await get('/ui/session')).status, 401);
  const kl = await get('/key/list', { cookie: `sy_session=${cookie}` });
  assert.equal(kl.status, 200);
  const chat = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { cookie: `sy_session=${cookie}`, 'x-csrf-token': csrf, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'builtin', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(chat.status, 200);
  // a key header wins: a bad key with a good cookie is a 401, a good key with a forged cookie passes (no CSRF)
  const bad = await get('/key/list', { cookie: `sy_session=${cookie}`, authorization: 'Bearer sk-wrong' });
  assert.equal(bad.status, 401);
  const good = await fetch(`${gw.url}/key/generate`, {
    method: 'POST', headers: { cookie: 'sy_session=forged', authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(good.status, 200);
});

test('forged, tampered, truncated, expired, duplicated and another instance\'s cookies are 401', async () => {
  const { cookie } = await adminSession();
  const [kind, id, exp, mac] = cookie.split('.');
  const flip = (s) => s.slice(0, -1) + (s.at(-1) === '0' ? '1' : '0');
  const now = Math.floor(Date.now() / 1000);
  const bad = [
    'forged', '', cookie.slice(0, -1), `${kind}.${id}.${exp}.${flip(mac)}`, `${kind}.${flip(id)}.${exp}.${mac}`,
    `${kind}.${id}.${Number(exp) + 1}.${mac}`, `u.${id}${id}.${exp}.${mac}`, cookie.toUpperCase(),
    sign(MASTER_KEY, `m.${id}.${now - 5}`), // expired, signed right
    sign('sk-other-instance-master', `m.${id}.${now + 3600}`), // another instance's master key
    sign(MASTER_KEY, `m.${id}.0${now + 3600}`), // a second spelling of the same expiry
  ];
  for (const c of bad) {
    const r = await get('/key/list', { cookie: `sy_session=${c}` });
    assert.equal(r.status, 401, c);
    assert.equal((await get('/ui/session', { cookie: `sy_session=${c}` })).status, 401, c);
  }
  // the format is what docs/ui.md says: a token signed as documented is accepted
  assert.equal((await get('/key/list', { cookie: `sy_session=${sign(MASTER_KEY, `m.${id}.${now + 60}`)}` })).status, 200);
  // two sy_session cookies (a cookie-tossing attack) are refused, even when one is good
  assert.equal((await get('/key/list', { cookie: `sy_session=${cookie}; sy_session=${cookie}` })).status, 401);
  const two = await rawRequest(gw.port, `GET /key/list HTTP/1.1\r\nHost: x\r\nCookie: sy_session=${cookie}\r\nCookie: sy_session=x\r\nConnection: close\r\n\r\n`);
  assert.match(two.data, /^HTTP\/1\.1 401/);
});

test('CSRF: a cookie-authenticated POST needs x-csrf-token and a same-origin Origin', async () => {
  const { cookie, csrf } = await adminSession();
  const post = (headers) => fetch(`${gw.url}/key/generate`, {
    method: 'POST', headers: { cookie: `sy_session=${cookie}`, 'content-type': 'application/json', ...headers }, body: '{}',
  });
  const none = await post({});
  assert.equal(none.status, 403);
  assert.equal((await none.json()).error.message, 'CSRF check failed');
  assert.equal((await post({ 'x-csrf-token': csrf.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')) })).status, 403);
  assert.equal((await post({ 'x-csrf-token': '' })).status, 403);
  assert.equal((await post({ 'x-csrf-token': csrf, origin: 'https://evil.example' })).status, 403);
  const host = new URL(gw.url).host;
  const ok = await post({ 'x-csrf-token': csrf, origin: `http://${host}` });
  assert.equal(ok.status, 200);
  assert.match((await ok.json()).key, /^sk-/);
  assert.equal((await post({ 'x-csrf-token': csrf })).status, 200);
  // another session's token does not fit this one
  const other = await adminSession();
  assert.equal((await post({ 'x-csrf-token': other.csrf })).status, 403);
});

test('logout: CSRF-checked, clears the cookie, and the old cookie is 401 afterwards', async () => {
  const { cookie, csrf } = await adminSession();
  const nocsrf = await fetch(`${gw.url}/logout`, { method: 'POST', headers: { cookie: `sy_session=${cookie}` } });
  assert.equal(nocsrf.status, 403);
  const r = await fetch(`${gw.url}/logout`, { method: 'POST', headers: { cookie: `sy_session=${cookie}`, 'x-csrf-token': csrf } });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('set-cookie'), /^sy_session=; .*Max-Age=0/);
  assert.equal((await get('/key/list', { cookie: `sy_session=${cookie}` })).status, 401);
  assert.equal((await get('/ui/session', { cookie: `sy_session=${cookie}` })).status, 401);
});

test('a user session names its virtual key: the key\'s own scope, not the admin\'s', async () => {
  // a key for an internal user, and one for someone else
  const u = await api(gw.url, MASTER_KEY, 'POST', '/user/new', { user_id: 'ui-alice', user_role: 'internal_user' });
  assert.equal(u.status, 200, u.text);
  const mine = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { user_id: 'ui-alice', key_alias: 'alice-own' });
  const theirs = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { user_id: 'ui-bob', key_alias: 'bob-own' });
  assert.equal(mine.status, 200);
  assert.equal(theirs.status, 200);
  const { createHash } = await import('node:crypto');
  const tok = createHash('sha256').update(mine.json.key).digest('hex');
  const c = sign(MASTER_KEY, `u.${tok}.${Math.floor(Date.now() / 1000) + 600}`);
  const kl = await get('/key/list?return_full_object=true', { cookie: `sy_session=${c}` });
  assert.equal(kl.status, 200, await kl.clone().text());
  const text = await kl.text();
  assert.ok(!text.includes('bob-own'), 'another user\'s key is not listed');
  const adm = await get('/user/list', { cookie: `sy_session=${c}` });
  assert.ok(adm.status === 401 || adm.status === 403, String(adm.status));
  // the key deleted: the session is gone
  const del = await api(gw.url, MASTER_KEY, 'POST', '/key/delete', { keys: [mine.json.key] });
  assert.equal(del.status, 200);
  assert.equal((await get('/key/list', { cookie: `sy_session=${c}` })).status, 401);
});

test('login rate limit: more than 10 failures a minute for a name or an address is 429, even with the right password; the TTL setting', async () => {
  const g2 = await startGateway(keysConfig(mock.base, { general: '  switchyard_ui_session_ttl: 120\n' }), { env: { UI_PASSWORD } });
  try {
    const post = (body) => fetch(`${g2.url}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const ok = await post({ username: 'admin', password: UI_PASSWORD });
    assert.equal(ok.status, 200);
    assert.match(ok.headers.get('set-cookie'), /; Max-Age=120$/);
    const exp = Date.parse((await ok.json()).expires_at);
    assert.ok(exp > Date.now() + 60e3 && exp < Date.now() + 180e3);
    for (let i = 0; i < 10; i++) assert.equal((await post({ username: 'admin', password: `bad-${i}` })).status, 401);
    const r = await post({ username: 'admin', password: UI_PASSWORD });
    assert.equal(r.status, 429);
    assert.ok((await r.json()).error.message);
    // the address is over its limit too: another name from here is refused
    assert.equal((await post({ username: 'someone', password: 'x' })).status, 429);
  } finally {
    await g2.stop();
  }
});

test('no master key: the UI is open as the API is, /ui/session says so, login needs nothing', async () => {
  const g3 = await startGateway(`
model_list:
  - model_name: builtin
    litellm_params: {model: mock/builtin, mock_response: "ok"}
`);
  try {
    const s = await fetch(`${g3.url}/ui/session`);
    assert.equal(s.status, 200);
    const j = await s.json();
    assert.equal(j.is_admin, true);
    assert.equal(j.auth, false);
    const l = await fetch(`${g3.url}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"username":"a","password":"b"}' });
    assert.equal(l.status, 200);
    assert.equal(l.headers.get('set-cookie'), null);
  } finally {
    await g3.stop();
  }
});
