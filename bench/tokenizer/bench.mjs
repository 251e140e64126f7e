// bench.mjs SY_TOK_BENCH TEXTDIR - run the C tokenizer benchmark and npm
// tiktoken (WASM build of tiktoken's Rust core) on the same texts, one core
// each, and print a table of MB/s with the ratio. tiktoken runs in a child
// process per text with a time cap (its BPE is quadratic on one long word).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const CAP_S = Number(process.env.TIKTOKEN_CAP_S || 20);

if (process.argv[2] === '--tiktoken') {
  // child: best-of-3 CPU-time MB/s of encode_ordinary on one file
  const require = createRequire(here + '../../tests/tokenizer/package.json');
  const { get_encoding } = require('tiktoken');
  const enc = get_encoding(process.argv[3]);
  const text = readFileSync(process.argv[4], 'utf8');
  const bytes = Buffer.byteLength(text);
  let best = 0;
  for (let round = 0; round < 3; round++) {
    const t0 = process.cpuUsage();
    let reps = 0, el = 0;
    do {
      enc.encode_ordinary(text);
      reps++;
      const d = process.cpuUsage(t0);
      el = (d.user + d.system) / 1e6;
    } while (el < 0.3);
    best = Math.max(best, (bytes * reps) / el / 1e6);
  }
  console.log(best.toFixed(2));
  process.exit(0);
}

const [bin, dir] = process.argv.slice(2);
const files = ['prose.txt', 'code.txt', 'cjk.txt', 'cjk-rep.txt', 'word.txt'];
const rows = [];
for (const enc of ['cl100k_base', 'o200k_base']) {
  const c = spawnSync(bin, [enc, ...files.map((f) => `${dir}/${f}`)], { encoding: 'utf8' });
  if (c.status !== 0) throw new Error(`sy-tok-bench failed: ${c.stderr}`);
  const lines = c.stdout.trim().split('\n');
  const init = lines.shift().split(' ')[1];
  for (const line of lines) {
    const [name, bytes, tokens, mbs] = line.split(' ');
    const t = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--tiktoken', enc, `${dir}/${name}`],
      { encoding: 'utf8', timeout: CAP_S * 1000 });
    const tk = t.status === 0 ? Number(t.stdout.trim()) : null;
    rows.push({ enc, name, bytes: Number(bytes), tokens: Number(tokens), sy: Number(mbs), tk, init });
  }
}
const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
console.log(`${pad('encoding', 12)} ${pad('text', 10)} ${lpad('MB', 6)} ${lpad('tokens', 9)} ${lpad('switchyard MB/s', 16)} ${lpad('tiktoken MB/s', 14)} ${lpad('ratio', 8)}`);
for (const r of rows) {
  const tk = r.tk === null ? `>${CAP_S}s cap` : r.tk.toFixed(2);
  const ratio = r.tk === null ? `>${(r.sy * CAP_S / (r.bytes / 1e6)).toFixed(0)}x` : `${(r.sy / r.tk).toFixed(1)}x`;
  console.log(`${pad(r.enc, 12)} ${pad(r.name.replace('.txt', ''), 10)} ${lpad((r.bytes / 1e6).toFixed(2), 6)} ${lpad(r.tokens, 9)} ${lpad(r.sy.toFixed(1), 16)} ${lpad(tk, 14)} ${lpad(ratio, 8)}`);
}
console.log(`sy_tok_init (both vocabularies): ${rows[0].init} ms; MB/s are per core (CPU time, best round)`);
