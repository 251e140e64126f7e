// admin-selfservice.test.mjs - self-service key management (issue 19): an
// internal user manages its own keys with its own key, never more than it
// has (models, budget, limits, lifetime), and is refused on everybody
// else's however it names them (key, hash, alias, path); a team admin
// manages its team's keys and members; an internal_user_viewer only reads;
// keys whose user_id / team_id is "" are nobody's; model info is narrowed
// to the caller key's models. On SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MASTER_KEY, api, keysConfig, sha256hex, startGateway, startMock } from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

let mock, pg;
before(async () => { mock = await startMock(); pg = await startPostgres(); });
after(async () => { await mock?.stop(); await pg?.stop(); });

function refused(r, status, re) {
  assert.equal(r.status, status, `want ${status}, got ${r.status}: ${r.text}`);
  if (re) assert.match(r.text, re);
}

for (const backend of ['sqlite', 'postgres']) {
  describe(`on ${backend}`, () => {
    let gw, alice, bob, tadmin, viewer, bobKey;
    const A = (method, p, body) => api(gw.url, MASTER_KEY, method, p, body);
    const as = (key) => (method, p, body) => api(gw.url, key, method, p, body);
    const ok = (r) => { assert.equal(r.status, 200, r.text); return r.json; };

    before(async () => {
      const databaseUrl = backend === 'postgres' ? await pg.createDb('selfservice_test') : null;
      gw = await startGateway(keysConfig(mock.base, { databaseUrl }));
      ok(await A('POST', '/user/new', { user_id: 'alice', user_role: 'internal_user', max_budget: 10 }));
      ok(await A('POST', '/user/new', { user_id: 'bob', user_role: 'internal_user' }));
      ok(await A('POST', '/user/new', { user_id: 'tadmin', user_role: 'internal_user' }));
      ok(await A('POST', '/user/new', { user_id: 'vic', user_role: 'internal_user_viewer' }));
      ok(await A('POST', '/team/new', { team_id: 'ss-team', members_with_roles: [
        { user_id: 'tadmin', role: 'admin' }, { user_id: 'alice', role: 'user' }] }));
      ok(await A('POST', '/team/new', { team_id: 'ss-other' }));
      alice = ok(await A('POST', '/key/generate', { user_id: 'alice', models: ['priced'], max_budget: 5,
        rpm_limit: 10, duration: '1h', key_alias: `alice-${backend}` })).key;
      bobKey = ok(await A('POST', '/key/generate', { user_id: 'bob', key_alias: `bob-${backend}` }));
      bob = bobKey.key;
      tadmin = ok(await A('POST', '/key/generate', { user_id: 'tadmin', team_id: 'ss-team' })).key;
      viewer = ok(await A('POST', '/key/generate', { user_id: 'vic' })).key;
    });
    after(async () => { await gw?.stop(); });

    test('an internal user generates its own key, within what it has', async () => {
      const me = as(alice);
      const g = ok(await me('POST', '/key/generate', {}));
      assert.equal(g.user_id, 'alice');
      assert.deepEqual(g.models, ['priced']);
      assert.equal(g.max_budget, 5);
      assert.equal(g.rpm_limit, 10);
      assert.ok(g.expires && Date.parse(g.expires) <= Date.now() + 3600e3 + 5e3, g.expires);
      const small = ok(await me('POST', '/key/generate', { models: ['priced'], max_budget: 1, duration: '10m' }));
      assert.equal(small.max_budget, 1);
      // the new key works for its model and not for another
      const info = ok(await as(small.key)('GET', '/key/info'));
      assert.equal(info.info.user_id, 'alice');
    });

    test('more than the caller has is refused', async () => {
      const me = as(alice);
      refused(await me('POST', '/key/generate', { models: ['other'] }), 403, /model=other/);
      refused(await me('POST', '/key/generate', { max_budget: 50 }), 403, /max_budget/);
      refused(await me('POST', '/key/generate', { rpm_limit: 1000 }), 403, /rpm_limit/);
      refused(await me('POST', '/key/generate', { duration: '30d' }), 403, /duration/);
      refused(await me('POST', '/key/generate', { duration: '-1' }), 403, /duration/);
      refused(await me('POST', '/key/generate', { user_id: 'bob' }), 403, /only create keys for themselves/);
      refused(await me('POST', '/key/generate', { spend: 100 }), 403, /spend/); // a negative one is refused earlier, as bad input (400)
      refused(await me('POST', '/key/generate', { budget_duration: '1m' }), 403, /budget_duration/);
      refused(await me('POST', '/key/generate', { budget_id: 'x' }), 403, /budget_id/);
      refused(await me('POST', '/key/generate', { team_id: 'ss-other' }), 400, /not assigned to team=ss-other/);
      const t = ok(await me('POST', '/key/generate', { team_id: 'ss-team' }));
      assert.equal(t.team_id, 'ss-team');
    });

    test('a team key with all-team-models makes keys with the team\'s models', async () => {
      ok(await A('POST', '/team/new', { team_id: 'ss-mt', models: ['other'],
        members_with_roles: [{ user_id: 'tadmin', role: 'user' }] }));
      const k = ok(await A('POST', '/key/generate', { user_id: 'tadmin', team_id: 'ss-mt', models: ['all-team-models'] })).key;
      const g = ok(await as(k)('POST', '/key/generate', {}));
      assert.deepEqual(g.models, ['other']);
      refused(await as(k)('POST', '/key/generate', { models: ['priced'] }), 403, /model=priced/);
    });

    test("another user's key is refused however it is named", async () => {
      const me = as(alice);
      const hash = await sha256hex(bob);
      for (const k of [bob, hash]) {
        refused(await me('POST', '/key/update', { key: k, max_budget: 1 }), 403);
        refused(await me('POST', '/key/delete', { keys: [k] }), 403);
        refused(await me('POST', '/key/regenerate', { key: k }), 403);
        refused(await me('GET', `/key/info?key=${k}`), 403);
        refused(await me('POST', '/key/block', { key: k }), 403);
      }
      refused(await me('POST', `/key/${bob}/regenerate`, {}), 403);
      refused(await me('POST', '/key/delete', { key_aliases: [`bob-${backend}`] }), 403);
      // bob's key is untouched
      const info = ok(await A('GET', `/key/info?key=${bob}`));
      assert.equal(info.info.blocked ?? false, false);
      assert.equal(info.info.max_budget, null);
    });

    test('own keys: update within limits, delete; an admin block is not undone', async () => {
      const me = as(alice);
      const g = ok(await me('POST', '/key/generate', { key_alias: `alice-2-${backend}` }));
      ok(await me('POST', '/key/update', { key: g.key, max_budget: 2 }));
      refused(await me('POST', '/key/update', { key: g.key, max_budget: 200 }), 403, /max_budget/);
      refused(await me('POST', '/key/update', { key: g.key, max_budget: null }), 403, /max_budget/);
      refused(await me('POST', '/key/update', { key: g.key, models: ['gpt-4o'] }), 403, /model=gpt-4o/);
      refused(await me('POST', '/key/update', { key: g.key, user_id: 'bob' }), 403);
      ok(await A('POST', '/key/block', { key: g.key }));
      refused(await me('POST', '/key/unblock', { key: g.key }), 403);
      refused(await me('POST', '/key/update', { key: g.key, blocked: false }), 403, /blocked/);
      ok(await me('POST', '/key/delete', { key_aliases: [`alice-2-${backend}`] }));
      refused(await A('GET', `/key/info?key=${g.key}`), 404);
    });

    test("a team admin manages its team's keys and members, not others'", async () => {
      const ta = as(tadmin);
      const tk = ok(await as(alice)('POST', '/key/generate', { team_id: 'ss-team' }));
      ok(await ta('POST', '/key/update', { key: tk.key, key_alias: `team-key-${backend}` }));
      ok(await ta('GET', `/key/info?key=${tk.key}`));
      refused(await ta('POST', '/key/update', { key: bob, max_budget: 1 }), 403);
      ok(await ta('POST', '/team/member_add', { team_id: 'ss-team', member: { user_id: 'bob', role: 'user' } }));
      ok(await ta('POST', '/team/member_delete', { team_id: 'ss-team', user_id: 'bob' }));
      refused(await ta('POST', '/team/member_add', { team_id: 'ss-other', member: { user_id: 'tadmin', role: 'admin' } }),
        403, /not proxy admin OR team admin/);
      // a plain member cannot add itself anywhere, nor promote itself
      const me = as(alice);
      refused(await me('POST', '/team/member_add', { team_id: 'ss-other', member: { user_id: 'alice', role: 'admin' } }), 403);
      refused(await me('POST', '/team/member_update', { team_id: 'ss-team', user_id: 'alice', role: 'admin' }), 403);
      ok(await ta('POST', '/key/delete', { keys: [tk.key] }));
    });

    test('internal_user_viewer reads its own spend, changes nothing', async () => {
      const v = as(viewer);
      refused(await v('POST', '/key/generate', {}), 401, /Only proxy admin/);
      refused(await v('POST', '/key/update', { key: viewer, max_budget: 100 }), 401);
      ok(await v('GET', '/spend/logs'));
      ok(await v('GET', '/key/info'));
    });

    test("spend: an internal user sees its own, never the proxy's", async () => {
      const me = as(alice);
      refused(await me('GET', '/global/spend/keys'), 401, /Only proxy admin/);
      refused(await me('GET', '/global/spend/teams'), 401);
      refused(await me('GET', '/global/spend/logs'), 401);
      refused(await me('POST', '/global/spend/reset', {}), 401, /only for MASTER KEY/);
      const keys = ok(await me('GET', '/spend/keys'));
      assert.ok(keys.length >= 1);
      for (const k of keys) assert.equal(k.user_id, 'alice');
      const users = ok(await me('GET', '/spend/users?user_id=bob'));
      assert.deepEqual(users.map((u) => u.user_id), ['alice']);
      const tl = await me('GET', '/team/list?user_id=bob');
      refused(tl, 401, /Only admin users can query all teams/);
      const teams = ok(await me('GET', '/team/list'));
      assert.deepEqual(teams.map((t) => t.team_id), ['ss-team']);
      refused(await me('GET', '/user/info?user_id=bob'), 403);
    });

    test('keys with user_id / team_id "" are nobody: no shared identity', async () => {
      const k1 = ok(await A('POST', '/key/generate', { user_id: '', team_id: '' })).key;
      const k2 = ok(await A('POST', '/key/generate', { user_id: '', team_id: '' })).key;
      refused(await as(k1)('GET', `/key/info?key=${k2}`), 403);
      refused(await as(k2)('GET', `/key/info?key=${k1}`), 403);
      ok(await as(k1)('GET', '/key/info'));
      refused(await as(k1)('POST', '/key/update', { key: k2, max_budget: 1 }), 401);
    });

    test('model info for every key, narrowed to its models', async () => {
      for (const p of ['/model/info', '/v1/model/info', '/v2/model/info']) {
        const r = ok(await as(alice)('GET', p));
        assert.deepEqual([...new Set(r.data.map((d) => d.model_name))], ['priced'], p);
      }
      const groups = ok(await as(alice)('GET', '/model_group/info'));
      assert.deepEqual(groups.data.map((g) => g.model_group), ['priced']);
      const all = ok(await A('GET', '/model/info'));
      const other = all.data.find((d) => d.model_name === 'other');
      const mine = all.data.find((d) => d.model_name === 'priced');
      refused(await as(alice)('GET', `/model/info?litellm_model_id=${other.model_info.id}`), 400, /not found/);
      const one = ok(await as(alice)('GET', `/model/info?litellm_model_id=${mine.model_info.id}`));
      assert.equal(one.data.length, 1);
      // a key without a model list (and no team) sees every model
      const free = ok(await as(bob)('GET', '/model/info'));
      assert.equal(free.data.length, all.data.length);
      // a team key with all-team-models: the team's models
      ok(await A('POST', '/team/new', { team_id: `mt-${backend}`, models: ['other'] }));
      const tk = ok(await A('POST', '/key/generate', { team_id: `mt-${backend}`, models: ['all-team-models'] })).key;
      const tm = ok(await as(tk)('GET', '/model/info'));
      assert.deepEqual([...new Set(tm.data.map((d) => d.model_name))], ['other']);
    });
  });
}
