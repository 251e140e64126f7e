// services_a.mjs - mock guardrail services for the end-to-end tests of
// generic_guardrail_api, openai_moderation, presidio and lakera_v2: one plain
// node http server answering each service's documented endpoint. Each checks
// the wire format the service documents (a bad request is answered 422 and
// recorded with its reason) and decides by what the texts contain:
//
//   BLOCKME   block (generic: BLOCKED; moderation: flagged; lakera: prompt_attack;
//             presidio: a US_SSN entity, which a config may set to BLOCK)
//   MASKME    generic: GUARDRAIL_INTERVENED with MASKME replaced by [MASKED]
//   an email  presidio: EMAIL_ADDRESS; lakera: a pii/email detection (masked)
//   SLOWME    the answer comes after `slowMs` (past the guardrail's timeout)
//   FAILME    500
//   anything else passes
//
// Every request is recorded ({path, headers, body, error}) for assertions.
import http from 'node:http';
import { once } from 'node:events';

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/gu;
const SSN = /\b\d{3}-\d{2}-\d{4}\b/gu;

// Python string indices (code points) of a JS match
function cpSpan(text, m) {
  const start = [...text.slice(0, m.index)].length;
  return { start, end: start + [...m[0]].length };
}

function isStr(x) { return typeof x === 'string'; }

function checkGeneric(b) {
  if (!['request', 'response'].includes(b.input_type)) return 'input_type';
  if (!Array.isArray(b.texts) || !b.texts.every(isStr)) return 'texts';
  if (typeof b.request_data !== 'object' || b.request_data === null) return 'request_data';
  if (typeof b.additional_provider_specific_params !== 'object') return 'additional_provider_specific_params';
  for (const k of ['litellm_call_id', 'litellm_trace_id', 'structured_messages', 'images', 'tools', 'tool_calls', 'model'])
    if (!(k in b)) return k;
  return null;
}

function generic(b) {
  const all = b.texts.join('\n');
  if (all.includes('BLOCKME')) return [200, { action: 'BLOCKED', blocked_reason: 'mock says no' }];
  if (all.includes('MASKME'))
    return [200, { action: 'GUARDRAIL_INTERVENED', texts: b.texts.map((t) => t.replaceAll('MASKME', '[MASKED]')) }];
  return [200, { action: 'NONE' }];
}

function moderation(b) {
  if (!isStr(b.input) || !b.input) return [400, { error: { message: 'input' } }];
  const flagged = b.input.includes('BLOCKME');
  return [200, {
    id: 'modr-mock', model: b.model || 'omni-moderation-latest',
    results: [{
      flagged,
      categories: { harassment: flagged, violence: false },
      category_scores: { harassment: flagged ? 0.93 : 0.01, violence: 0.002 },
    }],
  }];
}

function analyze(b) {
  if (!isStr(b.text) || !isStr(b.language)) return [422, { error: 'text and language are required' }];
  const out = [];
  for (const m of b.text.matchAll(EMAIL)) out.push({ entity_type: 'EMAIL_ADDRESS', ...cpSpan(b.text, m), score: 1.0 });
  for (const m of b.text.matchAll(SSN)) out.push({ entity_type: 'US_SSN', ...cpSpan(b.text, m), score: 0.85 });
  if (b.text.includes('BLOCKME')) out.push({ entity_type: 'US_SSN', start: 0, end: 1, score: 0.99 });
  const want = b.entities;
  return [200, Array.isArray(want) ? out.filter((r) => want.includes(r.entity_type)) : out];
}

function anonymize(b) {
  if (!isStr(b.text) || !Array.isArray(b.analyzer_results)) return [422, { error: 'text and analyzer_results' }];
  const cps = [...b.text];
  const items = [];
  for (const r of [...b.analyzer_results].sort((x, y) => y.start - x.start)) {
    const tag = `<${r.entity_type}>`;
    cps.splice(r.start, r.end - r.start, tag);
    items.push({ start: r.start, end: r.start + tag.length, entity_type: r.entity_type, text: tag, operator: 'replace' });
  }
  return [200, { text: cps.join(''), items }];
}

function lakera(b) {
  if (!Array.isArray(b.messages) || !b.messages.every((m) => m && isStr(m.role))) return [422, { error: 'messages' }];
  for (const k of ['project_id', 'payload', 'breakdown', 'metadata', 'dev_info']) if (!(k in b)) return [422, { error: k }];
  const payload = [];
  b.messages.forEach((m, i) => {
    if (!isStr(m.content)) return;
    for (const e of m.content.matchAll(EMAIL))
      payload.push({ ...cpSpan(m.content, e), text: e[0], detector_type: 'pii/email', labels: [], message_id: i });
  });
  const attack = b.messages.some((m) => isStr(m.content) && m.content.includes('BLOCKME'));
  const breakdown = [
    { project_id: 'project-mock', policy_id: 'policy-mock', detector_id: 'd-pa', detector_type: 'prompt_attack', detected: attack },
    { project_id: 'project-mock', policy_id: 'policy-mock', detector_id: 'd-pii', detector_type: 'pii/email', detected: payload.length > 0 },
  ];
  return [200, { payload, flagged: attack || payload.length > 0, breakdown }];
}

const ROUTES = {
  '/beta/litellm_basic_guardrail_api': (b) => { const e = checkGeneric(b); return e ? [422, { error: e }] : generic(b); },
  '/v1/moderations': moderation,
  '/analyze': analyze,
  '/anonymize': anonymize,
  '/v2/guard': lakera,
};

/** Start the mock services; returns {url, port, requests, reset(), stop()}. */
export async function startServicesA({ slowMs = 3000 } = {}) {
  const requests = [];
  const srv = http.createServer((req, res) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { data += d; });
    req.on('end', async () => {
      const rec = { method: req.method, path: req.url, headers: req.headers, raw: data, body: null, error: null };
      requests.push(rec);
      const send = (status, obj) => {
        const s = JSON.stringify(obj);
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s) });
        res.end(s);
      };
      const route = ROUTES[req.url];
      if (req.method !== 'POST' || !route) return send(404, { error: 'no such endpoint' });
      if (!/^application\/json/.test(req.headers['content-type'] || '')) {
        rec.error = 'content-type';
        return send(415, { error: 'content-type' });
      }
      try { rec.body = JSON.parse(data); } catch { rec.error = 'json'; return send(400, { error: 'not json' }); }
      if (data.includes('FAILME')) return send(500, { error: 'mock failure' });
      if (data.includes('SLOWME')) await new Promise((r) => setTimeout(r, slowMs));
      const [status, obj] = route(rec.body);
      if (status >= 400) rec.error = obj.error;
      if (!res.destroyed) send(status, obj);
    });
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address();
  return {
    port, url: `http://127.0.0.1:${port}`, requests,
    reset() { requests.length = 0; },
    async stop() { srv.closeAllConnections?.(); srv.close(); },
  };
}
