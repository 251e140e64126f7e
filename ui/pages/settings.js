// Placeholder for the Settings page (replaced by its owner).
import { h } from "../lib.js";

export default {
  id: "settings",
  title: "Settings",
  render(root) {
    root.append(h("h1", { id: "page-title" }, "Settings"), h("p", { class: "state empty" }, "This page is not available yet."));
  },
};
