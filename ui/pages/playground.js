// Placeholder for the Playground page (replaced by its owner).
import { h } from "../lib.js";

export default {
  id: "playground",
  title: "Playground",
  render(root) {
    root.append(h("h1", { id: "page-title" }, "Playground"), h("p", { class: "state empty" }, "This page is not available yet."));
  },
};
