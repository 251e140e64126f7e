// chart.js: the Usage page's charts, SVG written by hand (no library).
//
// lineChart() draws one or more series over labelled x positions (days) as
// lines with a light area under the first; barChart() draws horizontal bars
// for a breakdown.  Each returns a <figure> holding the SVG (role="img" with
// a text summary as its accessible name) and, for screen readers and
// keyboard users, the same numbers as a <table> inside a <details>.
// Colours pass WCAG AA against white.
import { h } from "./lib.js";

const NS = "http://www.w3.org/2000/svg";
export const COLORS = ["#1d4ed8", "#b42318", "#166534", "#8a4b00", "#6b21a8", "#0e7490"];

function s(tag, attrs, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  for (const c of children) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

// A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten.
function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function dataTable(caption, head, rows) {
  return h(
    "details",
    { class: "chart-table" },
    h("summary", null, "Show as a table"),
    h(
      "div",
      { class: "table-scroll" },
      h(
        "table",
        null,
        h("caption", { class: "sr-only" }, caption),
        h("thead", null, h("tr", null, head.map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", null, rows.map((r) => h("tr", null, r.map((c, i) => (i === 0 ? h("th", { scope: "row" }, c) : h("td", null, c)))))),
      ),
    ),
  );
}

// series: [{name, values: [number per label]}]; labels: x labels (dates);
// format: number -> text (table, point titles); axisFormat: for the y axis
// (default format).
export function lineChart({ title, labels, series, format = String, axisFormat = format }) {
  const W = 640, H = 240, L = 64, R = 12, T = 12, B = 28;
  const max = niceMax(Math.max(0, ...series.flatMap((x) => x.values)));
  const n = labels.length;
  const x = (i) => L + (n <= 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (n - 1));
  const y = (v) => T + (H - T - B) * (1 - v / max);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, width: "100%", role: "img", "aria-label": summary(), preserveAspectRatio: "xMidYMid meet", style: "max-width:100%;height:auto;display:block" });
  for (let k = 0; k <= 4; k++) {
    const v = (max * k) / 4;
    svg.append(s("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "#e5e8ec" }));
    svg.append(s("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", "font-size": 11, fill: "#535a64" }, axisFormat(v)));
  }
  const step = Math.max(1, Math.ceil(n / 8));
  labels.forEach((lb, i) => {
    if ((n - 1 - i) % step === 0) /* counted from the last day, so it is always labelled and never crowded */
      svg.append(s("text", { x: x(i), y: H - 8, "text-anchor": "middle", "font-size": 11, fill: "#535a64" }, String(lb).slice(5)));
  });
  series.forEach((sr, k) => {
    const color = COLORS[k % COLORS.length];
    const pts = sr.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`);
    if (k === 0 && n > 1)
      svg.append(s("polygon", { points: `${x(0)},${y(0)} ${pts.join(" ")} ${x(n - 1)},${y(0)}`, fill: color, "fill-opacity": 0.12 }));
    if (n > 1) svg.append(s("polyline", { points: pts.join(" "), fill: "none", stroke: color, "stroke-width": 2 }));
    sr.values.forEach((v, i) => svg.append(s("circle", { cx: x(i), cy: y(v), r: n > 60 ? 1.5 : 3, fill: color }, s("title", null, `${labels[i]} ${sr.name}: ${format(v)}`))));
  });
  const legend = series.length > 1 ? h("ul", { class: "chart-legend", style: "list-style:none;display:flex;gap:1rem;padding:0;margin:.25rem 0;flex-wrap:wrap" }, series.map((sr, k) => h("li", null, h("span", { "aria-hidden": "true", style: `display:inline-block;width:.8em;height:.8em;margin-right:.35em;background:${COLORS[k % COLORS.length]}` }), sr.name))) : null;
  function summary() {
    return `${title}: ` + series.map((sr) => `${sr.name} total ${format(sr.values.reduce((a, b) => a + b, 0))}`).join(", ") + ` over ${n} day${n === 1 ? "" : "s"}`;
  }
  return h(
    "figure",
    { class: "chart", style: "margin:0" },
    h("figcaption", { style: "font-weight:600;margin-bottom:.25rem" }, title),
    svg,
    legend,
    dataTable(title, ["Date", ...series.map((sr) => sr.name)], labels.map((lb, i) => [lb, ...series.map((sr) => format(sr.values[i]))])),
  );
}

// items: [{label, value}] (drawn largest first, at most `limit`).
export function barChart({ title, items, format = String, limit = 10 }) {
  const top = [...items].sort((a, b) => b.value - a.value).slice(0, limit);
  const W = 640, row = 26, L = 180, R = 90;
  const H = Math.max(1, top.length) * row + 8;
  const max = niceMax(Math.max(0, ...top.map((i) => i.value)));
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, width: "100%", role: "img", "aria-label": `${title}: ` + (top.length ? top.map((i) => `${i.label} ${format(i.value)}`).join(", ") : "no data"), style: "max-width:100%;height:auto;display:block" });
  top.forEach((it, k) => {
    const yy = 4 + k * row;
    const wdt = ((W - L - R) * it.value) / max;
    const label = it.label.length > 26 ? it.label.slice(0, 25) + "…" : it.label;
    svg.append(s("text", { x: L - 8, y: yy + 16, "text-anchor": "end", "font-size": 12, fill: "#1b1f24" }, label, s("title", null, it.label)));
    svg.append(s("rect", { x: L, y: yy + 4, width: Math.max(wdt, it.value > 0 ? 1 : 0), height: row - 10, fill: COLORS[0], rx: 2 }));
    svg.append(s("text", { x: L + wdt + 6, y: yy + 16, "font-size": 12, fill: "#535a64" }, format(it.value)));
  });
  if (!top.length) svg.append(s("text", { x: W / 2, y: 20, "text-anchor": "middle", "font-size": 12, fill: "#535a64" }, "No data"));
  return h(
    "figure",
    { class: "chart", style: "margin:0" },
    h("figcaption", { style: "font-weight:600;margin-bottom:.25rem" }, title),
    svg,
    dataTable(title, ["Name", "Value"], top.map((i) => [i.label, format(i.value)])),
  );
}
