// db-models.test.mjs - general_settings.store_model_in_db: /model/new,
// /model/update, PATCH /model/{id}/update, /model/delete on
// LiteLLM_ProxyModelTable (src/admin/models.c) and the registry that serves
// the rows at run time (src/stages/model_registry.c), on SQLite and
// PostgreSQL: a new model answers at once, an update moves it, a delete
// removes it; litellm_params encrypted at rest as LiteLLM encrypts them
// (checked with LiteLLM's own scheme, fixtures/litellm_encrypt.py); a row
// LiteLLM wrote (both formats) loads and answers; two instances on one
// database (A adds, B serves, through Redis and through the poll); config
// models cannot be edited; non-admins refused; the feature off; bad rows
// skipped; a restart serves the rows before its first request; no request
// dropped while models change under load.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { MASTER_KEY, api, chatBody, keysConfig, root, startGateway, startMock, startRedis, until } from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

const run = promisify(execFile);
const ENC = path.join(root, 'tests/integration/fixtures/litellm_encrypt.py');

async function litellmDecrypt(value, salt) {
  try {
    const { stdout } = await run(ENC, ['--salt', salt, '--decrypt', value], { timeout: 20000 });
    return stdout.replace(/\n$/, '');
  } catch { return null; }
}
async function litellmEncrypt(value, salt, format) {
  const { stdout } = await run(ENC, ['--salt', salt, '--format', format, value], { timeout: 20000 });
  return stdout.trim();
}

let mock, mock2, pg;
before(async () => { mock = await startMock(); mock2 = await startMock(); pg = await startPostgres(); });
after(async () => { await mock?.stop(); await mock2?.stop(); await pg?.stop(); });

const config = (databaseUrl, general = '  store_model_in_db: true\n') => keysConfig(mock.base, { databaseUrl, general });
const chat = (gw, model, key = MASTER_KEY) => api(gw.url, key, 'POST', '/v1/chat/completions', chatBody(model));
async function upstreamHits(m, model) {
  return (await m.requests()).filter((r) => r.body && JSON.parse(r.body).model === model).length;
}

for (const backend of ['sqlite', 'postgres']) {
  describe(`database models on ${backend}`, () => {
    let gw, dbUrl;
    const A = (method, p, body) => api(gw.url, MASTER_KEY, method, p, body);
    async function sql(q) {
      if (backend === 'postgres') return pg.psql(q, dbUrl);
      const { stdout } = await run('sqlite3', ['-json', path.join(gw.dir, 'switchyard.db'), q], { timeout: 20000 });
      return stdout.trim() ? JSON.parse(stdout) : [];
    }
    const parsed = (v) => (typeof v === 'string' ? JSON.parse(v) : v);

    before(async () => {
      dbUrl = backend === 'postgres' ? await pg.createDb('db_models_test') : null;
      gw = await startGateway(config(dbUrl));
    });
    after(async () => { await gw?.stop(); });

    test('new -> served at once; update moves it; delete removes it', async () => {
      assert.equal((await chat(gw, 'dbm-1')).status, 400); // not there yet
      const r = await A('POST', '/model/new', {
        model_name: 'dbm-1',
        litellm_params: { model: 'openai/dbm-up', api_base: mock.base, api_key: 'sk-db-secret-1234', rpm: 100 },
        model_info: { id: 'dbm-1-id', mode: 'chat' },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.model_id, 'dbm-1-id');
      assert.equal(r.json.model_name, 'dbm-1');
      assert.notEqual(parsed(r.json.litellm_params).api_key, 'sk-db-secret-1234'); // the row, encrypted
      assert.ok(await until(async () => (await chat(gw, 'dbm-1')).status === 200, 10000), 'served after /model/new');
      assert.ok(await upstreamHits(mock, 'dbm-up') >= 1);

      // encrypted at rest, as LiteLLM reads it
      const [row] = await sql(`SELECT litellm_params, model_info, created_by FROM "LiteLLM_ProxyModelTable" WHERE model_id = 'dbm-1-id'`);
      const lp = parsed(row.litellm_params);
      assert.notEqual(lp.api_key, 'sk-db-secret-1234');
      assert.equal(await litellmDecrypt(lp.api_key, MASTER_KEY), 'sk-db-secret-1234');
      assert.equal(await litellmDecrypt(lp.model, MASTER_KEY), 'openai/dbm-up');
      assert.equal(lp.rpm, 100); // numbers stay as they are
      assert.equal(parsed(row.model_info).id, 'dbm-1-id');
      assert.equal(row.created_by, 'default_user_id');

      // /model/info lists it as a database model, its key masked
      const info = await A('GET', '/model/info?litellm_model_id=dbm-1-id');
      assert.equal(info.status, 200, info.text);
      assert.equal(info.json.data[0].model_info.db_model, true);
      const st = info.json.data[0].model_info.switchyard_state; // the Models page's live state
      assert.equal(st.healthy, true);
      assert.equal(st.in_cooldown, false);
      assert.equal(st.cooldown_until, null);
      assert.ok(st.successes >= 1, JSON.stringify(st));
      assert.equal(typeof st.failures, 'number');
      assert.ok(!info.text.includes('sk-db-secret-1234'));
      const all = await A('GET', '/v2/model/info');
      assert.equal(all.json.data.find((d) => d.model_info.id === 'dbm-1-id').model_info.db_model, true);
      assert.equal(all.json.data.find((d) => d.model_name === 'priced').model_info.db_model, false);

      // update: a new api_base (mock2); the old key is kept
      const u = await A('POST', '/model/update', { model_info: { id: 'dbm-1-id' }, litellm_params: { api_base: mock2.base } });
      assert.equal(u.status, 200, u.text);
      assert.ok(await until(async () => (await chat(gw, 'dbm-1')).status === 200 && await upstreamHits(mock2, 'dbm-up') >= 1, 10000),
        'served by the new api_base');
      const auth = (await mock2.requests()).find((q) => JSON.parse(q.body).model === 'dbm-up').headers.authorization;
      assert.equal(auth, 'Bearer sk-db-secret-1234');

      // PATCH renames it
      const p = await A('PATCH', '/model/dbm-1-id/update', { model_name: 'dbm-1b', model_info: { note: 'x' } });
      assert.equal(p.status, 200, p.text);
      assert.equal(parsed(p.json.model_info).note, 'x');
      assert.ok(await until(async () => (await chat(gw, 'dbm-1b')).status === 200, 10000));
      assert.equal((await chat(gw, 'dbm-1')).status, 400);

      // delete
      const d = await A('POST', '/model/delete', { id: 'dbm-1-id' });
      assert.equal(d.status, 200, d.text);
      assert.deepEqual(d.json, { message: 'Model: dbm-1-id deleted successfully' });
      assert.ok(await until(async () => (await chat(gw, 'dbm-1b')).status === 400, 10000), 'gone after /model/delete');
      const again = await A('POST', '/model/delete', { id: 'dbm-1-id' });
      assert.equal(again.status, 400);
      assert.equal(again.json.error.message, "{'error': 'Model with id=dbm-1-id not found in db'}");
    });

    test('config models are not edited; bad input refused; non-admin 403', async () => {
      const cfgId = (await A('GET', '/v2/model/info?model=priced')).json.data[0].model_info.id;
      const u = await A('POST', '/model/update', { model_info: { id: cfgId }, litellm_params: { api_base: 'http://x' } });
      assert.equal(u.status, 400);
      assert.match(u.json.error.message, /Can't edit model\. Model in config\./);
      const p = await A('PATCH', `/model/${cfgId}/update`, { model_name: 'x' });
      assert.equal(p.status, 400);
      const dup = await A('POST', '/model/new', { model_name: 'x', litellm_params: { model: 'openai/x', api_base: mock.base }, model_info: { id: cfgId } });
      assert.equal(dup.status, 400, dup.text);
      const nf = await A('PATCH', '/model/no-such-id/update', { model_name: 'x' });
      assert.equal(nf.status, 404, nf.text);
      // missing fields, unknown provider, wrong types, not JSON
      assert.equal((await A('POST', '/model/new', { litellm_params: { model: 'openai/x' } })).status, 422);
      assert.equal((await A('POST', '/model/new', { model_name: 'x', litellm_params: {} })).status, 422);
      assert.equal((await A('POST', '/model/new', { model_name: 'x', litellm_params: 'openai/x' })).status, 422);
      const bad = await A('POST', '/model/new', { model_name: 'x', litellm_params: { model: 'nosuchprovider/x' } });
      assert.equal(bad.status, 400, bad.text);
      assert.match(bad.json.error.message, /provider 'nosuchprovider'/);
      const raw = await fetch(`${gw.url}/model/new`, { method: 'POST', headers: { authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json' }, body: '{"model_name":' });
      assert.equal(raw.status, 422);
      // escaped and duplicate keys: JSON's meaning (the last wins), validated as such
      const esc = await fetch(`${gw.url}/model/new`, { method: 'POST', headers: { authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json' },
        body: `{"model_name":"esc-m","litellm_params":{"model":"openai/x","\\u006dodel":"bogus/y"},"model_info":{"id":"esc-id"}}` });
      assert.equal(esc.status, 400, await esc.text());
      const huge = await A('POST', '/model/new', { model_name: 'h', litellm_params: { model: 'openai/h', pad: 'x'.repeat(40 << 20) } });
      assert.ok(huge.status === 413 || huge.status === 400, `huge body: ${huge.status}`);
      // a non-admin key
      const k = await A('POST', '/key/generate', {});
      assert.equal(k.status, 200, k.text);
      const na = await api(gw.url, k.json.key, 'POST', '/model/new', { model_name: 'x', litellm_params: { model: 'openai/x' } });
      assert.equal(na.status, 401, na.text); // LiteLLM's answer for a non-admin on an admin route
      const nd = await api(gw.url, k.json.key, 'POST', '/model/delete', { id: 'x' });
      assert.equal(nd.status, 401, nd.text);
      assert.equal((await sql(`SELECT model_id FROM "LiteLLM_ProxyModelTable"`)).length, 0);
    });

    test('a row LiteLLM wrote (secretbox and v3:gcm) loads and answers; a bad row is skipped', async () => {
      const enc = async (v, f) => litellmEncrypt(v, MASTER_KEY, f);
      const lp1 = { model: await enc('openai/lite-up', 'nacl'), api_base: await enc(mock.base, 'nacl'), api_key: await enc('sk-lite-key', 'nacl') };
      const lp2 = { model: await enc('openai/lite-up2', 'v3'), api_base: await enc(mock.base, 'v3'), api_key: 'plain-kept-as-is' };
      const q = (o) => JSON.stringify(o).replace(/'/g, "''");
      await sql(`INSERT INTO "LiteLLM_ProxyModelTable" (model_id, model_name, litellm_params, model_info, created_by, updated_by) VALUES ('lite-1', 'lite-a', '${q(lp1)}', '{"id":"lite-1"}', 'litellm', 'litellm')`);
      await sql(`INSERT INTO "LiteLLM_ProxyModelTable" (model_id, model_name, litellm_params, model_info, created_by, updated_by) VALUES ('lite-2', 'lite-b', '${q(lp2)}', null, 'litellm', 'litellm')`);
      await sql(`INSERT INTO "LiteLLM_ProxyModelTable" (model_id, model_name, litellm_params, model_info, created_by, updated_by) VALUES ('bad-row', 'bad', '{"model":"nosuchprovider/zz"}', null, 'litellm', 'litellm')`);
      // the 5 s poll finds them
      assert.ok(await until(async () => (await chat(gw, 'lite-a')).status === 200 && (await chat(gw, 'lite-b')).status === 200, 15000),
        'rows LiteLLM wrote are served');
      const auth = (await mock.requests()).filter((q2) => JSON.parse(q2.body).model === 'lite-up').pop().headers.authorization;
      assert.equal(auth, 'Bearer sk-lite-key');
      assert.match(gw.log(), /database model bad-row skipped/);
      assert.equal((await chat(gw, 'priced')).status, 200); // the config's models are untouched
      await sql(`DELETE FROM "LiteLLM_ProxyModelTable"`);
      assert.ok(await until(async () => (await chat(gw, 'lite-a')).status === 400, 15000));
    });

    test('litellm_credential_name resolves against LiteLLM_CredentialsTable', async () => {
      const c = await A('POST', '/credentials', { credential_name: 'dbm-cred', credential_values: { api_key: 'sk-from-cred', api_base: mock.base }, credential_info: {} });
      assert.equal(c.status, 200, c.text);
      const r = await A('POST', '/model/new', { model_name: 'cred-m', litellm_params: { model: 'openai/cred-up', litellm_credential_name: 'dbm-cred' }, model_info: { id: 'cred-id' } });
      assert.equal(r.status, 200, r.text);
      assert.ok(await until(async () => (await chat(gw, 'cred-m')).status === 200, 10000), 'served with the credential');
      const auth = (await mock.requests()).filter((q) => JSON.parse(q.body).model === 'cred-up').pop().headers.authorization;
      assert.equal(auth, 'Bearer sk-from-cred');
      assert.equal((await A('POST', '/model/delete', { id: 'cred-id' })).status, 200);
    });

    test('a restart serves the rows before its first request; SIGHUP keeps them', async () => {
      const r = await A('POST', '/model/new', { model_name: 'keep-m', litellm_params: { model: 'openai/keep-up', api_base: mock.base, api_key: 'sk-k' } });
      assert.equal(r.status, 200, r.text);
      assert.ok(await until(async () => (await chat(gw, 'keep-m')).status === 200, 10000));
      gw.proc.kill('SIGHUP');
      assert.ok(await until(() => /config reloaded/.test(gw.log()), 10000));
      assert.equal((await chat(gw, 'keep-m')).status, 200);
      const env = backend === 'sqlite' ? { SWITCHYARD_DB: path.join(gw.dir, 'switchyard.db') } : {};
      await gw.stop();
      gw = await startGateway(config(dbUrl), { env });
      assert.equal((await chat(gw, 'keep-m')).status, 200); // at once, no wait
      assert.equal((await A('POST', '/model/delete', { id: r.json.model_id })).status, 200);
    });
  });
}

describe('store_model_in_db off', () => {
  let gw;
  before(async () => { gw = await startGateway(config(null, '')); });
  after(async () => { await gw?.stop(); });
  test('the routes answer LiteLLM\'s error and no row is served', async () => {
    for (const [m, p, b] of [['POST', '/model/new', { model_name: 'x', litellm_params: { model: 'openai/x' } }],
      ['POST', '/model/update', { model_info: { id: 'x' }, litellm_params: { model: 'openai/x' } }],
      ['POST', '/model/delete', { id: 'x' }], ['PATCH', '/model/x/update', { model_name: 'y' }]]) {
      const r = await api(gw.url, MASTER_KEY, m, p, b);
      assert.equal(r.status, 500, `${p}: ${r.text}`);
      assert.equal(r.json.error.message, "{'error': \"Set `'STORE_MODEL_IN_DB='True'` in your env to enable this feature.\"}");
    }
  });
});

describe('two instances on one PostgreSQL', () => {
  let redis, a, b, c, dbUrl;
  before(async () => {
    redis = await startRedis();
    dbUrl = await pg.createDb('db_models_two');
    const redisConf = `router_settings:\n  redis_host: 127.0.0.1\n  redis_port: ${redis.port}\n`;
    a = await startGateway(config(dbUrl) + redisConf);
    b = await startGateway(config(dbUrl) + redisConf);
    c = await startGateway(config(dbUrl)); // no Redis: the poll
  });
  after(async () => { await a?.stop(); await b?.stop(); await c?.stop(); await redis?.stop(); });

  test('A adds, B (Redis) and C (poll) serve within seconds; A deletes, both stop', async () => {
    const r = await api(a.url, MASTER_KEY, 'POST', '/model/new', { model_name: 'shared-m', litellm_params: { model: 'openai/shared-up', api_base: mock.base, api_key: 'sk-s' } });
    assert.equal(r.status, 200, r.text);
    assert.ok(await until(async () => (await chat(b, 'shared-m')).status === 200, 10000), 'B serves it');
    assert.ok(await until(async () => (await chat(c, 'shared-m')).status === 200, 15000), 'C serves it');
    assert.equal((await api(b.url, MASTER_KEY, 'GET', '/v2/model/info?model=shared-m')).json.data[0].model_info.db_model, true);
    assert.equal((await api(a.url, MASTER_KEY, 'POST', '/model/delete', { id: r.json.model_id })).status, 200);
    assert.ok(await until(async () => (await chat(b, 'shared-m')).status === 400, 10000));
    assert.ok(await until(async () => (await chat(c, 'shared-m')).status === 400, 15000));
  });

  test('a deployment in cooldown shows it in /model/info', async () => {
    const r = await api(a.url, MASTER_KEY, 'POST', '/model/new', { model_name: 'cool-m', litellm_params: { model: 'openai/cool-up', api_base: 'http://127.0.0.1:9/v1', api_key: 'sk-c' }, model_info: { id: 'cool-id' } });
    assert.equal(r.status, 200, r.text);
    const good = await api(a.url, MASTER_KEY, 'POST', '/model/new', { model_name: 'cool-m', litellm_params: { model: 'openai/cool-ok', api_base: mock.base, api_key: 'sk-c' }, model_info: { id: 'cool-ok-id' } });
    assert.equal(good.status, 200, good.text);
    assert.ok(await until(async () => (await api(a.url, MASTER_KEY, 'GET', '/v2/model/info?model=cool-m')).json.data.length === 2, 10000));
    // the refused deployment fails (the group retries on the other), then cools down
    assert.ok(await until(async () => {
      await chat(a, 'cool-m');
      return (await api(a.url, MASTER_KEY, 'GET', '/model/info?litellm_model_id=cool-id')).json.data[0].model_info.switchyard_state.in_cooldown;
    }, 15000), 'cooled down');
    const st = (await api(a.url, MASTER_KEY, 'GET', '/model/info?litellm_model_id=cool-id')).json.data[0].model_info.switchyard_state;
    assert.ok(st.failures >= 1, JSON.stringify(st));
    assert.equal(st.in_cooldown, true, JSON.stringify(st));
    assert.match(st.cooldown_until, /^\d{4}-\d\d-\d\dT/);
    assert.equal((await api(a.url, MASTER_KEY, 'POST', '/model/delete', { id: 'cool-id' })).status, 200);
    assert.equal((await api(a.url, MASTER_KEY, 'POST', '/model/delete', { id: 'cool-ok-id' })).status, 200);
  });

  test('no request dropped while models change under load', async () => {
    let stop = false;
    const statuses = [];
    const loop = (async () => {
      while (!stop) {
        const rs = await Promise.all([chat(b, 'priced'), chat(b, 'priced'), chat(a, 'priced')]);
        for (const x of rs) statuses.push(x.status);
      }
    })();
    for (let i = 0; i < 6; i++) {
      const r = await api(a.url, MASTER_KEY, 'POST', '/model/new', { model_name: `churn-${i}`, litellm_params: { model: 'openai/churn', api_base: mock.base, api_key: 'sk-c' } });
      assert.equal(r.status, 200, r.text);
      if (i % 2) assert.equal((await api(a.url, MASTER_KEY, 'POST', '/model/delete', { id: r.json.model_id })).status, 200);
      await new Promise((res) => setTimeout(res, 300));
    }
    stop = true;
    await loop;
    assert.ok(statuses.length > 10, `requests made: ${statuses.length}`);
    assert.deepEqual([...new Set(statuses)], [200]);
  });
});
