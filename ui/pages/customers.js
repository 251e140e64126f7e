// Customers (LiteLLM's end users): GET /customer/list (the whole list,
// paged here), create with /customer/new, edit with /customer/update,
// block/unblock with /customer/block|unblock, delete with
// /customer/delete.  Budget fields live in the linked budget row.
import { api, h, table, formDialog, confirmDialog, toast, pageHeader, budgetCell, rowActions, button, listPager, searchForm, act } from "../lib.js";

function customerSpec(row = null) {
  const r = row || {};
  const b = r.litellm_budget_table || {};
  const spec = [];
  if (!row) spec.push({ name: "user_id", label: "Customer ID", required: true, help: "The `user` field your clients send" });
  spec.push(
    { name: "alias", label: "Alias", value: r.alias },
    { name: "max_budget", label: "Max budget (USD)", type: "number", min: 0, value: b.max_budget },
    { name: "budget_duration", label: "Budget reset period", placeholder: "30d", value: b.budget_duration },
    { name: "tpm_limit", label: "TPM limit", type: "number", min: 0, step: 1, value: b.tpm_limit },
    { name: "rpm_limit", label: "RPM limit", type: "number", min: 0, step: 1, value: b.rpm_limit },
    { name: "default_model", label: "Default model", value: r.default_model },
    { name: "allowed_model_region", label: "Allowed region", type: "select", options: [{ value: "", label: "Any" }, "eu", "us"], value: r.allowed_model_region || "" },
  );
  return spec;
}

export default {
  id: "customers",
  title: "Customers",
  roles: ["proxy_admin", "proxy_admin_viewer"],
  render(root, ctx) {
    let filter = "";
    function create() {
      formDialog(
        "Create customer",
        customerSpec(),
        async (v) => {
          await api("POST", "/customer/new", { body: v });
          toast("Customer created", "success");
          tbl.goto(1);
        },
        "Create customer",
      );
    }
    function edit(c) {
      formDialog(`Edit ${c.alias || c.user_id}`, customerSpec(c), async (v) => {
        await api("POST", "/customer/update", { body: { user_id: c.user_id, ...v } });
        toast("Customer updated", "success");
        tbl.reload();
      });
    }
    async function remove(c) {
      if (!(await confirmDialog("Delete customer", `Delete ${c.alias || c.user_id}?`))) return;
      act(() => api("POST", "/customer/delete", { body: { user_ids: [c.user_id] } }), "Customer deleted", tbl);
    }
    const block = (c) => act(() => api("POST", c.blocked ? "/customer/unblock" : "/customer/block", { body: { user_ids: [c.user_id] } }), c.blocked ? "Customer unblocked" : "Customer blocked", tbl);

    const columns = [
      { key: "user_id", title: "Customer ID", render: (c) => h("code", null, c.user_id) },
      { key: "alias", title: "Alias", render: (c) => c.alias || "–" },
      { key: "spend", title: "Spend / budget", render: (c) => budgetCell(c.spend, (c.litellm_budget_table || {}).max_budget) },
      { key: "default_model", title: "Default model", render: (c) => c.default_model || "–" },
      { key: "allowed_model_region", title: "Region", render: (c) => c.allowed_model_region || "Any" },
      { key: "blocked", title: "Status", render: (c) => (c.blocked ? h("span", { class: "badge bad" }, "Blocked") : h("span", { class: "badge ok" }, "Active")) },
    ];
    if (ctx.isAdmin)
      columns.push({
        key: "actions",
        title: "Actions",
        render: (c) =>
          rowActions(
            button("Edit", () => edit(c), "", { "aria-label": `Edit ${c.alias || c.user_id}` }),
            button(c.blocked ? "Unblock" : "Block", () => block(c), "", { "aria-label": `${c.blocked ? "Unblock" : "Block"} ${c.alias || c.user_id}` }),
            button("Delete", () => remove(c), "danger", { "aria-label": `Delete ${c.alias || c.user_id}` }),
          ),
      });
    const tbl = table({
      caption: "Customers",
      columns,
      fetchPage: listPager(
        async () => {
          const r = await api("GET", "/customer/list");
          return Array.isArray(r) ? r : [];
        },
        (c) => !filter || String(c.user_id).toLowerCase().includes(filter) || String(c.alias || "").toLowerCase().includes(filter),
      ),
    });
    const form = searchForm("customer-search", "Filter customers", "ID or alias", (q) => {
      filter = q.toLowerCase();
      tbl.goto(1);
    });
    root.append(pageHeader("Customers", ctx.isAdmin ? h("button", { type: "button", class: "btn primary", onclick: create }, "Create customer") : null), form, tbl);
  },
};
