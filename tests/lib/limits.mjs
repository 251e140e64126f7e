// limits.mjs - helpers shared by the rate-limit and cache tests (issue 10):
// bounded HTTP calls (every fetch has an AbortSignal timeout, so no test can
// hang on a stuck request), the minute-window guard for exactness bursts,
// LiteLLM's 429 checks for parallel_request_limiter_v3, admin calls with the
// master key, readiness, /metrics counters and SSE parsing.
//
//   await freshWindow()            // >= 25 s left in this Unix minute (else sleep to the next + 0.5 s)
//   const r = await call(url, path, body, headers)   // {status, headers, text, json, error}
//   assertRateLimited(r, {descriptor: 'api_key', value: hash, type: 'requests', limit: 50})
import assert from 'node:assert/strict';
import { MASTER_KEY, sleep } from './harness.mjs';

/** Seconds left in the current Unix minute (the limiter's fixed window). */
export function secondsLeftInMinute(now = Date.now()) { return 60 - (now / 1000) % 60; }

/** Make sure a burst runs inside one window: when fewer than `need` seconds
 * remain in the current minute (or less than 1 s has passed since it began),
 * sleep to the next minute start + 0.5 s (or to 1 s past this one's start). At most ~need + 1 s of waiting. */
export async function freshWindow(need = 25) {
  const left = secondsLeftInMinute();
  if (left < need) await sleep(left * 1000 + 500);
  else if (left > 59) await sleep((left - 59) * 1000 + 100);
}

/** Sleep until `lo` to `hi` seconds remain in the current minute (the window
 * is nearly over: a retry-after is then short). At most ~60 s of waiting. */
export async function nearWindowEnd(lo = 3, hi = 7) {
  let left = secondsLeftInMinute();
  if (left < lo) { await sleep(left * 1000 + 200); left = secondsLeftInMinute(); }
  if (left > hi) await sleep((left - hi + 0.2) * 1000);
}

/** POST (or GET when body is undefined) with a timeout; never throws: a
 * network error or timeout gives status 0 and error set. */
export async function call(url, p, body, headers = {}, { timeoutMs = 30000, method } = {}) {
  try {
    const res = await fetch(`${url}${p}`, {
      method: method || (body === undefined ? 'GET' : 'POST'),
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body)),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let json = null;
    try { json = JSON.parse(text); } catch {}
    return { status: res.status, headers: res.headers, text, json, error: null };
  } catch (e) {
    return { status: 0, headers: new Headers(), text: '', json: null, error: e };
  }
}

export const bearer = (key) => ({ authorization: `Bearer ${key}` });

/** A chat call with key (max_tokens 5 unless given). */
export const chatCall = (url, key, body, extraHeaders = {}, opts = {}) =>
  call(url, '/v1/chat/completions', { max_tokens: 5, ...body }, { ...(key ? bearer(key) : {}), ...extraHeaders }, opts);

/** An admin call with the master key. */
export const admin = (url, method, p, body) =>
  call(url, p, body, bearer(MASTER_KEY), { method });

/** POST /key/generate; returns the response JSON (asserts 200). */
export async function genKey(url, body = {}) {
  const r = await admin(url, 'POST', '/key/generate', body);
  assert.equal(r.status, 200, r.text);
  return r.json;
}

/** GET /key/info?key=... -> info.limits_usage (asserts 200). */
export async function limitsUsage(url, key) {
  const r = await admin(url, 'GET', `/key/info?key=${encodeURIComponent(key)}`);
  assert.equal(r.status, 200, r.text);
  assert.ok(r.json?.info && typeof r.json.info === 'object', r.text);
  return r.json.info.limits_usage;
}

/** GET /health/readiness JSON (null when unanswered). */
export async function readiness(url) {
  const r = await call(url, '/health/readiness', undefined, {}, { timeoutMs: 10000 });
  return r.json;
}

const esc = (s) => String(s).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const RESET_RE = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d) UTC$/;

/** Assert r is LiteLLM's 429 from the limiter: message, error fields, headers.
 * descriptor/value/type/limit are checked when given (value may be a RegExp). */
export function assertRateLimited(r, { descriptor, value, type, limit } = {}) {
  assert.equal(r.status, 429, `want 429, got ${r.status}: ${r.text}`);
  const e = r.json?.error;
  assert.ok(e, r.text);
  assert.equal(e.code, '429', r.text);
  assert.equal(e.type, 'None', r.text);
  assert.equal(e.param, 'None', r.text);
  const d = descriptor ? esc(descriptor) : '[a-z_]+';
  const v = value instanceof RegExp ? value.source : value !== undefined ? esc(value) : '.+?';
  const t = type ? esc(type) : '(?:requests|tokens|max_parallel_requests)';
  const l = limit !== undefined ? esc(limit) : '\\d+';
  // Remaining is 0 whatever the type (LiteLLM shows max(0, left); the spec
  // asks for 0 also when a prompt does not fit in the tokens still left)
  const re = new RegExp(`^Rate limit exceeded for ${d}: ${v}\\. Limit type: ${t}\\. Current limit: ${l}, Remaining: 0\\. `
    + 'Limit resets at: \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC$');
  assert.match(e.message, re);
  const h = r.headers;
  const ra = h.get('retry-after');
  assert.match(ra ?? '', /^\d+$/, `retry-after: ${ra}`);
  assert.ok(Number(ra) >= 1 && Number(ra) <= 60, `retry-after ${ra}`);
  const rt = h.get('rate_limit_type');
  if (type) assert.equal(rt, type);
  else assert.match(rt ?? '', /^(requests|tokens|max_parallel_requests)$/);
  const reset = h.get('reset_at') ?? '';
  const m = RESET_RE.exec(reset);
  assert.ok(m, `reset_at: ${reset}`);
  const at = Date.parse(`${m[1]}T${m[2]}Z`);
  assert.ok(at > Date.now() - 5000 && at <= Date.now() + 62000, `reset_at ${reset} is within the next minute (UTC)`);
  assert.equal(h.get(`x-ratelimit-remaining-${rt}`), '0', `x-ratelimit-remaining-${rt}`);
  if (limit !== undefined) assert.equal(h.get(`x-ratelimit-limit-${rt}`), String(limit), `x-ratelimit-limit-${rt}`);
  else assert.match(h.get(`x-ratelimit-limit-${rt}`) ?? '', /^\d+$/);
}

/** Sum of one counter's series in a Prometheus text exposition (0 when absent). */
export function metricSum(text, name) {
  let s = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)/.exec(line);
    if (m && m[1] === name) s += Number(m[3]);
  }
  return s;
}

export async function metrics(url) {
  const r = await call(url, '/metrics', undefined, {}, { timeoutMs: 10000 });
  assert.equal(r.status, 200, r.text.slice(0, 500));
  return r.text;
}

/** Parse an SSE body: {events: [parsed JSON of each data line], done: saw [DONE], content: concatenated delta.content}. */
export function parseSSE(text) {
  const events = [];
  let done = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const d = line.slice(5).trim();
    if (d === '[DONE]') { done = true; continue; }
    events.push(JSON.parse(d));
  }
  const content = events.map((e) => (e.choices || []).map((c) => c.delta?.content || '').join('')).join('');
  return { events, done, content };
}

/** Requests the mock received on paths containing `part` since its last reset. */
export async function mockCalls(mock, part = '/chat/completions') {
  return (await mock.requests()).filter((q) => q.path.includes(part));
}

/** Unique text for bodies that must not collide with other tests' cache entries or counters. */
let nonceN = 0;
export const nonce = (tag = 'n') => `${tag}-${process.pid}-${Date.now().toString(36)}-${++nonceN}`;
