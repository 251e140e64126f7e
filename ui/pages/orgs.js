// Organizations: GET /organization/list (the whole list, paged here),
// create with /organization/new, edit with PATCH /organization/update,
// delete with DELETE /organization/delete, members through
// /organization/member_add and DELETE /organization/member_delete.
import { api, h, table, formDialog, modal, confirmDialog, toast, pageHeader, budgetCell, chips, rowActions, button, listPager, modelNames, searchForm, act, formFields } from "../lib.js";

function orgSpec(models, row = {}, isNew = true) {
  const spec = [
    { name: "organization_alias", label: "Organization name", required: true, value: row.organization_alias },
    { name: "models", label: "Models (none selected: all models)", type: "select", multiple: true, options: [...new Set([...models, ...(row.models || [])])], value: row.models || [] },
  ];
  if (isNew)
    spec.push(
      { name: "max_budget", label: "Max budget (USD)", type: "number", min: 0 },
      { name: "budget_duration", label: "Budget reset period", placeholder: "30d" },
      { name: "tpm_limit", label: "TPM limit", type: "number", min: 0, step: 1 },
      { name: "rpm_limit", label: "RPM limit", type: "number", min: 0, step: 1 },
    );
  spec.push({ name: "metadata", label: "Metadata (JSON)", type: "json", value: row.metadata && Object.keys(row.metadata).length ? row.metadata : "" });
  return spec;
}

function membersView(org, canWrite, onChange) {
  const list = h("ul", { class: "member-list" });
  const members = (org.members || []).slice();
  function draw() {
    list.replaceChildren(
      ...(members.length
        ? members.map((m) =>
            h(
              "li",
              null,
              h("span", null, `${m.user_id}`, " ", h("span", { class: "badge" }, m.user_role || "member")),
              canWrite
                ? button(
                    "Remove",
                    () =>
                      act(async () => {
                        await api("DELETE", "/organization/member_delete", { body: { organization_id: org.organization_id, user_id: m.user_id } });
                        members.splice(members.indexOf(m), 1);
                        draw();
                        onChange();
                      }, "Member removed"),
                    "danger",
                    { "aria-label": `Remove ${m.user_id}` },
                  )
                : null,
            ),
          )
        : [h("li", { class: "state empty" }, "No members yet.")]),
    );
  }
  draw();
  if (!canWrite) return list;
  const f = formFields([
    { name: "user_id", label: "User ID" },
    { name: "user_email", label: "User email", type: "email" },
    { name: "role", label: "Role", type: "select", options: ["internal_user", "internal_user_viewer", "org_admin"], value: "internal_user" },
  ]);
  const err = h("div", { class: "form-error", role: "alert" });
  const form = h(
    "form",
    {
      class: "panel",
      onsubmit: async (ev) => {
        ev.preventDefault();
        err.textContent = "";
        try {
          const v = f.values();
          if (!v.user_id && !v.user_email) throw new Error("Give a user ID or an email");
          const r = await api("POST", "/organization/member_add", { body: { organization_id: org.organization_id, member: [v] } });
          for (const m of r.updated_organization_memberships || []) members.push(m);
          toast("Member added", "success");
          draw();
          onChange();
        } catch (e) {
          err.textContent = e.message;
        }
      },
    },
    h("h3", null, "Add member"),
    f.el,
    err,
    h("button", { type: "submit", class: "btn primary" }, "Add member"),
  );
  return h("div", null, list, form);
}

export default {
  id: "orgs",
  title: "Organizations",
  roles: ["proxy_admin", "proxy_admin_viewer", "org_admin"],
  render(root, ctx) {
    let filter = "";
    let models = null;
    const getModels = () => (models ||= modelNames());

    async function create() {
      formDialog(
        "Create organization",
        orgSpec(await getModels()),
        async (v) => {
          await api("POST", "/organization/new", { body: v });
          toast("Organization created", "success");
          tbl.goto(1);
        },
        "Create organization",
      );
    }

    async function edit(o) {
      formDialog(`Edit ${o.organization_alias}`, orgSpec(await getModels(), o, false), async (v) => {
        await api("PATCH", "/organization/update", { body: { organization_id: o.organization_id, metadata: {}, ...v } });
        toast("Organization updated", "success");
        tbl.reload();
      });
    }

    async function remove(o) {
      if (!(await confirmDialog("Delete organization", `Delete ${o.organization_alias}? Its teams and keys are deleted too.`))) return;
      act(() => api("DELETE", "/organization/delete", { body: { organization_ids: [o.organization_id] } }), "Organization deleted", tbl);
    }

    const columns = [
      { key: "organization_alias", title: "Organization", render: (o) => h("strong", null, o.organization_alias || "–") },
      { key: "organization_id", title: "ID", render: (o) => h("code", null, o.organization_id) },
      { key: "models", title: "Models", render: (o) => chips(o.models, "All") },
      { key: "spend", title: "Spend / budget", render: (o) => budgetCell(o.spend, (o.litellm_budget_table || {}).max_budget) },
      { key: "teams", title: "Teams", render: (o) => String((o.teams || []).length) },
      { key: "members", title: "Members", render: (o) => String((o.members || []).length) },
      {
        key: "actions",
        title: "Actions",
        render: (o) =>
          rowActions(
            button("Members", () => modal(`Members of ${o.organization_alias}`, membersView(o, ctx.isAdmin, () => tbl.reload()), []), "", { "aria-label": `Members of ${o.organization_alias}` }),
            ctx.isAdmin ? button("Edit", () => edit(o), "", { "aria-label": `Edit ${o.organization_alias}` }) : null,
            ctx.isAdmin ? button("Delete", () => remove(o), "danger", { "aria-label": `Delete ${o.organization_alias}` }) : null,
          ),
      },
    ];
    const tbl = table({
      caption: "Organizations",
      columns,
      fetchPage: listPager(
        async () => {
          const r = await api("GET", "/organization/list");
          return Array.isArray(r) ? r : [];
        },
        (o) => !filter || String(o.organization_alias || "").toLowerCase().includes(filter) || String(o.organization_id).toLowerCase().includes(filter),
      ),
    });
    const form = searchForm("org-search", "Filter organizations", "Name or ID", (q) => {
      filter = q.toLowerCase();
      tbl.goto(1);
    });
    root.append(pageHeader("Organizations", ctx.isAdmin ? h("button", { type: "button", class: "btn primary", onclick: create }, "Create organization") : null), form, tbl);
  },
};
