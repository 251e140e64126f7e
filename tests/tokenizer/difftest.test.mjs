// difftest.test.mjs - switchyard's C tokenizer (sy-tokenize, path in
// $SY_TOKENIZE) must produce exactly npm tiktoken's ids for every corpus text,
// in cl100k_base and o200k_base, and decode back to the same bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { get_encoding } from 'tiktoken';
import { buildCorpus } from './corpus.mjs';

const bin = process.env.SY_TOKENIZE;
const texts = buildCorpus();

function frames(list) {
  const parts = [];
  for (const t of list) {
    const b = Buffer.from(t, 'utf8');
    parts.push(Buffer.from(`${b.length}\n`), b);
  }
  return Buffer.concat(parts);
}

for (const enc of ['cl100k_base', 'o200k_base']) {
  test(`${enc}: ids equal npm tiktoken`, { skip: !bin && 'SY_TOKENIZE not set' }, () => {
    const res = spawnSync(bin, ['-d', enc], { input: frames(texts), maxBuffer: 1 << 30 });
    assert.equal(res.status, 0, `sy-tokenize failed: ${res.stderr}`);
    const lines = res.stdout.toString().split('\n');
    const tk = get_encoding(enc);
    let mismatches = 0, tokens = 0, bytes = 0;
    for (let i = 0; i < texts.length; i++) {
      const want = Array.from(tk.encode_ordinary(texts[i]));
      const got = lines[i] === '' ? [] : lines[i].split(' ').map(Number);
      tokens += want.length;
      bytes += Buffer.byteLength(texts[i]);
      if (want.length !== got.length || want.some((v, k) => v !== got[k])) {
        if (mismatches++ < 5) {
          console.log(`MISMATCH ${enc} #${i} ${JSON.stringify(texts[i].slice(0, 120))}`);
          console.log(`  want ${want.slice(0, 40).join(' ')}`);
          console.log(`  got  ${got.slice(0, 40).join(' ')}`);
        }
      }
    }
    tk.free();
    console.log(`${enc}: compared ${texts.length} texts, ${bytes} bytes, ${tokens} tokens: ${mismatches} mismatches`);
    assert.equal(mismatches, 0);
  });
}
