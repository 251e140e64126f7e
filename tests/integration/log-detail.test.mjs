// log-detail.test.mjs - the Logs page's data: GET /spend/logs/ui/{request_id}
// (admin/logdetail.c) and the /spend/logs/ui list's filters, on SQLite. The
// detail holds the stored messages and response, or the error of a failed
// call; an internal user reads only their own rows, and another tenant's id
// is 404 exactly as a missing one (ids do not leak).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  MASTER_KEY, api, chatBody, keysConfig, postJSON, startGateway, startMock, until,
} from '../lib/harness.mjs';

let mock, g, kA, kB, ridA, ridB, ridFail;
const A = (method, p, body) => api(g.url, MASTER_KEY, method, p, body);
const now = new Date();
const fmt = (d) => d.toISOString().slice(0, 19).replace('T', ' ');
const win = { start_date: fmt(new Date(now - 3600e3)), end_date: fmt(new Date(+now + 3600e3)) };

before(async () => {
  mock = await startMock();
  g = await startGateway(keysConfig(mock.base, { general: '  store_prompts_in_spend_logs: true' }));
  for (const u of ['ld-ua', 'ld-ub']) {
    const r = await A('POST', '/user/new', { user_id: u, user_role: 'internal_user' });
    assert.equal(r.status, 200, r.text);
  }
  let r = await A('POST', '/key/generate', { user_id: 'ld-ua', key_alias: 'ld-alias-a' });
  kA = r.json.key;
  r = await A('POST', '/key/generate', { user_id: 'ld-ub', key_alias: 'ld-alias-b' });
  kB = r.json.key;
  const call = async (key, body) => {
    const c = await postJSON(`${g.url}/v1/chat/completions`, body, { authorization: `Bearer ${key}` });
    return { status: c.status, id: c.json?.id, cid: c.headers?.get?.('x-litellm-call-id') };
  };
  const a = await call(kA, chatBody('priced', { messages: [{ role: 'user', content: 'secret-question-of-a' }] }));
  assert.equal(a.status, 200);
  ridA = a.id;
  const b = await call(kB, chatBody('priced'));
  assert.equal(b.status, 200);
  ridB = b.id;
  const f = await call(kA, chatBody('priced', { mock: { status: 500 } }));
  assert.notEqual(f.status, 200);
  await until(async () => (await A('GET', `/spend/logs/ui?${new URLSearchParams(win)}`)).json?.total >= 3, 10000);
  r = await A('GET', `/spend/logs/ui?${new URLSearchParams({ ...win, status_filter: 'failure' })}`);
  assert.equal(r.json.data.length, 1, r.text);
  ridFail = r.json.data[0].request_id;
});
after(async () => {
  await g?.stop();
  await mock?.stop();
});

describe('GET /spend/logs/ui/{request_id}', () => {
  test('the admin reads a row with its messages and response', async () => {
    const r = await A('GET', `/spend/logs/ui/${ridA}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.request_id, ridA);
    assert.equal(r.json.user, 'ld-ua');
    assert.match(JSON.stringify(r.json.messages) + JSON.stringify(r.json.proxy_server_request), /secret-question-of-a/);
    assert.ok(r.json.response && Object.keys(r.json.response).length, r.text);
    assert.ok(r.json.spend > 0);
  });
  test('a failed call carries its error', async () => {
    const r = await A('GET', `/spend/logs/ui/${encodeURIComponent(ridFail)}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status, 'failure');
    const meta = typeof r.json.metadata === 'string' ? JSON.parse(r.json.metadata) : r.json.metadata;
    assert.ok(meta.error_information && meta.error_information.error_code, r.text);
  });
  test('an internal user reads their own row; another tenant\'s is 404 like a missing one', async () => {
    let r = await api(g.url, kA, 'GET', `/spend/logs/ui/${ridA}`);
    assert.equal(r.status, 200, r.text);
    const theirs = await api(g.url, kA, 'GET', `/spend/logs/ui/${ridB}`);
    const missing = await api(g.url, kA, 'GET', '/spend/logs/ui/no-such-request');
    assert.equal(theirs.status, 404, theirs.text);
    assert.equal(missing.status, 404, missing.text);
    assert.equal(theirs.json.error.type, missing.json.error.type);
    assert.ok(!theirs.text.includes('ld-ub'), 'nothing of the other row');
    r = await api(g.url, kB, 'GET', `/spend/logs/ui/${ridA}`);
    assert.equal(r.status, 404, r.text);
    assert.ok(!r.text.includes('secret-question-of-a'));
  });
  test('odd ids: encoded, quoted, huge - a 404, never a crash', async () => {
    for (const id of ["x' OR '1'='1", '%00abc', 'a'.repeat(600), '..%2F..%2Fetc']) {
      const r = await A('GET', `/spend/logs/ui/${encodeURIComponent(id)}`);
      assert.equal(r.status, 404, `${id}: ${r.text}`);
    }
    const r = await api(g.url, 'sk-nobody', 'GET', `/spend/logs/ui/${ridA}`);
    assert.equal(r.status, 401, r.text);
  });
});

describe('GET /spend/logs/ui filters', () => {
  const list = (key, params) => api(g.url, key, 'GET', `/spend/logs/ui?${new URLSearchParams({ ...win, ...params })}`);
  test('key alias, key, model, status', async () => {
    let r = await list(MASTER_KEY, { key_alias: 'ld-alias-a' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.total, 2, r.text);
    r = await list(MASTER_KEY, { api_key: kB });
    assert.equal(r.json.total, 1, r.text);
    r = await list(MASTER_KEY, { model: 'nope' });
    assert.equal(r.json.total, 0, r.text);
    r = await list(MASTER_KEY, { status_filter: 'success', key_alias: 'ld-alias-a' });
    assert.equal(r.json.total, 1, r.text);
    r = await list(MASTER_KEY, { page_size: 1, page: 2 });
    assert.equal(r.json.data.length, 1);
    assert.equal(r.json.total_pages, 3);
  });
  test('an internal user\'s list stays their own, whatever the filter', async () => {
    const r = await list(kB, { key_alias: 'ld-alias-a' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.total, 0, r.text);
  });
});
