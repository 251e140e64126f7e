// observed.mjs - summarise an upstream log (upstream.mjs's JSON lines) as
// the per-CLI call tables of docs/agents.md: for each client (told apart by
// its user-agent) and each call (method and path, ids and model names
// generalised), how many were seen, the headers it sent (values of the
// notable ones) and the body's top-level fields.
//
//   node run.mjs --direct --keep --out DIR && node observed.mjs DIR/upstream.log
import fs from 'node:fs';

const file = process.argv[2];
if (!file) {
  console.error('usage: node observed.mjs upstream.log');
  process.exit(2);
}

const COMMON = new Set(['host', 'connection', 'content-length', 'accept-encoding', 'content-type', 'accept']);
const SHOW = /^(user-agent|anthropic-|x-app|x-stainless-(retry-count|timeout|package-version)|originator|openai-|version|session_id|x-codex|x-openai|x-opencode|http-referer|x-title)/;

function client(ua = '') {
  if (/^claude-cli/.test(ua)) return 'Claude Code';
  if (/codex/i.test(ua)) return 'Codex';
  if (/opencode|ai-sdk/i.test(ua)) return 'opencode';
  return ua || '(no user-agent)';
}

const norm = (p) => p
  .replace(/\/projects\/[^/]+\/locations\/[^/]+\//, '/projects/{project}/locations/{region}/')
  .replace(/\/models\/[^/:]+:/, '/models/{model}:');

const groups = new Map();
for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
  if (!line.trim()) continue;
  const e = JSON.parse(line);
  const who = client(e.headers['user-agent']);
  const k = `${who}\t${e.method} ${norm(e.path)}${e.query ? ` ${e.query}` : ''}`;
  const g = groups.get(k) || { n: 0, headers: new Map(), body: new Set(), streams: new Set(), tools: new Set(), statuses: new Set() };
  g.n++;
  for (const [h, v] of Object.entries(e.headers)) {
    if (COMMON.has(h)) continue;
    if (!g.headers.has(h)) g.headers.set(h, new Set());
    if (SHOW.test(h)) g.headers.get(h).add(String(v).replace(/[0-9a-f]{8}-[0-9a-f-]{27,}/g, '{uuid}'));
  }
  for (const b of e.bodyKeys || []) g.body.add(b);
  if (e.stream !== undefined) g.streams.add(String(e.stream));
  for (const t of e.tools || []) g.tools.add(t);
  g.statuses.add(e.status);
  groups.set(k, g);
}

let last = '';
for (const [k, g] of [...groups].sort()) {
  const [who, call] = k.split('\t');
  if (who !== last) { console.log(`\n## ${who}\n\n| call | seen | headers | body fields |\n|---|---|---|---|`); last = who; }
  const hs = [...g.headers].map(([h, vs]) => (vs.size ? `\`${h}: ${[...vs].join(' / ')}\`` : `\`${h}\``)).join(', ');
  const body = [...g.body].map((b) => `\`${b}\``).join(', ');
  console.log(`| \`${call}\` | ${g.n} (stream ${[...g.streams].join('/') || '-'}, status ${[...g.statuses].join('/')}) | ${hs} | ${body} |`);
}
const tools = [...groups].filter(([, g]) => g.tools.size).map(([k, g]) => `${k.split('\t')[0]}: ${[...g.tools].join(', ')}`);
if (tools.length) console.log(`\nTools declared:\n${[...new Set(tools)].map((t) => `- ${t}`).join('\n')}`);
