// lib.js: the few helpers every page of the admin UI uses.
//
// No framework and no build step: pages build their DOM with h(), talk to
// the gateway's JSON API through api() (the session cookie travels with
// credentials: "same-origin"; state-changing calls carry the session's
// CSRF token), and compose table(), modal() and formFields() for the
// common list / create / edit flows.  Errors from the server surface as
// ApiError with LiteLLM's message so pages can show it verbatim.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

let sessionCache = null;

// The cached GET /ui/session answer; null when not logged in.  Pass
// {refresh: true} to ask the server again (after login or logout).
export async function session({ refresh = false } = {}) {
  if (sessionCache && !refresh) return sessionCache;
  try {
    sessionCache = await api("GET", "/ui/session");
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) sessionCache = null;
    else throw e;
  }
  return sessionCache;
}

export function clearSession() {
  sessionCache = null;
}

// The message of a LiteLLM error body: {"error":{"message"}} or
// {"detail": "..."} / {"detail": {"error": "..."}} / pydantic's list.
function errorMessage(body, status) {
  if (body && typeof body === "object") {
    const e = body.error;
    if (e && typeof e === "object" && e.message) return String(e.message);
    if (typeof e === "string") return e;
    const d = body.detail;
    if (typeof d === "string") return d;
    if (d && typeof d === "object" && !Array.isArray(d)) {
      if (d.error) return String(d.error);
      if (d.message) return String(d.message);
    }
    if (Array.isArray(d) && d.length && d[0].msg) return String(d[0].msg);
    if (body.message) return String(body.message);
  }
  if (typeof body === "string" && body) return body.slice(0, 300);
  return `HTTP ${status}`;
}

// JSON in and out.  query: object of parameters (null/undefined/"" are
// left out; arrays repeat the name).  Throws ApiError on a non-2xx.
export async function api(method, path, { body, query } = {}) {
  let url = path;
  if (query) {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (v === undefined || v === null || v === "") continue;
      if (Array.isArray(v)) v.forEach((x) => qs.append(k, String(x)));
      else qs.append(k, String(v));
    }
    const s = qs.toString();
    if (s) url += (url.includes("?") ? "&" : "?") + s;
  }
  const headers = { accept: "application/json" };
  if (method !== "GET" && method !== "HEAD" && sessionCache && sessionCache.csrf_token)
    headers["x-csrf-token"] = sessionCache.csrf_token;
  const init = { method, credentials: "same-origin", headers };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(url, init);
  } catch (e) {
    throw new ApiError(0, "Network error: " + (e && e.message ? e.message : "unreachable"));
  }
  const text = await res.text();
  let data = text;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      /* not JSON: keep the text */
    }
  } else {
    data = null;
  }
  if (res.status === 401 && sessionCache && path !== "/ui/session" && path !== "/login") {
    // the session ended (expired, revoked, logged out elsewhere): the shell
    // shows the login form
    sessionCache = null;
    window.dispatchEvent(new CustomEvent("sy:unauthorized"));
  }
  if (!res.ok) throw new ApiError(res.status, errorMessage(data, res.status));
  return data;
}

function appendChild(el, c) {
  if (c === null || c === undefined || c === false) return;
  if (Array.isArray(c)) {
    c.forEach((x) => appendChild(el, x));
    return;
  }
  el.append(c instanceof Node ? c : document.createTextNode(String(c)));
}

// DOM builder.  attrs: on<event> functions become listeners, class/for
// map to className/htmlFor, booleans toggle the attribute, everything
// else (aria-*, data-*, role, ...) is set as an attribute.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") {
        el.addEventListener(k.slice(2).toLowerCase(), v);
      } else if (k === "class") {
        el.className = Array.isArray(v) ? v.filter(Boolean).join(" ") : v;
      } else if (k === "value" && "value" in el) {
        continue; // after the children: a <select>'s options must exist first
      } else if (k === "checked" || k === "selected" || k === "disabled") {
        el[k] = !!v;
        if (v) el.setAttribute(k, "");
      } else if (v === true) {
        el.setAttribute(k, "");
      } else {
        el.setAttribute(k, String(v));
      }
    }
  }
  appendChild(el, children);
  if (attrs && attrs.value !== undefined && attrs.value !== null && "value" in el) el.value = attrs.value;
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// A loading / error placeholder every data view uses.
export function loading(text = "Loading…") {
  return h("p", { class: "state loading", role: "status", "aria-live": "polite" }, h("span", { class: "spinner", "aria-hidden": "true" }), text);
}

export function errorBox(err, retry) {
  const msg = err && err.message ? err.message : String(err);
  return h(
    "div",
    { class: "state error", role: "alert" },
    h("span", null, msg),
    retry ? h("button", { type: "button", class: "btn small", onclick: retry }, "Retry") : null,
  );
}

// A paged table.  fetchPage(page, size) (page counts from 1) returns
// {rows, total}.  The element exposes reload() and goto(page).
export function table({ columns, fetchPage, pageSize = 25, onRow, caption, empty = "Nothing here yet." }) {
  let page = 1;
  let total = 0;
  let seq = 0;
  const body = h("div", { class: "table-body" });
  const status = h("span", { class: "pager-status", "aria-live": "polite" });
  const prev = h("button", { type: "button", class: "btn small", onclick: () => goto(page - 1) }, "Previous");
  const next = h("button", { type: "button", class: "btn small", onclick: () => goto(page + 1) }, "Next");
  const pager = h("nav", { class: "pager", "aria-label": (caption || "Table") + " pages" }, prev, status, next);
  const root = h("div", { class: "table-wrap", "data-table": caption || "" }, body, pager);

  function render(rows) {
    const thead = h("thead", null, h("tr", null, columns.map((c) => h("th", { scope: "col" }, c.title))));
    const tbody = h(
      "tbody",
      null,
      rows.map((row) => {
        const tr = h(
          "tr",
          null,
          columns.map((c) => {
            const v = c.render ? c.render(row) : row[c.key];
            return h("td", { "data-label": c.title }, v === undefined || v === null ? "" : v);
          }),
        );
        if (onRow) {
          tr.classList.add("clickable");
          tr.tabIndex = 0;
          tr.addEventListener("click", (ev) => {
            if (ev.target.closest("button, a, input, select, label")) return;
            onRow(row);
          });
          tr.addEventListener("keydown", (ev) => {
            if (ev.target === tr && (ev.key === "Enter" || ev.key === " ")) {
              ev.preventDefault();
              onRow(row);
            }
          });
        }
        return tr;
      }),
    );
    const t = h("table", null, caption ? h("caption", { class: "sr-only" }, caption) : null, thead, tbody);
    clear(body).append(h("div", { class: "table-scroll" }, t));
    if (!rows.length) body.append(h("p", { class: "state empty" }, empty));
  }

  async function goto(p) {
    const pages = Math.max(1, Math.ceil(total / pageSize));
    if (p < 1 || (total && p > pages)) return;
    const my = ++seq;
    root.setAttribute("aria-busy", "true");
    clear(body).append(loading());
    prev.disabled = next.disabled = true;
    try {
      const r = await fetchPage(p, pageSize);
      if (my !== seq) return;
      page = p;
      total = Number(r.total) || 0;
      render(r.rows || []);
      const n = Math.max(1, Math.ceil(total / pageSize));
      status.textContent = `Page ${page} of ${n} · ${total} total`;
      prev.disabled = page <= 1;
      next.disabled = page >= n;
    } catch (e) {
      if (my !== seq) return;
      clear(body).append(errorBox(e, () => goto(p)));
      status.textContent = "";
    } finally {
      if (my === seq) root.removeAttribute("aria-busy");
    }
  }

  root.reload = () => goto(page);
  root.goto = goto;
  goto(1);
  return root;
}

// A modal dialog on <dialog>.  actions: [{label, kind?, onClick}] where
// onClick may be async and returns false to keep the dialog open.  A
// "Cancel" button closes it.  Returns {el, close}.
export function modal(title, content, actions = []) {
  const titleId = "dlg-" + Math.random().toString(36).slice(2);
  const err = h("div", { class: "dialog-error", role: "alert" });
  const close = () => {
    dlg.close();
    dlg.remove();
  };
  const buttons = actions.map((a) =>
    h(
      "button",
      {
        type: "button",
        class: ["btn", a.kind || ""],
        onclick: async (ev) => {
          const btn = ev.currentTarget;
          btn.disabled = true;
          err.textContent = "";
          try {
            const keep = a.onClick ? await a.onClick() : undefined;
            if (keep !== false) close();
          } catch (e) {
            err.textContent = e && e.message ? e.message : String(e);
          } finally {
            btn.disabled = false;
          }
        },
      },
      a.label,
    ),
  );
  const dlg = h(
    "dialog",
    { class: "dialog", "aria-labelledby": titleId },
    h("h2", { id: titleId }, title),
    h("div", { class: "dialog-content" }, content),
    err,
    h("div", { class: "dialog-actions" }, buttons, h("button", { type: "button", class: "btn", onclick: close }, actions.length ? "Cancel" : "Close")),
  );
  dlg.addEventListener("cancel", (ev) => {
    ev.preventDefault();
    close();
  });
  document.body.append(dlg);
  dlg.showModal();
  return { el: dlg, close };
}

// Ask for a yes/no; resolves true when confirmed.
export function confirmDialog(title, message, label = "Delete") {
  return new Promise((resolve) => {
    let done = false;
    const m = modal(title, h("p", null, message), [
      {
        label,
        kind: "danger",
        onClick: () => {
          done = true;
          resolve(true);
        },
      },
    ]);
    m.el.addEventListener("close", () => {
      if (!done) resolve(false);
    });
  });
}

let fieldSeq = 0;

// A form from a spec: [{name, label, type?, value?, options?, required?,
// help?, placeholder?, multiple?}].  type: text (default), number,
// password, email, textarea, select, checkbox, json, date, datetime-local.
// values() returns the typed values (numbers as numbers, "" left out,
// json parsed: a bad JSON throws Error naming the field).
export function formFields(spec) {
  const inputs = {};
  const rows = spec.map((f) => {
    const id = "f" + ++fieldSeq + "-" + f.name;
    const type = f.type || "text";
    let input;
    if (type === "textarea" || type === "json") {
      const v = type === "json" && f.value !== undefined && typeof f.value !== "string" ? JSON.stringify(f.value, null, 2) : f.value;
      input = h("textarea", { id, name: f.name, rows: f.rows || 3, placeholder: f.placeholder, required: f.required, spellcheck: "false" });
      input.value = v === undefined || v === null ? "" : v;
    } else if (type === "select" && f.multiple) {
      // a multi-choice as a group of checkboxes: keyboard- and
      // screen-reader-friendly where <select multiple> is not
      const cur = new Set((f.value || []).map(String));
      const boxes = (f.options || []).map((o, i) => {
        const [val, lab] = typeof o === "object" ? [o.value, o.label] : [o, o];
        const cid = `${id}-${i}`;
        return h("span", { class: "choice" }, h("input", { id: cid, type: "checkbox", value: String(val), checked: cur.has(String(val)) }), h("label", { for: cid }, lab));
      });
      input = h("div", { class: "choices", role: "group" }, boxes.length ? boxes : h("span", { class: "help" }, "None available"));
      input.multi = true;
    } else if (type === "select") {
      const cur = Array.isArray(f.value) ? f.value.map(String) : [String(f.value ?? "")];
      input = h(
        "select",
        { id, name: f.name, multiple: f.multiple, required: f.required, size: f.multiple ? Math.min(6, Math.max(3, (f.options || []).length)) : undefined },
        (f.options || []).map((o) => {
          const [val, lab] = typeof o === "object" ? [o.value, o.label] : [o, o];
          return h("option", { value: String(val), selected: cur.includes(String(val)) }, lab);
        }),
      );
    } else if (type === "checkbox") {
      input = h("input", { id, name: f.name, type: "checkbox", checked: !!f.value });
    } else {
      input = h("input", {
        id,
        name: f.name,
        type,
        placeholder: f.placeholder,
        required: f.required,
        step: type === "number" ? f.step || "any" : undefined,
        min: f.min,
        autocomplete: f.autocomplete || (type === "password" ? "new-password" : "off"),
      });
      input.value = f.value === undefined || f.value === null ? "" : String(f.value);
    }
    inputs[f.name] = { f, input };
    const helpId = f.help ? id + "-help" : undefined;
    if (helpId) input.setAttribute("aria-describedby", helpId);
    if (input.multi) {
      input.setAttribute("aria-labelledby", id + "-legend");
      return h("fieldset", { class: "field choices-field" }, h("legend", { id: id + "-legend" }, f.label), input, f.help ? h("small", { id: helpId, class: "help" }, f.help) : null);
    }
    return h(
      "div",
      { class: ["field", type === "checkbox" ? "check" : ""] },
      h("label", { for: id }, f.label),
      input,
      f.help ? h("small", { id: helpId, class: "help" }, f.help) : null,
    );
  });
  const el = h("div", { class: "form-grid" }, rows);
  function values() {
    const out = {};
    for (const [name, { f, input }] of Object.entries(inputs)) {
      const type = f.type || "text";
      if (type === "checkbox") {
        out[name] = input.checked;
        continue;
      }
      if (type === "select" && f.multiple) {
        out[name] = [...input.querySelectorAll("input:checked")].map((o) => o.value);
        continue;
      }
      const raw = input.value.trim();
      if (raw === "") {
        if (f.required) throw new Error(`${f.label} is required`);
        continue;
      }
      if (type === "number") {
        const n = Number(raw);
        if (!Number.isFinite(n)) throw new Error(`${f.label} must be a number`);
        out[name] = n;
      } else if (type === "json") {
        try {
          out[name] = JSON.parse(raw);
        } catch {
          throw new Error(`${f.label} is not valid JSON`);
        }
      } else {
        out[name] = raw;
      }
    }
    return out;
  }
  return { el, values, inputs };
}

let toastRegion = null;

export function toast(message, kind = "info") {
  if (!toastRegion || !toastRegion.isConnected) {
    toastRegion = h("div", { class: "toasts", role: "status", "aria-live": "polite" });
    document.body.append(toastRegion);
  }
  const t = h("div", { class: ["toast", kind] }, message);
  toastRegion.append(t);
  setTimeout(() => t.remove(), kind === "error" ? 8000 : 4000);
}

export function fmtMoney(n) {
  if (n === null || n === undefined || n === "") return "–";
  const v = Number(n);
  if (!Number.isFinite(v)) return "–";
  const digits = v !== 0 && Math.abs(v) < 0.01 ? 6 : 2;
  return "$" + v.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: digits });
}

export function fmtDate(s) {
  if (!s) return "–";
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) return String(s);
  return d.toLocaleString("en-US", { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hour12: false });
}

// ---- helpers the management pages share -----------------------------------

// The heading row of a page: an h1 (labelling the page root) and buttons.
export function pageHeader(title, ...actions) {
  return h("div", { class: "page-head" }, h("h1", { id: "page-title" }, title), h("div", { class: "actions" }, actions));
}

// A fetchPage over a route that answers the whole list (LiteLLM's
// /team/list, /organization/list, /customer/list, /budget/list): the
// list is read on page 1 (a reload) and sliced, filtered by match(row).
export function listPager(load, match) {
  let cache = null;
  return async (page, size) => {
    if (page === 1 || !cache) cache = await load();
    const rows = match ? cache.filter(match) : cache;
    return { rows: rows.slice((page - 1) * size, page * size), total: rows.length };
  };
}

// spend against a budget: "$1.20 / $10.00" with a bar.
export function budgetCell(spend, max) {
  const s = Number(spend) || 0;
  if (max === null || max === undefined) return h("span", null, fmtMoney(s), h("span", { class: "help" }, " / no limit"));
  const m = Number(max);
  const pct = m > 0 ? Math.min(100, (s / m) * 100) : 100;
  const bar = h("span", { class: ["bar", s >= m ? "over" : ""], role: "presentation" }, h("span", { class: "w" + Math.round(pct / 5) * 5 }));
  return h("span", null, `${fmtMoney(s)} / ${fmtMoney(m)}`, bar);
}

export function chips(list, empty = "–") {
  if (!Array.isArray(list) || !list.length) return empty;
  return h("span", { class: "chips" }, list.map((x) => h("span", { class: "badge" }, String(x))));
}

// A modal holding a form; submit(values) may be async; an error (bad
// input or the server's) stays in the dialog.
export function formDialog(title, spec, submit, label = "Save") {
  const form = formFields(spec);
  return modal(title, form.el, [{ label, kind: "primary", onClick: () => submit(form.values()) }]);
}

// Show a secret once (a new key) with a copy button.
export function secretDialog(title, value, note) {
  const code = h("code", { tabindex: "0" }, value);
  const copy = h(
    "button",
    {
      type: "button",
      class: "btn small",
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(value);
          toast("Copied", "success");
        } catch {
          const r = document.createRange();
          r.selectNodeContents(code);
          const sel = getSelection();
          sel.removeAllRanges();
          sel.addRange(r);
          toast("Press Ctrl+C to copy", "info");
        }
      },
    },
    "Copy",
  );
  return modal(title, h("div", null, note ? h("p", null, note) : null, h("div", { class: "secret" }, code, copy)), []);
}

// The row buttons of a table cell.
export function rowActions(...buttons) {
  return h("div", { class: "actions" }, buttons.filter(Boolean));
}

export function button(label, onclick, kind = "", extra = {}) {
  return h("button", { type: "button", class: ["btn", "small", kind], onclick, ...extra }, label);
}

// The model group names a picker offers (GET /v1/models); [] on error.
export async function modelNames() {
  try {
    const r = await api("GET", "/v1/models");
    return [...new Set((r.data || []).map((m) => m.id))].sort();
  } catch {
    return [];
  }
}

// Numbers and strings for a form's initial value from a row.
export function pick(row, ...names) {
  const out = {};
  for (const n of names) if (row && row[n] !== undefined && row[n] !== null) out[n] = row[n];
  return out;
}

// A one-field filter form (role=search) calling onSearch(text).
export function searchForm(id, label, placeholder, onSearch, ...extra) {
  const input = h("input", { id, type: "search", placeholder });
  return h(
    "form",
    {
      class: "toolbar",
      role: "search",
      onsubmit: (ev) => {
        ev.preventDefault();
        onSearch(input.value.trim());
      },
    },
    h("div", { class: "field" }, h("label", { for: id }, label), input),
    extra,
    h("button", { type: "submit", class: "btn" }, "Search"),
  );
}

// Run an action from a row button: errors become a toast, success a
// toast and a table reload.
export async function act(fn, done, tbl) {
  try {
    await fn();
    if (done) toast(done, "success");
    if (tbl) tbl.reload();
  } catch (e) {
    toast(e.message, "error");
  }
}

// A read-only view of an object's fields (a row's details): scalars as
// text, objects and lists as formatted JSON.
export function detailsList(obj, skip = []) {
  return h(
    "dl",
    { class: "kv" },
    Object.entries(obj || {})
      .filter(([k]) => !skip.includes(k))
      .map(([k, v]) => [
        h("dt", null, k),
        h("dd", null, v !== null && typeof v === "object" ? h("pre", { class: "mono" }, JSON.stringify(v, null, 2)) : v === null || v === undefined || v === "" ? "–" : String(v)),
      ]),
  );
}
