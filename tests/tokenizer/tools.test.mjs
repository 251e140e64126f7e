// tools.test.mjs - chats with tools: switchyard's request count (sy-tokenize
// -r, i.e. sy_tok_count_request, the function /utils/token_counter and the
// usage fallback use) must equal litellm-ref.mjs (LiteLLM's token_counter
// transcribed, on npm tiktoken) exactly, in cl100k_base and o200k_base.
// Corpus: deterministic random chats with realistic tools - nested objects,
// enums (string and integer), arrays of scalars and of objects, optional and
// required parameters, descriptions with Unicode, 1-12 tools, OpenAI,
// Anthropic and Gemini tool shapes, system message or not, tool_choice
// absent / "auto" / "none" / "required" / named, tool calls in the history.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rng } from './corpus.mjs';
import { encodingFor, formatFunctionDefinitions, litellmChatTokens } from './litellm-ref.mjs';

const bin = process.env.SY_TOKENIZE;
const DESCS = ['Get the current weather', 'Look up a customer by e-mail — returns the record', 'Búsqueda de vuelos (ida y vuelta)',
  '检索知识库中的文档', 'ファイルを読み込む', 'Send a message 📨 to a Slack channel', 'Compute a route; avoids tolls if asked',
  'Create a calendar event\nwith attendees', 'Конвертировать валюту', 'Run a SQL query (read-only!)'];
const NAMES = ['get_weather', 'lookup_customer', 'search_flights', 'kb_search', 'read_file', 'send_slack', 'route',
  'create_event', 'convert_currency', 'run_sql', 'getStockPrice', 'translate_text'];
const PARAMS = ['city', 'unit', 'email', 'query', 'limit', 'path', 'channel', 'text', 'origin', 'destination', 'date',
  'attendees', 'amount', 'from', 'to', 'sql', 'tags', 'options', 'filters', 'priority'];

function schema(r, depth) {
  const k = r();
  if (depth < 2 && k < 0.15) return { type: 'object', description: r() < 0.5 ? 'Nested options' : undefined, ...props(r, depth + 1) };
  if (depth < 2 && k < 0.25) return { type: 'array', items: r() < 0.5 ? { type: 'string' } : { type: 'object', ...props(r, depth + 1) } };
  if (k < 0.35) return { type: 'string', enum: ['low', 'medium', 'high', 'critique', '緊急'].slice(0, 2 + Math.floor(r() * 4)) };
  if (k < 0.42) return { type: 'integer', enum: [1, 2, 3, 5, 8].slice(0, 1 + Math.floor(r() * 5)) };
  if (k < 0.6) return { type: 'string', description: DESCS[Math.floor(r() * DESCS.length)] };
  if (k < 0.7) return { type: 'integer', description: 'How many, at most 100' };
  if (k < 0.78) return { type: 'number' };
  if (k < 0.86) return { type: 'boolean', description: 'Whether to include details' };
  if (k < 0.9) return { type: 'null' };
  if (k < 0.95) return { type: ['string', 'null'] };
  return { description: 'Anything at all' };
}

function props(r, depth) {
  const n = Math.floor(r() * 5) + (depth ? 1 : 0);
  const properties = {};
  for (let i = 0; i < n; i++) {
    const s = schema(r, depth);
    if (s.description === undefined) delete s.description;
    properties[PARAMS[Math.floor(r() * PARAMS.length)] + (i ? `_${i}` : '')] = s;
  }
  const keys = Object.keys(properties);
  const out = { properties };
  if (r() < 0.7) out.required = keys.filter(() => r() < 0.5);
  return out;
}

function tool(r, i) {
  const fn = { name: NAMES[i % NAMES.length] + (i >= NAMES.length ? `_${i}` : '') };
  if (r() < 0.85) fn.description = DESCS[Math.floor(r() * DESCS.length)];
  if (r() < 0.9) fn.parameters = { type: 'object', ...props(r, 0) };
  const shape = r();
  if (shape < 0.75) return { type: 'function', function: fn };
  if (shape < 0.9) return { name: fn.name, description: fn.description, input_schema: fn.parameters ?? {} };
  return { function_declarations: [fn] };
}

function chat(r, i) {
  const tools = [];
  const nt = 1 + Math.floor(r() * (r() < 0.2 ? 12 : 4));
  for (let k = 0; k < nt; k++) tools.push(tool(r, k));
  const messages = [];
  if (r() < 0.6) messages.push({ role: 'system', content: 'You are a helpful assistant. Réponds en français si besoin.' });
  messages.push({ role: 'user', content: r() < 0.8 ? 'What is the weather in Zürich tomorrow? 明日の天気は?' : [{ type: 'text', text: 'Find flights LHR → JFK' }] });
  if (r() < 0.4) {
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: NAMES[0], arguments: '{"city":"Zürich","unit":"celsius"}' } }] });
    messages.push({ role: 'tool', tool_call_id: 'call_1', content: '{"temp": 21, "sky": "clear"}' });
  }
  if (r() < 0.1) messages.push({ role: 'user', name: 'bob', content: 'and Paris?' });
  const req = { model: 'gpt-4o', messages, tools };
  const c = r();
  const firstName = (tools[0].function ?? tools[0].function_declarations?.[0] ?? tools[0]).name;
  if (c < 0.2) req.tool_choice = 'auto';
  else if (c < 0.3) req.tool_choice = 'none';
  else if (c < 0.35) req.tool_choice = 'required';
  else if (c < 0.55) req.tool_choice = { type: 'function', function: { name: firstName } };
  return req;
}

export function toolsCorpus(n = 400) {
  const r = rng(0x700150);
  const out = [];
  for (let i = 0; i < n; i++) out.push(chat(r, i));
  // a few fixed edge cases of the rendering
  out.push({ model: 'x', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'noargs', parameters: { type: 'object', properties: {} } } }] });
  out.push({ model: 'x', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'deep', parameters: { type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'object', properties: { c: { type: 'array', items: { type: 'object', properties: { d: { type: 'string', description: 'deepest' } }, required: ['d'] } } } } } } } } } }] });
  out.push({ model: 'x', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'emptyenum', parameters: { type: 'object', properties: { e: { type: 'string', enum: [] } } } } }] });
  return out;
}

function frames(list) {
  const parts = [];
  for (const t of list) {
    const b = Buffer.from(JSON.stringify(t), 'utf8');
    parts.push(Buffer.from(`${b.length}\n`), b);
  }
  return Buffer.concat(parts);
}

const corpus = toolsCorpus();
for (const encName of ['cl100k_base', 'o200k_base']) {
  test(`${encName}: chats with tools count as LiteLLM token_counter`, { skip: !bin && 'SY_TOKENIZE not set' }, () => {
    const res = spawnSync(bin, ['-r', encName], { input: frames(corpus), maxBuffer: 1 << 28 });
    assert.equal(res.status, 0, `sy-tokenize failed: ${res.stderr}`);
    const lines = res.stdout.toString().split('\n');
    const enc = encodingFor(encName);
    let mismatches = 0, toolTokens = 0;
    for (let i = 0; i < corpus.length; i++) {
      const want = litellmChatTokens(enc, corpus[i]);
      toolTokens += enc.encode_ordinary(formatFunctionDefinitions(corpus[i].tools)).length;
      if (String(want) !== lines[i] && mismatches++ < 5) {
        console.log(`MISMATCH ${encName} #${i}: want ${want} got ${lines[i]}`);
        console.log(formatFunctionDefinitions(corpus[i].tools));
      }
    }
    enc.free();
    console.log(`${encName}: ${corpus.length} chats with tools (${toolTokens} tokens of tool definitions): ${mismatches} mismatches`);
    assert.equal(mismatches, 0);
  });
}
