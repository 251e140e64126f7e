// stream-usage.test.mjs - a stream's usage with constant memory per stream: the upstream's final
// usage is read from the stream's tail, and without one the streamed text is counted in exact
// prefixes as it passes (proxy.c "usage"), never kept whole.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { chatBody, postJSON, startGateway, startMock } from '../lib/harness.mjs';

let mock, gw;
before(async () => {
  mock = await startMock();
  gw = await startGateway(`
model_list:
  - model_name: vllm-llama
    litellm_params: {model: hosted_vllm/meta-llama/Llama-3.1-8B-Instruct, api_base: "${mock.base}"}
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: "${mock.base}", api_key: sk-x}
`);
});
after(async () => { await gw.stop(); await mock.stop(); });

const rssKB = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${gw.proc.pid}/status`, 'utf8'))[1]);
const outTokens = async (model) => {
  const t = await (await fetch(`${gw.url}/metrics`)).text();
  const re = new RegExp(`^litellm_output_tokens_metric_total\\{[^}]*model="${model}"[^}]*\\} ([0-9.e+]+)$`, 'gm');
  return [...t.matchAll(re)].reduce((s, m) => s + Number(m[1]), 0);
};

/** Stream a chat; return the assembled delta text. */
async function streamText(body) {
  const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST',
    headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(res.status, 200);
  let text = '', buf = '';
  const dec = new TextDecoder();
  for await (const piece of res.body) {
    buf += dec.decode(piece, { stream: true });
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i); buf = buf.slice(i + 1);
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const ev = JSON.parse(line.slice(6));
      for (const ch of ev.choices || []) text += (ch.delta && ch.delta.content) || '';
    }
  }
  return text;
}

test('without upstream usage, counting a long stream in prefixes equals counting the whole text', async () => {
  const words = 'Alpha beta,\ngamma délta 123 epsilon\r\nZeta ETA théta. iota\n\nkappa lambda mu?';
  const before = await outTokens('meta-llama/Llama-3.1-8B-Instruct');
  const text = await streamText(chatBody('vllm-llama', { stream: true, mock: { content: words, body_bytes: 8 << 20 } }));
  assert.ok(text.length > 150000, `streamed ${text.length} chars`);
  const after = await outTokens('meta-llama/Llama-3.1-8B-Instruct');
  const whole = await postJSON(`${gw.url}/utils/token_counter`, { model: 'vllm-llama', prompt: text });
  assert.equal(whole.status, 200, whole.text);
  assert.equal(after - before, whole.json.total_tokens);
});

test('a 40 MB stream keeps the gateway RSS flat, and its final usage is still read', async () => {
  const rss0 = rssKB();
  const before = await outTokens('gpt-4o');
  const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chatBody('gpt-4o', { stream: true, stream_options: { include_usage: true }, mock: { body_bytes: 40 << 20 } })) });
  let peak = 0, n = 0, last = '';
  for await (const piece of res.body) {
    n += piece.length;
    last = (last + Buffer.from(piece).toString()).slice(-4000);
    if ((n & 0xfffff) < piece.length) peak = Math.max(peak, rssKB());
  }
  assert.ok(n > 40 << 20);
  const usage = JSON.parse(/data: (\{[^\n]*"usage":\{[^\n]*)\n/.exec(last)[1]).usage;
  const after = await outTokens('gpt-4o');
  assert.equal(after - before, usage.completion_tokens);
  assert.ok(peak - rss0 < 24 * 1024, `RSS grew by ${peak - rss0} KB during the stream`);
});
