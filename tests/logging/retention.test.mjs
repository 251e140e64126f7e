// retention.test.mjs - spend-log retention end to end
// (general_settings.maximum_spend_logs_retention_period / _interval, LiteLLM's
// SpendLogCleanup): old "LiteLLM_SpendLogs" rows go, in batches, off the
// request path, on SQLite and PostgreSQL; new rows stay; the interval is
// honoured; on PostgreSQL an instance whose peer holds the job's advisory lock
// skips its run, and two instances delete each row once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { startGateway, startMock, chatBody, postJSON, until, sleep, MASTER_KEY } from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

const run = promisify(execFile);
const LOCK_KEY = '23460632952325454'; // SY_RETENTION_LOCK_KEY (spend/spend.h)
const auth = { authorization: `Bearer ${MASTER_KEY}` };

let mock, pg;
before(async () => { mock = await startMock(); pg = await startPostgres(); });
after(async () => { await mock?.stop(); await pg?.stop(); });

function config(base, { dbUrl = null, period = '7d', interval = 1 } = {}) {
  return `
model_list:
  - model_name: m
    litellm_params: {model: openai/m, api_base: "${base}", api_key: sk-up}
general_settings:
  master_key: ${MASTER_KEY}
  proxy_batch_write_at: 0.1
${dbUrl ? `  database_url: "${dbUrl}"\n` : ''}  maximum_spend_logs_retention_period: "${period}"
  maximum_spend_logs_retention_interval: ${interval}
`;
}

/** Query the gateway's database: sqlite3 -json on the file, psql on PostgreSQL. */
function querier(gw, dbUrl) {
  return dbUrl ? (sql) => pg.psql(sql, dbUrl)
    : (sql) => run('sqlite3', ['-cmd', '.timeout 5000', '-json', `${gw.dir}/switchyard.db`, sql])
      .then(({ stdout }) => JSON.parse(stdout || '[]'));
}

/** n rows whose startTime is `days` days ago, ids prefix-i. */
function oldRowsSql(prefix, n, days, postgres) {
  if (postgres)
    return `INSERT INTO "LiteLLM_SpendLogs" ("request_id", "call_type", "startTime", "endTime")
      SELECT '${prefix}-' || g, 'acompletion', now() AT TIME ZONE 'UTC' - interval '${days} days',
             now() AT TIME ZONE 'UTC' - interval '${days} days' FROM generate_series(1, ${n}) g`;
  const ts = new Date(Date.now() - days * 86400e3).toISOString();
  return `WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ${n})
    INSERT INTO "LiteLLM_SpendLogs" ("request_id", "call_type", "startTime", "endTime")
    SELECT '${prefix}-' || i, 'acompletion', '${ts}', '${ts}' FROM g`;
}

async function metric(gw, name) {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  const m = new RegExp(`^${name.replace(/[{}"]/g, (c) => `\\${c}`)} ([0-9.]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

async function count(q, where = '1 = 1') {
  return Number((await q(`SELECT count(*) AS n FROM "LiteLLM_SpendLogs" WHERE ${where}`))[0].n);
}

for (const backend of ['sqlite', 'postgres']) {
  test(`${backend}: rows older than the period are deleted in batches, new rows kept`, async () => {
    const dbUrl = backend === 'postgres' ? await pg.createDb('retention_basic') : null;
    // the first run comes one interval after start: a long interval first, to seed before it
    const gw = await startGateway(config(mock.base, { dbUrl, interval: 3 }));
    try {
      const q = querier(gw, dbUrl);
      for (let i = 0; i < 3; i++)
        assert.equal((await postJSON(`${gw.url}/v1/chat/completions`, chatBody('m'), auth)).status, 200);
      assert.ok(await until(async () => (await count(q)) === 3), 'the calls\' rows written');
      await q(oldRowsSql('old', 1500, 10, backend === 'postgres'));
      await q(oldRowsSql('recent', 4, 6, backend === 'postgres'));
      assert.equal(await count(q), 1507);
      assert.ok(await until(async () => (await count(q, `"request_id" LIKE 'old-%'`)) === 0, 20000),
        `old rows deleted; ${await count(q)} left`);
      assert.equal(await count(q), 7, 'the calls\' rows and the 6-day-old ones stay');
      assert.match(gw.log(), /spend-log retention: 1500 LiteLLM_SpendLogs rows older than 604800s deleted/);
      assert.equal(await metric(gw, 'switchyard_spend_logs_retention_deleted_total'), 1500);
      assert.ok((await metric(gw, 'switchyard_spend_logs_retention_runs_total{result="ran"}')) >= 1);
      // requests were served all along
      assert.equal((await postJSON(`${gw.url}/v1/chat/completions`, chatBody('m'), auth)).status, 200);
    } finally {
      assert.equal(await gw.stop(), 0);
    }
  });
}

test('sqlite: the interval is honoured (no run before it), the period 0 / absent keeps everything', async () => {
  const gw = await startGateway(config(mock.base, { interval: 3600 }));
  try {
    const q = querier(gw, null);
    await q(oldRowsSql('old', 10, 30, false));
    await sleep(1500);
    assert.equal(await count(q), 10, 'the first run is one interval after start');
    assert.equal(await metric(gw, 'switchyard_spend_logs_retention_runs_total{result="ran"}'), 0);
  } finally {
    assert.equal(await gw.stop(), 0);
  }
  const plain = await startGateway(`
model_list:
  - model_name: m
    litellm_params: {model: openai/m, api_base: "${mock.base}", api_key: sk-up}
general_settings:
  master_key: ${MASTER_KEY}
`);
  try {
    assert.equal(await metric(plain, 'switchyard_spend_logs_retention_deleted_total'), null, 'no job, no series');
  } finally {
    assert.equal(await plain.stop(), 0);
  }
});

test('postgres: a peer holding the lock makes this instance skip; released, the rows go; two instances delete each row once', async () => {
  const dbUrl = await pg.createDb('retention_lock');
  // another instance's session holds the job's advisory lock
  const holder = spawn('psql', ['-X', '-q', '-d', dbUrl], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  holder.stdout.on('data', (d) => { out += d; });
  holder.stdin.write(`SELECT pg_advisory_lock(${LOCK_KEY}); SELECT 'locked';\n`);
  const gw1 = await startGateway(config(mock.base, { dbUrl, interval: 0.5 }));
  let gw2 = null;
  try {
    assert.ok(await until(async () => out.includes('locked'), 10000), 'the lock is held');
    const q = querier(gw1, dbUrl);
    await q(oldRowsSql('old', 50, 30, true));
    assert.ok(await until(async () => (await metric(gw1, 'switchyard_spend_logs_retention_runs_total{result="skipped"}')) >= 2, 20000),
      'runs skipped while the lock is held');
    assert.equal(await count(q), 50, 'nothing deleted meanwhile');
    holder.stdin.end('SELECT pg_advisory_unlock_all();\n');
    assert.ok(await until(async () => (await count(q)) === 0, 20000), 'released: the rows go');

    // two instances on one database: each row deleted once
    gw2 = await startGateway(config(mock.base, { dbUrl, interval: 0.5 }));
    await q(oldRowsSql('more', 2500, 30, true));
    assert.ok(await until(async () => (await count(q)) === 0, 30000), 'all deleted');
    await sleep(1200);
    const d1 = await metric(gw1, 'switchyard_spend_logs_retention_deleted_total');
    const d2 = await metric(gw2, 'switchyard_spend_logs_retention_deleted_total');
    assert.equal(d1 + d2, 50 + 2500, `deleted ${d1} + ${d2}`);
    assert.equal(await metric(gw1, 'switchyard_spend_logs_retention_runs_total{result="failed"}'), 0);
    assert.equal(await metric(gw2, 'switchyard_spend_logs_retention_runs_total{result="failed"}'), 0);
  } finally {
    holder.kill();
    assert.equal(await gw1.stop(), 0);
    if (gw2) assert.equal(await gw2.stop(), 0);
  }
});
