// freshd status page: polls the daemon's JSON (/status with its controls,
// /history, /overview, /hosts) and draws plain SVG plots and tables. No libraries,
// no inline script (the page's Content-Security-Policy forbids it).
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const state = { sort: "pages", offset: 0, limit: 50, total: 0 };

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function svgEl(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

async function getJson(path) {
  const r = await fetch(path, { cache: "no-store" });
  if (!r.ok) throw new Error(path + ": HTTP " + r.status);
  return r.json();
}

function fmt(x, digits) {
  if (x === null || x === undefined) return "–";
  if (typeof x !== "number") return String(x);
  return Math.abs(x) >= 1000 ? Math.round(x).toLocaleString("en")
                             : x.toFixed(digits === undefined ? 2 : digits);
}

function clock(unix) {
  if (!unix) return "–";
  return new Date(unix * 1000).toISOString().substring(11, 19);
}

// Draws series (arrays of [t, y]) into an SVG with axes and a time scale.
function plot(svg, series, yMax) {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const W = 600, H = 200, L = 44, R = 28, T = 10, B = 24;
  let t0 = Infinity, t1 = -Infinity, top = yMax || 0;
  for (const s of series) {
    for (const [t, y] of s.points) {
      t0 = Math.min(t0, t); t1 = Math.max(t1, t);
      if (!yMax) top = Math.max(top, y);
    }
  }
  if (!isFinite(t0)) { t0 = Date.now() / 1000 - 60; t1 = t0 + 60; }
  if (t1 - t0 < 60) t0 = t1 - 60;
  if (!(top > 0)) top = 1;
  top *= yMax ? 1 : 1.15;
  const x = (t) => L + (W - L - R) * (t - t0) / (t1 - t0);
  const y = (v) => H - B - (H - B - T) * v / top;
  for (let i = 0; i <= 4; ++i) {
    const v = top * i / 4;
    svg.appendChild(svgEl("line", { class: "grid", x1: L, x2: W - R,
                                    y1: y(v), y2: y(v) }));
    svg.appendChild(svgEl("text", { x: L - 4, y: y(v) + 4,
                                    "text-anchor": "end" }, fmt(v, 2)));
  }
  for (let i = 0; i <= 4; ++i) {
    const t = t0 + (t1 - t0) * i / 4;
    svg.appendChild(svgEl("text", { x: x(t), y: H - 6,
                                    "text-anchor": i === 4 ? "end" : "middle" },
                          clock(t)));
  }
  svg.appendChild(svgEl("line", { class: "axis", x1: L, x2: L, y1: T,
                                  y2: H - B }));
  svg.appendChild(svgEl("line", { class: "axis", x1: L, x2: W - R,
                                  y1: H - B, y2: H - B }));
  for (const s of series) {
    const pts = s.points.map(([t, v]) => x(t).toFixed(1) + "," +
                                         y(v).toFixed(1)).join(" ");
    svg.appendChild(svgEl("polyline", { class: "series " + s.cls,
                                        points: pts }));
  }
  svg.setAttribute("data-points", String(series[0].points.length));
}

function fillRows(table, rows) {
  const body = table.tBodies[0];
  while (body.firstChild) body.removeChild(body.firstChild);
  for (const cells of rows) {
    const tr = el("tr");
    for (const c of cells) {
      const td = el("td", c.cls ? { class: c.cls } : {}, c.text);
      if (c.title) td.title = c.title;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
}

function card(label, value) {
  const d = el("div", { class: "card" });
  d.appendChild(el("b", {}, value));
  d.appendChild(document.createTextNode(label));
  return d;
}

async function refreshStatus() {
  const s = await getJson("/status");
  document.getElementById("summary").textContent =
      "v" + s.version + " · policy " + s.policy + " · up " +
      fmt(s.uptime_s / 60, 1) + " min · limited by " + s.limited_by;
  const cards = document.getElementById("cards");
  while (cards.firstChild) cards.removeChild(cards.firstChild);
  cards.appendChild(card("pages known", fmt(s.pages_known, 0)));
  cards.appendChild(card("fetched", fmt(s.pages_fetched_total, 0)));
  cards.appendChild(card("rate / target", fmt(s.rate_actual) + " / " +
                                           fmt(s.rate_target)));
  cards.appendChild(card("est. freshness", fmt(s.estimated_freshness, 3)));
  cards.appendChild(card("hosts", fmt(s.hosts, 0)));
  cards.appendChild(card("due / new", fmt(s.queue.due, 0) + " / " +
                                      fmt(s.queue.new, 0)));
  cards.appendChild(card("in flight", fmt(s.in_flight.total, 0)));
  refreshControls(s.controls);
}

// The operators' controls (/status "controls": counts and a bounded list;
// GET /control has them all).
function refreshControls(c) {
  if (!c) return;
  document.getElementById("controls-count").textContent =
      c.count === 0 ? "(none)" : "(" + c.count + ", " + c.held_pages +
      " pages held by patterns, " + c.turned_away_total +
      " new URLs turned away" + (c.list_truncated ? "; first " +
      c.list.length + " shown" : "") + ")";
  fillRows(document.getElementById("controls"), c.list.map((r) => [
    { text: r.kind }, { text: r.target, cls: "url", title: r.target },
    { text: r.action, cls: r.action === "block" ? "bad" : "" },
    { text: r.since }]));
}

async function refreshHistory() {
  const h = await getJson("/history");
  const p = h.points;
  plot(document.getElementById("plot-rate"), [
    { cls: "target", points: p.map((r) => [r[0], r[1]]) },
    { cls: "actual", points: p.map((r) => [r[0], r[2]]) },
  ]);
  plot(document.getElementById("plot-freshness"),
       [{ cls: "fresh", points: p.map((r) => [r[0], r[3]]) }], 1);
}

async function refreshOverview() {
  const o = await getJson("/overview");
  const errors = Object.entries(o.errors).filter(([, v]) => v > 0);
  fillRows(document.getElementById("errors"), errors.length === 0
      ? [[{ text: "none yet" }, { text: "0", cls: "num" }]]
      : errors.map(([k, v]) => [{ text: k }, { text: fmt(v, 0),
                                               cls: "num bad" }]));
  fillRows(document.getElementById("due"), o.due_next.map((d) => [
    { text: d.url, cls: "url", title: d.url },
    // A never-fetched page's value is the new-page value, not a measure.
    { text: d.new ? "new" : fmt(d.value, 4), cls: "num" },
    { text: fmt(d.fetches, 0), cls: "num" },
    { text: clock(d.last_fetch_unix) }]));
  fillRows(document.getElementById("recent"), o.recent_fetches.map((f) => [
    { text: clock(f.unix_time) }, { text: f.url, cls: "url", title: f.url },
    { text: f.outcome, cls: f.outcome === "ok" ||
                            f.outcome === "not-modified" ? "" : "bad" },
    { text: String(f.status), cls: "num" }, { text: fmt(f.elapsed_ms, 0),
                                              cls: "num" },
    { text: fmt(f.bytes, 0), cls: "num" }]));
}

async function refreshHosts() {
  const h = await getJson("/hosts?sort=" + state.sort + "&offset=" +
                          state.offset + "&limit=" + state.limit);
  state.total = h.total;
  document.getElementById("hosts-range").textContent =
      h.total === 0 ? "(none)" : (h.offset + 1) + "–" +
      (h.offset + h.hosts.length) + " of " + h.total + " by " + h.sort;
  fillRows(document.getElementById("hosts"), h.hosts.map((r) => [
    { text: r.host }, { text: fmt(r.pages, 0), cls: "num" },
    { text: fmt(r.fetches, 0), cls: "num" },
    { text: fmt(r.errors, 0), cls: r.errors > 0 ? "num bad" : "num" },
    { text: fmt(r.bytes, 0), cls: "num" }, { text: r.error_classes.join(" ") },
    { text: String(r.in_flight), cls: "num" },
    { text: r.backoff ? "yes" : "", cls: "bad" },
    { text: r.next_allowed_unix ? clock(r.next_allowed_unix) : "now" }]));
}

async function refresh() {
  const jobs = [refreshStatus(), refreshHistory(), refreshOverview(),
                refreshHosts()];
  const results = await Promise.allSettled(jobs);
  const failed = results.filter((r) => r.status === "rejected");
  if (failed.length) {
    document.getElementById("summary").textContent =
        "cannot reach the daemon: " + failed[0].reason;
  }
  document.body.setAttribute("data-rendered", failed.length ? "error" : "1");
}

document.addEventListener("DOMContentLoaded", () => {
  for (const th of document.querySelectorAll("#hosts th[data-sort]")) {
    th.addEventListener("click", () => {
      state.sort = th.getAttribute("data-sort");
      state.offset = 0;
      refreshHosts();
    });
  }
  document.getElementById("hosts-prev").addEventListener("click", () => {
    state.offset = Math.max(0, state.offset - state.limit);
    refreshHosts();
  });
  document.getElementById("hosts-next").addEventListener("click", () => {
    if (state.offset + state.limit < state.total) state.offset += state.limit;
    refreshHosts();
  });
  refresh();
  setInterval(refresh, 5000);
});
