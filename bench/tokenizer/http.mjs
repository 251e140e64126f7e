// http.mjs SWITCHYARD TEXTDIR - /utils/token_counter over HTTP: the real
// binary (--workers 1) answers a keep-alive loop of 100 KB chat counts per
// text class and encoding on one connection; MB/s is message bytes over wall
// time. In the same run npm tiktoken (in-process, this Node process) encodes
// the same 100 KB text, and the ratio is printed. Rounds are interleaved
// (gateway, tiktoken, gateway, ...) and the best of each is kept, because the
// machine is shared.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const require = createRequire(here + '../../tests/tokenizer/package.json');
const { get_encoding } = require('tiktoken');
const [bin, dir] = process.argv.slice(2);
const SIZE = Number(process.env.HTTP_TEXT_BYTES || 100 * 1024);
const ROUND_S = Number(process.env.HTTP_ROUND_S || 1.0);
const ROUNDS = Number(process.env.HTTP_ROUNDS || 3);

/* The first `bytes` UTF-8 bytes of a file, cut at a character boundary. */
function head(file, bytes) {
  const b = readFileSync(file);
  let n = Math.min(bytes, b.length);
  while (n > 0 && (b[n] & 0xc0) === 0x80) n--;
  return b.subarray(0, n).toString('utf8');
}

async function freePort() {
  const s = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const p = s.address().port;
  await new Promise((r) => s.close(r));
  return p;
}

const port = await freePort();
const gw = spawn(bin, ['--port', String(port), '--host', '127.0.0.1', '--workers', '1'], { stdio: ['ignore', 'ignore', 'pipe'] });
await new Promise((resolve, reject) => {
  let log = '';
  gw.stderr.on('data', (d) => { log += d; if (/listening on/.test(log)) resolve(); });
  gw.once('exit', (c) => reject(new Error(`switchyard exited ${c}: ${log}`)));
});
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function post(body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/utils/token_counter', method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      const parts = [];
      res.on('data', (d) => parts.push(d));
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(parts)) : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function gatewayRound(body, textBytes) {
  const t0 = process.hrtime.bigint();
  let n = 0, el = 0;
  do {
    await post(body);
    n++;
    el = Number(process.hrtime.bigint() - t0) / 1e9;
  } while (el < ROUND_S);
  return (textBytes * n) / el / 1e6;
}

function tiktokenRound(enc, text, textBytes) {
  const t0 = process.hrtime.bigint();
  let n = 0, el = 0;
  do {
    enc.encode_ordinary(text);
    n++;
    el = Number(process.hrtime.bigint() - t0) / 1e9;
  } while (el < ROUND_S);
  return (textBytes * n) / el / 1e6;
}

const rows = [];
for (const [encName, model] of [['cl100k_base', 'gpt-4'], ['o200k_base', 'gpt-4o']]) {
  const enc = get_encoding(encName);
  for (const name of ['prose', 'code', 'cjk', 'cjk-rep']) {
    const text = head(`${dir}/${name}.txt`, SIZE);
    const textBytes = Buffer.byteLength(text);
    const body = Buffer.from(JSON.stringify({ model, messages: [{ role: 'user', content: text }] }));
    const got = JSON.parse(await post(body)).total_tokens;
    const want = enc.encode_ordinary(text).length + 3 + 1 + 3; /* "user" is 1 token in both */
    if (got !== want) throw new Error(`${encName} ${name}: gateway counted ${got}, tiktoken ${want}`);
    let sy = 0, tk = 0;
    for (let r = 0; r < ROUNDS; r++) {
      sy = Math.max(sy, await gatewayRound(body, textBytes));
      tk = Math.max(tk, tiktokenRound(enc, text, textBytes));
    }
    rows.push({ encName, name, kb: textBytes / 1024, sy, tk });
  }
  enc.free();
}
agent.destroy();
gw.kill('SIGTERM');

const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
console.log(`${pad('encoding', 12)} ${pad('text', 8)} ${lpad('KB', 5)} ${lpad('HTTP MB/s', 10)} ${lpad('tiktoken MB/s', 14)} ${lpad('ratio', 7)}`);
for (const r of rows)
  console.log(`${pad(r.encName, 12)} ${pad(r.name, 8)} ${lpad(r.kb.toFixed(0), 5)} ${lpad(r.sy.toFixed(1), 10)} ${lpad(r.tk.toFixed(2), 14)} ${lpad((r.sy / r.tk).toFixed(1) + 'x', 7)}`);
console.log('HTTP: /utils/token_counter, one keep-alive connection, --workers 1, wall time; tiktoken: in-process, same run');
