// lib/services_b.mjs - mock guardrail services for aporia, bedrock (ApplyGuardrail),
// Azure AI Content Safety (text:analyze, text:shieldPrompt) and IBM FMS Guardrails
// (detector server, orchestrator): one node http server, a path prefix per service.
// Each checks the wire format the service documents (method, path, query, auth
// headers, JSON body shape; Bedrock: the SigV4 signature, recomputed here with
// node:crypto from the request as received) and refuses a request that is off the
// way the service would (401/403/400). It then answers by what the texts contain:
//
//   marker    answer
//   --------  -------------------------------------------------------------------
//   BLOCKME   the service's block (aporia action block, Bedrock topic BLOCKED,
//             Azure Hate severity 6 / attackDetected, IBM a detection at 0.95)
//   MASKME    aporia: action modify, revised_response with MASKME -> [MASKED];
//             Bedrock: GUARDRAIL_INTERVENED, ANONYMIZED, outputs with MASKME -> {NAME}
//   SLOWME    the answer after `slowMs` (a timeout for the gateway)
//   FAILME    HTTP 500
//   else      allow
//
//   const svc = await startServicesB({ aporiaKey, aws: { accessKeyId, secretAccessKey, region },
//                                      azureKey, ibmToken, slowMs });
//   svc.url -> "http://127.0.0.1:PORT"; svc.requests -> [{service, method, url, headers, body, json}]
//   await svc.close();
import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';

const sha256 = (b) => createHash('sha256').update(b).digest('hex');
const hmac = (k, s) => createHmac('sha256', k).update(s).digest();

// SigV4 (header form) over the request as received: botocore's rules for a non-S3
// service (the path's segments URI-encoded once more).
function sigv4Check(req, body, { accessKeyId, secretAccessKey, region }) {
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
    req.headers.authorization || '');
  if (!m) return 'malformed Authorization';
  const [, ak, date, rg, service, signed, sig] = m;
  if (ak !== accessKeyId) return 'unknown access key';
  if (rg !== region || service !== 'bedrock') return `scope ${rg}/${service}`;
  const amz = req.headers['x-amz-date'] || '';
  if (!amz.startsWith(date)) return 'x-amz-date does not match the scope';
  const names = signed.split(';');
  for (const need of ['host', 'x-amz-date', 'content-type']) if (!names.includes(need)) return `${need} not signed`;
  const [rawPath, rawQuery = ''] = req.url.split('?');
  const canonPath = rawPath.split('/').map((s) => encodeURIComponent(s).replace(/[!'()*]/g,
    (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())).join('/');
  const canonQuery = rawQuery ? rawQuery.split('&').sort().join('&') : '';
  const canonHeaders = names.map((n) => `${n}:${String(req.headers[n] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const creq = ['POST', canonPath, canonQuery, canonHeaders, signed, sha256(body)].join('\n');
  const sts = ['AWS4-HMAC-SHA256', amz, `${date}/${rg}/bedrock/aws4_request`, sha256(creq)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date), rg), 'bedrock'), 'aws4_request');
  return createHmac('sha256', key).update(sts).digest('hex') === sig ? null : 'signature mismatch';
}

const has = (s, marker) => typeof s === 'string' && s.includes(marker);
const any = (texts, marker) => texts.some((t) => has(t, marker));

function send(res, status, obj) {
  const b = typeof obj === 'string' ? obj : JSON.stringify(obj);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(b) });
  res.end(b);
}

export async function startServicesB({ aporiaKey = 'aporia-key', aws = {}, azureKey = 'azure-key',
  ibmToken = 'ibm-token', slowMs = 3000 } = {}) {
  const creds = { accessKeyId: 'AKIDMOCK', secretAccessKey: 'mock/secret', region: 'us-east-1', ...aws };
  const requests = [];
  const timers = new Set();

  // texts -> answer with the markers' rules; later(fn) delays SLOWME answers
  function answer(res, texts, verdicts) {
    const go = () => {
      if (res.destroyed) return;
      if (any(texts, 'FAILME')) return send(res, 500, { error: 'mock failure' });
      if (any(texts, 'BLOCKME')) return send(res, 200, verdicts.block());
      if (any(texts, 'MASKME') && verdicts.mask) return send(res, 200, verdicts.mask());
      return send(res, 200, verdicts.allow());
    };
    if (any(texts, 'SLOWME')) {
      const t = setTimeout(() => { timers.delete(t); go(); }, slowMs);
      timers.add(t);
    } else go();
  }

  function aporia(req, res, json) {
    if (req.headers['x-aporia-api-key'] !== aporiaKey) return send(res, 401, { detail: 'bad api key' });
    if (!/^\/aporia\/[^/]+\/validate$/.test(req.url)) return send(res, 404, { detail: 'not found' });
    if (!Array.isArray(json.messages) || !['prompt', 'response', 'both'].includes(json.validation_target))
      return send(res, 422, { detail: 'messages and validation_target are required' });
    for (const m of json.messages)
      if (!['system', 'user', 'assistant', 'other'].includes(m.role)) return send(res, 422, { detail: `role ${m.role}` });
    const prompt = json.messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
    const texts = json.validation_target === 'prompt' ? prompt : [...prompt, json.response];
    answer(res, texts, {
      block: () => ({ action: 'block', revised_response: 'Blocked by Aporia', explain_log: null }),
      mask: () => ({ action: 'modify', revised_response: String(json.response ?? '').replaceAll('MASKME', '[MASKED]') }),
      allow: () => ({ action: 'passthrough', revised_response: json.response ?? null }),
    });
  }

  function bedrock(req, res, json, body) {
    const why = req.headers.authorization?.startsWith('Bearer ') ? null : sigv4Check(req, body, creds);
    if (why) return send(res, 403, { message: `The request signature we calculated does not match the signature you provided (${why})` });
    if (!/^\/bedrock\/guardrail\/[^/]+\/version\/[^/]+\/apply$/.test(req.url)) return send(res, 404, { message: 'no route' });
    if (!['INPUT', 'OUTPUT'].includes(json.source) || !Array.isArray(json.content))
      return send(res, 400, { message: 'source and content are required' });
    const texts = json.content.map((c) => c?.text?.text);
    if (texts.some((t) => typeof t !== 'string')) return send(res, 400, { message: 'content[].text.text must be a string' });
    answer(res, texts, {
      block: () => ({
        action: 'GUARDRAIL_INTERVENED', outputs: [{ text: 'Sorry, the model cannot answer this question.' }],
        assessments: [{ topicPolicy: { topics: [{ name: 'Forbidden', type: 'DENY', action: 'BLOCKED' }] } }],
      }),
      mask: () => ({
        action: 'GUARDRAIL_INTERVENED', outputs: texts.map((t) => ({ text: t.replaceAll('MASKME', '{NAME}') })),
        assessments: [{ sensitiveInformationPolicy: { piiEntities: [{ type: 'NAME', match: 'MASKME', action: 'ANONYMIZED' }] } }],
      }),
      allow: () => ({ action: 'NONE', outputs: [], assessments: [{}] }),
    });
  }

  function azure(req, res, json) {
    if (req.headers['ocp-apim-subscription-key'] !== azureKey)
      return send(res, 401, { error: { code: '401', message: 'Access denied due to invalid subscription key.' } });
    const u = new URL(req.url, 'http://x');
    if (!u.searchParams.get('api-version')) return send(res, 404, { error: { code: 'InvalidApiVersion' } });
    if (u.pathname === '/azure/contentsafety/text:analyze') {
      if (typeof json.text !== 'string' || !json.text.length || json.text.length > 10000 || !Array.isArray(json.categories))
        return send(res, 400, { error: { code: 'InvalidRequestBody', message: 'text' } });
      return answer(res, [json.text], {
        block: () => ({ blocklistsMatch: [], categoriesAnalysis: [{ category: 'Hate', severity: 6 }, { category: 'Violence', severity: 0 }] }),
        allow: () => ({ blocklistsMatch: [], categoriesAnalysis: json.categories.map((c) => ({ category: c, severity: 0 })) }),
      });
    }
    if (u.pathname === '/azure/contentsafety/text:shieldPrompt') {
      if (typeof json.userPrompt !== 'string' || !Array.isArray(json.documents) || json.userPrompt.length > 10000)
        return send(res, 400, { error: { code: 'InvalidRequestBody', message: 'userPrompt' } });
      return answer(res, [json.userPrompt], {
        block: () => ({ userPromptAnalysis: { attackDetected: true }, documentsAnalysis: [] }),
        allow: () => ({ userPromptAnalysis: { attackDetected: false }, documentsAnalysis: [] }),
      });
    }
    return send(res, 404, { error: { code: 'NotFound' } });
  }

  function ibm(req, res, json) {
    if (req.headers.authorization !== `Bearer ${ibmToken}`) return send(res, 401, { code: 401, details: 'unauthorized' });
    const u = new URL(req.url, 'http://x');
    const hit = (text) => ({
      start: 0, end: text.length, text, detection: 'single_label_classification', detection_type: 'jailbreak',
      detector_id: 'jailbreak-detector', score: 0.95,
    });
    if (u.pathname === '/ibm/api/v1/text/contents') {
      if (!req.headers['detector-id']) return send(res, 422, { code: 422, details: 'detector-id header is required' });
      if (!Array.isArray(json.contents) || typeof json.detector_params !== 'object')
        return send(res, 422, { code: 422, details: 'contents' });
      return answer(res, json.contents, {
        block: () => json.contents.map((t) => (has(t, 'BLOCKME') ? [hit(t)] : [])),
        allow: () => json.contents.map((t) => (t.includes('borderline') ? [{ ...hit(t), score: 0.5 }] : [])),
      });
    }
    if (u.pathname === '/ibm/api/v2/text/detection/content') {
      if (typeof json.content !== 'string' || typeof json.detectors !== 'object' || !Object.keys(json.detectors).length)
        return send(res, 422, { code: 422, details: 'content and detectors' });
      return answer(res, [json.content], {
        block: () => ({ detections: [hit(json.content)] }),
        allow: () => ({ detections: [] }),
      });
    }
    return send(res, 404, { code: 404, details: 'not found' });
  }

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let json = null;
      try { json = JSON.parse(body.toString('utf8')); } catch { /* refused below */ }
      const service = req.url.split('/')[1];
      requests.push({ service, method: req.method, url: req.url, headers: req.headers, body: body.toString('utf8'), json });
      if (req.method !== 'POST') return send(res, 405, { message: 'POST only' });
      if (!/^application\/json/i.test(req.headers['content-type'] || '') || !json || typeof json !== 'object')
        return send(res, 400, { message: 'a JSON body is required' });
      if (service === 'aporia') return aporia(req, res, json);
      if (service === 'bedrock') return bedrock(req, res, json, body);
      if (service === 'azure') return azure(req, res, json);
      if (service === 'ibm') return ibm(req, res, json);
      return send(res, 404, { message: 'unknown service' });
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url, requests, creds,
    of(service) { return requests.filter((r) => r.service === service); },
    reset() { requests.length = 0; },
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections?.();
      await new Promise((r) => server.close(r));
    },
  };
}
