// ttft.mjs - time to first token through a target, for bench/run.sh and
// bench/responses.sh.
//   node bench/ttft.mjs URL N [chat|responses] [MODEL]
// With `responses` the request is a Responses API one (input, stream) and the
// first token is the first response.output_text.delta event.
// Sends N sequential streaming chat requests on one keep-alive connection; the
// mock paces the stream (20 chunks, 5 ms apart, the first after 5 ms), so a
// proxy that holds back events shows up here. Measures request start -> first
// byte of the first content chunk ("delta":{"content"...), prints one line:
//   TTFT p50_us=... p99_us=... n=... errors=...
import http from 'node:http';

const [url, nArg, api = 'chat', model = 'bench-model'] = process.argv.slice(2);
const n = Number(nArg || 50);
const prompt = 'Count from one to twenty, one word per line.';
const body = JSON.stringify(api === 'responses'
  ? { model, input: prompt, stream: true, mock: { chunks: 20, chunk_delay_ms: 5 } }
  : {
    model,
    messages: [{ role: 'user', content: prompt }],
    stream: true,
    stream_options: { include_usage: true },
    mock: { chunks: 20, chunk_delay_ms: 5 },
  });
const marker = api === 'responses' ? 'response.output_text.delta' : '"delta":{"content"';
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function one() {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    let first = null, seen = '';
    const req = http.request(url, {
      method: 'POST', agent, noDelay: true,
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench',
                 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (d) => {
        if (first !== null) return;
        seen += d;
        if (seen.includes(marker)) first = process.hrtime.bigint();
      });
      res.on('end', () => resolve(res.statusCode === 200 && first !== null
        ? Number(first - t0) / 1000 : null));
      res.on('error', () => resolve(null));
    });
    req.on('error', () => resolve(null));
    req.end(body);
  });
}

const times = [];
let errors = 0;
for (let i = 0; i < n; i++) {
  const t = await one();
  if (t === null) errors++; else times.push(t);
}
agent.destroy();
times.sort((a, b) => a - b);
const pct = (p) => times.length ? Math.round(times[Math.min(times.length - 1, Math.floor(p / 100 * times.length))]) : 0;
console.log(`TTFT p50_us=${pct(50)} p99_us=${pct(99)} n=${times.length} errors=${errors}`);
