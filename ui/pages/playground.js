// The Playground page: chat with any model the session may use (the list
// from GET /v1/models, which the server filters to the session's models),
// streamed: POST /v1/chat/completions with stream: true through fetch and a
// ReadableStream reader that splits the SSE lines and appends each delta as
// it arrives.  A Stop button aborts the stream; errors (LiteLLM's JSON
// error, or an error event in the stream) are shown in the conversation.
// System prompt, temperature and max_tokens are optional.
import { api, session, h, clear, loading, errorBox } from "../lib.js";

// LiteLLM's error message from a JSON error body (text otherwise).
function errorText(text, status) {
  try {
    const j = JSON.parse(text);
    if (j.error && j.error.message) return String(j.error.message);
    if (j.detail) return typeof j.detail === "string" ? j.detail : JSON.stringify(j.detail);
  } catch {}
  return text ? text.slice(0, 500) : `HTTP ${status}`;
}

// Read an SSE body: calls onDelta(text) per content delta; returns when done.
async function readStream(res, onDelta) {
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i).replace(/\r$/, "");
      buf = buf.slice(i + 1);
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") return;
      let j;
      try { j = JSON.parse(data); } catch { continue; }
      if (j.error) throw new Error(j.error.message || JSON.stringify(j.error));
      const c = j.choices && j.choices[0];
      const t = c && c.delta && typeof c.delta.content === "string" ? c.delta.content : "";
      if (t) onDelta(t);
    }
  }
}

export default {
  id: "playground",
  title: "Playground",
  async render(root) {
    const status = h("div", { "aria-live": "polite" }, loading("Loading models…"));
    root.append(h("div", { class: "page-head" }, h("h1", { id: "page-title" }, "Playground")), status);
    let models;
    try {
      const r = await api("GET", "/v1/models");
      models = (r.data || []).map((m) => m.id).sort();
    } catch (e) {
      clear(status).append(errorBox(e, () => { clear(root); this.render(root); }));
      return;
    }
    clear(status);
    if (!models.length) {
      status.append(h("p", { class: "state empty" }, "No model is available to this session."));
      return;
    }
    const modelIn = h("select", { id: "pg-model" }, models.map((m) => h("option", { value: m }, m)));
    const sysIn = h("textarea", { id: "pg-system", rows: 2, placeholder: "You are a helpful assistant." });
    const tempIn = h("input", { id: "pg-temp", type: "number", min: 0, max: 2, step: 0.1, placeholder: "default" });
    const maxIn = h("input", { id: "pg-max", type: "number", min: 1, step: 1, placeholder: "default" });
    const msgIn = h("textarea", { id: "pg-message", rows: 3, required: true });
    const sendBtn = h("button", { type: "submit", class: "btn primary" }, "Send");
    const stopBtn = h("button", { type: "button", class: "btn", disabled: true, onclick: () => ctl && ctl.abort() }, "Stop");
    const clearBtn = h("button", { type: "button", class: "btn", onclick: () => { history.length = 0; clear(log); } }, "Clear chat");
    const log = h("div", { class: "pg-log", role: "log", "aria-live": "polite", "aria-label": "Conversation", style: "display:flex;flex-direction:column;gap:.5rem;margin-bottom:1rem" });
    const field = (id, label, el) => h("div", { class: "field" }, h("label", { for: id }, label), el);
    const history = [];
    let ctl = null;

    const bubble = (role, text) => {
      const body = h("div", { style: "white-space:pre-wrap;overflow-wrap:anywhere" }, text);
      const el = h("div", { class: "panel", "data-role": role, style: `margin:0;${role === "user" ? "background:#e7eefc" : ""}` }, h("strong", null, role === "user" ? "You" : "Assistant"), body);
      log.append(el);
      return body;
    };

    async function send(e) {
      e.preventDefault();
      const text = msgIn.value.trim();
      if (!text || ctl) return;
      msgIn.value = "";
      history.push({ role: "user", content: text });
      bubble("user", text);
      const out = bubble("assistant", "");
      out.setAttribute("aria-busy", "true");
      const messages = [];
      if (sysIn.value.trim()) messages.push({ role: "system", content: sysIn.value.trim() });
      messages.push(...history);
      const body = { model: modelIn.value, messages, stream: true };
      if (tempIn.value !== "") body.temperature = Number(tempIn.value);
      if (maxIn.value !== "") body.max_tokens = Number(maxIn.value);
      ctl = new AbortController();
      sendBtn.disabled = true;
      stopBtn.disabled = false;
      let answer = "";
      try {
        const s = await session();
        const res = await fetch("/v1/chat/completions", {
          method: "POST",
          credentials: "same-origin",
          headers: { "content-type": "application/json", accept: "text/event-stream", "x-csrf-token": (s && s.csrf_token) || "" },
          body: JSON.stringify(body),
          signal: ctl.signal,
        });
        if (!res.ok) throw new Error(errorText(await res.text(), res.status));
        await readStream(res, (t) => { answer += t; out.textContent = answer; });
        history.push({ role: "assistant", content: answer });
      } catch (err) {
        if (err.name === "AbortError") {
          out.append(h("em", null, answer ? " (stopped)" : "(stopped)"));
          if (answer) history.push({ role: "assistant", content: answer });
        } else {
          out.parentElement.replaceWith(errorBox(err));
          history.pop();
        }
      } finally {
        out.removeAttribute("aria-busy");
        ctl = null;
        sendBtn.disabled = false;
        stopBtn.disabled = true;
        msgIn.focus();
      }
    }

    const form = h(
      "form",
      { "aria-label": "Chat", onsubmit: send },
      h("div", { class: "form-grid" }, field("pg-model", "Model", modelIn), field("pg-temp", "Temperature", tempIn), field("pg-max", "Max tokens", maxIn), field("pg-system", "System prompt", sysIn)),
      log,
      field("pg-message", "Message", msgIn),
      h("div", { class: "actions" }, sendBtn, stopBtn, clearBtn),
    );
    msgIn.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) form.requestSubmit();
    });
    root.append(form);
  },
};
