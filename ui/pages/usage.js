// Placeholder for the Usage page (replaced by its owner).
import { h } from "../lib.js";

export default {
  id: "usage",
  title: "Usage",
  render(root) {
    root.append(h("h1", { id: "page-title" }, "Usage"), h("p", { class: "state empty" }, "This page is not available yet."));
  },
};
