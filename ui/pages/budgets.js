// Budgets: GET /budget/list (the whole list, paged here), create with
// /budget/new, edit with /budget/update, delete with /budget/delete.  A
// budget is shared by the keys, customers, team members and
// organizations that name its budget_id.
import { api, h, table, formDialog, confirmDialog, toast, pageHeader, fmtMoney, fmtDate, rowActions, button, listPager, searchForm, act } from "../lib.js";

function budgetSpec(row = null) {
  const r = row || {};
  const spec = [];
  if (!row) spec.push({ name: "budget_id", label: "Budget ID", help: "Empty: generated" });
  spec.push(
    { name: "max_budget", label: "Max budget (USD)", type: "number", min: 0, value: r.max_budget },
    { name: "soft_budget", label: "Soft budget (USD)", type: "number", min: 0, value: r.soft_budget },
    { name: "budget_duration", label: "Reset period", placeholder: "30d", value: r.budget_duration },
    { name: "tpm_limit", label: "TPM limit", type: "number", min: 0, step: 1, value: r.tpm_limit },
    { name: "rpm_limit", label: "RPM limit", type: "number", min: 0, step: 1, value: r.rpm_limit },
    { name: "max_parallel_requests", label: "Max parallel requests", type: "number", min: 0, step: 1, value: r.max_parallel_requests },
  );
  return spec;
}

export default {
  id: "budgets",
  title: "Budgets",
  roles: ["proxy_admin", "proxy_admin_viewer"],
  render(root, ctx) {
    let filter = "";
    function create() {
      formDialog(
        "Create budget",
        budgetSpec(),
        async (v) => {
          await api("POST", "/budget/new", { body: v });
          toast("Budget created", "success");
          tbl.goto(1);
        },
        "Create budget",
      );
    }
    function edit(b) {
      formDialog(`Edit ${b.budget_id}`, budgetSpec(b), async (v) => {
        const body = { budget_id: b.budget_id, ...v };
        for (const f of ["max_budget", "soft_budget", "budget_duration", "tpm_limit", "rpm_limit", "max_parallel_requests"]) if (!(f in v) && b[f] !== null && b[f] !== undefined) body[f] = null;
        await api("POST", "/budget/update", { body });
        toast("Budget updated", "success");
        tbl.reload();
      });
    }
    async function remove(b) {
      if (!(await confirmDialog("Delete budget", `Delete ${b.budget_id}?`))) return;
      act(() => api("POST", "/budget/delete", { body: { id: b.budget_id } }), "Budget deleted", tbl);
    }
    const columns = [
      { key: "budget_id", title: "Budget ID", render: (b) => h("code", null, b.budget_id) },
      { key: "max_budget", title: "Max budget", render: (b) => fmtMoney(b.max_budget) },
      { key: "soft_budget", title: "Soft budget", render: (b) => fmtMoney(b.soft_budget) },
      { key: "budget_duration", title: "Reset period", render: (b) => b.budget_duration || "–" },
      { key: "limits", title: "TPM / RPM", render: (b) => `${b.tpm_limit ?? "–"} / ${b.rpm_limit ?? "–"}` },
      { key: "max_parallel_requests", title: "Parallel", render: (b) => String(b.max_parallel_requests ?? "–") },
      { key: "budget_reset_at", title: "Next reset", render: (b) => fmtDate(b.budget_reset_at) },
    ];
    if (ctx.isAdmin)
      columns.push({
        key: "actions",
        title: "Actions",
        render: (b) =>
          rowActions(
            button("Edit", () => edit(b), "", { "aria-label": `Edit ${b.budget_id}` }),
            button("Delete", () => remove(b), "danger", { "aria-label": `Delete ${b.budget_id}` }),
          ),
      });
    const tbl = table({
      caption: "Budgets",
      columns,
      fetchPage: listPager(
        async () => {
          const r = await api("GET", "/budget/list");
          return Array.isArray(r) ? r : [];
        },
        (b) => !filter || String(b.budget_id).toLowerCase().includes(filter),
      ),
    });
    const form = searchForm("budget-search", "Filter budgets", "Budget ID", (q) => {
      filter = q.toLowerCase();
      tbl.goto(1);
    });
    root.append(pageHeader("Budgets", ctx.isAdmin ? h("button", { type: "button", class: "btn primary", onclick: create }, "Create budget") : null), form, tbl);
  },
};
