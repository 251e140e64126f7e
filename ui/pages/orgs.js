// The Organizations page (being written).
import { h } from "../lib.js";

export default {
  id: "orgs",
  title: "Organizations",
  render(root) {
    root.append(h("h1", { id: "page-title" }, "Organizations"), h("p", { class: "state empty" }, "Coming soon."));
  },
};
