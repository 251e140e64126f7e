// The Budgets page (being written).
import { h } from "../lib.js";

export default {
  id: "budgets",
  title: "Budgets",
  render(root) {
    root.append(h("h1", { id: "page-title" }, "Budgets"), h("p", { class: "state empty" }, "Coming soon."));
  },
};
