// run.mjs - the agents tier: the real Claude Code, Codex and opencode CLIs,
// headless, through switchyard to the scripted upstream (upstream.mjs).
//
// One upstream and one switchyard (the binary of $SWITCHYARD_BIN, as
// tests/lib/harness.mjs starts it, with its own SQLite file) serve every
// scenario. A scenario generates a virtual key with a budget (master key),
// runs one CLI in a throwaway HOME / XDG / CODEX_HOME and an empty work
// directory with a prompt that carries the upstream's write marker, and
// passes when
//   - the CLI exited 0 within its time limit,
//   - the file exists with the expected content (the tool loop finished: the
//     upstream answers the write call first and "DONE" after its result),
//   - /key/info shows spend > 0 for the key the CLI used,
//   - no request the CLI sent got a 4xx that switchyard made itself, and every
//     answer names the model the CLI asked for (a recording proxy, the tap,
//     sits between the CLIs and switchyard),
//   - switchyard exits 0 at the end.
// A refusal scenario (sc.refused) instead expects the CLI to fail showing
// switchyard's error, with the given number of upstream calls and file state.
// One line per scenario; on failure the reason, the CLI's output tail, the
// requests the upstream refused and switchyard's log tail. Exit 1 when any
// scenario failed.
//
//   node run.mjs [--only REGEX] [--keep] [--out DIR] [--direct]
//   (AGENTS_BODIES=1: every request body the upstream got, and every request the
//   CLIs sent to switchyard with the first 64 KB of its answer, kept under DIR/bodies)
//
// run.sh runs this inside a network namespace that has only loopback, so the
// CLIs cannot reach anything but the gateway; the env below also turns off
// their update checks, telemetry and model-catalogue fetches.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MASTER_KEY, api, startGateway, until } from '../lib/harness.mjs';
import { startUpstream } from './upstream.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.join(here, 'node_modules/.bin');
const arg = (n) => { const i = process.argv.indexOf(n); return i > 0 ? process.argv[i + 1] : undefined; };
const only = arg('--only') ? new RegExp(arg('--only')) : null;
const keep = process.argv.includes('--keep');
// --direct: the CLIs talk to the upstream itself (no gateway, its keys): what
// each CLI sends, for docs/agents.md's tables (summarise with observed.mjs)
const direct = process.argv.includes('--direct');
const CLI_TIMEOUT_MS = Number(process.env.AGENTS_CLI_TIMEOUT_MS || 90000);

const outDir = arg('--out') || fs.mkdtempSync(path.join(os.tmpdir(), 'sy-agents-'));
fs.mkdirSync(outDir, { recursive: true });

/* ---------- the gateway's config ------------------------------------------- */

const VERTEX_MODEL = 'claude-sonnet-4-5@20250929';
const VERTEX_REGION = 'us-east5';

function gatewayConfig(up) {
  const q = (s) => JSON.stringify(s); // a JSON string is a YAML double-quoted scalar
  return `
model_list:
  # Anthropic, native: the name differs from the upstream id, thinking signed by the upstream
  - model_name: claude-sonnet-4-5
    litellm_params: {model: anthropic/claude-sonnet-4-5-20250929, api_base: ${q(up.url)}, api_key: ${q(up.anthropicKey)}}
  - model_name: claude-haiku-4-5
    litellm_params: {model: anthropic/claude-haiku-4-5-20251001, api_base: ${q(up.url)}, api_key: ${q(up.anthropicKey)}}
  # OpenAI, native chat and Responses (gpt-4.1 does not reason: reasoning_effort is a 400 upstream)
  - model_name: gpt-4.1
    litellm_params: {model: openai/gpt-4.1, api_base: ${q(`${up.url}/v1`)}, api_key: ${q(up.openaiKey)}}
  - model_name: gpt-5.5
    litellm_params: {model: openai/gpt-5.5, api_base: ${q(`${up.url}/v1`)}, api_key: ${q(up.openaiKey)}}
  # no price anywhere: a budgeted key is refused (general_settings.switchyard_unpriced_models)
  - model_name: gpt-unpriced
    litellm_params: {model: openai/gpt-unpriced-2099, api_base: ${q(`${up.url}/v1`)}, api_key: ${q(up.openaiKey)}}
  # a self-hosted vLLM (chat completions only), priced by the deployment
  - model_name: qwen3-coder
    litellm_params: {model: hosted_vllm/qwen3-coder, api_base: ${q(`${up.url}/v1`)}, api_key: ${q(up.openaiKey)},
                     input_cost_per_token: 0.0000002, output_cost_per_token: 0.0000008}
  # Claude on Vertex AI: Claude Code's Vertex mode reaches it through /vertex_ai/*
  - model_name: ${q(VERTEX_MODEL)}
    litellm_params:
      model: ${q(`vertex_ai/${VERTEX_MODEL}`)}
      vertex_project: ${q(up.vertexProject)}
      vertex_location: ${VERTEX_REGION}
      vertex_credentials: ${q(up.serviceAccount)}
      api_base: ${q(up.url)}
general_settings:
  master_key: ${MASTER_KEY}
  proxy_batch_write_at: 0.1
`;
}

/* ---------- the CLIs ------------------------------------------------------- */

/** A scenario's throwaway directories and the env every CLI gets (no proxies, no updates, no telemetry). */
function sandbox(name) {
  const root = path.join(outDir, name);
  fs.rmSync(root, { recursive: true, force: true });
  const d = { root, home: path.join(root, 'home'), work: path.join(root, 'work') };
  for (const p of [d.home, d.work]) fs.mkdirSync(p, { recursive: true });
  d.env = {
    PATH: process.env.PATH, LANG: 'C.UTF-8', TERM: 'dumb', NO_COLOR: '1', CI: '1',
    HOME: d.home, TMPDIR: os.tmpdir(),
    XDG_CONFIG_HOME: path.join(d.home, '.config'), XDG_DATA_HOME: path.join(d.home, '.local/share'),
    XDG_CACHE_HOME: path.join(d.home, '.cache'), XDG_STATE_HOME: path.join(d.home, '.local/state'),
    NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost',
  };
  return d;
}

const claudeEnv = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1', CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: '1',
};
const claudeArgs = (d, step) => [...(step ? ['--continue'] : []), '-p', prompt(d, step, 'absolute'),
  '--permission-mode', 'acceptEdits', '--allowedTools', 'Write', '--output-format', 'text'];

function claudeRun(d, step, { gw, key, model, auth = 'bearer' }) {
  return {
    cmd: path.join(BIN, 'claude'),
    args: claudeArgs(d, step),
    env: {
      ...claudeEnv, ANTHROPIC_BASE_URL: gw.url,
      ...(auth === 'bearer' ? { ANTHROPIC_AUTH_TOKEN: key } : { ANTHROPIC_API_KEY: key }),
      ANTHROPIC_MODEL: model, ANTHROPIC_DEFAULT_HAIKU_MODEL: 'claude-haiku-4-5', ANTHROPIC_SMALL_FAST_MODEL: 'claude-haiku-4-5',
    },
  };
}

function claudeVertexRun(d, step, { gw, key }) {
  return {
    cmd: path.join(BIN, 'claude'),
    args: claudeArgs(d, step),
    env: {
      ...claudeEnv, CLAUDE_CODE_USE_VERTEX: '1', CLAUDE_CODE_SKIP_VERTEX_AUTH: '1',
      ANTHROPIC_VERTEX_BASE_URL: direct ? `${gw.url}/v1` : `${gw.url}/vertex_ai/v1`, ANTHROPIC_VERTEX_PROJECT_ID: up.vertexProject,
      CLOUD_ML_REGION: VERTEX_REGION,
      ANTHROPIC_CUSTOM_HEADERS: direct ? `Authorization: Bearer ${up.vertexToken}` : `x-litellm-api-key: Bearer ${key}`,
      ANTHROPIC_MODEL: VERTEX_MODEL, ANTHROPIC_DEFAULT_HAIKU_MODEL: VERTEX_MODEL, ANTHROPIC_SMALL_FAST_MODEL: VERTEX_MODEL,
    },
  };
}

function codexRun(d, step, { gw, key, model, effort }) {
  const codexHome = path.join(d.home, '.codex');
  fs.mkdirSync(codexHome, { recursive: true });
  fs.writeFileSync(path.join(codexHome, 'config.toml'), `model = "${model}"
${effort ? `model_reasoning_effort = "${effort}"\n` : ''}model_provider = "switchyard"
sandbox_mode = "workspace-write"
approval_policy = "never"
check_for_update_on_startup = false

[model_providers.switchyard]
name = "switchyard"
base_url = "${gw.url}/v1"
env_key = "SWITCHYARD_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
[feedback]
enabled = false
`);
  return {
    cmd: path.join(BIN, 'codex'),
    args: ['exec', '--skip-git-repo-check', '--color', 'never', ...(step ? ['resume', '--last'] : []), prompt(d, step, 'relative')],
    env: { CODEX_HOME: codexHome, SWITCHYARD_API_KEY: key },
  };
}

function opencodeRun(d, step, { gw, key, model }) {
  fs.writeFileSync(path.join(d.work, 'opencode.json'), JSON.stringify({
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    model: `switchyard/${model}`,
    small_model: `switchyard/${model}`,
    provider: {
      switchyard: {
        npm: '@ai-sdk/openai-compatible',
        name: 'switchyard',
        options: { baseURL: `${gw.url}/v1`, apiKey: '{env:SWITCHYARD_API_KEY}' },
        models: { [model]: { name: model, tool_call: true } },
      },
    },
  }, null, 2));
  return {
    cmd: path.join(BIN, 'opencode'),
    args: ['run', ...(step ? ['--continue'] : []), prompt(d, step, 'relative')],
    env: {
      SWITCHYARD_API_KEY: key,
      OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1', OPENCODE_DISABLE_SHARE: '1', OPENCODE_DISABLE_CLAUDE_CODE: '1',
      OPENCODE_DISABLE_EXTERNAL_SKILLS: '1', OPENCODE_PERMISSION: JSON.stringify({ edit: 'allow', write: 'allow', bash: 'deny' }),
    },
  };
}

/** Step n's prompt: write agent-output-n.txt (absolute path for Claude Code's Write) with the step's content. */
const outFile = (step) => `agent-output-${step}.txt`;
const expected = (d, step) => `${d.expect}-step${step}`;
function prompt(d, step, how) {
  const file = how === 'absolute' ? path.join(d.work, outFile(step)) : outFile(step);
  return `Create the file ${outFile(step)} with the requested content, then reply DONE. [[write:${file}|${expected(d, step)}]]`;
}

/* ---------- scenarios ------------------------------------------------------ */

const scenarios = [
  { name: 'claude-code/anthropic-native', make: (d, n, c) => claudeRun(d, n, { ...c, model: 'claude-sonnet-4-5' }) },
  { name: 'claude-code/openai-translated', make: (d, n, c) => claudeRun(d, n, { ...c, model: 'gpt-4.1', auth: 'x-api-key' }) },
  { name: 'claude-code/vertex-passthrough', make: (d, n, c) => claudeVertexRun(d, n, c) },
  { name: 'codex/openai-responses-native', make: (d, n, c) => codexRun(d, n, { ...c, model: 'gpt-5.5' }) },
  { name: 'codex/anthropic-translated', make: (d, n, c) => codexRun(d, n, { ...c, model: 'claude-sonnet-4-5' }) },
  // with a reasoning effort: thinking on at Anthropic, whose signed blocks must come back
  // on the next turn (as reasoning items' encrypted_content, which Codex asks for)
  { name: 'codex/anthropic-thinking', make: (d, n, c) => codexRun(d, n, { ...c, model: 'claude-sonnet-4-5', effort: 'high' }) },
  // Codex keeps its own model name (its catalogue's tools: freeform apply_patch, tool_search,
  // web_search); the key's alias sends it to the vLLM deployment
  { name: 'codex/hosted-vllm-chat', key: { aliases: { 'gpt-5.5': 'qwen3-coder' } }, make: (d, n, c) => codexRun(d, n, { ...c, model: 'gpt-5.5' }) },
  // switchyard says no, in the client's dialect, and the CLI shows it: a budget
  // that one call uses up (LiteLLM admits a call while the spend is below the
  // budget, so the loop's second call is refused after the file was written),
  // and a budgeted key calling a model without a price (docs/prices.md)
  { name: 'claude-code/budget-exceeded', key: { max_budget: 0.01 }, refused: { error: /Budget has been exceeded/i, file: true, upstreamCalls: 1 },
    make: (d, n, c) => claudeRun(d, n, { ...c, model: 'claude-sonnet-4-5' }) },
  { name: 'codex/unpriced-model-refused', refused: { error: /gpt-unpriced[\s\S]*(price|cost)|(price|cost)[\s\S]*gpt-unpriced/i, file: false, upstreamCalls: 0, spend: 0 },
    make: (d, n, c) => codexRun(d, n, { ...c, model: 'gpt-unpriced' }) },
  // opencode takes ~15 s of CPU to start: one session each (its loop is still three calls: title, write, DONE)
  { name: 'opencode/openai-native', steps: 1, make: (d, n, c) => opencodeRun(d, n, { ...c, model: 'gpt-4.1' }) },
  { name: 'opencode/anthropic-translated', steps: 1, make: (d, n, c) => opencodeRun(d, n, { ...c, model: 'claude-sonnet-4-5' }) },
];

function runCli(spec, d, logFile) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(spec.cmd, spec.args, { cwd: d.work, env: { ...d.env, ...spec.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout.on('data', (b) => { out += b; });
    child.stderr.on('data', (b) => { out += b; });
    let timedOut = false;
    const kill = (sig) => { try { process.kill(-child.pid, sig); } catch {} };
    const t = setTimeout(() => { timedOut = true; kill('SIGTERM'); setTimeout(() => kill('SIGKILL'), 3000); }, CLI_TIMEOUT_MS);
    child.on('error', (e) => { out += `\nspawn: ${e.message}`; });
    child.on('close', (code, signal) => {
      clearTimeout(t);
      kill('SIGKILL'); // anything it left behind in its process group
      fs.writeFileSync(logFile, `$ ${path.basename(spec.cmd)} ${spec.args.map((a) => JSON.stringify(a)).join(' ')}\n${out}`);
      resolve({ code, signal, timedOut, out, ms: Date.now() - t0 });
    });
  });
}

async function spendOf(gw, key) {
  const r = await api(gw.url, MASTER_KEY, 'GET', `/key/info?key=${encodeURIComponent(key)}`);
  return r.json?.info?.spend ?? 0;
}

async function runScenario(sc, gw) {
  const d = sandbox(sc.name.replace(/\//g, '__'));
  d.expect = `switchyard-${sc.name.replace(/\W+/g, '-')}-${process.pid}`;
  let key;
  if (direct) {
    key = sc.name.startsWith('claude') ? up.anthropicKey : up.openaiKey;
  } else {
    const gen = await api(gw.url, MASTER_KEY, 'POST', '/key/generate', { max_budget: 5, key_alias: `agents-${sc.name}`, metadata: { tier: 'agents' }, ...sc.key });
    if (gen.status !== 200 || !gen.json?.key) return { ok: false, why: `/key/generate: ${gen.status} ${gen.text}` };
    key = gen.json.key;
  }
  const before = up.requests().length;
  const tapBefore = tap.seen().length;
  const problems = [];
  const runs = [];
  const refusal = direct ? null : sc.refused; // a scenario where switchyard must say no
  // two steps: a fresh session, then the same session continued (its history
  // reloaded from disk, as a user's next prompt), each a full tool loop
  for (let step = 0; step < (refusal ? 1 : sc.steps ?? 2) && !problems.length; step++) {
    const r = await runCli(sc.make(d, step, { gw, key }), d, path.join(d.root, `cli-${step}.log`));
    runs.push(r);
    const file = path.join(d.work, outFile(step));
    const content = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : null;
    const at = `step ${step}: `;
    if (refusal) {
      if (r.timedOut) problems.push(`no exit after ${CLI_TIMEOUT_MS} ms`);
      else if (r.code === 0) problems.push('exit 0: the refusal did not reach the CLI as an error');
      if (!refusal.error.test(r.out)) problems.push(`the CLI did not show switchyard's error (${refusal.error})`);
      if ((content !== null) !== refusal.file) problems.push(`${outFile(step)} ${content === null ? 'missing' : 'written'}`);
      continue;
    }
    if (r.timedOut) problems.push(`${at}no exit after ${CLI_TIMEOUT_MS} ms`);
    else if (r.code !== 0) problems.push(`${at}exit ${r.code ?? r.signal}`);
    if (content === null) problems.push(`${at}${outFile(step)} missing`);
    else if (content !== expected(d, step)) problems.push(`${at}${outFile(step)} holds ${JSON.stringify(content.slice(0, 80))}`);
  }
  const r = { ms: runs.reduce((a, x) => a + x.ms, 0), out: runs.map((x) => x.out).join('\n--- next step ---\n') };
  let spend = 0;
  if (!direct) {
    await until(async () => (spend = await spendOf(gw, key)) > 0, refusal?.spend === 0 ? 500 : 5000);
    if (refusal?.spend === 0 ? spend !== 0 : !(spend > 0)) problems.push(`key spend ${spend}`);
  }
  const reqs = up.requests().slice(before);
  if (refusal && reqs.length !== refusal.upstreamCalls) problems.push(`${reqs.length} upstream calls, not ${refusal.upstreamCalls}`);
  // every error the CLI got; a 4xx that switchyard made itself (the upstream
  // refused nothing) fails the scenario: no request a CLI sends may get one
  const errs = tap.seen().slice(tapBefore).filter((x) => x.status >= 400 && !/^(agents|node)/.test(x.ua) && !x.path.startsWith('/key/'));
  const upstream4xx = reqs.some((q) => q.status >= 400 && q.status < 500);
  for (const x of errs) {
    if (refusal) continue;
    if (x.status < 500 && !upstream4xx) problems.push(`switchyard answered ${x.status} to ${x.method} ${x.path.replace(/\?.*/, '')}`);
  }
  // every answer names the model the CLI asked for (Claude Code matches its
  // thinking blocks to it); a key alias names another group on purpose
  if (!direct && !sc.key?.aliases) {
    for (const x of tap.seen().slice(tapBefore)) {
      if (x.status === 200 && x.asked && x.echoed !== undefined && x.echoed !== x.asked) {
        problems.push(`${x.path.replace(/\?.*/, '')} asked for ${x.asked}, the answer names ${x.echoed}`);
      }
    }
  }
  return { ok: problems.length === 0, why: [...new Set(problems)].join('; '), r, spend, reqs, errs, d };
}

/* ---------- the tap: what each CLI got from switchyard --------------------------- */

const MODEL_RE = /(?<!\\)"model"\s*:\s*"([^"\\]*)"/;

/** A recording reverse proxy in front of target: bodies stream through untouched;
 * every exchange is kept as {method, path, status, ua, body (the first 400
 * bytes of an error answer), asked (the request body's model), echoed (the
 * first model the answer names, JSON or SSE)}. */
async function startTap(target) {
  const seen = [];
  const server = http.createServer((req, res) => {
    const e = { method: req.method, path: req.url, ua: req.headers['user-agent'] || '', status: 0 };
    seen.push(e);
    let reqHead = '';
    req.on('data', (c) => { if (reqHead.length < 1 << 22) reqHead += c; });
    req.on('end', () => {
      try { e.asked = JSON.parse(reqHead).model; } catch {}
      if (process.env.AGENTS_BODIES && reqHead) fs.writeFileSync(path.join(outDir, 'bodies', `tap-${String(seen.length).padStart(4, '0')}.json`), reqHead);
    });
    const fwd = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
      e.status = r.statusCode;
      res.writeHead(r.statusCode, r.headers);
      let head = '';
      r.on('data', (c) => {
        if (head.length < 1 << 16) head += c;
        if (e.echoed === undefined) e.echoed = MODEL_RE.exec(head)?.[1];
      });
      r.on('end', () => {
        if (r.statusCode >= 400) e.body = head.slice(0, 400);
        if (process.env.AGENTS_BODIES) fs.writeFileSync(path.join(outDir, 'bodies', `tap-${String(seen.indexOf(e) + 1).padStart(4, '0')}-answer.txt`), head);
      });
      r.pipe(res);
    });
    fwd.on('error', (err) => { e.status = 502; e.body = `tap: ${err.message}`; if (!res.headersSent) res.writeHead(502); res.end(); });
    req.pipe(fwd);
    res.on('close', () => fwd.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    seen: () => seen.slice(),
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
  };
}

/* ---------- main ------------------------------------------------------------ */

for (const b of ['claude', 'codex', 'opencode']) {
  if (!fs.existsSync(path.join(BIN, b))) {
    console.error(`agents: ${path.join(BIN, b)} missing: run npm ci in tests/agents`);
    process.exit(2);
  }
}

if (process.env.AGENTS_BODIES) fs.mkdirSync(path.join(outDir, 'bodies'), { recursive: true });
const up = await startUpstream({ log: path.join(outDir, 'upstream.log'), bodies: process.env.AGENTS_BODIES ? path.join(outDir, 'bodies') : undefined, vertexToken: direct ? `ya29.direct-${process.pid}` : undefined });
const sy = direct ? null : await startGateway(gatewayConfig(up));
const tap = await startTap(direct ? up.url : sy.url);
// the CLIs and the key checks go through the tap
const gw = { url: tap.url, log: () => sy?.log() ?? '', stop: async () => (sy ? sy.stop() : 0) };
let failed = 0;
const t0 = Date.now();
for (const sc of scenarios) {
  if (only && !only.test(sc.name)) continue;
  let res;
  try { res = await runScenario(sc, gw); } catch (e) { res = { ok: false, why: `runner: ${e.stack || e}` }; }
  const secs = res.r ? `${(res.r.ms / 1000).toFixed(1)}s` : '';
  const calls = res.reqs ? `${res.reqs.length} upstream calls` : '';
  console.log(`${res.ok ? 'PASS' : 'FAIL'} ${sc.name.padEnd(32)} ${secs.padStart(6)}  ${calls}${res.ok ? `, spend ${res.spend.toPrecision(3)}` : `: ${res.why}`}`);
  if (!res.ok) {
    failed++;
    const ind = (s) => s.split('\n').map((l) => `    ${l}`).join('\n');
    if (res.r) console.log(`  CLI output (last 25 lines):\n${ind(res.r.out.trimEnd().split('\n').slice(-25).join('\n'))}`);
    const lines = [
      ...(res.errs || []).map((x) => `  switchyard answered ${x.status} ${x.method} ${x.path}: ${x.body ?? ''}`),
      ...(res.reqs || []).filter((x) => x.status >= 400).map((q) => `  upstream refused ${q.status} ${q.method} ${q.path}: ${String(q.error).slice(0, 400)}`),
    ];
    const counts = new Map();
    for (const l of lines) counts.set(l, (counts.get(l) || 0) + 1);
    for (const [l, n] of counts) console.log(n > 1 ? `${l} (x${n})` : l);
    const glines = gw.log().trimEnd().split('\n').filter((l) => /warn|error|fail/i.test(l)).slice(-10);
    if (glines.length) console.log(`  switchyard log:\n${ind(glines.join('\n'))}`);
  }
}
fs.writeFileSync(path.join(outDir, 'switchyard.log'), gw.log());
const syExit = await gw.stop();
if (syExit !== 0) { // a crash during the run, or an unclean shutdown (its log is printed by the harness)
  failed++;
  console.log(`FAIL switchyard exited with ${syExit}`);
}
await tap.close();
await up.close();
const ran = scenarios.filter((sc) => !only || only.test(sc.name)).length + (syExit !== 0 ? 1 : 0);
console.log(`# pass ${ran - failed}\n# fail ${failed}`); // counted by scripts/test.sh like node --test's summary
const kept = keep || failed || arg('--out');
console.log(`agents: ${failed ? `${failed} failed` : 'all passed'} in ${((Date.now() - t0) / 1000).toFixed(0)}s${kept ? ` (logs: ${outDir})` : ''}`);
if (!kept) fs.rmSync(outDir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
