// The Virtual Keys page (being written).
import { h } from "../lib.js";

export default {
  id: "keys",
  title: "Virtual Keys",
  render(root) {
    root.append(h("h1", { id: "page-title" }, "Virtual Keys"), h("p", { class: "state empty" }, "Coming soon."));
  },
};
