// budget-crash.test.mjs - a crash mid-load leaves no budget reservation behind
// (docs/keys.md "Budgets"). Two instances share one PostgreSQL; a key with a
// budget is called on both under load, each call reserving its worst case
// (4.096: no max_tokens) and costing 0.018. Mid-load one instance is killed
// with SIGKILL (its reservations and queued spend rows die with it) and
// PostgreSQL is halted and restarted (reservations whose COMMIT outcome is
// unknown, spend batches retried). Afterwards the key's spend column must
// equal the sum of its LiteLLM_SpendLogs rows: the dead instance's
// "SwitchyardReservation" rows are reclaimed by the survivor once the dead
// one's lease lapses (15 s), the survivor's in-doubt ones when the database
// is back. Waits are bounded polls; no timing is asserted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  MASTER_KEY, api, chatBody, keysConfig, postJSON, sha256hex, sleep, startGateway, startMock, until,
} from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

let mock, pg, url, a, b;

before(async () => {
  mock = await startMock();
  pg = await startPostgres();
  url = await pg.createDb('budget_crash');
  const cfg = keysConfig(mock.base, { databaseUrl: url, general: '  allow_requests_on_db_unavailable: true\n' });
  a = await startGateway(cfg, { workers: 2 });
  b = await startGateway(cfg, { workers: 2 });
});
after(async () => {
  await a?.stop('SIGKILL');
  await b?.stop();
  await mock?.stop();
  await pg?.stop();
});

const chat = (g, key) => postJSON(`${g.url}/v1/chat/completions`, chatBody('priced', { mock: { delay_ms: 150 } }),
  { authorization: `Bearer ${key}` }).catch((e) => ({ status: 0, text: String(e), headers: new Headers() }));

async function state(hash) {
  const [k] = await pg.psql(`SELECT spend FROM "LiteLLM_VerificationToken" WHERE token = '${hash}'`, url);
  const [l] = await pg.psql(`SELECT count(*)::int AS n, coalesce(sum(spend), 0) AS s FROM "LiteLLM_SpendLogs" WHERE api_key = '${hash}'`, url);
  const [r] = await pg.psql(`SELECT count(*)::int AS n FROM "SwitchyardReservation" WHERE kind = 0 AND ent_id = '${hash}'`, url);
  return { spend: Number(k.spend), rows: l.n, sum: Number(l.s), open: r.n };
}

test('one instance SIGKILLed and PostgreSQL restarted mid-load: key spend = the sum of its spend rows', async () => {
  const g = await api(a.url, MASTER_KEY, 'POST', '/key/generate', { max_budget: 1000 });
  assert.equal(g.status, 200, g.text);
  const key = g.json.key;
  const hash = await sha256hex(key);
  assert.equal((await chat(b, key)).status, 200);

  let stopA = false, stopB = false, okA = 0, okB = 0;
  const load = async (gw, stop, inc) => {
    while (!stop()) {
      const r = await chat(gw, key);
      if (r.status === 200) inc();
      if (r.status === 0) await sleep(20); // the instance is gone
    }
  };
  const runs = [];
  for (let i = 0; i < 6; i++) {
    runs.push(load(a, () => stopA, () => okA++));
    runs.push(load(b, () => stopB, () => okB++));
  }
  // A dies with calls in flight (their reservations taken, their rows unwritten)
  assert.ok(await until(async () => okA >= 20, 20000), `A served ${okA}`);
  await a.stop('SIGKILL');
  stopA = true;
  // PostgreSQL dies under B's load and comes back
  const b0 = okB;
  assert.ok(await until(async () => okB >= b0 + 10, 20000), `B served ${okB - b0} after the kill`);
  await pg.halt();
  await sleep(500);
  await pg.restart();
  const b1 = okB;
  assert.ok(await until(async () => okB >= b1 + 10, 30000), `B served ${okB - b1} after the restart`);
  stopB = true;
  await Promise.all(runs);

  // the dead instance held reservations: they are in the spend column until reclaimed
  const first = await state(hash);
  assert.ok(first.open > 0, `the killed instance's calls in flight left reservations: ${JSON.stringify(first)}`);
  let s = null;
  const settled = await until(async () => {
    try { s = await state(hash); } catch { return false; }
    return s.open === 0 && Math.abs(s.spend - s.sum) < 1e-9;
  }, 60000);
  assert.ok(settled, `after recovery: ${JSON.stringify(s)}`);
  assert.match(b.log(), /budget reservations of lapsed instances given back/);
  assert.ok(s.rows >= 30, `rows written: ${s.rows}`);
  assert.ok(Math.abs(s.sum - s.rows * 0.018) < 1e-9, `each row costs 0.018: ${JSON.stringify(s)}`);
  // and the survivor still admits the key
  assert.equal((await chat(b, key)).status, 200);
});
