// Virtual Keys: GET /key/list (server-side paging, LiteLLM's page, size,
// key_alias, key_hash, user_id, team_id, return_full_object=true); create
// with POST /key/generate (the key is shown once), edit with /key/update,
// POST /key/{key}/regenerate, /key/block|unblock and /key/delete.  The
// server scopes an internal user's list to their own keys.
import { api, h, table, modal, detailsList, loading, errorBox, formDialog, secretDialog, confirmDialog, toast, fmtDate, pageHeader, budgetCell, chips, rowActions, button, modelNames } from "../lib.js";

const HEX64 = /^[0-9a-f]{64}$/i;

// A search term as /key/list filters: a key's sha256 (typed, or hashed
// here from "sk-..." where the browser offers WebCrypto) or an exact alias.
async function keyFilter(q) {
  if (HEX64.test(q)) return { key_hash: q.toLowerCase(), key_alias: "" };
  if (q.startsWith("sk-") && globalThis.crypto && crypto.subtle) {
    const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(q)));
    return { key_hash: [...d].map((b) => b.toString(16).padStart(2, "0")).join(""), key_alias: "" };
  }
  return { key_hash: "", key_alias: q };
}

function keySpec(models, teams, row = {}, isNew = true, isAdmin = false) {
  const spec = [
    { name: "key_alias", label: "Key alias", value: row.key_alias },
    {
      name: "models",
      label: "Models (none selected: all models)",
      type: "select",
      multiple: true,
      options: [...new Set([...models, ...(row.models || [])])],
      value: row.models || [],
    },
    {
      name: "team_id",
      label: "Team",
      type: "select",
      options: [{ value: "", label: "No team" }, ...teams.map((t) => ({ value: t.team_id, label: t.team_alias || t.team_id }))],
      value: row.team_id || "",
    },
  ];
  if (isAdmin) spec.push({ name: "user_id", label: "User ID", value: row.user_id });
  spec.push(
    { name: "max_budget", label: "Max budget (USD)", type: "number", min: 0, value: row.max_budget },
    { name: "budget_duration", label: "Budget reset period", placeholder: "30d", help: "e.g. 1h, 1d, 30d, 1mo", value: row.budget_duration },
  );
  if (isNew) spec.push({ name: "duration", label: "Expires after", placeholder: "never", help: "e.g. 30d; empty: never" });
  spec.push(
    { name: "tpm_limit", label: "TPM limit", type: "number", min: 0, step: 1, value: row.tpm_limit },
    { name: "rpm_limit", label: "RPM limit", type: "number", min: 0, step: 1, value: row.rpm_limit },
    { name: "max_parallel_requests", label: "Max parallel requests", type: "number", min: 0, step: 1, value: row.max_parallel_requests },
    { name: "metadata", label: "Metadata (JSON)", type: "json", value: row.metadata && Object.keys(row.metadata).length ? row.metadata : "" },
  );
  return spec;
}

async function loadTeams() {
  try {
    const t = await api("GET", "/team/list");
    return Array.isArray(t) ? t : [];
  } catch {
    return [];
  }
}

function status(row) {
  if (row.blocked) return h("span", { class: "badge bad" }, "Blocked");
  if (row.expires && new Date(row.expires) < new Date()) return h("span", { class: "badge warn" }, "Expired");
  return h("span", { class: "badge ok" }, "Active");
}

export default {
  id: "keys",
  title: "Virtual Keys",
  render(root, ctx) {
    const filters = { key_alias: "", key_hash: "", user_id: "", team_id: "" };
    let lookups = null;
    const teamNames = new Map();
    const lookup = () =>
      (lookups ||= Promise.all([modelNames(), loadTeams()]).then((r) => {
        for (const t of r[1]) teamNames.set(t.team_id, t.team_alias || t.team_id);
        return r;
      }));

    function afterNewKey(r, what) {
      secretDialog(what, r.key, "Copy this key now: it will not be shown again.");
      tbl.reload();
    }

    async function create() {
      const [models, teams] = await lookup();
      formDialog(
        "Create key",
        keySpec(models, teams, {}, true, ctx.isAdmin),
        async (v) => {
          const r = await api("POST", "/key/generate", { body: v });
          afterNewKey(r, "Your new key");
        },
        "Create key",
      );
    }

    async function edit(row) {
      const [models, teams] = await lookup();
      formDialog(`Edit key ${row.key_alias || row.key_name || ""}`, keySpec(models, teams, row, false, ctx.isAdmin), async (v) => {
        const body = { key: row.token, ...v };
        for (const f of ["key_alias", "max_budget", "budget_duration", "tpm_limit", "rpm_limit", "max_parallel_requests"])
          if (!(f in v) && row[f] !== null && row[f] !== undefined) body[f] = null;
        if (!("team_id" in v) && row.team_id) body.team_id = null;
        if (!("metadata" in v)) body.metadata = {};
        await api("POST", "/key/update", { body });
        toast("Key updated", "success");
        tbl.reload();
      });
    }

    function details(row) {
      const body = h("div", null, loading());
      modal(`Key ${row.key_alias || row.key_name || ""}`.trim(), body, []);
      api("GET", "/key/info", { query: { key: row.token } })
        .then((r) => body.replaceChildren(detailsList(r.info || r, ["token"])))
        .catch((e) => body.replaceChildren(errorBox(e)));
    }

    async function regenerate(row) {
      if (!(await confirmDialog("Regenerate key", `A new value replaces ${row.key_name || "this key"}; the old one stops working at once.`, "Regenerate"))) return;
      try {
        const r = await api("POST", `/key/${encodeURIComponent(row.token)}/regenerate`, { body: {} });
        afterNewKey(r, "Regenerated key");
      } catch (e) {
        toast(e.message, "error");
      }
    }

    async function block(row) {
      try {
        await api("POST", row.blocked ? "/key/unblock" : "/key/block", { body: { key: row.token } });
        toast(row.blocked ? "Key unblocked" : "Key blocked", "success");
        tbl.reload();
      } catch (e) {
        toast(e.message, "error");
      }
    }

    async function remove(row) {
      if (!(await confirmDialog("Delete key", `Delete ${row.key_alias || row.key_name || "this key"}? This cannot be undone.`))) return;
      try {
        await api("POST", "/key/delete", { body: { keys: [row.token] } });
        toast("Key deleted", "success");
        tbl.reload();
      } catch (e) {
        toast(e.message, "error");
      }
    }

    const columns = [
      {
        key: "key_alias",
        title: "Alias",
        render: (r) => h("button", { type: "button", class: "btn link", onclick: () => details(r), title: "Details" }, r.key_alias || "(no alias)"),
      },
      { key: "key_name", title: "Key", render: (r) => h("code", null, r.key_name || (r.token || "").slice(0, 10) + "…") },
      { key: "user_id", title: "User", render: (r) => r.user_id || "–" },
      { key: "team_id", title: "Team", render: (r) => (r.team_id ? teamNames.get(r.team_id) || r.team_id : "–") },
      { key: "models", title: "Models", render: (r) => chips(r.models, "All") },
      { key: "spend", title: "Spend / budget", render: (r) => budgetCell(r.spend, r.max_budget) },
      { key: "expires", title: "Expires", render: (r) => (r.expires ? fmtDate(r.expires) : "Never") },
      { key: "status", title: "Status", render: status },
    ];
    if (ctx.canWrite)
      columns.push({
        key: "actions",
        title: "Actions",
        render: (r) =>
          rowActions(
            button("Edit", () => edit(r), "", { "aria-label": `Edit ${r.key_alias || r.key_name}` }),
            button("Regenerate", () => regenerate(r), "", { "aria-label": `Regenerate ${r.key_alias || r.key_name}` }),
            ctx.isAdmin ? button(r.blocked ? "Unblock" : "Block", () => block(r), "", { "aria-label": `${r.blocked ? "Unblock" : "Block"} ${r.key_alias || r.key_name}` }) : null,
            button("Delete", () => remove(r), "danger", { "aria-label": `Delete ${r.key_alias || r.key_name}` }),
          ),
      });

    const tbl = table({
      caption: "Virtual keys",
      columns,
      pageSize: 25,
      fetchPage: async (page, size) => {
        await lookup(); // team names for the Team column
        const r = await api("GET", "/key/list", { query: { page, size, return_full_object: "true", ...filters } });
        return { rows: (r.keys || []).filter((k) => k && typeof k === "object"), total: r.total_count || 0 };
      },
    });

    const search = h("input", { id: "key-search", type: "search", placeholder: "Exact alias, sk-… key or its hash" });
    const user = h("input", { id: "key-user", type: "search", placeholder: "User ID" });
    const team = h("input", { id: "key-team", type: "search", placeholder: "Team ID" });
    const form = h(
      "form",
      {
        class: "toolbar",
        role: "search",
        onsubmit: async (ev) => {
          ev.preventDefault();
          Object.assign(filters, await keyFilter(search.value.trim()));
          filters.user_id = ctx.isAdminView ? user.value.trim() : "";
          filters.team_id = team.value.trim();
          tbl.goto(1);
        },
      },
      h("div", { class: "field" }, h("label", { for: "key-search" }, "Search keys"), search),
      ctx.isAdminView ? h("div", { class: "field" }, h("label", { for: "key-user" }, "User"), user) : null,
      h("div", { class: "field" }, h("label", { for: "key-team" }, "Team"), team),
      h("button", { type: "submit", class: "btn" }, "Search"),
    );

    root.append(pageHeader("Virtual Keys", ctx.canWrite ? h("button", { type: "button", class: "btn primary", onclick: create }, "Create key") : null), form, tbl);
  },
};
