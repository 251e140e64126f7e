// admin-input.test.mjs - bad input on the management API (issue 19, items 13
// and 14), on SQLite and on PostgreSQL (INTEGER / BIGINT columns): bodies that
// are not UTF-8, hold a NUL, NaN / Infinity, numbers a column cannot hold,
// negative limits, over-long ids, durations that do not parse, the master key
// as a custom key, duplicate or escaped key names, wrong types. Each is
// refused with LiteLLM's error shape (400, or FastAPI's 422 for a wrong type
// or a body that is not JSON); after every refusal the read endpoints still
// answer valid JSON and nothing was stored.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MASTER_KEY, api, keysConfig, startGateway, startMock } from '../lib/harness.mjs';
import { startPostgres } from '../lib/pg.mjs';

// With LITELLM_SCHEMA_DIR (a directory holding LiteLLM's litellm-schema.sql),
// the PostgreSQL database is made by LiteLLM's own DDL first; without it, by
// switchyard's migration, which declares the same column types.
const SCHEMA_DIR = process.env.LITELLM_SCHEMA_DIR || '';
const haveSchema = SCHEMA_DIR !== '' && fs.existsSync(path.join(SCHEMA_DIR, 'litellm-schema.sql'));

let mock, pg;
before(async () => {
  mock = await startMock();
  pg = await startPostgres();
});
after(async () => {
  await mock?.stop();
  await pg?.stop();
});

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A request with a raw body (string or Buffer); the answer's bytes must be UTF-8 and JSON. */
async function raw(base, method, p, body) {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : (typeof body === 'string' ? Buffer.from(body, 'utf8') : body),
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const text = utf8.decode(bytes); // throws on invalid UTF-8
  let json;
  assert.doesNotThrow(() => { json = JSON.parse(text); }, `not JSON: ${text}`);
  return { status: res.status, text, json };
}

const long = (n, c = 'x') => c.repeat(n);
const nested = (d) => '{"metadata":' + '['.repeat(d) + ']'.repeat(d) + '}';

// [name, method, path, body (string: JSON text as sent; Buffer: raw bytes), status, param or 422 type]
const REFUSED = [
  // 13: not UTF-8, NUL, unpaired surrogates
  ['key alias not UTF-8', 'POST', '/key/generate', Buffer.from([...Buffer.from('{"key_alias":"a'), 0xff, 0xfe, ...Buffer.from('"}')]), 400],
  ['user id overlong UTF-8', 'POST', '/user/new', Buffer.from([...Buffer.from('{"user_id":"u'), 0xc0, 0xaf, ...Buffer.from('"}')]), 400],
  ['team alias with a UTF-8 encoded surrogate', 'POST', '/team/new', Buffer.from([...Buffer.from('{"team_alias":"t'), 0xed, 0xa0, 0x80, ...Buffer.from('"}')]), 400],
  ['metadata value truncated UTF-8', 'POST', '/key/generate', Buffer.from([...Buffer.from('{"metadata":{"a":"'), 0xe2, 0x82, ...Buffer.from('"}}')]), 400],
  ['customer alias: unpaired \\ud800 escape', 'POST', '/customer/new', '{"user_id":"c-sur","alias":"a\\ud800"}', 400, 'alias'],
  ['user alias: lone low surrogate escape', 'POST', '/user/new', '{"user_alias":"\\udc00x"}', 400, 'user_alias'],
  ['custom key with \\u0000', 'POST', '/key/generate', '{"key":"sk-a\\u0000b"}', 400, 'key'],
  ['user id with \\u0000', 'POST', '/user/new', '{"user_id":"u\\u0000x"}', 400, 'user_id'],
  ['team id with \\u0000', 'POST', '/team/new', '{"team_id":"t\\u0000x"}', 400, 'team_id'],
  ['key alias with \\u0000 on update', 'POST', '/key/update', '{"key":"KEY","key_alias":"a\\u0000"}', 400, 'key_alias'],
  ['raw NUL byte in the body', 'POST', '/team/new', Buffer.from([...Buffer.from('{"team_alias":"a'), 0, ...Buffer.from('"}')]), 400],
  ['query not UTF-8', 'GET', '/user/info?user_id=%FF%FE', undefined, 400],
  ['query with a NUL', 'GET', '/key/info?key=sk-a%00b', undefined, 400],
  ['path not UTF-8', 'POST', '/key/sk-%FF/regenerate', '{}', 400],
  // 14: negative limits
  ...[['/key/generate', {}], ['/user/new', {}], ['/team/new', {}], ['/customer/new', { user_id: 'c-neg' }],
    ['/organization/new', { organization_alias: 'o-neg' }], ['/budget/new', {}], ['/key/update', { key: 'KEY' }],
    ['/user/update', { user_id: 'u-fix' }], ['/team/update', { team_id: 'TEAM' }], ['/budget/update', { budget_id: 'b-fix' }],
    ['/customer/update', { user_id: 'c-fix' }]].flatMap(([p, base]) => [
    [`negative rpm_limit on ${p}`, 'POST', p, JSON.stringify({ ...base, rpm_limit: -1 }), 400, 'rpm_limit'],
    [`negative tpm_limit on ${p}`, 'POST', p, JSON.stringify({ ...base, tpm_limit: -5 }), 400, 'tpm_limit'],
    [`negative max_parallel_requests on ${p}`, 'POST', p, JSON.stringify({ ...base, max_parallel_requests: -2 }), 400, 'max_parallel_requests'],
    [`negative max_budget on ${p}`, 'POST', p, JSON.stringify({ ...base, max_budget: -0.5 }), 400, 'max_budget'],
    [`NaN max_budget on ${p}`, 'POST', p, JSON.stringify(base).replace(/}$/, (Object.keys(base).length ? ',' : '') + '"max_budget":NaN}'), 400, 'max_budget'],
    [`budget_duration that does not parse on ${p}`, 'POST', p, JSON.stringify({ ...base, budget_duration: '3x' }), 400, 'budget_duration'],
  ]),
  ['negative soft_budget', 'POST', '/key/generate', '{"soft_budget":-1}', 400, 'soft_budget'],
  ['negative spend', 'POST', '/user/update', '{"user_id":"u-fix","spend":-3}', 400, 'spend'],
  ['negative team_member_budget', 'POST', '/team/new', '{"team_member_budget":-1}', 400, 'team_member_budget'],
  ['negative max_budget_in_team', 'POST', '/team/member_add', '{"team_id":"TEAM","member":{"role":"user","user_id":"u-fix"},"max_budget_in_team":-1}', 400, 'max_budget_in_team'],
  ['negative model_rpm_limit', 'POST', '/key/generate', '{"model_rpm_limit":{"priced":-1}}', 400, 'model_rpm_limit'],
  ['negative model_tpm_limit in metadata', 'POST', '/key/generate', '{"metadata":{"model_tpm_limit":{"priced":-7}}}', 400, 'model_tpm_limit'],
  ['key duration that does not parse', 'POST', '/key/generate', '{"duration":"forever"}', 400, 'duration'],
  ['key duration past the year 9999 (would be stored as 1970)', 'POST', '/key/generate', '{"duration":"99999999w"}', 400, 'duration'],
  ['budget duration past the year 9999', 'POST', '/budget/new', '{"budget_duration":"99999999mo"}', 400, 'budget_duration'],
  ['team member budget duration that does not parse', 'POST', '/team/new', '{"team_member_budget_duration":"1y"}', 400, 'team_member_budget_duration'],
  // NaN, Infinity, numbers beyond a double or an int64
  ['Infinity max_budget', 'POST', '/user/new', '{"max_budget":Infinity}', 400, 'max_budget'],
  ['-Infinity soft_budget', 'POST', '/budget/new', '{"soft_budget":-Infinity}', 400, 'soft_budget'],
  ['1e999 max_budget', 'POST', '/key/generate', '{"max_budget":1e999}', 400, 'max_budget'],
  ['1e999 inside metadata', 'POST', '/key/generate', '{"metadata":{"x":[1e999]}}', 400, 'metadata'],
  ['NaN in model_max_budget', 'POST', '/user/new', '{"model_max_budget":{"priced":NaN}}', 400, 'model_max_budget'],
  ['integer beyond int64', 'POST', '/key/generate', '{"rpm_limit":9223372036854775808}', 400, 'rpm_limit'],
  ['integer beyond int64 in metadata', 'POST', '/team/new', '{"metadata":{"n":-99999999999999999999}}', 400, 'metadata'],
  ['integer string beyond int64', 'POST', '/user/new', '{"tpm_limit":"99999999999999999999"}', 400, 'tpm_limit'],
  ['max_parallel_requests beyond INTEGER', 'POST', '/key/generate', '{"max_parallel_requests":2147483648}', 400, 'max_parallel_requests'],
  ['max_parallel_requests beyond INTEGER on a team', 'POST', '/team/new', '{"max_parallel_requests":4294967296}', 400, 'max_parallel_requests'],
  ['max_parallel_requests as a float beyond INTEGER', 'POST', '/user/new', '{"max_parallel_requests":3e9}', 400, 'max_parallel_requests'],
  // over-long ids and aliases
  ['key alias of 128 bytes', 'POST', '/key/generate', JSON.stringify({ key_alias: long(128) }), 400, 'key_alias'],
  ['key alias of 64 two-byte characters', 'POST', '/key/generate', JSON.stringify({ key_alias: long(64, 'é') }), 400, 'key_alias'],
  ['user id of 128 bytes', 'POST', '/user/new', JSON.stringify({ user_id: long(128) }), 400, 'user_id'],
  ['team id of 300 bytes', 'POST', '/team/new', JSON.stringify({ team_id: long(300) }), 400, 'team_id'],
  ['team alias of 128 bytes', 'POST', '/team/new', JSON.stringify({ team_alias: long(128) }), 400, 'team_alias'],
  ['budget id of 200 bytes', 'POST', '/budget/new', JSON.stringify({ budget_id: long(200) }), 400, 'budget_id'],
  ['customer id of 128 bytes', 'POST', '/customer/new', JSON.stringify({ user_id: long(128) }), 400, 'user_id'],
  ['organization alias of 128 bytes', 'POST', '/organization/new', JSON.stringify({ organization_alias: long(128) }), 400, 'organization_alias'],
  ['user email of 255 bytes', 'POST', '/user/new', JSON.stringify({ user_email: long(245) + '@example.c' }), 400, 'user_email'],
  ['member user id of 128 bytes', 'POST', '/team/member_add', JSON.stringify({ team_id: 'TEAM', member: { role: 'user', user_id: long(128) } }), 400, 'user_id'],
  ['member list user id of 128 bytes', 'POST', '/team/member_add', JSON.stringify({ team_id: 'TEAM', member: [{ role: 'user', user_id: long(128) }] }), 400, 'user_id'],
  ['custom key of 200 bytes', 'POST', '/key/generate', JSON.stringify({ key: 'sk-' + long(197) }), 400, 'key'],
  ['key list entry of 128 bytes', 'POST', '/key/delete', JSON.stringify({ keys: [long(128)] }), 400, 'keys'],
  ['query user id of 128 bytes', 'GET', `/user/info?user_id=${long(128)}`, undefined, 400, 'user_id'],
  ['query team id of 600 bytes', 'GET', `/team/info?team_id=${long(600)}`, undefined, 400, 'team_id'],
  ['query value of 600 bytes', 'GET', `/key/list?sort_by=${long(600)}`, undefined, 400, 'sort_by'],
  // the master key as a virtual key
  ['custom key equal to the master key', 'POST', '/key/generate', JSON.stringify({ key: MASTER_KEY }), 400, 'key'],
  ['regenerated key equal to the master key', 'POST', '/key/regenerate', JSON.stringify({ key: 'KEY', new_key: MASTER_KEY }), 400, 'new_key'],
  ['a key longer than a hash without sk- (would be cut to a hash)', 'POST', '/key/update', JSON.stringify({ key: 'a'.repeat(64) + 'b', max_budget: 1 }), 400, 'key'],
  ['the same in the path', 'POST', `/key/${'a'.repeat(65)}/regenerate`, '{}', 400, 'key'],
  // duplicate and escaped key names
  ['duplicate key', 'POST', '/key/generate', '{"models":["priced"],"models":["other"]}', 400, 'models'],
  ['duplicate key by an escape', 'POST', '/team/new', '{"team_alias":"a","te\\u0061m_alias":"b"}', 400, 'team_alias'],
  ['duplicate key inside metadata', 'POST', '/user/new', '{"metadata":{"a":1,"a":2}}', 400, 'metadata'],
  ['escaped key name is the field it spells (a list)', 'POST', '/key/generate', '{"m\\u006fdels":"priced"}', 422, 'list_type'],
  // wrong types
  ['rpm_limit as a word', 'POST', '/key/generate', '{"rpm_limit":"abc"}', 422, 'int_parsing'],
  ['rpm_limit as an object', 'POST', '/team/new', '{"rpm_limit":{}}', 422, 'int_type'],
  ['rpm_limit with a fraction', 'POST', '/user/new', '{"rpm_limit":1.5}', 422, 'int_from_float'],
  ['max_budget as a list', 'POST', '/customer/new', '{"user_id":"c-t","max_budget":[]}', 422, 'float_type'],
  ['models as an object', 'POST', '/user/new', '{"models":{}}', 422, 'list_type'],
  ['models with a number', 'POST', '/team/new', '{"models":["priced",3]}', 422, 'string_type'],
  ['user id as a number', 'POST', '/user/new', '{"user_id":42}', 422, 'string_type'],
  ['metadata as a list', 'POST', '/key/generate', '{"metadata":[]}', 422, 'dict_type'],
  ['model_rpm_limit value as a word', 'POST', '/key/generate', '{"model_rpm_limit":{"priced":"lots"}}', 422, 'int_parsing'],
  // syntax json-c would take and Python's json would not
  ['comment in the body', 'POST', '/key/generate', '{"key_alias":"c" /* x */}', 422, 'json_invalid'],
  ['single-quoted string', 'POST', '/key/generate', "{'key_alias':'c'}", 422, 'json_invalid'],
  ['trailing comma', 'POST', '/user/new', '{"user_alias":"c",}', 422, 'json_invalid'],
  ['raw newline in a string', 'POST', '/user/new', '{"user_alias":"a\nb"}', 422, 'json_invalid'],
  ['nesting deeper than 64', 'POST', '/key/generate', nested(100), 400],
];

for (const backend of ['sqlite', 'postgres']) {
  describe(`on ${backend}`, () => {
    let gw, KEY, TEAM;
    const A = (method, p, body) => api(gw.url, MASTER_KEY, method, p, body);
    const LISTS = ['/key/list?return_full_object=true', '/user/list', '/team/list', '/customer/list', '/organization/list',
      '/budget/list', '/spend/keys'];
    const snapshot = async () => {
      const out = {};
      for (const p of LISTS) {
        const r = await raw(gw.url, 'GET', p);
        assert.equal(r.status, 200, `${p}: ${r.text}`);
        out[p] = r.text;
      }
      return out;
    };

    before(async () => {
      let databaseUrl = null;
      if (backend === 'postgres') {
        databaseUrl = await pg.createDb('admin_input');
        if (haveSchema) await pg.psqlFile(path.join(SCHEMA_DIR, 'litellm-schema.sql'), databaseUrl);
      }
      gw = await startGateway(keysConfig(mock.base, { databaseUrl }));
      let r = await A('POST', '/user/new', { user_id: 'u-fix', user_alias: 'fixture' });
      assert.equal(r.status, 200, r.text);
      r = await A('POST', '/team/new', { team_alias: 'fixture-team' });
      assert.equal(r.status, 200, r.text);
      TEAM = r.json.team_id;
      r = await A('POST', '/key/generate', { key_alias: 'fixture-key', user_id: 'u-fix' });
      assert.equal(r.status, 200, r.text);
      KEY = r.json.key;
      assert.equal((await A('POST', '/budget/new', { budget_id: 'b-fix', max_budget: 1 })).status, 200);
      assert.equal((await A('POST', '/customer/new', { user_id: 'c-fix' })).status, 200);
    });
    after(async () => { await gw?.stop(); });

    test('each bad value is refused in LiteLLM\'s shape; the reads stay valid JSON and nothing is stored', async () => {
      const before = await snapshot();
      for (const [name, method, p, body0, status, want] of REFUSED) {
        const body = typeof body0 === 'string' ? body0.replaceAll('"KEY"', JSON.stringify(KEY)).replaceAll('"TEAM"', JSON.stringify(TEAM)) : body0;
        const r = await raw(gw.url, method, p, body);
        assert.equal(r.status, status, `${name}: want ${status}, got ${r.status}: ${r.text}`);
        if (status === 400) {
          assert.ok(r.json.error, `${name}: ${r.text}`);
          assert.equal(r.json.error.code, '400', `${name}: ${r.text}`);
          assert.equal(r.json.error.type, 'bad_request_error', `${name}: ${r.text}`);
          assert.equal(typeof r.json.error.message, 'string');
          if (want) assert.equal(r.json.error.param, want, `${name}: ${r.text}`);
          assert.ok(!r.text.includes(MASTER_KEY), `${name}: the master key is echoed`);
        } else {
          assert.ok(Array.isArray(r.json.detail), `${name}: ${r.text}`);
          assert.equal(r.json.detail[0].type, want, `${name}: ${r.text}`);
        }
        const info = await raw(gw.url, 'GET', '/user/info?user_id=u-fix');
        assert.equal(info.status, 200, `${name}: /user/info ${info.text}`);
        assert.deepEqual(await snapshot(), before, `${name}: something was stored`);
      }
    });

    test('the values at each documented maximum are taken and read back intact', async () => {
      const alias = 'é'.repeat(63) + 'x'; // 127 bytes
      let r = await A('POST', '/key/generate', {
        key_alias: alias, rpm_limit: 0, tpm_limit: 9007199254740991, max_parallel_requests: 2147483647,
        max_budget: 0, budget_duration: '30d', duration: '-1', model_rpm_limit: { priced: 5 },
      });
      assert.equal(r.status, 200, r.text);
      const hash = r.json.token;
      r = await A('GET', `/key/info?key=${hash}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.info.key_alias, alias);
      assert.equal(r.json.info.max_parallel_requests, 2147483647);
      assert.equal(r.json.info.tpm_limit, 9007199254740991);
      r = await A('POST', '/user/new', { user_id: 'u'.repeat(127), user_email: 'e'.repeat(244) + '@example.c', rpm_limit: '7' });
      assert.equal(r.status, 200, r.text);
      r = await A('GET', `/user/info?user_id=${'u'.repeat(127)}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.user_info.rpm_limit, 7);
      r = await A('POST', '/budget/new', { budget_id: 'b'.repeat(127), max_budget: 2 });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.budget_id, 'b'.repeat(127));
    });

    test('an escaped key name means the field it spells', async () => {
      const r = await raw(gw.url, 'POST', '/key/generate', '{"key_\\u0061lias":"esc-alias","m\\u006fdels":["priced"]}');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.key_alias, 'esc-alias');
      assert.deepEqual(r.json.models, ['priced']);
    });

    test('text outside the BMP, written with a surrogate pair escape or as UTF-8, is stored and read back', async () => {
      let r = await raw(gw.url, 'POST', '/team/new', '{"team_alias":"rocket \\ud83d\\ude80"}');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.team_alias, 'rocket \u{1F680}');
      r = await raw(gw.url, 'POST', '/user/new', JSON.stringify({ user_alias: 'rocket \u{1F680}' }));
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.user_alias, 'rocket \u{1F680}');
    });
  });
}
