// admin-membership.test.mjs - team and organization membership as LiteLLM
// records it (issue 19): the creator of a team is its admin (the master
// key's user is "default_user_id"), /user/new with team_id makes the user a
// member (members_with_roles, the user's teams, a TeamMembership row when a
// member budget applies), /user/info teams[] carry team_memberships,
// /organization/member_update and /organization/member_delete; the
// litellm_settings defaults for new internal users. SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MASTER_KEY, api, keysConfig, startGateway, startMock } from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

let mock, pg;
before(async () => { mock = await startMock(); pg = await startPostgres(); });
after(async () => { await mock?.stop(); await pg?.stop(); });

const ok = (r) => { assert.equal(r.status, 200, r.text); return r.json; };

for (const backend of ['sqlite', 'postgres']) {
  describe(`on ${backend}`, () => {
    let gw;
    const A = (method, p, body) => api(gw.url, MASTER_KEY, method, p, body);
    before(async () => {
      const databaseUrl = backend === 'postgres' ? await pg.createDb('membership_test') : null;
      const cfg = keysConfig(mock.base, { databaseUrl }) + `
litellm_settings:
  max_internal_user_budget: 7.5
  internal_user_budget_duration: 30d
  default_internal_user_params:
    models: [priced]
    user_role: internal_user
    available_teams: [nope]
`;
      gw = await startGateway(cfg);
    });
    after(async () => { await gw?.stop(); });

    test('the creator of a team is its admin', async () => {
      const t = ok(await A('POST', '/team/new', { team_id: 'm-master' }));
      assert.deepEqual(t.members_with_roles.map((m) => [m.user_id, m.role]), [['default_user_id', 'admin']]);
      ok(await A('POST', '/user/new', { user_id: 'm-padmin', user_role: 'proxy_admin' }));
      const k = ok(await A('POST', '/key/generate', { user_id: 'm-padmin' })).key;
      const t2 = ok(await api(gw.url, k, 'POST', '/team/new', { team_id: 'm-by-user',
        members_with_roles: [{ user_id: 'm-other', role: 'user' }] }));
      const roles = Object.fromEntries(t2.members_with_roles.map((m) => [m.user_id, m.role]));
      assert.deepEqual(roles, { 'm-other': 'user', 'm-padmin': 'admin' });
      const info = ok(await A('GET', '/user/info?user_id=m-padmin'));
      assert.ok(info.user_info.teams.includes('m-by-user'), JSON.stringify(info.user_info));
    });

    test('/user/new with team_id makes the user a member; /user/info shows the membership', async () => {
      ok(await A('POST', '/team/new', { team_id: 'm-budget', team_member_budget: 3 }));
      const u = ok(await A('POST', '/user/new', { user_id: 'm-u1', team_id: 'm-budget' }));
      assert.equal(u.user_id, 'm-u1');
      const team = ok(await A('GET', '/team/info?team_id=m-budget'));
      assert.ok(team.team_info.members_with_roles.some((m) => m.user_id === 'm-u1' && m.role === 'user'),
        JSON.stringify(team.team_info.members_with_roles));
      const info = ok(await A('GET', '/user/info?user_id=m-u1'));
      assert.ok(info.user_info.teams.includes('m-budget'));
      const t = info.teams.find((x) => x.team_id === 'm-budget');
      assert.ok(t, JSON.stringify(info.teams));
      assert.equal(t.team_memberships.length, 1, JSON.stringify(t));
      assert.equal(t.team_memberships[0].user_id, 'm-u1');
      assert.equal(t.team_memberships[0].litellm_budget_table.max_budget, 3);
      // a team without member budgets: member, no membership row
      ok(await A('POST', '/team/new', { team_id: 'm-plain' }));
      ok(await A('POST', '/user/new', { user_id: 'm-u2', team_id: 'm-plain' }));
      const i2 = ok(await A('GET', '/user/info?user_id=m-u2'));
      assert.deepEqual(i2.teams.find((x) => x.team_id === 'm-plain').team_memberships, []);
      // an unknown team is ignored as LiteLLM ignores it
      ok(await A('POST', '/user/new', { user_id: 'm-u3', team_id: 'm-no-such-team' }));
    });

    test('new internal users get the litellm_settings defaults', async () => {
      const u = ok(await A('POST', '/user/new', { user_id: 'm-d1' }));
      assert.equal(u.max_budget, 7.5);
      assert.equal(u.budget_duration, '30d');
      assert.deepEqual(u.models, ['priced']);
      assert.equal(u.user_role, 'internal_user');
      const own = ok(await A('POST', '/user/new', { user_id: 'm-d2', max_budget: 1, models: ['other'] }));
      assert.equal(own.max_budget, 1);
      assert.deepEqual(own.models, ['other']);
      const adm = ok(await A('POST', '/user/new', { user_id: 'm-d3', user_role: 'proxy_admin' }));
      assert.equal(adm.max_budget, null);
    });

    test('organization member_update and member_delete', async () => {
      ok(await A('POST', '/organization/new', { organization_id: 'm-org', organization_alias: 'm-org' }));
      ok(await A('POST', '/organization/member_add', { organization_id: 'm-org',
        member: { user_id: 'm-ou', role: 'internal_user' } }));
      const up = ok(await A('PATCH', '/organization/member_update', { organization_id: 'm-org', user_id: 'm-ou',
        role: 'org_admin', max_budget_in_organization: 4 }));
      assert.equal(up.user_role, 'org_admin');
      assert.equal(up.litellm_budget_table.max_budget, 4);
      const up2 = ok(await A('PATCH', '/organization/member_update', { organization_id: 'm-org', user_id: 'm-ou',
        max_budget_in_organization: 6 }));
      assert.equal(up2.budget_id, up.budget_id);
      assert.equal(up2.litellm_budget_table.max_budget, 6);
      let r = await A('PATCH', '/organization/member_update', { organization_id: 'm-org', user_id: 'm-ou', role: 'god' });
      assert.equal(r.status, 400, r.text);
      r = await A('PATCH', '/organization/member_update', { organization_id: 'm-org', user_id: 'm-nobody', role: 'org_admin' });
      assert.equal(r.status, 404, r.text);
      r = await A('PATCH', '/organization/member_update', { user_id: 'm-ou' });
      assert.equal(r.status, 422, r.text);
      const del = ok(await A('DELETE', '/organization/member_delete', { organization_id: 'm-org', user_id: 'm-ou' }));
      assert.equal(del.user_id, 'm-ou');
      r = await A('DELETE', '/organization/member_delete', { organization_id: 'm-org', user_id: 'm-ou' });
      assert.equal(r.status, 404, r.text);
      const org = ok(await A('GET', '/organization/info?organization_id=m-org'));
      assert.ok(!(org.members || []).some((m) => m.user_id === 'm-ou'), JSON.stringify(org.members));
    });
  });
}
