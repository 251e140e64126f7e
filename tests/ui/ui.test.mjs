// ui.test.mjs - the admin UI end to end in Debian's Chromium (issue 25's
// story): log in; add a model on the Models page; create a key with a budget
// on the Keys page and copy it; call the model with it (chat and stream);
// see the request in Logs and the spend in Usage and on the key; edit the
// budget below the spend until a call is refused; regenerate; delete; an
// internal user sees only their own keys; forged cross-site POSTs are
// refused; the playground streams; then every page of the navigation at
// 1280x800 and 390x844: a screenshot, axe-core (no serious or critical
// violation), no console or page error, Tab reaches the navigation and the
// page's main action.
//
// The tests run in order and share the stack (one gateway, one browser);
// each opens its own browser context, so cookies never leak between them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { until } from '../lib/harness.mjs';
import {
  launch, closeBrowser, startStack, newPage, loginUI, submitDialog, settled, axe, fmtViolations, screenshot, call, streamChat,
  UI_USERNAME, UI_PASSWORD, MASTER_KEY, WAIT, ARTIFACTS,
} from './lib.mjs';

let mock, gw, base;
const MODEL = 'ui-model';
const ALIAS = 'ui-key';
let uiKey = null; // the key created on the Keys page (plaintext, as copied)

before(async () => {
  await launch();
  ({ mock, gw } = await startStack());
  base = gw.url;
});

after(async () => {
  await closeBrowser();
  if (gw) await gw.stop();
  if (mock) await mock.stop();
});

// The dollar amounts in a text, as numbers ("$1,234.50" -> 1234.5).
function money(text) {
  return [...text.matchAll(/\$([\d,]+(?:\.\d+)?)/g)].map((m) => Number(m[1].replace(/,/g, '')));
}

async function chat(key, model = MODEL) {
  return call(base, 'POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Say hello.' }] }, key);
}

async function keyRow(page, alias) {
  const row = page.locator('[data-page="keys"] [data-table] tr', { hasText: alias });
  await row.first().waitFor({ state: 'visible' });
  return row.first();
}

async function gotoPage(page, id) {
  await page.goto(`${base}/ui/${id}`);
  await settled(page, id);
}

test('login: a bad password shows an error; the admin logs in with UI_PASSWORD and with the master key', { timeout: 90000 }, async (t) => {
  const { page, context } = await newPage(t);
  await page.goto(`${base}/ui/`);
  await page.getByLabel('Username').waitFor();
  assert.match(new URL(page.url()).pathname, /^\/ui\/login/);
  await page.getByLabel('Username').fill(UI_USERNAME);
  await page.getByLabel('Password').fill('not-the-password');
  const failed = page.waitForResponse((r) => new URL(r.url()).pathname === '/login');
  await page.getByRole('button', { name: 'Log in' }).click();
  assert.equal((await failed).status(), 401);
  const alert = page.locator('[data-page="login"] [role="alert"]');
  await page.waitForFunction(() => (document.querySelector('[data-page="login"] [role="alert"]')?.textContent || '').trim().length > 0);
  assert.ok((await alert.textContent()).trim().length > 0, 'the error is shown');
  assert.equal((await context.cookies()).filter((c) => c.name === 'sy_session').length, 0, 'no session cookie after a failure');
  await screenshot(page, 'login-error-1280x800');

  await page.getByLabel('Password').fill(UI_PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('main [data-page]:not([data-page="login"])').first().waitFor({ state: 'attached' });
  const cookie = (await context.cookies()).find((c) => c.name === 'sy_session');
  assert.ok(cookie, 'the session cookie is set');
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Strict');
  assert.equal(cookie.path, '/');
  assert.ok(!cookie.value.includes(MASTER_KEY) && !cookie.value.includes(UI_PASSWORD), 'the cookie holds no secret');
  const s = await page.evaluate(() => fetch('/ui/session', { credentials: 'same-origin' }).then((r) => r.json()));
  assert.equal(s.is_admin, true);
  assert.equal(s.user_role, 'proxy_admin');
  assert.ok(typeof s.csrf_token === 'string' && s.csrf_token.length >= 16, 'a CSRF token');

  // the master key as the password
  const second = await newPage(t);
  await loginUI(second.page, base, UI_USERNAME, MASTER_KEY);
  const s2 = await second.page.evaluate(() => fetch('/ui/session').then((r) => r.json()));
  assert.equal(s2.is_admin, true);

  // logout ends the session: the old cookie is refused afterwards
  const before = (await second.context.cookies()).find((c) => c.name === 'sy_session');
  await second.page.getByRole('button', { name: 'Log out' }).click();
  await second.page.getByLabel('Username').waitFor();
  const r = await fetch(`${base}/ui/session`, { headers: { cookie: `sy_session=${before.value}` }, signal: AbortSignal.timeout(WAIT) });
  assert.equal(r.status, 401, 'a logged-out session is refused');
});

test('Models page: add a model pointing at the mock upstream; it appears and is served', { timeout: 90000 }, async (t) => {
  const { page } = await newPage(t);
  await loginUI(page, base, UI_USERNAME, UI_PASSWORD);
  await gotoPage(page, 'models');
  await page.locator('[data-page="models"]').getByRole('button', { name: 'Add model' }).click();
  const dlg = page.getByRole('dialog');
  await dlg.getByLabel('Model name (public)').fill(MODEL);
  await dlg.getByLabel('Upstream model').fill(`openai/${MODEL}`);
  await dlg.getByLabel('API base').fill(mock.base);
  await dlg.getByLabel('API key').fill('sk-upstream-secret');
  await dlg.getByLabel('Input cost per token (USD)').fill('0');
  await dlg.getByLabel('Output cost per token (USD)').fill('0.001');
  await submitDialog(page, 'Add model');
  await page.locator('[data-page="models"] [data-table] tr', { hasText: MODEL }).first().waitFor({ state: 'visible' });
  const text = await page.locator('[data-page="models"] [data-table]').textContent();
  assert.ok(!text.includes('sk-upstream-secret'), 'the upstream key is not shown');

  // the database model is served without a restart (bounded wait for the registry's swap)
  assert.ok(await until(async () => (await chat(MASTER_KEY)).status === 200, WAIT), 'the new model answers');
  const info = await call(base, 'GET', '/model/info');
  const row = (info.json?.data || []).find((d) => d.model_name === MODEL);
  assert.ok(row, 'listed by /model/info');
  assert.equal(row.model_info?.db_model, true);
  await screenshot(page, 'models-after-add-1280x800');
});

test('Keys page: create a key with a max budget; the key shown once is copied', { timeout: 90000 }, async (t) => {
  const { page, context } = await newPage(t);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  await loginUI(page, base, UI_USERNAME, UI_PASSWORD);
  await gotoPage(page, 'keys');
  await page.locator('[data-page="keys"]').getByRole('button', { name: 'Create key' }).click();
  const dlg = page.getByRole('dialog');
  await dlg.getByLabel('Key alias').fill(ALIAS);
  await dlg.getByLabel('Max budget (USD)').fill('10');
  await dlg.getByRole('button', { name: 'Create key' }).click();
  const secret = page.getByRole('dialog').locator('code');
  await secret.waitFor({ state: 'visible' });
  const shown = (await secret.textContent()).trim();
  assert.match(shown, /^sk-[A-Za-z0-9_-]{8,}$/);
  await page.getByRole('dialog').getByRole('button', { name: 'Copy' }).click();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied, shown, 'the Copy button puts the key on the clipboard');
  uiKey = copied;
  await screenshot(page, 'keys-new-key-1280x800');
  await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
  await keyRow(page, ALIAS);

  const info = await call(base, 'GET', `/key/info?key=${encodeURIComponent(uiKey)}`);
  assert.equal(info.status, 200, info.text);
  assert.equal(info.json.info.max_budget, 10);
});

test('the key calls the new model through the API: chat and stream', { timeout: 90000 }, async () => {
  assert.ok(uiKey, 'a key from the Keys page');
  const r = await chat(uiKey);
  assert.equal(r.status, 200, r.text);
  assert.match(r.json.choices[0].message.content, /deterministic/);
  const s = await streamChat(base, uiKey, MODEL);
  assert.equal(s.status, 200, s.raw);
  assert.ok(s.done, 'the stream ends with [DONE]');
  assert.match(s.text, /deterministic/);
  // the key is scoped: another key's model list is not needed, but a bad key is refused
  assert.equal((await chat('sk-not-a-key')).status, 401);
});

test('Logs shows the request; Usage shows spend > 0; the key row shows its spend', { timeout: 90000 }, async (t) => {
  assert.ok(uiKey, 'a key from the Keys page');
  // the spend writer batches every 0.1 s: wait (bounded) until the key carries spend
  let spend = 0;
  assert.ok(await until(async () => {
    const r = await call(base, 'GET', `/key/info?key=${encodeURIComponent(uiKey)}`);
    spend = r.json?.info?.spend || 0;
    return spend > 0;
  }, WAIT), 'the key has spend');

  const { page } = await newPage(t);
  await loginUI(page, base, UI_USERNAME, UI_PASSWORD);

  await gotoPage(page, 'logs');
  const logs = page.locator('[data-page="logs"]');
  await logs.locator('[data-table] tr', { hasText: MODEL }).first().waitFor({ state: 'visible' });
  await screenshot(page, 'logs-with-request-1280x800');

  await gotoPage(page, 'usage');
  const usage = page.locator('[data-page="usage"]');
  assert.ok(await until(async () => money((await usage.textContent()) || '').some((v) => v > 0), WAIT),
    `Usage shows a spend above $0: ${(await usage.textContent()).slice(0, 400)}`);
  await screenshot(page, 'usage-with-spend-1280x800');

  await gotoPage(page, 'keys');
  const row = await keyRow(page, ALIAS);
  const amounts = money(await row.textContent());
  assert.ok(amounts.length >= 2 && amounts[0] > 0, `the key row shows spend: ${await row.textContent()}`);
  assert.equal(amounts[1], 10, 'and its budget');
});

async function editBudget(page, value) {
  const row = await keyRow(page, ALIAS);
  await row.getByRole('button', { name: /^Edit / }).click();
  const dlg = page.getByRole('dialog');
  await dlg.getByLabel('Max budget (USD)').fill(String(value));
  await submitDialog(page, 'Save');
}

test('edit the budget below the spend: refused; raise it; regenerate: old key refused, new works; delete: refused', { timeout: 90000 }, async (t) => {
  assert.ok(uiKey, 'a key from the Keys page');
  const { page } = await newPage(t);
  await loginUI(page, base, UI_USERNAME, UI_PASSWORD);
  await gotoPage(page, 'keys');

  await editBudget(page, 0.000001);
  let r;
  assert.ok(await until(async () => (r = await chat(uiKey)).status !== 200, WAIT), 'a call over budget is refused');
  assert.equal(r.status, 400, r.text);
  assert.match(r.json?.error?.message || '', /budget/i);
  assert.match(r.json?.error?.type || '', /budget_exceeded/);

  await editBudget(page, 100);
  assert.ok(await until(async () => (r = await chat(uiKey)).status === 200, WAIT), `a raised budget lets it through: ${r.text}`);

  const old = uiKey;
  const row = await keyRow(page, ALIAS);
  await row.getByRole('button', { name: /^Regenerate / }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Regenerate' }).click();
  const secret = page.getByRole('dialog').locator('code');
  await secret.waitFor({ state: 'visible' });
  const fresh = (await secret.textContent()).trim();
  assert.match(fresh, /^sk-/);
  assert.notEqual(fresh, old);
  await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
  assert.ok(await until(async () => (r = await chat(old)).status === 401, WAIT), `the old key is refused: ${r.status} ${r.text}`);
  r = await chat(fresh);
  assert.equal(r.status, 200, `the regenerated key works: ${r.text}`);
  uiKey = fresh;

  const row2 = await keyRow(page, ALIAS);
  await row2.getByRole('button', { name: /^Delete / }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await page.locator('[data-page="keys"] [data-table] tr', { hasText: ALIAS }).first().waitFor({ state: 'detached' });
  assert.ok(await until(async () => (r = await chat(fresh)).status === 401, WAIT), `the deleted key is refused: ${r.status} ${r.text}`);
});

test('an internal user logs in with their password and sees only their own keys', { timeout: 90000 }, async (t) => {
  for (const [id, email, pw] of [['ui-alice', 'alice@example.com', 'alice-pw-1'], ['ui-bob', 'bob@example.com', 'bob-pw-1']]) {
    const u = await call(base, 'POST', '/user/new', { user_id: id, user_email: email, password: pw, user_role: 'internal_user' });
    assert.equal(u.status, 200, u.text);
    const k = await call(base, 'POST', '/key/generate', { user_id: id, key_alias: `${id}-key` });
    assert.equal(k.status, 200, k.text);
  }
  const bobHash = (await call(base, 'GET', '/key/list?user_id=ui-bob&return_full_object=true')).json.keys[0].token;
  assert.match(bobHash, /^[0-9a-f]{64}$/);

  const { page, context } = await newPage(t);
  // a wrong password for a real user is refused like an unknown user
  await page.goto(`${base}/ui/login`);
  await page.getByLabel('Username').fill('alice@example.com');
  await page.getByLabel('Password').fill('bob-pw-1');
  const failed = page.waitForResponse((r) => new URL(r.url()).pathname === '/login');
  await page.getByRole('button', { name: 'Log in' }).click();
  assert.equal((await failed).status(), 401);

  await loginUI(page, base, 'alice@example.com', 'alice-pw-1');
  const s = await page.evaluate(() => fetch('/ui/session').then((r) => r.json()));
  assert.equal(s.user_id, 'ui-alice');
  assert.equal(s.user_role, 'internal_user');
  assert.equal(s.is_admin, false);
  const cookie = (await context.cookies()).find((c) => c.name === 'sy_session');
  assert.ok(!cookie.value.includes('alice-pw-1'));

  await gotoPage(page, 'keys');
  const tbl = page.locator('[data-page="keys"] [data-table]');
  await tbl.locator('tr', { hasText: 'ui-alice-key' }).first().waitFor({ state: 'visible' });
  const text = await tbl.textContent();
  assert.ok(!text.includes('ui-bob-key'), "bob's key is not listed");
  assert.ok(!text.includes(ALIAS), "the admin's key is not listed");
  await screenshot(page, 'keys-internal-user-1280x800');

  // the API behind the page, with alice's cookie: scoped, and bob's key is out of reach
  const listed = await page.evaluate(() => fetch('/key/list?return_full_object=true&size=100').then((r) => r.json()));
  const owners = new Set(listed.keys.filter((k) => k && typeof k === 'object').map((k) => k.user_id));
  assert.deepEqual([...owners].filter((o) => o !== 'ui-alice'), [], `only alice's keys: ${JSON.stringify(listed.keys)}`);
  const del = await page.evaluate(async (h) => {
    const sess = await fetch('/ui/session').then((r) => r.json());
    const r = await fetch('/key/delete', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': sess.csrf_token }, body: JSON.stringify({ keys: [h] }) });
    return r.status;
  }, bobHash);
  assert.ok(del >= 400 && del < 500, `deleting bob's key is refused (${del})`);
  const bobInfo = await call(base, 'GET', `/key/info?key=${bobHash}`);
  assert.equal(bobInfo.status, 200, "bob's key still exists");
  const admin = await page.evaluate(() => fetch('/user/list').then((r) => r.status));
  assert.ok(admin === 401 || admin === 403, `an internal user cannot list every user (${admin})`);
});

test('a forged cross-site POST is refused; a same-origin POST needs x-csrf-token', { timeout: 90000 }, async (t) => {
  const { page, context } = await newPage(t);
  await loginUI(page, base, UI_USERNAME, UI_PASSWORD);
  const count = async () => (await call(base, 'GET', '/key/list?size=1')).json.total_count;
  const keysBefore = await count();

  // the attacker's pages: same site (127.0.0.1), another origin (port), so a
  // SameSite=Strict cookie is still sent: the CSRF check is what refuses them
  const target = `${base}/key/generate`;
  const pages = {
    '/fetch': `<!doctype html><title>x</title><script>
      fetch(${JSON.stringify(target)}, {method: 'POST', credentials: 'include', mode: 'no-cors',
        headers: {'content-type': 'text/plain'}, body: JSON.stringify({key_alias: 'csrf-fetch'})})
        .catch(() => {}).finally(() => { document.title = 'sent'; });
    </script>`,
    '/form-json': `<!doctype html><title>x</title><form method="POST" action=${JSON.stringify(target)} enctype="text/plain">
      <input type="hidden" name='{"key_alias":"csrf-form","x":"' value='"}'></form><script>document.forms[0].submit()</script>`,
    '/form-urlencoded': `<!doctype html><title>x</title><form method="POST" action=${JSON.stringify(target)}>
      <input type="hidden" name="key_alias" value="csrf-urlencoded"></form><script>document.forms[0].submit()</script>`,
  };
  const evil = http.createServer((req, res) => {
    res.writeHead(pages[req.url] ? 200 : 404, { 'content-type': 'text/html' });
    res.end(pages[req.url] || 'no');
  });
  evil.listen(0, '127.0.0.1');
  await once(evil, 'listening');
  t.after(() => evil.close());
  const evilBase = `http://127.0.0.1:${evil.address().port}`;

  const statuses = [];
  page.on('response', (r) => { if (r.url() === target) statuses.push(r.status()); });
  const attacker = await context.newPage();
  attacker.on('response', (r) => { if (r.url() === target) statuses.push(r.status()); });

  await attacker.goto(`${evilBase}/fetch`);
  await attacker.waitForFunction(() => document.title === 'sent');
  for (const p of ['/form-json', '/form-urlencoded']) {
    const landed = attacker.waitForURL(target);
    await attacker.goto(`${evilBase}${p}`);
    await landed;
  }
  assert.equal(statuses.length, 3, `three forged requests reached the gateway: ${statuses}`);
  for (const s of statuses) assert.ok(s === 401 || s === 403, `a forged POST is refused (${statuses})`);
  assert.equal(await count(), keysBefore, 'no key was created');
  const aliases = (await call(base, 'GET', '/key/list?return_full_object=true&size=100')).json.keys.map((k) => k.key_alias);
  assert.ok(!aliases.some((a) => String(a).startsWith('csrf-')), `no forged key: ${aliases}`);

  // same origin, without the header: 403 "CSRF check failed"; with it: allowed
  const noHeader = await page.evaluate(() => fetch('/key/generate', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"key_alias":"csrf-noheader"}' })
    .then(async (r) => ({ status: r.status, body: await r.json().catch(() => null) })));
  assert.equal(noHeader.status, 403);
  assert.equal(noHeader.body?.error?.message, 'CSRF check failed');
  const wrong = await page.evaluate(() => fetch('/key/generate', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': 'forged' }, body: '{}' }).then((r) => r.status));
  assert.equal(wrong, 403, 'a wrong token');
  assert.equal(await count(), keysBefore, 'still no key');
  const ok = await page.evaluate(async () => {
    const s = await fetch('/ui/session').then((r) => r.json());
    const r = await fetch('/key/generate', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrf_token }, body: '{"key_alias":"csrf-positive"}' });
    return { status: r.status, body: await r.json() };
  });
  assert.equal(ok.status, 200, 'the page itself may write');

  // the right token but a foreign Origin (a client outside the browser): 403
  const cookie = (await context.cookies()).find((c) => c.name === 'sy_session');
  const csrf = (await page.evaluate(() => fetch('/ui/session').then((r) => r.json()))).csrf_token;
  const foreign = await fetch(target, {
    method: 'POST',
    headers: { cookie: `sy_session=${cookie.value}`, 'x-csrf-token': csrf, origin: 'http://evil.example', 'content-type': 'application/json' },
    body: '{"key_alias":"csrf-origin"}', signal: AbortSignal.timeout(WAIT),
  });
  assert.equal(foreign.status, 403);
  // a forged cookie is 401
  const forged = await fetch(`${base}/ui/session`, { headers: { cookie: `sy_session=${cookie.value.slice(0, -4)}AAAA` }, signal: AbortSignal.timeout(WAIT) });
  assert.equal(forged.status, 401);
  await call(base, 'POST', '/key/delete', { keys: [ok.body.key] });
});

test('Playground: a streamed answer appears', { timeout: 90000 }, async (t) => {
  const { page } = await newPage(t);
  await loginUI(page, base, UI_USERNAME, UI_PASSWORD);
  await gotoPage(page, 'playground');
  const pg = page.locator('[data-page="playground"]');
  const model = pg.getByRole('combobox', { name: /model/i }).first();
  await model.selectOption('cfg-model'); // the config file's model: this step does not hang on the database's
  const streamed = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/chat/completions');
  await pg.getByRole('textbox', { name: /message|prompt/i }).last().fill('Say hello.');
  await pg.getByRole('button', { name: /send/i }).click();
  const res = await streamed;
  assert.equal(res.status(), 200);
  assert.match(res.headers()['content-type'] || '', /text\/event-stream/);
  await pg.getByText(/deterministic/).first().waitFor({ state: 'visible' });
  await screenshot(page, 'playground-answer-1280x800');
});

// Tab from the top of the page until the focus is in the navigation, then
// until it is on the page's main action (its primary button, else its first
// control); at most `limit` presses each.
async function tabTo(page, predicate, arg, limit = 80) {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(predicate, arg)) return true;
  }
  return false;
}

for (const [w, hgt] of [[1280, 800], [390, 844]]) {
  test(`every page at ${w}x${hgt}: screenshot, axe-core, no console errors${w > 400 ? ', keyboard' : ''}`, { timeout: 150000 }, async (t) => {
    const { page, errors, clearErrors } = await newPage(t, { width: w, height: hgt });
    await page.goto(`${base}/ui/login`);
    await page.getByLabel('Username').waitFor();
    await settled(page, 'login');
    await screenshot(page, `login-${w}x${hgt}`);
    const loginViolations = await axe(page);
    assert.equal(loginViolations.length, 0, `axe on the login page:\n${fmtViolations(loginViolations)}`);
    await loginUI(page, base, UI_USERNAME, UI_PASSWORD);

    const ids = await page.locator('nav#nav a').evaluateAll((as) => as.map((a) => new URL(a.href).pathname.replace(/^\/ui\//, '')));
    assert.ok(ids.length >= 11, `the navigation lists every page: ${ids}`);
    if (w < 400) { // the navigation sits behind the Menu button on a phone
      const menu = page.getByRole('button', { name: 'Menu' });
      await menu.click();
      await page.locator('nav#nav a').first().waitFor({ state: 'visible' });
      assert.equal(await menu.getAttribute('aria-expanded'), 'true');
      await screenshot(page, `nav-open-${w}x${hgt}`);
    }
    const problems = [];
    for (const id of ids) {
      clearErrors();
      await page.goto(`${base}/ui/${id}`);
      try {
        await settled(page, id);
      } catch (e) {
        problems.push(`${id}: did not finish loading (${e.message.split('\n')[0]})`);
        continue;
      }
      const shot = await screenshot(page, `${id}-${w}x${hgt}`);
      t.diagnostic(`${id}: ${shot}`);
      if (await page.locator(`[data-page="${id}"] .state.error`).count())
        problems.push(`${id}: shows an error: ${await page.locator(`[data-page="${id}"] .state.error`).first().textContent()}`);
      const v = await axe(page);
      if (v.length) problems.push(`${id}: axe:\n${fmtViolations(v)}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      if (overflow > 1) problems.push(`${id}: the page scrolls sideways by ${overflow} px`);
      if (w > 400) {
        await page.evaluate(() => { document.activeElement?.blur(); window.scrollTo(0, 0); });
        if (!(await tabTo(page, () => !!document.activeElement?.closest('nav#nav'))))
          problems.push(`${id}: Tab never reaches the navigation`);
        const action = await page.evaluate((pid) => {
          const r = document.querySelector(`[data-page="${pid}"]`);
          const el = r.querySelector('button.primary:not([disabled])') ||
            r.querySelector('button:not([disabled]), a[href], input:not([type=hidden]), select, textarea');
          if (!el) return null;
          el.setAttribute('data-main-action', '1');
          return el.textContent.trim() || el.getAttribute('aria-label') || el.id || el.tagName;
        }, id);
        if (!action) t.diagnostic(`${id}: no control on the page (read-only): only the navigation is checked`);
        else if (!(await tabTo(page, () => document.activeElement?.getAttribute('data-main-action') === '1', null, 120)))
          problems.push(`${id}: Tab never reaches the main action (${action})`);
      }
      const errs = errors();
      if (errs.length) problems.push(`${id}: console/page errors:\n    ${errs.join('\n    ')}`);
    }
    t.diagnostic(`screenshots in ${ARTIFACTS}`);
    assert.deepEqual(problems, [], problems.join('\n'));
  });
}
