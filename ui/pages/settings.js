// The Settings page: what this proxy runs with, read-only and grouped
// (router settings, callbacks and logging, guardrails, cache, general
// settings), from GET /switchyard/settings.  The server leaves every secret
// out (keys, passwords, URLs with credentials); proxy admins and viewers
// may read it.
import { api, h, clear, loading, errorBox } from "../lib.js";

const LABELS = {
  routing_strategy: "Routing strategy",
  num_retries: "Retries",
  timeout: "Timeout (s)",
  stream_timeout: "Stream timeout (s)",
  retry_after: "Retry after (s)",
  allowed_fails: "Allowed fails before cooldown",
  cooldown_time: "Cooldown (s)",
  disable_cooldowns: "Cooldowns disabled",
  max_fallbacks: "Max fallbacks",
  fallbacks: "Fallbacks",
  context_window_fallbacks: "Context-window fallbacks",
  content_policy_fallbacks: "Content-policy fallbacks",
  default_fallbacks: "Default fallbacks",
};

function show(v) {
  if (v === null || v === undefined) return h("span", { class: "help" }, "not set");
  if (typeof v === "boolean") return h("span", { class: ["badge", v ? "ok" : ""] }, v ? "on" : "off");
  if (Array.isArray(v)) {
    if (!v.length) return h("span", { class: "help" }, "none");
    if (v.every((x) => typeof x === "string")) return h("span", { class: "chips" }, v.map((x) => h("span", { class: "badge info" }, x)));
    return h("code", null, v.map((x) => JSON.stringify(x)).join(", "));
  }
  if (typeof v === "object") return Object.keys(v).length ? h("code", null, JSON.stringify(v)) : h("span", { class: "help" }, "none");
  return String(v);
}

function group(id, title, obj) {
  const rows = Object.entries(obj || {});
  return h(
    "section",
    { class: "panel", "aria-labelledby": id, "data-section": id },
    h("h2", { id }, title),
    rows.length ? h("dl", { class: "kv" }, rows.flatMap(([k, v]) => [h("dt", null, LABELS[k] || k), h("dd", null, show(v))])) : h("p", { class: "help" }, "Nothing configured."),
  );
}

function guardrails(list) {
  return h(
    "section",
    { class: "panel", "aria-labelledby": "set-guardrails", "data-section": "set-guardrails" },
    h("h2", { id: "set-guardrails" }, "Guardrails"),
    list && list.length
      ? h(
          "div",
          { class: "table-scroll", "data-table": "Guardrails" },
          h(
            "table",
            null,
            h("caption", { class: "sr-only" }, "Guardrails"),
            h("thead", null, h("tr", null, ["Name", "Kind", "Mode", "On by default"].map((t) => h("th", { scope: "col" }, t)))),
            h(
              "tbody",
              null,
              list.map((g) =>
                h(
                  "tr",
                  null,
                  h("td", { "data-label": "Name" }, g.guardrail_name || "–"),
                  h("td", { "data-label": "Kind" }, g.guardrail || "–"),
                  h("td", { "data-label": "Mode" }, show(g.mode)),
                  h("td", { "data-label": "On by default" }, show(!!g.default_on)),
                ),
              ),
            ),
          ),
        )
      : h("p", { class: "help" }, "No guardrails configured."),
  );
}

export default {
  id: "settings",
  title: "Settings",
  roles: ["proxy_admin", "proxy_admin_viewer"],
  async render(root) {
    const body = h("div", { "aria-live": "polite" }, loading("Loading settings…"));
    root.append(
      h("div", { class: "page-head" }, h("h1", { id: "page-title" }, "Settings")),
      h("p", { class: "help" }, "The settings this proxy runs with (read-only; change them in config.yaml and reload). Secrets are never shown."),
      body,
    );
    const load = async () => {
      clear(body).append(loading("Loading settings…"));
      try {
        const s = await api("GET", "/switchyard/settings");
        const ls = { ...s.litellm_settings };
        clear(body).append(
          group("set-router", "Router settings", s.router_settings),
          group("set-callbacks", "Callbacks and logging", ls),
          guardrails(s.guardrails),
          s.cache ? group("set-cache", "Cache", s.cache) : group("set-cache", "Cache", { enabled: false }),
          group("set-general", "General settings", { ...s.general_settings, models_in_config: s.models }),
        );
      } catch (e) {
        clear(body).append(errorBox(e, load));
      }
    };
    await load();
  },
};
