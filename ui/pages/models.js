// Models: the deployments of GET /v2/model/info grouped by model name
// (provider, upstream model, api_base, prices per 1M tokens, whether the
// row lives in the database, the router's health/cooldown state when the
// server reports it).  Admins add, edit and delete through /model/new,
// /model/update and /model/delete; when the server does not allow it
// (models only from the config file) its error is shown as is.
import { api, h, table, formDialog, confirmDialog, toast, pageHeader, rowActions, button, listPager } from "../lib.js";

const SECRET_PARAMS = new Set(["api_key", "aws_secret_access_key", "aws_access_key_id", "vertex_credentials", "client_secret"]);

function provider(d) {
  const mi = d.model_info || {};
  if (mi.litellm_provider) return mi.litellm_provider;
  const m = (d.litellm_params || {}).model || "";
  return m.includes("/") ? m.split("/")[0] : "–";
}

function perMillion(x) {
  if (x === null || x === undefined || x === "") return "–";
  const v = Number(x) * 1e6;
  return Number.isFinite(v) ? "$" + (Math.round(v * 1000) / 1000).toString() : "–";
}

// The router state a deployment carries, in whichever of the names the
// server uses (model_info.health_status / cooldown, or top-level).
function health(d) {
  const mi = d.model_info || {};
  const until = mi.cooldown_until ?? d.cooldown_until;
  const cooldown = d.cooldown ?? mi.cooldown ?? mi.in_cooldown ?? mi.is_in_cooldown ?? d.in_cooldown;
  const st = mi.health_status ?? d.health_status ?? mi.health ?? d.health;
  const out = [];
  const cooling = cooldown === true || (cooldown && typeof cooldown === "object") || (typeof cooldown === "number" && cooldown > 0);
  if (cooling || (until && new Date(typeof until === "number" ? until * 1000 : until) > new Date()))
    out.push(h("span", { class: "badge warn" }, "Cooling down"));
  if (typeof st === "string") out.push(h("span", { class: ["badge", /^(healthy|ok)$/i.test(st) ? "ok" : /unknown/i.test(st) ? "" : "bad"] }, st));
  else if (st && typeof st === "object" && st.status) out.push(h("span", { class: "badge" }, String(st.status)));
  return out.length ? h("span", { class: "chips" }, out) : "–";
}

function modelSpec(d = { litellm_params: {}, model_info: {} }) {
  const lp = d.litellm_params || {};
  const rest = {};
  for (const [k, v] of Object.entries(lp))
    if (!["model", "api_base", "input_cost_per_token", "output_cost_per_token", "rpm", "tpm"].includes(k) && !SECRET_PARAMS.has(k)) rest[k] = v;
  const info = {};
  for (const [k, v] of Object.entries(d.model_info || {})) if (k !== "id" && k !== "db_model") info[k] = v;
  return [
    { name: "model_name", label: "Model name (public)", required: true, value: d.model_name },
    { name: "model", label: "Upstream model", required: true, placeholder: "openai/gpt-4o", value: lp.model },
    { name: "api_base", label: "API base", placeholder: "https://api.openai.com/v1", value: lp.api_base },
    { name: "api_key", label: "API key", type: "password", help: d.model_name ? "Leave empty to keep the current key" : "Stored encrypted", autocomplete: "off" },
    { name: "input_cost_per_token", label: "Input cost per token (USD)", type: "number", min: 0, value: lp.input_cost_per_token },
    { name: "output_cost_per_token", label: "Output cost per token (USD)", type: "number", min: 0, value: lp.output_cost_per_token },
    { name: "rpm", label: "RPM", type: "number", min: 0, step: 1, value: lp.rpm },
    { name: "tpm", label: "TPM", type: "number", min: 0, step: 1, value: lp.tpm },
    { name: "extra", label: "Other litellm_params (JSON)", type: "json", value: Object.keys(rest).length ? rest : "" },
    { name: "model_info", label: "model_info (JSON)", type: "json", value: Object.keys(info).length ? info : "" },
  ];
}

function toBody(v) {
  if (v.extra !== undefined && (typeof v.extra !== "object" || Array.isArray(v.extra))) throw new Error("Other litellm_params must be a JSON object");
  if (v.model_info !== undefined && (typeof v.model_info !== "object" || Array.isArray(v.model_info))) throw new Error("model_info must be a JSON object");
  const lp = { ...(v.extra || {}), model: v.model };
  for (const f of ["api_base", "api_key", "input_cost_per_token", "output_cost_per_token", "rpm", "tpm"]) if (v[f] !== undefined) lp[f] = v[f];
  return { model_name: v.model_name, litellm_params: lp, model_info: v.model_info || {} };
}

// The database models are served once the registry has rebuilt the config in
// force (a few ms after the write, on a DB thread): wait until the list shows
// the change (bounded) before redrawing, so a new row is never missed.
async function served(pred) {
  for (let i = 0; i < 40; i++) {
    try {
      const r = await api("GET", "/v2/model/info");
      if (pred((r && r.data) || [])) return;
    } catch (e) {
      return;
    }
    await new Promise((res) => setTimeout(res, 250));
  }
}

const hasId = (rows, id) => rows.some((d) => (d.model_info || {}).id === id);

export default {
  id: "models",
  title: "Models",
  render(root, ctx) {
    let filter = "";
    let groups = {};

    function add() {
      formDialog(
        "Add model",
        modelSpec(),
        async (v) => {
          const r = await api("POST", "/model/new", { body: toBody(v) });
          const id = r && (r.model_id || (r.model_info || {}).id);
          if (id) await served((rows) => hasId(rows, id));
          toast("Model added", "success");
          tbl.goto(1);
        },
        "Add model",
      );
    }

    function edit(d) {
      const id = (d.model_info || {}).id;
      formDialog(`Edit ${d.model_name}`, modelSpec(d), async (v) => {
        const body = toBody(v);
        body.model_info = { ...body.model_info, id };
        await api("POST", "/model/update", { body });
        toast("Model updated", "success");
        tbl.goto(1);
      });
    }

    async function remove(d) {
      const id = (d.model_info || {}).id;
      if (!(await confirmDialog("Delete model", `Delete the deployment ${id} of ${d.model_name}?`))) return;
      try {
        await api("POST", "/model/delete", { body: { id } });
        await served((rows) => !hasId(rows, id));
        toast("Model deleted", "success");
        tbl.goto(1);
      } catch (e) {
        toast(e.message, "error");
      }
    }

    const columns = [
      {
        key: "model_name",
        title: "Model name",
        render: (d) => h("span", null, h("strong", null, d.model_name), groups[d.model_name] > 1 ? h("span", { class: "help" }, ` · ${groups[d.model_name]} deployments`) : null),
      },
      { key: "provider", title: "Provider", render: provider },
      { key: "model", title: "Upstream model", render: (d) => h("code", null, (d.litellm_params || {}).model || "–") },
      { key: "api_base", title: "API base", render: (d) => (d.litellm_params || {}).api_base || "–" },
      {
        key: "price",
        title: "Input / output per 1M",
        render: (d) => {
          const lp = d.litellm_params || {};
          const mi = d.model_info || {};
          return `${perMillion(lp.input_cost_per_token ?? mi.input_cost_per_token)} / ${perMillion(lp.output_cost_per_token ?? mi.output_cost_per_token)}`;
        },
      },
      { key: "source", title: "Source", render: (d) => ((d.model_info || {}).db_model ? h("span", { class: "badge info" }, "Database") : h("span", { class: "badge" }, "Config")) },
      { key: "health", title: "Health", render: health },
    ];
    if (ctx.isAdmin)
      columns.push({
        key: "actions",
        title: "Actions",
        render: (d) =>
          rowActions(
            button("Edit", () => edit(d), "", { "aria-label": `Edit ${d.model_name} ${(d.model_info || {}).id || ""}`.trim() }),
            button("Delete", () => remove(d), "danger", { "aria-label": `Delete ${d.model_name} ${(d.model_info || {}).id || ""}`.trim() }),
          ),
      });

    const tbl = table({
      caption: "Model deployments",
      columns,
      pageSize: 25,
      fetchPage: listPager(
        async () => {
          const r = await api("GET", "/v2/model/info");
          const rows = (r && r.data) || [];
          groups = {};
          for (const d of rows) groups[d.model_name] = (groups[d.model_name] || 0) + 1;
          return rows.slice().sort((a, b) => String(a.model_name).localeCompare(String(b.model_name)));
        },
        (d) => !filter || String(d.model_name).toLowerCase().includes(filter) || String((d.litellm_params || {}).model || "").toLowerCase().includes(filter),
      ),
    });

    const search = h("input", { id: "model-search", type: "search", placeholder: "Model name" });
    const form = h(
      "form",
      {
        class: "toolbar",
        role: "search",
        onsubmit: (ev) => {
          ev.preventDefault();
          filter = search.value.trim().toLowerCase();
          tbl.goto(1);
        },
      },
      h("div", { class: "field" }, h("label", { for: "model-search" }, "Filter models"), search),
      h("button", { type: "submit", class: "btn" }, "Filter"),
    );
    root.append(pageHeader("Models", ctx.isAdmin ? h("button", { type: "button", class: "btn primary", onclick: add }, "Add model") : null), form, tbl);
  },
};
