// admin-authz.test.mjs - the management API's authorization matrix (issue
// 19): every management route, called by every role, is let through or
// refused at the gate exactly as the matrix below says (LiteLLM's
// route_checks.py: proxy_admin everything; proxy_admin_viewer read routes;
// internal_user its key and spend routes; internal_user_viewer its spend
// routes; team routes for users, the handler then requiring team admin;
// info routes for every key; /global/spend/reset for the master key only).
// The routes are read from the C route tables (src/admin/*.c): a route the
// matrix does not list, or one it lists that the tables lost, fails the
// test. On SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MASTER_KEY, api, keysConfig, root, startGateway, startMock } from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

// who gets past the gate, per route class
const ROLES = ['master', 'proxy_admin', 'proxy_admin_viewer', 'internal_user', 'no_role_user',
  'internal_user_viewer', 'team_admin', 'team_member', 'no_user'];
const USERS = ['internal_user', 'no_role_user', 'team_admin', 'team_member'];
const CLASS = {
  admin: ['master', 'proxy_admin'],
  read: ['master', 'proxy_admin', 'proxy_admin_viewer'],
  info: ROLES,
  user: ['master', 'proxy_admin', ...USERS],
  user_read: ['master', 'proxy_admin', 'proxy_admin_viewer', ...USERS],
  spend: ['master', 'proxy_admin', 'proxy_admin_viewer', ...USERS, 'internal_user_viewer'],
  team: ['master', 'proxy_admin', ...USERS, 'internal_user_viewer'],
  master: ['master'],
};

const MATRIX = {
  'POST /key/generate': 'user', 'POST /key/update': 'user', 'POST /key/delete': 'user',
  'GET /key/info': 'info', 'GET /key/list': 'info', 'GET /key/aliases': 'user_read',
  'POST /key/regenerate': 'user', 'POST /key/*/regenerate': 'user', 'POST /key/block': 'user',
  'POST /key/unblock': 'user', 'POST /key/health': 'info',
  'POST /user/new': 'admin', 'POST /user/update': 'admin', 'POST /user/delete': 'admin',
  'GET /user/info': 'info', 'GET /user/list': 'read',
  'POST /team/new': 'admin', 'POST /team/update': 'admin', 'POST /team/delete': 'admin',
  'GET /team/info': 'info', 'GET /team/list': 'info', 'POST /team/member_add': 'team',
  'POST /team/member_delete': 'team', 'POST /team/member_update': 'team', 'POST /team/block': 'admin',
  'POST /team/unblock': 'admin',
  'POST /customer/new': 'admin', 'POST /customer/update': 'admin', 'POST /customer/delete': 'admin',
  'GET /customer/info': 'read', 'GET /customer/list': 'read', 'POST /customer/block': 'admin',
  'POST /customer/unblock': 'admin', 'POST /end_user/new': 'admin', 'POST /end_user/update': 'admin',
  'POST /end_user/delete': 'admin', 'GET /end_user/info': 'read', 'GET /end_user/list': 'read',
  'POST /end_user/block': 'admin', 'POST /end_user/unblock': 'admin',
  'POST /organization/new': 'admin', 'PATCH /organization/update': 'admin', 'POST /organization/update': 'admin',
  'DELETE /organization/delete': 'admin', 'POST /organization/delete': 'admin', 'ANY /organization/info': 'read',
  'GET /organization/list': 'info', 'POST /organization/member_add': 'admin',
  'PATCH /organization/member_update': 'admin', 'DELETE /organization/member_delete': 'admin',
  'POST /budget/new': 'admin', 'POST /budget/update': 'admin', 'POST /budget/delete': 'admin',
  'POST /budget/info': 'read', 'GET /budget/list': 'read', 'GET /budget/settings': 'read',
  'GET /spend/logs': 'spend', 'GET /spend/logs/ui': 'spend', 'GET /spend/logs/v2': 'spend', 'GET /spend/keys': 'spend',
  'GET /spend/users': 'spend', 'GET /spend/tags': 'spend', 'POST /spend/calculate': 'spend',
  'GET /global/spend': 'read', 'GET /global/spend/logs': 'read', 'GET /global/spend/keys': 'read',
  'GET /global/spend/teams': 'read', 'GET /global/spend/models': 'read', 'POST /global/spend/end_users': 'read',
  'GET /global/spend/report': 'read', 'GET /global/spend/tags': 'read', 'GET /global/spend/all_tag_names': 'read',
  'GET /global/all_end_users': 'read', 'POST /global/spend/reset': 'master',
  'GET /model/info': 'info', 'GET /v1/model/info': 'info', 'GET /v2/model/info': 'info',
  'GET /model_group/info': 'info',
  // the MCP server routes pass the gate for every key; their handlers refuse
  // writes by non-admins with LiteLLM's own 403 (tests/mcp/admin.test.mjs)
  'GET /v1/mcp/server': 'info', 'GET /v1/mcp/server/*': 'info', 'GET /v1/mcp/access_groups': 'info',
  'POST /v1/mcp/server': 'info', 'PUT /v1/mcp/server': 'info', 'DELETE /v1/mcp/server/*': 'info',
  'POST /credentials': 'admin', 'GET /credentials': 'read', 'GET /credentials/by_name/*': 'read',
  'GET /credentials/by_model/*': 'read', 'PATCH /credentials/*': 'admin', 'DELETE /credentials/*': 'admin',
  // the UI's data (admin/activity.c, logdetail.c, settings.c): handlers scope the spend ones to the caller's own
  'GET /user/daily/activity': 'spend', 'GET /team/daily/activity': 'spend', 'GET /tag/daily/activity': 'spend',
  'GET /spend/logs/ui/*': 'spend', 'GET /switchyard/settings': 'read',
};

/** Every route of the C tables: "METHOD path" ("ANY" for method 0). */
function cRoutes() {
  const dir = path.join(root, 'src/admin');
  const out = [];
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.c'))) {
    const src = fs.readFileSync(path.join(dir, f), 'utf8');
    for (const m of src.matchAll(/\{\s*(HTTP_[A-Z]+|0)\s*,\s*"(\/[^"]*)"\s*,\s*\w+\s*,/g))
      out.push(`${m[1] === '0' ? 'ANY' : m[1].slice(5)} ${m[2]}`);
  }
  return out;
}

const gateRefusal = (r) => r.status === 401 &&
  /Only proxy admin can be used|which is only for MASTER KEY/.test(r.json?.error?.message ?? '');

test('the matrix lists exactly the routes of the C tables', () => {
  const c = cRoutes();
  assert.ok(c.length > 60, `parsed ${c.length} routes`);
  for (const r of c) assert.ok(MATRIX[r], `route ${r} is not in the authorization matrix`);
  for (const r of Object.keys(MATRIX)) assert.ok(c.includes(r), `matrix route ${r} is not in the C tables`);
});

let mock, pg;
before(async () => { mock = await startMock(); pg = await startPostgres(); });
after(async () => { await mock?.stop(); await pg?.stop(); });

for (const backend of ['sqlite', 'postgres']) {
  describe(`on ${backend}`, () => {
    let gw;
    const keys = { master: MASTER_KEY };
    const A = (method, p, body) => api(gw.url, MASTER_KEY, method, p, body);
    before(async () => {
      const databaseUrl = backend === 'postgres' ? await pg.createDb('authz_test') : null;
      gw = await startGateway(keysConfig(mock.base, { databaseUrl }));
      for (const role of ['proxy_admin', 'proxy_admin_viewer', 'internal_user', 'internal_user_viewer']) {
        const r = await A('POST', '/user/new', { user_id: `u-${role}`, user_role: role });
        assert.equal(r.status, 200, r.text);
      }
      for (const u of ['u-team_admin', 'u-team_member']) {
        const r = await A('POST', '/user/new', { user_id: u, user_role: 'internal_user' });
        assert.equal(r.status, 200, r.text);
      }
      let r = await A('POST', '/team/new', { team_id: 'authz-team', members_with_roles: [
        { user_id: 'u-team_admin', role: 'admin' }, { user_id: 'u-team_member', role: 'user' }] });
      assert.equal(r.status, 200, r.text);
      const gen = async (body) => {
        const g = await A('POST', '/key/generate', body);
        assert.equal(g.status, 200, g.text);
        return g.json.key;
      };
      for (const role of ['proxy_admin', 'proxy_admin_viewer', 'internal_user', 'internal_user_viewer'])
        keys[role] = await gen({ user_id: `u-${role}` });
      keys.team_admin = await gen({ user_id: 'u-team_admin', team_id: 'authz-team' });
      keys.team_member = await gen({ user_id: 'u-team_member', team_id: 'authz-team' });
      keys.no_role_user = await gen({ user_id: 'u-without-a-row' });
      keys.no_user = await gen({});
    });
    after(async () => { await gw?.stop(); });

    for (const role of ROLES) {
      test(`${role}: every management route`, async () => {
        const wrong = [];
        for (const [route, cls] of Object.entries(MATRIX)) {
          let [method, p] = route.split(' ');
          if (method === 'ANY') method = 'GET';
          p = p.replace('*', 'sk-not-a-key');
          const body = method === 'GET' ? undefined : {};
          const r = await api(gw.url, keys[role], method, p, body);
          assert.notEqual(r.status, 500, `${role} ${route}: ${r.text}`);
          const allowed = CLASS[cls].includes(role);
          if (allowed === gateRefusal(r)) wrong.push(`${route} (${cls}): ${r.status} ${r.text.slice(0, 160)}`);
        }
        assert.deepEqual(wrong, [], `${role}: gate decisions differ from the matrix`);
      });
    }
  });
}
