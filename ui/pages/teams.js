// The Teams page (being written).
import { h } from "../lib.js";

export default {
  id: "teams",
  title: "Teams",
  render(root) {
    root.append(h("h1", { id: "page-title" }, "Teams"), h("p", { class: "state empty" }, "Coming soon."));
  },
};
