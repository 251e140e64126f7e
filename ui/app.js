// app.js: the shell of the admin UI.
//
// Boot: ask GET /ui/session; a 401 shows the login form at /ui/login,
// which POSTs /login (JSON) and comes back here.  Logged in, the shell
// draws the header (user, role, logout), the navigation (pages/index.js
// in LiteLLM's order, filtered by the session's role) and routes by
// location.pathname under /ui/ with history.pushState: /ui/<page id>.
// Each page renders into a fresh root carrying data-page="<id>"; ctx
// gives it the session, role predicates and navigate().
import { api, session, clearSession, h, clear, errorBox, ApiError } from "./lib.js";
import pages from "./pages/index.js";

const BASE = "/ui";
const ADMIN = "proxy_admin";
const VIEWER = "proxy_admin_viewer";
const READ_ONLY = new Set([VIEWER, "internal_user_viewer"]);

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const user = document.getElementById("user");
const navToggle = document.getElementById("nav-toggle");

function pathId() {
  let p = location.pathname;
  if (!p.startsWith(BASE)) return "";
  p = p.slice(BASE.length).replace(/^\/+|\/+$/g, "");
  return p.split("/")[0];
}

export function navigate(path, { replace = false } = {}) {
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  route();
}

function visible(page, s) {
  return !page.roles || page.roles.includes(s.user_role) || (s.is_admin && page.roles.includes(ADMIN));
}

function makeCtx(s) {
  const role = s.user_role || "";
  const isAdmin = !!s.is_admin || role === ADMIN;
  return {
    session: s,
    role,
    isAdmin,
    isAdminView: isAdmin || role === VIEWER,
    canWrite: !READ_ONLY.has(role),
    navigate,
    params: new URLSearchParams(location.search),
  };
}

function drawChrome(s, current) {
  clear(user).append(
    h("span", { class: "who" }, h("span", { class: "user-id" }, s.user_id || "admin"), h("span", { class: "role badge" }, s.user_role || "")),
    h("button", { type: "button", class: "btn small", onclick: logout }, "Log out"),
  );
  const links = pages
    .filter((p) => visible(p, s))
    .map((p) =>
      h(
        "li",
        null,
        h(
          "a",
          {
            href: `${BASE}/${p.id}`,
            "aria-current": p.id === current ? "page" : undefined,
            onclick: (ev) => {
              if (ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
              ev.preventDefault();
              closeNav();
              navigate(`${BASE}/${p.id}`);
            },
          },
          p.icon ? h("span", { class: "nav-icon", "aria-hidden": "true" }, p.icon) : null,
          p.title,
        ),
      ),
    );
  clear(nav).append(h("ul", null, links));
  nav.hidden = false;
  navToggle.hidden = false;
}

function closeNav() {
  document.body.classList.remove("nav-open");
  navToggle.setAttribute("aria-expanded", "false");
}

navToggle.addEventListener("click", () => {
  const open = document.body.classList.toggle("nav-open");
  navToggle.setAttribute("aria-expanded", String(open));
});

async function logout() {
  try {
    await api("POST", "/logout");
  } catch {
    /* the session may already be gone: log out locally anyway */
  }
  clearSession();
  navigate(`${BASE}/login`, { replace: true });
}

function drawLogin() {
  nav.hidden = true;
  navToggle.hidden = true;
  clear(user);
  document.title = "Log in · Switchyard Admin";
  const err = h("div", { class: "form-error", role: "alert" });
  const username = h("input", { id: "login-user", name: "username", autocomplete: "username", required: true });
  const password = h("input", { id: "login-pass", name: "password", type: "password", autocomplete: "current-password", required: true });
  const submit = h("button", { type: "submit", class: "btn primary" }, "Log in");
  const form = h(
    "form",
    {
      class: "login-form",
      method: "post",
      action: "/login",
      onsubmit: async (ev) => {
        ev.preventDefault();
        err.textContent = "";
        submit.disabled = true;
        try {
          await api("POST", "/login", { body: { username: username.value.trim(), password: password.value } });
          await session({ refresh: true });
          const next = new URLSearchParams(location.search).get("next");
          navigate(next && next.startsWith(BASE + "/") && !next.startsWith("//") ? next : `${BASE}/keys`, { replace: true });
        } catch (e) {
          err.textContent = e instanceof ApiError && e.status === 401 ? e.message || "Invalid username or password" : e.message;
          password.focus();
        } finally {
          submit.disabled = false;
        }
      },
    },
    h("h1", null, "Log in"),
    h("div", { class: "field" }, h("label", { for: "login-user" }, "Username"), username),
    h("div", { class: "field" }, h("label", { for: "login-pass" }, "Password"), password),
    err,
    submit,
    h("p", { class: "help" }, "Use the admin username with the UI password or master key, or your user id or email with your password."),
  );
  const root = h("section", { class: "login", "data-page": "login" }, form);
  clear(main).append(root);
  username.focus();
}

let renderSeq = 0;

async function route() {
  const my = ++renderSeq;
  const id = pathId();
  let s;
  try {
    s = await session();
  } catch (e) {
    if (my === renderSeq) clear(main).append(errorBox(e, route));
    return;
  }
  if (my !== renderSeq) return;
  if (!s) {
    if (id !== "login") {
      const next = location.pathname.startsWith(BASE + "/") && id ? location.pathname : "";
      history.replaceState(null, "", `${BASE}/login` + (next ? "?next=" + encodeURIComponent(next) : ""));
    }
    drawLogin();
    return;
  }
  const allowed = pages.filter((p) => visible(p, s));
  let page = allowed.find((p) => p.id === id);
  if (!page) {
    page = allowed[0];
    if (!page) return;
    history.replaceState(null, "", `${BASE}/${page.id}`);
  }
  drawChrome(s, page.id);
  document.title = `${page.title} · Switchyard Admin`;
  const root = h("section", { class: "page", "data-page": page.id, "aria-labelledby": "page-title" });
  clear(main).append(root);
  try {
    await page.render(root, makeCtx(s));
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      clearSession();
      navigate(`${BASE}/login`, { replace: true });
      return;
    }
    root.append(errorBox(e, route));
  }
  if (my === renderSeq && document.activeElement === document.body) main.focus({ preventScroll: true });
}

window.addEventListener("popstate", route);
window.addEventListener("sy:unauthorized", () => {
  document.querySelectorAll("dialog").forEach((d) => d.remove());
  if (pathId() !== "login") navigate(`${BASE}/login?next=${encodeURIComponent(location.pathname)}`, { replace: true });
});
route();
