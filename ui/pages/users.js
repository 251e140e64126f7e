// Internal Users: GET /user/list (server-side paging: page, page_size,
// user_ids (a substring of the id), user_email, role), create with
// /user/new (its key, when one is made, shown once), edit with
// /user/update (role, budget, password for the UI login), delete with
// /user/delete.
import { api, h, table, modal, detailsList, loading, errorBox, formDialog, confirmDialog, toast, pageHeader, budgetCell, rowActions, button, modelNames, act, fmtDate, secretDialog } from "../lib.js";

const ROLES = [
  { value: "internal_user", label: "Internal user" },
  { value: "internal_user_viewer", label: "Internal viewer" },
  { value: "proxy_admin", label: "Admin" },
  { value: "proxy_admin_viewer", label: "Admin viewer" },
];

function userSpec(models, row = null) {
  const r = row || {};
  const spec = [];
  if (!row) spec.push({ name: "user_id", label: "User ID", help: "Empty: generated" });
  spec.push(
    { name: "user_email", label: "Email", type: "email", value: r.user_email },
    { name: "user_alias", label: "Display name", value: r.user_alias },
    { name: "user_role", label: "Role", type: "select", options: ROLES, value: r.user_role || "internal_user" },
    { name: "max_budget", label: "Max budget (USD)", type: "number", min: 0, value: r.max_budget },
    { name: "budget_duration", label: "Budget reset period", placeholder: "30d", value: r.budget_duration },
    { name: "models", label: "Models (none selected: all models)", type: "select", multiple: true, options: [...new Set([...models, ...(r.models || [])])], value: r.models || [] },
    { name: "password", label: row ? "New password" : "Password", type: "password", help: row ? "Empty: unchanged" : "For logging in to this UI" },
  );
  if (!row) spec.push({ name: "auto_create_key", label: "Create a key for the user", type: "checkbox", value: false });
  return spec;
}

export default {
  id: "users",
  title: "Internal Users",
  roles: ["proxy_admin", "proxy_admin_viewer"],
  render(root, ctx) {
    const filters = { user_ids: "", user_email: "", role: "" };
    let models = null;
    const getModels = () => (models ||= modelNames());

    async function create() {
      formDialog(
        "Invite user",
        userSpec(await getModels()),
        async (v) => {
          const r = await api("POST", "/user/new", { body: v });
          tbl.goto(1);
          if (r && r.key) secretDialog(`Key for ${r.user_id}`, r.key, "Copy this key now: it will not be shown again.");
          else toast(`User ${r.user_id} created`, "success");
        },
        "Create user",
      );
    }

    async function edit(u) {
      formDialog(`Edit ${u.user_email || u.user_id}`, userSpec(await getModels(), u), async (v) => {
        const body = { user_id: u.user_id, ...v };
        for (const f of ["max_budget", "budget_duration"]) if (!(f in v) && u[f] !== null && u[f] !== undefined) body[f] = null;
        await api("POST", "/user/update", { body });
        toast("User updated", "success");
        tbl.reload();
      });
    }

    function details(u) {
      const body = h("div", null, loading());
      modal(`User ${u.user_email || u.user_id}`, body, []);
      api("GET", "/user/info", { query: { user_id: u.user_id } })
        .then((r) => body.replaceChildren(detailsList(r.user_info || {}, ["password"]), h("h3", null, "Teams"), detailsList(Object.fromEntries((r.teams || []).map((t) => [t.team_alias || t.team_id, t.team_id]))), h("p", null, `${(r.keys || []).length} key(s)`)))
        .catch((e) => body.replaceChildren(errorBox(e)));
    }

    async function remove(u) {
      if (!(await confirmDialog("Delete user", `Delete ${u.user_email || u.user_id}? Their keys are deleted too.`))) return;
      act(() => api("POST", "/user/delete", { body: { user_ids: [u.user_id] } }), "User deleted", tbl);
    }

    const columns = [
      { key: "user_id", title: "User ID", render: (u) => h("button", { type: "button", class: "btn link mono", onclick: () => details(u), title: "Details" }, u.user_id) },
      { key: "user_email", title: "Email", render: (u) => u.user_email || "–" },
      { key: "user_role", title: "Role", render: (u) => h("span", { class: "badge" }, (ROLES.find((r) => r.value === u.user_role) || {}).label || u.user_role || "Internal user") },
      { key: "spend", title: "Spend / budget", render: (u) => budgetCell(u.spend, u.max_budget) },
      { key: "key_count", title: "Keys", render: (u) => String(u.key_count ?? "–") },
      { key: "teams", title: "Teams", render: (u) => ((u.teams || []).length ? h("span", { title: u.teams.join(", ") }, String(u.teams.length)) : "–") },
      { key: "created_at", title: "Created", render: (u) => h("span", { class: "nowrap" }, fmtDate(u.created_at)) },
    ];
    if (ctx.isAdmin)
      columns.push({
        key: "actions",
        title: "Actions",
        render: (u) =>
          rowActions(
            button("Edit", () => edit(u), "", { "aria-label": `Edit ${u.user_email || u.user_id}` }),
            button("Delete", () => remove(u), "danger", { "aria-label": `Delete ${u.user_email || u.user_id}` }),
          ),
      });

    const tbl = table({
      caption: "Internal users",
      columns,
      pageSize: 25,
      fetchPage: async (page, size) => {
        const r = await api("GET", "/user/list", { query: { page, page_size: size, ...filters } });
        return { rows: r.users || [], total: r.total || 0 };
      },
    });

    const id = h("input", { id: "user-search", type: "search", placeholder: "Part of a user ID" });
    const email = h("input", { id: "user-email", type: "search", placeholder: "Part of an email" });
    const role = h("select", { id: "user-role" }, h("option", { value: "" }, "Any role"), ROLES.map((r) => h("option", { value: r.value }, r.label)));
    const form = h(
      "form",
      {
        class: "toolbar",
        role: "search",
        onsubmit: (ev) => {
          ev.preventDefault();
          filters.user_ids = id.value.trim().replace(/,/g, "");
          filters.user_email = email.value.trim();
          filters.role = role.value;
          tbl.goto(1);
        },
      },
      h("div", { class: "field" }, h("label", { for: "user-search" }, "User ID"), id),
      h("div", { class: "field" }, h("label", { for: "user-email" }, "Email"), email),
      h("div", { class: "field" }, h("label", { for: "user-role" }, "Role"), role),
      h("button", { type: "submit", class: "btn" }, "Search"),
    );
    root.append(pageHeader("Internal Users", ctx.isAdmin ? h("button", { type: "button", class: "btn primary", onclick: create }, "Create user") : null), form, tbl);
  },
};
