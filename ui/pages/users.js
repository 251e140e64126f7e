// The Internal Users page (being written).
import { h } from "../lib.js";

export default {
  id: "users",
  title: "Internal Users",
  render(root) {
    root.append(h("h1", { id: "page-title" }, "Internal Users"), h("p", { class: "state empty" }, "Coming soon."));
  },
};
