// Placeholder for the Logs page (replaced by its owner).
import { h } from "../lib.js";

export default {
  id: "logs",
  title: "Logs",
  render(root) {
    root.append(h("h1", { id: "page-title" }, "Logs"), h("p", { class: "state empty" }, "This page is not available yet."));
  },
};
