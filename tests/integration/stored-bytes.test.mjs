// stored-bytes.test.mjs - rows that hold bytes which are not UTF-8 still read
// back as valid JSON.
//
// The management API refuses such bytes on the way in (admin-input.test.mjs),
// but a database written before that check existed, or by another program
// (LiteLLM itself shares the tables), may hold them. Here they are written
// straight into the tables with SQL, bypassing the API, into text columns
// (key_alias, user_alias, user_email, team_alias, organization_alias, a
// customer's alias, a spend log's user / end_user / model) and JSON columns
// (metadata, members_with_roles, request_tags); every read route that shows
// those rows must answer valid UTF-8 and valid JSON, each bad byte as U+FFFD.
//
// SQLite stores any bytes as TEXT. PostgreSQL refuses invalid UTF-8 in a
// UTF8 database, so the only PostgreSQL that can hold such rows is one
// created with ENCODING 'SQL_ASCII' (no checks, no conversion): that is what
// the PostgreSQL half uses.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { MASTER_KEY, api, chatBody, keysConfig, postJSON, startGateway, startMock, until } from '../lib/harness.mjs';
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

const FFFD = '\uFFFD';
// The bad bytes, as hex, and what a reader must see instead.
//   alias:  "ali" FF "as"                    -> "ali\uFFFDas"
//   user:   "u" C0 AF "ser" (overlong '/')   -> "u\uFFFD\uFFFDser"
//   email:  "a" ED A0 80 "@x.io" (surrogate) -> "a\uFFFD\uFFFD\uFFFD@x.io"
//   team:   "t" C3 A9 "am" E2 82 (é, then cut short) -> "téam\uFFFD\uFFFD"
//   metadata: {"note":"n" FE "te"}          -> {note: "n\uFFFDte"}
const BAD = {
  alias: { hex: '616c69ff6173', want: `ali${FFFD}as` },
  user: { hex: '75c0af736572', want: `u${FFFD}${FFFD}ser` },
  email: { hex: '61eda08040782e696f', want: `a${FFFD}${FFFD}${FFFD}@x.io` },
  team: { hex: '74c3a9616de282', want: `t\u00e9am${FFFD}${FFFD}` },
  meta: { hex: '7b226e6f7465223a226efe7465227d', want: { note: `n${FFFD}te` } },
};

/** GET path; the body must be valid UTF-8 and valid JSON. */
async function getStrict(url, p) {
  const res = await fetch(`${url}${p}`, { headers: { authorization: `Bearer ${MASTER_KEY}` } });
  const bytes = new Uint8Array(await res.arrayBuffer());
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    assert.fail(`${p}: the body is not valid UTF-8: ${Buffer.from(bytes).toString('latin1').slice(0, 400)}`);
  }
  let json;
  try {
    json = JSON.parse(text);
  } catch (e) {
    assert.fail(`${p}: the body is not JSON (${e.message}): ${text.slice(0, 400)}`);
  }
  assert.equal(res.status, 200, `${p}: ${text}`);
  return { text, json };
}

for (const backend of ['sqlite', 'postgres']) {
  describe(`on ${backend}`, () => {
    let gw, hash, teamId, dbUrl;
    const A = (method, p, body) => api(gw.url, MASTER_KEY, method, p, body);
    // run one SQL statement on the gateway's database, behind its back
    const sql = async (stmt) => {
      if (backend === 'sqlite') await run('sqlite3', [path.join(gw.dir, 'switchyard.db'), `.timeout 5000`, stmt], { timeout: 15000 });
      else await pg.psql(stmt, dbUrl);
    };
    // a text value from hex bytes, in each backend's SQL
    const bytes = (hex) => backend === 'sqlite'
      ? `CAST(X'${hex}' AS TEXT)`
      : `E'${hex.match(/../g).map((h) => `\\x${h}`).join('')}'`;

    before(async () => {
      if (backend === 'postgres') {
        await pg.psql(`CREATE DATABASE "stored_bytes" ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`);
        dbUrl = pg.url.replace(/\/[^/]*$/, '/stored_bytes');
      }
      gw = await startGateway(keysConfig(mock.base, { databaseUrl: dbUrl }));
      let r = await A('POST', '/team/new', { team_alias: 'clean-team' });
      assert.equal(r.status, 200, r.text);
      teamId = r.json.team_id;
      r = await A('POST', '/user/new', { user_id: 'u-bytes', user_alias: 'clean', user_email: 'c@x.io' });
      assert.equal(r.status, 200, r.text);
      r = await A('POST', '/key/generate', { key_alias: 'clean-key', user_id: 'u-bytes', team_id: teamId, metadata: { note: 'clean' } });
      assert.equal(r.status, 200, r.text);
      hash = r.json.token;
      await sql(`UPDATE "LiteLLM_VerificationToken" SET key_alias = ${bytes(BAD.alias.hex)}, `
        + `metadata = ${backend === 'sqlite' ? bytes(BAD.meta.hex) : `${bytes(BAD.meta.hex)}::jsonb`} WHERE token = '${hash}'`);
      await sql(`UPDATE "LiteLLM_UserTable" SET user_alias = ${bytes(BAD.user.hex)}, user_email = ${bytes(BAD.email.hex)} `
        + `WHERE user_id = 'u-bytes'`);
      await sql(`UPDATE "LiteLLM_TeamTable" SET team_alias = ${bytes(BAD.team.hex)} WHERE team_id = '${teamId}'`);
    });
    after(async () => { await gw?.stop(); });

    test('the rows really hold the bytes (the premise)', async () => {
      if (backend === 'sqlite') {
        const { stdout } = await run('sqlite3', [path.join(gw.dir, 'switchyard.db'),
          `SELECT hex(CAST(key_alias AS BLOB)) FROM "LiteLLM_VerificationToken" WHERE token = '${hash}'`]);
        assert.equal(stdout.trim().toLowerCase(), BAD.alias.hex);
      } else {
        const rows = await pg.psql(`SELECT encode(convert_to(key_alias, 'SQL_ASCII'), 'hex') AS h FROM "LiteLLM_VerificationToken" WHERE token = '${hash}'`, dbUrl);
        assert.equal(rows[0].h, BAD.alias.hex);
      }
    });

    test('key routes: /key/list, /key/info, /spend/keys', async () => {
      let { json } = await getStrict(gw.url, '/key/list?return_full_object=true');
      const k = json.keys.find((x) => x.token === hash);
      assert.ok(k, JSON.stringify(json));
      assert.equal(k.key_alias, BAD.alias.want);
      assert.deepEqual(k.metadata, BAD.meta.want);
      ({ json } = await getStrict(gw.url, `/key/info?key=${hash}`));
      assert.equal(json.info.key_alias, BAD.alias.want);
      assert.deepEqual(json.info.metadata, BAD.meta.want);
      ({ json } = await getStrict(gw.url, '/spend/keys'));
      const s = json.find((x) => x.token === hash);
      assert.ok(s, JSON.stringify(json));
      assert.equal(s.key_alias, BAD.alias.want);
      assert.deepEqual(s.metadata, BAD.meta.want);
    });

    test('user and team routes: /user/info, /user/list, /team/info, /team/list', async () => {
      let { json } = await getStrict(gw.url, '/user/info?user_id=u-bytes');
      assert.equal(json.user_info.user_alias, BAD.user.want);
      assert.equal(json.user_info.user_email, BAD.email.want);
      const k = json.keys.find((x) => x.token === hash);
      assert.ok(k, JSON.stringify(json.keys));
      assert.equal(k.key_alias, BAD.alias.want);
      ({ json } = await getStrict(gw.url, '/user/list'));
      const u = json.users.find((x) => x.user_id === 'u-bytes');
      assert.ok(u, JSON.stringify(json));
      assert.equal(u.user_alias, BAD.user.want);
      ({ json } = await getStrict(gw.url, `/team/info?team_id=${teamId}`));
      assert.equal(json.team_info.team_alias, BAD.team.want);
      ({ json } = await getStrict(gw.url, '/team/list'));
      const t = json.find((x) => x.team_id === teamId);
      assert.ok(t, JSON.stringify(json));
      assert.equal(t.team_alias, BAD.team.want);
    });

    test('a clean value written over a bad one reads back clean', async () => {
      const r = await A('POST', '/key/update', { key: hash, key_alias: 'fixed' });
      assert.equal(r.status, 200, r.text);
      const { json } = await getStrict(gw.url, `/key/info?key=${hash}`);
      assert.equal(json.info.key_alias, 'fixed');
      assert.deepEqual(json.info.metadata, BAD.meta.want);
    });

    test('organization, customer, team members and spend logs: every route that shows them', async () => {
      let r = await A('POST', '/organization/new', { organization_alias: 'clean-org' });
      assert.equal(r.status, 200, r.text);
      const orgId = r.json.organization_id;
      assert.equal((await A('POST', '/customer/new', { user_id: 'c-bytes', alias: 'clean' })).status, 200);
      assert.equal((await A('POST', '/team/member_add', { team_id: teamId, member: { user_id: 'u-bytes', role: 'user' } })).status, 200);
      r = await A('POST', '/key/generate', { key_alias: 'spender', user_id: 'u-bytes', team_id: teamId });
      assert.equal(r.status, 200, r.text);
      const spender = r.json.token;
      const chat = await postJSON(`${gw.url}/v1/chat/completions`, chatBody('priced', { user: 'c-bytes', metadata: { tags: ['clean-tag'] } }),
        { authorization: `Bearer ${r.json.key}` });
      assert.equal(chat.status, 200, JSON.stringify(chat.json));
      const logged = async () => (await A('GET', `/spend/logs?api_key=${spender}`)).json?.length > 0;
      assert.ok(await until(logged, 10000), 'the spend log row was not written');

      await sql(`UPDATE "LiteLLM_OrganizationTable" SET organization_alias = ${bytes(BAD.alias.hex)} WHERE organization_id = '${orgId}'`);
      await sql(`UPDATE "LiteLLM_EndUserTable" SET alias = ${bytes(BAD.user.hex)} WHERE user_id = 'c-bytes'`);
      // members_with_roles: [{"user_id":"u-bytes","user_email":"a" ED A0 80 "@x.io","role":"user"}]
      const members = Buffer.from('[{"user_id":"u-bytes","user_email":"a').toString('hex') + 'eda080'
        + Buffer.from('@x.io","role":"user"}]').toString('hex');
      await sql(`UPDATE "LiteLLM_TeamTable" SET members_with_roles = ${backend === 'sqlite' ? bytes(members) : `${bytes(members)}::jsonb`}, `
        + `metadata = ${backend === 'sqlite' ? bytes(BAD.meta.hex) : `${bytes(BAD.meta.hex)}::jsonb`} WHERE team_id = '${teamId}'`);
      // request_tags: ["t" FF "ag"]
      const tags = Buffer.from('["t').toString('hex') + 'ff' + Buffer.from('ag"]').toString('hex');
      await sql(`UPDATE "LiteLLM_SpendLogs" SET "user" = ${bytes(BAD.user.hex)}, end_user = ${bytes(BAD.email.hex)}, `
        + `request_tags = ${backend === 'sqlite' ? bytes(tags) : `${bytes(tags)}::jsonb`} WHERE api_key = '${spender}'`);

      let { json } = await getStrict(gw.url, `/organization/info?organization_id=${orgId}`);
      assert.equal(json.organization_alias, BAD.alias.want);
      ({ json } = await getStrict(gw.url, '/organization/list'));
      assert.equal(json.find((o) => o.organization_id === orgId).organization_alias, BAD.alias.want);
      ({ json } = await getStrict(gw.url, '/customer/info?end_user_id=c-bytes'));
      assert.equal(json.alias, BAD.user.want);
      ({ json } = await getStrict(gw.url, '/customer/list'));
      assert.equal(json.find((c) => c.user_id === 'c-bytes').alias, BAD.user.want);
      ({ json } = await getStrict(gw.url, `/team/info?team_id=${teamId}`));
      assert.deepEqual(json.team_info.metadata, BAD.meta.want);
      assert.equal(json.team_info.members_with_roles[0].user_email, BAD.email.want);
      ({ json } = await getStrict(gw.url, `/user/info?user_id=u-bytes`));
      assert.ok(Array.isArray(json.teams));
      ({ json } = await getStrict(gw.url, `/spend/logs?api_key=${spender}`));
      assert.equal(json[0].user, BAD.user.want);
      assert.equal(json[0].end_user, BAD.email.want);
      assert.deepEqual(json[0].request_tags, [`t${FFFD}ag`]);
      ({ json } = await getStrict(gw.url, '/spend/tags'));
      assert.ok(json.some((t) => t.individual_request_tag === `t${FFFD}ag`), JSON.stringify(json));
      const today = new Date().toISOString().slice(0, 10);
      const tomorrow = new Date(Date.now() + 86400000).toISOString().slice(0, 10);
      for (const p of ['/spend/users', '/global/spend/keys', '/global/spend/teams', '/global/spend/models',
        '/global/all_end_users', '/global/spend/all_tag_names', `/global/spend/tags?start_date=${today}&end_date=${tomorrow}`,
        `/spend/logs?start_date=${today}&end_date=${tomorrow}`, `/spend/logs/ui?start_date=${today}&end_date=${tomorrow}`,
        `/global/spend/report?start_date=${today}&end_date=${tomorrow}`]) await getStrict(gw.url, p);
      ({ json } = await getStrict(gw.url, '/global/spend/keys'));
      assert.equal(json.find((k) => k.api_key === spender).key_alias, 'spender');
      const res = await fetch(`${gw.url}/global/spend/end_users`, { method: 'POST', headers: { authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json' }, body: '{}' });
      const text = new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(await res.arrayBuffer()));
      assert.equal(res.status, 200, text);
      assert.ok(JSON.parse(text).some((e) => e.end_user === BAD.email.want), text);
    });
  });
}
