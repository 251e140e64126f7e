// litellm-ref.mjs - a JavaScript transcription of LiteLLM's chat token
// counting (litellm/litellm_core_utils/token_counter.py: token_counter with
// messages, tools, tool_choice; _count_messages, _count_extra,
// _format_function_definitions, _format_object_parameters, _format_type) on
// npm tiktoken, for the differential test of switchyard's count.c. Covers
// the shapes the corpus uses: string fields, text content parts, tool_calls
// arguments, OpenAI / Anthropic / Gemini tool shapes, nested objects, enums,
// arrays, required, descriptions. Python's str() is mirrored for the values
// the corpus puts where LiteLLM formats with f-strings (strings, ints, bools).
import { get_encoding } from 'tiktoken';

const pyStr = (v) => (v === null ? 'None' : v === true ? 'True' : v === false ? 'False' : String(v));
const truthy = (v) => !(v === null || v === undefined || v === false || v === 0 || v === '' ||
  (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0));
const isMapping = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function formatType(props, indent) {
  const type = props.type;
  if (type === 'string') {
    if ('enum' in props) return props.enum.map((i) => `"${pyStr(i)}"`).join(' | ');
    return 'string';
  } else if (type === 'array') {
    return `${formatType(props.items, indent)}[]`;
  } else if (type === 'object') {
    return `{\n${formatObjectParameters(props, indent + 2)}\n}`;
  } else if (type === 'integer' || type === 'number') {
    if ('enum' in props) return props.enum.map((i) => `"${pyStr(i)}"`).join(' | ');
    return 'number';
  } else if (type === 'boolean') return 'boolean';
  else if (type === 'null') return 'null';
  return 'any';
}

function formatObjectParameters(parameters, indent) {
  const properties = parameters.properties;
  if (!truthy(properties)) return '';
  const required = parameters.required ?? [];
  const lines = [];
  for (const [key, props] of Object.entries(properties)) {
    const description = props.description;
    if (truthy(description)) lines.push(`// ${pyStr(description)}`);
    const question = truthy(required) && required.includes(key) ? '' : '?';
    lines.push(`${key}${question}: ${formatType(props, indent)},`);
  }
  return lines.map((l) => ' '.repeat(Math.max(0, indent)) + l).join('\n');
}

function formatSingle(fn) {
  const name = fn.name;
  if (!truthy(name)) return [];
  const desc = fn.description;
  const pv = truthy(fn.parameters) ? fn.parameters : {};
  const parameters = isMapping(pv) ? pv : {};
  const properties = parameters.properties;
  const head = truthy(desc) ? [`// ${pyStr(desc)}`] : [];
  if (isMapping(properties) && truthy(properties))
    return [...head, `type ${pyStr(name)} = (_: {`, formatObjectParameters(parameters, 0), '}) => any;', ''];
  return [...head, `type ${pyStr(name)} = () => any;`, ''];
}

function* definitionsForTool(tool) {
  if (isMapping(tool.function)) { yield tool.function; return; }
  const decl = truthy(tool.function_declarations) ? tool.function_declarations : tool.functionDeclarations;
  if (Array.isArray(decl)) { for (const d of decl) if (isMapping(d)) yield d; return; }
  const p = truthy(tool.input_schema) ? tool.input_schema : truthy(tool.parameters) ? tool.parameters : {};
  yield { name: tool.name ?? null, description: tool.description ?? null, parameters: isMapping(p) ? p : {} };
}

/** LiteLLM's _format_function_definitions(tools). */
export function formatFunctionDefinitions(tools) {
  const lines = ['namespace functions {', ''];
  for (const tool of tools) {
    if (!isMapping(tool)) continue;
    for (const fn of definitionsForTool(tool)) lines.push(...formatSingle(fn));
  }
  lines.push('} // namespace functions');
  return lines.join('\n');
}

/** token_counter(model, messages=, tools=, tool_choice=) with an encoding. */
export function litellmChatTokens(enc, { messages, tools, tool_choice }) {
  const count = (s) => enc.encode_ordinary(s).length;
  let n = 0;
  for (const m of messages) {
    n += 3;
    for (const [key, value] of Object.entries(m)) {
      if (value === null || value === undefined) continue;
      if (key === 'tool_calls') {
        for (const tc of value) n += count(pyStr(tc.function.arguments ?? ''));
      } else if (key === 'function_call') {
        n += count(pyStr(value.arguments ?? ''));
      } else if (typeof value === 'string') {
        n += count(value);
        if (key === 'name') n += 1;
      } else if (key === 'content' && Array.isArray(value)) {
        for (const c of value) {
          if (typeof c === 'string') n += count(c);
          else if (c.type === 'text') n += count(pyStr(c.text ?? ''));
          else throw new Error(`reference: unsupported part ${c.type}`);
        }
      }
    }
  }
  const hasSystem = messages.some((m) => m.role === 'system');
  n += 3;
  if (truthy(tools)) {
    n += count(formatFunctionDefinitions(tools)) + 9;
    if (hasSystem) n -= 4;
  }
  if (tool_choice === 'none') n += 1;
  else if (isMapping(tool_choice)) n += 7 + count(pyStr(tool_choice.function.name));
  return n;
}

export function encodingFor(name) { return get_encoding(name); }
