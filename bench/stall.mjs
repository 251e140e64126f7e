// stall.mjs - the longest a worker's loop is kept from answering while it serves large
// CPU-heavy requests: probes /health/liveliness every 5 ms on its own keep-alive connection
// while one big request runs, and prints the worst probe latency per case. Run against a
// gateway started with --workers 1 (so the probe and the work share one loop):
//   node bench/stall.mjs http://127.0.0.1:4000 [model]
// Cases: an 8 MB CJK /utils/token_counter, a 30 MB chat body (validated on the loop), and a
// /metrics scrape. Figures are wall-clock on a shared machine: compare cases in one run.
import http from 'node:http';

const base = process.argv[2] || 'http://127.0.0.1:4000';
const model = process.argv[3] || 'mock-gpt';
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const big = new http.Agent({ keepAlive: true, maxSockets: 1 });

function req(path, body, ag) {
  return new Promise((resolve, reject) => {
    const data = body == null ? null : Buffer.from(JSON.stringify(body));
    const r = http.request(`${base}${path}`, { method: data ? 'POST' : 'GET', agent: ag,
      headers: data ? { 'content-type': 'application/json', 'content-length': data.length } : {} },
    (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
    r.on('error', reject);
    r.end(data);
  });
}

async function probeWhile(p) {
  let done = false, worst = 0, n = 0;
  p.then(() => { done = true; }, () => { done = true; });
  while (!done) {
    const t = process.hrtime.bigint();
    await req('/health/liveliness', null, agent);
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    worst = Math.max(worst, ms); n++;
    await new Promise((r) => setTimeout(r, 5));
  }
  return { worst, n };
}

const cjk = '\u6211\u4eec\u7684\u7cfb\u7edf\u5728\u665a\u4e0a\u51fa\u73b0\u4fe1\u53f7\u6545\u969c\uff0c\u8bf7\u68c0\u67e5\u8f68\u9053\u7535\u8def\u3002';
let text = ''; let i = 0;
while (Buffer.byteLength(text) < 8 << 20) text += cjk.slice(i % 7) + cjk.slice(0, i++ % 11);
const cases = [
  ['token_counter 8 MB CJK', () => req('/utils/token_counter', { model, messages: [{ role: 'user', content: text }] }, big)],
  ['chat 30 MB body', () => req('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'x'.repeat(30 << 20) }] }, big)],
  ['metrics scrape', () => req('/metrics', null, big)],
];
for (const [name, f] of cases) {
  await req('/health/liveliness', null, agent);
  const { worst, n } = await probeWhile(f());
  console.log(`${name.padEnd(24)} worst probe ${worst.toFixed(1)} ms over ${n} probes`);
}
agent.destroy(); big.destroy();
