// litellm-db.test.mjs - switchyard on an existing LiteLLM database (issue 9):
// LiteLLM's own schema (tests/config/litellm-schema, built from its
// Prisma migrations) and sample rows loaded into a fresh PostgreSQL database.
// The sample key "sk-test-1234" (user user-test-1, team team-test-1, all
// models, max_budget 1.0) authenticates and is enforced as its row says; new
// spend lands in LiteLLM's tables with LiteLLM's column names; LiteLLM's
// tables keep their columns.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { MASTER_KEY, api, chatBody, keysConfig, postJSON, sha256hex, startGateway, startMock, until } from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

const SCHEMA_DIR = process.env.LITELLM_SCHEMA_DIR || path.join(path.dirname(new URL(import.meta.url).pathname), '../config/litellm-schema');
const KEY = 'sk-test-1234';
const HASH = 'eceadfbb53b79c09477666aa69fb6ac5994e1e25f7f0fe2f3c270c29717de213';
const haveSchema = fs.existsSync(path.join(SCHEMA_DIR, 'litellm-schema.sql'));

let mock, pg, gw, url, columnsBefore;

const COLUMNS = `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
  WHERE table_schema = 'public' AND table_name LIKE 'LiteLLM\\_%' ORDER BY 1, 2`;
const chat = (model, extra = {}) =>
  postJSON(`${gw.url}/v1/chat/completions`, chatBody(model, extra), { authorization: `Bearer ${KEY}` });

before(async () => {
  if (!haveSchema) return;
  mock = await startMock();
  pg = await startPostgres();
  url = await pg.createDb('litellm');
  await pg.psqlFile(path.join(SCHEMA_DIR, 'litellm-schema.sql'), url);
  await pg.psqlFile(path.join(SCHEMA_DIR, 'sample-rows.sql'), url);
  columnsBefore = await pg.psql(COLUMNS, url);
  // "dear": 0.01 per output token, so 10 tokens cost 0.1 and the key's 1.0 fits 10 calls
  gw = await startGateway(keysConfig(mock.base, {
    databaseUrl: url,
    extraModels: `  - model_name: dear
    litellm_params: {model: openai/dear, api_base: "${mock.base}", api_key: sk-up, input_cost_per_token: 0, output_cost_per_token: 0.01}`,
  }), { workers: 2 });
});
after(async () => {
  await gw?.stop();
  await mock?.stop();
  await pg?.stop();
});

test('starting on a LiteLLM database leaves LiteLLM\'s tables\' columns as they were', { skip: !haveSchema }, async () => {
  const now = await pg.psql(COLUMNS, url);
  assert.deepEqual(now, columnsBefore);
});

test('the sample key sk-test-1234 authenticates; /key/info reads its LiteLLM row', { skip: !haveSchema }, async () => {
  assert.equal(await sha256hex(KEY), HASH);
  const r = await chat('priced', { max_tokens: 2 });
  assert.equal(r.status, 200, r.text);
  const i = await api(gw.url, MASTER_KEY, 'GET', `/key/info?key=${KEY}`);
  assert.equal(i.status, 200, i.text);
  assert.equal(i.json.info.key_alias, 'test-key');
  assert.equal(i.json.info.key_name, 'sk-...1234');
  assert.equal(i.json.info.user_id, 'user-test-1');
  assert.equal(i.json.info.team_id, 'team-test-1');
  assert.equal(i.json.info.max_budget, 1);
  const t = await api(gw.url, MASTER_KEY, 'GET', '/team/info?team_id=team-test-1');
  assert.equal(t.status, 200, t.text);
  assert.equal(t.json.team_info.team_alias, 'test-team');
  const u = await api(gw.url, MASTER_KEY, 'GET', '/user/info?user_id=user-test-1');
  assert.equal(u.status, 200, u.text);
  assert.equal(u.json.user_info.user_email, 'test@example.com');
  // the sample SpendLogs row is one of the key's
  const s = await api(gw.url, MASTER_KEY, 'GET', `/spend/logs?api_key=${HASH}`);
  assert.equal(s.status, 200, s.text);
  assert.ok(s.json.some((x) => x.request_id === 'chatcmpl-test-0001'), s.text);
  // models '{}' (and the team's []): every model
  assert.equal((await chat('other', { max_tokens: 1 })).status, 200);
  // a wrong key next to it is still refused
  const bad = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('priced'), { authorization: 'Bearer sk-test-12345' });
  assert.equal(bad.status, 401, bad.text);
});

test('new spend lands in LiteLLM\'s tables with LiteLLM\'s columns (key, user, team spend; SpendLogs row)', { skip: !haveSchema }, async () => {
  const q = (sql) => pg.psql(sql, url);
  const before0 = (await q(`SELECT spend FROM "LiteLLM_VerificationToken" WHERE token = '${HASH}'`))[0].spend;
  const team0 = (await q(`SELECT spend FROM "LiteLLM_TeamTable" WHERE team_id = 'team-test-1'`))[0].spend;
  const user0 = (await q(`SELECT spend FROM "LiteLLM_UserTable" WHERE user_id = 'user-test-1'`))[0].spend;
  const r = await chat('priced', { max_tokens: 7, user: 'end-user-x' });
  assert.equal(r.status, 200, r.text);
  const cost = Number(r.headers.get('x-litellm-response-cost'));
  assert.ok(Math.abs(cost - 0.007) < 1e-12, `cost ${cost}`);
  // request_id: LiteLLM writes the response id; the call id is accepted here
  // (spend.test.mjs checks which one)
  const cid = r.headers.get('x-litellm-call-id');
  let row;
  assert.ok(await until(async () => {
    [row] = await q(`SELECT * FROM "LiteLLM_SpendLogs" WHERE request_id IN ('${r.json.id}', '${cid}')`);
    return row;
  }), `a LiteLLM_SpendLogs row with request_id ${r.json.id} or ${cid}`);
  assert.equal(row.api_key, HASH);
  assert.ok(Math.abs(row.spend - cost) < 1e-12, `spend ${row.spend}`);
  assert.equal(row.prompt_tokens, r.json.usage.prompt_tokens);
  assert.equal(row.completion_tokens, 7);
  assert.equal(row.total_tokens, r.json.usage.total_tokens);
  assert.equal(row.model_group, 'priced');
  assert.equal(row.call_type, 'acompletion');
  assert.equal(row.status, 'success');
  assert.equal(row.team_id, 'team-test-1');
  assert.equal(row.user, 'user-test-1');
  assert.equal(row.end_user, 'end-user-x');
  assert.equal(row.custom_llm_provider, 'openai');
  assert.ok(row.startTime && row.endTime, 'startTime / endTime');
  assert.ok(new Date(`${row.endTime}Z`) >= new Date(`${row.startTime}Z`));
  assert.equal(typeof row.metadata, 'object');
  assert.equal(row.metadata.user_api_key, HASH, JSON.stringify(row.metadata));
  // entity spend, as LiteLLM's spend update writer adds it
  assert.ok(await until(async () => {
    const [k] = await q(`SELECT spend FROM "LiteLLM_VerificationToken" WHERE token = '${HASH}'`);
    return Math.abs(k.spend - (before0 + cost)) < 1e-9;
  }), 'LiteLLM_VerificationToken.spend grew by the cost');
  assert.ok(await until(async () => {
    const [t] = await q(`SELECT spend FROM "LiteLLM_TeamTable" WHERE team_id = 'team-test-1'`);
    const [u] = await q(`SELECT spend FROM "LiteLLM_UserTable" WHERE user_id = 'user-test-1'`);
    return Math.abs(t.spend - (team0 + cost)) < 1e-9 && Math.abs(u.spend - (user0 + cost)) < 1e-9;
  }), 'team and user spend grew by the cost');
});

test('a key generated by switchyard on the LiteLLM database is a valid LiteLLM row', { skip: !haveSchema }, async () => {
  const g = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { team_id: 'team-test-1', key_alias: 'sy-made', max_budget: 2 });
  assert.equal(g.status, 200, g.text);
  const [row] = await pg.psql(`SELECT * FROM "LiteLLM_VerificationToken" WHERE token = '${await sha256hex(g.json.key)}'`, url);
  assert.ok(row, 'row under the sha256 of the key');
  assert.equal(row.key_name, `sk-...${g.json.key.slice(-4)}`);
  assert.equal(row.key_alias, 'sy-made');
  assert.equal(row.team_id, 'team-test-1');
  assert.equal(row.max_budget, 2);
  assert.equal(row.spend, 0);
  assert.ok(Array.isArray(row.models));
  const c = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('priced', { max_tokens: 5 }),
    { authorization: `Bearer ${g.json.key}` });
  assert.equal(c.status, 200, c.text);
});

test('the sample key\'s max_budget 1.0 holds: 50 concurrent calls at 0.1 each, overshoot at most one call', { skip: !haveSchema }, async () => {
  const [k0] = await pg.psql(`SELECT spend FROM "LiteLLM_VerificationToken" WHERE token = '${HASH}'`, url);
  // whole reservations while they fit, then one cut to what is left (docs/keys.md)
  const fits = Math.ceil((1.0 - k0.spend) / 0.1 - 1e-9);
  const res = await Promise.all(Array.from({ length: 50 }, () => chat('dear', { max_tokens: 10, mock: { delay_ms: 300 } })));
  const ok = res.filter((r) => r.status === 200).length;
  assert.ok(ok <= fits, `${ok} passed; the budget fits ${fits}`);
  assert.ok(ok >= fits - 1, `only ${ok} passed; the budget fits ${fits}`);
  for (const r of res.filter((x) => x.status !== 200)) {
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json?.error?.type, 'budget_exceeded', r.text);
  }
  let spend;
  await until(async () => {
    [{ spend }] = await pg.psql(`SELECT spend FROM "LiteLLM_VerificationToken" WHERE token = '${HASH}'`, url);
    return Math.abs(spend - (k0.spend + ok * 0.1)) < 1e-9;
  });
  assert.ok(Math.abs(spend - (k0.spend + ok * 0.1)) < 1e-9, `spend ${spend}`);
  assert.ok(spend <= 1.0 + 0.1 + 1e-9, `spend ${spend} within one call of max_budget 1.0`);
  // and now full: a further call is refused with LiteLLM's message
  if (ok === fits) {
    const r = await chat('dear', { max_tokens: 10 });
    assert.equal(r.status, 400, r.text);
    assert.match(r.json.error.message, /Budget has been exceeded!/);
  }
});
