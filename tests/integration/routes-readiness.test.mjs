// routes-readiness.test.mjs - GET /routes (LiteLLM's {"routes": [...]} built from the route
// tables) and /health/readiness's "db" field: "connected" on SQLite and on a running
// PostgreSQL, "disconnected" (503, status healthy, as LiteLLM) while PostgreSQL is
// stopped and "connected" again after it restarts, "Not connected" without a database. Also the
// server/database settings general_settings.disable_error_logs and database_connection_pool_limit.
// Every wait is bounded; nothing asserts a timing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { MASTER_KEY, api, chatBody, keysConfig, postJSON, sha256hex, startGateway, startMock, until } from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

const cfg = (mockBase, extra = '') => `
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${mockBase}", api_key: sk-x}
general_settings:
  master_key: ${MASTER_KEY}
${extra}`;

const getJSON = async (url, headers = {}) => {
  const r = await fetch(url, { headers });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch {}
  return { status: r.status, text, json };
};

function assertReadinessShape(r, status = 200) {
  assert.equal(r.status, status, r.text);
  assert.equal(r.json.status, 'healthy');
  for (const k of ['db', 'cache', 'litellm_version', 'success_callbacks', 'log_level', 'is_detailed_debug'])
    assert.ok(k in r.json, `${k} in ${r.text}`);
  assert.ok(Array.isArray(r.json.success_callbacks));
  assert.ok(['DEBUG', 'INFO', 'WARNING', 'ERROR'].includes(r.json.log_level), r.text);
  assert.equal(r.json.is_detailed_debug, r.json.log_level === 'DEBUG');
}

let mock;
before(async () => { mock = await startMock(); });
after(async () => { await mock.stop(); });

describe('GET /routes', () => {
  let gw;
  before(async () => { gw = await startGateway(cfg(mock.base)); });
  after(async () => { await gw.stop(); });

  test('is public and lists every served route with its methods, in LiteLLM\'s shape', async () => {
    const r = await getJSON(`${gw.url}/routes`); // no key: public, as LiteLLM's
    assert.equal(r.status, 200, r.text);
    assert.ok(Array.isArray(r.json.routes));
    const by = new Map(r.json.routes.map((e) => [e.path, e]));
    assert.equal(by.size, r.json.routes.length, 'one entry per path');
    for (const e of r.json.routes) {
      assert.deepEqual(Object.keys(e).sort(), ['endpoint', 'methods', 'name', 'path']);
      assert.ok(e.path.startsWith('/'), e.path);
      assert.ok(e.methods.length > 0 && e.methods.every((m) => /^(GET|POST|PUT|PATCH|DELETE)$/.test(m)), JSON.stringify(e));
      assert.equal(typeof e.name, 'string');
    }
    const has = (p, ...ms) => {
      assert.ok(by.has(p), `${p} listed`);
      for (const m of ms) assert.ok(by.get(p).methods.includes(m), `${p} ${m}: ${JSON.stringify(by.get(p))}`);
    };
    has('/v1/chat/completions', 'POST');
    has('/chat/completions', 'POST');
    has('/v1/models', 'GET');
    has('/v1/models/{model_id}', 'GET');
    has('/openai/deployments/{model}/chat/completions', 'POST');
    has('/v1/files', 'GET', 'POST');
    has('/v1/files/{file_id}', 'GET', 'DELETE');
    has('/health/readiness', 'GET');
    has('/routes', 'GET');
    has('/key/generate', 'POST');
    has('/key/info', 'GET');
    has('/key/{key}/regenerate', 'POST');
    has('/team/new', 'POST');
    assert.ok(r.json.routes.length > 80, `${r.json.routes.length} routes`);
  });

  test('every listed route is really served (no 404 "Route not found" for any of them)', async () => {
    const r = await getJSON(`${gw.url}/routes`);
    for (const e of r.json.routes) {
      const path = e.path.replace(/\{[^}]+\}/g, 'x1');
      const method = e.methods[0];
      const res = await fetch(`${gw.url}${path}`, {
        method,
        headers: { authorization: 'Bearer sk-not-a-key', 'content-type': 'application/json' },
        body: method === 'GET' || method === 'DELETE' ? undefined : '{}',
      });
      const text = await res.text();
      assert.ok(!(res.status === 404 && /Route not found/.test(text)), `${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
      assert.notEqual(res.status, 405, `${method} ${path}: ${text.slice(0, 200)}`);
    }
  });

  test('a method the route does not serve is 405, not a crash', async () => {
    const r = await fetch(`${gw.url}/routes`, { method: 'POST', body: '{}' });
    assert.equal(r.status, 405);
    assert.equal(gw.proc.exitCode, null);
  });
});

describe('/health/readiness on SQLite', () => {
  let gw;
  before(async () => { gw = await startGateway(cfg(mock.base)); });
  after(async () => { await gw.stop(); });

  test('db is "connected"; many concurrent probes all answer', async () => {
    const r = await getJSON(`${gw.url}/health/readiness`);
    assertReadinessShape(r);
    assert.equal(r.json.db, 'connected');
    const all = await Promise.all(Array.from({ length: 50 }, () => getJSON(`${gw.url}/health/readiness`)));
    for (const x of all) {
      assertReadinessShape(x);
      assert.equal(x.json.db, 'connected');
    }
  });
});

describe('/health/readiness without a database', () => {
  let gw;
  before(async () => { gw = await startGateway(cfg(mock.base), { env: { SWITCHYARD_DB: 'none' } }); });
  after(async () => { await gw.stop(); });

  test('db is "Not connected" (LiteLLM without a database_url)', async () => {
    const r = await getJSON(`${gw.url}/health/readiness`);
    assertReadinessShape(r);
    assert.equal(r.json.db, 'Not connected');
  });
});

describe('/health/readiness on PostgreSQL: up, stopped, back', () => {
  let pg, gw;
  before(async () => {
    pg = await startPostgres();
    const url = await pg.createDb('ready');
    gw = await startGateway(cfg(mock.base, `  database_url: "${url}"\n`), { workers: 2 });
  });
  after(async () => { await gw?.stop(); await pg?.stop(); });

  const db = async () => {
    const r = await getJSON(`${gw.url}/health/readiness`);
    assertReadinessShape(r, r.json?.db === 'disconnected' ? 503 : 200); // 503 only with the database down
    return r.json.db;
  };

  test('connected while up', async () => {
    assert.equal(await db(), 'connected');
  });

  test('disconnected while stopped (503, status healthy, as LiteLLM), the gateway keeps answering', async () => {
    await pg.halt();
    assert.ok(await until(async () => (await db()) === 'disconnected', 15000), 'readiness reports the outage');
    // stays disconnected on repeated probes, the liveness probe is unaffected
    for (let i = 0; i < 5; i++) assert.equal(await db(), 'disconnected');
    assert.equal((await fetch(`${gw.url}/health/liveliness`)).status, 200);
    assert.equal(gw.proc.exitCode, null);
  });

  test('connected again after PostgreSQL restarts', async () => {
    await pg.restart();
    assert.ok(await until(async () => (await db()) === 'connected', 20000), 'readiness reports the recovery');
  });
});

describe('general_settings.disable_error_logs and database_connection_pool_limit', () => {
  const broken = (b) => `  - model_name: broken\n    litellm_params: {model: "openai/x@status=500", api_base: "${b}", api_key: sk-up}\n`;
  const threads = (gw) => Number(/Threads:\s+(\d+)/.exec(fs.readFileSync(`/proc/${gw.proc.pid}/status`, 'utf8'))[1]);

  async function rowsAfter(general) {
    const gw = await startGateway(keysConfig(mock.base, { general, extraModels: broken(mock.base) }));
    try {
      const g = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', {});
      assert.equal(g.status, 200, g.text);
      const auth = { authorization: `Bearer ${g.json.key}` };
      assert.equal((await postJSON(`${gw.url}/v1/chat/completions`, chatBody('broken'), auth)).status, 500);
      assert.equal((await postJSON(`${gw.url}/v1/chat/completions`, chatBody('priced'), auth)).status, 200);
      const hash = await sha256hex(g.json.key);
      let rows = [];
      // the success row is written after the failure row (same writer queue): wait for it
      assert.ok(await until(async () => {
        const r = await api(gw.url, MASTER_KEY, 'GET', `/spend/logs?api_key=${hash}`);
        rows = r.json || [];
        return rows.some((x) => x.status === 'success');
      }, 10000), 'the success row is written');
      return rows.map((x) => x.status).sort();
    } finally {
      await gw.stop();
    }
  }

  test('failed requests get a SpendLogs row (status failure) unless disable_error_logs is true', async () => {
    assert.deepEqual(await rowsAfter(''), ['failure', 'success']);
    assert.deepEqual(await rowsAfter('  disable_error_logs: true\n'), ['success']);
  });

  test('database_connection_pool_limit sets the number of DB threads (each one connection)', async () => {
    const a = await startGateway(keysConfig(mock.base));
    const b = await startGateway(keysConfig(mock.base, { general: '  database_connection_pool_limit: 6\n' }));
    try {
      assert.equal(threads(b) - threads(a), 6 - 2, `threads: default ${threads(a)}, limit 6: ${threads(b)}`);
      // both serve database calls
      for (const gw of [a, b]) assert.equal((await api(gw.url, MASTER_KEY, 'POST', '/key/generate', {})).status, 200);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
