// keys.test.mjs - virtual keys and LiteLLM's management API (issue 9), on the
// embedded SQLite database and on PostgreSQL (a throwaway cluster, pg.mjs):
// the admin round trips (keys, users, teams, customers, organizations,
// budgets, spend, model info) with LiteLLM's request/response JSON, and the
// checks before a call with LiteLLM's statuses and messages (unknown key,
// model access, blocked, expired, key / user / team / customer budgets).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  MASTER_KEY, api, chatBody, keysConfig, postJSON, sha256hex, sleep, startGateway, startMock,
} from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

let mock, pg;

before(async () => {
  mock = await startMock();
  pg = await startPostgres();
});
after(async () => {
  await mock?.stop();
  await pg?.stop();
});

// max_tokens 5 by default: a call without max_tokens reserves 4096 output
// tokens' worth (0.001 x 4096 = 4.096 on "priced") before it runs
const chat = (g, key, model = 'priced', extra = {}, headers = null) =>
  postJSON(`${g.url}/v1/chat/completions`, chatBody(model, { max_tokens: 5, ...extra }),
    headers || { authorization: `Bearer ${key}` });

/** LiteLLM's error object with status and (optionally) type / message pattern. */
function refused(r, status, type, re) {
  assert.equal(r.status, status, `want ${status}, got ${r.status}: ${r.text}`);
  assert.ok(r.json?.error, r.text);
  assert.equal(r.json.error.code, String(status), r.text);
  if (type) assert.equal(r.json.error.type, type, r.text);
  if (re) assert.match(r.json.error.message, re);
}

for (const backend of ['sqlite', 'postgres']) {
  describe(`on ${backend}`, () => {
    let gw;
    const A = (method, p, body) => api(gw.url, MASTER_KEY, method, p, body);
    const gen = async (body = {}) => {
      const r = await A('POST', '/key/generate', body);
      assert.equal(r.status, 200, r.text);
      return r.json;
    };

    before(async () => {
      const databaseUrl = backend === 'postgres' ? await pg.createDb('keys_test') : null;
      gw = await startGateway(keysConfig(mock.base, { databaseUrl }));
    });
    after(async () => { await gw?.stop(); });

    test('admin round trip: key generate / info / update / list / block / unblock / regenerate / delete', async () => {
      const g = await gen({ key_alias: `alias-${backend}`, models: ['priced'], max_budget: 3.5, metadata: { team: 'x' } });
      assert.match(g.key, /^sk-[A-Za-z0-9_-]{10,}$/);
      assert.equal(g.key_name, `sk-...${g.key.slice(-4)}`);
      assert.equal(g.token_id, await sha256hex(g.key));
      assert.equal(g.key_alias, `alias-${backend}`);
      assert.deepEqual(g.models, ['priced']);
      assert.equal(g.max_budget, 3.5);
      assert.equal(g.expires, null);

      // the key works at once
      assert.equal((await chat(gw, g.key)).status, 200);

      let r = await A('GET', `/key/info?key=${g.key}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.key, g.key);
      const info = r.json.info;
      assert.equal(info.key_alias, `alias-${backend}`);
      assert.equal(info.key_name, g.key_name);
      assert.deepEqual(info.models, ['priced']);
      assert.equal(info.max_budget, 3.5);
      assert.deepEqual(info.metadata, { team: 'x' });
      assert.equal(typeof info.spend, 'number');
      assert.ok(!('token' in info) || info.token !== g.key, 'the plaintext key is never stored');

      // a key's own info, with itself as the caller
      r = await api(gw.url, g.key, 'GET', '/key/info');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.info.key_alias, `alias-${backend}`);

      r = await A('POST', '/key/update', { key: g.key, max_budget: 7, models: ['priced', 'other'] });
      assert.equal(r.status, 200, r.text);
      r = await A('GET', `/key/info?key=${g.key}`);
      assert.equal(r.json.info.max_budget, 7);
      assert.deepEqual([...r.json.info.models].sort(), ['other', 'priced']);
      assert.equal((await chat(gw, g.key, 'other')).status, 200, 'update took effect at once');

      r = await A('GET', '/key/list');
      assert.equal(r.status, 200, r.text);
      assert.ok(Array.isArray(r.json.keys), r.text);
      assert.ok(r.json.keys.includes(g.token_id), `key/list has the key's hash: ${r.text}`);
      assert.equal(typeof r.json.total_count, 'number');
      r = await A('GET', '/key/list?return_full_object=true');
      assert.ok(r.json.keys.some((k) => k.token === g.token_id && k.key_alias === `alias-${backend}`), r.text);

      r = await A('POST', '/key/block', { key: g.key });
      assert.equal(r.status, 200, r.text);
      assert.equal((await A('GET', `/key/info?key=${g.key}`)).json.info.blocked, true);
      refused(await chat(gw, g.key), 401, null, /Key is blocked/);
      r = await A('POST', '/key/unblock', { key: g.key });
      assert.equal(r.status, 200, r.text);
      assert.equal((await chat(gw, g.key)).status, 200);

      r = await A('POST', `/key/${g.key}/regenerate`, {});
      assert.equal(r.status, 200, r.text);
      const nk = r.json.key;
      assert.match(nk, /^sk-/);
      assert.notEqual(nk, g.key);
      refused(await chat(gw, g.key), 401, null, /Authentication Error/);
      assert.equal((await chat(gw, nk)).status, 200);
      r = await A('GET', `/key/info?key=${nk}`);
      assert.equal(r.json.info.key_alias, `alias-${backend}`, 'regenerate keeps the row');

      r = await A('POST', '/key/regenerate', { key: nk });
      assert.equal(r.status, 200, `/key/regenerate with the key in the body: ${r.text}`);
      const nk2 = r.json.key;

      r = await A('POST', '/key/delete', { keys: [nk2] });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.deleted_keys, [nk2]);
      refused(await chat(gw, nk2), 401, null, /Authentication Error/);
      r = await A('GET', `/key/info?key=${nk2}`);
      assert.equal(r.status, 404, r.text);
    });

    test('admin round trip: users, teams, customers, organizations, budgets', async () => {
      const uid = `user-${backend}`;
      let r = await A('POST', '/user/new', { user_id: uid, max_budget: 10, user_email: `${uid}@example.com` });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.user_id, uid);
      assert.match(r.json.key, /^sk-/, '/user/new returns a key for the user');
      r = await A('GET', `/user/info?user_id=${uid}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.user_id, uid);
      assert.equal(r.json.user_info.max_budget, 10);
      assert.ok(Array.isArray(r.json.keys) && r.json.keys.length >= 1, r.text);
      r = await A('POST', '/user/update', { user_id: uid, max_budget: 20 });
      assert.equal(r.status, 200, r.text);
      assert.equal((await A('GET', `/user/info?user_id=${uid}`)).json.user_info.max_budget, 20);
      r = await A('GET', '/user/list');
      assert.equal(r.status, 200, r.text);
      assert.ok(r.json.users.some((u) => u.user_id === uid), r.text);

      r = await A('POST', '/team/new', { team_alias: `team-${backend}`, max_budget: 2, models: ['priced'] });
      assert.equal(r.status, 200, r.text);
      const tid = r.json.team_id;
      assert.ok(tid, r.text);
      assert.equal(r.json.team_alias, `team-${backend}`);
      r = await A('GET', `/team/info?team_id=${tid}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.team_id, tid);
      assert.equal(r.json.team_info.max_budget, 2);
      r = await A('POST', '/team/update', { team_id: tid, max_budget: 3 });
      assert.equal(r.status, 200, r.text);
      assert.equal((await A('GET', `/team/info?team_id=${tid}`)).json.team_info.max_budget, 3);
      r = await A('GET', '/team/list');
      assert.equal(r.status, 200, r.text);
      assert.ok(Array.isArray(r.json) && r.json.some((t) => t.team_id === tid), r.text);
      r = await A('POST', '/team/member_add', { team_id: tid, member: { role: 'user', user_id: uid } });
      assert.equal(r.status, 200, r.text);
      r = await A('GET', `/team/info?team_id=${tid}`);
      assert.ok(r.json.team_info.members_with_roles.some((m) => m.user_id === uid), r.text);
      r = await A('POST', '/team/member_delete', { team_id: tid, user_id: uid });
      assert.equal(r.status, 200, r.text);
      r = await A('GET', `/team/info?team_id=${tid}`);
      assert.ok(!r.json.team_info.members_with_roles.some((m) => m.user_id === uid), r.text);
      // a team's key is refused while the team is blocked
      const tk = await gen({ team_id: tid });
      assert.equal((await chat(gw, tk.key)).status, 200);
      r = await A('POST', '/team/block', { team_id: tid });
      assert.equal(r.status, 200, r.text);
      assert.equal((await A('GET', `/team/info?team_id=${tid}`)).json.team_info.blocked, true);
      const blocked = await chat(gw, tk.key);
      assert.ok(blocked.status === 401 || blocked.status === 403, `blocked team: ${blocked.status} ${blocked.text}`);
      r = await A('POST', '/team/unblock', { team_id: tid });
      assert.equal(r.status, 200, r.text);
      assert.equal((await chat(gw, tk.key)).status, 200);
      r = await A('POST', '/team/delete', { team_ids: [tid] });
      assert.equal(r.status, 200, r.text);
      assert.equal((await A('GET', `/team/info?team_id=${tid}`)).status, 404);

      const cid = `cust-${backend}`;
      r = await A('POST', '/customer/new', { user_id: cid, max_budget: 5, alias: 'c' });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.user_id, cid);
      r = await A('GET', `/customer/info?end_user_id=${cid}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.user_id, cid);
      assert.equal(r.json.litellm_budget_table?.max_budget, 5, r.text);
      r = await A('POST', '/customer/update', { user_id: cid, max_budget: 6 });
      assert.equal(r.status, 200, r.text);
      assert.equal((await A('GET', `/customer/info?end_user_id=${cid}`)).json.litellm_budget_table?.max_budget, 6);
      r = await A('GET', '/customer/list');
      assert.equal(r.status, 200, r.text);
      assert.ok(Array.isArray(r.json) && r.json.some((c) => c.user_id === cid), r.text);
      r = await A('POST', '/customer/block', { user_ids: [cid] });
      assert.equal(r.status, 200, r.text);
      assert.equal((await A('GET', `/customer/info?end_user_id=${cid}`)).json.blocked, true);
      r = await A('POST', '/customer/delete', { user_ids: [cid] });
      assert.equal(r.status, 200, r.text);

      r = await A('POST', '/organization/new', { organization_alias: `org-${backend}`, max_budget: 9 });
      assert.equal(r.status, 200, r.text);
      const oid = r.json.organization_id;
      assert.ok(oid, r.text);
      r = await A('GET', `/organization/info?organization_id=${oid}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.organization_alias, `org-${backend}`);
      r = await A('GET', '/organization/list');
      assert.equal(r.status, 200, r.text);
      assert.ok(Array.isArray(r.json) && r.json.some((o) => o.organization_id === oid), r.text);

      r = await A('POST', '/budget/new', { budget_id: `budget-${backend}`, max_budget: 4 });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.budget_id, `budget-${backend}`);
      r = await A('POST', '/budget/info', { budgets: [`budget-${backend}`] });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json[0]?.max_budget, 4, r.text);
      r = await A('GET', '/budget/list');
      assert.equal(r.status, 200, r.text);
      assert.ok(r.json.some((b) => b.budget_id === `budget-${backend}`), r.text);

      r = await A('POST', '/user/delete', { user_ids: [uid] });
      assert.equal(r.status, 200, r.text);
      r = await A('GET', '/user/list');
      assert.ok(!r.json.users.some((u) => u.user_id === uid), `deleted user still listed: ${r.text}`);
    });

    test('admin: spend and model info routes answer', async () => {
      let r = await A('GET', '/global/spend');
      assert.equal(r.status, 200, r.text);
      assert.ok('spend' in r.json && 'max_budget' in r.json, r.text);
      r = await A('GET', '/global/spend/keys');
      assert.equal(r.status, 200, r.text);
      assert.ok(Array.isArray(r.json), r.text);
      r = await A('POST', '/spend/calculate', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(r.status, 200, r.text);
      assert.equal(typeof r.json.cost, 'number');
      for (const p of ['/model/info', '/v1/model/info']) {
        r = await A('GET', p);
        assert.equal(r.status, 200, r.text);
        const names = r.json.data.map((m) => m.model_name);
        assert.ok(names.includes('priced') && names.includes('gpt-4o'), r.text);
        const g4 = r.json.data.find((m) => m.model_name === 'gpt-4o');
        assert.equal(g4.model_info.input_cost_per_token, 2.5e-6, JSON.stringify(g4));
        const pr = r.json.data.find((m) => m.model_name === 'priced');
        assert.equal(pr.model_info.output_cost_per_token, 0.001, JSON.stringify(pr));
      }
    });

    test('auth: no key, an unknown key, a non-sk key are 401; the key is read from every LiteLLM header', async () => {
      refused(await chat(gw, null, 'priced', {}, {}), 401, null, /No api key passed in|Authentication Error/);
      refused(await chat(gw, 'sk-not-a-real-key'), 401, null, /Authentication Error, Invalid proxy server token passed/);
      const g = await gen({});
      for (const h of [
        { authorization: `Bearer ${g.key}` }, { 'x-api-key': g.key }, { 'x-litellm-api-key': g.key },
        { 'api-key': g.key }, { 'x-goog-api-key': g.key },
      ]) {
        const r = await chat(gw, null, 'priced', {}, h);
        assert.equal(r.status, 200, `${Object.keys(h)[0]}: ${r.text}`);
      }
      // a virtual key may not call the management API
      const r = await api(gw.url, g.key, 'POST', '/key/generate', {});
      assert.ok(r.status === 401 || r.status === 403, `non-admin /key/generate: ${r.status} ${r.text}`);
    });

    test('auth: a model outside the key\'s models is 401 key_model_access_denied', async () => {
      const g = await gen({ models: ['priced'] });
      assert.equal((await chat(gw, g.key, 'priced')).status, 200);
      refused(await chat(gw, g.key, 'other'), 401, 'key_model_access_denied',
        /key not allowed to access model\. This key can only access models=\['priced'\]\. Tried to access other/);
    });

    test('auth: /v1/models lists only the models the key may call', async () => {
      const g = await gen({ models: ['priced'] });
      const r = await api(gw.url, g.key, 'GET', '/v1/models');
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.data.map((m) => m.id), ['priced']);
    });

    test('auth: an expired key is 400 expired_key', async () => {
      const g = await gen({ duration: '1s' });
      assert.ok(g.expires, `expires set: ${JSON.stringify(g)}`);
      await sleep(1300);
      refused(await chat(gw, g.key), 400, 'expired_key', /Authentication Error - Expired Key/);
    });

    test('budget: a key over its max_budget is 400 budget_exceeded with LiteLLM\'s message', async () => {
      // max_tokens 10 at 0.001 per output token: each call costs exactly 0.01
      const g = await gen({ max_budget: 0.01 });
      const ok = await chat(gw, g.key, 'priced', { max_tokens: 10 });
      assert.equal(ok.status, 200, ok.text);
      assert.equal(Number(ok.headers.get('x-litellm-response-cost')), 0.01);
      const r = await chat(gw, g.key, 'priced', { max_tokens: 10 });
      refused(r, 400, 'budget_exceeded', /Budget has been exceeded! Current cost: 0\.01\d*, Max budget: 0\.01/);
    });

    test('budget: user, team and customer (body `user`) budgets refuse with 400 budget_exceeded', async () => {
      const uid = `ub-${backend}`;
      assert.equal((await A('POST', '/user/new', { user_id: uid, max_budget: 0.01 })).status, 200);
      const uk = await gen({ user_id: uid });
      let r = await A('POST', '/team/new', { team_alias: `tb-${backend}`, max_budget: 0.01 });
      assert.equal(r.status, 200, r.text);
      const tk = await gen({ team_id: r.json.team_id });
      const cid = `cb-${backend}`;
      assert.equal((await A('POST', '/customer/new', { user_id: cid, max_budget: 0.01 })).status, 200);
      const ck = await gen({});
      const cases = [['user', uk.key, {}], ['team', tk.key, {}], ['customer', ck.key, { user: cid }]];
      for (const [what, key, extra] of cases) {
        const first = await chat(gw, key, 'priced', { max_tokens: 10, ...extra });
        assert.equal(first.status, 200, `${what} first call: ${first.text}`);
        r = await chat(gw, key, 'priced', { max_tokens: 10, ...extra });
        refused(r, 400, 'budget_exceeded');
        assert.match(r.json.error.message, /udget/, `${what}: ${r.text}`);
      }
      // the customer's budget binds only requests naming that customer
      assert.equal((await chat(gw, ck.key, 'priced', { max_tokens: 10 })).status, 200);
    });
  });
}
