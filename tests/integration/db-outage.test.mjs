// db-outage.test.mjs - PostgreSQL stopped mid-load, then restarted (issue 9).
// With general_settings.allow_requests_on_db_unavailable: true, requests from
// keys already cached keep flowing while the database is down (budget
// reservations and key reloads cannot reach it); their spend rows queue in
// the spend writer and are written when the database returns: nothing is lost
// (rows = requests made, key spend = their sum). Waits are bounded polls.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  MASTER_KEY, api, chatBody, keysConfig, postJSON, sha256hex, sleep, startGateway, startMock, until,
} from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

let mock, pg, gw, url;

before(async () => {
  mock = await startMock();
  pg = await startPostgres();
  url = await pg.createDb('outage');
  gw = await startGateway(keysConfig(mock.base, {
    databaseUrl: url,
    general: '  allow_requests_on_db_unavailable: true\n  user_api_key_cache_ttl: 1\n',
  }), { workers: 2 });
});
after(async () => {
  await gw?.stop();
  await mock?.stop();
  await pg?.stop();
});

const chat = (key) => postJSON(`${gw.url}/v1/chat/completions`, chatBody('priced', { max_tokens: 2 }),
  { authorization: `Bearer ${key}` });

test('PostgreSQL killed mid-load and restarted: every request of a cached key passes, no spend row is lost', async () => {
  // a budget far above what the test spends: the reservation path runs on every call
  const g = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { max_budget: 100 });
  assert.equal(g.status, 200, g.text);
  const key = g.json.key;
  const hash = await sha256hex(key);
  const warm = await chat(key);
  assert.equal(warm.status, 200, warm.text);

  let stop = false;
  const results = [];
  const load = async () => {
    while (!stop) {
      const r = await chat(key);
      results.push({ status: r.status, text: r.text, cost: Number(r.headers.get('x-litellm-response-cost')) });
    }
  };
  const runs = [load(), load(), load(), load()];
  await sleep(300);
  await pg.halt();
  const down0 = results.length;
  // longer than the key cache's TTL (1 s): entries go stale while the DB is down
  await sleep(1800);
  const duringOutage = results.length - down0;
  await pg.restart();
  await sleep(700);
  stop = true;
  await Promise.all(runs);

  const bad = results.filter((r) => r.status !== 200);
  assert.equal(bad.length, 0, `refused during the outage: ${bad.slice(0, 3).map((r) => `${r.status} ${r.text}`).join('\n')}`);
  assert.ok(duringOutage > 10, `requests kept flowing while the DB was down (${duringOutage})`);

  const made = results.length + 1; // + the warm-up call
  const total = results.reduce((a, r) => a + r.cost, Number(warm.headers.get('x-litellm-response-cost')));
  let n = -1;
  const done = await until(async () => {
    try {
      [{ n }] = await pg.psql(`SELECT count(*)::int AS n FROM "LiteLLM_SpendLogs" WHERE api_key = '${hash}'`, url);
    } catch { return false; }
    return n >= made;
  }, 30000);
  assert.ok(done, `spend rows: ${n} of ${made} requests`);
  assert.equal(n, made, 'exactly one row per request');
  let spend = null;
  const settled = await until(async () => {
    [{ spend }] = await pg.psql(`SELECT spend FROM "LiteLLM_VerificationToken" WHERE token = '${hash}'`, url);
    return Math.abs(spend - total) < 1e-9;
  }, 10000);
  const [logged] = await pg.psql(`SELECT sum(spend) AS s FROM "LiteLLM_SpendLogs" WHERE api_key = '${hash}'`, url);
  assert.ok(Math.abs(logged.s - total) < 1e-9, `sum of the rows ${logged.s} = the calls' cost ${total}`);
  assert.ok(settled, `the key's spend ${spend} = the sum of the calls ${total} (${made} calls of ${total / made})`);

  // and the instance is whole again: a new key works
  const g2 = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', {});
  assert.equal(g2.status, 200, g2.text);
  assert.equal((await chat(g2.json.key)).status, 200);
});
