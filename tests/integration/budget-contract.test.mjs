// budget-contract.test.mjs - budgets keep LiteLLM's contract with a bounded
// overshoot (docs/keys.md "Budgets"), on the embedded SQLite database and on
// PostgreSQL:
//
//   - sequential callers see LiteLLM exactly: a call is admitted while the
//     recorded spend is below the budget - even one whose worst case is far
//     above what is left - and the next one is refused with LiteLLM's text,
//     for the key, team, team member (max_budget_in_team), user, organization
//     and end user;
//   - concurrent callers overshoot by at most one call per budget (each
//     reservation is min(worst case, what is left));
//   - /key/update and /team/update raising a budget re-admit at once;
//   - a fallback to a dearer group is priced at that group before it is
//     called, and refused with the budget error when nothing is left.
//
// Prices: "priced" costs 0.001 per output token and nothing per input token.
// Without max_tokens the mock answers 18 completion tokens (0.018) while the
// worst case is the model's output limit (4096 tokens: 4.096), so a budget of
// 0.05 is below one call's worst case: the old reserve-the-worst-case rule
// refused its very first call.
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

const extra = (base) => `
  - model_name: cheap
    litellm_params: {model: "openai/cheap@status=500,delay_ms=300", api_base: "${base}", api_key: sk-up, input_cost_per_token: 0, output_cost_per_token: 0.001}
  - model_name: dear
    litellm_params: {model: openai/dear, api_base: "${base}", api_key: sk-up, input_cost_per_token: 0, output_cost_per_token: 0.01}
router_settings:
  num_retries: 0
  fallbacks: [{"cheap": ["dear"]}]
`;

const chat = (g, key, model, body = {}) =>
  postJSON(`${g.url}/v1/chat/completions`, chatBody(model, body), { authorization: `Bearer ${key}` });
const near = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} != ${b}`);
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function refused(r, text) {
  assert.equal(r.status, 400, r.text);
  assert.equal(r.json?.error?.type, 'budget_exceeded', r.text);
  assert.equal(r.json.error.param, null, r.text);
  assert.equal(r.json.error.code, '400', r.text);
  if (text) assert.match(r.json.error.message, text, r.text);
}

for (const backend of ['sqlite', 'postgres']) {
  describe(`on ${backend}`, () => {
    let gw, dbUrl;
    const A = (method, p, body) => api(gw.url, MASTER_KEY, method, p, body);
    async function gen(body = {}) {
      const r = await A('POST', '/key/generate', body);
      assert.equal(r.status, 200, r.text);
      return r.json.key;
    }
    async function keySpend(key) {
      const r = await A('GET', `/key/info?key=${key}`);
      assert.equal(r.status, 200, r.text);
      return r.json.info.spend;
    }
    async function rowsSum(key) {
      const r = await A('GET', `/spend/logs?api_key=${await sha256hex(key)}`);
      assert.equal(r.status, 200, r.text);
      return r.json.reduce((s, x) => s + x.spend, 0);
    }
    /** The key's rows add up to want (the writer commits them in batches; at most 10 s). */
    async function rowsReach(key, want) {
      let got = 0;
      await until(async () => Math.abs((got = await rowsSum(key)) - want) < 1e-9, 10000);
      near(got, want, 'sum of the key\'s rows');
    }
    /** Three calls of 0.018 pass a budget of 0.05 (spend 0, 0.018, 0.036 < 0.05); the fourth is refused. */
    async function threeThenRefused(key, body, text) {
      for (let i = 0; i < 3; i++) {
        const r = await chat(gw, key, 'priced', body);
        assert.equal(r.status, 200, `call ${i + 1}: ${r.text}`);
        near(Number(r.headers.get('x-litellm-response-cost')), 0.018, 'a call\'s cost');
      }
      refused(await chat(gw, key, 'priced', body), text);
    }

    before(async () => {
      dbUrl = backend === 'postgres' ? await pg.createDb('budget_contract') : null;
      gw = await startGateway(keysConfig(mock.base, { databaseUrl: dbUrl, extraModels: extra(mock.base) }), { workers: 2 });
    });
    after(async () => { await gw?.stop(); });

    test('key: admitted while spend < max_budget (a budget below one call\'s worst case too), then LiteLLM\'s refusal', async () => {
      const key = await gen({ max_budget: 0.05 });
      await threeThenRefused(key, {}, /^Budget has been exceeded! Current cost: 0\.054\d*, Max budget: 0\.05$/);
      // the refusal took nothing: spend is what the three calls cost, as their rows say
      assert.ok(await until(async () => Math.abs((await keySpend(key)) - 0.054) < 1e-9, 10000),
        `key spend ${await keySpend(key)}`);
      await rowsReach(key, 0.054);
    });

    test('team: LiteLLM\'s "Team=<id>" refusal after spend passes max_budget', async () => {
      const t = await A('POST', '/team/new', { team_alias: `ct-${backend}`, max_budget: 0.05 });
      assert.equal(t.status, 200, t.text);
      const tid = t.json.team_id;
      await threeThenRefused(await gen({ team_id: tid }), {},
        new RegExp(`^Budget has been exceeded! Team=${esc(tid)} Current cost: 0\\.054\\d*, Max budget: 0\\.05$`));
    });

    test('team member: max_budget_in_team, LiteLLM\'s "User=<u> in Team=<t>" refusal', async () => {
      const uid = `cm-${backend}`;
      const t = await A('POST', '/team/new', { team_alias: `cmt-${backend}` });
      assert.equal(t.status, 200, t.text);
      const tid = t.json.team_id;
      const m = await A('POST', '/team/member_add', { team_id: tid, member: { user_id: uid, role: 'user' }, max_budget_in_team: 0.05 });
      assert.equal(m.status, 200, m.text);
      await threeThenRefused(await gen({ team_id: tid, user_id: uid }), {},
        new RegExp(`^Budget has been exceeded! User=${esc(uid)} in Team=${esc(tid)} Current cost: 0\\.054\\d*, Max budget: 0\\.05$`));
    });

    test('user (personal key): LiteLLM\'s "ExceededBudget: User=<id>" refusal', async () => {
      const uid = `cu-${backend}`;
      assert.equal((await A('POST', '/user/new', { user_id: uid, max_budget: 0.05 })).status, 200);
      await threeThenRefused(await gen({ user_id: uid }), {},
        new RegExp(`^ExceededBudget: User=${esc(uid)} over budget\\. Spend=0\\.054\\d*, Budget=0\\.05$`));
    });

    test('organization: LiteLLM\'s "Organization=<id>" refusal', async () => {
      const o = await A('POST', '/organization/new', { organization_alias: `co-${backend}`, max_budget: 0.05 });
      assert.equal(o.status, 200, o.text);
      const oid = o.json.organization_id;
      const t = await A('POST', '/team/new', { team_alias: `cot-${backend}`, organization_id: oid });
      assert.equal(t.status, 200, t.text);
      await threeThenRefused(await gen({ team_id: t.json.team_id, organization_id: oid }), {},
        new RegExp(`^Budget has been exceeded! Organization=${esc(oid)} Current cost: 0\\.054\\d*, Max budget: 0\\.05$`));
    });

    test('end user (body `user`): LiteLLM\'s "ExceededBudget: End User=<id>" refusal; other requests unaffected', async () => {
      const cid = `ce-${backend}`;
      assert.equal((await A('POST', '/customer/new', { user_id: cid, max_budget: 0.05 })).status, 200);
      const key = await gen({});
      await threeThenRefused(key, { user: cid },
        new RegExp(`^ExceededBudget: End User=${esc(cid)} over budget\\. Spend=0\\.054\\d*, Budget=0\\.05$`));
      assert.equal((await chat(gw, key, 'priced')).status, 200, 'the same key without that end user');
    });

    test('50 concurrent calls: the overshoot is at most one call; spend = the sum of the rows', async () => {
      // worst case 4.096 each, budget 0.05: the first reservation takes all of
      // it, so of 50 calls in flight together exactly one passes
      const key = await gen({ max_budget: 0.05 });
      const res = await Promise.all(Array.from({ length: 50 }, () => chat(gw, key, 'priced', { mock: { delay_ms: 300 } })));
      const ok = res.filter((r) => r.status === 200);
      for (const r of res.filter((x) => x.status !== 200)) refused(r, /^Budget has been exceeded! Current cost: /);
      assert.equal(ok.length, 1, res.map((r) => r.status).join(','));
      // with worst case = actual cost (max_tokens 10: 0.01), a budget of 0.105: 10 whole + 1 cut
      const k2 = await gen({ max_budget: 0.105 });
      const res2 = await Promise.all(Array.from({ length: 50 }, () =>
        chat(gw, k2, 'priced', { max_tokens: 10, mock: { delay_ms: 300 } })));
      const ok2 = res2.filter((r) => r.status === 200).length;
      assert.equal(ok2, 11, res2.map((r) => r.status).join(','));
      assert.ok(await until(async () => Math.abs((await keySpend(k2)) - 0.11) < 1e-9, 10000), `spend ${await keySpend(k2)}`);
      assert.ok(0.11 - 0.105 <= 0.01, 'over the budget by less than one call');
      await rowsReach(k2, 0.11);
    });

    test('/key/update and /team/update raising a budget re-admit at once', async () => {
      const key = await gen({ max_budget: 0.01 });
      assert.equal((await chat(gw, key, 'priced')).status, 200);
      refused(await chat(gw, key, 'priced'), /^Budget has been exceeded! Current cost: 0\.018\d*, Max budget: 0\.01$/);
      let r = await A('POST', '/key/update', { key, max_budget: 1 });
      assert.equal(r.status, 200, r.text);
      r = await chat(gw, key, 'priced');
      assert.equal(r.status, 200, `after /key/update: ${r.text}`);

      const t = await A('POST', '/team/new', { team_alias: `cup-${backend}`, max_budget: 0.01 });
      const tid = t.json.team_id;
      const tk = await gen({ team_id: tid });
      assert.equal((await chat(gw, tk, 'priced')).status, 200);
      refused(await chat(gw, tk, 'priced'), new RegExp(`^Budget has been exceeded! Team=${esc(tid)} `));
      r = await A('POST', '/team/update', { team_id: tid, max_budget: 1 });
      assert.equal(r.status, 200, r.text);
      r = await chat(gw, tk, 'priced');
      assert.equal(r.status, 200, `after /team/update: ${r.text}`);
    });

    test('a fallback to a dearer group is priced at that group: admitted while something is left, then refused', async () => {
      // cheap fails after 300 ms (worst case 0.01 with max_tokens 10); dear costs 0.1
      const key = await gen({ max_budget: 0.05 });
      const r = await chat(gw, key, 'cheap', { max_tokens: 10 });
      assert.equal(r.status, 200, r.text); // the one call that may pass the budget
      near(Number(r.headers.get('x-litellm-response-cost')), 0.1, 'priced at dear');
      refused(await chat(gw, key, 'cheap', { max_tokens: 10 }), /^Budget has been exceeded! Current cost: 0\.1\d*, Max budget: 0\.05$/);
      // the case: many concurrent calls whose fallback is 10x dearer.
      // Each reserves 0.01 for cheap (22 x 0.01 fits 0.25), then needs 0.09
      // more for dear: the top-ups that do not fit are refused, so spend stays
      // within one call (0.1) of the budget instead of reaching 22 x 0.1.
      const k2 = await gen({ max_budget: 0.25 });
      const res = await Promise.all(Array.from({ length: 22 }, () => chat(gw, k2, 'cheap', { max_tokens: 10 })));
      const ok = res.filter((x) => x.status === 200).length;
      for (const x of res.filter((y) => y.status !== 200)) refused(x, /^Budget has been exceeded! Current cost: /);
      assert.ok(ok >= 1 && ok <= 3, `${ok} fallbacks passed: ${res.map((x) => x.status).join(',')}`);
      let spend = 0;
      assert.ok(await until(async () => Math.abs((spend = await keySpend(k2)) - ok * 0.1) < 1e-9, 10000),
        `spend ${spend} for ${ok} calls at 0.1`);
      assert.ok(spend <= 0.25 + 0.1 + 1e-9, `spend ${spend} passes the budget by more than one call`);
      await rowsReach(k2, spend);
    });
  });
}

describe('litellm_settings.max_budget (proxy-wide) and proxy_budget_rescheduler_{min,max}_time', () => {
  let gw;
  before(async () => {
    gw = await startGateway(keysConfig(mock.base, {
      general: '  proxy_budget_rescheduler_min_time: 1\n  proxy_budget_rescheduler_max_time: 2\n'
        + 'litellm_settings:\n  max_budget: 0.05\n  budget_duration: 30d\n',
    }));
  });
  after(async () => { await gw?.stop(); });

  test('the settings are read, not warned about as unsupported', () => {
    assert.doesNotMatch(gw.log(), /max_budget|budget_duration|proxy_budget_rescheduler/);
  });

  test('a key\'s budget_duration resets within the configured interval (1-2 s, not the default 60 s)', async () => {
    const g = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { max_budget: 0.01, budget_duration: '1s' });
    assert.equal(g.status, 200, g.text);
    assert.equal((await chat(gw, g.json.key, 'priced', { max_tokens: 2 })).status, 200); // 0.002
    assert.equal((await chat(gw, g.json.key, 'priced')).status, 200); // 0.018: spend 0.02
    refused(await chat(gw, g.json.key, 'priced', { max_tokens: 2 }), /^Budget has been exceeded! /);
    assert.ok(await until(async () => (await chat(gw, g.json.key, 'priced', { max_tokens: 1 })).status === 200, 15000),
      'admitted again once the reset job ran');
  });

  test('the proxy is refused once its spend passes max_budget, for every caller, with LiteLLM\'s text', async () => {
    let last;
    for (let i = 0; i < 10 && (last = await chat(gw, MASTER_KEY, 'priced')).status === 200; i++);
    refused(last, /^Budget has been exceeded! Current cost: 0\.0\d+, Max budget: 0\.05$/);
    const g = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', {});
    assert.equal(g.status, 200, 'the management API still works');
    refused(await chat(gw, g.json.key, 'priced', { max_tokens: 1 }), /^Budget has been exceeded! /);
  });

  test('a malformed budget_duration or a min above the max is a config error', async () => {
    for (const bad of ['litellm_settings:\n  max_budget: 1\n  budget_duration: monthly\n',
      '  proxy_budget_rescheduler_min_time: 10\n  proxy_budget_rescheduler_max_time: 5\n',
      'litellm_settings:\n  max_budget: -1\n']) {
      await assert.rejects(startGateway(keysConfig(mock.base, { general: bad })),
        (e) => /budget_duration|proxy_budget_rescheduler_min_time|max_budget/.test(e.message), bad);
    }
  });
});
