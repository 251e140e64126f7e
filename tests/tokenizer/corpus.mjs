// corpus.mjs - deterministic text corpus for the tokenizer differential test
// and the benchmark: English, code, JSON, CJK, Arabic, Hindi, Thai, emoji/ZWJ,
// combining marks, contractions in every case, digit runs 1-20, whitespace
// and newline runs, very long words, 100 KB texts and random Unicode strings.

export function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ('the of and to in is was he for it with as his on be at by had are but from or have an they which ' +
  'one you were her all she there would their we him been has when who will more no if out so said what up its about ' +
  'into than them can only other new some could time these two may then do first any my now such like our over man me ' +
  'even most made after also did many before must through back years where much your way well down should because ' +
  'each just those people Mr how too little state good very make world still own see men work long get here between ' +
  'both life being under never day same another know while last might us great old year off come since against go came ' +
  'right used take three tokenizer gateway OpenAI LiteLLM JSON Paris London München naïve café résumé coöperate').split(' ');

export const SAMPLES = {
  code: `#include <stdio.h>\n\nint main(int argc, char **argv)\n{\n    for (int i = 0; i < argc; i++) {\n        printf("%d: %s\\n", i, argv[i]);\n    }\n    return 0;\n}\n` +
    `def fib(n: int) -> int:\n    """Return the n-th Fibonacci number."""\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n\n` +
    `export async function fetchJson(url) {\n\tconst res = await fetch(url, { headers: { 'Accept': 'application/json' } });\n\tif (!res.ok) throw new Error(\`HTTP \${res.status}\`);\n\treturn res.json();\n}\n` +
    `SELECT u.id, COUNT(*) AS n FROM users u JOIN orders o ON o.user_id = u.id WHERE o.total >= 100.50 GROUP BY u.id;\r\n` +
    `    if x != nil && len(x.items) > 0 { return x.items[0], nil } // TODO(me): handle   \n\n\n  `,
  cjk: '人工智能正在改变世界。我们的网关需要精确地计算令牌数量,以便正确计费。東京は日本の首都であり、世界最大級の都市です。' +
    '今日はいい天気ですね!カタカナとひらがなを混ぜたテキスト。한국어 문장도 포함됩니다. 서울은 대한민국의 수도입니다. ' +
    '中华人民共和国成立于1949年10月1日。「引用」と『二重引用』、【括弧】も。',
  arabic: 'مرحبا بالعالم! هذه جملة عربية تحتوي على أرقام ١٢٣٤٥٦٧٨٩٠ وتشكيل: مُحَمَّدٌ رَسُولُ. الذكاء الاصطناعي يغير العالم.',
  hindi: 'नमस्ते दुनिया! यह एक हिंदी वाक्य है। कृत्रिम बुद्धिमत्ता दुनिया बदल रही है। संख्याएँ: १२३४५६७८९०।',
  thai: 'สวัสดีชาวโลก ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ ปัญญาประดิษฐ์กำลังเปลี่ยนแปลงโลก ๑๒๓๔๕',
  emoji: '👋🏽 Hello 👨‍👩‍👧‍👦 family, 🏳️‍🌈 flag, 🧑🏿‍💻 coder, ❤️‍🔥 heart on fire, 🇫🇷🇯🇵 flags, keycap 1️⃣ #️⃣, ©️ ™️ ✔︎ ' +
    '🫠🫶🏻 😀😃😄 and text after.',
  marks: 'e\u0301 a\u0300\u0323 n\u0303o\u0308 Z\u0351\u0352\u0353\u0354a\u0355\u0356l\u0357g\u0358o\u0359 \u0301\u0301start ' +
    'ั่งสือ ক্ষ ё й Å\u030A \u20DD\u20DE x\u0338 ǅungla ʰʲʷ ᵃᵇ Ⅻ ½ ² ³ ᴬᴮᴰ',
};

export function prose(r, bytes) {
  let out = '', total = 0;
  while (total < bytes) {
    const before = out.length;
    let sent = [];
    const n = 5 + Math.floor(r() * 20);
    for (let i = 0; i < n; i++) sent.push(WORDS[Math.floor(r() * WORDS.length)]);
    sent[0] = sent[0][0].toUpperCase() + sent[0].slice(1);
    const punct = ['.', '.', '.', '?', '!', ';', ' -', ',', ':'][Math.floor(r() * 9)];
    out += sent.join(' ') + punct + (r() < 0.15 ? '\n\n' : ' ');
    if (r() < 0.1) out += `It's ${Math.floor(r() * 100000)} dollars (we've checked, they'll agree). `;
    total += Buffer.byteLength(out.slice(before));
  }
  return out;
}

export function repeatTo(s, bytes) {
  return s.repeat(Math.ceil(bytes / Buffer.byteLength(s)));
}

function randomJson(r, depth) {
  const k = r();
  if (depth > 3 || k < 0.3) return [r() * 1e6, Math.floor(r() * 1000), 'str ' + Math.floor(r() * 99), true, null, 'ünï 中文'][Math.floor(r() * 6)];
  if (k < 0.6) return Array.from({ length: Math.floor(r() * 5) }, () => randomJson(r, depth + 1));
  const o = {};
  for (let i = 0; i < 4; i++) o[WORDS[Math.floor(r() * WORDS.length)] + '_' + i] = randomJson(r, depth + 1);
  return o;
}

// Characters chosen to hit every branch of the split regexes.
const TRICKY = [' ', ' ', '  ', '\n', '\r', '\r\n', '\t', '\v', '\f', 'a', 'b', 'Z', 'A', 'é', 'É', '1', '22', '١', '٣', "'", "'", 's', 'S',
  'ſ', 't', 'T', 're', 'RE', 'Ve', 'll', 'LL', 'm', 'M', 'd', 'D', '/', '//', '!', '?', '.', ',', '-', '_', '$', '€', '\u0301', '\u0308',
  '\u00A0', '\u0085', '\u2028', '\u2029', '\u3000', '\uFEFF', '\u200B', '\u200D', '\u1680', '\u2009', 'ǅ', 'ʰ', '中', '文', 'Ⅻ', '²',
  '½', 'ß', 'ﬁ', 'İ', 'ı', 'K', 'Å', 'Ω', 'σ', 'ς', 'Σ', '🙂', '👍🏽', '\u{1D400}', '\u{10D40}', '\u{2EBF0}', '\u{1E030}', '\u0000', '\u007F',
  '\uFFFD', '\uE000', '\u{10FFFF}', '\u0378', 'ー', '々', '〆', 'ᄀ', '가', '<|endoftext|>', '<|fim_prefix|>'];

export function randomTricky(r, len) {
  let s = '';
  for (let i = 0; i < len; i++) s += TRICKY[Math.floor(r() * TRICKY.length)];
  return s;
}

export function randomUnicode(r, len) {
  let s = '';
  for (let i = 0; i < len; i++) {
    const k = r();
    let cp;
    if (k < 0.3) cp = 0x20 + Math.floor(r() * 0x5f);
    else if (k < 0.4) cp = Math.floor(r() * 0x80);
    else if (k < 0.55) cp = 0x80 + Math.floor(r() * 0x780);
    else if (k < 0.85) cp = Math.floor(r() * 0x10000);
    else cp = 0x10000 + Math.floor(r() * 0x100000);
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd; // keep strings valid UTF-16/UTF-8
    s += String.fromCodePoint(cp);
  }
  return s;
}

export function buildCorpus() {
  const r = rng(12345);
  const texts = [];
  const add = (s) => texts.push(s);
  add(''); add(' '); add('\n'); add('a'); add('hello world'); add('Hello, World!');
  for (const s of Object.values(SAMPLES)) { add(s); add(s.toUpperCase()); add(' ' + s + '  '); }
  for (let i = 0; i < 40; i++) add(prose(r, 50 + Math.floor(r() * 2000)));
  for (let i = 0; i < 20; i++) add(JSON.stringify(randomJson(r, 0), null, i % 3 ? 2 : 0));
  // contractions in every case, alone and after words/spaces/punctuation
  for (const c of ['s', 't', 're', 've', 'm', 'll', 'd', 'ſ', 'x', 'r', 'v', 'l']) {
    const forms = new Set([c, c.toUpperCase(), c[0].toUpperCase() + c.slice(1), c[0] + c.slice(1).toUpperCase()]);
    for (const f of forms) {
      add(`'${f}`); add(`it'${f}`); add(`IT'${f}`); add(` '${f} x`); add(`don'${f}'${f}`); add(`ÉTÉ'${f}aa`); add(`1'${f}`);
      add(`\n'${f}`); add(`''${f}`); add(`abc'${f}def`); add(`Ab'${f}`);
    }
  }
  // digit runs of every length 1..20, in context
  for (let n = 1; n <= 20; n++) {
    const d = '1234567890'.repeat(2).slice(0, n);
    add(d); add(' ' + d); add('x' + d + 'y'); add(d + '.' + d); add('١٢٣٤٥٦٧٨٩٠١٢٣٤٥٦٧٨٩٠'.slice(0, n)); add('$' + d + ',00');
  }
  // whitespace and newline runs
  const WS = [' ', '\t', '\n', '\r\n', '\r', '\u0085', '\u00A0', '\u2028', '\u3000', '\uFEFF', '\u000B', '\u000C'];
  for (const a of WS) for (const b of WS) {
    add(`x${a}${b}y`); add(`x${a}${a}${b}${b}y`); add(`x ${a}${b} `); add(`${a}${b}`); add(`a${a}  ${b}1`); add(`!${a}${b}!`);
  }
  for (let n = 1; n < 12; n++) { add(' '.repeat(n) + 'x'); add('x' + ' '.repeat(n)); add('\n'.repeat(n) + ' '.repeat(n) + 'x'); add('x' + ' \n'.repeat(n)); }
  add('trailing spaces   \nand tabs\t\t\n\r\n  \r\n\n'); add('line one\r\nline two\r\n\r\n    indented\n');
  // very long words
  add('a'.repeat(5000)); add('ab'.repeat(3000)); add('Supercalifragilistic'.repeat(200)); add('1'.repeat(3001));
  add('!'.repeat(4000)); add(' '.repeat(4000)); add('\n'.repeat(3000)); add('中'.repeat(3000)); add('🙂'.repeat(1000));
  add('x'.repeat(129)); add('x'.repeat(128)); add('ab'.repeat(64) + 'c'); add('e\u0301'.repeat(500));
  // 100 KB texts
  add(repeatTo(prose(r, 20000), 100000)); add(repeatTo(SAMPLES.code, 100000)); add(repeatTo(SAMPLES.cjk, 100000));
  add(randomUnicode(r, 30000));
  // random strings
  for (let i = 0; i < 4000; i++) add(randomTricky(r, 1 + Math.floor(r() * 40)));
  for (let i = 0; i < 2000; i++) add(randomUnicode(r, 1 + Math.floor(r() * 60)));
  return texts;
}
