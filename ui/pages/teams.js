// Teams: GET /team/list (LiteLLM answers the whole list; the server
// scopes it to the caller's teams for internal users), create with
// /team/new, edit with /team/update, delete with /team/delete, members
// through /team/info, /team/member_add and /team/member_delete.
import { api, h, table, formDialog, modal, confirmDialog, toast, pageHeader, budgetCell, chips, rowActions, button, listPager, modelNames, formFields, act } from "../lib.js";

function teamSpec(models, row = {}) {
  return [
    { name: "team_alias", label: "Team name", required: true, value: row.team_alias },
    { name: "organization_id", label: "Organization ID", value: row.organization_id },
    { name: "models", label: "Models (none selected: all models)", type: "select", multiple: true, options: [...new Set([...models, ...(row.models || [])])], value: row.models || [] },
    { name: "max_budget", label: "Max budget (USD)", type: "number", min: 0, value: row.max_budget },
    { name: "budget_duration", label: "Budget reset period", placeholder: "30d", value: row.budget_duration },
    { name: "tpm_limit", label: "TPM limit", type: "number", min: 0, step: 1, value: row.tpm_limit },
    { name: "rpm_limit", label: "RPM limit", type: "number", min: 0, step: 1, value: row.rpm_limit },
    { name: "metadata", label: "Metadata (JSON)", type: "json", value: row.metadata && Object.keys(row.metadata).length ? row.metadata : "" },
  ];
}

function membersView(team, canWrite, onChange) {
  const body = h("div");
  async function draw() {
    body.replaceChildren(h("p", { class: "state loading", role: "status" }, "Loading…"));
    let info;
    try {
      info = await api("GET", "/team/info", { query: { team_id: team.team_id } });
    } catch (e) {
      body.replaceChildren(h("div", { class: "state error", role: "alert" }, e.message));
      return;
    }
    const members = (info.team_info && info.team_info.members_with_roles) || [];
    const rows = members.map((m) =>
      h(
        "tr",
        null,
        h("td", { "data-label": "User" }, m.user_id || "–"),
        h("td", { "data-label": "Email" }, m.user_email || "–"),
        h("td", { "data-label": "Role" }, m.role || "user"),
        canWrite
          ? h(
              "td",
              { "data-label": "Actions" },
              button(
                "Remove",
                async () => {
                  try {
                    await api("POST", "/team/member_delete", { body: { team_id: team.team_id, ...(m.user_id ? { user_id: m.user_id } : { user_email: m.user_email }) } });
                    toast("Member removed", "success");
                    onChange();
                    draw();
                  } catch (e) {
                    toast(e.message, "error");
                  }
                },
                "danger",
                { "aria-label": `Remove ${m.user_id || m.user_email}` },
              ),
            )
          : null,
      ),
    );
    const tableEl = h(
      "div",
      { class: "table-scroll", "data-table": "Team members" },
      h(
        "table",
        null,
        h("caption", { class: "sr-only" }, "Team members"),
        h("thead", null, h("tr", null, ["User", "Email", "Role", canWrite ? "Actions" : null].filter(Boolean).map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", null, rows),
      ),
    );
    const parts = [members.length ? tableEl : h("p", { class: "state empty" }, "No members yet.")];
    if (canWrite) {
      const f = formFields([
        { name: "user_id", label: "User ID" },
        { name: "user_email", label: "User email", type: "email" },
        { name: "role", label: "Role", type: "select", options: ["user", "admin"], value: "user" },
      ]);
      const err = h("div", { class: "form-error", role: "alert" });
      parts.push(
        h(
          "form",
          {
            class: "panel",
            onsubmit: async (ev) => {
              ev.preventDefault();
              err.textContent = "";
              try {
                const v = f.values();
                if (!v.user_id && !v.user_email) throw new Error("Give a user ID or an email");
                await api("POST", "/team/member_add", { body: { team_id: team.team_id, member: v } });
                toast("Member added", "success");
                onChange();
                draw();
              } catch (e) {
                err.textContent = e.message;
              }
            },
          },
          h("h3", null, "Add member"),
          f.el,
          err,
          h("button", { type: "submit", class: "btn primary" }, "Add member"),
        ),
      );
    }
    body.replaceChildren(...parts);
  }
  draw();
  return body;
}

export default {
  id: "teams",
  title: "Teams",
  render(root, ctx) {
    let filter = "";
    let models = null;
    const getModels = () => (models ||= modelNames());

    async function create() {
      formDialog(
        "Create team",
        teamSpec(await getModels()),
        async (v) => {
          await api("POST", "/team/new", { body: v });
          toast("Team created", "success");
          tbl.goto(1);
        },
        "Create team",
      );
    }

    async function edit(t) {
      formDialog(`Edit ${t.team_alias || t.team_id}`, teamSpec(await getModels(), t), async (v) => {
        const body = { team_id: t.team_id, ...v };
        for (const f of ["organization_id", "max_budget", "budget_duration", "tpm_limit", "rpm_limit"]) if (!(f in v) && t[f] !== null && t[f] !== undefined) body[f] = null;
        await api("POST", "/team/update", { body });
        toast("Team updated", "success");
        tbl.reload();
      });
    }

    async function remove(t) {
      if (!(await confirmDialog("Delete team", `Delete ${t.team_alias || t.team_id}? Its keys are deleted too.`))) return;
      try {
        await api("POST", "/team/delete", { body: { team_ids: [t.team_id] } });
        toast("Team deleted", "success");
        tbl.goto(1);
      } catch (e) {
        toast(e.message, "error");
      }
    }

    const members = (t) => modal(`Members of ${t.team_alias || t.team_id}`, membersView(t, ctx.canWrite, () => tbl.reload()), []);

    const columns = [
      { key: "team_alias", title: "Team", render: (t) => h("strong", null, t.team_alias || "–") },
      { key: "team_id", title: "Team ID", render: (t) => h("code", null, t.team_id) },
      { key: "organization_id", title: "Organization", render: (t) => t.organization_id || "–" },
      { key: "members", title: "Members", render: (t) => String((t.members_with_roles || []).length) },
      { key: "models", title: "Models", render: (t) => chips(t.models, "All") },
      { key: "spend", title: "Spend / budget", render: (t) => budgetCell(t.spend, t.max_budget) },
      { key: "limits", title: "TPM / RPM", render: (t) => `${t.tpm_limit ?? "–"} / ${t.rpm_limit ?? "–"}` },
      { key: "blocked", title: "Status", render: (t) => (t.blocked ? h("span", { class: "badge bad" }, "Blocked") : h("span", { class: "badge ok" }, "Active")) },
      {
        key: "actions",
        title: "Actions",
        render: (t) =>
          rowActions(
            button("Members", () => members(t), "", { "aria-label": `Members of ${t.team_alias || t.team_id}` }),
            ctx.isAdmin ? button("Edit", () => edit(t), "", { "aria-label": `Edit ${t.team_alias || t.team_id}` }) : null,
            ctx.isAdmin
              ? button(t.blocked ? "Unblock" : "Block", () => act(() => api("POST", t.blocked ? "/team/unblock" : "/team/block", { body: { team_id: t.team_id } }), t.blocked ? "Team unblocked" : "Team blocked", tbl), "", {
                  "aria-label": `${t.blocked ? "Unblock" : "Block"} ${t.team_alias || t.team_id}`,
                })
              : null,
            ctx.isAdmin ? button("Delete", () => remove(t), "danger", { "aria-label": `Delete ${t.team_alias || t.team_id}` }) : null,
          ),
      },
    ];

    const tbl = table({
      caption: "Teams",
      columns,
      pageSize: 25,
      fetchPage: listPager(
        async () => {
          const r = await api("GET", "/team/list");
          return Array.isArray(r) ? r : [];
        },
        (t) => !filter || String(t.team_alias || "").toLowerCase().includes(filter) || String(t.team_id).toLowerCase().includes(filter),
      ),
    });

    const search = h("input", { id: "team-search", type: "search", placeholder: "Team name or ID" });
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
      h("div", { class: "field" }, h("label", { for: "team-search" }, "Filter teams"), search),
      h("button", { type: "submit", class: "btn" }, "Filter"),
    );
    root.append(pageHeader("Teams", ctx.isAdmin ? h("button", { type: "button", class: "btn primary", onclick: create }, "Create team") : null), form, tbl);
  },
};
