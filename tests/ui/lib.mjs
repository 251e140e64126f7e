// lib.mjs - what the browser specs share: one Chromium for the run (Debian's
// /usr/bin/chromium driven by playwright-core; no browser is ever
// downloaded), a fresh context per test, the gateway and mock upstream from
// tests/lib/harness.mjs, and the checks every page gets: axe-core injected
// from node_modules (no serious/critical violation), console and page
// errors collected, screenshots written to $UI_ARTIFACTS.
//
// Every wait is bounded (WAIT ms); nothing asserts a duration.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';
import { startGateway, startMock, MASTER_KEY, root } from '../lib/harness.mjs';

const require = createRequire(import.meta.url);
export const AXE = require.resolve('axe-core/axe.min.js');
const AXE_SRC = fs.readFileSync(AXE, 'utf8');
export const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
export const ARTIFACTS = path.resolve(root, process.env.UI_ARTIFACTS || 'build/ui-artifacts');
export const WAIT = 15000;
export const UI_USERNAME = 'admin';
export const UI_PASSWORD = 'ui-pass-Ok9.';
export { MASTER_KEY };

let browser = null;

export async function launch() {
  browser ||= await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    timeout: 60000,
  });
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return browser;
}

export async function closeBrowser() {
  if (browser) await browser.close().catch(() => {});
  browser = null;
}

/** The mock upstream and switchyard as a user runs it: SQLite, a master key,
 * models in the database, UI_USERNAME/UI_PASSWORD; one config model
 * ("cfg-model") so that the database models coexist with the file's. */
export async function startStack() {
  const mock = await startMock();
  const config = `
model_list:
  - model_name: cfg-model
    litellm_params: {model: openai/cfg-model, api_base: "${mock.base}", api_key: sk-up, input_cost_per_token: 0, output_cost_per_token: 0.001}
general_settings:
  master_key: ${MASTER_KEY}
  store_model_in_db: true
  proxy_batch_write_at: 0.1
`;
  const gw = await startGateway(config, { env: { UI_USERNAME, UI_PASSWORD, LITELLM_SALT_KEY: 'sk-ui-test-salt' } });
  return { mock, gw };
}

/** A fresh context (own cookies) and page; errors() lists console errors and
 * uncaught page errors seen since it opened (or since clearErrors()). */
export async function newPage(t, { width = 1280, height = 800 } = {}) {
  const b = await launch();
  const context = await b.newContext({ viewport: { width, height } });
  context.setDefaultTimeout(WAIT);
  context.setDefaultNavigationTimeout(WAIT);
  const page = await context.newPage();
  const seen = [];
  page.on('console', (m) => { if (m.type() === 'error') seen.push(`console: ${m.text()} (${m.location().url || ''})`); });
  page.on('pageerror', (e) => seen.push(`pageerror: ${e.message}`));
  t?.after?.(() => context.close().catch(() => {}));
  return {
    context, page,
    errors: () => seen.slice(),
    clearErrors: () => { seen.length = 0; },
    close: () => context.close().catch(() => {}),
  };
}

/** Log in through the login form; resolves once the shell shows a page. */
export async function loginUI(page, base, username, password) {
  await page.goto(`${base}/ui/login`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  try {
    await page.locator('main [data-page]:not([data-page="login"])').first().waitFor({ state: 'attached' });
  } catch (e) {
    const shown = await page.locator('[data-page="login"] [role="alert"]').first().textContent().catch(() => '');
    throw new Error(`login as ${username} did not reach a page; the form says: ${JSON.stringify(shown)}\n${e.message}`);
  }
  await page.locator('nav#nav a').first().waitFor({ state: 'attached' });
}

/** Click a dialog's button and wait for the dialog to close; when it stays
 * open, fail with the error the dialog shows (the server's message). */
export async function submitDialog(page, name) {
  const dlg = page.getByRole('dialog');
  await dlg.getByRole('button', { name }).click();
  try {
    await dlg.waitFor({ state: 'detached' });
  } catch (e) {
    const shown = await dlg.locator('[role="alert"]').first().textContent().catch(() => '');
    throw new Error(`the dialog stayed open after "${name}"; it says: ${JSON.stringify(shown)}\n${e.message}`);
  }
}

/** Wait until the page's root is drawn and no data view is still loading. */
export async function settled(page, id) {
  const rootSel = `[data-page="${id}"]`;
  await page.locator(rootSel).waitFor({ state: 'attached' });
  await page.waitForFunction((sel) => {
    const r = document.querySelector(sel);
    if (!r) return false;
    return !r.querySelector('[aria-busy="true"], .state.loading') && !document.querySelector('main > .state.loading');
  }, rootSel, { timeout: WAIT });
}

/** Run axe-core on the page; returns the serious and critical violations. */
export async function axe(page) {
  // evaluated over the DevTools protocol: the UI's Content-Security-Policy
  // (script-src 'self') rightly refuses an injected <script>
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(AXE_SRC);
  const res = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => `${n.target.join(' ')}: ${n.failureSummary || ''}`.replace(/\s+/g, ' ')),
    }));
  });
  return res.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

export function fmtViolations(vs) {
  return vs.map((v) => `[${v.impact}] ${v.id}: ${v.help}\n    ${v.nodes.join('\n    ')}`).join('\n');
}

export async function screenshot(page, name) {
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true, timeout: WAIT });
  return file;
}

/** JSON call with the master key (or another bearer). */
export async function call(base, method, p, body, key = MASTER_KEY) {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(WAIT),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch {}
  return { status: res.status, text, json, headers: res.headers };
}

/** A streamed chat call; returns {status, text (the content deltas joined), done}. */
export async function streamChat(base, key, model) {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'Say hello.' }] }),
    signal: AbortSignal.timeout(WAIT),
  });
  const raw = await res.text();
  let text = '';
  let done = false;
  for (const line of raw.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    const d = line.slice(6).trim();
    if (d === '[DONE]') { done = true; continue; }
    try { text += JSON.parse(d).choices?.[0]?.delta?.content || ''; } catch {}
  }
  return { status: res.status, text, done, raw };
}
