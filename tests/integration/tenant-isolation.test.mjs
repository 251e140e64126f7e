// tenant-isolation.test.mjs - stored state never leaks across tenants (issue 19):
// native and translated Responses, files, batches and the response cache, from
// the side of a key that knows (or guesses) another tenant's ids.
//
//   keys        A1 team tA user uA1   A2 team tA user uA2   A3 team tA user uA1 (A1's user)
//               B  team tB user uB    M  the master key
//   rule        responses (native) / files / batches: same key or same user_id (LiteLLM's
//               managed files: created_by); translated responses: the key that made them;
//               admins everything; a foreign or unknown id is the same 404 (400 for
//               previous_response_id / input_file_id), never a 403
//   cache       switchyard_scope global (LiteLLM's: shared), team, key
//
// Run on SQLite (the default) and on PostgreSQL ("SwitchyardObject" rows).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MASTER_KEY, assertErrorShape, keysConfig, startGateway, startMock } from '../lib/harness.mjs';
import { admin, call, genKey } from '../lib/limits.mjs';
import { startPostgres } from '../lib/pg.mjs';

let mock;
before(async () => { mock = await startMock(); });
after(async () => { await mock?.stop(); });

const bearer = (k) => ({ authorization: `Bearer ${k}` });
let nonceN = 0;
const nonce = (tag) => `${tag}${process.pid}x${Date.now().toString(36)}x${++nonceN}`;

function config(databaseUrl) {
  return keysConfig(mock.base, {
    databaseUrl,
    extraModels: `  - model_name: chat-only
    litellm_params: {model: hosted_vllm/qwen, api_base: "${mock.base}", api_key: sk-up}`,
  });
}

function multipart(fields, boundary = 'TeNaNtBoUnDaRy') {
  let s = '';
  for (const [name, v] of fields) {
    if (typeof v === 'object') {
      s += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${v.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n${v.data}\r\n`;
    } else {
      s += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${v}\r\n`;
    }
  }
  return { body: `${s}--${boundary}--\r\n`, type: `multipart/form-data; boundary=${boundary}` };
}

async function upload(url, key, data) {
  const m = multipart([['purpose', 'batch'], ['file', { filename: 'in.jsonl', data }]]);
  const r = await call(url, '/v1/files', m.body, { ...bearer(key), 'content-type': m.type });
  assert.equal(r.status, 200, r.text);
  assert.match(r.json.id, /^file-/);
  return r.json.id;
}

const get = (url, key, p, method = 'GET') => call(url, p, undefined, key ? bearer(key) : {}, { method });
const post = (url, key, p, body) => call(url, p, body, key ? bearer(key) : {});
const upstream = async (part, needle = '') =>
  (await mock.requests()).filter((q) => q.path.split('?')[0].endsWith(part) && (q.body || '').includes(needle));

function decodeId(id) {
  const s = Buffer.from(id.slice(5), 'base64').toString('utf8');
  const m = /^litellm:custom_llm_provider:([^;]+);model_id:([^;]*);response_id:(.+)$/.exec(s);
  assert.ok(m, `not an encoded id: ${id}`);
  return { provider: m[1], modelId: m[2], responseId: m[3] };
}
const encodeId = (provider, modelId, inner) =>
  `resp_${Buffer.from(`litellm:custom_llm_provider:${provider};model_id:${modelId};response_id:${inner}`).toString('base64')}`;

/** The tenants of one gateway. */
async function tenants(url) {
  const t = nonce('t');
  for (const team of [`${t}A`, `${t}B`]) {
    const r = await admin(url, 'POST', '/team/new', { team_id: team });
    assert.equal(r.status, 200, r.text);
  }
  const k = async (team, user) => (await genKey(url, { team_id: `${t}${team}`, user_id: `${t}${user}` })).key;
  return { A1: await k('A', 'uA1'), A2: await k('A', 'uA2'), A3: await k('A', 'uA1'), B: await k('B', 'uB'), M: MASTER_KEY };
}

function suite(name, dbUrlOf) {
  describe(name, () => {
    let gw, T, dbUrl;
    before(async () => {
      dbUrl = await dbUrlOf();
      gw = await startGateway(config(dbUrl));
      T = await tenants(gw.url);
    });
    after(async () => { if (gw) assert.equal(await gw.stop(), 0); });

    test('native response: only its key, its user and admins read, delete or continue it', async () => {
      const w = nonce('native');
      const r = await post(gw.url, T.A1, '/v1/responses', { model: 'gpt-4o', input: w });
      assert.equal(r.status, 200, r.text);
      const id = r.json.id;
      const inner = decodeId(id).responseId;
      assert.equal(decodeId(id).provider, 'openai');
      // a made-up id on the same deployment: what a foreign id must look like
      const unknown = encodeId('openai', decodeId(id).modelId, `resp_${'ab'.repeat(24)}`);
      const u = await get(gw.url, T.B, `/v1/responses/${unknown}`);
      assertErrorShape(assert, u, 404);
      for (const who of ['B', 'A2']) {
        const before = (await upstream(`/responses/${inner}`)).length;
        const g = await get(gw.url, T[who], `/v1/responses/${id}`);
        assertErrorShape(assert, g, 404);
        assert.equal(g.json.error.message.replace(id, 'X'), u.json.error.message.replace(unknown, 'X'), 'same as an unknown id');
        assertErrorShape(assert, await get(gw.url, T[who], `/v1/responses/${id}/input_items`), 404);
        assertErrorShape(assert, await get(gw.url, T[who], `/v1/responses/${encodeURIComponent(id)}`), 404);
        assertErrorShape(assert, await get(gw.url, T[who], `/v1/responses/${inner}`), 404); // the raw upstream id
        assertErrorShape(assert, await get(gw.url, T[who], `/v1/responses/${id}`, 'DELETE'), 404);
        assertErrorShape(assert, await post(gw.url, T[who], `/v1/responses/${id}/cancel`, {}), 404);
        // the raw upstream id and the encoded one as previous_response_id
        for (const prev of [id, inner, encodeId('openai', 'no-such-model-id', inner)]) {
          const x = nonce('steal');
          const p = await post(gw.url, T[who], '/v1/responses', { model: 'gpt-4o', input: x, previous_response_id: prev });
          assertErrorShape(assert, p, 400);
          assert.equal(p.json.error.param, 'previous_response_id', p.text);
          assert.equal((await upstream('/responses', x)).length, 0, 'nothing went upstream');
        }
        assert.equal((await upstream(`/responses/${inner}`)).length, before, 'no by-id call went upstream');
      }
      // another case of the id is another id
      const flipped = id.slice(0, 5) + id.slice(5).replace(/[a-z]/, (ch) => ch.toUpperCase());
      if (flipped !== id) assert.notEqual((await get(gw.url, T.B, `/v1/responses/${flipped}`)).status, 200);
      // the owner, another key of the same user, the master key
      for (const who of ['A1', 'A3', 'M']) {
        const g = await get(gw.url, T[who], `/v1/responses/${id}`);
        assert.equal(g.status, 200, `${who}: ${g.text}`);
        assert.equal(g.json.id, id);
      }
      const c = await post(gw.url, T.A3, '/v1/responses', { model: 'gpt-4o', input: 'more', previous_response_id: id });
      assert.equal(c.status, 200, c.text);
      const d = await get(gw.url, T.A1, `/v1/responses/${id}`, 'DELETE');
      assert.equal(d.status, 200, d.text);
    });

    test('native stream: the id from response.created is recorded as the caller\'s', async () => {
      const r = await post(gw.url, T.A1, '/v1/responses', { model: 'gpt-4o', input: nonce('s'), stream: true });
      assert.equal(r.status, 200, r.text);
      const m = /"id":"(resp_[A-Za-z0-9_=+/-]+)"/.exec(r.text);
      assert.ok(m, r.text.slice(0, 300));
      assertErrorShape(assert, await get(gw.url, T.B, `/v1/responses/${m[1]}`), 404);
      assert.equal((await get(gw.url, T.A1, `/v1/responses/${m[1]}`)).status, 200);
    });

    test('translated response: the key that made it (not its team, not its user) and admins', async () => {
      const r = await post(gw.url, T.A1, '/v1/responses', { model: 'chat-only', input: nonce('tr') });
      assert.equal(r.status, 200, r.text);
      const id = r.json.id;
      for (const who of ['B', 'A2', 'A3']) {
        assertErrorShape(assert, await get(gw.url, T[who], `/v1/responses/${id}`), 404);
        const p = await post(gw.url, T[who], '/v1/responses', { model: 'chat-only', input: 'x', previous_response_id: id });
        assertErrorShape(assert, p, 400);
        // the translated id moved onto a native deployment's model id
        const moved = encodeId('openai', (await modelIdOf(gw.url, 'gpt-4o')), decodeId(id).responseId);
        const q = await post(gw.url, T[who], '/v1/responses', { model: 'gpt-4o', input: 'x', previous_response_id: moved });
        assertErrorShape(assert, q, 400);
      }
      assert.equal((await get(gw.url, T.A1, `/v1/responses/${id}`)).status, 200);
      assert.equal((await get(gw.url, T.M, `/v1/responses/${id}`)).status, 200);
    });

    test('files: by id, content, delete and list only for the owner, its user and admins', async () => {
      const fa = await upload(gw.url, T.A1, `{"a":"${nonce('fa')}"}\n`);
      const fb = await upload(gw.url, T.B, `{"b":"${nonce('fb')}"}\n`);
      const unknown = await get(gw.url, T.B, '/v1/files/file-000000000000000000000000');
      assertErrorShape(assert, unknown, 404);
      for (const who of ['B', 'A2']) {
        const before = (await upstream(`/files/${fa}`)).length + (await upstream(`/files/${fa}/content`)).length;
        const g = await get(gw.url, T[who], `/v1/files/${fa}`);
        assertErrorShape(assert, g, 404);
        assert.equal(g.json.error.message.replace(fa, 'X'), unknown.json.error.message.replace('file-000000000000000000000000', 'X'));
        assertErrorShape(assert, await get(gw.url, T[who], `/v1/files/${fa}/content`), 404);
        assertErrorShape(assert, await get(gw.url, T[who], `/v1/files/${fa}`, 'DELETE'), 404);
        assertErrorShape(assert, await get(gw.url, T[who], `/v1/files/${fa.toUpperCase()}`), 404);
        assertErrorShape(assert, await get(gw.url, T[who], `/v1/files/${fa.replace('-', '%2D')}`), 404);
        assert.equal((await upstream(`/files/${fa}`)).length + (await upstream(`/files/${fa}/content`)).length, before,
          'nothing went upstream');
      }
      for (const who of ['A1', 'A3', 'M']) {
        const g = await get(gw.url, T[who], `/v1/files/${fa}`);
        assert.equal(g.status, 200, `${who}: ${g.text}`);
        assert.equal(g.json.id, fa);
        const c = await get(gw.url, T[who], `/v1/files/${fa}/content`);
        assert.equal(c.status, 200, c.text);
      }
      const ids = async (who) => {
        const l = await get(gw.url, T[who], '/v1/files?limit=1000');
        assert.equal(l.status, 200, l.text);
        assert.equal(l.json.object, 'list');
        return l.json.data.map((f) => f.id);
      };
      let l = await ids('B');
      assert.ok(l.includes(fb) && !l.includes(fa), `B lists ${l}`);
      l = await ids('A2');
      assert.ok(!l.includes(fb) && !l.includes(fa), `A2 lists ${l}`);
      for (const who of ['A1', 'A3']) {
        l = await ids(who);
        assert.ok(l.includes(fa) && !l.includes(fb), `${who} lists ${l}`);
      }
      l = await ids('M');
      assert.ok(l.includes(fa) && l.includes(fb), `M lists ${l}`);
      const first = await get(gw.url, T.B, '/v1/files?limit=1000');
      assert.equal(first.json.first_id, first.json.data[0]?.id ?? null);
      assert.equal(first.json.last_id, first.json.data.at(-1)?.id ?? null);
      // a file id inside a chat or Responses request: only the caller's own
      const chatWith = (f, raw = false) => {
        const msg = { role: 'user', content: [{ type: 'text', text: 'what is in it?' }, { type: 'file', file: { file_id: f } }] };
        const body = JSON.stringify({ model: 'gpt-4o', messages: [msg] });
        return raw ? body.replace('"file_id"', '"file\\u005fid"') : body;
      };
      for (const who of ['B', 'A2']) {
        for (const raw of [false, true]) {
          const x = await call(gw.url, '/v1/chat/completions', chatWith(fa, raw), bearer(T[who]));
          assertErrorShape(assert, x, 400);
          assert.equal(x.json.error.param, 'file_id', x.text);
        }
        const y = await post(gw.url, T[who], '/v1/responses', {
          model: 'chat-only', input: [{ role: 'user', content: [{ type: 'input_file', file_id: fa }] }] });
        assertErrorShape(assert, y, 400);
        const z = await post(gw.url, T[who], '/v1/responses', {
          model: 'gpt-4o', input: [{ role: 'user', content: [{ type: 'input_file', file_id: fa }] }] });
        assertErrorShape(assert, z, 400);
      }
      for (const who of ['A1', 'A3', 'M']) {
        const x = await call(gw.url, '/v1/chat/completions', chatWith(fa), bearer(T[who]));
        assert.notEqual(x.json?.error?.param, 'file_id', `${who}: ${x.text}`);
      }
      // the owner deletes it
      assert.equal((await get(gw.url, T.A1, `/v1/files/${fa}`, 'DELETE')).status, 200);
    });

    test('batches: a foreign input file is refused; by id, cancel and list only for the owner and admins', async () => {
      const fa = await upload(gw.url, T.A1, `{"custom_id":"1","method":"POST","url":"/v1/chat/completions","body":{}}\n`);
      const body = (f) => ({ input_file_id: f, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const before = (await upstream('/batches')).length;
      for (const who of ['B', 'A2']) {
        const r = await post(gw.url, T[who], '/v1/batches', body(fa));
        assertErrorShape(assert, r, 400);
        assert.equal(r.json.error.param, 'input_file_id', r.text);
      }
      // the last of two input_file_id members is the one an upstream reads: it is the one checked
      const fb = await upload(gw.url, T.B, 'b\n');
      const dup = `{"input_file_id":"${fb}","input_file_id":"${fa}","endpoint":"/v1/chat/completions","completion_window":"24h"}`;
      const r2 = await call(gw.url, '/v1/batches', dup, bearer(T.B));
      assertErrorShape(assert, r2, 400);
      const esc = `{"input\\u005ffile_id":"${fa}","endpoint":"/v1/chat/completions","completion_window":"24h"}`;
      assertErrorShape(assert, await call(gw.url, '/v1/batches', esc, bearer(T.B)), 400);
      assert.equal((await upstream('/batches')).length, before, 'no batch went upstream');
      const b = await post(gw.url, T.A1, '/v1/batches', body(fa));
      assert.equal(b.status, 200, b.text);
      const bid = b.json.id;
      for (const who of ['B', 'A2']) {
        assertErrorShape(assert, await get(gw.url, T[who], `/v1/batches/${bid}`), 404);
        assertErrorShape(assert, await post(gw.url, T[who], `/v1/batches/${bid}/cancel`, {}), 404);
        const l = await get(gw.url, T[who], '/v1/batches?limit=100');
        assert.equal(l.status, 200, l.text);
        assert.ok(!l.json.data.some((x) => x.id === bid), l.text.slice(0, 300));
      }
      const g = await get(gw.url, T.A1, `/v1/batches/${bid}`);
      assert.equal(g.status, 200, g.text);
      assert.equal(g.json.status, 'validating', 'B\'s cancel did not reach it');
      for (const who of ['A3', 'M']) {
        const l = await get(gw.url, T[who], '/v1/batches?limit=100');
        assert.ok(l.json.data.some((x) => x.id === bid), `${who}: ${l.text.slice(0, 300)}`);
      }
      const c = await post(gw.url, T.A3, `/v1/batches/${bid}/cancel`, {});
      assert.equal(c.status, 200, c.text);
      // the master key may use any file
      const m = await post(gw.url, T.M, '/v1/batches', body(fa));
      assert.equal(m.status, 200, m.text);
    });

    test('a deleted key\'s objects: its user\'s other keys and admins keep them, the deleted key is refused', async () => {
      const K = (await genKey(gw.url, {})).key;
      const f = await upload(gw.url, K, 'x\n');
      const r = await admin(gw.url, 'POST', '/key/delete', { keys: [K] });
      assert.equal(r.status, 200, r.text);
      assert.equal((await get(gw.url, K, `/v1/files/${f}`)).status, 401);
      assertErrorShape(assert, await get(gw.url, T.B, `/v1/files/${f}`), 404);
      assert.equal((await get(gw.url, T.M, `/v1/files/${f}`)).status, 200);
    });

    if (name.includes('PostgreSQL')) {
      test('the owners are rows of "SwitchyardObject"', async () => {
        const f = await upload(gw.url, T.A1, 'pg\n');
        const rows = await pgq(`SELECT kind, token, user_id, team_id FROM "SwitchyardObject" WHERE id = '${f}'`);
        assert.equal(rows.length, 1);
        assert.equal(rows[0].kind, 'file');
        assert.match(rows[0].token, /^[0-9a-f]{64}$/);
        assert.match(rows[0].user_id, /uA1$/);
        assert.match(rows[0].team_id, /A$/);
      });
    }
  });
}

async function modelIdOf(url, group) {
  const r = await admin(url, 'GET', '/v1/model/info');
  assert.equal(r.status, 200, r.text);
  const m = r.json.data.find((d) => d.model_name === group);
  assert.ok(m, r.text.slice(0, 300));
  return m.model_info.id;
}

let pg, pgUrl;
const pgq = (sql) => pg.psql(sql, pgUrl);
suite('SQLite', async () => null);
suite('PostgreSQL', async () => {
  pg = await startPostgres();
  pgUrl = await pg.createDb('tenant_isolation');
  return pgUrl;
});
after(async () => { await pg?.stop(); });

// ---------------------------------------------------------------------------
// the response cache
describe('response cache scope', () => {
  const cacheConfig = (scope) => config(null) + `
litellm_settings:
  cache: true
  cache_params:
    type: local${scope ? `\n    switchyard_scope: ${scope}` : ''}
`;
  const ask = async (url, key, content, extra = {}) => {
    const r = await post(url, key, '/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content }], ...extra });
    assert.equal(r.status, 200, r.text);
    return { hit: r.headers.get('x-litellm-cache-hit') === 'True', key: r.headers.get('x-litellm-cache-key'), body: r.json };
  };

  for (const [scope, shares] of [[null, { A2: true, A3: true, B: true }], ['team', { A2: true, A3: true, B: false }],
    ['key', { A2: false, A3: false, B: false }]]) {
    test(`switchyard_scope ${scope || '(default: global, as LiteLLM)'}`, async () => {
      const gw = await startGateway(cacheConfig(scope));
      try {
        const T = await tenants(gw.url);
        const q = nonce('cache');
        const a = await ask(gw.url, T.A1, q);
        assert.equal(a.hit, false);
        assert.equal((await ask(gw.url, T.A1, q)).hit, true, 'the key hits its own entry');
        for (const who of ['A2', 'A3', 'B']) {
          const r = await ask(gw.url, T[who], q);
          assert.equal(r.hit, shares[who], `${who} ${shares[who] ? 'shares' : 'does not share'} A1's entry`);
          if (!shares[who]) assert.notEqual(r.key, a.key);
        }
        // a namespace does not reach another tenant's entry
        const n = nonce('ns');
        const an = await ask(gw.url, T.A1, n, { cache: { namespace: 'shared-ns' } });
        const bn = await ask(gw.url, T.B, n, { cache: { namespace: 'shared-ns' } });
        assert.equal(bn.hit, scope === null, 'namespace');
        if (scope) assert.notEqual(bn.key, an.key);
        if (scope) { // a cache key sent as a request header names nothing
          const h = await call(gw.url, '/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: nonce('other') }] },
            { ...bearer(T.B), 'x-litellm-cache-key': a.key, 'cache-control': `s-maxage=600` });
          assert.equal(h.status, 200, h.text);
          assert.notEqual(h.headers.get('x-litellm-cache-hit'), 'True');
        }
        // cache controls stay admin-only
        const del = await post(gw.url, T.B, '/cache/delete', { keys: [a.key] });
        assert.equal(del.status, 403, del.text);
        assert.equal((await post(gw.url, T.B, '/cache/flushall', {})).status, 403);
        assert.equal((await ask(gw.url, T.A1, q)).hit, true, 'still cached');
      } finally {
        assert.equal(await gw.stop(), 0);
      }
    });
  }

  test('a bad switchyard_scope is a config error', async () => {
    await assert.rejects(startGateway(cacheConfig('tenant')));
  });
});
