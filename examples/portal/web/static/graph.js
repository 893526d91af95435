// gitops portal: the graph and network views of the app page. Plain DOM
// and SVG built here (the Content-Security-Policy allows no inline script
// or style; every look is a class of graph.css). The tree comes from the
// app's API once, then from each "page" event app.js passes on as a
// "portal:page" DOM event; a click or Enter on a node asks app.js to open
// it ("portal:open").
"use strict";

(() => {
  const SVG = "http://www.w3.org/2000/svg";
  const NODE_W = 210, NODE_H = 46, COL = 260, ROW = 60, PAD = 12;
  const ICON = {Deployment: "deploy", StatefulSet: "sts", DaemonSet: "ds", ReplicaSet: "rs", Pod: "pod",
    Service: "svc", Ingress: "ing", ConfigMap: "cm", Secret: "sec", Job: "job", CronJob: "cj",
    Endpoints: "ep", EndpointSlice: "eps", PersistentVolumeClaim: "pvc", ServiceAccount: "sa",
    Application: "app", Namespace: "ns", Role: "role", RoleBinding: "rb"};
  const MARK = {Synced: "✔", Healthy: "✔", OutOfSync: "≠", Progressing: "↻", Degraded: "✖", Suspended: "‖",
    Missing: "∅", Unknown: "?"};

  const el = (name, attrs, ...kids) => {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    e.append(...kids);
    return e;
  };
  const cut = (s, n) => s.length > n ? s.slice(0, n - 1) + "…" : s;
  const lower = (s) => String(s || "unknown").toLowerCase();

  // layoutTree places a forest left to right: a node's column is its
  // depth; leaves take the next free row and a parent sits at the middle
  // of its children's rows.
  function layoutTree(root) {
    const nodes = [], edges = [];
    let next = 0;
    const walk = (n, depth, parent) => {
      const kids = n.children || [];
      const placed = {n, depth, row: 0};
      nodes.push(placed);
      if (parent) edges.push([parent, placed]);
      const rows = kids.map((c) => walk(c, depth + 1, placed).row);
      placed.row = rows.length ? (rows[0] + rows[rows.length - 1]) / 2 : next++;
      return placed;
    };
    walk(root, 0, null);
    return {nodes, edges, rows: Math.max(next, 1), cols: Math.max(...nodes.map((p) => p.depth)) + 1};
  }

  // nameWidth is the width of a node's name as the graph draws it (the
  // font of .gname in graph.css), measured on a canvas.
  const measure = document.createElement("canvas").getContext("2d");
  function nameWidth(s) {
    measure.font = "600 12px system-ui, sans-serif";
    return measure.measureText(s || "").width;
  }

  function drawNode(p, x, y, w) {
    const n = p.n;
    const label = [n.kind, n.name, n.health ? "health " + n.health : "", n.sync ? "sync " + n.sync : ""].filter(Boolean).join(", ");
    const g = el("g", {class: "gnode" + (n.app ? " gapp" : ""), transform: `translate(${x},${y})`, tabindex: 0,
      role: n.app ? "img" : "button", "aria-label": label, "data-key": n.key || "", "data-depth": p.depth});
    if (n.health) g.dataset.health = n.health;
    if (n.sync) g.dataset.sync = n.sync;
    g.append(el("title", {}, label));
    g.append(el("rect", {class: "gbox s-" + lower(n.health || n.sync), width: w, height: NODE_H, rx: 8}));
    g.append(el("circle", {class: "gicon", cx: 22, cy: NODE_H / 2, r: 16}));
    g.append(el("text", {class: "gicon-text", x: 22, y: NODE_H / 2 + 4, "text-anchor": "middle"}, ICON[n.kind] || cut(lower(n.kind), 4)));
    g.append(el("text", {class: "gkind", x: 46, y: 17}, cut(n.kind, 24)));
    g.append(el("text", {class: "gname", x: 46, y: 35}, n.name || ""));
    let bx = w - 8;
    for (const [cls, st] of [["ghealth", n.health], ["gsync", n.sync]]) {
      if (!st) continue;
      g.append(el("text", {class: cls + " s-" + lower(st), x: bx, y: 17, "text-anchor": "end"}, MARK[st] || "?"));
      bx -= 16;
    }
    return g;
  }

  // draw renders placed nodes and edges into box as one SVG.
  // Every node is as wide as the longest name needs (a Pod's whole name
  // shows), at least NODE_W.
  function draw(box, placed, edges, cols, rows, caption) {
    const nodeW = Math.ceil(Math.max(NODE_W, ...placed.map((p) => 46 + nameWidth(p.n.name) + 12)));
    const col = nodeW + (COL - NODE_W);
    const w = cols * col - (col - nodeW) + 2 * PAD, h = rows * ROW - (ROW - NODE_H) + 2 * PAD;
    const svg = el("svg", {class: "graph", width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: "group", "aria-label": caption});
    const at = (p) => [PAD + p.col * col, PAD + p.row * ROW];
    for (const [a, b] of edges) {
      const [ax, ay] = at(a), [bx, by] = at(b);
      const x1 = ax + nodeW, y1 = ay + NODE_H / 2, x2 = bx, y2 = by + NODE_H / 2, mid = (x1 + x2) / 2;
      svg.append(el("path", {class: "gedge", d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`,
        "data-from": a.n.key || "", "data-to": b.n.key || ""}));
    }
    for (const p of placed) {
      const [x, y] = at(p);
      svg.append(drawNode(p, x, y, nodeW));
    }
    // A redraw keeps the keyboard focus on the node that had it.
    const had = box.contains(document.activeElement) ? document.activeElement.getAttribute("data-key") : null;
    box.replaceChildren(svg);
    if (had !== null) {
      const again = Array.from(svg.querySelectorAll("g.gnode")).find((g) => g.getAttribute("data-key") === had);
      if (again) again.focus();
    }
  }

  // keys moves the focus between nodes: Up and Down within a column,
  // Left and Right between columns; Enter or Space opens the node.
  function keys(box) {
    box.addEventListener("keydown", (e) => {
      const g = e.target.closest && e.target.closest("g.gnode");
      if (!g) return;
      if ((e.key === "Enter" || e.key === " ") && g.dataset.key && !g.classList.contains("gapp")) {
        e.preventDefault();
        document.dispatchEvent(new CustomEvent("portal:open", {detail: g.dataset.key}));
        return;
      }
      const all = Array.from(box.querySelectorAll("g.gnode"));
      const pos = (n) => n.transform.baseVal.consolidate().matrix;
      const me = pos(g);
      const pick = (ok, dist) => all.filter((n) => n !== g && ok(pos(n))).sort((a, b) => dist(pos(a)) - dist(pos(b)))[0];
      const near = {
        ArrowDown: () => pick((m) => m.e === me.e && m.f > me.f, (m) => m.f - me.f),
        ArrowUp: () => pick((m) => m.e === me.e && m.f < me.f, (m) => me.f - m.f),
        ArrowRight: () => pick((m) => m.e > me.e, (m) => (m.e - me.e) * 10 + Math.abs(m.f - me.f)),
        ArrowLeft: () => pick((m) => m.e < me.e, (m) => (me.e - m.e) * 10 + Math.abs(m.f - me.f)),
      }[e.key];
      if (!near) return;
      e.preventDefault();
      const to = near();
      if (to) to.focus();
    });
    box.addEventListener("click", (e) => {
      const g = e.target.closest && e.target.closest("g.gnode");
      if (g && g.dataset.key && !g.classList.contains("gapp")) document.dispatchEvent(new CustomEvent("portal:open", {detail: g.dataset.key}));
    });
  }

  function drawGraph(box, appName, tree) {
    const root = {app: true, kind: "Application", name: appName, key: "", children: tree.roots || []};
    const l = layoutTree(root);
    for (const p of l.nodes) p.col = p.depth;
    draw(box, l.nodes, l.edges, l.cols, l.rows, "resource graph of " + appName);
  }

  // drawNetwork lays out Ingresses, Services and Pods in three columns.
  function drawNetwork(box, appName, net) {
    if (!net.nodes.length) { box.textContent = "No Ingress, Service or Pod in this application."; return; }
    const rows = [0, 0, 0], byKey = {};
    const placed = net.nodes.map((n) => { const p = {n, depth: n.layer, col: n.layer, row: rows[n.layer]++}; byKey[n.key] = p; return p; });
    const edges = net.edges.filter((e) => byKey[e.from] && byKey[e.to]).map((e) => [byKey[e.from], byKey[e.to]]);
    draw(box, placed, edges, 3, Math.max(...rows), "network of " + appName);
  }

  function init(root) {
    const app = root.dataset.app;
    const base = "/api/v1/apps/" + encodeURIComponent(app);
    const graphBox = document.getElementById("graph"), netBox = document.getElementById("network");
    const list = document.getElementById("tree");
    const buttons = Array.from(document.querySelectorAll("[data-view]"));
    if (!graphBox || !netBox || !list) return;
    keys(graphBox);
    keys(netBox);
    let view = "list", tree = null, pushed = false;
    const getJSON = async (path) => {
      const r = await fetch(path, {headers: {Accept: "application/json"}, credentials: "same-origin"});
      const d = await r.json().catch(() => ({}));
      if (!r.ok) throw new Error(d.error || r.statusText);
      return d;
    };
    const failed = (box, err) => { box.textContent = "Unavailable: " + err.message; };
    async function redraw() {
      if (view === "graph") {
        if (!tree) {
          try { const v = await getJSON(base); if (!pushed) tree = v.tree; } catch (err) { failed(graphBox, err); return; }
        }
        drawGraph(graphBox, app, tree);
      } else if (view === "network") {
        try { drawNetwork(netBox, app, await getJSON(base + "/network")); } catch (err) { failed(netBox, err); }
      }
    }
    function show(v) {
      view = v;
      list.hidden = v !== "list";
      graphBox.hidden = v !== "graph";
      netBox.hidden = v !== "network";
      for (const b of buttons) b.setAttribute("aria-pressed", String(b.dataset.view === v));
      redraw();
    }
    for (const b of buttons) b.addEventListener("click", () => show(b.dataset.view));
    // Only a changed tree redraws the graph (a page event may carry only
    // a new history row); the network view is read again at each.
    let drawn = "";
    document.addEventListener("portal:page", (e) => {
      const next = JSON.stringify(e.detail.tree);
      const same = next === drawn;
      tree = e.detail.tree;
      drawn = next;
      pushed = true;
      if (!same || view === "network") redraw();
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    const root = document.getElementById("app");
    if (root) init(root);
  });
})();
