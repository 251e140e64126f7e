// gen-texts.mjs OUTDIR - write the benchmark texts (raw UTF-8 files):
// prose.txt, code.txt (4 MB each, from the differential test's generators),
// cjk.txt (4 MB of varied generated Chinese/Japanese/Korean, cjk-text.mjs),
// cjk-rep.txt (the differential test's short CJK sample repeated to 4 MB,
// kept for comparison: it flatters per-thread caches) and word.txt (a single
// 1 MB "word").
import { writeFileSync, mkdirSync } from 'node:fs';
import { rng, prose, repeatTo, SAMPLES } from '../../tests/tokenizer/corpus.mjs';
import { cjkText } from './cjk-text.mjs';
const out = process.argv[2];
mkdirSync(out, { recursive: true });
const size = 4 << 20;
writeFileSync(`${out}/prose.txt`, repeatTo(prose(rng(7), 400000), size));
writeFileSync(`${out}/code.txt`, repeatTo(SAMPLES.code, size));
writeFileSync(`${out}/cjk.txt`, cjkText(rng(11), size));
writeFileSync(`${out}/cjk-rep.txt`, repeatTo(SAMPLES.cjk, size));
writeFileSync(`${out}/word.txt`, 'abcdefghij'.repeat(1 << 20).slice(0, 1 << 20));
