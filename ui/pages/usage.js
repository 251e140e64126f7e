// The Usage page: spend, requests and tokens over a date range (default the
// last 30 days), from LiteLLM's daily-activity routes (/user, /team or
// /tag/daily/activity, chosen by "Group by"), drawn with chart.js: spend and
// requests/tokens per day, and bar breakdowns by model, key, provider and
// the chosen entity (user, team or tag).  The server scopes what an
// internal user sees (their own user, teams and keys).
import { api, h, clear, loading, errorBox, fmtMoney } from "../lib.js";
import { lineChart, barChart } from "../chart.js";

const ROUTES = {
  user: { path: "/user/daily/activity", name: "user" },
  team: { path: "/team/daily/activity", name: "team" },
  tag: { path: "/tag/daily/activity", name: "tag" },
};
const MAX_PAGES = 20;

const ymd = (d) => d.toISOString().slice(0, 10);
const num = (n) => Number(n || 0).toLocaleString("en-US");
const zero = () => ({ spend: 0, api_requests: 0, successful_requests: 0, failed_requests: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

function add(m, x) {
  for (const k of Object.keys(m)) m[k] += Number(x[k] || 0);
}

// Every day from start to end (inclusive), as YYYY-MM-DD.
function days(start, end) {
  const out = [];
  const d = new Date(start + "T00:00:00Z");
  const e = new Date(end + "T00:00:00Z");
  for (let i = 0; d <= e && i < 800; i++, d.setUTCDate(d.getUTCDate() + 1)) out.push(ymd(d));
  return out;
}

// All pages of one activity route, folded: per-day metrics and breakdown totals.
async function load(route, start, end) {
  const perDay = new Map();
  const groups = { models: new Map(), providers: new Map(), api_keys: new Map(), entities: new Map() };
  let meta = null;
  for (let page = 1; page <= MAX_PAGES; page++) {
    const r = await api("GET", route.path, { query: { start_date: start, end_date: end, page, page_size: 1000 } });
    if (!meta) meta = r.metadata;
    for (const d of r.results || []) {
      if (!perDay.has(d.date)) perDay.set(d.date, zero());
      add(perDay.get(d.date), d.metrics);
      for (const [g, map] of Object.entries(groups)) {
        for (const [name, v] of Object.entries((d.breakdown && d.breakdown[g]) || {})) {
          let label = name;
          if (g === "api_keys") label = (v.metadata && v.metadata.key_alias) || (name ? name.slice(0, 10) + "…" : "(master key)");
          if (!map.has(label)) map.set(label, zero());
          add(map.get(label), v.metrics);
        }
      }
    }
    if (!r.metadata || !r.metadata.has_more) break;
  }
  return { perDay, groups, meta: meta || {} };
}

export default {
  id: "usage",
  title: "Usage",
  render(root) {
    const today = new Date();
    const from = new Date(today.getTime() - 29 * 86400e3);
    const startIn = h("input", { id: "usage-start", type: "date", value: ymd(from), required: true });
    const endIn = h("input", { id: "usage-end", type: "date", value: ymd(today), required: true });
    const groupIn = h(
      "select",
      { id: "usage-group" },
      h("option", { value: "user" }, "Users"),
      h("option", { value: "team" }, "Teams"),
      h("option", { value: "tag" }, "Tags"),
    );
    const view = h("div", { class: "usage-view", "aria-live": "polite" });
    const form = h(
      "form",
      { class: "toolbar", "aria-label": "Usage range", onsubmit: (e) => { e.preventDefault(); draw(); } },
      h("div", { class: "field" }, h("label", { for: "usage-start" }, "From"), startIn),
      h("div", { class: "field" }, h("label", { for: "usage-end" }, "To"), endIn),
      h("div", { class: "field" }, h("label", { for: "usage-group" }, "Group by"), groupIn),
      h("button", { type: "submit", class: "btn primary" }, "Show usage"),
    );
    root.append(h("div", { class: "page-head" }, h("h1", { id: "page-title" }, "Usage")), form, view);

    let seq = 0;
    async function draw() {
      const my = ++seq;
      const start = startIn.value, end = endIn.value;
      if (!start || !end || start > end) {
        clear(view).append(errorBox(new Error("Choose a start date on or before the end date.")));
        return;
      }
      const route = ROUTES[groupIn.value] || ROUTES.user;
      clear(view).append(loading("Loading usage…"));
      view.setAttribute("aria-busy", "true");
      try {
        const d = await load(route, start, end);
        if (my !== seq) return;
        render(view, d, days(start, end), route);
      } catch (e) {
        if (my !== seq) return;
        clear(view).append(errorBox(e, draw));
      } finally {
        if (my === seq) view.removeAttribute("aria-busy");
      }
    }

    function render(el, d, labels, route) {
      const m = d.meta;
      const spend = labels.map((x) => (d.perDay.get(x) || zero()).spend);
      const reqs = labels.map((x) => (d.perDay.get(x) || zero()).api_requests);
      const failed = labels.map((x) => (d.perDay.get(x) || zero()).failed_requests);
      const tokens = labels.map((x) => (d.perDay.get(x) || zero()).total_tokens);
      const items = (map, key) => [...map.entries()].map(([label, v]) => ({ label, value: v[key] }));
      const totals = h(
        "dl",
        { class: "kv", "aria-label": "Totals" },
        h("dt", null, "Spend"), h("dd", { "data-total": "spend" }, fmtMoney(m.total_spend || 0)),
        h("dt", null, "Requests"), h("dd", { "data-total": "requests" }, num(m.total_api_requests)),
        h("dt", null, "Successful"), h("dd", null, num(m.total_successful_requests)),
        h("dt", null, "Failed"), h("dd", null, num(m.total_failed_requests)),
        h("dt", null, "Tokens"), h("dd", { "data-total": "tokens" }, num(m.total_tokens)),
        h("dt", null, "Prompt / completion tokens"), h("dd", null, `${num(m.total_prompt_tokens)} / ${num(m.total_completion_tokens)}`),
      );
      const grid = "display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,420px),1fr));gap:1rem";
      const entityTitle = { user: "Spend by user", team: "Spend by team", tag: "Spend by tag" }[route.name];
      clear(el).append(
        h("section", { class: "panel", "aria-labelledby": "usage-totals" }, h("h2", { id: "usage-totals" }, "Totals"), totals),
        h(
          "div",
          { style: grid },
          h("section", { class: "panel" }, lineChart({ title: "Spend per day", labels, series: [{ name: "Spend", values: spend }], format: (v) => fmtMoney(v), axisFormat: (v) => (v ? "$" + Number(v.toPrecision(3)) : "$0") })),
          h("section", { class: "panel" }, lineChart({ title: "Requests per day", labels, series: [{ name: "Requests", values: reqs }, { name: "Failed", values: failed }], format: (v) => num(v) })),
          h("section", { class: "panel" }, lineChart({ title: "Tokens per day", labels, series: [{ name: "Tokens", values: tokens }], format: (v) => num(v) })),
          h("section", { class: "panel" }, barChart({ title: entityTitle, items: items(d.groups.entities, "spend"), format: fmtMoney })),
          h("section", { class: "panel" }, barChart({ title: "Spend by model", items: items(d.groups.models, "spend"), format: fmtMoney })),
          h("section", { class: "panel" }, barChart({ title: "Spend by key", items: items(d.groups.api_keys, "spend"), format: fmtMoney })),
          h("section", { class: "panel" }, barChart({ title: "Requests by provider", items: items(d.groups.providers, "api_requests"), format: num })),
        ),
      );
    }

    draw();
  },
};
