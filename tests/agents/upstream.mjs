// upstream.mjs - the agents tier's scripted upstream: one Node HTTP server (no
// dependencies) that speaks Anthropic Messages, OpenAI Chat Completions and
// OpenAI Responses (each as JSON and as SSE), Vertex AI's Anthropic routes
// (:rawPredict, :streamRawPredict, count-tokens) with a Google OAuth2 token
// endpoint, and the side calls the coding-agent CLIs make (/v1/models,
// count_tokens, HEAD /).
//
// Like the real APIs it validates what it gets, and answers 400 in the API's
// own error shape when something is wrong:
//   - required fields (model, messages / input, max_tokens for Anthropic), and
//     no top-level field the API does not take;
//   - credentials: the upstream keys of the config (never a virtual key), the
//     Vertex bearer token it minted for a JWT signed by the service account;
//   - tool pairing: every tool_use / tool_call / function_call /
//     custom_tool_call is answered by a result in the next turn, and every
//     result answers a call;
//   - extended thinking: it signs the thinking blocks it emits (HMAC-SHA256 of
//     the text) and, when a later request has thinking enabled, rejects a
//     final assistant turn with tool_use that does not start with a thinking
//     block, or a thinking block whose signature is wrong, with Anthropic's
//     400 texts;
//   - reasoning_effort sent to a chat model that does not reason (OpenAI's
//     400 "Unsupported parameter").
//
// The script is stateless, read from the request: the user's prompt carries a
// marker [[write:<path>|<content>]]. A request that declares a file-writing
// tool (Claude Code's Write, opencode's write, Codex's apply_patch or its
// shell tools) and has no tool result yet gets one call of that tool that
// writes <content> to <path>; once the request carries the tool's result the
// answer is the text "DONE". Any other request (titles, summaries, quota
// probes) gets a short text.
//
// Every request is appended to the log (JSON lines): method, path, query,
// headers (credential values masked), body keys, model, stream, tool names,
// the answer's status and kind.
//
//   node upstream.mjs --port N [--log FILE] [--anthropic-key K] [--openai-key K] [--vertex-token T]
//   import { startUpstream } from './upstream.mjs'
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const SIGN_SECRET = crypto.randomBytes(32);
const sign = (text) => crypto.createHmac('sha256', SIGN_SECRET).update(text).digest('base64');
const THINKING_TEXT = 'The user wants a file written. I will call the tool that writes it.';
// chat models that accept reasoning_effort (as OpenAI's o-series and gpt-5 do)
const REASONING_CHAT = /^(o\d|gpt-5|gpt-oss|qwen3|deepseek-r)/;

// the top-level fields each API takes; anything else is refused as the real APIs refuse it
const ANTHROPIC_FIELDS = new Set(['model', 'messages', 'system', 'max_tokens', 'metadata', 'stop_sequences', 'stream',
  'temperature', 'top_p', 'top_k', 'tools', 'tool_choice', 'thinking', 'service_tier', 'container', 'mcp_servers',
  'context_management', 'output_config', 'anthropic_version', 'anthropic_beta']);
const CHAT_FIELDS = new Set(['model', 'messages', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'n',
  'stream', 'stream_options', 'stop', 'presence_penalty', 'frequency_penalty', 'logit_bias', 'logprobs', 'top_logprobs',
  'user', 'tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'seed', 'reasoning_effort', 'service_tier',
  'store', 'metadata', 'modalities', 'audio', 'prediction', 'web_search_options', 'verbosity', 'prompt_cache_key',
  'safety_identifier']);
const RESPONSES_FIELDS = new Set(['model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls',
  'reasoning', 'store', 'include', 'prompt_cache_key', 'text', 'client_metadata', 'stream', 'stream_options',
  'max_output_tokens', 'temperature', 'top_p', 'metadata', 'previous_response_id', 'truncation', 'user', 'service_tier',
  'background', 'conversation', 'prompt', 'safety_identifier', 'top_logprobs', 'max_tool_calls', 'context_management']);

const MARKER = /\[\[write:([^|\]]+)\|([^\]]*)\]\]/g;

/* ---------- helpers ------------------------------------------------------ */

const rid = (p) => `${p}${crypto.randomBytes(12).toString('hex')}`;
const estimateTokens = (v) => Math.max(1, Math.ceil(JSON.stringify(v ?? '').length / 4));

class ApiError extends Error {
  constructor(status, message, kind = 'invalid_request_error') { super(message); this.status = status; this.kind = kind; }
}
const bad = (m) => new ApiError(400, m);

function maskHeaders(h) {
  const out = {};
  for (const [k, v] of Object.entries(h)) {
    out[k] = /authorization|api-key|x-goog-api-key|cookie/i.test(k) ? `${String(v).slice(0, 12)}…` : v;
  }
  return out;
}

function textOf(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((c) => (typeof c === 'string' ? c : c?.text ?? (typeof c?.content === 'string' ? c.content : textOf(c?.content)))).join('\n');
}

/** The last write marker of the request's user turns (a continued session carries the earlier ones too). */
function findMarker(reqText) {
  const all = [...reqText.matchAll(MARKER)];
  const m = all[all.length - 1];
  return m ? { path: m[1], content: m[2] } : null;
}

/* ---------- choosing and filling the write tool ---------------------------- */

// tools normalised to {name, kind: 'function'|'custom', schema}
function pickWriteTool(tools) {
  const by = (n) => tools.find((t) => t.name === n);
  return by('Write') || by('write') || by('apply_patch') || by('shell') || by('exec_command') || by('local_shell')
    || by('bash') || by('Bash');
}

/** Arguments (a JSON object, or a raw string for a freeform tool) that make tool write content to path. */
function writeArgs(tool, w) {
  const props = tool.schema?.properties || {};
  const names = Object.keys(props);
  const patch = `*** Begin Patch\n*** Add File: ${w.path}\n+${w.content}\n*** End Patch\n`;
  const sh = `printf '%s\\n' '${w.content.replace(/'/g, `'\\''`)}' > '${w.path.replace(/'/g, `'\\''`)}'`;
  if (tool.name === 'apply_patch') {
    if (tool.kind === 'custom') return patch;
    // a freeform tool flattened into a function: its one required string parameter
    const p = (tool.schema?.required || names).find((n) => props[n]?.type === 'string') || 'input';
    return { [p]: patch };
  }
  if (/^(shell|local_shell)$/.test(tool.name)) return { command: ['bash', '-lc', sh] };
  if (tool.name === 'exec_command') return { cmd: sh };
  if (/^bash$/i.test(tool.name)) return { command: sh, description: 'write the file' };
  const pathKey = names.find((n) => /^(file_?path|filePath|path)$/i.test(n)) || 'file_path';
  const contentKey = names.find((n) => /^content$/i.test(n)) || 'content';
  return { [pathKey]: w.path, [contentKey]: w.content };
}

/* ---------- Anthropic Messages ---------------------------------------------- */

function anthropicThinkingOn(body) {
  const t = body.thinking?.type;
  return t === 'enabled' || t === 'adaptive';
}

function validateAnthropic(body, { vertex = false } = {}) {
  for (const k of Object.keys(body)) if (!ANTHROPIC_FIELDS.has(k)) throw bad(`${k}: Extra inputs are not permitted`);
  if (!vertex && typeof body.model !== 'string') throw bad('model: Field required');
  if (vertex && body.anthropic_version !== 'vertex-2023-10-16') throw bad('anthropic_version: must be vertex-2023-10-16');
  if (!Number.isInteger(body.max_tokens)) throw bad('max_tokens: Field required');
  if (!Array.isArray(body.messages) || !body.messages.length) throw bad('messages: Field required');
  const msgs = body.messages;
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i];
    if (m.role !== 'user' && m.role !== 'assistant') throw bad(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    const content = typeof m.content === 'string' ? [] : m.content || [];
    const uses = content.filter((b) => b.type === 'tool_use' || b.type === 'server_tool_use');
    const results = content.filter((b) => b.type === 'tool_result');
    if (m.role === 'assistant' && uses.length) {
      const next = msgs[i + 1];
      const nextResults = new Set((Array.isArray(next?.content) ? next.content : []).filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id));
      for (const u of uses.filter((b) => b.type === 'tool_use')) {
        if (!nextResults.has(u.id)) {
          throw bad(`messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${u.id}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`);
        }
      }
    }
    if (results.length) {
      const prev = msgs[i - 1];
      const ids = new Set((Array.isArray(prev?.content) ? prev.content : []).filter((b) => b.type === 'tool_use').map((b) => b.id));
      content.forEach((b, j) => {
        if (b.type === 'tool_result' && !ids.has(b.tool_use_id)) {
          throw bad(`messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`);
        }
      });
    }
    content.forEach((b, j) => {
      if (b.type === 'thinking' && b.signature !== sign(b.thinking ?? '')) {
        throw bad(`messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`);
      }
    });
  }
  if (anthropicThinkingOn(body)) {
    // the final assistant turn of the tool loop must start with its thinking block
    let last = -1;
    for (let i = 0; i < msgs.length; i++) if (msgs[i].role === 'assistant') last = i;
    const m = msgs[last];
    if (m && Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_use')) {
      const first = m.content[0];
      if (first.type !== 'thinking' && first.type !== 'redacted_thinking') {
        throw bad(`messages.${last}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`);
      }
    }
  }
  if (body.tools !== undefined && !Array.isArray(body.tools)) throw bad('tools: Input should be a valid list');
  for (const [i, t] of (body.tools || []).entries()) {
    if (typeof t.name !== 'string') throw bad(`tools.${i}.name: Field required`);
    if (!t.type && !t.input_schema) throw bad(`tools.${i}.custom.input_schema: Field required`);
  }
}

/** Decide the answer of a Messages request: {blocks, stop_reason}. */
function anthropicAnswer(body) {
  const msgs = body.messages;
  const last = msgs[msgs.length - 1];
  const lastContent = Array.isArray(last.content) ? last.content : [];
  const tools = (body.tools || []).filter((t) => t.name && t.input_schema).map((t) => ({ name: t.name, kind: 'function', schema: t.input_schema }));
  const w = findMarker(msgs.filter((m) => m.role === 'user').map((m) => textOf(m.content)).join('\n'));
  const thinking = anthropicThinkingOn(body) ? [{ type: 'thinking', thinking: THINKING_TEXT, signature: sign(THINKING_TEXT) }] : [];
  if (lastContent.some((b) => b.type === 'tool_result')) return { blocks: [...thinking, { type: 'text', text: 'DONE' }], stop_reason: 'end_turn' };
  const tool = w && pickWriteTool(tools);
  if (tool) {
    return {
      blocks: [...thinking, { type: 'tool_use', id: rid('toolu_'), name: tool.name, input: writeArgs(tool, w) }],
      stop_reason: 'tool_use',
    };
  }
  return { blocks: [{ type: 'text', text: tools.length ? 'DONE' : 'Agent file write' }], stop_reason: 'end_turn' };
}

function anthropicUsage(body, out) {
  return {
    input_tokens: estimateTokens(body.messages) + estimateTokens(body.system) + estimateTokens(body.tools),
    output_tokens: estimateTokens(out),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

function sendAnthropic(res, body, modelEcho, ctx) {
  const { blocks, stop_reason } = anthropicAnswer(body);
  const usage = anthropicUsage(body, blocks);
  const id = rid('msg_');
  ctx.answer = blocks.map((b) => b.type).join(',');
  if (!body.stream) {
    return json(res, 200, { id, type: 'message', role: 'assistant', model: modelEcho, content: blocks, stop_reason, stop_sequence: null, usage });
  }
  const ev = sse(res);
  ev('message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: modelEcho, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
  blocks.forEach((b, index) => {
    if (b.type === 'thinking') {
      ev('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      ev('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: b.thinking } });
      ev('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: b.signature } });
    } else if (b.type === 'text') {
      ev('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      ev('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } });
    } else {
      ev('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      const s = JSON.stringify(b.input);
      const cut = Math.floor(s.length / 2);
      ev('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: s.slice(0, cut) } });
      ev('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: s.slice(cut) } });
    }
    ev('content_block_stop', { type: 'content_block_stop', index });
  });
  ev('message_delta', { type: 'message_delta', delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
  ev('message_stop', { type: 'message_stop' });
  res.end();
}

/* ---------- OpenAI Chat Completions ------------------------------------------- */

function validateChat(body) {
  for (const k of Object.keys(body)) if (!CHAT_FIELDS.has(k)) throw bad(`Unrecognized request argument supplied: ${k}`);
  if (typeof body.model !== 'string') throw bad("Missing required parameter: 'model'.");
  if (!Array.isArray(body.messages) || !body.messages.length) throw bad("Missing required parameter: 'messages'.");
  if (body.reasoning_effort !== undefined && !REASONING_CHAT.test(body.model)) {
    throw new ApiError(400, `Unsupported parameter: 'reasoning_effort' is not supported with this model.`);
  }
  const msgs = body.messages;
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i];
    if (!['system', 'developer', 'user', 'assistant', 'tool'].includes(m.role)) throw bad(`Invalid value: '${m.role}'. Supported values are: 'system', 'assistant', 'user', 'tool', 'developer'.`);
    if (m.role === 'assistant' && m.tool_calls?.length) {
      const want = new Set(m.tool_calls.map((c) => c.id));
      let j = i + 1;
      for (; j < msgs.length && msgs[j].role === 'tool'; j++) want.delete(msgs[j].tool_call_id);
      if (want.size) {
        throw bad(`An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...want].join(', ')}`);
      }
      for (const c of m.tool_calls) {
        if (c.type !== 'function' || typeof c.function?.name !== 'string' || typeof c.function?.arguments !== 'string') throw bad(`Invalid tool call in messages[${i}]`);
      }
    }
    if (m.role === 'tool') {
      let k = i - 1;
      while (k >= 0 && msgs[k].role === 'tool') k--;
      const prev = msgs[k];
      if (!prev || prev.role !== 'assistant' || !prev.tool_calls?.some((c) => c.id === m.tool_call_id)) {
        throw bad(`Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`);
      }
    }
  }
  for (const [i, t] of (body.tools || []).entries()) {
    if (t.type !== 'function' || typeof t.function?.name !== 'string') throw bad(`Invalid value at tools[${i}]: only function tools are supported.`);
  }
}

function chatAnswer(body) {
  const msgs = body.messages;
  const tools = (body.tools || []).map((t) => ({ name: t.function.name, kind: 'function', schema: t.function.parameters }));
  const w = findMarker(msgs.filter((m) => m.role === 'user').map((m) => textOf(m.content)).join('\n'));
  if (msgs[msgs.length - 1].role === 'tool') return { content: 'DONE', finish: 'stop' };
  const tool = w && pickWriteTool(tools);
  if (tool) {
    const args = writeArgs(tool, w);
    return { toolCall: { id: rid('call_'), type: 'function', function: { name: tool.name, arguments: JSON.stringify(args) } }, finish: 'tool_calls' };
  }
  return { content: tools.length ? 'DONE' : 'Agent file write', finish: 'stop' };
}

function sendChat(res, body, ctx) {
  const a = chatAnswer(body);
  const id = rid('chatcmpl-');
  const created = Math.floor(Date.now() / 1000);
  const prompt = estimateTokens(body.messages) + estimateTokens(body.tools);
  const completion = estimateTokens(a.content ?? a.toolCall);
  const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  ctx.answer = a.toolCall ? `tool_call:${a.toolCall.function.name}` : 'text';
  if (!body.stream) {
    const message = { role: 'assistant', content: a.content ?? null, ...(a.toolCall ? { tool_calls: [a.toolCall] } : {}) };
    return json(res, 200, { id, object: 'chat.completion', created, model: body.model, choices: [{ index: 0, message, finish_reason: a.finish, logprobs: null }], usage });
  }
  const ev = sse(res);
  const chunk = (delta, finish = null) => ev(null, { id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] });
  chunk({ role: 'assistant', content: '' });
  if (a.toolCall) {
    const s = a.toolCall.function.arguments;
    chunk({ tool_calls: [{ index: 0, id: a.toolCall.id, type: 'function', function: { name: a.toolCall.function.name, arguments: '' } }] });
    chunk({ tool_calls: [{ index: 0, function: { arguments: s.slice(0, Math.floor(s.length / 2)) } }] });
    chunk({ tool_calls: [{ index: 0, function: { arguments: s.slice(Math.floor(s.length / 2)) } }] });
  } else {
    chunk({ content: a.content });
  }
  chunk({}, a.finish);
  if (body.stream_options?.include_usage) ev(null, { id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage });
  res.write('data: [DONE]\n\n');
  res.end();
}

/* ---------- OpenAI Responses ------------------------------------------------------ */

const CALL_TYPES = { function_call: 'function_call_output', custom_tool_call: 'custom_tool_call_output', local_shell_call: 'local_shell_call_output' };

function validateResponses(body) {
  for (const k of Object.keys(body)) if (!RESPONSES_FIELDS.has(k)) throw bad(`Unknown parameter: '${k}'.`);
  if (typeof body.model !== 'string') throw bad("Missing required parameter: 'model'.");
  if (body.input === undefined) throw bad("Missing required parameter: 'input'.");
  const items = typeof body.input === 'string' ? [] : body.input;
  if (!Array.isArray(items)) throw bad("Invalid type for 'input'.");
  const calls = new Map(); // call_id -> output type wanted
  const outputs = [];
  for (const [i, it] of items.entries()) {
    if (CALL_TYPES[it.type]) {
      if (typeof it.call_id !== 'string') throw bad(`Missing required parameter: 'input[${i}].call_id'.`);
      calls.set(it.call_id, CALL_TYPES[it.type]);
    } else if (Object.values(CALL_TYPES).includes(it.type)) {
      outputs.push([i, it]);
    }
  }
  for (const [i, it] of outputs) {
    if (calls.get(it.call_id) !== it.type) throw bad(`No tool call found for ${it.type.replace(/_output$/, '')} output with call_id ${it.call_id}. (input[${i}])`);
    calls.delete(it.call_id);
  }
  if (calls.size) throw bad(`No tool output found for function call ${[...calls.keys()][0]}.`);
  for (const [i, t] of (body.tools || []).entries()) {
    if (t.type === 'function' && typeof t.name !== 'string') throw bad(`Missing required parameter: 'tools[${i}].name'.`);
    if (t.type === 'custom' && typeof t.name !== 'string') throw bad(`Missing required parameter: 'tools[${i}].name'.`);
  }
}

function flatTools(tools) { // namespaces opened up, as the model sees them
  const out = [];
  for (const t of tools || []) {
    if (t.type === 'function') out.push({ name: t.name, kind: 'function', schema: t.parameters });
    else if (t.type === 'custom') out.push({ name: t.name, kind: 'custom', schema: null });
    else if (t.type === 'local_shell') out.push({ name: 'local_shell', kind: 'local_shell', schema: null });
    else if (t.type === 'namespace') for (const s of t.tools || []) if (s.type === 'function') out.push({ name: s.name, kind: 'function', schema: s.parameters, namespace: t.name });
  }
  return out;
}

function responsesAnswer(body) {
  const items = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : body.input;
  const userText = items.filter((it) => (it.type === 'message' || !it.type) && it.role === 'user').map((it) => textOf(it.content)).join('\n');
  const w = findMarker(userText);
  const lastItem = items[items.length - 1];
  const text = (t) => ({ id: rid('msg_'), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: t, annotations: [], logprobs: [] }] });
  if (lastItem && /_output$/.test(lastItem.type)) return [text('DONE')];
  const tool = w && pickWriteTool(flatTools(body.tools));
  if (!tool) return [text(body.tools?.length ? 'DONE' : 'Agent file write')];
  const args = writeArgs(tool, w);
  if (tool.kind === 'custom') return [{ id: rid('ctc_'), type: 'custom_tool_call', status: 'completed', call_id: rid('call_'), name: tool.name, input: args }];
  return [{ id: rid('fc_'), type: 'function_call', status: 'completed', call_id: rid('call_'), name: tool.name, arguments: JSON.stringify(args), ...(tool.namespace ? { namespace: tool.namespace } : {}) }];
}

function sendResponses(res, body, ctx) {
  const output = responsesAnswer(body);
  const input = estimateTokens(body.input) + estimateTokens(body.instructions) + estimateTokens(body.tools);
  const out = estimateTokens(output);
  const usage = { input_tokens: input, input_tokens_details: { cached_tokens: 0 }, output_tokens: out, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: input + out };
  const id = rid('resp_');
  const base = {
    id, object: 'response', created_at: Math.floor(Date.now() / 1000), model: body.model, status: 'in_progress', error: null,
    incomplete_details: null, instructions: body.instructions ?? null, output: [], parallel_tool_calls: body.parallel_tool_calls ?? true,
    tool_choice: body.tool_choice ?? 'auto', tools: body.tools ?? [], store: body.store ?? true, usage: null,
  };
  ctx.answer = output.map((o) => o.type + (o.name ? `:${o.name}` : '')).join(',');
  if (!body.stream) return json(res, 200, { ...base, status: 'completed', output, usage });
  const send = sse(res);
  let seq = 0;
  const ev = (type, data) => send(type, { type, sequence_number: seq++, ...data });
  ev('response.created', { response: base });
  ev('response.in_progress', { response: base });
  output.forEach((item, output_index) => {
    if (item.type === 'message') {
      ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
      ev('response.content_part.added', { item_id: item.id, output_index, content_index: 0, part });
      ev('response.output_text.delta', { item_id: item.id, output_index, content_index: 0, delta: item.content[0].text, logprobs: [] });
      ev('response.output_text.done', { item_id: item.id, output_index, content_index: 0, text: item.content[0].text, logprobs: [] });
      ev('response.content_part.done', { item_id: item.id, output_index, content_index: 0, part: item.content[0] });
    } else if (item.type === 'function_call') {
      ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      ev('response.function_call_arguments.delta', { item_id: item.id, output_index, delta: item.arguments });
      ev('response.function_call_arguments.done', { item_id: item.id, output_index, arguments: item.arguments });
    } else {
      ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', input: '' } });
      ev('response.custom_tool_call_input.delta', { item_id: item.id, output_index, delta: item.input });
      ev('response.custom_tool_call_input.done', { item_id: item.id, output_index, input: item.input });
    }
    ev('response.output_item.done', { output_index, item });
  });
  ev('response.completed', { response: { ...base, status: 'completed', output, usage } });
  res.end();
}

/* ---------- HTTP plumbing ---------------------------------------------------------- */

function json(res, status, obj) {
  const s = JSON.stringify(obj);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s), 'request-id': rid('req_') });
  res.end(s);
}

function sse(res) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': rid('req_') });
  return (event, data) => res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
}

function errorBody(dialect, e) {
  if (dialect === 'anthropic') {
    const type = e.status === 401 ? 'authentication_error' : e.status === 404 ? 'not_found_error' : 'invalid_request_error';
    return { type: 'error', error: { type, message: e.message } };
  }
  if (dialect === 'google') return { error: { code: e.status, message: e.message, status: e.status === 401 ? 'UNAUTHENTICATED' : 'INVALID_ARGUMENT' } };
  return { error: { message: e.message, type: e.status === 401 ? 'invalid_request_error' : e.kind, param: null, code: e.status === 401 ? 'invalid_api_key' : null } };
}

function b64url(buf) { return Buffer.from(buf).toString('base64url'); }

/** A service account whose token_uri is this upstream; tokens are minted only for JWTs it signed. */
function makeServiceAccount(project) {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    publicKey,
    project,
    json: (tokenUri) => ({
      type: 'service_account', project_id: project, private_key_id: rid('k'),
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      client_email: `agents@${project}.iam.gserviceaccount.com`, client_id: '1', token_uri: tokenUri,
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    }),
  };
}

function verifyJwt(assertion, publicKey, audience) {
  const parts = String(assertion || '').split('.');
  if (parts.length !== 3) return 'assertion is not a JWT';
  const ok = crypto.verify('RSA-SHA256', Buffer.from(`${parts[0]}.${parts[1]}`), publicKey, Buffer.from(parts[2], 'base64url'));
  if (!ok) return 'invalid JWT signature';
  let claims;
  try { claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString()); } catch { return 'invalid JWT claims'; }
  if (claims.aud !== audience) return `aud ${claims.aud} != ${audience}`;
  const now = Date.now() / 1000;
  if (!(claims.exp > now && claims.iat <= now + 300)) return 'JWT expired or not yet valid';
  if (!/cloud-platform/.test(claims.scope || '')) return `scope ${claims.scope} lacks cloud-platform`;
  return null;
}

/**
 * Start the upstream. opts: {port=0, host='127.0.0.1', log=path|null,
 * anthropicKey, openaiKey, vertexProject, vertexToken (a token accepted
 * without the exchange, to run a CLI against the upstream directly), bodies
 * (a directory that gets every request body as NNNN.json)}. Returns {url, port, serviceAccount
 * (JSON text for vertex_credentials), requests() (the log entries), close()}.
 */
export async function startUpstream(opts = {}) {
  const anthropicKey = opts.anthropicKey ?? 'sk-ant-upstream-agents';
  const openaiKey = opts.openaiKey ?? 'sk-oai-upstream-agents';
  const sa = makeServiceAccount(opts.vertexProject ?? 'sy-agents-project');
  const tokens = new Set(opts.vertexToken ? [opts.vertexToken] : []);
  const entries = [];
  let url = '';

  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const raw = Buffer.concat(chunks).toString();
    const u = new URL(req.url, 'http://x');
    const ctx = { answer: null };
    const entry = { t: new Date().toISOString(), method: req.method, path: u.pathname, query: u.search || undefined, headers: maskHeaders(req.headers) };
    let body = null;
    let dialect = 'openai';
    try {
      if (raw && /json/.test(req.headers['content-type'] || '')) {
        try { body = JSON.parse(raw); } catch { throw bad('The request body is not valid JSON.'); }
        entry.bodyKeys = Object.keys(body);
        entry.model = body.model;
        entry.stream = body.stream;
        const tl = body.tools?.map((t) => (t.type === 'namespace' ? `${t.name}{${(t.tools || []).map((s) => s.name).join(',')}}` : t.name || t.function?.name || t.type));
        if (tl) entry.tools = tl;
        for (const k of ['thinking', 'reasoning', 'reasoning_effort', 'tool_choice', 'max_tokens', 'max_output_tokens', 'max_completion_tokens', 'stream_options', 'store', 'include', 'text', 'prompt_cache_key', 'metadata', 'service_tier', 'anthropic_version', 'context_management', 'output_config']) {
          if (body[k] !== undefined) entry[k] = body[k];
        }
      }
      await route(req, res, u, body, raw, ctx, (d) => { dialect = d; });
    } catch (e) {
      const err = e instanceof ApiError ? e : new ApiError(500, `upstream bug: ${e.stack || e}`, 'server_error');
      if (!res.headersSent) json(res, err.status, errorBody(dialect, err));
      else res.end();
      entry.error = err.message;
    }
    entry.status = res.statusCode;
    entry.answer = ctx.answer ?? undefined;
    entries.push(entry);
    if (opts.log) fs.appendFileSync(opts.log, `${JSON.stringify(entry)}\n`);
    if (opts.bodies && raw) fs.writeFileSync(`${opts.bodies}/${String(entries.length).padStart(4, '0')}.json`, raw);
  });

  const needAnthropicKey = (req) => {
    const k = req.headers['x-api-key'] || (req.headers.authorization || '').replace(/^Bearer /i, '');
    if (k !== anthropicKey) throw new ApiError(401, 'invalid x-api-key');
  };
  const needOpenAIKey = (req) => {
    if (req.headers.authorization !== `Bearer ${openaiKey}`) throw new ApiError(401, `Incorrect API key provided: ${(req.headers.authorization || '').slice(7, 15)}…`);
  };
  const needVertexToken = (req) => {
    const t = (req.headers.authorization || '').replace(/^Bearer /i, '');
    if (!tokens.has(t)) throw new ApiError(401, 'Request had invalid authentication credentials. Expected OAuth 2 access token.');
  };

  async function route(req, res, u, body, raw, ctx, setDialect) {
    const p = u.pathname;
    if (req.method === 'HEAD' || (req.method === 'GET' && p === '/')) { res.writeHead(200); return res.end(); }
    if (req.method === 'POST' && p === '/token') { // Google OAuth2 token endpoint
      setDialect('google');
      const form = new URLSearchParams(raw);
      if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') throw bad('unsupported grant_type');
      const why = verifyJwt(form.get('assertion'), sa.publicKey, `${url}/token`);
      if (why) throw new ApiError(401, why);
      const token = `ya29.${rid('')}`;
      tokens.add(token);
      return json(res, 200, { access_token: token, expires_in: 3599, token_type: 'Bearer' });
    }
    const vm = /\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/.exec(p);
    if (req.method === 'POST' && vm) {
      setDialect('google');
      needVertexToken(req);
      if (vm[1] !== sa.project) throw new ApiError(403, `Permission denied on project ${vm[1]}`);
      setDialect('anthropic');
      if (!body) throw bad('body required');
      if (vm[3] === 'count-tokens') {
        if (!Array.isArray(body.messages)) throw bad('messages: Field required');
        ctx.answer = 'count';
        return json(res, 200, { input_tokens: estimateTokens(body.messages) + estimateTokens(body.system) + estimateTokens(body.tools) });
      }
      validateAnthropic(body, { vertex: true });
      if (body.model !== undefined) throw bad('model: Extra inputs are not permitted');
      return sendAnthropic(res, body, vm[3].replace(/@.*/, ''), ctx);
    }
    if (req.method === 'POST' && p === '/v1/messages/count_tokens') {
      setDialect('anthropic');
      needAnthropicKey(req);
      if (!body || typeof body.model !== 'string' || !Array.isArray(body.messages)) throw bad('model, messages: Field required');
      ctx.answer = 'count';
      return json(res, 200, { input_tokens: estimateTokens(body.messages) + estimateTokens(body.system) + estimateTokens(body.tools) });
    }
    if (req.method === 'POST' && p === '/v1/messages') {
      setDialect('anthropic');
      needAnthropicKey(req);
      if (!req.headers['anthropic-version']) throw bad('anthropic-version: header is required');
      if (!body) throw bad('body required');
      validateAnthropic(body);
      return sendAnthropic(res, body, body.model, ctx);
    }
    if (req.method === 'POST' && /\/chat\/completions$/.test(p)) {
      needOpenAIKey(req);
      if (!body) throw bad('body required');
      validateChat(body);
      return sendChat(res, body, ctx);
    }
    if (req.method === 'POST' && /\/responses$/.test(p)) {
      needOpenAIKey(req);
      if (!body) throw bad('body required');
      validateResponses(body);
      return sendResponses(res, body, ctx);
    }
    if (req.method === 'GET' && /\/models$/.test(p)) {
      if (req.headers['anthropic-version']) {
        setDialect('anthropic');
        needAnthropicKey(req);
        const m = { type: 'model', id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' };
        return json(res, 200, { data: [m], has_more: false, first_id: m.id, last_id: m.id });
      }
      needOpenAIKey(req);
      return json(res, 200, { object: 'list', data: ['gpt-5.5', 'gpt-4.1', 'qwen3-coder'].map((id) => ({ id, object: 'model', created: 1700000000, owned_by: 'agents' })) });
    }
    throw new ApiError(404, `no route ${req.method} ${p}`);
  }

  server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  url = `http://${opts.host ?? '127.0.0.1'}:${port}`;
  return {
    url, port, anthropicKey, openaiKey, vertexToken: opts.vertexToken,
    vertexProject: sa.project,
    serviceAccount: JSON.stringify(sa.json(`${url}/token`)),
    requests: () => entries.slice(),
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (n, d) => { const i = process.argv.indexOf(n); return i > 0 ? process.argv[i + 1] : d; };
  const up = await startUpstream({
    port: Number(arg('--port', 0)), log: arg('--log', null),
    anthropicKey: arg('--anthropic-key'), openaiKey: arg('--openai-key'), vertexToken: arg('--vertex-token'),
  });
  process.stdout.write(`upstream listening on ${up.url}\n`);
  if (arg('--sa-out')) fs.writeFileSync(arg('--sa-out'), up.serviceAccount);
}
