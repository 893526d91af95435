// gitops portal: the little script the pages need. No framework, no
// inline handlers (the Content-Security-Policy forbids them). State comes
// from the server: the page is rendered there, and server-sent events push
// a running sync's progress, the status badges, and the tree, history and
// last operation after each refresh or sync (no polling).
"use strict";

const csrf = () => document.querySelector('meta[name="csrf-token"]').content;
const $ = (sel) => document.querySelector(sel);
const ICONS = {Synced: "✔", Healthy: "✔", Succeeded: "✔", OutOfSync: "≠", Progressing: "↻", Running: "↻",
  Terminating: "↻", Degraded: "✖", Failed: "✖", Error: "✖", Suspended: "‖", Missing: "∅"};

function badge(status) {
  const s = document.createElement("span");
  s.className = "badge s-" + String(status || "unknown").toLowerCase();
  s.dataset.status = status || "Unknown";
  const i = document.createElement("span");
  i.setAttribute("aria-hidden", "true");
  i.textContent = ICONS[status] || "?";
  s.append(i, " " + (status || "Unknown"));
  return s;
}

async function api(method, path, body) {
  const opts = {method, headers: {"Accept": "application/json"}, credentials: "same-origin"};
  if (method !== "GET") {
    opts.headers["Content-Type"] = "application/json";
    opts.headers["X-CSRF-Token"] = csrf();
    opts.body = JSON.stringify(body || {});
  }
  const r = await fetch(path, opts);
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

// patch makes parent's children read as kids, keeping every node that
// already reads so (and the parts of one that do): a live update changes
// only what changed, so an element a person (or a test) found stays in the
// page across pushes that did not change it, and a click on it lands.
function patch(parent, kids) {
  kids.forEach((n, i) => {
    const o = parent.childNodes[i];
    if (!o) { parent.append(n); return; }
    if (o.isEqualNode(n)) return;
    if (o.nodeType === Node.TEXT_NODE && n.nodeType === Node.TEXT_NODE) { o.nodeValue = n.nodeValue; return; }
    if (o.nodeType === Node.ELEMENT_NODE && o.nodeName === n.nodeName && sameAttributes(o, n)) {
      patch(o, Array.from(n.childNodes));
      return;
    }
    o.replaceWith(n);
  });
  while (parent.childNodes.length > kids.length) parent.lastChild.remove();
}

// asNode is x, or a text node of the string x.
function asNode(x) { return typeof x === "string" ? document.createTextNode(x) : x; }

function sameAttributes(a, b) {
  if (a.attributes.length !== b.attributes.length) return false;
  for (const at of a.attributes) if (b.getAttribute(at.name) !== at.value) return false;
  return true;
}

function notice(text) { const n = $("#notice"); if (n) n.textContent = text; }

// The list: "/" focuses search, j/k move between rows, Enter opens.
function listPage() {
  document.addEventListener("keydown", (e) => {
    if (e.target.matches("input, select, textarea")) return;
    const links = Array.from(document.querySelectorAll("a.app-link")); // rows change with pushes
    if (e.key === "/") { e.preventDefault(); $("#search").focus(); return; }
    const i = links.indexOf(document.activeElement);
    if (e.key === "j" && links.length) links[Math.min(i + 1, links.length - 1)].focus();
    if (e.key === "k" && links.length) links[Math.max(i - 1, 0)].focus();
  });
}

function appPage(root) {
  const app = root.dataset.app;
  const base = "/api/v1/apps/" + encodeURIComponent(app);
  let current = null;

  const canLogs = root.dataset.canLogs === "true";
  const canExec = root.dataset.canExec === "true";
  const tabs = ["diff", "live", "desired", "events", "actions"].concat(canLogs ? ["logs"] : [], canExec ? ["terminal"] : []);
  const show = (tab) => {
    for (const t of tabs) {
      $("#view-" + t).hidden = t !== tab;
      $("#tab-" + t).setAttribute("aria-selected", String(t === tab));
    }
    if (tab === "logs" && !logStream) startLogs();
  };
  // chosen is the tab the user picked for the open node: kept when the node
  // is opened again (an operation's end reloads it) and when a tab is
  // picked before the node's data arrived.
  let chosen = null;
  document.querySelectorAll("[data-tab]").forEach((b) => b.addEventListener("click", () => { chosen = b.dataset.tab; show(chosen); }));

  function renderDiff(pre, text) {
    pre.replaceChildren();
    if (!text) { pre.textContent = "No difference."; return; }
    for (const line of text.split("\n")) {
      const span = document.createElement("span");
      span.className = line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "ctx";
      span.textContent = line + "\n";
      pre.append(span);
    }
  }

  // Logs: a Pod's, or one of a workload's Pods, streamed by the server
  // (bounded in bytes, lines and time) as server-sent events.
  const LOG_KINDS = ["Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"];
  const MAX_LOG_LINES = 5000;
  let logStream = null;
  const stopLogs = () => { if (logStream) { logStream.close(); logStream = null; } };
  const kindOf = (key) => key.split(" ")[0].split("/").pop();
  async function loadPods(key) {
    stopLogs();
    $("#tab-logs").hidden = !LOG_KINDS.includes(kindOf(key));
    if ($("#tab-logs").hidden) return;
    $("#log-lines").textContent = "";
    $("#log-state").textContent = "Loading Pods…";
    try {
      const pods = await api("GET", base + "/pods?key=" + encodeURIComponent(key));
      if (current !== key) return;
      const opt = (v, t) => Object.assign(document.createElement("option"), {value: v, textContent: t});
      $("#log-pod").replaceChildren(...pods.map((p) => opt(p.key, p.name)));
      $("#log-pod").podList = pods;
      fillContainers();
      $("#log-state").textContent = pods.length ? "" : "No Pods.";
      if (!$("#view-logs").hidden) startLogs();
    } catch (err) { $("#log-state").textContent = "Logs unavailable: " + err.message; }
  }
  function fillContainers() {
    const pod = ($("#log-pod").podList || []).find((p) => p.key === $("#log-pod").value);
    const names = pod ? pod.containers.concat(pod.initContainers || []) : [];
    $("#log-container").replaceChildren(...names.map((n) => Object.assign(document.createElement("option"), {value: n, textContent: n})));
  }
  function startLogs() {
    stopLogs();
    const pod = $("#log-pod").value, container = $("#log-container").value;
    if (!pod || !container) return;
    const out = $("#log-lines");
    out.textContent = "";
    $("#log-state").textContent = "Streaming " + pod + " / " + container + "…";
    const q = new URLSearchParams({key: pod, container, follow: String($("#log-follow").checked),
      previous: String($("#log-previous").checked), timestamps: String($("#log-timestamps").checked)});
    const es = new EventSource(base + "/logs?" + q);
    logStream = es;
    es.addEventListener("line", (m) => {
      const atEnd = out.scrollTop + out.clientHeight >= out.scrollHeight - 4;
      out.append(Object.assign(document.createElement("span"), {className: "log-line", textContent: JSON.parse(m.data) + "\n"}));
      while (out.childNodes.length > MAX_LOG_LINES) out.firstChild.remove();
      if (atEnd) out.scrollTop = out.scrollHeight;
    });
    es.addEventListener("end", (m) => {
      $("#log-state").textContent = "Ended: " + JSON.parse(m.data).reason + ".";
      if (logStream === es) stopLogs();
    });
    es.onerror = () => {
      if (logStream !== es) return;
      $("#log-state").textContent = "The log stream failed.";
      stopLogs();
    };
  }
  if (canLogs) {
    $("#log-pod").addEventListener("change", () => { fillContainers(); startLogs(); });
    $("#log-container").addEventListener("change", startLogs);
    $("#log-timestamps").addEventListener("change", startLogs);
    $("#log-start").addEventListener("click", startLogs);
  }

  async function openNode(key) {
    if (key !== current) chosen = null;
    current = key;
    if (canLogs) loadPods(key);
    if (canExec) $("#tab-terminal").hidden = kindOf(key) !== "Pod";
    $("#panel").hidden = false;
    $("#panel-title").textContent = key;
    try {
      const d = await api("GET", base + "/resource?key=" + encodeURIComponent(key));
      if (current !== key) return;
      renderDiff($("#view-diff"), d.diff);
      $("#view-live").textContent = d.live || "(not in the cluster)";
      $("#view-desired").textContent = d.desired || "(not in Git)";
      $("#masked").hidden = !d.masked;
      const ev = $("#view-events");
      ev.replaceChildren(...(d.events.length ? d.events.map(eventItem) : [li("No events.")]));
      show(chosen || (d.diff ? "diff" : "live"));
      loadActions(key);
    } catch (err) { $("#view-live").textContent = "Error: " + err.message; show("live"); }
  }

  async function loadActions(key) {
    const box = $("#view-actions");
    box.replaceChildren();
    try {
      const list = await api("GET", base + "/actions?key=" + encodeURIComponent(key));
      if (!list || !list.length) { box.textContent = "No actions for this kind."; return; }
      for (const a of list) {
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = a.displayName || a.name;
        b.dataset.action = a.name;
        b.disabled = !!a.disabled || !a.permitted;
        if (!a.permitted) b.title = "Your role may not run " + a.name + " here";
        b.addEventListener("click", async () => {
          try { await api("POST", base + "/action", {key, action: a.name}); notice("Action " + a.name + " done on " + key); }
          catch (err) { notice("Action failed: " + err.message); }
        });
        box.append(b);
      }
    } catch (err) { box.textContent = "No actions: " + err.message; }
  }

  const li = (t) => { const l = document.createElement("li"); l.textContent = t; return l; };
  const eventItem = (e) => li((e.type === "Warning" ? "⚠ " : "ℹ ") + e.type + " " + e.reason + " " + e.object + ": " + e.message);

  // The tree and the history are redrawn by "page" events: their buttons
  // are handled where they sit, not bound one by one.
  document.addEventListener("portal:open", (e) => openNode(e.detail)); // graph.js
  for (const id of ["#tree", "#hooks"]) {
    $(id).addEventListener("click", (e) => {
      const b = e.target.closest(".open-node");
      if (b) openNode(b.dataset.key);
    });
  }

  async function loadEvents() {
    try {
      const evs = await api("GET", base + "/events");
      $("#app-events").replaceChildren(...(evs.length ? evs.map(eventItem) : [li("No events.")]));
    } catch (err) { $("#app-events").replaceChildren(li("Events unavailable: " + err.message)); }
  }
  loadEvents();

  const post = async (what, path, body) => {
    try { await api("POST", base + path, body); notice(what + " requested."); }
    catch (err) { notice(what + " failed: " + err.message); }
  };
  $("#refresh").addEventListener("click", () => post("Refresh", "/refresh", {hard: false}));
  $("#hard-refresh").addEventListener("click", () => post("Hard refresh", "/refresh", {hard: true}));

  const syncDialog = $("#sync-dialog");
  if (syncDialog && $("#sync")) { // only admins get the Sync button
    // Each opening starts from the defaults the page was rendered with
    // (as Argo CD's dialog does), never from what the last sync ticked.
    $("#sync").addEventListener("click", () => {
      $("#sync-form").querySelectorAll("input").forEach((i) => { if (i.type === "checkbox") i.checked = i.defaultChecked; else i.value = i.defaultValue; });
      syncDialog.showModal();
    });
    $("#sync-cancel").addEventListener("click", () => syncDialog.close());
    $("#sync-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const body = {prune: $("#opt-prune").checked, dryRun: $("#opt-dry-run").checked, confirmPrune: $("#opt-confirm-prune").checked};
      const options = Array.from(document.querySelectorAll("input.sync-option:checked")).map((c) => c.value);
      if (options.length) body.syncOptions = options;
      if ($("#opt-retry").checked) {
        body.retry = {limit: Number($("#opt-retry-limit").value), duration: $("#opt-retry-duration").value,
          factor: Number($("#opt-retry-factor").value), maxDuration: $("#opt-retry-max").value};
      }
      if ($("#opt-selected").checked) {
        body.resources = Array.from(document.querySelectorAll("input.select:checked")).map((c) => c.value);
      }
      syncDialog.close();
      startSync(body);
    });
    $("#terminate").addEventListener("click", () => post("Terminate", "/terminate", {}));
    $("#confirm-prune-button").addEventListener("click", () => {
      startSync({prune: true, confirmPrune: true});
    });
  }
  let lastSync = null;
  function startSync(body) {
    lastSync = body;
    $("#progress-section").hidden = false;
    $("#progress-rows").replaceChildren();
    $("#confirm-prune").hidden = true;
    $("#operation").replaceChildren(badge("Running"), " sync started");
    post("Sync", "/sync", body);
  }

  const rbDialog = $("#rollback-dialog");
  let rbID = 0;
  $("#history-rows").addEventListener("click", (e) => {
    const b = e.target.closest("button.rollback");
    if (!b) return;
    rbID = Number(b.dataset.id);
    $("#rollback-text").textContent = "Sync history entry #" + rbID + " (" + b.dataset.rev + ") again?";
    $("#rollback-prune").checked = $("#rollback-prune").defaultChecked;
    rbDialog.showModal();
  });
  if (rbDialog) {
    $("#rollback-cancel").addEventListener("click", () => rbDialog.close());
    $("#rollback-form").addEventListener("submit", (e) => {
      e.preventDefault();
      rbDialog.close();
      $("#progress-section").hidden = false;
      $("#progress-rows").replaceChildren();
      $("#operation").replaceChildren(badge("Running"), " rollback to #" + rbID + " started");
      post("Rollback", "/rollback", {id: rbID, prune: $("#rollback-prune").checked});
    });
  }

  // Live updates: status badges, sync progress, and the end of an operation.
  const es = new EventSource(base + "/stream");
  es.addEventListener("status", (m) => {
    const s = JSON.parse(m.data);
    patch($("#sync-status"), [badge(s.sync)]);
    patch($("#health-status"), [badge(s.health), asNode(" "), Object.assign(document.createElement("span"), {className: "msg", id: "health-message", textContent: s.healthMessage || ""})]);
    const rev = $("#revision");
    rev.textContent = (s.revision || "").slice(0, 8);
    rev.title = s.revision || "";
  });
  es.addEventListener("progress", (m) => {
    const p = JSON.parse(m.data);
    $("#progress-section").hidden = false;
    $("#progress-rows").replaceChildren(...p.rows.map(row));
  });
  es.addEventListener("operation", (m) => {
    const op = JSON.parse(m.data);
    $("#progress-section").hidden = false;
    $("#operation").replaceChildren(badge(op.phase), " " + (op.message || ""));
    if (op.rows && op.rows.length) $("#progress-rows").replaceChildren(...op.rows.map(row));
    const pending = op.pendingConfirmation || [];
    $("#confirm-prune").hidden = pending.length === 0;
    $("#pending").textContent = pending.join(", ");
    if (current) openNode(current);
  });
  // The tree, the history and the last operation after each refresh or
  // sync, patched in place (patch: unchanged nodes stay); ticked tree
  // boxes stay ticked.
  es.addEventListener("page", (m) => {
    const p = JSON.parse(m.data);
    document.dispatchEvent(new CustomEvent("portal:page", {detail: p})); // graph.js, diff.js
    const ticked = new Set(Array.from(document.querySelectorAll("input.select:checked")).map((c) => c.value));
    const nodes = (list, none) => list.length ? list.map((n) => treeItem(n, ticked)) : [li(none)];
    patch($("#tree"), nodes(p.tree.roots, "No resources yet."));
    patch($("#hooks"), nodes(p.tree.hooks, "No hooks."));
    const rows = p.history.map(historyRow);
    if (!rows.length) {
      const tr = document.createElement("tr");
      tr.append(Object.assign(document.createElement("td"), {colSpan: 5, textContent: "No sync recorded yet."}));
      rows.push(tr);
    }
    patch($("#history-rows"), rows);
    patch($("#commit"), commitParts(p.commit).map(asNode));
    const last = $("#last-operation");
    last.hidden = !p.operation;
    if (p.operation) {
      const op = p.operation;
      const rev = Object.assign(document.createElement("code"), {title: op.revision || "", textContent: (op.revision || "").slice(0, 8)});
      patch(last, ["Last operation: ", badge(op.phase), " " + (op.message || "") + " at ", rev, ", " + when(op.finishedAt)].map(asNode));
    }
  });
  function treeItem(n, ticked) {
    const item = document.createElement("li");
    item.className = "node";
    item.dataset.key = n.key;
    const span = (cls, ...kids) => { const x = document.createElement("span"); x.className = cls; x.append(...kids); return x; };
    if (n.sync) {
      const c = Object.assign(document.createElement("input"), {type: "checkbox", className: "select", value: n.key, checked: ticked.has(n.key)});
      c.setAttribute("aria-label", "select " + n.key + " for a selective sync");
      item.append(c, " ");
    }
    const open = Object.assign(document.createElement("button"), {type: "button", className: "open-node"});
    open.dataset.key = n.key;
    open.append(span("kind", n.kind), " " + n.name);
    item.append(open);
    if (n.appLink) item.append(" ", Object.assign(document.createElement("a"), {className: "child-app", href: n.appLink, textContent: "open application"}));
    if (n.sync) item.append(" ", span("node-sync", badge(n.sync)));
    if (n.health) item.append(" ", span("node-health", badge(n.health)));
    if (n.requiresPruning) {
      const icon = span("", "✂");
      icon.setAttribute("aria-hidden", "true");
      item.append(" ", span("badge s-prune", icon, " requires pruning"));
    }
    if (n.healthMessage) item.append(" ", span("msg", n.healthMessage));
    if (n.children && n.children.length) {
      const ul = document.createElement("ul");
      ul.append(...n.children.map((c) => treeItem(c, ticked)));
      item.append(ul);
    }
    return item;
  }
  function historyRow(h) {
    const tr = document.createElement("tr");
    tr.dataset.id = String(h.id);
    const td = (...x) => { const c = document.createElement("td"); c.append(...x); return c; };
    const code = Object.assign(document.createElement("code"), {title: h.revision, textContent: h.short});
    const action = td();
    if (root.dataset.canWrite === "true") {
      const b = Object.assign(document.createElement("button"), {type: "button", className: "rollback", textContent: "Roll back to #" + h.id});
      b.dataset.id = String(h.id);
      b.dataset.rev = h.short;
      action.append(b);
    }
    const commit = td(...commitParts(h.commit));
    commit.className = "commit";
    tr.append(td(String(h.id)), td(code), commit, td(when(h.deployedAt)), action);
    return tr;
  }
  // commitParts are a commit's subject (the whole message as its title)
  // and author, as the server's page shows them.
  function commitParts(c) {
    if (!c) return [];
    const subject = Object.assign(document.createElement("span"), {className: "commit-subject", title: c.message, textContent: c.subject});
    return [subject, " ", Object.assign(document.createElement("span"), {className: "msg commit-author", title: c.author, textContent: c.author})];
  }
  // when formats a time as the server's pages do.
  function when(t) {
    const d = t ? new Date(t) : null;
    if (!d || isNaN(d) || d.getUTCFullYear() <= 1) return "never";
    return d.toISOString().slice(0, 19).replace("T", " ") + "Z";
  }
  function row(r) {
    const tr = document.createElement("tr");
    const td = (x) => { const c = document.createElement("td"); c.append(x); return c; };
    tr.append(td(r.phase + " / " + r.wave + (r.hook ? " (hook)" : "")), td(r.key), td(r.action || ""), td(badge(r.status)), td(r.message || ""));
    return tr;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  const root = document.getElementById("app");
  if (root) appPage(root); else if (document.getElementById("apps")) listPage();
});
