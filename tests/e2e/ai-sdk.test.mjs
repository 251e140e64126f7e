// ai-sdk.test.mjs - the Vercel AI SDK (`ai` + `@ai-sdk/openai`) through
// switchyard (issue 11). Its default `openai(model)` speaks the Responses API
// (POST /v1/responses, JSON and SSE), so this exercises the native
// pass-through (gpt-native), the translation to chat completions (chat-only)
// and to Anthropic messages (claude) with a real third-party client:
// generateText, streamText (text stream, finish reason, usage) and a
// two-step tool call (the SDK runs the tool and sends its result back as a
// function_call + function_call_output pair in the next request's input).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { startGateway, startMock } from '../lib/harness.mjs';

const KEY = 'sk-e2e-master';
let mock, gw, openai;

const GROUPS = [
  { name: 'gpt-native', path: '/v1/responses' },
  { name: 'chat-only', path: '/chat/completions' },
  { name: 'claude', path: '/v1/messages' },
];

before(async () => {
  mock = await startMock();
  gw = await startGateway(`
model_list:
  - model_name: gpt-native
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-up}
  - model_name: chat-only
    litellm_params: {model: hosted_vllm/qwen, api_base: "${mock.base}", api_key: sk-up}
  - model_name: claude
    litellm_params: {model: anthropic/claude-3-5-sonnet, api_base: "${mock.url}", api_key: sk-up}
general_settings:
  master_key: ${KEY}
`);
  openai = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY });
});
after(async () => { await gw.stop(); await mock.stop(); });

const weatherTool = () => tool({
  description: 'Get the weather of a city',
  inputSchema: jsonSchema({
    type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false,
  }),
  execute: async ({ city }) => ({ city, temp: 20 }),
});

/** Upstream requests of the mock log whose path ends with `part`, parsed. */
async function upstream(part) {
  return (await mock.requests()).filter((q) => q.path.split('?')[0].endsWith(part))
    .map((q) => { let json = null; try { json = JSON.parse(q.body); } catch {} return { ...q, json }; });
}

for (const g of GROUPS) {
  test(`${g.name}: generateText`, async () => {
    const r = await generateText({ model: openai(g.name), prompt: 'Say hello.', maxRetries: 0 });
    assert.ok(r.text.length > 0);
    assert.equal(r.finishReason, 'stop');
    assert.ok(r.usage.inputTokens > 0, JSON.stringify(r.usage));
    assert.ok(r.usage.outputTokens > 0, JSON.stringify(r.usage));
    assert.ok(r.response.id.startsWith('resp_'), r.response.id);
    // native groups reach the upstream's /v1/responses, translated ones its chat API
    const last = (await mock.requests()).at(-1);
    assert.ok(last.path.split('?')[0].endsWith(g.path), last.path);
  });

  test(`${g.name}: generateText with a system prompt`, async () => {
    const r = await generateText({
      model: openai(g.name), system: 'You are terse.', maxRetries: 0,
      messages: [{ role: 'user', content: 'Hello there' }],
    });
    assert.ok(r.text.length > 0);
    assert.equal(r.finishReason, 'stop');
  });

  test(`${g.name}: streamText`, async () => {
    let failure = null; // streamText reports errors through onError, not by throwing from textStream
    const result = streamText({ model: openai(g.name), prompt: 'Count to five.', maxRetries: 0, onError: ({ error }) => { failure = error; } });
    let text = '', parts = 0;
    for await (const piece of result.textStream) { text += piece; parts++; }
    if (failure) throw failure;
    assert.ok(text.length > 0);
    assert.ok(parts >= 2, `text arrived in ${parts} part(s)`);
    assert.equal(await result.text, text);
    assert.equal(await result.finishReason, 'stop');
    const usage = await result.usage;
    assert.ok(usage.inputTokens > 0 && usage.outputTokens > 0, JSON.stringify(usage));
    const resp = await result.response;
    assert.ok(resp.id.startsWith('resp_'), resp.id);
  });

  test(`${g.name}: a tool call and its result (two steps)`, async () => {
    const r = await generateText({
      model: openai(g.name), maxRetries: 0,
      prompt: 'What is the weather in Paris? use get_weather',
      tools: { get_weather: weatherTool() },
      stopWhen: stepCountIs(2),
    });
    assert.equal(r.steps.length, 2, JSON.stringify(r.steps.map((s) => s.finishReason)));
    const [s1, s2] = r.steps;
    assert.equal(s1.finishReason, 'tool-calls');
    assert.equal(s1.toolCalls.length, 1);
    assert.equal(s1.toolCalls[0].toolName, 'get_weather');
    assert.equal(typeof s1.toolCalls[0].input.city, 'string');
    assert.equal(s1.toolResults[0].output.temp, 20);
    assert.equal(s2.finishReason, 'stop');
    assert.ok(r.text.length > 0);
    // the second request carried the call and its output
    if (g.name === 'gpt-native') {
      const up = (await upstream('/v1/responses')).at(-1).json;
      const types = up.input.map((i) => i.type || 'message');
      assert.ok(types.includes('function_call') && types.includes('function_call_output'), types.join(','));
    } else if (g.name === 'chat-only') {
      const up = (await upstream('/chat/completions')).at(-1).json;
      assert.equal(up.messages.at(-1).role, 'tool', JSON.stringify(up.messages));
      assert.ok(up.messages.some((m) => m.role === 'assistant' && m.tool_calls?.[0]?.function?.name === 'get_weather'));
    } else {
      const up = (await upstream('/v1/messages')).at(-1).json;
      const blocks = up.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
      assert.ok(blocks.some((b) => b.type === 'tool_use') && blocks.some((b) => b.type === 'tool_result'), JSON.stringify(up.messages));
    }
  });

  test(`${g.name}: streamed tool call`, async () => {
    const result = streamText({
      model: openai(g.name), maxRetries: 0,
      prompt: 'What is the weather in Paris? use get_weather',
      tools: { get_weather: weatherTool() },
      stopWhen: stepCountIs(2),
    });
    const kinds = new Set();
    for await (const p of result.fullStream) {
      kinds.add(p.type);
      if (p.type === 'error') throw p.error;
    }
    assert.ok(kinds.has('tool-call') && kinds.has('tool-result'), [...kinds].join(','));
    const steps = await result.steps;
    assert.equal(steps.length, 2);
    assert.equal(steps[0].toolCalls[0].toolName, 'get_weather');
    assert.equal(typeof steps[0].toolCalls[0].input.city, 'string');
    assert.ok((await result.text).length > 0);
    assert.equal(await result.finishReason, 'stop');
  });
}

test('an unknown model surfaces as an APICallError with status 400', async () => {
  await assert.rejects(generateText({ model: openai('nope'), prompt: 'x', maxRetries: 0 }),
    (e) => e.statusCode === 400 || e.lastError?.statusCode === 400);
});
