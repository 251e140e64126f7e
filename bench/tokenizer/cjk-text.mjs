// cjk-text.mjs - a varied, deterministic Chinese/Japanese/Korean benchmark
// text (no repeated sample, so a per-thread lookup cache is not flattered).
//
// Vocabulary: every o200k_base token that is a whole run of Han, kana or
// Hangul characters, in rank order (BPE ranks follow training frequency, so
// low ranks are the common words). Han characters: cl100k_base's single-
// character Han tokens in rank order, then every other Han character of the
// o200k tokens in the order of the first rank they appear in, plus a tail of
// rare ideographs from the whole U+4E00..U+9FFF block. Sentences draw words
// and single characters with Zipf weights (real CJK character and word
// frequencies are Zipf-shaped), so adjacent characters form both known and
// unknown pairs, as in real text. Mix: 50 % Chinese, 30 % Japanese (kanji
// words, kana particles, katakana words), 20 % Korean (space-separated
// Hangul words), CJK punctuation, some digits and Latin words.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));

export function cjkText(r, bytes) {
  const require = createRequire(here + '../../tests/tokenizer/package.json');
  const { get_encoding } = require('tiktoken');
  const td = new TextDecoder('utf-8', { fatal: true });
  const han = [], hira = [], kata = [], hangul = [], chars = new Map();
  // Character order: cl100k_base's single-character tokens first (its
  // training mix is closer to ordinary text), then o200k_base's.
  const cl = get_encoding('cl100k_base');
  for (let rank = 0; rank < 100256; rank++) {
    let s;
    try { s = td.decode(cl.decode_single_token_bytes(rank)); } catch { continue; }
    if (/^\p{Script=Han}$/u.test(s) && !chars.has(s)) chars.set(s, chars.size);
  }
  cl.free();
  const enc = get_encoding('o200k_base');
  for (let rank = 0; rank < 199998; rank++) {
    let s;
    try { s = td.decode(enc.decode_single_token_bytes(rank)); } catch { continue; }
    if (/^\p{Script=Han}+$/u.test(s)) han.push(s);
    else if (/^[\p{Script=Hiragana}ー]+$/u.test(s)) hira.push(s);
    else if (/^[\p{Script=Katakana}ー]+$/u.test(s)) kata.push(s);
    else if (/^\p{Script=Hangul}+$/u.test(s)) hangul.push(s);
    else continue;
    for (const c of s) if (/\p{Script=Han}/u.test(c) && !chars.has(c)) chars.set(c, chars.size);
  }
  enc.free();
  const hanChars = [...chars.keys()];
  const zipf = (list) => list[Math.min(list.length - 1, Math.floor(Math.exp(r() * Math.log(list.length + 1))) - 1)];
  const rareHan = () => String.fromCodePoint(0x4e00 + Math.floor(r() * 0x5200));
  const hanUnit = () => {
    const k = r();
    if (k < 0.5) return zipf(han);
    if (k < 0.97) return zipf(hanChars);
    return rareHan();
  };
  const pick = (a) => a[Math.floor(r() * a.length)];
  const latin = ['AI', 'GPT-4o', 'API', 'JSON', 'LiteLLM', 'OpenAI', 'HTTP', 'Linux', 'token'];
  const zh = () => {
    let s = '';
    const n = 6 + Math.floor(r() * 30);
    for (let i = 0; i < n; i++) {
      s += hanUnit();
      const k = r();
      if (k < 0.08) s += pick(',,、');
      else if (k < 0.1) s += Math.floor(r() * 3000) + pick(['年', '月', '日', '个', '%']);
      else if (k < 0.11) s += pick(latin);
    }
    return s + pick('。。。!?;') ;
  };
  const ja = () => {
    let s = '';
    const n = 5 + Math.floor(r() * 20);
    for (let i = 0; i < n; i++) {
      const k = r();
      s += k < 0.45 ? hanUnit() : k < 0.75 ? zipf(hira) : zipf(kata);
      if (r() < 0.35) s += zipf(hira);
      if (r() < 0.07) s += pick('、、「」『』');
    }
    return s + pick('。。。!?');
  };
  const ko = () => {
    const w = [];
    const n = 3 + Math.floor(r() * 12);
    for (let i = 0; i < n; i++) {
      let word = zipf(hangul);
      if (r() < 0.5) word += zipf(hangul);
      w.push(r() < 0.03 ? pick(latin) : word);
    }
    return w.join(' ') + pick(['. ', '. ', '? ', '! ']);
  };
  let out = '', total = 0;
  while (total < bytes) {
    const k = r();
    const s = (k < 0.5 ? zh() : k < 0.8 ? ja() : ko()) + (r() < 0.1 ? '\n\n' : '');
    out += s;
    total += Buffer.byteLength(s);
  }
  return out;
}
