// credentials.test.mjs - LiteLLM's /credentials routes on
// LiteLLM_CredentialsTable (src/admin/credentials.c), on SQLite and
// PostgreSQL: create, list, read by name and by model, patch, delete, as
// LiteLLM answers them; values masked in every answer and encrypted at rest
// exactly as LiteLLM encrypts them (checked by decrypting the stored text
// with LiteLLM's own scheme, tests/integration/fixtures/litellm_encrypt.py);
// a value LiteLLM wrote (either format) read back; LITELLM_SALT_KEY over the
// master key; non-admins refused at the gate; duplicate names, escaped and
// duplicate JSON keys, wrong types and a huge body; a config deployment that
// names a credential of credential_list reaches the upstream with its key.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { MASTER_KEY, api, chatBody, keysConfig, postJSON, root, startGateway, startMock } from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

const run = promisify(execFile);
const ENC = path.join(root, 'tests/integration/fixtures/litellm_encrypt.py');
const SALT = 'salt-key-for-credentials-test';

async function litellmDecrypt(value, salt) {
  try {
    const { stdout } = await run(ENC, ['--salt', salt, '--decrypt', value], { timeout: 60000 });
    return stdout.replace(/\n$/, '');
  } catch (e) {
    if (e.code === 1) return null; // the script's "does not decrypt"
    throw e; // anything else (a timeout, python3-nacl missing) is a broken test bed, not an answer
  }
}
async function litellmEncrypt(value, salt, format) {
  const { stdout } = await run(ENC, ['--salt', salt, '--format', format, value], { timeout: 60000 });
  return stdout.trim();
}

let mock, pg;
before(async () => { mock = await startMock(); pg = await startPostgres(); });
after(async () => { await mock?.stop(); await pg?.stop(); });

const config = (databaseUrl) => keysConfig(mock.base, {
  databaseUrl,
  extraModels: `  - model_name: via-cred
    litellm_params: {model: openai/via-cred, litellm_credential_name: cfg-cred}
    model_info: {id: via-cred-id}`,
}) + `credential_list:
  - credential_name: cfg-cred
    credential_values: {api_key: sk-from-credential-list, api_base: "${mock.base}"}
    credential_info: {description: from the config file}
`;

for (const backend of ['sqlite', 'postgres']) {
  describe(`credentials on ${backend}`, () => {
    let gw, dbUrl, salt;
    const A = (method, p, body) => api(gw.url, MASTER_KEY, method, p, body);
    // the stored row, read past the gateway
    async function stored(name) {
      if (backend === 'postgres') {
        const rows = await pg.psql(`SELECT credential_values, credential_info, created_by FROM "LiteLLM_CredentialsTable" WHERE credential_name = '${name}'`, dbUrl);
        return rows[0] ?? null;
      }
      const { stdout } = await run('sqlite3', ['-json', path.join(gw.dir, 'switchyard.db'),
        `SELECT credential_values, credential_info, created_by FROM "LiteLLM_CredentialsTable" WHERE credential_name = '${name}'`],
      { timeout: 20000 });
      const rows = stdout.trim() ? JSON.parse(stdout) : [];
      if (!rows.length) return null;
      return { ...rows[0], credential_values: JSON.parse(rows[0].credential_values), credential_info: JSON.parse(rows[0].credential_info) };
    }
    async function storedInsert(name, values) {
      const v = JSON.stringify(values).replace(/'/g, "''");
      const sql = `INSERT INTO "LiteLLM_CredentialsTable" (credential_id, credential_name, credential_values, credential_info, created_by, updated_by) VALUES ('id-${name}', '${name}', '${v}', '{}', 'litellm', 'litellm')`;
      if (backend === 'postgres') await pg.psql(sql, dbUrl);
      else await run('sqlite3', [path.join(gw.dir, 'switchyard.db'), sql], { timeout: 20000 });
    }

    before(async () => {
      // SQLite: salted by the master key; PostgreSQL: by LITELLM_SALT_KEY
      dbUrl = backend === 'postgres' ? await pg.createDb('credentials_test') : null;
      salt = backend === 'postgres' ? SALT : MASTER_KEY;
      gw = await startGateway(config(dbUrl), { env: backend === 'postgres' ? { LITELLM_SALT_KEY: SALT } : {} });
    });
    after(async () => { await gw?.stop(); });

    test('POST /credentials stores each value encrypted as LiteLLM does; answers LiteLLM\'s message', async () => {
      const r = await A('POST', '/credentials', {
        credential_name: 'azure-prod',
        credential_values: { api_key: 'sk-azure-secret-9876', api_base: 'https://azure.example/v1', api_version: '2024-06-01', rpm: 5 },
        credential_info: { custom_llm_provider: 'azure', description: 'prod' },
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json, { success: true, message: 'Credential created successfully' });
      const row = await stored('azure-prod');
      assert.ok(row, 'row written');
      assert.deepEqual(row.credential_info, { custom_llm_provider: 'azure', description: 'prod' });
      assert.equal(row.created_by, 'default_user_id');
      const v = row.credential_values;
      for (const [k, plain] of Object.entries({ api_key: 'sk-azure-secret-9876', api_base: 'https://azure.example/v1', api_version: '2024-06-01' })) {
        assert.equal(typeof v[k], 'string');
        assert.ok(!v[k].includes(plain), `${k} stored in clear: ${v[k]}`);
        assert.match(v[k], /^[A-Za-z0-9_-]+=*$/, 'url-safe base64, as LiteLLM writes');
        assert.equal(await litellmDecrypt(v[k], salt), plain, `${k} decrypts with LiteLLM's scheme`);
        const other = salt === SALT ? MASTER_KEY : SALT;
        assert.equal(await litellmDecrypt(v[k], other), null, `${k} is not readable under another key`);
      }
      assert.equal(v.rpm, 5, 'a value that is not a string is stored as it is (LiteLLM)');
    });

    test('GET /credentials and /credentials/by_name mask secrets as LiteLLM\'s _get_masked_values', async () => {
      let r = await A('GET', '/credentials');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.success, true);
      const c = r.json.credentials.find((x) => x.credential_name === 'azure-prod');
      assert.deepEqual(c, {
        credential_name: 'azure-prod',
        credential_values: { api_key: 'sk****76', api_base: 'https://azure.example/v1', api_version: '2024-06-01', rpm: 5 },
        credential_info: { custom_llm_provider: 'azure', description: 'prod' },
      });
      assert.ok(!r.text.includes('sk-azure-secret-9876'));
      r = await A('GET', '/credentials/by_name/azure-prod');
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(Object.keys(r.json), ['credential_name', 'credential_info', 'credential_values']);
      assert.equal(r.json.credential_values.api_key, 'sk****76');
      for (const bad of ['%ff', 'a%00b', '%c3%28']) {
        // not text: the gateway refuses the path (400), or no credential has that name (404)
        r = await A('GET', `/credentials/by_name/${bad}`);
        assert.ok([400, 404].includes(r.status), `${bad}: ${r.text}`);
        r = await A('DELETE', `/credentials/${bad}`);
        assert.ok([400, 404].includes(r.status), `${bad}: ${r.text}`);
      }
      r = await A('GET', '/credentials/by_name/nope');
      assert.equal(r.status, 404, r.text);
      assert.deepEqual(r.json, { error: { message: 'Credential not found. Got credential name: nope', type: 'internal_server_error', param: 'None', code: '404' } });
    });

    test('values LiteLLM wrote (secretbox and v3:gcm) are read; a value under another key reads as null', async () => {
      await storedInsert('from-litellm', {
        api_key: await litellmEncrypt('sk-litellm-nacl-abcd', salt, 'nacl'),
        aws_secret_access_key: await litellmEncrypt('aws-secret-gcm-wxyz', salt, 'v3'),
        token: await litellmEncrypt('tok-other-key', 'not-the-salt', 'v3'),
        short_secret: await litellmEncrypt('abc', salt, 'v3'),
      });
      const r = await A('GET', '/credentials/by_name/from-litellm');
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.credential_values, {
        api_key: 'sk****cd', aws_secret_access_key: 'aw****yz', token: null, short_secret: '*****',
      });
    });

    test('a name with a slash is reached percent-encoded; unicode names round-trip', async () => {
      for (const name of ['team/a', 'clé-ü']) {
        let r = await A('POST', '/credentials', { credential_name: name, credential_values: { api_key: 'sk-1234567' }, credential_info: {} });
        assert.equal(r.status, 200, r.text);
        r = await A('GET', `/credentials/by_name/${encodeURIComponent(name)}`);
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.credential_name, name);
        r = await A('DELETE', `/credentials/${encodeURIComponent(name)}`);
        assert.equal(r.status, 200, r.text);
      }
    });

    test('PATCH merges values (encrypted) and info, renames; DELETE removes; unknown names 404', async () => {
      let r = await A('PATCH', '/credentials/azure-prod', { credential_values: { api_key: 'sk-rotated-5555' }, credential_info: { owner: 'ops' } });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json, { success: true, message: 'Credential updated successfully' });
      let row = await stored('azure-prod');
      assert.equal(await litellmDecrypt(row.credential_values.api_key, salt), 'sk-rotated-5555');
      assert.equal(await litellmDecrypt(row.credential_values.api_base, salt), 'https://azure.example/v1', 'untouched values kept');
      assert.deepEqual(row.credential_info, { custom_llm_provider: 'azure', description: 'prod', owner: 'ops' });
      r = await A('PATCH', '/credentials/azure-prod', { credential_name: 'azure-renamed' });
      assert.equal(r.status, 200, r.text);
      assert.equal(await stored('azure-prod'), null);
      assert.ok(await stored('azure-renamed'));
      r = await A('PATCH', '/credentials/nope', { credential_info: {} });
      assert.equal(r.status, 404, r.text);
      assert.equal(r.json.error.message, 'Credential not found in DB.');
      r = await A('DELETE', '/credentials/azure-renamed');
      assert.deepEqual(r.json, { success: true, message: 'Credential deleted successfully' });
      assert.equal(await stored('azure-renamed'), null);
      r = await A('DELETE', '/credentials/azure-renamed');
      assert.equal(r.status, 404, r.text);
    });

    test('duplicate names are refused, on create and on rename', async () => {
      const body = { credential_name: 'dup', credential_values: { api_key: 'sk-first-000' }, credential_info: {} };
      assert.equal((await A('POST', '/credentials', body)).status, 200);
      let r = await A('POST', '/credentials', { ...body, credential_values: { api_key: 'sk-second-111' } });
      assert.equal(r.status, 400, r.text);
      assert.match(r.json.error.message, /already exists/);
      assert.equal(await litellmDecrypt((await stored('dup')).credential_values.api_key, salt), 'sk-first-000', 'the first one kept');
      assert.equal((await A('POST', '/credentials', { ...body, credential_name: 'dup2' })).status, 200);
      r = await A('PATCH', '/credentials/dup2', { credential_name: 'dup' });
      assert.equal(r.status, 400, r.text);
      assert.ok(await stored('dup2'), 'a refused rename changes nothing');
    });

    test('bad bodies: LiteLLM\'s 422s; escaped and duplicate keys read as JSON says; a huge body does not hurt', async () => {
      let r = await A('POST', '/credentials', { credential_name: 'x', credential_info: {} });
      assert.equal(r.status, 422, r.text);
      assert.equal(r.json.detail[0].msg, 'Value error, Either credential_values or model_id must be set');
      r = await A('POST', '/credentials', { credential_name: 'x', credential_values: {}, credential_info: {} });
      assert.equal(r.status, 422, r.text);
      r = await A('POST', '/credentials', { credential_values: { api_key: 'k' }, credential_info: {} });
      assert.equal(r.status, 422, r.text);
      assert.deepEqual(r.json.detail[0].loc, ['body', 'credential_name']);
      r = await A('POST', '/credentials', { credential_name: 7, credential_values: { api_key: 'k' }, credential_info: {} });
      assert.equal(r.status, 422, r.text);
      r = await A('POST', '/credentials', { credential_name: 'x', credential_values: 'sk-not-a-dict', credential_info: {} });
      assert.equal(r.status, 422, r.text);
      r = await postJSON(`${gw.url}/credentials`, '{"credential_name": "x", "credential_values": {', { authorization: `Bearer ${MASTER_KEY}` });
      assert.equal(r.status, 422, r.text);
      // \u-escaped member names read as JSON says; a key given twice (escaped or not) is
      // refused, as every management body is (the gateway's rule against ambiguous JSON)
      r = await postJSON(`${gw.url}/credentials`,
        '{"credential\\u005fname": "esc", "credential_values": {"api\\u005fkey": "sk-escaped-1111"}, "credential_info": {}}',
        { authorization: `Bearer ${MASTER_KEY}` });
      assert.equal(r.status, 200, r.text);
      const row = await stored('esc');
      assert.deepEqual(Object.keys(row.credential_values), ['api_key']);
      assert.equal(await litellmDecrypt(row.credential_values.api_key, salt), 'sk-escaped-1111');
      r = await postJSON(`${gw.url}/credentials`,
        '{"credential_name": "twice", "credential_values": {"api_key": "sk-a-0000", "api\\u005fkey": "sk-b-1111"}, "credential_info": {}}',
        { authorization: `Bearer ${MASTER_KEY}` });
      assert.equal(r.status, 400, r.text);
      assert.match(r.json.error.message, /api_key/);
      assert.equal(await stored('twice'), null);
      // a body far past any credential
      const huge = { credential_name: 'huge', credential_values: { api_key: 'k'.repeat(64 << 20) }, credential_info: {} };
      r = await postJSON(`${gw.url}/credentials`, huge, { authorization: `Bearer ${MASTER_KEY}` }).catch((e) => ({ status: 0, text: String(e) }));
      assert.ok(r.status === 413 || r.status === 0 || r.status === 400, `${r.status} ${String(r.text).slice(0, 200)}`);
      assert.equal(await stored('huge'), null);
      assert.equal((await A('GET', '/credentials')).status, 200, 'still serving');
    });

    test('non-admins are refused at the gate, viewers may read (masked)', async () => {
      for (const [uid, role] of [['cred-user', 'internal_user'], ['cred-viewer', 'proxy_admin_viewer']]) {
        assert.equal((await A('POST', '/user/new', { user_id: uid, user_role: role })).status, 200);
      }
      const user = (await A('POST', '/key/generate', { user_id: 'cred-user' })).json.key;
      const viewer = (await A('POST', '/key/generate', { user_id: 'cred-viewer' })).json.key;
      const nouser = (await A('POST', '/key/generate', {})).json.key;
      for (const key of [user, nouser]) {
        for (const [m, p, b] of [['POST', '/credentials', { credential_name: 'evil', credential_values: { api_key: 'x' }, credential_info: {} }],
          ['GET', '/credentials'], ['GET', '/credentials/by_name/dup'], ['GET', '/credentials/by_model/via-cred-id'],
          ['PATCH', '/credentials/dup', { credential_values: { api_key: 'sk-stolen' } }], ['DELETE', '/credentials/dup']]) {
          const r = await api(gw.url, key, m, p, b);
          assert.equal(r.status, 401, `${m} ${p}: ${r.text}`);
          assert.match(r.json.error.message, /Only proxy admin/);
        }
      }
      let r = await api(gw.url, viewer, 'GET', '/credentials');
      assert.equal(r.status, 200, r.text);
      assert.ok(!r.text.includes('sk-first-000'));
      r = await api(gw.url, viewer, 'DELETE', '/credentials/dup');
      assert.equal(r.status, 401, r.text);
      assert.ok(await stored('dup'), 'nothing deleted');
      assert.equal(await stored('evil'), null);
      r = await api(gw.url, 'sk-not-a-key', 'GET', '/credentials');
      assert.equal(r.status, 401, r.text);
    });

    test('a config deployment naming a credential_list entry reaches the upstream with its key; by_model shows it masked', async () => {
      await mock.reset();
      const r = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('via-cred'), { authorization: `Bearer ${MASTER_KEY}` });
      assert.equal(r.status, 200, r.text);
      const q = (await mock.requests()).find((x) => x.path.includes('/chat/completions'));
      assert.ok(q, 'the upstream was called');
      assert.equal(q.headers.authorization, 'Bearer sk-from-credential-list');
      let b = await A('GET', '/credentials/by_model/via-cred-id');
      assert.equal(b.status, 200, b.text);
      assert.deepEqual(b.json, {
        credential_name: 'via-cred-credential-via-cred-id', credential_info: {},
        credential_values: { api_key: 'sk****st', api_base: mock.base },
      });
      b = await A('GET', '/credentials/by_model/no-such-id');
      assert.equal(b.status, 404, b.text);
      // a credential copied from a deployment (model_id) is stored encrypted
      b = await A('POST', '/credentials', { credential_name: 'copied', model_id: 'via-cred-id', credential_info: {} });
      assert.equal(b.status, 200, b.text);
      const row = await stored('copied');
      assert.equal(await litellmDecrypt(row.credential_values.api_key, salt), 'sk-from-credential-list');
      b = await A('POST', '/credentials', { credential_name: 'copied2', model_id: 'no-such-id', credential_info: {} });
      assert.equal(b.status, 404, b.text);
    });
  });
}
