// auth-variants.test.mjs - each spelling of a credential or a path has one
// meaning and none is a way around the checks (issue 19; docs/keys.md
// "Where the key is read"): Authorization Basic, two Authorization headers,
// x-api-key next to Authorization, a key in the query string, and paths with
// %2F, //, trailing slashes, dot segments or other case.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MASTER_KEY, api, chatBody, keysConfig, rawRequest, startGateway, startMock } from '../lib/harness.mjs';

let mock, gw, limited, routed;

before(async () => {
  mock = await startMock();
  gw = await startGateway(keysConfig(mock.base));
  let r = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { models: ['priced'] });
  assert.equal(r.status, 200, r.text);
  limited = r.json.key;
  r = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { allowed_routes: ['/chat/completions'] });
  assert.equal(r.status, 200, r.text);
  routed = r.json.key;
});
after(async () => {
  await gw?.stop();
  await mock?.stop();
});

/** A raw HTTP/1.1 request (headers as [name, value] pairs, repeats allowed). */
async function raw(method, path, headers, body = '') {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: x', 'Connection: close'];
  for (const [k, v] of headers) lines.push(`${k}: ${v}`);
  if (body) lines.push('Content-Type: application/json');
  lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  const r = await rawRequest(gw.port, `${lines.join('\r\n')}\r\n\r\n${body}`, { timeoutMs: 10000 });
  assert.ok(!r.timedOut, `${method} ${path} timed out`);
  const [head, ...rest] = r.data.split('\r\n\r\n');
  const status = Number(head.split(' ')[1]);
  const text = rest.join('\r\n\r\n');
  let json = null;
  try { json = JSON.parse(text); } catch { /* chunked or empty */ }
  return { status, text, json };
}

const genBody = JSON.stringify({ models: ['priced'] });
const chat = (model) => JSON.stringify(chatBody(model, { max_tokens: 5 }));

describe('where the key is read', () => {
  test('Authorization: Basic <key> carries the key itself (not base64), as LiteLLM', async () => {
    let r = await raw('POST', '/key/generate', [['Authorization', `Basic ${MASTER_KEY}`]], genBody);
    assert.equal(r.status, 200, r.text);
    r = await raw('POST', '/key/generate', [['Authorization', `Basic ${Buffer.from(`admin:${MASTER_KEY}`).toString('base64')}`]], genBody);
    assert.equal(r.status, 401, r.text);
    r = await raw('POST', '/v1/chat/completions', [['Authorization', `Basic ${limited}`]], chat('other'));
    assert.equal(r.status, 401, r.text);
    assert.equal(r.json.error.type, 'key_model_access_denied');
  });

  test('an unknown scheme is no key at all', async () => {
    const r = await raw('POST', '/key/generate', [['Authorization', `Token ${MASTER_KEY}`]], genBody);
    assert.equal(r.status, 401, r.text);
    assert.match(r.json.error.message, /No api key passed in/);
  });

  test('two Authorization headers are refused, whichever order', async () => {
    for (const hs of [
      [['Authorization', `Bearer ${limited}`], ['Authorization', `Bearer ${MASTER_KEY}`]],
      [['Authorization', `Bearer ${MASTER_KEY}`], ['Authorization', `Bearer ${limited}`]],
      [['x-api-key', limited], ['X-Api-Key', MASTER_KEY]],
    ]) {
      await mock.reset();
      let r = await raw('POST', '/key/generate', hs, genBody);
      assert.equal(r.status, 401, r.text);
      assert.match(r.json.error.message, /given more than once/);
      r = await raw('POST', '/v1/chat/completions', hs, chat('other'));
      assert.equal(r.status, 401, r.text);
      assert.deepEqual(await mock.requests(), []);
    }
  });

  test('x-api-key next to Authorization: Authorization wins (LiteLLM\'s order), both ways round', async () => {
    let r = await raw('POST', '/key/generate', [['x-api-key', MASTER_KEY], ['Authorization', `Bearer ${limited}`]], genBody);
    assert.equal(r.status, 401, r.text); // the limited key is not an admin
    r = await raw('POST', '/v1/chat/completions', [['x-api-key', MASTER_KEY], ['Authorization', `Bearer ${limited}`]], chat('other'));
    assert.equal(r.status, 401, r.text);
    assert.equal(r.json.error.type, 'key_model_access_denied');
    r = await raw('POST', '/key/generate', [['x-api-key', limited], ['Authorization', `Bearer ${MASTER_KEY}`]], genBody);
    assert.equal(r.status, 200, r.text);
    // x-litellm-api-key comes before Authorization
    r = await raw('POST', '/key/generate', [['x-litellm-api-key', limited], ['Authorization', `Bearer ${MASTER_KEY}`]], genBody);
    assert.equal(r.status, 401, r.text);
  });

  test('a key in the query string is never read', async () => {
    for (const q of [`api_key=${MASTER_KEY}`, `key=${MASTER_KEY}`, `x-api-key=${MASTER_KEY}`]) {
      const r = await raw('POST', `/key/generate?${q}`, [], genBody);
      assert.equal(r.status, 401, r.text);
      assert.match(r.json.error.message, /No api key passed in/);
    }
  });
});

describe('path spellings', () => {
  const auth = [['Authorization', `Bearer ${MASTER_KEY}`]];

  test('case changes, //, %2F, encoded letters and dot segments match no route (404)', async () => {
    for (const p of ['/KEY/generate', '/Key/Generate', '//key/generate', '/key//generate', '/key%2Fgenerate',
      '/key%2fgenerate', '/key/%67enerate', '/./key/generate', '/v1/../key/generate', '/v1//chat/completions',
      '/V1/chat/completions', '//v1/chat/completions', '/v1/chat%2Fcompletions']) {
      const r = await raw('POST', p, auth, p.includes('chat') ? chat('priced') : genBody);
      assert.equal(r.status, 404, `${p}: ${r.text}`);
      assert.match(r.json.error.message, /Route not found/);
    }
  });

  test('trailing slashes name the same route, with the same checks', async () => {
    let r = await raw('POST', '/key/generate/', auth, genBody);
    assert.equal(r.status, 200, r.text);
    r = await raw('POST', '/v1/chat/completions/', auth, chat('priced'));
    assert.equal(r.status, 200, r.text);
    // the limited key: the model check still applies
    r = await raw('POST', '/v1/chat/completions//', [['Authorization', `Bearer ${limited}`]], chat('other'));
    assert.equal(r.status, 401, r.text);
    assert.equal(r.json.error.type, 'key_model_access_denied');
    // a key that may call only /chat/completions cannot reach the admin API through a slash
    for (const p of ['/key/generate/', '/key/generate//', '/chat/completions/../key/generate']) {
      r = await raw('POST', p, [['Authorization', `Bearer ${routed}`]], genBody);
      assert.ok(r.status === 401 || r.status === 404, `${p}: ${r.status} ${r.text}`);
    }
    r = await raw('POST', '/chat/completions/', [['Authorization', `Bearer ${routed}`]], chat('priced'));
    assert.equal(r.status, 200, r.text);
  });

  test('a non-admin key gets no admin route by any spelling', async () => {
    for (const p of ['/key/generate', '/key/generate/', '/user/new/', '/team/new//']) {
      const r = await raw('POST', p, [['Authorization', `Bearer ${limited}`]], '{}');
      assert.ok(r.status === 401 || r.status === 403, `${p}: ${r.status} ${r.text}`);
    }
  });
});
