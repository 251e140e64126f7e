// slack.mjs - a Slack incoming-webhook receiver for the alerting tests.
//
// Slack's incoming webhooks take POST <hook path> with Content-Type
// application/json and a JSON object whose "text" is the message (mrkdwn);
// they answer 200 "ok", 400 "invalid_payload" for a body that is not that,
// 404 "no_service" for an unknown hook. This receiver does the same checks
// (zod schema for the body, content type, path) and records every message.
//
//   const slack = await startSlack();        // {url, messages, rejected, mode, close()}
//   process env SLACK_WEBHOOK_URL = slack.url
//   await slack.waitFor((m) => m.type === 'llm_exceptions')
//   slack.mode = 'down'   // 503 to everything; 'ok' again to accept
import http from 'node:http';
import { once } from 'node:events';
import { z } from 'zod';

// What Slack accepts from LiteLLM's send_alert: {"text": "..."} and nothing else.
export const SlackMessage = z.object({ text: z.string().min(1) }).strict();

const HOOK = '/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX';

/** Parse LiteLLM's alert text: level, alert type, message, the `Label: \`v\`` fields. */
export function parseAlert(text) {
  const level = /Level: `(\w+)`/.exec(text)?.[1];
  const type = /Alert Type: `(\w+)`/.exec(text)?.[1];
  const num = /^\[Num Alerts: (\d+)\]/.exec(text)?.[1];
  const fields = {};
  for (const m of text.matchAll(/\n([A-Za-z][A-Za-z ]*): `([^`]*)`/g)) fields[m[1]] = m[2];
  return { text, level, type, fields, num: num ? Number(num) : 1 };
}

export async function startSlack() {
  const messages = [];
  const rejected = [];
  const waiters = new Set();
  const state = { mode: 'ok', hits: 0 };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      state.hits++;
      if (state.mode === 'down') {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('service unavailable');
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      const reject = (status, why) => {
        rejected.push({ why, body, headers: req.headers });
        res.writeHead(status, { 'content-type': 'text/plain' }).end(why);
      };
      if (req.method !== 'POST') return reject(405, 'method_not_allowed');
      if (req.url !== HOOK) return reject(404, 'no_service');
      if (!/^application\/json\b/i.test(req.headers['content-type'] || '')) return reject(400, 'invalid_payload');
      let json;
      try { json = JSON.parse(body); } catch { return reject(400, 'invalid_payload'); }
      const parsed = SlackMessage.safeParse(json);
      if (!parsed.success) return reject(400, 'invalid_payload');
      const m = parseAlert(parsed.data.text);
      messages.push(m);
      for (const w of waiters) w();
      res.writeHead(200, { 'content-type': 'text/html' }).end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${server.address().port}${HOOK}`;
  return {
    url, messages, rejected,
    get mode() { return state.mode; },
    set mode(v) { state.mode = v; },
    get hits() { return state.hits; },
    of(type) { return messages.filter((m) => m.type === type); },
    /** Resolve with the first message that pred accepts (bounded wait). */
    waitFor(pred, ms = 15000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = messages.find(pred);
          if (m) { clearTimeout(t); waiters.delete(check); resolve(m); }
        };
        const t = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no such Slack message within ${ms} ms; got:\n${messages.map((x) => x.text).join('\n---\n')}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
    async close() { server.closeAllConnections?.(); server.close(); },
  };
}
