// The Logs page: LiteLLM_SpendLogs rows from GET /spend/logs/ui, paged on
// the server, with filters (key alias or key, team, model, status, time
// range; default the last 24 hours) and a detail view of one request from
// GET /spend/logs/ui/{request_id}: its messages and response when the proxy
// stores them (store_prompts_in_spend_logs), the error otherwise.  An
// internal user gets their own rows only (the server scopes both routes).
import { api, h, table, modal, fmtMoney, fmtDate, loading, errorBox, clear } from "../lib.js";

const pad = (n) => String(n).padStart(2, "0");
// A datetime-local value (local time) as the API's UTC "YYYY-MM-DD HH:MM:SS".
function utc(local) {
  const d = new Date(local);
  if (Number.isNaN(d.getTime())) return "";
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}
function localValue(d) {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
const obj = (v) => {
  if (typeof v === "string") {
    try { return JSON.parse(v); } catch { return v; }
  }
  return v;
};
const empty = (v) => v === null || v === undefined || v === "" || (typeof v === "object" && !Array.isArray(v) && !Object.keys(v).length);
const pretty = (v) => (typeof v === "string" ? v : JSON.stringify(v, null, 2));

function statusBadge(row) {
  const ok = !row.status || row.status === "success";
  return h("span", { class: ["badge", ok ? "ok" : "bad"] }, ok ? "Success" : "Failure");
}

function block(title, value) {
  return h("section", null, h("h3", { style: "font-size:1rem;margin:.75rem 0 .25rem" }, title), h("pre", { tabindex: "0", style: "max-height:18rem;overflow:auto;background:#f3f4f6;padding:.75rem;border-radius:6px;white-space:pre-wrap;word-break:break-word" }, pretty(value)));
}

function showDetail(row) {
  const body = h("div", null);
  modal(`Request ${row.request_id}`, body, []);
  fill(body, row);
}

async function fill(body, row) {
  clear(body).append(loading("Loading request…"));
  try {
    const d = await api("GET", `/spend/logs/ui/${encodeURIComponent(row.request_id)}`);
    const meta = obj(d.metadata) || {};
    const err = meta.error_information;
    const parts = [
      h(
        "dl",
        { class: "kv" },
        h("dt", null, "Status"), h("dd", null, statusBadge(d)),
        h("dt", null, "Time"), h("dd", null, fmtDate(d.startTime)),
        h("dt", null, "Model"), h("dd", null, d.model_group || d.model || "–"),
        h("dt", null, "Provider"), h("dd", null, d.custom_llm_provider || "–"),
        h("dt", null, "Key"), h("dd", null, meta.user_api_key_alias || (d.api_key ? d.api_key.slice(0, 12) + "…" : "–")),
        h("dt", null, "User"), h("dd", null, d.user || "–"),
        h("dt", null, "Team"), h("dd", null, d.team_id || "–"),
        h("dt", null, "Tokens"), h("dd", null, `${d.prompt_tokens ?? 0} prompt + ${d.completion_tokens ?? 0} completion`),
        h("dt", null, "Spend"), h("dd", null, fmtMoney(d.spend)),
        h("dt", null, "Duration"), h("dd", null, d.request_duration_ms != null ? `${d.request_duration_ms} ms` : "–"),
      ),
    ];
    if (err && (err.error_message || err.error_class)) {
      parts.push(h("div", { class: "state error", role: "alert" }, h("span", null, `${err.error_code || ""} ${err.error_class || ""}: ${err.error_message || ""}`.trim())));
    }
    const request = !empty(obj(d.proxy_server_request)) ? obj(d.proxy_server_request) : obj(d.messages);
    const response = obj(d.response);
    if (!empty(request)) parts.push(block("Request", request));
    if (!empty(response)) parts.push(block("Response", response));
    if (empty(request) && empty(response))
      parts.push(h("p", { class: "help" }, "Messages and responses are not stored (general_settings.store_prompts_in_spend_logs is off)."));
    const tags = obj(d.request_tags);
    if (Array.isArray(tags) && tags.length) parts.push(h("p", null, "Tags: ", tags.map((t) => h("span", { class: "badge info", style: "margin-right:.25rem" }, t))));
    clear(body).append(...parts);
  } catch (e) {
    clear(body).append(errorBox(e, () => fill(body, row)));
  }
}

export default {
  id: "logs",
  title: "Logs",
  render(root) {
    const now = new Date();
    const f = {
      key: h("input", { id: "logs-key", type: "search", placeholder: "alias, sk-… or hash", autocomplete: "off" }),
      team: h("input", { id: "logs-team", type: "search", placeholder: "team id", autocomplete: "off" }),
      model: h("input", { id: "logs-model", type: "search", placeholder: "model", autocomplete: "off" }),
      status: h("select", { id: "logs-status" }, h("option", { value: "" }, "Any"), h("option", { value: "success" }, "Success"), h("option", { value: "failure" }, "Failure")),
      from: h("input", { id: "logs-from", type: "datetime-local", value: localValue(new Date(now.getTime() - 86400e3)) }),
      to: h("input", { id: "logs-to", type: "datetime-local", value: localValue(new Date(now.getTime() + 3600e3)) }),
    };
    const field = (id, label, el) => h("div", { class: "field" }, h("label", { for: id }, label), el);
    const holder = h("div");
    const form = h(
      "form",
      { class: "toolbar", "aria-label": "Log filters", onsubmit: (e) => { e.preventDefault(); build(); } },
      field("logs-key", "Key", f.key),
      field("logs-team", "Team", f.team),
      field("logs-model", "Model", f.model),
      field("logs-status", "Status", f.status),
      field("logs-from", "From", f.from),
      field("logs-to", "To", f.to),
      h("button", { type: "submit", class: "btn primary" }, "Filter"),
    );
    root.append(h("div", { class: "page-head" }, h("h1", { id: "page-title" }, "Logs")), form, holder);

    function query() {
      const q = { start_date: utc(f.from.value), end_date: utc(f.to.value) };
      const key = f.key.value.trim();
      if (key) {
        if (/^sk-/.test(key) || /^[0-9a-f]{64}$/i.test(key)) q.api_key = key;
        else q.key_alias = key;
      }
      if (f.team.value.trim()) q.team_id = f.team.value.trim();
      if (f.model.value.trim()) q.model = f.model.value.trim();
      if (f.status.value) q.status_filter = f.status.value;
      return q;
    }

    function build() {
      const q = query();
      if (!q.start_date || !q.end_date) {
        clear(holder).append(errorBox(new Error("Choose a valid time range.")));
        return;
      }
      const t = table({
        caption: "Request logs",
        pageSize: 50,
        empty: "No requests in this range.",
        columns: [
          { title: "Time", render: (r) => fmtDate(r.startTime) },
          { title: "Status", render: statusBadge },
          { title: "Model", render: (r) => r.model_group || r.model },
          { title: "Key", render: (r) => (obj(r.metadata) || {}).user_api_key_alias || (r.api_key ? r.api_key.slice(0, 10) + "…" : "–") },
          { title: "User", render: (r) => r.user || "–" },
          { title: "Tokens", render: (r) => String(r.total_tokens ?? 0) },
          { title: "Spend", render: (r) => fmtMoney(r.spend) },
          { title: "Request", render: (r) => h("button", { type: "button", class: "btn small", "aria-label": `View request ${r.request_id}`, onclick: () => showDetail(r) }, "View") },
        ],
        onRow: showDetail,
        fetchPage: async (page, size) => {
          const r = await api("GET", "/spend/logs/ui", { query: { ...q, page, page_size: size } });
          return { rows: r.data || [], total: r.total || 0 };
        },
      });
      clear(holder).append(t);
    }
    build();
  },
};
