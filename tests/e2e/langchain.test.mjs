// langchain.test.mjs - LangChain's ChatOpenAI with useResponsesApi through
// switchyard (issue 11): invoke, stream and bindTools against a native
// Responses group (gpt-native) and one translated to chat completions
// (chat-only). LangChain calls client.responses.create of the openai SDK it
// bundles, so this checks that its parsing of our JSON and SSE is happy.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ChatOpenAI } from '@langchain/openai';
import { startGateway, startMock } from '../lib/harness.mjs';

const KEY = 'sk-e2e-master';
let mock, gw;

const GROUPS = ['gpt-native', 'chat-only'];

before(async () => {
  mock = await startMock();
  gw = await startGateway(`
model_list:
  - model_name: gpt-native
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-up}
  - model_name: chat-only
    litellm_params: {model: hosted_vllm/qwen, api_base: "${mock.base}", api_key: sk-up}
general_settings:
  master_key: ${KEY}
`);
});
after(async () => { await gw.stop(); await mock.stop(); });

const chat = (model) => new ChatOpenAI({
  model, apiKey: KEY, configuration: { baseURL: `${gw.url}/v1` }, useResponsesApi: true, maxRetries: 0, timeout: 30000,
});

const WEATHER = {
  type: 'function',
  function: {
    name: 'get_weather', description: 'Get the weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

for (const model of GROUPS) {
  test(`${model}: invoke`, async () => {
    const msg = await chat(model).invoke('Say hello.');
    assert.ok(msg.text.length > 0, JSON.stringify(msg.content));
    assert.ok(msg.usage_metadata && msg.usage_metadata.input_tokens > 0 && msg.usage_metadata.output_tokens > 0,
      JSON.stringify(msg.usage_metadata));
    assert.ok(String(msg.id ?? msg.response_metadata?.id ?? '').startsWith('resp_'), JSON.stringify(msg.response_metadata));
    // it went through the Responses route
    const paths = (await mock.requests()).map((q) => q.path);
    assert.ok(paths.at(-1).endsWith(model === 'gpt-native' ? '/v1/responses' : '/chat/completions'), paths.at(-1));
  });

  test(`${model}: invoke with a system message`, async () => {
    const msg = await chat(model).invoke([['system', 'You are terse.'], ['human', 'Hello there']]);
    assert.ok(msg.text.length > 0);
  });

  test(`${model}: stream`, async () => {
    let text = '', chunks = 0, usage = null;
    for await (const ch of await chat(model).stream('Count to five.')) {
      chunks++;
      text += ch.text;
      if (ch.usage_metadata) usage = ch.usage_metadata;
    }
    assert.ok(chunks >= 2, `${chunks} chunk(s)`);
    assert.ok(text.length > 0);
    assert.ok(usage && usage.output_tokens > 0, JSON.stringify(usage));
  });

  test(`${model}: bindTools`, async () => {
    const msg = await chat(model).bindTools([WEATHER]).invoke('What is the weather in Paris? use get_weather');
    assert.equal(msg.tool_calls.length, 1, JSON.stringify(msg));
    const call = msg.tool_calls[0];
    assert.equal(call.name, 'get_weather');
    assert.equal(typeof call.args.city, 'string');
    assert.ok(typeof call.id === 'string' && call.id.length > 0);
  });

  test(`${model}: streamed tool call`, async () => {
    let acc = null;
    for await (const ch of await chat(model).bindTools([WEATHER]).stream('What is the weather in Paris? use get_weather')) {
      acc = acc ? acc.concat(ch) : ch;
    }
    assert.ok(acc);
    assert.equal(acc.tool_calls.length, 1, JSON.stringify(acc.tool_call_chunks));
    assert.equal(acc.tool_calls[0].name, 'get_weather');
    assert.equal(typeof acc.tool_calls[0].args.city, 'string');
  });
}
