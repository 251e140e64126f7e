// The Customers page (being written).
import { h } from "../lib.js";

export default {
  id: "customers",
  title: "Customers",
  render(root) {
    root.append(h("h1", { id: "page-title" }, "Customers"), h("p", { class: "state empty" }, "Coming soon."));
  },
};
