// spend.test.mjs - exact spend (issue 9), on the embedded SQLite database and
// on PostgreSQL: the cost of each call (deployment prices and the built-in
// price table) in x-litellm-response-cost, one LiteLLM_SpendLogs row per
// request with LiteLLM's fields, the key's spend equal to the sum; budget
// reservations (50 concurrent requests against a budget that fits 10.5 calls:
// 10 whole reservations and an 11th cut to what is left pass, so spend passes
// the budget by less than one call - LiteLLM's contract with a bounded
// overshoot, docs/keys.md) on one instance, with the built-in mock model, and
// on two instances sharing one PostgreSQL; SIGTERM flushes pending rows.
//
// Prices: "priced" costs 0 per input and 0.001 per output token; with
// max_tokens 10 the mock upstream answers exactly 10 completion tokens (its
// reply has 18 words, cut at max_tokens), so each call's worst case equals its
// actual cost, 0.01, and a budget of 0.105 admits exactly 11 calls whatever the
// timing (10 reserve 0.01 each, the 11th the 0.005 left; 0.105 rather than
// 0.1 keeps float sums off the boundary). The mock
// answers after 300 ms so that all 50 calls are in flight together: without
// reservations every one would pass the spent-so-far check.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import {
  MASTER_KEY, api, chatBody, keysConfig, postJSON, sha256hex, startGateway, startMock, until,
} from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

const run = promisify(execFile);
let mock, pg;

before(async () => {
  mock = await startMock();
  pg = await startPostgres();
});
after(async () => {
  await mock?.stop();
  await pg?.stop();
});

const chat = (g, key, model, extra = {}) =>
  postJSON(`${g.url}/v1/chat/completions`, chatBody(model, extra), { authorization: `Bearer ${key}` });
const slow = { mock: { delay_ms: 300 } };
const near = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} != ${b}`);

async function genKey(g, body = {}) {
  const r = await api(g.url, MASTER_KEY, 'POST', '/key/generate', body);
  assert.equal(r.status, 200, r.text);
  return r.json.key;
}
async function keySpend(g, key) {
  const r = await api(g.url, MASTER_KEY, 'GET', `/key/info?key=${key}`);
  assert.equal(r.status, 200, r.text);
  return r.json.info.spend;
}
async function spendRows(g, hash) {
  const r = await api(g.url, MASTER_KEY, 'GET', `/spend/logs?api_key=${hash}`);
  assert.equal(r.status, 200, r.text);
  assert.ok(Array.isArray(r.json), r.text);
  return r.json;
}
/** Wait until the key has n spend rows (those passing `which`; at most 10 s); returns all its rows. */
async function rowsFor(g, key, n, which = () => true) {
  const hash = await sha256hex(key);
  let rows = [];
  await until(async () => (rows = await spendRows(g, hash)).filter(which).length >= n, 10000);
  return rows;
}

/** 50 concurrent calls over the instances in gs, key budget 0.105: exactly 11 pass. */
async function fiftyVsTen(gs) {
  const key = await genKey(gs[0], { max_budget: 0.105 });
  const res = await Promise.all(Array.from({ length: 50 }, (_, i) =>
    chat(gs[i % gs.length], key, 'priced', { max_tokens: 10, ...slow })));
  const ok = res.filter((r) => r.status === 200);
  const statuses = res.map((r) => r.status).join(',');
  assert.ok(ok.length <= 11, `${ok.length} of 50 passed a budget that fits 10.5: ${statuses}`);
  assert.equal(ok.length, 11, `a budget that fits 10.5 let ${ok.length} through: ${statuses}`);
  for (const r of res.filter((x) => x.status !== 200)) {
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json?.error?.type, 'budget_exceeded', r.text);
    assert.match(r.json.error.message, /Budget has been exceeded!/);
  }
  for (const r of ok) near(Number(r.headers.get('x-litellm-response-cost')), 0.01, 'cost of a 10-token call');
  // settled: the key spent exactly what the 11 calls cost (over the budget by
  // less than one call), and wrote 11 success rows (refusals may be logged as
  // LiteLLM does: status "failure", spend 0)
  assert.ok(await until(async () => Math.abs((await keySpend(gs[0], key)) - 0.11) < 1e-9, 10000),
    `key spend settles at 0.11: ${await keySpend(gs[0], key)}`);
  const rows = await rowsFor(gs[0], key, 11, (x) => x.status === 'success');
  const good = rows.filter((x) => x.status === 'success');
  assert.equal(good.length, 11, JSON.stringify(rows.map((x) => [x.status, x.spend])));
  assert.ok(rows.length <= 50);
  for (const x of rows.filter((y) => y.status !== 'success')) {
    assert.equal(x.status, 'failure');
    assert.equal(x.spend, 0);
  }
  return key;
}

for (const backend of ['sqlite', 'postgres']) {
  describe(`on ${backend}`, () => {
    let gw, dbUrl;
    before(async () => {
      dbUrl = backend === 'postgres' ? await pg.createDb('spend_test') : null;
      gw = await startGateway(keysConfig(mock.base, { databaseUrl: dbUrl }), { workers: 2 });
    });
    after(async () => { await gw?.stop(); });

    test('one spend row per request; cost = usage x the deployment\'s prices; key spend = the sum', async () => {
      const key = await genKey(gw, { key_alias: 'rows' });
      const hash = await sha256hex(key);
      const sent = [];
      for (const mt of [1, 3, 5, 10, undefined]) {
        const r = await chat(gw, key, 'priced', mt ? { max_tokens: mt } : {});
        assert.equal(r.status, 200, r.text);
        const u = r.json.usage;
        assert.equal(u.completion_tokens, mt ?? 18);
        const cost = Number(r.headers.get('x-litellm-response-cost'));
        near(cost, u.completion_tokens * 0.001, 'x-litellm-response-cost');
        sent.push({ id: r.json.id, cid: r.headers.get('x-litellm-call-id'), cost, u });
      }
      const rows = await rowsFor(gw, key, sent.length);
      assert.equal(rows.length, sent.length, JSON.stringify(rows));
      for (const s of sent) {
        const row = rows.find((x) => x.request_id === s.id || x.request_id === s.cid);
        assert.ok(row, `a row with request_id = the response id ${s.id} (or the call id ${s.cid}): ${JSON.stringify(rows.map((x) => x.request_id))}`);
        assert.equal(row.api_key, hash);
        assert.equal(row.model_group, 'priced');
        assert.equal(row.call_type, 'acompletion');
        assert.equal(row.status, 'success');
        assert.equal(row.prompt_tokens, s.u.prompt_tokens);
        assert.equal(row.completion_tokens, s.u.completion_tokens);
        assert.equal(row.total_tokens, s.u.total_tokens);
        near(row.spend, s.cost, 'row spend');
      }
      const total = sent.reduce((a, s) => a + s.cost, 0);
      assert.ok(await until(async () => Math.abs((await keySpend(gw, key)) - total) < 1e-9), 'key spend = sum of rows');
      if (backend === 'postgres') {
        const [t] = await pg.psql(`SELECT spend FROM "LiteLLM_VerificationToken" WHERE token = '${hash}'`, dbUrl);
        near(t.spend, total, 'LiteLLM_VerificationToken.spend');
        const [c] = await pg.psql(`SELECT count(*)::int AS n, sum(spend) AS s FROM "LiteLLM_SpendLogs" WHERE api_key = '${hash}'`, dbUrl);
        assert.equal(c.n, sent.length);
        near(c.s, total, 'sum of LiteLLM_SpendLogs.spend');
      }
    });

    test('cost from the built-in price table: openai/gpt-4o = prompt x 2.5e-6 + completion x 1e-5 (chat, stream, embeddings)', async () => {
      const key = await genKey(gw);
      const want = [];
      for (const mt of [4, 12]) {
        const r = await chat(gw, key, 'gpt-4o', { max_tokens: mt });
        assert.equal(r.status, 200, r.text);
        const u = r.json.usage;
        const cost = u.prompt_tokens * 2.5e-6 + u.completion_tokens * 1e-5;
        near(Number(r.headers.get('x-litellm-response-cost')), cost, 'x-litellm-response-cost (gpt-4o)');
        want.push({ id: r.json.id, cid: r.headers.get('x-litellm-call-id'), cost });
      }
      // a stream: its cost comes from the usage chunk
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(chatBody('gpt-4o', { stream: true, stream_options: { include_usage: true } })),
      });
      assert.equal(res.status, 200);
      const scid = res.headers.get('x-litellm-call-id');
      let usage = null, sid = null;
      for (const line of (await res.text()).split('\n')) {
        if (!line.startsWith('data: {')) continue;
        const ch = JSON.parse(line.slice(6));
        sid ??= ch.id;
        if (ch.usage) usage = ch.usage;
      }
      assert.ok(usage, 'usage chunk');
      want.push({ id: sid, cid: scid, cost: usage.prompt_tokens * 2.5e-6 + usage.completion_tokens * 1e-5 });
      // embeddings: text-embedding-3-small at 2e-8 per input token
      const e = await postJSON(`${gw.url}/v1/embeddings`, { model: 'text-embedding-3-small', input: ['one two three'] },
        { authorization: `Bearer ${key}` });
      assert.equal(e.status, 200, e.text);
      const ecost = e.json.usage.prompt_tokens * 2e-8;
      near(Number(e.headers.get('x-litellm-response-cost')), ecost, 'embedding cost');
      want.push({ id: null, cost: ecost, call_type: 'aembedding' });

      const rows = await rowsFor(gw, key, want.length);
      assert.equal(rows.length, want.length, JSON.stringify(rows));
      for (const w of want.filter((x) => x.id)) {
        const row = rows.find((x) => x.request_id === w.id || x.request_id === w.cid);
        assert.ok(row, `row for ${w.id} / ${w.cid}: ${JSON.stringify(rows.map((x) => x.request_id))}`);
        near(row.spend, w.cost, `row spend of ${w.id}`);
        assert.equal(row.model_group, 'gpt-4o');
      }
      const er = rows.find((x) => x.call_type === 'aembedding');
      assert.ok(er, `an aembedding row: ${JSON.stringify(rows.map((x) => x.call_type))}`);
      near(er.spend, ecost, 'embedding row spend');
      const total = want.reduce((a, w) => a + w.cost, 0);
      assert.ok(await until(async () => Math.abs((await keySpend(gw, key)) - total) < 1e-9),
        `key spend = ${total}: ${await keySpend(gw, key)}`);
    });

    test('LiteLLM\'s request_id: the provider\'s response id (chatcmpl-...), not the call id', async () => {
      const key = await genKey(gw);
      const r = await chat(gw, key, 'priced', { max_tokens: 2 });
      assert.equal(r.status, 200, r.text);
      const rows = await rowsFor(gw, key, 1);
      assert.equal(rows.length, 1);
      assert.equal(rows[0].request_id, r.json.id, `request_id ${rows[0].request_id}; call id ${r.headers.get('x-litellm-call-id')}`);
    });

    test('50 concurrent requests against a budget that fits 10.5: exactly 11 pass (mock upstream, 2 workers)', async () => {
      await fiftyVsTen([gw]);
    });

    test('the same with the built-in mock model (prompt-priced: worst case = actual cost)', async () => {
      // one call's cost: prompt tokens x 0.0001 (output is free)
      const probe = await chat(gw, MASTER_KEY, 'builtin');
      assert.equal(probe.status, 200, probe.text);
      const c = Number(probe.headers.get('x-litellm-response-cost'));
      near(c, probe.json.usage.prompt_tokens * 0.0001, 'built-in mock cost');
      assert.ok(c > 0);
      const key = await genKey(gw, { max_budget: c * 10.5 });
      const res = await Promise.all(Array.from({ length: 50 }, () => chat(gw, key, 'builtin')));
      const ok = res.filter((r) => r.status === 200).length;
      assert.ok(ok <= 11, `${ok} of 50 passed a budget that fits 10.5`);
      assert.ok(ok >= 10, `a budget that fits 10.5 let only ${ok} through`);
      assert.ok(res.every((r) => r.status === 200 || (r.status === 400 && r.json?.error?.type === 'budget_exceeded')),
        res.map((r) => `${r.status}`).join(','));
      assert.ok(await until(async () => Math.abs((await keySpend(gw, key)) - ok * c) < 1e-9),
        `key spend settles at ${ok} x ${c}: ${await keySpend(gw, key)}`);
    });

    test('a writer behind its database holds new calls instead of dropping rows (switchyard_spend_queue_max)', async () => {
      // queue cap 8, batches every 0.5 s: 40 concurrent calls would overflow it 5 times over;
      // past half the cap calls wait for the writer, so every one is answered and recorded
      const db = backend === 'postgres' ? { databaseUrl: dbUrl } : {};
      const env = backend === 'sqlite' ? { SWITCHYARD_DB: path.join(gw.dir, 'backlog.db') } : {};
      const g2 = await startGateway(keysConfig(mock.base, {
        ...db, general: '  proxy_batch_write_at: 0.5\n  switchyard_spend_queue_max: 8\n',
      }).replace('  proxy_batch_write_at: 0.1\n', ''), { env });
      try {
        const key = await genKey(g2);
        const hash = await sha256hex(key);
        const res = await Promise.all(Array.from({ length: 40 }, () => chat(g2, key, 'priced', { max_tokens: 3 })));
        assert.deepEqual(res.map((r) => r.status), res.map(() => 200));
        const q = (sql) => (backend === 'postgres' ? pg.psql(sql, dbUrl)
          : run('sqlite3', ['-json', env.SWITCHYARD_DB, sql]).then(({ stdout }) => JSON.parse(stdout || '[]')));
        const count = async () => Number((await q(`SELECT count(*) AS n FROM "LiteLLM_SpendLogs" WHERE api_key = '${hash}'`))[0].n);
        assert.ok(await until(async () => (await count()) === 40), `40 rows, got ${await count()}`);
        assert.doesNotMatch(g2.log(), /dropped \d+ spend rows/);
      } finally {
        await g2.stop();
      }
    });

    test('SIGTERM flushes pending spend rows before exit 0', async () => {
      // a second instance on the same database whose writer would wait 60 s
      const db = backend === 'postgres' ? { databaseUrl: dbUrl } : {};
      const env = backend === 'sqlite' ? { SWITCHYARD_DB: path.join(gw.dir, 'sigterm.db') } : {};
      const g2 = await startGateway(keysConfig(mock.base, { ...db, general: '  proxy_batch_write_at: 60\n' })
        .replace('  proxy_batch_write_at: 0.1\n', ''), { env });
      let code;
      try {
        const key = await genKey(g2);
        const hash = await sha256hex(key);
        let total = 0;
        for (let i = 0; i < 7; i++) {
          const r = await chat(g2, key, 'priced', { max_tokens: 3 });
          assert.equal(r.status, 200, r.text);
          total += Number(r.headers.get('x-litellm-response-cost'));
        }
        code = await g2.stop('SIGTERM');
        assert.equal(code, 0);
        const q = (sql) => (backend === 'postgres' ? pg.psql(sql, dbUrl)
          : run('sqlite3', ['-json', env.SWITCHYARD_DB, sql]).then(({ stdout }) => JSON.parse(stdout || '[]')));
        const [c] = await q(`SELECT count(*) AS n, sum(spend) AS s FROM "LiteLLM_SpendLogs" WHERE api_key = '${hash}'`);
        assert.equal(Number(c.n), 7, 'every row written before exit');
        near(Number(c.s), total, 'their spend');
        const [t] = await q(`SELECT spend FROM "LiteLLM_VerificationToken" WHERE token = '${hash}'`);
        near(Number(t.spend), total, 'the key\'s spend');
      } finally {
        if (code === undefined) await g2.stop('SIGKILL');
      }
    });
  });
}

describe('two instances sharing one PostgreSQL', () => {
  let a, b;
  before(async () => {
    const url = await pg.createDb('spend_shared');
    const cfg = keysConfig(mock.base, { databaseUrl: url });
    a = await startGateway(cfg, { workers: 2 });
    b = await startGateway(cfg, { workers: 2 });
  });
  after(async () => { await a?.stop(); await b?.stop(); });

  test('a key generated on A works on B at once; its info on B shows A\'s row', async () => {
    const r = await api(a.url, MASTER_KEY, 'POST', '/key/generate', { key_alias: 'shared', models: ['priced'] });
    assert.equal(r.status, 200, r.text);
    const key = r.json.key;
    const c = await chat(b, key, 'priced', { max_tokens: 2 });
    assert.equal(c.status, 200, c.text);
    const i = await api(b.url, MASTER_KEY, 'GET', `/key/info?key=${key}`);
    assert.equal(i.json.info.key_alias, 'shared');
    const d = await chat(b, key, 'other');
    assert.equal(d.status, 401, d.text);
  });

  test('50 concurrent requests split over both instances, budget fits 10.5: exactly 11 pass', async () => {
    await fiftyVsTen([a, b]);
  });
});
