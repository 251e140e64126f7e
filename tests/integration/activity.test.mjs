// activity.test.mjs - LiteLLM's daily-activity routes (admin/activity.c), the
// Usage page's data, on SQLite and on PostgreSQL: spend seeded through real
// calls (two users, two teams, two keys, two tags) and the answers' numbers,
// breakdowns, paging, errors and scoping checked - an internal user sees only
// their own user, teams and keys, and is refused another's.
//
// Prices: "priced" costs 0.001 per output token and the mock answers exactly
// 10 completion tokens at max_tokens 10, so each call costs 0.01.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  MASTER_KEY, api, chatBody, keysConfig, postJSON, sha256hex, startGateway, startMock, until,
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

const today = new Date().toISOString().slice(0, 10);
const near = (a, b, what) => assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} != ${b}`);

for (const backend of ['sqlite', 'postgres']) {
  describe(`daily activity (${backend})`, () => {
    let g, kA, kB, hA, hB;
    const A = (method, p, body) => api(g.url, MASTER_KEY, method, p, body);
    const q = (key, route, params) => api(g.url, key, 'GET', `${route}?${new URLSearchParams(params)}`);
    const day = { start_date: today, end_date: today };

    before(async () => {
      const databaseUrl = backend === 'postgres' ? await pg.createDb('activity') : null;
      g = await startGateway(keysConfig(mock.base, { databaseUrl }));
      for (const [u, t] of [['act-ua', 'act-ta'], ['act-ub', 'act-tb']]) {
        let r = await A('POST', '/user/new', { user_id: u, user_role: 'internal_user' });
        assert.equal(r.status, 200, r.text);
        r = await A('POST', '/team/new', { team_id: t, members_with_roles: [{ user_id: u, role: 'user' }] });
        assert.equal(r.status, 200, r.text);
      }
      let r = await A('POST', '/key/generate', { user_id: 'act-ua', team_id: 'act-ta', key_alias: 'alias-a' });
      assert.equal(r.status, 200, r.text);
      kA = r.json.key;
      r = await A('POST', '/key/generate', { user_id: 'act-ub', team_id: 'act-tb', key_alias: 'alias-b' });
      assert.equal(r.status, 200, r.text);
      kB = r.json.key;
      hA = await sha256hex(kA);
      hB = await sha256hex(kB);
      const call = (key, tag) => postJSON(`${g.url}/v1/chat/completions`,
        chatBody('priced', { max_tokens: 10, metadata: { tags: [tag] } }), { authorization: `Bearer ${key}` });
      for (const [key, tag] of [[kA, 'tag-a'], [kA, 'tag-a'], [kB, 'tag-b']]) {
        const c = await call(key, tag);
        assert.equal(c.status, 200, c.text);
      }
      const seen = await until(async () => {
        const [u, t, tg] = await Promise.all(['/user/daily/activity', '/team/daily/activity', '/tag/daily/activity']
          .map((route) => q(MASTER_KEY, route, day)));
        return [u, t, tg].every((x) => x.json?.metadata?.total_api_requests === 3);
      }, 15000);
      assert.ok(seen, 'the three calls reached the daily tables');
    });
    after(async () => { await g?.stop(); });

    test('user activity: totals, the day, and its breakdowns (admin)', async () => {
      const r = await q(MASTER_KEY, '/user/daily/activity', day);
      assert.equal(r.status, 200, r.text);
      const m = r.json.metadata;
      near(m.total_spend, 0.03, 'total_spend');
      assert.equal(m.total_completion_tokens, 30);
      assert.equal(m.total_tokens, m.total_prompt_tokens + 30);
      assert.equal(m.total_successful_requests, 3);
      assert.equal(m.total_failed_requests, 0);
      assert.deepEqual([m.page, m.total_pages, m.has_more], [1, 1, false]);
      assert.equal(r.json.results.length, 1);
      const d = r.json.results[0];
      assert.equal(d.date, today);
      assert.equal(d.metrics.api_requests, 3);
      near(d.metrics.spend, 0.03, 'day spend');
      const b = d.breakdown;
      assert.equal(b.models.priced.metrics.api_requests, 3);
      assert.equal(b.models.priced.api_key_breakdown[hA].metrics.api_requests, 2);
      assert.equal(b.models.priced.api_key_breakdown[hA].metadata.key_alias, 'alias-a');
      assert.equal(b.providers.openai.metrics.api_requests, 3);
      assert.equal(b.api_keys[hA].metrics.api_requests, 2);
      assert.deepEqual(b.api_keys[hA].metadata, { key_alias: 'alias-a', team_id: 'act-ta' });
      assert.equal(b.api_keys[hB].metrics.completion_tokens, 10);
      assert.equal(b.entities['act-ua'].metrics.api_requests, 2);
      assert.equal(b.entities['act-ub'].metrics.api_requests, 1);
      // filters: user, key (plaintext or hash), model
      let f = await q(MASTER_KEY, '/user/daily/activity', { ...day, user_id: 'act-ub' });
      assert.equal(f.json.metadata.total_api_requests, 1, f.text);
      f = await q(MASTER_KEY, '/user/daily/activity', { ...day, api_key: kA });
      assert.equal(f.json.metadata.total_api_requests, 2, f.text);
      f = await q(MASTER_KEY, '/user/daily/activity', { ...day, api_key: hB });
      assert.equal(f.json.metadata.total_api_requests, 1, f.text);
      f = await q(MASTER_KEY, '/user/daily/activity', { ...day, model: 'other' });
      assert.deepEqual([f.json.results.length, f.json.metadata.total_api_requests], [0, 0], f.text);
      // a range before the calls is empty
      f = await q(MASTER_KEY, '/user/daily/activity', { start_date: '2020-01-01', end_date: '2020-01-31' });
      assert.deepEqual(f.json.results, [], f.text);
    });

    test('paging: a page is a page of grouped rows', async () => {
      const p1 = await q(MASTER_KEY, '/user/daily/activity', { ...day, page_size: 1 });
      assert.equal(p1.status, 200, p1.text);
      assert.deepEqual([p1.json.metadata.page, p1.json.metadata.total_pages, p1.json.metadata.has_more], [1, 2, true]);
      assert.equal(p1.json.metadata.total_api_requests, 3, 'totals cover the whole range');
      const p2 = await q(MASTER_KEY, '/user/daily/activity', { ...day, page_size: 1, page: 2 });
      assert.equal(p2.json.metadata.has_more, false);
      const keys = [p1, p2].map((p) => Object.keys(p.json.results[0].breakdown.api_keys)[0]).sort();
      assert.deepEqual(keys, [hA, hB].sort(), 'each group on exactly one page');
    });

    test('team and tag activity (admin)', async () => {
      let r = await q(MASTER_KEY, '/team/daily/activity', { ...day, team_ids: 'act-ta' });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.metadata.total_api_requests, 2);
      assert.equal(r.json.results[0].breakdown.entities['act-ta'].metrics.api_requests, 2);
      r = await q(MASTER_KEY, '/team/daily/activity', { ...day, team_ids: 'act-ta, act-tb' });
      assert.equal(r.json.metadata.total_api_requests, 3);
      r = await q(MASTER_KEY, '/team/daily/activity', { ...day, exclude_team_ids: 'act-ta' });
      assert.equal(r.json.metadata.total_api_requests, 1);
      r = await q(MASTER_KEY, '/tag/daily/activity', { ...day, tags: 'tag-a' });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.metadata.total_api_requests, 2);
      near(r.json.metadata.total_spend, 0.02, 'tag-a spend');
      r = await q(MASTER_KEY, '/tag/daily/activity', day);
      assert.deepEqual(Object.keys(r.json.results[0].breakdown.entities).sort(), ['tag-a', 'tag-b']);
    });

    test('an internal user sees only their own, and is refused another\'s', async () => {
      let r = await q(kA, '/user/daily/activity', day);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.metadata.total_api_requests, 2, 'own user only');
      assert.deepEqual(Object.keys(r.json.results[0].breakdown.entities), ['act-ua']);
      r = await q(kA, '/user/daily/activity', { ...day, user_id: 'act-ub' });
      assert.equal(r.status, 403, r.text);
      assert.ok(r.json.error.message, r.text);
      r = await q(kA, '/user/daily/activity', { ...day, user_id: 'act-ua' });
      assert.equal(r.status, 200, r.text);
      // teams: only theirs; naming another's is refused, even among theirs
      r = await q(kA, '/team/daily/activity', day);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.metadata.total_api_requests, 2);
      assert.deepEqual(Object.keys(r.json.results[0].breakdown.entities), ['act-ta']);
      r = await q(kA, '/team/daily/activity', { ...day, team_ids: 'act-tb' });
      assert.equal(r.status, 403, r.text);
      r = await q(kA, '/team/daily/activity', { ...day, team_ids: 'act-ta,act-tb' });
      assert.equal(r.status, 403, r.text);
      // tags: rows of their own keys only
      r = await q(kB, '/tag/daily/activity', day);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.metadata.total_api_requests, 1);
      assert.deepEqual(Object.keys(r.json.results[0].breakdown.entities), ['tag-b']);
      r = await q(kB, '/tag/daily/activity', { ...day, tags: 'tag-a' });
      assert.equal(r.json.metadata.total_api_requests, 0, 'another\'s tag rows stay hidden');
      // a key filter cannot reach across either
      r = await q(kB, '/user/daily/activity', { ...day, api_key: hA });
      assert.equal(r.json.metadata.total_api_requests, 0, r.text);
    });

    test('bad input: LiteLLM\'s statuses, never a crash', async () => {
      let r = await q(MASTER_KEY, '/user/daily/activity', { start_date: today });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.detail.error, 'Please provide start_date and end_date');
      for (const bad of ['2026-02-30', '2026-13-01', '26-01-01', '2026-01-01T00:00', "2026-01-01' OR 1=1 --", '']) {
        r = await q(MASTER_KEY, '/team/daily/activity', { start_date: bad, end_date: today });
        assert.equal(r.status, 400, `${bad}: ${r.text}`);
      }
      r = await q(MASTER_KEY, '/user/daily/activity', { ...day, page_size: 0 });
      assert.equal(r.status, 422, r.text);
      r = await q(MASTER_KEY, '/user/daily/activity', { ...day, page_size: 1001 });
      assert.equal(r.status, 422, r.text);
      r = await q(MASTER_KEY, '/user/daily/activity', { ...day, page: 'x' });
      assert.equal(r.status, 422, r.text);
      const many = Array.from({ length: 65 }, (_, i) => `t${i}`).join(',');
      r = await q(MASTER_KEY, '/team/daily/activity', { ...day, team_ids: many });
      assert.equal(r.status, 400, r.text);
      r = await q(MASTER_KEY, '/tag/daily/activity', { ...day, tags: "x') OR ('1'='1" });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.metadata.total_api_requests, 0, 'a quote is data, not SQL');
      r = await api(g.url, 'sk-not-a-key', 'GET', `/user/daily/activity?${new URLSearchParams(day)}`);
      assert.equal(r.status, 401, r.text);
    });
  });
}
