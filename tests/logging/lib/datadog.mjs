// datadog.mjs - a Datadog logs-intake receiver that checks what the `datadog` callback sends.
//
// POST /api/v2/logs as Datadog's HTTP intake takes it
// (https://docs.datadoghq.com/api/latest/logs/#send-logs): the DD-API-KEY
// header must be one of the keys given (else 403 {"errors":["Forbidden"]}),
// Content-Type application/json (gzip or plain), a JSON array of at most 1000
// entries and 5 MB uncompressed (else 413/400). Each entry must be LiteLLM's
// DatadogPayload (litellm/types/integrations/datadog.py): the strings
// ddsource, ddtags, hostname, message, service and a status of info, warning
// or error; its message must parse as a StandardLoggingPayload
// (litellm/types/utils.py: the fields checked below). Answers 202 {} like the
// intake. fail(status, n) answers the next n requests with status.
import http from 'node:http';
import zlib from 'node:zlib';
import { once } from 'node:events';
import { z } from 'zod/v4';

const str = z.string();
const optStr = z.string().nullable().optional();
const num = z.number();

/** The StandardLoggingPayload fields every record carries (LiteLLM types/utils.py). */
export const StandardLoggingPayload = z.object({
  id: str,
  trace_id: str,
  call_type: str,
  status: z.enum(['success', 'failure']),
  response_cost: num,
  custom_llm_provider: optStr,
  total_tokens: num,
  prompt_tokens: num,
  completion_tokens: num,
  startTime: num,
  endTime: num,
  completionStartTime: num,
  model: str,
  model_id: optStr,
  model_group: optStr,
  api_base: str,
  metadata: z.object({
    user_api_key_hash: optStr,
    user_api_key_alias: optStr,
    user_api_key_team_id: optStr,
    user_api_key_user_id: optStr,
  }).passthrough(),
  cache_hit: z.boolean().nullable().optional(),
  request_tags: z.array(z.any()),
  end_user: optStr,
  messages: z.any(),
  response: z.any(),
  error_str: optStr,
  model_parameters: z.record(z.string(), z.any()),
  hidden_params: z.record(z.string(), z.any()),
}).passthrough();

export const DatadogPayload = z.object({
  ddsource: str,
  ddtags: str,
  hostname: str,
  message: str,
  service: str,
  status: z.enum(['info', 'warning', 'error']),
}).strict();

/** Start a receiver taking the API keys given. Returns {url, port, logs,
 * requests, invalid, fail(status, n), stop()}: logs are the accepted entries
 * with `payload` (the parsed message) and `apiKey`. */
export async function startDatadog(apiKeys = ['dd-api-key-test']) {
  const state = { logs: [], requests: [], invalid: [], failNext: 0, failStatus: 500 };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      let raw = Buffer.concat(chunks);
      const key = req.headers['dd-api-key'];
      const answer = (status, obj) => {
        state.requests.push({ status, apiKey: key, headers: req.headers, bytes: raw.length });
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(obj));
      };
      if (req.method !== 'POST' || req.url !== '/api/v2/logs') return answer(404, { errors: ['Not found'] });
      if (!apiKeys.includes(key)) return answer(403, { errors: ['Forbidden'] });
      if (state.failNext > 0) {
        state.failNext--;
        return answer(state.failStatus, { errors: ['told to fail'] });
      }
      if (!/^application\/json/.test(req.headers['content-type'] || '')) {
        return answer(400, { errors: ['unsupported content type'] });
      }
      if (req.headers['content-encoding'] === 'gzip') {
        try { raw = zlib.gunzipSync(raw); } catch { return answer(400, { errors: ['bad gzip'] }); }
      }
      if (raw.length > 5 * 1024 * 1024) return answer(413, { errors: ['Payload too large'] });
      let body;
      try { body = JSON.parse(raw.toString('utf8')); } catch { return answer(400, { errors: ['not JSON'] }); }
      if (!Array.isArray(body) || body.length > 1000) return answer(400, { errors: ['an array of at most 1000 logs'] });
      for (const entry of body) {
        const e = DatadogPayload.safeParse(entry);
        let payload = null, issues = e.success ? null : e.error.issues;
        if (e.success) {
          try {
            payload = JSON.parse(entry.message);
            const p = StandardLoggingPayload.safeParse(payload);
            if (!p.success) issues = p.error.issues;
          } catch (err) {
            issues = [{ message: `message is not JSON: ${err.message}` }];
          }
        }
        if (issues) state.invalid.push({ entry, issues });
        else state.logs.push({ ...entry, payload, apiKey: key });
      }
      answer(202, {});
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    logs: state.logs,
    requests: state.requests,
    invalid: state.invalid,
    fail(status, n) { state.failStatus = status; state.failNext = n; },
    async stop() { server.closeAllConnections?.(); server.close(); },
  };
}
