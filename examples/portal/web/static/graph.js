// gitops portal: the graph and network views of the app page. Plain DOM
// and SVG built here (the Content-Security-Policy allows no inline script
// or style; every look is a class of graph.css). The tree comes from the
// app's API once, then from each "page" event app.js passes on as a
// "portal:page" DOM event; a click or Enter on a node asks app.js to open
// it ("portal:open"). What the graph shows is shaped by graphshape.js (the
// resource filters, group nodes: a click or Enter on "3 Pods" expands it)
// and zoomed by graphzoom.js; both keep their state across pushed pages.
// The URL's view parameter (graph, network) opens that view; group=off
// draws every node.
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
  measure.font = "600 12px system-ui, sans-serif";
  function nameWidth(s) {
    return measure.measureText(s || "").width;
  }

  function drawNode(p, x, y, w) {
    const n = p.n;
    const label = n.group ? [n.name + " grouped, press Enter to show each", n.members.join(" "), n.health ? "worst health " + n.health : "",
      n.sync ? "worst sync " + n.sync : ""].filter(Boolean).join(", ")
      : [n.kind, n.name, n.health ? "health " + n.health : "", n.sync ? "sync " + n.sync : ""].filter(Boolean).join(", ");
    const g = el("g", {class: "gnode" + (n.app ? " gapp" : "") + (n.group ? " ggroup" : ""), transform: `translate(${x},${y})`, tabindex: 0,
      role: n.app ? "img" : "button", "aria-label": label, "data-key": n.key || "", "data-depth": p.depth});
    if (n.group) {
      g.dataset.group = n.group;
      g.dataset.count = String(n.count);
      g.dataset.first = n.firstKey;
      g.setAttribute("aria-expanded", "false");
    }
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
  function draw(box, placed, edges, cols, rows, caption, zoom) {
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
    // The new SVG takes the kept zoom before it replaces the old one, so
    // that the scroll position is restored whole.
    const x = box.scrollLeft, y = box.scrollTop;
    if (zoom) zoom.apply(svg);
    box.replaceChildren(svg);
    box.scrollLeft = x;
    box.scrollTop = y;
    if (had !== null) {
      const again = Array.from(svg.querySelectorAll("g.gnode")).find((g) => g.getAttribute("data-key") === had);
      if (again) again.focus();
    }
  }

  // keys moves the focus between nodes: Up and Down within a column,
  // Left and Right between columns; Enter or Space opens the node.
  function keys(box, expand) {
    box.addEventListener("keydown", (e) => {
      const g = e.target.closest && e.target.closest("g.gnode");
      if (!g) return;
      if ((e.key === "Enter" || e.key === " ") && g.dataset.group) {
        e.preventDefault();
        expand(g.dataset.key);
        return;
      }
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
      if (g && g.dataset.group) { expand(g.dataset.key); return; }
      if (g && g.dataset.key && !g.classList.contains("gapp")) document.dispatchEvent(new CustomEvent("portal:open", {detail: g.dataset.key}));
    });
  }

  // drawGraph draws the tree's nodes the filters keep, grouped unless
  // shape.group is off or a group is in shape.expanded.
  function drawGraph(box, appName, tree, shape, zoom) {
    const S = window.portalGraphShape, F = window.portalTreeFilter;
    let roots = tree.roots || [];
    if (F) roots = S.filtered(roots, F.values(), F.matches);
    if (shape.group) roots = S.grouped(roots, "", shape.expanded);
    const root = {app: true, kind: "Application", name: appName, key: "", children: roots};
    const l = layoutTree(root);
    for (const p of l.nodes) p.col = p.depth;
    draw(box, l.nodes, l.edges, l.cols, l.rows, "resource graph of " + appName, zoom);
  }

  // drawNetwork lays out Ingresses, Services and Pods in three columns.
  function drawNetwork(box, appName, net, zoom) {
    if (!net.nodes.length) { box.textContent = "No Ingress, Service or Pod in this application."; return; }
    const rows = [0, 0, 0], byKey = {};
    const placed = net.nodes.map((n) => { const p = {n, depth: n.layer, col: n.layer, row: rows[n.layer]++}; byKey[n.key] = p; return p; });
    const edges = net.edges.filter((e) => byKey[e.from] && byKey[e.to]).map((e) => [byKey[e.from], byKey[e.to]]);
    draw(box, placed, edges, 3, Math.max(...rows), "network of " + appName, zoom);
  }

  function init(root) {
    const app = root.dataset.app;
    const base = "/api/v1/apps/" + encodeURIComponent(app);
    const graphBox = document.getElementById("graph"), netBox = document.getElementById("network");
    const list = document.getElementById("tree");
    const buttons = Array.from(document.querySelectorAll("[data-view]"));
    if (!graphBox || !netBox || !list) return;
    // shape: group nodes on, the groups a person expanded (by key).
    // The URL's group=off turns group nodes off.
    const shape = {group: new URLSearchParams(location.search).get("group") !== "off", expanded: new Set()};
    const Z = window.portalGraphZoom;
    const level = document.getElementById("graph-zoom-level");
    const showLevel = (s) => { if (level) level.textContent = Math.round(s * 100) + " %"; };
    const zooms = {graph: Z.zoomer(graphBox, showLevel), network: Z.zoomer(netBox, showLevel)};
    Z.wire(graphBox, zooms.graph);
    Z.wire(netBox, zooms.network);
    // expand shows a group's members, the focus on the first when the
    // group had it.
    const expand = async (key) => {
      const g = Array.from(graphBox.querySelectorAll("g.ggroup")).find((n) => n.getAttribute("data-key") === key);
      const had = g && g === document.activeElement, first = g ? g.dataset.first : "";
      shape.expanded.add(key);
      await redraw();
      const to = had && Array.from(graphBox.querySelectorAll("g.gnode")).find((n) => n.getAttribute("data-key") === first);
      if (to) to.focus();
    };
    keys(graphBox, expand);
    keys(netBox, expand);
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
        drawGraph(graphBox, app, tree, shape, zooms.graph);
      } else if (view === "network") {
        try { drawNetwork(netBox, app, await getJSON(base + "/network"), zooms.network); } catch (err) { failed(netBox, err); }
      }
    }
    const tools = document.getElementById("graph-tools"), groupBox = document.getElementById("graph-group");
    function show(v) {
      view = v;
      list.hidden = v !== "list";
      graphBox.hidden = v !== "graph";
      netBox.hidden = v !== "network";
      for (const b of buttons) b.setAttribute("aria-pressed", String(b.dataset.view === v));
      if (tools) tools.hidden = v === "list";
      if (groupBox) groupBox.closest("label").hidden = v !== "graph";
      if (zooms[v]) showLevel(zooms[v].level());
      // The view is the URL's view parameter, so that a link opens it.
      const q = new URLSearchParams(location.search);
      if (v === "list") q.delete("view"); else q.set("view", v);
      const s = q.toString();
      history.replaceState(history.state, "", location.pathname + (s ? "?" + s : "") + location.hash);
      redraw();
    }
    for (const b of buttons) b.addEventListener("click", () => show(b.dataset.view));
    const zoomOf = () => zooms[view];
    const tool = (id, f) => { const b = document.getElementById(id); if (b) b.addEventListener("click", () => { if (zoomOf()) f(zoomOf()); }); };
    tool("graph-zoom-in", (z) => z.zoomIn());
    tool("graph-zoom-out", (z) => z.zoomOut());
    tool("graph-zoom-fit", (z) => z.fit());
    if (groupBox) {
      groupBox.checked = shape.group;
      groupBox.addEventListener("change", () => {
        shape.group = groupBox.checked;
        shape.expanded.clear();
        const q = new URLSearchParams(location.search);
        if (shape.group) q.delete("group"); else q.set("group", "off");
        const s = q.toString();
        history.replaceState(history.state, "", location.pathname + (s ? "?" + s : "") + location.hash);
        redraw();
      });
    }
    // The resource filters (treefilter.js) changed: the graph follows.
    document.addEventListener("portal:filter", () => { if (view === "graph") redraw(); });
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
    const first = new URLSearchParams(location.search).get("view");
    if (first === "graph" || first === "network") show(first);
  }

  document.addEventListener("DOMContentLoaded", () => {
    const root = document.getElementById("app");
    if (root) init(root);
  });
})();
