// admin-lists.test.mjs - the list filters whose parsing runs on the DB
// threads: /user/list?user_ids= (a comma list, blanks and empty items
// ignored; one id is a case-insensitive substring), its default sort order,
// and /team/list?user_id=. Many different filters at once must each get
// exactly their own users (two DB threads parse concurrently; the race of a
// non-reentrant split is too narrow to show here reliably: the
// banned-functions tier is what keeps strtok out). On SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MASTER_KEY, api, keysConfig, startGateway, startMock } from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

let mock, pg;
before(async () => { mock = await startMock(); pg = await startPostgres(); });
after(async () => { await mock?.stop(); await pg?.stop(); });

const USERS = Array.from({ length: 12 }, (_, i) => `lu-${String(i).padStart(2, '0')}`);

for (const backend of ['sqlite', 'postgres']) {
  describe(`on ${backend}`, () => {
    let gw;
    const A = (method, p, body) => api(gw.url, MASTER_KEY, method, p, body);
    const ok = (r) => { assert.equal(r.status, 200, r.text); return r.json; };
    const ids = (j) => j.users.map((u) => u.user_id).sort();

    before(async () => {
      const databaseUrl = backend === 'postgres' ? await pg.createDb('admin_lists_test') : null;
      gw = await startGateway(keysConfig(mock.base, { databaseUrl }));
      for (const u of USERS) ok(await A('POST', '/user/new', { user_id: u, user_role: 'internal_user' }));
      ok(await A('POST', '/team/new', { team_id: 'lt-a', members_with_roles: [{ user_id: 'lu-01', role: 'user' }] }));
      ok(await A('POST', '/team/new', { team_id: 'lt-b', members_with_roles: [{ user_id: 'lu-02', role: 'admin' }] }));
    });
    after(async () => { await gw?.stop(); });

    test('user_ids: a comma list, blanks and empty items ignored', async () => {
      assert.deepEqual(ids(ok(await A('GET', '/user/list?user_ids=lu-03,lu-07'))), ['lu-03', 'lu-07']);
      const q = encodeURIComponent(' lu-04 ,, ,lu-09 ,');
      assert.deepEqual(ids(ok(await A('GET', `/user/list?user_ids=${q}`))), ['lu-04', 'lu-09']);
      // one id is a case-insensitive substring match
      assert.deepEqual(ids(ok(await A('GET', '/user/list?user_ids=LU-1'))), ['lu-10', 'lu-11']);
      // only separators: no filter at all
      const all = ok(await A('GET', `/user/list?user_ids=${encodeURIComponent(', ,')}&page_size=100`));
      for (const u of USERS) assert.ok(ids(all).includes(u), u);
      // unknown ids: an empty page, not an error
      const none = ok(await A('GET', '/user/list?user_ids=nobody-1,nobody-2'));
      assert.deepEqual(none.users, []);
      assert.equal(none.total, 0);
    });

    test('many different user_ids filters at once each get exactly their own users', async () => {
      const pairs = Array.from({ length: 40 }, (_, i) => [USERS[i % 12], USERS[(i * 5 + 1) % 12]]);
      const res = await Promise.all(pairs.map(([a, b]) => A('GET', `/user/list?user_ids=${a},${b}`)));
      res.forEach((r, i) => {
        const want = [...new Set(pairs[i])].sort();
        assert.deepEqual(ids(ok(r)), want, `request ${i} (${pairs[i]})`);
      });
    });

    test('sort_by without sort_order sorts ascending; a bad order is refused', async () => {
      const j = ok(await A('GET', '/user/list?user_ids=lu-05,lu-02,lu-08&sort_by=user_id'));
      assert.deepEqual(j.users.map((u) => u.user_id), ['lu-02', 'lu-05', 'lu-08']);
      const d = ok(await A('GET', '/user/list?user_ids=lu-05,lu-02,lu-08&sort_by=user_id&sort_order=DESC'));
      assert.deepEqual(d.users.map((u) => u.user_id), ['lu-08', 'lu-05', 'lu-02']);
      const bad = await A('GET', '/user/list?sort_by=user_id&sort_order=sideways');
      assert.equal(bad.status, 400, bad.text);
      assert.match(bad.text, /Invalid sort order/);
    });

    test('team/list?user_id= lists the teams the user is a member of', async () => {
      const a = ok(await A('GET', '/team/list?user_id=lu-01'));
      assert.deepEqual(a.map((t) => t.team_id), ['lt-a']);
      const b = ok(await A('GET', '/team/list?user_id=lu-02'));
      assert.deepEqual(b.map((t) => t.team_id), ['lt-b']);
      assert.deepEqual(ok(await A('GET', '/team/list?user_id=lu-11')), []);
    });
  });
}
