// gen-texts.mjs OUTDIR - write the benchmark texts (raw UTF-8 files):
// prose.txt, code.txt, cjk.txt (4 MB each, from the differential test's
// generators) and word.txt (a single 1 MB "word").
import { writeFileSync, mkdirSync } from 'node:fs';
import { rng, prose, repeatTo, SAMPLES } from '../../tests/tokenizer/corpus.mjs';
const out = process.argv[2];
mkdirSync(out, { recursive: true });
const size = 4 << 20;
writeFileSync(`${out}/prose.txt`, repeatTo(prose(rng(7), 400000), size));
writeFileSync(`${out}/code.txt`, repeatTo(SAMPLES.code, size));
writeFileSync(`${out}/cjk.txt`, repeatTo(SAMPLES.cjk, size));
writeFileSync(`${out}/word.txt`, 'abcdefghij'.repeat(1 << 20).slice(0, 1 << 20));
