// The Models page (being written).
import { h } from "../lib.js";

export default {
  id: "models",
  title: "Models",
  render(root) {
    root.append(h("h1", { id: "page-title" }, "Models"), h("p", { class: "state empty" }, "Coming soon."));
  },
};
